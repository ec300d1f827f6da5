//! `validate`: checks a dataset the way fsck checks a file system, and never writes.
//!
//! For every version (or one): the manifest parses; every data file it names exists, opens
//! (footer, offset tables and column metadata agree, checksums of the metadata match),
//! holds the fragment's rows and has the columns the manifest maps fields to; deletion
//! files exist and delete rows inside their fragment; stable row ids cover every row; every
//! index it lists has its files, and they open. Tags and branches must point at versions
//! that exist. `deep` also reads every byte of every data and index file: checked against
//! the checksums where the file has them (lancelet's), decoded in full otherwise.
//!
//! With `deep` every index segment must also cover what its `fragment_bitmap` claims (see
//! `Run::check_coverage`): the rows its files hold, counted by fragment, are checked
//! against the fragments of the version.
//!
//! Files under `data/`, `_deletions/`, `_transactions/` and `_indices/` that no version
//! names are listed as orphans with their sizes (what cleanup would eventually remove);
//! they are not problems.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::UInt64Type;
use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_schema::DataType;
use lancelet_file::FileReader;
use lancelet_index::rowaddr::{decode_treemap, row_addr, FragmentRows, RowAddrSet};
use lancelet_index::scalar::ScalarIndexType;
use lancelet_io::Storage;
use lancelet_table::branches::list_branches;
use lancelet_table::commit::TRANSACTIONS_DIR;
use lancelet_table::deletion::DELETIONS_DIR;
use lancelet_table::indices::{decode_index_section, fragment_bitmap, index_dir, keyed_by_row_id, INDICES_DIR};
use lancelet_table::naming::{ManifestNaming, VERSIONS_DIR};
use lancelet_table::pb;
use lancelet_table::rowids::RowIdIndex;
use lancelet_table::tags::list_tags;
use lancelet_table::versions::list_versions;
use prost::Message;
use roaring::RoaringTreemap;

use crate::scan::{Columns, Scan, ScanOptions};
use crate::{Dataset, Error, Result, VersionRef, DATA_DIR};

/// What [`Dataset::validate`] checks.
#[derive(Debug, Clone, Default)]
pub struct ValidateOptions {
    /// Only this version (all versions when `None`; orphans are listed only then).
    pub version: Option<u64>,
    /// Also read every byte of every data and index file.
    pub deep: bool,
}

/// One thing wrong: the file it concerns and why.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Problem {
    /// The file (or reference) concerned, as a path under the dataset root or a full URI.
    pub path: String,
    /// What is wrong with it.
    pub reason: String,
}

/// What [`Dataset::validate`] found.
#[derive(Debug, Clone, Default)]
pub struct ValidationReport {
    /// Versions checked.
    pub versions: u64,
    /// Distinct data files checked.
    pub data_files: u64,
    /// Distinct deletion files checked.
    pub deletion_files: u64,
    /// Distinct index files checked.
    pub index_files: u64,
    /// Files that carry checksums (lancelet's), among those opened.
    pub checksummed_files: u64,
    /// Bytes read and checked against checksums (`deep`).
    pub bytes_verified: u64,
    /// Everything wrong, sorted by file.
    pub problems: Vec<Problem>,
    /// Files no checked version names, with their sizes (only when every version is checked).
    pub orphans: Vec<(String, u64)>,
}

impl ValidationReport {
    /// Whether nothing is wrong.
    pub fn is_ok(&self) -> bool {
        self.problems.is_empty()
    }
}

/// The checks in progress: files already checked (they are immutable, so once is enough).
struct Run<'a> {
    opts: &'a ValidateOptions,
    report: ValidationReport,
    seen: HashSet<String>,
    /// Paths (relative to the root) that a checked version names.
    named: HashSet<String>,
    /// The rows each index segment holds, by directory and (for indexes of stable row ids)
    /// the fingerprint of the fragments its ids were mapped through; `None`: not listed.
    coverage: HashMap<(String, u64), Option<Arc<Held>>>,
}

