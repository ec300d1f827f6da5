//! Parser tests: shapes, precedence, literals, error positions, and round-trips.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test helpers outside #[test] functions fail loudly"
)]

use arrow_schema::{DataType, TimeUnit};
use lancelet_expr::{parse, BinaryOp, Error, Expr, ScalarValue};
use proptest::prelude::*;

fn col(name: &str) -> Expr {
    Expr::column(name)
}

fn int(v: i64) -> Expr {
    Expr::Literal(ScalarValue::Int64(v))
}

fn bin(l: Expr, op: BinaryOp, r: Expr) -> Expr {
    Expr::binary(l, op, r)
}

fn p(sql: &str) -> Expr {
    parse(sql).unwrap_or_else(|e| panic!("{sql}: {e}"))
}

fn parse_err(sql: &str) -> (String, usize) {
    match parse(sql) {
        Err(Error::Parse { message, position }) => (message, position),
        other => panic!("{sql}: expected a parse error, got {other:?}"),
    }
}

#[test]
fn precedence_not_and_or() {
    // NOT > AND > OR; comparison binds tighter than NOT.
    assert_eq!(
        p("a = 1 OR b = 2 AND NOT c = 3"),
        bin(
            bin(col("a"), BinaryOp::Eq, int(1)),
            BinaryOp::Or,
            bin(
                bin(col("b"), BinaryOp::Eq, int(2)),
                BinaryOp::And,
                Expr::Not(Box::new(bin(col("c"), BinaryOp::Eq, int(3))))
            )
        )
    );
    assert_eq!(
        p("NOT a AND b"),
        bin(Expr::Not(Box::new(col("a"))), BinaryOp::And, col("b"))
    );
    assert_eq!(
        p("(a OR b) AND c"),
        bin(bin(col("a"), BinaryOp::Or, col("b")), BinaryOp::And, col("c"))
    );
}

#[test]
fn precedence_arithmetic() {
    assert_eq!(
        p("a + b * 2 - c"),
        bin(
            bin(col("a"), BinaryOp::Plus, bin(col("b"), BinaryOp::Multiply, int(2))),
            BinaryOp::Minus,
            col("c")
        )
    );
    assert_eq!(
        p("a * 2 > b + 1"),
        bin(
            bin(col("a"), BinaryOp::Multiply, int(2)),
            BinaryOp::Gt,
            bin(col("b"), BinaryOp::Plus, int(1))
        )
    );
    assert_eq!(
        p("-a * b"),
        bin(Expr::Negative(Box::new(col("a"))), BinaryOp::Multiply, col("b"))
    );
    assert_eq!(p("a - -5"), bin(col("a"), BinaryOp::Minus, int(-5)));
    assert_eq!(
        p("7 % 3 / 2"),
        bin(bin(int(7), BinaryOp::Modulo, int(3)), BinaryOp::Divide, int(2))
    );
    assert_eq!(
        p("a || 'x' = 'y'"),
        bin(
            bin(
                col("a"),
                BinaryOp::StringConcat,
                Expr::Literal(ScalarValue::Utf8("x".into()))
            ),
            BinaryOp::Eq,
            Expr::Literal(ScalarValue::Utf8("y".into()))
        )
    );
}

#[test]
fn postfix_predicates() {
    assert_eq!(p("a IS NULL"), Expr::IsNull(Box::new(col("a"))));
    assert_eq!(p("a is not null"), Expr::IsNotNull(Box::new(col("a"))));
    assert_eq!(
        p("a > 1 IS TRUE"),
        Expr::IsTrue(Box::new(bin(col("a"), BinaryOp::Gt, int(1))))
    );
    assert_eq!(p("a IS NOT FALSE"), Expr::IsNotFalse(Box::new(col("a"))));
    assert_eq!(
        p("NOT a IS NULL"),
        Expr::Not(Box::new(Expr::IsNull(Box::new(col("a")))))
    );
    assert_eq!(
        p("a IS NULL = FALSE"),
        bin(
            Expr::IsNull(Box::new(col("a"))),
            BinaryOp::Eq,
            Expr::Literal(ScalarValue::Boolean(false))
        )
    );
    assert_eq!(
        p("x NOT IN (1, 2)"),
        Expr::InList {
            expr: Box::new(col("x")),
            list: vec![int(1), int(2)],
            negated: true
        }
    );
    assert_eq!(
        p("x BETWEEN 1 AND 2 AND y"),
        bin(
            Expr::Between {
                expr: Box::new(col("x")),
                low: Box::new(int(1)),
                high: Box::new(int(2)),
                negated: false
            },
            BinaryOp::And,
            col("y")
        )
    );
    assert_eq!(
        p("x NOT BETWEEN a + 1 AND b * 2"),
        Expr::Between {
            expr: Box::new(col("x")),
            low: Box::new(bin(col("a"), BinaryOp::Plus, int(1))),
            high: Box::new(bin(col("b"), BinaryOp::Multiply, int(2))),
            negated: true
        }
    );
    assert_eq!(
        p("s NOT ILIKE 'a%' ESCAPE '!'"),
        Expr::Like {
            expr: Box::new(col("s")),
            pattern: Box::new(Expr::Literal(ScalarValue::Utf8("a%".into()))),
            negated: true,
            case_insensitive: true,
            escape: Some('!')
        }
    );
}

