//! Random predicates over random columns with NULLs, checked row by row against a plain
//! three-valued-logic evaluator written here.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test helpers outside #[test] functions fail loudly"
)]

use std::cmp::Ordering;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::{ArrayRef, Float64Array, Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema};
use lancelet_expr::parse;
use proptest::prelude::*;

#[derive(Debug, Clone, PartialEq)]
enum V {
    I(i64),
    F(f64),
    S(String),
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    Int,
    Float,
    Str,
}

const COLS: &[(&str, Kind)] = &[
    ("i1", Kind::Int),
    ("i2", Kind::Int),
    ("f1", Kind::Float),
    ("f2", Kind::Float),
    ("s1", Kind::Str),
    ("s2", Kind::Str),
];

#[derive(Debug, Clone)]
enum Operand {
    Col(usize),
    Lit(V),
    Null,
}

#[derive(Debug, Clone, Copy)]
enum Cmp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

#[derive(Debug, Clone)]
enum P {
    Cmp(Cmp, Operand, Operand),
    And(Box<P>, Box<P>),
    Or(Box<P>, Box<P>),
    Not(Box<P>),
    IsNull(Operand),
    IsNotNull(Operand),
    In(usize, Vec<Option<V>>, bool),
    Between(usize, V, V, bool),
    Const(Option<bool>),
}

fn lit_sql(v: &V) -> String {
    match v {
        V::I(i) => i.to_string(),
        V::F(f) => format!("{f:?}"),
        V::S(s) => format!("'{}'", s.replace('\'', "''")),
    }
}

fn operand_sql(o: &Operand) -> String {
    match o {
        Operand::Col(c) => COLS[*c].0.to_string(),
        Operand::Lit(v) => lit_sql(v),
        Operand::Null => "NULL".to_string(),
    }
}

fn to_sql(p: &P) -> String {
    match p {
        P::Cmp(op, l, r) => {
            let op = match op {
                Cmp::Eq => "=",
                Cmp::Ne => "<>",
                Cmp::Lt => "<",
                Cmp::Le => "<=",
                Cmp::Gt => ">",
                Cmp::Ge => ">=",
            };
            format!("{} {op} {}", operand_sql(l), operand_sql(r))
        }
        P::And(a, b) => format!("({}) AND ({})", to_sql(a), to_sql(b)),
        P::Or(a, b) => format!("({}) OR ({})", to_sql(a), to_sql(b)),
        P::Not(a) => format!("NOT ({})", to_sql(a)),
        P::IsNull(o) => format!("{} IS NULL", operand_sql(o)),
        P::IsNotNull(o) => format!("{} IS NOT NULL", operand_sql(o)),
        P::In(c, list, negated) => {
            let items: Vec<String> = list
                .iter()
                .map(|v| v.as_ref().map_or("NULL".to_string(), lit_sql))
                .collect();
            format!(
                "{} {}IN ({})",
                COLS[*c].0,
                if *negated { "NOT " } else { "" },
                items.join(", ")
            )
        }
        P::Between(c, lo, hi, negated) => {
            format!(
                "{} {}BETWEEN {} AND {}",
                COLS[*c].0,
                if *negated { "NOT " } else { "" },
                lit_sql(lo),
                lit_sql(hi)
            )
        }
        // A bare NULL has no type (Lance rejects it as a filter); a typed one is boolean.
        P::Const(None) => "CAST(NULL AS BOOLEAN)".to_string(),
        P::Const(Some(b)) => b.to_string(),
    }
}

/// SQL comparison order as pylance applies it: integers numerically, floats by total order
/// except that -0.0 equals +0.0 (NaN is above everything and equal to itself; an integer
/// compared with a float is converted to float), strings bytewise.
fn compare(a: &V, b: &V) -> Ordering {
    let z = |x: f64| x + 0.0;
    match (a, b) {
        (V::I(x), V::I(y)) => x.cmp(y),
        (V::F(x), V::F(y)) => z(*x).total_cmp(&z(*y)),
        (V::I(x), V::F(y)) => (*x as f64).total_cmp(&z(*y)),
        (V::F(x), V::I(y)) => z(*x).total_cmp(&(*y as f64)),
        (V::S(x), V::S(y)) => x.as_bytes().cmp(y.as_bytes()),
        _ => unreachable!("generator mixes kinds: {a:?} {b:?}"),
    }
}

