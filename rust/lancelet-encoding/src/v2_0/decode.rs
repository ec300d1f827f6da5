//! Decoding 2.0 page encodings into Arrow arrays.

use arrow_array::{make_array, new_null_array, Array, ArrayRef, UInt32Array};
use arrow_buffer::{BooleanBuffer, Buffer, NullBuffer, ScalarBuffer};
use arrow_data::{ArrayData, ArrayDataBuilder};
use arrow_schema::DataType;

use super::pb;
use super::pb::array_encoding::ArrayEncoding as E;
use super::pb::nullable::Nullability;
use crate::bits::{bytes_for_bits, checked_mul, prefix, to_usize};
use crate::{corrupt, Error, PageBuffers, Result};

/// Decodes `num_rows` values of type `data_type` described by `encoding`.
pub fn decode(
    encoding: &pb::ArrayEncoding,
    buffers: &PageBuffers<'_>,
    num_rows: u64,
    data_type: &DataType,
) -> Result<ArrayRef> {
    Ok(make_array(decode_data(encoding, buffers, num_rows, data_type)?))
}

/// Like [`decode`] but returns the raw `ArrayData`.
pub fn decode_data(
    encoding: &pb::ArrayEncoding,
    buffers: &PageBuffers<'_>,
    num_rows: u64,
    data_type: &DataType,
) -> Result<ArrayData> {
    let n = to_usize(num_rows, "row count")?;
    match variant(encoding)? {
        E::Nullable(nullable) => match nullable.nullability.as_ref() {
            Some(Nullability::NoNulls(inner)) => {
                decode_data(child(&inner.values, "no_nulls.values")?, buffers, num_rows, data_type)
            }
            Some(Nullability::AllNulls(_)) => Ok(new_null_array(data_type, n).to_data()),
            Some(Nullability::SomeNulls(inner)) => {
                let validity = decode_bitmap(child(&inner.validity, "validity")?, buffers, num_rows)?;
                let values = decode_data(child(&inner.values, "some_nulls.values")?, buffers, num_rows, data_type)?;
                let nulls = NullBuffer::new(BooleanBuffer::new(validity, 0, n));
                Ok(values.into_builder().nulls(Some(nulls)).build()?)
            }
            None => Err(corrupt!("Nullable encoding without a variant")),
        },
        E::Flat(flat) => decode_flat(flat, buffers, num_rows, data_type),
        E::FixedSizeList(fsl) => {
            let DataType::FixedSizeList(item, size) = data_type else {
                return Err(corrupt!("FixedSizeList encoding for a {data_type} column"));
            };
            if i64::from(fsl.dimension) != i64::from(*size) {
                return Err(corrupt!(
                    "FixedSizeList dimension {} does not match the schema's {size}",
                    fsl.dimension
                ));
            }
            let items_n = checked_mul(num_rows, u64::from(fsl.dimension), "list items")?;
            let items = decode_data(child(&fsl.items, "items")?, buffers, items_n, item.data_type())?;
            Ok(ArrayDataBuilder::new(data_type.clone())
                .len(n)
                .add_child_data(items)
                .build()?)
        }
        E::FixedSizeBinary(fsb) => {
            let DataType::FixedSizeBinary(width) = data_type else {
                return Err(corrupt!("FixedSizeBinary encoding for a {data_type} column"));
            };
            if i64::from(fsb.byte_width) != i64::from(*width) {
                return Err(corrupt!(
                    "FixedSizeBinary width {} does not match {width}",
                    fsb.byte_width
                ));
            }
            let bytes_n = checked_mul(num_rows, u64::from(fsb.byte_width), "fixed size binary bytes")?;
            let bytes = decode_data(child(&fsb.bytes, "bytes")?, buffers, bytes_n, &DataType::UInt8)?;
            let values = bytes
                .buffers()
                .first()
                .cloned()
                .unwrap_or_else(|| Buffer::from_vec(Vec::<u8>::new()));
            Ok(ArrayDataBuilder::new(data_type.clone())
                .len(n)
                .add_buffer(values)
                .build()?)
        }
        E::Binary(binary) => {
            let indices = decode_u64s(child(&binary.indices, "indices")?, buffers, num_rows)?;
            let bytes = flat_buffer(child(&binary.bytes, "bytes")?, buffers, 8)?;
            build_binary(&indices, 0, bytes, binary.null_adjustment, data_type)
        }
        E::Dictionary(dict) => decode_dictionary(dict, buffers, num_rows, data_type),
        E::PackedStruct(ps) => decode_packed_struct(ps, buffers, n, data_type),
        E::Struct(_) | E::List(_) => Err(corrupt!(
            "structural encoding found where values of type {data_type} were expected"
        )),
        other => Err(Error::Unsupported(format!(
            "2.0 page encoding {} is not supported yet",
            encoding_name(other)
        ))),
    }
}