impl Run<'_> {
    fn problem(&mut self, path: impl Into<String>, reason: impl std::fmt::Display) {
        let path = path.into();
        let reason = reason.to_string();
        // Errors name their file; the report names it once.
        let reason = reason
            .strip_prefix(&format!("corrupt file {path}: "))
            .map_or_else(|| reason.clone(), str::to_string);
        self.report.problems.push(Problem { path, reason });
    }

    /// A problem, unless the same one was reported already (by an earlier version).
    fn problem_once(&mut self, path: &str, reason: String) {
        if self.seen.insert(format!("problem:{path}:{reason}")) {
            self.problem(path, reason);
        }
    }

    /// Opens (and with `deep` reads) a Lance file; `None` when it is a problem.
    async fn check_lance_file(&mut self, store: &Arc<dyn Storage>, path: &str) -> Option<Arc<FileReader>> {
        let shown = format!("{}/{path}", store.root_display());
        let io = match store.open_file(path).await {
            Ok(io) => io,
            Err(e) => {
                self.problem(shown, e);
                return None;
            }
        };
        let reader = match FileReader::open(io).await {
            Ok(r) => Arc::new(r),
            Err(e) => {
                self.problem(shown, e);
                return None;
            }
        };
        if reader.metadata().checksums.is_some() {
            self.report.checksummed_files += 1;
        }
        if self.opts.deep {
            match reader.verify_all().await {
                Ok(true) => {
                    self.report.bytes_verified += reader.metadata().checksums.as_ref().map_or(0, |c| c.covered());
                }
                // No checksums: decoding every row is the check there is.
                Ok(false) => {
                    if let Err(e) = decode_all(&reader).await {
                        self.problem(shown, e);
                        return None;
                    }
                }
                Err(e) => {
                    self.problem(shown, e);
                    return None;
                }
            }
        }
        Some(reader)
    }

    async fn check_fragment(&mut self, ds: &Dataset, frag: &pb::DataFragment) {
        for df in &frag.files {
            let (store, path) = match ds.file_in_base(df.base_id, DATA_DIR, &df.path) {
                Ok(x) => x,
                Err(e) => {
                    self.problem(format!("{DATA_DIR}/{}", df.path), e);
                    continue;
                }
            };
            if df.base_id.is_none() {
                self.named.insert(format!("{DATA_DIR}/{}", df.path));
            }
            let shown = format!("{}/{path}", store.root_display());
            if !self.seen.insert(shown.clone()) {
                continue;
            }
            self.report.data_files += 1;
            let Some(reader) = self.check_lance_file(&store, &path).await else {
                continue;
            };
            let size = reader.metadata().file_size;
            if df.file_size_bytes > 0 && size != df.file_size_bytes {
                self.problem(
                    &shown,
                    format!("is {size} bytes but the manifest records {}", df.file_size_bytes),
                );
            }
            if reader.num_rows() != frag.physical_rows {
                self.problem(
                    &shown,
                    format!(
                        "holds {} rows but fragment {} has {}",
                        reader.num_rows(),
                        frag.id,
                        frag.physical_rows
                    ),
                );
            }
            let columns = reader.metadata().columns.len();
            if let Some(c) = df
                .column_indices
                .iter()
                .find(|c| usize::try_from(**c).is_ok_and(|c| c >= columns))
            {
                self.problem(
                    &shown,
                    format!("the manifest maps a field to column {c} but the file has {columns} columns"),
                );
            }
            if !df.column_indices.is_empty() && df.column_indices.len() != df.fields.len() {
                self.problem(
                    &shown,
                    format!(
                        "the manifest lists {} fields but {} column indices",
                        df.fields.len(),
                        df.column_indices.len()
                    ),
                );
            }
        }
        if let Some(d) = &frag.deletion_file {
            let rel = lancelet_table::deletion::deletion_file_path(frag.id, d);
            if d.base_id.is_none() {
                self.named.insert(rel.clone());
            }
            if self.seen.insert(format!("deletion:{rel}:{:?}", d.base_id)) {
                self.report.deletion_files += 1;
                match ds.deleted_rows(frag).await {
                    Ok(rows) if d.num_deleted_rows > 0 && rows.len() as u64 != d.num_deleted_rows => self.problem(
                        &rel,
                        format!(
                            "deletes {} rows but the manifest records {}",
                            rows.len(),
                            d.num_deleted_rows
                        ),
                    ),
                    Ok(_) => {}
                    Err(e) => self.problem(&rel, e),
                }
            }
        }
        if ds.has_stable_row_ids() {
            if let Err(e) = ds.lineage(frag).await {
                self.problem(format!("fragment {} of version {}", frag.id, ds.version()), e);
            }
        }
    }

    async fn check_indices(&mut self, ds: &Dataset, indices: &[pb::IndexMetadata]) {
        for index in indices {
            let dir = match index_dir(index) {
                Ok(d) => d,
                Err(e) => {
                    self.problem(format!("index {:?}", index.name), e);
                    continue;
                }
            };
            self.named.insert(dir.clone());
            if !self.seen.insert(dir.clone()) {
                continue;
            }
            if is_fragment_reuse(index) && index.files.is_empty() {
                // pylance's fragment-reuse index lives in the manifest alone: no files.
                continue;
            }
            let store = ds.store().clone();
            let files = match store.list_meta(&dir).await {
                Ok(f) => f,
                Err(e) => {
                    self.problem(&dir, e);
                    continue;
                }
            };
            if files.is_empty() {
                self.problem(&dir, format!("index {:?} has no files", index.name));
                continue;
            }
            // The files the index records (pylance 14 and lancelet record them with sizes).
            for f in &index.files {
                match files.iter().find(|have| have.name == f.path) {
                    None => self.problem(
                        format!("{dir}/{}", f.path),
                        format!("a file of index {:?} is missing", index.name),
                    ),
                    Some(have) if f.size_bytes > 0 && have.size != f.size_bytes => self.problem(
                        format!("{dir}/{}", f.path),
                        format!(
                            "is {} bytes but index {:?} records {}",
                            have.size, index.name, f.size_bytes
                        ),
                    ),
                    Some(_) => {}
                }
            }
            for f in files {
                self.report.index_files += 1;
                let path = format!("{dir}/{}", f.name);
                if f.name.ends_with(".lance") {
                    self.check_lance_file(&store, &path).await;
                }
            }
        }
    }
}

