//! The read interface the file reader depends on. It lives in [`lancelet_io`] (with the
//! local, memory and object store implementations); this module re-exports it so that
//! `lancelet_file::io::...` paths keep working, and gives [`read_ranges`] this crate's
//! error type.

use std::ops::Range;

use arrow_buffer::Buffer;

pub use lancelet_io::{InMemory, IoStats, LocalFile, ReadAt};

use crate::error::Result;

/// Reads all `ranges` (in any order, possibly overlapping), coalescing nearby ones
/// (see [`lancelet_io::read_ranges`]). The result has one buffer per input range, in
/// input order.
pub async fn read_ranges(io: &dyn ReadAt, ranges: &[Range<u64>], stats: &IoStats) -> Result<Vec<Buffer>> {
    Ok(lancelet_io::read_ranges(io, ranges, stats).await?)
}
