//! Cutting a scan's fragments into tasks: about [`TARGET_TASK_BYTES`] of the columns read
//! each, cut at page boundaries of the widest column, after offset/limit (without a
//! filter), zone statistics and scalar indexes removed what cannot be returned.

use std::collections::{BTreeSet, HashMap};
use std::ops::Range;
use std::sync::Arc;

use arrow_schema::Schema;
use lancelet_expr::BoundExpr;
use lancelet_table::pb;

use super::plan::Filter;
use super::{ScanOptions, ScanTask};
use crate::{Dataset, Error, Result};

/// Bytes of stored data a task aims to read: large enough that per-read overheads vanish,
/// small enough that a few tasks in flight keep a scan's memory low (a 1 GB scan of all
/// columns peaked at 410 MB RSS with fixed 128K-row tasks of 188-byte rows).
const TARGET_TASK_BYTES: u64 = 8 << 20;
/// Bytes a task aims to read from an object store (a few such tasks run at once).
const REMOTE_TASK_BYTES: u64 = 32 << 20;
/// Most rows per task on an object store.
const REMOTE_MAX_TASK_ROWS: u64 = 1 << 20;
/// Bounds on rows per task.
const MIN_TASK_ROWS: u64 = 4096;
const MAX_TASK_ROWS: u64 = 256 * 1024;

/// The fraction of a row's stored bytes a scan reads, estimated by top-level columns.
pub(super) fn read_share(base: &Schema, read: &Schema, filter: Option<&Filter>) -> f64 {
    let total = base.fields().len().max(1);
    let mut names: BTreeSet<&str> = read.fields().iter().map(|f| f.name().as_str()).collect();
    if let Some(f) = filter {
        names.extend(f.columns.iter().map(String::as_str));
    }
    (names.len().max(1) as f64 / total as f64).min(1.0)
}

/// The share of a fragment's bytes the scan reads, measured on the first fragment's data
/// files (page sizes per column), and the widest column read: an embedding column can be
/// most of a row, so counting columns would make its tasks many times too large. `None`
/// without a fragment to measure.
pub(super) async fn measured_share(ds: &Dataset, read: &Schema, filter: Option<&Filter>) -> Option<(f64, String)> {
    let frag = ds.fragments().iter().find(|f| f.physical_rows > 0)?;
    let readers = ds.fragment_readers(frag).await.ok()?;
    let mut names: BTreeSet<&str> = read.fields().iter().map(|f| f.name().as_str()).collect();
    if let Some(f) = filter {
        names.extend(f.columns.iter().map(|c| c.split('.').next().unwrap_or(c)));
    }
    let (mut total, mut wanted) = (0u64, 0u64);
    let mut widest: Option<(u64, String)> = None;
    for r in &readers {
        let meta = r.metadata();
        let column_bytes = |c: usize| -> u64 {
            meta.columns
                .get(c)
                .map(|col| col.pages.iter().flat_map(|p| &p.buffers).map(|b| b.end - b.start).sum())
                .unwrap_or(0)
        };
        for plan in &meta.plans {
            let mut bytes = 0u64;
            plan.visit(&mut |p| {
                if matches!(p, lancelet_file::plan::FieldPlan::Leaf { .. })
                    || meta.version == lancelet_file::footer::FileVersion::V2_0
                {
                    bytes += column_bytes(p.column());
                }
            });
            total += bytes;
            if names.contains(plan.field().name().as_str()) {
                wanted += bytes;
                if widest.as_ref().is_none_or(|(b, _)| bytes > *b) {
                    widest = Some((bytes, plan.field().name().clone()));
                }
            }
        }
    }
    let widest = widest.map(|(_, n)| n).unwrap_or_default();
    (total > 0).then(|| ((wanted as f64 / total as f64).clamp(1e-3, 1.0), widest))
}