/// Decodes every row of a file (in slices, so memory stays bounded).
async fn decode_all(reader: &FileReader) -> lancelet_file::Result<()> {
    let projection = reader.projection(None)?;
    let step = 64 * 1024;
    let mut at = 0;
    while at < reader.num_rows() {
        let end = (at + step).min(reader.num_rows());
        reader
            .read_ranges(&projection, std::slice::from_ref(&(at..end)), None)
            .await?;
        at = end;
    }
    Ok(())
}

/// The versions in `dir` (a `_versions` directory).
async fn versions_in(store: &dyn Storage, dir: &str) -> Result<HashSet<u64>> {
    Ok(store
        .list(dir)
        .await?
        .iter()
        .filter_map(|n| ManifestNaming::parse(n).map(|(v, _)| v))
        .collect())
}

impl Dataset {
    /// Checks this dataset (see the module docs); never writes. Problems are collected,
    /// not raised: an `Err` means the dataset could not be listed at all.
    pub async fn validate(&self, opts: &ValidateOptions) -> Result<ValidationReport> {
        let mut run = Run {
            opts,
            report: ValidationReport::default(),
            seen: HashSet::new(),
            named: HashSet::new(),
            coverage: HashMap::new(),
        };
        let store = self.store().clone();
        let entries = list_versions(store.as_ref()).await?;
        let mut versions: HashSet<u64> = entries.iter().map(|e| e.version).collect();
        if let Some(v) = opts.version {
            if !versions.contains(&v) {
                run.problem(format!("{VERSIONS_DIR}/"), format!("version {v} does not exist"));
            }
        }
        for entry in &entries {
            if opts.version.is_some_and(|v| v != entry.version) {
                continue;
            }
            run.report.versions += 1;
            let bytes = match store.read(&entry.path).await {
                Ok(b) => b,
                Err(e) => {
                    run.problem(&entry.path, e);
                    continue;
                }
            };
            let manifest = match lancelet_table::versions::decode_entry(&bytes, entry) {
                Ok(m) => m,
                Err(e) => {
                    run.problem(&entry.path, e);
                    versions.remove(&entry.version);
                    continue;
                }
            };
            if !manifest.transaction_file.is_empty() {
                run.named
                    .insert(format!("{TRANSACTIONS_DIR}/{}", manifest.transaction_file));
            }
            let indices = match decode_index_section(&bytes, &manifest, &entry.path) {
                Ok(i) => i,
                Err(e) => {
                    run.problem(&entry.path, e);
                    Vec::new()
                }
            };
            let ds = match self.checkout(Some(VersionRef::Number(entry.version))).await {
                Ok(ds) => ds,
                Err(e) => {
                    run.problem(&entry.path, e);
                    continue;
                }
            };
            for frag in &manifest.fragments {
                run.check_fragment(&ds, frag).await;
            }
            run.check_indices(&ds, &indices).await;
            if opts.deep {
                run.check_coverage(&ds, &manifest, &indices).await;
            }
        }
        // Tags and branches point at versions that exist.
        let (refs, _) = self.refs_root()?;
        let this_branch = self.branch().map(str::to_string);
        match list_tags(refs.as_ref()).await {
            Ok(tags) => {
                for t in tags {
                    let exists = if t.branch == this_branch {
                        versions.contains(&t.version)
                    } else {
                        let dir = match &t.branch {
                            Some(b) => format!("{}/{b}/{VERSIONS_DIR}", lancelet_table::branches::TREE_DIR),
                            None => VERSIONS_DIR.to_string(),
                        };
                        versions_in(refs.as_ref(), &dir).await?.contains(&t.version)
                    };
                    if !exists {
                        run.problem(
                            format!("_refs/tags/{}.json", t.name),
                            format!("tag {:?} points at version {}, which does not exist", t.name, t.version),
                        );
                    }
                }
            }
            Err(e) => run.problem("_refs/tags", e),
        }
        match list_branches(refs.as_ref()).await {
            Ok(branches) => {
                for b in branches {
                    let dir = match &b.parent_branch {
                        Some(p) => format!("{}/{p}/{VERSIONS_DIR}", lancelet_table::branches::TREE_DIR),
                        None => VERSIONS_DIR.to_string(),
                    };
                    if !versions_in(refs.as_ref(), &dir).await?.contains(&b.parent_version) {
                        run.problem(
                            format!("_refs/branches/{}.json", b.name),
                            format!(
                                "branch {:?} was created from version {}, which does not exist",
                                b.name, b.parent_version
                            ),
                        );
                    }
                }
            }
            Err(e) => run.problem("_refs/branches", e),
        }
        if opts.version.is_none() {
            run.report.orphans = orphans(store.as_ref(), &run.named).await?;
        }
        run.report.problems.sort();
        Ok(run.report)
    }
}

