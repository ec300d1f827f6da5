//! The parts of a bound filter that a secondary index can answer.
//!
//! [`index_tree`] reduces a filter to a tree of AND / OR over [`IndexTerm`]s (a column
//! compared with constants) and opaque leaves. A planner answers each term it has an index
//! for with a set of candidate rows; an AND may ignore opaque children (its answer is then a
//! superset), an OR may not. Rows are always rechecked against the whole filter, so a term
//! only has to name a superset of the rows where it is true.

use std::ops::Bound;

use arrow_array::{Array, ArrayRef};
use arrow_cast::{cast_with_options, CastOptions};
use arrow_schema::DataType;

use crate::ast::BinaryOp;
use crate::bind::BoundExpr;
use crate::eval::Node;
use crate::functions::Func;

/// A column compared with constants of the column's own type.
#[non_exhaustive]
#[derive(Debug, Clone)]
pub enum IndexTerm {
    /// `column = value`
    Equals {
        /// The column (a dotted path for struct fields).
        column: String,
        /// A one-element array.
        value: ArrayRef,
    },
    /// `column` within bounds (`<`, `<=`, `>`, `>=`, `BETWEEN`).
    Range {
        /// The column.
        column: String,
        /// Lower bound (one-element arrays).
        lower: Bound<ArrayRef>,
        /// Upper bound.
        upper: Bound<ArrayRef>,
    },
    /// `column IN (values)`
    InList {
        /// The column.
        column: String,
        /// The values (nulls removed: they never match).
        values: ArrayRef,
    },
    /// `column IS NULL`
    IsNull {
        /// The column.
        column: String,
    },
    /// `array_has_any(column, [values])` (also `array_has(column, value)`) on a list column.
    LabelsAny {
        /// The list column.
        column: String,
        /// The values, of the list's item type.
        values: ArrayRef,
    },
    /// `array_has_all(column, [values])`.
    LabelsAll {
        /// The list column.
        column: String,
        /// The values, of the list's item type.
        values: ArrayRef,
    },
    /// `contains(column, 'text')` or `column LIKE '%text%'`
    Contains {
        /// The column.
        column: String,
        /// The text searched for.
        needle: String,
    },
}

impl IndexTerm {
    /// The column the term is about.
    pub fn column(&self) -> &str {
        match self {
            IndexTerm::Equals { column, .. }
            | IndexTerm::Range { column, .. }
            | IndexTerm::InList { column, .. }
            | IndexTerm::IsNull { column }
            | IndexTerm::LabelsAny { column, .. }
            | IndexTerm::LabelsAll { column, .. }
            | IndexTerm::Contains { column, .. } => column,
        }
    }
}

/// A filter as far as indexes are concerned.
#[derive(Debug, Clone)]
pub enum IndexTree {
    /// A term an index may answer.
    Term(IndexTerm),
    /// All children hold.
    And(Vec<IndexTree>),
    /// Some child holds.
    Or(Vec<IndexTree>),
    /// Anything else: only a scan can tell.
    Opaque,
}

/// The index view of `expr`; `column_type` gives the type of a (dotted) column, so that
/// constants the binder widened (an `int32` column compared as `int64`) are narrowed back.
pub fn index_tree(expr: &BoundExpr, column_type: &dyn Fn(&str) -> Option<DataType>) -> IndexTree {
    tree(expr.node(), column_type, 0)
}

/// Deeper trees are left to the scan (the parser bounds depth; this is belt and braces).
const MAX_DEPTH: usize = 512;

fn tree(node: &Node, ty: &dyn Fn(&str) -> Option<DataType>, depth: usize) -> IndexTree {
    if depth > MAX_DEPTH {
        return IndexTree::Opaque;
    }
    match node {
        Node::And(a, b) => {
            let mut parts = Vec::new();
            for n in [a, b] {
                match tree(n, ty, depth + 1) {
                    IndexTree::And(inner) => parts.extend(inner),
                    other => parts.push(other),
                }
            }
            IndexTree::And(parts)
        }
        Node::Or(a, b) => {
            let mut parts = Vec::new();
            for n in [a, b] {
                match tree(n, ty, depth + 1) {
                    IndexTree::Or(inner) => parts.extend(inner),
                    other => parts.push(other),
                }
            }
            IndexTree::Or(parts)
        }
        Node::Compare { op, left, right } => compare(*op, left, right, ty).map_or(IndexTree::Opaque, IndexTree::Term),
        Node::IsNull(input) => match column_of(input) {
            Some(column) => IndexTree::Term(IndexTerm::IsNull { column }),
            None => IndexTree::Opaque,
        },
        Node::InList {
            input,
            list,
            negated: false,
        } => {
            let Some((column, dt)) = column_and_type(input, ty) else {
                return IndexTree::Opaque;
            };
            let mut values = Vec::new();
            for item in list {
                match literal(item).and_then(|v| narrow(v, &dt)) {
                    Some(v) => values.push(v),
                    None => return IndexTree::Opaque,
                }
            }
            concat(values, &dt).map_or(IndexTree::Opaque, |values| {
                IndexTree::Term(IndexTerm::InList { column, values })
            })
        }
        Node::InSet {
            input,
            values,
            negated: false,
            ..
        } => {
            let Some((column, dt)) = column_and_type(input, ty) else {
                return IndexTree::Opaque;
            };
            match narrow(values.clone(), &dt) {
                Some(values) => IndexTree::Term(IndexTerm::InList { column, values }),
                None => IndexTree::Opaque,
            }
        }
        Node::Call {
            func: Func::Contains,
            args,
        } if args.len() == 2 => match (column_of(&args[0]), literal(&args[1]).and_then(|v| string_value(&v))) {
            (Some(column), Some(needle)) => IndexTree::Term(IndexTerm::Contains { column, needle }),
            _ => IndexTree::Opaque,
        },
        Node::Call {
            func: Func::ArrayHasAny { needles },
            args,
        } if args.len() == 1 => match column_of(&args[0]) {
            Some(column) => IndexTree::Term(IndexTerm::LabelsAny {
                column,
                values: needles.clone(),
            }),
            None => IndexTree::Opaque,
        },
        Node::Call {
            func: Func::ArrayHasAll { needles },
            args,
        } if args.len() == 1 => match column_of(&args[0]) {
            Some(column) => IndexTree::Term(IndexTerm::LabelsAll {
                column,
                values: needles.clone(),
            }),
            None => IndexTree::Opaque,
        },
        Node::Like {
            input,
            pattern,
            negated: false,
            case_insensitive: false,
        } => {
            let needle = literal(pattern).and_then(|v| string_value(&v)).and_then(|p| {
                let inner = p.strip_prefix('%')?.strip_suffix('%')?;
                (!inner.contains(['%', '_', '\\'])).then(|| inner.to_string())
            });
            match (column_of(input), needle) {
                (Some(column), Some(needle)) => IndexTree::Term(IndexTerm::Contains { column, needle }),
                _ => IndexTree::Opaque,
            }
        }
        _ => IndexTree::Opaque,
    }
}

