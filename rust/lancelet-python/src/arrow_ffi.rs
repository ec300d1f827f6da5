//! Moving Arrow data across the Arrow C data interface (PyCapsule protocol).
//!
//! Imports take any object with `__arrow_c_array__` (pyarrow, polars, nanoarrow...);
//! exports hand out `arrow_array_stream` / `arrow_schema` capsules that pyarrow and
//! friends consume without copying the buffers.

use std::ffi::CStr;

use arrow_array::ffi::{from_ffi, FFI_ArrowArray, FFI_ArrowSchema};
use arrow_array::ffi_stream::FFI_ArrowArrayStream;
use arrow_array::{Array, RecordBatch, RecordBatchReader, StructArray};
use arrow_schema::{ArrowError, DataType, Schema};
use pyo3::prelude::*;
use pyo3::types::{PyCapsule, PyCapsuleMethods, PyTuple};

use crate::errors;

const ARRAY_NAME: &CStr = c"arrow_array";
const SCHEMA_NAME: &CStr = c"arrow_schema";
const STREAM_NAME: &CStr = c"arrow_array_stream";

/// Imports a record batch from any object implementing `__arrow_c_array__`.
pub fn import_batch(py: Python<'_>, obj: &Bound<'_, PyAny>) -> PyResult<RecordBatch> {
    if !obj.hasattr("__arrow_c_array__")? {
        return Err(errors::invalid(
            py,
            "expected a record batch (an object with __arrow_c_array__)",
        ));
    }
    let pair = obj.call_method0("__arrow_c_array__")?;
    let pair = pair
        .cast::<PyTuple>()
        .map_err(|_| errors::invalid(py, "__arrow_c_array__ must return a tuple"))?;
    let schema_capsule = pair.get_item(0)?;
    let array_capsule = pair.get_item(1)?;
    let schema_capsule = schema_capsule.cast::<PyCapsule>().map_err(PyErr::from)?;
    let array_capsule = array_capsule.cast::<PyCapsule>().map_err(PyErr::from)?;
    let schema_ptr = schema_capsule.pointer_checked(Some(SCHEMA_NAME))?;
    let array_ptr = array_capsule.pointer_checked(Some(ARRAY_NAME))?;
    // SAFETY: the capsules were checked to carry the names the PyCapsule protocol
    // defines, so they point at a valid ArrowSchema and ArrowArray. `from_raw` moves the
    // array out and marks the original released, so the capsule destructor will not
    // free it a second time; the schema is only borrowed.
    let (data, schema) = unsafe {
        let array = FFI_ArrowArray::from_raw(array_ptr.as_ptr().cast::<FFI_ArrowArray>());
        let schema = &*(schema_ptr.as_ptr().cast::<FFI_ArrowSchema>());
        let data = from_ffi(array, schema).map_err(|e| errors::invalid(py, e.to_string()))?;
        let schema = Schema::try_from(schema).map_err(|e| errors::invalid(py, e.to_string()))?;
        (data, schema)
    };
    if !matches!(data.data_type(), DataType::Struct(_)) {
        return Err(errors::invalid(
            py,
            "expected a record batch (a struct array), got a plain array",
        ));
    }
    let s = StructArray::from(data);
    let (_, columns, nulls) = s.into_parts();
    if nulls.is_some_and(|n| n.null_count() > 0) {
        return Err(errors::invalid(py, "a record batch cannot have top-level nulls"));
    }
    let n = columns.first().map(|c| c.len()).unwrap_or(0);
    let opts = arrow_array::RecordBatchOptions::new().with_row_count(Some(n));
    let batch = RecordBatch::try_new_with_options(std::sync::Arc::new(schema), columns, &opts)
        .map_err(|e| errors::invalid(py, e.to_string()))?;
    // JSON text columns (`pa.json_()`) are stored as JSONB.
    lancelet_dataset::json::storage_batch(batch).map_err(|e| errors::to_py(py, e))
}