/// Files under the dataset's own directories that `named` does not hold, with sizes.
async fn orphans(store: &dyn Storage, named: &HashSet<String>) -> Result<Vec<(String, u64)>> {
    let mut out = BTreeMap::new();
    for dir in [DATA_DIR, DELETIONS_DIR, TRANSACTIONS_DIR] {
        for f in store.list_meta(dir).await? {
            let path = format!("{dir}/{}", f.name);
            if !named.contains(&path) {
                out.insert(path, f.size);
            }
        }
    }
    for dir in store.list(INDICES_DIR).await? {
        let dir = format!("{INDICES_DIR}/{dir}");
        if named.contains(&dir) {
            continue;
        }
        for f in store.list_meta(&dir).await? {
            out.insert(format!("{dir}/{}", f.name), f.size);
        }
    }
    Ok(out.into_iter().collect())
}

// ----------------------------------------------------------------------------------------
// Index coverage (`deep`)
// ----------------------------------------------------------------------------------------

/// Rows read from an index file at a time (one slice of one column in memory).
const SLICE_ROWS: u64 = 64 * 1024;
/// Rows of binary columns (bitmaps, posting lists) read at a time.
const SLICE_SETS: u64 = 256;

/// How the files of an index segment name the rows it holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Listing {
    /// BTREE: column `ids` of `page_data.lance`.
    BTree,
    /// BITMAP: the row-address tree maps of column `bitmaps` of `bitmap_page_lookup.lance`.
    Bitmap,
    /// LABEL_LIST: as BITMAP, plus the map of null lists in the global buffer that schema
    /// metadata `lance:label_list_nulls` names.
    LabelList,
    /// NGRAM: the RoaringTreemaps of column `posting_list` of `ngram_postings.lance`.
    NGram,
    /// ZONEMAP and BLOOMFILTER: columns `fragment_id`, `zone_start` and `zone_length` of
    /// this file: zones, not rows.
    Zones(&'static str),
    /// IVF_* (HNSW and RQ included): column `_rowid` of `auxiliary.idx`.
    Vector,
    /// INVERTED: column `_rowid` of each partition's `part_<p>_docs.lance`.
    FullText,
}

impl Listing {
    /// The listing of an index entry (`None`: a kind that is not listed).
    fn of(idx: &pb::IndexMetadata) -> Option<Self> {
        let url = idx.index_details.as_ref()?.type_url.as_str();
        let message = url.rsplit('/').next().unwrap_or(url);
        if message == crate::index::VECTOR_DETAILS_URL.trim_start_matches('/') {
            return Some(Self::Vector);
        }
        if message == lancelet_fts::DETAILS_TYPE_URL.trim_start_matches('/') {
            return Some(Self::FullText);
        }
        Some(match ScalarIndexType::from_type_url(url)? {
            ScalarIndexType::BTree => Self::BTree,
            ScalarIndexType::Bitmap => Self::Bitmap,
            ScalarIndexType::LabelList => Self::LabelList,
            ScalarIndexType::NGram => Self::NGram,
            ScalarIndexType::ZoneMap => Self::Zones("zonemap.lance"),
            ScalarIndexType::BloomFilter => Self::Zones("bloomfilter.lance"),
        })
    }
}

/// What an index segment's files hold, by fragment: bounded by the number of fragments,
/// however many rows the index has.
#[derive(Debug, Default)]
struct Held {
    /// Per fragment id: how many entries (rows, or zones) name it, and the largest offset
    /// they name (for a zone, its last row).
    fragments: BTreeMap<u32, (u64, u64)>,
    /// Stable row ids that no row was ever given (at or past the version's next row id):
    /// how many, and the smallest.
    unknown_ids: u64,
    first_unknown: Option<u64>,
}

