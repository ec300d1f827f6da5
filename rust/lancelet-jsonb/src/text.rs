//! JSONB as the compact text pylance prints.

use std::fmt::Write as _;

/// The text pylance gives for stored JSONB `bytes`: compact JSON with object keys in their
/// stored (sorted) order, numbers as [`crate::Number::to_text`] prints them.
///
/// Bytes that are not a valid JSONB document come back as lossy UTF-8, as pylance returns
/// them (raw JSON text stored as JSONB, for one, reads back unchanged); empty bytes are
/// `null`.
///
/// ```
/// let b = lancelet_jsonb::parse(b"[1.0, \"a\\tb\"]").unwrap();
/// assert_eq!(lancelet_jsonb::to_text(&b), r#"[1.0,"a\tb"]"#);
/// assert_eq!(lancelet_jsonb::to_text(b"not jsonb"), "not jsonb");
/// assert_eq!(lancelet_jsonb::to_text(b""), "null");
/// ```
pub fn to_text(bytes: &[u8]) -> String {
    if bytes.is_empty() {
        return "null".to_string();
    }
    match crate::decode(bytes) {
        Some(v) => v.to_text(),
        None => String::from_utf8_lossy(bytes).into_owned(),
    }
}

/// Appends `s` as a JSON string literal the way JSONB prints it: `"` and `\` escaped, `\b`,
/// `\f`, `\n`, `\r`, `\t` as short escapes, other control characters as `\u00xx`
/// (lower-case hex), everything else as is.
///
/// ```
/// let mut out = String::new();
/// lancelet_jsonb::write_string(&mut out, "a\"\u{1}/");
/// assert_eq!(out, r#""a\"\u0001/""#);
/// ```
pub fn write_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Appends `f` as JSONB prints floats: the shortest digits that read back as `f`, in plain
/// decimal with a fraction when the decimal exponent is -5..=15 (`1.0`, `0.00001`,
/// `1000000000000000.0`), otherwise as `d.ddde±x` with an explicit `+` (`1e+16`,
/// `1.5e-7`). `NaN` and the infinities print as `null`.
///
/// ```
/// let mut out = String::new();
/// lancelet_jsonb::write_float(&mut out, 1.5e300);
/// assert_eq!(out, "1.5e+300");
/// ```
pub fn write_float(out: &mut String, f: f64) {
    if !f.is_finite() {
        out.push_str("null");
        return;
    }
    if f.is_sign_negative() {
        out.push('-');
    }
    // `{:e}` gives the shortest round-trip digits and their exponent.
    let sci = format!("{:e}", f.abs());
    let (mantissa, exp) = sci.split_once('e').unwrap_or((sci.as_str(), "0"));
    let exp: i64 = exp.parse().unwrap_or(0);
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let n = digits.len() as i64;
    // Position of the decimal point relative to the start of the digits.
    let point = exp + 1;
    if (0..=16).contains(&point) && point >= n {
        out.push_str(&digits);
        out.extend(std::iter::repeat_n('0', (point - n) as usize));
        out.push_str(".0");
    } else if 0 < point && point <= 16 {
        let (int, frac) = digits.split_at(point as usize);
        out.push_str(int);
        out.push('.');
        out.push_str(frac);
    } else if -5 < point && point <= 0 {
        out.push_str("0.");
        out.extend(std::iter::repeat_n('0', point.unsigned_abs() as usize));
        out.push_str(&digits);
    } else {
        let (first, rest) = digits.split_at(1.min(digits.len()));
        out.push_str(first);
        if !rest.is_empty() {
            out.push('.');
            out.push_str(rest);
        }
        let e = point - 1;
        if e < 0 {
            let _ = write!(out, "e{e}");
        } else {
            let _ = write!(out, "e+{e}");
        }
    }
}