/// The oneof variant of an `ArrayEncoding`, or a corrupt-data error when it is empty.
pub fn variant(encoding: &pb::ArrayEncoding) -> Result<&E> {
    encoding
        .array_encoding
        .as_ref()
        .ok_or_else(|| corrupt!("empty ArrayEncoding"))
}

/// A required child encoding.
pub fn child<'a>(e: &'a Option<Box<pb::ArrayEncoding>>, what: &str) -> Result<&'a pb::ArrayEncoding> {
    e.as_deref().ok_or_else(|| corrupt!("encoding is missing its {what}"))
}

/// A short, stable name for an encoding variant (used in errors and metadata).
pub fn encoding_name(e: &E) -> &'static str {
    match e {
        E::Flat(_) => "flat",
        E::Nullable(_) => "nullable",
        E::FixedSizeList(_) => "fixed_size_list",
        E::List(_) => "list",
        E::Struct(_) => "struct",
        E::Binary(_) => "binary",
        E::Dictionary(_) => "dictionary",
        E::Fsst(_) => "fsst",
        E::PackedStruct(_) => "packed_struct",
        E::Bitpacked(_) => "bitpacked",
        E::FixedSizeBinary(_) => "fixed_size_binary",
        E::BitpackedForNonNeg(_) => "bitpacked_for_non_neg",
        E::Constant(_) => "constant",
        E::InlineBitpacking(_) => "inline_bitpacking",
        E::OutOfLineBitpacking(_) => "out_of_line_bitpacking",
        E::Variable(_) => "variable",
        E::PackedStructFixedWidthMiniBlock(_) => "packed_struct_fixed_width_mini_block",
        E::Block(_) => "block",
        E::Rle(_) => "rle",
        E::GeneralMiniBlock(_) => "general_mini_block",
        E::ByteStreamSplit(_) => "byte_stream_split",
    }
}

/// Looks up the buffer a `Buffer` reference points at.
pub fn resolve<'a>(buffers: &'a PageBuffers<'_>, r: Option<&pb::Buffer>) -> Result<&'a Buffer> {
    let r = r.ok_or_else(|| corrupt!("Flat encoding without a buffer"))?;
    let idx = r.buffer_index as usize;
    let list = match pb::buffer::BufferType::try_from(r.buffer_type) {
        Ok(pb::buffer::BufferType::Page) => buffers.page,
        Ok(pb::buffer::BufferType::Column) => buffers.column,
        Ok(pb::buffer::BufferType::File) => {
            return Err(Error::Unsupported("file-level buffers in page encodings".into()))
        }
        Err(_) => return Err(corrupt!("unknown buffer type {}", r.buffer_type)),
    };
    list.get(idx)
        .ok_or_else(|| corrupt!("buffer index {idx} out of range ({} buffers)", list.len()))
}

/// Bits one value of `dt` takes in a `Flat` buffer.
pub fn flat_bits(dt: &DataType) -> Option<u64> {
    Some(match dt {
        DataType::Boolean => 1,
        DataType::FixedSizeBinary(w) => u64::try_from(*w).ok()? * 8,
        DataType::Decimal32(_, _) => 32,
        DataType::Decimal64(_, _) => 64,
        DataType::Decimal128(_, _) => 128,
        DataType::Decimal256(_, _) => 256,
        dt => (dt.primitive_width()? as u64) * 8,
    })
}

/// The whole buffer of a `Flat` encoding, checking its bit width.
fn flat_buffer<'a>(e: &pb::ArrayEncoding, buffers: &'a PageBuffers<'_>, bits: u64) -> Result<&'a Buffer> {
    match variant(e)? {
        E::Flat(flat) => {
            check_uncompressed(flat)?;
            if flat.bits_per_value != bits {
                return Err(corrupt!("expected {bits}-bit values, found {}", flat.bits_per_value));
            }
            resolve(buffers, flat.buffer.as_ref())
        }
        other => Err(Error::Unsupported(format!(
            "{} encoding for raw bytes",
            encoding_name(other)
        ))),
    }
}

