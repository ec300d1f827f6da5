//! String functions with pylance 14's (DataFusion's) results: `concat`, `concat_ws`,
//! `replace`, `split_part`, `left`, `right`, `lpad`, `rpad`, `ltrim`, `rtrim`, `btrim`,
//! `strpos`, `reverse`, `repeat`, `initcap`, `ascii`, `chr`, `octet_length`, `bit_length`,
//! `to_hex`, `translate`, `md5` and `contains_tokens`. Lengths and positions count characters
//! (Unicode scalar values), not bytes.

use std::fmt::Write as _;
use std::sync::Arc;

use arrow_array::builder::PrimitiveBuilder;
use arrow_array::cast::AsArray;
use arrow_array::types::{Int32Type, Int64Type, UInt64Type};
use arrow_array::{Array, ArrayRef};
use arrow_schema::DataType;

use super::args::{arg, build_strings, result_rows, too_large, wrap, Ints, Strs, MAX_STRING_BYTES};
use crate::error::{Error, Result};
use crate::eval::Value;

/// A bound string function. The binder has converted every string argument to `Utf8` or
/// `LargeUtf8` and every integer argument to `Int64`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum StrFunc {
    /// `concat(a, ...)`: NULL arguments count as empty strings; never NULL.
    Concat,
    /// `concat_ws(sep, a, ...)`: NULL when `sep` is; NULL arguments are skipped.
    ConcatWs,
    /// `replace(s, from, to)`.
    Replace,
    /// `split_part(s, delimiter, n)`: 1-based, negative counts from the end.
    SplitPart,
    /// `left(s, n)`.
    Left,
    /// `right(s, n)`.
    Right,
    /// `lpad(s, n [, fill])`.
    Lpad,
    /// `rpad(s, n [, fill])`.
    Rpad,
    /// `ltrim(s [, chars])`.
    Ltrim,
    /// `rtrim(s [, chars])`.
    Rtrim,
    /// `btrim(s [, chars])`.
    Btrim,
    /// `strpos(s, sub)` / `instr`: 1-based character position, 0 when absent.
    Strpos,
    /// `reverse(s)`.
    Reverse,
    /// `repeat(s, n)`.
    Repeat,
    /// `initcap(s)`.
    Initcap,
    /// `ascii(s)`: the first character's code point, 0 for ''.
    Ascii,
    /// `chr(n)`.
    Chr,
    /// `octet_length(s)`.
    OctetLength,
    /// `bit_length(s)`.
    BitLength,
    /// `to_hex(n)`: negative numbers as 64-bit two's complement.
    ToHex,
    /// `translate(s, from, to)`.
    Translate,
    /// `md5(s)`: the lower-case hex digest of the UTF-8 bytes (or of binary values).
    Md5,
    /// `contains_tokens(text, query)`: whether `text` (a string, or a list of strings: the
    /// union of its elements) holds every token of `query`, a token being a maximal run of
    /// letters and digits, compared exactly (pylance's function, without an index).
    ContainsTokens,
}

impl StrFunc {
    pub(crate) fn invoke(self, values: &[Value], rows: usize) -> Result<Value> {
        let n = result_rows(values, rows);
        let out = match self {
            StrFunc::Concat => concat(values, n)?,
            StrFunc::ConcatWs => concat_ws(values, n)?,
            StrFunc::Replace => replace(values, n)?,
            StrFunc::SplitPart => split_part(values, n)?,
            StrFunc::Left | StrFunc::Right => left_right(values, n, self == StrFunc::Left)?,
            StrFunc::Lpad | StrFunc::Rpad => pad(values, n, self == StrFunc::Lpad)?,
            StrFunc::Ltrim | StrFunc::Rtrim | StrFunc::Btrim => trim(values, n, self)?,
            StrFunc::Strpos => strpos(values, n)?,
            StrFunc::Reverse => map_str(values, n, "reverse()", |s, buf| buf.extend(s.chars().rev()))?,
            StrFunc::Initcap => map_str(values, n, "initcap()", initcap)?,
            StrFunc::Repeat => repeat(values, n)?,
            StrFunc::Ascii => ascii(values, n)?,
            StrFunc::Chr => chr(values, n)?,
            StrFunc::OctetLength => return arg(values, 0)?.map(|a| Ok(arrow_string::length::length(a.as_ref())?)),
            StrFunc::BitLength => {
                return arg(values, 0)?.map(|a| Ok(arrow_string::length::bit_length(a.as_ref())?));
            }
            StrFunc::ToHex => return arg(values, 0)?.map(to_hex),
            StrFunc::Translate => translate(values, n)?,
            StrFunc::Md5 => return arg(values, 0)?.map(md5_hex),
            StrFunc::ContainsTokens => contains_tokens(values, n)?,
        };
        Ok(wrap(values, out))
    }
}

