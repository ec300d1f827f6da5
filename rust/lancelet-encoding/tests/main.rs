//! Integration tests of lancelet-encoding: codecs and robustness against damaged pages.
//! One binary with a module per file: a binary per file linked the dependency tree each time.
mod common;

mod codecs;
mod robustness;
