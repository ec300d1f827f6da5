//! Backfilling new columns with a user function (pylance's `add_columns` with a UDF):
//! this module drives the fragments, the batches, the writes, the checkpoint and the
//! cleanup; the caller only maps a batch of existing columns to a batch of new ones.
//!
//! - The new columns' schema is the declared one, else the one a checkpoint recorded,
//!   else the UDF's output on a first batch of at most 16 rows ([`Dataset::backfill_schema`]).
//! - Every fragment is read in physical order, deleted rows included, and its new columns
//!   go into one new data file ([`Dataset::backfill_fragment`]); a UDF batch with other
//!   columns than the first one's is an error, one with other types is cast.
//! - One Merge transaction adds them all ([`Dataset::commit_backfill`]).
//!
//! **Failure policy.** Without a checkpoint, a failure removes every file written so far
//! and commits nothing. With a checkpoint file (a local JSON file), every finished
//! fragment is recorded there as soon as its file is complete, and the files stay: a run
//! on the same dataset version resumes with the fragments not yet done. The checkpoint is
//! removed once the commit lands, or when the commit surely failed (its files are then
//! removed too); after an I/O error at commit, when the commit may have landed, files and
//! checkpoint are kept.
//!
//! ```no_run
//! # async fn demo(ds: lancelet_dataset::Dataset) -> lancelet_dataset::Result<()> {
//! use lancelet_dataset::evolve::backfill::BackfillOptions;
//! let mut double = |b: arrow_array::RecordBatch| -> lancelet_dataset::Result<arrow_array::RecordBatch> {
//!     let x = arrow_cast::cast(b.column(0), &arrow_schema::DataType::Float64)?;
//!     let schema = arrow_schema::Schema::new(vec![arrow_schema::Field::new("x2", arrow_schema::DataType::Float64, true)]);
//!     Ok(arrow_array::RecordBatch::try_new(std::sync::Arc::new(schema), vec![x])?)
//! };
//! let opts = BackfillOptions { read_columns: Some(vec!["x".into()]), ..Default::default() };
//! let ds = ds.backfill(&mut double, &opts).await?;
//! # Ok(()) }
//! ```

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use arrow_array::RecordBatch;
use arrow_schema::{Schema, SchemaRef};
use lancelet_file::schema::{from_lance_fields, to_lance_fields};
use lancelet_proto::pbfile;
use lancelet_table::pb;
use prost::Message;

use crate::scan::{Columns, Scan, ScanOptions};
use crate::{Dataset, Error, Result};

/// A user function from a batch of existing columns to a batch of new columns with as
/// many rows.
pub(crate) type Udf<'a> = dyn FnMut(RecordBatch) -> Result<RecordBatch> + Send + 'a;

/// Rows the UDF sees when its output schema is found by running it.
const SCHEMA_PROBE_ROWS: usize = 16;

/// Options of [`Dataset::backfill`].
#[derive(Debug, Clone, Default)]
pub struct BackfillOptions {
    /// The columns the UDF reads (all when `None`).
    pub read_columns: Option<Vec<String>>,
    /// Rows per UDF batch (the scan's default when `None`).
    pub batch_size: Option<usize>,
    /// The new columns' schema, when declared.
    pub output_schema: Option<SchemaRef>,
    /// A local JSON file recording finished fragments, so a failed run resumes.
    pub checkpoint: Option<PathBuf>,
    /// What identifies the dataset in the checkpoint (its root path when `None`).
    pub checkpoint_key: Option<String>,
}

/// The finished fragments of one backfill, kept in a JSON file keyed by dataset and version.
struct Checkpoint {
    path: Option<PathBuf>,
    key: serde_json::Value,
    schema: Option<SchemaRef>,
    done: BTreeMap<u64, pb::DataFile>,
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

impl Checkpoint {
    /// The checkpoint at `path` when it is for `key`, else an empty one.
    fn load(path: Option<PathBuf>, key: serde_json::Value) -> Self {
        let mut ck = Self {
            path,
            key,
            schema: None,
            done: BTreeMap::new(),
        };
        let Some(saved) = ck
            .path
            .as_ref()
            .and_then(|p| std::fs::read(p).ok())
            .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
        else {
            return ck;
        };
        if saved.get("key") != Some(&ck.key) {
            return ck;
        }
        // Anything unreadable (another format, damage) starts over rather than fails.
        let fields: Option<Vec<pbfile::Field>> = saved.get("fields").and_then(|f| f.as_array()).and_then(|f| {
            f.iter()
                .map(|x| pbfile::Field::decode(unhex(x.as_str()?)?.as_slice()).ok())
                .collect()
        });
        let schema = fields.and_then(|f| from_lance_fields(&f, std::iter::empty(), "checkpoint").ok());
        let done: Option<BTreeMap<u64, pb::DataFile>> = saved.get("done").and_then(|d| d.as_object()).and_then(|d| {
            d.iter()
                .map(|(k, v)| {
                    let file = pb::DataFile::decode(unhex(v.as_str()?)?.as_slice()).ok()?;
                    crate::safe_relative(&file.path).ok()?;
                    Some((k.parse().ok()?, file))
                })
                .collect()
        });
        if let (Some(schema), Some(done)) = (schema, done) {
            ck.schema = Some(Arc::new(schema));
            ck.done = done;
        }
        ck
    }

