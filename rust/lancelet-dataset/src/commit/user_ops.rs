//! Operations planned and written elsewhere, committed as given: the `LanceOperation` kinds
//! pylance users pass to `LanceDataset.commit` (Delete, Update, Merge, Project, Restore,
//! DataReplacement, Rewrite, CreateIndex, UpdateConfig), with their transaction properties; the
//! transaction that produced a version (`read_transaction`); and deleting the rows of one
//! fragment without committing (`LanceFragment.delete`, whose result a Delete commits).
//!
//! Fragments come from outside (possibly another machine or library), so each one is checked
//! against the version it was planned on: a fragment that the operation says it changes
//! must exist there; data files must have safe paths, the dataset's file format and field
//! ids the (new) schema knows. A changed fragment keeps the lineage (row ids, versions) of
//! the fragment it replaces. The new fragments of a Rewrite on a dataset with stable row
//! ids must carry the row ids of the rows they hold (`row_id_meta`), exactly those of the
//! old fragments' live rows; the rows keep the versions they had.

use std::collections::{HashMap, HashSet};

use lancelet_proto::pbfile;
use lancelet_table::commit::{CommitOptions, TRANSACTIONS_DIR};
use lancelet_table::pb;
use lancelet_table::pb::transaction::Operation;
use lancelet_table::rowids::{fragment_row_ids, fragment_versions, set_versions};
use prost::Message;

use crate::modify::delete::row_hits;
use crate::scan::{Columns, ScanOptions};
use crate::{Dataset, Error, Result, VersionRef};

/// An operation planned by the caller (fragments written and deletion files made already).
#[derive(Debug, Clone)]
pub enum UserOperation {
    /// New deletion files for `updated_fragments`; `deleted_fragment_ids` are dropped whole.
    Delete {
        /// Fragments with their new deletion file (same ids, same data files).
        updated_fragments: Vec<pb::DataFragment>,
        /// Fragments whose every row is deleted.
        deleted_fragment_ids: Vec<u64>,
        /// The predicate, recorded in the transaction.
        predicate: String,
    },
    /// Rows rewritten: fragments removed or changed, new fragments added.
    Update {
        /// Fragments dropped whole.
        removed_fragment_ids: Vec<u64>,
        /// Fragments with new deletion files (or data files).
        updated_fragments: Vec<pb::DataFragment>,
        /// Fragments of new rows (id 0 is numbered at commit, other ids are kept).
        new_fragments: Vec<pb::DataFragment>,
        /// Field ids whose values changed in `updated_fragments`.
        fields_modified: Vec<u32>,
    },
    /// New columns: every fragment of the dataset with its new data files, and the schema.
    Merge {
        /// Every fragment of the version read (same ids), with the new files added.
        fragments: Vec<pb::DataFragment>,
        /// The whole new schema.
        schema: Vec<pbfile::Field>,
    },
    /// A new schema over the same data (drop, rename, reorder).
    Project {
        /// The whole new schema.
        schema: Vec<pbfile::Field>,
    },
    /// The content of an earlier version becomes the newest.
    Restore {
        /// The version restored.
        version: u64,
    },
    /// Data files swapped for files of the same fields: `(fragment id, new file)`.
    DataReplacement {
        /// One new file per fragment.
        replacements: Vec<(u64, pb::DataFile)>,
    },
    /// Fragments rewritten into others holding the same live rows (compaction).
    Rewrite {
        /// `(old fragments, new fragments)` per group.
        groups: Vec<(Vec<pb::DataFragment>, Vec<pb::DataFragment>)>,
        /// Indexes the caller remapped onto the new fragments.
        rewritten_indices: Vec<pb::transaction::rewrite::RewrittenIndex>,
    },
    /// Index segments built elsewhere (their files written) added, others removed.
    CreateIndex {
        /// Entries added.
        new_indices: Vec<pb::IndexMetadata>,
        /// Entries removed (by uuid; ones the dataset does not have are ignored).
        removed_indices: Vec<pb::IndexMetadata>,
    },
    /// Dataset configuration and table metadata changes.
    UpdateConfig {
        /// Changes to the configuration.
        config: Option<pb::transaction::UpdateMap>,
        /// Changes to the table metadata.
        table_metadata: Option<pb::transaction::UpdateMap>,
        /// Changes to the schema metadata.
        schema_metadata: Option<pb::transaction::UpdateMap>,
    },
}

