#![allow(clippy::unwrap_used, reason = "test code: a failed unwrap or panic is a failed test")]
//! `validate(deep)` checks that index files cover the fragments their bitmaps claim: a
//! dataset with every index kind lancelet builds passes through appends, deletes, updates,
//! delta segments and compaction, and fails once a manifest is forged so that an index's
//! fragment bitmap claims a fragment its files do not hold, leaves out one they do hold, or
//! a fragment is shorter than the rows an index names in it.

use crate::common;
use common::location;

use std::sync::Arc;

use arrow_array::builder::{ListBuilder, StringBuilder};
use arrow_array::{
    ArrayRef, FixedSizeListArray, Float32Array, Int64Array, RecordBatch, RecordBatchIterator, RecordBatchReader,
    StringArray,
};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use lancelet_dataset::index::build::{OptimizeIndicesOptions, ScalarIndexRequest};
use lancelet_dataset::index::fts::FtsIndexParams;
use lancelet_dataset::index::vector_build::VectorIndexRequest;
use lancelet_dataset::maintain::compact::CompactionOptions;
use lancelet_dataset::maintain::validate::{ValidateOptions, ValidationReport};
use lancelet_dataset::write::{write_dataset, WriteMode, WriteParams};
use lancelet_dataset::Dataset;
use lancelet_index::scalar::ScalarParams;
use lancelet_table::indices::{decode_index_section, encode_fragment_bitmap, fragment_bitmap, index_dir};
use lancelet_table::manifest::{decode_manifest, decode_transaction_section, encode_manifest_file};
use lancelet_table::pb;
use lancelet_vector::ivf::{VectorBuildParams, VectorIndexType};
use lancelet_vector::Metric;

const DIM: i32 = 8;

fn schema() -> SchemaRef {
    let item = Arc::new(Field::new("item", DataType::Float32, true));
    let label = Arc::new(Field::new("item", DataType::Utf8, true));
    Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, true),
        Field::new("cat", DataType::Utf8, true),
        Field::new("tags", DataType::List(label), true),
        Field::new("text", DataType::Utf8, true),
        Field::new("vec", DataType::FixedSizeList(item, DIM), true),
    ]))
}

fn rows(range: std::ops::Range<i64>) -> Box<dyn RecordBatchReader + Send> {
    rows_with(range, false)
}

/// Rows of `range`; `hollow` ones give vector, LABEL_LIST and full-text indexes nothing to
/// hold: no vectors, empty tag lists, texts of stop words only.
fn rows_with(range: std::ops::Range<i64>, hollow: bool) -> Box<dyn RecordBatchReader + Send> {
    let ids: Vec<i64> = range.collect();
    let cat = StringArray::from_iter(ids.iter().map(|i| (i % 7 != 0).then(|| format!("c{}", i % 5))));
    let mut tags = ListBuilder::new(StringBuilder::new());
    for i in &ids {
        for k in 0..if hollow { 0 } else { i % 3 } {
            tags.values().append_value(format!("t{k}"));
        }
        tags.append(hollow || i % 11 != 0);
    }
    let text = StringArray::from_iter(
        ids.iter()
            .map(|i| (i % 13 != 0).then(|| format!("hello world number {i}"))),
    );
    let values: Vec<f32> = ids
        .iter()
        .flat_map(|i| (0..DIM).map(move |d| ((i * 31 + i64::from(d) * 17) % 97) as f32 / 10.0))
        .collect();
    let vec = FixedSizeListArray::new(
        Arc::new(Field::new("item", DataType::Float32, true)),
        DIM,
        Arc::new(Float32Array::from(values)),
        hollow.then(|| vec![false; ids.len()].into()),
    );
    let columns: Vec<ArrayRef> = vec![
        Arc::new(Int64Array::from(ids.clone())),
        Arc::new(cat),
        Arc::new(tags.finish()),
        Arc::new(text),
        Arc::new(vec),
    ];
    let batch = RecordBatch::try_new(schema(), columns).unwrap();
    Box::new(RecordBatchIterator::new(vec![Ok(batch)], schema()))
}

fn params(mode: WriteMode, stable: bool) -> WriteParams {
    WriteParams {
        mode,
        max_rows_per_file: 200,
        enable_stable_row_ids: stable,
        ..WriteParams::default()
    }
}

async fn scalar(ds: &Dataset, column: &str, kind: &str, name: &str) -> Dataset {
    ds.create_scalar_index(&ScalarIndexRequest {
        column: column.into(),
        index_type: kind.into(),
        name: Some(name.into()),
        replace: false,
        params: ScalarParams::default(),
    })
    .await
    .unwrap()
}

