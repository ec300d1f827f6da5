#![allow(clippy::unwrap_used, reason = "test code: a failed unwrap or panic is a failed test")]
//! Logic that used to live in the Python glue: `Dataset::count_rows_where` (counts from
//! metadata, or a filtered scan fanned out over its tasks) and `Dataset::update_config`
//! (the UpdateConfig transaction).

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::{Int64Array, RecordBatch, RecordBatchIterator};
use arrow_schema::{DataType, Field, Schema};
use lancelet_dataset::write::{write_dataset, WriteParams};
use lancelet_dataset::{open_uri, Dataset, Error, Location};

/// A dataset of `x = 0..n` in fragments of `per_file` rows.
async fn create(dir: &tempfile::TempDir, n: i64, per_file: u64) -> (Location, Dataset) {
    let schema = Arc::new(Schema::new(vec![Field::new("x", DataType::Int64, true)]));
    let batch = RecordBatch::try_new(schema.clone(), vec![Arc::new(Int64Array::from_iter_values(0..n))]).unwrap();
    let loc = open_uri(dir.path().join("t.lance").to_str().unwrap(), &HashMap::new()).unwrap();
    let params = WriteParams {
        max_rows_per_file: per_file,
        ..WriteParams::default()
    };
    let reader = Box::new(RecordBatchIterator::new(vec![Ok(batch)], schema));
    let ds = write_dataset(&loc, reader, params).await.unwrap();
    (loc, ds)
}

#[tokio::test]
async fn count_rows_without_filter_uses_live_rows() {
    let dir = tempfile::tempdir().unwrap();
    let (_, ds) = create(&dir, 100, 30).await;
    assert_eq!(ds.fragments().len(), 4);
    assert_eq!(ds.count_rows_where(None, None).await.unwrap(), 100);
    // A blank filter is a mistake, not "every row" (as in pylance).
    for blank in ["", "  ", "\n"] {
        assert!(matches!(
            ds.count_rows_where(Some(blank), None).await,
            Err(Error::InvalidArgument(_))
        ));
    }
    let ids: Vec<u64> = ds.fragments().iter().map(|f| f.id).collect();
    assert_eq!(ds.count_rows_where(None, Some(&ids[..2])).await.unwrap(), 60);
    assert_eq!(ds.count_rows_where(None, Some(&ids[3..])).await.unwrap(), 10);
    assert_eq!(ds.count_rows_where(None, Some(&[])).await.unwrap(), 0);
}

#[tokio::test]
async fn count_rows_with_filter_fans_out_over_fragments() {
    let dir = tempfile::tempdir().unwrap();
    let (_, ds) = create(&dir, 100, 30).await;
    assert_eq!(ds.count_rows_where(Some("x >= 50"), None).await.unwrap(), 50);
    assert_eq!(ds.count_rows_where(Some("x % 10 = 0"), None).await.unwrap(), 10);
    assert_eq!(ds.count_rows_where(Some("x < 0"), None).await.unwrap(), 0);
    let ids: Vec<u64> = ds.fragments().iter().map(|f| f.id).collect();
    // Fragment 1 holds 30..60.
    assert_eq!(
        ds.count_rows_where(Some("x >= 50"), Some(&ids[1..2])).await.unwrap(),
        10
    );
    assert_eq!(
        ds.count_rows_where(Some("x >= 50"), Some(&[ids[0], ids[3]]))
            .await
            .unwrap(),
        10
    );
}

#[tokio::test]
async fn count_rows_skips_deleted_rows() {
    let dir = tempfile::tempdir().unwrap();
    let (loc, ds) = create(&dir, 100, 30).await;
    let (ds, _) = ds.delete("x % 2 = 1 OR x >= 90").await.unwrap();
    assert_eq!(ds.count_rows_where(None, None).await.unwrap(), 45);
    assert_eq!(ds.count_rows_where(Some("x < 30"), None).await.unwrap(), 15);
    let ids: Vec<u64> = ds.fragments().iter().map(|f| f.id).collect();
    assert_eq!(ds.count_rows_where(None, Some(&ids[..1])).await.unwrap(), 15);
    assert_eq!(
        ds.count_rows_where(Some("x >= 40"), Some(&ids[1..2])).await.unwrap(),
        10
    );
    // The same counts after reopening.
    let again = Dataset::open_at(&loc, None).await.unwrap();
    assert_eq!(again.count_rows_where(None, None).await.unwrap(), 45);
    assert_eq!(again.count_rows_where(Some("x >= 80"), None).await.unwrap(), 5);
}

