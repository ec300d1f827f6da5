//! `LanceOperation` kinds beyond Append/Overwrite committed from Python
//! (`ds_commit_operation`), the transaction of a version as a dict (`ds_read_transaction`)
//! and `LanceFragment.delete` (`ds_fragment_delete`). The logic is
//! `lancelet_dataset::commit::user_ops`; this converts dicts.

use std::collections::HashMap;

use lancelet_dataset::commit::user_ops::{depth_first_ids, fields_with_ids, UserOperation};
use lancelet_dataset::proto::pbfile;
use lancelet_dataset::table::pb;
use lancelet_dataset::table::pb::transaction::Operation;
use lancelet_dataset::{open_uri, Dataset, VersionRef};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use crate::arrow_ffi::schema_capsule;
use crate::dataset::{wrap, PyDataset};
use crate::errors;
use crate::fragment_meta::{fragment_dict, fragment_from_dict};
use crate::index_meta::{index_dict, index_list, uuid_bytes};
use crate::options::py_options;
use crate::runtime::block_on;

fn get<'py>(d: &Bound<'py, PyDict>, key: &str) -> PyResult<Option<Bound<'py, PyAny>>> {
    Ok(d.get_item(key)?.filter(|v| !v.is_none()))
}

fn need<'py>(d: &Bound<'py, PyDict>, key: &str, kind: &str) -> PyResult<Bound<'py, PyAny>> {
    get(d, key)?.ok_or_else(|| errors::invalid(d.py(), format!("{kind} needs {key:?}")))
}

fn extract<'py, T: pyo3::conversion::FromPyObjectOwned<'py>>(
    v: &Bound<'py, PyAny>,
    key: &str,
    kind: &str,
) -> PyResult<T> {
    v.extract::<T>()
        .map_err(|_| errors::invalid(v.py(), format!("{kind}: {key:?} has the wrong type ({v})")))
}

fn fragments(d: &Bound<'_, PyDict>, key: &str, kind: &str) -> PyResult<Vec<pb::DataFragment>> {
    let Some(list) = get(d, key)? else {
        return Ok(Vec::new());
    };
    let items = list
        .try_iter()
        .map_err(|_| errors::invalid(d.py(), format!("{kind}: {key:?} must be a list of fragment metadata")))?;
    items.map(|f| fragment_from_dict(&f?)).collect()
}

fn ids(d: &Bound<'_, PyDict>, key: &str, kind: &str) -> PyResult<Vec<u64>> {
    match get(d, key)? {
        None => Ok(Vec::new()),
        Some(v) => extract(&v, key, kind),
    }
}

/// A schema given as `schema` (an Arrow schema) and `field_ids` (depth-first ids, or None
/// for 0.. in that order).
fn schema(py: Python<'_>, d: &Bound<'_, PyDict>, kind: &str) -> PyResult<Vec<pbfile::Field>> {
    let s = crate::file::import_schema(py, &need(d, "schema", kind)?)?;
    let field_ids: Option<Vec<i32>> = match get(d, "field_ids")? {
        None => None,
        Some(v) => Some(extract(&v, "field_ids", kind)?),
    };
    fields_with_ids(&s, field_ids.as_deref()).map_err(|e| errors::to_py(py, e))
}

fn update_map(d: &Bound<'_, PyDict>, key: &str, kind: &str) -> PyResult<Option<pb::transaction::UpdateMap>> {
    let Some(m) = get(d, key)? else { return Ok(None) };
    let m = m
        .cast::<PyDict>()
        .map_err(|_| errors::invalid(d.py(), format!("{kind}: {key:?} must be a dict")))?;
    let updates: HashMap<String, Option<String>> = match get(m, "updates")? {
        None => HashMap::new(),
        Some(u) => extract(&u, "updates", kind)?,
    };
    let replace: bool = match get(m, "replace")? {
        None => false,
        Some(r) => extract(&r, "replace", kind)?,
    };
    let mut entries: Vec<pb::transaction::UpdateMapEntry> = updates
        .into_iter()
        .map(|(key, value)| pb::transaction::UpdateMapEntry { key, value })
        .collect();
    entries.sort_by(|a, b| a.key.cmp(&b.key));
    Ok(Some(pb::transaction::UpdateMap {
        update_entries: entries,
        replace,
    }))
}

