//! `lancelet._native.dataset.Dataset`: datasets, their versions, scans, writes and deletes.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::ffi_stream::{FFI_ArrowArrayStream, RecordBatchStreamReader};
use arrow_array::{RecordBatch, RecordBatchReader};
use arrow_schema::ArrowError;
use lancelet_dataset::maintain::cleanup::CleanupPolicy;
use lancelet_dataset::scan::order::ColumnOrdering;
use lancelet_dataset::scan::stream::{ScanBatches, Step};
use lancelet_dataset::scan::{Columns, Scan, ScanOptions};
use lancelet_dataset::write::{write_dataset, CommitKind, WriteMode, WriteParams, WriteProgress};
use lancelet_dataset::{open_uri, Dataset, Location, VersionRef};
use lancelet_file::FileVersion;
use pyo3::prelude::*;
use pyo3::types::{PyCapsule, PyCapsuleMethods, PyDict};

use crate::arrow_ffi::{schema_capsule, stream_error, BatchStream, ErrorSlot, FnReader};
use crate::errors;
use crate::fragment_meta::{fragment_dict, fragment_from_dict};
use crate::hooks::PyCommitLock;
use crate::options::py_options;
use crate::runtime::{block_on, runtime, spawner, wait_task};

/// Counters of one scan, filled in while it runs: pass one to `Dataset.scan(stats=...)`.
#[pyclass(module = "lancelet._native.dataset", name = "ScanStats", frozen)]
#[derive(Default)]
pub struct PyScanStats {
    inner: std::sync::Mutex<Option<Arc<lancelet_dataset::scan::ScanStats>>>,
}

#[pymethods]
impl PyScanStats {
    #[new]
    fn new() -> Self {
        Self::default()
    }

    /// The counters now: bytes_read, iops, tasks, rows_scanned, rows_matched.
    fn snapshot<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let s = self
            .inner
            .lock()
            .ok()
            .and_then(|g| g.as_ref().map(|s| s.snapshot()))
            .unwrap_or_default();
        counts_dict(
            py,
            &[
                ("bytes_read", s.bytes_read),
                ("iops", s.iops),
                ("tasks", s.tasks),
                ("rows_scanned", s.rows_scanned),
                ("rows_matched", s.rows_matched),
            ],
        )
    }
}

/// A dict of named counters.
fn counts_dict<'py>(py: Python<'py>, counts: &[(&str, u64)]) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for (k, v) in counts {
        d.set_item(k, v)?;
    }
    Ok(d)
}

/// One version of a dataset.
#[pyclass(module = "lancelet._native.dataset", name = "Dataset", frozen)]
pub struct PyDataset {
    pub(crate) inner: Arc<Dataset>,
}

/// Where the dataset at `uri` lives, with pylance-style `storage_options` for object stores.
fn location(py: Python<'_>, uri: &str, storage_options: Option<HashMap<String, String>>) -> PyResult<Location> {
    open_uri(uri, &storage_options.unwrap_or_default()).map_err(|e| errors::to_py(py, lancelet_dataset::Error::from(e)))
}

/// A namespace that manages the table's versions: `(client, table id, the dataset root
/// as its object store names it)`; commits then go through `create_table_version`.
pub(crate) type CommitNamespace = (Py<PyAny>, Vec<String>, String);

/// `loc` committing through `namespace` when there is one.
pub(crate) fn managed(mut loc: Location, namespace: Option<CommitNamespace>) -> Location {
    if let Some((client, table_id, root_key)) = namespace {
        loc.store = crate::catalog::NamespaceCatalog::new(client, table_id, root_key).wrap(loc.store);
    }
    loc
}

fn version_ref(v: Option<&Bound<'_, PyAny>>) -> PyResult<Option<VersionRef>> {
    let Some(v) = v else { return Ok(None) };
    if v.is_none() {
        return Ok(None);
    }
    if let Ok(s) = v.extract::<String>() {
        return Ok(Some(VersionRef::Tag(s)));
    }
    let n: i64 = v
        .extract()
        .map_err(|_| errors::invalid(v.py(), format!("version must be an int or a tag name, got {v}")))?;
    let n = u64::try_from(n)
        .ok()
        .filter(|n| *n > 0)
        .ok_or_else(|| errors::invalid(v.py(), format!("version must be a positive integer, got {n}")))?;
    Ok(Some(VersionRef::Number(n)))
}

pub(crate) fn wrap(ds: Dataset) -> PyDataset {
    PyDataset { inner: Arc::new(ds) }
}

/// Imports any `__arrow_c_stream__` object as a batch reader, with Arrow's view types
/// (polars' strings) turned into the plain types Lance stores.
pub(crate) fn import_stream(py: Python<'_>, obj: &Bound<'_, PyAny>) -> PyResult<Box<dyn RecordBatchReader + Send>> {
    if !obj.hasattr("__arrow_c_stream__")? {
        return Err(errors::invalid(py, "expected an object with __arrow_c_stream__"));
    }
    let capsule = obj.call_method0("__arrow_c_stream__")?;
    let capsule = capsule.cast::<PyCapsule>().map_err(PyErr::from)?;
    let ptr = capsule.pointer_checked(Some(c"arrow_array_stream"))?;
    // SAFETY: the capsule carries the name the PyCapsule protocol defines for an
    // ArrowArrayStream; `from_raw` moves the stream out and marks the original released,
    // so the capsule's destructor will not release it again.
    let stream = unsafe { FFI_ArrowArrayStream::from_raw(ptr.as_ptr().cast::<FFI_ArrowArrayStream>()) };
    let reader = RecordBatchStreamReader::try_new(stream).map_err(|e| errors::invalid(py, e.to_string()))?;
    Ok(lancelet_dataset::json::storage_reader(
        lancelet_dataset::write::views::plain_reader(Box::new(OutsideRuntime(Box::new(reader)))),
    ))
}

/// Pulls each batch outside the runtime's context. Writes consume their input inside
/// `Runtime::block_on`, and the input may itself block on the runtime: a lancelet scan
/// (`write_dataset(ds.to_batches(), ...)`), or a Python generator that calls lancelet.
/// Blocking on a runtime from inside one panics ("Cannot start a runtime from within a
/// runtime"); `block_in_place` steps out of the context for the call instead.
struct OutsideRuntime(Box<dyn RecordBatchReader + Send>);

