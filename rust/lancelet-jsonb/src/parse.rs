//! JSON text to JSONB, with the lenient grammar pylance 14 accepts and its error messages.
//!
//! Beyond RFC 8259 the grammar takes: empty (or blank) text as `null`; `null`, `true`,
//! `false`, `NaN` and `Infinity` in any letter case; `-Infinity`, `+Infinity`; numbers with
//! a leading `+`, leading zeros, `.5`, `1.` (an integer) and hex (`0x1F`, `0x1.8`); strings
//! in single quotes, with raw control characters and `\u{XXXX}` escapes (a lone surrogate
//! escape stays as its six characters); object keys in single quotes or unquoted
//! (`{a: 1}`); array slots left empty as `null` (`[1,,2]`, `[1,]`); the two-character
//! sequences `\n`, `\r`, `\t` and `\x0C` as whitespace between tokens. Duplicate keys are an
//! error. Positions in errors are byte offsets, counted as pylance counts them.
//!
//! The parser keeps its own stack of open containers, so nesting depth is bounded by memory,
//! not by the call stack. Containers are collected in an arena as they close (with their
//! encoded sizes), then the document is written in one pass, each byte once.

use std::borrow::Cow;
use std::ops::Range;

use crate::format;
use crate::Number;

/// Why text is not JSON, with pylance's wording.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ParseErrorKind {
    /// The text ended inside a value.
    Eof,
    /// A malformed number.
    InvalidNumber,
    /// A string that is not UTF-8.
    InvalidString,
    /// A keyword (`null`, `true`, ...) misspelt.
    ExpectedIdent,
    /// A character that cannot start a value.
    ExpectedValue,
    /// An object key not followed by `:`.
    ExpectedColon,
    /// An array element not followed by `,` or `]`.
    ExpectedArrayCommaOrEnd,
    /// An object member not followed by `,` or `}`.
    ExpectedObjectCommaOrEnd,
    /// Text after the value.
    TrailingCharacters,
    /// A backslash escape of this byte is not defined.
    InvalidEscaped(u8),
    /// This byte is not a hex digit of a `\u` escape.
    InvalidHex(u8),
    /// A `\u` escape cut short.
    UnexpectedEndOfHexEscape,
    /// An object has this key twice.
    DuplicateKey(String),
    /// An unquoted key starts with a digit.
    KeyIsNumber,
    /// An unquoted key is empty or has a character keys cannot have.
    KeyInvalidCharacter,
    /// A string or container is larger than a JSONB length field holds (256 MiB).
    TooLarge,
}

impl std::fmt::Display for ParseErrorKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ParseErrorKind::Eof => f.write_str("EOF while parsing a value"),
            ParseErrorKind::InvalidNumber => f.write_str("invalid number"),
            ParseErrorKind::InvalidString => f.write_str("invalid string"),
            ParseErrorKind::ExpectedIdent => f.write_str("expected ident"),
            ParseErrorKind::ExpectedValue => f.write_str("expected value"),
            ParseErrorKind::ExpectedColon => f.write_str("expected `:`"),
            ParseErrorKind::ExpectedArrayCommaOrEnd => f.write_str("expected `,` or `]`"),
            ParseErrorKind::ExpectedObjectCommaOrEnd => f.write_str("expected `,` or `}`"),
            ParseErrorKind::TrailingCharacters => f.write_str("trailing characters"),
            ParseErrorKind::InvalidEscaped(b) => write!(f, "invalid escaped '{b:X}'"),
            ParseErrorKind::InvalidHex(b) => write!(f, "invalid hex '{b:X}'"),
            ParseErrorKind::UnexpectedEndOfHexEscape => f.write_str("unexpected end of hex escape"),
            ParseErrorKind::DuplicateKey(k) => write!(f, "duplicate object attribute \"{k}\""),
            ParseErrorKind::KeyIsNumber => f.write_str("object attribute name cannot be a number"),
            ParseErrorKind::KeyInvalidCharacter => f.write_str("object attribute name cannot be invalid character"),
            ParseErrorKind::TooLarge => f.write_str("value too large for JSONB (over 256 MiB)"),
        }
    }
}

