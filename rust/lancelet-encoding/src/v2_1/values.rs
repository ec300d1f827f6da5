//! Compressive encodings of Lance 2.1+: from encoded buffers to [`Values`], and from
//! [`Values`] to Arrow arrays.
//!
//! Three buffer shapes occur: a mini-block *chunk* (a few value buffers holding `n`
//! values, [`decode_chunk`]), a *block* (one self-describing buffer such as a dictionary,
//! [`decode_block`]) and full-zip *per-value* bytes ([`fixed_from_bytes`], [`var_value`]).

use std::sync::Arc;

use arrow_array::{make_array, Array, ArrayRef, BooleanArray, FixedSizeListArray, NullArray, StructArray};
use arrow_buffer::{BooleanBuffer, BooleanBufferBuilder, Buffer, NullBuffer};
use arrow_data::ArrayData;
use arrow_schema::{DataType, Fields};
use lancelet_proto::pb21::{self, compressive_encoding::Compression as C};

use super::bitpack::{decode_inline, decode_out_of_line};
use super::compress::decompress;
use super::fsst::SymbolTable;
use crate::{corrupt, Error, Result};

/// Upper bound on values materialized from one page (guards allocations driven by counts).
pub const MAX_VALUES: usize = 1 << 31;

/// Upper bound on the bytes one page may expand to through a dictionary or a constant.
pub const MAX_EXPANDED_BYTES: usize = 1 << 30;

/// Decoded values of one page (or chunk), not yet typed.
#[derive(Debug, Clone)]
pub enum Values {
    /// `len` values of `bits` bits each back to back (`bits == 1`: LSB-first bitmap).
    Fixed {
        /// Bits per value.
        bits: u64,
        /// The packed values.
        data: Vec<u8>,
        /// Number of values.
        len: usize,
    },
    /// Variable-width values: `offsets` (`len + 1` entries starting at 0) into `data`.
    Var {
        /// Offsets.
        offsets: Vec<u64>,
        /// Bytes.
        data: Vec<u8>,
    },
    /// Fixed-size lists of `dim` items each.
    Fsl {
        /// Items per list.
        dim: usize,
        /// Per-item validity, when stored.
        validity: Option<Vec<bool>>,
        /// The `len * dim` items.
        items: Box<Values>,
        /// Number of lists.
        len: usize,
    },
    /// Struct rows split into one [`Values`] per child (a variable packed struct).
    Struct {
        /// The children, in field order, each holding `len` values.
        children: Vec<Values>,
        /// Number of rows.
        len: usize,
    },
}

impl Values {
    /// Number of values.
    pub fn len(&self) -> usize {
        match self {
            Self::Fixed { len, .. } | Self::Fsl { len, .. } | Self::Struct { len, .. } => *len,
            Self::Var { offsets, .. } => offsets.len().saturating_sub(1),
        }
    }

    /// Whether there are no values.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Appends `other` (which must have the same shape).
    pub fn append(&mut self, other: Values) -> Result<()> {
        match (self, other) {
            (
                Self::Fixed { bits, data, len },
                Self::Fixed {
                    bits: b2,
                    data: d2,
                    len: l2,
                },
            ) if *bits == b2 => {
                if *bits == 1 {
                    let mut bb = BooleanBufferBuilder::new(*len + l2);
                    bb.append_packed_range(0..*len, data);
                    bb.append_packed_range(0..l2, &d2);
                    *data = bb.finish().into_inner().to_vec();
                } else if bits.is_multiple_of(8) {
                    let nb = (*bits / 8) as usize;
                    data.truncate(*len * nb);
                    data.extend_from_slice(d2.get(..l2 * nb).ok_or_else(|| corrupt!("short fixed values"))?);
                } else {
                    return Err(Error::Unsupported(format!("{bits}-bit values")));
                }
                *len += l2;
                Ok(())
            }
            (Self::Var { offsets, data }, Self::Var { offsets: o2, data: d2 }) => {
                let base = data.len() as u64;
                offsets.extend(o2.iter().skip(1).map(|o| o + base));
                data.extend_from_slice(&d2);
                Ok(())
            }
            (
                Self::Fsl {
                    dim,
                    validity,
                    items,
                    len,
                },
                Self::Fsl {
                    dim: d2,
                    validity: v2,
                    items: i2,
                    len: l2,
                },
            ) if *dim == d2 => {
                match (validity.as_mut(), v2) {
                    (None, None) => {}
                    (Some(v), None) => v.resize(v.len() + l2 * d2, true),
                    (None, Some(v2)) => {
                        let mut all = vec![true; *len * *dim];
                        all.extend(v2);
                        *validity = Some(all);
                    }
                    (Some(v), Some(v2)) => v.extend(v2),
                }
                items.append(*i2)?;
                *len += l2;
                Ok(())
            }
            (Self::Struct { children, len }, Self::Struct { children: c2, len: l2 }) if children.len() == c2.len() => {
                for (c, o) in children.iter_mut().zip(c2) {
                    c.append(o)?;
                }
                *len += l2;
                Ok(())
            }
            _ => Err(corrupt!("chunks of one page decode to different value shapes")),
        }
    }

    /// Concatenates parts (at least one expected; none gives an empty `Fixed`).
    pub fn concat(parts: Vec<Values>) -> Result<Values> {
        let mut it = parts.into_iter();
        let Some(mut first) = it.next() else {
            return Ok(Self::Fixed {
                bits: 8,
                data: Vec::new(),
                len: 0,
            });
        };
        for p in it {
            first.append(p)?;
        }
        Ok(first)
    }

