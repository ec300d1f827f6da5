#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a failed unwrap or panic is a failed test"
)]
//! The commit protocol: linear history under concurrency, conflicts, retries and tags.

use std::collections::HashSet;
use std::sync::Arc;

use lancelet_io::{LocalStore, Storage};
use lancelet_table::commit::{commit, conflict_reason, new_transaction, CommitOptions};
use lancelet_table::naming::ManifestNaming;
use lancelet_table::pb;
use lancelet_table::pb::transaction::Operation;
use lancelet_table::versions::{list_versions, read_version};
use lancelet_table::{tags, Error};

fn frag(rows: u64) -> pb::DataFragment {
    pb::DataFragment {
        physical_rows: rows,
        files: vec![pb::DataFile {
            path: format!("{}.lance", uuid_like()),
            ..Default::default()
        }],
        ..Default::default()
    }
}

fn uuid_like() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    format!("f{}", N.fetch_add(1, Ordering::Relaxed))
}

fn append(n: usize) -> Operation {
    Operation::Append(pb::transaction::Append {
        fragments: (0..n).map(|_| frag(10)).collect(),
    })
}

fn overwrite() -> Operation {
    Operation::Overwrite(pb::transaction::Overwrite {
        fragments: vec![frag(10)],
        ..Default::default()
    })
}

