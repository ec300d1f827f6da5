//! Nothing may panic: random SQL over a batch with every supported column type either
//! evaluates or returns an `Error`.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test helpers outside #[test] functions fail loudly"
)]

use std::sync::Arc;

use arrow_array::builder::StringDictionaryBuilder;
use arrow_array::types::Int16Type;
use arrow_array::{
    ArrayRef, BinaryArray, BooleanArray, Date32Array, Date64Array, Decimal128Array, FixedSizeBinaryArray, Float32Array,
    Float64Array, Int16Array, Int32Array, Int64Array, Int8Array, LargeBinaryArray, LargeStringArray, NullArray,
    RecordBatch, StringArray, StringViewArray, StructArray, TimestampMillisecondArray, TimestampNanosecondArray,
    TimestampSecondArray, UInt16Array, UInt32Array, UInt64Array, UInt8Array,
};
use arrow_buffer::NullBuffer;
use arrow_schema::{DataType, Field, Fields, Schema};
use lancelet_expr::{parse, Error};
use proptest::prelude::*;

fn everything() -> RecordBatch {
    let n = 5;
    let mut dict = StringDictionaryBuilder::<Int16Type>::new();
    for v in [Some("x"), None, Some("yy"), Some("x"), Some("")] {
        match v {
            Some(v) => dict.append_value(v),
            None => dict.append_null(),
        }
    }
    let inner = Fields::from(vec![
        Field::new("d", DataType::Utf8, true),
        Field::new("n", DataType::Int32, true),
    ]);
    let st = StructArray::new(
        inner.clone(),
        vec![
            Arc::new(StringArray::from(vec![
                Some("a"),
                None,
                Some("c"),
                Some("d"),
                Some("e"),
            ])) as ArrayRef,
            Arc::new(Int32Array::from(vec![Some(1), Some(0), None, Some(-1), Some(i32::MIN)])),
        ],
        Some(NullBuffer::from(vec![true, true, false, true, true])),
    );
    let cols: Vec<(&str, ArrayRef)> = vec![
        (
            "i8",
            Arc::new(Int8Array::from(vec![
                Some(i8::MIN),
                Some(-1),
                None,
                Some(0),
                Some(i8::MAX),
            ])),
        ),
        ("i16", Arc::new(Int16Array::from(vec![1, 2, 3, 4, 0]))),
        (
            "i32",
            Arc::new(Int32Array::from(vec![Some(i32::MIN), Some(0), None, Some(7), Some(-7)])),
        ),
        (
            "i64",
            Arc::new(Int64Array::from(vec![
                Some(i64::MIN),
                Some(-1),
                None,
                Some(0),
                Some(i64::MAX),
            ])),
        ),
        ("u8", Arc::new(UInt8Array::from(vec![0, 1, 2, 255, 9]))),
        ("u16", Arc::new(UInt16Array::from(vec![0, 1, 2, 65535, 9]))),
        ("u32", Arc::new(UInt32Array::from(vec![0, 1, 2, u32::MAX, 9]))),
        ("u64", Arc::new(UInt64Array::from(vec![0, 1, 2, u64::MAX, 9]))),
        (
            "f16",
            arrow_cast::cast(
                &Float32Array::from(vec![Some(1.0), None, Some(-2.5), Some(f32::NAN), None]),
                &DataType::Float16,
            )
            .unwrap(),
        ),
        (
            "f32",
            Arc::new(Float32Array::from(vec![
                Some(f32::NAN),
                Some(-0.0),
                None,
                Some(1.5),
                Some(f32::INFINITY),
            ])),
        ),
        (
            "f64",
            Arc::new(Float64Array::from(vec![
                Some(f64::NAN),
                Some(0.0),
                None,
                Some(-1.5),
                Some(1e308),
            ])),
        ),
        (
            "b",
            Arc::new(BooleanArray::from(vec![
                Some(true),
                Some(false),
                None,
                Some(true),
                Some(false),
            ])),
        ),
        (
            "s",
            Arc::new(StringArray::from(vec![
                Some("a"),
                Some(""),
                None,
                Some("é%_\\"),
                Some("123"),
            ])),
        ),
        (
            "ls",
            Arc::new(LargeStringArray::from(vec![
                Some("a"),
                Some(""),
                None,
                Some("Z"),
                Some("2024-01-01"),
            ])),
        ),
        (
            "sv",
            Arc::new(StringViewArray::from(vec![
                Some("a"),
                Some("a long string value here"),
                None,
                Some(""),
                Some("1"),
            ])),
        ),
        (
            "bin",
            Arc::new(BinaryArray::from(vec![
                Some(b"a".as_slice()),
                None,
                Some(b""),
                Some(b"\xff"),
                Some(b"ab"),
            ])),
        ),
        (
            "lbin",
            Arc::new(LargeBinaryArray::from(vec![
                Some(b"a".as_slice()),
                None,
                Some(b""),
                Some(b"\xff"),
                Some(b"ab"),
            ])),
        ),
        (
            "fsb",
            Arc::new(
                FixedSizeBinaryArray::try_from_sparse_iter_with_size(
                    vec![
                        Some(b"ab".to_vec()),
                        None,
                        Some(b"cd".to_vec()),
                        Some(b"ab".to_vec()),
                        Some(b"zz".to_vec()),
                    ]
                    .into_iter(),
                    2,
                )
                .unwrap(),
            ),
        ),
        (
            "d32",
            Arc::new(Date32Array::from(vec![
                Some(0),
                Some(-1),
                None,
                Some(19723),
                Some(i32::MAX / 2),
            ])),
        ),
        (
            "d64",
            Arc::new(Date64Array::from(vec![
                Some(0),
                Some(86_400_000),
                None,
                Some(-86_400_000),
                Some(1),
            ])),
        ),
        (
            "tss",
            Arc::new(TimestampSecondArray::from(vec![
                Some(0),
                Some(-1),
                None,
                Some(1_704_103_200),
                Some(i64::MAX / 2),
            ])),
        ),
        (
            "tsms_utc",
            Arc::new(
                TimestampMillisecondArray::from(vec![Some(0), Some(1), None, Some(-1), Some(1_704_103_200_000)])
                    .with_timezone("UTC"),
            ),
        ),
        (
            "tsns_tz",
            Arc::new(
                TimestampNanosecondArray::from(vec![Some(0), Some(1), None, Some(i64::MIN + 1), Some(i64::MAX)])
                    .with_timezone("+05:30"),
            ),
        ),
        (
            "dec",
            Arc::new(
                Decimal128Array::from(vec![Some(0), Some(-150), None, Some(9_999_999_999), Some(1)])
                    .with_precision_and_scale(10, 2)
                    .unwrap(),
            ),
        ),
        ("dict", Arc::new(dict.finish())),
        ("st", Arc::new(st)),
        ("nul", Arc::new(NullArray::new(n))),
    ];
    let fields: Vec<Field> = cols
        .iter()
        .map(|(name, a)| Field::new(*name, a.data_type().clone(), true))
        .collect();
    RecordBatch::try_new(
        Arc::new(Schema::new(fields)),
        cols.into_iter().map(|(_, a)| a).collect(),
    )
    .unwrap()
}

