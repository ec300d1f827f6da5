//! `merge_insert`: upserts by key, as pylance's `MergeInsertBuilder`.
//!
//! A hash join of the source with the dataset (the target) on the key columns:
//!
//! 1. the source's key columns are read into a [`keys::KeyTable`] (only keys are held,
//!    never whole rows: the source is usually the small side);
//! 2. the target's key columns (with row addresses, and row ids with stable row ids) are
//!    scanned task by task and looked up in it, keeping only the matched pairs (a row with
//!    a null key never matches);
//! 3. the source is streamed again, batch by batch. With `when_matched_update_all`, a matched target row is
//!    replaced by its source row, where the optional condition holds over
//!    `source.<column>`/`target.<column>` (the source's missing columns keep the target's
//!    values); with `when_not_matched_insert_all`, a source row that matched nothing is
//!    inserted. The new rows are written to new data files as the batches come;
//! 4. with `when_not_matched_by_source_delete`, target rows no source row matched (and
//!    where its optional filter holds) are deleted;
//! 5. one Update transaction tombstones the replaced and deleted rows and adds the new
//!    files. With stable row ids, updated rows keep their ids (they are written to files
//!    of their own, before the inserted rows).
//!
//! Nothing is committed when nothing changes. Several source rows matching one target row
//! is an error when updating (the result would be ambiguous). A commit that conflicts with
//! a concurrent one runs the merge again on the newest version (see [`crate::commit::retry`]), so
//! the source is given as a function that opens it again (it must give the same rows each
//! time).
//!
//! ```no_run
//! # async fn demo(ds: lancelet_dataset::Dataset, batches: Vec<arrow_array::RecordBatch>,
//! #               schema: arrow_schema::SchemaRef) -> lancelet_dataset::Result<()> {
//! use lancelet_dataset::modify::merge_insert::MergeInsertParams;
//! let params = MergeInsertParams {
//!     update: true,
//!     insert: true,
//!     ..MergeInsertParams::new(vec!["id".into()])
//! };
//! let source = move || -> lancelet_dataset::Result<Box<dyn arrow_array::RecordBatchReader + Send>> {
//!     let batches = batches.clone().into_iter().map(Ok);
//!     Ok(Box::new(arrow_array::RecordBatchIterator::new(batches, schema.clone())))
//! };
//! let (ds, stats) = ds.merge_insert(&params, &source).await?;
//! # Ok(()) }
//! ```

mod condition;
pub(crate) mod keys;

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::UInt64Type;
use arrow_array::{new_null_array, Array, ArrayRef, RecordBatch, RecordBatchOptions, RecordBatchReader, UInt32Array};
use arrow_schema::{Schema, SchemaRef};

use self::condition::{Condition, Side};
use self::keys::{KeyEncoder, KeyTable};
use crate::commit::retry::RetryPolicy;
use crate::scan::{Columns, Scan, ScanOptions, ROW_ADDR, ROW_ID};
use crate::write::{align_schema, dataset_field_ids, FragmentWriter, WriteParams};
use crate::{Dataset, Error, Result};

/// What a merge-insert does (pylance's builder calls).
#[derive(Debug, Clone)]
pub struct MergeInsertParams {
    /// The key columns the source is joined on.
    pub on: Vec<String>,
    /// `when_matched_update_all`: replace matched target rows by their source rows.
    pub update: bool,
    /// Only update the matched rows where this SQL condition holds.
    pub update_condition: Option<String>,
    /// `when_matched_fail`: any source row matching a target row fails the merge, and
    /// nothing is written (instead of updating or keeping the matched rows).
    pub fail_on_match: bool,
    /// `when_not_matched_insert_all`: insert source rows that match no target row.
    pub insert: bool,
    /// `when_not_matched_by_source_delete`: delete target rows no source row matches.
    pub delete: bool,
    /// Only delete those where this SQL filter holds.
    pub delete_filter: Option<String>,
    /// How conflicts with concurrent commits are retried (pylance's `conflict_retries`).
    pub retry: RetryPolicy,
    /// The base paths new data files go to in turn (pylance's `target_bases`: names or
    /// paths); the dataset's root when empty.
    pub target_bases: Vec<String>,
    /// pylance's `target_all_bases(include_primary)`: spread new files over every base
    /// (and the root first when `Some(true)`).
    pub target_all_bases: Option<bool>,
}

impl MergeInsertParams {
    /// A merge on `on` that does nothing yet (set `update`, `insert`, `delete`).
    pub fn new(on: Vec<String>) -> Self {
        Self {
            on,
            update: false,
            update_condition: None,
            fail_on_match: false,
            insert: false,
            delete: false,
            delete_filter: None,
            retry: RetryPolicy::default(),
            target_bases: Vec::new(),
            target_all_bases: None,
        }
    }
}

