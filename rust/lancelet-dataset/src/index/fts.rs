//! Full-text indexes on a dataset: building them (`create_scalar_index(col, "INVERTED")`)
//! and searching them (`full_text_query=`).
//!
//! **Build.** The column is scanned with row ids and tokenized by two workers (one per
//! core), each filling a partition until its share of `memory_limit` is used, then sealing
//! it into files and starting the next: memory stays flat whatever the corpus size.
//!
//! **Search.** A query names columns (or means every FTS-indexed one). Each column's
//! segments are searched together, scored against the statistics of all of them; rows of
//! fragments no segment covers are tokenized at query time into an in-memory partition and
//! searched the same way (unless `fast_search`). Deleted rows are never returned; with
//! `prefilter` the filter restricts the candidates before the top `k` are taken, otherwise
//! it applies to the top `k`. Scoring is exhaustive, so the top `k` are exact either way.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use arrow_array::cast::AsArray;
use arrow_array::types::UInt64Type;
use arrow_array::{Array, ArrayRef, Float32Array, RecordBatch};
use arrow_schema::{DataType, Field, Schema};
use lancelet_fts::files::{metadata_file, partition_files, IndexFormat};
use lancelet_fts::search::{search_top, ColumnSearch};
use lancelet_fts::{FtsIndex, FtsQuery, Partition, PartitionBuilder, Stats, TokenizerConfig};
use lancelet_index::scalar::{IndexFile, IndexStore};
use lancelet_table::indices::{encode_fragment_bitmap, fragment_bitmap, index_dir};
use lancelet_table::pb;
use roaring::RoaringBitmap;

use crate::index::DirStore;
use crate::scan::{Columns, Scan, ScanOptions, ROW_ID};
use crate::{Dataset, Error, Result};

/// The name of the score column.
pub(crate) const SCORE: &str = "_score";

/// Rows per scan task of an index build (about 2.5 MB of 40-word documents).
const BUILD_TASK_ROWS: u64 = 16 * 1024;

/// How to build a full-text index (pylance's parameters).
#[derive(Debug, Clone)]
pub struct FtsIndexParams {
    /// Tokenizer parameters.
    pub tokenizer: TokenizerConfig,
    /// Format version (1, 2 or 3; pylance 14 writes 2 by default).
    pub format_version: u32,
    /// The memory the build may hold, in MiB, over all workers.
    pub memory_limit_mb: u64,
    /// Tokenizing workers (the cores by default).
    pub num_workers: Option<usize>,
    /// Where the build reports its progress (stages `tokenize_docs` in rows, then
    /// `write_metadata`).
    pub progress: Option<super::progress::ProgressSink>,
}

impl Default for FtsIndexParams {
    fn default() -> Self {
        Self {
            tokenizer: TokenizerConfig::default(),
            format_version: 2,
            // Postings held before a partition is sealed, over all workers: on 1M documents
            // with positions, peak RSS 429 MB and 12 partitions at 128; 240 MB and 66
            // partitions at 32 (partitions are not merged yet, so fewer is better).
            memory_limit_mb: 128,
            num_workers: None,
            progress: None,
        }
    }
}

/// The keyword arguments `create_scalar_index(..., "INVERTED")` takes (pylance's names):
/// the one list, which the Python layer asks for too.
pub const PARAM_NAMES: [&str; 19] = [
    "base_tokenizer",
    "language",
    "with_position",
    "max_token_length",
    "lower_case",
    "stem",
    "remove_stop_words",
    "custom_stop_words",
    "ascii_folding",
    "min_ngram_length",
    "max_ngram_length",
    "prefix_only",
    "lance_tokenizer",
    "format_version",
    "memory_limit",
    "num_workers",
    "block_size",
    "document_granularity",
    "skip_merge",
];

