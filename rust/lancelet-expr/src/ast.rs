//! The public expression tree and its SQL rendering.
//!
//! `Display` prints SQL that [`crate::parse`] reads back into an equal tree: it inserts
//! parentheses only where precedence requires them and quotes identifiers that are not plain
//! words.

use std::fmt::{self, Display, Formatter, Write as _};

use arrow_array::temporal_conversions::{as_datetime, date32_to_datetime};
use arrow_array::types::TimestampSecondType;
use arrow_schema::{DataType, TimeUnit};

/// A literal value as written in SQL.
///
/// Integer literals are `Int64` unless they only fit in `UInt64`; decimal and exponent literals
/// are `Float64`. Timestamps are wall-clock values without a time zone (a literal with an
/// offset such as `Z` or `+02:00` is normalized to UTC when parsed).
#[derive(Debug, Clone, PartialEq)]
pub enum ScalarValue {
    /// `NULL`, a value of no particular type.
    Null,
    /// `TRUE` / `FALSE`.
    Boolean(bool),
    /// An integer that fits in `i64`.
    Int64(i64),
    /// An integer larger than `i64::MAX` that fits in `u64`.
    UInt64(u64),
    /// A number written with a decimal point or an exponent.
    Float64(f64),
    /// `'text'` (or `"text"`: double quotes delimit strings, as in Lance).
    Utf8(String),
    /// `X'0a1b'`.
    Binary(Vec<u8>),
    /// `DATE 'YYYY-MM-DD'`, days since the UNIX epoch.
    Date32(i32),
    /// `TIMESTAMP '...'`: ticks of `unit` since the epoch, without a time zone.
    ///
    /// `TIMESTAMP '...'` is microseconds (finer digits are truncated, as in Lance);
    /// `TIMESTAMP(0|3|6|9) '...'` picks seconds, milli-, micro- or nanoseconds.
    Timestamp(i64, TimeUnit),
}

impl ScalarValue {
    /// The Arrow type of this literal.
    pub fn data_type(&self) -> DataType {
        match self {
            ScalarValue::Null => DataType::Null,
            ScalarValue::Boolean(_) => DataType::Boolean,
            ScalarValue::Int64(_) => DataType::Int64,
            ScalarValue::UInt64(_) => DataType::UInt64,
            ScalarValue::Float64(_) => DataType::Float64,
            ScalarValue::Utf8(_) => DataType::Utf8,
            ScalarValue::Binary(_) => DataType::Binary,
            ScalarValue::Date32(_) => DataType::Date32,
            ScalarValue::Timestamp(_, unit) => DataType::Timestamp(*unit, None),
        }
    }

    /// `true` for `NULL`.
    pub fn is_null(&self) -> bool {
        matches!(self, ScalarValue::Null)
    }
}

/// A binary operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BinaryOp {
    /// `=` (also written `==`)
    Eq,
    /// `!=` (also written `<>`)
    NotEq,
    /// `<`
    Lt,
    /// `<=`
    LtEq,
    /// `>`
    Gt,
    /// `>=`
    GtEq,
    /// `AND`, three-valued.
    And,
    /// `OR`, three-valued.
    Or,
    /// `+`
    Plus,
    /// `-`
    Minus,
    /// `*`
    Multiply,
    /// `/` (integer division truncates toward zero)
    Divide,
    /// `%` (the sign follows the dividend)
    Modulo,
    /// `||`, string concatenation.
    StringConcat,
}

