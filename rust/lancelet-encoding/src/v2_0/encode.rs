//! Encoding Arrow arrays into 2.0 pages, choosing the same shapes pylance 14 writes.

use std::collections::HashMap;

use arrow_array::cast::AsArray;
use arrow_array::types::ByteArrayType;
use arrow_array::types::*;
use arrow_array::{Array, ArrayRef, BooleanArray, GenericByteArray};
use arrow_buffer::ArrowNativeType;
use arrow_buffer::Buffer;
use arrow_schema::DataType;

use super::decode::flat_bits;
use super::pb::array_encoding::ArrayEncoding as E;
use super::pb::nullable::{AllNull, NoNull, Nullability, SomeNull};
use super::{enc, flat, pb};
use crate::bits::{bitmap_from, validity_buffer};
use crate::{EncodedPage, Error, Result};

/// Rows at or above which a `string` page is considered for dictionary encoding.
pub const DICT_MIN_ROWS: usize = 100;
/// Distinct values below which a `string` page is dictionary encoded (pylance's default).
pub const DICT_MAX_DISTINCT: usize = 100;

/// Options for the 2.0 page encoder.
#[derive(Debug, Clone)]
pub struct EncodeOptions {
    /// Try dictionary encoding for low-cardinality `string` pages.
    pub dictionary: bool,
}

impl Default for EncodeOptions {
    fn default() -> Self {
        Self { dictionary: true }
    }
}

/// Collects page buffers, handing out their indices.
#[derive(Default)]
struct Buffers(Vec<Buffer>);

impl Buffers {
    fn push(&mut self, b: Buffer) -> u32 {
        self.0.push(b);
        (self.0.len() - 1) as u32
    }
}

/// Encodes one page of a leaf column (every type that maps to a single 2.0 column).
pub fn encode_leaf(array: &ArrayRef, opts: &EncodeOptions) -> Result<EncodedPage<pb::ArrayEncoding>> {
    let mut bufs = Buffers::default();
    let encoding = encode_any(array.as_ref(), opts, &mut bufs)?;
    Ok(EncodedPage {
        buffers: bufs.0,
        encoding,
        num_rows: array.len() as u64,
    })
}

/// True when arrays of this type are stored in a single 2.0 column.
pub fn is_leaf_type(dt: &DataType) -> bool {
    match dt {
        DataType::Null => true,
        DataType::FixedSizeList(item, _) => flat_bits(item.data_type()).is_some(),
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Binary | DataType::LargeBinary => true,
        DataType::Dictionary(key, value) => {
            key.is_integer()
                && matches!(
                    value.as_ref(),
                    DataType::Utf8 | DataType::LargeUtf8 | DataType::Binary | DataType::LargeBinary
                )
        }
        dt => flat_bits(dt).is_some(),
    }
}

fn encode_any(array: &dyn Array, opts: &EncodeOptions, bufs: &mut Buffers) -> Result<pb::ArrayEncoding> {
    match array.data_type() {
        DataType::Utf8 => {
            let a = array.as_string::<i32>();
            if opts.dictionary {
                if let Some(e) = try_dictionary(a, bufs)? {
                    return Ok(e);
                }
            }
            Ok(encode_binary(a, bufs))
        }
        DataType::LargeUtf8 => Ok(encode_binary(array.as_string::<i64>(), bufs)),
        DataType::Binary => Ok(encode_binary(array.as_binary::<i32>(), bufs)),
        DataType::LargeBinary => Ok(encode_binary(array.as_binary::<i64>(), bufs)),
        DataType::Dictionary(_, _) => encode_arrow_dictionary(array, bufs),
        _ => encode_nullable(array, bufs, |arr, bufs| encode_values(arr, bufs)),
    }
}

/// `Nullable` around whatever `inner` writes for the values.
fn encode_nullable(
    array: &dyn Array,
    bufs: &mut Buffers,
    inner: impl FnOnce(&dyn Array, &mut Buffers) -> Result<pb::ArrayEncoding>,
) -> Result<pb::ArrayEncoding> {
    let len = array.len();
    let is_null_type = matches!(array.data_type(), DataType::Null);
    let null_count = if is_null_type { len } else { array.null_count() };
    let nullability = if is_null_type || null_count == len {
        Nullability::AllNulls(AllNull {})
    } else if null_count == 0 {
        let values = inner(array, bufs)?;
        Nullability::NoNulls(Box::new(NoNull {
            values: Some(Box::new(values)),
        }))
    } else {
        let validity = validity_buffer(array.nulls()).unwrap_or_else(|| Buffer::from_vec(Vec::<u8>::new()));
        let idx = bufs.push(validity);
        let values = inner(array, bufs)?;
        Nullability::SomeNulls(Box::new(SomeNull {
            validity: Some(Box::new(flat(1, idx))),
            values: Some(Box::new(values)),
        }))
    };
    Ok(enc(E::Nullable(Box::new(pb::Nullable {
        nullability: Some(nullability),
    }))))
}

