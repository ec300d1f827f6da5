//! JSON functions over UTF-8 JSON text, with the results of Lance's JSONB functions.
//!
//! Lance stores `pa.json_()` columns as JSONB (`lance.json`) and its functions read that
//! binary form; here they read JSON text, which is what such a column holds once it is
//! converted back to Arrow's `arrow.json` (a string column). Outputs follow pylance 14:
//! `json_extract` and `json_get` print compact JSON with object keys sorted and numbers as
//! JSONB prints them (`1.0`, `1e+20`), the `json_get_*` conversions are JSONB's strict ones.

use std::cmp::Ordering;
use std::fmt::Write as _;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef, BooleanArray, Float64Array, Int64Array, StringArray};
use serde_json::Value as Json;

use crate::error::{Error, Result};
use crate::eval::Value;

/// Which JSON function.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum JsonFunc {
    /// `json_extract(doc, path)`: the JSON text at a JSONPath.
    Extract,
    /// `json_exists(doc, path)`.
    Exists,
    /// `json_get(doc, key)`: the JSON text of a field or array element.
    Get,
    /// `json_get_string(doc, key)`.
    GetString,
    /// `json_get_int(doc, key)`.
    GetInt,
    /// `json_get_float(doc, key)`.
    GetFloat,
    /// `json_get_bool(doc, key)`.
    GetBool,
    /// `json_array_contains(doc, path, value)`.
    ArrayContains,
    /// `json_array_length(doc, path)`.
    ArrayLength,
}

impl JsonFunc {
    /// The function for a (lower-case) name.
    pub(crate) fn from_name(name: &str) -> Option<JsonFunc> {
        Some(match name {
            "json_extract" => JsonFunc::Extract,
            "json_exists" => JsonFunc::Exists,
            "json_get" => JsonFunc::Get,
            "json_get_string" => JsonFunc::GetString,
            "json_get_int" => JsonFunc::GetInt,
            "json_get_float" => JsonFunc::GetFloat,
            "json_get_bool" => JsonFunc::GetBool,
            "json_array_contains" => JsonFunc::ArrayContains,
            "json_array_length" => JsonFunc::ArrayLength,
            _ => return None,
        })
    }

    /// Number of arguments, the document included.
    pub(crate) fn arity(self) -> usize {
        if self == JsonFunc::ArrayContains {
            3
        } else {
            2
        }
    }

    /// Whether the second argument is a JSONPath (otherwise a key or array index).
    pub(crate) fn takes_path(self) -> bool {
        matches!(
            self,
            JsonFunc::Extract | JsonFunc::Exists | JsonFunc::ArrayContains | JsonFunc::ArrayLength
        )
    }

    /// The result type.
    pub(crate) fn data_type(self) -> arrow_schema::DataType {
        use arrow_schema::DataType;
        match self {
            JsonFunc::Extract | JsonFunc::Get | JsonFunc::GetString => DataType::Utf8,
            JsonFunc::GetInt | JsonFunc::ArrayLength => DataType::Int64,
            JsonFunc::GetFloat => DataType::Float64,
            JsonFunc::Exists | JsonFunc::GetBool | JsonFunc::ArrayContains => DataType::Boolean,
        }
    }