#[test]
fn identifiers() {
    assert_eq!(p("a.b.c"), Expr::Column(vec!["a".into(), "b".into(), "c".into()]));
    assert_eq!(p("`my col` = 1"), bin(col("my col"), BinaryOp::Eq, int(1)));
    assert_eq!(p("`a.b`"), col("a.b"));
    assert_eq!(p("`s`.`b`"), Expr::Column(vec!["s".into(), "b".into()]));
    assert_eq!(p("`we``ird`"), col("we`ird"));
    assert_eq!(p("_rowid < 10"), bin(col("_rowid"), BinaryOp::Lt, int(10)));
    // Double quotes are strings, as in Lance.
    assert_eq!(p("\"x\""), Expr::Literal(ScalarValue::Utf8("x".into())));
    // Contextual keywords are still usable as column names.
    assert_eq!(p("date > 1"), bin(col("date"), BinaryOp::Gt, int(1)));
    assert_eq!(p("s.date"), Expr::Column(vec!["s".into(), "date".into()]));
}

#[test]
fn literals() {
    assert_eq!(p("9223372036854775807"), int(i64::MAX));
    assert_eq!(p("-9223372036854775808"), int(i64::MIN));
    assert_eq!(
        p("9223372036854775808"),
        Expr::Literal(ScalarValue::UInt64(9223372036854775808))
    );
    assert_eq!(
        p("18446744073709551616"),
        Expr::Literal(ScalarValue::Float64(18446744073709551616.0))
    );
    assert_eq!(p("1.5"), Expr::Literal(ScalarValue::Float64(1.5)));
    assert_eq!(p("1e3"), Expr::Literal(ScalarValue::Float64(1000.0)));
    assert_eq!(p(".5"), Expr::Literal(ScalarValue::Float64(0.5)));
    assert_eq!(p("5."), Expr::Literal(ScalarValue::Float64(5.0)));
    assert_eq!(p("-2.5E-3"), Expr::Literal(ScalarValue::Float64(-0.0025)));
    assert_eq!(p("'it''s'"), Expr::Literal(ScalarValue::Utf8("it's".into())));
    assert_eq!(p("X'0aFF'"), Expr::Literal(ScalarValue::Binary(vec![0x0a, 0xff])));
    assert_eq!(p("true"), Expr::Literal(ScalarValue::Boolean(true)));
    assert_eq!(p("NuLL"), Expr::Literal(ScalarValue::Null));
    assert_eq!(p("date '1970-01-02'"), Expr::Literal(ScalarValue::Date32(1)));
    assert_eq!(p("DATE '2024-01-01'"), Expr::Literal(ScalarValue::Date32(19723)));
    let ts = 1_704_103_200_000_000; // 2024-01-01 10:00:00 UTC in µs
    assert_eq!(
        p("timestamp '2024-01-01 10:00:00'"),
        Expr::Literal(ScalarValue::Timestamp(ts, TimeUnit::Microsecond))
    );
    assert_eq!(
        p("TIMESTAMP '2024-01-01T10:00:00.5'"),
        Expr::Literal(ScalarValue::Timestamp(ts + 500_000, TimeUnit::Microsecond))
    );
    // Plain TIMESTAMP is microseconds: finer digits are truncated. pylance 14.0.2:
    // to_table(columns={"id": "id", "r": "TIMESTAMP '2024-01-01 00:00:00.123456789'"}) gives
    // timestamp[us] 2024-01-01 00:00:00.123456.
    assert_eq!(
        p("TIMESTAMP '2024-01-01 10:00:00.123456789'"),
        Expr::Literal(ScalarValue::Timestamp(ts + 123_456, TimeUnit::Microsecond))
    );
    // TIMESTAMP(p) picks the unit (pylance: TIMESTAMP(0) '... 00:00:00.9' is timestamp[s]
    // 00:00:00, TIMESTAMP(3) '...T00:00:00Z' is timestamp[ms], TIMESTAMP(9) '... .5' is
    // timestamp[ns] .500000000; TIMESTAMP(1) is an error).
    assert_eq!(
        p("TIMESTAMP(9) '2024-01-01 10:00:00.123456789'"),
        Expr::Literal(ScalarValue::Timestamp(ts * 1000 + 123_456_789, TimeUnit::Nanosecond))
    );
    assert_eq!(
        p("TIMESTAMP(0) '2024-01-01 10:00:00.9'"),
        Expr::Literal(ScalarValue::Timestamp(ts / 1_000_000, TimeUnit::Second))
    );
    assert_eq!(
        p("timestamp(3) '2024-01-01T10:00:00.25Z'"),
        Expr::Literal(ScalarValue::Timestamp(ts / 1000 + 250, TimeUnit::Millisecond))
    );
    assert_eq!(
        p("TIMESTAMP(6) '2024-01-01 10:00:00'"),
        Expr::Literal(ScalarValue::Timestamp(ts, TimeUnit::Microsecond))
    );
    assert!(parse("TIMESTAMP(1) '2024-01-01 10:00:00'").is_err());
    // An offset is normalized to UTC.
    assert_eq!(
        p("TIMESTAMP '2024-01-01 05:00:00-05:00'"),
        Expr::Literal(ScalarValue::Timestamp(ts, TimeUnit::Microsecond))
    );
    assert_eq!(
        p("TIMESTAMP '2024-01-01 10:00:00Z'"),
        Expr::Literal(ScalarValue::Timestamp(ts, TimeUnit::Microsecond))
    );
}

