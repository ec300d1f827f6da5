//! Commits on stores that cannot create a file atomically, through an external manifest store.
//!
//! The commit protocol needs "create this manifest unless it exists" to be atomic. Local disk
//! and S3 with `If-None-Match` give that; some S3-compatible stores do not. For those, an
//! [`ExternalManifestStore`] (a small database with an atomic insert) decides which writer
//! owns a version, and [`external_commits`] wraps the dataset's [`Storage`] so the rest of
//! the table layer is unchanged. Committing version `v`:
//!
//! 1. write the manifest under a staging name, `{manifest}-{uuid}` (never listed as a version);
//! 2. insert `(dataset, v) -> staging path` into the external store; if a row exists, another
//!    writer owns `v`: remove the staged file and report the version as taken;
//! 3. copy the manifest to its final name;
//! 4. point the row at the final name and remove the staged file.
//!
//! A writer that dies after step 2 leaves a row pointing at a staged file. The next listing
//! of versions (any reader or writer) finishes steps 3 and 4 first, so the version the
//! external store promised is never lost and never visible half-written.
//!
//! Two implementations: [`MemoryManifestStore`] (one process) and [`SqliteManifestStore`]
//! (a SQLite file, shared by every process on a machine or a network file system that
//! supports SQLite's locking).

use std::collections::HashMap;
use std::fmt::Debug;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use bytes::Bytes;
use futures::future::BoxFuture;
use futures::FutureExt;
use lancelet_io::{Error, Result, Storage};

use crate::managed::{ManagedStorage, ManifestAuthority};
use crate::naming::ManifestNaming;

/// Where the owner of each version of a dataset is recorded: `(dataset, version) -> path`
/// of its manifest, relative to the dataset root.
pub trait ExternalManifestStore: Debug + Send + Sync {
    /// The path recorded for `version` of `dataset`.
    fn get<'a>(&'a self, dataset: &'a str, version: u64) -> BoxFuture<'a, Result<Option<String>>>;
    /// The newest version recorded for `dataset`, with its path.
    fn latest<'a>(&'a self, dataset: &'a str) -> BoxFuture<'a, Result<Option<(u64, String)>>>;
    /// Records `path` for `version` unless a record exists (atomically); `Ok(false)` if one did.
    fn put_if_not_exists<'a>(&'a self, dataset: &'a str, version: u64, path: &'a str) -> BoxFuture<'a, Result<bool>>;
    /// Points the existing record of `version` at `path` (finishing a commit).
    fn put_if_exists<'a>(&'a self, dataset: &'a str, version: u64, path: &'a str) -> BoxFuture<'a, Result<()>>;
}

/// An [`ExternalManifestStore`] in this process's memory.
#[derive(Debug, Default)]
pub struct MemoryManifestStore {
    rows: Mutex<HashMap<(String, u64), String>>,
}

impl MemoryManifestStore {
    /// The process-wide instance behind the `manifest_store=memory` storage option.
    pub fn global() -> Arc<MemoryManifestStore> {
        static GLOBAL: OnceLock<Arc<MemoryManifestStore>> = OnceLock::new();
        GLOBAL.get_or_init(Arc::default).clone()
    }

    fn rows(&self) -> std::sync::MutexGuard<'_, HashMap<(String, u64), String>> {
        // A panic while holding the lock cannot leave the map half-updated (single inserts).
        self.rows.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl ExternalManifestStore for MemoryManifestStore {
    fn get<'a>(&'a self, dataset: &'a str, version: u64) -> BoxFuture<'a, Result<Option<String>>> {
        let got = self.rows().get(&(dataset.to_string(), version)).cloned();
        async move { Ok(got) }.boxed()
    }

    fn latest<'a>(&'a self, dataset: &'a str) -> BoxFuture<'a, Result<Option<(u64, String)>>> {
        let got = self
            .rows()
            .iter()
            .filter(|((d, _), _)| d == dataset)
            .max_by_key(|((_, v), _)| *v)
            .map(|((_, v), p)| (*v, p.clone()));
        async move { Ok(got) }.boxed()
    }

    fn put_if_not_exists<'a>(&'a self, dataset: &'a str, version: u64, path: &'a str) -> BoxFuture<'a, Result<bool>> {
        let mut rows = self.rows();
        let key = (dataset.to_string(), version);
        let inserted = !rows.contains_key(&key);
        if inserted {
            rows.insert(key, path.to_string());
        }
        async move { Ok(inserted) }.boxed()
    }

    fn put_if_exists<'a>(&'a self, dataset: &'a str, version: u64, path: &'a str) -> BoxFuture<'a, Result<()>> {
        let res = match self.rows().get_mut(&(dataset.to_string(), version)) {
            Some(p) => {
                *p = path.to_string();
                Ok(())
            }
            None => Err(Error::NotFound {
                path: format!("manifest store record of version {version} of {dataset}"),
            }),
        };
        async move { res }.boxed()
    }
}

