//! Local disk: [`LocalFile`] (positioned reads of one file) and [`LocalStore`] (a dataset
//! directory).
//!
//! [`LocalStore::put_if_absent`] creates a file with a hard link from a fully written
//! temporary file: the name appears atomically, with its whole content, and only if no file
//! of that name exists, so two writers can never both create the same manifest.

use std::io::Write;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;

use arrow_buffer::{Buffer, MutableBuffer};
use bytes::Bytes;
use futures::future::BoxFuture;
use futures::FutureExt;

use crate::error::{Error, Result};
use crate::read::ReadAt;
use crate::storage::{FileMeta, Storage};

/// A file on local disk, read with positioned reads.
#[derive(Debug)]
pub struct LocalFile {
    path: String,
    file: Arc<std::fs::File>,
    size: u64,
}

impl LocalFile {
    /// Opens `path` for reading.
    pub fn open(path: &str) -> Result<Self> {
        let file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
        let meta = file.metadata().map_err(|e| Error::io(path, e))?;
        if meta.is_dir() {
            return Err(Error::InvalidArgument(format!(
                "{path} is a directory, not a Lance file"
            )));
        }
        Ok(Self {
            path: path.to_string(),
            file: Arc::new(file),
            size: meta.len(),
        })
    }
}

fn pread(file: &std::fs::File, range: &Range<u64>, path: &str) -> Result<Buffer> {
    use std::os::unix::io::AsRawFd;
    let len = usize::try_from(range.end - range.start)
        .map_err(|_| Error::InvalidArgument(format!("read of {range:?} is too large")))?;
    // Read into uninitialised, 64-byte aligned memory: zeroing it first would cost as much
    // as a third of a scan. Only the bytes `pread` reports are ever exposed.
    let mut buf = MutableBuffer::with_capacity(len);
    let mut filled = 0usize;
    while filled < len {
        let offset = i64::try_from(range.start + filled as u64)
            .map_err(|_| Error::InvalidArgument(format!("offset of {range:?} is too large")))?;
        // SAFETY: the destination is `len - filled` bytes of capacity owned by `buf`, past the
        // `filled` bytes already written; the kernel writes at most that many.
        let n = unsafe {
            libc::pread(
                file.as_raw_fd(),
                buf.as_mut_ptr().add(filled).cast::<libc::c_void>(),
                len - filled,
                offset,
            )
        };
        if n < 0 {
            let e = std::io::Error::last_os_error();
            if e.kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return Err(Error::io(path, e));
        }
        if n == 0 {
            return Err(Error::corrupt(
                path,
                format!("byte range {range:?} lies past the end of the file"),
            ));
        }
        filled += n as usize;
    }
    // SAFETY: the loop above initialised all `len` bytes.
    unsafe { buf.set_len(len) };
    Ok(buf.into())
}

impl ReadAt for LocalFile {
    fn path(&self) -> &str {
        &self.path
    }
    fn size(&self) -> BoxFuture<'_, Result<u64>> {
        futures::future::ready(Ok(self.size)).boxed()
    }
    fn read_range(&self, range: Range<u64>) -> BoxFuture<'_, Result<Buffer>> {
        // A read the page cache can serve takes microseconds: it is done inline, with no
        // thread hop. One that would wait on the disk goes to the I/O threads, so that the
        // many small reads of a cold `take` wait on the disk together instead of one after
        // another on the runtime's two workers.
        if let Some(done) = pread_cached(&self.file, &range, &self.path) {
            return futures::future::ready(done).boxed();
        }
        let (file, path) = (self.file.clone(), self.path.clone());
        let pending = io_threads::run(move || pread(&file, &range, &path));
        async move {
            pending.await.unwrap_or_else(|_| {
                Err(Error::io(
                    &self.path,
                    std::io::Error::other("an I/O thread stopped before finishing a read"),
                ))
            })
        }
        .boxed()
    }
}

