//! Product quantization: `m` sub-vectors, each replaced by the id of the nearest of
//! `2^num_bits` sub-centroids; distances are computed asymmetrically (ADC) from a per-query
//! table.
//!
//! Codebook memory order is `[m][2^num_bits][dim/m]`, as pylance stores it. Stored codes are
//! packed per row (one byte per sub-vector for 8 bits; for 4 bits sub-vector `2j` in the low
//! nibble of byte `j` and `2j+1` in the high nibble) and then transposed per partition by
//! [`transpose`] (all first bytes of the partition's rows, then all second bytes, ...).

use crate::distance::{dot_raw, l2_raw};
use crate::kmeans::{self, KMeansParams};
use crate::simd::NearestTable;
use crate::{Error, Metric, Result};

/// Training parameters of a [`ProductQuantizer`].
#[derive(Debug, Clone)]
pub struct PqParams {
    /// Number of sub-vectors `m` (must divide the dimension).
    pub num_sub_vectors: usize,
    /// Bits per code: 8 or 4.
    pub num_bits: u32,
    /// k-means iterations per sub-vector.
    pub max_iters: usize,
    /// Seed; sub-vector `j` trains with `seed + j`.
    pub seed: u64,
    /// Worker threads (0 = available parallelism).
    pub threads: usize,
}

/// A trained product quantizer.
#[derive(Debug, Clone, PartialEq)]
pub struct ProductQuantizer {
    /// Number of sub-vectors `m`.
    pub num_sub_vectors: usize,
    /// Bits per code (8 or 4).
    pub num_bits: u32,
    /// Vector dimension.
    pub dim: usize,
    /// Sub-centroids in `[m][2^num_bits][dim/m]` order.
    pub codebook: Vec<f32>,
}

impl ProductQuantizer {
    /// A quantizer from its parts, checked for consistency.
    pub fn new(dim: usize, num_sub_vectors: usize, num_bits: u32, codebook: Vec<f32>) -> Result<Self> {
        if num_bits != 8 && num_bits != 4 {
            return Err(Error::InvalidArgument(format!(
                "PQ num_bits must be 4 or 8, not {num_bits}"
            )));
        }
        if num_sub_vectors == 0 || dim == 0 || !dim.is_multiple_of(num_sub_vectors) {
            return Err(Error::InvalidArgument(format!(
                "dimension {dim} must be divisible by num_sub_vectors {num_sub_vectors}"
            )));
        }
        if num_bits == 4 && !num_sub_vectors.is_multiple_of(2) {
            return Err(Error::InvalidArgument("4-bit PQ needs an even num_sub_vectors".into()));
        }
        let want = (1usize << num_bits) * dim;
        if codebook.len() != want {
            return Err(Error::InvalidArgument(format!(
                "PQ codebook has {} values, expected {want}",
                codebook.len()
            )));
        }
        Ok(Self {
            num_sub_vectors,
            num_bits,
            dim,
            codebook,
        })
    }

    /// Trains one k-means of `2^num_bits` centroids per sub-vector on the rows of `data`.
    pub fn train(data: &[f32], dim: usize, params: &PqParams) -> Result<Self> {
        let m = params.num_sub_vectors;
        Self::new(dim, m, params.num_bits, vec![0.0; (1usize << params.num_bits) * dim])?;
        let n = data.len() / dim;
        let ds = dim / m;
        let k = 1usize << params.num_bits;
        let mut codebook = Vec::with_capacity(k * dim);
        for j in 0..m {
            let sub: Vec<f32> = (0..n)
                .flat_map(|i| data[i * dim + j * ds..i * dim + (j + 1) * ds].to_vec())
                .collect();
            let mut p = KMeansParams::new(k);
            p.max_iters = params.max_iters;
            p.seed = params.seed.wrapping_add(j as u64);
            p.threads = params.threads;
            let km = kmeans::train(&sub, ds, &p)?;
            codebook.extend_from_slice(&km.centroids);
        }
        Self::new(dim, m, params.num_bits, codebook)
    }

    /// Sub-vector dimension.
    pub fn sub_dim(&self) -> usize {
        self.dim / self.num_sub_vectors
    }

