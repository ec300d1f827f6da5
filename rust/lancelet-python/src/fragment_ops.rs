//! Small helpers for fragment-level operations planned in Python
//! (`LanceFragment.merge_columns`): module functions of `lancelet._native.dataset` taking a
//! `Dataset`, and the row id sequences of `lancelet.fragment.RowIdSequence`.

use lancelet_dataset::commit::user_ops::depth_first_ids;
use pyo3::prelude::*;

use crate::dataset::PyDataset;
use crate::errors;

/// The field ids of dataset `d`'s schema, depth-first (children after their parent), in
/// the order `LanceSchema.field_ids` lists them.
#[pyfunction]
fn dataset_field_ids(d: &Bound<'_, PyDataset>) -> Vec<i32> {
    depth_first_ids(&d.get().inner.manifest().fields)
}

/// Dataset `d`'s schema as pylance prints it: one line (`LanceDataset.lance_schema`'s
/// repr), or indented (`lance.debug.format_schema`).
#[pyfunction]
#[pyo3(signature = (d, pretty=false))]
fn schema_debug(d: &Bound<'_, PyDataset>, pretty: bool) -> String {
    d.get().inner.schema_debug(pretty)
}

/// The manifest as pylance's `lance.debug.format_manifest` prints it.
#[pyfunction]
fn manifest_debug(d: &Bound<'_, PyDataset>) -> String {
    d.get().inner.manifest_debug()
}

/// Fragment `id` as pylance's `lance.debug.format_fragment` prints it (None: no such fragment).
#[pyfunction]
fn fragment_debug(d: &Bound<'_, PyDataset>, id: u64) -> Option<String> {
    d.get().inner.fragment_debug(id)
}

/// The last `max` transactions, newest first, as `lance.debug.list_transactions` prints them.
#[pyfunction]
fn transactions_debug(py: Python<'_>, d: &Bound<'_, PyDataset>, max: usize) -> PyResult<Vec<String>> {
    let ds = d.get().inner.clone();
    crate::runtime::block_on(py, async move { ds.transactions_debug(max).await })
}

/// A fragment's row ids as the bytes of a `RowIdSequence` (`ValueError` for an id given
/// twice).
#[pyfunction]
fn encode_row_ids<'py>(py: Python<'py>, ids: Vec<u64>) -> PyResult<Bound<'py, pyo3::types::PyBytes>> {
    let mut seen = std::collections::HashSet::with_capacity(ids.len());
    if let Some(dup) = ids.iter().find(|id| !seen.insert(**id)) {
        return Err(errors::invalid(
            py,
            format!("Row ids must be unique, but row id {dup} appears more than once"),
        ));
    }
    let bytes = lancelet_dataset::table::rowids::encode_row_ids(&ids);
    Ok(pyo3::types::PyBytes::new(py, &bytes))
}

/// The row ids a `RowIdSequence`'s bytes hold (`ValueError` when they do not decode).
#[pyfunction]
fn decode_row_ids(py: Python<'_>, data: Vec<u8>) -> PyResult<Vec<u64>> {
    let what = "row id sequence";
    let n =
        lancelet_dataset::table::rowids::row_id_count(&data, what).map_err(|e| errors::invalid(py, e.to_string()))?;
    lancelet_dataset::table::rowids::decode_row_ids(&data, n, what).map_err(|e| errors::invalid(py, e.to_string()))
}

pub fn init(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(dataset_field_ids, m)?)?;
    m.add_function(wrap_pyfunction!(schema_debug, m)?)?;
    m.add_function(wrap_pyfunction!(manifest_debug, m)?)?;
    m.add_function(wrap_pyfunction!(fragment_debug, m)?)?;
    m.add_function(wrap_pyfunction!(transactions_debug, m)?)?;
    m.add_function(wrap_pyfunction!(encode_row_ids, m)?)?;
    m.add_function(wrap_pyfunction!(decode_row_ids, m)?)?;
    Ok(())
}
