//! Writing blob v2 columns (file format 2.2): each value goes inline into the data file,
//! into a shared ("packed") sidecar, into a sidecar of its own ("dedicated"), or stays
//! where it is as an external URI, and the column stores the descriptors.
//!
//! Placement, as pylance 14 does it: a value larger than the dedicated threshold (4 MiB
//! by default) gets its own sidecar; otherwise one larger than the inline threshold
//! (64 KiB) is appended to the current pack, which is closed first when the value would
//! take it past the pack threshold (1 GiB); smaller values are written inline, 64-byte
//! aligned. Sidecar ids count from 1 per data file in the order sidecars are opened, and
//! a sidecar is `data/<stem>/<id bits reversed>.blob` (see [`crate::blob::sidecar_name`]).
//!
//! A data file has one current pack, shared by all its blob columns: each input batch is
//! placed column after column (blob fields in pre-order), rows in order. A packed value
//! goes to the current pack unless the pack was opened under another pack threshold, or
//! (being non-empty) would pass its threshold with the value; then the pack is closed and
//! the next id opened. Dedicated values take the next id and leave the pack open. The
//! write option `blob_pack_file_size_threshold` overrides every field's own threshold.

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::UInt64Type;
use arrow_array::{Array, ArrayRef, RecordBatch, StringArray, StructArray, UInt32Array, UInt64Array, UInt8Array};
use arrow_buffer::NullBuffer;
use arrow_schema::{Field, FieldRef, Schema, SchemaRef};
use lancelet_file::blob::{
    is_blob_v1, is_blob_v2, kind, v2_descriptor_field, v2_descriptor_fields, BLOB_V2_EXTENSION,
    DEDICATED_THRESHOLD_KEY, INLINE_THRESHOLD_KEY, PACK_THRESHOLD_KEY,
};
use lancelet_file::schema::to_lance_fields;

use crate::blob::{sidecar_dir, sidecar_name};
use crate::{Error, Result};

/// Default largest value stored inline (64 KiB).
pub const DEFAULT_INLINE_THRESHOLD: u64 = 64 * 1024;
/// Default size above which a value gets its own sidecar (4 MiB).
pub const DEFAULT_DEDICATED_THRESHOLD: u64 = 4 * 1024 * 1024;
/// Default size of a packed sidecar before a new one is started (1 GiB).
pub const DEFAULT_PACK_THRESHOLD: u64 = 1024 * 1024 * 1024;

/// Write options of blob v2 columns (pylance's `write_dataset` keywords).
#[derive(Debug, Clone, Default)]
pub struct BlobWriteOptions {
    /// `blob_pack_file_size_threshold`: overrides the default pack size.
    pub pack_file_size_threshold: Option<u64>,
    /// `external_blob_mode="ingest"`: copy external objects' bytes in (else reference them).
    pub ingest_external: bool,
    /// `allow_external_blob_outside_bases`: reference URIs outside every registered base.
    pub allow_external_outside_bases: bool,
    /// The dataset's base paths `(id, path)`, for referencing external URIs under them.
    pub bases: Vec<(u32, String)>,
}

/// Whether `schema` has a top-level blob v2 column.
pub fn has_blob_v2(schema: &Schema) -> bool {
    schema.fields().iter().any(|f| is_blob_v2(f))
}

