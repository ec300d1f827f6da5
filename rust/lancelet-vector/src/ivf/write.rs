//! Writing IVF index files in pylance 14's V3 layout.
//!
//! - `auxiliary.idx`: `_rowid` (uint64, row addresses) plus the storage column (`flat`,
//!   `__pq_code` or `__sq_code`), rows grouped by partition in partition order and by row
//!   address inside a partition; schema metadata `distance_type`, `lance:ivf` (= "1") and
//!   `storage_metadata` (a JSON array holding the quantizer's JSON as a string); global buffer
//!   1 holds an [`Ivf`] with the partitions' row offsets and lengths, global buffer 2 the PQ
//!   codebook [`Tensor`]. PQ codes are transposed per partition.
//! - `index.idx` of IVF_HNSW_*: the graph rows of every partition (see [`crate::hnsw`]),
//!   metadata `lance:hnsw` (one JSON string per partition: entry point, params, level
//!   offsets), `lance:index`, `lance:ivf`; the IVF offsets / lengths describe graph rows.
//! - `index.idx` otherwise: the FLAT sub-index marker: no rows, a `__flat_marker` column, metadata
//!   `lance:index` (type and distance type), `lance:flat` (one empty string per partition)
//!   and `lance:ivf`; global buffer 1 holds the centroids tensor, the loss and zero
//!   offsets/lengths.

use std::sync::Arc;

use arrow_array::{
    ArrayRef, FixedSizeListArray, Float32Array, ListArray, RecordBatch, UInt32Array, UInt64Array, UInt8Array,
};
use arrow_buffer::{OffsetBuffer, ScalarBuffer};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use lancelet_file::{FileVersion, FileWriter, WriterOptions};
use prost::Message;

use super::read::{AUX_FILE, INDEX_FILE};
use super::{residuals, rows_of, IvfModel, Storage};
use crate::distance::{dot_raw, l2_raw, normalize_rows};
use crate::hnsw::{Graph, HnswParams};
use crate::kmeans::thread_count;
use crate::pq::transpose;
use crate::proto::{Ivf, Tensor};
use crate::{Error, Metric, Result};

fn fsl(name: &str, item: DataType, width: usize, values: ArrayRef, nullable: bool) -> Result<(Field, ArrayRef)> {
    let item = Arc::new(Field::new("item", item, true));
    let w = i32::try_from(width).map_err(|_| Error::InvalidArgument(format!("width {width} too large")))?;
    let array = FixedSizeListArray::try_new(item.clone(), w, values, None)?;
    Ok((
        Field::new(name, DataType::FixedSizeList(item, w), nullable),
        Arc::new(array),
    ))
}

fn write_file(
    name: &str,
    schema: SchemaRef,
    columns: Vec<ArrayRef>,
    metadata: &[(&str, String)],
    buffers: &[Vec<u8>],
    version: FileVersion,
) -> Result<Vec<u8>> {
    let opts = WriterOptions {
        version,
        ..Default::default()
    };
    let mut w = FileWriter::try_new(Vec::new(), name, schema.clone(), opts)?;
    for (i, b) in buffers.iter().enumerate() {
        let at = w.add_global_buffer(b)?;
        if at as usize != i + 1 {
            return Err(Error::InvalidArgument(format!(
                "global buffer landed at {at}, expected {}",
                i + 1
            )));
        }
    }
    for (k, v) in metadata {
        w.add_schema_metadata(k.to_string(), v.clone());
    }
    let batch = RecordBatch::try_new(schema, columns)?;
    if batch.num_rows() > 0 {
        w.write_batch(&batch)?;
    }
    Ok(w.finish()?.0)
}

/// Rows quantized per block while writing PQ / SQ storage (bounds the build's extra memory).
const ENCODE_ROWS: usize = 1 << 16;

