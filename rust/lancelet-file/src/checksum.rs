//! Checksums: every byte of a Lance file lancelet writes is covered by a CRC32C
//! (Castagnoli, hardware-accelerated), so that damaged bytes are reported instead of
//! decoded.
//!
//! The Lance format has no checksums. lancelet keeps them where pylance does not look: an
//! extra global buffer, the last one, named by a field of the file descriptor that only
//! lancelet knows (`FileDescriptor.lancelet_checksums`, field 1000 of our `file.proto`;
//! protobuf readers skip unknown fields), so pylance reads the files unchanged: same
//! schema, same metadata, same rows.
//!
//! What is covered:
//! - the *data section*, every byte before the checksum buffer (pages, blob payloads,
//!   padding, other global buffers), in blocks of `block_bytes` (4 KiB): a read is widened
//!   to whole blocks and every block it touches is checked, so partial reads (a `take` of
//!   one row) are checked as well as whole pages;
//! - the file descriptor (global buffer 0), each column's metadata, the two offset tables
//!   and the footer, each as a whole: they are checked when the file is opened, before any
//!   of them is trusted.
//!
//! The block checksums (0.1% of the data) are read lazily, in segments of
//! [`SEGMENT_BLOCKS`] (4 KiB of checksums covering 4 MiB of data) with a checksum of their
//! own, so opening a large file reads only the header; a segment is fetched together with
//! the data it checks.
//!
//! Buffer layout (version 1; integers little endian):
//!
//! ```text
//!  0  magic "LLCK"
//!  4  u8 version (1), u8 algorithm (1: CRC32C), u16 reserved (0)
//!  8  u32 block_bytes, u32 segment_blocks
//! 16  u64 covered: the bytes [0, covered) are the data section (the buffer starts there)
//! 24  u32 column count C
//! 28  u32 CRC of the footer (40 bytes), of the global buffer table, of the column
//!     metadata table, of the file descriptor
//! 44  C × u32 CRC of each column's metadata
//!     S × u32 CRC of each segment of block checksums, S = ceil(blocks / segment_blocks)
//!     u32 CRC of the header (every byte above)
//!     blocks × u32 CRC of each block, blocks = ceil(covered / block_bytes)
//! ```
//!
//! The reader finds the buffer by its magic before it trusts anything else in the tail,
//! then checks that the descriptor names it. A file whose descriptor names no checksum
//! buffer (pylance's, or lancelet's before checksums) is read as before; one that names a
//! buffer which cannot be found or does not check is corrupt.

use std::ops::Range;
use std::sync::{Arc, OnceLock};

use arrow_buffer::Buffer;
use lancelet_io::{read_ranges, IoStats, ReadAt};

use crate::error::{Error, Result};

/// Bytes of the data section per checksum block: an operating-system page, which costs as
/// much to read as any part of it, so checking a partial read costs no extra I/O request
/// and at most two pages of bytes.
pub const BLOCK_BYTES: u32 = 4 * 1024;
/// Block checksums per lazily read segment.
pub const SEGMENT_BLOCKS: u32 = 1024;

const MAGIC: &[u8; 4] = b"LLCK";
const VERSION: u8 = 1;
const CRC32C: u8 = 1;
/// Bytes of the header before the per-column checksums.
pub(crate) const FIXED_HEADER: usize = 44;

/// The CRC32C of `bytes`.
pub fn crc(bytes: &[u8]) -> u32 {
    crc32c::crc32c(bytes)
}

/// Block checksums of a file being written, fed every byte in order.
#[derive(Debug)]
pub(crate) struct BlockSums {
    crcs: Vec<u32>,
    current: u32,
    filled: u32,
}

impl BlockSums {
    pub(crate) fn new() -> Self {
        Self {
            crcs: Vec::new(),
            current: 0,
            filled: 0,
        }
    }

    pub(crate) fn update(&mut self, mut bytes: &[u8]) {
        while !bytes.is_empty() {
            let take = ((BLOCK_BYTES - self.filled) as usize).min(bytes.len());
            self.current = crc32c::crc32c_append(self.current, &bytes[..take]);
            self.filled += take as u32;
            bytes = &bytes[take..];
            if self.filled == BLOCK_BYTES {
                self.crcs.push(self.current);
                self.current = 0;
                self.filled = 0;
            }
        }
    }

