//! Decoded values of a Lance 2.1+ page ([`Values`]) and how they become Arrow arrays.
//!
//! [`super::values_decode`] turns encoded buffers into [`Values`] (untyped: fixed-width
//! bytes, variable-width bytes with offsets, fixed-size lists, packed struct children);
//! [`Values::into_array`] then builds the Arrow array of the column's type, including
//! dictionary columns ([`dictionary_from_indices`]). The 2.0 decoder reuses it too.

use std::sync::Arc;

use arrow_array::{make_array, Array, ArrayRef, BooleanArray, FixedSizeListArray, NullArray, StructArray};
use arrow_buffer::{BooleanBuffer, BooleanBufferBuilder, Buffer, NullBuffer};
use arrow_data::ArrayData;
use arrow_schema::DataType;

use super::packed_decode::packed_rows;
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
        // Bytes and offsets of all parts, reserved once instead of regrown part by part.
        let (bytes, offsets) = parts.iter().fold((0usize, 0usize), |(b, o), p| match p {
            Self::Var { offsets, data } => (b + data.len(), o + offsets.len()),
            Self::Fixed { data, .. } => (b + data.len(), o),
            _ => (b, o),
        });
        let mut it = parts.into_iter();
        let Some(mut first) = it.next() else {
            return Ok(Self::Fixed {
                bits: 8,
                data: Vec::new(),
                len: 0,
            });
        };
        match &mut first {
            Self::Var { offsets: o, data } => {
                data.reserve(bytes - data.len());
                o.reserve(offsets - o.len());
            }
            Self::Fixed { data, .. } => data.reserve(bytes - data.len()),
            _ => {}
        }
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
        if let Some(run) = contiguous(indices) {
            if let Some(v) = self.range(run)? {
                return Ok(v);
            }
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

    /// The values `run` (in range) as one copy of their bytes; `None` for the kinds
    /// [`Values::take`] handles value by value (bits, lists, structs).
    fn range(&self, run: std::ops::Range<usize>) -> Result<Option<Values>> {
        let len = run.len();
        match self {
            Self::Fixed { bits, data, .. } if *bits != 1 => {
                let nb = fixed_bytes(*bits)?;
                let bytes = data
                    .get(run.start * nb..run.end * nb)
                    .ok_or_else(|| corrupt!("short dictionary"))?;
                Ok(Some(Self::Fixed {
                    bits: *bits,
                    data: bytes.to_vec(),
                    len,
                }))
            }
            Self::Var { offsets, data } => {
                let (Some(&s), Some(&e)) = (offsets.get(run.start), offsets.get(run.end)) else {
                    return Err(corrupt!("variable-width values {run:?} have bad offsets"));
                };
                let part = &offsets[run.start..=run.end];
                if part.windows(2).any(|w| w[0] > w[1]) || e as usize > data.len() {
                    return Err(corrupt!("variable-width values {run:?} have bad offsets"));
                }
                if e - s > MAX_EXPANDED_BYTES as u64 {
                    return Err(corrupt!(
                        "dictionary values expand to more than {MAX_EXPANDED_BYTES} bytes"
                    ));
                }
                Ok(Some(Self::Var {
                    offsets: part.iter().map(|o| o - s).collect(),
                    data: data[s as usize..e as usize].to_vec(),
                }))
            }
            _ => Ok(None),
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
                // An empty Vec's pointer is only byte-aligned; an empty Arrow buffer is not.
                let buffer = if data.is_empty() {
                    Buffer::from(arrow_buffer::MutableBuffer::new(0))
                } else {
                    Buffer::from_vec(data)
                };
                let array = ArrayData::builder(dt.clone()).len(len).add_buffer(buffer).build()?;
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

/// `indices` as the range they cover when they are consecutive ascending positions.
fn contiguous(indices: &[u64]) -> Option<std::ops::Range<usize>> {
    let first = usize::try_from(*indices.first()?).ok()?;
    let consecutive = indices.iter().enumerate().all(|(k, &i)| i == (first + k) as u64);
    consecutive.then(|| first..first + indices.len())
}

fn var_slice<'a>(offsets: &[u64], data: &'a [u8], i: usize) -> Result<&'a [u8]> {
    match (offsets.get(i), offsets.get(i + 1)) {
        (Some(s), Some(e)) if s <= e && (*e as usize) <= data.len() => Ok(&data[*s as usize..*e as usize]),
        _ => Err(corrupt!("variable-width value {i} has bad offsets")),
    }
}

/// Bytes per value of a byte-aligned width.
pub(crate) fn fixed_bytes(bits: u64) -> Result<usize> {
    if bits == 0 || !bits.is_multiple_of(8) || bits > 1 << 20 {
        return Err(Error::Unsupported(format!("{bits}-bit values")));
    }
    Ok((bits / 8) as usize)
}