/// Text that is not JSON: what is wrong and the byte position where it was found.
///
/// ```
/// let e = lancelet_jsonb::parse(br#"{"a":1,"a":2}"#).unwrap_err();
/// assert_eq!(e.to_string(), r#"duplicate object attribute "a", pos 10"#);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{kind}, pos {pos}")]
pub struct ParseError {
    /// What is wrong.
    pub kind: ParseErrorKind,
    /// Byte offset where it was found (as pylance counts it: usually just past the byte).
    pub pos: usize,
}

type Result<T> = std::result::Result<T, ParseError>;

/// Parses JSON text into JSONB bytes (see the module docs for the grammar).
///
/// ```
/// let b = lancelet_jsonb::parse(b"[1,]").unwrap();
/// assert_eq!(lancelet_jsonb::to_text(&b), "[1,null]");
/// assert_eq!(
///     lancelet_jsonb::parse(b"not json").unwrap_err().to_string(),
///     "expected ident, pos 2"
/// );
/// ```
pub fn parse(text: &[u8]) -> Result<Vec<u8>> {
    let mut p = Parser { buf: text, idx: 0 };
    let mut stack: Vec<Frame<'_>> = Vec::new();
    let mut arena: Vec<Built<'_>> = Vec::new();
    let mut want_value = true;
    loop {
        let item = if want_value {
            match p.value_start()? {
                Start::Item(item) => item,
                Start::Open(frame) => {
                    stack.push(frame);
                    want_value = false;
                    continue;
                }
            }
        } else {
            let Some(frame) = stack.last_mut() else {
                // Not reachable: values are delivered to the top frame or end the parse.
                return Err(p.error(ParseErrorKind::ExpectedValue));
            };
            match p.container_step(frame)? {
                Step::Value => {
                    want_value = true;
                    continue;
                }
                Step::EmptySlot => Item::Null,
                Step::Close => {
                    let Some(frame) = stack.pop() else {
                        return Err(p.error(ParseErrorKind::ExpectedValue));
                    };
                    arena.push(frame.close(&p)?);
                    Item::Container(arena.len() - 1)
                }
            }
        };
        match stack.last_mut() {
            Some(frame) => {
                frame.push(item, &arena, &p)?;
                want_value = false;
            }
            None => {
                p.skip_unused();
                if p.idx < p.buf.len() {
                    p.step();
                    return Err(p.error(ParseErrorKind::TrailingCharacters));
                }
                let jentry = item.jentry(&arena, &p)?;
                return Ok(write(item, jentry, &arena));
            }
        }
    }
}

/// A finished value, waiting to be stored in its parent (or to be the document).
enum Item<'a> {
    Null,
    Bool(bool),
    Number(Number),
    String(Cow<'a, str>),
    /// A closed array or object, by its index in the arena.
    Container(usize),
}

impl Item<'_> {
    /// The jentry for the item, whose payload is `len` bytes.
    fn jentry(&self, arena: &[Built<'_>], p: &Parser<'_>) -> Result<u32> {
        let (kind, len) = match self {
            Item::Null => (format::NULL, 0),
            Item::Bool(true) => (format::TRUE, 0),
            Item::Bool(false) => (format::FALSE, 0),
            Item::Number(n) => (format::NUMBER, n.encoded_len()),
            Item::String(s) => (format::STRING, s.len()),
            Item::Container(i) => (format::CONTAINER, arena.get(*i).map_or(0, |b| b.size)),
        };
        Ok(kind | entry_len(len, p)?)
    }

    /// Appends a scalar's payload (containers are written by [`write`]).
    fn write_scalar(&self, out: &mut Vec<u8>) {
        match self {
            Item::Number(n) => n.encode(out),
            Item::String(s) => out.extend_from_slice(s.as_bytes()),
            Item::Null | Item::Bool(_) | Item::Container(_) => {}
        }
    }
}

/// `len` as a jentry length, or [`ParseErrorKind::TooLarge`].
fn entry_len(len: usize, p: &Parser<'_>) -> Result<u32> {
    u32::try_from(len)
        .ok()
        .filter(|l| *l <= format::ENTRY_LEN)
        .ok_or_else(|| p.error(ParseErrorKind::TooLarge))
}

/// One element or member of a container.
struct Child<'a> {
    key: Option<Cow<'a, str>>,
    item: Item<'a>,
    jentry: u32,
}

