//! Encoding the repetition and definition levels of a mini-block page (the inverse of
//! [`crate::v2_1::values_decode::decode_levels`]).

use crate::v2_1::bitpack::{pack_block, packed_block_bytes, BLOCK};

use super::*;

/// Encodes `levels` (repetition or definition, `u16`) for mini-block chunks whose level
/// counts are `chunk_levels` (one per chunk, summing to `levels.len()`).
///
/// Returns the levels' encoding and one buffer per chunk, each decoded by
/// [`crate::v2_1::values_decode::decode_levels`] with that chunk's count. The smallest of `Flat(16)`,
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
