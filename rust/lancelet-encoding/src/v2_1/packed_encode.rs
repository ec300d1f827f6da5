//! Encoding packed structs (field metadata `packed: true`, see [`super::path::is_packed`])
//! at 2.1+: one leaf column holding whole struct rows instead of one column per field.
//! The inverse of [`super::packed_decode`].
//!
//! * Fields that are all fixed width (integers, floats, dates, times, decimals,
//!   fixed-size binary) are stored row-major: each row is its fields' little-endian bytes
//!   back to back, with no padding, compressed as `PackedStruct { bits_per_value,
//!   Flat(row bits) }` in mini-block chunks.
//! * Otherwise (strings, binary, fixed-size lists) each row is zipped whole
//!   (`VariablePackedStruct`, 2.2): fixed fields as their bytes, variable ones as a
//!   length (32 or 64 bits, by the field's offset width) and then their bytes.
//!
//! Only the struct itself may be null (a null row keeps a zeroed slot); fields with nulls,
//! booleans and nested types are refused, as pylance 14 refuses them (booleans it writes
//! into files it cannot read back).

use arrow_array::cast::AsArray;
use arrow_array::{Array, StructArray};
use arrow_buffer::{Buffer, NullBuffer};
use arrow_schema::{DataType, Fields};
use lancelet_proto::pb21::{self, compressive_encoding::Compression as C, variable_packed_struct::field_encoding};

use super::values_encode::{flat, flat_enc, MiniBlockValues};
use crate::{Error, Result};

/// Bytes of a field stored by value in a row, if it is fixed width.
fn fixed_width(dt: &DataType) -> Option<usize> {
    match dt {
        DataType::Boolean => None,
        DataType::FixedSizeBinary(w) => usize::try_from(*w).ok().filter(|w| *w > 0),
        other => other.primitive_width(),
    }
}

/// Each field's width when every field is fixed width (the `PackedStruct` case).
pub fn fixed_widths(fields: &Fields) -> Option<Vec<usize>> {
    fields.iter().map(|f| fixed_width(f.data_type())).collect()
}

/// Refuses what a packed struct cannot hold: no fields, booleans, nested fields and
/// nulls in a field of a valid row.
pub fn check_fields(rows: &StructArray) -> Result<()> {
    if rows.num_columns() == 0 {
        return Err(Error::Unsupported("packed structs without fields".into()));
    }
    for (f, c) in rows.fields().iter().zip(rows.columns()) {
        let ok = match f.data_type() {
            DataType::Utf8 | DataType::LargeUtf8 | DataType::Binary | DataType::LargeBinary => true,
            DataType::FixedSizeList(item, _) => fixed_width(item.data_type()).is_some(),
            dt => fixed_width(dt).is_some(),
        };
        if !ok {
            return Err(Error::Unsupported(format!(
                "packed struct field {:?} of type {}: packed structs hold fixed-width, string, binary and fixed-size-list fields",
                f.name(),
                f.data_type()
            )));
        }
        let nulls_in_valid_rows = match (c.logical_nulls(), rows.nulls()) {
            (None, _) => false,
            (Some(child), None) => child.null_count() > 0,
            (Some(child), Some(parent)) => (0..rows.len()).any(|i| parent.is_valid(i) && child.is_null(i)),
        };
        let item_nulls = matches!(f.data_type(), DataType::FixedSizeList(..))
            && c.as_fixed_size_list().values().logical_null_count() > 0;
        if nulls_in_valid_rows || item_nulls {
            return Err(Error::Unsupported(format!(
                "packed struct field {:?} has null values; only the struct itself may be null",
                f.name()
            )));
        }
    }
    Ok(())
}

/// The fixed-width bytes of `array`, `width` per value (fixed-size lists: all items).
fn value_bytes(array: &dyn Array, width: usize) -> Result<Buffer> {
    let values = match array.data_type() {
        // Slicing a fixed-size list slices its items, so their offset is the list's.
        DataType::FixedSizeList(..) => array.as_fixed_size_list().values().to_data(),
        _ => array.to_data(),
    };
    let per_item = match array.data_type() {
        DataType::FixedSizeList(_, d) => width / usize::try_from(*d).ok().filter(|d| *d > 0).unwrap_or(1),
        _ => width,
    };
    let buf = values
        .buffers()
        .first()
        .ok_or_else(|| Error::InvalidInput("fixed-width array without a data buffer".into()))?;
    let (start, len) = (values.offset() * per_item, array.len() * width);
    if start + len > buf.len() {
        return Err(Error::InvalidInput("fixed-width array shorter than its length".into()));
    }
    Ok(buf.slice_with_length(start, len))
}

/// Mini-block chunks of rows of fixed-width fields (`widths` bytes each), row-major.
pub fn mini_block_rows(rows: &StructArray, widths: &[usize]) -> Result<MiniBlockValues> {
    let row: usize = widths.iter().sum();
    let n = rows.len();
    let fields = rows
        .columns()
        .iter()
        .zip(widths)
        .map(|(c, w)| value_bytes(c.as_ref(), *w))
        .collect::<Result<Vec<_>>>()?;
    let mut data = vec![0u8; n * row];
    let mut at = 0;
    for (f, w) in fields.iter().zip(widths) {
        for (dst, src) in data.chunks_exact_mut(row).zip(f.as_slice().chunks_exact(*w)) {
            dst[at..at + w].copy_from_slice(src);
        }
        at += w;
    }
    let mut compressed = flat(row, &data, n)?;
    compressed.encoding = pb21::CompressiveEncoding {
        compression: Some(C::PackedStruct(Box::new(pb21::PackedStruct {
            bits_per_value: widths.iter().map(|w| *w as u64 * 8).collect(),
            values: Some(Box::new(flat_enc(row as u64 * 8))),
        }))),
    };
    Ok(compressed)
}

