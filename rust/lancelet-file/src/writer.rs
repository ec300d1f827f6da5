//! Streaming writer of Lance files (2.0, 2.1 and 2.2).
//!
//! Batches are shredded into columns (see [`crate::plan`]) and buffered per column;
//! a column's buffered data is flushed once it passes `cache_bytes_per_column`, so memory
//! stays bounded by about that much per column whatever the input size. How the bytes
//! are counted and how a flush is cut into pages follows [`PageRules`]: lancelet's own
//! rules (the default: pages sized for reading them back) or pylance 14's (the same
//! pages as pylance writes for the same batches). Page buffers are written 64-byte
//! aligned; `finish` then writes the file descriptor (global buffer 0), the column
//! metadata, the two offset tables and the footer.
//!
//! A batch is checked completely before any of it is buffered; if buffering still fails
//! (an I/O error), the writer refuses further use rather than write an inconsistent file.

use std::collections::HashMap;
use std::io::Write;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_buffer::Buffer;
use arrow_schema::{DataType, SchemaRef};
use lancelet_encoding::v2_0::encode::{encode_leaf, encode_list_offsets, struct_header, EncodeOptions};
use lancelet_encoding::v2_0::{pb as pb20, ARRAY_ENCODING_TYPE_URL, COLUMN_ENCODING_TYPE_URL};
use lancelet_encoding::v2_1::{has_nested, PageOptions, PAGE_LAYOUT_TYPE_URL};
use lancelet_encoding::EncodedPage;
use lancelet_proto::{pbfile, pbfile2};
use prost::Message;

use crate::checksum::{BlockSums, MetadataSums};
use crate::error::{Error, Result};
use crate::footer::{FileVersion, Footer};
use crate::plan::{plan_schema, plan_schema_v21, FieldPlan};
use crate::schema::to_lance_fields;
use crate::stats::{supports as stats_supports, zone_stats, FileStats, ZoneStats, PAGE_STATS_KEY};

mod check;
mod parallel;
mod pylance;
mod v2_0;
mod v2_1;

use parallel::{encode_job, run_ordered, PageJob};

/// Byte used to pad buffers to 64-byte alignment; pylance uses `'H'`, and so do we so that
/// identical input gives byte-identical files.
const PAD_BYTE: u8 = 0x48;

/// Default bytes of Arrow data a column buffers before it is flushed (as pylance).
pub const DEFAULT_CACHE_BYTES_PER_COLUMN: u64 = 8 * 1024 * 1024;
/// Default largest page (as pylance).
pub const DEFAULT_MAX_PAGE_BYTES: u64 = 32 * 1024 * 1024;
/// Largest page at 2.1+ (Arrow bytes before encoding) of a column with lists. Such pages
/// are read whole, so a scan task that needs part of a page pays for all of it: pages
/// about the size of a scan task's share of a column keep that overhead small.
pub const V21_PAGE_BYTES: u64 = 2 * 1024 * 1024;
/// Largest page at 2.1+ of a column without lists: its rows are read in part (the
/// mini-block chunks or full-zip rows that hold them), so pages may be large, and each
/// page's fixed costs (chunk metadata, FSST table, dictionary) are paid less often.
pub const V21_FLAT_PAGE_BYTES: u64 = 8 * 1024 * 1024;

/// Flushes of fewer bytes (Arrow data of all their fields) are encoded on the writer's
/// own thread.
const PARALLEL_MIN_BYTES: u64 = 1 << 20;

/// Whether `dt` has a map at any depth.
fn has_maps(dt: &DataType) -> bool {
    has_nested(dt, &|d| matches!(d, DataType::Map(..)))
}

/// Whether `dt` has a list at any depth (its 2.1+ pages then carry repetition levels).
fn has_lists(dt: &DataType) -> bool {
    has_nested(dt, &|d| {
        matches!(d, DataType::List(_) | DataType::LargeList(_) | DataType::Map(..))
    })
}

/// How a [`FileWriter`] counts the bytes it buffers and cuts its flushes into pages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PageRules {
    /// lancelet's rules: a column counts the bytes of the rows it buffers (a slice only
    /// its own part). At 2.0 a flush of one array is cut into pages below
    /// `max_page_bytes`; at 2.1+ a top-level field's flush is cut into pages of at most
    /// 8 MiB (2 MiB with lists) or `max_page_bytes` if smaller, so that readers fetch
    /// little more than they need.
    #[default]
    Lancelet,
    /// pylance 14's rules, so that the same batches give the same pages as pylance
    /// writes: each (leaf) column flushes on its own when the Arrow memory size of the
    /// arrays it was given (a slice counts its parent's buffers) passes the cache size;
    /// `max_page_bytes` cuts only 2.0 flushes of a single array; 2.1+ pages are cut only
    /// to bound the levels of sparse lists. See the `pylance` module for the details.
    Pylance,
}

