//! Fuzzes FSST symbol-table parsing and decompression.
//! Input: bytes 0..2 = table length (little endian), then the table, then compressed
//! values split by the following bytes' low bits into offsets. Any panic is a bug.
#![no_main]

use lancelet_encoding::v2_1::fsst::SymbolTable;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let [l0, l1, rest @ ..] = data else { return };
    let tlen = usize::from(u16::from_le_bytes([*l0, *l1])).min(rest.len());
    let (table, body) = rest.split_at(tlen);
    let Ok(t) = SymbolTable::parse(table) else { return };
    let mut out = Vec::new();
    let _ = t.decompress_into(body, &mut out);
    // Offsets from the body's own bytes (not necessarily increasing or in range).
    let offsets: Vec<u64> = body.iter().take(16).map(|b| u64::from(*b)).collect();
    let _ = t.decompress_values(&offsets, body);
});
