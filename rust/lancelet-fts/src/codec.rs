//! The posting-list codec: a token's `(doc id, frequency)` pairs in blocks of 128.
//!
//! Every block starts with an `f32`, the block's best BM25 term-frequency factor (an upper
//! bound used to skip blocks). A full block then holds the first doc id (`u32`), the bit
//! width and bit-packed deltas of the sorted doc ids (SIMD-friendly 4x32 layout of the
//! `bitpacking` crate), and the bit width and bit-packed frequencies. The last, partial
//! block is the tail, whose coding depends on the format version: version 1 stores raw
//! little-endian `u32` doc ids then `u32` frequencies (`fixed32_v1`); versions 2 and 3
//! store LEB128 varints of the doc-id deltas (the first from 0) then of the frequencies
//! (`varint_delta_v1`).
//!
//! Decoders treat their input as untrusted: a short or inconsistent block is
//! [`Error::Corrupt`], never a panic.

use bitpacking::{BitPacker, BitPacker4x};

use crate::error::{Error, Result};

/// Doc ids (and frequencies) per block.
pub const BLOCK: usize = BitPacker4x::BLOCK_LEN;

/// How the partial last block of a posting list is coded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tail {
    /// Raw `u32` doc ids, then raw `u32` frequencies (format version 1).
    Fixed32,
    /// Varint doc-id deltas (the first from 0), then varint frequencies (versions 2, 3).
    VarintDelta,
}

impl Tail {
    /// The tail coding of a format version.
    pub fn of_version(version: u32) -> Self {
        if version <= 1 {
            Tail::Fixed32
        } else {
            Tail::VarintDelta
        }
    }

    /// The `posting_tail_codec` metadata value.
    pub fn name(self) -> &'static str {
        match self {
            Tail::Fixed32 => "fixed32_v1",
            Tail::VarintDelta => "varint_delta_v1",
        }
    }
}

/// Encodes one block: `docs` sorted ascending, `freqs` alongside, at most [`BLOCK`] of each.
pub fn encode_block(docs: &[u32], freqs: &[u32], max_score: f32, tail: Tail, out: &mut Vec<u8>) {
    out.extend_from_slice(&max_score.to_le_bytes());
    if docs.len() == BLOCK {
        let packer = BitPacker4x::new();
        let mut buf = [0u8; 4 * BLOCK];
        let first = docs[0];
        let bits = packer.num_bits_sorted(first, docs);
        let n = packer.compress_sorted(first, docs, &mut buf, bits);
        out.extend_from_slice(&first.to_le_bytes());
        out.push(bits);
        out.extend_from_slice(&buf[..n]);
        let bits = packer.num_bits(freqs);
        let n = packer.compress(freqs, &mut buf, bits);
        out.push(bits);
        out.extend_from_slice(&buf[..n]);
        return;
    }
    match tail {
        Tail::Fixed32 => {
            for d in docs {
                out.extend_from_slice(&d.to_le_bytes());
            }
            for f in freqs {
                out.extend_from_slice(&f.to_le_bytes());
            }
        }
        Tail::VarintDelta => {
            let mut prev = 0u32;
            for d in docs {
                put_varint(out, d.wrapping_sub(prev));
                prev = *d;
            }
            for f in freqs {
                put_varint(out, *f);
            }
        }
    }
}

/// Decodes a block holding `n` postings (`n` = [`BLOCK`] for a full block), appending to
/// `docs` and `freqs`; returns the block's max score.
pub fn decode_block(bytes: &[u8], n: usize, tail: Tail, docs: &mut Vec<u32>, freqs: &mut Vec<u32>) -> Result<f32> {
    let corrupt = |m: &str| Error::corrupt("posting block", m.to_string());
    if bytes.len() < 4 || n == 0 || n > BLOCK {
        return Err(corrupt("block too short or empty"));
    }
    let score = f32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
    let body = &bytes[4..];
    if n == BLOCK {
        let packer = BitPacker4x::new();
        if body.len() < 5 {
            return Err(corrupt("full block too short"));
        }
        let first = u32::from_le_bytes([body[0], body[1], body[2], body[3]]);
        let bits = body[4];
        let len = packed_len(bits).ok_or_else(|| corrupt("bit width above 32"))?;
        let rest = &body[5..];
        if rest.len() < len + 1 {
            return Err(corrupt("full block too short for its doc ids"));
        }
        let mut buf = [0u32; BLOCK];
        packer.decompress_sorted(first, &rest[..len], &mut buf, bits);
        check_sorted(&buf).map_err(|_| corrupt("doc ids overflow"))?;
        docs.extend_from_slice(&buf);
        let fbits = rest[len];
        let flen = packed_len(fbits).ok_or_else(|| corrupt("bit width above 32"))?;
        let frest = &rest[len + 1..];
        if frest.len() < flen {
            return Err(corrupt("full block too short for its frequencies"));
        }
        packer.decompress(&frest[..flen], &mut buf, fbits);
        freqs.extend_from_slice(&buf);
        return Ok(score);
    }
    match tail {
        Tail::Fixed32 => {
            if body.len() < 8 * n {
                return Err(corrupt("tail block too short"));
            }
            let words = body
                .chunks_exact(4)
                .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]));
            let start = docs.len();
            docs.extend(words.clone().take(n));
            check_sorted(&docs[start..]).map_err(|_| corrupt("tail doc ids not ascending"))?;
            freqs.extend(words.skip(n).take(n));
        }
        Tail::VarintDelta => {
            let mut at = 0usize;
            let mut prev = 0u32;
            for i in 0..n {
                let d = get_varint(body, &mut at).ok_or_else(|| corrupt("tail doc id varint"))?;
                prev = if i == 0 {
                    d
                } else {
                    prev.checked_add(d).ok_or_else(|| corrupt("tail doc ids overflow"))?
                };
                docs.push(prev);
            }
            for _ in 0..n {
                freqs.push(get_varint(body, &mut at).ok_or_else(|| corrupt("tail frequency varint"))?);
            }
        }
    }
    Ok(score)
}

