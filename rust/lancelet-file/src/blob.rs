//! Blob columns: how their fields look in files and in scans.
//!
//! * **Blob v1** (file formats 2.0 and 2.1): a `large_binary` field with metadata
//!   `lance-encoding:blob = "true"`. Its column stores one `(position, size)` descriptor
//!   per row (`(1, 0)` for null, `(0, 0)` for empty); the payloads sit in the same data
//!   file. A reader sees the field as [`v1_descriptor_type`].
//! * **Blob v2** (2.2+): the dataset schema has a struct field with the Arrow extension
//!   `lance.blob.v2`; the data file stores the packed struct [`v2_descriptor_fields`]
//!   (kind, position, size, blob id, URI), whose children the file schema lists with
//!   field id -1 and parent -1 right after the struct ([`adopt_descriptor_fields`]).
//!
//! Scans return the descriptors ([`scan_schema`]), as pylance's default
//! `blob_handling="blobs_descriptions"` does.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::UInt64Type;
use arrow_array::{Array, ArrayRef, RecordBatch, StringArray, StructArray, UInt32Array, UInt64Array, UInt8Array};
use arrow_buffer::NullBuffer;
use arrow_schema::{DataType, Field, FieldRef, Fields, Schema, SchemaRef};
use lancelet_proto::pbfile as pb;

/// Field metadata key marking a blob column.
pub const BLOB_KEY: &str = "lance-encoding:blob";
/// Field metadata key marking a packed struct.
pub const PACKED_KEY: &str = "lance-encoding:packed";
/// Arrow extension name of blob v2 columns.
pub const BLOB_V2_EXTENSION: &str = "lance.blob.v2";
/// Arrow metadata key of extension names.
pub const EXTENSION_KEY: &str = "ARROW:extension:name";
/// Field metadata key of the largest value stored inline (v2).
pub const INLINE_THRESHOLD_KEY: &str = "lance-encoding:blob-inline-size-threshold";
/// Field metadata key of the size above which a value gets its own sidecar (v2).
pub const DEDICATED_THRESHOLD_KEY: &str = "lance-encoding:blob-dedicated-size-threshold";
/// Field metadata key of the size at which a packed sidecar is closed (v2).
pub const PACK_THRESHOLD_KEY: &str = "lance-encoding:blob-pack-file-size-threshold";

/// Blob v2 descriptor kinds.
pub mod kind {
    /// Bytes inside the owning data file.
    pub const INLINE: u8 = 0;
    /// A slice of a sidecar shared by several values.
    pub const PACKED: u8 = 1;
    /// A sidecar holding exactly one value.
    pub const DEDICATED: u8 = 2;
    /// An object Lance does not own, by URI.
    pub const EXTERNAL: u8 = 3;
}

fn meta_true(f: &Field, key: &str) -> bool {
    f.metadata().get(key).is_some_and(|v| v.eq_ignore_ascii_case("true"))
}

/// Whether `f` is a blob v1 field (`large_binary` or `binary` marked as blob).
pub fn is_blob_v1(f: &Field) -> bool {
    matches!(f.data_type(), DataType::LargeBinary | DataType::Binary) && meta_true(f, BLOB_KEY)
}

/// Whether `f` is a blob v2 field (the `lance.blob.v2` extension).
pub fn is_blob_v2(f: &Field) -> bool {
    matches!(f.data_type(), DataType::Struct(_))
        && f.metadata().get(EXTENSION_KEY).is_some_and(|v| v == BLOB_V2_EXTENSION)
}

/// Whether `f` is a blob column of either version.
pub fn is_blob(f: &Field) -> bool {
    is_blob_v1(f) || is_blob_v2(f)
}

/// Whether `f` is already a descriptor struct (as a file or scan gives it).
pub fn is_descriptor(f: &Field) -> bool {
    matches!(f.data_type(), DataType::Struct(_)) && meta_true(f, BLOB_KEY)
}

/// The fields of a v1 descriptor: `position` and `size`.
pub fn v1_descriptor_fields() -> Fields {
    Fields::from(vec![
        Field::new("position", DataType::UInt64, true),
        Field::new("size", DataType::UInt64, true),
    ])
}

/// The type a v1 blob column reads as.
pub fn v1_descriptor_type() -> DataType {
    DataType::Struct(v1_descriptor_fields())
}

