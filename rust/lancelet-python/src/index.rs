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

/// Builds a scalar index and commits it; returns the new version. `params` holds
/// pylance's `IndexConfig` parameters (`zone_size`, `rows_per_zone`, `number_of_items`,
/// `probability`).
#[pyfunction]
#[pyo3(signature = (ds, column, index_type, name=None, replace=true, params=None))]
fn create_scalar_index(
    py: Python<'_>,
    ds: &PyDataset,
    column: String,
    index_type: String,
    name: Option<String>,
    replace: bool,
    params: Option<std::collections::HashMap<String, f64>>,
) -> PyResult<PyDataset> {
    let mut p = lancelet_index::scalar::ScalarParams::default();
    for (k, v) in params.unwrap_or_default() {
        let bad = || crate::errors::invalid(py, format!("index parameter {k} must be positive, got {v}"));
        match k.as_str() {
            "zone_size" | "batch_size" if v >= 1.0 => p.btree_batch_size = v as u64,
            "rows_per_zone" if v >= 1.0 => p.rows_per_zone = v as u64,
            "number_of_items" if v >= 1.0 => p.bloom_number_of_items = v as u64,
            "probability" => p.bloom_probability = v,
            "zone_size" | "batch_size" | "rows_per_zone" | "number_of_items" => return Err(bad()),
            other => {
                return Err(crate::errors::invalid(py, format!("unknown index parameter {other:?}")));
            }
        }
    }
    let req = lancelet_dataset::index_build::ScalarIndexRequest {
        column,
        index_type,
        name,
        replace,
        params: p,
    };
    let inner = ds.inner.clone();
    Ok(wrap(block_on(
        py,
        async move { inner.create_scalar_index(&req).await },
    )?))
}

/// Statistics of one scalar index segment (pylance's per-segment `index_statistics`).
#[pyfunction]
fn index_segment_statistics(
    py: Python<'_>,
    ds: &PyDataset,
    uuid: String,
) -> PyResult<std::collections::BTreeMap<String, String>> {
    let inner = ds.inner.clone();
    block_on(py, async move { inner.index_segment_statistics(&uuid).await })
}

/// Adds delta segments (`num_indices_to_merge=0`) or rebuilds indexes over every fragment.
#[pyfunction]
#[pyo3(signature = (ds, num_indices_to_merge=None, index_names=None))]
fn optimize_indices(
    py: Python<'_>,
    ds: &PyDataset,
    num_indices_to_merge: Option<usize>,
    index_names: Option<Vec<String>>,
) -> PyResult<PyDataset> {
    let opts = lancelet_dataset::index_build::OptimizeIndicesOptions {
        num_indices_to_merge,
        index_names,
    };
    let inner = ds.inner.clone();
    Ok(wrap(block_on(py, async move { inner.optimize_indices(&opts).await })?))
}

pub fn init(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(optimize_indices, m)?)?;
    m.add_function(wrap_pyfunction!(create_scalar_index, m)?)?;
    m.add_function(wrap_pyfunction!(index_segment_statistics, m)?)?;
    m.add_function(wrap_pyfunction!(list_indices, m)?)?;
    m.add_function(wrap_pyfunction!(drop_index, m)?)?;
    Ok(())
}
