//! Removing old versions and the files only they use.
//!
//! A version is removed when the policy selects it (older than a cutoff and/or beyond the
//! newest N), it is not the newest version and no tag points at it. Then every file under
//! `data/`, `_deletions/` and `_transactions/` that no kept version references goes, in two
//! classes:
//!
//! - *verified*: referenced by a removed version, so it belonged to committed history;
//! - *unverified*: referenced by no version at all. It may be an orphan of a failed write,
//!   or part of a write still in progress, so it is only removed when older than
//!   [`UNVERIFIED_AGE`] or when the caller promises nobody writes (`delete_unverified`).
//!
//! Staged manifests an external manifest store left behind are unverified files too.
//! Manifests of removed versions are deleted first: a crash half-way leaves unreferenced
//! files (removed by a later cleanup), never a version whose files are gone.
//! Index directories (`_indices/{uuid}/`) follow the same rule: one no kept version names is
//! removed with its files (verified when a removed version named it). Branches (`_refs/branches/`)
//! keep the version they were created from and the root files their manifests use;
//! nothing under `tree/` is ever removed from the main branch. Run on a branch, cleanup
//! removes only that branch's own files (under `tree/{branch}/`), keeping the versions its
//! tags and child branches name; files in other base paths are never removed.

use std::collections::HashSet;
use std::time::{Duration, SystemTime};

use futures::StreamExt;
use lancelet_io::{FileMeta, Storage};
use lancelet_table::branches::{list_branches, BranchRef};
use lancelet_table::commit::TRANSACTIONS_DIR;
use lancelet_table::deletion::{deletion_file_path, DELETIONS_DIR};
use lancelet_table::indices::{decode_index_section, index_dir, INDICES_DIR};
use lancelet_table::naming::{ManifestNaming, VERSIONS_DIR};
use lancelet_table::pb;
use lancelet_table::tags::list_tags;
use lancelet_table::versions::list_versions;

use crate::{Dataset, Error, Result, DATA_DIR};

/// Files no version references are kept this long unless `delete_unverified` is set.
pub(crate) const UNVERIFIED_AGE: Duration = Duration::from_secs(7 * 24 * 3600);
/// The age cutoff when neither `older_than` nor `retain_versions` is given (pylance's).
pub(crate) const DEFAULT_OLDER_THAN: Duration = Duration::from_secs(14 * 24 * 3600);

/// Which versions [`Dataset::cleanup_old_versions`] removes.
#[derive(Debug, Clone)]
pub struct CleanupPolicy {
    /// Only versions committed longer ago than this.
    pub older_than: Option<Duration>,
    /// Keep the newest this many versions (at least 1).
    pub retain_versions: Option<u64>,
    /// Only these versions (still subject to the rules above and to tags).
    pub versions: Option<Vec<u64>>,
    /// Also remove unreferenced files younger than [`UNVERIFIED_AGE`].
    pub delete_unverified: bool,
    /// Fail, removing nothing, when a tagged version would otherwise be removed.
    pub error_if_tagged_old_versions: bool,
    /// Deletions in flight at once.
    pub delete_concurrency: usize,
    /// At most this many deletions per second.
    pub delete_rate_limit: Option<u64>,
}

impl Default for CleanupPolicy {
    fn default() -> Self {
        Self {
            older_than: None,
            retain_versions: None,
            versions: None,
            delete_unverified: false,
            error_if_tagged_old_versions: true,
            delete_concurrency: 16,
            delete_rate_limit: None,
        }
    }
}

/// What [`Dataset::cleanup_old_versions`] removed (pylance's names).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CleanupStats {
    /// Bytes of every removed file (manifests included).
    pub bytes_removed: u64,
    /// Versions removed.
    pub old_versions: u64,
    /// Data files removed.
    pub data_files_removed: u64,
    /// Transaction files removed.
    pub transaction_files_removed: u64,
    /// Index files removed.
    pub index_files_removed: u64,
    /// Deletion files removed.
    pub deletion_files_removed: u64,
    /// Deletions that failed (the files stay; a later cleanup retries them).
    pub failed_deletes: u64,
}