impl Iterator for OutsideRuntime {
    type Item = Result<RecordBatch, ArrowError>;

    fn next(&mut self) -> Option<Self::Item> {
        // The write stops (and cleans up) on this error; `block_on` raises the interrupt.
        if crate::runtime::interrupted() {
            return Some(Err(ArrowError::ExternalError("interrupted".into())));
        }
        let inner = &mut self.0;
        tokio::task::block_in_place(move || inner.next())
    }
}

impl RecordBatchReader for OutsideRuntime {
    fn schema(&self) -> arrow_schema::SchemaRef {
        self.0.schema()
    }
}

fn file_version(py: Python<'_>, v: Option<&str>) -> PyResult<FileVersion> {
    match v {
        None => Ok(FileVersion::DEFAULT),
        Some(s) => FileVersion::parse(s).map_err(|e| errors::to_py(py, e)),
    }
}

py_options! {
    /// A write's or commit's keyword options (pylance's names); missing ones are `WriteParams::default()`'s.
    pub(crate) struct WriteOptions {
        /// "create", "append" or "overwrite".
        mode: Option<String> = None,
        max_rows_per_file: Option<u64> = None,
        max_bytes_per_file: Option<u64> = None,
        enable_v2_manifest_paths: bool = WriteParams::default().enable_v2_manifest_paths,
        /// The data file format; the default one (and the dataset's, when appending) if None.
        data_storage_version: Option<String> = None,
        commit_message: Option<String> = None,
        /// Called with `(rows, bytes, files)` as the write goes.
        progress: Option<Py<PyAny>> = None,
        storage_options: Option<HashMap<String, String>> = None,
        enable_stable_row_ids: bool = WriteParams::default().enable_stable_row_ids,
        /// `(pack file size threshold, ingest external blobs, allow them outside bases)`.
        blob_options: Option<(Option<u64>, bool, bool)> = None,
        transaction_properties: Option<HashMap<String, String>> = None,
        commit_namespace: Option<CommitNamespace> = None,
        commit_lock: Option<Py<PyAny>> = None,
        /// Table config the new dataset starts with.
        config: Option<HashMap<String, String>> = None,
        /// Goes into the new data files' names.
        file_tag: Option<String> = None,
    }
}

impl WriteOptions {
    /// The parameters of the write, checked. The storage options and commit namespace
    /// stay here: they name the location ([`WriteOptions::location`]).
    pub(crate) fn params(&mut self, py: Python<'_>) -> PyResult<WriteParams> {
        // The write defaults are `WriteParams::default()`'s, and nowhere else.
        let defaults = WriteParams::default();
        let mode = match self.mode.as_deref() {
            Some(m) => WriteMode::parse(m).map_err(|e| errors::to_py(py, e))?,
            None => defaults.mode,
        };
        let data_storage_version = self.data_storage_version.take();
        let progress = self.progress.take().map(|cb| {
            let cb = Arc::new(cb);
            Arc::new(move |p: WriteProgress| {
                Python::attach(|py| {
                    let _ = cb.call1(py, (p.rows, p.bytes, p.files));
                });
            }) as lancelet_dataset::write::ProgressFn
        });
        let mut params = WriteParams {
            mode,
            max_rows_per_file: self.max_rows_per_file.unwrap_or(defaults.max_rows_per_file),
            max_bytes_per_file: self.max_bytes_per_file.unwrap_or(defaults.max_bytes_per_file),
            enable_v2_manifest_paths: self.enable_v2_manifest_paths,
            file_version: file_version(py, data_storage_version.as_deref())?,
            default_file_version: data_storage_version.is_none(),
            commit_message: self.commit_message.take(),
            progress,
            file_tag: self.file_tag.take(),
            enable_stable_row_ids: self.enable_stable_row_ids,
            transaction_properties: self.transaction_properties.take().unwrap_or_default(),
            config: self.config.take().unwrap_or_default(),
            commit_lock: PyCommitLock::from_py(self.commit_lock.take().map(|l| l.into_bound(py)))?,
            ..defaults
        };
        if let Some((pack, ingest, outside)) = self.blob_options {
            params.blob.pack_file_size_threshold = pack;
            params.blob.ingest_external = ingest;
            params.blob.allow_external_outside_bases = outside;
        }
        Ok(params)
    }

    /// Where the dataset at `uri` lives, committing through the namespace when there is one.
    fn location(&mut self, py: Python<'_>, uri: &str) -> PyResult<Location> {
        let loc = location(py, uri, self.storage_options.take())?;
        Ok(managed(loc, self.commit_namespace.take()))
    }
}

/// Runs a write whose input may be a Python generator: [`block_on`] polls the future on
/// this thread (with the GIL released; pyarrow takes it back while producing each batch),
/// not on a worker.
pub(crate) use crate::runtime::block_on as pull_on_this_thread;

/// A scan's batches as a stream for Python: `ScanBatches` (the dataset crate) runs the
/// tasks ahead and applies limit, offset and batch sizes; this loop waits the glue's way
/// (GIL released, Ctrl-C watched) and turns stored JSON into JSON text, as pylance returns it.
fn scan_stream(scan: Arc<Scan>) -> BatchStream {
    let schema = lancelet_dataset::json::text_schema(scan.schema());
    let slot = ErrorSlot::default();
    let err_slot = slot.clone();
    let mut batches = ScanBatches::new(scan, crate::runtime::handle);
    let next = move || -> Option<Result<RecordBatch, ArrowError>> {
        loop {
            match batches.step() {
                Step::Batch(b) => {
                    return Some(lancelet_dataset::json::text_batch(b).map_err(|e| stream_error(&err_slot, e)))
                }
                Step::Done => return None,
                Step::Failed(e) => return Some(Err(stream_error(&err_slot, e))),
                Step::Wait(task) => match wait_task(&err_slot, task, lancelet_dataset::Error::from) {
                    Ok(batch) => {
                        if let Err(e) = batches.accept(batch) {
                            return Some(Err(stream_error(&err_slot, e)));
                        }
                    }
                    Err(e) => return Some(Err(e)),
                },
            }
        }
    };
    BatchStream::new(Box::new(FnReader { schema, next }), slot)
}

