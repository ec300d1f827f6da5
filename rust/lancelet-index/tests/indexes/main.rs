//! Integration tests of the index crate: pylance's golden files (`golden`), and property
//! tests of every index type against a naive scan (`props`).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a failed unwrap or panic is a failed test"
)]

mod golden;
mod props;

use std::collections::BTreeSet;

use lancelet_index::rowaddr::RowAddrSet;
use lancelet_index::scalar::{ScalarIndexType, SearchResult};

/// The addresses of a result set (no whole fragments are expected in these tests).
pub fn addrs(set: &RowAddrSet) -> BTreeSet<u64> {
    assert!(!set.has_full_fragments());
    set.iter_with(|_| 0).collect()
}

/// Checks an index answer against the naive one: exact answers must be equal; "at most"
/// answers must hold every match, and rechecking their live rows must give the matches.
pub fn check(
    kind: ScalarIndexType,
    what: &str,
    result: &SearchResult,
    expected: &BTreeSet<u64>,
    live: &BTreeSet<u64>,
    recheck: impl Fn(u64) -> bool,
) {
    let got = addrs(result.rows());
    match result {
        SearchResult::Exact(_) => assert_eq!(&got, expected, "{kind:?} {what}"),
        SearchResult::AtMost(_) => {
            assert!(
                got.is_superset(expected),
                "{kind:?} {what}: missing {:?}",
                expected.difference(&got)
            );
            let rechecked: BTreeSet<u64> = got.intersection(live).copied().filter(|a| recheck(*a)).collect();
            assert_eq!(&rechecked, expected, "{kind:?} {what}: recheck");
        }
    }
}