/// Encodes `vectors` (row-major, with their row addresses) with `model` and returns the
/// index files, `auxiliary.idx` first, as `(name, bytes)`.
pub fn build(
    model: &IvfModel,
    vectors: &[f32],
    row_addrs: &[u64],
    dim: usize,
    version: FileVersion,
) -> Result<Vec<(String, Vec<u8>)>> {
    let rows = rows_of(vectors, dim)?;
    if dim != model.dim {
        return Err(Error::InvalidArgument(format!(
            "vectors have dimension {dim}, the model {}",
            model.dim
        )));
    }
    if rows != row_addrs.len() {
        return Err(Error::InvalidArgument(format!(
            "{rows} vectors but {} row addresses",
            row_addrs.len()
        )));
    }
    let itype = model.params.index_type;
    let metric = model.metric();
    let np = model.num_partitions();
    // Cosine indexes store and quantize unit vectors; other metrics use the input as it is
    // (no copy: the column can be most of the build's memory).
    let normalized;
    let data: &[f32] = if metric == Metric::Cosine {
        let mut d = vectors.to_vec();
        normalize_rows(&mut d, dim);
        normalized = d;
        &normalized
    } else {
        vectors
    };
    let parts = model.assign(data);
    let mut order: Vec<usize> = (0..rows).collect();
    order.sort_by_key(|&i| (parts[i], row_addrs[i]));
    let mut lengths = vec![0u32; np];
    for &p in &parts {
        lengths[p as usize] = lengths[p as usize]
            .checked_add(1)
            .ok_or_else(|| Error::InvalidArgument("a partition exceeds u32::MAX rows".into()))?;
    }
    let offsets: Vec<u64> = lengths
        .iter()
        .scan(0u64, |acc, &l| {
            let o = *acc;
            *acc += u64::from(l);
            Some(o)
        })
        .collect();
    // The rows of `order` as one row-major block.
    let gather = |rows: &[usize]| -> Vec<f32> {
        let mut out = Vec::with_capacity(rows.len() * dim);
        for &i in rows {
            out.extend_from_slice(&data[i * dim..(i + 1) * dim]);
        }
        out
    };
    // Every vector in stored order, when the files hold them (FLAT) or graphs are built over
    // them (HNSW); quantized storages encode `ENCODE_ROWS` rows at a time instead.
    let sorted: Vec<f32> = if itype.is_hnsw() || itype.storage() == Storage::Flat {
        gather(&order)
    } else {
        Vec::new()
    };
    let graphs = if itype.is_hnsw() {
        Some(build_graphs(model, &sorted, &offsets, &lengths))
    } else {
        None
    };
    let rowids = UInt64Array::from_iter_values(order.iter().map(|&i| row_addrs[i]));

    let mut buffers = vec![Ivf {
        offsets: offsets.clone(),
        lengths: lengths.clone(),
        ..Default::default()
    }
    .encode_to_vec()];
    let (storage_field, storage_col, storage_md) = match itype.storage() {
        Storage::Flat => {
            let vt = model.value_type;
            let (f, a) = fsl("flat", vt.arrow_type(), dim, vt.array(sorted), false)?;
            (f, a, format!("{{\"dim\":{dim}}}"))
        }
        Storage::Sq => {
            let sq = model
                .sq
                .as_ref()
                .ok_or_else(|| Error::InvalidArgument("IVF_SQ model without a scalar quantizer".into()))?;
            let codes = if sorted.is_empty() {
                order.chunks(ENCODE_ROWS).flat_map(|c| sq.encode(&gather(c))).collect()
            } else {
                sq.encode(&sorted)
            };
            let (f, a) = fsl(
                "__sq_code",
                DataType::UInt8,
                dim,
                Arc::new(UInt8Array::from(codes)),
                true,
            )?;
            let md = format!(
                "{{\"dim\":{dim},\"num_bits\":8,\"bounds\":{{\"start\":{},\"end\":{}}}}}",
                serde_json::Value::from(sq.start),
                serde_json::Value::from(sq.end)
            );
            (f, a, md)
        }
        Storage::Pq => {
            let pq = model
                .pq
                .as_ref()
                .ok_or_else(|| Error::InvalidArgument("IVF_PQ model without a product quantizer".into()))?;
            let mut packed = Vec::with_capacity(rows * pq.code_width());
            for chunk in order.chunks(ENCODE_ROWS) {
                let chunk_parts: Vec<u32> = chunk.iter().map(|&i| parts[i]).collect();
                let block = if sorted.is_empty() {
                    gather(chunk)
                } else {
                    let first = packed.len() / pq.code_width().max(1);
                    sorted[first * dim..(first + chunk.len()) * dim].to_vec()
                };
                packed.extend(pq.encode(&residuals(model, &block, &chunk_parts))?);
            }
            let w = pq.code_width();
            let mut codes = Vec::with_capacity(packed.len());
            for (&o, &l) in offsets.iter().zip(&lengths) {
                let (o, l) = (o as usize, l as usize);
                codes.extend(transpose(&packed[o * w..(o + l) * w], l, w));
            }
            buffers.push(
                Tensor {
                    data_type: model.value_type.tensor_code(),
                    shape: vec![pq.num_centroids() as u32, dim as u32],
                    data: model.value_type.le_bytes(&pq.codebook),
                }
                .encode_to_vec(),
            );
            let (f, a) = fsl("__pq_code", DataType::UInt8, w, Arc::new(UInt8Array::from(codes)), true)?;
            let md = format!(
                "{{\"codebook_position\":2,\"nbits\":{},\"num_sub_vectors\":{},\"dimension\":{dim},\"codebook_tensor\":[],\"transposed\":true}}",
                pq.num_bits, pq.num_sub_vectors
            );
            (f, a, md)
        }
        Storage::Rq => return Err(Error::Unsupported("writing IVF_RQ indexes".into())),
    };
    let aux_schema = Arc::new(Schema::new(vec![
        Field::new("_rowid", DataType::UInt64, true),
        storage_field,
    ]));
    let aux_md = [
        ("distance_type", metric.as_str().to_string()),
        ("lance:ivf", "1".to_string()),
        (
            "storage_metadata",
            serde_json::Value::from(vec![storage_md]).to_string(),
        ),
    ];
    let aux = write_file(
        AUX_FILE,
        aux_schema,
        vec![Arc::new(rowids), storage_col],
        &aux_md,
        &buffers,
        version,
    )?;

    let index = match &graphs {
        Some(g) => hnsw_index_file(model, g, version)?,
        None => flat_index_file(model, version)?,
    };
    Ok(vec![(AUX_FILE.to_string(), aux), (INDEX_FILE.to_string(), index)])
}

