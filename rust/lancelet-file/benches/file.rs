//! Criterion benches of the 2.0 writer and reader hot paths (in-memory, seeded data).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::single_range_in_vec_init,
    missing_docs,
    reason = "test code: a failed unwrap or panic is a failed test"
)]

use std::sync::Arc;

use arrow_array::*;
use arrow_schema::{DataType, Field, Schema};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use futures::executor::block_on;
use lancelet_file::{FileReader, FileWriter, PageCache, WriterOptions};
use lancelet_io::InMemory;

const ROWS: usize = 1 << 20;

fn data() -> RecordBatch {
    // A small LCG keeps the data seeded without extra dependencies.
    let mut s = 42u64;
    let mut next = move || {
        s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        s >> 33
    };
    let ints = Int64Array::from_iter_values((0..ROWS).map(|_| next() as i64));
    let floats = Float64Array::from_iter((0..ROWS).map(|i| (i % 10 != 0).then(|| next() as f64)));
    let strings: StringArray = (0..ROWS)
        .map(|i| Some(format!("value-{}-{i}", next() % 1000)))
        .collect();
    let schema = Schema::new(vec![
        Field::new("i", DataType::Int64, false),
        Field::new("f", DataType::Float64, true),
        Field::new("s", DataType::Utf8, false),
    ]);
    RecordBatch::try_new(
        Arc::new(schema),
        vec![Arc::new(ints), Arc::new(floats), Arc::new(strings)],
    )
    .unwrap()
}

fn write(b: &RecordBatch) -> Vec<u8> {
    let mut w = FileWriter::try_new(
        Vec::with_capacity(64 << 20),
        "bench",
        b.schema(),
        WriterOptions {
            version: lancelet_file::FileVersion::V2_0,
            ..WriterOptions::default()
        },
    )
    .unwrap();
    for start in (0..b.num_rows()).step_by(65536) {
        w.write_batch(&b.slice(start, 65536.min(b.num_rows() - start))).unwrap();
    }
    w.finish().unwrap().0
}

fn benches(c: &mut Criterion) {
    let b = data();
    let bytes = write(&b);
    let mut g = c.benchmark_group("file_v2_0");
    g.sample_size(10);
    g.throughput(Throughput::Bytes(bytes.len() as u64));
    g.bench_function("write_1M_rows", |bench| bench.iter(|| write(&b)));
    let r = block_on(FileReader::open(Arc::new(InMemory::new("bench", &bytes)))).unwrap();
    let p = r.projection(None).unwrap();
    g.bench_function("scan_1M_rows_batches_of_64k", |bench| {
        bench.iter(|| {
            let cache = PageCache::default();
            let mut s = 0u64;
            while s < ROWS as u64 {
                let e = (s + 65536).min(ROWS as u64);
                block_on(r.read_ranges(&p, &[s..e], Some(&cache))).unwrap();
                s = e;
            }
        })
    });
    let idx: Vec<u64> = (0..1000u64).map(|i| (i * 7919 * 131) % ROWS as u64).collect();
    g.bench_function("take_1000_random_rows", |bench| {
        bench.iter(|| block_on(r.take(&p, &idx)).unwrap())
    });
    g.finish();
}

criterion_group!(file, benches);
criterion_main!(file);
