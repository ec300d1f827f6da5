//! Reading for training: the rows a job draws from, what each rank and worker reads per
//! epoch ([`plan`]), and the read of one batch.
//!
//! A job pins one version. [`Dataset::loader_rows`] lists the row addresses of the rows
//! it trains on (the live rows the filter keeps) once; every epoch is then a plan over that
//! list, so a filter is evaluated once per job, every rank agrees on the rows without
//! talking to the others, and a shuffled epoch can be any permutation of them. A batch is a
//! sorted list of addresses, read by [`Dataset::read_batch`] with one partial read per
//! fragment; blob columns come back as their bytes.

pub mod plan;

use std::ops::Range;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::UInt64Type;
use arrow_array::{ArrayRef, RecordBatch};
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
