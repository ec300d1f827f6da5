//! Can a filter match any row of a group, given only per-column bounds and null counts?
//!
//! The analysis computes, for every boolean node, which of TRUE, FALSE and NULL it may take
//! on some row of the group ([`Outcomes`]), from a [`ColumnBounds`] per column (a lower and
//! upper bound of the non-null values, and whether nulls or non-nulls occur). Each answer is
//! a superset of the truth: operands are treated as independent, unknown columns and
//! unsupported expressions may take any value. Tracking FALSE and NULL separately is what
//! makes `NOT` and `IS [NOT] TRUE` exact to push through: `NOT x` may be TRUE exactly where
//! `x` may be FALSE.
//!
//! Comparisons use the same Arrow kernels, and the same `-0.0` to `+0.0` normalization, as
//! evaluation, so bounds and values are ordered alike (floats by IEEE total order).

use std::collections::HashMap;

use arrow_array::{Array, ArrayRef, BooleanArray, Scalar};
use arrow_cast::{cast_with_options, CastOptions};
use arrow_ord::cmp;
use arrow_schema::{ArrowError, DataType};

use crate::ast::BinaryOp;
use crate::bind::BoundExpr;
use crate::coerce::{is_date, is_decimal, is_float, is_int, is_string};
use crate::eval::{positive_zero, Node, Value};

/// What is known about one column over a group of rows.
#[derive(Debug, Clone)]
pub struct ColumnBounds {
    /// Whether some rows are null.
    pub has_nulls: bool,
    /// Whether some rows are not null.
    pub has_values: bool,
    /// A lower bound of the non-null values: a one-element array of the column's type.
    pub min: Option<ArrayRef>,
    /// An upper bound of the non-null values.
    pub max: Option<ArrayRef>,
}

impl ColumnBounds {
    /// Bounds from statistics of `rows` rows with `null_count` nulls.
    pub fn from_stats(rows: u64, null_count: u64, min: Option<ArrayRef>, max: Option<ArrayRef>) -> Self {
        Self {
            has_nulls: null_count > 0,
            has_values: null_count < rows,
            min,
            max,
        }
    }

    /// A column of nulls only.
    pub fn all_null() -> Self {
        Self {
            has_nulls: true,
            has_values: false,
            min: None,
            max: None,
        }
    }
}

/// The truth values a predicate may take on some row of a group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Outcomes {
    /// Some row may be TRUE.
    pub can_be_true: bool,
    /// Some row may be FALSE.
    pub can_be_false: bool,
    /// Some row may be NULL.
    pub can_be_null: bool,
}

impl Outcomes {
    const ANY: Outcomes = Outcomes {
        can_be_true: true,
        can_be_false: true,
        can_be_null: true,
    };
    const NONE: Outcomes = Outcomes {
        can_be_true: false,
        can_be_false: false,
        can_be_null: false,
    };

    fn not(self) -> Self {
        Outcomes {
            can_be_true: self.can_be_false,
            can_be_false: self.can_be_true,
            can_be_null: self.can_be_null,
        }
    }

    fn and(self, o: Self) -> Self {
        Outcomes {
            can_be_true: self.can_be_true && o.can_be_true,
            can_be_false: self.can_be_false || o.can_be_false,
            can_be_null: (self.can_be_null && (o.can_be_true || o.can_be_null))
                || (o.can_be_null && (self.can_be_true || self.can_be_null)),
        }
    }

    fn or(self, o: Self) -> Self {
        Outcomes {
            can_be_true: self.can_be_true || o.can_be_true,
            can_be_false: self.can_be_false && o.can_be_false,
            can_be_null: (self.can_be_null && (o.can_be_false || o.can_be_null))
                || (o.can_be_null && (self.can_be_false || self.can_be_null)),
        }
    }
}

impl BoundExpr {
    /// Whether some row of a group described by `columns` (keyed by top-level column name;
    /// missing columns are unknown) may satisfy this predicate. `false` is a guarantee.
    pub fn may_match(&self, columns: &HashMap<String, ColumnBounds>) -> bool {
        self.outcomes(columns).can_be_true
    }

    /// The truth values this predicate may take on the rows of a group described by
    /// `columns` (a superset of the actual ones).
    pub fn outcomes(&self, columns: &HashMap<String, ColumnBounds>) -> Outcomes {
        if self.data_type() != &DataType::Boolean {
            return Outcomes::ANY;
        }
        Analyzer { columns }.truth(self.node())
    }
}

/// The values a non-boolean node may take: bounds of its non-null values, and whether nulls
/// and non-nulls occur.
#[derive(Debug, Clone)]
struct Range {
    has_nulls: bool,
    has_values: bool,
    min: Option<ArrayRef>,
    max: Option<ArrayRef>,
}

