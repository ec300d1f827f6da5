//! List elements (`list[i]`, `array_element`) and struct fields (`s['f']`, `get_field`).

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef, BooleanArray, Int64Array, UInt64Array};
use arrow_schema::DataType;
use arrow_select::nullif::nullif;
use arrow_select::take::take;

use crate::error::{Error, Result};
use crate::eval::Value;

/// Runs `f` on both values as arrays of one length; the result is a scalar when both are.
fn binary(
    a: &Value,
    b: &Value,
    rows: usize,
    f: impl FnOnce(&ArrayRef, &ArrayRef) -> Result<ArrayRef>,
) -> Result<Value> {
    if a.is_scalar() && b.is_scalar() {
        let (a, b) = (a.clone().into_array(1)?, b.clone().into_array(1)?);
        return Ok(Value::Scalar(f(&a, &b)?));
    }
    let (a, b) = (a.clone().into_array(rows)?, b.clone().into_array(rows)?);
    Ok(Value::Array(f(&a, &b)?))
}

/// The start and length of a list row in the list's values, `None` for a null row.
type Span = Option<(u64, u64)>;

/// The values of a list array and the span of every row.
fn spans(list: &ArrayRef) -> Result<(ArrayRef, Vec<Span>)> {
    let valid = |i: usize| list.is_valid(i);
    Ok(match list.data_type() {
        DataType::List(_) => {
            let l = list.as_list::<i32>();
            let o = l.value_offsets();
            let spans = (0..l.len())
                .map(|i| valid(i).then(|| (o[i] as u64, (o[i + 1] - o[i]) as u64)))
                .collect();
            (Arc::clone(l.values()), spans)
        }
        DataType::LargeList(_) => {
            let l = list.as_list::<i64>();
            let o = l.value_offsets();
            let spans = (0..l.len())
                .map(|i| valid(i).then(|| (o[i] as u64, (o[i + 1] - o[i]) as u64)))
                .collect();
            (Arc::clone(l.values()), spans)
        }
        DataType::FixedSizeList(_, _) => {
            let l = list.as_fixed_size_list();
            let spans = (0..l.len())
                .map(|i| valid(i).then(|| (l.value_offset_at(i) as u64, l.value_length() as u64)))
                .collect();
            (Arc::clone(l.values()), spans)
        }
        other => return Err(Error::Type(format!("array_element does not support type {other}"))),
    })
}

/// `list[index]`: 1-based; a negative index counts from the end (`-1` is the last item); 0,
/// out-of-range and NULL indexes give NULL, as DataFusion's `array_element`.
pub(crate) fn array_element(list: &Value, index: &Value, rows: usize) -> Result<Value> {
    binary(list, index, rows, |list, index| {
        let index = arrow_cast::cast(index, &DataType::Int64)?;
        let index: &Int64Array = index.as_primitive();
        let (values, spans) = spans(list)?;
        let positions: UInt64Array = spans
            .iter()
            .enumerate()
            .map(|(row, span)| {
                let (start, len) = (*span)?;
                if index.is_null(row) {
                    return None;
                }
                let i = index.value(row);
                let len = i64::try_from(len).ok()?;
                let offset = if i > 0 && i <= len {
                    i - 1
                } else if i < 0 && i >= -len {
                    // (-i would overflow for i64::MIN; -len cannot, len >= 0)
                    len + i
                } else {
                    return None;
                };
                Some(start + offset as u64)
            })
            .collect();
        Ok(take(values.as_ref(), &positions, None)?)
    })
}

/// `s['name']`: a field of a struct value; NULL where the struct is NULL.
pub(crate) fn get_field(value: &Value, name: &str) -> Result<Value> {
    value.map(|a| {
        let parent = a
            .as_struct_opt()
            .ok_or_else(|| Error::Type(format!("cannot read field '{name}' of a {} value", a.data_type())))?;
        let child = parent
            .column_by_name(name)
            .cloned()
            .ok_or_else(|| Error::Type(format!("the struct has no field '{name}'")))?;
        Ok(match parent.logical_nulls() {
            Some(nulls) if nulls.null_count() > 0 => {
                let parent_is_null = BooleanArray::new(!nulls.inner(), None);
                nullif(child.as_ref(), &parent_is_null)?
            }
            _ => child,
        })
    })
}