/// The fields of a v2 descriptor (all non-nullable; the struct itself may be null).
pub fn v2_descriptor_fields() -> Fields {
    Fields::from(vec![
        Field::new("kind", DataType::UInt8, false),
        Field::new("position", DataType::UInt64, false),
        Field::new("size", DataType::UInt64, false),
        Field::new("blob_id", DataType::UInt32, false),
        Field::new("blob_uri", DataType::Utf8, false),
    ])
}

/// The field a data file stores for a v2 blob column named `name`.
pub fn v2_descriptor_field(name: &str, nullable: bool) -> Field {
    let md = HashMap::from([
        (BLOB_KEY.to_string(), "true".to_string()),
        (PACKED_KEY.to_string(), "true".to_string()),
    ]);
    Field::new(name, DataType::Struct(v2_descriptor_fields()), nullable).with_metadata(md)
}

/// In a file schema, gives the fields with id -1 and parent -1 that follow a blob struct
/// (pylance lists a v2 descriptor's children that way) fresh ids under that struct.
/// `None` when there is nothing to renumber.
pub fn adopt_descriptor_fields(fields: &[pb::Field]) -> Option<Vec<pb::Field>> {
    let is_owner = |f: &pb::Field| {
        f.logical_type == "struct"
            && f.metadata
                .get(BLOB_KEY)
                .is_some_and(|v| v.eq_ignore_ascii_case(b"true"))
    };
    let any = fields
        .windows(2)
        .any(|w| is_owner(&w[0]) && w[1].id == -1 && w[1].parent_id == -1);
    if !any {
        return None;
    }
    let mut next = fields.iter().map(|f| f.id).max().unwrap_or(0).max(0) + 1;
    let mut owner: Option<i32> = None;
    let mut out = Vec::with_capacity(fields.len());
    for f in fields {
        let mut f = f.clone();
        if f.id == -1 && f.parent_id == -1 {
            if let Some(o) = owner {
                f.id = next;
                f.parent_id = o;
                next += 1;
                out.push(f);
                continue;
            }
        }
        owner = is_owner(&f).then_some(f.id);
        out.push(f);
    }
    Some(out)
}

/// A file schema as its reader decodes it: v1 blob fields become packed
/// `(position, size)` descriptor structs.
pub fn file_read_schema(schema: &Schema) -> Option<Schema> {
    let changed = schema.fields().iter().any(|f| has(f, &is_blob_v1));
    changed.then(|| {
        let fields: Vec<FieldRef> = schema.fields().iter().map(|f| map_field(f, &v1_file_field)).collect();
        Schema::new_with_metadata(fields, schema.metadata().clone())
    })
}

fn v1_file_field(f: &Field) -> Option<Field> {
    is_blob_v1(f).then(|| {
        let mut md = f.metadata().clone();
        md.insert(PACKED_KEY.to_string(), "true".to_string());
        Field::new(f.name(), v1_descriptor_type(), f.is_nullable()).with_metadata(md)
    })
}

/// The schema a scan of a dataset with logical schema `schema` returns: blob columns as
/// their descriptors (v1: `struct<position, size>` marked blob; v2: the five-field
/// descriptor marked blob and packed), everything else unchanged.
pub fn scan_schema(schema: &Schema) -> Option<Schema> {
    let changed = schema.fields().iter().any(|f| has(f, &is_blob));
    changed.then(|| {
        let fields: Vec<FieldRef> = schema.fields().iter().map(|f| map_field(f, &scan_field)).collect();
        Schema::new_with_metadata(fields, schema.metadata().clone())
    })
}

fn scan_field(f: &Field) -> Option<Field> {
    if is_blob_v2(f) {
        return Some(v2_descriptor_field(f.name(), f.is_nullable()));
    }
    is_blob_v1(f).then(|| {
        let md = HashMap::from([(BLOB_KEY.to_string(), "true".to_string())]);
        Field::new(f.name(), v1_descriptor_type(), f.is_nullable()).with_metadata(md)
    })
}

fn has(f: &Field, pred: &dyn Fn(&Field) -> bool) -> bool {
    pred(f)
        || match f.data_type() {
            DataType::Struct(fs) => fs.iter().any(|c| has(c, pred)),
            _ => false,
        }
}