impl Held {
    fn add(&mut self, fragment: u32, entries: u64, max_offset: u64) {
        let e = self.fragments.entry(fragment).or_insert((0, 0));
        e.0 += entries;
        e.1 = e.1.max(max_offset);
    }
}

/// Turns the keys an index holds into fragments: row addresses as they are, stable row
/// ids through the version's row id index (ids of deleted rows map to nothing).
struct Mapper {
    ids: Option<(Arc<RowIdIndex>, u64)>,
}

impl Mapper {
    fn key(&self, held: &mut Held, key: u64) {
        match &self.ids {
            None => held.add((key >> 32) as u32, 1, key & 0xFFFF_FFFF),
            Some((index, next_row_id)) => match index.get(key) {
                Some(addr) => held.add((addr >> 32) as u32, 1, addr & 0xFFFF_FFFF),
                None if key >= *next_row_id => {
                    held.unknown_ids += 1;
                    held.first_unknown = Some(held.first_unknown.map_or(key, |f| f.min(key)));
                }
                None => {}
            },
        }
    }

    fn set(&self, held: &mut Held, set: &RowAddrSet) {
        for (f, rows) in set.fragments() {
            match (rows, &self.ids) {
                // "The whole fragment" has no offsets to check, and no meaning for row ids.
                (FragmentRows::Full, None) => held.add(f, 1, 0),
                (FragmentRows::Full, Some(_)) => {}
                (FragmentRows::Offsets(bm), None) => held.add(f, bm.len(), bm.max().map_or(0, u64::from)),
                (FragmentRows::Offsets(bm), Some(_)) => bm.iter().for_each(|o| self.key(held, row_addr(f, o))),
            }
        }
    }

    fn treemap(&self, held: &mut Held, set: &RoaringTreemap) {
        match &self.ids {
            None => {
                for (f, bm) in set.bitmaps() {
                    if let Some(max) = bm.max() {
                        held.add(f, bm.len(), u64::from(max));
                    }
                }
            }
            Some(_) => set.iter().for_each(|k| self.key(held, k)),
        }
    }

    fn u64s(&self, held: &mut Held, col: &ArrayRef, what: &str) -> Result<()> {
        let a = col
            .as_primitive_opt::<UInt64Type>()
            .ok_or_else(|| Error::corrupt(what, "row ids are not uint64"))?;
        a.iter().flatten().for_each(|k| self.key(held, k));
        Ok(())
    }
}

/// A fingerprint of a version's fragments (ids, files, deletions, row ids): versions with
/// the same one map stable row ids to the same fragments.
fn fragments_fingerprint(m: &pb::Manifest) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    for f in &m.fragments {
        f.encode_to_vec().hash(&mut h);
    }
    h.finish().max(1)
}

/// Whether an entry is pylance's fragment-reuse index (`compact_files(defer_index_remap)`).
fn is_fragment_reuse(idx: &pb::IndexMetadata) -> bool {
    idx.index_details
        .as_ref()
        .is_some_and(|d| d.type_url.ends_with("FragmentReuseIndexDetails"))
}

/// Calls `each` with the columns `names` of `reader`, `step` rows at a time.
async fn each_slice(
    reader: &FileReader,
    names: &[&str],
    step: u64,
    mut each: impl FnMut(&RecordBatch) -> Result<()>,
) -> Result<()> {
    let names: Vec<String> = names.iter().map(|n| n.to_string()).collect();
    let projection = reader.projection(Some(&names))?;
    let mut at = 0;
    while at < reader.num_rows() {
        let end = (at + step).min(reader.num_rows());
        let batch = reader
            .read_ranges(&projection, std::slice::from_ref(&(at..end)), None)
            .await?;
        each(&batch)?;
        at = end;
    }
    Ok(())
}

/// The non-null values of a binary column.
fn binaries<'a>(col: &'a ArrayRef, what: &str) -> Result<Box<dyn Iterator<Item = &'a [u8]> + 'a>> {
    Ok(match col.data_type() {
        DataType::Binary => Box::new(col.as_binary::<i32>().iter().flatten()),
        DataType::LargeBinary => Box::new(col.as_binary::<i64>().iter().flatten()),
        other => return Err(Error::corrupt(what, format!("row sets are {other}, not binary"))),
    })
}

