//! Row access to function arguments (each a column or one value standing for every row) and
//! row-by-row construction of results.

use std::sync::Arc;

use arrow_array::builder::GenericStringBuilder;
use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use arrow_array::{Array, ArrayRef, GenericStringArray, OffsetSizeTrait, PrimitiveArray};
use arrow_schema::DataType;

use crate::error::{Error, Result};
use crate::eval::Value;

/// The most bytes one generated string may hold (Arrow's 32-bit offsets; DataFusion applies
/// the same limit to `repeat`, `lpad` and `rpad`).
pub(crate) const MAX_STRING_BYTES: usize = i32::MAX as usize;

/// The row count of a call's result: one when every argument is a single value.
pub(crate) fn result_rows(values: &[Value], rows: usize) -> usize {
    if values.iter().all(Value::is_scalar) {
        1
    } else {
        rows
    }
}

/// Wraps a result computed by [`result_rows`] rows.
pub(crate) fn wrap(values: &[Value], out: ArrayRef) -> Value {
    if values.iter().all(Value::is_scalar) {
        Value::Scalar(out)
    } else {
        Value::Array(out)
    }
}

pub(crate) fn arg(values: &[Value], i: usize) -> Result<&Value> {
    values
        .get(i)
        .ok_or_else(|| Error::Type(format!("missing function argument {}", i + 1)))
}

fn parts(v: &Value) -> (&ArrayRef, bool) {
    match v {
        Value::Array(a) => (a, false),
        Value::Scalar(a) => (a, true),
    }
}

/// A string argument (`Utf8` or `LargeUtf8`).
pub(crate) enum Strs<'a> {
    Small(&'a GenericStringArray<i32>, bool),
    Large(&'a GenericStringArray<i64>, bool),
}

impl<'a> Strs<'a> {
    pub(crate) fn new(v: &'a Value) -> Result<Self> {
        let (a, scalar) = parts(v);
        match a.data_type() {
            DataType::Utf8 => Ok(Strs::Small(a.as_string::<i32>(), scalar)),
            DataType::LargeUtf8 => Ok(Strs::Large(a.as_string::<i64>(), scalar)),
            other => Err(Error::Type(format!("expected a string argument, got {other}"))),
        }
    }

    /// The value of `row`, `None` when it is NULL.
    pub(crate) fn get(&self, row: usize) -> Option<&'a str> {
        match self {
            Strs::Small(a, scalar) => at(*a, row, *scalar).map(|i| a.value(i)),
            Strs::Large(a, scalar) => at(*a, row, *scalar).map(|i| a.value(i)),
        }
    }

    pub(crate) fn is_large(&self) -> bool {
        matches!(self, Strs::Large(..))
    }
}

fn at(a: &dyn Array, row: usize, scalar: bool) -> Option<usize> {
    let i = if scalar { 0 } else { row };
    (i < a.len() && a.is_valid(i)).then_some(i)
}

/// A primitive argument of type `T`.
pub(crate) struct Prims<'a, T: arrow_array::ArrowPrimitiveType> {
    array: &'a PrimitiveArray<T>,
    scalar: bool,
}

impl<'a, T: arrow_array::ArrowPrimitiveType> Prims<'a, T> {
    pub(crate) fn new(v: &'a Value) -> Result<Self> {
        let (a, scalar) = parts(v);
        let array = a
            .as_primitive_opt::<T>()
            .ok_or_else(|| Error::Type(format!("expected a {} argument, got {}", T::DATA_TYPE, a.data_type())))?;
        Ok(Prims { array, scalar })
    }

    pub(crate) fn get(&self, row: usize) -> Option<T::Native> {
        at(self.array, row, self.scalar).map(|i| self.array.value(i))
    }
}

/// An `Int64` argument.
pub(crate) type Ints<'a> = Prims<'a, Int64Type>;

/// The error for a result string over [`MAX_STRING_BYTES`].
pub(crate) fn too_large(what: &str, bytes: u128) -> Error {
    Error::InvalidArgument(format!(
        "{what}: the result would hold {bytes} bytes, more than the {MAX_STRING_BYTES} a string value can"
    ))
}

/// Builds `n` strings: `f(row, buf)` writes row `row` into the cleared `buf` and returns
/// whether it is non-NULL. `large` picks `LargeUtf8` output. A `Utf8` result over 2 GiB in
/// total is an error (32-bit offsets), not a panic.
pub(crate) fn build_strings(
    n: usize,
    large: bool,
    what: &str,
    f: impl FnMut(usize, &mut String) -> Result<bool>,
) -> Result<ArrayRef> {
    if large {
        build::<i64>(n, what, f)
    } else {
        build::<i32>(n, what, f)
    }
}

fn build<O: OffsetSizeTrait>(
    n: usize,
    what: &str,
    mut f: impl FnMut(usize, &mut String) -> Result<bool>,
) -> Result<ArrayRef> {
    let mut out = GenericStringBuilder::<O>::with_capacity(n, 0);
    let mut buf = String::new();
    let mut total: usize = 0;
    for row in 0..n {
        buf.clear();
        if f(row, &mut buf)? {
            total = total.saturating_add(buf.len());
            if !O::IS_LARGE && total > MAX_STRING_BYTES {
                return Err(Error::InvalidArgument(format!(
                    "{what}: the results hold more than {MAX_STRING_BYTES} bytes, the most a string column can \
                     (use large strings or fewer rows per batch)"
                )));
            }
            out.append_value(&buf);
        } else {
            out.append_null();
        }
    }
    Ok(Arc::new(out.finish()))
}
