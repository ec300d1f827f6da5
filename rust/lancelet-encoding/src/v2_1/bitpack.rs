//! FastLanes-style bit unpacking as used by Lance 2.1+ (`InlineBitpacking`,
//! `OutOfLineBitpacking`).
//!
//! Values are packed in blocks of 1024. For an unsigned type of `w` bits a block is cut
//! into `1024 / w` lanes; lane `l` holds the `w` values at the transposed positions
//! [`position`]`(row, l)` for `row in 0..w`, packed LSB first into `b` words of `w`
//! bits. Word `k` of lane `l` is stored at word index `k * lanes + l`, so a packed block
//! of bit width `b` is exactly `b * 128` bytes whatever `w` is.

use crate::{corrupt, Error, Result};

/// Values per block.
pub const BLOCK: usize = 1024;

/// Transposition order of the eight row groups.
const ORDER: [usize; 8] = [0, 4, 2, 6, 1, 5, 3, 7];

/// Position inside the block of the value held by row `row` of lane `lane`.
fn position(row: usize, lane: usize) -> usize {
    ORDER[row / 8] * 16 + (row % 8) * 128 + lane
}

/// Checks that `w` is a supported uncompressed width (8, 16, 32 or 64 bits).
pub fn check_width(w: u64) -> Result<usize> {
    match w {
        8 | 16 | 32 | 64 => Ok(w as usize),
        _ => Err(Error::Unsupported(format!("bit packing of {w}-bit values"))),
    }
}

/// Bytes of one packed block of bit width `b` (`b` ≤ 64).
pub fn packed_block_bytes(b: usize) -> usize {
    b * BLOCK / 8
}

/// Reads the little-endian unsigned word `index` of `w` bits from `bytes` (caller checks bounds).
fn read_word(bytes: &[u8], w: usize, index: usize) -> u64 {
    let nb = w / 8;
    let start = index * nb;
    let mut v = 0u64;
    for (i, byte) in bytes[start..start + nb].iter().enumerate() {
        v |= u64::from(*byte) << (8 * i);
    }
    v
}

/// Unpacks one block of 1024 `w`-bit values of bit width `b` from `packed` into `out`.
pub fn unpack_block(packed: &[u8], w: usize, b: usize, out: &mut [u64; BLOCK]) -> Result<()> {
    if b > w {
        return Err(corrupt!("bit width {b} is larger than the {w}-bit value type"));
    }
    if packed.len() < packed_block_bytes(b) {
        return Err(corrupt!(
            "bit-packed block of width {b} needs {} bytes, only {} present",
            packed_block_bytes(b),
            packed.len()
        ));
    }
    if b == 0 {
        out.fill(0);
        return Ok(());
    }
    let lanes = BLOCK / w;
    let mask = if b == 64 { u64::MAX } else { (1u64 << b) - 1 };
    for lane in 0..lanes {
        for row in 0..w {
            let start = row * b;
            let (k, off) = (start / w, start % w);
            let mut v = read_word(packed, w, k * lanes + lane) >> off;
            if off + b > w {
                v |= read_word(packed, w, (k + 1) * lanes + lane) << (w - off);
            }
            out[position(row, lane)] = v & mask;
        }
    }
    Ok(())
}

/// Appends `v` as a little-endian integer of `nb` bytes.
pub fn push_uint(out: &mut Vec<u8>, v: u64, nb: usize) {
    out.extend_from_slice(&v.to_le_bytes()[..nb]);
}

/// Decodes `n` values of `InlineBitpacking`: per block one `w`-bit word holding the bit
/// width, then the packed block. Returns the values as `w / 8`-byte little-endian integers.
pub fn decode_inline(buf: &[u8], w: u64, n: usize) -> Result<Vec<u8>> {
    let w = check_width(w)?;
    let nb = w / 8;
    let mut out = Vec::with_capacity(n.min(1 << 20) * nb);
    let mut block = [0u64; BLOCK];
    let mut pos = 0usize;
    let mut done = 0usize;
    while done < n {
        let header = buf
            .get(pos..pos + nb)
            .ok_or_else(|| corrupt!("inline bit-packed data ends before block header at byte {pos}"))?;
        let b = read_word(header, w, 0);
        if b > w as u64 {
            return Err(corrupt!(
                "inline bit-packed block declares width {b} for {w}-bit values"
            ));
        }
        let b = b as usize;
        pos += nb;
        let len = packed_block_bytes(b);
        let data = buf
            .get(pos..pos + len)
            .ok_or_else(|| corrupt!("inline bit-packed block at byte {pos} needs {len} bytes"))?;
        unpack_block(data, w, b, &mut block)?;
        pos += len;
        let take = (n - done).min(BLOCK);
        for v in &block[..take] {
            push_uint(&mut out, *v, nb);
        }
        done += take;
    }
    Ok(out)
}

