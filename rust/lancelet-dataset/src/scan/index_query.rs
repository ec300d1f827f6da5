//! Answering the index-friendly part of a filter with scalar indexes.
//!
//! The filter becomes an AND/OR tree of terms ([`lancelet_expr::index_tree`]). Each term on a
//! column with a usable index yields the rows it may match; ANDs intersect (ignoring
//! children no index answers), ORs unite (and give up if any child is unanswered). The
//! answer holds only for the fragments every index used covers; there the scan reads just
//! the candidate rows, and elsewhere it scans as before. Every row read is rechecked against
//! the whole filter, so inexact (AtMost) answers and stale entries are harmless, and rows
//! deleted since the index was built are skipped by the scan's live ranges.

use std::collections::{HashMap, HashSet};
use std::ops::Range;

use lancelet_expr::{index_tree, BoundExpr, IndexTerm, IndexTree};
use lancelet_index::rowaddr::{FragmentRows, RowAddrSet};
use lancelet_index::scalar::{ScalarIndexType, ScalarQuery};
use lancelet_table::indices::fragment_bitmap;

use crate::fields::arrow_schema_field;
use crate::{Dataset, Error, Result};

/// The rows an index narrowed a scan to.
#[derive(Debug, Clone, Default)]
pub(crate) struct IndexCandidates {
    /// Per covered fragment: the physical row ranges that may match (possibly none).
    pub(crate) rows: HashMap<u64, Vec<Range<u64>>>,
    /// The indexes used, as `query@name(Type)` (for plans and statistics).
    pub(crate) used: Vec<String>,
    /// The rows are exactly those matching the whole filter (in covered fragments).
    pub(crate) exact: bool,
}

/// One answered sub-tree: candidate rows, valid within `covered` fragments; `exact` when
/// they are exactly the rows where the sub-tree holds.
struct Answer {
    rows: RowAddrSet,
    covered: HashSet<u32>,
    exact: bool,
}

/// The rows matching `filter` in the fragments its answer covers, when this version's
/// scalar indexes answer the whole filter exactly (`None` otherwise): what a count needs,
/// without cutting the rows into ranges.
pub(crate) async fn exact_rows(ds: &Dataset, filter: &BoundExpr) -> Result<Option<(RowAddrSet, HashSet<u32>)>> {
    if ds.indices().await?.is_empty() {
        return Ok(None);
    }
    let schema = ds.schema().clone();
    let tree = index_tree(filter, &|col| arrow_schema_field(&schema, col));
    let mut used = Vec::new();
    Ok(answer(ds, &tree, &mut used)
        .await?
        .filter(|a| a.exact)
        .map(|a| (a.rows, a.covered)))
}

/// Candidates for `filter` from this version's scalar indexes, or `None` when no index helps.
pub(crate) async fn candidates(ds: &Dataset, filter: &BoundExpr) -> Result<Option<IndexCandidates>> {
    let indices = ds.indices().await?;
    if indices.is_empty() {
        return Ok(None);
    }
    let schema = ds.schema().clone();
    let tree = index_tree(filter, &|col| arrow_schema_field(&schema, col));
    let mut used = Vec::new();
    let Some(answer) = answer(ds, &tree, &mut used).await? else {
        return Ok(None);
    };
    let mut rows = HashMap::new();
    for f in ds.fragments() {
        let Ok(id) = u32::try_from(f.id) else { continue };
        if !answer.covered.contains(&id) {
            continue;
        }
        let ranges = match answer.rows.fragments().find(|(fid, _)| *fid == id).map(|(_, r)| r) {
            None => Vec::new(),
            Some(FragmentRows::Full) => std::iter::once(0..f.physical_rows).collect(),
            Some(FragmentRows::Offsets(offsets)) => to_ranges(offsets.iter().map(u64::from), f.physical_rows),
        };
        rows.insert(f.id, ranges);
    }
    Ok(Some(IndexCandidates {
        rows,
        used,
        exact: answer.exact,
    }))
}

fn to_ranges(sorted: impl Iterator<Item = u64>, limit: u64) -> Vec<Range<u64>> {
    let mut out: Vec<Range<u64>> = Vec::new();
    for o in sorted.take_while(|o| *o < limit) {
        match out.last_mut() {
            Some(r) if r.end == o => r.end = o + 1,
            _ => out.push(o..o + 1),
        }
    }
    out
}

