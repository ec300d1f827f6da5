//! Where a dataset's metadata files live.
//!
//! The table layer reads and writes small files (manifests, transactions, deletion files,
//! tags) through the [`Store`] trait, with paths relative to the dataset root. The one
//! operation that makes commits safe is [`Store::put_if_absent`]: it creates a file only if
//! no file of that name exists, atomically, so two writers can never both create the same
//! version.
//!
//! The stores themselves live in [`lancelet_io`] ([`LocalStore`], and
//! [`lancelet_io::ObjectStoreStore`] for `memory://` and `s3://`): every
//! [`lancelet_io::Storage`] is a [`Store`], with storage errors turned into this crate's
//! [`Error`] (an object store's error kept as the source). [`Store`] adds what only the
//! table layer needs: its error type, and whether versions may be found by probing.

use std::fmt::Debug;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use bytes::Bytes;
use futures::future::BoxFuture;
use futures::FutureExt;
use lancelet_io::ReadAt;
pub use lancelet_io::{FileMeta, LocalStore};

use crate::{Error, Result};

/// Small-file storage rooted at a dataset directory. Paths use `/` and are relative to the root.
pub trait Store: Debug + Send + Sync {
    /// A display form of the root (for messages).
    fn root_display(&self) -> String;
    /// Reads a whole file; a missing file is [`Error::NotFound`].
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
    fn open_file<'a>(&'a self, path: &'a str) -> BoxFuture<'a, lancelet_io::Result<Arc<dyn ReadAt>>>;
    /// Where a new file at `path` can be written directly, for stores on local disk.
    /// Other stores get files written elsewhere and [`Store::upload`]ed.
    fn local_path(&self, _path: &str) -> Option<PathBuf> {
        None
    }
    /// Whether the newest version may be found by checking manifests exist (cheap here)
    /// instead of listing `_versions/` (see `versions::latest_version`). Stores whose
    /// listing does more than list (finishing external commits) must say no.
    fn probes_versions(&self) -> bool {
        false
    }
    /// Copies the local file `local` to `path` (in parts, for large files); returns its size.
    fn upload<'a>(&'a self, path: &'a str, local: &'a Path) -> BoxFuture<'a, Result<u64>>;
}

impl From<lancelet_io::Error> for Error {
    /// Storage errors keep their kind; an object store's error stays the source of the
    /// `std::io::Error` [`Error::Io`] carries.
    fn from(e: lancelet_io::Error) -> Self {
        use lancelet_io::Error as E;
        match e {
            E::NotFound { path } => Error::NotFound { path },
            E::AlreadyExists { path } => Error::AlreadyExists(path),
            E::Corrupt { path, message } => Error::Corrupt { path, message },
            E::InvalidArgument(m) => Error::InvalidArgument(m),
            E::Unsupported(m) => Error::Unsupported(m),
            E::Io { path, source } => Error::Io { path, source },
            E::ObjectStore { ref path, .. } => Error::Io {
                path: path.clone(),
                source: e.into_io_error(),
            },
        }
    }
}

/// Every storage of [`lancelet_io`] serves the table layer, with its errors converted.
impl<T: lancelet_io::Storage> Store for T {
    fn root_display(&self) -> String {
        lancelet_io::Storage::root_display(self)
    }

    fn read<'a>(&'a self, path: &'a str) -> BoxFuture<'a, Result<Bytes>> {
        lancelet_io::Storage::read(self, path)
            .map(|r| r.map_err(Error::from))
            .boxed()
    }

    fn put<'a>(&'a self, path: &'a str, data: Bytes) -> BoxFuture<'a, Result<()>> {
        lancelet_io::Storage::put(self, path, data)
            .map(|r| r.map_err(Error::from))
            .boxed()
    }

    fn put_if_absent<'a>(&'a self, path: &'a str, data: Bytes) -> BoxFuture<'a, Result<bool>> {
        lancelet_io::Storage::put_if_absent(self, path, data)
            .map(|r| r.map_err(Error::from))
            .boxed()
    }

    fn list<'a>(&'a self, dir: &'a str) -> BoxFuture<'a, Result<Vec<String>>> {
        lancelet_io::Storage::list(self, dir)
            .map(|r| r.map_err(Error::from))
            .boxed()
    }

    fn list_meta<'a>(&'a self, dir: &'a str) -> BoxFuture<'a, Result<Vec<FileMeta>>> {
        lancelet_io::Storage::list_meta(self, dir)
            .map(|r| r.map_err(Error::from))
            .boxed()
    }

    fn delete<'a>(&'a self, path: &'a str) -> BoxFuture<'a, Result<()>> {
        lancelet_io::Storage::delete(self, path)
            .map(|r| r.map_err(Error::from))
            .boxed()
    }

    fn exists<'a>(&'a self, path: &'a str) -> BoxFuture<'a, Result<bool>> {
        lancelet_io::Storage::exists(self, path)
            .map(|r| r.map_err(Error::from))
            .boxed()
    }

    fn open_file<'a>(&'a self, path: &'a str) -> BoxFuture<'a, lancelet_io::Result<Arc<dyn ReadAt>>> {
        lancelet_io::Storage::open_file(self, path)
    }

    fn local_path(&self, path: &str) -> Option<PathBuf> {
        lancelet_io::Storage::local_path(self, path)
    }

    /// Probing `_versions/` costs a `stat` per manifest on local disk (cheap) but a
    /// request per manifest on an object store, where one listing is cheaper.
    fn probes_versions(&self) -> bool {
        lancelet_io::Storage::local_path(self, "").is_some()
    }

    fn upload<'a>(&'a self, path: &'a str, local: &'a Path) -> BoxFuture<'a, Result<u64>> {
        lancelet_io::Storage::upload(self, path, local)
            .map(|r| r.map_err(Error::from))
            .boxed()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests: a failed unwrap is a failed test")]
    use super::*;

    #[cfg(unix)]
    #[test]
    fn symbolic_links_cannot_lead_reads_outside_the_root() {
        let dir = tempfile::tempdir().unwrap();
        let outside = dir.path().join("secret");
        std::fs::write(&outside, b"secret").unwrap();
        let root = dir.path().join("d.lance");
        std::fs::create_dir_all(root.join("data")).unwrap();
        std::fs::write(root.join("data/inside"), b"ok").unwrap();
        std::os::unix::fs::symlink(&outside, root.join("data/link")).unwrap();
        std::os::unix::fs::symlink(root.join("data/inside"), root.join("data/link_in")).unwrap();
        let store = LocalStore::new(&root);
        let read = |p: &'static str| futures::executor::block_on(store.read(p));
        assert!(matches!(read("data/link"), Err(Error::Corrupt { .. })));
        assert!(futures::executor::block_on(store.open_file("data/link")).is_err());
        assert_eq!(&read("data/inside").unwrap()[..], b"ok");
        assert_eq!(&read("data/link_in").unwrap()[..], b"ok");
        assert!(matches!(read("data/missing"), Err(Error::NotFound { .. })));
    }
}
