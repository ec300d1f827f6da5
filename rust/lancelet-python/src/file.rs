//! `lancelet._native.file.FileReader` / `FileWriter`: single Lance files, named by a local path
//! or a `file://`, `memory://` or `s3://` URI with pylance-style `storage_options`.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::ffi::FFI_ArrowSchema;
use arrow_array::RecordBatch;
use arrow_schema::{ArrowError, Schema};
use lancelet_dataset::scan::readahead::Readahead;
use lancelet_file::uri_writer::UriFileWriter;
use lancelet_file::{FileReader, FileVersion, PageCache, PageRules, WriterOptions};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyCapsule, PyCapsuleMethods, PyDict, PyList};

use crate::arrow_ffi::{import_batch, schema_capsule, BatchStream, ErrorSlot, FnReader};
use crate::errors;
use crate::options::py_options;
use crate::runtime::{block_on, runtime, spawner, wait_task};
use lancelet_dataset::task_failed;

/// An open Lance file.
#[pyclass(module = "lancelet._native.file", name = "FileReader", frozen)]
pub struct PyFileReader {
    inner: Arc<FileReader>,
}

impl PyFileReader {
    fn projection(&self, py: Python<'_>, columns: Option<&[String]>) -> PyResult<lancelet_file::Projection> {
        self.inner.projection(columns).map_err(|e| errors::to_py(py, e))
    }
}

/// The process runtime, or an `InternalError` if it cannot start.
fn py_runtime(py: Python<'_>) -> PyResult<Arc<tokio::runtime::Runtime>> {
    runtime().map_err(|e| errors::make(py, errors::Kind::Internal, format!("cannot start runtime: {e}")))
}

#[pymethods]
impl PyFileReader {
    /// Opens a file: a local path, or a `file://`, `memory://` or `s3://` URI configured
    /// by `storage_options` (as for datasets). Its checksums (when it has them) are checked
    /// on every read unless `verify_checksums` is false.
    #[staticmethod]
    #[pyo3(signature = (path, storage_options=None, verify_checksums=true))]
    fn open(
        py: Python<'_>,
        path: String,
        storage_options: Option<HashMap<String, String>>,
        verify_checksums: bool,
    ) -> PyResult<Self> {
        let options = storage_options.unwrap_or_default();
        let inner = block_on(py, async move {
            let io = lancelet_io::open_file(&path, &options).await?;
            FileReader::open_with(io, verify_checksums).await
        })?;
        Ok(Self { inner: Arc::new(inner) })
    }

    /// Number of rows.
    fn num_rows(&self) -> u64 {
        self.inner.num_rows()
    }

    /// The file schema.
    fn __arrow_c_schema__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyCapsule>> {
        schema_capsule(py, &lancelet_file::blob::v1_bytes_schema(&self.inner.metadata().schema))
    }

    /// Streams rows `start..start+num_rows` (all remaining rows when `num_rows` is None).
    #[pyo3(signature = (columns=None, start=0, num_rows=None, batch_size=1024))]
    fn read_range(
        &self,
        py: Python<'_>,
        columns: Option<Vec<String>>,
        start: u64,
        num_rows: Option<u64>,
        batch_size: u64,
    ) -> PyResult<BatchStream> {
        if batch_size == 0 {
            return Err(errors::invalid(py, "batch_size must be positive"));
        }
        let total = self.inner.num_rows();
        let end = match num_rows {
            Some(n) => start
                .checked_add(n)
                .ok_or_else(|| errors::invalid(py, "start + num_rows overflows"))?,
            None => total.max(start),
        };
        if start > total || end > total {
            return Err(errors::invalid(
                py,
                format!("cannot read rows {start}..{end} from a file with {total} rows"),
            ));
        }
        let projection = self.projection(py, columns.as_deref())?;
        // Blob v1 columns come back as their payloads, as pylance's file reader gives them.
        let schema = lancelet_file::blob::v1_bytes_schema(projection.schema());
        let reader = self.inner.clone();
        let projection = Arc::new(projection);
        let cache = Arc::new(PageCache::default());
        let slot = ErrorSlot::default();
        let err_slot = slot.clone();
        // Once started, one batch is read ahead on the runtime while the consumer handles
        // the current one; it starts when the current one is done, so consecutive batches
        // of one page find it in the cache rather than both fetching it.
        let num_batches = usize::try_from((end - start).div_ceil(batch_size)).unwrap_or(usize::MAX);
        let mut batches = Readahead::new(num_batches, 1, crate::runtime::handle, move |i| {
            let (reader, projection, cache) = (reader.clone(), projection.clone(), cache.clone());
            let first = start.saturating_add((i as u64).saturating_mul(batch_size));
            let r = first..end.min(first.saturating_add(batch_size));
            Box::pin(async move {
                // Looked up per batch: a stream created before a fork and consumed in the
                // child must use the child's runtime.
                let rt = runtime().map_err(|e| lancelet_file::Error::Internal(format!("cannot start runtime: {e}")))?;
                let spawn = spawner(&rt);
                let batch = reader
                    .read_ranges_parallel(&projection, &[r], Some(cache), &spawn)
                    .await?;
                lancelet_file::blob::v1_bytes(&reader, batch).await
            })
        });
        let next = move || -> Option<Result<RecordBatch, ArrowError>> {
            let task = match batches.next_task()? {
                Ok(t) => t,
                Err(e) => return Some(Err(ArrowError::ExternalError(Box::new(e)))),
            };
            let batch = wait_task(&err_slot, task, task_failed);
            if batch.is_ok() {
                if let Err(e) = batches.prefetch() {
                    return Some(Err(ArrowError::ExternalError(Box::new(e))));
                }
            }
            Some(batch)
        };
        Ok(BatchStream::new(Box::new(FnReader { schema, next }), slot))
    }