    fn record(&mut self, fragment_id: u64, file: pb::DataFile, schema: &SchemaRef) -> Result<()> {
        self.done.insert(fragment_id, file);
        self.schema = Some(schema.clone());
        let Some(path) = &self.path else { return Ok(()) };
        let fields: Vec<String> = to_lance_fields(schema)?
            .iter()
            .map(|f| hex(&f.encode_to_vec()))
            .collect();
        let done: serde_json::Map<String, serde_json::Value> = self
            .done
            .iter()
            .map(|(k, f)| (k.to_string(), serde_json::Value::String(hex(&f.encode_to_vec()))))
            .collect();
        let body = serde_json::json!({"key": self.key, "fields": fields, "done": done});
        let mut tmp = path.clone().into_os_string();
        tmp.push(".tmp");
        let io = |e: std::io::Error| {
            Error::InvalidArgument(format!("cannot write the checkpoint file {}: {e}", path.display()))
        };
        std::fs::write(&tmp, body.to_string()).map_err(io)?;
        std::fs::rename(&tmp, path).map_err(io)
    }

    fn clear(&self) {
        if let Some(p) = &self.path {
            let _ = std::fs::remove_file(p);
        }
    }
}

/// `batch` in `schema`: the same column names in order, cast where types differ (a value
/// that does not fit is an error, never silently changed).
fn conform(batch: RecordBatch, schema: &SchemaRef) -> Result<RecordBatch> {
    if batch.schema().fields() == schema.fields() {
        return Ok(batch);
    }
    let names = |s: &Schema| s.fields().iter().map(|f| f.name().clone()).collect::<Vec<_>>();
    if names(&batch.schema()) != names(schema) {
        return Err(Error::InvalidArgument(format!(
            "Output schema of function does not match the expected schema: the UDF returned columns {:?}, earlier {:?}",
            names(&batch.schema()),
            names(schema)
        )));
    }
    let opts = arrow_cast::CastOptions {
        safe: false,
        ..Default::default()
    };
    let columns = batch
        .columns()
        .iter()
        .zip(schema.fields())
        .map(|(c, f)| arrow_cast::cast_with_options(c, f.data_type(), &opts))
        .collect::<std::result::Result<Vec<_>, _>>()
        .map_err(|e| Error::InvalidArgument(format!("the UDF's columns do not cast to {schema}: {e}")))?;
    RecordBatch::try_new(schema.clone(), columns).map_err(|e| Error::InvalidArgument(e.to_string()))
}

/// Runs `udf` on `batch`, checking it kept the number of rows.
fn call(udf: &mut Udf<'_>, batch: RecordBatch) -> Result<RecordBatch> {
    let rows = batch.num_rows();
    // View types (polars strings) are stored as their plain types, as pylance does.
    let out = crate::json::storage_batch(crate::write::views::plain_batch(udf(batch)?)?)?;
    if out.num_rows() != rows {
        return Err(Error::InvalidArgument(format!(
            "the UDF returned {} rows for a batch of {rows}",
            out.num_rows()
        )));
    }
    Ok(out)
}

impl Dataset {
    fn backfill_scan(
        &self,
        fragment_id: u64,
        read_columns: Option<&[String]>,
        batch_size: Option<usize>,
    ) -> ScanOptions {
        let d = ScanOptions::default();
        ScanOptions {
            columns: read_columns.map_or(Columns::All, |c| Columns::Names(c.to_vec())),
            fragments: Some(vec![fragment_id]),
            include_deleted: true,
            batch_size: batch_size.unwrap_or(d.batch_size).max(1),
            ..d
        }
    }

