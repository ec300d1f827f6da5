//! Writing datasets: input batches stream into new data files (a file is closed once it
//! holds `max_rows_per_file` rows or `max_bytes_per_file` bytes), then one transaction
//! commits them: Overwrite for a new or replaced dataset, Append otherwise. Memory stays
//! bounded by the writer's page buffers, never the whole input. If anything fails before
//! the commit lands, the files written so far are removed.

pub mod views;

use std::fs::File;
use std::io::BufWriter;
use std::sync::Arc;

use arrow_array::{RecordBatch, RecordBatchReader};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use lancelet_file::json::is_lance_json;
use lancelet_file::schema::to_lance_fields;
use lancelet_file::{FileVersion, FileWriter, WriterOptions};
use lancelet_io::Storage;
use lancelet_table::commit::{new_transaction, CommitOptions};
use lancelet_table::naming::ManifestNaming;
use lancelet_table::object::Location;
use lancelet_table::pb;
use lancelet_table::pb::transaction::Operation;

use crate::commit::durable::{SyncingFile, Syncs};
use crate::{Caches, Dataset, Error, Result, VersionRef, DATA_DIR};

/// How a write treats an existing dataset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteMode {
    /// Create a new dataset; fail if one exists.
    Create,
    /// Add rows to the dataset, creating it if absent.
    Append,
    /// Replace the dataset's rows (and schema) with the input, keeping history.
    Overwrite,
}

impl WriteMode {
    /// Parses `"create"`, `"append"` or `"overwrite"`.
    pub fn parse(s: &str) -> Result<Self> {
        match s {
            "create" => Ok(Self::Create),
            "append" => Ok(Self::Append),
            "overwrite" => Ok(Self::Overwrite),
            other => Err(Error::InvalidArgument(format!(
                "mode must be \"create\", \"append\" or \"overwrite\", got {other:?}"
            ))),
        }
    }
}

/// Progress of a write: rows and bytes so far, files completed.
#[derive(Debug, Clone, Copy, Default)]
pub struct WriteProgress {
    /// Rows written so far.
    pub rows: u64,
    /// Bytes of completed data files.
    pub bytes: u64,
    /// Data files completed.
    pub files: u64,
}

/// A progress callback.
pub type ProgressFn = Arc<dyn Fn(WriteProgress) + Send + Sync>;

/// Options of [`write_dataset`].
#[derive(Clone)]
pub struct WriteParams {
    /// What to do with an existing dataset.
    pub mode: WriteMode,
    /// Rows per data file (and fragment).
    pub max_rows_per_file: u64,
    /// Bytes per data file, checked after each batch.
    pub max_bytes_per_file: u64,
    /// Name manifests with the V2 scheme (new datasets only).
    pub enable_v2_manifest_paths: bool,
    /// File format of new data files.
    pub file_version: FileVersion,
    /// `file_version` was not asked for: an overwrite keeps the existing dataset's format
    /// (appends always do).
    pub default_file_version: bool,
    /// Stored in the transaction's properties.
    pub commit_message: Option<String>,
    /// Called after each batch and each completed file.
    pub progress: Option<ProgressFn>,
    /// Options of the file writer.
    pub writer: WriterOptions,
    /// A tag put in every data file name (`{name}-{tag}.lance`), so that the files of one
    /// distributed job can be found and removed if the job never commits them.
    pub file_tag: Option<String>,
    /// Give rows move-stable ids (`_rowid` survives updates and compaction) and track the
    /// versions each row was created and last updated at. Only when creating a dataset.
    pub enable_stable_row_ids: bool,
    /// How blob v2 columns are written (see [`crate::blob::write`]).
    pub blob: crate::blob::write::BlobWriteOptions,
    /// More properties recorded in the transaction (pylance's `transaction_properties`).
    pub transaction_properties: std::collections::HashMap<String, String>,
    /// Config entries recorded when the write creates the dataset, e.g. the `lance.auto_cleanup.*` keys of pylance's `auto_cleanup_options`.
    pub config: std::collections::HashMap<String, String>,
    /// The lock the commit is made inside; the written dataset keeps it for its own commits.
    pub commit_lock: Option<Arc<dyn crate::commit::CommitLock>>,
}

impl std::fmt::Debug for WriteParams {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WriteParams")
            .field("mode", &self.mode)
            .field("max_rows_per_file", &self.max_rows_per_file)
            .field("max_bytes_per_file", &self.max_bytes_per_file)
            .field("file_version", &self.file_version)
            .finish()
    }
}

impl Default for WriteParams {
    fn default() -> Self {
        Self {
            mode: WriteMode::Create,
            max_rows_per_file: 1024 * 1024,
            max_bytes_per_file: 90 * 1024 * 1024 * 1024,
            enable_v2_manifest_paths: true,
            file_version: FileVersion::DEFAULT,
            default_file_version: false,
            commit_message: None,
            progress: None,
            // Data files carry zone statistics for filtered scans (pylance ignores them).
            writer: WriterOptions {
                page_stats: true,
                ..WriterOptions::default()
            },
            file_tag: None,
            enable_stable_row_ids: false,
            blob: Default::default(),
            transaction_properties: Default::default(),
            config: Default::default(),
            commit_lock: None,
        }
    }
}

