//! Object stores (`memory://`, `s3://`) through the `object_store` crate.
//!
//! [`ObjectStoreStore`] implements [`Storage`] over any `object_store` backend rooted at a
//! prefix; [`ObjectFile`] gives file readers ranged reads of one object, a bounded number
//! at a time. Commits need an atomic create: `put_if_absent` uses the backend's conditional
//! put (`If-None-Match: *` on S3), so two writers can never both create the same manifest.
//! The client retries failed requests (5xx, dropped connections, cut-off bodies); a retried
//! create that finds the object already there reads it back to tell its own landed write
//! from a rival's. Large files are uploaded in parts, a bounded number in flight.

use std::fmt::Debug;
use std::ops::Range;
use std::path::Path;
use std::sync::Arc;

use arrow_buffer::{Buffer, MutableBuffer};
use bytes::Bytes;
use futures::future::BoxFuture;
use futures::{FutureExt, StreamExt};
use object_store::path::Path as ObjectPath;
use object_store::{ObjectStore, PutMode, PutOptions, PutPayload};
use tokio::sync::{OnceCell, Semaphore};

use crate::error::{Error, Result};
use crate::read::ReadAt;
use crate::storage::{FileMeta, Storage};

/// Concurrent range requests per open object.
const MAX_CONCURRENT_READS: usize = 16;
/// Parts of a multipart upload.
const UPLOAD_PART_BYTES: usize = 16 << 20;
/// Files up to this size are uploaded with one request.
const SINGLE_PUT_BYTES: u64 = 32 << 20;

/// A [`Storage`] over an `object_store` backend, rooted at `prefix`.
#[derive(Debug, Clone)]
pub struct ObjectStoreStore {
    store: Arc<dyn ObjectStore>,
    prefix: String,
    display: String,
}

impl ObjectStoreStore {
    /// A store of the objects under `prefix` (no leading or trailing `/`) in `store`;
    /// `display` names it in messages (usually the URI).
    pub fn new(store: Arc<dyn ObjectStore>, prefix: &str, display: impl Into<String>) -> Self {
        Self {
            store,
            prefix: prefix.trim_matches('/').to_string(),
            display: display.into(),
        }
    }

    fn location(&self, path: &str) -> ObjectPath {
        let path = path.trim_matches('/');
        if self.prefix.is_empty() {
            ObjectPath::from(path)
        } else if path.is_empty() {
            ObjectPath::from(self.prefix.as_str())
        } else {
            ObjectPath::from(format!("{}/{path}", self.prefix))
        }
    }

    /// Whether the object at `location` holds exactly `data` (`Ok(false)` when it holds
    /// something else or nothing; an error when it cannot be read).
    async fn holds(&self, location: &ObjectPath, data: &Bytes) -> object_store::Result<bool> {
        match self.store.get(location).await {
            Ok(got) => Ok(got.bytes().await? == *data),
            Err(object_store::Error::NotFound { .. }) => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// `path` as shown in messages: the root's display form joined with `path`.
    fn shown(&self, path: &str) -> String {
        let path = path.trim_start_matches('/');
        if self.display.ends_with("://") {
            format!("{}{path}", self.display)
        } else {
            format!("{}/{path}", self.display.trim_end_matches('/'))
        }
    }

    fn err(&self, path: &str, e: object_store::Error) -> Error {
        Error::object_store(&self.shown(path), e)
    }

    /// Opens the object at `path` for ranged reads (its size is asked for on first use).
    pub fn open_object(&self, path: &str) -> ObjectFile {
        ObjectFile {
            store: self.store.clone(),
            location: self.location(path),
            display: self.shown(path),
            size: OnceCell::new(),
            permits: Semaphore::new(MAX_CONCURRENT_READS),
        }
    }
}

/// What [`ObjectStoreStore::head`] reports about one object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObjectHead {
    /// Its size in bytes.
    pub size: u64,
    /// When it was last written.
    pub modified: std::time::SystemTime,
    /// The store's entity tag (S3's `ETag`, quotes included), when it gives one.
    pub e_tag: Option<String>,
}

impl ObjectStoreStore {
    /// The object key of `path` in the store (the prefix joined with `path`): how catalogs
    /// name an object (pylance's namespace `manifest_path` on S3 is this key).
    pub fn key(&self, path: &str) -> String {
        self.location(path).to_string()
    }