#[tokio::test]
async fn count_rows_of_unknown_fragment_is_invalid() {
    let dir = tempfile::tempdir().unwrap();
    let (_, ds) = create(&dir, 10, 5).await;
    let err = ds.count_rows_where(None, Some(&[99])).await.unwrap_err();
    assert!(matches!(err, Error::InvalidArgument(_)), "{err:?}");
    assert!(ds.count_rows_where(Some("x > 1"), Some(&[99])).await.is_err());
    assert!(ds.count_rows_where(Some("no_such_column > 1"), None).await.is_err());
}

fn config(ds: &Dataset) -> Vec<(String, String)> {
    let mut v: Vec<_> = ds.manifest().config.clone().into_iter().collect();
    v.sort();
    v
}

fn pairs(kv: &[(&str, &str)]) -> Vec<(String, String)> {
    kv.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

#[tokio::test]
async fn update_config_sets_and_unsets_keys_visible_after_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let (loc, ds) = create(&dir, 10, 5).await;
    let v0 = ds.version();
    let ds = ds
        .update_config(
            vec![("a".into(), Some("1".into())), ("b".into(), Some("2".into()))],
            false,
        )
        .await
        .unwrap();
    assert_eq!(ds.version(), v0 + 1);
    assert_eq!(config(&ds), pairs(&[("a", "1"), ("b", "2")]));

    // Unset one key, change another.
    let ds = ds
        .update_config(vec![("a".into(), None), ("b".into(), Some("3".into()))], false)
        .await
        .unwrap();
    let reopened = Dataset::open_at(&loc, None).await.unwrap();
    assert_eq!(reopened.version(), v0 + 2);
    assert_eq!(config(&reopened), pairs(&[("b", "3")]));
    // Rows are untouched.
    assert_eq!(reopened.count_rows(), 10);

    // `replace` drops every other key.
    ds.update_config(vec![("c".into(), Some("4".into()))], true)
        .await
        .unwrap();
    let reopened = Dataset::open_at(&loc, None).await.unwrap();
    assert_eq!(config(&reopened), pairs(&[("c", "4")]));
    // Unsetting a missing key is no error.
    let ds = reopened.update_config(vec![("zz".into(), None)], false).await.unwrap();
    assert_eq!(config(&ds), pairs(&[("c", "4")]));
}

/// `lancelet_file::uri_writer::UriFileWriter` (the Python `FileWriter`'s logic): the file
/// appears only when finished, and an aborted or dropped writer leaves nothing behind.
#[tokio::test]
async fn uri_file_writer_appears_only_when_finished() {
    use lancelet_file::uri_writer::UriFileWriter;
    let dir = tempfile::tempdir().unwrap();
    let schema = Arc::new(Schema::new(vec![Field::new("x", DataType::Int64, true)]));
    let batch = RecordBatch::try_new(schema.clone(), vec![Arc::new(Int64Array::from_iter_values(0..10))]).unwrap();
    let listing = || std::fs::read_dir(dir.path()).unwrap().count();
    let path = dir.path().join("a.lance");
    let uri = path.to_str().unwrap();

    let mut w = UriFileWriter::create(uri, &HashMap::new(), schema.clone(), Default::default()).unwrap();
    w.write_batch(&batch).unwrap();
    w.add_schema_metadata("k".into(), "v".into()).unwrap();
    assert!(!path.exists());
    let (rows, size) = w.finish().await.unwrap().unwrap();
    assert_eq!(rows, 10);
    assert_eq!(size, std::fs::metadata(&path).unwrap().len());
    assert!(w.is_closed());
    assert_eq!(w.finish().await.unwrap(), None);
    let err = w.write_batch(&batch).unwrap_err();
    assert!(err.to_string().contains("closed"), "{err}");
    assert_eq!(listing(), 1);
    let io = lancelet_io::open_file(uri, &HashMap::new()).await.unwrap();
    let reader = lancelet_file::FileReader::open(io).await.unwrap();
    assert_eq!(reader.num_rows(), 10);

    let other = dir.path().join("b.lance");
    let mut w = UriFileWriter::create(
        other.to_str().unwrap(),
        &HashMap::new(),
        schema.clone(),
        Default::default(),
    )
    .unwrap();
    w.write_batch(&batch).unwrap();
    w.abort();
    assert!(w.is_closed());
    drop(UriFileWriter::create(other.to_str().unwrap(), &HashMap::new(), schema, Default::default()).unwrap());
    assert!(!other.exists());
    assert_eq!(listing(), 1);
}