/// Row indices from Python, refusing negative ones.
fn row_indices(py: Python<'_>, indices: Vec<i64>) -> PyResult<Vec<u64>> {
    indices
        .into_iter()
        .map(|i| {
            u64::try_from(i)
                .map_err(|_| errors::make(py, errors::Kind::OutOfRange, format!("row index {i} is negative")))
        })
        .collect()
}

/// One change of `alter_columns`: `(path, new name, nullable, new type as a one-field
/// schema)`.
type Alteration<'py> = (String, Option<String>, Option<bool>, Option<Bound<'py, PyAny>>);

/// Hands a single batch of dataset rows out as a stream, stored JSON as JSON text (as
/// pylance returns it).
pub(crate) fn one_batch(batch: RecordBatch) -> BatchStream {
    let schema = lancelet_dataset::json::text_schema(&batch.schema());
    let slot = ErrorSlot::default();
    let err_slot = slot.clone();
    let mut once = Some(batch);
    let next = move || {
        once.take()
            .map(|b| lancelet_dataset::json::text_batch(b).map_err(|e| stream_error(&err_slot, e)))
    };
    BatchStream::new(Box::new(FnReader { schema, next }), slot)
}

py_options! {
    /// `Dataset.scan`'s keyword options; missing ones are `ScanOptions::default()`'s.
    struct ScanArgs {
        /// Column names (or, with `exprs`, ignored).
        columns: Option<Vec<String>> = None,
        /// `(name, SQL expression)` pairs.
        exprs: Option<Vec<(String, String)>> = None,
        filter: Option<String> = None,
        limit: Option<u64> = None,
        offset: Option<u64> = None,
        batch_size: Option<usize> = None,
        fragments: Option<Vec<u64>> = None,
        with_row_id: bool = ScanOptions::default().with_row_id,
        with_row_address: bool = ScanOptions::default().with_row_address,
        /// `(fragment id, start, end)` row ranges.
        row_ranges: Option<Vec<(u64, u64, u64)>> = None,
        /// Filled in with the scan's counters.
        stats: Option<Py<PyScanStats>> = None,
        include_deleted: bool = ScanOptions::default().include_deleted,
        use_stats: bool = ScanOptions::default().use_stats,
        use_scalar_index: bool = ScanOptions::default().use_scalar_index,
        /// Return the plan as text instead of scanning.
        explain: bool = false,
        /// `(column, ascending, nulls first)` sort keys.
        order_by: Option<Vec<(String, bool, bool)>> = None,
        strict_batch_size: bool = ScanOptions::default().strict_batch_size,
        blob_binary: bool = ScanOptions::default().blob_binary,
    }
}

impl ScanArgs {
    /// The dataset crate's options of this scan.
    fn scan_options(self) -> ScanOptions {
        let defaults = ScanOptions::default();
        let columns = match (self.columns, self.exprs) {
            (_, Some(e)) => Columns::Exprs(e),
            (Some(c), None) => Columns::Names(c),
            (None, None) => Columns::All,
        };
        ScanOptions {
            columns,
            filter: self.filter,
            limit: self.limit,
            offset: self.offset.unwrap_or(defaults.offset),
            batch_size: self.batch_size.unwrap_or(defaults.batch_size),
            fragments: self.fragments,
            row_ranges: self
                .row_ranges
                .map(|r| r.into_iter().map(|(f, a, b)| (f, a..b)).collect()),
            with_row_id: self.with_row_id,
            with_row_address: self.with_row_address,
            include_deleted: self.include_deleted,
            use_stats: self.use_stats,
            use_scalar_index: self.use_scalar_index,
            order_by: self
                .order_by
                .unwrap_or_default()
                .into_iter()
                .map(|(column, ascending, nulls_first)| ColumnOrdering {
                    column,
                    ascending,
                    nulls_first,
                })
                .collect(),
            strict_batch_size: self.strict_batch_size,
            blob_binary: self.blob_binary,
            ..defaults
        }
    }
}

py_options! {
    /// `Dataset.cleanup_old_versions`'s keyword options; missing ones are `CleanupPolicy::default()`'s.
    struct CleanupArgs {
        /// Seconds.
        older_than: Option<f64> = None,
        retain_versions: Option<u64> = None,
        delete_unverified: bool = CleanupPolicy::default().delete_unverified,
        error_if_tagged_old_versions: bool = CleanupPolicy::default().error_if_tagged_old_versions,
        delete_rate_limit: Option<u64> = None,
        versions: Option<Vec<u64>> = None,
        delete_concurrency: Option<usize> = None,
    }
}

#[pymethods]
impl PyDataset {
    /// Opens a local dataset at `version` (a number or a tag name; latest when None).
    #[staticmethod]
    #[pyo3(signature = (uri, version=None, storage_options=None, commit_namespace=None))]
    fn open(
        py: Python<'_>,
        uri: String,
        version: Option<Bound<'_, PyAny>>,
        storage_options: Option<HashMap<String, String>>,
        commit_namespace: Option<CommitNamespace>,
    ) -> PyResult<Self> {
        let options = storage_options.clone().unwrap_or_default();
        let loc = managed(location(py, &uri, storage_options)?, commit_namespace);
        let v = version_ref(version.as_ref())?;
        let ds = block_on(py, async move { Dataset::open_at(&loc, v).await })?;
        Ok(wrap(ds.with_storage_options(options)))
    }

    /// Writes a stream of batches as a dataset and commits it.
    #[staticmethod]
    #[pyo3(signature = (uri, data, options=WriteOptions::default()))]
    fn write(py: Python<'_>, uri: String, data: Bound<'_, PyAny>, mut options: WriteOptions) -> PyResult<Self> {
        let params = options.params(py)?;
        let reader: Box<dyn RecordBatchReader + Send> = import_stream(py, &data)?;
        let loc = options.location(py, &uri)?;
        let ds = pull_on_this_thread(py, async move { write_dataset(&loc, reader, params).await })?;
        Ok(wrap(ds))
    }

