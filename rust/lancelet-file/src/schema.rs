//! Converting between Arrow schemas and Lance's flattened field list.
//!
//! Lance stores a schema as a pre-order list of `Field`s: every field has an id,
//! its parent's id (-1 at the top level) and a logical type string such as
//! `int32`, `timestamp:us:UTC`, `fixed_size_list:float:4` or `dict:string:int32:false`.
//! Struct and list children follow their parent; fixed-size list items are not fields.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_schema::{DataType, Field, Fields, Schema, TimeUnit};
use lancelet_proto::pbfile as pb;

use crate::error::{Error, Result};

/// Metadata key Arrow uses for extension type names.
const EXTENSION_NAME_KEY: &str = "ARROW:extension:name";

fn unit_str(u: &TimeUnit) -> &'static str {
    match u {
        TimeUnit::Second => "s",
        TimeUnit::Millisecond => "ms",
        TimeUnit::Microsecond => "us",
        TimeUnit::Nanosecond => "ns",
    }
}

fn parse_unit(s: &str) -> Option<TimeUnit> {
    Some(match s {
        "s" => TimeUnit::Second,
        "ms" => TimeUnit::Millisecond,
        "us" => TimeUnit::Microsecond,
        "ns" => TimeUnit::Nanosecond,
        _ => return None,
    })
}

/// The Lance logical type string of an Arrow type.
pub fn logical_type(dt: &DataType) -> Result<String> {
    Ok(match dt {
        DataType::Null => "null".into(),
        DataType::Boolean => "bool".into(),
        DataType::Int8 => "int8".into(),
        DataType::UInt8 => "uint8".into(),
        DataType::Int16 => "int16".into(),
        DataType::UInt16 => "uint16".into(),
        DataType::Int32 => "int32".into(),
        DataType::UInt32 => "uint32".into(),
        DataType::Int64 => "int64".into(),
        DataType::UInt64 => "uint64".into(),
        DataType::Float16 => "halffloat".into(),
        DataType::Float32 => "float".into(),
        DataType::Float64 => "double".into(),
        DataType::Decimal128(p, s) => format!("decimal:128:{p}:{s}"),
        DataType::Decimal256(p, s) => format!("decimal:256:{p}:{s}"),
        DataType::Utf8 => "string".into(),
        DataType::LargeUtf8 => "large_string".into(),
        DataType::Binary => "binary".into(),
        DataType::LargeBinary => "large_binary".into(),
        DataType::Date32 => "date32:day".into(),
        DataType::Date64 => "date64:ms".into(),
        DataType::Time32(u) => format!("time32:{}", unit_str(u)),
        DataType::Time64(u) => format!("time64:{}", unit_str(u)),
        DataType::Timestamp(u, tz) => {
            format!("timestamp:{}:{}", unit_str(u), tz.as_deref().unwrap_or("-"))
        }
        DataType::Duration(u) => format!("duration:{}", unit_str(u)),
        DataType::Struct(_) => "struct".into(),
        DataType::Dictionary(k, v) => {
            format!("dict:{}:{}:false", logical_type(v)?, logical_type(k)?)
        }
        DataType::Map(_, false) => "map".into(),
        DataType::Map(_, true) => {
            return Err(Error::Unsupported(
                "maps with sorted keys (Lance stores maps with keys_sorted=false)".into(),
            ))
        }
        DataType::List(item) => match item.data_type() {
            DataType::Struct(_) => "list.struct".into(),
            _ => "list".into(),
        },
        DataType::LargeList(item) => match item.data_type() {
            DataType::Struct(_) => "large_list.struct".into(),
            _ => "large_list".into(),
        },
        DataType::FixedSizeList(item, n) => {
            format!("fixed_size_list:{}:{n}", logical_type(item.data_type())?)
        }
        DataType::FixedSizeBinary(n) => format!("fixed_size_binary:{n}"),
        other => {
            return Err(Error::Unsupported(format!(
                "Arrow type {other} cannot be stored in a Lance file"
            )))
        }
    })
}

