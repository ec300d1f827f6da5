//! Reading legacy Lance files (file format 0.1, footer version 0.1 or 0.2).
//!
//! A legacy file is written batch by batch. Every field that holds data gets one page per
//! batch; struct fields have none (their children carry the rows). After the pages come a
//! page table, optional statistics, dictionary values, an embedded `lance.table.Manifest`
//! holding the schema, a `lance.file.Metadata` message and a 16-byte footer:
//! `u64 metadata position, u16 major, u16 minor, b"LANC"`. Protobuf messages are stored as
//! a little-endian `u32` length followed by the message.
//!
//! The page table is an array of `i64` pairs `(position, length)`, one per field id from the
//! smallest id of the schema to the largest id of a field with pages, and within a field
//! one per batch. What a page holds depends on the field's type:
//!
//! * fixed-width values (numbers, temporal types, decimals, fixed-size binary and
//!   fixed-size lists of those): the values back to back, booleans as LSB-first bits;
//!   the length is the number of values;
//! * strings and binary: the bytes, then `length + 1` absolute file offsets (`i64`); the
//!   page position is that of the offsets. An empty value of a nullable field reads as null;
//! * dictionaries: the keys as fixed-width values; the dictionary itself is stored once
//!   in the file at the place the schema field's `dictionary` names;
//! * lists: `length + 1` offsets (`i32`, or `i64` for large lists) into the item page of the
//!   same batch, which starts at 0;
//! * the null type: no bytes, the length counts the rows.
//!
//! Primitive values, lists and structs have no validity: what was null reads back as the
//! bytes stored in its place (zeros, in practice), as pylance reads it.

use std::collections::HashMap;
use std::ops::Range;
use std::sync::Arc;

use arrow_array::types::{
    BinaryType, ByteArrayType, Int16Type, Int32Type, Int64Type, Int8Type, LargeBinaryType, LargeUtf8Type, UInt16Type,
    UInt32Type, UInt64Type, UInt8Type, Utf8Type,
};
use arrow_array::{
    make_array, Array, ArrayRef, BooleanArray, DictionaryArray, FixedSizeBinaryArray, FixedSizeListArray,
    GenericByteArray, LargeListArray, ListArray, NullArray, StructArray,
};
use arrow_buffer::{BooleanBuffer, Buffer, NullBuffer, OffsetBuffer, ScalarBuffer};
use arrow_data::ArrayDataBuilder;
use arrow_schema::{DataType, FieldRef, Schema};
use futures::future::BoxFuture;
use futures::FutureExt;
use lancelet_proto::{pbfile, pbtable};
use prost::Message;

use crate::error::{Error, Result};
use crate::footer::{FileVersion, Footer, MAGIC};
use crate::plan::FieldPlan;
use crate::reader::FileMetadata;
use crate::schema::from_lance_fields;
use lancelet_io::{read_ranges, IoStats, ReadAt};

/// Size of the legacy footer in bytes.
pub const LEGACY_FOOTER_LEN: u64 = 16;

/// Protobuf messages larger than this are refused as corrupt (they hold a schema and a few
/// offsets, never data).
const MAX_MESSAGE: u64 = 256 * 1024 * 1024;

/// Whether the last bytes of a file (`tail`, at least 8 bytes ending at the end of the
/// file) name a legacy format version.
pub fn is_legacy_tail(tail: &[u8]) -> bool {
    let n = tail.len();
    if n < 8 || &tail[n - 4..] != MAGIC {
        return false;
    }
    let major = u16::from_le_bytes([tail[n - 8], tail[n - 7]]);
    let minor = u16::from_le_bytes([tail[n - 6], tail[n - 5]]);
    major == 0 && (minor == 1 || minor == 2)
}

/// One page: where it starts and how many values it holds.
#[derive(Debug, Clone, Copy, Default)]
struct Page {
    position: u64,
    length: u64,
}

