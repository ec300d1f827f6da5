#![allow(clippy::unwrap_used, reason = "test code: a failed unwrap or panic is a failed test")]
//! The commit lock and automatic cleanup, from Rust alone: every commit of the dataset
//! crate runs inside the caller's lock and applies the `lance.auto_cleanup.*` config.

use crate::common;
use common::{location, rows};

use std::sync::{Arc, Mutex};

use lancelet_dataset::commit::{CommitGuard, CommitLock, HookError};
use lancelet_dataset::write::{write_dataset, WriteMode, WriteParams};
use lancelet_dataset::{Dataset, Error};

fn params(mode: WriteMode, lock: Option<Arc<dyn CommitLock>>) -> WriteParams {
    WriteParams {
        mode,
        commit_lock: lock,
        ..WriteParams::default()
    }
}

async fn versions(ds: &Dataset) -> Vec<u64> {
    ds.versions().await.unwrap().iter().map(|v| v.version).collect()
}

fn data_files(dir: &tempfile::TempDir) -> usize {
    std::fs::read_dir(dir.path().join("t.lance/data")).unwrap().count()
}

/// What the lock saw: `("lock", v)`, then `("ok", v)` or `("failed", v)`.
#[derive(Debug, Default)]
struct Recorder {
    seen: Mutex<Vec<(&'static str, u64)>>,
    refuse: bool,
}

struct Held(Arc<Recorder>, u64);

#[derive(Debug)]
struct Lock(Arc<Recorder>);

impl CommitLock for Lock {
    fn lock(&self, version: u64) -> Result<Box<dyn CommitGuard>, HookError> {
        self.0.seen.lock().unwrap().push(("lock", version));
        if self.0.refuse {
            return Err("the lock is taken".into());
        }
        Ok(Box::new(Held(self.0.clone(), version)))
    }
}

impl CommitGuard for Held {
    fn release(self: Box<Self>, failure: Option<&Error>) -> Result<(), HookError> {
        let what = if failure.is_some() { "failed" } else { "ok" };
        self.0.seen.lock().unwrap().push((what, self.1));
        Ok(())
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_commit_runs_inside_the_lock_and_derived_datasets_keep_it() {
    let dir = tempfile::tempdir().unwrap();
    let loc = location(&dir);
    let rec = Arc::new(Recorder::default());
    let lock: Arc<dyn CommitLock> = Arc::new(Lock(rec.clone()));
    let ds = write_dataset(&loc, rows(0..10), params(WriteMode::Create, Some(lock.clone())))
        .await
        .unwrap();
    let (ds, _) = ds.delete("a < 2").await.unwrap(); // the written dataset keeps the lock
    let ds = ds
        .update_config(vec![("k".into(), Some("v".into()))], false)
        .await
        .unwrap();
    let ds = ds
        .checkout(Some(lancelet_dataset::VersionRef::Number(1)))
        .await
        .unwrap()
        .restore()
        .await
        .unwrap();
    assert_eq!(ds.version(), 4);
    let seen = rec.seen.lock().unwrap().clone();
    assert_eq!(
        seen,
        vec![
            ("lock", 1),
            ("ok", 1),
            ("lock", 2),
            ("ok", 2),
            ("lock", 3),
            ("ok", 3),
            ("lock", 4),
            ("ok", 4)
        ]
    );
    // A dataset opened without the lock commits without it.
    let plain = Dataset::open_at(&loc, None).await.unwrap();
    assert!(plain.commit_lock().is_none());
    plain.delete("a = 5").await.unwrap();
    assert_eq!(rec.seen.lock().unwrap().len(), 8);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refusing_lock_stops_the_commit_and_leaves_no_files() {
    let dir = tempfile::tempdir().unwrap();
    let loc = location(&dir);
    let ds = write_dataset(&loc, rows(0..10), params(WriteMode::Create, None))
        .await
        .unwrap();
    let files = data_files(&dir);
    let refusing: Arc<dyn CommitLock> = Arc::new(Lock(Arc::new(Recorder {
        refuse: true,
        ..Recorder::default()
    })));
    let err = write_dataset(&loc, rows(10..20), params(WriteMode::Append, Some(refusing.clone())))
        .await
        .unwrap_err();
    assert!(matches!(err, Error::CommitLock(_)), "{err}");
    assert!(err.to_string().contains("the lock is taken"), "{err}");
    assert_eq!(data_files(&dir), files, "the append's data files were removed");
    ds.set_commit_lock(Some(refusing));
    assert!(matches!(ds.delete("a = 1").await, Err(Error::CommitLock(_))));
    assert_eq!(versions(&Dataset::open_at(&loc, None).await.unwrap()).await, vec![1]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_commit_is_shown_to_the_lock() {
    let dir = tempfile::tempdir().unwrap();
    let loc = location(&dir);
    let ds = write_dataset(&loc, rows(0..10), params(WriteMode::Create, None))
        .await
        .unwrap();
    // Two deletes of the same rows read at version 1: the second conflicts.
    ds.delete("a = 1").await.unwrap();
    let rec = Arc::new(Recorder::default());
    ds.set_commit_lock(Some(Arc::new(Lock(rec.clone()))));
    let op = lancelet_table::pb::transaction::Operation::Delete(lancelet_table::pb::transaction::Delete {
        updated_fragments: Vec::new(),
        deleted_fragment_ids: vec![0],
        predicate: "true".into(),
    });
    assert!(ds.commit_operation(op, None).await.is_err());
    assert_eq!(rec.seen.lock().unwrap().clone(), vec![("lock", 3), ("failed", 3)]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn automatic_cleanup_follows_the_config_after_every_commit() {
    let dir = tempfile::tempdir().unwrap();
    let loc = location(&dir);
    let ds = write_dataset(&loc, rows(0..10), params(WriteMode::Create, None))
        .await
        .unwrap();
    let config = vec![
        ("lance.auto_cleanup.interval".to_string(), Some("3".to_string())),
        ("lance.auto_cleanup.older_than".to_string(), Some("0s".to_string())),
    ];
    let mut ds = ds.update_config(config, false).await.unwrap(); // version 2
    let mut seen = Vec::new();
    for i in 0..4 {
        let append = write_dataset(&loc, rows(i * 10..i * 10 + 10), params(WriteMode::Append, None));
        append.await.unwrap();
        ds = Dataset::open_at(&loc, None).await.unwrap();
        seen.push(versions(&ds).await);
    }
    // Version 3 and 6 are multiples of the interval: each removes all but itself and the
    // version it was committed on.
    assert_eq!(seen, vec![vec![2, 3], vec![2, 3, 4], vec![2, 3, 4, 5], vec![5, 6]]);
    // A value that cannot be read leaves the commit standing.
    let ds = ds
        .update_config(vec![("lance.auto_cleanup.interval".into(), Some("abc".into()))], false)
        .await
        .unwrap();
    assert_eq!(ds.version(), 7);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_records_its_config_in_the_creating_commit() {
    let dir = tempfile::tempdir().unwrap();
    let loc = location(&dir);
    let mut p = params(WriteMode::Create, None);
    p.config.insert("lance.auto_cleanup.interval".into(), "20".into());
    let ds = write_dataset(&loc, rows(0..3), p).await.unwrap();
    assert_eq!(ds.version(), 1);
    assert_eq!(
        ds.manifest()
            .config
            .get("lance.auto_cleanup.interval")
            .map(String::as_str),
        Some("20")
    );
}
