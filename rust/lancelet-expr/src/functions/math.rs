//! Math functions with pylance 14's (DataFusion's) results. The binder picks each call's
//! floating-point type (`Float32` stays `Float32` where DataFusion keeps it, everything else
//! is `Float64`) and converts the arguments to it; these kernels only compute.

use std::sync::Arc;

use arrow_array::builder::PrimitiveBuilder;
use arrow_array::cast::AsArray;
use arrow_array::types::{Decimal128Type, DecimalType, Float32Type, Float64Type, Int32Type, Int64Type};
use arrow_array::{Array, ArrayRef, ArrowPrimitiveType, PrimitiveArray};
use arrow_schema::DataType;

use super::args::{arg, result_rows, wrap, Ints, Prims};
use crate::error::{Error, Result};
use crate::eval::Value;

/// A function of one floating-point argument, computed in the argument's type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Unary {
    Sqrt,
    Cbrt,
    Exp,
    Ln,
    Log10,
    /// `log(x)`: `ln(x) / ln(10)`, which differs from `log10` in the last bit for some
    /// values, as in pylance.
    Log,
    Log2,
    Sin,
    Cos,
    Tan,
    Asin,
    Acos,
    Atan,
    Sinh,
    Cosh,
    Tanh,
    Asinh,
    Acosh,
    Atanh,
    Cot,
    Degrees,
    Radians,
    /// -1, 0 or 1 (0 for -0.0; NaN stays NaN).
    Signum,
    /// `round(x)`: half away from zero.
    Round,
    /// `trunc(x)`: toward zero; a zero (of either sign) gives +0.0, as in pylance.
    Trunc,
}

/// A bound math function.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum MathFunc {
    Unary(Unary),
    /// `round(x, digits)` on floats; `digits` is `Int32`.
    RoundDigits,
    /// `trunc(x, digits)` on floats; `digits` is `Int32`.
    TruncDigits,
    /// `round` of a `Decimal128(precision, scale)`, half away from zero, to constant `digits`
    /// (result `Decimal128(out_precision, clamp(digits, 0, scale))`) or, when `digits` is
    /// `None`, to the per-row `Int32` second argument (result `Decimal128(out_precision,
    /// scale)`).
    RoundDecimal {
        digits: Option<i32>,
        precision: u8,
        scale: i8,
        out_precision: u8,
    },
    /// `power(x, y)` in `Float64`.
    Power,
    /// `log(base, x)`.
    Log,
    /// `atan2(y, x)`.
    Atan2,
    /// `nanvl(x, y)`: `y` where `x` is NaN.
    Nanvl,
    /// `iszero(x)` on `Float64`.
    IsZero,
    /// `gcd(a, b)` on `Int64`.
    Gcd,
    /// `lcm(a, b)` on `Int64`.
    Lcm,
    /// `factorial(n)` on `Int64`.
    Factorial,
}

/// The floating-point operations, for `f32` and `f64`.
trait Float: Copy + PartialEq {
    fn unary(self, op: Unary) -> Self;
    /// `self` rounded (or truncated) to `digits` decimal places.
    fn at_digits(self, digits: i32, trunc: bool) -> Self;
    fn log_base(self, base: Self) -> Self;
    fn atan2(self, x: Self) -> Self;
    fn is_nan(self) -> bool;
}

