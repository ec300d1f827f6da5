//! Fuzzes rebuilding nested arrays from repetition / definition levels.
//! Input: byte 0 picks the path, bytes 1..5 the layers, byte 5 flags (rep / def stored)
//! and the value count; the rest are (rep, def) level pairs. Any panic is a bug.
#![no_main]

use std::sync::Arc;

use arrow_array::{Array, ArrayRef, Int32Array};
use arrow_schema::DataType;
use lancelet_encoding::v2_1::repdef_decode::assemble;
use lancelet_encoding::v2_1::PathNode;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let [sel, l0, l1, l2, l3, flags, nv, rest @ ..] = data else {
        return;
    };
    let leaf = PathNode::Leaf {
        data_type: DataType::Int32,
    };
    let (path, n) = match sel % 4 {
        0 => (vec![leaf], 1),
        1 => (vec![PathNode::List { large: false }, leaf], 2),
        2 => (vec![PathNode::Struct { child: "s".into() }, leaf], 2),
        _ => (
            vec![
                PathNode::List { large: true },
                PathNode::Struct { child: "s".into() },
                PathNode::List { large: false },
                leaf,
            ],
            4,
        ),
    };
    let layers: Vec<i32> = [l0, l1, l2, l3].iter().take(n).map(|l| i32::from(**l % 8)).collect();
    let rep: Vec<u16> = rest.chunks_exact(2).map(|p| u16::from(p[0] % 8)).collect();
    let def: Vec<u16> = rest.chunks_exact(2).map(|p| u16::from(p[1] % 8)).collect();
    let values: ArrayRef = Arc::new(Int32Array::from((0..i32::from(*nv)).collect::<Vec<_>>()));
    let rep = (flags & 1 == 1).then_some(rep.as_slice());
    let def = (flags & 2 == 2).then_some(def.as_slice());
    if let Ok(a) = assemble(&path, &layers, rep, def, values) {
        let _ = a.to_data().validate_full();
    }
});
