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
use lancelet_encoding::v2_1::{self, PathNode, PAGE_LAYOUT_TYPE_URL};
use lancelet_encoding::PageBuffers;
use lancelet_proto::{pb21, pbfile, pbfile2};
use prost::Message;

use crate::error::{Error, Result};

mod partial;
use crate::footer::{FileVersion, Footer, FOOTER_LEN};
use crate::io::{read_ranges, IoStats, ReadAt};
use crate::legacy::LegacyFile;
use crate::plan::{plan_schema, plan_schema_v21, project, FieldPlan};
use crate::schema::from_lance_fields;
use crate::stats::{FileStats, PAGE_STATS_KEY};

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
    /// Opens and validates a file.
    pub async fn open(io: Arc<dyn ReadAt>) -> Result<Self> {
        let stats = Arc::new(IoStats::default());
        let (meta, legacy) = read_metadata(io.as_ref(), &stats).await?;
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
            Err(e @ (Error::Io { .. } | Error::NotFound { .. })) => return Err(e),
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
        let mut out = read_ranges(self.io.as_ref(), &[range], &self.stats).await?;
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

    /// Reads one field of a 2.1+ file: each leaf column below it is read along its path,
    /// then the leaves are merged back into the field's nested array.
    async fn read_field_v21(
        &self,
        plan: &FieldPlan,
        ranges: &[Range<u64>],
        cache: Option<&PageCache>,
    ) -> Result<ArrayRef> {
        let mut leaves: Vec<(usize, Vec<PathNode>)> = Vec::new();
        collect_leaves(plan, &mut Vec::new(), &mut leaves);
        let arrays = futures::future::try_join_all(
            leaves
                .iter()
                .map(|(column, path)| self.read_leaf_v21(*column, path, ranges, cache)),
        )
        .await?;
        let n: u64 = ranges.iter().map(|r| r.end - r.start).sum();
        merge_leaves(plan, arrays, n as usize).map_err(|m| self.corrupt(m))
    }

    /// Reads the rows in `ranges` of one 2.1+ leaf column as the single-leaf array of `path`
    /// (whole pages are decoded, then sliced).
    async fn read_leaf_v21(
        &self,
        column: usize,
        path: &[PathNode],
        ranges: &[Range<u64>],
        cache: Option<&PageCache>,
    ) -> Result<ArrayRef> {
        let col = self.column(column)?;
        let dt = v2_1::path_type(path).map_err(self.enc_err())?;
        let pieces = split_by_pages(&col.row_starts, ranges).map_err(|m| self.corrupt(m))?;
        let mut decoded: HashMap<usize, ArrayRef> = HashMap::new();
        let mut needed: Vec<usize> = Vec::new();
        // A constant page without buffers has identical rows: decode just the rows asked
        // for (its declared row count alone must not size an allocation).
        let bufferless_constant = |p: usize| {
            let page = &col.pages[p];
            page.buffers.is_empty()
                && matches!(
                    page.layout.as_ref().and_then(|l| l.layout.as_ref()),
                    Some(pb21::page_layout::Layout::ConstantLayout(_))
                )
        };
        for (p, _) in &pieces {
            if decoded.contains_key(p) || needed.contains(p) || bufferless_constant(*p) {
                continue;
            }
            match cache.and_then(|c| c.get(column, *p)) {
                Some(a) => {
                    decoded.insert(*p, a);
                }
                None => needed.push(*p),
            }
        }
        // Pages of which only some rows are asked for are read in part where their layout
        // allows it: those rows' arrays, by piece index.
        let mut partial: HashMap<usize, ArrayRef> = HashMap::new();
        let mut whole = Vec::with_capacity(needed.len());
        for p in needed {
            let page = &col.pages[p];
            let locals: Vec<Range<u64>> = pieces.iter().filter(|(q, _)| *q == p).map(|(_, r)| r.clone()).collect();
            let asked: u64 = locals.iter().map(|r| r.end - r.start).sum();
            let arrays = if asked < page.num_rows {
                self.read_page_rows(page, path, &locals).await?
            } else {
                None
            };
            match arrays {
                Some(arrays) => {
                    let at = pieces.iter().enumerate().filter(|(_, (q, _))| *q == p).map(|(i, _)| i);
                    partial.extend(at.zip(arrays));
                }
                None => whole.push(p),
            }
        }
        let needed = whole;
        let mut io_ranges = Vec::new();
        for p in &needed {
            io_ranges.extend(col.pages[*p].buffers.iter().cloned());
        }
        let fetched = read_ranges(self.io.as_ref(), &io_ranges, &self.stats).await?;
        let mut at = 0usize;
        for p in needed {
            let page = &col.pages[p];
            let bufs = fetched
                .get(at..at + page.buffers.len())
                .ok_or_else(|| self.corrupt("short read of page buffers"))?;
            at += page.buffers.len();
            let layout = page
                .layout
                .as_ref()
                .ok_or_else(|| self.corrupt(format!("page {p} of column {column} has no layout")))?;
            let array = v2_1::decode_page(layout, bufs, page.num_rows, path).map_err(self.enc_err())?;
            if let Some(c) = cache {
                c.put(column, p, array.clone());
            }
            decoded.insert(p, array);
        }
        let mut parts = Vec::with_capacity(pieces.len());
        for (i, (p, local)) in pieces.into_iter().enumerate() {
            if let Some(a) = partial.remove(&i) {
                parts.push(a);
                continue;
            }
            if bufferless_constant(p) {
                let layout = col.pages[p]
                    .layout
                    .as_ref()
                    .ok_or_else(|| self.corrupt(format!("page {p} of column {column} has no layout")))?;
                let rows = local.end - local.start;
                parts.push(v2_1::decode_page(layout, &[], rows, path).map_err(self.enc_err())?);
                continue;
            }
            let a = decoded.get(&p).ok_or_else(|| self.corrupt("page was not decoded"))?;
            parts.push(a.slice(local.start as usize, (local.end - local.start) as usize));
        }
        concat_parts(parts, &dt)
    }

    fn corrupt(&self, msg: impl Into<String>) -> Error {
        Error::corrupt(&self.meta.path, msg)
    }

    async fn read_leaf(
        &self,
        column: usize,
        dt: &DataType,
        ranges: &[Range<u64>],
        cache: Option<&PageCache>,
    ) -> Result<ArrayRef> {
        let col = self.column(column)?;
        let pieces = split_by_pages(&col.row_starts, ranges).map_err(|m| self.corrupt(m))?;
        // Plan: whole pages (sequential scans, or encodings without random access) or
        // fixed-width row slices, or two-step binary slices.
        enum Job {
            Whole {
                page: usize,
                local: Range<u64>,
            },
            Fixed {
                page: usize,
                local: Range<u64>,
                streams: Vec<Stream>,
                whole: Vec<u32>,
                first_io: usize,
            },
            Binary {
                page: usize,
                local: Range<u64>,
                read: Range<u64>,
                streams: Vec<Stream>,
                first_io: usize,
            },
        }
        let mut jobs = Vec::with_capacity(pieces.len());
        let mut io_ranges: Vec<Range<u64>> = Vec::new();
        let mut whole_needed: Vec<usize> = Vec::new();
        let mut decoded: HashMap<usize, ArrayRef> = HashMap::new();
        for (page_idx, local) in pieces {
            let page = &col.pages[page_idx];
            if let Some(c) = cache {
                if let Some(a) = c.get(column, page_idx) {
                    decoded.insert(page_idx, a);
                }
                // A scan decodes a page once and keeps it, unless it only wants a few rows
                // from the middle of a page it has not loaded (a small `read_range`).
                let small = local.start > 0 && (local.end - local.start) * 4 < page.num_rows;
                if decoded.contains_key(&page_idx) || !small {
                    if !decoded.contains_key(&page_idx) && !whole_needed.contains(&page_idx) {
                        whole_needed.push(page_idx);
                    }
                    jobs.push(Job::Whole { page: page_idx, local });
                    continue;
                }
            }
            if let Some(layout) = row_layout(&page.encoding).map_err(self.enc_err())? {
                let first_io = io_ranges.len();
                for s in &layout.streams {
                    io_ranges.push(self.stream_range(page, s, &local)?);
                }
                for w in &layout.whole {
                    let r = page
                        .buffers
                        .get(*w as usize)
                        .ok_or_else(|| self.corrupt(format!("page refers to missing buffer {w}")))?;
                    io_ranges.push(r.clone());
                }
                jobs.push(Job::Fixed {
                    page: page_idx,
                    local,
                    streams: layout.streams,
                    whole: layout.whole,
                    first_io,
                });
                continue;
            }
            if let E::Binary(b) = variant(&page.encoding).map_err(self.enc_err())? {
                let indices = child(&b.indices, "indices").map_err(self.enc_err())?;
                if let Some(streams) = fixed_streams(indices).map_err(self.enc_err())? {
                    let read = local.start.saturating_sub(1)..local.end;
                    let first_io = io_ranges.len();
                    for s in &streams {
                        io_ranges.push(self.stream_range(page, s, &read)?);
                    }
                    jobs.push(Job::Binary {
                        page: page_idx,
                        local,
                        read,
                        streams,
                        first_io,
                    });
                    continue;
                }
            }
            if !whole_needed.contains(&page_idx) {
                whole_needed.push(page_idx);
            }
            jobs.push(Job::Whole { page: page_idx, local });
        }
        // Whole pages are fetched in the same coalesced request.
        let mut whole_io = Vec::with_capacity(whole_needed.len());
        for &p in &whole_needed {
            whole_io.push(io_ranges.len());
            io_ranges.extend(col.pages[p].buffers.iter().cloned());
        }
        let fetched = read_ranges(self.io.as_ref(), &io_ranges, &self.stats).await?;
        for (k, &p) in whole_needed.iter().enumerate() {
            let page = &col.pages[p];
            let bufs = &fetched[whole_io[k]..whole_io[k] + page.buffers.len()];
            let array = decode(
                &page.encoding,
                &PageBuffers {
                    page: bufs,
                    column: &[],
                },
                page.num_rows,
                dt,
            )
            .map_err(self.enc_err())?;
            if let Some(c) = cache {
                c.put(column, p, array.clone());
            }
            decoded.insert(p, array);
        }
        // Binary slices need a second round for their bytes.
        let mut binary_parts: Vec<(usize, Vec<u64>, u64, u64)> = Vec::new();
        let mut second_io: Vec<Range<u64>> = Vec::new();
        for (j, job) in jobs.iter().enumerate() {
            if let Job::Binary {
                page,
                local,
                read,
                streams,
                first_io,
            } = job
            {
                let page = &col.pages[*page];
                let E::Binary(b) = variant(&page.encoding).map_err(self.enc_err())? else {
                    continue;
                };
                let indices_enc = child(&b.indices, "indices").map_err(self.enc_err())?;
                let raw = self.stream_u64s(page, indices_enc, streams, read, &fetched[*first_io..])?;
                let adj = b.null_adjustment;
                let unadjust = |v: u64| if adj > 0 && v >= adj { v - adj } else { v };
                let skip = (local.start - read.start) as usize;
                let base = if skip == 1 { unadjust(raw[0]) } else { 0 };
                let values: Vec<u64> = raw[skip..].to_vec();
                let end = values.iter().map(|v| unadjust(*v)).max().unwrap_or(base).max(base);
                let bytes_buf = self.bytes_buffer(page, b)?;
                let (bstart, bend) = (bytes_buf.start.checked_add(base), bytes_buf.start.checked_add(end));
                match (bstart, bend) {
                    (Some(s), Some(e)) if e <= bytes_buf.end => second_io.push(s..e),
                    _ => return Err(self.corrupt(format!("binary offsets {base}..{end} exceed the bytes buffer"))),
                }
                binary_parts.push((j, values, base, adj));
            }
        }
        let second = if second_io.is_empty() {
            Vec::new()
        } else {
            read_ranges(self.io.as_ref(), &second_io, &self.stats).await?
        };
        let mut binary_arrays: HashMap<usize, ArrayRef> = HashMap::new();
        for (k, (j, values, base, adj)) in binary_parts.into_iter().enumerate() {
            let data = build_binary(&values, base, &second[k], adj, dt).map_err(self.enc_err())?;
            binary_arrays.insert(j, arrow_array::make_array(data));
        }
        // Assemble in request order.
        let mut parts: Vec<ArrayRef> = Vec::with_capacity(jobs.len());
        for (j, job) in jobs.iter().enumerate() {
            match job {
                Job::Whole { page, local } => {
                    let a = decoded.get(page).ok_or_else(|| self.corrupt("page was not decoded"))?;
                    parts.push(a.slice(local.start as usize, (local.end - local.start) as usize));
                }
                Job::Fixed {
                    page,
                    local,
                    streams,
                    whole,
                    first_io,
                } => {
                    let page = &col.pages[*page];
                    let mut bufs =
                        self.stream_buffers(page, streams, local, &fetched[*first_io..*first_io + streams.len()]);
                    let whole_start = *first_io + streams.len();
                    for (k, w) in whole.iter().enumerate() {
                        if let Some(slot) = bufs.get_mut(*w as usize) {
                            *slot = fetched[whole_start + k].clone();
                        }
                    }
                    let a = decode(
                        &page.encoding,
                        &PageBuffers {
                            page: &bufs,
                            column: &[],
                        },
                        local.end - local.start,
                        dt,
                    )
                    .map_err(self.enc_err())?;
                    parts.push(a);
                }
                Job::Binary { .. } => {
                    parts.push(
                        binary_arrays
                            .remove(&j)
                            .ok_or_else(|| self.corrupt("binary slice missing"))?,
                    );
                }
            }
        }
        concat_parts(parts, dt)
    }

    /// Attaches this file's path to codec errors.
    fn enc_err(&self) -> impl Fn(lancelet_encoding::Error) -> Error + '_ {
        move |e| Error::from_encoding(&self.meta.path, e)
    }

    /// Decodes rows `rows` of an unsigned-integer encoding (offsets, indices) from the
    /// stream slices fetched for them (`fetched` starts at the first stream's slice).
    fn stream_u64s(
        &self,
        page: &PageInfo,
        encoding: &pb20::ArrayEncoding,
        streams: &[Stream],
        rows: &Range<u64>,
        fetched: &[Buffer],
    ) -> Result<arrow_buffer::ScalarBuffer<u64>> {
        let fetched = fetched
            .get(..streams.len())
            .ok_or_else(|| self.corrupt("missing stream data"))?;
        let bufs = self.stream_buffers(page, streams, rows, fetched);
        decode_u64s(
            encoding,
            &PageBuffers {
                page: &bufs,
                column: &[],
            },
            rows.end - rows.start,
        )
        .map_err(self.enc_err())
    }

    fn column(&self, column: usize) -> Result<&ColumnInfo> {
        self.meta
            .columns
            .get(column)
            .ok_or_else(|| self.corrupt(format!("column {column} does not exist")))
    }

    fn stream_range(&self, page: &PageInfo, s: &Stream, rows: &Range<u64>) -> Result<Range<u64>> {
        let buf = page
            .buffers
            .get(s.buffer_index as usize)
            .ok_or_else(|| self.corrupt(format!("page refers to missing buffer {}", s.buffer_index)))?;
        let r = stream_byte_range(s, rows);
        let size = buf.end - buf.start;
        if r.end > size {
            return Err(self.corrupt(format!(
                "page buffer {} holds {size} bytes, but rows {rows:?} need bytes up to {}",
                s.buffer_index, r.end
            )));
        }
        Ok(buf.start + r.start..buf.start + r.end)
    }

    /// Page buffers for a sub-range decode: the fetched stream slices at their indices.
    fn stream_buffers(
        &self,
        page: &PageInfo,
        streams: &[Stream],
        rows: &Range<u64>,
        fetched: &[Buffer],
    ) -> Vec<Buffer> {
        let mut bufs = vec![Buffer::from_vec(Vec::<u8>::new()); page.buffers.len()];
        for (s, f) in streams.iter().zip(fetched) {
            if let Some(slot) = bufs.get_mut(s.buffer_index as usize) {
                *slot = stream_rows(s, rows, f);
            }
        }
        bufs
    }

    fn bytes_buffer(&self, page: &PageInfo, b: &pb20::Binary) -> Result<Range<u64>> {
        let bytes = child(&b.bytes, "bytes").map_err(self.enc_err())?;
        match variant(bytes).map_err(self.enc_err())? {
            E::Flat(f) if f.bits_per_value == 8 && is_uncompressed(f) => {
                let r = f
                    .buffer
                    .as_ref()
                    .ok_or_else(|| self.corrupt("binary bytes without a buffer"))?;
                if r.buffer_type != pb20::buffer::BufferType::Page as i32 {
                    return Err(Error::Unsupported("binary bytes outside the page".into()));
                }
                page.buffers
                    .get(r.buffer_index as usize)
                    .cloned()
                    .ok_or_else(|| self.corrupt(format!("page refers to missing buffer {}", r.buffer_index)))
            }
            _ => Err(Error::Unsupported("compressed binary bytes".into())),
        }
    }

    async fn read_list(
        &self,
        column: usize,
        field: &FieldRef,
        item: &FieldPlan,
        ranges: &[Range<u64>],
        cache: Option<&PageCache>,
    ) -> Result<ArrayRef> {
        let col = self.column(column)?;
        let pieces = split_by_pages(&col.row_starts, ranges).map_err(|m| self.corrupt(m))?;
        let mut io_ranges = Vec::new();
        let mut jobs = Vec::with_capacity(pieces.len());
        for (page_idx, local) in pieces {
            let page = &col.pages[page_idx];
            let list = self.list_encoding(page)?;
            let offsets = child(&list.offsets, "offsets").map_err(self.enc_err())?;
            let streams = fixed_streams(offsets)
                .map_err(self.enc_err())?
                .ok_or_else(|| Error::Unsupported("list offsets that are not fixed width".into()))?;
            let read = local.start.saturating_sub(1)..local.end;
            let first_io = io_ranges.len();
            for s in &streams {
                io_ranges.push(self.stream_range(page, s, &read)?);
            }
            jobs.push((page_idx, local, read, streams, first_io));
        }
        let fetched = read_ranges(self.io.as_ref(), &io_ranges, &self.stats).await?;
        let mut positions: Vec<(u64, u64, bool)> = Vec::new();
        for (page_idx, local, read, streams, first_io) in &jobs {
            let page = &col.pages[*page_idx];
            let list = self.list_encoding(page)?;
            let offsets = child(&list.offsets, "offsets").map_err(self.enc_err())?;
            let raw = self.stream_u64s(page, offsets, streams, read, &fetched[*first_io..])?;
            let skip = (local.start - read.start) as usize;
            let prev = if skip == 1 { raw[0] } else { 0 };
            let base = col.item_starts[*page_idx];
            let pos = list_positions(&raw[skip..], prev, list.null_offset_adjustment, list.num_items)
                .map_err(self.enc_err())?;
            positions.extend(pos.into_iter().map(|(s, e, v)| (s + base, e + base, v)));
        }
        let mut item_ranges: Vec<Range<u64>> = Vec::new();
        for (s, e, _) in &positions {
            if s == e {
                continue;
            }
            match item_ranges.last_mut() {
                Some(last) if last.end == *s => last.end = *e,
                _ => item_ranges.push(*s..*e),
            }
        }
        let items = self.read_field(item, &item_ranges, cache).await?;
        let lengths = positions.iter().map(|(s, e, _)| (e - s) as usize);
        let any_null = positions.iter().any(|p| !p.2);
        let nulls = any_null.then(|| NullBuffer::from(positions.iter().map(|p| p.2).collect::<Vec<bool>>()));
        let item_field = match field.data_type() {
            DataType::List(f) | DataType::LargeList(f) => f.clone(),
            _ => return Err(self.corrupt("list plan without list type")),
        };
        let total: usize = positions.iter().map(|(s, e, _)| (e - s) as usize).sum();
        if items.len() != total {
            return Err(self.corrupt(format!("list expected {total} items, read {}", items.len())));
        }
        Ok(match field.data_type() {
            DataType::LargeList(_) => Arc::new(arrow_array::LargeListArray::try_new(
                item_field,
                OffsetBuffer::<i64>::from_lengths(lengths),
                items,
                nulls,
            )?) as ArrayRef,
            _ => {
                if total > i32::MAX as usize {
                    return Err(Error::Unsupported(
                        "more than 2^31 list items in one read; use large_list".into(),
                    ));
                }
                Arc::new(arrow_array::ListArray::try_new(
                    item_field,
                    OffsetBuffer::<i32>::from_lengths(lengths),
                    items,
                    nulls,
                )?) as ArrayRef
            }
        })
    }

    fn list_encoding<'p>(&self, page: &'p PageInfo) -> Result<&'p pb20::List> {
        match variant(&page.encoding).map_err(self.enc_err())? {
            E::List(l) => Ok(l),
            _ => Err(self.corrupt("list offsets column has a page that is not a List encoding")),
        }
    }
}