/// One child's part of a zipped row.
enum Part {
    Fixed {
        bytes: Buffer,
        width: usize,
    },
    Var {
        offsets: Vec<u64>,
        data: Buffer,
        prefix: usize,
    },
}

/// Every row zipped whole (`VariablePackedStruct`): offsets (`n + 1`, from 0) into the
/// rows' bytes, and the encoding. A null row is empty (the page stores no value for it).
pub fn zipped_rows(rows: &StructArray) -> Result<(Vec<u64>, Vec<u8>, pb21::CompressiveEncoding)> {
    let mut parts = Vec::with_capacity(rows.num_columns());
    let mut encodings = Vec::with_capacity(rows.num_columns());
    for (f, c) in rows.fields().iter().zip(rows.columns()) {
        let dt = f.data_type();
        let (part, value, layout) = match dt {
            DataType::Utf8 | DataType::Binary | DataType::LargeUtf8 | DataType::LargeBinary => {
                let large = matches!(dt, DataType::LargeUtf8 | DataType::LargeBinary);
                let d = c.to_data();
                let nb = if large { 8 } else { 4 };
                let raw = d.buffers().first().map(|b| b.as_slice()).unwrap_or(&[]);
                let offsets = (0..=c.len())
                    .map(|i| {
                        let at = (d.offset() + i) * nb;
                        raw.get(at..at + nb)
                            .map(|b| b.iter().rev().fold(0u64, |v, x| v << 8 | u64::from(*x)))
                            .ok_or_else(|| Error::InvalidInput("string array offsets are truncated".into()))
                    })
                    .collect::<Result<Vec<_>>>()?;
                let data = d
                    .buffers()
                    .get(1)
                    .cloned()
                    .unwrap_or_else(|| Buffer::from_vec(Vec::<u8>::new()));
                let value = pb21::CompressiveEncoding {
                    compression: Some(C::Variable(Box::new(pb21::Variable {
                        offsets: Some(Box::new(flat_enc(nb as u64 * 8))),
                        values: None,
                    }))),
                };
                let part = Part::Var {
                    offsets,
                    data,
                    prefix: nb,
                };
                (part, value, field_encoding::Layout::BitsPerLength(nb as u64 * 8))
            }
            DataType::FixedSizeList(item, d) => {
                let iw = fixed_width(item.data_type()).unwrap_or(0);
                let dim = usize::try_from(*d).unwrap_or(0);
                let width = iw * dim;
                let value = pb21::CompressiveEncoding {
                    compression: Some(C::FixedSizeList(Box::new(pb21::FixedSizeList {
                        items_per_value: dim as u64,
                        has_validity: false,
                        values: Some(Box::new(flat_enc(iw as u64 * 8))),
                    }))),
                };
                let part = Part::Fixed {
                    bytes: value_bytes(c.as_ref(), width)?,
                    width,
                };
                (part, value, field_encoding::Layout::BitsPerValue(width as u64 * 8))
            }
            dt => {
                let width = fixed_width(dt).unwrap_or(0);
                let part = Part::Fixed {
                    bytes: value_bytes(c.as_ref(), width)?,
                    width,
                };
                (
                    part,
                    flat_enc(width as u64 * 8),
                    field_encoding::Layout::BitsPerValue(width as u64 * 8),
                )
            }
        };
        parts.push(part);
        encodings.push(pb21::variable_packed_struct::FieldEncoding {
            value: Some(value),
            layout: Some(layout),
        });
    }
    let nulls: Option<&NullBuffer> = rows.nulls();
    let mut offsets = Vec::with_capacity(rows.len() + 1);
    offsets.push(0u64);
    let mut out = Vec::new();
    for i in 0..rows.len() {
        if nulls.is_none_or(|n| n.is_valid(i)) {
            for p in &parts {
                match p {
                    Part::Fixed { bytes, width } => {
                        out.extend_from_slice(&bytes.as_slice()[i * width..(i + 1) * width])
                    }
                    Part::Var { offsets, data, prefix } => {
                        let (a, b) = (offsets[i] as usize, offsets[i + 1] as usize);
                        let v = data
                            .as_slice()
                            .get(a..b)
                            .ok_or_else(|| Error::InvalidInput("string array offsets past its data".into()))?;
                        out.extend_from_slice(&(v.len() as u64).to_le_bytes()[..*prefix]);
                        out.extend_from_slice(v);
                    }
                }
            }
        }
        offsets.push(out.len() as u64);
    }
    let encoding = pb21::CompressiveEncoding {
        compression: Some(C::VariablePackedStruct(pb21::VariablePackedStruct {
            fields: encodings,
        })),
    };
    Ok((offsets, out, encoding))
}
