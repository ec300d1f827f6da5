//! Builders of Lance 2.1 pages for tests and benches: mini-block pages of bit-packed
//! integers, of strings (plain or FSST) and of lists with rep/def levels, and full-zip
//! string pages. The byte layouts are the ones `lancelet_encoding::v2_1` documents and
//! decodes (`page_decode` for chunks and full-zip, `values_decode` for the encodings),
//! checked against pylance's own files in `tests/data/file/v2_1` and `v2_2`.
#![allow(
    dead_code,
    clippy::unwrap_used,
    missing_docs,
    reason = "helpers shared by test files, each using some; a failed unwrap is a failed test"
)]

use arrow_buffer::Buffer;
use lancelet_encoding::v2_1::bitpack::{pack_block, push_uint, BLOCK};
use lancelet_encoding::v2_1::fsst::Compressor;
use lancelet_proto::pb21::{self, compressive_encoding::Compression as C, page_layout::Layout};

pub fn enc(c: C) -> pb21::CompressiveEncoding {
    pb21::CompressiveEncoding { compression: Some(c) }
}

pub fn flat(bits: u64) -> pb21::CompressiveEncoding {
    enc(C::Flat(pb21::Flat {
        bits_per_value: bits,
        data: None,
    }))
}

pub fn variable32() -> pb21::CompressiveEncoding {
    enc(C::Variable(Box::new(pb21::Variable {
        offsets: Some(Box::new(flat(32))),
        values: None,
    })))
}

pub fn inline_bitpacking(w: u64) -> pb21::CompressiveEncoding {
    enc(C::InlineBitpacking(pb21::InlineBitpacking {
        uncompressed_bits_per_value: w,
        values: None,
    }))
}

pub fn fsst(table: Vec<u8>) -> pb21::CompressiveEncoding {
    enc(C::Fsst(Box::new(pb21::Fsst {
        symbol_table: table.into(),
        values: Some(Box::new(variable32())),
    })))
}

/// Deterministic xorshift generator.
pub fn rng(seed: u64) -> impl FnMut() -> u64 {
    let mut x = seed | 1;
    move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    }
}

/// English-like sentences.
pub fn english(n: usize, seed: u64) -> Vec<String> {
    const WORDS: &[&str] = &[
        "the",
        "of",
        "and",
        "to",
        "in",
        "is",
        "that",
        "for",
        "it",
        "as",
        "was",
        "with",
        "be",
        "by",
        "on",
        "not",
        "he",
        "this",
        "are",
        "or",
        "his",
        "from",
        "at",
        "which",
        "but",
        "have",
        "an",
        "had",
        "they",
        "you",
        "were",
        "their",
        "one",
        "all",
        "we",
        "can",
        "her",
        "has",
        "there",
        "been",
        "if",
        "more",
        "when",
        "will",
        "would",
        "who",
        "so",
        "no",
        "out",
        "up",
        "into",
        "do",
        "any",
        "time",
        "people",
        "about",
        "other",
        "many",
        "then",
        "them",
        "these",
        "some",
        "could",
        "first",
        "river",
        "mountain",
        "language",
        "history",
        "between",
        "through",
        "important",
        "government",
        "during",
        "without",
        "another",
        "because",
        "different",
        "following",
        "university",
        "village",
        "century",
        "population",
        "family",
        "school",
        "music",
        "album",
        "season",
        "league",
        "north",
        "south",
    ];
    let mut next = rng(seed);
    (0..n)
        .map(|_| {
            let k = 4 + next() % 16;
            let mut s = String::new();
            for i in 0..k {
                if i > 0 {
                    s.push_str(if next().is_multiple_of(9) { ", " } else { " " });
                }
                let w = WORDS[(next() % WORDS.len() as u64) as usize];
                if i == 0 {
                    let mut c = w.chars();
                    if let Some(f) = c.next() {
                        s.extend(f.to_uppercase());
                        s.push_str(c.as_str());
                    }
                } else {
                    s.push_str(w);
                }
            }
            s.push('.');
            s
        })
        .collect()
}

fn pad(buf: &mut Vec<u8>, align: usize, byte: u8) {
    while !buf.len().is_multiple_of(align) {
        buf.push(byte);
    }
}