/// Lance fields for an Arrow schema, with the given field ids (depth-first, parents before
/// children, as [`lancelet_file::schema::to_lance_fields`] numbers them); `None` numbers them
/// from 0 in that order, as pylance's `LanceSchema.from_pyarrow` does.
pub fn fields_with_ids(schema: &arrow_schema::Schema, ids: Option<&[i32]>) -> Result<Vec<pbfile::Field>> {
    let mut fields = lancelet_file::schema::to_lance_fields(schema)?;
    if let Some(ids) = ids {
        if ids.len() != fields.len() {
            return Err(Error::InvalidArgument(format!(
                "the schema has {} fields (children included) but {} field ids were given",
                fields.len(),
                ids.len()
            )));
        }
        let mut seen = HashSet::new();
        if let Some(dup) = ids.iter().find(|id| **id < 0 || !seen.insert(**id)) {
            return Err(Error::InvalidArgument(format!(
                "field id {dup} is negative or given twice"
            )));
        }
        for f in &mut fields {
            let old = usize::try_from(f.id).unwrap_or(0);
            f.id = ids[old];
            if f.parent_id >= 0 {
                f.parent_id = ids[usize::try_from(f.parent_id).unwrap_or(0)];
            }
        }
    }
    Ok(fields)
}

/// The field ids of `fields` in depth-first order (the order [`fields_with_ids`] takes).
pub fn depth_first_ids(fields: &[pbfile::Field]) -> Vec<i32> {
    fn visit(fields: &[pbfile::Field], parent: i32, out: &mut Vec<i32>) {
        for f in fields.iter().filter(|f| f.parent_id == parent) {
            out.push(f.id);
            visit(fields, f.id, out);
        }
    }
    let mut out = Vec::with_capacity(fields.len());
    visit(fields, -1, &mut out);
    out
}

/// The lineage (row ids, created/updated versions) of `from` copied onto `to`: a changed
/// fragment holds the same rows, whatever lineage its metadata claims.
fn keep_lineage(to: &mut pb::DataFragment, from: &pb::DataFragment) {
    to.row_id_sequence = from.row_id_sequence.clone();
    to.created_at_version_sequence = from.created_at_version_sequence.clone();
    to.last_updated_at_version_sequence = from.last_updated_at_version_sequence.clone();
}

/// New fragments whose rows get their lineage at commit.
fn without_lineage(mut frags: Vec<pb::DataFragment>) -> Vec<pb::DataFragment> {
    for f in &mut frags {
        f.row_id_sequence = None;
        f.created_at_version_sequence = None;
        f.last_updated_at_version_sequence = None;
    }
    frags
}

impl Dataset {
    /// Checks data files from outside: safe paths, this dataset's file format, field ids in
    /// `known`.
    fn check_files(&self, files: &[pb::DataFile], known: &HashSet<i32>, what: &str) -> Result<()> {
        let version = self.data_storage_version();
        for d in files {
            crate::safe_relative(&d.path)?;
            if let Some(id) = d.fields.iter().find(|id| !known.contains(id)) {
                return Err(Error::SchemaMismatch(format!(
                    "{what}: data file {} holds field id {id}, which the schema does not have",
                    d.path
                )));
            }
            let v = format!("{}.{}", d.file_major_version, d.file_minor_version);
            if v != version {
                return Err(Error::Unsupported(format!(
                    "{what}: data file {} has format {v} but the dataset uses {version}",
                    d.path
                )));
            }
        }
        Ok(())
    }