/// Options of a [`FileWriter`].
#[derive(Debug, Clone)]
pub struct WriterOptions {
    /// Flush a column once it has buffered more than this many bytes.
    pub cache_bytes_per_column: u64,
    /// A flushed array larger than this is cut into several pages (see [`PageRules`]).
    pub max_page_bytes: u64,
    /// How bytes are counted and flushes cut into pages.
    pub page_rules: PageRules,
    /// File format version to write (2.0, 2.1 or 2.2).
    pub version: FileVersion,
    /// Encoding choices.
    pub encode: EncodeOptions,
    /// Record zone statistics (null count, min, max) of every orderable column in an extra
    /// global buffer (see [`crate::stats`]). Off by default so that plain files stay
    /// byte-identical to pylance's; datasets turn it on.
    pub page_stats: bool,
    /// Rows per statistics zone (zones never span pages).
    pub stats_zone_rows: u64,
    /// Threads that encode pages (2.1+); 0 = one per core. The file is the same whatever
    /// the number.
    pub threads: usize,
    /// Record CRC32C checksums of every byte in an extra global buffer (see
    /// [`crate::checksum`]). On by default; pylance reads such files unchanged. Off only
    /// where a file must be byte-identical to pylance's.
    pub checksums: bool,
}

impl Default for WriterOptions {
    fn default() -> Self {
        Self {
            cache_bytes_per_column: DEFAULT_CACHE_BYTES_PER_COLUMN,
            max_page_bytes: DEFAULT_MAX_PAGE_BYTES,
            page_rules: PageRules::Lancelet,
            version: FileVersion::DEFAULT,
            encode: EncodeOptions::default(),
            page_stats: false,
            stats_zone_rows: crate::stats::DEFAULT_ZONE_ROWS,
            threads: 0,
            checksums: true,
        }
    }
}

#[derive(Default)]
struct ListAcc {
    ends: Vec<u64>,
    valid: Vec<bool>,
    items: u64,
}

#[derive(Default)]
struct ColumnState {
    pages: Vec<pbfile2::column_metadata::Page>,
    pending: Vec<ArrayRef>,
    pending_bytes: u64,
    list: ListAcc,
    /// 2.0 lists under [`PageRules::Pylance`]: bytes counted for the offsets buffered.
    list_bytes: u64,
    struct_rows: u64,
    /// Statistics zones of the pages written so far, and the rows they cover.
    zones: Vec<ZoneStats>,
    zone_rows: u64,
}

/// A top-level field of a 2.1+ file: its buffered arrays and its leaf columns.
struct FieldState {
    pending: Vec<ArrayRef>,
    pending_bytes: u64,
    /// Column of the field's first leaf.
    first_column: usize,
    /// Page options of each leaf (from the leaf's field metadata).
    leaves: Vec<PageOptions>,
    /// Per leaf: whether it holds a blob v1 column's descriptors.
    blob_leaves: Vec<bool>,
    /// [`PageRules::Pylance`]: each leaf's own buffering (the field's rows are kept in
    /// `pending` until every leaf has written them).
    leaf_state: Vec<LeafState>,
    /// Row number (in the field) of the first row of `pending`.
    pending_start: u64,
    /// Rows given to the field so far.
    rows: u64,
}

/// One leaf column's buffering under [`PageRules::Pylance`].
#[derive(Default, Clone)]
struct LeafState {
    /// Bytes counted since the leaf's last page.
    bytes: u64,
    /// Row number (in the field) of the leaf's first row not written yet.
    start: u64,
    /// Whether the leaf has been given rows since its last page.
    dirty: bool,
}

/// The leaf fields of `field` in column order (2.1+: structs and lists have no columns).
fn leaf_fields(field: &arrow_schema::FieldRef, out: &mut Vec<arrow_schema::FieldRef>) {
    match field.data_type() {
        DataType::Struct(children) if !crate::plan::is_packed(field) => {
            children.iter().for_each(|c| leaf_fields(c, out));
        }
        DataType::List(item) | DataType::LargeList(item) | DataType::Map(item, _) => leaf_fields(item, out),
        _ => out.push(field.clone()),
    }
}

