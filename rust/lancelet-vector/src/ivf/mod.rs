//! IVF vector indexes: index types, build parameters, model training, and (in submodules)
//! the on-disk format and search.
//!
//! A build is split in two so that the dataset layer can train once on a sample and encode
//! fragments separately: [`train_model`] clusters a sample into partitions and trains the
//! quantizer (PQ / SQ) on it; [`build`] assigns rows to partitions, encodes them and writes
//! `auxiliary.idx` and `index.idx` as pylance 14 lays them out. [`IvfIndex`] reads those
//! files (ours or pylance's) and searches them.
//!
//! Residual rules (what the quantizer sees): L2 encodes `x - C[p]`, cosine normalises first
//! and encodes `x/|x| - C[p]`, dot encodes the raw `x`. FLAT storage keeps raw vectors
//! (unit-normalised for cosine); SQ quantizes the (normalised for cosine) vector itself.

mod read;
mod write;

pub use read::{IvfIndex, AUX_FILE, INDEX_FILE};
pub use write::build;

use prost::Message;

use crate::distance::{l2_raw, normalize_rows};
use crate::kmeans::{self, KMeansParams};
use crate::pq::{PqParams, ProductQuantizer};
use crate::proto::{self, Compression, VectorIndexDetails};
use crate::rng::Rng;
use crate::sq::ScalarQuantizer;
use crate::{Error, Metric, Result};

/// `type_url` of [`details`] in the manifest's `index_details`.
pub const DETAILS_TYPE_URL: &str = "/lance.index.pb.VectorIndexDetails";
/// `index_version` recorded in the manifest for IVF indexes we write.
pub const INDEX_VERSION: i32 = 1;

/// The vector index types pylance 14 knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum VectorIndexType {
    /// IVF with raw vectors.
    IvfFlat,
    /// IVF with product-quantized residuals.
    IvfPq,
    /// IVF with scalar-quantized vectors.
    IvfSq,
    /// IVF, HNSW per partition, SQ storage.
    IvfHnswSq,
    /// IVF, HNSW per partition, PQ storage.
    IvfHnswPq,
    /// IVF, HNSW per partition, raw vectors.
    IvfHnswFlat,
    /// IVF with RaBitQ storage.
    IvfRq,
}

/// How the vectors of an index are stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Storage {
    /// Raw `f32` vectors.
    Flat,
    /// Product-quantized codes.
    Pq,
    /// Scalar-quantized codes.
    Sq,
    /// RaBitQ codes.
    Rq,
}

impl VectorIndexType {
    /// Every type.
    pub const ALL: [VectorIndexType; 7] = [
        Self::IvfFlat,
        Self::IvfPq,
        Self::IvfSq,
        Self::IvfHnswSq,
        Self::IvfHnswPq,
        Self::IvfHnswFlat,
        Self::IvfRq,
    ];

    /// pylance's name (`IVF_PQ`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Self::IvfFlat => "IVF_FLAT",
            Self::IvfPq => "IVF_PQ",
            Self::IvfSq => "IVF_SQ",
            Self::IvfHnswSq => "IVF_HNSW_SQ",
            Self::IvfHnswPq => "IVF_HNSW_PQ",
            Self::IvfHnswFlat => "IVF_HNSW_FLAT",
            Self::IvfRq => "IVF_RQ",
        }
    }

    /// Parses a name (case-insensitive).
    pub fn parse(s: &str) -> Result<Self> {
        let up = s.to_ascii_uppercase();
        Self::ALL
            .into_iter()
            .find(|t| t.name() == up)
            .ok_or_else(|| Error::InvalidArgument(format!("unknown vector index type {s:?}")))
    }

    /// The vector storage.
    pub fn storage(self) -> Storage {
        match self {
            Self::IvfFlat | Self::IvfHnswFlat => Storage::Flat,
            Self::IvfPq | Self::IvfHnswPq => Storage::Pq,
            Self::IvfSq | Self::IvfHnswSq => Storage::Sq,
            Self::IvfRq => Storage::Rq,
        }
    }

    /// Whether partitions carry an HNSW graph.
    pub fn is_hnsw(self) -> bool {
        matches!(self, Self::IvfHnswSq | Self::IvfHnswPq | Self::IvfHnswFlat)
    }

    /// pylance's default rows per partition when no partition count is given.
    pub fn default_partition_size(self) -> usize {
        match self.storage() {
            Storage::Sq => 8192,
            _ => 4096,
        }
    }
}