fn strs(values: &[Value], i: usize) -> Result<Strs<'_>> {
    Strs::new(arg(values, i)?)
}

fn ints(values: &[Value], i: usize) -> Result<Ints<'_>> {
    Ints::new(arg(values, i)?)
}

/// One-string-argument functions that write a new string per row.
fn map_str(values: &[Value], n: usize, what: &str, f: impl Fn(&str, &mut String)) -> Result<ArrayRef> {
    let s = strs(values, 0)?;
    build_strings(n, s.is_large(), what, |row, buf| {
        Ok(match s.get(row) {
            Some(v) => {
                f(v, buf);
                true
            }
            None => false,
        })
    })
}

fn concat(values: &[Value], n: usize) -> Result<ArrayRef> {
    let args = values.iter().map(Strs::new).collect::<Result<Vec<_>>>()?;
    let large = args.iter().any(Strs::is_large);
    build_strings(n, large, "concat()", |row, buf| {
        for a in &args {
            if let Some(v) = a.get(row) {
                buf.push_str(v);
            }
        }
        Ok(true)
    })
}

fn concat_ws(values: &[Value], n: usize) -> Result<ArrayRef> {
    let args = values.iter().map(Strs::new).collect::<Result<Vec<_>>>()?;
    let Some((sep, rest)) = args.split_first() else {
        return Err(Error::Type("concat_ws() needs a separator".to_string()));
    };
    let large = args.iter().any(Strs::is_large);
    build_strings(n, large, "concat_ws()", |row, buf| {
        let Some(sep) = sep.get(row) else { return Ok(false) };
        let mut first = true;
        for v in rest.iter().filter_map(|a| a.get(row)) {
            if !first {
                buf.push_str(sep);
            }
            buf.push_str(v);
            first = false;
        }
        Ok(true)
    })
}

fn replace(values: &[Value], n: usize) -> Result<ArrayRef> {
    let (s, from, to) = (strs(values, 0)?, strs(values, 1)?, strs(values, 2)?);
    build_strings(n, s.is_large(), "replace()", |row, buf| {
        let (Some(s), Some(from), Some(to)) = (s.get(row), from.get(row), to.get(row)) else {
            return Ok(false);
        };
        // An empty pattern matches before every character and at the end.
        let matches = if from.is_empty() {
            s.chars().count() as u128 + 1
        } else if to.len() > from.len() {
            s.matches(from).count() as u128
        } else {
            0
        };
        let bytes = s.len() as u128 + matches * (to.len() as u128);
        if bytes > MAX_STRING_BYTES as u128 {
            return Err(too_large("replace()", bytes));
        }
        if from.is_empty() {
            buf.push_str(to);
            for c in s.chars() {
                buf.push(c);
                buf.push_str(to);
            }
        } else {
            let mut last = 0;
            for (i, m) in s.match_indices(from) {
                buf.push_str(s.get(last..i).unwrap_or_default());
                buf.push_str(to);
                last = i + m.len();
            }
            buf.push_str(s.get(last..).unwrap_or_default());
        }
        Ok(true)
    })
}

fn split_part(values: &[Value], n: usize) -> Result<ArrayRef> {
    let (s, delim, index) = (strs(values, 0)?, strs(values, 1)?, ints(values, 2)?);
    build_strings(n, s.is_large(), "split_part()", |row, buf| {
        let (Some(s), Some(delim), Some(index)) = (s.get(row), delim.get(row), index.get(row)) else {
            return Ok(false);
        };
        if index == 0 {
            return Err(Error::InvalidArgument(
                "split_part(): the field position must not be zero (fields count from 1; negative positions \
                 count from the end)"
                    .to_string(),
            ));
        }
        let part = if delim.is_empty() {
            // The whole string is the only field.
            (index == 1 || index == -1).then_some(s)
        } else if index > 0 {
            usize::try_from(index - 1).ok().and_then(|k| s.split(delim).nth(k))
        } else {
            usize::try_from(index.unsigned_abs() - 1)
                .ok()
                .and_then(|k| s.rsplit(delim).nth(k))
        };
        buf.push_str(part.unwrap_or_default());
        Ok(true)
    })
}