    fn finish(mut self) -> Vec<u32> {
        if self.filled > 0 {
            self.crcs.push(self.current);
        }
        self.crcs
    }
}

/// The metadata a checksum buffer covers as a whole.
pub(crate) struct MetadataSums<'a> {
    pub footer: &'a [u8],
    pub global_table: &'a [u8],
    pub column_table: &'a [u8],
    pub descriptor: &'a [u8],
    pub columns: &'a [Vec<u8>],
}

/// Bytes of the checksum buffer of a file with `columns` columns and `covered` data bytes.
pub(crate) fn buffer_len(columns: usize, covered: u64) -> u64 {
    let blocks = covered.div_ceil(u64::from(BLOCK_BYTES));
    let segments = blocks.div_ceil(u64::from(SEGMENT_BLOCKS));
    FIXED_HEADER as u64 + 4 * (columns as u64 + segments + 1 + blocks)
}

/// Encodes the checksum buffer of a data section of `covered` bytes whose blocks are `sums`.
pub(crate) fn encode(covered: u64, sums: BlockSums, meta: &MetadataSums<'_>) -> Vec<u8> {
    let blocks = sums.finish();
    let mut out = Vec::with_capacity(buffer_len(meta.columns.len(), covered) as usize);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&[VERSION, CRC32C, 0, 0]);
    out.extend_from_slice(&BLOCK_BYTES.to_le_bytes());
    out.extend_from_slice(&SEGMENT_BLOCKS.to_le_bytes());
    out.extend_from_slice(&covered.to_le_bytes());
    out.extend_from_slice(&(meta.columns.len() as u32).to_le_bytes());
    for part in [meta.footer, meta.global_table, meta.column_table, meta.descriptor] {
        out.extend_from_slice(&crc(part).to_le_bytes());
    }
    for c in meta.columns {
        out.extend_from_slice(&crc(c).to_le_bytes());
    }
    let block_bytes: Vec<u8> = blocks.iter().flat_map(|c| c.to_le_bytes()).collect();
    for seg in block_bytes.chunks(4 * SEGMENT_BLOCKS as usize) {
        out.extend_from_slice(&crc(seg).to_le_bytes());
    }
    let header = crc(&out);
    out.extend_from_slice(&header.to_le_bytes());
    out.extend_from_slice(&block_bytes);
    out
}

/// The checksums of an open file: the header, and the block checksums read on demand.
#[derive(Debug)]
pub struct Checksums {
    path: String,
    block_bytes: u64,
    segment_blocks: u64,
    covered: u64,
    blocks: u64,
    /// Absolute position of the block checksums.
    blocks_at: u64,
    footer: u32,
    global_table: u32,
    column_table: u32,
    descriptor: u32,
    columns: Vec<u32>,
    segment_crcs: Vec<u32>,
    segments: Vec<OnceLock<Arc<[u32]>>>,
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    let mut w = [0u8; 4];
    w.copy_from_slice(&b[at..at + 4]);
    u32::from_le_bytes(w)
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(w)
}

/// Whether `prefix` (the first bytes of a global buffer) starts a checksum buffer.
pub(crate) fn is_checksum_buffer(prefix: &[u8]) -> bool {
    prefix.len() >= FIXED_HEADER && &prefix[..4] == MAGIC
}

/// Bytes of the header of the checksum buffer starting with `prefix` (at least
/// [`FIXED_HEADER`] bytes), or why it cannot be one.
pub(crate) fn header_len(prefix: &[u8]) -> std::result::Result<u64, String> {
    if !is_checksum_buffer(prefix) {
        return Err("the checksum buffer does not start with its magic".into());
    }
    if prefix[4] != VERSION || prefix[5] != CRC32C {
        return Err(format!(
            "checksum buffer version {} / algorithm {} is not known to this build",
            prefix[4], prefix[5]
        ));
    }
    let (block, seg) = (u64::from(u32_at(prefix, 8)), u64::from(u32_at(prefix, 12)));
    if block == 0 || seg == 0 {
        return Err("the checksum buffer has zero-sized blocks".into());
    }
    let blocks = u64_at(prefix, 16).div_ceil(block);
    let segments = blocks.div_ceil(seg);
    let columns = u64::from(u32_at(prefix, 24));
    Ok(FIXED_HEADER as u64 + 4 * (columns + segments + 1))
}

