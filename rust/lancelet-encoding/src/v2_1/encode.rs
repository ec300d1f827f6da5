//! Compressing the visible values of one Lance 2.1 / 2.2 mini-block page.
//!
//! [`compress_mini_block`] turns the values of one page (an Arrow array of a leaf type)
//! into mini-block *chunks* of value buffers, each holding a power-of-two number of
//! values (the last chunk any number), plus the [`pb21::CompressiveEncoding`] that tells
//! [`super::values::decode_chunk`] how to read them. It computes every applicable
//! encoding and keeps the smallest:
//!
//! * `Flat` — raw little-endian values (bool: an LSB-first bitmap);
//! * `InlineBitpacking` — 1024 values per chunk, one FastLanes block with its own bit
//!   width (ints, floats by bit pattern, temporal types);
//! * `Rle` — run values plus `u8` run lengths (long runs);
//! * `Variable` — strings and binary, offsets then bytes per chunk;
//! * `Fsst` — `Variable` over FSST-compressed strings;
//! * dictionary — `u32` indices bit-packed, the distinct items in one block;
//! * `FixedSizeList` — fixed-size lists of fixed-width items (with item validity);
//! * `General` (zstd / LZ4, optionally over `ByteStreamSplit`) when field metadata asks
//!   for it.
//!
//! [`compress_levels`] does the same for repetition / definition levels, which follow the
//! value chunks. Byte formats are those pylance 14 writes (see the facts notes).

use super::hashing::{fast_map, FastMap};

use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef};
use arrow_data::ArrayData;
use arrow_schema::DataType;
use lancelet_proto::pb21::{self, compressive_encoding::Compression as C, CompressionScheme};
use prost::Message;

use super::bitpack::{pack_block, pack_block_into, packed_block_bytes, push_uint, BLOCK};
use super::fsst::Compressor;
use crate::{Error, Result};

mod strategy;

pub use strategy::compress_mini_block;

/// Most bytes the value buffers of one chunk may take, counting 4 header bytes per
/// buffer and each buffer padded to 8 (pylance: "a miniblock chunk is limited to 8186
/// bytes").
pub const MAX_CHUNK_BYTES: usize = 8186;

/// Most values in one chunk.
pub const MAX_CHUNK_VALUES: usize = 4096;

/// Variable-width chunks grow (by doubling) while their buffer stays within this size.
const VAR_CHUNK_TARGET: usize = 4096;

/// Variable-width pages with at least this many bytes of data are tried with FSST.
const FSST_MIN_BYTES: usize = 8 * 1024;

/// FSST is only tried when some value is at least this long.
const FSST_MIN_MAX_LEN: usize = 5;

/// Dictionaries are only tried on pages of at least this many values.
const DICT_MIN_VALUES: usize = 100;

/// A dictionary must make the page smaller than this fraction of the plain encoding.
const DICT_MAX_RATIO: f64 = 0.8;

/// Padding after the bytes of a variable-width chunk buffer.
const VAR_PAD: u8 = 0x48;

/// Default zstd level.
const ZSTD_DEFAULT_LEVEL: i32 = 3;

/// Options for compressing one page's values.
#[derive(Debug, Clone, Default)]
pub struct EncodeOptions {
    /// Writing file format 2.2 (else 2.1): 2.2 allows dictionaries on fixed-width values
    /// and wraps dictionaries in General(LZ4).
    pub v2_2: bool,
    /// Field metadata hint "lance-encoding:compression": None, or
    /// Some("zstd" | "lz4" | "fsst" | "none").
    pub compression: Option<String>,
    /// "lance-encoding:compression-level" (zstd level; default 3).
    pub compression_level: Option<i32>,
    /// Dictionary encoding disabled (e.g. field metadata "lance-encoding:dict-size-ratio"
    /// = "0"); default false.
    pub no_dictionary: bool,
    /// Bytes per dictionary index: an Arrow dictionary column's key width (pylance
    /// checks that they agree); `None` = 4 (`u32` indices).
    pub dictionary_index_bytes: Option<usize>,
}

/// One mini-block chunk: `num_values` values (a power of two for every chunk but the
/// last) in `buffers`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chunk {
    /// Values in the chunk.
    pub num_values: usize,
    /// The chunk's value buffers (unpadded), as many as the page's `num_buffers`.
    pub buffers: Vec<Vec<u8>>,
}

/// A page's values compressed for the mini-block layout.
#[derive(Debug, Clone)]
pub struct MiniBlockValues {
    /// How each chunk's buffers decode (what [`super::values::decode_chunk`] takes).
    pub encoding: pb21::CompressiveEncoding,
    /// The chunks, in value order.
    pub chunks: Vec<Chunk>,
    /// Dictionary (values are then `u32` indices): the block-encoded items, their encoding
    /// (what [`super::values::decode_block`] takes) and count. Stored as
    /// `(encoding, block bytes, item count)`.
    pub dictionary: Option<(pb21::CompressiveEncoding, Vec<u8>, u64)>,
}

impl MiniBlockValues {
    /// Approximate bytes of the page's value data: chunk buffers (padded, with their
    /// headers), the dictionary and the encoding description (an FSST symbol table).
    pub fn encoded_size(&self) -> usize {
        let chunks: usize = self
            .chunks
            .iter()
            .map(|c| align8(2 + 4 * c.buffers.len()) + c.buffers.iter().map(|b| align8(b.len())).sum::<usize>())
            .sum();
        let dict = self
            .dictionary
            .as_ref()
            .map(|(e, b, _)| b.len() + e.encoded_len())
            .unwrap_or(0);
        chunks + dict + self.encoding.encoded_len()
    }
}

fn align8(x: usize) -> usize {
    x.div_ceil(8) * 8
}

// ---------------------------------------------------------------------------------------
// Encoding descriptions.

fn node(c: C) -> pb21::CompressiveEncoding {
    pb21::CompressiveEncoding { compression: Some(c) }
}

pub(crate) fn flat_enc(bits: u64) -> pb21::CompressiveEncoding {
    node(C::Flat(pb21::Flat {
        bits_per_value: bits,
        data: None,
    }))
}

fn var_enc(large: bool) -> pb21::CompressiveEncoding {
    node(C::Variable(Box::new(pb21::Variable {
        offsets: Some(Box::new(flat_enc(if large { 64 } else { 32 }))),
        values: None,
    })))
}

fn inline_enc(bits: u64) -> pb21::CompressiveEncoding {
    node(C::InlineBitpacking(pb21::InlineBitpacking {
        uncompressed_bits_per_value: bits,
        values: None,
    }))
}

fn general_enc(
    scheme: CompressionScheme,
    level: Option<i32>,
    inner: pb21::CompressiveEncoding,
) -> pb21::CompressiveEncoding {
    node(C::General(Box::new(pb21::General {
        compression: Some(pb21::BufferCompression {
            scheme: scheme as i32,
            level,
        }),
        values: Some(Box::new(inner)),
    })))
}

// ---------------------------------------------------------------------------------------
// The page's values, extracted from Arrow.

