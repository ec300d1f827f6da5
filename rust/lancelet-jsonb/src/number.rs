//! JSON numbers as JSONB keeps them: integers (signed or not) and f64.

use crate::format::tag;

/// A JSON number as JSONB stores it.
///
/// Integers that fit `u64` are [`Number::UInt`], negative ones that fit `i64` are
/// [`Number::Int`]; everything else (fractions, exponents, integers out of range,
/// `NaN` and the infinities) is [`Number::Float`].
///
/// ```
/// use lancelet_jsonb::Number;
/// assert_eq!(Number::UInt(300).to_text(), "300");
/// assert_eq!(Number::Float(1e20).to_text(), "1e+20");
/// assert_eq!(Number::Float(f64::NAN).to_text(), "null");
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Number {
    /// A negative integer (or zero).
    Int(i64),
    /// A non-negative integer.
    UInt(u64),
    /// Anything else, including `NaN` and the infinities.
    Float(f64),
}

impl Number {
    /// The value as an `f64` (integers beyond 2^53 round).
    pub fn as_f64(self) -> f64 {
        match self {
            Number::Int(i) => i as f64,
            Number::UInt(u) => u as f64,
            Number::Float(f) => f,
        }
    }

    /// The value as an `i64` when it is an integer that fits.
    pub fn as_i64(self) -> Option<i64> {
        match self {
            Number::Int(i) => Some(i),
            Number::UInt(u) => i64::try_from(u).ok(),
            Number::Float(_) => None,
        }
    }

    /// Whether it is stored as an integer.
    pub fn is_integer(self) -> bool {
        !matches!(self, Number::Float(_))
    }

    /// The text JSONB prints: integers in decimal, floats by [`crate::write_float`], `NaN`
    /// and the infinities as `null`.
    pub fn to_text(self) -> String {
        let mut out = String::new();
        self.write_text(&mut out);
        out
    }

    /// Appends [`Number::to_text`] to `out`.
    pub fn write_text(self, out: &mut String) {
        match self {
            Number::Int(i) => out.push_str(&i.to_string()),
            Number::UInt(u) => out.push_str(&u.to_string()),
            Number::Float(f) => crate::text::write_float(out, f),
        }
    }

    /// Appends the number's payload (tag and value) in the smallest form Lance writes.
    pub(crate) fn encode(self, out: &mut Vec<u8>) {
        match self {
            Number::Int(0) | Number::UInt(0) => out.push(tag::ZERO),
            Number::UInt(u) => encode_uint(u, out),
            Number::Int(i) if i > 0 => encode_uint(i.unsigned_abs(), out),
            Number::Int(i) => {
                out.push(tag::INT);
                if let Ok(v) = i8::try_from(i) {
                    out.extend_from_slice(&v.to_be_bytes());
                } else if let Ok(v) = i16::try_from(i) {
                    out.extend_from_slice(&v.to_be_bytes());
                } else if let Ok(v) = i32::try_from(i) {
                    out.extend_from_slice(&v.to_be_bytes());
                } else {
                    out.extend_from_slice(&i.to_be_bytes());
                }
            }
            Number::Float(f) if f.is_nan() => out.push(tag::NAN),
            Number::Float(f) if f == f64::INFINITY => out.push(tag::POS_INF),
            Number::Float(f) if f == f64::NEG_INFINITY => out.push(tag::NEG_INF),
            Number::Float(f) => {
                out.push(tag::FLOAT);
                out.extend_from_slice(&f.to_be_bytes());
            }
        }
    }

    /// The length of [`Number::encode`]'s output.
    pub(crate) fn encoded_len(self) -> usize {
        let mut buf = Vec::with_capacity(9);
        self.encode(&mut buf);
        buf.len()
    }

    /// Reads a number payload; `None` unless it is one of the forms Lance writes (tag and
    /// exact width). Decimals (tag `0x70`), which Lance never writes, are refused too.
    pub(crate) fn decode(payload: &[u8]) -> Option<Number> {
        let (&t, value) = payload.split_first()?;
        let n = match (t, value.len()) {
            (tag::ZERO, 0) => Number::UInt(0),
            (tag::NAN, 0) => Number::Float(f64::NAN),
            (tag::POS_INF, 0) => Number::Float(f64::INFINITY),
            (tag::NEG_INF, 0) => Number::Float(f64::NEG_INFINITY),
            (tag::INT, 1) => Number::Int(i64::from(i8::from_be_bytes(value.try_into().ok()?))),
            (tag::INT, 2) => Number::Int(i64::from(i16::from_be_bytes(value.try_into().ok()?))),
            (tag::INT, 4) => Number::Int(i64::from(i32::from_be_bytes(value.try_into().ok()?))),
            (tag::INT, 8) => Number::Int(i64::from_be_bytes(value.try_into().ok()?)),
            (tag::UINT, 1) => Number::UInt(u64::from(*value.first()?)),
            (tag::UINT, 2) => Number::UInt(u64::from(u16::from_be_bytes(value.try_into().ok()?))),
            (tag::UINT, 4) => Number::UInt(u64::from(u32::from_be_bytes(value.try_into().ok()?))),
            (tag::UINT, 8) => Number::UInt(u64::from_be_bytes(value.try_into().ok()?)),
            (tag::FLOAT, 8) => Number::Float(f64::from_be_bytes(value.try_into().ok()?)),
            _ => return None,
        };
        // A signed tag holding a non-negative value (not written by Lance) is the same
        // number as the unsigned form Lance would write for it.
        Some(match n {
            Number::Int(i) if i >= 0 => Number::UInt(i.unsigned_abs()),
            n => n,
        })
    }
}

fn encode_uint(u: u64, out: &mut Vec<u8>) {
    out.push(tag::UINT);
    if let Ok(v) = u8::try_from(u) {
        out.push(v);
    } else if let Ok(v) = u16::try_from(u) {
        out.extend_from_slice(&v.to_be_bytes());
    } else if let Ok(v) = u32::try_from(u) {
        out.extend_from_slice(&v.to_be_bytes());
    } else {
        out.extend_from_slice(&u.to_be_bytes());
    }
}
