//! What can go wrong talking to storage.

/// An error from storage, naming the path it concerns.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The object or file does not exist.
    #[error("not found: {path}")]
    NotFound {
        /// What was looked for.
        path: String,
    },
    /// Creating an object that exists already.
    #[error("{path} already exists")]
    AlreadyExists {
        /// The object.
        path: String,
    },
    /// Bytes that cannot be what they claim (a short object, a range past the end, a
    /// symbolic link leading out of a dataset).
    #[error("corrupt file {path}: {message}")]
    Corrupt {
        /// The object.
        path: String,
        /// What was wrong.
        message: String,
    },
    /// A local I/O error.
    #[error("I/O error on {path}: {source}")]
    Io {
        /// The path being accessed.
        path: String,
        /// What the operating system said.
        #[source]
        source: std::io::Error,
    },
    /// An error from an object store (after the client's retries).
    #[error("I/O error on {path}: {source}")]
    ObjectStore {
        /// The object being accessed.
        path: String,
        /// What the object store client said.
        #[source]
        source: object_store::Error,
    },
    /// A bad URI, storage option or range.
    #[error("{0}")]
    InvalidArgument(String),
    /// Something this store cannot do (an atomic create on a store without conditional
    /// puts, an unknown URI scheme).
    #[error("unsupported: {0}")]
    Unsupported(String),
}

/// Result alias for this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What kind of failure an error is: one vocabulary for every layer (storage, file, table,
/// dataset), each of whose errors says its kind, so a caller (the Python glue) maps kinds
/// once instead of each crate's variants.
// Not `#[non_exhaustive]`: the glue maps every kind to an exception class exhaustively.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// Bytes that do not decode as what they claim to be.
    Corrupt,
    /// A file, dataset, version or other named thing that does not exist.
    NotFound,
    /// The operating system or object store failed.
    Io,
    /// Data whose schema does not fit.
    SchemaMismatch,
    /// A valid request this build does not support.
    Unsupported,
    /// A bad argument from the caller.
    InvalidArgument,
    /// A commit that lost to a concurrent one it conflicts with.
    CommitConflict,
    /// Creating a dataset that exists already.
    AlreadyExists,
    /// A row index past the end.
    OutOfRange,
    /// A bug.
    Internal,
}

impl Error {
    /// The kind of failure.
    pub fn kind(&self) -> ErrorKind {
        match self {
            Self::NotFound { .. } => ErrorKind::NotFound,
            // A file that exists already is an I/O outcome to the layers above (they ask
            // for atomic creation with `put_if_absent`, which says so without an error).
            Self::AlreadyExists { .. } | Self::Io { .. } | Self::ObjectStore { .. } => ErrorKind::Io,
            Self::Corrupt { .. } => ErrorKind::Corrupt,
            Self::InvalidArgument(_) => ErrorKind::InvalidArgument,
            Self::Unsupported(_) => ErrorKind::Unsupported,
        }
    }

    /// A corrupt-object error.
    pub fn corrupt(path: &str, message: impl Into<String>) -> Self {
        Self::Corrupt {
            path: path.to_string(),
            message: message.into(),
        }
    }

    /// Converts a local I/O error, mapping "not found" to [`Error::NotFound`].
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

    /// Converts an object store error about `path`: a missing object is
    /// [`Error::NotFound`], an existing one [`Error::AlreadyExists`], a store without
    /// conditional puts [`Error::Unsupported`]; anything else keeps the error as its source.
    pub fn object_store(path: &str, source: object_store::Error) -> Self {
        match source {
            object_store::Error::NotFound { .. } => Self::NotFound { path: path.to_string() },
            object_store::Error::AlreadyExists { .. } => Self::AlreadyExists { path: path.to_string() },
            object_store::Error::NotImplemented => Self::Unsupported(format!(
                "{path}: the object store cannot create objects atomically (conditional put); \
                 set storage option aws_conditional_put=etag if the S3-compatible store supports \
                 If-None-Match, else manifest_store=sqlite:/path/to/file.db"
            )),
            source => Self::ObjectStore {
                path: path.to_string(),
                source,
            },
        }
    }

    /// This error as a `std::io::Error` (for layers whose errors carry one), keeping the
    /// underlying error itself as its inner error, so its own sources stay reachable.
    pub fn into_io_error(self) -> std::io::Error {
        use std::io::ErrorKind;
        match self {
            Self::Io { source, .. } => source,
            Self::ObjectStore { source, .. } => std::io::Error::other(source),
            e @ Self::NotFound { .. } => std::io::Error::new(ErrorKind::NotFound, e),
            e @ Self::AlreadyExists { .. } => std::io::Error::new(ErrorKind::AlreadyExists, e),
            e @ (Self::Corrupt { .. } | Self::InvalidArgument(_)) => std::io::Error::new(ErrorKind::InvalidData, e),
            e @ Self::Unsupported(_) => std::io::Error::new(ErrorKind::Unsupported, e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn object_store_errors_stay_the_source() {
        let inner = object_store::Error::Generic {
            store: "S3",
            source: "connection reset".into(),
        };
        let e = Error::object_store("s3://b/k", inner);
        let source = std::error::Error::source(&e).map(|s| s.to_string()).unwrap_or_default();
        assert!(source.contains("connection reset"), "{source}");
        let io = e.into_io_error();
        let kept = io.get_ref().and_then(|i| i.downcast_ref::<object_store::Error>());
        assert!(matches!(kept, Some(object_store::Error::Generic { .. })));
    }

    #[test]
    fn missing_objects_are_not_found() {
        let e = Error::object_store(
            "memory://x",
            object_store::Error::NotFound {
                path: "x".into(),
                source: "gone".into(),
            },
        );
        assert!(matches!(e, Error::NotFound { .. }));
    }
}