/// Items of a fixed-size list.
enum Items<'a> {
    /// Booleans: an LSB-first bitmap starting at bit 0.
    Bool(Vec<u8>),
    /// Fixed-width items of `width` bytes.
    Fixed { width: usize, data: &'a [u8] },
}

/// The visible values of one page in the shapes the encoders work on.
enum Page<'a> {
    /// Booleans: an LSB-first bitmap starting at bit 0.
    Bool { bits: Vec<u8>, len: usize },
    /// Fixed-width values of `width` bytes.
    Fixed { width: usize, data: &'a [u8], len: usize },
    /// Variable-width values: `len + 1` offsets from 0 into `data`.
    Var {
        offsets: Vec<u64>,
        data: &'a [u8],
        large: bool,
    },
    /// Fixed-size lists of `dim` items (item validity bitmap when some item is null).
    /// Nested fixed-size lists have their inner sizes in `inner` (outer first), and
    /// `items` holds the innermost values, `dim * inner` of them per list.
    Fsl {
        dim: usize,
        inner: Vec<usize>,
        items: Items<'a>,
        validity: Option<Vec<u8>>,
        len: usize,
    },
}

impl Page<'_> {
    fn len(&self) -> usize {
        match self {
            Page::Bool { len, .. } | Page::Fixed { len, .. } | Page::Fsl { len, .. } => *len,
            Page::Var { offsets, .. } => offsets.len() - 1,
        }
    }
}

/// Bytes per value of a fixed-width (non-boolean) type.
fn fixed_width(dt: &DataType) -> Option<usize> {
    match dt {
        DataType::FixedSizeBinary(w) => usize::try_from(*w).ok().filter(|w| *w > 0),
        DataType::Boolean | DataType::Null => None,
        other => other.primitive_width(),
    }
}

/// The bytes of `len` fixed-width values of `data` (its offset applied).
fn fixed_bytes(data: &ArrayData, width: usize) -> Result<&[u8]> {
    let (off, len) = (data.offset(), data.len());
    data.buffers()
        .first()
        .and_then(|b| b.as_slice().get(off * width..(off + len) * width))
        .ok_or_else(|| Error::InvalidInput(format!("array of {} has a short value buffer", data.data_type())))
}

/// `len` bits of `bits` starting at bit `start`, re-based to bit 0.
fn bit_range(bits: &[u8], start: usize, len: usize) -> Vec<u8> {
    if start.is_multiple_of(8) {
        return bits[start / 8..(start + len).div_ceil(8)].to_vec();
    }
    let mut out = vec![0u8; len.div_ceil(8)];
    for i in 0..len {
        let j = start + i;
        if bits[j / 8] >> (j % 8) & 1 == 1 {
            out[i / 8] |= 1 << (i % 8);
        }
    }
    out
}

fn extract<'a>(array: &'a dyn Array, data: &'a ArrayData) -> Result<Page<'a>> {
    let dt = array.data_type();
    let len = array.len();
    match dt {
        DataType::Boolean => Ok(Page::Bool {
            bits: array.as_boolean().values().sliced().to_vec(),
            len,
        }),
        DataType::Utf8 | DataType::Binary | DataType::LargeUtf8 | DataType::LargeBinary => {
            let large = matches!(dt, DataType::LargeUtf8 | DataType::LargeBinary);
            if len == 0 {
                return Ok(Page::Var {
                    offsets: vec![0],
                    data: &[],
                    large,
                });
            }
            let raw: Vec<u64> = if large {
                data.buffer::<i64>(0)
                    .get(..=len)
                    .map(|o| o.iter().map(|x| *x as u64).collect())
            } else {
                data.buffer::<i32>(0)
                    .get(..=len)
                    .map(|o| o.iter().map(|x| *x as u32 as u64).collect())
            }
            .ok_or_else(|| Error::InvalidInput(format!("{dt} array with short offsets")))?;
            let (start, end) = (raw[0], raw[len]);
            let bytes = data
                .buffers()
                .get(1)
                .and_then(|b| b.as_slice().get(start as usize..end as usize))
                .ok_or_else(|| Error::InvalidInput(format!("{dt} array with a short data buffer")))?;
            Ok(Page::Var {
                offsets: raw.iter().map(|o| o.saturating_sub(start)).collect(),
                data: bytes,
                large,
            })
        }
        DataType::FixedSizeList(item, d) => {
            let dim = usize::try_from(*d).map_err(|_| Error::InvalidInput(format!("{dt}: negative list size")))?;
            fsl_page(data, item.data_type(), dim, len)
        }
        other => match fixed_width(other) {
            Some(width) => Ok(Page::Fixed {
                width,
                data: fixed_bytes(data, width)?,
                len,
            }),
            None => Err(Error::Unsupported(format!("mini-block values of type {other}"))),
        },
    }
}

/// A fixed-size-list page: the `len * dim` items of `data`'s child (offsets applied).
fn fsl_page<'a>(data: &'a ArrayData, idt: &DataType, dim: usize, len: usize) -> Result<Page<'a>> {
    let child = data
        .child_data()
        .first()
        .ok_or_else(|| Error::InvalidInput("fixed-size list without a child".into()))?;
    let n = len * dim;
    // First item, relative to the child array and absolute in its buffers.
    let rel = data.offset() * dim;
    let first = child.offset() + rel;
    let short = || Error::InvalidInput("fixed-size list with a short item buffer".into());
    let validity = match child.nulls() {
        Some(nulls) if rel + n <= nulls.len() => {
            let range = nulls.inner().slice(rel, n);
            (range.count_set_bits() < n).then(|| range.sliced().to_vec())
        }
        Some(_) => return Err(short()),
        None => None,
    };
    // Nested fixed-size lists: walk down to the innermost values (no nulls below the
    // outer list: its own nulls are definition levels).
    // Null buffers are logical (offset applied); a child's logical index is its parent's
    // physical index times the list size. Nulls below a null outer list are hidden by it
    // (its definition level); any other null inside a nested list cannot be stored here.
    let outer = data.nulls();
    let real_nulls = |a: &ArrayData, logical: usize, n: usize, per_outer: usize| -> bool {
        let Some(v) = a.nulls() else { return false };
        if logical + n > v.len() {
            return true;
        }
        let v = v.slice(logical, n);
        v.null_count() > 0 && (0..n).any(|j| v.is_null(j) && outer.is_none_or(|o| o.is_valid(j / per_outer)))
    };
    let (mut child, mut idt, mut first, mut n) = (child, idt, first, n);
    let mut inner = Vec::new();
    let mut per_outer = dim;
    let mut validity = validity;
    while let DataType::FixedSizeList(item, d) = idt {
        if validity.is_some() {
            if real_nulls(child, rel, len * dim, dim) {
                return Err(Error::Unsupported("nulls inside nested fixed-size lists".into()));
            }
            validity = None;
        }
        let d = usize::try_from(*d).map_err(|_| Error::InvalidInput("negative list size".into()))?;
        let next = child.child_data().first().ok_or_else(short)?;
        let (logical, count) = (first * d, n * d);
        per_outer *= d;
        if real_nulls(next, logical, count, per_outer) {
            return Err(Error::Unsupported("nulls inside nested fixed-size lists".into()));
        }
        first = next.offset() + logical;
        n = count;
        inner.push(d);
        child = next;
        idt = item.data_type();
    }
    let buf = child.buffers().first().ok_or_else(short)?.as_slice();
    let items = match idt {
        DataType::Boolean => {
            if (first + n).div_ceil(8) > buf.len() {
                return Err(short());
            }
            Items::Bool(bit_range(buf, first, n))
        }
        idt => {
            let width = fixed_width(idt)
                .ok_or_else(|| Error::Unsupported(format!("mini-block fixed-size lists of {idt} items")))?;
            Items::Fixed {
                width,
                data: buf.get(first * width..(first + n) * width).ok_or_else(short)?,
            }
        }
    };
    Ok(Page::Fsl {
        dim,
        inner,
        items,
        validity,
        len,
    })
}

