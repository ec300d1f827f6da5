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

/// The checksum lancelet records for a deletion file catches every flipped bit of both
/// kinds of file, including flips the decoder alone would read as other rows.
#[test]
fn the_recorded_checksum_catches_every_flipped_bit() {
    use lancelet_table::deletion::{checksum, verify_deletions};
    for rows in [
        vec![0u32, 3, 4, 90, 1000],
        (0..=BITMAP_THRESHOLD as u32).map(|r| r * 3).collect(),
    ] {
        let (bytes, kind) = encode_deletions(&rows).unwrap();
        let d = pb::DeletionFile {
            file_type: kind as i32,
            num_deleted_rows: rows.len() as u64,
            lancelet_crc32c: Some(checksum(&bytes)),
            ..Default::default()
        };
        verify_deletions(&bytes, &d, "ok").unwrap();
        let mut silently_wrong = 0;
        for pos in 0..bytes.len() {
            let mut b = bytes.clone();
            b[pos] ^= 1 << (pos % 8);
            assert!(verify_deletions(&b, &d, "damaged").is_err(), "byte {pos} of {kind:?}");
            if decode_deletions(&b, &d, "damaged").is_ok_and(|got| got != rows) {
                silently_wrong += 1;
            }
        }
        // Without the checksum, some of those flips decode as other rows.
        assert!(silently_wrong > 0, "{kind:?}");
        // A file without a recorded checksum (pylance's) is not checked.
        let unrecorded = pb::DeletionFile {
            lancelet_crc32c: None,
            ..d
        };
        verify_deletions(&bytes[1..], &unrecorded, "pylance's").unwrap();
    }
}
