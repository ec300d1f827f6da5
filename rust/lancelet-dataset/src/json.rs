//! JSON columns at the dataset's edges (see `lancelet_file::json`).
//!
//! Inside a dataset a JSON column is always stored JSON: `large_binary` JSONB marked
//! `lance.json`, which is what data files hold, what filters and SQL expressions read
//! (`json_get_int(j, 'a') = 1`), and what updates, compaction and merges copy without a
//! round trip through text. Arrow's `arrow.json` text (`pa.json_()`) exists only at the
//! edges: input is converted by [`storage_reader`] / [`storage_batch`] when it arrives
//! (invalid JSON is an error naming the column and row), and results are converted back
//! by [`text_schema`] / [`text_batch`] where they leave for the user (the Python binding
//! does so for every scan, take and UDF input, as pylance returns them).

use arrow_array::{RecordBatch, RecordBatchReader};
use arrow_schema::{ArrowError, SchemaRef};

use crate::Result;

/// `batch` with its JSON text columns as stored JSON (itself when it has none).
pub fn storage_batch(batch: RecordBatch) -> Result<RecordBatch> {
    if lancelet_file::json::storage_schema(&batch.schema()).is_none() {
        return Ok(batch);
    }
    Ok(lancelet_file::json::to_storage(&batch)?)
}

/// `schema` with its JSON text fields as stored JSON.
pub fn storage_schema(schema: &SchemaRef) -> SchemaRef {
    lancelet_file::json::storage_schema(schema).unwrap_or_else(|| schema.clone())
}

/// `reader` with its JSON text columns as stored JSON (itself when its schema has none).
pub fn storage_reader(reader: Box<dyn RecordBatchReader + Send>) -> Box<dyn RecordBatchReader + Send> {
    match lancelet_file::json::storage_schema(&reader.schema()) {
        None => reader,
        Some(schema) => Box::new(StorageReader { inner: reader, schema }),
    }
}

struct StorageReader {
    inner: Box<dyn RecordBatchReader + Send>,
    schema: SchemaRef,
}

impl Iterator for StorageReader {
    type Item = std::result::Result<RecordBatch, ArrowError>;

    fn next(&mut self) -> Option<Self::Item> {
        Some(self.inner.next()?.and_then(|b| {
            lancelet_file::json::to_storage(&b).map_err(|e| match e {
                lancelet_file::Error::InvalidArgument(m) => ArrowError::InvalidArgumentError(m),
                lancelet_file::Error::Arrow(a) => a,
                other => ArrowError::ExternalError(Box::new(other)),
            })
        }))
    }
}

impl RecordBatchReader for StorageReader {
    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }
}

/// `schema` with its stored JSON fields as JSON text, as results are handed to users.
pub fn text_schema(schema: &SchemaRef) -> SchemaRef {
    lancelet_file::json::text_schema(schema).unwrap_or_else(|| schema.clone())
}

/// `batch` with its stored JSON columns as JSON text (itself when it has none).
pub fn text_batch(batch: RecordBatch) -> Result<RecordBatch> {
    if lancelet_file::json::text_schema(&batch.schema()).is_none() {
        return Ok(batch);
    }
    Ok(lancelet_file::json::to_text(&batch)?)
}
