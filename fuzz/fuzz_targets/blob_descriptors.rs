//! Blob descriptors from hostile files: decoding 2.1 blob pages (an arbitrary inner page
//! wrapped in a `BlobLayout`), converting v1 descriptors to v2, and resolving arbitrary
//! descriptors to a file and a byte range. Byte 0 picks the mode. Errors are fine; a
//! panic, or a resolved range that leaves its file, is a bug.
//!
//! * mode 0: bytes 1..3 the row count, then u16-length-prefixed sections: the inner
//!   `PageLayout` protobuf and up to four page buffers.
//! * mode 1: records of `kind u8, position u64, size u64, blob_id u32, file size u64,
//!   uri length u8, uri bytes`.
#![no_main]

use arrow_array::Array;
use arrow_buffer::Buffer;
use lancelet_encoding::v2_1::blob::decode_wrapped;
use lancelet_encoding::v2_1::{parse_layout, PathNode};
use lancelet_file::blob::{
    bounded, target, v1_descriptor_type, v1_to_v2_descriptors, v2_descriptor_fields, Descriptor,
};
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

fn take<const N: usize>(data: &mut &[u8]) -> Option<[u8; N]> {
    let (head, rest) = data.split_first_chunk::<N>()?;
    *data = rest;
    Some(*head)
}

fn pages(sel: u8, r0: u8, r1: u8, rest: &[u8]) {
    let rows = u64::from(u16::from_le_bytes([r0, r1]));
    let parts = sections(rest);
    let Some((layout, bufs)) = parts.split_first() else {
        return;
    };
    let Ok(inner) = parse_layout(layout) else { return };
    let nullable = sel & 2 != 0;
    let mut path = vec![PathNode::Leaf {
        data_type: v1_descriptor_type(),
    }];
    if sel & 4 != 0 {
        path.insert(0, PathNode::Struct { child: "s".into() });
    }
    let buffers: Vec<Buffer> = bufs.iter().map(|b| Buffer::from_slice_ref(b)).collect();
    if let Ok(array) = decode_wrapped(inner, nullable, &buffers, rows, &path) {
        let _ = array.to_data().validate_full();
        let v2 = arrow_schema::DataType::Struct(v2_descriptor_fields());
        if let Some(converted) = v1_to_v2_descriptors(&array, &v2) {
            let _ = converted.to_data().validate_full();
        }
    }
}

fn descriptors(mut data: &[u8]) {
    let bases = [(1u32, "/base".to_string()), (7, "s3://bucket/prefix/".to_string())];
    while let (Some([kind]), Some(p), Some(z), Some(id), Some(fs), Some([ul])) = (
        take::<1>(&mut data),
        take::<8>(&mut data),
        take::<8>(&mut data),
        take::<4>(&mut data),
        take::<8>(&mut data),
        take::<1>(&mut data),
    ) {
        let n = usize::from(ul).min(data.len());
        let (uri, rest) = data.split_at(n);
        data = rest;
        let d = Descriptor {
            kind: kind % 5,
            position: u64::from_le_bytes(p),
            size: u64::from_le_bytes(z),
            blob_id: u32::from_le_bytes(id) % 9,
            uri: String::from_utf8_lossy(uri).into_owned(),
        };
        let Ok(t) = target(&d, "f.lance", &bases, "fuzz") else {
            continue;
        };
        if t.external && d.blob_id != 0 {
            assert!(!t.path.contains("/../"), "{t:?} escapes its base");
        }
        let file_size = u64::from_le_bytes(fs);
        if let Ok((pos, size)) = bounded(&d, &t.path, file_size) {
            assert!(pos.checked_add(size).is_some_and(|end| end <= file_size));
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let [sel, r0, r1, rest @ ..] = data else { return };
    if sel & 1 == 0 {
        pages(*sel, *r0, *r1, rest);
    } else {
        descriptors(&data[1..]);
    }
});
