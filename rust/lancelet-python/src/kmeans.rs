//! `lancelet.util.KMeans`: k-means over float32 vectors, the clustering IVF indexes train
//! with (`lancelet_vector::kmeans`). Vectors cross as little-endian float32 bytes, row-major.

use pyo3::prelude::*;
use pyo3::types::PyBytes;

use lancelet_dataset::vector::kmeans::{self, KMeansParams};
use lancelet_dataset::vector::Metric;

use crate::errors;

fn floats(py: Python<'_>, bytes: &[u8], dim: usize) -> PyResult<Vec<f32>> {
    if dim == 0 || !bytes.len().is_multiple_of(4 * dim) {
        return Err(errors::invalid(
            py,
            format!("{} bytes are not float32 rows of dimension {dim}", bytes.len()),
        ));
    }
    Ok(bytes
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect())
}

fn metric(py: Python<'_>, name: &str) -> PyResult<Metric> {
    match name.to_ascii_lowercase().as_str() {
        "l2" | "euclidean" => Ok(Metric::L2),
        "cosine" => Ok(Metric::Cosine),
        "dot" => Ok(Metric::Dot),
        other => Err(errors::invalid(py, format!("Invalid metric_type: {other}"))),
    }
}

/// Trains `k` centroids on the rows of `data`; returns them as float32 bytes.
#[pyfunction]
#[pyo3(signature = (data, dim, k, metric_type, max_iters=50, seed=42))]
fn kmeans_fit<'py>(
    py: Python<'py>,
    data: &[u8],
    dim: usize,
    k: usize,
    metric_type: &str,
    max_iters: usize,
    seed: u64,
) -> PyResult<Bound<'py, PyBytes>> {
    let rows = floats(py, data, dim)?;
    let params = KMeansParams {
        max_iters,
        seed,
        metric: metric(py, metric_type)?,
        ..KMeansParams::new(k)
    };
    let model = py
        .detach(|| kmeans::train(&rows, dim, &params))
        .map_err(|e| errors::to_py(py, lancelet_dataset::Error::from(e)))?;
    let out: Vec<u8> = model.centroids.iter().flat_map(|x| x.to_le_bytes()).collect();
    Ok(PyBytes::new(py, &out))
}

/// The nearest of `centroids` to each row of `data` (both normalised first for cosine).
#[pyfunction]
fn kmeans_predict(py: Python<'_>, centroids: &[u8], data: &[u8], dim: usize, metric_type: &str) -> PyResult<Vec<u32>> {
    let mut centroids = floats(py, centroids, dim)?;
    let mut rows = floats(py, data, dim)?;
    let metric = metric(py, metric_type)?;
    Ok(py.detach(|| {
        if metric == Metric::Cosine {
            // On unit vectors the L2 order is the cosine order.
            lancelet_dataset::vector::distance::normalize_rows(&mut rows, dim);
            lancelet_dataset::vector::distance::normalize_rows(&mut centroids, dim);
        }
        let model = kmeans::KMeans {
            centroids,
            dim,
            loss: 0.0,
            metric,
        };
        model.assign(&rows)
    }))
}

pub fn init(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(kmeans_fit, m)?)?;
    m.add_function(wrap_pyfunction!(kmeans_predict, m)?)?;
    Ok(())
}
