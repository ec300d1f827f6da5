//! Builds indexes with our writer, reads them back with our reader and checks search
//! against brute force. With `LANCELET_VECTOR_EXPORT=<dir>` the files, the details bytes
//! and our answers are also written to `<dir>/<case>/` for tests/data/check_pylance_reads_ours.py.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::PathBuf;

use lancelet_file::FileVersion;
use lancelet_index::scalar::MemoryStore;
use lancelet_vector::distance;
use lancelet_vector::ivf::{self, IvfIndex, VectorBuildParams, VectorIndexType};
use lancelet_vector::{Error, Metric, TopK};
use serde_json::json;

const DIM: usize = 16;

fn vectors() -> Vec<f32> {
    let bytes = std::fs::read(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/vectors.f32")).unwrap();
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
];

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
            let got = idx.search(q, 10, 4, None, false).await.unwrap();
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
            let filtered = idx.search(q, 10, 4, Some(&even), false).await.unwrap();
            assert_eq!(filtered.len(), 10);
            assert!(filtered.iter().all(|(_, r)| r % 2 == 0));
            for nprobes in [1usize, 2, 4] {
                let got = idx.search(q, 10, nprobes, None, false).await.unwrap();
                results.push(json!({
                    "query": qi, "nprobes": nprobes,
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
    hnsw.params.index_type = VectorIndexType::IvfHnswPq;
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
    for c in [&CASES[0], &CASES[3], &CASES[6], &CASES[7]] {
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
                    let _ = idx.statistics();
                }
            }
        }
    }
}
