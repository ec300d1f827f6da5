//! URIs and pylance-style `storage_options`, resolved into stores.
//!
//! A dataset root ([`open_root`]) or a single file ([`open_file`], [`file_target`]) is named
//! by a local path, a `file://` URI, `memory://name` (a store shared by the whole process) or
//! `s3://bucket/prefix`, configured by `storage_options` keys as pylance spells them
//! (`aws_endpoint`, `aws_region`, `aws_access_key_id`, `allow_http`, `timeout`,
//! `client_max_retries`, `client_retry_timeout`, ...). Keys `object_store` does not know are
//! refused rather than ignored, and local paths take no options at all.

use std::collections::HashMap;
use std::path::PathBuf;
use std::str::FromStr;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use object_store::aws::{AmazonS3Builder, AmazonS3ConfigKey};
use object_store::memory::InMemory;
use object_store::{ObjectStore, RetryConfig};

use crate::error::{Error, Result};
use crate::local::{LocalFile, LocalStore};
use crate::object::ObjectStoreStore;
use crate::read::ReadAt;
use crate::storage::Storage;

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

/// What kind of store a URI names.
#[derive(Debug, Clone)]
pub enum RootKind {
    /// A local directory.
    Local(LocalStore),
    /// An object store prefix (`memory://`, `s3://`).
    Object(ObjectStoreStore),
}

/// A resolved dataset root.
#[derive(Debug, Clone)]
pub struct Root {
    /// Its store.
    pub kind: RootKind,
    /// The local directory, for roots on local disk.
    pub local_root: Option<PathBuf>,
    /// A canonical name of the root (`file:///abs/path`, `memory://name`,
    /// `s3://bucket/prefix`), the same for every spelling of the same place.
    pub key: String,
}

impl Root {
    /// The store as a trait object.
    pub fn storage(&self) -> Arc<dyn Storage> {
        match &self.kind {
            RootKind::Local(s) => Arc::new(s.clone()),
            RootKind::Object(s) => Arc::new(s.clone()),
        }
    }
}

fn refuse_local_options(options: &HashMap<String, String>) -> Result<()> {
    if options.is_empty() {
        return Ok(());
    }
    let mut keys: Vec<&String> = options.keys().collect();
    keys.sort();
    Err(Error::InvalidArgument(format!(
        "storage options {keys:?} do not apply to local paths"
    )))
}

/// A configured S3 client for `bucket` (the URI is named in messages).
fn s3(uri: &str, bucket: &str, options: &HashMap<String, String>) -> Result<Arc<dyn ObjectStore>> {
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
    Ok(Arc::new(store))
}

/// The local path a URI names, or `None` for a URI of another scheme (`memory://`, `s3://`).
///
/// A plain path is returned as it is. A `file:` URI (`file:///abs`, `file://localhost/abs`,
/// `file:/abs`, or the lenient `file://relative`) is decoded as RFC 8089 says: `%20` is a space,
/// `%23` a `#`, `%25` a `%`, and UTF-8 escapes give non-ASCII names, so
/// `pathlib.Path(...).as_uri()` names the same directory pylance opens. Bytes that are not
/// UTF-8 once decoded stay as bytes (unix paths are byte strings).
pub fn local_path(uri: &str) -> Option<PathBuf> {
    let lower = uri.get(..5).map(str::to_ascii_lowercase);
    if lower.as_deref() != Some("file:") {
        return (!uri.contains("://")).then(|| PathBuf::from(uri));
    }
    let rest = &uri[5..];
    let rest = match rest.strip_prefix("//") {
        Some(after) => after
            .strip_prefix("localhost")
            .filter(|p| p.starts_with('/'))
            .unwrap_or(after),
        None => rest,
    };
    Some(decoded_path(rest))
}

/// `text` with its `%XX` escapes decoded into bytes, as a path.
fn decoded_path(text: &str) -> PathBuf {
    let bytes: Vec<u8> = percent_encoding::percent_decode_str(text).collect();
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStringExt;
        PathBuf::from(std::ffi::OsString::from_vec(bytes))
    }
    #[cfg(not(unix))]
    {
        PathBuf::from(String::from_utf8_lossy(&bytes).into_owned())
    }
}

