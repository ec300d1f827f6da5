//! Hybrid search: a vector query and a full-text query on the same version, their rankings
//! fused into one.
//!
//! Each side returns its best `k` rows (nearest's `k`), with the same filter (before or
//! after ranking, as `prefilter` says). The rankings are fused by reciprocal rank,
//! `Σ 1 / (rrf_k + rank)` over the sides a row appears in (rank from 1, `rrf_k` 60), or
//! linearly, `w (1 - d̂) + (1 - w) ŝ` with the distance and score min-max normalised over
//! each side's rows (a row a side did not return counts 0 there). Rows come back by the
//! fused `_relevance_score` descending (ties by row address), `offset` and `limit` applied,
//! with `_distance` and `_score` kept (null where a side lacks the row).

use std::collections::HashMap;

use arrow_array::RecordBatch;

use super::fts::{FullTextRequest, SCORE};
use super::knn::{NearestRequest, DISTANCE};
use crate::{Dataset, Error, Result};

/// The fused score column.
pub(crate) const RELEVANCE: &str = "_relevance_score";

/// How the two rankings are fused.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Fusion {
    /// Reciprocal-rank fusion with this constant (60 by convention).
    Rrf(f32),
    /// A weighted sum of the normalised similarity (weight `w`) and text score (`1 - w`).
    Linear(f32),
}

impl Fusion {
    /// Parses `rrf` / `linear` with their parameter.
    pub fn parse(method: &str, rrf_k: f32, weight: f32) -> Result<Self> {
        match method.to_ascii_lowercase().as_str() {
            "rrf" => {
                if !(rrf_k.is_finite() && rrf_k >= 0.0) {
                    return Err(Error::InvalidArgument(format!(
                        "rrf k must be a non-negative number, got {rrf_k}"
                    )));
                }
                Ok(Fusion::Rrf(rrf_k))
            }
            "linear" => {
                if !(0.0..=1.0).contains(&weight) {
                    return Err(Error::InvalidArgument(format!(
                        "linear fusion weight must be in [0, 1], got {weight}"
                    )));
                }
                Ok(Fusion::Linear(weight))
            }
            other => Err(Error::InvalidArgument(format!(
                "unknown fusion {other:?}; expected \"rrf\" or \"linear\""
            ))),
        }
    }
}

/// A hybrid search.
#[derive(Debug, Clone)]
pub struct HybridRequest {
    /// The vector side (its `k` is each side's number of candidates; its columns, filter,
    /// prefilter and `with_row_id` apply to the whole search).
    pub nearest: NearestRequest,
    /// The text side (its query; columns and filter are taken from `nearest`).
    pub text: FullTextRequest,
    /// How the rankings fuse.
    pub fusion: Fusion,
    /// Rows to return (all fused rows when `None`).
    pub limit: Option<u64>,
    /// Rows to skip first.
    pub offset: u64,
}

/// Fuses a vector ranking `(distance, address)` and a text ranking `(address, score)`;
/// returns `(address, relevance, distance, score)` best first.
pub(crate) fn fuse(
    vector: &[(f32, u64)],
    text: &[(u64, f32)],
    fusion: Fusion,
) -> Vec<(u64, f32, Option<f32>, Option<f32>)> {
    let mut rows: HashMap<u64, (f32, Option<f32>, Option<f32>)> = HashMap::new();
    match fusion {
        Fusion::Rrf(k) => {
            for (rank, (d, a)) in vector.iter().enumerate() {
                let e = rows.entry(*a).or_insert((0.0, None, None));
                e.0 += 1.0 / (k + rank as f32 + 1.0);
                e.1 = Some(*d);
            }
            for (rank, (a, s)) in text.iter().enumerate() {
                let e = rows.entry(*a).or_insert((0.0, None, None));
                e.0 += 1.0 / (k + rank as f32 + 1.0);
                e.2 = Some(*s);
            }
        }
        Fusion::Linear(w) => {
            let (dlo, dhi) = min_max(vector.iter().map(|(d, _)| *d));
            let (slo, shi) = min_max(text.iter().map(|(_, s)| *s));
            for (d, a) in vector {
                let e = rows.entry(*a).or_insert((0.0, None, None));
                e.0 += w * (1.0 - normalise(*d, dlo, dhi));
                e.1 = Some(*d);
            }
            for (a, s) in text {
                let e = rows.entry(*a).or_insert((0.0, None, None));
                e.0 += (1.0 - w) * normalise(*s, slo, shi);
                e.2 = Some(*s);
            }
        }
    }
    let mut out: Vec<(u64, f32, Option<f32>, Option<f32>)> =
        rows.into_iter().map(|(a, (r, d, s))| (a, r, d, s)).collect();
    out.sort_unstable_by(|x, y| y.1.total_cmp(&x.1).then(x.0.cmp(&y.0)));
    out
}