/// Parses a logical type string of a field without children (children are supplied for
/// struct and list types by the caller).
fn parse_simple(lt: &str) -> Option<DataType> {
    Some(match lt {
        "null" => DataType::Null,
        "bool" => DataType::Boolean,
        "int8" => DataType::Int8,
        "uint8" => DataType::UInt8,
        "int16" => DataType::Int16,
        "uint16" => DataType::UInt16,
        "int32" => DataType::Int32,
        "uint32" => DataType::UInt32,
        "int64" => DataType::Int64,
        "uint64" => DataType::UInt64,
        "halffloat" => DataType::Float16,
        "float" => DataType::Float32,
        "double" => DataType::Float64,
        "string" => DataType::Utf8,
        "large_string" => DataType::LargeUtf8,
        "binary" => DataType::Binary,
        "large_binary" | "json" => DataType::LargeBinary,
        "date32:day" => DataType::Date32,
        "date64:ms" => DataType::Date64,
        _ => {
            let parts: Vec<&str> = lt.split(':').collect();
            match parts.as_slice() {
                ["time32", u] => DataType::Time32(parse_unit(u)?),
                ["time64", u] => DataType::Time64(parse_unit(u)?),
                ["duration", u] => DataType::Duration(parse_unit(u)?),
                ["timestamp", u, tz @ ..] => {
                    let tz = tz.join(":");
                    let tz = (tz != "-" && !tz.is_empty()).then(|| Arc::from(tz.as_str()));
                    DataType::Timestamp(parse_unit(u)?, tz)
                }
                ["decimal", "128", p, s] => DataType::Decimal128(p.parse().ok()?, s.parse().ok()?),
                ["decimal", "256", p, s] => DataType::Decimal256(p.parse().ok()?, s.parse().ok()?),
                ["fixed_size_binary", n] => DataType::FixedSizeBinary(n.parse().ok().filter(|n: &i32| *n >= 0)?),
                ["fixed_size_list", inner @ .., n] if !inner.is_empty() => {
                    let item = parse_simple(&inner.join(":"))?;
                    let n: i32 = n.parse().ok().filter(|n: &i32| *n >= 0)?;
                    DataType::FixedSizeList(Arc::new(Field::new("item", item, true)), n)
                }
                ["dict", value, key, _ordered] => {
                    DataType::Dictionary(Box::new(parse_simple(key)?), Box::new(parse_simple(value)?))
                }
                _ => return None,
            }
        }
    })
}

/// Field metadata key giving a field's position in the (unenforced) primary key, as
/// pylance writes it (e.g. on the `object_id` column of a namespace's `__manifest`).
pub const PRIMARY_KEY_POSITION_KEY: &str = "lance-schema:unenforced-primary-key:position";

/// Flattens an Arrow schema into Lance fields with ids assigned in pre-order from 0.
pub fn to_lance_fields(schema: &Schema) -> Result<Vec<pb::Field>> {
    let mut out = Vec::new();
    for f in schema.fields() {
        push_field(f, -1, &mut out)?;
    }
    Ok(out)
}

fn push_field(f: &Field, parent_id: i32, out: &mut Vec<pb::Field>) -> Result<()> {
    let id = out.len() as i32;
    let dt = f.data_type();
    let encoding = match dt {
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Binary | DataType::LargeBinary => pb::Encoding::VarBinary,
        DataType::Dictionary(_, _) => pb::Encoding::Dictionary,
        DataType::Struct(_) | DataType::Null => pb::Encoding::None,
        _ => pb::Encoding::Plain,
    };
    let metadata = f
        .metadata()
        .iter()
        .map(|(k, v)| (k.clone(), bytes::Bytes::from(v.clone().into_bytes())))
        .collect();
    out.push(pb::Field {
        r#type: pb::field::Type::Parent as i32,
        name: f.name().clone(),
        id,
        parent_id,
        logical_type: if crate::json::is_lance_json(f) {
            crate::json::LOGICAL_TYPE.to_string()
        } else {
            logical_type(dt)?
        },
        nullable: f.is_nullable(),
        metadata,
        // pylance marks primary-key fields by metadata and sets the flag alongside it.
        unenforced_primary_key: f.metadata().contains_key(PRIMARY_KEY_POSITION_KEY),
        encoding: encoding as i32,
        dictionary: None,
        extension_name: f.metadata().get(EXTENSION_NAME_KEY).cloned().unwrap_or_default(),
    });
    match dt {
        DataType::Struct(children) => {
            for c in children {
                push_field(c, id, out)?;
            }
        }
        DataType::List(item) | DataType::LargeList(item) | DataType::Map(item, _) => push_field(item, id, out)?,
        _ => {}
    }
    Ok(())
}

