//! Encoders of variable-width values (strings, binary): `Variable` chunks, and `Fsst`
//! over them.

use crate::v2_1::bitpack::push_uint;
use crate::v2_1::fsst::Compressor;

use super::*;

/// Size of a variable-width chunk buffer of values `[a, b)`, padding included.
pub(super) fn var_chunk_size(offsets: &[u64], a: usize, b: usize, ow: usize) -> usize {
    let raw = (b - a + 1) * ow + (offsets[b] - offsets[a]) as usize;
    raw.div_ceil(ow) * ow
}

/// One variable-width chunk buffer: `n + 1` offsets (positions inside the buffer), the
/// bytes, padded with 0x48 to the offset width.
pub(super) fn var_chunk(offsets: &[u64], data: &[u8], a: usize, b: usize, ow: usize) -> Vec<u8> {
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
pub(super) fn var_plan(offsets: &[u64], large: bool) -> Result<Vec<(usize, usize)>> {
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
pub(super) fn var_chunks(offsets: &[u64], data: &[u8], large: bool) -> Result<Vec<Chunk>> {
    let ow = if large { 8 } else { 4 };
    Ok(var_plan(offsets, large)?
        .into_iter()
        .map(|(a, b)| Chunk {
            num_values: b - a,
            buffers: vec![var_chunk(offsets, data, a, b, ow)],
        })
        .collect())
}

pub(super) fn variable(offsets: &[u64], data: &[u8], large: bool) -> Result<MiniBlockValues> {
    Ok(MiniBlockValues {
        encoding: var_enc(large),
        chunks: var_chunks(offsets, data, large)?,
        dictionary: None,
    })
}

pub(super) fn var_values<'a>(offsets: &'a [u64], data: &'a [u8]) -> impl Iterator<Item = &'a [u8]> + 'a {
    offsets.windows(2).map(move |w| &data[w[0] as usize..w[1] as usize])
}

/// `Fsst` over `Variable` chunks of the compressed strings.
pub(super) fn fsst(offsets: &[u64], data: &[u8], large: bool) -> Result<MiniBlockValues> {
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
