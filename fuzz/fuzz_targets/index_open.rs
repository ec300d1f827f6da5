//! Opens every scalar index type over arbitrary file bytes (through the in-memory index
//! store) and runs each kind of query on it. Byte 0 picks the index type; for BTREE, bytes
//! 1..3 (u16) split the rest into page_data and page_lookup. Errors are fine; any panic,
//! abort or runaway allocation is a bug.
#![no_main]

use std::ops::Bound;
use std::sync::Arc;

use arrow_array::{ArrayRef, Int64Array, StringArray};
use futures::executor::block_on;
use lancelet_index::scalar::{self, MemoryStore, ScalarIndexType, ScalarQuery};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if data.len() < 3 {
        return;
    }
    let kind = ScalarIndexType::ALL[usize::from(data[0]) % ScalarIndexType::ALL.len()];
    let store = MemoryStore::new();
    let rest = &data[3..];
    let files = kind.files();
    if files.len() == 2 {
        let split = usize::from(u16::from_le_bytes([data[1], data[2]])).min(rest.len());
        store.insert(files[0], rest[..split].to_vec());
        store.insert(files[1], rest[split..].to_vec());
    } else {
        store.insert(files[0], rest.to_vec());
    }
    let Ok(index) = block_on(scalar::open(kind, &store)) else { return };
    let int: ArrayRef = Arc::new(Int64Array::from(vec![3]));
    let text: ArrayRef = Arc::new(StringArray::from(vec!["abc"]));
    let mut queries = vec![ScalarQuery::IsNull, ScalarQuery::Contains("abcd efg".into())];
    for lit in [int, text] {
        queries.push(ScalarQuery::Equals(lit.clone()));
        queries.push(ScalarQuery::IsIn(lit.clone()));
        queries.push(ScalarQuery::LabelsAny(lit.clone()));
        queries.push(ScalarQuery::LabelsAll(lit.clone()));
        queries.push(ScalarQuery::Range { lower: Bound::Included(lit.clone()), upper: Bound::Excluded(lit) });
    }
    for q in &queries {
        if index.can_answer(q) {
            let _ = block_on(index.search(q));
        }
    }
    let _ = index.statistics();
});
