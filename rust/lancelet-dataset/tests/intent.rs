#![allow(clippy::unwrap_used, reason = "test code: a failed unwrap or panic is a failed test")]
//! Commit intents (create-or-append, append at V, overwrite at V) and conflict retries,
//! without Spark: jobs that write fragments first and commit them later.

use crate::common;
use common::{location, rows, schema};

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use arrow_array::{RecordBatch, RecordBatchIterator};
use arrow_schema::{DataType, Field, Schema};
use lancelet_dataset::commit::intent::{commit_with_intent, CommitIntent};
use lancelet_dataset::commit::retry::{conflict_kind, RetryPolicy};
use lancelet_dataset::scan::{Columns, Scan, ScanOptions};
use lancelet_dataset::write::{write_dataset, write_fragments, WriteParams};
use lancelet_dataset::{Dataset, Location};
use lancelet_table::ConflictKind;

async fn values(loc: &Location) -> Vec<i64> {
    let ds = Dataset::open_at(loc, None).await.unwrap();
    let opts = ScanOptions {
        columns: Columns::Names(vec!["a".into()]),
        ..ScanOptions::default()
    };
    let scan = Scan::plan(&ds, opts).await.unwrap();
    let mut out: Vec<i64> = scan
        .collect()
        .await
        .unwrap()
        .iter()
        .flat_map(|b| b.column(0).as_primitive::<Int64Type>().values().to_vec())
        .collect();
    out.sort_unstable();
    out
}

