//! Ordered scans (`order_by`), as pylance sorts them.
//!
//! An ordered scan reads every row that passes the filter (without `limit`/`offset`, which
//! apply to the sorted rows, in pylance's order), as one task: the planned tasks run,
//! their rows are sorted, and the [`super::Limiter`] then applies offset, limit and batch
//! size. Sort keys follow pylance (DataFusion): NULLs last unless `nulls_first`, in either
//! direction; floating-point NaN is greater than every number (last ascending, first
//! descending); ties keep the scan order. A sort column need not be in the projection: it is
//! read as a hidden column and dropped after the sort.

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{Float16Type, Float32Type, Float64Type};
use arrow_array::{Array, ArrayRef, PrimitiveArray, RecordBatch, UInt64Array};
use arrow_ord::sort::{lexsort_to_indices, SortColumn, SortOptions};
use arrow_schema::{DataType, SchemaRef};

use self::num_like::IsNan;
use super::{Columns, Scan};
use crate::{Error, Result};

/// One sort key of an ordered scan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ColumnOrdering {
    /// The column: a name, a dotted path to a struct child, or `_rowid`/`_rowaddr`/...
    pub column: String,
    /// Smallest first (the default).
    pub ascending: bool,
    /// NULLs before the other values (by default they come last).
    pub nulls_first: bool,
}

impl ColumnOrdering {
    /// Ascending by `column`, NULLs last.
    pub fn asc(column: impl Into<String>) -> Self {
        Self {
            column: column.into(),
            ascending: true,
            nulls_first: false,
        }
    }
}

/// Where a sort key is in the planned output.
#[derive(Debug, Clone)]
enum Key {
    /// A column by name (or a dotted path into a struct column).
    Name(String),
    /// The column at this position: a hidden column read only for the sort.
    At(usize),
}

/// How a planned scan sorts its rows.
#[derive(Debug)]
pub(super) struct Order {
    keys: Vec<(Key, ColumnOrdering)>,
    /// Positions of the columns read only for the sort, dropped after it.
    hidden: std::ops::Range<usize>,
}

/// Names of hidden sort-key expressions.
const HIDDEN: &str = "__lancelet_order_key_";

fn path_sql(name: &str) -> String {
    name.split('.')
        .map(|p| format!("`{}`", p.replace('`', "``")))
        .collect::<Vec<_>>()
        .join(".")
}

/// The projection an ordered scan reads (`columns` plus hidden sort keys after them) and
/// how it sorts. `present` names columns the output has beyond the projection (`_rowid`,
/// `_rowaddr`).
pub(super) fn plan(columns: &Columns, order: &[ColumnOrdering], present: &[&str]) -> (Columns, Order) {
    let projected = match columns {
        Columns::All => None,
        Columns::Names(names) => Some(names.len()),
        Columns::Exprs(exprs) => Some(exprs.len()),
    };
    let Some(start) = projected else {
        let keys = order.iter().map(|o| (Key::Name(o.column.clone()), o.clone())).collect();
        return (Columns::All, Order { keys, hidden: 0..0 });
    };
    let mut keys = Vec::new();
    let mut extra: Vec<String> = Vec::new();
    for o in order {
        let shown = match columns {
            Columns::Names(names) => names.contains(&o.column),
            _ => false,
        };
        if shown || present.contains(&o.column.as_str()) {
            keys.push((Key::Name(o.column.clone()), o.clone()));
        } else {
            keys.push((Key::At(start + extra.len()), o.clone()));
            extra.push(o.column.clone());
        }
    }
    let hidden = start..start + extra.len();
    let columns = match columns {
        Columns::Names(names) => Columns::Names(names.iter().cloned().chain(extra).collect()),
        Columns::Exprs(exprs) => {
            let hidden_exprs = extra
                .iter()
                .enumerate()
                .map(|(i, c)| (format!("{HIDDEN}{i}"), path_sql(c)));
            Columns::Exprs(exprs.iter().cloned().chain(hidden_exprs).collect())
        }
        Columns::All => Columns::All,
    };
    (columns, Order { keys, hidden })
}

