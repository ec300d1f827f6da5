//! Builds indexes with our writer, reads them back with our reader and checks search
//! against brute force. With `LANCELET_VECTOR_EXPORT=<dir>` the files, the details bytes
//! and our answers are also written to `<dir>/<case>/` for tests/data/vector/check_pylance_reads_ours.py.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a failed unwrap or panic is a failed test"
)]

use std::path::PathBuf;

use lancelet_file::FileVersion;
use lancelet_index::scalar::MemoryStore;
use lancelet_vector::distance;
use lancelet_vector::ivf::{self, IvfIndex, VectorBuildParams, VectorIndexType};
use lancelet_vector::{Error, Metric, TopK};
use serde_json::json;

const DIM: usize = 16;

fn vectors() -> Vec<f32> {
    let bytes =
        std::fs::read(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/vector/vectors.f32")).unwrap();
    bytes
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect()
}

fn queries(data: &[f32]) -> Vec<Vec<f32>> {
    [3usize, 500, 997, 42]
        .iter()
        .enumerate()
        .map(|(j, &i)| {
            data[i * DIM..(i + 1) * DIM]
                .iter()
                .map(|x| x + 0.1 * (j as f32 - 1.5))
                .collect()
        })
        .collect()
}

fn brute(metric: Metric, data: &[f32], q: &[f32], k: usize) -> Vec<(f32, u64)> {
    let mut t = TopK::new(k);
    for (i, v) in data.chunks_exact(DIM).enumerate() {
        t.push(distance::distance(metric, q, v).unwrap(), i as u64);
    }
    t.into_sorted_vec()
}

struct Case {
    name: &'static str,
    itype: VectorIndexType,
    metric: Metric,
    m: Option<usize>,
    bits: u32,
    min_recall: f64,
}

const CASES: &[Case] = &[
    Case {
        name: "flat_l2",
        itype: VectorIndexType::IvfFlat,
        metric: Metric::L2,
        m: None,
        bits: 8,
        min_recall: 1.0,
    },
    Case {
        name: "flat_cosine",
        itype: VectorIndexType::IvfFlat,
        metric: Metric::Cosine,
        m: None,
        bits: 8,
        min_recall: 1.0,
    },
    Case {
        name: "flat_dot",
        itype: VectorIndexType::IvfFlat,
        metric: Metric::Dot,
        m: None,
        bits: 8,
        min_recall: 1.0,
    },
    Case {
        name: "pq_l2",
        itype: VectorIndexType::IvfPq,
        metric: Metric::L2,
        m: Some(4),
        bits: 8,
        min_recall: 0.4,
    },
    Case {
        name: "pq_cosine",
        itype: VectorIndexType::IvfPq,
        metric: Metric::Cosine,
        m: Some(4),
        bits: 8,
        min_recall: 0.4,
    },
    Case {
        name: "pq_dot",
        itype: VectorIndexType::IvfPq,
        metric: Metric::Dot,
        m: Some(4),
        bits: 8,
        min_recall: 0.3,
    },
    Case {
        name: "pq4_l2",
        itype: VectorIndexType::IvfPq,
        metric: Metric::L2,
        m: Some(8),
        bits: 4,
        min_recall: 0.2,
    },
    Case {
        name: "sq_l2",
        itype: VectorIndexType::IvfSq,
        metric: Metric::L2,
        m: None,
        bits: 8,
        min_recall: 0.8,
    },
    Case {
        name: "sq_cosine",
        itype: VectorIndexType::IvfSq,
        metric: Metric::Cosine,
        m: None,
        bits: 8,
        min_recall: 0.8,
    },
    Case {
        name: "sq_dot",
        itype: VectorIndexType::IvfSq,
        metric: Metric::Dot,
        m: None,
        bits: 8,
        min_recall: 0.8,
    },
    Case {
        name: "hnsw_flat_l2",
        itype: VectorIndexType::IvfHnswFlat,
        metric: Metric::L2,
        m: None,
        bits: 8,
        min_recall: 0.9,
    },
    Case {
        name: "hnsw_sq_l2",
        itype: VectorIndexType::IvfHnswSq,
        metric: Metric::L2,
        m: None,
        bits: 8,
        min_recall: 0.8,
    },
    Case {
        name: "hnsw_pq_l2",
        itype: VectorIndexType::IvfHnswPq,
        metric: Metric::L2,
        m: Some(4),
        bits: 8,
        min_recall: 0.4,
    },
    Case {
        name: "hnsw_sq_cosine",
        itype: VectorIndexType::IvfHnswSq,
        metric: Metric::Cosine,
        m: None,
        bits: 8,
        min_recall: 0.8,
    },
];

/// HNSW cases search through the graph with this `ef` (pylance is asked for the same).
fn ef_of(c: &Case) -> Option<usize> {
    c.itype.is_hnsw().then_some(40)
}

fn params(c: &Case) -> VectorBuildParams {
    let mut p = VectorBuildParams::new(c.itype, c.metric);
    p.num_partitions = Some(4);
    p.num_sub_vectors = c.m;
    p.num_bits = c.bits;
    p.max_iters = 20;
    p
}

#[tokio::test]
async fn our_indexes_search_like_brute_force() {
    let data = vectors();
    let addrs: Vec<u64> = (0..(data.len() / DIM) as u64).collect();
    let export = std::env::var_os("LANCELET_VECTOR_EXPORT").map(PathBuf::from);
    for c in CASES {
        let model = ivf::train_model(&data, DIM, &params(c)).unwrap();
        assert_eq!(model.num_partitions(), 4);
        let files = ivf::build(&model, &data, &addrs, DIM, FileVersion::V2_0).unwrap();
        assert_eq!(files[0].0, "auxiliary.idx");
        assert_eq!(files[1].0, "index.idx");
        // Deterministic: a second training gives the same model and files of the same size
        // (schema metadata order may differ between writes).
        let model2 = ivf::train_model(&data, DIM, &params(c)).unwrap();
        assert!(model2 == model, "{}: training is not deterministic", c.name);
        let again = ivf::build(&model2, &data, &addrs, DIM, FileVersion::V2_0).unwrap();
        assert!(
            files.iter().zip(&again).all(|(a, b)| a.1.len() == b.1.len()),
            "{}",
            c.name
        );
        let store = MemoryStore::new();
        for (n, b) in &files {
            store.insert(n.as_str(), b.clone());
        }
        let idx = IvfIndex::open(&store).await.unwrap();
        assert_eq!((idx.index_type(), idx.metric(), idx.dim()), (c.itype, c.metric, DIM));
        assert_eq!(idx.partition_sizes().iter().sum::<usize>(), addrs.len());
        let mut results = Vec::new();
        let mut hits = 0usize;
        for (qi, q) in queries(&data).iter().enumerate() {
            let want = brute(c.metric, &data, q, 10);
            let got = idx.search_ef(q, 10, 4, ef_of(c), None, false).await.unwrap();
            assert_eq!(got.len(), 10);
            if c.min_recall >= 1.0 {
                let offset = if c.metric == Metric::Dot { 1.0 } else { 0.0 };
                for (g, w) in got.iter().zip(&want) {
                    assert_eq!(g.1, w.1, "{}", c.name);
                    assert!(
                        (g.0 - (w.0 + offset)).abs() < 1e-3 * w.0.abs().max(1.0),
                        "{}: {g:?} vs {w:?}",
                        c.name
                    );
                }
            }
            hits += got.iter().filter(|g| want.iter().any(|w| w.1 == g.1)).count();
            // A filter only lets allowed rows through.
            let even = |r: u64| r.is_multiple_of(2);
            let filtered = idx.search_ef(q, 10, 4, ef_of(c), Some(&even), false).await.unwrap();
            assert_eq!(filtered.len(), 10);
            assert!(filtered.iter().all(|(_, r)| r % 2 == 0));
            for nprobes in [1usize, 2, 4] {
                let got = idx.search_ef(q, 10, nprobes, ef_of(c), None, false).await.unwrap();
                results.push(json!({
                    "query": qi, "nprobes": nprobes, "ef": ef_of(c),
                    "row_ids": got.iter().map(|g| g.1).collect::<Vec<_>>(),
                    "distances": got.iter().map(|g| g.0).collect::<Vec<_>>(),
                }));
            }
        }
        let recall = hits as f64 / 40.0;
        assert!(recall >= c.min_recall, "{}: recall {recall}", c.name);
        if let Some(dir) = &export {
            let d = dir.join(c.name);
            std::fs::create_dir_all(&d).unwrap();
            for (n, b) in &files {
                std::fs::write(d.join(n), b).unwrap();
            }
            let meta = json!({
                "index_type": c.itype.name(), "metric": c.metric.as_str(),
                "details_type_url": ivf::DETAILS_TYPE_URL,
                "details_hex": ivf::details(&model).iter().map(|b| format!("{b:02x}")).collect::<String>(),
                "index_version": ivf::INDEX_VERSION,
                "partition_sizes": idx.partition_sizes(),
                "queries": queries(&data), "k": 10, "results": results,
            });
            std::fs::write(d.join("ours.json"), serde_json::to_vec_pretty(&meta).unwrap()).unwrap();
        }
    }
}

#[tokio::test]
async fn file_versions_and_errors() {
    let data = vectors();
    let addrs: Vec<u64> = (0..(data.len() / DIM) as u64).map(|i| (3u64 << 32) | i).collect();
    let model = ivf::train_model(&data, DIM, &params(&CASES[3])).unwrap();
    for v in [FileVersion::V2_1, FileVersion::V2_2] {
        let files = ivf::build(&model, &data, &addrs, DIM, v).unwrap();
        let store = MemoryStore::new();
        for (n, b) in files {
            store.insert(n, b);
        }
        let idx = IvfIndex::open(&store).await.unwrap();
        let got = idx.search(&data[..DIM], 5, 4, None, false).await.unwrap();
        assert_eq!(got[0].1, 3u64 << 32);
        assert!(idx.search(&data[..DIM - 1], 5, 4, None, false).await.is_err());
        assert!(idx.search(&data[..DIM], 0, 4, None, false).await.unwrap().is_empty());
    }
    assert!(ivf::build(&model, &data, &addrs[1..], DIM, FileVersion::V2_0).is_err());
    let mut hnsw = model.clone();
    hnsw.params.index_type = VectorIndexType::IvfRq;
    assert!(matches!(
        ivf::build(&hnsw, &data, &addrs, DIM, FileVersion::V2_0),
        Err(Error::Unsupported(_))
    ));
    assert!(IvfIndex::open(&MemoryStore::new()).await.is_err());
}

#[tokio::test]
async fn damaged_files_are_errors_not_panics() {
    let data = vectors();
    let addrs: Vec<u64> = (0..(data.len() / DIM) as u64).collect();
    for c in [&CASES[0], &CASES[3], &CASES[6], &CASES[7], &CASES[11], &CASES[12]] {
        let model = ivf::train_model(&data, DIM, &params(c)).unwrap();
        let files = ivf::build(&model, &data, &addrs, DIM, FileVersion::V2_0).unwrap();
        for target in 0..2 {
            let len = files[target].1.len();
            for step in (0..len).step_by((len / 97).max(1)) {
                let store = MemoryStore::new();
                for (i, (n, b)) in files.iter().enumerate() {
                    let mut b = b.clone();
                    if i == target {
                        b[step] ^= 0x5a;
                    }
                    store.insert(n.as_str(), b);
                }
                if let Ok(idx) = IvfIndex::open(&store).await {
                    let _ = idx.search(&data[..DIM], 10, 4, None, false).await;
                    let _ = idx.search_ef(&data[..DIM], 10, 4, Some(20), None, false).await;
                    let _ = idx.model();
                    let _ = idx.statistics();
                }
            }
        }
    }
}

async fn open_files(files: &[(String, Vec<u8>)]) -> IvfIndex {
    let store = MemoryStore::new();
    for (n, b) in files {
        store.insert(n.as_str(), b.clone());
    }
    IvfIndex::open(&store).await.unwrap()
}

/// Delta segments: a model read back from an index encodes new rows exactly like the model
/// that built it (same centroids, codebook / bounds, partitions and codes).
#[tokio::test]
async fn model_of_an_opened_index_encodes_like_the_original() {
    let data = vectors();
    let n = data.len() / DIM;
    let (old, new) = data.split_at((n - 200) * DIM);
    let old_addrs: Vec<u64> = (0..(n - 200) as u64).collect();
    let new_addrs: Vec<u64> = (0..200u64).map(|i| (1u64 << 32) | i).collect();
    for c in CASES {
        let model = ivf::train_model(old, DIM, &params(c)).unwrap();
        let files = ivf::build(&model, old, &old_addrs, DIM, FileVersion::V2_0).unwrap();
        let read = open_files(&files).await.model().unwrap();
        assert_eq!(read.centroids, model.centroids, "{}", c.name);
        assert_eq!(read.pq, model.pq, "{}", c.name);
        // SQ bounds go through JSON; serde_json (like pylance's reader) may parse them one
        // f64 ulp off, which must not change a single code.
        if let (Some(a), Some(b)) = (&read.sq, &model.sq) {
            assert!((a.start - b.start).abs() <= 1e-12 * b.start.abs().max(1.0));
            assert!((a.end - b.end).abs() <= 1e-12 * b.end.abs().max(1.0));
            assert_eq!(a.encode(new), b.encode(new), "{}", c.name);
            assert_eq!(a.encode(old), b.encode(old), "{}", c.name);
        } else {
            assert_eq!(read.sq, model.sq, "{}", c.name);
        }
        assert_eq!(read.loss, model.loss, "{}", c.name);
        let (rp, mp) = (&read.params, &model.params);
        assert_eq!(
            (
                rp.index_type,
                rp.metric,
                rp.num_bits,
                rp.num_sub_vectors,
                rp.num_partitions
            ),
            (
                mp.index_type,
                mp.metric,
                mp.num_bits,
                mp.num_sub_vectors,
                mp.num_partitions
            ),
            "{}",
            c.name
        );
        assert_eq!(read.assign(new), model.assign(new), "{}", c.name);
        if let (Some(a), Some(b)) = (&read.pq, &model.pq) {
            assert_eq!(a.encode(new).unwrap(), b.encode(new).unwrap());
        }
        let a = ivf::build(&read, new, &new_addrs, DIM, FileVersion::V2_0).unwrap();
        let b = ivf::build(&model, new, &new_addrs, DIM, FileVersion::V2_0).unwrap();
        let (ia, ib) = (open_files(&a).await, open_files(&b).await);
        assert_eq!(ia.partition_sizes(), ib.partition_sizes(), "{}", c.name);
        let (ma, mb) = (ia.model().unwrap(), ib.model().unwrap());
        assert_eq!((ma.centroids, ma.pq), (mb.centroids, mb.pq), "{}", c.name);
        for q in queries(&data) {
            let x = ia.search(&q, 10, 4, None, false).await.unwrap();
            let y = ib.search(&q, 10, 4, None, false).await.unwrap();
            assert_eq!(x, y, "{}", c.name);
        }
    }
}

/// The graph walk against brute force on one larger partition: recall@10 at several `ef`,
/// and the scan (`ef = None`) finds at least what the graph finds.
#[tokio::test]
async fn hnsw_graph_search_recall() {
    let (n, dim) = (6000usize, 32usize);
    let mut s = 0x2545_F491_4F6C_DD1Du64;
    let mut next = || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        (s >> 40) as f32 / (1u64 << 23) as f32 - 1.0
    };
    let data: Vec<f32> = (0..n * dim).map(|_| next()).collect();
    let queries: Vec<Vec<f32>> = (0..40).map(|_| (0..dim).map(|_| next()).collect()).collect();
    let addrs: Vec<u64> = (0..n as u64).collect();
    for itype in [VectorIndexType::IvfHnswFlat, VectorIndexType::IvfHnswSq] {
        let mut p = VectorBuildParams::new(itype, Metric::L2);
        p.num_partitions = Some(2);
        p.max_iters = 10;
        let model = ivf::train_model(&data, dim, &p).unwrap();
        let files = ivf::build(&model, &data, &addrs, dim, FileVersion::V2_0).unwrap();
        let idx = open_files(&files).await;
        for ef in [20usize, 80, 200] {
            let mut hits = 0;
            for q in &queries {
                let mut t = TopK::new(10);
                for (i, v) in data.chunks_exact(dim).enumerate() {
                    t.push(distance::l2_sq(q, v).unwrap(), i as u64);
                }
                let want = t.into_sorted_vec();
                let got = idx.search_ef(q, 10, 2, Some(ef), None, false).await.unwrap();
                let scan = idx.search(q, 10, 2, None, false).await.unwrap();
                assert!(scan.last().unwrap().0 <= got.last().unwrap().0 + 1e-6);
                hits += got.iter().filter(|g| want.iter().any(|w| w.1 == g.1)).count();
            }
            let recall = hits as f64 / 400.0;
            let floor = match (itype, ef) {
                (_, 20) => 0.7,
                (VectorIndexType::IvfHnswSq, _) => 0.85,
                _ => 0.95,
            };
            assert!(recall >= floor, "{itype} ef {ef}: recall {recall}");
        }
    }
}