/// Rebuilds an Arrow schema from Lance fields; refuses lists where a parent does not
/// come before its children (which also rules out cycles) and unknown logical types.
pub fn from_lance_fields<'m>(
    fields: &[pb::Field],
    metadata: impl IntoIterator<Item = (&'m String, &'m bytes::Bytes)>,
    path: &str,
) -> Result<Schema> {
    let renumbered = crate::blob::adopt_descriptor_fields(fields);
    let fields = renumbered.as_deref().unwrap_or(fields);
    let mut children: HashMap<i32, Vec<usize>> = HashMap::new();
    let mut seen: HashMap<i32, usize> = HashMap::new();
    let mut roots = Vec::new();
    for (i, f) in fields.iter().enumerate() {
        if seen.insert(f.id, i).is_some() {
            return Err(Error::corrupt(path, format!("duplicate field id {}", f.id)));
        }
        if f.parent_id == -1 {
            roots.push(i);
        } else if seen.contains_key(&f.parent_id) && f.parent_id != f.id {
            children.entry(f.parent_id).or_default().push(i);
        } else {
            return Err(Error::corrupt(
                path,
                format!(
                    "field {:?} (id {}) names parent {} which does not precede it",
                    f.name, f.id, f.parent_id
                ),
            ));
        }
    }
    let arrow_fields = roots
        .iter()
        .map(|&i| build_field(fields, i, &children, path, 0))
        .collect::<Result<Vec<_>>>()?;
    let md: HashMap<String, String> = metadata
        .into_iter()
        .map(|(k, v)| (k.clone(), String::from_utf8_lossy(v).into_owned()))
        .collect();
    Ok(Schema::new_with_metadata(arrow_fields, md))
}

fn build_field(
    fields: &[pb::Field],
    i: usize,
    children: &HashMap<i32, Vec<usize>>,
    path: &str,
    depth: usize,
) -> Result<Field> {
    if depth > 64 {
        return Err(Error::corrupt(path, "schema nests deeper than 64 levels"));
    }
    let f = &fields[i];
    let kids = children.get(&f.id).map(Vec::as_slice).unwrap_or(&[]);
    let build_kids = || -> Result<Vec<Field>> {
        kids.iter()
            .map(|&k| build_field(fields, k, children, path, depth + 1))
            .collect()
    };
    let lt = f.logical_type.as_str();
    let dt = match lt {
        "struct" => DataType::Struct(Fields::from(build_kids()?)),
        "list" | "list.struct" | "large_list" | "large_list.struct" => {
            let mut kids = build_kids()?;
            if kids.len() != 1 {
                return Err(Error::corrupt(
                    path,
                    format!("list field {:?} has {} children", f.name, kids.len()),
                ));
            }
            let item = Arc::new(kids.remove(0));
            if lt.starts_with("large_list") {
                DataType::LargeList(item)
            } else {
                DataType::List(item)
            }
        }
        "map" => {
            let mut kids = build_kids()?;
            let entries_ok = kids.len() == 1 && matches!(kids[0].data_type(), DataType::Struct(fs) if fs.len() == 2);
            if !entries_ok {
                return Err(Error::corrupt(
                    path,
                    format!("map field {:?} needs one entries struct of a key and a value", f.name),
                ));
            }
            // Entries and keys are never null (as Arrow requires).
            let entries = kids.remove(0).with_nullable(false);
            let DataType::Struct(fs) = entries.data_type().clone() else {
                return Err(Error::corrupt(path, "map entries are not a struct"));
            };
            let key = fs[0].as_ref().clone().with_nullable(false);
            let entries = entries.with_data_type(DataType::Struct(Fields::from(vec![key, fs[1].as_ref().clone()])));
            DataType::Map(Arc::new(entries), false)
        }
        other => {
            if !kids.is_empty() {
                return Err(Error::corrupt(
                    path,
                    format!("field {:?} of type {other} has children", f.name),
                ));
            }
            parse_simple(other)
                .ok_or_else(|| Error::Unsupported(format!("logical type {other:?} of field {:?} in {path}", f.name)))?
        }
    };
    let mut md: HashMap<String, String> = f
        .metadata
        .iter()
        .map(|(k, v)| (k.clone(), String::from_utf8_lossy(v).into_owned()))
        .collect();
    // The logical type alone marks stored JSON (pylance reads it so); the Arrow field
    // carries it as its extension name.
    if lt == crate::json::LOGICAL_TYPE {
        md.insert(EXTENSION_NAME_KEY.to_string(), crate::json::LANCE_JSON.to_string());
    }
    Ok(Field::new(f.name.clone(), dt, f.nullable).with_metadata(md))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "tests: a failed unwrap is a failed test")]