/// Writes one Lance file to any `Write` sink.
pub struct FileWriter<W: Write> {
    out: W,
    pos: u64,
    path: String,
    schema: SchemaRef,
    plans: Vec<FieldPlan>,
    columns: Vec<ColumnState>,
    rows: u64,
    opts: WriterOptions,
    schema_metadata: HashMap<String, String>,
    /// Set when buffering failed half-way: the file can no longer be completed.
    poisoned: Option<String>,
    /// Global buffers added by the caller (global buffer 0, the schema, comes at the end).
    extra_global_buffers: Vec<(u64, u64)>,
    /// Field ids recorded in the file's schema, in pre-order (default: 0, 1, 2...).
    field_ids: Option<Vec<i32>>,
    /// Per column: whether it gets statistics (an orderable leaf outside any list).
    stats_columns: Vec<bool>,
    /// 2.1+: one entry per top-level field (empty at 2.0).
    fields: Vec<FieldState>,
    /// The schema the columns are planned and encoded with: `schema` with blob v1 fields
    /// (top-level or in structs) as their `(position, size)` descriptors (see
    /// [`crate::blob`]).
    plan_schema: SchemaRef,
    /// Whether the schema has blob v1 columns.
    has_blob_v1: bool,
    /// Checksums of the bytes written so far (when the options ask for them).
    block_sums: Option<BlockSums>,
}

impl<W: Write> FileWriter<W> {
    /// Starts a file with `schema`; `path` is only used in error messages.
    pub fn try_new(out: W, path: &str, schema: SchemaRef, opts: WriterOptions) -> Result<Self> {
        if opts.version == FileVersion::Legacy {
            return Err(Error::Unsupported(
                "writing file format 0.1 (legacy): lancelet reads it but writes 2.0, 2.1 and 2.2".into(),
            ));
        }
        let v21 = opts.version != FileVersion::V2_0;
        if opts.max_page_bytes == 0 || opts.cache_bytes_per_column == 0 || opts.stats_zone_rows == 0 {
            return Err(Error::InvalidArgument("page and cache sizes must be positive".into()));
        }
        // JSON text columns are stored as JSONB (as pylance's file writer stores them).
        let schema = crate::json::storage_schema(&schema).unwrap_or(schema);
        // Validates every type up front so a bad schema fails before anything is written.
        to_lance_fields(&schema)?;
        if opts.version != FileVersion::V2_2 {
            if let Some(f) = schema.fields().iter().find(|f| has_maps(f.data_type())) {
                return Err(Error::Unsupported(format!(
                    "field {:?} holds a map, which Lance stores from file format 2.2 on",
                    f.name()
                )));
            }
        }
        let planned = crate::blob::descriptor_schema(&schema);
        let has_blob_v1 = !Arc::ptr_eq(&planned, &schema);
        let (plans, ncols) = if v21 {
            plan_schema_v21(&planned)?
        } else {
            plan_schema(&planned)?
        };
        let mut schema_metadata: HashMap<String, String> = schema.metadata().into();
        // A key copied from another file's schema must not point at a buffer of this one.
        schema_metadata.remove(PAGE_STATS_KEY);
        let mut stats_columns = vec![false; ncols];
        if opts.page_stats {
            plans
                .iter()
                .for_each(|p| mark_stats_columns(p, &mut stats_columns, v21));
        }
        let block_sums = opts.checksums.then(BlockSums::new);
        let mut fields = Vec::new();
        if v21 {
            let v2_2 = opts.version == FileVersion::V2_2;
            let mut first_column = 0;
            for f in planned.fields() {
                let mut leaves = Vec::new();
                leaf_fields(f, &mut leaves);
                fields.push(FieldState {
                    pending: Vec::new(),
                    pending_bytes: 0,
                    first_column,
                    leaves: leaves
                        .iter()
                        .map(|l| PageOptions::for_field(v2_2, l.metadata()))
                        .collect(),
                    leaf_state: vec![LeafState::default(); leaves.len()],
                    pending_start: 0,
                    rows: 0,
                    blob_leaves: leaves.iter().map(|l| crate::blob::is_v1_descriptor_field(l)).collect(),
                });
                first_column += leaves.len();
            }
        }
        Ok(Self {
            out,
            pos: 0,
            path: path.to_string(),
            schema,
            plans,
            columns: (0..ncols).map(|_| ColumnState::default()).collect(),
            rows: 0,
            opts,
            schema_metadata,
            poisoned: None,
            extra_global_buffers: Vec::new(),
            field_ids: None,
            stats_columns,
            fields,
            plan_schema: planned,
            has_blob_v1,
            block_sums,
        })
    }

