"""Lance datasets, with the API of pylance's ``lance`` module.

Example::

    import lancelet
    ds = lancelet.write_dataset(table, "/data/items.lance")          # version 1
    lancelet.write_dataset(more, "/data/items.lance", mode="append")  # version 2
    ds = lancelet.dataset("/data/items.lance")
    ds.to_table(columns=["id", "caption"], filter="score > 0.5 AND lang = 'en'", limit=100)
    ds.take([0, 10, 20])
    ds.delete("id < 10")
    ds.tags.create("reviewed", 2)
    lancelet.dataset("/data/items.lance", version="reviewed").count_rows()

Datasets are directories of data files plus versioned manifests; every write commits a new
version atomically, and concurrent writers retry automatically unless their changes
conflict (then :class:`~lancelet.CommitConflictError`). lancelet writes Lance file formats
2.0, 2.1 and 2.2 (2.2 by default, as pylance 14) and reads datasets of those formats and of
the legacy format 0.1 written by pylance. URIs may be local
paths, ``memory://name`` or ``s3://bucket/prefix`` (with ``storage_options``).

This module holds :func:`dataset`, :func:`write_dataset` and :class:`LanceDataset`; the
rest of the dataset API lives beside it (and is importable from here too, as from
pylance's ``lance.dataset``):

- ``scanner.py``: :class:`LanceScanner`, the checks of ``scanner()``'s options, ``ScanStatistics``;
- ``fragment.py``: :class:`LanceFragment`, ``FragmentMetadata``, ``write_fragments``;
- ``optimize.py``: ``ds.optimize`` (compaction, index optimization) and version cleanup;
- ``indices.py``: index building and statistics (``LanceDataset`` inherits ``IndexMethods``);
- ``_branches.py``: tags, branches, clones and base paths; ``_delta.py``: change data feeds;
- ``_argcheck.py``: argument checks; ``_inputs.py``: data and ``progress=`` as write calls take them.
"""

from __future__ import annotations

import datetime as _dt
import os
import random
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple, TypedDict, Union

import pyarrow as pa

# (`from m import x as x`: helpers that moved from here to m, importable from here as before.)
from . import _argcheck, _branches, _dropin, _expressions, _namespace_io, _operations, _paths, _rowoffset
from . import blob as _blob
from ._argcheck import (
    _alterations,
    _check_int_version,
    _check_version,
    _Columns,
    _exprs,
    _filter,
    _indices,
    _names,
    _native_uri,
    _retry_args,
    _storage_options,
)
from ._argcheck import _as_int as _as_int
from ._argcheck import _check_write_args as _check_write_args
from ._argcheck import _parse_time as _parse_time
from ._arrow_dataset import ArrowDatasetBase
from ._branches import Branches, DatasetBasePath
from ._delta import DatasetDelta, change_feed, delta_between
from ._handle import DatasetHandle
from ._inputs import WriteProgress, _as_reader, _progress_callback
from ._inputs import _is_pandas as _is_pandas
from ._native import dataset as _native_dataset
from .errors import CorruptFileError, InvalidArgumentError, UnsupportedFeatureError
from .evolve import BatchUDF, backfill, batch_udf
from .file import ReaderResults
from .fragment import DataFile, FragmentMetadata, LanceFragment
from .indices import IndexMethods, index_stats
from .merge import MergeInsertBuilder, merge_columns
from .optimize import (
    CleanupStats,
    CompactionMetrics,
    DatasetOptimizer,
    ValidationReport,
    cleanup_versions,
    validate_dataset,
)
from .scanner import _HANDLED_SCAN_KWARGS as _HANDLED_SCAN_KWARGS
from .scanner import _IGNORED_SCAN_OPTIONS as _IGNORED_SCAN_OPTIONS
from .scanner import _UNSUPPORTED_SCAN_OPTIONS as _UNSUPPORTED_SCAN_OPTIONS
from .scanner import ColumnOrdering, LanceScanner, ScanStatistics, make_scanner
from .scanner import _reporting as _reporting
from .schema import LanceSchema

__all__ = [
    "dataset",
    "write_dataset",
    "LanceDataset",
    "LanceScanner",
    "LanceFragment",
    "LanceOperation",
    "Transaction",
    "ColumnOrdering",
    "CleanupStats",
    "ValidationReport",
    "CompactionMetrics",
    "DataFile",
    "DatasetDelta",
    "DatasetOptimizer",
    "FragmentMetadata",
    "Index",
    "IndexFile",
    "LanceStats",
    "ScanStatistics",
    "Tags",
    "WriteProgress",
    # pylance's lance.dataset offers these too (they live in the modules named above).
    "BatchUDF",
    "batch_udf",
    "Branches",
    "DatasetBasePath",
    "MergeInsertBuilder",
    "AutoCleanupConfig",
    "LANCE_COMMIT_MESSAGE_KEY",
]

#: The transaction property holding a commit's message (``commit_message=`` of writes and
#: commits): ``ds.versions()`` and the transactions read it back, as in pylance.
LANCE_COMMIT_MESSAGE_KEY: str = _operations.COMMIT_MESSAGE_KEY


class AutoCleanupConfig(TypedDict):
    """``write_dataset(..., auto_cleanup_options=...)``: every ``interval`` commits, remove
    versions older than ``older_than_seconds`` (pylance's ``lance.dataset.AutoCleanupConfig``).

    >>> AutoCleanupConfig(interval=20, older_than_seconds=3600)
    {'interval': 20, 'older_than_seconds': 3600}
    """

    interval: int
    older_than_seconds: int


def dataset(
    uri: Optional[Union[str, Path]] = None,
    version: Optional[Union[int, str]] = None,
    asof: Optional[Union[_dt.datetime, str]] = None,
    block_size: Optional[int] = None,
    commit_lock: Any = None,
    index_cache_size: Optional[int] = None,
    storage_options: Optional[Dict[str, str]] = None,
    default_scan_options: Optional[Dict[str, Any]] = None,
    metadata_cache_size_bytes: Optional[int] = None,
    index_cache_size_bytes: Optional[int] = None,
    read_params: Optional[Dict[str, Any]] = None,
    session: Any = None,
    namespace_client: Any = None,
    table_id: Optional[List[str]] = None,
    *,
    allow_external_blob_outside_bases: bool = False,
    verify_checksums: bool = True,
) -> "LanceDataset":
    """Opens the dataset at ``uri``, or table ``table_id`` of ``namespace_client`` (a
    ``lance_namespace.LanceNamespace``, e.g. :class:`lancelet.namespace.DirectoryNamespace`).

    ``version`` is a version number or a tag name (the latest version when None);
    ``asof`` opens the newest version committed before a time (a ``datetime``, naive
    meaning local time, or an ISO string).
    ``default_scan_options`` is a dict of :meth:`LanceDataset.scanner` arguments used by
    every scan of the dataset (``to_table``, ``to_batches``, ``head``, ``scanner``...) unless
    the call gives them; like pylance, ``count_rows``, ``take`` and fragment scans ignore
    it. ``block_size``, ``commit_lock``, ``index_cache_size``, the cache sizes,
    ``read_params`` and ``session`` are accepted for pylance compatibility and ignored.
    ``verify_checksums`` (default True) checks every read of a data file lancelet wrote
    against the CRC32C checksums it carries, raising :class:`lancelet.errors.CorruptFileError`
    (naming the file, the column and the page) on damaged bytes; ``False`` reads without
    checking, to salvage what can be read. Files without checksums (pylance's) read as before.
    ``allow_external_blob_outside_bases=True`` lets blob reads follow external blob URIs that
    lie outside the dataset's registered base paths (see "Untrusted datasets" in the README:
    off by default, since such a URI can name any local file or object).
    ``commit_lock`` is a callable ``lock(version) -> context manager`` entered around every
    commit made through the returned dataset (and datasets derived from it), called with
    the version being committed, as in pylance; an exception from it stops the commit
    with nothing written. Commits are atomic without one: it is for coordinating writers.

    >>> lancelet.dataset("/data/items.lance", commit_lock=lambda v: my_lock)  # doctest: +SKIP

    >>> ds = lancelet.dataset("/data/items.lance", version=3)  # doctest: +SKIP
    """
    if read_params is not None and not isinstance(read_params, dict):
        raise InvalidArgumentError(f"read_params must be a dict, got {type(read_params).__name__}")
    if commit_lock is not None and not callable(commit_lock):
        raise TypeError(f"commit_lock must be a function, got {type(commit_lock)}")
    uri, storage_options, managed = _namespace_io.resolve_read(uri, namespace_client, table_id, storage_options)
    ds = LanceDataset(
        uri,
        version=version,
        storage_options=storage_options,
        default_scan_options=default_scan_options,
        _commit_namespace=managed,
        allow_external_blob_outside_bases=allow_external_blob_outside_bases,
    )
    if not verify_checksums:
        ds._move_to(ds._native.with_verify_checksums(False))
    ds._use_commit_lock(commit_lock)
    if asof is not None:
        if version is not None:
            raise InvalidArgumentError("pass version= or asof=, not both")
        ds = ds._asof(asof)
    return ds