/// What a merge-insert changed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MergeStats {
    /// Source rows inserted.
    pub num_inserted_rows: u64,
    /// Target rows replaced by source rows.
    pub num_updated_rows: u64,
    /// Target rows deleted because no source row matched them.
    pub num_deleted_rows: u64,
}

/// Opens the source of a merge (again, for a retry after a conflict).
pub type SourceFn = dyn Fn() -> Result<Box<dyn RecordBatchReader + Send>> + Send + Sync;

impl Dataset {
    /// Merges the rows `source` opens into this dataset (see the module docs); returns the
    /// dataset at the new version (this one when nothing changed) and the counts.
    pub async fn merge_insert(&self, params: &MergeInsertParams, source: &SourceFn) -> Result<(Dataset, MergeStats)> {
        self.check_merge_insert(params)?;
        self.execute_with_retry(&params.retry, |ds| async move { ds.merge_once(params, source).await })
            .await
    }

    /// The merge without its commit (pylance's `execute_uncommitted`): the new data files
    /// and deletion files are written and the transaction that would commit them is
    /// returned, to be committed later (or by another process) against this version.
    pub async fn merge_insert_uncommitted(
        &self,
        params: &MergeInsertParams,
        source: &SourceFn,
    ) -> Result<(lancelet_table::pb::Transaction, MergeStats)> {
        self.check_merge_insert(params)?;
        let (op, stats, _) = self.merge_operation(params, source).await?;
        Ok((lancelet_table::commit::new_transaction(self.version(), op, None), stats))
    }

    /// The plan of a merge with a source of `source_schema` (the dataset's schema when
    /// `None`): what is joined, on what, and what each outcome does. The source's columns
    /// are checked against the dataset's as the merge would.
    pub fn merge_insert_plan(
        &self,
        params: &MergeInsertParams,
        source_schema: Option<&Schema>,
        verbose: bool,
    ) -> Result<String> {
        self.check_merge_insert(params)?;
        let target = self.schema().clone();
        let source = source_schema.unwrap_or(&target);
        check_source(&target, source, params)?;
        Ok(plan_text(self, params, source, verbose, None))
    }

    /// Runs the merge without committing it and describes what it did (pylance's
    /// `analyze_plan`): the plan with the counts, the bytes and files written and the time
    /// taken. The files it wrote are removed again, so the dataset is left as it was.
    pub async fn merge_insert_analyze(&self, params: &MergeInsertParams, source: &SourceFn) -> Result<String> {
        self.check_merge_insert(params)?;
        let started = std::time::Instant::now();
        let schema = source()?.schema();
        let (op, stats, files) = self.merge_operation(params, source).await?;
        let elapsed = started.elapsed();
        let data_files: Vec<&lancelet_table::pb::DataFile> = match &op {
            lancelet_table::pb::transaction::Operation::Update(u) => {
                u.new_fragments.iter().flat_map(|f| f.files.iter()).collect()
            }
            _ => Vec::new(),
        };
        let metrics = AnalyzeMetrics {
            stats,
            bytes_written: data_files.iter().map(|f| f.file_size_bytes).sum(),
            num_files_written: data_files.len() as u64,
            elapsed,
        };
        self.remove_files(&files).await;
        Ok(plan_text(self, params, &schema, true, Some(&metrics)))
    }

    fn check_merge_insert(&self, params: &MergeInsertParams) -> Result<()> {
        if params.update {
            self.refuse_unrewritable_blobs("updating rows through merge_insert in")?;
        }
        if params.on.is_empty() {
            return Err(Error::InvalidArgument(
                "merge_insert needs the key column(s) to join on".into(),
            ));
        }
        let missing: Vec<&String> = params
            .on
            .iter()
            .filter(|k| self.schema().index_of(k).is_err())
            .collect();
        if !missing.is_empty() {
            return Err(Error::InvalidArgument(format!(
                "merge_insert key column(s) {missing:?} are not in the dataset"
            )));
        }
        if params.fail_on_match && params.update {
            return Err(Error::InvalidArgument(
                "merge_insert: when_matched_fail and when_matched_update_all cannot both be set".into(),
            ));
        }
        Ok(())
    }

    async fn merge_once(&self, params: &MergeInsertParams, source: &SourceFn) -> Result<(Dataset, MergeStats)> {
        let m = self.merge_write(params, source).await?;
        if m.gone.is_empty() && m.frags.is_empty() {
            return Ok((self.clone(), m.stats));
        }
        let ds = self.replace_rows(&m.gone, m.frags, &m.moved).await?;
        Ok((ds, m.stats))
    }

