//! The portable Roaring serialization of a 32-bit bitmap, and the standard 64-bit
//! "treemap" serialization built on it.
//!
//! Portable layout (all little endian):
//!
//! ```text
//! no-run form: u32 cookie 12346 | u32 n | n × (u16 key, u16 card-1) | n × u32 offset | containers
//! run form:    u16 cookie 12347, u16 n-1 | ceil(n/8) run flags | n × (u16 key, u16 card-1)
//!              | n × u32 offset (only when n >= 4) | containers
//! container:   array (card <= 4096): card × u16 | bitmap: 1024 × u64 | run: u16 runs, runs × (u16 start, u16 len-1)
//! ```
//!
//! Pylance writes the no-run form; Lance's own run-form bitmaps show up inside the
//! fragment-reuse index. We encode the no-run form only and decode both. (The `roaring`
//! crate keeps run containers in memory, made by `insert_range` or read from run-form
//! input, and then serializes the run form, so [`encode_roaring32`] expands them first.)
//!
//! The `roaring` crate's decoder checks container contents but trusts the container keys
//! to be sorted and does not report how many bytes a bitmap took; both matter here (keys
//! out of order break its binary searches, and treemaps concatenate bitmaps without
//! lengths). So [`scan`] walks the structure first, checking every length, key order and
//! run bound, and only a structurally valid byte range is handed to the crate.

use roaring::{RoaringBitmap, RoaringTreemap};

use crate::error::{Error, Result};

const COOKIE_NO_RUN: u32 = 12346;
const COOKIE_RUN: u16 = 12347;
const ARRAY_LIMIT: usize = 4096;
const BITMAP_BYTES: usize = 8192;
const MAX_CONTAINERS: usize = 1 << 16;

/// A little-endian cursor over untrusted bytes: every read is bounds-checked.
pub(crate) struct Cursor<'a> {
    bytes: &'a [u8],
    pos: usize,
    what: &'a str,
}

impl<'a> Cursor<'a> {
    pub(crate) fn new(bytes: &'a [u8], what: &'a str) -> Self {
        Self { bytes, pos: 0, what }
    }
    pub(crate) fn pos(&self) -> usize {
        self.pos
    }
    pub(crate) fn remaining(&self) -> usize {
        self.bytes.len() - self.pos
    }
    pub(crate) fn corrupt(&self, message: impl Into<String>) -> Error {
        Error::corrupt(self.what, message)
    }
    pub(crate) fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|e| *e <= self.bytes.len())
            .ok_or_else(|| {
                self.corrupt(format!(
                    "{n} bytes needed at offset {} of {}",
                    self.pos,
                    self.bytes.len()
                ))
            })?;
        let s = &self.bytes[self.pos..end];
        self.pos = end;
        Ok(s)
    }
    pub(crate) fn u16(&mut self) -> Result<u16> {
        let b = self.take(2)?;
        Ok(u16::from_le_bytes([b[0], b[1]]))
    }
    pub(crate) fn u32(&mut self) -> Result<u32> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
    pub(crate) fn u64(&mut self) -> Result<u64> {
        let b = self.take(8)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(u64::from_le_bytes(a))
    }
}

/// Checks the structure of the portable bitmap at the start of `bytes` and returns its
/// length in bytes.
fn scan(bytes: &[u8], what: &str) -> Result<usize> {
    let mut c = Cursor::new(bytes, what);
    let cookie = c.u32()?;
    let (n, run_flags, has_offsets) = if cookie == COOKIE_NO_RUN {
        let n = c.u32()? as usize;
        if n > MAX_CONTAINERS {
            return Err(c.corrupt(format!("roaring bitmap claims {n} containers")));
        }
        (n, None, true)
    } else if cookie as u16 == COOKIE_RUN {
        let n = (cookie >> 16) as usize + 1;
        (n, Some(c.take(n.div_ceil(8))?), n >= 4)
    } else {
        return Err(c.corrupt(format!("unknown roaring cookie {cookie:#010x}")));
    };
    let descriptions = c.take(n * 4)?;
    if has_offsets {
        c.take(n * 4)?;
    }
    let mut last_key: Option<u16> = None;
    for i in 0..n {
        let d = &descriptions[i * 4..i * 4 + 4];
        let key = u16::from_le_bytes([d[0], d[1]]);
        let card = usize::from(u16::from_le_bytes([d[2], d[3]])) + 1;
        if last_key.is_some_and(|k| k >= key) {
            return Err(c.corrupt("roaring container keys are not strictly increasing"));
        }
        last_key = Some(key);
        let is_run = run_flags.is_some_and(|f| f[i / 8] & (1 << (i % 8)) != 0);
        if is_run {
            let runs = usize::from(c.u16()?);
            let body = c.take(runs * 4)?;
            let mut next_free: u32 = 0;
            for r in body.chunks_exact(4) {
                let start = u32::from(u16::from_le_bytes([r[0], r[1]]));
                let end = start + u32::from(u16::from_le_bytes([r[2], r[3]]));
                if end > u32::from(u16::MAX) || start < next_free {
                    return Err(c.corrupt("roaring run container has overlapping or out-of-range runs"));
                }
                next_free = end + 1;
            }
        } else if card <= ARRAY_LIMIT {
            c.take(card * 2)?;
        } else {
            c.take(BITMAP_BYTES)?;
        }
    }
    Ok(c.pos())
}

