//! SQL conditions over in-memory batches (merge-insert's `when_matched_update_all`
//! condition), evaluated by lancelet's SQL engine.

use arrow_array::{ArrayRef, RecordBatch, RecordBatchIterator};
use arrow_schema::{DataType, Field, Schema};
use pyo3::prelude::*;
use std::sync::Arc;

use crate::arrow_ffi::{import_batch, BatchStream, ErrorSlot};
use crate::errors;

/// The column paths a SQL condition reads, as written.
#[pyfunction]
fn condition_columns(py: Python<'_>, sql: &str) -> PyResult<Vec<Vec<String>>> {
    lancelet_dataset::modify::condition::condition_columns(sql).map_err(|e| errors::to_py(py, e))
}

/// Evaluates SQL condition `sql` on each row of record batch `batch`: a stream of one
/// batch with a boolean column `mask` (NULL counts as false).
#[pyfunction]
fn evaluate_condition(py: Python<'_>, batch: Bound<'_, PyAny>, sql: &str) -> PyResult<BatchStream> {
    let batch = import_batch(py, &batch)?;
    let mask = crate::runtime::block_on(py, async {
        lancelet_dataset::modify::condition::evaluate_condition(&batch, sql)
    })?;
    let schema = Arc::new(Schema::new(vec![Field::new("mask", DataType::Boolean, false)]));
    let out = RecordBatch::try_new(schema.clone(), vec![Arc::new(mask) as ArrayRef])
        .map_err(|e| errors::invalid(py, e.to_string()))?;
    let reader = RecordBatchIterator::new(vec![Ok(out)], schema);
    Ok(BatchStream::new(Box::new(reader), ErrorSlot::default()))
}

pub fn init(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(condition_columns, m)?)?;
    m.add_function(wrap_pyfunction!(evaluate_condition, m)?)?;
    Ok(())
}
