//! Property tests: random data written by the 2.0 writer reads back equal through every
//! read path (full scan, sequential batches with the page cache, ranges, take).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::single_range_in_vec_init,
    clippy::cloned_ref_to_slice_refs,
    reason = "test code: a failed unwrap or panic is a failed test"
)]

use crate::common;

use std::sync::Arc;

use arrow_array::builder::{ListBuilder, StringBuilder};
use arrow_array::*;
use arrow_buffer::{NullBuffer, OffsetBuffer};
use arrow_schema::{DataType, Field, Fields, Schema};
use futures::executor::block_on;
use lancelet_file::{FileVersion, PageCache};
use proptest::prelude::*;

fn nulls(mask: &[bool]) -> Option<NullBuffer> {
    Some(NullBuffer::from(mask.to_vec()))
}

/// One batch with every kind of column the 2.0 writer shreds differently.
fn batch(vals: &[(i64, bool, String, bool)]) -> RecordBatch {
    let n = vals.len();
    let valid: Vec<bool> = vals.iter().map(|v| v.1).collect();
    let ints = Int64Array::new(vals.iter().map(|v| v.0).collect(), nulls(&valid));
    let small = Int8Array::new(vals.iter().map(|v| v.0 as i8).collect(), None);
    let flags = BooleanArray::new(vals.iter().map(|v| v.3).collect(), nulls(&valid));
    let strings: StringArray = vals.iter().map(|v| v.1.then(|| v.2.clone())).collect();
    let bins: LargeBinaryArray = vals.iter().map(|v| Some(v.2.as_bytes())).collect();
    let lowcard: StringArray = vals
        .iter()
        .map(|v| v.1.then(|| format!("c{}", v.0.rem_euclid(3))))
        .collect();
    let fsl_values = Float32Array::from_iter_values((0..n * 4).map(|i| i as f32));
    let fsl = FixedSizeListArray::new(
        Arc::new(Field::new("item", DataType::Float32, true)),
        4,
        Arc::new(fsl_values),
        nulls(&valid),
    );
    let mut lb = ListBuilder::new(StringBuilder::new());
    for v in vals {
        if !v.1 {
            lb.append_null();
            continue;
        }
        for k in 0..(v.0.rem_euclid(4)) {
            lb.values().append_value(format!("{}-{k}", v.2));
        }
        lb.append(true);
    }
    let list = lb.finish();
    let lengths = vals.iter().map(|v| v.0.rem_euclid(3) as usize);
    let total: usize = vals.iter().map(|v| v.0.rem_euclid(3) as usize).sum();
    let inner = Int32Array::from_iter_values((0..total).map(|i| i as i32));
    let ll = LargeListArray::new(
        Arc::new(Field::new("item", DataType::Int32, true)),
        OffsetBuffer::<i64>::from_lengths(lengths),
        Arc::new(inner),
        None,
    );
    let st = StructArray::new(
        Fields::from(vec![
            Field::new("a", DataType::Int64, true),
            Field::new("s", DataType::Utf8, true),
        ]),
        vec![Arc::new(ints.clone()), Arc::new(strings.clone())],
        None,
    );
    let schema = Schema::new(vec![
        Field::new("ints", DataType::Int64, true),
        Field::new("small", DataType::Int8, true),
        Field::new("flags", DataType::Boolean, true),
        Field::new("strings", DataType::Utf8, true),
        Field::new("bins", DataType::LargeBinary, true),
        Field::new("lowcard", DataType::Utf8, true),
        Field::new("fsl", fsl.data_type().clone(), true),
        Field::new("list", list.data_type().clone(), true),
        Field::new("ll", ll.data_type().clone(), true),
        Field::new("st", st.data_type().clone(), true),
    ]);
    RecordBatch::try_new(
        Arc::new(schema),
        vec![
            Arc::new(ints),
            Arc::new(small),
            Arc::new(flags),
            Arc::new(strings),
            Arc::new(bins),
            Arc::new(lowcard),
            Arc::new(fsl),
            Arc::new(list),
            Arc::new(ll),
            Arc::new(st),
        ],
    )
    .unwrap()
}

