//! Updating rows by SQL: `update({"price": "price * 1.1"}, where="color = 'red'")`.
//!
//! The matching rows are read whole, the new values computed and cast to the columns'
//! types, and the rows written as new fragments; the old rows are tombstoned through
//! deletion files (fragments left with no live row are dropped). One Update transaction
//! commits both, so a reader sees either the old rows or the new ones. Nothing is
//! committed when no row matches.

use arrow_array::{ArrayRef, RecordBatch};
use lancelet_table::pb;
use lancelet_table::pb::transaction::Operation;

use crate::modify::delete::row_hits;
use crate::scan::lineage::ROW_CREATED_AT;
use crate::scan::{Columns, ScanOptions};
use crate::write::{dataset_field_ids, FragmentWriter, WriteParams};
use crate::{Dataset, Error, Result};

/// What an update did.
#[derive(Debug, Clone, Default)]
pub struct UpdateResult {
    /// Rows rewritten with new values.
    pub num_rows_updated: u64,
}

/// `name` as an identifier the SQL parser reads back as exactly that column.
fn quoted(name: &str) -> String {
    format!("`{}`", name.replace('`', "``"))
}

impl Dataset {
    /// Sets columns to SQL expressions (over the row's current values) in the rows matching
    /// `filter` (every row when `None`); returns the dataset at the new version.
    pub async fn update(&self, updates: &[(String, String)], filter: Option<&str>) -> Result<(Self, UpdateResult)> {
        if updates.is_empty() {
            return Err(Error::InvalidArgument("update needs at least one column to set".into()));
        }
        self.refuse_unrewritable_blobs("updating rows in")?;
        let version = self.rewrite_version("updating rows")?;
        let stable = self.has_stable_row_ids();
        let schema = self.schema().clone();
        for (col, _) in updates {
            match schema.field_with_name(col) {
                Err(_) => {
                    return Err(Error::InvalidArgument(format!(
                        "update sets column {col:?}, which does not exist (top-level columns only)"
                    )))
                }
                // As in pylance 14: rows with blobs move, but blob v2 values are not set by SQL.
                Ok(f) if lancelet_file::blob::is_blob_v2(f) => {
                    return Err(Error::Unsupported(format!(
                        "direct updates to column {col:?} containing blob v2 values are not supported"
                    )))
                }
                Ok(_) => {}
            }
        }
        refuse_sql_over_blobs(&schema, updates)?;
        let exprs: Vec<(String, String)> = schema
            .fields()
            .iter()
            .map(|f| {
                let e = updates
                    .iter()
                    .rev()
                    .find(|(c, _)| c == f.name())
                    .map_or_else(|| quoted(f.name()), |(_, e)| format!("({e})"));
                (f.name().clone(), e)
            })
            .collect();
        let mut exprs = exprs;
        if stable {
            // Moved rows keep the version they were created at.
            exprs.push((ROW_CREATED_AT.to_string(), ROW_CREATED_AT.to_string()));
        }
        let opts = ScanOptions {
            columns: Columns::Exprs(exprs),
            filter: filter.map(str::to_string),
            with_row_address: true,
            // Updated rows move; with stable row ids they keep their ids.
            with_row_id: stable,
            ..ScanOptions::default()
        };
        let outputs = self.scan_all(opts).await?;
        let (moved_ids, created) = if stable {
            (
                crate::scan::lineage::u64_column(&outputs, crate::scan::ROW_ID)?,
                crate::scan::lineage::u64_column(&outputs, ROW_CREATED_AT)?,
            )
        } else {
            Default::default()
        };
        let hits = row_hits(&outputs);
        let num_rows_updated: u64 = hits.iter().map(|(_, r)| r.len() as u64).sum();
        if num_rows_updated == 0 {
            return Ok((self.clone(), UpdateResult::default()));
        }

        let all: Vec<usize> = (0..schema.fields().len()).collect();
        let ids = dataset_field_ids(&schema, &self.manifest().fields, &all)?;
        let params = WriteParams {
            file_version: version,
            // Moved rows keep the external blobs they referenced, wherever those are.
            blob: crate::blob::write::BlobWriteOptions {
                allow_external_outside_bases: true,
                ..Default::default()
            },
            ..WriteParams::default()
        };
        let blobs = self.has_blob_columns();
        let mut writer = FragmentWriter::new(self.store().clone(), schema.clone(), ids, params)?;
        let mut written = Vec::new();
        let staged: Result<(Vec<pb::DataFragment>, Vec<pb::DataFragment>, Vec<u64>)> = async {
            for batch in &outputs {
                if batch.num_rows() == 0 {
                    continue;
                }
                let materialized;
                let batch = if blobs {
                    materialized = self.materialize_blobs(batch).await?;
                    &materialized
                } else {
                    batch
                };
                let columns = schema
                    .fields()
                    .iter()
                    .map(|f| {
                        let c = batch
                            .column_by_name(f.name())
                            .ok_or_else(|| Error::InvalidArgument(format!("no value for {:?}", f.name())))?;
                        if lancelet_file::json::is_lance_json(f) {
                            json_values(c, f.name())
                        } else {
                            cast_to(c, f.data_type(), f.name())
                        }
                    })
                    .collect::<Result<Vec<ArrayRef>>>()?;
                let rows = RecordBatch::try_new(schema.clone(), columns).map_err(|e| {
                    Error::InvalidArgument(format!("the updated rows do not fit the dataset's schema: {e}"))
                })?;
                writer.write(&rows)?;
                writer.upload_pending().await?;
            }
            let mut new = writer.finish()?;
            writer.upload_pending().await?;
            if stable {
                crate::scan::lineage::carry_row_ids(&mut new, &moved_ids, Some(&created))?;
            }
            let (updated, removed) = self.tombstone(hits, &mut written).await?;
            Ok((new, updated, removed))
        }
        .await;
        let (new_fragments, updated_fragments, removed_fragment_ids) = match staged {
            Ok(s) => s,
            Err(e) => {
                writer.abort().await;
                self.remove_files(&written).await;
                return Err(e);
            }
        };
        let new_paths = data_paths(&new_fragments);
        let op = Operation::Update(pb::transaction::Update {
            removed_fragment_ids,
            updated_fragments,
            new_fragments,
            ..Default::default()
        });
        match self.commit_operation(op, None).await {
            Ok(ds) => Ok((ds, UpdateResult { num_rows_updated })),
            Err(e) => {
                if crate::write::nothing_committed(&e) {
                    self.remove_files(&written).await;
                    self.remove_files(&new_paths).await;
                }
                Err(e)
            }
        }
    }
}

