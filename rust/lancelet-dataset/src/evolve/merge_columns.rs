//! `merge`: new columns joined on a key (pylance's `LanceDataset.merge(data, left_on,
//! right_on)`).
//!
//! The data to merge (the *right* side) is streamed once:
//!
//! 1. its key column goes into a [`KeyTable`] (key -> right row ordinals; only keys are
//!    held), and its other columns (the new ones) are kept in memory up to
//!    [`MergeColumnsOptions::spill_bytes`], then spilled to an uncommitted data file in
//!    the dataset's store, read back by row;
//! 2. every fragment's key column is scanned (deleted rows included, in physical order),
//!    each key is looked up, and the matching right rows are gathered into one new data
//!    file per fragment holding only the new columns (nulls where nothing matched). From
//!    memory, rows are gathered a few thousand at a time; from the spill file, with one
//!    take per fragment (a take decodes every page its rows touch, so with keys in random
//!    order fewer, larger takes decode each page about once per fragment);
//! 3. one Merge transaction adds the new fields and files, as `add_columns` does.
//!
//! As in pylance, when a key repeats in the data its last row wins, a null key matches a
//! null key, the key columns must have the same type, and every other column of the data
//! must be new. Existing files are never rewritten. On failure the new files (and the
//! spill file) are removed, unless the commit may have landed.
//!
//! ```no_run
//! # async fn demo(ds: lancelet_dataset::Dataset, data: Box<dyn arrow_array::RecordBatchReader + Send>)
//! # -> lancelet_dataset::Result<()> {
//! // Adds every column of `data` but `id`, matched on `id`.
//! let ds = ds.merge_columns(data, "id", None).await?;
//! # Ok(()) }
//! ```

use std::sync::Arc;

use arrow_array::{Array, ArrayRef, RecordBatch, RecordBatchReader, UInt32Array};
use arrow_schema::{Schema, SchemaRef};
use lancelet_file::FileReader;
use lancelet_table::pb;

use crate::modify::merge_insert::keys::{KeyEncoder, KeyTable};
use crate::scan::{Columns, Scan, ScanOptions};
use crate::write::FragmentWriter;
use crate::{Dataset, Error, Result, DATA_DIR};

/// Target rows joined at a time when the right side is in memory.
const GATHER_ROWS: usize = 8192;

/// Target rows joined at a time when the right side was spilled: a take from the spill
/// file decodes every page its rows touch, so few large takes (each page decoded about
/// once per fragment) beat many small ones (every page decoded per take when keys come in
/// random order).
const SPILLED_GATHER_ROWS: usize = 1 << 20;

/// Tuning of [`Dataset::merge_columns_with`].
#[derive(Debug, Clone)]
pub struct MergeColumnsOptions {
    /// Bytes of new-column data kept in memory before they are spilled to a file in the
    /// dataset's store (0 spills at once).
    pub spill_bytes: usize,
}

impl Default for MergeColumnsOptions {
    fn default() -> Self {
        Self { spill_bytes: 256 << 20 }
    }
}

/// The right side's new columns, by ordinal.
enum RightRows {
    /// Batches in memory, with the ordinal each starts at.
    Memory {
        batches: Vec<RecordBatch>,
        starts: Vec<u64>,
    },
    /// One data file in the store (relative to `data/`), read back by row.
    Spilled { path: String, reader: Arc<FileReader> },
}

impl RightRows {
    /// The rows `ordinals` in that order, as one batch of `schema` (unsorted, repeats allowed).
    async fn gather(&self, ordinals: &[u32], schema: &SchemaRef) -> Result<RecordBatch> {
        if ordinals.is_empty() {
            return Ok(RecordBatch::new_empty(schema.clone()));
        }
        let batch = match self {
            Self::Memory { batches, starts } => {
                let at: Vec<(usize, usize)> = ordinals
                    .iter()
                    .map(|&o| {
                        let b = starts.partition_point(|&s| s <= u64::from(o)) - 1;
                        (b, (u64::from(o) - starts[b]) as usize)
                    })
                    .collect();
                let refs: Vec<&RecordBatch> = batches.iter().collect();
                arrow_select::interleave::interleave_record_batch(&refs, &at)?
            }
            Self::Spilled { reader, .. } => {
                let rows: Vec<u64> = ordinals.iter().map(|&o| u64::from(o)).collect();
                reader.take(&reader.projection(None)?, &rows).await?
            }
        };
        Ok(RecordBatch::try_new(schema.clone(), batch.columns().to_vec())?)
    }
}