fn map_field(f: &FieldRef, map: &dyn Fn(&Field) -> Option<Field>) -> FieldRef {
    if let Some(m) = map(f) {
        return Arc::new(m);
    }
    match f.data_type() {
        DataType::Struct(fs)
            if fs
                .iter()
                .any(|c| map(c).is_some() || matches!(c.data_type(), DataType::Struct(_))) =>
        {
            let kids: Vec<FieldRef> = fs.iter().map(|c| map_field(c, map)).collect();
            Arc::new(f.as_ref().clone().with_data_type(DataType::Struct(Fields::from(kids))))
        }
        _ => f.clone(),
    }
}

/// Converts v1 descriptors (`position`, `size`) read from an older data file into v2
/// descriptors (kind inline, pointing into that file), as pylance reports rows of 2.1
/// files in a dataset whose blob column became v2: the null sentinel `(1, 0)` and null
/// rows become null. `None` if `a` is not a v1 descriptor array or `dt` not v2's type.
pub fn v1_to_v2_descriptors(a: &ArrayRef, dt: &DataType) -> Option<ArrayRef> {
    let DataType::Struct(target) = dt else { return None };
    if target.len() != 5 || target[0].name() != "kind" {
        return None;
    }
    let s = a.as_struct_opt()?;
    if s.num_columns() != 2
        || s.column(0).data_type() != &DataType::UInt64
        || s.column(1).data_type() != &DataType::UInt64
    {
        return None;
    }
    let pos = s.column(0).as_primitive::<UInt64Type>();
    let size = s.column(1).as_primitive::<UInt64Type>();
    let n = s.len();
    let valid: Vec<bool> = (0..n)
        .map(|i| s.is_valid(i) && pos.is_valid(i) && !(pos.value(i) != 0 && size.value(i) == 0))
        .collect();
    let cols: Vec<ArrayRef> = vec![
        Arc::new(UInt8Array::from(vec![kind::INLINE; n])),
        Arc::new(UInt64Array::from(
            (0..n)
                .map(|i| if valid[i] { pos.value(i) } else { 0 })
                .collect::<Vec<_>>(),
        )),
        Arc::new(UInt64Array::from(
            (0..n)
                .map(|i| if valid[i] { size.value(i) } else { 0 })
                .collect::<Vec<_>>(),
        )),
        Arc::new(UInt32Array::from(vec![0u32; n])),
        Arc::new(StringArray::from(vec![""; n])),
    ];
    let nulls = valid.iter().any(|v| !v).then(|| NullBuffer::from(valid));
    StructArray::try_new(target.clone(), cols, nulls)
        .ok()
        .map(|a| Arc::new(a) as ArrayRef)
}

/// `schema` with its blob v1 fields (top-level or in structs) as packed
/// `(position, size)` descriptor structs: what a writer plans and encodes.
pub fn descriptor_schema(schema: &SchemaRef) -> SchemaRef {
    if !schema.fields().iter().any(|f| has(f, &is_blob_v1)) {
        return schema.clone();
    }
    let fields: Vec<FieldRef> = schema.fields().iter().map(|f| map_field(f, &v1_file_field)).collect();
    Arc::new(Schema::new_with_metadata(fields, schema.metadata().clone()))
}

/// Whether 2.0 `column` holds the descriptors of a blob v1 field (as
/// [`descriptor_schema`] made it), at the top level or in a struct.
pub fn is_v1_descriptor_column(plans: &[crate::plan::FieldPlan], column: usize) -> bool {
    let mut found = false;
    for p in plans {
        p.visit(&mut |p| {
            if let crate::plan::FieldPlan::Leaf { column: c, field } = p {
                found |= *c == column && is_v1_descriptor_field(field);
            }
        });
    }
    found
}

/// The 2.0 column encoding of a blob v1 column: `Blob { inner: Values }`.
pub fn blob_column_encoding() -> Vec<u8> {
    use lancelet_encoding::v2_0::pb as pb20;
    use prost::Message;
    let values = pb20::ColumnEncoding {
        column_encoding: Some(pb20::column_encoding::ColumnEncoding::Values(())),
    };
    pb20::ColumnEncoding {
        column_encoding: Some(pb20::column_encoding::ColumnEncoding::Blob(Box::new(pb20::Blob {
            inner: Some(Box::new(values)),
        }))),
    }
    .encode_to_vec()
}