    /// Centroids per sub-vector.
    pub fn num_centroids(&self) -> usize {
        1 << self.num_bits
    }

    /// Bytes per stored row.
    pub fn code_width(&self) -> usize {
        if self.num_bits == 4 {
            self.num_sub_vectors / 2
        } else {
            self.num_sub_vectors
        }
    }

    fn centroid(&self, j: usize, c: usize) -> &[f32] {
        let ds = self.sub_dim();
        let at = (j * self.num_centroids() + c) * ds;
        &self.codebook[at..at + ds]
    }

    /// The code (one value per sub-vector) of one vector.
    pub fn encode_row(&self, v: &[f32]) -> Vec<u8> {
        let ds = self.sub_dim();
        (0..self.num_sub_vectors)
            .map(|j| {
                let sub = &v[j * ds..(j + 1) * ds];
                let mut best = (0usize, f32::INFINITY);
                for c in 0..self.num_centroids() {
                    let d = l2_raw(sub, self.centroid(j, c));
                    if d < best.1 {
                        best = (c, d);
                    }
                }
                best.0 as u8
            })
            .collect()
    }

    /// Packs one row's codes into its stored bytes.
    pub fn pack(&self, codes: &[u8]) -> Vec<u8> {
        if self.num_bits == 4 {
            codes
                .chunks(2)
                .map(|p| (p[0] & 15) | (p.get(1).copied().unwrap_or(0) << 4))
                .collect()
        } else {
            codes.to_vec()
        }
    }

    /// Unpacks one row's stored bytes into one code per sub-vector.
    pub fn unpack(&self, bytes: &[u8]) -> Vec<u8> {
        if self.num_bits == 4 {
            bytes.iter().flat_map(|b| [b & 15, b >> 4]).collect()
        } else {
            bytes.to_vec()
        }
    }

    /// Stored (packed, untransposed) bytes of every row of `vectors`.
    pub fn encode(&self, vectors: &[f32]) -> Result<Vec<u8>> {
        if !vectors.len().is_multiple_of(self.dim) {
            return Err(Error::InvalidArgument(format!(
                "{} values are not rows of dimension {}",
                vectors.len(),
                self.dim
            )));
        }
        let (dim, m, ds) = (self.dim, self.num_sub_vectors, self.sub_dim());
        let k = self.num_centroids();
        let tables: Vec<NearestTable> = (0..m)
            .map(|j| NearestTable::new(&self.codebook[j * k * ds..(j + 1) * k * ds], ds, Metric::L2))
            .collect();
        let encode_range = |r: std::ops::Range<usize>| {
            // Blocks of rows; sub-vector j of every row in a block is gathered so that one
            // batched nearest-centroid search per j covers the block.
            const ROWS: usize = 512;
            let mut out = Vec::with_capacity(r.len() * self.code_width());
            let mut sub = vec![0f32; ROWS * ds];
            let (mut ids, mut dists) = (vec![0u32; ROWS], vec![0f32; ROWS]);
            let mut codes = vec![0u8; ROWS * m];
            let mut start = r.start;
            while start < r.end {
                let n = (r.end - start).min(ROWS);
                for (j, table) in tables.iter().enumerate() {
                    for (i, s) in sub[..n * ds].chunks_exact_mut(ds).enumerate() {
                        let at = (start + i) * dim + j * ds;
                        s.copy_from_slice(&vectors[at..at + ds]);
                    }
                    table.nearest_into(&sub[..n * ds], &mut ids[..n], &mut dists[..n]);
                    for (i, &c) in ids[..n].iter().enumerate() {
                        codes[i * m + j] = c as u8;
                    }
                }
                if self.num_bits == 4 {
                    out.extend(codes[..n * m].chunks_exact(m).flat_map(|c| self.pack(c)));
                } else {
                    out.extend_from_slice(&codes[..n * m]);
                }
                start += n;
            }
            out
        };
        let rows = vectors.len() / dim;
        let packed = kmeans::par_rows(rows, 0, encode_range);
        Ok(if packed.len() == rows * self.code_width() {
            packed
        } else {
            encode_range(0..rows)
        })
    }

