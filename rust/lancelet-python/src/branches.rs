//! Branches, clones, tags on branches and base paths: module functions of
//! `lancelet._native.dataset` taking a `Dataset` (see `python/lancelet/_branches.py`).
//!
//! A reference to a version arrives as a dict `{kind, branch, number, tag}`: kind `"latest"` (the
//! dataset's branch, newest version), `"version"` (`number` on the dataset's branch),
//! `"tag"` or `"branch"` (`branch`, None for main, at `number`, None for its newest).

use std::collections::HashMap;
use std::sync::Arc;

use lancelet_dataset::table::pb;
use lancelet_dataset::{open_uri, Dataset, VersionRef};
use pyo3::prelude::*;

use crate::dataset::{wrap, PyDataset, WriteOptions};
use crate::errors;
use crate::options::py_options;
use crate::runtime::block_on;

py_options! {
    /// A reference to a version (see the module header); a missing kind is `"latest"`.
    struct Reference {
        /// "latest", "version", "tag" or "branch".
        kind: String = "latest".to_string(),
        branch: Option<String> = None,
        number: Option<u64> = None,
        tag: Option<String> = None,
    }
}

impl Reference {
    /// The version it names (None: the newest of the dataset's branch).
    fn version_ref(self, py: Python<'_>) -> PyResult<Option<VersionRef>> {
        Ok(match self.kind.as_str() {
            "latest" => None,
            "version" => {
                Some(VersionRef::Number(self.number.ok_or_else(|| {
                    errors::invalid(py, "a version reference needs a number")
                })?))
            }
            "tag" => Some(VersionRef::Tag(
                self.tag
                    .ok_or_else(|| errors::invalid(py, "a tag reference needs a name"))?,
            )),
            "branch" => Some(VersionRef::Branch(self.branch, self.number)),
            other => return Err(errors::invalid(py, format!("unknown reference kind {other:?}"))),
        })
    }
}

fn ds(d: &Bound<'_, PyDataset>) -> Arc<Dataset> {
    d.get().inner.clone()
}

/// The branch a dataset is on (None: main).
#[pyfunction]
fn ds_branch(d: &Bound<'_, PyDataset>) -> Option<String> {
    d.get().inner.branch().map(str::to_string)
}

/// The dataset at a reference (any branch).
#[pyfunction]
fn ds_checkout_ref(py: Python<'_>, d: &Bound<'_, PyDataset>, reference: Reference) -> PyResult<PyDataset> {
    let r = reference.version_ref(py)?;
    let ds = ds(d);
    Ok(wrap(block_on(py, async move { ds.checkout(r).await })?))
}

/// Creates a branch from a reference; returns the dataset on it.
#[pyfunction]
fn ds_create_branch(
    py: Python<'_>,
    d: &Bound<'_, PyDataset>,
    name: String,
    reference: Reference,
) -> PyResult<PyDataset> {
    let r = reference.version_ref(py)?;
    let ds = ds(d);
    Ok(wrap(block_on(py, async move { ds.create_branch(&name, r).await })?))
}

/// `(name, parent_branch, parent_version, reference JSON)`.
type BranchRow = (String, Option<String>, u64, String);

/// `(name, parent_branch, parent_version, reference JSON)` of every branch.
#[pyfunction]
fn ds_list_branches(py: Python<'_>, d: &Bound<'_, PyDataset>) -> PyResult<Vec<BranchRow>> {
    let ds = ds(d);
    let list = block_on(py, async move { ds.list_branches().await })?;
    Ok(list
        .into_iter()
        .map(|b| (b.name, b.parent_branch, b.parent_version, b.raw.to_string()))
        .collect())
}

/// Deletes a branch.
#[pyfunction]
fn ds_delete_branch(py: Python<'_>, d: &Bound<'_, PyDataset>, name: String) -> PyResult<()> {
    let ds = ds(d);
    block_on(py, async move { ds.delete_branch(&name).await })
}

/// Replaces a branch's metadata (a JSON object).
#[pyfunction]
fn ds_replace_branch_metadata(
    py: Python<'_>,
    d: &Bound<'_, PyDataset>,
    name: String,
    metadata: String,
) -> PyResult<()> {
    let value: serde_json::Value =
        serde_json::from_str(&metadata).map_err(|e| errors::invalid(py, format!("metadata: {e}")))?;
    let ds = ds(d);
    block_on(py, async move { ds.replace_branch_metadata(&name, value).await })
}

/// `(name, version, manifest_size, branch, created_at, updated_at, metadata)` of every tag of the
/// dataset's root.
#[pyfunction]
#[allow(
    clippy::type_complexity,
    reason = "plain tuples mirror the Python values they convert"
)]
fn ds_tags(
    py: Python<'_>,
    d: &Bound<'_, PyDataset>,
) -> PyResult<
    Vec<(
        String,
        u64,
        u64,
        Option<String>,
        Option<String>,
        Option<String>,
        std::collections::BTreeMap<String, String>,
    )>,
> {
    let ds = ds(d);
    let tags = block_on(py, async move { ds.all_tags().await })?;
    Ok(tags
        .into_iter()
        .map(|t| {
            (
                t.name,
                t.version,
                t.manifest_size,
                t.branch,
                t.created_at,
                t.updated_at,
                t.metadata,
            )
        })
        .collect())
}

