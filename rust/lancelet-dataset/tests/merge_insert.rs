#![allow(clippy::unwrap_used, reason = "test code: a failed unwrap or panic is a failed test")]
//! `Dataset::merge_insert`: counts and rows for each builder combination, conditions,
//! stable row ids, null keys, ambiguity, and conflict retries.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use arrow_array::{Int64Array, RecordBatch, RecordBatchIterator, RecordBatchReader, StringArray};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use lancelet_dataset::commit::retry::RetryPolicy;
use lancelet_dataset::modify::merge_insert::{MergeInsertParams, MergeStats, SourceFn};
use lancelet_dataset::scan::{Columns, Scan, ScanOptions};
use lancelet_dataset::write::{write_dataset, WriteParams};
use lancelet_dataset::{open_uri, Dataset, Location};

fn schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, true),
        Field::new("v", DataType::Utf8, true),
    ]))
}

fn batch(ids: &[Option<i64>], tag: &str) -> RecordBatch {
    let v: Vec<String> = ids.iter().map(|i| format!("{tag}{}", i.unwrap_or(-1))).collect();
    RecordBatch::try_new(
        schema(),
        vec![Arc::new(Int64Array::from(ids.to_vec())), Arc::new(StringArray::from(v))],
    )
    .unwrap()
}

fn source(b: RecordBatch) -> Box<SourceFn> {
    Box::new(move || {
        let s = b.schema();
        Ok(Box::new(RecordBatchIterator::new(vec![Ok(b.clone())], s)) as Box<dyn RecordBatchReader + Send>)
    })
}

async fn create(dir: &tempfile::TempDir, ids: std::ops::Range<i64>, stable: bool) -> (Location, Dataset) {
    let loc = open_uri(dir.path().join("t.lance").to_str().unwrap(), &HashMap::new()).unwrap();
    let ids: Vec<Option<i64>> = ids.map(Some).collect();
    let b = batch(&ids, "old");
    let params = WriteParams {
        max_rows_per_file: 4,
        enable_stable_row_ids: stable,
        ..WriteParams::default()
    };
    let reader = Box::new(RecordBatchIterator::new(vec![Ok(b)], schema()));
    let ds = write_dataset(&loc, reader, params).await.unwrap();
    (loc, ds)
}

/// `(id, v, _rowid)` of every row, sorted by id then v.
async fn rows(ds: &Dataset) -> Vec<(Option<i64>, String, u64)> {
    let opts = ScanOptions {
        columns: Columns::Names(vec!["id".into(), "v".into()]),
        with_row_id: true,
        ..ScanOptions::default()
    };
    let scan = Scan::plan(ds, opts).await.unwrap();
    let mut out = Vec::new();
    for b in scan.collect().await.unwrap() {
        let id = b.column(0).as_primitive::<Int64Type>();
        let v = b.column(1).as_string::<i32>();
        let rid = b.column(2).as_primitive::<arrow_array::types::UInt64Type>();
        for i in 0..b.num_rows() {
            out.push((
                id.is_valid(i).then(|| id.value(i)),
                v.value(i).to_string(),
                rid.value(i),
            ));
        }
    }
    out.sort();
    out
}

fn ids_and_values(rows: &[(Option<i64>, String, u64)]) -> Vec<(Option<i64>, String)> {
    rows.iter().map(|(i, v, _)| (*i, v.clone())).collect()
}

use arrow_array::Array;

fn params(update: bool, insert: bool, delete: bool) -> MergeInsertParams {
    MergeInsertParams {
        update,
        insert,
        delete,
        ..MergeInsertParams::new(vec!["id".into()])
    }
}

#[tokio::test]
async fn upsert_and_delete_counts() {
    let dir = tempfile::tempdir().unwrap();
    let (_, ds) = create(&dir, 0..10, false).await;
    let src = source(batch(&[Some(8), Some(9), Some(10), Some(11), None], "new"));
    let (ds, stats) = ds.merge_insert(&params(true, true, true), src.as_ref()).await.unwrap();
    assert_eq!(
        stats,
        MergeStats {
            num_inserted_rows: 3,
            num_updated_rows: 2,
            num_deleted_rows: 8
        }
    );
    let got = ids_and_values(&rows(&ds).await);
    let want: Vec<(Option<i64>, String)> = vec![
        (None, "new-1".into()),
        (Some(8), "new8".into()),
        (Some(9), "new9".into()),
        (Some(10), "new10".into()),
        (Some(11), "new11".into()),
    ];
    assert_eq!(got, want);
}

