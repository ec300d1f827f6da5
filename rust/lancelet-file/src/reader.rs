//! Reading Lance files (2.0, 2.1, 2.2; legacy 0.1 through [`crate::legacy`]): metadata,
//! projections, row ranges and `take`.
//!
//! Opening a file costs one read of its tail (footer, offset tables, column metadata
//! and usually the schema) and validates every position and row count in it, so later
//! reads can trust the page table. Reads are planned per column: the pages that hold
//! the requested rows are found by binary search, and for fixed-width encodings only
//! the byte ranges of the requested rows are fetched (see
//! [`lancelet_encoding::v2_0::layout`]); nearby ranges are coalesced by [`read_ranges`].
//! Sequential scans instead decode whole pages once and keep the current page of each
//! column in a [`PageCache`].
//!
//! Layout of this module: this file holds the reader, projections and the row-range and
//! `take` planning common to every version; `metadata` opens and validates a file;
//! `v2_0` reads 2.0 columns (`ArrayEncoding` pages, list offsets in their own column);
//! `v2_1` reads 2.1+ fields leaf by leaf (structural page layouts) and `partial` reads
//! some rows of a 2.1+ page without fetching all of it. Legacy (0.1) files go through
//! [`crate::legacy`].

use std::collections::HashMap;
use std::ops::Range;
use std::sync::{Arc, Mutex, OnceLock};

use arrow_array::{new_empty_array, Array, ArrayRef, RecordBatch, RecordBatchOptions, StructArray};
use arrow_buffer::{Buffer, NullBuffer, OffsetBuffer};
use arrow_schema::{DataType, FieldRef, Schema, SchemaRef};
use futures::future::BoxFuture;
use futures::FutureExt;
use lancelet_encoding::v2_0::decode::{
    build_binary, child, decode, decode_u64s, is_uncompressed, list_positions, variant,
};
use lancelet_encoding::v2_0::layout::{fixed_streams, row_layout, stream_byte_range, stream_rows, Stream};
use lancelet_encoding::v2_0::pb::array_encoding::ArrayEncoding as E;
use lancelet_encoding::v2_0::{pb as pb20, ARRAY_ENCODING_TYPE_URL};
use lancelet_encoding::v2_1::{PathNode, PAGE_LAYOUT_TYPE_URL};
use lancelet_encoding::PageBuffers;
use lancelet_proto::{pb21, pbfile, pbfile2};
use prost::Message;

use crate::error::{Error, Result};

mod metadata;
mod partial;
mod v2_0;
mod v2_1;

use crate::checksum::Checksums;
use crate::footer::{FileVersion, Footer, FOOTER_LEN};
use crate::legacy::LegacyFile;
use crate::plan::{plan_schema, plan_schema_v21, project, FieldPlan};
use crate::schema::from_lance_fields;
use crate::stats::{FileStats, PAGE_STATS_KEY};
use lancelet_io::{read_ranges, IoStats, ReadAt};
use metadata::read_metadata;

/// Reads of fewer rows than this decode their columns on one task.
const PARALLEL_MIN_ROWS: u64 = 4096;

/// How many bytes of the tail are read speculatively when opening a file.
const TAIL_READ: u64 = 64 * 1024;

/// One page of one column.
#[derive(Debug, Clone)]
pub struct PageInfo {
    /// Values (rows of this column) in the page.
    pub num_rows: u64,
    /// Absolute byte ranges of the page's buffers.
    pub buffers: Vec<Range<u64>>,
    /// How the buffers encode the values.
    pub encoding: pb20::ArrayEncoding,
    /// The page's priority (the top-level row it starts at, or 0).
    pub priority: u64,
    /// The page layout of a 2.1+ file (then `encoding` is unused and empty).
    pub layout: Option<pb21::PageLayout>,
}