/// Refuses blob columns (v1 or v2) below the top level of `schema` (in structs or
/// lists): their payloads would not be placed, so writing them would lose the values.
/// pylance 14 writes blobs in structs; lancelet reads those (see
/// [`crate::Dataset::blob_locations`]) but does not write them yet.
pub fn refuse_nested_blobs(schema: &Schema) -> Result<()> {
    fn walk(f: &Field, path: &str) -> Result<()> {
        use arrow_schema::DataType as D;
        let children: Vec<&FieldRef> = match f.data_type() {
            D::Struct(fs) => fs.iter().collect(),
            D::List(c) | D::LargeList(c) | D::FixedSizeList(c, _) | D::Map(c, _) => vec![c],
            D::ListView(c) | D::LargeListView(c) => vec![c],
            _ => Vec::new(),
        };
        for c in children {
            let p = format!("{path}.{}", c.name());
            if is_blob_v1(c) || is_blob_v2(c) {
                return Err(Error::Unsupported(format!(
                    "writing blob column {p:?} inside a struct or list is not supported yet \
                     (lancelet reads such columns; write blob columns at the top level)"
                )));
            }
            walk(c, &p)?;
        }
        Ok(())
    }
    for f in schema.fields() {
        if !is_blob_v2(f) {
            walk(f, f.name())?;
        }
    }
    Ok(())
}

/// The schema a data file stores for `schema`: blob v2 columns as their descriptors.
pub fn file_schema(schema: &SchemaRef) -> SchemaRef {
    if !has_blob_v2(schema) {
        return schema.clone();
    }
    let fields: Vec<FieldRef> = schema
        .fields()
        .iter()
        .map(|f| {
            if is_blob_v2(f) {
                Arc::new(v2_descriptor_field(f.name(), f.is_nullable()))
            } else {
                f.clone()
            }
        })
        .collect();
    Arc::new(Schema::new_with_metadata(fields, schema.metadata().clone()))
}

/// The field ids a data file of [`file_schema`] records, from the dataset's ids of
/// `schema` (pre-order): a blob column keeps its id and its five descriptor fields get
/// -1, its logical fields (`data`, `uri`, ...) none, as pylance writes them.
pub fn file_field_ids(schema: &Schema, ids: &[i32]) -> Result<Vec<i32>> {
    let flat = to_lance_fields(schema)?;
    if flat.len() != ids.len() {
        return Ok(ids.to_vec());
    }
    let mut out = Vec::with_capacity(ids.len() + 5);
    let mut skipped: std::collections::HashSet<i32> = std::collections::HashSet::new();
    for (f, id) in flat.iter().zip(ids) {
        if skipped.contains(&f.parent_id) {
            skipped.insert(f.id);
            continue;
        }
        out.push(*id);
        if f.parent_id == -1 && f.extension_name == BLOB_V2_EXTENSION {
            skipped.insert(f.id);
            out.extend([-1; 5]);
        }
    }
    Ok(out)
}

/// Whether `schema` has a top-level blob v1 column.
pub fn has_blob_v1(schema: &Schema) -> bool {
    schema.fields().iter().any(|f| is_blob_v1(f))
}

/// `schema` with its top-level blob v1 columns as blob v2 (`struct<data, uri>` with the
/// `lance.blob.v2` extension), the shape pylance gives them at 2.2.
pub fn v1_as_v2_schema(schema: &SchemaRef) -> SchemaRef {
    let fields: Vec<FieldRef> = schema
        .fields()
        .iter()
        .map(|f| {
            if !is_blob_v1(f) {
                return f.clone();
            }
            let kids = vec![
                Field::new("data", arrow_schema::DataType::LargeBinary, true),
                Field::new("uri", arrow_schema::DataType::Utf8, true),
            ];
            let md = HashMap::from([("ARROW:extension:name".to_string(), BLOB_V2_EXTENSION.to_string())]);
            Arc::new(
                Field::new(f.name(), arrow_schema::DataType::Struct(kids.into()), f.is_nullable()).with_metadata(md),
            )
        })
        .collect();
    Arc::new(Schema::new_with_metadata(fields, schema.metadata().clone()))
}

