//! Kernel dispatch: one choice per process between the portable scalar kernels and AVX2+FMA
//! bodies, made once from a runtime CPU check.
//!
//! Each ISA body lives in its own `#[target_feature]` function, reached only through the
//! dispatchers below, which check [`kernel`] first. `LANCELET_VECTOR_KERNEL=scalar` forces
//! the scalar path (so tests also cover the fallback on AVX2 machines). Results depend on the
//! kernel only through float rounding: within one process (one kernel) everything stays a
//! pure function of its inputs.
//!
//! Besides pairwise L2 / dot, [`NearestTable`] answers "nearest centroid of each row" for a
//! block of rows at once, with `‖x‖² − 2x·c + ‖c‖²` (or `−x·c` for dot) over centroids laid
//! out eight-wide so that one register holds eight centroids' partial sums. That is the inner
//! loop of k-means, IVF assignment and PQ encoding.

use std::sync::OnceLock;

use crate::Metric;

/// The kernel family in use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kernel {
    /// Portable lane-unrolled loops.
    Scalar,
    /// x86-64 AVX2 with fused multiply-add.
    Avx2Fma,
}

impl Kernel {
    /// Whether this CPU can run the kernel.
    pub fn is_available(self) -> bool {
        match self {
            Self::Scalar => true,
            #[cfg(target_arch = "x86_64")]
            Self::Avx2Fma => is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma"),
            #[cfg(not(target_arch = "x86_64"))]
            Self::Avx2Fma => false,
        }
    }

    /// Every kernel this CPU can run, best first.
    pub fn available() -> Vec<Kernel> {
        [Self::Avx2Fma, Self::Scalar]
            .into_iter()
            .filter(|k| k.is_available())
            .collect()
    }
}

/// The kernel chosen for this process.
pub fn kernel() -> Kernel {
    static CHOICE: OnceLock<Kernel> = OnceLock::new();
    *CHOICE.get_or_init(|| {
        let forced = std::env::var("LANCELET_VECTOR_KERNEL").is_ok_and(|v| v.eq_ignore_ascii_case("scalar"));
        if forced {
            Kernel::Scalar
        } else {
            Kernel::available().into_iter().next().unwrap_or(Kernel::Scalar)
        }
    })
}

const LANES: usize = 8;

/// Squared L2, scalar reference body (eight independent accumulators).
#[inline]
pub(crate) fn l2_scalar(a: &[f32], b: &[f32]) -> f32 {
    let mut acc = [0f32; LANES];
    let (ac, bc) = (a.chunks_exact(LANES), b.chunks_exact(LANES));
    let (ar, br) = (ac.remainder(), bc.remainder());
    for (x, y) in ac.zip(bc) {
        for i in 0..LANES {
            let d = x[i] - y[i];
            acc[i] += d * d;
        }
    }
    let mut s: f32 = acc.iter().sum();
    for (x, y) in ar.iter().zip(br) {
        let d = x - y;
        s += d * d;
    }
    s
}

/// Inner product, scalar reference body.
#[inline]
pub(crate) fn dot_scalar(a: &[f32], b: &[f32]) -> f32 {
    let mut acc = [0f32; LANES];
    let (ac, bc) = (a.chunks_exact(LANES), b.chunks_exact(LANES));
    let (ar, br) = (ac.remainder(), bc.remainder());
    for (x, y) in ac.zip(bc) {
        for i in 0..LANES {
            acc[i] += x[i] * y[i];
        }
    }
    let mut s: f32 = acc.iter().sum();
    for (x, y) in ar.iter().zip(br) {
        s += x * y;
    }
    s
}

/// Squared L2 with kernel `k` (which must be available).
#[inline]
pub(crate) fn l2_with(k: Kernel, a: &[f32], b: &[f32]) -> f32 {
    match k {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: callers pass only available kernels (`kernel()` or `Kernel::available()`).
        Kernel::Avx2Fma if a.len() >= 16 => unsafe { avx2::l2(a, b) },
        _ => l2_scalar(a, b),
    }
}

