//! Scalar functions: evaluation (argument checking lives in the binder).

use std::sync::Arc;

use arrow_arith::boolean::is_not_null;
use arrow_array::cast::AsArray;
use arrow_array::types::{
    Decimal128Type, Float16Type, Float32Type, Float64Type, Int16Type, Int32Type, Int64Type, Int8Type,
};
use arrow_array::{
    Array, ArrayRef, BooleanArray, GenericStringArray, Int32Array, Int64Array, OffsetSizeTrait, Scalar, StringArray,
};
use arrow_buffer::Buffer;
use arrow_schema::{ArrowError, DataType};
use arrow_select::zip::zip;
use arrow_string::like;
use arrow_string::regexp::{regexp_is_match_scalar, regexp_match};

use crate::error::{Error, Result};
use crate::eval::{datum_op, Value};

mod args;
mod conditional;
mod datetime;
mod json;
mod math;
mod nested;
mod strings;

pub(crate) use conditional::CondFunc;
pub(crate) use datetime::{Field as DateField, Granularity, TimeFunc};
pub(crate) use json::{JsonFunc, JsonPath};
pub(crate) use math::{MathFunc, Unary};
pub(crate) use strings::StrFunc;

/// Function names `bind` accepts (lower case), for error messages.
pub(crate) const SUPPORTED: &[&str] = &[
    "abs",
    "acos",
    "acosh",
    "array_contains",
    "array_element",
    "array_has",
    "array_has_all",
    "array_has_any",
    "array_length",
    "arrays_overlap",
    "arrow_cast",
    "ascii",
    "asin",
    "asinh",
    "atan",
    "atan2",
    "atanh",
    "bit_length",
    "btrim",
    "cardinality",
    "cbrt",
    "char_length",
    "character_length",
    "chr",
    "coalesce",
    "concat",
    "concat_ws",
    "contains",
    "contains_tokens",
    "cos",
    "cosh",
    "cot",
    "current_date",
    "current_timestamp",
    "date_part",
    "date_trunc",
    "datepart",
    "datetrunc",
    "degrees",
    "ends_with",
    "exp",
    "factorial",
    "gcd",
    "get_field",
    "greatest",
    "ifnull",
    "initcap",
    "instr",
    "is_nan",
    "isnan",
    "iszero",
    "json_array_contains",
    "json_array_length",
    "json_exists",
    "json_extract",
    "json_get",
    "json_get_bool",
    "json_get_float",
    "json_get_int",
    "json_get_string",
    "lcm",
    "least",
    "left",
    "length",
    "list_contains",
    "list_has",
    "ln",
    "log",
    "log10",
    "log2",
    "lower",
    "lpad",
    "ltrim",
    "make_array",
    "md5",
    "nanvl",
    "now",
    "nullif",
    "nvl",
    "nvl2",
    "octet_length",
    "pi",
    "pow",
    "power",
    "radians",
    "regexp_like",
    "regexp_match",
    "repeat",
    "replace",
    "reverse",
    "right",
    "round",
    "rpad",
    "rtrim",
    "signum",
    "sin",
    "sinh",
    "split_part",
    "sqrt",
    "starts_with",
    "strpos",
    "tan",
    "tanh",
    "to_hex",
    "today",
    "translate",
    "trunc",
    "upper",
];

/// A bound function; constant arguments that must be constant are captured here.
#[derive(Debug, Clone)]
pub(crate) enum Func {
    Lower,
    Upper,
    CharLength,
    StartsWith,
    EndsWith,
    Contains,
    RegexpLike {
        pattern: String,
        flags: Option<String>,
    },
    RegexpMatch {
        pattern: String,
        flags: Option<String>,
    },
    Abs,
    Coalesce,
    IsNan,
    /// Whether a list holds any of the (constant) needles.
    ArrayHasAny {
        needles: ArrayRef,
    },
    /// Whether a list holds every needle.
    ArrayHasAll {
        needles: ArrayRef,
    },
    /// The number of items of a list.
    ArrayLength,
    /// `list[index]`, 1-based.
    ArrayElement,
    /// `struct['name']`.
    GetField {
        name: String,
    },
    /// A JSON function over JSON text.
    Json(JsonFunc),
    /// A string function (`concat`, `replace`, `split_part`, ...).
    Str(StrFunc),
    /// A math function (`round`, `sqrt`, `power`, ...).
    Math(MathFunc),
    /// `nullif`, `nvl2`, `greatest`, `least`.
    Cond(CondFunc),
    /// `date_part`, `date_trunc`.
    Time(TimeFunc),
}

