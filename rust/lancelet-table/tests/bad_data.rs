//! The `bad_data` inventory (`tests/data/bad_data/inventory.json` at the repository root):
//! inputs the fuzzers found crashing, each pinned with the exact error it must now give.
//! Each entry is fed to the same code its fuzz target (`fuzz/fuzz_targets/<target>.rs`)
//! drives, in the same way; this crate checks the targets that read table files.
//!
//! The pinned inputs are minimized: `shrink_pinned_inputs` (ignored; run it with
//! `LANCELET_SHRINK_BAD_DATA=1 cargo test -p lancelet-table --test table bad_data -- --ignored`)
//! deletes bytes while the input still gives its exact error, renames the file after the
//! SHA-1 of what is left and rewrites the inventory.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a failed unwrap or panic is a failed test"
)]

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

/// The error `target` gives for `data`: `None` when it accepts the input (or, like the
/// fuzz target, ignores it as too short), `Some(None)` for a target another crate checks.
fn error_of(target: &str, data: &[u8]) -> Option<Option<String>> {
    match target {
        "read_deletions" if data.len() < 2 => Some(None),
        "read_deletions" => Some(read_deletions(data).err().map(|e| e.to_string())),
        _ => None, // checked by the crate that owns the target
    }
}

struct Entry {
    file: String,
    target: String,
    found: String,
    error: String,
}

fn inventory() -> Vec<Entry> {
    let text = std::fs::read_to_string(root().join("inventory.json")).unwrap();
    let entries: Vec<serde_json::Value> = serde_json::from_str(&text).unwrap();
    let field = |e: &serde_json::Value, k: &str| {
        e[k].as_str()
            .unwrap_or_else(|| panic!("{k} missing in {e}"))
            .to_string()
    };
    entries
        .iter()
        .map(|e| Entry {
            file: field(e, "file"),
            target: field(e, "target"),
            found: field(e, "found"),
            error: field(e, "error"),
        })
        .collect()
}

#[test]
fn every_pinned_fuzz_crash_gives_its_exact_error() {
    let (mut checked, mut wrong) = (0, Vec::new());
    for e in inventory() {
        let data = std::fs::read(root().join(&e.file)).unwrap();
        match error_of(&e.target, &data) {
            None => continue,
            Some(Some(got)) if got == e.error => {}
            Some(Some(got)) => wrong.push(format!("{}: gives {got:?}, the inventory says {:?}", e.file, e.error)),
            Some(None) => wrong.push(format!(
                "{} ({}) was accepted; it must fail with {:?}",
                e.file, e.target, e.error
            )),
        }
        checked += 1;
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    assert!(checked >= 3, "only {checked} inventory entries checked");
}

/// Every pinned input is minimal: without any one of its bytes it no longer gives its
/// error (so it holds nothing but what reaches the failure), and it is named
/// `crash-<SHA-1 of its bytes>`.
#[test]
fn every_pinned_input_is_minimal_and_named_by_its_hash() {
    let (mut checked, mut wrong) = (0, Vec::new());
    for e in inventory() {
        let data = std::fs::read(root().join(&e.file)).unwrap();
        if error_of(&e.target, &data).is_none() {
            continue;
        }
        let name = format!("crash-{}", sha1_smol::Sha1::from(&data).digest());
        if !e.file.ends_with(&format!("/{name}")) {
            wrong.push(format!("{} holds bytes named {name}", e.file));
        }
        for i in 0..data.len() {
            let mut less = data.clone();
            less.remove(i);
            if error_of(&e.target, &less) == Some(Some(e.error.clone())) {
                wrong.push(format!(
                    "{} is not minimal: it gives the same error without byte {i} of {} (shrink it)",
                    e.file,
                    data.len()
                ));
                break;
            }
        }
        checked += 1;
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    assert!(checked >= 1, "no inventory entry checked");
}

/// Deletes bytes from `data` while `same` holds: chunks of halving size, then single bytes,
/// until no single byte can go.
fn shrink(mut data: Vec<u8>, same: impl Fn(&[u8]) -> bool) -> Vec<u8> {
    let mut chunk = data.len().div_ceil(2).max(1);
    loop {
        let mut removed = false;
        let mut at = 0;
        while at < data.len() {
            let end = (at + chunk).min(data.len());
            let mut less = data[..at].to_vec();
            less.extend_from_slice(&data[end..]);
            if same(&less) {
                data = less;
                removed = true;
            } else {
                at += chunk;
            }
        }
        if chunk == 1 && !removed {
            return data;
        }
        if !removed {
            chunk = chunk.div_ceil(2);
        }
    }
}

#[test]
fn shrinking_keeps_what_the_check_needs() {
    // Keeps the inputs holding both an `a` and a `z`: two bytes are left, in order.
    let same = |d: &[u8]| d.contains(&b'a') && d.contains(&b'z');
    assert_eq!(shrink(b"xxaxxxxxxzxx".to_vec(), same), b"az");
    assert_eq!(shrink(b"z".to_vec(), |d: &[u8]| d == b"z"), b"z");
}

/// Minimizes every pinned input this crate checks and rewrites the inventory (see the
/// crate docs above). Entries that shrink to the same bytes become one.
#[test]
#[ignore = "rewrites tests/data/bad_data; run by hand with LANCELET_SHRINK_BAD_DATA=1"]
fn shrink_pinned_inputs() {
    if std::env::var_os("LANCELET_SHRINK_BAD_DATA").is_none() {
        return;
    }
    std::panic::set_hook(Box::new(|_| {})); // the decoders catch arrow-ipc's panics: keep quiet
    let mut out: Vec<Entry> = Vec::new();
    for e in inventory() {
        let path = root().join(&e.file);
        let data = std::fs::read(&path).unwrap();
        if error_of(&e.target, &data).is_none() {
            out.push(e); // another crate's target: left as it is
            continue;
        }
        let want = Some(Some(e.error.clone()));
        assert_eq!(error_of(&e.target, &data), want, "{} does not give its error", e.file);
        let small = shrink(data, |d| error_of(&e.target, d) == want);
        let file = format!("{}/crash-{}", e.target, sha1_smol::Sha1::from(&small).digest());
        std::fs::remove_file(&path).unwrap();
        std::fs::write(root().join(&file), &small).unwrap();
        if out.iter().any(|o| o.file == file) {
            continue;
        }
        out.push(Entry { file, ..e });
    }
    let text: Vec<String> = out
        .iter()
        .map(|e| {
            let q = |s: &str| serde_json::Value::from(s).to_string();
            format!(
                "  {{\n    \"file\": {},\n    \"target\": {},\n    \"found\": {},\n    \"error\": {}\n  }}",
                q(&e.file),
                q(&e.target),
                q(&e.found),
                q(&e.error)
            )
        })
        .collect();
    std::fs::write(root().join("inventory.json"), format!("[\n{}\n]\n", text.join(",\n"))).unwrap();
}
