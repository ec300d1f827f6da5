//! Nearest-neighbour search (`nearest=`): exact over the rows, or through vector indexes.
//!
//! A query's candidates come from the vector index segments of its column (over the
//! fragments they cover) and from an exact scan of every other fragment; when both
//! contribute, or `refine_factor` is set, index candidates are re-scored with exact
//! distances, as pylance does. Results are ordered by `(_distance, row address)`. Deleted
//! rows never appear (the index search skips them). With `prefilter` the filter restricts
//! the candidates, so `k` rows come back when that many match; otherwise the best `k` are
//! found first and the filter drops some of them.

use std::collections::{HashMap, HashSet};
use std::ops::Range;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::UInt64Type;
use arrow_array::{Array, ArrayRef, Float32Array, Int32Array, RecordBatch, UInt64Array};
use arrow_schema::{DataType, Field, Schema};
use lancelet_table::indices::fragment_bitmap;
use lancelet_table::pb;
use lancelet_vector::distance::{distances, to_f32};
use lancelet_vector::ivf::IvfIndex;
use lancelet_vector::{Metric, TopK};

use crate::index::DirStore;
use crate::scan::{Columns, Scan, ScanOptions, ROW_ADDR};
use crate::{Dataset, Error, Result};

/// The name of the distance column.
pub(crate) const DISTANCE: &str = "_distance";
/// The query position column of a batch query.
pub(crate) const QUERY_INDEX: &str = "query_index";
const VECTOR_DETAILS: &str = "/lance.index.pb.VectorIndexDetails";

/// What `nearest=` asks for (pylance's keys).
#[derive(Debug, Clone)]
pub struct NearestOptions {
    /// The vector column.
    pub column: String,
    /// One or more query vectors.
    pub queries: Vec<Vec<f32>>,
    /// Whether `q` was a 2-D array (adds `query_index`).
    pub batch: bool,
    /// Neighbours per query.
    pub k: usize,
    /// Partitions probed (default 20, at least `minimum_nprobes`).
    pub nprobes: Option<usize>,
    /// Fetch `k * refine_factor` candidates from the index and re-rank them exactly.
    pub refine_factor: Option<u32>,
    /// The distance; the index's own (or L2) when not given.
    pub metric: Option<String>,
    /// Use a vector index when there is one.
    pub use_index: bool,
    /// Keep only distances in `[lo, hi)`.
    pub distance_range: Option<(Option<f32>, Option<f32>)>,
    /// HNSW search list size (IVF_HNSW_* indexes; their partitions are scanned whole
    /// without it).
    pub ef: Option<usize>,
}

/// A nearest-neighbour scan.
#[derive(Debug, Clone)]
pub struct NearestRequest {
    /// The search.
    pub nearest: NearestOptions,
    /// Output columns (all when `None`).
    pub columns: Option<Vec<String>>,
    /// A SQL filter.
    pub filter: Option<String>,
    /// Filter before searching (otherwise after).
    pub prefilter: bool,
    /// Search only what indexes cover.
    pub fast_search: bool,
    /// Add `_rowid`.
    pub with_row_id: bool,
}

struct VectorSegments {
    indexes: Vec<(Arc<IvfIndex>, HashSet<u32>)>,
    metric: Metric,
}

impl Dataset {
    /// Runs a nearest-neighbour search; returns one batch: the columns asked for, then
    /// `_distance` (and `_rowid`), with `query_index` first for a batch query.
    pub async fn nearest(&self, req: &NearestRequest) -> Result<RecordBatch> {
        let per_query = self.nearest_ranked(req).await?;
        self.nearest_output(req, per_query).await
    }

