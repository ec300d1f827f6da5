#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a failed unwrap or panic is a failed test"
)]
//! Hostile datasets: manifests crafted with damaged, inconsistent or malicious values.
//!
//! Each case copies a golden pylance dataset into a temporary directory, commits a
//! doctored manifest as the next version, and then opens, counts, scans, takes, deletes
//! and appends. Every operation must return (an error where the damage matters), never
//! panic or hang, and nothing outside the dataset root may be read or written: a real
//! data file and a sentinel sit next to the root, and hostile paths point at them.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use arrow_array::{ArrayRef, Int64Array, RecordBatch, RecordBatchIterator, StringArray};
use futures::executor::block_on;
use lancelet_dataset::scan::{Columns, Scan, ScanOptions};
use lancelet_dataset::write::{write_dataset, WriteMode, WriteParams};
use lancelet_dataset::{Dataset, Location};
use lancelet_io::LocalStore;
use lancelet_proto::pbfile;
use lancelet_table::manifest::{decode_manifest, encode_manifest};
use lancelet_table::naming::ManifestNaming;
use lancelet_table::pb;

const FIXTURE: &str = "pylance_v2_0_small";
/// The fixture's latest version; hostile manifests are committed as the next one.
const LATEST: u64 = 3;

struct Case {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    outside: PathBuf,
}

fn fixture_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/data/datasets")
        .join(FIXTURE)
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dest = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &dest);
        } else {
            std::fs::copy(e.path(), dest).unwrap();
        }
    }
}

/// Every file under `dir` with its contents.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let e = e.unwrap();
            if e.file_type().unwrap().is_dir() {
                stack.push(e.path());
            } else {
                out.insert(e.path(), std::fs::read(e.path()).unwrap());
            }
        }
    }
    out
}

impl Case {
    fn new() -> Self {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("ds");
        copy_dir(&fixture_dir(), &root);
        // Next to the root: a valid data file (so a read that escaped would succeed) and
        // deletion files named like the root's, plus a sentinel.
        let outside = tmp.path().join("outside");
        copy_dir(&root.join("data"), &outside.join("data"));
        copy_dir(&root.join("_deletions"), &outside.join("_deletions"));
        std::fs::write(outside.join("sentinel.txt"), b"do not touch").unwrap();
        Self {
            _tmp: tmp,
            root,
            outside,
        }
    }

    fn manifest_path(&self, version: u64) -> PathBuf {
        self.root.join(ManifestNaming::V2.relative_path(version))
    }

    fn latest(&self) -> pb::Manifest {
        let bytes = std::fs::read(self.manifest_path(LATEST)).unwrap();
        decode_manifest(&bytes, "latest").unwrap()
    }

    /// The name of the data file of fragment `i` in the latest version.
    fn data_file(&self, i: usize) -> String {
        self.latest().fragments[i].files[0].path.clone()
    }

    /// Commits the latest manifest, changed by `f`, as version `LATEST + 1`.
    fn commit(&self, f: impl FnOnce(&mut pb::Manifest)) {
        let mut m = self.latest();
        m.version = LATEST + 1;
        m.transaction_file.clear();
        m.transaction_section = None;
        f(&mut m);
        self.commit_bytes(encode_manifest(&m));
    }

    fn commit_bytes(&self, bytes: Vec<u8>) {
        std::fs::write(self.manifest_path(LATEST + 1), bytes).unwrap();
    }

    /// Runs every operation on the latest version, checking nothing escaped the root.
    fn run(&self) -> Outcome {
        let before = snapshot(self._tmp.path());
        let root = self.root.clone();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(exercise(&root));
        });
        let outcome = rx
            .recv_timeout(Duration::from_secs(60))
            .expect("operations on a hostile dataset hung or panicked");
        let after = snapshot(self._tmp.path());
        for (p, bytes) in &before {
            if !p.starts_with(&self.root) {
                assert_eq!(after.get(p), Some(bytes), "{} was changed or removed", p.display());
            }
        }
        for p in after.keys() {
            assert!(
                p.starts_with(&self.root) || before.contains_key(p),
                "{} was created outside the dataset root",
                p.display()
            );
        }
        assert!(self.outside.join("sentinel.txt").exists());
        outcome
    }
}