impl BinaryOp {
    /// The operator as written in SQL.
    pub fn sql(&self) -> &'static str {
        match self {
            BinaryOp::Eq => "=",
            BinaryOp::NotEq => "!=",
            BinaryOp::Lt => "<",
            BinaryOp::LtEq => "<=",
            BinaryOp::Gt => ">",
            BinaryOp::GtEq => ">=",
            BinaryOp::And => "AND",
            BinaryOp::Or => "OR",
            BinaryOp::Plus => "+",
            BinaryOp::Minus => "-",
            BinaryOp::Multiply => "*",
            BinaryOp::Divide => "/",
            BinaryOp::Modulo => "%",
            BinaryOp::StringConcat => "||",
        }
    }

    /// `true` for `= != < <= > >=`.
    pub fn is_comparison(&self) -> bool {
        matches!(
            self,
            BinaryOp::Eq | BinaryOp::NotEq | BinaryOp::Lt | BinaryOp::LtEq | BinaryOp::Gt | BinaryOp::GtEq
        )
    }

    /// `true` for `+ - * / %`.
    pub fn is_arithmetic(&self) -> bool {
        matches!(
            self,
            BinaryOp::Plus | BinaryOp::Minus | BinaryOp::Multiply | BinaryOp::Divide | BinaryOp::Modulo
        )
    }

    /// Binding power: higher binds tighter. Shared by the parser and `Display`.
    pub(crate) fn precedence(&self) -> u8 {
        match self {
            BinaryOp::Or => prec::OR,
            BinaryOp::And => prec::AND,
            BinaryOp::Eq | BinaryOp::NotEq | BinaryOp::Lt | BinaryOp::LtEq | BinaryOp::Gt | BinaryOp::GtEq => prec::CMP,
            BinaryOp::Plus | BinaryOp::Minus | BinaryOp::StringConcat => prec::ADD,
            BinaryOp::Multiply | BinaryOp::Divide | BinaryOp::Modulo => prec::MUL,
        }
    }
}

impl Display for BinaryOp {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        f.write_str(self.sql())
    }
}

/// Operator binding powers (the same ladder as sqlparser-rs, which DataFusion and Lance use).
pub(crate) mod prec {
    pub const OR: u8 = 5;
    pub const AND: u8 = 10;
    pub const NOT: u8 = 15;
    pub const IS: u8 = 17;
    /// Comparisons, `IN`, `BETWEEN`, `LIKE`.
    pub const CMP: u8 = 20;
    pub const ADD: u8 = 30;
    pub const MUL: u8 = 40;
    pub const UNARY: u8 = 50;
    pub const CAST: u8 = 60;
    /// `x[i]`, `x['f']`, `(x).f`
    pub const SUBSCRIPT: u8 = 70;
    pub const ATOM: u8 = 100;
}

/// A parsed SQL expression.
#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    /// A column reference: the top-level name followed by nested struct field names
    /// (`s.b` is `["s", "b"]`; `` `a.b` `` is the single name `["a.b"]`).
    Column(Vec<String>),
    /// A literal value.
    Literal(ScalarValue),
    /// `left op right`.
    Binary {
        /// The operator.
        op: BinaryOp,
        /// Left operand.
        left: Box<Expr>,
        /// Right operand.
        right: Box<Expr>,
    },
    /// `NOT expr`, three-valued.
    Not(Box<Expr>),
    /// `-expr`.
    Negative(Box<Expr>),
    /// `expr IS NULL`.
    IsNull(Box<Expr>),
    /// `expr IS NOT NULL`.
    IsNotNull(Box<Expr>),
    /// `expr IS TRUE` (never null).
    IsTrue(Box<Expr>),
    /// `expr IS FALSE` (never null).
    IsFalse(Box<Expr>),
    /// `expr IS NOT TRUE` (never null).
    IsNotTrue(Box<Expr>),
    /// `expr IS NOT FALSE` (never null).
    IsNotFalse(Box<Expr>),
    /// `expr [NOT] IN (list...)`.
    InList {
        /// The tested value.
        expr: Box<Expr>,
        /// The candidates (at least one).
        list: Vec<Expr>,
        /// `NOT IN`.
        negated: bool,
    },
    /// `expr [NOT] BETWEEN low AND high` (inclusive).
    Between {
        /// The tested value.
        expr: Box<Expr>,
        /// Lower bound.
        low: Box<Expr>,
        /// Upper bound.
        high: Box<Expr>,
        /// `NOT BETWEEN`.
        negated: bool,
    },
    /// `expr [NOT] LIKE|ILIKE pattern [ESCAPE 'c']`, with `%` and `_` wildcards.
    Like {
        /// The tested string.
        expr: Box<Expr>,
        /// The pattern.
        pattern: Box<Expr>,
        /// `NOT LIKE` / `NOT ILIKE`.
        negated: bool,
        /// `ILIKE`.
        case_insensitive: bool,
        /// The `ESCAPE` character; `None` means backslash.
        escape: Option<char>,
    },
    /// `CAST(expr AS type)` or `expr::type`; fails on values that do not convert.
    Cast {
        /// The converted value.
        expr: Box<Expr>,
        /// The target type.
        to: DataType,
    },
    /// `TRY_CAST(expr AS type)`: values that do not convert become NULL.
    TryCast {
        /// The converted value.
        expr: Box<Expr>,
        /// The target type.
        to: DataType,
    },
    /// A function call; `name` is lower case.
    Function {
        /// Function name, lower case.
        name: String,
        /// Arguments.
        args: Vec<Expr>,
    },
}

