//! Keyword options passed as one dict: [`py_options!`] declares a struct that reads one.
//!
//! A call with many keyword arguments takes them as a dict (`{"name": value}`) read into a
//! typed struct, so the Rust signature names a handful of parameters. A struct with
//! required keys derives PyO3's `FromPyObject` (`#[pyo3(from_item_all)]`). The derive
//! cannot read a struct whose fields all have defaults, which is what keyword options are;
//! [`py_options!`] reads those, and refuses keys it does not know. The `_native` stubs
//! (`python/lancelet/_native/`) type each dict with a `TypedDict` of the same name and keys.

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// Declares a struct of keyword options read from a Python dict: each field from the item
/// of its name, or `= default` when the dict lacks it. A key naming no field is a
/// `TypeError`, as an unknown keyword argument is. Fields hold owned values (`Py<..>`,
/// not `Bound<..>`). The struct's `Default` is every field's default.
macro_rules! py_options {
    (
        $(#[$meta:meta])*
        $vis:vis struct $name:ident {
            $( $(#[$fmeta:meta])* $field:ident : $ty:ty = $default:expr ),* $(,)?
        }
    ) => {
        $(#[$meta])*
        $vis struct $name {
            $( $(#[$fmeta])* pub(crate) $field: $ty, )*
        }

        impl Default for $name {
            fn default() -> Self {
                Self { $( $field: $default, )* }
            }
        }

        impl<'a, 'py> pyo3::FromPyObject<'a, 'py> for $name {
            type Error = pyo3::PyErr;

            fn extract(obj: pyo3::Borrowed<'a, 'py, pyo3::PyAny>) -> pyo3::PyResult<Self> {
                let d = $crate::options::options_dict(obj, stringify!($name), &[$(stringify!($field)),*])?;
                Ok(Self {
                    $( $field: match $crate::options::item(&d, stringify!($field))? {
                        Some(v) => v,
                        None => $default,
                    }, )*
                })
            }
        }
    };
}

pub(crate) use py_options;

/// `obj` as a dict whose keys are all in `keys`.
pub(crate) fn options_dict<'py>(
    obj: pyo3::Borrowed<'_, 'py, PyAny>,
    what: &str,
    keys: &[&str],
) -> PyResult<Bound<'py, PyDict>> {
    let obj = obj.to_owned();
    let d = obj
        .cast_into::<PyDict>()
        .map_err(|e| PyTypeError::new_err(format!("{what} must be a dict, got {}", e.into_inner().get_type())))?;
    for k in d.keys() {
        let k: String = k.extract()?;
        if !keys.contains(&k.as_str()) {
            return Err(PyTypeError::new_err(format!("{what} got an unexpected option '{k}'")));
        }
    }
    Ok(d)
}

/// The value of `key` in `d` (`None` when missing), with a note naming the key on failure
/// (as PyO3 notes the argument of a failed keyword argument).
pub(crate) fn item<'py, T>(d: &Bound<'py, PyDict>, key: &str) -> PyResult<Option<T>>
where
    T: for<'a> FromPyObject<'a, 'py>,
{
    let Some(v) = d.get_item(key)? else { return Ok(None) };
    v.extract::<T>().map(Some).map_err(|e| {
        let e: PyErr = e.into();
        let _ = e
            .value(d.py())
            .call_method1("add_note", (format!("while processing '{key}'"),));
        e
    })
}
