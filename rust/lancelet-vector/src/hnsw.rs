//! HNSW graphs (Malkov & Yashunin, "Efficient and robust approximate nearest neighbor search
//! using Hierarchical Navigable Small World graphs"), one per IVF partition, in pylance 14's
//! row layout.
//!
//! Building is serial inside a partition and takes its randomness from a seed, so a graph is
//! a pure function of (vectors, params, seed); partitions are independent and are built on
//! scoped threads. Distances come from a caller closure over node ids, so one graph serves
//! every storage (exact vectors at build time; flat / SQ / PQ scorers at search time).
//!
//! Row layout of a partition's block in `index.idx`: level 0 holds one row per node
//! (`__vector_id` = node = position in the partition), then level 1 holds the nodes of level
//! ≥ 1 in ascending id, and so on; `level_offsets[l]` is the first row of level `l` inside the
//! block (`max_level + 1` entries, the last being the block's row count).

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use crate::rng::Rng;

/// Parameters of a graph.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HnswParams {
    /// Neighbours per node on upper levels (level 0 keeps up to `2 m`).
    pub m: usize,
    /// Candidate list size while inserting.
    pub ef_construction: usize,
    /// Number of levels (pylance: 7, levels `0..7`).
    pub max_level: usize,
    /// Seed of the level draws.
    pub seed: u64,
}

impl HnswParams {
    /// pylance's defaults (m 20, ef_construction 150, max_level 7) with `seed`.
    pub fn new(seed: u64) -> Self {
        Self {
            m: 20,
            ef_construction: 150,
            max_level: 7,
            seed,
        }
    }

    fn max_degree(&self, level: usize) -> usize {
        if level == 0 {
            2 * self.m
        } else {
            self.m
        }
    }
}

/// A graph: per node, its neighbour lists from level 0 up to the node's level.
#[derive(Debug, Clone, PartialEq)]
pub struct Graph {
    /// `links[node][level]` = `(distance, neighbour)` pairs.
    pub links: Vec<Vec<Vec<(f32, u32)>>>,
    /// Entry node (a node of the top level; 0 for an empty graph).
    pub entry_point: u32,
    /// Number of levels in the params (`level_offsets` has one more entry).
    pub max_level: usize,
}

/// A candidate ordered by distance, then id (total order for heaps).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Cand(f32, u32);

impl Eq for Cand {}
impl PartialOrd for Cand {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Cand {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.total_cmp(&other.0).then(self.1.cmp(&other.1))
    }
}

/// A visited set cleared in O(1) by bumping a generation stamp.
#[derive(Debug, Default)]
pub struct Visited {
    marks: Vec<u32>,
    generation: u32,
}

impl Visited {
    fn reset(&mut self, n: usize) {
        if self.marks.len() < n {
            self.marks.resize(n, 0);
        }
        self.generation = self.generation.wrapping_add(1);
        if self.generation == 0 {
            self.marks.fill(0);
            self.generation = 1;
        }
    }

    /// Marks `i`; true when it was not marked yet.
    fn insert(&mut self, i: u32) -> bool {
        let m = &mut self.marks[i as usize];
        if *m == self.generation {
            false
        } else {
            *m = self.generation;
            true
        }
    }
}

impl Graph {
    /// Number of nodes.
    pub fn len(&self) -> usize {
        self.links.len()
    }

    /// Whether the graph has no node.
    pub fn is_empty(&self) -> bool {
        self.links.is_empty()
    }

    /// Level of `node` (0-based).
    fn level(&self, node: u32) -> usize {
        self.links[node as usize].len().saturating_sub(1)
    }

    /// Neighbours of `node` on `level` (empty above its level).
    pub fn neighbours(&self, node: u32, level: usize) -> &[(f32, u32)] {
        self.links
            .get(node as usize)
            .and_then(|l| l.get(level))
            .map_or(&[], Vec::as_slice)
    }