/// A new data file name: 24 binary digits from the first 3 bytes of a random UUID, then
/// the other 13 bytes in hex (Lance's rule, which spreads files over object-store prefixes).
/// With a `tag`, it goes before the extension: `{name}-{tag}.lance`.
pub(crate) fn new_data_file_name(tag: Option<&str>) -> String {
    let bytes = *uuid::Uuid::new_v4().as_bytes();
    let mut s = String::with_capacity(56);
    for b in &bytes[..3] {
        s.push_str(&format!("{b:08b}"));
    }
    for b in &bytes[3..] {
        s.push_str(&format!("{b:02x}"));
    }
    if let Some(tag) = tag {
        s.push('-');
        s.push_str(tag);
    }
    s.push_str(".lance");
    s
}

/// Checks a file tag: 1 to 64 ASCII letters, digits or `_`, so it cannot change the path.
pub(crate) fn check_file_tag(tag: &str) -> Result<()> {
    let ok = !tag.is_empty() && tag.len() <= 64 && tag.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
    if ok {
        Ok(())
    } else {
        Err(Error::InvalidArgument(format!(
            "file tag must be 1 to 64 letters, digits or '_', got {tag:?}"
        )))
    }
}

/// How appended data maps onto the dataset's columns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Alignment {
    /// For each dataset column present in the data (in dataset order), its index in the data.
    pub order: Vec<usize>,
    /// Positions (in the dataset schema) of those columns.
    pub present: Vec<usize>,
}

/// Matches `data`'s columns to `target`'s, or explains how the schemas differ. Nullable
/// dataset columns may be missing from the data (they read as nulls, as in pylance).
pub(crate) fn align_schema(target: &Schema, data: &Schema) -> Result<Alignment> {
    let mut problems = Vec::new();
    let mut order = Vec::with_capacity(target.fields().len());
    let mut present = Vec::with_capacity(target.fields().len());
    for (pos, f) in target.fields().iter().enumerate() {
        match data.index_of(f.name()) {
            Ok(i) => {
                let g = data.field(i);
                if !compatible(f, g) {
                    let json = is_lance_json(f) || is_lance_json(g);
                    problems.push(format!(
                        "field {:?} is {} in the dataset but {} in the data{}",
                        f.name(),
                        type_name(f),
                        type_name(g),
                        if json {
                            " (JSON columns take pa.json_() values)"
                        } else {
                            ""
                        }
                    ));
                }
                order.push(i);
                present.push(pos);
            }
            Err(_) if f.is_nullable() => {}
            Err(_) => problems.push(format!(
                "field {:?} is missing from the data (it is not nullable)",
                f.name()
            )),
        }
    }
    for g in data.fields() {
        if target.field_with_name(g.name()).is_err() {
            problems.push(format!("field {:?} is not in the dataset", g.name()));
        }
    }
    if !problems.is_empty() {
        return Err(Error::SchemaMismatch(problems.join("; ")));
    }
    Ok(Alignment { order, present })
}

/// Whether data field `g` can be written as dataset field `f`: types equal up to the
/// names of list items, and any blob v2 value shape (`struct<data, uri>` or with
/// `position` and `size`) for a blob v2 field, both stored JSON or both not, at any
/// depth in structs.
fn compatible(f: &Field, g: &Field) -> bool {
    use lancelet_file::blob::is_blob_v2;
    if is_blob_v2(f) && is_blob_v2(g) {
        return true;
    }
    if is_lance_json(f) != is_lance_json(g) {
        return false;
    }
    match (f.data_type(), g.data_type()) {
        (DataType::Struct(x), DataType::Struct(y)) => {
            x.len() == y.len()
                && x.iter()
                    .zip(y.iter())
                    .all(|(p, q)| p.name() == q.name() && compatible(p, q))
        }
        (a, b) => same_type(a, b),
    }
}

/// A field's type as errors name it: `json` for stored JSON, else the Arrow type.
fn type_name(f: &Field) -> String {
    if is_lance_json(f) {
        lancelet_file::json::LOGICAL_TYPE.to_string()
    } else {
        f.data_type().to_string()
    }
}

/// Fields of equal types that are both stored JSON or both not, at every depth.
fn same_field(a: &Field, b: &Field) -> bool {
    is_lance_json(a) == is_lance_json(b) && same_type(a.data_type(), b.data_type())
}

/// Types equal up to the names of list items (which writers spell differently).
fn same_type(a: &DataType, b: &DataType) -> bool {
    match (a, b) {
        (DataType::List(x), DataType::List(y)) | (DataType::LargeList(x), DataType::LargeList(y)) => same_field(x, y),
        (DataType::FixedSizeList(x, n), DataType::FixedSizeList(y, m)) => n == m && same_field(x, y),
        (DataType::Struct(x), DataType::Struct(y)) => {
            x.len() == y.len()
                && x.iter()
                    .zip(y.iter())
                    .all(|(p, q)| p.name() == q.name() && same_field(p, q))
        }
        _ => a == b,
    }
}

/// `batch`'s columns in the order of the data file's `schema` (`order[i]` is the input column
/// of output column `i`; `None` keeps them as they are).
fn reorder_columns(batch: &RecordBatch, order: Option<&[usize]>, schema: &SchemaRef) -> Result<RecordBatch> {
    let columns = match order {
        Some(order) => order.iter().map(|&i| batch.column(i).clone()).collect(),
        None => batch.columns().to_vec(),
    };
    let opts = arrow_array::RecordBatchOptions::new().with_row_count(Some(batch.num_rows()));
    Ok(RecordBatch::try_new_with_options(schema.clone(), columns, &opts)?)
}