    /// The values at `indices` (dictionary lookup).
    pub fn take(&self, indices: &[u64]) -> Result<Values> {
        let n = self.len() as u64;
        if let Some(bad) = indices.iter().find(|i| **i >= n) {
            return Err(corrupt!("dictionary index {bad} out of range for {n} items"));
        }
        match self {
            Self::Fixed { bits, data, .. } => {
                if *bits == 1 {
                    let src = BooleanBuffer::new(Buffer::from(data.clone()), 0, n as usize);
                    let mut bb = BooleanBufferBuilder::new(indices.len());
                    for i in indices {
                        bb.append(src.value(*i as usize));
                    }
                    return Ok(Self::Fixed {
                        bits: 1,
                        data: bb.finish().into_inner().to_vec(),
                        len: indices.len(),
                    });
                }
                let nb = fixed_bytes(*bits)?;
                let mut out = Vec::with_capacity(indices.len() * nb);
                for i in indices {
                    let s = *i as usize * nb;
                    out.extend_from_slice(data.get(s..s + nb).ok_or_else(|| corrupt!("short dictionary"))?);
                }
                Ok(Self::Fixed {
                    bits: *bits,
                    data: out,
                    len: indices.len(),
                })
            }
            Self::Var { offsets, data } => {
                let mut out_off = Vec::with_capacity(indices.len() + 1);
                let mut out = Vec::new();
                out_off.push(0);
                for i in indices {
                    let i = *i as usize;
                    out.extend_from_slice(var_slice(offsets, data, i)?);
                    if out.len() > MAX_EXPANDED_BYTES {
                        return Err(corrupt!(
                            "dictionary values expand to more than {MAX_EXPANDED_BYTES} bytes"
                        ));
                    }
                    out_off.push(out.len() as u64);
                }
                Ok(Self::Var {
                    offsets: out_off,
                    data: out,
                })
            }
            Self::Fsl { .. } => Err(Error::Unsupported("dictionaries of fixed-size lists".into())),
            Self::Struct { .. } => Err(Error::Unsupported("dictionaries of packed structs".into())),
        }
    }

    /// `n` copies of one fixed or variable value (a constant page).
    pub fn repeat(value: &[u8], var: bool, bits: u64, n: usize) -> Result<Values> {
        if n > MAX_VALUES {
            return Err(corrupt!("constant page of {n} values"));
        }
        if var {
            let total = value.len().checked_mul(n).filter(|t| *t <= MAX_EXPANDED_BYTES);
            let total = total.ok_or_else(|| corrupt!("constant page of {n} x {} bytes", value.len()))?;
            let mut data = Vec::with_capacity(total);
            let mut offsets = Vec::with_capacity(n + 1);
            offsets.push(0);
            for _ in 0..n {
                data.extend_from_slice(value);
                offsets.push(data.len() as u64);
            }
            return Ok(Self::Var { offsets, data });
        }
        if bits == 1 {
            let bit = value.first().is_some_and(|b| *b != 0);
            let mut bb = BooleanBufferBuilder::new(n);
            bb.append_n(n, bit);
            return Ok(Self::Fixed {
                bits: 1,
                data: bb.finish().into_inner().to_vec(),
                len: n,
            });
        }
        let nb = fixed_bytes(bits)?;
        if value.len() != nb {
            return Err(corrupt!("constant of {} bytes for {bits}-bit values", value.len()));
        }
        if nb.saturating_mul(n) > MAX_EXPANDED_BYTES {
            return Err(corrupt!("constant page of {n} x {nb} bytes"));
        }
        Ok(Self::Fixed {
            bits,
            data: value.repeat(n),
            len: n,
        })
    }

