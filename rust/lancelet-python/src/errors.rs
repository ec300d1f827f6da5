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

/// The kinds of failure every core layer reports (`lancelet_io::ErrorKind`); each becomes
/// one Python exception class.
pub use lancelet_io::ErrorKind as Kind;

/// The exception class (in `lancelet.errors`) of each kind: the one map from the core's
/// errors to Python's.
fn class_name(kind: Kind) -> &'static str {
    match kind {
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

static ERRORS_MODULE: PyOnceLock<Py<PyModule>> = PyOnceLock::new();

/// Builds an exception of `kind` carrying `message`.
pub fn make(py: Python<'_>, kind: Kind, message: String) -> PyErr {
    let module = ERRORS_MODULE.get_or_try_init(py, || PyModule::import(py, "lancelet.errors").map(|m| m.unbind()));
    let class = module
        .and_then(|m| m.bind(py).getattr(class_name(kind)))
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
        Error::kind(self)
    }
}

impl CoreError for lancelet_dataset::Error {
    fn kind(&self) -> Kind {
        lancelet_dataset::Error::kind(self)
    }

    fn python_error(&self) -> Option<&PyErr> {
        match self {
            lancelet_dataset::Error::CommitLock(e) => e.downcast_ref::<crate::hooks::PythonError>().map(|p| &p.0),
            _ => None,
        }
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
