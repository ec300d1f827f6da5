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

    /// Row `i`'s key as a word (one key column of at most eight bytes), `None` when null.
    #[inline]
    pub(crate) fn word(&self, i: usize) -> Option<u64> {
        if self.nulls.as_ref().is_some_and(|n| n.is_null(i)) {
            return None;
        }
        match self.columns.first() {
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
        let Some(&head) = self.heads.get(&hash_bytes(key)) else {
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

/// A hasher for one-word keys: a multiply and a fold (the table compares the keys).
#[derive(Default, Clone, Copy)]
pub(super) struct WordHasher(u64);

impl Hasher for WordHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = (self.0 << 8) ^ u64::from(*b);
        }
    }
    fn write_u64(&mut self, v: u64) {
        let h = v.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        self.0 = h ^ (h >> 32);
    }
}

/// Keys of one column of at most eight bytes (integers, dates, timestamps...), held as
/// words: no encoding to bytes, no arena.
#[derive(Default)]
pub(crate) struct WordTable {
    heads: HashMap<u64, u32, BuildHasherDefault<WordHasher>>,
    keys: Vec<u64>,
    next: Vec<u32>,
    ordinals: Vec<u32>,
}

impl WordTable {
    fn insert(&mut self, key: u64, ordinal: u32) {
        let entry = u32::try_from(self.ordinals.len()).unwrap_or(END);
        self.keys.push(key);
        self.ordinals.push(ordinal);
        let prev = self.heads.insert(key, entry).unwrap_or(END);
        self.next.push(prev);
    }

    #[inline]
    fn for_each_match(&self, key: u64, mut f: impl FnMut(u32)) {
        let Some(&head) = self.heads.get(&key) else {
            return;
        };
        let mut e = head;
        while e != END {
            let i = e as usize;
            if self.keys[i] == key {
                f(self.ordinals[i]);
            }
            e = self.next[i];
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
            assert_eq!(matches(&table, &enc, 2), Vec::<u32>::new());
            let mut probe: Vec<ArrayRef> = vec![Arc::new(Int64Array::from(vec![2]))];
            if columns.len() == 2 {
                probe.push(Arc::new(StringArray::from(vec!["a"])));
            }
            let want: Vec<u32> = if columns.len() == 2 { vec![] } else { vec![1] };
            assert_eq!(matches(&table, &KeyEncoder::new(probe).unwrap(), 0), want);
        }
    }
}
