//! UDF backfills (`add_columns` with a Python function): module functions of
//! `lancelet._native.dataset` taking a `Dataset`. `lancelet_dataset::evolve::backfill` drives the
//! fragments, batches, writes, checkpoint and cleanup; Python is only called back with
//! each batch (as a one-batch stream) and returns the new columns' batch.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use arrow_array::RecordBatch;
use lancelet_dataset::evolve::backfill::BackfillOptions;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::arrow_ffi::{import_batch, BatchStream};
use crate::dataset::{one_batch, wrap, PyDataset};
use crate::fragment_meta::fragment_dict;
use crate::options::py_options;
use crate::runtime::block_on;

/// A Python callable `stream -> pyarrow.RecordBatch`, remembering the exception it raised.
struct PyUdf {
    func: Py<PyAny>,
    failure: Mutex<Option<PyErr>>,
}

impl PyUdf {
    fn new(func: Bound<'_, PyAny>) -> Self {
        Self {
            func: func.unbind(),
            failure: Mutex::new(None),
        }
    }

    /// Calls the function on `batch` (through [`crate::runtime::call_python`]).
    fn call(&self, batch: RecordBatch) -> lancelet_dataset::Result<RecordBatch> {
        let res = crate::runtime::call_python(|py| {
            // Bound values (not `Py`) so that they are released here, with the GIL.
            let stream = Bound::new(py, one_batch(batch))?;
            let out = self.func.bind(py).call1((stream,))?;
            import_batch(py, &out)
        });
        res.map_err(|e| {
            let message = e.to_string();
            if let Ok(mut slot) = self.failure.lock() {
                *slot = Some(e);
            }
            lancelet_dataset::Error::InvalidArgument(format!("the UDF failed: {message}"))
        })
    }

    /// The function's own exception when it raised one, else `e`.
    fn error(&self, e: PyErr) -> PyErr {
        self.failure.lock().ok().and_then(|mut s| s.take()).unwrap_or(e)
    }
}

py_options! {
    /// `backfill`'s keyword options: what the UDF reads, its output schema and its checkpoint.
    struct BackfillArgs {
        /// The columns the UDF is given (all when None).
        read_columns: Option<Vec<String>> = None,
        batch_size: Option<usize> = None,
        /// The UDF's output schema (found by running it when None).
        output_schema: Option<Py<PyAny>> = None,
        /// Where finished fragments are recorded, so that a failed run resumes.
        checkpoint_file: Option<PathBuf> = None,
        checkpoint_key: Option<String> = None,
    }
}

/// Adds the columns `udf` computes to dataset `d` and commits them; returns the dataset
/// at the new version. `udf` takes a one-batch stream of `read_columns` (all when None)
/// and returns a `pyarrow.RecordBatch`. With `checkpoint_file`, finished fragments are
/// recorded there (keyed by `checkpoint_key` and the version) and a failed run resumes.
#[pyfunction]
#[pyo3(signature = (d, udf, options=BackfillArgs::default()))]
fn backfill(
    py: Python<'_>,
    d: &Bound<'_, PyDataset>,
    udf: Bound<'_, PyAny>,
    options: BackfillArgs,
) -> PyResult<PyDataset> {
    let output_schema = options
        .output_schema
        .map(|s| crate::file::import_schema(py, s.bind(py)).map(Arc::new))
        .transpose()?;
    let opts = BackfillOptions {
        read_columns: options.read_columns,
        batch_size: options.batch_size,
        output_schema,
        checkpoint: options.checkpoint_file,
        checkpoint_key: options.checkpoint_key,
    };
    let udf = PyUdf::new(udf);
    let ds = d.get().inner.clone();
    let (f, o) = (&udf, &opts);
    let out = block_on(py, async move {
        let mut call = |b: RecordBatch| f.call(b);
        ds.backfill(&mut call, o).await
    });
    Ok(wrap(out.map_err(|e| udf.error(e))?))
}

/// The schema of `udf`'s output on the first rows of `d` (an empty stream carrying it), or
/// `None` when `d` has no rows.
#[pyfunction]
#[pyo3(signature = (d, udf, read_columns=None))]
fn backfill_schema(
    py: Python<'_>,
    d: &Bound<'_, PyDataset>,
    udf: Bound<'_, PyAny>,
    read_columns: Option<Vec<String>>,
) -> PyResult<Option<BatchStream>> {
    let udf = PyUdf::new(udf);
    let ds = d.get().inner.clone();
    let f = &udf;
    let out = block_on(py, async move {
        let mut call = |b: RecordBatch| f.call(b);
        ds.backfill_schema(&mut call, read_columns.as_deref()).await
    });
    let schema = out.map_err(|e| udf.error(e))?;
    Ok(schema.map(|s| one_batch(RecordBatch::new_empty(s))))
}

py_options! {
    /// `backfill_fragment`'s keyword options: what the UDF reads and the new file's name tag.
    struct FragmentBackfillArgs {
        read_columns: Option<Vec<String>> = None,
        batch_size: Option<usize> = None,
        file_tag: Option<String> = None,
    }
}

/// Runs `udf` over fragment `fragment_id` of `d` and writes its new columns (conformed to
/// `schema`) as one uncommitted data file; returns it as a fragment dict holding only it.
#[pyfunction]
#[pyo3(signature = (d, fragment_id, udf, schema, options=FragmentBackfillArgs::default()))]
fn backfill_fragment<'py>(
    py: Python<'py>,
    d: &Bound<'py, PyDataset>,
    fragment_id: u64,
    udf: Bound<'py, PyAny>,
    schema: Bound<'py, PyAny>,
    options: FragmentBackfillArgs,
) -> PyResult<Bound<'py, PyDict>> {
    let FragmentBackfillArgs {
        read_columns,
        batch_size,
        file_tag,
    } = options;
    let schema = Arc::new(crate::file::import_schema(py, &schema)?);
    let udf = PyUdf::new(udf);
    let ds = d.get().inner.clone();
    let (f, s) = (&udf, &schema);
    let inner = ds.clone();
    let out = block_on(py, async move {
        let mut call = |b: RecordBatch| f.call(b);
        inner
            .backfill_fragment(fragment_id, &mut call, read_columns.as_deref(), batch_size, s, file_tag)
            .await
    });
    let file = out.map_err(|e| udf.error(e))?;
    let frag = lancelet_dataset::table::pb::DataFragment {
        id: fragment_id,
        files: vec![file],
        physical_rows: ds.fragment(fragment_id).map(|f| f.physical_rows).unwrap_or(0),
        ..Default::default()
    };
    fragment_dict(py, &frag)
}

pub fn init(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(backfill, m)?)?;
    m.add_function(wrap_pyfunction!(backfill_schema, m)?)?;
    m.add_function(wrap_pyfunction!(backfill_fragment, m)?)?;
    Ok(())
}