/// The parts of a legacy file a read needs beyond [`FileMetadata`].
#[derive(Debug)]
pub struct LegacyFile {
    path: String,
    file_size: u64,
    /// Row offset of each batch, then the row count.
    batch_starts: Vec<u64>,
    /// Per column (pre-order field position), its page in each batch.
    pages: Vec<Vec<Page>>,
    /// Dictionary values of dictionary columns, by column.
    dictionaries: HashMap<usize, ArrayRef>,
}

/// The bytes of the file's tail already fetched, served without another read.
struct Tail<'a> {
    io: &'a dyn ReadAt,
    stats: &'a IoStats,
    start: u64,
    bytes: Buffer,
}

impl Tail<'_> {
    async fn fetch(&self, range: Range<u64>) -> Result<Buffer> {
        if range.start >= self.start && range.end <= self.start + self.bytes.len() as u64 {
            return Ok(self
                .bytes
                .slice_with_length((range.start - self.start) as usize, (range.end - range.start) as usize));
        }
        read_ranges(self.io, std::slice::from_ref(&range), self.stats)
            .await?
            .pop()
            .ok_or_else(|| Error::corrupt(self.io.path(), "short read"))
    }

    /// Reads a length-prefixed protobuf message at `pos`, which must end before `limit`.
    async fn message<M: Message + Default>(&self, pos: u64, limit: u64, what: &str) -> Result<M> {
        let path = self.io.path();
        let len_end = pos
            .checked_add(4)
            .filter(|e| *e <= limit)
            .ok_or_else(|| Error::corrupt(path, format!("the {what} at {pos} lies outside the file")))?;
        let len_bytes = self.fetch(pos..len_end).await?;
        let mut b = [0u8; 4];
        b.copy_from_slice(len_bytes.as_slice());
        let len = u64::from(u32::from_le_bytes(b));
        if len > MAX_MESSAGE || len_end + len > limit {
            return Err(Error::corrupt(
                path,
                format!("the {what} at {pos} claims {len} bytes, past the end of the file"),
            ));
        }
        let body = self.fetch(len_end..len_end + len).await?;
        M::decode(body.as_slice()).map_err(|e| Error::corrupt(path, format!("the {what} does not parse: {e}")))
    }
}