/// Writes data files under `data/` of a dataset from `batches`, returning one fragment per
/// file (ids 0.. until the commit assigns real ones). On local disk files are written in
/// place; for object stores each file is written to a local temporary file first and
/// handed out by [`FragmentWriter::take_uploads`] once complete. [`FragmentWriter::abort`]
/// removes whatever was written.
pub struct FragmentWriter {
    store: Arc<dyn Storage>,
    schema: SchemaRef,
    /// `schema` as its data files store it (blob v2 columns as descriptors).
    file_schema: SchemaRef,
    /// The field ids data files record for `file_schema`.
    file_ids: Vec<i32>,
    params: WriteParams,
    current: Option<OpenFile>,
    done: Vec<pb::DataFragment>,
    /// Completed files to upload (object stores only).
    uploads: Vec<PendingUpload>,
    progress: WriteProgress,
    /// The final syncs of the files closed so far, running in the background.
    syncs: Syncs,
}

/// The data file being written.
struct OpenFile {
    name: String,
    /// Where it is being written: in place, or a temporary file to upload.
    local: std::path::PathBuf,
    /// Whether `local` is a temporary file to upload once complete.
    upload: bool,
    writer: FileWriter<BufWriter<SyncingFile>>,
    /// Writes the blob v2 columns' values and descriptors, if there are any.
    blobs: Option<crate::blob::write::BlobEncoder>,
}

/// A completed data file waiting for its upload.
#[derive(Debug)]
pub(crate) struct PendingUpload {
    /// Its path in the store (`data/...`).
    pub path: String,
    /// The local temporary file holding it (removed once uploaded).
    pub local: std::path::PathBuf,
}

/// Appends, in Lance field pre-order, whether each field of `field` is a 2.1+ leaf column.
fn leaf_mask(field: &Field, out: &mut Vec<bool>) {
    let packed = lancelet_file::plan::is_packed(field);
    match field.data_type() {
        DataType::Struct(children) if !packed => {
            out.push(false);
            children.iter().for_each(|c| leaf_mask(c, out));
        }
        DataType::List(item) | DataType::LargeList(item) | DataType::Map(item, _) => {
            out.push(false);
            leaf_mask(item, out);
        }
        // A packed struct is one column: listed itself, its fields not.
        DataType::Struct(children) => {
            out.push(true);
            let mut below = Vec::new();
            children.iter().for_each(|c| leaf_mask(c, &mut below));
            out.extend(below.iter().map(|_| false));
        }
        _ => out.push(true),
    }
}

impl FragmentWriter {
    /// A writer of files with `schema`, recording `field_ids` (pre-order Lance field ids).
    pub fn new(
        store: Arc<dyn Storage>,
        schema: SchemaRef,
        field_ids: Vec<i32>,
        mut params: WriteParams,
    ) -> Result<Self> {
        params.writer.version = params.file_version;
        if params.max_rows_per_file == 0 || params.max_bytes_per_file == 0 {
            return Err(Error::InvalidArgument(
                "max_rows_per_file and max_bytes_per_file must be positive".into(),
            ));
        }
        if let Some(tag) = &params.file_tag {
            check_file_tag(tag)?;
        }
        // Checks the schema (and the file version) before any input is consumed.
        crate::blob::write::refuse_nested_blobs(&schema)?;
        let file_schema = crate::blob::write::file_schema(&schema);
        if !Arc::ptr_eq(&file_schema, &schema) && params.file_version != FileVersion::V2_2 {
            return Err(Error::InvalidArgument(format!(
                "Blob v2 requires file version >= 2.2 (got {:?})",
                params.file_version
            )));
        }
        let file_ids = crate::blob::write::file_field_ids(&schema, &field_ids)?;
        FileWriter::try_new(
            std::io::sink(),
            "schema check",
            file_schema.clone(),
            params.writer.clone(),
        )?;
        Ok(Self {
            store,
            file_schema,
            file_ids,
            schema,
            params,
            current: None,
            done: Vec::new(),
            uploads: Vec::new(),
            progress: WriteProgress::default(),
            syncs: Syncs::default(),
        })
    }

