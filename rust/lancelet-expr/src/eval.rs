//! The bound, typed expression tree and its vectorized evaluation.

use std::sync::Arc;

use arrow_arith::boolean::{and_kleene, is_not_null, is_null, not, or_kleene};
use arrow_arith::numeric;
use arrow_array::cast::AsArray;
use arrow_array::{
    new_null_array, Array, ArrayRef, BooleanArray, Datum, RecordBatch, Scalar, StructArray, UInt32Array,
};
use arrow_buffer::BooleanBuffer;
use arrow_cast::{cast_with_options, CastOptions};
use arrow_ord::cmp;
use arrow_schema::{ArrowError, DataType};
use arrow_select::nullif::nullif;
use arrow_select::take::take;
use arrow_string::concat_elements::concat_elements_dyn;
use arrow_string::like;

use crate::ast::BinaryOp;
use crate::error::{Error, Result};
use crate::functions::Func;
use crate::in_set::InSet;

/// A node of the bound tree. Every node's output type was fixed by the binder.
#[derive(Debug, Clone)]
pub(crate) enum Node {
    /// A top-level column by exact name, then struct fields by exact name.
    Column {
        name: String,
        fields: Vec<String>,
    },
    /// A constant: a one-element array.
    Literal(ArrayRef),
    Cast {
        input: Box<Node>,
        to: DataType,
        safe: bool,
    },
    Compare {
        op: BinaryOp,
        left: Box<Node>,
        right: Box<Node>,
    },
    Arith {
        op: BinaryOp,
        left: Box<Node>,
        right: Box<Node>,
    },
    Concat {
        left: Box<Node>,
        right: Box<Node>,
    },
    And(Box<Node>, Box<Node>),
    Or(Box<Node>, Box<Node>),
    Not(Box<Node>),
    Negative(Box<Node>),
    IsNull(Box<Node>),
    IsNotNull(Box<Node>),
    /// `IS [NOT] TRUE|FALSE`: never null.
    IsBool {
        input: Box<Node>,
        value: bool,
        negated: bool,
    },
    /// Short or non-constant IN lists: an OR of equalities.
    InList {
        input: Box<Node>,
        list: Vec<Node>,
        negated: bool,
    },
    /// Long constant IN lists: a hash-set probe.
    InSet {
        input: Box<Node>,
        set: Arc<InSet>,
        /// The list's values (for statistics-based pruning).
        values: ArrayRef,
        list_has_null: bool,
        negated: bool,
    },
    Like {
        input: Box<Node>,
        pattern: Box<Node>,
        negated: bool,
        case_insensitive: bool,
    },
    Call {
        func: Func,
        args: Vec<Node>,
    },
}

/// The result of evaluating a node: a full column, or one value that stands for every row.
#[derive(Debug, Clone)]
pub(crate) enum Value {
    Array(ArrayRef),
    /// A one-element array.
    Scalar(ArrayRef),
}

impl Value {
    pub(crate) fn data_type(&self) -> &DataType {
        match self {
            Value::Array(a) | Value::Scalar(a) => a.data_type(),
        }
    }

    pub(crate) fn is_scalar(&self) -> bool {
        matches!(self, Value::Scalar(_))
    }

    /// The value as an array of `len` rows.
    pub(crate) fn into_array(self, len: usize) -> Result<ArrayRef> {
        match self {
            Value::Array(a) => Ok(a),
            Value::Scalar(s) => broadcast(&s, len),
        }
    }

    /// Applies an element-wise function to the underlying array, keeping scalar-ness.
    pub(crate) fn map(&self, f: impl FnOnce(&ArrayRef) -> Result<ArrayRef>) -> Result<Value> {
        Ok(match self {
            Value::Array(a) => Value::Array(f(a)?),
            Value::Scalar(s) => Value::Scalar(f(s)?),
        })
    }

    fn datum(&self) -> Box<dyn Datum + '_> {
        match self {
            Value::Array(a) => Box::new(Arc::clone(a)),
            Value::Scalar(s) => Box::new(Scalar::new(Arc::clone(s))),
        }
    }
}

