//! Spreading the new data files of one write over several base paths, as pylance's
//! `target_bases=[a, b, ...]` and `target_all_bases` do: the `i`-th data file a write
//! creates goes to target `i mod n`, in the order the targets were given
//! (`target_all_bases`: the dataset's own root first when it is included, then every base
//! path by id). Each file records the `base_id` of the target it went to.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use futures::future::BoxFuture;
use lancelet_io::ReadAt;
use lancelet_io::{FileMeta, Storage};
use lancelet_table::pb;

use crate::{Caches, Error, Result, DATA_DIR};

/// One place new data files may go: its store (whose `data/` is where files land) and the
/// `base_id` those files record (`None`: the dataset's root).
#[derive(Debug, Clone)]
pub(crate) struct Target {
    /// Where the files are written.
    pub store: Arc<dyn Storage>,
    /// The base id the files record.
    pub base_id: Option<u32>,
}

/// A store that sends each new data file (and its blob side files) to the next target in
/// turn, remembering which target got which file.
#[derive(Debug)]
pub(crate) struct SpreadStore {
    targets: Vec<Target>,
    state: Mutex<Spread>,
}

#[derive(Debug, Default)]
struct Spread {
    by_stem: HashMap<String, usize>,
    next: usize,
    current: usize,
}

/// The file stem a path under `data/` belongs to, and whether the path is the data file
/// itself (`data/{stem}.lance`) rather than a side file (`data/{stem}/...`).
fn stem_of(path: &str) -> Option<(&str, bool)> {
    let rest = path.strip_prefix(DATA_DIR)?.strip_prefix('/')?;
    let first = rest.split('/').next()?;
    match first.strip_suffix(".lance") {
        Some(stem) if !rest.contains('/') => Some((stem, true)),
        _ => Some((first, false)),
    }
}

impl SpreadStore {
    /// Spreads files over `targets` (at least one), in that order.
    pub fn new(targets: Vec<Target>) -> Result<Self> {
        if targets.is_empty() {
            return Err(Error::InvalidArgument("no target base to write to".into()));
        }
        Ok(Self {
            targets,
            state: Mutex::new(Spread::default()),
        })
    }

    /// The target of `path`; `create` hands a data file not seen yet the next target.
    fn route(&self, path: &str, create: bool) -> &Arc<dyn Storage> {
        let mut s = match self.state.lock() {
            Ok(s) => s,
            Err(p) => p.into_inner(),
        };
        let idx = match stem_of(path) {
            Some((stem, is_file)) => match s.by_stem.get(stem) {
                Some(&i) => i,
                None if create && is_file => {
                    let i = s.next % self.targets.len();
                    s.next += 1;
                    s.by_stem.insert(stem.to_string(), i);
                    i
                }
                None => s.current,
            },
            None => s.current,
        };
        s.current = idx;
        &self.targets[idx].store
    }

    /// The `base_id` data file `name` (as a fragment lists it, relative to `data/`) records.
    pub(crate) fn base_id_of(&self, name: &str) -> Option<u32> {
        let stem = name.strip_suffix(".lance").unwrap_or(name);
        let s = match self.state.lock() {
            Ok(s) => s,
            Err(p) => p.into_inner(),
        };
        let idx = s.by_stem.get(stem).copied().unwrap_or(0);
        self.targets[idx].base_id
    }

    /// Records in every data file of `fragments` the base it was written to.
    pub(crate) fn mark(&self, fragments: &mut [pb::DataFragment]) {
        for f in fragments {
            for d in &mut f.files {
                d.base_id = self.base_id_of(&d.path);
            }
        }
    }
}

impl Storage for SpreadStore {
    fn root_display(&self) -> String {
        self.targets[0].store.root_display()
    }
    fn read<'a>(&'a self, path: &'a str) -> BoxFuture<'a, lancelet_io::Result<Bytes>> {
        self.route(path, false).read(path)
    }
    fn put<'a>(&'a self, path: &'a str, data: Bytes) -> BoxFuture<'a, lancelet_io::Result<()>> {
        self.route(path, true).put(path, data)
    }
    fn put_if_absent<'a>(&'a self, path: &'a str, data: Bytes) -> BoxFuture<'a, lancelet_io::Result<bool>> {
        self.route(path, true).put_if_absent(path, data)
    }
    fn list<'a>(&'a self, dir: &'a str) -> BoxFuture<'a, lancelet_io::Result<Vec<String>>> {
        self.route(dir, false).list(dir)
    }
    fn list_meta<'a>(&'a self, dir: &'a str) -> BoxFuture<'a, lancelet_io::Result<Vec<FileMeta>>> {
        self.route(dir, false).list_meta(dir)
    }
    fn delete<'a>(&'a self, path: &'a str) -> BoxFuture<'a, lancelet_io::Result<()>> {
        self.route(path, false).delete(path)
    }
    fn exists<'a>(&'a self, path: &'a str) -> BoxFuture<'a, lancelet_io::Result<bool>> {
        self.route(path, false).exists(path)
    }
    fn open_file<'a>(&'a self, path: &'a str) -> BoxFuture<'a, lancelet_io::Result<Arc<dyn ReadAt>>> {
        self.route(path, false).open_file(path)
    }
    fn local_path(&self, path: &str) -> Option<PathBuf> {
        self.route(path, true).local_path(path)
    }
    fn upload<'a>(&'a self, path: &'a str, local: &'a Path) -> BoxFuture<'a, lancelet_io::Result<u64>> {
        self.route(path, true).upload(path, local)
    }
    /// No: a write spread over bases looks up no versions through this store.
    fn probes_versions(&self) -> bool {
        false
    }
}

