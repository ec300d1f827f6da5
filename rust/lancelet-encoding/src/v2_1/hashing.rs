//! A fast hasher for the encoders' own hash tables (distinct values, FSST symbol gains).
//!
//! The keys are the data being written, so flooding resistance buys nothing, while the
//! standard SipHash costs several instructions per byte: on long strings it dominated
//! the dictionary check of a page. This hasher mixes eight bytes per multiply (keys that
//! collide are told apart by the table's equality check, so only speed depends on it).

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// Multiplier of the mix (an odd constant with well spread bits).
const K: u64 = 0xF135_7AEA_2E62_A9C5;

/// The hasher (see the module documentation).
#[derive(Default, Clone, Copy)]
pub struct FastHasher {
    h: u64,
}

impl FastHasher {
    #[inline(always)]
    fn mix(&mut self, w: u64) {
        self.h = (self.h.rotate_left(26) ^ w).wrapping_mul(K);
    }

    #[inline(always)]
    fn words(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let mut a = [0u8; 8];
            a.copy_from_slice(c);
            self.mix(u64::from_le_bytes(a));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut a = [0u8; 8];
            a[..rest.len()].copy_from_slice(rest);
            self.mix(u64::from_le_bytes(a));
        }
    }
}

impl Hasher for FastHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        self.words(bytes);
    }

    #[inline]
    fn write_u8(&mut self, i: u8) {
        self.mix(u64::from(i));
    }

    #[inline]
    fn write_u16(&mut self, i: u16) {
        self.mix(u64::from(i));
    }

    #[inline]
    fn write_u32(&mut self, i: u32) {
        self.mix(u64::from(i));
    }

    #[inline]
    fn write_u64(&mut self, i: u64) {
        self.mix(i);
    }

    #[inline]
    fn write_usize(&mut self, i: usize) {
        self.mix(i as u64);
    }

    #[inline]
    fn finish(&self) -> u64 {
        // A final avalanche so that the low bits (the table's bucket) depend on every input bit.
        let mut x = self.h;
        x ^= x >> 29;
        x = x.wrapping_mul(0xBF58_476D_1CE4_E5B9);
        x ^ (x >> 32)
    }
}

/// A `HashMap` with [`FastHasher`].
pub type FastMap<K, V> = HashMap<K, V, BuildHasherDefault<FastHasher>>;

/// An empty [`FastMap`] with room for `n` entries.
pub fn fast_map<K, V>(n: usize) -> FastMap<K, V> {
    HashMap::with_capacity_and_hasher(n, BuildHasherDefault::default())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_keys_hash_alike_and_distinct_keys_stay_distinct() {
        let mut m: FastMap<&[u8], usize> = fast_map(4);
        let long_a = [b'a'; 100];
        let mut long_b = long_a;
        long_b[50] = b'b';
        for (i, k) in [&b"x"[..], b"", &long_a, &long_b, b"x"].iter().enumerate() {
            m.entry(k).or_insert(i);
        }
        assert_eq!(m.len(), 4);
        assert_eq!(m[&long_b[..]], 3);
        assert_eq!(m[&b"x"[..]], 0);
    }
}