    fn name(self) -> &'static str {
        match self {
            JsonFunc::Extract => "json_extract",
            JsonFunc::Exists => "json_exists",
            JsonFunc::Get => "json_get",
            JsonFunc::GetString => "json_get_string",
            JsonFunc::GetInt => "json_get_int",
            JsonFunc::GetFloat => "json_get_float",
            JsonFunc::GetBool => "json_get_bool",
            JsonFunc::ArrayContains => "json_array_contains",
            JsonFunc::ArrayLength => "json_array_length",
        }
    }

    /// Evaluates on Utf8 arguments; NULL in any argument gives NULL.
    pub(crate) fn invoke(self, values: &[Value], rows: usize) -> Result<Value> {
        let all_scalar = values.iter().all(Value::is_scalar);
        let len = if all_scalar { 1 } else { rows };
        let arrays = values
            .iter()
            .map(|v| v.clone().into_array(len))
            .collect::<Result<Vec<ArrayRef>>>()?;
        let strings = arrays
            .iter()
            .map(|a| {
                a.as_string_opt::<i32>()
                    .ok_or_else(|| Error::Type(format!("{}() needs strings, got {}", self.name(), a.data_type())))
            })
            .collect::<Result<Vec<&StringArray>>>()?;
        let mut paths = PathCache::default();
        let mut out = Output::new(self, len);
        for row in 0..len {
            let args: Option<Vec<&str>> = strings.iter().map(|s| s.is_valid(row).then(|| s.value(row))).collect();
            let Some(args) = args else {
                out.push_null();
                continue;
            };
            let doc = parse_doc(self, args[0])?;
            match self {
                JsonFunc::Extract => {
                    let found = paths.get(args[1])?.select(&doc);
                    match found.len() {
                        0 => out.push_null(),
                        1 => out.push_str(&to_text(found[0])),
                        _ => out.push_str(&to_text(&Json::Array(found.into_iter().cloned().collect()))),
                    }
                }
                JsonFunc::Exists => out.push_bool(!paths.get(args[1])?.select(&doc).is_empty()),
                JsonFunc::ArrayContains => {
                    let needle = args[2];
                    let quoted = format!("\"{needle}\"");
                    let hit = paths.get(args[1])?.select(&doc).iter().any(|v| match v {
                        Json::Array(items) => items.iter().any(|item| {
                            let text = to_text(item);
                            text == needle || text == quoted
                        }),
                        _ => false,
                    });
                    out.push_bool(hit);
                }
                JsonFunc::ArrayLength => match paths.get(args[1])?.select(&doc).first() {
                    None => out.push_null(),
                    Some(Json::Array(items)) => out.push_int(i64::try_from(items.len()).unwrap_or(i64::MAX)),
                    // Lance counts the items of a non-array as 0.
                    Some(_) => out.push_int(0),
                },
                _ => match get_by_key(&doc, args[1]) {
                    None => out.push_null(),
                    Some(v) => self.convert(v, &mut out)?,
                },
            }
        }
        let array = out.finish();
        Ok(if all_scalar {
            Value::Scalar(array)
        } else {
            Value::Array(array)
        })
    }

    /// The `json_get*` conversions of one found value (JSONB's strict mode).
    fn convert(self, v: &Json, out: &mut Output) -> Result<()> {
        let fail = |what: &str| {
            Error::Type(format!(
                "{}(): cannot convert the JSON value {} to {what}",
                self.name(),
                to_text(v)
            ))
        };
        if self == JsonFunc::Get {
            out.push_str(&to_text(v));
            return Ok(());
        }
        if v.is_null() {
            out.push_null();
            return Ok(());
        }
        match self {
            JsonFunc::GetString => match v {
                Json::String(s) => out.push_str(s),
                Json::Number(_) | Json::Bool(_) => out.push_str(&to_text(v)),
                _ => return Err(fail("a string")),
            },
            JsonFunc::GetInt => {
                let i = match v {
                    Json::Bool(b) => Some(i64::from(*b)),
                    Json::Number(n) => match (n.as_i64(), n.as_f64()) {
                        (Some(i), _) => Some(i),
                        (None, _) if n.is_u64() => None,
                        (None, f) => f.and_then(round_to_i64),
                    },
                    Json::String(s) => s
                        .parse::<i64>()
                        .ok()
                        .or_else(|| s.parse::<f64>().ok().and_then(round_to_i64)),
                    _ => None,
                };
                out.push_int(i.ok_or_else(|| fail("an integer"))?);
            }
            JsonFunc::GetFloat => {
                let f = match v {
                    Json::Bool(b) => Some(if *b { 1.0 } else { 0.0 }),
                    Json::Number(n) => n.as_f64(),
                    Json::String(s) => s.parse::<f64>().ok(),
                    _ => None,
                };
                out.push_float(f.ok_or_else(|| fail("a float"))?);
            }
            JsonFunc::GetBool => {
                let b = match v {
                    Json::Bool(b) => Some(*b),
                    Json::String(s) if s.eq_ignore_ascii_case("true") || s.eq_ignore_ascii_case("yes") => Some(true),
                    Json::String(s) if s.eq_ignore_ascii_case("false") || s.eq_ignore_ascii_case("no") => Some(false),
                    _ => None,
                };
                out.push_bool(b.ok_or_else(|| fail("a boolean"))?);
            }
            _ => out.push_null(),
        }
        Ok(())
    }
}

