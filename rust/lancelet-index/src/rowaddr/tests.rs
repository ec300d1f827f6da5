#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "tests: a failed unwrap is a failed test"
)]

use std::collections::{BTreeMap, BTreeSet};

use proptest::prelude::*;
use roaring::{RoaringBitmap, RoaringTreemap};

use super::*;

fn hex(s: &str) -> Vec<u8> {
    let s: String = s.split_whitespace().collect();
    (0..s.len() / 2)
        .map(|i| u8::from_str_radix(&s[i * 2..i * 2 + 2], 16).unwrap())
        .collect()
}

#[test]
fn roaring32_bytes_from_the_facts() {
    let bm: RoaringBitmap = [0, 1].into_iter().collect();
    let bytes = encode_roaring32(&bm);
    assert_eq!(bytes, hex("3a300000 01000000 0000 0100 10000000 0000 0100"));
    assert_eq!(decode_roaring32(&bytes).unwrap(), bm);
    let two: RoaringBitmap = [2].into_iter().collect();
    assert_eq!(encode_roaring32(&two), hex("3a300000 01000000 0000 0000 10000000 0200"));
    assert_eq!(encode_roaring32(&RoaringBitmap::new()), hex("3a300000 00000000"));
}

#[test]
fn run_containers_decode_and_encode_without_runs() {
    // insert_range makes run containers, which the crate serializes in the run form.
    let mut bm = RoaringBitmap::new();
    bm.insert_range(0..70_000);
    bm.insert(200_000);
    let mut run_form = Vec::new();
    bm.serialize_into(&mut run_form).unwrap();
    assert_eq!(&run_form[..2], &[0x3b, 0x30]);
    assert_eq!(decode_roaring32(&run_form).unwrap(), bm);
    let ours = encode_roaring32(&bm);
    assert_eq!(&ours[..4], &[0x3a, 0x30, 0, 0]);
    assert_eq!(decode_roaring32(&ours).unwrap(), bm);
}

#[test]
fn pylance_null_map_round_trips_byte_for_byte() {
    // gb1 of pylance's zonemap.lance in tests/data/index (null rows of column `i`).
    let bytes = hex(
        "0300000000000000180000003a30000001000000000003001000000003000a0011001800010000001a00\
         00003a300000010000000000040010000000010008000f0016001d0002000000120000003a30000001\
         00000000000000100000000600",
    );
    let set = RowAddrSet::decode(&bytes, "test").unwrap();
    let addrs: Vec<u64> = set.iter_with(|_| 0).collect();
    let expect: Vec<u64> = [
        (0, 3),
        (0, 10),
        (0, 17),
        (0, 24),
        (1, 1),
        (1, 8),
        (1, 15),
        (1, 22),
        (1, 29),
        (2, 6),
    ]
    .iter()
    .map(|&(f, o)| row_addr(f, o))
    .collect();
    assert_eq!(addrs, expect);
    assert_eq!(set.encode(), bytes);
}

#[test]
fn whole_fragments() {
    let mut set = RowAddrSet::full_fragments([3]);
    set.insert(row_addr(1, 5));
    let bytes = set.encode();
    // Fragment 3 is written with byte_len 0.
    assert_eq!(&bytes[bytes.len() - 8..], &hex("03000000 00000000")[..]);
    let back = RowAddrSet::decode(&bytes, "t").unwrap();
    assert_eq!(back, set);
    assert!(back.contains(row_addr(3, 1_000_000)));
    assert_eq!(back.len_with(|f| if f == 3 { 10 } else { 0 }), 11);
    assert_eq!(back.len_if_known(), None);
    let mut deleted = RowAddrSet::new();
    deleted.insert(row_addr(3, 0));
    let rest = back.difference(&deleted, |_| 3);
    assert_eq!(
        rest.iter_with(|_| 0).collect::<Vec<_>>(),
        vec![row_addr(1, 5), row_addr(3, 1), row_addr(3, 2)]
    );
}