    /// Builds an Arrow array of type `dt`.
    pub fn into_array(self, dt: &DataType) -> Result<ArrayRef> {
        let len = self.len();
        match (dt, self) {
            (DataType::Null, _) => Ok(Arc::new(NullArray::new(len))),
            (DataType::Dictionary(k, v), values) => {
                let values = values.into_array(v)?;
                dictionary_of_values(k, values)
            }
            (DataType::Boolean, Self::Fixed { bits: 1, data, len }) => {
                if data.len() * 8 < len {
                    return Err(corrupt!("boolean bitmap too short"));
                }
                Ok(Arc::new(BooleanArray::new(
                    BooleanBuffer::new(Buffer::from(data), 0, len),
                    None,
                )))
            }
            (DataType::Boolean, Self::Fixed { bits: 8, data, len }) => {
                let v: Vec<bool> = data.iter().take(len).map(|b| *b != 0).collect();
                Ok(Arc::new(BooleanArray::from(v)))
            }
            (DataType::Utf8 | DataType::Binary, Self::Var { offsets, data }) => {
                if data.len() > i32::MAX as usize {
                    return Err(Error::Unsupported("more than 2 GiB of string data in one page".into()));
                }
                let offs: Vec<i32> = offsets.iter().map(|o| *o as i32).collect();
                var_array(dt, Buffer::from_vec(offs), data, len)
            }
            (DataType::LargeUtf8 | DataType::LargeBinary, Self::Var { offsets, data }) => {
                let offs: Vec<i64> = offsets.iter().map(|o| *o as i64).collect();
                var_array(dt, Buffer::from_vec(offs), data, len)
            }
            (
                DataType::FixedSizeList(item, d),
                Self::Fsl {
                    dim,
                    validity,
                    items,
                    len,
                },
            ) => {
                if usize::try_from(*d).ok() != Some(dim) {
                    return Err(corrupt!("fixed-size list of {dim} items stored for type {dt}"));
                }
                let mut child = items.into_array(item.data_type())?;
                if let Some(v) = validity {
                    if v.len() != child.len() {
                        return Err(corrupt!("item validity of {} bits for {} items", v.len(), child.len()));
                    }
                    child = with_validity(child, &v)?;
                }
                let array = FixedSizeListArray::try_new(item.clone(), *d, child, None)?;
                if array.len() != len {
                    return Err(corrupt!("fixed-size list of {} values, expected {len}", array.len()));
                }
                Ok(Arc::new(array))
            }
            (DataType::Struct(fields), Self::Fixed { bits, data, len }) => {
                packed_rows(fields, bits, &data, len)?.into_array(dt)
            }
            (DataType::Struct(fields), Self::Struct { children, len }) => {
                if children.len() != fields.len() {
                    return Err(corrupt!(
                        "packed struct of {} children stored for type {dt}",
                        children.len()
                    ));
                }
                let arrays = fields
                    .iter()
                    .zip(children)
                    .map(|(f, c)| {
                        if c.len() != len {
                            return Err(corrupt!("packed struct child of {} values for {len} rows", c.len()));
                        }
                        c.into_array(f.data_type())
                    })
                    .collect::<Result<Vec<_>>>()?;
                Ok(Arc::new(StructArray::try_new_with_length(
                    fields.clone(),
                    arrays,
                    None,
                    len,
                )?))
            }
            (dt, Self::Fixed { bits, data, len }) => {
                let width = match dt {
                    DataType::FixedSizeBinary(w) => usize::try_from(*w).ok(),
                    other => other.primitive_width(),
                };
                let Some(width) = width else {
                    return Err(Error::Unsupported(format!("reading {dt} columns of 2.1+ files")));
                };
                if bits != width as u64 * 8 {
                    return Err(corrupt!("{bits}-bit values stored for type {dt}"));
                }
                let need = width * len;
                if data.len() < need {
                    return Err(corrupt!(
                        "{len} values of type {dt} need {need} bytes, have {}",
                        data.len()
                    ));
                }
                let mut data = data;
                data.truncate(need);
                let array = ArrayData::builder(dt.clone())
                    .len(len)
                    .add_buffer(Buffer::from_vec(data))
                    .build()?;
                Ok(make_array(array))
            }
            (dt, v) => Err(corrupt!(
                "values of shape {} cannot be read as {dt}",
                match v {
                    Self::Fixed { .. } => "fixed",
                    Self::Var { .. } => "variable",
                    Self::Fsl { .. } => "fixed-size-list",
                    Self::Struct { .. } => "struct",
                }
            )),
        }
    }
}

/// Bytes per key of a dictionary key type.
fn key_bytes(key: &DataType) -> Result<usize> {
    match key {
        DataType::Int8 | DataType::UInt8 => Ok(1),
        DataType::Int16 | DataType::UInt16 => Ok(2),
        DataType::Int32 | DataType::UInt32 => Ok(4),
        DataType::Int64 | DataType::UInt64 => Ok(8),
        other => Err(Error::Unsupported(format!("dictionary keys of type {other}"))),
    }
}

/// Most items a dictionary with keys of type `key` can index.
fn key_capacity(key: &DataType) -> Result<u64> {
    let nb = key_bytes(key)?;
    let signed = matches!(
        key,
        DataType::Int8 | DataType::Int16 | DataType::Int32 | DataType::Int64
    );
    Ok(if nb == 8 {
        u64::MAX >> u32::from(signed)
    } else {
        ((1u64 << (8 * nb - usize::from(signed))) - 1).saturating_add(1)
    })
}

/// The dictionary array of `len` `bits`-bit `indices` into `dict` for an Arrow
/// dictionary column, or `None` when the indices do not fit its key type.
pub fn dictionary_from_indices(
    key: &DataType,
    value_type: &DataType,
    bits: u64,
    indices: &[u8],
    len: usize,
    dict: &Values,
) -> Result<Option<ArrayRef>> {
    let nb = match bits {
        8 | 16 | 32 | 64 => (bits / 8) as usize,
        _ => return Ok(None),
    };
    let raw = indices
        .get(..len.saturating_mul(nb))
        .ok_or_else(|| corrupt!("{len} dictionary indices of {bits} bits are truncated"))?;
    let items = dict.len() as u64;
    let cap = key_capacity(key)?.min(items);
    let kb = key_bytes(key)?;
    let mut keys = Vec::with_capacity(len * kb);
    for i in raw.chunks_exact(nb) {
        let v = i.iter().rev().fold(0u64, |v, b| v << 8 | u64::from(*b));
        if v >= items {
            return Err(corrupt!("dictionary index {v} out of range for {items} items"));
        }
        if v >= cap {
            return Ok(None);
        }
        super::bitpack::push_uint(&mut keys, v, kb);
    }
    let values = dict.clone().into_array(value_type)?;
    let dt = DataType::Dictionary(Box::new(key.clone()), Box::new(value_type.clone()));
    let data = ArrayData::builder(dt)
        .len(len)
        .add_buffer(Buffer::from_vec(keys))
        .child_data(vec![values.to_data()])
        .build()?;
    Ok(Some(make_array(data)))
}

