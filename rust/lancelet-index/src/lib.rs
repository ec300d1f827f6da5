//! Lance secondary indexes: file formats, training and search.
//!
//! This crate turns Arrow columns, paired with row addresses, into the index files pylance
//! writes under `_indices/{uuid}/`, and answers queries from such files (ours or
//! pylance's). It knows nothing about datasets, manifests or Python: the dataset layer
//! scans the column, hands batches to [`scalar::train`], records the returned
//! [`scalar::CreatedIndex`] in its manifest, and later opens the index with
//! [`scalar::open`] over an [`scalar::IndexStore`] (the files of one index directory).
//!
//! Builders and readers are separate and meet only through the bytes of the files: a
//! reader never sees builder state, so every test that reads back what a builder wrote
//! also tests the on-disk format.
//!
//! - [`rowaddr`]: row-address sets and their three binary encodings.
//! - [`scalar`]: BTREE, BITMAP, LABEL_LIST, ZONEMAP, NGRAM and BLOOMFILTER.

pub mod error;
pub mod rowaddr;
pub mod scalar;

pub use error::{Error, Result};
