//! Protobuf messages of vector index files and manifest details, declared by hand with
//! `prost` derives (field numbers as pylance 14 writes them).
//!
//! - [`Ivf`] (`lance.index.pb.IVF`): global buffer 1 of `index.idx` and `auxiliary.idx`.
//! - [`Tensor`] (`lance.index.pb.Tensor`): IVF centroids and the PQ codebook.
//! - [`VectorIndexDetails`] (`lance.index.pb.VectorIndexDetails`): the manifest's
//!   `index_details` value.

use std::collections::BTreeMap;

/// `Tensor.data_type` value of `float16`.
pub const TENSOR_FLOAT16: i32 = 1;
/// `Tensor.data_type` value of `float32`.
pub const TENSOR_FLOAT32: i32 = 2;
/// `Tensor.data_type` value of `float64`.
pub const TENSOR_FLOAT64: i32 = 3;
/// `Tensor.data_type` value of `uint8`.
pub const TENSOR_UINT8: i32 = 4;

/// A dense array: element type, shape and little-endian data.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Tensor {
    /// Element type (see the `TENSOR_*` constants).
    #[prost(int32, tag = "1")]
    pub data_type: i32,
    /// Shape.
    #[prost(uint32, repeated, tag = "2")]
    pub shape: Vec<u32>,
    /// Raw little-endian values.
    #[prost(bytes = "vec", tag = "3")]
    pub data: Vec<u8>,
}

/// The IVF model and the partition layout of one file.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Ivf {
    /// Deprecated inline centroids (never written).
    #[prost(float, repeated, tag = "1")]
    pub centroids: Vec<f32>,
    /// First row of each partition in the file.
    #[prost(uint64, repeated, tag = "2")]
    pub offsets: Vec<u64>,
    /// Rows of each partition in the file.
    #[prost(uint32, repeated, tag = "3")]
    pub lengths: Vec<u32>,
    /// Centroids `[num_partitions, dim]`.
    #[prost(message, optional, tag = "4")]
    pub centroids_tensor: Option<Tensor>,
    /// k-means loss.
    #[prost(double, optional, tag = "5")]
    pub loss: Option<f64>,
}

/// HNSW parameters in [`VectorIndexDetails`].
#[derive(Clone, PartialEq, prost::Message)]
pub struct HnswDetails {
    /// Neighbours per node (`m`).
    #[prost(uint32, tag = "1")]
    pub max_connections: u32,
    /// Candidate list size while building.
    #[prost(uint32, tag = "2")]
    pub construction_ef: u32,
    /// Highest level.
    #[prost(uint32, tag = "3")]
    pub max_level: u32,
}

/// PQ compression parameters.
#[derive(Clone, PartialEq, prost::Message)]
pub struct PqDetails {
    /// Bits per code.
    #[prost(uint32, tag = "1")]
    pub num_bits: u32,
    /// Number of sub-vectors.
    #[prost(uint32, tag = "2")]
    pub num_sub_vectors: u32,
}

/// SQ compression parameters.
#[derive(Clone, PartialEq, prost::Message)]
pub struct SqDetails {
    /// Bits per value.
    #[prost(uint32, tag = "1")]
    pub num_bits: u32,
}

/// RaBitQ compression parameters.
#[derive(Clone, PartialEq, prost::Message)]
pub struct RqDetails {
    /// Bits per dimension.
    #[prost(uint32, tag = "1")]
    pub num_bits: u32,
}

/// No compression (FLAT storage).
#[derive(Clone, PartialEq, prost::Message)]
pub struct FlatDetails {}

/// The storage of the vectors.
#[derive(Clone, PartialEq, prost::Oneof)]
pub enum Compression {
    /// Product quantization.
    #[prost(message, tag = "4")]
    Pq(PqDetails),
    /// Scalar quantization.
    #[prost(message, tag = "5")]
    Sq(SqDetails),
    /// RaBitQ.
    #[prost(message, tag = "6")]
    Rq(RqDetails),
    /// Raw vectors.
    #[prost(message, tag = "8")]
    Flat(FlatDetails),
}

/// The `index_details` of a vector index in the manifest.
#[derive(Clone, PartialEq, prost::Message)]
pub struct VectorIndexDetails {
    /// `MetricType` enum (L2 0, Cosine 1, Dot 2, Hamming 3).
    #[prost(int32, tag = "1")]
    pub metric_type: i32,
    /// Target partition size, when the user gave one.
    #[prost(uint64, optional, tag = "2")]
    pub target_partition_size: Option<u64>,
    /// HNSW parameters (IVF_HNSW_* only).
    #[prost(message, optional, tag = "3")]
    pub hnsw: Option<HnswDetails>,
    /// Vector storage.
    #[prost(oneof = "Compression", tags = "4, 5, 6, 8")]
    pub compression: Option<Compression>,
    /// Informational build hints.
    #[prost(btree_map = "string, string", tag = "9")]
    pub runtime_hints: BTreeMap<String, String>,
}