/// A dictionary array of `values`: variable-width values deduplicated (each distinct
/// value once, in order of first use), others one key per row.
fn dictionary_of_values(key: &DataType, values: ArrayRef) -> Result<ArrayRef> {
    if let Some(a) = dedup_var_dictionary(key, &values)? {
        return Ok(a);
    }
    let len = values.len();
    let nb = match key {
        DataType::Int8 | DataType::UInt8 => 1,
        DataType::Int16 | DataType::UInt16 => 2,
        DataType::Int32 | DataType::UInt32 => 4,
        DataType::Int64 | DataType::UInt64 => 8,
        other => return Err(Error::Unsupported(format!("dictionary keys of type {other}"))),
    };
    let signed = matches!(
        key,
        DataType::Int8 | DataType::Int16 | DataType::Int32 | DataType::Int64
    );
    let max = if nb == 8 {
        u64::MAX >> u32::from(signed)
    } else {
        (1u64 << (8 * nb - usize::from(signed))) - 1
    };
    if len as u64 > max.saturating_add(1) {
        return Err(Error::Unsupported(format!("{len} dictionary values for {key} keys")));
    }
    let mut keys = Vec::with_capacity(len * nb);
    for i in 0..len as u64 {
        super::bitpack::push_uint(&mut keys, i, nb);
    }
    let dt = DataType::Dictionary(Box::new(key.clone()), Box::new(values.data_type().clone()));
    let data = ArrayData::builder(dt)
        .len(len)
        .add_buffer(Buffer::from_vec(keys))
        .child_data(vec![values.to_data()])
        .build()?;
    Ok(make_array(data))
}

/// Deduplicates string or binary `values` into a dictionary with keys of type `key`;
/// `None` for other types.
fn dedup_var_dictionary(key: &DataType, values: &ArrayRef) -> Result<Option<ArrayRef>> {
    use arrow_array::cast::AsArray;
    let strings: Vec<&[u8]> = match values.data_type() {
        DataType::Utf8 => values
            .as_string::<i32>()
            .iter()
            .map(|v| v.unwrap_or("").as_bytes())
            .collect(),
        DataType::LargeUtf8 => values
            .as_string::<i64>()
            .iter()
            .map(|v| v.unwrap_or("").as_bytes())
            .collect(),
        DataType::Binary => values.as_binary::<i32>().iter().map(|v| v.unwrap_or(&[])).collect(),
        DataType::LargeBinary => values.as_binary::<i64>().iter().map(|v| v.unwrap_or(&[])).collect(),
        _ => return Ok(None),
    };
    let get = |i: usize| strings[i];
    let kb = key_bytes(key)?;
    let cap = key_capacity(key)?;
    let mut seen: std::collections::HashMap<&[u8], u64> = std::collections::HashMap::new();
    let mut firsts: Vec<u64> = Vec::new();
    let mut keys = Vec::with_capacity(values.len() * kb);
    for i in 0..values.len() {
        let k = if values.is_null(i) {
            0
        } else {
            let next = firsts.len() as u64;
            *seen.entry(get(i)).or_insert_with(|| {
                firsts.push(i as u64);
                next
            })
        };
        super::bitpack::push_uint(&mut keys, k, kb);
    }
    if firsts.len() as u64 > cap {
        return Err(Error::Unsupported(format!(
            "{} distinct dictionary values for {key} keys",
            firsts.len()
        )));
    }
    let dict = arrow_select::take::take(values.as_ref(), &arrow_array::UInt64Array::from(firsts), None)?;
    let dt = DataType::Dictionary(Box::new(key.clone()), Box::new(values.data_type().clone()));
    let data = ArrayData::builder(dt)
        .len(values.len())
        .add_buffer(Buffer::from_vec(keys))
        .nulls(values.nulls().cloned())
        .child_data(vec![dict.to_data()])
        .build()?;
    Ok(Some(make_array(data)))
}

fn var_array(dt: &DataType, offsets: Buffer, data: Vec<u8>, len: usize) -> Result<ArrayRef> {
    let array = ArrayData::builder(dt.clone())
        .len(len)
        .add_buffer(offsets)
        .add_buffer(Buffer::from_vec(data))
        .build()?;
    Ok(make_array(array))
}

/// Splits `len` row-major packed struct rows of `bits` bits each into one fixed-width
/// [`Values`] per child of `fields` (each child's bytes back to back, in field order).
fn packed_rows(fields: &Fields, bits: u64, data: &[u8], len: usize) -> Result<Values> {
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

/// `array` with its validity replaced by `valid` AND its own validity.
pub fn with_validity(array: ArrayRef, valid: &[bool]) -> Result<ArrayRef> {
    if array.data_type() == &DataType::Null || valid.iter().all(|v| *v) {
        return Ok(array);
    }
    let data = array.to_data();
    let mine = NullBuffer::from(valid.to_vec());
    let nulls = NullBuffer::union(data.nulls(), Some(&mine));
    Ok(make_array(data.into_builder().nulls(nulls).build()?))
}

fn var_slice<'a>(offsets: &[u64], data: &'a [u8], i: usize) -> Result<&'a [u8]> {
    match (offsets.get(i), offsets.get(i + 1)) {
        (Some(s), Some(e)) if s <= e && (*e as usize) <= data.len() => Ok(&data[*s as usize..*e as usize]),
        _ => Err(corrupt!("variable-width value {i} has bad offsets")),
    }
}