/// Wraps a batch reader into an `arrow_array_stream` capsule.
pub fn stream_capsule<'py>(
    py: Python<'py>,
    reader: Box<dyn RecordBatchReader + Send>,
) -> PyResult<Bound<'py, PyCapsule>> {
    let stream = FFI_ArrowArrayStream::new(reader);
    PyCapsule::new_with_value(py, stream, STREAM_NAME)
}

/// Exports a schema as an `arrow_schema` capsule.
pub fn schema_capsule<'py>(py: Python<'py>, schema: &Schema) -> PyResult<Bound<'py, PyCapsule>> {
    let ffi = FFI_ArrowSchema::try_from(schema).map_err(|e| errors::invalid(py, e.to_string()))?;
    PyCapsule::new_with_value(py, ffi, SCHEMA_NAME)
}

/// A one-shot stream of batches that Python consumes through `__arrow_c_stream__`.
#[pyclass(module = "lancelet._native", name = "BatchStream")]
pub struct BatchStream {
    reader: std::sync::Mutex<Option<Box<dyn RecordBatchReader + Send>>>,
    schema: arrow_schema::SchemaRef,
    error: ErrorSlot,
}

/// Where a stream keeps the typed error behind a failed batch: the C stream interface
/// only carries a message, so the facade asks for the original with `take_error`.
pub type ErrorSlot = std::sync::Arc<std::sync::Mutex<Option<(errors::Kind, String)>>>;

/// Records `e` in `slot` and turns it into the error the C stream interface carries.
pub fn stream_error<E: errors::CoreError>(slot: &ErrorSlot, e: E) -> ArrowError {
    let message = errors::display_chain(&e);
    if let Ok(mut guard) = slot.lock() {
        *guard = Some((e.kind(), message.clone()));
    }
    ArrowError::ExternalError(message.into())
}

impl BatchStream {
    pub fn new(reader: Box<dyn RecordBatchReader + Send>, error: ErrorSlot) -> Self {
        let schema = reader.schema();
        Self {
            reader: std::sync::Mutex::new(Some(reader)),
            schema,
            error,
        }
    }
}

#[pymethods]
impl BatchStream {
    /// Hands the stream to a consumer (it can be consumed once).
    #[pyo3(signature = (requested_schema=None))]
    fn __arrow_c_stream__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        let _ = requested_schema;
        // Fail here, with a typed error, if the schema cannot cross the C interface.
        FFI_ArrowSchema::try_from(self.schema.as_ref()).map_err(|e| errors::invalid(py, e.to_string()))?;
        let reader = self
            .reader
            .lock()
            .map_err(|_| errors::invalid(py, "stream lock poisoned"))?
            .take()
            .ok_or_else(|| errors::invalid(py, "this result was already consumed; read it again"))?;
        stream_capsule(py, reader)
    }

    /// The typed exception behind the last failed batch, if any (consumed).
    fn take_error(&self, py: Python<'_>) -> Option<Py<PyAny>> {
        let (kind, message) = self.error.lock().ok()?.take()?;
        Some(errors::make(py, kind, message).into_value(py).into_any())
    }

    /// The schema of the batches.
    fn __arrow_c_schema__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyCapsule>> {
        schema_capsule(py, &self.schema)
    }
}

/// An iterator of batches produced by a fallible closure, as a `RecordBatchReader`.
pub struct FnReader<F> {
    pub schema: arrow_schema::SchemaRef,
    pub next: F,
}

impl<F> Iterator for FnReader<F>
where
    F: FnMut() -> Option<Result<RecordBatch, ArrowError>>,
{
    type Item = Result<RecordBatch, ArrowError>;
    fn next(&mut self) -> Option<Self::Item> {
        // This runs under the C stream interface: a panic must not unwind into C.
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| (self.next)())) {
            Ok(item) => item,
            Err(_) => Some(Err(ArrowError::ExternalError(
                "internal error: panic while reading a batch".into(),
            ))),
        }
    }
}

impl<F> RecordBatchReader for FnReader<F>
where
    F: FnMut() -> Option<Result<RecordBatch, ArrowError>>,
{
    fn schema(&self) -> arrow_schema::SchemaRef {
        self.schema.clone()
    }
}

pub fn init(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<BatchStream>()?;
    Ok(())
}
