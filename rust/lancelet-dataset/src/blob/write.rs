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
pub(crate) const DEFAULT_INLINE_THRESHOLD: u64 = 64 * 1024;
/// Default size above which a value gets its own sidecar (4 MiB).
pub(crate) const DEFAULT_DEDICATED_THRESHOLD: u64 = 4 * 1024 * 1024;
/// Default size of a packed sidecar before a new one is started (1 GiB).
pub(crate) const DEFAULT_PACK_THRESHOLD: u64 = 1024 * 1024 * 1024;

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

/// Whether `f` is, or holds in structs, a field `pred` accepts.
fn holds(f: &Field, pred: &dyn Fn(&Field) -> bool) -> bool {
    pred(f)
        || match f.data_type() {
            arrow_schema::DataType::Struct(children) => children.iter().any(|c| holds(c, pred)),
            _ => false,
        }
}

/// `f` with every field `map` replaces (at any depth in structs) replaced.
fn map_field(f: &FieldRef, map: &dyn Fn(&Field) -> Option<Field>) -> FieldRef {
    if let Some(m) = map(f) {
        return Arc::new(m);
    }
    match f.data_type() {
        arrow_schema::DataType::Struct(children) if children.iter().any(|c| holds(c, &|x| map(x).is_some())) => {
            let kids: Vec<FieldRef> = children.iter().map(|c| map_field(c, map)).collect();
            Arc::new(
                f.as_ref()
                    .clone()
                    .with_data_type(arrow_schema::DataType::Struct(kids.into())),
            )
        }
        _ => f.clone(),
    }
}

fn map_schema(schema: &SchemaRef, map: &dyn Fn(&Field) -> Option<Field>) -> SchemaRef {
    if !schema.fields().iter().any(|f| holds(f, &|x| map(x).is_some())) {
        return schema.clone();
    }
    let fields: Vec<FieldRef> = schema.fields().iter().map(|f| map_field(f, map)).collect();
    Arc::new(Schema::new_with_metadata(fields, schema.metadata().clone()))
}

/// Refuses blob columns (v1 or v2) inside lists, maps or fixed-size lists: pylance 14
/// cannot read some of them back, and lancelet does not place their payloads. Blobs in
/// structs (at any depth) are fine.
pub(crate) fn refuse_nested_blobs(schema: &Schema) -> Result<()> {
    fn walk(f: &Field, path: &str, in_list: bool) -> Result<()> {
        use arrow_schema::DataType as D;
        let (children, list): (Vec<&FieldRef>, bool) = match f.data_type() {
            D::Struct(fs) => (fs.iter().collect(), in_list),
            D::List(c) | D::LargeList(c) | D::FixedSizeList(c, _) | D::Map(c, _) => (vec![c], true),
            D::ListView(c) | D::LargeListView(c) => (vec![c], true),
            _ => (Vec::new(), in_list),
        };
        for c in children {
            let p = format!("{path}.{}", c.name());
            if list && (is_blob_v1(c) || is_blob_v2(c)) {
                return Err(Error::Unsupported(format!(
                    "writing blob column {p:?} inside a list or map is not supported \
                     (blob columns may be top-level or inside structs)"
                )));
            }
            if !is_blob_v2(c) {
                walk(c, &p, list)?;
            }
        }
        Ok(())
    }
    for f in schema.fields() {
        if !is_blob_v2(f) {
            walk(f, f.name(), false)?;
        }
    }
    Ok(())
}

/// The schema a data file stores for `schema`: blob v2 columns (at any depth in structs)
/// as their descriptors.
pub(crate) fn file_schema(schema: &SchemaRef) -> SchemaRef {
    map_schema(schema, &|f| {
        is_blob_v2(f).then(|| v2_descriptor_field(f.name(), f.is_nullable()))
    })
}

