//! Running an operation again when a concurrent commit conflicts with it.
//!
//! Delete, update and merge-insert read a version, compute their change and commit it.
//! When a concurrent commit changed what they change, the commit fails with a conflict of
//! kind [`ConflictKind::Retryable`]: [`Dataset::execute_with_retry`] then reads the newest
//! version and runs the whole operation again, after a short randomized pause that grows
//! with each attempt, up to [`RetryPolicy::max_retries`] times and, when set, until
//! [`RetryPolicy::timeout`]. A conflict with a whole-table replacement
//! ([`ConflictKind::TableReplaced`]: an overwrite, restore or clone) is never retried:
//! running the operation on the table that replaced the one it was meant for would be a
//! different operation (as in pylance).
//!
//! ```no_run
//! # async fn demo(ds: lancelet_dataset::Dataset) -> lancelet_dataset::Result<()> {
//! use lancelet_dataset::commit::retry::RetryPolicy;
//! let (ds, res) = ds
//!     .execute_with_retry(&RetryPolicy::default(), |ds| async move { ds.delete("x > 3").await })
//!     .await?;
//! # Ok(()) }
//! ```

use std::future::Future;
use std::time::{Duration, Instant};

use lancelet_table::ConflictKind;

use crate::{Dataset, Error, Result};

/// How often, and for how long, an operation is run again after a retryable conflict.
#[derive(Debug, Clone)]
pub struct RetryPolicy {
    /// Runs after the first (pylance's `conflict_retries`, default 10).
    pub max_retries: u32,
    /// No new attempt starts once this much time has passed since the first (`None`: no
    /// limit but `max_retries`).
    pub timeout: Option<Duration>,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_retries: 10,
            timeout: None,
        }
    }
}

impl RetryPolicy {
    /// A policy of `max_retries` retries and an optional time limit.
    pub fn new(max_retries: u32, timeout: Option<Duration>) -> Self {
        Self { max_retries, timeout }
    }
}

/// The kind of commit conflict `e` is, or `None` when it is not a conflict.
pub fn conflict_kind(e: &Error) -> Option<ConflictKind> {
    match e {
        Error::Table(lancelet_table::Error::CommitConflict { kind, .. }) => Some(*kind),
        _ => None,
    }
}

/// Whether `e` is a conflict that running the operation again on the newest version may
/// resolve.
pub(crate) fn is_retryable(e: &Error) -> bool {
    conflict_kind(e) == Some(ConflictKind::Retryable)
}

/// The pause before retry `attempt` (1-based): full jitter under a cap that doubles from
/// 10 ms up to 500 ms, so writers that conflicted together spread out.
pub fn backoff(attempt: u32) -> Duration {
    let cap_ms = 10u64.saturating_mul(1u64 << attempt.saturating_sub(1).min(6)).min(500);
    let draw = uuid::Uuid::new_v4().as_u128() % u128::from(cap_ms * 1000);
    Duration::from_micros(u64::try_from(draw).unwrap_or(0))
}

impl Dataset {
    /// Runs `op` on this version; while it fails with a retryable conflict (and `policy`
    /// allows), pauses (see [`backoff`]) and runs it again on the newest version. Any
    /// other error, a table replacement, or the last attempt's conflict is returned.
    pub async fn execute_with_retry<T, F, Fut>(&self, policy: &RetryPolicy, mut op: F) -> Result<T>
    where
        F: FnMut(Dataset) -> Fut,
        Fut: Future<Output = Result<T>>,
    {
        let started = Instant::now();
        let mut ds = self.clone();
        let mut attempt: u32 = 0;
        loop {
            match op(ds.clone()).await {
                Ok(v) => return Ok(v),
                Err(e) => {
                    let in_time = policy.timeout.is_none_or(|t| started.elapsed() < t);
                    if !is_retryable(&e) || attempt >= policy.max_retries || !in_time {
                        return Err(e);
                    }
                    attempt += 1;
                    tokio::time::sleep(backoff(attempt)).await;
                    ds = ds.checkout(None).await?;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_stays_under_its_cap() {
        for attempt in 1..20 {
            let cap = Duration::from_millis(10u64 << (attempt - 1).min(6)).min(Duration::from_millis(500));
            assert!(backoff(attempt) < cap, "{attempt}");
        }
    }

    #[test]
    fn only_retryable_conflicts_are_retried() {
        let conflict = |kind| {
            Error::Table(lancelet_table::Error::CommitConflict {
                path: "p".into(),
                message: "m".into(),
                kind,
            })
        };
        assert!(is_retryable(&conflict(ConflictKind::Retryable)));
        assert!(!is_retryable(&conflict(ConflictKind::TableReplaced)));
        assert!(!is_retryable(&Error::InvalidArgument("x".into())));
    }
}
