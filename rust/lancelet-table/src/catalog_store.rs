//! Commits through a catalog that manages a table's versions (the Lance namespace spec's
//! *managed versioning*: a namespace whose `describe_table` says `managed_versioning`).
//!
//! The catalog, not the store, decides which writer gets each version. Committing version
//! `v` through a [`CatalogCommitStore`]:
//!
//! 1. write the manifest under a staging name in `_versions/`, `{final name}-{uuid}`
//!    (never listed as a version);
//! 2. ask the [`VersionCatalog`] to make it version `v` (the namespace's
//!    `create_table_version`: the catalog checks `v` is the next version, then moves the
//!    staged file to its final name);
//! 3. the catalog says created: the commit landed. It says the version is taken: if the
//!    final manifest holds our bytes (a retried request whose first attempt landed) the
//!    commit landed, otherwise the staged file is removed and the commit loop sees an
//!    ordinary conflict (it rebases on the newer version and tries again). Any other
//!    failure leaves the staged file in place (the outcome is unknown) and is an error.
//!
//! Reads are unchanged: the versions are the manifests in `_versions/`, where the catalog
//! puts them. Files other than manifests (tags, transactions, data) are written as usual.

use std::fmt::Debug;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use bytes::Bytes;
use futures::future::BoxFuture;
use futures::FutureExt;
use lancelet_io::ReadAt;

use crate::naming::{ManifestNaming, VERSIONS_DIR};
use crate::store::{FileMeta, Store};
use crate::Result;

/// What a catalog answered when asked to create a version.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VersionClaim {
    /// The staged manifest is now the version.
    Created,
    /// The version exists already (another writer's, or a retried request's own).
    Taken,
}

/// A catalog that owns the version numbers of one table.
pub trait VersionCatalog: Debug + Send + Sync {
    /// Asks the catalog to make the manifest staged at `staged` (a path relative to the
    /// dataset root, `size` bytes) version `version`, named by `naming` once final.
    fn create_version<'a>(
        &'a self,
        version: u64,
        staged: &'a str,
        size: u64,
        naming: ManifestNaming,
    ) -> BoxFuture<'a, Result<VersionClaim>>;
}

/// A [`Store`] whose manifest creation goes through a [`VersionCatalog`].
#[derive(Debug, Clone)]
pub struct CatalogCommitStore {
    inner: Arc<dyn Store>,
    catalog: Arc<dyn VersionCatalog>,
}

impl CatalogCommitStore {
    /// Wraps `inner` (the dataset root) so its versions are created by `catalog`.
    pub fn new(inner: Arc<dyn Store>, catalog: Arc<dyn VersionCatalog>) -> Self {
        Self { inner, catalog }
    }

    async fn commit_manifest(&self, path: &str, version: u64, naming: ManifestNaming, data: Bytes) -> Result<bool> {
        let staged = format!("{path}-{}", uuid::Uuid::new_v4());
        self.inner.put(&staged, data.clone()).await?;
        match self
            .catalog
            .create_version(version, &staged, data.len() as u64, naming)
            .await?
        {
            VersionClaim::Created => Ok(true),
            VersionClaim::Taken => {
                let ours = matches!(self.inner.read(path).await, Ok(got) if got == data);
                // Best effort: a catalog that moved the file already leaves nothing to remove.
                let _ = self.inner.delete(&staged).await;
                Ok(ours)
            }
        }
    }
}

/// The version and naming of a manifest path under `_versions/`, when `path` is one.
fn manifest_of(path: &str) -> Option<(u64, ManifestNaming)> {
    let name = path.strip_prefix(VERSIONS_DIR)?.strip_prefix('/')?;
    ManifestNaming::parse(name)
}

