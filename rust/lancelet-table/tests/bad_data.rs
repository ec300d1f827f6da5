//! The `bad_data` inventory (`tests/data/bad_data/inventory.json` at the repository root):
//! inputs the fuzzers found crashing, each pinned with the exact error it must now give.
//! Each entry is fed to the same code its fuzz target (`fuzz/fuzz_targets/<target>.rs`)
//! drives, in the same way; this crate checks the targets that read table files.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::PathBuf;

use lancelet_table::pb;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/bad_data")
}

/// What the `read_deletions` fuzz target does with its input.
fn read_deletions(data: &[u8]) -> lancelet_table::Result<Vec<u32>> {
    let d = pb::DeletionFile {
        file_type: i32::from(data[0] & 1),
        num_deleted_rows: u64::from(data[1]),
        ..Default::default()
    };
    lancelet_table::deletion::decode_deletions(&data[2..], &d, "fuzz")
}

#[test]
fn every_pinned_fuzz_crash_gives_its_exact_error() {
    let text = std::fs::read_to_string(root().join("inventory.json")).unwrap();
    let entries: Vec<serde_json::Value> = serde_json::from_str(&text).unwrap();
    let (mut checked, mut wrong) = (0, Vec::new());
    for e in &entries {
        let (file, target, want) = (
            e["file"].as_str().unwrap(),
            e["target"].as_str().unwrap(),
            e["error"].as_str().unwrap(),
        );
        let data = std::fs::read(root().join(file)).unwrap();
        let got = match target {
            "read_deletions" => read_deletions(&data).map(|_| ()),
            _ => continue, // checked by the crate that owns the target
        };
        match got {
            Err(err) if err.to_string() == want => {}
            Err(err) => wrong.push(format!(
                "{file}: gives {:?}, the inventory says {want:?}",
                err.to_string()
            )),
            Ok(()) => wrong.push(format!("{file} ({target}) was accepted; it must fail with {want:?}")),
        }
        checked += 1;
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    assert!(checked >= 3, "only {checked} inventory entries checked");
}
