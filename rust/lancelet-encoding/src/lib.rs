//! Lance codecs: pure functions between Arrow arrays and the buffers of one page.
//!
//! Nothing in this crate does I/O. Encoders take Arrow arrays and return an
//! [`EncodedPage`] (buffers plus the protobuf description of how they were
//! written); decoders take that description and the buffers and rebuild Arrow
//! arrays. Every length, offset and count read from a description is checked
//! against the buffers before use, so a corrupt page gives [`Error::Corrupt`],
//! never a panic or an out-of-bounds read.
//!
//! Version modules hold the encodings of one file-format generation:
//! [`v2_0`] covers the "legacy" array encodings of Lance file format 2.0, [`v2_1`] the
//! structural encodings of formats 2.1 and 2.2 (both read and written).

pub mod bits;
pub mod error;
pub mod v2_0;
pub mod v2_1;

use arrow_buffer::Buffer;

pub use error::{Error, Result};

/// The output of encoding one page of one column.
#[derive(Debug, Clone)]
pub struct EncodedPage<E> {
    /// The page's buffers, in the order the description's buffer indices refer to.
    pub buffers: Vec<Buffer>,
    /// How the buffers encode the values (a protobuf message).
    pub encoding: E,
    /// Number of values (rows of this column) in the page.
    pub num_rows: u64,
}

/// Buffers a page description may refer to.
#[derive(Debug, Clone, Copy)]
pub struct PageBuffers<'a> {
    /// Buffers stored in the page itself.
    pub page: &'a [Buffer],
    /// Buffers stored once per column (in the column metadata).
    pub column: &'a [Buffer],
}
