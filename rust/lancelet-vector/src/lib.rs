//! Lance vector indexes: distance kernels, k-means, product and scalar quantizers, and the
//! IVF index files pylance 14 writes (`index.idx` + `auxiliary.idx`).
//!
//! The crate knows nothing about datasets, manifests or Python. The dataset layer converts a
//! vector column to `f32` rows with [`distance::to_f32`], trains a model on a sample with
//! [`ivf::train_model`], encodes rows into index files with [`ivf::build`] and records
//! [`ivf::details`] in its manifest. Searches open the files again with
//! [`ivf::IvfIndex::open`] over a [`lancelet_index::scalar::IndexStore`]. Builder and reader
//! meet only through bytes, so every read-back test checks the on-disk format.
//!
//! - [`distance`]: distance kernels and the conversion of Arrow vector columns.
//! - [`topk`]: the k best `(distance, row address)` pairs in pylance's order.
//! - [`simd`]: kernel dispatch (scalar / AVX2+FMA) and batched nearest-centroid search.
//! - [`kmeans`]: seeded, thread-count independent k-means.
//! - [`pq`], [`sq`]: product and scalar quantizers.
//! - [`proto`]: the protobuf messages of the index files and manifest details.
//! - [`hnsw`]: seeded HNSW graphs per partition, in pylance's row layout.
//! - [`ivf`]: index types, build parameters, training, the file format and search.

pub mod distance;
pub mod hnsw;
pub mod ivf;
pub mod kmeans;
pub mod pq;
pub mod proto;
pub mod rng;
pub mod simd;
pub mod sq;
pub mod topk;

pub use lancelet_index::{Error, Result};
pub use topk::TopK;

/// A distance function between vectors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Metric {
    /// Squared Euclidean distance.
    L2,
    /// `1 - cos(q, v)`.
    Cosine,
    /// Negative inner product.
    Dot,
    /// Number of differing bits (vectors of bytes).
    Hamming,
}

impl Metric {
    /// Every metric, in protobuf enum order.
    pub const ALL: [Metric; 4] = [Metric::L2, Metric::Cosine, Metric::Dot, Metric::Hamming];

    /// Parses a metric name as pylance accepts it (case-insensitive; `euclidean` = `l2`).
    pub fn parse(s: &str) -> Result<Self> {
        match s.to_ascii_lowercase().as_str() {
            "l2" | "euclidean" => Ok(Self::L2),
            "cosine" => Ok(Self::Cosine),
            "dot" => Ok(Self::Dot),
            "hamming" => Ok(Self::Hamming),
            other => Err(Error::InvalidArgument(format!(
                "unknown metric {other:?} (expected l2, euclidean, cosine, dot or hamming)"
            ))),
        }
    }

    /// The name written in index files (`distance_type`) and statistics.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::L2 => "l2",
            Self::Cosine => "cosine",
            Self::Dot => "dot",
            Self::Hamming => "hamming",
        }
    }

    /// The value of the `MetricType` protobuf enum.
    pub fn proto_value(self) -> i32 {
        match self {
            Self::L2 => 0,
            Self::Cosine => 1,
            Self::Dot => 2,
            Self::Hamming => 3,
        }
    }

    /// The metric of a `MetricType` protobuf enum value.
    pub fn from_proto(v: i32) -> Result<Self> {
        Self::ALL
            .into_iter()
            .find(|m| m.proto_value() == v)
            .ok_or_else(|| Error::InvalidArgument(format!("unknown metric enum value {v}")))
    }
}

impl std::fmt::Display for Metric {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metric_round_trips() {
        for m in Metric::ALL {
            assert_eq!(Metric::parse(m.as_str()).unwrap(), m);
            assert_eq!(Metric::parse(&m.as_str().to_uppercase()).unwrap(), m);
            assert_eq!(Metric::from_proto(m.proto_value()).unwrap(), m);
        }
        assert_eq!(Metric::parse("Euclidean").unwrap(), Metric::L2);
        assert!(Metric::parse("manhattan").is_err());
        assert!(Metric::from_proto(9).is_err());
    }
}
