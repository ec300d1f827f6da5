//! The one place where Rust errors become Python exceptions.
//!
//! Exception classes are defined in Python (`lancelet/errors.py`) so they can inherit
//! from both `LanceError` and the matching builtin (`OSError`, `ValueError`,
//! `NotImplementedError`, `FileNotFoundError`); this module looks them up once.

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyType;

use lancelet_file::Error;

/// The Python exception classes, by role.
#[derive(Clone, Copy, Debug)]
pub enum Kind {
    Corrupt,
    NotFound,
    Io,
    SchemaMismatch,
    Unsupported,
    InvalidArgument,
    CommitConflict,
    AlreadyExists,
    OutOfRange,
    Internal,
}

impl Kind {
    fn class_name(self) -> &'static str {
        match self {
            Kind::Corrupt => "CorruptFileError",
            Kind::NotFound => "LanceNotFoundError",
            Kind::Io => "LanceIOError",
            Kind::SchemaMismatch => "SchemaMismatchError",
            Kind::Unsupported => "UnsupportedFeatureError",
            Kind::InvalidArgument => "InvalidArgumentError",
            Kind::CommitConflict => "CommitConflictError",
            Kind::AlreadyExists => "DatasetAlreadyExistsError",
            Kind::OutOfRange => "RowIndexError",
            Kind::Internal => "InternalError",
        }
    }
}

static ERRORS_MODULE: PyOnceLock<Py<PyModule>> = PyOnceLock::new();

/// Builds an exception of `kind` carrying `message`.
pub fn make(py: Python<'_>, kind: Kind, message: String) -> PyErr {
    let module = ERRORS_MODULE.get_or_try_init(py, || PyModule::import(py, "lancelet.errors").map(|m| m.unbind()));
    let class = module
        .and_then(|m| m.bind(py).getattr(kind.class_name()))
        .and_then(|c| c.cast_into::<PyType>().map_err(PyErr::from));
    match class {
        Ok(cls) => PyErr::from_type(cls, message),
        Err(_) => PyRuntimeError::new_err(message),
    }
}

/// An error from the Rust core that knows which Python exception it becomes.
pub trait CoreError: std::error::Error + Send + 'static {
    /// The exception class.
    fn kind(&self) -> Kind;

    /// The Python exception behind the error, when Python code called back by the core
    /// raised it (a commit lock): it is re-raised as itself.
    fn python_error(&self) -> Option<&PyErr> {
        None
    }
}

impl CoreError for Error {
    fn kind(&self) -> Kind {
        kind_of(self)
    }
}

impl CoreError for lancelet_dataset::Error {
    fn kind(&self) -> Kind {
        use lancelet_dataset::Error as D;
        match self {
            D::File(e) => kind_of(e),
            D::Table(t) => table_kind(t),
            D::Expr { .. } | D::InvalidArgument(_) | D::Arrow(_) => Kind::InvalidArgument,
            D::SchemaMismatch(_) => Kind::SchemaMismatch,
            D::OutOfRange(_) => Kind::OutOfRange,
            D::Unsupported(_) => Kind::Unsupported,
            D::AlreadyExists(_) => Kind::AlreadyExists,
            D::NotFound(_) => Kind::NotFound,
            D::Internal(_) => Kind::Internal,
            // pylance raises a failed commit lock as an OSError.
            D::CommitLock(_) => Kind::CommitConflict,
        }
    }

    fn python_error(&self) -> Option<&PyErr> {
        match self {
            lancelet_dataset::Error::CommitLock(e) => e.downcast_ref::<crate::hooks::PythonError>().map(|p| &p.0),
            _ => None,
        }
    }
}

/// Which exception a table-layer error becomes. Every variant has its arm: a new variant
/// does not compile until it is given a class here (and a case in tests/test_error_kinds.py).
pub fn table_kind(e: &lancelet_dataset::table::Error) -> Kind {
    use lancelet_dataset::table::Error as T;
    match e {
        T::Corrupt { .. } => Kind::Corrupt,
        T::Io { .. } => Kind::Io,
        // A missing version is a missing thing (pylance: ValueError, or OSError from
        // checkout_version; LanceNotFoundError is both).
        T::NotFound { .. } | T::VersionNotFound { .. } => Kind::NotFound,
        T::CommitConflict { .. } => Kind::CommitConflict,
        // A tag or branch name that is taken: pylance raises ValueError, as
        // InvalidArgumentError is (DatasetAlreadyExistsError is an OSError for datasets).
        T::AlreadyExists(_) | T::InvalidArgument(_) => Kind::InvalidArgument,
        T::Unsupported(_) => Kind::Unsupported,
    }
}

