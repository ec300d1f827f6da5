//! Datasets on object stores (`memory://`, `s3://`) through the `object_store` crate.
//!
//! [`ObjectStoreStore`] implements [`Store`] over any `object_store` backend rooted at a
//! prefix; [`ObjectFile`] gives the file reader ranged reads of one object. Commits need
//! an atomic create: `put_if_absent` uses the backend's conditional put (`If-None-Match: *`
//! on S3), so two writers can never both create the same manifest. The client retries
//! failed requests (5xx, dropped connections, cut-off bodies); a retried create that finds
//! the object already there reads it back to tell its own landed write from a rival's.
//!
//! [`open_uri`] turns a dataset URI plus pylance-style `storage_options` into a store,
//! refusing option keys `object_store` does not know.

use std::collections::HashMap;
use std::fmt::Debug;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use arrow_buffer::{Buffer, MutableBuffer};
use bytes::Bytes;
use futures::future::BoxFuture;
use futures::{FutureExt, StreamExt};
use lancelet_file::io::ReadAt;
use object_store::aws::{AmazonS3Builder, AmazonS3ConfigKey};
use object_store::memory::InMemory;
use object_store::path::Path as ObjectPath;
use object_store::{ObjectStore, PutMode, PutOptions, PutPayload, RetryConfig};
use tokio::sync::{OnceCell, Semaphore};

use crate::manifest_store::{parse_manifest_store, ExternalCommitStore};
use crate::store::{FileMeta, LocalStore, Store};
use crate::{Error, Result};

/// Concurrent range requests per open object.
const MAX_CONCURRENT_READS: usize = 16;
/// Parts of a multipart upload.
const UPLOAD_PART_BYTES: usize = 16 << 20;
/// Files up to this size are uploaded with one request.
const SINGLE_PUT_BYTES: u64 = 32 << 20;

/// A [`Store`] over an `object_store` backend, rooted at `prefix`.
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

    fn err(&self, path: &str, e: object_store::Error) -> Error {
        let shown = format!("{}/{}", self.display.trim_end_matches('/'), path);
        match e {
            object_store::Error::NotFound { .. } => Error::NotFound { path: shown },
            object_store::Error::AlreadyExists { .. } => Error::AlreadyExists(shown),
            object_store::Error::NotImplemented => Error::Unsupported(format!(
                "{shown}: the object store cannot create objects atomically (conditional put); \
                 set storage option aws_conditional_put=etag if the S3-compatible store supports \
                 If-None-Match, else manifest_store=sqlite:/path/to/file.db"
            )),
            other => Error::Io {
                path: shown,
                source: std::io::Error::other(other.to_string()),
            },
        }
    }
}

fn file_err(path: &str, e: object_store::Error) -> lancelet_file::Error {
    match e {
        object_store::Error::NotFound { .. } => {
            lancelet_file::Error::io(path, std::io::Error::new(std::io::ErrorKind::NotFound, e.to_string()))
        }
        other => lancelet_file::Error::io(path, std::io::Error::other(other.to_string())),
    }
}

impl Store for ObjectStoreStore {
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

    fn open_file<'a>(&'a self, path: &'a str) -> BoxFuture<'a, lancelet_file::Result<Arc<dyn ReadAt>>> {
        async move {
            let file: Arc<dyn ReadAt> = Arc::new(ObjectFile {
                store: self.store.clone(),
                location: self.location(path),
                display: format!("{}/{}", self.display.trim_end_matches('/'), path),
                size: OnceCell::new(),
                permits: Semaphore::new(MAX_CONCURRENT_READS),
            });
            Ok(file)
        }
        .boxed()
    }