/// Opens a legacy file whose tail (the last `tail.len()` bytes, starting at `tail_start`)
/// has been read: parses footer, metadata, schema and page table, and loads dictionaries.
pub(crate) async fn open(
    io: &dyn ReadAt,
    stats: &IoStats,
    file_size: u64,
    tail_start: u64,
    tail: Buffer,
) -> Result<(FileMetadata, LegacyFile)> {
    let path = io.path().to_string();
    let n = tail.len();
    if n < LEGACY_FOOTER_LEN as usize || file_size < LEGACY_FOOTER_LEN {
        return Err(Error::corrupt(&path, "file too small for a legacy Lance footer"));
    }
    let foot = &tail.as_slice()[n - LEGACY_FOOTER_LEN as usize..];
    let mut p = [0u8; 8];
    p.copy_from_slice(&foot[..8]);
    let meta_pos = u64::from_le_bytes(p);
    let major = u16::from_le_bytes([foot[8], foot[9]]);
    let minor = u16::from_le_bytes([foot[10], foot[11]]);
    let limit = file_size - LEGACY_FOOTER_LEN;
    let tail = Tail {
        io,
        stats,
        start: tail_start,
        bytes: tail,
    };
    let metadata: pbfile::Metadata = tail.message(meta_pos, limit, "file metadata").await?;

    // Batches.
    let offsets = &metadata.batch_offsets;
    let mut batch_starts = Vec::with_capacity(offsets.len().max(1));
    for (i, o) in offsets.iter().enumerate() {
        let o = u64::try_from(*o).map_err(|_| Error::corrupt(&path, format!("negative batch offset {o}")))?;
        if i == 0 && o != 0 || batch_starts.last().is_some_and(|l| o < *l) {
            return Err(Error::corrupt(
                &path,
                format!("batch offsets {offsets:?} do not rise from 0"),
            ));
        }
        batch_starts.push(o);
    }
    if batch_starts.is_empty() {
        batch_starts.push(0);
    }
    let num_batches = batch_starts.len() - 1;
    let num_rows = batch_starts.last().copied().unwrap_or(0);

    // Schema, from the manifest embedded in the file.
    if metadata.manifest_position == 0 {
        return Err(Error::corrupt(&path, "the legacy file embeds no schema"));
    }
    let manifest: pbtable::Manifest = tail
        .message(metadata.manifest_position, limit, "embedded manifest")
        .await?;
    let schema = Arc::new(from_lance_fields(&manifest.fields, &manifest.schema_metadata, &path)?);
    let order = preorder(&manifest.fields);
    let (plans, ncols) = plan_legacy(&schema)?;
    if ncols != order.len() {
        return Err(Error::corrupt(
            &path,
            format!("the schema has {} fields but plans {ncols} columns", order.len()),
        ));
    }
    let fields: Vec<&pbfile::Field> = order.iter().map(|&i| &manifest.fields[i]).collect();

    // Page table.
    let min_id = fields.iter().map(|f| f.id).min().unwrap_or(0);
    let max_id = fields.iter().filter(|f| f.logical_type != "struct").map(|f| f.id).max();
    let mut pages: Vec<Vec<Page>> = vec![Vec::new(); fields.len()];
    if let (Some(max_id), true) = (max_id, num_batches > 0) {
        let ids = u64::try_from(i64::from(max_id) - i64::from(min_id) + 1).unwrap_or(0);
        let size = ids
            .checked_mul(num_batches as u64)
            .and_then(|x| x.checked_mul(16))
            .filter(|s| *s <= limit);
        let table_start = metadata.page_table_position;
        let table = match size.and_then(|s| table_start.checked_add(s).filter(|e| *e <= limit).map(|e| (s, e))) {
            Some((_, end)) => tail.fetch(table_start..end).await?,
            None => {
                return Err(Error::corrupt(
                    &path,
                    format!(
                        "the page table at {table_start} ({ids} fields, {num_batches} batches) lies outside the file"
                    ),
                ))
            }
        };
        let at = |k: usize| -> i64 {
            let mut b = [0u8; 8];
            b.copy_from_slice(&table.as_slice()[k * 8..k * 8 + 8]);
            i64::from_le_bytes(b)
        };
        for (c, f) in fields.iter().enumerate() {
            if f.logical_type == "struct" {
                continue;
            }
            let row = (i64::from(f.id) - i64::from(min_id)) as usize;
            let mut v = Vec::with_capacity(num_batches);
            for b in 0..num_batches {
                let k = (row * num_batches + b) * 2;
                let (pos, len) = (at(k), at(k + 1));
                match (u64::try_from(pos), u64::try_from(len)) {
                    (Ok(position), Ok(length)) if position <= limit => v.push(Page { position, length }),
                    _ => {
                        return Err(Error::corrupt(
                            &path,
                            format!("page of field {} in batch {b} at {pos} (length {len}) is invalid", f.id),
                        ))
                    }
                }
            }
            pages[c] = v;
        }
    }

    let mut file = LegacyFile {
        path: path.clone(),
        file_size,
        batch_starts,
        pages,
        dictionaries: HashMap::new(),
    };
    // Dictionaries, wherever the schema puts them.
    let mut columns = Vec::new();
    for p in &plans {
        p.visit(&mut |q| columns.push(q.clone()));
    }
    for plan in &columns {
        if let (FieldPlan::Leaf { column, field }, Some(f)) = (plan, fields.get(plan.column())) {
            if let DataType::Dictionary(_, value_type) = field.data_type() {
                let d = f.dictionary.as_ref().ok_or_else(|| {
                    Error::corrupt(&path, format!("dictionary field {:?} has no dictionary", field.name()))
                })?;
                let (pos, len) = match (u64::try_from(d.offset), u64::try_from(d.length)) {
                    (Ok(p), Ok(l)) => (p, l),
                    _ => return Err(Error::corrupt(&path, "negative dictionary position")),
                };
                let page = Page {
                    position: pos,
                    length: len,
                };
                let values = file.read_values(io, stats, value_type, true, &[(page, 0..len)]).await?;
                file.dictionaries.insert(*column, values);
            }
        }
    }

    let footer = Footer {
        column_meta_start: 0,
        cmo_table_start: 0,
        gbo_table_start: 0,
        num_global_buffers: 0,
        num_columns: ncols as u32,
        major,
        minor,
    };
    let meta = FileMetadata {
        path,
        file_size,
        footer,
        version: FileVersion::Legacy,
        schema,
        num_rows,
        checksums: None,
        columns: Vec::new(),
        global_buffers: Vec::new(),
        plans,
    };
    Ok((meta, file))
}

