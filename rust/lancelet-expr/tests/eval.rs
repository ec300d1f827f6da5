//! Evaluation tests: one section per SQL feature, with NULL semantics throughout.
//!
//! Expected results were checked against pylance (Lance's DataFusion-based planner) where the
//! behaviour is not obvious; those cases say so.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test helpers outside #[test] functions fail loudly"
)]

use std::sync::Arc;

use arrow_array::builder::StringDictionaryBuilder;
use arrow_array::cast::AsArray;
use arrow_array::types::{Int32Type, Int8Type};
use arrow_array::{
    Array, ArrayRef, BinaryArray, BooleanArray, Date32Array, Decimal128Array, DictionaryArray, Float32Array,
    Float64Array, Int32Array, Int64Array, Int8Array, LargeStringArray, NullArray, RecordBatch, StringArray,
    StringViewArray, StructArray, TimestampMicrosecondArray, TimestampNanosecondArray, TimestampSecondArray,
    UInt64Array, UInt8Array,
};
use arrow_buffer::NullBuffer;
use arrow_schema::{DataType, Field, Fields, Schema};
use lancelet_expr::{parse, Error};

fn batch(cols: Vec<(&str, ArrayRef)>) -> RecordBatch {
    let fields: Vec<Field> = cols
        .iter()
        .map(|(n, a)| Field::new(*n, a.data_type().clone(), true))
        .collect();
    RecordBatch::try_new(
        Arc::new(Schema::new(fields)),
        cols.into_iter().map(|(_, a)| a).collect(),
    )
    .unwrap()
}

fn eval(b: &RecordBatch, sql: &str) -> ArrayRef {
    let bound = parse(sql)
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
        .bind(&b.schema())
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
    let out = bound.evaluate(b).unwrap_or_else(|e| panic!("{sql}: {e}"));
    assert_eq!(out.len(), b.num_rows(), "{sql}");
    assert_eq!(out.data_type(), bound.data_type(), "{sql}");
    out
}

/// Three-valued result of a boolean expression.
fn tv(b: &RecordBatch, sql: &str) -> Vec<Option<bool>> {
    eval(b, sql).as_boolean().iter().collect()
}

/// Indices of rows the filter keeps.
fn rows(b: &RecordBatch, sql: &str) -> Vec<usize> {
    let bound = parse(sql)
        .unwrap()
        .bind(&b.schema())
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
    let mask = bound.evaluate_predicate(b).unwrap_or_else(|e| panic!("{sql}: {e}"));
    assert_eq!(mask.null_count(), 0);
    mask.iter()
        .enumerate()
        .filter(|(_, v)| *v == Some(true))
        .map(|(i, _)| i)
        .collect()
}

fn bind_err(b: &RecordBatch, sql: &str) -> Error {
    match parse(sql).unwrap_or_else(|e| panic!("{sql}: {e}")).bind(&b.schema()) {
        Err(e) => e,
        Ok(x) => panic!("{sql}: expected a bind error, bound to {}", x.expr()),
    }
}

fn ints() -> RecordBatch {
    batch(vec![
        ("id", Arc::new(Int64Array::from(vec![Some(1), Some(2), Some(3), None]))),
        (
            "i32",
            Arc::new(Int32Array::from(vec![Some(1), Some(2), Some(3), Some(4)])),
        ),
        ("u8", Arc::new(UInt8Array::from(vec![1, 2, 3, 200]))),
        ("i8", Arc::new(Int8Array::from(vec![1, -2, 127, 0]))),
        (
            "f",
            Arc::new(Float64Array::from(vec![Some(1.5), Some(2.0), Some(f64::NAN), None])),
        ),
        (
            "f32",
            Arc::new(Float32Array::from(vec![Some(1.5), Some(2.5), None, Some(f32::NAN)])),
        ),
        ("u64", Arc::new(UInt64Array::from(vec![1, 2, (1 << 63) + 5, 0]))),
        (
            "name",
            Arc::new(StringArray::from(vec![Some("a"), Some("B"), Some("abc"), None])),
        ),
        (
            "b",
            Arc::new(BooleanArray::from(vec![Some(true), Some(false), None, Some(true)])),
        ),
    ])
}

#[test]
fn comparisons() {
    let b = ints();
    assert_eq!(rows(&b, "id > 1"), vec![1, 2]);
    assert_eq!(rows(&b, "id >= 2"), vec![1, 2]);
    assert_eq!(rows(&b, "id < 2"), vec![0]);
    assert_eq!(rows(&b, "id <= 2"), vec![0, 1]);
    assert_eq!(rows(&b, "id = 2"), vec![1]);
    assert_eq!(rows(&b, "id == 2"), vec![1]);
    assert_eq!(rows(&b, "id != 2"), vec![0, 2]);
    assert_eq!(rows(&b, "id <> 2"), vec![0, 2]);
    assert_eq!(rows(&b, "2 < id"), vec![2]);
    assert_eq!(rows(&b, "i32 = 3"), vec![2]);
    assert_eq!(rows(&b, "id = i32"), vec![0, 1, 2]);
    assert_eq!(rows(&b, "i32 > id"), Vec::<usize>::new());
    assert_eq!(rows(&b, "u8 > 100"), vec![3]);
    assert_eq!(rows(&b, "name = 'a'"), vec![0]);
    assert_eq!(rows(&b, "name > 'a'"), vec![2]);
    assert_eq!(rows(&b, "b"), vec![0, 3]);
    assert_eq!(rows(&b, "b = true"), vec![0, 3]);
    assert_eq!(rows(&b, "NOT b"), vec![1]);
    // Literal-only comparisons, as in pylance.
    assert_eq!(rows(&b, "1 = 1.0"), vec![0, 1, 2, 3]);
    assert_eq!(rows(&b, "true"), vec![0, 1, 2, 3]);
    assert_eq!(rows(&b, "1 > 2"), Vec::<usize>::new());
}

