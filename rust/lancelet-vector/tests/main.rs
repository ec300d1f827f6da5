//! Integration tests of lancelet-vector: round trips and pylance's golden files.
//! One binary with a module per file: a binary per file linked the dependency tree each time.

mod pylance_golden;
mod roundtrip;