fn data_file(d: &Bound<'_, PyAny>, kind: &str) -> PyResult<pb::DataFile> {
    // A data file travels as a one-file fragment dict (the checks live there).
    let py = d.py();
    let frag = PyDict::new(py);
    frag.set_item("id", 0)?;
    frag.set_item("physical_rows", 1)?;
    frag.set_item("files", PyList::new(py, [d])?)?;
    let mut f = fragment_from_dict(frag.as_any())?;
    f.files
        .pop()
        .ok_or_else(|| errors::invalid(py, format!("{kind}: a data file is missing")))
}

fn user_operation(py: Python<'_>, kind: &str, d: &Bound<'_, PyDict>) -> PyResult<UserOperation> {
    Ok(match kind {
        "Delete" => UserOperation::Delete {
            updated_fragments: fragments(d, "updated_fragments", kind)?,
            deleted_fragment_ids: ids(d, "deleted_fragment_ids", kind)?,
            predicate: match get(d, "predicate")? {
                None => String::new(),
                Some(p) => extract(&p, "predicate", kind)?,
            },
        },
        "Update" => UserOperation::Update {
            removed_fragment_ids: ids(d, "removed_fragment_ids", kind)?,
            updated_fragments: fragments(d, "updated_fragments", kind)?,
            new_fragments: fragments(d, "new_fragments", kind)?,
            fields_modified: match get(d, "fields_modified")? {
                None => Vec::new(),
                Some(v) => extract(&v, "fields_modified", kind)?,
            },
        },
        "Merge" => UserOperation::Merge {
            fragments: fragments(d, "fragments", kind)?,
            schema: schema(py, d, kind)?,
        },
        "Project" => UserOperation::Project {
            schema: schema(py, d, kind)?,
        },
        "Restore" => UserOperation::Restore {
            version: extract(&need(d, "version", kind)?, "version", kind)?,
        },
        "DataReplacement" => {
            let mut out = Vec::new();
            for item in need(d, "replacements", kind)?.try_iter()? {
                let (id, file): (u64, Bound<'_, PyAny>) = extract(&item?, "replacements", kind)?;
                out.push((id, data_file(&file, kind)?));
            }
            UserOperation::DataReplacement { replacements: out }
        }
        "Rewrite" => {
            let mut groups = Vec::new();
            for g in need(d, "groups", kind)?.try_iter()? {
                let g = g?;
                let g = g
                    .cast::<PyDict>()
                    .map_err(|_| errors::invalid(py, "Rewrite: a group must be a dict"))?;
                groups.push((
                    fragments(g, "old_fragments", kind)?,
                    fragments(g, "new_fragments", kind)?,
                ));
            }
            let mut rewritten_indices = Vec::new();
            if let Some(list) = get(d, "rewritten_indices")? {
                for r in list.try_iter()? {
                    let r = r?;
                    let r = r
                        .cast::<PyDict>()
                        .map_err(|_| errors::invalid(py, "Rewrite: a rewritten index must be a dict"))?;
                    let old: String = extract(&need(r, "old_id", kind)?, "old_id", kind)?;
                    let new: String = extract(&need(r, "new_id", kind)?, "new_id", kind)?;
                    let type_url: String = match get(r, "new_details_type_url")? {
                        None => String::new(),
                        Some(v) => extract(&v, "new_details_type_url", kind)?,
                    };
                    let value: Vec<u8> = match get(r, "new_details_value")? {
                        None => Vec::new(),
                        Some(v) => extract(&v, "new_details_value", kind)?,
                    };
                    let version: u32 = match get(r, "new_index_version")? {
                        None => 0,
                        Some(v) => extract(&v, "new_index_version", kind)?,
                    };
                    rewritten_indices.push(pb::transaction::rewrite::RewrittenIndex {
                        old_id: Some(uuid_bytes(py, &old)?),
                        new_id: Some(uuid_bytes(py, &new)?),
                        new_index_details: (!type_url.is_empty()).then_some(prost_types::Any { type_url, value }),
                        new_index_version: version,
                        new_index_files: Vec::new(),
                    });
                }
            }
            UserOperation::Rewrite {
                groups,
                rewritten_indices,
            }
        }
        "CreateIndex" => UserOperation::CreateIndex {
            new_indices: match get(d, "new_indices")? {
                None => Vec::new(),
                Some(v) => index_list(&v)?,
            },
            removed_indices: match get(d, "removed_indices")? {
                None => Vec::new(),
                Some(v) => index_list(&v)?,
            },
        },
        "UpdateConfig" => UserOperation::UpdateConfig {
            config: update_map(d, "config_updates", kind)?,
            table_metadata: update_map(d, "table_metadata_updates", kind)?,
            schema_metadata: update_map(d, "schema_metadata_updates", kind)?,
        },
        other => {
            return Err(errors::make(
                py,
                errors::Kind::Unsupported,
                format!("lancelet cannot commit {other} operations"),
            ))
        }
    })
}

py_options! {
    /// `ds_commit_operation`'s keyword options: where and how the operation commits.
    struct CommitOperationOptions {
        /// The version the operation was planned at (latest when None).
        read_version: Option<u64> = None,
        /// Transaction properties.
        properties: Option<HashMap<String, String>> = None,
        storage_options: Option<HashMap<String, String>> = None,
        /// Conflict retries (the dataset's default when None).
        max_retries: Option<u32> = None,
        commit_namespace: Option<crate::dataset::CommitNamespace> = None,
        commit_lock: Option<Py<PyAny>> = None,
    }
}

/// Commits operation `kind` (a `LanceOperation` class name) with arguments `args` to the
/// dataset at `uri`, planned at `read_version` (latest when None), with `properties` in
/// its transaction.
#[pyfunction]
#[pyo3(signature = (uri, kind, args, options=CommitOperationOptions::default()))]
fn ds_commit_operation(
    py: Python<'_>,
    uri: String,
    kind: &str,
    args: Bound<'_, PyDict>,
    options: CommitOperationOptions,
) -> PyResult<PyDataset> {
    let op = user_operation(py, kind, &args)?;
    let lock = crate::hooks::PyCommitLock::from_py(options.commit_lock.map(|l| l.into_bound(py)))?;
    let (read_version, max_retries) = (options.read_version, options.max_retries);
    let storage_options = options.storage_options.unwrap_or_default();
    let loc = open_uri(&uri, &storage_options).map_err(|e| errors::to_py(py, lancelet_dataset::Error::from(e)))?;
    let loc = crate::dataset::managed(loc, options.commit_namespace);
    let properties = options.properties.unwrap_or_default();
    let ds = block_on(py, async move {
        let ds = Dataset::open_at(&loc, read_version.map(VersionRef::Number))
            .await?
            .with_storage_options(storage_options);
        ds.set_commit_lock(lock);
        ds.commit_user_operation(op, properties, max_retries).await
    })?;
    Ok(wrap(ds))
}

/// The `Clone` operation `ds_commit_clone` commits: pylance's fields, read version, properties, storage options.
#[derive(FromPyObject)]
#[pyo3(from_item_all)]
struct CloneOperation {
    is_shallow: bool,
    ref_name: Option<String>,
    ref_version: u64,
    /// The source dataset's root.
    ref_path: String,
    branch_name: Option<String>,
    read_version: u64,
    #[pyo3(default)]
    properties: Option<HashMap<String, String>>,
    #[pyo3(default)]
    storage_options: Option<HashMap<String, String>>,
}

/// Commits a `Clone` to `uri` (a new location): a shallow clone of the dataset at
/// `ref_path`, version `ref_version`, its base named `ref_name`, recorded with
/// `read_version` and the operation as given (see `Dataset::commit_clone`).
#[pyfunction]
fn ds_commit_clone(py: Python<'_>, uri: String, clone: CloneOperation) -> PyResult<PyDataset> {
    let options = clone.storage_options.unwrap_or_default();
    let conv = |e: lancelet_dataset::table::Error| errors::to_py(py, lancelet_dataset::Error::from(e));
    let target = open_uri(&uri, &options).map_err(conv)?;
    let source = open_uri(&clone.ref_path, &options).map_err(conv)?;
    let (ref_version, read_version) = (clone.ref_version, clone.read_version);
    let op = pb::transaction::Clone {
        is_shallow: clone.is_shallow,
        ref_name: clone.ref_name,
        ref_version,
        ref_path: clone.ref_path,
        branch_name: clone.branch_name,
    };
    let properties = clone.properties.unwrap_or_default();
    let ds = block_on(py, async move {
        let src = Dataset::open_at(&source, Some(VersionRef::Number(ref_version)))
            .await?
            .with_storage_options(options);
        src.commit_clone(&target, op, read_version, properties).await
    })?;
    Ok(wrap(ds))
}

fn fragment_list<'py>(py: Python<'py>, frags: &[pb::DataFragment]) -> PyResult<Bound<'py, PyList>> {
    let items = frags
        .iter()
        .map(|f| fragment_dict(py, f))
        .collect::<PyResult<Vec<_>>>()?;
    PyList::new(py, items)
}

