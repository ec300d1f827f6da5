//! Bytes held in memory (tests, fuzzing, index files kept in memory).

use std::ops::Range;

use arrow_buffer::Buffer;
use futures::future::BoxFuture;
use futures::FutureExt;

use crate::error::{Error, Result};
use crate::read::ReadAt;

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