/// One chunk's contents before layout.
pub struct Chunk {
    pub num_values: usize,
    pub num_levels: usize,
    pub rep: Option<Vec<u8>>,
    pub def: Option<Vec<u8>>,
    pub values: Vec<Vec<u8>>,
}

/// Lays chunks out as a 2.1 mini-block page (u16 metadata words and sizes).
pub fn mini_block(
    chunks: &[Chunk],
    value: pb21::CompressiveEncoding,
    rep: Option<pb21::CompressiveEncoding>,
    def: Option<pb21::CompressiveEncoding>,
    layers: Vec<i32>,
) -> (pb21::PageLayout, Vec<Buffer>) {
    let mut meta = Vec::new();
    let mut data = Vec::new();
    let num_items: usize = chunks.iter().map(|c| c.num_values).sum();
    for (i, c) in chunks.iter().enumerate() {
        let mut b = Vec::new();
        push_uint(&mut b, c.num_levels as u64, 2);
        for l in [&c.rep, &c.def].into_iter().flatten() {
            push_uint(&mut b, l.len() as u64, 2);
        }
        for v in &c.values {
            push_uint(&mut b, v.len() as u64, 2);
        }
        pad(&mut b, 8, 0xFE);
        for part in [&c.rep, &c.def].into_iter().flatten().chain(c.values.iter()) {
            b.extend_from_slice(part);
            pad(&mut b, 8, 0xFE);
        }
        let last = i + 1 == chunks.len();
        let log = if last { 0 } else { c.num_values.trailing_zeros() as u64 };
        assert!(last || c.num_values.is_power_of_two());
        push_uint(&mut meta, (((b.len() / 8 - 1) as u64) << 4) | log, 2);
        data.extend(b);
    }
    let layout = pb21::PageLayout {
        layout: Some(Layout::MiniBlockLayout(pb21::MiniBlockLayout {
            rep_compression: rep,
            def_compression: def,
            value_compression: Some(value),
            dictionary: None,
            num_dictionary_items: 0,
            layers,
            num_buffers: chunks.first().map_or(1, |c| c.values.len() as u64),
            repetition_index_depth: 0,
            num_items: num_items as u64,
            has_large_chunk: false,
        })),
    };
    (layout, vec![Buffer::from_vec(meta), Buffer::from_vec(data)])
}

/// One inline bit-packed block (header word + packed values) of `w`-bit values.
pub fn inline_block(values: &[u64], w: usize) -> Vec<u8> {
    let bits = values
        .iter()
        .map(|v| 64 - v.leading_zeros() as usize)
        .max()
        .unwrap_or(0);
    let mut block = [0u64; BLOCK];
    block[..values.len()].copy_from_slice(values);
    let mut out = Vec::new();
    push_uint(&mut out, bits as u64, w / 8);
    out.extend(pack_block(&block, w, bits).unwrap());
    out
}

/// A mini-block page of non-negative int64 values, InlineBitpacking(64), 1024 per chunk.
pub fn mini_block_i64(values: &[i64]) -> (pb21::PageLayout, Vec<Buffer>) {
    let chunks: Vec<Chunk> = values
        .chunks(BLOCK)
        .map(|c| {
            let v: Vec<u64> = c.iter().map(|x| *x as u64).collect();
            Chunk {
                num_values: c.len(),
                num_levels: 0,
                rep: None,
                def: None,
                values: vec![inline_block(&v, 64)],
            }
        })
        .collect();
    mini_block(&chunks, inline_bitpacking(64), None, None, vec![1])
}

/// A Variable chunk buffer: absolute u32 positions, bytes, 0x48 padding to 4.
pub fn variable_chunk(values: &[&[u8]]) -> Vec<u8> {
    let n = values.len();
    let mut out = Vec::new();
    let mut pos = (n + 1) * 4;
    push_uint(&mut out, pos as u64, 4);
    for v in values {
        pos += v.len();
        push_uint(&mut out, pos as u64, 4);
    }
    for v in values {
        out.extend_from_slice(v);
    }
    pad(&mut out, 4, 0x48);
    out
}

