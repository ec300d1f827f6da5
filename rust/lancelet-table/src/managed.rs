//! A dataset root whose versions are created by an authority other than the store.
//!
//! The commit protocol needs one atomic step: "create this manifest unless that version
//! exists". A [`Storage`] with conditional puts gives it by itself. Two kinds of datasets
//! hand that step to someone else:
//! - an S3-compatible store without conditional puts, whose versions an external manifest
//!   store arbitrates (`manifest_store`);
//! - a table in a namespace with managed versioning, whose versions the catalog creates
//!   (`catalog_store`).
//!
//! [`ManagedStorage`] is the one decorator for both: it is the dataset's [`Storage`] with
//! manifest creation (and, where the authority says so, the listing of `_versions/`) routed
//! through a [`ManifestAuthority`]; every other call goes to the store unchanged, so the
//! rest of the table layer does not know the difference.

use std::fmt::Debug;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use bytes::Bytes;
use futures::future::BoxFuture;
use futures::FutureExt;
use lancelet_io::{FileMeta, ReadAt, Result, Storage};

use crate::naming::{ManifestNaming, VERSIONS_DIR};

/// Who decides which writer creates each version of one dataset.
pub trait ManifestAuthority: Debug + Send + Sync {
    /// Creates the manifest of `version` at `path` (named by `naming`) with `data` on
    /// `inner`, unless that version exists: `Ok(false)` when another writer has it.
    fn create_manifest<'a>(
        &'a self,
        inner: &'a dyn Storage,
        path: &'a str,
        version: u64,
        naming: ManifestNaming,
        data: Bytes,
    ) -> BoxFuture<'a, Result<bool>>;

    /// Creates a file other than a manifest (a tag, a branch) unless it exists. The default
    /// is the store's own conditional put.
    fn create_other<'a>(&'a self, inner: &'a dyn Storage, path: &'a str, data: Bytes) -> BoxFuture<'a, Result<bool>> {
        inner.put_if_absent(path, data)
    }

    /// Runs before `_versions/` is listed (to finish an interrupted commit, say).
    fn before_listing_versions<'a>(&'a self, _inner: &'a dyn Storage) -> BoxFuture<'a, Result<()>> {
        futures::future::ready(Ok(())).boxed()
    }

    /// Whether the newest version may be found by probing manifests ([`Storage::probes_versions`]).
    fn probes_versions(&self, inner: &dyn Storage) -> bool;
}

/// A dataset root whose manifests a [`ManifestAuthority`] creates.
#[derive(Debug, Clone)]
pub struct ManagedStorage {
    inner: Arc<dyn Storage>,
    authority: Arc<dyn ManifestAuthority>,
}

impl ManagedStorage {
    /// `inner` (the dataset root) with its versions created by `authority`.
    pub fn new(inner: Arc<dyn Storage>, authority: Arc<dyn ManifestAuthority>) -> Self {
        Self { inner, authority }
    }
}

/// The version and naming of a manifest path under `_versions/`, when `path` is one.
pub(crate) fn manifest_of(path: &str) -> Option<(u64, ManifestNaming)> {
    let name = path.strip_prefix(VERSIONS_DIR)?.strip_prefix('/')?;
    ManifestNaming::parse(name)
}

impl Storage for ManagedStorage {
    fn root_display(&self) -> String {
        self.inner.root_display()
    }

    fn read<'a>(&'a self, path: &'a str) -> BoxFuture<'a, Result<Bytes>> {
        self.inner.read(path)
    }

    fn put<'a>(&'a self, path: &'a str, data: Bytes) -> BoxFuture<'a, Result<()>> {
        self.inner.put(path, data)
    }

    fn put_if_absent<'a>(&'a self, path: &'a str, data: Bytes) -> BoxFuture<'a, Result<bool>> {
        match manifest_of(path) {
            Some((version, naming)) => self
                .authority
                .create_manifest(self.inner.as_ref(), path, version, naming, data),
            None => self.authority.create_other(self.inner.as_ref(), path, data),
        }
    }

    fn list<'a>(&'a self, dir: &'a str) -> BoxFuture<'a, Result<Vec<String>>> {
        async move {
            if dir.trim_matches('/') == VERSIONS_DIR {
                self.authority.before_listing_versions(self.inner.as_ref()).await?;
            }
            self.inner.list(dir).await
        }
        .boxed()
    }

    fn list_meta<'a>(&'a self, dir: &'a str) -> BoxFuture<'a, Result<Vec<FileMeta>>> {
        self.inner.list_meta(dir)
    }

    fn delete<'a>(&'a self, path: &'a str) -> BoxFuture<'a, Result<()>> {
        self.inner.delete(path)
    }

    fn exists<'a>(&'a self, path: &'a str) -> BoxFuture<'a, Result<bool>> {
        self.inner.exists(path)
    }

    fn open_file<'a>(&'a self, path: &'a str) -> BoxFuture<'a, Result<Arc<dyn ReadAt>>> {
        self.inner.open_file(path)
    }

    fn local_path(&self, path: &str) -> Option<PathBuf> {
        self.inner.local_path(path)
    }

    fn probes_versions(&self) -> bool {
        self.authority.probes_versions(self.inner.as_ref())
    }

    fn upload<'a>(&'a self, path: &'a str, local: &'a Path) -> BoxFuture<'a, Result<u64>> {
        self.inner.upload(path, local)
    }
}
