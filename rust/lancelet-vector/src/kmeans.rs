//! Seeded k-means: a pure function of (data, params, seed).
//!
//! One seeded generator drives initialisation (k-means++ or random rows) and every redo draws
//! a fresh initialisation from it. The assignment step runs on `threads` scoped threads over
//! contiguous row ranges, but each row's assignment is computed independently and sums,
//! counts and loss are accumulated afterwards in row order, so the result is bit-identical
//! for any thread count. Ties in the argmin go to the lowest centroid id. Clusters that end
//! up empty are re-seeded with the rows farthest from their centroids (lowest row first).

use crate::distance::{dot_raw, l2_raw};
use crate::rng::Rng;
use crate::simd::NearestTable;
use crate::{Error, Metric, Result};

/// How initial centroids are chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KMeansInit {
    /// k-means++ (D² sampling).
    KMeansPlusPlus,
    /// `k` distinct random rows.
    Random,
}

/// Parameters of [`train`].
#[derive(Debug, Clone)]
pub struct KMeansParams {
    /// Number of clusters.
    pub k: usize,
    /// Maximum Lloyd iterations per run.
    pub max_iters: usize,
    /// Stop when the loss changes by at most this fraction between iterations.
    pub tolerance: f64,
    /// Independent runs; the one with the lowest loss wins.
    pub redos: usize,
    /// Seed of the generator driving initialisation.
    pub seed: u64,
    /// Initialisation method.
    pub init: KMeansInit,
    /// Assignment metric: `L2` (also used for cosine on normalised data) or `Dot`.
    pub metric: Metric,
    /// Worker threads for the assignment step (0 = available parallelism).
    pub threads: usize,
}

impl KMeansParams {
    /// Defaults for `k` clusters: 50 iterations, tolerance 1e-4, one run, seed 42, k-means++.
    pub fn new(k: usize) -> Self {
        Self {
            k,
            max_iters: 50,
            tolerance: 1e-4,
            redos: 1,
            seed: 42,
            init: KMeansInit::KMeansPlusPlus,
            metric: Metric::L2,
            threads: 0,
        }
    }
}

/// A trained clustering.
#[derive(Debug, Clone, PartialEq)]
pub struct KMeans {
    /// `k` centroids, row-major.
    pub centroids: Vec<f32>,
    /// Vector dimension.
    pub dim: usize,
    /// Sum over rows of the distance to the assigned centroid.
    pub loss: f64,
    /// The assignment metric.
    pub metric: Metric,
}

impl KMeans {
    /// Number of centroids.
    pub fn k(&self) -> usize {
        self.centroids.len().checked_div(self.dim).unwrap_or(0)
    }

    /// The nearest centroid of each row of `data`.
    pub fn assign(&self, data: &[f32]) -> Vec<u32> {
        assign_all(data, self.dim, &self.centroids, self.metric, 0).0
    }
}

/// The nearest of `centroids` to `v` and its distance (lowest id on ties).
pub fn nearest(centroids: &[f32], dim: usize, metric: Metric, v: &[f32]) -> (u32, f32) {
    let mut best = (0u32, f32::INFINITY);
    if dim == 0 {
        return (0, 0.0);
    }
    for (c, cent) in centroids.chunks_exact(dim).enumerate() {
        let d = match metric {
            Metric::Dot => -dot_raw(v, cent),
            _ => l2_raw(v, cent),
        };
        if d < best.1 || (best.1.is_infinite() && c == 0) {
            best = (c as u32, d);
        }
    }
    best
}

pub(crate) fn thread_count(threads: usize) -> usize {
    if threads == 0 {
        std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)
    } else {
        threads
    }
}

