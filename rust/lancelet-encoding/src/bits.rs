//! Small helpers for bitmaps and checked arithmetic on sizes read from disk.

use arrow_buffer::{BooleanBuffer, Buffer, NullBuffer};

use crate::{corrupt, Result};

/// Bytes needed to hold `bits` bits.
pub fn bytes_for_bits(bits: u64) -> u64 {
    bits.div_ceil(8)
}

/// `a * b` as u64, or a corrupt-data error when it overflows.
pub fn checked_mul(a: u64, b: u64, what: &str) -> Result<u64> {
    a.checked_mul(b).ok_or_else(|| corrupt!("{what}: {a} x {b} overflows"))
}

/// Converts a count read from disk to `usize`, refusing values this process cannot address.
pub fn to_usize(v: u64, what: &str) -> Result<usize> {
    usize::try_from(v).map_err(|_| corrupt!("{what} {v} is too large"))
}

/// Returns the first `len` bytes of `buf`, or an error naming `what` when it is shorter.
pub fn prefix(buf: &Buffer, len: u64, what: &str) -> Result<Buffer> {
    let len_usize = to_usize(len, what)?;
    if buf.len() < len_usize {
        return Err(corrupt!(
            "{what}: buffer holds {} bytes but {len} are needed",
            buf.len()
        ));
    }
    Ok(buf.slice_with_length(0, len_usize))
}

/// A bitmap of `len` bits starting at bit `offset` of `buf`, copied to start at bit 0
/// when the offset is not a whole byte.
pub fn bitmap_from(buf: &Buffer, offset: usize, len: usize) -> Buffer {
    if offset.is_multiple_of(8) {
        let start = offset / 8;
        let end = start + len.div_ceil(8);
        buf.slice_with_length(start, end - start)
    } else {
        buf.bit_slice(offset, len)
    }
}

/// The validity bitmap of an array as a buffer starting at bit 0, or `None` if it has no nulls.
pub fn validity_buffer(nulls: Option<&NullBuffer>) -> Option<Buffer> {
    let nulls = nulls?;
    if nulls.null_count() == 0 {
        return None;
    }
    let inner: &BooleanBuffer = nulls.inner();
    Some(bitmap_from(inner.inner(), inner.offset(), inner.len()))
}

/// Pads a byte count up to the next multiple of `align` (a power of two).
pub fn pad_to(len: u64, align: u64) -> u64 {
    (len + align - 1) & !(align - 1)
}