impl Checksums {
    /// Parses and checks the header of the checksum buffer at `range` of the file.
    pub(crate) fn parse(path: &str, header: &[u8], range: &Range<u64>) -> Result<Self> {
        let corrupt = |m: String| Error::corrupt(path, m);
        let len = header_len(header).map_err(corrupt)? as usize;
        if header.len() < len {
            return Err(corrupt("the checksum buffer's header is truncated".into()));
        }
        let stored = u32_at(header, len - 4);
        if crc(&header[..len - 4]) != stored {
            return Err(corrupt(
                "the checksum buffer's header does not match its checksum".into(),
            ));
        }
        let block_bytes = u64::from(u32_at(header, 8));
        let segment_blocks = u64::from(u32_at(header, 12));
        let covered = u64_at(header, 16);
        let ncols = u32_at(header, 24) as usize;
        let blocks = covered.div_ceil(block_bytes);
        let nsegs = blocks.div_ceil(segment_blocks) as usize;
        if covered != range.start || range.start + len as u64 + 4 * blocks != range.end {
            return Err(corrupt(format!(
                "the checksum buffer at {}..{} does not fit the {covered} bytes it covers",
                range.start, range.end
            )));
        }
        let words = |from: usize, n: usize| (0..n).map(|i| u32_at(header, from + 4 * i)).collect::<Vec<_>>();
        Ok(Self {
            path: path.to_string(),
            block_bytes,
            segment_blocks,
            covered,
            blocks,
            blocks_at: range.start + len as u64,
            footer: u32_at(header, 28),
            global_table: u32_at(header, 32),
            column_table: u32_at(header, 36),
            descriptor: u32_at(header, 40),
            columns: words(FIXED_HEADER, ncols),
            segment_crcs: words(FIXED_HEADER + 4 * ncols, nsegs),
            segments: (0..nsegs).map(|_| OnceLock::new()).collect(),
        })
    }

    /// Bytes of the data section (every byte before the checksum buffer).
    pub fn covered(&self) -> u64 {
        self.covered
    }

    /// Columns the checksums were written for.
    pub fn num_columns(&self) -> usize {
        self.columns.len()
    }

    fn check(&self, what: &str, expected: u32, bytes: &[u8]) -> Result<()> {
        if crc(bytes) == expected {
            Ok(())
        } else {
            Err(Error::corrupt(
                &self.path,
                format!("checksum mismatch in {what}: the bytes were damaged after they were written"),
            ))
        }
    }

    /// Checks the footer, the two offset tables and the file descriptor.
    pub(crate) fn check_tail(&self, footer: &[u8], global_table: &[u8], column_table: &[u8]) -> Result<()> {
        self.check("the footer", self.footer, footer)?;
        self.check("the global buffer table", self.global_table, global_table)?;
        self.check("the column metadata table", self.column_table, column_table)
    }

    /// Checks the file descriptor (global buffer 0).
    pub(crate) fn check_descriptor(&self, bytes: &[u8]) -> Result<()> {
        self.check("the file descriptor (schema)", self.descriptor, bytes)
    }

    /// Checks the metadata of column `i`.
    pub(crate) fn check_column(&self, i: usize, bytes: &[u8]) -> Result<()> {
        let expected = self.columns.get(i).copied().ok_or_else(|| {
            Error::corrupt(
                &self.path,
                format!("the checksums list {} columns, not column {i}", self.columns.len()),
            )
        })?;
        self.check(&format!("the metadata of column {i}"), expected, bytes)
    }

