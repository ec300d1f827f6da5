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
//! Files under `data/`, `_deletions/`, `_transactions/` and `_indices/` that no version
//! names are listed as orphans with their sizes (what cleanup would eventually remove);
//! they are not problems.

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;

use lancelet_file::FileReader;
use lancelet_table::branches::list_branches;
use lancelet_table::commit::TRANSACTIONS_DIR;
use lancelet_table::deletion::DELETIONS_DIR;
use lancelet_table::indices::{decode_index_section, index_dir, INDICES_DIR};
use lancelet_table::naming::{ManifestNaming, VERSIONS_DIR};
use lancelet_table::pb;
use lancelet_table::store::Store;
use lancelet_table::tags::list_tags;
use lancelet_table::versions::list_versions;

use crate::{Dataset, Result, VersionRef, DATA_DIR};

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

    /// Opens (and with `deep` reads) a Lance file; `None` when it is a problem.
    async fn check_lance_file(&mut self, store: &Arc<dyn Store>, path: &str) -> Option<Arc<FileReader>> {
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
async fn versions_in(store: &dyn Store, dir: &str) -> Result<HashSet<u64>> {
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
async fn orphans(store: &dyn Store, named: &HashSet<String>) -> Result<Vec<(String, u64)>> {
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