    /// The `(distance, row address)` pairs of each query, best first, the filter applied.
    pub(crate) async fn nearest_ranked(&self, req: &NearestRequest) -> Result<Vec<Vec<(f32, u64)>>> {
        let n = &req.nearest;
        if n.k == 0 {
            return Err(Error::InvalidArgument("k must be positive".into()));
        }
        let field = self
            .schema()
            .field_with_name(&n.column)
            .map_err(|_| Error::InvalidArgument(format!("no column named {:?} to search", n.column)))?
            .clone();
        let dim = match field.data_type() {
            DataType::FixedSizeList(item, d)
                if matches!(
                    item.data_type(),
                    DataType::Float16 | DataType::Float32 | DataType::Float64 | DataType::UInt8
                ) =>
            {
                usize::try_from(*d).unwrap_or(0)
            }
            other => {
                return Err(Error::InvalidArgument(format!(
                    "column {:?} has type {other}; nearest needs a fixed-size list of floats or uint8",
                    n.column
                )))
            }
        };
        for (qi, q) in n.queries.iter().enumerate() {
            if q.len() != dim {
                return Err(Error::InvalidArgument(format!(
                    "the query has {} dimensions, which does not match index column size {dim} (column {:?})",
                    q.len(),
                    n.column
                )));
            }
            // A NaN or infinite query has no nearest neighbours: every distance to it is NaN
            // (an index would otherwise rank its partitions arbitrarily). Refused, with and
            // without an index alike.
            if let Some(i) = q.iter().position(|x| !x.is_finite()) {
                let which = if n.batch {
                    format!("query {qi}")
                } else {
                    "the query vector".to_string()
                };
                return Err(Error::InvalidArgument(format!(
                    "{which} has a non-finite value ({}) at position {i}; nearest needs finite numbers",
                    q[i]
                )));
            }
        }
        let item = match field.data_type() {
            DataType::FixedSizeList(item, _) => item.data_type().clone(),
            _ => DataType::Float32,
        };
        // pylance's rules: byte vectors are compared bit by bit (hamming) and nothing else;
        // float vectors never are.
        let bytes = item == DataType::UInt8;
        let asked = n.metric.as_deref().map(Metric::parse).transpose()?;
        match asked {
            Some(Metric::Hamming) if !bytes => {
                return Err(Error::InvalidArgument(format!(
                    "the hamming metric needs uint8 vectors; column {:?} holds {item}",
                    n.column
                )))
            }
            Some(m) if bytes && m != Metric::Hamming => {
                return Err(Error::InvalidArgument(format!(
                    "uint8 vectors are compared with the hamming metric only, not {m:?}"
                )))
            }
            _ => {}
        }
        let segments = if n.use_index {
            self.vector_segments(&n.column, n.metric.as_deref()).await?
        } else {
            None
        };
        let metric = match (asked, &segments) {
            (Some(m), _) => m,
            (None, Some(s)) => s.metric,
            (None, None) if bytes => Metric::Hamming,
            (None, None) => Metric::L2,
        };
        // A float16 column is searched with the query in float16 too, as pylance does.
        let queries: Vec<Vec<f32>> = n
            .queries
            .iter()
            .map(|q| {
                if item == DataType::Float16 {
                    q.iter().map(|v| half::f16::from_f32(*v).to_f32()).collect()
                } else {
                    q.clone()
                }
            })
            .collect();
        // Rows the filter allows, when it restricts the index's candidates.
        let allowed = match (&req.filter, req.prefilter, &segments) {
            (Some(f), true, Some(_)) if !f.trim().is_empty() => Some(self.matching_addresses(f, None).await?),
            _ => None,
        };
        // Deletion vectors matter only to index searches (scans skip deleted rows).
        let live = match &segments {
            Some(_) => self.live_map().await?,
            None => HashMap::new(),
        };
        let covered: HashSet<u32> = segments
            .as_ref()
            .map(|s| s.indexes.iter().flat_map(|(_, c)| c.iter().copied()).collect())
            .unwrap_or_default();
        let flat_frags: Vec<u64> = self
            .fragments()
            .iter()
            .map(|f| f.id)
            .filter(|id| u32::try_from(*id).map_or(true, |i| !covered.contains(&i)))
            .collect();
        // With stable row ids the index holds row ids (pylance's files do): each is found at
        // its address now, or nowhere once deleted.
        let row_ids = match (&segments, self.has_stable_row_ids()) {
            (Some(_), true) => Some(self.row_id_index().await?),
            _ => None,
        };
        let address_of = |key: u64| match &row_ids {
            Some(index) => index.get(key),
            None => Some(key),
        };
        let skip_unindexed = req.fast_search && segments.is_some();
        let search_flat = !skip_unindexed && !flat_frags.is_empty();
        let refine = n.refine_factor.unwrap_or(0);
        let range = n.distance_range;
        let mut per_query: Vec<Vec<(f32, u64)>> = Vec::with_capacity(queries.len());
        for q in &queries {
            if metric == Metric::Cosine && q.iter().all(|v| *v == 0.0) {
                // A zero query has no direction: nothing is near it (pylance returns nothing).
                per_query.push(Vec::new());
                continue;
            }
            let mut found: Vec<(f32, u64)> = Vec::new();
            let mut rescore = refine > 0;
            if let Some(seg) = &segments {
                // With a distance range, rows outside it must not use up the k: ask the
                // index for every candidate of the probed partitions.
                let want = if range.is_some() {
                    usize::try_from(self.count_rows()).unwrap_or(usize::MAX).max(n.k)
                } else {
                    n.k * (refine.max(1) as usize)
                };
                let nprobes = n.nprobes.unwrap_or(20).max(1);
                let ok = |key: u64| {
                    address_of(key)
                        .is_some_and(|addr| is_live(&live, addr) && allowed.as_ref().is_none_or(|a| a.contains(&addr)))
                };
                for (index, frags) in &seg.indexes {
                    // IVF_RQ: every row of the probed partitions, ranked exactly below.
                    let want = if index.needs_rerank() { usize::MAX } else { want };
                    rescore |= index.needs_rerank();
                    let hits = index.search_ef(q, want, nprobes, n.ef, Some(&ok), refine > 0).await?;
                    // A row now in a fragment the segment does not cover (moved by an
                    // update) has a stale entry: the flat search over that fragment has it.
                    found.extend(
                        hits.into_iter()
                            .filter_map(|(d, key)| address_of(key).map(|a| (d, a)))
                            .filter(|(_, a)| frags.contains(&((a >> 32) as u32))),
                    );
                }
                rescore |= search_flat;
            }
            if rescore && !found.is_empty() {
                found = self.exact_distances(&n.column, q, metric, &found).await?;
            }
            if search_flat || segments.is_none() {
                let frags = segments.as_ref().map(|_| flat_frags.clone());
                found.extend(self.flat_search(&n.column, q, metric, n.k, frags, range, req).await?);
            }
            let mut top = TopK::new(n.k);
            let mut seen = HashSet::new();
            for (d, a) in found {
                if in_range(d, range) && seen.insert(a) {
                    top.push(d, a);
                }
            }
            per_query.push(top.into_sorted_vec());
        }
        if let (Some(f), false) = (&req.filter, req.prefilter) {
            if !f.trim().is_empty() {
                for hits in per_query.iter_mut() {
                    let keep = self.matching_among(f, hits).await?;
                    hits.retain(|(_, a)| keep.contains(a));
                }
            }
        }
        Ok(per_query)
    }