fn answer<'a>(
    ds: &'a Dataset,
    tree: &'a IndexTree,
    used: &'a mut Vec<String>,
) -> futures::future::BoxFuture<'a, Result<Option<Answer>>> {
    use futures::FutureExt;
    async move {
        match tree {
            IndexTree::Opaque => Ok(None),
            IndexTree::Term(term) => term_answer(ds, term, used).await,
            IndexTree::And(children) => {
                let mut acc: Option<Answer> = None;
                let mut skipped = false;
                for c in children {
                    let Some(a) = answer(ds, c, used).await? else {
                        skipped = true;
                        continue;
                    };
                    acc = Some(match acc {
                        None => a,
                        Some(prev) => {
                            // Within fragments both cover, rows must satisfy both; where only
                            // one covers, its answer still bounds the rows (the AND needs it).
                            let both: HashSet<u32> = prev.covered.intersection(&a.covered).copied().collect();
                            let mut rows = RowAddrSet::new();
                            for (fid, r) in prev.rows.fragments() {
                                if !both.contains(&fid) {
                                    rows.union_with(&single(fid, r));
                                }
                            }
                            for (fid, r) in a.rows.fragments() {
                                if !both.contains(&fid) {
                                    rows.union_with(&single(fid, r));
                                }
                            }
                            rows.union_with(&restrict(&prev.rows, &both).intersection(&restrict(&a.rows, &both)));
                            let exact = prev.exact && a.exact && prev.covered == a.covered;
                            let covered = prev.covered.union(&a.covered).copied().collect();
                            Answer { rows, covered, exact }
                        }
                    });
                }
                if skipped {
                    if let Some(a) = acc.as_mut() {
                        a.exact = false;
                    }
                }
                Ok(acc)
            }
            IndexTree::Or(children) => {
                let mut acc: Option<Answer> = None;
                for c in children {
                    let Some(a) = answer(ds, c, used).await? else {
                        return Ok(None);
                    };
                    acc = Some(match acc {
                        None => a,
                        Some(prev) => {
                            // Only fragments both cover have a complete answer.
                            let both: HashSet<u32> = prev.covered.intersection(&a.covered).copied().collect();
                            Answer {
                                rows: restrict(&prev.rows, &both).union(&restrict(&a.rows, &both)),
                                covered: both,
                                exact: prev.exact && a.exact,
                            }
                        }
                    });
                }
                Ok(acc)
            }
        }
    }
    .boxed()
}

fn single(fid: u32, rows: &FragmentRows) -> RowAddrSet {
    let mut s = RowAddrSet::new();
    match rows {
        FragmentRows::Full => s.insert_fragment(fid),
        FragmentRows::Offsets(o) => s.add_offsets(fid, o.clone()),
    }
    s
}

fn restrict(rows: &RowAddrSet, to: &HashSet<u32>) -> RowAddrSet {
    let mut out = RowAddrSet::new();
    for (fid, r) in rows.fragments() {
        if to.contains(&fid) {
            out.union_with(&single(fid, r));
        }
    }
    out
}