/// Decodes `n` values of `OutOfLineBitpacking` with a page-wide bit width `b`: blocks of
/// `b * 128` bytes without headers. A final partial block is either a padded full block or
/// the remaining values stored raw (told apart by the bytes left).
pub fn decode_out_of_line(buf: &[u8], w: u64, b: u64, n: usize) -> Result<Vec<u8>> {
    let w = check_width(w)?;
    if b > w as u64 {
        return Err(corrupt!("out-of-line bit width {b} exceeds the {w}-bit value type"));
    }
    let b = b as usize;
    let nb = w / 8;
    let len = packed_block_bytes(b);
    let mut out = Vec::with_capacity(n.min(1 << 20) * nb);
    let mut block = [0u64; BLOCK];
    let mut pos = 0usize;
    let mut done = 0usize;
    while done < n {
        let remaining = n - done;
        let left = buf.len().saturating_sub(pos);
        if remaining < BLOCK && left != len {
            let raw = buf
                .get(pos..pos + remaining * nb)
                .ok_or_else(|| corrupt!("out-of-line bit-packed tail of {remaining} values is truncated"))?;
            out.extend_from_slice(raw);
            return Ok(out);
        }
        let data = buf
            .get(pos..pos + len)
            .ok_or_else(|| corrupt!("out-of-line bit-packed block at byte {pos} needs {len} bytes"))?;
        unpack_block(data, w, b, &mut block)?;
        pos += len;
        let take = remaining.min(BLOCK);
        for v in &block[..take] {
            push_uint(&mut out, *v, nb);
        }
        done += take;
    }
    Ok(out)
}

/// Packs one block (test helper, the inverse of [`unpack_block`]).
#[cfg(test)]
pub fn pack_block(values: &[u64; BLOCK], w: usize, b: usize) -> Vec<u8> {
    let lanes = BLOCK / w;
    let mut words = vec![0u64; b * lanes];
    if b == 0 {
        return Vec::new();
    }
    let mask = if b == 64 { u64::MAX } else { (1u64 << b) - 1 };
    for lane in 0..lanes {
        for row in 0..w {
            let v = values[position(row, lane)] & mask;
            let start = row * b;
            let (k, off) = (start / w, start % w);
            words[k * lanes + lane] |= v << off;
            if off + b > w {
                words[(k + 1) * lanes + lane] |= v >> (w - off);
            }
        }
    }
    let wmask = if w == 64 { u64::MAX } else { (1u64 << w) - 1 };
    let mut out = Vec::new();
    for x in words {
        push_uint(&mut out, x & wmask, w / 8);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn positions_are_a_permutation() {
        for w in [8usize, 16, 32, 64] {
            let mut seen = vec![false; BLOCK];
            for lane in 0..BLOCK / w {
                for row in 0..w {
                    let p = position(row, lane);
                    assert!(!seen[p]);
                    seen[p] = true;
                }
            }
        }
    }

    #[test]
    fn known_first_word() {
        // 0..1024 packed as u32 with width 10: lane 0 holds 0, 128, 256 in its first word.
        let mut v = [0u64; BLOCK];
        for (i, x) in v.iter_mut().enumerate() {
            *x = i as u64;
        }
        let packed = pack_block(&v, 32, 10);
        assert_eq!(&packed[..4], &[0x00, 0x00, 0x02, 0x10]);
    }

    proptest! {
        #[test]
        fn round_trip(w_sel in 0usize..4, b_frac in 0.0f64..=1.0, seed in any::<u64>(), n in 1usize..3000) {
            let w = [8usize, 16, 32, 64][w_sel];
            let b = ((w as f64) * b_frac).round() as usize;
            let mask = if b == 64 { u64::MAX } else { (1u64 << b) - 1 };
            let mut x = seed | 1;
            let values: Vec<u64> = (0..n).map(|_| { x ^= x << 13; x ^= x >> 7; x ^= x << 17; x & mask }).collect();
            // inline: header word + block per 1024 values (the tail zero padded)
            let mut buf = Vec::new();
            for chunk in values.chunks(BLOCK) {
                let mut block = [0u64; BLOCK];
                block[..chunk.len()].copy_from_slice(chunk);
                push_uint(&mut buf, b as u64, w / 8);
                buf.extend(pack_block(&block, w, b));
            }
            let got = decode_inline(&buf, w as u64, n).unwrap();
            let expect: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()[..w / 8].to_vec()).collect();
            prop_assert_eq!(&got, &expect);
            // truncations never panic
            for cut in [0, 1, buf.len() / 2, buf.len().saturating_sub(1)] {
                let _ = decode_inline(&buf[..cut], w as u64, n);
                let _ = decode_out_of_line(&buf[..cut], w as u64, b as u64, n);
            }
        }
    }
}
