#![allow(clippy::unwrap_used, reason = "test code: a failed unwrap or panic is a failed test")]
//! Reads the manifests of a small dataset written by pylance 14.0.2
//! (`tests/data/datasets/pylance_v2_0_small`: two appends of 10 rows with
//! `data_storage_version="2.0"`, then `delete("a < 3")`).

use std::path::PathBuf;

use lancelet_io::LocalStore;
use lancelet_table::indices::decode_index_section;
use lancelet_table::manifest::{
    decode_manifest, decode_transaction_section, encode_manifest, encode_manifest_file, live_rows,
};
use lancelet_table::naming::ManifestNaming;
use lancelet_table::versions::VersionEntry;

fn list_versions(root: &std::path::Path) -> lancelet_table::Result<Vec<VersionEntry>> {
    futures::executor::block_on(lancelet_table::versions::list_versions(&LocalStore::new(root)))
}

fn read_version(root: &std::path::Path, v: Option<u64>) -> lancelet_table::Result<lancelet_table::pb::Manifest> {
    futures::executor::block_on(lancelet_table::versions::read_version(&LocalStore::new(root), v)).map(|(m, _)| m)
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/datasets/pylance_v2_0_small")
}

#[test]
fn lists_the_three_versions_with_v2_names() {
    let v = list_versions(&root()).unwrap();
    assert_eq!(v.iter().map(|e| e.version).collect::<Vec<_>>(), vec![1, 2, 3]);
    assert!(v.iter().all(|e| e.naming == ManifestNaming::V2));
}

#[test]
fn manifests_describe_fragments_files_and_deletions() {
    let m1 = read_version(&root(), Some(1)).unwrap();
    assert_eq!(m1.fragments.len(), 1);
    assert_eq!(
        m1.fields.iter().map(|f| f.name.as_str()).collect::<Vec<_>>(),
        vec!["a", "s"]
    );
    let f = &m1.fragments[0];
    assert_eq!(f.physical_rows, 10);
    // The manifest records the data file version as 2.0 even though the file's own
    // footer says 0.3.
    assert_eq!((f.files[0].file_major_version, f.files[0].file_minor_version), (2, 0));
    assert!(f.files[0].path.ends_with(".lance"));

    let latest = read_version(&root(), None).unwrap();
    assert_eq!(latest.version, 3);
    assert_eq!(latest.fragments.len(), 2);
    assert_eq!(latest.max_fragment_id, Some(1));
    let live: u64 = latest.fragments.iter().map(live_rows).sum();
    // Both appends wrote a = 0..9, so `a < 3` deleted 3 rows from each fragment.
    assert_eq!(live, 14);
    for f in &latest.fragments {
        let del = f.deletion_file.as_ref().unwrap();
        assert_eq!((del.num_deleted_rows, del.read_version), (3, 2));
    }
}

#[test]
fn manifests_round_trip_through_our_container() {
    for e in list_versions(&root()).unwrap() {
        let bytes = std::fs::read(root().join(&e.path)).unwrap();
        let m = decode_manifest(&bytes, &e.path).unwrap();
        // pylance's manifests carry no checksums; ours carry both.
        assert_eq!((m.lancelet_crc32c, m.lancelet_sections_crc32c), (None, None));
        let mut ours = decode_manifest(&encode_manifest(&m), "ours").unwrap();
        assert!(ours.lancelet_crc32c.is_some() && ours.lancelet_sections_crc32c.is_some());
        (ours.lancelet_crc32c, ours.lancelet_sections_crc32c) = (None, None);
        assert_eq!(ours, m);
    }
}