    /// Row addresses matching `filter`, among `row_ranges` when given.
    pub(crate) async fn matching_addresses(
        &self,
        filter: &str,
        row_ranges: Option<Vec<(u64, Range<u64>)>>,
    ) -> Result<HashSet<u64>> {
        let scan = Scan::plan(
            self,
            ScanOptions {
                columns: Columns::Names(Vec::new()),
                filter: Some(filter.to_string()),
                with_row_address: true,
                row_ranges,
                ..ScanOptions::default()
            },
        )
        .await?;
        let mut out = HashSet::new();
        for b in scan.collect().await? {
            if let Some(c) = b.column_by_name(ROW_ADDR) {
                out.extend(c.as_primitive::<UInt64Type>().values().iter().copied());
            }
        }
        Ok(out)
    }

    /// Live row ranges of every fragment, by fragment id.
    pub(crate) async fn live_map(&self) -> Result<HashMap<u32, Vec<Range<u64>>>> {
        let mut out = HashMap::new();
        for f in self.fragments() {
            if let Ok(id) = u32::try_from(f.id) {
                out.insert(id, self.live_ranges(f).await?);
            }
        }
        Ok(out)
    }

    /// The vector index segments on `column` (of the metric asked for, when given).
    async fn vector_segments(&self, column: &str, metric: Option<&str>) -> Result<Option<VectorSegments>> {
        let Some(field) = self.field_by_path(column) else {
            return Ok(None);
        };
        let field_id = field.id;
        let indices = self.indices().await?;
        let mut out = Vec::new();
        let mut found_metric = None;
        let mut name: Option<&str> = None;
        for idx in indices.iter() {
            let is_vector = idx.index_details.as_ref().is_some_and(|d| d.type_url == VECTOR_DETAILS);
            if !is_vector || idx.fields != [field_id] || name.is_some_and(|n| n != idx.name) {
                continue;
            }
            let index = self.open_vector_index(idx).await?;
            if let Some(m) = metric {
                if Metric::parse(m)? != index.metric() {
                    // Another metric than the index's: exact search, as pylance falls back.
                    return Ok(None);
                }
            }
            found_metric = Some(index.metric());
            name = Some(&idx.name);
            let frags: HashSet<u32> = fragment_bitmap(idx)
                .map_err(|e| Error::corrupt("_indices", e))?
                .iter()
                .collect();
            out.push((index, frags));
        }
        Ok(found_metric.map(|metric| VectorSegments { indexes: out, metric }))
    }

