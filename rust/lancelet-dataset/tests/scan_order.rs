#![allow(
    clippy::unwrap_used,
    clippy::panic,
    reason = "test code: a failed unwrap or panic is a failed test"
)]
//! Scans that pylance users shape beyond projection and filter: `order_by` (sorted before
//! offset and limit, sort keys not projected), `_rowoffset` (a row's position among the
//! live rows, what `take` indexes by) and strict batch sizes across fragments.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{Int64Type, UInt64Type};
use arrow_array::{ArrayRef, Int64Array, RecordBatch, RecordBatchIterator, RecordBatchReader, StructArray};
use arrow_schema::{DataType, Field, Fields, Schema, SchemaRef};
use lancelet_dataset::scan::order::ColumnOrdering;
use lancelet_dataset::scan::stream::{ScanBatches, Step};
use lancelet_dataset::scan::{Columns, Scan, ScanOptions};
use lancelet_dataset::write::{write_dataset, WriteParams};
use lancelet_dataset::{open_uri, Dataset};

fn schema() -> SchemaRef {
    let inner = Fields::from(vec![Field::new("x", DataType::Int64, true)]);
    Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("k", DataType::Int64, true),
        Field::new("s", DataType::Struct(inner), true),
    ]))
}

/// Rows `0..n`: `k = (id * 7) % 5`, NULL where `id % 6 == 0`; `s.x = -id`.
fn rows(n: i64) -> Box<dyn RecordBatchReader + Send> {
    let id: ArrayRef = Arc::new(Int64Array::from_iter_values(0..n));
    let k: ArrayRef = Arc::new(Int64Array::from_iter(
        (0..n).map(|i| (i % 6 != 0).then_some((i * 7) % 5)),
    ));
    let x: ArrayRef = Arc::new(Int64Array::from_iter_values((0..n).map(|i| -i)));
    let s: ArrayRef = Arc::new(StructArray::from(vec![(
        Arc::new(Field::new("x", DataType::Int64, true)),
        x,
    )]));
    let batch = RecordBatch::try_new(schema(), vec![id, k, s]).unwrap();
    Box::new(RecordBatchIterator::new(vec![Ok(batch)], schema()))
}

async fn dataset(dir: &tempfile::TempDir, n: i64, rows_per_file: u64) -> Dataset {
    let loc = open_uri(dir.path().join("t.lance").to_str().unwrap(), &HashMap::new()).unwrap();
    let params = WriteParams {
        max_rows_per_file: rows_per_file,
        ..WriteParams::default()
    };
    write_dataset(&loc, rows(n), params).await.unwrap()
}

async fn scan(ds: &Dataset, opts: ScanOptions) -> Vec<RecordBatch> {
    let scan = Arc::new(Scan::plan(ds, opts).await.unwrap());
    let mut batches = ScanBatches::new(scan, || Ok(tokio::runtime::Handle::current()));
    let mut out = Vec::new();
    loop {
        match batches.step() {
            Step::Batch(b) => out.push(b),
            Step::Wait(task) => batches.accept(task.await.unwrap().unwrap()).unwrap(),
            Step::Failed(e) => panic!("{e}"),
            Step::Done => return out,
        }
    }
}

fn column<T: arrow_array::ArrowPrimitiveType>(batches: &[RecordBatch], name: &str) -> Vec<Option<T::Native>> {
    batches
        .iter()
        .flat_map(|b| {
            b.column_by_name(name)
                .unwrap()
                .as_primitive::<T>()
                .iter()
                .collect::<Vec<_>>()
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn order_by_sorts_before_offset_and_limit_with_keys_that_are_not_projected() {
    let dir = tempfile::tempdir().unwrap();
    let ds = dataset(&dir, 30, 7).await;
    let opts = ScanOptions {
        columns: Columns::Names(vec!["id".into()]),
        order_by: vec![
            ColumnOrdering {
                column: "k".into(),
                ascending: false,
                nulls_first: true,
            },
            ColumnOrdering::asc("s.x"),
        ],
        offset: 3,
        limit: Some(10),
        batch_size: 4,
        ..ScanOptions::default()
    };
    let got = scan(&ds, opts.clone()).await;
    assert_eq!(got[0].schema().fields().len(), 1, "the sort keys are not in the output");
    assert!(got.iter().all(|b| b.num_rows() <= 4));
    let ids: Vec<i64> = column::<Int64Type>(&got, "id")
        .into_iter()
        .map(Option::unwrap)
        .collect();
    let mut want: Vec<i64> = (0..30).collect();
    let key = |i: i64| (i % 6 != 0).then_some((i * 7) % 5);
    // NULLs first, then k descending, then s.x (= -id) ascending, i.e. id descending.
    want.sort_by(|a, b| match (key(*a), key(*b)) {
        (None, None) => b.cmp(a),
        (None, Some(_)) => std::cmp::Ordering::Less,
        (Some(_), None) => std::cmp::Ordering::Greater,
        (Some(x), Some(y)) => y.cmp(&x).then(b.cmp(a)),
    });
    assert_eq!(ids, want[3..13].to_vec());
    let unknown = ScanOptions {
        order_by: vec![ColumnOrdering::asc("nope")],
        ..ScanOptions::default()
    };
    assert!(Scan::plan(&ds, unknown).await.is_err());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn row_offsets_count_live_rows_across_fragments() {
    let dir = tempfile::tempdir().unwrap();
    let ds = dataset(&dir, 25, 10).await;
    let (ds, _) = ds.delete("id % 4 = 1").await.unwrap();
    let opts = ScanOptions {
        columns: Columns::Names(vec!["_rowoffset".into(), "id".into()]),
        filter: Some("id > 12".into()),
        ..ScanOptions::default()
    };
    let got = scan(&ds, opts).await;
    assert_eq!(got[0].schema().field(0).name(), "_rowoffset");
    let offsets: Vec<u64> = column::<UInt64Type>(&got, "_rowoffset")
        .into_iter()
        .map(Option::unwrap)
        .collect();
    let ids: Vec<i64> = column::<Int64Type>(&got, "id")
        .into_iter()
        .map(Option::unwrap)
        .collect();
    // The live ids in order; a row's offset is its index there, and take agrees.
    let live: Vec<i64> = (0..25).filter(|i| i % 4 != 1).collect();
    for (o, id) in offsets.iter().zip(&ids) {
        assert_eq!(live[*o as usize], *id);
    }
    let taken = ds.take(&offsets, Some(&["id".to_string()])).await.unwrap();
    let taken: Vec<i64> = taken.column(0).as_primitive::<Int64Type>().values().to_vec();
    assert_eq!(taken, ids);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn strict_batch_sizes_join_rows_of_several_fragments() {
    let dir = tempfile::tempdir().unwrap();
    let ds = dataset(&dir, 23, 5).await;
    for strict in [false, true] {
        let opts = ScanOptions {
            columns: Columns::Names(vec!["id".into()]),
            batch_size: 3,
            strict_batch_size: strict,
            filter: Some("id >= 0".into()),
            ..ScanOptions::default()
        };
        let got = scan(&ds, opts).await;
        let sizes: Vec<usize> = got.iter().map(RecordBatch::num_rows).collect();
        let ids: Vec<i64> = column::<Int64Type>(&got, "id")
            .into_iter()
            .map(Option::unwrap)
            .collect();
        assert_eq!(ids, (0..23).collect::<Vec<_>>());
        if strict {
            assert_eq!(sizes, vec![3, 3, 3, 3, 3, 3, 3, 2]);
        } else {
            assert!(sizes.contains(&2), "fragments of 5 rows cut into 3 + 2: {sizes:?}");
        }
    }
}