#[test]
fn literal_coercion_to_column_type() {
    let b = ints();
    let bound = parse("i32 = 5").unwrap().bind(&b.schema()).unwrap();
    assert_eq!(bound.expr().to_string(), "i32 = CAST(5 AS INT)");
    // Int literal against floats; float literal against float32 (pylance: f32 > 1.6 keeps 2.5 and NaN).
    assert_eq!(rows(&b, "f > 1"), vec![0, 1, 2]);
    assert_eq!(rows(&b, "f = 2"), vec![1]);
    assert_eq!(rows(&b, "f32 > 1.6"), vec![1, 3]);
    assert_eq!(rows(&b, "f32 = 1.5"), vec![0]);
    // u64 literal beyond i64.
    assert_eq!(rows(&b, "u64 > 9223372036854775808"), vec![2]);
    assert_eq!(rows(&b, "u64 = 9223372036854775813"), vec![2]);
}

#[test]
fn literal_coercion_errors_match_lance() {
    let b = ints();
    for sql in [
        "i32 > 1.5", // float literal vs int column
        "id = 2.0",  // even when integral
        "u8 > -1",   // out of range for UInt8
        "u8 = 300",
        "i32 = 3000000000",
        "u64 > -1",
        "name > 5", // string column vs number
        "name = 5",
        "id = '2'", // number column vs string
        "id IN (1, 2.5)",
        "id IN (1, 'a')",
        "id BETWEEN 1 AND 2.5",
    ] {
        let err = bind_err(&b, sql);
        assert!(matches!(err, Error::Type(_)), "{sql}: {err}");
    }
    let msg = bind_err(&b, "name > 5").to_string();
    assert!(
        msg.contains("column name") && msg.contains("Utf8") && msg.contains("Int64"),
        "{msg}"
    );
    let msg = bind_err(&b, "u8 = 300").to_string();
    assert!(
        msg.contains("column u8") && msg.contains("out of range for UInt8"),
        "{msg}"
    );
    let msg = bind_err(&b, "i32 > 1.5").to_string();
    assert!(msg.contains("CAST(i32 AS DOUBLE)"), "{msg}");
    // A non-column expression is widened instead (DataFusion coercion): pylance accepts this.
    assert_eq!(rows(&b, "i32 + 1.5 > 3"), vec![1, 2, 3]);
    assert_eq!(rows(&b, "abs(i32) > 3000000000"), Vec::<usize>::new());
}

#[test]
fn null_semantics() {
    let b = ints();
    assert_eq!(tv(&b, "id = NULL"), vec![None; 4]);
    assert_eq!(rows(&b, "id = NULL"), Vec::<usize>::new());
    assert_eq!(rows(&b, "id != NULL"), Vec::<usize>::new());
    assert_eq!(tv(&b, "NOT (id > 1)"), vec![Some(true), Some(false), Some(false), None]);
    assert_eq!(rows(&b, "NOT (id > 1)"), vec![0]);
    assert_eq!(rows(&b, "id IS NULL"), vec![3]);
    assert_eq!(rows(&b, "id IS NOT NULL"), vec![0, 1, 2]);
    assert_eq!(tv(&b, "id > 1 AND NULL"), vec![Some(false), None, None, None]);
    assert_eq!(tv(&b, "id > 1 OR NULL"), vec![None, Some(true), Some(true), None]);
    assert_eq!(
        tv(&b, "id > 1 OR id IS NULL"),
        vec![Some(false), Some(true), Some(true), Some(true)]
    );
    assert_eq!(
        tv(&b, "id > 1 AND id IS NULL"),
        vec![Some(false), Some(false), Some(false), None]
    );
    assert_eq!(rows(&b, "true AND NULL"), Vec::<usize>::new());
    assert_eq!(rows(&b, "NOT NULL"), Vec::<usize>::new());
    assert_eq!(tv(&b, "NULL IS NULL"), vec![Some(true); 4]);
    assert_eq!(eval(&b, "id + NULL").null_count(), 4);
}

#[test]
fn is_true_false() {
    let b = ints();
    assert_eq!(rows(&b, "(id > 1) IS TRUE"), vec![1, 2]);
    assert_eq!(rows(&b, "(id > 1) IS FALSE"), vec![0]);
    assert_eq!(rows(&b, "(id > 1) IS NOT TRUE"), vec![0, 3]);
    assert_eq!(rows(&b, "(id > 1) IS NOT FALSE"), vec![1, 2, 3]);
    assert_eq!(eval(&b, "b IS TRUE").null_count(), 0);
    assert!(matches!(bind_err(&b, "name IS NOT FALSE"), Error::Type(_)));
}

#[test]
fn in_lists() {
    let b = ints();
    assert_eq!(rows(&b, "id IN (1, 3)"), vec![0, 2]);
    assert_eq!(rows(&b, "id NOT IN (1)"), vec![1, 2]);
    assert_eq!(rows(&b, "NOT id IN (1)"), vec![1, 2]);
    // pylance: IN (1, NULL) keeps 1; NOT IN (1, NULL) keeps nothing.
    assert_eq!(tv(&b, "id IN (1, NULL)"), vec![Some(true), None, None, None]);
    assert_eq!(rows(&b, "id NOT IN (1, NULL)"), Vec::<usize>::new());
    assert_eq!(rows(&b, "id IN (i32, 7)"), vec![0, 1, 2]);
    assert_eq!(rows(&b, "name IN ('a', 'abc')"), vec![0, 2]);
    assert_eq!(rows(&b, "i32 IN (2)"), vec![1]);
    assert_eq!(rows(&b, "f IN (2, 1.5)"), vec![0, 1]);
}

