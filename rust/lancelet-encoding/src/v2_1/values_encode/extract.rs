//! The visible values of a page, taken out of an Arrow array in the shapes the encoders
//! work on ([`Page`]).

use arrow_array::cast::AsArray;
use arrow_array::Array;
use arrow_data::ArrayData;
use arrow_schema::DataType;

use super::*;

/// Items of a fixed-size list.
pub(super) enum Items<'a> {
    /// Booleans: an LSB-first bitmap starting at bit 0.
    Bool(Vec<u8>),
    /// Fixed-width items of `width` bytes.
    Fixed { width: usize, data: &'a [u8] },
}

/// The visible values of one page in the shapes the encoders work on.
pub(super) enum Page<'a> {
    /// Booleans: an LSB-first bitmap starting at bit 0.
    Bool { bits: Vec<u8>, len: usize },
    /// Fixed-width values of `width` bytes.
    Fixed { width: usize, data: &'a [u8], len: usize },
    /// Variable-width values: `len + 1` offsets from 0 into `data`.
    Var {
        offsets: Vec<u64>,
        data: &'a [u8],
        large: bool,
    },
    /// Fixed-size lists of `dim` items (item validity bitmap when some item is null).
    /// Nested fixed-size lists have their inner sizes in `inner` (outer first), and
    /// `items` holds the innermost values, `dim * inner` of them per list.
    Fsl {
        dim: usize,
        inner: Vec<usize>,
        items: Items<'a>,
        validity: Option<Vec<u8>>,
        len: usize,
    },
}

impl Page<'_> {
    pub(super) fn len(&self) -> usize {
        match self {
            Page::Bool { len, .. } | Page::Fixed { len, .. } | Page::Fsl { len, .. } => *len,
            Page::Var { offsets, .. } => offsets.len() - 1,
        }
    }
}

/// Bytes per value of a fixed-width (non-boolean) type.
pub(super) fn fixed_width(dt: &DataType) -> Option<usize> {
    match dt {
        DataType::FixedSizeBinary(w) => usize::try_from(*w).ok().filter(|w| *w > 0),
        DataType::Boolean | DataType::Null => None,
        other => other.primitive_width(),
    }
}

/// The bytes of `len` fixed-width values of `data` (its offset applied).
pub(super) fn fixed_bytes(data: &ArrayData, width: usize) -> Result<&[u8]> {
    let (off, len) = (data.offset(), data.len());
    data.buffers()
        .first()
        .and_then(|b| b.as_slice().get(off * width..(off + len) * width))
        .ok_or_else(|| Error::InvalidInput(format!("array of {} has a short value buffer", data.data_type())))
}

/// `len` bits of `bits` starting at bit `start`, re-based to bit 0.
pub(super) fn bit_range(bits: &[u8], start: usize, len: usize) -> Vec<u8> {
    if start.is_multiple_of(8) {
        return bits[start / 8..(start + len).div_ceil(8)].to_vec();
    }
    let mut out = vec![0u8; len.div_ceil(8)];
    for i in 0..len {
        let j = start + i;
        if bits[j / 8] >> (j % 8) & 1 == 1 {
            out[i / 8] |= 1 << (i % 8);
        }
    }
    out
}

pub(super) fn extract<'a>(array: &'a dyn Array, data: &'a ArrayData) -> Result<Page<'a>> {
    let dt = array.data_type();
    let len = array.len();
    match dt {
        DataType::Boolean => Ok(Page::Bool {
            bits: array.as_boolean().values().sliced().to_vec(),
            len,
        }),
        DataType::Utf8 | DataType::Binary | DataType::LargeUtf8 | DataType::LargeBinary => {
            let large = matches!(dt, DataType::LargeUtf8 | DataType::LargeBinary);
            if len == 0 {
                return Ok(Page::Var {
                    offsets: vec![0],
                    data: &[],
                    large,
                });
            }
            let raw: Vec<u64> = if large {
                data.buffer::<i64>(0)
                    .get(..=len)
                    .map(|o| o.iter().map(|x| *x as u64).collect())
            } else {
                data.buffer::<i32>(0)
                    .get(..=len)
                    .map(|o| o.iter().map(|x| *x as u32 as u64).collect())
            }
            .ok_or_else(|| Error::InvalidInput(format!("{dt} array with short offsets")))?;
            let (start, end) = (raw[0], raw[len]);
            let bytes = data
                .buffers()
                .get(1)
                .and_then(|b| b.as_slice().get(start as usize..end as usize))
                .ok_or_else(|| Error::InvalidInput(format!("{dt} array with a short data buffer")))?;
            Ok(Page::Var {
                offsets: raw.iter().map(|o| o.saturating_sub(start)).collect(),
                data: bytes,
                large,
            })
        }
        DataType::FixedSizeList(item, d) => {
            let dim = usize::try_from(*d).map_err(|_| Error::InvalidInput(format!("{dt}: negative list size")))?;
            fsl_page(data, item.data_type(), dim, len)
        }
        other => match fixed_width(other) {
            Some(width) => Ok(Page::Fixed {
                width,
                data: fixed_bytes(data, width)?,
                len,
            }),
            None => Err(Error::Unsupported(format!("mini-block values of type {other}"))),
        },
    }
}