const COLUMNS: &[&str] = &[
    "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "f16", "f32", "f64", "b", "s", "ls", "sv", "bin", "lbin",
    "fsb", "d32", "d64", "tss", "tsms_utc", "tsns_tz", "dec", "dict", "st", "st.d", "st.n", "nul", "ID", "`st`.`n`",
    "missing",
];

const ATOMS: &[&str] = &[
    "0",
    "1",
    "-1",
    "2.5",
    "-0.0",
    "1e300",
    "9223372036854775807",
    "-9223372036854775808",
    "18446744073709551615",
    "'a'",
    "''",
    "'2024-01-01'",
    "'%a_'",
    "X'ff'",
    "X'6162'",
    "TRUE",
    "FALSE",
    "NULL",
    "DATE '2024-01-01'",
    "TIMESTAMP '2024-01-01 10:00:00'",
    "TIMESTAMP '1900-01-01 00:00:00.123456789'",
    "TIMESTAMP(3) '2024-01-01 10:00:00.5'",
    "TIMESTAMP(0) '2024-01-01 10:00:00'",
    "'$.a'",
    "'$.c[*]'",
    "'{\"a\": [1, 2.5, \"x\"], \"b\": {\"c\": true}}'",
    "'[1, \"two\"]'",
    "'Int32'",
    "'Utf8'",
    "'Timestamp(Millisecond, None)'",
    "[1, 2, 3]",
    "current_date",
    "now()",
    "'year'",
    "'day'",
    "'epoch'",
];

const TYPES: &[&str] = &[
    "int",
    "bigint unsigned",
    "tinyint",
    "double",
    "float",
    "string",
    "binary",
    "boolean",
    "date",
    "timestamp",
    "timestamp(9)",
    "decimal(5, 2)",
    "decimal(38, 0)",
];