/// The byte offset after the first `chars` characters of `s` (its length when shorter).
fn char_offset(s: &str, chars: u64) -> usize {
    usize::try_from(chars)
        .ok()
        .and_then(|k| s.char_indices().nth(k))
        .map_or(s.len(), |(i, _)| i)
}

fn left_right(values: &[Value], n: usize, left: bool) -> Result<ArrayRef> {
    let (s, count) = (strs(values, 0)?, ints(values, 1)?);
    let what = if left { "left()" } else { "right()" };
    build_strings(n, s.is_large(), what, |row, buf| {
        let (Some(s), Some(k)) = (s.get(row), count.get(row)) else {
            return Ok(false);
        };
        // How many leading characters to keep (left) or drop (right).
        let chars = || s.chars().count() as u64;
        let part = match (left, k >= 0) {
            (true, true) => s.get(..char_offset(s, k.unsigned_abs())),
            (true, false) => s.get(..char_offset(s, chars().saturating_sub(k.unsigned_abs()))),
            (false, true) => s.get(char_offset(s, chars().saturating_sub(k.unsigned_abs()))..),
            (false, false) => s.get(char_offset(s, k.unsigned_abs())..),
        };
        buf.push_str(part.unwrap_or_default());
        Ok(true)
    })
}

fn pad(values: &[Value], n: usize, left: bool) -> Result<ArrayRef> {
    let (s, len) = (strs(values, 0)?, ints(values, 1)?);
    let fill = match values.get(2) {
        Some(v) => Some(Strs::new(v)?),
        None => None,
    };
    let what = if left { "lpad()" } else { "rpad()" };
    build_strings(n, s.is_large(), what, |row, buf| {
        let (Some(s), Some(target)) = (s.get(row), len.get(row)) else {
            return Ok(false);
        };
        let fill = match &fill {
            Some(f) => match f.get(row) {
                Some(f) => f,
                None => return Ok(false),
            },
            None => " ",
        };
        if target <= 0 {
            return Ok(true);
        }
        if target > i64::from(i32::MAX) {
            return Err(Error::InvalidArgument(format!(
                "{what}: the requested length {target} is too large; the most is {}",
                i32::MAX
            )));
        }
        let target = target.unsigned_abs();
        let have = s.chars().count() as u64;
        if have >= target {
            buf.push_str(s.get(..char_offset(s, target)).unwrap_or_default());
            return Ok(true);
        }
        if fill.is_empty() {
            buf.push_str(s);
            return Ok(true);
        }
        let missing = target - have;
        let fill_chars = fill.chars().count() as u64;
        let (cycles, rest) = (missing / fill_chars, missing % fill_chars);
        let tail = char_offset(fill, rest);
        let bytes = s.len() as u128 + u128::from(cycles) * fill.len() as u128 + tail as u128;
        if bytes > MAX_STRING_BYTES as u128 {
            return Err(too_large(what, bytes));
        }
        let padding = |buf: &mut String| {
            for _ in 0..cycles {
                buf.push_str(fill);
            }
            buf.push_str(fill.get(..tail).unwrap_or_default());
        };
        if left {
            padding(buf);
            buf.push_str(s);
        } else {
            buf.push_str(s);
            padding(buf);
        }
        Ok(true)
    })
}

fn trim(values: &[Value], n: usize, f: StrFunc) -> Result<ArrayRef> {
    let s = strs(values, 0)?;
    let chars = match values.get(1) {
        Some(v) => Some(Strs::new(v)?),
        None => None,
    };
    build_strings(n, s.is_large(), "trim()", |row, buf| {
        let Some(s) = s.get(row) else { return Ok(false) };
        let set = match &chars {
            Some(c) => match c.get(row) {
                Some(c) => c,
                None => return Ok(false),
            },
            None => " ",
        };
        let hit = |c: char| set.contains(c);
        let out = match f {
            StrFunc::Ltrim => s.trim_start_matches(hit),
            StrFunc::Rtrim => s.trim_end_matches(hit),
            _ => s.trim_matches(hit),
        };
        buf.push_str(out);
        Ok(true)
    })
}

