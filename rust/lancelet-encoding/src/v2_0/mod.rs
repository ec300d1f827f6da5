//! Array encodings of Lance file format 2.0 (`lance.encodings.ArrayEncoding`).
//!
//! In 2.0 every column page is described by one `ArrayEncoding` tree. The shapes
//! pylance 14 writes, and the ones we write, are:
//!
//! | Arrow type | page encoding |
//! | --- | --- |
//! | fixed width (ints, floats, bool, temporal, decimal, fixed-size binary) | `Nullable(Flat)` |
//! | fixed-size list of fixed width | `Nullable(FixedSizeList(Nullable(Flat)))` |
//! | string / binary (any offset width) | `Binary(indices = Nullable(Flat u64), bytes = Flat u8)` |
//! | low-cardinality `string` | `Dictionary(indices = Nullable(Flat u8), items = Binary)`, index 0 meaning null |
//! | Arrow dictionary | `Dictionary(indices = Nullable(Flat key), items = ...)`, nulls as a null item |
//! | list offsets column | `List(offsets = Nullable(Flat u64))` |
//! | struct header column | `SimpleStruct` |
//!
//! `Nullable` is always one of `no_nulls`, `some_nulls` (validity bitmap + values) or
//! `all_nulls` (no buffers).

pub mod decode;
pub mod encode;
pub mod layout;

pub use lancelet_proto::pb20 as pb;

/// The protobuf `Any` type URL of a 2.0 page encoding.
pub const ARRAY_ENCODING_TYPE_URL: &str = "/lance.encodings.ArrayEncoding";
/// The protobuf `Any` type URL of a 2.0 column encoding.
pub const COLUMN_ENCODING_TYPE_URL: &str = "/lance.encodings.ColumnEncoding";

/// Builds a page-buffer reference.
pub fn page_buffer(index: u32) -> pb::Buffer {
    pb::Buffer {
        buffer_index: index,
        buffer_type: pb::buffer::BufferType::Page as i32,
    }
}

/// Wraps one variant into an `ArrayEncoding`.
pub fn enc(e: pb::array_encoding::ArrayEncoding) -> pb::ArrayEncoding {
    pb::ArrayEncoding {
        array_encoding: Some(e),
    }
}

/// `Flat` over page buffer `index`.
pub fn flat(bits_per_value: u64, index: u32) -> pb::ArrayEncoding {
    enc(pb::array_encoding::ArrayEncoding::Flat(pb::Flat {
        bits_per_value,
        buffer: Some(page_buffer(index)),
        compression: None,
    }))
}
