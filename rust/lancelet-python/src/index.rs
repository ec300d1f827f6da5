//! Index calls of `lancelet._native`: listing, dropping and (with `lancelet-index`)
//! building and describing secondary indexes of a dataset version.

use pyo3::prelude::*;
use pyo3::types::PyDict;

use lancelet_dataset::index::segments::SegmentRequest;

use crate::dataset::{wrap, PyDataset};
use crate::index_meta::{index_dict, index_list};
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
            d.set_item("covering_fields", s.covering_fields)?;
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

fn scalar_request(
    py: Python<'_>,
    column: String,
    index_type: String,
    name: Option<String>,
    replace: bool,
    params: Option<std::collections::HashMap<String, f64>>,
) -> PyResult<lancelet_dataset::index::build::ScalarIndexRequest> {
    let mut p = lancelet_dataset::indexes::scalar::ScalarParams::default();
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
    Ok(lancelet_dataset::index::build::ScalarIndexRequest {
        column,
        index_type,
        name,
        replace,
        params: p,
    })
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
    let req = scalar_request(py, column, index_type, name, replace, params)?;
    let inner = ds.inner.clone();
    Ok(wrap(block_on(
        py,
        async move { inner.create_scalar_index(&req).await },
    )?))
}

/// Builds one segment of a scalar index over `fragment_ids` without committing it
/// (`create_index_uncommitted`); returns its entry as an index dict.
#[pyfunction]
#[pyo3(signature = (ds, column, index_type, fragment_ids, name=None, replace=false, params=None))]
#[allow(
    clippy::too_many_arguments,
    reason = "one parameter per keyword argument of the Python call"
)]
fn build_scalar_segment<'py>(
    py: Python<'py>,
    ds: &PyDataset,
    column: String,
    index_type: String,
    fragment_ids: Vec<u64>,
    name: Option<String>,
    replace: bool,
    params: Option<std::collections::HashMap<String, f64>>,
) -> PyResult<Bound<'py, PyDict>> {
    let req = SegmentRequest::Scalar(scalar_request(py, column, index_type, name, replace, params)?);
    let inner = ds.inner.clone();
    let meta = block_on(py, async move { inner.build_index_segment(&req, fragment_ids).await })?;
    index_dict(py, &meta)
}

/// Merges index segments (index dicts) into a new one over the union of their fragments,
/// not committed (`merge_existing_index_segments`); returns its index dict.
#[pyfunction]
fn merge_index_segments<'py>(
    py: Python<'py>,
    ds: &PyDataset,
    segments: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyDict>> {
    let segs = index_list(segments)?;
    let inner = ds.inner.clone();
    let meta = block_on(py, async move { inner.merge_index_segments(&segs).await })?;
    index_dict(py, &meta)
}

/// Commits index segments (index dicts) as index `name` on `column`
/// (`commit_existing_index_segments`); returns the new version.
#[pyfunction]
fn commit_existing_index_segments(
    py: Python<'_>,
    ds: &PyDataset,
    name: String,
    column: String,
    segments: &Bound<'_, PyAny>,
) -> PyResult<PyDataset> {
    let segs = index_list(segments)?;
    let inner = ds.inner.clone();
    Ok(wrap(block_on(py, async move {
        inner.commit_existing_index_segments(&name, &column, segs).await
    })?))
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
    let opts = lancelet_dataset::index::build::OptimizeIndicesOptions {
        num_indices_to_merge,
        index_names,
    };
    let inner = ds.inner.clone();
    Ok(wrap(block_on(py, async move { inner.optimize_indices(&opts).await })?))
}

#[allow(
    clippy::too_many_arguments,
    reason = "one parameter per keyword argument of the Python call"
)]
fn vector_request(
    py: Python<'_>,
    column: String,
    index_type: String,
    name: Option<String>,
    metric: &str,
    replace: bool,
    num_partitions: Option<usize>,
    num_sub_vectors: Option<usize>,
    num_bits: u32,
    target_partition_size: Option<usize>,
    sample_rate: usize,
    max_iters: usize,
    ivf_centroids: Option<Vec<f32>>,
    pq_codebook: Option<Vec<f32>>,
) -> PyResult<lancelet_dataset::index::vector_build::VectorIndexRequest> {
    use lancelet_dataset::vector::ivf::{VectorBuildParams, VectorIndexType};
    let conv = |e: lancelet_dataset::indexes::Error| crate::errors::to_py(py, lancelet_dataset::Error::from(e));
    let kind = VectorIndexType::parse(&index_type).map_err(conv)?;
    let metric = lancelet_dataset::vector::Metric::parse(metric).map_err(conv)?;
    let mut params = VectorBuildParams::new(kind, metric);
    params.num_partitions = num_partitions;
    params.num_sub_vectors = num_sub_vectors;
    params.num_bits = num_bits;
    params.target_partition_size = target_partition_size;
    params.sample_rate = sample_rate;
    params.max_iters = max_iters;
    params.ivf_centroids = ivf_centroids;
    params.pq_codebook = pq_codebook;
    Ok(lancelet_dataset::index::vector_build::VectorIndexRequest {
        column,
        name,
        replace,
        params,
    })
}

