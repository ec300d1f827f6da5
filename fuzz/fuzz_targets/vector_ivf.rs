//! Opens an IVF vector index over arbitrary bytes (through the in-memory index store) and
//! searches it. Bytes 0..2 (u16) split the rest into `index.idx` and `auxiliary.idx`; byte 2
//! picks nprobes. Errors are fine; any panic, abort or runaway allocation is a bug.
#![no_main]

use futures::executor::block_on;
use lancelet_index::scalar::MemoryStore;
use lancelet_vector::ivf::IvfIndex;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if data.len() < 3 {
        return;
    }
    let rest = &data[3..];
    let split = usize::from(u16::from_le_bytes([data[0], data[1]])).min(rest.len());
    let store = MemoryStore::new();
    store.insert("index.idx", rest[..split].to_vec());
    store.insert("auxiliary.idx", rest[split..].to_vec());
    let Ok(index) = block_on(IvfIndex::open(&store)) else { return };
    let _ = index.statistics();
    let dim = index.dim();
    if dim > 1 << 16 {
        return;
    }
    let query: Vec<f32> = (0..dim).map(|i| (i as f32 * 0.37).sin()).collect();
    let nprobes = usize::from(data[2] % 8) + 1;
    let _ = index.find_partitions(&query, nprobes);
    let even = |r: u64| r % 2 == 0;
    let _ = block_on(index.search(&query, 10, nprobes, None, false));
    let _ = block_on(index.search(&query, 3, nprobes, Some(&even), false));
    let _ = block_on(index.search(&query[..dim.saturating_sub(1)], 3, nprobes, None, false));
});