/// Collects the right side's new columns, spilling them past a budget.
struct Collector<'a> {
    ds: &'a Dataset,
    schema: SchemaRef,
    budget: usize,
    held: usize,
    batches: Vec<RecordBatch>,
    starts: Vec<u64>,
    rows: u64,
    spill: Option<FragmentWriter>,
}

impl Collector<'_> {
    fn push(&mut self, batch: RecordBatch) -> Result<()> {
        if batch.num_rows() == 0 {
            return Ok(());
        }
        if let Some(w) = self.spill.as_mut() {
            w.write(&batch)?;
        } else {
            self.held += batch.get_array_memory_size();
            self.starts.push(self.rows);
            self.batches.push(batch);
            if self.held > self.budget {
                let fields = self.ds.new_fields(&self.schema)?;
                let mut w = self.ds.column_file_writer(self.schema.clone(), &fields, None)?;
                for b in self.batches.drain(..) {
                    w.write(&b)?;
                }
                self.starts.clear();
                self.held = 0;
                self.spill = Some(w);
            }
        }
        Ok(())
    }

    async fn finish(mut self) -> Result<RightRows> {
        let Some(mut w) = self.spill.take() else {
            return Ok(RightRows::Memory {
                batches: self.batches,
                starts: self.starts,
            });
        };
        let done: Result<String> = async {
            let frags = w.finish()?;
            w.upload_pending().await?;
            frags
                .into_iter()
                .flat_map(|f| f.files)
                .map(|f| f.path)
                .next()
                .ok_or_else(|| Error::InvalidArgument("the spill file was not written".into()))
        }
        .await;
        let path = match done {
            Ok(p) => p,
            Err(e) => {
                w.abort().await;
                return Err(e);
            }
        };
        let opened: Result<Arc<FileReader>> = async {
            let io = self.ds.store().open_file(&format!("{DATA_DIR}/{path}")).await?;
            Ok(Arc::new(FileReader::open(io).await?))
        }
        .await;
        match opened {
            Ok(reader) => Ok(RightRows::Spilled { path, reader }),
            Err(e) => {
                self.ds.remove_data_files(std::iter::once(path.as_str())).await;
                Err(e)
            }
        }
    }

    async fn abort(mut self) {
        if let Some(mut w) = self.spill.take() {
            w.abort().await;
        }
    }
}

/// The right side, read: the key table, the row of the last null key, the new columns.
struct Right {
    keys: KeyTable,
    null_row: Option<u32>,
    rows: RightRows,
}

impl Right {
    /// The right row matching each row of `key` (the last one when several match).
    fn lookup(&self, key: &ArrayRef) -> Result<Vec<Option<u32>>> {
        let enc = KeyEncoder::new(vec![key.clone()])?;
        let nulls = key.logical_nulls();
        let mut scratch = Vec::new();
        Ok((0..key.len())
            .map(|i| {
                if nulls.as_ref().is_some_and(|n| n.is_null(i)) {
                    return self.null_row;
                }
                let mut best: Option<u32> = None;
                self.keys.for_each_match(&enc, i, &mut scratch, |o| {
                    best = Some(best.map_or(o, |b| b.max(o)));
                });
                best
            })
            .collect())
    }

