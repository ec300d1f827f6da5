#![allow(
    clippy::unwrap_used,
    clippy::panic,
    reason = "test code: a failed unwrap or panic is a failed test"
)]
//! A scan with `blob_binary` (pylance's `blob_handling="all_binary"`) returns blob columns
//! as their bytes, for a Rust caller of the dataset crate: blob v1 and v2 (inline, packed,
//! dedicated, empty and null values), after filter, order, offset and limit, through
//! `Scan::collect` and the `ScanBatches` stream; an unreadable blob is named.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{Int64Type, UInt64Type};
use arrow_array::{
    Array, ArrayRef, Int64Array, LargeBinaryArray, RecordBatch, RecordBatchIterator, RecordBatchReader, StringArray,
    StructArray,
};
use arrow_schema::{DataType, Field, Schema};
use lancelet_dataset::blob::write::BlobWriteOptions;
use lancelet_dataset::scan::order::ColumnOrdering;
use lancelet_dataset::scan::stream::{ScanBatches, Step};
use lancelet_dataset::scan::{Columns, Scan, ScanOptions};
use lancelet_dataset::write::{write_dataset, WriteMode, WriteParams};
use lancelet_dataset::{open_uri, Dataset};
use lancelet_file::FileVersion;

const ROWS: i64 = 40;

/// Row `i`'s blob: null every fifth row from 2, else 0, 3, 9 or 20 bytes (with the v2
/// thresholds below: inline, inline, packed, dedicated).
fn value(i: i64) -> Option<Vec<u8>> {
    if i % 5 == 2 {
        return None;
    }
    let len = [0, 3, 9, 20][(i % 4) as usize];
    Some((0..len).map(|k| (i * 7 + k) as u8).collect())
}

fn reader(b: RecordBatch) -> Box<dyn RecordBatchReader + Send> {
    let schema = b.schema();
    Box::new(RecordBatchIterator::new(vec![Ok(b)], schema))
}

fn ids() -> ArrayRef {
    Arc::new(Int64Array::from((0..ROWS).collect::<Vec<_>>()))
}

fn values() -> LargeBinaryArray {
    (0..ROWS).map(value).collect()
}

fn v1_batch() -> RecordBatch {
    let blob = Field::new("img", DataType::LargeBinary, true)
        .with_metadata(HashMap::from([("lance-encoding:blob".to_string(), "true".to_string())]));
    let schema = Arc::new(Schema::new(vec![Field::new("id", DataType::Int64, true), blob]));
    RecordBatch::try_new(schema, vec![ids(), Arc::new(values())]).unwrap()
}

/// A blob v2 column (`struct<data, uri>` with the extension name) of `values` or, where
/// `uris` has one, an external URI.
fn v2_column(values: LargeBinaryArray, uris: StringArray) -> (Field, ArrayRef) {
    let parts = vec![
        Field::new("data", DataType::LargeBinary, true),
        Field::new("uri", DataType::Utf8, true),
    ];
    let metadata = HashMap::from([
        ("ARROW:extension:name".to_string(), "lance.blob.v2".to_string()),
        ("lance-encoding:blob-inline-size-threshold".to_string(), "4".to_string()),
        (
            "lance-encoding:blob-dedicated-size-threshold".to_string(),
            "16".to_string(),
        ),
    ]);
    let nulls = arrow_buffer::NullBuffer::from(
        (0..values.len())
            .map(|i| values.is_valid(i) || uris.is_valid(i))
            .collect::<Vec<_>>(),
    );
    let array = StructArray::try_new(
        parts.clone().into(),
        vec![Arc::new(values), Arc::new(uris)],
        Some(nulls),
    )
    .unwrap();
    let field = Field::new("b", DataType::Struct(parts.into()), true).with_metadata(metadata);
    (field, Arc::new(array))
}

fn v2_batch() -> RecordBatch {
    let (field, column) = v2_column(values(), StringArray::from(vec![None::<&str>; ROWS as usize]));
    let schema = Arc::new(Schema::new(vec![Field::new("id", DataType::Int64, true), field]));
    RecordBatch::try_new(schema, vec![ids(), column]).unwrap()
}