/// A batch of the original schema with its blob v1 columns wrapped as [`v1_as_v2_schema`]
/// says (`data` = the values, `uri` all null).
pub fn v1_as_v2_batch(batch: &RecordBatch, schema: &SchemaRef) -> Result<RecordBatch> {
    let mut cols = Vec::with_capacity(batch.num_columns());
    for (c, f) in batch.columns().iter().zip(schema.fields()) {
        match f.data_type() {
            arrow_schema::DataType::Struct(kids) if is_blob_v2(f) && c.data_type() != f.data_type() => {
                let data = arrow_cast::cast(c, &arrow_schema::DataType::LargeBinary)?;
                let uri = arrow_array::new_null_array(&arrow_schema::DataType::Utf8, c.len());
                cols.push(
                    Arc::new(StructArray::try_new(kids.clone(), vec![data, uri], c.logical_nulls())?) as ArrayRef,
                );
            }
            _ => cols.push(c.clone()),
        }
    }
    let opts = arrow_array::RecordBatchOptions::new().with_row_count(Some(batch.num_rows()));
    Ok(RecordBatch::try_new_with_options(schema.clone(), cols, &opts)?)
}

fn threshold(f: &Field, key: &str, default: u64) -> Result<u64> {
    match f.metadata().get(key) {
        None => Ok(default),
        Some(v) => v
            .trim()
            .parse()
            .map_err(|_| Error::InvalidArgument(format!("field {:?}: {key} = {v:?} is not a byte count", f.name()))),
    }
}

#[derive(Debug, Clone)]
struct Thresholds {
    inline: u64,
    dedicated: u64,
    pack: u64,
}

/// A sidecar being written.
struct Pack {
    id: u32,
    out: BufWriter<File>,
    size: u64,
    /// The pack threshold it was opened under (a value of a column with another one
    /// closes it).
    threshold: u64,
}

/// A finished sidecar: where it goes in the store and where it was written.
#[derive(Debug, Clone)]
pub struct Sidecar {
    /// Path in the store (`data/<stem>/<name>.blob`).
    pub path: String,
    /// Local file holding it.
    pub local: PathBuf,
}

/// Encodes the blob v2 columns of the batches of one data file.
pub struct BlobEncoder {
    /// Per top-level column: its thresholds, if a blob v2 column.
    columns: Vec<Option<Thresholds>>,
    file_schema: SchemaRef,
    opts: BlobWriteOptions,
    /// Where sidecars go: local directory, and their store directory (`data/<stem>`).
    local_dir: PathBuf,
    store_dir: String,
    next_id: u32,
    /// The current pack, shared by every blob column of the file.
    pack: Option<Pack>,
    done: Vec<Sidecar>,
}

impl BlobEncoder {
    /// An encoder for data file `file_name` (in `data/`) with dataset schema `schema`;
    /// sidecars are written under `local_data_dir/<stem>/`.
    pub fn new(schema: &SchemaRef, file_name: &str, local_data_dir: PathBuf, opts: BlobWriteOptions) -> Result<Self> {
        let columns = schema
            .fields()
            .iter()
            .map(|f| -> Result<Option<Thresholds>> {
                if !is_blob_v2(f) {
                    return Ok(None);
                }
                // The write option wins over the field's metadata (as in pylance).
                let pack = match opts.pack_file_size_threshold {
                    Some(t) => t,
                    None => threshold(f, PACK_THRESHOLD_KEY, DEFAULT_PACK_THRESHOLD)?,
                };
                Ok(Some(Thresholds {
                    inline: threshold(f, INLINE_THRESHOLD_KEY, DEFAULT_INLINE_THRESHOLD)?,
                    dedicated: threshold(f, DEDICATED_THRESHOLD_KEY, DEFAULT_DEDICATED_THRESHOLD)?.max(1),
                    pack: pack.max(1),
                }))
            })
            .collect::<Result<Vec<_>>>()?;
        let stem = sidecar_dir(file_name);
        Ok(Self {
            columns,
            file_schema: file_schema(schema),
            opts,
            local_dir: local_data_dir.join(stem),
            store_dir: format!("{}/{stem}", crate::DATA_DIR),
            next_id: 1,
            pack: None,
            done: Vec::new(),
        })
    }

