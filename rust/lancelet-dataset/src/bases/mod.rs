//! Resolving files through base paths, and finding the root a branch belongs to.
//!
//! A dataset's own files live under its store; a file with a `base_id` lives under that
//! base path of the manifest (see [`lancelet_table::bases`]), opened as a store of its own
//! with the dataset's storage options (`base_{id}.{key}` entries override them for one
//! base). A branch is a dataset rooted at `{root}/tree/{branch}` whose manifests name the
//! branch; its tags and branch references live in the root's `_refs/`.

pub mod branch;
pub mod targets;
pub mod write;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use lancelet_io::Storage;
use lancelet_table::bases::{base_options, check_base_path, check_relative, find_base, path_in_base};
use lancelet_table::branches::{check_branch_name, TREE_DIR};
use lancelet_table::object::open_uri;
use lancelet_table::versions::{latest_version, read_entry};

use crate::{Caches, Dataset, Result};

/// The root of a dataset (where `_refs/` lives) seen from one of its branches.
pub(crate) struct RefsRoot {
    /// The root's store (the branch's own store on the main branch).
    pub(crate) store: Arc<dyn Storage>,
    /// The root's display form (a path or URI).
    pub(crate) root: String,
    /// The branch the store belongs to (`None`: main).
    pub(crate) branch: Option<String>,
}

/// Whether `path` is a local path (no scheme, or `file://`).
fn is_local(path: &str) -> bool {
    lancelet_io::uri::local_path(path).is_some()
}

/// Opens the store at `uri` with the options of `caches` (none for local paths).
pub(crate) fn open_store(uri: &str, caches: &Caches, base: Option<u32>) -> Result<Arc<dyn Storage>> {
    let options = caches.storage_options.lock().map(|o| o.clone()).unwrap_or_default();
    let options = match (is_local(uri), base) {
        (true, _) => HashMap::new(),
        (false, Some(id)) => base_options(&options, id),
        (false, None) => lancelet_table::bases::own_options(&options),
    };
    Ok(open_uri(uri, &options)?.store)
}

/// The branch of the newest manifest in `store` (`None`: main, or no manifest yet).
pub(crate) async fn branch_of_store(store: &Arc<dyn Storage>) -> Result<Option<String>> {
    let Some(entry) = latest_version(store.as_ref()).await? else {
        return Ok(None);
    };
    let m = read_entry(store.as_ref(), &entry).await?;
    Ok(m.branch.filter(|b| !lancelet_table::branches::is_main(Some(b))))
}

/// The root of the dataset whose (branch) store is `store` at `root`.
pub(crate) async fn refs_root(store: &Arc<dyn Storage>, root: &std::path::Path, caches: &Caches) -> Result<RefsRoot> {
    let display = root.display().to_string();
    let Some(branch) = branch_of_store(store).await? else {
        return Ok(RefsRoot {
            store: store.clone(),
            root: display,
            branch: None,
        });
    };
    let trimmed = display.trim_end_matches('/');
    let suffix = format!("/{TREE_DIR}/{branch}");
    let Some(parent) = trimmed.strip_suffix(&suffix) else {
        return Err(crate::Error::Unsupported(format!(
            "{display} holds branch {branch:?} but is not at {{root}}{suffix}, so its root (tags, other branches) \
             cannot be found"
        )));
    };
    Ok(RefsRoot {
        store: open_store(parent, caches, None)?,
        root: parent.to_string(),
        branch: Some(branch),
    })
}

/// Where `branch` (main when `None`) of the dataset rooted at `root` lives.
pub(crate) fn branch_uri(root: &str, branch: Option<&str>) -> Result<String> {
    match branch.filter(|b| !lancelet_table::branches::is_main(Some(b))) {
        None => Ok(root.to_string()),
        Some(b) => {
            check_branch_name(b)?;
            Ok(format!("{}/{TREE_DIR}/{b}", root.trim_end_matches('/')))
        }
    }
}

impl Dataset {
    /// The store and path of a file kept under base `base_id` (the dataset's own root when
    /// `None`): `{dir}/{rel}` in a dataset root, `{rel}` directly in another base.
    pub(crate) fn file_in_base(
        &self,
        base_id: Option<u32>,
        dir: &str,
        rel: &str,
    ) -> Result<(Arc<dyn Storage>, String)> {
        let root = self.root.display().to_string();
        check_relative(rel, &root)?;
        let Some(id) = base_id else {
            return Ok((self.store.clone(), format!("{dir}/{rel}")));
        };
        let base = find_base(&self.manifest, id, &root)?;
        check_base_path(&base.path, &root)?;
        Ok((
            self.base_store(id, &base.path)?,
            path_in_base(base.is_dataset_root, dir, rel),
        ))
    }

    /// The store of the base path `path` (with id `id`), opened once per dataset handle.
    pub(crate) fn base_store(&self, id: u32, path: &str) -> Result<Arc<dyn Storage>> {
        if let Some(s) = self.caches.base_stores.lock().ok().and_then(|c| c.get(path).cloned()) {
            return Ok(s);
        }
        let store = open_store(path, &self.caches, Some(id))?;
        if let Ok(mut c) = self.caches.base_stores.lock() {
            c.insert(path.to_string(), store.clone());
        }
        Ok(store)
    }