#[tokio::test]
async fn a_delete_filter_and_an_update_condition() {
    let dir = tempfile::tempdir().unwrap();
    let (_, ds) = create(&dir, 0..10, false).await;
    let p = MergeInsertParams {
        update_condition: Some("target.id > 3".into()),
        delete_filter: Some("id < 2".into()),
        ..params(true, false, true)
    };
    let src = source(batch(&[Some(1), Some(5), Some(20)], "new"));
    let (ds, stats) = ds.merge_insert(&p, src.as_ref()).await.unwrap();
    // 1 matched (condition false: kept, not deleted), 5 updated, 0 deleted.
    assert_eq!(
        (stats.num_updated_rows, stats.num_inserted_rows, stats.num_deleted_rows),
        (1, 0, 1)
    );
    let got = ids_and_values(&rows(&ds).await);
    assert_eq!(got.len(), 9);
    assert!(got.contains(&(Some(1), "old1".into())));
    assert!(got.contains(&(Some(5), "new5".into())));
    assert!(!got.iter().any(|(i, _)| *i == Some(0)));
}

#[tokio::test]
async fn nothing_to_do_commits_nothing_and_ambiguity_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let (_, ds) = create(&dir, 0..4, false).await;
    let src = source(batch(&[Some(50)], "x"));
    let (same, stats) = ds
        .merge_insert(&params(true, false, false), src.as_ref())
        .await
        .unwrap();
    assert_eq!((same.version(), stats), (1, MergeStats::default()));
    let dup = source(batch(&[Some(2), Some(2)], "d"));
    let err = ds
        .merge_insert(&params(true, false, false), dup.as_ref())
        .await
        .unwrap_err();
    assert!(err.to_string().contains("ambiguous"), "{err}");
    // Without an update, duplicate matches are no error (and change nothing).
    let (_, stats) = ds
        .merge_insert(&params(false, true, false), dup.as_ref())
        .await
        .unwrap();
    assert_eq!(stats, MergeStats::default());
}

#[tokio::test]
async fn updated_rows_keep_their_stable_row_ids() {
    let dir = tempfile::tempdir().unwrap();
    let (_, ds) = create(&dir, 0..6, true).await;
    let before: HashMap<Option<i64>, u64> = rows(&ds).await.into_iter().map(|(i, _, r)| (i, r)).collect();
    let src = source(batch(&[Some(1), Some(4), Some(7)], "new"));
    let (ds, stats) = ds.merge_insert(&params(true, true, false), src.as_ref()).await.unwrap();
    assert_eq!((stats.num_updated_rows, stats.num_inserted_rows), (2, 1));
    for (id, v, rid) in rows(&ds).await {
        match before.get(&id) {
            Some(old) => assert_eq!(*old, rid, "{id:?} {v}"),
            None => assert!(!before.values().any(|r| *r == rid)),
        }
    }
}

#[tokio::test]
async fn a_conflicting_merge_runs_again_on_the_newest_version() {
    let dir = tempfile::tempdir().unwrap();
    let (loc, stale) = create(&dir, 0..8, false).await;
    Dataset::open_at(&loc, None)
        .await
        .unwrap()
        .delete("id = 3")
        .await
        .unwrap();
    let src = source(batch(&[Some(2), Some(3)], "new"));
    let once = MergeInsertParams {
        retry: RetryPolicy::new(0, None),
        ..params(true, true, false)
    };
    assert!(stale.merge_insert(&once, src.as_ref()).await.is_err());
    let (ds, stats) = stale
        .merge_insert(&params(true, true, false), src.as_ref())
        .await
        .unwrap();
    // On the newest version 3 is gone: it is inserted, not updated.
    assert_eq!((stats.num_updated_rows, stats.num_inserted_rows), (1, 1));
    assert_eq!(ds.count_rows(), 8);
}
