//! Reading JSONB: a validated document as a tree of borrowed [`Value`]s.

use crate::format::{self, read_u32};
use crate::Number;

/// One JSON value inside a validated JSONB document (see [`decode`]). It borrows the
/// document's bytes: strings, arrays and objects are not copied.
///
/// ```
/// use lancelet_jsonb::{decode, parse, Value};
/// let doc = parse(br#"{"tags": ["a", "b"], "n": 3}"#).unwrap();
/// let root = decode(&doc).unwrap();
/// let Some(Value::Array(tags)) = root.get("tags") else { panic!() };
/// assert_eq!(tags.len(), 2);
/// assert_eq!(root.get("n").unwrap().to_jsonb(), parse(b"3").unwrap());
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Value<'a> {
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A number.
    Number(Number),
    /// A string.
    String(&'a str),
    /// An array.
    Array(Container<'a>),
    /// An object.
    Object(Container<'a>),
}

/// An array or object inside a validated document.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Container<'a> {
    /// Exactly the container's encoding: header, jentries and payloads.
    bytes: &'a [u8],
    count: usize,
    object: bool,
}

/// Validates `bytes` as one JSONB document and returns its root value; `None` when they
/// are not JSONB (a wrong header, a length past the end, an unknown type or number tag,
/// a key that is not a string, a string that is not UTF-8, at any depth). Bytes after the
/// document are ignored, as pylance ignores them.
///
/// ```
/// let doc = lancelet_jsonb::parse(b"[1, 2]").unwrap();
/// assert!(lancelet_jsonb::decode(&doc).is_some());
/// assert!(lancelet_jsonb::decode(&doc[..doc.len() - 1]).is_none());
/// assert!(lancelet_jsonb::decode(b"[1, 2]").is_none());
/// ```
pub fn decode(bytes: &[u8]) -> Option<Value<'_>> {
    let header = read_u32(bytes, 0)?;
    let root = match header & format::HEADER_KIND {
        // The count of a scalar container is not looked at (pylance ignores it too).
        format::SCALAR => {
            let jentry = read_u32(bytes, 4)?;
            if jentry & format::ENTRY_TYPE == format::CONTAINER {
                return None;
            }
            let len = (jentry & format::ENTRY_LEN) as usize;
            Value::from_entry(jentry, bytes.get(8..8usize.checked_add(len)?)?)?
        }
        format::ARRAY | format::OBJECT => Container::new(bytes)?.into_value(),
        _ => return None,
    };
    validate(root).then_some(root)
}

/// Whether every container under `root` (itself included) decodes, walking with an
/// explicit stack so that deep nesting cannot overflow the call stack.
fn validate(root: Value<'_>) -> bool {
    let mut stack = Vec::new();
    if let Value::Array(c) | Value::Object(c) = root {
        stack.push(c);
    }
    while let Some(c) = stack.pop() {
        for raw in c.raw_entries() {
            let Some(raw) = raw else { return false };
            if let Some(key) = raw.key {
                if std::str::from_utf8(key).is_err() {
                    return false;
                }
            }
            match Value::from_entry(raw.jentry, raw.payload) {
                None => return false,
                Some(Value::Array(n) | Value::Object(n)) => stack.push(n),
                Some(_) => {}
            }
        }
    }
    true
}