// ---------------------------------------------------------------------------------------
// Chunkers.

/// Whether value buffers of these sizes fit one chunk.
fn fits(sizes: &[usize]) -> bool {
    sizes.iter().map(|s| align8(*s) + 4).sum::<usize>() <= MAX_CHUNK_BYTES
}

/// The largest power of two `n <= MAX_CHUNK_VALUES` whose buffers (`sizes(n)`) fit a chunk.
fn chunk_values(sizes: impl Fn(usize) -> Vec<usize>) -> Result<usize> {
    let mut n = MAX_CHUNK_VALUES;
    while n > 1 && !fits(&sizes(n)) {
        n /= 2;
    }
    if fits(&sizes(n)) {
        Ok(n)
    } else {
        Err(Error::Unsupported(format!(
            "value too wide for mini-block encoding: one value needs {:?} bytes but a chunk is limited to {MAX_CHUNK_BYTES}",
            sizes(1)
        )))
    }
}

/// Splits `len` values into chunks of `per` values.
fn ranges(len: usize, per: usize) -> impl Iterator<Item = (usize, usize)> {
    (0..len.div_ceil(per)).map(move |i| (i * per, ((i + 1) * per).min(len)))
}

fn read_le(b: &[u8]) -> u64 {
    let mut a = [0u8; 8];
    a[..b.len()].copy_from_slice(b);
    u64::from_le_bytes(a)
}

/// `Flat` chunks of fixed-width values.
pub(crate) fn flat(width: usize, data: &[u8], len: usize) -> Result<MiniBlockValues> {
    let per = chunk_values(|n| vec![n * width])?;
    let chunks = ranges(len, per)
        .map(|(a, b)| Chunk {
            num_values: b - a,
            buffers: vec![data[a * width..b * width].to_vec()],
        })
        .collect();
    Ok(MiniBlockValues {
        encoding: flat_enc(width as u64 * 8),
        chunks,
        dictionary: None,
    })
}

/// `Flat(1)` chunks of booleans.
fn flat_bool(bits: &[u8], len: usize) -> Result<MiniBlockValues> {
    let per = chunk_values(|n| vec![n.div_ceil(8)])?;
    let chunks = ranges(len, per)
        .map(|(a, b)| Chunk {
            num_values: b - a,
            buffers: vec![bit_range(bits, a, b - a)],
        })
        .collect();
    Ok(MiniBlockValues {
        encoding: flat_enc(1),
        chunks,
        dictionary: None,
    })
}

/// Bit width needed by the values (`width` bytes each) of one block.
fn block_bits(block: &[u8], width: usize) -> usize {
    let or = block.chunks_exact(width).fold(0u64, |acc, v| acc | read_le(v));
    (64 - or.leading_zeros()) as usize
}

/// Size of the `InlineBitpacking` encoding (without packing).
fn inline_size(width: usize, data: &[u8]) -> usize {
    data.chunks(BLOCK * width)
        .map(|b| align8(2 + 4) + align8(width + packed_block_bytes(block_bits(b, width))))
        .sum()
}

/// `InlineBitpacking` chunks: 1024 values each, one header word holding the bit width,
/// then one FastLanes block (the last one zero padded).
fn inline(width: usize, data: &[u8], len: usize) -> Result<MiniBlockValues> {
    let w = width * 8;
    let mut chunks = Vec::with_capacity(len.div_ceil(BLOCK));
    let mut block = [0u64; BLOCK];
    for (a, b) in ranges(len, BLOCK) {
        let src = &data[a * width..b * width];
        let bits = block_bits(src, width);
        block.fill(0);
        for (slot, v) in block.iter_mut().zip(src.chunks_exact(width)) {
            *slot = read_le(v);
        }
        let mut buf = Vec::with_capacity(width + packed_block_bytes(bits));
        push_uint(&mut buf, bits as u64, width);
        pack_block_into(&block, w, bits, &mut buf)?;
        chunks.push(Chunk {
            num_values: b - a,
            buffers: vec![buf],
        });
    }
    Ok(MiniBlockValues {
        encoding: inline_enc(w as u64),
        chunks,
        dictionary: None,
    })
}

/// Number of runs (lengths capped at 255) in fixed-width values.
fn count_runs(width: usize, data: &[u8]) -> usize {
    let mut runs = 0usize;
    let mut cur: Option<&[u8]> = None;
    let mut run = 0usize;
    for v in data.chunks_exact(width) {
        if cur == Some(v) && run < 255 {
            run += 1;
        } else {
            runs += 1;
            cur = Some(v);
            run = 1;
        }
    }
    runs
}

/// Run values and `u8` run lengths of values `[a, b)`.
fn runs_of(width: usize, data: &[u8], a: usize, b: usize) -> (Vec<u8>, Vec<u8>) {
    let (mut vals, mut lens) = (Vec::new(), Vec::<u8>::new());
    let mut cur: Option<&[u8]> = None;
    for v in data[a * width..b * width].chunks_exact(width) {
        match (cur, lens.last_mut()) {
            (Some(c), Some(l)) if c == v && *l < 255 => *l += 1,
            _ => {
                vals.extend_from_slice(v);
                lens.push(1);
                cur = Some(v);
            }
        }
    }
    (vals, lens)
}

/// `Rle` chunks (4096 values, fewer when the runs do not fit).
fn rle(width: usize, data: &[u8], len: usize) -> Result<MiniBlockValues> {
    let mut chunks = Vec::new();
    let mut a = 0;
    while a < len {
        let mut n = MAX_CHUNK_VALUES;
        let (vals, lens) = loop {
            let b = (a + n).min(len);
            let (vals, lens) = runs_of(width, data, a, b);
            if fits(&[vals.len(), lens.len()]) {
                break (vals, lens);
            }
            if n == 1 {
                return Err(Error::Unsupported(format!(
                    "{width}-byte values are too wide for mini-block run-length chunks"
                )));
            }
            n /= 2;
        };
        let b = (a + n).min(len);
        chunks.push(Chunk {
            num_values: b - a,
            buffers: vec![vals, lens],
        });
        a = b;
    }
    Ok(MiniBlockValues {
        encoding: node(C::Rle(Box::new(pb21::Rle {
            values: Some(Box::new(flat_enc(width as u64 * 8))),
            run_lengths: Some(Box::new(flat_enc(8))),
        }))),
        chunks,
        dictionary: None,
    })
}

