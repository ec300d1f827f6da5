#![allow(clippy::unwrap_used, reason = "test code: a failed unwrap or panic is a failed test")]
//! Table semantics that used to live in Python: `merge` of new columns on a key
//! (`merge_columns`), compaction defaults from the table config (`compact_config`), the
//! "as of" version search (`lancelet_table::asof`) and UDF backfills with their
//! checkpoint and cleanup policy (`backfill`).

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use arrow_array::{Array, Int64Array, RecordBatch, RecordBatchIterator, RecordBatchReader, StringArray};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use lancelet_dataset::evolve::backfill::BackfillOptions;
use lancelet_dataset::evolve::merge_columns::MergeColumnsOptions;
use lancelet_dataset::maintain::compact_config::CompactionArgs;
use lancelet_dataset::scan::{Columns, Scan, ScanOptions};
use lancelet_dataset::write::{write_dataset, WriteMode, WriteParams};
use lancelet_dataset::{open_uri, Dataset, Error, Location};

fn base_schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, true),
        Field::new("s", DataType::Utf8, true),
    ]))
}

fn base(ids: &[Option<i64>]) -> RecordBatch {
    let s: Vec<String> = ids.iter().map(|i| format!("row-{}", i.unwrap_or(-1))).collect();
    RecordBatch::try_new(
        base_schema(),
        vec![Arc::new(Int64Array::from(ids.to_vec())), Arc::new(StringArray::from(s))],
    )
    .unwrap()
}

fn reader(batches: Vec<RecordBatch>) -> Box<dyn RecordBatchReader + Send> {
    let schema = batches[0].schema();
    Box::new(RecordBatchIterator::new(batches.into_iter().map(Ok), schema))
}

async fn create(dir: &tempfile::TempDir, ids: &[Option<i64>], rows_per_file: u64) -> (Location, Dataset) {
    let loc = open_uri(dir.path().join("t.lance").to_str().unwrap(), &HashMap::new()).unwrap();
    let params = WriteParams {
        max_rows_per_file: rows_per_file,
        ..WriteParams::default()
    };
    let ds = write_dataset(&loc, reader(vec![base(ids)]), params).await.unwrap();
    (loc, ds)
}