/// Where a fragment's tasks end (physical rows, ascending, the last at `rows`): about every
/// `task_rows` rows, moved to a page boundary of the widest column read when one is near,
/// so that its pages (most of the bytes) are not split between tasks and need no copy to
/// join their parts.
pub(super) fn task_cuts(boundaries: &[u64], rows: u64, task_rows: u64) -> Vec<u64> {
    let mut cuts = Vec::new();
    let mut last = 0u64;
    while last < rows {
        let target = last + task_rows;
        if target >= rows {
            break;
        }
        let (lo, hi) = (last + task_rows / 2, last + task_rows + task_rows / 2);
        let near = boundaries
            .iter()
            .copied()
            .filter(|b| *b > lo && *b <= hi && *b < rows)
            .min_by_key(|b| b.abs_diff(target));
        last = near.unwrap_or(target);
        cuts.push(last);
    }
    cuts.push(rows);
    cuts
}

/// Page boundaries (first rows) of the column of `readers` with the most bytes below the
/// top-level field `name`.
pub(super) fn page_boundaries(readers: &[Arc<lancelet_file::FileReader>], name: &str) -> Vec<u64> {
    let mut best: Option<(u64, Vec<u64>)> = None;
    for r in readers {
        let meta = r.metadata();
        for plan in meta.plans.iter().filter(|p| p.field().name() == name) {
            plan.visit(&mut |p| {
                if let Some(col) = meta.columns.get(p.column()) {
                    let bytes: u64 = col
                        .pages
                        .iter()
                        .flat_map(|pg| &pg.buffers)
                        .map(|b| b.end - b.start)
                        .sum();
                    if best.as_ref().is_none_or(|(b, _)| bytes > *b) {
                        best = Some((bytes, col.row_starts.clone()));
                    }
                }
            });
        }
    }
    best.map(|(_, starts)| starts).unwrap_or_default()
}

/// Rows per task for a fragment: [`TARGET_TASK_BYTES`] of the columns read, and at most
/// the scan's `max_task_rows`.
pub(super) fn task_rows_for(frag: &pb::DataFragment, share: f64, opts: &ScanOptions, local: bool) -> u64 {
    let batch_size = opts.batch_size as u64;
    let bytes: u64 = frag.files.iter().map(|f| f.file_size_bytes).sum();
    // On object stores each request costs a round trip: fewer, larger tasks.
    let (target, max_rows) = if local {
        (TARGET_TASK_BYTES, MAX_TASK_ROWS)
    } else {
        (REMOTE_TASK_BYTES, REMOTE_MAX_TASK_ROWS)
    };
    let per_row = if frag.physical_rows == 0 || bytes == 0 {
        100.0
    } else {
        (bytes as f64 / frag.physical_rows as f64 * share).max(1.0)
    };
    let rows =
        ((target as f64 / per_row) as u64).clamp(MIN_TASK_ROWS.max(batch_size.min(max_rows)), max_rows.max(batch_size));
    opts.max_task_rows.map_or(rows, |m| rows.min(m.max(1)))
}

