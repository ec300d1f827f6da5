//! Reading for training: the rows a job draws from, what each rank and worker reads per
//! epoch ([`plan`]), and the read of one batch.
//!
//! A job pins one version. [`Dataset::loader_rows`] lists the row addresses of the rows
//! it trains on (the live rows the filter keeps) once; every epoch is then a plan over that
//! list, so a filter is evaluated once per job, every rank agrees on the rows without
//! talking to the others, and a shuffled epoch can be any permutation of them. A batch is a
//! sorted list of addresses, read by [`BatchReader::read`] with one partial read per
//! fragment; blob columns come back as their bytes.
//!
//! On an object store every read is a round of requests that costs far more than the bytes
//! it moves, so consecutive batches are read together: [`BatchReader::plan_reads`] groups
//! them into windows of about [`WINDOW_BYTES`], and [`BatchReader::read_window`] reads a window's
//! rows as one take and cuts it back into the batches, exactly as read one by one. On local
//! disk each batch is its own window (the page cache makes small reads cheap, and a large
//! window only delays the first batch).

pub mod plan;

use std::ops::Range;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::UInt64Type;
use arrow_array::{ArrayRef, RecordBatch, UInt32Array};
use arrow_schema::{DataType, Field, Schema, SchemaRef};

use crate::scan::{Columns, ScanOptions, ROW_ADDR};
use crate::{Dataset, Result};

/// The columns of a loader's batches.
#[derive(Debug, Clone, Default)]
pub struct BatchColumns {
    /// Stored columns by name (`None`: every column). Blob columns read as their bytes.
    pub names: Option<Vec<String>>,
    /// Output columns computed by SQL expressions, `(name, expression)`; when given,
    /// `names` is ignored.
    pub exprs: Option<Vec<(String, String)>>,
    /// Add `_rowid`.
    pub with_row_id: bool,
}

impl Dataset {
    /// The addresses of the live rows that `filter` keeps (every live row without a
    /// filter), in dataset order.
    pub async fn loader_rows(&self, filter: Option<&str>) -> Result<Vec<u64>> {
        let Some(filter) = filter.filter(|f| !f.trim().is_empty()) else {
            let mut out = Vec::with_capacity(self.count_rows() as usize);
            for f in self.fragments() {
                for r in self.live_ranges(f).await? {
                    out.extend(r.map(|row| (f.id << 32) | row));
                }
            }
            return Ok(out);
        };
        let opts = ScanOptions {
            columns: Columns::Names(Vec::new()),
            filter: Some(filter.to_string()),
            with_row_address: true,
            ..ScanOptions::default()
        };
        let mut out = Vec::new();
        for batch in self.scan_all(opts).await? {
            if let Some(col) = batch.column_by_name(ROW_ADDR) {
                out.extend_from_slice(col.as_primitive::<UInt64Type>().values());
            }
        }
        Ok(out)
    }

    /// The schema of [`Dataset::read_batch`]'s batches.
    pub(crate) async fn batch_schema(&self, columns: &BatchColumns) -> Result<SchemaRef> {
        if let Some(exprs) = &columns.exprs {
            let opts = ScanOptions {
                columns: Columns::Exprs(exprs.clone()),
                row_ranges: Some(Vec::new()),
                with_row_id: columns.with_row_id,
                ..ScanOptions::default()
            };
            return Ok(crate::scan::Scan::plan(self, opts).await?.schema().clone());
        }
        let names = self.batch_names(columns);
        let read = self.take_schema(Some(&names))?;
        let fields: Vec<Field> = read
            .fields()
            .iter()
            .map(|f| {
                if lancelet_file::blob::is_descriptor(f) {
                    Field::new(f.name(), DataType::LargeBinary, true)
                } else {
                    f.as_ref().clone()
                }
            })
            .collect();
        Ok(Arc::new(Schema::new_with_metadata(fields, read.metadata().clone())))
    }

    fn batch_names(&self, columns: &BatchColumns) -> Vec<String> {
        let mut names = columns
            .names
            .clone()
            .unwrap_or_else(|| self.scan_schema().fields().iter().map(|f| f.name().clone()).collect());
        if columns.with_row_id && !names.iter().any(|n| n == crate::scan::ROW_ID) {
            names.push(crate::scan::ROW_ID.to_string());
        }
        names
    }

