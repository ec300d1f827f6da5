//! Scans that return blob columns as their bytes ([`ScanOptions::blob_binary`], pylance's
//! `blob_handling="all_binary"`).
//!
//! The tasks read blob columns as descriptors, as every scan does, plus the rows'
//! addresses. The batches the [`super::Limiter`] hands out (filter, order, offset and limit
//! applied) are then finished by [`Scan::finish_batch`]: each top-level descriptor column
//! is located ([`Dataset::locate_blobs`]) and read ([`Dataset::blob_bytes`], which checks
//! checksums) into a `LargeBinary` column, and the row addresses are dropped unless the
//! caller asked for them. Only the rows returned have their bytes read.

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::UInt64Type;
use arrow_array::{Array, ArrayRef, RecordBatch, RecordBatchOptions, StructArray};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use lancelet_file::blob::{is_descriptor, PACKED_KEY};

use super::{Scan, ScanOptions, ROW_ADDR};
use crate::blob::BlobLocation;
use crate::{Dataset, Error, Result};

/// How a `blob_binary` scan turns the limiter's batches into its output.
#[derive(Debug)]
pub(super) struct BlobBytes {
    /// Positions (in the limiter's batches) of the descriptor columns read as bytes.
    columns: Vec<usize>,
    /// Position of the row addresses the blobs are located by.
    addr: usize,
    /// Whether the row addresses stay in the output (the caller asked for them).
    keep_addr: bool,
    /// The output schema.
    schema: SchemaRef,
}

impl BlobBytes {
    /// The output schema.
    pub(super) fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    /// For batches of schema `limited` (whose last `_rowaddr` column is the one the scan
    /// added, kept when `keep_addr`): the top-level columns that are descriptors of a blob
    /// column of `ds`, read as bytes.
    fn plan(ds: &Dataset, limited: &Schema, keep_addr: bool) -> Result<Self> {
        let addr = limited
            .fields()
            .iter()
            .rposition(|f| f.name() == ROW_ADDR)
            .ok_or_else(|| Error::Internal("a blob_binary scan was planned without row addresses".into()))?;
        let mut columns = Vec::new();
        let mut fields = Vec::with_capacity(limited.fields().len());
        for (i, f) in limited.fields().iter().enumerate() {
            if i == addr && !keep_addr {
                continue;
            }
            let stored = ds.scan_schema().field_with_name(f.name()).ok();
            if is_descriptor(f) && stored.is_some_and(is_descriptor) {
                columns.push(i);
                fields.push(Arc::new(bytes_field(f)));
            } else {
                fields.push(f.clone());
            }
        }
        Ok(Self {
            columns,
            addr,
            keep_addr,
            schema: Arc::new(Schema::new_with_metadata(fields, limited.metadata().clone())),
        })
    }
}

/// The output field of descriptor field `f`: `LargeBinary`, with `f`'s name, nullability
/// and metadata (but for the descriptor's packed-struct marker).
fn bytes_field(f: &Field) -> Field {
    let mut metadata = f.metadata().clone();
    metadata.remove(PACKED_KEY);
    Field::new(f.name(), DataType::LargeBinary, f.is_nullable()).with_metadata(metadata)
}

impl Scan {
    /// Plans a [`ScanOptions::blob_binary`] scan: the scan without the option, with row
    /// addresses, and the way its batches are finished.
    pub(super) async fn plan_blob_binary(ds: &Dataset, mut opts: ScanOptions) -> Result<Self> {
        opts.blob_binary = false;
        if !ds.scan_schema().fields().iter().any(|f| is_descriptor(f)) {
            return Self::plan(ds, opts).await; // no blob column: nothing to read
        }
        let keep_addr = opts.with_row_address;
        opts.with_row_address = true;
        let mut scan = Self::plan(ds, opts).await?;
        scan.blobs = Some(BlobBytes::plan(ds, scan.limited_schema(), keep_addr)?);
        Ok(scan)
    }

    /// Whether [`Scan::finish_batch`] changes batches (a [`ScanOptions::blob_binary`] scan).
    pub(crate) fn finishes_batches(&self) -> bool {
        self.blobs.is_some()
    }