/// Inner product with kernel `k` (which must be available).
#[inline]
pub(crate) fn dot_with(k: Kernel, a: &[f32], b: &[f32]) -> f32 {
    match k {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: as in `l2_with`.
        Kernel::Avx2Fma if a.len() >= 16 => unsafe { avx2::dot(a, b) },
        _ => dot_scalar(a, b),
    }
}

/// Centroids prepared for batched nearest-centroid search.
#[derive(Debug, Clone)]
pub struct NearestTable {
    dim: usize,
    k: usize,
    /// Blocks of 16 centroids: `[block][dim][16]`; padding centroids are zero.
    blocks: Vec<f32>,
    /// The centroids, row-major (for the scalar body).
    rows: Vec<f32>,
    /// Per (padded) centroid: `‖c‖²` for L2, 0 for dot; `+inf` for padding.
    bias: Vec<f32>,
    /// Multiplier of `x·c`: −2 for L2, −1 for dot.
    alpha: f32,
    l2: bool,
}

/// Centroids per block of [`NearestTable`].
const BLOCK: usize = 16;

impl NearestTable {
    /// Prepares `centroids` (`k x dim`, row-major) for `metric` (`Dot` ranks by `−x·c`, every
    /// other metric by squared L2).
    pub fn new(centroids: &[f32], dim: usize, metric: Metric) -> Self {
        let k = centroids.len().checked_div(dim).unwrap_or(0);
        let nb = k.div_ceil(BLOCK);
        let l2 = metric != Metric::Dot;
        let mut blocks = vec![0f32; nb * dim * BLOCK];
        let mut bias = vec![f32::INFINITY; nb * BLOCK];
        for (c, cent) in centroids.chunks_exact(dim.max(1)).enumerate().take(k) {
            let (b, lane) = (c / BLOCK, c % BLOCK);
            for (d, &v) in cent.iter().enumerate() {
                blocks[(b * dim + d) * BLOCK + lane] = v;
            }
            bias[c] = if l2 { dot_scalar(cent, cent) } else { 0.0 };
        }
        Self {
            dim,
            k,
            blocks,
            rows: centroids[..k * dim].to_vec(),
            bias,
            alpha: if l2 { -2.0 } else { -1.0 },
            l2,
        }
    }

    /// Number of centroids.
    pub fn k(&self) -> usize {
        self.k
    }

    /// Nearest centroid (lowest id on ties) and its distance (squared L2, clamped at 0, or
    /// `−x·c`) for every row of `rows`, written to `ids` / `dists`.
    pub fn nearest_into(&self, rows: &[f32], ids: &mut [u32], dists: &mut [f32]) {
        self.nearest_with(kernel(), rows, ids, dists);
    }

    /// [`Self::nearest_into`] with an explicit (available) kernel.
    pub(crate) fn nearest_with(&self, kern: Kernel, rows: &[f32], ids: &mut [u32], dists: &mut [f32]) {
        let n = rows
            .len()
            .checked_div(self.dim)
            .unwrap_or(0)
            .min(ids.len())
            .min(dists.len());
        if self.k == 0 || self.dim == 0 {
            ids[..n].fill(0);
            dists[..n].fill(f32::INFINITY);
            return;
        }
        match kern {
            #[cfg(target_arch = "x86_64")]
            // SAFETY: callers pass only available kernels; shapes are checked above.
            Kernel::Avx2Fma => unsafe { avx2::nearest(self, &rows[..n * self.dim], &mut ids[..n], &mut dists[..n]) },
            _ => self.nearest_scalar(&rows[..n * self.dim], &mut ids[..n], &mut dists[..n]),
        }
        if self.l2 {
            for ((row, d), _) in rows.chunks_exact(self.dim).zip(dists.iter_mut()).zip(0..n) {
                *d = (*d + dot_scalar(row, row)).max(0.0);
            }
        }
    }