/// Decodes the portable bitmap at the start of `bytes`; returns it and its byte length.
pub(crate) fn decode_prefix(bytes: &[u8], what: &str) -> Result<(RoaringBitmap, usize)> {
    let len = scan(bytes, what)?;
    let bm = RoaringBitmap::deserialize_from(&bytes[..len])
        .map_err(|e| Error::corrupt(what, format!("bad roaring bitmap: {e}")))?;
    Ok((bm, len))
}

/// Encodes a 32-bit bitmap in the portable no-run form (cookie 12346) pylance writes.
pub fn encode_roaring32(bitmap: &RoaringBitmap) -> Vec<u8> {
    let mut out = Vec::with_capacity(bitmap.serialized_size());
    // Writing into a Vec cannot fail.
    let _ = bitmap.serialize_into(&mut out);
    if out.len() >= 2 && u16::from_le_bytes([out[0], out[1]]) == COOKIE_RUN {
        let mut plain = bitmap.clone();
        plain.remove_run_compression();
        out.clear();
        let _ = plain.serialize_into(&mut out);
    }
    out
}

/// Decodes a portable 32-bit bitmap (no-run or run form) that must fill `bytes` exactly.
pub fn decode_roaring32(bytes: &[u8]) -> Result<RoaringBitmap> {
    let what = "roaring32 bitmap";
    let (bm, len) = decode_prefix(bytes, what)?;
    if len != bytes.len() {
        return Err(Error::corrupt(what, format!("{} trailing bytes", bytes.len() - len)));
    }
    Ok(bm)
}

/// Encodes a 64-bit set in the standard treemap form: `u64 n | n × (u32 high, Roaring32)`,
/// high keys ascending (NGRAM posting lists).
pub fn encode_treemap(set: &RoaringTreemap) -> Vec<u8> {
    let mut out = Vec::with_capacity(set.serialized_size());
    let parts: Vec<(u32, &RoaringBitmap)> = set.bitmaps().filter(|(_, b)| !b.is_empty()).collect();
    out.extend_from_slice(&(parts.len() as u64).to_le_bytes());
    for (high, bm) in parts {
        out.extend_from_slice(&high.to_le_bytes());
        out.extend_from_slice(&encode_roaring32(bm));
    }
    out
}

/// Decodes the standard treemap form; high keys must be strictly increasing and the
/// encoding must fill `bytes` exactly.
pub fn decode_treemap(bytes: &[u8]) -> Result<RoaringTreemap> {
    let what = "roaring treemap";
    let mut c = Cursor::new(bytes, what);
    let n = c.u64()?;
    // Each entry takes at least a key and an empty bitmap (12 bytes): refuse counts the
    // input cannot hold before looping over them.
    if n > (c.remaining() / 12) as u64 {
        return Err(c.corrupt(format!("treemap claims {n} bitmaps in {} bytes", bytes.len())));
    }
    let mut parts = Vec::new();
    let mut last: Option<u32> = None;
    for _ in 0..n {
        let high = c.u32()?;
        if last.is_some_and(|l| l >= high) {
            return Err(c.corrupt("treemap keys are not strictly increasing"));
        }
        last = Some(high);
        let (bm, len) = decode_prefix(&bytes[c.pos()..], what)?;
        c.take(len)?;
        if !bm.is_empty() {
            parts.push((high, bm));
        }
    }
    if c.remaining() != 0 {
        return Err(c.corrupt(format!("{} trailing bytes", c.remaining())));
    }
    Ok(RoaringTreemap::from_bitmaps(parts))
}