fn min_max(v: impl Iterator<Item = f32>) -> (f32, f32) {
    v.fold((f32::INFINITY, f32::NEG_INFINITY), |(lo, hi), x| (lo.min(x), hi.max(x)))
}

/// `x` scaled to [0, 1] over `[lo, hi]`; a constant side scales to 0.
fn normalise(x: f32, lo: f32, hi: f32) -> f32 {
    if hi > lo {
        (x - lo) / (hi - lo)
    } else {
        0.0
    }
}

impl Dataset {
    /// Runs a hybrid search; returns one batch: the columns asked for, then `_distance`,
    /// `_score` and `_relevance_score` (and `_rowid`), best first.
    pub async fn hybrid_search(&self, req: &HybridRequest) -> Result<RecordBatch> {
        if req.nearest.nearest.queries.len() != 1 {
            return Err(Error::InvalidArgument(
                "hybrid search takes exactly one query vector".into(),
            ));
        }
        let text_req = FullTextRequest {
            columns: None,
            filter: req.nearest.filter.clone(),
            prefilter: req.nearest.prefilter,
            limit: Some(req.nearest.nearest.k as u64),
            offset: 0,
            fast_search: req.nearest.fast_search,
            with_row_id: false,
            ..req.text.clone()
        };
        // Both sides read this version; they run one after the other on the same snapshot.
        let vector = self
            .nearest_ranked(&req.nearest)
            .await?
            .into_iter()
            .next()
            .unwrap_or_default();
        let text = self.full_text_hits(&text_req).await?;
        let fused = fuse(&vector, &text, req.fusion);
        let end = req.limit.map_or(fused.len(), |l| {
            (req.offset as usize).saturating_add(l as usize).min(fused.len())
        });
        let page = fused
            .get((req.offset as usize).min(fused.len())..end)
            .unwrap_or_default();
        let addrs: Vec<u64> = page.iter().map(|r| r.0).collect();
        self.ranked_output_nullable(
            req.nearest.columns.as_ref(),
            &addrs,
            vec![
                (DISTANCE, page.iter().map(|r| r.2).collect()),
                (SCORE, page.iter().map(|r| r.3).collect()),
                (RELEVANCE, page.iter().map(|r| Some(r.1)).collect()),
            ],
            req.nearest.with_row_id,
        )
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rrf_adds_reciprocal_ranks_and_keeps_each_sides_value() {
        let vector = [(0.1, 10), (0.2, 20)];
        let text = [(20, 5.0), (30, 4.0)];
        let f = fuse(&vector, &text, Fusion::Rrf(60.0));
        assert_eq!(f[0].0, 20);
        assert!((f[0].1 - (1.0 / 62.0 + 1.0 / 61.0)).abs() < 1e-7);
        assert_eq!((f[0].2, f[0].3), (Some(0.2), Some(5.0)));
        // 10 (vector rank 1) and 30 (text rank 2) follow; 10 wins 1/61 > 1/62.
        assert_eq!(f[1].0, 10);
        assert_eq!((f[2].0, f[2].2, f[2].3), (30, None, Some(4.0)));
    }

    #[test]
    fn linear_fusion_normalises_each_side() {
        let vector = [(0.0, 1), (1.0, 2)];
        let text = [(2, 3.0), (1, 1.0)];
        let f = fuse(&vector, &text, Fusion::Linear(0.5));
        // Row 1: closest (1 - 0) * 0.5 + lowest score 0 * 0.5 = 0.5; row 2 the reverse.
        assert!(f.iter().all(|r| (r.1 - 0.5).abs() < 1e-6));
        assert!(Fusion::parse("linear", 60.0, 1.5).is_err());
        assert!(Fusion::parse("bogus", 60.0, 0.5).is_err());
    }
}