    /// The fragment of this version that `f` changes, with `f`'s files checked.
    fn changed_fragment(&self, f: &pb::DataFragment, known: &HashSet<i32>, kind: &str) -> Result<pb::DataFragment> {
        let old = self.fragment(f.id).map_err(|_| {
            Error::InvalidArgument(format!(
                "{kind}: fragment {} is not in version {} of the dataset",
                f.id,
                self.version()
            ))
        })?;
        if f.files.is_empty() {
            return Err(Error::InvalidArgument(format!(
                "{kind}: fragment {} has no data files",
                f.id
            )));
        }
        // Files the fragment already has may hold fields dropped from the schema since.
        let fresh: Vec<pb::DataFile> = f
            .files
            .iter()
            .filter(|d| !old.files.iter().any(|o| o.path == d.path && o.fields == d.fields))
            .cloned()
            .collect();
        self.check_files(&fresh, known, kind)?;
        if f.physical_rows != old.physical_rows {
            return Err(Error::InvalidArgument(format!(
                "{kind}: fragment {} has {} rows but the dataset's has {}",
                f.id, f.physical_rows, old.physical_rows
            )));
        }
        if let Some(d) = &f.deletion_file {
            if d.num_deleted_rows >= f.physical_rows {
                return Err(Error::InvalidArgument(format!(
                    "{kind}: fragment {} would have no live row: list its id as deleted/removed instead",
                    f.id
                )));
            }
        }
        let mut out = f.clone();
        keep_lineage(&mut out, old);
        Ok(out)
    }

    fn check_new_fragments(&self, frags: &[pb::DataFragment], known: &HashSet<i32>, kind: &str) -> Result<()> {
        for f in frags {
            if f.files.is_empty() || f.physical_rows == 0 {
                return Err(Error::InvalidArgument(format!(
                    "{kind}: new fragment {} has no data files or no rows",
                    f.id
                )));
            }
            if f.deletion_file.is_some() {
                return Err(Error::InvalidArgument(format!(
                    "{kind}: new fragment {} has a deletion file (new fragments have no deleted rows)",
                    f.id
                )));
            }
            self.check_files(&f.files, known, kind)?;
        }
        Ok(())
    }

