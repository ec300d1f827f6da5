//! Lance datasets: a versioned table made of fragments, each made of data files.
//!
//! [`Dataset`] (this file) is one version of a dataset: it opens any version, tag or
//! branch, lists versions, and caches open data files, deletion vectors and indexes across
//! the versions opened from one handle. The folders, in the order a newcomer reads them:
//!
//! - [`scan`]: reading: plan (projection, SQL filter, pruning, index answers), tasks,
//!   their run, limit/offset, row lineage (`_rowid`, `_rowaddr`, ...), `take` by offset or
//!   address, counts, and the read-ahead that runs tasks ahead of a consumer.
//! - [`write`]: streaming writes into new data files and the Append / Overwrite commits.
//! - [`commit`]: the one commit path (the caller's commit lock, automatic cleanup), the
//!   intents of distributed jobs, retries after conflicts, durability, and user operations.
//! - [`modify`]: delete, update and merge_insert, and SQL conditions over batches.
//! - [`evolve`]: adding, dropping and altering columns ([`evolve::backfill`] with a user
//!   function, [`evolve::merge_columns`] joined on a key).
//! - [`index`]: index entries, scalar index builds and queries, vector index builds,
//!   nearest-neighbour search, and index segments built apart from their commit.
//! - [`blob`]: blob columns: reading payloads, writing blob v2 columns, rewriting them.
//! - [`bases`]: base paths, branches, clones, and writes spread over several bases.
//! - [`maintain`]: cleanup of old versions, compaction, and the table config.
//! - [`json`]: JSON columns at the dataset's edges.

pub mod bases;
pub mod blob;
pub mod commit;
pub mod debug;
mod error;
pub mod evolve;
mod fields;
pub mod index;
pub mod json;
pub mod loader;
pub mod maintain;
pub mod modify;
pub mod scan;
pub mod write;

use std::collections::HashMap;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use arrow_schema::SchemaRef;
use lancelet_file::schema::from_lance_fields;
use lancelet_file::{FileReader, Spawner};
use lancelet_io::IoStats;
use lancelet_io::{LocalStore, Storage};
use lancelet_table::commit::{new_transaction, CommitOptions};
use lancelet_table::deletion::{decode_deletions, deletion_file_path};
use lancelet_table::manifest::{check_reader_flags, live_rows, FLAG_STABLE_ROW_IDS};
use lancelet_table::naming::VERSIONS_DIR;
pub use lancelet_table::object::{open_uri, Location};
use lancelet_table::pb;
use lancelet_table::tags;
use lancelet_table::versions::{list_versions, read_entry, read_version};

pub use error::{Error, Result};
pub use lancelet_table::naming::ManifestNaming;

// The layers below, for callers of this crate that name their types (the Python glue
// depends on this crate, the file crate and the io crate only): manifests, transactions and
// row ids (`table`, with its protobuf types in `table::pb`), index files (`indexes`),
// vector search (`vector`) and file-level protobuf types (`proto`).
pub use lancelet_fts as fulltext;
pub use lancelet_index as indexes;
pub use lancelet_proto as proto;
pub use lancelet_table as table;
pub use lancelet_table::tags::Tag;
pub use lancelet_vector as vector;

/// A [`Spawner`] that runs column reads as tasks on the tokio runtime behind `handle`, so
/// one read decodes its columns in parallel (see [`Dataset::with_spawner`]).
pub fn tokio_spawner(handle: tokio::runtime::Handle) -> Spawner {
    Arc::new(move |fut| {
        let task = handle.spawn(fut);
        Box::pin(async move { task.await.map_err(task_failed)? })
    })
}

/// Removes the dataset at `loc`: every version, data file, index and branch under its root,
/// and the root folder itself on local disk (pylance's `LanceDataset.drop`). A location
/// holding no dataset (no versions) is [`Error::NotFound`] unless `ignore_not_found`.
pub async fn drop_dataset(loc: &Location, ignore_not_found: bool) -> Result<()> {
    if loc.store.list(VERSIONS_DIR).await?.is_empty() {
        return match ignore_not_found {
            true => Ok(()),
            false => Err(Error::NotFound(format!("no dataset at {}", loc.store.root_display()))),
        };
    }
    lancelet_io::remove_tree(loc.store.as_ref(), "").await?;
    Ok(())
}

