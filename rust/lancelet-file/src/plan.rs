//! How the fields of a schema map onto the columns of a 2.0 file.
//!
//! A struct takes one header column and then its children's columns; a list takes
//! one offsets column and then its items' columns; every other supported type is one
//! column. Columns are numbered in that pre-order.

use arrow_schema::{DataType, Field, FieldRef, Schema};
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

/// Plans every top-level field; returns the plans and the number of columns.
pub fn plan_schema(schema: &Schema) -> Result<(Vec<FieldPlan>, usize)> {
    let mut next = 0usize;
    let plans = schema
        .fields()
        .iter()
        .map(|f| plan_field(f, &mut next, 0))
        .collect::<Result<Vec<_>>>()?;
    Ok((plans, next))
}

fn plan_field(field: &FieldRef, next: &mut usize, depth: usize) -> Result<FieldPlan> {
    if depth > 64 {
        return Err(Error::Unsupported("types nested deeper than 64 levels".into()));
    }
    let column = *next;
    *next += 1;
    match field.data_type() {
        DataType::Struct(children) => {
            let children = children
                .iter()
                .map(|c| plan_field(c, next, depth + 1))
                .collect::<Result<Vec<_>>>()?;
            Ok(FieldPlan::Struct {
                column,
                field: field.clone(),
                children,
            })
        }
        DataType::List(item) | DataType::LargeList(item) => {
            let item = Box::new(plan_field(item, next, depth + 1)?);
            Ok(FieldPlan::List {
                column,
                field: field.clone(),
                item,
            })
        }
        dt if is_leaf_type(dt) => Ok(FieldPlan::Leaf {
            column,
            field: field.clone(),
        }),
        dt => Err(Error::Unsupported(format!(
            "field {:?} has type {dt}, which Lance file format 2.0 cannot store",
            field.name()
        ))),
    }
}

/// Finds a top-level field or a struct child by a dotted name such as `"point.x"`.
pub fn find_path(plans: &[FieldPlan], name: &str) -> Option<FieldPlan> {
    if let Some(p) = plans.iter().find(|p| p.field().name() == name) {
        return Some(p.clone());
    }
    let (head, rest) = name.split_once('.')?;
    let p = plans.iter().find(|p| p.field().name() == head)?;
    match p {
        FieldPlan::Struct { children, .. } => find_path(children, rest),
        _ => None,
    }
}

/// The Arrow field for a (possibly nested) projected plan, renamed to the path used.
pub fn projected_field(plan: &FieldPlan, name: &str) -> Field {
    plan.field().as_ref().clone().with_name(name)
}
