//! JSONB: the binary JSON Lance stores `pa.json_()` columns in (the `lance.json` extension
//! type over `large_binary`), as pylance 14 writes and reads it.
//!
//! A value is a *container*. Every integer in it is big-endian:
//!
//! ```text
//! container := header:u32 jentry:u32* payload*
//! header    := kind (bits 31..29) | count (bits 28..0)
//!              0x80000000 | n   an array of n elements: n jentries, then n payloads
//!              0x40000000 | n   an object of n members: n key jentries, n value jentries,
//!                               the n key payloads, then the n value payloads
//!              0x20000000       a scalar at the top level: one jentry and its payload
//! jentry    := type (bits 30..28) | payload length (bits 27..0)
//!              0 null, 1 string (raw UTF-8), 2 number, 3 false, 4 true,
//!              5 container (a nested array or object, encoded as above)
//! number    := tag:u8 value   0x00 zero, 0x10 NaN, 0x20 +inf, 0x30 -inf,
//!              0x40 negative integer (i8/i16/i32/i64, the smallest that holds it),
//!              0x50 positive integer (u8/u16/u32/u64, likewise), 0x60 f64
//! ```
//!
//! Object keys are sorted by their UTF-8 bytes and unique. Only arrays and objects nest;
//! a scalar inside one carries its type in its jentry.
//!
//! The crate has three parts, none of which can panic on any input:
//!
//! * [`parse`]: JSON text to JSONB with pylance's lenient grammar (single quotes,
//!   unquoted keys, `NaN`/`Infinity`, hex and `+1`/`.5`/`1.` numbers, empty input as
//!   `null`, `[1,]` as `[1,null]`) and its error messages and positions.
//! * [`decode`]: validates a whole document and gives its root [`Value`], a view that
//!   navigates the bytes without copying them.
//! * [`to_text`]: the compact text pylance prints for a document (keys in stored order,
//!   numbers as JSONB prints them, NaN and infinities as `null`), or the bytes as lossy
//!   UTF-8 when they are not JSONB, as pylance does.
//!
//! ```
//! let bytes = lancelet_jsonb::parse(br#"{ "b": 1.50, 'a': [true, NaN] }"#).unwrap();
//! assert_eq!(lancelet_jsonb::to_text(&bytes), r#"{"a":[true,null],"b":1.5}"#);
//! let root = lancelet_jsonb::decode(&bytes).unwrap();
//! assert_eq!(root.get("b").unwrap().to_text(), "1.5");
//! ```

mod format;
mod number;
mod parse;
mod text;
mod value;

pub use number::Number;
pub use parse::{parse, ParseError, ParseErrorKind};
pub use text::{to_text, write_float, write_string};
pub use value::{decode, Container, Entries, Items, Value};