impl<'a> Value<'a> {
    /// The value of one jentry and its payload; `None` for anything Lance does not write.
    fn from_entry(jentry: u32, payload: &'a [u8]) -> Option<Value<'a>> {
        if jentry & format::ENTRY_OFFSET_FLAG != 0 {
            return None;
        }
        Some(match jentry & format::ENTRY_TYPE {
            format::NULL => Value::Null,
            format::STRING => Value::String(std::str::from_utf8(payload).ok()?),
            format::NUMBER => Value::Number(Number::decode(payload)?),
            format::FALSE => Value::Bool(false),
            format::TRUE => Value::Bool(true),
            format::CONTAINER => Container::new(payload)?.into_value(),
            _ => return None,
        })
    }

    /// The member `key` of an object (the first one, should a foreign writer have stored
    /// it twice); `None` for other values.
    pub fn get(&self, key: &str) -> Option<Value<'a>> {
        match self {
            Value::Object(c) => c.entries().find(|(k, _)| *k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// Element `i` of an array; `None` for other values.
    pub fn index(&self, i: usize) -> Option<Value<'a>> {
        match self {
            Value::Array(c) => c.items().nth(i),
            _ => None,
        }
    }

    /// The value as a JSONB document of its own: arrays and objects as stored, scalars in
    /// a scalar container (what pylance's `json_get` returns).
    pub fn to_jsonb(&self) -> Vec<u8> {
        let mut out = Vec::new();
        match self {
            Value::Array(c) | Value::Object(c) => out.extend_from_slice(c.bytes),
            scalar => {
                out.extend_from_slice(&format::SCALAR.to_be_bytes());
                let at = out.len();
                out.extend_from_slice(&[0; 4]);
                let jentry = scalar.encode_scalar(&mut out);
                out[at..at + 4].copy_from_slice(&jentry.to_be_bytes());
            }
        }
        out
    }

    /// Appends a scalar's payload to `out` and returns its jentry (a container's jentry is
    /// returned with no payload written: callers handle containers themselves).
    fn encode_scalar(&self, out: &mut Vec<u8>) -> u32 {
        match self {
            Value::Null => format::NULL,
            Value::Bool(true) => format::TRUE,
            Value::Bool(false) => format::FALSE,
            Value::Number(n) => {
                let start = out.len();
                n.encode(out);
                format::NUMBER | (out.len() - start) as u32
            }
            // A string came out of a jentry, so its length fits one.
            Value::String(s) => {
                out.extend_from_slice(s.as_bytes());
                format::STRING | (s.len() as u32 & format::ENTRY_LEN)
            }
            Value::Array(_) | Value::Object(_) => format::CONTAINER,
        }
    }

    /// The compact text of the value, as pylance prints it (see [`crate::to_text`]).
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        self.write_text(&mut out);
        out
    }

    /// Appends [`Value::to_text`] to `out`. Nesting is walked with an explicit stack.
    pub fn write_text(&self, out: &mut String) {
        enum Frame<'a> {
            Array(Items<'a>, bool),
            Object(Entries<'a>, bool),
        }
        let open = |v: &Value<'a>, out: &mut String| -> Option<Frame<'a>> {
            match v {
                Value::Array(c) => {
                    out.push('[');
                    Some(Frame::Array(c.items(), true))
                }
                Value::Object(c) => {
                    out.push('{');
                    Some(Frame::Object(c.entries(), true))
                }
                scalar => {
                    scalar.write_scalar(out);
                    None
                }
            }
        };
        let mut stack: Vec<Frame<'a>> = Vec::new();
        stack.extend(open(self, out));
        while let Some(top) = stack.last_mut() {
            let next = match top {
                Frame::Array(items, first) => match items.next() {
                    Some(v) => {
                        if !std::mem::take(first) {
                            out.push(',');
                        }
                        Some(v)
                    }
                    None => {
                        out.push(']');
                        None
                    }
                },
                Frame::Object(entries, first) => match entries.next() {
                    Some((k, v)) => {
                        if !std::mem::take(first) {
                            out.push(',');
                        }
                        crate::write_string(out, k);
                        out.push(':');
                        Some(v)
                    }
                    None => {
                        out.push('}');
                        None
                    }
                },
            };
            match next {
                Some(v) => stack.extend(open(&v, out)),
                None => {
                    stack.pop();
                }
            }
        }
    }

    fn write_scalar(&self, out: &mut String) {
        match self {
            Value::Null => out.push_str("null"),
            Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Value::Number(n) => n.write_text(out),
            Value::String(s) => crate::write_string(out, s),
            Value::Array(_) | Value::Object(_) => {}
        }
    }
}

/// One stored member: its key bytes (objects), jentry and payload.
struct RawEntry<'a> {
    key: Option<&'a [u8]>,
    jentry: u32,
    payload: &'a [u8],
}

impl<'a> Container<'a> {
    /// Checks the header, that every jentry and payload lies inside `bytes`, and that
    /// object keys are strings; the members themselves are checked by [`validate`].
    fn new(bytes: &'a [u8]) -> Option<Container<'a>> {
        let header = read_u32(bytes, 0)?;
        let object = match header & format::HEADER_KIND {
            format::ARRAY => false,
            format::OBJECT => true,
            _ => return None,
        };
        let count = (header & format::HEADER_COUNT) as usize;
        let jentries = if object { count.checked_mul(2)? } else { count };
        let payload_start = jentries.checked_mul(4)?.checked_add(4)?;
        if payload_start > bytes.len() {
            return None;
        }
        let mut end = payload_start;
        for i in 0..jentries {
            let jentry = read_u32(bytes, 4 + 4 * i)?;
            if object && i < count && jentry & (format::ENTRY_TYPE | format::ENTRY_OFFSET_FLAG) != format::STRING {
                return None;
            }
            end = end.checked_add((jentry & format::ENTRY_LEN) as usize)?;
        }
        Some(Container {
            bytes: bytes.get(..end)?,
            count,
            object,
        })
    }

    fn into_value(self) -> Value<'a> {
        if self.object {
            Value::Object(self)
        } else {
            Value::Array(self)
        }
    }

