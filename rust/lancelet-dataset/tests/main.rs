//! Integration tests of lancelet-dataset: reads, writes, commits, merge_insert, branches, blobs, loader windows, validate.
//! One binary with a module per file: a binary per file linked the dependency tree each time.
mod common;

mod blob_mixed;
mod branches;
mod commit_hooks;
mod correctness_2;
mod dataset_semantics;
mod error_kinds;
mod glue_moves;
mod hostile;
mod intent;
mod merge_insert;
mod read;
mod scan_blob_bytes;
mod scan_order;
mod validate_coverage;
