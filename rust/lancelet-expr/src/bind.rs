//! Name resolution, type checking and implicit casts: `Expr` + `Schema` -> `BoundExpr`.

use std::sync::{Arc, LazyLock};

use arrow_arith::numeric;
use arrow_array::{
    new_empty_array, new_null_array, Array, ArrayRef, BinaryArray, BooleanArray, Date32Array, Float64Array, Int64Array,
    NullArray, RecordBatch, RecordBatchOptions, StringArray, TimestampMicrosecondArray, TimestampMillisecondArray,
    TimestampNanosecondArray, TimestampSecondArray, UInt64Array,
};
use arrow_cast::{can_cast_types, cast_with_options, CastOptions};
use arrow_schema::{DataType, Fields, Schema, TimeUnit};
use arrow_select::filter::prep_null_mask_filter;

use crate::ast::{BinaryOp, Expr, ScalarValue, SqlType};
use crate::coerce::{
    comparison_common, const_coercible, is_comparable, is_date, is_decimal, is_float, is_int, is_numeric, is_string,
    is_unsigned_int, logical, numeric_common,
};
use crate::error::{Error, Result};
use crate::eval::Node;
use crate::in_set::InSet;

mod call;
mod scalar;

/// IN lists with more constant values than this probe a hash set instead of OR-ing equalities
/// (on 1M Int64 rows one equality + OR costs about 2 ms and the hash probe about 12 ms).
const IN_SET_THRESHOLD: usize = 8;

/// An expression resolved against a schema, ready to evaluate on record batches.
#[derive(Debug, Clone)]
pub struct BoundExpr {
    node: Node,
    data_type: DataType,
    expr: Expr,
}

impl BoundExpr {
    /// The type [`BoundExpr::evaluate`] returns.
    pub fn data_type(&self) -> &DataType {
        &self.data_type
    }

    /// The expression after binding: column paths spelled exactly as in the schema and implicit
    /// conversions written out as `CAST` nodes (for example `int32_col = CAST(5 AS INT)`).
    pub fn expr(&self) -> &Expr {
        &self.expr
    }

    pub(crate) fn node(&self) -> &Node {
        &self.node
    }

    /// Evaluates the expression on every row of `batch`.
    ///
    /// `batch` must contain, by name, the top-level columns the expression references, with the
    /// types the expression was bound against.
    pub fn evaluate(&self, batch: &RecordBatch) -> Result<ArrayRef> {
        self.node.evaluate(batch)?.into_array(batch.num_rows())
    }

    /// Evaluates a boolean expression as a filter: NULL counts as false, so the result has no
    /// nulls.
    pub fn evaluate_predicate(&self, batch: &RecordBatch) -> Result<BooleanArray> {
        if self.data_type != DataType::Boolean {
            return Err(Error::Type(format!(
                "a filter must be a boolean expression, but {} is {}",
                self.expr, self.data_type
            )));
        }
        let array = self.evaluate(batch)?;
        let Some(mask) = array.as_any().downcast_ref::<BooleanArray>() else {
            return Err(Error::Type(format!(
                "filter evaluated to {} instead of boolean",
                array.data_type()
            )));
        };
        Ok(if mask.null_count() > 0 {
            prep_null_mask_filter(mask)
        } else {
            mask.clone()
        })
    }
}

impl Expr {
    /// Resolves column names against `schema`, checks types and inserts the conversions the
    /// comparison and arithmetic rules call for. Constant sub-expressions are computed here.
    pub fn bind(&self, schema: &Schema) -> Result<BoundExpr> {
        self.bind_with(schema, false)
    }

    /// Like [`Expr::bind`], for an output column: integer literals in arithmetic take the
    /// type of the integer column they meet when they fit, as pylance's projections do.
    pub fn bind_projection(&self, schema: &Schema) -> Result<BoundExpr> {
        self.bind_with(schema, true)
    }

    fn bind_with(&self, schema: &Schema, narrow_literals: bool) -> Result<BoundExpr> {
        let b = Binder {
            schema,
            narrow_literals,
        }
        .bind(self)?;
        Ok(BoundExpr {
            node: b.node,
            data_type: b.ty,
            expr: b.expr,
        })
    }
}

/// A bound sub-expression during binding.
struct Bound {
    node: Node,
    ty: DataType,
    /// The annotated AST for this sub-expression.
    expr: Expr,
    is_column: bool,
}

