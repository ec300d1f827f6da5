//! Prints which mini-block encoding the 2.1 and 2.2 writers pick for a few typical
//! columns, and how many bytes it takes against Arrow's own buffers:
//!
//!     cargo run --release -p lancelet-encoding --example sample_sizes

#![expect(clippy::print_stdout, reason = "a command-line report")]

use std::sync::Arc;

use arrow_array::{Array, ArrayRef, Int32Array, Int64Array, StringArray};
use lancelet_encoding::v2_1::values_encode::{compress_mini_block, variant_name, EncodeOptions, MiniBlockValues};

/// The name of the encoding picked (`dict` for a dictionary).
fn picked(m: &MiniBlockValues) -> &'static str {
    if m.dictionary.is_some() {
        return "dict";
    }
    variant_name(&m.encoding)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // xorshift64: the same "random" columns on every run.
    let mut x = 7u64;
    let mut rnd = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let cases: Vec<(&str, ArrayRef)> = vec![
        ("i32 sorted 10k", Arc::new(Int32Array::from_iter_values(0..10_000))),
        (
            "i64 random 10k",
            Arc::new(Int64Array::from_iter_values((0..10_000).map(|_| rnd() as i64))),
        ),
        (
            "i32 0..999 10k",
            Arc::new(Int32Array::from_iter_values((0..10_000).map(|_| (rnd() % 1000) as i32))),
        ),
        (
            "str 3 distinct 1000",
            Arc::new(StringArray::from_iter_values(
                (0..1000).map(|i| ["red", "green", "blue"][i % 3]),
            )),
        ),
        (
            "str distinct 3000",
            Arc::new(StringArray::from_iter_values(
                (0..3000).map(|i| format!("row {i} alpha beta gamma")),
            )),
        ),
    ];
    for (name, a) in cases {
        for v2_2 in [false, true] {
            let opts = EncodeOptions {
                v2_2,
                ..Default::default()
            };
            let m = compress_mini_block(a.as_ref(), &opts)?;
            let raw = a.to_data().buffers().iter().map(|b| b.len()).sum::<usize>();
            println!(
                "{name} v2_2={v2_2}: {} {} bytes (arrow {raw})",
                picked(&m),
                m.encoded_size()
            );
        }
    }
    Ok(())
}