    fn open_sidecar(&mut self, threshold: u64) -> Result<Pack> {
        let id = self.next_id;
        self.next_id = self
            .next_id
            .checked_add(1)
            .ok_or_else(|| Error::InvalidArgument("a data file cannot hold more than 2^32 sidecars".into()))?;
        std::fs::create_dir_all(&self.local_dir)
            .map_err(|e| lancelet_file::Error::io(&self.local_dir.display().to_string(), e))?;
        let local = self.local_dir.join(sidecar_name(id));
        let f = File::create(&local).map_err(|e| lancelet_file::Error::io(&local.display().to_string(), e))?;
        self.done.push(Sidecar {
            path: format!("{}/{}", self.store_dir, sidecar_name(id)),
            local,
        });
        Ok(Pack {
            id,
            out: BufWriter::with_capacity(1 << 20, f),
            size: 0,
            threshold,
        })
    }

    fn close(&self, mut p: Pack) -> Result<()> {
        p.out
            .flush()
            .map_err(|e| lancelet_file::Error::io(&self.local_dir.display().to_string(), e))?;
        let f = p
            .out
            .into_inner()
            .map_err(|e| lancelet_file::Error::io(&self.local_dir.display().to_string(), e.into_error()))?;
        f.sync_data()
            .map_err(|e| lancelet_file::Error::io(&self.local_dir.display().to_string(), e))?;
        Ok(())
    }

    fn write_to(&self, p: &mut Pack, bytes: &[u8]) -> Result<()> {
        p.out
            .write_all(bytes)
            .map_err(|e| lancelet_file::Error::io(&self.local_dir.display().to_string(), e))?;
        p.size += bytes.len() as u64;
        Ok(())
    }

    /// Places one stored value of a column with thresholds `t`:
    /// `(kind, position, size, blob_id)`.
    fn place(
        &mut self,
        t: &Thresholds,
        bytes: &[u8],
        inline: &mut dyn FnMut(&[u8]) -> lancelet_file::Result<u64>,
    ) -> Result<(u8, u64, u64, u32)> {
        let size = bytes.len() as u64;
        if size > t.dedicated {
            let mut p = self.open_sidecar(0)?;
            self.write_to(&mut p, bytes)?;
            let id = p.id;
            self.close(p)?;
            return Ok((kind::DEDICATED, 0, size, id));
        }
        if size > t.inline {
            if let Some(p) = self.pack.take() {
                let full = p.size > 0 && p.size.saturating_add(size) > t.pack;
                if full || p.threshold != t.pack {
                    self.close(p)?;
                } else {
                    self.pack = Some(p);
                }
            }
            let mut p = match self.pack.take() {
                Some(p) => p,
                None => self.open_sidecar(t.pack)?,
            };
            let at = p.size;
            let written = self.write_to(&mut p, bytes);
            let id = p.id;
            self.pack = Some(p);
            written?;
            return Ok((kind::PACKED, at, size, id));
        }
        let pos = inline(bytes)?;
        Ok((kind::INLINE, pos, size, 0))
    }

    /// An external URI's descriptor `(position, size, blob_id, uri)` in reference mode.
    fn reference(&self, uri: &str, position: u64, size: u64) -> Result<(u64, u64, u32, String)> {
        if !uri.contains("://") {
            return Err(Error::InvalidArgument(format!(
                "External blob URI '{uri}' is not a valid absolute URI (use file:///... for local files)"
            )));
        }
        let uri_path = uri.strip_prefix("file://").unwrap_or(uri);
        for (id, base) in &self.opts.bases {
            let b = base.strip_prefix("file://").unwrap_or(base).trim_end_matches('/');
            if let Some(rest) = uri_path.strip_prefix(b).and_then(|r| r.strip_prefix('/')) {
                if !rest.is_empty() {
                    return Ok((position, size, *id, rest.to_string()));
                }
            }
        }
        if !self.opts.allow_external_outside_bases {
            return Err(Error::InvalidArgument(format!(
                "External blob URI '{uri}' is outside registered external bases (dataset root is not allowed). \
                 Set allow_external_blob_outside_bases=true to reference it anyway"
            )));
        }
        Ok((position, size, 0, uri.to_string()))
    }