/// The max score stored at the front of a block.
pub fn block_score(bytes: &[u8]) -> Result<f32> {
    match bytes {
        [a, b, c, d, ..] => Ok(f32::from_le_bytes([*a, *b, *c, *d])),
        _ => Err(Error::corrupt("posting block", "block too short")),
    }
}

/// The first doc id of a block holding `n` postings.
pub fn block_first_doc(bytes: &[u8], n: usize, tail: Tail) -> Result<u32> {
    let corrupt = || Error::corrupt("posting block", "block too short");
    if n == BLOCK || tail == Tail::Fixed32 {
        let b = bytes.get(4..8).ok_or_else(corrupt)?;
        return Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
    }
    let mut at = 4;
    get_varint(bytes, &mut at).ok_or_else(corrupt)
}

fn packed_len(bits: u8) -> Option<usize> {
    (bits <= 32).then(|| BLOCK * usize::from(bits) / 8)
}

fn check_sorted(docs: &[u32]) -> std::result::Result<(), ()> {
    if docs.windows(2).all(|w| w[0] <= w[1]) {
        Ok(())
    } else {
        Err(())
    }
}

/// Lucene's `SmallFloat.longToInt4`: a document length in one byte (3 mantissa bits and
/// a 5-bit exponent), exact below 8. Impacts store lengths this way.
pub fn length_code(dl: u32) -> u32 {
    let bits = 32 - dl.leading_zeros();
    if bits < 4 {
        return dl;
    }
    let shift = bits - 4;
    ((dl >> shift) & 7) | ((shift + 1) << 3)
}

/// The shortest document length a length code stands for (the inverse of [`length_code`]
/// on the lengths it maps exactly).
pub fn length_of_code(code: u32) -> u32 {
    if code < 8 {
        return code;
    }
    let shift = (code >> 3) - 1;
    if shift >= 28 {
        return u32::MAX;
    }
    ((code & 7) | 8) << shift
}

/// Decodes an impact entry's `(frequency, length code)` pairs (`None` when damaged).
pub fn decode_impact(bytes: &[u8]) -> Option<Vec<(u32, u32)>> {
    let mut at = 0;
    let _up_to = get_varint(bytes, &mut at)?;
    let n = get_varint(bytes, &mut at)? as usize;
    if n > bytes.len() {
        return None;
    }
    let mut out = Vec::with_capacity(n);
    let (mut f, mut code) = (0u32, 0u32);
    for _ in 0..n {
        let v = get_varint(bytes, &mut at)?;
        f = f.checked_add(1)?.checked_add(v >> 1)?;
        let nd = if v & 1 == 1 { get_varint(bytes, &mut at)? } else { 1 };
        code = code.checked_add(nd)?;
        out.push((f, code));
    }
    Some(out)
}

/// Blocks per impact group: after one impact entry per block comes one per group of
/// this many blocks (a second skip level).
pub const IMPACT_GROUP: usize = 32;

/// One impact entry: the last doc id it covers, then the competitive `(frequency, length
/// code)` pairs of its documents (those no other pair beats on both: higher frequency
/// and shorter document), ascending, delta-coded as varints.
pub fn encode_impact(up_to: u32, pairs: &[(u32, u32)], out: &mut Vec<u8>) {
    put_varint(out, up_to);
    put_varint(out, pairs.len() as u32);
    let (mut pf, mut pn) = (0u32, 0u32);
    for &(f, n) in pairs {
        let fd = f.wrapping_sub(pf).wrapping_sub(1);
        let nd = n.wrapping_sub(pn);
        if nd == 1 {
            put_varint(out, fd << 1);
        } else {
            put_varint(out, (fd << 1) | 1);
            put_varint(out, nd);
        }
        pf = f;
        pn = n;
    }
}

