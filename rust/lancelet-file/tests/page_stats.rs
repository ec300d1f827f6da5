//! Zone statistics written with a file and read back, and damaged statistics buffers.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a failed unwrap or panic is a failed test"
)]

use crate::common;

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use arrow_array::{Array, ArrayRef, Int64Array, ListArray, RecordBatch, StringArray, StructArray};
use arrow_schema::{DataType, Field, Fields};
use futures::executor::block_on;
use lancelet_file::stats::{value_array, FileStats, PAGE_STATS_KEY};
use lancelet_file::{FileWriter, WriterOptions};

fn sample(n: i64) -> RecordBatch {
    let id: ArrayRef = Arc::new(Int64Array::from_iter((0..n).map(|i| (i % 7 != 3).then_some(i))));
    let name: ArrayRef = Arc::new(StringArray::from_iter_values((0..n).map(|i| format!("n{i:06}"))));
    let list: ArrayRef = Arc::new(ListArray::from_iter_primitive::<Int64Type, _, _>(
        (0..n).map(|i| Some(vec![Some(i), Some(-i)])),
    ));
    let inner: ArrayRef = Arc::new(Int64Array::from_iter_values(0..n));
    let st: ArrayRef = Arc::new(StructArray::new(
        Fields::from(vec![Field::new("x", DataType::Int64, true)]),
        vec![inner],
        None,
    ));
    RecordBatch::try_from_iter([("id", id), ("name", name), ("l", list), ("s", st)]).unwrap()
}

fn write(batch: &RecordBatch, page_stats: bool) -> Vec<u8> {
    let opts = WriterOptions {
        max_page_bytes: 4096,
        cache_bytes_per_column: 4096,
        page_stats,
        stats_zone_rows: 100,
        // Written when 2.0 was the writer's default; the statistics do not depend on it.
        version: lancelet_file::FileVersion::V2_0,
        ..Default::default()
    };
    let mut w = FileWriter::try_new(Vec::new(), "mem", batch.schema(), opts).unwrap();
    w.write_batch(batch).unwrap();
    w.finish().unwrap().0
}

#[test]
fn stats_cover_every_orderable_column_and_bound_its_values() {
    let batch = sample(3000);
    let bytes = write(&batch, true);
    let r = common::open(&bytes).unwrap();
    // The data reads back unchanged.
    assert_eq!(common::read_all(&r).unwrap().columns(), batch.columns());
    let stats = block_on(r.page_stats()).unwrap().expect("stats recorded");
    // Columns: 0 id, 1 name, 2 list offsets, 3 list items, 4 struct header, 5 s.x.
    let mut cols: Vec<usize> = stats.columns().collect();
    cols.sort();
    assert_eq!(cols, vec![0, 1, 5]);
    let id = stats.column(0).unwrap();
    assert_eq!(id.first().unwrap().rows.start, 0);
    assert_eq!(id.last().unwrap().rows.end, 3000);
    let ids = batch.column(0).as_primitive::<Int64Type>();
    for z in id {
        assert!(z.rows.end - z.rows.start <= 100);
        let lo = value_array(z.min.as_deref().unwrap(), &DataType::Int64).unwrap();
        let hi = value_array(z.max.as_deref().unwrap(), &DataType::Int64).unwrap();
        let (lo, hi) = (
            lo.as_primitive::<Int64Type>().value(0),
            hi.as_primitive::<Int64Type>().value(0),
        );
        let rows = z.rows.start as usize..z.rows.end as usize;
        let nulls = rows.clone().filter(|&i| ids.is_null(i)).count() as u64;
        assert_eq!(nulls, z.null_count);
        for i in rows.filter(|&i| ids.is_valid(i)) {
            assert!(lo <= ids.value(i) && ids.value(i) <= hi);
        }
    }
    // Zones never span pages.
    let pages = &r.metadata().columns[0].row_starts;
    for z in id {
        let p = pages.partition_point(|&s| s <= z.rows.start);
        assert!(
            z.rows.end <= pages[p],
            "zone {:?} crosses page boundary {}",
            z.rows,
            pages[p]
        );
    }
}

#[test]
fn files_without_stats_are_unchanged() {
    let batch = sample(500);
    let plain = write(&batch, false);
    let r = common::open(&plain).unwrap();
    assert!(block_on(r.page_stats()).unwrap().is_none());
    assert!(!r.metadata().schema.metadata().contains_key(PAGE_STATS_KEY));
}

/// The offset and size of global buffer `i` of `bytes`.
fn global_buffer(bytes: &[u8], i: usize) -> (usize, usize) {
    let footer = &bytes[bytes.len() - 40..];
    let gbo = u64::from_le_bytes(footer[16..24].try_into().unwrap()) as usize;
    let at = gbo + 16 * i;
    let pos = u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap()) as usize;
    let size = u64::from_le_bytes(bytes[at + 8..at + 16].try_into().unwrap()) as usize;
    (pos, size)
}

#[test]
fn damaged_stats_never_panic_or_change_data() {
    let batch = sample(700);
    let bytes = write(&batch, true);
    let r = common::open(&bytes).unwrap();
    let index: usize = r.metadata().schema.metadata()[PAGE_STATS_KEY].parse().unwrap();
    let (pos, size) = global_buffer(&bytes, index);
    assert_eq!(
        FileStats::decode(&bytes[pos..pos + size], "t").unwrap(),
        *block_on(r.page_stats()).unwrap().unwrap()
    );
    let mut seed = 7u64;
    for trial in 0..400 {
        let mut damaged = bytes.clone();
        for _ in 0..1 + trial % 4 {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let at = pos + (seed >> 33) as usize % size;
            damaged[at] = (seed >> 20) as u8;
        }
        // The checksums would refuse the damaged block; this checks the statistics' own hash.
        let r = common::open_unverified(&damaged).unwrap();
        // Either an error, or statistics that stay within the file's columns.
        if let Ok(Some(s)) = block_on(r.page_stats()) {
            for c in s.columns() {
                let rows = r.metadata().columns[c].row_starts.last().copied().unwrap();
                for z in s.column(c).unwrap() {
                    assert!(z.rows.end <= rows && z.null_count <= z.rows.end - z.rows.start);
                }
            }
        }
        assert_eq!(common::read_all(&r).unwrap().columns(), batch.columns());
    }
}