/// Bytes per value of a byte-aligned width.
fn fixed_bytes(bits: u64) -> Result<usize> {
    if bits == 0 || !bits.is_multiple_of(8) || bits > 1 << 20 {
        return Err(Error::Unsupported(format!("{bits}-bit values")));
    }
    Ok((bits / 8) as usize)
}

/// The variant of an encoding node.
pub fn variant(enc: &pb21::CompressiveEncoding) -> Result<&C> {
    enc.compression
        .as_ref()
        .ok_or_else(|| corrupt!("compressive encoding without a variant"))
}

/// The required child encoding `e` of a node.
pub fn required<'a>(
    e: &'a Option<Box<pb21::CompressiveEncoding>>,
    what: &str,
) -> Result<&'a pb21::CompressiveEncoding> {
    e.as_deref().ok_or_else(|| corrupt!("encoding lacks its {what}"))
}

fn flat_bits(enc: &pb21::CompressiveEncoding) -> Result<u64> {
    match variant(enc)? {
        C::Flat(f) => Ok(f.bits_per_value),
        _ => Err(Error::Unsupported("non-flat inner encoding".into())),
    }
}

fn checked_count(n: usize, dim: usize) -> Result<usize> {
    n.checked_mul(dim)
        .filter(|t| *t <= MAX_VALUES)
        .ok_or_else(|| corrupt!("{n} x {dim} items is too many"))
}

fn first<'a>(bufs: &[&'a [u8]]) -> Result<&'a [u8]> {
    bufs.first()
        .copied()
        .ok_or_else(|| corrupt!("a value buffer is missing"))
}

fn flat(bits: u64, buf: &[u8], n: usize) -> Result<Values> {
    if bits == 0 || bits > 1 << 20 {
        return Err(corrupt!("flat values of {bits} bits"));
    }
    let need = (n as u64)
        .checked_mul(bits)
        .map(|b| b.div_ceil(8))
        .ok_or_else(|| corrupt!("{n} values of {bits} bits overflows"))?;
    let data = buf
        .get(..need as usize)
        .ok_or_else(|| corrupt!("{n} flat {bits}-bit values need {need} bytes, have {}", buf.len()))?;
    if bits != 1 && !bits.is_multiple_of(8) {
        return Err(Error::Unsupported(format!("{bits}-bit flat values")));
    }
    Ok(Values::Fixed {
        bits,
        data: data.to_vec(),
        len: n,
    })
}

fn offset_width(offsets: &pb21::CompressiveEncoding) -> Result<usize> {
    match flat_bits(offsets)? {
        32 => Ok(4),
        64 => Ok(8),
        b => Err(Error::Unsupported(format!("{b}-bit variable-width offsets"))),
    }
}

fn read_uint(buf: &[u8], at: usize, nb: usize) -> Result<u64> {
    let b = buf
        .get(at..at + nb)
        .ok_or_else(|| corrupt!("integer at byte {at} lies past the end of a {}-byte buffer", buf.len()))?;
    let mut v = 0u64;
    for (i, x) in b.iter().enumerate() {
        v |= u64::from(*x) << (8 * i);
    }
    Ok(v)
}

/// Turns `n + 1` absolute positions into rebased offsets and the bytes they span.
fn var_from_positions(buf: &[u8], positions: &[u64]) -> Result<Values> {
    let (Some(&start), Some(&end)) = (positions.first(), positions.last()) else {
        return Err(corrupt!("variable-width values without offsets"));
    };
    if positions.windows(2).any(|w| w[0] > w[1]) || end as usize > buf.len() {
        return Err(corrupt!("variable-width offsets are not increasing within the buffer"));
    }
    Ok(Values::Var {
        offsets: positions.iter().map(|p| p - start).collect(),
        data: buf[start as usize..end as usize].to_vec(),
    })
}

