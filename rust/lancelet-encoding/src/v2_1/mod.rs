//! Reading and writing Lance file format 2.1 and 2.2 pages ("structural" encodings).
//!
//! A 2.1+ page is described by a `PageLayout` (mini-block, full-zip, constant or blob)
//! whose compressive encodings form a tree ([`values`]). Only leaf fields have columns:
//! lists and structs are folded into each leaf's repetition and definition levels
//! ([`structure`]). [`page::decode_page`] decodes one page of one leaf column into the
//! array of its rows along the leaf's path.

pub mod bitpack;
pub mod blob;
pub mod compress;
pub mod encode;
pub mod fast;
pub mod fsst;
pub mod hashing;
pub mod packed;
pub mod page;
pub mod shred;
pub mod structure;
pub mod values;
pub mod write;

use lancelet_proto::pb21;
use prost::Message;

use crate::{corrupt, Result};

pub use page::{decode_mini_block_rows_from_chunk, decode_page};
pub use structure::{path_type, PathNode};

/// Type URL of a 2.1+ page layout inside `google.protobuf.Any`.
pub const PAGE_LAYOUT_TYPE_URL: &str = "/lance.encodings21.PageLayout";

/// Parses a page layout message.
pub fn parse_layout(bytes: &[u8]) -> Result<pb21::PageLayout> {
    pb21::PageLayout::decode(bytes).map_err(|e| corrupt!("page layout does not parse: {e}"))
}
