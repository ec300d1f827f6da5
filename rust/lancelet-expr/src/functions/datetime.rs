//! `date_part` (alias `datepart`) and `date_trunc` (alias `datetrunc`) with pylance 14's
//! results. Fields and truncation follow the wall clock of a zoned timestamp's zone.

use std::sync::Arc;

use arrow_arith::temporal::{date_part, DatePart};
use arrow_array::builder::PrimitiveBuilder;
use arrow_array::cast::AsArray;
use arrow_array::types::{Float64Type, Int32Type, Int64Type};
use arrow_array::{Array, ArrayRef, PrimitiveArray};
use arrow_schema::{DataType, TimeUnit};

use crate::error::{Error, Result};
use crate::eval::Value;

/// A field `date_part` extracts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Field {
    Year,
    IsoYear,
    Quarter,
    Month,
    /// ISO 8601 week of the year.
    Week,
    Day,
    /// Day of the week, Sunday = 0.
    Dow,
    /// Day of the week, Monday = 1 ... Sunday = 7.
    IsoDow,
    /// Day of the year, from 1.
    Doy,
    Hour,
    Minute,
    /// Whole seconds of the minute.
    Second,
    /// Milliseconds of the minute (seconds included).
    Millisecond,
    /// Microseconds of the minute (seconds included).
    Microsecond,
    /// Nanoseconds of the minute (seconds included), `Int64`.
    Nanosecond,
    /// Seconds since 1970-01-01 00:00:00 UTC, `Float64`.
    Epoch,
}

impl Field {
    /// The field a (case-insensitive) name means, with the spellings pylance 14 accepts.
    pub(crate) fn parse(name: &str) -> Option<Field> {
        Some(match name.to_ascii_lowercase().as_str() {
            "y" | "yr" | "yrs" | "year" | "years" => Field::Year,
            "isoyear" => Field::IsoYear,
            "qtr" | "quarter" => Field::Quarter,
            "mon" | "mons" | "month" | "months" => Field::Month,
            "w" | "week" | "weeks" => Field::Week,
            "d" | "day" | "days" => Field::Day,
            "dow" => Field::Dow,
            "isodow" => Field::IsoDow,
            "doy" => Field::Doy,
            "h" | "hr" | "hrs" | "hour" | "hours" => Field::Hour,
            "m" | "min" | "mins" | "minute" | "minutes" => Field::Minute,
            "s" | "sec" | "secs" | "second" | "seconds" => Field::Second,
            "ms" | "msec" | "msecs" | "millisecond" | "milliseconds" => Field::Millisecond,
            "us" | "usec" | "usecs" | "microsecond" | "microseconds" => Field::Microsecond,
            "nanosecond" | "nanoseconds" => Field::Nanosecond,
            "epoch" => Field::Epoch,
            _ => return None,
        })
    }

    /// The names [`Field::parse`] accepts, for error messages.
    pub(crate) const NAMES: &'static str = "year, isoyear, quarter, month, week, day, dow, isodow, doy, hour, \
                                            minute, second, millisecond, microsecond, nanosecond, epoch";

    /// The type `date_part` returns for this field.
    pub(crate) fn data_type(self) -> DataType {
        match self {
            Field::Nanosecond => DataType::Int64,
            Field::Epoch => DataType::Float64,
            _ => DataType::Int32,
        }
    }
}

/// The unit `date_trunc` truncates to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Granularity {
    Microsecond,
    Millisecond,
    Second,
    Minute,
    Hour,
    Day,
    /// To Monday.
    Week,
    Month,
    Quarter,
    Year,
}

impl Granularity {
    /// The granularity a (case-insensitive) name means; pylance 14 accepts only these
    /// singular names.
    pub(crate) fn parse(name: &str) -> Option<Granularity> {
        Some(match name.to_ascii_lowercase().as_str() {
            "microsecond" => Granularity::Microsecond,
            "millisecond" => Granularity::Millisecond,
            "second" => Granularity::Second,
            "minute" => Granularity::Minute,
            "hour" => Granularity::Hour,
            "day" => Granularity::Day,
            "week" => Granularity::Week,
            "month" => Granularity::Month,
            "quarter" => Granularity::Quarter,
            "year" => Granularity::Year,
            _ => return None,
        })
    }

    /// The names [`Granularity::parse`] accepts, for error messages.
    pub(crate) const NAMES: &'static str =
        "microsecond, millisecond, second, minute, hour, day, week, month, quarter, year";

    /// Its length in nanoseconds, for the fixed-length ones below a day.
    fn nanos(self) -> Option<i64> {
        Some(match self {
            Granularity::Microsecond => 1_000,
            Granularity::Millisecond => 1_000_000,
            Granularity::Second => 1_000_000_000,
            Granularity::Minute => 60_000_000_000,
            Granularity::Hour => 3_600_000_000_000,
            _ => return None,
        })
    }
}

