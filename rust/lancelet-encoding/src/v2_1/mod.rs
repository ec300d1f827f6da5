//! Reading and writing Lance file format 2.1 and 2.2 pages ("structural" encodings).
//!
//! A 2.1+ page is described by a `PageLayout` (mini-block, full-zip, constant or blob)
//! whose compressive encodings form a tree. Only leaf fields have columns: lists and
//! structs are folded into each leaf's repetition and definition levels, and a leaf
//! column is known by its [`path`] from the top-level field.
//!
//! The layers come in pairs, named `_decode` (bytes to Arrow) and `_encode` (Arrow to
//! bytes); nothing here does I/O, so the names say which way the bytes go rather than
//! "read"/"write", which belong to `lancelet-file`:
//!
//! | layer | decode | encode |
//! |---|---|---|
//! | page layouts (mini-block, full-zip, constant) | [`page_decode`] ([`decode_page`]) | [`page_encode`] ([`encode_page`]) |
//! | nesting as repetition / definition levels | [`repdef_decode`] (`assemble`) | [`repdef_encode`] ([`shred()`]) |
//! | compressive encodings of the values | [`values_decode`] into [`values::Values`] | [`values_encode`] (`compress_mini_block`) |
//! | packed structs | [`packed_decode`] | [`packed_encode`] |
//!
//! Codecs used by both directions hold both directions in one module: [`bitpack`]
//! (FastLanes bit packing), [`fsst`] (string compression), [`compression`] (zstd / LZ4
//! buffers). [`blob`] wraps blob (v1) descriptor pages, [`fast`] decodes the simplest
//! full-zip pages without copying, [`hashing`] is the encoders' hash map.

pub mod bitpack;
pub mod blob;
pub mod compression;
pub mod fast;
pub mod fsst;
pub mod hashing;
pub mod packed_decode;
pub mod packed_encode;
pub mod page_decode;
pub mod page_encode;
pub mod path;
pub mod repdef_decode;
pub mod repdef_encode;
pub mod values;
pub mod values_decode;
pub mod values_encode;

use lancelet_proto::pb21;
use prost::Message;

use crate::{corrupt, Result};

pub use page_decode::{
    decode_mini_block_rows_from_chunk, decode_mini_block_rows_from_chunk_selected, decode_mini_block_selected,
    decode_page,
};
pub use page_encode::{encode_page, EncodedPage21, PageOptions, Structural};
pub use path::{is_packed, is_packed_metadata, leaf_paths, path_type, PathNode};
pub use repdef_encode::{has_nested, shred, RowLevels, Shredded};

/// Type URL of a 2.1+ page layout inside `google.protobuf.Any`.
pub const PAGE_LAYOUT_TYPE_URL: &str = "/lance.encodings21.PageLayout";

/// Parses a page layout message.
pub fn parse_layout(bytes: &[u8]) -> Result<pb21::PageLayout> {
    pb21::PageLayout::decode(bytes).map_err(|e| corrupt!("page layout does not parse: {e}"))
}
