//! Full-text search: building INVERTED indexes, searching them, and the analyzer.

use pyo3::prelude::*;

use lancelet_dataset::fulltext::FtsQuery;
use lancelet_dataset::index::fts::{FtsIndexParams, FullTextRequest};
use lancelet_dataset::index::progress::ProgressSink;
use lancelet_dataset::Error as CoreError;

use crate::dataset::{wrap, PyDataset};
use crate::errors::to_py;
use crate::index::NearestArgs;
use crate::options::py_options;
use crate::runtime::block_on;

fn json(py: Python<'_>, text: &str, what: &str) -> PyResult<serde_json::Value> {
    serde_json::from_str(text)
        .map_err(|e| to_py(py, CoreError::InvalidArgument(format!("{what} is not valid JSON: {e}"))))
}

/// Builds a full-text (INVERTED) index on `column` and commits it. `params` is a JSON
/// object of pylance's keyword arguments; `progress` is called with each progress event's
/// `(event, stage, completed, total, unit)`.
#[pyfunction]
#[pyo3(signature = (ds, column, params, name=None, replace=true, progress=None))]
fn create_fts_index(
    py: Python<'_>,
    ds: &PyDataset,
    column: String,
    params: String,
    name: Option<String>,
    replace: bool,
    progress: Option<Py<PyAny>>,
) -> PyResult<PyDataset> {
    let mut p =
        FtsIndexParams::from_user_json(&json(py, &params, "the index parameters")?).map_err(|e| to_py(py, e))?;
    p.progress = progress.map(|cb| {
        ProgressSink::new(move |e| {
            Python::attach(|py| {
                // A failing callback does not stop the build.
                let _ = cb.call1(py, (e.event, e.stage, e.completed, e.total, e.unit));
            });
        })
    });
    let inner = ds.inner.clone();
    Ok(wrap(block_on(py, async move {
        inner.create_fts_index(&column, name, replace, &p).await
    })?))
}

/// Builds one full-text segment over `fragment_ids` without committing it
/// (`create_index_uncommitted(column, "INVERTED", fragment_ids=...)`); returns its index dict.
#[pyfunction]
#[pyo3(signature = (ds, column, fragment_ids, params, name=None, replace=false))]
fn build_fts_segment<'py>(
    py: Python<'py>,
    ds: &PyDataset,
    column: String,
    fragment_ids: Vec<u64>,
    params: String,
    name: Option<String>,
    replace: bool,
) -> PyResult<Bound<'py, pyo3::types::PyDict>> {
    use lancelet_dataset::index::segments::SegmentRequest;
    let p = FtsIndexParams::from_user_json(&json(py, &params, "the index parameters")?).map_err(|e| to_py(py, e))?;
    let req = SegmentRequest::FullText {
        column,
        name,
        replace,
        params: p,
    };
    let inner = ds.inner.clone();
    let meta = block_on(py, async move { inner.build_index_segment(&req, fragment_ids).await })?;
    crate::index_meta::index_dict(py, &meta)
}

/// One part of pylance's distributed full-text build (`create_scalar_index(column,
/// "INVERTED", index_uuid=..., fragment_ids=...)`): staged under the index's directory.
#[pyfunction]
fn stage_fts_part(
    py: Python<'_>,
    ds: &PyDataset,
    column: String,
    params: String,
    index_uuid: String,
    fragment_ids: Vec<u64>,
) -> PyResult<()> {
    let p = FtsIndexParams::from_user_json(&json(py, &params, "the index parameters")?).map_err(|e| to_py(py, e))?;
    let inner = ds.inner.clone();
    block_on(py, async move {
        inner.stage_fts_part(&column, &p, &index_uuid, fragment_ids).await
    })
}

/// `merge_index_metadata(index_uuid, "INVERTED")`: the staged parts become one index.
#[pyfunction]
fn merge_fts_parts(py: Python<'_>, ds: &PyDataset, index_uuid: String) -> PyResult<()> {
    let inner = ds.inner.clone();
    block_on(py, async move { inner.merge_fts_parts(&index_uuid).await })
}

/// A full-text search: the query's JSON form (see `lancelet.query`) and the scan's keyword options.
#[derive(FromPyObject)]
#[pyo3(from_item_all)]
struct FullTextArgs {
    query: String,
    #[pyo3(default)]
    columns: Option<Vec<String>>,
    #[pyo3(default)]
    filter: Option<String>,
    #[pyo3(default)]
    prefilter: bool,
    #[pyo3(default)]
    limit: Option<u64>,
    #[pyo3(default)]
    offset: u64,
    #[pyo3(default)]
    fast_search: bool,
    #[pyo3(default)]
    with_row_id: bool,
}

