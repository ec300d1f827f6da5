//! The interface a dataset root is accessed through.

use std::fmt::Debug;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;

use bytes::Bytes;
use futures::future::BoxFuture;

use crate::error::Result;
use crate::read::ReadAt;

/// Files under one root (a local directory, an object store prefix). Paths use `/` and are
/// relative to the root.
///
/// The one operation that makes commits safe is [`Storage::put_if_absent`]: it creates a
/// file only if no file of that name exists, atomically, so two writers can never both
/// create the same version. The table layer reads and writes through this trait directly
/// (its errors convert into the table's with `?`), and decorates it where commits need more
/// than a conditional put (`lancelet_table::commit_store`).
pub trait Storage: Debug + Send + Sync {
    /// A display form of the root (for messages).
    fn root_display(&self) -> String;
    /// Reads a whole file; a missing file is [`crate::Error::NotFound`].
    fn read<'a>(&'a self, path: &'a str) -> BoxFuture<'a, Result<Bytes>>;
    /// Writes a whole file, replacing any existing one atomically.
    fn put<'a>(&'a self, path: &'a str, data: Bytes) -> BoxFuture<'a, Result<()>>;
    /// Creates a file only if none exists; `Ok(false)` when it already exists.
    fn put_if_absent<'a>(&'a self, path: &'a str, data: Bytes) -> BoxFuture<'a, Result<bool>>;
    /// File names (not paths) directly inside `dir`; empty when `dir` does not exist.
    fn list<'a>(&'a self, dir: &'a str) -> BoxFuture<'a, Result<Vec<String>>>;
    /// The files directly inside `dir` with their sizes and modification times (no
    /// subdirectories); empty when `dir` does not exist.
    fn list_meta<'a>(&'a self, dir: &'a str) -> BoxFuture<'a, Result<Vec<FileMeta>>>;
    /// Deletes a file; deleting a missing file is not an error.
    fn delete<'a>(&'a self, path: &'a str) -> BoxFuture<'a, Result<()>>;
    /// Whether a file (or a non-empty directory) exists.
    fn exists<'a>(&'a self, path: &'a str) -> BoxFuture<'a, Result<bool>>;
    /// Opens a (data) file for ranged reads.
    fn open_file<'a>(&'a self, path: &'a str) -> BoxFuture<'a, Result<Arc<dyn ReadAt>>>;
    /// Where a new file at `path` can be written directly, for stores on local disk.
    /// Other stores get files written elsewhere and [`Storage::upload`]ed.
    fn local_path(&self, _path: &str) -> Option<PathBuf> {
        None
    }
    /// Whether the newest version of a dataset here may be found by checking that manifests
    /// exist (a `stat` each on local disk: cheap) instead of listing `_versions/` (one
    /// request on an object store, where a request per manifest is not cheap). Stores whose
    /// listing does more than list (finishing interrupted commits) must say no.
    fn probes_versions(&self) -> bool {
        self.local_path("").is_some()
    }
    /// Copies the local file `local` to `path` (in parts, for large files); returns its size.
    fn upload<'a>(&'a self, path: &'a str, local: &'a Path) -> BoxFuture<'a, Result<u64>>;
}

/// A file found by [`Storage::list_meta`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileMeta {
    /// The file name (not the path).
    pub name: String,
    /// Its size in bytes.
    pub size: u64,
    /// When it was last written.
    pub modified: SystemTime,
}

/// Removes `dir` and everything under it (the whole store's tree for `""`): on local disk
/// the folder itself, on other stores every file found by listing folder by folder. A
/// missing `dir` is not an error.
pub async fn remove_tree(store: &dyn Storage, dir: &str) -> crate::Result<()> {
    if let Some(path) = store.local_path(dir) {
        return match std::fs::remove_dir_all(&path) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(crate::Error::Io {
                path: path.display().to_string(),
                source: e,
            }),
        };
    }
    let mut pending = vec![dir.trim_end_matches('/').to_string()];
    while let Some(d) = pending.pop() {
        let files: Vec<String> = store.list_meta(&d).await?.into_iter().map(|f| f.name).collect();
        let join = |name: &str| {
            if d.is_empty() {
                name.to_string()
            } else {
                format!("{d}/{name}")
            }
        };
        for name in store.list(&d).await? {
            if files.contains(&name) {
                store.delete(&join(&name)).await?;
            } else {
                pending.push(join(&name));
            }
        }
    }
    Ok(())
}