impl std::fmt::Display for VectorIndexType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Everything that controls a build (pylance's `create_index` arguments).
#[derive(Debug, Clone, PartialEq)]
pub struct VectorBuildParams {
    /// Index type.
    pub index_type: VectorIndexType,
    /// Distance metric.
    pub metric: Metric,
    /// Number of IVF partitions (derived from the row count when `None`).
    pub num_partitions: Option<usize>,
    /// Target rows per partition (recorded in the details when given).
    pub target_partition_size: Option<usize>,
    /// PQ sub-vectors (required for PQ storage).
    pub num_sub_vectors: Option<usize>,
    /// PQ bits per code (8 or 4).
    pub num_bits: u32,
    /// Training rows per centroid.
    pub sample_rate: usize,
    /// k-means iterations.
    pub max_iters: usize,
    /// Seed of every random choice.
    pub seed: u64,
    /// Precomputed IVF centroids (`num_partitions x dim`).
    pub ivf_centroids: Option<Vec<f32>>,
    /// Precomputed PQ codebook (`m x 2^bits x dim/m`).
    pub pq_codebook: Option<Vec<f32>>,
    /// HNSW neighbours per node.
    pub hnsw_m: usize,
    /// HNSW construction candidate list size.
    pub hnsw_ef_construction: usize,
    /// Worker threads for training and encoding (0 = available parallelism).
    pub threads: usize,
}

impl VectorBuildParams {
    /// pylance's defaults for `index_type` and `metric`.
    pub fn new(index_type: VectorIndexType, metric: Metric) -> Self {
        Self {
            index_type,
            metric,
            num_partitions: None,
            target_partition_size: None,
            num_sub_vectors: None,
            num_bits: 8,
            sample_rate: 256,
            max_iters: 50,
            seed: 42,
            ivf_centroids: None,
            pq_codebook: None,
            hnsw_m: 20,
            hnsw_ef_construction: 150,
            threads: 0,
        }
    }

    /// The partition count for `rows` training rows.
    pub fn resolve_num_partitions(&self, rows: usize) -> usize {
        if let Some(n) = self.num_partitions {
            return n;
        }
        let target = self
            .target_partition_size
            .unwrap_or(self.index_type.default_partition_size())
            .max(1);
        (rows / target).max(1)
    }
}

/// The float type of an indexed column. pylance writes the IVF centroids, the PQ codebook
/// and FLAT storage in the column's own type (its search refuses centroids of another
/// type), so the model remembers it; everything is computed in `f32`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ValueType {
    /// `halffloat`.
    Float16,
    /// `float` (and `uint8` columns, whose models are trained in `f32`).
    #[default]
    Float32,
    /// `double`.
    Float64,
}

impl ValueType {
    /// The type of a vector column's items (`Float32` for anything but f16 / f64).
    pub fn of_column(item: &arrow_schema::DataType) -> Self {
        match item {
            arrow_schema::DataType::Float16 => Self::Float16,
            arrow_schema::DataType::Float64 => Self::Float64,
            _ => Self::Float32,
        }
    }

    /// The `Tensor.data_type` code.
    pub fn tensor_code(self) -> i32 {
        match self {
            Self::Float16 => crate::proto::TENSOR_FLOAT16,
            Self::Float32 => crate::proto::TENSOR_FLOAT32,
            Self::Float64 => crate::proto::TENSOR_FLOAT64,
        }
    }

