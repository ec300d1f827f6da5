//! Transactions and the commit protocol.
//!
//! A writer describes its change as a `Transaction` (an operation plus the version it read),
//! writes it to `_transactions/{read_version}-{uuid}.txn`, then tries to create the manifest
//! of the next version with [`lancelet_io::Storage::put_if_absent`]. When another writer took that version
//! first, the transactions committed since our read version are checked against ours: if
//! none conflicts, our operation is applied again on top of the newest manifest (fresh
//! fragment ids) and the commit retried; otherwise the commit fails with
//! [`Error::CommitConflict`]. A manifest only appears once complete, so a writer that dies at
//! any point leaves the dataset at a committed version.

use std::collections::{HashMap, HashSet};
use std::time::Duration;

use prost::Message;

use crate::indices::{carry_indices, decode_index_section};
use crate::manifest::{
    check_field_names, check_legacy_dictionaries, check_writer_flags, decode_manifest, decode_transaction_section,
    encode_manifest_file_setting, set_feature_flags, set_index_flags, FLAG_STABLE_ROW_IDS,
};
use crate::naming::ManifestNaming;
use crate::versions::{list_versions, read_entry, versions_after, write_latest_hint, VersionEntry};
pub use crate::ConflictKind;
use crate::{pb, Error, Result};
use lancelet_io::Storage;

use pb::transaction::Operation;

/// The directory holding transaction files, relative to the dataset root.
pub const TRANSACTIONS_DIR: &str = "_transactions";

/// The library name lancelet records in the manifests it writes.
pub const WRITER_LIBRARY: &str = "lancelet";

/// How a commit behaves.
#[derive(Debug, Clone)]
pub struct CommitOptions {
    /// Attempts after the first that a commit always gets before it may give up.
    pub max_retries: u32,
    /// How long a commit that keeps losing the race for the next version goes on trying
    /// after its `max_retries` attempts. Losing the race is not a conflict: under a burst
    /// of commits a writer may lose many times in a row, and an append that gave up after
    /// a fixed count would fail although nothing conflicts with it.
    pub retry_timeout: Duration,
    /// Manifest naming for a new dataset (an existing one keeps its own).
    pub naming: ManifestNaming,
    /// Storage format recorded for a new dataset (or an overwrite that changes it).
    pub data_format: Option<pb::manifest::DataStorageFormat>,
    /// Give rows move-stable ids (a new dataset only; an existing one keeps its choice).
    pub enable_stable_row_ids: bool,
}

impl Default for CommitOptions {
    fn default() -> Self {
        Self {
            max_retries: 20,
            retry_timeout: Duration::from_secs(300),
            naming: ManifestNaming::V2,
            data_format: None,
            enable_stable_row_ids: false,
        }
    }
}

/// The transaction property pylance 14 stores (and reads) a commit message under.
pub const COMMIT_MESSAGE_KEY: &str = "__lance_commit_message";

/// A new transaction reading `read_version` (0 for a new dataset).
pub fn new_transaction(read_version: u64, operation: Operation, message: Option<&str>) -> pb::Transaction {
    let mut properties = HashMap::new();
    if let Some(m) = message {
        properties.insert(COMMIT_MESSAGE_KEY.to_string(), m.to_string());
    }
    pb::Transaction {
        read_version,
        uuid: uuid::Uuid::new_v4().hyphenated().to_string(),
        tag: String::new(),
        transaction_properties: properties,
        operation: Some(operation),
    }
}

/// The transaction file's name (inside [`TRANSACTIONS_DIR`]).
pub fn transaction_file_name(txn: &pb::Transaction) -> String {
    format!("{}-{}.txn", txn.read_version, txn.uuid)
}

/// A short name of an operation, for messages.
pub fn operation_name(op: Option<&Operation>) -> &'static str {
    match op {
        Some(Operation::Append(_)) => "Append",
        Some(Operation::Delete(_)) => "Delete",
        Some(Operation::Overwrite(_)) => "Overwrite",
        Some(Operation::CreateIndex(_)) => "CreateIndex",
        Some(Operation::Rewrite(_)) => "Rewrite",
        Some(Operation::Merge(_)) => "Merge",
        Some(Operation::Restore(_)) => "Restore",
        Some(Operation::ReserveFragments(_)) => "ReserveFragments",
        Some(Operation::Update(_)) => "Update",
        Some(Operation::Project(_)) => "Project",
        Some(Operation::UpdateConfig(_)) => "UpdateConfig",
        Some(Operation::DataReplacement(_)) => "DataReplacement",
        Some(Operation::UpdateMemWalState(_)) => "UpdateMemWalState",
        Some(Operation::Clone(_)) => "Clone",
        Some(Operation::UpdateBases(_)) => "UpdateBases",
        None => "unknown operation",
    }
}