/// Whether a constant integer converts to `to` without overflow.
fn literal_fits(b: &Bound, to: &DataType) -> bool {
    let Some(v) = b.const_value() else { return false };
    let opts = arrow_cast::CastOptions {
        safe: true,
        ..Default::default()
    };
    arrow_cast::cast_with_options(v, to, &opts).is_ok_and(|c| c.null_count() == v.null_count())
}

impl Bound {
    fn is_const_nullish(&self) -> bool {
        self.ty == DataType::Null
    }

    fn is_const(&self) -> bool {
        matches!(self.node, Node::Literal(_))
    }

    fn const_value(&self) -> Option<&ArrayRef> {
        match &self.node {
            Node::Literal(a) => Some(a),
            _ => None,
        }
    }

    fn is_null_const(&self) -> bool {
        self.const_value().is_some_and(|a| a.is_null(0))
    }

    /// How error messages name this operand.
    fn describe(&self) -> String {
        if self.is_column {
            format!("column {}", self.expr)
        } else if self.is_const() {
            format!("literal {}", self.expr)
        } else {
            format!("expression {}", self.expr)
        }
    }

    fn constant(array: ArrayRef, expr: Expr) -> Bound {
        Bound {
            ty: array.data_type().clone(),
            node: Node::Literal(array),
            expr,
            is_column: false,
        }
    }
}

static ONE_ROW: LazyLock<Option<RecordBatch>> = LazyLock::new(|| {
    RecordBatch::try_new_with_options(
        Arc::new(Schema::empty()),
        vec![],
        &RecordBatchOptions::new().with_row_count(Some(1)),
    )
    .ok()
});

/// Computes a node whose inputs are all constant.
fn fold(node: &Node) -> Result<ArrayRef> {
    let batch = ONE_ROW
        .as_ref()
        .ok_or_else(|| Error::Type("cannot build a one-row batch".to_string()))?;
    node.evaluate(batch)?.into_array(1)
}

fn literal_array(v: &ScalarValue) -> ArrayRef {
    match v {
        ScalarValue::Null => Arc::new(NullArray::new(1)),
        ScalarValue::Boolean(b) => Arc::new(BooleanArray::from(vec![*b])),
        ScalarValue::Int64(i) => Arc::new(Int64Array::from(vec![*i])),
        ScalarValue::UInt64(u) => Arc::new(UInt64Array::from(vec![*u])),
        ScalarValue::Float64(f) => Arc::new(Float64Array::from(vec![*f])),
        ScalarValue::Utf8(s) => Arc::new(StringArray::from(vec![s.as_str()])),
        ScalarValue::Binary(b) => Arc::new(BinaryArray::from_vec(vec![b.as_slice()])),
        ScalarValue::Date32(d) => Arc::new(Date32Array::from(vec![*d])),
        ScalarValue::Timestamp(t, unit) => match unit {
            TimeUnit::Second => Arc::new(TimestampSecondArray::from(vec![*t])),
            TimeUnit::Millisecond => Arc::new(TimestampMillisecondArray::from(vec![*t])),
            TimeUnit::Microsecond => Arc::new(TimestampMicrosecondArray::from(vec![*t])),
            TimeUnit::Nanosecond => Arc::new(TimestampNanosecondArray::from(vec![*t])),
        },
    }
}

fn type_error(msg: impl Into<String>) -> Error {
    Error::Type(msg.into())
}

fn display_path(path: &[String]) -> String {
    Expr::Column(path.to_vec()).to_string()
}

struct Binder<'a> {
    schema: &'a Schema,
    /// Cast integer literals to the integer column they meet in arithmetic when they fit
    /// (pylance's projection rule: `i32_col * 2` stays Int32); filters widen instead.
    narrow_literals: bool,
}