/// A read task that panicked or was cancelled: an internal error, never the caller's fault.
pub fn task_failed(e: tokio::task::JoinError) -> lancelet_file::Error {
    lancelet_file::Error::Internal(format!("a column read task failed: {e}"))
}

/// The directory holding data files, relative to the dataset root.
pub(crate) const DATA_DIR: &str = "data";

/// Open data files and decoded deletion vectors, shared by every version of a dataset
/// opened from the same handle (files are immutable, so entries never go stale).
#[derive(Debug, Default)]
struct Caches {
    files: Mutex<HashMap<String, Arc<FileReader>>>,
    deletions: Mutex<HashMap<String, Arc<Vec<u32>>>>,
    /// Decoded row lineage by (version, fragment id).
    lineage: Mutex<HashMap<(u64, u64), Arc<scan::lineage::FragmentLineage>>>,
    /// Row id index by version.
    row_id_index: Mutex<HashMap<u64, Arc<lancelet_table::rowids::RowIdIndex>>>,
    /// Opened scalar indexes by uuid (their files never change).
    scalar_indexes: Mutex<HashMap<String, Arc<dyn lancelet_index::scalar::ScalarIndex>>>,
    /// Opened vector indexes by directory.
    vector_indexes: Mutex<HashMap<String, Arc<lancelet_vector::ivf::IvfIndex>>>,
    /// Opened full-text indexes by directory.
    fts_indexes: Mutex<HashMap<String, Arc<lancelet_fts::FtsIndex>>>,
    /// The storage options the dataset was opened with (for its other base paths, branches).
    storage_options: Mutex<HashMap<String, String>>,
    /// Stores of other base paths, by path.
    base_stores: Mutex<HashMap<String, Arc<dyn Storage>>>,
    /// Whether external blobs outside the registered base paths may be read.
    external_outside_bases: std::sync::atomic::AtomicBool,
    /// The first `_rowoffset` of each fragment, by version and fragment id.
    row_offset_bases: Mutex<HashMap<u64, Arc<HashMap<u64, u64>>>>,
    /// The lock every commit of these datasets is made inside (see [`commit::CommitLock`]).
    commit_lock: Mutex<Option<Arc<dyn commit::CommitLock>>>,
}

/// A version of a dataset, by number or by tag name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum VersionRef {
    /// A version number.
    Number(u64),
    /// A tag name.
    Tag(String),
    /// A version of a branch (`None`: main; version `None`: its latest).
    Branch(Option<String>, Option<u64>),
}

/// One entry of [`Dataset::versions`].
#[derive(Debug, Clone)]
pub struct VersionInfo {
    /// The version number.
    pub version: u64,
    /// Commit time (seconds, nanoseconds since the epoch).
    pub timestamp: (i64, i32),
    /// Live rows at that version.
    pub num_rows: u64,
    /// The operation that created it and its properties (e.g. a commit message).
    pub metadata: HashMap<String, String>,
}

/// One version of a dataset, opened for reading (and committing on top of).
#[derive(Clone)]
pub struct Dataset {
    store: Arc<dyn Storage>,
    root: PathBuf,
    manifest: Arc<pb::Manifest>,
    naming: ManifestNaming,
    schema: SchemaRef,
    /// What scans return: `schema` with blob columns as their descriptors.
    scan_schema: SchemaRef,
    caches: Arc<Caches>,
    spawner: Option<Spawner>,
    /// Where reads of data files are counted, when someone asked.
    io_stats: Option<Arc<IoStats>>,
    /// The version's index entries, read from the manifest file on first use.
    indices: Arc<tokio::sync::OnceCell<Arc<Vec<pb::IndexMetadata>>>>,
    /// Whether data files' checksums are verified on every read (the default).
    verify_checksums: bool,
}

