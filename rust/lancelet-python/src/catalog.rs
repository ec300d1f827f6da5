//! A Python namespace client as the [`VersionCatalog`] of one table: what a dataset opened
//! or written through a namespace with managed versioning commits through (see
//! `lancelet_dataset::table::catalog_store`).
//!
//! Each commit calls `namespace.create_table_version({...})` with a plain dict (pylance's
//! namespaces and lancelet's take dicts for the version operations); the namespace's
//! `ConcurrentModificationError` means the version is taken. The call runs on a thread of
//! its own, outside the runtime: the namespace may be lancelet's own, which calls back into
//! lancelet (and so into the runtime) to read its catalog.
//!
//! That thread attaches to the interpreter with `PyGILState_Ensure` itself rather than
//! through `Python::attach`: pyo3 counts its own attachments per thread, and Python code the
//! namespace runs may release the GIL outside pyo3 (pyarrow reading one of lancelet's
//! streams does) and call back into lancelet on the same thread; with pyo3's count raised,
//! that callback would believe the GIL held and release it again (a fatal error).

use std::sync::Arc;

use futures::future::BoxFuture;
use futures::FutureExt;
use lancelet_dataset::table::catalog_store::{catalog_commits, VersionCatalog, VersionClaim};
use lancelet_dataset::table::naming::ManifestNaming;
use lancelet_io::Storage;
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// What [`NamespaceCatalog`] holds, shared with the thread that makes each call.
#[derive(Debug)]
struct Client {
    namespace: Py<PyAny>,
    table_id: Vec<String>,
    /// The dataset root as the object store names it (pylance's `manifest_path` form:
    /// the absolute path without its leading `/`, or the key in the bucket).
    root_key: String,
}

/// A namespace client deciding the versions of one table.
#[derive(Debug, Clone)]
pub struct NamespaceCatalog {
    client: Arc<Client>,
}

impl NamespaceCatalog {
    /// The catalog of table `table_id` in `namespace`, whose root the store names `root_key`.
    pub fn new(namespace: Py<PyAny>, table_id: Vec<String>, root_key: String) -> Self {
        Self {
            client: Arc::new(Client {
                namespace,
                table_id,
                root_key: root_key.trim_end_matches('/').to_string(),
            }),
        }
    }

    /// `store` with its manifests created through this catalog.
    pub fn wrap(&self, store: Arc<dyn Storage>) -> Arc<dyn Storage> {
        Arc::new(catalog_commits(store, Arc::new(self.clone())))
    }
}

fn failed(message: String) -> lancelet_io::Error {
    lancelet_io::Error::Io {
        path: "namespace create_table_version".to_string(),
        source: std::io::Error::other(message),
    }
}

/// The thread's attachment to the interpreter, released when dropped (see the module doc).
struct Attached(pyo3::ffi::PyGILState_STATE, std::marker::PhantomData<*const ()>);

impl Attached {
    fn new() -> Self {
        // SAFETY: the interpreter is running (lancelet is being called from Python), and
        // every Ensure is paired with the Release in `drop`.
        Self(unsafe { pyo3::ffi::PyGILState_Ensure() }, std::marker::PhantomData)
    }
}

impl Drop for Attached {
    fn drop(&mut self) {
        // SAFETY: pairs the Ensure of `new`, on the same thread (the guard is not Send).
        unsafe { pyo3::ffi::PyGILState_Release(self.0) }
    }
}

/// Runs `f` attached to the interpreter without raising pyo3's attachment count.
fn attached<R>(f: impl for<'py> FnOnce(Python<'py>) -> R) -> R {
    let _guard = Attached::new();
    // SAFETY: this thread holds the GIL until `_guard` drops, after `f` returned; `f` cannot
    // let the token or anything borrowed from it escape (it works for any `'py`).
    f(unsafe { Python::assume_attached() })
}

impl Client {
    fn create(&self, version: u64, staged: &str, size: u64, naming: ManifestNaming) -> Result<VersionClaim, String> {
        attached(|py| {
            let request = PyDict::new(py);
            let path = if self.root_key.is_empty() {
                staged.to_string()
            } else {
                format!("{}/{staged}", self.root_key)
            };
            let scheme = match naming {
                ManifestNaming::V1 => "V1",
                ManifestNaming::V2 => "V2",
            };
            let filled = request
                .set_item("id", self.table_id.clone())
                .and_then(|()| request.set_item("version", version))
                .and_then(|()| request.set_item("manifest_path", path))
                .and_then(|()| request.set_item("manifest_size", size))
                .and_then(|()| request.set_item("naming_scheme", scheme));
            if let Err(e) = filled {
                return Err(e.to_string());
            }
            match self.namespace.call_method1(py, "create_table_version", (request,)) {
                Ok(_) => Ok(VersionClaim::Created),
                Err(e) => {
                    let taken = py
                        .import("lance_namespace")
                        .and_then(|m| m.getattr("ConcurrentModificationError"))
                        .map(|cls| e.is_instance(py, &cls))
                        .unwrap_or(false);
                    if taken {
                        Ok(VersionClaim::Taken)
                    } else {
                        Err(format!("the namespace refused version {version}: {e}"))
                    }
                }
            }
        })
    }
}

impl VersionCatalog for NamespaceCatalog {
    fn create_version<'a>(
        &'a self,
        version: u64,
        staged: &'a str,
        size: u64,
        naming: ManifestNaming,
    ) -> BoxFuture<'a, lancelet_io::Result<VersionClaim>> {
        let client = self.client.clone();
        let staged = staged.to_string();
        async move {
            let (tx, rx) = tokio::sync::oneshot::channel();
            std::thread::Builder::new()
                .name("lancelet-namespace-commit".into())
                .spawn(move || {
                    let _ = tx.send(client.create(version, &staged, size, naming));
                })
                .map_err(|e| failed(format!("cannot start the namespace call: {e}")))?;
            match rx.await {
                Ok(outcome) => outcome.map_err(failed),
                Err(_) => Err(failed("the namespace call ended without an answer".to_string())),
            }
        }
        .boxed()
    }
}
