//! The error type of this crate.

use arrow_schema::ArrowError;

/// Everything that can go wrong while parsing, binding or evaluating an expression.
///
/// `Display` is written for the end user who typed the SQL: it names the offending column,
/// operator, function or position and, where it helps, what would have been accepted.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The SQL text is not a valid expression.
    #[error("SQL syntax error at position {position}: {message}")]
    Parse {
        /// What was expected and what was found instead.
        message: String,
        /// Character offset (0-based) into the SQL text where the problem was detected.
        position: usize,
    },

    /// A column (or a field of a struct column) does not exist.
    #[error("no column named {name}; available columns: {}", list_or_none(.available))]
    UnknownColumn {
        /// The column path as written, e.g. `s.b` or `` `my col` ``.
        name: String,
        /// The paths that would have been accepted at that level of the path (top-level column
        /// names, or `parent.field` paths when a struct field was missing).
        available: Vec<String>,
    },

    /// An unquoted column name matched several columns that differ only by case.
    #[error("column name {name} is ambiguous: it matches {} (quote the exact name with backticks)", .candidates.join(", "))]
    AmbiguousColumn {
        /// The column name as written.
        name: String,
        /// The exact names it matched case-insensitively.
        candidates: Vec<String>,
    },

    /// A function name that this implementation does not know.
    #[error("unknown function {name}(); supported functions: {}", .supported.join(", "))]
    UnknownFunction {
        /// The function name as written (lower-cased).
        name: String,
        /// The functions that are available.
        supported: Vec<String>,
    },

    /// An operator, function or comparison was applied to types it does not accept.
    #[error("type error: {0}")]
    Type(String),

    /// Integer division or remainder by zero.
    #[error("division by zero")]
    DivideByZero,

    /// A function argument whose value the function rejects when it runs (for example
    /// `split_part` with field position 0, `chr` of a number that is no character, or a
    /// `repeat` / `lpad` result too large for a string).
    #[error("invalid argument: {0}")]
    InvalidArgument(String),

    /// A failure inside an Arrow kernel (for example a CAST of text that is not a number).
    #[error("arrow error: {0}")]
    Arrow(ArrowError),
}

fn list_or_none(names: &[String]) -> String {
    if names.is_empty() {
        "(none)".to_string()
    } else {
        names.join(", ")
    }
}

impl From<ArrowError> for Error {
    fn from(e: ArrowError) -> Self {
        match e {
            ArrowError::DivideByZero => Error::DivideByZero,
            other => Error::Arrow(other),
        }
    }
}

/// The result type of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_is_small() {
        // Keep `Result<ArrayRef>` cheap to move around.
        assert!(std::mem::size_of::<Error>() <= 64);
    }
}
