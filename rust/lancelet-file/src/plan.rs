//! How the fields of a schema map onto the columns of a file.
//!
//! At 2.0, a struct takes one header column and then its children's columns; a list takes
//! one offsets column and then its items' columns; every other supported type is one
//! column. Columns are numbered in that pre-order. At 2.1 and 2.2 only leaves have
//! columns: structs and lists live in their leaves' repetition and definition levels.

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef, LargeListArray, ListArray, StructArray};
use arrow_schema::{DataType, FieldRef, Schema};
use lancelet_encoding::v2_0::encode::is_leaf_type;

use crate::error::{Error, Result};

/// One field's columns.
#[derive(Debug, Clone)]
pub enum FieldPlan {
    /// A type stored in a single column.
    Leaf {
        /// Column index.
        column: usize,
        /// The Arrow field.
        field: FieldRef,
    },
    /// A struct: a header column followed by the children.
    Struct {
        /// Column index of the header.
        column: usize,
        /// The Arrow field.
        field: FieldRef,
        /// The children, in field order.
        children: Vec<FieldPlan>,
    },
    /// A list or large list: an offsets column followed by the items.
    List {
        /// Column index of the offsets.
        column: usize,
        /// The Arrow field.
        field: FieldRef,
        /// The items.
        item: Box<FieldPlan>,
    },
}

impl FieldPlan {
    /// The Arrow field this plan reads or writes.
    pub fn field(&self) -> &FieldRef {
        match self {
            Self::Leaf { field, .. } | Self::Struct { field, .. } | Self::List { field, .. } => field,
        }
    }

    /// The first column of this field.
    pub fn column(&self) -> usize {
        match self {
            Self::Leaf { column, .. } | Self::Struct { column, .. } | Self::List { column, .. } => *column,
        }
    }

    /// Calls `f` on this plan and every plan below it, in column order.
    pub fn visit<'a>(&'a self, f: &mut impl FnMut(&'a FieldPlan)) {
        f(self);
        match self {
            Self::Leaf { .. } => {}
            Self::Struct { children, .. } => children.iter().for_each(|c| c.visit(f)),
            Self::List { item, .. } => item.visit(f),
        }
    }
}

/// Which fields of a file have columns of their own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Columns {
    /// Every field, in pre-order (file format 2.0).
    EveryField,
    /// Leaves only: structs and lists live in their leaves' repetition/definition levels
    /// (2.1+). A struct or list plan's `column` is the first leaf column below it.
    LeavesOnly,
}

/// Plans every top-level field of a 2.0 file; returns the plans and the number of columns.
pub fn plan_schema(schema: &Schema) -> Result<(Vec<FieldPlan>, usize)> {
    plan_fields(schema, Columns::EveryField)
}

/// Plans every top-level field of a 2.1+ file, where only leaves have columns; returns the
/// plans and the number of columns.
pub fn plan_schema_v21(schema: &Schema) -> Result<(Vec<FieldPlan>, usize)> {
    plan_fields(schema, Columns::LeavesOnly)
}

fn plan_fields(schema: &Schema, columns: Columns) -> Result<(Vec<FieldPlan>, usize)> {
    let mut next = 0usize;
    let plans = schema
        .fields()
        .iter()
        .map(|f| plan_field(f, &mut next, 0, columns))
        .collect::<Result<Vec<_>>>()?;
    Ok((plans, next))
}

fn plan_field(field: &FieldRef, next: &mut usize, depth: usize, columns: Columns) -> Result<FieldPlan> {
    if depth > 64 {
        return Err(Error::Unsupported("types nested deeper than 64 levels".into()));
    }
    let column = *next;
    let is_leaf = !matches!(
        field.data_type(),
        DataType::Struct(_) | DataType::List(_) | DataType::LargeList(_) | DataType::Map(..)
    ) || is_packed(field);
    if columns == Columns::EveryField || is_leaf {
        *next += 1;
    }
    match field.data_type() {
        // A packed struct is one column holding whole rows; its children have none.
        DataType::Struct(_) if is_packed(field) => Ok(FieldPlan::Leaf {
            column,
            field: field.clone(),
        }),
        DataType::Struct(children) => {
            let children = children
                .iter()
                .map(|c| plan_field(c, next, depth + 1, columns))
                .collect::<Result<Vec<_>>>()?;
            Ok(FieldPlan::Struct {
                column,
                field: field.clone(),
                children,
            })
        }
        DataType::List(item) | DataType::LargeList(item) => {
            let item = Box::new(plan_field(item, next, depth + 1, columns)?);
            Ok(FieldPlan::List {
                column,
                field: field.clone(),
                item,
            })
        }
        // A map is stored as a list of its entries structs (file format 2.2 on; the 2.0
        // writer refuses maps, as pylance does).
        DataType::Map(entries, _) => {
            let item = Box::new(plan_field(entries, next, depth + 1, columns)?);
            Ok(FieldPlan::List {
                column,
                field: field.clone(),
                item,
            })
        }
        DataType::Union(..) | DataType::RunEndEncoded(..) if columns == Columns::LeavesOnly => {
            Err(Error::Unsupported(format!(
                "field {:?} has type {}, which lancelet cannot read from 2.1+ files yet",
                field.name(),
                field.data_type()
            )))
        }
        dt if columns == Columns::LeavesOnly || is_leaf_type(dt) => Ok(FieldPlan::Leaf {
            column,
            field: field.clone(),
        }),
        dt => Err(Error::Unsupported(format!(
            "field {:?} has type {dt}, which Lance file format 2.0 cannot store",
            field.name()
        ))),
    }
}