    /// Fills the segments whose block checksums lie in `bytes` (read at `at`), so that
    /// a file opened with one read of its tail needs no more for them.
    pub(crate) fn prefill(&self, at: u64, bytes: &[u8]) {
        for k in 0..self.segments.len() {
            let r = self.segment_range(k);
            if r.start >= at && r.end <= at + bytes.len() as u64 {
                let seg = &bytes[(r.start - at) as usize..(r.end - at) as usize];
                if crc(seg) == self.segment_crcs[k] {
                    let _ = self.segments[k].set(parse_words(seg));
                }
            }
        }
    }

    fn segment_range(&self, k: usize) -> Range<u64> {
        let first = k as u64 * self.segment_blocks;
        let n = self.segment_blocks.min(self.blocks - first);
        self.blocks_at + 4 * first..self.blocks_at + 4 * (first + n)
    }

    /// `r` widened to whole blocks where it lies in the data section.
    pub fn widen(&self, r: &Range<u64>) -> Range<u64> {
        if r.start >= self.covered || r.start >= r.end {
            return r.clone();
        }
        let start = r.start / self.block_bytes * self.block_bytes;
        let end = if r.end > self.covered {
            r.end
        } else {
            r.end
                .div_ceil(self.block_bytes)
                .saturating_mul(self.block_bytes)
                .min(self.covered)
        };
        start..end
    }

    /// The segments of block checksums not read yet that the data-section part of
    /// `ranges` needs.
    fn missing_segments(&self, ranges: &[Range<u64>]) -> Vec<usize> {
        let mut out: Vec<usize> = Vec::new();
        for r in ranges {
            let end = r.end.min(self.covered);
            if r.start >= end {
                continue;
            }
            let first = r.start / self.block_bytes / self.segment_blocks;
            let last = (end - 1) / self.block_bytes / self.segment_blocks;
            for k in first as usize..=last as usize {
                if self.segments.get(k).is_some_and(|s| s.get().is_none()) && out.last() != Some(&k) {
                    out.push(k);
                }
            }
        }
        out.sort_unstable();
        out.dedup();
        out
    }

    /// Reads the block checksums of `segments`.
    async fn load_segments(&self, io: &dyn ReadAt, stats: &IoStats, missing: Vec<usize>) -> Result<()> {
        if missing.is_empty() {
            return Ok(());
        }
        let ranges: Vec<Range<u64>> = missing.iter().map(|k| self.segment_range(*k)).collect();
        let bufs = read_ranges(io, &ranges, stats).await?;
        for (k, b) in missing.into_iter().zip(bufs) {
            if crc(b.as_slice()) != self.segment_crcs[k] {
                return Err(Error::corrupt(
                    &self.path,
                    format!("checksum mismatch in segment {k} of the block checksums"),
                ));
            }
            let _ = self.segments[k].set(parse_words(b.as_slice()));
        }
        Ok(())
    }

    fn block_crc(&self, block: u64) -> Option<u32> {
        let seg = self.segments.get((block / self.segment_blocks) as usize)?.get()?;
        seg.get((block % self.segment_blocks) as usize).copied()
    }

    /// Checks every data-section block in `bytes`, which were read at `at` (a range
    /// widened by [`Checksums::widen`]). On a mismatch `locate` names what the block holds.
    pub async fn verify(
        &self,
        io: &dyn ReadAt,
        stats: &IoStats,
        at: u64,
        bytes: &[u8],
        locate: &(dyn Fn(Range<u64>) -> String + Send + Sync),
    ) -> Result<()> {
        let end = (at + bytes.len() as u64).min(self.covered);
        if at >= end {
            return Ok(());
        }
        let blocks = at / self.block_bytes..end.div_ceil(self.block_bytes);
        self.load_segments(io, stats, self.missing_segments(std::slice::from_ref(&(at..end))))
            .await?;
        for b in blocks {
            let r = b * self.block_bytes..((b + 1) * self.block_bytes).min(self.covered);
            if r.start < at || r.end > at + bytes.len() as u64 {
                // Not widened: only whole blocks can be checked.
                continue;
            }
            let expected = self
                .block_crc(b)
                .ok_or_else(|| Error::corrupt(&self.path, format!("no checksum for block {b}")))?;
            let got = crc(&bytes[(r.start - at) as usize..(r.end - at) as usize]);
            if got != expected {
                return Err(Error::corrupt(
                    &self.path,
                    format!(
                        "checksum mismatch in bytes {}..{} ({}): the bytes were damaged after they were written",
                        r.start,
                        r.end,
                        locate(r.clone())
                    ),
                ));
            }
        }
        Ok(())
    }
}

