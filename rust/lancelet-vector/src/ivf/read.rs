//! Opening and searching IVF index files (ours or pylance's).
//!
//! `index.idx` gives the index type, metric and centroids; `auxiliary.idx` gives the
//! partition layout and the stored vectors. Partitions are read lazily, decoded once
//! (codes untransposed and unpacked) and cached. HNSW graphs are read per partition on
//! first use and walked by [`IvfIndex::search_ef`] with an `ef`; without one, HNSW partitions
//! are scanned over the storage like a FLAT sub-index, which finds at least what the graph
//! would. IVF_RQ is refused with [`Error::Unsupported`].
//!
//! Every size, offset, dimension and code width read from the files is checked; damage is
//! [`Error::Corrupt`].

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use arrow_array::cast::AsArray;
use arrow_array::types::{UInt32Type, UInt64Type};
use arrow_array::{Array, RecordBatch};
use arrow_schema::DataType;
use lancelet_file::{FileReader, Projection};
use lancelet_index::scalar::IndexStore;
use prost::Message;
use serde_json::{json, Value};

use super::{IvfModel, Storage, ValueType, VectorBuildParams, VectorIndexType};
use crate::distance::{cosine_raw, dot_raw, l2_raw, norm, normalize};
use crate::hnsw::{Graph, Visited};
use crate::pq::{untranspose, ProductQuantizer};
use crate::proto::{Ivf, Tensor, TENSOR_FLOAT16, TENSOR_FLOAT32, TENSOR_FLOAT64};
use crate::sq::ScalarQuantizer;
use crate::{Error, Metric, Result, TopK};

/// Name of the sub-index file.
pub const INDEX_FILE: &str = "index.idx";
/// Name of the storage file.
pub const AUX_FILE: &str = "auxiliary.idx";

/// Largest vector dimension accepted from a file.
const MAX_DIM: usize = 1 << 20;

/// Decoded partitions kept per open index.
const CACHED_PARTITIONS: usize = 256;

enum StorageReader {
    Flat,
    Pq {
        pq: ProductQuantizer,
        transposed: bool,
    },
    Sq(ScalarQuantizer),
    /// IVF_RQ: the RaBitQ codes are not decoded; a search returns every row of the probed
    /// partitions for the caller to rank by exact distance ([`IvfIndex::needs_rerank`]).
    RowsOnly {
        num_bits: u32,
    },
}

/// One decoded partition.
struct Partition {
    row_ids: Vec<u64>,
    /// Flat: `dim` floats per row.
    floats: Vec<f32>,
    /// PQ: one code per sub-vector per row; SQ: `dim` codes per row.
    codes: Vec<u8>,
}

/// An open IVF index.
pub struct IvfIndex {
    index_type: VectorIndexType,
    metric: Metric,
    dim: usize,
    centroids: Vec<f32>,
    value_type: ValueType,
    loss: Option<f64>,
    offsets: Vec<u64>,
    lengths: Vec<u32>,
    storage: StorageReader,
    aux: Arc<FileReader>,
    projection: Projection,
    column: String,
    hnsw: Option<Value>,
    cache: Mutex<HashMap<usize, Arc<Partition>>>,
    /// HNSW sub-index: `index.idx`, its per-partition row ranges and `lance:hnsw` entries.
    graph_file: Option<GraphFile>,
    graphs: Mutex<HashMap<usize, Arc<Graph>>>,
}

struct GraphFile {
    reader: Arc<FileReader>,
    offsets: Vec<u64>,
    lengths: Vec<u32>,
    infos: Vec<Value>,
}

/// A query prepared once for every partition.
struct Prepared {
    raw: Vec<f32>,
    normalized: Vec<f32>,
    raw_norm: f32,
    sq: Option<crate::sq::SqQuery>,
    dot_table: Option<Vec<f32>>,
}

impl std::fmt::Debug for IvfIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IvfIndex")
            .field("index_type", &self.index_type)
            .field("metric", &self.metric)
            .field("dim", &self.dim)
            .field("num_partitions", &self.lengths.len())
            .finish()
    }
}

fn corrupt(file: &str, msg: impl Into<String>) -> Error {
    Error::corrupt(file, msg)
}

