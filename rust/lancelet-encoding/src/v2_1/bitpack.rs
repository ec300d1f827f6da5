//! FastLanes-style bit packing and unpacking as used by Lance 2.1+ (`InlineBitpacking`,
//! `OutOfLineBitpacking`): [`pack_block`] and [`unpack_block`] for one block, and
//! [`decode_inline`] / [`decode_out_of_line`] for the chunk layouts the decoder reads.
//!
//! Values are packed in blocks of 1024. For an unsigned type of `w` bits a block is cut
//! into `1024 / w` lanes; lane `l` holds the `w` values at the transposed positions
//! `position(row, l)` for `row in 0..w`, packed LSB first into `b` words of `w`
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

/// An unsigned word type a block can be packed in.
trait Word:
    Copy
    + std::ops::Shr<usize, Output = Self>
    + std::ops::Shl<usize, Output = Self>
    + std::ops::BitOr<Output = Self>
    + std::ops::BitAnd<Output = Self>
{
    /// Bits per word.
    const BITS: usize;
    /// Bytes per word.
    const BYTES: usize = Self::BITS / 8;
    /// All bits set.
    const ONES: Self;
    /// Reads a word from exactly `BYTES` little-endian bytes.
    fn load(b: &[u8]) -> Self;
    /// Writes the word to exactly `BYTES` bytes, little endian.
    fn store(self, b: &mut [u8]);
}

macro_rules! word {
    ($t:ty) => {
        impl Word for $t {
            const BITS: usize = <$t>::BITS as usize;
            const ONES: Self = <$t>::MAX;
            #[inline(always)]
            fn load(b: &[u8]) -> Self {
                let mut a = [0u8; std::mem::size_of::<$t>()];
                a.copy_from_slice(b);
                <$t>::from_le_bytes(a)
            }
            #[inline(always)]
            fn store(self, b: &mut [u8]) {
                b.copy_from_slice(&self.to_le_bytes());
            }
        }
    };
}
word!(u8);
word!(u16);
word!(u32);
word!(u64);

/// Unpacks one block of bit width `B` into `out` (1024 little-endian `T`s).
///
/// The loops run row by row: for a fixed row every lane reads the same word index and
/// shift and writes the next output slot, so the inner loop is a straight line over
/// `1024 / T::BITS` contiguous words that the compiler vectorises; with `B` and `T`
/// known the row loop's shifts and masks are constants.
#[inline(always)]
fn unpack_fixed<T: Word, const B: usize>(packed: &[u8], out: &mut [u8]) {
    let w = T::BITS;
    let lanes = BLOCK / w;
    let lane_bytes = lanes * T::BYTES;
    let out = &mut out[..BLOCK * T::BYTES];
    if B == 0 {
        out.fill(0);
        return;
    }
    let packed = &packed[..B * lane_bytes];
    let mask = T::ONES >> (w - B);
    for row in 0..w {
        let start = row * B;
        let (k, off) = (start / w, start % w);
        let base = position(row, 0) * T::BYTES;
        let dst = &mut out[base..base + lane_bytes];
        let lo = &packed[k * lane_bytes..(k + 1) * lane_bytes];
        if off + B > w {
            let hi = &packed[(k + 1) * lane_bytes..(k + 2) * lane_bytes];
            let src = lo.chunks_exact(T::BYTES).zip(hi.chunks_exact(T::BYTES));
            for (d, (l, h)) in dst.chunks_exact_mut(T::BYTES).zip(src) {
                (((T::load(l) >> off) | (T::load(h) << (w - off))) & mask).store(d);
            }
        } else if off + B == w {
            // The value ends the word: no mask needed.
            for (d, l) in dst.chunks_exact_mut(T::BYTES).zip(lo.chunks_exact(T::BYTES)) {
                (T::load(l) >> off).store(d);
            }
        } else {
            for (d, l) in dst.chunks_exact_mut(T::BYTES).zip(lo.chunks_exact(T::BYTES)) {
                ((T::load(l) >> off) & mask).store(d);
            }
        }
    }
}

/// A monomorphised block unpacker: packed bytes in, 1024 little-endian values out.
type Kernel = fn(&[u8], &mut [u8]);

/// [`unpack_fixed`] compiled for AVX2 (twice the vector width of the x86-64 baseline).
///
/// # Safety
/// The CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn unpack_fixed_avx2<T: Word, const B: usize>(packed: &[u8], out: &mut [u8]) {
    unpack_fixed::<T, B>(packed, out);
}

/// Safe entry to [`unpack_fixed_avx2`]; only handed out by [`kernel`] after it checked
/// the CPU.
#[cfg(target_arch = "x86_64")]
fn unpack_avx2<T: Word, const B: usize>(packed: &[u8], out: &mut [u8]) {
    // SAFETY: `kernel` returns this function only when `is_x86_feature_detected!("avx2")`
    // held, and the function is private to this module.
    unsafe { unpack_fixed_avx2::<T, B>(packed, out) }
}

