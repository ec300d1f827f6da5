//! Fragment metadata as Python dicts, in the shape of pylance's `FragmentMetadata.to_json()`
//! (plus `num_rows` and the deletion file's `path`, which the facade drops from JSON).
//!
//! Dicts come back from users (fragments written on other machines, then committed), so
//! reading one checks every field and refuses what lancelet cannot commit yet.

use lancelet_dataset::table::pb;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use crate::errors;

/// A fragment as a dict.
pub fn fragment_dict<'py>(py: Python<'py>, f: &pb::DataFragment) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("id", f.id)?;
    let files: Vec<Bound<'py, PyDict>> = f
        .files
        .iter()
        .map(|df| {
            let x = PyDict::new(py);
            x.set_item("fields", df.fields.clone())?;
            x.set_item("column_indices", df.column_indices.clone())?;
            x.set_item("file_major_version", df.file_major_version)?;
            x.set_item("file_minor_version", df.file_minor_version)?;
            x.set_item("file_size_bytes", df.file_size_bytes)?;
            x.set_item("base_id", df.base_id)?;
            x.set_item("path", &df.path)?;
            Ok(x)
        })
        .collect::<PyResult<_>>()?;
    d.set_item("files", files)?;
    d.set_item("overlays", PyList::empty(py))?;
    d.set_item("physical_rows", f.physical_rows)?;
    match &f.deletion_file {
        None => d.set_item("deletion_file", py.None())?,
        Some(del) => {
            let x = PyDict::new(py);
            x.set_item("read_version", del.read_version)?;
            x.set_item("id", del.id)?;
            let kind = if del.file_type == 1 { "bitmap" } else { "array" };
            x.set_item("file_type", kind)?;
            x.set_item("num_deleted_rows", del.num_deleted_rows)?;
            x.set_item("base_id", del.base_id)?;
            x.set_item("path", lancelet_dataset::table::deletion::deletion_file_path(f.id, del))?;
            d.set_item("deletion_file", x)?;
        }
    }
    {
        use pb::data_fragment::{CreatedAtVersionSequence as C, LastUpdatedAtVersionSequence as U, RowIdSequence as R};
        // pylance's JSON: {"Inline": [bytes]} / {"External": {...}}; versions in lower case.
        let meta = |key: &str, inline: Option<&bytes::Bytes>, external: Option<&pb::ExternalFile>| -> PyResult<()> {
            let v = PyDict::new(py);
            let upper = key == "row_id_meta";
            match (inline, external) {
                (Some(b), _) => v.set_item(
                    if upper { "Inline" } else { "inline" },
                    b.iter().map(|x| u32::from(*x)).collect::<Vec<u32>>(),
                )?,
                (None, Some(e)) => {
                    let x = PyDict::new(py);
                    x.set_item("path", &e.path)?;
                    x.set_item("offset", e.offset)?;
                    x.set_item("size", e.size)?;
                    v.set_item(if upper { "External" } else { "external" }, x)?;
                }
                (None, None) => return d.set_item(key, py.None()),
            }
            d.set_item(key, v)
        };
        match &f.row_id_sequence {
            Some(R::InlineRowIds(b)) => meta("row_id_meta", Some(b), None)?,
            Some(R::ExternalRowIds(e)) => meta("row_id_meta", None, Some(e))?,
            None => meta("row_id_meta", None, None)?,
        }
        match &f.created_at_version_sequence {
            Some(C::InlineCreatedAtVersions(b)) => meta("created_at_version_meta", Some(b), None)?,
            Some(C::ExternalCreatedAtVersions(e)) => meta("created_at_version_meta", None, Some(e))?,
            None => meta("created_at_version_meta", None, None)?,
        }
        match &f.last_updated_at_version_sequence {
            Some(U::InlineLastUpdatedAtVersions(b)) => meta("last_updated_at_version_meta", Some(b), None)?,
            Some(U::ExternalLastUpdatedAtVersions(e)) => meta("last_updated_at_version_meta", None, Some(e))?,
            None => meta("last_updated_at_version_meta", None, None)?,
        }
    }
    d.set_item("num_rows", lancelet_dataset::table::manifest::live_rows(f))?;
    Ok(d)
}

fn bad(py: Python<'_>, msg: impl Into<String>) -> PyErr {
    errors::invalid(py, format!("invalid fragment metadata: {}", msg.into()))
}

fn item<'py>(d: &Bound<'py, PyDict>, key: &str) -> PyResult<Option<Bound<'py, PyAny>>> {
    Ok(d.get_item(key)?.filter(|v| !v.is_none()))
}

fn required<'py, T: FromPyObjectOwned<'py>>(d: &Bound<'py, PyDict>, key: &str, what: &str) -> PyResult<T> {
    let py = d.py();
    let v = item(d, key)?.ok_or_else(|| bad(py, format!("{what} has no {key:?}")))?;
    v.extract::<T>()
        .map_err(|_| bad(py, format!("{what}: {key:?} has the wrong type ({v})")))
}