    /// The statistics of vector index segment `uuid` as JSON text (pylance's keys).
    pub async fn vector_index_statistics(&self, uuid: &str) -> Result<String> {
        let index = self.open_vector_index(&self.index_segment(uuid).await?).await?;
        let mut v = index.statistics();
        if let Some(obj) = v.as_object_mut() {
            obj.insert("uuid".into(), uuid.into());
        }
        Ok(v.to_string())
    }

    pub(crate) async fn open_vector_index(&self, idx: &pb::IndexMetadata) -> Result<Arc<IvfIndex>> {
        let (index_store, dir) = self.index_files(idx)?;
        if let Some(hit) = self
            .caches
            .vector_indexes
            .lock()
            .ok()
            .and_then(|c| c.get(&dir).cloned())
        {
            return Ok(hit);
        }
        let files = DirStore {
            store: index_store,
            dir: dir.clone(),
        };
        let opened = Arc::new(IvfIndex::open(&files).await?);
        if let Ok(mut c) = self.caches.vector_indexes.lock() {
            c.insert(dir, opened.clone());
        }
        Ok(opened)
    }

    /// Exact distances of `q` to the vectors at the candidates' addresses.
    async fn exact_distances(
        &self,
        column: &str,
        q: &[f32],
        metric: Metric,
        cands: &[(f32, u64)],
    ) -> Result<Vec<(f32, u64)>> {
        let addrs: Vec<u64> = cands.iter().map(|(_, a)| *a).collect();
        let b = self.take_addresses(&addrs, Some(&[column.to_string()])).await?;
        let (vectors, _) = to_f32(b.column(0).as_ref())?;
        let mut d = vec![0f32; addrs.len()];
        exact(metric, q, &vectors, &mut d)?;
        Ok(d.into_iter().zip(addrs).collect())
    }

