//! Every commit of the dataset crate goes through [`commit_with_hooks`]: the caller's
//! [`CommitLock`] is held around the manifest write, and after the commit the dataset's
//! automatic cleanup (pylance's `lance.auto_cleanup.*` config keys) runs. Writes, deletes,
//! updates, merge_insert, index builds, config changes, compaction, restores, user
//! operations and Spark's job commits all land here, so neither rule can be skipped by a
//! caller that forgets it.
//!
//! - [`intent`]: what a distributed job's commit means (create-or-append, append at V).
//! - [`retry`]: retrying operations that lost a race to a conflicting commit.
//! - [`durable`]: when data files are synced before the manifest names them.
//! - [`user_ops`]: operations planned elsewhere (pylance's `LanceOperation`s), committed as given.

pub(crate) mod durable;
pub mod intent;
pub mod retry;
pub mod user_ops;

use std::sync::Arc;
use std::time::Duration;

use lancelet_io::Storage;
use lancelet_table::commit::{commit_when, CommitOptions};
use lancelet_table::naming::ManifestNaming;
use lancelet_table::pb;
use lancelet_table::versions::versions_after;

use crate::maintain::cleanup::CleanupPolicy;
use crate::{Dataset, Error, Result};

/// An error of a caller's hook, kept whole so the caller gets its own error back.
pub type HookError = Box<dyn std::error::Error + Send + Sync>;

/// A lock the caller holds around commits (pylance's `commit_lock`): coordinates writers
/// beyond what the atomic manifest write already guarantees (commits are safe without one).
pub trait CommitLock: Send + Sync + std::fmt::Debug {
    /// Takes the lock before committing `version` (the latest version + 1 when called).
    /// An error stops the commit: nothing is published, and the data files the operation
    /// wrote are removed.
    fn lock(&self, version: u64) -> std::result::Result<Box<dyn CommitGuard>, HookError>;
}

/// A held [`CommitLock`].
pub trait CommitGuard: Send {
    /// Releases the lock after the commit; `failure` is the commit's error when it failed.
    /// An error here is the operation's error even though the commit landed.
    fn release(self: Box<Self>, failure: Option<&Error>) -> std::result::Result<(), HookError>;
}

/// The config keys of automatic cleanup (pylance's).
pub(crate) const AUTO_CLEANUP_INTERVAL: &str = "lance.auto_cleanup.interval";
/// A duration such as `"3600s"`, `"14days"` or `"1h 30m"`.
pub(crate) const AUTO_CLEANUP_OLDER_THAN: &str = "lance.auto_cleanup.older_than";
/// Always keep this many newest versions.
pub(crate) const AUTO_CLEANUP_RETAIN_VERSIONS: &str = "lance.auto_cleanup.retain_versions";

/// Commits `txn` on `base` (see [`lancelet_table::commit::commit_when`]) inside `lock`.
pub(crate) async fn commit_with_hooks(
    store: &dyn Storage,
    base: Option<(&pb::Manifest, ManifestNaming)>,
    txn: &pb::Transaction,
    opts: &CommitOptions,
    lock: Option<&Arc<dyn CommitLock>>,
    ready: impl FnOnce() -> lancelet_table::Result<()> + Send,
) -> Result<(pb::Manifest, ManifestNaming)> {
    let guard = match lock {
        None => None,
        Some(lock) => {
            let read = base.map(|(m, _)| m.version).unwrap_or(0);
            let naming = base.map(|(_, n)| n).unwrap_or(opts.naming);
            let latest = versions_after(store, read, naming)
                .await?
                .last()
                .map_or(read, |e| e.version);
            Some(lock.lock(latest + 1).map_err(Error::CommitLock)?)
        }
    };
    let out = commit_when(store, base, txn, opts, ready).await.map_err(Error::from);
    if let Some(guard) = guard {
        let released = guard.release(out.as_ref().err());
        if out.is_ok() {
            released.map_err(Error::CommitLock)?;
        }
    }
    out
}

/// The cleanup that `config` asks for after a commit of version `version`, or `None`.
/// `Err` names the config value that cannot be read.
pub(crate) fn auto_cleanup_policy(
    config: &std::collections::HashMap<String, String>,
    version: u64,
) -> std::result::Result<Option<CleanupPolicy>, String> {
    let Some(raw) = config.get(AUTO_CLEANUP_INTERVAL) else {
        return Ok(None);
    };
    let interval: u64 = raw
        .parse()
        .map_err(|_| format!("cannot read {AUTO_CLEANUP_INTERVAL}={raw:?} as a non-negative integer"))?;
    if interval != 0 && !version.is_multiple_of(interval) {
        return Ok(None);
    }
    let older_than = config
        .get(AUTO_CLEANUP_OLDER_THAN)
        .map(|s| parse_duration(s).ok_or_else(|| format!("cannot read {AUTO_CLEANUP_OLDER_THAN}={s:?} as a duration")))
        .transpose()?;
    let retain_versions = match config.get(AUTO_CLEANUP_RETAIN_VERSIONS) {
        None => None,
        Some(s) => match s.parse::<u64>() {
            Ok(0) => None,
            Ok(n) => Some(n),
            Err(_) => {
                return Err(format!(
                    "cannot read {AUTO_CLEANUP_RETAIN_VERSIONS}={s:?} as an integer"
                ))
            }
        },
    };
    // The new version and the one it was committed on stay (the writer's own), as in pylance.
    let previous = version.saturating_sub(1);
    Ok(Some(CleanupPolicy {
        older_than,
        retain_versions,
        versions: Some((1..previous).collect()),
        delete_unverified: false,
        error_if_tagged_old_versions: true,
        ..CleanupPolicy::default()
    }))
}