/// A packed struct: whole rows, each child's fixed-width value back to back in field order.
fn decode_packed_struct(
    ps: &pb::PackedStruct,
    buffers: &PageBuffers<'_>,
    n: usize,
    dt: &DataType,
) -> Result<ArrayData> {
    match dt {
        DataType::Struct(_) => {}
        // Blob columns store (position, size) pairs as a packed struct.
        DataType::LargeBinary | DataType::Binary => {
            return Err(Error::Unsupported("blob columns (packed position/size pairs)".into()))
        }
        _ => return Err(corrupt!("packed struct encoding for a {dt} column")),
    }
    let mut row_bits = 0u64;
    for inner in &ps.inner {
        let mut e = inner;
        // Children are stored as nullable(no_nulls(flat)).
        while let E::Nullable(nb) = variant(e)? {
            match nb.nullability.as_ref() {
                Some(Nullability::NoNulls(nn)) => e = child(&nn.values, "no_nulls.values")?,
                _ => return Err(Error::Unsupported("packed struct children with nulls".into())),
            }
        }
        match variant(e)? {
            E::Flat(f) if f.bits_per_value % 8 == 0 && f.bits_per_value > 0 => {
                check_uncompressed(f)?;
                row_bits = row_bits.saturating_add(f.bits_per_value);
            }
            other => {
                return Err(Error::Unsupported(format!(
                    "packed struct children encoded as {}",
                    encoding_name(other)
                )))
            }
        }
    }
    let need = checked_mul(n as u64, row_bits / 8, "packed struct bytes")?;
    let buf = prefix(resolve(buffers, ps.buffer.as_ref())?, need, "packed struct rows")?;
    let values = crate::v2_1::values::Values::Fixed {
        bits: row_bits,
        data: buf.to_vec(),
        len: n,
    };
    Ok(values.into_array(dt)?.to_data())
}

/// Whether a flat buffer is stored as is: no compression scheme, or "none", which pylance
/// writes for a column asked not to be compressed (`lance-encoding:compression = none`,
/// e.g. the posting lists of an NGRAM index).
pub fn is_uncompressed(flat: &pb::Flat) -> bool {
    flat.compression
        .as_ref()
        .is_none_or(|c| c.scheme.is_empty() || c.scheme.eq_ignore_ascii_case("none"))
}

fn check_uncompressed(flat: &pb::Flat) -> Result<()> {
    match &flat.compression {
        Some(c) if !is_uncompressed(flat) => Err(Error::Unsupported(format!(
            "compressed flat buffers ({}) are not supported yet",
            c.scheme
        ))),
        _ => Ok(()),
    }
}

fn decode_flat(flat: &pb::Flat, buffers: &PageBuffers<'_>, num_rows: u64, dt: &DataType) -> Result<ArrayData> {
    check_uncompressed(flat)?;
    let expected = flat_bits(dt).ok_or_else(|| corrupt!("Flat encoding for a {dt} column"))?;
    if flat.bits_per_value != expected {
        return Err(corrupt!(
            "{dt} values must be {expected} bits wide, the page says {}",
            flat.bits_per_value
        ));
    }
    let n = to_usize(num_rows, "row count")?;
    let needed = bytes_for_bits(checked_mul(num_rows, expected, "flat buffer size")?);
    let buf = prefix(resolve(buffers, flat.buffer.as_ref())?, needed, "flat values")?;
    let buf = aligned_for(buf, expected);
    Ok(ArrayDataBuilder::new(dt.clone()).len(n).add_buffer(buf).build()?)
}

/// Arrow requires typed buffers to be aligned to their element size; copy when they are not
/// (only happens for buffers that were not read at 64-byte aligned offsets).
fn aligned_for(buf: Buffer, bits: u64) -> Buffer {
    let align = match bits {
        16 => 2,
        32 => 4,
        64 => 8,
        128 | 256 => 16,
        _ => 1,
    };
    if (buf.as_ptr() as usize).is_multiple_of(align) {
        buf
    } else {
        Buffer::from_slice_ref(buf.as_slice())
    }
}

/// Decodes a bitmap encoded as `Flat(bits_per_value = 1)`.
fn decode_bitmap(e: &pb::ArrayEncoding, buffers: &PageBuffers<'_>, num_rows: u64) -> Result<Buffer> {
    let buf = flat_buffer(e, buffers, 1)?;
    prefix(buf, bytes_for_bits(num_rows), "validity bitmap")
}