impl Expr {
    /// A column reference to a top-level column.
    pub fn column(name: impl Into<String>) -> Expr {
        Expr::Column(vec![name.into()])
    }

    /// A literal.
    pub fn lit(value: ScalarValue) -> Expr {
        Expr::Literal(value)
    }

    /// `left op right`.
    pub fn binary(left: Expr, op: BinaryOp, right: Expr) -> Expr {
        Expr::Binary {
            op,
            left: Box::new(left),
            right: Box::new(right),
        }
    }

    /// The distinct column paths this expression references, in order of first appearance.
    pub fn columns(&self) -> Vec<Vec<String>> {
        let mut out: Vec<Vec<String>> = Vec::new();
        self.visit(&mut |e| {
            if let Expr::Column(path) = e {
                if !out.contains(path) {
                    out.push(path.clone());
                }
            }
        });
        out
    }

    /// Calls `f` on every node, parents before children, left to right.
    pub fn visit(&self, f: &mut impl FnMut(&Expr)) {
        f(self);
        match self {
            Expr::Column(_) | Expr::Literal(_) => {}
            Expr::Binary { left, right, .. } => {
                left.visit(f);
                right.visit(f);
            }
            Expr::Not(e)
            | Expr::Negative(e)
            | Expr::IsNull(e)
            | Expr::IsNotNull(e)
            | Expr::IsTrue(e)
            | Expr::IsFalse(e)
            | Expr::IsNotTrue(e)
            | Expr::IsNotFalse(e)
            | Expr::Cast { expr: e, .. }
            | Expr::TryCast { expr: e, .. } => e.visit(f),
            Expr::InList { expr, list, .. } => {
                expr.visit(f);
                for item in list {
                    item.visit(f);
                }
            }
            Expr::Between { expr, low, high, .. } => {
                expr.visit(f);
                low.visit(f);
                high.visit(f);
            }
            Expr::Like { expr, pattern, .. } => {
                expr.visit(f);
                pattern.visit(f);
            }
            Expr::Function { args, .. } => {
                for a in args {
                    a.visit(f);
                }
            }
        }
    }

    /// Binding power of this node when printed; used to decide where parentheses go.
    fn precedence(&self) -> u8 {
        match self {
            Expr::Binary { op, .. } => op.precedence(),
            Expr::Not(_) => prec::NOT,
            Expr::IsNull(_)
            | Expr::IsNotNull(_)
            | Expr::IsTrue(_)
            | Expr::IsFalse(_)
            | Expr::IsNotTrue(_)
            | Expr::IsNotFalse(_) => prec::IS,
            Expr::InList { .. } | Expr::Between { .. } | Expr::Like { .. } => prec::CMP,
            Expr::Negative(_) => prec::UNARY,
            Expr::Column(_) | Expr::Literal(_) | Expr::Cast { .. } | Expr::TryCast { .. } | Expr::Function { .. } => {
                prec::ATOM
            }
        }
    }
}