    /// Size, time and entity tag of the object at `path`; `None` when there is none.
    pub async fn head(&self, path: &str) -> Result<Option<ObjectHead>> {
        match self.store.head(&self.location(path)).await {
            Ok(meta) => Ok(Some(ObjectHead {
                size: meta.size,
                modified: meta.last_modified.into(),
                e_tag: meta.e_tag,
            })),
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(self.err(path, e)),
        }
    }

    /// Every object under the directory `dir`, at any depth, as paths relative to `dir`
    /// (sorted).
    pub async fn list_all(&self, dir: &str) -> Result<Vec<String>> {
        let prefix = self.location(dir);
        let base = prefix.to_string();
        let mut listing = self.store.list(Some(&prefix));
        let mut out = Vec::new();
        while let Some(meta) = listing.next().await {
            let meta = meta.map_err(|e| self.err(dir, e))?;
            let full = meta.location.to_string();
            let rel = if base.is_empty() {
                full.as_str()
            } else {
                full.strip_prefix(&base)
                    .map(|r| r.trim_start_matches('/'))
                    .unwrap_or(&full)
            };
            out.push(rel.to_string());
        }
        out.sort();
        Ok(out)
    }

    /// Deletes every object under the directory `dir` (at any depth); returns how many.
    pub async fn delete_all(&self, dir: &str) -> Result<usize> {
        let dir = dir.trim_matches('/');
        if dir.is_empty() {
            return Err(Error::InvalidArgument(format!(
                "refusing to delete everything under the root {}",
                self.display
            )));
        }
        let names = self.list_all(dir).await?;
        for name in &names {
            Storage::delete(self, &format!("{dir}/{name}")).await?;
        }
        Ok(names.len())
    }
}

impl Storage for ObjectStoreStore {
    fn root_display(&self) -> String {
        self.display.clone()
    }

    fn read<'a>(&'a self, path: &'a str) -> BoxFuture<'a, Result<Bytes>> {
        async move {
            let got = self
                .store
                .get(&self.location(path))
                .await
                .map_err(|e| self.err(path, e))?;
            got.bytes().await.map_err(|e| self.err(path, e))
        }
        .boxed()
    }

    fn put<'a>(&'a self, path: &'a str, data: Bytes) -> BoxFuture<'a, Result<()>> {
        async move {
            self.store
                .put(&self.location(path), PutPayload::from(data))
                .await
                .map_err(|e| self.err(path, e))?;
            Ok(())
        }
        .boxed()
    }

    fn put_if_absent<'a>(&'a self, path: &'a str, data: Bytes) -> BoxFuture<'a, Result<bool>> {
        async move {
            let opts = PutOptions {
                mode: PutMode::Create,
                ..PutOptions::default()
            };
            let location = self.location(path);
            let outcome = self
                .store
                .put_opts(&location, PutPayload::from(data.clone()), opts)
                .await;
            match outcome {
                Ok(_) => Ok(true),
                // The client retries a request whose answer was lost (a 5xx, a dropped
                // connection) even when the server did create the object; the retry then
                // finds "our" object. The bytes tell: every file created this way (manifests,
                // tags) carries a fresh uuid or nanosecond timestamp, so an identical object
                // is the one this call wrote, not a rival's.
                // When that cannot be read, whether we created it is unknown: an error, never
                // a guess (`false` would have a committer apply its change a second time).
                Err(object_store::Error::AlreadyExists { .. }) | Err(object_store::Error::Precondition { .. }) => {
                    self.holds(&location, &data).await.map_err(|e| self.err(path, e))
                }
                // An error may hide a create that landed: reporting failure then would tell
                // the user a landed commit failed.
                Err(e) => match self.holds(&location, &data).await {
                    Ok(true) => Ok(true),
                    _ => Err(self.err(path, e)),
                },
            }
        }
        .boxed()
    }

    fn list<'a>(&'a self, dir: &'a str) -> BoxFuture<'a, Result<Vec<String>>> {
        async move {
            let prefix = self.location(dir);
            let listed = self
                .store
                .list_with_delimiter(Some(&prefix))
                .await
                .map_err(|e| self.err(dir, e))?;
            let mut out: Vec<String> = listed
                .objects
                .iter()
                .filter_map(|o| o.location.filename().map(str::to_string))
                .chain(
                    listed
                        .common_prefixes
                        .iter()
                        .filter_map(|p| p.filename().map(str::to_string)),
                )
                .collect();
            out.sort();
            Ok(out)
        }
        .boxed()
    }