#[derive(Debug)]
struct Outcome {
    open: Result<(), String>,
    ops: Vec<(&'static str, Result<(), String>)>,
}

impl Outcome {
    fn op(&self, name: &str) -> &Result<(), String> {
        &self
            .ops
            .iter()
            .find(|(n, _)| *n == name)
            .unwrap_or_else(|| panic!("no {name} in {self:#?}"))
            .1
    }

    /// The dataset failed to open with an error mentioning `needle`.
    fn refused_at_open(&self, needle: &str) {
        match &self.open {
            Err(e) => assert!(e.contains(needle), "open failed with {e:?}, expected {needle:?}"),
            Ok(()) => panic!("opened a hostile dataset: {self:#?}"),
        }
    }

    /// Either opening or `op` failed with an error mentioning `needle`.
    fn refused(&self, op: &str, needle: &str) {
        match &self.open {
            Err(e) => assert!(e.contains(needle), "open failed with {e:?}, expected {needle:?}"),
            Ok(()) => match self.op(op) {
                Err(e) => assert!(e.contains(needle), "{op} failed with {e:?}, expected {needle:?}"),
                Ok(()) => panic!("{op} succeeded on a hostile dataset: {self:#?}"),
            },
        }
    }
}

fn batch() -> RecordBatch {
    let a: ArrayRef = Arc::new(Int64Array::from(vec![100, 101]));
    let s: ArrayRef = Arc::new(StringArray::from(vec!["x", "y"]));
    RecordBatch::try_from_iter([("a", a), ("s", s)]).unwrap()
}

fn exercise(root: &Path) -> Outcome {
    let opened = block_on(Dataset::open(root, None));
    let ds = match opened {
        Ok(ds) => ds,
        Err(e) => {
            return Outcome {
                open: Err(e.to_string()),
                ops: Vec::new(),
            }
        }
    };
    let mut ops: Vec<(&'static str, Result<(), String>)> = Vec::new();
    let _ = ds.count_rows();
    let scan = |opts: ScanOptions| -> Result<(), String> {
        let s = block_on(Scan::plan(&ds, opts)).map_err(|e| e.to_string())?;
        block_on(s.collect()).map_err(|e| e.to_string())?;
        Ok(())
    };
    ops.push(("scan", scan(ScanOptions::default())));
    ops.push((
        "scan_filter",
        scan(ScanOptions {
            filter: Some("a >= 0".into()),
            with_row_id: true,
            ..ScanOptions::default()
        }),
    ));
    ops.push((
        "scan_limit",
        scan(ScanOptions {
            limit: Some(2),
            offset: 1,
            ..ScanOptions::default()
        }),
    ));
    let count = || -> Result<(), String> {
        let opts = ScanOptions {
            columns: Columns::Names(Vec::new()),
            filter: Some("true".into()),
            ..ScanOptions::default()
        };
        let s = block_on(Scan::plan(&ds, opts)).map_err(|e| e.to_string())?;
        for i in 0..s.num_tasks() {
            block_on(s.count_task(i)).map_err(|e| e.to_string())?;
        }
        Ok(())
    };
    ops.push(("count_filter", count()));
    let take = block_on(ds.take(&[0, 1], None)).map(|_| ()).map_err(|e| e.to_string());
    ops.push(("take", take));
    let take_addr = block_on(ds.take_addresses(&[0, 1 << 32], None))
        .map(|_| ())
        .map_err(|e| e.to_string());
    ops.push(("take_addresses", take_addr));
    let versions = block_on(ds.versions()).map(|_| ()).map_err(|e| e.to_string());
    ops.push(("versions", versions));
    let delete = block_on(ds.delete("a = 5")).map(|_| ()).map_err(|e| e.to_string());
    ops.push(("delete", delete));
    let loc = Location {
        store: Arc::new(LocalStore::new(root)),
        local_root: Some(root.to_path_buf()),
    };
    let b = batch();
    let reader = Box::new(RecordBatchIterator::new(vec![Ok(b.clone())], b.schema()));
    let params = WriteParams {
        mode: WriteMode::Append,
        ..WriteParams::default()
    };
    let append = block_on(write_dataset(&loc, reader, params))
        .map(|_| ())
        .map_err(|e| e.to_string());
    ops.push(("append", append));
    Outcome { open: Ok(()), ops }
}

#[test]
fn the_untouched_fixture_works() {
    let case = Case::new();
    case.commit(|_| {});
    let o = case.run();
    assert_eq!(o.open, Ok(()));
    for (name, r) in &o.ops {
        assert_eq!(r, &Ok(()), "{name}");
    }
}

// ---- data file paths ----

#[test]
fn data_paths_with_dotdot_are_refused() {
    let case = Case::new();
    let name = case.data_file(0);
    case.commit(|m| m.fragments[0].files[0].path = format!("../../outside/data/{name}"));
    case.run().refused("scan", "leaves the dataset directory");
}

#[test]
fn absolute_data_paths_are_refused() {
    let case = Case::new();
    let target = case.outside.join("data").join(case.data_file(0));
    case.commit(|m| m.fragments[0].files[0].path = target.display().to_string());
    case.run().refused("scan", "leaves the dataset directory");
}

#[test]
fn empty_and_dot_data_paths_are_refused() {
    for bad in ["", ".", "./", "..", "a/../../b.lance"] {
        let case = Case::new();
        case.commit(|m| m.fragments[1].files[0].path = bad.to_string());
        case.run().refused("scan", "leaves the dataset directory");
    }
}

#[test]
fn missing_data_files_are_an_error() {
    let case = Case::new();
    case.commit(|m| m.fragments[0].files[0].path = "nope.lance".into());
    let o = case.run();
    assert!(o.open.is_ok());
    let e = o.op("scan").as_ref().unwrap_err();
    assert!(e.contains("nope.lance"), "{e}");
}

#[test]
fn base_paths_are_read_never_written_and_must_be_sound() {
    // A sound base path (absolute, no `..`) outside the root: its files are read from there
    // and nothing operations do changes it (`run` checks that nothing outside changed).
    let case = Case::new();
    let outside = case.outside.display().to_string();
    let base = outside.clone();
    case.commit(|m| {
        m.base_paths.push(pb::BasePath {
            id: 1,
            name: None,
            is_dataset_root: true,
            path: base,
        });
        m.fragments[0].files[0].base_id = Some(1);
    });
    let o = case.run();
    assert!(o.open.is_ok(), "{o:#?}");
    assert!(o.op("scan").is_ok(), "{o:#?}");
    // A base id with no base paths at all.
    let case = Case::new();
    case.commit(|m| m.fragments[0].files[0].base_id = Some(7));
    case.run().refused_at_open("base path");
    let case = Case::new();
    case.commit(|m| m.fragments[0].deletion_file.as_mut().unwrap().base_id = Some(7));
    case.run().refused_at_open("base path");
    // Base paths that climb, are relative or empty, and ids used twice.
    for bad in [format!("{outside}/../outside"), "outside".to_string(), String::new()] {
        let case = Case::new();
        case.commit(|m| {
            m.base_paths.push(pb::BasePath {
                id: 1,
                name: None,
                is_dataset_root: true,
                path: bad.clone(),
            });
            m.fragments[0].files[0].base_id = Some(1);
        });
        case.run().refused_at_open("base path");
    }
    let case = Case::new();
    case.commit(|m| {
        for _ in 0..2 {
            m.base_paths.push(pb::BasePath {
                id: 1,
                name: None,
                is_dataset_root: true,
                path: outside.clone(),
            });
        }
    });
    case.run().refused_at_open("base path");
}

// ---- deletion files ----

#[test]
fn huge_deleted_row_counts_are_refused() {
    let case = Case::new();
    case.commit(|m| m.fragments[0].deletion_file.as_mut().unwrap().num_deleted_rows = u64::MAX);
    case.run().refused_at_open("deleted rows");
}

#[test]
fn wrong_deleted_row_counts_are_refused() {
    let case = Case::new();
    case.commit(|m| m.fragments[0].deletion_file.as_mut().unwrap().num_deleted_rows = 2);
    case.run().refused("scan", "deleted rows");
}

#[test]
fn unknown_deletion_file_types_are_refused() {
    for t in [7, -1, i32::MAX] {
        let case = Case::new();
        case.commit(|m| m.fragments[0].deletion_file.as_mut().unwrap().file_type = t);
        case.run().refused_at_open("deletion file type");
    }
}

#[test]
fn deletion_files_of_the_wrong_type_are_corrupt() {
    // An Arrow IPC deletion file read as a roaring bitmap, and bitmaps whose headers claim
    // huge container counts and sizes.
    let garbage: [&[u8]; 3] = [
        &[],
        &[0x3B, 0x30, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F],
        &[0x3A, 0x30, 0, 0, 0xFF, 0xFF, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF],
    ];
    for bitmap in [None].into_iter().chain(garbage.into_iter().map(Some)) {
        let case = Case::new();
        let dels = case.root.join("_deletions");
        for e in std::fs::read_dir(&dels).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "arrow") {
                match bitmap {
                    None => std::fs::copy(&p, p.with_extension("bin")).map(|_| ()),
                    Some(b) => std::fs::write(p.with_extension("bin"), b),
                }
                .unwrap();
            }
        }
        case.commit(|m| {
            for f in &mut m.fragments {
                f.deletion_file.as_mut().unwrap().file_type = 1;
            }
        });
        case.run().refused("scan", "corrupt");
    }
}