impl Binder<'_> {
    /// Builds a node from bound children, computing it right away when all of them are
    /// constant.
    fn finish(&self, node: Node, ty: DataType, expr: Expr, children: &[&Bound]) -> Result<Bound> {
        if children.iter().all(|c| c.is_const()) {
            let value = fold(&node)?;
            return Ok(Bound {
                ty: value.data_type().clone(),
                node: Node::Literal(value),
                expr,
                is_column: false,
            });
        }
        Ok(Bound {
            node,
            ty,
            expr,
            is_column: false,
        })
    }

    fn bind(&self, e: &Expr) -> Result<Bound> {
        match e {
            Expr::Column(path) => self.bind_column(path),
            Expr::Literal(v) => Ok(Bound::constant(literal_array(v), e.clone())),
            Expr::Binary { op, left, right } => {
                let (l, r) = (self.bind(left)?, self.bind(right)?);
                self.bind_binary(*op, l, r)
            }
            Expr::Not(inner) => {
                let b = self.require_bool(self.bind(inner)?, "NOT")?;
                let expr = Expr::Not(Box::new(b.expr.clone()));
                self.finish(Node::Not(Box::new(b.node.clone())), DataType::Boolean, expr, &[&b])
            }
            Expr::Negative(inner) => self.bind_negative(self.bind(inner)?),
            Expr::IsNull(inner) | Expr::IsNotNull(inner) => {
                let b = self.bind(inner)?;
                let is_null = matches!(e, Expr::IsNull(_));
                let (node, expr) = if is_null {
                    (
                        Node::IsNull(Box::new(b.node.clone())),
                        Expr::IsNull(Box::new(b.expr.clone())),
                    )
                } else {
                    (
                        Node::IsNotNull(Box::new(b.node.clone())),
                        Expr::IsNotNull(Box::new(b.expr.clone())),
                    )
                };
                self.finish(node, DataType::Boolean, expr, &[&b])
            }
            Expr::IsTrue(inner) | Expr::IsFalse(inner) | Expr::IsNotTrue(inner) | Expr::IsNotFalse(inner) => {
                let (value, negated, what) = match e {
                    Expr::IsTrue(_) => (true, false, "IS TRUE"),
                    Expr::IsFalse(_) => (false, false, "IS FALSE"),
                    Expr::IsNotTrue(_) => (true, true, "IS NOT TRUE"),
                    _ => (false, true, "IS NOT FALSE"),
                };
                let b = self.require_bool(self.bind(inner)?, what)?;
                let boxed = Box::new(b.expr.clone());
                let expr = match e {
                    Expr::IsTrue(_) => Expr::IsTrue(boxed),
                    Expr::IsFalse(_) => Expr::IsFalse(boxed),
                    Expr::IsNotTrue(_) => Expr::IsNotTrue(boxed),
                    _ => Expr::IsNotFalse(boxed),
                };
                let node = Node::IsBool {
                    input: Box::new(b.node.clone()),
                    value,
                    negated,
                };
                self.finish(node, DataType::Boolean, expr, &[&b])
            }
            Expr::InList { expr, list, negated } => self.bind_in_list(expr, list, *negated),
            Expr::Between {
                expr,
                low,
                high,
                negated,
            } => {
                let value = self.bind(expr)?;
                let (low, high) = (self.bind(low)?, self.bind(high)?);
                let (v1, low) = self.coerce_comparison(self.rebind(&value), low, "BETWEEN")?;
                let (v2, high) = self.coerce_comparison(value, high, "BETWEEN")?;
                let annotated = Expr::Between {
                    expr: Box::new(v1.expr.clone()),
                    low: Box::new(low.expr.clone()),
                    high: Box::new(high.expr.clone()),
                    negated: *negated,
                };
                let (op_low, op_high) = if *negated {
                    (BinaryOp::Lt, BinaryOp::Gt)
                } else {
                    (BinaryOp::GtEq, BinaryOp::LtEq)
                };
                let lower = Node::Compare {
                    op: op_low,
                    left: Box::new(v1.node.clone()),
                    right: Box::new(low.node.clone()),
                };
                let upper = Node::Compare {
                    op: op_high,
                    left: Box::new(v2.node.clone()),
                    right: Box::new(high.node.clone()),
                };
                let node = if *negated {
                    Node::Or(Box::new(lower), Box::new(upper))
                } else {
                    Node::And(Box::new(lower), Box::new(upper))
                };
                self.finish(node, DataType::Boolean, annotated, &[&v1, &low, &high])
            }
            Expr::Like {
                expr,
                pattern,
                negated,
                case_insensitive,
                escape,
            } => self.bind_like(
                self.bind(expr)?,
                self.bind(pattern)?,
                *negated,
                *case_insensitive,
                *escape,
            ),
            Expr::Cast { expr, to } | Expr::TryCast { expr, to } => {
                let b = self.bind(expr)?;
                let safe = matches!(e, Expr::TryCast { .. });
                if !can_cast_types(&b.ty, to) {
                    return Err(type_error(format!(
                        "cannot cast {} of type {} to {}",
                        b.describe(),
                        b.ty,
                        SqlType(to)
                    )));
                }
                let boxed = Box::new(b.expr.clone());
                let annotated = if safe {
                    Expr::TryCast {
                        expr: boxed,
                        to: to.clone(),
                    }
                } else {
                    Expr::Cast {
                        expr: boxed,
                        to: to.clone(),
                    }
                };
                let node = Node::Cast {
                    input: Box::new(b.node.clone()),
                    to: to.clone(),
                    safe,
                };
                self.finish(node, to.clone(), annotated, &[&b])
            }
            Expr::Function { name, args } => {
                let args = args.iter().map(|a| self.bind(a)).collect::<Result<Vec<_>>>()?;
                self.bind_function(name, args)
            }
        }
    }

    /// A copy of a bound operand (used where one input feeds two comparisons).
    fn rebind(&self, b: &Bound) -> Bound {
        Bound {
            node: b.node.clone(),
            ty: b.ty.clone(),
            expr: b.expr.clone(),
            is_column: b.is_column,
        }
    }

    /// Resolves a column path. The top-level name matches exactly or, failing that, ignoring
    /// case (as Lance does for unquoted names); struct fields match exactly.
    fn bind_column(&self, path: &[String]) -> Result<Bound> {
        let Some((first, rest)) = path.split_first() else {
            return Err(type_error("empty column reference"));
        };
        let fields = self.schema.fields();
        let names = || fields.iter().map(|f| f.name().clone()).collect::<Vec<_>>();
        let field = match fields.iter().find(|f| f.name() == first) {
            Some(f) => Arc::clone(f),
            None => {
                let matches: Vec<_> = fields.iter().filter(|f| f.name().eq_ignore_ascii_case(first)).collect();
                match matches.as_slice() {
                    [one] => Arc::clone(one),
                    [] => {
                        // `a.b` written without backquotes for a top-level column named "a.b".
                        let joined = path.join(".");
                        if path.len() > 1 {
                            if let Some(f) = fields.iter().find(|f| *f.name() == joined) {
                                let resolved = vec![f.name().clone()];
                                return Ok(Bound {
                                    node: Node::Column {
                                        name: f.name().clone(),
                                        fields: vec![],
                                    },
                                    ty: f.data_type().clone(),
                                    expr: Expr::Column(resolved),
                                    is_column: true,
                                });
                            }
                        }
                        return Err(Error::UnknownColumn {
                            name: display_path(&path[..1]),
                            available: names(),
                        });
                    }
                    many => {
                        return Err(Error::AmbiguousColumn {
                            name: first.clone(),
                            candidates: many.iter().map(|f| f.name().clone()).collect(),
                        });
                    }
                }
            }
        };
        let mut resolved = vec![field.name().clone()];
        let mut ty = field.data_type().clone();
        for name in rest {
            let children: &Fields = match &ty {
                DataType::Struct(children) => children,
                other => {
                    return Err(type_error(format!(
                        "column {} is {other}, not a struct, so it has no field {}",
                        display_path(&resolved),
                        display_path(std::slice::from_ref(name)),
                    )));
                }
            };
            let Some(child) = children.iter().find(|f| f.name() == name) else {
                let parent = display_path(&resolved);
                return Err(Error::UnknownColumn {
                    name: display_path(&[resolved.clone(), vec![name.clone()]].concat()),
                    available: children
                        .iter()
                        .map(|f| format!("{parent}.{}", display_path(std::slice::from_ref(f.name()))))
                        .collect(),
                });
            };
            resolved.push(child.name().clone());
            ty = child.data_type().clone();
        }
        Ok(Bound {
            node: Node::Column {
                name: resolved[0].clone(),
                fields: resolved[1..].to_vec(),
            },
            ty,
            expr: Expr::Column(resolved),
            is_column: true,
        })
    }

    /// An implicit conversion to exactly `to`.
    fn cast_to(&self, b: Bound, to: &DataType) -> Result<Bound> {
        if &b.ty == to {
            return Ok(b);
        }
        let expr = Expr::Cast {
            expr: Box::new(b.expr.clone()),
            to: to.clone(),
        };
        if let Some(value) = b.const_value() {
            let options = CastOptions {
                safe: false,
                ..Default::default()
            };
            let cast = cast_with_options(value.as_ref(), to, &options)
                .map_err(|e| type_error(format!("cannot convert {} to {}: {e}", b.describe(), SqlType(to))))?;
            return Ok(Bound::constant(cast, expr));
        }
        Ok(Bound {
            node: Node::Cast {
                input: Box::new(b.node),
                to: to.clone(),
                safe: false,
            },
            ty: to.clone(),
            expr,
            is_column: false,
        })
    }

    /// Dictionary-encoded operands of arithmetic and functions are decoded first.
    fn decode(&self, b: Bound) -> Result<Bound> {
        match &b.ty {
            DataType::Dictionary(_, v) => {
                let v = v.as_ref().clone();
                self.cast_to(b, &v)
            }
            _ => Ok(b),
        }
    }

    /// Converts a constant to the type of the operand it is compared with, if Lance's literal
    /// rules allow it and the value fits. `None` when it does not.
    fn coerce_const(&self, b: &Bound, target: &DataType) -> Option<Bound> {
        let to = logical(target);
        let value = b.const_value()?;
        if !const_coercible(&b.ty, to) {
            return None;
        }
        let expr = Expr::Cast {
            expr: Box::new(b.expr.clone()),
            to: to.clone(),
        };
        if value.data_type() == &DataType::Null {
            return Some(Bound::constant(new_null_array(to, 1), expr));
        }
        let options = CastOptions {
            safe: false,
            ..Default::default()
        };
        let mut value = Arc::clone(value);
        // A date becomes midnight wall-clock time, which is then placed in the target zone.
        if let (true, DataType::Timestamp(unit, Some(_))) = (is_date(&b.ty), to) {
            value = cast_with_options(value.as_ref(), &DataType::Timestamp(*unit, None), &options).ok()?;
        }
        let cast = cast_with_options(value.as_ref(), to, &options).ok()?;
        Some(Bound::constant(cast, expr))
    }

    fn literal_mismatch(&self, col: &Bound, lit: &Bound) -> Error {
        let (ct, lt) = (logical(&col.ty), &lit.ty);
        let hint = if is_string(lt) && (is_date(ct) || matches!(ct, DataType::Timestamp(_, _))) {
            if is_date(ct) {
                format!("; write a date literal as DATE {}", lit.expr)
            } else {
                format!("; write a timestamp literal as TIMESTAMP {}", lit.expr)
            }
        } else if is_string(lt) && is_numeric(ct) {
            "; strings are not converted to numbers (remove the quotes to write a number)".to_string()
        } else if is_numeric(lt) && is_string(ct) {
            "; numbers are not converted to strings (quote the value to write a string)".to_string()
        } else if is_float(lt) && (is_int(ct) || is_decimal(ct)) {
            format!(
                "; a fractional literal is not converted to {ct} (CAST the column, e.g. CAST({} AS DOUBLE))",
                col.expr
            )
        } else if is_int(lt) && (is_int(ct) || is_decimal(ct)) {
            format!(": the value is out of range for {ct}")
        } else {
            String::new()
        };
        type_error(format!(
            "cannot compare {} of type {ct} with {} of type {lt}{hint}",
            col.describe(),
            lit.describe()
        ))
    }

    /// Brings two operands of a comparison (or IN / BETWEEN) to a common type.
    fn coerce_comparison(&self, l: Bound, r: Bound, op: &str) -> Result<(Bound, Bound)> {
        for side in [&l, &r] {
            if !is_comparable(&side.ty) {
                return Err(type_error(format!(
                    "cannot use {op} on {}: values of type {} cannot be compared",
                    side.describe(),
                    side.ty
                )));
            }
        }
        let (lt, rt) = (logical(&l.ty).clone(), logical(&r.ty).clone());
        if lt == rt {
            return Ok((l, r));
        }
        if lt == DataType::Null {
            return Ok((self.cast_to(l, &rt)?, r));
        }
        if rt == DataType::Null {
            return Ok((l, self.cast_to(r, &lt)?));
        }
        // Lance's literal rule: a constant takes the other operand's type, or the comparison
        // is rejected when the other operand is a column.
        if r.is_const() && !l.is_const() {
            if let Some(r) = self.coerce_const(&r, &lt) {
                return Ok((l, r));
            }
            if l.is_column {
                return Err(self.literal_mismatch(&l, &r));
            }
        } else if l.is_const() && !r.is_const() {
            if let Some(l) = self.coerce_const(&l, &rt) {
                return Ok((l, r));
            }
            if r.is_column {
                return Err(self.literal_mismatch(&r, &l));
            }
        }
        let Some(common) = comparison_common(&lt, &rt) else {
            return Err(type_error(format!(
                "cannot compare {} of type {lt} with {} of type {rt} using {op}",
                l.describe(),
                r.describe()
            )));
        };
        let l = if lt != common { self.cast_to(l, &common)? } else { l };
        let r = if rt != common { self.cast_to(r, &common)? } else { r };
        Ok((l, r))
    }

    fn require_bool(&self, b: Bound, what: &str) -> Result<Bound> {
        match &b.ty {
            DataType::Boolean => Ok(b),
            DataType::Null => self.cast_to(b, &DataType::Boolean),
            other => Err(type_error(format!(
                "{what} needs a boolean operand, but {} is {other}",
                b.describe()
            ))),
        }
    }

    fn bind_binary(&self, op: BinaryOp, l: Bound, r: Bound) -> Result<Bound> {
        if op.is_comparison() {
            let (l, r) = self.coerce_comparison(l, r, op.sql())?;
            let expr = Expr::binary(l.expr.clone(), op, r.expr.clone());
            // NULL compared with anything is NULL.
            if l.is_null_const() || r.is_null_const() {
                return Ok(Bound::constant(new_null_array(&DataType::Boolean, 1), expr));
            }
            let node = Node::Compare {
                op,
                left: Box::new(l.node.clone()),
                right: Box::new(r.node.clone()),
            };
            return self.finish(node, DataType::Boolean, expr, &[&l, &r]);
        }
        match op {
            BinaryOp::And | BinaryOp::Or => {
                let l = self.require_bool(l, op.sql())?;
                let r = self.require_bool(r, op.sql())?;
                let expr = Expr::binary(l.expr.clone(), op, r.expr.clone());
                let (ln, rn) = (Box::new(l.node.clone()), Box::new(r.node.clone()));
                let node = if op == BinaryOp::And {
                    Node::And(ln, rn)
                } else {
                    Node::Or(ln, rn)
                };
                self.finish(node, DataType::Boolean, expr, &[&l, &r])
            }
            BinaryOp::StringConcat => {
                let (l, r) = (self.decode(l)?, self.decode(r)?);
                for side in [&l, &r] {
                    if !is_string(&side.ty) && side.ty != DataType::Null {
                        return Err(type_error(format!(
                            "|| concatenates strings, but {} is {}",
                            side.describe(),
                            side.ty
                        )));
                    }
                }
                let target = if l.ty == DataType::LargeUtf8 || r.ty == DataType::LargeUtf8 {
                    DataType::LargeUtf8
                } else {
                    DataType::Utf8
                };
                let (l, r) = (self.cast_to(l, &target)?, self.cast_to(r, &target)?);
                let expr = Expr::binary(l.expr.clone(), op, r.expr.clone());
                let node = Node::Concat {
                    left: Box::new(l.node.clone()),
                    right: Box::new(r.node.clone()),
                };
                self.finish(node, target, expr, &[&l, &r])
            }
            _ => self.bind_arith(op, l, r),
        }
    }

    fn bind_arith(&self, op: BinaryOp, l: Bound, r: Bound) -> Result<Bound> {
        let (mut l, mut r) = (self.decode(l)?, self.decode(r)?);
        for side in [&l, &r] {
            if !is_numeric(&side.ty) && side.ty != DataType::Null {
                return Err(type_error(format!(
                    "cannot apply {op} to {} of type {}: arithmetic needs numbers",
                    side.describe(),
                    side.ty
                )));
            }
        }
        if l.ty == DataType::Null && r.ty == DataType::Null {
            l = self.cast_to(l, &DataType::Int64)?;
            r = self.cast_to(r, &DataType::Int64)?;
        } else if l.ty == DataType::Null {
            l = self.cast_to(l, &r.ty.clone())?;
        } else if r.ty == DataType::Null {
            r = self.cast_to(r, &l.ty.clone())?;
        }
        if self.narrow_literals {
            if is_int(&l.ty) && !r.is_const_nullish() && r.is_const() && is_int(&r.ty) && literal_fits(&r, &l.ty) {
                r = self.cast_to(r, &l.ty.clone())?;
            } else if is_int(&r.ty) && l.is_const() && is_int(&l.ty) && literal_fits(&l, &r.ty) {
                l = self.cast_to(l, &r.ty.clone())?;
            }
        }
        let same_decimal_width = matches!(
            (&l.ty, &r.ty),
            (DataType::Decimal128(_, _), DataType::Decimal128(_, _))
                | (DataType::Decimal256(_, _), DataType::Decimal256(_, _))
        );
        if !same_decimal_width {
            let common = numeric_common(&l.ty, &r.ty)
                .ok_or_else(|| type_error(format!("cannot apply {op} to {} and {}", l.describe(), r.describe())))?;
            l = self.cast_to(l, &common)?;
            r = self.cast_to(r, &common)?;
        }
        // The kernel decides the result type (decimal precision rules); ask it on empty input.
        let (le, re) = (new_empty_array(&l.ty), new_empty_array(&r.ty));
        let probe = match op {
            BinaryOp::Plus => numeric::add_wrapping(&le, &re),
            BinaryOp::Minus => numeric::sub_wrapping(&le, &re),
            BinaryOp::Multiply => numeric::mul_wrapping(&le, &re),
            BinaryOp::Divide => numeric::div(&le, &re),
            _ => numeric::rem(&le, &re),
        };
        let ty = probe
            .map_err(|e| {
                type_error(format!(
                    "cannot apply {op} to {} and {}: {e}",
                    l.describe(),
                    r.describe()
                ))
            })?
            .data_type()
            .clone();
        let expr = Expr::binary(l.expr.clone(), op, r.expr.clone());
        let node = Node::Arith {
            op,
            left: Box::new(l.node.clone()),
            right: Box::new(r.node.clone()),
        };
        self.finish(node, ty, expr, &[&l, &r])
    }

    fn bind_negative(&self, b: Bound) -> Result<Bound> {
        let b = self.decode(b)?;
        if b.ty == DataType::Null {
            return Ok(b);
        }
        if !is_numeric(&b.ty) || is_unsigned_int(&b.ty) {
            return Err(type_error(format!("cannot negate {} of type {}", b.describe(), b.ty)));
        }
        let expr = Expr::Negative(Box::new(b.expr.clone()));
        let ty = b.ty.clone();
        self.finish(Node::Negative(Box::new(b.node.clone())), ty, expr, &[&b])
    }

    fn bind_in_list(&self, expr: &Expr, list: &[Expr], negated: bool) -> Result<Bound> {
        let value = self.bind(expr)?;
        let items = list.iter().map(|i| self.bind(i)).collect::<Result<Vec<_>>>()?;
        if items.is_empty() {
            return Err(type_error("IN needs at least one value"));
        }
        if !is_comparable(&value.ty) {
            return Err(type_error(format!(
                "cannot use IN on {}: values of type {} cannot be compared",
                value.describe(),
                value.ty
            )));
        }
        // The type every item is compared as: the value's type, widened by non-constant items
        // (and, when the value is not a plain column, by constants that do not fit).
        let mut target = logical(&value.ty).clone();
        if target == DataType::Null {
            // `NULL IN (...)` or a NULL-typed column: compare as the items' type.
            if let Some(first) = items.iter().find(|i| i.ty != DataType::Null) {
                target = logical(&first.ty).clone();
            }
        }
        for item in &items {
            let fits = item.is_const() && self.coerce_const(item, &target).is_some();
            if fits {
                continue;
            }
            if item.is_const() && value.is_column && value.ty != DataType::Null {
                return Err(self.literal_mismatch(&value, item));
            }
            target = comparison_common(&target, &item.ty).ok_or_else(|| {
                type_error(format!(
                    "cannot compare {} of type {} with {} of type {} in IN list",
                    value.describe(),
                    value.ty,
                    item.describe(),
                    item.ty
                ))
            })?;
        }
        // A NULL-typed value takes the items' type, which may be one IN cannot compare.
        if !is_comparable(&target) {
            return Err(type_error(format!(
                "cannot use IN on {}: values of type {target} cannot be compared",
                value.describe()
            )));
        }
        let value = if logical(&value.ty) != &target {
            self.cast_to(value, &target)?
        } else {
            value
        };
        let mut coerced = Vec::with_capacity(items.len());
        for item in items {
            let item = if item.is_const() {
                match self.coerce_const(&item, &target) {
                    Some(c) => c,
                    None => self.cast_to(item, &target)?,
                }
            } else if logical(&item.ty) != &target {
                self.cast_to(item, &target)?
            } else {
                item
            };
            coerced.push(item);
        }
        let annotated = Expr::InList {
            expr: Box::new(value.expr.clone()),
            list: coerced.iter().map(|i| i.expr.clone()).collect(),
            negated,
        };
        let all_const = coerced.iter().all(Bound::is_const);
        let node = if all_const && coerced.len() > IN_SET_THRESHOLD && InSet::supports(&target) {
            let arrays: Vec<&dyn Array> = coerced
                .iter()
                .filter_map(|i| i.const_value())
                .map(|a| a.as_ref())
                .collect();
            let values = arrow_select::concat::concat(&arrays)?;
            let list_has_null = values.null_count() > 0;
            Node::InSet {
                input: Box::new(value.node.clone()),
                set: Arc::new(InSet::build(values.as_ref())?),
                values,
                list_has_null,
                negated,
            }
        } else {
            Node::InList {
                input: Box::new(value.node.clone()),
                list: coerced.iter().map(|i| i.node.clone()).collect(),
                negated,
            }
        };
        let mut children: Vec<&Bound> = vec![&value];
        children.extend(coerced.iter());
        self.finish(node, DataType::Boolean, annotated, &children)
    }

    fn bind_like(
        &self,
        value: Bound,
        pattern: Bound,
        negated: bool,
        case_insensitive: bool,
        escape: Option<char>,
    ) -> Result<Bound> {
        let what = if case_insensitive { "ILIKE" } else { "LIKE" };
        for side in [&value, &pattern] {
            if !is_string(logical(&side.ty)) && side.ty != DataType::Null {
                return Err(type_error(format!(
                    "{what} needs strings, but {} is {}",
                    side.describe(),
                    side.ty
                )));
            }
        }
        let annotate = |v: &Bound, p: &Bound| Expr::Like {
            expr: Box::new(v.expr.clone()),
            pattern: Box::new(p.expr.clone()),
            negated,
            case_insensitive,
            escape,
        };
        if value.is_null_const() || pattern.is_null_const() {
            return Ok(Bound::constant(
                new_null_array(&DataType::Boolean, 1),
                annotate(&value, &pattern),
            ));
        }
        // A NULL-typed column matches as (all-NULL) text.
        let value = if value.ty == DataType::Null {
            self.cast_to(value, &DataType::Utf8)?
        } else {
            value
        };
        let target = logical(&value.ty).clone();
        let pattern = match escape {
            Some(c) if c != '\\' => {
                let text = pattern
                    .const_value()
                    .and_then(|a| a.as_any().downcast_ref::<StringArray>().map(|s| s.value(0).to_string()))
                    .ok_or_else(|| type_error(format!("{what} ... ESCAPE needs a constant string pattern")))?;
                let rewritten = rewrite_escape(&text, c)?;
                Bound::constant(Arc::new(StringArray::from(vec![rewritten])), pattern.expr.clone())
            }
            _ => pattern,
        };
        let (value, pattern) = if pattern.is_const() {
            let p = self.cast_to(pattern, &target)?;
            (value, p)
        } else {
            // Two arrays: both plain strings of one type.
            let v = self.decode(value)?;
            let p = self.decode(pattern)?;
            let p = self.cast_to(p, &v.ty.clone())?;
            (v, p)
        };
        let expr = annotate(&value, &pattern);
        let node = Node::Like {
            input: Box::new(value.node.clone()),
            pattern: Box::new(pattern.node.clone()),
            negated,
            case_insensitive,
        };
        self.finish(node, DataType::Boolean, expr, &[&value, &pattern])
    }
}

/// Rewrites a LIKE pattern with a custom escape character into the backslash-escaped form the
/// Arrow kernels use.
fn rewrite_escape(pattern: &str, escape: char) -> Result<String> {
    let mut out = String::with_capacity(pattern.len());
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        if c == escape {
            match chars.next() {
                Some(next) => {
                    out.push('\\');
                    out.push(next);
                }
                None => {
                    return Err(type_error(format!(
                        "LIKE pattern '{pattern}' ends with the escape character"
                    )))
                }
            }
        } else if c == '\\' {
            out.push_str("\\\\");
        } else {
            out.push(c);
        }
    }
    Ok(out)
}