    /// Writes the payload of a blob stored in this file (64-byte aligned, before the
    /// pages that follow) and returns its absolute position.
    pub fn write_blob_payload(&mut self, bytes: &[u8]) -> Result<u64> {
        self.check_usable()?;
        let (pos, _) = self.write_aligned(&Buffer::from_slice_ref(bytes))?;
        Ok(pos)
    }

    /// Replaces the blob v1 columns (top-level or in structs) of a checked batch with
    /// their descriptors, writing their payloads column after column, rows in order.
    fn blob_columns(&mut self, cols: Vec<ArrayRef>) -> Result<Vec<ArrayRef>> {
        if !self.has_blob_v1 {
            return Ok(cols);
        }
        let (fields, planned) = (self.schema.fields().clone(), self.plan_schema.fields().clone());
        let mut out = Vec::with_capacity(cols.len());
        for ((c, f), p) in cols.into_iter().zip(fields.iter()).zip(planned.iter()) {
            out.push(self.blob_array(f, p, c, None)?);
        }
        Ok(out)
    }

    /// `array` of `field` as `planned` (its descriptor form); `parents` are the nulls of
    /// the enclosing structs.
    fn blob_array(
        &mut self,
        field: &arrow_schema::Field,
        planned: &arrow_schema::Field,
        array: ArrayRef,
        parents: Option<&arrow_buffer::NullBuffer>,
    ) -> Result<ArrayRef> {
        if crate::blob::is_blob_v1(field) {
            return crate::blob::v1_descriptors(&array, parents, |b| self.write_blob_payload(b));
        }
        match (field.data_type(), planned.data_type()) {
            (DataType::Struct(children), DataType::Struct(planned_children))
                if field.data_type() != planned.data_type() =>
            {
                let s = array
                    .as_struct_opt()
                    .ok_or_else(|| Error::InvalidArgument(format!("{:?} must be a struct", field.name())))?;
                let all = arrow_buffer::NullBuffer::union(parents, s.nulls());
                let mut cols = Vec::with_capacity(children.len());
                for ((c, p), a) in children.iter().zip(planned_children.iter()).zip(s.columns()) {
                    cols.push(self.blob_array(c, p, a.clone(), all.as_ref())?);
                }
                Ok(Arc::new(arrow_array::StructArray::try_new(
                    planned_children.clone(),
                    cols,
                    s.nulls().cloned(),
                )?))
            }
            _ => Ok(array),
        }
    }

    /// Records these field ids (one per Lance field, in pre-order) in the file's schema
    /// instead of 0, 1, 2...: a dataset's data files carry the dataset's field ids.
    pub fn set_field_ids(&mut self, ids: Vec<i32>) -> Result<()> {
        let n = to_lance_fields(&self.schema)?.len();
        if ids.len() != n {
            return Err(Error::InvalidArgument(format!(
                "{} field ids given for a schema of {n} fields",
                ids.len()
            )));
        }
        self.field_ids = Some(ids);
        Ok(())
    }

    /// Bytes written to the sink so far (buffered pages not included).
    pub fn bytes_written(&self) -> u64 {
        self.pos
    }

    /// The schema being written.
    pub fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    /// Rows written so far.
    pub fn num_rows(&self) -> u64 {
        self.rows
    }

    /// Adds a key to the schema metadata stored in the file.
    pub fn add_schema_metadata(&mut self, key: String, value: String) {
        self.schema_metadata.insert(key, value);
    }

    /// Writes `data` as a global buffer now and returns its index (1, 2, ...; 0 is the
    /// file descriptor). Read it back with `FileReader::read_global_buffer`.
    pub fn add_global_buffer(&mut self, data: &[u8]) -> Result<u32> {
        self.check_usable()?;
        let pos_size = self.write_aligned(&Buffer::from_slice_ref(data))?;
        self.extra_global_buffers.push(pos_size);
        Ok(self.extra_global_buffers.len() as u32)
    }