/// Positions of `fields` in schema pre-order (roots in order, each followed by its
/// children in list order), the order columns are numbered in.
fn preorder(fields: &[pbfile::Field]) -> Vec<usize> {
    let mut out = Vec::with_capacity(fields.len());
    let mut stack: Vec<usize> = fields
        .iter()
        .enumerate()
        .filter(|(_, f)| f.parent_id == -1)
        .map(|(i, _)| i)
        .rev()
        .collect();
    while let Some(i) = stack.pop() {
        if out.len() > fields.len() {
            break;
        }
        out.push(i);
        let id = fields[i].id;
        stack.extend(
            fields
                .iter()
                .enumerate()
                .filter(|(k, f)| f.parent_id == id && *k != i)
                .map(|(k, _)| k)
                .rev(),
        );
    }
    out
}

/// Plans every top-level field: each field (struct and list parents included) is one
/// column, numbered in pre-order.
fn plan_legacy(schema: &Schema) -> Result<(Vec<FieldPlan>, usize)> {
    fn plan(field: &FieldRef, next: &mut usize, depth: usize) -> Result<FieldPlan> {
        if depth > 64 {
            return Err(Error::Unsupported("types nested deeper than 64 levels".into()));
        }
        let column = *next;
        *next += 1;
        Ok(match field.data_type() {
            DataType::Struct(children) => FieldPlan::Struct {
                column,
                field: field.clone(),
                children: children
                    .iter()
                    .map(|c| plan(c, next, depth + 1))
                    .collect::<Result<Vec<_>>>()?,
            },
            DataType::List(item) | DataType::LargeList(item) => FieldPlan::List {
                column,
                field: field.clone(),
                item: Box::new(plan(item, next, depth + 1)?),
            },
            _ => FieldPlan::Leaf {
                column,
                field: field.clone(),
            },
        })
    }
    let mut next = 0;
    let plans = schema
        .fields()
        .iter()
        .map(|f| plan(f, &mut next, 0))
        .collect::<Result<Vec<_>>>()?;
    Ok((plans, next))
}

/// Bits per value of a fixed-width type, or `None` for types stored otherwise.
fn stride_bits(dt: &DataType) -> Option<u64> {
    Some(match dt {
        DataType::Boolean => 1,
        DataType::FixedSizeBinary(n) => u64::try_from(*n).ok()? * 8,
        DataType::FixedSizeList(item, n) => stride_bits(item.data_type())?.checked_mul(u64::try_from(*n).ok()?)?,
        dt if dt.is_primitive() => dt.primitive_width()? as u64 * 8,
        _ => return None,
    })
}

impl LegacyFile {
    fn corrupt(&self, msg: impl Into<String>) -> Error {
        Error::corrupt(&self.path, msg)
    }

