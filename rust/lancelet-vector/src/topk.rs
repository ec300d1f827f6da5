//! [`TopK`]: the k best `(distance, row address)` pairs, ordered as pylance orders results
//! (distance ascending by `f32::total_cmp`, ties by smaller row address).

use std::cmp::Ordering;
use std::collections::BinaryHeap;

#[derive(Debug, Clone, Copy)]
struct Entry(f32, u64);

impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Entry {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.total_cmp(&other.0).then(self.1.cmp(&other.1))
    }
}

/// Keeps the `k` smallest `(distance, row address)` pairs seen.
#[derive(Debug, Clone)]
pub struct TopK {
    k: usize,
    /// Max-heap: the worst kept entry is on top.
    heap: BinaryHeap<Entry>,
}

impl TopK {
    /// An empty collector of at most `k` entries.
    pub fn new(k: usize) -> Self {
        Self {
            k,
            heap: BinaryHeap::with_capacity(k.min(1 << 16) + 1),
        }
    }

    /// Offers one candidate.
    pub fn push(&mut self, distance: f32, row_id: u64) {
        if self.k == 0 {
            return;
        }
        let e = Entry(distance, row_id);
        if self.heap.len() < self.k {
            self.heap.push(e);
        } else if let Some(mut top) = self.heap.peek_mut() {
            if e < *top {
                *top = e;
            }
        }
    }

    /// The distance a candidate must beat once `k` entries are kept.
    pub fn threshold(&self) -> Option<f32> {
        (self.heap.len() == self.k)
            .then(|| self.heap.peek().map(|e| e.0))
            .flatten()
    }

    /// Number of entries kept.
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    /// Whether nothing is kept.
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }

    /// The kept entries, best first.
    pub fn into_sorted_vec(self) -> Vec<(f32, u64)> {
        self.heap.into_sorted_vec().into_iter().map(|e| (e.0, e.1)).collect()
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    proptest! {
        #[test]
        fn matches_full_sort(items in prop::collection::vec((0u8..20, 0u64..50), 0..200), k in 0usize..30) {
            let mut t = TopK::new(k);
            items.iter().for_each(|&(d, r)| t.push(f32::from(d), r));
            let mut all: Vec<(f32, u64)> = items.iter().map(|&(d, r)| (f32::from(d), r)).collect();
            all.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
            all.truncate(k);
            prop_assert_eq!(t.into_sorted_vec(), all);
        }
    }

    #[test]
    fn ties_go_to_smaller_row() {
        let mut t = TopK::new(2);
        t.push(1.0, 9);
        t.push(1.0, 3);
        t.push(1.0, 5);
        t.push(f32::NAN, 0);
        assert_eq!(t.into_sorted_vec(), vec![(1.0, 3), (1.0, 5)]);
    }
}