/// A job's fragments, written while the dataset is absent (or at its current version).
async fn staged(loc: &Location, values: std::ops::Range<i64>) -> Vec<lancelet_table::pb::DataFragment> {
    let params = WriteParams {
        mode: lancelet_dataset::write::WriteMode::Append,
        ..WriteParams::default()
    };
    write_fragments(loc, rows(values), &params).await.unwrap().1.fragments
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn jobs_planned_on_an_absent_dataset_all_keep_their_rows() {
    let dir = tempfile::tempdir().unwrap();
    let loc = location(&dir);
    // Every job plans while the dataset is absent, then all commit at once.
    let mut jobs = Vec::new();
    for j in 0..4i64 {
        jobs.push(staged(&loc, j * 10..j * 10 + 10).await);
    }
    let handles: Vec<_> = jobs
        .into_iter()
        .map(|frags| {
            let loc = loc.clone();
            tokio::spawn(async move {
                commit_with_intent(
                    &loc,
                    CommitIntent::CreateOrAppend(schema()),
                    frags,
                    &WriteParams::default(),
                )
                .await
            })
        })
        .collect();
    for h in handles {
        h.await.unwrap().unwrap();
    }
    assert_eq!(values(&loc).await, (0..40).collect::<Vec<_>>());
    let ds = Dataset::open_at(&loc, None).await.unwrap();
    assert_eq!(ds.version(), 4);
}

#[tokio::test]
async fn create_or_append_appends_to_a_dataset_created_after_planning() {
    let dir = tempfile::tempdir().unwrap();
    let loc = location(&dir);
    let mine = staged(&loc, 0..5).await;
    write_dataset(&loc, rows(100..103), WriteParams::default())
        .await
        .unwrap();
    commit_with_intent(
        &loc,
        CommitIntent::CreateOrAppend(schema()),
        mine,
        &WriteParams::default(),
    )
    .await
    .unwrap();
    assert_eq!(values(&loc).await, vec![0, 1, 2, 3, 4, 100, 101, 102]);
}

#[tokio::test]
async fn create_or_append_refuses_a_dataset_of_another_schema() {
    let dir = tempfile::tempdir().unwrap();
    let loc = location(&dir);
    let mine = staged(&loc, 0..5).await;
    let other = Arc::new(Schema::new(vec![Field::new("b", DataType::Utf8, true)]));
    let batch = RecordBatch::try_new(other.clone(), vec![Arc::new(arrow_array::StringArray::from(vec!["x"]))]).unwrap();
    let reader = Box::new(RecordBatchIterator::new(vec![Ok(batch)], other));
    write_dataset(&loc, reader, WriteParams::default()).await.unwrap();
    let err = commit_with_intent(
        &loc,
        CommitIntent::CreateOrAppend(schema()),
        mine,
        &WriteParams::default(),
    )
    .await
    .unwrap_err();
    assert!(matches!(err, lancelet_dataset::Error::SchemaMismatch(_)), "{err}");
    assert_eq!(Dataset::open_at(&loc, None).await.unwrap().count_rows(), 1);
}

#[tokio::test]
async fn a_create_never_replaces_a_dataset_created_meanwhile() {
    let dir = tempfile::tempdir().unwrap();
    let loc = location(&dir);
    let mine = staged(&loc, 0..5).await;
    write_dataset(&loc, rows(100..103), WriteParams::default())
        .await
        .unwrap();
    let intent = CommitIntent::Overwrite {
        schema: schema(),
        read_version: None,
    };
    let err = commit_with_intent(&loc, intent, mine, &WriteParams::default())
        .await
        .unwrap_err();
    assert_eq!(conflict_kind(&err), Some(ConflictKind::TableReplaced), "{err}");
    assert_eq!(values(&loc).await, vec![100, 101, 102]);
}

#[tokio::test]
async fn append_and_overwrite_at_a_version() {
    let dir = tempfile::tempdir().unwrap();
    let loc = location(&dir);
    write_dataset(&loc, rows(0..3), WriteParams::default()).await.unwrap();
    let appended = staged(&loc, 10..12).await;
    let replacing = staged(&loc, 20..22).await;
    commit_with_intent(
        &loc,
        CommitIntent::Append { read_version: 1 },
        appended,
        &WriteParams::default(),
    )
    .await
    .unwrap();
    assert_eq!(values(&loc).await, vec![0, 1, 2, 10, 11]);
    let intent = CommitIntent::Overwrite {
        schema: schema(),
        read_version: Some(2),
    };
    commit_with_intent(&loc, intent, replacing, &WriteParams::default())
        .await
        .unwrap();
    assert_eq!(values(&loc).await, vec![20, 21]);
}

#[tokio::test]
async fn conflicting_deletes_are_retried_on_the_newest_version() {
    let dir = tempfile::tempdir().unwrap();
    let loc = location(&dir);
    let v1 = write_dataset(&loc, rows(0..10), WriteParams::default()).await.unwrap();
    v1.delete("a < 2").await.unwrap();
    // The same fragment changed since v1: the first attempt conflicts.
    let err = v1.delete("a > 7").await.unwrap_err();
    assert_eq!(conflict_kind(&err), Some(ConflictKind::Retryable), "{err}");
    let none = RetryPolicy::new(0, None);
    assert!(v1
        .execute_with_retry(&none, |ds| async move { ds.delete("a > 7").await })
        .await
        .is_err());
    let mut runs = 0;
    let (ds, res) = v1
        .execute_with_retry(&RetryPolicy::default(), |ds| {
            runs += 1;
            async move { ds.delete("a > 7").await }
        })
        .await
        .unwrap();
    assert_eq!((runs, res.num_deleted_rows, ds.version()), (2, 2, 3));
    assert_eq!(values(&loc).await, (2..8).collect::<Vec<_>>());
}

#[tokio::test]
async fn a_replaced_table_is_not_retried() {
    let dir = tempfile::tempdir().unwrap();
    let loc = location(&dir);
    let v1 = write_dataset(&loc, rows(0..10), WriteParams::default()).await.unwrap();
    let params = WriteParams {
        mode: lancelet_dataset::write::WriteMode::Overwrite,
        ..WriteParams::default()
    };
    write_dataset(&loc, rows(50..52), params).await.unwrap();
    let mut runs = 0;
    let err = v1
        .execute_with_retry(&RetryPolicy::default(), |ds| {
            runs += 1;
            async move { ds.delete("a > 7").await }
        })
        .await
        .unwrap_err();
    assert_eq!(conflict_kind(&err), Some(ConflictKind::TableReplaced), "{err}");
    assert_eq!(runs, 1);
    assert_eq!(values(&loc).await, vec![50, 51]);
}
