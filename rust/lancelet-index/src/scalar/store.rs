//! Where index files live: the [`IndexStore`] trait and an in-memory implementation.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;
use futures::FutureExt;
use lancelet_io::{InMemory, ReadAt};

use crate::error::{Error, Result};

/// The files of one index directory (`_indices/{uuid}/`). The dataset layer implements it
/// over its object store; names are bare file names such as `page_data.lance`.
pub trait IndexStore: Send + Sync {
    /// Writes (or replaces) file `name`; returns its size in bytes.
    fn write<'a>(&'a self, name: &'a str, bytes: Vec<u8>) -> BoxFuture<'a, Result<u64>>;
    /// Opens file `name` for reading; a missing file is `lancelet_io::Error::NotFound` (inside `lancelet_file::Error::Storage`).
    fn open<'a>(&'a self, name: &'a str) -> BoxFuture<'a, Result<Arc<dyn ReadAt>>>;
}

/// An index directory held in memory (tests, fuzzing, small temporary indexes).
#[derive(Debug, Default)]
pub struct MemoryStore {
    files: Mutex<BTreeMap<String, Arc<[u8]>>>,
}

impl MemoryStore {
    /// An empty directory.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds (or replaces) a file.
    pub fn insert(&self, name: impl Into<String>, bytes: impl Into<Arc<[u8]>>) {
        if let Ok(mut files) = self.files.lock() {
            files.insert(name.into(), bytes.into());
        }
    }

    /// The bytes of file `name`.
    pub fn get(&self, name: &str) -> Option<Arc<[u8]>> {
        self.files.lock().ok()?.get(name).cloned()
    }

    /// The file names, sorted.
    pub fn names(&self) -> Vec<String> {
        self.files
            .lock()
            .map(|f| f.keys().cloned().collect())
            .unwrap_or_default()
    }
}

impl IndexStore for MemoryStore {
    fn write<'a>(&'a self, name: &'a str, bytes: Vec<u8>) -> BoxFuture<'a, Result<u64>> {
        let n = bytes.len() as u64;
        self.insert(name, bytes);
        futures::future::ready(Ok(n)).boxed()
    }

    fn open<'a>(&'a self, name: &'a str) -> BoxFuture<'a, Result<Arc<dyn ReadAt>>> {
        let res = match self.get(name) {
            Some(bytes) => Ok(Arc::new(InMemory::new(name, &bytes)) as Arc<dyn ReadAt>),
            None => Err(Error::File(
                lancelet_io::Error::NotFound { path: name.to_string() }.into(),
            )),
        };
        futures::future::ready(res).boxed()
    }
}