    fn upload<'a>(&'a self, path: &'a str, local: &'a Path) -> BoxFuture<'a, Result<u64>> {
        async move {
            let io = |e: std::io::Error| Error::Io {
                path: local.display().to_string(),
                source: e,
            };
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

    fn size(&self) -> BoxFuture<'_, lancelet_file::Result<u64>> {
        async move {
            self.size
                .get_or_try_init(|| async {
                    let meta = self
                        .store
                        .head(&self.location)
                        .await
                        .map_err(|e| file_err(&self.display, e))?;
                    Ok::<u64, lancelet_file::Error>(meta.size)
                })
                .await
                .copied()
        }
        .boxed()
    }

    fn read_range(&self, range: Range<u64>) -> BoxFuture<'_, lancelet_file::Result<Buffer>> {
        async move {
            if range.end < range.start {
                return Err(lancelet_file::Error::corrupt(
                    &self.display,
                    format!("invalid range {range:?}"),
                ));
            }
            if range.is_empty() {
                return Ok(Buffer::from_vec(Vec::<u8>::new()));
            }
            let _permit = self
                .permits
                .acquire()
                .await
                .map_err(|e| lancelet_file::Error::io(&self.display, std::io::Error::other(e.to_string())))?;
            let want = range.end - range.start;
            let bytes = self
                .store
                .get_range(&self.location, range.clone())
                .await
                .map_err(|e| file_err(&self.display, e))?;
            if bytes.len() as u64 != want {
                return Err(lancelet_file::Error::corrupt(
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

/// The process-wide store behind `memory://` URIs.
fn memory() -> Arc<dyn ObjectStore> {
    static MEMORY: OnceLock<Arc<InMemory>> = OnceLock::new();
    MEMORY.get_or_init(|| Arc::new(InMemory::new())).clone()
}

/// The retry policy from pylance's client options (`client_max_retries`, default 10;
/// `client_retry_timeout` in seconds, default 180), and the options left for the store.
/// `download_retry_count` is accepted for compatibility (object_store retries reads itself).
fn retry_config(options: &HashMap<String, String>) -> Result<(RetryConfig, HashMap<String, String>)> {
    let mut retry = RetryConfig::default();
    let mut rest = HashMap::new();
    for (k, v) in options {
        let number = |what: &str| {
            v.trim()
                .parse::<u64>()
                .map_err(|_| Error::InvalidArgument(format!("storage option {what} must be a whole number, got {v:?}")))
        };
        match k.to_ascii_lowercase().as_str() {
            "client_max_retries" => retry.max_retries = number("client_max_retries")? as usize,
            "client_retry_timeout" => retry.retry_timeout = Duration::from_secs(number("client_retry_timeout")?),
            "download_retry_count" => {
                number("download_retry_count")?;
            }
            _ => {
                rest.insert(k.clone(), v.clone());
            }
        }
    }
    Ok((retry, rest))
}

/// Where a dataset lives.
#[derive(Debug, Clone)]
pub struct Location {
    /// Its store.
    pub store: Arc<dyn Store>,
    /// The local directory, for datasets on local disk.
    pub local_root: Option<PathBuf>,
}

/// Resolves a dataset URI: a local path or `file://` URI, `memory://name`, or
/// `s3://bucket/prefix` configured by `options` (pylance's `storage_options` keys, e.g.
/// `aws_endpoint`, `aws_region`, `aws_access_key_id`, `allow_http`, `timeout`,
/// `client_max_retries`, `client_retry_timeout`). On any store, `manifest_store`
/// (`sqlite:/path/to/file.db` or `memory`) routes commits through an external manifest store,
/// for S3-compatible stores without conditional put (`aws_conditional_put=disabled`).
pub fn open_uri(uri: &str, options: &HashMap<String, String>) -> Result<Location> {
    // `base_{id}.{key}` options configure the dataset's other base paths, not its root.
    let mut options = crate::bases::own_options(options);
    let manifest_store = options
        .keys()
        .find(|k| k.eq_ignore_ascii_case(MANIFEST_STORE_OPTION))
        .cloned()
        .and_then(|k| options.remove(&k));
    let (loc, key) = open_plain(uri, &options)?;
    let Some(spec) = manifest_store else {
        return Ok(loc);
    };
    let manifests = parse_manifest_store(&spec)?;
    Ok(Location {
        store: Arc::new(ExternalCommitStore::new(loc.store, manifests, key)),
        local_root: loc.local_root,
    })
}

/// The storage option naming an external manifest store (see [`crate::manifest_store`]).
pub const MANIFEST_STORE_OPTION: &str = "manifest_store";

/// [`open_uri`] without an external manifest store; also returns the dataset's canonical
/// name (its key in a manifest store).
fn open_plain(uri: &str, options: &HashMap<String, String>) -> Result<(Location, String)> {
    let scheme = uri.split_once("://").map(|(s, _)| s.to_ascii_lowercase());
    match scheme.as_deref() {
        None | Some("file") => {
            if !options.is_empty() {
                let keys: Vec<&String> = options.keys().collect();
                return Err(Error::InvalidArgument(format!(
                    "storage options {keys:?} do not apply to local datasets"
                )));
            }
            let path = PathBuf::from(uri.strip_prefix("file://").unwrap_or(uri));
            let key = std::path::absolute(&path).unwrap_or_else(|_| path.clone());
            let key = format!("file://{}", key.display().to_string().trim_end_matches('/'));
            let loc = Location {
                store: Arc::new(LocalStore::new(&path)),
                local_root: Some(path),
            };
            Ok((loc, key))
        }
        Some("memory") => {
            if let Some(k) = options.keys().next() {
                return Err(Error::InvalidArgument(format!(
                    "unknown storage option {k:?} for {uri} (memory datasets take none but manifest_store)"
                )));
            }
            let rest = &uri["memory://".len()..];
            let loc = Location {
                store: Arc::new(ObjectStoreStore::new(memory(), rest, uri)),
                local_root: None,
            };
            Ok((loc, format!("memory://{}", rest.trim_matches('/'))))
        }
        Some("s3") | Some("s3a") => {
            let url = url::Url::parse(uri).map_err(|e| Error::InvalidArgument(format!("bad URI {uri:?}: {e}")))?;
            let bucket = url
                .host_str()
                .filter(|b| !b.is_empty())
                .ok_or_else(|| Error::InvalidArgument(format!("{uri:?} names no bucket")))?;
            let mut b = AmazonS3Builder::from_env().with_bucket_name(bucket);
            let mut conditional = false;
            let (retry, options) = retry_config(options)?;
            b = b.with_retry(retry);
            for (k, v) in &options {
                let key = AmazonS3ConfigKey::from_str(&k.to_ascii_lowercase())
                    .map_err(|_| Error::InvalidArgument(format!("unknown storage option {k:?} for {uri}")))?;
                conditional |= matches!(key, AmazonS3ConfigKey::ConditionalPut);
                b = b.with_config(key, v);
            }
            if !conditional {
                // Atomic manifest creation needs If-None-Match, which S3 and its clones honour.
                b = b.with_config(AmazonS3ConfigKey::ConditionalPut, "etag");
            }
            let store = b
                .build()
                .map_err(|e| Error::InvalidArgument(format!("cannot configure {uri}: {e}")))?;
            let key = format!("s3://{bucket}/{}", url.path().trim_matches('/'));
            let loc = Location {
                store: Arc::new(ObjectStoreStore::new(Arc::new(store), url.path(), uri)),
                local_root: None,
            };
            Ok((loc, key))
        }
        Some(other) => Err(Error::Unsupported(format!(
            "{other}:// URIs (supported: local paths, file://, memory://, s3://)"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