    /// Reference body: the same formula, one centroid at a time.
    fn nearest_scalar(&self, rows: &[f32], ids: &mut [u32], scores: &mut [f32]) {
        let dim = self.dim;
        for ((row, id), score) in rows.chunks_exact(dim).zip(ids.iter_mut()).zip(scores.iter_mut()) {
            let mut best = (0u32, f32::INFINITY);
            for (c, cent) in self.rows.chunks_exact(dim).enumerate() {
                let s = self.bias[c] + self.alpha * dot_scalar(row, cent);
                if s < best.1 {
                    best = (c as u32, s);
                }
            }
            *id = best.0;
            *score = best.1;
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use std::arch::x86_64::*;

    use super::{NearestTable, BLOCK};

    #[inline]
    #[target_feature(enable = "avx2,fma")]
    fn hsum(v: __m256) -> f32 {
        let lo = _mm256_castps256_ps128(v);
        let hi = _mm256_extractf128_ps::<1>(v);
        let s = _mm_add_ps(lo, hi);
        let s = _mm_add_ps(s, _mm_movehl_ps(s, s));
        let s = _mm_add_ss(s, _mm_shuffle_ps::<0b01>(s, s));
        _mm_cvtss_f32(s)
    }

    /// Squared L2 of equal-length slices.
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn l2(a: &[f32], b: &[f32]) -> f32 {
        let n = a.len().min(b.len());
        let (pa, pb) = (a.as_ptr(), b.as_ptr());
        let mut acc = [_mm256_setzero_ps(); 4];
        let mut i = 0;
        // SAFETY: every load reads 8 floats at `i + 8j < n` rounded down to whole chunks.
        unsafe {
            while i + 32 <= n {
                for (j, acc) in acc.iter_mut().enumerate() {
                    let d = _mm256_sub_ps(_mm256_loadu_ps(pa.add(i + 8 * j)), _mm256_loadu_ps(pb.add(i + 8 * j)));
                    *acc = _mm256_fmadd_ps(d, d, *acc);
                }
                i += 32;
            }
            while i + 8 <= n {
                let d = _mm256_sub_ps(_mm256_loadu_ps(pa.add(i)), _mm256_loadu_ps(pb.add(i)));
                acc[0] = _mm256_fmadd_ps(d, d, acc[0]);
                i += 8;
            }
        }
        let v = _mm256_add_ps(_mm256_add_ps(acc[0], acc[1]), _mm256_add_ps(acc[2], acc[3]));
        let mut s = hsum(v);
        for (x, y) in a[i..n].iter().zip(&b[i..n]) {
            let d = x - y;
            s += d * d;
        }
        s
    }

    /// Inner product of equal-length slices.
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn dot(a: &[f32], b: &[f32]) -> f32 {
        let n = a.len().min(b.len());
        let (pa, pb) = (a.as_ptr(), b.as_ptr());
        let mut acc = [_mm256_setzero_ps(); 4];
        let mut i = 0;
        // SAFETY: as in `l2`.
        unsafe {
            while i + 32 <= n {
                for (j, acc) in acc.iter_mut().enumerate() {
                    *acc = _mm256_fmadd_ps(
                        _mm256_loadu_ps(pa.add(i + 8 * j)),
                        _mm256_loadu_ps(pb.add(i + 8 * j)),
                        *acc,
                    );
                }
                i += 32;
            }
            while i + 8 <= n {
                acc[0] = _mm256_fmadd_ps(_mm256_loadu_ps(pa.add(i)), _mm256_loadu_ps(pb.add(i)), acc[0]);
                i += 8;
            }
        }
        let v = _mm256_add_ps(_mm256_add_ps(acc[0], acc[1]), _mm256_add_ps(acc[2], acc[3]));
        let mut s = hsum(v);
        for (x, y) in a[i..n].iter().zip(&b[i..n]) {
            s += x * y;
        }
        s
    }

    /// Scores of `R` rows against every block, keeping per-lane minima, then the lane
    /// reduction (lowest id on equal scores).
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn rows_tile<const R: usize>(t: &NearestTable, rows: &[f32], ids: &mut [u32], scores: &mut [f32]) {
        let dim = t.dim;
        let alpha = _mm256_set1_ps(t.alpha);
        let mut best_v = [[_mm256_set1_ps(f32::INFINITY); 2]; R];
        let mut best_i = [[_mm256_setzero_si256(); 2]; R];
        let lane_ids = [
            _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7),
            _mm256_setr_epi32(8, 9, 10, 11, 12, 13, 14, 15),
        ];
        let px = rows.as_ptr();
        for b in 0..t.bias.len() / BLOCK {
            let pc = t.blocks[b * dim * BLOCK..].as_ptr();
            let mut acc = [[_mm256_setzero_ps(); 2]; R];
            // SAFETY: block `b` holds `dim * 16` floats; row `r` holds `dim` floats of `rows`.
            unsafe {
                for d in 0..dim {
                    let c0 = _mm256_loadu_ps(pc.add(d * BLOCK));
                    let c1 = _mm256_loadu_ps(pc.add(d * BLOCK + 8));
                    for (r, acc) in acc.iter_mut().enumerate() {
                        let x = _mm256_broadcast_ss(&*px.add(r * dim + d));
                        acc[0] = _mm256_fmadd_ps(x, c0, acc[0]);
                        acc[1] = _mm256_fmadd_ps(x, c1, acc[1]);
                    }
                }
            }
            let base = _mm256_set1_epi32((b * BLOCK) as i32);
            for h in 0..2 {
                // SAFETY: `bias` has 16 entries per block.
                let bias = unsafe { _mm256_loadu_ps(t.bias.as_ptr().add(b * BLOCK + 8 * h)) };
                let ids_v = _mm256_add_epi32(base, lane_ids[h]);
                for r in 0..R {
                    let s = _mm256_fmadd_ps(alpha, acc[r][h], bias);
                    let lt = _mm256_cmp_ps::<_CMP_LT_OQ>(s, best_v[r][h]);
                    best_v[r][h] = _mm256_blendv_ps(best_v[r][h], s, lt);
                    best_i[r][h] = _mm256_blendv_epi8(best_i[r][h], ids_v, _mm256_castps_si256(lt));
                }
            }
        }
        for r in 0..R {
            let mut v = [0f32; 16];
            let mut i = [0i32; 16];
            // SAFETY: both arrays hold 16 lanes.
            unsafe {
                _mm256_storeu_ps(v.as_mut_ptr(), best_v[r][0]);
                _mm256_storeu_ps(v.as_mut_ptr().add(8), best_v[r][1]);
                _mm256_storeu_si256(i.as_mut_ptr().cast(), best_i[r][0]);
                _mm256_storeu_si256(i.as_mut_ptr().add(8).cast(), best_i[r][1]);
            }
            let mut best = (0u32, f32::INFINITY);
            for l in 0..16 {
                let id = i[l] as u32;
                if v[l] < best.1 || (v[l] == best.1 && id < best.0) {
                    best = (id, v[l]);
                }
            }
            ids[r] = best.0;
            scores[r] = best.1;
        }
    }

    /// Nearest centroid of every row (scores without the `‖x‖²` term).
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn nearest(t: &NearestTable, rows: &[f32], ids: &mut [u32], scores: &mut [f32]) {
        const R: usize = 4;
        let dim = t.dim;
        let n = ids.len();
        let mut i = 0;
        // SAFETY: each call sees exactly its rows and output slots.
        unsafe {
            while i + R <= n {
                rows_tile::<R>(
                    t,
                    &rows[i * dim..(i + R) * dim],
                    &mut ids[i..i + R],
                    &mut scores[i..i + R],
                );
                i += R;
            }
            while i < n {
                rows_tile::<1>(
                    t,
                    &rows[i * dim..(i + 1) * dim],
                    &mut ids[i..i + 1],
                    &mut scores[i..i + 1],
                );
                i += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn ref_l2(a: &[f32], b: &[f32]) -> f64 {
        a.iter()
            .zip(b)
            .map(|(x, y)| (f64::from(*x) - f64::from(*y)).powi(2))
            .sum()
    }
    fn ref_dot(a: &[f32], b: &[f32]) -> f64 {
        a.iter().zip(b).map(|(x, y)| f64::from(*x) * f64::from(*y)).sum()
    }

    fn pair() -> impl Strategy<Value = (Vec<f32>, Vec<f32>)> {
        prop_oneof![
            Just(0usize),
            Just(1),
            Just(7),
            Just(8),
            Just(9),
            Just(15),
            Just(16),
            Just(17),
            Just(31),
            Just(33),
            Just(128),
            Just(4096),
            0usize..200
        ]
        .prop_flat_map(|n| {
            (
                prop::collection::vec(-100f32..100.0, n),
                prop::collection::vec(-100f32..100.0, n),
            )
        })
    }

    proptest! {
        #[test]
        fn every_kernel_matches_the_reference((a, b) in pair()) {
            let sq: f64 = a.iter().zip(&b).map(|(x, y)| (f64::from(x.abs()) + f64::from(y.abs())).powi(2)).sum();
            let mag: f64 = a.iter().zip(&b).map(|(x, y)| f64::from(x.abs()) * f64::from(y.abs())).sum();
            for k in Kernel::available() {
                let l2 = f64::from(l2_with(k, &a, &b));
                prop_assert!((l2 - ref_l2(&a, &b)).abs() <= 1e-5 * sq.max(1.0), "{k:?} l2");
                let d = f64::from(dot_with(k, &a, &b));
                prop_assert!((d - ref_dot(&a, &b)).abs() <= 1e-5 * mag.max(1.0), "{k:?} dot");
            }
        }

        #[test]
        fn every_nearest_kernel_finds_a_nearest_centroid(
            dim in 1usize..40, k in 1usize..40, n in 0usize..13, seed in any::<u64>(), dot in any::<bool>(),
        ) {
            let mut s = seed | 1;
            let mut next = || { s ^= s << 13; s ^= s >> 7; s ^= s << 17; (s >> 40) as f32 / (1u64 << 20) as f32 - 8.0 };
            let cents: Vec<f32> = (0..k * dim).map(|_| next()).collect();
            let rows: Vec<f32> = (0..n * dim).map(|_| next()).collect();
            let metric = if dot { Metric::Dot } else { Metric::L2 };
            let t = NearestTable::new(&cents, dim, metric);
            for kern in Kernel::available() {
                let (mut ids, mut dists) = (vec![0u32; n], vec![0f32; n]);
                t.nearest_with(kern, &rows, &mut ids, &mut dists);
                for (i, row) in rows.chunks_exact(dim).enumerate() {
                    let exact = |c: usize| {
                        let cent = &cents[c * dim..(c + 1) * dim];
                        if dot { -ref_dot(row, cent) } else { ref_l2(row, cent) }
                    };
                    let best = (0..k).map(exact).fold(f64::INFINITY, f64::min);
                    let scale: f64 = row.iter().map(|x| f64::from(*x).powi(2)).sum::<f64>() + 64.0 * dim as f64;
                    prop_assert!((exact(ids[i] as usize) - best).abs() <= 1e-5 * scale, "{kern:?} id");
                    prop_assert!((f64::from(dists[i]) - best).abs() <= 1e-5 * scale, "{kern:?} dist");
                }
            }
        }
    }

    #[test]
    fn ties_go_to_the_lowest_id() {
        let cents = vec![1.0f32; 20 * 3];
        let t = NearestTable::new(&cents, 3, Metric::L2);
        for kern in Kernel::available() {
            let (mut ids, mut d) = (vec![9u32; 5], vec![0f32; 5]);
            t.nearest_with(kern, &[1.0; 15], &mut ids, &mut d);
            assert_eq!(ids, vec![0; 5]);
            assert_eq!(d, vec![0.0; 5]);
        }
    }
}