fn delete(ids: &[u64]) -> Operation {
    Operation::Delete(pb::transaction::Delete {
        updated_fragments: ids
            .iter()
            .map(|&id| pb::DataFragment {
                id,
                physical_rows: 10,
                deletion_file: Some(pb::DeletionFile {
                    num_deleted_rows: 1,
                    ..Default::default()
                }),
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    })
}

/// Commits `txn` read at `base` (a V2 dataset) with default options.
async fn on_base(
    store: &dyn Storage,
    base: &pb::Manifest,
    txn: &pb::Transaction,
) -> lancelet_table::Result<(pb::Manifest, ManifestNaming)> {
    commit(store, Some((base, ManifestNaming::V2)), txn, &CommitOptions::default()).await
}

async fn create(store: &dyn Storage) -> pb::Manifest {
    let txn = new_transaction(0, overwrite(), None);
    commit(store, None, &txn, &CommitOptions::default()).await.unwrap().0
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_appends_all_land_in_a_linear_history() {
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn Storage> = Arc::new(LocalStore::new(dir.path()));
    let base = create(store.as_ref()).await;
    let writers = 16;
    let tasks: Vec<_> = (0..writers)
        .map(|_| {
            let (store, base) = (store.clone(), base.clone());
            tokio::spawn(async move {
                let txn = new_transaction(base.version, append(2), None);
                commit(
                    store.as_ref(),
                    Some((&base, ManifestNaming::V2)),
                    &txn,
                    &CommitOptions::default(),
                )
                .await
                .unwrap()
            })
        })
        .collect();
    for t in tasks {
        t.await.unwrap();
    }
    let versions: Vec<u64> = list_versions(store.as_ref())
        .await
        .unwrap()
        .iter()
        .map(|v| v.version)
        .collect();
    assert_eq!(versions, (1..=writers as u64 + 1).collect::<Vec<_>>());
    let (latest, _) = read_version(store.as_ref(), None).await.unwrap();
    assert_eq!(latest.fragments.len(), 1 + 2 * writers);
    let ids: HashSet<u64> = latest.fragments.iter().map(|f| f.id).collect();
    assert_eq!(ids.len(), latest.fragments.len(), "fragment ids must be unique");
    assert_eq!(latest.max_fragment_id, Some(2 * writers as u32));
}

#[tokio::test]
async fn a_delete_loses_to_a_concurrent_delete_of_the_same_fragment() {
    let dir = tempfile::tempdir().unwrap();
    let store = LocalStore::new(dir.path());
    let base = create(&store).await;
    let first = new_transaction(1, delete(&[0]), None);
    on_base(&store, &base, &first).await.unwrap();
    let second = new_transaction(1, delete(&[0]), None);
    let err = on_base(&store, &base, &second).await.unwrap_err();
    assert!(matches!(err, Error::CommitConflict { .. }), "{err}");
    assert_eq!(
        list_versions(&store).await.unwrap().len(),
        2,
        "the loser adds no version"
    );
}

#[tokio::test]
async fn an_append_rebases_over_a_concurrent_delete() {
    let dir = tempfile::tempdir().unwrap();
    let store = LocalStore::new(dir.path());
    let base = create(&store).await;
    let del = new_transaction(1, delete(&[0]), None);
    on_base(&store, &base, &del).await.unwrap();
    let app = new_transaction(1, append(1), None);
    let (m, _) = on_base(&store, &base, &app).await.unwrap();
    assert_eq!(m.version, 3);
    assert!(m.fragments[0].deletion_file.is_some(), "the delete is kept");
    assert_eq!(m.fragments[1].id, 1);
}

#[tokio::test]
async fn a_missing_transaction_file_counts_as_a_conflict() {
    let dir = tempfile::tempdir().unwrap();
    let store = LocalStore::new(dir.path());
    let base = create(&store).await;
    let app = new_transaction(1, append(1), None);
    let (m, _) = on_base(&store, &base, &app).await.unwrap();
    store
        .delete(&format!("_transactions/{}", m.transaction_file))
        .await
        .unwrap();
    // Without the file, the copy inline in the manifest still answers...
    let rebased = new_transaction(1, append(1), None);
    let (m3, _) = on_base(&store, &base, &rebased).await.unwrap();
    assert_eq!(m3.version, 3);
    // ... but a manifest with neither (an older writer) is a conflict.
    let mut bare = m.clone();
    bare.transaction_section = None;
    store
        .put(
            &ManifestNaming::V2.relative_path(2),
            lancelet_table::manifest::encode_manifest(&bare).into(),
        )
        .await
        .unwrap();
    let again = new_transaction(1, append(1), None);
    let err = on_base(&store, &base, &again).await.unwrap_err();
    assert!(matches!(err, Error::CommitConflict { .. }), "{err}");
}

#[test]
fn conflict_rules() {
    let cases = [
        (append(1), append(1), false),
        (append(1), delete(&[0]), false),
        (delete(&[0]), append(1), false),
        (delete(&[0]), delete(&[1]), false),
        (delete(&[0]), delete(&[0]), true),
        (append(1), overwrite(), true),
        // An overwrite lands on anything but another table replacement (as in pylance).
        (overwrite(), append(1), false),
        (overwrite(), delete(&[0]), false),
        (overwrite(), overwrite(), true),
        // New rows after new columns read them as nulls; new columns need every fragment.
        (append(1), Operation::Merge(pb::transaction::Merge::default()), false),
        (Operation::Merge(pb::transaction::Merge::default()), append(1), true),
        (delete(&[0]), Operation::Merge(pb::transaction::Merge::default()), true),
        (
            delete(&[0]),
            Operation::Restore(pb::transaction::Restore { version: 1 }),
            true,
        ),
        (
            Operation::ReserveFragments(pb::transaction::ReserveFragments { num_fragments: 2 }),
            overwrite(),
            false,
        ),
    ];
    for (mine, theirs, conflict) in cases {
        assert_eq!(
            conflict_reason(&mine, &theirs).is_some(),
            conflict,
            "{mine:?} vs {theirs:?}"
        );
    }
}

fn schema_meta(entries: &[(&str, Option<&str>)], replace: bool) -> Operation {
    Operation::UpdateConfig(pb::transaction::UpdateConfig {
        schema_metadata_updates: Some(pb::transaction::UpdateMap {
            update_entries: entries
                .iter()
                .map(|(k, v)| pb::transaction::UpdateMapEntry {
                    key: k.to_string(),
                    value: v.map(str::to_string),
                })
                .collect(),
            replace,
        }),
        ..Default::default()
    })
}

#[tokio::test]
async fn schema_metadata_updates_merge_into_the_schema_metadata() {
    let dir = tempfile::tempdir().unwrap();
    let store = LocalStore::new(dir.path());
    let base = create(&store).await;
    let (m2, _) = on_base(
        &store,
        &base,
        &new_transaction(1, schema_meta(&[("a", Some("1"))], false), None),
    )
    .await
    .unwrap();
    // A concurrent change of another key rebases; of the same key conflicts.
    let (m3, _) = on_base(
        &store,
        &base,
        &new_transaction(1, schema_meta(&[("b", Some("2"))], false), None),
    )
    .await
    .unwrap();
    let meta = |m: &pb::Manifest| {
        let mut kv: Vec<(String, String)> = m
            .schema_metadata
            .iter()
            .map(|(k, v)| (k.clone(), String::from_utf8_lossy(v).into_owned()))
            .collect();
        kv.sort();
        kv
    };
    assert_eq!(meta(&m2), vec![("a".to_string(), "1".to_string())]);
    assert_eq!(
        meta(&m3),
        vec![("a".to_string(), "1".to_string()), ("b".to_string(), "2".to_string())]
    );
    let clash = on_base(
        &store,
        &base,
        &new_transaction(1, schema_meta(&[("a", Some("9"))], false), None),
    )
    .await;
    assert!(matches!(clash, Err(Error::CommitConflict { .. })), "{clash:?}");
    // Deleting a key, then replacing the whole map.
    let (m4, _) = on_base(
        &store,
        &m3,
        &new_transaction(3, schema_meta(&[("a", None)], false), None),
    )
    .await
    .unwrap();
    assert_eq!(meta(&m4), vec![("b".to_string(), "2".to_string())]);
    let (m5, _) = on_base(
        &store,
        &m4,
        &new_transaction(4, schema_meta(&[("c", Some("3"))], true), None),
    )
    .await
    .unwrap();
    assert_eq!(meta(&m5), vec![("c".to_string(), "3".to_string())]);
}

#[test]
fn schema_metadata_updates_conflict_with_schema_changes() {
    let project = Operation::Project(pb::transaction::Project::default());
    let a = schema_meta(&[("a", Some("1"))], false);
    assert!(conflict_reason(&a, &project).is_some());
    assert!(conflict_reason(&project, &a).is_some());
    assert!(conflict_reason(&a, &schema_meta(&[("b", None)], false)).is_none());
    assert!(conflict_reason(&a, &schema_meta(&[("b", None)], true)).is_some());
    assert!(conflict_reason(&a, &append(1)).is_none());
}

#[tokio::test]
async fn v1_datasets_stay_v1() {
    let dir = tempfile::tempdir().unwrap();
    let store = LocalStore::new(dir.path());
    let txn = new_transaction(0, overwrite(), None);
    let opts = CommitOptions {
        naming: ManifestNaming::V1,
        ..CommitOptions::default()
    };
    let (m, naming) = commit(&store, None, &txn, &opts).await.unwrap();
    assert_eq!(naming, ManifestNaming::V1);
    let app = new_transaction(1, append(1), None);
    commit(&store, Some((&m, naming)), &app, &CommitOptions::default())
        .await
        .unwrap();
    assert!(dir.path().join("_versions/2.manifest").exists());
}

#[tokio::test]
async fn tags_point_at_existing_versions() {
    let dir = tempfile::tempdir().unwrap();
    let store = LocalStore::new(dir.path());
    create(&store).await;
    tags::create_tag(&store, "v1", 1).await.unwrap();
    assert!(tags::create_tag(&store, "v1", 1).await.is_err(), "duplicate");
    assert!(tags::create_tag(&store, "v9", 9).await.is_err(), "missing version");
    assert!(tags::create_tag(&store, "../x", 1).await.is_err(), "bad name");
    let t = tags::get_tag(&store, "v1").await.unwrap();
    assert_eq!((t.version, t.manifest_size > 0), (1, true));
    tags::delete_tag(&store, "v1").await.unwrap();
    assert!(tags::list_tags(&store).await.unwrap().is_empty());
    assert!(tags::delete_tag(&store, "v1").await.is_err());
}

fn replacement(fragment_id: u64, path: &str, fields: Vec<i32>) -> Operation {
    Operation::DataReplacement(pb::transaction::DataReplacement {
        replacements: vec![pb::transaction::DataReplacementGroup {
            fragment_id,
            new_file: Some(pb::DataFile {
                path: path.into(),
                fields,
                ..Default::default()
            }),
        }],
    })
}

#[tokio::test]
async fn a_data_replacement_swaps_or_adds_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let store = LocalStore::new(dir.path());
    let base = create(&store).await;
    // Same fields as the fragment's file: swapped in place.
    let txn = new_transaction(1, replacement(0, "new.lance", vec![]), None);
    let (m, _) = on_base(&store, &base, &txn).await.unwrap();
    assert_eq!(m.fragments[0].files.len(), 1);
    assert_eq!(m.fragments[0].files[0].path, "new.lance");
    assert_eq!(m.fragments[0].physical_rows, 10);
    // Fields no file holds: added.
    let txn = new_transaction(2, replacement(0, "more.lance", vec![7]), None);
    let (m, _) = on_base(&store, &m, &txn).await.unwrap();
    let paths: Vec<&str> = m.fragments[0].files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(paths, ["new.lance", "more.lance"]);
    // A fragment that is gone is a conflict.
    let txn = new_transaction(3, replacement(5, "x.lance", vec![]), None);
    assert!(matches!(
        on_base(&store, &m, &txn).await,
        Err(Error::CommitConflict { .. })
    ));
}

fn with_id(id: u64) -> pb::DataFragment {
    pb::DataFragment { id, ..frag(10) }
}

fn ids(m: &pb::Manifest) -> Vec<u64> {
    m.fragments.iter().map(|f| f.id).collect()
}

#[tokio::test]
async fn new_fragments_keep_chosen_ids_and_the_list_is_ordered_by_id() {
    // pylance 14: id 0 takes the next id, other ids are kept, the manifest lists by id.
    let dir = tempfile::tempdir().unwrap();
    let store = LocalStore::new(dir.path());
    let base = create(&store).await;
    let op = Operation::Append(pb::transaction::Append {
        fragments: vec![with_id(7), with_id(3), with_id(0)],
    });
    let (m, _) = on_base(&store, &base, &new_transaction(1, op, None)).await.unwrap();
    assert_eq!(ids(&m), [0, 1, 3, 7]);
    assert_eq!(m.max_fragment_id, Some(7));
    let (m, _) = on_base(&store, &m, &new_transaction(2, append(1), None)).await.unwrap();
    assert_eq!(ids(&m), [0, 1, 3, 7, 8]);
    // An id the dataset (or another new fragment) has is refused, nothing committed.
    for dup in [
        vec![with_id(3)],
        vec![with_id(9), with_id(9)],
        vec![with_id(9), with_id(0)],
    ] {
        let op = Operation::Append(pb::transaction::Append { fragments: dup });
        let err = on_base(&store, &m, &new_transaction(m.version, op, None))
            .await
            .unwrap_err();
        assert!(err.to_string().contains("Fragment ids must be unique"), "{err}");
    }
    assert_eq!(list_versions(&store).await.unwrap().len(), 3);
}

#[tokio::test]
async fn a_rewrite_numbers_its_fragments_after_removing_the_old_ones() {
    let dir = tempfile::tempdir().unwrap();
    let store = LocalStore::new(dir.path());
    let base = create(&store).await;
    let (m, _) = on_base(&store, &base, &new_transaction(1, append(3), None))
        .await
        .unwrap();
    assert_eq!(ids(&m), [0, 1, 2, 3]);
    let group = |old: &[u64], new: Vec<pb::DataFragment>| pb::transaction::rewrite::RewriteGroup {
        old_fragments: m.fragments.iter().filter(|f| old.contains(&f.id)).cloned().collect(),
        new_fragments: new,
    };
    // Fragment 1 rewritten into a fragment numbered at commit: it moves to the end.
    let op = Operation::Rewrite(pb::transaction::Rewrite {
        groups: vec![group(&[1], vec![with_id(0)])],
        ..Default::default()
    });
    let (r, _) = on_base(&store, &m, &new_transaction(2, op, None)).await.unwrap();
    assert_eq!(ids(&r), [0, 2, 3, 4]);
    // Chosen ids (one of them an id the rewrite frees) are kept and sorted; planned on
    // version 2, the rewrite lands on top of the one above (other fragments).
    let op = Operation::Rewrite(pb::transaction::Rewrite {
        groups: vec![
            group(&[0], vec![with_id(12)]),
            group(&[2], vec![with_id(2), with_id(11)]),
        ],
        ..Default::default()
    });
    let (r, _) = on_base(&store, &m, &new_transaction(2, op, None)).await.unwrap();
    assert_eq!(ids(&r), [2, 3, 4, 11, 12]);
}