    /// Writes a stream of batches as data files of the dataset at `uri` without committing
    /// them. Returns the fragments (dicts), the files' schema and whether they append to
    /// the existing dataset (rather than create or replace it).
    #[staticmethod]
    #[pyo3(signature = (uri, data, options=WriteOptions::default()))]
    fn write_fragments<'py>(
        py: Python<'py>,
        uri: String,
        data: Bound<'py, PyAny>,
        mut options: WriteOptions,
    ) -> PyResult<(Vec<Bound<'py, PyDict>>, Bound<'py, PyCapsule>, bool)> {
        options.mode.get_or_insert_with(|| "append".to_string());
        let params = options.params(py)?;
        let reader: Box<dyn RecordBatchReader + Send> = import_stream(py, &data)?;
        let loc = location(py, &uri, options.storage_options.take())?;
        let (_, staged) = pull_on_this_thread(py, async move {
            lancelet_dataset::write::write_fragments(&loc, reader, &params).await
        })?;
        let frags = staged
            .fragments
            .iter()
            .map(|f| fragment_dict(py, f))
            .collect::<PyResult<Vec<_>>>()?;
        let schema = lancelet_dataset::json::text_schema(&staged.schema);
        Ok((frags, schema_capsule(py, &schema)?, staged.appending))
    }

    /// Commits fragments written earlier as one new version: `kind` is "append" or
    /// "overwrite" (which needs `schema` and creates the dataset if absent), or an explicit
    /// intent (see `lancelet_dataset::commit::intent`): "create" (an overwrite of an absent
    /// dataset, which fails if another writer created it) or "create_or_append" (create
    /// with `schema`, or append when the dataset exists); "append" with a `read_version` is
    /// an append planned at that version.
    #[staticmethod]
    #[pyo3(signature = (uri, kind, fragments, schema=None, read_version=None, options=WriteOptions::default()))]
    fn commit(
        py: Python<'_>,
        uri: String,
        kind: &str,
        fragments: Vec<Bound<'_, PyAny>>,
        schema: Option<Bound<'_, PyAny>>,
        read_version: Option<u64>,
        mut options: WriteOptions,
    ) -> PyResult<Self> {
        use lancelet_dataset::commit::intent::CommitIntent;
        let intent = match (kind, schema.as_ref()) {
            ("create", Some(s)) => Some(CommitIntent::Overwrite {
                schema: Arc::new(crate::file::import_schema(py, s)?),
                read_version: None,
            }),
            ("create_or_append", Some(s)) => Some(CommitIntent::CreateOrAppend(Arc::new(crate::file::import_schema(
                py, s,
            )?))),
            ("create" | "create_or_append", None) => {
                return Err(errors::invalid(py, format!("a {kind:?} commit needs the new schema")))
            }
            _ => None,
        };
        let kind = match (kind, schema) {
            _ if intent.is_some() => CommitKind::Append,
            ("append", _) => CommitKind::Append,
            ("overwrite", Some(s)) => CommitKind::Overwrite(Arc::new(crate::file::import_schema(py, &s)?)),
            ("overwrite", None) => return Err(errors::invalid(py, "an overwrite needs the new schema")),
            (other, _) => {
                return Err(errors::invalid(
                    py,
                    format!("commit kind must be \"append\" or \"overwrite\", got {other:?}"),
                ))
            }
        };
        let fragments = fragments.iter().map(fragment_from_dict).collect::<PyResult<Vec<_>>>()?;
        options.mode = Some("append".to_string());
        let params = options.params(py)?;
        let loc = options.location(py, &uri)?;
        let ds = block_on(py, async move {
            match intent {
                Some(intent) => {
                    lancelet_dataset::commit::intent::commit_with_intent(&loc, intent, fragments, &params).await
                }
                None => lancelet_dataset::write::commit_fragments(&loc, kind, fragments, read_version, &params).await,
            }
        })?;
        Ok(wrap(ds))
    }

    /// Removes the data files named with `tag` that are not in `keep` (file names);
    /// returns how many it removed.
    #[staticmethod]
    #[pyo3(signature = (uri, tag, keep, storage_options=None))]
    fn remove_tagged_files(
        py: Python<'_>,
        uri: String,
        tag: String,
        keep: Vec<String>,
        storage_options: Option<HashMap<String, String>>,
    ) -> PyResult<usize> {
        let loc = location(py, &uri, storage_options)?;
        let keep: std::collections::HashSet<String> = keep.into_iter().collect();
        block_on(py, async move {
            lancelet_dataset::write::remove_tagged_files(&loc, &tag, &keep).await
        })
    }

    /// The same dataset at another version (a number, a tag name, or None for the latest).
    #[pyo3(signature = (version=None))]
    fn checkout(&self, py: Python<'_>, version: Option<Bound<'_, PyAny>>) -> PyResult<Self> {
        let v = version_ref(version.as_ref())?;
        let ds = self.inner.clone();
        Ok(wrap(block_on(py, async move { ds.checkout(v).await })?))
    }

    /// The dataset root.
    fn uri(&self) -> String {
        self.inner.root().display().to_string()
    }

    /// The version this object reads.
    /// Makes every later commit of this dataset, and of the datasets derived from it
    /// (checkouts, the results of its commits), run inside `lock` (None: no lock).
    #[pyo3(signature = (lock=None))]
    fn set_commit_lock(&self, lock: Option<Bound<'_, PyAny>>) -> PyResult<()> {
        self.inner.set_commit_lock(PyCommitLock::from_py(lock)?);
        Ok(())
    }

    /// Whether commits of this dataset run inside a commit lock.
    fn has_commit_lock(&self) -> bool {
        self.inner.commit_lock().is_some()
    }

    fn version(&self) -> u64 {
        self.inner.version()
    }

    /// The newest version.
    fn latest_version(&self, py: Python<'_>) -> PyResult<u64> {
        let ds = self.inner.clone();
        block_on(py, async move { ds.latest_version().await })
    }

    /// Data file format, e.g. "2.0".
    fn data_storage_version(&self) -> String {
        self.inner.data_storage_version()
    }

    /// `(version, seconds, nanos, num_rows, metadata)` of every version, oldest first.
    #[allow(
        clippy::type_complexity,
        reason = "plain tuples mirror the Python values they convert"
    )]
    fn versions(
        &self,
        py: Python<'_>,
    ) -> PyResult<Vec<(u64, i64, i32, u64, std::collections::HashMap<String, String>)>> {
        let ds = self.inner.clone();
        let v = block_on(py, async move { ds.versions().await })?;
        Ok(v.into_iter()
            .map(|v| (v.version, v.timestamp.0, v.timestamp.1, v.num_rows, v.metadata))
            .collect())
    }

    /// Live rows (matching `filter` when given).
    #[pyo3(signature = (filter=None, fragments=None))]
    fn count_rows(&self, py: Python<'_>, filter: Option<String>, fragments: Option<Vec<u64>>) -> PyResult<u64> {
        let ds = self.inner.clone();
        block_on(py, async move {
            ds.count_rows_where(filter.as_deref(), fragments.as_deref()).await
        })
    }

    /// The table schema.
    fn __arrow_c_schema__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyCapsule>> {
        schema_capsule(py, &lancelet_dataset::json::text_schema(self.inner.schema()))
    }

    /// Fragment metadata as dicts.
    fn fragments<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyDict>>> {
        self.inner.fragments().iter().map(|f| fragment_dict(py, f)).collect()
    }

    /// Plans a scan and streams its batches (or, with `explain`, returns its plan as text).
    #[pyo3(signature = (options=ScanArgs::default()))]
    fn scan(&self, py: Python<'_>, mut options: ScanArgs) -> PyResult<Py<PyAny>> {
        let (explain, stats) = (options.explain, options.stats.take());
        let opts = options.scan_options();
        let rt = runtime().map_err(|e| errors::make(py, errors::Kind::Internal, e.to_string()))?;
        let ds = self.inner.as_ref().clone().with_spawner(spawner(&rt));
        let scan = block_on(py, async move { Scan::plan(&ds, opts).await })?;
        if explain {
            return Ok(scan.explain().into_pyobject(py)?.into_any().unbind());
        }
        if let Some(stats) = stats {
            if let Ok(mut g) = stats.get().inner.lock() {
                *g = Some(scan.stats().clone());
            }
        }
        Ok(Py::new(py, scan_stream(Arc::new(scan)))?.into_any())
    }

    /// Rows at offsets `indices` among the live rows.
    #[pyo3(signature = (indices, columns=None))]
    fn take(&self, py: Python<'_>, indices: Vec<i64>, columns: Option<Vec<String>>) -> PyResult<BatchStream> {
        let idx = row_indices(py, indices)?;
        let rt = runtime().map_err(|e| errors::make(py, errors::Kind::Internal, e.to_string()))?;
        let ds = self.inner.as_ref().clone().with_spawner(spawner(&rt));
        let batch = block_on(py, async move { ds.take(&idx, columns.as_deref()).await })?;
        Ok(one_batch(batch))
    }

    /// Rows at row addresses `(fragment_id << 32) | offset`.
    #[pyo3(signature = (addresses, columns=None))]
    fn take_addresses(
        &self,
        py: Python<'_>,
        addresses: Vec<u64>,
        columns: Option<Vec<String>>,
    ) -> PyResult<BatchStream> {
        let ds = self.inner.clone();
        let batch = block_on(
            py,
            async move { ds.take_addresses(&addresses, columns.as_deref()).await },
        )?;
        Ok(one_batch(batch))
    }

    /// Deletes rows matching `predicate`: `(dataset at the new version, rows deleted)`.
    /// A conflicting concurrent commit makes it run again on the newest version, up to
    /// `conflict_retries` times and `retry_timeout` seconds.
    #[pyo3(signature = (predicate, conflict_retries=0, retry_timeout=None))]
    fn delete(
        &self,
        py: Python<'_>,
        predicate: String,
        conflict_retries: u32,
        retry_timeout: Option<f64>,
    ) -> PyResult<(Self, u64)> {
        let policy = retry_policy(py, conflict_retries, retry_timeout)?;
        let ds = self.inner.clone();
        let (ds, res) = block_on(py, async move {
            ds.execute_with_retry(&policy, |ds| {
                let predicate = predicate.clone();
                async move { ds.delete(&predicate).await }
            })
            .await
        })?;
        Ok((wrap(ds), res.num_deleted_rows))
    }

    /// Adds columns computed by SQL expressions `(name, expression)`: one new data file
    /// per fragment, committed as a Merge.
    #[pyo3(signature = (exprs, batch_size=None))]
    fn add_columns_sql(
        &self,
        py: Python<'_>,
        exprs: Vec<(String, String)>,
        batch_size: Option<usize>,
    ) -> PyResult<Self> {
        let ds = self.inner.clone();
        let batch_size = batch_size.unwrap_or(lancelet_dataset::scan::DEFAULT_BATCH_SIZE);
        Ok(wrap(block_on(py, async move {
            ds.add_columns_sql(&exprs, batch_size).await
        })?))
    }

    /// Adds nullable all-null columns (`schema`'s fields) without writing data.
    fn add_null_columns(&self, py: Python<'_>, schema: Bound<'_, PyAny>) -> PyResult<Self> {
        let schema = crate::file::import_schema(py, &schema)?;
        let ds = self.inner.clone();
        Ok(wrap(block_on(py, async move { ds.add_null_columns(&schema).await })?))
    }

    /// Drops columns (dotted paths for struct children).
    fn drop_columns(&self, py: Python<'_>, names: Vec<String>) -> PyResult<Self> {
        let ds = self.inner.clone();
        Ok(wrap(block_on(py, async move { ds.drop_columns(&names).await })?))
    }

    /// Renames columns, makes them nullable or casts them: `(path, new name, nullable,
    /// new type)` each, the type as a one-field schema.
    fn alter_columns(&self, py: Python<'_>, alterations: Vec<Alteration<'_>>) -> PyResult<Self> {
        let mut alts = Vec::with_capacity(alterations.len());
        for (path, rename, nullable, to) in alterations {
            let data_type = match to {
                Some(s) => {
                    let schema = crate::file::import_schema(py, &s)?;
                    let field = schema.fields().first().cloned();
                    Some(
                        field
                            .ok_or_else(|| errors::invalid(py, "no type given"))?
                            .data_type()
                            .clone(),
                    )
                }
                None => None,
            };
            alts.push(lancelet_dataset::evolve::Alteration {
                path,
                rename,
                nullable,
                data_type,
            });
        }
        let ds = self.inner.clone();
        Ok(wrap(block_on(py, async move { ds.alter_columns(&alts).await })?))
    }

    /// Writes the new columns of fragment `fragment_id` from a stream of batches (one row
    /// per physical row, deleted rows included) without committing; returns the data file
    /// as a fragment dict holding only it. Field ids follow from `data`'s schema, the same
    /// for every fragment of this version.
    #[pyo3(signature = (fragment_id, data, file_tag=None))]
    fn write_column_file<'py>(
        &self,
        py: Python<'py>,
        fragment_id: u64,
        data: Bound<'py, PyAny>,
        file_tag: Option<String>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let reader = import_stream(py, &data)?;
        let schema = reader.schema();
        let ds = self.inner.clone();
        ds.fragment(fragment_id).map_err(|e| errors::to_py(py, e))?;
        let fields = ds.new_fields(&schema).map_err(|e| errors::to_py(py, e))?;
        let mut writer = ds
            .column_file_writer(schema, &fields, file_tag)
            .map_err(|e| errors::to_py(py, e))?;
        // The batches are pulled here, outside the runtime: producing them may run lancelet
        // scans (a UDF reading the dataset), which block on the runtime themselves.
        let pulled: PyResult<()> = block_on(py, async {
            for batch in reader {
                writer.write(&batch.map_err(lancelet_dataset::Error::from)?)?;
            }
            Ok::<(), lancelet_dataset::Error>(())
        });
        if let Err(e) = pulled {
            let _ = block_on(py, async move {
                writer.abort().await;
                Ok::<(), lancelet_dataset::Error>(())
            });
            return Err(e);
        }
        let file = block_on(py, async move { ds.finish_column_file(fragment_id, writer).await })?;
        let frag = lancelet_dataset::table::pb::DataFragment {
            id: fragment_id,
            files: vec![file],
            physical_rows: self.inner.fragment(fragment_id).map(|f| f.physical_rows).unwrap_or(0),
            ..Default::default()
        };
        fragment_dict(py, &frag)
    }

    /// Commits new columns of `schema`: `files` are [`write_column_file`]'s results, one
    /// per fragment of this version.
    fn commit_new_columns(
        &self,
        py: Python<'_>,
        schema: Bound<'_, PyAny>,
        files: Vec<Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let schema = crate::file::import_schema(py, &schema)?;
        let mut pairs = Vec::with_capacity(files.len());
        for f in &files {
            let frag = fragment_from_dict(f)?;
            let file = frag
                .files
                .into_iter()
                .next()
                .ok_or_else(|| errors::invalid(py, format!("fragment {} has no new data file", frag.id)))?;
            pairs.push((frag.id, file));
        }
        let ds = self.inner.clone();
        Ok(wrap(block_on(py, async move {
            let fields = ds.new_fields(&schema)?;
            ds.commit_new_columns(pairs, fields).await
        })?))
    }

    /// Removes uncommitted data files (paths relative to `data/`).
    fn remove_data_files(&self, py: Python<'_>, paths: Vec<String>) -> PyResult<()> {
        let ds = self.inner.clone();
        block_on(py, async move {
            ds.remove_data_files(paths.iter().map(String::as_str)).await;
            Ok::<(), lancelet_dataset::Error>(())
        })
    }

    /// Removes old versions and unreferenced files (see `lancelet_dataset::maintain::cleanup`);
    /// `older_than` is in seconds. Returns the statistics as a dict.
    #[pyo3(signature = (options=CleanupArgs::default()))]
    fn cleanup_old_versions<'py>(&self, py: Python<'py>, options: CleanupArgs) -> PyResult<Bound<'py, PyDict>> {
        let older_than = match options.older_than {
            Some(s) if !s.is_finite() || s < 0.0 => {
                return Err(errors::invalid(
                    py,
                    format!("older_than must be a non-negative duration, got {s} seconds"),
                ))
            }
            Some(s) => Some(std::time::Duration::from_secs_f64(s)),
            None => None,
        };
        let defaults = CleanupPolicy::default();
        let policy = CleanupPolicy {
            older_than,
            retain_versions: options.retain_versions,
            versions: options.versions,
            delete_unverified: options.delete_unverified,
            error_if_tagged_old_versions: options.error_if_tagged_old_versions,
            delete_concurrency: options.delete_concurrency.unwrap_or(defaults.delete_concurrency),
            delete_rate_limit: options.delete_rate_limit,
        };
        let ds = self.inner.clone();
        let st = block_on(py, async move { ds.cleanup_old_versions(&policy).await })?;
        counts_dict(
            py,
            &[
                ("bytes_removed", st.bytes_removed),
                ("old_versions", st.old_versions),
                ("data_files_removed", st.data_files_removed),
                ("transaction_files_removed", st.transaction_files_removed),
                ("index_files_removed", st.index_files_removed),
                ("deletion_files_removed", st.deletion_files_removed),
                ("failed_deletes", st.failed_deletes),
            ],
        )
    }

    /// The same dataset, verifying data files' checksums on every read or not.
    fn with_verify_checksums(&self, verify: bool) -> Self {
        wrap(self.inner.as_ref().clone().with_verify_checksums(verify))
    }

    /// Whether data files' checksums are verified on every read.
    fn verifies_checksums(&self) -> bool {
        self.inner.verifies_checksums()
    }

    /// Checks the dataset like fsck (see `lancelet_dataset::maintain::validate`); writes
    /// nothing. A dict of counts, `problems` as `(path, reason)` pairs and `orphans` as
    /// `(path, bytes)` pairs.
    #[pyo3(signature = (version=None, deep=false))]
    fn validate<'py>(&self, py: Python<'py>, version: Option<u64>, deep: bool) -> PyResult<Bound<'py, PyDict>> {
        use lancelet_dataset::maintain::validate::ValidateOptions;
        let ds = self.inner.clone();
        let opts = ValidateOptions { version, deep };
        let r = block_on(py, async move { ds.validate(&opts).await })?;
        let d = counts_dict(
            py,
            &[
                ("versions", r.versions),
                ("data_files", r.data_files),
                ("deletion_files", r.deletion_files),
                ("index_files", r.index_files),
                ("checksummed_files", r.checksummed_files),
                ("bytes_verified", r.bytes_verified),
            ],
        )?;
        let problems: Vec<(String, String)> = r.problems.into_iter().map(|p| (p.path, p.reason)).collect();
        d.set_item("problems", problems)?;
        d.set_item("orphans", r.orphans)?;
        Ok(d)
    }

    /// Sets columns to SQL expressions in the rows matching `filter`:
    /// `(dataset at the new version, rows updated)`.
    /// A conflicting concurrent commit makes it run again as `delete` does.
    #[pyo3(signature = (updates, filter=None, conflict_retries=0, retry_timeout=None))]
    fn update(
        &self,
        py: Python<'_>,
        updates: Vec<(String, String)>,
        filter: Option<String>,
        conflict_retries: u32,
        retry_timeout: Option<f64>,
    ) -> PyResult<(Self, u64)> {
        let policy = retry_policy(py, conflict_retries, retry_timeout)?;
        let ds = self.inner.clone();
        let (ds, res) = block_on(py, async move {
            ds.execute_with_retry(&policy, |ds| {
                let (updates, filter) = (updates.clone(), filter.clone());
                async move { ds.update(&updates, filter.as_deref()).await }
            })
            .await
        })?;
        Ok((wrap(ds), res.num_rows_updated))
    }

    /// Compacts small fragments and materializes deletions: `(dataset at the new version,
    /// metrics dict)`.
    #[pyo3(signature = (target_rows_per_fragment=None, materialize_deletions=None,
        materialize_deletions_threshold=None, batch_size=None))]
    fn compact_files<'py>(
        &self,
        py: Python<'py>,
        target_rows_per_fragment: Option<u64>,
        materialize_deletions: Option<bool>,
        materialize_deletions_threshold: Option<f64>,
        batch_size: Option<u64>,
    ) -> PyResult<(Self, Bound<'py, PyDict>)> {
        // The caller's options; the rest come from `lance.compaction.*` config or defaults.
        let args = lancelet_dataset::maintain::compact_config::CompactionArgs {
            target_rows_per_fragment,
            materialize_deletions,
            materialize_deletions_threshold,
            batch_size,
        };
        let opts = self.inner.compaction_options(&args).map_err(|e| errors::to_py(py, e))?;
        let ds = self.inner.clone();
        let (ds, m) = block_on(py, async move { ds.compact_files(&opts).await })?;
        let out = counts_dict(
            py,
            &[
                ("fragments_removed", m.fragments_removed),
                ("fragments_added", m.fragments_added),
                ("files_removed", m.files_removed),
                ("files_added", m.files_added),
            ],
        )?;
        Ok((wrap(ds), out))
    }

    /// Writes rows in this dataset's schema as new, uncommitted fragments (dicts), for
    /// [`replace_rows`]: the dataset's store, its file format.
    fn write_rows<'py>(&self, py: Python<'py>, data: Bound<'py, PyAny>) -> PyResult<Vec<Bound<'py, PyDict>>> {
        let version = self.inner.data_storage_version();
        let params = WriteOptions {
            mode: Some("append".to_string()),
            data_storage_version: Some(version),
            ..WriteOptions::default()
        }
        .params(py)?;
        let reader: Box<dyn RecordBatchReader + Send> = import_stream(py, &data)?;
        let loc = Location {
            store: self.inner.store().clone(),
            local_root: self.inner.is_local().then(|| self.inner.root().to_path_buf()),
        };
        // Against this version's schema: a merge planned on it commits on top of it.
        let base = (*self.inner).clone();
        let (_, staged) = pull_on_this_thread(py, async move {
            lancelet_dataset::write::write_fragments_on(&loc, Some(base), reader, &params).await
        })?;
        staged.fragments.iter().map(|f| fragment_dict(py, f)).collect()
    }

    /// Tombstones the rows at `addresses` and adds `fragments` (fragment dicts written
    /// earlier) as one Update transaction. With stable row ids, `moved_ids` are the ids
    /// the first rows of `fragments` keep (whole fragments).
    #[pyo3(signature = (addresses, fragments, moved_ids=Vec::new()))]
    fn replace_rows(
        &self,
        py: Python<'_>,
        addresses: Vec<u64>,
        fragments: Vec<Bound<'_, PyAny>>,
        moved_ids: Vec<u64>,
    ) -> PyResult<Self> {
        let fragments = fragments.iter().map(fragment_from_dict).collect::<PyResult<Vec<_>>>()?;
        let ds = self.inner.clone();
        Ok(wrap(block_on(py, async move {
            ds.replace_rows(&addresses, fragments, &moved_ids).await
        })?))
    }

    /// Whether rows have move-stable ids (`_rowid` is then not the row address).
    fn has_stable_row_ids(&self) -> bool {
        self.inner.has_stable_row_ids()
    }

    /// Rows by row id (ids of missing rows skipped), in the order given.
    #[pyo3(signature = (row_ids, columns=None))]
    fn take_row_ids(&self, py: Python<'_>, row_ids: Vec<u64>, columns: Option<Vec<String>>) -> PyResult<BatchStream> {
        let ds = self.inner.clone();
        let batch = block_on(py, async move { ds.take_row_ids(&row_ids, columns.as_deref()).await })?;
        Ok(one_batch(batch))
    }

    /// The change feed from `begin` (exclusive) to `end` (inclusive), over this version's
    /// rows: `(inserted rows, updated rows, deleted row ids or None without stable row ids)`.
    #[pyo3(signature = (begin, end, columns=None))]
    fn changes(
        &self,
        py: Python<'_>,
        begin: u64,
        end: u64,
        columns: Option<Vec<String>>,
    ) -> PyResult<(BatchStream, BatchStream, Option<Vec<u64>>)> {
        let ds = self.inner.clone();
        let c = block_on(py, async move { ds.changes(begin, end, columns.as_deref()).await })?;
        Ok((one_batch(c.inserted), one_batch(c.updated), c.deleted))
    }

    /// The table config (`key -> value`) of this version.
    fn config(&self) -> std::collections::HashMap<String, String> {
        self.inner.manifest().config.clone()
    }

    /// The table metadata (`key -> value`) of this version (pylance's `ds.metadata`).
    fn table_metadata(&self) -> std::collections::HashMap<String, String> {
        self.inner.manifest().table_metadata.clone()
    }

    /// Commits an UpdateConfig transaction changing one key/value map: `target` is
    /// `"config"`, `"table"` (the table metadata) or `"schema"` (the schema metadata). Each
    /// `(key, value)` sets a key (`None` removes it); `replace` drops every other key of the
    /// map first.
    fn update_metadata(
        &self,
        py: Python<'_>,
        target: &str,
        entries: Vec<(String, Option<String>)>,
        replace: bool,
    ) -> PyResult<Self> {
        use lancelet_dataset::maintain::MetadataTarget as T;
        let target = match target {
            "config" => T::Config,
            "table" => T::Table,
            "schema" => T::Schema,
            other => {
                return Err(crate::errors::invalid(
                    py,
                    format!("update_metadata: unknown target {other:?}"),
                ))
            }
        };
        let ds = self.inner.clone();
        Ok(wrap(block_on(py, async move {
            ds.update_metadata(target, entries, replace).await
        })?))
    }

    /// Commits one UpdateConfig transaction changing the metadata of several fields:
    /// `(dotted path, [(key, value)])`, as `update_metadata`'s entries.
    fn update_field_metadata(
        &self,
        py: Python<'_>,
        updates: Vec<(String, lancelet_dataset::maintain::MapChanges)>,
        replace: bool,
    ) -> PyResult<Self> {
        let ds = self.inner.clone();
        Ok(wrap(block_on(py, async move {
            ds.update_field_metadata(updates, replace).await
        })?))
    }

    /// Commits a new version equal to this one.
    fn restore(&self, py: Python<'_>) -> PyResult<Self> {
        let ds = self.inner.clone();
        Ok(wrap(block_on(py, async move { ds.restore().await })?))
    }

    /// `(name, version, manifest_size, branch, created_at, updated_at)` of every tag.
    #[allow(
        clippy::type_complexity,
        reason = "plain tuples mirror the Python values they convert"
    )]
    fn tags(
        &self,
        py: Python<'_>,
    ) -> PyResult<Vec<(String, u64, u64, Option<String>, Option<String>, Option<String>)>> {
        let ds = self.inner.clone();
        let tags = block_on(py, async move { ds.tags().await })?;
        Ok(tags
            .into_iter()
            .map(|t| (t.name, t.version, t.manifest_size, t.branch, t.created_at, t.updated_at))
            .collect())
    }

    /// Rows at live offsets `indices` of fragment `fragment_id`.
    #[pyo3(signature = (fragment_id, indices, columns=None))]
    fn fragment_take(
        &self,
        py: Python<'_>,
        fragment_id: u64,
        indices: Vec<i64>,
        columns: Option<Vec<String>>,
    ) -> PyResult<BatchStream> {
        let idx = row_indices(py, indices)?;
        let ds = self.inner.clone();
        let batch = block_on(py, async move {
            ds.take_in_fragment(fragment_id, &idx, columns.as_deref()).await
        })?;
        Ok(one_batch(batch))
    }

    /// Creates, moves (`update`) or deletes a tag.
    #[pyo3(signature = (action, name, version=None))]
    fn tag(&self, py: Python<'_>, action: &str, name: String, version: Option<u64>) -> PyResult<()> {
        let ds = self.inner.clone();
        let action = action.to_string();
        block_on(py, async move {
            match (action.as_str(), version) {
                ("create", Some(v)) => ds.create_tag(&name, v).await,
                ("update", Some(v)) => ds.update_tag(&name, v).await,
                ("delete", _) => ds.delete_tag(&name).await,
                _ => Err(lancelet_dataset::Error::InvalidArgument(format!(
                    "bad tag action {action:?}"
                ))),
            }
        })
    }
}