/// Writes `e`, parenthesized when its binding power is below `min`.
fn write_child(f: &mut Formatter<'_>, e: &Expr, min: u8) -> fmt::Result {
    if e.precedence() < min {
        write!(f, "({e})")
    } else {
        write!(f, "{e}")
    }
}

impl Display for Expr {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            Expr::Column(path) => {
                for (i, part) in path.iter().enumerate() {
                    if i > 0 {
                        f.write_char('.')?;
                    }
                    write_ident(f, part)?;
                }
                Ok(())
            }
            Expr::Literal(v) => write!(f, "{v}"),
            Expr::Binary { op, left, right } => {
                let p = op.precedence();
                // Left-associative: an equal-precedence left child needs no parentheses, an
                // equal-precedence right child does.
                write_child(f, left, p)?;
                write!(f, " {} ", op.sql())?;
                write_child(f, right, p + 1)
            }
            Expr::Not(e) => {
                f.write_str("NOT ")?;
                write_child(f, e, prec::NOT)
            }
            Expr::Negative(e) => {
                // `-5` would read back as the literal -5 and `--` starts a comment, so
                // literals and nested negations are parenthesized.
                if matches!(**e, Expr::Literal(_) | Expr::Negative(_)) {
                    write!(f, "-({e})")
                } else {
                    f.write_char('-')?;
                    write_child(f, e, prec::UNARY)
                }
            }
            Expr::IsNull(e) => postfix(f, e, "IS NULL"),
            Expr::IsNotNull(e) => postfix(f, e, "IS NOT NULL"),
            Expr::IsTrue(e) => postfix(f, e, "IS TRUE"),
            Expr::IsFalse(e) => postfix(f, e, "IS FALSE"),
            Expr::IsNotTrue(e) => postfix(f, e, "IS NOT TRUE"),
            Expr::IsNotFalse(e) => postfix(f, e, "IS NOT FALSE"),
            Expr::InList { expr, list, negated } => {
                write_child(f, expr, prec::CMP)?;
                f.write_str(if *negated { " NOT IN (" } else { " IN (" })?;
                for (i, item) in list.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{item}")?;
                }
                f.write_char(')')
            }
            Expr::Between {
                expr,
                low,
                high,
                negated,
            } => {
                write_child(f, expr, prec::CMP)?;
                f.write_str(if *negated { " NOT BETWEEN " } else { " BETWEEN " })?;
                write_child(f, low, prec::CMP + 1)?;
                f.write_str(" AND ")?;
                write_child(f, high, prec::CMP + 1)
            }
            Expr::Like {
                expr,
                pattern,
                negated,
                case_insensitive,
                escape,
            } => {
                write_child(f, expr, prec::CMP)?;
                f.write_str(match (negated, case_insensitive) {
                    (false, false) => " LIKE ",
                    (true, false) => " NOT LIKE ",
                    (false, true) => " ILIKE ",
                    (true, true) => " NOT ILIKE ",
                })?;
                write_child(f, pattern, prec::CMP + 1)?;
                if let Some(c) = escape {
                    f.write_str(" ESCAPE ")?;
                    write_string(f, &c.to_string())?;
                }
                Ok(())
            }
            Expr::Cast { expr, to } => write!(f, "CAST({expr} AS {})", SqlType(to)),
            Expr::TryCast { expr, to } => write!(f, "TRY_CAST({expr} AS {})", SqlType(to)),
            Expr::Function { name, args } => {
                // `x[i]` and `x['f']` parse into these two calls; print them the same way.
                if let [base, index] = args.as_slice() {
                    let is_name = matches!(index, Expr::Literal(ScalarValue::Utf8(_)));
                    if (name == "array_element" && !is_name) || (name == "get_field" && is_name) {
                        write_child(f, base, prec::ATOM)?;
                        return write!(f, "[{index}]");
                    }
                }
                write_ident(f, name)?;
                f.write_char('(')?;
                for (i, a) in args.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{a}")?;
                }
                f.write_char(')')
            }
        }
    }
}