/// Decodes an encoding that must hold `num_rows` non-null unsigned integers, widened to u64.
pub fn decode_u64s(e: &pb::ArrayEncoding, buffers: &PageBuffers<'_>, num_rows: u64) -> Result<ScalarBuffer<u64>> {
    let bits = leaf_bits(e)?;
    let dt = match bits {
        8 => DataType::UInt8,
        16 => DataType::UInt16,
        32 => DataType::UInt32,
        64 => DataType::UInt64,
        b => return Err(corrupt!("{b}-bit integers are not a valid offset width")),
    };
    let data = decode_data(e, buffers, num_rows, &dt)?;
    if data.null_count() != 0 {
        return Err(corrupt!("offsets or indices contain nulls"));
    }
    let arr = make_array(data);
    Ok(widen_u64(arr.as_ref()))
}

fn widen_u64(arr: &dyn Array) -> ScalarBuffer<u64> {
    use arrow_array::cast::AsArray;
    use arrow_array::types::{UInt16Type, UInt32Type, UInt64Type, UInt8Type};
    match arr.data_type() {
        DataType::UInt64 => arr.as_primitive::<UInt64Type>().values().clone(),
        DataType::UInt32 => arr
            .as_primitive::<UInt32Type>()
            .values()
            .iter()
            .map(|v| u64::from(*v))
            .collect(),
        DataType::UInt16 => arr
            .as_primitive::<UInt16Type>()
            .values()
            .iter()
            .map(|v| u64::from(*v))
            .collect(),
        _ => arr
            .as_primitive::<UInt8Type>()
            .values()
            .iter()
            .map(|v| u64::from(*v))
            .collect(),
    }
}

/// The bit width of the `Flat` leaf under any `Nullable` wrappers.
pub fn leaf_bits(e: &pb::ArrayEncoding) -> Result<u64> {
    match variant(e)? {
        E::Flat(f) => Ok(f.bits_per_value),
        E::Nullable(n) => match n.nullability.as_ref() {
            Some(Nullability::NoNulls(inner)) => leaf_bits(child(&inner.values, "values")?),
            Some(Nullability::SomeNulls(inner)) => leaf_bits(child(&inner.values, "values")?),
            Some(Nullability::AllNulls(_)) => Ok(64),
            None => Err(corrupt!("Nullable encoding without a variant")),
        },
        other => Err(Error::Unsupported(format!(
            "{} encoding for integers",
            encoding_name(other)
        ))),
    }
}

/// Builds a string/binary array from 2.0 `Binary` indices.
///
/// `indices[i]` is the end offset of value `i` (plus `null_adjustment` when the value is
/// null); `base` is the end offset of the value before the first one (0 at a page start)
/// and `bytes` starts at that offset.
pub fn build_binary(
    indices: &[u64],
    base: u64,
    bytes: &Buffer,
    null_adjustment: u64,
    dt: &DataType,
) -> Result<ArrayData> {
    let n = indices.len();
    // Fast path: no nulls (no index reaches the adjustment), so the indices are the ends.
    let has_nulls = null_adjustment > 0 && indices.iter().any(|v| *v >= null_adjustment);
    let mut validity = arrow_buffer::BooleanBufferBuilder::new(if has_nulls { n } else { 0 });
    let unadjust = |v: u64| {
        if has_nulls && v >= null_adjustment {
            v - null_adjustment
        } else {
            v
        }
    };
    let mut prev = base;
    for &v in indices {
        let end = unadjust(v);
        if end < prev {
            return Err(corrupt!("binary offsets go backwards ({end} after {prev})"));
        }
        if has_nulls {
            validity.append(v < null_adjustment);
        }
        prev = end;
    }
    let total = prev - base;
    let data = prefix(bytes, total, "binary bytes")?;
    let offsets = match dt {
        DataType::Utf8 | DataType::Binary => {
            if total > i32::MAX as u64 {
                return Err(Error::Unsupported(format!(
                    "{total} bytes of {dt} in one page exceed the 32-bit offset range; read as large type"
                )));
            }
            let mut o = Vec::with_capacity(n + 1);
            o.push(0i32);
            o.extend(indices.iter().map(|v| (unadjust(*v) - base) as i32));
            Buffer::from_vec(o)
        }
        DataType::LargeUtf8 | DataType::LargeBinary => {
            let mut o = Vec::with_capacity(n + 1);
            o.push(0i64);
            o.extend(indices.iter().map(|v| (unadjust(*v) - base) as i64));
            Buffer::from_vec(o)
        }
        _ => return Err(corrupt!("Binary encoding for a {dt} column")),
    };
    let nulls = has_nulls.then(|| NullBuffer::new(validity.finish()));
    Ok(ArrayDataBuilder::new(dt.clone())
        .len(n)
        .add_buffer(offsets)
        .add_buffer(data)
        .nulls(nulls)
        .build()?)
}