fn meta<'a>(r: &'a FileReader, key: &str) -> Option<&'a String> {
    r.metadata().schema.metadata().get(key)
}

async fn open_file(store: &dyn IndexStore, name: &str) -> Result<Arc<FileReader>> {
    let io = store.open(name).await?;
    Ok(Arc::new(FileReader::open(io).await?))
}

/// The global buffer named by schema metadata `key`.
async fn buffer_at(r: &FileReader, key: &str, file: &str) -> Result<Vec<u8>> {
    let v = meta(r, key).ok_or_else(|| corrupt(file, format!("no {key} metadata")))?;
    let at: usize = v
        .parse()
        .ok()
        .filter(|i| *i > 0 && *i < r.metadata().global_buffers.len())
        .ok_or_else(|| corrupt(file, format!("{key} = {v:?} names no global buffer")))?;
    Ok(r.read_global_buffer(at).await?.as_slice().to_vec())
}

async fn read_ivf(r: &FileReader, file: &str) -> Result<Ivf> {
    let bytes = buffer_at(r, "lance:ivf", file).await?;
    Ivf::decode(bytes.as_slice()).map_err(|e| corrupt(file, format!("bad IVF protobuf: {e}")))
}

/// A 2-D float tensor as `(rows, cols, f32 values)`.
fn tensor_2d(t: &Tensor, file: &str, what: &str) -> Result<(usize, usize, Vec<f32>)> {
    let [rows, cols] = t.shape[..] else {
        return Err(corrupt(file, format!("{what} tensor has shape {:?}", t.shape)));
    };
    let (rows, cols) = (rows as usize, cols as usize);
    let width = match t.data_type {
        TENSOR_FLOAT16 => 2,
        TENSOR_FLOAT32 => 4,
        TENSOR_FLOAT64 => 8,
        other => return Err(corrupt(file, format!("{what} tensor has data type {other}"))),
    };
    let want = rows.checked_mul(cols).and_then(|n| n.checked_mul(width));
    if want != Some(t.data.len()) {
        return Err(corrupt(
            file,
            format!("{what} tensor {:?} holds {} bytes", t.shape, t.data.len()),
        ));
    }
    let values = match width {
        2 => t
            .data
            .chunks_exact(2)
            .map(|b| half::f16::from_le_bytes([b[0], b[1]]).to_f32())
            .collect(),
        4 => t
            .data
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect(),
        _ => t
            .data
            .chunks_exact(8)
            .map(|b| f64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]) as f32)
            .collect(),
    };
    Ok((rows, cols, values))
}

/// The quantizer JSON inside `storage_metadata` (a JSON array of one JSON string).
fn storage_metadata(r: &FileReader) -> Result<Value> {
    let raw = meta(r, "storage_metadata").ok_or_else(|| corrupt(AUX_FILE, "no storage_metadata"))?;
    let outer: Value = serde_json::from_str(raw).map_err(|e| corrupt(AUX_FILE, format!("storage_metadata: {e}")))?;
    let inner = outer
        .as_array()
        .and_then(|a| a.first())
        .and_then(Value::as_str)
        .ok_or_else(|| corrupt(AUX_FILE, "storage_metadata is not an array of strings"))?;
    serde_json::from_str(inner).map_err(|e| corrupt(AUX_FILE, format!("storage_metadata entry: {e}")))
}

fn json_usize(v: &Value, key: &str) -> Result<usize> {
    v.get(key)
        .and_then(Value::as_u64)
        .and_then(|x| usize::try_from(x).ok())
        .ok_or_else(|| corrupt(AUX_FILE, format!("storage_metadata lacks a valid {key:?}")))
}

/// Checks that `name` is a fixed-size list of `item` values of width `width`.
fn check_list(r: &FileReader, name: &str, item: Option<&DataType>, width: usize) -> Result<()> {
    let schema = &r.metadata().schema;
    let field = schema
        .field_with_name(name)
        .map_err(|_| corrupt(AUX_FILE, format!("no {name:?} column")))?;
    match field.data_type() {
        DataType::FixedSizeList(child, w)
            if usize::try_from(*w).ok() == Some(width) && item.is_none_or(|t| child.data_type() == t) =>
        {
            Ok(())
        }
        other => Err(corrupt(
            AUX_FILE,
            format!("column {name:?} is {other}, expected a fixed-size list of width {width}"),
        )),
    }
}

