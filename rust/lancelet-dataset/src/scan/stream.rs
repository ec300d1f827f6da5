//! A scan's batches for a synchronous consumer (a Python reader, a Spark partition):
//! tasks run a few at a time ahead of the consumer (see [`super::readahead`]), their
//! outputs go through the scan's [`super::Limiter`] in task order, and the held-back rows
//! of a strict batch size come out at the end.
//!
//! The consumer does the waiting itself ([`ScanBatches::step`] hands it the task to wait
//! for), so that it can wait its own way (the Python glue releases the GIL and watches for
//! Ctrl-C while it waits). A scan whose batches are finished after the limiter (a
//! `blob_binary` scan reads its blobs' bytes then, see [`Scan::finish_batch`]) hands out
//! that work to wait for too, one batch at a time.

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
    /// Wait for this task (a scan task, or the finishing of a batch), then give its batch
    /// to [`ScanBatches::accept`].
    Wait(JoinHandle<Result<RecordBatch>>),
    /// The runtime could not start a task.
    Failed(Error),
    /// No more batches.
    Done,
}

/// The batches of a scan, in order.
pub struct ScanBatches {
    scan: Arc<Scan>,
    tasks: Readahead<RecordBatch, Error>,
    limiter: Limiter,
    /// Batches out of the limiter, not finished yet.
    ready: VecDeque<RecordBatch>,
    /// The last [`Step::Wait`] handed out finishes a batch (rather than runs a task).
    finishing: bool,
    /// A finished batch, handed out next.
    finished: Option<RecordBatch>,
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
        let launched = scan.clone();
        let tasks = Readahead::new(scan.num_tasks(), window, runtime, move |i| {
            let scan = launched.clone();
            Box::pin(async move { scan.run_task(i).await })
        });
        Self {
            scan,
            tasks,
            limiter,
            ready: VecDeque::new(),
            finishing: false,
            finished: None,
            flushed: false,
        }
    }

    /// The next step: a batch, a task to wait for, or the end.
    pub fn step(&mut self) -> Step {
        if let Some(b) = self.finished.take() {
            return Step::Batch(b);
        }
        if self.ready.is_empty() {
            if let Some(step) = self.refill() {
                return step;
            }
        }
        let Some(b) = self.ready.pop_front() else {
            return Step::Done;
        };
        if !self.scan.finishes_batches() {
            return Step::Batch(b);
        }
        match self.tasks.runtime() {
            Ok(rt) => {
                let scan = self.scan.clone();
                self.finishing = true;
                Step::Wait(rt.spawn(async move { scan.finish_batch(b).await }))
            }
            Err(e) => Step::Failed(Error::Internal(format!("cannot start a scan task: {e}"))),
        }
    }

    /// Moves the limiter on while nothing is ready: the step to hand out (a task to wait
    /// for, a failure, the end), or `None` once a batch is ready.
    fn refill(&mut self) -> Option<Step> {
        if !self.limiter.done() {
            match self.tasks.next_task() {
                Some(Ok(task)) => {
                    self.finishing = false;
                    return Some(Step::Wait(task));
                }
                Some(Err(e)) => return Some(Step::Failed(Error::Internal(format!("cannot start a scan task: {e}")))),
                None => {}
            }
        }
        if !self.flushed {
            self.flushed = true;
            match self.limiter.finish() {
                Ok(Some(b)) => {
                    self.ready.push_back(b);
                    return None;
                }
                Ok(None) => {}
                Err(e) => return Some(Step::Failed(e)),
            }
        }
        Some(Step::Done)
    }

    /// Takes the batch of the task [`ScanBatches::step`] handed out.
    pub fn accept(&mut self, batch: RecordBatch) -> Result<()> {
        if std::mem::take(&mut self.finishing) {
            self.finished = Some(batch);
            return Ok(());
        }
        self.ready.extend(self.limiter.push(batch)?);
        Ok(())
    }
}