impl std::fmt::Debug for Dataset {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Dataset")
            .field("root", &self.root)
            .field("version", &self.manifest.version)
            .field("naming", &self.naming)
            .finish()
    }
}

impl Dataset {
    /// Opens the dataset at `root` at `version` (the latest when `None`).
    pub async fn open(root: &Path, version: Option<VersionRef>) -> Result<Self> {
        let loc = Location {
            store: Arc::new(LocalStore::new(root)),
            local_root: Some(root.to_path_buf()),
        };
        Self::open_at(&loc, version).await
    }

    /// Opens the dataset at `loc` (any store) at `version` (the latest when `None`).
    pub async fn open_at(loc: &Location, version: Option<VersionRef>) -> Result<Self> {
        let root = loc
            .local_root
            .clone()
            .unwrap_or_else(|| PathBuf::from(loc.store.root_display()));
        if !loc.store.exists(VERSIONS_DIR).await? {
            return Err(Error::NotFound(root.display().to_string()));
        }
        Self::open_with(loc.store.clone(), root, version, Arc::default(), None).await
    }

    async fn open_with(
        store: Arc<dyn Storage>,
        root: PathBuf,
        version: Option<VersionRef>,
        caches: Arc<Caches>,
        spawner: Option<Spawner>,
    ) -> Result<Self> {
        let number = match version {
            None => None,
            Some(VersionRef::Number(v)) => Some(v),
            Some(VersionRef::Tag(name)) => {
                let refs = bases::refs_root(&store, &root, &caches).await?;
                let tag = tags::get_tag(refs.store.as_ref(), &name).await?;
                if !tag.on_main() || refs.branch.is_some() {
                    return Self::open_branch(&store, &root, tag.branch, Some(tag.version), caches, spawner).await;
                }
                Some(tag.version)
            }
            Some(VersionRef::Branch(branch, v)) => {
                return Self::open_branch(&store, &root, branch, v, caches, spawner).await;
            }
        };
        let (manifest, naming) = read_version(store.as_ref(), number).await.map_err(|e| match e {
            lancelet_table::Error::Storage(lancelet_io::Error::NotFound { path }) => Error::NotFound(path),
            e => e.into(),
        })?;
        Self::from_manifest(store, root, manifest, naming, caches, spawner)
    }

    fn from_manifest(
        store: Arc<dyn Storage>,
        root: PathBuf,
        manifest: pb::Manifest,
        naming: ManifestNaming,
        caches: Arc<Caches>,
        spawner: Option<Spawner>,
    ) -> Result<Self> {
        let path = root.display().to_string();
        check_reader_flags(&manifest, &path)?;
        lancelet_table::bases::check_manifest_bases(&manifest, &path)?;
        check_fragments(&manifest, &path)?;
        let schema = Arc::new(from_lance_fields(&manifest.fields, &manifest.schema_metadata, &path)?);
        let scan_schema = lancelet_file::blob::scan_schema(&schema).map_or_else(|| schema.clone(), Arc::new);
        Ok(Self {
            store,
            root,
            manifest: Arc::new(manifest),
            naming,
            schema,
            scan_schema,
            caches,
            spawner,
            io_stats: None,
            verify_checksums: true,
            indices: Arc::default(),
        })
    }

    /// Whether the dataset is on local disk (rather than an object store).
    pub fn is_local(&self) -> bool {
        self.store.local_path(VERSIONS_DIR).is_some()
    }

    /// Counts the data file reads made through this handle into `stats`.
    pub fn with_io_stats(mut self, stats: Arc<IoStats>) -> Self {
        self.io_stats = Some(stats);
        self
    }

    /// Verifies the checksums of data files on every read (`true`, the default), or reads
    /// them unchecked, to salvage what can be read of a damaged dataset.
    pub fn with_verify_checksums(mut self, verify: bool) -> Self {
        self.verify_checksums = verify;
        self
    }

    /// Whether data files' checksums are verified on every read.
    pub fn verifies_checksums(&self) -> bool {
        self.verify_checksums
    }

    /// Uses `spawner` to decode columns of one read in parallel.
    pub fn with_spawner(mut self, spawner: Spawner) -> Self {
        self.spawner = Some(spawner);
        self
    }

