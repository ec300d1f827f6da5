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

/// Reads, for each `(path, external, position, size, start, end)`, bytes `start..end` of
/// that blob; all requests run concurrently.
#[pyfunction]
fn read_blob_ranges<'py>(
    py: Python<'py>,
    ds: &Bound<'py, PyDataset>,
    requests: Vec<(String, bool, u64, u64, u64, u64)>,
) -> PyResult<Vec<Bound<'py, PyBytes>>> {
    let ds = ds.get().inner.clone();
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

/// As [`read_blob_ranges`], and also the `(bytes_read, read_requests)` the I/O layer
/// counted for these reads (what `BlobFile.bytes_read` adds up).
#[pyfunction]
fn read_blob_ranges_counted<'py>(
    py: Python<'py>,
    ds: &Bound<'py, PyDataset>,
    requests: Vec<(String, bool, u64, u64, u64, u64)>,
) -> PyResult<(Vec<Bound<'py, PyBytes>>, u64, u64)> {
    let stats = Arc::new(IoStats::default());
    let counted = Arc::new((*ds.get().inner).clone().with_io_stats(stats.clone()));
    let bufs = block_on(py, async move {
        futures::future::try_join_all(
            requests
                .into_iter()
                .map(|(path, external, position, size, start, end)| {
                    let ds = counted.clone();
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
    let (bytes_read, requests) = stats.snapshot();
    let out = bufs.iter().map(|b| PyBytes::new(py, b.as_slice())).collect();
    Ok((out, bytes_read, requests))
}

/// Registers the blob functions.
pub fn init(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(blob_locations, m)?)?;
    m.add_function(wrap_pyfunction!(read_blob_ranges, m)?)?;
    m.add_function(wrap_pyfunction!(read_blob_ranges_counted, m)?)?;
    Ok(())
}