/// Two fragments of 200 rows with every index kind, then a third fragment no index covers.
async fn indexed(dir: &tempfile::TempDir, stable: bool) -> Dataset {
    let loc = location(dir);
    let ds = write_dataset(&loc, rows(0..400), params(WriteMode::Create, stable))
        .await
        .unwrap();
    let ds = scalar(&ds, "id", "BTREE", "id_btree").await;
    let ds = scalar(&ds, "cat", "BITMAP", "cat_bitmap").await;
    let ds = scalar(&ds, "tags", "LABEL_LIST", "tags_ll").await;
    let ds = scalar(&ds, "text", "NGRAM", "text_ngram").await;
    let ds = scalar(&ds, "id", "ZONEMAP", "id_zonemap").await;
    let ds = scalar(&ds, "cat", "BLOOMFILTER", "cat_bloom").await;
    let ds = ds
        .create_fts_index("text", Some("text_fts".into()), false, &FtsIndexParams::default())
        .await
        .unwrap();
    let mut pq = VectorBuildParams::new(VectorIndexType::IvfPq, Metric::L2);
    pq.num_partitions = Some(2);
    pq.num_sub_vectors = Some(2);
    let mut flat = VectorBuildParams::new(VectorIndexType::IvfFlat, Metric::Cosine);
    flat.num_partitions = Some(3);
    for (name, params) in [("vec_pq", pq), ("vec_flat", flat)] {
        ds.create_vector_index(&VectorIndexRequest {
            column: "vec".into(),
            name: Some(name.into()),
            replace: false,
            params,
        })
        .await
        .unwrap();
    }
    write_dataset(&loc, rows(400..600), params(WriteMode::Append, stable))
        .await
        .unwrap()
}

/// `validate(deep)` of the dataset in `dir`, opened afresh.
async fn validate(dir: &tempfile::TempDir) -> ValidationReport {
    let fresh = Dataset::open_at(&location(dir), None).await.unwrap();
    fresh
        .validate(&ValidateOptions {
            version: None,
            deep: true,
        })
        .await
        .unwrap()
}

/// Rewrites the latest manifest in place, its index entries changed by `forge` (and its
/// manifest by `forge_manifest`); the checksums are recomputed by the encoder.
async fn forge(
    ds: &Dataset,
    forge: impl Fn(&mut pb::IndexMetadata),
    forge_manifest: impl Fn(&mut pb::Manifest),
) -> Vec<pb::IndexMetadata> {
    let store = ds.store().clone();
    let entry = lancelet_table::versions::latest_version(store.as_ref())
        .await
        .unwrap()
        .unwrap();
    let bytes = store.read(&entry.path).await.unwrap();
    let mut m = decode_manifest(&bytes, &entry.path).unwrap();
    let mut indices = decode_index_section(&bytes, &m, &entry.path).unwrap();
    let txn = decode_transaction_section(&bytes, &m).unwrap_or_default();
    indices.iter_mut().for_each(&forge);
    forge_manifest(&mut m);
    store
        .put(&entry.path, encode_manifest_file(&m, &txn, &indices).into())
        .await
        .unwrap();
    indices
}

fn with_fragment(idx: &mut pb::IndexMetadata, add: Option<u32>, remove: Option<u32>) {
    let mut b = fragment_bitmap(idx).unwrap();
    if let Some(f) = add {
        b.insert(f);
    }
    if let Some(f) = remove {
        b.remove(f);
    }
    idx.fragment_bitmap = encode_fragment_bitmap(&b).into();
}

/// The problems reported on the directory of `idx` whose reason names every word of `words`.
fn reported(report: &ValidationReport, idx: &pb::IndexMetadata, words: &[&str]) -> bool {
    let dir = index_dir(idx).unwrap();
    report
        .problems
        .iter()
        .any(|p| p.path == dir && p.reason.contains(&idx.name) && words.iter().all(|w| p.reason.contains(w)))
}

