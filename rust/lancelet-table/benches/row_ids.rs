//! Criterion benches of the row id codecs and of building the row id index.
//!
//! `index/100M_ranges` is the common case: 100 appended fragments of 1M rows each.
//! `index/100M_1pct_deleted` adds 10,000 scattered deletions per fragment (about a million
//! runs). `index/10M_bitmaps` is a dataset after heavy updates and compaction: every
//! fragment's ids are every other id, so no two rows share a run.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs, reason = "bench setup")]

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use lancelet_table::rowids::{decode_row_id_segments, decode_row_ids, encode_row_ids, RowIdIndexBuilder};

const FRAG: u64 = 1 << 20;

fn lcg(seed: u64) -> impl FnMut() -> u64 {
    let mut s = seed;
    move || {
        s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        s >> 33
    }
}

/// Encoded sequences of `frags` fragments of FRAG rows, ids from `ids(fragment)`.
fn fragments(frags: u64, ids: impl Fn(u64) -> Vec<u64>) -> Vec<Vec<u8>> {
    (0..frags).map(|f| encode_row_ids(&ids(f))).collect()
}

fn build(encoded: &[Vec<u8>], deleted: &[Vec<u32>]) -> usize {
    let mut b = RowIdIndexBuilder::new();
    for (f, bytes) in encoded.iter().enumerate() {
        let segs = decode_row_id_segments(bytes, FRAG, "bench").unwrap();
        b.add_fragment(f as u64, &segs, &deleted[f]);
    }
    b.finish().unwrap().num_runs()
}

fn index(c: &mut Criterion) {
    let mut g = c.benchmark_group("index");
    g.sample_size(10);
    let ranges = fragments(100, |f| (f * FRAG..(f + 1) * FRAG).collect());
    let none = vec![Vec::new(); 100];
    g.throughput(Throughput::Elements(100 * FRAG));
    g.bench_function("100M_ranges", |b| b.iter(|| build(&ranges, &none)));
    let mut next = lcg(7);
    let deleted: Vec<Vec<u32>> = (0..100)
        .map(|_| {
            let mut d: Vec<u32> = (0..10_000).map(|_| (next() % FRAG) as u32).collect();
            d.sort_unstable();
            d.dedup();
            d
        })
        .collect();
    g.bench_function("100M_1pct_deleted", |b| b.iter(|| build(&ranges, &deleted)));
    let sparse = fragments(10, |f| (0..FRAG).map(|i| 2 * (f * FRAG + i)).collect());
    g.throughput(Throughput::Elements(10 * FRAG));
    g.bench_function("10M_bitmaps", |b| b.iter(|| build(&sparse, &none[..10])));
    g.finish();

    let mut b = RowIdIndexBuilder::new();
    for (f, bytes) in ranges.iter().enumerate() {
        b.add_fragment(
            f as u64,
            &decode_row_id_segments(bytes, FRAG, "bench").unwrap(),
            &deleted[f],
        );
    }
    let idx = b.finish().unwrap();
    let mut next = lcg(11);
    let probes: Vec<u64> = (0..1_000_000).map(|_| next() % (100 * FRAG)).collect();
    let mut g = c.benchmark_group("lookup");
    g.throughput(Throughput::Elements(probes.len() as u64));
    g.bench_function("1M_random_in_100M_1pct_deleted", |b| {
        b.iter(|| probes.iter().filter_map(|&p| idx.get(p)).count())
    });
    g.finish();
}

fn codecs(c: &mut Criterion) {
    let mut next = lcg(3);
    let shapes: Vec<(&str, Vec<u64>)> = vec![
        ("range", (0..FRAG).collect()),
        (
            "holes",
            (0..2 * FRAG).filter(|v| v % 1000 != 7).take(FRAG as usize).collect(),
        ),
        ("bitmap", (0..FRAG).map(|v| 2 * v).collect()),
        ("sorted", (0..FRAG).map(|v| v * 100_000).collect()),
        ("array", (0..FRAG).map(|_| next() % (1 << 40)).collect()),
    ];
    let mut g = c.benchmark_group("codec");
    g.sample_size(10);
    g.throughput(Throughput::Elements(FRAG));
    for (name, ids) in &shapes {
        g.bench_function(format!("encode_{name}"), |b| b.iter(|| encode_row_ids(ids).len()));
        let bytes = encode_row_ids(ids);
        g.bench_function(format!("decode_{name}"), |b| {
            b.iter_batched(
                || (),
                |_| decode_row_ids(&bytes, FRAG, "bench").unwrap().len(),
                BatchSize::SmallInput,
            )
        });
    }
    g.finish();
}

criterion_group!(benches, index, codecs);
criterion_main!(benches);
