//! Criterion bench of a 1,000-row take from a 2.2 file of 1M rows (mini-block pages:
//! integers, a dictionary column, free text, a list of tags), the read behind
//! `Dataset::take`: only the rows asked for are decoded out of each chunk read.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    missing_docs,
    reason = "test code: a failed unwrap or panic is a failed test"
)]

use std::sync::Arc;

use arrow_array::builder::{ListBuilder, StringBuilder};
use arrow_array::*;
use arrow_schema::{DataType, Field, Schema};
use criterion::{criterion_group, criterion_main, Criterion};
use futures::executor::block_on;
use lancelet_file::{FileReader, FileVersion, FileWriter, WriterOptions};
use lancelet_io::InMemory;

const ROWS: usize = 1 << 20;

fn data() -> RecordBatch {
    let mut s = 42u64;
    let mut next = move || {
        s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        s >> 33
    };
    let words: Vec<String> = (0..50).map(|i| format!("word{i}")).collect();
    let ids = Int64Array::from_iter_values(0..ROWS as i64);
    let cat = StringArray::from_iter_values((0..ROWS).map(|_| words[(next() % 50) as usize].clone()));
    let text = StringArray::from_iter_values((0..ROWS).map(|_| {
        let n = 3 + next() % 20;
        (0..n)
            .map(|_| words[(next() % 50) as usize].as_str())
            .collect::<Vec<_>>()
            .join(" ")
    }));
    let value = Float64Array::from_iter_values((0..ROWS).map(|_| next() as f64 / u32::MAX as f64));
    let mut tags = ListBuilder::new(StringBuilder::new());
    for _ in 0..ROWS {
        for _ in 0..next() % 4 {
            tags.values().append_value(&words[(next() % 50) as usize]);
        }
        tags.append(true);
    }
    let schema = Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("category", DataType::Utf8, false),
        Field::new("text", DataType::Utf8, false),
        Field::new("value", DataType::Float64, false),
        Field::new(
            "tags",
            DataType::List(Arc::new(Field::new("item", DataType::Utf8, true))),
            true,
        ),
    ]);
    RecordBatch::try_new(
        Arc::new(schema),
        vec![
            Arc::new(ids),
            Arc::new(cat),
            Arc::new(text),
            Arc::new(value),
            Arc::new(tags.finish()),
        ],
    )
    .unwrap()
}

fn benches(c: &mut Criterion) {
    let b = data();
    let opts = WriterOptions {
        version: FileVersion::V2_2,
        ..WriterOptions::default()
    };
    let mut w = FileWriter::try_new(Vec::with_capacity(64 << 20), "bench", b.schema(), opts).unwrap();
    for start in (0..ROWS).step_by(65536) {
        w.write_batch(&b.slice(start, 65536.min(ROWS - start))).unwrap();
    }
    let bytes = w.finish().unwrap().0;
    let r = block_on(FileReader::open(Arc::new(InMemory::new("bench", &bytes)))).unwrap();
    let p = r.projection(None).unwrap();
    let mut idx: Vec<u64> = (0..1000u64).map(|i| (i * 7919 * 131) % ROWS as u64).collect();
    idx.sort_unstable();
    let mut g = c.benchmark_group("file_v2_2");
    g.sample_size(20);
    g.bench_function("take_1000_sorted_rows_of_1M", |bench| {
        bench.iter(|| block_on(r.take(&p, &idx)).unwrap())
    });
    g.finish();
}

criterion_group!(take, benches);
criterion_main!(take);