    /// Reads the rows at `indices` (any order, duplicates allowed).
    #[pyo3(signature = (indices, columns=None, batch_size=1024))]
    fn take(
        &self,
        py: Python<'_>,
        indices: Vec<i64>,
        columns: Option<Vec<String>>,
        batch_size: u64,
    ) -> PyResult<BatchStream> {
        if batch_size == 0 {
            return Err(errors::invalid(py, "batch_size must be positive"));
        }
        let mut idx = Vec::with_capacity(indices.len());
        for i in indices {
            idx.push(u64::try_from(i).map_err(|_| errors::invalid(py, format!("row index {i} is negative")))?);
        }
        let projection = self.projection(py, columns.as_deref())?;
        let schema = lancelet_file::blob::v1_bytes_schema(projection.schema());
        let reader = self.inner.clone();
        let rt = py_runtime(py)?;
        let spawn = spawner(&rt);
        let batch = block_on(py, async move {
            let batch = reader.take_parallel(&projection, &idx, &spawn).await?;
            lancelet_file::blob::v1_bytes(&reader, batch).await
        })?;
        let mut offset = 0usize;
        let bs = usize::try_from(batch_size).unwrap_or(usize::MAX);
        let next = move || -> Option<Result<RecordBatch, ArrowError>> {
            if offset >= batch.num_rows() {
                return None;
            }
            let len = bs.min(batch.num_rows() - offset);
            let out = batch.slice(offset, len);
            offset += len;
            Some(Ok(out))
        };
        Ok(BatchStream::new(
            Box::new(FnReader { schema, next }),
            ErrorSlot::default(),
        ))
    }

    /// The bytes of global buffer `index`.
    fn read_global_buffer<'py>(&self, py: Python<'py>, index: usize) -> PyResult<Bound<'py, PyBytes>> {
        let reader = self.inner.clone();
        let buf = block_on(py, async move { reader.read_global_buffer(index).await })?;
        Ok(PyBytes::new(py, buf.as_slice()))
    }

    /// `(bytes_read, read_requests)` issued by this reader so far.
    fn io_stats(&self) -> (u64, u64) {
        self.inner.io_stats().snapshot()
    }

    /// A description of the file's layout: versions, sizes, buffers, pages and encodings.
    fn metadata<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let m = self.inner.metadata();
        let d = PyDict::new(py);
        d.set_item("major_version", m.footer.major)?;
        d.set_item("minor_version", m.footer.minor)?;
        d.set_item("version", m.version.name())?;
        d.set_item("num_rows", m.num_rows)?;
        d.set_item("file_size", m.file_size)?;
        let gb_bytes: u64 = m.global_buffers.iter().map(|r| r.end - r.start).sum();
        d.set_item("num_global_buffer_bytes", gb_bytes)?;
        d.set_item("num_data_bytes", m.footer.column_meta_start.saturating_sub(gb_bytes))?;
        d.set_item(
            "num_column_metadata_bytes",
            m.footer.gbo_table_start.saturating_sub(m.footer.column_meta_start),
        )?;
        let ranges = |rs: &[std::ops::Range<u64>]| rs.iter().map(|r| (r.start, r.end - r.start)).collect::<Vec<_>>();
        d.set_item("global_buffers", ranges(&m.global_buffers))?;
        let cols = PyList::empty(py);
        for c in &m.columns {
            let cd = PyDict::new(py);
            cd.set_item("column_buffers", ranges(&c.buffers))?;
            let pages = PyList::empty(py);
            for p in &c.pages {
                let pd = PyDict::new(py);
                pd.set_item("buffers", ranges(&p.buffers))?;
                pd.set_item("length", p.num_rows)?;
                pd.set_item("priority", p.priority)?;
                match &p.layout {
                    Some(l) => pd.set_item("encoding", format!("{l:#?}"))?,
                    None => pd.set_item("encoding", format!("{:#?}", p.encoding))?,
                }
                pages.append(pd)?;
            }
            cd.set_item("pages", pages)?;
            cols.append(cd)?;
        }
        d.set_item("columns", cols)?;
        Ok(d)
    }
}

/// Writes one Lance file; it appears at its path only when `close` succeeds (see
/// `lancelet_file::uri_writer`).
#[pyclass(module = "lancelet._native.file", name = "FileWriter")]
pub struct PyFileWriter {
    inner: UriFileWriter,
}

