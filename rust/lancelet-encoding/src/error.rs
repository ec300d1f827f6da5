//! Errors of the codec layer.

use arrow_schema::ArrowError;

/// What can go wrong while encoding or decoding a page.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Bytes or a description read from disk are inconsistent.
    #[error("corrupt page: {0}")]
    Corrupt(String),
    /// A valid encoding that this build does not implement.
    #[error("unsupported: {0}")]
    Unsupported(String),
    /// The caller passed data the encoder cannot take.
    #[error("invalid input: {0}")]
    InvalidInput(String),
    /// Arrow refused to build an array (wrapped so the source chain is kept).
    #[error(transparent)]
    Arrow(#[from] ArrowError),
}

/// Result alias for this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Shorthand for building a [`Error::Corrupt`] with a formatted message.
#[macro_export]
macro_rules! corrupt {
    ($($arg:tt)*) => { $crate::Error::Corrupt(format!($($arg)*)) };
}