#[test]
fn long_in_lists_use_the_hash_path() {
    let n = 1000;
    let b = batch(vec![
        (
            "x",
            Arc::new(Int32Array::from_iter((0..n).map(|i| {
                if i % 7 == 0 {
                    None
                } else {
                    Some(i)
                }
            }))),
        ),
        (
            "s",
            Arc::new(StringArray::from_iter((0..n).map(|i| Some(format!("v{i}"))))),
        ),
        (
            "f",
            Arc::new(Float64Array::from_iter_values((0..n).map(|i| f64::from(i) / 2.0))),
        ),
    ]);
    let list: Vec<String> = (0..40).map(|i| (i * 3).to_string()).collect();
    let sql = format!("x IN ({})", list.join(", "));
    let expected: Vec<usize> = (0..n as usize)
        .filter(|i| i % 7 != 0 && i % 3 == 0 && *i < 120)
        .collect();
    assert_eq!(rows(&b, &sql), expected);
    // Same answer as the OR-of-equalities path.
    let ors = list.iter().map(|v| format!("x = {v}")).collect::<Vec<_>>().join(" OR ");
    assert_eq!(tv(&b, &sql), tv(&b, &format!("({ors})")));
    let not_sql = format!("x NOT IN ({})", list.join(", "));
    assert_eq!(tv(&b, &not_sql), tv(&b, &format!("NOT ({ors})")));
    // With a NULL in the list, misses are NULL.
    let with_null = format!("x IN ({}, NULL)", list.join(", "));
    let out = tv(&b, &with_null);
    assert_eq!(out[3], Some(true));
    assert_eq!(out[1], None);
    assert_eq!(out[0], None);
    // Strings and floats.
    let strs: Vec<String> = (0..30).map(|i| format!("'v{}'", i * 10)).collect();
    assert_eq!(rows(&b, &format!("s IN ({})", strs.join(", "))).len(), 30);
    let floats: Vec<String> = (0..30).map(|i| format!("{}.5", i)).collect();
    assert_eq!(
        rows(&b, &format!("f IN ({})", floats.join(", "))),
        (0..30).map(|i| 2 * i + 1).collect::<Vec<_>>()
    );
    // Too-large constants are rejected like single comparisons.
    let bad = format!("x IN ({}, 3000000000)", list.join(", "));
    assert!(matches!(bind_err(&b, &bad), Error::Type(_)));
}

#[test]
fn between() {
    let b = ints();
    assert_eq!(rows(&b, "id BETWEEN 1 AND 2"), vec![0, 1]);
    assert_eq!(rows(&b, "id NOT BETWEEN 1 AND 2"), vec![2]);
    assert_eq!(rows(&b, "id BETWEEN 2 AND 1"), Vec::<usize>::new());
    assert_eq!(tv(&b, "id BETWEEN 1 AND NULL"), vec![None, None, None, None]);
    assert_eq!(tv(&b, "id BETWEEN 2 AND NULL"), vec![Some(false), None, None, None]);
    assert_eq!(rows(&b, "name BETWEEN 'a' AND 'b'"), vec![0, 2]);
    assert_eq!(rows(&b, "i32 BETWEEN id AND id + 1"), vec![0, 1, 2]);
}

#[test]
fn like_and_ilike() {
    let b = ints();
    assert_eq!(rows(&b, "name LIKE 'a%'"), vec![0, 2]);
    assert_eq!(rows(&b, "name LIKE 'A%'"), Vec::<usize>::new());
    assert_eq!(rows(&b, "name ILIKE 'a%'"), vec![0, 2]);
    assert_eq!(rows(&b, "name ILIKE 'b'"), vec![1]);
    assert_eq!(rows(&b, "name NOT LIKE 'a%'"), vec![1]);
    assert_eq!(rows(&b, "name NOT ILIKE 'a%'"), vec![1]);
    assert_eq!(rows(&b, "name LIKE 'a_c'"), vec![2]);
    assert_eq!(rows(&b, "name LIKE '_'"), vec![0, 1]);
    assert_eq!(tv(&b, "name LIKE NULL"), vec![None; 4]);
    let pct = batch(vec![(
        "s",
        Arc::new(StringArray::from(vec!["100%", "100", "a_b", "axb", "back\\slash"])) as ArrayRef,
    )]);
    assert_eq!(rows(&pct, "s LIKE '100\\%'"), vec![0]);
    assert_eq!(rows(&pct, "s LIKE '100!%' ESCAPE '!'"), vec![0]);
    assert_eq!(rows(&pct, "s LIKE 'a!_b' ESCAPE '!'"), vec![2]);
    assert_eq!(rows(&pct, "s LIKE 'a_b'"), vec![2, 3]);
    assert_eq!(rows(&pct, "s LIKE 'back\\%' ESCAPE '!'"), vec![4]);
    assert!(matches!(bind_err(&b, "id LIKE 'a%'"), Error::Type(_)));
}