/// The partitions of a full-text index: `metadata.lance`'s `partitions`, or the docs files
/// present when it names none.
async fn fts_partitions(store: &Arc<dyn Storage>, dir: &str, files: &[String]) -> Result<Vec<u64>> {
    let meta = lancelet_fts::files::METADATA;
    if files.iter().any(|f| f == meta) {
        let reader = FileReader::open(store.open_file(&format!("{dir}/{meta}")).await?).await?;
        if let Some(p) = reader.metadata().schema.metadata().get("partitions") {
            return serde_json::from_str(p)
                .map_err(|e| Error::corrupt(&format!("{dir}/{meta}"), format!("partitions are not a list: {e}")));
        }
    }
    Ok(files
        .iter()
        .filter_map(|f| f.strip_prefix("part_")?.strip_suffix("_docs.lance")?.parse().ok())
        .collect())
}

/// Reads what an index segment holds (`None`: one of its files is absent, which the file
/// checks report, or its layout is not one lancelet lists).
async fn read_held(ds: &Dataset, idx: &pb::IndexMetadata, listing: Listing, mapper: &Mapper) -> Result<Option<Held>> {
    let (store, dir) = ds.index_files(idx)?;
    let files = store.list(&dir).await?;
    let open = |name: String| {
        let store = store.clone();
        let path = format!("{dir}/{name}");
        let present = files.contains(&name);
        async move {
            if !present {
                return Ok::<_, Error>(None);
            }
            Ok(Some((FileReader::open(store.open_file(&path).await?).await?, path)))
        }
    };
    let mut held = Held::default();
    match listing {
        Listing::BTree => {
            let Some((r, path)) = open("page_data.lance".into()).await? else {
                return Ok(None);
            };
            each_slice(&r, &["ids"], SLICE_ROWS, |b| mapper.u64s(&mut held, b.column(0), &path)).await?;
        }
        Listing::Bitmap | Listing::LabelList => {
            let Some((r, path)) = open("bitmap_page_lookup.lance".into()).await? else {
                return Ok(None);
            };
            each_slice(&r, &["bitmaps"], SLICE_SETS, |b| {
                for bytes in binaries(b.column(0), &path)? {
                    mapper.set(&mut held, &RowAddrSet::decode(bytes, &path)?);
                }
                Ok(())
            })
            .await?;
            let nulls = r.metadata().schema.metadata().get("lance:label_list_nulls");
            if let (Listing::LabelList, Some(at)) = (listing, nulls) {
                let at: usize = at
                    .parse()
                    .ok()
                    .filter(|i| *i > 0 && *i < r.metadata().global_buffers.len())
                    .ok_or_else(|| Error::corrupt(&path, format!("lance:label_list_nulls = {at:?} names no buffer")))?;
                let bytes = r.read_global_buffer(at).await?;
                mapper.set(&mut held, &RowAddrSet::decode(bytes.as_slice(), &path)?);
            }
        }
        Listing::NGram => {
            let Some((r, path)) = open("ngram_postings.lance".into()).await? else {
                return Ok(None);
            };
            each_slice(&r, &["posting_list"], SLICE_SETS, |b| {
                for bytes in binaries(b.column(0), &path)? {
                    mapper.treemap(&mut held, &decode_treemap(bytes)?);
                }
                Ok(())
            })
            .await?;
        }
        Listing::Zones(file) => {
            let Some((r, path)) = open(file.into()).await? else {
                return Ok(None);
            };
            each_slice(&r, &["fragment_id", "zone_start", "zone_length"], SLICE_ROWS, |b| {
                let col = |i: usize| {
                    b.column(i)
                        .as_primitive_opt::<UInt64Type>()
                        .ok_or_else(|| Error::corrupt(&path, "zone columns are not uint64"))
                };
                let (frag, start, len) = (col(0)?, col(1)?, col(2)?);
                for i in 0..b.num_rows() {
                    let (f, s, n) = (frag.value(i), start.value(i), len.value(i));
                    let f = u32::try_from(f)
                        .map_err(|_| Error::corrupt(&path, format!("a zone of fragment {f}, past any fragment id")))?;
                    held.add(f, 1, s.saturating_add(n.max(1) - 1));
                }
                Ok(())
            })
            .await?;
        }
        Listing::Vector => {
            let Some((r, path)) = open(lancelet_vector::ivf::AUX_FILE.into()).await? else {
                return Ok(None);
            };
            each_slice(&r, &["_rowid"], SLICE_ROWS, |b| {
                mapper.u64s(&mut held, b.column(0), &path)
            })
            .await?;
        }
        Listing::FullText => {
            let partitions = fts_partitions(&store, &dir, &files).await?;
            if partitions.is_empty() {
                return Ok(None);
            }
            for p in partitions {
                let Some((r, path)) = open(lancelet_fts::files::docs_file(p)).await? else {
                    return Ok(None);
                };
                each_slice(&r, &["_rowid"], SLICE_ROWS, |b| {
                    mapper.u64s(&mut held, b.column(0), &path)
                })
                .await?;
            }
        }
    }
    Ok(Some(held))
}