    /// Builds the graph of `n` nodes with `dist(a, b)` between node ids.
    pub fn build(n: usize, params: &HnswParams, dist: impl Fn(u32, u32) -> f32) -> Self {
        let mut rng = Rng::new(params.seed);
        let top_cap = params.max_level.max(1) - 1;
        let ml = 1.0 / (params.m.max(2) as f64).ln();
        let mut g = Graph {
            links: Vec::with_capacity(n),
            entry_point: 0,
            max_level: params.max_level.max(1),
        };
        let mut visited = Visited::default();
        for q in 0..n as u32 {
            // Level draw: floor(-ln(U) * mL), capped at the top level.
            let u = 1.0 - rng.unit();
            let level = ((-u.ln() * ml).floor() as usize).min(top_cap);
            g.links.push(vec![Vec::new(); level + 1]);
            if q == 0 {
                g.entry_point = 0;
                continue;
            }
            let top = g.level(g.entry_point);
            let dq = |x: u32| dist(q, x);
            // Algorithm 1: greedy descent through the levels above the new node's.
            let mut ep = Cand(dq(g.entry_point), g.entry_point);
            for lc in (level + 1..=top).rev() {
                ep = g.greedy(ep, lc, &dq);
            }
            let mut eps = vec![ep];
            for lc in (0..=level.min(top)).rev() {
                visited.reset(n);
                let w = g.search_layer(&eps, params.ef_construction, lc, &dq, &mut visited, None);
                let chosen = select_heuristic(&w, params.m.min(params.max_degree(lc)), &dist);
                for &Cand(d, e) in &chosen {
                    g.links[q as usize][lc].push((d, e));
                    let max = params.max_degree(lc);
                    let list = &mut g.links[e as usize][lc];
                    list.push((d, q));
                    if list.len() > max {
                        let cands: Vec<Cand> = {
                            let mut c: Vec<Cand> = list.iter().map(|&(d, x)| Cand(d, x)).collect();
                            c.sort();
                            c
                        };
                        let kept = select_heuristic(&cands, max, &dist);
                        g.links[e as usize][lc] = kept.iter().map(|c| (c.0, c.1)).collect();
                    }
                }
                eps = w;
            }
            if level > top {
                g.entry_point = q;
            }
        }
        g
    }

    fn greedy(&self, mut ep: Cand, level: usize, dq: &impl Fn(u32) -> f32) -> Cand {
        loop {
            let mut moved = false;
            for &(_, e) in self.neighbours(ep.1, level) {
                let d = dq(e);
                if Cand(d, e) < ep {
                    ep = Cand(d, e);
                    moved = true;
                }
            }
            if !moved {
                return ep;
            }
        }
    }

    /// Algorithm 2: the `ef` nearest nodes reachable from `eps` on `level`, nearest first.
    /// With `allow`, only allowed nodes enter the result (all nodes are still walked).
    fn search_layer(
        &self,
        eps: &[Cand],
        ef: usize,
        level: usize,
        dq: &impl Fn(u32) -> f32,
        visited: &mut Visited,
        allow: Option<&dyn Fn(u32) -> bool>,
    ) -> Vec<Cand> {
        let ef = ef.max(1);
        let mut cands: BinaryHeap<std::cmp::Reverse<Cand>> = BinaryHeap::new();
        let mut found: BinaryHeap<Cand> = BinaryHeap::new();
        let ok = |i: u32| allow.is_none_or(|f| f(i));
        for &c in eps {
            if visited.insert(c.1) {
                cands.push(std::cmp::Reverse(c));
                if ok(c.1) {
                    found.push(c);
                }
            }
        }
        while let Some(std::cmp::Reverse(c)) = cands.pop() {
            if found.len() >= ef && found.peek().is_some_and(|f| c > *f) {
                break;
            }
            for &(_, e) in self.neighbours(c.1, level) {
                if !visited.insert(e) {
                    continue;
                }
                let d = Cand(dq(e), e);
                if found.len() < ef || found.peek().is_some_and(|f| d < *f) {
                    cands.push(std::cmp::Reverse(d));
                    if ok(e) {
                        found.push(d);
                        if found.len() > ef {
                            found.pop();
                        }
                    }
                }
            }
        }
        found.into_sorted_vec()
    }

    /// The `ef` best nodes for a query with distance `dq` (nearest first), walking the
    /// levels down from the entry point; `allow` restricts the results.
    pub fn search(
        &self,
        ef: usize,
        dq: &impl Fn(u32) -> f32,
        allow: Option<&dyn Fn(u32) -> bool>,
        visited: &mut Visited,
    ) -> Vec<(f32, u32)> {
        if self.is_empty() {
            return Vec::new();
        }
        let mut ep = Cand(dq(self.entry_point), self.entry_point);
        for lc in (1..=self.level(self.entry_point)).rev() {
            ep = self.greedy(ep, lc, dq);
        }
        visited.reset(self.len());
        self.search_layer(&[ep], ef, 0, dq, visited, allow)
            .into_iter()
            .map(|c| (c.0, c.1))
            .collect()
    }

    /// Row offsets of each level inside the block (`max_level + 1` entries).
    pub fn level_offsets(&self) -> Vec<usize> {
        let mut offsets = vec![0usize; self.max_level + 1];
        for l in 0..self.max_level {
            let count = self.links.iter().filter(|n| n.len() > l).count();
            offsets[l + 1] = offsets[l] + count;
        }
        offsets
    }