#[test]
fn arithmetic() {
    let b = ints();
    // Integer division truncates; % follows the dividend (pylance: -7 / 2 = -3, -7 % 2 = -1).
    let out = eval(&b, "id / 2");
    assert_eq!(
        out.as_primitive::<arrow_array::types::Int64Type>()
            .iter()
            .collect::<Vec<_>>(),
        vec![Some(0), Some(1), Some(1), None]
    );
    assert_eq!(rows(&b, "-7 / 2 = -3"), vec![0, 1, 2, 3]);
    assert_eq!(rows(&b, "-7 % 2 = -1"), vec![0, 1, 2, 3]);
    assert_eq!(rows(&b, "id % 2 = 1"), vec![0, 2]);
    assert_eq!(rows(&b, "id * 2 + 1 = 5"), vec![1]);
    assert_eq!(rows(&b, "i32 - id = 0"), vec![0, 1, 2]);
    assert_eq!(rows(&b, "-id < -1"), vec![1, 2]);
    assert_eq!(rows(&b, "- id < -1"), vec![1, 2]);
    // int8 + int8 stays int8 and wraps (pylance: [2, -4, -2]).
    let out = eval(&b, "i8 + i8");
    assert_eq!(out.data_type(), &DataType::Int8);
    assert_eq!(out.as_primitive::<Int8Type>().values().to_vec(), vec![2, -4, -2, 0]);
    // int8 * literal widens to Int64 (as in pylance filters: i8 * 100 > 1000 keeps 127).
    assert_eq!(eval(&b, "i8 * 100").data_type(), &DataType::Int64);
    assert_eq!(rows(&b, "i8 * 100 > 1000"), vec![2]);
    // int with float -> float64.
    assert_eq!(eval(&b, "i32 + 1.5").data_type(), &DataType::Float64);
    assert_eq!(eval(&b, "i32 * f32").data_type(), &DataType::Float32);
    // Int64 with UInt64 -> Decimal128 (pylance: a + u64 is decimal128(21, 0)).
    assert_eq!(eval(&b, "id + u64").data_type(), &DataType::Decimal128(21, 0));
    assert_eq!(rows(&b, "id + u64 > 3"), vec![1, 2]);
    assert_eq!(eval(&b, "u8 + 1").data_type(), &DataType::Int64);
    // Float division by zero is inf/NaN, not an error (pylance: f / 0 > 1 keeps NaN and finite rows).
    assert_eq!(rows(&b, "f / 0 > 1"), vec![0, 1, 2]);
    assert_eq!(eval(&b, "f % 2").data_type(), &DataType::Float64);
    assert_eq!(rows(&b, "NULL + 1 IS NULL"), vec![0, 1, 2, 3]);
}

#[test]
fn divide_by_zero_is_an_error() {
    let b = ints();
    for sql in ["id / 0 = 1", "i32 / 0", "id % 0", "i32 / (id - id)", "1 / 0"] {
        let result = parse(sql).unwrap().bind(&b.schema()).and_then(|x| x.evaluate(&b));
        assert!(matches!(result, Err(Error::DivideByZero)), "{sql}: {result:?}");
    }
    // Rows where the divisor is NULL are not divisions.
    let nulls = batch(vec![("d", Arc::new(Int32Array::from(vec![None, Some(2)])) as ArrayRef)]);
    assert_eq!(rows(&nulls, "10 / d = 5"), vec![1]);
}

#[test]
fn string_concat() {
    let b = ints();
    let out = eval(&b, "name || '!'");
    assert_eq!(
        out.as_string::<i32>().iter().collect::<Vec<_>>(),
        vec![Some("a!"), Some("B!"), Some("abc!"), None]
    );
    assert_eq!(rows(&b, "name || 'a' = 'aa'"), vec![0]);
    assert!(matches!(bind_err(&b, "id || 'a'"), Error::Type(_)));
}

#[test]
fn explicit_casts() {
    let b = ints();
    assert_eq!(rows(&b, "CAST(id AS string) = '1'"), vec![0]);
    assert_eq!(rows(&b, "TRY_CAST(f AS int) = 2"), vec![1]);
    assert_eq!(rows(&b, "i32::double = 1.0"), vec![0]);
    assert_eq!(rows(&b, "CAST(i32 AS decimal(5, 2)) = 1"), vec![0]);
    assert_eq!(
        rows(&b, "CAST('2024-01-01' AS date) = DATE '2024-01-01'"),
        vec![0, 1, 2, 3]
    );
    assert_eq!(eval(&b, "CAST(i32 AS tinyint unsigned)").data_type(), &DataType::UInt8);
    // A failing CAST is an error; TRY_CAST gives NULL (pylance behaves the same).
    let r = parse("CAST(name AS int) = 1")
        .unwrap()
        .bind(&b.schema())
        .unwrap()
        .evaluate(&b);
    assert!(matches!(r, Err(Error::Arrow(_))), "{r:?}");
    assert_eq!(rows(&b, "TRY_CAST(name AS int) IS NULL"), vec![0, 1, 2, 3]);
    let msg = bind_err(&b, "CAST(b AS date)").to_string();
    assert!(msg.contains("cannot cast column b"), "{msg}");
}

