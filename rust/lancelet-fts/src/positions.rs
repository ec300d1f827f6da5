//! Token positions (`with_position=True`), needed by phrase queries.
//!
//! Format version 1 keeps them in `_position: list<list<large_binary>>`: per token, per
//! document, a list of binaries: the number of positions (`u32`), then each full run of
//! 128 positions bit-packed as a sorted block (first value, bit width, deltas), then the
//! rest as raw `u32`s.
//!
//! Versions 2 and 3 keep one stream per token (`_compressed_position: large_binary`) and
//! where each posting block's part starts (`_position_block_offset: list<u32>`). A block's
//! part holds, document by document, each position as the difference from the previous
//! one in the same document (the first as is); these numbers are cut in runs of 128,
//! each bit-packed behind its bit width, and the rest are varints.

use std::sync::Arc;

use arrow_array::builder::{LargeBinaryBuilder, ListBuilder, UInt32Builder};
use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef, ListArray, RecordBatch};
use arrow_schema::{DataType, Field};
use bitpacking::{BitPacker, BitPacker4x};

use crate::builder::EncodedPostings;
use crate::codec::BLOCK;
use crate::error::{Error, Result};

/// The `positions_codec` of format versions 2 and 3.
pub const CODEC: &str = "packed_delta_v1";
/// The `positions_layout` of format versions 2 and 3.
pub const LAYOUT: &str = "shared_stream_v2";
const V1_COLUMN: &str = "_position";
const V2_STREAM: &str = "_compressed_position";
const V2_OFFSETS: &str = "_position_block_offset";

/// The position columns present among a file's column names.
pub fn columns_present(names: &[String]) -> Vec<&'static str> {
    [V1_COLUMN, V2_STREAM, V2_OFFSETS]
        .into_iter()
        .filter(|c| names.iter().any(|n| n == c))
        .collect()
}

/// Encodes the positions of every token as the column(s) of `version`.
pub fn encode_column(postings: &[EncodedPostings], version: u32) -> Result<(Vec<Field>, Vec<ArrayRef>)> {
    if version >= 2 {
        return Ok(encode_v2_column(postings));
    }
    let mut b = ListBuilder::new(ListBuilder::new(LargeBinaryBuilder::new()));
    for t in postings {
        let mut at = 0usize;
        for f in &t.freqs {
            let end = at + *f as usize;
            let ps = t
                .positions
                .get(at..end)
                .ok_or_else(|| Error::InvalidArgument("positions do not match frequencies".into()))?;
            let doc = b.values();
            encode_v1(ps, doc.values());
            doc.append(true);
            at = end;
        }
        b.append(true);
    }
    let inner = Field::new("item", DataType::LargeBinary, true);
    let mid = Field::new("item", DataType::List(Arc::new(inner)), true);
    Ok((
        vec![Field::new(V1_COLUMN, DataType::List(Arc::new(mid)), true)],
        vec![Arc::new(b.finish())],
    ))
}

fn encode_v2_column(postings: &[EncodedPostings]) -> (Vec<Field>, Vec<ArrayRef>) {
    let mut stream = LargeBinaryBuilder::new();
    let mut offsets = ListBuilder::new(UInt32Builder::new());
    let packer = BitPacker4x::new();
    for t in postings {
        let mut bytes: Vec<u8> = Vec::new();
        let mut at = 0usize;
        for freqs in t.freqs.chunks(BLOCK) {
            offsets.values().append_value(bytes.len() as u32);
            let mut deltas: Vec<u32> = Vec::new();
            for f in freqs {
                let end = (at + *f as usize).min(t.positions.len());
                let mut prev = 0u32;
                for (i, p) in t.positions[at..end].iter().enumerate() {
                    deltas.push(if i == 0 { *p } else { p.wrapping_sub(prev) });
                    prev = *p;
                }
                at = end;
            }
            let mut chunks = deltas.chunks_exact(BLOCK);
            let mut buf = [0u8; 4 * BLOCK];
            for c in chunks.by_ref() {
                let bits = packer.num_bits(c);
                let n = packer.compress(c, &mut buf, bits);
                bytes.push(bits);
                bytes.extend_from_slice(&buf[..n]);
            }
            for d in chunks.remainder() {
                crate::codec::put_varint(&mut bytes, *d);
            }
        }
        offsets.append(true);
        stream.append_value(&bytes);
    }
    let offsets_field = Field::new("item", DataType::UInt32, true);
    (
        vec![
            Field::new(V2_STREAM, DataType::LargeBinary, true),
            Field::new(V2_OFFSETS, DataType::List(Arc::new(offsets_field)), true),
        ],
        vec![Arc::new(stream.finish()), Arc::new(offsets.finish())],
    )
}