    fn list_meta<'a>(&'a self, dir: &'a str) -> BoxFuture<'a, Result<Vec<FileMeta>>> {
        async move {
            let listed = self
                .store
                .list_with_delimiter(Some(&self.location(dir)))
                .await
                .map_err(|e| self.err(dir, e))?;
            let mut out: Vec<FileMeta> = listed
                .objects
                .iter()
                .filter_map(|o| {
                    Some(FileMeta {
                        name: o.location.filename()?.to_string(),
                        size: o.size,
                        modified: o.last_modified.into(),
                    })
                })
                .collect();
            out.sort_by(|a, b| a.name.cmp(&b.name));
            Ok(out)
        }
        .boxed()
    }

    fn delete<'a>(&'a self, path: &'a str) -> BoxFuture<'a, Result<()>> {
        async move {
            match self.store.delete(&self.location(path)).await {
                Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
                Err(e) => Err(self.err(path, e)),
            }
        }
        .boxed()
    }

    fn exists<'a>(&'a self, path: &'a str) -> BoxFuture<'a, Result<bool>> {
        async move {
            match self.store.head(&self.location(path)).await {
                Ok(_) => Ok(true),
                Err(object_store::Error::NotFound { .. }) => {
                    // A "directory" exists when something is under it.
                    let prefix = self.location(path);
                    let mut listing = self.store.list(Some(&prefix));
                    match listing.next().await {
                        None => Ok(false),
                        Some(Ok(_)) => Ok(true),
                        Some(Err(e)) => Err(self.err(path, e)),
                    }
                }
                Err(e) => Err(self.err(path, e)),
            }
        }
        .boxed()
    }

    fn open_file<'a>(&'a self, path: &'a str) -> BoxFuture<'a, Result<Arc<dyn ReadAt>>> {
        async move {
            let file: Arc<dyn ReadAt> = Arc::new(self.open_object(path));
            Ok(file)
        }
        .boxed()
    }

    fn upload<'a>(&'a self, path: &'a str, local: &'a Path) -> BoxFuture<'a, Result<u64>> {
        async move {
            let io = |e: std::io::Error| Error::io(&local.display().to_string(), e);
            let size = std::fs::metadata(local).map_err(io)?.len();
            let location = self.location(path);
            if size <= SINGLE_PUT_BYTES {
                let data = std::fs::read(local).map_err(io)?;
                self.store
                    .put(&location, PutPayload::from(data))
                    .await
                    .map_err(|e| self.err(path, e))?;
                return Ok(size);
            }
            let mut upload = self
                .store
                .put_multipart(&location)
                .await
                .map_err(|e| self.err(path, e))?;
            let mut file = std::fs::File::open(local).map_err(io)?;
            // Parts upload in the background while the next is read; at most 8 in flight:
            // bounded memory for any file size.
            let mut parts = tokio::task::JoinSet::new();
            let sent = async {
                loop {
                    let part = read_part(&mut file, UPLOAD_PART_BYTES).map_err(io)?;
                    if part.is_empty() {
                        break;
                    }
                    if parts.len() >= 8 {
                        joined(parts.join_next().await).map_err(|e| self.err(path, e))?;
                    }
                    parts.spawn(upload.put_part(PutPayload::from(part)));
                }
                while let Some(done) = parts.join_next().await {
                    joined(Some(done)).map_err(|e| self.err(path, e))?;
                }
                upload.complete().await.map_err(|e| self.err(path, e))
            }
            .await;
            if let Err(e) = sent {
                // Parts already stored cost money until the upload is aborted (best effort:
                // the store may be the thing failing).
                parts.shutdown().await;
                let _ = upload.abort().await;
                return Err(e);
            }
            Ok(size)
        }
        .boxed()
    }
}

/// Reads up to `len` bytes of `file` (fewer only at its end).
fn read_part(file: &mut std::fs::File, len: usize) -> std::io::Result<Vec<u8>> {
    let mut part = Vec::with_capacity(len);
    std::io::Read::read_to_end(&mut std::io::Read::take(&mut *file, len as u64), &mut part)?;
    Ok(part)
}

/// The outcome of a finished part upload (`None`: none was running).
fn joined(
    done: Option<std::result::Result<object_store::Result<()>, tokio::task::JoinError>>,
) -> object_store::Result<()> {
    match done {
        None | Some(Ok(Ok(()))) => Ok(()),
        Some(Ok(Err(e))) => Err(e),
        Some(Err(e)) => Err(object_store::Error::Generic {
            store: "multipart upload",
            source: Box::new(e),
        }),
    }
}

/// One object read by byte ranges, with bounded concurrency.
#[derive(Debug)]
pub struct ObjectFile {
    store: Arc<dyn ObjectStore>,
    location: ObjectPath,
    display: String,
    size: OnceCell<u64>,
    permits: Semaphore,
}