/// Whether `preadv2(RWF_NOWAIT)` is known not to work here (an old kernel or a file
/// system without it): then every read is done inline, as before.
static NOWAIT_UNSUPPORTED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Reads `range` if the page cache holds all of it, without blocking: `None` when some of
/// it would have to come from the disk.
fn pread_cached(file: &std::fs::File, range: &Range<u64>, path: &str) -> Option<Result<Buffer>> {
    use std::os::unix::io::AsRawFd;
    use std::sync::atomic::Ordering;
    if NOWAIT_UNSUPPORTED.load(Ordering::Relaxed) {
        return Some(pread(file, range, path));
    }
    let Ok(len) = usize::try_from(range.end - range.start) else {
        return Some(pread(file, range, path));
    };
    let mut buf = MutableBuffer::with_capacity(len);
    let mut filled = 0usize;
    while filled < len {
        let Ok(offset) = i64::try_from(range.start + filled as u64) else {
            return Some(pread(file, range, path));
        };
        let iov = libc::iovec {
            // SAFETY (of the pointer arithmetic): `filled < len` bytes into `len` bytes of capacity.
            iov_base: unsafe { buf.as_mut_ptr().add(filled) }.cast::<libc::c_void>(),
            iov_len: len - filled,
        };
        // SAFETY: one iovec of `len - filled` bytes of capacity owned by `buf`, past the
        // bytes already written; the kernel writes at most that many.
        let n = unsafe { libc::preadv2(file.as_raw_fd(), &iov, 1, offset, libc::RWF_NOWAIT) };
        if n > 0 {
            filled += n as usize;
            continue;
        }
        if n == 0 {
            // Past the end: the plain read reports it.
            return Some(pread(file, range, path));
        }
        let e = std::io::Error::last_os_error();
        return match e.raw_os_error() {
            Some(libc::EAGAIN) => None,
            Some(libc::EINTR) => continue,
            Some(libc::EOPNOTSUPP | libc::EINVAL | libc::ENOSYS) => {
                NOWAIT_UNSUPPORTED.store(true, Ordering::Relaxed);
                Some(pread(file, range, path))
            }
            _ => Some(Err(Error::io(path, e))),
        };
    }
    // SAFETY: the loop above initialised all `len` bytes.
    unsafe { buf.set_len(len) };
    Some(Ok(buf.into()))
}

/// A few threads that do local reads which wait on the disk. They are made on first use
/// and again in a forked child (threads do not survive `fork`).
mod io_threads {
    use std::sync::mpsc::{channel, Receiver, Sender};
    use std::sync::{Arc, Mutex};

    use futures::channel::oneshot;

    /// Reads in flight at once on the disk: enough to keep an SSD's queue busy; the
    /// threads mostly sleep in `pread`.
    const THREADS: usize = 16;

    type Job = Box<dyn FnOnce() + Send>;

    static POOL: Mutex<Option<(u32, Sender<Job>)>> = Mutex::new(None);

    /// Runs `f` on an I/O thread (or here, when no thread could be started) and gives
    /// its result through the returned channel.
    pub(super) fn run<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> oneshot::Receiver<T> {
        let (done, rx) = oneshot::channel();
        let job: Job = Box::new(move || {
            let _ = done.send(f());
        });
        match sender() {
            Some(tx) => {
                if let Err(unsent) = tx.send(job) {
                    (unsent.0)();
                }
            }
            None => job(),
        }
        rx
    }

    fn sender() -> Option<Sender<Job>> {
        let pid = std::process::id();
        let mut pool = POOL.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((p, tx)) = pool.as_ref() {
            if *p == pid {
                return Some(tx.clone());
            }
        }
        let (tx, rx) = channel::<Job>();
        let rx = Arc::new(Mutex::new(rx));
        let mut started = 0;
        for i in 0..THREADS {
            let rx = rx.clone();
            let spawned = std::thread::Builder::new()
                .name(format!("lancelet-io-{i}"))
                .spawn(move || worker(&rx));
            if spawned.is_ok() {
                started += 1;
            }
        }
        if started == 0 {
            return None;
        }
        *pool = Some((pid, tx.clone()));
        Some(tx)
    }

    fn worker(rx: &Mutex<Receiver<Job>>) {
        loop {
            let job = {
                let rx = rx.lock().unwrap_or_else(|e| e.into_inner());
                rx.recv()
            };
            match job {
                Ok(job) => job(),
                Err(_) => return,
            }
        }
    }
}

/// A [`Storage`] over a local directory.
#[derive(Debug, Clone)]
pub struct LocalStore {
    root: PathBuf,
}

