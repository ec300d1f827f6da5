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
    m.add_function(wrap_pyfunction!(encode_row_ids, m)?)?;
    m.add_function(wrap_pyfunction!(decode_row_ids, m)?)?;
    Ok(())
}
