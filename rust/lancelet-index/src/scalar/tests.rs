#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "tests: a failed unwrap is a failed test"
)]

use std::sync::Arc;

use arrow_schema::{DataType, Field};

use super::*;

#[test]
fn every_type_round_trips_through_the_table() {
    let params = ScalarParams::default();
    for kind in ScalarIndexType::ALL {
        assert_eq!(ScalarIndexType::parse(kind.name()).unwrap(), kind);
        assert_eq!(ScalarIndexType::parse(&kind.name().to_lowercase()).unwrap(), kind);
        assert_eq!(ScalarIndexType::parse(kind.display_name()).unwrap(), kind);
        assert_eq!(ScalarIndexType::from_type_url(kind.type_url()), Some(kind));
        let bare = kind.type_url().trim_start_matches('/');
        assert_eq!(
            ScalarIndexType::from_type_url(&format!("type.googleapis.com/{bare}")),
            Some(kind)
        );
        assert!(kind.type_url().starts_with('/'));
        assert!(!kind.files().is_empty());
        let details = kind.details(&params);
        assert_eq!(details.is_empty(), kind != ScalarIndexType::ZoneMap);
        assert_eq!(kind.index_version(), i32::from(kind == ScalarIndexType::LabelList));
    }
    assert!(ScalarIndexType::parse("INVERTED").is_err());
    assert_eq!(
        ScalarIndexType::from_type_url("/lance.table.InvertedIndexDetails"),
        None
    );
}

#[test]
fn table_values_match_the_facts() {
    use ScalarIndexType::*;
    let rows = [
        (BTree, "BTREE", "BTree", "/lance.table.BTreeIndexDetails"),
        (Bitmap, "BITMAP", "Bitmap", "/lance.table.BitmapIndexDetails"),
        (
            LabelList,
            "LABEL_LIST",
            "LabelList",
            "/lance.table.LabelListIndexDetails",
        ),
        (ZoneMap, "ZONEMAP", "ZoneMap", "/lance.table.ZoneMapIndexDetails"),
        (NGram, "NGRAM", "NGram", "/lance.table.NGramIndexDetails"),
        (
            BloomFilter,
            "BLOOMFILTER",
            "BloomFilter",
            "/lance.index.pb.BloomFilterIndexDetails",
        ),
    ];
    for (kind, name, display, url) in rows {
        assert_eq!(
            (kind.name(), kind.display_name(), kind.type_url()),
            (name, display, url)
        );
    }
    // {1: 8192, 2: 0, 3: 1}
    assert_eq!(
        ZoneMap.details(&ScalarParams::default()),
        vec![0x08, 0x80, 0x40, 0x10, 0x00, 0x18, 0x01]
    );
    assert_eq!(BTree.files(), &["page_data.lance", "page_lookup.lance"]);
}

#[test]
fn accepted_column_types() {
    use ScalarIndexType::*;
    let list = |dt: DataType| DataType::List(Arc::new(Field::new("item", dt, true)));
    let cases = [
        (DataType::Int64, [true, true, false, true, false, true]),
        (DataType::Utf8, [true, true, false, true, true, true]),
        (DataType::Boolean, [true, true, false, true, false, false]),
        (DataType::Decimal128(10, 2), [true, true, false, true, false, false]),
        (DataType::FixedSizeBinary(4), [true, true, false, true, false, false]),
        (list(DataType::Utf8), [false, false, true, false, false, false]),
        (DataType::Struct(Default::default()), [false; 6]),
    ];
    for (dt, expect) in cases {
        let got: Vec<bool> = ScalarIndexType::ALL.iter().map(|k| k.supports(&dt)).collect();
        assert_eq!(got, expect, "{dt}");
    }
    assert!(BTree.check_supports(&list(DataType::Int64)).is_err());
    assert!(NGram.supports(&DataType::LargeUtf8));
}

#[test]
fn trigram_codes() {
    // "Hello" -> hel ell llo; digits are 1..10, letters 11..36.
    let t: Vec<u32> = ngram::trigrams("Hello").into_iter().collect();
    let code = |s: &str| {
        s.chars()
            .map(|c| {
                if c.is_ascii_digit() {
                    c as u32 - '0' as u32 + 1
                } else {
                    c as u32 - 'a' as u32 + 11
                }
            })
            .fold(0, |acc, d| acc * 37 + d)
    };
    let mut expect = vec![code("hel"), code("ell"), code("llo")];
    expect.sort();
    assert_eq!(t, expect);
    // pylance's tokens seen in exp: abc = 15516, ab1 = 15505; accents fold, '_' and '-' split.
    assert_eq!(code("abc"), 15516);
    assert!(ngram::trigrams("x_yz-abc Ab1").iter().eq([15505, 15516].iter()));
    assert!(ngram::trigrams("Ünïcödé").contains(&code("uni")));
    assert!(ngram::trigrams("日本語 ab").is_empty());
}
