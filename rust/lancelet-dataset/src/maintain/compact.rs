//! Compaction: merging small fragments and materializing deletions (a Rewrite transaction).
//!
//! A fragment is a candidate when it has fewer physical rows than the target, or (with
//! `materialize_deletions`) more than `materialize_deletions_threshold` of its rows
//! deleted. Runs of adjacent candidates are cut into groups as pylance 14 cuts them (see
//! [`plan_groups`]) and each group is rewritten, in order, into fragments of about the
//! target rows; a lone small fragment is left alone (rewriting it would merge nothing).
//! The new fragments take the next ids at commit and the dataset lists fragments by id,
//! so rewritten rows move after the fragments left alone, as in pylance. Each run is a
//! rewrite group: the old fragments it replaces must be unchanged at commit, so a
//! concurrent delete on them conflicts, while appends do not.

use arrow_array::cast::AsArray;
use arrow_array::RecordBatch;
use lancelet_table::manifest::live_rows;
use lancelet_table::pb;
use lancelet_table::pb::transaction::Operation;
use lancelet_table::rowids::{set_row_ids, set_versions};

use crate::scan::lineage::{ROW_CREATED_AT, ROW_UPDATED_AT};
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

/// Groups of adjacent fragments (indices into `frags`) to rewrite together, planned as
/// pylance 14 plans them:
///
/// - a fragment is a candidate when it has more than `materialize_deletions_threshold` of
///   its rows deleted (it is rewritten even alone), or fewer *physical* rows than the
///   target (it is merged with its neighbours);
/// - runs of adjacent candidates form bins; a bin of one fragment that is only small is
///   left alone (rewriting it would merge nothing);
/// - a bin is cut into groups in order: fragments are taken until their live rows reach the
///   target, and the rest becomes its own group only if it holds the target rows too
///   (otherwise the whole rest is one group).
pub fn plan_groups(frags: &[pb::DataFragment], opts: &CompactionOptions) -> Vec<Vec<usize>> {
    plan_groups_by_index(frags, opts, &vec![Vec::new(); frags.len()])
}

/// [`plan_groups`] where fragment `i` is covered by the indexes `coverage[i]` (their uuids,
/// sorted): as in pylance, a run of candidates is also cut where that set changes, so no
/// group mixes fragments an index covers with fragments it does not.
pub(crate) fn plan_groups_by_index(
    frags: &[pb::DataFragment],
    opts: &CompactionOptions,
    coverage: &[Vec<String>],
) -> Vec<Vec<usize>> {
    let target = opts.target_rows_per_fragment;
    let deleted_share = |f: &pb::DataFragment| {
        let deleted = f.physical_rows.saturating_sub(live_rows(f));
        deleted as f64 / f.physical_rows.max(1) as f64
    };
    // (fragments, whether one of them is rewritten for its deletions)
    let mut bins: Vec<(Vec<usize>, bool)> = Vec::new();
    let mut current: Option<(Vec<usize>, bool)> = None;
    for (i, f) in frags.iter().enumerate() {
        let itself = opts.materialize_deletions && deleted_share(f) > opts.materialize_deletions_threshold;
        if itself || f.physical_rows < target {
            let same = |bin: &(Vec<usize>, bool)| bin.0.first().is_none_or(|&j| coverage.get(j) == coverage.get(i));
            if current.as_ref().is_some_and(|b| !same(b)) {
                bins.extend(current.take());
            }
            let bin = current.get_or_insert_with(|| (Vec::new(), false));
            bin.0.push(i);
            bin.1 |= itself;
        } else if let Some(bin) = current.take() {
            bins.push(bin);
        }
    }
    bins.extend(current);
    let mut groups = Vec::new();
    for (bin, itself) in bins {
        if bin.len() == 1 && !itself {
            continue;
        }
        let mut rest: &[usize] = &bin;
        loop {
            let (mut n, mut rows) = (0usize, 0u64);
            while rows < target && n < rest.len() {
                rows += live_rows(&frags[rest[n]]);
                n += 1;
            }
            let remaining: u64 = rest[n..].iter().map(|&i| live_rows(&frags[i])).sum();
            if n < rest.len() && remaining >= target {
                groups.push(rest[..n].to_vec());
                rest = &rest[n..];
            } else {
                groups.push(rest.to_vec());
                break;
            }
        }
    }
    groups
}

