//! Fuzzes whole 2.1+ page decoding: mini-block chunks (levels, value buffers, FSST,
//! bit packing, dictionaries), full-zip and constant layouts, then rep/def assembly.
//! Input: byte 0 picks the field path (flat or nested, several leaf types), bytes 1..3
//! the row count, then length-prefixed (u16) sections: the `PageLayout` protobuf, then
//! up to four page buffers. Any panic is a bug.
#![no_main]

use arrow_array::Array;
use arrow_buffer::Buffer;
use arrow_schema::{DataType, Field, Fields};
use lancelet_encoding::v2_1::{decode_page, parse_layout, PathNode};
use libfuzzer_sys::fuzz_target;

fn sections(mut data: &[u8]) -> Vec<&[u8]> {
    let mut out = Vec::new();
    while out.len() < 5 {
        let [a, b, rest @ ..] = data else { break };
        let len = usize::from(u16::from_le_bytes([*a, *b])).min(rest.len());
        let (s, r) = rest.split_at(len);
        out.push(s);
        data = r;
    }
    out
}

fuzz_target!(|data: &[u8]| {
    let [sel, r0, r1, rest @ ..] = data else { return };
    let leaf = |dt| PathNode::Leaf { data_type: dt };
    let dts = [
        DataType::Int64,
        DataType::Int32,
        DataType::Utf8,
        DataType::LargeBinary,
        DataType::Boolean,
        DataType::Float64,
        // Packed structs: row-major fixed fields, or zipped rows with a string field.
        DataType::Struct(Fields::from(vec![
            Field::new("a", DataType::Int32, true),
            Field::new("b", DataType::Float64, true),
        ])),
        DataType::Struct(Fields::from(vec![
            Field::new("a", DataType::Int32, true),
            Field::new("s", DataType::Utf8, true),
        ])),
    ];
    let dt = dts[usize::from(*sel & 7) % dts.len()].clone();
    let path = match *sel >> 3 & 3 {
        0 => vec![leaf(dt)],
        1 => vec![PathNode::List { large: false }, leaf(dt)],
        2 => vec![PathNode::Struct { child: "s".into() }, leaf(dt)],
        _ => vec![
            PathNode::List { large: true },
            PathNode::Struct { child: "s".into() },
            PathNode::List { large: false },
            leaf(dt),
        ],
    };
    let rows = u64::from(u16::from_le_bytes([*r0, *r1]));
    let parts = sections(rest);
    let Some((layout, bufs)) = parts.split_first() else {
        return;
    };
    let Ok(layout) = parse_layout(layout) else { return };
    let buffers: Vec<Buffer> = bufs.iter().map(|b| Buffer::from_slice_ref(b)).collect();
    if let Ok(array) = decode_page(&layout, &buffers, rows, &path) {
        // Whatever decodes must be a valid Arrow array.
        let _ = array.to_data().validate_full();
    }
});
