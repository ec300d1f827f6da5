//! Index calls of `lancelet._native.index`: listing, dropping and (with `lancelet-index`)
//! building and describing secondary indexes of a dataset version.

use pyo3::prelude::*;
use pyo3::types::PyDict;

use lancelet_dataset::index::knn::{NearestOptions, NearestRequest};
use lancelet_dataset::index::segments::SegmentRequest;
use lancelet_dataset::index::vector_build::VectorIndexRequest;
use lancelet_dataset::vector::ivf::{VectorBuildParams, VectorIndexType};

use crate::dataset::{wrap, PyDataset};
use crate::index_meta::{index_dict, index_list};
use crate::options::py_options;
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

py_options! {
    /// A scalar index build's keyword options: name, replace, and pylance's `IndexConfig` parameters.
    struct ScalarIndexOptions {
        name: Option<String> = None,
        replace: bool = false,
        params: Option<std::collections::HashMap<String, f64>> = None,
    }
}

impl ScalarIndexOptions {
    /// The build request for `column`, parameters checked.
    fn request(
        self,
        py: Python<'_>,
        column: String,
        index_type: String,
    ) -> PyResult<lancelet_dataset::index::build::ScalarIndexRequest> {
        let mut p = lancelet_dataset::indexes::scalar::ScalarParams::default();
        for (k, v) in self.params.unwrap_or_default() {
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
            name: self.name,
            replace: self.replace,
            params: p,
        })
    }
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
    let req = ScalarIndexOptions { name, replace, params }.request(py, column, index_type)?;
    let inner = ds.inner.clone();
    Ok(wrap(block_on(
        py,
        async move { inner.create_scalar_index(&req).await },
    )?))
}

/// Builds one segment of a scalar index over `fragment_ids` without committing it
/// (`create_index_uncommitted`); returns its entry as an index dict.
#[pyfunction]
#[pyo3(signature = (ds, column, index_type, fragment_ids, options=ScalarIndexOptions::default()))]
fn build_scalar_segment<'py>(
    py: Python<'py>,
    ds: &PyDataset,
    column: String,
    index_type: String,
    fragment_ids: Vec<u64>,
    options: ScalarIndexOptions,
) -> PyResult<Bound<'py, PyDict>> {
    let req = SegmentRequest::Scalar(options.request(py, column, index_type)?);
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

py_options! {
    /// A vector index build's (or training's) keyword options; missing ones are `VectorBuildParams::new`'s.
    struct VectorIndexOptions {
        name: Option<String> = None,
        metric: String = "l2".to_string(),
        replace: bool = false,
        num_partitions: Option<usize> = None,
        num_sub_vectors: Option<usize> = None,
        num_bits: Option<u32> = None,
        target_partition_size: Option<usize> = None,
        /// Training rows per centroid.
        sample_rate: Option<usize> = None,
        /// k-means iterations.
        max_iters: Option<usize> = None,
        /// Precomputed IVF centroids, row-major.
        ivf_centroids: Option<Vec<f32>> = None,
        /// A precomputed PQ codebook, row-major.
        pq_codebook: Option<Vec<f32>> = None,
    }
}

impl VectorIndexOptions {
    /// The build parameters of an `index_type` index, checked.
    fn params(&mut self, py: Python<'_>, index_type: &str) -> PyResult<VectorBuildParams> {
        let conv = |e: lancelet_dataset::indexes::Error| crate::errors::to_py(py, lancelet_dataset::Error::from(e));
        let kind = VectorIndexType::parse(index_type).map_err(conv)?;
        let metric = lancelet_dataset::vector::Metric::parse(&self.metric).map_err(conv)?;
        let mut params = VectorBuildParams::new(kind, metric);
        params.num_partitions = self.num_partitions;
        params.num_sub_vectors = self.num_sub_vectors;
        params.num_bits = self.num_bits.unwrap_or(params.num_bits);
        params.target_partition_size = self.target_partition_size;
        params.sample_rate = self.sample_rate.unwrap_or(params.sample_rate);
        params.max_iters = self.max_iters.unwrap_or(params.max_iters);
        params.ivf_centroids = self.ivf_centroids.take();
        params.pq_codebook = self.pq_codebook.take();
        Ok(params)
    }

    /// The request to build an `index_type` index on `column`.
    fn request(mut self, py: Python<'_>, column: String, index_type: &str) -> PyResult<VectorIndexRequest> {
        let params = self.params(py, index_type)?;
        Ok(VectorIndexRequest {
            column,
            name: self.name,
            replace: self.replace,
            params,
        })
    }
}

