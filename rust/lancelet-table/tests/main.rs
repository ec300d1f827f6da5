//! Integration tests of lancelet-table: commits, deletion files, bad data, pylance-written datasets.
//! One binary with a module per file: a binary per file linked the dependency tree each time.

mod bad_data;
mod commit;
mod deletion_roundtrip;
mod pylance_dataset;
