//! Zone statistics: per column, the null count, minimum and maximum of consecutive runs of
//! rows ("zones", each inside one page), so that filtered reads can skip rows whose range
//! cannot match.
//!
//! The Lance spec leaves room for page statistics but pylance 14 neither writes nor reads
//! them, so lancelet keeps its own: an extra global buffer, found through the schema
//! metadata key [`PAGE_STATS_KEY`] (its value is the buffer's index). Readers that do not
//! know the key (pylance) never look at the buffer.
//!
//! Buffer layout (version 2; `varint` is unsigned LEB128, other integers little endian):
//!
//! ```text
//! magic "LLZS", u8 version (2), varint column count, then per column:
//!   varint column index, varint zone count, then per zone:
//!     varint rows since the previous zone's end (the first: since row 0),
//!     varint rows, varint null count, u8 flags (1: has min, 2: has max),
//!     [varint length, bytes] min if flagged, [varint length, bytes] max if flagged
//! u64 FNV-1a hash of everything before it
//! ```
//!
//! Version 1 (still read) stored every count as a fixed-width integer: u32 column count,
//! index and zone count; u64 first row, rows and null count; u32 value lengths. Version 2
//! takes about half the bytes (22 instead of 49 per zone of an `int64` column), which
//! matters next to well-compressed pages.
//!
//! The hash catches damaged bytes that would still parse: wrong bounds would silently drop
//! matching rows, so statistics that fail it are not used.
//!
//! A value is the native little-endian bytes of a fixed-width type (integers, floats,
//! dates, times, timestamps, durations, 128-bit decimals), one byte 0/1 for booleans, or
//! the bytes of a string or binary value. Strings and binaries longer than
//! [`MAX_VALUE_BYTES`] are stored as a shorter lower bound (a prefix) and a shorter upper
//! bound (a prefix whose last character is incremented), or no maximum when none exists.
//! Zones cover rows in ascending order; rows no zone covers are simply unknown.

use std::cmp::Ordering;
use std::ops::Range;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::*;
use arrow_array::{
    Array, ArrayRef, ArrowNativeTypeOp, ArrowPrimitiveType, BinaryArray, BooleanArray, LargeBinaryArray,
    LargeStringArray, OffsetSizeTrait, StringArray,
};
use arrow_buffer::{Buffer, ToByteSlice};
use arrow_data::ArrayData;
use arrow_schema::{DataType, TimeUnit};

use crate::error::{Error, Result};

/// Schema metadata key whose value is the index of the global buffer holding the statistics.
pub const PAGE_STATS_KEY: &str = "lancelet:page_stats";
/// Strings and binaries longer than this are stored as shorter bounds.
pub const MAX_VALUE_BYTES: usize = 64;
/// Default rows per zone.
pub const DEFAULT_ZONE_ROWS: u64 = 8192;

const MAGIC: &[u8; 4] = b"LLZS";
const VERSION: u8 = 2;

/// Statistics of one run of rows of one column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ZoneStats {
    /// The rows covered (row numbers of the column).
    pub rows: Range<u64>,
    /// Null values among them.
    pub null_count: u64,
    /// A lower bound of the non-null values (see the module docs for the encoding).
    pub min: Option<Vec<u8>>,
    /// An upper bound of the non-null values.
    pub max: Option<Vec<u8>>,
}

/// The statistics of a file: zones per column index.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FileStats {
    columns: Vec<(u32, Vec<ZoneStats>)>,
}

impl FileStats {
    /// Adds the zones of `column` (ascending, non-overlapping; checked by [`FileStats::decode`]).
    pub fn push_column(&mut self, column: u32, zones: Vec<ZoneStats>) {
        self.columns.push((column, zones));
    }

    /// The zones of `column`, if recorded.
    pub fn column(&self, column: usize) -> Option<&[ZoneStats]> {
        self.columns
            .iter()
            .find(|(c, _)| *c as usize == column)
            .map(|(_, z)| z.as_slice())
    }