fn value(o: &Operand, row: &[Option<V>]) -> Option<V> {
    match o {
        Operand::Col(c) => row[*c].clone(),
        Operand::Lit(v) => Some(v.clone()),
        Operand::Null => None,
    }
}

fn and3(a: Option<bool>, b: Option<bool>) -> Option<bool> {
    match (a, b) {
        (Some(false), _) | (_, Some(false)) => Some(false),
        (Some(true), Some(true)) => Some(true),
        _ => None,
    }
}

fn or3(a: Option<bool>, b: Option<bool>) -> Option<bool> {
    match (a, b) {
        (Some(true), _) | (_, Some(true)) => Some(true),
        (Some(false), Some(false)) => Some(false),
        _ => None,
    }
}

fn cmp3(op: Cmp, a: Option<V>, b: Option<V>) -> Option<bool> {
    let ord = compare(&a?, &b?);
    Some(match op {
        Cmp::Eq => ord == Ordering::Equal,
        Cmp::Ne => ord != Ordering::Equal,
        Cmp::Lt => ord == Ordering::Less,
        Cmp::Le => ord != Ordering::Greater,
        Cmp::Gt => ord == Ordering::Greater,
        Cmp::Ge => ord != Ordering::Less,
    })
}

fn reference(p: &P, row: &[Option<V>]) -> Option<bool> {
    match p {
        P::Cmp(op, l, r) => cmp3(*op, value(l, row), value(r, row)),
        P::And(a, b) => and3(reference(a, row), reference(b, row)),
        P::Or(a, b) => or3(reference(a, row), reference(b, row)),
        P::Not(a) => reference(a, row).map(|v| !v),
        P::IsNull(o) => Some(value(o, row).is_none()),
        P::IsNotNull(o) => Some(value(o, row).is_some()),
        P::In(c, list, negated) => {
            let v = row[*c].clone();
            let mut acc = Some(false);
            for item in list {
                acc = or3(acc, cmp3(Cmp::Eq, v.clone(), item.clone()));
            }
            if *negated {
                acc.map(|x| !x)
            } else {
                acc
            }
        }
        P::Between(c, lo, hi, negated) => {
            let v = row[*c].clone();
            if *negated {
                or3(
                    cmp3(Cmp::Lt, v.clone(), Some(lo.clone())),
                    cmp3(Cmp::Gt, v, Some(hi.clone())),
                )
            } else {
                and3(
                    cmp3(Cmp::Ge, v.clone(), Some(lo.clone())),
                    cmp3(Cmp::Le, v, Some(hi.clone())),
                )
            }
        }
        P::Const(b) => *b,
    }
}

fn arb_int() -> impl Strategy<Value = i64> {
    prop_oneof![4 => -4i64..5, 1 => any::<i64>()]
}

fn arb_float_lit() -> impl Strategy<Value = f64> {
    prop_oneof![
        Just(-2.0),
        Just(-0.0),
        Just(0.0),
        Just(1.5),
        Just(3.25),
        Just(1e300),
        (-40i32..40).prop_map(|i| f64::from(i) / 4.0)
    ]
}

fn arb_float_value() -> impl Strategy<Value = f64> {
    prop_oneof![4 => arb_float_lit(), 1 => Just(f64::NAN), 1 => Just(f64::INFINITY), 1 => Just(f64::NEG_INFINITY)]
}

fn arb_str() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(String::new()),
        Just("a".to_string()),
        Just("ab".to_string()),
        Just("b".to_string()),
        Just("B".to_string()),
        Just("é".to_string()),
        Just("it's".to_string()),
        "[a-c]{0,3}"
    ]
}