    /// The new columns' schema found by running `udf` on the first rows of the dataset
    /// (at most 16), or `None` when the dataset has no rows.
    pub async fn backfill_schema(
        &self,
        udf: &mut Udf<'_>,
        read_columns: Option<&[String]>,
    ) -> Result<Option<SchemaRef>> {
        for frag in self.fragments() {
            let scan = Scan::plan(self, self.backfill_scan(frag.id, read_columns, Some(SCHEMA_PROBE_ROWS))).await?;
            for task in 0..scan.num_tasks() {
                let batch = scan.run_task(task).await?;
                if batch.num_rows() > 0 {
                    let batch = batch.slice(0, batch.num_rows().min(SCHEMA_PROBE_ROWS));
                    return Ok(Some(call(udf, batch)?.schema()));
                }
            }
        }
        Ok(None)
    }

    /// Runs `udf` over fragment `fragment_id` (deleted rows included) and writes its new
    /// columns, conformed to `schema`, as one data file, not committed (a `file_tag` goes
    /// into its name). On error nothing of it is left.
    pub async fn backfill_fragment(
        &self,
        fragment_id: u64,
        udf: &mut Udf<'_>,
        read_columns: Option<&[String]>,
        batch_size: Option<usize>,
        schema: &SchemaRef,
        file_tag: Option<String>,
    ) -> Result<pb::DataFile> {
        self.fragment(fragment_id)?;
        let plain = crate::write::views::plain_schema(schema);
        let schema = crate::json::storage_schema(plain.as_ref().unwrap_or(schema));
        let schema = &schema;
        let fields = self.new_fields(schema)?;
        let scan = Scan::plan(self, self.backfill_scan(fragment_id, read_columns, batch_size)).await?;
        let mut writer = self.column_file_writer(schema.clone(), &fields, file_tag)?;
        let mut written: Result<()> = Ok(());
        for task in 0..scan.num_tasks() {
            written = async {
                let batch = scan.run_task(task).await?;
                let out = conform(call(udf, batch)?, schema)?;
                writer.write(&out)
            }
            .await;
            if written.is_err() {
                break;
            }
        }
        if let Err(e) = written {
            writer.abort().await;
            return Err(e);
        }
        self.finish_column_file(fragment_id, writer).await
    }

    /// Commits backfilled columns of `schema` (`files`: one per fragment of this version);
    /// when the commit surely failed, removes the files.
    pub(crate) async fn commit_backfill(&self, schema: &SchemaRef, files: Vec<(u64, pb::DataFile)>) -> Result<Dataset> {
        let paths: Vec<String> = files.iter().map(|(_, f)| f.path.clone()).collect();
        let committed = match self.new_fields(schema) {
            Ok(fields) => self.commit_new_columns(files, fields).await,
            Err(e) => Err(e),
        };
        if let Err(e) = &committed {
            if crate::write::nothing_committed(e) {
                self.remove_data_files(paths.iter().map(String::as_str)).await;
            }
        }
        committed
    }

    /// Adds the columns `udf` computes (see the module docs); returns the dataset at the
    /// new version.
    pub async fn backfill(&self, udf: &mut Udf<'_>, opts: &BackfillOptions) -> Result<Dataset> {
        let key = serde_json::json!({
            "uri": opts.checkpoint_key.clone().unwrap_or_else(|| self.root().display().to_string()),
            "version": self.version(),
        });
        let mut ckpt = Checkpoint::load(opts.checkpoint.clone(), key);
        let read_columns = opts.read_columns.as_deref();
        let schema = match (&ckpt.schema, &opts.output_schema) {
            (Some(s), _) | (None, Some(s)) => Some(s.clone()),
            (None, None) => self.backfill_schema(udf, read_columns).await?,
        };
        let schema = schema.map(|s| crate::json::storage_schema(&crate::write::views::plain_schema(&s).unwrap_or(s)));
        let Some(schema) = schema else {
            return Err(Error::InvalidArgument(
                "the dataset has no rows to run the UDF on; give it an output_schema \
                 or add all-null columns with pyarrow fields"
                    .into(),
            ));
        };
        let mut written: Vec<String> = Vec::new();
        let mut files = Vec::new();
        let ran: Result<()> = async {
            for frag in self.fragments() {
                if let Some(file) = ckpt.done.get(&frag.id) {
                    files.push((frag.id, file.clone()));
                    continue;
                }
                let file = self
                    .backfill_fragment(frag.id, udf, read_columns, opts.batch_size, &schema, None)
                    .await?;
                written.push(file.path.clone());
                files.push((frag.id, file.clone()));
                ckpt.record(frag.id, file, &schema)?;
            }
            Ok(())
        }
        .await;
        if let Err(e) = ran {
            if ckpt.path.is_none() {
                self.remove_data_files(written.iter().map(String::as_str)).await;
            }
            return Err(e);
        }
        let committed = self.commit_backfill(&schema, files).await;
        match &committed {
            Err(e) if !crate::write::nothing_committed(e) => {}
            _ => ckpt.clear(),
        }
        committed
    }
}
