//! Argument checking, conversions and result types of the string, math, conditional and
//! date/time functions, following pylance 14 (DataFusion's signatures).

use std::sync::Arc;

use arrow_array::{Array, Float64Array, StringArray};
use arrow_cast::can_cast_types;
use arrow_schema::{DataType, TimeUnit};

use super::{type_error, Binder, Bound};
use crate::coerce::{
    comparison_common, is_comparable, is_decimal, is_int, is_numeric, is_string, is_unsigned_int, logical,
};
use crate::error::Result;
use crate::functions::{CondFunc, DateField, Func, Granularity, MathFunc, StrFunc, TimeFunc, Unary};

/// The one-argument float functions, by name.
fn unary_op(name: &str) -> Option<Unary> {
    Some(match name {
        "sqrt" => Unary::Sqrt,
        "cbrt" => Unary::Cbrt,
        "exp" => Unary::Exp,
        "ln" => Unary::Ln,
        "log10" => Unary::Log10,
        "log2" => Unary::Log2,
        "sin" => Unary::Sin,
        "cos" => Unary::Cos,
        "tan" => Unary::Tan,
        "asin" => Unary::Asin,
        "acos" => Unary::Acos,
        "atan" => Unary::Atan,
        "sinh" => Unary::Sinh,
        "cosh" => Unary::Cosh,
        "tanh" => Unary::Tanh,
        "asinh" => Unary::Asinh,
        "acosh" => Unary::Acosh,
        "atanh" => Unary::Atanh,
        "cot" => Unary::Cot,
        "degrees" => Unary::Degrees,
        "radians" => Unary::Radians,
        "signum" => Unary::Signum,
        _ => return None,
    })
}

/// Whether `name` is one of the functions bound here.
pub(super) fn handles(name: &str) -> bool {
    unary_op(name).is_some()
        || matches!(
            name,
            "concat"
                | "contains_tokens"
                | "concat_ws"
                | "replace"
                | "split_part"
                | "left"
                | "right"
                | "lpad"
                | "rpad"
                | "ltrim"
                | "rtrim"
                | "btrim"
                | "strpos"
                | "instr"
                | "reverse"
                | "repeat"
                | "initcap"
                | "ascii"
                | "chr"
                | "octet_length"
                | "bit_length"
                | "to_hex"
                | "translate"
                | "md5"
                | "round"
                | "trunc"
                | "log"
                | "power"
                | "pow"
                | "atan2"
                | "nanvl"
                | "pi"
                | "iszero"
                | "gcd"
                | "lcm"
                | "factorial"
                | "nullif"
                | "nvl"
                | "ifnull"
                | "nvl2"
                | "greatest"
                | "least"
                | "date_part"
                | "datepart"
                | "date_trunc"
                | "datetrunc"
        )
}

/// The float type a math function computes in: `Float32` stays `Float32`, everything else is
/// `Float64`.
fn float_of(ty: &DataType) -> DataType {
    if ty == &DataType::Float32 {
        DataType::Float32
    } else {
        DataType::Float64
    }
}