    /// Buffers a batch, writing pages for columns that passed the page size.
    /// A batch that does not match the schema is refused before anything is buffered.
    pub fn write_batch(&mut self, batch: &RecordBatch) -> Result<()> {
        self.check_usable()?;
        let stored;
        let batch = if crate::json::storage_schema(&batch.schema()).is_some() {
            stored = crate::json::to_storage(batch)?;
            &stored
        } else {
            batch
        };
        let cols = self.check_batch(batch)?;
        if batch.num_rows() == 0 && self.opts.page_rules == PageRules::Pylance {
            // pylance does not buffer empty batches: they count no bytes.
            return Ok(());
        }
        let cols = match self.blob_columns(cols) {
            Ok(c) => c,
            Err(e) => {
                self.poisoned = Some(e.to_string());
                return Err(e);
            }
        };
        let res = if self.fields.is_empty() {
            let plans = std::mem::take(&mut self.plans);
            let res = plans
                .iter()
                .zip(&cols)
                .try_for_each(|(p, c)| self.push(p, c).map(|_| ()));
            self.plans = plans;
            res
        } else if self.opts.page_rules == PageRules::Pylance {
            self.push_leaves(&cols)
        } else {
            self.push_fields(&cols)
        };
        if let Err(e) = res {
            self.poisoned = Some(e.to_string());
            return Err(e);
        }
        self.rows += batch.num_rows() as u64;
        Ok(())
    }

    fn check_usable(&self) -> Result<()> {
        match &self.poisoned {
            Some(why) => Err(Error::InvalidArgument(format!(
                "the writer failed earlier ({why}); the file cannot be completed"
            ))),
            None => Ok(()),
        }
    }

    /// Records the statistics zones of `array`, the next rows of `column`, if it keeps them.
    fn record_zones(&mut self, column: usize, array: &ArrayRef) {
        if self.stats_columns.get(column).copied().unwrap_or(false) {
            let step = usize::try_from(self.opts.stats_zone_rows).unwrap_or(usize::MAX);
            let state = &mut self.columns[column];
            let mut start = 0;
            while start < array.len() {
                let len = step.min(array.len() - start);
                if let Some(z) = zone_stats(array.slice(start, len).as_ref(), state.zone_rows) {
                    state.zones.push(z);
                }
                state.zone_rows += len as u64;
                start += len;
            }
        }
    }

    fn write_page_buffers(
        &mut self,
        column: usize,
        buffers: &[Buffer],
        num_rows: u64,
        encoding: pbfile2::Encoding,
    ) -> Result<()> {
        let mut offsets = Vec::with_capacity(buffers.len());
        let mut sizes = Vec::with_capacity(buffers.len());
        for b in buffers {
            let (pos, size) = self.write_aligned(b)?;
            offsets.push(pos);
            sizes.push(size);
        }
        self.columns[column].pages.push(pbfile2::column_metadata::Page {
            buffer_offsets: offsets,
            buffer_sizes: sizes,
            length: num_rows,
            encoding: Some(encoding),
            priority: 0,
        });
        Ok(())
    }

    fn write_raw(&mut self, bytes: &[u8]) -> Result<()> {
        self.out.write_all(bytes).map_err(|e| Error::io(&self.path, e))?;
        if let Some(sums) = &mut self.block_sums {
            sums.update(bytes);
        }
        self.pos += bytes.len() as u64;
        Ok(())
    }

    /// Writes a buffer and pads the file to the next 64-byte boundary.
    fn write_aligned(&mut self, b: &Buffer) -> Result<(u64, u64)> {
        let pos = self.pos;
        self.write_raw(b.as_slice())?;
        let pad = lancelet_encoding::bits::pad_to(self.pos, 64) - self.pos;
        if pad > 0 {
            self.write_raw(&[PAD_BYTE; 64][..pad as usize])?;
        }
        Ok((pos, b.len() as u64))
    }

    /// The file descriptor (global buffer 0): the schema with its metadata and field ids,
    /// and the row count.
    fn descriptor(&self) -> Result<pbfile::FileDescriptor> {
        let mut fields = to_lance_fields(&self.schema)?;
        if let Some(ids) = &self.field_ids {
            for f in &mut fields {
                let remap = |id: i32| usize::try_from(id).ok().and_then(|i| ids.get(i)).copied().unwrap_or(id);
                f.id = remap(f.id);
                f.parent_id = if f.parent_id < 0 || f.id == -1 {
                    // Fields recorded as id -1 (blob descriptor fields) have parent -1 too.
                    -1
                } else {
                    remap(f.parent_id)
                };
            }
        }
        Ok(pbfile::FileDescriptor {
            schema: Some(pbfile::Schema {
                fields,
                metadata: self
                    .schema_metadata
                    .iter()
                    .map(|(k, v)| (k.clone(), bytes::Bytes::from(v.clone().into_bytes())))
                    .collect(),
            }),
            length: self.rows,
            lancelet_checksums: 0,
        })
    }