/// Whether the AVX2 kernels may run on this CPU (detected once, then cached by std).
fn use_avx2() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx2")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

macro_rules! kernels {
    ($f:ident, $t:ty, $b:expr, [$($n:literal)*]) => {
        match $b {
            $($n => Some($f::<$t, $n> as Kernel),)*
            _ => None,
        }
    };
}

macro_rules! kernel_table {
    ($name:ident, $f:ident) => {
        /// The unpacker for `w`-bit values of bit width `b`, if `b <= w` and `w` is 8/16/32/64.
        fn $name(w: usize, b: usize) -> Option<Kernel> {
            match w {
                8 => kernels!($f, u8, b, [0 1 2 3 4 5 6 7 8]),
                16 => kernels!($f, u16, b, [0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16]),
                32 => kernels!($f, u32, b, [0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20
                    21 22 23 24 25 26 27 28 29 30 31 32]),
                64 => kernels!($f, u64, b, [0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20
                    21 22 23 24 25 26 27 28 29 30 31 32 33 34 35 36 37 38 39 40 41 42 43 44 45 46
                    47 48 49 50 51 52 53 54 55 56 57 58 59 60 61 62 63 64]),
                _ => None,
            }
        }
    };
}

kernel_table!(kernel_base, unpack_fixed);
#[cfg(target_arch = "x86_64")]
kernel_table!(kernel_avx2, unpack_avx2);

/// The fastest unpacker this CPU runs for `w`-bit values of bit width `b`.
fn kernel(w: usize, b: usize) -> Option<Kernel> {
    #[cfg(target_arch = "x86_64")]
    {
        if use_avx2() {
            return kernel_avx2(w, b);
        }
    }
    kernel_base(w, b)
}

/// The checked unpacker for one block shape, with the sizes it reads and writes.
fn checked_kernel(w: usize, b: usize) -> Result<Kernel> {
    if b > w {
        return Err(corrupt!("bit width {b} is larger than the {w}-bit value type"));
    }
    kernel(w, b).ok_or_else(|| Error::Unsupported(format!("bit packing of {w}-bit values")))
}

/// Unpacks one block of 1024 `w`-bit values of bit width `b` from `packed` into `out`,
/// as `w / 8`-byte little-endian integers (`out` must hold `128 * w` bytes).
pub fn unpack_block_into(packed: &[u8], w: usize, b: usize, out: &mut [u8]) -> Result<()> {
    let k = checked_kernel(w, b)?;
    if packed.len() < packed_block_bytes(b) {
        return Err(corrupt!(
            "bit-packed block of width {b} needs {} bytes, only {} present",
            packed_block_bytes(b),
            packed.len()
        ));
    }
    if out.len() < BLOCK * w / 8 {
        return Err(Error::InvalidInput(format!(
            "an unpacked block of {w}-bit values needs {} bytes, the output has {}",
            BLOCK * w / 8,
            out.len()
        )));
    }
    k(packed, out);
    Ok(())
}

/// Unpacks one block of 1024 `w`-bit values of bit width `b` from `packed` into `out`
/// (one value per `u64`). Slow scalar form, kept as the reference the fast path is
/// tested against.
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

/// Unpacks one block of `nb`-byte values into `out[at..]`: in place when a whole block
/// fits, through a scratch block for a short final block.
fn unpack_to(k: Kernel, data: &[u8], out: &mut [u8], at: usize, take: usize, nb: usize) {
    let dst = &mut out[at..at + take * nb];
    if take == BLOCK {
        k(data, dst);
    } else {
        let mut scratch = [0u8; BLOCK * 8];
        k(data, &mut scratch);
        dst.copy_from_slice(&scratch[..take * nb]);
    }
}

/// The number of blocks of `n` values of `InlineBitpacking` (`nb`-byte words), refusing a
/// count `buf` cannot hold (every block has at least its header word) before anyone
/// allocates for it.
fn inline_blocks(buf: &[u8], nb: usize, n: usize) -> Result<usize> {
    let blocks = n.div_ceil(BLOCK);
    if blocks.saturating_mul(nb) > buf.len() {
        return Err(corrupt!(
            "inline bit-packed data of {} bytes cannot hold {n} values",
            buf.len()
        ));
    }
    Ok(blocks)
}