/// The files of one version inside the dataset root, as paths relative to it.
fn referenced(m: &pb::Manifest, out: &mut HashSet<String>) {
    for f in &m.fragments {
        for df in &f.files {
            if df.base_id.is_none() {
                out.insert(format!("{DATA_DIR}/{}", df.path));
            }
        }
        if let Some(d) = f.deletion_file.as_ref().filter(|d| d.base_id.is_none()) {
            out.insert(deletion_file_path(f.id, d));
        }
    }
    if !m.transaction_file.is_empty() {
        out.insert(format!("{TRANSACTIONS_DIR}/{}", m.transaction_file));
    }
}

/// Adds the root's files that the manifests of `branch` use: its inherited data and
/// deletion files carry a `base_id` (the root of the dataset it was created from). Names are
/// unique (uuids), so a name match is enough; keeping a file of a different base with the
/// same name would merely keep it a little longer.
async fn inherited_by_branch(store: &dyn Storage, branch: &BranchRef, out: &mut HashSet<String>) -> Result<()> {
    let dir = format!("{}/{VERSIONS_DIR}", branch.root());
    for name in store.list(&dir).await? {
        if ManifestNaming::parse(&name).is_none() {
            continue;
        }
        let path = format!("{dir}/{name}");
        let bytes = store.read(&path).await?;
        let m = lancelet_table::manifest::decode_manifest(&bytes, &path)?;
        for f in &m.fragments {
            for df in f.files.iter().filter(|df| df.base_id.is_some()) {
                out.insert(format!("{DATA_DIR}/{}", df.path));
            }
            if let Some(d) = f.deletion_file.as_ref().filter(|d| d.base_id.is_some()) {
                out.insert(deletion_file_path(f.id, d));
            }
        }
    }
    Ok(())
}

fn commit_time(m: &pb::Manifest) -> SystemTime {
    let t = m.timestamp.unwrap_or_default();
    let secs = u64::try_from(t.seconds).unwrap_or(0);
    let nanos = u32::try_from(t.nanos).unwrap_or(0);
    SystemTime::UNIX_EPOCH + Duration::new(secs, nanos.min(999_999_999))
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Manifest,
    Data,
    Transaction,
    Deletion,
    Index,
    Other,
}

fn kind_of(path: &str) -> Kind {
    match path.split('/').next() {
        Some(INDICES_DIR) => Kind::Index,
        Some(VERSIONS_DIR) if ManifestNaming::parse(path.rsplit('/').next().unwrap_or("")).is_some() => Kind::Manifest,
        Some(DATA_DIR) => Kind::Data,
        Some(TRANSACTIONS_DIR) => Kind::Transaction,
        Some(DELETIONS_DIR) => Kind::Deletion,
        _ => Kind::Other,
    }
}