/// Refuses update expressions that read blob v1 values other than `{"img": "img"}`: a
/// scan gives such a column as descriptors, not bytes, so an expression over it would
/// see the wrong values. Setting the column to new bytes or NULL (`X'414243'`,
/// `CAST('abc' AS BINARY)`, `NULL`) is fine, as in pylance 14.
fn refuse_sql_over_blobs(schema: &arrow_schema::Schema, updates: &[(String, String)]) -> Result<()> {
    let blob = |name: &str| {
        schema
            .fields()
            .iter()
            .find(|f| f.name() == name || f.name().eq_ignore_ascii_case(name))
            .filter(|f| lancelet_file::blob::is_blob(f))
    };
    for (col, sql) in updates {
        let expr = lancelet_expr::parse(sql).map_err(|e| Error::expr(format!("update of {col:?}"), e))?;
        if let lancelet_expr::Expr::Column(path) = &expr {
            if path.len() == 1 && blob(&path[0]).is_some_and(|f| f.name() == col) {
                continue;
            }
        }
        if let Some(f) = expr.columns().iter().find_map(|p| p.first().and_then(|n| blob(n))) {
            return Err(Error::Unsupported(format!(
                "update of {col:?}: expressions over the values of blob column {:?} are not supported \
                 (set it to new bytes, NULL, or itself)",
                f.name()
            )));
        }
    }
    Ok(())
}