    /// The same dataset at another version (sharing this handle's caches and its choice
    /// of verifying checksums).
    pub async fn checkout(&self, version: Option<VersionRef>) -> Result<Self> {
        Ok(Self::open_with(
            self.store.clone(),
            self.root.clone(),
            version,
            self.caches.clone(),
            self.spawner.clone(),
        )
        .await?
        .with_verify_checksums(self.verify_checksums))
    }

    /// The dataset root directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The metadata store.
    pub fn store(&self) -> &Arc<dyn Storage> {
        &self.store
    }

    /// The version this dataset was opened at.
    pub fn version(&self) -> u64 {
        self.manifest.version
    }

    /// The manifest of this version.
    pub fn manifest(&self) -> &pb::Manifest {
        &self.manifest
    }

    /// How this dataset names its manifests.
    pub fn naming(&self) -> ManifestNaming {
        self.naming
    }

    /// The table schema.
    pub fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    /// The schema scans and takes return: [`Dataset::schema`] with blob columns as their
    /// descriptors (see [`blob`]).
    pub(crate) fn scan_schema(&self) -> &SchemaRef {
        &self.scan_schema
    }

    /// The data file format version, e.g. `"2.0"`.
    pub fn data_storage_version(&self) -> String {
        if let Some(df) = &self.manifest.data_format {
            if !df.version.is_empty() {
                return df.version.clone();
            }
        }
        match self.manifest.fragments.first().and_then(|f| f.files.first()) {
            Some(d) if d.file_major_version == 0 => "legacy".to_string(),
            Some(d) => format!("{}.{}", d.file_major_version, d.file_minor_version),
            None => "2.0".to_string(),
        }
    }

    /// Whether rows have move-stable ids (then `_rowid` is not the row address).
    pub fn has_stable_row_ids(&self) -> bool {
        self.manifest.reader_feature_flags & FLAG_STABLE_ROW_IDS != 0
    }

    /// Rows in this version (deleted rows excluded).
    pub fn count_rows(&self) -> u64 {
        self.manifest.fragments.iter().map(live_rows).sum()
    }

    /// The fragments of this version.
    pub fn fragments(&self) -> &[pb::DataFragment] {
        &self.manifest.fragments
    }

    /// The fragment with id `id`.
    pub fn fragment(&self, id: u64) -> Result<&pb::DataFragment> {
        self.manifest.fragments.iter().find(|f| f.id == id).ok_or_else(|| {
            Error::InvalidArgument(format!("fragment {id} does not exist in version {}", self.version()))
        })
    }

    /// The newest version number.
    pub async fn latest_version(&self) -> Result<u64> {
        Ok(lancelet_table::versions::latest_version(self.store.as_ref())
            .await?
            .map(|e| e.version)
            .unwrap_or(0))
    }

    /// Every version, oldest first.
    pub async fn versions(&self) -> Result<Vec<VersionInfo>> {
        let mut out = Vec::new();
        for entry in list_versions(self.store.as_ref()).await? {
            let m = read_entry(self.store.as_ref(), &entry).await?;
            let ts = m.timestamp.as_ref().map(|t| (t.seconds, t.nanos)).unwrap_or((0, 0));
            let mut metadata = HashMap::new();
            if !m.tag.is_empty() {
                metadata.insert("tag".to_string(), m.tag.clone());
            }
            out.push(VersionInfo {
                version: m.version,
                timestamp: ts,
                num_rows: m.fragments.iter().map(live_rows).sum(),
                metadata,
            });
        }
        Ok(out)
    }

    /// Every tag.
    pub async fn tags(&self) -> Result<Vec<Tag>> {
        Ok(tags::list_tags(self.store.as_ref()).await?)
    }

    /// Creates a tag.
    pub async fn create_tag(&self, name: &str, version: u64) -> Result<()> {
        Ok(tags::create_tag(self.store.as_ref(), name, version).await?)
    }