/// The field ids a data file of [`file_schema`] records, from the dataset's ids of
/// `schema` (pre-order): a blob column keeps its id and its five descriptor fields get
/// -1, its logical fields (`data`, `uri`, ...) none, as pylance writes them (wherever the
/// blob column sits).
pub(crate) fn file_field_ids(schema: &Schema, ids: &[i32]) -> Result<Vec<i32>> {
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
        if f.extension_name == BLOB_V2_EXTENSION {
            skipped.insert(f.id);
            out.extend([-1; 5]);
        }
    }
    Ok(out)
}

/// Whether `schema` has a blob v1 column (at the top level or in structs).
pub(crate) fn has_blob_v1(schema: &Schema) -> bool {
    schema.fields().iter().any(|f| holds(f, &|x| is_blob_v1(x)))
}

/// A blob v1 field as blob v2: `struct<data: large_binary, uri: utf8>` with only the
/// `lance.blob.v2` extension name as metadata, the shape pylance gives it at 2.2.
pub(crate) fn v1_as_v2_field(f: &Field) -> Field {
    let kids = vec![
        Field::new("data", arrow_schema::DataType::LargeBinary, true),
        Field::new("uri", arrow_schema::DataType::Utf8, true),
    ];
    let md = HashMap::from([("ARROW:extension:name".to_string(), BLOB_V2_EXTENSION.to_string())]);
    Field::new(f.name(), arrow_schema::DataType::Struct(kids.into()), f.is_nullable()).with_metadata(md)
}

/// `schema` with its blob v1 columns (at any depth in structs) as blob v2
/// ([`v1_as_v2_field`]).
pub(crate) fn v1_as_v2_schema(schema: &SchemaRef) -> SchemaRef {
    map_schema(schema, &|f| is_blob_v1(f).then(|| v1_as_v2_field(f)))
}

/// A batch of the original schema with its blob v1 columns wrapped as [`v1_as_v2_schema`]
/// says (`data` = the values, `uri` all null).
pub(crate) fn v1_as_v2_batch(batch: &RecordBatch, schema: &SchemaRef) -> Result<RecordBatch> {
    let mut cols = Vec::with_capacity(batch.num_columns());
    for (c, f) in batch.columns().iter().zip(schema.fields()) {
        cols.push(v1_as_v2_array(c, f)?);
    }
    let opts = arrow_array::RecordBatchOptions::new().with_row_count(Some(batch.num_rows()));
    Ok(RecordBatch::try_new_with_options(schema.clone(), cols, &opts)?)
}

