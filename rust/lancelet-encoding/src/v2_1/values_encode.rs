//! Compressing the visible values of one Lance 2.1 / 2.2 mini-block page.
//!
//! [`compress_mini_block`] turns the values of one page (an Arrow array of a leaf type)
//! into mini-block *chunks* of value buffers, each holding a power-of-two number of
//! values (the last chunk any number), plus the [`pb21::CompressiveEncoding`] that tells
//! [`super::values_decode::decode_chunk`] how to read them. It computes every applicable
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
//!
//! The inverse of [`super::values_decode`]. Submodules: `extract` (Arrow arrays into the
//! shapes the encoders take), `fixed` (flat, bit-packed, run-length, fixed-size lists),
//! `variable` (strings and binary, FSST), `dictionary`, `general` (zstd / LZ4 and byte
//! stream split around another encoding), `levels` and `strategy` (which encoding wins).

use lancelet_proto::pb21::{self, compressive_encoding::Compression as C, CompressionScheme};
use prost::Message;

use crate::{Error, Result};

mod dictionary;
mod extract;
mod fixed;
mod general;
mod levels;
mod strategy;
#[cfg(test)]
mod tests;
mod variable;

use dictionary::*;
use extract::*;
use fixed::*;
use general::*;
use variable::*;

pub(crate) use fixed::flat;
pub use levels::compress_levels;
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
    /// How each chunk's buffers decode (what [`super::values_decode::decode_chunk`] takes).
    pub encoding: pb21::CompressiveEncoding,
    /// The chunks, in value order.
    pub chunks: Vec<Chunk>,
    /// Dictionary (values are then `u32` indices): the block-encoded items, their encoding
    /// (what [`super::values_decode::decode_block`] takes) and count. Stored as
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

// Chunk sizes.

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