/// Fragment ids an operation rewrites or removes (`None`: it replaces the whole table).
fn touched_fragments(op: &Operation) -> Option<HashSet<u64>> {
    let ids = |frags: &[pb::DataFragment]| frags.iter().map(|f| f.id).collect::<HashSet<u64>>();
    match op {
        Operation::Append(_)
        | Operation::ReserveFragments(_)
        | Operation::UpdateConfig(_)
        | Operation::CreateIndex(_)
        | Operation::Project(_)
        | Operation::UpdateBases(_) => Some(HashSet::new()),
        Operation::Delete(d) => {
            let mut s = ids(&d.updated_fragments);
            s.extend(d.deleted_fragment_ids.iter().copied());
            Some(s)
        }
        Operation::Update(u) => {
            let mut s = ids(&u.updated_fragments);
            s.extend(u.removed_fragment_ids.iter().copied());
            Some(s)
        }
        Operation::Rewrite(r) => {
            let mut s = ids(&r.old_fragments);
            for g in &r.groups {
                s.extend(g.old_fragments.iter().map(|f| f.id));
            }
            Some(s)
        }
        Operation::DataReplacement(d) => Some(d.replacements.iter().map(|r| r.fragment_id).collect()),
        _ => None,
    }
}

/// Why `mine` cannot be committed after `theirs`, or `None` when both can stand.
pub fn conflict_reason(mine: &Operation, theirs: &Operation) -> Option<String> {
    let (m, t) = (operation_name(Some(mine)), operation_name(Some(theirs)));
    let whole = |op: &Operation| {
        matches!(
            op,
            Operation::Overwrite(_) | Operation::Restore(_) | Operation::Merge(_) | Operation::Clone(_)
        )
    };
    // An index build and new columns commute (pylance 14): the index's field is untouched,
    // or gone (a cast) and the index with it.
    let index_and_columns = matches!(
        (mine, theirs),
        (Operation::CreateIndex(_), Operation::Merge(_)) | (Operation::Merge(_), Operation::CreateIndex(_))
    );
    if index_and_columns {
        return None;
    }
    if whole(mine) || whole(theirs) {
        // Reserving ids never changes data, so it commutes even with a table replacement.
        if matches!(mine, Operation::ReserveFragments(_)) {
            return None;
        }
        // An overwrite replaces whatever it lands on, except another whole replacement
        // (the later one would silently discard it). New rows commute with new columns:
        // they read the new columns as nulls. Both as in pylance 14.
        let replaced = matches!(mine, Operation::Overwrite(_))
            && !matches!(
                theirs,
                Operation::Overwrite(_) | Operation::Restore(_) | Operation::Clone(_)
            );
        let appended = matches!((mine, theirs), (Operation::Append(_), Operation::Merge(_)));
        if replaced || appended {
            return None;
        }
        return Some(format!("a concurrent {t} conflicts with this {m}"));
    }
    if let Some(reason) = index_conflict(mine, theirs) {
        return Some(reason);
    }
    if matches!((mine, theirs), (Operation::Project(_), Operation::Project(_))) {
        // Each carries a whole new schema: applying one over the other would undo it.
        return Some(format!("a concurrent {t} also changed the schema"));
    }
    // A Project carries the whole schema, metadata included: it would undo a concurrent
    // change of the schema's metadata, or be undone by it.
    let schema_meta = |op: &Operation| matches!(op, Operation::UpdateConfig(u) if u.schema_metadata_updates.is_some() || !u.field_metadata_updates.is_empty());
    if (schema_meta(mine) && matches!(theirs, Operation::Project(_)))
        || (schema_meta(theirs) && matches!(mine, Operation::Project(_)))
    {
        return Some(format!("a concurrent {t} also changed the schema"));
    }
    if let (Operation::UpdateConfig(a), Operation::UpdateConfig(b)) = (mine, theirs) {
        if let (Some(x), Some(y)) = (&a.schema_metadata_updates, &b.schema_metadata_updates) {
            if x.replace || y.replace {
                return Some("a concurrent UpdateConfig also replaced the schema metadata".to_string());
            }
        }
        let keys = |c: &pb::transaction::UpdateConfig| {
            let mut k: HashSet<String> = c.upsert_values.keys().cloned().collect();
            k.extend(c.delete_keys.iter().cloned());
            if let Some(u) = &c.config_updates {
                k.extend(u.update_entries.iter().map(|e| e.key.clone()));
            }
            if let Some(u) = &c.schema_metadata_updates {
                k.extend(u.update_entries.iter().map(|e| format!("schema metadata {}", e.key)));
            }
            // Two changes to one field's metadata conflict, whatever their keys.
            k.extend(
                c.field_metadata_updates
                    .keys()
                    .map(|id| format!("metadata of field {id}")),
            );
            k
        };
        let (ka, kb) = (keys(a), keys(b));
        return ka
            .intersection(&kb)
            .next()
            .map(|k| format!("a concurrent UpdateConfig also changed {k:?}"));
    }
    let (Some(a), Some(b)) = (touched_fragments(mine), touched_fragments(theirs)) else {
        return Some(format!("{m} cannot be reconciled with a concurrent {t}"));
    };
    let mut shared: Vec<u64> = a.intersection(&b).copied().collect();
    shared.sort_unstable();
    (!shared.is_empty()).then(|| format!("a concurrent {t} changed fragment(s) {shared:?} that this {m} also changes"))
}

