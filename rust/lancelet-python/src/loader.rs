//! Training reads: the rows a loader draws from, the batches of an epoch, and a stream that
//! reads batches ahead on the runtime (GIL released) for one worker of one rank.

use std::collections::VecDeque;
use std::ops::Range;
use std::sync::Arc;

use arrow_array::RecordBatch;
use arrow_schema::ArrowError;
use futures::FutureExt;
use pyo3::prelude::*;

use lancelet_dataset::loader::plan::{self, PlanOptions, RankPlan, SamplerOptions, Shuffle};
use lancelet_dataset::loader::BatchColumns;
use lancelet_dataset::scan::readahead::Readahead;
use lancelet_dataset::{Dataset, Error as CoreError};

use crate::arrow_ffi::{stream_error, BatchStream, ErrorSlot, FnReader};
use crate::dataset::PyDataset;
use crate::errors::to_py;
use crate::options::py_options;
use crate::runtime::{block_on, wait_task};

/// The rows a loader draws from: the addresses of the live rows its filter keeps, listed
/// once per job at the dataset's pinned version.
#[pyclass(module = "lancelet._native.loader", name = "LoaderRows", frozen)]
pub struct LoaderRows {
    ds: Arc<Dataset>,
    rows: Arc<Vec<u64>>,
}

/// Batches of row addresses, each ascending, ready to read.
#[pyclass(module = "lancelet._native.loader", name = "LoaderBatches", frozen)]
pub struct LoaderBatches {
    ds: Arc<Dataset>,
    batches: Arc<Vec<Vec<u64>>>,
}

/// An epoch's plan as the loader passes it: `(batch_size, shuffle, clump_size, seed,
/// epoch, rank, world_size, drop_last, even_batches)`.
type PlanArgs = (usize, String, usize, u64, u64, usize, usize, bool, bool);

fn plan_options(py: Python<'_>, a: PlanArgs) -> PyResult<PlanOptions> {
    let (batch_size, shuffle, clump_size, seed, epoch, rank, world_size, drop_last, even_batches) = a;
    Ok(PlanOptions {
        batch_size,
        shuffle: Shuffle::parse(&shuffle, clump_size).map_err(|e| to_py(py, e))?,
        seed,
        epoch,
        rank,
        world_size,
        drop_last,
        even_batches,
    })
}

/// pylance's sharded samplers' options: `(rank, world_size, batch_size, randomize, seed,
/// epoch)`.
type SamplerArgs = (usize, usize, usize, bool, u64, u64);

fn invalid(py: Python<'_>, message: String) -> PyErr {
    to_py(py, CoreError::InvalidArgument(message))
}

impl LoaderRows {
    fn batches(&self, batches: Vec<Vec<u64>>) -> LoaderBatches {
        LoaderBatches {
            ds: self.ds.clone(),
            batches: Arc::new(batches),
        }
    }

    /// The addresses at positions `ranges` of the row list.
    fn at(&self, py: Python<'_>, ranges: &[Range<u64>]) -> PyResult<Vec<u64>> {
        let n = self.rows.len() as u64;
        let mut out = Vec::new();
        for r in ranges {
            if r.end > n || r.start > r.end {
                return Err(invalid(
                    py,
                    format!("rows {}..{} are outside the {n} rows", r.start, r.end),
                ));
            }
            out.extend_from_slice(&self.rows[r.start as usize..r.end as usize]);
        }
        Ok(out)
    }
}

#[pymethods]
impl LoaderRows {
    /// Lists the live rows of `ds` that `filter` keeps (all of them without a filter).
    #[staticmethod]
    #[pyo3(signature = (ds, filter=None))]
    fn scan(py: Python<'_>, ds: &PyDataset, filter: Option<String>) -> PyResult<Self> {
        let inner = ds.inner.clone();
        let rows = block_on(py, async move { inner.loader_rows(filter.as_deref()).await })?;
        Ok(Self {
            ds: ds.inner.clone(),
            rows: Arc::new(rows),
        })
    }

