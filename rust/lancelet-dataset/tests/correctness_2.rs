#![allow(
    clippy::unwrap_used,
    clippy::panic,
    reason = "test code: a failed unwrap or panic is a failed test"
)]
//! Rules of issue 28 that a Rust caller of the dataset crate gets without Python: blank
//! filters are refused by scans and updates, non-finite query vectors are refused, and a
//! percent-encoded `file:` URI opens the decoded directory.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::{FixedSizeListArray, Float32Array, Int64Array, RecordBatch, RecordBatchIterator};
use arrow_schema::{DataType, Field, Schema};
use lancelet_dataset::index::knn::{NearestOptions, NearestRequest};
use lancelet_dataset::scan::{Scan, ScanOptions};
use lancelet_dataset::write::{write_dataset, WriteParams};
use lancelet_dataset::{open_uri, Dataset, Error};

/// `id = 0..n` and an 4-dim vector column `v`, at `path`.
async fn create(path: &str, n: i64) -> Dataset {
    let item = Arc::new(Field::new("item", DataType::Float32, true));
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, true),
        Field::new("v", DataType::FixedSizeList(item.clone(), 4), true),
    ]));
    let values = Float32Array::from_iter_values((0..n * 4).map(|i| i as f32));
    let v = FixedSizeListArray::try_new(item, 4, Arc::new(values), None).unwrap();
    let batch = RecordBatch::try_new(
        schema.clone(),
        vec![Arc::new(Int64Array::from_iter_values(0..n)), Arc::new(v)],
    )
    .unwrap();
    let loc = open_uri(path, &HashMap::new()).unwrap();
    let reader = Box::new(RecordBatchIterator::new(vec![Ok(batch)], schema));
    write_dataset(&loc, reader, WriteParams::default()).await.unwrap()
}

#[tokio::test]
async fn blank_filters_are_refused_by_scans_and_updates() {
    let dir = tempfile::tempdir().unwrap();
    let ds = create(dir.path().join("t.lance").to_str().unwrap(), 10).await;
    for blank in ["", " ", "\t\n"] {
        let opts = ScanOptions {
            filter: Some(blank.to_string()),
            ..ScanOptions::default()
        };
        assert!(
            matches!(Scan::plan(&ds, opts).await, Err(Error::InvalidArgument(_))),
            "{blank:?}"
        );
        let updated = ds
            .update(&[("id".to_string(), "id + 1".to_string())], Some(blank))
            .await;
        assert!(matches!(updated, Err(Error::InvalidArgument(_))), "{blank:?}");
    }
    assert_eq!(ds.count_rows(), 10);
}

fn nearest(q: Vec<f32>) -> NearestRequest {
    NearestRequest {
        nearest: NearestOptions {
            column: "v".into(),
            queries: vec![q],
            batch: false,
            k: 3,
            nprobes: None,
            refine_factor: None,
            metric: None,
            use_index: true,
            distance_range: None,
            ef: None,
        },
        columns: None,
        filter: None,
        prefilter: false,
        fast_search: false,
        with_row_id: false,
    }
}

#[tokio::test]
async fn non_finite_query_vectors_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let ds = create(dir.path().join("t.lance").to_str().unwrap(), 10).await;
    for bad in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY] {
        match ds.nearest(&nearest(vec![1.0, bad, 0.0, 0.0])).await {
            Err(Error::InvalidArgument(m)) => assert!(m.contains("position 1"), "{m}"),
            other => panic!("{bad}: {other:?}"),
        }
    }
    assert_eq!(ds.nearest(&nearest(vec![0.0; 4])).await.unwrap().num_rows(), 3);
}

#[tokio::test]
async fn a_percent_encoded_file_uri_names_the_decoded_directory() {
    let dir = tempfile::tempdir().unwrap();
    let real = dir.path().join("my data #1").join("t.lance");
    let encoded = real
        .to_str()
        .unwrap()
        .replace('%', "%25")
        .replace(' ', "%20")
        .replace('#', "%23");
    create(&format!("file://{encoded}"), 5).await;
    assert!(real.join("_versions").is_dir());
    let reopened = Dataset::open(&real, None).await.unwrap();
    assert_eq!(reopened.count_rows(), 5);
}
