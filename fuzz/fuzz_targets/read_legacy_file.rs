//! Fuzzes the legacy (file format 0.1) read path: the input's last bytes are forced to a
//! legacy footer version (`0.2`, `LANC`) so every input reaches the legacy parser (metadata,
//! embedded schema, page table, dictionaries), then a full read, a ranged read, a
//! projection and a `take` run. Any panic, abort or runaway allocation is a bug.
#![no_main]

use std::sync::Arc;

use futures::executor::block_on;
use lancelet_io::InMemory;
use lancelet_file::FileReader;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut bytes = data.to_vec();
    if bytes.len() < 16 {
        bytes.resize(16, 0);
    }
    let n = bytes.len();
    bytes[n - 8..n - 4].copy_from_slice(&[0, 0, 2, 0]);
    bytes[n - 4..].copy_from_slice(b"LANC");
    let Ok(r) = block_on(FileReader::open(Arc::new(InMemory::new("fuzz", &bytes)))) else {
        return;
    };
    let Ok(p) = r.projection(None) else { return };
    let rows = r.num_rows().min(1 << 20);
    let _ = block_on(r.read_ranges(&p, &[0..rows], None));
    if rows > 0 {
        let _ = block_on(r.read_ranges(&p, &[rows / 2..rows, 0..1], None));
        let _ = block_on(r.take(&p, &[rows - 1, 0, rows / 2]));
        if let Some(first) = r.metadata().schema.fields().first() {
            if let Ok(one) = r.projection(Some(std::slice::from_ref(first.name()))) {
                let _ = block_on(r.read_ranges(&one, &[rows / 3..rows], None));
            }
        }
    }
});
