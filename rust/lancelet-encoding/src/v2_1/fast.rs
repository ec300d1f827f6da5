//! Zero-copy decoding of the simplest 2.1+ pages.
//!
//! A full-zip page of fixed-width values without repetition or definition levels (an
//! embedding column without nulls) stores the values back to back: the page buffer *is*
//! the Arrow values buffer. [`zero_copy`] wraps it without copying a byte, which matters
//! for wide columns (a 1M x 1024 float32 page is 4 GiB).

use std::sync::Arc;

use arrow_array::{make_array, ArrayRef};
use arrow_buffer::Buffer;
use arrow_data::ArrayData;
use arrow_schema::DataType;
use lancelet_proto::pb21::{self, compressive_encoding::Compression as C, full_zip_layout::Details};

use super::path::PathNode;
use crate::Result;

/// Width in bytes of the primitive items of a fixed-width leaf type (FSL: its items).
fn item_bytes(dt: &DataType) -> Option<usize> {
    match dt {
        DataType::FixedSizeList(f, _) => f.data_type().primitive_width(),
        DataType::Boolean => None,
        other => other.primitive_width(),
    }
}

fn flat_bits(enc: &pb21::CompressiveEncoding) -> Option<u64> {
    match enc.compression.as_ref()? {
        C::Flat(f) if f.data.as_ref().is_none_or(|c| c.scheme == 0) => Some(f.bits_per_value),
        _ => None,
    }
}

/// The array of a full-zip page that needs no decoding, or `None` when the page is not of
/// that kind (levels present, compressed values, nested path, misaligned buffer).
pub fn zero_copy(
    layout: &pb21::PageLayout,
    buffers: &[Buffer],
    num_rows: u64,
    path: &[PathNode],
) -> Option<Result<ArrayRef>> {
    let [PathNode::Leaf { data_type }] = path else {
        return None;
    };
    let Some(pb21::page_layout::Layout::FullZipLayout(f)) = layout.layout.as_ref() else {
        return None;
    };
    if f.bits_rep != 0 || f.bits_def != 0 || u64::from(f.num_items) != num_rows {
        return None;
    }
    let Some(Details::BitsPerValue(bits)) = f.details else {
        return None;
    };
    let enc = f.value_compression.as_ref()?;
    let item = item_bytes(data_type)?;
    let n = usize::try_from(num_rows).ok()?;
    let width = (bits / 8) as usize;
    // The encoding must describe exactly the Arrow layout of `data_type`.
    match (enc.compression.as_ref()?, data_type) {
        (C::FixedSizeList(l), DataType::FixedSizeList(_, d)) => {
            let inner = flat_bits(l.values.as_deref()?)?;
            if l.has_validity || l.items_per_value != *d as u64 || inner != item as u64 * 8 {
                return None;
            }
            if width != item * *d as usize {
                return None;
            }
        }
        (C::Flat(_), dt) if !matches!(dt, DataType::FixedSizeList(..)) => {
            if flat_bits(enc)? != bits as u64 || width != item {
                return None;
            }
        }
        _ => return None,
    }
    let buf = buffers.first()?;
    let need = n.checked_mul(width)?;
    if buf.len() < need || !(buf.as_ptr() as usize).is_multiple_of(item.max(1)) {
        return None;
    }
    let values = buf.slice_with_length(0, need);
    let data = match data_type {
        DataType::FixedSizeList(field, d) => {
            let child = ArrayData::builder(field.data_type().clone())
                .len(n * *d as usize)
                .add_buffer(values)
                .build();
            let child = match child {
                Ok(c) => c,
                Err(e) => return Some(Err(e.into())),
            };
            ArrayData::builder(DataType::FixedSizeList(Arc::clone(field), *d))
                .len(n)
                .add_child_data(child)
                .build()
        }
        dt => ArrayData::builder(dt.clone()).len(n).add_buffer(values).build(),
    };
    Some(data.map(make_array).map_err(Into::into))
}