    fn open_file(&mut self) -> Result<()> {
        let name = new_data_file_name(self.params.file_tag.as_deref());
        let (path, upload) = match self.store.local_path(&format!("{DATA_DIR}/{name}")) {
            Some(p) => (p, false),
            None => (std::env::temp_dir().join(format!("lancelet-upload-{name}")), true),
        };
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| lancelet_file::Error::io(&dir.display().to_string(), e))?;
        }
        let display = path.display().to_string();
        let f = File::create(&path).map_err(|e| lancelet_file::Error::io(&display, e))?;
        let mut w = FileWriter::try_new(
            BufWriter::with_capacity(1 << 20, SyncingFile::new(f)),
            &display,
            self.file_schema.clone(),
            self.params.writer.clone(),
        )?;
        w.set_field_ids(self.file_ids.clone())?;
        let blobs = if Arc::ptr_eq(&self.file_schema, &self.schema) {
            None
        } else {
            let dir = match self.store.local_path(DATA_DIR) {
                Some(d) if !upload => d,
                _ => std::env::temp_dir().join(format!("lancelet-upload-sidecars-{name}")),
            };
            Some(crate::blob::write::BlobEncoder::new(
                &self.schema,
                &name,
                dir,
                self.params.blob.clone(),
            )?)
        };
        self.current = Some(OpenFile {
            name,
            local: path,
            upload,
            writer: w,
            blobs,
        });
        Ok(())
    }

    /// Finishes the data file being written (if any). A failure (disk full, say) removes
    /// the partial file and its blob sidecars: nothing names them, and they would keep the
    /// disk full.
    fn close_file(&mut self) -> Result<()> {
        let Some(open) = self.current.take() else {
            return Ok(());
        };
        let mut partial = vec![open.local.clone()];
        partial.extend(open.blobs.iter().flat_map(|b| b.sidecars()).map(|s| s.local.clone()));
        let closed = self.finish_file(open);
        if closed.is_err() {
            for p in partial {
                let _ = std::fs::remove_file(p);
            }
        }
        closed
    }

    fn finish_file(&mut self, open: OpenFile) -> Result<()> {
        let OpenFile {
            name,
            local,
            upload,
            writer: w,
            blobs,
        } = open;
        let rows = w.num_rows();
        let (out, _) = w.finish()?;
        if let Some(b) = blobs {
            for s in b.finish()? {
                if upload {
                    self.uploads.push(PendingUpload {
                        path: s.path,
                        local: s.local,
                    });
                }
            }
        }
        let file = out
            .into_inner()
            .map_err(|e| lancelet_file::Error::io(&name, e.into_error()))?;
        // The file's sync runs in the background; a commit waits for it before publishing.
        let (size, synced) = file.close().map_err(|e| lancelet_file::Error::io(&name, e))?;
        self.syncs.push(name.clone(), synced);
        let (major, minor) = match self.params.file_version {
            FileVersion::V2_0 => (2, 0),
            other => {
                let (a, b) = other.footer_pair();
                (u32::from(a), u32::from(b))
            }
        };
        if upload {
            self.uploads.push(PendingUpload {
                path: format!("{DATA_DIR}/{name}"),
                local,
            });
        }
        // At 2.1+ only leaves have columns, and the data file lists only their ids (as pylance).
        let listed_ids = if self.params.file_version == FileVersion::V2_0 {
            self.file_ids.clone()
        } else {
            let mut leaves = Vec::new();
            self.file_schema.fields().iter().for_each(|f| leaf_mask(f, &mut leaves));
            if leaves.len() == self.file_ids.len() {
                self.file_ids
                    .iter()
                    .zip(leaves)
                    .filter(|(_, l)| *l)
                    .map(|(id, _)| *id)
                    .collect()
            } else {
                self.file_ids.clone()
            }
        };
        // Id 0: the commit numbers the fragment (as pylance's writer leaves it).
        self.done.push(pb::DataFragment {
            id: 0,
            files: vec![pb::DataFile {
                path: name,
                column_indices: (0..listed_ids.len() as i32).collect(),
                fields: listed_ids,
                file_major_version: major,
                file_minor_version: minor,
                file_size_bytes: size,
                base_id: None,
            }],
            deletion_file: None,
            physical_rows: rows,
            ..Default::default()
        });
        self.progress.files += 1;
        self.progress.bytes += size;
        self.report();
        Ok(())
    }

    fn report(&self) {
        if let Some(p) = &self.params.progress {
            p(self.progress);
        }
    }

    /// Closes the data file being written, if any: the next rows start a new one.
    pub(crate) fn cut(&mut self) -> Result<()> {
        self.close_file()
    }

    /// Writes one batch (already in the file schema), cutting files at the row limit.
    pub fn write(&mut self, batch: &RecordBatch) -> Result<()> {
        let mut offset = 0usize;
        while offset < batch.num_rows() {
            if self.current.is_none() {
                self.open_file()?;
            }
            let Some(OpenFile { writer: w, blobs, .. }) = self.current.as_mut() else {
                return Err(Error::InvalidArgument("no open data file".into()));
            };
            let room = (self.params.max_rows_per_file - w.num_rows()).min((batch.num_rows() - offset) as u64) as usize;
            let part = batch.slice(offset, room);
            let part = match blobs.as_mut() {
                Some(b) => b.encode(&part, &mut |bytes| w.write_blob_payload(bytes))?,
                None => part,
            };
            w.write_batch(&part)?;
            offset += room;
            self.progress.rows += room as u64;
            let full =
                w.num_rows() >= self.params.max_rows_per_file || w.bytes_written() >= self.params.max_bytes_per_file;
            if full {
                self.close_file()?;
            }
        }
        self.report();
        Ok(())
    }

    /// Closes the last file and returns the fragments written, once every file is synced
    /// to disk.
    pub fn finish(&mut self) -> Result<Vec<pb::DataFragment>> {
        let (done, mut syncs) = self.finish_unsynced()?;
        wait_synced(&mut syncs)?;
        Ok(done)
    }

    /// Closes the last file and returns the fragments written, and the syncs of their
    /// files still running: wait for them before any manifest names the files.
    pub(crate) fn finish_unsynced(&mut self) -> Result<(Vec<pb::DataFragment>, Syncs)> {
        self.close_file()?;
        Ok((self.done.clone(), std::mem::take(&mut self.syncs)))
    }

    /// Completed files that still have to be uploaded to the store (object stores only).
    pub(crate) fn take_uploads(&mut self) -> Vec<PendingUpload> {
        std::mem::take(&mut self.uploads)
    }

    /// Uploads the completed files waiting for it.
    pub(crate) async fn upload_pending(&mut self) -> Result<()> {
        for u in self.take_uploads() {
            let res = self.store.upload(&u.path, &u.local).await;
            let _ = std::fs::remove_file(&u.local);
            res?;
        }
        Ok(())
    }

    /// Removes every file written so far (after a failure).
    pub async fn abort(&mut self) {
        let _ = self.syncs.wait();
        if let Some(open) = self.current.take() {
            let _ = std::fs::remove_file(open.local);
            for s in open.blobs.iter().flat_map(|b| b.sidecars()) {
                let _ = std::fs::remove_file(&s.local);
            }
        }
        for u in std::mem::take(&mut self.uploads) {
            let _ = std::fs::remove_file(u.local);
        }
        let done = std::mem::take(&mut self.done);
        remove_fragments(self.store.as_ref(), &done).await;
    }
}