impl Store for CatalogCommitStore {
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
        async move {
            match manifest_of(path) {
                Some((version, naming)) => self.commit_manifest(path, version, naming, data).await,
                None => self.inner.put_if_absent(path, data).await,
            }
        }
        .boxed()
    }

    fn list<'a>(&'a self, dir: &'a str) -> BoxFuture<'a, Result<Vec<String>>> {
        self.inner.list(dir)
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

    fn open_file<'a>(&'a self, path: &'a str) -> BoxFuture<'a, lancelet_io::Result<Arc<dyn ReadAt>>> {
        self.inner.open_file(path)
    }

    fn local_path(&self, path: &str) -> Option<PathBuf> {
        self.inner.local_path(path)
    }

    fn probes_versions(&self) -> bool {
        self.inner.probes_versions()
    }

    fn upload<'a>(&'a self, path: &'a str, local: &'a Path) -> BoxFuture<'a, Result<u64>> {
        self.inner.upload(path, local)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests: a failed unwrap is a failed test")]
    use std::sync::Mutex;

    use super::*;
    use crate::store::LocalStore;
    use crate::Error;

    /// A catalog that keeps the rule of pylance's directory namespace: the next version
    /// only, the staged file moved to its final name. `fail` makes it answer with an error.
    #[derive(Debug)]
    struct DirCatalog {
        store: Arc<dyn Store>,
        calls: Mutex<Vec<(u64, String)>>,
        fail: bool,
    }

    impl VersionCatalog for DirCatalog {
        fn create_version<'a>(
            &'a self,
            version: u64,
            staged: &'a str,
            _size: u64,
            naming: ManifestNaming,
        ) -> BoxFuture<'a, Result<VersionClaim>> {
            async move {
                self.calls.lock().unwrap().push((version, staged.to_string()));
                if self.fail {
                    return Err(Error::InvalidArgument("catalog unavailable".into()));
                }
                let data = self.store.read(staged).await?;
                if !self.store.put_if_absent(&naming.relative_path(version), data).await? {
                    return Ok(VersionClaim::Taken);
                }
                self.store.delete(staged).await?;
                Ok(VersionClaim::Created)
            }
            .boxed()
        }
    }

    fn setup(fail: bool) -> (tempfile::TempDir, Arc<dyn Store>, Arc<DirCatalog>, CatalogCommitStore) {
        let dir = tempfile::tempdir().unwrap();
        let inner: Arc<dyn Store> = Arc::new(LocalStore::new(dir.path()));
        let catalog = Arc::new(DirCatalog {
            store: inner.clone(),
            calls: Mutex::new(Vec::new()),
            fail,
        });
        let store = CatalogCommitStore::new(inner.clone(), catalog.clone());
        (dir, inner, catalog, store)
    }

    #[tokio::test]
    async fn manifests_go_through_the_catalog_and_other_files_do_not() {
        let (_dir, inner, catalog, store) = setup(false);
        let v1 = ManifestNaming::V2.relative_path(1);
        assert!(store.put_if_absent(&v1, Bytes::from_static(b"one")).await.unwrap());
        assert_eq!(inner.read(&v1).await.unwrap(), Bytes::from_static(b"one"));
        assert!(store
            .put_if_absent("_refs/tags/a.json", Bytes::from_static(b"{}"))
            .await
            .unwrap());
        let calls = catalog.calls.lock().unwrap().clone();
        assert_eq!(calls.len(), 1);
        assert_eq!(calls[0].0, 1);
        assert!(calls[0].1.starts_with(&format!("{v1}-")));
        // Only the final manifest is left: the staged file was moved.
        assert_eq!(
            inner.list(VERSIONS_DIR).await.unwrap(),
            vec![v1.rsplit('/').next().unwrap()]
        );
    }

    #[tokio::test]
    async fn a_taken_version_is_a_conflict_unless_it_holds_our_bytes() {
        let (_dir, inner, _catalog, store) = setup(false);
        let v1 = ManifestNaming::V1.relative_path(1);
        inner.put(&v1, Bytes::from_static(b"theirs")).await.unwrap();
        assert!(!store.put_if_absent(&v1, Bytes::from_static(b"mine")).await.unwrap());
        assert!(store.put_if_absent(&v1, Bytes::from_static(b"theirs")).await.unwrap());
        assert_eq!(inner.list(VERSIONS_DIR).await.unwrap(), vec!["1.manifest"]);
    }

    #[tokio::test]
    async fn a_failing_catalog_is_an_error_and_keeps_the_staged_manifest() {
        let (_dir, inner, _catalog, store) = setup(true);
        let v1 = ManifestNaming::V2.relative_path(1);
        assert!(store.put_if_absent(&v1, Bytes::from_static(b"one")).await.is_err());
        let left = inner.list(VERSIONS_DIR).await.unwrap();
        assert_eq!(left.len(), 1);
        assert!(left[0].starts_with(v1.rsplit('/').next().unwrap()) && left[0].contains(".manifest-"));
    }
}