def write_dataset(
    data_obj: Any,
    uri: Optional[Union[str, Path, "LanceDataset"]] = None,
    schema: Optional[pa.Schema] = None,
    mode: str = "create",
    *,
    max_rows_per_file: int = _native_dataset.DEFAULT_MAX_ROWS_PER_FILE,
    max_rows_per_group: int = 1024,
    max_bytes_per_file: int = _native_dataset.DEFAULT_MAX_BYTES_PER_FILE,
    data_storage_version: Optional[str] = None,
    use_legacy_format: Optional[bool] = None,
    enable_v2_manifest_paths: bool = True,
    storage_options: Optional[Dict[str, str]] = None,
    commit_message: Optional[str] = None,
    progress: Any = None,
    transaction_properties: Optional[Dict[str, str]] = None,
    namespace_client: Any = None,
    table_id: Optional[List[str]] = None,
    **kwargs: Any,
) -> "LanceDataset":
    """Writes ``data_obj`` as a dataset at ``uri`` and returns it at the new version.

    Instead of ``uri``, ``namespace_client`` + ``table_id`` write table ``table_id`` of a
    namespace (``mode="create"`` declares it there first), as in pylance.

    ``mode`` is ``"create"`` (fail if a dataset exists), ``"append"`` (create if absent) or
    ``"overwrite"`` (a new version holding only this data; history is kept). Input is
    streamed: a table, batch, list or iterator of batches, RecordBatchReader, pandas
    DataFrame, or anything with ``__arrow_c_stream__`` (polars, DuckDB...). Data files are
    cut every ``max_rows_per_file`` rows or ``max_bytes_per_file`` bytes; each becomes a
    fragment. ``progress=True`` shows a progress bar (needs tqdm: ``lancelet[progress]``);
    a callable receives :data:`WriteProgress` tuples; a
    :class:`lancelet.progress.FragmentWriteProgress` is told about each new fragment.
    ``data_obj`` may also be a dict of columns or a list of row dicts, as in pylance.
    ``transaction_properties`` (a dict of strings) are recorded in the transaction, with
    ``commit_message`` under pylance's ``"__lance_commit_message"`` key; read them back with
    :meth:`LanceDataset.read_transaction`.

    ``enable_stable_row_ids=True`` (when creating) gives every row a move-stable ``_rowid``
    that survives updates and compaction, and records the version each row was created
    and last updated at (``_row_created_at_version``, ``_row_last_updated_at_version``),
    which :meth:`LanceDataset.delta` uses for change data feeds.

    >>> lancelet.write_dataset(pa.table({"id": [1, 2]}), "/tmp/ids.lance")  # doctest: +SKIP
    """
    if use_legacy_format:
        data_storage_version = "legacy"
    _check_write_args(
        mode, data_storage_version, max_rows_per_file, max_rows_per_group, max_bytes_per_file, kwargs, "write_dataset"
    )
    uri, storage_options, managed = _namespace_io.resolve_write(uri, namespace_client, table_id, mode, storage_options)
    if managed is None and isinstance(uri, LanceDataset):
        managed = uri._commit_namespace
    properties = _operations.properties(transaction_properties, None)
    path = _native_uri(uri, storage_options)
    _paths.check_write_target(path)
    lock = kwargs.get("commit_lock")
    if lock is None and isinstance(uri, LanceDataset):
        lock = uri._commit_lock
    cleanup = kwargs.get("auto_cleanup_options")
    # The native write takes the lock around its commit and records the config in it.
    kwargs["commit_lock"] = lock
    kwargs["_config"] = None if cleanup is None else _argcheck.auto_cleanup_config(cleanup, defaults=True)
    ds = _write(
        data_obj, uri, path, schema, mode, managed, properties, kwargs, storage_options, max_rows_per_file,
        max_bytes_per_file, enable_v2_manifest_paths, data_storage_version, commit_message, progress,
    )  # fmt: skip
    if kwargs.get("allow_external_blob_outside_bases"):
        # The writer chose to reference objects outside the bases: it may read them back.
        ds._move_to(_native_dataset.ds_allow_external_blobs(ds._native, True))
    return ds


def _write(
    data_obj: Any,
    uri: Any,
    path: str,
    schema: Optional[pa.Schema],
    mode: str,
    managed: Any,
    properties: Dict[str, str],
    kwargs: Dict[str, Any],
    storage_options: Optional[Dict[str, str]],
    max_rows_per_file: int,
    max_bytes_per_file: int,
    enable_v2_manifest_paths: bool,
    data_storage_version: Optional[str],
    commit_message: Optional[str],
    progress: Any,
) -> "LanceDataset":
    """The commit of :func:`write_dataset` (its arguments checked)."""
    name = str(uri.uri if isinstance(uri, LanceDataset) else uri)
    if _branches.uses_bases(kwargs):  # initial_bases / target_bases: see docs/branches.md
        native, options = _branches.write_with_bases(
            _as_reader(data_obj, schema),
            path,
            mode,
            kwargs,
            storage_options,
            max_rows_per_file,
            max_bytes_per_file,
            data_storage_version,
            commit_message,
        )
        return LanceDataset._from_native(name, path, native, options, commit_lock=kwargs.get("commit_lock"))
    reader = _as_reader(data_obj, schema)
    callback = _progress_callback(progress)
    try:
        native = _paths.creating(
            path,
            lambda: _native_dataset.Dataset.write(
                path,
                reader,
                {
                    "mode": mode,
                    "max_rows_per_file": max_rows_per_file,
                    "max_bytes_per_file": max_bytes_per_file,
                    "enable_v2_manifest_paths": enable_v2_manifest_paths,
                    "data_storage_version": data_storage_version,
                    "commit_message": commit_message,
                    "progress": callback,
                    "storage_options": _storage_options(storage_options),
                    "enable_stable_row_ids": bool(kwargs.get("enable_stable_row_ids", False)),
                    "blob_options": _blob.write_options(kwargs),
                    "transaction_properties": properties or None,
                    "commit_namespace": managed,
                    "commit_lock": kwargs.get("commit_lock"),
                    "config": kwargs.get("_config"),
                },
            ),
        )
    finally:
        close = getattr(callback, "close", None)
        if close is not None:
            close()
    ds = LanceDataset._from_native(
        name, path, native, _storage_options(storage_options), managed, commit_lock=kwargs.get("commit_lock")
    )
    report = getattr(callback, "report", None)
    files = getattr(callback, "files", 0)
    if report is not None and files:
        report([f.metadata for f in ds.get_fragments()[-files:]])
    return ds


class LanceStats:
    """Statistics about a dataset version (``ds.stats``), as in pylance."""

    def __init__(self, ds: "LanceDataset"):
        self._ds = ds

    def dataset_stats(self, max_rows_per_group: int = 1024) -> Dict[str, int]:
        """``{"num_deleted_rows", "num_fragments", "num_small_files"}``; a small file holds
        fewer than ``max_rows_per_group`` rows (a hint that compaction would help)."""
        frags = self._ds._native.fragments()
        return {
            "num_deleted_rows": sum(f["physical_rows"] - f["num_rows"] for f in frags),
            "num_fragments": len(frags),
            "num_small_files": sum(1 for f in frags for _ in f["files"] if f["physical_rows"] < max_rows_per_group),
        }

    def index_stats(self, index_name: str) -> Dict[str, Any]:
        """Coverage of index ``index_name`` (see :meth:`LanceDataset.index_statistics`)."""
        return index_stats(self._ds, index_name)


# Tags of a dataset (on any branch): the class lives with the branches.
Tags = _branches.Tags


