//! Hash-set membership for long constant `IN` lists.

use std::collections::HashSet as StdHashSet;
use std::hash::{BuildHasherDefault, Hasher};

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Date32Type, Date64Type, Decimal128Type, Float16Type, Float32Type, Float64Type, Int16Type, Int32Type, Int64Type,
    Int8Type, TimestampMicrosecondType, TimestampMillisecondType, TimestampNanosecondType, TimestampSecondType,
    UInt16Type, UInt32Type, UInt64Type, UInt8Type,
};
use arrow_array::{Array, ArrowPrimitiveType, BooleanArray, PrimitiveArray};
use arrow_buffer::BooleanBuffer;
use arrow_schema::{DataType, TimeUnit};
use arrow_select::take::take;

use crate::error::{Error, Result};

/// A fast non-cryptographic hasher (the FxHash mix used by rustc). The keys come from the
/// user's own query, so flooding resistance is not needed, and SipHash would dominate the
/// probe loop.
#[derive(Default)]
pub(crate) struct FxHasher {
    hash: u64,
}

const FX_SEED: u64 = 0xf135_7aea_2e62_a9c5;

impl FxHasher {
    #[inline]
    fn add(&mut self, word: u64) {
        self.hash = (self.hash.rotate_left(5) ^ word).wrapping_mul(FX_SEED);
    }
}

impl Hasher for FxHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            let mut word = [0u8; 8];
            word.copy_from_slice(chunk);
            self.add(u64::from_le_bytes(word));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut word = [0u8; 8];
            word[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(word) ^ ((rest.len() as u64) << 59));
        }
    }

    #[inline]
    fn write_u8(&mut self, i: u8) {
        self.add(u64::from(i));
    }

    #[inline]
    fn write_u64(&mut self, i: u64) {
        self.add(i);
    }

    #[inline]
    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }

    #[inline]
    fn write_i128(&mut self, i: i128) {
        self.add(i as u64);
        self.add((i >> 64) as u64);
    }

    #[inline]
    fn finish(&self) -> u64 {
        // Move the well-mixed high bits down to where hashbrown picks buckets.
        self.hash.rotate_left(26)
    }
}

type HashSet<T> = StdHashSet<T, BuildHasherDefault<FxHasher>>;

/// The distinct non-null values of a constant list, keyed so that set equality matches the
/// `=` kernel (floats compare by bit pattern, i.e. IEEE total order: `NaN = NaN`, `-0 != 0`).
#[derive(Debug)]
pub(crate) enum InSet {
    Int(HashSet<i128>),
    Float(HashSet<u64>),
    Str(HashSet<String>),
    Bytes(HashSet<Vec<u8>>),
}

/// Visits the non-null values of a primitive array as hashable keys.
fn keys<T: ArrowPrimitiveType, K>(a: &dyn Array, key: impl Fn(T::Native) -> K, out: &mut HashSet<K>)
where
    K: std::hash::Hash + Eq,
{
    let a: &PrimitiveArray<T> = a.as_primitive();
    out.extend(a.iter().flatten().map(key));
}

fn probe<T: ArrowPrimitiveType, K>(a: &dyn Array, key: impl Fn(T::Native) -> K, set: &HashSet<K>) -> BooleanArray
where
    K: std::hash::Hash + Eq,
{
    let a: &PrimitiveArray<T> = a.as_primitive();
    let values = a.values();
    let hits = BooleanBuffer::collect_bool(a.len(), |i| set.contains(&key(values[i])));
    BooleanArray::new(hits, a.nulls().cloned())
}

fn probe_bytes(len: usize, nulls: Option<&arrow_buffer::NullBuffer>, hit: impl Fn(usize) -> bool) -> BooleanArray {
    BooleanArray::new(BooleanBuffer::collect_bool(len, hit), nulls.cloned())
}

macro_rules! dispatch_int {
    ($dt:expr, $f:ident, $a:expr, $set:expr) => {
        match $dt {
            DataType::Int8 => Some($f::<Int8Type, _>($a, i128::from, $set)),
            DataType::Int16 => Some($f::<Int16Type, _>($a, i128::from, $set)),
            DataType::Int32 => Some($f::<Int32Type, _>($a, i128::from, $set)),
            DataType::Int64 => Some($f::<Int64Type, _>($a, i128::from, $set)),
            DataType::UInt8 => Some($f::<UInt8Type, _>($a, i128::from, $set)),
            DataType::UInt16 => Some($f::<UInt16Type, _>($a, i128::from, $set)),
            DataType::UInt32 => Some($f::<UInt32Type, _>($a, i128::from, $set)),
            DataType::UInt64 => Some($f::<UInt64Type, _>($a, i128::from, $set)),
            DataType::Date32 => Some($f::<Date32Type, _>($a, i128::from, $set)),
            DataType::Date64 => Some($f::<Date64Type, _>($a, i128::from, $set)),
            DataType::Timestamp(TimeUnit::Second, _) => Some($f::<TimestampSecondType, _>($a, i128::from, $set)),
            DataType::Timestamp(TimeUnit::Millisecond, _) => {
                Some($f::<TimestampMillisecondType, _>($a, i128::from, $set))
            }
            DataType::Timestamp(TimeUnit::Microsecond, _) => {
                Some($f::<TimestampMicrosecondType, _>($a, i128::from, $set))
            }
            DataType::Timestamp(TimeUnit::Nanosecond, _) => {
                Some($f::<TimestampNanosecondType, _>($a, i128::from, $set))
            }
            DataType::Decimal128(_, _) => Some($f::<Decimal128Type, _>($a, |v| v, $set)),
            _ => None,
        }
    };
}

