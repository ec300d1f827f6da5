#![allow(clippy::unwrap_used, reason = "test code: a failed unwrap or panic is a failed test")]
//! A 2.1 dataset with a blob v1 column appended at 2.2: the commit turns the column into
//! blob v2 (as pylance 14 does), also when the append is committed on top of a version
//! it did not read (a retry re-derives the change from the appended files).

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::UInt64Type;
use arrow_array::{Int64Array, LargeBinaryArray, RecordBatch, RecordBatchIterator, RecordBatchReader};
use arrow_schema::{DataType, Field, Schema};
use lancelet_dataset::scan::{Columns, Scan, ScanOptions};
use lancelet_dataset::write::{commit_fragments, write_dataset, write_fragments, CommitKind, WriteMode, WriteParams};
use lancelet_dataset::{open_uri, Dataset, Location};
use lancelet_file::FileVersion;

fn v1_batch(ids: &[i64]) -> RecordBatch {
    let blob = Field::new("img", DataType::LargeBinary, true)
        .with_metadata(HashMap::from([("lance-encoding:blob".to_string(), "true".to_string())]));
    let schema = Arc::new(Schema::new(vec![Field::new("id", DataType::Int64, true), blob]));
    let values: LargeBinaryArray = ids.iter().map(|i| Some(format!("blob-{i}").into_bytes())).collect();
    RecordBatch::try_new(schema, vec![Arc::new(Int64Array::from(ids.to_vec())), Arc::new(values)]).unwrap()
}

fn reader(b: RecordBatch) -> Box<dyn RecordBatchReader + Send> {
    let schema = b.schema();
    Box::new(RecordBatchIterator::new(vec![Ok(b)], schema))
}

fn params(mode: WriteMode, version: FileVersion) -> WriteParams {
    WriteParams {
        mode,
        file_version: version,
        ..WriteParams::default()
    }
}

async fn blobs(loc: &Location) -> Vec<Vec<u8>> {
    let ds = Dataset::open_at(loc, None).await.unwrap();
    let opts = ScanOptions {
        columns: Columns::Names(vec!["id".into()]),
        with_row_address: true,
        ..ScanOptions::default()
    };
    let mut addrs = Vec::new();
    for b in Scan::plan(&ds, opts).await.unwrap().collect().await.unwrap() {
        let a = b.column_by_name("_rowaddr").unwrap().as_primitive::<UInt64Type>();
        addrs.extend_from_slice(a.values());
    }
    let mut out = Vec::new();
    for l in ds.blob_locations("img", &addrs).await.unwrap() {
        let l = l.unwrap();
        out.push(ds.read_blob(&l, 0..l.size).await.unwrap().as_slice().to_vec());
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_append_at_2_2_turns_blob_v1_into_v2_even_after_a_retry() {
    let dir = tempfile::tempdir().unwrap();
    let loc = open_uri(dir.path().join("m.lance").to_str().unwrap(), &HashMap::new()).unwrap();
    write_dataset(
        &loc,
        reader(v1_batch(&[0, 1])),
        params(WriteMode::Create, FileVersion::V2_1),
    )
    .await
    .unwrap();
    // Files of the 2.2 append, written against version 1 ...
    let (_, staged) = write_fragments(
        &loc,
        reader(v1_batch(&[5])),
        &params(WriteMode::Append, FileVersion::V2_2),
    )
    .await
    .unwrap();
    // ... while another writer appends at 2.1 (version 2).
    write_dataset(
        &loc,
        reader(v1_batch(&[2])),
        params(WriteMode::Append, FileVersion::V2_1),
    )
    .await
    .unwrap();
    let before = Dataset::open_at(&loc, None).await.unwrap();
    assert!(lancelet_file::blob::is_blob_v1(
        before.schema().field_with_name("img").unwrap()
    ));
    let ds = commit_fragments(
        &loc,
        CommitKind::Append,
        staged.fragments,
        Some(1),
        &params(WriteMode::Append, FileVersion::V2_2),
    )
    .await
    .unwrap();
    assert_eq!(ds.version(), 3);
    assert_eq!(ds.data_storage_version(), "2.1");
    assert!(lancelet_file::blob::is_blob_v2(
        ds.schema().field_with_name("img").unwrap()
    ));
    let fields: Vec<(String, i32, i32)> = ds
        .manifest()
        .fields
        .iter()
        .map(|f| (f.name.clone(), f.id, f.parent_id))
        .collect();
    assert_eq!(
        fields,
        vec![
            ("id".to_string(), 0, -1),
            ("img".to_string(), 1, -1),
            ("data".to_string(), 2, 1),
            ("uri".to_string(), 3, 1)
        ]
    );
    assert_eq!(ds.manifest().reader_feature_flags & 256, 256);
    assert_eq!(
        blobs(&loc).await,
        vec![
            b"blob-0".to_vec(),
            b"blob-1".to_vec(),
            b"blob-2".to_vec(),
            b"blob-5".to_vec()
        ]
    );
}