fn schema_items(
    py: Python<'_>,
    out: &Bound<'_, PyDict>,
    fields: &[pbfile::Field],
    metadata: &HashMap<String, bytes::Bytes>,
) -> PyResult<()> {
    let s = lancelet_file::schema::from_lance_fields(fields, metadata, "transaction schema")
        .map_err(|e| errors::to_py(py, lancelet_dataset::Error::from(e)))?;
    let s = lancelet_file::json::text_schema(&s).map_or(s, |t| t.as_ref().clone());
    out.set_item("schema", schema_capsule(py, &s)?)?;
    out.set_item("field_ids", depth_first_ids(fields))?;
    Ok(())
}

fn update_map_dict<'py>(py: Python<'py>, m: Option<&pb::transaction::UpdateMap>) -> PyResult<Bound<'py, PyAny>> {
    let Some(m) = m else {
        return Ok(py.None().into_bound(py));
    };
    let d = PyDict::new(py);
    let updates = PyDict::new(py);
    for e in &m.update_entries {
        updates.set_item(&e.key, e.value.as_deref())?;
    }
    d.set_item("updates", updates)?;
    d.set_item("replace", m.replace)?;
    Ok(d.into_any())
}

/// A transaction as a dict: `read_version`, `uuid`, `properties`, `kind` (the operation's
/// name) and the operation's fields.
pub(crate) fn transaction_dict<'py>(py: Python<'py>, txn: &pb::Transaction) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("read_version", txn.read_version)?;
    d.set_item("uuid", &txn.uuid)?;
    d.set_item("properties", txn.transaction_properties.clone())?;
    let op = txn.operation.as_ref();
    d.set_item("kind", lancelet_dataset::table::commit::operation_name(op))?;
    let none = HashMap::new();
    match op {
        Some(Operation::Append(a)) => d.set_item("fragments", fragment_list(py, &a.fragments)?)?,
        Some(Operation::Overwrite(o)) => {
            d.set_item("fragments", fragment_list(py, &o.fragments)?)?;
            schema_items(py, &d, &o.schema, &o.schema_metadata)?;
        }
        Some(Operation::Delete(x)) => {
            d.set_item("updated_fragments", fragment_list(py, &x.updated_fragments)?)?;
            d.set_item("deleted_fragment_ids", x.deleted_fragment_ids.clone())?;
            d.set_item("predicate", &x.predicate)?;
        }
        Some(Operation::Update(u)) => {
            d.set_item("removed_fragment_ids", u.removed_fragment_ids.clone())?;
            d.set_item("updated_fragments", fragment_list(py, &u.updated_fragments)?)?;
            d.set_item("new_fragments", fragment_list(py, &u.new_fragments)?)?;
            d.set_item("fields_modified", u.fields_modified.clone())?;
            d.set_item(
                "fields_for_preserving_frag_bitmap",
                u.fields_for_preserving_frag_bitmap.clone(),
            )?;
        }
        Some(Operation::Merge(m)) => {
            d.set_item("fragments", fragment_list(py, &m.fragments)?)?;
            schema_items(py, &d, &m.schema, &m.schema_metadata)?;
        }
        Some(Operation::Project(p)) => schema_items(py, &d, &p.schema, &none)?,
        Some(Operation::Restore(r)) => d.set_item("version", r.version)?,
        Some(Operation::Rewrite(r)) => {
            let groups = PyList::empty(py);
            let flat = pb::transaction::rewrite::RewriteGroup {
                old_fragments: r.old_fragments.clone(),
                new_fragments: r.new_fragments.clone(),
            };
            let all = if r.groups.is_empty() && !flat.old_fragments.is_empty() {
                vec![flat]
            } else {
                r.groups.clone()
            };
            for g in &all {
                let x = PyDict::new(py);
                x.set_item("old_fragments", fragment_list(py, &g.old_fragments)?)?;
                x.set_item("new_fragments", fragment_list(py, &g.new_fragments)?)?;
                groups.append(x)?;
            }
            d.set_item("groups", groups)?;
            let rewritten = PyList::empty(py);
            for ri in &r.rewritten_indices {
                let x = PyDict::new(py);
                let id = |u: &Option<pb::Uuid>| -> Option<String> {
                    let raw: [u8; 16] = u.as_ref()?.uuid.as_ref().try_into().ok()?;
                    Some(uuid::Uuid::from_bytes(raw).hyphenated().to_string())
                };
                x.set_item("old_id", id(&ri.old_id))?;
                x.set_item("new_id", id(&ri.new_id))?;
                let (url, value) = ri
                    .new_index_details
                    .as_ref()
                    .map(|a| (a.type_url.clone(), a.value.clone()))
                    .unwrap_or_default();
                x.set_item("new_details_type_url", url)?;
                x.set_item("new_details_value", pyo3::types::PyBytes::new(py, &value))?;
                x.set_item("new_index_version", ri.new_index_version)?;
                rewritten.append(x)?;
            }
            d.set_item("rewritten_indices", rewritten)?;
        }
        Some(Operation::CreateIndex(c)) => {
            let list = |v: &[pb::IndexMetadata]| -> PyResult<Bound<'py, PyList>> {
                let items = v.iter().map(|i| index_dict(py, i)).collect::<PyResult<Vec<_>>>()?;
                PyList::new(py, items)
            };
            d.set_item("new_indices", list(&c.new_indices)?)?;
            d.set_item("removed_indices", list(&c.removed_indices)?)?;
        }
        Some(Operation::DataReplacement(r)) => {
            let list = PyList::empty(py);
            for g in &r.replacements {
                let frag = pb::DataFragment {
                    files: g.new_file.iter().cloned().collect(),
                    ..Default::default()
                };
                let fd = fragment_dict(py, &frag)?;
                let file = fd.get_item("files")?.and_then(|f| f.get_item(0).ok());
                list.append((g.fragment_id, file))?;
            }
            d.set_item("replacements", list)?;
        }
        Some(Operation::UpdateConfig(u)) => {
            d.set_item("config_updates", update_map_dict(py, u.config_updates.as_ref())?)?;
            d.set_item(
                "table_metadata_updates",
                update_map_dict(py, u.table_metadata_updates.as_ref())?,
            )?;
            d.set_item(
                "schema_metadata_updates",
                update_map_dict(py, u.schema_metadata_updates.as_ref())?,
            )?;
        }
        Some(Operation::Clone(c)) => {
            d.set_item("is_shallow", c.is_shallow)?;
            d.set_item("ref_name", c.ref_name.as_deref())?;
            d.set_item("ref_version", c.ref_version)?;
            d.set_item("ref_path", &c.ref_path)?;
            d.set_item("branch_name", c.branch_name.as_deref())?;
        }
        _ => {}
    }
    Ok(d)
}