    /// A batch the scan's [`Scan::limiter`] handed out, in the scan's output form
    /// ([`Scan::schema`]): for a [`ScanOptions::blob_binary`] scan, each blob column's
    /// descriptors replaced by the payloads (read concurrently, checked against the data
    /// file's checksums; null for a null blob) and the row addresses dropped unless they
    /// were asked for; other scans' batches are returned as they are. [`Scan::collect`],
    /// [`Scan::collect_parallel`] and [`super::stream::ScanBatches`] call it; a caller
    /// running the tasks itself calls it on each batch its limiter hands out.
    ///
    /// An error names the blob that could not be read: its column, its row address and
    /// where its bytes are.
    pub(crate) async fn finish_batch(&self, batch: RecordBatch) -> Result<RecordBatch> {
        let Some(b) = &self.blobs else {
            return Ok(batch);
        };
        let addresses = batch
            .columns()
            .get(b.addr)
            .and_then(|c| c.as_primitive_opt::<UInt64Type>())
            .ok_or_else(|| Error::Internal("a blob_binary scan's batch has no row addresses".into()))?
            .values()
            .to_vec();
        let schema = batch.schema();
        let mut columns: Vec<ArrayRef> = batch.columns().to_vec();
        for &i in &b.columns {
            let descriptors = columns[i]
                .as_struct_opt()
                .ok_or_else(|| {
                    Error::Internal(format!(
                        "column {:?} did not read as blob descriptors",
                        schema.field(i).name()
                    ))
                })?
                .clone();
            columns[i] = self
                .ds
                .blob_payloads(schema.field(i).name(), &addresses, &descriptors)
                .await?;
        }
        if !b.keep_addr {
            columns.remove(b.addr);
        }
        let opts = RecordBatchOptions::new().with_row_count(Some(batch.num_rows()));
        Ok(RecordBatch::try_new_with_options(b.schema.clone(), columns, &opts)?)
    }

    /// [`Scan::finish_batch`] of each of `batches`, in order.
    pub(super) async fn finish_batches(&self, batches: Vec<RecordBatch>) -> Result<Vec<RecordBatch>> {
        if self.blobs.is_none() {
            return Ok(batches);
        }
        let mut out = Vec::with_capacity(batches.len());
        for b in batches {
            out.push(self.finish_batch(b).await?);
        }
        Ok(out)
    }
}

/// How an error names a blob: `the blob of column 'c' at row address 7 (stored in ...)`.
fn blob_context(column: &str, address: Option<u64>, place: Option<String>) -> String {
    let mut text = format!("cannot read the blob of column '{column}'");
    if let Some(a) = address {
        text.push_str(&format!(" at row address {a}"));
    }
    if let Some(p) = place {
        text.push_str(&p);
    }
    text
}

/// The external URI in the blob v2 descriptor at row `i` of `descriptors`, if any.
fn external_uri(descriptors: &StructArray, i: usize) -> Option<String> {
    if descriptors.is_null(i) {
        return None;
    }
    let uris = descriptors.column_by_name("blob_uri")?;
    let uri = match uris.data_type() {
        DataType::Utf8 => uris.as_string::<i32>(),
        _ => return None,
    };
    (uri.is_valid(i) && !uri.value(i).is_empty()).then(|| uri.value(i).to_string())
}

impl Dataset {
    /// The payloads of blob column `column`, given as `descriptors` read from the rows at
    /// `addresses`, as a `LargeBinary` array (null where a descriptor is null).
    async fn blob_payloads(&self, column: &str, addresses: &[u64], descriptors: &StructArray) -> Result<ArrayRef> {
        let locations = match self.locate_blobs(column, addresses, descriptors, false).await {
            Ok(l) => l,
            Err(e) => return Err(self.unlocatable(column, addresses, descriptors, e).await),
        };
        match self.blob_bytes(&locations, &DataType::LargeBinary).await {
            Ok(a) => Ok(a),
            Err(e) => Err(self.unreadable(column, addresses, &locations, e).await),
        }
    }

    /// `err` (from locating the blobs of a batch) with the first blob that cannot be
    /// located on its own named (an external blob stored without its size is looked up).
    async fn unlocatable(&self, column: &str, addresses: &[u64], descriptors: &StructArray, err: Error) -> Error {
        for (i, address) in addresses.iter().enumerate() {
            let one = descriptors.slice(i, 1);
            if self
                .locate_blobs(column, std::slice::from_ref(address), &one, false)
                .await
                .is_err()
            {
                let place = external_uri(descriptors, i).map(|u| format!(" (external URI {u})"));
                return err.context(blob_context(column, Some(*address), place));
            }
        }
        err.context(blob_context(column, None, None))
    }

    /// `err` (from reading the blobs of a batch) with the first blob whose last byte
    /// cannot be read named (a missing or short object fails there).
    async fn unreadable(
        &self,
        column: &str,
        addresses: &[u64],
        locations: &[Option<BlobLocation>],
        err: Error,
    ) -> Error {
        for (address, loc) in addresses.iter().zip(locations) {
            let Some(l) = loc.as_ref().filter(|l| l.size > 0) else {
                continue;
            };
            if self.read_blob(l, l.size - 1..l.size).await.is_err() {
                let place = match l.external {
                    true => format!(" (external URI {})", l.path),
                    false => format!(" (stored in {})", l.path),
                };
                return err.context(blob_context(column, Some(*address), Some(place)));
            }
        }
        err.context(blob_context(column, None, None))
    }
}
