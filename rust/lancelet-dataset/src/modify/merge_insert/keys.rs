//! The join's key table: the target's key values, encoded to bytes, in one arena, found
//! by a hash of their bytes. Only key columns are held (never whole rows): for a 2M-row
//! target with one `int64` key that is 8 bytes of arena, 8 of offset, 4 of chain and the
//! hash table's slot per row.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use arrow_array::{Array, ArrayRef, BooleanArray, GenericBinaryArray, GenericStringArray};
use arrow_buffer::NullBuffer;
use arrow_schema::DataType;

use crate::{Error, Result};

/// Marks the end of a chain of target rows sharing a hash.
const END: u32 = u32::MAX;

/// A hasher that passes through the hash the table computed itself.
#[derive(Default, Clone, Copy)]
pub(super) struct PassThrough(u64);

impl Hasher for PassThrough {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        // Only `write_u64` is used; fold anything else in all the same.
        for b in bytes {
            self.0 = (self.0 << 8) ^ u64::from(*b);
        }
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = v;
    }
}

/// Our own hash of a key's bytes: eight bytes per multiply-rotate step, then a final mix
/// (the table compares the bytes, so only speed and spread matter).
fn hash_bytes(bytes: &[u8]) -> u64 {
    const K: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut h: u64 = bytes.len() as u64;
    let mut chunks = bytes.chunks_exact(8);
    for c in &mut chunks {
        let mut a = [0u8; 8];
        a.copy_from_slice(c);
        h = (h.rotate_left(23) ^ u64::from_le_bytes(a)).wrapping_mul(K);
    }
    let rest = chunks.remainder();
    if !rest.is_empty() {
        let mut a = [0u8; 8];
        a[..rest.len()].copy_from_slice(rest);
        h = (h.rotate_left(23) ^ u64::from_le_bytes(a)).wrapping_mul(K);
    }
    h ^= h >> 29;
    h = h.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    h ^ (h >> 32)
}

/// Encodes the key columns of each row: every column's value bytes one after another
/// (strings and binaries with their length first), or `None` for a row where a key is
/// null (such rows never match, as in pylance).
pub(crate) struct KeyEncoder {
    columns: Vec<KeyColumn>,
    nulls: Option<NullBuffer>,
}

/// A key column ready for reading values by row (no per-row downcast or allocation).
enum KeyColumn {
    Fixed {
        values: arrow_buffer::Buffer,
        offset: usize,
        width: usize,
    },
    Bool(BooleanArray),
    Utf8(GenericStringArray<i32>),
    LargeUtf8(GenericStringArray<i64>),
    Binary(GenericBinaryArray<i32>),
    LargeBinary(GenericBinaryArray<i64>),
}

impl KeyColumn {
    fn new(c: &ArrayRef) -> Result<Self> {
        use arrow_array::cast::AsArray;
        let t = c.data_type();
        Ok(match t {
            DataType::Boolean => Self::Bool(c.as_boolean().clone()),
            DataType::Utf8 => Self::Utf8(c.as_string::<i32>().clone()),
            DataType::LargeUtf8 => Self::LargeUtf8(c.as_string::<i64>().clone()),
            DataType::Binary => Self::Binary(c.as_binary::<i32>().clone()),
            DataType::LargeBinary => Self::LargeBinary(c.as_binary::<i64>().clone()),
            t => match (t.primitive_width(), c.to_data()) {
                (Some(width), data) if !data.buffers().is_empty() => Self::Fixed {
                    values: data.buffers()[0].clone(),
                    offset: data.offset(),
                    width,
                },
                _ => {
                    return Err(Error::Unsupported(format!(
                        "merge_insert keys of type {t} (keys are numbers, dates, times, booleans, strings or binaries)"
                    )))
                }
            },
        })
    }

    #[inline]
    fn encode(&self, i: usize, out: &mut Vec<u8>) {
        match self {
            Self::Fixed { values, offset, width } => {
                let start = (offset + i) * width;
                out.extend_from_slice(&values.as_slice()[start..start + width]);
            }
            Self::Bool(b) => out.push(u8::from(b.value(i))),
            Self::Utf8(a) => bytes_of(a.value(i).as_bytes(), out),
            Self::LargeUtf8(a) => bytes_of(a.value(i).as_bytes(), out),
            Self::Binary(a) => bytes_of(a.value(i), out),
            Self::LargeBinary(a) => bytes_of(a.value(i), out),
        }
    }
}