#[test]
fn case_insensitive_column_names() {
    // pylance: `ID > 1` and `Id > 1` find column `id`; with both `a` and `A`, each matches itself.
    let b = batch(vec![
        ("id", Arc::new(Int32Array::from(vec![1, 2, 3])) as ArrayRef),
        ("a", Arc::new(Int32Array::from(vec![1, 2, 3]))),
        ("A", Arc::new(Int32Array::from(vec![3, 2, 1]))),
        ("Bb", Arc::new(Int32Array::from(vec![1, 2, 3]))),
        ("cc", Arc::new(Int32Array::from(vec![1, 2, 3]))),
        ("CC", Arc::new(Int32Array::from(vec![1, 2, 3]))),
    ]);
    assert_eq!(rows(&b, "ID > 1"), vec![1, 2]);
    assert_eq!(rows(&b, "Id > 1"), vec![1, 2]);
    assert_eq!(rows(&b, "a = 1"), vec![0]);
    assert_eq!(rows(&b, "A = 1"), vec![2]);
    assert_eq!(rows(&b, "`A` = 1"), vec![2]);
    assert_eq!(rows(&b, "bb = 1"), vec![0]);
    assert_eq!(rows(&b, "BB = 1"), vec![0]);
    // The bound expression names the real column.
    assert_eq!(
        parse("BB = 1").unwrap().bind(&b.schema()).unwrap().expr().to_string(),
        "Bb = CAST(1 AS INT)"
    );
    let err = bind_err(&b, "Cc = 1");
    assert!(
        matches!(&err, Error::AmbiguousColumn { candidates, .. } if candidates.len() == 2),
        "{err}"
    );
}

#[test]
fn double_quotes_are_strings() {
    // pylance: `"Name" = 'a'` compares two strings (no rows); `"id" > 1` is an error.
    let b = ints();
    assert_eq!(rows(&b, "\"name\" = 'a'"), Vec::<usize>::new());
    assert_eq!(rows(&b, "\"a\" = 'a'"), vec![0, 1, 2, 3]);
    assert!(bind_err(&b, "\"id\" > 1").to_string().contains("cannot compare"));
}

fn nested() -> RecordBatch {
    // s: {b: int32, c: {d: utf8}}, rows: {1, {x}}, NULL, {3, NULL}, {NULL, {z}}
    let d = Arc::new(StringArray::from(vec![Some("x"), Some("y"), None, Some("z")])) as ArrayRef;
    let c_fields = Fields::from(vec![Field::new("d", DataType::Utf8, true)]);
    let c = StructArray::new(
        c_fields.clone(),
        vec![d],
        Some(NullBuffer::from(vec![true, true, false, true])),
    );
    let b = Arc::new(Int32Array::from(vec![Some(1), Some(2), Some(3), None])) as ArrayRef;
    let s_fields = Fields::from(vec![
        Field::new("b", DataType::Int32, true),
        Field::new("c", DataType::Struct(c_fields), true),
    ]);
    let s = StructArray::new(
        s_fields,
        vec![b, Arc::new(c)],
        Some(NullBuffer::from(vec![true, false, true, true])),
    );
    batch(vec![
        ("id", Arc::new(Int32Array::from(vec![1, 2, 3, 4])) as ArrayRef),
        ("s", Arc::new(s)),
        ("a.b", Arc::new(Int32Array::from(vec![10, 20, 30, 40]))),
        ("my col", Arc::new(Int32Array::from(vec![1, 2, 3, 4]))),
    ])
}

#[test]
fn nested_fields_and_quoted_names() {
    let b = nested();
    // pylance on the same data: s.b > 1 -> [3]; s.b IS NULL -> [2, 4]; s.c.d = 'x' -> [1];
    // s.c.d IS NULL -> [2, 3] (ids).
    assert_eq!(rows(&b, "s.b > 1"), vec![2]);
    assert_eq!(rows(&b, "s.b IS NULL"), vec![1, 3]);
    assert_eq!(rows(&b, "s.c.d = 'x'"), vec![0]);
    assert_eq!(rows(&b, "s.c.d IS NULL"), vec![1, 2]);
    assert_eq!(rows(&b, "S.b > 1"), vec![2]);
    assert_eq!(rows(&b, "`s`.`b` = 1"), vec![0]);
    assert_eq!(rows(&b, "s IS NULL"), vec![1]);
    assert_eq!(rows(&b, "`a.b` > 15"), vec![1, 2, 3]);
    assert_eq!(rows(&b, "a.b > 15"), vec![1, 2, 3]);
    assert_eq!(rows(&b, "`my col` = 2"), vec![1]);
    // Struct fields are case-sensitive, as in Lance.
    let err = bind_err(&b, "s.B > 1");
    assert!(
        matches!(&err, Error::UnknownColumn { available, .. } if available == &["s.b", "s.c"]),
        "{err}"
    );
    assert!(matches!(bind_err(&b, "id.x = 1"), Error::Type(_)));
    assert_eq!(
        parse("s.c.d = 'x'").unwrap().columns(),
        vec![vec!["s".to_string(), "c".to_string(), "d".to_string()]]
    );
    let v = eval(&b, "s.c.d");
    assert_eq!(
        v.as_string::<i32>().iter().collect::<Vec<_>>(),
        vec![Some("x"), None, None, Some("z")]
    );
}

#[test]
fn sliced_batches() {
    let b = nested().slice(1, 3);
    assert_eq!(rows(&b, "s.b > 1"), vec![1]);
    assert_eq!(rows(&b, "s.c.d IS NULL"), vec![0, 1]);
    let i = ints().slice(2, 2);
    assert_eq!(rows(&i, "id IS NULL OR name LIKE 'a%'"), vec![0, 1]);
}