    /// Number of elements (arrays) or members (objects).
    pub fn len(&self) -> usize {
        self.count
    }

    /// Whether it has no elements or members.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The container's own encoding (a JSONB document of its own).
    pub fn as_bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// The stored members in order.
    fn raw_entries(&self) -> RawEntries<'a> {
        let jentries = if self.object { 2 * self.count } else { self.count };
        let key_at = 4 + 4 * jentries;
        let mut value_at = key_at;
        if self.object {
            for i in 0..self.count {
                value_at += read_u32(self.bytes, 4 + 4 * i).map_or(0, |j| (j & format::ENTRY_LEN) as usize);
            }
        }
        RawEntries {
            c: *self,
            i: 0,
            key_at,
            value_at,
        }
    }

    /// The elements of an array (for an object: its member values), in stored order.
    pub fn items(&self) -> Items<'a> {
        Items(self.raw_entries())
    }

    /// The members of an object as `(key, value)`, in stored (sorted) order; empty for an
    /// array.
    pub fn entries(&self) -> Entries<'a> {
        let mut raw = self.raw_entries();
        if !self.object {
            raw.i = self.count;
        }
        Entries(raw)
    }
}

/// Walks the jentries and payloads of a checked container. Every container reachable from
/// [`decode`] was checked, so the `None` items (a length past the end) do not occur; they
/// end the walk rather than panic.
struct RawEntries<'a> {
    c: Container<'a>,
    i: usize,
    key_at: usize,
    value_at: usize,
}

impl<'a> Iterator for RawEntries<'a> {
    type Item = Option<RawEntry<'a>>;

    fn next(&mut self) -> Option<Option<RawEntry<'a>>> {
        if self.i >= self.c.count {
            return None;
        }
        let i = self.i;
        self.i += 1;
        let bytes = self.c.bytes;
        let slice = |at: &mut usize, jentry: u32| -> Option<&'a [u8]> {
            let len = (jentry & format::ENTRY_LEN) as usize;
            let s = bytes.get(*at..at.checked_add(len)?)?;
            *at += len;
            Some(s)
        };
        let item = (|| {
            let key = if self.c.object {
                Some(slice(&mut self.key_at, read_u32(bytes, 4 + 4 * i)?)?)
            } else {
                None
            };
            let slot = if self.c.object { self.c.count + i } else { i };
            let jentry = read_u32(bytes, 4 + 4 * slot)?;
            let payload = slice(&mut self.value_at, jentry)?;
            Some(RawEntry { key, jentry, payload })
        })();
        if item.is_none() {
            self.i = self.c.count;
        }
        Some(item)
    }
}

/// The elements of an array (or the values of an object), from [`Container::items`].
pub struct Items<'a>(RawEntries<'a>);

impl<'a> Iterator for Items<'a> {
    type Item = Value<'a>;
    fn next(&mut self) -> Option<Value<'a>> {
        let raw = self.0.next()??;
        Value::from_entry(raw.jentry, raw.payload)
    }
}

/// The members of an object, from [`Container::entries`].
pub struct Entries<'a>(RawEntries<'a>);

impl<'a> Iterator for Entries<'a> {
    type Item = (&'a str, Value<'a>);
    fn next(&mut self) -> Option<(&'a str, Value<'a>)> {
        let raw = self.0.next()??;
        let key = std::str::from_utf8(raw.key?).ok()?;
        Some((key, Value::from_entry(raw.jentry, raw.payload)?))
    }
}
