//! List subscripts, struct fields, typed timestamp literals, `arrow_cast`, `current_date` /
//! `now` and the JSON functions, with expected values taken from pylance 14.0.2 (each case
//! names the pylance call that produced it).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test helpers outside #[test] functions fail loudly"
)]

use std::sync::Arc;

use arrow_array::builder::{Int64Builder, ListBuilder};
use arrow_array::cast::AsArray;
use arrow_array::types::{Float64Type, Int32Type, Int64Type};
use arrow_array::{Array, ArrayRef, Int32Array, Int64Array, RecordBatch, StringArray, StructArray};
use arrow_schema::{DataType, Field, Fields, Schema, TimeUnit};
use lancelet_expr::parse;

/// pylance dataset: `id` int64 [1, 2, 3], `l` list<int64> [[1,2,3],[4],None],
/// `ls` list<struct<x int64, y string>> [[{x:1,y:'a'}],[],None],
/// `st` struct<a int32, b string> [{a:1,b:'q'}, None, {a:3,b:None}].
fn nested() -> RecordBatch {
    let mut lb = ListBuilder::new(Int64Builder::new());
    lb.append_value([Some(1), Some(2), Some(3)]);
    lb.append_value([Some(4)]);
    lb.append_null();
    let l = lb.finish();
    let sfields = Fields::from(vec![
        Field::new("x", DataType::Int64, true),
        Field::new("y", DataType::Utf8, true),
    ]);
    let items = StructArray::new(
        sfields.clone(),
        vec![
            Arc::new(Int64Array::from(vec![1])) as ArrayRef,
            Arc::new(StringArray::from(vec!["a"])),
        ],
        None,
    );
    let item_field = Arc::new(Field::new("item", DataType::Struct(sfields), true));
    let ls = arrow_array::ListArray::new(
        item_field,
        arrow_buffer::OffsetBuffer::from_lengths([1, 0, 0]),
        Arc::new(items),
        Some(arrow_buffer::NullBuffer::from(vec![true, true, false])),
    );
    let stfields = Fields::from(vec![
        Field::new("a", DataType::Int32, true),
        Field::new("b", DataType::Utf8, true),
    ]);
    let st = StructArray::new(
        stfields,
        vec![
            Arc::new(Int32Array::from(vec![Some(1), Some(9), Some(3)])) as ArrayRef,
            Arc::new(StringArray::from(vec![Some("q"), Some("z"), None])),
        ],
        Some(arrow_buffer::NullBuffer::from(vec![true, false, true])),
    );
    let schema = Schema::new(vec![
        Field::new("id", DataType::Int64, true),
        Field::new("l", l.data_type().clone(), true),
        Field::new("ls", ls.data_type().clone(), true),
        Field::new("st", st.data_type().clone(), true),
    ]);
    RecordBatch::try_new(
        Arc::new(schema),
        vec![
            Arc::new(Int64Array::from(vec![1, 2, 3])),
            Arc::new(l),
            Arc::new(ls),
            Arc::new(st),
        ],
    )
    .unwrap()
}

fn eval(batch: &RecordBatch, sql: &str) -> ArrayRef {
    let bound = parse(sql).unwrap().bind_projection(&batch.schema()).unwrap();
    let out = bound.evaluate(batch).unwrap();
    assert_eq!(out.data_type(), bound.data_type(), "{sql}");
    out
}

fn ints(batch: &RecordBatch, sql: &str) -> Vec<Option<i64>> {
    let a = eval(batch, sql);
    assert_eq!(a.data_type(), &DataType::Int64, "{sql}");
    a.as_primitive::<Int64Type>().iter().collect()
}

fn strs(batch: &RecordBatch, sql: &str) -> Vec<Option<String>> {
    let a = eval(batch, sql);
    assert_eq!(a.data_type(), &DataType::Utf8, "{sql}");
    a.as_string::<i32>().iter().map(|s| s.map(str::to_string)).collect()
}

fn filter_ids(batch: &RecordBatch, sql: &str) -> Vec<i64> {
    let mask = parse(sql)
        .unwrap()
        .bind(&batch.schema())
        .unwrap()
        .evaluate_predicate(batch)
        .unwrap();
    let ids = batch.column(0).as_primitive::<Int64Type>();
    (0..batch.num_rows())
        .filter(|&i| mask.value(i))
        .map(|i| ids.value(i))
        .collect()
}

