//! Criterion benches of the Lance 2.1+ decoders: bit unpacking, FSST and whole
//! mini-block pages, plus the mini-block value encoder. Throughput is in bytes of
//! decoded output (of input values for the encoder).
//!
//! Quick run: `cargo bench -p lancelet-encoding --bench decode -- --warm-up-time 1 --measurement-time 2`.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    missing_docs,
    reason = "test code: a failed unwrap or panic is a failed test"
)]
#![expect(clippy::print_stderr, reason = "the bench reports the FSST compression ratio")]

#[path = "../tests/common/mod.rs"]
mod common;

use std::hint::black_box;

use arrow_array::Array;
use arrow_schema::DataType;
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use lancelet_encoding::v2_1::bitpack::{decode_out_of_line, pack_block, unpack_block, unpack_block_into, BLOCK};
use lancelet_encoding::v2_1::fsst::{Compressor, SymbolTable};
use lancelet_encoding::v2_1::{decode_page, PathNode};

/// Blocks per bench iteration (64 Ki values: 256 KiB of u32 output, cache resident).
const BLOCKS: usize = 64;

use common::rng as xorshift;

fn packed_u32(b: usize) -> Vec<u8> {
    let mut next = xorshift(b as u64 + 7);
    let mask = if b == 64 { u64::MAX } else { (1u64 << b) - 1 };
    let mut out = Vec::new();
    for _ in 0..BLOCKS {
        let mut block = [0u64; BLOCK];
        block.iter_mut().for_each(|v| *v = next() & mask);
        out.extend(pack_block(&block, 32, b).unwrap());
    }
    out
}

fn bitpack(c: &mut Criterion) {
    let mut g = c.benchmark_group("bitpack_unpack_u32");
    g.throughput(Throughput::Bytes((BLOCKS * BLOCK * 4) as u64));
    let mut out = vec![0u8; BLOCK * 4 * BLOCKS];
    for b in 1..=32usize {
        let packed = packed_u32(b);
        let len = b * 128;
        g.bench_with_input(BenchmarkId::new("block", b), &packed, |bench, packed| {
            bench.iter(|| {
                for (src, dst) in packed.chunks_exact(len).zip(out.chunks_exact_mut(BLOCK * 4)) {
                    unpack_block_into(src, 32, b, dst).unwrap();
                }
                black_box(&out);
            })
        });
    }
    g.finish();
    let mut g = c.benchmark_group("bitpack_out_of_line_u32");
    g.throughput(Throughput::Bytes((BLOCKS * BLOCK * 4) as u64));
    for b in [1usize, 4, 8, 12, 16, 24, 32] {
        let packed = packed_u32(b);
        g.bench_with_input(BenchmarkId::new("page", b), &packed, |bench, packed| {
            bench.iter(|| black_box(decode_out_of_line(packed, 32, b as u64, BLOCKS * BLOCK).unwrap()))
        });
    }
    g.finish();
    // The scalar reference (one value per u64, then to bytes), for comparison.
    let mut g = c.benchmark_group("bitpack_scalar_reference_u32");
    g.throughput(Throughput::Bytes((BLOCK * 4) as u64));
    for b in [4usize, 8, 16] {
        let packed = packed_u32(b);
        g.bench_with_input(BenchmarkId::new("block", b), &packed, |bench, packed| {
            let mut vals = [0u64; BLOCK];
            let mut out = Vec::with_capacity(BLOCK * 4);
            bench.iter(|| {
                unpack_block(&packed[..b * 128], 32, b, &mut vals).unwrap();
                out.clear();
                out.extend(vals.iter().flat_map(|v| (*v as u32).to_le_bytes()));
                black_box(&out);
            })
        });
    }
    g.finish();
}

/// About 1 MiB of English-like sentences.
fn text() -> Vec<String> {
    common::english(12_000, 42)
}