fn data_files(dir: &tempfile::TempDir) -> HashSet<String> {
    std::fs::read_dir(dir.path().join("t.lance").join("data"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect()
}

/// The live rows' `id` and `column` (as int64), in scan order.
async fn pairs(ds: &Dataset, column: &str) -> Vec<(Option<i64>, Option<i64>)> {
    let opts = ScanOptions {
        columns: Columns::Names(vec!["id".into(), column.into()]),
        ..ScanOptions::default()
    };
    let mut out = Vec::new();
    for b in Scan::plan(ds, opts).await.unwrap().collect().await.unwrap() {
        let id = b.column(0).as_primitive::<Int64Type>();
        let v = b.column(1).as_primitive::<Int64Type>();
        for i in 0..b.num_rows() {
            out.push((id.is_valid(i).then(|| id.value(i)), v.is_valid(i).then(|| v.value(i))));
        }
    }
    out
}

fn right(keys: &[Option<i64>], m: &[Option<i64>]) -> RecordBatch {
    let schema = Arc::new(Schema::new(vec![
        Field::new("k", DataType::Int64, true),
        Field::new("m", DataType::Int64, true),
    ]));
    RecordBatch::try_new(
        schema,
        vec![
            Arc::new(Int64Array::from(keys.to_vec())),
            Arc::new(Int64Array::from(m.to_vec())),
        ],
    )
    .unwrap()
}

// ---- merge_columns -----------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn merge_joins_new_columns_in_memory_and_spilled() {
    for spill_bytes in [usize::MAX, 0] {
        let dir = tempfile::tempdir().unwrap();
        let ids: Vec<Option<i64>> = (0..10).map(Some).chain([None]).collect();
        let (_, ds) = create(&dir, &ids, 4).await;
        let ds = ds.delete("id = 5").await.unwrap().0;
        let before = data_files(&dir);
        // Two batches: key 3 repeats (its last row wins), 99 matches nothing, a null key
        // matches the null key.
        let data = reader(vec![
            right(&[Some(2), Some(3), Some(99)], &[Some(20), Some(-1), Some(990)]),
            right(&[Some(3), None, Some(5)], &[Some(30), Some(-7), Some(50)]),
        ]);
        let opts = MergeColumnsOptions { spill_bytes };
        let ds = ds.merge_columns_with(data, "id", Some("k"), &opts).await.unwrap();
        assert_eq!(ds.schema().fields().len(), 3);
        let got = pairs(&ds, "m").await;
        let want: Vec<(Option<i64>, Option<i64>)> = (0..10)
            .filter(|i| *i != 5)
            .map(|i| {
                (
                    Some(i),
                    match i {
                        2 => Some(20),
                        3 => Some(30),
                        _ => None,
                    },
                )
            })
            .chain([(None, Some(-7))])
            .collect();
        assert_eq!(got, want, "spill_bytes {spill_bytes}");
        // One new file per fragment (three fragments), and no spill file left behind.
        let after = data_files(&dir);
        assert!(before.is_subset(&after));
        assert_eq!(after.len() - before.len(), 3, "spill_bytes {spill_bytes}");
        for f in ds.fragments() {
            assert_eq!(f.files.len(), 2);
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn merge_refusals_leave_nothing_behind() {
    let dir = tempfile::tempdir().unwrap();
    let ids: Vec<Option<i64>> = (0..6).map(Some).collect();
    let (_, ds) = create(&dir, &ids, 4).await;
    let files = data_files(&dir);
    let string_key = RecordBatch::try_new(
        Arc::new(Schema::new(vec![
            Field::new("id", DataType::Utf8, true),
            Field::new("m", DataType::Int64, true),
        ])),
        vec![
            Arc::new(StringArray::from(vec!["1"])),
            Arc::new(Int64Array::from(vec![1])),
        ],
    )
    .unwrap();
    let clash = RecordBatch::try_new(
        Arc::new(Schema::new(vec![
            Field::new("k", DataType::Int64, true),
            Field::new("s", DataType::Int64, true),
        ])),
        vec![Arc::new(Int64Array::from(vec![1])), Arc::new(Int64Array::from(vec![1]))],
    )
    .unwrap();
    let only_key = RecordBatch::try_new(
        Arc::new(Schema::new(vec![Field::new("k", DataType::Int64, true)])),
        vec![Arc::new(Int64Array::from(vec![1]))],
    )
    .unwrap();
    // A non-nullable new column cannot hold the nulls of unmatched rows (pylance refuses
    // it too); with spilling, the spill file goes as well.
    let strict = RecordBatch::try_new(
        Arc::new(Schema::new(vec![
            Field::new("k", DataType::Int64, true),
            Field::new("m", DataType::Int64, false),
        ])),
        vec![
            Arc::new(Int64Array::from(vec![1])),
            Arc::new(Int64Array::from(vec![10])),
        ],
    )
    .unwrap();
    let cases: Vec<(RecordBatch, &str, Option<&str>, &str)> = vec![
        (
            right(&[Some(1)], &[Some(1)]),
            "nope",
            Some("k"),
            "does not exist in the dataset",
        ),
        (
            right(&[Some(1)], &[Some(1)]),
            "id",
            Some("zz"),
            "does not exist in the data",
        ),
        (clash, "id", Some("k"), "exist in both"),
        (only_key, "id", Some("k"), "besides the key"),
        (string_key, "id", None, "differ in type"),
        (right(&[], &[]), "id", Some("k"), "no rows"),
        (strict, "id", Some("k"), "non-nullable"),
    ];
    for spill_bytes in [usize::MAX, 0] {
        for (data, left, right_on, want) in &cases {
            let opts = MergeColumnsOptions { spill_bytes };
            let err = ds
                .merge_columns_with(reader(vec![data.clone()]), left, *right_on, &opts)
                .await
                .unwrap_err();
            assert!(matches!(err, Error::InvalidArgument(_)), "{err:?}");
            assert!(err.to_string().contains(want), "{err} lacks {want:?}");
            assert_eq!(data_files(&dir), files, "{want}: files left behind");
        }
    }
    assert_eq!(ds.latest_version().await.unwrap(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn merge_into_an_empty_dataset_only_adds_the_schema() {
    let dir = tempfile::tempdir().unwrap();
    let (_, ds) = create(&dir, &[], 4).await;
    let ds = ds
        .merge_columns(reader(vec![right(&[Some(1)], &[Some(2)])]), "id", Some("k"))
        .await
        .unwrap();
    assert_eq!(ds.version(), 2);
    let names: Vec<&str> = ds.schema().fields().iter().map(|f| f.name().as_str()).collect();
    assert_eq!(names, ["id", "s", "m"]);
}

// ---- compaction config ---------------------------------------------------------------

async fn with_config(ds: &Dataset, entries: &[(&str, &str)]) -> Dataset {
    use lancelet_table::pb::transaction as t;
    let op = t::Operation::UpdateConfig(t::UpdateConfig {
        config_updates: Some(t::UpdateMap {
            update_entries: entries
                .iter()
                .map(|(k, v)| t::UpdateMapEntry {
                    key: k.to_string(),
                    value: Some(v.to_string()),
                })
                .collect(),
            replace: false,
        }),
        ..Default::default()
    });
    ds.commit_operation(op, None).await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compaction_defaults_come_from_the_config() {
    let dir = tempfile::tempdir().unwrap();
    let (_, ds) = create(&dir, &[Some(1)], 4).await;
    let d = ds.compaction_options(&CompactionArgs::default()).unwrap();
    assert_eq!((d.target_rows_per_fragment, d.batch_size), (1024 * 1024, 8192));
    let ds = with_config(
        &ds,
        &[
            ("lance.compaction.target_rows_per_fragment", "40"),
            ("lance.compaction.materialize_deletions", "FALSE"),
            ("lance.compaction.materialize_deletions_threshold", "0.5"),
            ("lance.compaction.batch_size", "7"),
            ("lance.compaction.num_threads", "whatever"), // not a key pylance reads
        ],
    )
    .await;
    let o = ds.compaction_options(&CompactionArgs::default()).unwrap();
    assert_eq!(o.target_rows_per_fragment, 40);
    assert!(!o.materialize_deletions);
    assert_eq!(o.materialize_deletions_threshold, 0.5);
    assert_eq!(o.batch_size, 7);
    // The caller's values win.
    let explicit = CompactionArgs {
        target_rows_per_fragment: Some(20),
        materialize_deletions: Some(true),
        ..CompactionArgs::default()
    };
    let o = ds.compaction_options(&explicit).unwrap();
    assert_eq!(
        (o.target_rows_per_fragment, o.materialize_deletions, o.batch_size),
        (20, true, 7)
    );
    // A bad key is refused even when the caller gives that option (as in pylance).
    let bad = with_config(&ds, &[("lance.compaction.target_rows_per_fragment", "abc")]).await;
    let e = bad.compaction_options(&explicit).unwrap_err().to_string();
    assert!(
        e.contains("lance.compaction.target_rows_per_fragment") && e.contains("non-negative integer"),
        "{e}"
    );
    for args in [
        CompactionArgs {
            target_rows_per_fragment: Some(0),
            ..CompactionArgs::default()
        },
        CompactionArgs {
            materialize_deletions_threshold: Some(2.0),
            ..CompactionArgs::default()
        },
    ] {
        assert!(matches!(ds.compaction_options(&args), Err(Error::InvalidArgument(_))));
    }
}

// ---- asof ----------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn asof_finds_the_newest_version_before_a_time() {
    let dir = tempfile::tempdir().unwrap();
    let (loc, _) = create(&dir, &[Some(1)], 4).await;
    for i in 0..3 {
        std::thread::sleep(std::time::Duration::from_millis(5));
        let params = WriteParams {
            mode: WriteMode::Append,
            ..WriteParams::default()
        };
        write_dataset(&loc, reader(vec![base(&[Some(i)])]), params)
            .await
            .unwrap();
    }
    let ds = Dataset::open_at(&loc, None).await.unwrap();
    let versions = ds.versions().await.unwrap();
    assert_eq!(versions.len(), 4);
    let store = ds.store().as_ref();
    use lancelet_table::asof::{shown_micros, version_asof};
    for (i, v) in versions.iter().enumerate() {
        let shown = shown_micros(v.timestamp);
        assert_eq!(version_asof(store, shown + 1).await.unwrap(), Some(v.version));
        // A version is not before its own shown time (as in pylance).
        let previous = i.checked_sub(1).map(|p| versions[p].version);
        assert_eq!(version_asof(store, shown).await.unwrap(), previous);
    }
    assert_eq!(version_asof(store, i64::MAX).await.unwrap(), Some(4));
}

// ---- backfill --------------------------------------------------------------------------

fn plus_one(b: RecordBatch) -> lancelet_dataset::Result<RecordBatch> {
    let id = b.column_by_name("id").unwrap().as_primitive::<Int64Type>();
    let next: Int64Array = id.iter().map(|v| v.map(|v| v + 1)).collect();
    let schema = Arc::new(Schema::new(vec![Field::new("next", DataType::Int64, true)]));
    Ok(RecordBatch::try_new(schema, vec![Arc::new(next)])?)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn backfill_adds_columns_and_cleans_up_a_failure() {
    let dir = tempfile::tempdir().unwrap();
    let ids: Vec<Option<i64>> = (0..12).map(Some).collect();
    let (_, ds) = create(&dir, &ids, 4).await;
    let ds = ds.delete("id = 1").await.unwrap().0;
    let files = data_files(&dir);
    // A failure on the last fragment: nothing committed, no file left.
    let mut fails = |b: RecordBatch| {
        let first = b.column_by_name("id").unwrap().as_primitive::<Int64Type>().value(0);
        if first >= 8 {
            return Err(Error::InvalidArgument("boom".into()));
        }
        plus_one(b)
    };
    let opts = BackfillOptions {
        read_columns: Some(vec!["id".into()]),
        ..BackfillOptions::default()
    };
    let err = ds.backfill(&mut fails, &opts).await.unwrap_err();
    assert!(err.to_string().contains("boom"));
    assert_eq!(data_files(&dir), files);
    assert_eq!(ds.latest_version().await.unwrap(), ds.version());
    // A UDF changing its columns half-way is refused.
    let mut calls = 0;
    let mut shifty = |b: RecordBatch| {
        calls += 1;
        let out = plus_one(b)?;
        if calls < 3 {
            return Ok(out);
        }
        let schema = Arc::new(Schema::new(vec![Field::new("other", DataType::Int64, true)]));
        Ok(RecordBatch::try_new(schema, out.columns().to_vec())?)
    };
    let err = ds.backfill(&mut shifty, &opts).await.unwrap_err();
    assert!(err.to_string().contains("earlier"), "{err}");
    assert_eq!(data_files(&dir), files);
    // And the UDF that works: one new file per fragment, deleted rows lined up.
    let mut ok = plus_one;
    let ds = ds.backfill(&mut ok, &opts).await.unwrap();
    let got = pairs(&ds, "next").await;
    let want: Vec<_> = (0..12).filter(|i| *i != 1).map(|i| (Some(i), Some(i + 1))).collect();
    assert_eq!(got, want);
    assert_eq!(data_files(&dir).len(), files.len() + 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_checkpointed_backfill_resumes_where_it_stopped() {
    let dir = tempfile::tempdir().unwrap();
    let ids: Vec<Option<i64>> = (0..12).map(Some).collect();
    let (_, ds) = create(&dir, &ids, 4).await;
    let ckpt = dir.path().join("backfill.json");
    let opts = BackfillOptions {
        read_columns: Some(vec!["id".into()]),
        checkpoint: Some(ckpt.clone()),
        ..BackfillOptions::default()
    };
    let mut seen = Vec::new();
    let mut fails = |b: RecordBatch| {
        let first = b.column_by_name("id").unwrap().as_primitive::<Int64Type>().value(0);
        seen.push(first);
        if first >= 8 {
            return Err(Error::InvalidArgument("interrupted".into()));
        }
        plus_one(b)
    };
    assert!(ds.backfill(&mut fails, &opts).await.is_err());
    assert!(ckpt.exists());
    let mut resumed = Vec::new();
    let mut ok = |b: RecordBatch| {
        resumed.push(b.column_by_name("id").unwrap().as_primitive::<Int64Type>().value(0));
        plus_one(b)
    };
    let ds = ds.backfill(&mut ok, &opts).await.unwrap();
    assert_eq!(resumed, vec![8], "finished fragments are not computed again");
    assert!(!ckpt.exists());
    let got = pairs(&ds, "next").await;
    assert_eq!(got, (0..12).map(|i| (Some(i), Some(i + 1))).collect::<Vec<_>>());
    // Only the committed files remain: three fragments, two files each.
    assert_eq!(data_files(&dir).len(), 6);
    // A checkpoint of another version is not used.
    std::fs::write(
        &ckpt,
        b"{\"key\": {\"uri\": \"x\", \"version\": 1}, \"fields\": [], \"done\": {}}",
    )
    .unwrap();
    let mut again = |b: RecordBatch| {
        let id = b.column_by_name("id").unwrap().clone();
        let schema = Arc::new(Schema::new(vec![Field::new("copy", DataType::Int64, true)]));
        Ok(RecordBatch::try_new(schema, vec![id])?)
    };
    let ds = ds.backfill(&mut again, &opts).await.unwrap();
    assert_eq!(pairs(&ds, "copy").await.len(), 12);
    assert!(!ckpt.exists());
    assert_eq!(
        ds.schema().field_with_name("copy").unwrap().data_type(),
        &DataType::Int64
    );
}
