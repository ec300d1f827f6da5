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

/// Appends `f` as JSONB prints floats: the shortest digits that read back as `f` (ties to
/// even), in plain decimal with a fraction when the decimal exponent is -5..=15 (`1.0`,
/// `0.00001`, `1000000000000000.0`), otherwise as `d.ddde±x` with an explicit sign (`1e+16`,
/// `1.5e-7`); `NaN` and the infinities print as `null`. This is the Żmij algorithm's output,
/// which pylance's JSONB prints.
///
/// ```
/// let mut out = String::new();
/// lancelet_jsonb::write_float(&mut out, 1.5e300);
/// assert_eq!(out, "1.5e+300");
/// ```
pub fn write_float(out: &mut String, f: f64) {
    if f.is_finite() {
        out.push_str(zmij::Buffer::new().format_finite(f));
    } else {
        out.push_str("null");
    }
}