/// The values of a fixed-width array (or a fixed-size list of them), nulls ignored.
fn encode_values(array: &dyn Array, bufs: &mut Buffers) -> Result<pb::ArrayEncoding> {
    let dt = array.data_type();
    if let DataType::FixedSizeList(_, dim) = dt {
        let fsl = array.as_fixed_size_list();
        let items = fsl.values();
        let dim_usize = *dim as usize;
        let items = items.slice(fsl.offset() * dim_usize, fsl.len() * dim_usize);
        let items_enc = encode_nullable(items.as_ref(), bufs, |a, b| encode_values(a, b))?;
        return Ok(enc(E::FixedSizeList(Box::new(pb::FixedSizeList {
            dimension: *dim as u32,
            has_validity: false,
            items: Some(Box::new(items_enc)),
        }))));
    }
    let bits = flat_bits(dt).ok_or_else(|| Error::InvalidInput(format!("cannot encode {dt} as flat values")))?;
    let data = array.to_data();
    let buf = if matches!(dt, DataType::Boolean) {
        let b: &BooleanArray = array.as_boolean();
        let values = b.values();
        bitmap_from(values.inner(), values.offset(), values.len())
    } else {
        let width = (bits / 8) as usize;
        let raw = data
            .buffers()
            .first()
            .cloned()
            .unwrap_or_else(|| Buffer::from_vec(Vec::<u8>::new()));
        raw.slice_with_length(data.offset() * width, data.len() * width)
    };
    let idx = bufs.push(buf);
    Ok(flat(bits, idx))
}

/// End offsets of each value, relative to the first, with nulls shifted by `last + 1`.
fn binary_indices<T: ByteArrayType>(a: &GenericByteArray<T>) -> (Vec<u64>, u64, Buffer) {
    let offsets = a.value_offsets();
    let first = offsets.first().map(|o| o.as_usize()).unwrap_or(0);
    let last = offsets.last().map(|o| o.as_usize()).unwrap_or(0);
    let mut indices: Vec<u64> = offsets.iter().skip(1).map(|o| (o.as_usize() - first) as u64).collect();
    let null_adjustment = indices.last().copied().unwrap_or(0) + 1;
    if let Some(nulls) = a.nulls() {
        for (i, valid) in nulls.iter().enumerate() {
            if !valid {
                indices[i] += null_adjustment;
            }
        }
    }
    let bytes = a.values().slice_with_length(first, last - first);
    (indices, null_adjustment, bytes)
}

fn encode_binary<T: ByteArrayType>(a: &GenericByteArray<T>, bufs: &mut Buffers) -> pb::ArrayEncoding {
    let (indices, null_adjustment, bytes) = binary_indices(a);
    let idx = bufs.push(Buffer::from_vec(indices));
    let bytes_idx = bufs.push(bytes);
    binary_encoding(idx, bytes_idx, null_adjustment)
}

fn binary_encoding(indices_idx: u32, bytes_idx: u32, null_adjustment: u64) -> pb::ArrayEncoding {
    enc(E::Binary(Box::new(pb::Binary {
        indices: Some(Box::new(no_nulls(flat(64, indices_idx)))),
        bytes: Some(Box::new(flat(8, bytes_idx))),
        null_adjustment,
    })))
}

fn no_nulls(values: pb::ArrayEncoding) -> pb::ArrayEncoding {
    enc(E::Nullable(Box::new(pb::Nullable {
        nullability: Some(Nullability::NoNulls(Box::new(NoNull {
            values: Some(Box::new(values)),
        }))),
    })))
}

/// Dictionary-encodes a `string` page when it has enough rows and few distinct values.
/// Index 0 is null; item `k` is stored as index `k + 1`.
fn try_dictionary(
    a: &GenericByteArray<GenericStringType<i32>>,
    bufs: &mut Buffers,
) -> Result<Option<pb::ArrayEncoding>> {
    if a.len() < DICT_MIN_ROWS {
        return Ok(None);
    }
    let mut seen: HashMap<&str, u8> = HashMap::new();
    let mut items: Vec<&str> = Vec::new();
    let mut keys: Vec<u8> = Vec::with_capacity(a.len());
    for v in a.iter() {
        match v {
            None => keys.push(0),
            Some(s) => {
                let k = match seen.get(s) {
                    Some(k) => *k,
                    None => {
                        if items.len() + 1 >= DICT_MAX_DISTINCT {
                            return Ok(None);
                        }
                        items.push(s);
                        let k = items.len() as u8;
                        seen.insert(s, k);
                        k
                    }
                };
                keys.push(k);
            }
        }
    }
    // An all-null page still stores one (null) item, as pylance does.
    let items = if items.is_empty() {
        arrow_array::StringArray::from(vec![None::<&str>])
    } else {
        arrow_array::StringArray::from(items)
    };
    let keys_idx = bufs.push(Buffer::from_vec(keys));
    let items_enc = encode_binary(&items, bufs);
    Ok(Some(enc(E::Dictionary(Box::new(pb::Dictionary {
        indices: Some(Box::new(no_nulls(flat(8, keys_idx)))),
        items: Some(Box::new(items_enc)),
        num_dictionary_items: items.len() as u32,
    })))))
}