    /// Moves a tag.
    pub async fn update_tag(&self, name: &str, version: u64) -> Result<()> {
        Ok(tags::update_tag(self.store.as_ref(), name, version).await?)
    }

    /// Deletes a tag.
    pub async fn delete_tag(&self, name: &str) -> Result<()> {
        Ok(tags::delete_tag(self.store.as_ref(), name).await?)
    }

    /// Commits a new version whose content is this version's (a Restore transaction).
    pub async fn restore(&self) -> Result<Self> {
        let op = pb::transaction::Operation::Restore(pb::transaction::Restore {
            version: self.version(),
        });
        let latest = self.checkout(None).await?;
        latest.commit_operation(op, None).await
    }

    /// Commits `op` read at this version and returns the dataset at the new version.
    pub async fn commit_operation(&self, op: pb::transaction::Operation, message: Option<&str>) -> Result<Self> {
        check_fragment_id_room(&self.manifest, &op, &self.root.display().to_string())?;
        let txn = new_transaction(self.version(), op, message);
        let opts = CommitOptions::default();
        self.commit_transaction(&txn, &opts).await
    }

    /// Commits `txn` (read at this version) with this dataset's commit lock, then runs the
    /// automatic cleanup its config asks for; the dataset at the new version.
    pub(crate) async fn commit_transaction(&self, txn: &pb::Transaction, opts: &CommitOptions) -> Result<Self> {
        let lock = self.commit_lock();
        let base = Some((self.manifest.as_ref(), self.naming));
        let (m, naming) =
            commit::commit_with_hooks(self.store.as_ref(), base, txn, opts, lock.as_ref(), || Ok(())).await?;
        let ds = Self::from_manifest(
            self.store.clone(),
            self.root.clone(),
            m,
            naming,
            self.caches.clone(),
            self.spawner.clone(),
        )?
        .with_verify_checksums(self.verify_checksums);
        Ok(ds.after_commit().await)
    }

    /// The key of file `path` of base `base_id` in the caches shared across checkouts: what
    /// was read without checking checksums is kept apart from what was checked.
    fn cache_key(&self, base_id: Option<u32>, path: &str) -> String {
        let key = match base_id {
            None => path.to_string(),
            Some(id) => format!("{id}:{path}"),
        };
        if self.verify_checksums {
            key
        } else {
            format!("unverified:{key}")
        }
    }

    /// The open reader of data file `path` (relative to `data/` of base `base_id`), from
    /// the cache shared across checkouts.
    pub(crate) async fn data_file_reader(&self, base_id: Option<u32>, path: &str) -> Result<Arc<FileReader>> {
        let key = self.cache_key(base_id, path);
        if let Some(r) = self.caches.files.lock().ok().and_then(|c| c.get(&key).cloned()) {
            return Ok(r);
        }
        safe_relative(path)?;
        let (store, at) = self.file_in_base(base_id, DATA_DIR, path)?;
        let io = store.open_file(&at).await?;
        let r = Arc::new(FileReader::open_with(io, self.verify_checksums).await?);
        if let Ok(mut c) = self.caches.files.lock() {
            c.insert(key, r.clone());
        }
        Ok(r)
    }

    /// The open data files of a fragment, in the fragment's order.
    /// Each file is checked to hold the fragment's `physical_rows`: that count comes from
    /// the manifest, and everything sized by it (scan tasks, row addresses) trusts it.
    pub(crate) async fn fragment_readers(&self, frag: &pb::DataFragment) -> Result<Vec<Arc<FileReader>>> {
        if frag.files.is_empty() && frag.physical_rows > 0 {
            return Err(Error::corrupt(
                &self.root.display().to_string(),
                format!("fragment {} has {} rows but no data files", frag.id, frag.physical_rows),
            ));
        }
        let mut out = Vec::with_capacity(frag.files.len());
        for df in &frag.files {
            let reader = self.data_file_reader(df.base_id, &df.path).await?;
            // Checked on every use: two fragments of a damaged manifest may share a file.
            if reader.num_rows() != frag.physical_rows {
                return Err(Error::corrupt(
                    &reader.metadata().path,
                    format!(
                        "data file has {} rows but fragment {} has {}",
                        reader.num_rows(),
                        frag.id,
                        frag.physical_rows
                    ),
                ));
            }
            out.push(match &self.io_stats {
                Some(stats) => Arc::new(reader.with_stats(stats.clone())),
                None => reader,
            });
        }
        Ok(out)
    }