/// A closed container: its members in stored order and its encoded size.
struct Built<'a> {
    object: bool,
    children: Vec<Child<'a>>,
    size: usize,
}

/// Writes the document: a top-level scalar wrapped in a scalar container, or the root
/// container and everything under it, each byte once, walking with an explicit stack.
fn write(root: Item<'_>, root_jentry: u32, arena: &[Built<'_>]) -> Vec<u8> {
    let Item::Container(root) = root else {
        let mut out = Vec::new();
        out.extend_from_slice(&format::SCALAR.to_be_bytes());
        out.extend_from_slice(&root_jentry.to_be_bytes());
        root.write_scalar(&mut out);
        return out;
    };
    let Some(first) = arena.get(root) else {
        return Vec::new();
    };
    let mut out = Vec::with_capacity(first.size);
    let head = |b: &Built<'_>, out: &mut Vec<u8>| {
        let kind = if b.object { format::OBJECT } else { format::ARRAY };
        out.extend_from_slice(&(kind | b.children.len() as u32).to_be_bytes());
        for c in &b.children {
            if let Some(k) = &c.key {
                out.extend_from_slice(&(format::STRING | k.len() as u32).to_be_bytes());
            }
        }
        for c in &b.children {
            out.extend_from_slice(&c.jentry.to_be_bytes());
        }
        for c in &b.children {
            if let Some(k) = &c.key {
                out.extend_from_slice(k.as_bytes());
            }
        }
    };
    head(first, &mut out);
    let mut stack = vec![(first, 0usize)];
    while let Some((built, next)) = stack.last_mut() {
        let Some(child) = built.children.get(*next) else {
            stack.pop();
            continue;
        };
        *next += 1;
        match &child.item {
            Item::Container(i) => {
                if let Some(b) = arena.get(*i) {
                    head(b, &mut out);
                    stack.push((b, 0));
                }
            }
            scalar => scalar.write_scalar(&mut out),
        }
    }
    out
}