fn arb_lit(kind: Kind) -> BoxedStrategy<V> {
    match kind {
        Kind::Int => arb_int().prop_map(V::I).boxed(),
        // Int literals are allowed against float columns (they convert); float literals are
        // not allowed against int columns, so only float kinds get them.
        Kind::Float => prop_oneof![3 => arb_float_lit().prop_map(V::F), 1 => (-4i64..5).prop_map(V::I)].boxed(),
        Kind::Str => arb_str().prop_map(V::S).boxed(),
    }
}

fn cols_of(kind: Kind) -> Vec<usize> {
    COLS.iter()
        .enumerate()
        .filter(|(_, (_, k))| *k == kind)
        .map(|(i, _)| i)
        .collect()
}

fn arb_operand(kind: Kind) -> BoxedStrategy<Operand> {
    let mut cols = cols_of(kind);
    if kind == Kind::Float {
        // An int column compared with a float column is widened to float.
        cols.push(0);
    }
    prop_oneof![
        4 => proptest::sample::select(cols).prop_map(Operand::Col),
        2 => arb_lit(kind).prop_map(Operand::Lit),
        1 => Just(Operand::Null),
    ]
    .boxed()
}

fn arb_cmp() -> impl Strategy<Value = Cmp> {
    prop_oneof![
        Just(Cmp::Eq),
        Just(Cmp::Ne),
        Just(Cmp::Lt),
        Just(Cmp::Le),
        Just(Cmp::Gt),
        Just(Cmp::Ge)
    ]
}

fn arb_kind() -> impl Strategy<Value = Kind> {
    prop_oneof![Just(Kind::Int), Just(Kind::Float), Just(Kind::Str)]
}

/// A comparison whose operands Lance's rules accept: never an int column against a float
/// literal.
fn arb_comparison() -> impl Strategy<Value = P> {
    arb_kind()
        .prop_flat_map(|k| (arb_cmp(), arb_operand(k), arb_operand(k)))
        .prop_map(|(op, l, r)| {
            let int_col = |o: &Operand| matches!(o, Operand::Col(c) if COLS[*c].1 == Kind::Int);
            let float_lit = |o: &Operand| matches!(o, Operand::Lit(V::F(_)));
            let fix = |o: Operand| if float_lit(&o) { Operand::Col(2) } else { o };
            if (int_col(&l) && float_lit(&r)) || (float_lit(&l) && int_col(&r)) {
                P::Cmp(op, fix(l), fix(r))
            } else {
                P::Cmp(op, l, r)
            }
        })
}

fn arb_in() -> impl Strategy<Value = P> {
    arb_kind().prop_flat_map(|k| {
        let item = prop_oneof![8 => arb_lit(k).prop_map(Some), 1 => Just(None)];
        let k2 = k;
        (
            proptest::sample::select(cols_of(k)),
            prop_oneof![
                proptest::collection::vec(item.clone(), 1..5),
                proptest::collection::vec(item, 9..40)
            ],
            any::<bool>(),
        )
            .prop_map(move |(c, list, negated)| {
                // Float literals cannot be matched against an int column; keep kinds aligned.
                let _ = k2;
                P::In(c, list, negated)
            })
    })
}

fn arb_between() -> impl Strategy<Value = P> {
    arb_kind()
        .prop_flat_map(|k| {
            (
                proptest::sample::select(cols_of(k)),
                arb_lit(k),
                arb_lit(k),
                any::<bool>(),
            )
        })
        .prop_map(|(c, lo, hi, negated)| P::Between(c, lo, hi, negated))
}

fn arb_pred() -> impl Strategy<Value = P> {
    let leaf = prop_oneof![
        6 => arb_comparison(),
        1 => arb_kind().prop_flat_map(arb_operand).prop_map(P::IsNull),
        1 => arb_kind().prop_flat_map(arb_operand).prop_map(P::IsNotNull),
        2 => arb_in(),
        2 => arb_between(),
        1 => prop_oneof![Just(None), Just(Some(true)), Just(Some(false))].prop_map(P::Const),
    ];
    leaf.prop_recursive(4, 24, 2, |inner| {
        prop_oneof![
            (inner.clone(), inner.clone()).prop_map(|(a, b)| P::And(Box::new(a), Box::new(b))),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| P::Or(Box::new(a), Box::new(b))),
            inner.prop_map(|a| P::Not(Box::new(a))),
        ]
    })
}