/// The competitive `(frequency, length code)` pairs of `(frequency, length code)` entries.
pub fn competitive(entries: impl IntoIterator<Item = (u32, u32)>) -> Vec<(u32, u32)> {
    let mut best: std::collections::BTreeMap<u32, u32> = std::collections::BTreeMap::new();
    for (f, n) in entries {
        let e = best.entry(f).or_insert(n);
        *e = (*e).min(n);
    }
    let mut out = Vec::new();
    let mut best_norm = u32::MAX;
    for (f, n) in best.into_iter().rev() {
        if n < best_norm {
            out.push((f, n));
            best_norm = n;
        }
    }
    out.reverse();
    out
}

/// Appends `v` as an LEB128 varint.
pub fn put_varint(out: &mut Vec<u8>, mut v: u32) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Reads an LEB128 varint of at most 32 bits at `*at`.
pub fn get_varint(bytes: &[u8], at: &mut usize) -> Option<u32> {
    let mut v: u64 = 0;
    for shift in (0..35).step_by(7) {
        let b = *bytes.get(*at)?;
        *at += 1;
        v |= u64::from(b & 0x7f) << shift;
        if b & 0x80 == 0 {
            return u32::try_from(v).ok();
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn roundtrip(docs: &[u32], freqs: &[u32], tail: Tail) -> (Vec<u32>, Vec<u32>, f32) {
        let mut bytes = Vec::new();
        encode_block(docs, freqs, 1.5, tail, &mut bytes);
        let (mut d, mut f) = (Vec::new(), Vec::new());
        let s = decode_block(&bytes, docs.len(), tail, &mut d, &mut f).unwrap_or_else(|e| unreachable!("{e}"));
        (d, f, s)
    }

    proptest! {
        #[test]
        fn blocks_roundtrip(mut docs in proptest::collection::vec(0u32..u32::MAX, 1..=BLOCK),
                            fr in proptest::collection::vec(1u32..100_000, BLOCK),
                            v1 in any::<bool>()) {
            docs.sort_unstable();
            docs.dedup();
            let freqs = &fr[..docs.len()];
            let tail = if v1 { Tail::Fixed32 } else { Tail::VarintDelta };
            let (d, f, s) = roundtrip(&docs, freqs, tail);
            prop_assert_eq!(d, docs.clone());
            prop_assert_eq!(f, freqs.to_vec());
            prop_assert_eq!(s, 1.5);
        }

        #[test]
        fn damaged_blocks_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..700),
                                      n in 0usize..=BLOCK, v1 in any::<bool>()) {
            let tail = if v1 { Tail::Fixed32 } else { Tail::VarintDelta };
            let (mut d, mut f) = (Vec::new(), Vec::new());
            let _ = decode_block(&bytes, n, tail, &mut d, &mut f);
        }
    }

    #[test]
    fn length_codes_are_exact_below_eight_and_monotone() {
        assert_eq!((0..8).map(length_code).collect::<Vec<_>>(), (0..8).collect::<Vec<_>>());
        assert_eq!(length_code(200), 44); // observed in a pylance 14 index (a 200-token document)
        let codes: Vec<u32> = (1..5000).map(length_code).collect();
        assert!(codes.windows(2).all(|w| w[0] <= w[1]));
        // A code stands for lengths no shorter than the one it decodes to.
        for dl in 1..5000 {
            assert!(length_of_code(length_code(dl)) <= dl);
        }
    }

    #[test]
    fn competitive_pairs_drop_dominated_ones() {
        // (2, 5) is beaten by (3, 4): more occurrences in a shorter document.
        assert_eq!(competitive([(1, 2), (2, 5), (3, 4), (3, 9)]), vec![(1, 2), (3, 4)]);
        let mut b = Vec::new();
        encode_impact(378, &[(1, 3)], &mut b);
        assert_eq!(b, [0xfa, 0x02, 0x01, 0x01, 0x03]);
        let mut b = Vec::new();
        encode_impact(9, &[(1, 2), (3, 4), (7, 5)], &mut b);
        assert_eq!(decode_impact(&b), Some(vec![(1, 2), (3, 4), (7, 5)]));
    }

    #[test]
    fn a_full_block_of_consecutive_docs_packs_to_one_bit_deltas() {
        let docs: Vec<u32> = (1000..1000 + BLOCK as u32).collect();
        let mut bytes = Vec::new();
        encode_block(&docs, &[1; BLOCK], 0.0, Tail::VarintDelta, &mut bytes);
        // score, first doc, width 1 + 16 bytes, width 1 + 16 bytes
        assert_eq!(bytes.len(), 4 + 4 + 1 + 16 + 1 + 16);
        assert_eq!(roundtrip(&docs, &[1; BLOCK], Tail::Fixed32).0, docs);
    }
}