/// Cuts the live rows of the chosen fragments into tasks, applying offset/limit up front
/// when there is no filter.
pub(super) async fn plan_tasks(
    ds: &Dataset,
    opts: &ScanOptions,
    filtered: bool,
    share: f64,
    widest: Option<&str>,
    prune: Option<(&BoundExpr, &[String])>,
    index_rows: Option<&crate::scan::index_query::IndexCandidates>,
) -> Result<Vec<ScanTask>> {
    // Each piece is a fragment, optionally restricted to some physical rows.
    let pieces: Vec<(&pb::DataFragment, Option<Range<u64>>)> = match (&opts.row_ranges, &opts.fragments) {
        (Some(ranges), _) => ranges
            .iter()
            .map(|(id, r)| {
                let f = ds.fragment(*id)?;
                if r.start > r.end || r.end > f.physical_rows {
                    return Err(Error::OutOfRange(format!(
                        "rows {}..{} of fragment {id}, which has {} rows",
                        r.start, r.end, f.physical_rows
                    )));
                }
                Ok((f, Some(r.clone())))
            })
            .collect::<Result<_>>()?,
        (None, None) => ds.fragments().iter().map(|f| (f, None)).collect(),
        (None, Some(ids)) => ids
            .iter()
            .map(|&id| Ok((ds.fragment(id)?, None)))
            .collect::<Result<_>>()?,
    };
    let (mut skip, mut remaining) = if filtered {
        (0, u64::MAX)
    } else {
        (opts.offset, opts.limit.unwrap_or(u64::MAX))
    };
    let local = ds.is_local();
    check_row_counts(ds, &pieces, skip.saturating_add(remaining), |f| {
        task_rows_for(f, share, opts, local)
    })
    .await?;
    // Rows each fragment may match, by its statistics (fragments without any are absent).
    // Fragments an index already narrowed need no statistics: reading them costs more than
    // a point lookup (0.27 of 0.32 ms to plan `key = x` on 2M rows).
    let matching = match prune {
        Some((expr, columns)) => {
            let unindexed: Vec<_> = pieces
                .iter()
                .filter(|(f, _)| index_rows.is_none_or(|c| !c.rows.contains_key(&f.id)))
                .cloned()
                .collect();
            crate::scan::prune::matching_rows(ds, &unindexed, expr, columns).await?
        }
        None => HashMap::new(),
    };
    let mut tasks = Vec::new();
    for (f, within) in pieces {
        if remaining == 0 {
            break;
        }
        if within.is_none() {
            // Skipping whole fragments needs no deletion file.
            let live = if opts.include_deleted {
                f.physical_rows
            } else {
                lancelet_table::manifest::live_rows(f)
            };
            if skip >= live {
                skip -= live;
                continue;
            }
        }
        let mut ranges = if opts.include_deleted {
            std::iter::once(0..f.physical_rows).collect()
        } else {
            ds.live_ranges(f).await?
        };
        if let Some(w) = &within {
            ranges = intersect(&ranges, w);
            let live: u64 = ranges.iter().map(|r| r.end - r.start).sum();
            if skip >= live {
                skip -= live;
                continue;
            }
        }
        let mut prefiltered = false;
        if let Some(rows) = index_rows.and_then(|c| c.rows.get(&f.id)) {
            // The rows an index allows (only with a filter: no offset is being skipped).
            ranges = intersect_sorted(&ranges, rows);
            if ranges.is_empty() {
                continue;
            }
            prefiltered = index_rows.is_some_and(|c| c.exact);
        }
        if let Some(m) = matching.get(&f.id) {
            // Only with a filter, so no offset is being skipped here.
            ranges = intersect_sorted(&ranges, m);
            if ranges.is_empty() {
                continue;
            }
        }
        let task_rows = task_rows_for(f, share, opts, local);
        if f.physical_rows > task_rows {
            // The row count comes from the manifest: check it against the data files before
            // cutting it into tasks, or a damaged count (up to 2^32 rows in each of many
            // fragments) would plan millions of tasks. One task's worth needs no check here:
            // the task checks it when it runs.
            ds.fragment_readers(f).await?;
        }
        let cuts = match widest {
            Some(name) if f.physical_rows > task_rows => task_cuts(
                &page_boundaries(&ds.fragment_readers(f).await?, name),
                f.physical_rows,
                task_rows,
            ),
            _ => (1..=f.physical_rows.div_ceil(task_rows.max(1)))
                .map(|k| (k * task_rows).min(f.physical_rows))
                .collect(),
        };
        let mut cut = cuts.iter().copied().peekable();
        let fragment = Arc::new(f.clone());
        let mut current: Vec<Range<u64>> = Vec::new();
        for r in ranges {
            let mut r = r;
            // Skip rows before the offset.
            let len = r.end - r.start;
            if skip >= len {
                skip -= len;
                continue;
            }
            r.start += skip;
            skip = 0;
            while r.start < r.end && remaining > 0 {
                while cut.peek().is_some_and(|c| *c <= r.start) {
                    cut.next();
                }
                let end = cut.peek().copied().unwrap_or(u64::MAX);
                let take = (r.end.min(end) - r.start).min(remaining);
                current.push(r.start..r.start + take);
                remaining -= take;
                r.start += take;
                if r.start == end {
                    tasks.push(ScanTask {
                        fragment: fragment.clone(),
                        ranges: std::mem::take(&mut current),
                        prefiltered,
                    });
                }
            }
            if remaining == 0 {
                break;
            }
        }
        if !current.is_empty() {
            tasks.push(ScanTask {
                fragment,
                ranges: current,
                prefiltered,
            });
        }
    }
    Ok(tasks)
}

