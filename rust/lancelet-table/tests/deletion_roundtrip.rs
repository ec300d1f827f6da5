#![allow(clippy::unwrap_used, reason = "test code: a failed unwrap or panic is a failed test")]
//! Deletion files round-trip for every size, on both sides of the bitmap threshold.

use lancelet_table::deletion::{decode_deletions, encode_deletions, BITMAP_THRESHOLD};
use lancelet_table::pb;
use lancelet_table::pb::deletion_file::DeletionFileType;
use proptest::prelude::*;

fn roundtrip(rows: &[u32]) -> (Vec<u32>, DeletionFileType) {
    let (bytes, kind) = encode_deletions(rows).unwrap();
    let d = pb::DeletionFile {
        file_type: kind as i32,
        num_deleted_rows: rows.len() as u64,
        ..Default::default()
    };
    (decode_deletions(&bytes, &d, "test").unwrap(), kind)
}

proptest! {
    #[test]
    fn small_and_large_sets_round_trip(mut rows in proptest::collection::btree_set(any::<u32>(), 0..12_000)
        .prop_map(|s| s.into_iter().collect::<Vec<u32>>())) {
        rows.sort_unstable();
        let (back, kind) = roundtrip(&rows);
        prop_assert_eq!(&back, &rows);
        let want = if rows.len() > BITMAP_THRESHOLD { DeletionFileType::Bitmap } else { DeletionFileType::ArrowArray };
        prop_assert_eq!(kind, want);
    }
}

#[test]
fn the_threshold_matches_lance() {
    let at: Vec<u32> = (0..BITMAP_THRESHOLD as u32).collect();
    assert_eq!(roundtrip(&at).1, DeletionFileType::ArrowArray);
    let over: Vec<u32> = (0..=BITMAP_THRESHOLD as u32).collect();
    assert_eq!(roundtrip(&over).1, DeletionFileType::Bitmap);
}

/// Inputs the fuzzer found that made arrow-ipc panic or try multi-terabyte allocations
/// (the first byte chose the file type, the second the claimed count).
#[test]
fn damaged_files_found_by_fuzzing_are_errors() {
    // Pinned with their exact errors in the repository's bad_data inventory (tests/bad_data.rs).
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/bad_data/read_deletions");
    let mut n = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let data = std::fs::read(entry.unwrap().path()).unwrap();
        let d = pb::DeletionFile {
            file_type: i32::from(data[0] & 1),
            num_deleted_rows: u64::from(data[1]),
            ..Default::default()
        };
        assert!(decode_deletions(&data[2..], &d, "fuzz").is_err());
        n += 1;
    }
    assert!(n >= 3);
}