    /// Replaces the blob v2 columns of `batch` (dataset schema) with descriptors, writing
    /// stored values (inline ones through `inline`, which returns their file position).
    pub fn encode(
        &mut self,
        batch: &RecordBatch,
        inline: &mut dyn FnMut(&[u8]) -> lancelet_file::Result<u64>,
    ) -> Result<RecordBatch> {
        let mut cols = Vec::with_capacity(batch.num_columns());
        // The other columns are copied: the file writer keeps them until their pages
        // fill, and an Arrow C stream import shares one owner between all the arrays of
        // a batch, so keeping a slice of a small column would keep the batch's payloads
        // (e.g. 8 MB images) alive too, and memory would grow with the whole stream.
        let all_rows = UInt32Array::from_iter_values(0..batch.num_rows() as u32);
        for (i, c) in batch.columns().iter().enumerate() {
            match self.columns.get(i).cloned().flatten() {
                Some(t) => cols.push(self.encode_column(&t, c, inline)?),
                None => cols.push(arrow_select::take::take(c.as_ref(), &all_rows, None)?),
            }
        }
        let opts = arrow_array::RecordBatchOptions::new().with_row_count(Some(batch.num_rows()));
        Ok(RecordBatch::try_new_with_options(
            self.file_schema.clone(),
            cols,
            &opts,
        )?)
    }

    fn encode_column(
        &mut self,
        t: &Thresholds,
        array: &ArrayRef,
        inline: &mut dyn FnMut(&[u8]) -> lancelet_file::Result<u64>,
    ) -> Result<ArrayRef> {
        let n = array.len();
        let (mut kinds, mut pos, mut sizes, mut ids, mut uris) = (
            Vec::with_capacity(n),
            Vec::with_capacity(n),
            Vec::with_capacity(n),
            Vec::with_capacity(n),
            Vec::with_capacity(n),
        );
        let mut valid = Vec::with_capacity(n);
        let s = array.as_struct_opt().ok_or_else(|| {
            Error::InvalidArgument(format!("a blob v2 column must be a struct, got {}", array.data_type()))
        })?;
        if s.column_by_name("kind").is_some() || s.column_by_name("data").is_none() {
            // Descriptors read back from the dataset (a rewrite): their payloads are not here.
            return Err(Error::Unsupported(
                "rewriting blob v2 columns (compaction, update, merge_insert of rows with blobs) is not supported yet"
                    .into(),
            ));
        }
        let data = s.column_by_name("data").and_then(|d| d.as_binary_opt::<i64>());
        let uri = s.column_by_name("uri").and_then(|u| u.as_string_opt::<i32>());
        let r_pos = s
            .column_by_name("position")
            .and_then(|p| p.as_primitive_opt::<UInt64Type>());
        let r_size = s
            .column_by_name("size")
            .and_then(|p| p.as_primitive_opt::<UInt64Type>());
        for i in 0..n {
            let d = data.filter(|d| d.is_valid(i)).map(|d| d.value(i));
            let u = uri.filter(|u| u.is_valid(i)).map(|u| u.value(i));
            if s.is_null(i) || (d.is_none() && u.is_none()) {
                kinds.push(0);
                pos.push(0);
                sizes.push(0);
                ids.push(0);
                uris.push(String::new());
                valid.push(false);
                continue;
            }
            valid.push(true);
            let (k, p, z, id, u) = match (d, u) {
                (Some(bytes), _) => {
                    let (k, p, z, id) = self.place(t, bytes, inline)?;
                    (k, p, z, id, String::new())
                }
                (None, Some(u)) => {
                    let range = match (r_pos, r_size) {
                        (Some(p), Some(z)) if p.is_valid(i) && z.is_valid(i) => Some((p.value(i), z.value(i))),
                        _ => None,
                    };
                    if self.opts.ingest_external {
                        let bytes = ingest(u, range)?;
                        let (k, p, z, id) = self.place(t, &bytes, inline)?;
                        (k, p, z, id, String::new())
                    } else {
                        let (p, z) = range.unwrap_or((0, 0));
                        let (p, z, id, u) = self.reference(u, p, z)?;
                        (kind::EXTERNAL, p, z, id, u)
                    }
                }
                (None, None) => unreachable!("handled above"),
            };
            kinds.push(k);
            pos.push(p);
            sizes.push(z);
            ids.push(id);
            uris.push(u);
        }
        let nulls = valid.contains(&false).then(|| NullBuffer::from(valid));
        Ok(Arc::new(StructArray::try_new(
            v2_descriptor_fields(),
            vec![
                Arc::new(UInt8Array::from(kinds)),
                Arc::new(UInt64Array::from(pos)),
                Arc::new(UInt64Array::from(sizes)),
                Arc::new(UInt32Array::from(ids)),
                Arc::new(StringArray::from(uris)),
            ],
            nulls,
        )?))
    }