/// Which exception a file-layer error becomes (every variant has its arm).
pub fn kind_of(e: &Error) -> Kind {
    match e {
        Error::Corrupt { .. } => Kind::Corrupt,
        Error::NotFound { .. } => Kind::NotFound,
        Error::Io { .. } => Kind::Io,
        Error::SchemaMismatch(_) => Kind::SchemaMismatch,
        Error::Unsupported(_) => Kind::Unsupported,
        Error::InvalidArgument(_) => Kind::InvalidArgument,
        // Arrow refuses what it was given (a cast that does not fit, a bad batch).
        Error::Arrow(_) => Kind::InvalidArgument,
        Error::Internal(_) => Kind::Internal,
    }
}

/// Converts a core error.
pub fn to_py<E: CoreError>(py: Python<'_>, e: E) -> PyErr {
    to_py_ref(py, &e)
}

/// Converts a borrowed core error.
pub fn to_py_ref<E: CoreError>(py: Python<'_>, e: &E) -> PyErr {
    match e.python_error() {
        Some(raised) => raised.clone_ref(py),
        None => make(py, e.kind(), display_chain(e)),
    }
}

/// `Display` of an error followed by its sources, so nothing is lost.
pub fn display_chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut src = e.source();
    while let Some(inner) = src {
        let m = inner.to_string();
        if !s.contains(&m) {
            s.push_str(": ");
            s.push_str(&m);
        }
        src = inner.source();
    }
    s
}

/// Shorthand for a `ValueError`-like bad argument.
pub fn invalid(py: Python<'_>, message: impl Into<String>) -> PyErr {
    make(py, Kind::InvalidArgument, message.into())
}

/// Turns a caught panic payload into an `InternalError`.
pub fn from_panic(py: Python<'_>, payload: Box<dyn std::any::Any + Send>) -> PyErr {
    let msg = payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".to_string());
    make(py, Kind::Internal, format!("internal error (please report): {msg}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_core_error_has_a_kind() {
        let cases = [
            (Error::corrupt("f", "bad"), "CorruptFileError"),
            (Error::NotFound { path: "f".into() }, "LanceNotFoundError"),
            (
                Error::Io {
                    path: "f".into(),
                    source: std::io::Error::other("disk"),
                },
                "LanceIOError",
            ),
            (Error::SchemaMismatch("x".into()), "SchemaMismatchError"),
            (Error::Unsupported("x".into()), "UnsupportedFeatureError"),
            (Error::InvalidArgument("x".into()), "InvalidArgumentError"),
            (
                Error::Arrow(arrow_schema::ArrowError::CastError("x".into())),
                "InvalidArgumentError",
            ),
            (Error::Internal("x".into()), "InternalError"),
        ];
        for (e, name) in cases {
            assert_eq!(kind_of(&e).class_name(), name);
        }
    }

    #[test]
    fn every_table_error_has_a_kind() {
        use lancelet_dataset::table::{ConflictKind, Error as T};
        let cases = [
            (
                T::Corrupt {
                    path: "m".into(),
                    message: "bad".into(),
                },
                "CorruptFileError",
            ),
            (
                T::Io {
                    path: "m".into(),
                    source: std::io::Error::other("disk"),
                },
                "LanceIOError",
            ),
            (T::NotFound { path: "m".into() }, "LanceNotFoundError"),
            (
                T::VersionNotFound {
                    path: "d".into(),
                    version: 99,
                },
                "LanceNotFoundError",
            ),
            (
                T::CommitConflict {
                    path: "d".into(),
                    message: "x".into(),
                    kind: ConflictKind::Retryable,
                },
                "CommitConflictError",
            ),
            (T::AlreadyExists("tag".into()), "InvalidArgumentError"),
            (T::InvalidArgument("x".into()), "InvalidArgumentError"),
            (T::Unsupported("x".into()), "UnsupportedFeatureError"),
        ];
        for (e, name) in cases {
            assert_eq!(table_kind(&e).class_name(), name, "{e}");
            assert_eq!(lancelet_dataset::Error::Table(e).kind().class_name(), name);
        }
    }

    #[test]
    fn every_dataset_error_has_a_kind() {
        use lancelet_dataset::Error as D;
        let cases = [
            (D::File(Error::corrupt("f", "bad")), "CorruptFileError"),
            (D::SchemaMismatch("x".into()), "SchemaMismatchError"),
            (D::InvalidArgument("x".into()), "InvalidArgumentError"),
            (D::OutOfRange("x".into()), "RowIndexError"),
            (D::Unsupported("x".into()), "UnsupportedFeatureError"),
            (D::AlreadyExists("x".into()), "DatasetAlreadyExistsError"),
            (D::NotFound("x".into()), "LanceNotFoundError"),
            (D::Internal("x".into()), "InternalError"),
            (D::CommitLock("refused".into()), "CommitConflictError"),
            (
                D::Arrow(arrow_schema::ArrowError::CastError("x".into())),
                "InvalidArgumentError",
            ),
        ];
        for (e, name) in cases {
            assert_eq!(e.kind().class_name(), name, "{e}");
        }
    }
}