fn parse_words(b: &[u8]) -> Arc<[u32]> {
    b.chunks_exact(4).map(|w| u32_at(w, 0)).collect()
}

/// Reads `ranges` (one buffer per range, in order), checking every data-section block
/// they touch against `sums` when given.
pub(crate) async fn read_checked(
    io: &dyn ReadAt,
    stats: &IoStats,
    sums: Option<&Checksums>,
    ranges: &[Range<u64>],
    locate: &(dyn Fn(Range<u64>) -> String + Send + Sync),
) -> Result<Vec<Buffer>> {
    let Some(sums) = sums else {
        return Ok(read_ranges(io, ranges, stats).await?);
    };
    let mut wide: Vec<Range<u64>> = ranges
        .iter()
        .filter(|r| r.end > r.start)
        .map(|r| sums.widen(r))
        .collect();
    wide.sort_by_key(|r| r.start);
    let mut unions: Vec<Range<u64>> = Vec::with_capacity(wide.len());
    for r in wide {
        match unions.last_mut() {
            Some(u) if r.start <= u.end => u.end = u.end.max(r.end),
            _ => unions.push(r),
        }
    }
    // The block checksums still needed are fetched together with the data.
    let (bufs, ()) = futures::future::try_join(
        async { Ok(read_ranges(io, &unions, stats).await?) },
        sums.load_segments(io, stats, sums.missing_segments(&unions)),
    )
    .await?;
    for (u, b) in unions.iter().zip(&bufs) {
        sums.verify(io, stats, u.start, b.as_slice(), locate).await?;
    }
    ranges
        .iter()
        .map(|r| {
            if r.end <= r.start {
                return Ok(Buffer::from_vec(Vec::<u8>::new()));
            }
            let k = unions.partition_point(|u| u.end <= r.start);
            match (unions.get(k), bufs.get(k)) {
                (Some(u), Some(b)) if u.start <= r.start && r.end <= u.end => {
                    Ok(b.slice_with_length((r.start - u.start) as usize, (r.end - r.start) as usize))
                }
                _ => Err(Error::Internal(format!("range {r:?} was not read"))),
            }
        })
        .collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "tests: a failed unwrap is a failed test")]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn block_sums_match_whole_block_crcs() {
        let data: Vec<u8> = (0..40_000u32).map(|i| (i * 7 % 251) as u8).collect();
        let mut s = BlockSums::new();
        for piece in data.chunks(3000) {
            s.update(piece);
        }
        let crcs = s.finish();
        let expect: Vec<u32> = data.chunks(BLOCK_BYTES as usize).map(crc).collect();
        assert_eq!(crcs, expect);
    }

    proptest! {
        #[test]
        fn widen_covers_the_range_in_whole_blocks(start in 0u64..200_000, len in 0u64..100_000, covered in 1u64..250_000) {
            let meta = MetadataSums { footer: &[], global_table: &[], column_table: &[], descriptor: &[], columns: &[] };
            let mut b = BlockSums::new();
            b.update(&vec![0u8; covered as usize]);
            let buf = encode(covered, b, &meta);
            let range = covered..covered + buf.len() as u64;
            let c = Checksums::parse("f", &buf, &range).unwrap();
            let r = start..start + len;
            let w = c.widen(&r);
            prop_assert!(w.start <= r.start && w.end >= r.end);
            if r.start < covered && r.start < r.end {
                prop_assert!(w.start.is_multiple_of(u64::from(BLOCK_BYTES)));
                prop_assert!(w.end == covered || w.end.is_multiple_of(u64::from(BLOCK_BYTES)) || w.end == r.end);
            }
        }
    }
}