/// The file name of sidecar `blob_id`: its bits reversed, as 32 `0`/`1` characters.
pub fn sidecar_name(blob_id: u32) -> String {
    let mut s = String::with_capacity(37);
    for bit in 0..32 {
        s.push(if blob_id >> bit & 1 == 1 { '1' } else { '0' });
    }
    s.push_str(".blob");
    s
}

/// The sidecar directory of data file `file`: its name without `.lance`.
pub fn sidecar_dir(file: &str) -> &str {
    file.strip_suffix(".lance").unwrap_or(file)
}

/// One row's blob descriptor (v1 rows as kind inline).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Descriptor {
    /// Where the bytes are ([`kind`]).
    pub kind: u8,
    /// Offset (in the data file, sidecar or external object).
    pub position: u64,
    /// Length; for external blobs 0 means "to the end of the object".
    pub size: u64,
    /// Sidecar id (packed, dedicated) or base path id (external; 0 = absolute URI).
    pub blob_id: u32,
    /// External URI (absolute, or relative to base `blob_id`).
    pub uri: String,
}

/// Where a descriptor points before its file size is known: a path relative to the
/// dataset root (`data/...`) or an external URI.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// The file or object.
    pub path: String,
    /// Whether `path` is an external URI.
    pub external: bool,
}

/// The file a descriptor of data file `data_file` (its path under `data/`) points into;
/// `bases` are the dataset's base paths `(id, path)`. Refuses unknown kinds, unknown
/// bases and relative external paths that leave their base.
pub fn target(d: &Descriptor, data_file: &str, bases: &[(u32, String)], dataset: &str) -> crate::Result<Target> {
    let corrupt = |m: String| crate::Error::corrupt(dataset, m);
    Ok(match d.kind {
        kind::INLINE => Target {
            path: format!("data/{data_file}"),
            external: false,
        },
        kind::PACKED | kind::DEDICATED => Target {
            path: format!("data/{}/{}", sidecar_dir(data_file), sidecar_name(d.blob_id)),
            external: false,
        },
        kind::EXTERNAL if d.blob_id == 0 => {
            if d.uri.is_empty() {
                return Err(corrupt("external blob without a URI".into()));
            }
            Target {
                path: d.uri.clone(),
                external: true,
            }
        }
        kind::EXTERNAL => {
            let base = bases.iter().find(|(id, _)| *id == d.blob_id).ok_or_else(|| {
                corrupt(format!(
                    "external blob names base path {} which does not exist",
                    d.blob_id
                ))
            })?;
            Target {
                path: join_base(&base.1, &d.uri).map_err(corrupt)?,
                external: true,
            }
        }
        k => return Err(corrupt(format!("unknown blob kind {k}"))),
    })
}

/// Joins a relative external path to its base, refusing paths that leave the base.
pub fn join_base(base: &str, rel: &str) -> std::result::Result<String, String> {
    let ok = !rel.is_empty()
        && !rel.starts_with('/')
        && !rel.contains("://")
        && !rel.contains('\\')
        && rel.split('/').all(|c| !c.is_empty() && c != "." && c != "..");
    if !ok {
        return Err(format!("external blob path {rel:?} escapes its base path {base:?}"));
    }
    Ok(format!("{}/{}", base.trim_end_matches('/'), rel))
}

/// The `(position, size)` a descriptor reads from its file of `file_size` bytes, checked
/// to lie inside it (an external size of 0 means "to the end").
pub fn bounded(d: &Descriptor, path: &str, file_size: u64) -> crate::Result<(u64, u64)> {
    let size = if d.kind == kind::EXTERNAL && d.size == 0 {
        file_size.checked_sub(d.position).ok_or_else(|| {
            crate::Error::corrupt(
                path,
                format!(
                    "blob position {} is past the end of the {file_size}-byte object",
                    d.position
                ),
            )
        })?
    } else {
        d.size
    };
    match d.position.checked_add(size) {
        Some(end) if end <= file_size => Ok((d.position, size)),
        _ => Err(crate::Error::corrupt(
            path,
            format!(
                "blob descriptor ({}, {size}) reaches past the end of the {file_size}-byte file",
                d.position
            ),
        )),
    }
}

