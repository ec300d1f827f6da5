//! Manifest files from disk: the container, the protobuf, the feature flags, and the
//! schema they describe must be refused with errors, never a crash.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(m) = lancelet_table::manifest::decode_manifest(data, "fuzz") {
        let _ = lancelet_table::manifest::check_reader_flags(&m, "fuzz");
        let _ = lancelet_file::schema::from_lance_fields(&m.fields, &m.schema_metadata, "fuzz");
        let _ = m.fragments.iter().map(lancelet_table::manifest::live_rows).sum::<u64>();
    }
});