impl Range {
    fn unknown() -> Self {
        Range {
            has_nulls: true,
            has_values: true,
            min: None,
            max: None,
        }
    }
}

struct Analyzer<'a> {
    columns: &'a HashMap<String, ColumnBounds>,
}

fn compare(op: BinaryOp, a: &ArrayRef, b: &ArrayRef) -> Option<bool> {
    if a.data_type() != b.data_type() || a.len() != 1 || b.len() != 1 || a.is_null(0) || b.is_null(0) {
        return None;
    }
    let r = match op {
        BinaryOp::Eq => cmp::eq(a, b),
        BinaryOp::NotEq => cmp::neq(a, b),
        BinaryOp::Lt => cmp::lt(a, b),
        BinaryOp::LtEq => cmp::lt_eq(a, b),
        BinaryOp::Gt => cmp::gt(a, b),
        BinaryOp::GtEq => cmp::gt_eq(a, b),
        _ => return None,
    }
    .ok()?;
    (r.len() == 1 && !r.is_null(0)).then(|| r.value(0))
}

/// `x op y` may hold for some `x` in `l` and `y` in `r` (both with values): `None` when unknown.
fn may_hold(op: BinaryOp, l: &Range, r: &Range) -> bool {
    let c = |op, a: &Option<ArrayRef>, b: &Option<ArrayRef>| match (a, b) {
        (Some(a), Some(b)) => compare(op, a, b).unwrap_or(true),
        _ => true,
    };
    match op {
        BinaryOp::Lt => c(BinaryOp::Lt, &l.min, &r.max),
        BinaryOp::LtEq => c(BinaryOp::LtEq, &l.min, &r.max),
        BinaryOp::Gt => c(BinaryOp::Gt, &l.max, &r.min),
        BinaryOp::GtEq => c(BinaryOp::GtEq, &l.max, &r.min),
        BinaryOp::Eq => c(BinaryOp::LtEq, &l.min, &r.max) && c(BinaryOp::LtEq, &r.min, &l.max),
        // Only "never different" is provable: both sides the same single value.
        BinaryOp::NotEq => !(c_eq(&l.min, &l.max) && c_eq(&r.min, &r.max) && c_eq(&l.min, &r.min)),
        _ => true,
    }
}

fn c_eq(a: &Option<ArrayRef>, b: &Option<ArrayRef>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => compare(BinaryOp::Eq, a, b).unwrap_or(false),
        _ => false,
    }
}

fn negate(op: BinaryOp) -> BinaryOp {
    match op {
        BinaryOp::Eq => BinaryOp::NotEq,
        BinaryOp::NotEq => BinaryOp::Eq,
        BinaryOp::Lt => BinaryOp::GtEq,
        BinaryOp::LtEq => BinaryOp::Gt,
        BinaryOp::Gt => BinaryOp::LtEq,
        BinaryOp::GtEq => BinaryOp::Lt,
        other => other,
    }
}

/// Casts that never reorder values (non-decreasing on the values they accept, and failing
/// rather than wrapping on the rest), so bounds cast to bounds.
fn monotone_cast(from: &DataType, to: &DataType) -> bool {
    let numeric = |t: &DataType| is_int(t) || is_float(t) || is_decimal(t);
    // Casts that read zoned instants as local wall-clock time are not monotone (DST), so
    // timestamps change unit only within one zone, and only naive ones become dates.
    let temporal = match (from, to) {
        (DataType::Timestamp(_, a), DataType::Timestamp(_, b)) => a == b,
        (DataType::Timestamp(_, tz), t) => tz.is_none() && is_date(t),
        (f, DataType::Timestamp(_, tz)) => is_date(f) && tz.is_none(),
        (f, t) => is_date(f) && is_date(t),
    };
    (numeric(from) && numeric(to))
        || temporal
        || (is_string(from) && is_string(to))
        || (matches!(from, DataType::Binary | DataType::LargeBinary)
            && matches!(to, DataType::Binary | DataType::LargeBinary))
}