pub(crate) fn import_schema(py: Python<'_>, obj: &Bound<'_, PyAny>) -> PyResult<Schema> {
    let capsule = obj.call_method0("__arrow_c_schema__")?;
    let capsule = capsule.cast::<PyCapsule>().map_err(PyErr::from)?;
    let ptr = capsule.pointer_checked(Some(c"arrow_schema"))?;
    // SAFETY: the capsule name was checked, so it holds a valid ArrowSchema that we only borrow.
    let ffi = unsafe { &*(ptr.as_ptr().cast::<FFI_ArrowSchema>()) };
    let schema = Schema::try_from(ffi).map_err(|e| errors::invalid(py, e.to_string()))?;
    // JSON text fields (`pa.json_()`) are stored as JSONB.
    Ok(match lancelet_file::json::storage_schema(&schema) {
        Some(stored) => stored.as_ref().clone(),
        None => schema,
    })
}

py_options! {
    /// `FileWriter`'s keyword options; missing ones are `WriterOptions::default()`'s.
    struct FileWriterOptions {
        /// The file format version ("2.0", "2.1", ...); the default one when None.
        version: Option<String> = None,
        max_page_bytes: Option<u64> = None,
        /// Try dictionary encoding for low-cardinality string pages.
        dictionary: bool = WriterOptions::default().encode.dictionary,
        /// The write cache, shared by the top-level fields.
        data_cache_bytes: Option<u64> = None,
        /// Record zone statistics in an extra global buffer.
        page_stats: bool = WriterOptions::default().page_stats,
        storage_options: Option<HashMap<String, String>> = None,
        /// Record CRC32C checksums in an extra global buffer.
        checksums: bool = WriterOptions::default().checksums,
    }
}

#[pymethods]
impl PyFileWriter {
    #[new]
    #[pyo3(signature = (path, schema, options=FileWriterOptions::default()))]
    fn new(py: Python<'_>, path: String, schema: &Bound<'_, PyAny>, options: FileWriterOptions) -> PyResult<Self> {
        let schema = Arc::new(import_schema(py, schema)?);
        let version = match options.version.as_deref() {
            None => FileVersion::DEFAULT,
            Some(v) => FileVersion::parse(v).map_err(|e| errors::to_py(py, e))?,
        };
        let mut opts = WriterOptions {
            version,
            page_stats: options.page_stats,
            checksums: options.checksums,
            // The same pages as pylance writes for the same batches.
            page_rules: PageRules::Pylance,
            ..WriterOptions::default()
        };
        if let Some(m) = options.max_page_bytes {
            opts.max_page_bytes = m;
        }
        if let Some(c) = options.data_cache_bytes {
            // As pylance: the cache is shared evenly by the top-level fields.
            opts.cache_bytes_per_column = (c / schema.fields().len().max(1) as u64).max(1);
        }
        opts.encode.dictionary = options.dictionary;
        let storage_options = options.storage_options.unwrap_or_default();
        let inner = block_on(py, async move {
            UriFileWriter::create(&path, &storage_options, schema, opts)
        })?;
        Ok(Self { inner })
    }

    /// Writes one record batch (any object with `__arrow_c_array__`).
    fn write_batch(&mut self, py: Python<'_>, batch: &Bound<'_, PyAny>) -> PyResult<()> {
        let batch = import_batch(py, batch)?;
        let writer = &mut self.inner;
        block_on(py, async move { writer.write_batch(&batch) })
    }

    /// Writes a global buffer now; returns its index (1, 2, ...).
    fn add_global_buffer(&mut self, py: Python<'_>, data: Vec<u8>) -> PyResult<u32> {
        let writer = &mut self.inner;
        block_on(py, async move { writer.add_global_buffer(&data) })
    }

    /// Adds a key/value pair to the schema metadata.
    fn add_schema_metadata(&mut self, py: Python<'_>, key: String, value: String) -> PyResult<()> {
        self.inner
            .add_schema_metadata(key, value)
            .map_err(|e| errors::to_py(py, e))
    }

    /// Finishes the file; returns the number of rows and the file size, or None if
    /// already closed.
    fn close(&mut self, py: Python<'_>) -> PyResult<Option<(u64, u64)>> {
        let writer = &mut self.inner;
        block_on(py, async move { writer.finish().await })
    }

    /// Abandons the file: nothing is left at the target path.
    fn abort(&mut self) {
        self.inner.abort();
    }

    /// True once `close` or `abort` ran.
    #[getter]
    fn closed(&self) -> bool {
        self.inner.is_closed()
    }
}

pub fn init(m: &Bound<'_, PyModule>) -> PyResult<()> {
    // `lancelet.file.stable_version()` and the writers' default.
    m.add("DEFAULT_FILE_VERSION", FileVersion::DEFAULT.name())?;
    m.add_class::<PyFileReader>()?;
    m.add_class::<PyFileWriter>()?;
    Ok(())
}