/// The kind of the conflict a concurrent `theirs` causes: a whole-table replacement is not
/// worth retrying on (the table the operation was meant for is gone).
pub fn conflict_kind(theirs: &Operation) -> ConflictKind {
    match theirs {
        Operation::Overwrite(_) | Operation::Restore(_) | Operation::Clone(_) => ConflictKind::TableReplaced,
        _ => ConflictKind::Retryable,
    }
}

/// Conflicts that only index operations have: two builds of indices of one name (or that
/// replace the same index), and an index built on fragments a concurrent rewrite replaced
/// (its row addresses would point into fragments that are gone), or a rewrite of fragments
/// an index built meanwhile covers (it would have to remap that index): pylance 14's rules.
fn index_conflict(mine: &Operation, theirs: &Operation) -> Option<String> {
    let uuids = |v: &[pb::IndexMetadata]| -> HashSet<Vec<u8>> {
        v.iter()
            .filter_map(|i| i.uuid.as_ref().map(|u| u.uuid.to_vec()))
            .collect()
    };
    match (mine, theirs) {
        (Operation::CreateIndex(a), Operation::CreateIndex(b)) => {
            let names: HashSet<&str> = b.new_indices.iter().map(|i| i.name.as_str()).collect();
            if let Some(i) = a.new_indices.iter().find(|i| names.contains(i.name.as_str())) {
                return Some(format!(
                    "a concurrent CreateIndex also built an index named {:?}",
                    i.name
                ));
            }
            let (ra, rb) = (uuids(&a.removed_indices), uuids(&b.removed_indices));
            (!ra.is_disjoint(&rb)).then(|| "a concurrent CreateIndex replaced or dropped the same index".to_string())
        }
        (Operation::CreateIndex(a), Operation::Rewrite(r)) | (Operation::Rewrite(r), Operation::CreateIndex(a)) => {
            let mut old: HashSet<u64> = r.old_fragments.iter().map(|f| f.id).collect();
            for g in &r.groups {
                old.extend(g.old_fragments.iter().map(|f| f.id));
            }
            let covered = a
                .new_indices
                .iter()
                .filter_map(|i| crate::indices::fragment_bitmap(i).ok())
                .any(|b| b.iter().any(|f| old.contains(&u64::from(f))));
            covered.then(|| {
                format!(
                    "a concurrent {} changed fragments of an index {}",
                    operation_name(Some(theirs)),
                    if matches!(mine, Operation::Rewrite(_)) {
                        "built meanwhile"
                    } else {
                        "built on them"
                    }
                )
            })
        }
        _ => None,
    }
}

fn next_fragment_id(m: &pb::Manifest) -> u64 {
    let max_in_list = m.fragments.iter().map(|f| f.id).max();
    match (m.max_fragment_id, max_in_list) {
        (Some(a), Some(b)) => u64::from(a).max(b) + 1,
        (Some(a), None) => u64::from(a) + 1,
        (None, Some(b)) => b + 1,
        (None, None) => 0,
    }
}

fn assign_ids(frags: &[pb::DataFragment], next: &mut u64) -> Vec<pb::DataFragment> {
    frags
        .iter()
        .map(|f| {
            let mut f = f.clone();
            f.id = *next;
            *next += 1;
            f
        })
        .collect()
}

/// `frags` as new fragments of `m`, numbered as pylance 14 numbers them: a fragment with
/// id 0 takes the next id, any other id is the caller's choice and kept; an id `m` (or
/// another new fragment) already has is an error.
fn number_new_fragments(m: &pb::Manifest, frags: &[pb::DataFragment], next: &mut u64) -> Result<Vec<pb::DataFragment>> {
    let mut seen: HashSet<u64> = m.fragments.iter().map(|f| f.id).collect();
    let mut out = Vec::with_capacity(frags.len());
    for f in frags {
        let mut f = f.clone();
        if f.id == 0 {
            f.id = *next;
            *next += 1;
        }
        if u32::try_from(f.id).is_err() {
            return Err(Error::InvalidArgument(format!(
                "fragment id {} does not fit the 32 bits of a row address",
                f.id
            )));
        }
        if !seen.insert(f.id) {
            return Err(Error::InvalidArgument(format!(
                "The commit would produce two fragments with id {}. Fragment ids must be unique.",
                f.id
            )));
        }
        out.push(f);
    }
    Ok(out)
}

/// Adds `new` fragments to `m`, which then lists its fragments by id (as pylance 14 does
/// after an append, update or rewrite).
fn add_fragments(m: &mut pb::Manifest, new: Vec<pb::DataFragment>) {
    m.fragments.extend(new);
    m.fragments.sort_by_key(|f| f.id);
}

