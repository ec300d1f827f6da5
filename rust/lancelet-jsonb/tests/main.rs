//! Integration tests of lancelet-jsonb: property tests and test vectors.
//! One binary with a module per file: a binary per file linked the dependency tree each time.

mod props;
mod vectors;
