//! Index calls of `lancelet._native`: listing, dropping and (with `lancelet-index`)
//! building and describing secondary indexes of a dataset version.

use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::dataset::{wrap, PyDataset};
use crate::runtime::block_on;

/// Every index segment of the version, as dicts with pylance's `list_indices` keys plus
/// the details a `describe_indices` needs.
#[pyfunction]
fn list_indices<'py>(py: Python<'py>, ds: &PyDataset) -> PyResult<Vec<Bound<'py, PyDict>>> {
    let inner = ds.inner.clone();
    let segments = block_on(py, async move { inner.list_indices().await })?;
    segments
        .into_iter()
        .map(|s| {
            let d = PyDict::new(py);
            d.set_item("name", s.name)?;
            d.set_item("type", s.index_type)?;
            d.set_item("uuid", s.uuid)?;
            d.set_item("fields", s.fields)?;
            d.set_item("field_ids", s.field_ids)?;
            d.set_item("version", s.dataset_version)?;
            d.set_item("fragment_ids", s.fragment_ids)?;
            d.set_item("type_url", s.type_url)?;
            d.set_item("index_version", s.index_version)?;
            d.set_item("created_at", s.created_at)?;
            d.set_item("base_id", s.base_id)?;
            d.set_item("files", s.files)?;
            Ok(d)
        })
        .collect()
}

/// Drops index `name` (every segment), committing a new version.
#[pyfunction]
fn drop_index(py: Python<'_>, ds: &PyDataset, name: String) -> PyResult<PyDataset> {
    let inner = ds.inner.clone();
    Ok(wrap(block_on(py, async move { inner.drop_index(&name).await })?))
}

pub fn init(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(list_indices, m)?)?;
    m.add_function(wrap_pyfunction!(drop_index, m)?)?;
    Ok(())
}
