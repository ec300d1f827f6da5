//! Property tests: for random columns (nulls, duplicates, several fragments, deleted rows)
//! and random queries, every index's answer (rechecked when inexact) equals a naive scan.

use std::collections::BTreeSet;
use std::ops::Bound;
use std::sync::Arc;

use arrow_array::builder::{ListBuilder, StringBuilder};
use arrow_array::{ArrayRef, Int64Array, StringArray, UInt64Array};
use futures::executor::block_on;
use lancelet_file::FileVersion;
use lancelet_index::scalar::{self, MemoryStore, ScalarIndexType, ScalarParams, ScalarQuery, TrainingBatch};
use proptest::prelude::*;

use super::check;

/// A value type of the generated columns, with its naive comparison (Rust's `Ord`, which
/// agrees with Arrow's for integers and for strings, compared bytewise).
trait Value: Ord + Clone + std::fmt::Debug {
    fn array(values: &[Option<Self>]) -> ArrayRef;
}

impl Value for i64 {
    fn array(values: &[Option<Self>]) -> ArrayRef {
        Arc::new(Int64Array::from(values.to_vec()))
    }
}

impl Value for String {
    fn array(values: &[Option<Self>]) -> ArrayRef {
        Arc::new(StringArray::from(
            values.iter().map(|v| v.as_deref()).collect::<Vec<_>>(),
        ))
    }
}

#[derive(Debug, Clone)]
enum Query<T> {
    Equals(Option<T>),
    Range(Bound<T>, Bound<T>),
    IsIn(Vec<Option<T>>),
    IsNull,
}

impl<T: Value> Query<T> {
    fn matches(&self, x: &Option<T>) -> bool {
        let Some(x) = x else {
            return matches!(self, Query::IsNull);
        };
        match self {
            Query::Equals(v) => v.as_ref() == Some(x),
            Query::IsIn(vs) => vs.iter().any(|v| v.as_ref() == Some(x)),
            Query::Range(lo, hi) => {
                (match lo {
                    Bound::Included(l) => x >= l,
                    Bound::Excluded(l) => x > l,
                    Bound::Unbounded => true,
                }) && (match hi {
                    Bound::Included(h) => x <= h,
                    Bound::Excluded(h) => x < h,
                    Bound::Unbounded => true,
                })
            }
            Query::IsNull => false,
        }
    }

    fn to_scalar(&self) -> ScalarQuery {
        let one = |v: &T| T::array(&[Some(v.clone())]);
        let bound = |b: &Bound<T>| match b {
            Bound::Included(v) => Bound::Included(one(v)),
            Bound::Excluded(v) => Bound::Excluded(one(v)),
            Bound::Unbounded => Bound::Unbounded,
        };
        match self {
            Query::Equals(v) => ScalarQuery::Equals(T::array(std::slice::from_ref(v))),
            Query::Range(lo, hi) => ScalarQuery::Range {
                lower: bound(lo),
                upper: bound(hi),
            },
            Query::IsIn(vs) => ScalarQuery::IsIn(T::array(vs)),
            Query::IsNull => ScalarQuery::IsNull,
        }
    }
}

fn arb_query<T: Value + 'static>(v: impl Strategy<Value = T> + Clone + 'static) -> impl Strategy<Value = Query<T>> {
    let opt = prop::option::weighted(0.9, v.clone());
    let bound = prop_oneof![
        v.clone().prop_map(Bound::Included),
        v.clone().prop_map(Bound::Excluded),
        Just(Bound::Unbounded)
    ];
    prop_oneof![
        3 => opt.clone().prop_map(Query::Equals),
        3 => (bound.clone(), bound).prop_map(|(l, h)| Query::Range(l, h)),
        2 => prop::collection::vec(opt, 0..4).prop_map(Query::IsIn),
        1 => Just(Query::IsNull),
    ]
}

/// A column over several fragments: `(value, live)` per physical row.
type Fragments<T> = Vec<Vec<(Option<T>, bool)>>;

fn arb_fragments<T: Clone + std::fmt::Debug + 'static>(
    v: impl Strategy<Value = T> + 'static,
) -> impl Strategy<Value = Fragments<T>> {
    let row = (prop::option::weighted(0.85, v), prop::bool::weighted(0.9));
    prop::collection::vec(prop::collection::vec(row, 0..25), 1..4)
}

fn arb_version() -> impl Strategy<Value = FileVersion> {
    prop_oneof![
        Just(FileVersion::V2_0),
        Just(FileVersion::V2_1),
        Just(FileVersion::V2_2)
    ]
}