fn arg(values: &[Value], i: usize) -> Result<&Value> {
    values
        .get(i)
        .ok_or_else(|| Error::Type(format!("missing function argument {}", i + 1)))
}

fn wrong_type(what: &str, dt: &DataType) -> Error {
    Error::Type(format!("{what} does not accept {dt} values"))
}

impl Func {
    pub(crate) fn invoke(&self, values: &[Value], rows: usize) -> Result<Value> {
        match self {
            Func::Lower => arg(values, 0)?.map(|a| case_map(a, false)),
            Func::Upper => arg(values, 0)?.map(|a| case_map(a, true)),
            Func::CharLength => arg(values, 0)?.map(char_length),
            Func::StartsWith => bool_kernel(values, like::starts_with),
            Func::EndsWith => bool_kernel(values, like::ends_with),
            Func::Contains => bool_kernel(values, like::contains),
            Func::RegexpLike { pattern, flags } => arg(values, 0)?.map(|a| regexp_like(a, pattern, flags.as_deref())),
            Func::RegexpMatch { pattern, flags } => arg(values, 0)?.map(|a| {
                let pattern = Scalar::new(cast_like(a, StringArray::from(vec![pattern.as_str()]))?);
                let flags = match flags {
                    Some(f) => Some(Scalar::new(cast_like(a, StringArray::from(vec![f.as_str()]))?)),
                    None => None,
                };
                Ok(regexp_match(a.as_ref(), &pattern, flags.as_ref().map(|f| f as _))?)
            }),
            Func::Abs => arg(values, 0)?.map(abs),
            Func::IsNan => arg(values, 0)?.map(is_nan),
            Func::Coalesce => coalesce(values, rows),
            Func::ArrayHasAny { needles } => arg(values, 0)?.map(|a| array_has(a, needles, false)),
            Func::ArrayHasAll { needles } => arg(values, 0)?.map(|a| array_has(a, needles, true)),
            Func::ArrayLength => arg(values, 0)?.map(array_length),
            Func::ArrayElement => nested::array_element(arg(values, 0)?, arg(values, 1)?, rows),
            Func::GetField { name } => nested::get_field(arg(values, 0)?, name),
            Func::Json(f) => f.invoke(values, rows),
            Func::Str(f) => f.invoke(values, rows),
            Func::Math(f) => f.invoke(values, rows),
            Func::Cond(f) => f.invoke(values, rows),
            Func::Time(f) => f.invoke(values),
        }
    }
}

/// A one-row list of `item` values (an array literal).
pub(crate) fn make_list(item: &DataType, values: &[ArrayRef]) -> Result<ArrayRef> {
    let field = Arc::new(arrow_schema::Field::new("item", item.clone(), true));
    let refs: Vec<&dyn Array> = values.iter().map(|a| a.as_ref()).collect();
    let flat = if refs.is_empty() {
        arrow_array::new_empty_array(item)
    } else {
        arrow_select::concat::concat(&refs)?
    };
    let offsets = arrow_buffer::OffsetBuffer::from_lengths([flat.len()]);
    Ok(Arc::new(arrow_array::ListArray::try_new(field, offsets, flat, None)?))
}

/// `v` (one value) as a one-element array of `item`.
pub(crate) fn cast_items(v: &ArrayRef, item: &DataType) -> Result<ArrayRef> {
    Ok(arrow_cast::cast(v, item)?)
}

/// The items of a one-row list constant, as `item` values.
pub(crate) fn list_items(v: &ArrayRef, item: &DataType) -> Result<ArrayRef> {
    let items = match v.data_type() {
        DataType::List(_) => v.as_list::<i32>().value(0),
        DataType::LargeList(_) => v.as_list::<i64>().value(0),
        other => return Err(Error::Type(format!("expected a list constant, got {other}"))),
    };
    Ok(arrow_cast::cast(&items, item)?)
}