fn arb_sql() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        proptest::sample::select(COLUMNS).prop_map(str::to_string),
        proptest::sample::select(ATOMS).prop_map(str::to_string),
    ];
    leaf.prop_recursive(4, 24, 3, |inner| {
        let binop = proptest::sample::select(
            &[
                "=", "!=", "<", "<=", ">", ">=", "AND", "OR", "+", "-", "*", "/", "%", "||",
            ][..],
        );
        let func = proptest::sample::select(
            &[
                "lower",
                "upper",
                "length",
                "starts_with",
                "ends_with",
                "contains",
                "regexp_like",
                "regexp_match",
                "abs",
                "coalesce",
                "isnan",
                "array_element",
                "get_field",
                "arrow_cast",
                "json_extract",
                "json_exists",
                "json_get",
                "json_get_string",
                "json_get_int",
                "json_get_float",
                "json_get_bool",
                "json_array_contains",
                "json_array_length",
                "today",
                "concat",
                "concat_ws",
                "replace",
                "split_part",
                "left",
                "right",
                "lpad",
                "rpad",
                "btrim",
                "strpos",
                "reverse",
                "repeat",
                "initcap",
                "ascii",
                "chr",
                "octet_length",
                "to_hex",
                "translate",
                "md5",
                "round",
                "trunc",
                "sqrt",
                "power",
                "log",
                "atan2",
                "signum",
                "nanvl",
                "iszero",
                "gcd",
                "lcm",
                "factorial",
                "nullif",
                "nvl",
                "nvl2",
                "greatest",
                "least",
                "date_part",
                "date_trunc",
                "nope",
            ][..],
        );
        prop_oneof![
            (inner.clone(), binop, inner.clone()).prop_map(|(l, op, r)| format!("({l}) {op} ({r})")),
            inner.clone().prop_map(|e| format!("NOT ({e})")),
            inner.clone().prop_map(|e| format!("-({e})")),
            inner.clone().prop_map(|e| format!("({e}) IS NULL")),
            inner.clone().prop_map(|e| format!("({e}) IS NOT TRUE")),
            (
                inner.clone(),
                proptest::collection::vec(inner.clone(), 1..20),
                any::<bool>()
            )
                .prop_map(|(e, l, n)| format!(
                    "({e}) {}IN ({})",
                    if n { "NOT " } else { "" },
                    l.join(", ")
                )),
            (inner.clone(), inner.clone(), inner.clone())
                .prop_map(|(e, a, b)| format!("({e}) BETWEEN ({a}) AND ({b})")),
            (inner.clone(), inner.clone(), any::<bool>())
                .prop_map(|(e, p, i)| format!("({e}) {} ({p})", if i { "ILIKE" } else { "LIKE" })),
            (inner.clone(), proptest::sample::select(TYPES)).prop_map(|(e, t)| format!("CAST(({e}) AS {t})")),
            (inner.clone(), proptest::sample::select(TYPES)).prop_map(|(e, t)| format!("TRY_CAST(({e}) AS {t})")),
            (inner.clone(), inner.clone()).prop_map(|(e, i)| format!("({e})[{i}]")),
            inner.clone().prop_map(|e| format!("({e})['d']")),
            inner.clone().prop_map(|e| format!("({e})[-1].n")),
            (func, proptest::collection::vec(inner, 0..4)).prop_map(|(f, a)| format!("{f}({})", a.join(", "))),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4000))]

    #[test]
    fn bind_and_evaluate_never_panic(sql in arb_sql()) {
        let batch = everything();
        let expr = parse(&sql);
        prop_assert!(expr.is_ok(), "{sql}: {:?}", expr.err());
        if let Ok(bound) = expr.unwrap().bind(&batch.schema()) {
            if let Ok(out) = bound.evaluate(&batch) {
                prop_assert_eq!(out.len(), batch.num_rows());
                prop_assert_eq!(out.data_type(), bound.data_type(), "{}", sql);
            }
            let _ = bound.evaluate_predicate(&batch);
            let _ = bound.evaluate(&batch.slice(1, 3));
            // The bound form prints and parses back.
            let printed = bound.expr().to_string();
            prop_assert!(parse(&printed).is_ok(), "{} -> {}", sql, printed);
        }
    }

    #[test]
    fn arbitrary_text_never_panics(s in "\\PC{0,80}") {
        let batch = everything();
        if let Ok(e) = parse(&s) {
            if let Ok(b) = e.bind(&batch.schema()) {
                let _ = b.evaluate(&batch);
            }
        }
    }
}

#[test]
fn errors_are_typed_and_readable() {
    let batch = everything();
    let schema = batch.schema();
    let bind = |sql: &str| parse(sql).and_then(|e| e.bind(&schema));
    assert!(matches!(bind("missing = 1"), Err(Error::UnknownColumn { .. })));
    assert!(matches!(bind("st.zz = 1"), Err(Error::UnknownColumn { .. })));
    assert!(matches!(bind("nope(1)"), Err(Error::UnknownFunction { .. })));
    assert!(matches!(bind("s + 1"), Err(Error::Type(_))));
    assert!(matches!(bind("a ="), Err(Error::Parse { .. })));
    let r = bind("i64 / 0").and_then(|b| b.evaluate(&batch));
    assert!(matches!(r, Err(Error::DivideByZero)), "{r:?}");
    let r = bind("i64 % (i16 - i16)").and_then(|b| b.evaluate(&batch));
    assert!(matches!(r, Err(Error::DivideByZero)), "{r:?}");
    for e in [
        bind("missing = 1").unwrap_err(),
        bind("a =").unwrap_err(),
        bind("s > 5").unwrap_err(),
        bind("nope(1)").unwrap_err(),
    ] {
        let shown = e.to_string();
        assert!(!shown.is_empty() && !shown.contains("src/"), "{shown}");
    }
}

#[test]
fn null_typed_casts_print_and_parse_back() {
    let batch = everything();
    let bound = parse("NOT ((nul) IN (NULL))").unwrap().bind(&batch.schema()).unwrap();
    let printed = bound.expr().to_string();
    let again = parse(&printed).unwrap_or_else(|e| panic!("{printed}: {e}"));
    assert_eq!(again.to_string(), printed);
    assert_eq!(parse("CAST(1 AS NULL)").unwrap().to_string(), "CAST(1 AS NULL)");
}