/// Rounds half away from zero; `None` outside the `i64` range (and for NaN).
fn round_to_i64(f: f64) -> Option<i64> {
    let r = f.round();
    // 2^63 is exactly representable; every float below it in magnitude fits.
    let limit = 2f64.powi(63);
    (-limit..limit).contains(&r).then_some(r as i64)
}

fn parse_doc(func: JsonFunc, text: &str) -> Result<Json> {
    serde_json::from_str(text)
        .map_err(|e| Error::Type(format!("{}(): the value is not valid JSON ({e}): {text}", func.name())))
}

/// A field of an object, or an element of an array when `key` is a non-negative integer.
fn get_by_key<'a>(doc: &'a Json, key: &str) -> Option<&'a Json> {
    match doc {
        Json::Object(map) => map.get(key),
        Json::Array(items) => key.parse::<usize>().ok().and_then(|i| items.get(i)),
        _ => None,
    }
}

/// The result column under construction.
enum Output {
    Str(Vec<Option<String>>),
    Int(Vec<Option<i64>>),
    Float(Vec<Option<f64>>),
    Bool(Vec<Option<bool>>),
}

impl Output {
    fn new(func: JsonFunc, len: usize) -> Output {
        use arrow_schema::DataType;
        match func.data_type() {
            DataType::Int64 => Output::Int(Vec::with_capacity(len)),
            DataType::Float64 => Output::Float(Vec::with_capacity(len)),
            DataType::Boolean => Output::Bool(Vec::with_capacity(len)),
            _ => Output::Str(Vec::with_capacity(len)),
        }
    }

    fn push_null(&mut self) {
        match self {
            Output::Str(v) => v.push(None),
            Output::Int(v) => v.push(None),
            Output::Float(v) => v.push(None),
            Output::Bool(v) => v.push(None),
        }
    }

    fn push_str(&mut self, s: &str) {
        if let Output::Str(v) = self {
            v.push(Some(s.to_string()));
        }
    }

    fn push_int(&mut self, i: i64) {
        if let Output::Int(v) = self {
            v.push(Some(i));
        }
    }

    fn push_float(&mut self, f: f64) {
        if let Output::Float(v) = self {
            v.push(Some(f));
        }
    }

    fn push_bool(&mut self, b: bool) {
        if let Output::Bool(v) = self {
            v.push(Some(b));
        }
    }

    fn finish(self) -> ArrayRef {
        match self {
            Output::Str(v) => Arc::new(StringArray::from(v)),
            Output::Int(v) => Arc::new(Int64Array::from(v)),
            Output::Float(v) => Arc::new(Float64Array::from(v)),
            Output::Bool(v) => Arc::new(BooleanArray::from(v)),
        }
    }
}

/// Compact JSON text as JSONB prints it: object keys in byte order, floats as `1.0`,
/// `1e+20`, `1.5e-7`.
pub(crate) fn to_text(v: &Json) -> String {
    let mut out = String::new();
    write_json(&mut out, v);
    out
}

fn write_json(out: &mut String, v: &Json) {
    match v {
        Json::Null => out.push_str("null"),
        Json::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Json::Number(n) => {
            if let Some(i) = n.as_i64() {
                let _ = write!(out, "{i}");
            } else if let Some(u) = n.as_u64() {
                let _ = write!(out, "{u}");
            } else if let Some(f) = n.as_f64() {
                write_float(out, f);
            }
        }
        Json::String(s) => write_string(out, s),
        Json::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_json(out, item);
            }
            out.push(']');
        }
        Json::Object(map) => {
            let mut entries: Vec<(&String, &Json)> = map.iter().collect();
            entries.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
            out.push('{');
            for (i, (k, item)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_string(out, k);
                out.push(':');
                write_json(out, item);
            }
            out.push('}');
        }
    }
}