mod tests {
    use super::*;

    #[test]
    fn logical_types_round_trip() {
        let types = [
            DataType::Timestamp(TimeUnit::Microsecond, Some("America/New_York".into())),
            DataType::Timestamp(TimeUnit::Nanosecond, None),
            DataType::Decimal128(10, 2),
            DataType::FixedSizeList(Arc::new(Field::new("item", DataType::Float32, true)), 4),
            DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8)),
            DataType::Duration(TimeUnit::Second),
            DataType::FixedSizeBinary(16),
        ];
        for t in types {
            let s = logical_type(&t).unwrap();
            assert_eq!(parse_simple(&s), Some(t), "{s}");
        }
    }

    #[test]
    fn stored_json_fields_have_the_json_logical_type_at_any_depth() {
        let json_md = |name: &str| HashMap::from([(EXTENSION_NAME_KEY.to_string(), name.to_string())]);
        let j = Field::new("j", DataType::LargeBinary, true).with_metadata(json_md("lance.json"));
        let schema = Schema::new(vec![
            j.clone(),
            Field::new("s", DataType::Struct(vec![j.clone()].into()), true),
            Field::new("l", DataType::List(Arc::new(j.clone())), true),
            // Only large_binary marked lance.json is JSON (pylance leaves these alone).
            Field::new("b", DataType::Binary, true).with_metadata(json_md("lance.json")),
            Field::new("t", DataType::Utf8, true).with_metadata(json_md("lance.json")),
        ]);
        let fields = to_lance_fields(&schema).unwrap();
        let types: Vec<&str> = fields.iter().map(|f| f.logical_type.as_str()).collect();
        assert_eq!(types, ["json", "struct", "json", "list", "json", "binary", "string"]);
        assert_eq!(fields[0].extension_name, "lance.json");
        assert_eq!(fields[0].encoding, pb::Encoding::VarBinary as i32);
        // The logical type alone is enough to read a field back as stored JSON.
        let mut bare = fields.clone();
        bare[0].metadata.clear();
        let back = from_lance_fields(&bare, &HashMap::new(), "x").unwrap();
        assert!(crate::json::is_lance_json(back.field(0)));
        assert_eq!(from_lance_fields(&fields, &HashMap::new(), "x").unwrap(), schema);
    }

    #[test]
    fn cyclic_parents_are_corrupt() {
        let mut f = to_lance_fields(&Schema::new(vec![Field::new("a", DataType::Int32, true)])).unwrap();
        f[0].parent_id = 0;
        assert!(matches!(
            from_lance_fields(&f, &HashMap::new(), "x"),
            Err(Error::Corrupt { .. })
        ));
    }
}