/// Per row: does the list hold any (or, with `all`, every) of `needles`? Null lists give null;
/// null needles and null items never match.
fn array_has(a: &ArrayRef, needles: &ArrayRef, all: bool) -> Result<ArrayRef> {
    let (values, offsets): (ArrayRef, Vec<usize>) = match a.data_type() {
        DataType::List(_) => {
            let l = a.as_list::<i32>();
            (
                l.values().clone(),
                l.value_offsets().iter().map(|o| *o as usize).collect(),
            )
        }
        DataType::LargeList(_) => {
            let l = a.as_list::<i64>();
            (
                l.values().clone(),
                l.value_offsets().iter().map(|o| *o as usize).collect(),
            )
        }
        other => return Err(Error::Type(format!("expected a list, got {other}"))),
    };
    let rows = a.len();
    let mut hits: Vec<Vec<bool>> = Vec::new();
    for i in 0..needles.len() {
        if needles.is_null(i) {
            hits.push(vec![false; rows]);
            continue;
        }
        let needle = Scalar::new(needles.slice(i, 1));
        let eq = arrow_ord::cmp::eq(&values, &needle)?;
        let row_hits = (0..rows)
            .map(|r| (offsets[r]..offsets[r + 1]).any(|j| eq.is_valid(j) && eq.value(j)))
            .collect();
        hits.push(row_hits);
    }
    let out: BooleanArray = (0..rows)
        .map(|r| {
            if a.is_null(r) {
                None
            } else if all {
                Some(hits.iter().all(|h| h[r]))
            } else {
                Some(hits.iter().any(|h| h[r]))
            }
        })
        .collect();
    Ok(Arc::new(out))
}

fn array_length(a: &ArrayRef) -> Result<ArrayRef> {
    let lens: arrow_array::UInt64Array = match a.data_type() {
        DataType::List(_) => a.as_list::<i32>().iter().map(|v| v.map(|x| x.len() as u64)).collect(),
        DataType::LargeList(_) => a.as_list::<i64>().iter().map(|v| v.map(|x| x.len() as u64)).collect(),
        DataType::FixedSizeList(_, n) => {
            let l = a.as_fixed_size_list();
            (0..l.len()).map(|i| l.is_valid(i).then_some(*n as u64)).collect()
        }
        other => return Err(Error::Type(format!("expected a list, got {other}"))),
    };
    Ok(Arc::new(lens))
}

/// A constant string argument as an array of the same string type as `like`.
fn cast_like(like: &ArrayRef, s: StringArray) -> Result<ArrayRef> {
    Ok(arrow_cast::cast(&s, like.data_type())?)
}

fn bool_kernel(
    values: &[Value],
    f: fn(&dyn arrow_array::Datum, &dyn arrow_array::Datum) -> std::result::Result<BooleanArray, ArrowError>,
) -> Result<Value> {
    datum_op(arg(values, 0)?, arg(values, 1)?, |a, b| {
        f(a, b).map(|x| Arc::new(x) as ArrayRef)
    })
}

fn case_map(a: &ArrayRef, upper: bool) -> Result<ArrayRef> {
    fn run<O: OffsetSizeTrait>(a: &GenericStringArray<O>, upper: bool) -> Result<ArrayRef> {
        if a.values().is_ascii() {
            // ASCII: map the value bytes in one pass and keep offsets and nulls.
            let bytes: Vec<u8> = a
                .values()
                .iter()
                .map(|b| {
                    if upper {
                        b.to_ascii_uppercase()
                    } else {
                        b.to_ascii_lowercase()
                    }
                })
                .collect();
            let out =
                GenericStringArray::<O>::try_new(a.offsets().clone(), Buffer::from_vec(bytes), a.nulls().cloned())?;
            return Ok(Arc::new(out));
        }
        let out: GenericStringArray<O> = a
            .iter()
            .map(|v| v.map(|s| if upper { s.to_uppercase() } else { s.to_lowercase() }))
            .collect();
        Ok(Arc::new(out))
    }
    match a.data_type() {
        DataType::Utf8 => run(a.as_string::<i32>(), upper),
        DataType::LargeUtf8 => run(a.as_string::<i64>(), upper),
        dt => Err(wrong_type(if upper { "upper()" } else { "lower()" }, dt)),
    }
}

