//! Distance kernels over `f32` vectors, their batch form, and the conversion of Arrow vector
//! columns to `f32` rows.
//!
//! The pair kernels dispatch through [`crate::simd`] (lane-unrolled scalar loops or AVX2+FMA,
//! chosen once per process); a scalar `f64` reference in the tests checks them on awkward
//! lengths.
//! Conventions, as pylance's `_distance`: L2 is *squared*, cosine is `1 - cos`, dot is
//! `-q·v`. Hamming counts differing bits of byte vectors (given as `f32` values of bytes in
//! the batch form).

use arrow_array::cast::AsArray;
use arrow_array::types::{Float16Type, Float32Type, Float64Type, UInt8Type};
use arrow_array::Array;
use arrow_schema::DataType;

use crate::{simd, Error, Metric, Result};

fn check_len(a: usize, b: usize) -> Result<()> {
    if a == b {
        Ok(())
    } else {
        Err(Error::InvalidArgument(format!("vector lengths differ: {a} vs {b}")))
    }
}

/// Squared L2 distance; equal lengths are the caller's duty (unchecked hot path).
#[inline]
pub(crate) fn l2_raw(a: &[f32], b: &[f32]) -> f32 {
    simd::l2_with(simd::kernel(), a, b)
}

/// Inner product; equal lengths are the caller's duty (unchecked hot path).
#[inline]
pub(crate) fn dot_raw(a: &[f32], b: &[f32]) -> f32 {
    simd::dot_with(simd::kernel(), a, b)
}

/// `1 - cos` given the norm of `a`; a zero vector has distance 1.
#[inline]
pub(crate) fn cosine_raw(a: &[f32], a_norm: f32, b: &[f32]) -> f32 {
    let bn = dot_raw(b, b).sqrt();
    let denom = a_norm * bn;
    if denom == 0.0 {
        1.0
    } else {
        1.0 - dot_raw(a, b) / denom
    }
}

#[inline]
fn hamming_f32(a: &[f32], b: &[f32]) -> f32 {
    a.iter()
        .zip(b)
        .map(|(x, y)| ((*x as u8) ^ (*y as u8)).count_ones())
        .sum::<u32>() as f32
}

/// Squared L2 distance.
pub fn l2_sq(a: &[f32], b: &[f32]) -> Result<f32> {
    check_len(a.len(), b.len())?;
    Ok(l2_raw(a, b))
}

/// Inner product `a·b`.
pub fn dot(a: &[f32], b: &[f32]) -> Result<f32> {
    check_len(a.len(), b.len())?;
    Ok(dot_raw(a, b))
}

/// Cosine distance `1 - cos(a, b)` (1 when either vector is zero).
pub fn cosine_distance(a: &[f32], b: &[f32]) -> Result<f32> {
    check_len(a.len(), b.len())?;
    Ok(cosine_raw(a, norm(a), b))
}

/// Number of differing bits of two byte vectors.
pub fn hamming(a: &[u8], b: &[u8]) -> Result<f32> {
    check_len(a.len(), b.len())?;
    Ok(a.iter().zip(b).map(|(x, y)| (x ^ y).count_ones()).sum::<u32>() as f32)
}

/// Euclidean norm.
pub fn norm(v: &[f32]) -> f32 {
    dot_raw(v, v).sqrt()
}

/// Scales `v` to unit length (a zero vector is left unchanged).
pub fn normalize(v: &mut [f32]) {
    let n = norm(v);
    if n > 0.0 {
        v.iter_mut().for_each(|x| *x /= n);
    }
}

/// Every row of a row-major matrix scaled to unit length.
pub fn normalize_rows(data: &mut [f32], dim: usize) {
    if dim > 0 {
        data.chunks_exact_mut(dim).for_each(normalize);
    }
}

/// The exact distance of one pair under `metric`, as pylance's flat search reports it.
pub fn distance(metric: Metric, a: &[f32], b: &[f32]) -> Result<f32> {
    check_len(a.len(), b.len())?;
    Ok(match metric {
        Metric::L2 => l2_raw(a, b),
        Metric::Cosine => cosine_raw(a, norm(a), b),
        Metric::Dot => -dot_raw(a, b),
        Metric::Hamming => hamming_f32(a, b),
    })
}

/// Distances from `query` to each row of `vectors` (row-major, `out.len()` rows of
/// `query.len()` values) into `out`.
pub fn distances(metric: Metric, query: &[f32], vectors: &[f32], out: &mut [f32]) -> Result<()> {
    let dim = query.len();
    if vectors.len() != out.len().saturating_mul(dim) {
        return Err(Error::InvalidArgument(format!(
            "{} values are not {} rows of dimension {dim}",
            vectors.len(),
            out.len()
        )));
    }
    if dim == 0 {
        out.fill(0.0);
        return Ok(());
    }
    let rows = vectors.chunks_exact(dim).zip(out.iter_mut());
    match metric {
        Metric::L2 => rows.for_each(|(v, o)| *o = l2_raw(query, v)),
        Metric::Cosine => {
            let qn = norm(query);
            rows.for_each(|(v, o)| *o = cosine_raw(query, qn, v));
        }
        Metric::Dot => rows.for_each(|(v, o)| *o = -dot_raw(query, v)),
        Metric::Hamming => rows.for_each(|(v, o)| *o = hamming_f32(query, v)),
    }
    Ok(())
}