/// The Lance field ids of the top-level columns at `present` (positions in `schema`),
/// each followed by its children's, in pre-order, from the dataset's field list.
pub(crate) fn dataset_field_ids(
    schema: &Schema,
    fields: &[lancelet_proto::pbfile::Field],
    present: &[usize],
) -> Result<Vec<i32>> {
    let ours = to_lance_fields(schema)?;
    let theirs = preorder(fields);
    if ours.len() != theirs.len() || ours.iter().zip(&theirs).any(|(a, b)| a.name != b.name) {
        return Err(Error::SchemaMismatch(
            "the dataset's field list does not match its schema".into(),
        ));
    }
    let mut out = Vec::new();
    let mut top = 0usize;
    for (i, f) in ours.iter().enumerate() {
        if f.parent_id < 0 && i > 0 {
            top += 1;
        }
        if present.contains(&top) {
            out.push(theirs[i].id);
        }
    }
    Ok(out)
}

/// The ids data files record for `schema` (the appended columns, as written) from the
/// dataset's fields `dataset` (the same columns) and their pre-order ids `ids`: the same,
/// except where a blob v2 column is written for a dataset blob column of another shape
/// (blob v1, or v2 with other children): it keeps its id and its children (which data
/// files never list) get -1.
fn appended_field_ids(schema: &Schema, dataset: &[&Field], ids: &[i32]) -> Result<Vec<i32>> {
    fn lance_len(f: &Field) -> Result<usize> {
        Ok(to_lance_fields(&Schema::new(vec![f.clone()]))?.len())
    }
    fn walk(f: &Field, g: &Field, ids: &mut std::slice::Iter<'_, i32>, out: &mut Vec<i32>) -> Result<()> {
        let mismatch = || Error::SchemaMismatch("the dataset's field list does not match its schema".into());
        if lancelet_file::blob::is_blob_v2(f) && lancelet_file::blob::is_blob(g) {
            out.push(*ids.next().ok_or_else(mismatch)?);
            for _ in 1..lance_len(g)? {
                ids.next().ok_or_else(mismatch)?;
            }
            out.extend(std::iter::repeat_n(-1, lance_len(f)?.saturating_sub(1)));
            return Ok(());
        }
        if let (DataType::Struct(fc), DataType::Struct(gc)) = (f.data_type(), g.data_type()) {
            out.push(*ids.next().ok_or_else(mismatch)?);
            for (a, b) in fc.iter().zip(gc.iter()) {
                walk(a, b, ids, out)?;
            }
            return Ok(());
        }
        for _ in 0..lance_len(g)? {
            out.push(*ids.next().ok_or_else(mismatch)?);
        }
        Ok(())
    }
    let mut out = Vec::with_capacity(ids.len());
    let mut it = ids.iter();
    for (f, g) in schema.fields().iter().zip(dataset) {
        walk(f, g, &mut it, &mut out)?;
    }
    Ok(out)
}

/// Lance fields in pre-order (parents before children, siblings in list order).
fn preorder(fields: &[lancelet_proto::pbfile::Field]) -> Vec<&lancelet_proto::pbfile::Field> {
    fn visit<'a>(
        parent: i32,
        fields: &'a [lancelet_proto::pbfile::Field],
        out: &mut Vec<&'a lancelet_proto::pbfile::Field>,
        depth: usize,
    ) {
        if depth > 64 {
            return;
        }
        for f in fields.iter().filter(|f| f.parent_id == parent) {
            out.push(f);
            visit(f.id, fields, out, depth + 1);
        }
    }
    let mut out = Vec::with_capacity(fields.len());
    visit(-1, fields, &mut out, 0);
    out
}

/// Data files written and not committed yet.
#[derive(Debug, Clone)]
pub struct StagedWrite {
    /// One fragment per data file (ids from 0; the commit assigns real ones).
    pub fragments: Vec<pb::DataFragment>,
    /// The schema of the files: the dataset's columns (and field ids) when appending.
    pub schema: SchemaRef,
    /// Whether the files add to an existing dataset rather than create or replace one.
    pub appending: bool,
}

/// Opens the dataset at `loc` if there is one.
pub(crate) async fn open_existing(loc: &Location) -> Result<Option<Dataset>> {
    match Dataset::open_with(
        loc.store.clone(),
        display_root(loc),
        None,
        Arc::<Caches>::default(),
        None,
    )
    .await
    {
        Ok(ds) => Ok(Some(ds)),
        Err(Error::NotFound(_)) => Ok(None),
        Err(Error::Table(e)) if e.is_not_found() => Ok(None),
        Err(e) => Err(e),
    }
}

/// Writes `reader`'s batches as data files of the dataset at `root` without committing
/// them: in the dataset's schema when `params.mode` appends to an existing dataset, in
/// the data's schema otherwise. Returns the dataset as it was (if any) and the files.
/// On error, the files written are removed.
pub async fn write_fragments(
    loc: &Location,
    reader: Box<dyn RecordBatchReader + Send>,
    params: &WriteParams,
) -> Result<(Option<Dataset>, StagedWrite)> {
    let existing = open_existing(loc).await?;
    write_fragments_on(loc, existing, reader, params).await
}