fn row() -> impl Strategy<Value = (i64, bool, String, bool)> {
    (any::<i64>(), prop::bool::weighted(0.8), "[a-z]{0,12}", any::<bool>())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn every_read_path_returns_what_was_written(
        rows in prop::collection::vec(row(), 0..400),
        splits in prop::collection::vec(0usize..400, 0..4),
        page_bytes in prop::sample::select(vec![64u64, 1024, 1 << 20]),
        range in (0usize..400, 0usize..400),
        take in prop::collection::vec(0usize..400, 0..40),
        version in prop::sample::select(vec![FileVersion::V2_0, FileVersion::V2_1, FileVersion::V2_2]),
    ) {
        let full = batch(&rows);
        let n = full.num_rows();
        // Several write_batch calls of random sizes.
        let mut cuts: Vec<usize> = splits.into_iter().map(|s| s.min(n)).collect();
        cuts.push(0);
        cuts.push(n);
        cuts.sort_unstable();
        let parts: Vec<RecordBatch> = cuts.windows(2).map(|w| full.slice(w[0], w[1] - w[0])).collect();
        let bytes = common::write_version(&parts, page_bytes, version);
        let r = common::open(&bytes).unwrap();
        prop_assert_eq!(r.num_rows(), n as u64);
        let all = common::read_all(&r).unwrap();
        prop_assert_eq!(&all, &full);

        // Sequential batches through the page cache.
        let p = r.projection(None).unwrap();
        let cache = PageCache::default();
        let mut got = Vec::new();
        let mut s = 0u64;
        while s < n as u64 {
            let e = (s + 37).min(n as u64);
            got.push(block_on(r.read_ranges(&p, &[s..e], Some(&cache))).unwrap());
            s = e;
        }
        if n > 0 {
            let cat = arrow_select::concat::concat_batches(&full.schema(), &got).unwrap();
            prop_assert_eq!(&cat, &full);
        }

        // A sub-range.
        let (a, b) = (range.0.min(n), range.1.min(n));
        let (a, b) = (a.min(b), a.max(b));
        let part = block_on(r.read_ranges(&p, &[a as u64..b as u64], None)).unwrap();
        prop_assert_eq!(&part, &full.slice(a, b - a));

        // take, unsorted with duplicates.
        if n > 0 {
            let idx: Vec<u64> = take.iter().map(|i| (*i % n) as u64).collect();
            let got = block_on(r.take(&p, &idx)).unwrap();
            let ids = UInt64Array::from(idx.clone());
            let want = arrow_select::take::take_record_batch(&full, &ids).unwrap();
            prop_assert_eq!(&got, &want);
        }
    }
}

#[test]
fn projection_of_struct_child_and_top_level() {
    let rows: Vec<_> = (0..50)
        .map(|i| (i as i64, i % 3 != 0, format!("s{i}"), i % 2 == 0))
        .collect();
    let b = batch(&rows);
    let bytes = common::write(&[b.clone()], 1 << 20);
    let r = common::open(&bytes).unwrap();
    let p = r.projection(Some(&["st.s".to_string(), "ints".to_string()])).unwrap();
    let got = block_on(r.read_ranges(&p, &[0..50], None)).unwrap();
    assert_eq!(got.num_columns(), 2);
    assert_eq!(got.column(1).as_ref(), b.column(0).as_ref());
    assert!(r.projection(Some(&["nope".to_string()])).is_err());
}

#[test]
fn take_reads_only_the_rows_it_needs() {
    let n = 1_000_000;
    let ints = Int64Array::from_iter_values(0..n);
    let schema = Arc::new(Schema::new(vec![Field::new("a", DataType::Int64, false)]));
    let b = RecordBatch::try_new(schema, vec![Arc::new(ints)]).unwrap();
    let bytes = common::write(&[b], 8 << 20);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.lance");
    std::fs::write(&path, &bytes).unwrap();
    let io = Arc::new(lancelet_io::LocalFile::open(path.to_str().unwrap()).unwrap());
    let r = block_on(lancelet_file::FileReader::open(io)).unwrap();
    let before = r.io_stats().snapshot().0;
    let p = r.projection(None).unwrap();
    let got = block_on(r.take(&p, &[5, 999_999, 500_000])).unwrap();
    let read = r.io_stats().snapshot().0 - before;
    let col = got.column(0).as_any().downcast_ref::<Int64Array>().unwrap();
    assert_eq!(col.values().to_vec(), vec![5, 999_999, 500_000]);
    // Each row's checksum block (an OS page) is read to check it, and nothing more.
    let block = u64::from(lancelet_file::checksum::BLOCK_BYTES);
    assert!(read <= 3 * block, "take of 3 int64 rows read {read} bytes");
    // Unverified, only the rows' own bytes are read.
    let io = Arc::new(lancelet_io::LocalFile::open(path.to_str().unwrap()).unwrap());
    let r = block_on(lancelet_file::FileReader::open_with(io, false)).unwrap();
    let before = r.io_stats().snapshot().0;
    block_on(r.take(&p, &[5, 999_999, 500_000])).unwrap();
    let read = r.io_stats().snapshot().0 - before;
    assert!(read < 64, "unverified take of 3 int64 rows read {read} bytes");
}

/// Options writing file format 2.0 (the writer's default until 2.2 became the default).
fn v2_0() -> lancelet_file::WriterOptions {
    lancelet_file::WriterOptions {
        version: lancelet_file::FileVersion::V2_0,
        ..Default::default()
    }
}

#[test]
fn empty_file_and_zero_columns() {
    let schema = Arc::new(Schema::new(vec![Field::new("a", DataType::Int32, true)]));
    let w = lancelet_file::FileWriter::try_new(Vec::new(), "mem", schema, v2_0()).unwrap();
    let (bytes, rows) = w.finish().unwrap();
    assert_eq!(rows, 0);
    let r = common::open(&bytes).unwrap();
    assert_eq!(r.num_rows(), 0);
    assert_eq!(common::read_all(&r).unwrap().num_rows(), 0);

    let empty = Arc::new(Schema::empty());
    let w = lancelet_file::FileWriter::try_new(Vec::new(), "mem", empty, v2_0()).unwrap();
    let (bytes, _) = w.finish().unwrap();
    let r = common::open(&bytes).unwrap();
    assert_eq!(common::read_all(&r).unwrap().num_columns(), 0);
}