impl KeyEncoder {
    /// An encoder of `columns` (all of one length).
    pub(crate) fn new(columns: Vec<ArrayRef>) -> Result<Self> {
        let mut nulls: Option<NullBuffer> = None;
        let mut prepared = Vec::with_capacity(columns.len());
        for c in &columns {
            prepared.push(KeyColumn::new(c)?);
            nulls = NullBuffer::union(nulls.as_ref(), c.logical_nulls().as_ref());
        }
        Ok(Self {
            columns: prepared,
            nulls,
        })
    }

    /// The key bytes of every row, eight per row, when the key is one column of eight-byte
    /// values without nulls (the common `id: int64` key): the probe's fast path.
    fn eight_byte_words(&self, rows: usize) -> Option<&[u8]> {
        match (self.columns.as_slice(), &self.nulls) {
            (
                [KeyColumn::Fixed {
                    values,
                    offset,
                    width: 8,
                }],
                None,
            ) => values.as_slice().get(offset * 8..(offset + rows) * 8),
            _ => None,
        }
    }

    /// Row `i`'s key as a word (one key column of at most eight bytes), `None` when null.
    #[inline]
    pub(crate) fn word(&self, i: usize) -> Option<u64> {
        if self.nulls.as_ref().is_some_and(|n| n.is_null(i)) {
            return None;
        }
        match self.columns.first() {
            Some(KeyColumn::Fixed {
                values,
                offset,
                width: 8,
            }) => {
                let start = (offset + i) * 8;
                let mut w = [0u8; 8];
                w.copy_from_slice(&values.as_slice()[start..start + 8]);
                Some(u64::from_le_bytes(w))
            }
            Some(KeyColumn::Fixed { values, offset, width }) => {
                let start = (offset + i) * width;
                let mut w = [0u8; 8];
                w[..*width].copy_from_slice(&values.as_slice()[start..start + width]);
                Some(u64::from_le_bytes(w))
            }
            Some(KeyColumn::Bool(b)) => Some(u64::from(b.value(i))),
            _ => None,
        }
    }

    /// Appends row `i`'s key to `out` (cleared first); false when a key of the row is null.
    #[inline]
    pub(crate) fn encode(&self, i: usize, out: &mut Vec<u8>) -> bool {
        out.clear();
        if self.nulls.as_ref().is_some_and(|n| n.is_null(i)) {
            return false;
        }
        for c in &self.columns {
            c.encode(i, out);
        }
        true
    }
}

fn bytes_of(v: &[u8], out: &mut Vec<u8>) {
    out.extend_from_slice(&(v.len() as u64).to_le_bytes());
    out.extend_from_slice(v);
}

/// A final mix of a word key's bits, for the [`Prefilter`] (which takes its block from the
/// high bits and its three bits from the low ones, so both must depend on the whole key).
#[inline]
fn mix_word(v: u64) -> u64 {
    let mut h = v.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    h ^= h >> 32;
    h = h.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    h ^ (h >> 29)
}

/// A blocked Bloom filter over the keys' hashes: three bits in one 64-bit word per key,
/// about 16 bits per key (a false positive rate near 1%).
///
/// A merge probes every target row, and most of them (the target is usually far larger
/// than the source) match nothing. The hash table of a 100k-row source is a few MB, so each
/// of those probes was a cache miss (40% of a 100k-into-2M merge's CPU); the filter is
/// 200 KB and answers them from cache. Empty until [`KeyTable::seal`]: then every key
/// passes, so an unsealed table is only slower, never wrong.
#[derive(Default)]
struct Prefilter {
    words: Vec<u64>,
    /// `64 - log2(words.len())`: the hash's high bits pick the word.
    shift: u32,
}

impl Prefilter {
    fn build(hashes: impl ExactSizeIterator<Item = u64>) -> Self {
        let words_len = (hashes.len().saturating_mul(16) / 64).max(64).next_power_of_two();
        let shift = 64 - words_len.trailing_zeros();
        let mut words = vec![0u64; words_len];
        for h in hashes {
            words[(h >> shift) as usize] |= Self::bits(h);
        }
        Self { words, shift }
    }

    #[inline]
    fn bits(h: u64) -> u64 {
        (1u64 << (h & 63)) | (1u64 << ((h >> 6) & 63)) | (1u64 << ((h >> 12) & 63))
    }

    /// False only when no key has this hash.
    #[inline]
    fn may_contain(&self, h: u64) -> bool {
        let Some(&w) = self.words.get((h >> self.shift) as usize) else {
            return true; // not built
        };
        let b = Self::bits(h);
        w & b == b
    }
}

