//! Index entries (`IndexMetadata`) as Python dicts, for the `Index` objects of
//! `LanceOperation.CreateIndex` and of the distributed index builds
//! (`create_index_uncommitted`, `merge_existing_index_segments`, ...).
//!
//! The dict has the fields of pylance's `lance.dataset.Index`, in wire form: `uuid` (the
//! hyphenated string), `name`, `fields`, `dataset_version`, `fragment_ids` (a list),
//! `index_version`, `created_at` (milliseconds since the epoch, or None), `base_id`,
//! `files` (`[(path, size_bytes)]`, or None), `details` (`(type_url, value)`, or None) and
//! `covering_fields`. Dicts come from users, so reading one checks every field.

use lancelet_dataset::table::indices::{encode_fragment_bitmap, fragment_bitmap, uuid_string};
use lancelet_dataset::table::pb;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

use crate::errors;

fn bad(py: Python<'_>, msg: impl Into<String>) -> PyErr {
    errors::invalid(py, format!("invalid index metadata: {}", msg.into()))
}

fn item<'py>(d: &Bound<'py, PyDict>, key: &str) -> PyResult<Option<Bound<'py, PyAny>>> {
    Ok(d.get_item(key)?.filter(|v| !v.is_none()))
}

fn get<'py, T: FromPyObjectOwned<'py>>(d: &Bound<'py, PyDict>, key: &str) -> PyResult<Option<T>> {
    match item(d, key)? {
        None => Ok(None),
        Some(v) => v
            .extract::<T>()
            .map(Some)
            .map_err(|_| bad(d.py(), format!("{key:?} has the wrong type ({v})"))),
    }
}

/// A uuid string as the 16 bytes an entry stores (`ValueError` when it is not one).
pub fn uuid_bytes(py: Python<'_>, s: &str) -> PyResult<pb::Uuid> {
    let u = uuid::Uuid::parse_str(s).map_err(|e| errors::invalid(py, format!("invalid index uuid {s:?}: {e}")))?;
    Ok(pb::Uuid {
        uuid: u.as_bytes().to_vec().into(),
    })
}

/// Reads an index entry from a dict (see the module docs).
pub fn index_from_dict(d: &Bound<'_, PyAny>) -> PyResult<pb::IndexMetadata> {
    let py = d.py();
    let d = d.cast::<PyDict>().map_err(|_| bad(py, "expected a dict"))?;
    let uuid: String = get(d, "uuid")?.ok_or_else(|| bad(py, "no uuid"))?;
    let fragments: Vec<u32> = get(d, "fragment_ids")?.unwrap_or_default();
    let files: Option<Vec<(String, u64)>> = get(d, "files")?;
    let details: Option<(String, Vec<u8>)> = get(d, "details")?;
    Ok(pb::IndexMetadata {
        uuid: Some(uuid_bytes(py, &uuid)?),
        fields: get(d, "fields")?.unwrap_or_default(),
        name: get(d, "name")?.unwrap_or_default(),
        dataset_version: get(d, "dataset_version")?.unwrap_or(0),
        fragment_bitmap: encode_fragment_bitmap(&fragments.into_iter().collect()).into(),
        index_details: details.map(|(type_url, value)| prost_types::Any { type_url, value }),
        index_version: Some(get(d, "index_version")?.unwrap_or(0)),
        created_at: get(d, "created_at")?,
        base_id: get(d, "base_id")?,
        files: files
            .unwrap_or_default()
            .into_iter()
            .map(|(path, size_bytes)| pb::IndexFile { path, size_bytes })
            .collect(),
        covering_fields: get(d, "covering_fields")?.unwrap_or_default(),
    })
}

/// An index entry as a dict (see the module docs).
pub fn index_dict<'py>(py: Python<'py>, idx: &pb::IndexMetadata) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("uuid", uuid_string(idx).map_err(|e| bad(py, e))?)?;
    d.set_item("name", &idx.name)?;
    d.set_item("fields", idx.fields.clone())?;
    d.set_item("dataset_version", idx.dataset_version)?;
    let bitmap = fragment_bitmap(idx).map_err(|e| bad(py, e))?;
    d.set_item("fragment_ids", bitmap.iter().collect::<Vec<u32>>())?;
    d.set_item("index_version", idx.index_version.unwrap_or(0))?;
    d.set_item("created_at", idx.created_at)?;
    d.set_item("base_id", idx.base_id)?;
    if idx.files.is_empty() {
        d.set_item("files", py.None())?;
    } else {
        let files: Vec<(String, u64)> = idx.files.iter().map(|f| (f.path.clone(), f.size_bytes)).collect();
        d.set_item("files", files)?;
    }
    match &idx.index_details {
        None => d.set_item("details", py.None())?,
        Some(a) => d.set_item("details", (&a.type_url, PyBytes::new(py, &a.value)))?,
    }
    d.set_item("covering_fields", idx.covering_fields.clone())?;
    Ok(d)
}

/// Reads a list of index dicts.
pub fn index_list(v: &Bound<'_, PyAny>) -> PyResult<Vec<pb::IndexMetadata>> {
    let py = v.py();
    let items = v.try_iter().map_err(|_| bad(py, "expected a list of index metadata"))?;
    items.map(|x| index_from_dict(&x?)).collect()
}