/// The byte values of a fixed-size list of `uint8` with `width` bytes per row.
fn list_bytes(batch: &RecordBatch, name: &str, width: usize) -> Result<Vec<u8>> {
    let col = batch
        .column_by_name(name)
        .ok_or_else(|| corrupt(AUX_FILE, format!("no {name:?} column")))?;
    let list = col
        .as_fixed_size_list_opt()
        .ok_or_else(|| corrupt(AUX_FILE, format!("{name:?} is not a fixed-size list")))?;
    let n = list.len();
    let values = list.values();
    let start = list.offset() * width;
    if values.len() < start + n * width {
        return Err(corrupt(AUX_FILE, format!("{name:?} holds too few values")));
    }
    let bytes = values
        .slice(start, n * width)
        .as_primitive_opt::<arrow_array::types::UInt8Type>()
        .map(|a| a.values().to_vec())
        .ok_or_else(|| corrupt(AUX_FILE, format!("{name:?} values are not uint8")))?;
    Ok(bytes)
}

impl IvfIndex {
    /// Opens an index directory holding `index.idx` and `auxiliary.idx`.
    pub async fn open(store: &dyn IndexStore) -> Result<Self> {
        let index = open_file(store, INDEX_FILE).await?;
        let info: Value = meta(&index, "lance:index")
            .and_then(|s| serde_json::from_str(s).ok())
            .ok_or_else(|| corrupt(INDEX_FILE, "missing or bad lance:index metadata"))?;
        let tname = info
            .get("type")
            .and_then(Value::as_str)
            .ok_or_else(|| corrupt(INDEX_FILE, "lance:index has no type"))?;
        let index_type =
            VectorIndexType::parse(tname).map_err(|_| Error::Unsupported(format!("vector index type {tname:?}")))?;
        let metric = info
            .get("distance_type")
            .and_then(Value::as_str)
            .map(Metric::parse)
            .transpose()
            .map_err(|_| corrupt(INDEX_FILE, "bad distance_type"))?;
        let ivf = read_ivf(&index, INDEX_FILE).await?;
        let tensor = ivf
            .centroids_tensor
            .as_ref()
            .ok_or_else(|| corrupt(INDEX_FILE, "IVF has no centroids tensor"))?;
        let (np, dim, centroids) = tensor_2d(tensor, INDEX_FILE, "centroids")?;
        let value_type = match tensor.data_type {
            TENSOR_FLOAT16 => ValueType::Float16,
            TENSOR_FLOAT64 => ValueType::Float64,
            _ => ValueType::Float32,
        };
        if dim == 0 || dim > MAX_DIM {
            return Err(corrupt(INDEX_FILE, format!("centroids have dimension {dim}")));
        }
        let hnsw_infos: Vec<Value> = meta(&index, "lance:hnsw")
            .and_then(|s| serde_json::from_str::<Vec<String>>(s).ok())
            .map(|v| v.iter().filter_map(|s| serde_json::from_str::<Value>(s).ok()).collect())
            .unwrap_or_default();
        let hnsw = hnsw_infos.first().cloned();
        let graph_file = if index_type.is_hnsw()
            && hnsw_infos.len() == np
            && ivf.offsets.len() == np
            && ivf.lengths.len() == np
            && ivf
                .offsets
                .iter()
                .zip(&ivf.lengths)
                .all(|(o, l)| o.checked_add(u64::from(*l)).is_some_and(|e| e <= index.num_rows()))
        {
            Some(GraphFile {
                reader: index.clone(),
                offsets: ivf.offsets.clone(),
                lengths: ivf.lengths.clone(),
                infos: hnsw_infos,
            })
        } else {
            None
        };

        let aux = open_file(store, AUX_FILE).await?;
        let metric = match (metric, meta(&aux, "distance_type").map(|s| Metric::parse(s))) {
            (Some(m), _) => m,
            (None, Some(Ok(m))) => m,
            _ => return Err(corrupt(AUX_FILE, "no valid distance_type")),
        };
        let layout = read_ivf(&aux, AUX_FILE).await?;
        if layout.offsets.len() != np || layout.lengths.len() != np {
            return Err(corrupt(
                AUX_FILE,
                format!(
                    "{} offsets and {} lengths for {np} partitions",
                    layout.offsets.len(),
                    layout.lengths.len()
                ),
            ));
        }
        let rows = aux.num_rows();
        for (o, l) in layout.offsets.iter().zip(&layout.lengths) {
            if o.checked_add(u64::from(*l)).is_none_or(|end| end > rows) {
                return Err(corrupt(AUX_FILE, format!("partition {o}+{l} exceeds {rows} rows")));
            }
        }
        let md = storage_metadata(&aux)?;
        let (storage, column) = match index_type.storage() {
            Storage::Flat => {
                check_list(&aux, "flat", None, dim)?;
                (StorageReader::Flat, "flat")
            }
            Storage::Sq => {
                let bits = json_usize(&md, "num_bits")?;
                if bits != 8 {
                    return Err(Error::Unsupported(format!("{bits}-bit scalar quantization")));
                }
                let bounds = md.get("bounds");
                let bound = |k: &str| {
                    bounds
                        .and_then(|b| b.get(k))
                        .and_then(Value::as_f64)
                        .ok_or_else(|| corrupt(AUX_FILE, format!("SQ bounds lack {k:?}")))
                };
                check_list(&aux, "__sq_code", Some(&DataType::UInt8), dim)?;
                let sq = ScalarQuantizer {
                    dim,
                    num_bits: 8,
                    start: bound("start")?,
                    end: bound("end")?,
                };
                (StorageReader::Sq(sq), "__sq_code")
            }
            Storage::Pq => {
                let nbits = json_usize(&md, "nbits")?;
                let m = json_usize(&md, "num_sub_vectors")?;
                if json_usize(&md, "dimension")? != dim {
                    return Err(corrupt(AUX_FILE, "PQ dimension differs from the centroids"));
                }
                let transposed = md.get("transposed").and_then(Value::as_bool).unwrap_or(false);
                let at = json_usize(&md, "codebook_position")?;
                if at == 0 || at >= aux.metadata().global_buffers.len() {
                    return Err(corrupt(AUX_FILE, format!("codebook_position {at} names no buffer")));
                }
                let bytes = aux.read_global_buffer(at).await?;
                let t = Tensor::decode(bytes.as_slice())
                    .map_err(|e| corrupt(AUX_FILE, format!("bad codebook tensor: {e}")))?;
                let (_, _, codebook) = tensor_2d(&t, AUX_FILE, "codebook")?;
                let bits = u32::try_from(nbits).unwrap_or(0);
                let pq = ProductQuantizer::new(dim, m, bits, codebook)
                    .map_err(|e| corrupt(AUX_FILE, format!("PQ parameters: {e}")))?;
                check_list(&aux, "__pq_code", Some(&DataType::UInt8), pq.code_width())?;
                (StorageReader::Pq { pq, transposed }, "__pq_code")
            }
            Storage::Rq => {
                let num_bits = md
                    .get("num_bits")
                    .and_then(Value::as_u64)
                    .and_then(|b| u32::try_from(b).ok())
                    .unwrap_or(1);
                (StorageReader::RowsOnly { num_bits }, "_rowid")
            }
        };
        if aux
            .metadata()
            .schema
            .field_with_name("_rowid")
            .ok()
            .map(|f| f.data_type())
            != Some(&DataType::UInt64)
        {
            return Err(corrupt(AUX_FILE, "no uint64 _rowid column"));
        }
        let mut wanted = vec!["_rowid".to_string()];
        if column != "_rowid" {
            wanted.push(column.to_string());
        }
        let projection = aux.projection(Some(&wanted))?;
        Ok(Self {
            index_type,
            metric,
            dim,
            centroids,
            value_type,
            loss: ivf.loss,
            offsets: layout.offsets,
            lengths: layout.lengths,
            storage,
            aux,
            projection,
            column: column.to_string(),
            hnsw,
            cache: Mutex::new(HashMap::new()),
            graph_file,
            graphs: Mutex::new(HashMap::new()),
        })
    }