/// Runs a full-text search.
#[pyfunction]
fn full_text_search(py: Python<'_>, ds: &PyDataset, search: FullTextArgs) -> PyResult<crate::arrow_ffi::BatchStream> {
    let q = FtsQuery::from_json(&json(py, &search.query, "the full-text query")?)
        .map_err(|e| to_py(py, CoreError::from(e)))?;
    let req = FullTextRequest {
        query: q,
        columns: search.columns,
        filter: search.filter,
        prefilter: search.prefilter,
        limit: search.limit,
        offset: search.offset,
        fast_search: search.fast_search,
        with_row_id: search.with_row_id,
    };
    let inner = ds.inner.clone();
    let out = block_on(py, async move { inner.full_text_search(&req).await })?;
    Ok(crate::dataset::one_batch(out))
}

py_options! {
    /// A hybrid search's keyword options: the fused rows' window and the fusion (rrf or linear).
    struct FusionOptions {
        limit: Option<u64> = None,
        offset: u64 = 0,
        /// "rrf" (the default), with `rrf_k`, or "linear", with `weight`.
        fusion: Option<String> = None,
        rrf_k: f32 = 60.0,
        weight: f32 = 0.7,
    }
}

/// Hybrid search: one query vector (`nearest`, not a batch) and a full-text query (its
/// JSON form), fused as `options` says.
#[pyfunction]
#[pyo3(signature = (ds, nearest, text_query, options=FusionOptions::default()))]
fn hybrid_search(
    py: Python<'_>,
    ds: &PyDataset,
    nearest: NearestArgs,
    text_query: String,
    options: FusionOptions,
) -> PyResult<crate::arrow_ffi::BatchStream> {
    use lancelet_dataset::index::hybrid::{Fusion, HybridRequest};
    use lancelet_dataset::index::knn::NearestRequest;
    let q = FtsQuery::from_json(&json(py, &text_query, "the full-text query")?)
        .map_err(|e| to_py(py, CoreError::from(e)))?;
    let fusion = Fusion::parse(
        options.fusion.as_deref().unwrap_or("rrf"),
        options.rrf_k,
        options.weight,
    )
    .map_err(|e| to_py(py, e))?;
    let mut nearest = NearestRequest::from(nearest);
    nearest.nearest.batch = false;
    let fast_search = nearest.fast_search;
    let req = HybridRequest {
        nearest,
        text: FullTextRequest {
            query: q,
            columns: None,
            filter: None,
            prefilter: false,
            limit: None,
            offset: 0,
            fast_search,
            with_row_id: false,
        },
        fusion,
        limit: options.limit,
        offset: options.offset,
    };
    let inner = ds.inner.clone();
    let out = block_on(py, async move { inner.hybrid_search(&req).await })?;
    Ok(crate::dataset::one_batch(out))
}

/// The tokens an INVERTED index with these parameters (a JSON object of pylance's keyword
/// arguments) makes of `text`.
#[pyfunction]
fn tokenize(py: Python<'_>, params: String, text: String) -> PyResult<Vec<String>> {
    let p =
        FtsIndexParams::from_user_json(&json(py, &params, "the tokenizer parameters")?).map_err(|e| to_py(py, e))?;
    let mut a = p.tokenizer.build().map_err(|e| to_py(py, CoreError::from(e)))?;
    Ok(a.tokens(&text))
}

/// The keyword arguments an INVERTED index takes.
#[pyfunction]
fn fts_param_names() -> Vec<&'static str> {
    lancelet_dataset::index::fts::PARAM_NAMES.to_vec()
}

pub fn init(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(fts_param_names, m)?)?;
    m.add_function(wrap_pyfunction!(create_fts_index, m)?)?;
    m.add_function(wrap_pyfunction!(full_text_search, m)?)?;
    m.add_function(wrap_pyfunction!(tokenize, m)?)?;
    m.add_function(wrap_pyfunction!(hybrid_search, m)?)?;
    m.add_function(wrap_pyfunction!(build_fts_segment, m)?)?;
    m.add_function(wrap_pyfunction!(stage_fts_part, m)?)?;
    m.add_function(wrap_pyfunction!(merge_fts_parts, m)?)?;
    Ok(())
}
