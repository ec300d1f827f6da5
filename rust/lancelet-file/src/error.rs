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
    /// The file does not exist.
    #[error("file not found: {path}")]
    NotFound {
        /// The missing file.
        path: String,
    },
    /// An I/O error from the storage layer.
    #[error("I/O error on {path}: {source}")]
    Io {
        /// File being accessed.
        path: String,
        /// Underlying error.
        #[source]
        source: std::io::Error,
    },
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

impl From<lancelet_io::Error> for Error {
    /// Storage errors keep their kind; an object store's error stays the source of the
    /// `std::io::Error` this layer carries.
    fn from(e: lancelet_io::Error) -> Self {
        use lancelet_io::Error as E;
        match e {
            E::NotFound { path } => Self::NotFound { path },
            E::Corrupt { path, message } => Self::Corrupt { path, message },
            E::InvalidArgument(m) => Self::InvalidArgument(m),
            E::Unsupported(m) => Self::Unsupported(m),
            E::Io { path, source } => Self::Io { path, source },
            E::ObjectStore { ref path, .. } | E::AlreadyExists { ref path } => Self::Io {
                path: path.clone(),
                source: e.into_io_error(),
            },
        }
    }
}

impl Error {
    /// The kind of failure (the vocabulary every layer shares).
    pub fn kind(&self) -> lancelet_io::ErrorKind {
        use lancelet_io::ErrorKind as K;
        match self {
            Error::Corrupt { .. } => K::Corrupt,
            Error::NotFound { .. } => K::NotFound,
            Error::Io { .. } => K::Io,
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

    /// Converts an I/O error, mapping "not found" to [`Error::NotFound`].
    pub fn io(path: &str, source: std::io::Error) -> Self {
        if source.kind() == std::io::ErrorKind::NotFound {
            Self::NotFound { path: path.to_string() }
        } else {
            Self::Io {
                path: path.to_string(),
                source,
            }
        }
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