    /// The new columns for rows whose keys are `key`, as a batch of `schema`.
    async fn joined(&self, key: &ArrayRef, schema: &SchemaRef) -> Result<RecordBatch> {
        let found = self.lookup(key)?;
        let mut wanted = Vec::new();
        let positions: UInt32Array = found
            .iter()
            .map(|o| {
                o.map(|o| {
                    wanted.push(o);
                    (wanted.len() - 1) as u32
                })
            })
            .collect();
        let matched = self.gather_rows(&wanted, schema).await?;
        // Null positions give nulls: rows that matched nothing.
        let columns = matched
            .columns()
            .iter()
            .map(|c| arrow_select::take::take(c.as_ref(), &positions, None))
            .collect::<std::result::Result<Vec<_>, _>>()?;
        RecordBatch::try_new(schema.clone(), columns).map_err(|e| Error::InvalidArgument(e.to_string()))
    }

    async fn gather_rows(&self, ordinals: &[u32], schema: &SchemaRef) -> Result<RecordBatch> {
        self.rows.gather(ordinals, schema).await
    }
}

impl Dataset {
    /// Adds the columns of `data` joined on `left_on` (a top-level column of the dataset) =
    /// `right_on` (a column of `data`, by default also `left_on`); see the module docs.
    /// Returns the dataset at the new version.
    pub async fn merge_columns(
        &self,
        data: Box<dyn RecordBatchReader + Send>,
        left_on: &str,
        right_on: Option<&str>,
    ) -> Result<Dataset> {
        self.merge_columns_with(data, left_on, right_on, &MergeColumnsOptions::default())
            .await
    }

    /// [`Dataset::merge_columns`] with explicit options.
    pub async fn merge_columns_with(
        &self,
        data: Box<dyn RecordBatchReader + Send>,
        left_on: &str,
        right_on: Option<&str>,
        opts: &MergeColumnsOptions,
    ) -> Result<Dataset> {
        let data = crate::json::storage_reader(crate::write::views::plain_reader(data));
        let right_on = right_on.unwrap_or(left_on);
        let (key_index, values_schema) = self.check_merge(&data.schema(), left_on, right_on)?;
        let right = self.read_right(data, key_index, &values_schema, opts).await?;
        let result = self.merge_right(&right, left_on, &values_schema).await;
        if let RightRows::Spilled { path, .. } = &right.rows {
            self.remove_data_files(std::iter::once(path.as_str())).await;
        }
        result
    }

