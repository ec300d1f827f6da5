//! Row addresses and the codecs that store sets of them.
//!
//! A row address is `(fragment_id << 32) | offset_in_fragment`. Index results are
//! [`RowAddrSet`]s: per fragment, either the whole fragment or a 32-bit bitmap of offsets.
//! "Whole fragment" has no size of its own, so operations that must enumerate or count
//! such a fragment take the fragment's physical row count from the caller.
//!
//! Three encodings live here:
//! - portable Roaring32 ([`encode_roaring32`], [`decode_roaring32`]): the manifest's
//!   `fragment_bitmap`;
//! - the row-address tree map ([`RowAddrSet::encode`], [`RowAddrSet::decode`]): BITMAP and
//!   LABEL_LIST bitmaps and the null maps of LABEL_LIST, ZONEMAP and BLOOMFILTER:
//!   `u32 n | n × (u32 fragment_id, u32 byte_len, Roaring32)`, fragments ascending,
//!   `byte_len == 0` meaning the whole fragment;
//! - the standard RoaringTreemap form ([`encode_treemap`], [`decode_treemap`]): NGRAM
//!   posting lists.

mod roaring32;

use std::collections::BTreeMap;
use std::ops::Range;

pub use roaring::RoaringBitmap;

pub(crate) use self::roaring32::Cursor;
pub use self::roaring32::{decode_roaring32, decode_treemap, encode_roaring32, encode_treemap};
use crate::error::Result;

/// The fragment id of a row address.
pub fn fragment_of(addr: u64) -> u32 {
    (addr >> 32) as u32
}

/// The offset (row within its fragment) of a row address.
pub fn offset_of(addr: u64) -> u32 {
    addr as u32
}

/// The row address of `offset` in `fragment`.
pub fn row_addr(fragment: u32, offset: u32) -> u64 {
    (u64::from(fragment) << 32) | u64::from(offset)
}

/// The rows of one fragment in a [`RowAddrSet`].
#[derive(Debug, Clone, PartialEq)]
pub enum FragmentRows {
    /// Every row of the fragment.
    Full,
    /// These offsets (never empty inside a set).
    Offsets(RoaringBitmap),
}

/// A set of row addresses, grouped by fragment, that can say "the whole fragment".
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RowAddrSet {
    fragments: BTreeMap<u32, FragmentRows>,
}

impl RowAddrSet {
    /// The empty set.
    pub fn new() -> Self {
        Self::default()
    }

    /// A set holding all of each given fragment.
    pub fn full_fragments(ids: impl IntoIterator<Item = u32>) -> Self {
        Self {
            fragments: ids.into_iter().map(|f| (f, FragmentRows::Full)).collect(),
        }
    }

    /// Builds a set from addresses in ascending order (faster than [`FromIterator`],
    /// which accepts any order); out-of-order addresses are still inserted correctly.
    pub fn from_sorted_iter(addrs: impl IntoIterator<Item = u64>) -> Self {
        let mut out = Self::new();
        let mut current: Option<(u32, RoaringBitmap)> = None;
        for a in addrs {
            let (f, o) = (fragment_of(a), offset_of(a));
            match &mut current {
                Some((cf, bm)) if *cf == f => {
                    if bm.try_push(o).is_err() {
                        bm.insert(o);
                    }
                }
                _ => {
                    if let Some((cf, bm)) = current.take() {
                        out.add_offsets(cf, bm);
                    }
                    current = Some((f, RoaringBitmap::from_iter([o])));
                }
            }
        }
        if let Some((cf, bm)) = current {
            out.add_offsets(cf, bm);
        }
        out
    }

    /// Adds one address.
    pub fn insert(&mut self, addr: u64) {
        let (f, o) = (fragment_of(addr), offset_of(addr));
        match self
            .fragments
            .entry(f)
            .or_insert_with(|| FragmentRows::Offsets(RoaringBitmap::new()))
        {
            FragmentRows::Full => {}
            FragmentRows::Offsets(bm) => {
                bm.insert(o);
            }
        }
    }