/// An open array or object.
enum Frame<'a> {
    Array {
        first: bool,
        children: Vec<Child<'a>>,
    },
    Object {
        first: bool,
        /// The key whose value is being parsed, and the position after it.
        pending: Option<(Cow<'a, str>, usize)>,
        /// Members with the position after their key (where a duplicate is reported).
        members: Vec<(Child<'a>, usize)>,
    },
}

impl<'a> Frame<'a> {
    fn push(&mut self, item: Item<'a>, arena: &[Built<'a>], p: &Parser<'a>) -> Result<()> {
        let jentry = item.jentry(arena, p)?;
        match self {
            Frame::Array { children, .. } => children.push(Child {
                key: None,
                item,
                jentry,
            }),
            Frame::Object { pending, members, .. } => {
                let Some((key, pos)) = pending.take() else {
                    return Err(p.error(ParseErrorKind::ExpectedColon));
                };
                entry_len(key.len(), p)?;
                members.push((
                    Child {
                        key: Some(key),
                        item,
                        jentry,
                    },
                    pos,
                ));
            }
        }
        Ok(())
    }

    /// The closed container; an object gets its keys sorted and checked for duplicates.
    fn close(self, p: &Parser<'_>) -> Result<Built<'a>> {
        let (object, children) = match self {
            Frame::Array { children, .. } => (false, children),
            Frame::Object { mut members, .. } => {
                // Stable: of two equal keys the later one is reported, as pylance does.
                members.sort_by(|a, b| a.0.key.as_deref().cmp(&b.0.key.as_deref()));
                if let Some(w) = members.windows(2).find(|w| w[0].0.key == w[1].0.key) {
                    return Err(ParseError {
                        kind: ParseErrorKind::DuplicateKey(w[1].0.key.as_deref().unwrap_or_default().to_string()),
                        pos: w[1].1,
                    });
                }
                (true, members.into_iter().map(|(c, _)| c).collect())
            }
        };
        if u32::try_from(children.len()).map_or(true, |n| n > format::HEADER_COUNT) {
            return Err(p.error(ParseErrorKind::TooLarge));
        }
        let per_child = if object { 8 } else { 4 };
        let mut size = 4 + per_child * children.len();
        for c in &children {
            size += (c.jentry & format::ENTRY_LEN) as usize + c.key.as_ref().map_or(0, |k| k.len());
        }
        Ok(Built { object, children, size })
    }
}

/// What follows in an open container.
enum Step {
    /// A value: parse it.
    Value,
    /// An empty array slot (`[1,,2]`, `[1,]`): a `null`.
    EmptySlot,
    /// The container closed.
    Close,
}

/// How a value starts.
enum Start<'a> {
    /// A scalar, already read.
    Item(Item<'a>),
    /// `[` or `{`, consumed.
    Open(Frame<'a>),
}

struct Parser<'a> {
    buf: &'a [u8],
    idx: usize,
}

impl<'a> Parser<'a> {
    fn error(&self, kind: ParseErrorKind) -> ParseError {
        ParseError { kind, pos: self.idx }
    }

    fn peek(&self) -> Option<u8> {
        self.buf.get(self.idx).copied()
    }

    /// The current byte, or an end-of-text error.
    fn next(&self) -> Result<u8> {
        self.peek().ok_or_else(|| self.error(ParseErrorKind::Eof))
    }

    fn step(&mut self) {
        self.idx = self.idx.saturating_add(1);
    }

    fn step_by(&mut self, n: usize) {
        self.idx = self.idx.saturating_add(n);
    }

    /// Consumes one byte, which must be `lower` or `upper`.
    fn either(&mut self, lower: u8, upper: u8) -> Result<()> {
        let c = self.next()?;
        self.step();
        if c == lower || c == upper {
            Ok(())
        } else {
            Err(self.error(ParseErrorKind::ExpectedIdent))
        }
    }

    /// Consumes `word` (lower-case ASCII) in any letter case.
    fn keyword(&mut self, word: &[u8]) -> Result<()> {
        for &c in word {
            self.either(c, c.to_ascii_uppercase())?;
        }
        Ok(())
    }

    /// Skips whitespace, and the escapes `\n`, `\r`, `\t`, `\x0C` written out as text.
    fn skip_unused(&mut self) {
        while let Some(c) = self.peek() {
            if c.is_ascii_whitespace() {
                self.step();
                continue;
            }
            let rest = &self.buf[self.idx..];
            if rest.len() > 1 && c == b'\\' {
                if matches!(rest[1], b'n' | b'r' | b't') {
                    self.step_by(2);
                    continue;
                }
                if rest.len() > 3 && rest[1..4] == *b"x0C" {
                    self.step_by(4);
                    continue;
                }
            }
            break;
        }
    }

    /// Reads the start of a value: a whole scalar, or the bracket opening a container.
    /// The end of the text here is a `null`.
    fn value_start(&mut self) -> Result<Start<'a>> {
        self.skip_unused();
        let Some(c) = self.peek() else {
            return Ok(Start::Item(Item::Null));
        };
        let item = match c {
            b'n' | b'N' => {
                let at = self.idx;
                if self.keyword(b"null").is_ok() {
                    Item::Null
                } else {
                    self.idx = at;
                    self.keyword(b"nan")?;
                    Item::Number(Number::Float(f64::NAN))
                }
            }
            b't' | b'T' => {
                self.keyword(b"true")?;
                Item::Bool(true)
            }
            b'f' | b'F' => {
                self.keyword(b"false")?;
                Item::Bool(false)
            }
            b'i' | b'I' => {
                self.keyword(b"infinity")?;
                Item::Number(Number::Float(f64::INFINITY))
            }
            b'0'..=b'9' | b'-' | b'+' | b'.' => Item::Number(self.number()?),
            b'"' | b'\'' => {
                self.step();
                Item::String(self.quoted(c)?)
            }
            b'[' => {
                self.step();
                return Ok(Start::Open(Frame::Array {
                    first: true,
                    children: Vec::new(),
                }));
            }
            b'{' => {
                self.step();
                return Ok(Start::Open(Frame::Object {
                    first: true,
                    pending: None,
                    members: Vec::new(),
                }));
            }
            _ => {
                self.step();
                return Err(self.error(ParseErrorKind::ExpectedValue));
            }
        };
        Ok(Start::Item(item))
    }

    /// Reads up to the next value of an open container, or its end.
    fn container_step(&mut self, frame: &mut Frame<'a>) -> Result<Step> {
        let (first, close, comma_error) = match frame {
            Frame::Array { first, .. } => (first, b']', ParseErrorKind::ExpectedArrayCommaOrEnd),
            Frame::Object { first, .. } => (first, b'}', ParseErrorKind::ExpectedObjectCommaOrEnd),
        };
        self.skip_unused();
        let c = self.next()?;
        if c == close {
            self.step();
            return Ok(Step::Close);
        }
        if !std::mem::take(first) {
            if c != b',' {
                return Err(self.error(comma_error));
            }
            self.step();
        }
        self.skip_unused();
        match frame {
            Frame::Array { .. } => Ok(if matches!(self.peek(), Some(b',' | b']')) {
                Step::EmptySlot
            } else {
                Step::Value
            }),
            Frame::Object { pending, .. } => {
                let key = self.key()?;
                let pos = self.idx;
                self.skip_unused();
                if self.next()? != b':' {
                    return Err(self.error(ParseErrorKind::ExpectedColon));
                }
                self.step();
                *pending = Some((key, pos));
                Ok(Step::Value)
            }
        }
    }

    /// An object key: quoted (either quote), or a bare name of letters, digits, `_`, `$`
    /// and non-ASCII characters that does not start with a digit.
    fn key(&mut self) -> Result<Cow<'a, str>> {
        if let Some(q @ (b'"' | b'\'')) = self.peek() {
            self.step();
            return self.quoted(q);
        }
        let start = self.idx;
        if self.next()?.is_ascii_digit() {
            self.step();
            return Err(self.error(ParseErrorKind::KeyIsNumber));
        }
        loop {
            let c = self.next()?;
            if c.is_ascii_alphanumeric() || c == b'_' || c == b'$' {
                self.step();
            } else if c >= 0x80 {
                // A whole UTF-8 sequence, by its lead byte.
                let width = match c {
                    0xF0.. => 4,
                    0xE0.. => 3,
                    0xC0.. => 2,
                    _ => return Err(self.error(ParseErrorKind::KeyInvalidCharacter)),
                };
                self.step_by(width);
            } else {
                break;
            }
        }
        if self.idx == start {
            return Err(self.error(ParseErrorKind::KeyInvalidCharacter));
        }
        let raw = self.buf.get(start..self.idx).unwrap_or_default();
        std::str::from_utf8(raw)
            .map(Cow::Borrowed)
            .map_err(|_| self.error(ParseErrorKind::InvalidString))
    }

    /// A string whose opening `quote` was consumed. A first pass finds the closing quote
    /// (stepping over escapes, four or six bytes for `\u`); escapes are then decoded.
    fn quoted(&mut self, quote: u8) -> Result<Cow<'a, str>> {
        let start = self.idx;
        let mut escaped = false;
        loop {
            let c = self.next()?;
            self.step();
            if c == b'\\' {
                escaped = true;
                if self.next()? == b'u' {
                    self.step();
                    let width = if self.next()? == b'{' { 6 } else { 4 };
                    self.step_by(width);
                } else {
                    self.step();
                }
            } else if c == quote {
                break;
            }
        }
        let raw = self.buf.get(start..self.idx - 1).unwrap_or_default();
        if escaped {
            unescape(raw, start + 1).map(Cow::Owned)
        } else {
            std::str::from_utf8(raw)
                .map(Cow::Borrowed)
                .map_err(|_| self.error(ParseErrorKind::InvalidString))
        }
    }

    fn digits(&mut self) -> usize {
        let start = self.idx;
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.step();
        }
        self.idx - start
    }

    fn hex_digits(&mut self) -> usize {
        let start = self.idx;
        while self.peek().is_some_and(|c| c.is_ascii_hexdigit()) {
            self.step();
        }
        self.idx - start
    }

    /// A number. Integers without exponent and fraction digits (`12`, `-3`, `1.`) within
    /// `u64` or `i64` stay integers; everything else is read as `f64`.
    fn number(&mut self) -> Result<Number> {
        let invalid = |p: &Self| p.error(ParseErrorKind::InvalidNumber);
        let start = self.idx;
        let mut negative = false;
        match self.peek() {
            Some(b'-') => {
                negative = true;
                self.step();
            }
            Some(b'+') => self.step(),
            _ => {}
        }
        let mut leading_zeros = 0usize;
        while self.peek() == Some(b'0') {
            leading_zeros += 1;
            self.step();
        }
        // Significant digits (after the leading zeros), those after the point, the
        // integer they make (only the first 38 count; more than 38 is a float anyway).
        const EXACT_DIGITS: usize = 38;
        const SCANNED_DIGITS: usize = 76;
        let (mut precision, mut scale, mut value, mut fraction) = (0usize, 0usize, 0i128, false);
        while precision < SCANNED_DIGITS {
            match self.peek() {
                Some(d @ b'0'..=b'9') => {
                    if precision < EXACT_DIGITS {
                        value = value * 10 + i128::from(d - b'0');
                    }
                    precision += 1;
                    if fraction {
                        scale += 1;
                    }
                    self.step();
                }
                Some(b'.') => {
                    if fraction {
                        return Err(invalid(self));
                    }
                    fraction = true;
                    self.step();
                }
                _ => break,
            }
        }
        if precision == SCANNED_DIGITS {
            if !fraction {
                precision += self.digits();
                if self.peek() == Some(b'.') {
                    fraction = true;
                    self.step();
                }
            }
            if fraction {
                let n = self.digits();
                precision += n;
                scale += n;
            }
        }
        if leading_zeros == 0 && precision == 0 {
            if !fraction {
                match self.peek() {
                    Some(b'i' | b'I') => {
                        self.keyword(b"infinity")?;
                        let inf = if negative { f64::NEG_INFINITY } else { f64::INFINITY };
                        return Ok(Number::Float(inf));
                    }
                    Some(b'n' | b'N') => {
                        self.keyword(b"nan")?;
                        if negative {
                            return Err(invalid(self));
                        }
                        return Ok(Number::Float(f64::NAN));
                    }
                    _ => {}
                }
            }
            return Err(invalid(self));
        }
        if leading_zeros == 1 && precision == 0 && !fraction && matches!(self.peek(), Some(b'x' | b'X')) {
            self.step();
            return self.hex(negative);
        }
        let mut exponent = false;
        if matches!(self.peek(), Some(b'e' | b'E')) {
            exponent = true;
            self.step();
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.step();
            }
            if self.digits() == 0 {
                return Err(invalid(self));
            }
        }
        if !exponent && precision <= EXACT_DIGITS && scale == 0 {
            let v = if negative { -value } else { value };
            if let Ok(u) = u64::try_from(v) {
                return Ok(Number::UInt(u));
            }
            if let Ok(i) = i64::try_from(v) {
                return Ok(Number::Int(i));
            }
        }
        let text = self.buf.get(start..self.idx).unwrap_or_default();
        std::str::from_utf8(text)
            .ok()
            .and_then(|t| t.parse::<f64>().ok())
            .map(Number::Float)
            .ok_or_else(|| invalid(self))
    }

    /// The digits of a hex number after `0x`: an integer (a float beyond the integer
    /// ranges), or with `.` a fraction of hex digits.
    fn hex(&mut self, negative: bool) -> Result<Number> {
        let invalid = |p: &Self| p.error(ParseErrorKind::InvalidNumber);
        let int_start = self.idx;
        if self.hex_digits() == 0 {
            return Err(invalid(self));
        }
        let int_end = self.idx;
        let radix = |p: &Self, r: Range<usize>| -> Result<u128> {
            let digits = p.buf.get(r).unwrap_or_default();
            std::str::from_utf8(digits)
                .ok()
                .and_then(|d| u128::from_str_radix(d, 16).ok())
                .ok_or_else(|| invalid(p))
        };
        if self.peek() == Some(b'.') {
            self.step();
            let frac_start = self.idx;
            let frac_len = self.hex_digits();
            if frac_len == 0 {
                return Err(invalid(self));
            }
            let int = radix(self, int_start..int_end)?;
            let frac = radix(self, frac_start..self.idx)?;
            let scale = 16f64.powi(i32::try_from(frac_len).unwrap_or(i32::MAX));
            let v = int as f64 + frac as f64 / scale;
            return Ok(Number::Float(if negative { -v } else { v }));
        }
        let v = radix(self, int_start..int_end)?;
        Ok(if negative {
            if v <= 1u128 << 63 {
                Number::Int(i64::try_from(-(v as i128)).unwrap_or(i64::MIN))
            } else {
                Number::Float(-(v as f64))
            }
        } else {
            match u64::try_from(v) {
                Ok(u) => Number::UInt(u),
                Err(_) => Number::Float(v as f64),
            }
        })
    }
}

