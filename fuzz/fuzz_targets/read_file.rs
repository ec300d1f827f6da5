//! Fuzzes the whole read path: open (footer, tables, metadata, schema) and then a full
//! read, a ranged read with the page cache and a `take`, over arbitrary bytes.
//! Any panic, abort, out-of-bounds access or runaway allocation is a bug.
#![no_main]

use std::sync::Arc;

use futures::executor::block_on;
use lancelet_io::InMemory;
use lancelet_file::{FileReader, PageCache};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(r) = block_on(FileReader::open(Arc::new(InMemory::new("fuzz", data)))) else {
        return;
    };
    let Ok(p) = r.projection(None) else { return };
    let n = r.num_rows().min(1 << 20);
    let _ = block_on(r.read_ranges(&p, &[0..n], None));
    if n > 0 {
        let _ = block_on(r.read_ranges(&p, &[n / 2..n], Some(&PageCache::default())));
        let _ = block_on(r.take(&p, &[n - 1, 0, n / 2]));
    }
});