    /// Splits file rows into `(batch, rows within the batch)` pieces, in order.
    fn pieces(&self, ranges: &[Range<u64>]) -> Result<Vec<(usize, Range<u64>)>> {
        let mut out = Vec::new();
        for r in ranges {
            let mut start = r.start;
            while start < r.end {
                let b = self.batch_starts.partition_point(|s| *s <= start).saturating_sub(1);
                let (bs, be) = match (self.batch_starts.get(b), self.batch_starts.get(b + 1)) {
                    (Some(s), Some(e)) if *e > start => (*s, *e),
                    _ => return Err(self.corrupt(format!("row {start} is in no batch"))),
                };
                let end = r.end.min(be);
                out.push((b, start - bs..end - bs));
                start = end;
            }
        }
        Ok(out)
    }

    /// Reads the rows in `ranges` of one planned field.
    pub(crate) async fn read_field(
        &self,
        io: &dyn ReadAt,
        stats: &IoStats,
        plan: &FieldPlan,
        ranges: &[Range<u64>],
    ) -> Result<ArrayRef> {
        let pieces = self.pieces(ranges)?;
        self.read_plan(io, stats, plan, &pieces).await
    }

    fn page(&self, column: usize, batch: usize) -> Result<Page> {
        self.pages
            .get(column)
            .and_then(|p| p.get(batch))
            .copied()
            .ok_or_else(|| self.corrupt(format!("column {column} has no page in batch {batch}")))
    }