/// Walks the blocks of `n` values of `InlineBitpacking` (`w`-bit values, `w` already
/// checked): per block one `w`-bit word holding the bit width `b`, then the packed block.
/// Calls `f(block index, b, kernel, packed bytes)` for each, after checking the header and
/// that the block is within `buf`.
fn for_each_inline_block<'a>(
    buf: &'a [u8],
    w: usize,
    n: usize,
    mut f: impl FnMut(usize, usize, Kernel, &'a [u8]),
) -> Result<()> {
    let nb = w / 8;
    let blocks = inline_blocks(buf, nb, n)?;
    let mut pos = 0usize;
    for block in 0..blocks {
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
        let k = checked_kernel(w, b)?;
        pos += len;
        f(block, b, k, data);
    }
    Ok(())
}

/// Decodes `n` values of `InlineBitpacking`: per block one `w`-bit word holding the bit
/// width, then the packed block. Returns the values as `w / 8`-byte little-endian integers.
pub fn decode_inline(buf: &[u8], w: u64, n: usize) -> Result<Vec<u8>> {
    let w = check_width(w)?;
    let nb = w / 8;
    inline_blocks(buf, nb, n)?;
    let mut out = vec![0u8; n * nb];
    for_each_inline_block(buf, w, n, |block, _, k, data| {
        let done = block * BLOCK;
        let take = (n - done).min(BLOCK);
        unpack_to(k, data, &mut out, done * nb, take, nb);
    })?;
    Ok(out)
}

/// The values at positions `picked` (ascending, each below `n`) of `n` values of
/// `InlineBitpacking`: what [`decode_inline`] gives at those positions, each read from its
/// block's packed words without unpacking the rest of the block. Every block header is
/// checked as [`decode_inline`] does.
pub fn pick_inline(buf: &[u8], w: u64, n: usize, picked: &[u64]) -> Result<Vec<u8>> {
    let w = check_width(w)?;
    let nb = w / 8;
    if picked.last().is_some_and(|&p| p >= n as u64) {
        return Err(corrupt!(
            "value {} picked from {n} bit-packed values",
            picked[picked.len() - 1]
        ));
    }
    let lanes = BLOCK / w;
    let mut out = Vec::with_capacity(picked.len() * nb);
    let mut next = 0usize;
    for_each_inline_block(buf, w, n, |block, b, _, data| {
        let end = ((block + 1) * BLOCK) as u64;
        while next < picked.len() && picked[next] < end {
            // Invert `position`: the value's row (bit offset) and lane (word column).
            let p = picked[next] as usize - block * BLOCK;
            let q = p % 128;
            let row = ORDER[(q / lanes) * lanes / 16] * 8 + p / 128;
            let lane = q % lanes;
            let v = if b == 0 {
                0
            } else {
                let start = row * b;
                let (k, off) = (start / w, start % w);
                let lo = read_word(data, w, k * lanes + lane) >> off;
                let hi = if off + b > w {
                    read_word(data, w, (k + 1) * lanes + lane) << (w - off)
                } else {
                    0
                };
                let mask = if b == 64 { u64::MAX } else { (1u64 << b) - 1 };
                (lo | hi) & mask
            };
            out.extend_from_slice(&v.to_le_bytes()[..nb]);
            next += 1;
        }
    })?;
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
    let k = checked_kernel(w, b)?;
    // Whole blocks must be present (a width of 0 stores nothing, so bound the output).
    let full = n / BLOCK;
    if full.saturating_mul(len) > buf.len() || n.saturating_mul(nb) > MAX_OUT_BYTES {
        return Err(corrupt!(
            "out-of-line bit-packed data of {} bytes cannot hold {n} values of width {b}",
            buf.len()
        ));
    }
    let mut out = vec![0u8; n * nb];
    let mut pos = 0usize;
    let mut done = 0usize;
    while done < n {
        let remaining = n - done;
        let left = buf.len().saturating_sub(pos);
        if remaining < BLOCK && left != len {
            let raw = buf
                .get(pos..pos + remaining * nb)
                .ok_or_else(|| corrupt!("out-of-line bit-packed tail of {remaining} values is truncated"))?;
            out[done * nb..].copy_from_slice(raw);
            return Ok(out);
        }
        let data = buf
            .get(pos..pos + len)
            .ok_or_else(|| corrupt!("out-of-line bit-packed block at byte {pos} needs {len} bytes"))?;
        pos += len;
        let take = remaining.min(BLOCK);
        unpack_to(k, data, &mut out, done * nb, take, nb);
        done += take;
    }
    Ok(out)
}

/// Largest output one bit-unpacking call may produce (a zero-width page stores no bytes).
const MAX_OUT_BYTES: usize = 1 << 30;

/// Packs one block of 1024 `w`-bit values at bit width `b` (the inverse of
/// [`unpack_block`]); bits of a value above `b` are dropped. Returns `b * 128` bytes.
pub fn pack_block(values: &[u64; BLOCK], w: usize, b: usize) -> Result<Vec<u8>> {
    let mut out = Vec::with_capacity(packed_block_bytes(b));
    pack_block_into(values, w, b, &mut out)?;
    Ok(out)
}