/// Decodes the value buffers of one mini-block chunk holding `n` values.
pub fn decode_chunk(enc: &pb21::CompressiveEncoding, bufs: &[&[u8]], n: usize) -> Result<Values> {
    if n > MAX_VALUES {
        return Err(corrupt!("chunk of {n} values"));
    }
    match variant(enc)? {
        C::Flat(f) => {
            let buf = first(bufs)?;
            match f.data.as_ref().filter(|c| c.scheme != 0) {
                Some(c) => flat(f.bits_per_value, &decompress(c.scheme, buf)?, n),
                None => flat(f.bits_per_value, buf, n),
            }
        }
        C::InlineBitpacking(b) => {
            let w = b.uncompressed_bits_per_value;
            let buf = first(bufs)?;
            let data = match b.values.as_ref().filter(|c| c.scheme != 0) {
                Some(c) => decode_inline(&decompress(c.scheme, buf)?, w, n)?,
                None => decode_inline(buf, w, n)?,
            };
            Ok(Values::Fixed { bits: w, data, len: n })
        }
        C::OutOfLineBitpacking(b) => {
            let w = b.uncompressed_bits_per_value;
            let bw = flat_bits(required(&b.values, "packed values")?)?;
            let data = decode_out_of_line(first(bufs)?, w, bw, n)?;
            Ok(Values::Fixed { bits: w, data, len: n })
        }
        C::Variable(v) => {
            if v.values.as_ref().is_some_and(|c| c.scheme != 0) {
                return Err(Error::Unsupported("compressed variable-width bytes".into()));
            }
            let nb = offset_width(required(&v.offsets, "offsets")?)?;
            let buf = first(bufs)?;
            let positions = (0..=n)
                .map(|i| read_uint(buf, i * nb, nb))
                .collect::<Result<Vec<_>>>()?;
            if positions.first().is_some_and(|p| (*p as usize) < (n + 1) * nb) {
                return Err(corrupt!("variable-width data overlaps its offsets"));
            }
            var_from_positions(buf, &positions)
        }
        C::Fsst(f) => {
            let inner = decode_chunk(required(&f.values, "FSST values")?, bufs, n)?;
            fsst_values(&f.symbol_table, inner)
        }
        C::Rle(r) => {
            if bufs.len() < 2 {
                return Err(corrupt!("run-length chunk needs two buffers, has {}", bufs.len()));
            }
            if flat_bits(required(&r.run_lengths, "run lengths")?)? != 8 {
                return Err(Error::Unsupported("run lengths wider than 8 bits".into()));
            }
            let lens = bufs[1];
            let bits = flat_bits(required(&r.values, "run values")?)?;
            let nb = fixed_bytes(bits)?;
            let runs = bufs[0]
                .get(..lens.len() * nb)
                .ok_or_else(|| corrupt!("{} runs need {} bytes of values", lens.len(), lens.len() * nb))?;
            let total: usize = lens.iter().map(|l| *l as usize).sum();
            if total != n {
                return Err(corrupt!("run lengths add up to {total}, expected {n}"));
            }
            let mut data = Vec::with_capacity(n * nb);
            for (v, l) in runs.chunks_exact(nb).zip(lens) {
                for _ in 0..*l {
                    data.extend_from_slice(v);
                }
            }
            Ok(Values::Fixed { bits, data, len: n })
        }
        C::FixedSizeList(f) => {
            let dim = usize::try_from(f.items_per_value).map_err(|_| corrupt!("huge fixed-size list"))?;
            let items = checked_count(n, dim)?;
            let (validity, rest) = if f.has_validity {
                let vb = first(bufs)?;
                let bytes = vb
                    .get(..items.div_ceil(8))
                    .ok_or_else(|| corrupt!("item validity of {items} bits is truncated"))?;
                let v = (0..items).map(|i| bytes[i / 8] >> (i % 8) & 1 == 1).collect();
                (Some(v), &bufs[1..])
            } else {
                (None, bufs)
            };
            let inner = decode_chunk(required(&f.values, "list items")?, rest, items)?;
            Ok(Values::Fsl {
                dim,
                validity,
                items: Box::new(inner),
                len: n,
            })
        }
        C::General(g) => {
            let scheme = g.compression.as_ref().map(|c| c.scheme).unwrap_or(0);
            let raw = bufs.iter().map(|b| decompress(scheme, b)).collect::<Result<Vec<_>>>()?;
            let refs: Vec<&[u8]> = raw.iter().map(|v| v.as_slice()).collect();
            decode_chunk(required(&g.values, "compressed values")?, &refs, n)
        }
        C::ByteStreamSplit(b) => {
            let inner = required(&b.values, "split values")?;
            let nb = fixed_bytes(flat_bits(inner)?)?;
            let buf = first(bufs)?;
            let src = buf
                .get(..n * nb)
                .ok_or_else(|| corrupt!("byte-stream-split of {n} x {nb} bytes is truncated"))?;
            let mut out = vec![0u8; n * nb];
            for k in 0..nb {
                for i in 0..n {
                    out[i * nb + k] = src[k * n + i];
                }
            }
            decode_chunk(inner, &[&out], n)
        }
        C::Constant(c) => {
            let v = c
                .value
                .as_ref()
                .ok_or_else(|| corrupt!("constant encoding without a value"))?;
            Values::repeat(v, false, v.len() as u64 * 8, n)
        }
        C::Dictionary(_) => Err(Error::Unsupported("nested dictionary encoding".into())),
        C::PackedStruct(p) => {
            let inner = required(&p.values, "packed struct rows")?;
            let row = flat_bits(inner)?;
            let sum = p
                .bits_per_value
                .iter()
                .try_fold(0u64, |a, b| a.checked_add(*b).filter(|_| b % 8 == 0 && *b > 0));
            if sum != Some(row) {
                return Err(corrupt!(
                    "packed struct fields of {:?} bits in rows of {row} bits",
                    p.bits_per_value
                ));
            }
            decode_chunk(inner, bufs, n)
        }
        C::VariablePackedStruct(_) => Err(corrupt!("a variable packed struct in a mini-block chunk")),
    }
}

fn fsst_values(table: &[u8], inner: Values) -> Result<Values> {
    let Values::Var { offsets, data } = inner else {
        return Err(corrupt!("FSST over fixed-width values"));
    };
    let (offsets, data) = SymbolTable::parse(table)?.decompress_values(&offsets, &data)?;
    Ok(Values::Var { offsets, data })
}