/// Keys of any types, as encoded bytes.
#[derive(Default)]
pub(crate) struct ByteTable {
    arena: Vec<u8>,
    /// Where entry `i`'s key starts in `arena` (it ends where entry `i + 1`'s starts).
    starts: Vec<u64>,
    /// The ordinal with the same hash inserted before this one, or [`END`].
    next: Vec<u32>,
    heads: HashMap<u64, u32, BuildHasherDefault<PassThrough>>,
    /// The table's row ordinal of each key entry.
    ordinals: Vec<u32>,
    filter: Prefilter,
}

impl ByteTable {
    /// Makes room for about `n` keys.
    fn with_capacity(n: usize) -> Self {
        Self {
            heads: HashMap::with_capacity_and_hasher(n, BuildHasherDefault::default()),
            ..Self::default()
        }
    }

    /// Adds the key `key` of target row `ordinal`.
    fn insert(&mut self, key: &[u8], ordinal: u32) {
        self.filter = Prefilter::default();
        let h = hash_bytes(key);
        let entry = u32::try_from(self.ordinals.len()).unwrap_or(END);
        self.starts.push(self.arena.len() as u64);
        self.arena.extend_from_slice(key);
        self.ordinals.push(ordinal);
        let prev = self.heads.insert(h, entry).unwrap_or(END);
        self.next.push(prev);
    }

    /// Calls `f` with the ordinal of every target row whose key is `key`.
    fn for_each_match(&self, key: &[u8], mut f: impl FnMut(u32)) {
        let h = hash_bytes(key);
        if !self.filter.may_contain(h) {
            return;
        }
        let Some(&head) = self.heads.get(&h) else {
            return;
        };
        let mut e = head;
        while e != END {
            let i = e as usize;
            let s = self.starts[i] as usize;
            let t = self.starts.get(i + 1).map_or(self.arena.len(), |&t| t as usize);
            if &self.arena[s..t] == key {
                f(self.ordinals[i]);
            }
            e = self.next[i];
        }
    }
}

/// Keys of one column of at most eight bytes (integers, dates, timestamps...), held as
/// words in an open-addressing table of our own: a slot holds the key and its first row,
/// so a probe that finds its key reads one slot (one cache line), and a run of probes can
/// have several of those reads in flight at once. Further rows with the same key (rare:
/// duplicate keys in the source) hang off the slot in `more`.
#[derive(Default)]
pub(crate) struct WordTable {
    /// A power of two long (or empty), at most half full; linear probing.
    slots: Vec<Slot>,
    len: usize,
    /// `(ordinal, next)`: the chains of further rows per key, [`END`]-terminated.
    more: Vec<(u32, u32)>,
    filter: Prefilter,
}

/// One slot: a key, its first row ([`END`] for an empty slot) and its chain in `more`.
#[derive(Clone, Copy)]
struct Slot {
    key: u64,
    ordinal: u32,
    more: u32,
}

const EMPTY: Slot = Slot {
    key: 0,
    ordinal: END,
    more: END,
};

impl WordTable {
    /// Makes room for `n` more keys.
    fn reserve(&mut self, n: usize) {
        let want = (self.len + n).saturating_mul(2).max(16).next_power_of_two();
        if want > self.slots.len() {
            let old = std::mem::replace(&mut self.slots, vec![EMPTY; want]);
            for slot in old.into_iter().filter(|s| s.ordinal != END) {
                let i = self.find(slot.key);
                self.slots[i] = slot;
            }
        }
    }

    /// The slot holding `key`, or the empty slot where it would go (the table is never
    /// full, so this ends).
    #[inline]
    fn find(&self, key: u64) -> usize {
        let mask = self.slots.len() - 1;
        let mut i = mix_word(key) as usize & mask;
        loop {
            let s = &self.slots[i];
            if s.ordinal == END || s.key == key {
                return i;
            }
            i = (i + 1) & mask;
        }
    }

    fn insert(&mut self, key: u64, ordinal: u32) {
        self.filter = Prefilter::default();
        self.reserve(1);
        let i = self.find(key);
        let slot = &mut self.slots[i];
        if slot.ordinal == END {
            *slot = Slot {
                key,
                ordinal,
                more: END,
            };
            self.len += 1;
        } else {
            let entry = u32::try_from(self.more.len()).unwrap_or(END);
            self.more.push((ordinal, slot.more));
            slot.more = entry;
        }
    }

