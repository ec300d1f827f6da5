//! Compaction: merging small fragments and materializing deletions (a Rewrite transaction).
//!
//! A fragment is a candidate when it has fewer live rows than the target, or (with
//! `materialize_deletions`) more than `materialize_deletions_threshold` of its rows
//! deleted. Runs of adjacent candidates are rewritten together, in order, into fragments
//! of up to the target rows; a lone candidate is only rewritten when it has deletions to
//! drop (rewriting it alone would merge nothing). Insertion order is kept. Each run is a
//! rewrite group: the old fragments it replaces must be unchanged at commit, so a
//! concurrent delete on them conflicts, while appends do not.

use arrow_array::cast::AsArray;
use arrow_array::RecordBatch;
use lancelet_table::manifest::live_rows;
use lancelet_table::pb;
use lancelet_table::pb::transaction::Operation;
use lancelet_table::rowids::{set_row_ids, set_versions};

use crate::lineage::{ROW_CREATED_AT, ROW_UPDATED_AT};
use crate::scan::{Columns, Scan, ScanOptions, ROW_ID};
use crate::write::{dataset_field_ids, FragmentWriter, WriteParams};
use crate::{Dataset, Error, Result};

/// Options of [`Dataset::compact_files`] (pylance's names and defaults).
#[derive(Debug, Clone)]
pub struct CompactionOptions {
    /// Rows per fragment to aim for.
    pub target_rows_per_fragment: u64,
    /// Rewrite fragments with enough deleted rows even if they are large.
    pub materialize_deletions: bool,
    /// The deleted fraction above which a fragment is rewritten.
    pub materialize_deletions_threshold: f64,
    /// Rows per batch while rewriting.
    pub batch_size: usize,
}

impl Default for CompactionOptions {
    fn default() -> Self {
        Self {
            target_rows_per_fragment: 1024 * 1024,
            materialize_deletions: true,
            materialize_deletions_threshold: 0.1,
            batch_size: 8192,
        }
    }
}

/// What [`Dataset::compact_files`] did (pylance's names).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CompactionMetrics {
    /// Fragments replaced.
    pub fragments_removed: u64,
    /// Fragments written.
    pub fragments_added: u64,
    /// Data files replaced.
    pub files_removed: u64,
    /// Data files written.
    pub files_added: u64,
}

/// Groups of adjacent fragments (indices into `frags`) to rewrite together. Candidates
/// are binned in order until a bin holds the target rows; a short bin at the end of a run
/// joins the bin before it when they are adjacent, else it stands alone if rewriting it
/// merges something or drops deletions.
pub fn plan_groups(frags: &[pb::DataFragment], opts: &CompactionOptions) -> Vec<Vec<usize>> {
    let deleted_share = |f: &pb::DataFragment| {
        let deleted = f.physical_rows.saturating_sub(live_rows(f));
        deleted as f64 / f.physical_rows.max(1) as f64
    };
    let has_deletions = |f: &pb::DataFragment| f.deletion_file.is_some() && live_rows(f) < f.physical_rows;
    let candidate = |f: &pb::DataFragment| {
        live_rows(f) < opts.target_rows_per_fragment
            || (opts.materialize_deletions && deleted_share(f) > opts.materialize_deletions_threshold)
    };
    let mut groups: Vec<Vec<usize>> = Vec::new();
    let mut bin: Vec<usize> = Vec::new();
    let mut bin_rows = 0u64;
    let flush = |bin: &mut Vec<usize>, groups: &mut Vec<Vec<usize>>| {
        let Some(&first) = bin.first() else { return };
        match groups.last_mut() {
            Some(prev) if prev.last().is_some_and(|&l| l + 1 == first) => prev.append(bin),
            _ if bin.len() > 1 || has_deletions(&frags[first]) => groups.push(std::mem::take(bin)),
            _ => bin.clear(),
        }
    };
    for (i, f) in frags.iter().enumerate() {
        if !candidate(f) {
            flush(&mut bin, &mut groups);
            bin_rows = 0;
            continue;
        }
        bin.push(i);
        bin_rows += live_rows(f);
        if bin_rows >= opts.target_rows_per_fragment {
            if bin.len() > 1 || has_deletions(f) {
                groups.push(std::mem::take(&mut bin));
            } else {
                bin.clear();
            }
            bin_rows = 0;
        }
    }
    flush(&mut bin, &mut groups);
    groups
}

/// Rows per output file for a group of `rows` live rows: as many files as whole targets
/// fit (at least one), evenly filled.
pub fn rows_per_file(rows: u64, target: u64) -> u64 {
    let files = (rows / target.max(1)).max(1);
    rows.div_ceil(files).max(1)
}