/// Lists the leaf columns below `plan` with their paths from the top-level field.
fn collect_leaves(plan: &FieldPlan, path: &mut Vec<PathNode>, out: &mut Vec<(usize, Vec<PathNode>)>) {
    match plan {
        FieldPlan::Leaf { column, field } => {
            path.push(PathNode::Leaf {
                data_type: field.data_type().clone(),
            });
            out.push((*column, path.clone()));
            path.pop();
        }
        FieldPlan::Struct { children, .. } => {
            for c in children {
                path.push(PathNode::Struct {
                    child: c.field().name().clone(),
                });
                collect_leaves(c, path, out);
                path.pop();
            }
        }
        FieldPlan::List { field, item, .. } => {
            path.push(PathNode::List {
                large: matches!(field.data_type(), DataType::LargeList(_)),
            });
            collect_leaves(item, path, out);
            path.pop();
        }
    }
}

fn leaf_count(plan: &FieldPlan) -> usize {
    let mut n = 0;
    plan.visit(&mut |p| {
        if matches!(p, FieldPlan::Leaf { .. }) {
            n += 1;
        }
    });
    n
}

/// Merges the single-leaf arrays of the leaves below `plan` (in column order) into the
/// field's array of `len` values.
fn merge_leaves(plan: &FieldPlan, arrays: Vec<ArrayRef>, len: usize) -> std::result::Result<ArrayRef, String> {
    use arrow_array::cast::AsArray;
    match plan {
        FieldPlan::Leaf { .. } => {
            let mut it = arrays.into_iter();
            match (it.next(), it.next()) {
                (Some(a), None) if a.len() == len => Ok(a),
                (Some(a), None) => Err(format!("leaf holds {} values, expected {len}", a.len())),
                _ => Err("a leaf plan needs exactly one array".into()),
            }
        }
        FieldPlan::Struct { field, children, .. } => {
            let DataType::Struct(fields) = field.data_type() else {
                return Err("struct plan without struct type".into());
            };
            if children.is_empty() || arrays.is_empty() {
                return Ok(Arc::new(StructArray::new_empty_fields(len, None)));
            }
            let nulls = arrays[0]
                .as_struct_opt()
                .ok_or("leaf array is not a struct")?
                .nulls()
                .cloned();
            let mut rest = arrays.into_iter();
            let mut columns = Vec::with_capacity(children.len());
            for c in children {
                let k = leaf_count(c);
                let mut sub = Vec::with_capacity(k);
                for a in rest.by_ref().take(k) {
                    let s = a.as_struct_opt().ok_or("leaf array is not a struct")?;
                    if s.len() != len || s.num_columns() != 1 {
                        return Err(format!("struct leaf of {} rows, expected {len}", s.len()));
                    }
                    sub.push(s.column(0).clone());
                }
                columns.push(merge_leaves(c, sub, len)?);
            }
            StructArray::try_new(fields.clone(), columns, nulls)
                .map(|s| Arc::new(s) as ArrayRef)
                .map_err(|e| e.to_string())
        }
        FieldPlan::List { field, item, .. } => {
            let item_field = match field.data_type() {
                DataType::List(f) | DataType::LargeList(f) | DataType::Map(f, _) => f.clone(),
                _ => return Err("list plan without list type".into()),
            };
            let large = matches!(field.data_type(), DataType::LargeList(_));
            let first = arrays.first().ok_or("a list without leaf columns")?;
            if first.len() != len {
                return Err(format!("list of {} rows, expected {len}", first.len()));
            }
            // Offsets (as i64, rebased to 0) and validity come from the first leaf.
            let (offsets, nulls): (Vec<i64>, _) = if large {
                let l = first.as_list_opt::<i64>().ok_or("leaf array is not a large list")?;
                (l.value_offsets().to_vec(), l.nulls().cloned())
            } else {
                let l = first.as_list_opt::<i32>().ok_or("leaf array is not a list")?;
                (
                    l.value_offsets().iter().map(|o| i64::from(*o)).collect(),
                    l.nulls().cloned(),
                )
            };
            let (start, end) = (
                offsets.first().copied().unwrap_or(0),
                offsets.last().copied().unwrap_or(0),
            );
            let mut children = Vec::with_capacity(arrays.len());
            for a in &arrays {
                let (s, e, values) = if large {
                    let l = a.as_list_opt::<i64>().ok_or("leaf array is not a large list")?;
                    let o = l.value_offsets();
                    (o[0], o[o.len() - 1], l.values().clone())
                } else {
                    let l = a.as_list_opt::<i32>().ok_or("leaf array is not a list")?;
                    let o = l.value_offsets();
                    (i64::from(o[0]), i64::from(o[o.len() - 1]), l.values().clone())
                };
                if e - s != end - start || e < s || e as usize > values.len() {
                    return Err("leaf columns of one list disagree on its items".into());
                }
                children.push(values.slice(s as usize, (e - s) as usize));
            }
            let child = merge_leaves(item, children, (end - start) as usize)?;
            let result: std::result::Result<ArrayRef, arrow_schema::ArrowError> = if large {
                let offs = OffsetBuffer::new(offsets.iter().map(|o| o - start).collect::<Vec<i64>>().into());
                arrow_array::LargeListArray::try_new(item_field, offs, child, nulls).map(|a| Arc::new(a) as ArrayRef)
            } else if let DataType::Map(_, sorted) = field.data_type() {
                let offs = OffsetBuffer::new(offsets.iter().map(|o| (o - start) as i32).collect::<Vec<i32>>().into());
                let entries = child.as_struct_opt().ok_or("map entries are not a struct")?.clone();
                arrow_array::MapArray::try_new(item_field, offs, entries, nulls, *sorted)
                    .map(|a| Arc::new(a) as ArrayRef)
            } else {
                let offs = OffsetBuffer::new(offsets.iter().map(|o| (o - start) as i32).collect::<Vec<i32>>().into());
                arrow_array::ListArray::try_new(item_field, offs, child, nulls).map(|a| Arc::new(a) as ArrayRef)
            };
            result.map_err(|e| e.to_string())
        }
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

async fn read_metadata(io: &dyn ReadAt, stats: &IoStats) -> Result<(FileMetadata, Option<LegacyFile>)> {
    let path = io.path().to_string();
    let file_size = io.size().await?;
    if file_size < FOOTER_LEN {
        return Err(Error::corrupt(
            &path,
            format!("file is {file_size} bytes, too small to be a Lance file"),
        ));
    }
    let tail_len = file_size.min(TAIL_READ);
    let tail_range = file_size - tail_len..file_size;
    let tail_bytes = read_ranges(io, std::slice::from_ref(&tail_range), stats)
        .await?
        .pop()
        .unwrap_or_default();
    if crate::legacy::is_legacy_tail(tail_bytes.as_slice()) {
        let (meta, legacy) = crate::legacy::open(io, stats, file_size, tail_range.start, tail_bytes).await?;
        return Ok((meta, Some(legacy)));
    }
    let tail = Tail {
        start: tail_range.start,
        bytes: tail_bytes,
    };
    let footer_bytes = &tail.bytes.as_slice()[(tail_len - FOOTER_LEN) as usize..];
    let footer = Footer::parse(footer_bytes, file_size, &path)?;
    let version = footer.version(&path)?;
    let meta_end = file_size - FOOTER_LEN;
    let fetch = |range: Range<u64>| {
        let tail = &tail;
        async move {
            if range.start >= tail.start && range.end <= tail.start + tail.bytes.len() as u64 {
                Ok(tail
                    .bytes
                    .slice_with_length((range.start - tail.start) as usize, (range.end - range.start) as usize))
            } else {
                read_ranges(io, std::slice::from_ref(&range), stats)
                    .await?
                    .pop()
                    .ok_or_else(|| Error::corrupt(io.path(), "short read"))
            }
        }
    };
    let table = |bytes: &Buffer, n: u32, what: &str| -> Result<Vec<Range<u64>>> {
        let mut out = Vec::with_capacity(n as usize);
        for i in 0..n as usize {
            let at = |k: usize| {
                let mut b = [0u8; 8];
                b.copy_from_slice(&bytes.as_slice()[k..k + 8]);
                u64::from_le_bytes(b)
            };
            let (pos, size) = (at(i * 16), at(i * 16 + 8));
            match pos.checked_add(size) {
                Some(end) if end <= meta_end => out.push(pos..end),
                _ => {
                    return Err(Error::corrupt(
                        &path,
                        format!("{what} {i} at {pos} with size {size} lies outside the file"),
                    ))
                }
            }
        }
        Ok(out)
    };
    let cmo_bytes = fetch(footer.cmo_table_start..footer.cmo_table_start + u64::from(footer.num_columns) * 16).await?;
    let column_ranges = table(&cmo_bytes, footer.num_columns, "column metadata")?;
    let gbo_bytes =
        fetch(footer.gbo_table_start..footer.gbo_table_start + u64::from(footer.num_global_buffers) * 16).await?;
    let global_buffers = table(&gbo_bytes, footer.num_global_buffers, "global buffer")?;
    let gb0 = global_buffers
        .first()
        .cloned()
        .ok_or_else(|| Error::corrupt(&path, "the file has no global buffers (no schema)"))?;
    let descriptor = pbfile::FileDescriptor::decode(fetch(gb0).await?.as_slice())
        .map_err(|e| Error::corrupt(&path, format!("the file descriptor does not parse: {e}")))?;
    let pschema = descriptor
        .schema
        .ok_or_else(|| Error::corrupt(&path, "the file descriptor has no schema"))?;
    let schema = from_lance_fields(&pschema.fields, &pschema.metadata, &path)?;
    // Blob v1 columns hold (position, size) descriptors.
    let schema = Arc::new(crate::blob::file_read_schema(&schema).unwrap_or(schema));
    let num_rows = descriptor.length;
    let (plans, ncols) = if version == FileVersion::V2_0 {
        plan_schema(&schema)?
    } else {
        plan_schema_v21(&schema)?
    };
    if ncols != footer.num_columns as usize {
        return Err(Error::corrupt(
            &path,
            format!(
                "the schema needs {ncols} columns but the footer lists {}",
                footer.num_columns
            ),
        ));
    }
    let mut columns = Vec::with_capacity(column_ranges.len());
    for (i, r) in column_ranges.iter().enumerate() {
        let bytes = fetch(r.clone()).await?;
        let cm = pbfile2::ColumnMetadata::decode(bytes.as_slice())
            .map_err(|e| Error::corrupt(&path, format!("metadata of column {i} does not parse: {e}")))?;
        columns.push(column_info(cm, i, meta_end, &path, version)?);
    }
    let meta = FileMetadata {
        path,
        file_size,
        footer,
        version,
        schema,
        num_rows,
        columns,
        global_buffers,
        plans,
    };
    if version == FileVersion::V2_0 {
        for p in &meta.plans {
            check_rows(&meta, p, num_rows)?;
        }
    } else {
        // 2.1+: every column is a leaf whose pages count top-level rows.
        for (i, c) in meta.columns.iter().enumerate() {
            let have = c.row_starts.last().copied().unwrap_or(0);
            if have != num_rows {
                return Err(Error::corrupt(
                    &meta.path,
                    format!("column {i} holds {have} rows but the file has {num_rows}"),
                ));
            }
        }
    }
    Ok((meta, None))
}

fn column_info(
    cm: pbfile2::ColumnMetadata,
    i: usize,
    meta_end: u64,
    path: &str,
    version: FileVersion,
) -> Result<ColumnInfo> {
    let ranges = |offsets: &[u64], sizes: &[u64], what: &str| -> Result<Vec<Range<u64>>> {
        if offsets.len() != sizes.len() {
            return Err(Error::corrupt(
                path,
                format!(
                    "{what} of column {i}: {} offsets but {} sizes",
                    offsets.len(),
                    sizes.len()
                ),
            ));
        }
        offsets
            .iter()
            .zip(sizes)
            .map(|(o, s)| match o.checked_add(*s) {
                Some(e) if e <= meta_end => Ok(*o..e),
                _ => Err(Error::corrupt(
                    path,
                    format!("{what} of column {i} at {o} (+{s}) lies outside the data section"),
                )),
            })
            .collect()
    };
    let mut pages = Vec::with_capacity(cm.pages.len());
    let mut row_starts = Vec::with_capacity(cm.pages.len() + 1);
    let mut item_starts = Vec::with_capacity(cm.pages.len() + 1);
    let (mut rows, mut items) = (0u64, 0u64);
    for (p, page) in cm.pages.into_iter().enumerate() {
        let buffers = ranges(&page.buffer_offsets, &page.buffer_sizes, "page buffer")?;
        let (encoding, layout) = if version == FileVersion::V2_0 {
            (decode_page_encoding(page.encoding.as_ref(), path, i, p)?, None)
        } else {
            (
                pb20::ArrayEncoding::default(),
                Some(decode_page_layout(page.encoding.as_ref(), path, i, p)?),
            )
        };
        row_starts.push(rows);
        item_starts.push(items);
        rows = rows
            .checked_add(page.length)
            .ok_or_else(|| Error::corrupt(path, format!("row count of column {i} overflows")))?;
        if let Some(E::List(l)) = encoding.array_encoding.as_ref() {
            items = items
                .checked_add(l.num_items)
                .ok_or_else(|| Error::corrupt(path, format!("item count of column {i} overflows")))?;
        }
        pages.push(PageInfo {
            num_rows: page.length,
            buffers,
            encoding,
            priority: page.priority,
            layout,
        });
    }
    row_starts.push(rows);
    item_starts.push(items);
    let buffers = ranges(&cm.buffer_offsets, &cm.buffer_sizes, "column buffer")?;
    Ok(ColumnInfo {
        pages,
        row_starts,
        item_starts,
        buffers,
    })
}

fn decode_page_encoding(
    enc: Option<&pbfile2::Encoding>,
    path: &str,
    col: usize,
    page: usize,
) -> Result<pb20::ArrayEncoding> {
    use pbfile2::encoding::Location;
    let where_ = || format!("page {page} of column {col}");
    match enc.and_then(|e| e.location.as_ref()) {
        Some(Location::Direct(d)) => {
            let any = prost_types::Any::decode(d.encoding.as_ref())
                .map_err(|e| Error::corrupt(path, format!("encoding of {} does not parse: {e}", where_())))?;
            if any.type_url != ARRAY_ENCODING_TYPE_URL {
                return Err(Error::Unsupported(format!(
                    "page encoding {:?} in {path}",
                    any.type_url
                )));
            }
            pb20::ArrayEncoding::decode(any.value.as_slice())
                .map_err(|e| Error::corrupt(path, format!("encoding of {} does not parse: {e}", where_())))
        }
        Some(Location::Indirect(_)) => Err(Error::Unsupported(format!(
            "indirect page encodings ({} of {path})",
            where_()
        ))),
        Some(Location::None(_)) | None => Err(Error::corrupt(path, format!("{} has no encoding", where_()))),
    }
}

fn decode_page_layout(
    enc: Option<&pbfile2::Encoding>,
    path: &str,
    col: usize,
    page: usize,
) -> Result<pb21::PageLayout> {
    use pbfile2::encoding::Location;
    let where_ = || format!("page {page} of column {col}");
    match enc.and_then(|e| e.location.as_ref()) {
        Some(Location::Direct(d)) => {
            let any = prost_types::Any::decode(d.encoding.as_ref())
                .map_err(|e| Error::corrupt(path, format!("encoding of {} does not parse: {e}", where_())))?;
            if any.type_url != PAGE_LAYOUT_TYPE_URL {
                return Err(Error::Unsupported(format!(
                    "page encoding {:?} in {path}",
                    any.type_url
                )));
            }
            v2_1::parse_layout(any.value.as_slice()).map_err(|e| Error::from_encoding(path, e))
        }
        Some(Location::Indirect(_)) => Err(Error::Unsupported(format!(
            "indirect page encodings ({} of {path})",
            where_()
        ))),
        Some(Location::None(_)) | None => Err(Error::corrupt(path, format!("{} has no encoding", where_()))),
    }
}

/// Checks that every column holds exactly as many values as its parent needs.
fn check_rows(meta: &FileMetadata, plan: &FieldPlan, expected: u64) -> Result<()> {
    let col = meta
        .columns
        .get(plan.column())
        .ok_or_else(|| Error::corrupt(&meta.path, format!("column {} is missing", plan.column())))?;
    let have = col.row_starts.last().copied().unwrap_or(0);
    let header_ok = matches!(plan, FieldPlan::Struct { .. }) && col.pages.is_empty();
    if have != expected && !header_ok {
        return Err(Error::corrupt(
            &meta.path,
            format!(
                "column {} ({:?}) holds {have} values but {expected} are expected",
                plan.column(),
                plan.field().name()
            ),
        ));
    }
    match plan {
        FieldPlan::Leaf { .. } => Ok(()),
        FieldPlan::Struct { children, .. } => children.iter().try_for_each(|c| check_rows(meta, c, expected)),
        FieldPlan::List { item, .. } => check_rows(meta, item, col.item_starts.last().copied().unwrap_or(0)),
    }
}
