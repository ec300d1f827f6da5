//! JSON columns: Arrow's JSON extension type (`arrow.json`, text) and the form Lance stores
//! it in (`lance.json`, JSONB bytes, see `lancelet_jsonb`).
//!
//! pylance 14 stores a field whose Arrow extension is `arrow.json` over `utf8` or
//! `large_utf8`, at any depth, as `large_binary` holding JSONB, with
//! `ARROW:extension:name = lance.json` (other metadata kept) and logical type `json` in the
//! schema. Its file writer converts too; its file reader returns the stored bytes. A
//! dataset reads such a field back as `arrow.json` over `utf8` again, with the text
//! re-printed from JSONB (compact, keys sorted).
//!
//! [`storage_schema`] / [`to_storage`] convert on the way in, [`text_schema`] / [`to_text`]
//! on the way out. Everything in between (files, filters, expressions) sees the stored form.
//!
//! ```
//! use std::sync::Arc;
//! use arrow_array::{RecordBatch, StringArray, cast::AsArray};
//! use arrow_schema::{DataType, Field, Schema};
//! use lancelet_file::json;
//!
//! let md: std::collections::HashMap<String, String> =
//!     [("ARROW:extension:name".to_string(), "arrow.json".to_string())].into();
//! let schema = Arc::new(Schema::new(vec![Field::new("j", DataType::Utf8, true).with_metadata(md)]));
//! let text = StringArray::from(vec![Some(r#"{"b": 1, "a": 2}"#), None]);
//! let batch = RecordBatch::try_new(schema, vec![Arc::new(text)]).unwrap();
//! let stored = json::to_storage(&batch).unwrap();
//! assert_eq!(stored.schema().field(0).data_type(), &DataType::LargeBinary);
//! let back = json::to_text(&stored).unwrap();
//! assert_eq!(back.column(0).as_string::<i32>().value(0), r#"{"a":2,"b":1}"#);
//! ```

use std::sync::Arc;

use arrow_array::builder::LargeBinaryBuilder;
use arrow_array::cast::AsArray;
use arrow_array::{
    Array, ArrayRef, FixedSizeListArray, GenericListArray, MapArray, OffsetSizeTrait, RecordBatch, RecordBatchOptions,
    StringArray, StructArray,
};
use arrow_buffer::{Buffer, OffsetBuffer, ScalarBuffer};
use arrow_schema::{DataType, Field, FieldRef, Fields, Schema, SchemaRef};

use crate::blob::EXTENSION_KEY;
use crate::error::{Error, Result};

/// Arrow's canonical extension name of JSON text columns (`pa.json_()`).
pub const ARROW_JSON: &str = "arrow.json";
/// Lance's extension name of stored JSON (JSONB in `large_binary`).
pub const LANCE_JSON: &str = "lance.json";
/// Arrow's metadata key of an extension type's parameters (`""` for JSON).
pub const EXTENSION_METADATA_KEY: &str = "ARROW:extension:metadata";
/// The logical type name of stored JSON in Lance schemas.
pub const LOGICAL_TYPE: &str = "json";

fn extension(f: &Field) -> Option<&str> {
    f.metadata().get(EXTENSION_KEY).map(String::as_str)
}

/// Whether `f` is stored JSON: `large_binary` with the `lance.json` extension.
pub fn is_lance_json(f: &Field) -> bool {
    f.data_type() == &DataType::LargeBinary && extension(f) == Some(LANCE_JSON)
}

/// Whether `f` is JSON text: the `arrow.json` extension over a string type.
pub fn is_arrow_json(f: &Field) -> bool {
    matches!(f.data_type(), DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View)
        && extension(f) == Some(ARROW_JSON)
}

/// Whether `f` holds stored JSON at any depth.
pub fn has_lance_json(f: &Field) -> bool {
    is_lance_json(f) || children(f.data_type()).iter().any(|c| has_lance_json(c))
}

fn children(dt: &DataType) -> Vec<FieldRef> {
    match dt {
        DataType::Struct(fs) => fs.iter().cloned().collect(),
        DataType::List(f) | DataType::LargeList(f) | DataType::FixedSizeList(f, _) | DataType::Map(f, _) => {
            vec![f.clone()]
        }
        _ => Vec::new(),
    }
}

/// A leaf rule: which fields it converts and into what.
#[derive(Clone, Copy)]
enum Direction {
    /// `arrow.json` text to `lance.json` JSONB.
    Store,
    /// `lance.json` JSONB to `arrow.json` text.
    Text,
}

impl Direction {
    fn is_leaf(self, f: &Field) -> bool {
        match self {
            Direction::Store => is_arrow_json(f),
            Direction::Text => is_lance_json(f),
        }
    }

