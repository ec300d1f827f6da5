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
"""

from __future__ import annotations

import datetime as _dt
import operator
import os
from collections import namedtuple
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Tuple, Union, cast

import pyarrow as pa

from . import _branches, _dropin, _expressions, _namespace_io, _native, _ordering, _paths, _rowoffset
from . import blob as _blob
from ._arrow_dataset import ArrowDatasetBase
from ._ordering import ColumnOrdering
from .errors import InvalidArgumentError, RowIndexError, UnsupportedFeatureError
from .file import ReaderResults
from .fragment import DataFile, FragmentMetadata
from .indices import IndexMethods, index_stats

__all__ = [
    "dataset",
    "write_dataset",
    "LanceDataset",
    "LanceScanner",
    "LanceFragment",
    "LanceOperation",
    "ColumnOrdering",
    "CleanupStats",
    "CompactionMetrics",
    "DatasetOptimizer",
    "ScanStatistics",
    "Tags",
    "WriteProgress",
]

#: What a ``progress`` callback of :func:`write_dataset` receives.
WriteProgress = namedtuple("WriteProgress", ["rows_written", "bytes_written", "files_written"])

_Columns = Optional[Union[List[str], Dict[str, str]]]

# Scanner options pylance accepts that only tune its own execution; accepted and ignored.
_IGNORED_SCAN_OPTIONS = {
    "batch_size_bytes",
    "batch_readahead",
    "fragment_readahead",
    "io_buffer_size",
    "late_materialization",
    "prefilter",
    "fast_search",
    "strict_batch_size",
    "disable_scoring_autoprojection",
}
# Scanner options taken from **kwargs and handled (pylance names them as keyword arguments).
_HANDLED_SCAN_KWARGS = {"use_scalar_index", "order_by", "blob_handling"}
# Scanner options for features lancelet does not have yet.
_UNSUPPORTED_SCAN_OPTIONS = {
    "full_text_query",
    "index_segments",
    "include_deleted_rows",
    "row_addr_allowlist",
    "row_addr_blocklist",
}


def _native_uri(uri: Any, storage_options: Optional[Dict[str, str]]) -> str:
    """The dataset URI as the native layer takes it: a local path, ``file://``,
    ``memory://name`` or ``s3://bucket/prefix`` (checked there, with the options)."""
    if isinstance(uri, LanceDataset):
        uri = uri.uri
    if not isinstance(uri, (str, os.PathLike)):
        raise TypeError(f"a dataset URI is a string or path, got {type(uri).__name__}")
    uri = os.fspath(uri) if isinstance(uri, os.PathLike) else str(uri)
    if isinstance(uri, bytes):
        raise TypeError("a dataset URI is a string or path, got bytes")
    _storage_options(storage_options)  # checked; options a store does not use are dropped later
    return _paths.native_path(uri)


#: Storage options that apply to every kind of store.
_STORE_INDEPENDENT_OPTIONS = {"manifest_store"}

#: Largest value of the native layer's unsigned 64-bit counts (limits, offsets, versions).
_U64_MAX = 2**64 - 1


def _storage_options(options: Optional[Dict[str, str]], path: Optional[str] = None) -> Optional[Dict[str, str]]:
    """``storage_options`` checked to be string keys and values (``None`` if empty). With
    the dataset's native ``path``: local and in-memory datasets keep only the options that
    apply to every store; the rest are ignored, as pylance ignores them."""
    if not options:
        return None
    if not isinstance(options, dict):
        raise InvalidArgumentError(f"storage_options must be a dict, got {type(options).__name__}")
    out = {}
    for k, v in options.items():
        if not isinstance(k, str):
            raise InvalidArgumentError(f"storage option names are strings, got {k!r}")
        out[k] = v if isinstance(v, str) else (str(v).lower() if isinstance(v, bool) else str(v))
    if path is not None and not _paths.takes_store_options(path):
        out = {k: v for k, v in out.items() if k.lower() in _STORE_INDEPENDENT_OPTIONS or _branches.is_base_option(k)}
    return out or None


def _check_version(version: Any) -> Any:
    if version is None or isinstance(version, str):
        return version
    version = _as_int(version)
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise InvalidArgumentError(f"version must be a positive integer or a tag name, got {version!r}")
    return _version_in_range(version)


#: Version numbers are signed 64-bit in the native layer (and in pylance's manifests).
_MAX_VERSION = 2**63 - 1


def _version_in_range(version: int) -> int:
    if version > _MAX_VERSION:
        raise InvalidArgumentError(f"version {version} is out of range: version numbers are at most 2**63 - 1")
    return version


def _as_int(value: Any) -> Any:
    """``value`` as a Python int when it is an integer of another type (numpy's); else unchanged."""
    if isinstance(value, (int, str, float)) or value is None or not hasattr(value, "__index__"):
        return value
    try:
        return operator.index(value)
    except TypeError:
        return value


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
) -> "LanceDataset":
    """Opens the dataset at ``uri``, or table ``table_id`` of ``namespace_client`` (a
    ``lance_namespace.LanceNamespace``, e.g. :class:`lancelet.namespace.DirectoryNamespace`).

    ``version`` is a version number or a tag name (the latest version when None);
    ``asof`` opens the newest version committed at or before a time.
    ``default_scan_options`` is a dict of :meth:`LanceDataset.scanner` arguments used by
    every scan of the dataset (``to_table``, ``to_batches``, ``head``, ``scanner``...) unless
    the call gives them; like pylance, ``count_rows``, ``take`` and fragment scans ignore
    it. ``block_size``, ``commit_lock``, ``index_cache_size``, the cache sizes,
    ``read_params`` and ``session`` are accepted for pylance compatibility and ignored
    (commits are atomic without a lock).

    >>> ds = lancelet.dataset("/data/items.lance", version=3)  # doctest: +SKIP
    """
    if read_params is not None and not isinstance(read_params, dict):
        raise InvalidArgumentError(f"read_params must be a dict, got {type(read_params).__name__}")
    uri, storage_options = _namespace_io.resolve_read(uri, namespace_client, table_id, storage_options)
    ds = LanceDataset(uri, version=version, storage_options=storage_options, default_scan_options=default_scan_options)
    if asof is not None:
        if version is not None:
            raise InvalidArgumentError("pass version= or asof=, not both")
        ds = ds._asof(asof)
    return ds