/// New rows (appended or overwritten) have no lineage yet, whatever their fragments claim:
/// the commit gives them ids and versions.
fn new_rows(mut frags: Vec<pb::DataFragment>) -> Vec<pb::DataFragment> {
    for f in &mut frags {
        f.row_id_sequence = None;
        f.created_at_version_sequence = None;
        f.last_updated_at_version_sequence = None;
    }
    frags
}

fn apply_update_map<V: From<String>>(target: &mut HashMap<String, V>, update: &pb::transaction::UpdateMap) {
    if update.replace {
        target.clear();
    }
    for e in &update.update_entries {
        match &e.value {
            Some(v) => {
                target.insert(e.key.clone(), V::from(v.clone()));
            }
            None => {
                target.remove(&e.key);
            }
        }
    }
}

fn now() -> prost_types::Timestamp {
    let d = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    prost_types::Timestamp {
        seconds: i64::try_from(d.as_secs()).unwrap_or(i64::MAX),
        nanos: i32::try_from(d.subsec_nanos()).unwrap_or(0),
    }
}

/// Drops the fragments `removed` and swaps in `updated` ones (same ids); a conflict when
/// one of them is gone from `m` (a concurrent delete or rewrite took it).
fn replace_fragments(
    m: &mut pb::Manifest,
    removed: &[u64],
    updated: &[pb::DataFragment],
    store: &dyn Storage,
) -> Result<()> {
    let removed: HashSet<u64> = removed.iter().copied().collect();
    let updated: HashMap<u64, &pb::DataFragment> = updated.iter().map(|f| (f.id, f)).collect();
    for id in removed.iter().chain(updated.keys()) {
        if !m.fragments.iter().any(|f| f.id == *id) {
            return Err(Error::CommitConflict {
                path: store.root_display(),
                message: format!("Retryable commit conflict: fragment {id} no longer exists"),
                kind: ConflictKind::Retryable,
            });
        }
    }
    m.fragments.retain(|f| !removed.contains(&f.id));
    for f in &mut m.fragments {
        if let Some(n) = updated.get(&f.id) {
            *f = (*n).clone();
        }
    }
    Ok(())
}

/// Swaps data files in place (a DataReplacement): each group's new file takes the place of
/// the fragment's file holding exactly the same fields, or is added when no file holds any
/// of them. Row counts and deletions are unchanged.
fn replace_data_files(m: &mut pb::Manifest, d: &pb::transaction::DataReplacement, store: &dyn Storage) -> Result<()> {
    for r in &d.replacements {
        let file = r.new_file.as_ref().ok_or_else(|| {
            Error::InvalidArgument(format!("DataReplacement of fragment {} has no file", r.fragment_id))
        })?;
        let Some(frag) = m.fragments.iter_mut().find(|f| f.id == r.fragment_id) else {
            return Err(Error::CommitConflict {
                path: store.root_display(),
                message: format!("Retryable commit conflict: fragment {} no longer exists", r.fragment_id),
                kind: ConflictKind::Retryable,
            });
        };
        let new_fields: HashSet<i32> = file.fields.iter().copied().collect();
        if let Some(i) = frag.files.iter().position(|x| x.fields == file.fields) {
            frag.files[i] = file.clone();
        } else if frag
            .files
            .iter()
            .all(|x| x.fields.iter().all(|f| !new_fields.contains(f)))
        {
            frag.files.push(file.clone());
        } else {
            return Err(Error::InvalidArgument(format!(
                "DataReplacement: no data file of fragment {} holds exactly fields {:?}",
                r.fragment_id, file.fields
            )));
        }
    }
    Ok(())
}

/// The index entries a manifest names, read from its file (none without an index section).
pub async fn read_indices(
    store: &dyn Storage,
    naming: ManifestNaming,
    m: &pb::Manifest,
) -> Result<Vec<pb::IndexMetadata>> {
    if m.index_section.is_none() {
        return Ok(Vec::new());
    }
    let path = naming.relative_path(m.version);
    let bytes = store.read(&path).await?;
    decode_index_section(&bytes, m, &path)
}

/// Gives the entries of `new` (added by a CreateIndex) that name no files, and live in the
/// dataset's own `_indices/`, the files their directory holds, as pylance 14 records them in
/// the manifest (the transaction keeps the entries as given).
async fn list_index_files(store: &dyn Storage, indices: &mut [pb::IndexMetadata], new: &[pb::IndexMetadata]) {
    for idx in indices.iter_mut() {
        if !idx.files.is_empty() || idx.base_id.is_some() || !new.iter().any(|n| n.uuid == idx.uuid) {
            continue;
        }
        let Ok(dir) = crate::indices::index_dir(idx) else {
            continue;
        };
        let mut listed = store.list_meta(&dir).await.unwrap_or_default();
        listed.sort_by(|a, b| a.name.cmp(&b.name));
        idx.files = listed
            .into_iter()
            .map(|f| pb::IndexFile {
                path: f.name,
                size_bytes: f.size,
            })
            .collect();
    }
}

