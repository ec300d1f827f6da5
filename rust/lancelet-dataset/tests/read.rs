#![allow(clippy::unwrap_used, reason = "test code: a failed unwrap or panic is a failed test")]
//! Reads the golden pylance datasets in `tests/data/datasets`.

// The loader's window reads, here rather than in a test binary of their own (each binary
// links the whole dependency tree: CI time).
#[path = "loader/windows.rs"]
mod loader_windows;

use std::path::PathBuf;

use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use futures::executor::block_on;
use lancelet_dataset::scan::{Columns, Scan, ScanOptions};
use lancelet_dataset::{Dataset, VersionRef};

fn data(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/data/datasets")
        .join(name)
}

fn scan_ids(ds: &Dataset, opts: ScanOptions) -> Vec<i64> {
    let scan = block_on(Scan::plan(ds, opts)).unwrap();
    block_on(scan.collect())
        .unwrap()
        .iter()
        .flat_map(|b| {
            b.column_by_name("a")
                .unwrap()
                .as_primitive::<Int64Type>()
                .values()
                .to_vec()
        })
        .collect()
}

fn ids(ds: &Dataset) -> Vec<i64> {
    scan_ids(
        ds,
        ScanOptions {
            columns: Columns::Names(vec!["a".into()]),
            ..ScanOptions::default()
        },
    )
}

fn open(name: &str, v: Option<u64>) -> Dataset {
    block_on(Dataset::open(&data(name), v.map(VersionRef::Number))).unwrap()
}

#[test]
fn deleted_rows_are_skipped_at_every_version() {
    let v1 = open("pylance_v2_0_small", Some(1));
    assert_eq!(ids(&v1), (0..10).collect::<Vec<_>>());
    let latest = open("pylance_v2_0_small", None);
    assert_eq!(latest.version(), 3);
    assert_eq!(latest.count_rows(), 14);
    let expected: Vec<i64> = (3..10).chain(3..10).collect();
    assert_eq!(ids(&latest), expected);
}

#[test]
fn bitmap_deletions_are_skipped() {
    let ds = open("pylance_v2_0_bitmap_deletes", None);
    let expected: Vec<i64> = (0..20_000).filter(|a| a % 3 != 0).collect();
    assert_eq!(ids(&ds), expected);
}

#[test]
fn filters_limits_and_offsets_apply_after_deletions() {
    let ds = open("pylance_v2_0_bitmap_deletes", None);
    let all: Vec<i64> = (0..20_000).filter(|a| a % 3 != 0).collect();
    let filtered = |filter: &str, limit: Option<u64>, offset: u64| {
        scan_ids(
            &ds,
            ScanOptions {
                columns: Columns::Names(vec!["a".into()]),
                filter: Some(filter.into()),
                limit,
                offset,
                ..ScanOptions::default()
            },
        )
    };
    let want: Vec<i64> = all.iter().copied().filter(|a| a % 7 == 1).collect();
    assert_eq!(filtered("a % 7 = 1", None, 0), want);
    assert_eq!(filtered("a % 7 = 1", Some(5), 3), want[3..8].to_vec());
    let unfiltered = scan_ids(
        &ds,
        ScanOptions {
            columns: Columns::Names(vec!["a".into()]),
            limit: Some(10),
            offset: 1000,
            ..ScanOptions::default()
        },
    );
    assert_eq!(unfiltered, all[1000..1010].to_vec());
}

#[test]
fn take_uses_offsets_among_live_rows() {
    let ds = open("pylance_v2_0_bitmap_deletes", None);
    let all: Vec<i64> = (0..20_000).filter(|a| a % 3 != 0).collect();
    let idx = [5u64, 0, 13_000, 5, 77];
    let b = block_on(ds.take(&idx, Some(&["a".to_string()]))).unwrap();
    let got = b.column(0).as_primitive::<Int64Type>().values().to_vec();
    assert_eq!(got, idx.iter().map(|&i| all[i as usize]).collect::<Vec<_>>());
    assert!(block_on(ds.take(&[all.len() as u64], None)).is_err());
}

#[test]
fn unknown_things_are_errors() {
    assert!(block_on(Dataset::open(&data("does_not_exist"), None)).is_err());
    let ds = open("pylance_v2_0_small", None);
    assert!(ds.fragment(9).is_err());
    let bad = ScanOptions {
        columns: Columns::Names(vec!["nope".into()]),
        ..ScanOptions::default()
    };
    assert!(block_on(Scan::plan(&ds, bad)).is_err());
    let bad_filter = ScanOptions {
        filter: Some("nope > 1".into()),
        ..ScanOptions::default()
    };
    let err = block_on(Scan::plan(&ds, bad_filter)).unwrap_err().to_string();
    assert!(err.contains("nope"), "{err}");
}

#[test]
fn row_ranges_restrict_the_scan_and_still_skip_deleted_rows() {
    let ds = open("pylance_v2_0_bitmap_deletes", None);
    let frag = ds.fragments()[0].id;
    let got = scan_ids(
        &ds,
        ScanOptions {
            columns: Columns::Names(vec!["a".into()]),
            row_ranges: Some(vec![(frag, 10..20), (frag, 0..4)]),
            ..ScanOptions::default()
        },
    );
    let expected: Vec<i64> = (10..20).chain(0..4).filter(|a| a % 3 != 0).collect();
    assert_eq!(got, expected);
    let empty = scan_ids(
        &ds,
        ScanOptions {
            columns: Columns::Names(vec!["a".into()]),
            row_ranges: Some(Vec::new()),
            ..ScanOptions::default()
        },
    );
    assert!(empty.is_empty());
    let past_end = ScanOptions {
        row_ranges: Some(vec![(frag, 0..ds.fragments()[0].physical_rows + 1)]),
        ..ScanOptions::default()
    };
    assert!(block_on(Scan::plan(&ds, past_end)).is_err());
}

#[test]
fn scan_stats_count_what_each_scan_did() {
    let ds = open("pylance_v2_0_bitmap_deletes", None);
    let full = block_on(Scan::plan(&ds, ScanOptions::default())).unwrap();
    block_on(full.collect()).unwrap();
    let f = full.stats().snapshot();
    assert_eq!(f.rows_scanned, ds.count_rows());
    assert_eq!(f.rows_matched, ds.count_rows());
    assert!(f.bytes_read > 0 && f.iops > 0);
    let opts = ScanOptions {
        filter: Some("a < 10".into()),
        ..ScanOptions::default()
    };
    let narrow = block_on(Scan::plan(&ds, opts)).unwrap();
    block_on(narrow.collect()).unwrap();
    let n = narrow.stats().snapshot();
    assert_eq!(n.rows_matched, 6);
    assert_eq!(n.rows_scanned, ds.count_rows());
    // The first scan's counters did not move: each scan counts only its own reads.
    assert_eq!(full.stats().snapshot(), f);
}