    /// Column indexes with statistics.
    pub fn columns(&self) -> impl Iterator<Item = usize> + '_ {
        self.columns.iter().map(|(c, _)| *c as usize)
    }

    /// Keeps only the columns whose zones lie within `column_rows(column)` rows (a column
    /// the file does not have, or statistics past its end, are dropped rather than trusted).
    pub fn retain_valid(&mut self, column_rows: impl Fn(usize) -> Option<u64>) {
        self.columns.retain(|(c, zones)| match column_rows(*c as usize) {
            Some(n) => zones.last().is_none_or(|z| z.rows.end <= n),
            None => false,
        });
    }

    /// Serializes the statistics (see the module docs).
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend_from_slice(MAGIC);
        out.push(VERSION);
        put_varint(&mut out, self.columns.len() as u64);
        for (c, zones) in &self.columns {
            put_varint(&mut out, u64::from(*c));
            put_varint(&mut out, zones.len() as u64);
            let mut end = 0u64;
            for z in zones {
                put_varint(&mut out, z.rows.start.saturating_sub(end));
                put_varint(&mut out, z.rows.end - z.rows.start);
                put_varint(&mut out, z.null_count);
                out.push(u8::from(z.min.is_some()) | (u8::from(z.max.is_some()) << 1));
                for v in [&z.min, &z.max].into_iter().flatten() {
                    put_varint(&mut out, v.len() as u64);
                    out.extend_from_slice(v);
                }
                end = z.rows.end;
            }
        }
        let hash = fnv1a(&out);
        out.extend_from_slice(&hash.to_le_bytes());
        out
    }

    /// Parses statistics written by [`FileStats::encode`], checking the hash and then every
    /// count and range: damaged bytes give an error, never a panic or an oversized
    /// allocation.
    pub fn decode(bytes: &[u8], path: &str) -> Result<Self> {
        let split = bytes.len().checked_sub(8);
        let (body, hash) = match split {
            Some(at) if at >= MAGIC.len() => bytes.split_at(at),
            _ => return Err(Error::corrupt(path, "page statistics: truncated")),
        };
        if body[..MAGIC.len()] == MAGIC[..] && hash != fnv1a(body).to_le_bytes() {
            return Err(Error::corrupt(path, "page statistics: checksum mismatch"));
        }
        Self::parse(body, path)
    }

    fn parse(bytes: &[u8], path: &str) -> Result<Self> {
        let bad = |m: &str| Error::corrupt(path, format!("page statistics: {m}"));
        let mut r = Cursor { bytes, at: 0 };
        if r.take(4).ok_or_else(|| bad("truncated"))? != MAGIC {
            return Err(bad("bad magic"));
        }
        let version = r.u8().ok_or_else(|| bad("truncated"))?;
        if version != 1 && version != VERSION {
            return Err(Error::Unsupported(format!(
                "{path}: page statistics version {version} (this build reads versions 1 and {VERSION})"
            )));
        }
        let v1 = version == 1;
        // Fixed-width counts in version 1, varints in version 2.
        let count = |r: &mut Cursor<'_>, wide: bool| -> Option<u64> {
            match (v1, wide) {
                (true, true) => r.u64(),
                (true, false) => r.u32().map(u64::from),
                (false, _) => r.varint(),
            }
        };
        let ncols = count(&mut r, false).ok_or_else(|| bad("truncated"))?;
        let mut columns = Vec::new();
        for _ in 0..ncols {
            let column = count(&mut r, false)
                .and_then(|c| u32::try_from(c).ok())
                .ok_or_else(|| bad("truncated column header"))?;
            if columns.iter().any(|(c, _)| *c == column) {
                return Err(bad("a column is listed twice"));
            }
            let nzones = count(&mut r, false).ok_or_else(|| bad("truncated column header"))?;
            // Every zone takes at least 25 (version 1) or 4 bytes: refuse counts the buffer
            // cannot hold.
            let min_zone = if v1 { 25 } else { 4 };
            if nzones > (r.remaining() / min_zone) as u64 {
                return Err(bad("zone count exceeds the buffer"));
            }
            let nzones = nzones as usize;
            let mut zones: Vec<ZoneStats> = Vec::with_capacity(nzones);
            let mut prev_end = 0u64;
            for _ in 0..nzones {
                let first = count(&mut r, true).ok_or_else(|| bad("truncated zone"))?;
                let start = if v1 {
                    first
                } else {
                    prev_end.checked_add(first).ok_or_else(|| bad("zone rows overflow"))?
                };
                let len = count(&mut r, true).ok_or_else(|| bad("truncated zone"))?;
                let null_count = count(&mut r, true).ok_or_else(|| bad("truncated zone"))?;
                let flags = r.u8().ok_or_else(|| bad("truncated zone"))?;
                let end = start.checked_add(len).ok_or_else(|| bad("zone rows overflow"))?;
                prev_end = end;
                if len == 0 || null_count > len || flags > 3 {
                    return Err(bad("invalid zone"));
                }
                if zones.last().is_some_and(|z| z.rows.end > start) {
                    return Err(bad("zones overlap or are out of order"));
                }
                let mut value = |present: bool| -> Result<Option<Vec<u8>>> {
                    if !present {
                        return Ok(None);
                    }
                    let n = count(&mut r, false)
                        .and_then(|n| usize::try_from(n).ok())
                        .ok_or_else(|| bad("truncated value"))?;
                    Ok(Some(r.take(n).ok_or_else(|| bad("truncated value"))?.to_vec()))
                };
                let min = value(flags & 1 != 0)?;
                let max = value(flags & 2 != 0)?;
                zones.push(ZoneStats {
                    rows: start..end,
                    null_count,
                    min,
                    max,
                });
            }
            columns.push((column, zones));
        }
        if r.remaining() != 0 {
            return Err(bad("trailing bytes"));
        }
        Ok(Self { columns })
    }
}