/// Builds a vector index (IVF_FLAT, IVF_PQ, IVF_SQ) and commits it; returns the new version.
#[pyfunction]
#[pyo3(signature = (ds, column, index_type, name=None, metric="l2", replace=false, num_partitions=None,
    num_sub_vectors=None, num_bits=8, target_partition_size=None, sample_rate=256, max_iters=50,
    ivf_centroids=None, pq_codebook=None))]
#[allow(
    clippy::too_many_arguments,
    reason = "one parameter per keyword argument of the Python call"
)]
fn create_vector_index(
    py: Python<'_>,
    ds: &PyDataset,
    column: String,
    index_type: String,
    name: Option<String>,
    metric: &str,
    replace: bool,
    num_partitions: Option<usize>,
    num_sub_vectors: Option<usize>,
    num_bits: u32,
    target_partition_size: Option<usize>,
    sample_rate: usize,
    max_iters: usize,
    ivf_centroids: Option<Vec<f32>>,
    pq_codebook: Option<Vec<f32>>,
) -> PyResult<PyDataset> {
    let req = vector_request(
        py,
        column,
        index_type,
        name,
        metric,
        replace,
        num_partitions,
        num_sub_vectors,
        num_bits,
        target_partition_size,
        sample_rate,
        max_iters,
        ivf_centroids,
        pq_codebook,
    )?;
    let inner = ds.inner.clone();
    Ok(wrap(block_on(
        py,
        async move { inner.create_vector_index(&req).await },
    )?))
}

/// Builds one segment of a vector index over `fragment_ids` without committing it
/// (`create_index_uncommitted`); returns its entry as an index dict.
#[pyfunction]
#[pyo3(signature = (ds, column, index_type, fragment_ids, name=None, metric="l2", replace=false,
    num_partitions=None, num_sub_vectors=None, num_bits=8, target_partition_size=None, sample_rate=256,
    max_iters=50, ivf_centroids=None, pq_codebook=None))]
#[allow(
    clippy::too_many_arguments,
    reason = "one parameter per keyword argument of the Python call"
)]
fn build_vector_index_segment<'py>(
    py: Python<'py>,
    ds: &PyDataset,
    column: String,
    index_type: String,
    fragment_ids: Vec<u64>,
    name: Option<String>,
    metric: &str,
    replace: bool,
    num_partitions: Option<usize>,
    num_sub_vectors: Option<usize>,
    num_bits: u32,
    target_partition_size: Option<usize>,
    sample_rate: usize,
    max_iters: usize,
    ivf_centroids: Option<Vec<f32>>,
    pq_codebook: Option<Vec<f32>>,
) -> PyResult<Bound<'py, PyDict>> {
    let req = SegmentRequest::Vector(vector_request(
        py,
        column,
        index_type,
        name,
        metric,
        replace,
        num_partitions,
        num_sub_vectors,
        num_bits,
        target_partition_size,
        sample_rate,
        max_iters,
        ivf_centroids,
        pq_codebook,
    )?);
    let inner = ds.inner.clone();
    let meta = block_on(py, async move { inner.build_index_segment(&req, fragment_ids).await })?;
    index_dict(py, &meta)
}

/// Nearest-neighbour search; returns a stream of one batch.
#[pyfunction]
#[pyo3(signature = (ds, column, queries, batch=false, k=10, nprobes=None, refine_factor=None, metric=None,
    use_index=true, distance_range=None, columns=None, filter=None, prefilter=false, fast_search=false,
    with_row_id=false, ef=None))]
#[allow(
    clippy::too_many_arguments,
    reason = "one parameter per keyword argument of the Python call"
)]
fn nearest(
    py: Python<'_>,
    ds: &PyDataset,
    column: String,
    queries: Vec<Vec<f32>>,
    batch: bool,
    k: usize,
    nprobes: Option<usize>,
    refine_factor: Option<u32>,
    metric: Option<String>,
    use_index: bool,
    distance_range: Option<(Option<f32>, Option<f32>)>,
    columns: Option<Vec<String>>,
    filter: Option<String>,
    prefilter: bool,
    fast_search: bool,
    with_row_id: bool,
    ef: Option<usize>,
) -> PyResult<crate::arrow_ffi::BatchStream> {
    use lancelet_dataset::index::knn::{NearestOptions, NearestRequest};
    let req = NearestRequest {
        nearest: NearestOptions {
            column,
            queries,
            batch,
            k,
            nprobes,
            refine_factor,
            metric,
            use_index,
            distance_range,
            ef,
        },
        columns,
        filter,
        prefilter,
        fast_search,
        with_row_id,
    };
    let inner = ds.inner.clone();
    let out = block_on(py, async move { inner.nearest(&req).await })?;
    Ok(crate::dataset::one_batch(out))
}

/// Statistics of a vector index segment (partitions and their sizes), as JSON text.
#[pyfunction]
fn vector_index_statistics(py: Python<'_>, ds: &PyDataset, uuid: String) -> PyResult<String> {
    let inner = ds.inner.clone();
    block_on(py, async move { inner.vector_index_statistics(&uuid).await })
}