    fn leaf_field(self, f: &Field) -> Field {
        let mut md = f.metadata().clone();
        let (dt, name) = match self {
            Direction::Store => (DataType::LargeBinary, LANCE_JSON),
            Direction::Text => {
                if !md.contains_key(EXTENSION_METADATA_KEY) {
                    md.insert(EXTENSION_METADATA_KEY, "");
                }
                (DataType::Utf8, ARROW_JSON)
            }
        };
        md.insert(EXTENSION_KEY, name);
        Field::new(f.name(), dt, f.is_nullable()).with_metadata(md)
    }

    /// `f` converted at any depth, or `None` when nothing in it converts.
    fn field(self, f: &Field) -> Option<Field> {
        if self.is_leaf(f) {
            return Some(self.leaf_field(f));
        }
        let conv = |c: &FieldRef| self.field(c).map(Arc::new);
        let dt = match f.data_type() {
            DataType::Struct(fs) => {
                let converted: Vec<Option<FieldRef>> = fs.iter().map(conv).collect();
                if converted.iter().all(Option::is_none) {
                    return None;
                }
                let fields: Fields = converted
                    .into_iter()
                    .zip(fs.iter())
                    .map(|(c, f)| c.unwrap_or_else(|| f.clone()))
                    .collect();
                DataType::Struct(fields)
            }
            DataType::List(item) => DataType::List(conv(item)?),
            DataType::LargeList(item) => DataType::LargeList(conv(item)?),
            DataType::FixedSizeList(item, n) => DataType::FixedSizeList(conv(item)?, *n),
            DataType::Map(entries, sorted) => DataType::Map(conv(entries)?, *sorted),
            _ => return None,
        };
        Some(f.clone().with_data_type(dt))
    }

    fn schema(self, schema: &Schema) -> Option<SchemaRef> {
        let converted: Vec<Option<Field>> = schema.fields().iter().map(|f| self.field(f)).collect();
        if converted.iter().all(Option::is_none) {
            return None;
        }
        let fields: Vec<Field> = converted
            .into_iter()
            .zip(schema.fields().iter())
            .map(|(c, f)| c.unwrap_or_else(|| f.as_ref().clone()))
            .collect();
        Some(Arc::new(Schema::new_with_metadata(fields, schema.metadata().clone())))
    }

    fn batch(self, batch: &RecordBatch) -> Result<RecordBatch> {
        let Some(schema) = self.schema(&batch.schema()) else {
            return Ok(batch.clone());
        };
        let columns = batch
            .columns()
            .iter()
            .zip(batch.schema().fields().iter())
            .map(|(c, f)| self.array(c, f))
            .collect::<Result<Vec<_>>>()?;
        let opts = RecordBatchOptions::new().with_row_count(Some(batch.num_rows()));
        Ok(RecordBatch::try_new_with_options(schema, columns, &opts)?)
    }

    /// `a` (of field `f`) with its JSON leaves converted.
    fn array(self, a: &ArrayRef, f: &Field) -> Result<ArrayRef> {
        let Some(to) = self.field(f) else {
            return Ok(a.clone());
        };
        if self.is_leaf(f) {
            return match self {
                Direction::Store => text_to_jsonb(a, f.name()),
                Direction::Text => text_leaf(a),
            };
        }
        Ok(match (f.data_type(), to.data_type()) {
            (DataType::Struct(from), DataType::Struct(fields)) => {
                let s = a.as_struct_opt().ok_or_else(|| mismatch(f))?;
                let columns = s
                    .columns()
                    .iter()
                    .zip(from.iter())
                    .map(|(c, cf)| self.array(c, cf))
                    .collect::<Result<Vec<_>>>()?;
                Arc::new(StructArray::try_new(fields.clone(), columns, s.nulls().cloned())?)
            }
            (DataType::List(from), DataType::List(item)) => self.list::<i32>(a, from, item)?,
            (DataType::LargeList(from), DataType::LargeList(item)) => self.list::<i64>(a, from, item)?,
            (DataType::FixedSizeList(from, n), DataType::FixedSizeList(item, _)) => {
                let l = a.as_fixed_size_list_opt().ok_or_else(|| mismatch(f))?;
                let values = self.array(l.values(), from)?;
                Arc::new(FixedSizeListArray::try_new(
                    item.clone(),
                    *n,
                    values,
                    l.nulls().cloned(),
                )?)
            }
            (DataType::Map(from, _), DataType::Map(entries, sorted)) => {
                let m = a.as_map_opt().ok_or_else(|| mismatch(f))?;
                let converted = self.array(&(Arc::new(m.entries().clone()) as ArrayRef), from)?;
                Arc::new(MapArray::try_new(
                    entries.clone(),
                    m.offsets().clone(),
                    converted.as_struct_opt().ok_or_else(|| mismatch(f))?.clone(),
                    m.nulls().cloned(),
                    *sorted,
                )?)
            }
            _ => a.clone(),
        })
    }