#[test]
fn dates_and_timestamps() {
    let jan1 = 19723; // 2024-01-01
    let h10 = 1_704_103_200i64; // 2024-01-01 10:00:00 UTC
    let b = batch(vec![
        (
            "d",
            Arc::new(Date32Array::from(vec![
                Some(jan1),
                Some(jan1 + 1),
                None,
                Some(jan1 - 1),
            ])) as ArrayRef,
        ),
        (
            "ts",
            Arc::new(TimestampMicrosecondArray::from(vec![
                Some(h10 * 1_000_000),
                Some(h10 * 1_000_000 + 500_000),
                None,
                Some(1_672_531_200_000_000),
            ])),
        ),
        (
            "tstz",
            Arc::new(
                TimestampNanosecondArray::from(vec![
                    Some(h10 * 1_000_000_000),
                    Some((h10 + 3600) * 1_000_000_000),
                    None,
                    Some(1_672_531_200_000_000_000),
                ])
                .with_timezone("America/New_York"),
            ),
        ),
        (
            "tss",
            Arc::new(TimestampSecondArray::from(vec![
                Some(h10),
                Some(h10 + 3600),
                None,
                Some(1_672_531_200),
            ])),
        ),
    ]);
    // All of these match pylance on the same data.
    assert_eq!(rows(&b, "d = date '2024-01-01'"), vec![0]);
    assert_eq!(rows(&b, "d > DATE '2024-01-01'"), vec![1]);
    assert_eq!(rows(&b, "ts = timestamp '2024-01-01 10:00:00'"), vec![0]);
    assert_eq!(rows(&b, "ts > timestamp '2024-01-01 10:00:00'"), vec![1]);
    assert_eq!(rows(&b, "ts = timestamp '2024-01-01 10:00:00.5'"), vec![1]);
    assert_eq!(rows(&b, "ts = timestamp '2024-01-01T10:00:00.5'"), vec![1]);
    assert_eq!(rows(&b, "ts > date '2024-01-01'"), vec![0, 1]);
    // Seconds column: the literal is truncated to the column's unit.
    assert_eq!(rows(&b, "tss = timestamp '2024-01-01 10:00:00.7'"), vec![0]);
    assert_eq!(rows(&b, "tss > timestamp '2024-01-01 10:00:00.7'"), vec![1]);
    // Zoned column: a zone-less literal is wall-clock time in the column's zone (10:00Z is
    // 05:00 in New York).
    assert_eq!(rows(&b, "tstz = timestamp '2024-01-01 05:00:00'"), vec![0]);
    assert_eq!(rows(&b, "tstz = timestamp '2024-01-01 10:00:00'"), Vec::<usize>::new());
    assert_eq!(rows(&b, "tstz < timestamp '2024-01-01 10:00:00Z'"), vec![0, 1, 3]);
    assert_eq!(rows(&b, "tstz = timestamp '2024-01-01 00:00:00-05:00'"), vec![0]);
    assert_eq!(
        rows(
            &b,
            "ts BETWEEN timestamp '2024-01-01 00:00:00' AND timestamp '2024-01-02 00:00:00'"
        ),
        vec![0, 1]
    );
    assert_eq!(rows(&b, "d IN (DATE '2023-12-31', DATE '2024-01-02')"), vec![1, 3]);
    assert_eq!(rows(&b, "ts > tss"), Vec::<usize>::new());
    assert_eq!(rows(&b, "ts = tss"), vec![0, 3]);
    assert_eq!(rows(&b, "d < ts"), vec![0]);
    // Strings are not dates (pylance rejects these too), and the message shows the fix.
    let msg = bind_err(&b, "d = '2024-01-01'").to_string();
    assert!(msg.contains("DATE '2024-01-01'"), "{msg}");
    let msg = bind_err(&b, "ts > '2024-01-01 10:00:00'").to_string();
    assert!(msg.contains("TIMESTAMP '2024-01-01 10:00:00'"), "{msg}");
}

#[test]
fn dictionary_strings() {
    let mut builder = StringDictionaryBuilder::<Int32Type>::new();
    for v in [Some("x"), Some("y"), None, Some("x"), Some("Xz")] {
        match v {
            Some(v) => builder.append_value(v),
            None => builder.append_null(),
        }
    }
    let dict: DictionaryArray<Int32Type> = builder.finish();
    let b = batch(vec![("dict", Arc::new(dict) as ArrayRef)]);
    // pylance: dict = 'x' -> [1, 4]; dict IN ('y', 'z') -> [2]; dict LIKE 'x%' -> [1, 4].
    assert_eq!(rows(&b, "dict = 'x'"), vec![0, 3]);
    assert_eq!(rows(&b, "dict IN ('y', 'z')"), vec![1]);
    assert_eq!(rows(&b, "dict LIKE 'x%'"), vec![0, 3]);
    assert_eq!(rows(&b, "dict ILIKE 'x%'"), vec![0, 3, 4]);
    assert_eq!(rows(&b, "dict > 'x'"), vec![1]);
    assert_eq!(rows(&b, "dict IS NULL"), vec![2]);
    assert_eq!(rows(&b, "upper(dict) = 'X'"), vec![0, 3]);
    assert_eq!(rows(&b, "starts_with(dict, 'X')"), vec![4]);
    let long: Vec<String> = (0..40).map(|i| format!("'v{i}'")).chain(["'y'".to_string()]).collect();
    assert_eq!(rows(&b, &format!("dict IN ({})", long.join(", "))), vec![1]);
    assert_eq!(rows(&b, &format!("dict NOT IN ({})", long.join(", "))), vec![0, 3, 4]);
    assert!(matches!(bind_err(&b, "dict = 1"), Error::Type(_)));
}