#[test]
fn deletion_file_ids_cannot_make_paths() {
    // The path is built from numbers only: a hostile id names a missing file inside the
    // root, never a path outside it.
    let case = Case::new();
    case.commit(|m| {
        let d = m.fragments[0].deletion_file.as_mut().unwrap();
        d.id = u64::MAX;
        d.read_version = u64::MAX;
    });
    let o = case.run();
    let e = o.op("scan").as_ref().unwrap_err();
    assert!(
        e.contains("_deletions/0-18446744073709551615-18446744073709551615.arrow"),
        "{e}"
    );
}

// ---- row counts and fragment ids ----

#[test]
fn gigantic_physical_row_counts_are_refused() {
    for rows in [u64::MAX, u64::MAX / 2, 1 << 33] {
        let case = Case::new();
        case.commit(|m| m.fragments[0].physical_rows = rows);
        case.run().refused_at_open("rows");
    }
}

#[test]
fn physical_row_counts_disagreeing_with_the_data_are_refused() {
    // Within the addressable range, but not what the data file holds. Planning must not
    // cut billions of rows into tasks before finding out.
    for rows in [1 << 32, 50_000_000, 11] {
        let case = Case::new();
        case.commit(|m| m.fragments[0].physical_rows = rows);
        let o = case.run();
        for op in ["scan", "scan_filter", "count_filter", "delete"] {
            o.refused(op, "rows");
        }
    }
}