/// [`write_fragments`] against `existing` as it was read (a version a writer planned
/// against, possibly older than the latest) rather than the latest version.
pub async fn write_fragments_on(
    loc: &Location,
    existing: Option<Dataset>,
    reader: Box<dyn RecordBatchReader + Send>,
    params: &WriteParams,
) -> Result<(Option<Dataset>, StagedWrite)> {
    let (existing, staged, mut syncs) = write_fragments_syncing(loc, existing, reader, params).await?;
    if let Err(e) = wait_synced(&mut syncs) {
        remove_fragments(loc.store.as_ref(), &staged.fragments).await;
        return Err(e);
    }
    Ok((existing, staged))
}

/// Waits for data file syncs, naming the file whose sync failed.
fn wait_synced(syncs: &mut Syncs) -> Result<()> {
    syncs
        .wait()
        .map_err(|(name, e)| Error::File(lancelet_file::Error::io(&name, e)))
}

/// [`write_fragments_on`] returning while the files' syncs may still run.
async fn write_fragments_syncing(
    loc: &Location,
    existing: Option<Dataset>,
    reader: Box<dyn RecordBatchReader + Send>,
    params: &WriteParams,
) -> Result<(Option<Dataset>, StagedWrite, Syncs)> {
    // JSON text columns (`pa.json_()`) are stored as JSONB.
    let mut reader = crate::json::storage_reader(reader);
    let data_schema = reader.schema();
    let mode = params.mode;
    if mode == WriteMode::Create && existing.is_some() {
        return Err(Error::AlreadyExists(loc.store.root_display()));
    }
    let appending = mode == WriteMode::Append && existing.is_some();
    // Appends keep the dataset's file format unless they name one (then their files are
    // of that format, and the dataset mixes versions, as in pylance), and so do overwrites
    // that name none; a legacy dataset is overwritten at the default.
    let kept;
    let params = match (&existing, appending || params.default_file_version) {
        (Some(ds), true) if !(mode == WriteMode::Overwrite && ds.data_storage_version() == "0.1") => {
            let dataset_version = ds.writable_version("appending")?;
            kept = WriteParams {
                file_version: match appending && !params.default_file_version {
                    true => params.file_version,
                    false => dataset_version,
                },
                ..params.clone()
            };
            &kept
        }
        _ => params,
    };
    // At 2.2 blob v1 columns (`lance-encoding:blob`) are written as blob v2, as pylance does.
    let v1_as_v2 = params.file_version == FileVersion::V2_2 && crate::blob::write::has_blob_v1(&data_schema);
    let data_schema = if v1_as_v2 {
        crate::blob::write::v1_as_v2_schema(&data_schema)
    } else {
        data_schema
    };
    // External blob URIs under a registered (non-root) base path are stored relative to it.
    let with_bases;
    let params = match &existing {
        Some(ds) if ds.manifest().base_paths.iter().any(|b| !b.is_dataset_root) => {
            let mut p = params.clone();
            p.blob.bases = ds
                .manifest()
                .base_paths
                .iter()
                .filter(|b| !b.is_dataset_root)
                .map(|b| (b.id, b.path.clone()))
                .collect();
            with_bases = p;
            &with_bases
        }
        _ => params,
    };
    let (file_schema, order, field_ids) = match (&existing, appending) {
        (Some(ds), true) => {
            // At 2.2 the dataset's blob v1 columns take blob v2 values: the commit turns
            // those the new files hold into blob v2 fields, as pylance does.
            let target = match params.file_version == FileVersion::V2_2 {
                true => crate::blob::write::v1_as_v2_schema(ds.schema()),
                false => ds.schema().clone(),
            };
            let aligned = align_schema(&target, &data_schema)?;
            // Keep the data's nested field names (e.g. list items) so batches need no cast.
            let fields: Vec<Field> = aligned
                .order
                .iter()
                .zip(&aligned.present)
                .map(|(&i, &pos)| {
                    data_schema
                        .field(i)
                        .clone()
                        .with_name(ds.schema().field(pos).name().clone())
                })
                .collect();
            let schema = Arc::new(Schema::new_with_metadata(fields, ds.schema().metadata().clone()));
            let ids = dataset_field_ids(ds.schema(), &ds.manifest().fields, &aligned.present)?;
            let present: Vec<&Field> = aligned.present.iter().map(|&p| ds.schema().field(p)).collect();
            let ids = appended_field_ids(&schema, &present, &ids)?;
            let identity = aligned.order.len() == data_schema.fields().len()
                && aligned.order.iter().enumerate().all(|(i, &j)| i == j);
            (schema, (!identity).then_some(aligned.order), ids)
        }
        _ => {
            let fields = to_lance_fields(&data_schema)?;
            // Before any file is written; the commit checks again.
            lancelet_table::manifest::check_field_names(&fields, |_| true)?;
            let ids = fields.iter().map(|f| f.id).collect();
            (data_schema.clone(), None::<Vec<usize>>, ids)
        }
    };
    let mut writer = FragmentWriter::new(loc.store.clone(), file_schema.clone(), field_ids, params.clone())?;
    let mut syncs = Syncs::default();
    let pumped: Result<Vec<pb::DataFragment>> = async {
        for batch in reader.by_ref() {
            let batch = batch?;
            if batch.num_rows() == 0 {
                continue;
            }
            let batch = if v1_as_v2 {
                crate::blob::write::v1_as_v2_batch(&batch, &data_schema)?
            } else {
                batch
            };
            writer.write(&reorder_columns(&batch, order.as_deref(), &file_schema)?)?;
            writer.upload_pending().await?;
        }
        let (fragments, mut pending) = writer.finish_unsynced()?;
        syncs.append(&mut pending);
        writer.upload_pending().await?;
        Ok(fragments)
    }
    .await;
    let fragments = match pumped {
        Ok(f) => f,
        Err(e) => {
            let _ = syncs.wait();
            writer.abort().await;
            return Err(e);
        }
    };
    Ok((
        existing,
        StagedWrite {
            fragments,
            schema: file_schema,
            appending,
        },
        syncs,
    ))
}