macro_rules! float_impl {
    ($t:ty) => {
        impl Float for $t {
            fn unary(self, op: Unary) -> Self {
                match op {
                    Unary::Sqrt => self.sqrt(),
                    Unary::Cbrt => self.cbrt(),
                    Unary::Exp => self.exp(),
                    Unary::Ln => self.ln(),
                    Unary::Log10 => self.log10(),
                    Unary::Log => self.ln() / (10.0 as $t).ln(),
                    Unary::Log2 => self.log2(),
                    Unary::Sin => self.sin(),
                    Unary::Cos => self.cos(),
                    Unary::Tan => self.tan(),
                    Unary::Asin => self.asin(),
                    Unary::Acos => self.acos(),
                    Unary::Atan => self.atan(),
                    Unary::Sinh => self.sinh(),
                    Unary::Cosh => self.cosh(),
                    Unary::Tanh => self.tanh(),
                    Unary::Asinh => self.asinh(),
                    Unary::Acosh => self.acosh(),
                    Unary::Atanh => self.atanh(),
                    Unary::Cot => 1.0 / self.tan(),
                    Unary::Degrees => self.to_degrees(),
                    Unary::Radians => self.to_radians(),
                    Unary::Signum => {
                        if self == 0.0 {
                            0.0
                        } else {
                            self.signum()
                        }
                    }
                    Unary::Round => self.round(),
                    Unary::Trunc => {
                        if self == 0.0 {
                            0.0
                        } else {
                            self.trunc()
                        }
                    }
                }
            }
            fn at_digits(self, digits: i32, trunc: bool) -> Self {
                // Scale, round, scale back, as DataFusion does: digits past the type's range
                // give inf/0 factors and so NaN, as there.
                let factor = (10.0 as $t).powi(digits);
                let scaled = self * factor;
                (if trunc { scaled.trunc() } else { scaled.round() }) / factor
            }
            fn log_base(self, base: Self) -> Self {
                self.ln() / base.ln()
            }
            fn atan2(self, x: Self) -> Self {
                <$t>::atan2(self, x)
            }
            fn is_nan(self) -> bool {
                <$t>::is_nan(self)
            }
        }
    };
}
float_impl!(f32);
float_impl!(f64);

impl MathFunc {
    pub(crate) fn invoke(self, values: &[Value], rows: usize) -> Result<Value> {
        match self {
            MathFunc::Unary(op) => arg(values, 0)?.map(|a| unary(a, op)),
            MathFunc::IsZero => arg(values, 0)?.map(|a| {
                let a = a
                    .as_primitive_opt::<Float64Type>()
                    .ok_or_else(|| Error::Type(format!("iszero() expected Float64, got {}", a.data_type())))?;
                let out: arrow_array::BooleanArray = a.iter().map(|v| v.map(|x| x == 0.0)).collect();
                Ok(Arc::new(out) as ArrayRef)
            }),
            MathFunc::Factorial => arg(values, 0)?.map(factorial),
            _ => {
                let n = result_rows(values, rows);
                let out = match self {
                    MathFunc::RoundDigits | MathFunc::TruncDigits => {
                        let trunc = self == MathFunc::TruncDigits;
                        float_binary::<Int32Type>(
                            values,
                            n,
                            "round()",
                            |x, d| Some(x.at_digits(d, trunc)),
                            |x, d| Some(x.at_digits(d, trunc)),
                        )?
                    }
                    MathFunc::RoundDecimal {
                        digits,
                        precision,
                        scale,
                        out_precision,
                    } => round_decimal(values, n, digits, (precision, scale), out_precision)?,
                    MathFunc::Power => same_float_binary(values, n, "power()", |x: f32, y| x.powf(y), f64::powf)?,
                    MathFunc::Log => {
                        same_float_binary(values, n, "log()", |b, x: f32| x.log_base(b), |b, x| x.log_base(b))?
                    }
                    MathFunc::Atan2 => same_float_binary(values, n, "atan2()", Float::atan2, Float::atan2)?,
                    MathFunc::Nanvl => nanvl(values, n)?,
                    MathFunc::Gcd | MathFunc::Lcm => gcd_lcm(values, n, self == MathFunc::Gcd)?,
                    _ => return Err(Error::Type(format!("{self:?} is not a two-argument function"))),
                };
                Ok(wrap(values, out))
            }
        }
    }
}

fn unary(a: &ArrayRef, op: Unary) -> Result<ArrayRef> {
    Ok(match a.data_type() {
        DataType::Float32 => Arc::new(a.as_primitive::<Float32Type>().unary::<_, Float32Type>(|x| x.unary(op))),
        DataType::Float64 => Arc::new(a.as_primitive::<Float64Type>().unary::<_, Float64Type>(|x| x.unary(op))),
        other => return Err(Error::Type(format!("{op:?} expected a float, got {other}"))),
    })
}

