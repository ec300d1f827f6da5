//! SQL conditions evaluated over batches held in memory rather than over a scan: the
//! `when_matched_update_all(condition=...)` of a merge-insert, whose rows pair a source
//! row with the target row it matched.

use arrow_array::{BooleanArray, RecordBatch};
use arrow_schema::DataType;

use crate::{Error, Result};

/// The column paths `sql` reads (e.g. `[["source", "v"], ["target", "v"]]`), as written.
pub fn condition_columns(sql: &str) -> Result<Vec<Vec<String>>> {
    let expr = lancelet_expr::parse(sql).map_err(|e| Error::expr(format!("condition {sql:?}"), e))?;
    Ok(expr.columns())
}

/// Where `sql` holds on each row of `batch` (NULL counts as false). The condition must be
/// boolean; a bare `NULL` is allowed and holds nowhere.
pub fn evaluate_condition(batch: &RecordBatch, sql: &str) -> Result<BooleanArray> {
    let context = || format!("condition {sql:?}");
    let expr = lancelet_expr::parse(sql).map_err(|e| Error::expr(context(), e))?;
    let bound = expr.bind(&batch.schema()).map_err(|e| Error::expr(context(), e))?;
    match bound.data_type() {
        DataType::Boolean => bound.evaluate_predicate(batch).map_err(|e| Error::expr(context(), e)),
        DataType::Null => Ok(BooleanArray::from(vec![false; batch.num_rows()])),
        other => Err(Error::InvalidArgument(format!(
            "condition {sql:?} must be boolean, but it is {other}"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::{ArrayRef, Int64Array, StructArray};
    use arrow_schema::{Field, Fields, Schema};

    use super::*;

    fn pairs() -> RecordBatch {
        let side = |v: Vec<Option<i64>>| -> ArrayRef {
            let fields = Fields::from(vec![Field::new("v", DataType::Int64, true)]);
            Arc::new(StructArray::new(
                fields,
                vec![Arc::new(Int64Array::from(v)) as ArrayRef],
                None,
            ))
        };
        let src = side(vec![Some(5), Some(1), Some(3)]);
        let tgt = side(vec![Some(2), Some(4), None]);
        let schema = Schema::new(vec![
            Field::new("source", src.data_type().clone(), false),
            Field::new("target", tgt.data_type().clone(), false),
        ]);
        RecordBatch::try_new(Arc::new(schema), vec![src, tgt]).unwrap()
    }

    #[test]
    fn compares_source_with_target() {
        let mask = evaluate_condition(&pairs(), "source.v > target.v").unwrap();
        assert_eq!(
            mask.iter().collect::<Vec<_>>(),
            vec![Some(true), Some(false), Some(false)]
        );
        let none = evaluate_condition(&pairs(), "NULL").unwrap();
        assert_eq!(none.true_count(), 0);
    }

    #[test]
    fn refuses_non_boolean_and_unknown_columns() {
        assert!(evaluate_condition(&pairs(), "source.v").is_err());
        assert!(evaluate_condition(&pairs(), "source.nope > 1").is_err());
        assert!(condition_columns("source.v >").is_err());
        assert_eq!(
            condition_columns("source.v > target.`v`").unwrap(),
            vec![
                vec!["source".to_string(), "v".to_string()],
                vec!["target".to_string(), "v".to_string()]
            ]
        );
    }
}