/// Length in characters (not bytes), as DataFusion's `length` / `char_length`.
fn char_length(a: &ArrayRef) -> Result<ArrayRef> {
    match a.data_type() {
        DataType::Utf8 => {
            let s = a.as_string::<i32>();
            if s.values().is_ascii() {
                return Ok(arrow_string::length::length(a.as_ref())?);
            }
            Ok(Arc::new(Int32Array::from_unary(s, |v| v.chars().count() as i32)))
        }
        DataType::LargeUtf8 => {
            let s = a.as_string::<i64>();
            if s.values().is_ascii() {
                return Ok(arrow_string::length::length(a.as_ref())?);
            }
            Ok(Arc::new(Int64Array::from_unary(s, |v| v.chars().count() as i64)))
        }
        dt => Err(wrong_type("length()", dt)),
    }
}

fn regexp_like(a: &ArrayRef, pattern: &str, flags: Option<&str>) -> Result<ArrayRef> {
    let out = match a.data_type() {
        DataType::Utf8 => regexp_is_match_scalar(a.as_string::<i32>(), pattern, flags)?,
        DataType::LargeUtf8 => regexp_is_match_scalar(a.as_string::<i64>(), pattern, flags)?,
        DataType::Utf8View => regexp_is_match_scalar(a.as_string_view(), pattern, flags)?,
        dt => return Err(wrong_type("regexp_like()", dt)),
    };
    Ok(Arc::new(out))
}

fn abs(a: &ArrayRef) -> Result<ArrayRef> {
    Ok(match a.data_type() {
        DataType::Int8 => Arc::new(a.as_primitive::<Int8Type>().unary::<_, Int8Type>(i8::wrapping_abs)),
        DataType::Int16 => Arc::new(a.as_primitive::<Int16Type>().unary::<_, Int16Type>(i16::wrapping_abs)),
        DataType::Int32 => Arc::new(a.as_primitive::<Int32Type>().unary::<_, Int32Type>(i32::wrapping_abs)),
        DataType::Int64 => Arc::new(a.as_primitive::<Int64Type>().unary::<_, Int64Type>(i64::wrapping_abs)),
        DataType::UInt8 | DataType::UInt16 | DataType::UInt32 | DataType::UInt64 | DataType::Null => Arc::clone(a),
        DataType::Float16 => {
            let wide = arrow_cast::cast(a.as_ref(), &DataType::Float32)?;
            arrow_cast::cast(&abs(&wide)?, &DataType::Float16)?
        }
        DataType::Float32 => Arc::new(a.as_primitive::<Float32Type>().unary::<_, Float32Type>(f32::abs)),
        DataType::Float64 => Arc::new(a.as_primitive::<Float64Type>().unary::<_, Float64Type>(f64::abs)),
        DataType::Decimal128(p, s) => Arc::new(
            a.as_primitive::<Decimal128Type>()
                .unary::<_, Decimal128Type>(i128::wrapping_abs)
                .with_precision_and_scale(*p, *s)?,
        ),
        dt => return Err(wrong_type("abs()", dt)),
    })
}

fn is_nan(a: &ArrayRef) -> Result<ArrayRef> {
    Ok(Arc::new(match a.data_type() {
        DataType::Float16 => BooleanArray::from_unary(a.as_primitive::<Float16Type>(), |v| v.is_nan()),
        DataType::Float32 => BooleanArray::from_unary(a.as_primitive::<Float32Type>(), f32::is_nan),
        DataType::Float64 => BooleanArray::from_unary(a.as_primitive::<Float64Type>(), f64::is_nan),
        // Integers and decimals are never NaN.
        _ => BooleanArray::new(arrow_buffer::BooleanBuffer::new_unset(a.len()), a.logical_nulls()),
    }))
}

fn coalesce(values: &[Value], rows: usize) -> Result<Value> {
    let mut iter = values.iter();
    let mut acc = iter
        .next()
        .cloned()
        .ok_or_else(|| Error::Type("coalesce() needs an argument".to_string()))?;
    for next in iter {
        match &acc {
            Value::Scalar(s) if s.is_valid(0) => break,
            Value::Scalar(_) => acc = next.clone(),
            Value::Array(a) if a.null_count() == 0 => break,
            Value::Array(a) => {
                let mask = is_not_null(a.as_ref())?;
                let falsy = next.clone().into_array(rows)?;
                acc = Value::Array(zip(&mask, a, &falsy)?);
            }
        }
    }
    Ok(acc)
}
