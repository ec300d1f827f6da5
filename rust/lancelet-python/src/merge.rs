//! `merge_insert`: a module function of `lancelet._native.dataset` taking a `Dataset` (see
//! `python/lancelet/merge.py`); the join, the writes, the commit and its conflict retries
//! are `lancelet_dataset::modify::merge_insert`.

use arrow_array::{RecordBatch, RecordBatchIterator, RecordBatchReader};
use lancelet_dataset::commit::retry::RetryPolicy;
use lancelet_dataset::modify::merge_insert::{MergeInsertParams, MergeStats, SourceFn};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::sync::Arc;

use crate::dataset::{import_stream, pull_on_this_thread, retry_policy, wrap, PyDataset};
use crate::errors;
use crate::file::import_schema;
use crate::operations::transaction_dict;
use crate::options::py_options;
use crate::runtime::block_on;

py_options! {
    /// `merge_insert`'s keyword options: what it updates, inserts and deletes, its retries, its target bases.
    struct MergeInsertOptions {
        update: bool = false,
        /// Only matched rows where this SQL predicate holds are updated.
        update_condition: Option<String> = None,
        /// `when_matched_fail`: a matched row fails the merge.
        fail_on_match: bool = false,
        insert: bool = false,
        /// Delete target rows no source row matches.
        delete: bool = false,
        /// Only those of them matching this SQL predicate.
        delete_filter: Option<String> = None,
        conflict_retries: u32 = RetryPolicy::default().max_retries,
        /// Seconds after which no new attempt starts (None: no limit but the retries).
        retry_timeout: Option<f64> = None,
        /// Base names or paths new files go to.
        target_bases: Vec<String> = Vec::new(),
        target_all_bases: Option<bool> = None,
    }
}

impl MergeInsertOptions {
    fn params(self, py: Python<'_>, on: Vec<String>) -> PyResult<MergeInsertParams> {
        Ok(MergeInsertParams {
            update: self.update,
            update_condition: self.update_condition,
            fail_on_match: self.fail_on_match,
            insert: self.insert,
            delete: self.delete,
            delete_filter: self.delete_filter,
            retry: retry_policy(py, self.conflict_retries, self.retry_timeout)?,
            target_bases: self.target_bases,
            target_all_bases: self.target_all_bases,
            ..MergeInsertParams::new(on)
        })
    }
}

/// The source (any `__arrow_c_stream__` object) imported once without copying, as a
/// function that reads it again (a retry after a conflict does).
fn source_fn(py: Python<'_>, source: &Bound<'_, PyAny>) -> PyResult<Arc<SourceFn>> {
    let reader = import_stream(py, source)?;
    let schema = reader.schema();
    let batches: Vec<RecordBatch> = pull_on_this_thread(py, async move {
        reader
            .collect::<Result<Vec<_>, _>>()
            .map_err(lancelet_dataset::Error::from)
    })?;
    Ok(Arc::new(move || {
        let it = RecordBatchIterator::new(batches.clone().into_iter().map(Ok), schema.clone());
        Ok(Box::new(it) as Box<dyn RecordBatchReader + Send>)
    }))
}

/// The source and the parameters of a merge call.
fn prepare(
    py: Python<'_>,
    source: &Bound<'_, PyAny>,
    on: Vec<String>,
    options: MergeInsertOptions,
) -> PyResult<(Arc<SourceFn>, MergeInsertParams)> {
    Ok((source_fn(py, source)?, options.params(py, on)?))
}

fn stats_dict<'py>(py: Python<'py>, stats: &MergeStats) -> PyResult<Bound<'py, PyDict>> {
    let out = PyDict::new(py);
    out.set_item("num_inserted_rows", stats.num_inserted_rows)?;
    out.set_item("num_updated_rows", stats.num_updated_rows)?;
    out.set_item("num_deleted_rows", stats.num_deleted_rows)?;
    Ok(out)
}

/// Merges `source` (any `__arrow_c_stream__` object) into dataset `d` on the key columns
/// `on`: `(dataset at the new version, {"num_inserted_rows", "num_updated_rows",
/// "num_deleted_rows"})`.
#[pyfunction]
#[pyo3(signature = (d, source, on, options=MergeInsertOptions::default()))]
fn merge_insert<'py>(
    py: Python<'py>,
    d: &Bound<'py, PyDataset>,
    source: Bound<'py, PyAny>,
    on: Vec<String>,
    options: MergeInsertOptions,
) -> PyResult<(PyDataset, Bound<'py, PyDict>)> {
    let (open, params) = prepare(py, &source, on, options)?;
    let ds = d.get().inner.clone();
    let (ds, stats) = block_on(py, async move { ds.merge_insert(&params, open.as_ref()).await })?;
    Ok((wrap(ds), stats_dict(py, &stats)?))
}

/// The merge without its commit: `(transaction dict, counts)`; the files are written.
#[pyfunction]
#[pyo3(signature = (d, source, on, options=MergeInsertOptions::default()))]
fn merge_insert_uncommitted<'py>(
    py: Python<'py>,
    d: &Bound<'py, PyDataset>,
    source: Bound<'py, PyAny>,
    on: Vec<String>,
    options: MergeInsertOptions,
) -> PyResult<(Bound<'py, PyDict>, Bound<'py, PyDict>)> {
    let (open, params) = prepare(py, &source, on, options)?;
    let ds = d.get().inner.clone();
    let (txn, stats) = block_on(
        py,
        async move { ds.merge_insert_uncommitted(&params, open.as_ref()).await },
    )?;
    Ok((transaction_dict(py, &txn)?, stats_dict(py, &stats)?))
}

/// The merge's plan for a source of `schema` (the dataset's when None).
#[pyfunction]
#[pyo3(signature = (d, on, schema=None, verbose=false, options=MergeInsertOptions::default()))]
fn merge_insert_plan(
    py: Python<'_>,
    d: &Bound<'_, PyDataset>,
    on: Vec<String>,
    schema: Option<Bound<'_, PyAny>>,
    verbose: bool,
    options: MergeInsertOptions,
) -> PyResult<String> {
    let params = options.params(py, on)?;
    let schema = schema.map(|s| import_schema(py, &s)).transpose()?;
    d.get()
        .inner
        .merge_insert_plan(&params, schema.as_ref(), verbose)
        .map_err(|e| errors::to_py(py, e))
}

/// Runs the merge without committing it (its files removed again) and returns its plan
/// with what it did.
#[pyfunction]
#[pyo3(signature = (d, source, on, options=MergeInsertOptions::default()))]
fn merge_insert_analyze(
    py: Python<'_>,
    d: &Bound<'_, PyDataset>,
    source: Bound<'_, PyAny>,
    on: Vec<String>,
    options: MergeInsertOptions,
) -> PyResult<String> {
    let (open, params) = prepare(py, &source, on, options)?;
    let ds = d.get().inner.clone();
    block_on(py, async move { ds.merge_insert_analyze(&params, open.as_ref()).await })
}

pub fn init(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(merge_insert, m)?)?;
    m.add_function(wrap_pyfunction!(merge_insert_uncommitted, m)?)?;
    m.add_function(wrap_pyfunction!(merge_insert_plan, m)?)?;
    m.add_function(wrap_pyfunction!(merge_insert_analyze, m)?)?;
    Ok(())
}
