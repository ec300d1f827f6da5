//! Commits through a catalog that manages a table's versions (the Lance namespace spec's
//! *managed versioning*: a namespace whose `describe_table` says `managed_versioning`).
//!
//! The catalog, not the store, decides which writer gets each version. Committing version
//! `v` through a [`catalog_commits`] store:
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
use std::sync::Arc;

use bytes::Bytes;
use futures::future::BoxFuture;
use futures::FutureExt;
use lancelet_io::{Result, Storage};

use crate::managed::{ManagedStorage, ManifestAuthority};
use crate::naming::ManifestNaming;

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

/// `inner` (the dataset root) with its versions created by `catalog`.
pub fn catalog_commits(inner: Arc<dyn Storage>, catalog: Arc<dyn VersionCatalog>) -> ManagedStorage {
    ManagedStorage::new(inner, Arc::new(CatalogVersions(catalog)))
}

/// A [`VersionCatalog`] as the [`ManifestAuthority`] of a dataset.
#[derive(Debug)]
struct CatalogVersions(Arc<dyn VersionCatalog>);

impl ManifestAuthority for CatalogVersions {
    fn create_manifest<'a>(
        &'a self,
        inner: &'a dyn Storage,
        path: &'a str,
        version: u64,
        naming: ManifestNaming,
        data: Bytes,
    ) -> BoxFuture<'a, Result<bool>> {
        async move {
            let staged = format!("{path}-{}", uuid::Uuid::new_v4());
            inner.put(&staged, data.clone()).await?;
            match self
                .0
                .create_version(version, &staged, data.len() as u64, naming)
                .await?
            {
                VersionClaim::Created => Ok(true),
                VersionClaim::Taken => {
                    let ours = matches!(inner.read(path).await, Ok(got) if got == data);
                    // Best effort: a catalog that moved the file already leaves nothing to remove.
                    let _ = inner.delete(&staged).await;
                    Ok(ours)
                }
            }
        }
        .boxed()
    }

    fn probes_versions(&self, inner: &dyn Storage) -> bool {
        inner.probes_versions()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests: a failed unwrap is a failed test")]
    use std::sync::Mutex;

    use super::*;
    use lancelet_io::{Error, LocalStore};

    use crate::naming::VERSIONS_DIR;

    /// A catalog that keeps the rule of pylance's directory namespace: the next version
    /// only, the staged file moved to its final name. `fail` makes it answer with an error.
    #[derive(Debug)]
    struct DirCatalog {
        store: Arc<dyn Storage>,
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

    fn setup(fail: bool) -> (tempfile::TempDir, Arc<dyn Storage>, Arc<DirCatalog>, ManagedStorage) {
        let dir = tempfile::tempdir().unwrap();
        let inner: Arc<dyn Storage> = Arc::new(LocalStore::new(dir.path()));
        let catalog = Arc::new(DirCatalog {
            store: inner.clone(),
            calls: Mutex::new(Vec::new()),
            fail,
        });
        let store = catalog_commits(inner.clone(), catalog.clone());
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