def _reopen(
    uri: str,
    path: str,
    version: int,
    storage_options: Optional[Dict[str, str]],
    default_scan_options: Optional[Dict[str, Any]],
    allow_external_blobs: bool = False,
) -> "LanceDataset":
    """A pickled dataset (see ``LanceDataset.__reduce__``), opened again at its version."""
    native = _native_dataset.Dataset.open(path, version, _storage_options(storage_options))
    if allow_external_blobs:
        native = _native_dataset.ds_allow_external_blobs(native, True)
    return LanceDataset._from_native(uri, path, native, storage_options, default_scan_options=default_scan_options)


class LanceOperation:
    """Operations :meth:`LanceDataset.commit` applies, as in pylance: ``Append``,
    ``Overwrite``, ``Delete``, ``Update``, ``Merge``, ``Project``, ``Restore``,
    ``DataReplacement``, ``Rewrite``, ``CreateIndex``, ``UpdateConfig`` and ``Clone`` (see
    :mod:`lancelet._operations`)."""

    BaseOperation = _operations.BaseOperation
    Delete = _operations.Delete
    Update = _operations.Update
    Merge = _operations.Merge
    Project = _operations.Project
    Restore = _operations.Restore
    DataReplacementGroup = _operations.DataReplacementGroup
    DataReplacement = _operations.DataReplacement
    RewriteGroup = _operations.RewriteGroup
    RewrittenIndex = _operations.RewrittenIndex
    Rewrite = _operations.Rewrite
    CreateIndex = _operations.CreateIndex
    UpdateMap = _operations.UpdateMap
    UpdateConfig = _operations.UpdateConfig
    Clone = _operations.Clone

    class Append(_operations.BaseOperation):
        """Adds ``fragments`` (written with :func:`lancelet.fragment.write_fragments`) to the dataset."""

        def __init__(self, fragments: Iterable[FragmentMetadata]):
            self.fragments = list(fragments)
            for f in self.fragments:
                if not isinstance(f, FragmentMetadata):
                    raise TypeError(f"expected FragmentMetadata, got {type(f).__name__}")

        def __repr__(self) -> str:
            return f"LanceOperation.Append(fragments={self.fragments})"

        def __eq__(self, other: object) -> bool:
            return isinstance(other, LanceOperation.Append) and self.fragments == other.fragments

    class Overwrite(_operations.BaseOperation):
        """Replaces the dataset's rows with ``fragments`` and its schema with ``new_schema``
        (creating the dataset if absent)."""

        def __init__(self, new_schema: Any, fragments: Iterable[FragmentMetadata]):
            if isinstance(new_schema, _operations.LanceSchema):
                new_schema = new_schema.to_pyarrow()
            if not isinstance(new_schema, pa.Schema):
                raise TypeError(f"new_schema must be a pyarrow.Schema, got {type(new_schema).__name__}")
            self.new_schema = new_schema
            self.fragments = list(LanceOperation.Append(fragments).fragments)

        def __repr__(self) -> str:
            return f"LanceOperation.Overwrite(new_schema={self.new_schema}, fragments={self.fragments})"

        def __eq__(self, other: object) -> bool:
            return (
                isinstance(other, LanceOperation.Overwrite)
                and self.new_schema == other.new_schema
                and self.fragments == other.fragments
            )


#: pylance's ``Transaction``: an operation, its read version and its properties.
Transaction = _operations.Transaction
#: pylance's ``lance.dataset.Index``: one index segment (see ``create_index_uncommitted``).
Index = _operations.Index
#: pylance's ``lance.dataset.IndexFile``: one file of an index segment.
IndexFile = _operations.IndexFile