/// Decodes the escapes of string content `raw`. `pos` counts as pylance counts: the
/// position of the content's first byte plus one, advanced per byte read.
fn unescape(raw: &[u8], mut pos: usize) -> Result<String> {
    let err = |kind: ParseErrorKind, pos: usize| ParseError { kind, pos };
    let mut out: Vec<u8> = Vec::with_capacity(raw.len());
    let mut i = 0;
    while let Some(&b) = raw.get(i) {
        pos += 1;
        i += 1;
        if b != b'\\' {
            out.push(b);
            continue;
        }
        let Some(&e) = raw.get(i) else {
            return Err(err(ParseErrorKind::UnexpectedEndOfHexEscape, pos));
        };
        pos += 1;
        i += 1;
        let simple = match e {
            b'\\' => b'\\',
            b'"' => b'"',
            b'/' => b'/',
            b'b' => 0x08,
            b'f' => 0x0C,
            b'n' => b'\n',
            b'r' => b'\r',
            b't' => b'\t',
            b'u' => {
                let high_digits = hex4(raw, &mut i, &mut pos)?;
                let high = hex_value(high_digits, pos)?;
                match high {
                    0xDC00..=0xDFFF => literal(&mut out, high_digits),
                    0xD800..=0xDBFF => {
                        if raw.get(i..i + 2) != Some(b"\\u".as_slice()) {
                            literal(&mut out, high_digits);
                        } else {
                            i += 2;
                            pos += 2;
                            let low_digits = hex4(raw, &mut i, &mut pos)?;
                            let low = hex_value(low_digits, pos)?;
                            if (0xDC00..=0xDFFF).contains(&low) {
                                let c = 0x1_0000 + ((u32::from(high) - 0xD800) << 10) + (u32::from(low) - 0xDC00);
                                push_char(&mut out, char::from_u32(c));
                            } else {
                                literal(&mut out, high_digits);
                                literal(&mut out, low_digits);
                            }
                        }
                    }
                    c => push_char(&mut out, char::from_u32(u32::from(c))),
                }
                continue;
            }
            other => return Err(err(ParseErrorKind::InvalidEscaped(other), pos)),
        };
        out.push(simple);
    }
    String::from_utf8(out).map_err(|_| err(ParseErrorKind::InvalidString, pos))
}