/// Size of a variable-width chunk buffer of values `[a, b)`, padding included.
fn var_chunk_size(offsets: &[u64], a: usize, b: usize, ow: usize) -> usize {
    let raw = (b - a + 1) * ow + (offsets[b] - offsets[a]) as usize;
    raw.div_ceil(ow) * ow
}

/// One variable-width chunk buffer: `n + 1` offsets (positions inside the buffer), the
/// bytes, padded with 0x48 to the offset width.
fn var_chunk(offsets: &[u64], data: &[u8], a: usize, b: usize, ow: usize) -> Vec<u8> {
    let size = var_chunk_size(offsets, a, b, ow);
    let mut buf = Vec::with_capacity(size);
    // Position of value `i` = header size + offsets[i] - offsets[a]: `base` may be
    // "negative" (offsets[a] past the header), hence wrapping arithmetic, exact mod 2^64.
    let base = ((b - a + 1) * ow) as u64;
    let base = base.wrapping_sub(offsets[a]);
    for o in &offsets[a..=b] {
        push_uint(&mut buf, o.wrapping_add(base), ow);
    }
    buf.extend_from_slice(&data[offsets[a] as usize..offsets[b] as usize]);
    buf.resize(size, VAR_PAD);
    buf
}

/// Value ranges `[a, b)` of the `Variable` chunks: power-of-two counts grown while the
/// buffer stays within [`VAR_CHUNK_TARGET`] (a single value may take up to the chunk
/// limit).
fn var_plan(offsets: &[u64], large: bool) -> Result<Vec<(usize, usize)>> {
    let ow = if large { 8 } else { 4 };
    let len = offsets.len() - 1;
    let mut plan = Vec::with_capacity(len / 32 + 1);
    let mut a = 0;
    while a < len {
        if !fits(&[var_chunk_size(offsets, a, a + 1, ow)]) {
            return Err(Error::Unsupported(format!(
                "value too wide for mini-block encoding: {} bytes but a chunk is limited to {MAX_CHUNK_BYTES}",
                offsets[a + 1] - offsets[a]
            )));
        }
        let mut n = 1;
        while n < MAX_CHUNK_VALUES && a + n < len {
            let b = (a + 2 * n).min(len);
            let size = var_chunk_size(offsets, a, b, ow);
            if size > VAR_CHUNK_TARGET || !fits(&[size]) {
                break;
            }
            n *= 2;
        }
        let b = (a + n).min(len);
        plan.push((a, b));
        a = b;
    }
    Ok(plan)
}

/// `Variable` chunks (see [`var_plan`]).
fn var_chunks(offsets: &[u64], data: &[u8], large: bool) -> Result<Vec<Chunk>> {
    let ow = if large { 8 } else { 4 };
    Ok(var_plan(offsets, large)?
        .into_iter()
        .map(|(a, b)| Chunk {
            num_values: b - a,
            buffers: vec![var_chunk(offsets, data, a, b, ow)],
        })
        .collect())
}

fn variable(offsets: &[u64], data: &[u8], large: bool) -> Result<MiniBlockValues> {
    Ok(MiniBlockValues {
        encoding: var_enc(large),
        chunks: var_chunks(offsets, data, large)?,
        dictionary: None,
    })
}

fn var_values<'a>(offsets: &'a [u64], data: &'a [u8]) -> impl Iterator<Item = &'a [u8]> + 'a {
    offsets.windows(2).map(move |w| &data[w[0] as usize..w[1] as usize])
}

/// `Fsst` over `Variable` chunks of the compressed strings.
fn fsst(offsets: &[u64], data: &[u8], large: bool) -> Result<MiniBlockValues> {
    let compressor = Compressor::train(var_values(offsets, data));
    let (coffsets, cdata) = compressor.compress_values(var_values(offsets, data));
    Ok(MiniBlockValues {
        encoding: node(C::Fsst(Box::new(pb21::Fsst {
            symbol_table: compressor.symbol_table().into(),
            values: Some(Box::new(var_enc(large))),
        }))),
        chunks: var_chunks(&coffsets, &cdata, large)?,
        dictionary: None,
    })
}

/// `FixedSizeList{dim, has_validity, Flat}` chunks.
fn fixed_size_list(
    dims: (usize, &[usize]),
    items: &Items,
    validity: Option<&[u8]>,
    len: usize,
) -> Result<MiniBlockValues> {
    let item_bits = match items {
        Items::Bool(_) => 1,
        Items::Fixed { width, .. } => width * 8,
    };
    let (outer, inner) = dims;
    // Innermost values per list.
    let dim = inner.iter().product::<usize>() * outer;
    let per = chunk_values(|n| {
        let mut s = vec![(n * dim * item_bits).div_ceil(8)];
        if validity.is_some() {
            s.insert(0, (n * dim).div_ceil(8));
        }
        s
    })?;
    let chunks = ranges(len, per)
        .map(|(a, b)| {
            let (ia, ib) = (a * dim, b * dim);
            let mut buffers = Vec::with_capacity(2);
            if let Some(v) = validity {
                buffers.push(bit_range(v, ia, ib - ia));
            }
            buffers.push(match items {
                Items::Bool(bits) => bit_range(bits, ia, ib - ia),
                Items::Fixed { width, data } => data[ia * width..ib * width].to_vec(),
            });
            Chunk {
                num_values: b - a,
                buffers,
            }
        })
        .collect();
    // FixedSizeList(outer, FixedSizeList(inner..., Flat)), the validity on the outer list.
    let mut encoding = flat_enc(item_bits as u64);
    for (k, d) in std::iter::once(outer)
        .chain(inner.iter().copied())
        .enumerate()
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
    {
        encoding = node(C::FixedSizeList(Box::new(pb21::FixedSizeList {
            items_per_value: d as u64,
            has_validity: k == 0 && validity.is_some(),
            values: Some(Box::new(encoding)),
        })));
    }
    Ok(MiniBlockValues {
        encoding,
        chunks,
        dictionary: None,
    })
}

// ---------------------------------------------------------------------------------------
// Dictionary.

