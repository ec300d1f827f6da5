//! Progress of an index build, as pylance's `lance.progress.IndexProgress` events: each stage
//! reports `start`, then `progress` as work completes, then `complete`.

use std::sync::Arc;

/// One progress event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexProgress {
    /// `start`, `progress` or `complete`.
    pub event: &'static str,
    /// The stage (`tokenize_docs`, `write_metadata`, ...).
    pub stage: &'static str,
    /// Work done so far in the stage.
    pub completed: u64,
    /// The stage's work in all, when known.
    pub total: Option<u64>,
    /// What `completed` and `total` count (`rows`, `files`).
    pub unit: &'static str,
}

/// Where a build reports its progress.
#[derive(Clone)]
pub struct ProgressSink(Arc<dyn Fn(&IndexProgress) + Send + Sync>);

impl std::fmt::Debug for ProgressSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ProgressSink")
    }
}

impl ProgressSink {
    /// A sink calling `f` with every event.
    pub fn new(f: impl Fn(&IndexProgress) + Send + Sync + 'static) -> Self {
        Self(Arc::new(f))
    }

    /// One stage of a build: reports `start` now.
    pub fn stage(&self, stage: &'static str, total: Option<u64>, unit: &'static str) -> Stage {
        let s = Stage {
            sink: self.clone(),
            stage,
            total,
            unit,
            completed: 0,
        };
        s.emit("start");
        s
    }
}

/// A stage in progress (see [`ProgressSink::stage`]).
pub struct Stage {
    sink: ProgressSink,
    stage: &'static str,
    total: Option<u64>,
    unit: &'static str,
    completed: u64,
}

impl Stage {
    fn emit(&self, event: &'static str) {
        (self.sink.0)(&IndexProgress {
            event,
            stage: self.stage,
            completed: self.completed,
            total: self.total,
            unit: self.unit,
        });
    }

    /// `n` more units done.
    pub(crate) fn advance(&mut self, n: u64) {
        self.completed += n;
        self.emit("progress");
    }

    /// Reports `complete`.
    pub fn finish(self) {
        self.emit("complete");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    #[test]
    fn a_stage_reports_start_progress_and_complete() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let log = seen.clone();
        let sink = ProgressSink::new(move |e| log.lock().map(|mut v| v.push(e.clone())).unwrap_or(()));
        let mut s = sink.stage("tokenize_docs", Some(10), "rows");
        s.advance(4);
        s.advance(6);
        s.finish();
        let seen = seen.lock().map(|v| v.clone()).unwrap_or_default();
        let got: Vec<(&str, u64)> = seen.iter().map(|e| (e.event, e.completed)).collect();
        assert_eq!(got, [("start", 0), ("progress", 4), ("progress", 10), ("complete", 10)]);
        assert!(seen
            .iter()
            .all(|e| e.stage == "tokenize_docs" && e.total == Some(10) && e.unit == "rows"));
    }
}