/// Builds a vector index (IVF_FLAT, IVF_PQ, IVF_SQ) and commits it; returns the new version.
#[pyfunction]
#[pyo3(signature = (ds, column, index_type, options=VectorIndexOptions::default()))]
fn create_vector_index(
    py: Python<'_>,
    ds: &PyDataset,
    column: String,
    index_type: String,
    options: VectorIndexOptions,
) -> PyResult<PyDataset> {
    let req = options.request(py, column, &index_type)?;
    let inner = ds.inner.clone();
    Ok(wrap(block_on(
        py,
        async move { inner.create_vector_index(&req).await },
    )?))
}

/// Builds one segment of a vector index over `fragment_ids` without committing it
/// (`create_index_uncommitted`); returns its entry as an index dict.
#[pyfunction]
#[pyo3(signature = (ds, column, index_type, fragment_ids, options=VectorIndexOptions::default()))]
fn build_vector_index_segment<'py>(
    py: Python<'py>,
    ds: &PyDataset,
    column: String,
    index_type: String,
    fragment_ids: Vec<u64>,
    options: VectorIndexOptions,
) -> PyResult<Bound<'py, PyDict>> {
    let req = SegmentRequest::Vector(options.request(py, column, &index_type)?);
    let inner = ds.inner.clone();
    let meta = block_on(py, async move { inner.build_index_segment(&req, fragment_ids).await })?;
    index_dict(py, &meta)
}

/// A nearest-neighbour search: pylance's `nearest` keys and the scan's own.
#[derive(FromPyObject)]
#[pyo3(from_item_all)]
pub(crate) struct NearestArgs {
    pub(crate) column: String,
    /// One or more query vectors.
    pub(crate) queries: Vec<Vec<f32>>,
    /// Whether the query was a 2-D array (adds `query_index`).
    #[pyo3(default)]
    pub(crate) batch: bool,
    #[pyo3(default = 10)]
    pub(crate) k: usize,
    #[pyo3(default)]
    pub(crate) nprobes: Option<usize>,
    #[pyo3(default)]
    pub(crate) refine_factor: Option<u32>,
    #[pyo3(default)]
    pub(crate) metric: Option<String>,
    #[pyo3(default = true)]
    pub(crate) use_index: bool,
    #[pyo3(default)]
    pub(crate) distance_range: Option<(Option<f32>, Option<f32>)>,
    #[pyo3(default)]
    pub(crate) columns: Option<Vec<String>>,
    #[pyo3(default)]
    pub(crate) filter: Option<String>,
    #[pyo3(default)]
    pub(crate) prefilter: bool,
    #[pyo3(default)]
    pub(crate) fast_search: bool,
    #[pyo3(default)]
    pub(crate) with_row_id: bool,
    #[pyo3(default)]
    pub(crate) ef: Option<usize>,
}

impl From<NearestArgs> for NearestRequest {
    fn from(a: NearestArgs) -> Self {
        NearestRequest {
            nearest: NearestOptions {
                column: a.column,
                queries: a.queries,
                batch: a.batch,
                k: a.k,
                nprobes: a.nprobes,
                refine_factor: a.refine_factor,
                metric: a.metric,
                use_index: a.use_index,
                distance_range: a.distance_range,
                ef: a.ef,
            },
            columns: a.columns,
            filter: a.filter,
            prefilter: a.prefilter,
            fast_search: a.fast_search,
            with_row_id: a.with_row_id,
        }
    }
}

/// Nearest-neighbour search; returns a stream of one batch.
#[pyfunction]
fn nearest(py: Python<'_>, ds: &PyDataset, search: NearestArgs) -> PyResult<crate::arrow_ffi::BatchStream> {
    let req = NearestRequest::from(search);
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

/// Trains a vector index model on a sample of `column` (for a distributed build); returns
/// its files as `[(name, bytes)]`.
#[pyfunction]
#[pyo3(signature = (ds, column, index_type, options=VectorIndexOptions::default(), sample_rows=65536))]
fn train_vector_model(
    py: Python<'_>,
    ds: &PyDataset,
    column: String,
    index_type: &str,
    mut options: VectorIndexOptions,
    sample_rows: usize,
) -> PyResult<Vec<(String, Vec<u8>)>> {
    let params = options.params(py, index_type)?;
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