/// An [`ExternalManifestStore`] in a SQLite database file (created on first use).
///
/// Each call opens its own connection, so any number of threads and processes can share the
/// file; SQLite serializes the inserts, and the primary key makes "insert unless present"
/// atomic.
#[derive(Debug, Clone)]
pub struct SqliteManifestStore {
    path: PathBuf,
}

/// How long a call waits for another process's write lock before failing.
const SQLITE_BUSY_TIMEOUT: Duration = Duration::from_secs(30);

impl SqliteManifestStore {
    /// A store in the SQLite file at `path`; checks it can be opened and creates its table.
    pub fn open(path: impl Into<PathBuf>) -> Result<Self> {
        let store = Self { path: path.into() };
        store.connect()?;
        Ok(store)
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn err(&self, e: rusqlite::Error) -> Error {
        Error::Io {
            path: self.path.display().to_string(),
            source: std::io::Error::other(format!("manifest store: {e}")),
        }
    }

    fn connect(&self) -> Result<rusqlite::Connection> {
        let conn = rusqlite::Connection::open(&self.path).map_err(|e| self.err(e))?;
        conn.busy_timeout(SQLITE_BUSY_TIMEOUT).map_err(|e| self.err(e))?;
        conn.execute_batch(
            "CREATE TABLE IF NOT EXISTS lancelet_manifests (
                 dataset TEXT NOT NULL,
                 version INTEGER NOT NULL,
                 path TEXT NOT NULL,
                 PRIMARY KEY (dataset, version)
             )",
        )
        .map_err(|e| self.err(e))?;
        Ok(conn)
    }

    /// Runs `f` on a fresh connection on a blocking thread when inside a runtime.
    fn run<'a, T: Send + 'static>(
        &'a self,
        f: impl FnOnce(&rusqlite::Connection) -> rusqlite::Result<T> + Send + 'static,
    ) -> BoxFuture<'a, Result<T>> {
        let this = self.clone();
        async move {
            let call = move || {
                let conn = this.connect()?;
                f(&conn).map_err(|e| this.err(e))
            };
            match tokio::runtime::Handle::try_current() {
                Ok(h) => h.spawn_blocking(call).await.map_err(|e| Error::Io {
                    path: "manifest store".into(),
                    source: std::io::Error::other(e.to_string()),
                })?,
                Err(_) => call(),
            }
        }
        .boxed()
    }
}

