//! Encoding a writer's pages on several threads, writing them in order.
//!
//! Encoding a page is a pure function of its rows, so the pages a flush produces (of one
//! or several fields) are encoded by a few worker threads while the writer's thread
//! writes each finished page in the order the jobs were listed: the file's bytes are the
//! same whatever the number of threads. Workers run at most a window of jobs ahead of
//! the page being written, so memory stays bounded by a few encoded pages.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::{Condvar, Mutex};

use arrow_array::ArrayRef;
use arrow_schema::FieldRef;
use lancelet_encoding::v2_1::{encode_page, shred, EncodedPage21, PageOptions, Shredded};

use crate::error::{Error, Result};
use crate::stats::{zone_stats, ZoneStats};

/// Encoding jobs a worker may run ahead of the one being written, per thread.
const WINDOW_PER_THREAD: usize = 2;

/// Worker threads to use for `jobs` jobs when `requested` (0 = one per core).
pub(crate) fn threads_for(requested: usize, jobs: usize) -> usize {
    let cores = if requested == 0 {
        std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)
    } else {
        requested
    };
    cores.min(jobs).max(1)
}

/// Runs `work` over `jobs` on `threads` threads and hands each result to `sink` in job
/// order, on the calling thread. The first error of `sink` stops the workers (jobs not
/// started are dropped) and is returned.
pub(crate) fn run_ordered<J, R, E>(
    jobs: Vec<J>,
    threads: usize,
    work: impl Fn(J) -> R + Sync,
    mut sink: impl FnMut(R) -> std::result::Result<(), E>,
) -> std::result::Result<(), E>
where
    J: Send,
    R: Send,
{
    let n = jobs.len();
    if threads <= 1 || n <= 1 {
        for j in jobs {
            sink(work(j))?;
        }
        return Ok(());
    }
    let window = threads * WINDOW_PER_THREAD;
    let queue = Mutex::new(Queue {
        jobs: jobs.into_iter(),
        next: 0,
        written: 0,
    });
    let moved = Condvar::new();
    let stop = AtomicBool::new(false);
    let (tx, rx) = mpsc::channel::<(usize, R)>();
    std::thread::scope(|s| {
        for _ in 0..threads {
            let tx = tx.clone();
            let (queue, moved, stop, work) = (&queue, &moved, &stop, &work);
            s.spawn(move || {
                // A worker that panics stops the others (which may wait for its result):
                // the scope then re-raises the panic.
                let _guard = StopOnPanic(stop, moved, queue);
                worker(queue, moved, stop, window, n, &work, &tx);
            });
        }
        drop(tx);
        let mut ready: Vec<Option<R>> = (0..n).map(|_| None).collect();
        let mut written = 0;
        let mut outcome = Ok(());
        while written < n {
            // A worker that died (a panic) leaves its result missing: the scope re-raises it.
            let Ok((i, r)) = rx.recv() else { break };
            ready[i] = Some(r);
            while let Some(r) = ready.get_mut(written).and_then(Option::take) {
                if let Err(e) = sink(r) {
                    outcome = Err(e);
                    break;
                }
                written += 1;
            }
            if outcome.is_err() {
                stop.store(true, Ordering::Relaxed);
            }
            if let Ok(mut q) = queue.lock() {
                q.written = written;
            }
            moved.notify_all();
            if outcome.is_err() {
                break;
            }
        }
        outcome
    })
}

/// The jobs, taken in order by the workers; `written` = results handed to the sink.
struct Queue<J> {
    jobs: std::vec::IntoIter<J>,
    next: usize,
    written: usize,
}

/// Sets the stop flag and wakes every worker when dropped during a panic.
struct StopOnPanic<'a, J>(&'a AtomicBool, &'a Condvar, &'a Mutex<Queue<J>>);

impl<J> Drop for StopOnPanic<'_, J> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.store(true, Ordering::Relaxed);
            // Taking the lock orders the flag before any worker's next check.
            drop(self.2.lock());
            self.1.notify_all();
        }
    }
}

/// One worker: takes the next job while it is within `window` of the last one written.
fn worker<J, R>(
    queue: &Mutex<Queue<J>>,
    moved: &Condvar,
    stop: &AtomicBool,
    window: usize,
    n: usize,
    work: &(impl Fn(J) -> R + Sync),
    tx: &mpsc::Sender<(usize, R)>,
) {
    loop {
        let (i, job) = {
            let Ok(mut q) = queue.lock() else { return };
            while q.next < n && q.next >= q.written + window && !stop.load(Ordering::Relaxed) {
                q = match moved.wait(q) {
                    Ok(q) => q,
                    Err(_) => return,
                };
            }
            if stop.load(Ordering::Relaxed) {
                return;
            }
            let Some(job) = q.jobs.next() else { return };
            q.next += 1;
            (q.next - 1, job)
        };
        if tx.send((i, work(job))).is_err() {
            return;
        }
    }
}

/// One page of one top-level field (2.1+): its rows and how to encode them.
pub(crate) struct PageJob {
    /// The top-level field (as planned: blob v1 fields as their descriptors).
    pub field: FieldRef,
    /// The page's rows.
    pub rows: ArrayRef,
    /// Page options of each leaf column of the field.
    pub leaves: Vec<PageOptions>,
    /// Encode only this leaf column ([`crate::PageRules::Pylance`], whose leaves flush
    /// on their own), cut where pylance cuts the levels of sparse lists.
    pub leaf: Option<usize>,
    /// When statistics are kept for the field's first column: zone size and the row
    /// number of the page's first row.
    pub zones: Option<(usize, u64)>,
    /// Per leaf column: whether it holds blob v1 descriptors (wrapped in a blob page).
    pub blob_leaves: Vec<bool>,
}