async fn healthy_through_the_lifecycle(stable: bool) {
    let dir = tempfile::tempdir().unwrap();
    let ds = indexed(&dir, stable).await;
    let report = validate(&dir).await;
    assert!(report.is_ok(), "{:?}", report.problems);
    // Deletes, an update (rows move to a new fragment, with their ids when stable), delta
    // segments over the new fragments and a compaction that rebuilds what it touches.
    let (ds, _) = ds.delete("id < 30 OR (id >= 200 AND id < 400)").await.unwrap();
    let (ds, _) = ds
        .update(&[("text".into(), "'changed text'".into())], Some("id % 10 = 1"))
        .await
        .unwrap();
    let ds = ds
        .optimize_indices(&OptimizeIndicesOptions {
            num_indices_to_merge: Some(0),
            index_names: None,
        })
        .await
        .unwrap();
    let report = validate(&dir).await;
    assert!(report.is_ok(), "{:?}", report.problems);
    let (ds, _) = ds
        .compact_files(&CompactionOptions {
            target_rows_per_fragment: 1000,
            ..CompactionOptions::default()
        })
        .await
        .unwrap();
    assert!(ds.fragments().len() < 4, "{:?}", ds.fragments().len());
    let report = validate(&dir).await;
    assert!(report.is_ok(), "{:?}", report.problems);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_index_kind_passes_through_appends_deletes_updates_and_compaction() {
    healthy_through_the_lifecycle(false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_index_kind_passes_with_stable_row_ids() {
    healthy_through_the_lifecycle(true).await;
}

async fn a_bitmap_claiming_an_unindexed_fragment_is_reported(stable: bool) {
    let dir = tempfile::tempdir().unwrap();
    let ds = indexed(&dir, stable).await;
    assert_eq!(ds.fragments().len(), 3);
    let indices = forge(&ds, |idx| with_fragment(idx, Some(2), None), |_| {}).await;
    assert_eq!(indices.len(), 9);
    let report = validate(&dir).await;
    assert!(!report.is_ok());
    for idx in &indices {
        assert!(
            reported(&report, idx, &["claims fragment 2", "holds none of its rows"]),
            "{}: {:?}",
            idx.name,
            report.problems
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bitmap_claiming_an_unindexed_fragment_is_reported_for_every_kind() {
    a_bitmap_claiming_an_unindexed_fragment_is_reported(false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bitmap_claiming_an_unindexed_fragment_is_reported_with_stable_row_ids() {
    a_bitmap_claiming_an_unindexed_fragment_is_reported(true).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rows_outside_the_bitmap_and_past_a_fragment_are_reported() {
    let dir = tempfile::tempdir().unwrap();
    let ds = indexed(&dir, false).await;
    // Fragment 1 left out of every bitmap: the index still holds its rows.
    let indices = forge(&ds, |idx| with_fragment(idx, None, Some(1)), |_| {}).await;
    let report = validate(&dir).await;
    for idx in &indices {
        assert!(
            reported(&report, idx, &["holds rows of fragment 1", "does not claim"]),
            "{}: {:?}",
            idx.name,
            report.problems
        );
    }
    // Fragment 1 shortened to 100 rows: every index names rows (or zones) past 100.
    let indices = forge(
        &ds,
        |idx| with_fragment(idx, Some(1), None),
        |m| {
            m.fragments
                .iter_mut()
                .filter(|f| f.id == 1)
                .for_each(|f| f.physical_rows = 100);
        },
    )
    .await;
    let report = validate(&dir).await;
    for idx in &indices {
        assert!(
            reported(&report, idx, &["of fragment 1, which has only 100 rows"]),
            "{}: {:?}",
            idx.name,
            report.problems
        );
    }
    // Without `deep` nothing reads index contents.
    let fresh = Dataset::open_at(&location(&dir), None).await.unwrap();
    let shallow = fresh.validate(&ValidateOptions::default()).await.unwrap();
    assert!(
        shallow.problems.iter().all(|p| !p.path.starts_with("_indices")),
        "{:?}",
        shallow.problems
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rows_an_index_skips_are_not_missing_rows() {
    // Fragment 1 has no vectors, only empty tag lists and only stop words: the vector,
    // LABEL_LIST and full-text indexes hold none of its rows, rightly.
    let dir = tempfile::tempdir().unwrap();
    let loc = location(&dir);
    write_dataset(&loc, rows(0..200), params(WriteMode::Create, false))
        .await
        .unwrap();
    let ds = write_dataset(&loc, rows_with(200..400, true), params(WriteMode::Append, false))
        .await
        .unwrap();
    let ds = scalar(&ds, "tags", "LABEL_LIST", "tags_ll").await;
    let ds = ds
        .create_fts_index("text", Some("text_fts".into()), false, &FtsIndexParams::default())
        .await
        .unwrap();
    let mut flat = VectorBuildParams::new(VectorIndexType::IvfFlat, Metric::L2);
    flat.num_partitions = Some(2);
    ds.create_vector_index(&VectorIndexRequest {
        column: "vec".into(),
        name: Some("vec_flat".into()),
        replace: false,
        params: flat,
    })
    .await
    .unwrap();
    let report = validate(&dir).await;
    assert!(report.is_ok(), "{:?}", report.problems);
}