    /// The keys held.
    fn keys(&self) -> impl ExactSizeIterator<Item = u64> + '_ {
        let keys: Vec<u64> = self.slots.iter().filter(|s| s.ordinal != END).map(|s| s.key).collect();
        keys.into_iter()
    }

    /// Calls `f` with every row of `slot`.
    #[inline]
    fn for_each_row(&self, slot: &Slot, mut f: impl FnMut(u32)) {
        f(slot.ordinal);
        let mut e = slot.more;
        while let Some(&(ordinal, next)) = self.more.get(e as usize) {
            f(ordinal);
            e = next;
        }
    }

    #[inline]
    fn for_each_match(&self, key: u64, f: impl FnMut(u32)) {
        if self.slots.is_empty() || !self.filter.may_contain(mix_word(key)) {
            return;
        }
        let slot = &self.slots[self.find(key)];
        if slot.ordinal != END {
            self.for_each_row(slot, f);
        }
    }

    /// [`KeyTable::probe_rows`] for keys given as eight little-endian bytes each.
    fn probe_words(&self, words: &[u8], out: &mut Vec<(u32, u32)>) {
        if self.slots.is_empty() {
            return;
        }
        // Blocks of rows: first the filter alone over the block (independent loads the
        // CPU overlaps), then the table for the few that pass.
        const BLOCK: usize = 512;
        let mut candidates: Vec<(u32, u64)> = Vec::with_capacity(BLOCK);
        for (b, block) in words.chunks(BLOCK * 8).enumerate() {
            candidates.clear();
            for (j, c) in block.chunks_exact(8).enumerate() {
                let mut w = [0u8; 8];
                w.copy_from_slice(c);
                let key = u64::from_le_bytes(w);
                if self.filter.may_contain(mix_word(key)) {
                    candidates.push(((b * BLOCK + j) as u32, key));
                }
            }
            for &(row, key) in &candidates {
                let slot = &self.slots[self.find(key)];
                if slot.ordinal != END {
                    self.for_each_row(slot, |src| out.push((row, src)));
                }
            }
        }
    }
}

/// The join's key table: key -> the row ordinals that have it.
pub(crate) enum KeyTable {
    /// One key column of at most eight bytes.
    Word(WordTable),
    /// Anything else.
    Bytes(ByteTable),
}

impl KeyTable {
    /// A table for keys of `types`.
    pub(crate) fn new(types: &[&DataType]) -> Self {
        match types {
            [t] if t.primitive_width().is_some_and(|w| w <= 8) => Self::Word(WordTable::default()),
            _ => Self::Bytes(ByteTable::with_capacity(0)),
        }
    }

    /// Adds row `i` of `enc` as `ordinal` (rows with a null key are skipped).
    pub(crate) fn insert(&mut self, enc: &KeyEncoder, i: usize, ordinal: u32, scratch: &mut Vec<u8>) {
        match self {
            Self::Word(t) => {
                if let Some(k) = enc.word(i) {
                    t.insert(k, ordinal);
                }
            }
            Self::Bytes(t) => {
                if enc.encode(i, scratch) {
                    t.insert(scratch, ordinal);
                }
            }
        }
    }

    /// Makes room for `n` more keys (one rehash per batch instead of one per doubling).
    pub(crate) fn reserve(&mut self, n: usize) {
        match self {
            Self::Word(t) => t.reserve(n),
            Self::Bytes(t) => {
                t.heads.reserve(n);
                t.starts.reserve(n);
                t.next.reserve(n);
                t.ordinals.reserve(n);
            }
        }
    }

    /// Builds the filter that lets most probes of absent keys skip the hash table. Call it
    /// once every key is in (a later insert drops the filter again).
    pub(crate) fn seal(&mut self) {
        match self {
            Self::Word(t) => t.filter = Prefilter::build(t.keys().map(mix_word)),
            Self::Bytes(t) => {
                let hashes: Vec<u64> = (0..t.ordinals.len())
                    .map(|i| {
                        let s = t.starts[i] as usize;
                        let e = t.starts.get(i + 1).map_or(t.arena.len(), |&e| e as usize);
                        hash_bytes(&t.arena[s..e])
                    })
                    .collect();
                t.filter = Prefilter::build(hashes.into_iter());
            }
        }
    }