impl Order {
    /// The output schema once the hidden columns are dropped.
    pub(super) fn output_schema(&self, schema: &SchemaRef) -> SchemaRef {
        let fields: Vec<_> = schema
            .fields()
            .iter()
            .enumerate()
            .filter(|(i, _)| !self.hidden.contains(i))
            .map(|(_, f)| f.clone())
            .collect();
        Arc::new(arrow_schema::Schema::new_with_metadata(
            fields,
            schema.metadata().clone(),
        ))
    }

    /// Refuses a sort key that names no column of `schema` (the planned output).
    pub(super) fn check(&self, schema: &SchemaRef) -> Result<()> {
        for (key, o) in &self.keys {
            if let Key::Name(name) = key {
                if schema.field_with_name(name).is_err() && crate::fields::find_field(schema, name).is_none() {
                    return Err(Error::InvalidArgument(format!(
                        "order_by column {:?} not found",
                        o.column
                    )));
                }
            }
        }
        Ok(())
    }

    /// `batch` (every row of the scan) sorted, without the hidden columns.
    pub(super) fn sort(&self, batch: &RecordBatch) -> Result<RecordBatch> {
        let mut columns = Vec::with_capacity(self.keys.len() + 1);
        for (key, o) in &self.keys {
            let found = match key {
                Key::Name(name) => key_column(batch, name),
                Key::At(i) => (*i < batch.num_columns()).then(|| batch.column(*i).clone()),
            };
            let values =
                found.ok_or_else(|| Error::InvalidArgument(format!("order_by column {:?} not found", o.column)))?;
            columns.push(SortColumn {
                values: canonical_nan(values),
                options: Some(SortOptions {
                    descending: !o.ascending,
                    nulls_first: o.nulls_first,
                }),
            });
        }
        // Ties keep the scan order: the row's position is the last key.
        columns.push(SortColumn {
            values: Arc::new(UInt64Array::from_iter_values(0..batch.num_rows() as u64)),
            options: None,
        });
        let names: Vec<&str> = self.keys.iter().map(|(_, o)| o.column.as_str()).collect();
        let indices = lexsort_to_indices(&columns, None)
            .map_err(|e| Error::InvalidArgument(format!("cannot order by {names:?}: {e}")))?;
        let sorted = arrow_select::take::take_record_batch(batch, &indices)?;
        let keep: Vec<usize> = (0..sorted.num_columns()).filter(|i| !self.hidden.contains(i)).collect();
        Ok(sorted.project(&keep)?)
    }

    /// The sort, as `explain` shows it.
    pub(super) fn explain(&self) -> String {
        let keys: Vec<String> = self
            .keys
            .iter()
            .map(|(_, o)| {
                format!(
                    "{} {} NULLS {}",
                    o.column,
                    if o.ascending { "ASC" } else { "DESC" },
                    if o.nulls_first { "FIRST" } else { "LAST" }
                )
            })
            .collect();
        format!("  Sort: {}\n", keys.join(", "))
    }
}

/// The column `name` of `batch`, or the struct child a dotted `name` reaches.
fn key_column(batch: &RecordBatch, name: &str) -> Option<ArrayRef> {
    if let Some(c) = batch.column_by_name(name) {
        return Some(c.clone());
    }
    let mut parts = name.split('.');
    let mut col = batch.column_by_name(parts.next()?)?.clone();
    for p in parts {
        let s = col.as_struct_opt()?;
        let child = s.column_by_name(p)?.clone();
        // A NULL parent makes the child NULL.
        col = match s.nulls() {
            Some(n) => arrow_array::make_array(
                child
                    .to_data()
                    .into_builder()
                    .nulls(arrow_buffer::NullBuffer::union(Some(n), child.nulls()))
                    .build()
                    .ok()?,
            ),
            None => child,
        };
    }
    Some(col)
}