    /// The store and directory of an index's files.
    pub(crate) fn index_files(&self, idx: &lancelet_table::pb::IndexMetadata) -> Result<(Arc<dyn Storage>, String)> {
        let uuid = lancelet_table::indices::uuid_string(idx)
            .map_err(|e| crate::Error::corrupt(lancelet_table::indices::INDICES_DIR, e))?;
        self.file_in_base(idx.base_id, lancelet_table::indices::INDICES_DIR, &uuid)
    }

    /// Records the storage options the dataset was opened with: other base paths and
    /// branches on object stores are opened with them.
    pub fn with_storage_options(self, options: HashMap<String, String>) -> Self {
        if let Ok(mut o) = self.caches.storage_options.lock() {
            *o = options;
        }
        self
    }

    /// The storage options recorded with [`Dataset::with_storage_options`].
    pub fn storage_options(&self) -> HashMap<String, String> {
        self.caches
            .storage_options
            .lock()
            .map(|o| o.clone())
            .unwrap_or_default()
    }

    /// The branch this version belongs to (`None`: main).
    pub fn branch(&self) -> Option<&str> {
        self.manifest
            .branch
            .as_deref()
            .filter(|b| !lancelet_table::branches::is_main(Some(b)))
    }

    /// The base paths of this version, by id.
    pub fn base_paths(&self) -> &[lancelet_table::pb::BasePath] {
        &self.manifest.base_paths
    }

    /// The root of the whole dataset (where tags and branch references live) and its store.
    pub(crate) fn refs_root(&self) -> Result<(Arc<dyn Storage>, String)> {
        let display = self.root.display().to_string();
        let Some(branch) = self.branch() else {
            return Ok((self.store.clone(), display));
        };
        let suffix = format!("/{TREE_DIR}/{branch}");
        let trimmed = display.trim_end_matches('/');
        let parent = trimmed.strip_suffix(&suffix).ok_or_else(|| {
            crate::Error::Unsupported(format!(
                "{display} holds branch {branch:?} but is not at {{root}}{suffix}, so its root cannot be found"
            ))
        })?;
        Ok((open_store(parent, &self.caches, None)?, parent.to_string()))
    }

    /// Opens `version` (latest when `None`) of `branch` (main when `None`) of the dataset
    /// that `store` (at `root`) belongs to.
    pub(crate) async fn open_branch(
        store: &Arc<dyn Storage>,
        root: &std::path::Path,
        branch: Option<String>,
        version: Option<u64>,
        caches: Arc<Caches>,
        spawner: Option<lancelet_file::Spawner>,
    ) -> Result<Self> {
        let refs = refs_root(store, root, &caches).await?;
        let target = branch_uri(&refs.root, branch.as_deref())?;
        let same = branch_uri(&refs.root, refs.branch.as_deref())? == target;
        // Versions of different branches share numbers: their caches must not mix.
        let fresh = Arc::new(Caches::default());
        if let (Ok(mut dst), Ok(src)) = (fresh.storage_options.lock(), caches.storage_options.lock()) {
            *dst = src.clone();
        }
        let (store, caches) = if same {
            (store.clone(), caches)
        } else {
            (open_store(&target, &fresh, None)?, fresh)
        };
        if !same && !store.exists(lancelet_table::naming::VERSIONS_DIR).await? {
            return Err(crate::Error::InvalidArgument(format!(
                "branch {:?} does not exist",
                branch.unwrap_or_default()
            )));
        }
        let number = version.map(crate::VersionRef::Number);
        Box::pin(Self::open_with(store, PathBuf::from(target), number, caches, spawner)).await
    }
}

impl Dataset {
    /// The files this version names that cannot be found: data and deletion files (in
    /// whichever base path they live) and index directories. A shallow clone or a branch
    /// whose source was cleaned up or deleted shows its lost files here.
    pub async fn missing_files(&self) -> Result<Vec<String>> {
        let mut out = Vec::new();
        for f in self.fragments() {
            for df in &f.files {
                let (store, path) = self.file_in_base(df.base_id, crate::DATA_DIR, &df.path)?;
                if !store.exists(&path).await? {
                    out.push(format!("{}/{path}", store.root_display()));
                }
            }
            if let Some(d) = &f.deletion_file {
                let own = lancelet_table::deletion::deletion_file_path(f.id, d);
                let (store, path) = match d.base_id {
                    None => (self.store.clone(), own),
                    Some(_) => {
                        let name = own.rsplit('/').next().unwrap_or(&own).to_string();
                        self.file_in_base(d.base_id, lancelet_table::deletion::DELETIONS_DIR, &name)?
                    }
                };
                if !store.exists(&path).await? {
                    out.push(format!("{}/{path}", store.root_display()));
                }
            }
        }
        for idx in self.indices().await?.iter() {
            let (store, dir) = self.index_files(idx)?;
            if !store.exists(&dir).await? {
                out.push(format!("{}/{dir}", store.root_display()));
            }
        }
        Ok(out)
    }
}