#[test]
fn casts_and_functions() {
    assert_eq!(
        p("CAST(a AS bigint)"),
        Expr::Cast {
            expr: Box::new(col("a")),
            to: DataType::Int64
        }
    );
    assert_eq!(
        p("cast(a as int unsigned)"),
        Expr::Cast {
            expr: Box::new(col("a")),
            to: DataType::UInt32
        }
    );
    assert_eq!(
        p("a::double"),
        Expr::Cast {
            expr: Box::new(col("a")),
            to: DataType::Float64
        }
    );
    assert_eq!(
        p("TRY_CAST(a AS varchar(10))"),
        Expr::TryCast {
            expr: Box::new(col("a")),
            to: DataType::Utf8
        }
    );
    assert_eq!(
        p("CAST(a AS decimal(10, 2))"),
        Expr::Cast {
            expr: Box::new(col("a")),
            to: DataType::Decimal128(10, 2)
        }
    );
    assert_eq!(
        p("CAST(a AS timestamp(9))"),
        Expr::Cast {
            expr: Box::new(col("a")),
            to: DataType::Timestamp(TimeUnit::Nanosecond, None)
        }
    );
    for (name, ty) in [
        ("tinyint", DataType::Int8),
        ("smallint", DataType::Int16),
        ("integer", DataType::Int32),
        ("float", DataType::Float32),
        ("real", DataType::Float32),
        ("double", DataType::Float64),
        ("string", DataType::Utf8),
        ("text", DataType::Utf8),
        ("boolean", DataType::Boolean),
        ("date", DataType::Date32),
        ("binary", DataType::Binary),
        ("timestamp", DataType::Timestamp(TimeUnit::Microsecond, None)),
    ] {
        assert_eq!(
            p(&format!("CAST(a AS {name})")),
            Expr::Cast {
                expr: Box::new(col("a")),
                to: ty
            }
        );
    }
    assert_eq!(
        p("LOWER(name) = 'x'"),
        bin(
            Expr::Function {
                name: "lower".into(),
                args: vec![col("name")]
            },
            BinaryOp::Eq,
            Expr::Literal(ScalarValue::Utf8("x".into()))
        )
    );
    assert_eq!(
        p("f()"),
        Expr::Function {
            name: "f".into(),
            args: vec![]
        }
    );
}