/// Compresses one buffer with `scheme`: LZ4 = `u32` size + raw block, zstd = `u64` size +
/// frame.
fn compress_buffer(scheme: CompressionScheme, level: Option<i32>, buf: &[u8]) -> Result<Vec<u8>> {
    match scheme {
        CompressionScheme::CompressionAlgorithmLz4 => {
            if u32::try_from(buf.len()).is_err() {
                return Err(Error::InvalidInput("an LZ4 buffer over 4 GiB".into()));
            }
            Ok(lz4_flex::block::compress_prepend_size(buf))
        }
        CompressionScheme::CompressionAlgorithmZstd => {
            let mut out = (buf.len() as u64).to_le_bytes().to_vec();
            let frame = zstd::bulk::compress(buf, level.unwrap_or(ZSTD_DEFAULT_LEVEL))
                .map_err(|e| Error::InvalidInput(format!("zstd compression failed: {e}")))?;
            out.extend(frame);
            Ok(out)
        }
        CompressionScheme::CompressionAlgorithmUnspecified => Ok(buf.to_vec()),
    }
}

/// The distinct values (in order of first appearance) and each value's index, or `None`
/// when there are more than `max_items` distinct values.
fn distinct<'a>(values: impl Iterator<Item = &'a [u8]>, max_items: usize) -> Option<(Vec<&'a [u8]>, Vec<u8>)> {
    let mut map: FastMap<&[u8], u32> = fast_map(max_items.min(256));
    let mut items = Vec::new();
    let mut indices = Vec::new();
    for v in values {
        let next = items.len() as u32;
        let i = *map.entry(v).or_insert(next);
        if i == next {
            if items.len() >= max_items {
                return None;
            }
            items.push(v);
        }
        indices.extend_from_slice(&i.to_le_bytes());
    }
    Some((items, indices))
}

/// Dictionary encoding: `u32` indices as `InlineBitpacking(32)`, the items as one block
/// (`Variable` block form for strings, `Flat` for fixed width), wrapped in General(LZ4)
/// at 2.2. `None` when there are too many distinct values.
fn dictionary(page: &Page, v2_2: bool, index_bytes: Option<usize>) -> Result<Option<MiniBlockValues>> {
    dictionary_with(page, v2_2, index_bytes, true)
}

/// A dictionary page of `page`, with indices of `index_bytes` (default 4); `None` when
/// the distinct values do not fit the indices or (`must_pay`) exceed half the values.
fn dictionary_with(
    page: &Page,
    v2_2: bool,
    index_bytes: Option<usize>,
    must_pay: bool,
) -> Result<Option<MiniBlockValues>> {
    let len = page.len();
    let index_bytes = index_bytes.unwrap_or(4);
    // Signed keys of `index_bytes` hold indices below 2^(8 * index_bytes - 1).
    let key_limit = if index_bytes >= 8 {
        usize::MAX
    } else {
        1usize << (8 * index_bytes - 1)
    };
    let max_items = if must_pay { (len / 2).max(1) } else { len.max(1) }.min(key_limit);
    let (items_enc, block, count, indices) = match page {
        Page::Var { offsets, data, large } => {
            let Some((items, indices)) = distinct(var_values(offsets, data), max_items) else {
                return Ok(None);
            };
            let ow = if *large { 8 } else { 4 };
            let total: usize = items.iter().map(|v| v.len()).sum();
            let start = 2 * ow + (items.len() + 1) * ow;
            let mut block = Vec::with_capacity(start + total);
            push_uint(&mut block, ow as u64 * 8, ow);
            push_uint(&mut block, start as u64, ow);
            let mut at = 0u64;
            push_uint(&mut block, 0, ow);
            for v in &items {
                at += v.len() as u64;
                push_uint(&mut block, at, ow);
            }
            for v in &items {
                block.extend_from_slice(v);
            }
            (var_enc(*large), block, items.len(), indices)
        }
        // Fixed-width dictionaries are a 2.2 choice, but an Arrow dictionary column of
        // fixed-width values is stored as one at 2.1 too (as pylance does).
        Page::Fixed { width, data, .. } if v2_2 || !must_pay => {
            let Some((items, indices)) = distinct(data.chunks_exact(*width), max_items) else {
                return Ok(None);
            };
            (flat_enc(*width as u64 * 8), items.concat(), items.len(), indices)
        }
        _ => return Ok(None),
    };
    let (enc, block) = if v2_2 {
        let b = compress_buffer(CompressionScheme::CompressionAlgorithmLz4, None, &block)?;
        (
            general_enc(CompressionScheme::CompressionAlgorithmLz4, None, items_enc),
            b,
        )
    } else {
        (items_enc, block)
    };
    let indices = if index_bytes == 4 {
        indices
    } else {
        indices
            .chunks_exact(4)
            .flat_map(|i| {
                let v = u64::from(u32::from_le_bytes([i[0], i[1], i[2], i[3]]));
                v.to_le_bytes().into_iter().take(index_bytes)
            })
            .collect()
    };
    let mut m = inline(index_bytes, &indices, len)?;
    m.dictionary = Some((enc, block, count as u64));
    Ok(Some(m))
}

// ---------------------------------------------------------------------------------------
// General compression.

/// Byte-stream-splits each chunk buffer of `width`-byte values (plane `k` = byte `k` of
/// every value).
fn byte_stream_split(mut m: MiniBlockValues, width: usize) -> MiniBlockValues {
    for c in &mut m.chunks {
        for buf in &mut c.buffers {
            let n = buf.len() / width;
            let mut out = vec![0u8; n * width];
            for (i, v) in buf.chunks_exact(width).enumerate() {
                for (k, byte) in v.iter().enumerate() {
                    out[k * n + i] = *byte;
                }
            }
            *buf = out;
        }
    }
    m.encoding = node(C::ByteStreamSplit(Box::new(pb21::ByteStreamSplit {
        values: Some(Box::new(m.encoding)),
    })));
    m
}

/// Wraps every chunk buffer in a general-purpose compression.
fn general(mut m: MiniBlockValues, scheme: CompressionScheme, level: Option<i32>) -> Result<MiniBlockValues> {
    for c in &mut m.chunks {
        for buf in &mut c.buffers {
            *buf = compress_buffer(scheme, level, buf)?;
        }
    }
    m.encoding = general_enc(scheme, level, m.encoding);
    Ok(m)
}

// ---------------------------------------------------------------------------------------
// Strategy.

/// Which kind of compression the field metadata asks for.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Hint {
    Auto,
    None,
    Fsst,
    General(CompressionScheme),
}

fn hint(opts: &EncodeOptions) -> Result<Hint> {
    match opts.compression.as_deref().map(|s| s.trim().to_ascii_lowercase()) {
        None => Ok(Hint::Auto),
        Some(s) => match s.as_str() {
            "" => Ok(Hint::Auto),
            "none" => Ok(Hint::None),
            "fsst" => Ok(Hint::Fsst),
            "zstd" => Ok(Hint::General(CompressionScheme::CompressionAlgorithmZstd)),
            "lz4" => Ok(Hint::General(CompressionScheme::CompressionAlgorithmLz4)),
            other => Err(Error::Unsupported(format!(
                "compression scheme {other:?} (expected zstd, lz4, fsst or none)"
            ))),
        },
    }
}