async fn term_answer(ds: &Dataset, term: &IndexTerm, used: &mut Vec<String>) -> Result<Option<Answer>> {
    let Some(field) = ds.field_by_path(term.column()) else {
        return Ok(None);
    };
    let query = match term {
        IndexTerm::Equals { value, .. } => ScalarQuery::Equals(value.clone()),
        IndexTerm::Range { lower, upper, .. } => ScalarQuery::Range {
            lower: lower.clone(),
            upper: upper.clone(),
        },
        IndexTerm::InList { values, .. } => ScalarQuery::IsIn(values.clone()),
        IndexTerm::IsNull { .. } => ScalarQuery::IsNull,
        IndexTerm::Contains { needle, .. } => ScalarQuery::Contains(needle.clone()),
        IndexTerm::LabelsAny { values, .. } => ScalarQuery::LabelsAny(values.clone()),
        IndexTerm::LabelsAll { values, .. } => ScalarQuery::LabelsAll(values.clone()),
        _ => return Ok(None),
    };
    let field_id = field.id;
    let indices = ds.indices().await?;
    // Every segment of one index on this field, the first index that can answer.
    let mut names: Vec<&str> = Vec::new();
    for i in indices.iter().filter(|i| i.fields == [field_id]) {
        if !names.contains(&i.name.as_str()) {
            names.push(&i.name);
        }
    }
    for name in names {
        let mut rows = RowAddrSet::new();
        let mut covered = HashSet::new();
        let mut type_name = String::new();
        let mut ok = true;
        // Float columns are always rechecked: the filter folds -0.0 into 0.0 and orders NaN
        // its own way, which an index's comparisons need not share.
        let float = matches!(
            arrow_schema_field(ds.schema(), term.column()),
            Some(arrow_schema::DataType::Float16 | arrow_schema::DataType::Float32 | arrow_schema::DataType::Float64)
        );
        let mut exact = !float;
        for seg in indices.iter().filter(|i| i.name == name && i.fields == [field_id]) {
            let Some(index) = ds.open_scalar_index(seg).await? else {
                ok = false;
                break;
            };
            if !index.can_answer(&query) {
                ok = false;
                break;
            }
            type_name = index.kind().display_name().to_string();
            let found = index.search(&query).await?;
            exact &= found.is_exact();
            let kind = index.kind();
            let found = found.into_rows();
            if ds.has_stable_row_ids() && keyed_by_row_id(kind, seg.index_version.unwrap_or(0)) {
                // Stable row ids: find where each row lives now.
                if found.has_full_fragments() {
                    ok = false;
                    break;
                }
                let ids = ds.row_id_index().await?;
                let mut addrs: Vec<u64> = found.iter_with(|_| 0).filter_map(|id| ids.get(id)).collect();
                addrs.sort_unstable();
                rows.union_with(&RowAddrSet::from_sorted_iter(addrs));
            } else {
                rows.union_with(&found);
            }
            let bitmap = fragment_bitmap(seg).map_err(|e| Error::corrupt("_indices", e))?;
            covered.extend(bitmap.iter());
        }
        if ok && !covered.is_empty() {
            used.push(format!("[{}]@{name}({type_name})", term_text(term)));
            return Ok(Some(Answer { rows, covered, exact }));
        }
    }
    Ok(None)
}

fn term_text(term: &IndexTerm) -> String {
    use std::ops::Bound;
    let v = |a: &arrow_array::ArrayRef| arrow_cast::display::array_value_to_string(a, 0).unwrap_or_else(|_| "?".into());
    match term {
        IndexTerm::Equals { column, value } => format!("{column} = {}", v(value)),
        IndexTerm::Range { column, lower, upper } => {
            let mut parts = Vec::new();
            match lower {
                Bound::Included(x) => parts.push(format!("{column} >= {}", v(x))),
                Bound::Excluded(x) => parts.push(format!("{column} > {}", v(x))),
                Bound::Unbounded => {}
            }
            match upper {
                Bound::Included(x) => parts.push(format!("{column} <= {}", v(x))),
                Bound::Excluded(x) => parts.push(format!("{column} < {}", v(x))),
                Bound::Unbounded => {}
            }
            parts.join(" AND ")
        }
        IndexTerm::InList { column, values } => format!("{column} IN ({} values)", values.len()),
        IndexTerm::IsNull { column } => format!("{column} IS NULL"),
        IndexTerm::Contains { column, needle } => format!("contains({column}, {needle:?})"),
        IndexTerm::LabelsAny { column, values } => format!("array_has_any({column}, {} values)", values.len()),
        IndexTerm::LabelsAll { column, values } => format!("array_has_all({column}, {} values)", values.len()),
        _ => "?".into(),
    }
}

/// Whether an index of `kind` and `version` holds stable row ids (on a dataset with stable
/// row ids) rather than row addresses: pylance 14's BITMAP, LABEL_LIST and NGRAM do, and so
/// does a BTREE of version 0 (version 1 marks addresses).
pub(crate) fn keyed_by_row_id(kind: ScalarIndexType, version: i32) -> bool {
    match kind {
        ScalarIndexType::Bitmap | ScalarIndexType::LabelList | ScalarIndexType::NGram => true,
        ScalarIndexType::BTree => version == 0,
        _ => false,
    }
}