#[test]
fn comments_and_whitespace() {
    assert_eq!(p("  a\n=\t1 -- trailing comment"), bin(col("a"), BinaryOp::Eq, int(1)));
    assert_eq!(p("a /* inline */ = 1"), bin(col("a"), BinaryOp::Eq, int(1)));
}

#[test]
fn columns_lists_distinct_paths_in_order() {
    let e = p("s.b > 1 AND a = 2 OR s.b < a + `x y`");
    assert_eq!(
        e.columns(),
        vec![
            vec!["s".to_string(), "b".to_string()],
            vec!["a".to_string()],
            vec!["x y".to_string()]
        ]
    );
    assert!(p("1 + 2").columns().is_empty());
}

#[test]
fn long_or_chains_stay_shallow() {
    let sql = (0..5000).map(|i| format!("id = {i}")).collect::<Vec<_>>().join(" OR ");
    let e = p(&sql);
    assert_eq!(e.columns(), vec![vec!["id".to_string()]]);
    let again = p(&e.to_string());
    assert_eq!(again, e);
}

#[test]
fn error_positions() {
    let (msg, pos) = parse_err("a = 1 AND");
    assert_eq!(pos, 9);
    assert!(
        msg.contains("expected an expression") && msg.contains("end of input"),
        "{msg}"
    );

    let (msg, pos) = parse_err("a = = 1");
    assert_eq!(pos, 4);
    assert!(msg.contains("expected an expression, found '='"), "{msg}");

    let (msg, pos) = parse_err("(a = 1");
    assert_eq!(pos, 6);
    assert!(msg.contains("expected ')'"), "{msg}");

    let (msg, pos) = parse_err("a = 'unterminated");
    assert_eq!(pos, 4);
    assert!(msg.contains("unterminated string"), "{msg}");

    let (msg, pos) = parse_err("a IN ()");
    assert_eq!(pos, 6);
    assert!(msg.contains("at least one value"), "{msg}");

    let (msg, pos) = parse_err("a b");
    assert_eq!(pos, 2);
    assert!(msg.contains("unexpected identifier b"), "{msg}");

    let (msg, pos) = parse_err("a IS UNKNOWN");
    assert_eq!(pos, 5);
    assert!(msg.contains("expected NULL, TRUE or FALSE"), "{msg}");

    let (msg, pos) = parse_err("a NOT 5");
    assert_eq!(pos, 6);
    assert!(msg.contains("IN, BETWEEN, LIKE or ILIKE"), "{msg}");

    let (msg, _) = parse_err("CAST(a AS blob)");
    assert!(msg.contains("unknown type blob"), "{msg}");

    let (msg, pos) = parse_err("a = 1 # 2");
    assert_eq!(pos, 6);
    assert!(msg.contains("unexpected character '#'"), "{msg}");

    let (msg, _) = parse_err("d = DATE 'not a date'");
    assert!(msg.contains("invalid date 'not a date'"), "{msg}");

    let (msg, _) = parse_err("1e999");
    assert!(msg.contains("out of range"), "{msg}");

    let (msg, _) = parse_err("CAST(a AS decimal)");
    assert!(msg.contains("DECIMAL"), "{msg}");

    // Positions count characters, not bytes.
    let (_, pos) = parse_err("'é' = = 1");
    assert_eq!(pos, 6);

    // The Display form carries the position.
    let shown = parse("a AND").unwrap_err().to_string();
    assert!(shown.contains("position 5"), "{shown}");
}

#[test]
fn deep_nesting_is_an_error_not_a_crash() {
    let sql = format!("{}1{}", "(".repeat(100_000), ")".repeat(100_000));
    assert!(matches!(parse(&sql), Err(Error::Parse { .. })));
    let sql = format!("{}a", "NOT ".repeat(10_000));
    assert!(matches!(parse(&sql), Err(Error::Parse { .. })));
    let sql = format!("{}a", "-".repeat(10_001));
    let _ = parse(&sql); // comments or nesting error; must not crash
}