/// SQLite integers are signed; versions never get near 2^63.
fn sql_version(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

impl ExternalManifestStore for SqliteManifestStore {
    fn get<'a>(&'a self, dataset: &'a str, version: u64) -> BoxFuture<'a, Result<Option<String>>> {
        let dataset = dataset.to_string();
        self.run(move |c| {
            let mut st = c.prepare("SELECT path FROM lancelet_manifests WHERE dataset = ?1 AND version = ?2")?;
            let mut rows = st.query((dataset, sql_version(version)))?;
            rows.next()?.map(|r| r.get::<_, String>(0)).transpose()
        })
    }

    fn latest<'a>(&'a self, dataset: &'a str) -> BoxFuture<'a, Result<Option<(u64, String)>>> {
        let dataset = dataset.to_string();
        self.run(move |c| {
            let mut st = c.prepare(
                "SELECT version, path FROM lancelet_manifests WHERE dataset = ?1 ORDER BY version DESC LIMIT 1",
            )?;
            let mut rows = st.query([dataset])?;
            match rows.next()? {
                Some(r) => Ok(Some((u64::try_from(r.get::<_, i64>(0)?).unwrap_or(0), r.get(1)?))),
                None => Ok(None),
            }
        })
    }

    fn put_if_not_exists<'a>(&'a self, dataset: &'a str, version: u64, path: &'a str) -> BoxFuture<'a, Result<bool>> {
        let (dataset, path) = (dataset.to_string(), path.to_string());
        self.run(move |c| {
            let n = c.execute(
                "INSERT OR IGNORE INTO lancelet_manifests (dataset, version, path) VALUES (?1, ?2, ?3)",
                (dataset, sql_version(version), path),
            )?;
            Ok(n == 1)
        })
    }

    fn put_if_exists<'a>(&'a self, dataset: &'a str, version: u64, path: &'a str) -> BoxFuture<'a, Result<()>> {
        let (owned, p) = (dataset.to_string(), path.to_string());
        let updated = self.run(move |c| {
            c.execute(
                "UPDATE lancelet_manifests SET path = ?3 WHERE dataset = ?1 AND version = ?2",
                (owned, sql_version(version), p),
            )
        });
        async move {
            match updated.await? {
                0 => Err(Error::NotFound {
                    path: format!("manifest store record of version {version} of {dataset}"),
                }),
                _ => Ok(()),
            }
        }
        .boxed()
    }
}

/// Parses the `manifest_store` storage option: `sqlite:/path/to/file.db` (also
/// `sqlite:///path`) or `memory` (this process only).
pub fn parse_manifest_store(spec: &str) -> Result<Arc<dyn ExternalManifestStore>> {
    let spec = spec.trim();
    if spec == "memory" || spec == "memory://" {
        return Ok(MemoryManifestStore::global());
    }
    if let Some(rest) = spec.strip_prefix("sqlite:") {
        let path = rest.strip_prefix("//").unwrap_or(rest);
        if path.is_empty() {
            return Err(Error::InvalidArgument(
                "storage option manifest_store=sqlite: needs a file path, e.g. sqlite:/var/lib/lancelet.db".into(),
            ));
        }
        return Ok(Arc::new(SqliteManifestStore::open(path)?));
    }
    Err(Error::InvalidArgument(format!(
        "storage option manifest_store={spec:?} is not understood (use sqlite:/path/to/file.db or memory)"
    )))
}

/// The part of a staged manifest name after the final one (`-{uuid}`).
fn staging_suffix() -> String {
    format!("-{}", uuid::Uuid::new_v4().simple())
}

/// The final manifest path a staged path stands for, when `path` is one.
fn final_of_staged(path: &str) -> Option<&str> {
    let (head, tail) = path.rsplit_once('-')?;
    let name = head.rsplit('/').next()?;
    (ManifestNaming::parse(name).is_some() && !tail.is_empty() && tail.bytes().all(|b| b.is_ascii_hexdigit()))
        .then_some(head)
}

/// `inner` (the dataset root) with its commits arbitrated by `manifests`, where the
/// dataset's records are kept under `key` (its canonical URI).
pub fn external_commits(
    inner: Arc<dyn Storage>,
    manifests: Arc<dyn ExternalManifestStore>,
    key: impl Into<String>,
) -> ManagedStorage {
    ManagedStorage::new(
        inner,
        Arc::new(ExternalManifests {
            manifests,
            key: key.into(),
        }),
    )
}

/// An [`ExternalManifestStore`] as the [`ManifestAuthority`] of one dataset.
#[derive(Debug)]
struct ExternalManifests {
    manifests: Arc<dyn ExternalManifestStore>,
    /// The dataset's key in the external store (its canonical URI).
    key: String,
}