fn write_string(out: &mut String, s: &str) {
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

/// Shortest round-trip digits laid out as ryu does (decimal notation for exponents -5..16,
/// otherwise `d.ddde±x`), with an explicit `+` on positive exponents as JSONB prints them.
fn write_float(out: &mut String, f: f64) {
    if !f.is_finite() {
        out.push_str("null");
        return;
    }
    if f.is_sign_negative() {
        out.push('-');
    }
    let sci = format!("{:e}", f.abs());
    let (mantissa, exp) = sci.split_once('e').unwrap_or((sci.as_str(), "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let n = digits.len() as i32;
    let kk = exp + 1; // position of the decimal point relative to the digits
    let k = kk - n;
    if (0..=16).contains(&kk) && k >= 0 {
        out.push_str(&digits);
        out.extend(std::iter::repeat_n('0', k as usize));
        out.push_str(".0");
    } else if 0 < kk && kk <= 16 {
        out.push_str(&digits[..kk as usize]);
        out.push('.');
        out.push_str(&digits[kk as usize..]);
    } else if -5 < kk && kk <= 0 {
        out.push_str("0.");
        out.extend(std::iter::repeat_n('0', (-kk) as usize));
        out.push_str(&digits);
    } else {
        out.push_str(&digits[..1]);
        if n > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        let e = kk - 1;
        match e.cmp(&0) {
            Ordering::Less => {
                let _ = write!(out, "e{e}");
            }
            _ => {
                let _ = write!(out, "e+{e}");
            }
        }
    }
}

/// Parsed paths by text, so a constant path is parsed once per batch.
#[derive(Default)]
struct PathCache {
    last: Option<(String, JsonPath)>,
}

impl PathCache {
    fn get(&mut self, text: &str) -> Result<&JsonPath> {
        let stale = self.last.as_ref().is_none_or(|(t, _)| t != text);
        if stale {
            self.last = Some((text.to_string(), JsonPath::parse(text)?));
        }
        self.last
            .as_ref()
            .map(|(_, p)| p)
            .ok_or_else(|| Error::Type("JSONPath cache is empty".to_string()))
    }
}

/// One step of a JSONPath.
#[derive(Debug, Clone, PartialEq)]
enum Step {
    /// `.name`, `."name"`, `["name"]`
    Key(String),
    /// `.*`
    AllValues,
    /// `[*]`
    AllItems,
    /// `[i, j to k, last - 1, ...]`
    Items(Vec<(Index, Option<Index>)>),
}

/// An array position in a path: from the start, or from the end (`last - n`).
#[derive(Debug, Clone, Copy, PartialEq)]
enum Index {
    Start(i64),
    Last(i64),
}

impl Index {
    fn resolve(self, len: usize) -> i64 {
        match self {
            Index::Start(i) => i,
            Index::Last(n) => len as i64 - 1 - n,
        }
    }
}

/// The JSONPath subset Lance users write: `$`, `.key`, `."key"`, `['key']`, `.*`, `[*]`,
/// `[i]`, `[last]`, `[last - n]`, `[i to j]` and `[i, j]` lists. The leading `$.` may be
/// left out (`a.b` is `$.a.b`), as in Lance.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct JsonPath {
    steps: Vec<Step>,
}

impl JsonPath {
    pub(crate) fn parse(text: &str) -> Result<JsonPath> {
        let bad = |why: &str| Error::Type(format!("invalid JSONPath '{text}': {why}"));
        let chars: Vec<char> = text.trim().chars().collect();
        let mut i = 0;
        let mut steps = Vec::new();
        if chars.first() == Some(&'$') {
            i = 1;
        } else if !chars.is_empty() {
            // `a.b` means `$.a.b`.
            let key = read_name(&chars, &mut i);
            if key.is_empty() {
                return Err(bad("expected '$' or a field name"));
            }
            steps.push(Step::Key(key));
        }
        while i < chars.len() {
            match chars[i] {
                c if c.is_whitespace() => i += 1,
                '.' => {
                    i += 1;
                    match chars.get(i) {
                        Some('*') => {
                            i += 1;
                            steps.push(Step::AllValues);
                        }
                        Some('"') => steps.push(Step::Key(
                            read_quoted(&chars, &mut i).ok_or_else(|| bad("unterminated quoted name"))?,
                        )),
                        _ => {
                            let key = read_name(&chars, &mut i);
                            if key.is_empty() {
                                return Err(bad("expected a field name after '.'"));
                            }
                            steps.push(Step::Key(key));
                        }
                    }
                }
                '[' => {
                    i += 1;
                    skip_ws(&chars, &mut i);
                    match chars.get(i) {
                        Some('*') => {
                            i += 1;
                            steps.push(Step::AllItems);
                        }
                        Some('"') | Some('\'') => {
                            steps.push(Step::Key(
                                read_quoted(&chars, &mut i).ok_or_else(|| bad("unterminated quoted name"))?,
                            ));
                        }
                        _ => {
                            let mut items = Vec::new();
                            loop {
                                let from = read_index(&chars, &mut i).ok_or_else(|| bad("expected an array index"))?;
                                skip_ws(&chars, &mut i);
                                let to = if chars[i..].starts_with(&['t', 'o']) {
                                    i += 2;
                                    Some(
                                        read_index(&chars, &mut i)
                                            .ok_or_else(|| bad("expected an index after 'to'"))?,
                                    )
                                } else {
                                    None
                                };
                                items.push((from, to));
                                skip_ws(&chars, &mut i);
                                if chars.get(i) == Some(&',') {
                                    i += 1;
                                } else {
                                    break;
                                }
                            }
                            steps.push(Step::Items(items));
                        }
                    }
                    skip_ws(&chars, &mut i);
                    if chars.get(i) != Some(&']') {
                        return Err(bad("expected ']'"));
                    }
                    i += 1;
                }
                '?' => return Err(bad("filter expressions (?(...)) are not supported")),
                c => return Err(bad(&format!("unexpected character '{c}'"))),
            }
        }
        Ok(JsonPath { steps })
    }

    /// Every value the path selects, in document order.
    fn select<'a>(&self, doc: &'a Json) -> Vec<&'a Json> {
        let mut current = vec![doc];
        for step in &self.steps {
            let mut next = Vec::new();
            for v in current {
                match (step, v) {
                    (Step::Key(k), Json::Object(map)) => next.extend(map.get(k)),
                    (Step::AllValues, Json::Object(map)) => {
                        let mut entries: Vec<(&String, &Json)> = map.iter().collect();
                        entries.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
                        next.extend(entries.into_iter().map(|(_, v)| v));
                    }
                    (Step::AllItems, Json::Array(items)) => next.extend(items.iter()),
                    // Lax mode: `[*]` on a non-array is the value itself.
                    (Step::AllItems, other) => next.push(other),
                    (Step::Items(ranges), Json::Array(items)) => {
                        for (from, to) in ranges {
                            let a = from.resolve(items.len());
                            let b = to.map_or(a, |t| t.resolve(items.len())).min(items.len() as i64 - 1);
                            for j in a.max(0)..=b {
                                if let Some(item) = usize::try_from(j).ok().and_then(|j| items.get(j)) {
                                    next.push(item);
                                }
                            }
                        }
                    }
                    _ => {}
                }
            }
            current = next;
        }
        current
    }
}

