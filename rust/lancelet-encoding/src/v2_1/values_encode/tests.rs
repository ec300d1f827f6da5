//! Round trips and format checks of the value encoders.

use std::sync::Arc;

use super::*;
use crate::v2_1::values::Values;
use crate::v2_1::values_decode::{decode_block, decode_chunk, decode_levels};
use arrow_array::types::*;
use arrow_array::{Array, ArrayRef};
use arrow_array::{
    BinaryArray, BooleanArray, Decimal128Array, FixedSizeBinaryArray, FixedSizeListArray, Float16Array, Int32Array,
    Int64Array, LargeStringArray, PrimitiveArray, StringArray,
};
use arrow_buffer::NullBuffer;
use arrow_schema::DataType;
use arrow_schema::Field;
use proptest::prelude::*;

use super::variant_name;

/// Name of the encoding picked (`dict` for dictionaries).
fn picked(m: &MiniBlockValues) -> &'static str {
    if m.dictionary.is_some() {
        "dict"
    } else {
        variant_name(&m.encoding)
    }
}

/// Decodes every chunk (and the dictionary) back to values.
fn decode_all(m: &MiniBlockValues) -> Values {
    let parts = m
        .chunks
        .iter()
        .filter(|c| c.num_values > 0)
        .map(|c| {
            let bufs: Vec<&[u8]> = c.buffers.iter().map(|b| b.as_slice()).collect();
            decode_chunk(&m.encoding, &bufs, c.num_values).unwrap()
        })
        .collect();
    let v = Values::concat(parts).unwrap();
    match &m.dictionary {
        None => v,
        Some((enc, buf, n)) => {
            let dict = decode_block(enc, buf, *n as usize).unwrap();
            let Values::Fixed { bits: 32, data, len } = v else {
                panic!("indices are not u32")
            };
            let idx: Vec<u64> = data
                .chunks_exact(4)
                .take(len)
                .map(|c| u64::from(u32::from_le_bytes(c.try_into().unwrap())))
                .collect();
            dict.take(&idx).unwrap()
        }
    }
}

/// Compresses, checks chunk shapes, decodes and compares valid positions.
fn check(array: &ArrayRef, opts: &EncodeOptions) -> MiniBlockValues {
    let m = compress_mini_block(array.as_ref(), opts).unwrap();
    let total: usize = m.chunks.iter().map(|c| c.num_values).sum();
    assert_eq!(total, array.len());
    let nbufs = m.chunks.first().map(|c| c.buffers.len()).unwrap_or(1);
    for (i, c) in m.chunks.iter().enumerate() {
        assert_eq!(c.buffers.len(), nbufs);
        if i + 1 < m.chunks.len() {
            assert!(c.num_values.is_power_of_two() && c.num_values <= MAX_CHUNK_VALUES);
        }
        assert!(
            fits(&c.buffers.iter().map(|b| b.len()).collect::<Vec<_>>()),
            "chunk too large"
        );
    }
    let out = decode_all(&m).into_array(array.data_type()).unwrap();
    let out = out
        .to_data()
        .into_builder()
        .nulls(array.nulls().cloned())
        .build()
        .unwrap();
    assert_eq!(out, array.to_data(), "{} of {}", picked(&m), array.data_type());
    m
}

fn all_opts() -> Vec<EncodeOptions> {
    let mut v = Vec::new();
    for v2_2 in [false, true] {
        for c in [None, Some("zstd"), Some("lz4"), Some("fsst"), Some("none")] {
            v.push(EncodeOptions {
                v2_2,
                compression: c.map(String::from),
                compression_level: None,
                no_dictionary: false,
                dictionary_index_bytes: None,
            });
        }
        v.push(EncodeOptions {
            v2_2,
            no_dictionary: true,
            ..Default::default()
        });
    }
    v
}

fn nulls(v: &[Option<i64>]) -> Option<NullBuffer> {
    Some(NullBuffer::from(v.iter().map(|x| x.is_some()).collect::<Vec<_>>()))
}