/// An encoded [`PageJob`]: its pages, each with the index of its leaf column, and the
/// statistics zones.
pub(crate) struct EncodedJob {
    pub pages: Vec<(usize, EncodedPage21)>,
    pub zones: Vec<ZoneStats>,
}

/// Encodes one page job; `path` is only used in error messages.
pub(crate) fn encode_job(job: PageJob, path: &str) -> Result<EncodedJob> {
    let mut zones = Vec::new();
    if let Some((step, first_row)) = job.zones {
        let mut start = 0;
        while start < job.rows.len() {
            let len = step.min(job.rows.len() - start);
            if let Some(z) = zone_stats(job.rows.slice(start, len).as_ref(), first_row + start as u64) {
                zones.push(z);
            }
            start += len;
        }
    }
    let encode = |k: usize, mut leaf: Shredded, opts: &PageOptions| -> Result<EncodedPage21> {
        // Blob v1 descriptors: an all-valid inner page (levels kept in the positions)
        // wrapped in a blob page that carries the column's layers.
        let layers = match job.blob_leaves.get(k).copied().unwrap_or(false) {
            true => Some(
                lancelet_encoding::v2_1::blob::levels_into_positions(&mut leaf)
                    .map_err(|e| Error::from_encoding(path, e))?,
            ),
            false => None,
        };
        let mut page = encode_page(&leaf, opts).map_err(|e| Error::from_encoding(path, e))?;
        if let Some(layers) = layers {
            page.layout = lancelet_encoding::v2_1::blob::blob_layout_with(page.layout, layers);
        }
        Ok(page)
    };
    let mut pages = Vec::new();
    match job.leaf {
        None => {
            let leaves = shred(&job.field, job.rows.as_ref()).map_err(|e| Error::from_encoding(path, e))?;
            for (k, (leaf, opts)) in leaves.into_iter().zip(&job.leaves).enumerate() {
                pages.push((k, encode(k, leaf, opts)?));
            }
        }
        Some(k) => {
            let opts = job
                .leaves
                .get(k)
                .ok_or_else(|| Error::InvalidArgument(format!("field {:?} has no leaf {k}", job.field.name())))?;
            let (field, rows, j) = super::pylance::leaf_path(&job.field, &job.rows, k)?;
            let mut leaves = shred(&field, rows.as_ref()).map_err(|e| Error::from_encoding(path, e))?;
            if j >= leaves.len() {
                return Err(Error::InvalidArgument(format!(
                    "field {:?} has no leaf {k}",
                    job.field.name()
                )));
            }
            let leaf = leaves.swap_remove(j);
            let ends = match leaf.rep.is_some() {
                true => super::pylance::level_budget_ends(&leaf)?,
                false => Vec::new(),
            };
            if ends.len() > 1 {
                for piece in leaf.split_rows(&ends).map_err(|e| Error::from_encoding(path, e))? {
                    pages.push((k, encode(k, piece, opts)?));
                }
            } else {
                pages.push((k, encode(k, leaf, opts)?));
            }
        }
    }
    Ok(EncodedJob { pages, zones })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_arrive_in_job_order_whatever_the_threads() {
        for threads in [1, 2, 3, 8] {
            let mut got = Vec::new();
            let jobs: Vec<u64> = (0..100).collect();
            let r: std::result::Result<(), ()> = run_ordered(
                jobs,
                threads,
                |j| {
                    // Uneven work so that jobs finish out of order.
                    std::thread::sleep(std::time::Duration::from_micros((j * 37) % 200));
                    j * 2
                },
                |r| {
                    got.push(r);
                    Ok(())
                },
            );
            assert!(r.is_ok());
            assert_eq!(got, (0..100).map(|j| j * 2).collect::<Vec<_>>());
        }
    }

    #[test]
    fn files_are_the_same_whatever_the_threads() {
        use std::sync::Arc;

        use arrow_array::{Int64Array, RecordBatch, StringArray};
        use arrow_schema::{DataType, Field, Schema};

        use crate::{FileVersion, FileWriter, WriterOptions};

        let n = 300_000usize;
        let ids = Int64Array::from_iter_values((0..n as i64).map(|i| i * 7919 % 1_000_003));
        let text: StringArray = (0..n).map(|i| Some(format!("row {i} of {} words", i % 977))).collect();
        let schema = Arc::new(Schema::new(vec![
            Field::new("id", DataType::Int64, false),
            Field::new("text", DataType::Utf8, true),
        ]));
        let batch = RecordBatch::try_new(schema.clone(), vec![Arc::new(ids), Arc::new(text)]).unwrap();
        let write = |threads: usize| {
            let opts = WriterOptions {
                version: FileVersion::V2_2,
                page_stats: true,
                cache_bytes_per_column: 1 << 20,
                threads,
                ..Default::default()
            };
            let mut w = FileWriter::try_new(Vec::new(), "t", schema.clone(), opts).unwrap();
            for start in (0..n).step_by(50_000) {
                w.write_batch(&batch.slice(start, 50_000)).unwrap();
            }
            w.finish().unwrap().0
        };
        let one = write(1);
        assert_eq!(one, write(2));
        assert_eq!(one, write(4));
    }

    #[test]
    fn a_sink_error_stops_the_run() {
        let mut seen = 0;
        let r = run_ordered(
            (0..1000).collect::<Vec<u32>>(),
            2,
            |j| j,
            |j| {
                seen += 1;
                if j == 10 {
                    Err("full disk")
                } else {
                    Ok(())
                }
            },
        );
        assert_eq!(r, Err("full disk"));
        assert_eq!(seen, 11);
    }
}