/// The values of a `FixedSizeList<Float16 | Float32 | Float64 | UInt8>` column as row-major
/// `f32` rows, and the dimension. Null vectors (or null values) are an error: the caller
/// leaves such rows out of the index.
pub fn to_f32(array: &dyn Array) -> Result<(Vec<f32>, usize)> {
    let list = array.as_fixed_size_list_opt().ok_or_else(|| {
        Error::InvalidArgument(format!("vectors must be a fixed-size list, not {}", array.data_type()))
    })?;
    if list.null_count() > 0 {
        return Err(Error::InvalidArgument("null vectors cannot be indexed".into()));
    }
    let dim = usize::try_from(list.value_length())
        .map_err(|_| Error::InvalidArgument("negative fixed-size list length".into()))?;
    let start = list.offset() * dim;
    let values = list.values().slice(start, list.len() * dim);
    if values.null_count() > 0 {
        return Err(Error::InvalidArgument("vectors hold null values".into()));
    }
    let out: Vec<f32> = match values.data_type() {
        DataType::Float16 => values
            .as_primitive::<Float16Type>()
            .values()
            .iter()
            .map(|v| v.to_f32())
            .collect(),
        DataType::Float32 => values.as_primitive::<Float32Type>().values().to_vec(),
        DataType::Float64 => values
            .as_primitive::<Float64Type>()
            .values()
            .iter()
            .map(|v| *v as f32)
            .collect(),
        DataType::UInt8 => values
            .as_primitive::<UInt8Type>()
            .values()
            .iter()
            .map(|v| f32::from(*v))
            .collect(),
        other => {
            return Err(Error::InvalidArgument(format!(
                "vector values must be float16, float32, float64 or uint8, not {other}"
            )))
        }
    };
    Ok((out, dim))
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::{FixedSizeListArray, Float64Array, UInt8Array};
    use arrow_schema::Field;
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
    fn ref_cos(a: &[f32], b: &[f32]) -> f64 {
        let d = ref_dot(a, a).sqrt() * ref_dot(b, b).sqrt();
        if d == 0.0 {
            1.0
        } else {
            1.0 - ref_dot(a, b) / d
        }
    }
    /// Relative closeness scaled by the sum of magnitudes (cancellation-safe).
    fn close(got: f32, want: f64, scale: f64) {
        let tol = 1e-5 * scale.max(1.0);
        assert!(
            (f64::from(got) - want).abs() <= tol,
            "got {got}, want {want}, tol {tol}"
        );
    }

    fn pair() -> impl Strategy<Value = (Vec<f32>, Vec<f32>)> {
        prop_oneof![
            Just(0usize),
            Just(1),
            Just(7),
            Just(8),
            Just(9),
            Just(4096),
            0usize..100
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
        fn kernels_match_reference((a, b) in pair()) {
            let mag: f64 = a.iter().zip(&b).map(|(x, y)| f64::from(x.abs()) * f64::from(y.abs())).sum();
            let sq: f64 = a.iter().zip(&b).map(|(x, y)| (f64::from(*x).abs() + f64::from(*y).abs()).powi(2)).sum();
            close(l2_sq(&a, &b).unwrap(), ref_l2(&a, &b), sq);
            close(dot(&a, &b).unwrap(), ref_dot(&a, &b), mag);
            let c = cosine_distance(&a, &b).unwrap();
            prop_assert!((f64::from(c) - ref_cos(&a, &b)).abs() < 1e-3);
            let mut out = vec![0f32; 1];
            distances(Metric::L2, &a, &b, &mut out).unwrap();
            prop_assert_eq!(out[0], l2_sq(&a, &b).unwrap());
            distances(Metric::Dot, &a, &b, &mut out).unwrap();
            prop_assert_eq!(out[0], -dot(&a, &b).unwrap());
        }

        #[test]
        fn hamming_counts_bits(a in prop::collection::vec(any::<u8>(), 0..64)) {
            let b: Vec<u8> = a.iter().map(|x| x.rotate_left(3)).collect();
            let want: u32 = a.iter().zip(&b).map(|(x, y)| (x ^ y).count_ones()).sum();
            prop_assert_eq!(hamming(&a, &b).unwrap(), want as f32);
            let af: Vec<f32> = a.iter().map(|x| f32::from(*x)).collect();
            let bf: Vec<f32> = b.iter().map(|x| f32::from(*x)).collect();
            prop_assert_eq!(distance(Metric::Hamming, &af, &bf).unwrap(), want as f32);
        }
    }

    #[test]
    fn length_mismatch_is_an_error() {
        assert!(l2_sq(&[1.0], &[1.0, 2.0]).is_err());
        assert!(distances(Metric::L2, &[1.0, 2.0], &[1.0, 2.0, 3.0], &mut [0.0]).is_err());
        assert_eq!(cosine_distance(&[0.0, 0.0], &[1.0, 0.0]).unwrap(), 1.0);
    }

    #[test]
    fn converts_columns() {
        let item = Arc::new(Field::new("item", DataType::Float64, true));
        let fsl =
            FixedSizeListArray::try_new(item, 2, Arc::new(Float64Array::from(vec![1.0, 2.0, 3.0, 4.0])), None).unwrap();
        let (v, dim) = to_f32(&fsl.slice(1, 1)).unwrap();
        assert_eq!((v, dim), (vec![3.0, 4.0], 2));
        let item = Arc::new(Field::new("item", DataType::UInt8, true));
        let fsl = FixedSizeListArray::try_new(item, 1, Arc::new(UInt8Array::from(vec![7u8])), None).unwrap();
        assert_eq!(to_f32(&fsl).unwrap(), (vec![7.0], 1));
        assert!(to_f32(&Float64Array::from(vec![1.0])).is_err());
    }
}