    /// Reads `pieces` (batch, rows of the batch) of `plan`, concatenated.
    fn read_plan<'a>(
        &'a self,
        io: &'a dyn ReadAt,
        stats: &'a IoStats,
        plan: &'a FieldPlan,
        pieces: &'a [(usize, Range<u64>)],
    ) -> BoxFuture<'a, Result<ArrayRef>> {
        async move {
            let n: u64 = pieces.iter().map(|(_, r)| r.end - r.start).sum();
            let n = usize::try_from(n).map_err(|_| self.corrupt("too many rows"))?;
            match plan {
                FieldPlan::Struct { field, children, .. } => {
                    let DataType::Struct(fields) = field.data_type() else {
                        return Err(self.corrupt("struct plan without struct type"));
                    };
                    if children.is_empty() {
                        return Ok(Arc::new(StructArray::new_empty_fields(n, None)) as ArrayRef);
                    }
                    let arrays =
                        futures::future::try_join_all(children.iter().map(|c| self.read_plan(io, stats, c, pieces)))
                            .await?;
                    Ok(Arc::new(StructArray::try_new(fields.clone(), arrays, None)?) as ArrayRef)
                }
                FieldPlan::List { column, field, item } => {
                    self.read_list(io, stats, *column, field, item, pieces).await
                }
                FieldPlan::Leaf { column, field } => {
                    let with_pages = pieces
                        .iter()
                        .filter(|(_, r)| r.end > r.start)
                        .map(|(b, r)| Ok((self.page(*column, *b)?, r.clone())))
                        .collect::<Result<Vec<_>>>()?;
                    match field.data_type() {
                        DataType::Dictionary(key, _) => {
                            let keys = self.read_values(io, stats, key, false, &with_pages).await?;
                            let values = self
                                .dictionaries
                                .get(column)
                                .ok_or_else(|| self.corrupt("dictionary values were not loaded"))?;
                            dictionary(keys, values.clone()).map_err(|e| self.corrupt(e))
                        }
                        dt => self.read_values(io, stats, dt, field.is_nullable(), &with_pages).await,
                    }
                }
            }
        }
        .boxed()
    }

    /// Reads rows of pages holding values of a non-nested type (fixed width, binary or the
    /// null type), concatenated.
    async fn read_values(
        &self,
        io: &dyn ReadAt,
        stats: &IoStats,
        dt: &DataType,
        nullable: bool,
        pages: &[(Page, Range<u64>)],
    ) -> Result<ArrayRef> {
        for (page, rows) in pages {
            if rows.end > page.length {
                return Err(self.corrupt(format!("rows {rows:?} requested from a page of {} values", page.length)));
            }
        }
        let parts = if *dt == DataType::Null {
            pages
                .iter()
                .map(|(_, r)| Arc::new(NullArray::new((r.end - r.start) as usize)) as ArrayRef)
                .collect()
        } else if let Some(bits) = stride_bits(dt) {
            self.read_fixed(io, stats, dt, bits, pages).await?
        } else {
            match dt {
                DataType::Utf8 => self.read_binary::<Utf8Type>(io, stats, nullable, pages).await?,
                DataType::LargeUtf8 => self.read_binary::<LargeUtf8Type>(io, stats, nullable, pages).await?,
                DataType::Binary => self.read_binary::<BinaryType>(io, stats, nullable, pages).await?,
                DataType::LargeBinary => self.read_binary::<LargeBinaryType>(io, stats, nullable, pages).await?,
                other => return Err(Error::Unsupported(format!("type {other} in legacy file {}", self.path))),
            }
        };
        crate::reader::concat_parts(parts, dt)
    }

    async fn read_fixed(
        &self,
        io: &dyn ReadAt,
        stats: &IoStats,
        dt: &DataType,
        bits: u64,
        pages: &[(Page, Range<u64>)],
    ) -> Result<Vec<ArrayRef>> {
        let mut io_ranges = Vec::with_capacity(pages.len());
        let mut offsets = Vec::with_capacity(pages.len());
        for (page, rows) in pages {
            let span = |r: u64| r.checked_mul(bits);
            let (Some(bit_start), Some(bit_end)) = (span(rows.start), span(rows.end)) else {
                return Err(self.corrupt("page offsets overflow"));
            };
            let start = page.position.checked_add(bit_start / 8);
            let end = page.position.checked_add(bit_end.div_ceil(8));
            match (start, end) {
                (Some(s), Some(e)) if e <= self.file_size => io_ranges.push(s..e),
                _ => {
                    return Err(self.corrupt(format!(
                        "rows {rows:?} of the page at {} lie outside the file",
                        page.position
                    )))
                }
            }
            offsets.push((bit_start % 8) as usize);
        }
        let fetched = read_ranges(io, &io_ranges, stats).await?;
        pages
            .iter()
            .zip(fetched)
            .zip(offsets)
            .map(|(((_, rows), buf), bit_offset)| {
                fixed_array(dt, buf, bit_offset, (rows.end - rows.start) as usize).map_err(|e| self.corrupt(e))
            })
            .collect()
    }

    async fn read_binary<T: ByteArrayType>(
        &self,
        io: &dyn ReadAt,
        stats: &IoStats,
        nullable: bool,
        pages: &[(Page, Range<u64>)],
    ) -> Result<Vec<ArrayRef>>
    where
        T::Offset: num_offset::FromI64,
    {
        // Offsets first: rows `s..e` need offsets `s..=e`.
        let mut io_ranges = Vec::with_capacity(pages.len());
        for (page, rows) in pages {
            let start = rows.start.checked_mul(8).and_then(|x| page.position.checked_add(x));
            let end = rows
                .end
                .checked_add(1)
                .and_then(|x| x.checked_mul(8))
                .and_then(|x| page.position.checked_add(x));
            match (start, end) {
                (Some(s), Some(e)) if e <= self.file_size => io_ranges.push(s..e),
                _ => return Err(self.corrupt(format!("binary offsets at {} lie outside the file", page.position))),
            }
        }
        let fetched = read_ranges(io, &io_ranges, stats).await?;
        let mut positions: Vec<Vec<i64>> = Vec::with_capacity(pages.len());
        let mut data_ranges = Vec::with_capacity(pages.len());
        for buf in &fetched {
            let v: Vec<i64> = buf
                .as_slice()
                .chunks_exact(8)
                .map(|c| {
                    let mut b = [0u8; 8];
                    b.copy_from_slice(c);
                    i64::from_le_bytes(b)
                })
                .collect();
            let ok = v.windows(2).all(|w| w[0] <= w[1]) && v.first().is_some_and(|f| *f >= 0);
            let (first, last) = (v.first().copied().unwrap_or(0), v.last().copied().unwrap_or(0));
            if !ok || last as u64 > self.file_size {
                return Err(self.corrupt("binary offsets are not increasing within the file"));
            }
            data_ranges.push(first as u64..last as u64);
            positions.push(v);
        }
        let data = read_ranges(io, &data_ranges, stats).await?;
        let mut out = Vec::with_capacity(pages.len());
        for (v, bytes) in positions.iter().zip(data) {
            let base = v.first().copied().unwrap_or(0);
            let nulls = nullable
                .then(|| NullBuffer::from(v.windows(2).map(|w| w[0] != w[1]).collect::<Vec<bool>>()))
                .filter(|n| n.null_count() > 0);
            let rel: std::result::Result<Vec<T::Offset>, _> = v
                .iter()
                .map(|o| {
                    <T::Offset as num_offset::FromI64>::from_i64(o - base)
                        .ok_or_else(|| self.corrupt("binary page too large for 32-bit offsets"))
                })
                .collect();
            let offsets = OffsetBuffer::new(ScalarBuffer::from(rel?));
            let a = GenericByteArray::<T>::try_new(offsets, bytes, nulls).map_err(|e| self.corrupt(e.to_string()))?;
            out.push(Arc::new(a) as ArrayRef);
        }
        Ok(out)
    }

    async fn read_list(
        &self,
        io: &dyn ReadAt,
        stats: &IoStats,
        column: usize,
        field: &FieldRef,
        item: &FieldPlan,
        pieces: &[(usize, Range<u64>)],
    ) -> Result<ArrayRef> {
        let (item_field, large) = match field.data_type() {
            DataType::List(f) => (f.clone(), false),
            DataType::LargeList(f) => (f.clone(), true),
            _ => return Err(self.corrupt("list plan without list type")),
        };
        // Offsets of rows `s..e` are the values `s..=e` of the offsets page.
        let pieces: Vec<&(usize, Range<u64>)> = pieces.iter().filter(|(_, r)| r.end > r.start).collect();
        let off_pages = pieces
            .iter()
            .map(|(b, r)| {
                let mut p = self.page(column, *b)?;
                p.length = p.length.saturating_add(1);
                Ok((p, r.start..r.end + 1))
            })
            .collect::<Result<Vec<_>>>()?;
        let off_type = if large { DataType::Int64 } else { DataType::Int32 };
        let bits = if large { 64 } else { 32 };
        let parts = self.read_fixed(io, stats, &off_type, bits, &off_pages).await?;
        let mut lengths: Vec<usize> = Vec::new();
        let mut item_pieces: Vec<(usize, Range<u64>)> = Vec::with_capacity(pieces.len());
        for ((b, _), part) in pieces.iter().zip(&parts) {
            let v: Vec<i64> = if large {
                part.as_any()
                    .downcast_ref::<arrow_array::Int64Array>()
                    .map(|a| a.values().to_vec())
            } else {
                part.as_any()
                    .downcast_ref::<arrow_array::Int32Array>()
                    .map(|a| a.values().iter().map(|x| i64::from(*x)).collect())
            }
            .ok_or_else(|| self.corrupt("list offsets did not decode"))?;
            let ok = v.windows(2).all(|w| w[0] <= w[1]) && v.first().is_some_and(|f| *f >= 0);
            if !ok {
                return Err(self.corrupt("list offsets are not increasing"));
            }
            lengths.extend(v.windows(2).map(|w| (w[1] - w[0]) as usize));
            let (s, e) = (
                v.first().copied().unwrap_or(0) as u64,
                v.last().copied().unwrap_or(0) as u64,
            );
            item_pieces.push((*b, s..e));
        }
        let items = self.read_plan(io, stats, item, &item_pieces).await?;
        let total: usize = lengths.iter().sum();
        if items.len() != total {
            return Err(self.corrupt(format!("list expected {total} items, read {}", items.len())));
        }
        Ok(if large {
            Arc::new(LargeListArray::try_new(
                item_field,
                OffsetBuffer::from_lengths(lengths),
                items,
                None,
            )?) as ArrayRef
        } else {
            if total > i32::MAX as usize {
                return Err(self.corrupt("more than 2^31 list items in one read"));
            }
            Arc::new(ListArray::try_new(
                item_field,
                OffsetBuffer::from_lengths(lengths),
                items,
                None,
            )?) as ArrayRef
        })
    }
}