/// [`apply`], plus the index entries of the new version (from `base_indices`, those of
/// `base`); the manifest's `index_section` is set when there are any.
pub async fn apply_with_indices(
    store: &dyn Storage,
    base: Option<&pb::Manifest>,
    base_indices: &[pb::IndexMetadata],
    txn: &pb::Transaction,
    version: u64,
    opts: &CommitOptions,
) -> Result<(pb::Manifest, Vec<pb::IndexMetadata>)> {
    let mut m = apply(store, base, txn, version, opts).await?;
    let op = txn
        .operation
        .as_ref()
        .ok_or_else(|| Error::InvalidArgument("transaction has no operation".into()))?;
    let restored = match op {
        Operation::Restore(r) => {
            let entry = list_versions(store)
                .await?
                .into_iter()
                .find(|e| e.version == r.version)
                .ok_or_else(|| Error::VersionNotFound {
                    path: store.root_display(),
                    version: r.version,
                })?;
            let bytes = store.read(&entry.path).await?;
            let old = decode_manifest(&bytes, &entry.path)?;
            Some(decode_index_section(&bytes, &old, &entry.path)?)
        }
        _ => None,
    };
    let mut indices = carry_indices(base_indices, op, &m, restored)?;
    if let Operation::CreateIndex(c) = op {
        list_index_files(store, &mut indices, &c.new_indices).await;
    }
    m.index_section = (!indices.is_empty()).then_some(0);
    set_index_flags(&mut m, &indices);
    Ok((m, indices))
}