    /// The merge's operation, with every file written for it (data and deletion files);
    /// on failure the files are removed.
    async fn merge_operation(
        &self,
        params: &MergeInsertParams,
        source: &SourceFn,
    ) -> Result<(lancelet_table::pb::transaction::Operation, MergeStats, Vec<String>)> {
        let m = self.merge_write(params, source).await?;
        let mut files = crate::modify::update::data_paths(&m.frags);
        let mut written = Vec::new();
        match self.replacement(&m.gone, m.frags, &m.moved, &mut written).await {
            Ok(op) => {
                files.extend(written);
                Ok((op, m.stats, files))
            }
            Err(e) => {
                self.remove_files(&written).await;
                self.remove_files(&files).await;
                Err(e)
            }
        }
    }

    /// Joins the source with the dataset and writes the new rows: what the commit replaces.
    async fn merge_write(&self, params: &MergeInsertParams, source: &SourceFn) -> Result<Written> {
        // JSON text columns (`pa.json_()`) are stored as JSONB.
        let source = || -> Result<Box<dyn RecordBatchReader + Send>> { Ok(crate::json::storage_reader(source()?)) };
        let reader = source()?;
        let src_schema = reader.schema();
        let target_schema = self.schema().clone();
        check_source(&target_schema, &src_schema, params)?;
        let condition = match (&params.update_condition, params.update) {
            (Some(sql), true) => Some(Condition::new(sql, &src_schema, &target_schema)?),
            _ => None,
        };
        let stable = self.has_stable_row_ids();
        // 1. The source's keys; 2. the target's keys stream through them.
        let (keys, source_rows) = source_keys(reader, &params.on, &target_schema)?;
        let probe = probe_target(self, Arc::new(keys), params, stable).await?;
        if params.fail_on_match && !probe.pairs.is_empty() {
            let sources = probe
                .pairs
                .iter()
                .map(|p| p.src)
                .collect::<std::collections::BTreeSet<_>>();
            return Err(Error::InvalidArgument(format!(
                "Merge insert failed: {} source row(s) match existing rows on {:?} (when_matched_fail), the first \
                 being source row {}",
                sources.len(),
                params.on,
                sources.first().copied().unwrap_or(0)
            )));
        }
        // 3. The source again: the new rows are written as its batches come.
        let all: Vec<usize> = (0..target_schema.fields().len()).collect();
        let ids = dataset_field_ids(&target_schema, &self.manifest().fields, &all)?;
        let mut wparams = WriteParams {
            file_version: self.rewrite_version("merging rows")?,
            ..WriteParams::default()
        };
        // Updated rows keep the external blobs of the target rows they replace, wherever
        // those are (as pylance does); new external values from the source must still be
        // under a registered base, so the exception holds only when the source has none.
        if params.update && self.has_blob_v2_columns() {
            wparams.blob.allow_external_outside_bases =
                !crate::blob::rewrite::has_external_blobs(source()?, &target_schema)?;
        }
        let spread = self
            .target_stores(&params.target_bases, params.target_all_bases)?
            .map(Arc::new);
        let store: Arc<dyn lancelet_io::Storage> = match &spread {
            Some(s) => s.clone(),
            None => self.store().clone(),
        };
        let mut main = FragmentWriter::new(store.clone(), target_schema.clone(), ids.clone(), wparams.clone())?;
        // With stable row ids, updated rows fill files of their own (they keep their ids).
        let mut inserts = match stable {
            true => Some(FragmentWriter::new(store.clone(), target_schema.clone(), ids, wparams)?),
            false => None,
        };
        let mut join = Join {
            ds: self,
            params,
            condition: condition.as_ref(),
            schema: &target_schema,
            stable,
            gone: Vec::new(),
            moved: Vec::new(),
            stats: MergeStats::default(),
        };
        let streamed: Result<Vec<lancelet_table::pb::DataFragment>> = async {
            let (mut start, mut cursor) = (0usize, 0usize);
            for batch in source()? {
                let batch = batch?;
                let end = start + batch.num_rows();
                let from = cursor;
                while cursor < probe.pairs.len() && (probe.pairs[cursor].src as usize) < end {
                    cursor += 1;
                }
                let offset = start as u32;
                let local: Vec<Pair> = probe.pairs[from..cursor]
                    .iter()
                    .map(|p| Pair {
                        src: p.src - offset,
                        ..*p
                    })
                    .collect();
                start = end;
                if batch.num_rows() == 0 {
                    continue;
                }
                let (updated, inserted) = join.probe(&batch, &local).await?;
                if let Some(b) = updated {
                    main.write(&b)?;
                    main.upload_pending().await?;
                }
                if let Some(b) = inserted {
                    let w = inserts.as_mut().unwrap_or(&mut main);
                    w.write(&b)?;
                    w.upload_pending().await?;
                }
            }
            if start != source_rows {
                return Err(Error::InvalidArgument(format!(
                    "the merge source gave {start} rows on its second read but {source_rows} on its first"
                )));
            }
            join.delete_unmatched(&probe).await?;
            let mut frags = main.finish()?;
            main.upload_pending().await?;
            if let Some(w) = inserts.as_mut() {
                frags.extend(w.finish()?);
                w.upload_pending().await?;
            }
            Ok(frags)
        }
        .await;
        let frags = match streamed {
            Ok(mut f) => {
                if let Some(s) = &spread {
                    s.mark(&mut f);
                }
                f
            }
            Err(e) => {
                main.abort().await;
                if let Some(w) = inserts.as_mut() {
                    w.abort().await;
                }
                return Err(e);
            }
        };
        let Join { gone, moved, stats, .. } = join;
        Ok(Written {
            gone,
            frags,
            moved,
            stats,
        })
    }
}