/// Checks the row counts of the fragments a scan cuts into several tasks against their
/// data files, several at a time (the readers stay cached for the tasks). Pieces are
/// visited until `wanted` live rows are covered (by the manifest's counts); the planning
/// loop checks again, from the cache, any fragment this missed.
pub(super) async fn check_row_counts(
    ds: &Dataset,
    pieces: &[(&pb::DataFragment, Option<Range<u64>>)],
    mut wanted: u64,
    task_rows: impl Fn(&pb::DataFragment) -> u64,
) -> Result<()> {
    let mut to_check = Vec::new();
    for (f, within) in pieces {
        if wanted == 0 {
            break;
        }
        let rows = within.as_ref().map_or(f.physical_rows, |w| w.end - w.start);
        if f.physical_rows > task_rows(f) {
            to_check.push(*f);
        }
        // At least this many of the piece's rows are live.
        let deleted = f.physical_rows - lancelet_table::manifest::live_rows(f);
        wanted = wanted.saturating_sub(rows.saturating_sub(deleted));
    }
    for chunk in to_check.chunks(16) {
        futures::future::try_join_all(chunk.iter().map(|f| ds.fragment_readers(f))).await?;
    }
    Ok(())
}

/// The parts of ascending, disjoint `ranges` inside `within`.
/// The rows in both `a` and `b`, two lists of ranges each sorted and disjoint, in one
/// pass over both (an index's candidates can be one range per row, and a fragment with
/// deletions as many live ranges).
pub(super) fn intersect_sorted(a: &[Range<u64>], b: &[Range<u64>]) -> Vec<Range<u64>> {
    let mut out: Vec<Range<u64>> = Vec::new();
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        let (x, y) = (&a[i], &b[j]);
        let r = x.start.max(y.start)..x.end.min(y.end);
        if r.start < r.end {
            match out.last_mut() {
                Some(last) if last.end == r.start => last.end = r.end,
                _ => out.push(r),
            }
        }
        if x.end <= y.end {
            i += 1;
        } else {
            j += 1;
        }
    }
    out
}

pub(super) fn intersect(ranges: &[Range<u64>], within: &Range<u64>) -> Vec<Range<u64>> {
    ranges
        .iter()
        .map(|r| r.start.max(within.start)..r.end.min(within.end))
        .filter(|r| r.start < r.end)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// The one-pass intersection of two sorted, disjoint range lists holds exactly the
        /// rows both hold.
        #[test]
        fn sorted_intersection_holds_the_rows_of_both(
            a in proptest::collection::btree_set(0u64..300, 0..120),
            b in proptest::collection::btree_set(0u64..300, 0..120),
        ) {
            let ranges = |s: &std::collections::BTreeSet<u64>| {
                lancelet_file::reader::to_ranges(&s.iter().copied().collect::<Vec<_>>())
            };
            let got: Vec<u64> = intersect_sorted(&ranges(&a), &ranges(&b)).into_iter().flatten().collect();
            let want: Vec<u64> = a.intersection(&b).copied().collect();
            proptest::prop_assert_eq!(got, want);
        }

        /// Cuts ascend, end at the row count, and keep every task within half a task of
        /// the target size (the last may be shorter); near page boundaries are taken.
        #[test]
        fn task_cuts_follow_pages_within_bounds(
            rows in 1u64..200_000,
            task_rows in 1u64..40_000,
            page in 1u64..60_000,
        ) {
            let boundaries: Vec<u64> = (0..=rows / page).map(|k| k * page).collect();
            let cuts = task_cuts(&boundaries, rows, task_rows);
            proptest::prop_assert_eq!(cuts.last().copied(), Some(rows));
            let mut last = 0;
            for (i, c) in cuts.iter().enumerate() {
                proptest::prop_assert!(*c > last);
                if i + 1 < cuts.len() {
                    proptest::prop_assert!(c - last > task_rows / 2 && c - last <= task_rows + task_rows / 2);
                    let near = boundaries.iter().any(|b| *b > last + task_rows / 2 && *b <= last + task_rows + task_rows / 2);
                    proptest::prop_assert!(!near || boundaries.contains(c), "cut {} ignores a page boundary", c);
                }
                last = *c;
            }
        }
    }
}