/// The four digits of a `\u` escape at `raw[*i..]`: `XXXX` or `{XXXX}`.
fn hex4<'r>(raw: &'r [u8], i: &mut usize, pos: &mut usize) -> Result<&'r [u8]> {
    let end = ParseError {
        kind: ParseErrorKind::UnexpectedEndOfHexEscape,
        pos: *pos,
    };
    let rest = raw.get(*i..).unwrap_or_default();
    if rest.len() < 4 {
        return Err(end);
    }
    let (digits, width) = if rest.first() == Some(&b'{') {
        if rest.len() < 6 || rest.get(5) != Some(&b'}') {
            return Err(end);
        }
        (rest.get(1..5), 6)
    } else {
        (rest.get(..4), 4)
    };
    *i += width;
    *pos += width;
    digits.ok_or(end)
}

fn hex_value(digits: &[u8], pos: usize) -> Result<u16> {
    let mut v: u16 = 0;
    for &d in digits {
        let n = (d as char).to_digit(16).ok_or(ParseError {
            kind: ParseErrorKind::InvalidHex(d),
            pos,
        })?;
        v = (v << 4) | n as u16;
    }
    Ok(v)
}

/// A surrogate escape that is not half of a pair stays as the six characters `\uXXXX`.
fn literal(out: &mut Vec<u8>, digits: &[u8]) {
    out.extend_from_slice(b"\\u");
    out.extend_from_slice(digits);
}

fn push_char(out: &mut Vec<u8>, c: Option<char>) {
    if let Some(c) = c {
        let mut buf = [0; 4];
        out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
    }
}