fn postfix(f: &mut Formatter<'_>, e: &Expr, suffix: &str) -> fmt::Result {
    write_child(f, e, prec::IS)?;
    write!(f, " {suffix}")
}

/// Words that cannot be used as bare column names (they are keywords in expression position).
pub(crate) const RESERVED: &[&str] = &[
    "and",
    "or",
    "not",
    "is",
    "null",
    "true",
    "false",
    "in",
    "between",
    "like",
    "ilike",
    "escape",
    "as",
    "cast",
    "try_cast",
    "date",
    "timestamp",
    "datetime",
];

pub(crate) fn is_reserved(word: &str) -> bool {
    RESERVED.iter().any(|r| r.eq_ignore_ascii_case(word))
}

pub(crate) fn is_ident_start(c: char) -> bool {
    c == '_' || c.is_alphabetic()
}

pub(crate) fn is_ident_continue(c: char) -> bool {
    c == '_' || c == '$' || c.is_alphanumeric()
}

/// `true` when `name` can be written without backquotes.
fn is_plain_ident(name: &str) -> bool {
    let mut chars = name.chars();
    match chars.next() {
        Some(c) if is_ident_start(c) => {}
        _ => return false,
    }
    chars.all(is_ident_continue) && !is_reserved(name)
}

fn write_ident(f: &mut Formatter<'_>, name: &str) -> fmt::Result {
    if is_plain_ident(name) {
        f.write_str(name)
    } else {
        write!(f, "`{}`", name.replace('`', "``"))
    }
}

fn write_string(f: &mut Formatter<'_>, s: &str) -> fmt::Result {
    write!(f, "'{}'", s.replace('\'', "''"))
}

impl Display for ScalarValue {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            ScalarValue::Null => f.write_str("NULL"),
            ScalarValue::Boolean(true) => f.write_str("TRUE"),
            ScalarValue::Boolean(false) => f.write_str("FALSE"),
            ScalarValue::Int64(v) => write!(f, "{v}"),
            ScalarValue::UInt64(v) => write!(f, "{v}"),
            ScalarValue::Float64(v) => {
                if v.is_finite() {
                    // `{:?}` is the shortest text that reads back as the same f64 and always
                    // contains `.` or `e`, so it lexes as a float.
                    write!(f, "{v:?}")
                } else if v.is_nan() {
                    f.write_str("CAST('NaN' AS DOUBLE)")
                } else if *v > 0.0 {
                    f.write_str("CAST('inf' AS DOUBLE)")
                } else {
                    f.write_str("CAST('-inf' AS DOUBLE)")
                }
            }
            ScalarValue::Utf8(s) => write_string(f, s),
            ScalarValue::Binary(b) => {
                f.write_str("X'")?;
                for byte in b {
                    write!(f, "{byte:02x}")?;
                }
                f.write_char('\'')
            }
            ScalarValue::Date32(days) => match date32_to_datetime(*days) {
                Some(dt) => write!(f, "DATE '{}'", dt.format("%Y-%m-%d")),
                None => write!(f, "CAST({days} AS DATE)"),
            },
            ScalarValue::Timestamp(ticks, unit) => write_timestamp(f, *ticks, *unit),
        }
    }
}

