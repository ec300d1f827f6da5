//! Branches, shallow and deep clones, tags on branches and new base paths, as pylance 14
//! records them.
//!
//! - A **branch** `b` of a dataset rooted at `R` is a dataset rooted at `R/tree/b` whose
//!   first manifest is a copy of the version it was created from, with the same number.
//!   That manifest gains a base path for the parent's root (id 0 when there were none, else
//!   the largest id plus one; named after the parent branch) and every inherited file that
//!   lived in the parent's own root now names that base. `R/_refs/branches/b.json` records
//!   the parent, its version and the lineage. The branch then numbers its versions on its
//!   own; files it writes live under `R/tree/b/`.
//! - A **shallow clone** is the same at another location, without the branch reference:
//!   no data is copied, the clone reads the source's files through the base path.
//! - A **deep clone** copies every data, deletion and index file (wherever the source keeps
//!   them, other base paths included) into the target, whose manifest has no base paths.
//!
//! Each starts with a `Clone` transaction. Commits are ordered so that a crash leaves every
//! reference readable: the new manifest is written before the branch reference that makes
//! it visible, and a branch directory without a reference (a creation that died) is
//! cleared by the next creation of that name.

use std::sync::Arc;

use prost::Message;
use serde_json::Value;

use lancelet_io::Storage;
use lancelet_table::bases::{drop_bases, next_base_id, rebase_own_files};
use lancelet_table::branches::{self, BranchRef, TREE_DIR};
use lancelet_table::commit::{new_transaction, transaction_file_name, TRANSACTIONS_DIR, WRITER_LIBRARY};
use lancelet_table::deletion::{deletion_file_path, DELETIONS_DIR};
use lancelet_table::indices::INDICES_DIR;
use lancelet_table::manifest::{encode_manifest_file, set_feature_flags, set_index_flags};
use lancelet_table::naming::VERSIONS_DIR;
use lancelet_table::object::Location;
use lancelet_table::pb;
use lancelet_table::tags;
use lancelet_table::versions::write_latest_hint;

use crate::bases::{branch_uri, open_store};
use crate::{Dataset, Error, Result, VersionRef, DATA_DIR};

/// One branch as [`Dataset::list_branches`] reports it.
#[derive(Debug, Clone)]
pub struct BranchInfo {
    /// The branch name.
    pub name: String,
    /// The branch it was created from (`None`: main).
    pub parent_branch: Option<String>,
    /// The version of the parent it was created from.
    pub parent_version: u64,
    /// The whole reference file (lineage, creation time, manifest size, metadata).
    pub raw: Value,
}

impl From<BranchRef> for BranchInfo {
    fn from(b: BranchRef) -> Self {
        Self {
            name: b.name,
            parent_branch: b.parent_branch.filter(|p| !branches::is_main(Some(p))),
            parent_version: b.parent_version,
            raw: b.raw,
        }
    }
}

fn now() -> prost_types::Timestamp {
    let d = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    prost_types::Timestamp {
        seconds: i64::try_from(d.as_secs()).unwrap_or(i64::MAX),
        nanos: i32::try_from(d.subsec_nanos()).unwrap_or(0),
    }
}

/// Writes `m` (with `txn` and `indices`) as the first manifest of a new dataset in `store`.
async fn write_first_manifest(
    store: &dyn Storage,
    src: &Dataset,
    m: &mut pb::Manifest,
    txn: &pb::Transaction,
    indices: &[pb::IndexMetadata],
) -> Result<()> {
    m.transaction_file = transaction_file_name(txn);
    m.timestamp = Some(now());
    m.tag = String::new();
    m.writer_version = Some(pb::manifest::WriterVersion {
        library: WRITER_LIBRARY.to_string(),
        version: env!("CARGO_PKG_VERSION").to_string(),
        prerelease: None,
        build_metadata: None,
    });
    set_feature_flags(m);
    set_index_flags(m, indices);
    let txn_path = format!("{TRANSACTIONS_DIR}/{}", transaction_file_name(txn));
    store.put(&txn_path, txn.encode_to_vec().into()).await?;
    let bytes = encode_manifest_file(m, txn, indices);
    let path = src.naming().relative_path(m.version);
    if !store.put_if_absent(&path, bytes.into()).await? {
        let _ = store.delete(&txn_path).await;
        return Err(Error::AlreadyExists(format!("{}/{path}", store.root_display())));
    }
    write_latest_hint(store, m.version).await;
    Ok(())
}

