//! Type rules: which types mix, and what they become.
//!
//! These follow DataFusion's coercion (which Lance uses), plus Lance's own rule for comparing a
//! column with a literal: the literal is converted to the column's type when that conversion is
//! allowed, and the comparison is rejected otherwise (see [`const_coercible`]).

use arrow_schema::{DataType, TimeUnit};

/// The type an operand behaves as: dictionary-encoded values compare and match like their
/// value type.
pub(crate) fn logical(dt: &DataType) -> &DataType {
    match dt {
        DataType::Dictionary(_, v) => v.as_ref(),
        d => d,
    }
}

pub(crate) fn is_signed_int(dt: &DataType) -> bool {
    matches!(dt, DataType::Int8 | DataType::Int16 | DataType::Int32 | DataType::Int64)
}

pub(crate) fn is_unsigned_int(dt: &DataType) -> bool {
    matches!(
        dt,
        DataType::UInt8 | DataType::UInt16 | DataType::UInt32 | DataType::UInt64
    )
}

pub(crate) fn is_int(dt: &DataType) -> bool {
    is_signed_int(dt) || is_unsigned_int(dt)
}

pub(crate) fn is_float(dt: &DataType) -> bool {
    matches!(dt, DataType::Float16 | DataType::Float32 | DataType::Float64)
}

pub(crate) fn is_decimal(dt: &DataType) -> bool {
    matches!(dt, DataType::Decimal128(_, _) | DataType::Decimal256(_, _))
}

pub(crate) fn is_numeric(dt: &DataType) -> bool {
    is_int(dt) || is_float(dt) || is_decimal(dt)
}

pub(crate) fn is_string(dt: &DataType) -> bool {
    matches!(dt, DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View)
}

pub(crate) fn is_binary(dt: &DataType) -> bool {
    matches!(
        dt,
        DataType::Binary | DataType::LargeBinary | DataType::BinaryView | DataType::FixedSizeBinary(_)
    )
}

pub(crate) fn is_date(dt: &DataType) -> bool {
    matches!(dt, DataType::Date32 | DataType::Date64)
}

/// Types the comparison kernels order (no structs, lists or maps).
pub(crate) fn is_comparable(dt: &DataType) -> bool {
    let dt = logical(dt);
    !dt.is_nested() && !matches!(dt, DataType::Dictionary(_, _) | DataType::RunEndEncoded(_, _))
}

fn int_bits(dt: &DataType) -> u32 {
    match dt {
        DataType::Int8 | DataType::UInt8 => 8,
        DataType::Int16 | DataType::UInt16 => 16,
        DataType::Int32 | DataType::UInt32 => 32,
        _ => 64,
    }
}

fn signed_of_bits(bits: u32) -> DataType {
    match bits {
        8 => DataType::Int8,
        16 => DataType::Int16,
        32 => DataType::Int32,
        _ => DataType::Int64,
    }
}

fn unsigned_of_bits(bits: u32) -> DataType {
    match bits {
        8 => DataType::UInt8,
        16 => DataType::UInt16,
        32 => DataType::UInt32,
        _ => DataType::UInt64,
    }
}

/// Decimal digits needed for every value of an integer type.
fn int_digits(dt: &DataType) -> u8 {
    match dt {
        DataType::Int8 | DataType::UInt8 => 3,
        DataType::Int16 | DataType::UInt16 => 5,
        DataType::Int32 | DataType::UInt32 => 10,
        DataType::Int64 => 19,
        _ => 20,
    }
}

/// The decimal type that holds every value of an integer type.
pub(crate) fn int_as_decimal(dt: &DataType) -> DataType {
    DataType::Decimal128(int_digits(dt), 0)
}

fn decimal_parts(dt: &DataType) -> Option<(u8, i8, bool)> {
    match dt {
        DataType::Decimal128(p, s) => Some((*p, *s, false)),
        DataType::Decimal256(p, s) => Some((*p, *s, true)),
        _ => None,
    }
}

fn decimal_common(a: &DataType, b: &DataType) -> Option<DataType> {
    let (p1, s1, w1) = decimal_parts(a)?;
    let (p2, s2, w2) = decimal_parts(b)?;
    let scale = s1.max(s2);
    let int_digits = (i16::from(p1) - i16::from(s1)).max(i16::from(p2) - i16::from(s2));
    let wide = w1 || w2;
    let max = if wide { 76 } else { 38 };
    let precision = (int_digits + i16::from(scale)).clamp(1, max) as u8;
    Some(if wide {
        DataType::Decimal256(precision, scale)
    } else {
        DataType::Decimal128(precision, scale)
    })
}

/// The type two numeric operands are converted to before arithmetic or comparison
/// (DataFusion's numeric coercion): the wider integer, a signed type wide enough for a
/// signed/unsigned mix (`Decimal128(20, 0)` for `Int64` with `UInt64`), a float when either
/// side is a float, a decimal for decimals and integers.
pub(crate) fn numeric_common(a: &DataType, b: &DataType) -> Option<DataType> {
    if a == b {
        return Some(a.clone());
    }
    if !is_numeric(a) || !is_numeric(b) {
        return None;
    }
    if is_float(a) || is_float(b) {
        return Some(
            if matches!(a, DataType::Float64) || matches!(b, DataType::Float64) || is_decimal(a) || is_decimal(b) {
                DataType::Float64
            } else {
                DataType::Float32
            },
        );
    }
    if is_decimal(a) || is_decimal(b) {
        let a = if is_int(a) { int_as_decimal(a) } else { a.clone() };
        let b = if is_int(b) { int_as_decimal(b) } else { b.clone() };
        return decimal_common(&a, &b);
    }
    let (ab, bb) = (int_bits(a), int_bits(b));
    match (is_signed_int(a), is_signed_int(b)) {
        (true, true) => Some(signed_of_bits(ab.max(bb))),
        (false, false) => Some(unsigned_of_bits(ab.max(bb))),
        (a_signed, _) => {
            let (signed_bits, unsigned_bits) = if a_signed { (ab, bb) } else { (bb, ab) };
            if signed_bits > unsigned_bits {
                Some(signed_of_bits(signed_bits))
            } else if unsigned_bits < 64 {
                Some(signed_of_bits(unsigned_bits * 2))
            } else {
                Some(DataType::Decimal128(20, 0))
            }
        }
    }
}

