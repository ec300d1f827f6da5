//! Integration tests of lancelet-file: round trips, bad data, checksums, page statistics, legacy and 2.1 reads, takes.
//! One binary with a module per file: a binary per file linked the dependency tree each time.
mod common;

mod bad_data;
mod bad_data_v2_2;
mod checksums;
mod page_stats;
mod read_legacy;
mod read_v2_1;
mod roundtrip;
mod take_selected;