/// The manifest of `version` that results from applying `txn` on top of `base` (the
/// latest committed manifest, or `None` for a new dataset).
pub async fn apply(
    store: &dyn Storage,
    base: Option<&pb::Manifest>,
    txn: &pb::Transaction,
    version: u64,
    opts: &CommitOptions,
) -> Result<pb::Manifest> {
    let op = txn
        .operation
        .as_ref()
        .ok_or_else(|| Error::InvalidArgument("transaction has no operation".into()))?;
    let mut m = base.cloned().unwrap_or_default();
    if base.is_none() && !matches!(op, Operation::Overwrite(_)) {
        return Err(Error::not_found(store.root_display()));
    }
    let mut next = base.map(next_fragment_id).unwrap_or(0);
    match op {
        Operation::Append(a) => {
            let new = new_rows(number_new_fragments(&m, &a.fragments, &mut next)?);
            // 2.2 files holding blob v1 columns turn them into blob v2 (as pylance).
            crate::blob_fields::upgrade_appended_blob_fields(&mut m.fields, &new);
            add_fragments(&mut m, new);
        }
        Operation::Overwrite(o) => {
            m.fragments = new_rows(assign_ids(&o.fragments, &mut next));
            m.fields = o.schema.clone();
            m.schema_metadata = o.schema_metadata.clone();
            m.config.extend(o.config_upsert_values.clone());
            m.index_section = None;
            crate::bases::add_bases(&mut m.base_paths, &o.initial_bases)?;
            if let Some(df) = &opts.data_format {
                m.data_format = Some(df.clone());
            }
        }
        Operation::Delete(d) => {
            replace_fragments(&mut m, &d.deleted_fragment_ids, &d.updated_fragments, store)?;
        }
        Operation::Update(u) => {
            replace_fragments(&mut m, &u.removed_fragment_ids, &u.updated_fragments, store)?;
            let new = number_new_fragments(&m, &u.new_fragments, &mut next)?;
            add_fragments(&mut m, new);
        }
        Operation::Rewrite(r) => {
            let flat = pb::transaction::rewrite::RewriteGroup {
                old_fragments: r.old_fragments.clone(),
                new_fragments: r.new_fragments.clone(),
            };
            let groups = if r.groups.is_empty() {
                std::slice::from_ref(&flat)
            } else {
                &r.groups[..]
            };
            for g in groups {
                // The fragments rewritten must be exactly as they were read.
                for old in &g.old_fragments {
                    if m.fragments.iter().find(|f| f.id == old.id) != Some(old) {
                        return Err(Error::CommitConflict {
                            path: store.root_display(),
                            message: format!(
                                "Retryable commit conflict: fragment {} changed while it was being rewritten",
                                old.id
                            ),
                            kind: ConflictKind::Retryable,
                        });
                    }
                }
                let gone: HashSet<u64> = g.old_fragments.iter().map(|f| f.id).collect();
                m.fragments.retain(|f| !gone.contains(&f.id));
            }
            // The new fragments take their ids once every group's old ones are gone (a new
            // fragment may keep an old id), and the list is ordered by id, as in pylance 14:
            // rewritten rows move to where their new ids put them.
            for g in groups {
                let new = number_new_fragments(&m, &g.new_fragments, &mut next)?;
                add_fragments(&mut m, new);
            }
        }
        Operation::Restore(r) => {
            let entries = list_versions(store).await?;
            let entry = entries
                .iter()
                .find(|e| e.version == r.version)
                .ok_or_else(|| Error::VersionNotFound {
                    path: store.root_display(),
                    version: r.version,
                })?;
            let old = read_entry(store, entry).await?;
            m.fragments = old.fragments;
            m.fields = old.fields;
            m.schema_metadata = old.schema_metadata;
            m.config = old.config;
            m.table_metadata = old.table_metadata;
            m.data_format = old.data_format;
            m.index_section = None;
        }
        Operation::ReserveFragments(r) => {
            next += u64::from(r.num_fragments);
        }
        Operation::Merge(mg) => {
            // New columns: every fragment gains data files, the schema gains fields.
            let ids: HashSet<u64> = m.fragments.iter().map(|f| f.id).collect();
            let theirs: HashSet<u64> = mg.fragments.iter().map(|f| f.id).collect();
            if ids != theirs {
                return Err(Error::CommitConflict {
                    path: store.root_display(),
                    message: "Retryable commit conflict: the fragments changed since the new columns were computed"
                        .into(),
                    kind: ConflictKind::Retryable,
                });
            }
            m.fragments = mg.fragments.clone();
            m.fields = mg.schema.clone();
            m.schema_metadata = mg.schema_metadata.clone();
        }
        Operation::Project(p) => {
            m.fields = p.schema.clone();
        }
        Operation::DataReplacement(d) => {
            replace_data_files(&mut m, d, store)?;
        }
        Operation::CreateIndex(_) => {
            // Only the index section changes (see `indices::carry_indices`).
        }
        Operation::UpdateBases(u) => {
            crate::bases::add_bases(&mut m.base_paths, &u.new_bases)?;
        }
        Operation::UpdateConfig(u) => {
            m.config.extend(u.upsert_values.clone());
            for k in &u.delete_keys {
                m.config.remove(k);
            }
            if let Some(c) = &u.config_updates {
                apply_update_map(&mut m.config, c);
            }
            if let Some(t) = &u.table_metadata_updates {
                apply_update_map(&mut m.table_metadata, t);
            }
            if let Some(s) = &u.schema_metadata_updates {
                apply_update_map(&mut m.schema_metadata, s);
            }
            for (id, update) in &u.field_metadata_updates {
                let field = m.fields.iter_mut().find(|f| f.id == *id).ok_or_else(|| {
                    Error::InvalidArgument(format!(
                        "field metadata update of field id {id}, which the schema does not have"
                    ))
                })?;
                apply_update_map(&mut field.metadata, update);
            }
        }
        other => {
            return Err(Error::Unsupported(format!(
                "committing a {} transaction",
                operation_name(Some(other))
            )))
        }
    }
    if matches!(
        op,
        Operation::Overwrite(_) | Operation::Merge(_) | Operation::Project(_)
    ) {
        let before: HashSet<(i32, &str)> = base
            .map(|b| b.fields.iter().map(|f| (f.id, f.name.as_str())).collect())
            .unwrap_or_default();
        check_field_names(&m.fields, |f| !before.contains(&(f.id, f.name.as_str())))?;
    }
    let max_id = m.fragments.iter().map(|f| f.id).max();
    let floor = base.and_then(|b| b.max_fragment_id.map(u64::from));
    let reserved = next.checked_sub(1);
    m.max_fragment_id = [max_id, floor, reserved.filter(|_| next > 0)]
        .into_iter()
        .flatten()
        .max()
        .map(|v| u32::try_from(v).unwrap_or(u32::MAX));
    m.version = version;
    m.timestamp = Some(now());
    m.tag = String::new();
    m.transaction_file = transaction_file_name(txn);
    m.transaction_section = None;
    m.writer_version = Some(pb::manifest::WriterVersion {
        library: WRITER_LIBRARY.to_string(),
        version: env!("CARGO_PKG_VERSION").to_string(),
        prerelease: None,
        build_metadata: None,
    });
    if m.data_format.is_none() {
        m.data_format = opts.data_format.clone();
    }
    let stable = match base {
        Some(b) => b.reader_feature_flags & FLAG_STABLE_ROW_IDS != 0,
        None => opts.enable_stable_row_ids,
    };
    if stable {
        m.reader_feature_flags |= FLAG_STABLE_ROW_IDS;
        m.writer_feature_flags |= FLAG_STABLE_ROW_IDS;
        crate::rowids::assign_lineage(store, &mut m, base, version, matches!(op, Operation::Merge(_))).await?;
    }
    set_feature_flags(&mut m);
    Ok(m)
}