/// An Arrow dictionary array: keys as they are, the dictionary as items. Null keys point
/// at an extra null item appended to the dictionary (pylance's convention).
fn encode_arrow_dictionary(array: &dyn Array, bufs: &mut Buffers) -> Result<pb::ArrayEncoding> {
    let DataType::Dictionary(_, _) = array.data_type() else {
        return Err(Error::InvalidInput("expected a dictionary array".into()));
    };
    let dict = array.as_any_dictionary();
    let values = dict.values().clone();
    let keys = dict.keys();
    let (keys, values): (ArrayRef, ArrayRef) = if keys.null_count() > 0 {
        let null_item = arrow_array::new_null_array(values.data_type(), 1);
        let values = arrow_select::concat::concat(&[values.as_ref(), null_item.as_ref()])?;
        let null_key = values.len() - 1;
        let filled = fill_null_keys(keys, null_key)?;
        (filled, values)
    } else {
        (arrow_array::make_array(keys.to_data()), values)
    };
    let keys_enc = encode_nullable(keys.as_ref(), bufs, |a, b| encode_values(a, b))?;
    let items_opts = EncodeOptions { dictionary: false };
    let items_enc = encode_any(values.as_ref(), &items_opts, bufs)?;
    Ok(enc(E::Dictionary(Box::new(pb::Dictionary {
        indices: Some(Box::new(keys_enc)),
        items: Some(Box::new(items_enc)),
        num_dictionary_items: values.len() as u32,
    }))))
}

fn fill_null_keys(keys: &dyn Array, null_key: usize) -> Result<ArrayRef> {
    macro_rules! fill {
        ($t:ty) => {{
            let k = keys.as_primitive::<$t>();
            let nk = <<$t as ArrowPrimitiveType>::Native as num_like::FromUsize>::from_usize(null_key)
                .ok_or_else(|| Error::InvalidInput("dictionary too large for its key type".into()))?;
            let out: arrow_array::PrimitiveArray<$t> = k.iter().map(|v| Some(v.unwrap_or(nk))).collect();
            Ok(std::sync::Arc::new(out) as ArrayRef)
        }};
    }
    match keys.data_type() {
        DataType::Int8 => fill!(Int8Type),
        DataType::Int16 => fill!(Int16Type),
        DataType::Int32 => fill!(Int32Type),
        DataType::Int64 => fill!(Int64Type),
        DataType::UInt8 => fill!(UInt8Type),
        DataType::UInt16 => fill!(UInt16Type),
        DataType::UInt32 => fill!(UInt32Type),
        DataType::UInt64 => fill!(UInt64Type),
        other => Err(Error::InvalidInput(format!("dictionary keys of type {other}"))),
    }
}

mod num_like {
    /// Checked conversion from a dictionary length to a key value.
    pub trait FromUsize: Sized {
        fn from_usize(v: usize) -> Option<Self>;
    }
    macro_rules! imp {
        ($($t:ty),*) => {$(impl FromUsize for $t { fn from_usize(v: usize) -> Option<Self> { <$t>::try_from(v).ok() } })*};
    }
    imp!(i8, i16, i32, i64, u8, u16, u32, u64);
}

/// The single no-buffer page of a struct header column.
pub fn struct_header(num_rows: u64) -> EncodedPage<pb::ArrayEncoding> {
    EncodedPage {
        buffers: Vec::new(),
        encoding: enc(E::Struct(pb::SimpleStruct {})),
        num_rows,
    }
}

/// One page of list offsets: `ends[i]` is the end of list `i` relative to the first item
/// of the page and `valid[i]` whether it is non-null.
pub fn encode_list_offsets(ends: &[u64], valid: &[bool], num_items: u64) -> EncodedPage<pb::ArrayEncoding> {
    let adjustment = num_items + 1;
    let raw: Vec<u64> = ends
        .iter()
        .zip(valid)
        .map(|(e, v)| if *v { *e } else { *e + adjustment })
        .collect();
    let num_rows = raw.len() as u64;
    EncodedPage {
        buffers: vec![Buffer::from_vec(raw)],
        encoding: enc(E::List(Box::new(pb::List {
            offsets: Some(Box::new(no_nulls(flat(64, 0)))),
            null_offset_adjustment: adjustment,
            num_items,
        }))),
        num_rows,
    }
}
