//! Errors of the dataset layer: the file and table errors below it, plus what only a
//! dataset operation can get wrong (filters, conflicts, schemas of appended data).

/// What can go wrong in a dataset operation.
// Not `#[non_exhaustive]`: `Error::kind` maps every variant to a kind of the shared
// vocabulary with an exhaustive match, so a new variant must be given its kind there (and
// the glue maps each kind to a Python exception class once).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// From reading or writing a data file.
    #[error(transparent)]
    File(#[from] lancelet_file::Error),
    /// From the table metadata layer (manifests, commits, tags).
    #[error(transparent)]
    Table(#[from] lancelet_table::Error),
    /// A filter or column expression that does not parse or type-check.
    #[error("{context}: {source}")]
    Expr {
        /// What the expression was for (e.g. `filter "a > 1"`).
        context: String,
        /// The parser or binder error.
        #[source]
        source: lancelet_expr::Error,
    },
    /// Data whose schema does not match the dataset's.
    #[error("schema mismatch: {0}")]
    SchemaMismatch(String),
    /// A bad argument from the caller.
    #[error("{0}")]
    InvalidArgument(String),
    /// A row index past the end.
    #[error("{0}")]
    OutOfRange(String),
    /// A valid request this build does not support yet.
    #[error("unsupported: {0}")]
    Unsupported(String),
    /// The dataset already exists (writing with mode "create").
    #[error("dataset already exists: {0}")]
    AlreadyExists(String),
    /// The dataset does not exist.
    #[error("dataset not found: {0}")]
    NotFound(String),
    /// An Arrow error while assembling results.
    #[error(transparent)]
    Arrow(#[from] arrow_schema::ArrowError),
    /// The caller's commit lock refused or failed (its own error is the source).
    #[error("the commit lock failed: {0}")]
    CommitLock(crate::commit::HookError),
    /// A bug: a task panicked or was cancelled.
    #[error("internal error: {0}")]
    Internal(String),
    /// `source`, with what was being done when it happened (e.g. which blob of a scan
    /// could not be read); of the same kind as `source`.
    #[error("{context}: {source}")]
    Context {
        /// What failed, in the caller's terms.
        context: String,
        /// The error itself.
        #[source]
        source: Box<Error>,
    },
}

/// Result alias for this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// The kind of failure (the vocabulary every layer shares, see [`lancelet_io::ErrorKind`]).
    pub fn kind(&self) -> lancelet_io::ErrorKind {
        use lancelet_io::ErrorKind as K;
        match self {
            Error::File(e) => e.kind(),
            Error::Table(t) => t.kind(),
            Error::Expr { .. } | Error::InvalidArgument(_) | Error::Arrow(_) => K::InvalidArgument,
            Error::SchemaMismatch(_) => K::SchemaMismatch,
            Error::OutOfRange(_) => K::OutOfRange,
            Error::Unsupported(_) => K::Unsupported,
            Error::AlreadyExists(_) => K::AlreadyExists,
            Error::NotFound(_) => K::NotFound,
            Error::Internal(_) => K::Internal,
            // pylance raises a failed commit lock as an OSError.
            Error::CommitLock(_) => K::CommitConflict,
            Error::Context { source, .. } => source.kind(),
        }
    }

    /// This error with `context` (what was being done) in front of its message.
    pub fn context(self, context: impl Into<String>) -> Self {
        Self::Context {
            context: context.into(),
            source: Box::new(self),
        }
    }

    /// A corrupt-data error about `path`.
    pub fn corrupt(path: &str, message: impl Into<String>) -> Self {
        Self::File(lancelet_file::Error::corrupt(path, message))
    }

    pub(crate) fn expr(context: impl Into<String>, source: lancelet_expr::Error) -> Self {
        Self::Expr {
            context: shorten(context.into()),
            source,
        }
    }
}

impl From<lancelet_io::Error> for Error {
    fn from(e: lancelet_io::Error) -> Self {
        Self::File(e.into())
    }
}

impl From<tokio::task::JoinError> for Error {
    /// A read, take, scan or search task that panicked (or was cancelled) is a bug, never
    /// the caller's bad argument.
    fn from(e: tokio::task::JoinError) -> Self {
        let what = if e.is_panic() {
            let payload = e.into_panic();
            let msg = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".to_string());
            format!("a task panicked: {msg}")
        } else {
            format!("a task failed: {e}")
        };
        Self::Internal(what)
    }
}

impl From<lancelet_index::Error> for Error {
    fn from(e: lancelet_index::Error) -> Self {
        use lancelet_index::Error as E;
        match e {
            E::Corrupt { file, message } => Self::File(lancelet_file::Error::corrupt(&file, message)),
            E::InvalidArgument(m) => Self::InvalidArgument(m),
            E::Unsupported(m) => Self::Unsupported(m),
            E::File(f) => Self::File(f),
            E::Arrow(a) => Self::Arrow(a),
            other => Self::InvalidArgument(other.to_string()),
        }
    }
}

/// Longest context an expression error quotes: a generated filter can be megabytes long,
/// and an error message that repeats it is useless in a log.
const MAX_CONTEXT_CHARS: usize = 200;

fn shorten(text: String) -> String {
    match text.char_indices().nth(MAX_CONTEXT_CHARS) {
        None => text,
        Some((cut, _)) => format!("{}... ({} characters in all)", &text[..cut], text.chars().count()),
    }
}

#[cfg(test)]
mod join_tests {
    use super::*;

    #[tokio::test]
    async fn a_panicked_task_is_an_internal_error() {
        let handle = tokio::spawn(async {
            if std::hint::black_box(true) {
                panic!("boom");
            }
            Ok::<u64, Error>(1)
        });
        let got: Result<u64> = async { handle.await? }.await;
        match got {
            Err(Error::Internal(m)) => assert!(m.contains("boom"), "{m}"),
            other => panic!("expected an internal error, got {other:?}"),
        }
    }
}
