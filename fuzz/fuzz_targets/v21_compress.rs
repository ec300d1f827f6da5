//! Fuzzes general-purpose buffer decompression (LZ4 with a u32 size prefix, zstd with a
//! u64 size prefix). Byte 0 picks the scheme. Any panic is a bug.
#![no_main]

use lancelet_encoding::v2_1::compression::decompress;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let [scheme, rest @ ..] = data else { return };
    let _ = decompress(i32::from(*scheme % 4), rest);
});
