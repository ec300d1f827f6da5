//! Running numbered tasks a few at a time ahead of a synchronous consumer, in order, in a
//! process that may fork.
//!
//! Streams handed to Python (a dataset scan, a file's batches) are pulled one batch at a
//! time from outside the runtime. [`Readahead`] keeps up to `window` tasks running on the
//! runtime while the consumer handles the current batch, and hands them back in task order.
//!
//! Fork policy: PySpark forks its workers, and a runtime's threads do not survive `fork`.
//! Each task remembers the process that launched it; a task inherited across a fork is
//! forgotten (its handle would wait on threads that do not exist in the child) and launched
//! again on the child's own runtime, which the `runtime` function given to [`Readahead::new`]
//! builds afresh per process.

use std::collections::VecDeque;

use futures::future::BoxFuture;
use tokio::runtime::Handle;
use tokio::task::JoinHandle;

/// The runtime of the current process (built again after a fork).
pub(crate) type RuntimeFn = Box<dyn Fn() -> std::io::Result<Handle> + Send>;

/// Makes the future of task `i`.
pub(crate) type LaunchFn<T, E> = Box<dyn FnMut(usize) -> BoxFuture<'static, Result<T, E>> + Send>;

/// A task running on the runtime of process `pid`.
struct Pending<T, E> {
    pid: u32,
    task: usize,
    handle: JoinHandle<Result<T, E>>,
}

/// Tasks `0..num_tasks` run at most `window` at a time, handed back in order.
pub struct Readahead<T, E> {
    runtime: RuntimeFn,
    launch: LaunchFn<T, E>,
    num_tasks: usize,
    window: usize,
    next: usize,
    pending: VecDeque<Pending<T, E>>,
}

impl<T: Send + 'static, E: Send + 'static> Readahead<T, E> {
    /// Tasks `0..num_tasks`, made by `launch` and run on `runtime()`, at most `window`
    /// (at least one) in flight. Nothing starts before the first [`Readahead::next_task`].
    pub fn new(
        num_tasks: usize,
        window: usize,
        runtime: impl Fn() -> std::io::Result<Handle> + Send + 'static,
        launch: impl FnMut(usize) -> BoxFuture<'static, Result<T, E>> + Send + 'static,
    ) -> Self {
        Self {
            runtime: Box::new(runtime),
            launch: Box::new(launch),
            num_tasks,
            window: window.max(1),
            next: 0,
            pending: VecDeque::new(),
        }
    }

    fn start(&mut self, task: usize) -> std::io::Result<Pending<T, E>> {
        let handle = (self.runtime)()?;
        Ok(Pending {
            pid: std::process::id(),
            task,
            handle: handle.spawn((self.launch)(task)),
        })
    }

    /// Starts tasks until `window` are in flight. A consumer whose consecutive tasks share
    /// work through a cache (a file's batches within one page) uses a window of one and
    /// calls this after each wait, so the next task starts when the current one is done.
    pub fn prefetch(&mut self) -> std::io::Result<()> {
        while self.pending.len() < self.window && self.next < self.num_tasks {
            let started = self.start(self.next)?;
            self.pending.push_back(started);
            self.next += 1;
        }
        Ok(())
    }

    /// Fills the window, then hands back the oldest task's handle for the caller to wait
    /// on (`None` once every task was handed out). An error means the runtime could not
    /// be started.
    pub fn next_task(&mut self) -> Option<std::io::Result<JoinHandle<Result<T, E>>>> {
        if let Err(e) = self.prefetch() {
            return Some(Err(e));
        }
        let p = self.pending.pop_front()?;
        if p.pid == std::process::id() {
            return Some(Ok(p.handle));
        }
        // Forked since the task started: its runtime is gone in this process.
        let task = p.task;
        std::mem::forget(p);
        Some(self.start(task).map(|p| p.handle))
    }

    /// The runtime of the current process, for work the consumer waits on between tasks.
    pub fn runtime(&self) -> std::io::Result<Handle> {
        (self.runtime)()
    }

    /// How many tasks were handed out or are running.
    pub fn started(&self) -> usize {
        self.next - self.pending.len()
    }
}

impl<T, E> Drop for Readahead<T, E> {
    fn drop(&mut self) {
        // Tasks nobody will wait for: stop them (in this process only; an inherited
        // handle belongs to a runtime that is gone).
        let pid = std::process::id();
        for p in self.pending.drain(..) {
            if p.pid == pid {
                p.handle.abort();
            } else {
                std::mem::forget(p);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::FutureExt;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    #[test]
    fn tasks_come_back_in_order_with_at_most_window_in_flight() {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .build()
            .unwrap();
        let handle = rt.handle().clone();
        let launched = Arc::new(AtomicUsize::new(0));
        let counter = launched.clone();
        let mut ra: Readahead<usize, ()> = Readahead::new(
            5,
            2,
            move || Ok(handle.clone()),
            move |i| {
                counter.fetch_add(1, Ordering::SeqCst);
                async move { Ok(i * 10) }.boxed()
            },
        );
        assert_eq!(
            launched.load(Ordering::SeqCst),
            0,
            "nothing starts before it is asked for"
        );
        let mut got = Vec::new();
        while let Some(h) = ra.next_task() {
            assert!(launched.load(Ordering::SeqCst) <= got.len() + 2);
            got.push(rt.block_on(h.unwrap()).unwrap().unwrap());
        }
        assert_eq!(got, vec![0, 10, 20, 30, 40]);
        assert_eq!(ra.started(), 5);
    }
}