/// What a merge wrote before its commit.
struct Written {
    /// Addresses of the target rows it replaces or deletes.
    gone: Vec<u64>,
    /// The new fragments.
    frags: Vec<lancelet_table::pb::DataFragment>,
    /// Row ids the updated rows keep (stable row ids).
    moved: Vec<u64>,
    stats: MergeStats,
}

/// What `analyze` measured.
struct AnalyzeMetrics {
    stats: MergeStats,
    bytes_written: u64,
    num_files_written: u64,
    elapsed: std::time::Duration,
}

/// The plan of a merge, as text: the merge's settings on the first line, then the join
/// and its two sides (the metrics of a run on the first line when given).
fn plan_text(
    ds: &Dataset,
    params: &MergeInsertParams,
    source: &Schema,
    verbose: bool,
    run: Option<&AnalyzeMetrics>,
) -> String {
    let when_matched = match (params.update, params.fail_on_match, &params.update_condition) {
        (true, _, Some(c)) => format!("UpdateIf({c})"),
        (true, _, None) => "UpdateAll".to_string(),
        (false, true, _) => "Fail".to_string(),
        (false, false, _) => "DoNothing".to_string(),
    };
    let when_not_matched = if params.insert { "InsertAll" } else { "DoNothing" };
    let by_source = match (params.delete, &params.delete_filter) {
        (true, Some(f)) => format!("DeleteIf({f})"),
        (true, None) => "Delete".to_string(),
        (false, _) => "Keep".to_string(),
    };
    let on = params.on.join(", ");
    let mut out = format!(
        "MergeInsert: on=[{on}], when_matched={when_matched}, when_not_matched={when_not_matched}, \
         when_not_matched_by_source={by_source}"
    );
    if let Some(m) = run {
        out.push_str(&format!(
            ", elapsed={:?}, metrics=[num_inserted_rows={}, num_updated_rows={}, num_deleted_rows={}, \
             bytes_written={}, num_files_written={}]",
            m.elapsed,
            m.stats.num_inserted_rows,
            m.stats.num_updated_rows,
            m.stats.num_deleted_rows,
            m.bytes_written,
            m.num_files_written
        ));
    }
    out.push('\n');
    let rows: u64 = ds.fragments().iter().map(lancelet_table::manifest::live_rows).sum();
    out.push_str(&format!(
        "  HashJoin: source keys [{on}] in a hash table, probed by the target's keys in scan order\n"
    ));
    out.push_str(&format!(
        "    LanceletScan: version={}, columns=[{on}], with_row_address=true, fragments={}, rows={rows}\n",
        ds.version(),
        ds.fragments().len()
    ));
    let names: Vec<&str> = source.fields().iter().map(|f| f.name().as_str()).collect();
    out.push_str(&format!("    Source: columns=[{}]\n", names.join(", ")));
    if verbose {
        out.push_str("  Write: new fragments for updated and inserted rows; deletion files for replaced and deleted rows; one Update commit\n");
    }
    out
}