/// One column: its pages and where each starts.
#[derive(Debug, Clone)]
pub struct ColumnInfo {
    /// Pages in row order.
    pub pages: Vec<PageInfo>,
    /// `row_starts[i]` is the first row of page `i`; the last entry is the column's length.
    pub row_starts: Vec<u64>,
    /// For list offset columns: the first item each page refers to (plus the total).
    pub item_starts: Vec<u64>,
    /// Byte ranges of column-level buffers.
    pub buffers: Vec<Range<u64>>,
}

/// Everything known about a file after opening it.
#[derive(Debug)]
pub struct FileMetadata {
    /// Display path.
    pub path: String,
    /// Size of the file in bytes.
    pub file_size: u64,
    /// The parsed footer.
    pub footer: Footer,
    /// The file format version.
    pub version: FileVersion,
    /// The Arrow schema (with field and schema metadata).
    pub schema: SchemaRef,
    /// Number of rows.
    pub num_rows: u64,
    /// Per-column page tables.
    pub columns: Vec<ColumnInfo>,
    /// Byte ranges of the global buffers (0 is the file descriptor).
    pub global_buffers: Vec<Range<u64>>,
    /// How fields map to columns.
    pub plans: Vec<FieldPlan>,
    /// The file's checksums (see [`crate::checksum`]), when it has them and they are verified.
    pub checksums: Option<Arc<Checksums>>,
}

impl FileMetadata {
    /// What the file holds at byte range `r`: the columns and pages whose buffers overlap
    /// it, or a global buffer.
    pub fn describe_bytes(&self, r: &Range<u64>) -> String {
        let overlaps = |b: &Range<u64>| b.start < r.end && r.start < b.end;
        let mut names = HashMap::new();
        for p in &self.plans {
            p.visit(&mut |p| {
                names.entry(p.column()).or_insert_with(|| p.field().name().clone());
            });
        }
        let mut found = Vec::new();
        for (c, col) in self.columns.iter().enumerate() {
            for (p, page) in col.pages.iter().enumerate() {
                if page.buffers.iter().any(overlaps) {
                    let name = names.get(&c).map(String::as_str).unwrap_or("?");
                    found.push(format!("column {c} {name:?}, page {p}"));
                }
            }
            if col.buffers.iter().any(overlaps) {
                found.push(format!("column {c}'s buffers"));
            }
        }
        for (g, b) in self.global_buffers.iter().enumerate() {
            if overlaps(b) {
                found.push(format!("global buffer {g}"));
            }
        }
        match found.len() {
            0 => "no page: blob data or padding".to_string(),
            1..=3 => found.join("; "),
            n => format!("{}; and {} more", found[..3].join("; "), n - 3),
        }
    }
}

/// A set of fields to read and the schema of the batches they produce.
#[derive(Debug, Clone)]
pub struct Projection {
    plans: Vec<FieldPlan>,
    schema: SchemaRef,
}

impl Projection {
    /// The output schema.
    pub fn schema(&self) -> &SchemaRef {
        &self.schema
    }
}

/// Decoded pages kept by a sequential scan, one per column.
#[derive(Debug, Default)]
pub struct PageCache {
    pages: Mutex<HashMap<usize, (usize, ArrayRef)>>,
}

impl PageCache {
    fn get(&self, column: usize, page: usize) -> Option<ArrayRef> {
        let pages = self.pages.lock().ok()?;
        pages.get(&column).filter(|(p, _)| *p == page).map(|(_, a)| a.clone())
    }
    fn put(&self, column: usize, page: usize, array: ArrayRef) {
        if let Ok(mut pages) = self.pages.lock() {
            pages.insert(column, (page, array));
        }
    }
}

/// An open Lance file.
#[derive(Debug)]
pub struct FileReader {
    io: Arc<dyn ReadAt>,
    meta: Arc<FileMetadata>,
    stats: Arc<IoStats>,
    /// The zone statistics, loaded on first use (shared by [`FileReader::with_stats`] copies).
    zone_stats: Arc<OnceLock<ZoneStatsOutcome>>,
    /// Set for legacy (0.1) files, which [`crate::legacy`] reads.
    legacy: Option<Arc<LegacyFile>>,
}