    /// The sorted deleted row offsets of a fragment.
    pub(crate) async fn deleted_rows(&self, frag: &pb::DataFragment) -> Result<Arc<Vec<u32>>> {
        let Some(d) = frag.deletion_file.as_ref() else {
            return Ok(Arc::new(Vec::new()));
        };
        let own = deletion_file_path(frag.id, d);
        let (store, rel) = match d.base_id {
            None => (self.store.clone(), own),
            Some(_) => {
                let name = own.rsplit('/').next().unwrap_or(&own).to_string();
                self.file_in_base(d.base_id, lancelet_table::deletion::DELETIONS_DIR, &name)?
            }
        };
        let key = self.cache_key(d.base_id, &rel);
        if let Some(v) = self.caches.deletions.lock().ok().and_then(|c| c.get(&key).cloned()) {
            return Ok(v);
        }
        let bytes = store.read(&rel).await?;
        let display = format!("{}/{rel}", store.root_display());
        if self.verify_checksums {
            lancelet_table::deletion::verify_deletions(&bytes, d, &display)?;
        }
        let rows = decode_deletions(&bytes, d, &display)?;
        if let Some(&last) = rows.last() {
            if u64::from(last) >= frag.physical_rows {
                return Err(Error::corrupt(
                    &display,
                    format!("deleted row {last} is past the fragment's {} rows", frag.physical_rows),
                ));
            }
        }
        let rows = Arc::new(rows);
        if let Ok(mut c) = self.caches.deletions.lock() {
            c.insert(key, rows.clone());
        }
        Ok(rows)
    }

    /// Row ranges of a fragment that are not deleted.
    pub(crate) async fn live_ranges(&self, frag: &pb::DataFragment) -> Result<Vec<Range<u64>>> {
        let deleted = self.deleted_rows(frag).await?;
        Ok(complement(&deleted, frag.physical_rows))
    }

    /// The file version of this dataset's data files, for an operation (`what`) that
    /// writes new ones; legacy (0.1) datasets are refused before anything is written.
    pub(crate) fn writable_version(&self, what: &str) -> Result<lancelet_file::FileVersion> {
        let name = self.data_storage_version();
        if matches!(name.as_str(), "0.1" | "legacy") {
            return Err(Error::Unsupported(format!(
                "{what} on a legacy (file format 0.1) dataset: lancelet reads legacy datasets but \
                 writes only 2.0, 2.1 and 2.2 files"
            )));
        }
        let version = lancelet_file::FileVersion::parse(&name)?;
        Ok(version)
    }

    pub(crate) fn spawner(&self) -> Option<&Spawner> {
        self.spawner.as_ref()
    }
}

/// The ranges of `0..n` not listed in `sorted` (distinct, ascending, all below `n`).
pub(crate) fn complement(sorted: &[u32], n: u64) -> Vec<Range<u64>> {
    let mut out = Vec::with_capacity(sorted.len() + 1);
    let mut start = 0u64;
    for &row in sorted {
        let row = u64::from(row);
        if row > start {
            out.push(start..row);
        }
        start = row + 1;
    }
    if start < n {
        out.push(start..n);
    }
    out
}

/// Most rows a fragment can have: row addresses keep the row offset in 32 bits.
const MAX_FRAGMENT_ROWS: u64 = 1 << 32;

