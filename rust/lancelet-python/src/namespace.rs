//! What the Python namespace catalogs take from the core rather than redo: the names of
//! manifest files, and the one retry policy for commits that lose a race.

use std::time::Instant;

use lancelet_dataset::commit::retry::{backoff, RetryPolicy};
use lancelet_dataset::ManifestNaming;
use pyo3::prelude::*;
use pyo3::types::PyTuple;

use crate::runtime::call_python;

/// The file name of `version`'s manifest under naming scheme `naming` ("V1" or "V2").
#[pyfunction]
#[pyo3(signature = (version, naming=None))]
fn manifest_name(version: u64, naming: Option<&str>) -> String {
    let scheme = match naming.map(str::to_ascii_uppercase).as_deref() {
        Some("V1") => ManifestNaming::V1,
        _ => ManifestNaming::V2,
    };
    scheme.file_name(version)
}

/// The version a manifest file name holds; None for other files (hints, staged manifests).
#[pyfunction]
fn manifest_version(name: &str) -> Option<u64> {
    ManifestNaming::parse(name).map(|(v, _)| v)
}

/// Calls `func()` until it returns; when it raises one of `retry_on` (exception classes:
/// a lost commit race), waits the core's backoff and calls it again, at most `max_retries`
/// more times (the core's default when None) and, with `timeout` seconds, no new attempt
/// after that long. The last exception is raised.
///
/// `func` runs through [`call_python`] with this thread detached, as every Python the core
/// calls: it reads datasets, and pyarrow releases the GIL while it pulls their streams.
#[pyfunction]
#[pyo3(signature = (func, retry_on, max_retries=None, timeout=None))]
fn retry_conflicts(
    py: Python<'_>,
    func: Bound<'_, PyAny>,
    retry_on: Bound<'_, PyTuple>,
    max_retries: Option<u32>,
    timeout: Option<f64>,
) -> PyResult<Py<PyAny>> {
    let policy = RetryPolicy {
        max_retries: max_retries.unwrap_or(RetryPolicy::default().max_retries),
        timeout: timeout
            .filter(|t| t.is_finite() && *t >= 0.0)
            .map(std::time::Duration::from_secs_f64),
    };
    let func = func.unbind();
    let retry_on = retry_on.unbind();
    py.detach(move || {
        let started = Instant::now();
        let mut attempt = 0u32;
        loop {
            let e = match call_python(|py| func.bind(py).call0().map(Bound::unbind)) {
                Ok(v) => return Ok(v),
                Err(e) => e,
            };
            let retryable = call_python(|py| Ok(e.is_instance(py, retry_on.bind(py)))).unwrap_or(false);
            let timed_out = policy.timeout.is_some_and(|t| started.elapsed() >= t);
            if !retryable || attempt >= policy.max_retries || timed_out {
                return Err(e);
            }
            attempt += 1;
            std::thread::sleep(backoff(attempt));
            call_python(|py| py.check_signals())?;
        }
    })
}

pub fn init(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(manifest_name, m)?)?;
    m.add_function(wrap_pyfunction!(manifest_version, m)?)?;
    m.add_function(wrap_pyfunction!(retry_conflicts, m)?)?;
    Ok(())
}