impl Analyzer<'_> {
    fn range(&self, node: &Node) -> Range {
        match node {
            Node::Column { name, fields } if fields.is_empty() => match self.columns.get(name) {
                Some(b) => {
                    // Bounds that contradict each other are not trusted.
                    let ordered = match (&b.min, &b.max) {
                        (Some(lo), Some(hi)) => compare(BinaryOp::LtEq, lo, hi) == Some(true),
                        _ => true,
                    };
                    let (min, max) = if ordered {
                        (b.min.clone().map(normalize), b.max.clone().map(normalize))
                    } else {
                        (None, None)
                    };
                    Range {
                        has_nulls: b.has_nulls,
                        has_values: b.has_values,
                        min,
                        max,
                    }
                }
                None => Range::unknown(),
            },
            Node::Literal(a) if a.len() == 1 => {
                let null = a.is_null(0);
                let v = (!null).then(|| normalize(a.clone()));
                Range {
                    has_nulls: null,
                    has_values: !null,
                    min: v.clone(),
                    max: v,
                }
            }
            Node::Cast { input, to, safe } => {
                let r = self.range(input);
                let opts = CastOptions {
                    safe: false,
                    ..Default::default()
                };
                let cast = |b: &Option<ArrayRef>| -> Option<ArrayRef> {
                    let b = b.as_ref()?;
                    if !monotone_cast(b.data_type(), to) {
                        return None;
                    }
                    cast_with_options(b, to, &opts)
                        .ok()
                        .filter(|c| c.len() == 1 && !c.is_null(0))
                        .map(normalize)
                };
                Range {
                    // A failing TRY_CAST gives null.
                    has_nulls: r.has_nulls || *safe,
                    has_values: r.has_values,
                    min: cast(&r.min),
                    max: cast(&r.max),
                }
            }
            _ => Range::unknown(),
        }
    }

    fn compare(&self, op: BinaryOp, l: &Node, r: &Node) -> Outcomes {
        let (l, r) = (self.range(l), self.range(r));
        let values = l.has_values && r.has_values;
        Outcomes {
            can_be_true: values && may_hold(op, &l, &r),
            can_be_false: values && may_hold(negate(op), &l, &r),
            can_be_null: l.has_nulls || r.has_nulls,
        }
    }

    fn truth(&self, node: &Node) -> Outcomes {
        match node {
            Node::Literal(a) if a.len() == 1 => match a.as_any().downcast_ref::<BooleanArray>() {
                Some(b) if b.is_valid(0) => Outcomes {
                    can_be_true: b.value(0),
                    can_be_false: !b.value(0),
                    can_be_null: false,
                },
                _ if a.is_null(0) => Outcomes {
                    can_be_null: true,
                    ..Outcomes::NONE
                },
                _ => Outcomes::ANY,
            },
            Node::Column { .. } => {
                let r = self.range(node);
                let is = |v: bool| {
                    let b = BooleanArray::from(vec![v]);
                    Some(std::sync::Arc::new(b) as ArrayRef)
                };
                let one = Range {
                    has_nulls: false,
                    has_values: true,
                    min: is(true),
                    max: is(true),
                };
                let values = r.has_values;
                Outcomes {
                    can_be_true: values && may_hold(BinaryOp::Eq, &r, &one),
                    can_be_false: values && may_hold(BinaryOp::NotEq, &r, &one),
                    can_be_null: r.has_nulls,
                }
            }
            Node::Compare { op, left, right } => self.compare(*op, left, right),
            Node::And(a, b) => self.truth(a).and(self.truth(b)),
            Node::Or(a, b) => self.truth(a).or(self.truth(b)),
            Node::Not(a) => self.truth(a).not(),
            Node::IsNull(a) | Node::IsNotNull(a) => {
                let r = self.range(a);
                let o = Outcomes {
                    can_be_true: r.has_nulls,
                    can_be_false: r.has_values,
                    can_be_null: false,
                };
                if matches!(node, Node::IsNull(_)) {
                    o
                } else {
                    o.not()
                }
            }
            Node::IsBool { input, value, negated } => {
                let t = self.truth(input);
                let hit = if *value { t.can_be_true } else { t.can_be_false };
                let miss = t.can_be_null || if *value { t.can_be_false } else { t.can_be_true };
                let o = Outcomes {
                    can_be_true: hit,
                    can_be_false: miss,
                    can_be_null: false,
                };
                if *negated {
                    o.not()
                } else {
                    o
                }
            }
            Node::InList { input, list, negated } => {
                let mut acc: Option<Outcomes> = None;
                for item in list {
                    let eq = self.compare(BinaryOp::Eq, input, item);
                    acc = Some(match acc {
                        None => eq,
                        Some(prev) => prev.or(eq),
                    });
                }
                match acc {
                    Some(o) if *negated => o.not(),
                    Some(o) => o,
                    None => Outcomes::ANY,
                }
            }
            Node::InSet {
                input,
                values,
                list_has_null,
                negated,
                ..
            } => {
                let r = self.range(input);
                let hit = r.has_values && any_within(values, &r);
                let o = Outcomes {
                    can_be_true: hit,
                    // Conservative: any value might be outside the set.
                    can_be_false: r.has_values,
                    can_be_null: r.has_nulls || *list_has_null,
                };
                if *negated {
                    o.not()
                } else {
                    o
                }
            }
            _ => Outcomes::ANY,
        }
    }
}