/// Decodes a self-describing block holding `n` values (dictionaries).
pub fn decode_block(enc: &pb21::CompressiveEncoding, buf: &[u8], n: usize) -> Result<Values> {
    match variant(enc)? {
        C::General(g) => {
            let scheme = g.compression.as_ref().map(|c| c.scheme).unwrap_or(0);
            decode_block(required(&g.values, "compressed values")?, &decompress(scheme, buf)?, n)
        }
        C::Variable(v) => {
            let nb = offset_width(required(&v.offsets, "offsets")?)?;
            let bpo = read_uint(buf, 0, nb)?;
            if bpo != nb as u64 * 8 {
                return Err(corrupt!(
                    "variable block declares {bpo}-bit offsets, expected {}",
                    nb * 8
                ));
            }
            let start = read_uint(buf, nb, nb)?;
            let positions = (0..=n)
                .map(|i| Ok(read_uint(buf, (2 + i) * nb, nb)?.saturating_add(start)))
                .collect::<Result<Vec<_>>>()?;
            var_from_positions(buf, &positions)
        }
        C::Fsst(f) => {
            let inner = decode_block(required(&f.values, "FSST values")?, buf, n)?;
            fsst_values(&f.symbol_table, inner)
        }
        C::Rle(_) => {
            // u64 byte length of the run values, the run values, then the u8 run lengths.
            let vlen = read_uint(buf, 0, 8)?;
            let vlen = usize::try_from(vlen).map_err(|_| corrupt!("run-length block of {vlen} value bytes"))?;
            let values = buf
                .get(8..8usize.saturating_add(vlen))
                .ok_or_else(|| corrupt!("run-length block values of {vlen} bytes are truncated"))?;
            let lens = &buf[8 + vlen..];
            decode_chunk(enc, &[values, lens], n)
        }
        _ => decode_chunk(enc, &[buf], n),
    }
}

/// Decodes `n` repetition or definition levels. Levels are always stored as one
/// self-describing block (this matters for RLE, whose block form carries a size header).
pub fn decode_levels(enc: &pb21::CompressiveEncoding, buf: &[u8], n: usize) -> Result<Vec<u16>> {
    match decode_block(enc, buf, n)? {
        Values::Fixed { bits: 16, data, len } => Ok(data
            .chunks_exact(2)
            .take(len)
            .map(|c| u16::from_le_bytes([c[0], c[1]]))
            .collect()),
        Values::Fixed { bits: 8, data, len } => Ok(data.iter().take(len).map(|b| u16::from(*b)).collect()),
        _ => Err(Error::Unsupported("levels that are not 8 or 16 bits wide".into())),
    }
}

/// Width in bits of one full-zip fixed value under `enc` (checked against the layout).
pub fn fixed_from_bytes(enc: &pb21::CompressiveEncoding, data: Vec<u8>, n: usize) -> Result<Values> {
    match variant(enc)? {
        C::Flat(f) => {
            let bits = f.bits_per_value;
            let nb = fixed_bytes(bits)?;
            if data.len() != n * nb {
                return Err(corrupt!("{n} values of {bits} bits in {} bytes", data.len()));
            }
            Ok(Values::Fixed { bits, data, len: n })
        }
        C::FixedSizeList(_) => {
            // A value of (nested) fixed-size lists: the validity bitmap of each level that
            // has one (whole bytes over all of that level's items, outer level first),
            // then the innermost values.
            let (levels, leaf) = fsl_levels(enc)?;
            let leaf_bytes = fixed_bytes(fixed_bits(leaf)?)?;
            let mut items = 1usize;
            let mut vbytes = Vec::with_capacity(levels.len());
            for (d, has_validity) in &levels {
                items = checked_count(items, *d)?;
                vbytes.push(if *has_validity { items.div_ceil(8) } else { 0 });
            }
            let values_bytes = items
                .checked_mul(leaf_bytes)
                .ok_or_else(|| corrupt!("fixed-size list width overflows"))?;
            let stride = vbytes.iter().sum::<usize>() + values_bytes;
            if data.len() != n.saturating_mul(stride) {
                return Err(corrupt!(
                    "{n} fixed-size lists of {stride} bytes in {} bytes",
                    data.len()
                ));
            }
            let mut validity: Vec<Option<Vec<bool>>> = vbytes.iter().map(|b| (*b > 0).then(Vec::new)).collect();
            let mut leaf_data = Vec::with_capacity(n.saturating_mul(values_bytes));
            for v in data.chunks_exact(stride.max(1)) {
                let (mut at, mut count) = (0usize, 1usize);
                for ((d, _), (bits, valid)) in levels.iter().zip(vbytes.iter().zip(validity.iter_mut())) {
                    count *= d;
                    if let Some(valid) = valid {
                        valid.extend((0..count).map(|i| v[at + i / 8] >> (i % 8) & 1 == 1));
                    }
                    at += bits;
                }
                leaf_data.extend_from_slice(&v[at..]);
            }
            let mut values = fixed_from_bytes(leaf, leaf_data, checked_count(n, items)?)?;
            // Wrap from the innermost level out: level j holds n * d0 * .. * d(j-1) lists.
            let mut lists: Vec<usize> = Vec::with_capacity(levels.len());
            let mut count = n;
            for (d, _) in &levels {
                lists.push(count);
                count = checked_count(count, *d)?;
            }
            for (((d, _), valid), len) in levels.iter().zip(validity).zip(lists).rev() {
                values = Values::Fsl {
                    dim: *d,
                    validity: valid,
                    items: Box::new(values),
                    len,
                };
            }
            Ok(values)
        }
        _ => Err(Error::Unsupported("this fixed-width full-zip value encoding".into())),
    }
}

