//! Round trips of every 2.0 page codec: whole pages, and row slices decoded from only
//! the bytes the layout says they need.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::single_range_in_vec_init,
    clippy::cloned_ref_to_slice_refs,
    reason = "test code: a failed unwrap or panic is a failed test"
)]

use std::sync::Arc;

use arrow_array::*;
use arrow_buffer::Buffer;
use arrow_schema::{DataType, Field};
use lancelet_encoding::v2_0::decode::decode;
use lancelet_encoding::v2_0::encode::{encode_leaf, EncodeOptions};
use lancelet_encoding::v2_0::layout::{row_layout, stream_byte_range, stream_rows};
use lancelet_encoding::{EncodedPage, PageBuffers};
use proptest::prelude::*;

fn roundtrip(array: &ArrayRef) -> EncodedPage<lancelet_encoding::v2_0::pb::ArrayEncoding> {
    let page = encode_leaf(array, &EncodeOptions::default()).unwrap();
    let bufs = PageBuffers {
        page: &page.buffers,
        column: &[],
    };
    let back = decode(&page.encoding, &bufs, page.num_rows, array.data_type()).unwrap();
    assert_eq!(
        back.as_ref(),
        array.as_ref(),
        "whole-page round trip of {}",
        array.data_type()
    );
    page
}

/// Decodes rows `a..b` from the slices the row layout asks for, as a reader would.
fn check_slice(array: &ArrayRef, a: usize, b: usize) {
    let page = encode_leaf(array, &EncodeOptions::default()).unwrap();
    let Some(layout) = row_layout(&page.encoding).unwrap() else {
        return;
    };
    let rows = a as u64..b as u64;
    let mut bufs = vec![Buffer::from_vec(Vec::<u8>::new()); page.buffers.len()];
    for s in &layout.streams {
        let r = stream_byte_range(s, &rows);
        let src = &page.buffers[s.buffer_index as usize];
        let fetched = Buffer::from_slice_ref(&src.as_slice()[r.start as usize..r.end as usize]);
        bufs[s.buffer_index as usize] = stream_rows(s, &rows, &fetched);
    }
    for w in &layout.whole {
        bufs[*w as usize] = page.buffers[*w as usize].clone();
    }
    let got = decode(
        &page.encoding,
        &PageBuffers {
            page: &bufs,
            column: &[],
        },
        rows.end - rows.start,
        array.data_type(),
    )
    .unwrap();
    assert_eq!(
        got.as_ref(),
        array.slice(a, b - a).as_ref(),
        "rows {a}..{b} of {}",
        array.data_type()
    );
}

/// Whole pages, sliced inputs (non-zero offsets, unaligned bitmaps) and a row slice
/// `a..b` (clamped) of every array.
fn check_all(arrays: &[ArrayRef], a: usize, b: usize) {
    for arr in arrays {
        let n = arr.len();
        roundtrip(arr);
        if n > 3 {
            roundtrip(&arr.slice(1, n - 2));
        }
        let (a, b) = (a.min(n), b.min(n));
        check_slice(arr, a.min(b), a.max(b));
    }
}