/// `f(x, y)` per row over a float first argument and a second argument of type `B`, NULL
/// when either is NULL.
fn float_binary<B: ArrowPrimitiveType>(
    values: &[Value],
    n: usize,
    what: &str,
    f32_op: impl Fn(f32, B::Native) -> Option<f32>,
    f64_op: impl Fn(f64, B::Native) -> Option<f64>,
) -> Result<ArrayRef> {
    let y = Prims::<B>::new(arg(values, 1)?)?;
    let x = arg(values, 0)?;
    Ok(match x.data_type() {
        DataType::Float32 => {
            let x = Prims::<Float32Type>::new(x)?;
            Arc::new(collect::<Float32Type>(n, |r| f32_op(x.get(r)?, y.get(r)?)))
        }
        DataType::Float64 => {
            let x = Prims::<Float64Type>::new(x)?;
            Arc::new(collect::<Float64Type>(n, |r| f64_op(x.get(r)?, y.get(r)?)))
        }
        other => return Err(Error::Type(format!("{what} expected a float, got {other}"))),
    })
}

/// A function of two floats of the same type.
fn same_float_binary(
    values: &[Value],
    n: usize,
    what: &str,
    f32_op: impl Fn(f32, f32) -> f32,
    f64_op: impl Fn(f64, f64) -> f64,
) -> Result<ArrayRef> {
    match arg(values, 0)?.data_type() {
        DataType::Float32 => float_binary::<Float32Type>(values, n, what, |x, y| Some(f32_op(x, y)), |_, _| None),
        _ => float_binary::<Float64Type>(values, n, what, |_, _| None, |x, y| Some(f64_op(x, y))),
    }
}

fn collect<T: ArrowPrimitiveType>(n: usize, f: impl Fn(usize) -> Option<T::Native>) -> PrimitiveArray<T> {
    let mut b = PrimitiveBuilder::<T>::with_capacity(n);
    for row in 0..n {
        b.append_option(f(row));
    }
    b.finish()
}

fn nanvl(values: &[Value], n: usize) -> Result<ArrayRef> {
    fn run<T: ArrowPrimitiveType>(values: &[Value], n: usize) -> Result<ArrayRef>
    where
        T::Native: Float,
    {
        let (x, y) = (Prims::<T>::new(arg(values, 0)?)?, Prims::<T>::new(arg(values, 1)?)?);
        // NULL only when x is, or x is NaN and y is NULL.
        Ok(Arc::new(collect::<T>(n, |r| {
            let v = x.get(r)?;
            if v.is_nan() {
                y.get(r)
            } else {
                Some(v)
            }
        })))
    }
    match arg(values, 0)?.data_type() {
        DataType::Float32 => run::<Float32Type>(values, n),
        _ => run::<Float64Type>(values, n),
    }
}

