//! Criterion benches of scalar index builds from training batches to index files in
//! memory: BTREE on an unsorted int64 key, BITMAP on a 50-value string column and NGRAM
//! on three-word texts, 1M rows in 4 fragments of 256k (`benches/bench_index.py` compares the whole build, scan included,
//! with pylance).
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs, reason = "bench setup")]

use std::sync::Arc;

use arrow_array::{ArrayRef, Int64Array, StringArray, UInt64Array};
use arrow_schema::DataType;
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use futures::executor::block_on;
use lancelet_file::FileVersion;
use lancelet_index::scalar::{train, MemoryStore, ScalarIndexType, ScalarParams, TrainingBatch};

const ROWS: u64 = 1 << 20;
const FRAGMENT_ROWS: u64 = 1 << 18;

fn lcg(seed: u64) -> impl FnMut() -> u64 {
    let mut s = seed;
    move || {
        s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        s >> 33
    }
}

/// Training batches of `values`, one per fragment, in row address order.
fn batches(values: &ArrayRef) -> Vec<TrainingBatch> {
    (0..ROWS / FRAGMENT_ROWS)
        .map(|f| {
            let v = values.slice((f * FRAGMENT_ROWS) as usize, FRAGMENT_ROWS as usize);
            let addrs = UInt64Array::from_iter_values((0..FRAGMENT_ROWS).map(|o| f << 32 | o));
            TrainingBatch::try_new(v, addrs).unwrap()
        })
        .collect()
}

fn build(kind: ScalarIndexType, dt: &DataType, input: &[TrainingBatch]) -> usize {
    let store = MemoryStore::new();
    let input = input
        .iter()
        .map(|b| Ok(TrainingBatch::try_new(b.values.clone(), b.row_addrs.clone()).unwrap()));
    block_on(train(
        kind,
        &ScalarParams::default(),
        dt,
        input,
        &store,
        FileVersion::V2_2,
    ))
    .unwrap();
    store.names().len()
}

fn scalar_build(c: &mut Criterion) {
    let mut next = lcg(7);
    // A permutation-like unsorted key and 50 category strings, as bench_index.py has.
    let keys: ArrayRef = Arc::new(Int64Array::from_iter_values(
        (0..ROWS).map(|i| ((i * 2_654_435_761) % ROWS) as i64),
    ));
    let cats: ArrayRef = Arc::new(StringArray::from_iter_values(
        (0..ROWS).map(|_| format!("c{}", next() % 50)),
    ));
    let words = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"];
    let mut word = || words[(next() % 8) as usize];
    let text: ArrayRef = Arc::new(StringArray::from_iter_values(
        (0..ROWS).map(|_| format!("{} {} {}", word(), word(), word())),
    ));
    let (keys, cats, text) = (batches(&keys), batches(&cats), batches(&text));
    let mut g = c.benchmark_group("scalar_build");
    g.sample_size(10);
    g.throughput(Throughput::Elements(ROWS));
    g.bench_function("btree_int64_1M", |b| {
        b.iter(|| build(ScalarIndexType::BTree, &DataType::Int64, &keys))
    });
    g.bench_function("bitmap_50_strings_1M", |b| {
        b.iter(|| build(ScalarIndexType::Bitmap, &DataType::Utf8, &cats))
    });
    g.bench_function("ngram_3_words_1M", |b| {
        b.iter(|| build(ScalarIndexType::NGram, &DataType::Utf8, &text))
    });
    g.finish();
}

criterion_group!(benches, scalar_build);
criterion_main!(benches);