/// Refuses fragment lists that are inconsistent in ways later code relies on: ids must be
/// distinct and fit the 32 bits of a row address, row counts must be addressable, deletion
/// files must be of a known type, count no more rows than exist and live under the root,
/// and data file paths must stay inside the data directory.
fn check_fragments(m: &pb::Manifest, path: &str) -> Result<()> {
    let corrupt = |msg: String| Error::corrupt(path, msg);
    let mut ids = std::collections::HashSet::with_capacity(m.fragments.len());
    for f in &m.fragments {
        if f.id > u64::from(u32::MAX) {
            return Err(corrupt(format!(
                "fragment id {} does not fit the 32 bits of a row address",
                f.id
            )));
        }
        if !ids.insert(f.id) {
            return Err(corrupt(format!("duplicate fragment id {}", f.id)));
        }
        if f.physical_rows > MAX_FRAGMENT_ROWS {
            return Err(corrupt(format!(
                "fragment {} claims {} rows; a fragment holds at most 2^32 rows",
                f.id, f.physical_rows
            )));
        }
        if let Some(d) = &f.deletion_file {
            if pb::deletion_file::DeletionFileType::try_from(d.file_type).is_err() {
                return Err(corrupt(format!(
                    "fragment {} has unknown deletion file type {}",
                    f.id, d.file_type
                )));
            }
            if d.num_deleted_rows > f.physical_rows {
                return Err(corrupt(format!(
                    "fragment {} claims {} deleted rows of {}",
                    f.id, d.num_deleted_rows, f.physical_rows
                )));
            }
        }
        for df in &f.files {
            if safe_relative(&df.path).is_err() {
                return Err(corrupt(format!(
                    "fragment {} names data file {:?}, which leaves the dataset directory",
                    f.id, df.path
                )));
            }
        }
    }
    Ok(())
}

/// Refuses, before anything is committed, an operation that would give a new fragment an
/// id past `u32::MAX` (row addresses hold fragment ids in 32 bits; a damaged or exhausted
/// `max_fragment_id` gets there).
pub(crate) fn check_fragment_id_room(base: &pb::Manifest, op: &pb::transaction::Operation, path: &str) -> Result<()> {
    use pb::transaction::Operation;
    let new = match op {
        Operation::Append(a) => a.fragments.len() as u64,
        Operation::Overwrite(o) => o.fragments.len() as u64,
        Operation::ReserveFragments(r) => u64::from(r.num_fragments),
        _ => 0,
    };
    if new == 0 {
        return Ok(());
    }
    let used = base
        .fragments
        .iter()
        .map(|f| f.id)
        .chain(base.max_fragment_id.map(u64::from))
        .max();
    let first = used.map_or(0, |u| u.saturating_add(1));
    if first.saturating_add(new - 1) > u64::from(u32::MAX) {
        return Err(Error::Unsupported(format!(
            "{path} has used fragment ids up to {}: {new} new fragment(s) would not fit the 32 bits of a row address",
            used.unwrap_or(0)
        )));
    }
    Ok(())
}

/// A data file path from a manifest, refused if it could escape the data directory.
pub(crate) fn safe_relative(p: &str) -> Result<&Path> {
    let path = Path::new(p);
    let ok = !p.is_empty() && path.components().all(|c| matches!(c, std::path::Component::Normal(_)));
    if ok {
        Ok(path)
    } else {
        Err(Error::corrupt(p, "data file path leaves the dataset directory"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scan::take::live_to_physical;

    proptest::proptest! {
        #[test]
        fn live_offsets_map_to_the_rows_not_deleted(deleted in proptest::collection::btree_set(0u32..300, 0..300)) {
            let deleted: Vec<u32> = deleted.into_iter().collect();
            let n = 300u64;
            let live = complement(&deleted, n);
            let expected: Vec<u64> = (0..n).filter(|r| deleted.binary_search(&(*r as u32)).is_err()).collect();
            let from_ranges: Vec<u64> = live.iter().flat_map(|r| r.clone()).collect();
            proptest::prop_assert_eq!(&from_ranges, &expected);
            for (i, &row) in expected.iter().enumerate() {
                proptest::prop_assert_eq!(live_to_physical(&live, i as u64), row);
            }
        }
    }

    #[test]
    fn data_paths_cannot_escape() {
        for bad in ["", "../x.lance", "/etc/passwd", "a/../../b", "./x"] {
            assert!(safe_relative(bad).is_err(), "{bad}");
        }
        assert!(safe_relative("abc.lance").is_ok());
    }
}