    /// The best `k` rows of `fragments` (all when `None`) by exact distance, both cores.
    #[allow(
        clippy::too_many_arguments,
        reason = "the query and its pre-computed candidates, passed once per segment"
    )]
    async fn flat_search(
        &self,
        column: &str,
        q: &[f32],
        metric: Metric,
        k: usize,
        fragments: Option<Vec<u64>>,
        range: Option<(Option<f32>, Option<f32>)>,
        req: &NearestRequest,
    ) -> Result<Vec<(f32, u64)>> {
        // A prefilter restricts the rows scanned, so the best k are found among matches.
        let filter = match (&req.filter, req.prefilter) {
            (Some(f), true) if !f.trim().is_empty() => Some(f.clone()),
            _ => None,
        };
        let scan = Arc::new(
            Scan::plan(
                self,
                ScanOptions {
                    columns: Columns::Names(vec![column.to_string()]),
                    filter,
                    with_row_address: true,
                    fragments,
                    ..ScanOptions::default()
                },
            )
            .await?,
        );
        let query: Arc<[f32]> = q.into();
        let window = crate::scan::tasks_at_once();
        let mut pending = std::collections::VecDeque::new();
        let mut top = TopK::new(k);
        let mut next = 0;
        loop {
            while pending.len() < window && next < scan.num_tasks() {
                let (s, qq, i) = (scan.clone(), query.clone(), next);
                pending.push_back(tokio::spawn(async move {
                    let b = s.run_task(i).await?;
                    task_top(&b, &qq, metric, k, range)
                }));
                next += 1;
            }
            let Some(h) = pending.pop_front() else { break };
            let part = h.await.map_err(Error::from)??;
            for (d, a) in part {
                top.push(d, a);
            }
        }
        Ok(top.into_sorted_vec())
    }

    async fn nearest_output(&self, req: &NearestRequest, per_query: Vec<Vec<(f32, u64)>>) -> Result<RecordBatch> {
        let mut names: Vec<String> = match &req.columns {
            Some(c) => c.clone(),
            None => self.schema().fields().iter().map(|f| f.name().clone()).collect(),
        };
        names.retain(|c| c != DISTANCE);
        let mut batches = Vec::new();
        for (qi, hits) in per_query.into_iter().enumerate() {
            let addrs: Vec<u64> = hits.iter().map(|(_, a)| *a).collect();
            let rows = self.take_addresses(&addrs, Some(&names)).await?;
            let mut fields: Vec<Field> = Vec::new();
            let mut cols: Vec<ArrayRef> = Vec::new();
            if req.nearest.batch {
                fields.push(Field::new(QUERY_INDEX, DataType::Int32, false));
                cols.push(Arc::new(Int32Array::from(vec![qi as i32; hits.len()])));
            }
            for (f, c) in rows.schema().fields().iter().zip(rows.columns()) {
                fields.push(f.as_ref().clone());
                cols.push(c.clone());
            }
            // `_distance` goes where the caller named it, else after the columns.
            let at = req
                .columns
                .as_ref()
                .and_then(|c| c.iter().position(|n| n == DISTANCE))
                .map(|p| p + usize::from(req.nearest.batch))
                .unwrap_or(fields.len())
                .min(fields.len());
            fields.insert(at, Field::new(DISTANCE, DataType::Float32, true));
            cols.insert(
                at,
                Arc::new(Float32Array::from(hits.iter().map(|(d, _)| *d).collect::<Vec<_>>())),
            );
            if req.with_row_id {
                fields.push(Field::new(crate::scan::ROW_ID, DataType::UInt64, true));
                cols.push(Arc::new(self.row_ids_of(&addrs).await?));
            }
            batches.push(RecordBatch::try_new(Arc::new(Schema::new(fields)), cols)?);
        }
        match batches.first() {
            None => Err(Error::InvalidArgument("nearest needs a query vector".into())),
            Some(first) => Ok(arrow_select::concat::concat_batches(&first.schema(), &batches)?),
        }
    }

    /// Which of `hits` match `filter` (for post-filtering).
    pub(crate) async fn matching_among(&self, filter: &str, hits: &[(f32, u64)]) -> Result<HashSet<u64>> {
        let mut by_frag: HashMap<u64, Vec<Range<u64>>> = HashMap::new();
        for (_, a) in hits {
            by_frag
                .entry(a >> 32)
                .or_default()
                .push((a & 0xFFFF_FFFF)..(a & 0xFFFF_FFFF) + 1);
        }
        let mut ranges: Vec<(u64, Range<u64>)> = Vec::new();
        for (f, mut rs) in by_frag {
            rs.sort_by_key(|r| r.start);
            ranges.extend(rs.into_iter().map(|r| (f, r)));
        }
        self.matching_addresses(filter, Some(ranges)).await
    }

    /// `_rowid` of rows at `addrs`: the address itself unless row ids are stable.
    pub(crate) async fn row_ids_of(&self, addrs: &[u64]) -> Result<UInt64Array> {
        if !self.has_stable_row_ids() {
            return Ok(UInt64Array::from(addrs.to_vec()));
        }
        let b = self
            .take_addresses(addrs, Some(&[crate::scan::ROW_ID.to_string()]))
            .await?;
        Ok(b.column(0).as_primitive::<UInt64Type>().clone())
    }
}