    /// The table operation for `op`, checked against this version (the one it was planned on).
    pub async fn user_operation(&self, op: UserOperation) -> Result<Operation> {
        let known: HashSet<i32> = self.manifest().fields.iter().map(|f| f.id).collect();
        Ok(match op {
            UserOperation::Delete {
                updated_fragments,
                deleted_fragment_ids,
                predicate,
            } => {
                let mut updated = Vec::with_capacity(updated_fragments.len());
                for f in &updated_fragments {
                    let mut new = self.changed_fragment(f, &known, "Delete")?;
                    let old = self.fragment(f.id)?;
                    if new.files != old.files {
                        return Err(Error::InvalidArgument(format!(
                            "Delete: fragment {} has other data files than the dataset's (a delete only changes deletion files)",
                            f.id
                        )));
                    }
                    new.files = old.files.clone();
                    updated.push(new);
                }
                for id in &deleted_fragment_ids {
                    self.fragment(*id)?;
                }
                Operation::Delete(pb::transaction::Delete {
                    updated_fragments: updated,
                    deleted_fragment_ids,
                    predicate,
                })
            }
            UserOperation::Update {
                removed_fragment_ids,
                updated_fragments,
                new_fragments,
                fields_modified,
            } => {
                for id in &removed_fragment_ids {
                    self.fragment(*id)?;
                }
                let updated = updated_fragments
                    .iter()
                    .map(|f| self.changed_fragment(f, &known, "Update"))
                    .collect::<Result<Vec<_>>>()?;
                self.check_new_fragments(&new_fragments, &known, "Update")?;
                let new_fragments = without_lineage(new_fragments);
                if let Some(bad) = fields_modified.iter().find(|id| !known.contains(&(**id as i32))) {
                    return Err(Error::InvalidArgument(format!(
                        "Update: fields_modified names field id {bad}, which the schema does not have"
                    )));
                }
                Operation::Update(pb::transaction::Update {
                    removed_fragment_ids,
                    updated_fragments: updated,
                    new_fragments,
                    fields_modified,
                    ..Default::default()
                })
            }
            UserOperation::Merge { fragments, schema } => {
                self.check_schema(&schema)?;
                let mine: HashSet<u64> = self.fragments().iter().map(|f| f.id).collect();
                let theirs: HashSet<u64> = fragments.iter().map(|f| f.id).collect();
                if mine != theirs || fragments.len() != theirs.len() {
                    return Err(Error::InvalidArgument(format!(
                        "Merge: the fragments must be exactly the {} fragments of version {} (with their new files)",
                        mine.len(),
                        self.version()
                    )));
                }
                let new_known: HashSet<i32> = schema.iter().map(|f| f.id).collect();
                let frags = fragments
                    .iter()
                    .map(|f| {
                        let mut out = self.changed_fragment(f, &new_known, "Merge")?;
                        out.deletion_file = self.fragment(f.id)?.deletion_file;
                        Ok(out)
                    })
                    .collect::<Result<Vec<_>>>()?;
                Operation::Merge(pb::transaction::Merge {
                    fragments: frags,
                    schema,
                    schema_metadata: self.manifest().schema_metadata.clone(),
                })
            }
            UserOperation::Project { schema } => {
                self.check_schema(&schema)?;
                Operation::Project(pb::transaction::Project { schema })
            }
            UserOperation::Restore { version } => Operation::Restore(pb::transaction::Restore { version }),
            UserOperation::DataReplacement { replacements } => {
                // Checked against this version; applied by `commit::apply` (files swapped
                // in place), recorded as a DataReplacement as pylance records it.
                let mut changed: Vec<pb::DataFragment> = Vec::new();
                let mut groups = Vec::with_capacity(replacements.len());
                for (id, file) in replacements {
                    self.check_files(std::slice::from_ref(&file), &known, "DataReplacement")?;
                    let pos = match changed.iter().position(|f| f.id == id) {
                        Some(p) => p,
                        None => {
                            changed.push(self.fragment(id)?.clone());
                            changed.len() - 1
                        }
                    };
                    let frag = &mut changed[pos];
                    let new_fields: HashSet<i32> = file.fields.iter().copied().collect();
                    match frag.files.iter().position(|d| d.fields == file.fields) {
                        Some(i) => frag.files[i] = file.clone(),
                        None if frag
                            .files
                            .iter()
                            .all(|d| d.fields.iter().all(|x| !new_fields.contains(x))) =>
                        {
                            frag.files.push(file.clone())
                        }
                        None => {
                            return Err(Error::InvalidArgument(format!(
                                "DataReplacement: no data file of fragment {id} holds exactly fields {:?}",
                                file.fields
                            )))
                        }
                    }
                    groups.push(pb::transaction::DataReplacementGroup {
                        fragment_id: id,
                        new_file: Some(file),
                    });
                }
                Operation::DataReplacement(pb::transaction::DataReplacement { replacements: groups })
            }
            UserOperation::Rewrite {
                groups,
                rewritten_indices,
            } => {
                let mut out = Vec::with_capacity(groups.len());
                for (old, new) in groups {
                    let old = old
                        .iter()
                        .map(|f| {
                            let o = self.fragment(f.id)?;
                            if o.files != f.files {
                                return Err(Error::InvalidArgument(format!(
                                    "Rewrite: old fragment {} differs from the dataset's",
                                    f.id
                                )));
                            }
                            Ok(o.clone())
                        })
                        .collect::<Result<Vec<_>>>()?;
                    self.check_new_fragments(&new, &known, "Rewrite")?;
                    out.push(pb::transaction::rewrite::RewriteGroup {
                        old_fragments: old,
                        new_fragments: new,
                    });
                }
                if self.has_stable_row_ids() {
                    self.rewrite_lineage(&mut out).await?;
                } else {
                    for g in &mut out {
                        g.new_fragments = without_lineage(std::mem::take(&mut g.new_fragments));
                    }
                }
                for ri in &rewritten_indices {
                    for (what, id) in [("old_id", &ri.old_id), ("new_id", &ri.new_id)] {
                        if id.as_ref().is_none_or(|u| u.uuid.len() != 16) {
                            return Err(Error::InvalidArgument(format!(
                                "Rewrite: a rewritten index has no valid {what}"
                            )));
                        }
                    }
                }
                Operation::Rewrite(pb::transaction::Rewrite {
                    groups: out,
                    rewritten_indices,
                    ..Default::default()
                })
            }
            UserOperation::CreateIndex {
                new_indices,
                removed_indices,
            } => {
                for idx in &new_indices {
                    self.check_new_index(idx).await?;
                }
                Operation::CreateIndex(pb::transaction::CreateIndex {
                    new_indices,
                    removed_indices,
                })
            }
            UserOperation::UpdateConfig {
                config,
                table_metadata,
                schema_metadata,
            } => Operation::UpdateConfig(pb::transaction::UpdateConfig {
                config_updates: config,
                table_metadata_updates: table_metadata,
                schema_metadata_updates: schema_metadata,
                ..Default::default()
            }),
        })
    }

