//! Errors of the index layer.
//!
//! Index files are untrusted input: every decoder reports damage as [`Error::Corrupt`]
//! naming the file (or codec) it was found in, and never panics.

use arrow_schema::ArrowError;

/// What can go wrong while building or reading an index.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An index file (or an encoded value inside one) is inconsistent.
    #[error("corrupt index file {file}: {message}")]
    Corrupt {
        /// The file, or the codec, the problem was found in.
        file: String,
        /// What was wrong.
        message: String,
    },
    /// A bad argument from the caller (wrong type, bad parameter, malformed query).
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    /// A valid request this implementation cannot serve (type, feature).
    #[error("unsupported: {0}")]
    Unsupported(String),
    /// An error of the Lance file layer (I/O, file-level corruption).
    #[error(transparent)]
    File(#[from] lancelet_file::Error),
    /// An error from an Arrow kernel.
    #[error(transparent)]
    Arrow(#[from] ArrowError),
}

/// Result alias for this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// A corrupt-input error found in `file`.
    pub fn corrupt(file: &str, message: impl Into<String>) -> Self {
        Self::Corrupt {
            file: file.to_string(),
            message: message.into(),
        }
    }
}