/// Long left-deep chains are built by a loop, not by recursion: the depth limit must stop
/// them while they are built (a 10^5-level tree overflowed the stack when it was dropped).
#[test]
fn long_operator_chains_are_an_error_not_a_crash() {
    for n in [300, 45_000, 1_000_000] {
        for sql in [
            format!("i > {}", vec!["1"; n].join(" + ")),
            vec!["i"; n].join(" = "),
            format!("i {}", "IS NULL ".repeat(n)),
            format!("i{}", "::int".repeat(n)),
        ] {
            let err = std::thread::Builder::new()
                .stack_size(256 * 1024)
                .spawn(move || parse(&sql).map(|_| ()).map_err(|e| e.to_string()))
                .unwrap()
                .join()
                .unwrap()
                .unwrap_err();
            assert!(err.contains("nested too deeply"), "{err}");
        }
    }
    // Balanced AND/OR chains of any length stay shallow and parse.
    let sql = vec!["i = 1"; 1_000_000].join(" OR ");
    assert!(parse(&sql).is_ok());
}

/// The deepest tree the parser accepts binds and evaluates on a worker thread's stack
/// (tokio's default is 2 MiB).
#[test]
fn the_deepest_accepted_expression_evaluates_on_a_small_stack() {
    use std::sync::Arc;

    use arrow_array::{Int64Array, RecordBatch};
    use arrow_schema::{DataType, Field, Schema};

    let mut deepest = None;
    for n in (2..400).rev() {
        let sql = format!("i > {}", vec!["i"; n].join(" - "));
        if parse(&sql).is_ok() {
            deepest = Some(sql);
            break;
        }
    }
    let sql = deepest.unwrap();
    let out = std::thread::Builder::new()
        .stack_size(2 * 1024 * 1024)
        .spawn(move || {
            let schema = Arc::new(Schema::new(vec![Field::new("i", DataType::Int64, true)]));
            let batch = RecordBatch::try_new(schema.clone(), vec![Arc::new(Int64Array::from(vec![1, 2, 3]))]).unwrap();
            let bound = parse(&sql).unwrap().bind(&schema).unwrap();
            bound.evaluate_predicate(&batch).unwrap().len()
        })
        .unwrap()
        .join()
        .unwrap();
    assert_eq!(out, 3);
}

#[test]
fn display_round_trips_examples() {
    for sql in [
        "a = 1 AND (b OR c)",
        "NOT (a AND b)",
        "-(5)",
        "-(-a)",
        "a - (b - c)",
        "(a = b) = c",
        "a = (NOT b)",
        "x IN (1, -2, 3.5, 'a', NULL)",
        "(a OR b) IS NULL",
        "(a + 1) BETWEEN (b AND c) AND 2",
        "s LIKE 'a''%' ESCAPE '!'",
        "CAST(`a b` AS DECIMAL(10, 2))",
        "TRY_CAST(`select` AS TIMESTAMP(9))",
        "lower(`x`.`y z`) || 'q'",
        "TIMESTAMP '2024-01-01 10:00:00.000000001' > DATE '2020-02-29'",
        "X'00ff' = b",
        "`null` IS NOT TRUE",
        "1e300 + 0.1 - 9223372036854775808",
        "l[1] = ls[-1]['x'] AND st['a'] > 1",
        "(a + b)[2]",
        "ls[1].x.y",
        "array_element(l, 'x')",
        "get_field(s, 1)",
        "TIMESTAMP(0) '2024-01-01 10:00:00' < TIMESTAMP(3) '2024-01-01 10:00:00.5'",
        "TIMESTAMP(9) '2024-01-01 10:00:00' IS NULL",
        "current_date > d AND now() > ts AND current_timestamp IS NOT NULL",
        "arrow_cast(x, 'Timestamp(Microsecond, Some(\"UTC\"))')",
        "json_get_int(json_get(j, 'a'), '0') > 1 OR json_extract(j, '$.c[*]') = '[1,2]'",
        "json_array_contains(j, '$.tags', 'python')",
    ] {
        let e = p(sql);
        let printed = e.to_string();
        assert_eq!(p(&printed), e, "{sql} -> {printed}");
    }
    assert_eq!(p("a = 1 AND (b OR c)").to_string(), "a = 1 AND (b OR c)");
    assert_eq!(p("x.y::int").to_string(), "CAST(x.y AS INT)");
    assert_eq!(p("`my col` <> 'it''s'").to_string(), "`my col` != 'it''s'");
    assert_eq!(p("ls[1].x").to_string(), "ls[1]['x']");
    assert_eq!(p("(st).a").to_string(), "st['a']");
    assert_eq!(p("current_date").to_string(), "current_date()");
    assert_eq!(
        p("TIMESTAMP(3) '2024-01-01 10:00:00.5'").to_string(),
        "TIMESTAMP(3) '2024-01-01 10:00:00.500'"
    );
}