/// 64-bit FNV-1a.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Cursor<'a> {
    fn remaining(&self) -> usize {
        self.bytes.len() - self.at
    }
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let end = self.at.checked_add(n)?;
        let s = self.bytes.get(self.at..end)?;
        self.at = end;
        Some(s)
    }
    fn u8(&mut self) -> Option<u8> {
        self.take(1).map(|b| b[0])
    }
    fn u32(&mut self) -> Option<u32> {
        self.take(4).and_then(|b| b.try_into().ok()).map(u32::from_le_bytes)
    }
    fn u64(&mut self) -> Option<u64> {
        self.take(8).and_then(|b| b.try_into().ok()).map(u64::from_le_bytes)
    }
    /// An unsigned LEB128 integer of at most 10 bytes that fits in 64 bits.
    fn varint(&mut self) -> Option<u64> {
        let mut v = 0u64;
        for i in 0..10 {
            let b = self.u8()?;
            let bits = u64::from(b & 0x7F);
            if i == 9 && bits > 1 {
                return None;
            }
            v |= bits << (7 * i);
            if b & 0x80 == 0 {
                return Some(v);
            }
        }
        None
    }
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Calls `$m!(ArrowType)` for the primitive Arrow type matching `$dt`, or evaluates `$other`.
macro_rules! with_primitive {
    ($dt:expr, $m:ident, $other:expr) => {
        match $dt {
            DataType::Int8 => $m!(Int8Type),
            DataType::Int16 => $m!(Int16Type),
            DataType::Int32 => $m!(Int32Type),
            DataType::Int64 => $m!(Int64Type),
            DataType::UInt8 => $m!(UInt8Type),
            DataType::UInt16 => $m!(UInt16Type),
            DataType::UInt32 => $m!(UInt32Type),
            DataType::UInt64 => $m!(UInt64Type),
            DataType::Float16 => $m!(Float16Type),
            DataType::Float32 => $m!(Float32Type),
            DataType::Float64 => $m!(Float64Type),
            DataType::Date32 => $m!(Date32Type),
            DataType::Date64 => $m!(Date64Type),
            DataType::Time32(TimeUnit::Second) => $m!(Time32SecondType),
            DataType::Time32(TimeUnit::Millisecond) => $m!(Time32MillisecondType),
            DataType::Time64(TimeUnit::Microsecond) => $m!(Time64MicrosecondType),
            DataType::Time64(TimeUnit::Nanosecond) => $m!(Time64NanosecondType),
            DataType::Timestamp(TimeUnit::Second, _) => $m!(TimestampSecondType),
            DataType::Timestamp(TimeUnit::Millisecond, _) => $m!(TimestampMillisecondType),
            DataType::Timestamp(TimeUnit::Microsecond, _) => $m!(TimestampMicrosecondType),
            DataType::Timestamp(TimeUnit::Nanosecond, _) => $m!(TimestampNanosecondType),
            DataType::Duration(TimeUnit::Second) => $m!(DurationSecondType),
            DataType::Duration(TimeUnit::Millisecond) => $m!(DurationMillisecondType),
            DataType::Duration(TimeUnit::Microsecond) => $m!(DurationMicrosecondType),
            DataType::Duration(TimeUnit::Nanosecond) => $m!(DurationNanosecondType),
            DataType::Decimal128(_, _) => $m!(Decimal128Type),
            _ => $other,
        }
    };
}

