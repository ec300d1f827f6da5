//! Applying `offset` and `limit` to the outputs of a scan's tasks, taken in order, and
//! cutting them to batch size (exactly, across tasks, for `strict_batch_size`).

use arrow_array::RecordBatch;

/// Applies offset and limit to task outputs taken in order, and cuts them to batch size.
#[derive(Debug, Clone)]
pub struct Limiter {
    pub(super) skip: u64,
    pub(super) remaining: Option<u64>,
    pub(super) batch_size: usize,
    /// Batches of exactly `batch_size` rows: rows of several tasks are joined.
    pub(super) strict: bool,
    /// Rows held back (fewer than `batch_size`) until more come or [`Limiter::finish`].
    pub(super) held: Vec<RecordBatch>,
}

impl Limiter {
    /// Whether no more rows are wanted.
    pub fn done(&self) -> bool {
        self.remaining == Some(0)
    }

    /// The output batches of one task's rows.
    pub fn push(&mut self, batch: RecordBatch) -> crate::Result<Vec<RecordBatch>> {
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
            let len = if self.strict {
                (end - at).min(self.batch_size - self.held_rows())
            } else {
                (end - at).min(self.batch_size)
            };
            let part = batch.slice(at, len);
            at += len;
            if !self.strict {
                out.push(part);
                continue;
            }
            self.held.push(part);
            if self.held_rows() == self.batch_size {
                out.extend(self.finish()?);
            }
        }
        Ok(out)
    }

    fn held_rows(&self) -> usize {
        self.held.iter().map(RecordBatch::num_rows).sum()
    }

    /// The rows held back, as one batch (strict batch sizes: the last, shorter batch).
    pub fn finish(&mut self) -> crate::Result<Option<RecordBatch>> {
        let held = std::mem::take(&mut self.held);
        Ok(match held.len() {
            0 => None,
            1 => held.into_iter().next(),
            _ => Some(arrow_select::concat::concat_batches(&held[0].schema(), &held)?),
        })
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
            strict in proptest::bool::ANY,
        ) {
            let mut l = Limiter { skip, remaining: limit, batch_size, strict, held: Vec::new() };
            let mut got = Vec::new();
            let mut sizes_out = Vec::new();
            let mut start = 0;
            let mut out = Vec::new();
            for n in &sizes {
                out.extend(l.push(batch(start, *n)).map_err(|e| proptest::test_runner::TestCaseError::fail(e.to_string()))?);
                start += n;
            }
            out.extend(l.finish().map_err(|e| proptest::test_runner::TestCaseError::fail(e.to_string()))?);
            for b in &out {
                proptest::prop_assert!(b.num_rows() <= batch_size && b.num_rows() > 0);
                sizes_out.push(b.num_rows());
                let col = b.column(0).as_primitive::<arrow_array::types::Int64Type>();
                got.extend(col.values().iter().copied());
            }
            if strict {
                // Every batch but the last is full.
                if let Some((_, full)) = sizes_out.split_last() {
                    proptest::prop_assert!(full.iter().all(|&n| n == batch_size), "{:?}", sizes_out);
                }
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