impl Dataset {
    /// Removes old versions, and files nothing kept refers to, as `policy` says.
    ///
    /// Never removes the newest version or a tagged one. With
    /// `error_if_tagged_old_versions`, a tagged version the policy selects is an error and
    /// nothing is removed.
    pub async fn cleanup_old_versions(&self, policy: &CleanupPolicy) -> Result<CleanupStats> {
        if policy.retain_versions == Some(0) {
            return Err(Error::InvalidArgument("retain_versions must be at least 1".into()));
        }
        let store = self.store.as_ref();
        let entries = list_versions(store).await?;
        let Some(latest) = entries.last().map(|e| e.version) else {
            return Ok(CleanupStats::default());
        };
        let now = SystemTime::now();
        let older_than = match (policy.older_than, policy.retain_versions) {
            (None, None) => Some(DEFAULT_OLDER_THAN),
            (o, _) => o,
        };
        let cutoff = older_than.map(|d| now.checked_sub(d).unwrap_or(SystemTime::UNIX_EPOCH));
        let retained_from = policy
            .retain_versions
            .map(|n| entries.len().saturating_sub(usize::try_from(n).unwrap_or(usize::MAX)));
        // Tags and branch references live at the dataset's root, whichever branch this is.
        let (refs, _) = self.refs_root()?;
        let refs = refs.as_ref();
        let this_branch = self.branch().map(str::to_string);
        let on_this = |b: Option<&str>| match &this_branch {
            None => lancelet_table::branches::is_main(b),
            Some(me) => b == Some(me.as_str()),
        };
        let tagged: HashSet<u64> = list_tags(refs)
            .await?
            .iter()
            .filter(|t| on_this(t.branch.as_deref()))
            .map(|t| t.version)
            .collect();
        // Versions a branch was created from stay, like tagged ones (without the error: they
        // are not the user's to choose here), and so does every file of the root that a
        // branch's own manifests still use.
        let branches = list_branches(refs).await?;
        let forked: HashSet<u64> = branches
            .iter()
            .filter(|b| on_this(b.parent_branch.as_deref()))
            .map(|b| b.parent_version)
            .collect();

        let mut keep = HashSet::new();
        for branch in &branches {
            inherited_by_branch(refs, branch, &mut keep).await?;
        }
        let mut gone = HashSet::new();
        let mut removed_manifests = Vec::new();
        let mut tagged_hits = Vec::new();
        for (i, entry) in entries.iter().enumerate() {
            let bytes = store.read(&entry.path).await?;
            let m = lancelet_table::versions::decode_entry(&bytes, entry)?;
            let index_dirs: Vec<String> = decode_index_section(&bytes, &m, &entry.path)?
                .iter()
                .filter_map(|i| index_dir(i).ok())
                .collect();
            let selected = entry.version != latest
                && cutoff.is_none_or(|c| commit_time(&m) < c)
                && retained_from.is_none_or(|from| i < from)
                && policy.versions.as_ref().is_none_or(|vs| vs.contains(&entry.version));
            if selected && tagged.contains(&entry.version) {
                tagged_hits.push(entry.version);
            }
            if selected && !tagged.contains(&entry.version) && !forked.contains(&entry.version) {
                referenced(&m, &mut gone);
                gone.extend(index_dirs);
                removed_manifests.push(entry.path.clone());
            } else {
                referenced(&m, &mut keep);
                keep.extend(index_dirs);
            }
        }
        if policy.error_if_tagged_old_versions && !tagged_hits.is_empty() {
            let mut names: Vec<String> = list_tags(refs)
                .await?
                .into_iter()
                .filter(|t| on_this(t.branch.as_deref()) && tagged_hits.contains(&t.version))
                .map(|t| format!("{} (version {})", t.name, t.version))
                .collect();
            names.sort();
            return Err(Error::InvalidArgument(format!(
                "cleanup would remove {} tagged version(s); delete the tags {} or pass \
                 error_if_tagged_old_versions=False to keep tagged versions and remove the rest",
                tagged_hits.len(),
                names.join(", ")
            )));
        }

        let young = now.checked_sub(UNVERIFIED_AGE).unwrap_or(SystemTime::UNIX_EPOCH);
        let mut doomed: Vec<(String, u64)> = Vec::new();
        for dir in [DATA_DIR, DELETIONS_DIR, TRANSACTIONS_DIR, VERSIONS_DIR] {
            for FileMeta { name, size, modified } in store.list_meta(dir).await? {
                let path = format!("{dir}/{name}");
                let staged = dir == VERSIONS_DIR && name.contains(".manifest-");
                if (dir == VERSIONS_DIR && !staged) || keep.contains(&path) {
                    continue;
                }
                let verified = gone.contains(&path);
                if verified || policy.delete_unverified || modified < young {
                    doomed.push((path, size));
                }
            }
        }
        let mut emptied = Vec::new();
        // Blob sidecars (`data/<stem>/<id>.blob`) go with their data file.
        let data_files: Vec<String> = doomed.iter().map(|(p, _)| p.clone()).collect();
        for path in data_files {
            let Some(stem) = path
                .strip_prefix(&format!("{DATA_DIR}/"))
                .and_then(|n| n.strip_suffix(".lance"))
            else {
                continue;
            };
            let dir = format!("{DATA_DIR}/{stem}");
            let files = store.list_meta(&dir).await.unwrap_or_default();
            if !files.is_empty() {
                doomed.extend(files.into_iter().map(|f| (format!("{dir}/{}", f.name), f.size)));
                emptied.push(dir);
            }
        }
        for dir in store.list(INDICES_DIR).await? {
            let dir = format!("{INDICES_DIR}/{dir}");
            if keep.contains(&dir) {
                continue;
            }
            let files = store.list_meta(&dir).await?;
            let verified = gone.contains(&dir);
            // A directory is as young as its newest file: an index being built adds files.
            let newest = files.iter().map(|f| f.modified).max().unwrap_or(SystemTime::UNIX_EPOCH);
            if verified || policy.delete_unverified || newest < young {
                doomed.extend(files.into_iter().map(|f| (format!("{dir}/{}", f.name), f.size)));
                emptied.push(dir);
            }
        }
        let sizes = store.list_meta(VERSIONS_DIR).await?;
        let manifests: Vec<(String, u64)> = removed_manifests
            .into_iter()
            .map(|p| {
                let size = sizes
                    .iter()
                    .find(|f| p.ends_with(&format!("/{}", f.name)))
                    .map_or(0, |f| f.size);
                (p, size)
            })
            .collect();

        let mut stats = CleanupStats::default();
        // The hint names the latest version before any older one goes: a stale hint at a
        // kept old version with the versions above it removed would hide the newest ones
        // from a reader that trusts it.
        lancelet_table::versions::write_latest_hint(store, latest).await;
        // Manifests first: the versions disappear before any file they use.
        delete_all(store, manifests, policy, &mut stats).await;
        delete_all(store, doomed, policy, &mut stats).await;
        // On local disk the index directories themselves go too (object stores have none);
        // removing a directory that is not empty fails, which leaves it safely in place.
        for dir in emptied {
            if let Some(path) = store.local_path(&dir) {
                let _ = std::fs::remove_dir(path);
            }
        }
        Ok(stats)
    }
}

