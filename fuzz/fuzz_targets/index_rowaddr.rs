//! The index crate's row-address decoders (portable Roaring32, the row-address tree map,
//! the RoaringTreemap form) over arbitrary bytes; whatever decodes must re-encode and
//! decode to the same set. Any panic or runaway allocation is a bug.
#![no_main]

use lancelet_index::rowaddr::{decode_roaring32, decode_treemap, encode_roaring32, encode_treemap, RowAddrSet};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(bm) = decode_roaring32(data) {
        assert_eq!(decode_roaring32(&encode_roaring32(&bm)).ok(), Some(bm));
    }
    if let Ok(tm) = decode_treemap(data) {
        assert_eq!(decode_treemap(&encode_treemap(&tm)).ok(), Some(tm));
    }
    if let Ok(set) = RowAddrSet::decode(data, "fuzz") {
        assert_eq!(RowAddrSet::decode(&set.encode(), "fuzz").ok(), Some(set.clone()));
        let _ = set.len_with(|_| 1000);
        let _ = set.iter_with(|_| 1000).take(10_000).count();
    }
});