/// Writes `reader`'s batches as a dataset at `root` and commits them.
pub async fn write_dataset(
    loc: &Location,
    reader: Box<dyn RecordBatchReader + Send>,
    params: WriteParams,
) -> Result<Dataset> {
    let existing = open_existing(loc).await?;
    let (existing, staged, syncs) = write_fragments_syncing(loc, existing, reader, &params).await?;
    let op = if staged.appending {
        CommitKind::Append
    } else {
        CommitKind::Overwrite(staged.schema.clone())
    };
    let created = existing.is_none();
    // The files' syncs overlap the commit's preparation; the manifest waits for them (and
    // a commit that fails first drops them, which waits too).
    let mut syncs = syncs;
    let ready = move || {
        syncs
            .wait()
            .map_err(|(name, source)| lancelet_table::Error::from(lancelet_io::Error::Io { path: name, source }))
    };
    match commit_fragments_on_when(loc, existing, op, staged.fragments.clone(), &params, ready).await {
        Ok(ds) => Ok(ds),
        Err(e) => {
            if nothing_committed(&e) {
                remove_fragments(loc.store.as_ref(), &staged.fragments).await;
            }
            Err(match e {
                Error::Table(lancelet_table::Error::CommitConflict { .. })
                    if params.mode == WriteMode::Create && created =>
                {
                    Error::AlreadyExists(loc.store.root_display())
                }
                e => e,
            })
        }
    }
}

/// What a commit of written fragments does.
#[derive(Debug, Clone)]
pub enum CommitKind {
    /// Add the fragments to the dataset.
    Append,
    /// Replace the dataset's rows with the fragments, and its schema with this one
    /// (creating the dataset if absent).
    Overwrite(SchemaRef),
}

/// Commits fragments written earlier (e.g. by [`write_fragments`] on other machines) as
/// one new version of the dataset at `root`, on top of `read_version` (the latest when
/// `None`). Uses `params` for naming, file version and commit message.
pub async fn commit_fragments(
    loc: &Location,
    kind: CommitKind,
    fragments: Vec<pb::DataFragment>,
    read_version: Option<u64>,
    params: &WriteParams,
) -> Result<Dataset> {
    let existing = match read_version {
        None => open_existing(loc).await?,
        Some(v) => Some(
            Dataset::open_with(
                loc.store.clone(),
                display_root(loc),
                Some(VersionRef::Number(v)),
                Arc::default(),
                None,
            )
            .await?,
        ),
    };
    commit_fragments_on(loc, existing, kind, fragments, params).await
}

/// Checks fragments to commit: safe paths, known field ids, and files of format `version`
/// (an overwrite), or of any format lancelet writes (an append: pylance lets a dataset mix
/// file versions).
fn check_fragments(
    fragments: &[pb::DataFragment],
    fields: &[lancelet_proto::pbfile::Field],
    version: Option<&str>,
) -> Result<()> {
    let known: std::collections::HashSet<i32> = fields.iter().map(|f| f.id).collect();
    for f in fragments {
        if f.files.is_empty() || f.physical_rows == 0 {
            return Err(Error::InvalidArgument(format!(
                "fragment {} has no data files or no rows",
                f.id
            )));
        }
        for d in &f.files {
            crate::safe_relative(&d.path)?;
            if let Some(id) = d.fields.iter().find(|id| !known.contains(id)) {
                return Err(Error::SchemaMismatch(format!(
                    "data file {} holds field id {id}, which the dataset's schema does not have",
                    d.path
                )));
            }
            let v = format!("{}.{}", d.file_major_version, d.file_minor_version);
            match version {
                Some(version) if v != version => {
                    return Err(Error::Unsupported(format!(
                        "data file {} has format {v} but the dataset uses {version}",
                        d.path
                    )))
                }
                None if !matches!(v.as_str(), "2.0" | "2.1" | "2.2") => {
                    return Err(Error::Unsupported(format!(
                        "data file {} has format {v}; appends take files of format 2.0, 2.1 or 2.2",
                        d.path
                    )))
                }
                _ => {}
            }
        }
    }
    Ok(())
}

pub(crate) async fn commit_fragments_on(
    loc: &Location,
    existing: Option<Dataset>,
    kind: CommitKind,
    fragments: Vec<pb::DataFragment>,
    params: &WriteParams,
) -> Result<Dataset> {
    commit_fragments_on_when(loc, existing, kind, fragments, params, || Ok(())).await
}