    /// Checks a merge of data of schema `right` on `left_on` = `right_on` as pylance does;
    /// returns the index of the right key and the schema of the new columns.
    fn check_merge(&self, right: &Schema, left_on: &str, right_on: &str) -> Result<(usize, SchemaRef)> {
        let left = self.schema();
        let left_key = left.field_with_name(left_on).map_err(|_| {
            Error::InvalidArgument(format!(
                "column {left_on:?} does not exist in the dataset (merge joins on a top-level column)"
            ))
        })?;
        let key_index = right
            .index_of(right_on)
            .map_err(|_| Error::InvalidArgument(format!("column {right_on:?} does not exist in the data to merge")))?;
        let new: Vec<_> = right
            .fields()
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != key_index)
            .map(|(_, f)| f.clone())
            .collect();
        let clash: Vec<&str> = new
            .iter()
            .map(|f| f.name().as_str())
            .filter(|n| left.index_of(n).is_ok())
            .collect();
        if !clash.is_empty() {
            return Err(Error::InvalidArgument(format!(
                "column(s) {clash:?} exist in both the dataset and the data to merge"
            )));
        }
        if new.is_empty() {
            return Err(Error::InvalidArgument(
                "the data to merge has no columns besides the key".into(),
            ));
        }
        let right_type = right.field(key_index).data_type();
        if left_key.data_type() != right_type {
            return Err(Error::InvalidArgument(format!(
                "the key columns differ in type: {left_on:?} is {} in the dataset, {right_on:?} is {right_type} in the data to merge",
                left_key.data_type()
            )));
        }
        Ok((key_index, Arc::new(Schema::new(new))))
    }

    /// Streams the right side once: its keys into the key table, its new columns aside.
    async fn read_right(
        &self,
        data: Box<dyn RecordBatchReader + Send>,
        key_index: usize,
        values: &SchemaRef,
        opts: &MergeColumnsOptions,
    ) -> Result<Right> {
        let key_type = data.schema().field(key_index).data_type().clone();
        let mut keys = KeyTable::new(&[&key_type]);
        let mut null_row = None;
        let mut collector = Collector {
            ds: self,
            schema: values.clone(),
            budget: opts.spill_bytes,
            held: 0,
            batches: Vec::new(),
            starts: Vec::new(),
            rows: 0,
            spill: None,
        };
        let mut scratch = Vec::new();
        let read = || -> Result<()> {
            for batch in data {
                let batch = batch?;
                let n = batch.num_rows();
                let base = collector.rows;
                if base + n as u64 > u64::from(u32::MAX) {
                    return Err(Error::Unsupported(
                        "merging more than 4 billion rows at once (merge in parts)".into(),
                    ));
                }
                let key = batch.column(key_index).clone();
                let enc = KeyEncoder::new(vec![key.clone()])?;
                let nulls = key.logical_nulls();
                for i in 0..n {
                    let ordinal = (base + i as u64) as u32;
                    if nulls.as_ref().is_some_and(|m| m.is_null(i)) {
                        null_row = Some(ordinal);
                    } else {
                        keys.insert(&enc, i, ordinal, &mut scratch);
                    }
                }
                let mut cols = batch.columns().to_vec();
                cols.remove(key_index);
                let part = RecordBatch::try_new(values.clone(), cols)?;
                collector.push(part)?;
                collector.rows = base + n as u64;
            }
            Ok(())
        };
        let outcome = read();
        if let Err(e) = outcome {
            collector.abort().await;
            return Err(e);
        }
        if collector.rows == 0 {
            collector.abort().await;
            return Err(Error::InvalidArgument("the data to merge has no rows".into()));
        }
        keys.seal();
        Ok(Right {
            keys,
            null_row,
            rows: collector.finish().await?,
        })
    }

    /// Writes each fragment's joined columns and commits them as a Merge.
    async fn merge_right(&self, right: &Right, left_on: &str, values: &SchemaRef) -> Result<Dataset> {
        use futures::StreamExt;
        let fields = self.new_fields(values)?;
        let rows_at_once = match right.rows {
            RightRows::Memory { .. } => GATHER_ROWS,
            RightRows::Spilled { .. } => SPILLED_GATHER_ROWS,
        };
        let mut files: Vec<(u64, pb::DataFile)> = Vec::new();
        let written: Result<()> = async {
            for frag in self.fragments() {
                let opts = ScanOptions {
                    columns: Columns::Names(vec![left_on.to_string()]),
                    fragments: Some(vec![frag.id]),
                    include_deleted: true,
                    batch_size: rows_at_once,
                    ..ScanOptions::default()
                };
                let scan = Scan::plan(self, opts).await?;
                let scan = &scan;
                let batches = futures::stream::iter(0..scan.num_tasks())
                    .then(|i| scan.run_task(i))
                    .flat_map(|b| {
                        let chunks = match b {
                            Ok(b) => (0..b.num_rows())
                                .step_by(rows_at_once)
                                .map(|at| Ok(b.column(0).slice(at, rows_at_once.min(b.num_rows() - at))))
                                .collect(),
                            Err(e) => vec![Err(e)],
                        };
                        futures::stream::iter(chunks)
                    })
                    .then(|key| async move { right.joined(&key?, values).await });
                let file = self
                    .write_column_file(frag.id, values.clone(), &fields, batches)
                    .await?;
                files.push((frag.id, file));
            }
            Ok(())
        }
        .await;
        let paths: Vec<String> = files.iter().map(|(_, f)| f.path.clone()).collect();
        let committed = match written {
            Ok(()) => self.commit_new_columns(files, fields).await,
            Err(e) => Err(e),
        };
        if let Err(e) = &committed {
            if crate::write::nothing_committed(e) {
                self.remove_data_files(paths.iter().map(String::as_str)).await;
            }
        }
        committed
    }
}