/// Repeats a one-element array `len` times.
pub(crate) fn broadcast(scalar: &ArrayRef, len: usize) -> Result<ArrayRef> {
    if scalar.is_null(0) {
        return Ok(new_null_array(scalar.data_type(), len));
    }
    if let Some(b) = scalar.as_boolean_opt() {
        let buf = if b.value(0) {
            BooleanBuffer::new_set(len)
        } else {
            BooleanBuffer::new_unset(len)
        };
        return Ok(Arc::new(BooleanArray::new(buf, None)));
    }
    let indices = UInt32Array::from_value(0, len);
    Ok(take(scalar.as_ref(), &indices, None)?)
}

/// Runs a kernel that takes two `Datum`s; the result is a scalar when both inputs are.
pub(crate) fn datum_op(
    l: &Value,
    r: &Value,
    f: impl FnOnce(&dyn Datum, &dyn Datum) -> std::result::Result<ArrayRef, ArrowError>,
) -> Result<Value> {
    let out = f(l.datum().as_ref(), r.datum().as_ref())?;
    Ok(if l.is_scalar() && r.is_scalar() {
        Value::Scalar(out)
    } else {
        Value::Array(out)
    })
}

fn bool_op(
    l: &Value,
    r: &Value,
    f: impl FnOnce(&dyn Datum, &dyn Datum) -> std::result::Result<BooleanArray, ArrowError>,
) -> Result<Value> {
    datum_op(l, r, |a, b| f(a, b).map(|x| Arc::new(x) as ArrayRef))
}

fn as_bool(a: &ArrayRef) -> Result<&BooleanArray> {
    a.as_boolean_opt()
        .ok_or_else(|| Error::Type(format!("expected a boolean value, got {}", a.data_type())))
}

fn all_false(a: &BooleanArray) -> bool {
    a.null_count() == 0 && a.true_count() == 0
}

fn all_true(a: &BooleanArray) -> bool {
    a.null_count() == 0 && a.true_count() == a.len()
}

pub(crate) fn cast_value(v: &Value, to: &DataType, safe: bool) -> Result<Value> {
    if v.data_type() == to {
        return Ok(v.clone());
    }
    let options = CastOptions {
        safe,
        ..Default::default()
    };
    v.map(|a| Ok(cast_with_options(a.as_ref(), to, &options)?))
}

fn eval_column(batch: &RecordBatch, name: &str, fields: &[String]) -> Result<ArrayRef> {
    let mut array = batch
        .column_by_name(name)
        .cloned()
        .ok_or_else(|| Error::UnknownColumn {
            name: name.to_string(),
            available: batch.schema().fields().iter().map(|f| f.name().clone()).collect(),
        })?;
    let mut path = name.to_string();
    for field in fields {
        let parent: &StructArray = array
            .as_struct_opt()
            .ok_or_else(|| Error::Type(format!("column {path} is {}, not a struct", array.data_type())))?;
        let child = parent
            .column_by_name(field)
            .cloned()
            .ok_or_else(|| Error::UnknownColumn {
                name: format!("{path}.{field}"),
                available: parent.column_names().iter().map(|f| format!("{path}.{f}")).collect(),
            })?;
        // A null struct makes every field of that row null.
        let child = match parent.logical_nulls() {
            Some(nulls) if nulls.null_count() > 0 => {
                let parent_is_null = BooleanArray::new(!nulls.inner(), None);
                nullif(child.as_ref(), &parent_is_null)?
            }
            _ => child,
        };
        path.push('.');
        path.push_str(field);
        array = child;
    }
    Ok(array)
}