/// A fixed-size-list page: the `len * dim` items of `data`'s child (offsets applied).
pub(super) fn fsl_page<'a>(data: &'a ArrayData, idt: &DataType, dim: usize, len: usize) -> Result<Page<'a>> {
    let child = data
        .child_data()
        .first()
        .ok_or_else(|| Error::InvalidInput("fixed-size list without a child".into()))?;
    let n = len * dim;
    // First item, relative to the child array and absolute in its buffers.
    let rel = data.offset() * dim;
    let first = child.offset() + rel;
    let short = || Error::InvalidInput("fixed-size list with a short item buffer".into());
    let validity = match child.nulls() {
        Some(nulls) if rel + n <= nulls.len() => {
            let range = nulls.inner().slice(rel, n);
            (range.count_set_bits() < n).then(|| range.sliced().to_vec())
        }
        Some(_) => return Err(short()),
        None => None,
    };
    // Nested fixed-size lists: walk down to the innermost values (no nulls below the
    // outer list: its own nulls are definition levels).
    // Null buffers are logical (offset applied); a child's logical index is its parent's
    // physical index times the list size. Nulls below a null outer list are hidden by it
    // (its definition level); any other null inside a nested list cannot be stored here.
    let outer = data.nulls();
    let real_nulls = |a: &ArrayData, logical: usize, n: usize, per_outer: usize| -> bool {
        let Some(v) = a.nulls() else { return false };
        if logical + n > v.len() {
            return true;
        }
        let v = v.slice(logical, n);
        v.null_count() > 0 && (0..n).any(|j| v.is_null(j) && outer.is_none_or(|o| o.is_valid(j / per_outer)))
    };
    let (mut child, mut idt, mut first, mut n) = (child, idt, first, n);
    let mut inner = Vec::new();
    let mut per_outer = dim;
    let mut validity = validity;
    while let DataType::FixedSizeList(item, d) = idt {
        if validity.is_some() {
            if real_nulls(child, rel, len * dim, dim) {
                return Err(Error::Unsupported("nulls inside nested fixed-size lists".into()));
            }
            validity = None;
        }
        let d = usize::try_from(*d).map_err(|_| Error::InvalidInput("negative list size".into()))?;
        let next = child.child_data().first().ok_or_else(short)?;
        let (logical, count) = (first * d, n * d);
        per_outer *= d;
        if real_nulls(next, logical, count, per_outer) {
            return Err(Error::Unsupported("nulls inside nested fixed-size lists".into()));
        }
        first = next.offset() + logical;
        n = count;
        inner.push(d);
        child = next;
        idt = item.data_type();
    }
    let buf = child.buffers().first().ok_or_else(short)?.as_slice();
    let items = match idt {
        DataType::Boolean => {
            if (first + n).div_ceil(8) > buf.len() {
                return Err(short());
            }
            Items::Bool(bit_range(buf, first, n))
        }
        idt => {
            let width = fixed_width(idt)
                .ok_or_else(|| Error::Unsupported(format!("mini-block fixed-size lists of {idt} items")))?;
            Items::Fixed {
                width,
                data: buf.get(first * width..(first + n) * width).ok_or_else(short)?,
            }
        }
    };
    Ok(Page::Fsl {
        dim,
        inner,
        items,
        validity,
        len,
    })
}
