//! Operations planned and written elsewhere, committed as given: the `LanceOperation` kinds
//! pylance users pass to `LanceDataset.commit` (Delete, Update, Merge, Project, Restore,
//! DataReplacement, Rewrite, UpdateConfig), with their transaction properties; the
//! transaction that produced a version (`read_transaction`); and deleting the rows of one
//! fragment without committing (`LanceFragment.delete`, whose result a Delete commits).
//!
//! Fragments come from outside (possibly another machine or library), so each one is checked
//! against the version it was planned on: a fragment that the operation says it changes
//! must exist there; data files must have safe paths, the dataset's file format and field
//! ids the (new) schema knows. Fragment metadata sent through Python carries no row lineage,
//! so a changed fragment keeps the lineage of the fragment it replaces.

use std::collections::{HashMap, HashSet};

use lancelet_proto::pbfile;
use lancelet_table::commit::{commit, CommitOptions, TRANSACTIONS_DIR};
use lancelet_table::pb;
use lancelet_table::pb::transaction::Operation;
use prost::Message;

use crate::delete::row_hits;
use crate::scan::{Columns, ScanOptions};
use crate::{Dataset, Error, Result, VersionRef};

/// The transaction property pylance stores a commit message under.
pub const COMMIT_MESSAGE_KEY: &str = "__lance_commit_message";

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
        /// Fragments of new rows (ids are assigned at commit).
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

/// The lineage (row ids, created/updated versions) of `from` copied onto `to` where `to`
/// has none: metadata sent through Python loses it.
fn keep_lineage(to: &mut pb::DataFragment, from: &pb::DataFragment) {
    if to.row_id_sequence.is_none() {
        to.row_id_sequence = from.row_id_sequence.clone();
    }
    if to.created_at_version_sequence.is_none() {
        to.created_at_version_sequence = from.created_at_version_sequence.clone();
    }
    if to.last_updated_at_version_sequence.is_none() {
        to.last_updated_at_version_sequence = from.last_updated_at_version_sequence.clone();
    }
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
                    "{kind}: new fragment {} has a deletion file (new fragments get ids at commit)",
                    f.id
                )));
            }
            self.check_files(&f.files, known, kind)?;
        }
        Ok(())
    }

    /// The table operation for `op`, checked against this version (the one it was planned on).
    pub fn user_operation(&self, op: UserOperation) -> Result<Operation> {
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
            UserOperation::Rewrite { groups } => {
                if self.has_stable_row_ids() {
                    return Err(Error::Unsupported(
                        "committing a Rewrite on a dataset with stable row ids (use optimize.compact_files)".into(),
                    ));
                }
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
                Operation::Rewrite(pb::transaction::Rewrite {
                    groups: out,
                    ..Default::default()
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
        let op = self.user_operation(op)?;
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
        let (m, naming) = commit(self.store.as_ref(), Some((&self.manifest, self.naming)), &txn, &opts).await?;
        Self::from_manifest(
            self.store.clone(),
            self.root.clone(),
            m,
            naming,
            self.caches.clone(),
            self.spawner.clone(),
        )
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
            Err(lancelet_table::Error::NotFound { .. }) => return Ok(None),
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