    /// Every `(row, ordinal)` where row `row` of `enc` (of `rows` rows) has the key of the
    /// table's row `ordinal`, by row. Rows with a null key match nothing.
    pub(crate) fn probe_rows(&self, enc: &KeyEncoder, rows: usize, out: &mut Vec<(u32, u32)>) {
        if let (Self::Word(t), Some(words)) = (self, enc.eight_byte_words(rows)) {
            return t.probe_words(words, out);
        }
        let mut scratch = Vec::new();
        for i in 0..rows {
            self.for_each_match(enc, i, &mut scratch, |o| out.push((i as u32, o)));
        }
    }

    /// Calls `f` with each ordinal whose key equals row `i` of `enc`'s (none for a null key).
    #[inline]
    pub(crate) fn for_each_match(&self, enc: &KeyEncoder, i: usize, scratch: &mut Vec<u8>, f: impl FnMut(u32)) {
        match self {
            Self::Word(t) => {
                if let Some(k) = enc.word(i) {
                    t.for_each_match(k, f);
                }
            }
            Self::Bytes(t) => {
                if enc.encode(i, scratch) {
                    t.for_each_match(scratch, f);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::{Int64Array, StringArray};

    use super::*;

    fn matches(table: &KeyTable, enc: &KeyEncoder, i: usize) -> Vec<u32> {
        let mut found = Vec::new();
        table.for_each_match(enc, i, &mut Vec::new(), |o| found.push(o));
        found.sort_unstable();
        found
    }

    #[test]
    fn finds_every_row_of_a_key_and_skips_nulls() {
        let ids: ArrayRef = Arc::new(Int64Array::from(vec![Some(1), Some(2), None, Some(1)]));
        let names: ArrayRef = Arc::new(StringArray::from(vec!["a", "b", "c", "a"]));
        for columns in [vec![ids.clone(), names.clone()], vec![ids.clone()]] {
            let types: Vec<&DataType> = columns.iter().map(|c| c.data_type()).collect();
            let mut table = KeyTable::new(&types);
            let enc = KeyEncoder::new(columns.clone()).unwrap();
            for i in 0..4 {
                table.insert(&enc, i, i as u32, &mut Vec::new());
            }
            assert_eq!(matches(&table, &enc, 0), vec![0, 3]);
            table.seal();
            assert_eq!(matches(&table, &enc, 0), vec![0, 3]);
            assert_eq!(matches(&table, &enc, 1), vec![1]);
            assert_eq!(matches(&table, &enc, 2), Vec::<u32>::new());
            let mut probe: Vec<ArrayRef> = vec![Arc::new(Int64Array::from(vec![2]))];
            if columns.len() == 2 {
                probe.push(Arc::new(StringArray::from(vec!["a"])));
            }
            let want: Vec<u32> = if columns.len() == 2 { vec![] } else { vec![1] };
            assert_eq!(matches(&table, &KeyEncoder::new(probe).unwrap(), 0), want);
        }
    }

    /// A sealed table finds every key it holds (the filter has no false negatives) and its
    /// filter turns most absent keys away before the hash table.
    #[test]
    fn the_filter_never_hides_a_key_and_rejects_most_absent_ones() {
        for strings in [false, true] {
            let present: Vec<i64> = (0..20_000).map(|i| i * 7919 % 1_000_003).collect();
            let column = |v: &[i64]| -> ArrayRef {
                match strings {
                    false => Arc::new(Int64Array::from(v.to_vec())),
                    true => Arc::new(StringArray::from(v.iter().map(|x| format!("k{x}")).collect::<Vec<_>>())),
                }
            };
            let col = column(&present);
            let mut table = KeyTable::new(&[col.data_type()]);
            let enc = KeyEncoder::new(vec![col.clone()]).unwrap();
            for i in 0..present.len() {
                table.insert(&enc, i, i as u32, &mut Vec::new());
            }
            table.seal();
            for i in 0..present.len() {
                assert_eq!(matches(&table, &enc, i), vec![i as u32]);
            }
            let absent: Vec<i64> = (2_000_000..2_100_000).collect();
            let probe = KeyEncoder::new(vec![column(&absent)]).unwrap();
            let passed = (0..absent.len())
                .filter(|&i| {
                    let mut scratch = Vec::new();
                    match &table {
                        KeyTable::Word(t) => t.filter.may_contain(mix_word(probe.word(i).unwrap())),
                        KeyTable::Bytes(t) => {
                            probe.encode(i, &mut scratch) && t.filter.may_contain(hash_bytes(&scratch))
                        }
                    }
                })
                .count();
            assert!(
                passed < absent.len() / 20,
                "{passed} of {} absent keys passed the filter",
                absent.len()
            );
            assert!(matches(&table, &probe, 0).is_empty());
        }
    }
}