#[test]
fn a_data_file_shared_by_fragments_is_checked_for_each() {
    let case = Case::new();
    case.commit(|m| {
        let mut f = m.fragments[0].clone();
        f.id = 9;
        f.physical_rows = 1_000;
        f.deletion_file = None;
        m.fragments.push(f);
        m.max_fragment_id = Some(9);
    });
    case.run().refused("scan", "rows");
}

#[test]
fn gigantic_row_counts_in_every_fragment_do_not_allocate() {
    // Thousands of fragments each claiming 2^32 rows: planning must not materialize
    // millions of tasks (it would take gigabytes).
    let case = Case::new();
    case.commit(|m| {
        let template = m.fragments[0].clone();
        m.fragments = (0..5_000)
            .map(|i| {
                let mut f = template.clone();
                f.id = i;
                f.physical_rows = 1 << 32;
                f.deletion_file = None;
                f
            })
            .collect();
        m.max_fragment_id = Some(5_000);
    });
    let o = case.run();
    o.refused("scan", "rows");
    o.refused("count_filter", "rows");
}

#[test]
fn duplicate_fragment_ids_are_refused() {
    let case = Case::new();
    case.commit(|m| m.fragments[1].id = m.fragments[0].id);
    case.run().refused_at_open("fragment id");
}

