//! Damaged files: every truncation and every single-byte corruption of real files must
//! give an error or different values, never a panic, a hang or a huge allocation.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::single_range_in_vec_init,
    clippy::cloned_ref_to_slice_refs,
    reason = "test code: a failed unwrap or panic is a failed test"
)]

use crate::common;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

use arrow_array::builder::{ListBuilder, StringBuilder};
use arrow_array::*;
use arrow_schema::{DataType, Field, Fields, Schema};
use futures::executor::block_on;
use lancelet_file::Error;

fn sample() -> Vec<u8> {
    let mut lb = ListBuilder::new(StringBuilder::new());
    for i in 0..10 {
        if i % 4 == 0 {
            lb.append_null();
        } else {
            lb.values().append_value(format!("v{i}"));
            lb.append(true);
        }
    }
    let list = lb.finish();
    let st = StructArray::new(
        Fields::from(vec![Field::new("x", DataType::Int32, true)]),
        vec![Arc::new(Int32Array::from((0..10).collect::<Vec<i32>>()))],
        None,
    );
    let strs: StringArray = (0..10).map(|i| (i % 3 != 0).then(|| format!("s{i}"))).collect();
    let ints = Int32Array::from((0..10).map(|i| (i % 2 == 0).then_some(i)).collect::<Vec<_>>());
    let fsl = FixedSizeListArray::new(
        Arc::new(Field::new("item", DataType::UInt8, true)),
        2,
        Arc::new(UInt8Array::from_iter_values(0..20)),
        None,
    );
    let schema = Schema::new(vec![
        Field::new("ints", DataType::Int32, true),
        Field::new("strs", DataType::Utf8, true),
        Field::new("list", list.data_type().clone(), true),
        Field::new("st", st.data_type().clone(), true),
        Field::new("fsl", fsl.data_type().clone(), true),
    ]);
    let b = RecordBatch::try_new(
        Arc::new(schema),
        vec![
            Arc::new(ints),
            Arc::new(strs),
            Arc::new(list),
            Arc::new(st),
            Arc::new(fsl),
        ],
    )
    .unwrap();
    common::write(&[b], 1 << 20)
}

/// Opens and reads a file every way; returns whether it worked. Panics propagate.
fn exercise(bytes: &[u8]) -> Result<(), Error> {
    let r = common::open(bytes)?;
    let p = r.projection(None)?;
    let n = r.num_rows();
    block_on(r.read_ranges(&p, &[0..n], None))?;
    if n > 0 {
        block_on(r.take(&p, &[n - 1, 0]))?;
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
fn the_sample_itself_reads() {
    exercise(&sample()).unwrap();
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
    let mut failures = 0;
    for pos in 0..bytes.len() {
        for v in [bytes[pos] ^ 0xFF, 0x00, 0xFF, bytes[pos].wrapping_add(1)] {
            if v == bytes[pos] {
                continue;
            }
            let mut b = bytes.clone();
            b[pos] = v;
            if !assert_no_panic(&b, &format!("byte {pos} set to {v:#x}")) {
                failures += 1;
            }
        }
    }
    // Corruption of the metadata must be caught; flips in data bytes just change values.
    assert!(failures > bytes.len() / 4, "only {failures} corruptions were detected");
}

#[test]
fn bad_footers_name_the_problem() {
    let bytes = sample();
    let n = bytes.len();
    let mut magic = bytes.clone();
    magic[n - 1] = b'X';
    match common::open(&magic) {
        Err(Error::Corrupt { message, .. }) => assert!(message.contains("LANC"), "{message}"),
        other => panic!("expected corrupt, got {other:?}"),
    }
    let mut version = bytes.clone();
    version[n - 8..n - 4].copy_from_slice(&[9, 0, 9, 0]);
    assert!(matches!(common::open(&version), Err(Error::Unsupported(_))));
    let mut offsets = bytes.clone();
    offsets[n - 40..n - 32].copy_from_slice(&u64::MAX.to_le_bytes());
    assert!(matches!(common::open(&offsets), Err(Error::Corrupt { .. })));
    let mut columns = bytes.clone();
    columns[n - 12..n - 8].copy_from_slice(&u32::MAX.to_le_bytes());
    assert!(matches!(common::open(&columns), Err(Error::Corrupt { .. })));
}
