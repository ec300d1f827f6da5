//! Cutting a version into partitions for a distributed reader (Spark): each partition is a
//! list of `(fragment id, physical rows)` pieces, read with [`super::ScanOptions::row_ranges`].
//!
//! A partition holds about `rows_per_partition` stored rows: by default about 128 MiB of
//! stored data (what Spark's file sources aim at), fewer when that would leave cores idle
//! (`min_partitions`). A fragment that fits is kept whole when cutting at its boundary
//! leaves the partition closer to its target than splitting it would; larger fragments
//! become several row ranges. `max_partitions` caps the count.

use std::ops::Range;

use lancelet_table::pb;

/// The stored bytes a partition aims at when no row count is given.
pub(crate) const TARGET_PARTITION_BYTES: u64 = 128 << 20;

/// Bytes per row assumed when the data files record no sizes.
const DEFAULT_ROW_BYTES: f64 = 64.0;

/// How [`plan_partitions`] cuts.
#[derive(Debug, Clone, Copy, Default)]
pub struct PartitionOptions {
    /// Rows per partition (by default from [`TARGET_PARTITION_BYTES`]).
    pub rows_per_partition: Option<u64>,
    /// At most this many partitions.
    pub max_partitions: Option<u64>,
    /// At least this many partitions when the data is small (e.g. the cores of a cluster);
    /// ignored when `rows_per_partition` is given.
    pub min_partitions: Option<u64>,
}

/// One fragment as the planner sees it.
#[derive(Debug, Clone, Copy)]
pub struct FragmentSize {
    /// The fragment id.
    pub id: u64,
    /// Its physical rows (deleted rows included: pieces are physical ranges).
    pub rows: u64,
    /// The bytes of its data files (0 when unknown).
    pub bytes: u64,
}

impl FragmentSize {
    /// A manifest fragment's size.
    pub fn of(f: &pb::DataFragment) -> Self {
        Self {
            id: f.id,
            rows: f.physical_rows,
            bytes: f.files.iter().map(|d| d.file_size_bytes).sum(),
        }
    }
}

/// The partitions of `fragments` (always at least one, possibly empty).
pub fn plan_partitions(fragments: &[FragmentSize], opts: PartitionOptions) -> Vec<Vec<(u64, Range<u64>)>> {
    let total: u64 = fragments.iter().map(|f| f.rows).sum();
    let mut target = match opts.rows_per_partition {
        Some(n) => n.max(1),
        None => {
            let bytes: u64 = fragments.iter().map(|f| f.bytes).sum();
            let per_row = if total > 0 && bytes > 0 {
                bytes as f64 / total as f64
            } else {
                DEFAULT_ROW_BYTES
            };
            let mut n = ((TARGET_PARTITION_BYTES as f64 / per_row) as u64).max(1);
            if let Some(min) = opts.min_partitions.filter(|&m| m > 0 && total > 0) {
                n = n.min(total.div_ceil(min));
            }
            n
        }
    };
    if let Some(max) = opts.max_partitions.filter(|&m| m > 0 && total > 0) {
        target = target.max(total.div_ceil(max));
    }
    let mut parts = Vec::new();
    let mut current = Vec::new();
    let mut rows = 0u64;
    for f in fragments {
        let mut start = 0;
        while start < f.rows {
            let left = f.rows - start;
            let take = if rows > 0 && rows + left > target && left <= target && opts.max_partitions.is_none() {
                if rows + left - target <= target - rows {
                    left // the whole fragment: overshooting is the smaller error
                } else {
                    parts.push(std::mem::take(&mut current)); // cut at the fragment's boundary
                    rows = 0;
                    continue;
                }
            } else {
                left.min(target - rows)
            };
            current.push((f.id, start..start + take));
            rows += take;
            start += take;
            if rows >= target {
                parts.push(std::mem::take(&mut current));
                rows = 0;
            }
        }
    }
    if !current.is_empty() || parts.is_empty() {
        parts.push(current);
    }
    parts
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frags(sizes: &[u64]) -> Vec<FragmentSize> {
        sizes
            .iter()
            .enumerate()
            .map(|(i, &rows)| FragmentSize {
                id: i as u64,
                rows,
                bytes: rows * 10,
            })
            .collect()
    }

    proptest::proptest! {
        #[test]
        fn every_row_is_in_exactly_one_partition(
            sizes in proptest::collection::vec(0u64..300, 0..10),
            per in proptest::option::of(1u64..100),
            max in proptest::option::of(1u64..8),
            min in proptest::option::of(1u64..8),
        ) {
            let opts = PartitionOptions { rows_per_partition: per, max_partitions: max, min_partitions: min };
            let parts = plan_partitions(&frags(&sizes), opts);
            proptest::prop_assert!(!parts.is_empty());
            if let Some(max) = max {
                proptest::prop_assert!(parts.len() as u64 <= max.max(1));
            }
            let mut got: Vec<(u64, u64)> =
                parts.iter().flatten().flat_map(|(f, r)| r.clone().map(move |i| (*f, i))).collect();
            got.sort_unstable();
            let want: Vec<(u64, u64)> =
                sizes.iter().enumerate().flat_map(|(f, &n)| (0..n).map(move |i| (f as u64, i))).collect();
            proptest::prop_assert_eq!(got, want);
        }
    }

    #[test]
    fn small_fragments_stay_whole_and_a_lone_one_is_split_for_every_core() {
        let two = PartitionOptions {
            min_partitions: Some(2),
            ..PartitionOptions::default()
        };
        let parts = plan_partitions(&frags(&[1000; 7]), two);
        let ids: Vec<Vec<u64>> = parts.iter().map(|p| p.iter().map(|(f, _)| *f).collect()).collect();
        assert_eq!(ids, vec![vec![0, 1, 2, 3], vec![4, 5, 6]]);
        assert_eq!(
            plan_partitions(&frags(&[1000]), two),
            vec![vec![(0, 0..500)], vec![(0, 500..1000)]]
        );
        assert_eq!(plan_partitions(&frags(&[100_000_000]), two).len(), 8);
    }
}
