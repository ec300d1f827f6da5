//! The process-wide tokio runtime and the single chokepoint for blocking calls.
//!
//! Fork policy: PySpark forks its Python workers, and a tokio runtime does not survive
//! `fork` (its threads stay in the parent). The runtime is therefore keyed by process id:
//! a forked child that finds the parent's runtime leaks it (dropping it could block on
//! threads that do not exist) and builds a fresh one.
//!
//! Every blocking call goes through one wait ([`block_on`] for methods, [`wait_task`] for
//! the batches of a stream), which releases the GIL, runs the future inside the runtime,
//! runs Python's signal handlers every 50 ms (so Ctrl-C interrupts a long read or write)
//! and turns a panic into an `InternalError` instead of aborting. Synchronous work inside a
//! wait (a write pulling its input) looks for Ctrl-C with [`interrupted`].

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use arrow_schema::ArrowError;
use pyo3::prelude::*;
use tokio::runtime::Runtime;
use tokio::task::{JoinError, JoinHandle};

use crate::arrow_ffi::{stream_error, ErrorSlot};
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

/// How often a wait looks for Ctrl-C.
const SIGNAL_POLL: Duration = Duration::from_millis(50);

thread_local! {
    /// The exception a signal handler raised during the current wait on this thread
    /// (Ctrl-C's `KeyboardInterrupt`), kept until the wait returns it.
    static INTERRUPT: RefCell<Option<PyErr>> = const { RefCell::new(None) };
    /// When this thread last ran Python's signal handlers.
    static LAST_CHECK: Cell<Option<Instant>> = const { Cell::new(None) };
}

/// Whether a signal handler raised (Ctrl-C) since the current wait began; runs Python's
/// signal handlers at most every 50 ms. For glue code that works synchronously inside
/// [`block_on`] (a write pulling its input batches): on `true` it stops with any error,
/// and [`block_on`] raises the handler's exception instead of that error.
pub fn interrupted() -> bool {
    if INTERRUPT.with(|i| i.borrow().is_some()) {
        return true;
    }
    let now = Instant::now();
    if LAST_CHECK.with(|c| c.get().is_some_and(|t| now.duration_since(t) < SIGNAL_POLL)) {
        return false;
    }
    LAST_CHECK.with(|c| c.set(Some(now)));
    match Python::attach(|py| py.check_signals()) {
        Ok(()) => false,
        Err(e) => {
            INTERRUPT.with(|i| *i.borrow_mut() = Some(e));
            true
        }
    }
}

/// How a wait ended.
enum Waited<T, E> {
    Done(Result<T, E>),
    Interrupted(PyErr),
    Panicked(Box<dyn std::any::Any + Send>),
    NoRuntime(std::io::Error),
}

/// The one way glue code waits: runs `fut` to completion on this thread, inside the
/// runtime, with the GIL released, running Python's signal handlers every 50 ms (so Ctrl-C
/// stops it: the future is dropped, its spawned work aborted where it is joined) and
/// catching panics. The future is polled on this thread, not a worker, so it may pull input
/// that must be produced here (a Python generator) and borrow from the caller.
fn wait<F, T, E>(py: Python<'_>, fut: F) -> Waited<T, E>
where
    F: Future<Output = Result<T, E>> + Send,
    T: Send,
    E: Send,
{
    let rt = match runtime() {
        Ok(rt) => rt,
        Err(e) => return Waited::NoRuntime(e),
    };
    let outer = INTERRUPT.with(|i| i.borrow_mut().take());
    let ran = py.detach(|| {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            rt.block_on(async {
                let mut fut = std::pin::pin!(fut);
                let mut tick = tokio::time::interval(SIGNAL_POLL);
                tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
                loop {
                    tokio::select! {
                        biased;
                        done = &mut fut => return Some(done),
                        _ = tick.tick() => {
                            if interrupted() {
                                return None;
                            }
                        }
                    }
                }
            })
        }))
    });
    let raised = INTERRUPT.with(|i| std::mem::replace(&mut *i.borrow_mut(), outer));
    match (ran, raised) {
        (Err(payload), _) => Waited::Panicked(payload),
        // Work that saw the interrupt stopped with some error: the exception is the answer.
        (Ok(Some(Err(_))) | Ok(None), Some(e)) => Waited::Interrupted(e),
        (Ok(Some(done)), _) => Waited::Done(done),
        (Ok(None), None) => Waited::Panicked(Box::new("a wait ended without an outcome")),
    }
}

