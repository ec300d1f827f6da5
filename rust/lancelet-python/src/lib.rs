//! Thin PyO3 glue exposing lancelet to Python as `lancelet._native`.
//!
//! Logic lives in the core crates; this crate converts arguments, releases the GIL
//! around every blocking call (through [`runtime::block_on`]), maps errors to the
//! exception classes of `lancelet.errors` ([`errors`]) and moves Arrow data across the
//! C data interface without copying ([`arrow_ffi`]).

mod arrow_ffi;
mod asof;
mod backfill;
mod blob;
mod branches;
mod catalog;
mod condition;
mod dataset;
mod errors;
mod file;
mod fragment_meta;
mod fragment_ops;
mod fts;
mod hooks;
mod index;
mod index_meta;
mod loader;
mod merge;
mod merge_columns;
mod namespace;
mod operations;
mod options;
mod runtime;
mod store;

use pyo3::prelude::*;

/// The native extension module.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    runtime::init(m)?;
    hooks::init(m)?;
    file::init(m)?;
    dataset::init(m)?;
    arrow_ffi::init(m)?;
    condition::init(m)?;
    index::init(m)?;
    branches::init(m)?;
    blob::init(m)?;
    merge::init(m)?;
    merge_columns::init(m)?;
    asof::init(m)?;
    backfill::init(m)?;
    operations::init(m)?;
    fragment_ops::init(m)?;
    fts::init(m)?;
    loader::init(m)?;
    store::init(m)?;
    namespace::init(m)?;
    Ok(())
}