/// `c` (of a field holding blob v1 values) as field `f` of [`v1_as_v2_schema`].
fn v1_as_v2_array(c: &ArrayRef, f: &Field) -> Result<ArrayRef> {
    use arrow_schema::DataType as D;
    if c.data_type() == f.data_type() {
        return Ok(c.clone());
    }
    match (f.data_type(), c.as_struct_opt()) {
        (D::Struct(kids), _) if is_blob_v2(f) => {
            let data = arrow_cast::cast(c, &D::LargeBinary)?;
            let uri = arrow_array::new_null_array(&D::Utf8, c.len());
            Ok(Arc::new(StructArray::try_new(
                kids.clone(),
                vec![data, uri],
                c.logical_nulls(),
            )?))
        }
        (D::Struct(kids), Some(s)) if kids.len() == s.num_columns() => {
            let cols = kids
                .iter()
                .zip(s.columns())
                .map(|(k, a)| v1_as_v2_array(a, k))
                .collect::<Result<Vec<_>>>()?;
            Ok(Arc::new(StructArray::try_new(kids.clone(), cols, s.nulls().cloned())?))
        }
        _ => Ok(c.clone()),
    }
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
pub(crate) struct Sidecar {
    /// Path in the store (`data/<stem>/<name>.blob`).
    pub path: String,
    /// Local file holding it.
    pub local: PathBuf,
}

/// How a field's values are encoded.
#[derive(Debug, Clone)]
enum Plan {
    /// Copied as they are.
    Plain,
    /// A blob v2 column with these thresholds.
    Blob(Thresholds),
    /// A struct holding blob v2 columns: its fields' plans, in order.
    Struct(Vec<Plan>),
}

impl Plan {
    fn of(f: &Field, opts: &BlobWriteOptions) -> Result<Plan> {
        if is_blob_v2(f) {
            // The write option wins over the field's metadata (as in pylance).
            let pack = match opts.pack_file_size_threshold {
                Some(t) => t,
                None => threshold(f, PACK_THRESHOLD_KEY, DEFAULT_PACK_THRESHOLD)?,
            };
            return Ok(Plan::Blob(Thresholds {
                inline: threshold(f, INLINE_THRESHOLD_KEY, DEFAULT_INLINE_THRESHOLD)?,
                dedicated: threshold(f, DEDICATED_THRESHOLD_KEY, DEFAULT_DEDICATED_THRESHOLD)?.max(1),
                pack: pack.max(1),
            }));
        }
        match f.data_type() {
            arrow_schema::DataType::Struct(children) if holds(f, &|x| is_blob_v2(x)) => Ok(Plan::Struct(
                children.iter().map(|c| Plan::of(c, opts)).collect::<Result<_>>()?,
            )),
            _ => Ok(Plan::Plain),
        }
    }
}

/// Encodes the blob v2 columns of the batches of one data file.
pub(crate) struct BlobEncoder {
    /// Per top-level column: how it is encoded.
    columns: Vec<Plan>,
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
            .map(|f| Plan::of(f, &opts))
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
        if let Some((id, rest)) = crate::blob::in_base(uri, &self.opts.bases) {
            return Ok((position, size, id, rest));
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
    /// Columns are placed one after another (blob fields in pre-order), rows in order.
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
        let plans = std::mem::take(&mut self.columns);
        let file_fields = self.file_schema.fields().clone();
        let mut encoded = Ok(());
        for ((c, plan), f) in batch.columns().iter().zip(&plans).zip(file_fields.iter()) {
            match self.encode_array(plan, f, c, None, &all_rows, inline) {
                Ok(a) => cols.push(a),
                Err(e) => {
                    encoded = Err(e);
                    break;
                }
            }
        }
        self.columns = plans;
        encoded?;
        let opts = arrow_array::RecordBatchOptions::new().with_row_count(Some(batch.num_rows()));
        Ok(RecordBatch::try_new_with_options(
            self.file_schema.clone(),
            cols,
            &opts,
        )?)
    }

    /// `array` encoded by `plan` as field `file_field` of the file schema; `parents` are
    /// the nulls of the enclosing structs (a value under a null parent is not stored, as
    /// in pylance, so its descriptor is null).
    fn encode_array(
        &mut self,
        plan: &Plan,
        file_field: &Field,
        array: &ArrayRef,
        parents: Option<&NullBuffer>,
        all_rows: &UInt32Array,
        inline: &mut dyn FnMut(&[u8]) -> lancelet_file::Result<u64>,
    ) -> Result<ArrayRef> {
        match plan {
            Plan::Plain => Ok(arrow_select::take::take(array.as_ref(), all_rows, None)?),
            Plan::Blob(t) => self.encode_column(t, array, parents, inline),
            Plan::Struct(children) => {
                let s = array.as_struct_opt().ok_or_else(|| {
                    Error::InvalidArgument(format!(
                        "{:?} must be a struct, got {}",
                        file_field.name(),
                        array.data_type()
                    ))
                })?;
                let arrow_schema::DataType::Struct(file_children) = file_field.data_type() else {
                    return Err(Error::InvalidArgument(format!(
                        "{:?} is not a struct",
                        file_field.name()
                    )));
                };
                let all = NullBuffer::union(parents, s.nulls());
                let mut cols = Vec::with_capacity(children.len());
                for ((p, f), c) in children.iter().zip(file_children.iter()).zip(s.columns()) {
                    cols.push(self.encode_array(p, f, c, all.as_ref(), all_rows, inline)?);
                }
                Ok(Arc::new(StructArray::try_new(
                    file_children.clone(),
                    cols,
                    s.nulls().cloned(),
                )?))
            }
        }
    }

    fn encode_column(
        &mut self,
        t: &Thresholds,
        array: &ArrayRef,
        parents: Option<&NullBuffer>,
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
            let hidden = parents.is_some_and(|p| p.is_null(i));
            if hidden || s.is_null(i) || (d.is_none() && u.is_none()) {
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
    pub(crate) fn sidecars(&self) -> &[Sidecar] {
        &self.done
    }
}

/// Reads an external object's bytes (or its range) for `external_blob_mode="ingest"`;
/// local files only.
fn ingest(uri: &str, range: Option<(u64, u64)>) -> Result<Vec<u8>> {
    let path = uri
        .starts_with("file:")
        .then(|| lancelet_io::uri::local_path(uri))
        .flatten()
        .ok_or_else(|| {
            Error::Unsupported(format!(
                "ingesting external blob {uri:?}: only file:// URIs can be ingested"
            ))
        })?;
    let all = std::fs::read(&path).map_err(|e| lancelet_file::Error::io(&path.display().to_string(), e))?;
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
#[allow(clippy::unwrap_used, reason = "tests: a failed unwrap is a failed test")]
mod tests {
    use super::*;
    use arrow_schema::DataType;

    /// A blob v2 field (`struct<data, uri>` with the extension name).
    fn blob_v2(name: &str) -> Field {
        let ext = HashMap::from([("ARROW:extension:name".to_string(), BLOB_V2_EXTENSION.to_string())]);
        let parts = vec![
            Field::new("data", DataType::LargeBinary, true),
            Field::new("uri", DataType::Utf8, true),
        ];
        Field::new(name, DataType::Struct(parts.into()), true).with_metadata(ext)
    }

    #[test]
    fn blob_children_get_minus_one_ids() {
        let blob = blob_v2("b");
        let schema = Schema::new(vec![Field::new("id", DataType::Int64, true), blob]);
        assert_eq!(
            file_field_ids(&schema, &[0, 1, 2, 3]).unwrap(),
            vec![0, 1, -1, -1, -1, -1, -1]
        );
    }

    #[test]
    fn blobs_in_lists_are_refused_blobs_in_structs_are_not() {
        let v1 = Field::new("b", DataType::LargeBinary, true)
            .with_metadata(HashMap::from([("lance-encoding:blob".to_string(), "true".to_string())]));
        let top = Schema::new(vec![v1.clone()]);
        assert!(refuse_nested_blobs(&top).is_ok());
        let s = Field::new(
            "s",
            DataType::Struct(vec![Field::new("k", DataType::Int64, true), v1].into()),
            true,
        );
        assert!(refuse_nested_blobs(&Schema::new(vec![s.clone()])).is_ok());
        let listed = Schema::new(vec![Field::new("l", DataType::List(Arc::new(s)), true)]);
        let err = refuse_nested_blobs(&listed).unwrap_err();
        assert!(
            matches!(&err, Error::Unsupported(m) if m.contains("\"l.s.b\"")),
            "{err}"
        );
    }

    #[test]
    fn nested_blob_children_get_minus_one_ids() {
        let blob = blob_v2("b");
        let s = Field::new(
            "s",
            DataType::Struct(vec![Field::new("k", DataType::Int64, true), blob].into()),
            true,
        );
        let schema = Schema::new(vec![Field::new("id", DataType::Int64, true), s]);
        assert_eq!(
            file_field_ids(&schema, &[0, 1, 2, 3, 4, 5]).unwrap(),
            vec![0, 1, 2, 3, -1, -1, -1, -1, -1]
        );
        let fs = file_schema(&Arc::new(schema));
        assert!(matches!(fs.field(1).data_type(),
            DataType::Struct(kids) if lancelet_file::blob::is_descriptor(&kids[1])));
    }
}