fn clone_txn(src: &Dataset, src_root: &str, shallow: bool, branch_name: Option<&str>) -> pb::Transaction {
    let op = pb::transaction::Operation::Clone(pb::transaction::Clone {
        is_shallow: shallow,
        ref_name: src.branch().map(str::to_string),
        ref_version: src.version(),
        ref_path: src_root.to_string(),
        branch_name: branch_name.map(str::to_string),
    });
    new_transaction(src.version(), op, None)
}

/// The manifest and index entries of a shallow copy of `src`: its files reached through a
/// base path for its root, named `base_name`.
async fn shallow_manifest(
    src: &Dataset,
    src_root: &str,
    base_name: Option<String>,
) -> Result<(pb::Manifest, Vec<pb::IndexMetadata>)> {
    let mut m = src.manifest().clone();
    let mut indices: Vec<pb::IndexMetadata> = src.indices().await?.as_ref().clone();
    let id = next_base_id(&m.base_paths);
    m.base_paths.push(pb::BasePath {
        id,
        name: base_name,
        is_dataset_root: true,
        path: src_root.to_string(),
    });
    rebase_own_files(&mut m, &mut indices, id);
    Ok((m, indices))
}

/// Copies `from` in `src_store` to `to` in `dst`.
async fn copy_file(src_store: &Arc<dyn Storage>, from: &str, dst: &dyn Storage, to: &str) -> Result<()> {
    if let (Some(a), Some(b)) = (src_store.local_path(from), dst.local_path(to)) {
        if let Some(dir) = b.parent() {
            std::fs::create_dir_all(dir)
                .map_err(|e| Error::InvalidArgument(format!("creating {}: {e}", dir.display())))?;
        }
        std::fs::copy(&a, &b).map_err(|e| lancelet_io::Error::io(&a.display().to_string(), e))?;
        return Ok(());
    }
    let bytes = src_store.read(from).await?;
    dst.put(to, bytes).await?;
    Ok(())
}

/// Copies every file under `dir` of `src_store` to `to_dir` of `dst` (recursively).
async fn copy_dir(src_store: &Arc<dyn Storage>, dir: &str, dst: &dyn Storage, to_dir: &str) -> Result<()> {
    let files: Vec<String> = src_store.list_meta(dir).await?.into_iter().map(|f| f.name).collect();
    for f in &files {
        copy_file(src_store, &format!("{dir}/{f}"), dst, &format!("{to_dir}/{f}")).await?;
    }
    for entry in src_store.list(dir).await? {
        if !files.contains(&entry) {
            Box::pin(copy_dir(
                src_store,
                &format!("{dir}/{entry}"),
                dst,
                &format!("{to_dir}/{entry}"),
            ))
            .await?;
        }
    }
    Ok(())
}

impl Dataset {
    /// The dataset at `reference`: a version of this dataset's branch
    /// ([`VersionRef::Number`]), a tag, or `(branch, version)`; `None` is this branch's latest.
    pub(crate) async fn resolve_reference(&self, reference: Option<VersionRef>) -> Result<Dataset> {
        self.checkout(reference).await
    }

    /// Creates branch `name` from `reference` (see [`Dataset::resolve_reference`]) and
    /// returns the dataset on it (at the version it was created from).
    pub async fn create_branch(&self, name: &str, reference: Option<VersionRef>) -> Result<Dataset> {
        branches::check_branch_name(name)?;
        let (refs, root) = self.refs_root()?;
        match branches::get_branch(refs.as_ref(), name).await {
            Ok(_) => return Err(Error::AlreadyExists(format!("branch {name:?}"))),
            Err(e) if e.is_not_found() => {}
            Err(e) => return Err(e.into()),
        }
        let src = self.resolve_reference(reference).await?;
        let src_root = src.root().display().to_string();
        let parent_mapping = match src.branch() {
            Some(p) => branches::version_mapping(&branches::get_branch(refs.as_ref(), p).await?.raw),
            None => Vec::new(),
        };
        let src_manifest_size = src
            .store()
            .read(&src.naming().relative_path(src.version()))
            .await?
            .len() as u64;
        let (mut m, indices) = shallow_manifest(&src, &src_root, src.branch().map(str::to_string)).await?;
        m.branch = Some(name.to_string());
        let target = branch_uri(&root, Some(name))?;
        let store = open_store(&target, &self.caches, None)?;
        // A directory left by a creation that died before its reference was written.
        let tree = format!("{TREE_DIR}/{name}");
        if refs.exists(&tree).await? {
            branches::remove_tree(refs.as_ref(), &tree).await?;
        }
        let txn = clone_txn(&src, &src_root, true, Some(name));
        write_first_manifest(store.as_ref(), &src, &mut m, &txn, &indices).await?;
        let body = branches::new_ref_body(src.branch(), src.version(), &parent_mapping, src_manifest_size);
        branches::create_ref(refs.as_ref(), name, &body)
            .await
            .map_err(|e| match e {
                lancelet_table::Error::AlreadyExists(what) => Error::AlreadyExists(what),
                e => e.into(),
            })?;
        Self::open_branch(
            &self.store,
            &self.root,
            Some(name.to_string()),
            Some(m.version),
            self.caches.clone(),
            self.spawner.clone(),
        )
        .await
    }