    /// The index type.
    pub fn index_type(&self) -> VectorIndexType {
        self.index_type
    }

    /// The metric the index was built for.
    pub fn metric(&self) -> Metric {
        self.metric
    }

    /// Number of partitions.
    pub fn num_partitions(&self) -> usize {
        self.lengths.len()
    }

    /// Rows in each partition.
    pub fn partition_sizes(&self) -> Vec<usize> {
        self.lengths.iter().map(|l| *l as usize).collect()
    }

    /// Vector dimension.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// The centroids, `num_partitions x dim`.
    pub fn centroids(&self) -> &[f32] {
        &self.centroids
    }

    /// The trained model of this index: centroids, quantizer (PQ codebook or SQ bounds) and
    /// the parameters that shape an encoding (index type, metric, partitions, `num_bits`,
    /// `num_sub_vectors`, HNSW `m` / `ef_construction`). [`super::build`] with it encodes new
    /// rows exactly as with the model that wrote the index, which is what delta segments
    /// need. Training-only parameters (sample rate, iterations, seed) are pylance's defaults;
    /// `ivf_centroids` / `pq_codebook` stay `None` (the values live in the model itself).
    pub fn model(&self) -> Result<IvfModel> {
        let mut params = VectorBuildParams::new(self.index_type, self.metric);
        params.num_partitions = Some(self.num_partitions());
        let (pq, sq) = match &self.storage {
            StorageReader::Flat => (None, None),
            StorageReader::Pq { pq, .. } => {
                params.num_sub_vectors = Some(pq.num_sub_vectors);
                params.num_bits = pq.num_bits;
                (Some(pq.clone()), None)
            }
            StorageReader::Sq(sq) => (None, Some(sq.clone())),
            StorageReader::RowsOnly { .. } => {
                return Err(Error::Unsupported(
                    "encoding new rows into an IVF_RQ (RaBitQ) index; rebuild it as IVF_PQ or IVF_SQ".into(),
                ))
            }
        };
        if let Some(h) = self.hnsw.as_ref().and_then(|h| h.get("params")) {
            let get = |k: &str| h.get(k).and_then(Value::as_u64).and_then(|v| usize::try_from(v).ok());
            if let Some(m) = get("m") {
                params.hnsw_m = m;
            }
            if let Some(ef) = get("ef_construction") {
                params.hnsw_ef_construction = ef;
            }
        }
        Ok(IvfModel {
            params,
            dim: self.dim,
            centroids: self.centroids.clone(),
            loss: self.loss.unwrap_or(0.0),
            pq,
            sq,
            value_type: self.value_type,
        })
    }