/// Whether the live rows of `frag` hold a value index `idx` has an entry for (`None`: it
/// cannot be told). BTREE, BITMAP and the zone indexes hold every row; the others skip
/// some: vector indexes null vectors, LABEL_LIST empty lists, NGRAM strings without a
/// trigram, full-text indexes documents without a token (null, empty, only stop words).
async fn holds_indexed_value(
    ds: &Dataset,
    idx: &pb::IndexMetadata,
    listing: Listing,
    frag: &pb::DataFragment,
) -> Result<Option<bool>> {
    if matches!(listing, Listing::BTree | Listing::Bitmap | Listing::Zones(_)) {
        return Ok(Some((ds.deleted_rows(frag).await?.len() as u64) < frag.physical_rows));
    }
    let Some(column) = idx.fields.first().and_then(|f| ds.field_path(*f)) else {
        return Ok(None);
    };
    let mut analyzer = None;
    if listing == Listing::FullText {
        let (store, dir) = ds.index_files(idx)?;
        let files = crate::index::DirStore { store, dir };
        // Settings lancelet cannot tokenize with: it cannot tell.
        match lancelet_fts::files::read_metadata(&files)
            .await
            .map(|m| m.params.build())
        {
            Ok(Ok(a)) => analyzer = Some(a),
            _ => return Ok(None),
        }
    }
    let scan = Scan::plan(
        ds,
        ScanOptions {
            columns: Columns::Names(vec![column]),
            fragments: Some(vec![frag.id]),
            max_task_rows: Some(SLICE_ROWS),
            use_scalar_index: false,
            ..ScanOptions::default()
        },
    )
    .await?;
    for i in 0..scan.num_tasks() {
        let b = scan.run_task(i).await?;
        let Some(col) = (b.num_columns() > 0).then(|| b.column(0)) else {
            return Ok(None);
        };
        let found = match listing {
            Listing::Vector => col.logical_null_count() < col.len(),
            Listing::LabelList => label_list_entry(col),
            Listing::NGram => ngram_entry(col),
            Listing::FullText => analyzer.as_mut().is_some_and(|a| fts_entry(col, a)),
            _ => true,
        };
        if found {
            return Ok(Some(true));
        }
    }
    Ok(Some(false))
}

/// Whether a list column has a null list (indexed as such) or a non-null element.
fn label_list_entry(col: &ArrayRef) -> bool {
    let has = |v: Option<ArrayRef>| v.is_none_or(|v| v.logical_null_count() < v.len());
    match col.data_type() {
        DataType::List(_) => col.as_list::<i32>().iter().any(has),
        DataType::LargeList(_) => col.as_list::<i64>().iter().any(has),
        _ => true,
    }
}

/// Whether a string column has a null (token 0) or a string with a trigram.
fn ngram_entry(col: &ArrayRef) -> bool {
    let has = |s: Option<&str>| s.is_none_or(|s| !lancelet_index::scalar::ngram::trigrams(s).is_empty());
    match col.data_type() {
        DataType::Utf8 => col.as_string::<i32>().iter().any(has),
        DataType::LargeUtf8 => col.as_string::<i64>().iter().any(has),
        _ => true,
    }
}

/// Whether a string (or list of strings) column has a document with a token.
fn fts_entry(col: &ArrayRef, analyzer: &mut lancelet_fts::Analyzer) -> bool {
    let mut found = false;
    let mut text = |s: &str| {
        if !found {
            analyzer.for_each(s, |_, _| found = true);
        }
    };
    let strings = |a: &ArrayRef, text: &mut dyn FnMut(&str)| match a.data_type() {
        DataType::Utf8 => a.as_string::<i32>().iter().flatten().for_each(text),
        DataType::LargeUtf8 => a.as_string::<i64>().iter().flatten().for_each(text),
        _ => {}
    };
    match col.data_type() {
        DataType::List(_) => col
            .as_list::<i32>()
            .iter()
            .flatten()
            .for_each(|v| strings(&v, &mut text)),
        DataType::LargeList(_) => col
            .as_list::<i64>()
            .iter()
            .flatten()
            .for_each(|v| strings(&v, &mut text)),
        _ => strings(col, &mut text),
    }
    found
}