#[test]
fn bad_inputs_are_errors_not_panics() {
    let mut set = RowAddrSet::from_iter([1u64, 5, 1 << 33, (1 << 33) + 70_000]);
    set.insert_fragment(9);
    let tree = set.encode();
    let bm = encode_roaring32(&(0..5000).chain([90_000]).collect());
    let tm = encode_treemap(&[1u64, 2, 1 << 40].into_iter().collect());
    for (bytes, which) in [(&tree, 0), (&bm, 1), (&tm, 2)] {
        for cut in 0..bytes.len() {
            let b = &bytes[..cut];
            let r = match which {
                0 => RowAddrSet::decode(b, "t").map(|_| ()),
                1 => decode_roaring32(b).map(|_| ()),
                _ => decode_treemap(b).map(|_| ()),
            };
            assert!(r.is_err(), "prefix of {cut} bytes accepted ({which})");
        }
    }
    // Keys out of order, a bad cookie, a huge count.
    assert!(decode_roaring32(&hex(
        "3a300000 02000000 0100 0000 0000 0000 18000000 1a000000 0000 0000"
    ))
    .is_err());
    assert!(decode_roaring32(&hex("3c300000 00000000")).is_err());
    assert!(decode_treemap(&hex("ffffffffffffffff")).is_err());
    assert!(RowAddrSet::decode(&hex("ffffffff"), "t").is_err());
    // Fragments out of order.
    assert!(RowAddrSet::decode(&hex("02000000 05000000 00000000 04000000 00000000"), "t").is_err());
    // Overlapping runs.
    assert!(decode_roaring32(&hex("3b300000 01 0000 0100 0200 0000 0500 0300 0100")).is_err());
}

/// A naive model: per fragment, `None` = whole fragment.
type Model = BTreeMap<u32, Option<BTreeSet<u32>>>;

fn arb_set() -> impl Strategy<Value = Model> {
    prop::collection::btree_map(
        0u32..5,
        prop_oneof![
            1 => Just(None),
            4 => prop::collection::btree_set(prop_oneof![0u32..40, 60u32..80], 1..20).prop_map(Some),
        ],
        0..4,
    )
}

fn build(m: &Model) -> RowAddrSet {
    let mut s = RowAddrSet::new();
    for (f, rows) in m {
        match rows {
            None => s.insert_fragment(*f),
            Some(r) => r.iter().for_each(|o| s.insert(row_addr(*f, *o))),
        }
    }
    s
}

/// Physical rows of every fragment (offsets in the model stay below it).
const FRAG_ROWS: u64 = 80;

fn expand(m: &Model) -> BTreeSet<u64> {
    m.iter()
        .flat_map(|(f, r)| match r {
            None => (0..FRAG_ROWS as u32).map(|o| row_addr(*f, o)).collect::<Vec<_>>(),
            Some(r) => r.iter().map(|o| row_addr(*f, *o)).collect(),
        })
        .collect()
}

fn addrs(s: &RowAddrSet) -> BTreeSet<u64> {
    s.iter_with(|_| FRAG_ROWS).collect()
}

proptest! {
    #[test]
    fn set_ops_match_naive(a in arb_set(), b in arb_set(), probe in 0u64..(6 << 32)) {
        let (sa, sb) = (build(&a), build(&b));
        let (na, nb) = (expand(&a), expand(&b));
        prop_assert_eq!(addrs(&sa), na.clone());
        prop_assert_eq!(sa.len_with(|_| FRAG_ROWS), na.len() as u64);
        prop_assert_eq!(sa.is_empty(), na.is_empty());
        prop_assert_eq!(addrs(&sa.union(&sb)), na.union(&nb).copied().collect::<BTreeSet<_>>());
        prop_assert_eq!(addrs(&sa.intersection(&sb)), na.intersection(&nb).copied().collect::<BTreeSet<_>>());
        prop_assert_eq!(addrs(&sa.difference(&sb, |_| FRAG_ROWS)), na.difference(&nb).copied().collect::<BTreeSet<_>>());
        // Whole fragments contain every offset, even past FRAG_ROWS.
        let whole = a.get(&fragment_of(probe)).is_some_and(|r| r.is_none());
        prop_assert_eq!(sa.contains(probe), whole || na.contains(&probe));
        prop_assert_eq!(RowAddrSet::decode(&sa.encode(), "t").unwrap(), sa.clone());
        let sorted = RowAddrSet::from_sorted_iter(na.iter().copied());
        prop_assert_eq!(addrs(&sorted), na);
    }

    #[test]
    fn codecs_round_trip(values in prop::collection::vec(any::<u32>(), 0..200), dense in 0u32..9000, high in prop::collection::vec(0u64..4, 0..50)) {
        let mut bm: RoaringBitmap = values.iter().copied().collect();
        bm.insert_range(100_000..100_000 + dense);
        let bytes = encode_roaring32(&bm);
        prop_assert_eq!(&bytes[..4], &[0x3a, 0x30, 0, 0]);
        prop_assert_eq!(decode_roaring32(&bytes).unwrap(), bm);
        let tm: RoaringTreemap = values.iter().zip(high.iter().cycle()).map(|(v, h)| (h << 32) | u64::from(*v)).collect();
        prop_assert_eq!(decode_treemap(&encode_treemap(&tm)).unwrap(), tm);
    }

    #[test]
    fn decoders_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..300)) {
        let _ = decode_roaring32(&bytes);
        let _ = decode_treemap(&bytes);
        let _ = RowAddrSet::decode(&bytes, "t");
    }
}