    /// The offset tables and footer of a file whose descriptor (`gb0_len` bytes) is at
    /// `gb0_pos`, followed by `column_meta`, with extra global buffers `globals`.
    fn tail(&self, gb0_pos: u64, gb0_len: u64, column_meta: &[Vec<u8>], globals: &[(u64, u64)]) -> Tail {
        let column_meta_start = gb0_pos + gb0_len;
        let mut column_table = Vec::with_capacity(column_meta.len() * 16);
        let mut pos = column_meta_start;
        for c in column_meta {
            column_table.extend_from_slice(&pos.to_le_bytes());
            column_table.extend_from_slice(&(c.len() as u64).to_le_bytes());
            pos += c.len() as u64;
        }
        let cmo_table_start = pos;
        let gbo_table_start = cmo_table_start + column_table.len() as u64;
        let mut global_table = Vec::with_capacity(16 * (1 + globals.len()));
        for (p, size) in std::iter::once(&(gb0_pos, gb0_len)).chain(globals) {
            global_table.extend_from_slice(&p.to_le_bytes());
            global_table.extend_from_slice(&size.to_le_bytes());
        }
        let (major, minor) = self.opts.version.footer_pair();
        let footer = Footer {
            column_meta_start,
            cmo_table_start,
            gbo_table_start,
            num_global_buffers: (global_table.len() / 16) as u32,
            num_columns: (column_table.len() / 16) as u32,
            major,
            minor,
        }
        .to_bytes();
        Tail {
            column_table,
            global_table,
            footer,
        }
    }