    fn list<O: OffsetSizeTrait>(self, a: &ArrayRef, from: &FieldRef, item: &FieldRef) -> Result<ArrayRef> {
        let l = a.as_list_opt::<O>().ok_or_else(|| mismatch(from))?;
        let values = self.array(l.values(), from)?;
        Ok(Arc::new(GenericListArray::<O>::try_new(
            item.clone(),
            l.offsets().clone(),
            values,
            l.nulls().cloned(),
        )?))
    }
}

/// An array whose type is not its field's (a caller's bug).
fn mismatch(f: &Field) -> Error {
    Error::Internal(format!("the array of field {:?} is not a {}", f.name(), f.data_type()))
}

/// A column of JSON text (`utf8`, `large_utf8` or `utf8_view`) as JSONB `large_binary`,
/// nulls kept; invalid JSON is an [`Error::InvalidArgument`] naming column `name`, the row
/// and the position.
pub fn text_to_jsonb(a: &ArrayRef, name: &str) -> Result<ArrayRef> {
    let texts: Box<dyn Iterator<Item = Option<&str>>> = if let Some(s) = a.as_string_opt::<i32>() {
        Box::new(s.iter())
    } else if let Some(s) = a.as_string_opt::<i64>() {
        Box::new(s.iter())
    } else if let Some(s) = a.as_string_view_opt() {
        Box::new(s.iter())
    } else {
        return Err(Error::InvalidArgument(format!(
            "JSON column {name:?} holds {}, not text",
            a.data_type()
        )));
    };
    let mut out = LargeBinaryBuilder::with_capacity(a.len(), 0);
    for (row, t) in texts.enumerate() {
        match t {
            None => out.append_null(),
            Some(t) => {
                let bytes = lancelet_jsonb::parse(t.as_bytes()).map_err(|e| {
                    Error::InvalidArgument(format!("Failed to encode JSON in column {name:?} at row {row}: {e}"))
                })?;
                out.append_value(bytes);
            }
        }
    }
    Ok(Arc::new(out.finish()))
}

/// JSONB values as the text pylance prints (raw bytes that are not JSONB as lossy text).
fn text_leaf(a: &ArrayRef) -> Result<ArrayRef> {
    let b = a
        .as_binary_opt::<i64>()
        .ok_or_else(|| Error::Internal(format!("a lance.json column holds {}", a.data_type())))?;
    let mut values: Vec<u8> = Vec::new();
    let mut offsets: Vec<i32> = Vec::with_capacity(b.len() + 1);
    offsets.push(0);
    for v in b.iter() {
        if let Some(bytes) = v {
            values.extend_from_slice(lancelet_jsonb::to_text(bytes).as_bytes());
        }
        let end = i32::try_from(values.len())
            .map_err(|_| Error::InvalidArgument("JSON text of one batch exceeds 2 GiB; read smaller batches".into()))?;
        offsets.push(end);
    }
    let offsets = OffsetBuffer::new(ScalarBuffer::from(offsets));
    Ok(Arc::new(StringArray::try_new(
        offsets,
        Buffer::from_vec(values),
        b.nulls().cloned(),
    )?))
}

/// `schema` with JSON text fields (`arrow.json`, at any depth) as Lance stores them, or
/// `None` when it has none.
pub fn storage_schema(schema: &Schema) -> Option<SchemaRef> {
    Direction::Store.schema(schema)
}

/// `f` as Lance stores it, or `None` when it holds no JSON text.
pub fn storage_field(f: &Field) -> Option<Field> {
    Direction::Store.field(f)
}

/// `batch` with its JSON text columns parsed into JSONB (itself when it has none). Invalid
/// JSON is an [`Error::InvalidArgument`] naming the column, row and position.
pub fn to_storage(batch: &RecordBatch) -> Result<RecordBatch> {
    Direction::Store.batch(batch)
}

/// `schema` with stored JSON fields (`lance.json`, at any depth) as JSON text, or `None`
/// when it has none.
pub fn text_schema(schema: &Schema) -> Option<SchemaRef> {
    Direction::Text.schema(schema)
}

/// `f` as it reads as text, or `None` when it holds no stored JSON.
pub fn text_field(f: &Field) -> Option<Field> {
    Direction::Text.field(f)
}