/// Conversion of the `i64` file offsets into an Arrow offset type.
mod num_offset {
    /// A checked conversion from `i64`.
    pub trait FromI64: Sized {
        /// `v` as `Self`, if it fits.
        fn from_i64(v: i64) -> Option<Self>;
    }
    impl FromI64 for i32 {
        fn from_i64(v: i64) -> Option<Self> {
            i32::try_from(v).ok()
        }
    }
    impl FromI64 for i64 {
        fn from_i64(v: i64) -> Option<Self> {
            Some(v)
        }
    }
}

/// Builds `len` fixed-width values of `dt` from `buf`, the first starting `bit_offset` bits in.
fn fixed_array(dt: &DataType, buf: Buffer, bit_offset: usize, len: usize) -> std::result::Result<ArrayRef, String> {
    let need_bits = stride_bits(dt)
        .and_then(|b| (b as usize).checked_mul(len))
        .and_then(|b| b.checked_add(bit_offset))
        .ok_or("value size overflows")?;
    if buf.len().saturating_mul(8) < need_bits {
        return Err(format!("{} bytes cannot hold {len} values of {dt}", buf.len()));
    }
    Ok(match dt {
        DataType::Boolean => Arc::new(BooleanArray::new(BooleanBuffer::new(buf, bit_offset, len), None)),
        DataType::FixedSizeList(item, n) => {
            let child_len = len.checked_mul(*n as usize).ok_or("value size overflows")?;
            let values = fixed_array(item.data_type(), buf, bit_offset, child_len)?;
            Arc::new(FixedSizeListArray::try_new(item.clone(), *n, values, None).map_err(|e| e.to_string())?)
        }
        DataType::FixedSizeBinary(n) => {
            let bytes = len * (*n as usize);
            Arc::new(
                FixedSizeBinaryArray::try_new(*n, buf.slice_with_length(0, bytes), None).map_err(|e| e.to_string())?,
            )
        }
        dt => {
            let width = dt.primitive_width().ok_or_else(|| format!("{dt} is not fixed width"))?;
            let data = ArrayDataBuilder::new(dt.clone())
                .len(len)
                .add_buffer(buf.slice_with_length(0, len * width))
                .align_buffers(true)
                .build()
                .map_err(|e| e.to_string())?;
            make_array(data)
        }
    })
}

/// A dictionary array of `keys` (any integer type) into `values`.
fn dictionary(keys: ArrayRef, values: ArrayRef) -> std::result::Result<ArrayRef, String> {
    use arrow_array::cast::AsArray;
    macro_rules! dict {
        ($t:ty) => {
            DictionaryArray::<$t>::try_new(keys.as_primitive::<$t>().clone(), values)
                .map(|d| Arc::new(d) as ArrayRef)
                .map_err(|e| e.to_string())
        };
    }
    match keys.data_type() {
        DataType::Int8 => dict!(Int8Type),
        DataType::Int16 => dict!(Int16Type),
        DataType::Int32 => dict!(Int32Type),
        DataType::Int64 => dict!(Int64Type),
        DataType::UInt8 => dict!(UInt8Type),
        DataType::UInt16 => dict!(UInt16Type),
        DataType::UInt32 => dict!(UInt32Type),
        DataType::UInt64 => dict!(UInt64Type),
        other => Err(format!("dictionary keys of type {other}")),
    }
}

impl LegacyFile {
    /// Number of batches the file was written in.
    pub fn num_batches(&self) -> usize {
        self.batch_starts.len().saturating_sub(1)
    }
}