async fn write(dir: &tempfile::TempDir, name: &str, batch: RecordBatch, version: FileVersion) -> Dataset {
    let loc = open_uri(dir.path().join(name).to_str().unwrap(), &HashMap::new()).unwrap();
    let params = WriteParams {
        mode: WriteMode::Create,
        file_version: version,
        max_rows_per_file: 16,
        blob: BlobWriteOptions {
            allow_external_outside_bases: true,
            ..BlobWriteOptions::default()
        },
        ..WriteParams::default()
    };
    write_dataset(&loc, reader(batch), params).await.unwrap()
}

/// The `id` column and the blob column `blob` of `batches`, as the bytes they hold.
fn rows(batches: &[RecordBatch], blob: &str) -> Vec<(i64, Option<Vec<u8>>)> {
    let mut out = Vec::new();
    for b in batches {
        let id = b.column_by_name("id").unwrap().as_primitive::<Int64Type>();
        let bytes = b.column_by_name(blob).unwrap().as_binary::<i64>();
        for i in 0..b.num_rows() {
            out.push((id.value(i), bytes.is_valid(i).then(|| bytes.value(i).to_vec())));
        }
    }
    out
}

fn expected(ids: impl IntoIterator<Item = i64>) -> Vec<(i64, Option<Vec<u8>>)> {
    ids.into_iter().map(|i| (i, value(i))).collect()
}

/// The batches of a scan through `ScanBatches`, as the Python and Spark glue read them.
async fn stream(ds: &Dataset, opts: ScanOptions) -> Vec<RecordBatch> {
    let scan = Arc::new(Scan::plan(ds, opts).await.unwrap());
    let schema = scan.schema().clone();
    let mut batches = ScanBatches::new(scan, || Ok(tokio::runtime::Handle::current()));
    let mut out = Vec::new();
    loop {
        match batches.step() {
            Step::Batch(b) => {
                assert_eq!(b.schema(), schema);
                out.push(b);
            }
            Step::Wait(task) => batches.accept(task.await.unwrap().unwrap()).unwrap(),
            Step::Failed(e) => panic!("{e}"),
            Step::Done => return out,
        }
    }
}

