//! The narrow read interface the file reader depends on, and its local implementations.
//!
//! Readers ask for many byte ranges at once; [`read_ranges`] merges ranges closer than
//! the source's [`ReadAt::coalesce_gap`] into single reads and hands back zero-copy
//! slices. Buffers are 64-byte aligned allocations so decoded arrays can point into them.

use std::fmt::Debug;
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use arrow_buffer::{Buffer, MutableBuffer};
use futures::future::BoxFuture;
use futures::FutureExt;

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

/// A file on local disk, read with positioned reads.
#[derive(Debug)]
pub struct LocalFile {
    path: String,
    file: Arc<std::fs::File>,
    size: u64,
}

impl LocalFile {
    /// Opens `path` for reading.
    pub fn open(path: &str) -> Result<Self> {
        let file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
        let meta = file.metadata().map_err(|e| Error::io(path, e))?;
        if meta.is_dir() {
            return Err(Error::InvalidArgument(format!(
                "{path} is a directory, not a Lance file"
            )));
        }
        Ok(Self {
            path: path.to_string(),
            file: Arc::new(file),
            size: meta.len(),
        })
    }
}

fn pread(file: &std::fs::File, range: &Range<u64>, path: &str) -> Result<Buffer> {
    use std::os::unix::io::AsRawFd;
    let len = usize::try_from(range.end - range.start)
        .map_err(|_| Error::InvalidArgument(format!("read of {range:?} is too large")))?;
    // Read into uninitialised, 64-byte aligned memory: zeroing it first would cost as much
    // as a third of a scan. Only the bytes `pread` reports are ever exposed.
    let mut buf = MutableBuffer::with_capacity(len);
    let mut filled = 0usize;
    while filled < len {
        let offset = i64::try_from(range.start + filled as u64)
            .map_err(|_| Error::InvalidArgument(format!("offset of {range:?} is too large")))?;
        // SAFETY: the destination is `len - filled` bytes of capacity owned by `buf`, past the
        // `filled` bytes already written; the kernel writes at most that many.
        let n = unsafe {
            libc::pread(
                file.as_raw_fd(),
                buf.as_mut_ptr().add(filled).cast::<libc::c_void>(),
                len - filled,
                offset,
            )
        };
        if n < 0 {
            let e = std::io::Error::last_os_error();
            if e.kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return Err(Error::io(path, e));
        }
        if n == 0 {
            return Err(Error::corrupt(
                path,
                format!("byte range {range:?} lies past the end of the file"),
            ));
        }
        filled += n as usize;
    }
    // SAFETY: the loop above initialised all `len` bytes.
    unsafe { buf.set_len(len) };
    Ok(buf.into())
}

impl ReadAt for LocalFile {
    fn path(&self) -> &str {
        &self.path
    }
    fn size(&self) -> BoxFuture<'_, Result<u64>> {
        futures::future::ready(Ok(self.size)).boxed()
    }
    fn read_range(&self, range: Range<u64>) -> BoxFuture<'_, Result<Buffer>> {
        // Local reads are served from the page cache in microseconds; doing them inline
        // avoids a thread hop per range.
        futures::future::ready(pread(&self.file, &range, &self.path)).boxed()
    }
}

/// Bytes held in memory (tests, fuzzing, small objects).
#[derive(Debug, Clone)]
pub struct InMemory {
    name: String,
    data: Buffer,
}

impl InMemory {
    /// Wraps `data`, copying it into an aligned buffer.
    pub fn new(name: impl Into<String>, data: &[u8]) -> Self {
        Self {
            name: name.into(),
            data: Buffer::from_slice_ref(data),
        }
    }
}

impl ReadAt for InMemory {
    fn path(&self) -> &str {
        &self.name
    }
    fn size(&self) -> BoxFuture<'_, Result<u64>> {
        futures::future::ready(Ok(self.data.len() as u64)).boxed()
    }
    fn read_range(&self, range: Range<u64>) -> BoxFuture<'_, Result<Buffer>> {
        let len = self.data.len() as u64;
        let res = if range.start > range.end || range.end > len {
            Err(Error::corrupt(
                &self.name,
                format!("byte range {range:?} lies past the end ({len} bytes)"),
            ))
        } else {
            Ok(self
                .data
                .slice_with_length(range.start as usize, (range.end - range.start) as usize))
        };
        futures::future::ready(res).boxed()
    }
    fn coalesce_gap(&self) -> u64 {
        u64::MAX / 4
    }
}
