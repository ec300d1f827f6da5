//! Storage access for lancelet: the one layer below the file and table crates that talks to
//! local disk, process memory and S3 (through the `object_store` crate).
//!
//! - [`read`]: the [`ReadAt`] trait every file reader reads through, and [`read_ranges`],
//!   which coalesces nearby byte ranges into single requests.
//! - [`local`]: files and directories on local disk ([`LocalFile`], [`LocalStore`]).
//! - [`memory`]: bytes held in memory ([`InMemory`]).
//! - [`object`]: object stores ([`ObjectStoreStore`], [`ObjectFile`]): ranged reads with
//!   bounded concurrency, conditional puts (`If-None-Match: *`) that tell a retried create
//!   that landed from a rival's, multipart uploads, and the client's retries.
//! - [`storage`]: the [`Storage`] trait a dataset root is accessed through (whole-file reads
//!   and writes, atomic creates, listings, uploads, ranged opens), implemented by
//!   [`LocalStore`] and [`ObjectStoreStore`].
//! - [`uri`]: URIs (local paths, `file://`, `memory://`, `s3://`) plus pylance-style
//!   `storage_options` resolved into a store, for dataset roots ([`open_root`]) and single
//!   files ([`open_file`], [`file_target`]).
//!
//! Errors ([`Error`]) keep what the storage said as their source: an `object_store` error
//! stays the [`Error::ObjectStore`] variant's source (and the source of the `std::io::Error`
//! the file and table layers wrap it in), never flattened into a string.
//!
//! The external manifest store (SQLite, for S3-compatible stores without conditional puts)
//! is not here: it arbitrates commits, which is the table layer's business
//! (`lancelet_table::manifest_store`). It is not an optional feature either: the one
//! shipped build (the Python extension) must accept the `manifest_store=sqlite:` storage
//! option wherever it runs, so a feature would only add a configuration that no build
//! uses and no test covers; the cost it would save is compiling the bundled SQLite once.

pub mod error;
pub mod local;
pub mod memory;
pub mod object;
pub mod read;
pub mod storage;
pub mod uri;

pub use error::{Error, ErrorKind, Result};
pub use local::{release_free_memory, LocalFile, LocalStore};
pub use memory::InMemory;
pub use object::{ObjectFile, ObjectHead, ObjectStoreStore};
pub use read::{read_ranges, IoStats, ReadAt};
pub use storage::{remove_tree, FileMeta, Storage};
pub use uri::{file_target, open_file, open_root, FileTarget, Root, RootKind};