/// Whether `f` is a v1 descriptor struct (`position`, `size`) marked blob.
pub fn is_v1_descriptor_field(f: &Field) -> bool {
    is_descriptor(f) && matches!(f.data_type(), DataType::Struct(c) if c.len() == 2)
}

/// `schema` (as a file reader gives it) with top-level v1 descriptor columns back as
/// `large_binary` (marked blob): what the file-level API returns, as pylance's does.
pub fn v1_bytes_schema(schema: &SchemaRef) -> SchemaRef {
    if !schema.fields().iter().any(|f| is_v1_descriptor_field(f)) {
        return schema.clone();
    }
    let fields: Vec<FieldRef> = schema
        .fields()
        .iter()
        .map(|f| {
            if !is_v1_descriptor_field(f) {
                return f.clone();
            }
            let mut md = f.metadata().clone();
            md.remove(PACKED_KEY);
            Arc::new(Field::new(f.name(), DataType::LargeBinary, f.is_nullable()).with_metadata(md))
        })
        .collect();
    Arc::new(Schema::new_with_metadata(fields, schema.metadata().clone()))
}

/// Replaces the v1 descriptor columns of `batch` (read from `reader`'s file) with their
/// payloads, each range checked against the file's size.
pub async fn v1_bytes(reader: &crate::FileReader, batch: RecordBatch) -> crate::Result<RecordBatch> {
    let schema = v1_bytes_schema(&batch.schema());
    if Arc::ptr_eq(&schema, &batch.schema()) {
        return Ok(batch);
    }
    let path = reader.metadata().path.clone();
    let file_size = reader.metadata().file_size;
    let mut cols = Vec::with_capacity(batch.num_columns());
    for (c, f) in batch.columns().iter().zip(batch.schema().fields()) {
        if !is_v1_descriptor_field(f) {
            cols.push(c.clone());
            continue;
        }
        let s = c
            .as_struct_opt()
            .ok_or_else(|| crate::Error::corrupt(&path, "blob descriptors are not a struct"))?;
        let pos = s.column(0).as_primitive::<UInt64Type>();
        let size = s.column(1).as_primitive::<UInt64Type>();
        let mut wanted = Vec::new();
        let mut rows: Vec<Option<Option<usize>>> = Vec::with_capacity(s.len());
        for i in 0..s.len() {
            let (p, z) = (pos.value(i), size.value(i));
            if s.is_null(i) || (z == 0 && p != 0) {
                rows.push(None);
            } else if z == 0 {
                rows.push(Some(None));
            } else {
                let d = Descriptor {
                    kind: kind::INLINE,
                    position: p,
                    size: z,
                    blob_id: 0,
                    uri: String::new(),
                };
                bounded(&d, &path, file_size)?;
                rows.push(Some(Some(wanted.len())));
                wanted.push(p..p + z);
            }
        }
        let bufs = reader.fetch(&wanted).await?;
        let values: arrow_array::LargeBinaryArray = rows
            .iter()
            .map(|r| match r {
                None => None,
                Some(None) => Some(&[][..]),
                Some(Some(k)) => Some(bufs[*k].as_slice()),
            })
            .collect();
        cols.push(Arc::new(values));
    }
    let opts = arrow_array::RecordBatchOptions::new().with_row_count(Some(batch.num_rows()));
    Ok(RecordBatch::try_new_with_options(schema, cols, &opts)?)
}

/// Turns the values of a blob v1 column (`binary`/`large_binary`) into descriptors,
/// handing each non-empty payload to `write_payload`, which stores it and returns its
/// absolute position in the file. Nulls become `(1, 0)` with the row marked null, empty
/// values `(0, 0)`. A value under a null parent struct (`parents`) is not stored: its row
/// is null too, as pylance writes it.
pub fn v1_descriptors(
    array: &ArrayRef,
    parents: Option<&NullBuffer>,
    mut write_payload: impl FnMut(&[u8]) -> crate::Result<u64>,
) -> crate::Result<ArrayRef> {
    let n = array.len();
    let mut pos = Vec::with_capacity(n);
    let mut size = Vec::with_capacity(n);
    let value = |i: usize| -> Option<&[u8]> {
        match array.data_type() {
            DataType::LargeBinary => Some(array.as_binary::<i64>().value(i)),
            DataType::Binary => Some(array.as_binary::<i32>().value(i)),
            _ => None,
        }
    };
    let nulls = NullBuffer::union(parents, array.logical_nulls().as_ref());
    for i in 0..n {
        if nulls.as_ref().is_some_and(|b| b.is_null(i)) {
            pos.push(1);
            size.push(0);
            continue;
        }
        let v = value(i).ok_or_else(|| {
            crate::Error::SchemaMismatch(format!(
                "a blob v1 column holds binary values, not {}",
                array.data_type()
            ))
        })?;
        if v.is_empty() {
            pos.push(0);
            size.push(0);
        } else {
            pos.push(write_payload(v)?);
            size.push(v.len() as u64);
        }
    }
    Ok(Arc::new(StructArray::try_new(
        v1_descriptor_fields(),
        vec![Arc::new(UInt64Array::from(pos)), Arc::new(UInt64Array::from(size))],
        nulls,
    )?))
}