    /// Adds the offsets `range` of `fragment`.
    pub fn insert_range(&mut self, fragment: u32, range: Range<u32>) {
        if range.is_empty() {
            return;
        }
        let mut bm = RoaringBitmap::new();
        bm.insert_range(range);
        self.add_offsets(fragment, bm);
    }

    /// Adds a whole fragment.
    pub fn insert_fragment(&mut self, fragment: u32) {
        self.fragments.insert(fragment, FragmentRows::Full);
    }

    /// Adds `offsets` of `fragment`.
    pub fn add_offsets(&mut self, fragment: u32, offsets: RoaringBitmap) {
        if offsets.is_empty() {
            return;
        }
        match self.fragments.get_mut(&fragment) {
            Some(FragmentRows::Full) => {}
            Some(FragmentRows::Offsets(bm)) => *bm |= offsets,
            None => {
                self.fragments.insert(fragment, FragmentRows::Offsets(offsets));
            }
        }
    }

    /// Whether the set holds no address.
    pub fn is_empty(&self) -> bool {
        self.fragments.is_empty()
    }

    /// Whether `addr` is in the set.
    pub fn contains(&self, addr: u64) -> bool {
        match self.fragments.get(&fragment_of(addr)) {
            Some(FragmentRows::Full) => true,
            Some(FragmentRows::Offsets(bm)) => bm.contains(offset_of(addr)),
            None => false,
        }
    }

    /// Whether some fragment is held whole.
    pub fn has_full_fragments(&self) -> bool {
        self.fragments.values().any(|f| matches!(f, FragmentRows::Full))
    }