#[test]
fn fragment_ids_past_row_address_range_are_refused() {
    for id in [u64::MAX, 1 << 32] {
        let case = Case::new();
        case.commit(|m| {
            m.fragments[1].id = id;
            m.max_fragment_id = Some(u32::MAX);
        });
        case.run().refused_at_open("fragment id");
    }
}

#[test]
fn a_max_fragment_id_below_the_fragments_does_not_reuse_ids() {
    let case = Case::new();
    case.commit(|m| m.max_fragment_id = Some(0));
    let o = case.run();
    assert_eq!(o.op("append"), &Ok(()));
    let ds = block_on(Dataset::open(&case.root, None)).unwrap();
    let mut ids: Vec<u64> = ds.fragments().iter().map(|f| f.id).collect();
    let n = ids.len();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), n, "fragment ids reused: {:?}", ds.fragments());
}

#[test]
fn a_max_fragment_id_at_the_limit_does_not_create_unaddressable_fragments() {
    let case = Case::new();
    case.commit(|m| m.max_fragment_id = Some(u32::MAX));
    let o = case.run();
    assert!(o.op("scan").is_ok());
    // Appending would need fragment id 2^32: refused before anything is committed.
    let e = o.op("append").as_ref().unwrap_err();
    assert!(e.contains("32 bits"), "{e}");
    let latest = block_on(Dataset::open(&case.root, None));
    assert!(latest.is_ok(), "the latest version no longer opens: {latest:?}");
}

// ---- schemas ----

fn field(id: i32, parent_id: i32, name: &str, lt: &str) -> pbfile::Field {
    pbfile::Field {
        id,
        parent_id,
        name: name.into(),
        logical_type: lt.into(),
        nullable: true,
        ..pbfile::Field::default()
    }
}

#[test]
fn schema_parent_cycles_are_refused() {
    let cases: Vec<Vec<pbfile::Field>> = vec![
        // A field parenting itself.
        vec![field(0, 0, "a", "struct")],
        // Two fields parenting each other.
        vec![field(0, 1, "a", "struct"), field(1, 0, "b", "struct")],
        // A parent that does not exist.
        vec![field(0, -1, "a", "int64"), field(1, 42, "s", "string")],
        // A parent id below -1.
        vec![field(0, -7, "a", "int64")],
    ];
    for fields in cases {
        let case = Case::new();
        case.commit(|m| m.fields = fields);
        case.run().refused_at_open("parent");
    }
}

#[test]
fn duplicate_field_ids_are_refused() {
    let case = Case::new();
    case.commit(|m| m.fields[1].id = m.fields[0].id);
    case.run().refused_at_open("duplicate field id");
}

#[test]
fn huge_field_ids_are_harmless() {
    let case = Case::new();
    case.commit(|m| {
        m.fields[1].id = i32::MAX;
        for f in &mut m.fragments {
            f.files[0].fields = vec![m.fields[0].id, i32::MAX];
        }
    });
    let o = case.run();
    assert_eq!(o.open, Ok(()));
    assert_eq!(o.op("scan"), &Ok(()));
}

#[test]
fn unknown_logical_types_are_refused() {
    for lt in [
        "int128",
        "",
        "fixed_size_list:float:-3",
        "decimal:128:x:y",
        "dict:::",
        "list",
    ] {
        let case = Case::new();
        case.commit(|m| m.fields[1].logical_type = lt.into());
        let o = case.run();
        assert!(o.open.is_err(), "{lt}: {o:?}");
    }
}

#[test]
fn deeply_nested_schemas_are_refused() {
    let case = Case::new();
    case.commit(|m| {
        m.fields = (0..10_000)
            .map(|i| field(i, i - 1, &format!("f{i}"), "struct"))
            .collect();
    });
    case.run().refused_at_open("deeper");
}

