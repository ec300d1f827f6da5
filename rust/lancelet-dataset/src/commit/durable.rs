//! Data files reach the disk while the writer goes on.
//!
//! A commit must never publish a manifest that names a data file whose bytes are not on
//! disk yet: after a power loss the manifest could survive and the data not. Syncing each
//! file when it is closed puts the disk's whole latency on the writer's path, and for the
//! last file all of it after the encoding is done. Instead:
//!
//! - while a file is written, every [`EAGER_SYNC_BYTES`] written start a sync of what is
//!   written so far on a background thread (one at a time per file), so the disk works
//!   while the next pages are encoded and the final sync has little left to write;
//! - a closed file's final sync runs on a background thread too; [`Syncs`] holds them, and
//!   a commit waits for them just before it writes its manifest (see
//!   `lancelet_table::commit::commit_when`), after its transaction file is written and its
//!   manifest prepared.

use std::fs::File;
use std::io::{self, Write};
use std::thread::JoinHandle;

/// Bytes written to a data file between two background syncs.
pub(crate) const EAGER_SYNC_BYTES: u64 = 8 << 20;

/// A sync started in the background (or already done, when no thread could be started).
#[derive(Debug)]
pub(crate) enum SyncHandle {
    Running(JoinHandle<io::Result<()>>),
    Done(io::Result<()>),
}

impl SyncHandle {
    fn is_finished(&self) -> bool {
        match self {
            Self::Running(h) => h.is_finished(),
            Self::Done(_) => true,
        }
    }

    /// Waits for the sync; a panicked one is an I/O error.
    fn join(self) -> io::Result<()> {
        match self {
            Self::Running(h) => h
                .join()
                .unwrap_or_else(|_| Err(io::Error::other("a background sync of a data file panicked"))),
            Self::Done(res) => res,
        }
    }
}

/// Runs `sync` on a new thread, or right here if no thread can be started.
fn spawn(sync: impl FnOnce() -> io::Result<()> + Send + 'static) -> SyncHandle {
    let cell = std::sync::Arc::new(std::sync::Mutex::new(Some(sync)));
    let theirs = cell.clone();
    let started = std::thread::Builder::new().name("lancelet-sync".into()).spawn(move || {
        match theirs.lock().ok().and_then(|mut s| s.take()) {
            Some(sync) => sync(),
            None => Ok(()),
        }
    });
    match started {
        Ok(h) => SyncHandle::Running(h),
        Err(_) => {
            let sync = cell.lock().ok().and_then(|mut s| s.take());
            SyncHandle::Done(sync.map_or(Ok(()), |s| s()))
        }
    }
}

/// A data file being written, whose bytes are synced in the background as they accumulate.
#[derive(Debug)]
pub(crate) struct SyncingFile {
    file: File,
    unsynced: u64,
    running: Option<SyncHandle>,
}

impl SyncingFile {
    /// Wraps a file just created for writing.
    pub(crate) fn new(file: File) -> Self {
        Self {
            file,
            unsynced: 0,
            running: None,
        }
    }

    /// Starts a background sync of what is written, unless one is still running.
    fn kick(&mut self) -> io::Result<()> {
        if self.running.as_ref().is_some_and(|h| !h.is_finished()) {
            return Ok(());
        }
        if let Some(h) = self.running.take() {
            h.join()?;
        }
        let f = self.file.try_clone()?;
        self.running = Some(spawn(move || f.sync_data()));
        self.unsynced = 0;
        Ok(())
    }

    /// The file's size, and its final sync started in the background (after any sync
    /// still running); wait for it with [`Syncs::wait`].
    pub(crate) fn close(self) -> io::Result<(u64, SyncHandle)> {
        let size = self.file.metadata()?.len();
        let (file, running) = (self.file, self.running);
        let handle = spawn(move || {
            if let Some(h) = running {
                h.join()?;
            }
            file.sync_data()
        });
        Ok((size, handle))
    }
}

impl Write for SyncingFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.file.write(buf)?;
        self.unsynced += n as u64;
        if self.unsynced >= EAGER_SYNC_BYTES {
            self.kick()?;
        }
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file.flush()
    }
}

/// Final syncs left running at once: a write of many small files waits for the oldest
/// before it starts more, so it never holds thousands of threads.
const MAX_RUNNING_SYNCS: usize = 8;

/// The final syncs of closed data files, still running.
#[derive(Debug, Default)]
pub(crate) struct Syncs {
    pending: std::collections::VecDeque<(String, SyncHandle)>,
    /// The first sync that failed among those already waited for.
    failed: Option<(String, io::Error)>,
}

impl Syncs {
    /// Adds the sync of the file `name` (first waiting for the oldest when many run).
    pub(crate) fn push(&mut self, name: String, handle: SyncHandle) {
        while self.pending.len() >= MAX_RUNNING_SYNCS {
            let Some((old, h)) = self.pending.pop_front() else {
                break;
            };
            if let Err(e) = h.join() {
                self.failed.get_or_insert((old, e));
            }
        }
        self.pending.push_back((name, handle));
    }

    /// Moves `other`'s syncs (and its failure, if any) into these.
    pub(crate) fn append(&mut self, other: &mut Syncs) {
        if let Some(f) = other.failed.take() {
            self.failed.get_or_insert(f);
        }
        self.pending.append(&mut other.pending);
    }

    /// Waits for every sync; the first failure (with its file's name) is returned after
    /// all have ended.
    pub(crate) fn wait(&mut self) -> std::result::Result<(), (String, io::Error)> {
        let mut first = self.failed.take();
        for (name, h) in self.pending.drain(..) {
            if let Err(e) = h.join() {
                first.get_or_insert((name, e));
            }
        }
        first.map_or(Ok(()), Err)
    }
}

impl Drop for Syncs {
    fn drop(&mut self) {
        // Never leave a sync running unobserved past the writer that started it.
        let _ = self.wait();
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests: a failed unwrap is a failed test")]
    use super::*;

    #[test]
    fn bytes_written_through_the_wrapper_all_arrive() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        let mut w = SyncingFile::new(File::create(&path).unwrap());
        let chunk = vec![7u8; 3 << 20];
        for _ in 0..7 {
            w.write_all(&chunk).unwrap();
        }
        let (size, h) = w.close().unwrap();
        let mut syncs = Syncs::default();
        syncs.push("f".into(), h);
        syncs.wait().unwrap();
        assert_eq!(size, 7 * (3 << 20));
        assert_eq!(std::fs::metadata(&path).unwrap().len(), size);
    }

    #[test]
    fn many_small_files_keep_few_syncs_running() {
        let dir = tempfile::tempdir().unwrap();
        let mut syncs = Syncs::default();
        for i in 0..50 {
            let mut w = SyncingFile::new(File::create(dir.path().join(format!("f{i}"))).unwrap());
            w.write_all(b"rows").unwrap();
            let (size, h) = w.close().unwrap();
            assert_eq!(size, 4);
            syncs.push(format!("f{i}"), h);
            assert!(syncs.pending.len() <= MAX_RUNNING_SYNCS);
        }
        syncs.wait().unwrap();
        assert!(syncs.pending.is_empty());
    }
}
