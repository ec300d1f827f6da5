//! Robustness of the 2.1+ decoders against corrupt bytes: every decoder that reads bytes
//! from disk (bit unpacking, FSST, general compression, mini-block chunks, full-zip,
//! rep/def assembly) runs over thousands of truncated, bit-flipped and random inputs
//! derived from valid encodings (fixed seeds) and must return `Ok` or `Err`, never panic.
//! The valid pages are first checked to decode to what was encoded.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a failed unwrap or panic is a failed test"
)]

use crate::common;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

use arrow_array::{Array, ArrayRef, Int32Array, Int64Array, ListArray, StringArray};
use arrow_buffer::Buffer;
use arrow_schema::DataType;
use common::*;
use lancelet_encoding::v2_1::bitpack::{decode_inline, decode_out_of_line};
use lancelet_encoding::v2_1::compression::decompress;
use lancelet_encoding::v2_1::fsst::{Compressor, SymbolTable};
use lancelet_encoding::v2_1::repdef_decode::assemble;
use lancelet_encoding::v2_1::{decode_page, parse_layout, PathNode};
use lancelet_proto::pb21;
use prost::Message;

/// Runs `f`, failing the test with `what` if it panics.
fn no_panic<T>(what: &str, f: impl FnOnce() -> T) {
    if catch_unwind(AssertUnwindSafe(f)).is_err() {
        panic!("decoder panicked on {what}");
    }
}

/// A corrupted copy of `buf`: truncated, bit-flipped, overwritten, extended or random.
fn mutate(buf: &[u8], next: &mut impl FnMut() -> u64) -> (Vec<u8>, String) {
    let mut b = buf.to_vec();
    let pick = |n: usize, next: &mut dyn FnMut() -> u64| (next() % (n as u64).max(1)) as usize;
    match next() % 6 {
        0 => {
            let cut = pick(b.len() + 1, next);
            b.truncate(cut);
            (b, format!("truncated to {cut}"))
        }
        1 | 2 => {
            let flips = 1 + pick(4, next);
            for _ in 0..flips {
                if !b.is_empty() {
                    let i = pick(b.len(), next);
                    b[i] ^= 1 << (next() % 8);
                }
            }
            (b, format!("{flips} bit flips"))
        }
        3 => {
            // overwrite a byte with an extreme value (sizes, widths, counts)
            if !b.is_empty() {
                let i = pick(b.len(), next);
                b[i] = [0, 0xFF, 0x7F, 0x80, 64, 65][pick(6, next)];
            }
            (b, "overwritten byte".into())
        }
        4 => {
            let extra = pick(64, next);
            b.extend((0..extra).map(|_| next() as u8));
            (b, format!("{extra} bytes appended"))
        }
        _ => {
            let len = pick(2 * b.len() + 16, next);
            ((0..len).map(|_| next() as u8).collect(), format!("{len} random bytes"))
        }
    }
}

struct Case {
    name: &'static str,
    layout: pb21::PageLayout,
    buffers: Vec<Buffer>,
    rows: u64,
    path: Vec<PathNode>,
    expect: ArrayRef,
}

fn leaf(dt: DataType) -> PathNode {
    PathNode::Leaf { data_type: dt }
}

fn cases() -> Vec<Case> {
    let mut next = rng(11);
    let ints: Vec<i64> = (0..2500).map(|i| (next() % 5000) as i64 + i % 3).collect();
    let (l, b) = mini_block_i64(&ints);
    let mut out = vec![Case {
        name: "mini-block int64",
        layout: l,
        buffers: b,
        rows: ints.len() as u64,
        path: vec![leaf(DataType::Int64)],
        expect: Arc::new(Int64Array::from(ints)),
    }];
    let text = english(600, 5);
    for (name, on) in [("mini-block strings", false), ("mini-block FSST strings", true)] {
        let (l, b) = mini_block_strings(&text, on);
        out.push(Case {
            name,
            layout: l,
            buffers: b,
            rows: text.len() as u64,
            path: vec![leaf(DataType::Utf8)],
            expect: Arc::new(StringArray::from(text.clone())),
        });
    }
    let rows: Vec<Option<Vec<i32>>> = (0..300)
        .map(|i| match i % 7 {
            0 => None,
            1 => Some(vec![]),
            k => Some((0..k).map(|x| x * i).collect()),
        })
        .collect();
    let (l, b) = mini_block_list(&rows);
    let list = ListArray::from_iter_primitive::<arrow_array::types::Int32Type, _, _>(
        rows.iter()
            .map(|r| r.as_ref().map(|v| v.iter().map(|x| Some(*x)).collect::<Vec<_>>())),
    );
    out.push(Case {
        name: "mini-block list<int32>",
        layout: l,
        buffers: b,
        rows: rows.len() as u64,
        path: vec![PathNode::List { large: false }, leaf(DataType::Int32)],
        expect: Arc::new(list),
    });
    let opt: Vec<Option<String>> = english(200, 9)
        .into_iter()
        .enumerate()
        .map(|(i, s)| (i % 5 != 2).then_some(s))
        .collect();
    let c = Compressor::train(opt.iter().flatten().map(|s| s.as_bytes()));
    for (name, comp) in [("full-zip strings", None), ("full-zip FSST strings", Some(&c))] {
        let (l, b) = full_zip_strings(&opt, comp);
        out.push(Case {
            name,
            layout: l,
            buffers: b,
            rows: opt.len() as u64,
            path: vec![leaf(DataType::Utf8)],
            expect: Arc::new(StringArray::from(opt.clone())),
        });
    }
    out.extend(packed_cases());
    out
}

