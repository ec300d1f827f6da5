//! Keeping a dataset in shape: removing old versions ([`cleanup`]), merging small
//! fragments ([`compact`], with defaults from the table config in [`compact_config`]) and
//! the table config and the manifest's other key/value maps ([`config`]: table, schema and
//! field metadata, through [`MetadataTarget`]).

pub mod cleanup;
pub mod compact;
pub mod compact_config;
pub(crate) mod config;
pub mod validate;

pub use config::{MapChanges, MetadataTarget};