/// The IVF message of `index.idx`: centroids, loss and the sub-index row ranges.
fn index_ivf(model: &IvfModel, offsets: Vec<u64>, lengths: Vec<u32>) -> Ivf {
    let (np, dim) = (model.num_partitions(), model.dim);
    Ivf {
        offsets,
        lengths,
        centroids_tensor: Some(Tensor {
            data_type: model.value_type.tensor_code(),
            shape: vec![np as u32, dim as u32],
            data: model.value_type.le_bytes(&model.centroids),
        }),
        loss: Some(model.loss),
        ..Default::default()
    }
}

fn index_type_md(model: &IvfModel) -> (&'static str, String) {
    (
        "lance:index",
        format!(
            "{{\"type\":\"{}\",\"distance_type\":\"{}\"}}",
            model.params.index_type.name(),
            model.metric().as_str()
        ),
    )
}

/// `index.idx` of a FLAT sub-index: no rows, one empty `lance:flat` entry per partition.
fn flat_index_file(model: &IvfModel, version: FileVersion) -> Result<Vec<u8>> {
    let np = model.num_partitions();
    let index_schema = Arc::new(Schema::new(vec![Field::new("__flat_marker", DataType::UInt64, false)]));
    let index_md = [
        index_type_md(model),
        (
            "lance:flat",
            serde_json::Value::from(vec![String::new(); np]).to_string(),
        ),
        ("lance:ivf", "1".to_string()),
    ];
    let empty: ArrayRef = Arc::new(UInt64Array::from(Vec::<u64>::new()));
    write_file(
        INDEX_FILE,
        index_schema,
        vec![empty],
        &index_md,
        &[index_ivf(model, vec![0; np], vec![0; np]).encode_to_vec()],
        version,
    )
}