/// Whether a value of `ty` makes a two-argument float function compute in `Float64`.
fn is_wide(ty: &DataType) -> bool {
    matches!(ty, DataType::Float64 | DataType::Float16) || is_decimal(ty)
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// Checks the argument count: `min..=max`, `max` `None` for no upper bound.
fn arity(name: &str, args: &[Bound], min: usize, max: Option<usize>) -> Result<()> {
    let n = args.len();
    if n >= min && max.is_none_or(|m| n <= m) {
        return Ok(());
    }
    let expected = match max {
        Some(m) if m == min => format!("{min} argument{}", plural(min)),
        Some(m) if m == min + 1 => format!("{min} or {m} arguments"),
        Some(m) => format!("{min} to {m} arguments"),
        None => format!("at least {min} argument{}", plural(min)),
    };
    Err(type_error(format!("{name}() takes {expected}, got {n}")))
}

impl Binder<'_> {
    /// A string argument: `Utf8` or `LargeUtf8` (views and NULL become `Utf8`).
    fn string_arg(&self, name: &str, b: Bound) -> Result<Bound> {
        let b = self.decode(b)?;
        match &b.ty {
            DataType::Utf8 | DataType::LargeUtf8 => Ok(b),
            DataType::Utf8View | DataType::Null => self.cast_to(b, &DataType::Utf8),
            other => Err(type_error(format!(
                "{name}() needs a string, but {} is {other}",
                b.describe()
            ))),
        }
    }

    /// An argument `concat` / `concat_ws` turn into text: strings as they are, other scalar
    /// values (numbers, booleans, dates, timestamps, binary) cast to `Utf8`.
    fn text_arg(&self, name: &str, b: Bound) -> Result<Bound> {
        let b = self.decode(b)?;
        match &b.ty {
            DataType::Utf8 | DataType::LargeUtf8 => Ok(b),
            ty if !ty.is_nested() && can_cast_types(ty, &DataType::Utf8) => self.cast_to(b, &DataType::Utf8),
            other => Err(type_error(format!(
                "{name}() cannot turn {} of type {other} into text",
                b.describe()
            ))),
        }
    }

    /// An integer argument, as `Int64`.
    fn int_arg(&self, name: &str, b: Bound) -> Result<Bound> {
        let b = self.decode(b)?;
        if !is_int(&b.ty) && b.ty != DataType::Null {
            return Err(type_error(format!(
                "{name}() needs an integer, but {} is {}",
                b.describe(),
                b.ty
            )));
        }
        self.cast_to(b, &DataType::Int64)
    }

    /// A numeric argument, unconverted (NULL becomes `Float64`).
    fn number_arg(&self, name: &str, b: Bound) -> Result<Bound> {
        let b = self.decode(b)?;
        if b.ty == DataType::Null {
            return self.cast_to(b, &DataType::Float64);
        }
        if !is_numeric(&b.ty) {
            return Err(type_error(format!(
                "{name}() needs a number, but {} is {}",
                b.describe(),
                b.ty
            )));
        }
        Ok(b)
    }

    /// A constant string argument (a date part or granularity name).
    fn const_str(&self, name: &str, b: &Bound, what: &str) -> Result<String> {
        b.const_value()
            .filter(|_| logical(&b.ty) == &DataType::Utf8 || b.ty == DataType::LargeUtf8)
            .and_then(|a| arrow_cast::cast(a.as_ref(), &DataType::Utf8).ok())
            .and_then(|a| {
                a.as_any()
                    .downcast_ref::<StringArray>()
                    .filter(|s| s.is_valid(0))
                    .map(|s| s.value(0).to_string())
            })
            .ok_or_else(|| {
                type_error(format!(
                    "the {what} of {name}() must be a constant string, got {}",
                    b.describe()
                ))
            })
    }

    /// The type every argument converts to (NULLs take the others' type).
    fn common_type(&self, name: &str, args: &[Bound]) -> Result<DataType> {
        fold_common_type(
            args,
            |a| {
                if is_comparable(&a.ty) {
                    return Ok(());
                }
                Err(type_error(format!(
                    "{name}() cannot compare values of type {}: {} is one",
                    a.ty,
                    a.describe()
                )))
            },
            |a, earlier| {
                format!(
                    "{name}() arguments must have compatible types, but {} is {} and an earlier one is {earlier}",
                    a.describe(),
                    a.ty
                )
            },
        )
    }

    fn cast_all(&self, args: Vec<Bound>, to: &DataType) -> Result<Vec<Bound>> {
        args.into_iter().map(|a| self.cast_to(a, to)).collect()
    }

    pub(super) fn bind_scalar(&self, name: &str, args: Vec<Bound>) -> Result<Bound> {
        if let Some(op) = unary_op(name) {
            arity(name, &args, 1, Some(1))?;
            let x = self.number_arg(name, first(args)?)?;
            let t = float_of(&x.ty);
            let x = self.cast_to(x, &t)?;
            return self.finish_call(name, Func::Math(MathFunc::Unary(op)), vec![x], t);
        }
        match name {
            "concat" | "concat_ws" => {
                arity(name, &args, if name == "concat" { 1 } else { 2 }, None)?;
                let args = args
                    .into_iter()
                    .map(|a| self.text_arg(name, a))
                    .collect::<Result<Vec<_>>>()?;
                let ty = if args.iter().any(|a| a.ty == DataType::LargeUtf8) {
                    DataType::LargeUtf8
                } else {
                    DataType::Utf8
                };
                let f = if name == "concat" {
                    StrFunc::Concat
                } else {
                    StrFunc::ConcatWs
                };
                self.finish_call(name, Func::Str(f), args, ty)
            }
            "replace" | "translate" => {
                arity(name, &args, 3, Some(3))?;
                let args = args
                    .into_iter()
                    .map(|a| self.string_arg(name, a))
                    .collect::<Result<Vec<_>>>()?;
                let ty = first_type(&args);
                let f = if name == "replace" {
                    StrFunc::Replace
                } else {
                    StrFunc::Translate
                };
                self.finish_call(name, Func::Str(f), args, ty)
            }
            "split_part" => {
                arity(name, &args, 3, Some(3))?;
                let mut it = args.into_iter();
                let (Some(s), Some(d), Some(k)) = (it.next(), it.next(), it.next()) else {
                    return Err(type_error("split_part() takes 3 arguments"));
                };
                let args = vec![
                    self.string_arg(name, s)?,
                    self.string_arg(name, d)?,
                    self.int_arg(name, k)?,
                ];
                let ty = first_type(&args);
                self.finish_call(name, Func::Str(StrFunc::SplitPart), args, ty)
            }
            "left" | "right" | "repeat" | "lpad" | "rpad" => {
                let padding = matches!(name, "lpad" | "rpad");
                arity(name, &args, 2, Some(if padding { 3 } else { 2 }))?;
                let mut it = args.into_iter();
                let (Some(s), Some(k)) = (it.next(), it.next()) else {
                    return Err(type_error(format!("{name}() takes 2 arguments")));
                };
                let mut args = vec![self.string_arg(name, s)?, self.int_arg(name, k)?];
                if let Some(fill) = it.next() {
                    args.push(self.string_arg(name, fill)?);
                }
                let ty = first_type(&args);
                let f = match name {
                    "left" => StrFunc::Left,
                    "right" => StrFunc::Right,
                    "repeat" => StrFunc::Repeat,
                    "lpad" => StrFunc::Lpad,
                    _ => StrFunc::Rpad,
                };
                self.finish_call(name, Func::Str(f), args, ty)
            }
            "contains_tokens" => {
                arity(name, &args, 2, Some(2))?;
                let mut it = args.into_iter();
                let (Some(text), Some(query)) = (it.next(), it.next()) else {
                    return Err(type_error("contains_tokens() takes 2 arguments".to_string()));
                };
                // A list of strings is the union of its elements' tokens (pylance).
                let text = self.decode(text)?;
                let text = match &text.ty {
                    DataType::List(f) | DataType::LargeList(f) | DataType::FixedSizeList(f, _)
                        if is_string(logical(f.data_type())) =>
                    {
                        let item = Arc::new(arrow_schema::Field::new("item", DataType::Utf8, true));
                        self.cast_to(text, &DataType::List(item))?
                    }
                    _ => self.string_arg(name, text)?,
                };
                let query = self.string_arg(name, query)?;
                self.finish_call(
                    name,
                    Func::Str(StrFunc::ContainsTokens),
                    vec![text, query],
                    DataType::Boolean,
                )
            }
            "ltrim" | "rtrim" | "btrim" | "strpos" | "instr" => {
                let position = matches!(name, "strpos" | "instr");
                arity(name, &args, if position { 2 } else { 1 }, Some(2))?;
                let args = args
                    .into_iter()
                    .map(|a| self.string_arg(name, a))
                    .collect::<Result<Vec<_>>>()?;
                let large = first_type(&args) == DataType::LargeUtf8;
                let (f, ty) = match name {
                    "ltrim" => (StrFunc::Ltrim, first_type(&args)),
                    "rtrim" => (StrFunc::Rtrim, first_type(&args)),
                    "btrim" => (StrFunc::Btrim, first_type(&args)),
                    _ if large => (StrFunc::Strpos, DataType::Int64),
                    _ => (StrFunc::Strpos, DataType::Int32),
                };
                self.finish_call(name, Func::Str(f), args, ty)
            }
            "reverse" | "initcap" | "ascii" | "octet_length" | "bit_length" => {
                arity(name, &args, 1, Some(1))?;
                let s = self.string_arg(name, first(args)?)?;
                let large = s.ty == DataType::LargeUtf8;
                let (f, ty) = match name {
                    "reverse" => (StrFunc::Reverse, s.ty.clone()),
                    "initcap" => (StrFunc::Initcap, s.ty.clone()),
                    "ascii" => (StrFunc::Ascii, DataType::Int32),
                    "octet_length" => (StrFunc::OctetLength, length_type(large)),
                    _ => (StrFunc::BitLength, length_type(large)),
                };
                self.finish_call(name, Func::Str(f), vec![s], ty)
            }
            "chr" => {
                arity(name, &args, 1, Some(1))?;
                let n = self.int_arg(name, first(args)?)?;
                self.finish_call(name, Func::Str(StrFunc::Chr), vec![n], DataType::Utf8)
            }
            "to_hex" => {
                arity(name, &args, 1, Some(1))?;
                let n = self.decode(first(args)?)?;
                let to = if is_unsigned_int(&n.ty) {
                    DataType::UInt64
                } else if is_int(&n.ty) || n.ty == DataType::Null {
                    DataType::Int64
                } else {
                    return Err(type_error(format!(
                        "to_hex() needs an integer, but {} is {}",
                        n.describe(),
                        n.ty
                    )));
                };
                let n = self.cast_to(n, &to)?;
                self.finish_call(name, Func::Str(StrFunc::ToHex), vec![n], DataType::Utf8)
            }
            "md5" => {
                arity(name, &args, 1, Some(1))?;
                let s = self.decode(first(args)?)?;
                let s = match &s.ty {
                    DataType::Utf8 | DataType::LargeUtf8 | DataType::Binary | DataType::LargeBinary => s,
                    DataType::Utf8View | DataType::Null => self.cast_to(s, &DataType::Utf8)?,
                    DataType::BinaryView | DataType::FixedSizeBinary(_) => self.cast_to(s, &DataType::Binary)?,
                    other => {
                        return Err(type_error(format!(
                            "md5() needs a string or binary value, but {} is {other}",
                            s.describe()
                        )))
                    }
                };
                self.finish_call(name, Func::Str(StrFunc::Md5), vec![s], DataType::Utf8)
            }
            "round" | "trunc" => self.bind_round(name, args),
            "log" | "atan2" | "nanvl" | "power" | "pow" => {
                if name == "log" && args.len() == 1 {
                    let x = self.number_arg(name, first(args)?)?;
                    let t = float_of(&x.ty);
                    let x = self.cast_to(x, &t)?;
                    return self.finish_call(name, Func::Math(MathFunc::Unary(Unary::Log)), vec![x], t);
                }
                arity(name, &args, if name == "log" { 1 } else { 2 }, Some(2))?;
                let args = args
                    .into_iter()
                    .map(|a| self.number_arg(name, a))
                    .collect::<Result<Vec<_>>>()?;
                let any_wide = args.iter().any(|a| is_wide(&a.ty));
                let any_f32 = args.iter().any(|a| a.ty == DataType::Float32);
                // DataFusion's signatures: `power` is Float64; `atan2` and `nanvl` compute in
                // Float32 unless an argument is Float64 (or decimal); `log` in Float32 only
                // when an argument is Float32 and none is wider.
                let t = match name {
                    "power" | "pow" => DataType::Float64,
                    "log" if any_f32 && !any_wide => DataType::Float32,
                    "log" => DataType::Float64,
                    _ if any_wide => DataType::Float64,
                    _ => DataType::Float32,
                };
                let args = self.cast_all(args, &t)?;
                let f = match name {
                    "log" => MathFunc::Log,
                    "atan2" => MathFunc::Atan2,
                    "nanvl" => MathFunc::Nanvl,
                    _ => MathFunc::Power,
                };
                self.finish_call(name, Func::Math(f), args, t)
            }
            "pi" => {
                arity(name, &args, 0, Some(0))?;
                let expr = crate::ast::Expr::Function {
                    name: name.to_string(),
                    args: vec![],
                };
                Ok(Bound::constant(
                    Arc::new(Float64Array::from(vec![std::f64::consts::PI])),
                    expr,
                ))
            }
            "iszero" => {
                arity(name, &args, 1, Some(1))?;
                let x = self.number_arg(name, first(args)?)?;
                let x = self.cast_to(x, &DataType::Float64)?;
                self.finish_call(name, Func::Math(MathFunc::IsZero), vec![x], DataType::Boolean)
            }
            "gcd" | "lcm" | "factorial" => {
                arity(
                    name,
                    &args,
                    if name == "factorial" { 1 } else { 2 },
                    Some(if name == "factorial" { 1 } else { 2 }),
                )?;
                let args = args
                    .into_iter()
                    .map(|a| self.int_arg(name, a))
                    .collect::<Result<Vec<_>>>()?;
                let f = match name {
                    "gcd" => MathFunc::Gcd,
                    "lcm" => MathFunc::Lcm,
                    _ => MathFunc::Factorial,
                };
                self.finish_call(name, Func::Math(f), args, DataType::Int64)
            }
            "nvl" | "ifnull" => {
                arity(name, &args, 2, Some(2))?;
                self.bind_function("coalesce", args)
            }
            "nullif" | "greatest" | "least" => {
                if name == "nullif" {
                    arity(name, &args, 2, Some(2))?;
                } else {
                    arity(name, &args, 1, None)?;
                }
                let args = args.into_iter().map(|a| self.decode(a)).collect::<Result<Vec<_>>>()?;
                let t = self.common_type(name, &args)?;
                let args = self.cast_all(args, &t)?;
                let f = match name {
                    "nullif" => CondFunc::NullIf,
                    "greatest" => CondFunc::Greatest,
                    _ => CondFunc::Least,
                };
                self.finish_call(name, Func::Cond(f), args, t)
            }
            "nvl2" => {
                arity(name, &args, 3, Some(3))?;
                let mut it = args.into_iter();
                let (Some(test), Some(a), Some(b)) = (it.next(), it.next(), it.next()) else {
                    return Err(type_error("nvl2() takes 3 arguments"));
                };
                let test = self.decode(test)?;
                let values = vec![self.decode(a)?, self.decode(b)?];
                // pylance brings all three arguments to one type; where lancelet has no common
                // type with the tested value (say a number and strings), the two results
                // decide.
                let all = [self.rebind(&test), self.rebind(&values[0]), self.rebind(&values[1])];
                let t = match self.common_type(name, &all) {
                    Ok(t) => t,
                    Err(_) => self.common_type(name, &values)?,
                };
                let mut args = vec![test];
                args.extend(self.cast_all(values, &t)?);
                self.finish_call(name, Func::Cond(CondFunc::Nvl2), args, t)
            }
            "date_part" | "datepart" | "date_trunc" | "datetrunc" => self.bind_date(name, args),
            _ => Err(type_error(format!("{name}() is not a scalar function"))),
        }
    }

    fn bind_round(&self, name: &str, args: Vec<Bound>) -> Result<Bound> {
        arity(name, &args, 1, Some(2))?;
        let mut it = args.into_iter();
        let Some(x) = it.next() else {
            return Err(type_error(format!("{name}() takes 1 or 2 arguments")));
        };
        let x = self.number_arg(name, x)?;
        let digits = match it.next() {
            Some(d) => {
                let d = self.decode(d)?;
                if !is_int(&d.ty) && d.ty != DataType::Null {
                    return Err(type_error(format!(
                        "the number of digits of {name}() must be an integer, but {} is {}",
                        d.describe(),
                        d.ty
                    )));
                }
                Some(self.cast_to(d, &DataType::Int32)?)
            }
            None => None,
        };
        if name == "round" && is_decimal(&x.ty) {
            let DataType::Decimal128(precision, scale) = x.ty else {
                return Err(type_error(format!(
                    "round() of {} values is not supported; CAST {} to DECIMAL(38, s) or DOUBLE",
                    x.ty,
                    x.describe()
                )));
            };
            if scale < 0 {
                return Err(type_error(format!(
                    "round() of {} (a negative scale) is not supported",
                    x.ty
                )));
            }
            let constant = match &digits {
                None => Some(0),
                Some(d) => d
                    .const_value()
                    .and_then(|v| v.as_any().downcast_ref::<arrow_array::Int32Array>())
                    .filter(|v| v.is_valid(0))
                    .map(|v| v.value(0)),
            };
            if digits.as_ref().is_some_and(|d| d.is_null_const()) {
                // NULL digits: NULL, typed as rounding to whole numbers (as pylance does).
                let expr = crate::ast::Expr::Function {
                    name: name.to_string(),
                    args: [Some(&x), digits.as_ref()]
                        .into_iter()
                        .flatten()
                        .map(|a| a.expr.clone())
                        .collect(),
                };
                let ty = DataType::Decimal128(round_precision(precision, scale, 0), 0);
                return Ok(Bound::constant(arrow_array::new_null_array(&ty, 1), expr));
            }
            let Some(d) = constant else {
                let out_precision = (precision + 1).min(38);
                let f = MathFunc::RoundDecimal {
                    digits: None,
                    precision,
                    scale,
                    out_precision,
                };
                let mut args = vec![x];
                args.extend(digits);
                let ty = DataType::Decimal128(out_precision, scale);
                return self.finish_call(name, Func::Math(f), args, ty);
            };
            let out_precision = round_precision(precision, scale, d);
            let f = MathFunc::RoundDecimal {
                digits: Some(d),
                precision,
                scale,
                out_precision,
            };
            let ty = DataType::Decimal128(out_precision, d.clamp(0, i32::from(scale)) as i8);
            // The constant digits are part of the function; only the value is evaluated.
            let mut args = vec![x];
            args.extend(digits);
            return self.finish_some(name, Func::Math(f), args, 0, ty);
        }
        let t = float_of(&x.ty);
        let x = self.cast_to(x, &t)?;
        match digits {
            None => {
                let op = if name == "round" { Unary::Round } else { Unary::Trunc };
                self.finish_call(name, Func::Math(MathFunc::Unary(op)), vec![x], t)
            }
            Some(d) => {
                let f = if name == "round" {
                    MathFunc::RoundDigits
                } else {
                    MathFunc::TruncDigits
                };
                self.finish_call(name, Func::Math(f), vec![x, d], t)
            }
        }
    }

    fn bind_date(&self, name: &str, args: Vec<Bound>) -> Result<Bound> {
        arity(name, &args, 2, Some(2))?;
        let mut it = args.into_iter();
        let (Some(what), Some(t)) = (it.next(), it.next()) else {
            return Err(type_error(format!("{name}() takes 2 arguments")));
        };
        let t = self.decode(t)?;
        let part = matches!(name, "date_part" | "datepart");
        let label = if part { "field" } else { "granularity" };
        let unit = self.const_str(name, &what, label)?;
        let temporal = matches!(t.ty, DataType::Date32 | DataType::Date64 | DataType::Timestamp(_, _));
        if !temporal && t.ty != DataType::Null {
            return Err(type_error(format!(
                "{name}() needs a date or timestamp, but {} is {}",
                t.describe(),
                t.ty
            )));
        }
        if part {
            let field = DateField::parse(&unit).ok_or_else(|| {
                type_error(format!(
                    "{name}(): unknown field '{unit}'; use one of: {}",
                    DateField::NAMES
                ))
            })?;
            let t = if t.ty == DataType::Null {
                self.cast_to(t, &DataType::Timestamp(TimeUnit::Microsecond, None))?
            } else {
                t
            };
            let args = vec![what, t];
            return self.finish_some(name, Func::Time(TimeFunc::Part(field)), args, 1, field.data_type());
        }
        let g = Granularity::parse(&unit).ok_or_else(|| {
            type_error(format!(
                "{name}(): unknown granularity '{unit}'; use one of: {}",
                Granularity::NAMES
            ))
        })?;
        // Dates are truncated as nanosecond timestamps, as in pylance.
        let t = if matches!(t.ty, DataType::Timestamp(_, _)) {
            t
        } else {
            self.cast_to(t, &DataType::Timestamp(TimeUnit::Nanosecond, None))?
        };
        let ty = t.ty.clone();
        self.finish_some(name, Func::Time(TimeFunc::Trunc(g)), vec![what, t], 1, ty)
    }

    /// A call whose function captured its constant arguments: all of `args` are printed,
    /// only `args[evaluated]` is evaluated.
    fn finish_some(&self, name: &str, func: Func, args: Vec<Bound>, evaluated: usize, ty: DataType) -> Result<Bound> {
        let expr = crate::ast::Expr::Function {
            name: name.to_string(),
            args: args.iter().map(|a| a.expr.clone()).collect(),
        };
        let Some(value) = args.get(evaluated) else {
            return Err(type_error(format!("{name}(): missing argument {}", evaluated + 1)));
        };
        let node = crate::eval::Node::Call {
            func,
            args: vec![value.node.clone()],
        };
        self.finish(node, ty, expr, &[value])
    }
}

