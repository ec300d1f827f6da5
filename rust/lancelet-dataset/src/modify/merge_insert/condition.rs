//! `when_matched_update_all(condition)`: which columns a condition reads, on which side,
//! and its value on matched pairs (a source row with the target row it matched).
//!
//! The condition names columns `source.<name>` and `target.<name>` (qualifier and name
//! matched ignoring case when not exact, as in pylance), or a bare `<name>` that only one
//! side has. It is evaluated over a batch with a struct column per side (fields spelled as
//! the condition spells them) and the bare columns at the top level.

use std::sync::Arc;

use arrow_array::{new_empty_array, new_null_array, Array, ArrayRef, BooleanArray, RecordBatch, StructArray};
use arrow_schema::{DataType, Field, Fields, Schema};

use crate::modify::condition::{condition_columns, evaluate_condition};
use crate::{Error, Result};

/// A side of a matched pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Side {
    Source,
    Target,
}

/// A condition resolved against the source's and the target's columns.
#[derive(Debug, Clone)]
pub(super) struct Condition {
    sql: String,
    /// `(side, spelling in the condition, column name)` of qualified references.
    qualified: Vec<(Side, String, String)>,
    /// `(spelling, side, column name)` of bare references.
    bare: Vec<(String, Side, String)>,
}

/// The column `name` refers to: the exact name, else the one equal ignoring case.
fn resolve<'a>(name: &str, names: &'a [String]) -> Option<&'a String> {
    if let Some(n) = names.iter().find(|n| *n == name) {
        return Some(n);
    }
    let mut folded = names.iter().filter(|n| n.eq_ignore_ascii_case(name));
    match (folded.next(), folded.next()) {
        (Some(n), None) => Some(n),
        _ => None,
    }
}

impl Condition {
    /// Resolves `sql`'s columns against `source` and `target` column names, and checks
    /// that it is a boolean condition (by evaluating it on no rows).
    pub(super) fn new(sql: &str, source: &Schema, target: &Schema) -> Result<Self> {
        let names = |s: &Schema| s.fields().iter().map(|f| f.name().clone()).collect::<Vec<_>>();
        let (src, tgt) = (names(source), names(target));
        let mut qualified: Vec<(Side, String, String)> = Vec::new();
        let mut bare: Vec<(String, Side, String)> = Vec::new();
        for path in condition_columns(sql)? {
            let Some(first) = path.first() else { continue };
            let side = match first.to_ascii_lowercase().as_str() {
                "source" => Some((Side::Source, &src, "source")),
                "target" => Some((Side::Target, &tgt, "target")),
                _ => None,
            };
            if let (Some((side, cols, label)), Some(second)) = (side, path.get(1)) {
                let Some(column) = resolve(second, cols) else {
                    return Err(Error::InvalidArgument(format!(
                        "the update condition reads {first}.{second}, but the {label} has no column {second:?}"
                    )));
                };
                if !qualified.iter().any(|(s, sp, _)| *s == side && sp == second) {
                    qualified.push((side, second.clone(), column.clone()));
                }
                continue;
            }
            let found: Vec<(Side, &String)> = [(Side::Source, &src), (Side::Target, &tgt)]
                .into_iter()
                .filter_map(|(s, cols)| resolve(first, cols).map(|c| (s, c)))
                .collect();
            match found.as_slice() {
                [(side, column)] => {
                    if !bare.iter().any(|(sp, _, _)| sp == first) {
                        bare.push((first.clone(), *side, (*column).clone()));
                    }
                }
                [] => {
                    return Err(Error::InvalidArgument(format!(
                        "the update condition reads {first:?}, a column of neither side"
                    )))
                }
                _ => {
                    return Err(Error::InvalidArgument(format!(
                        "the update condition reads {first:?}, a column of both the source and the target; \
                         write source.{first} or target.{first}"
                    )))
                }
            }
        }
        let cond = Self {
            sql: sql.to_string(),
            qualified,
            bare,
        };
        // Type errors (a condition that is not boolean) before any work is done.
        let empty = |schema: &Schema, name: &str| -> Result<ArrayRef> {
            let f = schema.field_with_name(name)?;
            Ok(new_empty_array(f.data_type()))
        };
        let mut src_cols = Vec::new();
        let mut tgt_cols = Vec::new();
        for c in cond.columns(Side::Source) {
            src_cols.push((c.clone(), empty(source, &c)?));
        }
        for c in cond.columns(Side::Target) {
            tgt_cols.push((c.clone(), empty(target, &c)?));
        }
        cond.evaluate(0, &src_cols, &tgt_cols)?;
        Ok(cond)
    }

    /// The columns of `side` the condition reads (each once).
    pub(super) fn columns(&self, side: Side) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        let qualified = self.qualified.iter().filter(|(s, _, _)| *s == side).map(|(_, _, c)| c);
        let bare = self.bare.iter().filter(|(_, s, _)| *s == side).map(|(_, _, c)| c);
        for c in qualified.chain(bare) {
            if !out.contains(c) {
                out.push(c.clone());
            }
        }
        out
    }

    /// Where the condition holds on `rows` pairs, given the columns it reads of each side
    /// (`(column name, values)`, one value per pair).
    pub(super) fn evaluate(
        &self,
        rows: usize,
        source: &[(String, ArrayRef)],
        target: &[(String, ArrayRef)],
    ) -> Result<BooleanArray> {
        let get = |side: Side, column: &str| -> Result<ArrayRef> {
            let cols = if side == Side::Source { source } else { target };
            cols.iter()
                .find(|(c, _)| c == column)
                .map(|(_, a)| a.clone())
                .ok_or_else(|| Error::InvalidArgument(format!("no values for column {column:?} of the condition")))
        };
        let mut fields: Vec<Field> = Vec::new();
        let mut arrays: Vec<ArrayRef> = Vec::new();
        for (side, label) in [(Side::Source, "source"), (Side::Target, "target")] {
            let refs: Vec<&(Side, String, String)> = self.qualified.iter().filter(|(s, _, _)| *s == side).collect();
            if refs.is_empty() {
                continue;
            }
            let mut sf = Vec::new();
            let mut sa = Vec::new();
            for (_, spelling, column) in refs {
                let a = get(side, column)?;
                sf.push(Field::new(spelling, a.data_type().clone(), true));
                sa.push(a);
            }
            let st = StructArray::try_new(Fields::from(sf), sa, None)?;
            fields.push(Field::new(label, st.data_type().clone(), true));
            arrays.push(Arc::new(st));
        }
        for (spelling, side, column) in &self.bare {
            let a = get(*side, column)?;
            fields.push(Field::new(spelling, a.data_type().clone(), true));
            arrays.push(a);
        }
        if arrays.is_empty() {
            // A condition that reads no column (`1 = 1`).
            fields.push(Field::new("__rows", DataType::Null, true));
            arrays.push(new_null_array(&DataType::Null, rows));
        }
        let batch = RecordBatch::try_new(Arc::new(Schema::new(fields)), arrays)?;
        evaluate_condition(&batch, &self.sql)
    }
}