fn optional<'py, T: FromPyObjectOwned<'py>>(d: &Bound<'py, PyDict>, key: &str, what: &str) -> PyResult<Option<T>> {
    match item(d, key)? {
        None => Ok(None),
        Some(v) => v
            .extract::<T>()
            .map(Some)
            .map_err(|_| bad(d.py(), format!("{what}: {key:?} has the wrong type ({v})"))),
    }
}

/// Reads a fragment back from a dict (or refuses it with `ValueError`).
pub fn fragment_from_dict(d: &Bound<'_, PyAny>) -> PyResult<pb::DataFragment> {
    let py = d.py();
    let d = d.cast::<PyDict>().map_err(|_| bad(py, "expected a dict"))?;
    // Row lineage of appended or overwritten rows is assigned at commit; fragments that
    // carry some (e.g. from pylance) are accepted and their lineage replaced. Row ids are
    // read (a Rewrite on a dataset with stable row ids keeps them), versions are not.
    if let Some(o) = item(d, "overlays")? {
        if o.len().unwrap_or(1) != 0 {
            return Err(errors::make(
                py,
                errors::Kind::Unsupported,
                "fragments with overlays cannot be committed by lancelet".into(),
            ));
        }
    }
    let id: u64 = required(d, "id", "fragment")?;
    let what = format!("fragment {id}");
    let physical_rows: u64 = required(d, "physical_rows", &what)?;
    let files_obj = item(d, "files")?.ok_or_else(|| bad(py, format!("{what} has no \"files\"")))?;
    let mut files = Vec::new();
    for f in files_obj.try_iter()? {
        let f = f?;
        let f = f
            .cast::<PyDict>()
            .map_err(|_| bad(py, format!("{what}: a file entry is not a dict")))?;
        let path: String = required(f, "path", &what)?;
        let fields: Vec<i32> = required(f, "fields", &what)?;
        let column_indices: Vec<i32> =
            optional(f, "column_indices", &what)?.unwrap_or_else(|| (0..fields.len() as i32).collect());
        if column_indices.len() != fields.len() {
            return Err(bad(
                py,
                format!(
                    "{what}: file {path} has {} fields but {} column indices",
                    fields.len(),
                    column_indices.len()
                ),
            ));
        }
        if optional::<u32>(f, "base_id", &what)?.is_some() {
            return Err(errors::make(
                py,
                errors::Kind::Unsupported,
                format!("{what}: data files under other base paths are not supported"),
            ));
        }
        files.push(pb::DataFile {
            path,
            fields,
            column_indices,
            file_major_version: required(f, "file_major_version", &what)?,
            file_minor_version: required(f, "file_minor_version", &what)?,
            file_size_bytes: optional(f, "file_size_bytes", &what)?.unwrap_or(0),
            base_id: None,
        });
    }
    let deletion_file = match item(d, "deletion_file")? {
        None => None,
        Some(x) => {
            let x = x
                .cast::<PyDict>()
                .map_err(|_| bad(py, format!("{what}: deletion_file is not a dict")))?;
            let kind: String = required(x, "file_type", &what)?;
            let file_type = match kind.as_str() {
                "array" => 0,
                "bitmap" => 1,
                other => return Err(bad(py, format!("{what}: unknown deletion file type {other:?}"))),
            };
            Some(pb::DeletionFile {
                file_type,
                read_version: required(x, "read_version", &what)?,
                id: required(x, "id", &what)?,
                num_deleted_rows: required(x, "num_deleted_rows", &what)?,
                base_id: None,
                // The JSON is pylance's, which has no checksum: the file reads unchecked.
                lancelet_crc32c: None,
            })
        }
    };
    Ok(pb::DataFragment {
        id,
        files,
        deletion_file,
        physical_rows,
        row_id_sequence: row_id_meta(d, &what)?,
        ..Default::default()
    })
}

/// The `row_id_meta` of a fragment dict: `{"Inline": [bytes]}` or `{"External": {"path",
/// "offset", "size"}}` (pylance's JSON). The version sequences are not read: the commit
/// gives new fragments their versions, as pylance does.
fn row_id_meta(d: &Bound<'_, PyDict>, what: &str) -> PyResult<Option<pb::data_fragment::RowIdSequence>> {
    use pb::data_fragment::RowIdSequence as R;
    let py = d.py();
    let Some(meta) = item(d, "row_id_meta")? else {
        return Ok(None);
    };
    let meta = meta
        .cast::<PyDict>()
        .map_err(|_| bad(py, format!("{what}: row_id_meta is not a dict")))?;
    if let Some(bytes) = optional::<Vec<u8>>(meta, "Inline", what)? {
        return Ok(Some(R::InlineRowIds(bytes.into())));
    }
    if let Some(ext) = item(meta, "External")? {
        let ext = ext
            .cast::<PyDict>()
            .map_err(|_| bad(py, format!("{what}: row_id_meta's External is not a dict")))?;
        return Ok(Some(R::ExternalRowIds(pb::ExternalFile {
            path: required(ext, "path", what)?,
            offset: required(ext, "offset", what)?,
            size: required(ext, "size", what)?,
        })));
    }
    Err(bad(py, format!("{what}: row_id_meta is neither Inline nor External")))
}