    /// The Arrow type of stored values.
    pub fn arrow_type(self) -> arrow_schema::DataType {
        match self {
            Self::Float16 => arrow_schema::DataType::Float16,
            Self::Float32 => arrow_schema::DataType::Float32,
            Self::Float64 => arrow_schema::DataType::Float64,
        }
    }

    /// `values` as little-endian bytes of this type.
    pub fn le_bytes(self, values: &[f32]) -> Vec<u8> {
        match self {
            Self::Float16 => values
                .iter()
                .flat_map(|x| half::f16::from_f32(*x).to_le_bytes())
                .collect(),
            Self::Float32 => values.iter().flat_map(|x| x.to_le_bytes()).collect(),
            Self::Float64 => values.iter().flat_map(|x| f64::from(*x).to_le_bytes()).collect(),
        }
    }

    /// `values` as an Arrow array of this type.
    pub fn array(self, values: Vec<f32>) -> arrow_array::ArrayRef {
        use arrow_array::{Float16Array, Float32Array, Float64Array};
        match self {
            Self::Float16 => std::sync::Arc::new(Float16Array::from_iter_values(
                values.into_iter().map(half::f16::from_f32),
            )),
            Self::Float32 => std::sync::Arc::new(Float32Array::from(values)),
            Self::Float64 => std::sync::Arc::new(Float64Array::from_iter_values(values.into_iter().map(f64::from))),
        }
    }
}

/// A trained IVF model: centroids plus the quantizer of its storage.
#[derive(Debug, Clone, PartialEq)]
pub struct IvfModel {
    /// The parameters it was trained with.
    pub params: VectorBuildParams,
    /// Vector dimension.
    pub dim: usize,
    /// Centroids, `num_partitions x dim`, row-major.
    pub centroids: Vec<f32>,
    /// k-means loss.
    pub loss: f64,
    /// PQ storage quantizer.
    pub pq: Option<ProductQuantizer>,
    /// SQ storage quantizer.
    pub sq: Option<ScalarQuantizer>,
    /// The column's float type: centroids, codebook and FLAT storage are written in it.
    pub value_type: ValueType,
}

impl IvfModel {
    /// Number of partitions.
    pub fn num_partitions(&self) -> usize {
        self.centroids.len() / self.dim.max(1)
    }

    /// Metric of the index.
    pub fn metric(&self) -> Metric {
        self.params.metric
    }

    /// Partition of each row of `vectors` (already normalised for cosine).
    pub fn assign(&self, vectors: &[f32]) -> Vec<u32> {
        let km = kmeans::KMeans {
            centroids: self.centroids.clone(),
            dim: self.dim,
            loss: 0.0,
            metric: kmeans_metric(self.metric()),
        };
        km.assign(vectors)
    }
}

fn kmeans_metric(m: Metric) -> Metric {
    if m == Metric::Dot {
        Metric::Dot
    } else {
        Metric::L2
    }
}

/// Checks the shape of a row-major matrix and returns its row count.
pub(crate) fn rows_of(vectors: &[f32], dim: usize) -> Result<usize> {
    if dim == 0 || !vectors.len().is_multiple_of(dim) {
        return Err(Error::InvalidArgument(format!(
            "{} values are not rows of dimension {dim}",
            vectors.len()
        )));
    }
    Ok(vectors.len() / dim)
}

/// What the quantizer encodes for `vectors` (normalised for cosine) assigned to `parts`.
pub(crate) fn residuals(model: &IvfModel, vectors: &[f32], parts: &[u32]) -> Vec<f32> {
    let dim = model.dim;
    if model.metric() == Metric::Dot {
        return vectors.to_vec();
    }
    let mut out = vectors.to_vec();
    for (row, &p) in out.chunks_exact_mut(dim).zip(parts) {
        let c = &model.centroids[p as usize * dim..(p as usize + 1) * dim];
        row.iter_mut().zip(c).for_each(|(x, c)| *x -= c);
    }
    out
}