/// Decodes one block's part of a version 2 stream for documents with `freqs` occurrences.
pub fn decode_v2_block(bytes: &[u8], freqs: &[u32], out: &mut Vec<Vec<u32>>) -> Result<()> {
    let corrupt = |m: &str| Error::corrupt("positions", m.to_string());
    let total: usize = freqs.iter().map(|f| *f as usize).sum();
    let mut deltas = Vec::with_capacity(total);
    let mut at = 0usize;
    let packer = BitPacker4x::new();
    let mut buf = [0u32; BLOCK];
    for _ in 0..total / BLOCK {
        let bits = *bytes.get(at).ok_or_else(|| corrupt("short stream"))?;
        if bits > 32 {
            return Err(corrupt("bit width above 32"));
        }
        let len = BLOCK * usize::from(bits) / 8;
        let chunk = bytes.get(at + 1..at + 1 + len).ok_or_else(|| corrupt("short stream"))?;
        packer.decompress(chunk, &mut buf, bits);
        deltas.extend_from_slice(&buf);
        at += 1 + len;
    }
    for _ in 0..total % BLOCK {
        deltas.push(crate::codec::get_varint(bytes, &mut at).ok_or_else(|| corrupt("bad varint"))?);
    }
    let mut k = 0;
    for f in freqs {
        let mut ps = Vec::with_capacity(*f as usize);
        let mut prev = 0u32;
        for i in 0..*f as usize {
            let d = deltas[k];
            prev = if i == 0 {
                d
            } else {
                prev.checked_add(d).ok_or_else(|| corrupt("positions overflow"))?
            };
            ps.push(prev);
            k += 1;
        }
        out.push(ps);
    }
    Ok(())
}

fn encode_v1(ps: &[u32], out: &mut LargeBinaryBuilder) {
    out.append_value((ps.len() as u32).to_le_bytes());
    let packer = BitPacker4x::new();
    let mut buf = [0u8; 4 * BLOCK];
    let mut chunks = ps.chunks_exact(BLOCK);
    for c in chunks.by_ref() {
        let bits = packer.num_bits_sorted(c[0], c);
        let n = packer.compress_sorted(c[0], c, &mut buf, bits);
        let mut v = Vec::with_capacity(5 + n);
        v.extend_from_slice(&c[0].to_le_bytes());
        v.push(bits);
        v.extend_from_slice(&buf[..n]);
        out.append_value(v);
    }
    let rest = chunks.remainder();
    if !rest.is_empty() {
        let v: Vec<u8> = rest.iter().flat_map(|p| p.to_le_bytes()).collect();
        out.append_value(v);
    }
}

fn decode_v1(doc: &dyn Array) -> Result<Vec<u32>> {
    let corrupt = |m: &str| Error::corrupt("positions", m.to_string());
    let bins = doc.as_binary_opt::<i64>().ok_or_else(|| corrupt("not large binary"))?;
    if bins.is_empty() {
        return Err(corrupt("no count"));
    }
    let count = match bins.value(0) {
        [a, b, c, d] => u32::from_le_bytes([*a, *b, *c, *d]) as usize,
        _ => return Err(corrupt("bad count")),
    };
    let full = count / BLOCK;
    let rest = count % BLOCK;
    if bins.len() != 1 + full + usize::from(rest > 0) {
        return Err(corrupt("chunk count does not match the position count"));
    }
    let mut out = Vec::with_capacity(count);
    let packer = BitPacker4x::new();
    let mut buf = [0u32; BLOCK];
    for i in 0..full {
        let v = bins.value(1 + i);
        if v.len() < 5 || v[4] > 32 || v.len() < 5 + BLOCK * usize::from(v[4]) / 8 {
            return Err(corrupt("short chunk"));
        }
        let first = u32::from_le_bytes([v[0], v[1], v[2], v[3]]);
        packer.decompress_sorted(first, &v[5..], &mut buf, v[4]);
        out.extend_from_slice(&buf);
    }
    if rest > 0 {
        let v = bins.value(1 + full);
        if v.len() != 4 * rest {
            return Err(corrupt("bad remainder"));
        }
        out.extend(v.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])));
    }
    Ok(out)
}

/// The positions of an index partition: as read from a file, or as built in memory.
#[derive(Debug)]
pub enum PositionColumn {
    /// Format version 1's column.
    V1(ListArray),
    /// Versions 2 and 3: the stream of each token and where each block's part starts.
    V2(arrow_array::LargeBinaryArray, ListArray),
    /// Per token: every position doc by doc, and the count per doc.
    Raw(Vec<(Vec<u32>, Vec<u32>)>),
}

