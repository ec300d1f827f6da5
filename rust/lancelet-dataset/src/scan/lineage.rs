//! Row lineage in scans and takes: the `_rowid`, `_rowaddr`, `_row_created_at_version`
//! and `_row_last_updated_at_version` columns, the row id index behind `take` by row id,
//! and the change data feed between two versions.
//!
//! Without stable row ids a row's id is its address and both versions read as 1 (as
//! pylance reports them). With stable row ids each fragment's sequences are decoded once
//! per version and cached.

use std::collections::HashSet;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::{ArrayRef, RecordBatch, UInt64Array};
use arrow_schema::{DataType, Field};
use lancelet_table::pb;
use lancelet_table::rowids::{
    fragment_row_id_segments, fragment_row_ids, fragment_versions, set_row_ids, RowIdIndex, RowIdIndexBuilder,
};

use crate::scan::{Columns, ScanOptions};
use crate::{Dataset, Error, Result};

/// Name of the column holding the version a row was created at.
pub(crate) const ROW_CREATED_AT: &str = "_row_created_at_version";
/// Name of the column holding the version a row was last updated at.
pub(crate) const ROW_UPDATED_AT: &str = "_row_last_updated_at_version";

/// Name of the column holding a row's position among the live rows of the version.
pub(crate) const ROW_OFFSET: &str = "_rowoffset";

/// A column computed from a row's position and lineage rather than read from data files.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Special {
    /// `_rowid`.
    RowId,
    /// `_rowaddr`.
    RowAddr,
    /// `_row_created_at_version`.
    CreatedAt,
    /// `_row_last_updated_at_version`.
    UpdatedAt,
    /// `_rowoffset`: the row's position among the live rows of the version (what `take`
    /// indexes by), counting fragments in manifest order.
    RowOffset,
}

impl Special {
    /// Every special column, in the order expressions see them after the stored columns.
    pub const ALL: [Special; 5] = [
        Special::RowId,
        Special::RowAddr,
        Special::CreatedAt,
        Special::UpdatedAt,
        Special::RowOffset,
    ];

    /// The special columns SQL (filters, column expressions) may name: pylance refuses
    /// `_rowoffset` there, so lancelet does too.
    pub(crate) const IN_SQL: [Special; 4] = [Special::RowId, Special::RowAddr, Special::CreatedAt, Special::UpdatedAt];

    /// The column's name.
    pub fn name(self) -> &'static str {
        match self {
            Special::RowId => crate::scan::ROW_ID,
            Special::RowAddr => crate::scan::ROW_ADDR,
            Special::CreatedAt => ROW_CREATED_AT,
            Special::UpdatedAt => ROW_UPDATED_AT,
            Special::RowOffset => ROW_OFFSET,
        }
    }

    /// The special column called `name`, if it is one.
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.name() == name)
    }

    /// Its Arrow field.
    pub fn field(self) -> Field {
        Field::new(self.name(), DataType::UInt64, true)
    }
}

/// A fragment's decoded lineage (`None` where it records none).
#[derive(Debug, Default)]
pub(crate) struct FragmentLineage {
    ids: Option<Vec<u64>>,
    created: Option<Vec<u64>>,
    updated: Option<Vec<u64>>,
}

fn pick(values: &Option<Vec<u64>>, addrs: &UInt64Array, default: impl Fn(u64) -> u64) -> Result<UInt64Array> {
    match values {
        None => Ok(addrs.values().iter().map(|&a| default(a)).collect()),
        Some(v) => addrs
            .values()
            .iter()
            .map(|&a| {
                v.get((a & 0xFFFF_FFFF) as usize)
                    .copied()
                    .ok_or_else(|| Error::InvalidArgument(format!("row address {a} is past its fragment's lineage")))
            })
            .collect::<Result<Vec<u64>>>()
            .map(UInt64Array::from),
    }
}

impl Dataset {
    /// The lineage of fragment `frag` of this version (cached).
    pub(crate) async fn lineage(&self, frag: &pb::DataFragment) -> Result<Arc<FragmentLineage>> {
        if !self.has_stable_row_ids() {
            return Ok(Arc::default());
        }
        let key = (self.version(), frag.id);
        if let Some(l) = self.caches.lineage.lock().ok().and_then(|c| c.get(&key).cloned()) {
            return Ok(l);
        }
        let store = self.store.as_ref();
        let l = Arc::new(FragmentLineage {
            ids: fragment_row_ids(store, frag).await?,
            created: fragment_versions(store, frag, true).await?,
            updated: fragment_versions(store, frag, false).await?,
        });
        if let Ok(mut c) = self.caches.lineage.lock() {
            c.insert(key, l.clone());
        }
        Ok(l)
    }