/// Live rows as (address, value); fragment `i` gets id `2 i + 1` so ids have gaps.
fn live_rows<T: Clone>(frags: &Fragments<T>) -> Vec<(u64, Option<T>)> {
    let mut out = Vec::new();
    for (i, rows) in frags.iter().enumerate() {
        for (offset, (v, live)) in rows.iter().enumerate() {
            if *live {
                out.push((((2 * i as u64 + 1) << 32) | offset as u64, v.clone()));
            }
        }
    }
    out
}

/// Training batches of at most `chunk` rows.
fn batches(values: ArrayRef, addrs: &[u64], chunk: usize) -> Vec<lancelet_index::Result<TrainingBatch>> {
    (0..addrs.len())
        .step_by(chunk.max(1))
        .map(|s| {
            let n = chunk.min(addrs.len() - s);
            TrainingBatch::try_new(values.slice(s, n), UInt64Array::from(addrs[s..s + n].to_vec()))
        })
        .collect()
}

fn run_value_queries<T: Value>(
    kind: ScalarIndexType,
    frags: &Fragments<T>,
    queries: &[Query<T>],
    params: &ScalarParams,
    version: FileVersion,
    chunk: usize,
) {
    let rows = live_rows(frags);
    let addrs: Vec<u64> = rows.iter().map(|(a, _)| *a).collect();
    let values: Vec<Option<T>> = rows.iter().map(|(_, v)| v.clone()).collect();
    let array = T::array(&values);
    let store = MemoryStore::new();
    let dt = array.data_type().clone();
    block_on(scalar::train(
        kind,
        params,
        &dt,
        batches(array, &addrs, chunk),
        &store,
        version,
    ))
    .unwrap();
    let index = block_on(scalar::open(kind, &store)).unwrap();
    let live: BTreeSet<u64> = addrs.iter().copied().collect();
    for q in queries {
        let sq = q.to_scalar();
        if !index.can_answer(&sq) {
            assert!(
                kind == ScalarIndexType::BloomFilter && matches!(q, Query::Range(..)),
                "{kind:?} {q:?}"
            );
            continue;
        }
        let expected: BTreeSet<u64> = rows.iter().filter(|(_, v)| q.matches(v)).map(|(a, _)| *a).collect();
        let got = block_on(index.search(&sq)).unwrap();
        let value_of = |a: u64| rows.iter().find(|(x, _)| *x == a).map(|(_, v)| v.clone()).unwrap();
        check(kind, &format!("{q:?}"), &got, &expected, &live, |a| {
            q.matches(&value_of(a))
        });
    }
}

const VALUE_KINDS: [ScalarIndexType; 4] = [
    ScalarIndexType::BTree,
    ScalarIndexType::Bitmap,
    ScalarIndexType::ZoneMap,
    ScalarIndexType::BloomFilter,
];