    /// The reconstruction of one row's codes (one value per sub-vector).
    pub fn decode_row(&self, codes: &[u8]) -> Vec<f32> {
        codes
            .iter()
            .enumerate()
            .flat_map(|(j, &c)| self.centroid(j, usize::from(c)).to_vec())
            .collect()
    }

    /// The ADC table of a query (already residualised / normalised as the index requires):
    /// `[m][2^num_bits]` squared L2 distances, or negative inner products for `Dot`.
    pub fn build_table(&self, query: &[f32], metric: Metric) -> Vec<f32> {
        let ds = self.sub_dim();
        let mut out = Vec::with_capacity(self.num_sub_vectors * self.num_centroids());
        for j in 0..self.num_sub_vectors {
            let q = &query[j * ds..(j + 1) * ds];
            for c in 0..self.num_centroids() {
                let cent = self.centroid(j, c);
                out.push(match metric {
                    Metric::Dot => -dot_raw(q, cent),
                    _ => l2_raw(q, cent),
                });
            }
        }
        out
    }

    /// The approximate distance of one row from its codes (one per sub-vector).
    #[inline]
    pub fn adc(&self, table: &[f32], codes: &[u8]) -> f32 {
        let k = self.num_centroids();
        codes
            .iter()
            .enumerate()
            .map(|(j, &c)| table[j * k + usize::from(c)])
            .sum()
    }
}

/// Transposes a row-major byte matrix of `rows` rows of `width` bytes into column-major.
pub fn transpose(bytes: &[u8], rows: usize, width: usize) -> Vec<u8> {
    let mut out = vec![0u8; rows * width];
    for i in 0..rows {
        for j in 0..width {
            out[j * rows + i] = bytes[i * width + j];
        }
    }
    out
}

/// Inverse of [`transpose`].
pub fn untranspose(bytes: &[u8], rows: usize, width: usize) -> Vec<u8> {
    let mut out = vec![0u8; rows * width];
    for i in 0..rows {
        for j in 0..width {
            out[i * width + j] = bytes[j * rows + i];
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::rng::Rng;

    fn data(n: usize, dim: usize) -> Vec<f32> {
        let mut r = Rng::new(3);
        (0..n * dim).map(|_| r.unit() as f32 * 4.0 - 2.0).collect()
    }

    #[test]
    fn adc_equals_distance_to_reconstruction() {
        for bits in [8, 4] {
            let d = data(600, 8);
            let p = PqParams {
                num_sub_vectors: 4,
                num_bits: bits,
                max_iters: 10,
                seed: 1,
                threads: 2,
            };
            let pq = ProductQuantizer::train(&d, 8, &p).unwrap();
            let q = &d[..8];
            let table = pq.build_table(q, Metric::L2);
            let stored = pq.encode(&d).unwrap();
            assert_eq!(stored.len(), 600 * pq.code_width());
            for i in 0..50 {
                let codes = pq.unpack(&stored[i * pq.code_width()..(i + 1) * pq.code_width()]);
                let rec = pq.decode_row(&codes);
                let want = l2_raw(q, &rec);
                assert!((pq.adc(&table, &codes) - want).abs() < 1e-4);
                // Encoding picks the nearest sub-centroid, so reconstruction error is small.
                assert!(l2_raw(&d[i * 8..(i + 1) * 8], &rec) < 8.0);
            }
        }
    }

    #[test]
    fn rejects_bad_shapes() {
        assert!(ProductQuantizer::new(8, 3, 8, vec![0.0; 256 * 8]).is_err());
        assert!(ProductQuantizer::new(8, 4, 5, vec![]).is_err());
        assert!(ProductQuantizer::new(8, 4, 8, vec![0.0; 10]).is_err());
        assert!(ProductQuantizer::new(6, 3, 4, vec![0.0; 16 * 6]).is_err());
    }

    proptest! {
        #[test]
        fn transpose_round_trips(rows in 0usize..20, width in 1usize..6) {
            let b: Vec<u8> = (0..rows * width).map(|i| i as u8).collect();
            let t = transpose(&b, rows, width);
            prop_assert_eq!(untranspose(&t, rows, width), b);
        }
    }
}