/// The transaction that created `version` of `d` (None: `d`'s version) as a dict, or None
/// when there is none.
#[pyfunction]
#[pyo3(signature = (d, version=None))]
fn ds_read_transaction<'py>(
    py: Python<'py>,
    d: &Bound<'py, PyDataset>,
    version: Option<u64>,
) -> PyResult<Option<Bound<'py, PyDict>>> {
    let ds = d.get().inner.clone();
    let txn = block_on(py, async move { ds.read_transaction(version).await })?;
    txn.map(|t| transaction_dict(py, &t)).transpose()
}

/// Deletes the rows of fragment `id` matching `predicate` without committing: the fragment
/// dict with its new deletion file, or None when no row would be left.
#[pyfunction]
fn ds_fragment_delete<'py>(
    py: Python<'py>,
    d: &Bound<'py, PyDataset>,
    id: u64,
    predicate: String,
) -> PyResult<Option<Bound<'py, PyDict>>> {
    let ds = d.get().inner.clone();
    let frag = block_on(py, async move { ds.fragment_delete(id, &predicate).await })?;
    frag.map(|f| fragment_dict(py, &f)).transpose()
}

/// Replaces the metadata of tag `name` (the whole map).
#[pyfunction]
fn ds_replace_tag_metadata(
    py: Python<'_>,
    d: &Bound<'_, PyDataset>,
    name: String,
    metadata: std::collections::BTreeMap<String, String>,
) -> PyResult<()> {
    let ds = d.get().inner.clone();
    block_on(py, async move { ds.replace_tag_metadata(&name, &metadata).await })
}

/// Registers the functions.
pub fn init(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(ds_commit_operation, m)?)?;
    m.add_function(wrap_pyfunction!(ds_commit_clone, m)?)?;
    m.add_function(wrap_pyfunction!(ds_read_transaction, m)?)?;
    m.add_function(wrap_pyfunction!(ds_fragment_delete, m)?)?;
    m.add_function(wrap_pyfunction!(ds_replace_tag_metadata, m)?)?;
    Ok(())
}
