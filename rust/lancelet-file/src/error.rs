//! Errors of the file layer, each naming the file it concerns.

use arrow_schema::ArrowError;

/// What can go wrong while reading or writing a Lance file.
// Not `#[non_exhaustive]`: rust/lancelet-python maps every variant to a Python exception
// class with an exhaustive match, so a new variant must be given its class there.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The file's bytes are inconsistent (truncated, bad footer, offsets out of range...).
    #[error("corrupt file {path}: {message}")]
    Corrupt {
        /// File the problem was found in.
        path: String,
        /// What was wrong.
        message: String,
    },
    /// From the storage layer: a file that does not exist, an I/O failure, a store that
    /// cannot do what was asked. Its kind is the storage error's.
    #[error(transparent)]
    Storage(#[from] lancelet_io::Error),
    /// A batch does not match the schema of the file being written.
    #[error("schema mismatch: {0}")]
    SchemaMismatch(String),
    /// A valid feature (file version, encoding, type) this build cannot handle.
    #[error("unsupported: {0}")]
    Unsupported(String),
    /// A bad argument from the caller (unknown column, row out of range...).
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    /// An error from Arrow while assembling arrays.
    #[error(transparent)]
    Arrow(#[from] ArrowError),
    /// A bug: a read task panicked or was cancelled.
    #[error("internal error: {0}")]
    Internal(String),
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
            Error::SchemaMismatch(_) => K::SchemaMismatch,
            Error::Unsupported(_) => K::Unsupported,
            Error::InvalidArgument(_) => K::InvalidArgument,
            // Arrow refuses what it was given (a cast that does not fit, a bad batch).
            Error::Arrow(_) => K::InvalidArgument,
            Error::Internal(_) => K::Internal,
        }
    }

    /// A corrupt-file error.
    pub fn corrupt(path: &str, message: impl Into<String>) -> Self {
        Self::Corrupt {
            path: path.to_string(),
            message: message.into(),
        }
    }

    /// Converts a local I/O error (see [`lancelet_io::Error::io`]).
    pub fn io(path: &str, source: std::io::Error) -> Self {
        Self::Storage(lancelet_io::Error::io(path, source))
    }

    /// Attaches the file path to a codec error.
    pub fn from_encoding(path: &str, e: lancelet_encoding::Error) -> Self {
        use lancelet_encoding::Error as E;
        match e {
            E::Corrupt(m) => Self::corrupt(path, m),
            E::Unsupported(m) => Self::Unsupported(format!("{m} (in {path})")),
            E::InvalidInput(m) => Self::InvalidArgument(m),
            E::Arrow(a) => Self::corrupt(path, format!("arrays do not validate: {a}")),
            other => Self::corrupt(path, other.to_string()),
        }
    }
}