fn fsst(c: &mut Criterion) {
    let text = text();
    let raw: usize = text.iter().map(|s| s.len()).sum();
    let comp = Compressor::train(text.iter().map(|s| s.as_bytes()));
    let (offsets, data) = comp.compress_values(text.iter().map(|s| s.as_bytes()));
    let table = SymbolTable::parse(&comp.symbol_table()).unwrap();
    eprintln!(
        "FSST: {raw} bytes -> {} bytes ({:.2}x), {} symbols",
        data.len(),
        raw as f64 / data.len() as f64,
        comp.num_symbols()
    );
    let mut g = c.benchmark_group("fsst");
    g.throughput(Throughput::Bytes(raw as u64));
    g.bench_function("decompress_english", |b| {
        b.iter(|| black_box(table.decompress_values(&offsets, &data).unwrap()))
    });
    g.bench_function("compress_english", |b| {
        b.iter(|| black_box(comp.compress_values(text.iter().map(|s| s.as_bytes()))))
    });
    // The same values through the one-value call (one parse, no interleaving).
    g.bench_function("compress_english_one_by_one", |b| {
        b.iter(|| {
            let mut out = Vec::with_capacity(raw);
            for s in &text {
                comp.compress_into(s.as_bytes(), &mut out);
            }
            black_box(out)
        })
    });
    g.bench_function("train_and_compress_english", |b| {
        b.iter(|| {
            let c = Compressor::train(text.iter().map(|s| s.as_bytes()));
            black_box(c.compress_values(text.iter().map(|s| s.as_bytes())))
        })
    });
    g.finish();
}

fn pages(c: &mut Criterion) {
    let mut g = c.benchmark_group("mini_block_page");
    let mut next = xorshift(5);
    let ints: Vec<i64> = (0..1 << 17).map(|_| (next() % (1 << 20)) as i64).collect();
    let (layout, buffers) = common::mini_block_i64(&ints);
    let path = [PathNode::Leaf {
        data_type: DataType::Int64,
    }];
    g.throughput(Throughput::Bytes((ints.len() * 8) as u64));
    g.bench_function("int64_bitpacked_20bit", |b| {
        b.iter(|| black_box(decode_page(&layout, &buffers, ints.len() as u64, &path).unwrap()))
    });
    let text = text();
    let raw: usize = text.iter().map(|s| s.len()).sum();
    let path = [PathNode::Leaf {
        data_type: DataType::Utf8,
    }];
    g.throughput(Throughput::Bytes(raw as u64));
    for (name, on) in [("strings_plain", false), ("strings_fsst", true)] {
        let (layout, buffers) = common::mini_block_strings(&text, on);
        let got = decode_page(&layout, &buffers, text.len() as u64, &path).unwrap();
        assert_eq!(got.len(), text.len());
        g.bench_function(name, |b| {
            b.iter(|| black_box(decode_page(&layout, &buffers, text.len() as u64, &path).unwrap()))
        });
    }
    g.finish();
}

/// Encoding one page's values ([`compress_mini_block`], the whole strategy: every
/// candidate encoding is built or sized). Throughput is in bytes of input values.
fn encode(c: &mut Criterion) {
    use lancelet_encoding::v2_1::values_encode::{compress_mini_block, EncodeOptions};
    let mut g = c.benchmark_group("encode_mini_block");
    let opts = EncodeOptions::default();
    let mut next = xorshift(9);
    let ints = arrow_array::Int64Array::from_iter_values((0..1 << 17).map(|_| (next() % (1 << 20)) as i64));
    g.throughput(Throughput::Bytes((ints.len() * 8) as u64));
    g.bench_function("int64_20bit", |b| {
        b.iter(|| black_box(compress_mini_block(&ints, &opts).unwrap()))
    });
    let text = text();
    let raw: usize = text.iter().map(|s| s.len()).sum();
    let strings = arrow_array::StringArray::from_iter_values(text.iter());
    g.throughput(Throughput::Bytes(raw as u64));
    g.bench_function("strings_english", |b| {
        b.iter(|| black_box(compress_mini_block(&strings, &opts).unwrap()))
    });
    g.finish();
}

criterion_group!(benches, bitpack, fsst, pages, encode);
criterion_main!(benches);