pub use lancelet_encoding::v2_1::path::{is_packed, is_packed_metadata};

/// What a projection keeps of a field: all of it, or some struct children.
#[derive(Debug, Clone)]
enum Selection {
    Whole,
    Children(Vec<(String, Selection)>),
}

impl Selection {
    fn add(&mut self, path: &[String]) {
        let Selection::Children(children) = self else { return };
        let Some((head, rest)) = path.split_first() else {
            *self = Selection::Whole;
            return;
        };
        match children.iter_mut().find(|(n, _)| n == head) {
            Some((_, sel)) => {
                if rest.is_empty() {
                    *sel = Selection::Whole;
                } else {
                    sel.add(rest);
                }
            }
            None => {
                let mut sel = if rest.is_empty() {
                    Selection::Whole
                } else {
                    Selection::Children(vec![])
                };
                sel.add(rest);
                children.push((head.clone(), sel));
            }
        }
    }
}

/// Resolves a column name to field names along a path: an exact field name first, else
/// a dotted path into structs (`"point.x"`).
fn resolve(plans: &[FieldPlan], name: &str) -> Option<Vec<String>> {
    if plans.iter().any(|p| p.field().name() == name) {
        return Some(vec![name.to_string()]);
    }
    let (head, rest) = name.split_once('.')?;
    let p = plans.iter().find(|p| p.field().name() == head)?;
    match p {
        FieldPlan::Struct { children, .. } => {
            let mut path = vec![head.to_string()];
            path.extend(resolve(children, rest)?);
            Some(path)
        }
        // The fields of a packed struct are named like a struct's (its column is read
        // whole and the fields picked afterwards).
        FieldPlan::Leaf { field, .. } if is_packed(field) => match field.data_type() {
            DataType::Struct(children) => children
                .iter()
                .any(|c| c.name() == rest)
                .then(|| vec![head.to_string(), rest.to_string()]),
            _ => None,
        },
        _ => None,
    }
}

/// The plans that read `names`, as pylance projects: a dotted path keeps its struct with
/// only the selected children, and several paths into one struct merge into it. Fields
/// come in the order they are first named. Returns the unknown name on failure.
pub fn project(plans: &[FieldPlan], names: &[String]) -> std::result::Result<Vec<FieldPlan>, String> {
    let mut root = Selection::Children(Vec::new());
    for n in names {
        let path = resolve(plans, n).ok_or_else(|| n.clone())?;
        root.add(&path);
    }
    let Selection::Children(top) = root else {
        return Ok(plans.to_vec());
    };
    top.iter()
        .map(|(name, sel)| {
            let p = plans
                .iter()
                .find(|p| p.field().name() == name)
                .ok_or_else(|| name.clone())?;
            Ok(prune(p, sel))
        })
        .collect()
}

fn prune(plan: &FieldPlan, sel: &Selection) -> FieldPlan {
    match (plan, sel) {
        (
            FieldPlan::Struct {
                column,
                field,
                children,
            },
            Selection::Children(keep),
        ) => {
            let kept: Vec<FieldPlan> = keep
                .iter()
                .filter_map(|(n, s)| children.iter().find(|c| c.field().name() == n).map(|c| prune(c, s)))
                .collect();
            let fields: Vec<FieldRef> = kept.iter().map(|c| c.field().clone()).collect();
            let f = field.as_ref().clone().with_data_type(DataType::Struct(fields.into()));
            FieldPlan::Struct {
                column: *column,
                field: Arc::new(f),
                children: kept,
            }
        }
        (FieldPlan::Leaf { column, field }, Selection::Children(keep)) => {
            let DataType::Struct(children) = field.data_type() else {
                return plan.clone();
            };
            let kept: Vec<FieldRef> = keep
                .iter()
                .filter_map(|(n, _)| children.iter().find(|c| c.name() == n).cloned())
                .collect();
            let f = field.as_ref().clone().with_data_type(DataType::Struct(kept.into()));
            FieldPlan::Leaf {
                column: *column,
                field: Arc::new(f),
            }
        }
        _ => plan.clone(),
    }
}