class LanceDataset(DatasetHandle, IndexMethods, ArrowDatasetBase):
    """One version of a Lance dataset.

    Reading methods see the version this object was opened at; writing methods
    (``delete``, ``restore``) commit a new version and move this object to it. The native
    handle and the options the dataset was opened with are kept by its base class,
    :class:`lancelet._handle.DatasetHandle`.
    """

    def __init__(
        self,
        uri: Union[str, Path],
        version: Optional[Union[int, str]] = None,
        storage_options: Optional[Dict[str, str]] = None,
        default_scan_options: Optional[Dict[str, Any]] = None,
        *,
        _commit_namespace: Optional[_namespace_io.CommitNamespace] = None,
        allow_external_blob_outside_bases: bool = False,
    ):
        path = _native_uri(uri, storage_options)
        branch_ref = version if isinstance(version, tuple) else None
        self._init(
            os.fspath(uri) if isinstance(uri, os.PathLike) else str(uri),
            path,
            _native_dataset.Dataset.open(
                path,
                None if branch_ref else _check_version(version),
                _storage_options(storage_options),
                commit_namespace=_commit_namespace,
            ),
        )
        if allow_external_blob_outside_bases:
            self._native = _native_dataset.ds_allow_external_blobs(self._native, True)
        self._storage_options = _storage_options(storage_options)
        self._commit_namespace = _commit_namespace
        self._default_scan_options = _dropin.check_default_scan_options(default_scan_options)
        if branch_ref is not None:  # (branch, version): see checkout_version
            other = self._on_branch(_branches.checkout(self, branch_ref))
            self._init(other.uri, other._path, other._native)
        elif isinstance(version, str) and self._native.uri() != path:
            self._init(self._native.uri(), self._native.uri(), self._native)  # a tag on another branch

    def _on_branch(self, native: Any) -> "LanceDataset":
        """A dataset over ``native``, a version of this dataset that may be on another
        branch (then at another root, without this one's commit namespace and lock)."""
        if native.uri() == self._native.uri():
            return self._with(native)
        return LanceDataset._from_native(
            native.uri(), native.uri(), native, self._storage_options, default_scan_options=self._default_scan_options
        )

    def __reduce__(self) -> tuple:
        # Pickles as (uri, version, storage options, default scan options): unpickling opens
        # the dataset again at the same version, in whatever process it happens.
        path = self._path
        if _paths.is_local(path):
            path = os.path.abspath(path)  # the unpickling process may run elsewhere
        allow = _native_dataset.ds_external_blobs_allowed(self._native)
        return _reopen, (self.uri, path, self.version, self._storage_options, self._default_scan_options, allow)

    # -- versions ---------------------------------------------------------------------

    @property
    def version(self) -> int:
        """The version this object reads."""
        return self._native.version()

    @property
    def latest_version(self) -> int:
        """The newest version of the dataset."""
        return self._native.latest_version()

    @property
    def schema(self) -> pa.Schema:
        """The table schema."""
        return pa.schema(self._native)

    @property
    def lance_schema(self) -> LanceSchema:
        """The schema with the dataset's field ids (pylance's ``lance_schema``):
        ``fields()`` gives each field's ``name()``, ``id()``, ``children()`` and
        ``metadata``; it prints as pylance prints it.

        >>> [(f.name(), f.id()) for f in ds.lance_schema.fields()]  # doctest: +SKIP
        [('x', 0), ('s', 1)]
        """
        native = self._native
        return LanceSchema(
            self.schema,
            list(_native_dataset.dataset_field_ids(native)),
            _debug=_native_dataset.schema_debug(native, False),
        )

    @property
    def data_storage_version(self) -> str:
        """The Lance file format of the data files, e.g. ``"2.2"``."""
        return self._native.data_storage_version()

    @property
    def has_stable_row_ids(self) -> bool:
        """Whether rows have move-stable ids: ``_rowid`` then survives updates and compaction
        and is not the row address, and rows record the versions they were created and last
        updated at (see :meth:`delta`)."""
        return self._native.has_stable_row_ids()

    @property
    def stats(self) -> "LanceStats":
        """Cheap statistics from the manifest: ``ds.stats.dataset_stats()``."""
        return LanceStats(self)

    @property
    def optimize(self) -> DatasetOptimizer:
        """Maintenance operations: ``optimize.compact_files(...)``."""
        return DatasetOptimizer(self)

    @property
    def tags(self) -> "_branches.Tags":
        """Named versions: ``ds.tags.create("v1", 1)``, ``lancelet.dataset(uri, version="v1")``;
        ``ds.tags.create("t", ("dev", 2))`` tags a branch's version."""
        return _branches.Tags(self)

    @property
    def branches(self) -> "_branches.Branches":
        """The dataset's branches: ``ds.branches.list()``, ``.list_ordered()``, ``.delete(name)``
        (see docs/branches.md)."""
        return _branches.Branches(self)

    def create_branch(
        self, branch: str, reference: "_branches.Reference" = None, storage_options: Optional[Dict[str, str]] = None
    ) -> "LanceDataset":
        """Creates branch ``branch`` from ``reference`` (a version of this branch, a tag,
        ``(branch, version)``, or None: this branch's newest version) and returns the dataset
        on it, at ``{root}/tree/{branch}``. Writes to that dataset (or to its URI) go to the
        branch. A branch that exists already is a ``DatasetAlreadyExistsError``.

        >>> dev = ds.create_branch("dev")  # doctest: +SKIP
        >>> lancelet.write_dataset(more, dev, mode="append")  # doctest: +SKIP
        """
        return self._on_branch(_branches.create_branch(self, branch, reference))

    def shallow_clone(
        self,
        target_path: Union[str, Path],
        reference: "_branches.Reference",
        storage_options: Optional[Dict[str, str]] = None,
        **kwargs: Any,
    ) -> "LanceDataset":
        """Clones version ``reference`` to ``target_path`` without copying data: the clone
        reads this dataset's files through a base path, and writes its own. Cleaning up the
        source later may remove files the clone needs (as in pylance): clone deeply to be safe.

        >>> clone = ds.shallow_clone("/data/experiment.lance", ds.version)  # doctest: +SKIP
        """
        return self._clone(target_path, reference, False, storage_options)

    def deep_clone(
        self,
        target_path: Union[str, Path],
        reference: "_branches.Reference",
        storage_options: Optional[Dict[str, str]] = None,
        **kwargs: Any,
    ) -> "LanceDataset":
        """Clones version ``reference`` to ``target_path`` with copies of its data, deletion
        and index files (wherever they live, other base paths included).

        >>> copy = ds.deep_clone("/backup/items.lance", "release")  # doctest: +SKIP
        """
        return self._clone(target_path, reference, True, storage_options)

    def _clone(
        self, target_path: Any, reference: "_branches.Reference", deep: bool, storage_options: Optional[Dict[str, str]]
    ) -> "LanceDataset":
        path, native, options = _branches.clone(self, target_path, reference, deep, storage_options)
        uri = os.fspath(target_path) if isinstance(target_path, os.PathLike) else str(target_path)
        return LanceDataset._from_native(uri, path, native, options)

    def base_paths(self) -> Dict[int, "_branches.DatasetBasePath"]:
        """The other storage roots of this version, by id.

        >>> ds.base_paths()  # doctest: +SKIP
        {1: DatasetBasePath(path='/mnt/fast', name='fast', is_dataset_root=False, id=1)}
        """
        return _branches.base_paths(self)

    def add_bases(
        self, new_bases: List["_branches.DatasetBasePath"], transaction_properties: Optional[Dict[str, str]] = None
    ) -> "LanceDataset":
        """Registers more base paths (a new version); returns this dataset, moved to it.

        >>> ds.add_bases([lancelet.DatasetBasePath("/mnt/archive", name="archive")])  # doctest: +SKIP
        """
        self._native = _branches.add_bases(self, new_bases)
        return self

    def versions(self) -> List[Dict[str, Any]]:
        """Every version, oldest first: ``{"version", "timestamp", "metadata"}``."""
        out = []
        for v, secs, nanos, rows, meta in self._native.versions():
            # pylance 14 splits the nanosecond count in float arithmetic (which loses up to
            # a few hundred ns at today's epochs) and drops the sub-microsecond rest; the
            # same steps give the same datetime.
            total = secs * 1_000_000_000 + nanos
            ts = _dt.datetime.fromtimestamp(total // 1e9) + _dt.timedelta(microseconds=(total % 1e9) // 1e3)
            metadata = {"total_rows": str(rows), **meta}
            out.append({"version": v, "timestamp": ts, "metadata": metadata})
        return out

    @staticmethod
    def commit(
        base_uri: Union[str, Path, "LanceDataset"],
        operation: Union[_operations.BaseOperation, "Transaction"],
        read_version: Optional[int] = None,
        commit_lock: Any = None,
        storage_options: Optional[Dict[str, str]] = None,
        enable_v2_manifest_paths: Optional[bool] = None,
        detached: bool = False,
        max_retries: int = 20,
        *,
        commit_message: Optional[str] = None,
        **kwargs: Any,
    ) -> "LanceDataset":
        """Commits ``operation`` (fragments written apart, see
        :func:`lancelet.fragment.write_fragments`) as one new version and returns it.

        ``read_version`` is the version the fragments were planned against; concurrent
        commits since then are checked for conflicts and retried as for any write.
        ``operation`` is any :class:`LanceOperation` (Append, Overwrite, Delete, Update, Merge,
        Project, Restore, DataReplacement, Rewrite, CreateIndex, UpdateConfig, Clone) or a
        :class:`Transaction` (its read version and properties are used). A Clone is
        committed to a new location (``read_version`` is recorded only). ``commit_message``
        is recorded in the transaction's properties as pylance records it. A dataset opened
        through a namespace that manages its versions commits through that namespace; so does
        a ``base_uri`` given with pylance's ``namespace_client=``, ``table_id=`` and
        ``namespace_client_managed_versioning=True``.

        >>> op = lancelet.LanceOperation.Append(frags)  # doctest: +SKIP
        >>> ds = lancelet.LanceDataset.commit("/tmp/items.lance", op, read_version=3)  # doctest: +SKIP
        """
        if detached:
            raise UnsupportedFeatureError("detached commits are not supported")
        if kwargs.get("enable_stable_row_ids"):
            raise UnsupportedFeatureError(
                "commit() cannot enable stable row ids; create the dataset with "
                "write_dataset(..., enable_stable_row_ids=True)"
            )
        txn_props: Optional[Dict[str, str]] = None
        if isinstance(operation, _operations.Transaction):
            if read_version is None:
                read_version = operation.read_version
            txn_props = operation.transaction_properties
            operation = operation.operation
        if read_version is not None and not (isinstance(operation, _operations.Clone) and read_version == 0):
            # A Clone goes to a new location: read version 0 (nothing) is what pylance's users pass.
            read_version = _check_int_version(read_version)
        props = _operations.properties(txn_props, None)
        uri = base_uri.uri if isinstance(base_uri, LanceDataset) else base_uri
        path = _native_uri(uri, storage_options)
        _paths.check_write_target(path)
        lock = commit_lock
        if lock is None and isinstance(base_uri, LanceDataset):
            lock = base_uri._commit_lock
        return LanceDataset._commit(
            base_uri,
            uri,
            path,
            operation,
            read_version,
            props,
            storage_options,
            enable_v2_manifest_paths,
            max_retries,
            commit_message,
            dict(kwargs, commit_lock=lock),
        )

    @staticmethod
    def drop(
        base_uri: Union[str, Path], storage_options: Optional[Dict[str, str]] = None, ignore_not_found: bool = False
    ) -> None:
        """Removes the dataset at ``base_uri``: every version, data file, index and branch
        (on local disk the folder itself), as pylance's ``LanceDataset.drop``. No dataset
        there is ``LanceNotFoundError`` (an ``OSError``) unless ``ignore_not_found``.

        >>> lancelet.LanceDataset.drop("old.lance")  # doctest: +SKIP
        """
        path = _native_uri(base_uri, storage_options)
        _native_dataset.drop_dataset(path, storage_options, bool(ignore_not_found))

    @staticmethod
    def commit_batch(
        dest: Union[str, Path, "LanceDataset"],
        transactions: Sequence["Transaction"],
        commit_lock: Any = None,
        storage_options: Optional[Dict[str, str]] = None,
        enable_v2_manifest_paths: Optional[bool] = None,
        detached: bool = False,
        max_retries: int = 20,
        **kwargs: Any,
    ) -> Dict[str, Any]:
        """Commits several Append transactions as one new version, as pylance's
        ``commit_batch``: their fragments in order, read at the earliest of their read
        versions (appends conflict with nothing but an overwrite or a restore). Returns
        ``{"dataset": the dataset at the new version, "merged": the Transaction committed}``.
        Other operations are refused, as pylance 14 refuses them.

        >>> t1 = lancelet.Transaction(1, lancelet.LanceOperation.Append(frags1))  # doctest: +SKIP
        >>> t2 = lancelet.Transaction(1, lancelet.LanceOperation.Append(frags2))  # doctest: +SKIP
        >>> lancelet.LanceDataset.commit_batch(ds, [t1, t2])["dataset"].version  # doctest: +SKIP
        2
        """
        txns = list(transactions)
        if not txns:
            raise InvalidArgumentError("commit_batch needs at least one transaction")
        appends: List[Any] = []
        for t in txns:
            if not isinstance(t, _operations.Transaction):
                raise TypeError(f"commit_batch takes Transaction objects, got {type(t).__name__}")
            if not isinstance(t.operation, LanceOperation.Append):
                raise UnsupportedFeatureError(
                    f"commit_batch merges Append transactions only, got {type(t.operation).__name__}"
                )
            appends.append(t.operation)
        fragments = [f for op in appends for f in op.fragments]
        merged = _operations.Transaction(min(t.read_version for t in txns), LanceOperation.Append(fragments))
        ds = LanceDataset.commit(
            dest,
            merged,
            commit_lock=commit_lock,
            storage_options=storage_options,
            enable_v2_manifest_paths=enable_v2_manifest_paths,
            detached=detached,
            max_retries=max_retries,
            **kwargs,
        )
        return {"dataset": ds, "merged": merged}

    @staticmethod
    def _commit(
        base_uri: Any,
        uri: Any,
        path: str,
        operation: Any,
        read_version: Optional[int],
        props: Dict[str, str],
        storage_options: Optional[Dict[str, str]],
        enable_v2_manifest_paths: Optional[bool],
        max_retries: int,
        commit_message: Optional[str],
        kwargs: Dict[str, Any],
    ) -> "LanceDataset":
        """The commit of :meth:`commit` (its arguments checked)."""
        managed = base_uri._commit_namespace if isinstance(base_uri, LanceDataset) else None
        if kwargs.get("namespace_client_managed_versioning") and kwargs.get("namespace_client") is not None:
            managed = (kwargs["namespace_client"], list(kwargs.get("table_id") or []), _namespace_io.store_key(path))
        if not isinstance(operation, (LanceOperation.Overwrite, LanceOperation.Append)):
            native = _operations.commit_other(
                path,
                operation,
                read_version,
                _operations.properties(props, commit_message),
                _storage_options(storage_options),
                max_retries,
                managed,
                kwargs.get("commit_lock"),
            )
        else:
            frags = [_operations.without_tombstones(f.to_json()) for f in operation.fragments]
            if isinstance(operation, LanceOperation.Overwrite):
                kind, schema = "overwrite", operation.new_schema
            else:
                kind, schema = "append", None
            native = _native_dataset.Dataset.commit(
                path,
                kind,
                frags or [],
                schema=schema,
                read_version=read_version,
                options={
                    "enable_v2_manifest_paths": (
                        True if enable_v2_manifest_paths is None else bool(enable_v2_manifest_paths)
                    ),
                    "commit_message": commit_message,
                    "storage_options": _storage_options(storage_options),
                    "transaction_properties": props or None,
                    "commit_namespace": managed,
                    "commit_lock": kwargs.get("commit_lock"),
                },
            )
        return LanceDataset._from_native(
            os.fspath(uri) if isinstance(uri, os.PathLike) else str(uri),
            path,
            native,
            _storage_options(storage_options),
            managed,
            commit_lock=kwargs.get("commit_lock"),
        )

    def read_transaction(self, version: Optional[int] = None) -> Optional["Transaction"]:
        """The transaction that created ``version`` (this version when None): its
        operation (a :class:`LanceOperation`), read version, uuid and
        ``transaction_properties`` (a commit message is under ``"__lance_commit_message"``);
        None when the version names no transaction file.

        >>> ds.read_transaction(1).transaction_properties  # doctest: +SKIP
        {'__lance_commit_message': 'first load'}
        """
        if version is not None:
            version = _check_int_version(version)
        return _operations.read_transaction(self, version, LanceOperation)

    def get_transactions(self, recent_transactions: int = 10) -> List[Optional["Transaction"]]:
        """The transactions of the last ``recent_transactions`` versions, newest first
        (None for a version without one).

        >>> [type(t.operation).__name__ for t in ds.get_transactions(2)]  # doctest: +SKIP
        ['Delete', 'Append']
        """
        return _operations.get_transactions(self, recent_transactions, LanceOperation)

    def checkout_version(self, version: Union[int, str, Tuple[Optional[str], Optional[int]]]) -> "LanceDataset":
        """The same dataset at another version (a number or a tag name), or a version of a
        branch: ``(branch, version)`` (``None`` version: the branch's newest)."""
        if isinstance(version, (tuple, str)):  # a tag may point into a branch
            return self._on_branch(_branches.checkout(self, version))
        return self._with(self._native.checkout(_check_version(version)))

    @property
    def branch(self) -> Optional[str]:
        """The branch this version belongs to (None: main)."""
        return _native_dataset.ds_branch(self._native)

    def checkout_latest(self) -> None:
        """Moves this object to the newest version."""
        self._native = self._native.checkout(None)

    def restore(self) -> None:
        """Commits a new version whose content is this (older) version's."""
        self._native = self._native.restore()

    def cleanup_old_versions(
        self,
        older_than: Optional[_dt.timedelta] = None,
        retain_versions: Optional[int] = None,
        *,
        delete_unverified: bool = False,
        error_if_tagged_old_versions: bool = True,
        delete_rate_limit: Optional[int] = None,
        versions: Optional[List[int]] = None,
        delete_concurrency: Optional[int] = None,
    ) -> CleanupStats:
        """Removes old versions and the files only they use; returns :class:`CleanupStats`.

        A version is removed when it is older than ``older_than`` (a ``timedelta``) and not
        among the newest ``retain_versions`` (each only when given; with neither, versions
        older than two weeks go), and, when ``versions`` is given, listed there. The newest
        version and tagged versions are never removed: with ``error_if_tagged_old_versions``
        (the default) a tagged version the policy selects raises ``InvalidArgumentError`` and
        nothing is removed. Data, deletion and transaction files that no kept version uses
        are deleted when a removed version used them; files no version ever used (left by a
        failed or still running write) only once they are 7 days old, or at once with
        ``delete_unverified=True`` (only safe when nobody is writing). Index files are kept.
        ``delete_rate_limit`` caps deletions per second and ``delete_concurrency`` how
        many run at once.
        """
        return cleanup_versions(
            self,
            older_than,
            retain_versions,
            delete_unverified=delete_unverified,
            error_if_tagged_old_versions=error_if_tagged_old_versions,
            delete_rate_limit=delete_rate_limit,
            versions=versions,
            delete_concurrency=delete_concurrency,
        )

    def validate(self, deep: bool = False, *, version: Optional[int] = None) -> ValidationReport:
        """Checks the dataset like fsck and returns a :class:`ValidationReport`; writes nothing.

        Every version (or only ``version``) is checked: its manifest parses; each data,
        deletion and index file it names exists, opens and agrees with the manifest (rows,
        columns, recorded size, deleted rows inside the fragment); stable row ids cover
        every row; tags and branches point at versions that exist. ``deep=True`` also reads
        every byte of every data and index file, checked against the checksums lancelet
        writes (files without them, pylance's, are decoded in full instead). Files no
        version names are listed as orphans. As pylance's ``validate()``, it raises when
        anything is wrong: ``CorruptFileError`` with one line per problem, carrying the
        report as ``.report``. It also finds what pylance's does not look for: a shallow
        clone or branch whose source was cleaned up. ``python -m lancelet validate URI``
        runs it from a shell.

        >>> report = ds.validate(deep=True)  # doctest: +SKIP
        >>> report.ok, report.orphans  # doctest: +SKIP
        (True, [])
        """
        report = validate_dataset(self, deep, version)
        if not report.ok:
            message = str(report)
            if any("not found" in reason for _, reason in report.problems):
                message += (
                    "\n(a shallow clone or branch loses files when its source is cleaned up or deleted: "
                    "clone deeply to be independent)"
                )
            err = CorruptFileError(message)
            err.report = report  # type: ignore[attr-defined]
            raise err
        return report

    def config(self) -> Dict[str, str]:
        """The table config stored in the manifest (``key -> value``)."""
        return dict(self._native.config())

    def _update_map(self, call: str, target: str, values: Any, replace: bool) -> None:
        # One UpdateConfig commit changing one key/value map; moves to the new version.
        if not isinstance(values, dict) or not all(
            isinstance(k, str) and (v is None or isinstance(v, str)) for k, v in values.items()
        ):
            raise InvalidArgumentError(f"{call} takes a dict of string keys to string (or None) values")
        self._native = self._native.update_metadata(target, list(values.items()), bool(replace))

    def update_config(self, values: Dict[str, Optional[str]], *, replace: bool = False) -> Dict[str, str]:
        """Sets table config keys (a value of None removes the key; ``replace=True`` drops
        every other key) in an UpdateConfig commit; moves to the new version and returns
        the new config."""
        self._update_map("update_config", "config", values, replace)
        return self.config()

    def delete_config_keys(self, keys: List[str]) -> None:
        """Removes table config keys in an UpdateConfig commit and moves to the new version."""
        if isinstance(keys, str) or not all(isinstance(k, str) for k in keys):
            raise InvalidArgumentError("delete_config_keys takes a list of key names")
        self._update_map("delete_config_keys", "config", {k: None for k in keys}, False)

    @property
    def metadata(self) -> Dict[str, str]:
        """The table metadata (``key -> value``) of this version, as pylance's
        ``LanceDataset.metadata``; set with :meth:`update_metadata`."""
        return dict(self._native.table_metadata())

    def update_metadata(self, values: Dict[str, Optional[str]], *, replace: bool = False) -> Dict[str, str]:
        """Sets table metadata keys (None removes a key; ``replace=True`` drops every other
        key) in one commit; moves to the new version and returns the new table metadata.

        >>> ds.update_metadata({"owner": "ml-team", "stale": None})  # doctest: +SKIP
        {'owner': 'ml-team'}
        """
        self._update_map("update_metadata", "table", values, replace)
        return self.metadata

    @property
    def schema_metadata(self) -> Dict[str, str]:
        """The schema's metadata as text (``ds.schema.metadata`` holds the same as bytes)."""
        meta = self.schema.metadata or {}
        return {k.decode(errors="replace"): v.decode(errors="replace") for k, v in meta.items()}

    def update_schema_metadata(self, values: Dict[str, Optional[str]], *, replace: bool = False) -> Dict[str, str]:
        """Sets schema metadata keys (None removes a key; ``replace=True`` drops every other
        key) in one commit; moves to the new version and returns the new schema metadata.

        >>> ds.update_schema_metadata({"source": "crawl-2026"})  # doctest: +SKIP
        {'source': 'crawl-2026'}
        """
        self._update_map("update_schema_metadata", "schema", values, replace)
        return self.schema_metadata

    def update_field_metadata(
        self, field_updates: Dict[str, Dict[str, Optional[str]]], *, replace: bool = False
    ) -> None:
        """Sets metadata keys of fields named by dotted path (``{"a": {"unit": "cm"}}``;
        None removes a key; ``replace=True`` drops the field's other keys) in one commit,
        and moves to the new version.

        >>> ds.update_field_metadata({"a": {"unit": "cm"}})  # doctest: +SKIP
        """
        if not isinstance(field_updates, dict) or not all(
            isinstance(path, str)
            and isinstance(values, dict)
            and all(isinstance(k, str) and (v is None or isinstance(v, str)) for k, v in values.items())
            for path, values in field_updates.items()
        ):
            raise InvalidArgumentError(
                "update_field_metadata takes a dict of field paths to dicts of string keys to string (or None) values"
            )
        updates = [(path, list(values.items())) for path, values in field_updates.items()]
        self._native = self._native.update_field_metadata(updates, bool(replace))

    def _asof(self, asof: Union[_dt.datetime, str]) -> "LanceDataset":
        if isinstance(asof, str):
            asof = _dt.datetime.fromisoformat(asof)
        # Whole microseconds since the epoch (a naive time is local, as in
        # datetime.timestamp()). As in pylance, a version counts when the time its
        # versions() shows is before the cutoff; the search (newest first) is native.
        aware = asof if asof.tzinfo is not None else asof.astimezone()
        since = aware - _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)
        micros = (since.days * 86400 + since.seconds) * 1_000_000 + since.microseconds
        best = _native_dataset.version_asof(self._native, micros)
        if best is None:
            raise InvalidArgumentError(f"{asof} is earlier than the first version of {self.uri}")
        return self.checkout_version(best)

    # -- reading ----------------------------------------------------------------------

    def count_rows(self, filter: Optional[str] = None, **kwargs: Any) -> int:
        """Number of rows (matching ``filter`` when given; deleted rows excluded)."""
        if kwargs:
            return self.scanner(filter=filter, **kwargs).count_rows()
        if _expressions.is_expression(filter):
            try:
                filter = _expressions.to_sql(filter)
            except _expressions.UntranslatableExpressionError:
                # pyarrow evaluates what lancelet's SQL cannot express (see scanner.PostFilteredScanner).
                return make_scanner(self, filter=filter).count_rows()
        return self._native.count_rows(_filter(filter))

    def __len__(self) -> int:
        return self.count_rows()

    def scanner(
        self,
        columns: _Columns = None,
        filter: Optional[str] = None,
        limit: Optional[int] = None,
        offset: Optional[int] = None,
        nearest: Optional[Dict[str, Any]] = None,
        batch_size: Optional[int] = None,
        batch_size_bytes: Optional[int] = None,
        batch_readahead: Optional[int] = None,
        fragment_readahead: Optional[int] = None,
        scan_in_order: Optional[bool] = None,
        fragments: Optional[Iterable[Union["LanceFragment", int]]] = None,
        index_segments: Optional[Iterable[Any]] = None,
        full_text_query: Optional[Any] = None,
        *,
        prefilter: Optional[bool] = None,
        with_row_id: Optional[bool] = None,
        with_row_address: Optional[bool] = None,
        use_stats: Optional[bool] = None,
        scan_stats_callback: Optional[Callable[[ScanStatistics], None]] = None,
        **kwargs: Any,
    ) -> "LanceScanner":
        """A scan of this version (pylance's signature; full-text search is not supported
        yet, and the readahead/size hints are accepted and ignored).

        ``columns``: names (``"s.a"`` selects a struct child) or ``{name: SQL expression}``;
        ``filter``: a SQL predicate (``"a > 1 AND name LIKE 'x%'"``); ``limit``/``offset``
        apply after the filter; ``fragments`` restricts (and orders) the fragments read;
        ``with_row_id``/``with_row_address`` append ``_rowid``/``_rowaddr``;
        ``nearest`` runs a vector search (``{"column": ..., "q": ..., "k": ...}`` as in
        pylance, exact or through an IVF index); ``scan_stats_callback`` receives a :class:`ScanStatistics` when a run ends (also
        readable as ``scanner.scan_stats``); ``use_stats=False`` reads every row the
        filter could touch instead of skipping fragments and row ranges that the data
        files' zone statistics (null count, min, max) prove cannot match.

        >>> ds.scanner(columns=["id"], filter="id > 10", limit=5).to_table()  # doctest: +SKIP
        """
        options = dict(
            columns=columns,
            filter=filter,
            limit=limit,
            offset=offset,
            nearest=nearest,
            batch_size=batch_size,
            batch_size_bytes=batch_size_bytes,
            batch_readahead=batch_readahead,
            fragment_readahead=fragment_readahead,
            scan_in_order=scan_in_order,
            fragments=fragments,
            index_segments=index_segments,
            full_text_query=full_text_query,
            prefilter=prefilter,
            with_row_id=with_row_id,
            with_row_address=with_row_address,
            use_stats=use_stats,
            scan_stats_callback=scan_stats_callback,
            **kwargs,
        )
        if self._default_scan_options:
            return _dropin.scanner_with_defaults(self, options)
        return make_scanner(self, **options)

    def to_table(self, columns: _Columns = None, filter: Optional[str] = None, **kwargs: Any) -> pa.Table:
        """The rows as a ``pyarrow.Table`` (same options as :meth:`scanner`)."""
        return self.scanner(columns=columns, filter=filter, **kwargs).to_table()

    def to_batches(
        self, columns: _Columns = None, filter: Optional[str] = None, **kwargs: Any
    ) -> Iterator[pa.RecordBatch]:
        """The rows as an iterator of ``pyarrow.RecordBatch`` (same options as :meth:`scanner`)."""
        return self.scanner(columns=columns, filter=filter, **kwargs).to_batches()

    def head(self, num_rows: int, **kwargs: Any) -> pa.Table:
        """The first ``num_rows`` rows."""
        return self.scanner(limit=num_rows, **kwargs).to_table()

    def to_pandas(self, columns: _Columns = None, filter: Optional[str] = None, **kwargs: Any):
        """The rows as a pandas DataFrame. Blob columns become :class:`lancelet.BlobFile`
        objects (``blob_mode="lazy"``, the default), ``bytes`` (``"bytes"``) or descriptor
        dicts (``"descriptions"``)."""
        blob_mode = kwargs.pop("blob_mode", "lazy")
        if _blob.has_blobs(self.schema) and not kwargs.get("with_row_address"):
            return _blob.to_pandas(
                self,
                lambda addr: self.to_table(columns=columns, filter=filter, with_row_address=addr, **kwargs),
                blob_mode,
            )
        return self.to_table(columns=columns, filter=filter, **kwargs).to_pandas()

    def take(self, indices: Union[List[int], pa.Array], columns: _Columns = None) -> pa.Table:
        """Rows at ``indices`` (positions among the live rows; any order, duplicates allowed)."""
        idx = _indices(indices)
        if isinstance(columns, dict):
            return _rowoffset.take_expressions(self._native, self._native.take(idx, ["_rowaddr"]), _exprs(columns))
        names, pos = _rowoffset.split(_names(columns))
        if pos is not None:  # _rowoffset: the indices asked for
            table = ReaderResults(self._native.take(idx, names or ["_rowaddr"])).to_table()
            return _rowoffset.take_with_offsets(table if names else table.select([]), idx, pos)
        return ReaderResults(self._native.take(idx, names)).to_table()

    def sample(self, num_rows: int, columns: _Columns = None, randomize_order: bool = True, **kwargs: Any) -> pa.Table:
        """``num_rows`` distinct live rows drawn uniformly at random (all of them when the
        dataset has fewer), read with one ``take``: in random order, or in storage order
        with ``randomize_order=False``. ``columns`` as in :meth:`take`. pylance passes other
        keyword arguments to its scanner; the only ones taken here are those without
        effect on which rows are drawn (``batch_size``, ``batch_readahead``, ...), and a
        ``filter`` is refused: sample ``to_table(filter=...)`` instead.

        >>> ds.sample(3, columns=["x"]).num_rows  # doctest: +SKIP
        3
        """
        if isinstance(num_rows, bool) or not isinstance(num_rows, int) or num_rows < 0:
            raise InvalidArgumentError(f"num_rows must be a non-negative int, got {num_rows!r}")
        if kwargs.get("filter") is not None:
            raise InvalidArgumentError("sample draws from every live row: it takes no filter")
        total = self.count_rows()
        idx = random.sample(range(total), min(num_rows, total))
        if not randomize_order:
            idx.sort()
        return self.take(idx, columns)

    def take_blobs(
        self,
        blob_column: str,
        ids: Any = None,
        addresses: Any = None,
        indices: Any = None,
        *,
        buffer_size: int = _blob.DEFAULT_BLOB_BUFFER_SIZE,
    ) -> List[Optional[_blob.BlobFile]]:
        """The blobs of ``blob_column`` at the rows chosen by exactly one of ``ids``
        (``_rowid``), ``addresses`` (``_rowaddr``) or ``indices`` (positions among live
        rows), as lazy :class:`lancelet.BlobFile` objects (``None`` for null blobs).

        >>> with ds.take_blobs("img", indices=[0])[0] as f:  # doctest: +SKIP
        ...     first_bytes = f.read(16)
        """
        return _blob.take_blobs(self, blob_column, ids, addresses, indices, buffer_size=buffer_size)

    def read_blobs(
        self,
        blob_column: str,
        ids: Any = None,
        addresses: Any = None,
        indices: Any = None,
        *,
        io_buffer_size: Optional[int] = None,
        preserve_order: Optional[bool] = None,
    ) -> List[Tuple[int, Optional[bytes]]]:
        """The whole blobs of the chosen rows (as :meth:`take_blobs`), as
        ``[(row_address, bytes or None), ...]`` in the order asked.

        >>> ds.read_blobs("img", indices=[0, 1])  # doctest: +SKIP
        [(0, b'...'), (1, None)]
        """
        del io_buffer_size, preserve_order  # fetched concurrently; results keep the order asked
        return _blob.read_blobs(self, blob_column, ids, addresses, indices)

    def read_blob_ranges(
        self,
        blob_column: str,
        requests: Any,
        *,
        selector: str = "indices",
        io_buffer_size: Optional[int] = None,
        preserve_order: Optional[bool] = None,
    ) -> List[Tuple[int, int, Optional[bytes]]]:
        """Byte ranges of blobs: ``requests`` are ``(row, offset, length)`` with ``row``
        an id, address or index (``selector``); returns ``[(request index, row_address,
        bytes or None), ...]``.

        >>> ds.read_blob_ranges("img", [(0, 0, 4)], selector="indices")  # doctest: +SKIP
        [(0, 0, b'...')]
        """
        del io_buffer_size, preserve_order
        return _blob.read_blob_ranges(self, blob_column, requests, selector)

    def _take_rows(self, row_ids: Union[List[int], pa.Array], columns: _Columns = None) -> pa.Table:
        """Rows by ``_rowid`` (equal to ``_rowaddr`` on datasets without stable row ids), in
        the order given. Ids of rows that do not exist (deleted or never written) are skipped,
        as pylance does. With stable row ids the lookup goes through a row id index built
        once per version."""
        ids = _indices(row_ids, "row id", 2**64)
        if isinstance(columns, dict):
            return _rowoffset.take_expressions(
                self._native, self._native.take_row_ids(ids, ["_rowaddr"]), _exprs(columns)
            )
        return ReaderResults(self._native.take_row_ids(ids, _names(columns))).to_table()

    def delta(
        self,
        compared_against: Optional[int] = None,
        *,
        begin_version: Optional[int] = None,
        end_version: Optional[int] = None,
    ) -> "DatasetDelta":
        """What changed between two versions, as pylance's ``delta``: either
        ``compared_against`` (this version against an older one) or both ``begin_version``
        (exclusive) and ``end_version`` (inclusive).

        >>> d = ds.delta(begin_version=1, end_version=3)  # doctest: +SKIP
        >>> d.get_inserted_rows().read_all()  # doctest: +SKIP
        """
        return delta_between(self, compared_against, begin_version, end_version)

    def changes(
        self, begin_version: int, end_version: Optional[int] = None, columns: Optional[List[str]] = None
    ) -> Dict[str, pa.Table]:
        """The change data feed between ``begin_version`` (exclusive) and ``end_version``
        (inclusive; this version when omitted): ``{"inserted", "updated", "deleted"}``.
        Inserted and updated rows are the rows as they are in this version, with
        ``_rowid``, ``_row_created_at_version`` and ``_row_last_updated_at_version``;
        ``deleted`` holds the ``_rowid`` of rows live at ``begin_version`` and gone at
        ``end_version``. As in pylance, row versions only bound the ranges: the rows come
        from the version this object reads. Needs stable row ids (``write_dataset(..., enable_stable_row_ids=True)``).

        >>> ch = ds.changes(3)  # doctest: +SKIP
        >>> ch["updated"].column("_rowid")  # doctest: +SKIP
        """
        return change_feed(self, begin_version, end_version, columns)

    def get_fragments(self, filter: Optional[str] = None) -> List["LanceFragment"]:
        """The fragments of this version."""
        if filter is not None:
            raise UnsupportedFeatureError("get_fragments(filter=...) is not supported yet")
        return [LanceFragment(self, meta) for meta in self._native.fragments()]

    def get_fragment(self, fragment_id: int) -> Optional["LanceFragment"]:
        """The fragment with id ``fragment_id`` (None if there is none)."""
        for meta in self._native.fragments():
            if meta["id"] == fragment_id:
                return LanceFragment(self, meta)
        return None

    def __arrow_c_stream__(self, requested_schema: Any = None) -> Any:
        return self._native.scan().__arrow_c_stream__(requested_schema)

    # -- writing ----------------------------------------------------------------------

    def delete(
        self, predicate: str, *, conflict_retries: int = 10, retry_timeout: Optional[_dt.timedelta] = None
    ) -> Dict[str, int]:
        """Deletes the rows matching the SQL ``predicate`` and moves to the new version.

        Returns ``{"num_deleted_rows": n}``; nothing is committed when no row matches. When
        a concurrent commit changed the same fragments, the delete runs again on the latest
        version, up to ``conflict_retries`` times or until ``retry_timeout`` has passed.
        """
        predicate = _expressions.sql_if_expression(predicate)
        if not isinstance(predicate, str):
            raise InvalidArgumentError("delete() takes a SQL predicate string")
        self._native, n = self._native.delete(predicate, *_retry_args(conflict_retries, retry_timeout))
        return {"num_deleted_rows": n}

    def update(
        self,
        updates: Dict[str, str],
        where: Optional[str] = None,
        conflict_retries: int = 10,
        retry_timeout: Optional[_dt.timedelta] = None,
        data_storage_version: Optional[str] = None,
    ) -> Dict[str, int]:
        """Sets columns to SQL expressions over the row's current values, in the rows
        matching ``where`` (every row when None), as a new version; e.g.
        ``ds.update({"price": "price * 1.1"}, where="color = 'red'")``.

        The updated rows are written as new fragments and the old ones tombstoned (an
        Update transaction); values are cast to the column's type, and a value that does
        not fit is an error. Returns ``{"num_rows_updated": n}``; nothing is committed when
        no row matches. When a concurrent commit changed the same fragments, the update runs
        again on the latest version, up to ``conflict_retries`` times or until
        ``retry_timeout`` has passed; ``data_storage_version``, when given, must be the
        dataset's.
        """
        if data_storage_version is not None and data_storage_version != self.data_storage_version:
            raise UnsupportedFeatureError(
                f"update writes files of the dataset's format {self.data_storage_version}, not {data_storage_version!r}"
            )
        if (
            not isinstance(updates, dict)
            or not updates
            or not all(isinstance(k, str) and isinstance(v, str) for k, v in updates.items())
        ):
            raise InvalidArgumentError("update takes a non-empty dict of {column: SQL expression}")
        where = _expressions.sql_if_expression(where)
        if where is not None and not isinstance(where, str):
            raise InvalidArgumentError(f"where must be a SQL predicate string, got {type(where).__name__}")
        self._native, n = self._native.update(
            list(updates.items()), where, *_retry_args(conflict_retries, retry_timeout)
        )
        return {"num_rows_updated": n}

    def insert(self, data: Any, *, mode: str = "append", **kwargs: Any) -> None:
        """Writes ``data`` to this dataset (appends by default; ``mode="overwrite"``
        replaces its rows) and moves this object to the new version, as pylance's
        ``insert``. ``kwargs`` are :func:`write_dataset`'s."""
        kwargs.setdefault("storage_options", self._storage_options)
        self._native = write_dataset(data, self, mode=mode, **kwargs)._native

    def merge_insert(self, on: Union[str, List[str]]) -> Any:
        """An upsert by key: returns a :class:`lancelet.merge.MergeInsertBuilder`, e.g.
        ``ds.merge_insert("id").when_matched_update_all().when_not_matched_insert_all()
        .execute(new_rows)``. The merge commits as one Update transaction on this object."""
        return MergeInsertBuilder(self, on)

    def merge(
        self, data_obj: Any, left_on: str, right_on: Optional[str] = None, schema: Optional[pa.Schema] = None
    ) -> None:
        """Adds the columns of ``data_obj`` (a table, batch reader, dataset... anything
        ``write_dataset`` takes), joined on ``left_on`` (a dataset column) = ``right_on``
        (a column of ``data_obj``, by default also ``left_on``), and moves to the new
        version. Rows with no match get nulls; when a key repeats in ``data_obj`` its last
        row wins; null keys match null keys. The key columns must have the same type, and
        the other columns of ``data_obj`` must be new. Existing files are not rewritten:
        each fragment gets one new data file (a Merge transaction, like ``add_columns``).
        """
        self._native = merge_columns(self, data_obj, left_on, right_on, schema)

    def add_columns(
        self,
        transforms: Any,
        read_columns: Optional[List[str]] = None,
        reader_schema: Optional[pa.Schema] = None,
        batch_size: Optional[int] = None,
    ) -> None:
        """Adds columns without rewriting existing data, as a new version.

        ``transforms`` is one of:

        - a dict ``{name: SQL expression}`` over existing columns, e.g. ``{"c": "a * 2"}``;
        - a ``pyarrow.Field``, a list of them or a ``pyarrow.Schema``: new nullable columns,
          null in every row (nothing is written);
        - a function ``RecordBatch -> RecordBatch | pandas.DataFrame`` or a
          :func:`lancelet.batch_udf`, given batches of ``read_columns`` (all columns when
          None), deleted rows included; with a ``checkpoint_file`` a failed run resumes;
        - the new columns' rows, as pylance takes them: a ``RecordBatchReader``, a table, a
          list of batches or a generator of batches (``reader_schema`` gives the schema, which
          a generator then need not match exactly: batches are cast to it). Row ``i`` of the
          stream goes to the dataset's ``i``-th live row (the order of ``to_table()``); the
          stream must have exactly as many rows as the dataset.

        Computed columns go into one new data file per fragment; existing files are never
        rewritten.
        """
        if batch_size is not None and (
            isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size <= 0
        ):
            raise InvalidArgumentError(f"batch_size must be a positive integer, got {batch_size!r}")
        names = _names(read_columns) if read_columns is not None else None
        if isinstance(transforms, dict):
            if not transforms or not all(isinstance(k, str) and isinstance(v, str) for k, v in transforms.items()):
                raise InvalidArgumentError("add_columns takes a non-empty dict of {name: SQL expression}")
            self._native = self._native.add_columns_sql(list(transforms.items()), batch_size)
        elif isinstance(transforms, (pa.Field, pa.Schema)) or (
            isinstance(transforms, list) and transforms and all(isinstance(f, pa.Field) for f in transforms)
        ):
            fields = [transforms] if isinstance(transforms, pa.Field) else list(transforms)
            self._native = self._native.add_null_columns(pa.schema(fields))
        elif callable(transforms):
            udf = transforms if isinstance(transforms, BatchUDF) else BatchUDF(transforms)
            self._native = backfill(self, udf, names, batch_size)
        elif _dropin.is_stream(transforms):
            self._native = _dropin.add_columns_from_stream(self, transforms, reader_schema)
        else:
            raise InvalidArgumentError(
                "add_columns takes a dict of SQL expressions, pyarrow fields or a schema, a function, "
                f"or a reader of the new columns' rows; got {type(transforms).__name__}"
            )

    def drop_columns(self, columns: List[str]) -> None:
        """Removes columns (dotted paths reach struct fields) from the schema, as a new
        version. Only metadata changes; the data stays in the files until compaction."""
        if (
            isinstance(columns, str)
            or not isinstance(columns, (list, tuple))
            or not columns
            or not all(isinstance(c, str) for c in columns)
        ):
            raise InvalidArgumentError("drop_columns takes a non-empty list of column names")
        self._native = self._native.drop_columns(list(columns))

    def alter_columns(self, *alterations: Dict[str, Any]) -> None:
        """Renames columns, makes them nullable or changes their types, as a new version.

        Each alteration is a dict with ``"path"`` (dotted for struct fields) and any of
        ``"name"`` (the new name), ``"nullable"`` (only ``True`` is accepted for a
        nullable change; making a column non-nullable would need every row checked) and
        ``"data_type"`` (a ``pyarrow.DataType``). Renames and nullability only change the
        schema. A new type rewrites that column alone: its cast values go into one new data
        file per fragment under a new field id, other columns are untouched. Casts stay
        within a family of types, as in pylance: integers, floats, temporal types, string /
        large_string, binary / large_binary, decimals, lists of castable items, dictionaries
        as their values (e.g. ``int32`` to ``int64`` or ``int16``, ``float64`` to
        ``float32``, a vector's ``float32`` items to ``float16``); a value that does not fit
        the new type is an error. Top-level columns only.
        """
        self._native = self._native.alter_columns(_alterations(alterations))

    def __repr__(self) -> str:
        return f"LanceDataset(uri={self.uri!r}, version={self.version})"