    fn __len__(&self) -> usize {
        self.rows.len()
    }

    /// The batches a rank reads in an epoch, `plan` as [`PlanArgs`] (see the dataset
    /// crate's `loader::plan`).
    fn epoch(&self, py: Python<'_>, plan: PlanArgs) -> PyResult<LoaderBatches> {
        let opts = plan_options(py, plan)?;
        let rows = self.rows.clone();
        let plan = py
            .detach(move || RankPlan::new(&rows, &opts))
            .map_err(|e| to_py(py, e))?;
        Ok(self.batches((0..plan.num_batches()).map(|i| plan.batch(i)).collect()))
    }

    /// How many batches `epoch(plan)` gives, without planning it.
    fn count(&self, py: Python<'_>, plan: PlanArgs) -> PyResult<usize> {
        RankPlan::count_batches(self.rows.len(), &plan_options(py, plan)?).map_err(|e| to_py(py, e))
    }

    /// Batches made of positions of the row list: each batch a list of `(start, end)`.
    fn positions(&self, py: Python<'_>, batches: Vec<Vec<(u64, u64)>>) -> PyResult<LoaderBatches> {
        let mut out = Vec::with_capacity(batches.len());
        for b in batches {
            let ranges: Vec<Range<u64>> = b.into_iter().map(|(s, e)| s..e).collect();
            out.push(self.at(py, &ranges)?);
        }
        Ok(self.batches(out))
    }

    /// Every `world_size`-th row from the `rank`-th, in batches (`sharding` as
    /// [`SamplerArgs`]).
    fn strided(&self, py: Python<'_>, sharding: SamplerArgs) -> PyResult<LoaderBatches> {
        let batches = plan::strided_batches(&self.rows, &sharding.into()).map_err(|e| to_py(py, e))?;
        Ok(self.batches(batches))
    }

    /// `min(n, rows)` distinct rows drawn from `seed` in at most `max_takes` runs (when `n`
    /// exceeds it), in batches of `batch_size`.
    fn sample(&self, py: Python<'_>, n: u64, max_takes: u64, seed: u64, batch_size: usize) -> PyResult<LoaderBatches> {
        if batch_size == 0 {
            return Err(invalid(py, "batch_size must be at least 1".into()));
        }
        let runs = plan::sample_runs(self.rows.len() as u64, n, max_takes, seed);
        let picked = self.at(py, &runs)?;
        Ok(self.batches(picked.chunks(batch_size).map(<[u64]>::to_vec).collect()))
    }
}

py_options! {
    /// `LoaderBatches.read`'s keyword options: the columns (names or `exprs`) and which batches, how far ahead.
    struct ReadOptions {
        /// Column names (blob columns come back as bytes).
        columns: Option<Vec<String>> = None,
        /// `(name, SQL expression)` pairs instead of names.
        exprs: Option<Vec<(String, String)>> = None,
        with_row_id: bool = false,
        /// The first batch read.
        start: usize = 0,
        /// Read every `step`-th batch from `start`.
        step: usize = 1,
        /// Batches in flight at once (on an object store, at least two windows of
        /// consecutive batches: see the dataset crate's `loader`).
        readahead: usize = 4,
    }
}

#[pymethods]
impl LoaderBatches {
    fn __len__(&self) -> usize {
        self.batches.len()
    }

    /// How many rows batch `i` holds.
    fn rows_in(&self, i: usize) -> usize {
        self.batches.get(i).map_or(0, Vec::len)
    }

