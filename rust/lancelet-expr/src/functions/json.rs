//! JSON functions over Lance's stored JSON (JSONB `large_binary`, the `lance.json` columns)
//! with pylance 14's results; JSON text (`utf8`) documents are accepted too.
//!
//! A document is validated and navigated in place (`lancelet_jsonb`): no tree is built.
//! Outputs follow pylance: `json_extract` prints compact JSON with object keys sorted and
//! numbers as JSONB prints them (`1.0`, `1e+20`); `json_get` returns the value as JSONB (a
//! scalar in a scalar container), so it can be the document of another JSON function;
//! the `json_get_*` conversions are JSONB's strict ones. Bytes that are not JSONB make
//! `json_extract` (except of `'$'`, which prints them as text), `json_exists`,
//! `json_array_contains` and `json_array_length` fail, and give NULL from the `json_get*`
//! functions, as in pylance.

use std::borrow::Cow;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef, BooleanArray, Float64Array, Int64Array, LargeBinaryArray, StringArray};
use lancelet_jsonb::{Number, Value as Json};

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
            JsonFunc::Extract | JsonFunc::GetString => DataType::Utf8,
            JsonFunc::Get => DataType::LargeBinary,
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

    /// Evaluates on a JSON document (JSONB `large_binary` or JSON text `utf8`) and `utf8`
    /// further arguments; NULL in any argument gives NULL.
    pub(crate) fn invoke(self, values: &[Value], rows: usize) -> Result<Value> {
        let all_scalar = values.iter().all(Value::is_scalar);
        let len = if all_scalar { 1 } else { rows };
        let arrays = values
            .iter()
            .map(|v| v.clone().into_array(len))
            .collect::<Result<Vec<ArrayRef>>>()?;
        let (doc, rest) = arrays
            .split_first()
            .ok_or_else(|| Error::Type(format!("{}() needs a JSON document", self.name())))?;
        let docs = Docs::new(self, doc)?;
        let strings = rest
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
            let (Some(args), Some(bytes)) = (args, docs.get(row)?) else {
                out.push_null();
                continue;
            };
            let root = lancelet_jsonb::decode(&bytes);
            let arg = |i: usize| args.get(i).copied().unwrap_or_default();
            match self {
                JsonFunc::Extract => {
                    let path = paths.get(arg(0))?;
                    let Some(root) = root else {
                        // pylance prints the whole of bytes that are not JSONB for '$'.
                        if path.is_root() {
                            out.push_str(&lancelet_jsonb::to_text(&bytes));
                            continue;
                        }
                        return Err(self.not_jsonb(arg(0)));
                    };
                    let found = path.select(root);
                    match found.as_slice() {
                        [] => out.push_null(),
                        [one] => out.push_str(&one.to_text()),
                        many => {
                            let texts: Vec<String> = many.iter().map(Json::to_text).collect();
                            out.push_str(&format!("[{}]", texts.join(",")));
                        }
                    }
                }
                JsonFunc::Exists => {
                    let path = paths.get(arg(0))?;
                    let root = root.ok_or_else(|| self.not_jsonb(arg(0)))?;
                    out.push_bool(!path.select(root).is_empty());
                }
                JsonFunc::ArrayContains => {
                    let path = paths.get(arg(0))?;
                    let root = root.ok_or_else(|| self.not_jsonb(arg(0)))?;
                    let needle = arg(1);
                    let quoted = format!("\"{needle}\"");
                    let hit = path.select(root).iter().any(|v| match v {
                        Json::Array(items) => items.items().any(|item| {
                            let text = item.to_text();
                            text == needle || text == quoted
                        }),
                        _ => false,
                    });
                    out.push_bool(hit);
                }
                JsonFunc::ArrayLength => {
                    let path = paths.get(arg(0))?;
                    let root = root.ok_or_else(|| self.not_jsonb(arg(0)))?;
                    match path.select(root).first() {
                        None => out.push_null(),
                        Some(Json::Array(items)) => out.push_int(i64::try_from(items.len()).unwrap_or(i64::MAX)),
                        // Lance counts the items of a non-array as 0.
                        Some(_) => out.push_int(0),
                    }
                }
                _ => match root.and_then(|r| get_by_key(r, arg(0))) {
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

    /// The error for a path function on bytes that are not JSONB.
    fn not_jsonb(self, path: &str) -> Error {
        Error::Type(format!(
            "{}(): failed to select value from path '{path}': the value is not JSONB",
            self.name()
        ))
    }

    /// The `json_get*` conversions of one found value (JSONB's strict mode).
    fn convert(self, v: Json<'_>, out: &mut Output) -> Result<()> {
        let fail = |what: &str| {
            Error::Type(format!(
                "{}(): cannot convert the JSON value {} to {what}",
                self.name(),
                v.to_text()
            ))
        };
        if self == JsonFunc::Get {
            out.push_binary(v.to_jsonb());
            return Ok(());
        }
        if v == Json::Null {
            out.push_null();
            return Ok(());
        }
        match self {
            JsonFunc::GetString => match v {
                Json::String(s) => out.push_str(s),
                Json::Number(_) | Json::Bool(_) => out.push_str(&v.to_text()),
                _ => return Err(fail("a string")),
            },
            JsonFunc::GetInt => {
                let i = match v {
                    Json::Bool(b) => Some(i64::from(b)),
                    Json::Number(Number::Float(f)) => round_to_i64(f),
                    // A u64 above i64::MAX does not convert (no rounding either).
                    Json::Number(n) => n.as_i64(),
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
                    Json::Bool(b) => Some(if b { 1.0 } else { 0.0 }),
                    Json::Number(n) => Some(n.as_f64()),
                    Json::String(s) => s.parse::<f64>().ok(),
                    _ => None,
                };
                out.push_float(f.ok_or_else(|| fail("a float"))?);
            }
            JsonFunc::GetBool => {
                let b = match v {
                    Json::Bool(b) => Some(b),
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

/// The documents of a call: stored JSON (JSONB bytes) or JSON text, parsed per row.
enum Docs<'a> {
    Jsonb(&'a LargeBinaryArray),
    Text(JsonFunc, &'a StringArray),
    Null,
}

impl<'a> Docs<'a> {
    fn new(func: JsonFunc, a: &'a ArrayRef) -> Result<Self> {
        if let Some(b) = a.as_binary_opt::<i64>() {
            Ok(Docs::Jsonb(b))
        } else if let Some(s) = a.as_string_opt::<i32>() {
            Ok(Docs::Text(func, s))
        } else if a.null_count() == a.len() {
            Ok(Docs::Null)
        } else {
            Err(Error::Type(format!(
                "{}() needs a JSON document (JSON or JSONB bytes), got {}",
                func.name(),
                a.data_type()
            )))
        }
    }

    /// The JSONB bytes of row `row` (`None` for NULL); text is parsed, invalid text is an error.
    fn get(&self, row: usize) -> Result<Option<Cow<'a, [u8]>>> {
        Ok(match self {
            Docs::Jsonb(b) => b.is_valid(row).then(|| Cow::Borrowed(b.value(row))),
            Docs::Text(func, s) => match s.is_valid(row) {
                false => None,
                true => {
                    let text = s.value(row);
                    let bytes = lancelet_jsonb::parse(text.as_bytes()).map_err(|e| {
                        Error::Type(format!("{}(): the value is not valid JSON ({e}): {text}", func.name()))
                    })?;
                    Some(Cow::Owned(bytes))
                }
            },
            Docs::Null => None,
        })
    }
}

/// Rounds half away from zero; `None` outside the `i64` range (and for NaN).
fn round_to_i64(f: f64) -> Option<i64> {
    let r = f.round();
    // 2^63 is exactly representable; every float below it in magnitude fits.
    let limit = 2f64.powi(63);
    (-limit..limit).contains(&r).then_some(r as i64)
}

/// A field of an object, or an element of an array when `key` is a non-negative integer.
fn get_by_key<'a>(doc: Json<'a>, key: &str) -> Option<Json<'a>> {
    match doc {
        Json::Object(_) => doc.get(key),
        Json::Array(_) => key.parse::<usize>().ok().and_then(|i| doc.index(i)),
        _ => None,
    }
}

/// The result column under construction.
enum Output {
    Str(Vec<Option<String>>),
    Binary(Vec<Option<Vec<u8>>>),
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
            DataType::LargeBinary => Output::Binary(Vec::with_capacity(len)),
            _ => Output::Str(Vec::with_capacity(len)),
        }
    }

    fn push_null(&mut self) {
        match self {
            Output::Str(v) => v.push(None),
            Output::Binary(v) => v.push(None),
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

    fn push_binary(&mut self, b: Vec<u8>) {
        if let Output::Binary(v) = self {
            v.push(Some(b));
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
            Output::Binary(v) => Arc::new(LargeBinaryArray::from_iter(v)),
            Output::Int(v) => Arc::new(Int64Array::from(v)),
            Output::Float(v) => Arc::new(Float64Array::from(v)),
            Output::Bool(v) => Arc::new(BooleanArray::from(v)),
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

    /// Whether the path is `$` alone (the whole document).
    fn is_root(&self) -> bool {
        self.steps.is_empty()
    }

    /// Every value the path selects, in document order.
    fn select<'a>(&self, doc: Json<'a>) -> Vec<Json<'a>> {
        let mut current = vec![doc];
        for step in &self.steps {
            let mut next = Vec::new();
            for v in current {
                match (step, v) {
                    (Step::Key(k), Json::Object(_)) => next.extend(v.get(k)),
                    // Members are stored with their keys sorted.
                    (Step::AllValues, Json::Object(c)) => next.extend(c.items()),
                    (Step::AllItems, Json::Array(c)) => next.extend(c.items()),
                    // Lax mode: `[*]` on a non-array is the value itself.
                    (Step::AllItems, other) => next.push(other),
                    (Step::Items(ranges), Json::Array(c)) => {
                        let items: Vec<Json<'a>> = c.items().collect();
                        let n = items.len() as i64;
                        for (from, to) in ranges {
                            let a = from.resolve(items.len());
                            let b = to.map_or(a, |t| t.resolve(items.len())).min(n - 1);
                            for j in a.max(0)..=b {
                                if let Some(item) = usize::try_from(j).ok().and_then(|j| items.get(j)) {
                                    next.push(*item);
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