impl LocalStore {
    /// A store rooted at `root` (which need not exist yet).
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Self { root: root.into() }
    }

    /// The root directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    fn full(&self, path: &str) -> PathBuf {
        self.root.join(path)
    }

    /// The entries of directory `dir` (none when it does not exist).
    fn entries(&self, dir: &str) -> Result<Vec<std::fs::DirEntry>> {
        let p = self.full(dir);
        match std::fs::read_dir(&p) {
            Ok(entries) => entries.map(|e| e.map_err(|e| io_err(&p, e))).collect(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
            Err(e) => Err(io_err(&p, e)),
        }
    }

    /// `path` under the root, refused when a symbolic link inside the dataset would take
    /// a read outside it (a dataset must never make lancelet read elsewhere).
    fn contained(&self, path: &str) -> Result<PathBuf> {
        let p = self.full(path);
        let (Ok(real), Ok(root)) = (std::fs::canonicalize(&p), std::fs::canonicalize(&self.root)) else {
            // Missing files fail when opened, with the usual not-found error.
            return Ok(p);
        };
        if real.starts_with(&root) {
            Ok(p)
        } else {
            Err(Error::corrupt(
                &p.display().to_string(),
                "a symbolic link leads outside the dataset directory",
            ))
        }
    }
}

fn io_err(path: &Path, source: std::io::Error) -> Error {
    Error::io(&path.display().to_string(), source)
}

/// Writes `data` to a new temporary file next to `target` and syncs it.
fn write_temp(target: &Path, data: &[u8]) -> Result<PathBuf> {
    let dir = target.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(|e| io_err(dir, e))?;
    let name = target.file_name().and_then(|n| n.to_str()).unwrap_or("file");
    let tmp = dir.join(format!(".{name}.{}.tmp", uuid::Uuid::new_v4().simple()));
    let mut f = std::fs::File::create(&tmp).map_err(|e| io_err(&tmp, e))?;
    let written = f.write_all(data).and_then(|_| f.sync_data());
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(io_err(&tmp, e));
    }
    Ok(tmp)
}

impl Storage for LocalStore {
    fn root_display(&self) -> String {
        self.root.display().to_string()
    }

    fn read<'a>(&'a self, path: &'a str) -> BoxFuture<'a, Result<Bytes>> {
        async move {
            let p = self.contained(path)?;
            std::fs::read(&p).map(Bytes::from).map_err(|e| io_err(&p, e))
        }
        .boxed()
    }

    fn put<'a>(&'a self, path: &'a str, data: Bytes) -> BoxFuture<'a, Result<()>> {
        async move {
            let p = self.full(path);
            let tmp = write_temp(&p, &data)?;
            std::fs::rename(&tmp, &p).map_err(|e| {
                let _ = std::fs::remove_file(&tmp);
                io_err(&p, e)
            })
        }
        .boxed()
    }

    fn put_if_absent<'a>(&'a self, path: &'a str, data: Bytes) -> BoxFuture<'a, Result<bool>> {
        async move {
            let p = self.full(path);
            if p.exists() {
                return Ok(false);
            }
            // The content is complete on disk before the name appears; `link` fails if the
            // name exists, which is the atomic test-and-set the commit protocol needs.
            let tmp = write_temp(&p, &data)?;
            let res = std::fs::hard_link(&tmp, &p);
            let _ = std::fs::remove_file(&tmp);
            match res {
                Ok(()) => Ok(true),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(false),
                Err(e) => Err(io_err(&p, e)),
            }
        }
        .boxed()
    }

    fn list<'a>(&'a self, dir: &'a str) -> BoxFuture<'a, Result<Vec<String>>> {
        async move {
            let mut out: Vec<String> = self
                .entries(dir)?
                .into_iter()
                .filter_map(|e| e.file_name().to_str().map(str::to_string))
                .collect();
            out.sort();
            Ok(out)
        }
        .boxed()
    }

    fn list_meta<'a>(&'a self, dir: &'a str) -> BoxFuture<'a, Result<Vec<FileMeta>>> {
        async move {
            let mut out = Vec::new();
            for e in self.entries(dir)? {
                let Ok(meta) = e.metadata() else { continue };
                let Some(name) = e.file_name().to_str().map(str::to_string) else {
                    continue;
                };
                if meta.is_file() {
                    let modified = meta.modified().unwrap_or(SystemTime::UNIX_EPOCH);
                    out.push(FileMeta {
                        name,
                        size: meta.len(),
                        modified,
                    });
                }
            }
            out.sort_by(|a, b| a.name.cmp(&b.name));
            Ok(out)
        }
        .boxed()
    }

    fn delete<'a>(&'a self, path: &'a str) -> BoxFuture<'a, Result<()>> {
        async move {
            let p = self.full(path);
            match std::fs::remove_file(&p) {
                Ok(()) => Ok(()),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
                Err(e) => Err(io_err(&p, e)),
            }
        }
        .boxed()
    }