/// Source columns must be dataset columns of the same types; missing columns must be
/// nullable, or (when updating) are taken from the matched target rows.
fn check_source(target: &Schema, source: &Schema, params: &MergeInsertParams) -> Result<()> {
    let missing: Vec<&String> = params.on.iter().filter(|k| source.index_of(k).is_err()).collect();
    if !missing.is_empty() {
        return Err(Error::SchemaMismatch(format!(
            "the source has no key column(s) {missing:?}"
        )));
    }
    if params.update {
        let relaxed: Vec<arrow_schema::Field> = target
            .fields()
            .iter()
            .map(|f| f.as_ref().clone().with_nullable(true))
            .collect();
        align_schema(&Schema::new(relaxed), source)?;
    } else {
        align_schema(target, source)?;
    }
    Ok(())
}

/// A source row (by its position) matched with a target row.
#[derive(Debug, Clone, Copy)]
struct Pair {
    src: u32,
    addr: u64,
    /// The target row's id (its address without stable row ids).
    row_id: u64,
}

/// What the target's key scan found.
#[derive(Default)]
struct Probe {
    /// Matched pairs, by source row (then in target order).
    pairs: Vec<Pair>,
    /// Addresses of target rows no source row matched (only for an unfiltered delete).
    unmatched: Vec<u64>,
    /// Sorted addresses of matched target rows (only for a filtered delete).
    matched: Vec<u64>,
}

/// The key table of the source (`on` columns cast to the target's types): the source's
/// keys only, never whole rows. Returns it and the number of source rows.
fn source_keys(reader: Box<dyn RecordBatchReader + Send>, on: &[String], target: &Schema) -> Result<(KeyTable, usize)> {
    let types = on
        .iter()
        .map(|k| target.field_with_name(k).map(|f| f.data_type()))
        .collect::<std::result::Result<Vec<_>, _>>()?;
    let mut table = KeyTable::new(&types);
    let mut key = Vec::new();
    let mut rows = 0usize;
    for batch in reader {
        let batch = batch?;
        let enc = KeyEncoder::new(cast_keys(&batch, on, target)?)?;
        table.reserve(batch.num_rows());
        for i in 0..batch.num_rows() {
            let row = u32::try_from(rows + i)
                .ok()
                .filter(|r| *r < u32::MAX)
                .ok_or_else(|| Error::Unsupported("a merge source of 2^32 rows or more".into()))?;
            table.insert(&enc, i, row, &mut key);
        }
        rows += batch.num_rows();
    }
    table.seal();
    Ok((table, rows))
}

/// The key columns of a source batch in the target's types.
fn cast_keys(batch: &RecordBatch, on: &[String], target: &Schema) -> Result<Vec<ArrayRef>> {
    let mut keys = Vec::with_capacity(on.len());
    for k in on {
        let c = batch
            .column_by_name(k)
            .ok_or_else(|| Error::SchemaMismatch(format!("the source has no key column {k:?}")))?;
        let want = target.field_with_name(k)?.data_type();
        keys.push(if c.data_type() == want {
            c.clone()
        } else {
            arrow_cast::cast(c, want)?
        });
    }
    Ok(keys)
}

/// Streams the target's key columns through the source's keys: each scan task probes its
/// own batch, as many at once as there are cores, and the results are joined in order.
///
/// Without stable row ids the scan returns keys only: a task's rows are its ranges of its
/// fragment, in order, so an address is worked out for the rows that match instead of
/// being materialized for every target row (16 MB per million rows).
async fn probe_target(ds: &Dataset, keys: Arc<KeyTable>, params: &MergeInsertParams, stable: bool) -> Result<Probe> {
    let opts = ScanOptions {
        columns: Columns::Names(params.on.clone()),
        with_row_address: stable,
        with_row_id: stable,
        ..ScanOptions::default()
    };
    let scan = Arc::new(Scan::plan(ds, opts).await?);
    let want = Wanted {
        update: params.update,
        unmatched: params.delete && params.delete_filter.is_none(),
        matched: params.delete && params.delete_filter.is_some(),
        stable,
    };
    let on = Arc::new(params.on.clone());
    let window = crate::scan::tasks_at_once();
    let mut probe = Probe::default();
    let mut pending = std::collections::VecDeque::new();
    let mut next = 0;
    loop {
        while pending.len() < window && next < scan.num_tasks() {
            let (s, i, keys, on) = (scan.clone(), next, keys.clone(), on.clone());
            pending.push_back(tokio::spawn(async move {
                let b = s.run_task(i).await?;
                let task = &s.tasks()[i];
                let rows = Rows::new(&b, task.fragment.id, &task.ranges, want.stable)?;
                probe_batch(&b, &rows, &keys, &on, want)
            }));
            next += 1;
        }
        let Some(h) = pending.pop_front() else { break };
        let part = h.await.map_err(Error::from)??;
        probe.pairs.extend(part.pairs);
        probe.unmatched.extend(part.unmatched);
        probe.matched.extend(part.matched);
    }
    probe.pairs = sort_by_source(probe.pairs);
    probe.matched.sort_unstable();
    Ok(probe)
}