/// What loading the zone statistics gave: none recorded, the checked statistics, or why
/// they cannot be used.
type ZoneStatsOutcome = std::result::Result<Option<Arc<FileStats>>, String>;

struct Tail {
    start: u64,
    bytes: Buffer,
}

impl FileReader {
    /// Opens and validates a file, verifying its checksums (when it has them) on every read.
    pub async fn open(io: Arc<dyn ReadAt>) -> Result<Self> {
        Self::open_with(io, true).await
    }

    /// Opens and validates a file; with `verify_checksums` false the file's checksums are
    /// ignored (to read what can be read of a damaged file).
    pub async fn open_with(io: Arc<dyn ReadAt>, verify_checksums: bool) -> Result<Self> {
        let stats = Arc::new(IoStats::default());
        let (meta, legacy) = read_metadata(io.as_ref(), &stats, verify_checksums).await?;
        Ok(Self {
            io,
            meta: Arc::new(meta),
            stats,
            zone_stats: Arc::default(),
            legacy: legacy.map(Arc::new),
        })
    }

    /// The file's metadata.
    pub fn metadata(&self) -> &Arc<FileMetadata> {
        &self.meta
    }

    /// Number of rows in the file.
    pub fn num_rows(&self) -> u64 {
        self.meta.num_rows
    }

    /// I/O issued through this reader so far.
    pub fn io_stats(&self) -> &Arc<IoStats> {
        &self.stats
    }

    /// The same open file, counting its reads into `stats` instead (the metadata is shared,
    /// so this is cheap: callers use it to attribute I/O to one scan).
    pub fn with_stats(&self, stats: Arc<IoStats>) -> Self {
        Self {
            io: self.io.clone(),
            meta: self.meta.clone(),
            stats,
            zone_stats: self.zone_stats.clone(),
            legacy: self.legacy.clone(),
        }
    }

    /// The file's zone statistics (see [`crate::stats`]), read on first use; `None` when the
    /// file has none (pylance's files). Statistics of columns the file does not have, or
    /// that claim rows past a column's end, are dropped; a damaged buffer is an error.
    pub async fn page_stats(&self) -> Result<Option<Arc<FileStats>>> {
        if let Some(done) = self.zone_stats.get() {
            return done.clone().map_err(|m| self.corrupt(m));
        }
        let outcome = match self.load_page_stats().await {
            Ok(s) => Ok(s),
            // I/O failures may be transient: report them without caching.
            Err(e @ Error::Storage(_)) => return Err(e),
            Err(e) => Err(e.to_string()),
        };
        let _ = self.zone_stats.set(outcome.clone());
        outcome.map_err(|m| self.corrupt(m))
    }

    async fn load_page_stats(&self) -> Result<Option<Arc<FileStats>>> {
        let Some(index) = self.meta.schema.metadata().get(PAGE_STATS_KEY) else {
            return Ok(None);
        };
        let index: usize = index
            .parse()
            .ok()
            .filter(|i| *i > 0 && *i < self.meta.global_buffers.len())
            .ok_or_else(|| self.corrupt(format!("{PAGE_STATS_KEY} names no global buffer: {index:?}")))?;
        let bytes = self.read_global_buffer(index).await?;
        let mut stats = FileStats::decode(bytes.as_slice(), &self.meta.path)?;
        let columns = &self.meta.columns;
        stats.retain_valid(|c| columns.get(c).and_then(|c| c.row_starts.last().copied()));
        Ok(Some(Arc::new(stats)))
    }

    /// The underlying object.
    pub fn io(&self) -> &Arc<dyn ReadAt> {
        &self.io
    }