/// Cuts fragments `(id, physical rows, data file bytes)` into partitions of
/// `(fragment id, start, end)` row ranges (see `lancelet_dataset::scan::partitions`).
#[pyfunction]
#[pyo3(signature = (fragments, rows_per_partition=None, max_partitions=None, min_partitions=None))]
fn plan_partitions(
    fragments: Vec<(u64, u64, u64)>,
    rows_per_partition: Option<u64>,
    max_partitions: Option<u64>,
    min_partitions: Option<u64>,
) -> Vec<Vec<(u64, u64, u64)>> {
    use lancelet_dataset::scan::partitions::{FragmentSize, PartitionOptions};
    let sizes: Vec<FragmentSize> = fragments
        .into_iter()
        .map(|(id, rows, bytes)| FragmentSize { id, rows, bytes })
        .collect();
    let opts = PartitionOptions {
        rows_per_partition,
        max_partitions,
        min_partitions,
    };
    lancelet_dataset::scan::partitions::plan_partitions(&sizes, opts)
        .into_iter()
        .map(|p| p.into_iter().map(|(f, r)| (f, r.start, r.end)).collect())
        .collect()
}

/// Removes the dataset at `uri` (pylance's `LanceDataset.drop`).
#[pyfunction]
#[pyo3(signature = (uri, storage_options=None, ignore_not_found=false))]
fn drop_dataset(
    py: Python<'_>,
    uri: &str,
    storage_options: Option<HashMap<String, String>>,
    ignore_not_found: bool,
) -> PyResult<()> {
    let loc = location(py, uri, storage_options)?;
    block_on(py, async move {
        lancelet_dataset::drop_dataset(&loc, ignore_not_found).await
    })
}

pub fn init(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let defaults = WriteParams::default();
    m.add("DEFAULT_MAX_ROWS_PER_FILE", defaults.max_rows_per_file)?;
    m.add("DEFAULT_MAX_BYTES_PER_FILE", defaults.max_bytes_per_file)?;
    m.add_class::<PyDataset>()?;
    m.add_class::<PyScanStats>()?;
    m.add_function(wrap_pyfunction!(plan_partitions, m)?)?;
    m.add_function(wrap_pyfunction!(drop_dataset, m)?)?;
    Ok(())
}

/// The retry policy of a write that may conflict: `timeout` in seconds.
pub(crate) fn retry_policy(
    py: Python<'_>,
    retries: u32,
    timeout: Option<f64>,
) -> PyResult<lancelet_dataset::commit::retry::RetryPolicy> {
    let timeout = match timeout {
        Some(t) if !t.is_finite() || t < 0.0 => {
            return Err(errors::invalid(
                py,
                format!("retry_timeout must be a non-negative duration, got {t} seconds"),
            ))
        }
        Some(t) => Some(std::time::Duration::from_secs_f64(t)),
        None => None,
    };
    Ok(lancelet_dataset::commit::retry::RetryPolicy::new(retries, timeout))
}