/// Statistics of a full-text index segment, as JSON text.
#[pyfunction]
fn fts_index_statistics(py: Python<'_>, ds: &PyDataset, uuid: String) -> PyResult<String> {
    let inner = ds.inner.clone();
    block_on(py, async move { inner.fts_index_statistics(&uuid).await })
}

fn vector_params(
    py: Python<'_>,
    index_type: &str,
    metric: &str,
    num_partitions: Option<usize>,
    num_sub_vectors: Option<usize>,
    num_bits: u32,
) -> PyResult<lancelet_dataset::vector::ivf::VectorBuildParams> {
    use lancelet_dataset::vector::ivf::{VectorBuildParams, VectorIndexType};
    let conv = |e: lancelet_dataset::indexes::Error| crate::errors::to_py(py, lancelet_dataset::Error::from(e));
    let kind = VectorIndexType::parse(index_type).map_err(conv)?;
    let metric = lancelet_dataset::vector::Metric::parse(metric).map_err(conv)?;
    let mut params = VectorBuildParams::new(kind, metric);
    params.num_partitions = num_partitions;
    params.num_sub_vectors = num_sub_vectors;
    params.num_bits = num_bits;
    Ok(params)
}

/// Trains a vector index model on a sample of `column` (for a distributed build); returns
/// its files as `[(name, bytes)]`.
#[pyfunction]
#[pyo3(signature = (ds, column, index_type, metric="l2", num_partitions=None, num_sub_vectors=None, num_bits=8,
    sample_rows=65536))]
#[allow(
    clippy::too_many_arguments,
    reason = "one parameter per keyword argument of the Python call"
)]
fn train_vector_model(
    py: Python<'_>,
    ds: &PyDataset,
    column: String,
    index_type: &str,
    metric: &str,
    num_partitions: Option<usize>,
    num_sub_vectors: Option<usize>,
    num_bits: u32,
    sample_rows: usize,
) -> PyResult<Vec<(String, Vec<u8>)>> {
    let params = vector_params(py, index_type, metric, num_partitions, num_sub_vectors, num_bits)?;
    let inner = ds.inner.clone();
    let files = block_on(py, async move {
        inner.train_vector_model(&column, &params, sample_rows).await
    })?;
    Ok(files.0)
}

/// Encodes the rows of `fragments` with a trained model into a new index segment (files
/// written, nothing committed); returns the segment's manifest entry as protobuf bytes.
#[pyfunction]
fn build_vector_segment(
    py: Python<'_>,
    ds: &PyDataset,
    column: String,
    name: String,
    model: Vec<(String, Vec<u8>)>,
    fragments: Vec<u64>,
) -> PyResult<Vec<u8>> {
    use prost::Message;
    let inner = ds.inner.clone();
    let model = lancelet_dataset::index::vector_build::ModelFiles(model);
    let meta = block_on(py, async move {
        inner.build_vector_segment(&column, &name, &model, fragments).await
    })?;
    Ok(meta.encode_to_vec())
}

/// Commits segments from [`build_vector_segment`] as index `name`.
#[pyfunction]
#[pyo3(signature = (ds, name, segments, replace=false))]
fn commit_index_segments(
    py: Python<'_>,
    ds: &PyDataset,
    name: String,
    segments: Vec<Vec<u8>>,
    replace: bool,
) -> PyResult<PyDataset> {
    use prost::Message;
    let metas = segments
        .iter()
        .map(|b| lancelet_dataset::table::pb::IndexMetadata::decode(b.as_slice()))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| crate::errors::invalid(py, format!("not an index segment: {e}")))?;
    let inner = ds.inner.clone();
    Ok(wrap(block_on(py, async move {
        inner.commit_index_segments(&name, metas, replace).await
    })?))
}

pub fn init(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(train_vector_model, m)?)?;
    m.add_function(wrap_pyfunction!(build_vector_segment, m)?)?;
    m.add_function(wrap_pyfunction!(commit_index_segments, m)?)?;
    m.add_function(wrap_pyfunction!(create_vector_index, m)?)?;
    m.add_function(wrap_pyfunction!(nearest, m)?)?;
    m.add_function(wrap_pyfunction!(vector_index_statistics, m)?)?;
    m.add_function(wrap_pyfunction!(optimize_indices, m)?)?;
    m.add_function(wrap_pyfunction!(create_scalar_index, m)?)?;
    m.add_function(wrap_pyfunction!(build_scalar_segment, m)?)?;
    m.add_function(wrap_pyfunction!(build_vector_index_segment, m)?)?;
    m.add_function(wrap_pyfunction!(merge_index_segments, m)?)?;
    m.add_function(wrap_pyfunction!(commit_existing_index_segments, m)?)?;
    m.add_function(wrap_pyfunction!(index_segment_statistics, m)?)?;
    m.add_function(wrap_pyfunction!(fts_index_statistics, m)?)?;
    m.add_function(wrap_pyfunction!(list_indices, m)?)?;
    m.add_function(wrap_pyfunction!(drop_index, m)?)?;
    Ok(())
}