/// A bound date/time function.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TimeFunc {
    /// `date_part(field, t)` of a date or timestamp.
    Part(Field),
    /// `date_trunc(granularity, t)` of a timestamp (dates are converted to `Timestamp(ns)`
    /// by the binder).
    Trunc(Granularity),
}

impl TimeFunc {
    pub(crate) fn invoke(self, values: &[Value]) -> Result<Value> {
        let v = values
            .first()
            .ok_or_else(|| Error::Type("missing date/time argument".to_string()))?;
        match self {
            TimeFunc::Part(f) => v.map(|a| part(a, f)),
            TimeFunc::Trunc(g) => v.map(|a| trunc(a, g)),
        }
    }
}

fn ints(a: &ArrayRef) -> Result<&PrimitiveArray<Int32Type>> {
    a.as_primitive_opt::<Int32Type>()
        .ok_or_else(|| Error::Type(format!("expected Int32 date parts, got {}", a.data_type())))
}

/// Ticks of `unit` per second.
fn per_second(unit: TimeUnit) -> i64 {
    match unit {
        TimeUnit::Second => 1,
        TimeUnit::Millisecond => 1_000,
        TimeUnit::Microsecond => 1_000_000,
        TimeUnit::Nanosecond => 1_000_000_000,
    }
}

/// The raw `i64` ticks of a timestamp array (or dates, as milliseconds for `Date64`).
fn ticks(a: &ArrayRef) -> Result<ArrayRef> {
    Ok(arrow_cast::cast(a.as_ref(), &DataType::Int64)?)
}