    /// The values of special column `s` for the rows at `addrs` (all in fragment `frag`).
    pub(crate) async fn special_column(
        &self,
        s: Special,
        frag: &pb::DataFragment,
        addrs: &UInt64Array,
    ) -> Result<ArrayRef> {
        let out = match s {
            Special::RowAddr => addrs.clone(),
            Special::RowId if !self.has_stable_row_ids() => addrs.clone(),
            Special::RowOffset => self.row_offsets(frag, addrs).await?,
            _ => {
                let l = self.lineage(frag).await?;
                match s {
                    Special::RowId => pick(&l.ids, addrs, |a| a)?,
                    Special::CreatedAt => pick(&l.created, addrs, |_| 1)?,
                    _ => pick(&l.updated, addrs, |_| 1)?,
                }
            }
        };
        Ok(Arc::new(out))
    }

    /// The `_rowoffset` of the (live) rows at `addrs` of fragment `frag`: the live rows of
    /// the fragments before it, plus the row's live position inside its fragment.
    async fn row_offsets(&self, frag: &pb::DataFragment, addrs: &UInt64Array) -> Result<UInt64Array> {
        let base = self.row_offset_base(frag.id).await?;
        let deleted = self.deleted_rows(frag).await?;
        Ok(addrs
            .values()
            .iter()
            .map(|&a| {
                let off = a & 0xFFFF_FFFF;
                base + off - deleted.partition_point(|&d| u64::from(d) < off) as u64
            })
            .collect())
    }

    /// The live rows of the fragments before fragment `id` in this version (computed once
    /// per version for all fragments).
    async fn row_offset_base(&self, id: u64) -> Result<u64> {
        let version = self.version();
        let cached = self
            .caches
            .row_offset_bases
            .lock()
            .ok()
            .and_then(|c| c.get(&version).cloned());
        let bases = match cached {
            Some(b) => b,
            None => {
                let mut bases = std::collections::HashMap::new();
                let mut start = 0u64;
                for f in &self.manifest.fragments {
                    bases.insert(f.id, start);
                    start += match &f.deletion_file {
                        // A deletion file that does not record its count: count it.
                        Some(d) if d.num_deleted_rows == 0 => {
                            f.physical_rows.saturating_sub(self.deleted_rows(f).await?.len() as u64)
                        }
                        _ => lancelet_table::manifest::live_rows(f),
                    };
                }
                let bases = Arc::new(bases);
                if let Ok(mut c) = self.caches.row_offset_bases.lock() {
                    c.insert(version, bases.clone());
                }
                bases
            }
        };
        bases.get(&id).copied().ok_or_else(|| {
            Error::InvalidArgument(format!("row address of fragment {id}, which is not in this version"))
        })
    }

    /// The map from row ids to the addresses of live rows (built once per version).
    pub(crate) async fn row_id_index(&self) -> Result<Arc<RowIdIndex>> {
        if let Some(i) = self
            .caches
            .row_id_index
            .lock()
            .ok()
            .and_then(|c| c.get(&self.version()).cloned())
        {
            return Ok(i);
        }
        let mut b = RowIdIndexBuilder::new();
        for f in self.fragments() {
            let segs = fragment_row_id_segments(self.store.as_ref(), f).await?.ok_or_else(|| {
                Error::corrupt(
                    &self.root.display().to_string(),
                    format!("fragment {} of a dataset with stable row ids has no row ids", f.id),
                )
            })?;
            let deleted = self.deleted_rows(f).await?;
            b.add_fragment(f.id, &segs, &deleted);
        }
        let index = Arc::new(b.finish()?);
        if let Ok(mut c) = self.caches.row_id_index.lock() {
            c.insert(self.version(), index.clone());
        }
        Ok(index)
    }

    /// Rows by row id, in the order given (duplicates repeat). With stable row ids, ids of
    /// rows that do not exist (deleted, or never written) are skipped, as pylance's
    /// `_take_rows` does. Without them a row id is its address, and a bad one is an error.
    pub async fn take_row_ids(&self, ids: &[u64], columns: Option<&[String]>) -> Result<RecordBatch> {
        if !self.has_stable_row_ids() {
            // Ids are addresses: one naming a missing fragment or row is an error (pylance).
            return self.take_addresses(ids, columns).await;
        }
        let index = self.row_id_index().await?;
        let addrs: Vec<u64> = ids.iter().filter_map(|&id| index.get(id)).collect();
        self.take_addresses(&addrs, columns).await
    }

