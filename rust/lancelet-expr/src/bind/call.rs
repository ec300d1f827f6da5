//! Function calls: argument checking, conversions and result types.

use std::str::FromStr;
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use arrow_array::{new_empty_array, Array, ArrayRef, Date32Array, StringArray, TimestampNanosecondArray};
use arrow_cast::can_cast_types;
use arrow_schema::DataType;

use super::{type_error, Binder, Bound};
use crate::ast::Expr;
use crate::coerce::{comparison_common, is_int, is_numeric, is_string, logical};
use crate::error::{Error, Result};
use crate::eval::Node;
use crate::functions::{Func, JsonFunc, JsonPath, SUPPORTED};

impl Binder<'_> {
    pub(super) fn bind_function(&self, name: &str, args: Vec<Bound>) -> Result<Bound> {
        let arity = |n: usize| -> Result<()> {
            if args.len() == n {
                Ok(())
            } else {
                Err(type_error(format!(
                    "{name}() takes {n} argument{}, got {}",
                    if n == 1 { "" } else { "s" },
                    args.len()
                )))
            }
        };
        let const_string = |b: &Bound, what: &str| -> Result<String> {
            b.const_value()
                .and_then(|a| arrow_cast::cast(a.as_ref(), &DataType::Utf8).ok())
                .and_then(|a| {
                    a.as_any()
                        .downcast_ref::<StringArray>()
                        .filter(|s| s.is_valid(0))
                        .map(|s| s.value(0).to_string())
                })
                .filter(|_| is_string(&b.ty))
                .ok_or_else(|| {
                    type_error(format!(
                        "the {what} of {name}() must be a constant string, got {}",
                        b.describe()
                    ))
                })
        };
        match name {
            "lower" | "upper" | "length" | "char_length" | "character_length" => {
                arity(1)?;
                let mut args = args;
                let a = self.decode(args.remove(0))?;
                let a = match &a.ty {
                    DataType::Utf8 | DataType::LargeUtf8 => a,
                    DataType::Utf8View | DataType::Null => self.cast_to(a, &DataType::Utf8)?,
                    other => {
                        return Err(type_error(format!(
                            "{name}() needs a string, but {} is {other}",
                            a.describe()
                        )));
                    }
                };
                let (func, ty) = match name {
                    "lower" => (Func::Lower, a.ty.clone()),
                    "upper" => (Func::Upper, a.ty.clone()),
                    _ => (
                        Func::CharLength,
                        if a.ty == DataType::LargeUtf8 {
                            DataType::Int64
                        } else {
                            DataType::Int32
                        },
                    ),
                };
                self.finish_call(name, func, vec![a], ty)
            }
            "starts_with" | "ends_with" | "contains" => {
                arity(2)?;
                let mut args = args.into_iter();
                let (Some(s), Some(p)) = (args.next(), args.next()) else {
                    return Err(type_error(format!("{name}() takes 2 arguments")));
                };
                for side in [&s, &p] {
                    if !is_string(logical(&side.ty)) && side.ty != DataType::Null {
                        return Err(type_error(format!(
                            "{name}() needs strings, but {} is {}",
                            side.describe(),
                            side.ty
                        )));
                    }
                }
                let s = if s.ty == DataType::Null {
                    self.cast_to(s, &DataType::Utf8)?
                } else {
                    s
                };
                let (s, p) = if p.is_const() {
                    let t = logical(&s.ty).clone();
                    (s, self.cast_to(p, &t)?)
                } else {
                    let s = self.decode(s)?;
                    let t = s.ty.clone();
                    (s, self.cast_to(self.decode(p)?, &t)?)
                };
                let func = match name {
                    "starts_with" => Func::StartsWith,
                    "ends_with" => Func::EndsWith,
                    _ => Func::Contains,
                };
                self.finish_call(name, func, vec![s, p], DataType::Boolean)
            }
            "regexp_like" | "regexp_match" => {
                if !(2..=3).contains(&args.len()) {
                    return Err(type_error(format!(
                        "{name}() takes 2 or 3 arguments, got {}",
                        args.len()
                    )));
                }
                let mut args = args.into_iter();
                let (Some(s), Some(p)) = (args.next(), args.next()) else {
                    return Err(type_error(format!("{name}() takes 2 or 3 arguments")));
                };
                let pattern = const_string(&p, "pattern")?;
                let flags = match args.next() {
                    Some(f) => Some(const_string(&f, "flags argument")?),
                    None => None,
                };
                let s = self.decode(s)?;
                let s = match &s.ty {
                    DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => s,
                    DataType::Null => self.cast_to(s, &DataType::Utf8)?,
                    other => {
                        return Err(type_error(format!(
                            "{name}() needs a string, but {} is {other}",
                            s.describe()
                        )));
                    }
                };
                let func = if name == "regexp_like" {
                    Func::RegexpLike { pattern, flags }
                } else {
                    Func::RegexpMatch { pattern, flags }
                };
                // Compile the pattern now (an invalid one is the user's error) and learn the
                // result type.
                let empty = crate::eval::Value::Array(new_empty_array(&s.ty));
                let ty = func
                    .invoke(&[empty], 0)
                    .map_err(|e| type_error(format!("invalid {name}() pattern: {e}")))?
                    .data_type()
                    .clone();
                self.finish_call(name, func, vec![s], ty)
            }
            "abs" => {
                arity(1)?;
                let mut args = args;
                let a = self.decode(args.remove(0))?;
                if !is_numeric(&a.ty) && a.ty != DataType::Null {
                    return Err(type_error(format!(
                        "abs() needs a number, but {} is {}",
                        a.describe(),
                        a.ty
                    )));
                }
                let ty = a.ty.clone();
                self.finish_call(name, Func::Abs, vec![a], ty)
            }
            "isnan" | "is_nan" => {
                arity(1)?;
                let mut args = args;
                let a = self.decode(args.remove(0))?;
                if !is_numeric(&a.ty) && a.ty != DataType::Null {
                    return Err(type_error(format!(
                        "{name}() needs a number, but {} is {}",
                        a.describe(),
                        a.ty
                    )));
                }
                self.finish_call(name, Func::IsNan, vec![a], DataType::Boolean)
            }
            "make_array" => {
                // Array literals are constants: their items are converted to one type.
                let args = args.into_iter().map(|a| self.decode(a)).collect::<Result<Vec<_>>>()?;
                if let Some(a) = args.iter().find(|a| !a.is_const()) {
                    return Err(type_error(format!(
                        "array literals hold constants only, but {} is not one",
                        a.describe()
                    )));
                }
                let item = super::scalar::fold_common_type(
                    &args,
                    |_| Ok(()),
                    |a, earlier| {
                        format!(
                            "array literal items must have compatible types, but {} is {} and an earlier one is {earlier}",
                            a.describe(),
                            a.ty
                        )
                    },
                )?;
                let items = args
                    .into_iter()
                    .map(|a| self.cast_to(a, &item))
                    .collect::<Result<Vec<_>>>()?;
                let values: Vec<ArrayRef> = items.iter().filter_map(|a| a.const_value().cloned()).collect();
                let list = crate::functions::make_list(&item, &values)?;
                let expr = Expr::Function {
                    name: name.to_string(),
                    args: items.iter().map(|a| a.expr.clone()).collect(),
                };
                Ok(Bound::constant(list, expr))
            }
            "array_has_any" | "array_has_all" | "arrays_overlap" | "array_has" | "array_contains" | "list_has"
            | "list_contains" => {
                arity(2)?;
                let mut args = args.into_iter();
                let (Some(list), Some(needle)) = (args.next(), args.next()) else {
                    return Err(type_error(format!("{name}() takes 2 arguments")));
                };
                let item = match &list.ty {
                    DataType::List(f) | DataType::LargeList(f) => f.data_type().clone(),
                    other => {
                        return Err(type_error(format!(
                            "{name}() needs a list as its first argument, but {} is {other}",
                            list.describe()
                        )))
                    }
                };
                let single = matches!(name, "array_has" | "array_contains" | "list_has" | "list_contains");
                let needles = match needle.const_value() {
                    Some(v) if single => crate::functions::cast_items(v, &item)?,
                    Some(v) => match v.data_type() {
                        DataType::List(_) | DataType::LargeList(_) => crate::functions::list_items(v, &item)?,
                        other => {
                            return Err(type_error(format!(
                                "{name}() needs an array literal as its second argument, got {other}"
                            )))
                        }
                    },
                    None => {
                        return Err(type_error(format!(
                            "the second argument of {name}() must be a constant, but {} is not",
                            needle.describe()
                        )))
                    }
                };
                let func = if name == "array_has_all" {
                    Func::ArrayHasAll { needles }
                } else {
                    Func::ArrayHasAny { needles }
                };
                let expr = Expr::Function {
                    name: name.to_string(),
                    args: vec![list.expr.clone(), needle.expr.clone()],
                };
                let node = Node::Call {
                    func,
                    args: vec![list.node.clone()],
                };
                self.finish(node, DataType::Boolean, expr, &[&list])
            }
            "array_length" | "cardinality" => {
                arity(1)?;
                let mut args = args;
                let a = args.remove(0);
                if !matches!(
                    a.ty,
                    DataType::List(_) | DataType::LargeList(_) | DataType::FixedSizeList(_, _)
                ) {
                    return Err(type_error(format!(
                        "{name}() needs a list, but {} is {}",
                        a.describe(),
                        a.ty
                    )));
                }
                self.finish_call(name, Func::ArrayLength, vec![a], DataType::UInt64)
            }
            "coalesce" => {
                if args.is_empty() {
                    return Err(type_error("coalesce() needs at least one argument"));
                }
                let args = args.into_iter().map(|a| self.decode(a)).collect::<Result<Vec<_>>>()?;
                let mut target = DataType::Null;
                for a in &args {
                    if a.ty == DataType::Null {
                        continue;
                    }
                    target = if target == DataType::Null {
                        a.ty.clone()
                    } else {
                        comparison_common(&target, &a.ty).ok_or_else(|| {
                            type_error(format!(
                                "coalesce() arguments must have compatible types, but {} is {} and an earlier one is {target}",
                                a.describe(),
                                a.ty
                            ))
                        })?
                    };
                }
                let args = args
                    .into_iter()
                    .map(|a| self.cast_to(a, &target))
                    .collect::<Result<Vec<_>>>()?;
                self.finish_call(name, Func::Coalesce, args, target)
            }
            "array_element" => {
                arity(2)?;
                let mut args = args.into_iter();
                let (Some(list), Some(index)) = (args.next(), args.next()) else {
                    return Err(type_error("array_element() takes 2 arguments"));
                };
                let item = match &list.ty {
                    DataType::List(f) | DataType::LargeList(f) | DataType::FixedSizeList(f, _) => f.data_type().clone(),
                    other => {
                        return Err(type_error(format!(
                            "cannot index {} of type {other}: only lists can be indexed with [n]",
                            list.describe()
                        )))
                    }
                };
                let index = self.decode(index)?;
                if !is_int(&index.ty) && index.ty != DataType::Null {
                    return Err(type_error(format!(
                        "a list index must be an integer, but {} is {}",
                        index.describe(),
                        index.ty
                    )));
                }
                let index = self.cast_to(index, &DataType::Int64)?;
                self.finish_call(name, Func::ArrayElement, vec![list, index], item)
            }
            "get_field" => {
                arity(2)?;
                let mut args = args.into_iter();
                let (Some(base), Some(field)) = (args.next(), args.next()) else {
                    return Err(type_error("get_field() takes 2 arguments"));
                };
                let field_name = const_string(&field, "field name")?;
                // A field of a column is a nested column path (readable by pruning and indexes).
                if let (true, Expr::Column(path)) = (base.is_column, &base.expr) {
                    let mut path = path.clone();
                    path.push(field_name);
                    return self.bind_column(&path);
                }
                let DataType::Struct(children) = &base.ty else {
                    return Err(type_error(format!(
                        "{} is {}, not a struct, so it has no field '{field_name}'",
                        base.describe(),
                        base.ty
                    )));
                };
                let Some(child) = children.iter().find(|f| *f.name() == field_name) else {
                    return Err(type_error(format!(
                        "{} has no field '{field_name}'; its fields are: {}",
                        base.describe(),
                        children
                            .iter()
                            .map(|f| f.name().as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    )));
                };
                let ty = child.data_type().clone();
                let expr = Expr::Function {
                    name: name.to_string(),
                    args: vec![base.expr.clone(), field.expr.clone()],
                };
                let node = Node::Call {
                    func: Func::GetField { name: field_name },
                    args: vec![base.node.clone()],
                };
                self.finish(node, ty, expr, &[&base])
            }
            "arrow_cast" => {
                arity(2)?;
                let mut args = args.into_iter();
                let (Some(value), Some(to)) = (args.next(), args.next()) else {
                    return Err(type_error("arrow_cast() takes 2 arguments"));
                };
                let type_name = const_string(&to, "type name")?;
                let ty = DataType::from_str(&type_name).map_err(|e| {
                    type_error(format!(
                        "arrow_cast(): unsupported type '{type_name}': {e}; write an Arrow type name such as \
                         'Int32', 'Utf8' or 'Timestamp(Microsecond, None)'"
                    ))
                })?;
                if !can_cast_types(&value.ty, &ty) {
                    return Err(type_error(format!(
                        "arrow_cast(): cannot cast {} of type {} to {ty}",
                        value.describe(),
                        value.ty
                    )));
                }
                let expr = Expr::Function {
                    name: name.to_string(),
                    args: vec![value.expr.clone(), to.expr.clone()],
                };
                let node = Node::Cast {
                    input: Box::new(value.node.clone()),
                    to: ty.clone(),
                    safe: false,
                };
                self.finish(node, ty, expr, &[&value])
            }
            "current_date" | "today" | "now" | "current_timestamp" => {
                arity(0)?;
                // Evaluated once per query, as in Lance: UTC wall-clock time.
                let since_epoch = SystemTime::now()
                    .duration_since(UNIX_EPOCH)
                    .map_err(|e| type_error(format!("the system clock is before 1970: {e}")))?;
                let nanos = i64::try_from(since_epoch.as_nanos()).unwrap_or(i64::MAX);
                let value: ArrayRef = if matches!(name, "current_date" | "today") {
                    let days = i32::try_from(nanos.div_euclid(86_400_000_000_000)).unwrap_or(i32::MAX);
                    Arc::new(Date32Array::from(vec![days]))
                } else {
                    Arc::new(TimestampNanosecondArray::from(vec![nanos]))
                };
                let expr = Expr::Function {
                    name: name.to_string(),
                    args: vec![],
                };
                Ok(Bound::constant(value, expr))
            }
            _ if super::scalar::handles(name) => self.bind_scalar(name, args),
            _ if JsonFunc::from_name(name).is_some() => {
                let Some(func) = JsonFunc::from_name(name) else {
                    return Err(type_error(format!("unknown JSON function {name}()")));
                };
                arity(func.arity())?;
                let mut bound = Vec::with_capacity(args.len());
                for (i, a) in args.into_iter().enumerate() {
                    let a = self.decode(a)?;
                    // The document: stored JSON (JSONB bytes, as Lance requires) or JSON text.
                    let jsonb =
                        i == 0 && matches!(a.ty, DataType::LargeBinary | DataType::Binary | DataType::BinaryView);
                    let ok = if i == 0 {
                        jsonb || is_string(&a.ty) || a.ty == DataType::Null
                    } else {
                        can_cast_types(&a.ty, &DataType::Utf8)
                            && !matches!(a.ty, DataType::List(_) | DataType::Struct(_))
                    };
                    if !ok {
                        let what = if i == 0 {
                            "a JSON column (JSONB bytes or JSON text)"
                        } else {
                            "a string"
                        };
                        return Err(type_error(format!(
                            "argument {} of {name}() must be {what}, but {} is {}",
                            i + 1,
                            a.describe(),
                            a.ty
                        )));
                    }
                    let to = if jsonb { DataType::LargeBinary } else { DataType::Utf8 };
                    bound.push(self.cast_to(a, &to)?);
                }
                // A constant path is checked now: a bad one is the user's error.
                if func.takes_path() {
                    if let Some(path) = bound.get(1).filter(|b| b.is_const() && !b.is_null_const()) {
                        let text = const_string(path, "path")?;
                        JsonPath::parse(&text)?;
                    }
                }
                self.finish_call(name, Func::Json(func), bound, func.data_type())
            }
            _ => Err(Error::UnknownFunction {
                name: name.to_string(),
                supported: SUPPORTED.iter().map(|s| s.to_string()).collect(),
            }),
        }
    }

    pub(super) fn finish_call(&self, name: &str, func: Func, args: Vec<Bound>, ty: DataType) -> Result<Bound> {
        let expr = Expr::Function {
            name: name.to_string(),
            args: args.iter().map(|a| a.expr.clone()).collect(),
        };
        let node = Node::Call {
            func,
            args: args.iter().map(|a| a.node.clone()).collect(),
        };
        let children: Vec<&Bound> = args.iter().collect();
        self.finish(node, ty, expr, &children)
    }
}