/// New values of a JSON column: text (a string expression such as `'{"a": 1}'`) is parsed
/// into JSONB, as pylance does; bytes are stored as they are.
fn json_values(c: &ArrayRef, name: &str) -> Result<ArrayRef> {
    use arrow_schema::DataType;
    match c.data_type() {
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => Ok(lancelet_file::json::text_to_jsonb(c, name)?),
        _ => cast_to(c, &DataType::LargeBinary, name),
    }
}

/// `c` as `to`, the column's type: SQL arithmetic widens (`int32 + 1` is int64), the
/// column keeps its type; values that do not fit are an error, never silently changed.
fn cast_to(c: &ArrayRef, to: &arrow_schema::DataType, name: &str) -> Result<ArrayRef> {
    if c.data_type() == to {
        return Ok(c.clone());
    }
    let opts = arrow_cast::CastOptions {
        safe: false,
        ..Default::default()
    };
    arrow_cast::cast_with_options(c, to, &opts).map_err(|e| {
        Error::InvalidArgument(format!(
            "the new values of {name:?} ({}) do not convert to its type {to}: {e}",
            c.data_type()
        ))
    })
}

impl Dataset {
    /// Replaces rows: tombstones the rows at `addresses` (row addresses of this version)
    /// and adds `new_fragments` (written earlier, e.g. by a merge-insert), as one Update
    /// transaction. On a conflict nothing is kept; the new fragments' files are removed.
    ///
    /// With stable row ids, `moved_ids` are the ids of the first rows of `new_fragments`
    /// (whole fragments): rows that moved keep their ids; the other rows get new ones.
    pub async fn replace_rows(
        &self,
        addresses: &[u64],
        new_fragments: Vec<pb::DataFragment>,
        moved_ids: &[u64],
    ) -> Result<Self> {
        let new_paths = data_paths(&new_fragments);
        let mut written = Vec::new();
        let committed = match self
            .replacement(addresses, new_fragments, moved_ids, &mut written)
            .await
        {
            Ok(op) => self.commit_operation(op, None).await,
            Err(e) => Err(e),
        };
        if let Err(e) = &committed {
            if crate::write::nothing_committed(e) {
                self.remove_files(&written).await;
                self.remove_files(&new_paths).await;
            }
        }
        committed
    }

    /// The Update operation of [`Dataset::replace_rows`], uncommitted: the deletion files
    /// it writes are added to `written`.
    pub(crate) async fn replacement(
        &self,
        addresses: &[u64],
        mut new_fragments: Vec<pb::DataFragment>,
        moved_ids: &[u64],
        written: &mut Vec<String>,
    ) -> Result<Operation> {
        if !moved_ids.is_empty() {
            if !self.has_stable_row_ids() {
                return Err(Error::InvalidArgument(
                    "row ids to keep were given for a dataset without stable row ids".into(),
                ));
            }
            crate::scan::lineage::carry_row_ids(&mut new_fragments, moved_ids, None)?;
        }
        let mut sorted = addresses.to_vec();
        sorted.sort_unstable();
        sorted.dedup();
        let mut hits: Vec<(u64, Vec<u32>)> = Vec::new();
        for a in sorted {
            let (frag, row) = (a >> 32, (a & 0xFFFF_FFFF) as u32);
            if self.fragment(frag).map_or(true, |f| u64::from(row) >= f.physical_rows) {
                return Err(Error::OutOfRange(format!("row address {a} is not in this version")));
            }
            match hits.last_mut() {
                Some((f, rows)) if *f == frag => rows.push(row),
                _ => hits.push((frag, vec![row])),
            }
        }
        for f in &new_fragments {
            for d in &f.files {
                crate::safe_relative(&d.path)?;
            }
        }
        let (updated_fragments, removed_fragment_ids) = self.tombstone(hits, written).await?;
        Ok(Operation::Update(pb::transaction::Update {
            removed_fragment_ids,
            updated_fragments,
            new_fragments,
            ..Default::default()
        }))
    }
}

/// The paths (under the dataset's root) of the data files of `fragments`.
pub(crate) fn data_paths(fragments: &[pb::DataFragment]) -> Vec<String> {
    fragments
        .iter()
        .flat_map(|f| f.files.iter().map(|d| format!("{}/{}", crate::DATA_DIR, d.path)))
        .collect()
}