    /// The change data feed from version `begin` (exclusive) to `end` (inclusive), as
    /// pylance computes it: rows of *this* version created in that range, rows of this
    /// version created by `begin` and updated in the range, and the ids of rows live at
    /// `begin` and gone at `end` (only with stable row ids; without them rows carry no
    /// versions and every row reads as created at version 1, as in pylance).
    pub async fn changes(&self, begin: u64, end: u64, columns: Option<&[String]>) -> Result<Changes> {
        if begin > end {
            return Err(Error::InvalidArgument(format!(
                "begin version {begin} is after end version {end}"
            )));
        }
        let mut names: Vec<String> = match columns {
            Some(c) => c.to_vec(),
            None => self.schema().fields().iter().map(|f| f.name().clone()).collect(),
        };
        for s in [Special::RowId, Special::CreatedAt, Special::UpdatedAt] {
            if !names.iter().any(|n| n == s.name()) {
                names.push(s.name().to_string());
            }
        }
        let query = |filter: String| ScanOptions {
            columns: Columns::Names(names.clone()),
            filter: Some(filter),
            ..ScanOptions::default()
        };
        let inserted = self
            .scan_one(query(format!(
                "{ROW_CREATED_AT} > {begin} AND {ROW_CREATED_AT} <= {end}"
            )))
            .await?;
        let updated = self
            .scan_one(query(format!(
                "{ROW_CREATED_AT} <= {begin} AND {ROW_UPDATED_AT} > {begin} AND {ROW_UPDATED_AT} <= {end}"
            )))
            .await?;
        let deleted = if !self.has_stable_row_ids() {
            None
        } else if begin == 0 {
            Some(Vec::new())
        } else {
            let before = self.checkout(Some(crate::VersionRef::Number(begin))).await?;
            let after = self.checkout(Some(crate::VersionRef::Number(end))).await?;
            let now: HashSet<u64> = after.live_row_ids().await?.into_iter().collect();
            let mut gone: Vec<u64> = before
                .live_row_ids()
                .await?
                .into_iter()
                .filter(|id| !now.contains(id))
                .collect();
            gone.sort_unstable();
            Some(gone)
        };
        Ok(Changes {
            inserted,
            updated,
            deleted,
        })
    }

    /// Every row a scan returns, as one batch.
    async fn scan_one(&self, opts: ScanOptions) -> Result<RecordBatch> {
        let scan = std::sync::Arc::new(crate::scan::Scan::plan(self, opts).await?);
        let parts = futures::future::try_join_all((0..scan.num_tasks()).map(|i| {
            let scan = scan.clone();
            async move { scan.run_task(i).await }
        }))
        .await?;
        Ok(arrow_select::concat::concat_batches(scan.schema(), &parts)?)
    }

    /// The ids of every live row of this version.
    pub(crate) async fn live_row_ids(&self) -> Result<Vec<u64>> {
        let mut out = Vec::new();
        for f in self.fragments() {
            let deleted = self.deleted_rows(f).await?;
            match fragment_row_ids(self.store.as_ref(), f).await? {
                Some(ids) => out.extend(
                    ids.into_iter()
                        .enumerate()
                        .filter(|(i, _)| deleted.binary_search(&(*i as u32)).is_err())
                        .map(|(_, id)| id),
                ),
                None => out.extend(
                    (0..f.physical_rows)
                        .filter(|i| deleted.binary_search(&(*i as u32)).is_err())
                        .map(|i| (f.id << 32) | i),
                ),
            }
        }
        Ok(out)
    }
}

/// The u64 column `name` (e.g. `_rowid`) of scan outputs, concatenated.
pub(crate) fn u64_column(batches: &[RecordBatch], name: &str) -> Result<Vec<u64>> {
    let mut out = Vec::new();
    for b in batches {
        let col = b
            .column_by_name(name)
            .ok_or_else(|| Error::InvalidArgument(format!("the scan returned no {name} column")))?;
        let col = col
            .as_primitive_opt::<arrow_array::types::UInt64Type>()
            .ok_or_else(|| Error::InvalidArgument(format!("{name} is not a u64 column")))?;
        out.extend_from_slice(col.values());
    }
    Ok(out)
}

/// Gives the first rows of `frags` (in order, whole fragments) the row ids `ids`: rows
/// that moved keep their ids, and the versions they were created at when `created` is
/// given (else the commit looks them up). Fragments after them get new ids when committed.
pub(crate) fn carry_row_ids(frags: &mut [pb::DataFragment], ids: &[u64], created: Option<&[u64]>) -> Result<()> {
    let mut at = 0usize;
    for f in frags.iter_mut() {
        if at == ids.len() {
            break;
        }
        let end = at + f.physical_rows as usize;
        let part = ids.get(at..end).ok_or_else(|| {
            Error::InvalidArgument(format!(
                "{} row ids to keep do not cover whole new fragments",
                ids.len()
            ))
        })?;
        set_row_ids(f, part);
        if let Some(c) = created.and_then(|c| c.get(at..end)) {
            f.created_at_version_sequence = Some(pb::data_fragment::CreatedAtVersionSequence::InlineCreatedAtVersions(
                lancelet_table::rowids::encode_versions(c).into(),
            ));
        }
        at = end;
    }
    if at != ids.len() {
        return Err(Error::InvalidArgument(format!(
            "{} row ids to keep, but the new fragments hold only {at} rows",
            ids.len()
        )));
    }
    Ok(())
}

/// What changed between two versions (see [`Dataset::changes`]).
#[derive(Debug)]
pub struct Changes {
    /// Rows created after the begin version, as they are now.
    pub inserted: RecordBatch,
    /// Rows that existed at the begin version and were updated after it, as they are now.
    pub updated: RecordBatch,
    /// Ids of rows live at the begin version and gone now, ascending (`None` without stable
    /// row ids: rows then have no lasting identity).
    pub deleted: Option<Vec<u64>>,
}