macro_rules! dispatch_float {
    ($dt:expr, $f:ident, $a:expr, $set:expr) => {
        match $dt {
            DataType::Float16 => Some($f::<Float16Type, _>($a, |v| (f64::from(v) + 0.0).to_bits(), $set)),
            DataType::Float32 => Some($f::<Float32Type, _>($a, |v| (f64::from(v) + 0.0).to_bits(), $set)),
            DataType::Float64 => Some($f::<Float64Type, _>($a, |v| (v + 0.0).to_bits(), $set)),
            _ => None,
        }
    };
}

impl InSet {
    /// Whether values of this (non-dictionary) type can be hashed.
    pub(crate) fn supports(dt: &DataType) -> bool {
        matches!(
            dt,
            DataType::Int8
                | DataType::Int16
                | DataType::Int32
                | DataType::Int64
                | DataType::UInt8
                | DataType::UInt16
                | DataType::UInt32
                | DataType::UInt64
                | DataType::Date32
                | DataType::Date64
                | DataType::Timestamp(_, _)
                | DataType::Decimal128(_, _)
                | DataType::Float16
                | DataType::Float32
                | DataType::Float64
                | DataType::Utf8
                | DataType::LargeUtf8
                | DataType::Utf8View
                | DataType::Binary
                | DataType::LargeBinary
                | DataType::BinaryView
                | DataType::FixedSizeBinary(_)
        )
    }

    /// Builds the set from the list values (already converted to the probed type).
    pub(crate) fn build(values: &dyn Array) -> Result<InSet> {
        let dt = values.data_type();
        let unsupported = || Error::Type(format!("IN lists of {dt} values are not supported"));
        if let Some(s) = {
            let mut set = HashSet::default();
            dispatch_int!(dt, keys, values, &mut set).map(|()| set)
        } {
            return Ok(InSet::Int(s));
        }
        if let Some(s) = {
            let mut set = HashSet::default();
            dispatch_float!(dt, keys, values, &mut set).map(|()| set)
        } {
            return Ok(InSet::Float(s));
        }
        match dt {
            DataType::Utf8 => Ok(InSet::Str(
                values.as_string::<i32>().iter().flatten().map(str::to_string).collect(),
            )),
            DataType::LargeUtf8 => Ok(InSet::Str(
                values.as_string::<i64>().iter().flatten().map(str::to_string).collect(),
            )),
            DataType::Utf8View => Ok(InSet::Str(
                values.as_string_view().iter().flatten().map(str::to_string).collect(),
            )),
            DataType::Binary => Ok(InSet::Bytes(
                values.as_binary::<i32>().iter().flatten().map(<[u8]>::to_vec).collect(),
            )),
            DataType::LargeBinary => Ok(InSet::Bytes(
                values.as_binary::<i64>().iter().flatten().map(<[u8]>::to_vec).collect(),
            )),
            DataType::BinaryView => Ok(InSet::Bytes(
                values.as_binary_view().iter().flatten().map(<[u8]>::to_vec).collect(),
            )),
            DataType::FixedSizeBinary(_) => Ok(InSet::Bytes(
                values
                    .as_fixed_size_binary()
                    .iter()
                    .flatten()
                    .map(<[u8]>::to_vec)
                    .collect(),
            )),
            _ => Err(unsupported()),
        }
    }

    /// Membership of every row of `array` (nulls stay null).
    pub(crate) fn contains(&self, array: &dyn Array) -> Result<BooleanArray> {
        if let Some(dict) = array.as_any_dictionary_opt() {
            // Probe the (usually few) distinct values once, then spread by key.
            let hits = self.contains(dict.values().as_ref())?;
            let out = take(&hits, dict.keys(), None)?;
            return Ok(out.as_boolean().clone());
        }
        let dt = array.data_type();
        let mismatch = || Error::Type(format!("IN list set cannot be probed with {dt} values"));
        let len = array.len();
        let nulls = array.nulls();
        let out = match self {
            InSet::Int(set) => dispatch_int!(dt, probe, array, set),
            InSet::Float(set) => dispatch_float!(dt, probe, array, set),
            InSet::Str(set) => match dt {
                DataType::Utf8 => {
                    let a = array.as_string::<i32>();
                    Some(probe_bytes(len, nulls, |i| set.contains(a.value(i))))
                }
                DataType::LargeUtf8 => {
                    let a = array.as_string::<i64>();
                    Some(probe_bytes(len, nulls, |i| set.contains(a.value(i))))
                }
                DataType::Utf8View => {
                    let a = array.as_string_view();
                    Some(probe_bytes(len, nulls, |i| set.contains(a.value(i))))
                }
                _ => None,
            },
            InSet::Bytes(set) => match dt {
                DataType::Binary => {
                    let a = array.as_binary::<i32>();
                    Some(probe_bytes(len, nulls, |i| set.contains(a.value(i))))
                }
                DataType::LargeBinary => {
                    let a = array.as_binary::<i64>();
                    Some(probe_bytes(len, nulls, |i| set.contains(a.value(i))))
                }
                DataType::BinaryView => {
                    let a = array.as_binary_view();
                    Some(probe_bytes(len, nulls, |i| set.contains(a.value(i))))
                }
                DataType::FixedSizeBinary(_) => {
                    let a = array.as_fixed_size_binary();
                    Some(probe_bytes(len, nulls, |i| set.contains(a.value(i))))
                }
                _ => None,
            },
        };
        out.ok_or_else(mismatch)
    }
}