fn compare(op: BinaryOp, left: &Node, right: &Node, ty: &dyn Fn(&str) -> Option<DataType>) -> Option<IndexTerm> {
    // Column on the left: `5 < x` is `x > 5`.
    let (op, col, lit) = match (column_and_type(left, ty), column_and_type(right, ty)) {
        (Some(c), None) => (op, c, literal(right)?),
        (None, Some(c)) => (flip(op)?, c, literal(left)?),
        _ => return None,
    };
    let (column, dt) = col;
    if lit.is_null(0) {
        return None;
    }
    let value = narrow(lit, &dt)?;
    Some(match op {
        BinaryOp::Eq => IndexTerm::Equals { column, value },
        BinaryOp::Lt => IndexTerm::Range {
            column,
            lower: Bound::Unbounded,
            upper: Bound::Excluded(value),
        },
        BinaryOp::LtEq => IndexTerm::Range {
            column,
            lower: Bound::Unbounded,
            upper: Bound::Included(value),
        },
        BinaryOp::Gt => IndexTerm::Range {
            column,
            lower: Bound::Excluded(value),
            upper: Bound::Unbounded,
        },
        BinaryOp::GtEq => IndexTerm::Range {
            column,
            lower: Bound::Included(value),
            upper: Bound::Unbounded,
        },
        _ => return None,
    })
}

fn flip(op: BinaryOp) -> Option<BinaryOp> {
    Some(match op {
        BinaryOp::Eq => BinaryOp::Eq,
        BinaryOp::Lt => BinaryOp::Gt,
        BinaryOp::LtEq => BinaryOp::GtEq,
        BinaryOp::Gt => BinaryOp::Lt,
        BinaryOp::GtEq => BinaryOp::LtEq,
        _ => return None,
    })
}

/// The dotted path of a column node (not under a conversion).
fn column_of(node: &Node) -> Option<String> {
    match node {
        Node::Column { name, fields } => Some(
            std::iter::once(name.as_str())
                .chain(fields.iter().map(String::as_str))
                .collect::<Vec<_>>()
                .join("."),
        ),
        _ => None,
    }
}

/// A column, possibly under the binder's widening cast, and the column's stored type.
fn column_and_type(node: &Node, ty: &dyn Fn(&str) -> Option<DataType>) -> Option<(String, DataType)> {
    let inner = match node {
        Node::Cast { input, .. } => input.as_ref(),
        other => other,
    };
    let column = column_of(inner)?;
    let dt = ty(&column)?;
    Some((column, dt))
}

fn literal(node: &Node) -> Option<ArrayRef> {
    match node {
        Node::Literal(a) if a.len() == 1 => Some(a.clone()),
        Node::Cast { input, to, .. } => {
            let v = literal(input)?;
            cast_with_options(
                &v,
                to,
                &CastOptions {
                    safe: false,
                    ..Default::default()
                },
            )
            .ok()
        }
        _ => None,
    }
}

/// `v` as a value of the column's type, when that loses nothing (it converts back equal).
fn narrow(v: ArrayRef, dt: &DataType) -> Option<ArrayRef> {
    if v.data_type() == dt {
        return Some(v);
    }
    let strict = CastOptions {
        safe: false,
        ..Default::default()
    };
    let there = cast_with_options(&v, dt, &strict).ok()?;
    let back = cast_with_options(&there, v.data_type(), &strict).ok()?;
    (back.to_data() == v.to_data()).then_some(there)
}

fn concat(values: Vec<ArrayRef>, dt: &DataType) -> Option<ArrayRef> {
    let kept: Vec<ArrayRef> = values.into_iter().filter(|v| !v.is_null(0)).collect();
    if kept.is_empty() {
        return Some(arrow_array::new_empty_array(dt));
    }
    let refs: Vec<&dyn Array> = kept.iter().map(|a| a.as_ref()).collect();
    arrow_select::concat::concat(&refs).ok()
}

fn string_value(v: &ArrayRef) -> Option<String> {
    let s = cast_with_options(v, &DataType::Utf8, &CastOptions::default()).ok()?;
    let s = s.as_any().downcast_ref::<arrow_array::StringArray>()?;
    (!s.is_null(0)).then(|| s.value(0).to_string())
}