    /// Reads global buffer `index` (0 is the file descriptor).
    pub async fn read_global_buffer(&self, index: usize) -> Result<Buffer> {
        let range = self.meta.global_buffers.get(index).cloned().ok_or_else(|| {
            Error::InvalidArgument(format!(
                "global buffer {index} requested but the file has {}",
                self.meta.global_buffers.len()
            ))
        })?;
        let mut out = self.fetch(&[range]).await?;
        out.pop()
            .ok_or_else(|| Error::corrupt(&self.meta.path, "missing global buffer"))
    }

    /// A projection of `columns` (top-level names or dotted struct paths), or all columns.
    pub fn projection(&self, columns: Option<&[String]>) -> Result<Projection> {
        match columns {
            None => Ok(Projection {
                plans: self.meta.plans.clone(),
                schema: self.meta.schema.clone(),
            }),
            Some(names) => {
                let plans = project(&self.meta.plans, names)
                    .map_err(|n| Error::InvalidArgument(format!("column {n:?} is not in the file's schema")))?;
                let fields: Vec<FieldRef> = plans.iter().map(|p| p.field().clone()).collect();
                let schema = Arc::new(Schema::new_with_metadata(fields, self.meta.schema.metadata().clone()));
                Ok(Projection { plans, schema })
            }
        }
    }

    /// Reads the rows in `ranges` (in the order given) as one batch. With a `cache`,
    /// whole pages are decoded and kept for the next call (sequential scans).
    pub async fn read_ranges(
        &self,
        projection: &Projection,
        ranges: &[Range<u64>],
        cache: Option<&PageCache>,
    ) -> Result<RecordBatch> {
        let n = self.check_ranges(ranges)?;
        let columns =
            futures::future::try_join_all(projection.plans.iter().map(|p| self.read_field(p, ranges, cache))).await?;
        batch_of(projection, columns, n)
    }

    /// Like [`FileReader::read_ranges`], but each top-level column is read by a task handed
    /// to `spawner`, so columns decode in parallel on whatever executor the caller runs.
    pub async fn read_ranges_parallel(
        self: &Arc<Self>,
        projection: &Projection,
        ranges: &[Range<u64>],
        cache: Option<Arc<PageCache>>,
        spawner: &Spawner,
    ) -> Result<RecordBatch> {
        let n = self.check_ranges(ranges)?;
        // Small reads are cheaper on one task than spread over several.
        if projection.plans.len() <= 1 || n < PARALLEL_MIN_ROWS {
            return self.read_ranges(projection, ranges, cache.as_deref()).await;
        }
        let ranges: Arc<[Range<u64>]> = ranges.into();
        let tasks = projection.plans.iter().map(|plan| {
            let (this, plan, ranges, cache) = (self.clone(), plan.clone(), ranges.clone(), cache.clone());
            spawner(async move { this.read_field(&plan, &ranges, cache.as_deref()).await }.boxed())
        });
        let columns = futures::future::try_join_all(tasks).await?;
        batch_of(projection, columns, n)
    }

    fn check_ranges(&self, ranges: &[Range<u64>]) -> Result<u64> {
        for r in ranges {
            if r.start > r.end || r.end > self.meta.num_rows {
                return Err(Error::InvalidArgument(format!(
                    "cannot read rows {}..{} from a file with {} rows",
                    r.start, r.end, self.meta.num_rows
                )));
            }
        }
        Ok(ranges.iter().map(|r| r.end - r.start).sum())
    }

    /// Reads rows by index, in the order given (duplicates allowed).
    pub async fn take(&self, projection: &Projection, indices: &[u64]) -> Result<RecordBatch> {
        let (sorted, ranges) = self.take_plan(indices)?;
        let batch = self.read_ranges(projection, &ranges, None).await?;
        reorder(batch, &sorted, indices)
    }

