//! The process-wide tokio runtime and the single chokepoint for blocking calls.
//!
//! Fork policy: PySpark forks its Python workers, and a tokio runtime does not survive
//! `fork` (its threads stay in the parent). The runtime is therefore keyed by process id:
//! a forked child that finds the parent's runtime leaks it (dropping it could block on
//! threads that do not exist) and builds a fresh one.
//!
//! Every blocking call goes through [`block_on`], which releases the GIL, runs the future
//! on the runtime, wakes every 50 ms to let Python handle signals (so Ctrl-C interrupts a
//! long read) and turns a panic into an `InternalError` instead of aborting.

use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use pyo3::prelude::*;
use tokio::runtime::Runtime;

use crate::errors;

struct Owned {
    pid: u32,
    runtime: Arc<Runtime>,
}

static RUNTIME: Mutex<Option<Owned>> = Mutex::new(None);
static WORKER_THREADS: Mutex<Option<usize>> = Mutex::new(None);

fn build(threads: Option<usize>) -> std::io::Result<Runtime> {
    let mut b = tokio::runtime::Builder::new_multi_thread();
    b.enable_time().enable_io().thread_name("lancelet-worker");
    if let Some(n) = threads {
        b.worker_threads(n.max(1));
    }
    b.build()
}

/// The runtime of the current process, built on first use (and again after a fork).
pub fn runtime() -> std::io::Result<Arc<Runtime>> {
    let mut guard = RUNTIME.lock().unwrap_or_else(|p| p.into_inner());
    let pid = std::process::id();
    if let Some(owned) = guard.as_ref() {
        if owned.pid == pid {
            return Ok(owned.runtime.clone());
        }
    }
    if let Some(stale) = guard.take() {
        // Inherited from the parent across fork: its worker threads are gone.
        std::mem::forget(stale);
    }
    let threads = *WORKER_THREADS.lock().unwrap_or_else(|p| p.into_inner());
    let rt = Arc::new(build(threads)?);
    *guard = Some(Owned {
        pid,
        runtime: rt.clone(),
    });
    Ok(rt)
}

/// Runs `fut` to completion with the GIL released, honouring Ctrl-C.
pub fn block_on<F, T, E>(py: Python<'_>, fut: F) -> PyResult<T>
where
    F: Future<Output = Result<T, E>> + Send + 'static,
    T: Send + 'static,
    E: errors::CoreError,
{
    let rt = runtime().map_err(|e| errors::make(py, errors::Kind::Internal, format!("cannot start runtime: {e}")))?;
    let mut handle = rt.spawn(fut);
    loop {
        let step =
            py.detach(|| rt.block_on(async { tokio::time::timeout(Duration::from_millis(50), &mut handle).await }));
        match step {
            Ok(Ok(Ok(v))) => return Ok(v),
            Ok(Ok(Err(e))) => return Err(errors::to_py(py, e)),
            Ok(Err(join)) => {
                return Err(match join.try_into_panic() {
                    Ok(payload) => errors::from_panic(py, payload),
                    Err(e) => errors::make(py, errors::Kind::Internal, format!("task failed: {e}")),
                })
            }
            Err(_elapsed) => {
                if let Err(e) = py.check_signals() {
                    handle.abort();
                    return Err(e);
                }
            }
        }
    }
}

/// Runs CPU work with the GIL released, turning panics into `InternalError`.
pub fn run_detached<T: Send, E: errors::CoreError, F: FnOnce() -> Result<T, E> + Send>(
    py: Python<'_>,
    f: F,
) -> PyResult<T> {
    let res = py.detach(|| std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)));
    match res {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => Err(errors::to_py(py, e)),
        Err(payload) => Err(errors::from_panic(py, payload)),
    }
}

/// A [`lancelet_file::Spawner`] that runs column reads as tasks on `rt`.
pub fn spawner(rt: &Arc<Runtime>) -> lancelet_file::Spawner {
    let handle = rt.handle().clone();
    Arc::new(move |fut| {
        let task = handle.spawn(fut);
        Box::pin(async move {
            match task.await {
                Ok(res) => res,
                Err(e) => Err(lancelet_file::Error::InvalidArgument(format!(
                    "column read task failed: {e}"
                ))),
            }
        })
    })
}

/// Sets the number of worker threads for runtimes built from now on (including after a fork).
#[pyfunction]
#[pyo3(signature = (threads=None))]
fn set_worker_threads(threads: Option<usize>) {
    *WORKER_THREADS.lock().unwrap_or_else(|p| p.into_inner()) = threads;
}

/// The process id that owns the current runtime, or None if none was built yet.
#[pyfunction]
fn _runtime_pid() -> Option<u32> {
    RUNTIME
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .as_ref()
        .map(|o| o.pid)
}

pub fn init(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(set_worker_threads, m)?)?;
    m.add_function(wrap_pyfunction!(_runtime_pid, m)?)?;
    Ok(())
}