#[test]
fn data_file_field_ids_not_in_the_schema_are_harmless_or_refused() {
    let case = Case::new();
    case.commit(|m| {
        for f in &mut m.fragments {
            f.files[0].fields = vec![77, -5, i32::MIN];
            f.files[0].column_indices = vec![1000, -9, i32::MAX];
        }
    });
    let o = case.run();
    // Reads go by the data file's own schema; whatever happens, nothing panics and the
    // rows read are the real ones.
    assert_eq!(o.open, Ok(()));
    assert_eq!(o.op("scan"), &Ok(()));
}

#[test]
fn column_indices_out_of_range_are_harmless() {
    let case = Case::new();
    case.commit(|m| {
        for f in &mut m.fragments {
            f.files[0].column_indices = vec![i32::MAX, i32::MIN];
        }
    });
    let o = case.run();
    assert_eq!(o.open, Ok(()));
    assert_eq!(o.op("scan"), &Ok(()));
}

// ---- manifest files ----

#[test]
fn a_version_disagreeing_with_the_file_name_is_refused() {
    let case = Case::new();
    case.commit(|m| m.version = 1);
    case.run().refused_at_open("version");
    let case = Case::new();
    case.commit(|m| m.version = u64::MAX);
    case.run().refused_at_open("version");
}

#[test]
fn truncated_and_damaged_manifests_are_refused() {
    let good = {
        let case = Case::new();
        let mut m = case.latest();
        m.version = LATEST + 1;
        encode_manifest(&m)
    };
    let mut damaged: Vec<Vec<u8>> = vec![Vec::new(), b"LANC".to_vec()];
    for cut in [1, 4, 8, 16, 17, 20, good.len() / 2, good.len() - 1] {
        damaged.push(good[..good.len() - cut].to_vec());
        damaged.push(good[cut..].to_vec());
    }
    let n = good.len();
    // Position fields pointing anywhere.
    for pos in [i64::MAX, i64::MIN, -1, (n as i64) - 16, (n as i64) - 19] {
        let mut b = good.clone();
        b[n - 16..n - 8].copy_from_slice(&pos.to_le_bytes());
        damaged.push(b);
    }
    // A length prefix claiming 4 GB.
    let mut b = good.clone();
    b[0..4].copy_from_slice(&u32::MAX.to_le_bytes());
    damaged.push(b);
    // Garbage body.
    let mut b = good.clone();
    for x in &mut b[4..n - 16] {
        *x = 0xFF;
    }
    damaged.push(b);
    for bytes in damaged {
        let case = Case::new();
        case.commit_bytes(bytes);
        case.run().refused_at_open("corrupt");
    }
}

#[test]
fn unknown_feature_flags_are_refused() {
    let case = Case::new();
    case.commit(|m| m.reader_feature_flags = u64::MAX);
    case.run().refused_at_open("features");
    let case = Case::new();
    case.commit(|m| m.writer_feature_flags = 1 << 40);
    let o = case.run();
    assert_eq!(o.open, Ok(()));
    assert_eq!(o.op("scan"), &Ok(()));
    assert!(o.op("append").as_ref().unwrap_err().contains("features"));
}

#[test]
fn hostile_tags_are_refused() {
    let case = Case::new();
    std::fs::write(case.root.join("_refs/tags/bad.json"), b"{\"version\": -1}").unwrap();
    std::fs::write(
        case.root.join("_refs/tags/huge.json"),
        b"{\"version\": 18446744073709551615}",
    )
    .unwrap();
    std::fs::write(case.root.join("_refs/tags/junk.json"), [0xFFu8; 64]).unwrap();
    for name in ["bad", "huge", "junk", "../../outside/sentinel", "/etc/passwd", ""] {
        let r = block_on(Dataset::open(
            &case.root,
            Some(lancelet_dataset::VersionRef::Tag(name.into())),
        ));
        assert!(r.is_err(), "{name}");
    }
    let ds = block_on(Dataset::open(&case.root, None)).unwrap();
    assert!(
        block_on(ds.tags()).is_err(),
        "tag listing should report damaged tag files"
    );
    for name in ["../../outside/x", "a/b", "..", ""] {
        assert!(block_on(ds.create_tag(name, 1)).is_err(), "{name}");
    }
    assert!(block_on(ds.create_tag("fine", 999)).is_err());
}