async fn check(ds: &Dataset, blob: &str) {
    // Every row: descriptors become bytes (null and empty blobs kept apart), no `_rowaddr`.
    let all = ScanOptions {
        blob_binary: true,
        ..ScanOptions::default()
    };
    let scan = Scan::plan(ds, all.clone()).await.unwrap();
    let field = scan.schema().field_with_name(blob).unwrap().clone();
    assert_eq!(field.data_type(), &DataType::LargeBinary);
    assert_eq!(
        field.metadata().get("lance-encoding:blob").map(String::as_str),
        Some("true")
    );
    assert!(!field.metadata().contains_key("lance-encoding:packed"));
    let names: Vec<_> = scan.schema().fields().iter().map(|f| f.name().clone()).collect();
    assert_eq!(names, vec!["id".to_string(), blob.to_string()]);
    let got = scan.collect().await.unwrap();
    assert!(got.iter().all(|b| b.schema() == *scan.schema()));
    assert_eq!(rows(&got, blob), expected((0..ROWS).filter(|i| *i != 11)));
    assert_eq!(
        rows(&stream(ds, all).await, blob),
        expected((0..ROWS).filter(|i| *i != 11))
    );

    // A filter, an offset and a limit apply before the bytes are read.
    let filtered = ScanOptions {
        filter: Some("id % 3 <> 1".into()),
        offset: 2,
        limit: Some(9),
        batch_size: 4,
        blob_binary: true,
        ..ScanOptions::default()
    };
    let want = expected((0..ROWS).filter(|i| i % 3 != 1 && *i != 11).skip(2).take(9));
    assert_eq!(want.len(), 9);
    let scan = Scan::plan(ds, filtered.clone()).await.unwrap();
    assert_eq!(rows(&scan.collect().await.unwrap(), blob), want);
    assert_eq!(rows(&stream(ds, filtered).await, blob), want);

    // A limit without a filter, blob column first, the row addresses asked for.
    let limited = ScanOptions {
        columns: Columns::Names(vec![blob.to_string(), "id".into()]),
        limit: Some(20),
        with_row_address: true,
        blob_binary: true,
        ..ScanOptions::default()
    };
    let got = stream(ds, limited).await;
    assert_eq!(rows(&got, blob), expected((0..ROWS).filter(|i| *i != 11).take(20)));
    let names: Vec<_> = got[0].schema().fields().iter().map(|f| f.name().clone()).collect();
    assert_eq!(names, vec![blob.to_string(), "id".into(), "_rowaddr".into()]);
    let addr = got[0].column(2).as_primitive::<UInt64Type>();
    assert_eq!(addr.value(0), 0);
    assert_eq!(got.iter().map(|b| b.num_rows()).sum::<usize>(), 20);

    // Sorted: offset and limit apply to the sorted rows.
    let ordered = ScanOptions {
        order_by: vec![ColumnOrdering {
            column: "id".into(),
            ascending: false,
            nulls_first: false,
        }],
        offset: 1,
        limit: Some(6),
        blob_binary: true,
        ..ScanOptions::default()
    };
    let want = expected((0..ROWS).rev().filter(|i| *i != 11).skip(1).take(6));
    assert_eq!(rows(&stream(ds, ordered).await, blob), want);

    // Without the option, the same scan returns descriptors.
    let plain = Scan::plan(ds, ScanOptions::default()).await.unwrap();
    assert!(lancelet_file::blob::is_descriptor(
        plain.schema().field_with_name(blob).unwrap()
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_blob_binary_scan_returns_blob_v1_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let ds = write(&dir, "v1.lance", v1_batch(), FileVersion::V2_1).await;
    let (ds, _) = ds.delete("id = 11").await.unwrap();
    check(&ds, "img").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_blob_binary_scan_returns_blob_v2_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let ds = write(&dir, "v2.lance", v2_batch(), FileVersion::V2_2).await;
    let (ds, _) = ds.delete("id = 11").await.unwrap();
    check(&ds, "b").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreadable_blob_is_named_by_column_row_and_uri() {
    let dir = tempfile::tempdir().unwrap();
    let external = dir.path().join("clip.bin");
    std::fs::write(&external, b"0123456789").unwrap();
    let uri = format!("file://{}", external.display());
    let (field, column) = v2_column(
        LargeBinaryArray::from(vec![Some(&b"inline"[..]), None, None]),
        StringArray::from(vec![None, Some(uri.as_str()), None]),
    );
    let schema = Arc::new(Schema::new(vec![Field::new("id", DataType::Int64, true), field]));
    let batch = RecordBatch::try_new(schema, vec![Arc::new(Int64Array::from(vec![0, 1, 2])), column]).unwrap();
    let ds = write(&dir, "refs.lance", batch, FileVersion::V2_2)
        .await
        .allow_external_blobs_outside_bases(true);
    let opts = ScanOptions {
        blob_binary: true,
        ..ScanOptions::default()
    };
    let got = Scan::plan(&ds, opts.clone()).await.unwrap().collect().await.unwrap();
    assert_eq!(
        rows(&got, "b"),
        vec![
            (0, Some(b"inline".to_vec())),
            (1, Some(b"0123456789".to_vec())),
            (2, None)
        ]
    );
    std::fs::remove_file(&external).unwrap();
    let err = Scan::plan(&ds, opts).await.unwrap().collect().await.unwrap_err();
    let text = err.to_string();
    assert_eq!(err.kind(), lancelet_io::ErrorKind::NotFound, "{text}");
    assert!(text.contains("column 'b'"), "{text}");
    assert!(text.contains("row address 1"), "{text}");
    assert!(text.contains(&uri), "{text}");
}
