//! Full-text index decoders over hostile bytes. Byte 0 picks the mode; errors are fine, a
//! panic, abort or runaway allocation is a bug.
//!
//! * mode 0: a posting block (byte 1: postings in it, byte 2: tail coding) decoded.
//! * mode 1: a version 2 position stream for documents whose frequencies are bytes 1..9.
//! * mode 2: an `fst` token map (the rest) whose checksum holds, searched exactly and fuzzily.
//! * mode 3: a whole index directory: u16-length-prefixed `metadata.lance`,
//!   `part_0_tokens.lance`, `part_0_docs.lance` and `part_0_invert.lance`, opened and
//!   searched with a match and a phrase query.
#![no_main]

use std::sync::Arc;

use futures::executor::block_on;
use lancelet_fts::codec::{decode_block, Tail};
use lancelet_fts::search::{evaluate, ColumnSearch};
use lancelet_fts::{FtsIndex, FtsQuery};
use lancelet_index::scalar::MemoryStore;
use libfuzzer_sys::fuzz_target;

fn sections(mut data: &[u8]) -> Vec<&[u8]> {
    let mut out = Vec::new();
    while out.len() < 4 {
        let [a, b, rest @ ..] = data else { break };
        let len = usize::from(u16::from_le_bytes([*a, *b])).min(rest.len());
        let (s, r) = rest.split_at(len);
        out.push(s);
        data = r;
    }
    out
}

fuzz_target!(|data: &[u8]| {
    let [mode, rest @ ..] = data else { return };
    match mode % 4 {
        0 => {
            let [n, tail, bytes @ ..] = rest else { return };
            let tail = if tail % 2 == 0 { Tail::Fixed32 } else { Tail::VarintDelta };
            let (mut d, mut f) = (Vec::new(), Vec::new());
            let _ = decode_block(bytes, usize::from(*n), tail, &mut d, &mut f);
        }
        1 => {
            if rest.len() < 8 {
                return;
            }
            let freqs: Vec<u32> = rest[..8].iter().map(|b| u32::from(*b)).collect();
            let mut out = Vec::new();
            let _ = lancelet_fts::positions::decode_v2_block(&rest[8..], &freqs, &mut out);
        }
        2 => {
            // As the reader does: only a dictionary whose checksum holds is walked.
            if let Ok(map) = fst::Map::new(rest.to_vec()).and_then(|m| m.as_fst().verify().map(|()| m)) {
                let _ = map.get("fox");
                let lev = fst::automaton::Levenshtein::new("fox", 1);
                if let Ok(lev) = lev {
                    use fst::{IntoStreamer, Streamer};
                    let mut s = map.search(lev).into_stream();
                    let mut n = 0;
                    while s.next().is_some() && n < 1000 {
                        n += 1;
                    }
                }
            }
        }
        _ => {
            let parts = sections(rest);
            let store = MemoryStore::new();
            for (name, bytes) in ["metadata.lance", "part_0_tokens.lance", "part_0_docs.lance", "part_0_invert.lance"]
                .iter()
                .zip(parts)
            {
                store.insert(*name, bytes.to_vec());
            }
            let Ok(index) = block_on(FtsIndex::open(&store)) else { return };
            let Ok(analyzer) = index.analyzer() else { return };
            let col = ColumnSearch {
                column: "text".into(),
                partitions: index.partitions.iter().map(Arc::clone).collect(),
                flat: None,
                analyzer,
                stats: index.stats(),
                with_position: index.params.with_position,
                indexed_rows: None,
            };
            for q in [
                FtsQuery::text("fox dog"),
                FtsQuery::Phrase {
                    column: None,
                    terms: "brown fox".into(),
                    slop: 1,
                },
            ] {
                let _ = evaluate(&q, std::slice::from_ref(&col), &|_| true);
            }
        }
    }
});
