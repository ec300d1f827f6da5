//! A take of a few rows per mini-block chunk decodes only those rows of each chunk
//! (`decode_mini_block_selected`); what it returns must be what a whole decode returns.
#![allow(clippy::unwrap_used, reason = "test code: a failed unwrap or panic is a failed test")]

use crate::common;

use std::sync::Arc;

use arrow_array::builder::{ListBuilder, StringBuilder};
use arrow_array::*;
use arrow_schema::{DataType, Field, Schema};
use futures::executor::block_on;
use lancelet_file::FileVersion;

fn table(n: usize) -> RecordBatch {
    let words = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"];
    let ids = Int64Array::from_iter_values((0..n as i64).map(|i| i * 7 - 3));
    let maybe = Int32Array::from_iter((0..n).map(|i| (i % 5 != 0).then_some(i as i32)));
    let cat = StringArray::from_iter_values((0..n).map(|i| words[(i * 31) % words.len()]));
    let text = StringArray::from_iter(
        (0..n).map(|i| (i % 11 != 0).then(|| format!("{} {} number {i}", words[i % 8], words[(i / 8) % 8]))),
    );
    let value = Float64Array::from_iter_values((0..n).map(|i| (i as f64).sin()));
    let flag = BooleanArray::from_iter((0..n).map(|i| (i % 7 != 0).then_some(i % 3 == 0)));
    let mut tags = ListBuilder::new(StringBuilder::new());
    for i in 0..n {
        for k in 0..(i % 3) {
            tags.values().append_value(words[(i + k) % 8]);
        }
        tags.append(i % 13 != 0);
    }
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("maybe", DataType::Int32, true),
        Field::new("category", DataType::Utf8, false),
        Field::new("text", DataType::Utf8, true),
        Field::new("value", DataType::Float64, false),
        Field::new("flag", DataType::Boolean, true),
        Field::new(
            "tags",
            DataType::List(Arc::new(Field::new("item", DataType::Utf8, true))),
            true,
        ),
    ]));
    RecordBatch::try_new(
        schema,
        vec![
            Arc::new(ids),
            Arc::new(maybe),
            Arc::new(cat),
            Arc::new(text),
            Arc::new(value),
            Arc::new(flag),
            Arc::new(tags.finish()),
        ],
    )
    .unwrap()
}

#[test]
fn scattered_takes_return_the_rows_asked_for() {
    let n = 60_000;
    let full = table(n);
    for version in [FileVersion::V2_1, FileVersion::V2_2] {
        let bytes = common::write_version(std::slice::from_ref(&full), 1 << 22, version);
        let r = common::open(&bytes).unwrap();
        let p = r.projection(None).unwrap();
        // Sparse (one row in many chunks), clustered, duplicated, unsorted, edges.
        let mut cases: Vec<Vec<u64>> = vec![
            (0..n as u64).step_by(997).collect(),
            (0..n as u64).rev().step_by(4093).collect(),
            vec![0, 1, 2, 3, 4095, 4096, 4097, 29_999, 30_000, n as u64 - 1],
            vec![17, 17, 5, 59_000, 5],
            // Rows whose lists are all empty or null: chunks that give no values.
            (0..n as u64).step_by(3 * 4099).collect(),
            (20_000..20_050).chain(40_000..40_003).collect(),
        ];
        let mut x = 12345u64;
        cases.push(
            (0..300)
                .map(|_| {
                    x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                    (x >> 33) % n as u64
                })
                .collect(),
        );
        for idx in cases {
            let got = block_on(r.take(&p, &idx)).unwrap();
            let want = arrow_select::take::take_record_batch(&full, &UInt64Array::from(idx.clone())).unwrap();
            assert_eq!(got, want, "{version:?} {:?}", &idx[..idx.len().min(8)]);
        }
    }
}