/// The plain encoding of a page: Flat, Variable or FixedSizeList{Flat}.
fn plain(page: &Page) -> Result<MiniBlockValues> {
    match page {
        Page::Bool { bits, len } => flat_bool(bits, *len),
        Page::Fixed { width, data, len } => flat(*width, data, *len),
        Page::Var { offsets, data, large } => variable(offsets, data, *large),
        Page::Fsl {
            dim,
            inner,
            items,
            validity,
            len,
        } => fixed_size_list((*dim, inner), items, validity.as_deref(), *len),
    }
}

// ---------------------------------------------------------------------------------------
// Levels.

/// Encodes `levels` (repetition or definition, `u16`) for mini-block chunks whose level
/// counts are `chunk_levels` (one per chunk, summing to `levels.len()`).
///
/// Returns the levels' encoding and one buffer per chunk, each decoded by
/// [`super::values::decode_levels`] with that chunk's count. The smallest of `Flat(16)`,
/// `InlineBitpacking(16)` (only for pages of at most 1024 levels, as pylance writes) and
/// `OutOfLineBitpacking(16, Flat(b))` (one page-wide bit width, each chunk packed
/// separately in headerless blocks of 1024, a short tail padded or raw) wins.
pub fn compress_levels(levels: &[u16], chunk_levels: &[usize]) -> Result<(pb21::CompressiveEncoding, Vec<Vec<u8>>)> {
    if chunk_levels.iter().sum::<usize>() != levels.len() {
        return Err(Error::InvalidInput(format!(
            "chunk level counts add up to {}, the page has {} levels",
            chunk_levels.iter().sum::<usize>(),
            levels.len()
        )));
    }
    let mut parts = Vec::with_capacity(chunk_levels.len());
    let mut at = 0;
    for n in chunk_levels {
        parts.push(&levels[at..at + n]);
        at += n;
    }
    let max = levels.iter().copied().max().unwrap_or(0);
    let bits = (16 - max.leading_zeros() as usize).max(1);
    let size = |bufs: &[Vec<u8>]| bufs.iter().map(|b| align8(b.len())).sum::<usize>();

    let flat: Vec<Vec<u8>> = parts
        .iter()
        .map(|p| p.iter().flat_map(|l| l.to_le_bytes()).collect())
        .collect();
    let mut best = (flat_enc(16), flat);

    let pack = |p: &[u16], b: usize| -> Result<Vec<u8>> {
        let mut block = [0u64; BLOCK];
        for (slot, l) in block.iter_mut().zip(p) {
            *slot = u64::from(*l);
        }
        pack_block(&block, 16, b)
    };

    if levels.len() <= BLOCK {
        let inline = parts
            .iter()
            .map(|p| {
                if p.is_empty() {
                    return Ok(Vec::new());
                }
                let b = p.iter().fold(0u16, |a, l| a | l);
                let b = 16 - b.leading_zeros() as usize;
                let mut buf = (b as u16).to_le_bytes().to_vec();
                buf.extend(pack(p, b)?);
                Ok(buf)
            })
            .collect::<Result<Vec<_>>>()?;
        if size(&inline) < size(&best.1) {
            best = (inline_enc(16), inline);
        }
    } else {
        let ool = parts
            .iter()
            .map(|p| {
                let mut buf = Vec::new();
                for block in p.chunks(BLOCK) {
                    let r = block.len();
                    // A short tail is stored raw when that is strictly smaller (a raw tail
                    // as long as a packed block would read as one).
                    if r < BLOCK && 2 * r < packed_block_bytes(bits) {
                        buf.extend(block.iter().flat_map(|l| l.to_le_bytes()));
                    } else {
                        buf.extend(pack(block, bits)?);
                    }
                }
                Ok(buf)
            })
            .collect::<Result<Vec<_>>>()?;
        if size(&ool) < size(&best.1) {
            let enc = node(C::OutOfLineBitpacking(Box::new(pb21::OutOfLineBitpacking {
                uncompressed_bits_per_value: 16,
                values: Some(Box::new(flat_enc(bits as u64))),
            })));
            best = (enc, ool);
        }
    }
    Ok(best)
}