/// Maps row ranges to results on scoped threads and concatenates them in row order.
pub(crate) fn par_rows<T: Send>(
    n: usize,
    threads: usize,
    f: impl Fn(std::ops::Range<usize>) -> Vec<T> + Sync,
) -> Vec<T> {
    let t = thread_count(threads).min(n.div_ceil(256)).max(1);
    if t == 1 {
        return f(0..n);
    }
    let per = n.div_ceil(t);
    let f = &f;
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..t)
            .map(|i| s.spawn(move || f((i * per).min(n)..((i + 1) * per).min(n))))
            .collect();
        let mut out = Vec::with_capacity(n);
        for h in handles {
            // A worker only panics on a bug; fall back to computing its range here.
            match h.join() {
                Ok(part) => out.extend(part),
                Err(_) => return Vec::new(),
            }
        }
        out
    })
}

/// Assignment and distance of every row.
fn assign_all(data: &[f32], dim: usize, centroids: &[f32], metric: Metric, threads: usize) -> (Vec<u32>, Vec<f32>) {
    let n = data.len().checked_div(dim).unwrap_or(0);
    let table = NearestTable::new(centroids, dim, metric);
    let chunk = |r: std::ops::Range<usize>| {
        let mut ids = vec![0u32; r.len()];
        let mut dists = vec![0f32; r.len()];
        table.nearest_into(&data[r.start * dim..r.end * dim], &mut ids, &mut dists);
        ids.into_iter().zip(dists).collect::<Vec<_>>()
    };
    let pairs = par_rows(n, threads, chunk);
    let pairs = if pairs.len() == n { pairs } else { chunk(0..n) };
    pairs.into_iter().unzip()
}

fn init_plus_plus(data: &[f32], n: usize, dim: usize, k: usize, rng: &mut Rng) -> Vec<f32> {
    let row = |i: usize| &data[i * dim..(i + 1) * dim];
    let mut centroids = Vec::with_capacity(k * dim);
    let first = rng.below(n);
    centroids.extend_from_slice(row(first));
    let mut d: Vec<f64> = (0..n).map(|i| f64::from(l2_raw(row(i), row(first)))).collect();
    for _ in 1..k {
        let total: f64 = d.iter().sum();
        let pick = if total > 0.0 && total.is_finite() {
            let target = rng.unit() * total;
            let mut acc = 0.0;
            let mut pick = n - 1;
            for (i, x) in d.iter().enumerate() {
                acc += x;
                if acc > target {
                    pick = i;
                    break;
                }
            }
            pick
        } else {
            rng.below(n)
        };
        let c = row(pick).to_vec();
        for (i, di) in d.iter_mut().enumerate() {
            *di = di.min(f64::from(l2_raw(row(i), &c)));
        }
        centroids.extend_from_slice(&c);
    }
    centroids
}

fn run_once(data: &[f32], n: usize, dim: usize, p: &KMeansParams, rng: &mut Rng) -> KMeans {
    let k = p.k;
    let mut centroids = match p.init {
        KMeansInit::KMeansPlusPlus => init_plus_plus(data, n, dim, k, rng),
        KMeansInit::Random => rng
            .sample(n, k)
            .into_iter()
            .flat_map(|i| data[i * dim..(i + 1) * dim].to_vec())
            .collect(),
    };
    let mut prev = f64::INFINITY;
    for _ in 0..p.max_iters.max(1) {
        let (assign, dist) = assign_all(data, dim, &centroids, p.metric, p.threads);
        let loss: f64 = dist.iter().map(|d| f64::from(*d)).sum();
        let mut sums = vec![0f64; k * dim];
        let mut counts = vec![0usize; k];
        for (i, &c) in assign.iter().enumerate() {
            let c = c as usize;
            counts[c] += 1;
            for (s, x) in sums[c * dim..(c + 1) * dim]
                .iter_mut()
                .zip(&data[i * dim..(i + 1) * dim])
            {
                *s += f64::from(*x);
            }
        }
        for c in 0..k {
            if counts[c] > 0 {
                for j in 0..dim {
                    centroids[c * dim + j] = (sums[c * dim + j] / counts[c] as f64) as f32;
                }
            }
        }
        let empty: Vec<usize> = (0..k).filter(|&c| counts[c] == 0).collect();
        if !empty.is_empty() {
            let mut order: Vec<usize> = (0..n).collect();
            order.sort_by(|&a, &b| dist[b].total_cmp(&dist[a]).then(a.cmp(&b)));
            for (c, &row) in empty.iter().zip(&order) {
                centroids[c * dim..(c + 1) * dim].copy_from_slice(&data[row * dim..(row + 1) * dim]);
            }
        }
        let converged = empty.is_empty() && (prev - loss).abs() <= p.tolerance * loss.abs();
        prev = loss;
        if converged {
            break;
        }
    }
    let (_, dist) = assign_all(data, dim, &centroids, p.metric, p.threads);
    KMeans {
        centroids,
        dim,
        loss: dist.iter().map(|d| f64::from(*d)).sum(),
        metric: p.metric,
    }
}