/// Replaces -0.0 by +0.0 in float values. Arrow's comparison kernels order floats totally
/// (-0.0 < +0.0); SQL, and pylance, compare them as IEEE numbers, where they are equal.
/// Adding +0.0 does exactly that and leaves every other value, NaN included, unchanged.
pub(crate) fn positive_zero(v: Value) -> Value {
    fn fix(a: &ArrayRef) -> Option<ArrayRef> {
        use arrow_array::types::{Float16Type, Float32Type, Float64Type};
        Some(match a.data_type() {
            DataType::Float64 => Arc::new(a.as_primitive::<Float64Type>().unary::<_, Float64Type>(|x| x + 0.0)),
            DataType::Float32 => Arc::new(a.as_primitive::<Float32Type>().unary::<_, Float32Type>(|x| x + 0.0)),
            DataType::Float16 => Arc::new(
                a.as_primitive::<Float16Type>()
                    .unary::<_, Float16Type>(|x| x + half::f16::from_f32(0.0)),
            ),
            _ => return None,
        })
    }
    match &v {
        Value::Array(a) => fix(a).map(Value::Array).unwrap_or(v),
        Value::Scalar(a) => fix(a).map(Value::Scalar).unwrap_or(v),
    }
}

/// `x IS TRUE` etc.: never null.
fn is_bool(input: &BooleanArray, value: bool, negated: bool) -> BooleanArray {
    let values = if value { input.values().clone() } else { !input.values() };
    let hit = match input.nulls() {
        Some(n) => &values & n.inner(),
        None => values,
    };
    BooleanArray::new(if negated { !&hit } else { hit }, None)
}