/// Arrays of many leaf types built from the same integers (None = null with an
/// arbitrary payload).
fn arrays(v: &[Option<i64>]) -> Vec<ArrayRef> {
    let raw: Vec<i64> = v.iter().map(|x| x.unwrap_or(0x5a5a_5a5a)).collect();
    let nb = nulls(v);
    fn prim<T: ArrowPrimitiveType>(vals: Vec<T::Native>, nb: &Option<NullBuffer>) -> ArrayRef {
        Arc::new(PrimitiveArray::<T>::new(vals.into(), nb.clone()))
    }
    let strs: Vec<String> = raw.iter().map(|x| format!("v{}", x.rem_euclid(1 << 20))).collect();
    let mut out: Vec<ArrayRef> = vec![
        prim::<Int8Type>(raw.iter().map(|x| *x as i8).collect(), &nb),
        prim::<UInt8Type>(raw.iter().map(|x| *x as u8).collect(), &nb),
        prim::<Int16Type>(raw.iter().map(|x| *x as i16).collect(), &nb),
        prim::<UInt16Type>(raw.iter().map(|x| *x as u16).collect(), &nb),
        prim::<Int32Type>(raw.iter().map(|x| *x as i32).collect(), &nb),
        prim::<UInt32Type>(raw.iter().map(|x| *x as u32).collect(), &nb),
        prim::<Int64Type>(raw.clone(), &nb),
        prim::<UInt64Type>(raw.iter().map(|x| *x as u64).collect(), &nb),
        prim::<Float32Type>(raw.iter().map(|x| *x as f32 / 7.0).collect(), &nb),
        prim::<Float64Type>(raw.iter().map(|x| *x as f64 / 3.0).collect(), &nb),
        prim::<Date32Type>(raw.iter().map(|x| *x as i32).collect(), &nb),
        prim::<TimestampMicrosecondType>(raw.clone(), &nb),
        Arc::new(Float16Array::new(
            raw.iter()
                .map(|x| half::f16::from_f32(*x as f32))
                .collect::<Vec<_>>()
                .into(),
            nb.clone(),
        )),
        Arc::new(
            Decimal128Array::new(
                raw.iter().map(|x| i128::from(*x) * 1000).collect::<Vec<_>>().into(),
                nb.clone(),
            )
            .with_precision_and_scale(38, 3)
            .unwrap(),
        ),
        Arc::new(
            FixedSizeBinaryArray::try_new(
                3,
                raw.iter()
                    .flat_map(|x| x.to_le_bytes()[..3].to_vec())
                    .collect::<Vec<u8>>()
                    .into(),
                nb.clone(),
            )
            .unwrap(),
        ),
        Arc::new(BooleanArray::new(raw.iter().map(|x| x & 1 == 1).collect(), nb.clone())),
        Arc::new(StringArray::from(
            v.iter()
                .zip(&strs)
                .map(|(o, s)| o.map(|_| s.as_str()))
                .collect::<Vec<_>>(),
        )),
        Arc::new(LargeStringArray::from(
            v.iter()
                .zip(&strs)
                .map(|(o, s)| o.map(|_| s.as_str()))
                .collect::<Vec<_>>(),
        )),
        Arc::new(BinaryArray::from(
            v.iter()
                .zip(&strs)
                .map(|(o, s)| o.map(|_| s.as_bytes()))
                .collect::<Vec<_>>(),
        )),
    ];
    // FSL<int32, 3>: item nulls where the list is null, plus some inside valid lists.
    let items: Vec<Option<i32>> = v
        .iter()
        .flat_map(|x| match x {
            Some(x) => vec![
                Some(*x as i32),
                if x % 5 == 0 { None } else { Some(1) },
                Some(-(*x as i32)),
            ],
            None => vec![None, None, None],
        })
        .collect();
    let child = Arc::new(Int32Array::from(items));
    out.push(Arc::new(
        FixedSizeListArray::try_new(
            Arc::new(Field::new("item", DataType::Int32, true)),
            3,
            child,
            nb.clone(),
        )
        .unwrap(),
    ));
    // FSL<bool, 5> without item nulls.
    let bits: Vec<bool> = raw.iter().flat_map(|x| (0..5).map(move |k| x >> k & 1 == 1)).collect();
    out.push(Arc::new(
        FixedSizeListArray::try_new(
            Arc::new(Field::new("item", DataType::Boolean, false)),
            5,
            Arc::new(BooleanArray::from(bits)),
            None,
        )
        .unwrap(),
    ));
    // sliced arrays (offsets applied)
    if v.len() > 3 {
        let sliced: Vec<ArrayRef> = out.iter().map(|a| a.slice(1, a.len() - 3)).collect();
        out.extend(sliced);
    }
    // a dictionary-typed column
    let keys = PrimitiveArray::<Int16Type>::new(raw.iter().map(|x| x.rem_euclid(3) as i16).collect(), nb);
    let dict = arrow_array::DictionaryArray::new(keys, Arc::new(StringArray::from(vec!["x", "yy", "zzz"])));
    out.push(Arc::new(dict));
    out
}