#[test]
fn list_subscripts_match_pylance() {
    let b = nested();
    // to_table(columns={"r": "l[1]"}) -> int64 [1, 4, None]; l[0] -> all None; l[3] ->
    // [3, None, None]; l[-1] -> [3, 4, None]; l[id] -> [1, None, None]; l[1+1] -> [2, None, None];
    // array_element(l, 2) -> [2, None, None]; l[NULL] -> all None.
    assert_eq!(ints(&b, "l[1]"), vec![Some(1), Some(4), None]);
    assert_eq!(ints(&b, "l[0]"), vec![None, None, None]);
    assert_eq!(ints(&b, "l[3]"), vec![Some(3), None, None]);
    assert_eq!(ints(&b, "l[-1]"), vec![Some(3), Some(4), None]);
    // the most negative index is out of range (it once overflowed negating it)
    assert_eq!(ints(&b, "l[-9223372036854775808]"), vec![None, None, None]);
    assert_eq!(ints(&b, "l[-3]"), vec![Some(1), None, None]);
    assert_eq!(ints(&b, "l[id]"), vec![Some(1), None, None]);
    assert_eq!(ints(&b, "l[1+1]"), vec![Some(2), None, None]);
    assert_eq!(ints(&b, "array_element(l, 2)"), vec![Some(2), None, None]);
    assert_eq!(ints(&b, "(l)[1]"), vec![Some(1), Some(4), None]);
    assert_eq!(ints(&b, "l[NULL]"), vec![None, None, None]);
    // "ls[1]['x']" and "ls[1].x" -> int64 [1, None, None]
    assert_eq!(ints(&b, "ls[1]['x']"), vec![Some(1), None, None]);
    assert_eq!(ints(&b, "ls[1].x"), vec![Some(1), None, None]);
    // "ls[1]" -> struct [{x: 1, y: 'a'}, None, None]
    let first = eval(&b, "ls[1]");
    assert_eq!(first.null_count(), 2);
    // filters: "l[1] = 1" -> [1]; "l[2] IS NULL" -> [2, 3]; "ls[1]['y'] = 'a'" -> [1]
    assert_eq!(filter_ids(&b, "l[1] = 1"), vec![1]);
    assert_eq!(filter_ids(&b, "l[2] IS NULL"), vec![2, 3]);
    assert_eq!(filter_ids(&b, "ls[1]['y'] = 'a'"), vec![1]);
    // A constant list.
    assert_eq!(ints(&b, "[10, 20, 30][2] + id"), vec![Some(21), Some(22), Some(23)]);
    // Errors, as in pylance: st[1] ("array_element does not support type Struct"), s[1],
    // l[1.0] (no coercion from Float64), l['1'] (no field).
    let schema = b.schema();
    for bad in ["st[1]", "id[1]", "l[1.0]", "l['1']", "st['zz']"] {
        assert!(parse(bad).unwrap().bind(&schema).is_err(), "{bad}");
    }
}

#[test]
fn struct_fields_match_pylance() {
    let b = nested();
    // "st['a']" -> int32 [1, None, 3]; "st['b']" -> ['q', None, None]; get_field(st, 'a') too.
    let a = eval(&b, "st['a']");
    assert_eq!(
        a.as_primitive::<Int32Type>().iter().collect::<Vec<_>>(),
        vec![Some(1), None, Some(3)]
    );
    assert_eq!(strs(&b, "st['b']"), vec![Some("q".into()), None, None]);
    let g = eval(&b, "get_field(st, 'a')");
    assert_eq!(
        g.as_primitive::<Int32Type>().iter().collect::<Vec<_>>(),
        vec![Some(1), None, Some(3)]
    );
    // A field of a column binds as the column path.
    let bound = parse("st['a'] > 1").unwrap().bind(&b.schema()).unwrap();
    assert_eq!(bound.expr().to_string(), "st.a > CAST(1 AS INT)");
    // filter "st['a'] > 1" -> [3]
    assert_eq!(filter_ids(&b, "st['a'] > 1"), vec![3]);
}

