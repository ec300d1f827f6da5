//! A scan's batches for a synchronous consumer (a Python reader, a Spark partition):
//! tasks run a few at a time ahead of the consumer (see [`super::readahead`]), their
//! outputs go through the scan's [`super::Limiter`] in task order, and the held-back rows
//! of a strict batch size come out at the end.
//!
//! The consumer does the waiting itself ([`ScanBatches::step`] hands it the task to wait
//! for), so that it can wait its own way (the Python glue releases the GIL and watches for
//! Ctrl-C while it waits).

use std::collections::VecDeque;
use std::sync::Arc;

use arrow_array::RecordBatch;
use tokio::runtime::Handle;
use tokio::task::JoinHandle;

use super::readahead::Readahead;
use super::{Limiter, Scan};
use crate::{Error, Result};

/// Scan tasks in flight on object stores (latency-bound: more than there are cores).
const REMOTE_READAHEAD: usize = 4;

/// What [`ScanBatches::step`] hands the consumer.
#[derive(Debug)]
pub enum Step {
    /// The next batch.
    Batch(RecordBatch),
    /// Wait for this task, then give its batch to [`ScanBatches::accept`].
    Wait(JoinHandle<Result<RecordBatch>>),
    /// The runtime could not start a task.
    Failed(Error),
    /// No more batches.
    Done,
}

/// The batches of a scan, in order.
pub struct ScanBatches {
    tasks: Readahead<RecordBatch, Error>,
    limiter: Limiter,
    ready: VecDeque<RecordBatch>,
    flushed: bool,
}

impl std::fmt::Debug for ScanBatches {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScanBatches").field("ready", &self.ready.len()).finish()
    }
}

impl ScanBatches {
    /// The batches of `scan`, its tasks run on `runtime()` (built again after a fork): as
    /// many at once as there are cores on local disk, at least four on object stores.
    pub fn new(scan: Arc<Scan>, runtime: impl Fn() -> std::io::Result<Handle> + Send + 'static) -> Self {
        let cores = crate::scan::tasks_at_once();
        let window = if scan.dataset().is_local() {
            cores
        } else {
            cores.max(REMOTE_READAHEAD)
        };
        let limiter = scan.limiter();
        let tasks = Readahead::new(scan.num_tasks(), window, runtime, move |i| {
            let scan = scan.clone();
            Box::pin(async move { scan.run_task(i).await })
        });
        Self {
            tasks,
            limiter,
            ready: VecDeque::new(),
            flushed: false,
        }
    }

    /// The next step: a batch, a task to wait for, or the end.
    pub fn step(&mut self) -> Step {
        if let Some(b) = self.ready.pop_front() {
            return Step::Batch(b);
        }
        if !self.limiter.done() {
            match self.tasks.next_task() {
                Some(Ok(task)) => return Step::Wait(task),
                Some(Err(e)) => return Step::Failed(Error::Internal(format!("cannot start a scan task: {e}"))),
                None => {}
            }
        }
        if !self.flushed {
            self.flushed = true;
            match self.limiter.finish() {
                Ok(Some(b)) => return Step::Batch(b),
                Ok(None) => {}
                Err(e) => return Step::Failed(e),
            }
        }
        Step::Done
    }

    /// Takes the batch of the task [`ScanBatches::step`] handed out.
    pub fn accept(&mut self, batch: RecordBatch) -> Result<()> {
        self.ready.extend(self.limiter.push(batch)?);
        Ok(())
    }
}
