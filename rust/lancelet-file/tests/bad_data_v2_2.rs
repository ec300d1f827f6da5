//! The full damage sweep of `bad_data.rs`, on a 2.2 file whose pages use the 2.1+
//! structural encodings: FSST strings, dictionary pages (a low-cardinality string and an
//! Arrow dictionary column), lists and structs with nulls. Every truncation and every
//! single-byte corruption must give an error or different values: never a panic (the test
//! build has overflow checks on, so an arithmetic overflow is a panic too), a hang or a
//! huge allocation.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::single_range_in_vec_init,
    reason = "test code: a failed unwrap or panic is a failed test"
)]

use crate::common;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

use arrow_array::builder::{Int64Builder, ListBuilder};
use arrow_array::types::Int32Type;
use arrow_array::*;
use arrow_schema::{DataType, Field, Fields, Schema};
use futures::executor::block_on;
use lancelet_file::{Error, FileVersion};

const ROWS: usize = 400;

/// A 2.2 file of about 13 KB: large enough for FSST (a page needs 8 KiB of string data)
/// and dictionaries (100 values), small enough to corrupt every byte.
fn sample() -> Vec<u8> {
    let ids = Int32Array::from_iter_values(0..ROWS as i32);
    let text: StringArray = (0..ROWS)
        .map(|i| (i % 17 != 3).then(|| format!("row {i} alpha beta gamma delta")))
        .collect();
    let colors: StringArray = (0..ROWS)
        .map(|i| (i % 9 != 0).then(|| ["red", "green", "blue", "cyan"][i % 4]))
        .collect();
    let dict: DictionaryArray<Int32Type> = (0..ROWS).map(|i| ["x", "yy", "zzz"][i % 3]).collect();
    let mut lb = ListBuilder::new(Int64Builder::new());
    for i in 0..ROWS {
        if i % 11 == 5 {
            lb.append_null();
        } else {
            for v in 0..(i % 4) as i64 {
                lb.values().append_value(v);
            }
            lb.append(true);
        }
    }
    let list = lb.finish();
    let st = StructArray::new(
        Fields::from(vec![
            Field::new("a", DataType::Int32, true),
            Field::new("b", DataType::Utf8, true),
        ]),
        vec![
            Arc::new(Int32Array::from_iter_values(0..ROWS as i32)),
            Arc::new(StringArray::from_iter_values((0..ROWS).map(|i| format!("s{}", i % 7)))),
        ],
        Some((0..ROWS).map(|i| i % 13 != 7).collect::<Vec<_>>().into()),
    );
    let schema = Schema::new(vec![
        Field::new("id", DataType::Int32, false),
        Field::new("text", DataType::Utf8, true),
        Field::new("color", DataType::Utf8, true),
        Field::new("dict", dict.data_type().clone(), true),
        Field::new("list", list.data_type().clone(), true),
        Field::new("st", st.data_type().clone(), true),
    ]);
    let b = RecordBatch::try_new(
        Arc::new(schema),
        vec![
            Arc::new(ids),
            Arc::new(text),
            Arc::new(colors),
            Arc::new(dict),
            Arc::new(list),
            Arc::new(st),
        ],
    )
    .unwrap();
    common::write_version(&[b], 1 << 20, FileVersion::V2_2)
}

/// Opens and reads a file every way; returns whether it worked. Panics propagate.
fn exercise(bytes: &[u8]) -> Result<(), Error> {
    let r = common::open(bytes)?;
    let p = r.projection(None)?;
    let n = r.num_rows();
    block_on(r.read_ranges(&p, &[0..n], None))?;
    if n > 0 {
        block_on(r.take(&p, &[n - 1, 0, n / 3]))?;
        block_on(r.read_ranges(&p, &[n / 2..n], Some(&lancelet_file::PageCache::default())))?;
    }
    Ok(())
}

fn assert_no_panic(bytes: &[u8], what: &str) -> bool {
    match catch_unwind(AssertUnwindSafe(|| exercise(bytes))) {
        Ok(Ok(())) => true,
        Ok(Err(_)) => false,
        Err(_) => panic!("reader panicked on {what}"),
    }
}

#[test]
fn the_sample_reads_back_and_uses_every_encoding_of_interest() {
    let bytes = sample();
    exercise(&bytes).unwrap();
    let r = common::open(&bytes).unwrap();
    assert_eq!(r.metadata().version, FileVersion::V2_2);
    let pages: Vec<String> = r
        .metadata()
        .columns
        .iter()
        .flat_map(|c| c.pages.iter().map(|p| format!("{:?}", p.layout)))
        .collect();
    assert!(pages.iter().any(|p| p.contains("Fsst")), "no FSST page: {pages:#?}");
    let dictionaries = pages.iter().filter(|p| p.contains("dictionary: Some")).count();
    assert!(dictionaries >= 2, "{dictionaries} dictionary pages: {pages:#?}");
    let table = common::read_all(&r).unwrap();
    assert_eq!(table.num_rows(), ROWS);
    assert_eq!(table.column(4).null_count(), (0..ROWS).filter(|i| i % 11 == 5).count());
    assert_eq!(table.column(5).null_count(), (0..ROWS).filter(|i| i % 13 == 7).count());
}

#[test]
fn every_truncation_is_an_error() {
    let bytes = sample();
    for len in 0..bytes.len() {
        let ok = assert_no_panic(&bytes[..len], &format!("truncation to {len} bytes"));
        assert!(!ok, "truncation to {len} bytes was accepted");
    }
}

#[test]
fn every_byte_corruption_is_an_error_or_different_data() {
    let bytes = sample();
    let (mut variants, mut failures) = (0usize, 0usize);
    for pos in 0..bytes.len() {
        for v in [bytes[pos] ^ 0xFF, 0x00, 0xFF, bytes[pos].wrapping_add(1)] {
            if v == bytes[pos] {
                continue;
            }
            let mut b = bytes.clone();
            b[pos] = v;
            variants += 1;
            if !assert_no_panic(&b, &format!("byte {pos} set to {v:#x}")) {
                failures += 1;
            }
        }
    }
    // The metadata (a quarter of this file) must be checked; data bytes may just change values.
    assert!(
        failures > bytes.len() / 4,
        "only {failures} of {variants} corruptions were detected"
    );
}
