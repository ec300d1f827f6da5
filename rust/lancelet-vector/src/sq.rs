//! 8-bit scalar quantization with one global range `[start, end]`.
//!
//! `code = floor((x - start) / (end - start) * 255)` clipped to `0..=255`. pylance computes
//! L2 (and cosine, on unit vectors) distances between the *quantized* query and the codes,
//! scaled back by `((end - start) / 255)^2`; dot products use the raw query against the
//! dequantized codes. [`ScalarQuantizer::distance`] follows those rules.

use crate::{Error, Metric, Result};

/// A scalar quantizer.
#[derive(Debug, Clone, PartialEq)]
pub struct ScalarQuantizer {
    /// Vector dimension.
    pub dim: usize,
    /// Bits per value (8).
    pub num_bits: u32,
    /// Lower bound of the range.
    pub start: f64,
    /// Upper bound of the range.
    pub end: f64,
}

/// A query prepared for [`ScalarQuantizer::distance`].
#[derive(Debug, Clone)]
pub struct SqQuery {
    metric: Metric,
    raw: Vec<f32>,
    codes: Vec<f32>,
}

impl ScalarQuantizer {
    /// A quantizer with bounds = the global min / max of `vectors`.
    pub fn train(vectors: &[f32], dim: usize) -> Result<Self> {
        if dim == 0 || vectors.is_empty() || !vectors.len().is_multiple_of(dim) {
            return Err(Error::InvalidArgument("SQ training needs at least one vector".into()));
        }
        let (mut lo, mut hi) = (f32::INFINITY, f32::NEG_INFINITY);
        for &x in vectors.iter().filter(|x| x.is_finite()) {
            lo = lo.min(x);
            hi = hi.max(x);
        }
        if lo > hi {
            (lo, hi) = (0.0, 0.0);
        }
        Ok(Self {
            dim,
            num_bits: 8,
            start: f64::from(lo),
            end: f64::from(hi),
        })
    }

    fn quantize(&self, x: f32) -> u8 {
        let width = self.end - self.start;
        if width <= 0.0 || !x.is_finite() {
            return 0;
        }
        ((f64::from(x) - self.start) / width * 255.0).floor().clamp(0.0, 255.0) as u8
    }

    /// One byte per value of `vectors`.
    pub fn encode(&self, vectors: &[f32]) -> Vec<u8> {
        vectors.iter().map(|&x| self.quantize(x)).collect()
    }

    /// The value a code stands for.
    pub fn dequantize(&self, code: u8) -> f32 {
        (self.start + f64::from(code) * (self.end - self.start) / 255.0) as f32
    }

    /// Prepares a query (already normalised for cosine).
    pub fn prepare(&self, query: &[f32], metric: Metric) -> SqQuery {
        SqQuery {
            metric,
            raw: query.to_vec(),
            codes: query.iter().map(|&x| f32::from(self.quantize(x))).collect(),
        }
    }

    /// The index distance of one stored row: squared L2 in code space scaled back to value
    /// space (L2, cosine), or `-q·dequant(v)` (dot; the caller adds pylance's offset).
    pub fn distance(&self, q: &SqQuery, codes: &[u8]) -> f32 {
        match q.metric {
            Metric::Dot => -q
                .raw
                .iter()
                .zip(codes)
                .map(|(x, &c)| x * self.dequantize(c))
                .sum::<f32>(),
            _ => {
                let step = ((self.end - self.start) / 255.0) as f32;
                let s: f32 = q
                    .codes
                    .iter()
                    .zip(codes)
                    .map(|(a, &c)| {
                        let d = a - f32::from(c);
                        d * d
                    })
                    .sum();
                s * step * step
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_follow_floor_rule() {
        let sq = ScalarQuantizer::train(&[-1.0, 1.0, 0.0, 0.5], 2).unwrap();
        assert_eq!((sq.start, sq.end), (-1.0, 1.0));
        assert_eq!(sq.encode(&[-1.0, 1.0, 0.0, 2.0, -3.0]), vec![0, 255, 127, 255, 0]);
        assert!((sq.dequantize(255) - 1.0).abs() < 1e-6);
        let q = sq.prepare(&[1.0, -1.0], Metric::L2);
        assert!((sq.distance(&q, &[255, 0]) - 0.0).abs() < 1e-6);
        assert!((sq.distance(&q, &[0, 0]) - 4.0).abs() < 1e-4);
        let flat = ScalarQuantizer::train(&[2.0, 2.0], 2).unwrap();
        assert_eq!(flat.encode(&[2.0, 5.0]), vec![0, 0]);
        assert!(ScalarQuantizer::train(&[], 2).is_err());
    }
}