/// The chain of (nested) fixed-size list levels of `enc` (size, has validity), outer
/// first, and the innermost values' encoding.
fn fsl_levels(enc: &pb21::CompressiveEncoding) -> Result<(Vec<(usize, bool)>, &pb21::CompressiveEncoding)> {
    let mut levels = Vec::new();
    let mut e = enc;
    while let C::FixedSizeList(f) = variant(e)? {
        if levels.len() > 64 {
            return Err(corrupt!("fixed-size lists nested deeper than 64 levels"));
        }
        let d = usize::try_from(f.items_per_value).map_err(|_| corrupt!("huge fixed-size list"))?;
        levels.push((d, f.has_validity));
        e = required(&f.values, "list items")?;
    }
    Ok((levels, e))
}

/// Bits of one fixed value under `enc` (to check a full-zip layout's `bits_per_value`).
pub fn fixed_bits(enc: &pb21::CompressiveEncoding) -> Result<u64> {
    match variant(enc)? {
        C::Flat(f) => Ok(f.bits_per_value),
        C::FixedSizeList(_) => {
            // Each level's validity bitmap (whole bytes over that level's items), then the
            // innermost values.
            let (levels, leaf) = fsl_levels(enc)?;
            let mut items = 1u64;
            let mut validity = 0u64;
            for (d, has_validity) in levels {
                items = items
                    .checked_mul(d as u64)
                    .ok_or_else(|| corrupt!("fixed-size list width overflows"))?;
                if has_validity {
                    validity += items.div_ceil(8) * 8;
                }
            }
            fixed_bits(leaf)?
                .checked_mul(items)
                .and_then(|b| b.checked_add(validity))
                .ok_or_else(|| corrupt!("fixed-size list width overflows"))
        }
        _ => Err(Error::Unsupported("this fixed-width full-zip value encoding".into())),
    }
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

/// Decodes the bytes of one full-zip variable-width value, appending them to `out`.
pub fn var_value(enc: &pb21::CompressiveEncoding, raw: &[u8], out: &mut Vec<u8>) -> Result<()> {
    match variant(enc)? {
        C::Variable(_) => {
            out.extend_from_slice(raw);
            Ok(())
        }
        C::Fsst(f) => {
            let mut inner = Vec::new();
            var_value(required(&f.values, "FSST values")?, raw, &mut inner)?;
            SymbolTable::parse(&f.symbol_table)?.decompress_into(&inner, out)
        }
        C::General(g) => {
            let scheme = g.compression.as_ref().map(|c| c.scheme).unwrap_or(0);
            var_value(
                required(&g.values, "compressed values")?,
                &decompress(scheme, raw)?,
                out,
            )
        }
        _ => Err(Error::Unsupported("this variable-width full-zip value encoding".into())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::StringArray;
    use lancelet_proto::pb21::{Flat, Variable};

    fn flat_enc(bits: u64) -> pb21::CompressiveEncoding {
        pb21::CompressiveEncoding {
            compression: Some(C::Flat(Flat {
                bits_per_value: bits,
                data: None,
            })),
        }
    }

    fn var_enc(bits: u64) -> pb21::CompressiveEncoding {
        pb21::CompressiveEncoding {
            compression: Some(C::Variable(Box::new(Variable {
                offsets: Some(Box::new(flat_enc(bits))),
                values: None,
            }))),
        }
    }

    #[test]
    fn variable_chunk_and_block() {
        // chunk: absolute positions, first = (n+1)*4
        let mut buf = Vec::new();
        for p in [16u32, 17, 17, 22] {
            buf.extend(p.to_le_bytes());
        }
        buf.extend(b"aeeeee");
        let v = decode_chunk(&var_enc(32), &[&buf], 3).unwrap();
        let a = v.into_array(&DataType::Utf8).unwrap();
        let s = a.as_any().downcast_ref::<StringArray>().unwrap();
        assert_eq!(s.value(0), "a");
        assert_eq!(s.value(1), "");
        assert_eq!(s.value(2), "eeeee");
        // block: bits, data start, relative offsets
        let mut blk = Vec::new();
        for p in [32u32, 24, 0, 3, 8, 12] {
            blk.extend(p.to_le_bytes());
        }
        blk.extend(b"redgreenblue");
        let v = decode_block(&var_enc(32), &blk, 3).unwrap();
        let d = v.take(&[2, 0, 0, 1]).unwrap().into_array(&DataType::Utf8).unwrap();
        let s = d.as_any().downcast_ref::<StringArray>().unwrap();
        assert_eq!(
            s.iter().flatten().collect::<Vec<_>>(),
            vec!["blue", "red", "red", "green"]
        );
        assert!(v.take(&[3]).is_err());
        // corrupt offsets
        assert!(decode_chunk(&var_enc(32), &[&buf[..10]], 3).is_err());
        assert!(decode_block(&var_enc(32), &blk[..20], 3).is_err());
    }

    #[test]
    fn flat_bool_and_append() {
        let mut v = decode_chunk(&flat_enc(1), &[&[0b101]], 3).unwrap();
        v.append(decode_chunk(&flat_enc(1), &[&[0b10]], 2).unwrap()).unwrap();
        let a = v.into_array(&DataType::Boolean).unwrap();
        let b = a.as_any().downcast_ref::<BooleanArray>().unwrap();
        assert_eq!(
            b.iter().flatten().collect::<Vec<_>>(),
            vec![true, false, true, false, true]
        );
        assert!(decode_chunk(&flat_enc(32), &[&[1, 2, 3]], 1).is_err());
    }
}
