//! Scans: projection, SQL filter, limit/offset, row ids and addresses.
//!
//! A scan is planned into tasks, each a list of physical row ranges of one fragment
//! (deleted rows already cut out). Tasks are independent, so the caller runs several at
//! once and consumes their outputs in order through a [`Limiter`], which applies
//! `offset`/`limit` and cuts batches to `batch_size`.
//!
//! With a filter, a task first reads only the columns the filter needs, evaluates it, and
//! then reads the projected columns for the matching rows only: when few rows match, it
//! reads just their byte ranges instead of whole pages.
//!
//! This module holds the scan's types; the work is in submodules:
//!
//! * `plan` — [`Scan::plan`]: binds the projection and the filter to the schema;
//! * `tasks` — cuts the chosen fragments into [`ScanTask`]s of a target size, after
//!   statistics and scalar indexes narrowed them;
//! * `run` — runs one task: the filter stage, the projection stage, the output columns;
//! * `limit` — the [`Limiter`] applying offset and limit to task outputs in order;
//! * `fragment` — reading columns of one fragment: which data file holds a column
//!   (`column_source`, by field id), and `read_rows` (also used by take, blob and
//!   pruning code).

mod blobs;
pub mod count;
pub(crate) mod index_query;
pub mod lineage;
pub mod order;
pub mod partitions;
pub(crate) mod prune;
pub mod readahead;
pub mod stream;
pub mod take;

use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use arrow_schema::SchemaRef;
use lancelet_io::IoStats;
use lancelet_table::pb;

use crate::Dataset;

mod fragment;
mod limit;
mod plan;
mod run;
mod tasks;

pub(crate) use fragment::{file_layouts, FileLayout};
pub use limit::Limiter;
pub(crate) use plan::{projected_schema, refuse_blank_filter};
use plan::{Filter, Output};

/// Name of the row id column.
pub(crate) const ROW_ID: &str = "_rowid";
/// Name of the row address column: `(fragment_id << 32) | row offset in the fragment`.
pub(crate) const ROW_ADDR: &str = "_rowaddr";
/// How many tasks run at once where the work is CPU-bound: the cores (at least two).
pub(crate) fn tasks_at_once() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(2)
        .max(2)
}

/// Default output batch size.
pub const DEFAULT_BATCH_SIZE: usize = 8192;

/// What a scan returns.
#[derive(Debug, Clone)]
pub enum Columns {
    /// Every column.
    All,
    /// Columns by name (dotted paths select struct children, as pylance does).
    Names(Vec<String>),
    /// Output columns computed by SQL expressions: `(output name, expression)`.
    Exprs(Vec<(String, String)>),
}

/// Options of a scan.
#[derive(Debug, Clone)]
pub struct ScanOptions {
    /// The projection.
    pub columns: Columns,
    /// A SQL predicate; only rows where it is true are returned.
    pub filter: Option<String>,
    /// Return at most this many rows.
    pub limit: Option<u64>,
    /// Skip this many (matching) rows first.
    pub offset: u64,
    /// Maximum rows per output batch.
    pub batch_size: usize,
    /// Scan only these fragments (by id), in this order.
    pub fragments: Option<Vec<u64>>,
    /// Scan only these physical row ranges, `(fragment id, rows)`, in this order (deleted
    /// rows inside them are still skipped). Overrides `fragments`. A distributed reader
    /// splits a pinned version into such pieces, one set per worker.
    pub row_ranges: Option<Vec<(u64, Range<u64>)>>,
    /// Add `_rowid`.
    pub with_row_id: bool,
    /// Add `_rowaddr`.
    pub with_row_address: bool,
    /// Return deleted rows too (every physical row), for computing new columns that must
    /// line up with the fragment's data files row for row.
    pub include_deleted: bool,
    /// Skip fragments and row ranges whose zone statistics show that no row can match the
    /// filter (pylance's `use_stats`). Off only to compare against an unpruned scan.
    pub use_stats: bool,
    /// Answer what the filter allows with scalar indexes (pylance's `use_scalar_index`).
    pub use_scalar_index: bool,
    /// Sort the rows by these keys (see [`order`]); `limit` and `offset` then apply to the
    /// sorted rows.
    pub order_by: Vec<order::ColumnOrdering>,
    /// Hand out batches of exactly `batch_size` rows (the last one excepted), joining rows
    /// of several fragments; otherwise a batch never spans two tasks and may be shorter.
    pub strict_batch_size: bool,
    /// At most this many rows per task (each task's rows are one batch in memory): for
    /// consumers that hold several tasks at once, such as an index build's workers.
    pub max_task_rows: Option<u64>,
    /// Return blob columns as their bytes (pylance's `blob_handling="all_binary"`): every
    /// top-level blob column (v1 or v2) comes back as a `LargeBinary` column of its
    /// payloads, null where the blob is null, instead of descriptors. The bytes are read
    /// (and checked) after filter, order, offset and limit, for the rows returned only.
    /// Blobs inside structs stay descriptors. See [`Scan::finish_batch`].
    pub blob_binary: bool,
}

impl Default for ScanOptions {
    fn default() -> Self {
        Self {
            columns: Columns::All,
            filter: None,
            limit: None,
            offset: 0,
            batch_size: DEFAULT_BATCH_SIZE,
            fragments: None,
            row_ranges: None,
            with_row_id: false,
            with_row_address: false,
            include_deleted: false,
            use_stats: true,
            use_scalar_index: true,
            order_by: Vec::new(),
            strict_batch_size: false,
            max_task_rows: None,
            blob_binary: false,
        }
    }
}

