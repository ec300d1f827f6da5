//! Which byte ranges of a page hold a given range of rows.
//!
//! Fixed-width encodings (`Flat`, `Nullable`, `FixedSizeList` of those, and the offsets
//! or indices under `List` and `Binary`) store every buffer as a stream with a constant
//! number of bits per row, so rows `a..b` of the page live in bits `a*w..b*w` of each
//! buffer. Readers use this to fetch only what `take` and small range reads need.

use std::ops::Range;

use arrow_buffer::Buffer;

use super::decode::{child, variant};
use super::pb;
use super::pb::array_encoding::ArrayEncoding as E;
use super::pb::nullable::Nullability;
use crate::bits::bitmap_from;
use crate::Result;

/// One page buffer read as a stream of `bits_per_row` bits per row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stream {
    /// Index of the page buffer.
    pub buffer_index: u32,
    /// Bits this buffer spends on each row of the page.
    pub bits_per_row: u64,
}

/// The streams of a fixed-width encoding tree, or `None` when some part of it is not
/// fixed width (or lives outside the page).
pub fn fixed_streams(e: &pb::ArrayEncoding) -> Result<Option<Vec<Stream>>> {
    let mut out = Vec::new();
    Ok(collect(e, 1, &mut out)?.then_some(out))
}

/// How to read some rows of a page: per-row streams, plus buffers that must be read
/// whole whatever the rows (a dictionary's items).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RowLayout {
    /// Buffers read row by row.
    pub streams: Vec<Stream>,
    /// Page buffers read entirely.
    pub whole: Vec<u32>,
}

/// Like [`fixed_streams`] but also accepts a `Dictionary` whose indices are fixed width
/// (its items are then read whole).
pub fn row_layout(e: &pb::ArrayEncoding) -> Result<Option<RowLayout>> {
    if let Some(streams) = fixed_streams(e)? {
        return Ok(Some(RowLayout {
            streams,
            whole: Vec::new(),
        }));
    }
    if let E::Dictionary(d) = variant(e)? {
        let Some(streams) = fixed_streams(child(&d.indices, "indices")?)? else {
            return Ok(None);
        };
        let mut whole = Vec::new();
        if !page_buffers_of(child(&d.items, "items")?, &mut whole)? {
            return Ok(None);
        }
        return Ok(Some(RowLayout { streams, whole }));
    }
    Ok(None)
}

/// Collects every page buffer an encoding tree refers to; false if it refers to others.
fn page_buffers_of(e: &pb::ArrayEncoding, out: &mut Vec<u32>) -> Result<bool> {
    let mut push = |b: Option<&pb::Buffer>| match b {
        Some(b) if b.buffer_type == pb::buffer::BufferType::Page as i32 => {
            out.push(b.buffer_index);
            true
        }
        _ => false,
    };
    Ok(match variant(e)? {
        E::Flat(f) => push(f.buffer.as_ref()),
        E::Nullable(n) => match n.nullability.as_ref() {
            Some(Nullability::NoNulls(inner)) => page_buffers_of(child(&inner.values, "values")?, out)?,
            Some(Nullability::SomeNulls(inner)) => {
                page_buffers_of(child(&inner.validity, "validity")?, out)?
                    && page_buffers_of(child(&inner.values, "values")?, out)?
            }
            Some(Nullability::AllNulls(_)) => true,
            None => false,
        },
        E::Binary(b) => {
            page_buffers_of(child(&b.indices, "indices")?, out)? && page_buffers_of(child(&b.bytes, "bytes")?, out)?
        }
        E::FixedSizeList(f) => page_buffers_of(child(&f.items, "items")?, out)?,
        _ => false,
    })
}

fn collect(e: &pb::ArrayEncoding, rows_mult: u64, out: &mut Vec<Stream>) -> Result<bool> {
    match variant(e)? {
        E::Flat(flat) => {
            let Some(buffer) = flat.buffer.as_ref() else {
                return Ok(false);
            };
            let compressed = !crate::v2_0::decode::is_uncompressed(flat);
            if compressed || buffer.buffer_type != pb::buffer::BufferType::Page as i32 {
                return Ok(false);
            }
            let Some(bits) = flat.bits_per_value.checked_mul(rows_mult) else {
                return Ok(false);
            };
            out.push(Stream {
                buffer_index: buffer.buffer_index,
                bits_per_row: bits,
            });
            Ok(true)
        }
        E::Nullable(n) => match n.nullability.as_ref() {
            Some(Nullability::NoNulls(inner)) => collect(child(&inner.values, "values")?, rows_mult, out),
            Some(Nullability::SomeNulls(inner)) => Ok(collect(child(&inner.validity, "validity")?, rows_mult, out)?
                && collect(child(&inner.values, "values")?, rows_mult, out)?),
            Some(Nullability::AllNulls(_)) => Ok(true),
            None => Ok(false),
        },
        E::FixedSizeList(fsl) => match rows_mult.checked_mul(u64::from(fsl.dimension)) {
            Some(m) => collect(child(&fsl.items, "items")?, m, out),
            None => Ok(false),
        },
        _ => Ok(false),
    }
}

/// The byte range of `stream` holding rows `rows`.
pub fn stream_byte_range(stream: &Stream, rows: &Range<u64>) -> Range<u64> {
    let start_bit = rows.start.saturating_mul(stream.bits_per_row);
    let end_bit = rows.end.saturating_mul(stream.bits_per_row);
    (start_bit / 8)..end_bit.div_ceil(8)
}

/// Given the bytes fetched with [`stream_byte_range`], a buffer whose bit 0 is the first
/// requested row (copied only when the rows start mid-byte).
pub fn stream_rows(stream: &Stream, rows: &Range<u64>, fetched: &Buffer) -> Buffer {
    let start_bit = rows.start.saturating_mul(stream.bits_per_row);
    let nbits = (rows.end - rows.start).saturating_mul(stream.bits_per_row);
    let shift = (start_bit % 8) as usize;
    if shift == 0 {
        fetched.clone()
    } else {
        bitmap_from(fetched, shift, nbits as usize)
    }
}