/// Whether statistics are kept for columns of type `dt`.
pub fn supports(dt: &DataType) -> bool {
    macro_rules! yes {
        ($t:ty) => {
            true
        };
    }
    with_primitive!(
        dt,
        yes,
        matches!(
            dt,
            DataType::Boolean | DataType::Utf8 | DataType::LargeUtf8 | DataType::Binary | DataType::LargeBinary
        )
    )
}

/// The statistics of `array` (a supported type), covering rows `first_row..` of its column.
pub fn zone_stats(array: &dyn Array, first_row: u64) -> Option<ZoneStats> {
    macro_rules! prim {
        ($t:ty) => {
            primitive_bounds::<$t>(array)
        };
    }
    let (min, max) = with_primitive!(
        array.data_type(),
        prim,
        match array.data_type() {
            DataType::Boolean => bool_bounds(array.as_boolean()),
            DataType::Utf8 => string_bounds(array.as_string::<i32>()),
            DataType::LargeUtf8 => string_bounds(array.as_string::<i64>()),
            DataType::Binary => binary_bounds(array.as_binary::<i32>()),
            DataType::LargeBinary => binary_bounds(array.as_binary::<i64>()),
            _ => return None,
        }
    );
    Some(ZoneStats {
        rows: first_row..first_row + array.len() as u64,
        null_count: array.null_count() as u64,
        min,
        max,
    })
}

type Bounds = (Option<Vec<u8>>, Option<Vec<u8>>);

fn primitive_bounds<T: ArrowPrimitiveType>(array: &dyn Array) -> Bounds {
    let a = array.as_primitive::<T>();
    let mut it = a.iter().flatten();
    let Some(first) = it.next() else {
        return (None, None);
    };
    // `compare` is the total order Arrow's comparison kernels use (floats included).
    let (mut lo, mut hi) = (first, first);
    for v in it {
        if v.compare(lo) == Ordering::Less {
            lo = v;
        }
        if v.compare(hi) == Ordering::Greater {
            hi = v;
        }
    }
    (Some(lo.to_byte_slice().to_vec()), Some(hi.to_byte_slice().to_vec()))
}

fn bool_bounds(a: &BooleanArray) -> Bounds {
    let (mut any_true, mut any_false) = (false, false);
    for v in a.iter().flatten() {
        any_true |= v;
        any_false |= !v;
    }
    if !any_true && !any_false {
        return (None, None);
    }
    (Some(vec![u8::from(!any_false)]), Some(vec![u8::from(any_true)]))
}

fn string_bounds<O: OffsetSizeTrait>(a: &arrow_array::GenericStringArray<O>) -> Bounds {
    let mut it = a.iter().flatten();
    let Some(first) = it.next() else {
        return (None, None);
    };
    let (mut lo, mut hi) = (first, first);
    for v in it {
        if v.as_bytes() < lo.as_bytes() {
            lo = v;
        }
        if v.as_bytes() > hi.as_bytes() {
            hi = v;
        }
    }
    (
        Some(string_lower(lo).into_bytes()),
        string_upper(hi).map(String::into_bytes),
    )
}

