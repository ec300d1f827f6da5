//! Encoders of fixed-width values: `Flat`, `InlineBitpacking`, `Rle` and
//! `FixedSizeList`.

use crate::v2_1::bitpack::{pack_block_into, packed_block_bytes, push_uint, BLOCK};

use super::*;

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
pub(super) fn flat_bool(bits: &[u8], len: usize) -> Result<MiniBlockValues> {
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
pub(super) fn block_bits(block: &[u8], width: usize) -> usize {
    let or = block.chunks_exact(width).fold(0u64, |acc, v| acc | read_le(v));
    (64 - or.leading_zeros()) as usize
}

/// Size of the `InlineBitpacking` encoding (without packing).
pub(super) fn inline_size(width: usize, data: &[u8]) -> usize {
    data.chunks(BLOCK * width)
        .map(|b| align8(2 + 4) + align8(width + packed_block_bytes(block_bits(b, width))))
        .sum()
}

/// `InlineBitpacking` chunks: 1024 values each, one header word holding the bit width,
/// then one FastLanes block (the last one zero padded).
pub(super) fn inline(width: usize, data: &[u8], len: usize) -> Result<MiniBlockValues> {
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
pub(super) fn count_runs(width: usize, data: &[u8]) -> usize {
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
pub(super) fn runs_of(width: usize, data: &[u8], a: usize, b: usize) -> (Vec<u8>, Vec<u8>) {
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
pub(super) fn rle(width: usize, data: &[u8], len: usize) -> Result<MiniBlockValues> {
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

/// `FixedSizeList{dim, has_validity, Flat}` chunks.
pub(super) fn fixed_size_list(
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
