//! The Lance table format: how a dataset directory records its versions.
//!
//! This crate starts the table layer with the parts every other table operation needs:
//! the naming rules of manifest files ([`naming`]), the manifest file container
//! ([`manifest`]: a length-prefixed `Manifest` protobuf followed by a 16-byte footer ending
//! in `LANC`), and finding the versions of a dataset on local disk ([`versions`]).
//! Fragments, deletion files, transactions and the commit protocol build on these.

pub mod deletion;
pub mod manifest;
pub mod naming;
pub mod versions;

pub use lancelet_proto::pbtable as pb;

/// What can go wrong reading table metadata.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A manifest or other table file is damaged.
    #[error("corrupt table file {path}: {message}")]
    Corrupt {
        /// The file.
        path: String,
        /// What was wrong.
        message: String,
    },
    /// Listing or reading the dataset directory failed.
    #[error("I/O error on {path}: {source}")]
    Io {
        /// The path being accessed.
        path: String,
        /// Underlying error.
        #[source]
        source: std::io::Error,
    },
    /// The requested version does not exist.
    #[error("version {version} of {path} does not exist")]
    VersionNotFound {
        /// Dataset path.
        path: String,
        /// Requested version.
        version: u64,
    },
}

/// Result alias for this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    pub(crate) fn corrupt(path: &str, message: impl Into<String>) -> Self {
        Self::Corrupt {
            path: path.to_string(),
            message: message.into(),
        }
    }
}