/// `pairs` ordered by source row, pairs of one source row kept in target order: a
/// counting sort (the source rows are dense ordinals), linear where a comparison sort of
/// the pairs was a tenth of a merge's time.
fn sort_by_source(pairs: Vec<Pair>) -> Vec<Pair> {
    let Some(max) = pairs.iter().map(|p| p.src).max() else {
        return pairs;
    };
    let mut starts = vec![0u32; max as usize + 2];
    for p in &pairs {
        starts[p.src as usize + 1] += 1;
    }
    for i in 1..starts.len() {
        starts[i] += starts[i - 1];
    }
    let mut out = vec![
        Pair {
            src: 0,
            addr: 0,
            row_id: 0
        };
        pairs.len()
    ];
    for p in pairs {
        let slot = &mut starts[p.src as usize];
        out[*slot as usize] = p;
        *slot += 1;
    }
    out
}

/// The addresses and row ids of one scanned batch of target rows.
enum Rows<'a> {
    /// Scanned with both columns (stable row ids).
    Scanned {
        addr: &'a arrow_array::PrimitiveArray<UInt64Type>,
        ids: &'a arrow_array::PrimitiveArray<UInt64Type>,
    },
    /// The task's ranges of its fragment, in order; the id is the address.
    Ranges {
        base: u64,
        ranges: &'a [std::ops::Range<u64>],
    },
}

impl<'a> Rows<'a> {
    fn new(b: &'a RecordBatch, fragment: u64, ranges: &'a [std::ops::Range<u64>], stable: bool) -> Result<Self> {
        if stable {
            return Ok(Self::Scanned {
                addr: column_u64(b, ROW_ADDR)?,
                ids: column_u64(b, ROW_ID)?,
            });
        }
        let n: u64 = ranges.iter().map(|r| r.end - r.start).sum();
        if n != b.num_rows() as u64 {
            return Err(Error::InvalidArgument(format!(
                "a merge scan task gave {} rows for ranges of {n}",
                b.num_rows()
            )));
        }
        Ok(Self::Ranges {
            base: fragment << 32,
            ranges,
        })
    }

    /// Finds the address and row id of rows asked for in ascending order.
    fn locator(&self) -> Locator<'_, 'a> {
        Locator {
            rows: self,
            range: 0,
            first: 0,
        }
    }

    /// Calls `f(row, address, row id)` for every row in order.
    #[inline]
    fn for_each(&self, mut f: impl FnMut(usize, u64, u64) -> Result<()>) -> Result<()> {
        match self {
            Self::Scanned { addr, ids } => {
                for (i, (a, id)) in addr.values().iter().zip(ids.values().iter()).enumerate() {
                    f(i, *a, *id)?;
                }
            }
            Self::Ranges { base, ranges } => {
                let mut i = 0;
                for r in ranges.iter() {
                    for row in r.clone() {
                        f(i, base | row, base | row)?;
                        i += 1;
                    }
                }
            }
        }
        Ok(())
    }
}

/// A cursor over [`Rows`] for rows in ascending order.
struct Locator<'r, 'a> {
    rows: &'r Rows<'a>,
    /// The range the last row was in, and the batch row its first row is.
    range: usize,
    first: usize,
}

impl Locator<'_, '_> {
    /// The address and row id of batch row `i` (at least the last `i` asked for).
    #[inline]
    fn locate(&mut self, i: usize) -> Result<(u64, u64)> {
        match self.rows {
            Rows::Scanned { addr, ids } => match (addr.values().get(i), ids.values().get(i)) {
                (Some(&a), Some(&id)) => Ok((a, id)),
                _ => Err(Error::InvalidArgument(format!("a merge scan task has no row {i}"))),
            },
            Rows::Ranges { base, ranges } => {
                while let Some(r) = ranges.get(self.range) {
                    let len = (r.end - r.start) as usize;
                    if i < self.first + len {
                        let a = base | (r.start + (i - self.first) as u64);
                        return Ok((a, a));
                    }
                    self.first += len;
                    self.range += 1;
                }
                Err(Error::InvalidArgument(format!("a merge scan task has no row {i}")))
            }
        }
    }
}