    fn check_query(&self, query: &[f32]) -> Result<()> {
        if query.len() == self.dim {
            Ok(())
        } else {
            Err(Error::InvalidArgument(format!(
                "query has {} values, the index dimension is {}",
                query.len(),
                self.dim
            )))
        }
    }

    /// Whether the index stores no distances lancelet can compute (IVF_RQ): a search then
    /// returns every allowed row of the probed partitions with distance 0, and the caller
    /// ranks them by exact distance over the raw vectors.
    pub fn needs_rerank(&self) -> bool {
        matches!(self.storage, StorageReader::RowsOnly { .. })
    }

    /// The `nprobes` partitions nearest to `query` (cosine: normalised query by L2; dot: by
    /// `-q·c`), nearest first, ties to the lower partition.
    pub fn find_partitions(&self, query: &[f32], nprobes: usize) -> Vec<usize> {
        if query.len() != self.dim {
            return Vec::new();
        }
        let mut q = query.to_vec();
        if self.metric == Metric::Cosine {
            normalize(&mut q);
        }
        let mut d: Vec<(f32, usize)> = self
            .centroids
            .chunks_exact(self.dim)
            .enumerate()
            .map(|(i, c)| {
                let d = if self.metric == Metric::Dot {
                    -dot_raw(&q, c)
                } else {
                    l2_raw(&q, c)
                };
                (d, i)
            })
            .collect();
        d.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        d.into_iter().take(nprobes).map(|(_, i)| i).collect()
    }