fn decode_dictionary(
    dict: &pb::Dictionary,
    buffers: &PageBuffers<'_>,
    num_rows: u64,
    dt: &DataType,
) -> Result<ArrayData> {
    let n_items = u64::from(dict.num_dictionary_items);
    let indices_enc = child(&dict.indices, "indices")?;
    let items_enc = child(&dict.items, "items")?;
    match dt {
        DataType::Dictionary(key, value) => {
            let items = decode_data(items_enc, buffers, n_items, value)?;
            let keys = decode_data(indices_enc, buffers, num_rows, key)?;
            check_keys(&make_array(keys.clone()), n_items)?;
            Ok(keys
                .into_builder()
                .data_type(dt.clone())
                .child_data(vec![items])
                .build()?)
        }
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Binary | DataType::LargeBinary => {
            // Dictionary-encoded plain strings: index 0 stands for null, item k is index k + 1.
            let items = make_array(decode_data(items_enc, buffers, n_items, dt)?);
            let keys = decode_u64s(indices_enc, buffers, num_rows)?;
            let mut take_idx = Vec::with_capacity(keys.len());
            for &k in keys.iter() {
                if k > n_items {
                    return Err(corrupt!("dictionary index {k} out of range ({n_items} items)"));
                }
                take_idx.push(k.checked_sub(1).map(|v| v as u32));
            }
            let idx = UInt32Array::from(take_idx);
            let out = arrow_select::take::take(items.as_ref(), &idx, None)?;
            Ok(out.to_data())
        }
        _ => Err(corrupt!("Dictionary encoding for a {dt} column")),
    }
}

fn check_keys(keys: &ArrayRef, n_items: u64) -> Result<()> {
    use arrow_array::cast::AsArray;
    use arrow_array::types::*;
    macro_rules! check {
        ($t:ty) => {{
            for k in keys.as_primitive::<$t>().iter().flatten() {
                let k = i128::from(k);
                if k < 0 || k >= i128::from(n_items) {
                    return Err(corrupt!("dictionary key {k} out of range ({n_items} items)"));
                }
            }
        }};
    }
    match keys.data_type() {
        DataType::Int8 => check!(Int8Type),
        DataType::Int16 => check!(Int16Type),
        DataType::Int32 => check!(Int32Type),
        DataType::Int64 => check!(Int64Type),
        DataType::UInt8 => check!(UInt8Type),
        DataType::UInt16 => check!(UInt16Type),
        DataType::UInt32 => check!(UInt32Type),
        DataType::UInt64 => check!(UInt64Type),
        other => return Err(corrupt!("dictionary keys of type {other}")),
    }
    Ok(())
}

/// Decodes the `List` offsets of one page into per-row `(start, end, valid)` item positions
/// relative to the first item of the page.
pub fn decode_list_offsets(list: &pb::List, buffers: &PageBuffers<'_>, num_rows: u64) -> Result<Vec<(u64, u64, bool)>> {
    let raw = decode_u64s(child(&list.offsets, "offsets")?, buffers, num_rows)?;
    list_positions(&raw, 0, list.null_offset_adjustment, list.num_items)
}

/// Turns raw 2.0 list offsets into `(start, end, valid)`; `prev` is the raw offset before
/// `raw[0]` (0 at a page start).
pub fn list_positions(raw: &[u64], prev: u64, adjustment: u64, num_items: u64) -> Result<Vec<(u64, u64, bool)>> {
    let unadjust = |v: u64| -> (u64, bool) {
        if adjustment > 0 && v >= adjustment {
            (v - adjustment, false)
        } else {
            (v, true)
        }
    };
    let mut start = unadjust(prev).0;
    let mut out = Vec::with_capacity(raw.len());
    for &v in raw {
        let (end, valid) = unadjust(v);
        if end < start || end > num_items {
            return Err(corrupt!(
                "list offsets out of order or past the {num_items} items of the page ({start}..{end})"
            ));
        }
        out.push((start, end, valid));
        start = end;
    }
    Ok(out)
}