/// The transaction that produced a manifest: inline in the manifest file when it carries
/// one, else from its transaction file.
async fn read_transaction(
    store: &dyn Storage,
    manifest_bytes: &[u8],
    m: &pb::Manifest,
) -> Result<Option<pb::Transaction>> {
    if let Some(t) = decode_transaction_section(manifest_bytes, m) {
        return Ok(Some(t));
    }
    if m.transaction_file.is_empty() || m.transaction_file.contains('/') {
        return Ok(None);
    }
    let path = format!("{TRANSACTIONS_DIR}/{}", m.transaction_file);
    match store.read(&path).await {
        Ok(bytes) => Ok(pb::Transaction::decode(bytes).ok()),
        Err(lancelet_io::Error::NotFound { .. }) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

/// Checks `txn` against every version committed after `from` up to `to` (inclusive).
/// Returns the version that *is* `txn` (same uuid), when a commit of ours landed although
/// its answer was lost.
async fn check_since(
    store: &dyn Storage,
    entries: &[VersionEntry],
    txn: &pb::Transaction,
    from: u64,
    to: u64,
) -> Result<Option<u64>> {
    let mine = txn
        .operation
        .as_ref()
        .ok_or_else(|| Error::InvalidArgument("transaction has no operation".into()))?;
    for v in from + 1..=to {
        let conflict_of = |message: String, kind: ConflictKind| Error::CommitConflict {
            path: store.root_display(),
            message: match kind {
                // pylance's words, which programs match on.
                ConflictKind::Retryable => {
                    format!("Retryable commit conflict for version {v}: it was committed concurrently: {message}")
                }
                ConflictKind::TableReplaced => {
                    format!("Commit conflict for version {v}: it was committed concurrently: {message}")
                }
            },
            kind,
        };
        let conflict = |message: String| conflict_of(message, ConflictKind::Retryable);
        let Some(entry) = entries.iter().find(|e| e.version == v) else {
            return Err(conflict("its manifest is missing".into()));
        };
        let bytes = store.read(&entry.path).await?;
        let m = decode_manifest(&bytes, &entry.path)?;
        let Some(theirs) = read_transaction(store, &bytes, &m).await? else {
            return Err(conflict("its transaction cannot be read, so it may conflict".into()));
        };
        if theirs.uuid == txn.uuid {
            return Ok(Some(v));
        }
        match theirs.operation.as_ref() {
            None => return Err(conflict("its operation is unknown to lancelet".into())),
            Some(op) => {
                if let Some(reason) = conflict_reason(mine, op) {
                    return Err(conflict_of(reason, conflict_kind(op)));
                }
            }
        }
    }
    Ok(None)
}

/// Commits `txn`, read at `base` (`None` for a new dataset): writes its transaction file,
/// then the next manifest, rebasing over concurrent commits that do not conflict.
/// Returns the new manifest and the naming scheme it was written with.
///
/// A commit that fails (a conflict, or giving up) removes its transaction file: nothing
/// refers to it.
pub async fn commit(
    store: &dyn Storage,
    base: Option<(&pb::Manifest, ManifestNaming)>,
    txn: &pb::Transaction,
    opts: &CommitOptions,
) -> Result<(pb::Manifest, ManifestNaming)> {
    commit_when(store, base, txn, opts, || Ok(())).await
}

/// [`commit`], calling `ready` just before the first manifest is written: a writer whose
/// data files are still being synced to disk (on other threads) lets the syncs overlap
/// the transaction file's write and the preparation of the manifest, and waits for them
/// in `ready`, so that no manifest ever names a file that is not on disk. An error of
/// `ready` fails the commit before anything is published.
pub async fn commit_when(
    store: &dyn Storage,
    base: Option<(&pb::Manifest, ManifestNaming)>,
    txn: &pb::Transaction,
    opts: &CommitOptions,
    ready: impl FnOnce() -> Result<()> + Send,
) -> Result<(pb::Manifest, ManifestNaming)> {
    let txn_path = format!("{TRANSACTIONS_DIR}/{}", transaction_file_name(txn));
    store.put(&txn_path, txn.encode_to_vec().into()).await?;
    let mut manifest_may_exist = false;
    let result = commit_attempts(store, base, txn, opts, &txn_path, &mut manifest_may_exist, ready).await;
    if result.is_err() && !manifest_may_exist {
        // No manifest names this transaction (a conflict is found before the manifest is
        // written, and a lost race writes none), so its file is an orphan. After a failed
        // put of the manifest it may have landed all the same, so the file stays.
        let _ = store.delete(&txn_path).await;
    }
    result
}

async fn commit_attempts(
    store: &dyn Storage,
    base: Option<(&pb::Manifest, ManifestNaming)>,
    txn: &pb::Transaction,
    opts: &CommitOptions,
    txn_path: &str,
    manifest_may_exist: &mut bool,
    ready: impl FnOnce() -> Result<()>,
) -> Result<(pb::Manifest, ManifestNaming)> {
    let started = std::time::Instant::now();
    let mut checked = base.map(|(m, _)| m.version).unwrap_or(0);
    // The manifest to commit on top of: the base as given (not copied: a manifest of
    // thousands of fragments costs to copy), or the newest one read since.
    let mut current: Option<(std::borrow::Cow<'_, pb::Manifest>, ManifestNaming)> =
        base.map(|(m, n)| (std::borrow::Cow::Borrowed(m), n));
    let mut attempt: u32 = 0;
    let mut base_indices_of: Option<(u64, Vec<pb::IndexMetadata>)> = None;
    let mut ready = Some(ready);
    loop {
        // Only the versions committed since the one checked last (found without listing
        // `_versions/` where a check is cheap).
        let naming_now = current.as_ref().map(|(_, n)| *n).unwrap_or(opts.naming);
        let entries = versions_after(store, checked, naming_now).await?;
        if let Some(latest) = entries.last() {
            if latest.version > checked {
                if let Some(ours) = check_since(store, &entries, txn, checked, latest.version).await? {
                    let entry = entries
                        .iter()
                        .find(|e| e.version == ours)
                        .ok_or_else(|| Error::VersionNotFound {
                            path: store.root_display(),
                            version: ours,
                        })?;
                    return Ok((read_entry(store, entry).await?, entry.naming));
                }
                let m = read_entry(store, latest).await?;
                checked = latest.version;
                current = Some((std::borrow::Cow::Owned(m), latest.naming));
            }
        }
        if let Some((m, _)) = &current {
            check_writer_flags(m, &store.root_display())?;
        }
        let naming = current.as_ref().map(|(_, n)| *n).unwrap_or(opts.naming);
        let version = checked + 1;
        let base_indices = match &current {
            Some((m, n)) if m.index_section.is_some() => {
                if base_indices_of.as_ref().map(|(v, _)| *v) != Some(m.version) {
                    base_indices_of = Some((m.version, read_indices(store, *n, m).await?));
                }
                base_indices_of.as_ref().map(|(_, i)| i.clone()).unwrap_or_default()
            }
            _ => Vec::new(),
        };
        let (mut manifest, indices) = apply_with_indices(
            store,
            current.as_ref().map(|(m, _)| m.as_ref()),
            &base_indices,
            txn,
            version,
            opts,
        )
        .await?;
        check_legacy_dictionaries(&manifest, &store.root_display())?;
        let bytes = encode_manifest_file_setting(&mut manifest, txn, &indices);
        if let Some(ready) = ready.take() {
            ready()?;
        }
        let put = match store.put_if_absent(&naming.relative_path(version), bytes.into()).await {
            Ok(put) => put,
            Err(e) => {
                *manifest_may_exist = true;
                // The put may have landed though its answer was lost: then we are done.
                if let Ok(Some(found)) = landed_as(store, txn, version).await {
                    write_latest_hint(store, version).await;
                    return Ok(found);
                }
                return Err(e.into());
            }
        };
        if put {
            write_latest_hint(store, version).await;
            return Ok((manifest, naming));
        }
        attempt = attempt.saturating_add(1);
        if attempt > opts.max_retries && started.elapsed() >= opts.retry_timeout {
            return Err(Error::CommitConflict {
                path: store.root_display(),
                message: format!(
                    "Commit conflict: gave up after {attempt} attempts in {:.1} s: other writers kept committing first \
                     (the transaction {txn_path} was removed)",
                    started.elapsed().as_secs_f64()
                ),
                kind: ConflictKind::Retryable,
            });
        }
        tokio::time::sleep(backoff(attempt)).await;
    }
}

/// The manifest of `version` when it is the one `txn` committed (a put whose answer was
/// lost may have landed), else `None`.
async fn landed_as(
    store: &dyn Storage,
    txn: &pb::Transaction,
    version: u64,
) -> Result<Option<(pb::Manifest, ManifestNaming)>> {
    let entries = list_versions(store).await?;
    let Some(entry) = entries.iter().find(|e| e.version == version) else {
        return Ok(None);
    };
    let bytes = store.read(&entry.path).await?;
    let m = decode_manifest(&bytes, &entry.path)?;
    let theirs = read_transaction(store, &bytes, &m).await?;
    Ok(theirs.filter(|t| t.uuid == txn.uuid).map(|_| (m, entry.naming)))
}

/// The pause before the next attempt after losing the race for a version.
///
/// Losing means another writer has just committed, so the next version is free *now*: a
/// long pause only lets the winner commit again and again (with exponential backoff to
/// 500 ms one appender made 124 commits while its rival made 3,234, and some of its
/// appends gave up). So the pause stays short, grows slowly to 50 ms, and is drawn
/// uniformly below that cap (full jitter) so that writers that lost together spread out.
fn backoff(attempt: u32) -> Duration {
    let cap_us = (1_000u64 * u64::from(attempt.min(50))).clamp(1_000, 50_000);
    let draw = (uuid::Uuid::new_v4().as_u128() % u128::from(cap_us)) as u64;
    Duration::from_micros(draw)
}