    /// Checks an index entry built elsewhere: its fields are the schema's (pylance accepts
    /// unknown field ids, but such an entry would describe a column added later under that
    /// id), its covering fields are among them with one field left keyed (pylance's rule),
    /// its base path exists and its directory holds its files.
    async fn check_new_index(&self, idx: &pb::IndexMetadata) -> Result<()> {
        let name = &idx.name;
        let uuid = lancelet_table::indices::uuid_string(idx)
            .map_err(|e| Error::InvalidArgument(format!("CreateIndex: index {name:?}: {e}")))?;
        lancelet_table::indices::fragment_bitmap(idx)
            .map_err(|e| Error::InvalidArgument(format!("CreateIndex: index {name:?}: {e}")))?;
        let known: HashSet<i32> = self.manifest().fields.iter().map(|f| f.id).collect();
        if let Some(bad) = idx.fields.iter().find(|f| !known.contains(f)) {
            return Err(Error::InvalidArgument(format!(
                "CreateIndex: index {name:?} names field id {bad}, which the schema does not have"
            )));
        }
        let outside: Vec<i32> = idx
            .covering_fields
            .iter()
            .copied()
            .filter(|c| !idx.fields.contains(c))
            .collect();
        if !outside.is_empty() {
            return Err(Error::InvalidArgument(format!(
                "index '{name}' declares covering fields {:?} but {outside:?} are not among its fields {:?}",
                idx.covering_fields, idx.fields
            )));
        }
        if !idx.covering_fields.is_empty() && idx.fields.iter().all(|f| idx.covering_fields.contains(f)) {
            return Err(Error::InvalidArgument(format!(
                "index '{name}' declares covering fields {:?} but its fields are {:?}; at least one field must remain indexed",
                idx.covering_fields, idx.fields
            )));
        }
        let (store, dir) = self.index_files(idx)?;
        let files = store.list_meta(&dir).await.unwrap_or_default();
        let missing: Vec<&str> = if idx.files.is_empty() {
            if files.is_empty() {
                vec![dir.as_str()]
            } else {
                Vec::new()
            }
        } else {
            idx.files
                .iter()
                .map(|f| f.path.as_str())
                .filter(|p| !files.iter().any(|x| x.name == *p))
                .collect()
        };
        if !missing.is_empty() {
            return Err(Error::InvalidArgument(format!(
                "CreateIndex: the files of index {name:?} ({uuid}) are missing: {missing:?} under {}",
                store.root_display()
            )));
        }
        Ok(())
    }