/// Creates or (`update`) moves a tag to `version` of `branch` (the dataset's own branch
/// unless `branch_given`).
#[pyfunction]
#[pyo3(signature = (d, name, version, branch_given, branch=None, update=false))]
fn ds_set_tag(
    py: Python<'_>,
    d: &Bound<'_, PyDataset>,
    name: String,
    version: u64,
    branch_given: bool,
    branch: Option<String>,
    update: bool,
) -> PyResult<()> {
    let ds = ds(d);
    block_on(py, async move {
        ds.set_tag(&name, branch, branch_given, version, update).await
    })
}

/// Deletes a tag of the dataset's root.
#[pyfunction]
fn ds_delete_tag(py: Python<'_>, d: &Bound<'_, PyDataset>, name: String) -> PyResult<()> {
    let ds = ds(d);
    block_on(py, async move { ds.delete_root_tag(&name).await })
}

/// Shallow (or deep) clone of a reference to `target`.
#[pyfunction]
#[pyo3(signature = (d, target, deep, reference, storage_options=None))]
fn ds_clone(
    py: Python<'_>,
    d: &Bound<'_, PyDataset>,
    target: String,
    deep: bool,
    reference: Reference,
    storage_options: Option<HashMap<String, String>>,
) -> PyResult<PyDataset> {
    let r = reference.version_ref(py)?;
    let loc = open_uri(&target, &storage_options.unwrap_or_default())
        .map_err(|e| errors::to_py(py, lancelet_dataset::Error::from(e)))?;
    let ds = ds(d);
    Ok(wrap(block_on(py, async move {
        if deep {
            ds.deep_clone(&loc, r).await
        } else {
            ds.shallow_clone(&loc, r).await
        }
    })?))
}

/// `(id, name, is_dataset_root, path)` of every base path of the version.
#[pyfunction]
fn ds_base_paths(d: &Bound<'_, PyDataset>) -> Vec<(u32, Option<String>, bool, String)> {
    d.get()
        .inner
        .base_paths()
        .iter()
        .map(|b| (b.id, b.name.clone(), b.is_dataset_root, b.path.clone()))
        .collect()
}

/// Registers base paths `(id, name, is_dataset_root, path)` (an UpdateBases commit).
#[pyfunction]
fn ds_add_bases(
    py: Python<'_>,
    d: &Bound<'_, PyDataset>,
    bases: Vec<(u32, Option<String>, bool, String)>,
) -> PyResult<PyDataset> {
    let new = bases
        .into_iter()
        .map(|(id, name, is_dataset_root, path)| pb::BasePath {
            id,
            name,
            is_dataset_root,
            path,
        })
        .collect();
    let ds = ds(d);
    Ok(wrap(block_on(py, async move { ds.add_bases(new).await })?))
}

/// Records storage options on an open dataset (for its base paths and branches).
#[pyfunction]
fn ds_with_storage_options(d: &Bound<'_, PyDataset>, options: HashMap<String, String>) -> PyDataset {
    wrap(d.get().inner.as_ref().clone().with_storage_options(options))
}

pub fn init(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(ds_branch, m)?)?;
    m.add_function(wrap_pyfunction!(ds_checkout_ref, m)?)?;
    m.add_function(wrap_pyfunction!(ds_create_branch, m)?)?;
    m.add_function(wrap_pyfunction!(ds_list_branches, m)?)?;
    m.add_function(wrap_pyfunction!(ds_delete_branch, m)?)?;
    m.add_function(wrap_pyfunction!(ds_replace_branch_metadata, m)?)?;
    m.add_function(wrap_pyfunction!(ds_tags, m)?)?;
    m.add_function(wrap_pyfunction!(ds_set_tag, m)?)?;
    m.add_function(wrap_pyfunction!(ds_delete_tag, m)?)?;
    m.add_function(wrap_pyfunction!(ds_clone, m)?)?;
    m.add_function(wrap_pyfunction!(ds_base_paths, m)?)?;
    m.add_function(wrap_pyfunction!(ds_add_bases, m)?)?;
    m.add_function(wrap_pyfunction!(ds_with_storage_options, m)?)?;
    init_writes(m)
}

/// Writes a dataset registering `initial_bases` `(id, name, is_dataset_root, path)` and
/// spreading new files over bases `targets` (names or paths; the dataset's root when empty)
/// or over every base (`target_all_bases`: whether the root is included).
#[pyfunction]
#[pyo3(signature = (uri, data, initial_bases, targets=Vec::new(), target_all_bases=None,
    options=WriteOptions::default()))]
fn write_with_bases(
    py: Python<'_>,
    uri: String,
    data: Bound<'_, PyAny>,
    initial_bases: Vec<(u32, Option<String>, bool, String)>,
    targets: Vec<String>,
    target_all_bases: Option<bool>,
    mut options: WriteOptions,
) -> PyResult<PyDataset> {
    let params = options.params(py)?;
    let bases = initial_bases
        .into_iter()
        .map(|(id, name, is_dataset_root, path)| pb::BasePath {
            id,
            name,
            is_dataset_root,
            path,
        })
        .collect();
    let options = options.storage_options.unwrap_or_default();
    let own = lancelet_dataset::table::bases::own_options(&options);
    let loc = open_uri(&uri, &own).map_err(|e| errors::to_py(py, lancelet_dataset::Error::from(e)))?;
    let reader = crate::dataset::import_stream(py, &data)?;
    let ds = crate::dataset::pull_on_this_thread(py, async move {
        lancelet_dataset::bases::write::write_with_bases(
            &loc,
            reader,
            params,
            bases,
            targets,
            target_all_bases,
            options,
        )
        .await
    })?;
    Ok(wrap(ds))
}

pub fn init_writes(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(write_with_bases, m)?)?;
    Ok(())
}
