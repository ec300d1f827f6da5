//! The narrow read interface file readers depend on.
//!
//! Readers ask for many byte ranges at once; [`read_ranges`] merges ranges closer than
//! the source's [`ReadAt::coalesce_gap`] into single reads and hands back zero-copy
//! slices. Buffers are 64-byte aligned allocations so decoded arrays can point into them.

use std::fmt::Debug;
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};

use arrow_buffer::Buffer;
use futures::future::BoxFuture;

use crate::error::{Error, Result};

/// Random-access reads of one object (a local file, bytes in memory, an object store key).
pub trait ReadAt: Debug + Send + Sync {
    /// A display name for errors (usually the path).
    fn path(&self) -> &str;
    /// Size of the object in bytes.
    fn size(&self) -> BoxFuture<'_, Result<u64>>;
    /// Reads exactly `range`; a short object is an error.
    fn read_range(&self, range: Range<u64>) -> BoxFuture<'_, Result<Buffer>>;
    /// Two ranges closer than this many bytes are fetched with one read.
    fn coalesce_gap(&self) -> u64 {
        64 * 1024
    }
}

/// Counters of the I/O a reader issued (exposed so callers can see what pruning saved).
#[derive(Debug, Default)]
pub struct IoStats {
    /// Bytes fetched from storage.
    pub bytes_read: AtomicU64,
    /// Read requests sent to storage (after coalescing).
    pub read_requests: AtomicU64,
}

impl IoStats {
    /// `(bytes_read, read_requests)` so far.
    pub fn snapshot(&self) -> (u64, u64) {
        (
            self.bytes_read.load(Ordering::Relaxed),
            self.read_requests.load(Ordering::Relaxed),
        )
    }
}

/// Reads all `ranges` (in any order, possibly overlapping), coalescing nearby ones.
/// The result has one buffer per input range, in input order.
pub async fn read_ranges(io: &dyn ReadAt, ranges: &[Range<u64>], stats: &IoStats) -> Result<Vec<Buffer>> {
    let mut order: Vec<usize> = (0..ranges.len()).collect();
    order.sort_by_key(|&i| (ranges[i].start, ranges[i].end));
    let gap = io.coalesce_gap();
    // Group sorted ranges into merged reads.
    let mut merged: Vec<(Range<u64>, Vec<usize>)> = Vec::new();
    for i in order {
        let r = &ranges[i];
        if r.end < r.start {
            return Err(Error::corrupt(io.path(), format!("invalid byte range {r:?}")));
        }
        match merged.last_mut() {
            Some((m, members)) if r.start <= m.end.saturating_add(gap) => {
                m.end = m.end.max(r.end);
                members.push(i);
            }
            _ => merged.push((r.clone(), vec![i])),
        }
    }
    let reads = merged
        .iter()
        .filter(|(m, _)| m.end > m.start)
        .map(|(m, _)| io.read_range(m.clone()));
    let fetched = futures::future::try_join_all(reads).await?;
    let mut out = vec![Buffer::from_vec(Vec::<u8>::new()); ranges.len()];
    let mut fetched = fetched.into_iter();
    for (m, members) in &merged {
        if m.end == m.start {
            continue;
        }
        let buf = fetched
            .next()
            .ok_or_else(|| Error::corrupt(io.path(), "missing read result"))?;
        stats.bytes_read.fetch_add(m.end - m.start, Ordering::Relaxed);
        stats.read_requests.fetch_add(1, Ordering::Relaxed);
        for &i in members {
            let r = &ranges[i];
            out[i] = buf.slice_with_length((r.start - m.start) as usize, (r.end - r.start) as usize);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::InMemory;

    #[test]
    fn nearby_ranges_are_read_once_and_sliced_back_in_order() {
        let data: Vec<u8> = (0..=255).collect();
        let io = InMemory::new("mem", &data);
        let stats = IoStats::default();
        let out = futures::executor::block_on(read_ranges(&io, &[10..12, 0..2, 5..5, 200..201], &stats)).unwrap();
        assert_eq!(out[0].as_slice(), &[10, 11]);
        assert_eq!(out[1].as_slice(), &[0, 1]);
        assert!(out[2].is_empty());
        assert_eq!(out[3].as_slice(), &[200]);
        assert_eq!(stats.snapshot().1, 1);
    }
}