/// Columns whose chunks a take reads value by value: bit-packed integers of every width
/// (the bit widths vary with `spread`), flat floats, nullable strings (FSST when they
/// compress, plain variable-width bytes when not).
fn random_table(n: usize, seed: u64, spread: u32) -> RecordBatch {
    let mut x = seed | 1;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mask = if spread >= 64 { u64::MAX } else { (1u64 << spread) - 1 };
    let words = ["lance", "let", "row", "take", "chunk", "page", "fsst", "zip"];
    let mut cols: Vec<(Field, ArrayRef)> = Vec::new();
    let v: Vec<u64> = (0..n).map(|_| next() & mask).collect();
    cols.push((
        Field::new("i64", DataType::Int64, false),
        Arc::new(Int64Array::from_iter_values(v.iter().map(|&v| v as i64))),
    ));
    cols.push((
        Field::new("i32", DataType::Int32, true),
        Arc::new(Int32Array::from_iter(
            v.iter()
                .enumerate()
                .map(|(i, &v)| (i % 9 != 4).then_some((v >> 3) as i32)),
        )),
    ));
    cols.push((
        Field::new("u16", DataType::UInt16, false),
        Arc::new(UInt16Array::from_iter_values(v.iter().map(|&v| (v >> 7) as u16))),
    ));
    cols.push((
        Field::new("u8", DataType::UInt8, false),
        Arc::new(UInt8Array::from_iter_values(v.iter().map(|&v| (v >> 11) as u8))),
    ));
    cols.push((
        Field::new("f64", DataType::Float64, false),
        Arc::new(Float64Array::from_iter_values(
            (0..n).map(|_| f64::from_bits(next() >> 2)),
        )),
    ));
    let text: Vec<Option<String>> = (0..n)
        .map(|i| {
            (next() % 13 != 0).then(|| {
                let k = (next() % 6) as usize;
                let mut s = format!("row-{i:012}");
                for j in 0..k {
                    s.push_str(words[(next() as usize + j) % words.len()]);
                }
                s
            })
        })
        .collect();
    cols.push((
        Field::new("text", DataType::Utf8, true),
        Arc::new(StringArray::from(text)),
    ));
    let noise: Vec<Vec<u8>> = (0..n)
        .map(|_| (0..(next() % 24) as usize).map(|_| next() as u8).collect())
        .collect();
    cols.push((
        Field::new("noise", DataType::Binary, false),
        Arc::new(BinaryArray::from_iter_values(noise.iter().map(Vec::as_slice))),
    ));
    let (fields, arrays): (Vec<Field>, Vec<ArrayRef>) = cols.into_iter().unzip();
    RecordBatch::try_new(Arc::new(Schema::new(fields)), arrays).unwrap()
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 24, ..Default::default() })]

    /// Random takes (sorted or not, with duplicates) equal the same rows of a full read.
    #[test]
    fn random_takes_equal_a_full_read(
        n in 1usize..12_000,
        seed in proptest::prelude::any::<u64>(),
        spread in 0u32..=64,
        picks in proptest::collection::vec(proptest::prelude::any::<u64>(), 1..200),
        sorted in proptest::prelude::any::<bool>(),
        v22 in proptest::prelude::any::<bool>(),
    ) {
        let full = random_table(n, seed, spread);
        let version = if v22 { FileVersion::V2_2 } else { FileVersion::V2_1 };
        let bytes = common::write_version(std::slice::from_ref(&full), 1 << 20, version);
        let r = common::open(&bytes).unwrap();
        let p = r.projection(None).unwrap();
        let mut idx: Vec<u64> = picks.iter().map(|i| i % n as u64).collect();
        if sorted {
            idx.sort_unstable();
        }
        let read = common::read_all(&r).unwrap();
        proptest::prop_assert_eq!(&read, &full);
        let got = block_on(r.take(&p, &idx)).unwrap();
        let want = arrow_select::take::take_record_batch(&read, &UInt64Array::from(idx.clone())).unwrap();
        proptest::prop_assert_eq!(got, want);
    }
}
