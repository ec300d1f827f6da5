//! Thin PyO3 glue exposing lancelet to Python as `lancelet._native` and its submodules
//! (one per concern of the facade: see [`_native`]).
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
mod kmeans;
mod loader;
mod merge;
mod merge_columns;
mod namespace;
mod operations;
mod options;
mod runtime;
mod store;

use pyo3::prelude::*;

/// The dotted name of the extension module; its submodules are `lancelet._native.<name>`.
const MODULE: &str = "lancelet._native";

/// The native extension module. It holds what every part shares (the version, the runtime's
/// worker threads, `BatchStream`); each concern of the facade has a submodule of its own:
///
/// - `file`: single Lance files (`FileReader`, `FileWriter`);
/// - `dataset`: the `Dataset` handle and the operations on one (branches, blobs, merges,
///   UDF backfills, commit operations, fragment helpers, as-of versions, SQL conditions);
/// - `index`: secondary indexes, vector and full-text search;
/// - `loader`: training reads;
/// - `storage`: object stores, local paths and what namespace catalogs take from the core.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    runtime::init(m)?;
    hooks::init(m)?;
    arrow_ffi::init(m)?;
    submodule(m, "file", file::init)?;
    submodule(m, "dataset", |m| {
        dataset::init(m)?;
        condition::init(m)?;
        branches::init(m)?;
        blob::init(m)?;
        merge::init(m)?;
        merge_columns::init(m)?;
        asof::init(m)?;
        backfill::init(m)?;
        operations::init(m)?;
        fragment_ops::init(m)
    })?;
    submodule(m, "index", |m| {
        index::init(m)?;
        kmeans::init(m)?;
        fts::init(m)
    })?;
    submodule(m, "loader", loader::init)?;
    submodule(m, "storage", |m| {
        store::init(m)?;
        namespace::init(m)
    })?;
    Ok(())
}

/// Adds submodule `lancelet._native.<name>`, filled by `init`, as attribute `name` of
/// `parent` and in `sys.modules` under its dotted name, so that `import
/// lancelet._native.<name>` and `from lancelet._native import <name>` both find it. The
/// submodule is named with the dotted name before `init` runs: its functions take their
/// `__module__` from it (pickles and error messages name them by it).
///
/// An attribute rather than `add_submodule`: the submodules stay out of `_native.__all__`,
/// which lists what the top module itself offers.
fn submodule<'py>(
    parent: &Bound<'py, PyModule>,
    name: &str,
    init: impl FnOnce(&Bound<'py, PyModule>) -> PyResult<()>,
) -> PyResult<()> {
    let py = parent.py();
    let qualified = format!("{MODULE}.{name}");
    let module = PyModule::new(py, &qualified)?;
    init(&module)?;
    parent.setattr(name, &module)?;
    py.import("sys")?.getattr("modules")?.set_item(&qualified, &module)?;
    Ok(())
}