/// The precision of `round(Decimal128(precision, scale), digits)` for constant `digits`, as
/// pylance 14 types it: unchanged when nothing is rounded off, else room for one more integer
/// digit (the carry of 9.9 -> 10) but never less than before.
fn round_precision(precision: u8, scale: i8, digits: i32) -> u8 {
    if digits >= i32::from(scale) {
        return precision;
    }
    let kept = digits.clamp(0, i32::from(scale));
    let needed = i32::from(precision) - i32::from(scale) + kept + 1;
    needed.clamp(i32::from(precision), 38) as u8
}

fn first(args: Vec<Bound>) -> Result<Bound> {
    args.into_iter()
        .next()
        .ok_or_else(|| type_error("missing function argument"))
}

fn first_type(args: &[Bound]) -> DataType {
    args.first().map_or(DataType::Utf8, |a| a.ty.clone())
}

fn length_type(large: bool) -> DataType {
    if large {
        DataType::Int64
    } else {
        DataType::Int32
    }
}

/// The one type `args` convert to, left to right (NULLs take the others' type): each
/// non-NULL argument is first passed to `check`, and a pair with no common type is a type
/// error worded by `conflict(argument, earlier type)`.
pub(super) fn fold_common_type(
    args: &[Bound],
    check: impl Fn(&Bound) -> Result<()>,
    conflict: impl Fn(&Bound, &DataType) -> String,
) -> Result<DataType> {
    let mut target = DataType::Null;
    for a in args {
        if a.ty == DataType::Null {
            continue;
        }
        check(a)?;
        target = if target == DataType::Null {
            a.ty.clone()
        } else {
            comparison_common(&target, &a.ty).ok_or_else(|| type_error(conflict(a, &target)))?
        };
    }
    Ok(target)
}
