//! The constants of the byte layout (see the crate docs).

/// Header of an array container (`| count`).
pub(crate) const ARRAY: u32 = 0x8000_0000;
/// Header of an object container (`| count`).
pub(crate) const OBJECT: u32 = 0x4000_0000;
/// Header of the container wrapping a top-level scalar.
pub(crate) const SCALAR: u32 = 0x2000_0000;
/// The kind bits of a header.
pub(crate) const HEADER_KIND: u32 = 0xE000_0000;
/// The count bits of a header.
pub(crate) const HEADER_COUNT: u32 = 0x1FFF_FFFF;

/// A jentry bit Lance never writes (its length would be an offset); refused on read.
pub(crate) const ENTRY_OFFSET_FLAG: u32 = 0x8000_0000;
/// The type bits of a jentry.
pub(crate) const ENTRY_TYPE: u32 = 0x7000_0000;
/// The length bits of a jentry.
pub(crate) const ENTRY_LEN: u32 = 0x0FFF_FFFF;

pub(crate) const NULL: u32 = 0x0000_0000;
pub(crate) const STRING: u32 = 0x1000_0000;
pub(crate) const NUMBER: u32 = 0x2000_0000;
pub(crate) const FALSE: u32 = 0x3000_0000;
pub(crate) const TRUE: u32 = 0x4000_0000;
pub(crate) const CONTAINER: u32 = 0x5000_0000;

/// Number tags: the first byte of a number's payload.
pub(crate) mod tag {
    pub(crate) const ZERO: u8 = 0x00;
    pub(crate) const NAN: u8 = 0x10;
    pub(crate) const POS_INF: u8 = 0x20;
    pub(crate) const NEG_INF: u8 = 0x30;
    pub(crate) const INT: u8 = 0x40;
    pub(crate) const UINT: u8 = 0x50;
    pub(crate) const FLOAT: u8 = 0x60;
}

/// The big-endian `u32` at `at`, if the slice holds one there.
pub(crate) fn read_u32(bytes: &[u8], at: usize) -> Option<u32> {
    let b = bytes.get(at..at.checked_add(4)?)?;
    Some(u32::from_be_bytes(b.try_into().ok()?))
}