/// [`pack_block`] appending its `b * 128` bytes to `out`.
pub fn pack_block_into(values: &[u64; BLOCK], w: usize, b: usize, out: &mut Vec<u8>) -> Result<()> {
    if !matches!(w, 8 | 16 | 32 | 64) || b > w {
        return Err(Error::InvalidInput(format!("packing {w}-bit values at width {b}")));
    }
    if b == 0 {
        return Ok(());
    }
    let start = out.len();
    out.resize(start + packed_block_bytes(b), 0);
    let dst = &mut out[start..];
    match w {
        8 => pack_lanes::<8>(values, b, dst),
        16 => pack_lanes::<16>(values, b, dst),
        32 => pack_lanes::<32>(values, b, dst),
        _ => pack_lanes::<64>(values, b, dst),
    }
    Ok(())
}

/// Packs each lane's `W` values (rows in transposed order) into `b` words of `W` bits,
/// word `k` of lane `l` going to word slot `k * lanes + l` of `dst`.
#[inline(always)]
fn pack_lanes<const W: usize>(values: &[u64; BLOCK], b: usize, dst: &mut [u8]) {
    let lanes = BLOCK / W;
    let nb = W / 8;
    let mask = if b == 64 { u64::MAX } else { (1u64 << b) - 1 };
    for lane in 0..lanes {
        let mut acc = 0u64;
        let mut off = 0usize;
        let mut k = 0usize;
        for group in ORDER.iter().take(W / 8) {
            let base = group * 16 + lane;
            for r in 0..8 {
                let v = values[base + r * 128] & mask;
                acc |= v << off;
                off += b;
                if off >= W {
                    let at = (k * lanes + lane) * nb;
                    dst[at..at + nb].copy_from_slice(&acc.to_le_bytes()[..nb]);
                    k += 1;
                    off -= W;
                    // The bits of `v` that did not fit start the next word.
                    acc = if off == 0 { 0 } else { v >> (b - off) };
                }
            }
        }
    }
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
        let packed = pack_block(&v, 32, 10).unwrap();
        assert_eq!(&packed[..4], &[0x00, 0x00, 0x02, 0x10]);
    }

    fn xorshift(seed: u64) -> impl FnMut() -> u64 {
        let mut x = seed | 1;
        move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        }
    }

    proptest! {
        /// The vectorised unpackers agree with the scalar reference on arbitrary packed
        /// bytes, and unpack what the packer packed, for every value type and bit width.
        #[test]
        fn fast_path_matches_scalar_for_every_width(w_sel in 0usize..4, seed in any::<u64>()) {
            let w = [8usize, 16, 32, 64][w_sel];
            let nb = w / 8;
            let mut next = xorshift(seed);
            for b in 0..=w {
                let packed: Vec<u8> = (0..packed_block_bytes(b)).map(|_| next() as u8).collect();
                let mut want = [0u64; BLOCK];
                unpack_block(&packed, w, b, &mut want).unwrap();
                let mut got = vec![0xAAu8; BLOCK * nb];
                unpack_block_into(&packed, w, b, &mut got).unwrap();
                let want_bytes: Vec<u8> = want.iter().flat_map(|v| v.to_le_bytes()[..nb].to_vec()).collect();
                prop_assert_eq!(&got, &want_bytes, "w={} b={}", w, b);
                // pack -> unpack is the identity on values that fit in b bits
                let mask = if b == 64 { u64::MAX } else { (1u64 << b) - 1 };
                let mut values = [0u64; BLOCK];
                values.iter_mut().for_each(|v| *v = next() & mask);
                let repacked = pack_block(&values, w, b).unwrap();
                prop_assert_eq!(repacked.len(), packed_block_bytes(b));
                unpack_block_into(&repacked, w, b, &mut got).unwrap();
                let expect: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()[..nb].to_vec()).collect();
                prop_assert_eq!(&got, &expect, "round trip w={} b={}", w, b);
            }
        }
    }

    #[test]
    fn short_inputs_are_errors() {
        let mut out = vec![0u8; BLOCK * 4];
        assert!(unpack_block_into(&[0u8; 10], 32, 3, &mut out).is_err());
        assert!(unpack_block_into(&[0u8; 4096], 32, 33, &mut out).is_err());
        assert!(unpack_block_into(&[0u8; 4096], 64, 3, &mut out).is_err());
        assert!(unpack_block_into(&[0u8; 4096], 12, 3, &mut out).is_err());
        // a huge count over a tiny buffer is refused before allocating
        assert!(decode_inline(&[1, 0, 0, 0], 32, usize::MAX / 8).is_err());
        assert!(decode_out_of_line(&[], 32, 0, 1 << 40).is_err());
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
                buf.extend(pack_block(&block, w, b).unwrap());
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