impl Dataset {
    /// Rewrites small fragments and fragments with many deleted rows into fewer, larger
    /// ones (see the module docs); returns the dataset at the new version (this one when
    /// there was nothing to do) and what changed.
    pub async fn compact_files(&self, opts: &CompactionOptions) -> Result<(Self, CompactionMetrics)> {
        if opts.target_rows_per_fragment == 0 || opts.batch_size == 0 {
            return Err(Error::InvalidArgument(
                "target_rows_per_fragment and batch_size must be positive".into(),
            ));
        }
        self.refuse_blob_rewrite("compacting")?;
        if !(0.0..=1.0).contains(&opts.materialize_deletions_threshold) {
            return Err(Error::InvalidArgument(format!(
                "materialize_deletions_threshold must be between 0 and 1, got {}",
                opts.materialize_deletions_threshold
            )));
        }
        let frags = self.fragments();
        let groups = plan_groups(frags, opts);
        if groups.is_empty() {
            return Ok((self.clone(), CompactionMetrics::default()));
        }
        let version = self.writable_version("compaction")?;
        let stable = self.has_stable_row_ids();
        let schema = self.schema().clone();
        let all: Vec<usize> = (0..schema.fields().len()).collect();
        let ids = dataset_field_ids(&schema, &self.manifest().fields, &all)?;
        let mut rewritten = Vec::new();
        let mut new_paths = Vec::new();
        let mut metrics = CompactionMetrics::default();
        let result: Result<()> = async {
            for group in &groups {
                let old: Vec<pb::DataFragment> = group.iter().map(|&i| frags[i].clone()).collect();
                // With stable row ids, rows keep their ids and versions: read them along.
                let columns = if stable {
                    let mut names: Vec<String> = schema.fields().iter().map(|f| f.name().clone()).collect();
                    names.extend([ROW_ID, ROW_CREATED_AT, ROW_UPDATED_AT].map(String::from));
                    Columns::Names(names)
                } else {
                    Columns::All
                };
                let mut lineage: [Vec<u64>; 3] = Default::default();
                let scan = Scan::plan(
                    self,
                    ScanOptions {
                        columns,
                        fragments: Some(old.iter().map(|f| f.id).collect()),
                        batch_size: opts.batch_size,
                        ..ScanOptions::default()
                    },
                )
                .await?;
                let rows: u64 = old.iter().map(live_rows).sum();
                let params = WriteParams {
                    max_rows_per_file: rows_per_file(rows, opts.target_rows_per_fragment),
                    file_version: version,
                    ..WriteParams::default()
                };
                let mut writer = FragmentWriter::new(self.store().clone(), schema.clone(), ids.clone(), params)?;
                let written: Result<Vec<pb::DataFragment>> = async {
                    for i in 0..scan.num_tasks() {
                        let mut batch = scan.run_task(i).await?;
                        if batch.num_rows() == 0 {
                            continue;
                        }
                        if stable {
                            let n = schema.fields().len();
                            for (k, v) in lineage.iter_mut().enumerate() {
                                let col = batch.column(n + k).as_primitive::<arrow_array::types::UInt64Type>();
                                v.extend_from_slice(col.values());
                            }
                            batch = RecordBatch::try_new(schema.clone(), batch.columns()[..n].to_vec())?;
                        }
                        writer.write(&batch)?;
                        writer.upload_pending().await?;
                    }
                    let mut new = writer.finish()?;
                    writer.upload_pending().await?;
                    if stable {
                        let mut at = 0usize;
                        for f in &mut new {
                            let end = at + f.physical_rows as usize;
                            let [ids, created, updated] = &lineage;
                            let (Some(i), Some(c), Some(u)) =
                                (ids.get(at..end), created.get(at..end), updated.get(at..end))
                            else {
                                return Err(Error::InvalidArgument("compaction lost track of row ids".into()));
                            };
                            set_row_ids(f, i);
                            set_versions(f, c, u);
                            at = end;
                        }
                    }
                    Ok(new)
                }
                .await;
                let new = match written {
                    Ok(n) => n,
                    Err(e) => {
                        writer.abort().await;
                        return Err(e);
                    }
                };
                new_paths.extend(
                    new.iter()
                        .flat_map(|f| f.files.iter().map(|d| format!("{}/{}", crate::DATA_DIR, d.path))),
                );
                metrics.fragments_removed += old.len() as u64;
                // Data files and deletion files alike, as pylance counts them.
                metrics.files_removed += old
                    .iter()
                    .map(|f| f.files.len() as u64 + u64::from(f.deletion_file.is_some()))
                    .sum::<u64>();
                metrics.fragments_added += new.len() as u64;
                metrics.files_added += new.iter().map(|f| f.files.len() as u64).sum::<u64>();
                rewritten.push(pb::transaction::rewrite::RewriteGroup {
                    old_fragments: old,
                    new_fragments: new,
                });
            }
            Ok(())
        }
        .await;
        let committed = match result {
            Ok(()) => {
                let op = Operation::Rewrite(pb::transaction::Rewrite {
                    groups: rewritten,
                    ..Default::default()
                });
                self.commit_operation(op, None).await
            }
            Err(e) => Err(e),
        };
        let ds = match committed {
            Ok(ds) => ds,
            Err(e) => {
                if crate::write::nothing_committed(&e) {
                    self.remove_files(&new_paths).await;
                }
                return Err(e);
            }
        };
        // The rewrite narrowed the indexes that covered rewritten fragments; rebuild those
        // over the new fragments (pylance remaps them into new directories in the same way).
        let old: std::collections::HashSet<u32> = groups
            .iter()
            .flatten()
            .filter_map(|&i| u32::try_from(frags[i].id).ok())
            .collect();
        let mut touched = Vec::new();
        for idx in self.indices().await?.iter() {
            let bitmap = lancelet_table::indices::fragment_bitmap(idx).map_err(|e| Error::corrupt("_indices", e))?;
            if bitmap.iter().any(|f| old.contains(&f)) && !touched.contains(&idx.name) {
                touched.push(idx.name.clone());
            }
        }
        if touched.is_empty() {
            return Ok((ds, metrics));
        }
        let opts = crate::index_build::OptimizeIndicesOptions {
            num_indices_to_merge: None,
            index_names: Some(touched),
        };
        Ok((ds.optimize_indices(&opts).await?, metrics))
    }
}