fn binary_bounds<O: OffsetSizeTrait>(a: &arrow_array::GenericBinaryArray<O>) -> Bounds {
    let mut it = a.iter().flatten();
    let Some(first) = it.next() else {
        return (None, None);
    };
    let (mut lo, mut hi) = (first, first);
    for v in it {
        lo = lo.min(v);
        hi = hi.max(v);
    }
    (Some(lo[..lo.len().min(MAX_VALUE_BYTES)].to_vec()), binary_upper(hi))
}

/// The longest prefix of `s` of at most [`MAX_VALUE_BYTES`] bytes ending on a character
/// boundary: no larger than `s`.
fn string_prefix(s: &str) -> &str {
    let mut end = s.len().min(MAX_VALUE_BYTES);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

fn string_lower(s: &str) -> String {
    string_prefix(s).to_string()
}

/// A string of at most [`MAX_VALUE_BYTES`] bytes no smaller than `s` (UTF-8 byte order is
/// code point order, so incrementing the last kept character bounds every longer string).
fn string_upper(s: &str) -> Option<String> {
    if s.len() <= MAX_VALUE_BYTES {
        return Some(s.to_string());
    }
    let mut chars: Vec<char> = string_prefix(s).chars().collect();
    while let Some(c) = chars.pop() {
        let next = match c as u32 {
            0xD7FF => Some('\u{E000}'),
            n => char::from_u32(n + 1),
        };
        if let Some(n) = next {
            chars.push(n);
            return Some(chars.into_iter().collect());
        }
    }
    None
}

/// Binary counterpart of [`string_upper`].
fn binary_upper(b: &[u8]) -> Option<Vec<u8>> {
    if b.len() <= MAX_VALUE_BYTES {
        return Some(b.to_vec());
    }
    let mut v = b[..MAX_VALUE_BYTES].to_vec();
    while let Some(last) = v.pop() {
        if last < u8::MAX {
            v.push(last + 1);
            return Some(v);
        }
    }
    None
}

/// A one-element array of type `dt` holding the stored value `bytes`, or `None` when the
/// bytes do not fit the type (statistics of another type are not trusted).
pub fn value_array(bytes: &[u8], dt: &DataType) -> Option<ArrayRef> {
    macro_rules! prim {
        ($t:ty) => {{
            if bytes.len() != std::mem::size_of::<<$t as ArrowPrimitiveType>::Native>() {
                return None;
            }
            let data = ArrayData::builder(dt.clone())
                .len(1)
                .add_buffer(Buffer::from_slice_ref(bytes))
                .build()
                .ok()?;
            Some(arrow_array::make_array(data))
        }};
    }
    with_primitive!(
        dt,
        prim,
        match dt {
            DataType::Boolean => match bytes {
                [b @ (0 | 1)] => Some(Arc::new(BooleanArray::from(vec![*b == 1])) as ArrayRef),
                _ => None,
            },
            DataType::Utf8 => Some(Arc::new(StringArray::from(vec![std::str::from_utf8(bytes).ok()?])) as ArrayRef),
            DataType::LargeUtf8 => {
                Some(Arc::new(LargeStringArray::from(vec![std::str::from_utf8(bytes).ok()?])) as ArrayRef)
            }
            DataType::Binary => Some(Arc::new(BinaryArray::from_vec(vec![bytes])) as ArrayRef),
            DataType::LargeBinary => Some(Arc::new(LargeBinaryArray::from_vec(vec![bytes])) as ArrayRef),
            _ => None,
        }
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{Float64Array, Int32Array};

    fn sample() -> FileStats {
        let mut s = FileStats::default();
        s.push_column(
            0,
            vec![
                ZoneStats {
                    rows: 0..10,
                    null_count: 2,
                    min: Some(vec![1, 0, 0, 0]),
                    max: Some(vec![9, 0, 0, 0]),
                },
                ZoneStats {
                    rows: 10..12,
                    null_count: 2,
                    min: None,
                    max: None,
                },
            ],
        );
        s.push_column(3, vec![]);
        s
    }

    #[test]
    fn encoding_round_trips() {
        let s = sample();
        let back = FileStats::decode(&s.encode(), "t").unwrap();
        assert_eq!(back, s);
        assert_eq!(back.column(0).map(<[_]>::len), Some(2));
        assert!(back.column(1).is_none());
    }

    /// The version 1 layout, as files written before version 2 hold it.
    fn encode_v1(s: &FileStats) -> Vec<u8> {
        let mut out = MAGIC.to_vec();
        out.push(1);
        out.extend_from_slice(&(s.columns.len() as u32).to_le_bytes());
        for (c, zones) in &s.columns {
            out.extend_from_slice(&c.to_le_bytes());
            out.extend_from_slice(&(zones.len() as u32).to_le_bytes());
            for z in zones {
                out.extend_from_slice(&z.rows.start.to_le_bytes());
                out.extend_from_slice(&(z.rows.end - z.rows.start).to_le_bytes());
                out.extend_from_slice(&z.null_count.to_le_bytes());
                out.push(u8::from(z.min.is_some()) | (u8::from(z.max.is_some()) << 1));
                for v in [&z.min, &z.max].into_iter().flatten() {
                    out.extend_from_slice(&(v.len() as u32).to_le_bytes());
                    out.extend_from_slice(v);
                }
            }
        }
        let hash = fnv1a(&out);
        out.extend_from_slice(&hash.to_le_bytes());
        out
    }

    #[test]
    fn version_1_buffers_still_decode_and_version_2_is_smaller() {
        let mut s = sample();
        s.push_column(
            5,
            (0..100u64)
                .map(|k| ZoneStats {
                    rows: k * 8192 + 7..(k + 1) * 8192,
                    null_count: k,
                    min: Some((k as i64).to_le_bytes().to_vec()),
                    max: Some((k as i64 * 1000).to_le_bytes().to_vec()),
                })
                .collect(),
        );
        let (v1, v2) = (encode_v1(&s), s.encode());
        assert_eq!(FileStats::decode(&v1, "t").unwrap(), s);
        assert_eq!(FileStats::decode(&v2, "t").unwrap(), s);
        assert!(
            v2.len() * 2 < v1.len(),
            "version 2 took {} bytes, version 1 {}",
            v2.len(),
            v1.len()
        );
    }

    proptest::proptest! {
        #[test]
        fn varints_round_trip(v in proptest::num::u64::ANY) {
            let mut b = Vec::new();
            put_varint(&mut b, v);
            let mut r = Cursor { bytes: &b, at: 0 };
            proptest::prop_assert_eq!(r.varint(), Some(v));
            proptest::prop_assert_eq!(r.remaining(), 0);
        }
    }

    #[test]
    fn damaged_buffers_are_errors_not_panics() {
        let bytes = sample().encode();
        for cut in 0..bytes.len() {
            assert!(
                FileStats::decode(&bytes[..cut], "t").is_err(),
                "prefix of {cut} bytes parsed"
            );
        }
        // The hash catches every single-byte change.
        for i in 0..bytes.len() {
            let mut b = bytes.clone();
            b[i] ^= 0x10;
            assert!(FileStats::decode(&b, "t").is_err(), "change at {i} undetected");
        }
        // Without the hash, every single-byte change either fails or parses into something
        // consistent.
        let body = &bytes[..bytes.len() - 8];
        for i in 0..body.len() {
            for v in [0u8, 1, 0x7f, 0xff] {
                let mut b = body.to_vec();
                b[i] = v;
                if let Ok(s) = FileStats::parse(&b, "t") {
                    for c in s.columns() {
                        for z in s.column(c).unwrap() {
                            assert!(z.null_count <= z.rows.end - z.rows.start);
                        }
                    }
                }
            }
        }
        // Huge counts do not allocate.
        let mut b = MAGIC.to_vec();
        b.push(1);
        b.extend_from_slice(&1u32.to_le_bytes());
        b.extend_from_slice(&0u32.to_le_bytes());
        b.extend_from_slice(&u32::MAX.to_le_bytes());
        assert!(FileStats::parse(&b, "t").is_err());
    }

    #[test]
    fn overlapping_zones_are_refused() {
        let mut s = FileStats::default();
        let z = |r: Range<u64>| ZoneStats {
            rows: r,
            null_count: 0,
            min: None,
            max: None,
        };
        s.push_column(0, vec![z(0..10), z(5..20)]);
        // Version 2 stores gaps, so only a version 1 buffer can claim overlapping zones.
        let err = FileStats::decode(&encode_v1(&s), "t").unwrap_err();
        assert!(err.to_string().contains("overlap"), "{err}");
    }

    #[test]
    fn retain_valid_drops_columns_past_the_end() {
        let mut s = sample();
        s.retain_valid(|c| (c == 0).then_some(11));
        assert!(s.column(0).is_none());
        let mut s = sample();
        s.retain_valid(|c| (c == 0).then_some(12));
        assert!(s.column(0).is_some() && s.column(3).is_none());
    }

    #[test]
    fn numeric_bounds_use_total_order() {
        let a = Float64Array::from(vec![Some(1.0), None, Some(f64::NAN), Some(-0.0), Some(-3.5)]);
        let z = zone_stats(&a, 5).unwrap();
        assert_eq!(z.rows, 5..10);
        assert_eq!(z.null_count, 1);
        let min = value_array(z.min.as_deref().unwrap(), &DataType::Float64).unwrap();
        let max = value_array(z.max.as_deref().unwrap(), &DataType::Float64).unwrap();
        assert_eq!(min.as_primitive::<Float64Type>().value(0), -3.5);
        assert!(max.as_primitive::<Float64Type>().value(0).is_nan());
        let i = Int32Array::from(vec![None, None]);
        let z = zone_stats(&i, 0).unwrap();
        assert_eq!((z.min, z.max, z.null_count), (None, None, 2));
        assert!(value_array(&[1, 2, 3], &DataType::Int32).is_none());
    }

    #[test]
    fn long_strings_get_valid_bounds() {
        let long = "é".repeat(40) + "zz";
        let a = StringArray::from(vec![long.as_str(), "b"]);
        let z = zone_stats(&a, 0).unwrap();
        let min = String::from_utf8(z.min.unwrap()).unwrap();
        let max = String::from_utf8(z.max.unwrap()).unwrap();
        assert_eq!(min, "b");
        assert!(max.len() <= MAX_VALUE_BYTES && max.as_str() > long.as_str());
        let top = char::MAX.to_string().repeat(20);
        assert_eq!(string_upper(&top), None);
        assert!(binary_upper(&[0xff; 70]).is_none());
        let b = binary_upper(&[1u8; 70]).unwrap();
        assert!(b.as_slice() > [1u8; 70].as_slice() && b.len() <= MAX_VALUE_BYTES);
        let lower = string_lower(&long);
        assert!(lower.as_str() <= long.as_str() && lower.len() <= MAX_VALUE_BYTES);
    }

    proptest::proptest! {
        #[test]
        fn string_bounds_enclose_values(v in proptest::collection::vec(".{0,80}", 1..6)) {
            let a = StringArray::from(v.clone());
            let z = zone_stats(&a, 0).unwrap();
            let min = String::from_utf8(z.min.unwrap()).unwrap();
            for s in &v {
                proptest::prop_assert!(min.as_str() <= s.as_str());
                if let Some(max) = &z.max {
                    let max = std::str::from_utf8(max).unwrap();
                    proptest::prop_assert!(s.as_str() <= max);
                }
            }
        }

        #[test]
        fn decode_never_panics(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..200), version in 1u8..=2) {
            let mut b = MAGIC.to_vec();
            b.push(version);
            b.extend_from_slice(&bytes);
            let _ = FileStats::parse(&b, "t");
            let _ = FileStats::decode(&b, "t");
        }
    }
}