fn skip_ws(chars: &[char], i: &mut usize) {
    while chars.get(*i).is_some_and(|c| c.is_whitespace()) {
        *i += 1;
    }
}

fn read_name(chars: &[char], i: &mut usize) -> String {
    let start = *i;
    while chars
        .get(*i)
        .is_some_and(|c| c.is_alphanumeric() || *c == '_' || *c == '$')
    {
        *i += 1;
    }
    chars[start..*i].iter().collect()
}

/// A `"..."` or `'...'` name starting at `chars[*i]`, with backslash escapes.
fn read_quoted(chars: &[char], i: &mut usize) -> Option<String> {
    let quote = *chars.get(*i)?;
    *i += 1;
    let mut s = String::new();
    loop {
        let c = *chars.get(*i)?;
        *i += 1;
        match c {
            '\\' => {
                s.push(*chars.get(*i)?);
                *i += 1;
            }
            c if c == quote => return Some(s),
            c => s.push(c),
        }
    }
}

fn read_index(chars: &[char], i: &mut usize) -> Option<Index> {
    skip_ws(chars, i);
    if chars[*i..].starts_with(&['l', 'a', 's', 't']) {
        *i += 4;
        skip_ws(chars, i);
        if chars.get(*i) == Some(&'-') {
            *i += 1;
            skip_ws(chars, i);
            return read_int(chars, i).map(Index::Last);
        }
        return Some(Index::Last(0));
    }
    read_int(chars, i).map(Index::Start)
}

fn read_int(chars: &[char], i: &mut usize) -> Option<i64> {
    let start = *i;
    if chars.get(*i) == Some(&'-') {
        *i += 1;
    }
    while chars.get(*i).is_some_and(char::is_ascii_digit) {
        *i += 1;
    }
    chars[start..*i].iter().collect::<String>().parse().ok()
}