    /// Writes everything still buffered and the file's metadata; returns the sink and
    /// the number of rows written.
    pub fn finish(mut self) -> Result<(W, u64)> {
        self.check_usable()?;
        if self.opts.page_rules == PageRules::Pylance {
            let all: Vec<(usize, usize)> = (0..self.fields.len())
                .flat_map(|i| (0..self.fields[i].leaves.len()).map(move |k| (i, k)))
                .collect();
            self.flush_leaves(&all)?;
        } else {
            let all: Vec<usize> = (0..self.fields.len()).collect();
            self.flush_fields(&all)?;
        }
        let mut order = Vec::new();
        if self.fields.is_empty() {
            for p in &self.plans {
                p.visit(&mut |p| order.push(p.clone()));
            }
        }
        for p in &order {
            match p {
                FieldPlan::Leaf { column, field } => {
                    self.flush_leaf(*column, false)?;
                    if self.columns[*column].pages.is_empty() && self.rows > 0 {
                        // A list whose items are all empty still gets one (empty) items page,
                        // as pylance writes it.
                        let empty = arrow_array::new_empty_array(field.data_type());
                        let page =
                            encode_leaf(&empty, &self.opts.encode).map_err(|e| Error::from_encoding(&self.path, e))?;
                        self.write_page(*column, page)?;
                    }
                }
                FieldPlan::List { column, .. } => {
                    self.flush_list(*column)?;
                    if self.columns[*column].pages.is_empty() && self.rows > 0 {
                        self.write_page(*column, encode_list_offsets(&[], &[], 0))?;
                    }
                }
                FieldPlan::Struct { column, .. } => {
                    let rows = self.columns[*column].struct_rows;
                    // pylance writes a struct's header page even in a file of no rows.
                    if rows > 0 || self.rows > 0 || self.opts.page_rules == PageRules::Pylance {
                        self.write_page(*column, struct_header(rows))?;
                    }
                }
            }
        }
        if self.opts.page_stats {
            let mut stats = FileStats::default();
            for (i, c) in self.columns.iter_mut().enumerate() {
                if self.stats_columns[i] && !c.zones.is_empty() {
                    stats.push_column(i as u32, std::mem::take(&mut c.zones));
                }
            }
            if stats.columns().next().is_some() {
                let index = self.add_global_buffer(&stats.encode())?;
                self.schema_metadata
                    .insert(PAGE_STATS_KEY.to_string(), index.to_string());
            }
        }
        let mut descriptor = self.descriptor()?;
        if self.block_sums.is_some() {
            // The checksum buffer comes last among the extra global buffers.
            descriptor.lancelet_checksums = self.extra_global_buffers.len() as u32 + 1;
        }
        let gb0 = descriptor.encode_to_vec();
        let columns = std::mem::take(&mut self.columns);
        let column_meta: Vec<Vec<u8>> = columns
            .into_iter()
            .enumerate()
            .map(|(i, c)| {
                // 2.0 marks blob v1 columns in their column encoding (`Blob { inner: Values }`).
                let column_encoding =
                    if self.opts.version == FileVersion::V2_0 && crate::blob::is_v1_descriptor_column(&self.plans, i) {
                        crate::blob::blob_column_encoding()
                    } else {
                        column_values_encoding()
                    };
                pbfile2::ColumnMetadata {
                    encoding: Some(direct_encoding(COLUMN_ENCODING_TYPE_URL, column_encoding)),
                    pages: c.pages,
                    buffer_offsets: vec![],
                    buffer_sizes: vec![],
                }
                .encode_to_vec()
            })
            .collect();
        if let Some(sums) = self.block_sums.take() {
            // Everything after the checksum buffer is laid out first, so that the buffer
            // can hold the checksums of the metadata written after it.
            let covered = self.pos;
            let len = crate::checksum::buffer_len(column_meta.len(), covered);
            let mut globals = self.extra_global_buffers.clone();
            globals.push((covered, len));
            let gb0_pos = lancelet_encoding::bits::pad_to(covered + len, 64);
            let tail = self.tail(gb0_pos, gb0.len() as u64, &column_meta, &globals);
            let buffer = crate::checksum::encode(
                covered,
                sums,
                &MetadataSums {
                    footer: &tail.footer,
                    global_table: &tail.global_table,
                    column_table: &tail.column_table,
                    descriptor: &gb0,
                    columns: &column_meta,
                },
            );
            self.add_global_buffer(&buffer)?;
            if self.pos != gb0_pos {
                return Err(Error::Internal(format!(
                    "the checksum buffer ends at {} instead of {gb0_pos}",
                    self.pos
                )));
            }
        }
        let gb0_pos = self.pos;
        let globals = self.extra_global_buffers.clone();
        let tail = self.tail(gb0_pos, gb0.len() as u64, &column_meta, &globals);
        self.write_raw(&gb0)?;
        for c in &column_meta {
            self.write_raw(c)?;
        }
        self.write_raw(&tail.column_table)?;
        self.write_raw(&tail.global_table)?;
        self.write_raw(&tail.footer)?;
        self.out.flush().map_err(|e| Error::io(&self.path, e))?;
        Ok((self.out, self.rows))
    }
}

/// The offset tables and footer that end a file.
struct Tail {
    column_table: Vec<u8>,
    global_table: Vec<u8>,
    footer: [u8; 40],
}

/// Marks the columns of `plan` that get statistics: orderable leaves, in structs or not,
/// but never list items (their rows are not the file's rows).
/// At 2.1+ only top-level leaves: a struct child's column holds rows the struct's own
/// nulls hide, which its zones would not see.
fn mark_stats_columns(plan: &FieldPlan, out: &mut [bool], top_only: bool) {
    match plan {
        FieldPlan::Leaf { column, field } => {
            if let Some(m) = out.get_mut(*column) {
                *m = stats_supports(field.data_type());
            }
        }
        FieldPlan::Struct { children, .. } if !top_only => {
            children.iter().for_each(|c| mark_stats_columns(c, out, false))
        }
        FieldPlan::Struct { .. } | FieldPlan::List { .. } => {}
    }
}

fn direct_encoding(type_url: &str, value: Vec<u8>) -> pbfile2::Encoding {
    let any = prost_types::Any {
        type_url: type_url.to_string(),
        value,
    };
    pbfile2::Encoding {
        location: Some(pbfile2::encoding::Location::Direct(pbfile2::DirectEncoding {
            encoding: bytes::Bytes::from(any.encode_to_vec()),
        })),
    }
}

fn column_values_encoding() -> Vec<u8> {
    pb20::ColumnEncoding {
        column_encoding: Some(pb20::column_encoding::ColumnEncoding::Values(())),
    }
    .encode_to_vec()
}