pub(crate) fn is_live(live: &HashMap<u32, Vec<Range<u64>>>, addr: u64) -> bool {
    let Some(ranges) = live.get(&((addr >> 32) as u32)) else {
        return false;
    };
    let row = addr & 0xFFFF_FFFF;
    let i = ranges.partition_point(|r| r.end <= row);
    ranges.get(i).is_some_and(|r| r.start <= row)
}

fn in_range(d: f32, range: Option<(Option<f32>, Option<f32>)>) -> bool {
    range.is_none_or(|(lo, hi)| lo.is_none_or(|l| d >= l) && hi.is_none_or(|h| d < h))
}

/// The best `k` rows of one scanned batch (vector column first, then `_rowaddr`) whose
/// distance lies in `range`. Rows without a vector, and for cosine zero vectors (no
/// direction), have no distance and are skipped, as in pylance.
fn task_top(
    b: &RecordBatch,
    q: &[f32],
    metric: Metric,
    k: usize,
    range: Option<(Option<f32>, Option<f32>)>,
) -> Result<Vec<(f32, u64)>> {
    if b.num_rows() == 0 {
        return Ok(Vec::new());
    }
    let addrs = b
        .column_by_name(ROW_ADDR)
        .ok_or_else(|| Error::InvalidArgument("the scan returned no row addresses".into()))?
        .as_primitive::<UInt64Type>()
        .clone();
    let (col, addrs) = valid_vectors(b.column(0), addrs)?;
    let (vectors, dim) = to_f32(col.as_ref())?;
    let mut d = vec![0f32; addrs.len()];
    exact(metric, q, &vectors, &mut d)?;
    let mut top = TopK::new(k);
    for (i, dist) in d.into_iter().enumerate() {
        if dist.is_nan() || !in_range(dist, range) {
            continue;
        }
        if metric == Metric::Cosine && vectors[i * dim..(i + 1) * dim].iter().all(|v| *v == 0.0) {
            continue;
        }
        top.push(dist, addrs.value(i));
    }
    Ok(top.into_sorted_vec())
}

/// The rows of `col` that hold a vector, with their addresses.
pub(crate) fn valid_vectors(col: &ArrayRef, addrs: UInt64Array) -> Result<(ArrayRef, UInt64Array)> {
    if col.null_count() == 0 {
        return Ok((col.clone(), addrs));
    }
    let mask = arrow_array::BooleanArray::from_iter((0..col.len()).map(|i| Some(col.is_valid(i))));
    let kept = arrow_select::filter::filter(col.as_ref(), &mask)?;
    let addrs = arrow_select::filter::filter(&addrs, &mask)?
        .as_primitive::<UInt64Type>()
        .clone();
    Ok((kept, addrs))
}

/// Exact distances as pylance 14 reports them: squared L2, `1 - cos`, `1 - q·v` for dot,
/// and for byte vectors the number of differing bits.
fn exact(metric: Metric, q: &[f32], vectors: &[f32], out: &mut [f32]) -> Result<()> {
    match metric {
        Metric::Hamming => {
            let dim = q.len().max(1);
            let qb: Vec<u8> = q.iter().map(|v| *v as u8).collect();
            for (o, v) in out.iter_mut().zip(vectors.chunks(dim)) {
                *o = v
                    .iter()
                    .zip(&qb)
                    .map(|(a, b)| ((*a as u8) ^ b).count_ones())
                    .sum::<u32>() as f32;
            }
            Ok(())
        }
        Metric::Dot => {
            distances(metric, q, vectors, out)?;
            // The kernel gives -q·v; pylance 14 reports 1 - q·v.
            out.iter_mut().for_each(|d| *d += 1.0);
            Ok(())
        }
        _ => Ok(distances(metric, q, vectors, out)?),
    }
}