fn opt<T: Clone>(v: &[(T, bool)]) -> Vec<Option<T>> {
    v.iter().map(|(x, ok)| ok.then(|| x.clone())).collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn fixed_width_types(v in prop::collection::vec((any::<i64>(), any::<bool>()), 0..300), a in 0usize..300, b in 0usize..300) {
        let arrays: Vec<ArrayRef> = vec![
            Arc::new(Int64Array::from(opt(&v))),
            Arc::new(Int8Array::from(opt(&v.iter().map(|(x, o)| (*x as i8, *o)).collect::<Vec<_>>()))),
            Arc::new(UInt16Array::from(opt(&v.iter().map(|(x, o)| (*x as u16, *o)).collect::<Vec<_>>()))),
            Arc::new(Float32Array::from(opt(&v.iter().map(|(x, o)| (*x as f32, *o)).collect::<Vec<_>>()))),
            Arc::new(BooleanArray::from(opt(&v.iter().map(|(x, o)| (*x % 2 == 0, *o)).collect::<Vec<_>>()))),
            Arc::new(TimestampMicrosecondArray::from(opt(&v)).with_timezone("UTC")),
            Arc::new(Decimal128Array::from(opt(&v.iter().map(|(x, o)| (i128::from(*x), *o)).collect::<Vec<_>>())).with_precision_and_scale(38, 2).unwrap()),
            Arc::new(Float16Array::from(opt(&v.iter().map(|(x, o)| (half::f16::from_f32(*x as f32), *o)).collect::<Vec<_>>()))),
        ];
        check_all(&arrays, a, b);
    }

    #[test]
    fn variable_width_types(v in prop::collection::vec(("[a-zé]{0,20}", any::<bool>()), 0..300), a in 0usize..300, b in 0usize..300) {
        let s: Vec<Option<String>> = opt(&v);
        let arrays: Vec<ArrayRef> = vec![
            Arc::new(StringArray::from(s.clone())),
            Arc::new(LargeStringArray::from(s.clone())),
            Arc::new(BinaryArray::from(s.iter().map(|x| x.as_deref().map(str::as_bytes)).collect::<Vec<_>>())),
            Arc::new(LargeBinaryArray::from(s.iter().map(|x| x.as_deref().map(str::as_bytes)).collect::<Vec<_>>())),
            // Low cardinality: dictionary encoded when there are >= 100 rows.
            Arc::new(StringArray::from(s.iter().enumerate().map(|(i, x)| x.as_ref().map(|_| format!("k{}", i % 5))).collect::<Vec<_>>())),
        ];
        check_all(&arrays, a, b);
    }

    #[test]
    fn embeddings(dim in 1i32..9, rows in prop::collection::vec(any::<(bool, bool)>(), 0..100)) {
        let n = rows.len();
        let items = Float32Array::from_iter((0..n * dim as usize).map(|i| (i % 7 != 3 || rows[i / dim as usize].1).then_some(i as f32)));
        let nulls = arrow_buffer::NullBuffer::from(rows.iter().map(|r| r.0).collect::<Vec<_>>());
        let fsl: ArrayRef = Arc::new(FixedSizeListArray::new(
            Arc::new(Field::new("item", DataType::Float32, true)), dim, Arc::new(items), Some(nulls)));
        roundtrip(&fsl);
        check_slice(&fsl, n / 3, n);
    }
}

#[test]
fn arrow_dictionary_with_null_keys_reads_back_with_a_null_item() {
    let keys = Int32Array::from(vec![Some(0), None, Some(1), Some(0)]);
    let values = StringArray::from(vec!["a", "b"]);
    let dict: ArrayRef = Arc::new(DictionaryArray::new(keys, Arc::new(values)));
    let page = encode_leaf(&dict, &EncodeOptions::default()).unwrap();
    let back = decode(
        &page.encoding,
        &PageBuffers {
            page: &page.buffers,
            column: &[],
        },
        4,
        dict.data_type(),
    )
    .unwrap();
    let back = arrow_cast_strings(&back);
    assert_eq!(
        back,
        vec![
            Some("a".to_string()),
            None,
            Some("b".to_string()),
            Some("a".to_string())
        ]
    );
}

fn arrow_cast_strings(a: &ArrayRef) -> Vec<Option<String>> {
    let d = a
        .as_any()
        .downcast_ref::<DictionaryArray<arrow_array::types::Int32Type>>()
        .unwrap();
    let values = d.values().as_any().downcast_ref::<StringArray>().unwrap();
    d.keys()
        .iter()
        .map(|k| {
            k.and_then(|k| {
                values
                    .is_valid(k as usize)
                    .then(|| values.value(k as usize).to_string())
            })
        })
        .collect()
}

#[test]
fn empty_and_all_null_pages() {
    for arr in [
        Arc::new(Int32Array::from(Vec::<i32>::new())) as ArrayRef,
        Arc::new(Int32Array::from(vec![None, None, None])) as ArrayRef,
        Arc::new(StringArray::from(vec![None::<&str>, None])) as ArrayRef,
        Arc::new(NullArray::new(5)) as ArrayRef,
    ] {
        roundtrip(&arr);
    }
}
