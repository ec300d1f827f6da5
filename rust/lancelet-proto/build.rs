//! Compiles `protos/*.proto` (our own definitions of the Lance wire format) with prost,
//! using a vendored `protoc` so a fresh machine needs no system protobuf compiler.

use std::path::PathBuf;

fn main() -> std::io::Result<()> {
    // The manifest dir as cargo gives it when the script runs (not as it was when the script
    // was compiled: a build script compiled in one checkout can be run for another).
    let manifest_dir =
        std::env::var_os("CARGO_MANIFEST_DIR").ok_or_else(|| std::io::Error::other("CARGO_MANIFEST_DIR is not set"))?;
    let root = PathBuf::from(manifest_dir).join("../../protos");
    let files = [
        "file.proto",
        "file2.proto",
        "encodings_v2_0.proto",
        "encodings_v2_1.proto",
        "table.proto",
        "transaction.proto",
        "rowids.proto",
    ];
    let paths: Vec<PathBuf> = files.iter().map(|f| root.join(f)).collect();
    for p in &paths {
        println!("cargo:rerun-if-changed={}", p.display());
    }
    if std::env::var_os("PROTOC").is_none() {
        let protoc = protoc_bin_vendored::protoc_bin_path().map_err(|e| std::io::Error::other(e.to_string()))?;
        // SAFETY-free: build scripts are single threaded; prost-build reads PROTOC from the env.
        unsafe { std::env::set_var("PROTOC", protoc) };
    }
    let include = protoc_bin_vendored::include_path().map_err(|e| std::io::Error::other(e.to_string()))?;
    let mut config = prost_build::Config::new();
    config.bytes(["."]);
    // A file's schema metadata is encoded in key order, so that the same input gives
    // byte-identical files (prost encodes a HashMap in its random order).
    config.btree_map([".lance.file.Schema.metadata"]);
    config.compile_protos(&paths, &[root, include])
}
