//! Python behind the dataset crate's hooks: a `commit_lock` callable as a
//! [`CommitLock`], and the crate's log records (automatic cleanup's warnings) sent to
//! Python's `logging` under the `lancelet` logger.

use std::sync::Arc;

use lancelet_dataset::commit::{CommitGuard, CommitLock, HookError};
use pyo3::prelude::*;

use crate::errors;
use crate::runtime::call_python;

/// An exception raised by Python code the core called back: it reaches the caller as
/// itself (see [`errors::to_py`]), not as a message inside another exception.
#[derive(Debug)]
pub struct PythonError(pub PyErr);

impl std::fmt::Display for PythonError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl std::error::Error for PythonError {}

/// pylance's `commit_lock`: `lock(version)` returns a context manager entered around the
/// commit of `version`.
#[derive(Debug)]
pub struct PyCommitLock(Py<PyAny>);

impl PyCommitLock {
    /// `lock` as a commit lock; `None` stays `None`. Anything not callable is refused with
    /// pylance's `TypeError`.
    pub fn from_py(lock: Option<Bound<'_, PyAny>>) -> PyResult<Option<Arc<dyn CommitLock>>> {
        match lock {
            None => Ok(None),
            Some(l) if l.is_none() => Ok(None),
            Some(l) if !l.is_callable() => Err(pyo3::exceptions::PyTypeError::new_err(format!(
                "commit_lock must be a function, got {}",
                l.get_type()
            ))),
            Some(l) => Ok(Some(Arc::new(PyCommitLock(l.unbind())))),
        }
    }
}

struct PyGuard(Py<PyAny>);

impl CommitLock for PyCommitLock {
    fn lock(&self, version: u64) -> Result<Box<dyn CommitGuard>, HookError> {
        call_python(|py| {
            let ctx = self.0.bind(py).call1((version,))?;
            ctx.call_method0("__enter__")?;
            Ok(ctx.unbind())
        })
        .map(|ctx| Box::new(PyGuard(ctx)) as Box<dyn CommitGuard>)
        .map_err(|e| Box::new(PythonError(e)) as HookError)
    }
}

impl CommitGuard for PyGuard {
    fn release(self: Box<Self>, failure: Option<&lancelet_dataset::Error>) -> Result<(), HookError> {
        call_python(|py| {
            let ctx = self.0.bind(py);
            match failure {
                None => ctx.call_method1("__exit__", (py.None(), py.None(), py.None()))?,
                Some(e) => {
                    let err = errors::to_py_ref(py, e);
                    ctx.call_method1("__exit__", (err.get_type(py), err.value(py), err.traceback(py)))?
                }
            };
            Ok(())
        })
        .map_err(|e| Box::new(PythonError(e)) as HookError)
    }
}

/// Sends the core's warnings (and errors) to `logging.getLogger(target)`.
struct PythonLog;

impl log::Log for PythonLog {
    fn enabled(&self, metadata: &log::Metadata<'_>) -> bool {
        metadata.level() <= log::Level::Warn
    }

    fn log(&self, record: &log::Record<'_>) {
        if !self.enabled(record.metadata()) {
            return;
        }
        let method = if record.level() == log::Level::Error {
            "error"
        } else {
            "warning"
        };
        let message = record.args().to_string();
        let _ = call_python(|py| {
            let logger = py.import("logging")?.call_method1("getLogger", (record.target(),))?;
            logger.call_method1(method, (message,))?;
            Ok(())
        });
    }

    fn flush(&self) {}
}

pub fn init(_m: &Bound<'_, PyModule>) -> PyResult<()> {
    // Another extension in the process may have installed a logger first: then the
    // records go there.
    if log::set_logger(&PythonLog).is_ok() {
        log::set_max_level(log::LevelFilter::Warn);
    }
    Ok(())
}