/// One graph per partition over the partition's rows (in stored order), built on scoped
/// threads; partition `p` draws its levels from `seed + p`. Distances are exact: squared L2
/// of the (for cosine, normalised) vectors, or `-x·y` for dot.
fn build_graphs(model: &IvfModel, sorted: &[f32], offsets: &[u64], lengths: &[u32]) -> Vec<Graph> {
    let dim = model.dim;
    let p = &model.params;
    let dot = model.metric() == Metric::Dot;
    let one = |i: usize| {
        let (o, n) = (offsets[i] as usize, lengths[i] as usize);
        let rows = &sorted[o * dim..(o + n) * dim];
        let v = |a: u32| &rows[a as usize * dim..(a as usize + 1) * dim];
        let mut hp = HnswParams::new(p.seed.wrapping_add(i as u64));
        hp.m = p.hnsw_m.max(2);
        hp.ef_construction = p.hnsw_ef_construction.max(1);
        Graph::build(
            n,
            &hp,
            |a, b| if dot { -dot_raw(v(a), v(b)) } else { l2_raw(v(a), v(b)) },
        )
    };
    let np = lengths.len();
    let threads = thread_count(p.threads).min(np).max(1);
    if threads == 1 {
        return (0..np).map(one).collect();
    }
    // Partitions are dealt round-robin (they differ in size); results return in order.
    let one = &one;
    let parts: Option<Vec<Vec<(usize, Graph)>>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| s.spawn(move || (t..np).step_by(threads).map(|i| (i, one(i))).collect::<Vec<_>>()))
            .collect();
        handles.into_iter().map(|h| h.join().ok()).collect()
    });
    match parts {
        Some(parts) => {
            let mut all: Vec<(usize, Graph)> = parts.into_iter().flatten().collect();
            all.sort_by_key(|(i, _)| *i);
            all.into_iter().map(|(_, g)| g).collect()
        }
        None => (0..np).map(one).collect(),
    }
}

/// `index.idx` of an HNSW sub-index: the graph rows of every partition, `lance:hnsw` with
/// one JSON string per partition, and IVF offsets / lengths over the graph rows.
fn hnsw_index_file(model: &IvfModel, graphs: &[Graph], version: FileVersion) -> Result<Vec<u8>> {
    let p = &model.params;
    let mut ids = Vec::new();
    let mut nbr_offsets = vec![0i32];
    let mut nbrs = Vec::new();
    let mut dists = Vec::new();
    let (mut offsets, mut lengths, mut infos) = (Vec::new(), Vec::new(), Vec::new());
    for g in graphs {
        let rows = g.rows();
        offsets.push(ids.len() as u64);
        lengths.push(u32::try_from(rows.len()).map_err(|_| Error::InvalidArgument("graph too large".into()))?);
        for (node, list) in rows {
            ids.push(node);
            nbrs.extend(list.iter().map(|x| x.1));
            dists.extend(list.iter().map(|x| x.0));
            let end = i32::try_from(nbrs.len()).map_err(|_| Error::InvalidArgument("graph too large".into()))?;
            nbr_offsets.push(end);
        }
        infos.push(
            serde_json::json!({
                "entry_point": g.entry_point,
                "params": {
                    "max_level": g.max_level,
                    "m": p.hnsw_m,
                    "ef_construction": p.hnsw_ef_construction,
                    "prefetch_distance": 2,
                },
                "level_offsets": g.level_offsets(),
            })
            .to_string(),
        );
    }
    let item_u32 = Arc::new(Field::new("item", DataType::UInt32, true));
    let item_f32 = Arc::new(Field::new("item", DataType::Float32, true));
    let list_offsets = OffsetBuffer::new(ScalarBuffer::from(nbr_offsets));
    let neighbours = ListArray::try_new(
        item_u32.clone(),
        list_offsets.clone(),
        Arc::new(UInt32Array::from(nbrs)),
        None,
    )?;
    let distances = ListArray::try_new(
        item_f32.clone(),
        list_offsets,
        Arc::new(Float32Array::from(dists)),
        None,
    )?;
    let schema = Arc::new(Schema::new(vec![
        Field::new("__vector_id", DataType::UInt32, true),
        Field::new("__neighbors", DataType::List(item_u32), true),
        Field::new("_distance", DataType::List(item_f32), true),
    ]));
    let md = [
        ("lance:hnsw", serde_json::Value::from(infos).to_string()),
        index_type_md(model),
        ("lance:ivf", "1".to_string()),
    ];
    write_file(
        INDEX_FILE,
        schema,
        vec![
            Arc::new(UInt32Array::from(ids)),
            Arc::new(neighbours),
            Arc::new(distances),
        ],
        &md,
        &[index_ivf(model, offsets, lengths).encode_to_vec()],
        version,
    )
}