#[test]
fn subscripts() {
    let f = |name: &str, args: Vec<Expr>| Expr::Function {
        name: name.into(),
        args,
    };
    let s = |v: &str| Expr::Literal(ScalarValue::Utf8(v.into()));
    assert_eq!(p("l[1]"), f("array_element", vec![col("l"), int(1)]));
    assert_eq!(p("l[-1]"), f("array_element", vec![col("l"), int(-1)]));
    assert_eq!(p("st['a']"), f("get_field", vec![col("st"), s("a")]));
    assert_eq!(
        p("ls[1]['x']"),
        f("get_field", vec![f("array_element", vec![col("ls"), int(1)]), s("x")])
    );
    assert_eq!(p("ls[1].x"), p("ls[1]['x']"));
    // Subscripts bind tighter than unary minus and casts.
    assert_eq!(
        p("-l[1]"),
        Expr::Negative(Box::new(f("array_element", vec![col("l"), int(1)])))
    );
    assert_eq!(
        p("l[1 + 1]"),
        f("array_element", vec![col("l"), bin(int(1), BinaryOp::Plus, int(1))])
    );
    assert!(parse("l[1").is_err());
    assert!(parse("l[]").is_err());
    assert!(parse("l[1].").is_err());
}

// ---- property tests ----

fn arb_ident() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z_][a-z0-9_]{0,6}",
        "[A-Za-z .`'\"é-]{1,6}",
        Just("and".to_string()),
        Just("date".to_string()),
    ]
}

fn arb_literal() -> impl Strategy<Value = ScalarValue> {
    prop_oneof![
        Just(ScalarValue::Null),
        any::<bool>().prop_map(ScalarValue::Boolean),
        any::<i64>().prop_map(ScalarValue::Int64),
        ((i64::MAX as u64 + 1)..=u64::MAX).prop_map(ScalarValue::UInt64),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(ScalarValue::Float64),
        "[a-z' %_\\\\é]{0,8}".prop_map(ScalarValue::Utf8),
        proptest::collection::vec(any::<u8>(), 0..4).prop_map(ScalarValue::Binary),
        (-100_000i32..100_000).prop_map(ScalarValue::Date32),
        (-4_000_000_000_000_000i64..4_000_000_000_000_000)
            .prop_map(|v| ScalarValue::Timestamp(v, TimeUnit::Microsecond)),
        any::<i64>().prop_map(|v| ScalarValue::Timestamp(v, TimeUnit::Nanosecond)),
        (-4_000_000_000_000_000i64..4_000_000_000_000_000)
            .prop_map(|v| ScalarValue::Timestamp(v / 1000, TimeUnit::Millisecond)),
        (-4_000_000_000_000_000i64..4_000_000_000_000_000)
            .prop_map(|v| ScalarValue::Timestamp(v / 1_000_000, TimeUnit::Second)),
    ]
}

fn arb_type() -> impl Strategy<Value = DataType> {
    prop_oneof![
        Just(DataType::Int8),
        Just(DataType::UInt16),
        Just(DataType::Int32),
        Just(DataType::Int64),
        Just(DataType::UInt64),
        Just(DataType::Float32),
        Just(DataType::Float64),
        Just(DataType::Utf8),
        Just(DataType::Boolean),
        Just(DataType::Date32),
        Just(DataType::Binary),
        Just(DataType::Timestamp(TimeUnit::Second, None)),
        Just(DataType::Timestamp(TimeUnit::Nanosecond, None)),
        (1u8..=38)
            .prop_flat_map(|p| (Just(p), 0..=p))
            .prop_map(|(p, s)| DataType::Decimal128(p, s as i8)),
    ]
}