fn write_timestamp(f: &mut Formatter<'_>, ticks: i64, unit: TimeUnit) -> fmt::Result {
    let per_second: i64 = match unit {
        TimeUnit::Second => 1,
        TimeUnit::Millisecond => 1_000,
        TimeUnit::Microsecond => 1_000_000,
        TimeUnit::Nanosecond => 1_000_000_000,
    };
    let seconds = ticks.div_euclid(per_second);
    let fraction = ticks.rem_euclid(per_second);
    let Some(dt) = as_datetime::<TimestampSecondType>(seconds) else {
        return write!(f, "CAST({ticks} AS {})", SqlType(&DataType::Timestamp(unit, None)));
    };
    // `TIMESTAMP(p)` names the unit; plain `TIMESTAMP` is microseconds.
    let precision = match unit {
        TimeUnit::Second => "(0)",
        TimeUnit::Millisecond => "(3)",
        TimeUnit::Microsecond => "",
        TimeUnit::Nanosecond => "(9)",
    };
    write!(f, "TIMESTAMP{precision} '{}", dt.format("%Y-%m-%d %H:%M:%S"))?;
    match unit {
        TimeUnit::Nanosecond if fraction != 0 => write!(f, ".{fraction:09}")?,
        TimeUnit::Microsecond if fraction != 0 => write!(f, ".{fraction:06}")?,
        TimeUnit::Millisecond if fraction != 0 => write!(f, ".{fraction:03}")?,
        _ => {}
    }
    f.write_char('\'')
}

/// Renders an Arrow type as the SQL type name that [`crate::parse`] accepts in `CAST`, or the
/// Arrow name when SQL has no spelling for it.
pub struct SqlType<'a>(pub &'a DataType);

impl Display for SqlType<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self.0 {
            DataType::Null => f.write_str("NULL"),
            DataType::Boolean => f.write_str("BOOLEAN"),
            DataType::Int8 => f.write_str("TINYINT"),
            DataType::Int16 => f.write_str("SMALLINT"),
            DataType::Int32 => f.write_str("INT"),
            DataType::Int64 => f.write_str("BIGINT"),
            DataType::UInt8 => f.write_str("TINYINT UNSIGNED"),
            DataType::UInt16 => f.write_str("SMALLINT UNSIGNED"),
            DataType::UInt32 => f.write_str("INT UNSIGNED"),
            DataType::UInt64 => f.write_str("BIGINT UNSIGNED"),
            DataType::Float16 => f.write_str("HALF"),
            DataType::Float32 => f.write_str("FLOAT"),
            DataType::Float64 => f.write_str("DOUBLE"),
            DataType::Utf8 => f.write_str("STRING"),
            DataType::LargeUtf8 => f.write_str("LARGE_STRING"),
            DataType::Utf8View => f.write_str("STRING_VIEW"),
            DataType::Binary => f.write_str("BINARY"),
            DataType::LargeBinary => f.write_str("LARGE_BINARY"),
            DataType::BinaryView => f.write_str("BINARY_VIEW"),
            DataType::FixedSizeBinary(n) => write!(f, "FIXED_SIZE_BINARY({n})"),
            DataType::Date32 => f.write_str("DATE"),
            DataType::Date64 => f.write_str("DATE64"),
            DataType::Timestamp(unit, tz) => {
                match unit {
                    TimeUnit::Second => f.write_str("TIMESTAMP(0)")?,
                    TimeUnit::Millisecond => f.write_str("TIMESTAMP(3)")?,
                    TimeUnit::Microsecond => f.write_str("TIMESTAMP")?,
                    TimeUnit::Nanosecond => f.write_str("TIMESTAMP(9)")?,
                }
                match tz {
                    Some(tz) => {
                        f.write_str(" WITH TIME ZONE ")?;
                        write_string(f, tz)
                    }
                    None => Ok(()),
                }
            }
            DataType::Decimal128(p, s) => write!(f, "DECIMAL({p}, {s})"),
            DataType::Decimal256(p, s) => write!(f, "DECIMAL256({p}, {s})"),
            other => write!(f, "{other}"),
        }
    }
}