    async fn partition(&self, p: usize) -> Result<Arc<Partition>> {
        if let Some(part) = self.cache.lock().ok().and_then(|c| c.get(&p).cloned()) {
            return Ok(part);
        }
        let (start, n) = (self.offsets[p], self.lengths[p] as usize);
        let range = std::iter::once(start..start + n as u64).collect::<Vec<_>>();
        let batch = self.aux.read_ranges(&self.projection, &range, None).await?;
        if batch.num_rows() != n {
            return Err(corrupt(
                AUX_FILE,
                format!("partition {p} read {} rows", batch.num_rows()),
            ));
        }
        let ids = batch
            .column_by_name("_rowid")
            .and_then(|c| c.as_primitive_opt::<UInt64Type>())
            .filter(|a| a.null_count() == 0)
            .ok_or_else(|| corrupt(AUX_FILE, "_rowid is not a non-null uint64"))?;
        let mut part = Partition {
            row_ids: ids.values().to_vec(),
            floats: Vec::new(),
            codes: Vec::new(),
        };
        match &self.storage {
            StorageReader::Flat => {
                let col = batch
                    .column_by_name(&self.column)
                    .ok_or_else(|| corrupt(AUX_FILE, "no flat column"))?;
                let (v, dim) = crate::distance::to_f32(col.as_ref())
                    .map_err(|e| corrupt(AUX_FILE, format!("flat vectors: {e}")))?;
                if dim != self.dim {
                    return Err(corrupt(AUX_FILE, "flat vectors have the wrong dimension"));
                }
                part.floats = v;
            }
            StorageReader::Sq(_) => part.codes = list_bytes(&batch, &self.column, self.dim)?,
            StorageReader::RowsOnly { .. } => {}
            StorageReader::Pq { pq, transposed } => {
                let w = pq.code_width();
                let mut bytes = list_bytes(&batch, &self.column, w)?;
                if *transposed {
                    bytes = untranspose(&bytes, n, w);
                }
                part.codes = if pq.num_bits == 4 {
                    bytes.chunks_exact(w).flat_map(|r| pq.unpack(r)).collect()
                } else {
                    bytes
                };
            }
        }
        let part = Arc::new(part);
        if let Ok(mut c) = self.cache.lock() {
            if c.len() >= CACHED_PARTITIONS {
                c.clear();
            }
            c.insert(p, part.clone());
        }
        Ok(part)
    }

    /// The `k` nearest rows to `query` among the `nprobes` nearest partitions, as
    /// `(distance, row address)` sorted by distance then row address. `filter` (when given)
    /// says which row addresses may be returned. Distances are pylance's index distances:
    /// exact for FLAT (L2 squared, `1 - cos`, `1 - q·v`), ADC for PQ (L2 / cosine: squared L2
    /// of the query residual; dot: `1 - q·v̂`), quantized for SQ. With `refine`, FLAT is
    /// unchanged (already exact); for PQ/SQ the caller re-ranks the returned candidates with
    /// [`crate::distance::distance`] over the raw vectors (the index does not hold them).
    /// HNSW partitions are scanned whole here; [`Self::search_ef`] walks their graphs.
    pub async fn search(
        &self,
        query: &[f32],
        k: usize,
        nprobes: usize,
        filter: Option<&(dyn Fn(u64) -> bool + Send + Sync)>,
        refine: bool,
    ) -> Result<Vec<(f32, u64)>> {
        self.search_ef(query, k, nprobes, None, filter, refine).await
    }