fn strpos(values: &[Value], n: usize) -> Result<ArrayRef> {
    let (s, sub) = (strs(values, 0)?, strs(values, 1)?);
    let position = |row: usize| -> Option<usize> {
        let (s, sub) = (s.get(row)?, sub.get(row)?);
        Some(
            s.find(sub)
                .map_or(0, |i| s.get(..i).map_or(0, |p| p.chars().count()) + 1),
        )
    };
    Ok(if s.is_large() {
        let mut b = PrimitiveBuilder::<Int64Type>::with_capacity(n);
        for row in 0..n {
            b.append_option(position(row).map(|p| p as i64));
        }
        Arc::new(b.finish())
    } else {
        let mut b = PrimitiveBuilder::<Int32Type>::with_capacity(n);
        for row in 0..n {
            // A Utf8 value holds fewer than 2^31 bytes, so its positions fit.
            b.append_option(position(row).map(|p| i32::try_from(p).unwrap_or(i32::MAX)));
        }
        Arc::new(b.finish())
    })
}

fn repeat(values: &[Value], n: usize) -> Result<ArrayRef> {
    let (s, times) = (strs(values, 0)?, ints(values, 1)?);
    build_strings(n, s.is_large(), "repeat()", |row, buf| {
        let (Some(s), Some(times)) = (s.get(row), times.get(row)) else {
            return Ok(false);
        };
        if times <= 0 || s.is_empty() {
            return Ok(true);
        }
        let bytes = s.len() as u128 * u128::from(times.unsigned_abs());
        if bytes > MAX_STRING_BYTES as u128 {
            return Err(too_large("repeat()", bytes));
        }
        for _ in 0..times {
            buf.push_str(s);
        }
        Ok(true)
    })
}

/// Upper-cases the first letter or digit of every word and lower-cases the rest; a word
/// starts after any character that is not alphanumeric.
fn initcap(s: &str, buf: &mut String) {
    let mut in_word = false;
    for c in s.chars() {
        if in_word {
            buf.extend(c.to_lowercase());
        } else {
            buf.extend(c.to_uppercase());
        }
        in_word = c.is_alphanumeric();
    }
}

fn ascii(values: &[Value], n: usize) -> Result<ArrayRef> {
    let s = strs(values, 0)?;
    let mut b = PrimitiveBuilder::<Int32Type>::with_capacity(n);
    for row in 0..n {
        // A code point is below 2^21, so it fits.
        b.append_option(s.get(row).map(|v| v.chars().next().map_or(0, |c| c as i32)));
    }
    Ok(Arc::new(b.finish()))
}

fn chr(values: &[Value], n: usize) -> Result<ArrayRef> {
    let code = ints(values, 0)?;
    build_strings(n, false, "chr()", |row, buf| {
        let Some(code) = code.get(row) else { return Ok(false) };
        let c = u32::try_from(code).ok().and_then(char::from_u32).ok_or_else(|| {
            Error::InvalidArgument(format!(
                "chr(): {code} is not a Unicode code point (0 to 1114111, no surrogates)"
            ))
        })?;
        buf.push(c);
        Ok(true)
    })
}

fn to_hex(a: &ArrayRef) -> Result<ArrayRef> {
    let n = a.len();
    let hex = |v: u64, buf: &mut String| {
        let _ = write!(buf, "{v:x}");
    };
    match a.data_type() {
        DataType::Int64 => {
            let p = a.as_primitive::<Int64Type>();
            build_strings(n, false, "to_hex()", |row, buf| {
                Ok(p.is_valid(row) && {
                    // Two's complement, as DataFusion prints negative numbers.
                    hex(p.value(row) as u64, buf);
                    true
                })
            })
        }
        DataType::UInt64 => {
            let p = a.as_primitive::<UInt64Type>();
            build_strings(n, false, "to_hex()", |row, buf| {
                Ok(p.is_valid(row) && {
                    hex(p.value(row), buf);
                    true
                })
            })
        }
        other => Err(Error::Type(format!("to_hex() does not accept {other} values"))),
    }
}

fn translate(values: &[Value], n: usize) -> Result<ArrayRef> {
    let (s, from, to) = (strs(values, 0)?, strs(values, 1)?, strs(values, 2)?);
    build_strings(n, s.is_large(), "translate()", |row, buf| {
        let (Some(s), Some(from), Some(to)) = (s.get(row), from.get(row), to.get(row)) else {
            return Ok(false);
        };
        let to: Vec<char> = to.chars().collect();
        for c in s.chars() {
            match from.chars().position(|f| f == c) {
                // A character of `from` past the end of `to` is deleted.
                Some(k) => buf.extend(to.get(k)),
                None => buf.push(c),
            }
        }
        Ok(true)
    })
}