    /// Row lineage of a Rewrite's new fragments on a dataset with stable row ids: each must
    /// carry one row id per row, together exactly the ids of the old fragments' live rows
    /// (pylance 14 checks neither: fewer ids leave a dataset whose scans fail, foreign ids
    /// collide with the ids of rows appended later). Each row keeps the versions it was
    /// created and last updated at (pylance leaves them unset, so they read as 1).
    async fn rewrite_lineage(&self, groups: &mut [pb::transaction::rewrite::RewriteGroup]) -> Result<()> {
        let store = self.store.as_ref();
        for g in groups {
            let mut live: HashMap<u64, (u64, u64)> = HashMap::new();
            for f in &g.old_fragments {
                let rows = f.physical_rows as usize;
                let ids = fragment_row_ids(store, f)
                    .await?
                    .ok_or_else(|| Error::corrupt("_versions", format!("fragment {} has no row ids", f.id)))?;
                let created = fragment_versions(store, f, true)
                    .await?
                    .unwrap_or_else(|| vec![1; rows]);
                let updated = fragment_versions(store, f, false)
                    .await?
                    .unwrap_or_else(|| vec![1; rows]);
                let deleted = self.deleted_rows(f).await?;
                for (i, id) in ids.into_iter().enumerate() {
                    if deleted.binary_search(&(i as u32)).is_err() {
                        let c = created.get(i).copied().unwrap_or(1);
                        let u = updated.get(i).copied().unwrap_or(1);
                        live.insert(id, (c, u));
                    }
                }
            }
            let expected = live.len();
            let mut seen = 0usize;
            for f in &mut g.new_fragments {
                f.created_at_version_sequence = None;
                f.last_updated_at_version_sequence = None;
                if f.row_id_sequence.is_none() {
                    return Err(Error::InvalidArgument(
                        "All fragments must have row ids: on a dataset with stable row ids, every new fragment of \
                         a Rewrite carries the row ids of its rows (FragmentMetadata.row_id_meta, see \
                         lancelet.fragment.RowIdSequence)"
                            .into(),
                    ));
                }
                let ids = fragment_row_ids(store, f).await.map_err(|e| {
                    Error::InvalidArgument(format!(
                        "Rewrite: the row ids of a new fragment of {} rows do not fit it: {e}",
                        f.physical_rows
                    ))
                })?;
                let ids = ids.unwrap_or_default();
                let mut created = Vec::with_capacity(ids.len());
                let mut updated = Vec::with_capacity(ids.len());
                for id in ids {
                    let Some((c, u)) = live.remove(&id) else {
                        return Err(Error::InvalidArgument(format!(
                            "Rewrite: row id {id} of a new fragment is not the id of a live row of the fragments \
                             it rewrites (or is given twice)"
                        )));
                    };
                    created.push(c);
                    updated.push(u);
                    seen += 1;
                }
                set_versions(f, &created, &updated);
            }
            if seen != expected {
                let mut lost: Vec<u64> = live.keys().copied().collect();
                lost.sort_unstable();
                lost.truncate(10);
                return Err(Error::InvalidArgument(format!(
                    "Rewrite: the new fragments hold {seen} of the {expected} live rows of the fragments they \
                     rewrite (row ids missing: {lost:?}...)"
                )));
            }
        }
        Ok(())
    }

    fn check_schema(&self, schema: &[pbfile::Field]) -> Result<()> {
        lancelet_file::schema::from_lance_fields(schema, &self.manifest().schema_metadata, "new schema")?;
        Ok(())
    }

    /// Commits `op`, planned on this version, with `properties` in its transaction; a
    /// concurrent commit since is checked for conflicts and `op` re-applied on top as for
    /// any write. Returns the dataset at the new version.
    pub async fn commit_user_operation(
        &self,
        op: UserOperation,
        properties: HashMap<String, String>,
        max_retries: Option<u32>,
    ) -> Result<Self> {
        let op = self.user_operation(op).await?;
        crate::check_fragment_id_room(self.manifest(), &op, &self.root().display().to_string())?;
        let txn = pb::Transaction {
            read_version: self.version(),
            uuid: uuid::Uuid::new_v4().hyphenated().to_string(),
            tag: String::new(),
            transaction_properties: properties,
            operation: Some(op),
        };
        let mut opts = CommitOptions::default();
        if let Some(r) = max_retries {
            opts.max_retries = r;
        }
        self.commit_transaction(&txn, &opts).await
    }