    /// [`Self::search`] with pylance's `ef`: for IVF_HNSW_* indexes and `Some(ef)`, each
    /// probed partition is searched through its HNSW graph with a candidate list of
    /// `max(ef, k)` (filtered rows are walked but not returned); other indexes, or `None`,
    /// scan the probed partitions.
    pub async fn search_ef(
        &self,
        query: &[f32],
        k: usize,
        nprobes: usize,
        ef: Option<usize>,
        filter: Option<&(dyn Fn(u64) -> bool + Send + Sync)>,
        refine: bool,
    ) -> Result<Vec<(f32, u64)>> {
        let _ = refine;
        self.check_query(query)?;
        let mut top = TopK::new(k);
        if k == 0 {
            return Ok(Vec::new());
        }
        let mut normalized = query.to_vec();
        if self.metric == Metric::Cosine {
            normalize(&mut normalized);
        }
        let prep = Prepared {
            raw: query.to_vec(),
            raw_norm: norm(query),
            sq: match &self.storage {
                StorageReader::Sq(sq) => Some(sq.prepare(&normalized, self.metric)),
                _ => None,
            },
            dot_table: match &self.storage {
                StorageReader::Pq { pq, .. } if self.metric == Metric::Dot => Some(pq.build_table(query, Metric::Dot)),
                _ => None,
            },
            normalized,
        };
        let use_graph = ef.filter(|_| self.graph_file.is_some());
        let mut visited = Visited::default();
        for p in self.find_partitions(query, nprobes) {
            let part = self.partition(p).await?;
            let score = self.scorer(&prep, p, &part);
            let allowed = |i: usize| filter.is_none_or(|f| f(part.row_ids[i]));
            match use_graph {
                Some(ef) => {
                    let graph = self.graph(p, part.row_ids.len()).await?;
                    let allow = |i: u32| allowed(i as usize);
                    let allow_dyn: Option<&dyn Fn(u32) -> bool> = filter.map(|_| &allow as &dyn Fn(u32) -> bool);
                    for (d, i) in graph.search(ef.max(k), &|i| score(i as usize), allow_dyn, &mut visited) {
                        top.push(d, part.row_ids[i as usize]);
                    }
                }
                None => {
                    for i in 0..part.row_ids.len() {
                        if allowed(i) {
                            top.push(score(i), part.row_ids[i]);
                        }
                    }
                }
            }
        }
        Ok(top.into_sorted_vec())
    }

