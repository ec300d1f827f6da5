//! Row id and row version sequences from a manifest, with the fragment's row count taken
//! from the input too; the index is built from whatever decodes. The count of a sequence
//! from outside (`RowIdSequence.from_inline_metadata`) is read without a row count.
#![no_main]

use lancelet_table::rowids::{decode_row_id_segments, decode_row_ids, decode_versions, row_id_count, RowIdIndexBuilder};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if data.len() < 2 {
        return;
    }
    let rows = u64::from(u16::from_le_bytes([data[0], data[1]]));
    let body = &data[2..];
    let _ = decode_versions(body, rows, "fuzz");
    if let Ok(n) = row_id_count(body, "fuzz") {
        if n <= 1 << 16 {
            let _ = decode_row_ids(body, n, "fuzz");
        }
    }
    if let Ok(segs) = decode_row_id_segments(body, rows, "fuzz") {
        let mut b = RowIdIndexBuilder::new();
        b.add_fragment(0, &segs, &[0, 3]);
        b.add_fragment(1, &segs, &[]);
        if let Ok(index) = b.finish() {
            let _ = index.get(rows);
        }
    }
});