async fn delete_all(store: &dyn Storage, files: Vec<(String, u64)>, policy: &CleanupPolicy, stats: &mut CleanupStats) {
    let started = std::time::Instant::now();
    let done = std::sync::atomic::AtomicU64::new(0);
    let results: Vec<(String, u64, bool)> = futures::stream::iter(files)
        .map(|(path, size)| {
            let done = &done;
            async move {
                if let Some(rate) = policy.delete_rate_limit.filter(|r| *r > 0) {
                    let n = done.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    let due = started + Duration::from_secs_f64(n as f64 / rate as f64);
                    tokio::time::sleep_until(due.into()).await;
                }
                let ok = store.delete(&path).await.is_ok();
                (path, size, ok)
            }
        })
        .buffer_unordered(policy.delete_concurrency.max(1))
        .collect()
        .await;
    for (path, size, ok) in results {
        if !ok {
            stats.failed_deletes += 1;
            continue;
        }
        stats.bytes_removed += size;
        match kind_of(&path) {
            Kind::Manifest => stats.old_versions += 1,
            Kind::Data => stats.data_files_removed += 1,
            Kind::Transaction => stats.transaction_files_removed += 1,
            Kind::Deletion => stats.deletion_files_removed += 1,
            Kind::Index => stats.index_files_removed += 1,
            Kind::Other => {}
        }
    }
}