/// Trains the IVF centroids and the storage quantizer on `vectors` (a sample of the column).
pub fn train_model(vectors: &[f32], dim: usize, params: &VectorBuildParams) -> Result<IvfModel> {
    let rows = rows_of(vectors, dim)?;
    if params.metric == Metric::Hamming {
        return Err(Error::Unsupported("IVF indexes with the hamming metric".into()));
    }
    if params.index_type.storage() == Storage::Rq {
        return Err(Error::Unsupported("building IVF_RQ indexes".into()));
    }
    if rows == 0 {
        return Err(Error::InvalidArgument(
            "cannot train a vector index on zero rows".into(),
        ));
    }
    let mut data = vectors.to_vec();
    if params.metric == Metric::Cosine {
        normalize_rows(&mut data, dim);
    }
    let np = params.resolve_num_partitions(rows);
    let km_metric = kmeans_metric(params.metric);
    let mut rng = Rng::new(params.seed);
    let (centroids, mut loss) = match &params.ivf_centroids {
        Some(c) => {
            if c.len() != np * dim || c.is_empty() {
                return Err(Error::InvalidArgument(format!(
                    "ivf_centroids has {} values, expected {np} x {dim}",
                    c.len()
                )));
            }
            (c.clone(), 0.0)
        }
        None => {
            let sample = rng.sample(rows, params.sample_rate.max(1).saturating_mul(np));
            let train: Vec<f32> = sample
                .iter()
                .flat_map(|&i| data[i * dim..(i + 1) * dim].to_vec())
                .collect();
            let mut kp = KMeansParams::new(np);
            kp.max_iters = params.max_iters;
            kp.seed = params.seed;
            kp.metric = km_metric;
            kp.threads = params.threads;
            let km = kmeans::train(&train, dim, &kp)?;
            (km.centroids, km.loss)
        }
    };
    let mut model = IvfModel {
        params: params.clone(),
        dim,
        centroids,
        loss: 0.0,
        pq: None,
        sq: None,
        value_type: ValueType::Float32,
    };
    if params.ivf_centroids.is_some() {
        let parts = model.assign(&data);
        loss = data
            .chunks_exact(dim)
            .zip(&parts)
            .map(|(v, &p)| {
                let c = &model.centroids[p as usize * dim..(p as usize + 1) * dim];
                f64::from(if km_metric == Metric::Dot {
                    -crate::distance::dot_raw(v, c)
                } else {
                    l2_raw(v, c)
                })
            })
            .sum();
    }
    model.loss = loss;
    match params.index_type.storage() {
        Storage::Flat | Storage::Rq => {}
        Storage::Sq => model.sq = Some(ScalarQuantizer::train(&data, dim)?),
        Storage::Pq => {
            let m = params
                .num_sub_vectors
                .ok_or_else(|| Error::InvalidArgument("num_sub_vectors is required for PQ".into()))?;
            if m == 0 || !dim.is_multiple_of(m) {
                return Err(Error::InvalidArgument(format!(
                    "dimension {dim} must be divisible by num_sub_vectors {m}"
                )));
            }
            model.pq = Some(match &params.pq_codebook {
                Some(cb) => ProductQuantizer::new(dim, m, params.num_bits, cb.clone())?,
                None => {
                    let want = params.sample_rate.max(1).saturating_mul(1 << params.num_bits.min(8));
                    let sample = rng.sample(rows, want);
                    let sv: Vec<f32> = sample
                        .iter()
                        .flat_map(|&i| data[i * dim..(i + 1) * dim].to_vec())
                        .collect();
                    // Only the sampled rows need their partition (the same one a full
                    // assignment would give them).
                    let sp = model.assign(&sv);
                    let res = residuals(&model, &sv, &sp);
                    let pp = PqParams {
                        num_sub_vectors: m,
                        num_bits: params.num_bits,
                        max_iters: params.max_iters,
                        seed: params.seed,
                        threads: params.threads,
                    };
                    ProductQuantizer::train(&res, dim, &pp)?
                }
            });
        }
    }
    Ok(model)
}