/// One unit of work: physical row ranges of one fragment.
#[derive(Debug, Clone)]
pub struct ScanTask {
    /// The fragment.
    pub fragment: Arc<pb::DataFragment>,
    /// Row ranges to read, ascending.
    pub ranges: Vec<Range<u64>>,
    /// Every row of the ranges matches the filter (an exact index answered it whole), so
    /// the filter is not evaluated again.
    pub prefiltered: bool,
}

impl ScanTask {
    /// Rows the task covers.
    pub(crate) fn rows(&self) -> u64 {
        self.ranges.iter().map(|r| r.end - r.start).sum()
    }
}

/// What a scan did so far: rows it looked at and returned, bytes it read.
#[derive(Debug, Default)]
pub struct ScanStats {
    /// Reads of data files made by the scan.
    pub io: Arc<IoStats>,
    /// Tasks run (or counted).
    pub tasks: AtomicU64,
    /// Live rows the tasks covered (read by the filter, or read whole without one).
    pub rows_scanned: AtomicU64,
    /// Rows the tasks produced (matching the filter; before `offset`/`limit`).
    pub rows_matched: AtomicU64,
}

/// A copy of [`ScanStats`] at one moment.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ScanStatsSnapshot {
    /// Bytes fetched from storage.
    pub bytes_read: u64,
    /// Read requests sent to storage.
    pub iops: u64,
    /// Tasks run.
    pub tasks: u64,
    /// Live rows covered.
    pub rows_scanned: u64,
    /// Rows produced.
    pub rows_matched: u64,
}

impl ScanStats {
    /// The counters now.
    pub fn snapshot(&self) -> ScanStatsSnapshot {
        let (bytes_read, iops) = self.io.snapshot();
        ScanStatsSnapshot {
            bytes_read,
            iops,
            tasks: self.tasks.load(Ordering::Relaxed),
            rows_scanned: self.rows_scanned.load(Ordering::Relaxed),
            rows_matched: self.rows_matched.load(Ordering::Relaxed),
        }
    }

    pub(crate) fn task_done(&self, scanned: u64, matched: u64) {
        self.tasks.fetch_add(1, Ordering::Relaxed);
        self.rows_scanned.fetch_add(scanned, Ordering::Relaxed);
        self.rows_matched.fetch_add(matched, Ordering::Relaxed);
    }
}

/// A planned scan.
#[derive(Debug)]
pub struct Scan {
    ds: Dataset,
    stats: Arc<ScanStats>,
    tasks: Vec<ScanTask>,
    /// Names to read for the output (dotted paths allowed).
    read: Vec<String>,
    read_schema: SchemaRef,
    filter: Option<Filter>,
    output: Output,
    with_row_id: bool,
    with_row_addr: bool,
    schema: SchemaRef,
    limit: Option<u64>,
    offset: u64,
    batch_size: usize,
    /// The scalar indexes that narrowed the scan, as `[query]@name(Type)`.
    indexes_used: Vec<String>,
    /// An ordered scan's sort (its tasks then run as one, see [`order`]).
    order: Option<order::Order>,
    /// The schema handed out when it differs from the tasks' (an ordered scan's hidden keys).
    out_schema: Option<SchemaRef>,
    strict_batch_size: bool,
    /// A `blob_binary` scan's bytes in place of its descriptors (see [`Scan::finish_batch`]).
    blobs: Option<blobs::BlobBytes>,
}

impl Scan {
    /// The scalar indexes that narrowed this scan, as `[query]@name(Type)`.
    pub fn indexes_used(&self) -> &[String] {
        &self.indexes_used
    }

    /// A readable plan: what is read, the filter, the indexes used and the tasks.
    pub fn explain(&self) -> String {
        let mut out = format!(
            "LanceletScan: version={}, columns=[{}], tasks={}, rows={}\n",
            self.ds.version(),
            self.read.join(", "),
            self.tasks.len(),
            self.tasks.iter().map(ScanTask::rows).sum::<u64>(),
        );
        if let Some(f) = &self.filter {
            out.push_str(&format!("  Filter: {}\n", f.sql));
        }
        for used in &self.indexes_used {
            out.push_str(&format!("  ScalarIndexQuery: query={used}\n"));
        }
        if let Some(o) = &self.order {
            out.push_str(&o.explain());
        }
        if let Some(l) = self.limit {
            out.push_str(&format!("  Limit: {l}, offset {}\n", self.offset));
        }
        out
    }

    /// The output schema (of the batches [`Scan::finish_batch`] hands out).
    pub fn schema(&self) -> &SchemaRef {
        match &self.blobs {
            Some(b) => b.schema(),
            None => self.limited_schema(),
        }
    }

    /// The schema of the batches the tasks produce and the [`Limiter`] hands out.
    pub(crate) fn limited_schema(&self) -> &SchemaRef {
        self.out_schema.as_ref().unwrap_or(&self.schema)
    }

    /// Number of tasks to run ([`Scan::run_task`]); an ordered scan runs as one.
    pub fn num_tasks(&self) -> usize {
        if self.order.is_some() {
            1
        } else {
            self.tasks.len()
        }
    }

    /// The planned tasks (an ordered scan runs them all in its one task).
    pub fn tasks(&self) -> &[ScanTask] {
        &self.tasks
    }

    /// The dataset version scanned.
    pub fn dataset(&self) -> &Dataset {
        &self.ds
    }

    /// What the scan did so far (shared: it keeps counting while tasks run).
    pub fn stats(&self) -> &Arc<ScanStats> {
        &self.stats
    }

    /// A fresh limiter for this scan's outputs.
    pub(crate) fn limiter(&self) -> Limiter {
        Limiter {
            skip: self.offset,
            remaining: if self.filter.is_some() || self.order.is_some() {
                self.limit
            } else {
                None
            },
            batch_size: self.batch_size,
            strict: self.strict_batch_size,
            held: Vec::new(),
        }
    }
}