/// Resolves a root URI: a local path or `file://` URI, `memory://name`, or
/// `s3://bucket/prefix` configured by `options`.
pub fn open_root(uri: &str, options: &HashMap<String, String>) -> Result<Root> {
    if let Some(path) = local_path(uri) {
        refuse_local_options(options)?;
        let key = std::path::absolute(&path).unwrap_or_else(|_| path.clone());
        let key = format!("file://{}", key.display().to_string().trim_end_matches('/'));
        return Ok(Root {
            kind: RootKind::Local(LocalStore::new(&path)),
            local_root: Some(path),
            key,
        });
    }
    let scheme = uri.split_once("://").map(|(s, _)| s.to_ascii_lowercase());
    match scheme.as_deref() {
        Some("memory") => {
            if let Some(k) = options.keys().next() {
                return Err(Error::InvalidArgument(format!(
                    "unknown storage option {k:?} for {uri} (memory stores take none)"
                )));
            }
            let rest = &uri["memory://".len()..];
            Ok(Root {
                kind: RootKind::Object(ObjectStoreStore::new(memory(), rest, uri)),
                local_root: None,
                key: format!("memory://{}", rest.trim_matches('/')),
            })
        }
        Some("s3") | Some("s3a") => {
            let url = url::Url::parse(uri).map_err(|e| Error::InvalidArgument(format!("bad URI {uri:?}: {e}")))?;
            let bucket = url
                .host_str()
                .filter(|b| !b.is_empty())
                .ok_or_else(|| Error::InvalidArgument(format!("{uri:?} names no bucket")))?;
            let store = s3(uri, bucket, options)?;
            Ok(Root {
                kind: RootKind::Object(ObjectStoreStore::new(store, url.path(), uri)),
                local_root: None,
                key: format!("s3://{bucket}/{}", url.path().trim_matches('/')),
            })
        }
        other => Err(Error::Unsupported(format!(
            "{}:// URIs (supported: local paths, file://, memory://, s3://)",
            other.unwrap_or_default()
        ))),
    }
}

/// Where a single file named by a URI lives.
#[derive(Debug, Clone)]
pub enum FileTarget {
    /// A local file.
    Local(PathBuf),
    /// An object: `key` under `store`'s root.
    Object {
        /// The store of the object's directory.
        store: ObjectStoreStore,
        /// The object's name under that store's root.
        key: String,
    },
}

/// Resolves the URI of a single file (see [`open_root`] for the forms and options).
pub fn file_target(uri: &str, options: &HashMap<String, String>) -> Result<FileTarget> {
    if let Some(path) = local_path(uri) {
        refuse_local_options(options)?;
        return Ok(FileTarget::Local(path));
    }
    let (scheme, rest) = uri.split_once("://").unwrap_or(("", uri));
    let (dir, name) = match rest.rsplit_once('/') {
        Some((dir, name)) => (format!("{scheme}://{dir}"), name),
        None => (format!("{scheme}://"), rest),
    };
    if name.is_empty() {
        return Err(Error::InvalidArgument(format!("{uri:?} names a directory, not a file")));
    }
    match open_root(&dir, options)?.kind {
        RootKind::Local(s) => Ok(FileTarget::Local(s.root().join(name))),
        RootKind::Object(store) => Ok(FileTarget::Object {
            store,
            key: name.to_string(),
        }),
    }
}