/// What a probe keeps besides the pairs.
#[derive(Debug, Clone, Copy)]
struct Wanted {
    /// Updating: a target row matched twice is an error.
    update: bool,
    /// Keep unmatched target rows (an unfiltered delete).
    unmatched: bool,
    /// Keep matched target rows (a filtered delete).
    matched: bool,
    /// Row ids are not addresses.
    stable: bool,
}

/// Looks the keys of one batch of target rows up in the source's keys.
fn probe_batch(b: &RecordBatch, rows: &Rows<'_>, keys: &KeyTable, on: &[String], want: Wanted) -> Result<Probe> {
    let enc = KeyEncoder::new(key_columns(b, on)?)?;
    let mut matches = Vec::new();
    keys.probe_rows(&enc, b.num_rows(), &mut matches);
    if want.update && matches.windows(2).any(|w| w[0].0 == w[1].0) {
        return Err(Error::InvalidArgument(
            "ambiguous merge_insert: several source rows match the same target row".into(),
        ));
    }
    let mut probe = Probe::default();
    if want.unmatched {
        // Every row is needed: walk them all.
        let mut next = matches.iter().peekable();
        rows.for_each(|i, a, row_id| {
            let mut hit = false;
            while let Some(&(_, src)) = next.next_if(|m| m.0 as usize == i) {
                hit = true;
                probe.pairs.push(Pair { src, addr: a, row_id });
            }
            if !hit {
                probe.unmatched.push(a);
            }
            Ok(())
        })?;
        return Ok(probe);
    }
    // Only the matched rows are located.
    let mut at = rows.locator();
    probe.pairs.reserve(matches.len());
    for &(row, src) in &matches {
        let (addr, row_id) = at.locate(row as usize)?;
        probe.pairs.push(Pair { src, addr, row_id });
        if want.matched && probe.matched.last() != Some(&addr) {
            probe.matched.push(addr);
        }
    }
    Ok(probe)
}

fn key_columns(b: &RecordBatch, on: &[String]) -> Result<Vec<ArrayRef>> {
    on.iter()
        .map(|k| {
            b.column_by_name(k)
                .cloned()
                .ok_or_else(|| Error::SchemaMismatch(format!("no key column {k:?}")))
        })
        .collect()
}

fn column_u64<'a>(b: &'a RecordBatch, name: &str) -> Result<&'a arrow_array::PrimitiveArray<UInt64Type>> {
    b.column_by_name(name)
        .and_then(|c| c.as_primitive_opt::<UInt64Type>())
        .ok_or_else(|| Error::InvalidArgument(format!("the scan returned no {name} column")))
}

/// The state of one merge while the source streams through the second time.
struct Join<'a> {
    ds: &'a Dataset,
    params: &'a MergeInsertParams,
    condition: Option<&'a Condition>,
    schema: &'a SchemaRef,
    stable: bool,
    /// Row addresses to tombstone.
    gone: Vec<u64>,
    /// Row ids the updated rows keep (stable row ids), in the order they are written.
    moved: Vec<u64>,
    stats: MergeStats,
}

