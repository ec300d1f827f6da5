//! Criterion benches of filter evaluation on one million seeded rows, and of parse + bind.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs, reason = "bench setup")]

use std::sync::Arc;

use arrow_array::types::Int32Type;
use arrow_array::{Array, DictionaryArray, Float64Array, Int32Array, Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use lancelet_expr::parse;

const ROWS: usize = 1 << 20;

fn data() -> RecordBatch {
    // A small LCG keeps the data seeded without extra dependencies.
    let mut s = 42u64;
    let mut next = move || {
        s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        s >> 33
    };
    let ints = Int64Array::from_iter((0..ROWS).map(|i| (i % 17 != 0).then(|| (next() % 1000) as i64)));
    let floats = Float64Array::from_iter_values((0..ROWS).map(|_| (next() % 10_000) as f64 / 10_000.0));
    let strings: StringArray = (0..ROWS)
        .map(|i| Some(format!("value-{}-{i}", next() % 1000)))
        .collect();
    let keys = Int32Array::from_iter_values((0..ROWS).map(|_| (next() % 8) as i32));
    let values = StringArray::from(vec![
        "red", "green", "blue", "cyan", "magenta", "yellow", "black", "white",
    ]);
    let dict = DictionaryArray::<Int32Type>::try_new(keys, Arc::new(values)).unwrap();
    let schema = Schema::new(vec![
        Field::new("i", DataType::Int64, true),
        Field::new("f", DataType::Float64, false),
        Field::new("s", DataType::Utf8, false),
        Field::new("color", dict.data_type().clone(), false),
    ]);
    RecordBatch::try_new(
        Arc::new(schema),
        vec![Arc::new(ints), Arc::new(floats), Arc::new(strings), Arc::new(dict)],
    )
    .unwrap()
}

fn filters(c: &mut Criterion) {
    let batch = data();
    let in_list = (0..40).map(|v| (v * 7).to_string()).collect::<Vec<_>>().join(", ");
    let cases = [
        ("cmp_and", "i > 500 AND f < 0.5".to_string()),
        ("or_not_null", "NOT (i > 100) OR i IS NULL".to_string()),
        ("between", "i BETWEEN 100 AND 200".to_string()),
        ("in_short", "i IN (1, 2, 3, 4)".to_string()),
        ("in_hash_40", format!("i IN ({in_list})")),
        ("arith", "i * 2 + 1 > 1001".to_string()),
        ("like_prefix", "s LIKE 'value-1%'".to_string()),
        ("dict_eq", "color = 'blue'".to_string()),
        ("dict_in", "color IN ('blue', 'red')".to_string()),
    ];
    let mut group = c.benchmark_group("filter_1m");
    group.throughput(Throughput::Elements(ROWS as u64));
    for (name, sql) in &cases {
        let bound = parse(sql).unwrap().bind(&batch.schema()).unwrap();
        group.bench_function(*name, |b| b.iter(|| bound.evaluate_predicate(&batch).unwrap()));
    }
    group.finish();
}

fn parse_bind(c: &mut Criterion) {
    let batch = data();
    let schema = batch.schema();
    let sql = "(i > 500 AND f < 0.5) OR (s LIKE 'value-1%' AND color IN ('blue', 'red')) OR i IS NULL";
    c.bench_function("parse_bind", |b| b.iter(|| parse(sql).unwrap().bind(&schema).unwrap()));
}

criterion_group!(benches, filters, parse_bind);
criterion_main!(benches);