/// Runs `fut` to completion with the GIL released, honouring Ctrl-C (see [`wait`]); core
/// errors become their `lancelet.errors` exceptions and panics `InternalError`.
pub fn block_on<F, T, E>(py: Python<'_>, fut: F) -> PyResult<T>
where
    F: Future<Output = Result<T, E>> + Send,
    T: Send,
    E: errors::CoreError,
{
    match wait(py, fut) {
        Waited::Done(Ok(v)) => Ok(v),
        Waited::Done(Err(e)) => Err(errors::to_py(py, e)),
        Waited::Interrupted(e) => Err(e),
        Waited::Panicked(payload) => Err(errors::from_panic(py, payload)),
        Waited::NoRuntime(e) => Err(errors::make(
            py,
            errors::Kind::Internal,
            format!("cannot start runtime: {e}"),
        )),
    }
}

/// Waits for a task of a stream handed to Python (a scan's or a file's batches) through
/// [`wait`], from whatever thread consumes the stream. The typed error behind a failure is
/// kept in `slot`; an interrupt is handed back to Python (its next bytecode raises
/// `KeyboardInterrupt`) and ends the stream.
pub fn wait_task<T, E>(
    slot: &ErrorSlot,
    task: JoinHandle<Result<T, E>>,
    failed: fn(JoinError) -> E,
) -> Result<T, ArrowError>
where
    T: Send + 'static,
    E: errors::CoreError,
{
    Python::attach(|py| match wait(py, async move { task.await.map_err(failed)? }) {
        Waited::Done(Ok(v)) => Ok(v),
        Waited::Done(Err(e)) => Err(stream_error(slot, e)),
        Waited::Interrupted(e) => {
            let message = e.to_string();
            if e.is_instance_of::<pyo3::exceptions::PyKeyboardInterrupt>(py) {
                // SAFETY: called with the GIL held; it only flags SIGINT as pending.
                unsafe { pyo3::ffi::PyErr_SetInterrupt() };
            }
            Err(ArrowError::ExternalError(format!("interrupted: {message}").into()))
        }
        Waited::Panicked(payload) => {
            let e = errors::from_panic(py, payload);
            Err(stream_error(slot, lancelet_file::Error::Internal(e.to_string())))
        }
        Waited::NoRuntime(e) => Err(ArrowError::ExternalError(Box::new(e))),
    })
}

/// The runtime's handle, for [`lancelet_dataset::scan::readahead::Readahead`].
pub fn handle() -> std::io::Result<tokio::runtime::Handle> {
    runtime().map(|rt| rt.handle().clone())
}

/// A [`lancelet_file::Spawner`] that runs column reads as tasks on `rt`.
pub fn spawner(rt: &Arc<Runtime>) -> lancelet_file::Spawner {
    lancelet_dataset::tokio_spawner(rt.handle().clone())
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

/// Calls Python from inside a wait (a user function, a commit lock, a log record), outside
/// the runtime's context: the Python code may itself read a lancelet dataset, which blocks
/// on the runtime.
///
/// The GIL is taken with `PyGILState_Ensure` directly rather than `Python::attach`: pyo3
/// would count this thread as attached for the whole call, but the Python code may release
/// the GIL (pyarrow does while reading a stream) and re-enter lancelet from C, where
/// `Python::attach` would then trust that stale count and detach a thread that holds no GIL.
pub fn call_python<T>(f: impl FnOnce(Python<'_>) -> PyResult<T>) -> PyResult<T> {
    let run = || {
        // SAFETY: the interpreter is running (this is called from a Python call), and the
        // state is released below on every path before returning.
        let gstate = unsafe { pyo3::ffi::PyGILState_Ensure() };
        // SAFETY: the GIL is held until `PyGILState_Release` below, and nothing borrowed
        // from `py` outlives this closure (`f` returns owned values).
        let py = unsafe { Python::assume_attached() };
        let out = f(py);
        // SAFETY: matches the `PyGILState_Ensure` above.
        unsafe { pyo3::ffi::PyGILState_Release(gstate) };
        out
    };
    match tokio::runtime::Handle::try_current() {
        Ok(_) => tokio::task::block_in_place(run),
        Err(_) => run(),
    }
}