/// Splits `values` into power-of-two chunks whose Variable buffer stays near 4 KiB.
fn string_chunks(values: &[Vec<u8>]) -> Vec<Chunk> {
    let mut chunks = Vec::new();
    let mut at = 0;
    while at < values.len() {
        let mut n = 1usize;
        loop {
            let next = (n * 2).min(values.len() - at);
            let bytes: usize = values[at..at + next].iter().map(|v| v.len() + 4).sum();
            if next == n || bytes > 4096 {
                break;
            }
            n = next;
        }
        if at + n < values.len() && !n.is_power_of_two() {
            n = n.next_power_of_two() / 2;
        }
        let refs: Vec<&[u8]> = values[at..at + n].iter().map(|v| v.as_slice()).collect();
        chunks.push(Chunk {
            num_values: n,
            num_levels: 0,
            rep: None,
            def: None,
            values: vec![variable_chunk(&refs)],
        });
        at += n;
    }
    chunks
}

/// A mini-block page of strings, FSST compressed when `fsst_on`.
pub fn mini_block_strings(values: &[String], fsst_on: bool) -> (pb21::PageLayout, Vec<Buffer>) {
    if fsst_on {
        let c = Compressor::train(values.iter().map(|v| v.as_bytes()));
        let compressed: Vec<Vec<u8>> = values
            .iter()
            .map(|v| {
                let mut out = Vec::new();
                c.compress_into(v.as_bytes(), &mut out);
                out
            })
            .collect();
        mini_block(&string_chunks(&compressed), fsst(c.symbol_table()), None, None, vec![1])
    } else {
        let raw: Vec<Vec<u8>> = values.iter().map(|v| v.as_bytes().to_vec()).collect();
        mini_block(&string_chunks(&raw), variable32(), None, None, vec![1])
    }
}

/// Rep/def levels of `list<int32>` rows (None = null list), layers [item, null-and-empty
/// list], and the visible values.
pub fn list_levels(rows: &[Option<Vec<i32>>]) -> (Vec<u16>, Vec<u16>, Vec<i32>) {
    let (mut rep, mut def, mut vals) = (Vec::new(), Vec::new(), Vec::new());
    for r in rows {
        match r {
            None => {
                rep.push(1);
                def.push(1);
            }
            Some(v) if v.is_empty() => {
                rep.push(1);
                def.push(2);
            }
            Some(v) => {
                for (i, x) in v.iter().enumerate() {
                    rep.push(u16::from(i == 0));
                    def.push(0);
                    vals.push(*x);
                }
            }
        }
    }
    (rep, def, vals)
}

/// A one-chunk mini-block page of `list<int32>` with Flat(16) rep/def levels.
pub fn mini_block_list(rows: &[Option<Vec<i32>>]) -> (pb21::PageLayout, Vec<Buffer>) {
    let (rep, def, vals) = list_levels(rows);
    let le16 = |v: &[u16]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
    let chunk = Chunk {
        num_values: vals.len(),
        num_levels: rep.len(),
        rep: Some(le16(&rep)),
        def: Some(le16(&def)),
        values: vec![vals.iter().flat_map(|x| x.to_le_bytes()).collect()],
    };
    mini_block(&[chunk], flat(32), Some(flat(16)), Some(flat(16)), vec![1, 6])
}

/// A full-zip page of nullable strings: a 1-byte def control word, then u32 length and
/// bytes for valid values (FSST compressed per value when `table` is given).
pub fn full_zip_strings(values: &[Option<String>], compressor: Option<&Compressor>) -> (pb21::PageLayout, Vec<Buffer>) {
    let mut data = Vec::new();
    for v in values {
        match v {
            None => data.push(1),
            Some(s) => {
                data.push(0);
                let bytes = match compressor {
                    Some(c) => {
                        let mut out = Vec::new();
                        c.compress_into(s.as_bytes(), &mut out);
                        out
                    }
                    None => s.as_bytes().to_vec(),
                };
                push_uint(&mut data, bytes.len() as u64, 4);
                data.extend(bytes);
            }
        }
    }
    let value = match compressor {
        Some(c) => fsst(c.symbol_table()),
        None => variable32(),
    };
    let layout = pb21::PageLayout {
        layout: Some(Layout::FullZipLayout(pb21::FullZipLayout {
            bits_rep: 0,
            bits_def: 1,
            num_items: values.len() as u32,
            num_visible_items: values.len() as u32,
            value_compression: Some(value),
            layers: vec![3],
            details: Some(pb21::full_zip_layout::Details::BitsPerOffset(32)),
        })),
    };
    (layout, vec![Buffer::from_vec(data)])
}