    /// The fragments of the set, ascending.
    pub fn fragments(&self) -> impl Iterator<Item = (u32, &FragmentRows)> + '_ {
        self.fragments.iter().map(|(f, r)| (*f, r))
    }

    /// Number of addresses; `physical_rows(fragment)` sizes whole fragments.
    pub fn len_with(&self, physical_rows: impl Fn(u32) -> u64) -> u64 {
        self.fragments
            .iter()
            .map(|(f, r)| match r {
                FragmentRows::Full => physical_rows(*f),
                FragmentRows::Offsets(bm) => bm.len(),
            })
            .sum()
    }

    /// Number of addresses, if no fragment is held whole.
    pub fn len_if_known(&self) -> Option<u64> {
        (!self.has_full_fragments()).then(|| self.len_with(|_| 0))
    }

    /// The addresses in ascending order; `physical_rows(fragment)` sizes whole fragments.
    pub fn iter_with<'a>(&'a self, physical_rows: impl Fn(u32) -> u64 + 'a) -> impl Iterator<Item = u64> + 'a {
        self.fragments.iter().flat_map(move |(f, r)| {
            let f = *f;
            let it: Box<dyn Iterator<Item = u64> + 'a> = match r {
                FragmentRows::Full => {
                    let n = physical_rows(f).min(1 << 32);
                    Box::new((0..n).map(move |o| (u64::from(f) << 32) | o))
                }
                FragmentRows::Offsets(bm) => Box::new(bm.iter().map(move |o| row_addr(f, o))),
            };
            it
        })
    }

    /// The union of two sets.
    pub fn union(&self, other: &Self) -> Self {
        let mut out = self.clone();
        out.union_with(other);
        out
    }

    /// Adds every address of `other`.
    pub fn union_with(&mut self, other: &Self) {
        for (f, r) in &other.fragments {
            match r {
                FragmentRows::Full => self.insert_fragment(*f),
                FragmentRows::Offsets(bm) => self.add_offsets(*f, bm.clone()),
            }
        }
    }

    /// The addresses in both sets.
    pub fn intersection(&self, other: &Self) -> Self {
        let mut out = Self::new();
        for (f, a) in &self.fragments {
            let Some(b) = other.fragments.get(f) else { continue };
            let rows = match (a, b) {
                (FragmentRows::Full, x) | (x, FragmentRows::Full) => x.clone(),
                (FragmentRows::Offsets(x), FragmentRows::Offsets(y)) => FragmentRows::Offsets(x & y),
            };
            match rows {
                FragmentRows::Offsets(bm) if bm.is_empty() => {}
                rows => {
                    out.fragments.insert(*f, rows);
                }
            }
        }
        out
    }

    /// The addresses of `self` not in `other`; `physical_rows(fragment)` sizes a whole
    /// fragment of `self` from which some rows are removed.
    pub fn difference(&self, other: &Self, physical_rows: impl Fn(u32) -> u64) -> Self {
        let mut out = Self::new();
        for (f, a) in &self.fragments {
            let rows = match (a, other.fragments.get(f)) {
                (a, None) => a.clone(),
                (_, Some(FragmentRows::Full)) => continue,
                (FragmentRows::Offsets(x), Some(FragmentRows::Offsets(y))) => FragmentRows::Offsets(x - y),
                (FragmentRows::Full, Some(FragmentRows::Offsets(y))) => {
                    let mut all = RoaringBitmap::new();
                    let n = physical_rows(*f).min(1 << 32);
                    if n > 0 {
                        all.insert_range(0..=(n - 1) as u32);
                    }
                    FragmentRows::Offsets(all - y)
                }
            };
            match rows {
                FragmentRows::Offsets(bm) if bm.is_empty() => {}
                rows => {
                    out.fragments.insert(*f, rows);
                }
            }
        }
        out
    }

    /// Encodes the set as a row-address tree map (whole fragments with `byte_len` 0).
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend_from_slice(&(self.fragments.len() as u32).to_le_bytes());
        for (f, r) in &self.fragments {
            out.extend_from_slice(&f.to_le_bytes());
            match r {
                FragmentRows::Full => out.extend_from_slice(&0u32.to_le_bytes()),
                FragmentRows::Offsets(bm) => {
                    let bytes = encode_roaring32(bm);
                    out.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
                    out.extend_from_slice(&bytes);
                }
            }
        }
        out
    }

    /// Decodes a row-address tree map that fills `bytes` exactly; `what` names the
    /// source in errors.
    pub fn decode(bytes: &[u8], what: &str) -> Result<Self> {
        let mut c = Cursor::new(bytes, what);
        let n = c.u32()?;
        // Every entry takes at least 8 bytes.
        if u64::from(n) > (c.remaining() / 8) as u64 {
            return Err(c.corrupt(format!("row-address map claims {n} fragments in {} bytes", bytes.len())));
        }
        let mut out = Self::new();
        let mut last: Option<u32> = None;
        for _ in 0..n {
            let f = c.u32()?;
            if last.is_some_and(|l| l >= f) {
                return Err(c.corrupt("row-address map fragments are not strictly increasing"));
            }
            last = Some(f);
            let len = c.u32()? as usize;
            if len == 0 {
                out.fragments.insert(f, FragmentRows::Full);
                continue;
            }
            let body = c.take(len)?;
            let (bm, used) = roaring32::decode_prefix(body, what)?;
            if used != len {
                return Err(c.corrupt(format!("fragment {f}: bitmap of {used} bytes in a {len}-byte slot")));
            }
            out.add_offsets(f, bm);
        }
        if c.remaining() != 0 {
            return Err(c.corrupt(format!("{} trailing bytes", c.remaining())));
        }
        Ok(out)
    }
}

impl FromIterator<u64> for RowAddrSet {
    fn from_iter<T: IntoIterator<Item = u64>>(iter: T) -> Self {
        let mut out = Self::new();
        iter.into_iter().for_each(|a| out.insert(a));
        out
    }
}

#[cfg(test)]
mod tests;
