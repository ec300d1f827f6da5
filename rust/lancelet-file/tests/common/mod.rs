//! Helpers shared by the integration tests.
#![allow(
    dead_code,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::single_range_in_vec_init,
    reason = "test code: a failed unwrap or panic is a failed test"
)]

use std::sync::Arc;

use arrow_array::RecordBatch;
use futures::executor::block_on;
use lancelet_file::{FileReader, FileWriter, WriterOptions};
use lancelet_io::InMemory;

/// Writes batches into an in-memory file.
pub fn write(batches: &[RecordBatch], max_page_bytes: u64) -> Vec<u8> {
    write_version(batches, max_page_bytes, lancelet_file::FileVersion::V2_0)
}

/// Writes batches into an in-memory file of format `version`.
pub fn write_version(batches: &[RecordBatch], max_page_bytes: u64, version: lancelet_file::FileVersion) -> Vec<u8> {
    let schema = batches[0].schema();
    let opts = WriterOptions {
        max_page_bytes,
        version,
        ..Default::default()
    };
    let mut w = FileWriter::try_new(Vec::new(), "mem", schema, opts).unwrap();
    for b in batches {
        w.write_batch(b).unwrap();
    }
    w.finish().unwrap().0
}

/// Opens in-memory bytes.
pub fn open(bytes: &[u8]) -> lancelet_file::Result<FileReader> {
    block_on(FileReader::open(Arc::new(InMemory::new("mem", bytes))))
}

/// Opens an in-memory file without verifying its checksums (to test the checks behind them).
pub fn open_unverified(bytes: &[u8]) -> lancelet_file::Result<FileReader> {
    block_on(FileReader::open_with(Arc::new(InMemory::new("mem", bytes)), false))
}

/// Reads every row in one batch.
pub fn read_all(r: &FileReader) -> lancelet_file::Result<RecordBatch> {
    let p = r.projection(None)?;
    block_on(r.read_ranges(&p, &[0..r.num_rows()], None))
}