    /// Every branch of the dataset, sorted by name.
    pub async fn list_branches(&self) -> Result<Vec<BranchInfo>> {
        let (refs, _) = self.refs_root()?;
        Ok(branches::list_branches(refs.as_ref())
            .await?
            .into_iter()
            .map(BranchInfo::from)
            .collect())
    }

    /// Deletes branch `name` and every file it wrote; refused while another branch was
    /// created from it, or when it is the branch this dataset is on.
    pub async fn delete_branch(&self, name: &str) -> Result<()> {
        if self.branch() == Some(name) {
            return Err(Error::InvalidArgument(format!(
                "cannot delete branch {name:?} from a dataset opened on it; open another branch first"
            )));
        }
        let (refs, _) = self.refs_root()?;
        branches::delete_branch(refs.as_ref(), name).await.map_err(|e| match e {
            e if e.is_not_found() => Error::InvalidArgument(format!("branch {name:?} does not exist")),
            e => e.into(),
        })
    }

    /// Replaces the `metadata` of branch `name`'s reference.
    pub async fn replace_branch_metadata(&self, name: &str, metadata: Value) -> Result<()> {
        let (refs, _) = self.refs_root()?;
        Ok(branches::replace_metadata(refs.as_ref(), name, metadata).await?)
    }

    /// Every tag of the dataset (they live at its root, whichever branch this is).
    pub async fn all_tags(&self) -> Result<Vec<tags::Tag>> {
        let (refs, _) = self.refs_root()?;
        Ok(tags::list_tags(refs.as_ref()).await?)
    }

    /// Creates (or with `update`, moves) tag `name` to `version` of `branch` (main when
    /// `None`; this dataset's branch when `branch_given` is false).
    pub async fn set_tag(
        &self,
        name: &str,
        branch: Option<String>,
        branch_given: bool,
        version: u64,
        update: bool,
    ) -> Result<()> {
        let (refs, _) = self.refs_root()?;
        let branch = if branch_given {
            branch
        } else {
            self.branch().map(str::to_string)
        };
        if update {
            tags::update_tag_on(refs.as_ref(), name, branch.as_deref(), version).await?;
        } else {
            tags::create_tag_on(refs.as_ref(), name, branch.as_deref(), version).await?;
        }
        Ok(())
    }

    /// Deletes tag `name` (from the dataset's root).
    pub async fn delete_root_tag(&self, name: &str) -> Result<()> {
        let (refs, _) = self.refs_root()?;
        Ok(tags::delete_tag(refs.as_ref(), name).await?)
    }

    /// Clones `reference` to `target` without copying data: the target's manifest reads the
    /// source's files through a base path. Returns the clone.
    pub async fn shallow_clone(&self, target: &Location, reference: Option<VersionRef>) -> Result<Dataset> {
        if target.store.exists(VERSIONS_DIR).await? {
            return Err(Error::AlreadyExists(target.store.root_display()));
        }
        let src = self.resolve_reference(reference).await?;
        let src_root = src.root().display().to_string();
        let (mut m, indices) = shallow_manifest(&src, &src_root, src.branch().map(str::to_string)).await?;
        m.branch = None;
        let txn = clone_txn(&src, &src_root, true, None);
        write_first_manifest(target.store.as_ref(), &src, &mut m, &txn, &indices).await?;
        Dataset::open_at(target, None)
            .await
            .map(|d| d.with_storage_options(self.storage_options()))
    }