fn part(a: &ArrayRef, field: Field) -> Result<ArrayRef> {
    let simple = |p: DatePart| -> Result<ArrayRef> { Ok(date_part(a.as_ref(), p)?) };
    match field {
        Field::Year => simple(DatePart::Year),
        Field::IsoYear => simple(DatePart::YearISO),
        Field::Quarter => simple(DatePart::Quarter),
        Field::Month => simple(DatePart::Month),
        Field::Week => simple(DatePart::Week),
        Field::Day => simple(DatePart::Day),
        Field::Dow => simple(DatePart::DayOfWeekSunday0),
        Field::IsoDow => simple(DatePart::DayOfWeekMonday1),
        Field::Doy => simple(DatePart::DayOfYear),
        Field::Hour => simple(DatePart::Hour),
        Field::Minute => simple(DatePart::Minute),
        Field::Second => simple(DatePart::Second),
        Field::Millisecond | Field::Microsecond | Field::Nanosecond => {
            let seconds = simple(DatePart::Second)?;
            let nanos = simple(DatePart::Nanosecond)?;
            let (seconds, nanos) = (ints(&seconds)?, ints(&nanos)?);
            Ok(match field {
                Field::Millisecond => Arc::new(arrow_arith::arity::binary::<_, _, _, Int32Type>(
                    seconds,
                    nanos,
                    |s, n| s.wrapping_mul(1_000).wrapping_add(n / 1_000_000),
                )?),
                Field::Microsecond => Arc::new(arrow_arith::arity::binary::<_, _, _, Int32Type>(
                    seconds,
                    nanos,
                    |s, n| s.wrapping_mul(1_000_000).wrapping_add(n / 1_000),
                )?),
                _ => Arc::new(arrow_arith::arity::binary::<_, _, _, Int64Type>(
                    seconds,
                    nanos,
                    |s, n| i64::from(s).wrapping_mul(1_000_000_000).wrapping_add(i64::from(n)),
                )?),
            })
        }
        Field::Epoch => {
            let t = ticks(a)?;
            let t = t.as_primitive::<Int64Type>();
            let per = match a.data_type() {
                DataType::Timestamp(unit, _) => per_second(*unit) as f64,
                DataType::Date64 => 1_000.0,
                // Days.
                DataType::Date32 => return Ok(Arc::new(t.unary::<_, Float64Type>(|d| d as f64 * 86_400.0))),
                other => return Err(Error::Type(format!("date_part() does not accept {other} values"))),
            };
            Ok(Arc::new(t.unary::<_, Float64Type>(|v| v as f64 / per)))
        }
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (month and day from 1).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let year_of_era = y.rem_euclid(400);
    let shifted_month = if month > 2 { month - 3 } else { month + 9 };
    let day_of_year = (153 * shifted_month + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

/// The (year, month, day) of a day number since 1970-01-01.
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z.rem_euclid(146_097);
    let year_of_era = (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let mp = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// Truncates wall-clock `ticks` (`per` ticks a second) to the start of its day, week,
/// month, quarter or year.
fn trunc_calendar(ticks: i64, per: i64, g: Granularity) -> Option<i64> {
    let per_day = per.checked_mul(86_400)?;
    let days = ticks.div_euclid(per_day);
    let start = match g {
        Granularity::Day => days,
        // 1970-01-01 was a Thursday (Monday = 0 makes it 3).
        Granularity::Week => days.checked_sub((days.checked_add(3)?).rem_euclid(7))?,
        _ => {
            let (year, month, _) = civil_from_days(days);
            let month = match g {
                Granularity::Month => month,
                Granularity::Quarter => (month - 1) / 3 * 3 + 1,
                _ => 1,
            };
            days_from_civil(year, month, 1)
        }
    };
    start.checked_mul(per_day)
}

fn out_of_range() -> Error {
    Error::InvalidArgument("date_trunc(): the truncated timestamp is out of range".to_string())
}

fn trunc(a: &ArrayRef, g: Granularity) -> Result<ArrayRef> {
    let DataType::Timestamp(unit, tz) = a.data_type() else {
        return Err(Error::Type(format!(
            "date_trunc() does not accept {} values",
            a.data_type()
        )));
    };
    let per = per_second(*unit);
    let raw = ticks(a)?;
    let raw = raw.as_primitive::<Int64Type>();
    // Ticks of the fixed-length granularity (1 when it is finer than the unit).
    let step = g.nanos().map(|ns| (ns / (1_000_000_000 / per)).max(1));
    let out: ArrayRef = match (tz, step) {
        (None, Some(step)) => Arc::new(
            raw.try_unary::<_, Int64Type, Error>(|v| v.checked_sub(v.rem_euclid(step)).ok_or_else(out_of_range))?,
        ),
        (None, None) => {
            Arc::new(raw.try_unary::<_, Int64Type, Error>(|v| trunc_calendar(v, per, g).ok_or_else(out_of_range))?)
        }
        (Some(_), _) => {
            let local = wall_clock(a, raw, per)?;
            match step {
                // The same instant minus the wall-clock remainder: keeps the row's own UTC
                // offset, so both readings of a repeated hour stay apart.
                Some(step) => {
                    let mut b = PrimitiveBuilder::<Int64Type>::with_capacity(raw.len());
                    for (v, l) in raw.iter().zip(local.iter()) {
                        b.append_option(match (v, l) {
                            (Some(v), Some(l)) => Some(v.checked_sub(l.rem_euclid(step)).ok_or_else(out_of_range)?),
                            _ => None,
                        });
                    }
                    Arc::new(b.finish())
                }
                // Midnight (of the day, week, ...) read in the zone.
                None => {
                    let naive = local
                        .try_unary::<_, Int64Type, Error>(|l| trunc_calendar(l, per, g).ok_or_else(out_of_range))?;
                    let naive = arrow_cast::cast(&naive, &DataType::Timestamp(*unit, None))?;
                    let zoned = arrow_cast::cast(&naive, a.data_type())?;
                    ticks(&zoned)?
                }
            }
        }
    };
    Ok(arrow_cast::cast(&out, a.data_type())?)
}

/// The wall-clock ticks (in the timestamps' zone) of zoned timestamps `a` (`raw` their
/// UTC ticks); a row whose fields are outside the calendar is an error.
fn wall_clock(a: &ArrayRef, raw: &PrimitiveArray<Int64Type>, per: i64) -> Result<PrimitiveArray<Int64Type>> {
    let fields = [
        DatePart::Year,
        DatePart::Month,
        DatePart::Day,
        DatePart::Hour,
        DatePart::Minute,
        DatePart::Second,
    ]
    .into_iter()
    .map(|p| date_part(a.as_ref(), p))
    .collect::<std::result::Result<Vec<_>, _>>()?;
    let fields = fields.iter().map(ints).collect::<Result<Vec<_>>>()?;
    let mut b = PrimitiveBuilder::<Int64Type>::with_capacity(raw.len());
    for row in 0..raw.len() {
        if raw.is_null(row) {
            b.append_null();
            continue;
        }
        let get = |i: usize| {
            fields
                .get(i)
                .filter(|f| f.is_valid(row))
                .map(|f| i64::from(f.value(row)))
        };
        let (Some(y), Some(mo), Some(d), Some(h), Some(mi), Some(s)) = (get(0), get(1), get(2), get(3), get(4), get(5))
        else {
            return Err(out_of_range());
        };
        let seconds = days_from_civil(y, mo, d) * 86_400 + h * 3_600 + mi * 60 + s;
        // Zone offsets are whole seconds, so the fraction of a second is the UTC one.
        let local = seconds
            .checked_mul(per)
            .and_then(|t| t.checked_add(raw.value(row).rem_euclid(per)))
            .ok_or_else(out_of_range)?;
        b.append_value(local);
    }
    Ok(b.finish())
}

#[cfg(test)]
mod tests {
    use super::{civil_from_days, days_from_civil};

    #[test]
    fn civil_dates_round_trip() {
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        assert_eq!(days_from_civil(2024, 2, 29), 19_782);
        assert_eq!(days_from_civil(1969, 12, 31), -1);
        assert_eq!(civil_from_days(19_782), (2024, 2, 29));
        for d in (-1_000_000..1_000_000).step_by(997) {
            let (y, m, day) = civil_from_days(d);
            assert_eq!(days_from_civil(y, m, day), d);
        }
    }
}
