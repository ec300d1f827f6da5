//! Rewriting rows that hold blob v2 values (update, merge_insert): a scan gives a blob v2
//! column as descriptors, which point into the old data file (inline bytes) or its
//! sidecars; rows moved to a new data file need their payloads again. Each descriptor is
//! turned back into the value a writer takes (`data` bytes, or an external `uri` with its
//! `position` and `size`, which stays a reference), and the writer places it anew (inline,
//! packed or dedicated), as pylance 14 does when it rewrites such rows.
//!
//! Blob v1 columns (and blobs inside structs) are still refused.

use std::sync::Arc;

use arrow_array::builder::{LargeBinaryBuilder, StringBuilder, UInt64Builder};
use arrow_array::cast::AsArray;
use arrow_array::types::UInt64Type;
use arrow_array::{ArrayRef, RecordBatch, StructArray};
use arrow_buffer::NullBuffer;
use arrow_schema::{DataType, FieldRef, Schema};
use lancelet_file::blob::is_blob_v2;

use crate::{Dataset, Error, Result};

impl Dataset {
    /// Refuses `what` (a rewrite of rows) when the dataset has blob columns lancelet cannot
    /// rewrite yet: blob v1 columns, or blobs inside structs. Top-level blob v2 columns are
    /// rewritten through [`Dataset::materialize_blobs`].
    pub(crate) fn refuse_unrewritable_blobs(&self, what: &str) -> Result<()> {
        let schema = self.schema();
        let scan = self.scan_schema();
        for (f, s) in schema.fields().iter().zip(scan.fields().iter()) {
            if f.data_type() != s.data_type() && !is_blob_v2(f) {
                return Err(Error::Unsupported(format!(
                    "{what} a dataset with blob column {:?} (blob v1, or blobs inside a struct) is not supported yet",
                    f.name()
                )));
            }
        }
        Ok(())
    }

    /// Whether the dataset has top-level blob v2 columns (whose rewrites need
    /// [`Dataset::materialize_blobs`]).
    pub(crate) fn has_blob_v2_columns(&self) -> bool {
        self.schema().fields().iter().any(|f| is_blob_v2(f))
    }

    /// `batch` (a scan of this version with `_rowaddr`) with each blob v2 column, given as
    /// descriptors, replaced by the values a writer takes: the payload bytes, or for an
    /// external blob its URI, position and size.
    pub(crate) async fn materialize_blobs(&self, batch: &RecordBatch) -> Result<RecordBatch> {
        let addresses = batch
            .column_by_name(crate::scan::ROW_ADDR)
            .and_then(|c| c.as_primitive_opt::<UInt64Type>())
            .ok_or_else(|| Error::InvalidArgument("rewriting blob values needs the rows' addresses".into()))?
            .values()
            .to_vec();
        self.materialize_blobs_at(batch, &addresses).await
    }

    /// As [`Dataset::materialize_blobs`], for rows read from `addresses` (one per row).
    pub(crate) async fn materialize_blobs_at(&self, batch: &RecordBatch, addresses: &[u64]) -> Result<RecordBatch> {
        if addresses.len() != batch.num_rows() {
            return Err(Error::InvalidArgument(format!(
                "{} row addresses for {} rows with blobs",
                addresses.len(),
                batch.num_rows()
            )));
        }
        let schema = self.schema().clone();
        let in_schema = batch.schema();
        let mut fields: Vec<FieldRef> = in_schema.fields().iter().cloned().collect();
        let mut columns: Vec<ArrayRef> = batch.columns().to_vec();
        for (i, f) in in_schema.fields().iter().enumerate() {
            let Ok(target) = schema.field_with_name(f.name()) else {
                continue;
            };
            if !is_blob_v2(target) || f.data_type() == target.data_type() {
                continue;
            }
            columns[i] = self.blob_values(f.name(), target.data_type(), addresses).await?;
            fields[i] = Arc::new(target.clone());
        }
        let opts = arrow_array::RecordBatchOptions::new().with_row_count(Some(batch.num_rows()));
        Ok(RecordBatch::try_new_with_options(
            Arc::new(Schema::new_with_metadata(fields, in_schema.metadata().clone())),
            columns,
            &opts,
        )?)
    }

    /// The writer's values (`data`, `uri`, `position`, `size`) of blob column `column` at
    /// `addresses`, as a struct of type `to`.
    async fn blob_values(&self, column: &str, to: &DataType, addresses: &[u64]) -> Result<ArrayRef> {
        let DataType::Struct(children) = to else {
            return Err(Error::InvalidArgument(format!(
                "blob column {column:?} is not a struct"
            )));
        };
        let locations = self.blob_locations(column, addresses).await?;
        let n = locations.len();
        let mut data = LargeBinaryBuilder::new();
        let mut uri = StringBuilder::new();
        let (mut position, mut size) = (UInt64Builder::with_capacity(n), UInt64Builder::with_capacity(n));
        let mut valid = Vec::with_capacity(n);
        for loc in &locations {
            match loc {
                None => {
                    data.append_null();
                    uri.append_null();
                    position.append_null();
                    size.append_null();
                    valid.push(false);
                }
                Some(l) if l.external => {
                    data.append_null();
                    uri.append_value(&l.path);
                    position.append_value(l.position);
                    size.append_value(l.size);
                    valid.push(true);
                }
                Some(l) => {
                    let bytes = self.read_blob(l, 0..l.size).await?;
                    data.append_value(bytes.as_slice());
                    uri.append_null();
                    position.append_null();
                    size.append_null();
                    valid.push(true);
                }
            }
        }
        let (data, uri, position, size): (ArrayRef, ArrayRef, ArrayRef, ArrayRef) = (
            Arc::new(data.finish()),
            Arc::new(uri.finish()),
            Arc::new(position.finish()),
            Arc::new(size.finish()),
        );
        let arrays = children
            .iter()
            .map(|c| {
                let a = match c.name().as_str() {
                    "data" => data.clone(),
                    "uri" => uri.clone(),
                    "position" => position.clone(),
                    "size" => size.clone(),
                    other => {
                        return Err(Error::InvalidArgument(format!(
                            "blob column {column:?} has an unknown field {other:?}"
                        )))
                    }
                };
                if a.data_type() == c.data_type() {
                    Ok(a)
                } else {
                    Ok(arrow_cast::cast(&a, c.data_type())?)
                }
            })
            .collect::<Result<Vec<_>>>()?;
        let nulls = valid.contains(&false).then(|| NullBuffer::from(valid));
        Ok(Arc::new(StructArray::try_new(children.clone(), arrays, nulls)?))
    }
}

/// Whether the rows of `reader` give any blob v2 column of `schema` an external URI.
pub(crate) fn has_external_blobs(
    reader: Box<dyn arrow_array::RecordBatchReader + Send>,
    schema: &Schema,
) -> Result<bool> {
    let names: Vec<&str> = schema
        .fields()
        .iter()
        .filter(|f| is_blob_v2(f))
        .map(|f| f.name().as_str())
        .collect();
    for batch in reader {
        let batch = batch?;
        for name in &names {
            let uri = batch
                .column_by_name(name)
                .and_then(|c| c.as_struct_opt())
                .and_then(|s| s.column_by_name("uri"));
            if uri.is_some_and(|u| u.null_count() < u.len()) {
                return Ok(true);
            }
        }
    }
    Ok(false)
}