    /// The index distance of row `i` of partition `p` to the prepared query.
    fn scorer<'a>(
        &'a self,
        prep: &'a Prepared,
        p: usize,
        part: &'a Partition,
    ) -> Box<dyn Fn(usize) -> f32 + Send + Sync + 'a> {
        let dim = self.dim;
        match &self.storage {
            StorageReader::Flat => {
                let metric = self.metric;
                Box::new(move |i| {
                    let v = &part.floats[i * dim..(i + 1) * dim];
                    match metric {
                        Metric::L2 => l2_raw(&prep.raw, v),
                        Metric::Cosine => cosine_raw(&prep.raw, prep.raw_norm, v),
                        Metric::Dot => 1.0 - dot_raw(&prep.raw, v),
                        Metric::Hamming => {
                            crate::distance::distance(Metric::Hamming, &prep.raw, v).unwrap_or(f32::INFINITY)
                        }
                    }
                })
            }
            StorageReader::RowsOnly { .. } => Box::new(|_| 0.0),
            StorageReader::Sq(sq) => {
                let offset = if self.metric == Metric::Dot { 1.0 } else { 0.0 };
                match &prep.sq {
                    Some(q) => Box::new(move |i| offset + sq.distance(q, &part.codes[i * dim..(i + 1) * dim])),
                    None => Box::new(|_| f32::INFINITY),
                }
            }
            StorageReader::Pq { pq, .. } => {
                let (table, offset) = match &prep.dot_table {
                    Some(t) => (t.clone(), 1.0),
                    None => {
                        let c = &self.centroids[p * dim..(p + 1) * dim];
                        let res: Vec<f32> = prep.normalized.iter().zip(c).map(|(a, b)| a - b).collect();
                        (pq.build_table(&res, Metric::L2), 0.0)
                    }
                };
                let m = pq.num_sub_vectors;
                Box::new(move |i| offset + pq.adc(&table, &part.codes[i * m..(i + 1) * m]))
            }
        }
    }

    /// The HNSW graph of partition `p` (`n` stored rows), read once and cached.
    async fn graph(&self, p: usize, n: usize) -> Result<Arc<Graph>> {
        if let Some(g) = self.graphs.lock().ok().and_then(|c| c.get(&p).cloned()) {
            return Ok(g);
        }
        let gf = self
            .graph_file
            .as_ref()
            .ok_or_else(|| corrupt(INDEX_FILE, "no HNSW graph"))?;
        let info = &gf.infos[p];
        let level_offsets: Vec<usize> = info
            .get("level_offsets")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(|v| v.as_u64().map(|x| x as usize)).collect())
            .unwrap_or_default();
        let entry = info
            .get("entry_point")
            .and_then(Value::as_u64)
            .and_then(|e| u32::try_from(e).ok())
            .unwrap_or(0);
        let (start, len) = (gf.offsets[p], gf.lengths[p] as usize);
        let mut rows = Vec::with_capacity(len);
        if len > 0 {
            let proj = gf
                .reader
                .projection(Some(&["__vector_id".to_string(), "__neighbors".to_string()]))?;
            let range = std::iter::once(start..start + len as u64).collect::<Vec<_>>();
            let batch = gf.reader.read_ranges(&proj, &range, None).await?;
            let ids = batch
                .column_by_name("__vector_id")
                .and_then(|c| c.as_primitive_opt::<UInt32Type>())
                .ok_or_else(|| corrupt(INDEX_FILE, "__vector_id is not uint32"))?;
            let lists = batch
                .column_by_name("__neighbors")
                .and_then(|c| c.as_list_opt::<i32>())
                .ok_or_else(|| corrupt(INDEX_FILE, "__neighbors is not a list"))?;
            if ids.len() != len || lists.len() != len {
                return Err(corrupt(
                    INDEX_FILE,
                    format!("graph of partition {p} read {} rows", ids.len()),
                ));
            }
            for i in 0..len {
                let nb = lists.value(i);
                let nb = nb
                    .as_primitive_opt::<UInt32Type>()
                    .ok_or_else(|| corrupt(INDEX_FILE, "__neighbors items are not uint32"))?;
                rows.push((ids.value(i), nb.values().to_vec()));
            }
        }
        let graph = if len == 0 && n == 0 {
            Graph::from_rows(&[], &[0, 0], 0)
        } else {
            Graph::from_rows(&rows, &level_offsets, entry).filter(|g| g.len() == n)
        }
        .ok_or_else(|| corrupt(INDEX_FILE, format!("inconsistent HNSW graph in partition {p}")))?;
        let graph = Arc::new(graph);
        if let Ok(mut c) = self.graphs.lock() {
            if c.len() >= CACHED_PARTITIONS {
                c.clear();
            }
            c.insert(p, graph.clone());
        }
        Ok(graph)
    }

    fn sub_index_stats(&self) -> Value {
        let metric = self.metric.as_str();
        let mut s = match &self.storage {
            StorageReader::Flat => json!({"dim": self.dim, "index_type": "FLAT", "metric_type": metric}),
            StorageReader::Sq(sq) => json!({
                "dim": self.dim, "num_bits": 8,
                "bounds": {"start": sq.start, "end": sq.end},
                "index_type": "SQ", "metric_type": metric,
            }),
            StorageReader::RowsOnly { num_bits } => json!({
                "dim": self.dim, "num_bits": num_bits, "index_type": "RQ", "metric_type": metric,
            }),
            StorageReader::Pq { pq, transposed } => json!({
                "metric_type": if self.metric == Metric::Cosine { "l2" } else { metric },
                "nbits": pq.num_bits, "num_sub_vectors": pq.num_sub_vectors,
                "dimension": self.dim, "index_type": "PQ", "transposed": transposed,
            }),
        };
        if let (Some(Value::Object(h)), Value::Object(o)) = (&self.hnsw, &mut s) {
            for (k, v) in h {
                o.insert(k.clone(), v.clone());
            }
            o.insert("index_type".into(), "HNSW".into());
        }
        s
    }

    /// Statistics shaped like one segment of pylance's `index_statistics` (without
    /// `uuid`, `uri` and `centroids`, which the dataset layer knows or omits).
    pub fn statistics(&self) -> Value {
        json!({
            "index_type": self.index_type.name(),
            "metric_type": self.metric.as_str(),
            "num_partitions": self.num_partitions(),
            "sub_index": self.sub_index_stats(),
            "partitions": self.lengths.iter().map(|l| json!({"size": l})).collect::<Vec<_>>(),
            "loss": self.loss,
            "index_file_version": "V3",
        })
    }
}