impl Run<'_> {
    /// `deep`: whether each index segment of a version covers what its fragment bitmap
    /// claims. The rows the segment's files hold are counted per fragment (see [`Listing`]
    /// for what is read per kind, a slice at a time), row addresses taken as
    /// `fragment << 32 | offset` and, on a dataset with stable row ids, the ids of indexes
    /// that hold them ([`keyed_by_row_id`]) mapped through the version's row id sequences.
    /// A problem, on the index directory, when:
    ///
    /// - (a) the bitmap claims a fragment of the version that has live rows the index would
    ///   hold (see [`holds_indexed_value`]: vector, LABEL_LIST, NGRAM and full-text indexes
    ///   legitimately skip some rows), but the index holds none of its rows;
    /// - (b) the index holds an offset at or past the physical rows of a fragment of the
    ///   version, or a stable row id no row was ever given (garbage);
    /// - (c) the index holds rows of a fragment of the version that its bitmap does not
    ///   claim (stale entries a reader that trusts the bitmap would mis-filter). Not for
    ///   indexes keyed by stable row id: an update moves rows with their ids into a new
    ///   fragment outside the bitmap, legitimately (readers check where each id lives now).
    ///
    /// Rows of fragments the version no longer has are not problems (deletes and
    /// compaction leave them; readers mask them). Skipped: versions with pylance's
    /// fragment-reuse index (`compact_files(defer_index_remap=True)`: the bitmaps already
    /// name the new fragments while the files hold the old addresses, remapped at query
    /// time); index kinds lancelet does not read (RTREE, JSON, ...) and full-text layouts older than pylance 14
    /// (no `part_<p>_docs.lance`).
    async fn check_coverage(&mut self, ds: &Dataset, manifest: &pb::Manifest, indices: &[pb::IndexMetadata]) {
        if indices.iter().any(is_fragment_reuse) {
            return;
        }
        let frags: HashMap<u64, &pb::DataFragment> = manifest.fragments.iter().map(|f| (f.id, f)).collect();
        let stable = ds.has_stable_row_ids();
        let fingerprint = if stable { fragments_fingerprint(manifest) } else { 0 };
        let mut row_ids: Option<Option<Arc<RowIdIndex>>> = None;
        for idx in indices {
            let Some(listing) = Listing::of(idx) else { continue };
            let (Ok(dir), Ok(bitmap)) = (index_dir(idx), fragment_bitmap(idx)) else {
                continue;
            };
            let keyed = stable && keyed_by_row_id(idx);
            let key = (dir.clone(), if keyed { fingerprint } else { 0 });
            let held = match self.coverage.get(&key) {
                Some(h) => h.clone(),
                None => {
                    let mapper = if keyed {
                        if row_ids.is_none() {
                            // A failure is the fragments' problem, reported with them.
                            row_ids = Some(ds.row_id_index().await.ok());
                        }
                        let Some(Some(index)) = &row_ids else { continue };
                        Mapper {
                            ids: Some((index.clone(), manifest.next_row_id)),
                        }
                    } else {
                        Mapper { ids: None }
                    };
                    let held = match read_held(ds, idx, listing, &mapper).await {
                        Ok(h) => h.map(Arc::new),
                        Err(e) => {
                            self.problem_once(&dir, format!("the rows of index {:?} cannot be listed: {e}", idx.name));
                            None
                        }
                    };
                    self.coverage.insert(key, held.clone());
                    held
                }
            };
            let Some(held) = held else { continue };
            let name = &idx.name;
            for (&f, &(_, max)) in &held.fragments {
                let Some(frag) = frags.get(&u64::from(f)) else { continue };
                if max >= frag.physical_rows {
                    let what = match listing {
                        Listing::Zones(_) => "a zone ending at",
                        _ => "",
                    };
                    self.problem_once(
                        &dir,
                        format!(
                            "index {name:?} holds {what}{}row {max} of fragment {f}, which has only {} rows",
                            if what.is_empty() { "" } else { " " },
                            frag.physical_rows
                        ),
                    );
                }
                if !keyed && !bitmap.contains(f) {
                    self.problem_once(
                        &dir,
                        format!("index {name:?} holds rows of fragment {f}, which its fragment bitmap does not claim"),
                    );
                }
            }
            if let Some(first) = held.first_unknown {
                self.problem_once(
                    &dir,
                    format!(
                        "index {name:?} holds {} row id(s) no row was ever given (the first {first}; the next row id is {})",
                        held.unknown_ids, manifest.next_row_id
                    ),
                );
            }
            for f in bitmap.iter() {
                if held.fragments.contains_key(&f) {
                    continue;
                }
                let Some(frag) = frags.get(&u64::from(f)) else { continue };
                match holds_indexed_value(ds, idx, listing, frag).await {
                    Ok(Some(true)) => self.problem_once(
                        &dir,
                        format!("index {name:?} claims fragment {f} in its fragment bitmap but holds none of its rows"),
                    ),
                    Ok(_) => {}
                    Err(e) => self.problem_once(
                        &dir,
                        format!("fragment {f}, which index {name:?} claims, cannot be read: {e}"),
                    ),
                }
            }
        }
    }
}