/// Opens the file at `uri` for ranged reads.
pub async fn open_file(uri: &str, options: &HashMap<String, String>) -> Result<Arc<dyn ReadAt>> {
    match file_target(uri, options)? {
        FileTarget::Local(path) => Ok(Arc::new(LocalFile::open(&path.display().to_string())?)),
        FileTarget::Object { store, key } => {
            let file = store.open_object(&key);
            // Fail at open, as a local file does, when the object is missing.
            file.size().await?;
            Ok(Arc::new(file))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;

    fn no_options() -> HashMap<String, String> {
        HashMap::new()
    }

    #[test]
    fn file_uris_are_percent_decoded() {
        let cases = [
            ("/data/my data/x.lance", Some("/data/my data/x.lance")),
            ("relative/x", Some("relative/x")),
            ("file:///data/my%20data/items.lance", Some("/data/my data/items.lance")),
            ("file://localhost/data/a%23b%25c", Some("/data/a#b%c")),
            ("FILE:///d/caf%C3%A9", Some("/d/café")),
            ("file:/d/x%20y", Some("/d/x y")),
            ("file://rel/x", Some("rel/x")),
            ("file:///d/100%", Some("/d/100%")),
            ("s3://bucket/my%20data", None),
            ("memory://x", None),
        ];
        for (uri, want) in cases {
            assert_eq!(local_path(uri), want.map(PathBuf::from), "{uri}");
        }
    }

    #[tokio::test]
    async fn a_percent_encoded_file_uri_opens_the_decoded_directory() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("my data #1 café");
        std::fs::create_dir(&real).unwrap();
        std::fs::write(real.join("f.bin"), b"abc").unwrap();
        let encoded: String = real
            .to_str()
            .unwrap()
            .bytes()
            .map(|b| match b {
                b'/' | b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'.' | b'_' | b'-' => (b as char).to_string(),
                _ => format!("%{b:02X}"),
            })
            .collect();
        let root = open_root(&format!("file://{encoded}"), &no_options()).unwrap();
        assert_eq!(root.local_root.as_deref(), Some(real.as_path()));
        match file_target(&format!("file://{encoded}/f.bin"), &no_options()).unwrap() {
            FileTarget::Local(p) => assert_eq!(p, real.join("f.bin")),
            other => panic!("{other:?}"),
        }
    }

    #[tokio::test]
    async fn memory_files_written_through_a_root_open_by_uri() {
        let root = open_root("memory://uri-test/ds", &no_options()).unwrap();
        let data: Vec<u8> = (0..100).collect();
        root.storage()
            .put("data/a.lance", Bytes::from(data.clone()))
            .await
            .unwrap();
        let file = open_file("memory://uri-test/ds/data/a.lance", &no_options())
            .await
            .unwrap();
        assert_eq!(file.size().await.unwrap(), 100);
        assert_eq!(file.read_range(10..20).await.unwrap().as_slice(), &data[10..20]);
        assert_eq!(file.path(), "memory://uri-test/ds/data/a.lance");
        let missing = open_file("memory://uri-test/ds/data/b.lance", &no_options()).await;
        assert!(matches!(missing, Err(Error::NotFound { .. })), "{missing:?}");
    }

    #[tokio::test]
    async fn a_file_at_the_top_of_the_memory_store() {
        let FileTarget::Object { store, key } = file_target("memory://top.lance", &no_options()).unwrap() else {
            panic!("not an object");
        };
        assert_eq!(key, "top.lance");
        store.put(&key, Bytes::from_static(b"x")).await.unwrap();
        let file = open_file("memory://top.lance", &no_options()).await.unwrap();
        assert_eq!(file.path(), "memory://top.lance");
    }

    #[test]
    fn local_paths_take_no_options_and_unknown_schemes_are_refused() {
        let opts = HashMap::from([("aws_region".to_string(), "x".to_string())]);
        let path = std::env::temp_dir().join("x.lance");
        let local = path.to_str().unwrap();
        assert!(matches!(file_target(local, &opts), Err(Error::InvalidArgument(_))));
        assert!(matches!(
            file_target(&format!("file://{local}"), &no_options()),
            Ok(FileTarget::Local(p)) if p == path
        ));
        assert!(matches!(
            open_root("gs://b/x", &no_options()),
            Err(Error::Unsupported(_))
        ));
        let bad = HashMap::from([("no_such_option".to_string(), "1".to_string())]);
        assert!(matches!(open_root("s3://b/x", &bad), Err(Error::InvalidArgument(_))));
        assert!(matches!(
            file_target("memory://dir/", &no_options()),
            Err(Error::InvalidArgument(_))
        ));
    }
}