    /// [`FileReader::take`] with columns read in parallel through `spawner`.
    pub async fn take_parallel(
        self: &Arc<Self>,
        projection: &Projection,
        indices: &[u64],
        spawner: &Spawner,
    ) -> Result<RecordBatch> {
        let (sorted, ranges) = self.take_plan(indices)?;
        let batch = self.read_ranges_parallel(projection, &ranges, None, spawner).await?;
        reorder(batch, &sorted, indices)
    }

    fn take_plan(&self, indices: &[u64]) -> Result<(Vec<u64>, Vec<Range<u64>>)> {
        if let Some(bad) = indices.iter().find(|i| **i >= self.meta.num_rows) {
            return Err(Error::InvalidArgument(format!(
                "row index {bad} is out of range for a file with {} rows",
                self.meta.num_rows
            )));
        }
        let mut sorted: Vec<u64> = indices.to_vec();
        sorted.sort_unstable();
        sorted.dedup();
        let ranges = to_ranges(&sorted);
        Ok((sorted, ranges))
    }

    fn read_field<'a>(
        &'a self,
        plan: &'a FieldPlan,
        ranges: &'a [Range<u64>],
        cache: Option<&'a PageCache>,
    ) -> BoxFuture<'a, Result<ArrayRef>> {
        async move {
            if let Some(legacy) = &self.legacy {
                return legacy.read_field(self.io.as_ref(), &self.stats, plan, ranges).await;
            }
            // Packed structs are decoded whole, then the projected fields picked (checked
            // first: widening copies the plan, and this runs for every read).
            let mut packed = false;
            plan.visit(&mut |p| packed |= matches!(p, FieldPlan::Leaf { field, .. } if crate::plan::is_packed(field)));
            if packed {
                let wide = crate::plan::widen(plan, &self.meta.plans);
                if wide.field().data_type() != plan.field().data_type() {
                    let array = self.read_field(&wide, ranges, cache).await?;
                    return crate::plan::select_fields(array, plan.field().data_type()).map_err(|m| self.corrupt(m));
                }
            }
            if self.meta.version != FileVersion::V2_0 {
                return self.read_field_v21(plan, ranges, cache).await;
            }
            match plan {
                FieldPlan::Leaf { column, field } => self.read_leaf(*column, field.data_type(), ranges, cache).await,
                FieldPlan::Struct { field, children, .. } => {
                    let DataType::Struct(fields) = field.data_type() else {
                        return Err(Error::corrupt(&self.meta.path, "struct plan without struct type"));
                    };
                    let arrays =
                        futures::future::try_join_all(children.iter().map(|c| self.read_field(c, ranges, cache)))
                            .await?;
                    let n: u64 = ranges.iter().map(|r| r.end - r.start).sum();
                    if arrays.is_empty() {
                        return Ok(Arc::new(StructArray::new_empty_fields(n as usize, None)) as ArrayRef);
                    }
                    Ok(Arc::new(StructArray::try_new(fields.clone(), arrays, None)?) as ArrayRef)
                }
                FieldPlan::List { column, field, item } => self.read_list(*column, field, item, ranges, cache).await,
            }
        }
        .boxed()
    }

    /// Reads byte `ranges` of the file (one buffer each, in order), checking them against
    /// the file's checksums.
    pub async fn fetch(&self, ranges: &[Range<u64>]) -> Result<Vec<Buffer>> {
        crate::checksum::read_checked(
            self.io.as_ref(),
            &self.stats,
            self.meta.checksums.as_deref(),
            ranges,
            &|r| self.meta.describe_bytes(&r),
        )
        .await
    }

    /// Reads every byte of the file's data section and checks it against the checksums;
    /// `Ok(false)` when the file has none (or they are not verified).
    pub async fn verify_all(&self) -> Result<bool> {
        let Some(sums) = &self.meta.checksums else {
            return Ok(false);
        };
        let step = 64 * u64::from(crate::checksum::BLOCK_BYTES);
        let mut at = 0;
        while at < sums.covered() {
            let end = (at + step).min(sums.covered());
            self.fetch(std::slice::from_ref(&(at..end))).await?;
            at = end;
        }
        Ok(true)
    }

    fn corrupt(&self, msg: impl Into<String>) -> Error {
        Error::corrupt(&self.meta.path, msg)
    }

    /// Attaches this file's path to codec errors.
    fn enc_err(&self) -> impl Fn(lancelet_encoding::Error) -> Error + '_ {
        move |e| Error::from_encoding(&self.meta.path, e)
    }

    fn column(&self, column: usize) -> Result<&ColumnInfo> {
        self.meta
            .columns
            .get(column)
            .ok_or_else(|| self.corrupt(format!("column {column} does not exist")))
    }
}