impl Join<'_> {
    /// One source batch with its matched pairs (`src` relative to the batch): the updated
    /// rows and the inserted rows to write (in the dataset's schema).
    async fn probe(
        &mut self,
        batch: &RecordBatch,
        pairs: &[Pair],
    ) -> Result<(Option<RecordBatch>, Option<RecordBatch>)> {
        let n = batch.num_rows();
        let mut has_match = vec![false; n];
        for p in pairs {
            has_match[p.src as usize] = true;
        }
        let updated = if self.params.update && !pairs.is_empty() {
            self.updated_rows(batch, pairs).await?
        } else {
            None
        };
        let inserted = if self.params.insert {
            let rows: Vec<u32> = (0..n as u32).filter(|&i| !has_match[i as usize]).collect();
            self.stats.num_inserted_rows += rows.len() as u64;
            (!rows.is_empty())
                .then(|| self.assemble(batch, &UInt32Array::from(rows), None))
                .transpose()?
        } else {
            None
        };
        Ok((updated, inserted))
    }

    /// The source rows of the matched pairs where the condition holds, completed with the
    /// target's values of the columns the source lacks; records the replaced addresses.
    async fn updated_rows(&mut self, batch: &RecordBatch, pairs: &[Pair]) -> Result<Option<RecordBatch>> {
        let keep: Vec<usize> = match self.condition {
            None => (0..pairs.len()).collect(),
            Some(cond) => {
                let src_idx = UInt32Array::from(pairs.iter().map(|p| p.src).collect::<Vec<_>>());
                let mut src_cols = Vec::new();
                for c in cond.columns(Side::Source) {
                    let col = batch
                        .column_by_name(&c)
                        .ok_or_else(|| Error::InvalidArgument(format!("the source has no column {c:?}")))?;
                    src_cols.push((c, arrow_select::take::take(col.as_ref(), &src_idx, None)?));
                }
                let tgt_names = cond.columns(Side::Target);
                let mut tgt_cols = Vec::new();
                if !tgt_names.is_empty() {
                    let addrs: Vec<u64> = pairs.iter().map(|p| p.addr).collect();
                    let rows = self.ds.take_addresses(&addrs, Some(&tgt_names)).await?;
                    for c in tgt_names {
                        let col = rows
                            .column_by_name(&c)
                            .cloned()
                            .ok_or_else(|| Error::InvalidArgument(format!("the target has no column {c:?}")))?;
                        tgt_cols.push((c, col));
                    }
                }
                let mask = cond.evaluate(pairs.len(), &src_cols, &tgt_cols)?;
                (0..pairs.len())
                    .filter(|&i| mask.is_valid(i) && mask.value(i))
                    .collect()
            }
        };
        if keep.is_empty() {
            return Ok(None);
        }
        // One output row per updated target row, as pylance writes: a source row whose
        // key several target rows share replaces each of them (each keeps its own values
        // of the columns the source lacks, and its row id).
        let mut rows: Vec<u32> = Vec::with_capacity(keep.len());
        let mut targets: Vec<u64> = Vec::with_capacity(keep.len());
        for &k in &keep {
            let p = pairs[k];
            self.gone.push(p.addr);
            rows.push(p.src);
            targets.push(p.addr);
            if self.stable {
                self.moved.push(p.row_id);
            }
        }
        self.stats.num_updated_rows += keep.len() as u64;
        let lacking: Vec<String> = self
            .schema
            .fields()
            .iter()
            .filter(|f| batch.column_by_name(f.name()).is_none())
            .map(|f| f.name().clone())
            .collect();
        let fill = match lacking.is_empty() {
            true => None,
            false => {
                let taken = self.ds.take_addresses(&targets, Some(&lacking)).await?;
                // Blob values the source lacks come from the target rows' blobs.
                Some(match self.ds.has_blob_columns() {
                    true => self.ds.materialize_blobs_at(&taken, &targets).await?,
                    false => taken,
                })
            }
        };
        self.assemble(batch, &UInt32Array::from(rows), fill.as_ref()).map(Some)
    }

    /// `batch`'s rows `rows` in the dataset's schema: its own columns, `fill`'s for the
    /// columns it lacks, else nulls.
    fn assemble(&self, batch: &RecordBatch, rows: &UInt32Array, fill: Option<&RecordBatch>) -> Result<RecordBatch> {
        let n = rows.len();
        let mut columns = Vec::with_capacity(self.schema.fields().len());
        for f in self.schema.fields() {
            let col = match (
                batch.column_by_name(f.name()),
                fill.and_then(|b| b.column_by_name(f.name())),
            ) {
                (Some(c), _) => {
                    let c = arrow_select::take::take(c.as_ref(), rows, None)?;
                    if c.data_type() == f.data_type() {
                        c
                    } else {
                        arrow_cast::cast(&c, f.data_type())?
                    }
                }
                (None, Some(c)) => c.clone(),
                (None, None) => new_null_array(f.data_type(), n),
            };
            columns.push(col);
        }
        let opts = RecordBatchOptions::new().with_row_count(Some(n));
        RecordBatch::try_new_with_options(self.schema.clone(), columns, &opts)
            .map_err(|e| Error::SchemaMismatch(format!("the merged rows do not fit the dataset's schema: {e}")))
    }

    /// `when_not_matched_by_source_delete`: tombstones the target rows no source row
    /// matched (where the filter holds).
    async fn delete_unmatched(&mut self, probe: &Probe) -> Result<()> {
        if !self.params.delete {
            return Ok(());
        }
        let before = self.gone.len();
        match &self.params.delete_filter {
            None => self.gone.extend_from_slice(&probe.unmatched),
            Some(filter) => {
                let opts = ScanOptions {
                    columns: Columns::Names(self.params.on.clone()),
                    filter: Some(filter.clone()),
                    with_row_address: true,
                    ..ScanOptions::default()
                };
                for b in self.ds.scan_all(opts).await? {
                    for &a in column_u64(&b, ROW_ADDR)?.values() {
                        if probe.matched.binary_search(&a).is_err() {
                            self.gone.push(a);
                        }
                    }
                }
            }
        }
        self.stats.num_deleted_rows = (self.gone.len() - before) as u64;
        Ok(())
    }
}
