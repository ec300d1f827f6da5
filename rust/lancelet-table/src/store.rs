//! Where a dataset's metadata files live.
//!
//! The table layer reads and writes small files (manifests, transactions, deletion files,
//! tags) through the [`Store`] trait, with paths relative to the dataset root. The one
//! operation that makes commits safe is [`Store::put_if_absent`]: it creates a file only if
//! no file of that name exists, atomically, so two writers can never both create the same
//! version. [`LocalStore`] implements it with a hard link from a fully written temporary
//! file, so readers never observe a partially written manifest.

use std::fmt::Debug;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;

use bytes::Bytes;
use futures::future::BoxFuture;
use futures::FutureExt;
use lancelet_file::io::{LocalFile, ReadAt};

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
    fn open_file<'a>(&'a self, path: &'a str) -> BoxFuture<'a, lancelet_file::Result<Arc<dyn ReadAt>>>;
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

/// A file found by [`Store::list_meta`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileMeta {
    /// The file name (not the path).
    pub name: String,
    /// Its size in bytes.
    pub size: u64,
    /// When it was last written.
    pub modified: SystemTime,
}

/// A [`Store`] over a local directory.
#[derive(Debug, Clone)]
pub struct LocalStore {
    root: PathBuf,
}

impl LocalStore {
    /// A store rooted at `root` (which need not exist yet).
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Self { root: root.into() }
    }

    /// The root directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    fn full(&self, path: &str) -> PathBuf {
        self.root.join(path)
    }

    /// The entries of directory `dir` (none when it does not exist).
    fn entries(&self, dir: &str) -> Result<Vec<std::fs::DirEntry>> {
        let p = self.full(dir);
        match std::fs::read_dir(&p) {
            Ok(entries) => entries.map(|e| e.map_err(|e| io_err(&p, e))).collect(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
            Err(e) => Err(io_err(&p, e)),
        }
    }

    /// `path` under the root, refused when a symbolic link inside the dataset would take
    /// a read outside it (a dataset must never make lancelet read elsewhere).
    fn contained(&self, path: &str) -> Result<PathBuf> {
        let p = self.full(path);
        let (Ok(real), Ok(root)) = (std::fs::canonicalize(&p), std::fs::canonicalize(&self.root)) else {
            // Missing files fail when opened, with the usual not-found error.
            return Ok(p);
        };
        if real.starts_with(&root) {
            Ok(p)
        } else {
            Err(Error::corrupt(
                &p.display().to_string(),
                "a symbolic link leads outside the dataset directory",
            ))
        }
    }
}

fn io_err(path: &Path, source: std::io::Error) -> Error {
    if source.kind() == std::io::ErrorKind::NotFound {
        Error::NotFound {
            path: path.display().to_string(),
        }
    } else {
        Error::Io {
            path: path.display().to_string(),
            source,
        }
    }
}

/// Writes `data` to a new temporary file next to `target` and syncs it.
fn write_temp(target: &Path, data: &[u8]) -> Result<PathBuf> {
    let dir = target.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(|e| io_err(dir, e))?;
    let name = target.file_name().and_then(|n| n.to_str()).unwrap_or("file");
    let tmp = dir.join(format!(".{name}.{}.tmp", uuid::Uuid::new_v4().simple()));
    let mut f = std::fs::File::create(&tmp).map_err(|e| io_err(&tmp, e))?;
    let written = f.write_all(data).and_then(|_| f.sync_data());
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(io_err(&tmp, e));
    }
    Ok(tmp)
}

impl Store for LocalStore {
    fn root_display(&self) -> String {
        self.root.display().to_string()
    }

    fn read<'a>(&'a self, path: &'a str) -> BoxFuture<'a, Result<Bytes>> {
        async move {
            let p = self.contained(path)?;
            std::fs::read(&p).map(Bytes::from).map_err(|e| io_err(&p, e))
        }
        .boxed()
    }

    fn put<'a>(&'a self, path: &'a str, data: Bytes) -> BoxFuture<'a, Result<()>> {
        async move {
            let p = self.full(path);
            let tmp = write_temp(&p, &data)?;
            std::fs::rename(&tmp, &p).map_err(|e| {
                let _ = std::fs::remove_file(&tmp);
                io_err(&p, e)
            })
        }
        .boxed()
    }

    fn put_if_absent<'a>(&'a self, path: &'a str, data: Bytes) -> BoxFuture<'a, Result<bool>> {
        async move {
            let p = self.full(path);
            if p.exists() {
                return Ok(false);
            }
            // The content is complete on disk before the name appears; `link` fails if the
            // name exists, which is the atomic test-and-set the commit protocol needs.
            let tmp = write_temp(&p, &data)?;
            let res = std::fs::hard_link(&tmp, &p);
            let _ = std::fs::remove_file(&tmp);
            match res {
                Ok(()) => Ok(true),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(false),
                Err(e) => Err(io_err(&p, e)),
            }
        }
        .boxed()
    }

    fn list<'a>(&'a self, dir: &'a str) -> BoxFuture<'a, Result<Vec<String>>> {
        async move {
            let mut out: Vec<String> = self
                .entries(dir)?
                .into_iter()
                .filter_map(|e| e.file_name().to_str().map(str::to_string))
                .collect();
            out.sort();
            Ok(out)
        }
        .boxed()
    }

    fn list_meta<'a>(&'a self, dir: &'a str) -> BoxFuture<'a, Result<Vec<FileMeta>>> {
        async move {
            let mut out = Vec::new();
            for e in self.entries(dir)? {
                let Ok(meta) = e.metadata() else { continue };
                let Some(name) = e.file_name().to_str().map(str::to_string) else {
                    continue;
                };
                if meta.is_file() {
                    let modified = meta.modified().unwrap_or(SystemTime::UNIX_EPOCH);
                    out.push(FileMeta {
                        name,
                        size: meta.len(),
                        modified,
                    });
                }
            }
            out.sort_by(|a, b| a.name.cmp(&b.name));
            Ok(out)
        }
        .boxed()
    }

    fn delete<'a>(&'a self, path: &'a str) -> BoxFuture<'a, Result<()>> {
        async move {
            let p = self.full(path);
            match std::fs::remove_file(&p) {
                Ok(()) => Ok(()),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
                Err(e) => Err(io_err(&p, e)),
            }
        }
        .boxed()
    }

    fn exists<'a>(&'a self, path: &'a str) -> BoxFuture<'a, Result<bool>> {
        async move { Ok(self.full(path).exists()) }.boxed()
    }

    fn open_file<'a>(&'a self, path: &'a str) -> BoxFuture<'a, lancelet_file::Result<Arc<dyn ReadAt>>> {
        async move {
            let p = self
                .contained(path)
                .map_err(|e| lancelet_file::Error::corrupt(path, e.to_string()))?;
            let file: Arc<dyn ReadAt> = Arc::new(LocalFile::open(&p.display().to_string())?);
            Ok(file)
        }
        .boxed()
    }

    fn local_path(&self, path: &str) -> Option<PathBuf> {
        Some(self.full(path))
    }

    fn probes_versions(&self) -> bool {
        true
    }

    fn upload<'a>(&'a self, path: &'a str, local: &'a Path) -> BoxFuture<'a, Result<u64>> {
        async move {
            let p = self.full(path);
            if let Some(dir) = p.parent() {
                std::fs::create_dir_all(dir).map_err(|e| io_err(dir, e))?;
            }
            std::fs::copy(local, &p).map_err(|e| io_err(&p, e))
        }
        .boxed()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
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