impl Node {
    pub(crate) fn evaluate(&self, batch: &RecordBatch) -> Result<Value> {
        let rows = batch.num_rows();
        match self {
            Node::Column { name, fields } => Ok(Value::Array(eval_column(batch, name, fields)?)),
            Node::Literal(v) => Ok(Value::Scalar(Arc::clone(v))),
            Node::Cast { input, to, safe } => cast_value(&input.evaluate(batch)?, to, *safe),
            Node::Compare { op, left, right } => {
                let (l, r) = (
                    positive_zero(left.evaluate(batch)?),
                    positive_zero(right.evaluate(batch)?),
                );
                match op {
                    BinaryOp::Eq => bool_op(&l, &r, cmp::eq),
                    BinaryOp::NotEq => bool_op(&l, &r, cmp::neq),
                    BinaryOp::Lt => bool_op(&l, &r, cmp::lt),
                    BinaryOp::LtEq => bool_op(&l, &r, cmp::lt_eq),
                    BinaryOp::Gt => bool_op(&l, &r, cmp::gt),
                    BinaryOp::GtEq => bool_op(&l, &r, cmp::gt_eq),
                    other => Err(Error::Type(format!("{other} is not a comparison"))),
                }
            }
            Node::Arith { op, left, right } => {
                let (l, r) = (left.evaluate(batch)?, right.evaluate(batch)?);
                // Like DataFusion: + - * wrap on integer overflow, / and % fail on zero.
                match op {
                    BinaryOp::Plus => datum_op(&l, &r, numeric::add_wrapping),
                    BinaryOp::Minus => datum_op(&l, &r, numeric::sub_wrapping),
                    BinaryOp::Multiply => datum_op(&l, &r, numeric::mul_wrapping),
                    BinaryOp::Divide => datum_op(&l, &r, numeric::div),
                    BinaryOp::Modulo => datum_op(&l, &r, numeric::rem),
                    other => Err(Error::Type(format!("{other} is not arithmetic"))),
                }
            }
            Node::Concat { left, right } => {
                let (l, r) = (left.evaluate(batch)?, right.evaluate(batch)?);
                if l.is_scalar() && r.is_scalar() {
                    let (l, r) = (l.into_array(1)?, r.into_array(1)?);
                    return Ok(Value::Scalar(concat_elements_dyn(l.as_ref(), r.as_ref())?));
                }
                let (l, r) = (l.into_array(rows)?, r.into_array(rows)?);
                Ok(Value::Array(concat_elements_dyn(l.as_ref(), r.as_ref())?))
            }
            Node::And(left, right) => {
                let l = left.evaluate(batch)?;
                if let Value::Array(a) = &l {
                    // Nothing can make a false row true: skip the right side.
                    if all_false(as_bool(a)?) {
                        return Ok(l);
                    }
                }
                let r = right.evaluate(batch)?;
                kleene(l, r, rows, and_kleene)
            }
            Node::Or(left, right) => {
                let l = left.evaluate(batch)?;
                if let Value::Array(a) = &l {
                    if all_true(as_bool(a)?) {
                        return Ok(l);
                    }
                }
                let r = right.evaluate(batch)?;
                kleene(l, r, rows, or_kleene)
            }
            Node::Not(input) => input.evaluate(batch)?.map(|a| Ok(Arc::new(not(as_bool(a)?)?))),
            Node::Negative(input) => input.evaluate(batch)?.map(|a| Ok(numeric::neg_wrapping(a.as_ref())?)),
            Node::IsNull(input) => input.evaluate(batch)?.map(|a| Ok(Arc::new(is_null(a.as_ref())?))),
            Node::IsNotNull(input) => input.evaluate(batch)?.map(|a| Ok(Arc::new(is_not_null(a.as_ref())?))),
            Node::IsBool { input, value, negated } => input
                .evaluate(batch)?
                .map(|a| Ok(Arc::new(is_bool(as_bool(a)?, *value, *negated)))),
            Node::InList { input, list, negated } => {
                let v = positive_zero(input.evaluate(batch)?);
                let mut acc: Option<Value> = None;
                for item in list {
                    let eq = bool_op(&v, &positive_zero(item.evaluate(batch)?), cmp::eq)?;
                    acc = Some(match acc {
                        None => eq,
                        Some(prev) => kleene(prev, eq, rows, or_kleene)?,
                    });
                }
                let result = acc.ok_or_else(|| Error::Type("IN list is empty".to_string()))?;
                if *negated {
                    result.map(|a| Ok(Arc::new(not(as_bool(a)?)?)))
                } else {
                    Ok(result)
                }
            }
            Node::InSet {
                input,
                set,
                list_has_null,
                negated,
                ..
            } => {
                input.evaluate(batch)?.map(|a| {
                    let found = set.contains(a.as_ref())?;
                    // `x IN (1, NULL)` is NULL rather than FALSE when x is not 1.
                    let found = if *list_has_null {
                        let hit = match found.nulls() {
                            Some(n) => found.values() & n.inner(),
                            None => found.values().clone(),
                        };
                        BooleanArray::new(hit.clone(), Some(hit.into()))
                    } else {
                        found
                    };
                    Ok(Arc::new(if *negated { not(&found)? } else { found }))
                })
            }
            Node::Like {
                input,
                pattern,
                negated,
                case_insensitive,
            } => {
                let (v, p) = (input.evaluate(batch)?, pattern.evaluate(batch)?);
                match (negated, case_insensitive) {
                    (false, false) => bool_op(&v, &p, like::like),
                    (true, false) => bool_op(&v, &p, like::nlike),
                    (false, true) => bool_op(&v, &p, like::ilike),
                    (true, true) => bool_op(&v, &p, like::nilike),
                }
            }
            Node::Call { func, args } => {
                let values = args.iter().map(|a| a.evaluate(batch)).collect::<Result<Vec<_>>>()?;
                func.invoke(&values, rows)
            }
        }
    }
}

fn kleene(
    l: Value,
    r: Value,
    rows: usize,
    f: fn(&BooleanArray, &BooleanArray) -> std::result::Result<BooleanArray, ArrowError>,
) -> Result<Value> {
    let both_scalar = l.is_scalar() && r.is_scalar();
    let len = if both_scalar { 1 } else { rows };
    let (l, r) = (l.into_array(len)?, r.into_array(len)?);
    let out: ArrayRef = Arc::new(f(as_bool(&l)?, as_bool(&r)?)?);
    Ok(if both_scalar {
        Value::Scalar(out)
    } else {
        Value::Array(out)
    })
}