/// Copies `bytes` into a 64-byte aligned buffer (decoded arrays point into read buffers).
fn aligned(bytes: &[u8]) -> Buffer {
    let mut m = MutableBuffer::with_capacity(bytes.len());
    m.extend_from_slice(bytes);
    m.into()
}

impl ReadAt for ObjectFile {
    fn path(&self) -> &str {
        &self.display
    }

    fn size(&self) -> BoxFuture<'_, Result<u64>> {
        async move {
            self.size
                .get_or_try_init(|| async {
                    let meta = self
                        .store
                        .head(&self.location)
                        .await
                        .map_err(|e| Error::object_store(&self.display, e))?;
                    Ok::<u64, Error>(meta.size)
                })
                .await
                .copied()
        }
        .boxed()
    }

    fn read_range(&self, range: Range<u64>) -> BoxFuture<'_, Result<Buffer>> {
        async move {
            if range.end < range.start {
                return Err(Error::corrupt(&self.display, format!("invalid range {range:?}")));
            }
            if range.is_empty() {
                return Ok(Buffer::from_vec(Vec::<u8>::new()));
            }
            let _permit = self
                .permits
                .acquire()
                .await
                .map_err(|e| Error::io(&self.display, std::io::Error::other(e)))?;
            let want = range.end - range.start;
            let bytes = self
                .store
                .get_range(&self.location, range.clone())
                .await
                .map_err(|e| Error::object_store(&self.display, e))?;
            if bytes.len() as u64 != want {
                return Err(Error::corrupt(
                    &self.display,
                    format!("asked for bytes {range:?}, got {}", bytes.len()),
                ));
            }
            Ok(aligned(&bytes))
        }
        .boxed()
    }

    fn coalesce_gap(&self) -> u64 {
        // A request costs tens of milliseconds: reading 1 MiB more is cheaper than two.
        1 << 20
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use object_store::memory::InMemory;

    fn store() -> ObjectStoreStore {
        ObjectStoreStore::new(Arc::new(InMemory::new()), "ds", "memory://ds")
    }

    #[tokio::test]
    async fn a_create_that_finds_its_own_bytes_is_ours_and_a_rivals_is_not() {
        let s = store();
        assert!(s
            .put_if_absent("_versions/1.manifest", Bytes::from_static(b"mine"))
            .await
            .unwrap());
        // What a retried create whose first attempt landed sees: the same bytes.
        assert!(s
            .put_if_absent("_versions/1.manifest", Bytes::from_static(b"mine"))
            .await
            .unwrap());
        assert!(!s
            .put_if_absent("_versions/1.manifest", Bytes::from_static(b"theirs"))
            .await
            .unwrap());
        assert_eq!(
            s.read("_versions/1.manifest").await.unwrap(),
            Bytes::from_static(b"mine")
        );
    }

    #[tokio::test]
    async fn keys_heads_recursive_listings_and_deletes() {
        let s = store();
        for p in ["t/_versions/1.manifest", "t/data/a.lance", "t/data/sub/b", "u/x"] {
            s.put(p, Bytes::from_static(b"abc")).await.unwrap();
        }
        assert_eq!(s.key("t/_versions/1.manifest"), "ds/t/_versions/1.manifest");
        let head = s.head("t/data/a.lance").await.unwrap().unwrap();
        assert_eq!(head.size, 3);
        assert_eq!(s.head("t/nothing").await.unwrap(), None);
        assert_eq!(
            s.list_all("t").await.unwrap(),
            vec!["_versions/1.manifest", "data/a.lance", "data/sub/b"]
        );
        assert!(s.delete_all("").await.is_err());
        assert_eq!(s.delete_all("t").await.unwrap(), 3);
        assert!(s.list_all("t").await.unwrap().is_empty());
        assert_eq!(s.list_all("").await.unwrap(), vec!["u/x"]);
    }

    #[tokio::test]
    async fn large_uploads_go_in_parts_and_arrive_whole() {
        let s = store();
        let dir = tempfile::tempdir().unwrap();
        let local = dir.path().join("big");
        let data: Vec<u8> = (0..SINGLE_PUT_BYTES as usize + UPLOAD_PART_BYTES + 7)
            .map(|i| (i % 251) as u8)
            .collect();
        std::fs::write(&local, &data).unwrap();
        assert_eq!(s.upload("data/big.lance", &local).await.unwrap(), data.len() as u64);
        assert_eq!(s.read("data/big.lance").await.unwrap(), Bytes::from(data));
    }
}
