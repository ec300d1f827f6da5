//! Deleting rows by predicate: the matching rows of each fragment join its deletion
//! vector in a new deletion file (Arrow IPC for small sets, a roaring bitmap for large
//! ones); a fragment whose rows are all deleted is dropped. One Delete transaction
//! commits it all; a predicate that matches nothing commits nothing.

use lancelet_table::deletion::{deletion_file_path, encode_deletions};
use lancelet_table::pb;
use lancelet_table::pb::transaction::Operation;

use crate::scan::{Columns, ScanOptions};
use crate::{Dataset, Error, Result};

/// What a delete did.
#[derive(Debug, Clone, Default)]
pub struct DeleteResult {
    /// Rows deleted.
    pub num_deleted_rows: u64,
}

impl Dataset {
    /// Deletes the rows matching `predicate`; returns the dataset at the new version (or
    /// this one when nothing matched).
    pub async fn delete(&self, predicate: &str) -> Result<(Self, DeleteResult)> {
        if predicate.trim().is_empty() {
            return Err(Error::InvalidArgument(
                "delete needs a predicate (use \"true\" to delete every row)".into(),
            ));
        }
        let opts = ScanOptions {
            columns: Columns::Names(Vec::new()),
            filter: Some(predicate.to_string()),
            with_row_address: true,
            ..ScanOptions::default()
        };
        let outputs = self.scan_all(opts).await?;
        let hits = row_hits(&outputs);
        let num_deleted_rows: u64 = hits.iter().map(|(_, r)| r.len() as u64).sum();
        if num_deleted_rows == 0 {
            return Ok((self.clone(), DeleteResult::default()));
        }
        let mut written = Vec::new();
        let committed = match self.tombstone(hits, &mut written).await {
            Ok((updated_fragments, deleted_fragment_ids)) => {
                let op = Operation::Delete(pb::transaction::Delete {
                    updated_fragments,
                    deleted_fragment_ids,
                    predicate: predicate.to_string(),
                });
                self.commit_operation(op, None).await
            }
            Err(e) => Err(e),
        };
        match committed {
            Ok(ds) => Ok((ds, DeleteResult { num_deleted_rows })),
            Err(e) => {
                if crate::write::nothing_committed(&e) {
                    self.remove_files(&written).await;
                }
                Err(e)
            }
        }
    }

    /// Best-effort removal of files this writer made but did not commit.
    pub(crate) async fn remove_files(&self, paths: &[String]) {
        for p in paths {
            let _ = self.store().delete(p).await;
        }
    }
}

/// Physical rows per fragment id, in scan order, from the `_rowaddr` column of `batches`.
pub(crate) fn row_hits(batches: &[arrow_array::RecordBatch]) -> Vec<(u64, Vec<u32>)> {
    let mut hits: Vec<(u64, Vec<u32>)> = Vec::new();
    for batch in batches {
        let Some(col) = batch.column_by_name(crate::scan::ROW_ADDR) else {
            continue;
        };
        let addrs = arrow_array::cast::AsArray::as_primitive::<arrow_array::types::UInt64Type>(col.as_ref());
        for &a in addrs.values() {
            let (frag, row) = (a >> 32, (a & 0xFFFF_FFFF) as u32);
            match hits.last_mut() {
                Some((f, rows)) if *f == frag => rows.push(row),
                _ => match hits.iter_mut().find(|(f, _)| *f == frag) {
                    Some((_, rows)) => rows.push(row),
                    None => hits.push((frag, vec![row])),
                },
            }
        }
    }
    hits
}

impl Dataset {
    /// Adds `hits` (physical rows per fragment) to the fragments' deletion vectors, writing
    /// new deletion files (their paths go to `written`). Returns the updated fragments and
    /// the ids of fragments left with no live row.
    pub(crate) async fn tombstone(
        &self,
        hits: Vec<(u64, Vec<u32>)>,
        written: &mut Vec<String>,
    ) -> Result<(Vec<pb::DataFragment>, Vec<u64>)> {
        let mut updated: Vec<pb::DataFragment> = Vec::new();
        let mut removed = Vec::new();
        for (frag_id, rows) in hits {
            let frag = self.fragment(frag_id)?;
            let mut all: Vec<u32> = self.deleted_rows(frag).await?.as_ref().clone();
            all.extend(rows);
            all.sort_unstable();
            all.dedup();
            if all.len() as u64 >= frag.physical_rows {
                removed.push(frag_id);
                continue;
            }
            let (bytes, kind) = encode_deletions(&all)?;
            let d = pb::DeletionFile {
                file_type: kind as i32,
                read_version: self.version(),
                id: uuid::Uuid::new_v4().as_u64_pair().0,
                num_deleted_rows: all.len() as u64,
                base_id: None,
                lancelet_crc32c: Some(lancelet_table::deletion::checksum(&bytes)),
            };
            let path = deletion_file_path(frag_id, &d);
            self.store().put(&path, bytes.into()).await?;
            written.push(path);
            let mut f = frag.clone();
            f.deletion_file = Some(d);
            updated.push(f);
        }
        Ok((updated, removed))
    }
}