/// Plans are pure: checked on their own.
#[cfg(test)]
mod tests {
    use super::*;

    fn frag(id: u64, rows: u64, deleted: u64) -> pb::DataFragment {
        pb::DataFragment {
            id,
            physical_rows: rows,
            deletion_file: (deleted > 0).then(|| pb::DeletionFile {
                num_deleted_rows: deleted,
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    fn opts(target: u64) -> CompactionOptions {
        CompactionOptions {
            target_rows_per_fragment: target,
            ..CompactionOptions::default()
        }
    }

    #[test]
    fn adjacent_small_fragments_merge_and_big_ones_stay() {
        let f = [
            frag(0, 10, 0),
            frag(1, 10, 0),
            frag(2, 1000, 0),
            frag(3, 10, 0),
            frag(4, 20, 0),
        ];
        assert_eq!(plan_groups(&f, &opts(100)), vec![vec![0, 1], vec![3, 4]]);
    }

    #[test]
    fn bins_fill_to_the_target_and_a_short_tail_joins_the_last_bin() {
        // pylance 14's packing: 19 fragments of 45 rows, target 120 -> 5 bins of 3, then 4.
        let f: Vec<_> = (0..19).map(|i| frag(i, 50, 5)).collect();
        let groups = plan_groups(&f, &opts(120));
        let sizes: Vec<usize> = groups.iter().map(Vec::len).collect();
        assert_eq!(sizes, vec![3, 3, 3, 3, 3, 4]);
        assert_eq!(rows_per_file(405, 200), 203);
        assert_eq!(rows_per_file(180, 120), 180);
        assert_eq!(rows_per_file(50, 1000), 50);
    }

    #[test]
    fn a_lone_small_fragment_stays_unless_it_has_deletions() {
        let f = [frag(0, 1000, 0), frag(1, 10, 0), frag(2, 1000, 0), frag(3, 10, 2)];
        assert_eq!(plan_groups(&f, &opts(100)), vec![vec![3]]);
    }

    #[test]
    fn big_fragments_with_many_deletions_are_rewritten() {
        let f = [frag(0, 1000, 500), frag(1, 1000, 5)];
        assert_eq!(plan_groups(&f, &opts(100)), vec![vec![0]]);
        let keep = CompactionOptions {
            materialize_deletions: false,
            ..opts(100)
        };
        assert!(plan_groups(&f, &keep).is_empty());
    }

    proptest::proptest! {
        #[test]
        fn groups_are_ordered_disjoint_runs_of_candidates(
            sizes in proptest::collection::vec((1u64..300, 0u64..100), 0..40),
            target in 1u64..400,
        ) {
            let f: Vec<pb::DataFragment> = sizes
                .iter()
                .enumerate()
                .map(|(i, &(rows, del))| frag(i as u64, rows, del.min(rows)))
                .collect();
            let groups = plan_groups(&f, &opts(target));
            let flat: Vec<usize> = groups.iter().flatten().copied().collect();
            proptest::prop_assert!(flat.windows(2).all(|w| w[0] < w[1]));
            for g in &groups {
                proptest::prop_assert!(g.windows(2).all(|w| w[1] == w[0] + 1));
                let per = rows_per_file(g.iter().map(|&i| live_rows(&f[i])).sum(), target);
                proptest::prop_assert!(per >= 1);
            }
        }
    }
}