/// Whether some value of `values` lies within `r`'s bounds (true when unsure).
fn any_within(values: &ArrayRef, r: &Range) -> bool {
    // Float sets match by their own equality rules (NaN payloads, zeros): no pruning.
    if is_float(values.data_type()) {
        return true;
    }
    type Kernel = fn(&dyn arrow_array::Datum, &dyn arrow_array::Datum) -> Result<BooleanArray, ArrowError>;
    let within = |op: Kernel, b: &Option<ArrayRef>| match b {
        Some(b) if b.data_type() == values.data_type() => op(values, &Scalar::new(b.clone())).ok(),
        Some(_) => None,
        None => Some(BooleanArray::from(vec![true; values.len()])),
    };
    let (Some(lo), Some(hi)) = (within(cmp::gt_eq, &r.min), within(cmp::lt_eq, &r.max)) else {
        return true;
    };
    lo.iter()
        .zip(hi.iter())
        .any(|(a, b)| a == Some(true) && b == Some(true))
}

/// Bounds compare as evaluation compares values: `-0.0` as `+0.0`.
fn normalize(a: ArrayRef) -> ArrayRef {
    match positive_zero(Value::Scalar(a)) {
        Value::Scalar(a) | Value::Array(a) => a,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{Int64Array, RecordBatch, StringArray};
    use arrow_schema::{Field, Schema};
    use std::sync::Arc;

    fn bounds_of(col: &ArrayRef) -> ColumnBounds {
        let nulls = col.null_count() as u64;
        let valid: Vec<usize> = (0..col.len()).filter(|&i| col.is_valid(i)).collect();
        let pick = |op: BinaryOp| {
            let mut best: Option<ArrayRef> = None;
            for &i in &valid {
                let v = col.slice(i, 1);
                best = match best {
                    Some(b) if compare(op, &b, &v) == Some(true) => Some(b),
                    _ => Some(v),
                };
            }
            best
        };
        ColumnBounds::from_stats(col.len() as u64, nulls, pick(BinaryOp::Lt), pick(BinaryOp::Gt))
    }

    fn schema() -> Arc<Schema> {
        Arc::new(Schema::new(vec![
            Field::new("a", DataType::Int64, true),
            Field::new("s", DataType::Utf8, true),
            Field::new("f", DataType::Boolean, true),
            Field::new("i", DataType::Int32, true),
        ]))
    }

    fn check(sql: &str, a: Vec<Option<i64>>, s: Vec<Option<&str>>, f: Vec<Option<bool>>) {
        let n = a.len();
        let i: Vec<Option<i32>> = a.iter().map(|v| v.map(|x| (x % 7) as i32)).collect();
        let cols: Vec<ArrayRef> = vec![
            Arc::new(Int64Array::from(a)),
            Arc::new(StringArray::from(s)),
            Arc::new(BooleanArray::from(f)),
            Arc::new(arrow_array::Int32Array::from(i)),
        ];
        let batch = RecordBatch::try_new(schema(), cols.clone()).unwrap();
        let e = crate::parse(sql)
            .and_then(|e| e.bind(&schema()))
            .unwrap_or_else(|err| panic!("{sql}: {err}"));
        let result = e.evaluate(&batch).unwrap_or_else(|err| panic!("{sql}: {err}"));
        let result = result.as_any().downcast_ref::<BooleanArray>().cloned();
        let Some(result) = result else { return };
        let mut stats = HashMap::new();
        for (name, c) in ["a", "s", "f", "i"].iter().zip(&cols) {
            stats.insert(name.to_string(), bounds_of(c));
        }
        let o = e.outcomes(&stats);
        for r in 0..n {
            match result.is_valid(r).then(|| result.value(r)) {
                Some(true) => assert!(o.can_be_true, "{sql}: row {r} is TRUE but {o:?}"),
                Some(false) => assert!(o.can_be_false, "{sql}: row {r} is FALSE but {o:?}"),
                None => assert!(o.can_be_null, "{sql}: row {r} is NULL but {o:?}"),
            }
        }
    }

    #[test]
    fn sorted_ranges_prune() {
        let mut stats = HashMap::new();
        let one = |v: i64| Some(Arc::new(Int64Array::from(vec![v])) as ArrayRef);
        stats.insert("a".to_string(), ColumnBounds::from_stats(100, 0, one(100), one(199)));
        let check = |sql: &str, stats: &HashMap<String, ColumnBounds>| {
            crate::parse(sql).unwrap().bind(&schema()).unwrap().may_match(stats)
        };
        let may = |sql: &str| check(sql, &stats);
        assert!(!may("a < 100"));
        assert!(may("a <= 100"));
        assert!(!may("a BETWEEN 200 AND 300"));
        assert!(may("a BETWEEN 150 AND 300"));
        assert!(!may("200 < a"));
        assert!(!may("NOT (a >= 100)"));
        assert!(may("NOT (a > 100)"));
        assert!(!may("a IN (1, 2, 500)"));
        assert!(may("a IN (1, 2, 150)"));
        assert!(!may("a IN (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 500)"));
        assert!(may("a IN (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 150)"));
        assert!(!may("a IS NULL"));
        assert!(may("a IS NOT NULL"));
        assert!(!may("a = 5 AND s = 'x'"));
        assert!(may("a = 5 OR s = 'x'"));
        assert!(!may("(a < 0) IS TRUE"));
        assert!(may("(a < 0) IS NOT TRUE"));
        assert!(!may("CAST(a AS DOUBLE) > 1000.5"));
        assert!(may("a + 1 > 1000"));
        // Contradictory bounds are ignored.
        let mut stats = stats.clone();
        stats.insert("a".to_string(), ColumnBounds::from_stats(100, 0, one(300), one(1)));
        assert!(check("a = 5", &stats));
        stats.insert("a".to_string(), ColumnBounds::all_null());
        let may = |sql: &str| check(sql, &stats);
        assert!(!may("a = 5") && !may("a != 5") && may("a IS NULL") && !may("NOT (a = 5)"));
    }

    fn sql_strategy() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        let lit = prop_oneof![(-6i64..12).prop_map(|v| v.to_string()), Just("NULL".to_string())];
        let op = prop_oneof![Just("="), Just("!="), Just("<"), Just("<="), Just(">"), Just(">=")];
        let s_lit = prop_oneof![Just("'b'"), Just("'aa'"), Just("''"), Just("'c'"), Just("NULL")];
        let leaf = prop_oneof![
            (op.clone(), lit.clone()).prop_map(|(o, l)| format!("a {o} {l}")),
            (op.clone(), lit.clone()).prop_map(|(o, l)| format!("{l} {o} a")),
            (op.clone(), lit.clone()).prop_map(|(o, l)| format!("i {o} {l}")),
            (op.clone(), s_lit.clone()).prop_map(|(o, l)| format!("s {o} {l}")),
            (lit.clone(), lit.clone()).prop_map(|(x, y)| format!("a BETWEEN {x} AND {y}")),
            (lit.clone(), lit.clone()).prop_map(|(x, y)| format!("a NOT BETWEEN {x} AND {y}")),
            proptest::collection::vec(lit.clone(), 1..12).prop_map(|v| format!("a IN ({})", v.join(", "))),
            proptest::collection::vec(lit.clone(), 1..12).prop_map(|v| format!("a NOT IN ({})", v.join(", "))),
            Just("a IS NULL".to_string()),
            Just("s IS NOT NULL".to_string()),
            Just("f".to_string()),
            Just("f = false".to_string()),
            Just("a = i".to_string()),
            Just("CAST(i AS BIGINT) > 3".to_string()),
            Just("CAST(a AS DOUBLE) < 2.5".to_string()),
            Just("a + 1 > 3".to_string()),
        ];
        leaf.prop_recursive(3, 12, 2, |inner| {
            prop_oneof![
                (inner.clone(), inner.clone()).prop_map(|(x, y)| format!("({x}) AND ({y})")),
                (inner.clone(), inner.clone()).prop_map(|(x, y)| format!("({x}) OR ({y})")),
                inner.clone().prop_map(|x| format!("NOT ({x})")),
                inner.clone().prop_map(|x| format!("({x}) IS TRUE")),
                inner.clone().prop_map(|x| format!("({x}) IS NOT FALSE")),
            ]
        })
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]
        #[test]
        fn outcomes_cover_actual_results(
            sql in sql_strategy(),
            rows in proptest::collection::vec(
                (proptest::option::of(-5i64..10),
                 proptest::option::of(proptest::sample::select(vec!["", "a", "aa", "b", "bz", "c"])),
                 proptest::option::of(proptest::bool::ANY)),
                1..6),
        ) {
            let a = rows.iter().map(|r| r.0).collect();
            let s = rows.iter().map(|r| r.1).collect();
            let f = rows.iter().map(|r| r.2).collect();
            check(&sql, a, s, f);
        }
    }
}
