//! Applying `offset` and `limit` to the outputs of a scan's tasks, taken in order.

use arrow_array::RecordBatch;

/// Applies offset and limit to task outputs taken in order, and cuts them to batch size.
#[derive(Debug, Clone)]
pub struct Limiter {
    pub(super) skip: u64,
    pub(super) remaining: Option<u64>,
    pub(super) batch_size: usize,
}

impl Limiter {
    /// Whether no more rows are wanted.
    pub fn done(&self) -> bool {
        self.remaining == Some(0)
    }

    /// The output batches of one task's rows.
    pub fn push(&mut self, batch: RecordBatch) -> Vec<RecordBatch> {
        let mut start = 0usize;
        let n = batch.num_rows();
        if self.skip > 0 {
            let s = (self.skip as usize).min(n);
            self.skip -= s as u64;
            start = s;
        }
        let mut end = n;
        if let Some(rem) = self.remaining.as_mut() {
            let take = ((n - start) as u64).min(*rem);
            *rem -= take;
            end = start + take as usize;
        }
        let mut out = Vec::new();
        let mut at = start;
        while at < end {
            let len = (end - at).min(self.batch_size);
            out.push(batch.slice(at, len));
            at += len;
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::cast::AsArray;
    use arrow_array::{ArrayRef, Int64Array};
    use arrow_schema::Schema;

    use super::*;

    fn batch(start: i64, n: i64) -> RecordBatch {
        let a: ArrayRef = Arc::new(Int64Array::from((start..start + n).collect::<Vec<_>>()));
        RecordBatch::try_from_iter([("a", a)]).unwrap_or_else(|_| RecordBatch::new_empty(Arc::new(Schema::empty())))
    }

    proptest::proptest! {
        #[test]
        fn limiter_applies_offset_limit_and_batch_size(
            sizes in proptest::collection::vec(0i64..50, 0..8),
            skip in 0u64..120,
            limit in proptest::option::of(0u64..120),
            batch_size in 1usize..20,
        ) {
            let mut l = Limiter { skip, remaining: limit, batch_size };
            let mut got = Vec::new();
            let mut start = 0;
            for n in &sizes {
                for b in l.push(batch(start, *n)) {
                    proptest::prop_assert!(b.num_rows() <= batch_size && b.num_rows() > 0);
                    let col = b.column(0).as_primitive::<arrow_array::types::Int64Type>();
                    got.extend(col.values().iter().copied());
                }
                start += n;
            }
            let total: i64 = sizes.iter().sum();
            let want: Vec<i64> = (0..total)
                .skip(skip as usize)
                .take(limit.map(|l| l as usize).unwrap_or(usize::MAX))
                .collect();
            proptest::prop_assert_eq!(got, want);
        }
    }
}