impl FtsIndexParams {
    /// The parameters from the keyword arguments of `create_scalar_index` (a JSON object
    /// of pylance's names; unknown names, wrong types and bad values are errors).
    pub fn from_user_json(v: &serde_json::Value) -> Result<Self> {
        let obj = v
            .as_object()
            .ok_or_else(|| Error::InvalidArgument("INVERTED index parameters must be a mapping".into()))?;
        if let Some(k) = obj.keys().find(|k| !PARAM_NAMES.contains(&k.as_str())) {
            return Err(Error::InvalidArgument(format!(
                "unknown INVERTED index parameter {k:?}; expected one of {}",
                PARAM_NAMES.join(", ")
            )));
        }
        let bad = |k: &str, want: &str| {
            Error::InvalidArgument(format!("INVERTED parameter {k} must be {want}, got {}", obj[k]))
        };
        for k in [
            "with_position",
            "lower_case",
            "stem",
            "remove_stop_words",
            "ascii_folding",
            "prefix_only",
            "skip_merge",
        ] {
            if obj.get(k).is_some_and(|v| !v.is_boolean()) {
                return Err(bad(k, "a boolean"));
            }
        }
        for k in ["base_tokenizer", "language", "lance_tokenizer"] {
            if obj.get(k).is_some_and(|v| !v.is_string() && !v.is_null()) {
                return Err(bad(k, "a string"));
            }
        }
        for k in [
            "min_ngram_length",
            "max_ngram_length",
            "format_version",
            "memory_limit",
            "num_workers",
            "block_size",
        ] {
            if obj.get(k).is_some_and(|v| !v.is_u64() && !v.is_null()) {
                return Err(bad(k, "a non-negative integer"));
            }
        }
        if obj.get("max_token_length").is_some_and(|v| !v.is_u64() && !v.is_null()) {
            return Err(bad("max_token_length", "a positive integer or None"));
        }
        if let Some(w) = obj.get("custom_stop_words").filter(|w| !w.is_null()) {
            if !w.as_array().is_some_and(|a| a.iter().all(serde_json::Value::is_string)) {
                return Err(bad("custom_stop_words", "a list of strings"));
            }
        }
        let tokenizer = TokenizerConfig::from_json(v)?;
        if obj.get("max_token_length") == Some(&serde_json::Value::from(0)) {
            return Err(bad("max_token_length", "a positive integer or None"));
        }
        let mut p = FtsIndexParams {
            tokenizer,
            ..FtsIndexParams::default()
        };
        if let Some(f) = obj.get("format_version").and_then(serde_json::Value::as_u64) {
            p.format_version = u32::try_from(f).unwrap_or(0);
        }
        if let Some(m) = obj.get("memory_limit").and_then(serde_json::Value::as_u64) {
            if m == 0 {
                return Err(bad("memory_limit", "a positive number of MiB"));
            }
            p.memory_limit_mb = m;
        }
        if let Some(n) = obj.get("num_workers").and_then(serde_json::Value::as_u64) {
            if n == 0 {
                return Err(bad("num_workers", "positive"));
            }
            p.num_workers = Some(n as usize);
        }
        if let Some(b) = obj.get("block_size").and_then(serde_json::Value::as_u64) {
            if b as usize != lancelet_fts::codec::BLOCK {
                return Err(Error::Unsupported(format!(
                    "block_size {b} (lancelet writes {}-posting blocks)",
                    lancelet_fts::codec::BLOCK
                )));
            }
        }
        if let Some(g) = obj.get("document_granularity").and_then(serde_json::Value::as_str) {
            if !g.eq_ignore_ascii_case("row") {
                return Err(Error::Unsupported(format!("document_granularity {g:?} (only \"row\")")));
            }
        }
        p.tokenizer.build()?;
        if !(1..=3).contains(&p.format_version) {
            return Err(Error::InvalidArgument(format!(
                "format_version must be 1, 2 or 3, got {}",
                p.format_version
            )));
        }
        Ok(p)
    }
}

/// A full-text search.
#[derive(Debug, Clone)]
pub struct FullTextRequest {
    /// The query.
    pub query: FtsQuery,
    /// Output columns (all when `None`).
    pub columns: Option<Vec<String>>,
    /// A SQL filter.
    pub filter: Option<String>,
    /// Filter before taking the top rows (otherwise after).
    pub prefilter: bool,
    /// Rows to return (all matches when `None`).
    pub limit: Option<u64>,
    /// Rows to skip first.
    pub offset: u64,
    /// Search only what indexes cover.
    pub fast_search: bool,
    /// Add `_rowid`.
    pub with_row_id: bool,
}

