//! `merge` (new columns joined on a key): a module function of `lancelet._native.dataset`
//! taking a `Dataset`; the join, the writes and the commit are
//! `lancelet_dataset::evolve::merge_columns`.

use pyo3::prelude::*;

use crate::dataset::{import_stream, wrap, PyDataset};
use crate::runtime::block_on;

/// Adds the columns of `data` (any `__arrow_c_stream__` object) to dataset `d`, joined on
/// `left_on` = `right_on` (default `left_on`); returns the dataset at the new version. The
/// data is streamed once, on this thread (it may be a Python generator).
#[pyfunction]
#[pyo3(signature = (d, data, left_on, right_on=None))]
fn merge_columns(
    py: Python<'_>,
    d: &Bound<'_, PyDataset>,
    data: Bound<'_, PyAny>,
    left_on: String,
    right_on: Option<String>,
) -> PyResult<PyDataset> {
    let reader = import_stream(py, &data)?;
    let ds = d.get().inner.clone();
    let out = block_on(py, async move {
        ds.merge_columns(reader, &left_on, right_on.as_deref()).await
    })?;
    Ok(wrap(out))
}

pub fn init(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(merge_columns, m)?)?;
    Ok(())
}