/// [`commit_fragments_on`], calling `ready` before the manifest is written (see
/// [`lancelet_table::commit::commit_when`]).
async fn commit_fragments_on_when(
    loc: &Location,
    existing: Option<Dataset>,
    kind: CommitKind,
    fragments: Vec<pb::DataFragment>,
    params: &WriteParams,
    ready: impl FnOnce() -> lancelet_table::Result<()> + Send,
) -> Result<Dataset> {
    let store = loc.store.clone();
    // The dataset's file format after this commit: an append keeps it; an overwrite takes
    // its files' (or, with no files, the one asked for, or the existing one by default).
    let mut version = params.file_version.name().to_string();
    let op = match kind {
        CommitKind::Append => {
            let Some(ds) = &existing else {
                return Err(Error::NotFound(format!(
                    "{} (append needs an existing dataset; overwrite creates one)",
                    loc.store.root_display()
                )));
            };
            version = ds.data_storage_version();
            check_fragments(&fragments, &ds.manifest().fields, None)?;
            Operation::Append(pb::transaction::Append { fragments })
        }
        CommitKind::Overwrite(schema) => {
            let fields = to_lance_fields(&schema)?;
            if let Some(d) = fragments.first().and_then(|f| f.files.first()) {
                version = format!("{}.{}", d.file_major_version, d.file_minor_version);
            } else if let Some(ds) = existing.as_ref().filter(|_| params.default_file_version) {
                if let Ok(v) = ds.writable_version("overwriting") {
                    version = v.name().to_string();
                }
            }
            check_fragments(&fragments, &fields, Some(&version))?;
            Operation::Overwrite(pb::transaction::Overwrite {
                fragments,
                schema: fields,
                schema_metadata: schema
                    .metadata()
                    .iter()
                    .map(|(k, v)| (k.clone(), bytes::Bytes::from(v.clone().into_bytes())))
                    .collect(),
                // Config given to a write is recorded when it creates the dataset (pylance's rule).
                config_upsert_values: if existing.is_none() {
                    params.config.clone()
                } else {
                    Default::default()
                },
                initial_bases: Vec::new(),
            })
        }
    };
    let read_version = existing.as_ref().map(|d| d.version()).unwrap_or(0);
    let mut txn = new_transaction(read_version, op, params.commit_message.as_deref());
    txn.transaction_properties.extend(params.transaction_properties.clone());
    let opts = commit_options(params, version);
    if let (Some(ds), Some(op)) = (&existing, &txn.operation) {
        crate::check_fragment_id_room(ds.manifest(), op, &display_root(loc).display().to_string())?;
    }
    let base = existing.as_ref().map(|d| (d.manifest(), d.naming()));
    let lock = params.commit_lock.as_ref();
    let (m, naming) = crate::commit::commit_with_hooks(store.as_ref(), base, &txn, &opts, lock, ready).await?;
    let ds = Dataset::from_manifest(store, display_root(loc), m, naming, Arc::default(), None)?;
    ds.set_commit_lock(params.commit_lock.clone());
    Ok(ds.after_commit().await)
}

/// The root a dataset at `loc` shows in messages (its directory, or its URI).
fn display_root(loc: &Location) -> std::path::PathBuf {
    loc.local_root
        .clone()
        .unwrap_or_else(|| std::path::PathBuf::from(loc.store.root_display()))
}

/// Removes data files named with `tag` (see [`WriteParams::file_tag`]) except those in
/// `keep`: what a distributed job left behind in tasks that failed, were retried or ran
/// twice. Returns how many files it removed.
pub async fn remove_tagged_files(loc: &Location, tag: &str, keep: &std::collections::HashSet<String>) -> Result<usize> {
    check_file_tag(tag)?;
    let store = &loc.store;
    let suffix = format!("-{tag}.lance");
    let mut removed = 0;
    for name in store.list(DATA_DIR).await? {
        if name.ends_with(&suffix) && !keep.contains(&name) {
            store.delete(&format!("{DATA_DIR}/{name}")).await?;
            removed += 1;
        }
    }
    Ok(removed)
}

/// Whether a commit that failed with `e` surely committed nothing, so the files it wrote
/// may be removed. An I/O error may come from a manifest write that landed though its
/// answer was lost (an object store that failed mid-request): the files then belong to a
/// committed version and stay (at worst unreferenced garbage for cleanup to remove).
pub(crate) fn nothing_committed(e: &Error) -> bool {
    e.kind() != lancelet_io::ErrorKind::Io
}

/// Removes the data files of fragments that were never committed.
pub(crate) async fn remove_fragments(store: &dyn Storage, fragments: &[pb::DataFragment]) {
    for f in fragments {
        for d in &f.files {
            let _ = store.delete(&format!("{DATA_DIR}/{}", d.path)).await;
        }
    }
}

/// The commit options of a write with `params` whose data files are of format `version`.
pub(crate) fn commit_options(params: &WriteParams, version: String) -> CommitOptions {
    CommitOptions {
        naming: if params.enable_v2_manifest_paths {
            ManifestNaming::V2
        } else {
            ManifestNaming::V1
        },
        data_format: Some(pb::manifest::DataStorageFormat {
            file_format: "lance".into(),
            version,
        }),
        enable_stable_row_ids: params.enable_stable_row_ids,
        ..CommitOptions::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_file_names_follow_lance_and_carry_the_tag() {
        let plain = new_data_file_name(None);
        assert_eq!(plain.len(), 24 + 26 + ".lance".len());
        assert!(plain[..24].bytes().all(|b| b == b'0' || b == b'1'));
        let tagged = new_data_file_name(Some("spark_ab12"));
        assert!(tagged.ends_with("-spark_ab12.lance"));
        assert_eq!(tagged.len(), plain.len() + "-spark_ab12".len());
    }

    #[test]
    fn file_tags_cannot_change_the_path() {
        for bad in ["", "a/b", "..", "a-b", "a.lance", &"x".repeat(65)] {
            assert!(check_file_tag(bad).is_err(), "{bad:?}");
        }
        assert!(check_file_tag("spark_0123abc").is_ok());
    }
}
