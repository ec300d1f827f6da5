//! `lancelet._native.storage.ObjectStore`: the objects under an object-store URI
//! (`s3://bucket/prefix`, `memory://name`), for the Python code that keeps files beside
//! datasets (a directory namespace's `__manifest` neighbours: marker files, listings of
//! table directories, dropped tables, staged manifests). Datasets themselves are opened by
//! URI as usual. Also `local_path`, the local path a `file:` URI names.
//!
//! Paths are relative to the URI and use `/`. Local paths are refused: Python handles
//! local directories with `os`.

use std::collections::HashMap;
use std::time::UNIX_EPOCH;

use bytes::Bytes;
use lancelet_io::{ObjectStoreStore, RootKind, Storage};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::errors;
use crate::runtime::block_on;

/// A storage error as the exception the dataset layer would raise for it.
fn err(e: lancelet_io::Error) -> lancelet_dataset::Error {
    lancelet_dataset::Error::from(e)
}

/// The objects under one object-store URI.
#[pyclass(module = "lancelet._native.storage", name = "ObjectStore", frozen)]
pub struct PyObjectStore {
    store: ObjectStoreStore,
    uri: String,
}

#[pymethods]
impl PyObjectStore {
    /// Opens `uri` (`s3://...` or `memory://...`) with pylance-style `storage_options`.
    #[new]
    #[pyo3(signature = (uri, storage_options=None))]
    fn new(py: Python<'_>, uri: String, storage_options: Option<HashMap<String, String>>) -> PyResult<Self> {
        let root = lancelet_io::open_root(&uri, &storage_options.unwrap_or_default())
            .map_err(|e| errors::to_py(py, err(e)))?;
        match root.kind {
            RootKind::Object(store) => Ok(Self {
                store,
                uri: uri.trim_end_matches('/').to_string(),
            }),
            RootKind::Local(_) => Err(errors::invalid(
                py,
                format!("ObjectStore takes an object-store URI (s3://, memory://), not the local path {uri:?}"),
            )),
        }
    }

    /// The URI the store was opened at (without a trailing `/`).
    #[getter]
    fn uri(&self) -> String {
        self.uri.clone()
    }

    /// The object key of `path` in its bucket or memory store.
    fn key(&self, path: &str) -> String {
        self.store.key(path)
    }

    /// `(files, directories)` directly inside `dir`, each sorted.
    fn list(&self, py: Python<'_>, dir: String) -> PyResult<(Vec<String>, Vec<String>)> {
        let store = &self.store;
        block_on(py, async move {
            let all = Storage::list(store, &dir).await.map_err(err)?;
            let files: Vec<String> = Storage::list_meta(store, &dir)
                .await
                .map_err(err)?
                .into_iter()
                .map(|m| m.name)
                .collect();
            let dirs = all.into_iter().filter(|n| !files.contains(n)).collect();
            Ok::<_, lancelet_dataset::Error>((files, dirs))
        })
    }

    /// Every object under `dir` at any depth, as paths relative to `dir`, sorted.
    fn list_all(&self, py: Python<'_>, dir: String) -> PyResult<Vec<String>> {
        let store = &self.store;
        block_on(py, async move { store.list_all(&dir).await.map_err(err) })
    }

    /// `(size, modified in ms since the epoch, e_tag)` of the object at `path`, or None.
    fn head(&self, py: Python<'_>, path: String) -> PyResult<Option<(u64, i64, Option<String>)>> {
        let store = &self.store;
        let head = block_on(py, async move { store.head(&path).await.map_err(err) })?;
        Ok(head.map(|h| {
            let millis = h
                .modified
                .duration_since(UNIX_EPOCH)
                .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
                .unwrap_or(0);
            (h.size, millis, h.e_tag)
        }))
    }

    /// The whole object at `path` (`LanceNotFoundError` when missing).
    fn read<'py>(&self, py: Python<'py>, path: String) -> PyResult<Bound<'py, PyBytes>> {
        let store = &self.store;
        let data = block_on(py, async move { Storage::read(store, &path).await.map_err(err) })?;
        Ok(PyBytes::new(py, &data))
    }

    /// Writes the object at `path`, replacing any.
    fn put(&self, py: Python<'_>, path: String, data: &[u8]) -> PyResult<()> {
        let store = &self.store;
        let data = Bytes::copy_from_slice(data);
        block_on(py, async move { Storage::put(store, &path, data).await.map_err(err) })
    }

    /// Creates the object at `path` unless one exists (atomically); False when one did.
    fn put_if_absent(&self, py: Python<'_>, path: String, data: &[u8]) -> PyResult<bool> {
        let store = &self.store;
        let data = Bytes::copy_from_slice(data);
        block_on(py, async move {
            Storage::put_if_absent(store, &path, data).await.map_err(err)
        })
    }

    /// Deletes the object at `path` (a missing one is fine).
    fn delete(&self, py: Python<'_>, path: String) -> PyResult<()> {
        let store = &self.store;
        block_on(py, async move { Storage::delete(store, &path).await.map_err(err) })
    }

    /// Deletes every object under `dir` (never the whole root); returns how many.
    fn delete_all(&self, py: Python<'_>, dir: String) -> PyResult<usize> {
        let store = &self.store;
        block_on(py, async move { store.delete_all(&dir).await.map_err(err) })
    }

    /// Whether an object (or anything under the directory) `path` exists.
    fn exists(&self, py: Python<'_>, path: String) -> PyResult<bool> {
        let store = &self.store;
        block_on(py, async move { Storage::exists(store, &path).await.map_err(err) })
    }

    fn __repr__(&self) -> String {
        format!("ObjectStore({:?})", self.uri)
    }
}

/// The local path a URI names (`file:` URIs percent-decoded as RFC 8089 says), or `None`
/// for a URI of another scheme.
#[pyfunction]
fn local_path(uri: &str) -> Option<std::path::PathBuf> {
    lancelet_io::uri::local_path(uri)
}

pub fn init(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyObjectStore>()?;
    m.add_function(wrap_pyfunction!(local_path, m)?)?;
    Ok(())
}