    /// Reads batches `start, start + step, ...` with `readahead` of them in flight.
    #[pyo3(signature = (options=ReadOptions::default()))]
    fn read(&self, py: Python<'_>, options: ReadOptions) -> PyResult<BatchStream> {
        let ReadOptions {
            columns,
            exprs,
            with_row_id,
            start,
            step,
            readahead,
        } = options;
        if step == 0 {
            return Err(invalid(py, "step must be at least 1".into()));
        }
        let cols = BatchColumns {
            names: columns,
            exprs,
            with_row_id,
        };
        let ds = self.ds.clone();
        let reader = Arc::new(block_on(py, async move { ds.batch_reader(cols).await })?);
        let schema = lancelet_dataset::json::text_schema(reader.schema());
        let picked: Arc<Vec<usize>> = Arc::new((start..self.batches.len()).step_by(step).collect());
        let batches = self.batches.clone();
        // The dataset crate decides how the batches are grouped into reads (windows of
        // consecutive batches on an object store) and how many are in flight.
        let plan = {
            let (reader, batches, picked) = (reader.clone(), batches.clone(), picked.clone());
            block_on(py, async move {
                let refs: Vec<&[u64]> = picked.iter().map(|&at| batches[at].as_slice()).collect();
                reader.plan_reads(&refs, readahead).await
            })?
        };
        let windows = Arc::new(plan.windows);
        let mut ready: VecDeque<RecordBatch> = plan.first.into_iter().collect();
        let mut ahead: Readahead<Vec<RecordBatch>, CoreError> =
            Readahead::new(windows.len(), plan.in_flight, crate::runtime::handle, move |w| {
                let (reader, batches, picked, window) =
                    (reader.clone(), batches.clone(), picked.clone(), windows[w].clone());
                async move {
                    let refs: Vec<&[u64]> = picked[window].iter().map(|&at| batches[at].as_slice()).collect();
                    reader.read_window(&refs).await
                }
                .boxed()
            });
        let slot = ErrorSlot::default();
        let err_slot = slot.clone();
        let next = move || -> Option<Result<RecordBatch, ArrowError>> {
            // Keep the windows after the ones read in flight while batches are handed out.
            if let Err(e) = ahead.prefetch() {
                return Some(Err(ArrowError::ExternalError(Box::new(e))));
            }
            if ready.is_empty() {
                let task = match ahead.next_task()? {
                    Ok(t) => t,
                    Err(e) => return Some(Err(ArrowError::ExternalError(Box::new(e)))),
                };
                match wait_task(&err_slot, task, CoreError::from) {
                    Ok(window) => ready.extend(window),
                    Err(e) => return Some(Err(e)),
                }
            }
            let batch = ready.pop_front()?;
            Some(lancelet_dataset::json::text_batch(batch).map_err(|e| stream_error(&err_slot, e)))
        };
        Ok(BatchStream::new(Box::new(FnReader { schema, next }), slot))
    }
}

/// The `(start, end)` index ranges of a sharded sampler's batches over `0..total`:
/// `kind` `"fixed"` (pylance's `ShardedFixedBatchSampler`) or `"interleaved"`
/// (`ShardedBatchSampler` without a filter); `sharding` as [`SamplerArgs`].
#[pyfunction]
fn sampler_ranges(py: Python<'_>, kind: &str, sharding: SamplerArgs, total: u64) -> PyResult<Vec<(u64, u64)>> {
    let o: SamplerOptions = sharding.into();
    let b = match kind {
        "fixed" => plan::fixed_batches(&o, total),
        "interleaved" => plan::interleaved_batches(&o, total),
        other => return Err(invalid(py, format!("no sampler kind {other:?}"))),
    }
    .map_err(|e| to_py(py, e))?;
    Ok(b.into_iter().map(|r| (r.start, r.end)).collect())
}

/// A permutation of `0..n` drawn from `(seed, epoch)` (a fragment order, say).
#[pyfunction]
fn permutation(n: usize, seed: u64, epoch: u64) -> Vec<usize> {
    let mut out: Vec<usize> = (0..n).collect();
    plan::epoch_rng(seed, epoch).shuffle(&mut out);
    out
}

pub fn init(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<LoaderRows>()?;
    m.add_class::<LoaderBatches>()?;
    m.add_function(wrap_pyfunction!(sampler_ranges, m)?)?;
    m.add_function(wrap_pyfunction!(permutation, m)?)?;
    Ok(())
}