/// The 2.0 page of v1 descriptors: a packed struct of two 64-bit fields, 16 bytes a row.
pub fn v1_page_2_0(
    desc: &ArrayRef,
) -> crate::Result<lancelet_encoding::EncodedPage<lancelet_encoding::v2_0::pb::ArrayEncoding>> {
    use lancelet_encoding::v2_0::pb::array_encoding::ArrayEncoding as E;
    use lancelet_encoding::v2_0::pb::nullable::{NoNull, Nullability};
    use lancelet_encoding::v2_0::{enc, flat, page_buffer, pb as pb20};
    let s = desc
        .as_struct_opt()
        .ok_or_else(|| crate::Error::InvalidArgument("blob descriptors must be a struct".into()))?;
    let pos = s.column(0).as_primitive::<UInt64Type>();
    let size = s.column(1).as_primitive::<UInt64Type>();
    let mut bytes = Vec::with_capacity(s.len() * 16);
    for i in 0..s.len() {
        bytes.extend_from_slice(&pos.value(i).to_le_bytes());
        bytes.extend_from_slice(&size.value(i).to_le_bytes());
    }
    let child = || {
        enc(E::Nullable(Box::new(pb20::Nullable {
            nullability: Some(Nullability::NoNulls(Box::new(NoNull {
                values: Some(Box::new(flat(64, 0))),
            }))),
        })))
    };
    Ok(lancelet_encoding::EncodedPage {
        buffers: vec![arrow_buffer::Buffer::from_vec(bytes)],
        encoding: enc(E::PackedStruct(pb20::PackedStruct {
            inner: vec![child(), child()],
            buffer: Some(page_buffer(0)),
        })),
        num_rows: s.len() as u64,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "tests: a failed unwrap is a failed test")]
mod tests {
    use super::*;

    fn field(name: &str, id: i32, parent: i32, lt: &str, blob: bool) -> pb::Field {
        let mut f = pb::Field {
            name: name.into(),
            id,
            parent_id: parent,
            logical_type: lt.into(),
            ..Default::default()
        };
        if blob {
            f.metadata.insert(BLOB_KEY.into(), bytes::Bytes::from_static(b"true"));
        }
        f
    }

    #[test]
    fn descriptor_children_are_adopted() {
        let fields = vec![
            field("id", 0, -1, "int64", false),
            field("b", 1, -1, "struct", true),
            field("kind", -1, -1, "uint8", false),
            field("blob_uri", -1, -1, "string", false),
            field("c", 2, -1, "int32", false),
        ];
        let out = adopt_descriptor_fields(&fields).unwrap();
        assert_eq!((out[2].id, out[2].parent_id), (3, 1));
        assert_eq!((out[3].id, out[3].parent_id), (4, 1));
        assert_eq!((out[4].id, out[4].parent_id), (2, -1));
        assert!(adopt_descriptor_fields(&fields[..1]).is_none());
    }

    #[test]
    fn v1_rows_become_inline_v2_rows() {
        let a: ArrayRef = Arc::new(StructArray::new(
            v1_descriptor_fields(),
            vec![
                Arc::new(UInt64Array::from(vec![64, 0, 1])),
                Arc::new(UInt64Array::from(vec![5, 0, 0])),
            ],
            None,
        ));
        let v2 = v1_to_v2_descriptors(&a, &DataType::Struct(v2_descriptor_fields())).unwrap();
        assert_eq!(v2.null_count(), 1);
        assert!(v2.is_null(2));
    }
}