    /// A reader of batches with `columns`.
    pub async fn batch_reader(&self, columns: BatchColumns) -> Result<BatchReader> {
        let schema = self.batch_schema(&columns).await?;
        let names = self.batch_names(&columns);
        let blobs: Vec<bool> = if columns.exprs.is_some() {
            Vec::new()
        } else {
            names
                .iter()
                .map(|n| {
                    self.scan_schema()
                        .field_with_name(n)
                        .is_ok_and(lancelet_file::blob::is_descriptor)
                })
                .collect()
        };
        let plain = names
            .iter()
            .zip(&blobs)
            .filter(|(_, &blob)| !blob)
            .map(|(n, _)| n.clone())
            .collect();
        Ok(BatchReader {
            ds: self.clone(),
            columns,
            schema,
            names,
            blobs,
            plain,
        })
    }
}

/// Ascending addresses as `(fragment id, physical rows)` runs (a repeated address, from
/// padding, starts a run of its own).
fn runs(addresses: &[u64]) -> Vec<(u64, Range<u64>)> {
    let mut out: Vec<(u64, Range<u64>)> = Vec::new();
    for &a in addresses {
        let (frag, row) = (a >> 32, a & 0xFFFF_FFFF);
        match out.last_mut() {
            Some((f, r)) if *f == frag && r.end == row => r.end += 1,
            _ => out.push((frag, row..row + 1)),
        }
    }
    out
}

/// Reads loader batches: rows by address, blob columns as their bytes, expression columns
/// computed.
#[derive(Debug, Clone)]
pub struct BatchReader {
    ds: Dataset,
    columns: BatchColumns,
    schema: SchemaRef,
    names: Vec<String>,
    /// Per name: a blob column, read as bytes.
    blobs: Vec<bool>,
    /// The names that are not blob columns, taken together.
    plain: Vec<String>,
}

impl BatchReader {
    /// The schema of the batches.
    pub fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    /// The rows at `addresses` (ascending; a repeated address repeats the row).
    pub async fn read(&self, addresses: &[u64]) -> Result<RecordBatch> {
        let ds = &self.ds;
        if let Some(exprs) = &self.columns.exprs {
            let opts = ScanOptions {
                columns: Columns::Exprs(exprs.clone()),
                row_ranges: Some(runs(addresses)),
                with_row_id: self.columns.with_row_id,
                batch_size: addresses.len().max(1),
                ..ScanOptions::default()
            };
            let batches = ds.scan_all(opts).await?;
            return Ok(arrow_select::concat::concat_batches(&self.schema, &batches)?);
        }
        let read = ds.take_addresses(addresses, Some(&self.plain)).await?;
        let mut out: Vec<ArrayRef> = Vec::with_capacity(self.names.len());
        let mut next_plain = 0;
        for (name, &blob) in self.names.iter().zip(&self.blobs) {
            if blob {
                let locations = ds.blob_locations(name, addresses).await?;
                out.push(ds.blob_bytes(&locations, &DataType::LargeBinary).await?);
            } else {
                out.push(read.column(next_plain).clone());
                next_plain += 1;
            }
        }
        let opts = arrow_array::RecordBatchOptions::new().with_row_count(Some(addresses.len()));
        Ok(RecordBatch::try_new_with_options(self.schema.clone(), out, &opts)?)
    }
}

/// The bytes of rows an object-store loader reads at once (see [`BatchReader::windows`]).
pub const WINDOW_BYTES: usize = 16 << 20;

/// The most batches one window holds.
pub const WINDOW_BATCHES: usize = 64;

/// How a loader reads its batches, in order (from [`BatchReader::plan_reads`]).
#[derive(Debug)]
pub struct ReadPlan {
    /// The first batch, already read (on an object store, where its size sizes the
    /// windows of the rest).
    pub first: Option<RecordBatch>,
    /// The windows of the other batches, in order: ranges of positions in the batches
    /// planned, together covering every batch not in `first`, each read by
    /// [`BatchReader::read_window`].
    pub windows: Vec<Range<usize>>,
    /// Windows to keep in flight.
    pub in_flight: usize,
}