#[test]
fn other_string_types() {
    let b = batch(vec![
        (
            "ls",
            Arc::new(LargeStringArray::from(vec![Some("x"), Some("yy"), None, Some("Xz")])) as ArrayRef,
        ),
        (
            "sv",
            Arc::new(StringViewArray::from(vec![
                Some("x"),
                Some("a much longer string value"),
                None,
                Some("Xz"),
            ])),
        ),
        (
            "bin",
            Arc::new(BinaryArray::from(vec![
                Some(b"x".as_slice()),
                Some(b"y"),
                None,
                Some(b"x"),
            ])),
        ),
    ]);
    // pylance: ls = 'x' -> [1]; ls LIKE 'x%' -> [1]; ls ILIKE 'x%' -> [1, 4]; bin = X'78' -> [1, 4].
    assert_eq!(rows(&b, "ls = 'x'"), vec![0]);
    assert_eq!(rows(&b, "ls LIKE 'x%'"), vec![0]);
    assert_eq!(rows(&b, "ls ILIKE 'x%'"), vec![0, 3]);
    assert_eq!(rows(&b, "sv = 'a much longer string value'"), vec![1]);
    assert_eq!(rows(&b, "sv LIKE '%longer%'"), vec![1]);
    assert_eq!(rows(&b, "sv = ls"), vec![0, 3]);
    assert_eq!(rows(&b, "length(ls) = 2"), vec![1, 3]);
    assert_eq!(eval(&b, "length(ls)").data_type(), &DataType::Int64);
    assert_eq!(rows(&b, "lower(sv) = 'xz'"), vec![3]);
    assert_eq!(rows(&b, "bin = X'78'"), vec![0, 3]);
    assert_eq!(rows(&b, "bin != X'78'"), vec![1]);
    // pylance: a string literal is not a binary value.
    assert!(matches!(bind_err(&b, "bin = 'x'"), Error::Type(_)));
}

#[test]
fn decimals() {
    let dec = Decimal128Array::from(vec![Some(150), Some(200), None, Some(-325)])
        .with_precision_and_scale(10, 2)
        .unwrap();
    let b = batch(vec![("dec", Arc::new(dec) as ArrayRef)]);
    // pylance: dec > 1 -> [1, 2]; dec = 2 -> [2]; dec > 1.5 is an error.
    assert_eq!(rows(&b, "dec > 1"), vec![0, 1]);
    assert_eq!(rows(&b, "dec = 2"), vec![1]);
    assert_eq!(rows(&b, "dec < 0"), vec![3]);
    assert!(matches!(bind_err(&b, "dec > 1.5"), Error::Type(_)));
    assert_eq!(rows(&b, "dec > CAST(1.5 AS decimal(10, 2))"), vec![1]);
    assert_eq!(rows(&b, "dec * 2 > 3.5"), vec![1]);
    assert_eq!(rows(&b, "dec + dec = 4"), vec![1]);
    assert_eq!(rows(&b, "abs(dec) > 3"), vec![3]);
    assert_eq!(rows(&b, "dec IN (2, 1)"), vec![1]);
}

#[test]
fn functions() {
    let b = ints();
    // All checked with pylance.
    assert_eq!(rows(&b, "lower(name) = 'b'"), vec![1]);
    assert_eq!(rows(&b, "LOWER(name) = 'b'"), vec![1]);
    assert_eq!(rows(&b, "upper(name) = 'B'"), vec![1]);
    assert_eq!(rows(&b, "length(name) = 1"), vec![0, 1]);
    assert_eq!(rows(&b, "char_length(name) = 3"), vec![2]);
    assert_eq!(rows(&b, "character_length(name) = 3"), vec![2]);
    assert_eq!(rows(&b, "starts_with(name, 'a')"), vec![0, 2]);
    assert_eq!(rows(&b, "ends_with(name, 'c')"), vec![2]);
    assert_eq!(rows(&b, "contains(name, 'b')"), vec![2]);
    assert_eq!(rows(&b, "regexp_like(name, '^[a-z]')"), vec![0, 2]);
    assert_eq!(rows(&b, "regexp_like(name, '^[a-z]+$', 'i')"), vec![0, 1, 2]);
    assert_eq!(rows(&b, "regexp_match(name, '^a') IS NOT NULL"), vec![0, 2]);
    assert_eq!(rows(&b, "coalesce(name, 'z') = 'z'"), vec![3]);
    assert_eq!(rows(&b, "coalesce(id, 0) = 0"), vec![3]);
    assert_eq!(rows(&b, "coalesce(NULL, id, i32) = 4"), vec![3]);
    assert_eq!(eval(&b, "coalesce(id, 1.5)").data_type(), &DataType::Float64);
    assert_eq!(rows(&b, "abs(-id) > 1"), vec![1, 2]);
    assert_eq!(rows(&b, "abs(i8) = 2"), vec![1]);
    assert_eq!(rows(&b, "abs(f - 3) = 1"), vec![1]);
    assert_eq!(rows(&b, "isnan(f)"), vec![2]);
    assert_eq!(rows(&b, "isnan(f32)"), vec![3]);
    assert_eq!(rows(&b, "isnan(id)"), Vec::<usize>::new());
    // Non-ASCII case mapping and character counts.
    let u = batch(vec![(
        "s",
        Arc::new(StringArray::from(vec!["Ärger", "straße", "ÉTÉ"])) as ArrayRef,
    )]);
    assert_eq!(rows(&u, "lower(s) = 'ärger'"), vec![0]);
    assert_eq!(rows(&u, "upper(s) = 'STRASSE'"), vec![1]);
    assert_eq!(rows(&u, "length(s) = 3"), vec![2]);
    // Errors name the function.
    match bind_err(&b, "nofunc(id)") {
        Error::UnknownFunction { name, supported } => {
            assert_eq!(name, "nofunc");
            assert!(supported.contains(&"lower".to_string()));
        }
        other => panic!("{other}"),
    }
    assert!(bind_err(&b, "lower(id)").to_string().contains("lower() needs a string"));
    assert!(bind_err(&b, "lower(name, name)")
        .to_string()
        .contains("takes 1 argument"));
    assert!(matches!(bind_err(&b, "regexp_like(name, '(')"), Error::Type(_)));
    assert!(matches!(bind_err(&b, "regexp_like(name, name)"), Error::Type(_)));
}