/// `InvertedIndexDetails` as pylance 14 writes it (index-facts §4.2): the tokenizer
/// settings, the language JSON-quoted, the block size and the format version.
fn details(p: &FtsIndexParams) -> Vec<u8> {
    let t = &p.tokenizer;
    let mut out = Vec::new();
    let string = |out: &mut Vec<u8>, field: u8, s: &str| {
        out.push(field << 3 | 2);
        put_varint(out, s.len() as u64);
        out.extend_from_slice(s.as_bytes());
    };
    let varint = |out: &mut Vec<u8>, field: u8, v: u64| {
        if v != 0 {
            out.push(field << 3);
            put_varint(out, v);
        }
    };
    string(&mut out, 1, &t.base_tokenizer);
    string(&mut out, 2, &format!("\"{}\"", t.language));
    varint(&mut out, 3, u64::from(t.with_position));
    if let Some(n) = t.max_token_length {
        out.push(4 << 3);
        put_varint(&mut out, n as u64);
    }
    varint(&mut out, 5, u64::from(t.lower_case));
    varint(&mut out, 6, u64::from(t.stem));
    varint(&mut out, 7, u64::from(t.remove_stop_words));
    varint(&mut out, 8, u64::from(t.ascii_folding));
    varint(&mut out, 9, u64::from(t.min_ngram_length));
    varint(&mut out, 10, u64::from(t.max_ngram_length));
    varint(&mut out, 11, u64::from(t.prefix_only));
    varint(&mut out, 12, lancelet_fts::codec::BLOCK as u64);
    varint(&mut out, 15, u64::from(p.format_version));
    out
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Where the parts of a distributed full-text build wait for their merge.
fn staging_dir(index_uuid: &str) -> Result<String> {
    let uuid = uuid::Uuid::parse_str(index_uuid)
        .map_err(|_| Error::InvalidArgument(format!("index_uuid {index_uuid:?} is not a UUID")))?;
    Ok(format!(
        "{}/{}/staging",
        lancelet_table::indices::INDICES_DIR,
        uuid.hyphenated()
    ))
}

/// Whether an index entry is a full-text index.
pub(crate) fn is_fts(idx: &pb::IndexMetadata) -> bool {
    idx.index_details
        .as_ref()
        .is_some_and(|d| d.type_url == lancelet_fts::DETAILS_TYPE_URL)
}

/// The documents of one scanned batch: `(row id, texts)` pairs (a list column's elements
/// are one document; nulls are skipped).
fn for_each_doc<'a>(
    values: &'a ArrayRef,
    row_ids: &[u64],
    mut each: impl FnMut(u64, Vec<&'a str>) -> Result<()>,
) -> Result<()> {
    match values.data_type() {
        DataType::Utf8 => {
            for (i, v) in values.as_string::<i32>().iter().enumerate() {
                if let Some(v) = v {
                    each(row_ids[i], vec![v])?;
                }
            }
        }
        DataType::LargeUtf8 => {
            for (i, v) in values.as_string::<i64>().iter().enumerate() {
                if let Some(v) = v {
                    each(row_ids[i], vec![v])?;
                }
            }
        }
        DataType::List(_) | DataType::LargeList(_) => {
            let (offsets, items): (Vec<usize>, &ArrayRef) = match values.data_type() {
                DataType::List(_) => {
                    let l = values.as_list::<i32>();
                    (l.value_offsets().iter().map(|o| *o as usize).collect(), l.values())
                }
                _ => {
                    let l = values.as_list::<i64>();
                    (l.value_offsets().iter().map(|o| *o as usize).collect(), l.values())
                }
            };
            let get: Box<dyn Fn(usize) -> Option<&'a str> + 'a> = match items.data_type() {
                DataType::Utf8 => {
                    let s = items.as_string::<i32>();
                    Box::new(move |i| s.is_valid(i).then(|| s.value(i)))
                }
                DataType::LargeUtf8 => {
                    let s = items.as_string::<i64>();
                    Box::new(move |i| s.is_valid(i).then(|| s.value(i)))
                }
                other => {
                    return Err(Error::InvalidArgument(format!(
                        "a full-text index needs strings or lists of strings, not lists of {other}"
                    )))
                }
            };
            for i in 0..values.len() {
                if values.is_null(i) {
                    continue;
                }
                let texts: Vec<&str> = (offsets[i]..offsets[i + 1]).filter_map(&get).collect();
                each(row_ids[i], texts)?;
            }
        }
        other => {
            return Err(Error::InvalidArgument(format!(
                "a full-text index needs a string, large_string or list of strings column, not {other}"
            )))
        }
    }
    Ok(())
}

/// Whether a full-text index can be built on a column of type `t`.
pub(crate) fn fts_supports(t: &DataType) -> bool {
    match t {
        DataType::Utf8 | DataType::LargeUtf8 => true,
        DataType::List(f) | DataType::LargeList(f) => matches!(f.data_type(), DataType::Utf8 | DataType::LargeUtf8),
        _ => false,
    }
}

type WorkQueue = Arc<Mutex<tokio::sync::mpsc::Receiver<(ArrayRef, Vec<u64>)>>>;

impl Dataset {
    /// Builds a full-text index on `column` and commits it; returns the new version.
    pub async fn create_fts_index(
        &self,
        column: &str,
        name: Option<String>,
        replace: bool,
        params: &FtsIndexParams,
    ) -> Result<Self> {
        let field = self
            .field_by_path(column)
            .ok_or_else(|| Error::InvalidArgument(format!("column {column:?} does not exist")))?
            .clone();
        let name = match name {
            Some(n) if n.is_empty() => return Err(Error::InvalidArgument("an index name cannot be empty".into())),
            Some(n) => n,
            None => format!("{column}_idx"),
        };
        let removed = self.replaced(&name, replace).await?;
        let (mut meta, _) = self.train_fts_segment(column, field.id, params, None).await?;
        meta.name = name;
        self.commit_index_change(vec![meta], removed).await
    }

    /// The column can hold a full-text index and the parameters are valid (checked before
    /// anything is scanned).
    fn check_fts_build(&self, column: &str, params: &FtsIndexParams) -> Result<()> {
        let column_type = crate::fields::arrow_schema_field(self.schema(), column)
            .ok_or_else(|| Error::InvalidArgument(format!("column {column:?} does not exist")))?;
        if !fts_supports(&column_type) {
            return Err(Error::InvalidArgument(format!(
                "an INVERTED index cannot be built on column {column:?} of type {column_type}; it needs \
                 string, large_string or a list of strings"
            )));
        }
        if !(1..=3).contains(&params.format_version) {
            return Err(Error::InvalidArgument(format!(
                "format_version must be 1, 2 or 3, got {}",
                params.format_version
            )));
        }
        // Checks the tokenizer parameters before anything is scanned.
        params.tokenizer.build()?;
        Ok(())
    }

    /// Builds one full-text segment over `fragments` (all when `None`) and writes its files;
    /// returns its entry (unnamed) and directory.
    pub(crate) async fn train_fts_segment(
        &self,
        column: &str,
        field_id: i32,
        params: &FtsIndexParams,
        fragments: Option<Vec<u64>>,
    ) -> Result<(pb::IndexMetadata, String)> {
        self.check_fts_build(column, params)?;
        let covered: RoaringBitmap = match &fragments {
            Some(ids) => ids.iter().filter_map(|f| u32::try_from(*f).ok()).collect(),
            None => self
                .fragments()
                .iter()
                .filter_map(|f| u32::try_from(f.id).ok())
                .collect(),
        };
        let uuid = uuid::Uuid::new_v4();
        let mut meta = pb::IndexMetadata {
            uuid: Some(pb::Uuid {
                uuid: uuid.as_bytes().to_vec().into(),
            }),
            fields: vec![field_id],
            name: String::new(),
            dataset_version: self.version(),
            fragment_bitmap: encode_fragment_bitmap(&covered).into(),
            index_details: Some(prost_types::Any {
                type_url: lancelet_fts::DETAILS_TYPE_URL.to_string(),
                value: details(params),
            }),
            index_version: Some(params.format_version as i32),
            created_at: Some(super::build::now_ms()),
            base_id: None,
            files: Vec::new(),
            covering_fields: Vec::new(),
        };
        let dir = index_dir(&meta).map_err(Error::InvalidArgument)?;
        let store = DirStore {
            store: self.store.clone(),
            dir: dir.clone(),
        };
        match self.build_fts_files(column, params, fragments, &store, 0, None).await {
            Ok(files) => {
                meta.files = files
                    .into_iter()
                    .map(|(path, size_bytes)| pb::IndexFile { path, size_bytes })
                    .collect();
                Ok((meta, dir))
            }
            Err(e) => {
                self.remove_index_dir(&dir).await;
                Err(e)
            }
        }
    }

    /// Builds the files of an index over `fragments` into `store`, numbering partitions
    /// from `base`; the metadata file is `metadata.lance`, or `metadata_name` (a staged
    /// part's).
    async fn build_fts_files(
        &self,
        column: &str,
        params: &FtsIndexParams,
        fragments: Option<Vec<u64>>,
        store: &DirStore,
        base: u64,
        metadata_name: Option<String>,
    ) -> Result<Vec<(String, u64)>> {
        let workers = params.num_workers.unwrap_or_else(crate::scan::tasks_at_once).max(1);
        let budget = (params.memory_limit_mb.max(1) as usize) << 20;
        let per_worker = budget / workers;
        let format = IndexFormat {
            version: params.format_version,
            ..IndexFormat::default()
        };
        let version = self.index_file_version();
        let scan = Scan::plan(
            self,
            ScanOptions {
                columns: Columns::Names(vec![column.to_string()]),
                with_row_id: true,
                fragments: fragments.clone(),
                // Each task is one batch in memory, and up to five are alive at once (two
                // queued, one per worker, one being read): keep them small.
                max_task_rows: Some(BUILD_TASK_ROWS),
                ..ScanOptions::default()
            },
        )
        .await?;
        let scan_fragments = fragments;
        let (work_tx, work_rx) = tokio::sync::mpsc::channel::<(ArrayRef, Vec<u64>)>(workers);
        let work_rx: WorkQueue = Arc::new(Mutex::new(work_rx));
        let (file_tx, mut file_rx) = tokio::sync::mpsc::channel::<IndexFile>(3);
        let next_partition = Arc::new(std::sync::atomic::AtomicU64::new(base));
        // One worker seals at a time: sealing holds a partition twice over (postings, then
        // coded files), and workers fed alternate equal batches would otherwise seal together.
        let sealing = Arc::new(Mutex::new(()));
        let mut handles = Vec::new();
        for _ in 0..workers {
            let (rx, tx, next) = (work_rx.clone(), file_tx.clone(), next_partition.clone());
            let (tok, format, sealing) = (params.tokenizer.clone(), format.clone(), sealing.clone());
            handles.push(tokio::task::spawn_blocking(move || -> Result<Vec<u64>> {
                let mut b = PartitionBuilder::new(tok.build()?, tok.with_position);
                let mut mine = Vec::new();
                let mut seal = |b: &mut PartitionBuilder| -> Result<()> {
                    let files = {
                        let _one_at_a_time = sealing.lock();
                        let p = next.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                        let sealed = b.seal(format.tail())?;
                        let files = partition_files(p, &sealed, tok.with_position, &format, version)?;
                        mine.push(p);
                        files
                    };
                    for f in files {
                        tx.blocking_send(f)
                            .map_err(|_| Error::InvalidArgument("the index writer stopped".into()))?;
                    }
                    lancelet_io::release_free_memory();
                    Ok(())
                };
                loop {
                    let next_batch = match rx.lock() {
                        Ok(mut r) => r.blocking_recv(),
                        Err(_) => None,
                    };
                    let Some((values, row_ids)) = next_batch else { break };
                    // The budget is checked document by document: one batch may hold more
                    // postings than a worker's share.
                    for_each_doc(&values, &row_ids, |row, texts| {
                        b.add(row, texts)?;
                        if b.memory_bytes() >= per_worker {
                            seal(&mut b)?;
                        }
                        Ok(())
                    })?;
                }
                if !b.is_empty() {
                    seal(&mut b)?;
                }
                Ok(mine)
            }));
        }
        drop(file_tx);
        let writer = {
            let store = store.clone();
            tokio::spawn(async move {
                let mut written = Vec::new();
                while let Some(f) = file_rx.recv().await {
                    let size = store.write(&f.name, f.bytes).await?;
                    written.push((f.name, size));
                }
                Ok::<_, lancelet_index::Error>(written)
            })
        };
        let mut tokenized = params.progress.as_ref().map(|p| {
            let rows: u64 = self
                .fragments()
                .iter()
                .filter(|f| scan_fragments.as_ref().is_none_or(|ids| ids.contains(&f.id)))
                .map(lancelet_table::manifest::live_rows)
                .sum();
            p.stage("tokenize_docs", Some(rows), "rows")
        });
        let mut feed_result = Ok(());
        for i in 0..scan.num_tasks() {
            let b = match scan.run_task(i).await {
                Ok(b) => b,
                Err(e) => {
                    feed_result = Err(e);
                    break;
                }
            };
            let row_ids = b
                .column_by_name(ROW_ID)
                .ok_or_else(|| Error::InvalidArgument("the scan returned no row ids".into()))?
                .as_primitive::<UInt64Type>()
                .values()
                .to_vec();
            let rows = row_ids.len() as u64;
            if work_tx.send((b.column(0).clone(), row_ids)).await.is_err() {
                break;
            }
            if let Some(s) = &mut tokenized {
                s.advance(rows);
            }
        }
        drop(work_tx);
        let mut partitions = Vec::new();
        let mut worker_error = None;
        for h in handles {
            match h.await.map_err(Error::from)? {
                Ok(p) => partitions.extend(p),
                Err(e) => worker_error = worker_error.or(Some(e)),
            }
        }
        let mut written = writer.await.map_err(Error::from)??;
        lancelet_io::release_free_memory();
        feed_result?;
        if let Some(e) = worker_error {
            return Err(e);
        }
        if let Some(s) = tokenized {
            s.finish();
        }
        partitions.sort_unstable();
        let mut stage = params
            .progress
            .as_ref()
            .map(|p| p.stage("write_metadata", Some(1), "files"));
        let mut md = metadata_file(&params.tokenizer, &partitions, &format, version)?;
        if let Some(name) = metadata_name {
            md.name = name;
        }
        let size = store.write(&md.name, md.bytes).await?;
        written.push((md.name, size));
        if let Some(mut s) = stage.take() {
            s.advance(1);
            s.finish();
        }
        Ok(written)
    }

    /// pylance's distributed build, one part: the full-text index of `fragments`, built
    /// into `_indices/{index_uuid}/staging/` as pylance names a part (partitions numbered
    /// from the first fragment's id times 2^32, and `part_{that}_metadata.lance`), to be
    /// merged by [`Dataset::merge_fts_parts`] and committed as one index.
    pub async fn stage_fts_part(
        &self,
        column: &str,
        params: &FtsIndexParams,
        index_uuid: &str,
        fragments: Vec<u64>,
    ) -> Result<()> {
        self.check_fts_build(column, params)?;
        let Some(first) = fragments.iter().min().copied() else {
            return Err(Error::InvalidArgument("fragment_ids is empty".into()));
        };
        let missing: Vec<u64> = fragments
            .iter()
            .copied()
            .filter(|f| self.fragment(*f).is_err())
            .collect();
        if !missing.is_empty() {
            return Err(Error::InvalidArgument(format!(
                "fragment_ids {missing:?} are not in this version"
            )));
        }
        let base = first << 32;
        let store = DirStore {
            store: self.store.clone(),
            dir: staging_dir(index_uuid)?,
        };
        let metadata = format!("part_{base}_metadata.lance");
        match self
            .build_fts_files(column, params, Some(fragments), &store, base, Some(metadata))
            .await
        {
            Ok(_) => Ok(()),
            Err(e) => {
                let names: Vec<String> = store
                    .store
                    .list(&store.dir)
                    .await
                    .unwrap_or_default()
                    .into_iter()
                    .filter(|n| n.starts_with(&format!("part_{base}_")))
                    .map(|n| format!("{}/{n}", store.dir))
                    .collect();
                self.remove_files(&names).await;
                Err(e)
            }
        }
    }

    /// pylance's `merge_index_metadata(index_uuid, "INVERTED")`: the parts staged under
    /// `_indices/{index_uuid}/staging/` become one index in `_indices/{index_uuid}/` (their
    /// partitions, renumbered from 0, and a `metadata.lance` naming them all), and the
    /// staging files are removed. The parts must share their tokenizer and format.
    pub async fn merge_fts_parts(&self, index_uuid: &str) -> Result<()> {
        let staging = staging_dir(index_uuid)?;
        let top = staging.trim_end_matches("/staging").to_string();
        let names = self.store.list(&staging).await?;
        let mut parts: Vec<u64> = names
            .iter()
            .filter_map(|n| n.strip_prefix("part_")?.strip_suffix("_metadata.lance")?.parse().ok())
            .collect();
        parts.sort_unstable();
        if parts.is_empty() {
            return Err(Error::InvalidArgument(format!(
                "no full-text index parts are staged under {staging}: build them with \
                 create_scalar_index(column, \"INVERTED\", index_uuid=..., fragment_ids=[...])"
            )));
        }
        let store = DirStore {
            store: self.store.clone(),
            dir: staging.clone(),
        };
        let mut merged: Option<lancelet_fts::files::IndexMeta> = None;
        let mut ids: Vec<u64> = Vec::new();
        let mut copies: Vec<(String, String)> = Vec::new();
        for part in &parts {
            let meta = lancelet_fts::files::read_metadata_named(&store, &format!("part_{part}_metadata.lance")).await?;
            match &merged {
                None => merged = Some(meta.clone()),
                Some(m) if m.params.to_json() != meta.params.to_json() || m.format != meta.format => {
                    return Err(Error::InvalidArgument(format!(
                        "the staged full-text parts of {index_uuid} were built with different parameters"
                    )))
                }
                Some(_) => {}
            }
            for p in &meta.partitions {
                let new = ids.len() as u64;
                ids.push(new);
                for (old_name, new_name) in [
                    (
                        lancelet_fts::files::tokens_file(*p),
                        lancelet_fts::files::tokens_file(new),
                    ),
                    (lancelet_fts::files::docs_file(*p), lancelet_fts::files::docs_file(new)),
                    (
                        lancelet_fts::files::invert_file(*p),
                        lancelet_fts::files::invert_file(new),
                    ),
                ] {
                    copies.push((format!("{staging}/{old_name}"), format!("{top}/{new_name}")));
                }
            }
        }
        let Some(meta) = merged else { return Ok(()) };
        for (from, to) in &copies {
            let bytes = self.store.read(from).await?;
            self.store.put(to, bytes).await?;
        }
        let md = metadata_file(&meta.params, &ids, &meta.format, self.index_file_version())?;
        self.store.put(&format!("{top}/{}", md.name), md.bytes.into()).await?;
        let staged: Vec<String> = names.iter().map(|n| format!("{staging}/{n}")).collect();
        self.remove_files(&staged).await;
        Ok(())
    }

    /// The full-text index entries of this version: those with full-text details, and
    /// those committed without details whose files are a full-text index's (listings
    /// still call them `Unknown`, as pylance does).
    async fn fts_entries(&self) -> Result<Vec<pb::IndexMetadata>> {
        let mut out = Vec::new();
        for idx in self.indices().await?.iter() {
            if is_fts(idx) {
                out.push(idx.clone());
            } else if idx.index_details.as_ref().is_none_or(|d| d.type_url.is_empty()) {
                if let Some(d) = self.infer_fts_details(idx).await {
                    let mut idx = idx.clone();
                    idx.index_details = Some(d);
                    out.push(idx);
                }
            }
        }
        Ok(out)
    }

    /// The details of an index entry committed without them (pylance's `Index` of a
    /// distributed full-text build carries none): full-text details when its directory
    /// holds a full-text `metadata.lance`.
    pub(crate) async fn infer_fts_details(&self, idx: &pb::IndexMetadata) -> Option<prost_types::Any> {
        let (store, dir) = self.index_files(idx).ok()?;
        let meta = lancelet_fts::files::read_metadata(&DirStore { store, dir })
            .await
            .ok()?;
        let params = FtsIndexParams {
            tokenizer: meta.params,
            format_version: meta.format.version,
            ..FtsIndexParams::default()
        };
        Some(prost_types::Any {
            type_url: lancelet_fts::DETAILS_TYPE_URL.to_string(),
            value: details(&params),
        })
    }

    /// The open full-text index of entry `idx` (cached by directory).
    pub(crate) async fn open_fts_index(&self, idx: &pb::IndexMetadata) -> Result<Arc<FtsIndex>> {
        let (index_store, dir) = self.index_files(idx)?;
        if let Some(hit) = self.caches.fts_indexes.lock().ok().and_then(|c| c.get(&dir).cloned()) {
            return Ok(hit);
        }
        let files = DirStore {
            store: index_store,
            dir: dir.clone(),
        };
        let opened = Arc::new(FtsIndex::open(&files).await?);
        if let Ok(mut c) = self.caches.fts_indexes.lock() {
            c.insert(dir, opened.clone());
        }
        Ok(opened)
    }

    /// The searchable partitions of every FTS-indexed column the query needs.
    async fn fts_columns(
        &self,
        query: &FtsQuery,
        fast_search: bool,
        prefilter: Option<&str>,
    ) -> Result<Vec<ColumnSearch>> {
        let wanted: Vec<Option<String>> = query.columns();
        let all = wanted.iter().any(Option::is_none);
        let indices = self.fts_entries().await?;
        // Column -> its segments.
        let mut by_column: Vec<(String, Vec<&pb::IndexMetadata>)> = Vec::new();
        for idx in indices.iter() {
            let Some(col) = idx.fields.first().and_then(|f| self.field_path(*f)) else {
                continue;
            };
            if !all && !wanted.iter().any(|w| w.as_deref() == Some(col.as_str())) {
                continue;
            }
            // A second INVERTED index on the same column is not a segment of the first:
            // the first one the manifest lists answers (pylance searches one too).
            match by_column.iter_mut().find(|(c, _)| *c == col) {
                Some((_, v)) if v[0].name == idx.name => v.push(idx),
                Some(_) => {}
                None => by_column.push((col, vec![idx])),
            }
        }
        let mut out = Vec::with_capacity(by_column.len());
        for (column, segments) in by_column {
            let mut partitions: Vec<Arc<Partition>> = Vec::new();
            let mut stats = Stats::default();
            let mut covered: HashSet<u32> = HashSet::new();
            let mut first: Option<Arc<FtsIndex>> = None;
            for idx in &segments {
                let index = self.open_fts_index(idx).await?;
                stats.add(index.stats());
                partitions.extend(index.partitions.iter().cloned());
                covered.extend(fragment_bitmap(idx).map_err(|e| Error::corrupt("_indices", e))?.iter());
                first.get_or_insert(index);
            }
            let Some(first) = first else { continue };
            let unindexed: Vec<u64> = self
                .fragments()
                .iter()
                .map(|f| f.id)
                .filter(|id| u32::try_from(*id).map_or(true, |i| !covered.contains(&i)))
                .collect();
            let flat = if !fast_search && !unindexed.is_empty() {
                self.unindexed_partition(&column, &first, unindexed, prefilter)
                    .await?
                    .map(Arc::new)
            } else {
                None
            };
            // With stable row ids an updated row keeps its id in a fragment the segments do
            // not cover: their entries for it are stale (the unindexed rows have it).
            let indexed_rows: Option<Arc<dyn Fn(u64) -> bool + Send + Sync>> = if self.has_stable_row_ids() {
                let index = self.row_id_index().await?;
                let covered = covered.clone();
                Some(Arc::new(move |row: u64| {
                    index.get(row).is_some_and(|a| covered.contains(&((a >> 32) as u32)))
                }))
            } else {
                None
            };
            out.push(ColumnSearch {
                column,
                partitions,
                flat,
                analyzer: first.analyzer()?,
                stats,
                with_position: first.params.with_position,
                indexed_rows,
            });
        }
        Ok(out)
    }

    /// The rows of `fragments` (those matching `filter`, when given) tokenized into an
    /// in-memory partition (`None` when empty). With a prefilter only matching rows count in
    /// the unindexed rows' statistics, as in pylance.
    async fn unindexed_partition(
        &self,
        column: &str,
        index: &FtsIndex,
        fragments: Vec<u64>,
        filter: Option<&str>,
    ) -> Result<Option<Partition>> {
        let scan = Arc::new(
            Scan::plan(
                self,
                ScanOptions {
                    columns: Columns::Names(vec![column.to_string()]),
                    with_row_id: true,
                    fragments: Some(fragments),
                    filter: filter.map(str::to_string),
                    ..ScanOptions::default()
                },
            )
            .await?,
        );
        let mut b = PartitionBuilder::new(index.analyzer()?, index.params.with_position);
        for batch in scan.collect_parallel().await? {
            let row_ids = batch
                .column_by_name(ROW_ID)
                .ok_or_else(|| Error::InvalidArgument("the scan returned no row ids".into()))?
                .as_primitive::<UInt64Type>()
                .values()
                .to_vec();
            for_each_doc(batch.column(0), &row_ids, |row, texts| Ok(b.add(row, texts)?))?;
        }
        if b.is_empty() {
            return Ok(None);
        }
        let tail = index.format.tail();
        Ok(Some(Partition::from_sealed(b.seal(tail)?, tail)?))
    }

    /// Runs a full-text search; returns one batch: the columns asked for, then `_score`
    /// (and `_rowid`), best first.
    pub async fn full_text_search(&self, req: &FullTextRequest) -> Result<RecordBatch> {
        let hits = self.full_text_hits(req).await?;
        let addrs: Vec<u64> = hits.iter().map(|(a, _)| *a).collect();
        let scores: Vec<f32> = hits.iter().map(|(_, s)| *s).collect();
        self.ranked_output(req.columns.as_ref(), &addrs, vec![(SCORE, scores)], req.with_row_id)
            .await
    }

    /// The ranked `(row address, score)` pairs of a full-text search (offset and limit
    /// applied).
    pub(crate) async fn full_text_hits(&self, req: &FullTextRequest) -> Result<Vec<(u64, f32)>> {
        let prefilter = match (&req.filter, req.prefilter) {
            (Some(f), true) if !f.trim().is_empty() => Some(f.as_str()),
            _ => None,
        };
        let columns = self.fts_columns(&req.query, req.fast_search, prefilter).await?;
        let stable = self.has_stable_row_ids();
        // Row id -> address for every live row (deleted rows have none).
        let rowid_index = if stable { Some(self.row_id_index().await?) } else { None };
        // Live row ranges by fragment id (ids are small and dense: a vector, not a map).
        let mut live: Vec<Option<Vec<std::ops::Range<u64>>>> = Vec::new();
        if !stable {
            for f in self.fragments() {
                let Ok(id) = usize::try_from(f.id) else { continue };
                if live.len() <= id {
                    live.resize(id + 1, None);
                }
                live[id] = Some(self.live_ranges(f).await?);
            }
        }
        let is_live = |addr: u64| -> bool {
            let Some(Some(ranges)) = live.get((addr >> 32) as usize) else {
                return false;
            };
            let row = addr & 0xFFFF_FFFF;
            let i = ranges.partition_point(|r| r.end <= row);
            ranges.get(i).is_some_and(|r| r.start <= row)
        };
        let allowed = match (&req.filter, req.prefilter) {
            (Some(f), true) if !f.trim().is_empty() => Some(self.matching_addresses(f, None).await?),
            _ => None,
        };
        let to_addr = |row: u64| -> Option<u64> {
            match &rowid_index {
                Some(ix) => ix.get(row),
                None => is_live(row).then_some(row),
            }
        };
        let keep = |row: u64| -> bool { to_addr(row).is_some_and(|a| allowed.as_ref().is_none_or(|s| s.contains(&a))) };
        let post = match (&req.filter, req.prefilter) {
            (Some(f), false) if !f.trim().is_empty() => Some(f.clone()),
            _ => None,
        };
        let limit = req.limit.map(|l| l as usize);
        let ranked = search_top(
            &req.query,
            &columns,
            &keep,
            0,
            limit.map(|l| l.saturating_add(req.offset as usize)),
        )?;
        let mut out: Vec<(u64, f32)> = ranked
            .into_iter()
            .filter_map(|(r, s)| to_addr(r).map(|a| (a, s)))
            .collect();
        if let Some(f) = post {
            let scored: Vec<(f32, u64)> = out.iter().map(|(a, s)| (*s, *a)).collect();
            let matching = self.matching_among(&f, &scored).await?;
            out.retain(|(a, _)| matching.contains(a));
        }
        Ok(out.into_iter().skip(req.offset as usize).collect())
    }

    /// The rows at `addrs` (in that order) with the columns asked for, then the named score
    /// columns (nullable float32), then `_rowid` when asked.
    pub(crate) async fn ranked_output(
        &self,
        columns: Option<&Vec<String>>,
        addrs: &[u64],
        scores: Vec<(&str, Vec<f32>)>,
        with_row_id: bool,
    ) -> Result<RecordBatch> {
        self.ranked_output_nullable(
            columns,
            addrs,
            scores
                .into_iter()
                .map(|(n, v)| (n, v.into_iter().map(Some).collect()))
                .collect(),
            with_row_id,
        )
        .await
    }

    /// As [`Self::ranked_output`], with missing scores.
    pub(crate) async fn ranked_output_nullable(
        &self,
        columns: Option<&Vec<String>>,
        addrs: &[u64],
        scores: Vec<(&str, Vec<Option<f32>>)>,
        with_row_id: bool,
    ) -> Result<RecordBatch> {
        let score_names: Vec<&str> = scores.iter().map(|(n, _)| *n).collect();
        let mut names: Vec<String> = match columns {
            Some(c) => c.clone(),
            None => self.schema().fields().iter().map(|f| f.name().clone()).collect(),
        };
        names.retain(|c| !score_names.contains(&c.as_str()) && c != ROW_ID);
        let rows = self.take_addresses(addrs, Some(&names)).await?;
        let mut fields: Vec<Field> = rows.schema().fields().iter().map(|f| f.as_ref().clone()).collect();
        let mut cols: Vec<ArrayRef> = rows.columns().to_vec();
        for (name, values) in scores {
            // A score column goes where the caller named it, else after the columns.
            let at = columns
                .and_then(|c| c.iter().filter(|n| *n != ROW_ID).position(|n| n == name))
                .unwrap_or(fields.len())
                .min(fields.len());
            fields.insert(at, Field::new(name, DataType::Float32, true));
            cols.insert(at, Arc::new(Float32Array::from(values)));
        }
        if with_row_id {
            fields.push(Field::new(ROW_ID, DataType::UInt64, true));
            cols.push(Arc::new(self.row_ids_of(addrs).await?));
        }
        Ok(RecordBatch::try_new(Arc::new(Schema::new(fields)), cols)?)
    }

    /// The build parameters of an existing full-text index (its tokenizer and format).
    pub(crate) async fn fts_params_of(&self, idx: &pb::IndexMetadata) -> Result<FtsIndexParams> {
        let index = self.open_fts_index(idx).await?;
        Ok(FtsIndexParams {
            tokenizer: index.params.clone(),
            format_version: index.format.version,
            ..FtsIndexParams::default()
        })
    }

    /// Statistics of full-text index segment `idx` as JSON (pylance's keys).
    pub(crate) async fn fts_statistics(&self, idx: &pb::IndexMetadata) -> Result<serde_json::Value> {
        Ok(self.open_fts_index(idx).await?.statistics())
    }

    /// Statistics of the full-text index segment `uuid` as JSON text: pylance's
    /// `params` (an object), `num_tokens` and `num_docs`, and the segment's partitions and
    /// format version.
    pub async fn fts_index_statistics(&self, uuid: &str) -> Result<String> {
        let idx = self.index_segment(uuid).await?;
        if !is_fts(&idx) {
            return Err(Error::InvalidArgument(format!("index segment {uuid} is not full-text")));
        }
        Ok(self.fts_statistics(&idx).await?.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn details_carry_the_tokenizer_settings_with_the_language_quoted() {
        let d = details(&FtsIndexParams::default());
        // field 1 "simple"
        assert_eq!(&d[..8], b"\x0a\x06simple");
        // field 2 "\"English\""
        assert_eq!(&d[8..19], b"\x12\x09\"English\"");
        // with_position is false, so field 3 is absent; max_token_length 40 follows.
        assert_eq!(&d[19..21], &[4 << 3, 40]);
    }
}