    /// Closes the open pack; returns every sidecar written for this data file.
    pub fn finish(mut self) -> Result<Vec<Sidecar>> {
        if let Some(p) = self.pack.take() {
            self.close(p)?;
        }
        Ok(std::mem::take(&mut self.done))
    }

    /// The sidecars opened so far (to remove after a failure).
    pub fn sidecars(&self) -> &[Sidecar] {
        &self.done
    }
}

/// Reads an external object's bytes (or its range) for `external_blob_mode="ingest"`;
/// local files only.
fn ingest(uri: &str, range: Option<(u64, u64)>) -> Result<Vec<u8>> {
    let path = uri.strip_prefix("file://").ok_or_else(|| {
        Error::Unsupported(format!(
            "ingesting external blob {uri:?}: only file:// URIs can be ingested"
        ))
    })?;
    let all = std::fs::read(path).map_err(|e| lancelet_file::Error::io(path, e))?;
    match range {
        None => Ok(all),
        Some((p, z)) => {
            let end = p.checked_add(z).filter(|e| *e <= all.len() as u64).ok_or_else(|| {
                Error::InvalidArgument(format!("range {p}+{z} is outside the {}-byte object {uri}", all.len()))
            })?;
            Ok(all[p as usize..end as usize].to_vec())
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use arrow_schema::DataType;

    #[test]
    fn blob_children_get_minus_one_ids() {
        let ext = HashMap::from([("ARROW:extension:name".to_string(), BLOB_V2_EXTENSION.to_string())]);
        let blob = Field::new(
            "b",
            DataType::Struct(
                vec![
                    Field::new("data", DataType::LargeBinary, true),
                    Field::new("uri", DataType::Utf8, true),
                ]
                .into(),
            ),
            true,
        )
        .with_metadata(ext);
        let schema = Schema::new(vec![Field::new("id", DataType::Int64, true), blob]);
        assert_eq!(
            file_field_ids(&schema, &[0, 1, 2, 3]).unwrap(),
            vec![0, 1, -1, -1, -1, -1, -1]
        );
    }

    #[test]
    fn blobs_below_the_top_level_are_refused() {
        let v1 = Field::new("b", DataType::LargeBinary, true)
            .with_metadata(HashMap::from([("lance-encoding:blob".to_string(), "true".to_string())]));
        let top = Schema::new(vec![v1.clone()]);
        assert!(refuse_nested_blobs(&top).is_ok());
        let nested = Schema::new(vec![Field::new(
            "s",
            DataType::Struct(vec![Field::new("k", DataType::Int64, true), v1].into()),
            true,
        )]);
        let err = refuse_nested_blobs(&nested).unwrap_err();
        assert!(matches!(&err, Error::Unsupported(m) if m.contains("\"s.b\"")), "{err}");
    }
}