fn norm(p: &str) -> String {
    crate::blob::comparable(p)
}

/// The base path `target` names (by name first, then by path).
fn find<'a>(bases: &'a [pb::BasePath], target: &str) -> Result<&'a pb::BasePath> {
    bases
        .iter()
        .find(|b| b.name.as_deref() == Some(target))
        .or_else(|| bases.iter().find(|b| norm(&b.path) == norm(target)))
        .ok_or_else(|| {
            Error::InvalidArgument(format!(
                "target base {target:?} not found: it names no base path of the dataset"
            ))
        })
}

fn open_base(base: &pb::BasePath, caches: &Caches) -> Result<Target> {
    let store = crate::bases::open_store(&base.path, caches, Some(base.id))?;
    let store: Arc<dyn Storage> = if base.is_dataset_root {
        store
    } else {
        Arc::new(FlatStore { inner: store })
    };
    Ok(Target {
        store,
        base_id: Some(base.id),
    })
}

/// Where the new files of a write go. `targets` are base names or paths (the dataset's
/// own URI `root_uri` means its root); `all` is `target_all_bases` (`Some(include_root)`).
/// `None` when every file goes to the dataset's root (no targets named).
pub(crate) fn resolve(
    root_uri: &str,
    root_store: &Arc<dyn Storage>,
    bases: &[pb::BasePath],
    targets: &[String],
    all: Option<bool>,
    caches: &Caches,
) -> Result<Option<SpreadStore>> {
    let root = || Target {
        store: root_store.clone(),
        base_id: None,
    };
    let mut out = Vec::new();
    if let Some(include_root) = all {
        if !targets.is_empty() {
            return Err(Error::InvalidArgument(
                "pass target_bases or target_all_bases, not both".into(),
            ));
        }
        if include_root {
            out.push(root());
        }
        let mut sorted: Vec<&pb::BasePath> = bases.iter().collect();
        sorted.sort_by_key(|b| b.id);
        for b in sorted {
            out.push(open_base(b, caches)?);
        }
        if out.is_empty() {
            return Err(Error::InvalidArgument(
                "target_all_bases found no registered base paths and the dataset's root is excluded".into(),
            ));
        }
    } else {
        for t in targets {
            if norm(t) == norm(root_uri) {
                out.push(root());
            } else {
                out.push(open_base(find(bases, t)?, caches)?);
            }
        }
    }
    if out.is_empty() || (out.len() == 1 && out[0].base_id.is_none()) {
        return Ok(None);
    }
    Ok(Some(SpreadStore::new(out)?))
}

/// A store whose `data/` directory is its root: files of a base that is not a dataset root.
#[derive(Debug)]
pub(crate) struct FlatStore {
    pub(crate) inner: Arc<dyn Storage>,
}

fn flat(path: &str) -> &str {
    path.strip_prefix(DATA_DIR)
        .and_then(|p| p.strip_prefix('/'))
        .unwrap_or(path)
}

impl Storage for FlatStore {
    fn root_display(&self) -> String {
        self.inner.root_display()
    }
    fn read<'a>(&'a self, path: &'a str) -> BoxFuture<'a, lancelet_io::Result<Bytes>> {
        self.inner.read(flat(path))
    }
    fn put<'a>(&'a self, path: &'a str, data: Bytes) -> BoxFuture<'a, lancelet_io::Result<()>> {
        self.inner.put(flat(path), data)
    }
    fn put_if_absent<'a>(&'a self, path: &'a str, data: Bytes) -> BoxFuture<'a, lancelet_io::Result<bool>> {
        self.inner.put_if_absent(flat(path), data)
    }
    fn list<'a>(&'a self, dir: &'a str) -> BoxFuture<'a, lancelet_io::Result<Vec<String>>> {
        self.inner.list(flat(dir))
    }
    fn list_meta<'a>(&'a self, dir: &'a str) -> BoxFuture<'a, lancelet_io::Result<Vec<FileMeta>>> {
        self.inner.list_meta(flat(dir))
    }
    fn delete<'a>(&'a self, path: &'a str) -> BoxFuture<'a, lancelet_io::Result<()>> {
        self.inner.delete(flat(path))
    }
    fn exists<'a>(&'a self, path: &'a str) -> BoxFuture<'a, lancelet_io::Result<bool>> {
        self.inner.exists(flat(path))
    }
    fn open_file<'a>(&'a self, path: &'a str) -> BoxFuture<'a, lancelet_io::Result<Arc<dyn ReadAt>>> {
        self.inner.open_file(flat(path))
    }
    fn local_path(&self, path: &str) -> Option<PathBuf> {
        self.inner.local_path(flat(path))
    }
    fn upload<'a>(&'a self, path: &'a str, local: &'a Path) -> BoxFuture<'a, lancelet_io::Result<u64>> {
        self.inner.upload(flat(path), local)
    }
    /// No: a base that is not a dataset root holds no versions.
    fn probes_versions(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::stem_of;

    #[test]
    fn data_files_and_side_files_share_a_stem() {
        assert_eq!(stem_of("data/abc.lance"), Some(("abc", true)));
        assert_eq!(stem_of("data/abc/1.blob"), Some(("abc", false)));
        assert_eq!(stem_of("data"), None);
        assert_eq!(stem_of("_versions/1.manifest"), None);
    }
}