    /// The transaction that created `version` (`None`: this version), read from its
    /// transaction file; `None` when the manifest names none (or it is gone).
    pub async fn read_transaction(&self, version: Option<u64>) -> Result<Option<pb::Transaction>> {
        let ds = match version {
            Some(v) if v != self.version() => self.checkout(Some(VersionRef::Number(v))).await?,
            _ => self.clone(),
        };
        let name = &ds.manifest().transaction_file;
        if name.is_empty() || name.contains('/') || name.contains('\\') || name.starts_with('.') {
            return Ok(None);
        }
        let path = format!("{TRANSACTIONS_DIR}/{name}");
        let bytes = match ds.store().read(&path).await {
            Ok(b) => b,
            Err(lancelet_io::Error::NotFound { .. }) => return Ok(None),
            Err(e) => return Err(e.into()),
        };
        let txn = pb::Transaction::decode(bytes.as_ref())
            .map_err(|e| Error::corrupt(&path, format!("transaction does not decode: {e}")))?;
        Ok(Some(txn))
    }

    /// Deletes the rows of fragment `id` matching `predicate` without committing: writes a
    /// new deletion file and returns the fragment with it (unchanged when nothing matched),
    /// or `None` when every row would be deleted. Commit the result with a
    /// [`UserOperation::Delete`].
    pub async fn fragment_delete(&self, id: u64, predicate: &str) -> Result<Option<pb::DataFragment>> {
        if predicate.trim().is_empty() {
            return Err(Error::InvalidArgument("delete needs a predicate".into()));
        }
        let frag = self.fragment(id)?.clone();
        let opts = ScanOptions {
            columns: Columns::Names(Vec::new()),
            filter: Some(predicate.to_string()),
            with_row_address: true,
            fragments: Some(vec![id]),
            ..ScanOptions::default()
        };
        let hits = row_hits(&self.scan_all(opts).await?);
        if hits.iter().all(|(_, rows)| rows.is_empty()) {
            return Ok(Some(frag));
        }
        let mut written = Vec::new();
        let (updated, removed) = self.tombstone(hits, &mut written).await?;
        if removed.contains(&id) {
            return Ok(None);
        }
        Ok(updated.into_iter().find(|f| f.id == id))
    }

    /// Replaces the metadata of tag `name` (tags live at the dataset's root, whichever
    /// branch this version is on).
    pub async fn replace_tag_metadata(
        &self,
        name: &str,
        metadata: &std::collections::BTreeMap<String, String>,
    ) -> Result<()> {
        let (refs, _) = self.refs_root()?;
        Ok(lancelet_table::tags::replace_tag_metadata(refs.as_ref(), name, metadata).await?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_schema::{DataType, Field, Fields, Schema};

    fn schema() -> Schema {
        let s = Fields::from(vec![
            Field::new("x", DataType::Int32, true),
            Field::new("y", DataType::Utf8, true),
        ]);
        Schema::new(vec![
            Field::new("a", DataType::Int64, true),
            Field::new("s", DataType::Struct(s), true),
            Field::new("b", DataType::Utf8, true),
        ])
    }

    #[test]
    fn ids_are_positional_by_default_and_given_ids_keep_parents() {
        let plain = fields_with_ids(&schema(), None).unwrap();
        assert_eq!(depth_first_ids(&plain), vec![0, 1, 2, 3, 4]);
        let given = fields_with_ids(&schema(), Some(&[7, 3, 9, 4, 0])).unwrap();
        assert_eq!(depth_first_ids(&given), vec![7, 3, 9, 4, 0]);
        let x = given.iter().find(|f| f.name == "x").unwrap();
        assert_eq!(x.parent_id, 3);
    }

    #[test]
    fn bad_id_lists_are_refused() {
        assert!(fields_with_ids(&schema(), Some(&[0, 1])).is_err());
        assert!(fields_with_ids(&schema(), Some(&[0, 1, 1, 2, 3])).is_err());
        assert!(fields_with_ids(&schema(), Some(&[0, 1, -1, 2, 3])).is_err());
    }
}
