#![allow(clippy::unwrap_used)]
//! Reads the golden pylance datasets in `tests/data/datasets`.

use std::path::PathBuf;

use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use futures::executor::block_on;
use lancelet_dataset::Dataset;

fn data(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/data/datasets")
        .join(name)
}

fn ids(ds: &Dataset) -> Vec<i64> {
    let cols = vec!["a".to_string()];
    (0..ds.fragments().len())
        .flat_map(|i| {
            let b = block_on(ds.read_fragment(i, Some(&cols))).unwrap();
            b.column(0).as_primitive::<Int64Type>().values().to_vec()
        })
        .collect()
}

#[test]
fn deleted_rows_are_skipped_at_every_version() {
    let root = data("pylance_v2_0_small");
    let v1 = Dataset::open(&root, Some(1)).unwrap();
    assert_eq!(ids(&v1), (0..10).collect::<Vec<_>>());
    let latest = Dataset::open(&root, None).unwrap();
    assert_eq!(latest.version(), 3);
    assert_eq!(latest.count_rows(), 14);
    let expected: Vec<i64> = (3..10).chain(3..10).collect();
    assert_eq!(ids(&latest), expected);
}

#[test]
fn bitmap_deletions_are_skipped() {
    let ds = Dataset::open(&data("pylance_v2_0_bitmap_deletes"), None).unwrap();
    let expected: Vec<i64> = (0..20_000).filter(|a| a % 3 != 0).collect();
    assert_eq!(ids(&ds), expected);
}

#[test]
fn unknown_things_are_errors() {
    assert!(Dataset::open(&data("does_not_exist"), None).is_err());
    let ds = Dataset::open(&data("pylance_v2_0_small"), None).unwrap();
    assert!(block_on(ds.read_fragment(9, None)).is_err());
    assert!(ds.projected_schema(Some(&["nope".to_string()])).is_err());
}