#[test]
fn typed_timestamps_and_clock_functions() {
    let b = nested();
    // columns={"r": "TIMESTAMP(0) '2024-01-01 00:00:00.9'"} -> timestamp[s] 2024-01-01 00:00:00
    let t = eval(&b, "TIMESTAMP(0) '2024-01-01 00:00:00.9'");
    assert_eq!(t.data_type(), &DataType::Timestamp(TimeUnit::Second, None));
    assert_eq!(
        t.as_primitive::<arrow_array::types::TimestampSecondType>().value(0),
        1_704_067_200
    );
    let t = eval(&b, "TIMESTAMP(3) '2024-01-01 00:00:00.123456'");
    assert_eq!(t.data_type(), &DataType::Timestamp(TimeUnit::Millisecond, None));
    assert_eq!(
        t.as_primitive::<arrow_array::types::TimestampMillisecondType>()
            .value(0),
        1_704_067_200_123
    );
    let t = eval(&b, "TIMESTAMP(9) '2024-01-01 00:00:00.123456789'");
    assert_eq!(t.data_type(), &DataType::Timestamp(TimeUnit::Nanosecond, None));
    // current_date() / current_date / today() are Date32, now() / current_timestamp() are
    // Timestamp(ns, None) (pylance: Literal Date32("...") and TimestampNanosecond(.., None)).
    for sql in ["current_date()", "current_date", "today()"] {
        assert_eq!(eval(&b, sql).data_type(), &DataType::Date32, "{sql}");
    }
    for sql in ["now()", "current_timestamp()", "current_timestamp"] {
        assert_eq!(
            eval(&b, sql).data_type(),
            &DataType::Timestamp(TimeUnit::Nanosecond, None),
            "{sql}"
        );
    }
    // "TIMESTAMP '2020-01-01 00:00:00' < now()" and CAST(..) < current_date() filter like pylance.
    assert_eq!(filter_ids(&b, "TIMESTAMP '2020-01-01 00:00:00' < now()"), vec![1, 2, 3]);
    assert_eq!(filter_ids(&b, "DATE '2020-01-01' < current_date"), vec![1, 2, 3]);
}

#[test]
fn arrow_cast_matches_pylance() {
    let b = nested();
    // arrow_cast(id, 'Int32') -> int32; 'Utf8' -> string; 'Float32' -> float;
    // 'Decimal128(10, 2)' -> decimal128(10, 2); 'Date32' -> date32 (1970-01-02..);
    // 'Dictionary(Int32, Utf8)' -> dictionary; 'Int128' -> error; a column as the type -> error.
    let cases = [
        ("arrow_cast(id, 'Int32')", DataType::Int32),
        ("arrow_cast(id, 'Utf8')", DataType::Utf8),
        ("arrow_cast(id, 'LargeUtf8')", DataType::LargeUtf8),
        ("arrow_cast(id, 'Float32')", DataType::Float32),
        ("arrow_cast(id, 'Decimal128(10, 2)')", DataType::Decimal128(10, 2)),
        ("arrow_cast(id, 'Date32')", DataType::Date32),
        (
            "arrow_cast(arrow_cast(id, 'Utf8'), 'Dictionary(Int32, Utf8)')",
            DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8)),
        ),
        (
            "arrow_cast(arrow_cast(id, 'Timestamp(Second, None)'), 'Timestamp(Millisecond, None)')",
            DataType::Timestamp(TimeUnit::Millisecond, None),
        ),
        (
            "arrow_cast(arrow_cast(id, 'Timestamp(Second, None)'), 'Timestamp(Microsecond, Some(\"UTC\"))')",
            DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
        ),
    ];
    for (sql, ty) in cases {
        assert_eq!(eval(&b, sql).data_type(), &ty, "{sql}");
    }
    assert_eq!(
        strs(&b, "arrow_cast(id, 'Utf8')"),
        vec![Some("1".into()), Some("2".into()), Some("3".into())]
    );
    let schema = b.schema();
    for bad in ["arrow_cast(id, 'Int128')", "arrow_cast(id, id)", "arrow_cast(id)"] {
        assert!(parse(bad).unwrap().bind(&schema).is_err(), "{bad}");
    }
    // The bound form prints and parses back.
    let bound = parse("arrow_cast(id, 'Int32') > 1").unwrap().bind(&schema).unwrap();
    assert!(parse(&bound.expr().to_string()).is_ok());
}