fn int_values() -> impl Strategy<Value = Vec<Option<i64>>> {
    (0usize..5, prop::collection::vec((any::<i64>(), 0u8..8), 0..3000)).prop_map(|(mode, v)| {
        v.into_iter()
            .enumerate()
            .map(|(i, (x, n))| {
                (n != 0).then(|| match mode {
                    0 => x,
                    1 => x.rem_euclid(1000),
                    2 => (i / 300) as i64,
                    3 => x.rem_euclid(4) * 1_000_000_007,
                    _ => i as i64,
                })
            })
            .collect()
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    #[test]
    fn round_trip_every_type_and_option(v in int_values()) {
        let arrays = arrays(&v);
        for opts in all_opts() {
            for a in &arrays {
                check(a, &opts);
            }
        }
    }

    #[test]
    fn levels_round_trip(levels in prop::collection::vec(0u16..8, 0..5000), max in 1u16..600, cut in 1usize..3000) {
        let levels: Vec<u16> = levels.iter().map(|l| l % max).collect();
        let mut per = Vec::new();
        let mut left = levels.len();
        while left > 0 {
            let n = left.min(cut);
            per.push(n);
            left -= n;
        }
        let (enc, bufs) = compress_levels(&levels, &per).unwrap();
        prop_assert_eq!(bufs.len(), per.len());
        let mut got = Vec::new();
        for (b, n) in bufs.iter().zip(&per) {
            got.extend(decode_levels(&enc, b, *n).unwrap());
        }
        prop_assert_eq!(got, levels);
    }
}

#[test]
fn every_encoding_is_reachable() {
    let mut seen = std::collections::BTreeSet::new();
    let runs: Vec<Option<i64>> = (0..5000).map(|i| Some(i / 1000)).collect();
    let spread: Vec<Option<i64>> = (0..5000).map(|i| Some(i * 7919 % 1000)).collect();
    for opts in all_opts() {
        for a in arrays(&runs).into_iter().chain(arrays(&spread)) {
            let m = check(&a, &opts);
            seen.insert(picked(&m));
            if let Some(C::General(g)) = m.encoding.compression.as_ref() {
                seen.insert(variant_name(g.values.as_ref().unwrap()));
            }
        }
    }
    for e in [
        "flat", "inline", "rle", "variable", "dict", "fsst", "fsl", "general", "bss",
    ] {
        assert!(seen.contains(e), "{e} never picked: {seen:?}");
    }
}

#[test]
fn picks_like_pylance() {
    let opts = EncodeOptions::default();
    let sorted: ArrayRef = Arc::new(Int32Array::from_iter_values(0..10_000));
    let m = check(&sorted, &opts);
    assert_eq!(picked(&m), "inline");
    assert_eq!(m.chunks.len(), 10);

    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let random: ArrayRef = Arc::new(Int64Array::from_iter_values((0..10_000).map(|_| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x as i64
    })));
    let m = check(&random, &opts);
    assert_eq!(picked(&m), "flat");
    assert!(m.chunks.iter().rev().skip(1).all(|c| c.num_values == 512));

    let low: ArrayRef = Arc::new(StringArray::from_iter_values(
        (0..1000).map(|i| ["red", "green", "blue"][i % 3]),
    ));
    for v2_2 in [false, true] {
        let m = check(
            &low,
            &EncodeOptions {
                v2_2,
                ..Default::default()
            },
        );
        assert_eq!(picked(&m), "dict");
        let (enc, block, n) = m.dictionary.as_ref().unwrap();
        assert_eq!(*n, 3);
        assert_eq!(variant_name(enc), if v2_2 { "general" } else { "variable" });
        if !v2_2 {
            // u32 32 | u32 data start | offsets | bytes (facts §4.6)
            assert_eq!(&block[..8], &[32, 0, 0, 0, 24, 0, 0, 0]);
            assert_eq!(&block[24..], b"redgreenblue");
        }
    }
    let m = check(
        &low,
        &EncodeOptions {
            no_dictionary: true,
            ..Default::default()
        },
    );
    assert_eq!(picked(&m), "variable");

    let words = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "theta", "lambda"];
    let eng: ArrayRef =
        Arc::new(StringArray::from_iter_values((0..3000).map(|i| {
            format!("{} {} {} {}", words[i % 8], words[(i / 8) % 8], words[(i / 64) % 8], i)
        })));
    let m = check(&eng, &opts);
    let plain = compress_mini_block(
        eng.as_ref(),
        &EncodeOptions {
            compression: Some("none".into()),
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(
        picked(&m),
        "fsst",
        "fsst {} vs plain {}",
        m.encoded_size(),
        plain.encoded_size()
    );
    assert!(m.encoded_size() < plain.encoded_size());
}

#[test]
fn formats_match_the_facts() {
    // Variable chunk: offsets are positions in the buffer, bytes padded with 0x48.
    let a: ArrayRef = Arc::new(StringArray::from(vec![Some("a"), None, Some(""), Some("eeeee")]));
    let m = check(&a, &EncodeOptions::default());
    assert_eq!(
        m.chunks[0].buffers[0],
        [20u32, 21, 21, 21, 26]
            .iter()
            .flat_map(|x| x.to_le_bytes())
            .chain(*b"aeeeee\x48\x48")
            .collect::<Vec<u8>>()
    );
    // bool Flat(1)
    let b: ArrayRef = Arc::new(BooleanArray::from(vec![
        Some(true),
        None,
        Some(true),
        None,
        Some(false),
    ]));
    let m = check(&b, &EncodeOptions::default());
    assert_eq!(m.chunks[0].buffers[0], vec![0b101]);
    // RLE of 10 runs of 1000
    let r: ArrayRef = Arc::new(Int32Array::from_iter_values((0..10_000).map(|i| i / 1000)));
    let m = check(&r, &EncodeOptions::default());
    assert_eq!(picked(&m), "rle");
    assert_eq!(m.chunks[0].num_values, 4096);
    assert_eq!(&m.chunks[0].buffers[1][..4], &[255, 255, 255, 235]);
    // zstd: u64 size + frame
    let z = check(
        &r,
        &EncodeOptions {
            compression: Some("zstd".into()),
            ..Default::default()
        },
    );
    assert_eq!(
        &z.chunks[0].buffers[0][..12],
        &[0, 16, 0, 0, 0, 0, 0, 0, 0x28, 0xb5, 0x2f, 0xfd]
    );
    // tiny int pages stay flat
    let t: ArrayRef = Arc::new(Int32Array::from(vec![1, 2, 3, 4, 5]));
    assert_eq!(picked(&check(&t, &EncodeOptions::default())), "flat");
}

#[test]
fn unsupported_types_are_errors() {
    let l = arrow_array::ListArray::from_iter_primitive::<Int32Type, _, _>(vec![Some(vec![Some(1)])]);
    assert!(matches!(
        compress_mini_block(&l, &EncodeOptions::default()),
        Err(Error::Unsupported(_))
    ));
    let wide: ArrayRef = Arc::new(StringArray::from(vec!["x".repeat(9000)]));
    assert!(matches!(
        compress_mini_block(wide.as_ref(), &EncodeOptions::default()),
        Err(Error::Unsupported(_))
    ));
    let bad = EncodeOptions {
        compression: Some("brotli".into()),
        ..Default::default()
    };
    assert!(compress_mini_block(&Int32Array::from(vec![1]), &bad).is_err());
    assert!(compress_levels(&[1, 2], &[3]).is_err());
}