/// A duration as pylance stores it: numbers with units, as in `"3600s"`, `"14days"`,
/// `"1h 30m"` or `"500ms"` (the `humantime` notation: ns, us, ms, s, m, h, d, w, M, y and
/// their long names). `None` when it cannot be read.
pub(crate) fn parse_duration(text: &str) -> Option<Duration> {
    let mut rest = text.trim();
    if rest.is_empty() {
        return None;
    }
    let mut total = 0f64;
    while !rest.is_empty() {
        let digits = rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len());
        let n: u64 = rest[..digits].parse().ok()?;
        rest = rest[digits..].trim_start();
        let letters = rest.find(|c: char| !c.is_ascii_alphabetic()).unwrap_or(rest.len());
        let seconds = unit_seconds(&rest[..letters])?;
        total += n as f64 * seconds;
        rest = rest[letters..].trim_start();
    }
    Duration::try_from_secs_f64(total).ok()
}

fn unit_seconds(unit: &str) -> Option<f64> {
    Some(match unit {
        "nsec" | "ns" => 1e-9,
        "usec" | "us" => 1e-6,
        "msec" | "ms" => 1e-3,
        "seconds" | "second" | "sec" | "s" => 1.0,
        "minutes" | "minute" | "min" | "m" => 60.0,
        "hours" | "hour" | "hr" | "h" => 3600.0,
        "days" | "day" | "d" => 86_400.0,
        "weeks" | "week" | "w" => 604_800.0,
        "months" | "month" | "M" => 2_630_016.0,
        "years" | "year" | "y" => 31_557_600.0,
        _ => return None,
    })
}

impl Dataset {
    /// Runs the automatic cleanup this version's config asks for, as every commit does
    /// right after landing. A problem (a bad config value, a tagged version in the way) is
    /// logged as a warning and the commit stands, as in pylance.
    pub(crate) async fn after_commit(self) -> Self {
        log::info!(target: "lancelet::commit", "committed version {} of {}", self.version(), self.store().root_display());
        if let Err(message) = self.auto_cleanup().await {
            log::warn!(target: "lancelet", "Auto cleanup failed after a successful commit: {message}");
        }
        self
    }

    async fn auto_cleanup(&self) -> std::result::Result<(), String> {
        let Some(policy) = auto_cleanup_policy(&self.manifest().config, self.version())? else {
            return Ok(());
        };
        if policy.versions.as_ref().is_some_and(|v| v.is_empty()) {
            return Ok(());
        }
        let latest = self.checkout(None).await.map_err(|e| e.to_string())?;
        latest.cleanup_old_versions(&policy).await.map_err(|e| e.to_string())?;
        Ok(())
    }

    /// This dataset (and every dataset derived from it: checkouts, the results of its
    /// commits) commits inside `lock`; `None` removes it.
    pub fn set_commit_lock(&self, lock: Option<Arc<dyn CommitLock>>) {
        if let Ok(mut slot) = self.caches.commit_lock.lock() {
            *slot = lock;
        }
    }

    /// The lock this dataset commits inside, if any.
    pub fn commit_lock(&self) -> Option<Arc<dyn CommitLock>> {
        self.caches.commit_lock.lock().ok().and_then(|s| s.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_as_pylance_writes_them() {
        let secs = |s: &str| parse_duration(s).map(|d| d.as_secs_f64());
        assert_eq!(secs("0s"), Some(0.0));
        assert_eq!(secs("3600s"), Some(3600.0));
        assert_eq!(secs("14days"), Some(14.0 * 86_400.0));
        assert_eq!(secs("1h 30m"), Some(5400.0));
        assert_eq!(secs("2weeks1d"), Some(15.0 * 86_400.0));
        assert_eq!(secs("500ms"), Some(0.5));
        for bad in ["", "zz", "5", "5 parsecs", "s", "-1s", "1.5h"] {
            assert_eq!(parse_duration(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn the_policy_follows_the_interval_and_keeps_the_last_two_versions() {
        let config = |pairs: &[(&str, &str)]| pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        let every3 = config(&[(AUTO_CLEANUP_INTERVAL, "3"), (AUTO_CLEANUP_OLDER_THAN, "0s")]);
        assert!(auto_cleanup_policy(&every3, 4).unwrap().is_none());
        let p = auto_cleanup_policy(&every3, 6).unwrap().unwrap();
        assert_eq!(p.versions, Some(vec![1, 2, 3, 4]));
        assert_eq!(p.older_than, Some(Duration::ZERO));
        assert!(auto_cleanup_policy(&config(&[]), 6).unwrap().is_none());
        let retain = config(&[(AUTO_CLEANUP_INTERVAL, "0"), (AUTO_CLEANUP_RETAIN_VERSIONS, "3")]);
        assert_eq!(
            auto_cleanup_policy(&retain, 2).unwrap().unwrap().retain_versions,
            Some(3)
        );
        assert!(auto_cleanup_policy(&config(&[(AUTO_CLEANUP_INTERVAL, "abc")]), 2).is_err());
        let bad_age = config(&[(AUTO_CLEANUP_INTERVAL, "1"), (AUTO_CLEANUP_OLDER_THAN, "zz")]);
        assert!(auto_cleanup_policy(&bad_age, 2).is_err());
    }
}
