//! Errors: the index layer's ([`lancelet_index::Error`]), so a damaged full-text file is
//! `Corrupt` exactly like any other index file.

pub use lancelet_index::{Error, Result};
