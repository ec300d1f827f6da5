//! The "as of" version search (`lancelet.dataset(uri, asof=...)`): a module function of
//! `lancelet._native.dataset`; the search is `lancelet_dataset::table::asof`.

use pyo3::prelude::*;

use crate::dataset::PyDataset;
use crate::runtime::block_on;

/// The newest version of `d`'s dataset committed before `cutoff_micros` (microseconds
/// since the Unix epoch, compared as pylance 14 compares), or `None`.
#[pyfunction]
fn version_asof(py: Python<'_>, d: &Bound<'_, PyDataset>, cutoff_micros: i64) -> PyResult<Option<u64>> {
    let ds = d.get().inner.clone();
    block_on(py, async move {
        lancelet_dataset::table::asof::version_asof(ds.store().as_ref(), cutoff_micros)
            .await
            .map_err(lancelet_dataset::Error::from)
    })
}

pub fn init(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(version_asof, m)?)?;
    Ok(())
}