fn finer(a: TimeUnit, b: TimeUnit) -> TimeUnit {
    let rank = |u: TimeUnit| match u {
        TimeUnit::Second => 0,
        TimeUnit::Millisecond => 1,
        TimeUnit::Microsecond => 2,
        TimeUnit::Nanosecond => 3,
    };
    if rank(a) >= rank(b) {
        a
    } else {
        b
    }
}

/// The type two non-literal operands are converted to before comparing them, or `None` when
/// they cannot be compared. Strings never compare with numbers.
pub(crate) fn comparison_common(a: &DataType, b: &DataType) -> Option<DataType> {
    let (a, b) = (logical(a), logical(b));
    if a == b {
        return Some(a.clone());
    }
    if is_numeric(a) && is_numeric(b) {
        return numeric_common(a, b);
    }
    if is_string(a) && is_string(b) {
        return Some(
            if matches!(a, DataType::LargeUtf8) || matches!(b, DataType::LargeUtf8) {
                DataType::LargeUtf8
            } else if matches!(a, DataType::Utf8View) || matches!(b, DataType::Utf8View) {
                DataType::Utf8View
            } else {
                DataType::Utf8
            },
        );
    }
    if is_binary(a) && is_binary(b) {
        return Some(
            if matches!(a, DataType::LargeBinary) || matches!(b, DataType::LargeBinary) {
                DataType::LargeBinary
            } else if matches!(a, DataType::BinaryView) || matches!(b, DataType::BinaryView) {
                DataType::BinaryView
            } else {
                DataType::Binary
            },
        );
    }
    match (a, b) {
        (DataType::Date32, DataType::Date64) | (DataType::Date64, DataType::Date32) => Some(DataType::Date64),
        (d, t @ DataType::Timestamp(_, _)) | (t @ DataType::Timestamp(_, _), d) if is_date(d) => Some(t.clone()),
        (DataType::Timestamp(u1, tz1), DataType::Timestamp(u2, tz2)) => Some(DataType::Timestamp(
            finer(*u1, *u2),
            tz1.clone().or_else(|| tz2.clone()),
        )),
        _ => None,
    }
}

/// Whether a constant of type `from` may be converted to `to` so that it can be compared with
/// (or matched against) a column of type `to`. This is Lance's literal coercion: integers to
/// any integer type they fit in and to floats and decimals, floats to floats, strings between
/// string types, dates and timestamps between temporal types. Floats never become integers and
/// strings never become numbers or dates.
pub(crate) fn const_coercible(from: &DataType, to: &DataType) -> bool {
    let to = logical(to);
    if from == to || matches!(from, DataType::Null) {
        return true;
    }
    if is_int(from) {
        return is_int(to) || is_float(to) || is_decimal(to);
    }
    if is_float(from) {
        return is_float(to);
    }
    if is_string(from) {
        return is_string(to);
    }
    if is_binary(from) {
        return is_binary(to);
    }
    if is_date(from) {
        return is_date(to) || matches!(to, DataType::Timestamp(_, _));
    }
    if matches!(from, DataType::Timestamp(_, _)) {
        return matches!(to, DataType::Timestamp(_, _));
    }
    if let (Some((_, s1, _)), Some((_, s2, _))) = (decimal_parts(from), decimal_parts(to)) {
        return s2 >= s1;
    }
    if is_decimal(from) {
        return is_float(to);
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numeric_coercion() {
        use DataType::*;
        assert_eq!(numeric_common(&Int8, &Int32), Some(Int32));
        assert_eq!(numeric_common(&UInt8, &Int8), Some(Int16));
        assert_eq!(numeric_common(&UInt32, &Int64), Some(Int64));
        assert_eq!(numeric_common(&UInt64, &Int64), Some(Decimal128(20, 0)));
        assert_eq!(numeric_common(&Int64, &Float32), Some(Float32));
        assert_eq!(numeric_common(&Float32, &Float64), Some(Float64));
        assert_eq!(numeric_common(&Decimal128(10, 2), &Int32), Some(Decimal128(12, 2)));
        assert_eq!(numeric_common(&Decimal128(10, 2), &Float32), Some(Float64));
        assert_eq!(numeric_common(&Utf8, &Int32), None);
    }

    #[test]
    fn comparison_coercion() {
        use DataType::*;
        assert_eq!(comparison_common(&Utf8, &LargeUtf8), Some(LargeUtf8));
        assert_eq!(comparison_common(&Utf8, &Int32), None);
        assert_eq!(
            comparison_common(&Date32, &Timestamp(TimeUnit::Second, None)),
            Some(Timestamp(TimeUnit::Second, None))
        );
        assert_eq!(
            comparison_common(&Dictionary(Box::new(Int32), Box::new(Utf8)), &Utf8),
            Some(Utf8)
        );
    }
}