fn arb_rows() -> impl Strategy<Value = Vec<Vec<Option<V>>>> {
    let row = (
        proptest::option::weighted(0.8, arb_int()),
        proptest::option::weighted(0.8, arb_int()),
        proptest::option::weighted(0.8, arb_float_value()),
        proptest::option::weighted(0.8, arb_float_value()),
        proptest::option::weighted(0.8, arb_str()),
        proptest::option::weighted(0.8, arb_str()),
    )
        .prop_map(|(a, b, c, d, e, f)| {
            vec![
                a.map(V::I),
                b.map(V::I),
                c.map(V::F),
                d.map(V::F),
                e.map(V::S),
                f.map(V::S),
            ]
        });
    proptest::collection::vec(row, 0..40)
}

fn make_batch(rows: &[Vec<Option<V>>]) -> RecordBatch {
    let mut arrays: Vec<ArrayRef> = Vec::new();
    for (i, (_, kind)) in COLS.iter().enumerate() {
        let col = rows.iter().map(|r| r[i].clone());
        arrays.push(match kind {
            Kind::Int => Arc::new(Int64Array::from_iter(col.map(|v| match v {
                Some(V::I(x)) => Some(x),
                _ => None,
            }))),
            Kind::Float => Arc::new(Float64Array::from_iter(col.map(|v| match v {
                Some(V::F(x)) => Some(x),
                _ => None,
            }))),
            Kind::Str => Arc::new(StringArray::from_iter(col.map(|v| match v {
                Some(V::S(x)) => Some(x),
                _ => None,
            }))),
        });
    }
    let fields: Vec<Field> = COLS
        .iter()
        .map(|(n, k)| {
            let t = match k {
                Kind::Int => DataType::Int64,
                Kind::Float => DataType::Float64,
                Kind::Str => DataType::Utf8,
            };
            Field::new(*n, t, true)
        })
        .collect();
    RecordBatch::try_new(Arc::new(Schema::new(fields)), arrays).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1500))]

    #[test]
    fn matches_row_by_row_reference(p in arb_pred(), rows in arb_rows()) {
        let sql = to_sql(&p);
        let batch = make_batch(&rows);
        let bound = parse(&sql).and_then(|e| e.bind(&batch.schema()));
        prop_assert!(bound.is_ok(), "{sql}: {:?}", bound.err());
        let bound = bound.unwrap();
        prop_assert_eq!(bound.data_type(), &DataType::Boolean);
        let got = bound.evaluate(&batch);
        prop_assert!(got.is_ok(), "{sql}: {:?}", got.err());
        let got: Vec<Option<bool>> = got.unwrap().as_boolean().iter().collect();
        let want: Vec<Option<bool>> = rows.iter().map(|r| reference(&p, r)).collect();
        prop_assert_eq!(&got, &want, "{}", sql);
        let mask: Vec<bool> = bound.evaluate_predicate(&batch).unwrap().iter().map(|v| v == Some(true)).collect();
        let want_mask: Vec<bool> = want.iter().map(|v| *v == Some(true)).collect();
        prop_assert_eq!(mask, want_mask, "{}", sql);
        // The printed form of the bound expression evaluates the same.
        let reparsed = parse(&bound.expr().to_string()).and_then(|e| e.bind(&batch.schema())).and_then(|b| b.evaluate(&batch));
        prop_assert!(reparsed.is_ok(), "{}: {:?}", bound.expr(), reparsed.err());
        let again: Vec<Option<bool>> = reparsed.unwrap().as_boolean().iter().collect();
        prop_assert_eq!(again, want, "{}", bound.expr());
    }
}
