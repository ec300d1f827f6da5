//! The Lance table format: how a dataset directory records its versions.
//!
//! - [`naming`]: manifest file names (V1 and V2 schemes).
//! - [`manifest`]: the manifest file container and feature flags.
//! - The table layer reads and writes through [`lancelet_io::Storage`] (whose atomic
//!   `put_if_absent` commits rely on); [`object`] resolves a dataset URI to one, and
//!   [`managed`] is the storage whose versions someone else creates.
//! - [`versions`]: finding and reading the versions of a dataset.
//! - [`asof`]: the newest version committed at or before a time.
//! - [`deletion`]: deletion files (Arrow IPC and roaring bitmaps).
//! - [`commit`]: transactions, applying them to a manifest, conflict detection and the
//!   commit loop.
//! - [`catalog_store`]: commits through a catalog that manages the table's versions (a
//!   namespace with managed versioning).
//! - [`manifest_store`]: commits arbitrated by an external manifest store (SQLite, memory)
//!   for object stores without an atomic create.
//! - [`tags`]: named references to versions (`_refs/tags/{name}.json`).
//! - [`bases`] and [`branches`]: other storage roots a dataset's files live under, and
//!   branches (`_refs/branches/`, `tree/{branch}/`).
//! - [`rowids`]: stable row ids, per-row versions and the row id index.

pub mod asof;
pub mod bases;
pub mod blob_fields;
pub mod branches;
pub mod catalog_store;
pub mod commit;
pub mod deletion;
pub mod indices;
pub mod managed;
pub mod manifest;
pub mod manifest_store;
pub mod naming;
pub mod object;
pub mod rowids;
pub mod tags;
pub mod versions;

pub use lancelet_proto::pbtable as pb;

/// What kind of commit conflict a writer met, which decides whether it may try again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConflictKind {
    /// A concurrent commit changed what this one changes (the same fragments, the same
    /// schema, ...), or the writer lost the race too often: reading the newest version and
    /// running the operation again may succeed.
    Retryable,
    /// A concurrent commit replaced the whole table (an overwrite, a restore, a clone):
    /// running the operation again on the table that replaced the one it was meant for
    /// would be a different operation, so it is not retried (as in pylance).
    TableReplaced,
}

/// What can go wrong reading or writing table metadata.
// Not `#[non_exhaustive]`: rust/lancelet-python maps every variant to a Python exception
// class with an exhaustive match, so a new variant must be given its class there.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A manifest or other table file is damaged.
    #[error("corrupt table file {path}: {message}")]
    Corrupt {
        /// The file.
        path: String,
        /// What was wrong.
        message: String,
    },
    /// From the storage layer: a file that does not exist, an I/O failure, a store that
    /// cannot do what was asked. Its kind is the storage error's.
    #[error(transparent)]
    Storage(#[from] lancelet_io::Error),
    /// The requested version does not exist.
    #[error("version {version} of {path} does not exist")]
    VersionNotFound {
        /// Dataset path.
        path: String,
        /// Requested version.
        version: u64,
    },
    /// Another writer committed a change that conflicts with ours.
    #[error("{message} ({path})")]
    CommitConflict {
        /// Dataset path.
        path: String,
        /// What conflicted.
        message: String,
        /// Whether running the operation again on the newest version may succeed.
        kind: ConflictKind,
    },
    /// Creating something that exists already (a dataset, a tag).
    #[error("{0} already exists")]
    AlreadyExists(String),
    /// A bad argument (bad tag name, unknown tag...).
    #[error("{0}")]
    InvalidArgument(String),
    /// A valid feature this build does not handle (unknown feature flags...).
    #[error("unsupported: {0}")]
    Unsupported(String),
}

/// Result alias for this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// The kind of failure (the vocabulary every layer shares).
    pub fn kind(&self) -> lancelet_io::ErrorKind {
        use lancelet_io::ErrorKind as K;
        match self {
            Error::Corrupt { .. } => K::Corrupt,
            Error::Storage(e) => e.kind(),
            // A missing version is a missing thing.
            Error::VersionNotFound { .. } => K::NotFound,
            Error::CommitConflict { .. } => K::CommitConflict,
            // A tag or branch name that is taken is a bad argument (pylance: ValueError);
            // an existing dataset is the dataset layer's AlreadyExists.
            Error::AlreadyExists(_) | Error::InvalidArgument(_) => K::InvalidArgument,
            Error::Unsupported(_) => K::Unsupported,
        }
    }

    /// A missing file or thing (`path` names it).
    pub fn not_found(path: impl Into<String>) -> Self {
        Self::Storage(lancelet_io::Error::NotFound { path: path.into() })
    }

    /// Whether this is a missing file or thing (not a missing version of a dataset that
    /// exists: [`Error::VersionNotFound`]).
    pub fn is_not_found(&self) -> bool {
        matches!(self, Self::Storage(lancelet_io::Error::NotFound { .. }))
    }

    pub(crate) fn corrupt(path: &str, message: impl Into<String>) -> Self {
        Self::Corrupt {
            path: path.to_string(),
            message: message.into(),
        }
    }
}
