//! `lancelet._native.Dataset`: read-only access to a dataset version.

use std::path::PathBuf;
use std::sync::Arc;

use arrow_array::RecordBatch;
use arrow_schema::ArrowError;
use lancelet_dataset::Dataset;
use pyo3::prelude::*;
use pyo3::types::PyCapsule;

use crate::arrow_ffi::{schema_capsule, stream_error, BatchStream, ErrorSlot, FnReader};
use crate::errors;
use crate::runtime::{run_detached, runtime};

/// One version of a dataset.
#[pyclass(module = "lancelet._native", name = "Dataset", frozen)]
pub struct PyDataset {
    inner: Arc<Dataset>,
}

fn local(uri: &str) -> PathBuf {
    PathBuf::from(uri.strip_prefix("file://").unwrap_or(uri))
}

#[pymethods]
impl PyDataset {
    /// Opens a local dataset at `version` (latest when None).
    #[staticmethod]
    #[pyo3(signature = (uri, version=None))]
    fn open(py: Python<'_>, uri: String, version: Option<u64>) -> PyResult<Self> {
        let root = local(&uri);
        let ds = run_detached(py, move || Dataset::open(&root, version))?;
        Ok(Self { inner: Arc::new(ds) })
    }

    /// `(version, seconds, nanos)` of every version, oldest first.
    #[staticmethod]
    fn versions(py: Python<'_>, uri: String) -> PyResult<Vec<(u64, i64, i32)>> {
        let root = local(&uri);
        run_detached(py, move || {
            let mut out = Vec::new();
            for v in Dataset::versions(&root)? {
                let ds = Dataset::open(&root, Some(v.version))?;
                let ts = ds
                    .manifest()
                    .timestamp
                    .as_ref()
                    .map(|t| (t.seconds, t.nanos))
                    .unwrap_or((0, 0));
                out.push((v.version, ts.0, ts.1));
            }
            Ok(out)
        })
    }

    /// The version this object reads.
    fn version(&self) -> u64 {
        self.inner.version()
    }

    /// Live rows of this version.
    fn count_rows(&self) -> u64 {
        self.inner.count_rows()
    }

    /// Number of fragments.
    fn num_fragments(&self) -> usize {
        self.inner.fragments().len()
    }

    /// The table schema.
    fn __arrow_c_schema__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyCapsule>> {
        schema_capsule(py, self.inner.schema())
    }

    /// Streams the live rows, one batch per fragment.
    #[pyo3(signature = (columns=None))]
    fn scan(&self, py: Python<'_>, columns: Option<Vec<String>>) -> PyResult<BatchStream> {
        let schema = self
            .inner
            .projected_schema(columns.as_deref())
            .map_err(|e| errors::to_py(py, e))?;
        let ds = self.inner.clone();
        let slot = ErrorSlot::default();
        let err_slot = slot.clone();
        let mut next_fragment = 0usize;
        let next = move || -> Option<Result<RecordBatch, ArrowError>> {
            if next_fragment >= ds.fragments().len() {
                return None;
            }
            let i = next_fragment;
            next_fragment += 1;
            let rt = match runtime() {
                Ok(rt) => rt,
                Err(e) => return Some(Err(ArrowError::ExternalError(Box::new(e)))),
            };
            let ds2 = ds.clone();
            let cols = columns.clone();
            let res = rt.block_on(async move { ds2.read_fragment(i, cols.as_deref()).await });
            Some(res.map_err(|e| stream_error(&err_slot, e)))
        };
        Ok(BatchStream::new(Box::new(FnReader { schema, next }), slot))
    }
}

pub fn init(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyDataset>()?;
    Ok(())
}
