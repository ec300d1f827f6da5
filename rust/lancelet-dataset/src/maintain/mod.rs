//! Keeping a dataset in shape: removing old versions ([`cleanup`]), merging small
//! fragments ([`compact`], with defaults from the table config in [`compact_config`]) and
//! the table config itself ([`config`]).

pub mod cleanup;
pub mod compact;
pub mod compact_config;
pub(crate) mod config;
pub mod validate;