def _as_reader(data: Any, schema: Optional[pa.Schema]) -> pa.RecordBatchReader:
    """Any supported input as a stream of batches (nothing is materialized)."""
    if schema is not None and not isinstance(schema, pa.Schema):
        raise TypeError(f"schema must be a pyarrow.Schema, got {type(schema).__name__}")
    if isinstance(data, LanceDataset):
        data = data.to_batches()
    if isinstance(data, pa.RecordBatchReader):
        reader = data
    elif isinstance(data, pa.Table):
        reader = data.to_reader()
    elif isinstance(data, pa.RecordBatch):
        reader = pa.RecordBatchReader.from_batches(data.schema, [data])
    elif _is_pandas(data):
        reader = pa.Table.from_pandas(data, schema=schema).to_reader()
    elif isinstance(data, dict):
        # Columns by name, as pylance takes them.
        reader = (pa.table(data) if schema is None else pa.Table.from_pydict(data, schema=schema)).to_reader()
    elif isinstance(data, (list, tuple)) and data and all(isinstance(row, dict) for row in data):
        # Rows as dicts, as pylance takes them.
        reader = pa.Table.from_pylist(list(data), schema=schema).to_reader()
    elif isinstance(data, (list, tuple)):
        batches = [b if isinstance(b, pa.RecordBatch) else _to_batch(b) for b in data]
        if schema is None and not batches:
            raise InvalidArgumentError("cannot write an empty list of batches without schema=")
        reader = pa.RecordBatchReader.from_batches(schema or batches[0].schema, batches)
    elif hasattr(data, "__arrow_c_stream__"):
        reader = pa.RecordBatchReader.from_stream(data)
    elif hasattr(data, "__arrow_c_array__"):
        reader = pa.RecordBatchReader.from_batches(*_one(pa.record_batch(data)))
    elif isinstance(data, (Iterator, Iterable)) and not isinstance(data, (str, bytes, dict)):
        it = iter(data)
        if schema is None:
            try:
                first = _to_batch(next(it))
            except StopIteration:
                raise InvalidArgumentError("cannot write an empty iterator without schema=") from None
            schema = first.schema
            it = _chain_first(first, it)
        reader = pa.RecordBatchReader.from_batches(schema, (_to_batch(b) for b in it))
    else:
        raise TypeError(
            f"cannot write {type(data).__name__}: pass a pyarrow Table, RecordBatch, RecordBatchReader, "
            "a list or iterator of RecordBatches, a dict of columns, a list of row dicts, a pandas DataFrame, "
            "or an object with __arrow_c_stream__"
        )
    if schema is not None and reader.schema != schema:
        reader = reader.cast(schema) if hasattr(reader, "cast") else reader
    return reader


def _one(batch: pa.RecordBatch):
    return batch.schema, [batch]


def _chain_first(first: pa.RecordBatch, rest: Iterator) -> Iterator:
    yield first
    yield from rest


def _to_batch(b: Any) -> pa.RecordBatch:
    if isinstance(b, pa.RecordBatch):
        return b
    if isinstance(b, pa.Table):
        return b.combine_chunks().to_batches()[0] if b.num_rows else pa.RecordBatch.from_pylist([], schema=b.schema)
    if hasattr(b, "__arrow_c_array__"):
        return pa.record_batch(b)
    raise TypeError(f"expected RecordBatches, got {type(b).__name__}")


def _is_pandas(data: Any) -> bool:
    mod = type(data).__module__
    return mod.startswith("pandas") and type(data).__name__ == "DataFrame"


def _progress_callback(progress: Any) -> Optional[Callable]:
    if progress is None or progress is False:
        return None
    if progress is True:
        try:
            from tqdm.auto import tqdm
        except ImportError:
            import warnings

            warnings.warn(
                "progress=True needs tqdm, which is not installed (pip install 'lancelet[progress]'); "
                "writing without a progress bar",
                stacklevel=3,
            )
            return None
        bar = tqdm(unit=" rows", desc="writing")

        def update(rows: int, nbytes: int, files: int) -> None:
            bar.update(rows - bar.n)
            bar.set_postfix(files=files, MB=round(nbytes / 1e6, 1), refresh=False)

        update.close = bar.close  # type: ignore[attr-defined]
        return update
    from .progress import FragmentWriteProgress, _FragmentReporter

    if isinstance(progress, FragmentWriteProgress):
        return _FragmentReporter(progress)
    if callable(progress):
        return lambda rows, nbytes, files: progress(WriteProgress(rows, nbytes, files))
    raise InvalidArgumentError("progress must be True, False, None, a callable or a FragmentWriteProgress")


def _check_write_args(
    mode: str,
    data_storage_version: Optional[str],
    max_rows_per_file: Any,
    max_rows_per_group: Any,
    max_bytes_per_file: Any,
    kwargs: Dict[str, Any],
    caller: str,
) -> None:
    """Checks the arguments :func:`write_dataset` and ``write_fragments`` share."""
    unknown = set(kwargs) - {
        "data_cache_bytes",
        "max_page_bytes",
        "commit_lock",
        "auto_cleanup_options",
        "enable_stable_row_ids",
        "use_legacy_format",
        *_blob.WRITE_OPTIONS,
        *_branches.WRITE_OPTIONS,
    }
    if unknown:
        raise TypeError(f"{caller}() got unexpected keyword arguments {sorted(unknown)}")
    if kwargs.get("enable_stable_row_ids") and caller != "write_dataset":
        raise UnsupportedFeatureError(
            f"{caller}() cannot enable stable row ids; create the dataset with "
            "write_dataset(..., enable_stable_row_ids=True) first"
        )
    if mode not in ("create", "append", "overwrite"):
        raise InvalidArgumentError(f'mode must be "create", "append" or "overwrite", got {mode!r}')
    if data_storage_version not in (None, "2.0", "2.1", "2.2", "stable"):
        if data_storage_version in ("2.3", "next", "legacy", "0.1"):
            raise UnsupportedFeatureError(
                f'lancelet writes data_storage_version "2.0", "2.1" and "2.2" ("stable"), not {data_storage_version!r}'
            )
        raise InvalidArgumentError(f"unknown data_storage_version {data_storage_version!r}")
    for name, value in (
        ("max_rows_per_file", max_rows_per_file),
        ("max_rows_per_group", max_rows_per_group),
        ("max_bytes_per_file", max_bytes_per_file),
    ):
        if isinstance(value, bool) or not isinstance(value, int) or not 0 < value <= _U64_MAX:
            raise InvalidArgumentError(f"{name} must be a positive integer below 2**64, got {value!r}")


