//! Helpers shared by the dataset crate's test files: a one-column table of int64 `a` and a
//! dataset location in a temporary directory.
#![allow(
    dead_code,
    clippy::unwrap_used,
    reason = "helpers shared by test files, each using some; a failed unwrap is a failed test"
)]

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::{Int64Array, RecordBatch, RecordBatchIterator, RecordBatchReader};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use lancelet_dataset::{open_uri, Location};

/// One nullable int64 column, `a`.
pub fn schema() -> SchemaRef {
    Arc::new(Schema::new(vec![Field::new("a", DataType::Int64, true)]))
}

/// `a` = `values`, as a stream of one batch.
pub fn rows(values: std::ops::Range<i64>) -> Box<dyn RecordBatchReader + Send> {
    let batch = RecordBatch::try_new(schema(), vec![Arc::new(Int64Array::from_iter_values(values))]).unwrap();
    Box::new(RecordBatchIterator::new(vec![Ok(batch)], schema()))
}

/// The dataset `t.lance` in `dir`.
pub fn location(dir: &tempfile::TempDir) -> Location {
    open_uri(dir.path().join("t.lance").to_str().unwrap(), &HashMap::new()).unwrap()
}