#[test]
fn special_columns_are_ordinary() {
    let b = batch(vec![
        ("_rowid", Arc::new(UInt64Array::from(vec![0, 1, 2, 3])) as ArrayRef),
        (
            "_rowaddr",
            Arc::new(UInt64Array::from(vec![0, 1, 1 << 32, (1 << 32) + 1])),
        ),
    ]);
    assert_eq!(rows(&b, "_rowid < 2"), vec![0, 1]);
    assert_eq!(rows(&b, "_rowaddr >= 4294967296"), vec![2, 3]);
    assert_eq!(rows(&b, "_rowid % 2 = 0"), vec![0, 2]);
    assert_eq!(rows(&b, "_rowid IN (1, 3)"), vec![1, 3]);
}

#[test]
fn projections() {
    let b = ints();
    let out = eval(&b, "i32 * 2");
    assert_eq!(out.data_type(), &DataType::Int64);
    assert_eq!(
        out.as_primitive::<arrow_array::types::Int64Type>().values().to_vec(),
        vec![2, 4, 6, 8]
    );
    // Constants are broadcast to the batch length.
    let out = eval(&b, "1 + 2");
    assert_eq!(
        out.as_primitive::<arrow_array::types::Int64Type>().values().to_vec(),
        vec![3; 4]
    );
    let out = eval(&b, "'x'");
    assert_eq!(out.as_string::<i32>().value(3), "x");
    let out = eval(&b, "NULL");
    assert_eq!(out.logical_null_count(), 4);
    let out = eval(&b, "name");
    assert_eq!(out.as_string::<i32>().value(1), "B");
}

#[test]
fn predicate_requires_boolean() {
    let b = ints();
    for sql in ["id", "1", "NULL", "name"] {
        let r = parse(sql).unwrap().bind(&b.schema()).unwrap().evaluate_predicate(&b);
        assert!(matches!(r, Err(Error::Type(_))), "{sql}: {r:?}");
    }
}

#[test]
fn null_type_columns() {
    let b = batch(vec![
        ("n", Arc::new(NullArray::new(3)) as ArrayRef),
        ("x", Arc::new(Int32Array::from(vec![1, 2, 3]))),
    ]);
    assert_eq!(rows(&b, "n IS NULL"), vec![0, 1, 2]);
    assert_eq!(rows(&b, "n = 1"), Vec::<usize>::new());
    assert_eq!(rows(&b, "x = n OR x = 2"), vec![1]);
    assert_eq!(rows(&b, "coalesce(n, x) = 3"), vec![2]);
}

#[test]
fn evaluation_by_name_on_a_wider_batch() {
    let narrow = Schema::new(vec![Field::new("id", DataType::Int64, true)]);
    let bound = parse("id > 1").unwrap().bind(&narrow).unwrap();
    let b = ints(); // id is the first column of a wider batch
    assert_eq!(
        bound.evaluate_predicate(&b).unwrap().iter().collect::<Vec<_>>(),
        vec![Some(false), Some(true), Some(true), Some(false)]
    );
    let missing = batch(vec![("other", Arc::new(Int64Array::from(vec![1])) as ArrayRef)]);
    assert!(matches!(bound.evaluate(&missing), Err(Error::UnknownColumn { .. })));
}

#[test]
fn unknown_column_lists_available() {
    let b = ints();
    let err = bind_err(&b, "nope > 1");
    match &err {
        Error::UnknownColumn { name, available } => {
            assert_eq!(name, "nope");
            assert!(available.contains(&"id".to_string()) && available.contains(&"name".to_string()));
        }
        other => panic!("{other}"),
    }
    let msg = err.to_string();
    assert!(
        msg.contains("no column named nope") && msg.contains("id, i32, u8"),
        "{msg}"
    );
}

#[test]
fn type_errors_name_operands() {
    let b = ints();
    let msg = bind_err(&b, "id AND b").to_string();
    assert!(
        msg.contains("AND") && msg.contains("column id") && msg.contains("Int64"),
        "{msg}"
    );
    let msg = bind_err(&b, "name + 1").to_string();
    assert!(
        msg.contains("+") && msg.contains("column name") && msg.contains("Utf8"),
        "{msg}"
    );
    let msg = bind_err(&b, "-u8 > 1").to_string();
    assert!(msg.contains("negate") && msg.contains("UInt8"), "{msg}");
    let msg = bind_err(&b, "1 < 2 < 3").to_string();
    assert!(msg.contains("Boolean") && msg.contains("Int64"), "{msg}");
    let msg = bind_err(&b, "id = name").to_string();
    assert!(msg.contains("column id") && msg.contains("column name"), "{msg}");
    let msg = bind_err(&nested(), "s = 1").to_string();
    assert!(msg.contains("cannot be compared"), "{msg}");
}