/// The `VectorIndexDetails` protobuf of a model (the manifest's `index_details` value).
pub fn details(model: &IvfModel) -> Vec<u8> {
    let p = &model.params;
    let compression = match p.index_type.storage() {
        Storage::Flat => Compression::Flat(proto::FlatDetails {}),
        Storage::Pq => Compression::Pq(proto::PqDetails {
            num_bits: p.num_bits,
            num_sub_vectors: model.pq.as_ref().map_or(0, |q| q.num_sub_vectors as u32),
        }),
        Storage::Sq => Compression::Sq(proto::SqDetails { num_bits: 8 }),
        Storage::Rq => Compression::Rq(proto::RqDetails { num_bits: 5 }),
    };
    VectorIndexDetails {
        metric_type: p.metric.proto_value(),
        target_partition_size: p.target_partition_size.map(|t| t as u64),
        hnsw: p.index_type.is_hnsw().then_some(proto::HnswDetails {
            max_connections: p.hnsw_m as u32,
            construction_ef: p.hnsw_ef_construction as u32,
            max_level: 7,
        }),
        compression: Some(compression),
        runtime_hints: Default::default(),
    }
    .encode_to_vec()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn type_names_round_trip() {
        for t in VectorIndexType::ALL {
            assert_eq!(VectorIndexType::parse(t.name()).unwrap(), t);
            assert_eq!(VectorIndexType::parse(&t.name().to_lowercase()).unwrap(), t);
        }
        assert!(VectorIndexType::parse("IVF_XX").is_err());
    }

    #[test]
    fn partition_defaults_follow_pylance() {
        let p = VectorBuildParams::new(VectorIndexType::IvfFlat, Metric::L2);
        assert_eq!(p.resolve_num_partitions(30_000), 7);
        assert_eq!(p.resolve_num_partitions(10), 1);
        let p = VectorBuildParams::new(VectorIndexType::IvfSq, Metric::L2);
        assert_eq!(p.resolve_num_partitions(30_000), 3);
        let mut p = VectorBuildParams::new(VectorIndexType::IvfPq, Metric::L2);
        p.target_partition_size = Some(5000);
        assert_eq!(p.resolve_num_partitions(30_000), 6);
    }

    #[test]
    fn details_bytes_match_pylance() {
        let mut params = VectorBuildParams::new(VectorIndexType::IvfPq, Metric::L2);
        params.num_sub_vectors = Some(4);
        let model = IvfModel {
            params: params.clone(),
            dim: 8,
            centroids: vec![0.0; 8],
            loss: 0.0,
            pq: Some(ProductQuantizer::new(8, 4, 8, vec![0.0; 256 * 8]).unwrap()),
            sq: None,
            value_type: ValueType::Float32,
        };
        assert_eq!(details(&model), vec![0x22, 0x04, 0x08, 0x08, 0x10, 0x04]);
        let mut flat = model.clone();
        flat.params = VectorBuildParams::new(VectorIndexType::IvfFlat, Metric::Cosine);
        assert_eq!(details(&flat), vec![0x08, 0x01, 0x42, 0x00]);
        let mut hnsw = model;
        hnsw.params = VectorBuildParams::new(VectorIndexType::IvfHnswSq, Metric::L2);
        assert_eq!(
            details(&hnsw),
            vec![0x1a, 0x07, 0x08, 20, 0x10, 150, 0x01, 0x18, 0x07, 0x2a, 0x02, 0x08, 0x08]
        );
    }

    #[test]
    fn pq_requires_sub_vectors() {
        let data: Vec<f32> = (0..64).map(|i| i as f32).collect();
        let p = VectorBuildParams::new(VectorIndexType::IvfPq, Metric::L2);
        assert!(train_model(&data, 4, &p).is_err());
        let mut p = p;
        p.num_sub_vectors = Some(3);
        assert!(train_model(&data, 4, &p).is_err());
        let p = VectorBuildParams::new(VectorIndexType::IvfFlat, Metric::Hamming);
        assert!(matches!(train_model(&data, 4, &p), Err(Error::Unsupported(_))));
    }
}
