//! `nullif`, `nvl2`, `greatest` and `least` (`nvl` / `ifnull` are two-argument `coalesce`).
//! The binder has brought the arguments to one type.

use arrow_arith::boolean::{and, is_not_null, is_null, or};
use arrow_array::{Array, ArrayRef, BooleanArray};
use arrow_ord::cmp;
use arrow_select::zip::zip;

use super::args::{arg, result_rows, wrap};
use crate::error::{Error, Result};
use crate::eval::Value;

/// A bound conditional function.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CondFunc {
    /// `nullif(a, b)`: NULL where `a = b` (floats compare by total order: NaN equals NaN,
    /// -0.0 differs from 0.0, as in pylance), else `a`.
    NullIf,
    /// `nvl2(a, b, c)`: `b` where `a` is not NULL, else `c`.
    Nvl2,
    /// `greatest(a, ...)`: the largest non-NULL argument (NaN above every number).
    Greatest,
    /// `least(a, ...)`: the smallest non-NULL argument.
    Least,
}

impl CondFunc {
    pub(crate) fn invoke(self, values: &[Value], rows: usize) -> Result<Value> {
        let n = result_rows(values, rows);
        let arrays = values
            .iter()
            .map(|v| v.clone().into_array(n))
            .collect::<Result<Vec<ArrayRef>>>()?;
        let first = arrays
            .first()
            .ok_or_else(|| Error::Type(format!("{self:?} needs an argument")))?;
        let out = match self {
            CondFunc::NullIf => {
                let b = arrays
                    .get(1)
                    .ok_or_else(|| Error::Type("nullif() takes 2 arguments".into()))?;
                let same = cmp::eq(first, b)?;
                arrow_select::nullif::nullif(first.as_ref(), &same)?
            }
            CondFunc::Nvl2 => {
                let (a, b) = (arg(values, 1)?, arg(values, 2)?);
                let (b, c) = (a.clone().into_array(n)?, b.clone().into_array(n)?);
                zip(&is_not_null(first.as_ref())?, &b, &c)?
            }
            CondFunc::Greatest | CondFunc::Least => {
                let mut acc = first.clone();
                for next in &arrays[1..] {
                    let better = if self == CondFunc::Greatest {
                        cmp::gt(next, &acc)?
                    } else {
                        cmp::lt(next, &acc)?
                    };
                    // Take `next` where it is better, or where the running value is NULL.
                    let take = or(
                        &fill_false(&better),
                        &and(&is_null(acc.as_ref())?, &is_not_null(next.as_ref())?)?,
                    )?;
                    acc = zip(&take, next, &acc)?;
                }
                acc
            }
        };
        Ok(wrap(values, out))
    }
}

/// NULL entries as false.
fn fill_false(b: &BooleanArray) -> BooleanArray {
    match b.nulls() {
        Some(n) => BooleanArray::new(b.values() & n.inner(), None),
        None => b.clone(),
    }
}