/// Clusters the rows of `data` (row-major, `dim` values each) into `params.k` centroids.
pub fn train(data: &[f32], dim: usize, params: &KMeansParams) -> Result<KMeans> {
    if dim == 0 || !data.len().is_multiple_of(dim) {
        return Err(Error::InvalidArgument(format!(
            "{} values are not rows of dimension {dim}",
            data.len()
        )));
    }
    if !matches!(params.metric, Metric::L2 | Metric::Dot | Metric::Cosine) {
        return Err(Error::InvalidArgument(format!(
            "k-means does not support {}",
            params.metric
        )));
    }
    let n = data.len() / dim;
    if params.k == 0 || n < params.k {
        return Err(Error::InvalidArgument(format!(
            "k-means needs at least k = {} rows, got {n}",
            params.k
        )));
    }
    let mut rng = Rng::new(params.seed);
    let mut best: Option<KMeans> = None;
    for _ in 0..params.redos.max(1) {
        let run = run_once(data, n, dim, params, &mut rng);
        if best.as_ref().is_none_or(|b| run.loss < b.loss) {
            best = Some(run);
        }
    }
    best.ok_or_else(|| Error::InvalidArgument("k-means made no run".into()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn blobs(n: usize, dim: usize, seed: u64) -> Vec<f32> {
        let mut rng = Rng::new(seed);
        (0..n)
            .flat_map(|i| {
                let c = (i % 4) as f32 * 10.0;
                (0..dim).map(|_| c + rng.unit() as f32).collect::<Vec<_>>()
            })
            .collect()
    }

    #[test]
    fn same_result_for_any_thread_count() {
        let data = blobs(3000, 8, 1);
        let mut p = KMeansParams::new(6);
        p.threads = 1;
        let a = train(&data, 8, &p).unwrap();
        p.threads = 2;
        let b = train(&data, 8, &p).unwrap();
        p.threads = 3;
        let c = train(&data, 8, &p).unwrap();
        assert_eq!(a, b);
        assert_eq!(a, c);
        p.seed = 7;
        assert_ne!(train(&data, 8, &p).unwrap().centroids, a.centroids);
    }

    #[test]
    fn finds_well_separated_blobs() {
        let data = blobs(400, 4, 2);
        for init in [KMeansInit::KMeansPlusPlus, KMeansInit::Random] {
            let mut p = KMeansParams::new(4);
            p.init = init;
            p.redos = 3;
            let km = train(&data, 4, &p).unwrap();
            let a = km.assign(&data);
            // Rows i and i + 4 come from the same blob.
            for i in 0..396 {
                assert_eq!(a[i], a[i + 4]);
            }
            assert!(km.loss < 400.0 * 4.0 * 0.25, "loss {}", km.loss);
        }
    }

    #[test]
    fn too_few_rows_is_an_error() {
        assert!(train(&[1.0, 2.0], 1, &KMeansParams::new(3)).is_err());
        assert!(train(&[1.0, 2.0, 3.0], 2, &KMeansParams::new(1)).is_err());
        assert!(train(&[], 2, &KMeansParams::new(0)).is_err());
    }

    #[test]
    fn duplicates_reseed_empty_clusters() {
        let data = vec![1.0f32; 20];
        let km = train(&data, 2, &KMeansParams::new(3)).unwrap();
        assert_eq!(km.k(), 3);
        assert!(km.centroids.iter().all(|x| x.is_finite()));
        assert_eq!(km.loss, 0.0);
    }
}