fn small_params() -> impl Strategy<Value = ScalarParams> {
    (1u64..10, 1u64..10, 1u64..300).prop_map(|(bs, zone, items)| ScalarParams {
        btree_batch_size: bs,
        rows_per_zone: zone,
        bloom_number_of_items: items,
        bloom_probability: 0.05,
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn int_indexes_match_a_scan(
        frags in arb_fragments(-6i64..6),
        queries in prop::collection::vec(arb_query(-7i64..7), 1..8),
        params in small_params(),
        version in arb_version(),
        chunk in 1usize..40,
    ) {
        for kind in VALUE_KINDS {
            run_value_queries(kind, &frags, &queries, &params, version, chunk);
        }
    }

    #[test]
    fn string_indexes_match_a_scan(
        frags in arb_fragments("[a-c]{0,3}"),
        queries in prop::collection::vec(arb_query("[a-c]{0,3}"), 1..8),
        params in small_params(),
        version in arb_version(),
    ) {
        for kind in VALUE_KINDS {
            run_value_queries(kind, &frags, &queries, &params, version, 7);
        }
    }

    #[test]
    fn ngram_matches_a_scan(
        frags in arb_fragments("[abAé_ 1]{0,9}"),
        texts in prop::collection::vec("[abé 1]{0,5}", 1..8),
        version in arb_version(),
    ) {
        let rows = live_rows(&frags);
        let addrs: Vec<u64> = rows.iter().map(|(a, _)| *a).collect();
        let values: Vec<Option<String>> = rows.iter().map(|(_, v)| v.clone()).collect();
        let store = MemoryStore::new();
        let array = String::array(&values);
        let kind = ScalarIndexType::NGram;
        block_on(scalar::train(kind, &ScalarParams::default(), array.data_type(), batches(array.clone(), &addrs, 10), &store, version)).unwrap();
        let index = block_on(scalar::open(kind, &store)).unwrap();
        let live: BTreeSet<u64> = addrs.iter().copied().collect();
        for t in texts {
            let q = ScalarQuery::Contains(t.clone());
            if !index.can_answer(&q) {
                prop_assert!(lancelet_index::scalar::ngram::trigrams(&t).is_empty());
                continue;
            }
            let hit = |v: &Option<String>| v.as_deref().is_some_and(|v| v.contains(t.as_str()));
            let expected: BTreeSet<u64> = rows.iter().filter(|(_, v)| hit(v)).map(|(a, _)| *a).collect();
            let got = block_on(index.search(&q)).unwrap();
            let value_of = |a: u64| rows.iter().find(|(x, _)| *x == a).map(|(_, v)| v.clone()).unwrap();
            check(kind, &t, &got, &expected, &live, |a| hit(&value_of(a)));
        }
    }

    #[test]
    fn label_list_matches_a_scan(
        frags in arb_fragments(prop::collection::vec(prop::option::weighted(0.9, "[a-d]"), 0..4)),
        queries in prop::collection::vec((any::<bool>(), prop::collection::vec("[a-e]", 1..3)), 1..8),
        version in arb_version(),
    ) {
        let rows = live_rows(&frags);
        let addrs: Vec<u64> = rows.iter().map(|(a, _)| *a).collect();
        let mut b = ListBuilder::new(StringBuilder::new());
        for (_, v) in &rows {
            match v {
                None => b.append_null(),
                Some(l) => {
                    for e in l {
                        b.values().append_option(e.as_deref());
                    }
                    b.append(true);
                }
            }
        }
        let array: ArrayRef = Arc::new(b.finish());
        let store = MemoryStore::new();
        let kind = ScalarIndexType::LabelList;
        block_on(scalar::train(kind, &ScalarParams::default(), array.data_type(), batches(array.clone(), &addrs, 6), &store, version)).unwrap();
        let index = block_on(scalar::open(kind, &store)).unwrap();
        let live: BTreeSet<u64> = addrs.iter().copied().collect();
        for (all, labels) in queries {
            let lit: ArrayRef = Arc::new(StringArray::from(labels.clone()));
            let q = if all { ScalarQuery::LabelsAll(lit) } else { ScalarQuery::LabelsAny(lit) };
            let hit = |v: &Option<Vec<Option<String>>>| v.as_ref().is_some_and(|l| {
                let has = |x: &String| l.iter().any(|e| e.as_ref() == Some(x));
                if all { labels.iter().all(has) } else { labels.iter().any(has) }
            });
            let expected: BTreeSet<u64> = rows.iter().filter(|(_, v)| hit(v)).map(|(a, _)| *a).collect();
            check(kind, &format!("{q:?}"), &block_on(index.search(&q)).unwrap(), &expected, &live, |_| true);
        }
        let nulls: BTreeSet<u64> = rows.iter().filter(|(_, v)| v.is_none()).map(|(a, _)| *a).collect();
        check(kind, "null", &block_on(index.search(&ScalarQuery::IsNull)).unwrap(), &nulls, &live, |_| true);
    }
}

#[test]
fn empty_input_builds_and_answers_nothing() {
    for kind in ScalarIndexType::ALL {
        let dt = match kind {
            ScalarIndexType::LabelList => arrow_schema::DataType::List(Arc::new(arrow_schema::Field::new(
                "item",
                arrow_schema::DataType::Utf8,
                true,
            ))),
            ScalarIndexType::NGram => arrow_schema::DataType::Utf8,
            _ => arrow_schema::DataType::Int64,
        };
        let store = MemoryStore::new();
        let created = block_on(scalar::train(
            kind,
            &ScalarParams::default(),
            &dt,
            Vec::new(),
            &store,
            FileVersion::V2_0,
        ))
        .unwrap();
        assert_eq!(created.type_url, kind.type_url());
        let index = block_on(scalar::open(kind, &store)).unwrap();
        let q = match kind {
            ScalarIndexType::NGram => ScalarQuery::Contains("abc".into()),
            _ => ScalarQuery::IsNull,
        };
        assert!(block_on(index.search(&q)).unwrap().rows().is_empty(), "{kind:?}");
    }
}

#[test]
fn wrong_input_is_rejected() {
    let store = MemoryStore::new();
    let ints: ArrayRef = Arc::new(Int64Array::from(vec![1, 2]));
    let b = TrainingBatch::try_new(ints.clone(), UInt64Array::from(vec![0, 1])).unwrap();
    let r = block_on(scalar::train(
        ScalarIndexType::NGram,
        &ScalarParams::default(),
        ints.data_type(),
        vec![Ok(b)],
        &store,
        FileVersion::V2_0,
    ));
    assert!(r.is_err());
    assert!(TrainingBatch::try_new(ints, UInt64Array::from(vec![0])).is_err());
    assert!(block_on(scalar::open(ScalarIndexType::BTree, &store)).is_err());
}