fn gcd_u64(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

fn gcd_lcm(values: &[Value], n: usize, gcd: bool) -> Result<ArrayRef> {
    let (a, b) = (Ints::new(arg(values, 0)?)?, Ints::new(arg(values, 1)?)?);
    let mut out = PrimitiveBuilder::<Int64Type>::with_capacity(n);
    for row in 0..n {
        let (Some(x), Some(y)) = (a.get(row), b.get(row)) else {
            out.append_null();
            continue;
        };
        let g = gcd_u64(x.unsigned_abs(), y.unsigned_abs());
        let v = if gcd {
            i64::try_from(g).ok()
        } else {
            // gcd is 0 only when both are 0, and then so is the lcm.
            match x.unsigned_abs().checked_div(g) {
                None => Some(0),
                Some(q) => q.checked_mul(y.unsigned_abs()).and_then(|v| i64::try_from(v).ok()),
            }
        };
        let v = v.ok_or_else(|| {
            Error::InvalidArgument(format!(
                "{}({x}, {y}) overflows a 64-bit integer",
                if gcd { "gcd" } else { "lcm" }
            ))
        })?;
        out.append_value(v);
    }
    Ok(Arc::new(out.finish()))
}

fn factorial(a: &ArrayRef) -> Result<ArrayRef> {
    let a = a
        .as_primitive_opt::<Int64Type>()
        .ok_or_else(|| Error::Type(format!("factorial() expected Int64, got {}", a.data_type())))?;
    Ok(Arc::new(a.try_unary::<_, Int64Type, Error>(|v| {
        if v < 0 {
            return Err(Error::InvalidArgument(format!(
                "factorial({v}): the factorial of a negative number is undefined"
            )));
        }
        (2..=v)
            .try_fold(1i64, |acc, k| acc.checked_mul(k))
            .ok_or_else(|| Error::InvalidArgument(format!("factorial({v}) overflows a 64-bit integer")))
    })?))
}

/// 10^k for k in 0..=38.
fn pow10(k: u32) -> Option<i128> {
    10i128.checked_pow(k)
}

/// `v` (at `scale`) rounded half away from zero to `digits` decimal places, still at
/// `scale`, or `None` when that does not fit in an `i128`.
fn round_scaled(v: i128, scale: i8, digits: i32) -> Option<i128> {
    let drop = i64::from(scale) - i64::from(digits);
    if drop <= 0 {
        return Some(v);
    }
    // |v| < 2^127 < 5 * 10^38: dropping more than 38 digits leaves 0.
    let Some(factor) = u32::try_from(drop).ok().and_then(pow10) else {
        return Some(0);
    };
    let (q, r) = (v / factor, v % factor);
    let q = if r.unsigned_abs() >= factor.unsigned_abs() - r.unsigned_abs() {
        q + v.signum()
    } else {
        q
    };
    q.checked_mul(factor)
}

fn round_decimal(
    values: &[Value],
    n: usize,
    digits: Option<i32>,
    (precision, scale): (u8, i8),
    out_precision: u8,
) -> Result<ArrayRef> {
    let x = Prims::<Decimal128Type>::new(arg(values, 0)?)?;
    let overflow = |v: i128| {
        Error::InvalidArgument(format!(
            "round(): the rounded value of {} does not fit in the result type",
            Decimal128Type::format_decimal(v, precision, scale)
        ))
    };
    let out_scale = match digits {
        Some(d) => d.clamp(0, i32::from(scale.max(0))) as i8,
        None => scale,
    };
    let limit = pow10(u32::from(out_precision)).unwrap_or(i128::MAX);
    let mut out = PrimitiveBuilder::<Decimal128Type>::with_capacity(n);
    let d = match digits {
        Some(_) => None,
        None => Some(Prims::<Int32Type>::new(arg(values, 1)?)?),
    };
    for row in 0..n {
        let digits = match (&d, digits) {
            (_, Some(c)) => Some(c),
            (Some(d), None) => d.get(row),
            (None, None) => None,
        };
        let (Some(v), Some(digits)) = (x.get(row), digits) else {
            out.append_null();
            continue;
        };
        let rounded = round_scaled(v, scale, digits).ok_or_else(|| overflow(v))?;
        // Re-express at the result scale (never finer than the input's).
        let shift = u32::try_from(i32::from(scale) - i32::from(out_scale)).unwrap_or(0);
        let value = rounded / pow10(shift).unwrap_or(1);
        if value.unsigned_abs() >= limit.unsigned_abs() {
            return Err(overflow(v));
        }
        out.append_value(value);
    }
    Ok(Arc::new(
        out.finish().with_precision_and_scale(out_precision, out_scale)?,
    ))
}

#[cfg(test)]
mod tests {
    use super::round_scaled;

    #[test]
    fn decimal_rounding_is_half_away_from_zero() {
        // 1.25 at scale 2.
        assert_eq!(round_scaled(125, 2, 1), Some(130));
        assert_eq!(round_scaled(-125, 2, 1), Some(-130));
        assert_eq!(round_scaled(-124, 2, 1), Some(-120));
        assert_eq!(round_scaled(125, 2, 5), Some(125));
        assert_eq!(round_scaled(125, 2, -1), Some(0));
        assert_eq!(round_scaled(-550, 2, -1), Some(-1000));
        assert_eq!(round_scaled(i128::MAX, 0, i32::MIN), Some(0));
        assert_eq!(round_scaled(i128::MAX, 0, -1), None);
    }
}