    /// The block's rows in layout order: `(node, neighbours)`.
    pub fn rows(&self) -> Vec<(u32, &[(f32, u32)])> {
        let mut out = Vec::new();
        for l in 0..self.max_level {
            for (i, node) in self.links.iter().enumerate() {
                if let Some(list) = node.get(l) {
                    out.push((i as u32, list.as_slice()));
                }
            }
        }
        out
    }

    /// A graph from its rows (`(node, neighbour ids)` in layout order) and level offsets, as
    /// read from a file; `None` when they are inconsistent.
    pub fn from_rows(rows: &[(u32, Vec<u32>)], level_offsets: &[usize], entry_point: u32) -> Option<Self> {
        let levels = level_offsets.len().checked_sub(1)?;
        let n = *level_offsets.get(1)?;
        if level_offsets.windows(2).any(|w| w[0] > w[1]) || level_offsets.last() != Some(&rows.len()) {
            return None;
        }
        let mut links: Vec<Vec<Vec<(f32, u32)>>> = vec![Vec::new(); n];
        for l in 0..levels {
            for (node, nbrs) in &rows[level_offsets[l]..level_offsets[l + 1]] {
                let slot = links.get_mut(*node as usize)?;
                if slot.len() != l || nbrs.iter().any(|&x| x as usize >= n) {
                    return None;
                }
                slot.push(nbrs.iter().map(|&x| (0.0, x)).collect());
            }
        }
        if n > 0 && (entry_point as usize >= n || links.iter().any(Vec::is_empty)) {
            return None;
        }
        Some(Self {
            links,
            entry_point,
            max_level: levels,
        })
    }
}

/// Algorithm 4 (without extending candidates): walk `cands` nearest first and keep one when
/// it is closer to the base than to every neighbour kept so far, up to `m`.
fn select_heuristic(cands: &[Cand], m: usize, dist: &impl Fn(u32, u32) -> f32) -> Vec<Cand> {
    let mut kept: Vec<Cand> = Vec::with_capacity(m);
    for &c in cands {
        if kept.len() >= m {
            break;
        }
        if kept.iter().all(|k| dist(c.1, k.1) > c.0) {
            kept.push(c);
        }
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;

    fn points(n: usize, dim: usize, seed: u64) -> Vec<f32> {
        let mut r = Rng::new(seed);
        (0..n * dim).map(|_| r.unit() as f32).collect()
    }

    fn l2(a: &[f32], b: &[f32]) -> f32 {
        a.iter().zip(b).map(|(x, y)| (x - y) * (x - y)).sum()
    }

    #[test]
    fn graph_search_has_high_recall_and_round_trips_through_rows() {
        let (n, dim) = (2000, 8);
        let data = points(n, dim, 5);
        let v = |i: u32| &data[i as usize * dim..(i as usize + 1) * dim];
        let params = HnswParams::new(42);
        let g = Graph::build(n, &params, |a, b| l2(v(a), v(b)));
        assert_eq!(g, Graph::build(n, &params, |a, b| l2(v(a), v(b))), "seeded build");
        for node in &g.links {
            assert!(node[0].len() <= 40 && node.iter().skip(1).all(|l| l.len() <= 20));
        }
        let offsets = g.level_offsets();
        assert_eq!(offsets.len(), 8);
        assert_eq!(offsets[1], n);
        let rows: Vec<(u32, Vec<u32>)> = g
            .rows()
            .into_iter()
            .map(|(i, l)| (i, l.iter().map(|x| x.1).collect()))
            .collect();
        let back = Graph::from_rows(&rows, &offsets, g.entry_point).unwrap();
        let queries = points(50, dim, 6);
        let mut visited = Visited::default();
        let mut hits = 0;
        for q in queries.chunks_exact(dim) {
            let mut exact: Vec<(f32, u32)> = (0..n as u32).map(|i| (l2(q, v(i)), i)).collect();
            exact.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
            let got = back.search(64, &|i| l2(q, v(i)), None, &mut visited);
            let top: Vec<u32> = got.iter().take(10).map(|x| x.1).collect();
            hits += exact[..10].iter().filter(|e| top.contains(&e.1)).count();
            let even = |i: u32| i.is_multiple_of(2);
            let f = back.search(64, &|i| l2(q, v(i)), Some(&even), &mut visited);
            assert!(f.iter().all(|x| x.1 % 2 == 0) && f.len() >= 10);
        }
        assert!(hits >= 480, "recall {hits}/500");
        assert!(Graph::from_rows(&rows[1..], &offsets, 0).is_none());
    }
}