/// Packed struct pages as our writer makes them: fixed fields row-major in mini-block
/// chunks (with null rows), and string fields zipped whole (full-zip, 2.2).
fn packed_cases() -> Vec<Case> {
    use arrow_array::{Float64Array, StructArray};
    use arrow_buffer::NullBuffer;
    use arrow_schema::{Field, Fields};
    use lancelet_encoding::v2_1::page_encode::{encode_page, PageOptions};
    use lancelet_encoding::v2_1::repdef_encode::shred;
    let n = 700usize;
    let nulls = Some(NullBuffer::from((0..n).map(|i| i % 9 != 4).collect::<Vec<_>>()));
    let fixed = Fields::from(vec![
        Field::new("a", DataType::Int32, true),
        Field::new("b", DataType::Float64, true),
    ]);
    let var = Fields::from(vec![
        Field::new("a", DataType::Int32, true),
        Field::new("s", DataType::Utf8, true),
    ]);
    let text = english(n, 21);
    let columns: [(&'static str, Fields, Vec<ArrayRef>); 2] = [
        (
            "mini-block packed struct",
            fixed.clone(),
            vec![
                Arc::new(Int32Array::from((0..n as i32).collect::<Vec<_>>())),
                Arc::new(Float64Array::from((0..n).map(|i| i as f64 / 3.0).collect::<Vec<_>>())),
            ],
        ),
        (
            "full-zip variable packed struct",
            var.clone(),
            vec![
                Arc::new(Int32Array::from((0..n as i32).collect::<Vec<_>>())),
                Arc::new(StringArray::from(text)),
            ],
        ),
    ];
    columns
        .into_iter()
        .map(|(name, fields, arrays)| {
            let md: std::collections::HashMap<String, String> = [("packed".to_string(), "true".to_string())].into();
            let field = Field::new("p", DataType::Struct(fields.clone()), true).with_metadata(md);
            let array: ArrayRef = Arc::new(StructArray::new(fields, arrays, nulls.clone()));
            let shredded = shred(&field, array.as_ref()).unwrap().remove(0);
            let opts = PageOptions {
                v2_2: true,
                ..Default::default()
            };
            let page = encode_page(&shredded, &opts).unwrap();
            Case {
                name,
                layout: page.layout,
                buffers: page.buffers,
                rows: n as u64,
                path: vec![leaf(field.data_type().clone())],
                expect: array,
            }
        })
        .collect()
}

#[test]
fn valid_pages_decode() {
    for c in cases() {
        let got = decode_page(&c.layout, &c.buffers, c.rows, &c.path).unwrap_or_else(|e| panic!("{}: {e}", c.name));
        assert_eq!(got.as_ref(), c.expect.as_ref(), "{}", c.name);
    }
}

#[test]
fn corrupt_pages_never_panic() {
    let mut next = rng(0x5eed);
    for c in cases() {
        let layout_bytes = c.layout.encode_to_vec();
        for iter in 0..1500 {
            let mut buffers = c.buffers.clone();
            let mut layout = c.layout.clone();
            let mut rows = c.rows;
            let what = match next() % 8 {
                0 => {
                    let (m, d) = mutate(&layout_bytes, &mut next);
                    match parse_layout(&m) {
                        Ok(l) => layout = l,
                        Err(_) => continue,
                    }
                    format!("layout {d}")
                }
                1 => {
                    rows = next() % (2 * c.rows + 2);
                    format!("{rows} rows")
                }
                _ => {
                    let i = (next() % buffers.len() as u64) as usize;
                    let (m, d) = mutate(buffers[i].as_slice(), &mut next);
                    buffers[i] = Buffer::from_vec(m);
                    format!("buffer {i} {d}")
                }
            };
            no_panic(&format!("{} #{iter}: {what}", c.name), || {
                let _ = decode_page(&layout, &buffers, rows, &c.path);
            });
        }
    }
}

#[test]
fn corrupt_bitpacking_never_panics() {
    let mut next = rng(7);
    for w in [8usize, 16, 32, 64] {
        let vals: Vec<u64> = (0..BLOCK_VALUES).map(|_| next() % (1 << (w / 2))).collect();
        let mut inline = Vec::new();
        for c in vals.chunks(1024) {
            inline.extend(inline_block(c, w));
        }
        for iter in 0..1000 {
            let (m, d) = mutate(&inline, &mut next);
            let n = (next() % 3000) as usize;
            let b = next() % (w as u64 + 3);
            no_panic(&format!("bitpacking w={w} #{iter} {d} n={n} b={b}"), || {
                let _ = decode_inline(&m, w as u64, n);
                let _ = decode_out_of_line(&m, w as u64, b, n);
            });
        }
    }
}

const BLOCK_VALUES: usize = 2500;

#[test]
fn corrupt_fsst_never_panics() {
    let text = english(300, 1);
    let c = Compressor::train(text.iter().map(|s| s.as_bytes()));
    let table = c.symbol_table();
    let (offsets, data) = c.compress_values(text.iter().map(|s| s.as_bytes()));
    let mut next = rng(3);
    for iter in 0..3000 {
        let (t, dt) = if next().is_multiple_of(2) {
            mutate(&table, &mut next)
        } else {
            (table.clone(), "valid table".into())
        };
        let (d, dd) = mutate(&data, &mut next);
        let mut offs = offsets.clone();
        if next().is_multiple_of(4) {
            let i = (next() % offs.len() as u64) as usize;
            offs[i] = next() % (2 * data.len() as u64 + 1);
        }
        no_panic(&format!("FSST #{iter}: table {dt}, data {dd}"), || {
            if let Ok(t) = SymbolTable::parse(&t) {
                let _ = t.decompress_values(&offs, &d);
                let mut out = Vec::new();
                let _ = t.decompress_into(&d, &mut out);
            }
        });
    }
}

#[test]
fn corrupt_general_compression_never_panics() {
    let raw: Vec<u8> = english(200, 2).concat().into_bytes();
    let lz4 = lz4_flex::block::compress_prepend_size(&raw);
    let mut zstd = (raw.len() as u64).to_le_bytes().to_vec();
    zstd.extend(zstd::bulk::compress(&raw, 3).unwrap());
    assert_eq!(decompress(1, &lz4).unwrap(), raw);
    assert_eq!(decompress(2, &zstd).unwrap(), raw);
    let mut next = rng(4);
    for iter in 0..2000 {
        let (scheme, src) = if iter % 2 == 0 { (1, &lz4) } else { (2, &zstd) };
        let (m, d) = mutate(src, &mut next);
        no_panic(&format!("general #{iter} scheme {scheme}: {d}"), || {
            let _ = decompress(scheme, &m);
        });
    }
}

#[test]
fn inconsistent_levels_never_panic() {
    let mut next = rng(9);
    let paths: Vec<(Vec<PathNode>, Vec<i32>)> = vec![
        (vec![PathNode::List { large: false }, leaf(DataType::Int32)], vec![1, 6]),
        (
            vec![
                PathNode::List { large: true },
                PathNode::Struct { child: "s".into() },
                PathNode::List { large: false },
                leaf(DataType::Int32),
            ],
            vec![3, 4, 3, 5],
        ),
        (
            vec![PathNode::Struct { child: "a".into() }, leaf(DataType::Int32)],
            vec![3, 3],
        ),
    ];
    for iter in 0..4000 {
        let (path, layers) = &paths[iter % paths.len()];
        let n = (next() % 40) as usize;
        let rep: Vec<u16> = (0..n).map(|_| (next() % 4) as u16).collect();
        let def: Vec<u16> = (0..n).map(|_| (next() % 7) as u16).collect();
        let nv = (next() % 40) as usize;
        let values: ArrayRef = Arc::new(Int32Array::from((0..nv as i32).collect::<Vec<_>>()));
        let mut layers = layers.clone();
        if next().is_multiple_of(5) {
            let i = (next() % layers.len() as u64) as usize;
            layers[i] = (next() % 8) as i32;
        }
        let use_rep = !next().is_multiple_of(4);
        let use_def = !next().is_multiple_of(4);
        no_panic(&format!("levels #{iter}: rep {rep:?} def {def:?} {nv} values"), || {
            if let Ok(a) = assemble(
                path,
                &layers,
                use_rep.then_some(rep.as_slice()),
                use_def.then_some(def.as_slice()),
                values,
            ) {
                a.to_data().validate_full().unwrap();
            }
        });
    }
}
