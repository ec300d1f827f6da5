//! Fuzzes 2.1+ bit unpacking (inline and out-of-line) for every value width.
//! Input: byte 0 picks the width, bytes 1..3 the value count, byte 3 the out-of-line
//! bit width; the rest is the packed data. Any panic is a bug.
#![no_main]

use lancelet_encoding::v2_1::bitpack::{decode_inline, decode_out_of_line};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let [sel, n0, n1, b, rest @ ..] = data else { return };
    let w = [8u64, 16, 32, 64][usize::from(*sel) % 4];
    let n = usize::from(u16::from_le_bytes([*n0, *n1])) % 5000;
    let _ = decode_inline(rest, w, n);
    let _ = decode_out_of_line(rest, w, u64::from(*b) % 70, n);
});
