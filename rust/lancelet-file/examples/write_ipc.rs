//! Writes the record batches of an Arrow IPC file as one Lance file, the way a dataset
//! write does (format 2.2, page statistics on), and prints the time and size taken.
//! A fixed workload for profilers: `cargo run --release --example write_ipc -- in.arrow [out.lance] [version]`.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    missing_docs,
    reason = "an example program that prints what it wrote; a failed unwrap is a failed run"
)]

use std::fs::File;
use std::io::BufWriter;

use lancelet_file::{FileVersion, FileWriter, WriterOptions};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let input = args.get(1).expect("usage: write_ipc IN.arrow [OUT.lance] [VERSION]");
    let out = args.get(2).cloned().unwrap_or_else(|| "/dev/null".into());
    let version: FileVersion = args
        .get(3)
        .map(|v| FileVersion::parse(v).expect("version"))
        .unwrap_or(FileVersion::DEFAULT);
    let reader = arrow_ipc::reader::FileReader::try_new(File::open(input).unwrap(), None).unwrap();
    let schema = reader.schema();
    let batches: Vec<_> = reader.map(|b| b.unwrap()).collect();
    let start = std::time::Instant::now();
    let opts = WriterOptions {
        version,
        page_stats: true,
        ..Default::default()
    };
    let sink = BufWriter::with_capacity(1 << 20, File::create(&out).unwrap());
    let mut w = FileWriter::try_new(sink, &out, schema, opts).unwrap();
    for b in &batches {
        w.write_batch(b).unwrap();
    }
    let bytes = w.bytes_written();
    let (_, rows) = w.finish().unwrap();
    println!("{rows} rows, {bytes}+ bytes, {:?}", start.elapsed());
}
