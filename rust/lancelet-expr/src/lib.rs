//! SQL expressions for Lance filters and projections: a hand-written parser and a vectorized
//! evaluator over Arrow [`RecordBatch`](arrow_array::RecordBatch)es.
//!
//! ```
//! use std::sync::Arc;
//! use arrow_array::{Int32Array, RecordBatch, StringArray};
//! use arrow_schema::{DataType, Field, Schema};
//!
//! let schema = Arc::new(Schema::new(vec![
//!     Field::new("id", DataType::Int32, true),
//!     Field::new("name", DataType::Utf8, true),
//! ]));
//! let batch = RecordBatch::try_new(
//!     schema.clone(),
//!     vec![
//!         Arc::new(Int32Array::from(vec![Some(1), Some(2), None])),
//!         Arc::new(StringArray::from(vec!["ann", "bob", "cy"])),
//!     ],
//! )?;
//! let filter = lancelet_expr::parse("id > 1 OR name LIKE 'a%'")?.bind(&schema)?;
//! let mask = filter.evaluate_predicate(&batch)?;
//! assert_eq!(mask.iter().collect::<Vec<_>>(), vec![Some(true), Some(true), Some(false)]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Pipeline
//!
//! [`parse`] turns SQL text into an [`Expr`] (no schema needed; [`Expr::columns`] lists what it
//! reads). [`Expr::bind`] resolves the columns against a schema, checks types and inserts
//! conversions, giving a [`BoundExpr`] whose [`BoundExpr::evaluate`] /
//! [`BoundExpr::evaluate_predicate`] run Arrow kernels on whole batches.
//!
//! # Semantics (checked against pylance 14.0.2, i.e. Lance's DataFusion-based planner)
//!
//! * **Identifiers.** Unquoted top-level column names match exactly first and otherwise
//!   ignoring ASCII case, as in Lance (`ID > 1` finds a column `id`; with columns `a` and `A`,
//!   `A` means `A`); a name that matches several columns only by case is an error. Struct field
//!   names after a dot are case-sensitive, as in Lance. `` `backquoted` `` names are one
//!   identifier, so `` `a.b` `` is a column named `a.b`; here they also get the case-insensitive
//!   fallback (Lance makes them case-sensitive, so this only turns Lance errors into results).
//!   **Double quotes delimit strings, not identifiers**: Lance parses `"x"` as the string
//!   `'x'`, and so does this crate.
//! * **Literals vs columns.** A literal compared with a column is converted to the column's
//!   type when Lance allows it: integers to any integer type they fit in (`uint8_col = 300` is
//!   an error) and to floats and decimals; floats only to floats (`int_col > 1.5` and
//!   `int_col = 2.0` are errors, as in Lance); strings only to string types (`name > 5`,
//!   `id = '2'` and `date_col = '2024-01-01'` are errors: write `DATE '2024-01-01'`); dates and
//!   timestamps between temporal types. A timestamp literal has no zone; compared with a
//!   zoned column it is read as wall-clock time in that zone (a literal with an offset is first
//!   normalized to UTC wall-clock time), which is what Lance does. Other operands are brought to
//!   a common type (DataFusion's numeric widening; `Int64` with `UInt64` becomes
//!   `Decimal128(20, 0)`).
//! * **Arithmetic.** `+ - *` wrap on integer overflow (DataFusion's default), integer `/`
//!   truncates toward zero, `%` takes the sign of the dividend, and integer division or
//!   remainder by zero is [`Error::DivideByZero`]. Float division by zero gives ±inf/NaN.
//!   Literals in arithmetic are not narrowed to the column type (`int8_col * 100` is computed
//!   as `Int64`), as in Lance filters.
//! * **NULL.** Three-valued logic throughout; `x = NULL` is NULL; `x IN (1, NULL)` is NULL
//!   when `x` is not 1; [`BoundExpr::evaluate_predicate`] treats NULL as false.
//! * **Floats** compare with IEEE total order (Arrow's kernels, as in DataFusion): `NaN` equals
//!   itself and sorts above every number.
//! * **Dictionary** columns compare, match and test membership as their value type without
//!   being decoded.
//! * **Nested fields** `s.a.b` read the struct child; a row whose parent struct is NULL reads
//!   NULL.
//!
//! # SQL accepted
//!
//! `= == != <> < <= > >=`, `AND OR NOT`, `IS [NOT] NULL|TRUE|FALSE`, `[NOT] IN (...)`,
//! `[NOT] BETWEEN .. AND ..`, `[NOT] LIKE|ILIKE pattern [ESCAPE 'c']`, `+ - * / %`, unary
//! `-`, `||`, `CAST(x AS type)`, `TRY_CAST(x AS type)`, `x::type`, literals (`1`, `1.5`,
//! `1e3`, `'it''s'`, `X'0aff'`, `TRUE`, `NULL`, `DATE '2024-01-01'`,
//! `TIMESTAMP '2024-01-01 10:00:00.5'`), `-- comments`, and the functions `lower`, `upper`,
//! `length`/`char_length`/`character_length` (characters), `starts_with`, `ends_with`,
//! `contains`, `regexp_like(s, pattern [, flags])`, `regexp_match(s, pattern [, flags])`,
//! `abs`, `coalesce`, `isnan` (alias `is_nan`), `arrow_cast(x, 'ArrowType')` (Arrow type
//! names as DataFusion parses them: `'Int32'`, `'Utf8'`, `'Timestamp(Microsecond, None)'`,
//! `'Dictionary(Int32, Utf8)'`, ...), `current_date`/`today()` (Date32) and
//! `now()`/`current_timestamp` (Timestamp(ns), UTC wall clock, fixed when bound),
//! `TIMESTAMP(0|3|6|9) '...'` literals (seconds, milli-, micro-, nanoseconds; plain `TIMESTAMP`
//! is microseconds and finer digits are truncated, as in Lance), list subscripts `l[i]` /
//! `array_element(l, i)` (1-based, negative counts from the end, out of range is NULL), struct
//! fields `s['f']` / `get_field(s, 'f')` / `expr.f` after a subscript, and the JSON functions
//! `json_extract`, `json_exists`, `json_get`, `json_get_string|int|float|bool`,
//! `json_array_contains`, `json_array_length` over stored JSON columns (JSONB
//! `large_binary`, Lance's `lance.json`), with pylance 14's results (`json_get` returns
//! JSONB); beyond Lance they also take JSON text (`utf8`) documents, and JSONPath filters
//! `?(...)` are not supported.
//!
//! DataFusion's scalar functions that pylance 14 accepts, with its results on NULLs and
//! edge cases (lengths and positions count characters):
//! * strings: `concat` (NULL counts as ''; numbers, dates, ... as their text), `concat_ws`,
//!   `replace`, `split_part` (1-based, negative from the end, 0 is an error), `left`,
//!   `right`, `lpad`, `rpad`, `ltrim`, `rtrim`, `btrim` (spaces, or the given characters),
//!   `strpos`/`instr`, `reverse`, `repeat`, `initcap`, `ascii`, `chr`, `octet_length`,
//!   `bit_length`, `to_hex`, `translate`, `md5`;
//! * math: `round(x [, digits])` (half away from zero; digits may be negative; decimals stay
//!   decimal), `trunc(x [, digits])`, `sqrt`, `cbrt`, `power`/`pow`, `exp`, `ln`, `log`
//!   (`log(x)` is base 10, `log(base, x)`), `log2`, `log10`, `signum`, `sin`, `cos`, `tan`,
//!   `asin`, `acos`, `atan`, `atan2`, `sinh`, `cosh`, `tanh`, `asinh`, `acosh`, `atanh`,
//!   `cot`, `degrees`, `radians`, `pi`, `iszero`, `nanvl`, `gcd`, `lcm`, `factorial`
//!   (`Float32` arguments compute in `Float32` where pylance does, everything else in
//!   `Float64`);
//! * conditional: `nullif`, `nvl`/`ifnull`, `nvl2`, `greatest`, `least` (NULLs skipped);
//! * date/time: `date_part`/`datepart('field', t)` (`year`, `quarter`, `month`, `week`,
//!   `day`, `dow`, `isodow`, `doy`, `hour`, `minute`, `second`, `millisecond`,
//!   `microsecond`, `nanosecond`, `epoch`, `isoyear` and their abbreviations) and
//!   `date_trunc`/`datetrunc('unit', t)`, in the wall-clock time of a zoned timestamp.
//!
//! A value a function cannot take (`chr(-1)`, `factorial(21)`, a `repeat` past 2 GiB) is
//! [`Error::InvalidArgument`]. Function names and keywords are
//! case-insensitive. Type names in casts: `tinyint`, `smallint`, `int`/`integer`, `bigint`
//! (each optionally `unsigned`), `float`/`real`, `double`, `string`/`varchar`/`text`, `binary`,
//! `boolean`, `date`, `timestamp[(0|3|6|9)] [WITH TIME ZONE 'tz']`, `decimal(p, s)`, plus
//! Arrow-specific spellings (`large_string`, `string_view`, `large_binary`, `binary_view`,
//! `fixed_size_binary(n)`, `date64`, `half`, `decimal256(p, s)`) so that every bound expression
//! prints as SQL that parses again.
//!
//! Beyond Lance: `ESCAPE` with a character other than backslash (Lance rejects it), `varchar`
//! / `text` / `real` casts, and case-insensitive fallback for backquoted names. These only
//! turn Lance errors into results.
//!
//! Not supported: string-to-number coercion between two non-literal operands (Lance casts the
//! string side at run time; here it is a type error), `IS [NOT] DISTINCT FROM`, `CASE`
//! (Lance rejects it too), intervals and date arithmetic, list slices `l[a:b]`, and scalar
//! functions other than those listed (pylance also has, for example, `regexp_replace`,
//! `substr_index`, `levenshtein`, `sha256`, `to_timestamp`, `to_char`, `make_date`).

mod ast;
mod bind;
mod coerce;
mod error;
mod eval;
mod functions;
mod in_set;
mod lexer;
mod parser;
mod prune;
mod terms;

pub use ast::{BinaryOp, Expr, ScalarValue, SqlType};
pub use bind::BoundExpr;
pub use error::{Error, Result};
pub use parser::parse;
pub use prune::{ColumnBounds, Outcomes};
pub use terms::{index_tree, IndexTerm, IndexTree};
