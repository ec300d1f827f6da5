//! Deletion files from disk, both kinds (Arrow IPC and roaring bitmap), with the count
//! the manifest claims taken from the input too.
#![no_main]

use lancelet_table::pb;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if data.len() < 2 {
        return;
    }
    let d = pb::DeletionFile {
        file_type: i32::from(data[0] & 1),
        num_deleted_rows: u64::from(data[1]),
        ..Default::default()
    };
    let _ = lancelet_table::deletion::decode_deletions(&data[2..], &d, "fuzz");
});