/// Runs a column read as a task on the caller's executor (e.g. `tokio::spawn`) and
/// resolves to its result.
pub type Spawner =
    Arc<dyn Fn(BoxFuture<'static, Result<ArrayRef>>) -> BoxFuture<'static, Result<ArrayRef>> + Send + Sync>;

fn batch_of(projection: &Projection, columns: Vec<ArrayRef>, n: u64) -> Result<RecordBatch> {
    let opts = RecordBatchOptions::new().with_row_count(Some(n as usize));
    Ok(RecordBatch::try_new_with_options(
        projection.schema.clone(),
        columns,
        &opts,
    )?)
}

/// `parts` as one array (of type `dt` when there are none).
pub(crate) fn concat_parts(parts: Vec<ArrayRef>, dt: &DataType) -> Result<ArrayRef> {
    match parts.len() {
        0 => Ok(new_empty_array(dt)),
        1 => parts
            .into_iter()
            .next()
            .ok_or_else(|| Error::InvalidArgument("no parts".into())),
        _ => {
            let refs: Vec<&dyn Array> = parts.iter().map(|a| a.as_ref()).collect();
            Ok(arrow_select::concat::concat(&refs)?)
        }
    }
}

/// Puts the rows of `batch` (read for `sorted`) back in the order of `indices`.
fn reorder(batch: RecordBatch, sorted: &[u64], indices: &[u64]) -> Result<RecordBatch> {
    if sorted == indices {
        return Ok(batch);
    }
    let positions: Vec<u32> = indices
        .iter()
        .map(|i| sorted.binary_search(i).map(|p| p as u32).unwrap_or(0))
        .collect();
    let positions = arrow_array::UInt32Array::from(positions);
    Ok(arrow_select::take::take_record_batch(&batch, &positions)?)
}

/// Collapses sorted, distinct indices into runs.
pub fn to_ranges(sorted: &[u64]) -> Vec<Range<u64>> {
    let mut out: Vec<Range<u64>> = Vec::new();
    for &i in sorted {
        match out.last_mut() {
            Some(r) if r.end == i => r.end = i + 1,
            _ => out.push(i..i + 1),
        }
    }
    out
}

/// Splits row ranges into `(page, range within page)` pieces.
fn split_by_pages(row_starts: &[u64], ranges: &[Range<u64>]) -> std::result::Result<Vec<(usize, Range<u64>)>, String> {
    let total = row_starts.last().copied().unwrap_or(0);
    let mut out = Vec::new();
    for r in ranges {
        if r.end > total {
            return Err(format!("rows {r:?} requested from a column of {total} values"));
        }
        let mut start = r.start;
        while start < r.end {
            // The page containing `start`: the last page whose first row is <= start.
            let p = row_starts.partition_point(|s| *s <= start).saturating_sub(1);
            let page_start = row_starts[p];
            let page_end = row_starts.get(p + 1).copied().unwrap_or(total);
            if page_end <= start {
                return Err(format!("no page holds row {start}"));
            }
            let end = r.end.min(page_end);
            out.push((p, start - page_start..end - page_start));
            start = end;
        }
    }
    Ok(out)
}
