//! Blob reads for `lancelet.blob`: where rows' blobs live, and fetching byte ranges of
//! them (concurrently, with the GIL released).

use std::sync::Arc;

use lancelet_dataset::blob::BlobLocation;
use lancelet_io::IoStats;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::dataset::PyDataset;
use crate::runtime::block_on;

/// A blob's location as Python sees it: `(path, external, position, size)`.
type PyLocation = (String, bool, u64, u64);

/// The locations of the blobs of `column` at row `addresses` (`None` for null blobs).
#[pyfunction]
fn blob_locations(
    py: Python<'_>,
    ds: &Bound<'_, PyDataset>,
    column: String,
    addresses: Vec<u64>,
) -> PyResult<Vec<Option<PyLocation>>> {
    let ds = ds.get().inner.clone();
    let locs = block_on(py, async move { ds.blob_locations(&column, &addresses).await })?;
    Ok(locs
        .into_iter()
        .map(|l| l.map(|l| (l.path, l.external, l.position, l.size)))
        .collect())
}

/// A byte range of a blob: `(path, external, position, size, start, end)`.
type PyRangeRequest = (String, bool, u64, u64, u64, u64);

/// Reads every request's bytes from `ds`, concurrently, with the GIL released.
fn read_ranges<'py>(
    py: Python<'py>,
    ds: Arc<lancelet_dataset::Dataset>,
    requests: Vec<PyRangeRequest>,
) -> PyResult<Vec<Bound<'py, PyBytes>>> {
    let bufs = block_on(py, async move {
        futures::future::try_join_all(
            requests
                .into_iter()
                .map(|(path, external, position, size, start, end)| {
                    let ds = ds.clone();
                    async move {
                        let loc = BlobLocation {
                            path,
                            external,
                            position,
                            size,
                        };
                        ds.read_blob(&loc, start..end).await
                    }
                }),
        )
        .await
    })?;
    Ok(bufs.iter().map(|b| PyBytes::new(py, b.as_slice())).collect())
}

/// Reads, for each `(path, external, position, size, start, end)`, bytes `start..end` of
/// that blob; all requests run concurrently.
#[pyfunction]
fn read_blob_ranges<'py>(
    py: Python<'py>,
    ds: &Bound<'py, PyDataset>,
    requests: Vec<PyRangeRequest>,
) -> PyResult<Vec<Bound<'py, PyBytes>>> {
    read_ranges(py, ds.get().inner.clone(), requests)
}

/// As [`read_blob_ranges`], and also the `(bytes_read, read_requests)` the I/O layer
/// counted for these reads (what `BlobFile.bytes_read` adds up).
#[pyfunction]
fn read_blob_ranges_counted<'py>(
    py: Python<'py>,
    ds: &Bound<'py, PyDataset>,
    requests: Vec<PyRangeRequest>,
) -> PyResult<(Vec<Bound<'py, PyBytes>>, u64, u64)> {
    let stats = Arc::new(IoStats::default());
    let counted = Arc::new((*ds.get().inner).clone().with_io_stats(stats.clone()));
    let out = read_ranges(py, counted, requests)?;
    let (bytes_read, requests) = stats.snapshot();
    Ok((out, bytes_read, requests))
}

/// Registers the blob functions.
/// Lets the dataset (and versions opened from it) read external blobs outside its
/// registered base paths; returns the dataset.
#[pyfunction]
fn ds_allow_external_blobs(d: &Bound<'_, PyDataset>, allow: bool) -> PyDataset {
    crate::dataset::wrap(d.get().inner.as_ref().clone().allow_external_blobs_outside_bases(allow))
}

/// Whether the dataset reads external blobs outside its registered base paths.
#[pyfunction]
fn ds_external_blobs_allowed(d: &Bound<'_, PyDataset>) -> bool {
    d.get().inner.external_blobs_outside_bases_allowed()
}

pub fn init(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(ds_allow_external_blobs, m)?)?;
    m.add_function(wrap_pyfunction!(ds_external_blobs_allowed, m)?)?;
    m.add_function(wrap_pyfunction!(blob_locations, m)?)?;
    m.add_function(wrap_pyfunction!(read_blob_ranges, m)?)?;
    m.add_function(wrap_pyfunction!(read_blob_ranges_counted, m)?)?;
    Ok(())
}