impl BatchReader {
    /// How to read `batches` (each ascending) in order with about `readahead` batches in
    /// flight. On local disk every batch is a window of its own and `readahead` of them
    /// are in flight. On an object store the first batch is read at once, and the rest
    /// grouped into windows of consecutive batches holding at most [`WINDOW_BYTES`] (at
    /// the first batch's bytes per row; at least one batch, at most [`WINDOW_BATCHES`]),
    /// with two windows in flight (one read while the other is handed out), or more when
    /// `readahead` batches outnumber two windows.
    pub async fn plan_reads(&self, batches: &[&[u64]], readahead: usize) -> Result<ReadPlan> {
        let readahead = readahead.max(1);
        if self.ds.is_local() || batches.is_empty() {
            return Ok(ReadPlan {
                first: None,
                windows: (0..batches.len()).map(|i| i..i + 1).collect(),
                in_flight: readahead,
            });
        }
        let first = self.read(batches[0]).await?;
        let bytes_per_row = first.get_array_memory_size() / first.num_rows().max(1);
        let rows: Vec<usize> = batches[1..].iter().map(|b| b.len()).collect();
        let windows: Vec<Range<usize>> = group_windows(&rows, bytes_per_row, WINDOW_BYTES, WINDOW_BATCHES)
            .into_iter()
            .map(|w| w.start + 1..w.end + 1)
            .collect();
        let typical = windows.first().map_or(1, Range::len);
        Ok(ReadPlan {
            first: Some(first),
            windows,
            in_flight: readahead.div_ceil(typical).max(2),
        })
    }

    /// Reads `batches` (each ascending) together: one read of all their rows, cut back into
    /// the batches, each exactly what [`BatchReader::read`] gives for it.
    pub async fn read_window(&self, batches: &[&[u64]]) -> Result<Vec<RecordBatch>> {
        if let [one] = batches {
            return Ok(vec![self.read(one).await?]);
        }
        let mut union: Vec<u64> = batches.iter().flat_map(|b| b.iter().copied()).collect();
        union.sort_unstable();
        union.dedup();
        let all = self.read(&union).await?;
        batches.iter().map(|b| cut(&all, &union, b)).collect()
    }
}

/// The rows `batch` (ascending) of `all`, the rows at `union` (ascending, distinct): a
/// slice when they are consecutive there, a copy otherwise.
fn cut(all: &RecordBatch, union: &[u64], batch: &[u64]) -> Result<RecordBatch> {
    let Some(&first) = batch.first() else {
        return Ok(all.slice(0, 0));
    };
    let at = |a: u64| union.binary_search(&a).unwrap_or(0);
    let start = at(first);
    if union.get(start..start + batch.len()) == Some(batch) {
        return Ok(all.slice(start, batch.len()));
    }
    let positions = UInt32Array::from(batch.iter().map(|&a| at(a) as u32).collect::<Vec<u32>>());
    Ok(arrow_select::take::take_record_batch(all, &positions)?)
}

/// Consecutive batches of `rows[i]` rows grouped while a group holds at most `max_bytes`
/// (at `bytes_per_row`) and `max_batches` batches; a batch larger than `max_bytes` is a
/// group of its own.
fn group_windows(rows: &[usize], bytes_per_row: usize, max_bytes: usize, max_batches: usize) -> Vec<Range<usize>> {
    let mut out: Vec<Range<usize>> = Vec::new();
    let mut bytes = 0usize;
    for (i, &n) in rows.iter().enumerate() {
        let b = n.saturating_mul(bytes_per_row.max(1));
        match out.last_mut() {
            Some(w) if w.len() < max_batches && bytes.saturating_add(b) <= max_bytes => {
                w.end = i + 1;
                bytes += b;
            }
            _ => {
                out.push(i..i + 1);
                bytes = b;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_hold_whole_batches_up_to_the_budget() {
        let rows = [10, 10, 10, 10, 5];
        assert_eq!(group_windows(&rows, 10, 250, 64), vec![0..2, 2..5]);
        assert_eq!(group_windows(&rows, 10, 1000, 2), vec![0..2, 2..4, 4..5]);
        // A batch over the budget is read alone; nothing is lost or repeated.
        assert_eq!(group_windows(&rows, 100, 50, 64), vec![0..1, 1..2, 2..3, 3..4, 4..5]);
        assert!(group_windows(&[], 10, 100, 4).is_empty());
    }

    #[test]
    fn cut_slices_consecutive_rows_and_takes_the_rest() {
        let union = [1u64, 2, 3, 7, 9];
        let col = arrow_array::Int64Array::from(vec![10, 20, 30, 70, 90]);
        let all = RecordBatch::try_from_iter([("a", Arc::new(col) as ArrayRef)]).unwrap();
        let values = |b: &RecordBatch| {
            b.column(0)
                .as_primitive::<arrow_array::types::Int64Type>()
                .values()
                .to_vec()
        };
        let got = |batch: &[u64]| values(&cut(&all, &union, batch).unwrap());
        assert_eq!(got(&[2, 3, 7]), vec![20, 30, 70]);
        assert_eq!(got(&[1, 7, 9]), vec![10, 70, 90]);
        assert_eq!(got(&[3, 3]), vec![30, 30]);
        assert!(got(&[]).is_empty());
    }
}