/// `batch` with its stored JSON columns printed as text (itself when it has none).
pub fn to_text(batch: &RecordBatch) -> Result<RecordBatch> {
    Direction::Text.batch(batch)
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{LargeBinaryArray, ListArray, StringViewArray};
    use arrow_buffer::NullBuffer;

    fn json_field(name: &str, dt: DataType) -> Field {
        let md = [
            (EXTENSION_KEY.to_string(), ARROW_JSON.to_string()),
            (EXTENSION_METADATA_KEY.to_string(), String::new()),
            ("foo".to_string(), "bar".to_string()),
        ];
        Field::new(name, dt, true).with_metadata(md.into_iter().collect::<std::collections::HashMap<_, _>>())
    }

    #[test]
    fn nested_json_is_stored_as_jsonb_and_read_back_as_text() {
        let j = json_field("j", DataType::Utf8);
        let texts: ArrayRef = Arc::new(StringArray::from(vec![Some("{'b':1,\"a\":[1,]}"), None, Some("1.")]));
        let st = StructArray::try_new(
            vec![j.clone()].into(),
            vec![texts.clone()],
            Some(NullBuffer::from(vec![true, true, false])),
        )
        .unwrap();
        let list = ListArray::try_new(
            Arc::new(j.clone().with_name("item")),
            OffsetBuffer::new(ScalarBuffer::from(vec![0, 2, 2, 3])),
            texts.clone(),
            None,
        )
        .unwrap();
        let schema = Arc::new(Schema::new(vec![
            j.clone(),
            Field::new("s", st.data_type().clone(), true),
            Field::new("l", list.data_type().clone(), true),
            Field::new("plain", DataType::Utf8, true),
        ]));
        let batch = RecordBatch::try_new(
            schema.clone(),
            vec![texts.clone(), Arc::new(st), Arc::new(list), texts.clone()],
        )
        .unwrap();
        let stored = to_storage(&batch).unwrap();
        let s = stored.schema();
        assert!(is_lance_json(s.field(0)));
        assert_eq!(s.field(0).metadata().get("foo").map(String::as_str), Some("bar"));
        assert_eq!(
            s.field(0).metadata().get(EXTENSION_METADATA_KEY).map(String::as_str),
            Some("")
        );
        let DataType::Struct(fs) = s.field(1).data_type() else {
            panic!()
        };
        assert!(is_lance_json(&fs[0]));
        let DataType::List(item) = s.field(2).data_type() else {
            panic!()
        };
        assert!(is_lance_json(item));
        assert_eq!(s.field(3), schema.field(3));
        let col = stored.column(0).as_binary::<i64>();
        assert!(col.is_null(1));
        assert_eq!(lancelet_jsonb::to_text(col.value(0)), r#"{"a":[1,null],"b":1}"#);
        assert_eq!(stored.column(1).null_count(), 1);

        let text = to_text(&stored).unwrap();
        assert_eq!(text.schema().field(0).data_type(), &DataType::Utf8);
        assert_eq!(
            text.schema().field(0).metadata().get(EXTENSION_KEY).map(String::as_str),
            Some(ARROW_JSON)
        );
        let read = |a: &ArrayRef| {
            a.as_string::<i32>()
                .iter()
                .map(|v| v.map(str::to_string))
                .collect::<Vec<_>>()
        };
        let expected = vec![Some(r#"{"a":[1,null],"b":1}"#.to_string()), None, Some("1".to_string())];
        assert_eq!(read(text.column(0)), expected);
        assert_eq!(read(text.column(1).as_struct().column(0)), expected);
        assert_eq!(read(text.column(2).as_list::<i32>().values()), expected);
        assert!(text_schema(&text.schema()).is_none());
        assert!(storage_schema(&stored.schema()).is_none());
    }

    #[test]
    fn invalid_json_names_column_row_and_position() {
        let schema = Arc::new(Schema::new(vec![json_field("doc", DataType::Utf8View)]));
        let texts = StringViewArray::from(vec![Some("[1]"), Some("not json")]);
        let batch = RecordBatch::try_new(schema, vec![Arc::new(texts)]).unwrap();
        let err = to_storage(&batch).unwrap_err().to_string();
        assert!(
            err.contains(r#"Failed to encode JSON in column "doc" at row 1: expected ident, pos 2"#),
            "{err}"
        );
    }

    #[test]
    fn bytes_that_are_not_jsonb_read_as_text_as_they_are() {
        let md = [(EXTENSION_KEY.to_string(), LANCE_JSON.to_string())];
        let f = Field::new("j", DataType::LargeBinary, true)
            .with_metadata(md.into_iter().collect::<std::collections::HashMap<_, _>>());
        let batch = RecordBatch::try_new(
            Arc::new(Schema::new(vec![f])),
            vec![Arc::new(LargeBinaryArray::from(vec![
                Some(&b"garbage"[..]),
                Some(&b""[..]),
                None,
            ]))],
        )
        .unwrap();
        let text = to_text(&batch).unwrap();
        let col = text.column(0).as_string::<i32>();
        assert_eq!((col.value(0), col.value(1), col.is_null(2)), ("garbage", "null", true));
    }
}