/// Floating-point keys with every NaN made the positive quiet NaN, so that all NaNs sort
/// together above every number (Arrow orders by IEEE total order, where a NaN with its
/// sign bit set sorts below negative infinity).
fn canonical_nan(values: ArrayRef) -> ArrayRef {
    fn fix<T: arrow_array::ArrowPrimitiveType>(a: &PrimitiveArray<T>, nan: T::Native) -> ArrayRef
    where
        T::Native: IsNan,
    {
        if !a.values().iter().any(|v| v.is_nan_value()) {
            return Arc::new(a.clone());
        }
        Arc::new(a.unary::<_, T>(|v| if v.is_nan_value() { nan } else { v }))
    }
    match values.data_type() {
        DataType::Float16 => fix(values.as_primitive::<Float16Type>(), half::f16::NAN),
        DataType::Float32 => fix(values.as_primitive::<Float32Type>(), f32::NAN),
        DataType::Float64 => fix(values.as_primitive::<Float64Type>(), f64::NAN),
        _ => values,
    }
}

mod num_like {
    /// Whether a float is NaN, for the three float widths.
    pub(crate) trait IsNan: Copy {
        fn is_nan_value(self) -> bool;
    }
    impl IsNan for half::f16 {
        fn is_nan_value(self) -> bool {
            self.is_nan()
        }
    }
    impl IsNan for f32 {
        fn is_nan_value(self) -> bool {
            self.is_nan()
        }
    }
    impl IsNan for f64 {
        fn is_nan_value(self) -> bool {
            self.is_nan()
        }
    }
}

impl Scan {
    /// Every row of an ordered scan, sorted (the planned tasks run a few at a time).
    pub(super) async fn run_sorted(&self, order: &Order) -> Result<RecordBatch> {
        use futures::StreamExt;
        let window = crate::scan::tasks_at_once();
        let batches: Vec<RecordBatch> = futures::stream::iter(0..self.tasks.len())
            .map(|i| self.run_planned_task(i))
            .buffered(window)
            .collect::<Vec<_>>()
            .await
            .into_iter()
            .collect::<Result<_>>()?;
        let all = arrow_select::concat::concat_batches(&self.schema, &batches)?;
        order.sort(&all)
    }
}

#[cfg(test)]
mod tests {
    use arrow_array::types::Int64Type;
    use arrow_array::{Float64Array, Int64Array};

    use super::*;

    fn sort(values: Vec<Option<f64>>, o: ColumnOrdering) -> Vec<i64> {
        let n = values.len() as i64;
        let batch = RecordBatch::try_from_iter([
            ("v", Arc::new(Float64Array::from(values)) as ArrayRef),
            ("i", Arc::new(Int64Array::from_iter_values(0..n)) as ArrayRef),
        ])
        .unwrap_or_else(|e| panic!("{e}"));
        let order = Order {
            keys: vec![(Key::Name("v".into()), o)],
            hidden: 0..0,
        };
        let out = order.sort(&batch).unwrap_or_else(|e| panic!("{e}"));
        out.column(1).as_primitive::<Int64Type>().values().to_vec()
    }

    #[test]
    fn nan_is_above_every_number_and_nulls_follow_nulls_first() {
        let v = vec![
            Some(1.0),
            None,
            Some(f64::NAN),
            Some(-f64::NAN),
            Some(f64::INFINITY),
            Some(-1.0),
            Some(1.0),
        ];
        // Ascending: numbers, +inf, the NaNs (in scan order), then NULL.
        assert_eq!(sort(v.clone(), ColumnOrdering::asc("v")), vec![5, 0, 6, 4, 2, 3, 1]);
        let desc = ColumnOrdering {
            ascending: false,
            nulls_first: true,
            ..ColumnOrdering::asc("v")
        };
        assert_eq!(sort(v, desc), vec![1, 2, 3, 4, 0, 6, 5]);
    }
}