/// Every byte of a manifest file lancelet writes is checked: a flipped bit anywhere (in
/// the index section, the transaction, the manifest or its footer) is refused, never read
/// as another manifest. (A flip in the tags of the checksum fields may hide both fields;
/// the manifest then reads as the same manifest, unchecked.)
#[test]
fn every_damaged_byte_of_our_manifests_is_refused() {
    for e in list_versions(&root()).unwrap() {
        let bytes = std::fs::read(root().join(&e.path)).unwrap();
        let m = decode_manifest(&bytes, &e.path).unwrap();
        let txn = decode_transaction_section(&bytes, &m).unwrap_or_default();
        let indices = decode_index_section(&bytes, &m, &e.path).unwrap();
        let ours = encode_manifest_file(&m, &txn, &indices);
        let decoded = decode_manifest(&ours, "ours").unwrap();
        assert_eq!(decoded.fragments, m.fragments);
        // Only the footer's format version is not checked (other writers write others); the
        // rest of the footer is checked by its structure, every other bit by a checksum.
        let format_version = ours.len() - 8..ours.len() - 4;
        for pos in 0..ours.len() {
            for bit in [0, 3, 7] {
                let mut b = ours.clone();
                b[pos] ^= 1 << bit;
                match decode_manifest(&b, "damaged") {
                    Err(_) => {}
                    Ok(_) if format_version.contains(&pos) => {}
                    Ok(mut got) => {
                        (got.lancelet_crc32c, got.lancelet_sections_crc32c) = (None, None);
                        let mut want = decoded.clone();
                        (want.lancelet_crc32c, want.lancelet_sections_crc32c) = (None, None);
                        assert_eq!(
                            got,
                            want,
                            "byte {pos} bit {bit} of {} read as another manifest",
                            ours.len()
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn damaged_manifests_are_corrupt_not_panics() {
    let e = &list_versions(&root()).unwrap()[0];
    let bytes = std::fs::read(root().join(&e.path)).unwrap();
    for len in 0..bytes.len() {
        assert!(decode_manifest(&bytes[..len], "t").is_err(), "truncated to {len}");
    }
    for pos in 0..bytes.len() {
        let mut b = bytes.clone();
        b[pos] ^= 0xFF;
        let _ = decode_manifest(&b, "t");
    }
}

#[test]
fn a_missing_version_is_reported() {
    assert!(matches!(
        read_version(&root(), Some(99)),
        Err(lancelet_table::Error::VersionNotFound { version: 99, .. })
    ));
}

fn read_deletions(root: &std::path::Path, frag: &lancelet_table::pb::DataFragment) -> Vec<u32> {
    use lancelet_table::deletion::{decode_deletions, deletion_file_path};
    let d = frag.deletion_file.as_ref().unwrap();
    let path = root.join(deletion_file_path(frag.id, d));
    let bytes = std::fs::read(&path).unwrap();
    decode_deletions(&bytes, d, &path.display().to_string()).unwrap()
}

#[test]
fn arrow_deletion_files_list_the_deleted_offsets() {
    let latest = read_version(&root(), None).unwrap();
    for f in &latest.fragments {
        assert_eq!(read_deletions(&root(), f), vec![0, 1, 2]);
    }
}

#[test]
fn bitmap_deletion_files_list_the_deleted_offsets() {
    let root = root().join("../pylance_v2_0_bitmap_deletes");
    let latest = read_version(&root, None).unwrap();
    let f = &latest.fragments[0];
    let rows = read_deletions(&root, f);
    let expected: Vec<u32> = (0..20_000).filter(|a| a % 3 == 0).collect();
    assert_eq!(rows, expected);
    assert_eq!(live_rows(f), 13_333);
}

#[test]
fn damaged_deletion_files_are_corrupt() {
    use lancelet_table::deletion::{decode_deletions, deletion_file_path};
    let latest = read_version(&root(), None).unwrap();
    let f = &latest.fragments[0];
    let d = f.deletion_file.as_ref().unwrap();
    let bytes = std::fs::read(root().join(deletion_file_path(f.id, d))).unwrap();
    for len in 0..bytes.len() {
        assert!(decode_deletions(&bytes[..len], d, "t").is_err(), "truncated to {len}");
    }
    for pos in 0..bytes.len() {
        let mut b = bytes.clone();
        b[pos] ^= 0xFF;
        let _ = decode_deletions(&b, d, "t");
    }
}

#[test]
fn damaged_deletion_bitmaps_are_corrupt() {
    use lancelet_table::deletion::{decode_deletions, deletion_file_path};
    let root = root().join("../pylance_v2_0_bitmap_deletes");
    let f = read_version(&root, None).unwrap().fragments.remove(0);
    let d = f.deletion_file.as_ref().unwrap();
    let bytes = std::fs::read(root.join(deletion_file_path(f.id, d))).unwrap();
    for len in (0..bytes.len()).step_by(7) {
        assert!(decode_deletions(&bytes[..len], d, "t").is_err(), "truncated to {len}");
    }
    for pos in (0..bytes.len()).step_by(3) {
        let mut b = bytes.clone();
        b[pos] ^= 0xFF;
        let _ = decode_deletions(&b, d, "t");
    }
}
