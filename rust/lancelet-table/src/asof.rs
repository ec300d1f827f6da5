//! "As of" a time: the newest version committed before a timestamp (pylance's
//! `lance.dataset(uri, asof=...)`).
//!
//! pylance 14 compares in whole microseconds: a version counts when its commit time, as
//! its `versions()` shows it, is strictly before the cutoff. That shown time is the
//! manifest's nanosecond count passed through a double (which moves it by up to a few
//! hundred nanoseconds at today's epochs) and then truncated to microseconds;
//! [`shown_micros`] computes the same number, so both libraries open the same version for
//! the same cutoff, including a cutoff equal to a version's own shown time (that version
//! is not before it).
//!
//! Versions are read newest first and the search stops at the first one before the
//! cutoff, so a recent cutoff reads one or two manifests however long the history is.
//! Commit clocks need not be monotonic: the answer is the highest version number before
//! the cutoff.
//!
//! ```no_run
//! # async fn demo(store: &dyn lancelet_io::Storage) -> lancelet_table::Result<()> {
//! // The version a reader would have opened just before 2024-01-01T00:00:00Z.
//! let v = lancelet_table::asof::version_asof(store, 1_704_067_200_000_000).await?;
//! # Ok(()) }
//! ```

use crate::versions::{list_versions, read_entry};
use crate::Result;
use lancelet_io::Storage;

/// A commit time `(seconds, nanoseconds)` since the Unix epoch in whole microseconds, as
/// pylance 14 shows it: the nanosecond count as a double, split into seconds and a
/// remainder in double arithmetic, the remainder truncated to microseconds.
pub fn shown_micros(at: (i64, i32)) -> i64 {
    let total = (i128::from(at.0) * 1_000_000_000 + i128::from(at.1)) as f64;
    let rest = total % 1e9;
    let seconds = ((total - rest) / 1e9).round();
    let micros = ((rest - rest % 1e3) / 1e3).round();
    seconds as i64 * 1_000_000 + micros as i64
}

/// The newest version of the dataset in `store` committed before `cutoff_micros`
/// (microseconds since the Unix epoch; see [`shown_micros`]), or `None` when no version
/// is (or there is none). A manifest without a timestamp counts as committed at the epoch.
pub async fn version_asof(store: &dyn Storage, cutoff_micros: i64) -> Result<Option<u64>> {
    for entry in list_versions(store).await?.iter().rev() {
        let m = read_entry(store, entry).await?;
        let at = m.timestamp.as_ref().map_or((0, 0), |t| (t.seconds, t.nanos));
        if shown_micros(at) < cutoff_micros {
            return Ok(Some(entry.version));
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::shown_micros;

    #[test]
    fn shown_times_go_through_a_double_as_in_pylance() {
        // Observed from pylance 14: 1795618137.692065966 shows as .692066, while
        // .640228300 shows as .640228.
        assert_eq!(shown_micros((1_795_618_137, 692_065_966)), 1_795_618_137_692_066);
        assert_eq!(shown_micros((1_795_618_137, 640_228_300)), 1_795_618_137_640_228);
        assert_eq!(shown_micros((0, 0)), 0);
        assert_eq!(shown_micros((1, 999_999_999)), 1_999_999);
    }
}
