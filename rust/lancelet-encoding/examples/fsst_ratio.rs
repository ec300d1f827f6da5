//! Prints how well FSST compresses a text file of one value per line, in pages of
//! `PAGE` values each trained on its own (as the 2.1+ writer does), so symbol table
//! training can be compared on real data:
//!
//!     cargo run --release -p lancelet-encoding --example fsst_ratio -- values.txt [values-per-page]

#![expect(clippy::print_stderr, reason = "a command-line report")]

use lancelet_encoding::v2_1::fsst::{Compressor, SymbolTable};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let path = args.next().ok_or("usage: fsst_ratio FILE [VALUES_PER_PAGE]")?;
    let page: usize = args.next().map(|a| a.parse()).transpose()?.unwrap_or(50_000);
    let text = std::fs::read(&path)?;
    let values: Vec<&[u8]> = text.split(|b| *b == b'\n').collect();
    let (mut raw, mut packed, mut symbols) = (0usize, 0usize, 0usize);
    let start = std::time::Instant::now();
    for chunk in values.chunks(page.max(1)) {
        let c = Compressor::train(chunk.iter().copied());
        let (offsets, data) = c.compress_values(chunk.iter().copied());
        let table = SymbolTable::parse(&c.symbol_table())?;
        let (_, back) = table.decompress_values(&offsets, &data)?;
        if back.len() != chunk.iter().map(|v| v.len()).sum::<usize>() {
            return Err("round trip lost bytes".into());
        }
        raw += back.len();
        packed += data.len();
        symbols += c.num_symbols();
    }
    let pages = values.len().div_ceil(page.max(1));
    eprintln!(
        "{} values, {raw} bytes -> {packed} bytes ({:.3}x), {:.0} symbols per page, {:.2?}",
        values.len(),
        raw as f64 / packed as f64,
        symbols as f64 / pages as f64,
        start.elapsed()
    );
    Ok(())
}