fn md5_hex(a: &ArrayRef) -> Result<ArrayRef> {
    let n = a.len();
    let digest = |bytes: Option<&[u8]>, buf: &mut String| -> bool {
        let Some(bytes) = bytes else { return false };
        for b in md5(bytes) {
            let _ = write!(buf, "{b:02x}");
        }
        true
    };
    macro_rules! run {
        ($arr:expr) => {{
            let arr = $arr;
            build_strings(n, false, "md5()", |row, buf| {
                Ok(digest(arr.is_valid(row).then(|| arr.value(row).as_ref()), buf))
            })
        }};
    }
    match a.data_type() {
        DataType::Utf8 => run!(a.as_string::<i32>()),
        DataType::LargeUtf8 => run!(a.as_string::<i64>()),
        DataType::Binary => run!(a.as_binary::<i32>()),
        DataType::LargeBinary => run!(a.as_binary::<i64>()),
        other => Err(Error::Type(format!("md5() does not accept {other} values"))),
    }
}

/// Per-round left-rotation amounts of MD5 (RFC 1321).
const MD5_SHIFTS: [u32; 16] = [7, 12, 17, 22, 5, 9, 14, 20, 4, 11, 16, 23, 6, 10, 15, 21];

/// MD5 constants: the integer part of 2^32 * |sin(i + 1)| (RFC 1321).
const MD5_K: [u32; 64] = [
    0xd76aa478, 0xe8c7b756, 0x242070db, 0xc1bdceee, 0xf57c0faf, 0x4787c62a, 0xa8304613, 0xfd469501, 0x698098d8,
    0x8b44f7af, 0xffff5bb1, 0x895cd7be, 0x6b901122, 0xfd987193, 0xa679438e, 0x49b40821, 0xf61e2562, 0xc040b340,
    0x265e5a51, 0xe9b6c7aa, 0xd62f105d, 0x02441453, 0xd8a1e681, 0xe7d3fbc8, 0x21e1cde6, 0xc33707d6, 0xf4d50d87,
    0x455a14ed, 0xa9e3e905, 0xfcefa3f8, 0x676f02d9, 0x8d2a4c8a, 0xfffa3942, 0x8771f681, 0x6d9d6122, 0xfde5380c,
    0xa4beea44, 0x4bdecfa9, 0xf6bb4b60, 0xbebfbc70, 0x289b7ec6, 0xeaa127fa, 0xd4ef3085, 0x04881d05, 0xd9d4d039,
    0xe6db99e5, 0x1fa27cf8, 0xc4ac5665, 0xf4292244, 0x432aff97, 0xab9423a7, 0xfc93a039, 0x655b59c3, 0x8f0ccc92,
    0xffeff47d, 0x85845dd1, 0x6fa87e4f, 0xfe2ce6e0, 0xa3014314, 0x4e0811a1, 0xf7537e82, 0xbd3af235, 0x2ad7d2bb,
    0xeb86d391,
];

/// The MD5 digest of `data` (RFC 1321).
fn md5(data: &[u8]) -> [u8; 16] {
    let mut state: [u32; 4] = [0x6745_2301, 0xefcd_ab89, 0x98ba_dcfe, 0x1032_5476];
    let bit_len = (data.len() as u64).wrapping_mul(8);
    let mut message = data.to_vec();
    message.push(0x80);
    while message.len() % 64 != 56 {
        message.push(0);
    }
    message.extend_from_slice(&bit_len.to_le_bytes());
    for block in message.chunks_exact(64) {
        let mut w = [0u32; 16];
        for (word, bytes) in w.iter_mut().zip(block.chunks_exact(4)) {
            *word = u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
        }
        let [mut a, mut b, mut c, mut d] = state;
        for i in 0..64 {
            let (f, g) = match i / 16 {
                0 => ((b & c) | (!b & d), i),
                1 => ((d & b) | (!d & c), (5 * i + 1) % 16),
                2 => (b ^ c ^ d, (3 * i + 5) % 16),
                _ => (c ^ (b | !d), (7 * i) % 16),
            };
            let sum = a.wrapping_add(f).wrapping_add(MD5_K[i]).wrapping_add(w[g]);
            let shifted = sum.rotate_left(MD5_SHIFTS[(i / 16) * 4 + i % 4]);
            a = d;
            d = c;
            c = b;
            b = b.wrapping_add(shifted);
        }
        for (s, v) in state.iter_mut().zip([a, b, c, d]) {
            *s = s.wrapping_add(v);
        }
    }
    let mut out = [0u8; 16];
    for (chunk, s) in out.chunks_exact_mut(4).zip(state) {
        chunk.copy_from_slice(&s.to_le_bytes());
    }
    out
}