fn arb_op() -> impl Strategy<Value = BinaryOp> {
    prop_oneof![
        Just(BinaryOp::Eq),
        Just(BinaryOp::NotEq),
        Just(BinaryOp::Lt),
        Just(BinaryOp::LtEq),
        Just(BinaryOp::Gt),
        Just(BinaryOp::GtEq),
        Just(BinaryOp::And),
        Just(BinaryOp::Or),
        Just(BinaryOp::Plus),
        Just(BinaryOp::Minus),
        Just(BinaryOp::Multiply),
        Just(BinaryOp::Divide),
        Just(BinaryOp::Modulo),
        Just(BinaryOp::StringConcat),
    ]
}

fn arb_expr() -> impl Strategy<Value = Expr> {
    let leaf = prop_oneof![
        proptest::collection::vec(arb_ident(), 1..3).prop_map(Expr::Column),
        arb_literal().prop_map(Expr::Literal),
    ];
    leaf.prop_recursive(5, 48, 4, |inner| {
        let b = || inner.clone().prop_map(Box::new);
        prop_oneof![
            (b(), arb_op(), b()).prop_map(|(left, op, right)| Expr::Binary { op, left, right }),
            b().prop_map(Expr::Not),
            b().prop_map(Expr::Negative),
            b().prop_map(Expr::IsNull),
            b().prop_map(Expr::IsNotNull),
            b().prop_map(Expr::IsTrue),
            b().prop_map(Expr::IsFalse),
            b().prop_map(Expr::IsNotTrue),
            b().prop_map(Expr::IsNotFalse),
            (b(), proptest::collection::vec(inner.clone(), 1..4), any::<bool>())
                .prop_map(|(expr, list, negated)| Expr::InList { expr, list, negated }),
            (b(), b(), b(), any::<bool>()).prop_map(|(expr, low, high, negated)| Expr::Between {
                expr,
                low,
                high,
                negated
            }),
            (
                b(),
                b(),
                any::<bool>(),
                any::<bool>(),
                proptest::option::of(prop_oneof![Just('!'), Just('\''), Just('\\')])
            )
                .prop_map(|(expr, pattern, negated, case_insensitive, escape)| Expr::Like {
                    expr,
                    pattern,
                    negated,
                    case_insensitive,
                    escape
                }),
            (b(), arb_type()).prop_map(|(expr, to)| Expr::Cast { expr, to }),
            (b(), arb_type()).prop_map(|(expr, to)| Expr::TryCast { expr, to }),
            (
                prop_oneof![
                    Just("lower"),
                    Just("coalesce"),
                    Just("starts_with"),
                    Just("f_1"),
                    Just("array_element"),
                    Just("get_field"),
                    Just("json_extract"),
                    Just("arrow_cast"),
                    Just("current_date"),
                    Just("now"),
                ],
                proptest::collection::vec(inner.clone(), 0..3)
            )
                .prop_map(|(name, args)| Expr::Function {
                    name: name.to_string(),
                    args
                }),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn display_then_parse_round_trips(e in arb_expr()) {
        let sql = e.to_string();
        let back = parse(&sql);
        prop_assert!(back.is_ok(), "{sql:?} failed: {back:?}");
        prop_assert_eq!(back.unwrap(), e, "{}", sql);
    }

    #[test]
    fn parse_never_panics(s in "\\PC{0,60}") {
        let _ = parse(&s);
    }

    #[test]
    fn parse_never_panics_on_sqlish_noise(
        parts in proptest::collection::vec(
            prop_oneof![
                Just("a"), Just("1"), Just("-"), Just("("), Just(")"), Just("'"), Just("`"), Just("\""),
                Just("AND"), Just("OR"), Just("NOT"), Just("IN"), Just("BETWEEN"), Just("LIKE"), Just("IS"),
                Just("NULL"), Just(","), Just("."), Just("::"), Just("CAST"), Just("AS"), Just("DATE"),
                Just("TIMESTAMP"), Just("int"), Just("1.5e"), Just("X'"), Just("--"), Just("/*"), Just("="),
                Just("<>"), Just("||"), Just("ESCAPE"), Just("é"), Just(" "),
            ],
            0..24,
        )
    ) {
        let sql = parts.join(" ");
        let _ = parse(&sql);
        let _ = parse(&parts.concat());
    }
}