/// A short name of the outermost compression of `e` (`"flat"`, `"fsst"`, `"rle"`, ...),
/// for tests and size reports.
pub fn variant_name(e: &pb21::CompressiveEncoding) -> &'static str {
    match e.compression.as_ref() {
        Some(C::Flat(_)) => "flat",
        Some(C::Variable(_)) => "variable",
        Some(C::InlineBitpacking(_)) => "inline",
        Some(C::OutOfLineBitpacking(_)) => "ool",
        Some(C::Fsst(_)) => "fsst",
        Some(C::Rle(_)) => "rle",
        Some(C::General(_)) => "general",
        Some(C::FixedSizeList(_)) => "fsl",
        Some(C::ByteStreamSplit(_)) => "bss",
        _ => "other",
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::v2_1::values::{decode_block, decode_chunk, decode_levels, Values};
    use arrow_array::types::*;
    use arrow_array::{
        BinaryArray, BooleanArray, Decimal128Array, FixedSizeBinaryArray, FixedSizeListArray, Float16Array, Int32Array,
        Int64Array, LargeStringArray, PrimitiveArray, StringArray,
    };
    use arrow_buffer::NullBuffer;
    use arrow_schema::Field;
    use proptest::prelude::*;

    use super::variant_name;

    /// Name of the encoding picked (`dict` for dictionaries).
    fn picked(m: &MiniBlockValues) -> &'static str {
        if m.dictionary.is_some() {
            "dict"
        } else {
            variant_name(&m.encoding)
        }
    }

    /// Decodes every chunk (and the dictionary) back to values.
    fn decode_all(m: &MiniBlockValues) -> Values {
        let parts = m
            .chunks
            .iter()
            .filter(|c| c.num_values > 0)
            .map(|c| {
                let bufs: Vec<&[u8]> = c.buffers.iter().map(|b| b.as_slice()).collect();
                decode_chunk(&m.encoding, &bufs, c.num_values).unwrap()
            })
            .collect();
        let v = Values::concat(parts).unwrap();
        match &m.dictionary {
            None => v,
            Some((enc, buf, n)) => {
                let dict = decode_block(enc, buf, *n as usize).unwrap();
                let Values::Fixed { bits: 32, data, len } = v else {
                    panic!("indices are not u32")
                };
                let idx: Vec<u64> = data
                    .chunks_exact(4)
                    .take(len)
                    .map(|c| u64::from(u32::from_le_bytes(c.try_into().unwrap())))
                    .collect();
                dict.take(&idx).unwrap()
            }
        }
    }

    /// Compresses, checks chunk shapes, decodes and compares valid positions.
    fn check(array: &ArrayRef, opts: &EncodeOptions) -> MiniBlockValues {
        let m = compress_mini_block(array.as_ref(), opts).unwrap();
        let total: usize = m.chunks.iter().map(|c| c.num_values).sum();
        assert_eq!(total, array.len());
        let nbufs = m.chunks.first().map(|c| c.buffers.len()).unwrap_or(1);
        for (i, c) in m.chunks.iter().enumerate() {
            assert_eq!(c.buffers.len(), nbufs);
            if i + 1 < m.chunks.len() {
                assert!(c.num_values.is_power_of_two() && c.num_values <= MAX_CHUNK_VALUES);
            }
            assert!(
                fits(&c.buffers.iter().map(|b| b.len()).collect::<Vec<_>>()),
                "chunk too large"
            );
        }
        let out = decode_all(&m).into_array(array.data_type()).unwrap();
        let out = out
            .to_data()
            .into_builder()
            .nulls(array.nulls().cloned())
            .build()
            .unwrap();
        assert_eq!(out, array.to_data(), "{} of {}", picked(&m), array.data_type());
        m
    }

    fn all_opts() -> Vec<EncodeOptions> {
        let mut v = Vec::new();
        for v2_2 in [false, true] {
            for c in [None, Some("zstd"), Some("lz4"), Some("fsst"), Some("none")] {
                v.push(EncodeOptions {
                    v2_2,
                    compression: c.map(String::from),
                    compression_level: None,
                    no_dictionary: false,
                    dictionary_index_bytes: None,
                });
            }
            v.push(EncodeOptions {
                v2_2,
                no_dictionary: true,
                ..Default::default()
            });
        }
        v
    }

    fn nulls(v: &[Option<i64>]) -> Option<NullBuffer> {
        Some(NullBuffer::from(v.iter().map(|x| x.is_some()).collect::<Vec<_>>()))
    }

    /// Arrays of many leaf types built from the same integers (None = null with an
    /// arbitrary payload).
    fn arrays(v: &[Option<i64>]) -> Vec<ArrayRef> {
        let raw: Vec<i64> = v.iter().map(|x| x.unwrap_or(0x5a5a_5a5a)).collect();
        let nb = nulls(v);
        fn prim<T: ArrowPrimitiveType>(vals: Vec<T::Native>, nb: &Option<NullBuffer>) -> ArrayRef {
            Arc::new(PrimitiveArray::<T>::new(vals.into(), nb.clone()))
        }
        let strs: Vec<String> = raw.iter().map(|x| format!("v{}", x.rem_euclid(1 << 20))).collect();
        let mut out: Vec<ArrayRef> = vec![
            prim::<Int8Type>(raw.iter().map(|x| *x as i8).collect(), &nb),
            prim::<UInt8Type>(raw.iter().map(|x| *x as u8).collect(), &nb),
            prim::<Int16Type>(raw.iter().map(|x| *x as i16).collect(), &nb),
            prim::<UInt16Type>(raw.iter().map(|x| *x as u16).collect(), &nb),
            prim::<Int32Type>(raw.iter().map(|x| *x as i32).collect(), &nb),
            prim::<UInt32Type>(raw.iter().map(|x| *x as u32).collect(), &nb),
            prim::<Int64Type>(raw.clone(), &nb),
            prim::<UInt64Type>(raw.iter().map(|x| *x as u64).collect(), &nb),
            prim::<Float32Type>(raw.iter().map(|x| *x as f32 / 7.0).collect(), &nb),
            prim::<Float64Type>(raw.iter().map(|x| *x as f64 / 3.0).collect(), &nb),
            prim::<Date32Type>(raw.iter().map(|x| *x as i32).collect(), &nb),
            prim::<TimestampMicrosecondType>(raw.clone(), &nb),
            Arc::new(Float16Array::new(
                raw.iter()
                    .map(|x| half::f16::from_f32(*x as f32))
                    .collect::<Vec<_>>()
                    .into(),
                nb.clone(),
            )),
            Arc::new(
                Decimal128Array::new(
                    raw.iter().map(|x| i128::from(*x) * 1000).collect::<Vec<_>>().into(),
                    nb.clone(),
                )
                .with_precision_and_scale(38, 3)
                .unwrap(),
            ),
            Arc::new(
                FixedSizeBinaryArray::try_new(
                    3,
                    raw.iter()
                        .flat_map(|x| x.to_le_bytes()[..3].to_vec())
                        .collect::<Vec<u8>>()
                        .into(),
                    nb.clone(),
                )
                .unwrap(),
            ),
            Arc::new(BooleanArray::new(raw.iter().map(|x| x & 1 == 1).collect(), nb.clone())),
            Arc::new(StringArray::from(
                v.iter()
                    .zip(&strs)
                    .map(|(o, s)| o.map(|_| s.as_str()))
                    .collect::<Vec<_>>(),
            )),
            Arc::new(LargeStringArray::from(
                v.iter()
                    .zip(&strs)
                    .map(|(o, s)| o.map(|_| s.as_str()))
                    .collect::<Vec<_>>(),
            )),
            Arc::new(BinaryArray::from(
                v.iter()
                    .zip(&strs)
                    .map(|(o, s)| o.map(|_| s.as_bytes()))
                    .collect::<Vec<_>>(),
            )),
        ];
        // FSL<int32, 3>: item nulls where the list is null, plus some inside valid lists.
        let items: Vec<Option<i32>> = v
            .iter()
            .flat_map(|x| match x {
                Some(x) => vec![
                    Some(*x as i32),
                    if x % 5 == 0 { None } else { Some(1) },
                    Some(-(*x as i32)),
                ],
                None => vec![None, None, None],
            })
            .collect();
        let child = Arc::new(Int32Array::from(items));
        out.push(Arc::new(
            FixedSizeListArray::try_new(
                Arc::new(Field::new("item", DataType::Int32, true)),
                3,
                child,
                nb.clone(),
            )
            .unwrap(),
        ));
        // FSL<bool, 5> without item nulls.
        let bits: Vec<bool> = raw.iter().flat_map(|x| (0..5).map(move |k| x >> k & 1 == 1)).collect();
        out.push(Arc::new(
            FixedSizeListArray::try_new(
                Arc::new(Field::new("item", DataType::Boolean, false)),
                5,
                Arc::new(BooleanArray::from(bits)),
                None,
            )
            .unwrap(),
        ));
        // sliced arrays (offsets applied)
        if v.len() > 3 {
            let sliced: Vec<ArrayRef> = out.iter().map(|a| a.slice(1, a.len() - 3)).collect();
            out.extend(sliced);
        }
        // a dictionary-typed column
        let keys = PrimitiveArray::<Int16Type>::new(raw.iter().map(|x| x.rem_euclid(3) as i16).collect(), nb);
        let dict = arrow_array::DictionaryArray::new(keys, Arc::new(StringArray::from(vec!["x", "yy", "zzz"])));
        out.push(Arc::new(dict));
        out
    }

    fn int_values() -> impl Strategy<Value = Vec<Option<i64>>> {
        (0usize..5, prop::collection::vec((any::<i64>(), 0u8..8), 0..3000)).prop_map(|(mode, v)| {
            v.into_iter()
                .enumerate()
                .map(|(i, (x, n))| {
                    (n != 0).then(|| match mode {
                        0 => x,
                        1 => x.rem_euclid(1000),
                        2 => (i / 300) as i64,
                        3 => x.rem_euclid(4) * 1_000_000_007,
                        _ => i as i64,
                    })
                })
                .collect()
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(24))]
        #[test]
        fn round_trip_every_type_and_option(v in int_values()) {
            let arrays = arrays(&v);
            for opts in all_opts() {
                for a in &arrays {
                    check(a, &opts);
                }
            }
        }

        #[test]
        fn levels_round_trip(levels in prop::collection::vec(0u16..8, 0..5000), max in 1u16..600, cut in 1usize..3000) {
            let levels: Vec<u16> = levels.iter().map(|l| l % max).collect();
            let mut per = Vec::new();
            let mut left = levels.len();
            while left > 0 {
                let n = left.min(cut);
                per.push(n);
                left -= n;
            }
            let (enc, bufs) = compress_levels(&levels, &per).unwrap();
            prop_assert_eq!(bufs.len(), per.len());
            let mut got = Vec::new();
            for (b, n) in bufs.iter().zip(&per) {
                got.extend(decode_levels(&enc, b, *n).unwrap());
            }
            prop_assert_eq!(got, levels);
        }
    }

    #[test]
    fn every_encoding_is_reachable() {
        let mut seen = std::collections::BTreeSet::new();
        let runs: Vec<Option<i64>> = (0..5000).map(|i| Some(i / 1000)).collect();
        let spread: Vec<Option<i64>> = (0..5000).map(|i| Some(i * 7919 % 1000)).collect();
        for opts in all_opts() {
            for a in arrays(&runs).into_iter().chain(arrays(&spread)) {
                let m = check(&a, &opts);
                seen.insert(picked(&m));
                if let Some(C::General(g)) = m.encoding.compression.as_ref() {
                    seen.insert(variant_name(g.values.as_ref().unwrap()));
                }
            }
        }
        for e in [
            "flat", "inline", "rle", "variable", "dict", "fsst", "fsl", "general", "bss",
        ] {
            assert!(seen.contains(e), "{e} never picked: {seen:?}");
        }
    }

    #[test]
    fn picks_like_pylance() {
        let opts = EncodeOptions::default();
        let sorted: ArrayRef = Arc::new(Int32Array::from_iter_values(0..10_000));
        let m = check(&sorted, &opts);
        assert_eq!(picked(&m), "inline");
        assert_eq!(m.chunks.len(), 10);

        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let random: ArrayRef = Arc::new(Int64Array::from_iter_values((0..10_000).map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as i64
        })));
        let m = check(&random, &opts);
        assert_eq!(picked(&m), "flat");
        assert!(m.chunks.iter().rev().skip(1).all(|c| c.num_values == 512));

        let low: ArrayRef = Arc::new(StringArray::from_iter_values(
            (0..1000).map(|i| ["red", "green", "blue"][i % 3]),
        ));
        for v2_2 in [false, true] {
            let m = check(
                &low,
                &EncodeOptions {
                    v2_2,
                    ..Default::default()
                },
            );
            assert_eq!(picked(&m), "dict");
            let (enc, block, n) = m.dictionary.as_ref().unwrap();
            assert_eq!(*n, 3);
            assert_eq!(variant_name(enc), if v2_2 { "general" } else { "variable" });
            if !v2_2 {
                // u32 32 | u32 data start | offsets | bytes (facts §4.6)
                assert_eq!(&block[..8], &[32, 0, 0, 0, 24, 0, 0, 0]);
                assert_eq!(&block[24..], b"redgreenblue");
            }
        }
        let m = check(
            &low,
            &EncodeOptions {
                no_dictionary: true,
                ..Default::default()
            },
        );
        assert_eq!(picked(&m), "variable");

        let words = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "theta", "lambda"];
        let eng: ArrayRef =
            Arc::new(StringArray::from_iter_values((0..3000).map(|i| {
                format!("{} {} {} {}", words[i % 8], words[(i / 8) % 8], words[(i / 64) % 8], i)
            })));
        let m = check(&eng, &opts);
        let plain = compress_mini_block(
            eng.as_ref(),
            &EncodeOptions {
                compression: Some("none".into()),
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(
            picked(&m),
            "fsst",
            "fsst {} vs plain {}",
            m.encoded_size(),
            plain.encoded_size()
        );
        assert!(m.encoded_size() < plain.encoded_size());
    }

    #[test]
    fn formats_match_the_facts() {
        // Variable chunk: offsets are positions in the buffer, bytes padded with 0x48.
        let a: ArrayRef = Arc::new(StringArray::from(vec![Some("a"), None, Some(""), Some("eeeee")]));
        let m = check(&a, &EncodeOptions::default());
        assert_eq!(
            m.chunks[0].buffers[0],
            [20u32, 21, 21, 21, 26]
                .iter()
                .flat_map(|x| x.to_le_bytes())
                .chain(*b"aeeeee\x48\x48")
                .collect::<Vec<u8>>()
        );
        // bool Flat(1)
        let b: ArrayRef = Arc::new(BooleanArray::from(vec![
            Some(true),
            None,
            Some(true),
            None,
            Some(false),
        ]));
        let m = check(&b, &EncodeOptions::default());
        assert_eq!(m.chunks[0].buffers[0], vec![0b101]);
        // RLE of 10 runs of 1000
        let r: ArrayRef = Arc::new(Int32Array::from_iter_values((0..10_000).map(|i| i / 1000)));
        let m = check(&r, &EncodeOptions::default());
        assert_eq!(picked(&m), "rle");
        assert_eq!(m.chunks[0].num_values, 4096);
        assert_eq!(&m.chunks[0].buffers[1][..4], &[255, 255, 255, 235]);
        // zstd: u64 size + frame
        let z = check(
            &r,
            &EncodeOptions {
                compression: Some("zstd".into()),
                ..Default::default()
            },
        );
        assert_eq!(
            &z.chunks[0].buffers[0][..12],
            &[0, 16, 0, 0, 0, 0, 0, 0, 0x28, 0xb5, 0x2f, 0xfd]
        );
        // tiny int pages stay flat
        let t: ArrayRef = Arc::new(Int32Array::from(vec![1, 2, 3, 4, 5]));
        assert_eq!(picked(&check(&t, &EncodeOptions::default())), "flat");
    }

    #[test]
    fn unsupported_types_are_errors() {
        let l = arrow_array::ListArray::from_iter_primitive::<Int32Type, _, _>(vec![Some(vec![Some(1)])]);
        assert!(matches!(
            compress_mini_block(&l, &EncodeOptions::default()),
            Err(Error::Unsupported(_))
        ));
        let wide: ArrayRef = Arc::new(StringArray::from(vec!["x".repeat(9000)]));
        assert!(matches!(
            compress_mini_block(wide.as_ref(), &EncodeOptions::default()),
            Err(Error::Unsupported(_))
        ));
        let bad = EncodeOptions {
            compression: Some("brotli".into()),
            ..Default::default()
        };
        assert!(compress_mini_block(&Int32Array::from(vec![1]), &bad).is_err());
        assert!(compress_levels(&[1, 2], &[3]).is_err());
    }
}
