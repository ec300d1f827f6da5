//! Small helpers for fragment-level operations planned in Python
//! (`LanceFragment.merge_columns`): module functions of `lancelet._native` taking a `Dataset`.

use lancelet_dataset::user_ops::depth_first_ids;
use pyo3::prelude::*;

use crate::dataset::PyDataset;

/// The field ids of dataset `d`'s schema, depth-first (children after their parent), in
/// the order `LanceSchema.field_ids` lists them.
#[pyfunction]
fn dataset_field_ids(d: &Bound<'_, PyDataset>) -> Vec<i32> {
    depth_first_ids(&d.get().inner.manifest().fields)
}

pub fn init(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(dataset_field_ids, m)?)?;
    Ok(())
}