impl PositionColumn {
    /// Reads the position column(s) of an invert file batch.
    pub fn read(b: &RecordBatch, file: &str) -> Result<Self> {
        if let (Some(stream), Some(offsets)) = (b.column_by_name(V2_STREAM), b.column_by_name(V2_OFFSETS)) {
            let stream = stream
                .as_binary_opt::<i64>()
                .ok_or_else(|| Error::corrupt(file, "_compressed_position is not large binary"))?;
            let offsets = offsets
                .as_list_opt::<i32>()
                .ok_or_else(|| Error::corrupt(file, "_position_block_offset is not a list"))?;
            return Ok(Self::V2(stream.clone(), offsets.clone()));
        }
        let col = b
            .column_by_name(V1_COLUMN)
            .and_then(|c| c.as_list_opt::<i32>())
            .ok_or_else(|| Error::corrupt(file, "_position is not a list"))?;
        Ok(Self::V1(col.clone()))
    }

    /// The positions of token `id` in the documents at `wanted` (ascending indexes into its
    /// postings; `freqs` are the postings' frequencies, of every block `wanted` touches at
    /// least), one list per wanted document. Only the blocks holding them are decoded.
    pub fn of_token(&self, id: u32, freqs: &[u32], wanted: &[usize]) -> Result<Vec<Vec<u32>>> {
        let i = id as usize;
        if wanted.last().is_some_and(|w| *w >= freqs.len()) {
            return Err(Error::corrupt("positions", "a document past the posting list"));
        }
        let mut out = Vec::with_capacity(wanted.len());
        match self {
            Self::V2(stream, offsets) => {
                if i >= stream.len() || i >= offsets.len() {
                    return Err(Error::corrupt("positions", "token id out of range"));
                }
                let bytes = stream.value(i);
                let offs = offsets.value(i);
                let offs = offs
                    .as_primitive_opt::<arrow_array::types::UInt32Type>()
                    .ok_or_else(|| Error::corrupt("positions", "block offsets are not uint32"))?;
                let blocks = freqs.len().div_ceil(BLOCK);
                if offs.len() != blocks {
                    return Err(Error::corrupt("positions", "one offset per posting block expected"));
                }
                let mut decoded = Vec::new();
                let mut w = 0;
                while w < wanted.len() {
                    let b = wanted[w] / BLOCK;
                    let start = offs.value(b) as usize;
                    let end = if b + 1 < blocks {
                        offs.value(b + 1) as usize
                    } else {
                        bytes.len()
                    };
                    let part = bytes
                        .get(start..end)
                        .ok_or_else(|| Error::corrupt("positions", "block offsets out of range"))?;
                    decoded.clear();
                    decode_v2_block(
                        part,
                        &freqs[b * BLOCK..((b + 1) * BLOCK).min(freqs.len())],
                        &mut decoded,
                    )?;
                    while w < wanted.len() && wanted[w] / BLOCK == b {
                        let list = decoded
                            .get_mut(wanted[w] - b * BLOCK)
                            .ok_or_else(|| Error::corrupt("positions", "fewer documents than postings"))?;
                        out.push(std::mem::take(list));
                        w += 1;
                    }
                }
            }
            Self::V1(v1) => {
                if i >= v1.len() {
                    return Err(Error::corrupt("positions", "token id out of range"));
                }
                let docs = v1.value(i);
                let docs = docs
                    .as_list_opt::<i32>()
                    .ok_or_else(|| Error::corrupt("positions", "not a list of lists"))?;
                if docs.len() != freqs.len() {
                    return Err(Error::corrupt("positions", "one position list per document expected"));
                }
                for w in wanted {
                    out.push(decode_v1(docs.value(*w).as_ref())?);
                }
            }
            Self::Raw(raw) => {
                let (ps, counts) = raw
                    .get(i)
                    .ok_or_else(|| Error::corrupt("positions", "token id out of range"))?;
                let mut at = 0;
                let mut w = wanted.iter().peekable();
                for (d, f) in counts.iter().enumerate() {
                    let end = at + *f as usize;
                    if w.next_if(|x| **x == d).is_some() {
                        let v = ps
                            .get(at..end)
                            .ok_or_else(|| Error::corrupt("positions", "fewer positions than occurrences"))?;
                        out.push(v.to_vec());
                    }
                    at = end;
                }
                if out.len() != wanted.len() {
                    return Err(Error::corrupt("positions", "a document past the posting list"));
                }
            }
        }
        Ok(out)
    }
}