impl ExternalManifests {
    /// Finishes a commit whose writer stopped after claiming its version: copies the staged
    /// manifest to its final name and records that. Nothing to do when the newest recorded
    /// version is complete.
    async fn repair(&self, inner: &dyn Storage) -> Result<()> {
        let Some((version, path)) = self.manifests.latest(&self.key).await? else {
            return Ok(());
        };
        let Some(final_path) = final_of_staged(&path) else {
            return Ok(());
        };
        let final_path = final_path.to_string();
        if !inner.exists(&final_path).await? {
            let data = match inner.read(&path).await {
                Ok(d) => d,
                // Another reader finished it between our two looks.
                Err(Error::NotFound { .. }) if inner.exists(&final_path).await? => Bytes::new(),
                Err(Error::NotFound { .. }) => {
                    return Err(Error::corrupt(
                        &path,
                        format!("the manifest store records version {version} here but the file is gone"),
                    ))
                }
                Err(e) => return Err(e),
            };
            if !data.is_empty() {
                inner.put(&final_path, data).await?;
            }
        }
        self.manifests.put_if_exists(&self.key, version, &final_path).await?;
        inner.delete(&path).await
    }
}

impl ManifestAuthority for ExternalManifests {
    fn create_manifest<'a>(
        &'a self,
        inner: &'a dyn Storage,
        path: &'a str,
        version: u64,
        _naming: ManifestNaming,
        data: Bytes,
    ) -> BoxFuture<'a, Result<bool>> {
        async move {
            // Finish any interrupted commit first: its version must not be taken twice.
            self.repair(inner).await?;
            if inner.exists(path).await? {
                return Ok(false);
            }
            let staged = format!("{path}{}", staging_suffix());
            inner.put(&staged, data.clone()).await?;
            match self.manifests.put_if_not_exists(&self.key, version, &staged).await {
                Ok(true) => {}
                Ok(false) => {
                    let _ = inner.delete(&staged).await;
                    return Ok(false);
                }
                Err(e) => {
                    // The claim may have landed with its answer lost: the record tells.
                    match self.manifests.get(&self.key, version).await {
                        Ok(Some(p)) if p == staged => {}
                        Ok(_) => {
                            let _ = inner.delete(&staged).await;
                            return Err(e);
                        }
                        // Unknown: the staged file stays, a reader completes the commit if it landed.
                        Err(_) => return Err(e),
                    }
                }
            }
            // The version is ours. From here on, a failure leaves a commit a reader completes.
            inner.put(path, data).await?;
            self.manifests.put_if_exists(&self.key, version, path).await?;
            let _ = inner.delete(&staged).await;
            Ok(true)
        }
        .boxed()
    }

    fn create_other<'a>(&'a self, inner: &'a dyn Storage, path: &'a str, data: Bytes) -> BoxFuture<'a, Result<bool>> {
        async move {
            match inner.put_if_absent(path, data.clone()).await {
                // Small non-manifest files (tags): a check then a write is the best such a
                // store offers.
                Err(Error::Unsupported(_)) => {
                    if inner.exists(path).await? {
                        return Ok(false);
                    }
                    inner.put(path, data).await?;
                    Ok(true)
                }
                other => other,
            }
        }
        .boxed()
    }

    fn before_listing_versions<'a>(&'a self, inner: &'a dyn Storage) -> BoxFuture<'a, Result<()>> {
        self.repair(inner).boxed()
    }

    /// Never: the listing finishes interrupted commits, which probing would skip.
    fn probes_versions(&self, _inner: &dyn Storage) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests: a failed unwrap is a failed test")]
    use super::*;
    use lancelet_io::LocalStore;

    use crate::naming::VERSIONS_DIR;

    fn stores(dir: &Path) -> Vec<Arc<dyn ExternalManifestStore>> {
        vec![
            Arc::new(MemoryManifestStore::default()),
            Arc::new(SqliteManifestStore::open(dir.join("m.db")).unwrap()),
        ]
    }

    #[tokio::test]
    async fn a_version_is_claimed_once() {
        let dir = tempfile::tempdir().unwrap();
        for s in stores(dir.path()) {
            assert_eq!(s.latest("d").await.unwrap(), None);
            assert!(s.put_if_not_exists("d", 1, "a").await.unwrap());
            assert!(!s.put_if_not_exists("d", 1, "b").await.unwrap());
            assert!(s.put_if_not_exists("e", 1, "c").await.unwrap());
            assert!(s.put_if_not_exists("d", 2, "x").await.unwrap());
            s.put_if_exists("d", 2, "y").await.unwrap();
            assert!(s.put_if_exists("d", 3, "y").await.is_err());
            assert_eq!(s.get("d", 1).await.unwrap().as_deref(), Some("a"));
            assert_eq!(s.latest("d").await.unwrap(), Some((2, "y".into())));
            assert_eq!(s.latest("e").await.unwrap(), Some((1, "c".into())));
        }
    }

    #[test]
    fn sqlite_claims_are_exclusive_across_threads() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.db");
        SqliteManifestStore::open(&path).unwrap();
        let wins: Vec<usize> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..8)
                .map(|t| {
                    let path = path.clone();
                    s.spawn(move || {
                        let st = SqliteManifestStore::open(&path).unwrap();
                        (1..=20u64)
                            .filter(|v| {
                                futures::executor::block_on(st.put_if_not_exists("d", *v, &format!("{t}"))).unwrap()
                            })
                            .count()
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert_eq!(wins.iter().sum::<usize>(), 20);
    }

    #[test]
    fn staged_names_map_to_final_names() {
        let f = ManifestNaming::V2.relative_path(3);
        let staged = format!("{f}{}", staging_suffix());
        assert_eq!(final_of_staged(&staged), Some(f.as_str()));
        assert_eq!(final_of_staged(&f), None);
        assert_eq!(ManifestNaming::parse(staged.rsplit('/').next().unwrap()), None);
        assert_eq!(crate::managed::manifest_of(&f), Some((3, ManifestNaming::V2)));
        assert_eq!(crate::managed::manifest_of("_refs/tags/x.json"), None);
        assert!(parse_manifest_store("postgres://x").is_err());
        assert!(parse_manifest_store("sqlite:").is_err());
    }

    /// Claims versions but fails to record the final name, like a writer killed after step 2.
    #[derive(Debug)]
    struct FailsToFinish(MemoryManifestStore);

    impl ExternalManifestStore for FailsToFinish {
        fn get<'a>(&'a self, d: &'a str, v: u64) -> BoxFuture<'a, Result<Option<String>>> {
            self.0.get(d, v)
        }
        fn latest<'a>(&'a self, d: &'a str) -> BoxFuture<'a, Result<Option<(u64, String)>>> {
            self.0.latest(d)
        }
        fn put_if_not_exists<'a>(&'a self, d: &'a str, v: u64, p: &'a str) -> BoxFuture<'a, Result<bool>> {
            self.0.put_if_not_exists(d, v, p)
        }
        fn put_if_exists<'a>(&'a self, _: &'a str, _: u64, _: &'a str) -> BoxFuture<'a, Result<()>> {
            async { Err(Error::Unsupported("injected failure".into())) }.boxed()
        }
    }

    #[tokio::test]
    async fn a_reader_finishes_an_interrupted_commit() {
        let dir = tempfile::tempdir().unwrap();
        let inner: Arc<dyn Storage> = Arc::new(LocalStore::new(dir.path()));
        let broken = Arc::new(FailsToFinish(MemoryManifestStore::default()));
        let writer = external_commits(inner.clone(), broken.clone(), "k");
        let path = ManifestNaming::V2.relative_path(1);
        assert!(writer.put_if_absent(&path, Bytes::from_static(b"m1")).await.is_err());
        // Simulate the crash having happened before the copy: remove the final file.
        inner.delete(&path).await.unwrap();
        let listed = inner.list(VERSIONS_DIR).await.unwrap();
        assert_eq!(listed.len(), 1, "only the staged manifest: {listed:?}");
        // A healthy client on the same external store completes it when listing.
        let records = MemoryManifestStore::default();
        let (v, staged) = broken.latest("k").await.unwrap().unwrap();
        records.put_if_not_exists("k", v, &staged).await.unwrap();
        let reader = external_commits(inner.clone(), Arc::new(records), "k");
        let names = reader.list(VERSIONS_DIR).await.unwrap();
        assert_eq!(names, vec![ManifestNaming::V2.file_name(1)]);
        assert_eq!(&inner.read(&path).await.unwrap()[..], b"m1");
        assert!(!reader.put_if_absent(&path, Bytes::from_static(b"other")).await.unwrap());
        assert!(reader
            .put_if_absent(&ManifestNaming::V2.relative_path(2), Bytes::from_static(b"m2"))
            .await
            .unwrap());
        assert_eq!(reader.list(VERSIONS_DIR).await.unwrap().len(), 2);
    }
}
