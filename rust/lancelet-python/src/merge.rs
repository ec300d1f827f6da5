//! `merge_insert`: a module function of `lancelet._native.dataset` taking a `Dataset` (see
//! `python/lancelet/merge.py`); the join, the writes, the commit and its conflict retries
//! are `lancelet_dataset::modify::merge_insert`.

use arrow_array::{RecordBatch, RecordBatchIterator, RecordBatchReader};
use lancelet_dataset::commit::retry::RetryPolicy;
use lancelet_dataset::modify::merge_insert::{MergeInsertParams, SourceFn};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::sync::Arc;

use crate::dataset::{import_stream, pull_on_this_thread, wrap, PyDataset};
use crate::options::py_options;
use crate::runtime::block_on;

py_options! {
    /// `merge_insert`'s keyword options: what it updates, inserts and deletes, its retries, its target bases.
    struct MergeInsertOptions {
        update: bool = false,
        /// Only matched rows where this SQL predicate holds are updated.
        update_condition: Option<String> = None,
        insert: bool = false,
        /// Delete target rows no source row matches.
        delete: bool = false,
        /// Only those of them matching this SQL predicate.
        delete_filter: Option<String> = None,
        conflict_retries: u32 = RetryPolicy::default().max_retries,
        /// Base names or paths new files go to.
        target_bases: Vec<String> = Vec::new(),
        target_all_bases: Option<bool> = None,
    }
}

/// Merges `source` (any `__arrow_c_stream__` object) into dataset `d` on the key columns
/// `on`: `(dataset at the new version, {"num_inserted_rows", "num_updated_rows",
/// "num_deleted_rows"})`. The source's batches are imported once without copying (a retry
/// after a conflict reads them again).
#[pyfunction]
#[pyo3(signature = (d, source, on, options=MergeInsertOptions::default()))]
fn merge_insert<'py>(
    py: Python<'py>,
    d: &Bound<'py, PyDataset>,
    source: Bound<'py, PyAny>,
    on: Vec<String>,
    options: MergeInsertOptions,
) -> PyResult<(PyDataset, Bound<'py, PyDict>)> {
    let reader = import_stream(py, &source)?;
    let schema = reader.schema();
    let batches: Vec<RecordBatch> = pull_on_this_thread(py, async move {
        reader
            .collect::<Result<Vec<_>, _>>()
            .map_err(lancelet_dataset::Error::from)
    })?;
    let open: Arc<SourceFn> = Arc::new(move || {
        let it = RecordBatchIterator::new(batches.clone().into_iter().map(Ok), schema.clone());
        Ok(Box::new(it) as Box<dyn RecordBatchReader + Send>)
    });
    let params = MergeInsertParams {
        update: options.update,
        update_condition: options.update_condition,
        insert: options.insert,
        delete: options.delete,
        delete_filter: options.delete_filter,
        retry: RetryPolicy::new(options.conflict_retries, None),
        target_bases: options.target_bases,
        target_all_bases: options.target_all_bases,
        ..MergeInsertParams::new(on)
    };
    let ds = d.get().inner.clone();
    let (ds, stats) = block_on(py, async move { ds.merge_insert(&params, open.as_ref()).await })?;
    let out = PyDict::new(py);
    out.set_item("num_inserted_rows", stats.num_inserted_rows)?;
    out.set_item("num_updated_rows", stats.num_updated_rows)?;
    out.set_item("num_deleted_rows", stats.num_deleted_rows)?;
    Ok((wrap(ds), out))
}

pub fn init(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(merge_insert, m)?)?;
    Ok(())
}