/// The tokens of `s` for `contains_tokens`: maximal runs of letters and digits.
fn word_tokens(s: &str) -> impl Iterator<Item = &str> {
    s.split(|c: char| !c.is_alphanumeric()).filter(|t| !t.is_empty())
}

/// The distinct tokens of `q`, in order, into `out` (cleared first).
fn distinct_tokens<'q>(q: &'q str, out: &mut Vec<&'q str>) {
    out.clear();
    for t in word_tokens(q) {
        if !out.contains(&t) {
            out.push(t);
        }
    }
}

/// Whether `texts` hold, together, every one of `wanted` (distinct tokens).
fn holds_all<'t>(wanted: &[&str], texts: impl Iterator<Item = &'t str>) -> bool {
    if wanted.is_empty() {
        return true;
    }
    let mut seen = vec![false; wanted.len()];
    let mut left = wanted.len();
    for t in texts.flat_map(word_tokens) {
        if let Some(i) = wanted.iter().position(|w| *w == t) {
            if !seen[i] {
                seen[i] = true;
                left -= 1;
                if left == 0 {
                    return true;
                }
            }
        }
    }
    false
}

fn contains_tokens(values: &[Value], n: usize) -> Result<ArrayRef> {
    let query = strs(values, 1)?;
    let text = arg(values, 0)?;
    let mut out = arrow_array::builder::BooleanBuilder::with_capacity(n);
    let mut wanted: Vec<&str> = Vec::new();
    let mut last_query: Option<&str> = None;
    let (array, scalar) = match text {
        Value::Array(a) => (a, false),
        Value::Scalar(a) => (a, true),
    };
    if let Some(lists) = array.as_list_opt::<i32>() {
        let items = lists.values().as_string_opt::<i32>().ok_or_else(|| {
            Error::Type(format!(
                "contains_tokens() needs strings, got a list of {}",
                lists.value_type()
            ))
        })?;
        for row in 0..n {
            let i = if scalar { 0 } else { row };
            let (Some(q), true) = (query.get(row), i < lists.len() && lists.is_valid(i)) else {
                out.append_null();
                continue;
            };
            if last_query != Some(q) {
                distinct_tokens(q, &mut wanted);
                last_query = Some(q);
            }
            let range = lists.value_offsets()[i] as usize..lists.value_offsets()[i + 1] as usize;
            let texts = range.filter(|j| items.is_valid(*j)).map(|j| items.value(j));
            out.append_value(holds_all(&wanted, texts));
        }
    } else {
        let text = strs(values, 0)?;
        for row in 0..n {
            let (Some(t), Some(q)) = (text.get(row), query.get(row)) else {
                out.append_null();
                continue;
            };
            if last_query != Some(q) {
                distinct_tokens(q, &mut wanted);
                last_query = Some(q);
            }
            out.append_value(holds_all(&wanted, std::iter::once(t)));
        }
    }
    Ok(Arc::new(out.finish()))
}

#[cfg(test)]
mod tests {
    use super::{distinct_tokens, holds_all, md5};

    fn hex(d: [u8; 16]) -> String {
        d.iter().map(|b| format!("{b:02x}")).collect()
    }

    #[test]
    fn md5_matches_rfc_1321_test_suite() {
        for (input, want) in [
            ("", "d41d8cd98f00b204e9800998ecf8427e"),
            ("a", "0cc175b9c0f1b6a831c399e269772661"),
            ("abc", "900150983cd24fb0d6963f7d28e17f72"),
            ("message digest", "f96b697d7cb7938d525a2f31aaf161d0"),
            ("abcdefghijklmnopqrstuvwxyz", "c3fcd3d76192e4007dfb496cca67e13b"),
            (
                "12345678901234567890123456789012345678901234567890123456789012345678901234567890",
                "57edf4a22be3c955ac49da2e2107b67a",
            ),
        ] {
            assert_eq!(hex(md5(input.as_bytes())), want, "{input}");
        }
    }

    #[test]
    fn contains_tokens_needs_every_query_token_whole_and_exact() {
        let has = |text: &str, q: &str| {
            let mut wanted = Vec::new();
            distinct_tokens(q, &mut wanted);
            holds_all(&wanted, std::iter::once(text))
        };
        assert!(has("a fox, a dog.", "dog-fox"));
        assert!(has("x_y z", "y"));
        assert!(!has("foxdog", "fox"));
        assert!(!has("Fox", "fox"));
        assert!(has("", "!!"));
        assert!(has("日本語 x²y", "x²y 日本語"));
    }
}