/// The JSON documents of the pylance dataset (a `pa.json_()` column `j`, `id` 0..7).
fn json_batch() -> RecordBatch {
    let docs = vec![
        Some(
            r#"{"a": 1, "b": "x", "c": [1,2,3], "d": {"e": true, "f": 1.5}, "n": null, "g": 1.0, "h": "true", "i": -3.7, "u": "é\n\"q", "big": 18446744073709551615, "z": 0, "s2": "12", "sf": "2.5", "arr": ["x", 2, "2", true, null, 1.5, {"k":1}]}"#,
        ),
        Some(
            r#"{"a": "2", "b": 3, "c": ["x", 2], "d": {"e": false}, "g": 1e20, "h": "yes", "i": 2.5, "z": 5, "s2": "abc"}"#,
        ),
        None,
        Some(r#"[1,"two",[3],{"x":4}]"#),
        Some(r#""str""#),
        Some("5"),
        Some("null"),
    ];
    let schema = Schema::new(vec![
        Field::new("id", DataType::Int64, true),
        Field::new("j", DataType::Utf8, true),
    ]);
    RecordBatch::try_new(
        Arc::new(schema),
        vec![
            Arc::new(Int64Array::from((0..7).collect::<Vec<i64>>())),
            Arc::new(StringArray::from(docs)),
        ],
    )
    .unwrap()
}

/// `b` as it is (JSON text in column `j`) and with `j` as stored JSON (JSONB
/// `large_binary`, what Lance's `lance.json` columns hold): the functions give the same
/// results on both.
fn both(b: RecordBatch) -> Vec<RecordBatch> {
    let schema = b.schema();
    let j = schema.index_of("j").unwrap();
    let texts = b.column(j).as_string::<i32>();
    let jsonb: Vec<Option<Vec<u8>>> = texts
        .iter()
        .map(|t| t.map(|t| lancelet_jsonb::parse(t.as_bytes()).unwrap()))
        .collect();
    let mut fields: Vec<Field> = schema.fields().iter().map(|f| f.as_ref().clone()).collect();
    fields[j] = Field::new("j", DataType::LargeBinary, true);
    let mut columns = b.columns().to_vec();
    columns[j] = Arc::new(arrow_array::LargeBinaryArray::from_iter(jsonb));
    let stored = RecordBatch::try_new(Arc::new(Schema::new(fields)), columns).unwrap();
    vec![b, stored]
}

/// The text of JSONB results (what pylance's `json_get` returns).
fn jsonb_texts(batch: &RecordBatch, sql: &str) -> Vec<Option<String>> {
    let a = eval(batch, sql);
    assert_eq!(a.data_type(), &DataType::LargeBinary, "{sql}");
    a.as_binary::<i64>()
        .iter()
        .map(|b| b.map(lancelet_jsonb::to_text))
        .collect()
}

fn s(v: &[Option<&str>]) -> Vec<Option<String>> {
    v.iter().map(|x| x.map(str::to_string)).collect()
}

#[test]
fn json_extract_matches_pylance() {
    for b in both(json_batch()) {
        // Each expected column is to_table(columns={"r": "<sql>"})["r"] on the pylance dataset.
        let cases: &[(&str, &[Option<&str>])] = &[
            (
                "json_extract(j, '$.a')",
                &[Some("1"), Some("\"2\""), None, None, None, None, None],
            ),
            (
                "json_extract(j, '$.g')",
                &[Some("1.0"), Some("1e+20"), None, None, None, None, None],
            ),
            (
                "json_extract(j, '$.i')",
                &[Some("-3.7"), Some("2.5"), None, None, None, None, None],
            ),
            (
                "json_extract(j, '$.u')",
                &[Some("\"é\\n\\\"q\""), None, None, None, None, None, None],
            ),
            (
                "json_extract(j, '$.big')",
                &[Some("18446744073709551615"), None, None, None, None, None, None],
            ),
            (
                "json_extract(j, '$.d')",
                &[
                    Some(r#"{"e":true,"f":1.5}"#),
                    Some(r#"{"e":false}"#),
                    None,
                    None,
                    None,
                    None,
                    None,
                ],
            ),
            (
                "json_extract(j, '$.n')",
                &[Some("null"), None, None, None, None, None, None],
            ),
            (
                "json_extract(j, '$.c[*]')",
                &[Some("[1,2,3]"), Some(r#"["x",2]"#), None, None, None, None, None],
            ),
            (
                "json_extract(j, '$.c[1]')",
                &[Some("2"), Some("2"), None, None, None, None, None],
            ),
            (
                "json_extract(j, '$[1]')",
                &[None, None, None, Some("\"two\""), None, None, None],
            ),
            ("json_extract(j, '$[-1]')", &[None, None, None, None, None, None, None]),
            (
                "json_extract(j, '$[last]')",
                &[None, None, None, Some(r#"{"x":4}"#), None, None, None],
            ),
            (
                "json_extract(j, '$.c[0 to 1]')",
                &[Some("[1,2]"), Some(r#"["x",2]"#), None, None, None, None, None],
            ),
            (
                "json_extract(j, '$.c[1 to last]')",
                &[Some("[2,3]"), Some("2"), None, None, None, None, None],
            ),
            (
                "json_extract(j, '$.c[0,2]')",
                &[Some("[1,3]"), Some("\"x\""), None, None, None, None, None],
            ),
            (
                "json_extract(j, '$.c[last-1]')",
                &[Some("2"), Some("\"x\""), None, None, None, None, None],
            ),
            (
                "json_extract(j, 'd.e')",
                &[Some("true"), Some("false"), None, None, None, None, None],
            ),
            (
                "json_extract(j, '$.d.*')",
                &[Some("[true,1.5]"), Some("false"), None, None, None, None, None],
            ),
            (
                "json_extract(j, '$.arr[*].k')",
                &[Some("1"), None, None, None, None, None, None],
            ),
            (
                "json_extract(j, '$[\"a\"]')",
                &[Some("1"), Some("\"2\""), None, None, None, None, None],
            ),
            (
                "json_extract(j, '$.\"a\"')",
                &[Some("1"), Some("\"2\""), None, None, None, None, None],
            ),
            ("json_extract(j, '$.d[0]')", &[None, None, None, None, None, None, None]),
            (
                "json_extract(j, '$.c[*][*]')",
                &[Some("[1,2,3]"), Some(r#"["x",2]"#), None, None, None, None, None],
            ),
            ("json_extract(j, NULL)", &[None, None, None, None, None, None, None]),
            (
                "json_extract(j, '$.arr')",
                &[
                    Some(r#"["x",2,"2",true,null,1.5,{"k":1}]"#),
                    None,
                    None,
                    None,
                    None,
                    None,
                    None,
                ],
            ),
            (
                "json_extract(j, '$[*]')",
                &[
                    Some(
                        r#"{"a":1,"arr":["x",2,"2",true,null,1.5,{"k":1}],"b":"x","big":18446744073709551615,"c":[1,2,3],"d":{"e":true,"f":1.5},"g":1.0,"h":"true","i":-3.7,"n":null,"s2":"12","sf":"2.5","u":"é\n\"q","z":0}"#,
                    ),
                    Some(r#"{"a":"2","b":3,"c":["x",2],"d":{"e":false},"g":1e+20,"h":"yes","i":2.5,"s2":"abc","z":5}"#),
                    None,
                    Some(r#"[1,"two",[3],{"x":4}]"#),
                    Some("\"str\""),
                    Some("5"),
                    Some("null"),
                ],
            ),
        ];
        for (sql, want) in cases {
            assert_eq!(strs(&b, sql), s(want), "{sql}");
        }
        // Invalid paths are errors (pylance: "Invalid JSONPath '$..e'").
        for bad in [
            "json_extract(j, '$..e')",
            "json_extract(j, '$.')",
            "json_extract(j, 'bad path[')",
        ] {
            assert!(parse(bad).unwrap().bind(&b.schema()).is_err(), "{bad}");
        }
    }
}

#[test]
fn json_number_formatting_matches_pylance() {
    // json_extract(j, '$.v') on {"v": <number>} documents.
    let cases = [
        ("1e15", "1000000000000000.0"),
        ("1e16", "1e+16"),
        ("1.5e-7", "1.5e-7"),
        ("0.0001", "0.0001"),
        ("1e-5", "0.00001"),
        ("123456789.123", "123456789.123"),
        ("-0.0", "-0.0"),
        ("5e-324", "5e-324"),
        ("1e3", "1000.0"),
        ("100", "100"),
        ("-0", "0"),
        ("1.", "1"),
        (".5", "0.5"),
        ("18446744073709551616", "1.8446744073709552e+19"),
        ("1.7976931348623157e308", "1.7976931348623157e+308"),
        ("1.23456789012345678", "1.2345678901234567"),
        ("12345678901234567890123", "1.2345678901234568e+22"),
        ("-9223372036854775809", "-9.223372036854776e+18"),
        ("1.0e-10", "1e-10"),
        ("2.5e10", "25000000000.0"),
    ];
    let docs: Vec<String> = cases.iter().map(|(n, _)| format!("{{\"v\": {n}}}")).collect();
    let schema = Arc::new(Schema::new(vec![Field::new("j", DataType::Utf8, true)]));
    let b = RecordBatch::try_new(schema, vec![Arc::new(StringArray::from(docs))]).unwrap();
    for b in both(b) {
        let got = strs(&b, "json_extract(j, '$.v')");
        for ((n, want), got) in cases.iter().zip(got) {
            assert_eq!(got.as_deref(), Some(*want), "{n}");
        }
    }
}

#[test]
fn json_get_functions_match_pylance() {
    for b in both(json_batch()) {
        let n7 = |first: Option<&str>, second: Option<&str>| s(&[first, second, None, None, None, None, None]);
        assert_eq!(strs(&b, "json_get_string(j, 'a')"), n7(Some("1"), Some("2")));
        assert_eq!(strs(&b, "json_get_string(j, 'b')"), n7(Some("x"), Some("3")));
        assert_eq!(strs(&b, "json_get_string(j, 'g')"), n7(Some("1.0"), Some("1e+20")));
        assert_eq!(strs(&b, "json_get_string(j, 'n')"), n7(None, None));
        assert_eq!(strs(&b, "json_get_string(j, 'u')"), n7(Some("é\n\"q"), None));
        assert_eq!(
            strs(&b, "json_get_string(j, 'big')"),
            n7(Some("18446744073709551615"), None)
        );
        assert_eq!(strs(&b, "json_get_string(j, '$.a')"), n7(None, None));
        assert_eq!(strs(&b, "json_get_string(j, 'd.e')"), n7(None, None));
        assert_eq!(
            strs(&b, "json_get_string(j, '1')"),
            s(&[None, None, None, Some("two"), None, None, None])
        );
        assert_eq!(
            strs(&b, "json_get_string(j, '01')"),
            s(&[None, None, None, Some("two"), None, None, None])
        );
        assert_eq!(strs(&b, "json_get_string(j, '-1')"), n7(None, None));
        // Arrays and objects do not convert to strings: an error (pylance: "Failed to convert to
        // string: InvalidCast").
        for bad in ["json_get_string(j, 'c')", "json_get_string(j, 'd')"] {
            let bound = parse(bad).unwrap().bind(&b.schema()).unwrap();
            assert!(bound.evaluate(&b).is_err(), "{bad}");
        }
        // json_get returns the value as JSONB, as pylance does.
        assert_eq!(
            jsonb_texts(&b, "json_get(j, 'd')"),
            n7(Some(r#"{"e":true,"f":1.5}"#), Some(r#"{"e":false}"#))
        );
        assert_eq!(
            strs(&b, "json_get_string(json_get(j, 'd'), 'e')"),
            n7(Some("true"), Some("false"))
        );
        assert_eq!(
            ints(&b, "json_get_int(j, 'a')"),
            vec![Some(1), Some(2), None, None, None, None, None]
        );
        assert_eq!(
            ints(&b, "json_get_int(j, 'i')"),
            vec![Some(-4), Some(3), None, None, None, None, None]
        );
        assert_eq!(
            ints(&b, "json_get_int(j, '0')"),
            vec![None, None, None, Some(1), None, None, None]
        );
        assert_eq!(
            ints(&b, "json_get_int(j, 'sf')"),
            vec![Some(3), None, None, None, None, None, None]
        );
        let floats = eval(&b, "json_get_float(j, 'big')");
        assert_eq!(floats.as_primitive::<Float64Type>().value(0), 1.8446744073709552e19);
        let bools = eval(&b, "json_get_bool(j, 'h')");
        assert_eq!(
            bools.as_boolean().iter().collect::<Vec<_>>(),
            vec![Some(true), Some(true), None, None, None, None, None]
        );
        // Strict conversions that fail are errors in pylance: json_get_int of 1e20, "abc",
        // "true", 18446744073709551615, an object; json_get_float of "true"; json_get_bool of 0.
        for (bad, row) in [
            ("json_get_int(j, 'g')", 1),
            ("json_get_int(j, 's2')", 1),
            ("json_get_int(j, 'h')", 0),
            ("json_get_int(j, 'big')", 0),
            ("json_get_int(j, 'd')", 0),
            ("json_get_float(j, 'h')", 0),
            ("json_get_bool(j, 'z')", 0),
            ("json_get_bool(j, 'b')", 0),
        ] {
            let bound = parse(bad).unwrap().bind(&b.schema()).unwrap();
            assert!(bound.evaluate(&b.slice(row, 1)).is_err(), "{bad}");
        }
    }
}

#[test]
fn json_strict_conversions_match_pylance() {
    // json_get_bool / json_get_int / json_get_float(j, 'v') on {"v": <value>} documents;
    // None marks a pylance error.
    type Case = (&'static str, Option<bool>, Option<i64>, Option<f64>);
    let cases: &[Case] = &[
        (r#""true""#, Some(true), None, None),
        (r#""false""#, Some(false), None, None),
        (r#""yes""#, Some(true), None, None),
        (r#""no""#, Some(false), None, None),
        (r#""TRUE""#, Some(true), None, None),
        (r#""1""#, None, Some(1), Some(1.0)),
        (r#""on""#, None, None, None),
        (r#""1.5""#, None, Some(2), Some(1.5)),
        (r#""-2""#, None, Some(-2), Some(-2.0)),
        (r#""1e3""#, None, Some(1000), Some(1000.0)),
        (r#"" 12""#, None, None, None),
        (r#""+5""#, None, Some(5), Some(5.0)),
        (r#""-2.5""#, None, Some(-3), Some(-2.5)),
        (r#""9223372036854775808""#, None, None, Some(9.223372036854776e18)),
        ("true", Some(true), Some(1), Some(1.0)),
        ("false", Some(false), Some(0), Some(0.0)),
        ("0", None, Some(0), Some(0.0)),
        ("-0.5", None, Some(-1), Some(-0.5)),
        ("0.5", None, Some(1), Some(0.5)),
        (
            "9007199254740993",
            None,
            Some(9007199254740993),
            Some(9007199254740992.0),
        ),
        (
            "-9223372036854775808",
            None,
            Some(i64::MIN),
            Some(-9.223372036854776e18),
        ),
        ("1e300", None, None, Some(1e300)),
        ("12.0", None, Some(12), Some(12.0)),
    ];
    let schema = Arc::new(Schema::new(vec![Field::new("j", DataType::Utf8, true)]));
    for (v, want_bool, want_int, want_float) in cases {
        let doc = format!("{{\"v\": {v}}}");
        let b = RecordBatch::try_new(schema.clone(), vec![Arc::new(StringArray::from(vec![doc]))]).unwrap();
        for b in both(b) {
            let run = |sql: &str| parse(sql).unwrap().bind(&b.schema()).unwrap().evaluate(&b);
            let got_bool = run("json_get_bool(j, 'v')").ok().map(|a| a.as_boolean().value(0));
            let got_int = run("json_get_int(j, 'v')")
                .ok()
                .map(|a| a.as_primitive::<Int64Type>().value(0));
            let got_float = run("json_get_float(j, 'v')")
                .ok()
                .map(|a| a.as_primitive::<Float64Type>().value(0));
            assert_eq!(
                (got_bool, got_int, got_float),
                (*want_bool, *want_int, *want_float),
                "{v}"
            );
        }
    }
}

#[test]
fn json_exists_contains_length_match_pylance() {
    for b in both(json_batch()) {
        let bools = |sql: &str| -> Vec<Option<bool>> {
            let a = eval(&b, sql);
            assert_eq!(a.data_type(), &DataType::Boolean, "{sql}");
            a.as_boolean().iter().collect()
        };
        let (t, f) = (Some(true), Some(false));
        assert_eq!(bools("json_exists(j, '$.a')"), vec![t, t, None, f, f, f, f]);
        assert_eq!(bools("json_exists(j, '$.n')"), vec![t, f, None, f, f, f, f]);
        assert_eq!(bools("json_exists(j, '$[0]')"), vec![f, f, None, t, f, f, f]);
        assert_eq!(bools("json_exists(j, '$')"), vec![t, t, None, t, t, t, t]);
        assert_eq!(bools("json_exists(j, 'a')"), vec![t, t, None, f, f, f, f]);
        assert_eq!(bools("json_array_contains(j, '$.c', 2)"), vec![t, t, None, f, f, f, f]);
        for needle in [
            "'x'",
            "'\"x\"'",
            "'2'",
            "'true'",
            "true",
            "'null'",
            "1.5",
            "'{\"k\":1}'",
        ] {
            let sql = format!("json_array_contains(j, '$.arr', {needle})");
            assert_eq!(bools(&sql), vec![t, f, None, f, f, f, f], "{sql}");
        }
        assert_eq!(bools("json_array_contains(j, '$.arr', NULL)"), vec![None; 7]);
        assert_eq!(bools("json_array_contains(j, '$', 1)"), vec![f, f, None, t, f, f, f]);
        assert_eq!(bools("json_array_contains(j, '$.a', 1)"), vec![f, f, None, f, f, f, f]);
        assert_eq!(
            bools("json_array_contains(j, '$[*]', 'two')"),
            vec![f, f, None, f, f, f, f]
        );
        assert_eq!(
            ints(&b, "json_array_length(j, '$.c')"),
            vec![Some(3), Some(2), None, None, None, None, None]
        );
        assert_eq!(
            ints(&b, "json_array_length(j, '$')"),
            vec![Some(0), Some(0), None, Some(4), Some(0), Some(0), Some(0)]
        );
        assert_eq!(
            ints(&b, "json_array_length(j, '$.a')"),
            vec![Some(0), Some(0), None, None, None, None, None]
        );
        assert_eq!(ints(&b, "json_array_length(j, '$.zz')"), vec![None; 7]);
        assert_eq!(
            ints(&b, "json_array_length(j, '$.c[*]')"),
            vec![Some(0), Some(0), None, None, None, None, None]
        );
        // Filters.
        assert_eq!(filter_ids(&b, "json_get_int(j, 'a') > 1"), vec![1]);
        assert_eq!(filter_ids(&b, "json_extract(j, '$.b') = '\"x\"'"), vec![0]);
        // Non-string documents are rejected.
        assert!(parse("json_extract(id, '$.a')").unwrap().bind(&b.schema()).is_err());
    }
}

#[test]
fn json_functions_on_bytes_that_are_not_jsonb_match_pylance() {
    // A large_binary column holding JSONB, raw JSON text, garbage and NULL: pylance's
    // json_extract / json_exists fail on the rows that are not JSONB (except json_extract
    // of '$', which prints the bytes), and the json_get functions give NULL.
    let jsonb = lancelet_jsonb::parse(br#"{"a":1}"#).unwrap();
    let docs: Vec<Option<&[u8]>> = vec![Some(&jsonb), Some(br#"{"a":7}"#), Some(b"garbage"), None];
    let schema = Arc::new(Schema::new(vec![Field::new("b", DataType::LargeBinary, true)]));
    let b = RecordBatch::try_new(schema, vec![Arc::new(arrow_array::LargeBinaryArray::from(docs))]).unwrap();
    let row = |i: usize| b.slice(i, 1);
    let run = |batch: &RecordBatch, sql: &str| {
        let bound = parse(sql).unwrap().bind_projection(&batch.schema()).unwrap();
        bound.evaluate(batch)
    };
    assert_eq!(strs(&row(0), "json_extract(b, '$.a')"), s(&[Some("1")]));
    assert_eq!(strs(&row(3), "json_extract(b, '$.a')"), s(&[None]));
    for i in [1, 2] {
        assert!(run(&row(i), "json_extract(b, '$.a')").is_err(), "row {i}");
        assert!(run(&row(i), "json_exists(b, '$.a')").is_err(), "row {i}");
    }
    assert_eq!(
        strs(&b, "json_extract(b, '$')"),
        s(&[Some(r#"{"a":1}"#), Some(r#"{"a":7}"#), Some("garbage"), None])
    );
    assert_eq!(ints(&b, "json_get_int(b, 'a')"), vec![Some(1), None, None, None]);
    assert_eq!(
        jsonb_texts(&b, "json_get(b, 'a')"),
        vec![Some("1".to_string()), None, None, None]
    );
    let got = eval(&b, "json_get(b, 'a')");
    assert_eq!(got.as_binary::<i64>().value(0), [0x20, 0, 0, 0, 0x20, 0, 0, 2, 0x50, 1]);
}