def write_dataset(
    data_obj: Any,
    uri: Optional[Union[str, Path, "LanceDataset"]] = None,
    schema: Optional[pa.Schema] = None,
    mode: str = "create",
    *,
    max_rows_per_file: int = 1024 * 1024,
    max_rows_per_group: int = 1024,
    max_bytes_per_file: int = 90 * 1024 * 1024 * 1024,
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
    ``transaction_properties`` are accepted but not recorded yet (a warning says so).

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
    uri, storage_options = _namespace_io.resolve_write(uri, namespace_client, table_id, mode, storage_options)
    if transaction_properties:
        import warnings

        if not isinstance(transaction_properties, dict):
            raise InvalidArgumentError(
                f"transaction_properties must be a dict, got {type(transaction_properties).__name__}"
            )
        warnings.warn(
            "transaction_properties are not recorded by lancelet yet: the commit is made without them "
            "(commit_message= is recorded)",
            stacklevel=2,
        )
    path = _native_uri(uri, storage_options)
    _paths.check_write_target(path)
    if _branches.uses_bases(kwargs):  # initial_bases / target_bases: see docs/branches.md
        return _branches.write_with_bases(
            _as_reader(data_obj, schema),
            uri,
            path,
            mode,
            kwargs,
            storage_options,
            max_rows_per_file,
            max_bytes_per_file,
            data_storage_version,
            commit_message,
        )
    reader = _as_reader(data_obj, schema)
    callback = _progress_callback(progress)
    try:
        native = _paths.creating(
            path,
            lambda: _native.Dataset.write(
                path,
                reader,
                mode=mode,
                max_rows_per_file=max_rows_per_file,
                max_bytes_per_file=max_bytes_per_file,
                enable_v2_manifest_paths=enable_v2_manifest_paths,
                data_storage_version=data_storage_version,
                commit_message=commit_message,
                progress=callback,
                storage_options=_storage_options(storage_options, path),
                enable_stable_row_ids=bool(kwargs.get("enable_stable_row_ids", False)),
                blob_options=_blob.write_options(kwargs),
            ),
        )
    finally:
        close = getattr(callback, "close", None)
        if close is not None:
            close()
    ds = LanceDataset.__new__(LanceDataset)
    ds._init(str(uri.uri if isinstance(uri, LanceDataset) else uri), path, native)
    ds._storage_options = _storage_options(storage_options)
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


def _parse_time(s: Optional[str]) -> Optional[_dt.datetime]:
    """An RFC 3339 time as written in tag files (nanoseconds cut to microseconds)."""
    if not s:
        return None
    body = s[:-1] + "+00:00" if s.endswith("Z") else s
    if "." in body:
        head, rest = body.split(".", 1)
        digits = "".join(c for c in rest if c.isdigit())
        body = head + "." + digits[:6].ljust(6, "0") + rest[len(digits) :]
    try:
        return _dt.datetime.fromisoformat(body)
    except ValueError:
        return None


def _tag_name(tag: Any) -> str:
    return _paths.check_tag_name(tag)


def _check_int_version(version: Any) -> int:
    version = _as_int(version)
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise InvalidArgumentError(f"version must be a positive integer, got {version!r}")
    return _version_in_range(version)


class LanceOperation:
    """Operations :meth:`LanceDataset.commit` applies, as in pylance."""

    class BaseOperation:
        """An operation to commit."""

    class Append(BaseOperation):
        """Adds ``fragments`` (written with :func:`lancelet.fragment.write_fragments`) to the dataset."""

        def __init__(self, fragments: Iterable[FragmentMetadata]):
            self.fragments = list(fragments)
            for f in self.fragments:
                if not isinstance(f, FragmentMetadata):
                    raise TypeError(f"expected FragmentMetadata, got {type(f).__name__}")

        def __repr__(self) -> str:
            return f"LanceOperation.Append(fragments={self.fragments})"

    class Overwrite(BaseOperation):
        """Replaces the dataset's rows with ``fragments`` and its schema with ``new_schema``
        (creating the dataset if absent)."""

        def __init__(self, new_schema: pa.Schema, fragments: Iterable[FragmentMetadata]):
            if not isinstance(new_schema, pa.Schema):
                raise TypeError(f"new_schema must be a pyarrow.Schema, got {type(new_schema).__name__}")
            self.new_schema = new_schema
            self.fragments = list(LanceOperation.Append(fragments).fragments)

        def __repr__(self) -> str:
            return f"LanceOperation.Overwrite(new_schema={self.new_schema}, fragments={self.fragments})"


class _Counters:
    """Named integer counters with ``to_dict`` and a readable ``repr``."""

    __slots__: tuple = ()

    def __init__(self, **counts: int):
        for k in self.__slots__:
            setattr(self, k, int(counts.get(k, 0)))

    def to_dict(self) -> Dict[str, int]:
        """The counters as a dict."""
        return {k: getattr(self, k) for k in self.__slots__}

    def __repr__(self) -> str:
        return f"{type(self).__name__}(" + ", ".join(f"{k}={v}" for k, v in self.to_dict().items()) + ")"


class ScanStatistics(_Counters):
    """What one scan did: I/O issued and rows seen (``scanner.scan_stats``,
    ``scan_stats_callback``). ``bytes_read``/``iops`` count data file reads after
    coalescing; ``rows_scanned`` is the live rows the scan covered, ``rows_matched`` those
    that passed the filter (before offset/limit)."""

    __slots__ = ("bytes_read", "iops", "tasks", "rows_scanned", "rows_matched")

    def __init__(
        self, bytes_read: int = 0, iops: int = 0, tasks: int = 0, rows_scanned: int = 0, rows_matched: int = 0
    ):
        self.bytes_read = bytes_read
        self.iops = iops
        self.tasks = tasks
        self.rows_scanned = rows_scanned
        self.rows_matched = rows_matched

    # pylance's names for index work; lancelet has no indices yet.
    indices_loaded = 0
    parts_loaded = 0
    index_comparisons = 0


class CleanupStats(_Counters):
    """What :meth:`LanceDataset.cleanup_old_versions` removed (pylance's names)."""

    __slots__ = (
        "bytes_removed",
        "old_versions",
        "data_files_removed",
        "transaction_files_removed",
        "index_files_removed",
        "deletion_files_removed",
        "failed_deletes",
    )


def _positive_int(name: str, value: Any) -> Optional[int]:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise InvalidArgumentError(f"{name} must be a positive integer, got {value!r}")
    return value


class CompactionMetrics(_Counters):
    """What :meth:`DatasetOptimizer.compact_files` did (pylance's names)."""

    __slots__ = ("fragments_removed", "fragments_added", "files_removed", "files_added")


class DatasetOptimizer:
    """``dataset.optimize``: maintenance that rewrites data without changing the rows."""

    def __init__(self, ds: "LanceDataset"):
        self._ds = ds

    def optimize_indices(
        self,
        num_indices_to_merge: Optional[int] = None,
        index_names: Optional[List[str]] = None,
        retrain: bool = False,
        **kwargs: Any,
    ) -> None:
        """Brings scalar indexes up to date with fragments added since they were built:
        ``num_indices_to_merge=0`` adds a delta segment per index over the unindexed
        fragments; otherwise each index is rebuilt as one segment over every fragment
        (``retrain`` is accepted: scalar indexes have nothing to train beyond that).

        >>> ds.optimize.optimize_indices(num_indices_to_merge=0)  # doctest: +SKIP
        """
        del retrain, kwargs
        if num_indices_to_merge is not None and (
            isinstance(num_indices_to_merge, bool)
            or not isinstance(num_indices_to_merge, int)
            or num_indices_to_merge < 0
        ):
            raise InvalidArgumentError(
                f"num_indices_to_merge must be a non-negative integer, got {num_indices_to_merge!r}"
            )
        if index_names is not None:
            index_names = list(index_names)
        self._ds._native = _native.optimize_indices(self._ds._native, num_indices_to_merge, index_names)

    def compact_files(
        self,
        *,
        target_rows_per_fragment: Optional[int] = None,
        max_rows_per_group: Optional[int] = None,
        max_bytes_per_file: Optional[int] = None,
        materialize_deletions: Optional[bool] = None,
        materialize_deletions_threshold: Optional[float] = None,
        defer_index_remap: Optional[bool] = None,
        num_threads: Optional[int] = None,
        batch_size: Optional[int] = None,
        **kwargs: Any,
    ) -> CompactionMetrics:
        """Merges small adjacent fragments and drops deleted rows, as a new version (a
        Rewrite transaction) keeping the rows and their order.

        A fragment is rewritten when it has fewer than ``target_rows_per_fragment`` live rows
        (default 1024 * 1024) and a neighbour to merge with, or when more than
        ``materialize_deletions_threshold`` (default 0.1) of its rows are deleted and
        ``materialize_deletions`` (default True). Defaults may also come from the table
        config keys ``lance.compaction.<option>``. A concurrent delete on the rewritten
        fragments makes the commit fail with ``CommitConflictError``; appends do not.
        ``max_rows_per_group``, ``max_bytes_per_file``, ``defer_index_remap`` and
        ``num_threads`` are accepted for pylance compatibility.
        """
        del max_rows_per_group, max_bytes_per_file, defer_index_remap, num_threads
        unknown = set(kwargs) - {
            "compaction_mode",
            "binary_copy_read_batch_bytes",
            "max_source_fragments",
            "max_source_rows",
            "max_source_bytes",
            "excluded_fragment_ids",
            "data_storage_version",
        }
        if unknown:
            raise InvalidArgumentError(f"unknown compact_files options {sorted(unknown)}")
        config = self._ds.config()

        def pick(name: str, value: Any, parse: Callable[[str], Any]) -> Any:
            if value is None and f"lance.compaction.{name}" in config:
                return parse(config[f"lance.compaction.{name}"])
            return value

        target = _positive_int(
            "target_rows_per_fragment", pick("target_rows_per_fragment", target_rows_per_fragment, int)
        )
        batch_size = _positive_int("batch_size", pick("batch_size", batch_size, int))
        materialize = pick("materialize_deletions", materialize_deletions, lambda v: v.lower() == "true")
        threshold = pick("materialize_deletions_threshold", materialize_deletions_threshold, float)
        if threshold is not None and (isinstance(threshold, bool) or not 0 <= float(threshold) <= 1):
            raise InvalidArgumentError(f"materialize_deletions_threshold must be in [0, 1], got {threshold!r}")
        native, counts = self._ds._native.compact_files(
            target_rows_per_fragment=target,
            materialize_deletions=None if materialize is None else bool(materialize),
            materialize_deletions_threshold=None if threshold is None else float(threshold),
            batch_size=batch_size,
        )
        self._ds._native = native
        return CompactionMetrics(**counts)


def _check_delta_version(version: Any, name: str) -> int:
    if isinstance(version, bool) or not isinstance(version, int) or not 0 <= version <= _U64_MAX:
        raise InvalidArgumentError(f"{name} must be a version number, got {version!r}")
    return version


class DatasetDelta:
    """The differences between two versions (from :meth:`LanceDataset.delta`): rows
    inserted or updated after the begin version up to the end version, and ids of rows
    deleted in between. As in pylance, the rows are read from the dataset ``delta`` was
    called on; the versions bound the ranges of ``_row_created_at_version`` and
    ``_row_last_updated_at_version``."""

    def __init__(self, ds: "LanceDataset", begin: int, end: int, columns: Optional[List[str]] = None) -> None:
        if begin > end:
            raise InvalidArgumentError(f"begin version {begin} is after end version {end}")
        self._ds = ds
        self._begin = begin
        self._end = end
        self._columns = columns
        self._result: Optional[Tuple[pa.Table, pa.Table, Optional[List[int]]]] = None

    def _compute(self) -> Tuple[pa.Table, pa.Table, Optional[List[int]]]:
        if self._result is None:
            inserted, updated, deleted = self._ds._native.changes(self._begin, self._end, self._columns)
            self._result = (ReaderResults(inserted).to_table(), ReaderResults(updated).to_table(), deleted)
        return self._result

    @staticmethod
    def _reader(table: pa.Table) -> pa.RecordBatchReader:
        return pa.RecordBatchReader.from_batches(table.schema, table.to_batches())

    def get_inserted_rows(self) -> pa.RecordBatchReader:
        """Rows created after the begin version and by the end version, with
        ``_rowid``, ``_row_created_at_version`` and ``_row_last_updated_at_version``."""
        return self._reader(self._compute()[0])

    def get_updated_rows(self) -> pa.RecordBatchReader:
        """Rows that existed at the begin version and were updated after it."""
        return self._reader(self._compute()[1])

    def get_deleted_row_ids(self) -> pa.RecordBatchReader:
        """The ``_rowid`` of rows live at the begin version and gone at the end version.
        Needs stable row ids."""
        deleted = self._compute()[2]
        if deleted is None:
            raise UnsupportedFeatureError(
                f"deleted row ids need stable row ids, which version {self._end} does not use"
            )
        return self._reader(pa.table({"_rowid": pa.array(deleted, pa.uint64())}))

    def list_transactions(self) -> List[Dict[str, Any]]:
        """The versions after the begin version up to the end version, as
        :meth:`LanceDataset.versions` describes them."""
        return [v for v in self._ds.versions() if self._begin < v["version"] <= self._end]


class LanceDataset(IndexMethods, ArrowDatasetBase):
    """One version of a Lance dataset.

    Reading methods see the version this object was opened at; writing methods
    (``delete``, ``restore``) commit a new version and move this object to it.
    """

    #: The options the dataset was opened with (kept for pickling and ``insert``).
    _storage_options: Optional[Dict[str, str]] = None
    #: ``scanner()`` arguments applied to every scan (see :func:`dataset`).
    _default_scan_options: Optional[Dict[str, Any]] = None

    def __init__(
        self,
        uri: Union[str, Path],
        version: Optional[Union[int, str]] = None,
        storage_options: Optional[Dict[str, str]] = None,
        default_scan_options: Optional[Dict[str, Any]] = None,
    ):
        from ._dropin import check_default_scan_options

        path = _native_uri(uri, storage_options)
        branch_ref = version if isinstance(version, tuple) else None
        self._init(
            os.fspath(uri) if isinstance(uri, os.PathLike) else str(uri),
            path,
            _native.Dataset.open(
                path, None if branch_ref else _check_version(version), _storage_options(storage_options, path)
            ),
        )
        self._storage_options = _storage_options(storage_options)
        self._default_scan_options = check_default_scan_options(default_scan_options)
        if branch_ref is not None:  # (branch, version): see checkout_version
            other = _branches.checkout(self, branch_ref)
            self._init(other.uri, other._path, other._native)
        elif isinstance(version, str) and self._native.uri() != path:
            self._init(self._native.uri(), self._native.uri(), self._native)  # a tag on another branch

    def _init(self, uri: str, path: str, native: Any) -> None:
        self.uri = uri
        self._path = path
        self._native = native

    def _with(self, native: Any) -> "LanceDataset":
        ds = LanceDataset.__new__(LanceDataset)
        ds._init(self.uri, self._path, native)
        ds._storage_options = self._storage_options
        ds._default_scan_options = self._default_scan_options
        return ds

    def _plain(self) -> "LanceDataset":
        """This dataset without its ``default_scan_options`` (itself when it has none)."""
        if not self._default_scan_options:
            return self
        ds = self._with(self._native)
        ds._default_scan_options = None
        return ds

    def __reduce__(self) -> tuple:
        # Pickles as (uri, version, storage options, default scan options): unpickling opens
        # the dataset again at the same version, in whatever process it happens.
        from ._dropin import dataset_state, reopen_dataset

        return reopen_dataset, dataset_state(self)

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
    def data_storage_version(self) -> str:
        """The Lance file format of the data files, e.g. ``"2.0"``."""
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
        return _branches.create_branch(self, branch, reference, storage_options)

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
        return _branches.clone(self, target_path, reference, False, storage_options)

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
        return _branches.clone(self, target_path, reference, True, storage_options)

    def base_paths(self) -> Dict[int, "_branches.DatasetBasePath"]:
        """The other storage roots of this version, by id.

        >>> ds.base_paths()  # doctest: +SKIP
        {1: DatasetBasePath(path='/mnt/fast', name='fast', is_dataset_root=False, id=1)}
        """
        return _branches.base_paths(self)

    def validate(self) -> None:
        """Checks that every file this version names exists, wherever it lives (its root,
        other base paths, the source of a shallow clone or branch); raises
        ``CorruptFileError`` naming the missing ones. pylance lets cleaning up a source break
        its shallow clones silently; this finds such breakage before a scan does.

        >>> clone.validate()  # doctest: +SKIP
        """
        _branches.validate(self)

    def add_bases(
        self, new_bases: List["_branches.DatasetBasePath"], transaction_properties: Optional[Dict[str, str]] = None
    ) -> "LanceDataset":
        """Registers more base paths (a new version); returns this dataset, moved to it.

        >>> ds.add_bases([lancelet.DatasetBasePath("/mnt/archive", name="archive")])  # doctest: +SKIP
        """
        return _branches.add_bases(self, new_bases)

    def versions(self) -> List[Dict[str, Any]]:
        """Every version, oldest first: ``{"version", "timestamp", "metadata"}``."""
        out = []
        for v, secs, nanos, rows, meta in self._native.versions():
            ts = _dt.datetime.fromtimestamp(secs + nanos / 1e9)
            metadata = {"total_rows": str(rows), **meta}
            out.append({"version": v, "timestamp": ts, "metadata": metadata})
        return out

    @staticmethod
    def commit(
        base_uri: Union[str, Path, "LanceDataset"],
        operation: LanceOperation.BaseOperation,
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
        if read_version is not None:
            read_version = _check_int_version(read_version)
        uri = base_uri.uri if isinstance(base_uri, LanceDataset) else base_uri
        path = _native_uri(uri, storage_options)
        _paths.check_write_target(path)
        frags = [f.to_json() for f in operation.fragments] if hasattr(operation, "fragments") else None
        if isinstance(operation, LanceOperation.Overwrite):
            kind, schema = "overwrite", operation.new_schema
        elif isinstance(operation, LanceOperation.Append):
            kind, schema = "append", None
        else:
            raise UnsupportedFeatureError(f"lancelet cannot commit {type(operation).__name__} operations yet")
        native = _native.Dataset.commit(
            path,
            kind,
            frags or [],
            schema=schema,
            read_version=read_version,
            enable_v2_manifest_paths=True if enable_v2_manifest_paths is None else bool(enable_v2_manifest_paths),
            commit_message=commit_message,
            storage_options=_storage_options(storage_options, path),
        )
        ds = LanceDataset.__new__(LanceDataset)
        ds._init(os.fspath(uri) if isinstance(uri, os.PathLike) else str(uri), path, native)
        ds._storage_options = _storage_options(storage_options)
        return ds

    def checkout_version(self, version: Union[int, str, Tuple[Optional[str], Optional[int]]]) -> "LanceDataset":
        """The same dataset at another version (a number or a tag name), or a version of a
        branch: ``(branch, version)`` (``None`` version: the branch's newest)."""
        if isinstance(version, (tuple, str)):  # a tag may point into a branch
            return _branches.checkout(self, version)
        return self._with(self._native.checkout(_check_version(version)))

    @property
    def branch(self) -> Optional[str]:
        """The branch this version belongs to (None: main)."""
        return _native.ds_branch(self._native)

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
        if older_than is not None and not isinstance(older_than, _dt.timedelta):
            raise InvalidArgumentError(f"older_than must be a datetime.timedelta, got {type(older_than).__name__}")
        if versions is not None:
            if isinstance(versions, (str, bytes)) or not all(
                isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in versions
            ):
                raise InvalidArgumentError(f"versions must be a list of version numbers, got {versions!r}")
            versions = list(versions)
        counts = self._native.cleanup_old_versions(
            older_than=None if older_than is None else older_than.total_seconds(),
            retain_versions=_positive_int("retain_versions", retain_versions),
            delete_unverified=bool(delete_unverified),
            error_if_tagged_old_versions=bool(error_if_tagged_old_versions),
            delete_rate_limit=_positive_int("delete_rate_limit", delete_rate_limit),
            versions=versions,
            delete_concurrency=_positive_int("delete_concurrency", delete_concurrency),
        )
        return CleanupStats(**counts)

    def config(self) -> Dict[str, str]:
        """The table config stored in the manifest (``key -> value``)."""
        return dict(self._native.config())

    def update_config(self, values: Dict[str, Optional[str]], *, replace: bool = False) -> Dict[str, str]:
        """Sets table config keys (a value of None removes the key; ``replace=True`` drops
        every other key) in an UpdateConfig commit; moves to the new version and returns
        the new config."""
        if not isinstance(values, dict) or not all(
            isinstance(k, str) and (v is None or isinstance(v, str)) for k, v in values.items()
        ):
            raise InvalidArgumentError("update_config takes a dict of string keys to string (or None) values")
        self._native = self._native.update_config(list(values.items()), bool(replace))
        return self.config()

    def delete_config_keys(self, keys: List[str]) -> None:
        """Removes table config keys in an UpdateConfig commit and moves to the new version."""
        if isinstance(keys, str) or not all(isinstance(k, str) for k in keys):
            raise InvalidArgumentError("delete_config_keys takes a list of key names")
        self._native = self._native.update_config([(k, None) for k in keys], False)

    def _asof(self, asof: Union[_dt.datetime, str]) -> "LanceDataset":
        if isinstance(asof, str):
            asof = _dt.datetime.fromisoformat(asof)
        cutoff = asof.timestamp()
        best = None
        for v, secs, nanos, _, _ in self._native.versions():
            if secs + nanos / 1e9 <= cutoff:
                best = v
        if best is None:
            raise InvalidArgumentError(f"no version of {self.uri} was committed at or before {asof}")
        return self.checkout_version(best)

    # -- reading ----------------------------------------------------------------------

    def count_rows(self, filter: Optional[str] = None, **kwargs: Any) -> int:
        """Number of rows (matching ``filter`` when given; deleted rows excluded)."""
        if kwargs:
            return self.scanner(filter=filter, **kwargs).count_rows()
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
        """A scan of this version (pylance's signature; vector and full-text search are not
        supported yet, and the readahead/size hints are accepted and ignored).

        ``columns``: names (``"s.a"`` selects a struct child) or ``{name: SQL expression}``;
        ``filter``: a SQL predicate (``"a > 1 AND name LIKE 'x%'"``); ``limit``/``offset``
        apply after the filter; ``fragments`` restricts (and orders) the fragments read;
        ``with_row_id``/``with_row_address`` append ``_rowid``/``_rowaddr``;
        ``scan_stats_callback`` receives a :class:`ScanStatistics` when a run ends (also
        readable as ``scanner.scan_stats``); ``use_stats=False`` reads every row the
        filter could touch instead of skipping fragments and row ranges that the data
        files' zone statistics (null count, min, max) prove cannot match.

        >>> ds.scanner(columns=["id"], filter="id > 10", limit=5).to_table()  # doctest: +SKIP
        """
        if self._default_scan_options:
            from ._dropin import scanner_with_defaults

            return scanner_with_defaults(
                self,
                dict(
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
                ),
            )
        if nearest is not None:
            from ._nearest import NearestScanner

            # A NearestScanner has LanceScanner's reading methods (to_table, to_batches, ...).
            return cast(
                "LanceScanner",
                NearestScanner(
                    self,
                    nearest,
                    columns=columns,
                    filter=_filter(filter),
                    prefilter=prefilter,
                    fast_search=kwargs.get("fast_search"),
                    limit=limit,
                    offset=offset,
                    with_row_id=with_row_id,
                ),
            )
        for name, value in (("index_segments", index_segments), ("full_text_query", full_text_query)):
            if value is not None:
                raise UnsupportedFeatureError(f"scanner option {name!r} is not supported yet")
        for k in kwargs:
            if k in _UNSUPPORTED_SCAN_OPTIONS:
                if kwargs[k] is not None:
                    raise UnsupportedFeatureError(f"scanner option {k!r} is not supported yet")
            elif k not in _IGNORED_SCAN_OPTIONS and k not in _HANDLED_SCAN_KWARGS:
                raise TypeError(f"scanner() got an unexpected keyword argument {k!r}")
        use_scalar_index = kwargs.get("use_scalar_index")
        order = _ordering.orderings(kwargs.get("order_by"))
        blob_binary = _blob.wants_binary(kwargs.get("blob_handling"))
        scanner = LanceScanner(
            self,
            columns=columns,
            filter=filter,
            limit=limit,
            offset=offset,
            batch_size=batch_size,
            fragments=fragments,
            with_row_id=bool(with_row_id),
            with_row_address=bool(with_row_address) or blob_binary,
            use_stats=True if use_stats is None else bool(use_stats),
            scan_stats_callback=scan_stats_callback,
            use_scalar_index=True if use_scalar_index is None else bool(use_scalar_index),
        )
        if blob_binary:  # blob_handling="all_binary": bytes instead of descriptors
            scanner._blob_binary = bool(with_row_address)
        scanner._order = order
        scanner._rowoffset = _rowoffset.plan_scan(scanner._kwargs)
        return scanner

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
        if compared_against is not None and (begin_version is not None or end_version is not None):
            raise ValueError("give either compared_against or begin_version and end_version, not both")
        if compared_against is not None:
            begin, end = _check_delta_version(compared_against, "compared_against"), self.version
        elif begin_version is not None and end_version is not None:
            begin = _check_delta_version(begin_version, "begin_version")
            end = _check_int_version(end_version)
        else:
            raise ValueError("delta() needs compared_against, or both begin_version and end_version")
        if begin > end:
            begin, end = end, begin
        return DatasetDelta(self, begin, end)

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
        if not self.has_stable_row_ids:
            raise UnsupportedFeatureError(
                "changes() needs stable row ids: create the dataset with enable_stable_row_ids=True"
            )
        end = self.version if end_version is None else _check_int_version(end_version)
        d = DatasetDelta(self, _check_delta_version(begin_version, "begin_version"), end, columns)
        return {
            "inserted": d.get_inserted_rows().read_all(),
            "updated": d.get_updated_rows().read_all(),
            "deleted": d.get_deleted_row_ids().read_all(),
        }

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
        from .merge import MergeInsertBuilder

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
        from .merge import merge_columns

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
        from .evolve import BatchUDF, backfill

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
        if not alterations:
            raise InvalidArgumentError("alter_columns needs at least one alteration")
        out = []
        for a in alterations:
            if not isinstance(a, dict) or not isinstance(a.get("path"), str):
                raise InvalidArgumentError(f'an alteration is a dict with a "path", got {a!r}')
            unknown = set(a) - {"path", "name", "nullable", "data_type"}
            if unknown:
                raise InvalidArgumentError(f"unknown alteration keys {sorted(unknown)}")
            data_type = a.get("data_type")
            if data_type is not None and not isinstance(data_type, pa.DataType):
                raise TypeError(f"data_type must be a pyarrow.DataType, got {type(data_type).__name__}")
            name, nullable = a.get("name"), a.get("nullable")
            if name is not None and not isinstance(name, str):
                raise InvalidArgumentError(f"a new column name is a string, got {name!r}")
            if nullable is not None and not isinstance(nullable, bool):
                raise InvalidArgumentError(f"nullable is True or False, got {nullable!r}")
            out.append(
                (a["path"], name, nullable, None if data_type is None else pa.schema([pa.field("type", data_type)]))
            )
        self._native = self._native.alter_columns(out)

    def __repr__(self) -> str:
        return f"LanceDataset(uri={self.uri!r}, version={self.version})"


def _retry_args(retries: int, timeout: Optional[_dt.timedelta]) -> Tuple[int, Optional[float]]:
    """``(conflict_retries, retry_timeout in seconds)`` checked, for the native writes that
    run again on the newest version after a retryable conflict (as pylance does)."""
    if isinstance(retries, bool) or not isinstance(retries, int) or retries < 0:
        raise InvalidArgumentError(f"conflict_retries takes a non-negative integer, got {retries!r}")
    if timeout is not None and not isinstance(timeout, _dt.timedelta):
        raise InvalidArgumentError(f"retry_timeout takes a datetime.timedelta, got {type(timeout).__name__}")
    return min(retries, 2**32 - 1), None if timeout is None else max(timeout.total_seconds(), 0.0)


def _filter(filter: Any) -> Optional[str]:
    if filter is None or isinstance(filter, str):
        return filter
    if _expressions.is_expression(filter):
        return _expressions.to_sql(filter)  # pc.field("a") > 5, as pylance takes
    if type(filter).__module__.startswith("pyarrow"):
        # pylance also takes pyarrow.compute expressions.
        raise UnsupportedFeatureError(f"filters must be SQL strings, got {type(filter).__name__}")
    raise InvalidArgumentError(f"filters must be SQL strings, got {type(filter).__name__}")


def _exprs(columns: Dict[str, Any]) -> List[Tuple[str, str]]:
    """``{name: SQL expression}`` as a checked list of pairs."""
    items = list(columns.items())
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in items):
        raise InvalidArgumentError("columns as a dict maps output names to SQL expressions (strings)")
    return items


def _names(columns: Any) -> Optional[List[str]]:
    if columns is None:
        return None
    if isinstance(columns, (str, bytes)) or not isinstance(columns, Iterable):
        raise InvalidArgumentError(f"columns must be a list of column names, got {type(columns).__name__}")
    names = list(columns)
    seen = set()
    for c in names:
        if not isinstance(c, str):
            raise InvalidArgumentError(f"columns must be a list of column names, got {c!r} in it")
        if c in seen:
            raise InvalidArgumentError(f"column {c!r} is selected twice")
        seen.add(c)
    return names


def _indices(indices: Any, what: str = "row index", bound: int = 2**63) -> List[int]:
    """Row indices (``what``) as a list of ints in ``[0, bound)``."""
    if isinstance(indices, (pa.Array, pa.ChunkedArray)):
        indices = indices.to_pylist()
    elif hasattr(indices, "tolist"):
        indices = indices.tolist()
    if isinstance(indices, (str, bytes, dict)) or not isinstance(indices, Iterable):
        raise TypeError(f"indices must be a list of integers, got {type(indices).__name__}")
    out = []
    for i in indices:
        i = _as_int(i)  # numpy integers too
        if isinstance(i, bool) or not isinstance(i, int):
            raise InvalidArgumentError(f"row indices must be integers, got {i!r}")
        if i < 0:
            raise RowIndexError(f"{what} {i} is negative")
        if i >= bound:
            raise RowIndexError(f"{what} {i} is out of range")
        out.append(i)
    return out


def _reporting(reader: pa.RecordBatchReader, stats: Any, callback: Callable) -> pa.RecordBatchReader:
    """``reader``, calling ``callback`` with the scan's statistics once it is exhausted."""

    def batches() -> Iterator[pa.RecordBatch]:
        yield from reader
        callback(ScanStatistics(**stats.snapshot()))

    return pa.RecordBatchReader.from_batches(reader.schema, batches())


def _fragment_id(f: Any) -> int:
    if isinstance(f, LanceFragment):
        return f.fragment_id
    if isinstance(f, bool) or not isinstance(f, int) or not 0 <= f <= _U64_MAX:
        raise InvalidArgumentError(f"fragments must be LanceFragment objects or fragment ids, got {f!r}")
    return f


class LanceScanner:
    """A planned read of a dataset version (see :meth:`LanceDataset.scanner`)."""

    def __init__(
        self,
        ds: LanceDataset,
        columns: _Columns = None,
        filter: Optional[str] = None,
        limit: Optional[int] = None,
        offset: Optional[int] = None,
        batch_size: Optional[int] = None,
        fragments: Optional[Iterable[Union["LanceFragment", int]]] = None,
        with_row_id: bool = False,
        with_row_address: bool = False,
        scan_stats_callback: Optional[Callable[[ScanStatistics], None]] = None,
        use_stats: bool = True,
        use_scalar_index: bool = True,
    ):
        for name, v in (("limit", limit), ("offset", offset)):
            if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < 0):
                raise InvalidArgumentError(f"{name} must be a non-negative integer, got {v!r}")
        if batch_size is not None and (
            isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size <= 0
        ):
            raise InvalidArgumentError(f"batch_size must be a positive integer, got {batch_size!r}")
        # Counts past what the native layer holds mean "no limit" / "skip everything".
        limit = None if limit is None else min(limit, _U64_MAX)
        offset = None if offset is None else min(offset, _U64_MAX)
        batch_size = None if batch_size is None else min(batch_size, 2**63 - 1)
        self._ds = ds
        self._stats_callback = scan_stats_callback
        self._stats: Optional[Any] = None
        self._kwargs: Dict[str, Any] = dict(
            filter=_filter(filter),
            limit=limit,
            offset=offset,
            batch_size=batch_size,
            with_row_id=with_row_id,
            with_row_address=with_row_address,
            use_stats=use_stats,
            use_scalar_index=use_scalar_index,
        )
        if isinstance(columns, dict):
            items = list(columns.items())
            if not all(isinstance(k, str) and isinstance(v, str) for k, v in items):
                raise InvalidArgumentError("columns as a dict maps output names to SQL expressions (strings)")
            self._kwargs["exprs"] = items
        else:
            self._kwargs["columns"] = _names(columns)
        if fragments is not None:
            if not isinstance(fragments, Iterable):
                raise InvalidArgumentError(
                    f"fragments must be a list of LanceFragment objects or fragment ids, got {type(fragments).__name__}"
                )
            self._kwargs["fragments"] = [_fragment_id(f) for f in fragments]

    #: ``order_by`` as a list of ColumnOrdering (None: scan order); see ``_ordering``.
    _order: Optional[List[Any]] = None
    #: Where the ``_rowoffset`` column goes (None: not asked for); see ``_rowoffset``.
    _rowoffset: Optional[Tuple[int, bool]] = None
    #: For ``blob_handling="all_binary"``: whether the caller asked for ``_rowaddr``.
    _blob_binary: Optional[bool] = None

    def _stream(self) -> Any:
        if self._blob_binary is not None:
            return _blob.binary_reader(self._ds, self._stream_plain(), self._blob_binary)
        return self._stream_plain()

    def _stream_plain(self) -> Any:
        if self._order or self._rowoffset:
            return _ordering.ordered_stream(self)
        self._stats = _native.ScanStats()
        stream = self._ds._native.scan(stats=self._stats, **self._kwargs)
        if self._stats_callback is None:
            return stream
        return _reporting(pa.RecordBatchReader.from_stream(stream), self._stats, self._stats_callback)

    def __reduce__(self) -> tuple:
        # The same scan of the same dataset version (the dataset pickles by reference).
        from ._dropin import reopen_scanner

        return reopen_scanner, (self._ds, self._kwargs, self._stats_callback)

    def explain_plan(self, verbose: bool = False) -> str:
        """A readable plan of this scan: the version, the columns read, the filter, the
        scalar indexes that narrow it (``ScalarIndexQuery: query=[id = 5]@id_idx(BTree)``)
        and how many rows its tasks cover.

        >>> print(ds.scanner(filter="id = 5").explain_plan())  # doctest: +SKIP
        """
        del verbose
        return self._ds._native.scan(explain=True, **self._kwargs)

    def analyze_plan(self) -> str:
        """The plan, followed by what running it did (rows and bytes read)."""
        plan = self.explain_plan()
        self.to_table()
        return plan + repr(self.scan_stats) + "\n"

    @property
    def scan_stats(self) -> ScanStatistics:
        """What the most recent execution of this scanner did so far (zeros before one)."""
        return ScanStatistics(**self._stats.snapshot()) if self._stats is not None else ScanStatistics()

    @property
    def projected_schema(self) -> pa.Schema:
        """The schema of the results."""
        return pa.schema(self._stream())

    @property
    def dataset_schema(self) -> pa.Schema:
        """The schema of the dataset."""
        return self._ds.schema

    def to_table(self) -> pa.Table:
        """The results as a ``pyarrow.Table``."""
        return ReaderResults(self._stream()).to_table()

    def to_reader(self) -> pa.RecordBatchReader:
        """The results as a ``pyarrow.RecordBatchReader``."""
        return ReaderResults(self._stream()).to_batches()

    def to_batches(self) -> Iterator[pa.RecordBatch]:
        """The results as an iterator of ``pyarrow.RecordBatch``."""
        return iter(self.to_reader())

    def count_rows(self) -> int:
        """How many rows the scan returns."""
        k = self._kwargs
        if k["limit"] is None and not k["offset"] and k.get("use_scalar_index", True):
            return self._ds._native.count_rows(k["filter"], k.get("fragments"))
        return sum(b.num_rows for b in self.to_batches())

    def __arrow_c_stream__(self, requested_schema: Any = None) -> Any:
        return self._stream().__arrow_c_stream__(requested_schema)


