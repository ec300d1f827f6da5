//! Pruning filtered scans with the data files' zone statistics.
//!
//! For each fragment, the zones of the filter's columns (see [`lancelet_file::stats`]) cut
//! its rows into segments on which every column has one known range; a segment is kept
//! unless [`BoundExpr::may_match`] proves that none of its rows can match. Columns without
//! statistics (pylance's files, types without an order, damaged statistics) stay unknown,
//! so such fragments are read whole, as before.

use std::collections::HashMap;
use std::ops::Range;
use std::sync::Arc;

use lancelet_expr::{BoundExpr, ColumnBounds};
use lancelet_file::plan::FieldPlan;
use lancelet_file::stats::{supports, value_array};
use lancelet_table::pb;

use crate::scan::file_layouts;
use crate::{Dataset, Result};

/// Fragments whose statistics are looked at concurrently.
const CONCURRENT_FRAGMENTS: usize = 16;

/// The rows of each fragment in `pieces` that may match `expr` (which reads the top-level
/// `columns`), by fragment id; fragments where statistics prove nothing are left out.
pub(crate) async fn matching_rows(
    ds: &Dataset,
    pieces: &[(&pb::DataFragment, Option<Range<u64>>)],
    expr: &BoundExpr,
    columns: &[String],
) -> Result<HashMap<u64, Vec<Range<u64>>>> {
    let mut out = HashMap::new();
    if columns.is_empty() {
        return Ok(out);
    }
    let mut frags: Vec<&pb::DataFragment> = Vec::new();
    for (f, _) in pieces {
        if !frags.iter().any(|g| g.id == f.id) {
            frags.push(f);
        }
    }
    for chunk in frags.chunks(CONCURRENT_FRAGMENTS) {
        let found =
            futures::future::try_join_all(chunk.iter().map(|f| fragment_matching_rows(ds, f, expr, columns))).await?;
        for (f, rows) in chunk.iter().zip(found) {
            if let Some(rows) = rows {
                out.insert(f.id, rows);
            }
        }
    }
    Ok(out)
}

/// Zones of one column: rows and what is known about them, ascending.
type Zones = Vec<(Range<u64>, ColumnBounds)>;

/// The zones of the dataset column `name` in `frag`, or `None` when nothing is known.
async fn column_zones(
    ds: &Dataset,
    frag: &pb::DataFragment,
    readers: &[Arc<lancelet_file::FileReader>],
    layouts: &[crate::scan::FileLayout],
    name: &str,
) -> Option<Zones> {
    let dt = ds.schema().field_with_name(name).ok()?.data_type().clone();
    if !supports(&dt) {
        return None;
    }
    let Some((i, file_name)) = ds.column_source(frag, readers, layouts, &[name]) else {
        // No data file holds the column (added later): it reads as nulls.
        return Some(vec![(0..frag.physical_rows, ColumnBounds::all_null())]);
    };
    let reader = readers.get(i)?;
    let column = reader.metadata().plans.iter().find_map(|p| match p {
        FieldPlan::Leaf { column, field } if field.name() == &file_name && field.data_type() == &dt => Some(*column),
        _ => None,
    })?;
    // Statistics that cannot be read are ignored: the data is still read and filtered.
    let stats = reader.page_stats().await.ok().flatten()?;
    let zones = stats.column(column)?;
    Some(
        zones
            .iter()
            .map(|z| {
                let bound = |v: &Option<Vec<u8>>| v.as_deref().and_then(|b| value_array(b, &dt));
                let rows = z.rows.end - z.rows.start;
                let b = ColumnBounds::from_stats(rows, z.null_count, bound(&z.min), bound(&z.max));
                (z.rows.clone(), b)
            })
            .collect(),
    )
}

async fn fragment_matching_rows(
    ds: &Dataset,
    frag: &pb::DataFragment,
    expr: &BoundExpr,
    columns: &[String],
) -> Result<Option<Vec<Range<u64>>>> {
    let n = frag.physical_rows;
    if n == 0 {
        return Ok(None);
    }
    let readers = ds.fragment_readers(frag).await?;
    let layouts = file_layouts(frag, &readers);
    let mut known: Vec<(&String, Zones)> = Vec::new();
    for name in columns {
        if let Some(z) = column_zones(ds, frag, &readers, &layouts, name).await {
            known.push((name, z));
        }
    }
    if known.is_empty() {
        return Ok(None);
    }
    Ok(Some(segments_matching(n, &known, expr)))
}

/// Cuts `0..n` at every zone boundary and keeps the segments `expr` may match on.
fn segments_matching(n: u64, known: &[(&String, Zones)], expr: &BoundExpr) -> Vec<Range<u64>> {
    let mut cuts: Vec<u64> = vec![0, n];
    for (_, zones) in known {
        for (r, _) in zones {
            cuts.push(r.start.min(n));
            cuts.push(r.end.min(n));
        }
    }
    cuts.sort_unstable();
    cuts.dedup();
    let mut at = vec![0usize; known.len()];
    let mut out: Vec<Range<u64>> = Vec::new();
    let mut bounds = HashMap::with_capacity(known.len());
    for w in cuts.windows(2) {
        let (start, end) = (w[0], w[1]);
        bounds.clear();
        for (k, (name, zones)) in known.iter().enumerate() {
            while at[k] < zones.len() && zones[at[k]].0.end <= start {
                at[k] += 1;
            }
            if let Some((r, b)) = zones.get(at[k]) {
                if r.start <= start && end <= r.end {
                    bounds.insert((*name).clone(), b.clone());
                }
            }
        }
        if expr.may_match(&bounds) {
            match out.last_mut() {
                Some(last) if last.end == start => last.end = end,
                _ => out.push(start..end),
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{ArrayRef, Int64Array};
    use arrow_schema::{DataType, Field, Schema};

    fn bounds(lo: i64, hi: i64) -> ColumnBounds {
        let one = |v: i64| Some(Arc::new(Int64Array::from(vec![v])) as ArrayRef);
        ColumnBounds::from_stats(10, 0, one(lo), one(hi))
    }

    #[test]
    fn segments_follow_zone_boundaries() {
        let schema = Schema::new(vec![
            Field::new("a", DataType::Int64, true),
            Field::new("b", DataType::Int64, true),
        ]);
        let expr = lancelet_expr::parse("a >= 20 AND b < 5")
            .unwrap()
            .bind(&schema)
            .unwrap();
        let (a, b) = ("a".to_string(), "b".to_string());
        // a: sorted in zones of 10 rows; b: one zone, then a gap (unknown), then one zone.
        let za: Zones = (0..4)
            .map(|i| (i * 10..i * 10 + 10, bounds(i as i64 * 10, i as i64 * 10 + 9)))
            .collect();
        let zb: Zones = vec![(0..25, bounds(0, 3)), (30..40, bounds(7, 9))];
        let known = vec![(&a, za), (&b, zb)];
        assert_eq!(segments_matching(40, &known, &expr), vec![20..30]);
        let all = lancelet_expr::parse("a >= 0").unwrap().bind(&schema).unwrap();
        assert_eq!(segments_matching(45, &known, &all), vec![0..45]);
    }
}