    /// Commits a `Clone` operation to `target`, a new location, as pylance's
    /// `LanceDataset.commit(target, LanceOperation.Clone(...), read_version=...)` does: a
    /// shallow clone of this dataset (opened at the clone's `ref_path` and `ref_version`)
    /// whose base path for the source is named `ref_name`, with a transaction recording
    /// `read_version` and the operation as given. A deep clone cannot be committed this
    /// way (nothing would copy the files), nor a branch (`branch_name`).
    pub async fn commit_clone(
        &self,
        target: &Location,
        clone: pb::transaction::Clone,
        read_version: u64,
        properties: std::collections::HashMap<String, String>,
    ) -> Result<Dataset> {
        if !clone.is_shallow {
            return Err(Error::InvalidArgument(
                "A deep Clone cannot be committed directly: the commit does not copy the source files, \
                 so the clone would name files it does not have. Use deep_clone instead."
                    .into(),
            ));
        }
        if let Some(b) = &clone.branch_name {
            return Err(Error::InvalidArgument(format!(
                "a Clone with branch_name {b:?} records the creation of a branch; create branches with \
                 create_branch() (a commit cannot write the branch's reference)"
            )));
        }
        if target.store.exists(VERSIONS_DIR).await? {
            return Err(Error::AlreadyExists(target.store.root_display()));
        }
        let src_root = self.root().display().to_string();
        let (mut m, indices) = shallow_manifest(self, &src_root, clone.ref_name.clone()).await?;
        m.branch = None;
        let mut txn = new_transaction(read_version, pb::transaction::Operation::Clone(clone), None);
        txn.transaction_properties = properties;
        write_first_manifest(target.store.as_ref(), self, &mut m, &txn, &indices).await?;
        Dataset::open_at(target, None)
            .await
            .map(|d| d.with_storage_options(self.storage_options()))
    }

    /// Clones `reference` to `target` with copies of every data, deletion and index file,
    /// wherever the source keeps them. Returns the clone.
    pub async fn deep_clone(&self, target: &Location, reference: Option<VersionRef>) -> Result<Dataset> {
        if target.store.exists(VERSIONS_DIR).await? {
            return Err(Error::AlreadyExists(target.store.root_display()));
        }
        let src = self.resolve_reference(reference).await?;
        let src_root = src.root().display().to_string();
        let dst = target.store.as_ref();
        let mut m = src.manifest().clone();
        let mut indices: Vec<pb::IndexMetadata> = src.indices().await?.as_ref().clone();
        for f in &m.fragments {
            for df in &f.files {
                let (s, p) = src.file_in_base(df.base_id, DATA_DIR, &df.path)?;
                copy_file(&s, &p, dst, &format!("{DATA_DIR}/{}", df.path)).await?;
            }
            if let Some(d) = &f.deletion_file {
                let own = deletion_file_path(f.id, d);
                let name = own.rsplit('/').next().unwrap_or(&own).to_string();
                let (s, p) = src.file_in_base(d.base_id, DELETIONS_DIR, &name)?;
                copy_file(&s, &p, dst, &own).await?;
            }
        }
        for idx in &indices {
            let (s, dir) = src.index_files(idx)?;
            let uuid = dir.rsplit('/').next().unwrap_or(&dir).to_string();
            copy_dir(&s, &dir, dst, &format!("{INDICES_DIR}/{uuid}")).await?;
        }
        drop_bases(&mut m, &mut indices);
        m.branch = None;
        let txn = clone_txn(&src, &src_root, false, None);
        write_first_manifest(dst, &src, &mut m, &txn, &indices).await?;
        Dataset::open_at(target, None)
            .await
            .map(|d| d.with_storage_options(self.storage_options()))
    }

    /// Registers new base paths (an UpdateBases commit). Ids that are `None` get the next
    /// free ones (the largest plus one, from 1... as pylance numbers them).
    pub async fn add_bases(&self, new: Vec<pb::BasePath>) -> Result<Dataset> {
        let op = pb::transaction::Operation::UpdateBases(pb::transaction::UpdateBases { new_bases: new });
        let latest = self.checkout(None).await?;
        latest.commit_operation(op, None).await
    }
}