    fn exists<'a>(&'a self, path: &'a str) -> BoxFuture<'a, Result<bool>> {
        async move { Ok(self.full(path).exists()) }.boxed()
    }

    fn open_file<'a>(&'a self, path: &'a str) -> BoxFuture<'a, Result<Arc<dyn ReadAt>>> {
        async move {
            let p = self.contained(path)?;
            let file: Arc<dyn ReadAt> = Arc::new(LocalFile::open(&p.display().to_string())?);
            Ok(file)
        }
        .boxed()
    }

    fn local_path(&self, path: &str) -> Option<PathBuf> {
        Some(self.full(path))
    }

    fn upload<'a>(&'a self, path: &'a str, local: &'a Path) -> BoxFuture<'a, Result<u64>> {
        async move {
            let p = self.full(path);
            if let Some(dir) = p.parent() {
                std::fs::create_dir_all(dir).map_err(|e| io_err(dir, e))?;
            }
            std::fs::copy(local, &p).map_err(|e| io_err(&p, e))
        }
        .boxed()
    }
}

/// Hands memory the allocator holds but no longer uses back to the operating system (glibc
/// keeps freed blocks of a build's large transient buffers in its arenas: on a 1M-document
/// full-text build, 80-100 MB of resident memory). Elsewhere a no-op.
pub fn release_free_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only walks glibc's own arenas; it takes no pointers and is safe to
    // call from any thread at any time.
    unsafe {
        libc::malloc_trim(0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_from_the_cache_and_from_the_io_threads_give_the_same_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        let data: Vec<u8> = (0..200_000u32).map(|i| (i * 7 % 251) as u8).collect();
        std::fs::write(&path, &data).unwrap();
        let f = LocalFile::open(path.to_str().unwrap()).unwrap();
        let ranges = [0..10u64, 5..70_000, 199_990..200_000, 123_456..123_457, 7..7];
        // Just written, the file is in the page cache: served inline.
        for r in &ranges {
            let got = pread_cached(&f.file, r, "f").expect("cached").unwrap();
            assert_eq!(got.as_slice(), &data[r.start as usize..r.end as usize]);
        }
        // Many reads at once through the I/O threads, each its own bytes.
        let pending: Vec<_> = (0..64u64)
            .map(|i| {
                let (file, r) = (f.file.clone(), i * 3000..i * 3000 + 1000 + i);
                (r.clone(), io_threads::run(move || pread(&file, &r, "f")))
            })
            .collect();
        for (r, rx) in pending {
            let got = futures::executor::block_on(rx).unwrap().unwrap();
            assert_eq!(got.as_slice(), &data[r.start as usize..r.end as usize]);
        }
        // Past the end is the same error either way.
        let past = 199_999..200_001u64;
        let a = pread_cached(&f.file, &past, f.path()).unwrap().unwrap_err().to_string();
        let b = futures::executor::block_on(f.read_range(past.clone()))
            .unwrap_err()
            .to_string();
        assert_eq!(a, b);
        assert!(a.contains("past the end"), "{a}");
    }

    #[cfg(unix)]
    #[test]
    fn symbolic_links_cannot_lead_reads_outside_the_root() {
        let dir = tempfile::tempdir().unwrap();
        let outside = dir.path().join("secret");
        std::fs::write(&outside, b"secret").unwrap();
        let root = dir.path().join("d.lance");
        std::fs::create_dir_all(root.join("data")).unwrap();
        std::fs::write(root.join("data/inside"), b"ok").unwrap();
        std::os::unix::fs::symlink(&outside, root.join("data/link")).unwrap();
        let store = LocalStore::new(&root);
        let read = |p: &'static str| futures::executor::block_on(store.read(p));
        assert!(matches!(read("data/link"), Err(Error::Corrupt { .. })));
        assert!(futures::executor::block_on(store.open_file("data/link")).is_err());
        assert_eq!(&read("data/inside").unwrap()[..], b"ok");
        assert!(matches!(read("data/missing"), Err(Error::NotFound { .. })));
    }

    #[test]
    fn a_second_create_of_the_same_name_loses() {
        let dir = tempfile::tempdir().unwrap();
        let store = LocalStore::new(dir.path());
        let put =
            |d: &'static [u8]| futures::executor::block_on(store.put_if_absent("_versions/1", Bytes::from_static(d)));
        assert!(put(b"first").unwrap());
        assert!(!put(b"second").unwrap());
        assert_eq!(
            &futures::executor::block_on(store.read("_versions/1")).unwrap()[..],
            b"first"
        );
    }
}