class LanceFragment:
    """One fragment of a dataset version: a set of rows stored in its own data files."""

    def __init__(self, ds: LanceDataset, meta: Dict[str, Any]):
        self._ds = ds
        self._meta = FragmentMetadata(meta)

    @property
    def fragment_id(self) -> int:
        """The fragment's id."""
        return self._meta.id

    @property
    def physical_rows(self) -> int:
        """Rows stored, including deleted ones."""
        return self._meta.physical_rows

    @property
    def num_deletions(self) -> int:
        """Rows deleted."""
        return self._meta.num_deletions

    @property
    def metadata(self) -> FragmentMetadata:
        """The fragment's manifest entry."""
        return self._meta

    @property
    def schema(self) -> pa.Schema:
        """The dataset's schema."""
        return self._ds.schema

    def count_rows(self, filter: Optional[str] = None) -> int:
        """Live rows (matching ``filter`` when given)."""
        if filter is None:
            return self._meta.num_rows
        return self._ds._native.count_rows(_filter(filter), [self.fragment_id])

    def data_files(self) -> List[DataFile]:
        """The fragment's data files."""
        return self.metadata.files

    def deletion_file(self) -> Optional[str]:
        """The path of the deletion file, relative to the dataset root (None if no deletions)."""
        d = self._meta.deletion_file
        return d.path if d else None

    def scanner(self, **kwargs: Any) -> LanceScanner:
        """A scan of this fragment only (the dataset's ``default_scan_options`` do not
        apply, as in pylance)."""
        return self._ds._plain().scanner(fragments=[self.fragment_id], **kwargs)

    def __reduce__(self) -> tuple:
        # The dataset (reopened at its version) and this fragment's manifest entry.
        return LanceFragment, (self._ds, self._meta._meta)

    def to_table(self, **kwargs: Any) -> pa.Table:
        """The fragment's rows as a table."""
        return self.scanner(**kwargs).to_table()

    def to_batches(self, **kwargs: Any) -> Iterator[pa.RecordBatch]:
        """The fragment's rows as batches."""
        return self.scanner(**kwargs).to_batches()

    def take(self, indices: Union[List[int], pa.Array], columns: _Columns = None) -> pa.Table:
        """Rows at offsets ``indices`` among this fragment's live rows."""
        return ReaderResults(
            self._ds._native.fragment_take(self.fragment_id, _indices(indices), _names(columns))
        ).to_table()

    def __repr__(self) -> str:
        return f"LanceFragment(id={self.fragment_id}, physical_rows={self.physical_rows})"
