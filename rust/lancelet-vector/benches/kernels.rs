//! Micro-benchmarks of the hot loops: distance kernels over 128-dim `f32` rows, the PQ table
//! and ADC scan over 1M codes, and one k-means iteration on 65k x 128 with 256 centroids.
//!
//! `cargo bench -p lancelet-vector --bench kernels`

#![allow(
    missing_docs,
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a failed unwrap or panic is a failed test"
)]

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use lancelet_vector::distance::distances;
use lancelet_vector::kmeans::{self, KMeansInit, KMeansParams};
use lancelet_vector::pq::ProductQuantizer;
use lancelet_vector::Metric;

const DIM: usize = 128;

/// Deterministic pseudo-random values in [-1, 1).
fn data(n: usize, seed: u64) -> Vec<f32> {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s >> 40) as f32 / (1u64 << 23) as f32 - 1.0
        })
        .collect()
}

fn bench_distances(c: &mut Criterion) {
    let q = data(DIM, 1);
    let mut g = c.benchmark_group("distances_128d");
    for rows in [1_000usize, 10_000, 100_000] {
        let v = data(rows * DIM, 2);
        let mut out = vec![0f32; rows];
        g.throughput(Throughput::Bytes((rows * DIM * 4) as u64));
        for m in [Metric::L2, Metric::Dot, Metric::Cosine] {
            g.bench_with_input(BenchmarkId::new(m.as_str(), rows), &rows, |b, _| {
                b.iter(|| distances(m, black_box(&q), black_box(&v), &mut out).unwrap())
            });
        }
    }
    g.finish();
}

fn bench_pq(c: &mut Criterion) {
    let m = 16;
    let pq = ProductQuantizer::new(DIM, m, 8, data(256 * DIM, 3)).unwrap();
    let q = data(DIM, 4);
    let rows = 1_000_000usize;
    let codes: Vec<u8> = data(rows * m, 5).iter().map(|x| ((x + 1.0) * 127.9) as u8).collect();
    let mut g = c.benchmark_group("pq");
    g.bench_function("build_table_m16", |b| {
        b.iter(|| pq.build_table(black_box(&q), Metric::L2))
    });
    let table = pq.build_table(&q, Metric::L2);
    g.throughput(Throughput::Elements(rows as u64));
    g.sample_size(20);
    g.bench_function("adc_1m_codes_m16", |b| {
        b.iter(|| {
            let mut best = f32::INFINITY;
            for row in codes.chunks_exact(m) {
                best = best.min(pq.adc(&table, row));
            }
            best
        })
    });
    let vecs = data(20_000 * DIM, 6);
    g.throughput(Throughput::Elements(20_000));
    g.sample_size(10);
    g.bench_function("encode_20k_m16", |b| b.iter(|| pq.encode(black_box(&vecs)).unwrap()));
    g.finish();
}

fn bench_kmeans(c: &mut Criterion) {
    let n = 65_536;
    let v = data(n * DIM, 7);
    let mut g = c.benchmark_group("kmeans");
    g.sample_size(10);
    g.throughput(Throughput::Elements(n as u64));
    g.bench_function("iter_65k_x128_k256", |b| {
        b.iter(|| {
            let mut p = KMeansParams::new(256);
            p.max_iters = 1;
            p.init = KMeansInit::Random;
            kmeans::train(black_box(&v), DIM, &p).unwrap()
        })
    });
    g.finish();
}

criterion_group!(benches, bench_distances, bench_pq, bench_kmeans);
criterion_main!(benches);