/// Rows of each output file for a group of `rows` live rows, as pylance 14 cuts them: as
/// many files as whole targets fit (at least one), the rows spread evenly (the first files
/// take one more row when they do not divide).
pub(crate) fn file_sizes(rows: u64, target: u64) -> Vec<u64> {
    let files = (rows / target.max(1)).max(1);
    let (base, extra) = (rows / files, rows % files);
    (0..files).map(|i| base + u64::from(i < extra)).collect()
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
        self.refuse_unrewritable_blobs("compacting")?;
        // Blob values are read back and placed anew in the new files (re-packed).
        let blobs = self.has_blob_columns();
        if !(0.0..=1.0).contains(&opts.materialize_deletions_threshold) {
            return Err(Error::InvalidArgument(format!(
                "materialize_deletions_threshold must be between 0 and 1, got {}",
                opts.materialize_deletions_threshold
            )));
        }
        let frags = self.fragments();
        let indices = self.indices().await?;
        let mut coverage: Vec<Vec<String>> = vec![Vec::new(); frags.len()];
        for idx in indices.iter() {
            let bitmap = lancelet_table::indices::fragment_bitmap(idx).map_err(|e| Error::corrupt("_indices", e))?;
            let uuid = format!("{:?}", idx.uuid);
            for (i, f) in frags.iter().enumerate() {
                if u32::try_from(f.id).is_ok_and(|id| bitmap.contains(id)) {
                    coverage[i].push(uuid.clone());
                }
            }
        }
        for c in &mut coverage {
            c.sort_unstable();
        }
        let groups = plan_groups_by_index(frags, opts, &coverage);
        if groups.is_empty() {
            return Ok((self.clone(), CompactionMetrics::default()));
        }
        let version = self.rewrite_version("compaction")?;
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
                        with_row_address: blobs,
                        ..ScanOptions::default()
                    },
                )
                .await?;
                let rows: u64 = old.iter().map(live_rows).sum();
                let sizes = file_sizes(rows, opts.target_rows_per_fragment);
                let (mut file, mut in_file) = (0usize, 0u64);
                let params = WriteParams {
                    max_rows_per_file: u64::MAX,
                    file_version: version,
                    // Rewritten rows keep the external blobs they referenced.
                    blob: crate::blob::write::BlobWriteOptions {
                        allow_external_outside_bases: true,
                        ..Default::default()
                    },
                    ..WriteParams::default()
                };
                let mut writer = FragmentWriter::new(self.store().clone(), schema.clone(), ids.clone(), params)?;
                let written: Result<Vec<pb::DataFragment>> = async {
                    for i in 0..scan.num_tasks() {
                        let mut batch = scan.run_task(i).await?;
                        if batch.num_rows() == 0 {
                            continue;
                        }
                        if blobs {
                            batch = self.materialize_blobs(&batch).await?;
                        }
                        if stable {
                            for (v, name) in lineage.iter_mut().zip([ROW_ID, ROW_CREATED_AT, ROW_UPDATED_AT]) {
                                let col = batch
                                    .column_by_name(name)
                                    .and_then(|c| c.as_primitive_opt::<arrow_array::types::UInt64Type>())
                                    .ok_or_else(|| Error::InvalidArgument(format!("compaction read no {name}")))?;
                                v.extend_from_slice(col.values());
                            }
                        }
                        if stable || blobs {
                            // Only the dataset's columns are written (in its schema's order).
                            let n = schema.fields().len();
                            batch = RecordBatch::try_new(schema.clone(), batch.columns()[..n].to_vec())?;
                        }
                        // Files are cut at `sizes` (the last one takes whatever is left).
                        let mut offset = 0usize;
                        while offset < batch.num_rows() {
                            let want = if file + 1 < sizes.len() {
                                sizes[file] - in_file
                            } else {
                                u64::MAX
                            };
                            let take = want.min((batch.num_rows() - offset) as u64);
                            writer.write(&batch.slice(offset, take as usize))?;
                            offset += take as usize;
                            in_file += take;
                            if take == want {
                                writer.cut()?;
                                file += 1;
                                in_file = 0;
                            }
                        }
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
        let opts = crate::index::build::OptimizeIndicesOptions {
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
        assert_eq!(file_sizes(405, 200), vec![203, 202]);
        assert_eq!(file_sizes(180, 120), vec![180]);
        assert_eq!(file_sizes(50, 1000), vec![50]);
        // pylance 14: 705 rows at target 100 -> 5 files of 101 and 2 of 100.
        assert_eq!(file_sizes(705, 100), vec![101, 101, 101, 101, 101, 100, 100]);
    }

    #[test]
    fn a_lone_small_fragment_stays_unless_it_has_deletions() {
        let f = [frag(0, 1000, 0), frag(1, 10, 0), frag(2, 1000, 0), frag(3, 10, 2)];
        assert_eq!(plan_groups(&f, &opts(100)), vec![vec![3]]);
    }

    #[test]
    fn runs_are_cut_where_index_coverage_changes() {
        // pylance 14: ten 10-row fragments, the first five indexed, target 100 -> 50 + 50.
        let f: Vec<_> = (0..10).map(|i| frag(i, 10, 0)).collect();
        let cov: Vec<Vec<String>> = (0..10)
            .map(|i| if i < 5 { vec!["idx".to_string()] } else { vec![] })
            .collect();
        assert_eq!(
            plan_groups_by_index(&f, &opts(100), &cov),
            vec![vec![0, 1, 2, 3, 4], vec![5, 6, 7, 8, 9]]
        );
    }

    #[test]
    fn candidates_are_judged_by_physical_rows_as_in_pylance() {
        // 100 stored rows with 10 deleted (not above 10%), target 100: none is small.
        let f: Vec<_> = (0..3).map(|i| frag(i, 100, 10)).collect();
        assert!(plan_groups(&f, &opts(100)).is_empty());
    }

    #[test]
    fn a_short_rest_stays_in_the_last_group() {
        // pylance 14: ten 10-row fragments, target 35 -> fragments of 40 and 60 rows.
        let f: Vec<_> = (0..10).map(|i| frag(i, 10, 0)).collect();
        let sizes: Vec<usize> = plan_groups(&f, &opts(35)).iter().map(Vec::len).collect();
        assert_eq!(sizes, vec![4, 6]);
        // A lone small fragment at the end of a run of big ones stays.
        let f = [
            frag(0, 100, 0),
            frag(1, 5, 0),
            frag(2, 5, 0),
            frag(3, 100, 0),
            frag(4, 5, 0),
        ];
        assert_eq!(plan_groups(&f, &opts(50)), vec![vec![1, 2]]);
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
                let rows: u64 = g.iter().map(|&i| live_rows(&f[i])).sum();
                let sizes = file_sizes(rows, target);
                proptest::prop_assert_eq!(sizes.iter().sum::<u64>(), rows);
                proptest::prop_assert!(sizes.iter().all(|&n| n + 1 >= sizes[0] && n <= sizes[0]));
            }
        }
    }
}