/// `array` (of a type that has every field of `target`) with only `target`'s struct fields,
/// at any depth: how a packed struct read whole yields the fields a projection picked.
pub fn select_fields(array: ArrayRef, target: &DataType) -> std::result::Result<ArrayRef, String> {
    if array.data_type() == target {
        return Ok(array);
    }
    match target {
        DataType::Struct(fields) => {
            let s = array
                .as_any()
                .downcast_ref::<StructArray>()
                .ok_or_else(|| format!("expected a struct, read {}", array.data_type()))?;
            let columns = fields
                .iter()
                .map(|f| {
                    let c = s
                        .column_by_name(f.name())
                        .ok_or_else(|| format!("struct field {:?} was not read", f.name()))?;
                    select_fields(c.clone(), f.data_type())
                })
                .collect::<std::result::Result<Vec<_>, String>>()?;
            StructArray::try_new_with_length(fields.clone(), columns, s.nulls().cloned(), s.len())
                .map(|a| Arc::new(a) as ArrayRef)
                .map_err(|e| e.to_string())
        }
        DataType::List(item) => {
            let l = array.as_list_opt::<i32>().ok_or("expected a list")?;
            let values = select_fields(l.values().clone(), item.data_type())?;
            ListArray::try_new(item.clone(), l.offsets().clone(), values, l.nulls().cloned())
                .map(|a| Arc::new(a) as ArrayRef)
                .map_err(|e| e.to_string())
        }
        DataType::LargeList(item) => {
            let l = array.as_list_opt::<i64>().ok_or("expected a large list")?;
            let values = select_fields(l.values().clone(), item.data_type())?;
            LargeListArray::try_new(item.clone(), l.offsets().clone(), values, l.nulls().cloned())
                .map(|a| Arc::new(a) as ArrayRef)
                .map_err(|e| e.to_string())
        }
        other => Err(format!("cannot read {} as {other}", array.data_type())),
    }
}

/// `plan` with every leaf of a packed struct whose projection dropped fields restored to
/// the whole struct as `full` (the file's own plans) has it: such a column is decoded whole.
pub fn widen(plan: &FieldPlan, full: &[FieldPlan]) -> FieldPlan {
    fn find(plans: &[FieldPlan], column: usize) -> Option<&FieldRef> {
        for p in plans {
            let mut hit = None;
            p.visit(&mut |q| {
                if let FieldPlan::Leaf { column: c, field } = q {
                    if *c == column && hit.is_none() {
                        hit = Some(field);
                    }
                }
            });
            if hit.is_some() {
                return hit;
            }
        }
        None
    }
    match plan {
        FieldPlan::Leaf { column, field } if is_packed(field) => match find(full, *column) {
            Some(f) if f.data_type() != field.data_type() => FieldPlan::Leaf {
                column: *column,
                field: Arc::new(field.as_ref().clone().with_data_type(f.data_type().clone())),
            },
            _ => plan.clone(),
        },
        FieldPlan::Leaf { .. } => plan.clone(),
        FieldPlan::Struct {
            column,
            field,
            children,
        } => {
            let children: Vec<FieldPlan> = children.iter().map(|c| widen(c, full)).collect();
            let fields: Vec<FieldRef> = children.iter().map(|c| c.field().clone()).collect();
            FieldPlan::Struct {
                column: *column,
                field: Arc::new(field.as_ref().clone().with_data_type(DataType::Struct(fields.into()))),
                children,
            }
        }
        FieldPlan::List { column, field, item } => {
            let item = Box::new(widen(item, full));
            let dt = match field.data_type() {
                DataType::LargeList(_) => DataType::LargeList(item.field().clone()),
                DataType::Map(_, sorted) => DataType::Map(item.field().clone(), *sorted),
                _ => DataType::List(item.field().clone()),
            };
            FieldPlan::List {
                column: *column,
                field: Arc::new(field.as_ref().clone().with_data_type(dt)),
                item,
            }
        }
    }
}
