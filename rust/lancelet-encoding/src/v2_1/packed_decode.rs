//! Decoding packed structs (Lance 2.1+): struct rows stored whole in one leaf column.
//!
//! Fixed-width rows (`PackedStruct`) are split into one [`Values`] per field by
//! `packed_rows`; full-zip rows with variable-width fields (`VariablePackedStruct`) by
//! [`var_packed_rows`]. The inverse of [`super::packed_encode`].

use arrow_schema::{DataType, Fields};
use lancelet_proto::pb21;

use super::values::{fixed_bytes, Values, MAX_EXPANDED_BYTES};
use super::values_decode::{fixed_from_bytes, read_uint, var_value};
use crate::{corrupt, Error, Result};

/// Splits `len` row-major packed struct rows of `bits` bits each into one fixed-width
/// [`Values`] per child of `fields` (each child's bytes back to back, in field order).
pub(crate) fn packed_rows(fields: &Fields, bits: u64, data: &[u8], len: usize) -> Result<Values> {
    let widths = fields
        .iter()
        .map(|f| match f.data_type() {
            DataType::FixedSizeBinary(w) => usize::try_from(*w).ok(),
            DataType::Boolean => None,
            other => other.primitive_width(),
        })
        .collect::<Option<Vec<usize>>>()
        .ok_or_else(|| Error::Unsupported(format!("packed structs with fields {fields:?}")))?;
    let row: usize = widths.iter().sum();
    if row as u64 * 8 != bits || row == 0 {
        return Err(corrupt!("packed struct rows of {bits} bits for fields of {row} bytes"));
    }
    let rows = data
        .get(
            ..row
                .checked_mul(len)
                .ok_or_else(|| corrupt!("packed struct of {len} rows"))?,
        )
        .ok_or_else(|| corrupt!("{len} packed struct rows of {row} bytes are truncated"))?;
    let mut children: Vec<Vec<u8>> = widths.iter().map(|w| Vec::with_capacity(w * len)).collect();
    for r in rows.chunks_exact(row) {
        let mut at = 0;
        for (c, w) in children.iter_mut().zip(&widths) {
            c.extend_from_slice(&r[at..at + w]);
            at += w;
        }
    }
    Ok(Values::Struct {
        children: children
            .into_iter()
            .zip(&widths)
            .map(|(data, w)| Values::Fixed {
                bits: *w as u64 * 8,
                data,
                len,
            })
            .collect(),
        len,
    })
}

/// Splits full-zip rows of a variable packed struct (`None`: a null row, whose children
/// get a zero or empty slot) into one [`Values`] per child.
///
/// A row holds each child in field order: a fixed-width child as its encoded bytes, a
/// variable-width one as a little-endian length of `bits_per_length` bits and then that
/// many encoded bytes. Each child is then decoded with its own encoding.
pub fn var_packed_rows(vp: &pb21::VariablePackedStruct, rows: &[Option<&[u8]>]) -> Result<Values> {
    use pb21::variable_packed_struct::field_encoding::Layout;
    enum Child {
        Fixed {
            nb: usize,
            bytes: Vec<u8>,
        },
        Var {
            nb: usize,
            offsets: Vec<u64>,
            bytes: Vec<u8>,
        },
    }
    let mut children = vp
        .fields
        .iter()
        .map(|f| match f.layout {
            Some(Layout::BitsPerValue(b)) => Ok(Child::Fixed {
                nb: fixed_bytes(b)?,
                bytes: Vec::new(),
            }),
            Some(Layout::BitsPerLength(b @ (8 | 16 | 32 | 64))) => Ok(Child::Var {
                nb: b as usize / 8,
                offsets: vec![0],
                bytes: Vec::new(),
            }),
            Some(Layout::BitsPerLength(b)) => Err(corrupt!("packed struct lengths of {b} bits")),
            None => Err(corrupt!("packed struct field without a layout")),
        })
        .collect::<Result<Vec<_>>>()?;
    let read_len = |row: &[u8], at: usize, nb: usize| -> Result<usize> {
        let v = read_uint(row, at, nb)?;
        usize::try_from(v).map_err(|_| corrupt!("packed struct value of {v} bytes"))
    };
    for row in rows {
        let Some(row) = row else {
            for c in &mut children {
                match c {
                    Child::Fixed { nb, bytes } => bytes.resize(bytes.len() + *nb, 0),
                    Child::Var { offsets, bytes, .. } => offsets.push(bytes.len() as u64),
                }
            }
            continue;
        };
        let mut at = 0usize;
        for (c, f) in children.iter_mut().zip(&vp.fields) {
            match c {
                Child::Fixed { nb, bytes } => {
                    let v = row
                        .get(at..at + *nb)
                        .ok_or_else(|| corrupt!("packed struct row of {} bytes is truncated", row.len()))?;
                    bytes.extend_from_slice(v);
                    at += *nb;
                }
                Child::Var { nb, offsets, bytes } => {
                    let len = read_len(row, at, *nb)?;
                    at += *nb;
                    let v = row
                        .get(at..at.saturating_add(len))
                        .ok_or_else(|| corrupt!("packed struct value of {len} bytes overruns its row"))?;
                    var_value(
                        f.value
                            .as_ref()
                            .ok_or_else(|| corrupt!("packed struct field without an encoding"))?,
                        v,
                        bytes,
                    )?;
                    if bytes.len() > MAX_EXPANDED_BYTES {
                        return Err(corrupt!("packed struct values expand past {MAX_EXPANDED_BYTES} bytes"));
                    }
                    offsets.push(bytes.len() as u64);
                    at += len;
                }
            }
        }
        if at != row.len() {
            return Err(corrupt!(
                "packed struct row of {} bytes holds {at} bytes of fields",
                row.len()
            ));
        }
    }
    let len = rows.len();
    let children = children
        .into_iter()
        .zip(&vp.fields)
        .map(|(c, f)| match c {
            Child::Fixed { bytes, .. } => fixed_from_bytes(
                f.value
                    .as_ref()
                    .ok_or_else(|| corrupt!("packed struct field without an encoding"))?,
                bytes,
                len,
            ),
            Child::Var { offsets, bytes, .. } => Ok(Values::Var { offsets, data: bytes }),
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(Values::Struct { children, len })
}
