//! Python behind the dataset crate's hooks: a `commit_lock` callable as a
//! [`CommitLock`], and the core's log records. These go to Python's `logging` (warnings
//! and errors, under the `lancelet` logger), or, when the `LANCE_LOG` environment variable
//! sets a level as it does for pylance, to standard error or the `LANCE_LOG_FILE` file.

use std::io::Write;
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

/// The core's log records as text lines, at the levels `LANCE_LOG` asks for: pylance's
/// environment variables, read once when the module loads.
///
/// - `LANCE_LOG`: a default level (`trace`, `debug`, `info`, `warn`/`warning`, `error`,
///   `off`) and `target=level` entries for targets starting with `target` (`-` read as
///   `_`), comma-separated; the most specific matching entry wins.
/// - `LANCE_LOG_FILE`: append to this file (its folders are created) instead of standard
///   error; when it cannot be opened, a line on standard error says so and records go there.
/// - `LANCE_LOG_TS_PRECISION`: `s`, `ms`, `us` (default) or `ns` digits of the UTC timestamp
///   that starts each line: `[2026-11-29T20:49:21.123456Z INFO  lancelet::commit] ...`.
struct TextLog {
    default: log::LevelFilter,
    targets: Vec<(String, log::LevelFilter)>,
    precision: Precision,
    out: std::sync::Mutex<Box<dyn std::io::Write + Send>>,
}

#[derive(Clone, Copy)]
enum Precision {
    Seconds,
    Millis,
    Micros,
    Nanos,
}

fn level_of(s: &str) -> Option<log::LevelFilter> {
    Some(match s.trim().to_ascii_lowercase().as_str() {
        "trace" => log::LevelFilter::Trace,
        "debug" => log::LevelFilter::Debug,
        "info" => log::LevelFilter::Info,
        "warn" | "warning" => log::LevelFilter::Warn,
        "error" => log::LevelFilter::Error,
        "off" | "none" => log::LevelFilter::Off,
        _ => return None,
    })
}

impl TextLog {
    /// The logger `LANCE_LOG` asks for, or `None` when it is unset or empty.
    fn from_env() -> Option<Self> {
        let spec = std::env::var("LANCE_LOG").ok().filter(|s| !s.trim().is_empty())?;
        let mut default = log::LevelFilter::Error;
        let mut targets = Vec::new();
        for entry in spec.split(',') {
            match entry.split_once('=') {
                Some((target, level)) => {
                    if let Some(l) = level_of(level) {
                        targets.push((target.trim().replace('-', "_"), l));
                    }
                }
                None => {
                    if let Some(l) = level_of(entry) {
                        default = l;
                    }
                }
            }
        }
        // The longest (most specific) target first.
        targets.sort_by_key(|(t, _)| std::cmp::Reverse(t.len()));
        let precision = match std::env::var("LANCE_LOG_TS_PRECISION").as_deref() {
            Ok("s") => Precision::Seconds,
            Ok("ms") => Precision::Millis,
            Ok("ns") => Precision::Nanos,
            _ => Precision::Micros,
        };
        let out: Box<dyn std::io::Write + Send> = match std::env::var_os("LANCE_LOG_FILE") {
            None => Box::new(std::io::stderr()),
            Some(path) => {
                let path = std::path::PathBuf::from(path);
                let opened = path
                    .parent()
                    .filter(|p| !p.as_os_str().is_empty())
                    .map_or(Ok(()), std::fs::create_dir_all)
                    .and_then(|()| std::fs::OpenOptions::new().create(true).append(true).open(&path));
                match opened {
                    Ok(f) => Box::new(f),
                    Err(e) => {
                        // The one place a message has nowhere else to go.
                        let _ = writeln!(
                            std::io::stderr(),
                            "lancelet: cannot open LANCE_LOG_FILE {}: {e}; logging to standard error",
                            path.display()
                        );
                        Box::new(std::io::stderr())
                    }
                }
            }
        };
        Some(Self {
            default,
            targets,
            precision,
            out: std::sync::Mutex::new(out),
        })
    }

    fn filter_for(&self, target: &str) -> log::LevelFilter {
        self.targets
            .iter()
            .find(|(t, _)| target.starts_with(t.as_str()))
            .map_or(self.default, |(_, l)| *l)
    }

    fn max_level(&self) -> log::LevelFilter {
        self.targets.iter().map(|(_, l)| *l).fold(self.default, std::cmp::max)
    }
}

impl log::Log for TextLog {
    fn enabled(&self, metadata: &log::Metadata<'_>) -> bool {
        metadata.level() <= self.filter_for(metadata.target())
    }

    fn log(&self, record: &log::Record<'_>) {
        if !self.enabled(record.metadata()) {
            return;
        }
        let now = std::time::SystemTime::now();
        let ts = match self.precision {
            Precision::Seconds => humantime::format_rfc3339_seconds(now).to_string(),
            Precision::Millis => humantime::format_rfc3339_millis(now).to_string(),
            Precision::Micros => humantime::format_rfc3339_micros(now).to_string(),
            Precision::Nanos => humantime::format_rfc3339_nanos(now).to_string(),
        };
        let line = format!("[{ts} {:<5} {}] {}\n", record.level(), record.target(), record.args());
        if let Ok(mut out) = self.out.lock() {
            // One write per record, so lines of concurrent records do not interleave.
            let _ = out.write_all(line.as_bytes());
            let _ = out.flush();
        }
    }

    fn flush(&self) {
        if let Ok(mut out) = self.out.lock() {
            let _ = out.flush();
        }
    }
}

pub fn init(_m: &Bound<'_, PyModule>) -> PyResult<()> {
    // Another extension in the process may have installed a logger first: then the
    // records go there.
    if let Some(text) = TextLog::from_env() {
        let max = text.max_level();
        if log::set_boxed_logger(Box::new(text)).is_ok() {
            log::set_max_level(max);
        }
    } else if log::set_logger(&PythonLog).is_ok() {
        log::set_max_level(log::LevelFilter::Warn);
    }
    Ok(())
}
