//! Datasets on object stores (`memory://`, `s3://`), and [`open_uri`], which resolves any
//! dataset URI.
//!
//! The stores are [`lancelet_io`]'s: ranged reads, conditional puts for atomic commits,
//! multipart uploads and the client's retries. This module adds what belongs to the table
//! layer: `base_{id}.{key}` options of other base paths, and an external manifest store
//! (`manifest_store`) wrapped around the dataset's store.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use lancelet_io::{RootKind, Storage};

use crate::manifest_store::{external_commits, parse_manifest_store};
use crate::Result;

/// Where a dataset lives.
#[derive(Debug, Clone)]
pub struct Location {
    /// Its store.
    pub store: Arc<dyn Storage>,
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
        store: Arc::new(external_commits(loc.store, manifests, key)),
        local_root: loc.local_root,
    })
}

/// Whether the store a URI names is configured by storage options (object stores other
/// than `memory://`; not local paths or `file://`).
pub fn takes_store_options(uri: &str) -> bool {
    match uri.split_once("://") {
        None => false,
        Some((scheme, _)) => !matches!(scheme.to_ascii_lowercase().as_str(), "file" | "memory"),
    }
}

/// The storage option naming an external manifest store (see [`crate::manifest_store`]).
pub const MANIFEST_STORE_OPTION: &str = "manifest_store";

/// [`open_uri`] without an external manifest store; also returns the dataset's canonical
/// name (its key in a manifest store).
fn open_plain(uri: &str, options: &HashMap<String, String>) -> Result<(Location, String)> {
    // Local disk and `memory://` take no options. pylance ignores the ones it is given
    // there, and users give them: a local dataset with bases on S3 is opened with the
    // (unprefixed) S3 options its bases need. They stay with the caller for the bases.
    let none = HashMap::new();
    let options = if takes_store_options(uri) { options } else { &none };
    let root = lancelet_io::open_root(uri, options)?;
    let store: Arc<dyn Storage> = match root.kind {
        RootKind::Local(s) => Arc::new(s),
        RootKind::Object(s) => Arc::new(s),
    };
    let loc = Location {
        store,
        local_root: root.local_root,
    };
    Ok((loc, root.key))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests: a failed unwrap is a failed test")]
    use super::*;

    #[test]
    fn local_and_memory_roots_ignore_store_options_and_s3_checks_them() {
        let opts = HashMap::from([
            ("aws_region".to_string(), "us-east-1".to_string()),
            ("base_1.aws_region".to_string(), "eu-west-1".to_string()),
        ]);
        let dir = tempfile::tempdir().unwrap();
        let local = dir.path().join("ds.lance");
        let loc = open_uri(local.to_str().unwrap(), &opts).unwrap();
        assert!(loc.local_root.is_some());
        assert!(open_uri(&format!("file://{}", local.display()), &opts).is_ok());
        assert!(open_uri("memory://object-rs-test/ds", &opts).is_ok());
        let bad = HashMap::from([("nonsense_key".to_string(), "1".to_string())]);
        assert!(open_uri("s3://bucket/ds", &bad).is_err());
        assert!(takes_store_options("s3://b/x") && takes_store_options("S3A://b/x"));
        assert!(!takes_store_options("/tmp/x") && !takes_store_options("memory://x"));
    }
}
