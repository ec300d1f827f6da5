#![allow(clippy::unwrap_used, reason = "test code: a failed unwrap or panic is a failed test")]
//! Branches and clones at the Rust level: numbering, inherited files through base path 0,
//! tags on branches, deletion rules, and clones that keep reading after their source moved on.

use std::path::Path;
use std::sync::Arc;

use arrow_array::{Int64Array, RecordBatch, RecordBatchIterator};
use futures::executor::block_on;
use lancelet_dataset::write::{write_dataset, WriteMode, WriteParams};
use lancelet_dataset::{open_uri, Dataset, Error, VersionRef};

fn write(uri: &str, ids: &[i64], mode: WriteMode) -> Dataset {
    let b = RecordBatch::try_from_iter([("id", Arc::new(Int64Array::from(ids.to_vec())) as _)]).unwrap();
    let reader = Box::new(RecordBatchIterator::new(vec![Ok(b.clone())], b.schema()));
    let loc = open_uri(uri, &Default::default()).unwrap();
    let params = WriteParams {
        mode,
        ..WriteParams::default()
    };
    block_on(write_dataset(&loc, reader, params)).unwrap()
}

fn uri(dir: &Path, name: &str) -> String {
    dir.join(name).display().to_string()
}

#[test]
fn branches_number_their_own_versions_and_inherit_files() {
    let dir = tempfile::tempdir().unwrap();
    let root = uri(dir.path(), "d.lance");
    write(&root, &[1, 2, 3], WriteMode::Create);
    let main = write(&root, &[4], WriteMode::Append); // main v2
    let dev = block_on(main.create_branch("dev", Some(VersionRef::Number(1)))).unwrap();
    assert_eq!((dev.branch(), dev.version(), dev.count_rows()), (Some("dev"), 1, 3));
    assert_eq!(dev.base_paths().len(), 1);
    assert_eq!(dev.base_paths()[0].id, 0);
    assert!(dev.fragments()[0].files[0].base_id == Some(0));
    let dev = write(&format!("{root}/tree/dev"), &[10, 11], WriteMode::Append);
    assert_eq!((dev.version(), dev.count_rows()), (2, 5));
    assert!(dev.fragments()[1].files[0].base_id.is_none());
    // Main is unaffected and keeps counting from its own latest.
    let main = write(&root, &[5], WriteMode::Append);
    assert_eq!((main.version(), main.count_rows()), (3, 5));
    // Tags on the branch live at the root and open the branch.
    block_on(main.set_tag("t", Some("dev".into()), true, 2, false)).unwrap();
    let tagged = block_on(main.checkout(Some(VersionRef::Tag("t".into())))).unwrap();
    assert_eq!(
        (tagged.branch(), tagged.version(), tagged.count_rows()),
        (Some("dev"), 2, 5)
    );
    let back = block_on(tagged.checkout(Some(VersionRef::Branch(None, Some(1))))).unwrap();
    assert_eq!((back.branch(), back.count_rows()), (None, 3));
    // A duplicate is a clean error; a parent cannot be deleted while a child exists.
    assert!(matches!(
        block_on(main.create_branch("dev", None)),
        Err(Error::AlreadyExists(_))
    ));
    let child = block_on(tagged.create_branch("dev/child", None)).unwrap();
    assert_eq!(child.base_paths().len(), 2);
    assert!(block_on(main.delete_branch("dev")).is_err());
    block_on(main.delete_branch("dev/child")).unwrap();
    block_on(main.delete_branch("dev")).unwrap();
    assert!(block_on(main.list_branches()).unwrap().is_empty());
    assert!(!dir.path().join("d.lance/tree/dev").exists());
}

#[test]
fn clones_read_the_source_or_their_own_copies() {
    let dir = tempfile::tempdir().unwrap();
    let root = uri(dir.path(), "src.lance");
    write(&root, &[1, 2, 3], WriteMode::Create);
    let src = block_on(Dataset::open(Path::new(&root), None)).unwrap();
    block_on(src.delete("id = 2")).unwrap();
    let src = block_on(src.checkout(None)).unwrap();
    let shallow_uri = uri(dir.path(), "shallow.lance");
    let deep_uri = uri(dir.path(), "deep.lance");
    let shallow = block_on(src.shallow_clone(&open_uri(&shallow_uri, &Default::default()).unwrap(), None)).unwrap();
    let deep = block_on(src.deep_clone(&open_uri(&deep_uri, &Default::default()).unwrap(), None)).unwrap();
    for d in [&shallow, &deep] {
        assert_eq!((d.version(), d.count_rows()), (2, 2));
        assert!(block_on(d.missing_files()).unwrap().is_empty());
    }
    assert!(!dir.path().join("shallow.lance/data").exists());
    assert!(deep.base_paths().is_empty());
    // Removing the source breaks the shallow clone (detectably) and not the deep one.
    std::fs::remove_dir_all(&root).unwrap();
    assert_eq!(block_on(shallow.missing_files()).unwrap().len(), 2);
    assert!(block_on(deep.missing_files()).unwrap().is_empty());
    let deep = write(&deep_uri, &[9], WriteMode::Append);
    assert_eq!(deep.count_rows(), 3);
}
