"""Reading and writing single Lance files, with the API of ``lance.file``.

Example::

    import pyarrow as pa
    from lancelet.file import LanceFileReader, LanceFileWriter

    with LanceFileWriter("/tmp/points.lance", version="2.0") as w:
        w.write_batch(pa.table({"x": [1.0, 2.0], "y": [3.0, 4.0]}))

    reader = LanceFileReader("/tmp/points.lance", columns=["x"])
    reader.read_all(batch_size=1024).to_table()
    reader.take_rows([1, 0]).to_table()

Paths may also be ``file://``, ``memory://`` or ``s3://`` URIs, configured by the same
``storage_options`` as datasets::

    with LanceFileWriter("memory://scratch/points.lance") as w:
        w.write_batch(pa.table({"x": [1.0, 2.0]}))
    LanceFileReader("memory://scratch/points.lance").read_all().to_table()

Results cross from Rust to Python through the Arrow C stream interface, so the
buffers pyarrow sees are the ones the reader decoded: nothing is copied.
"""

from __future__ import annotations

import operator
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, Iterable, Iterator, List, Optional, Sequence, Union

import pyarrow as pa

from . import _native
from ._native import file as _native_file
from ._paths import native_path
from .errors import InvalidArgumentError, UnsupportedFeatureError

__all__ = [
    "LanceFileReader",
    "LanceFileWriter",
    "ReaderResults",
    "LanceFileMetadata",
    "LanceColumnMetadata",
    "LancePageMetadata",
    "LanceBufferDescriptor",
    "LanceFileStatistics",
    "LanceColumnStatistics",
    "stable_version",
    "LanceFileSession",
    "ListResult",
]

#: The file format version lancelet writes when none is given (set in one place, the Rust
#: `FileVersion::DEFAULT`).
DEFAULT_VERSION: str = _native_file.DEFAULT_FILE_VERSION


def stable_version() -> str:
    """The file format version lancelet writes by default."""
    return DEFAULT_VERSION


def _uri(path: Any) -> str:
    """A local path (``~`` expanded) or a ``file://``, ``memory://`` or ``s3://`` URI."""
    path = os.fspath(path) if isinstance(path, os.PathLike) else str(path)
    return native_path(path)


def _local_path(path: Any, storage_options: Optional[Dict[str, str]]) -> str:
    """A local path for the file session (which works on local directories only)."""
    path = str(path)
    if "://" in path and not path.startswith("file://"):
        raise UnsupportedFeatureError(f"LanceFileSession works on local directories only, got {path!r}")
    if storage_options:
        raise InvalidArgumentError(f"storage_options are not used for local files: {sorted(storage_options)}")
    return native_path(path)


def _storage_options(uri: str, storage_options: Optional[Dict[str, str]]) -> Optional[Dict[str, str]]:
    """The options for an object store URI; on local paths they are ignored, as pylance does."""
    if storage_options is None or "://" not in uri or uri.startswith("file://"):
        return None
    if not isinstance(storage_options, dict):
        raise InvalidArgumentError(f"storage_options must be a dict, got {type(storage_options).__name__}")
    return {str(k): str(v) for k, v in storage_options.items()}


class ReaderResults:
    """The result of a read: a one-shot stream of record batches.

    Use :meth:`to_table` or :meth:`to_batches`, or hand it to anything that accepts
    Arrow streams (``pa.table(results)``, ``polars.from_arrow(...)``).
    """

    def __init__(self, stream: "_native.BatchStream"):
        self._stream = stream

    def to_batches(self) -> pa.RecordBatchReader:
        """The batches, as a ``pyarrow.RecordBatchReader``.

        A batch that cannot be read raises the matching :mod:`lancelet.errors` exception
        (for example :class:`CorruptFileError`) while iterating.
        """
        reader = self._open()
        return pa.RecordBatchReader.from_batches(reader.schema, self._mapped(reader))

    def to_table(self) -> pa.Table:
        """All batches, as one ``pyarrow.Table``."""
        reader = self._open()
        try:
            return reader.read_all()
        except pa.ArrowException as e:
            self._raise_typed(e)
            raise

    def _open(self) -> pa.RecordBatchReader:
        if isinstance(self._stream, pa.RecordBatchReader):
            # Read it directly: a Python error raised while producing its batches then
            # reaches the caller as itself (through the C stream interface it would become
            # an ArrowInvalid whose message embeds the Python traceback).
            return self._stream
        return pa.RecordBatchReader.from_stream(self._stream)

    def _mapped(self, reader: pa.RecordBatchReader) -> Iterator[pa.RecordBatch]:
        try:
            yield from reader
        except pa.ArrowException as e:
            self._raise_typed(e)
            raise

    def _raise_typed(self, cause: BaseException) -> None:
        take_error = getattr(self._stream, "take_error", None)  # native streams keep it
        typed = take_error() if take_error is not None else None
        if typed is not None:
            raise typed from cause

    @property
    def reader(self) -> pa.RecordBatchReader:
        """Same as :meth:`to_batches` (pylance compatibility)."""
        return self.to_batches()

    def __arrow_c_stream__(self, requested_schema: Any = None) -> Any:
        return self._stream.__arrow_c_stream__(requested_schema)


@dataclass(frozen=True)
class LanceBufferDescriptor:
    """Where a buffer lies in the file."""

    position: int
    size: int


@dataclass(frozen=True)
class LancePageMetadata:
    """One page: its buffers, row count and encoding (a debug rendering of the protobuf)."""

    buffers: List[LanceBufferDescriptor]
    encoding: str
    length: int = 0
    priority: int = 0


@dataclass(frozen=True)
class LanceColumnMetadata:
    """One column: its column-level buffers and pages."""

    column_buffers: List[LanceBufferDescriptor]
    pages: List[LancePageMetadata]


@dataclass(frozen=True)
class LanceFileMetadata:
    """Layout of a Lance file, as returned by :meth:`LanceFileReader.metadata`."""

    schema: pa.Schema
    num_rows: int
    num_data_bytes: int
    num_column_metadata_bytes: int
    num_global_buffer_bytes: int
    global_buffers: List[LanceBufferDescriptor]
    columns: List[LanceColumnMetadata]
    major_version: int
    minor_version: int
    file_size: int = 0
    version: str = ""


@dataclass(frozen=True)
class LanceColumnStatistics:
    """Size of one column."""

    num_pages: int
    size_bytes: int


@dataclass(frozen=True)
class LanceFileStatistics:
    """Sizes of every column."""

    columns: List[LanceColumnStatistics] = field(default_factory=list)


def _buffers(pairs: Iterable[Sequence[int]]) -> List[LanceBufferDescriptor]:
    return [LanceBufferDescriptor(int(p), int(s)) for p, s in pairs]


class LanceFileReader:
    """Reads a Lance file (file format 2.0, 2.1 or 2.2, or legacy 0.1).

    Parameters
    ----------
    path:
        A local path, or a ``file://``, ``memory://`` or ``s3://`` URI.
    storage_options:
        Object store options, as for datasets (``aws_endpoint``, ``aws_region``,
        ``aws_access_key_id``, ``allow_http``, ...); ignored for local files (as in pylance).
    columns:
        Columns to read: top-level names, or dotted paths into structs (``"point.x"``).
        All columns when None.
    verify_checksums:
        Files lancelet writes carry CRC32C checksums of every byte (pylance's do not, and
        read as before). They are checked on every read, and damaged bytes raise
        :class:`lancelet.errors.CorruptFileError` naming the file, the column and the page.
        ``False`` reads without checking, to salvage what can be read of a damaged file.
    """

    def __init__(
        self,
        path: str,
        storage_options: Optional[Dict[str, str]] = None,
        columns: Optional[List[str]] = None,
        *,
        verify_checksums: bool = True,
        **kwargs: Any,
    ):
        _reject_unknown(kwargs, {"namespace_client", "table_id", "_inner_reader"})
        self.path = str(path)
        uri = _uri(path)
        self._reader = _native_file.FileReader.open(
            uri, _storage_options(uri, storage_options), verify_checksums=bool(verify_checksums)
        )
        self._columns = list(columns) if columns is not None else None
        if self._columns is not None:
            # Validate names now so a typo fails at open, not at the first read.
            _native_take_schema(self._reader, self._columns)

    @property
    def schema(self) -> pa.Schema:
        """The schema of the file."""
        return pa.schema(self._reader)

    def num_rows(self) -> int:
        """Number of rows in the file."""
        return self._reader.num_rows()

    def read_all(self, *, batch_size: int = 1024, batch_readahead: int = 16) -> ReaderResults:
        """Reads every row, in batches of ``batch_size`` rows."""
        return self.read_range(0, self.num_rows(), batch_size=batch_size, batch_readahead=batch_readahead)

    def read_range(
        self, start: int, num_rows: int, *, batch_size: int = 1024, batch_readahead: int = 16
    ) -> ReaderResults:
        """Reads rows ``start`` to ``start + num_rows``, in batches of ``batch_size`` rows."""
        _check_int("start", start)
        _check_int("num_rows", num_rows)
        _check_int("batch_size", batch_size, positive=True)
        stream = self._reader.read_range(self._columns, int(start), int(num_rows), int(batch_size))
        return ReaderResults(stream)

    def take_rows(
        self, indices: Union[Sequence[int], pa.Array], *, batch_size: int = 1024, batch_readahead: int = 16
    ) -> ReaderResults:
        """Reads the rows at ``indices``, in the order given (duplicates allowed).

        Only the pages, and for fixed-width and string columns only the byte ranges,
        that hold those rows are read.
        """
        _check_int("batch_size", batch_size, positive=True)
        idx = _indices(indices)
        return ReaderResults(self._reader.take(idx, self._columns, int(batch_size)))

    def metadata(self) -> LanceFileMetadata:
        """Layout of the file: versions, sizes, global buffers, columns, pages and encodings."""
        m = self._reader.metadata()
        columns = [
            LanceColumnMetadata(
                column_buffers=_buffers(c["column_buffers"]),
                pages=[
                    LancePageMetadata(
                        buffers=_buffers(p["buffers"]),
                        encoding=p["encoding"],
                        length=p["length"],
                        priority=p["priority"],
                    )
                    for p in c["pages"]
                ],
            )
            for c in m["columns"]
        ]
        return LanceFileMetadata(
            schema=self.schema,
            num_rows=m["num_rows"],
            num_data_bytes=m["num_data_bytes"],
            num_column_metadata_bytes=m["num_column_metadata_bytes"],
            num_global_buffer_bytes=m["num_global_buffer_bytes"],
            global_buffers=_buffers(m["global_buffers"]),
            columns=columns,
            major_version=m["major_version"],
            minor_version=m["minor_version"],
            file_size=m["file_size"],
            version=m["version"],
        )

    def file_statistics(self) -> LanceFileStatistics:
        """Pages and bytes per column."""
        cols = []
        for c in self.metadata().columns:
            size = sum(b.size for p in c.pages for b in p.buffers)
            cols.append(LanceColumnStatistics(num_pages=len(c.pages), size_bytes=size))
        return LanceFileStatistics(columns=cols)

    def read_global_buffer(self, index: int) -> bytes:
        """The raw bytes of global buffer ``index`` (0 holds the schema)."""
        _check_int("index", index)
        return self._reader.read_global_buffer(int(index))

    def io_stats(self) -> Dict[str, int]:
        """Bytes and read requests this reader has sent to storage so far."""
        bytes_read, requests = self._reader.io_stats()
        return {"bytes_read": bytes_read, "read_requests": requests}


_MAX_INDEX = 2**63 - 1


def _indices(indices: Any) -> List[int]:
    """Row indices as a list of Python ints, refusing anything that is not an integer."""
    if isinstance(indices, (pa.Array, pa.ChunkedArray)):
        if not pa.types.is_integer(indices.type):
            raise InvalidArgumentError(f"indices must be integers, got an array of {indices.type}")
        if indices.null_count:
            raise InvalidArgumentError("indices must not contain nulls")
        indices = indices.to_pylist()
    elif hasattr(indices, "dtype") and hasattr(indices, "tolist"):  # numpy arrays
        if getattr(indices.dtype, "kind", "") not in "iu":
            raise InvalidArgumentError(f"indices must be integers, got an array of {indices.dtype}")
        indices = indices.tolist()
    try:
        items = iter(indices)
    except TypeError:
        raise InvalidArgumentError(f"indices must be a sequence of integers, got {indices!r}") from None
    out = []
    for i in items:
        if isinstance(i, bool):
            raise InvalidArgumentError(f"indices must be integers, got {i!r}")
        try:
            v = operator.index(i)
        except TypeError:
            raise InvalidArgumentError(f"indices must be integers, got {i!r}") from None
        if v < 0:
            raise InvalidArgumentError(f"row index {v} is negative")
        if v > _MAX_INDEX:
            raise InvalidArgumentError(f"row index {v} is out of range")
        out.append(v)
    return out


def _native_take_schema(reader: Any, columns: List[str]) -> None:
    reader.take([], columns, 1)


class LanceFileWriter:
    """Writes a Lance file.

    The file appears at ``path`` only when :meth:`close` succeeds; a writer that is
    abandoned (or whose ``with`` block raises) leaves nothing behind.

    Parameters
    ----------
    path:
        Where to create the file: a local path, or a ``file://``, ``memory://`` or
        ``s3://`` URI.
    schema:
        Schema of the file; inferred from the first batch when None.
    version:
        File format version: ``"2.0"``, ``"2.1"`` or ``"2.2"`` (``"stable"``, the default,
        as in pylance 14). At 2.1+ structs may hold nulls and pages are compressed
        (bit packing, dictionaries, FSST, RLE, constants); ``"legacy"`` (0.1) is read-only
        and raises :class:`UnsupportedFeatureError`.
    max_page_bytes:
        Largest page; a flushed column larger than this is cut into several pages
        (default 32 MiB). Pages are cut by pylance 14's rules, so the same batches give
        the same pages as ``lance.file.LanceFileWriter`` (at 2.0 a flush of one array is
        cut by this size; at 2.1+, like pylance, it leaves pages whole).
    data_cache_bytes:
        Memory for buffering columns before they are written (split evenly among the
        top-level fields; 8 MiB per column when None).
    storage_options:
        Object store options, as for datasets; ignored for local files (as in pylance).
    page_stats:
        Also record per-zone null counts, minimums and maximums of every orderable column
        (lancelet's own extra global buffer, which pylance ignores), for filtered reads to
        skip rows. Off by default so that files stay byte-identical to pylance's; dataset
        writes turn it on.
    checksums:
        Record a CRC32C checksum of every byte (an extra global buffer, after any added
        with :meth:`add_global_buffer`, which pylance ignores: it reads the file
        unchanged), so that readers report damaged bytes instead of decoding them
        (see ``verify_checksums`` of :class:`LanceFileReader`). On by default; ``False``
        writes a file byte-identical to pylance's.
    """

    def __init__(
        self,
        path: str,
        schema: Optional[pa.Schema] = None,
        *,
        data_cache_bytes: Optional[int] = None,
        version: Optional[str] = None,
        storage_options: Optional[Dict[str, str]] = None,
        max_page_bytes: Optional[int] = None,
        page_stats: bool = False,
        checksums: bool = True,
        **kwargs: Any,
    ):
        _reject_unknown(kwargs, {"namespace_client", "table_id", "keep_original_array", "_inner_writer"})
        self.path = _uri(path)
        self._storage_options = _storage_options(self.path, storage_options)
        self._version = DEFAULT_VERSION if version is None else version
        if data_cache_bytes is not None:
            _check_int("data_cache_bytes", data_cache_bytes, positive=True)
        self._data_cache_bytes = data_cache_bytes
        if max_page_bytes is not None:
            _check_int("max_page_bytes", max_page_bytes, positive=True)
        self._max_page_bytes = max_page_bytes
        self._page_stats = bool(page_stats)
        self._checksums = bool(checksums)
        self._metadata: Dict[str, str] = {}
        self._pending_buffers: List[bytes] = []
        self._writer: Any = None
        self.closed = False
        self.size_bytes: Optional[int] = None
        if schema is not None:
            self._open(schema)

    def _open(self, schema: pa.Schema) -> None:
        self._writer = _native_file.FileWriter(
            self.path,
            schema,
            {
                "version": self._version,
                "max_page_bytes": self._max_page_bytes,
                "dictionary": True,
                "data_cache_bytes": self._data_cache_bytes,
                "page_stats": self._page_stats,
                "storage_options": self._storage_options,
                "checksums": self._checksums,
            },
        )
        for k, v in self._metadata.items():
            self._writer.add_schema_metadata(k, v)
        for data in self._pending_buffers:
            self._writer.add_global_buffer(data)
        self._pending_buffers.clear()

    def write_batch(self, batch: Union[pa.RecordBatch, pa.Table, Any]) -> None:
        """Writes a record batch or table (or any Arrow stream or array producer)."""
        if self.closed:
            raise InvalidArgumentError("cannot write to a closed LanceFileWriter")
        for b in _batches(batch):
            if self._writer is None:
                self._open(pa.record_batch(b).schema if not isinstance(b, pa.RecordBatch) else b.schema)
            self._writer.write_batch(b)

    def add_global_buffer(self, data: bytes) -> int:
        """Stores ``data`` in the file as a global buffer and returns its index (1, 2, ...).

        Read it back with :meth:`LanceFileReader.read_global_buffer`. Buffer 0 holds the schema.
        """
        if self.closed:
            raise InvalidArgumentError("cannot change a closed LanceFileWriter")
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise InvalidArgumentError(f"a global buffer must be bytes, got {type(data).__name__}")
        data = bytes(data)
        if self._writer is None:
            # Written when the schema is known (first batch).
            self._pending_buffers.append(data)
            return len(self._pending_buffers)
        return self._writer.add_global_buffer(data)

    def add_schema_metadata(self, key: str, value: str) -> None:
        """Adds a key/value pair to the schema metadata of the file."""
        if self.closed:
            raise InvalidArgumentError("cannot change a closed LanceFileWriter")
        self._metadata[str(key)] = str(value)
        if self._writer is not None:
            self._writer.add_schema_metadata(str(key), str(value))

    def close(self) -> Optional[int]:
        """Finishes the file and returns the number of rows written (None if already closed)."""
        if self.closed:
            return None
        if self._writer is None:
            raise InvalidArgumentError(
                "Schema is unknown and file cannot be created: no schema was given and no data was written"
            )
        self.closed = True
        result = self._writer.close()
        if result is None:
            return None
        rows, size = result
        self.size_bytes = size
        return rows

    def abort(self) -> None:
        """Abandons the file; nothing is left at ``path``."""
        self.closed = True
        if self._writer is not None:
            self._writer.abort()

    def __enter__(self) -> "LanceFileWriter":
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if exc_type is not None:
            self.abort()
        else:
            self.close()


def _batches(data: Any) -> Iterable[Any]:
    if isinstance(data, pa.RecordBatch):
        return [data]
    if isinstance(data, pa.Table):
        return data.to_batches()
    if hasattr(data, "__arrow_c_stream__"):
        return pa.RecordBatchReader.from_stream(data)
    if hasattr(data, "__arrow_c_array__"):
        return [data]
    raise TypeError(f"expected a pyarrow RecordBatch or Table, got {type(data).__name__}")


def _check_int(name: str, value: Any, positive: bool = False) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        try:
            import numpy as np  # noqa: PLC0415

            if isinstance(value, np.integer):
                value = int(value)
            else:
                raise TypeError
        except (ImportError, TypeError):
            raise InvalidArgumentError(f"{name} must be an integer, got {value!r}") from None
    if value > 2**64 - 1:
        raise InvalidArgumentError(f"{name} is too large: {value}")
    if value < 0 or (positive and value == 0):
        raise InvalidArgumentError(f"{name} must be {'positive' if positive else 'non-negative'}, got {value}")


def _reject_unknown(kwargs: Dict[str, Any], allowed: set) -> None:
    unknown = set(kwargs) - allowed
    if unknown:
        raise TypeError(f"unexpected keyword arguments: {sorted(unknown)}")


# --------------------------------------------------------------------------------------
# LanceFileSession: readers, writers and file operations relative to one base path, with
# the API of pylance's ``lance.file.LanceFileSession``. lancelet's file layer reads and
# writes local files only, so the session's base path is a local directory (or
# ``file://`` URI); paths given to its methods are relative to it, with ``/`` separators,
# and listings return such relative paths.
# --------------------------------------------------------------------------------------


@dataclass
class ListResult:
    """One directory level of a session (see :meth:`LanceFileSession.list_with_delimiter`):
    the child directories (``common_prefixes``) and the files directly in it (``objects``),
    as paths relative to the session's base path."""

    common_prefixes: List[str] = field(default_factory=list)
    objects: List[str] = field(default_factory=list)


def _base(path: Any, storage_options: Optional[Dict[str, str]]) -> str:
    text = os.fspath(path) if isinstance(path, os.PathLike) else str(path)
    return os.path.abspath(_local_path(text, storage_options))


class LanceFileSession:
    """Opens Lance file readers and writers, and reads, lists, uploads and deletes files,
    relative to ``base_path``.

    >>> s = LanceFileSession("/data/files")  # doctest: +SKIP
    >>> with s.open_writer("part/0.lance") as w:  # doctest: +SKIP
    ...     w.write_batch(table)
    >>> s.open_reader("part/0.lance").read_all().to_table()  # doctest: +SKIP
    """

    def __init__(
        self,
        base_path: Union[str, Path],
        storage_options: Optional[Dict[str, str]] = None,
        namespace_client: Optional[Any] = None,
        table_id: Optional[List[str]] = None,
    ):
        if (namespace_client is None) != (table_id is None):
            raise InvalidArgumentError("namespace_client and table_id go together")
        if namespace_client is not None:
            raise UnsupportedFeatureError("namespace clients are not supported by lancelet.file")
        self.base_path = _base(base_path, storage_options)

    def _path(self, path: Optional[str]) -> str:
        if path is None or path in ("", "/"):
            return self.base_path
        if not isinstance(path, (str, os.PathLike)):
            raise TypeError(f"paths are strings, got {type(path).__name__}")
        rel = os.fspath(path).lstrip("/")
        full = os.path.normpath(os.path.join(self.base_path, rel))
        if full != self.base_path and not full.startswith(self.base_path.rstrip(os.sep) + os.sep):
            raise InvalidArgumentError(f"path {path!r} leaves the session's base path")
        return full

    def _relative(self, full: str) -> str:
        return os.path.relpath(full, self.base_path).replace(os.sep, "/")

    # -- readers and writers ------------------------------------------------------------

    def open_reader(self, path: str, columns: Optional[List[str]] = None) -> Any:
        """A :class:`~lancelet.file.LanceFileReader` of ``path`` (relative to the base path)."""
        return LanceFileReader(self._path(path), columns=columns)

    def open_writer(
        self,
        path: str,
        *,
        schema: Optional[pa.Schema] = None,
        data_cache_bytes: Optional[int] = None,
        version: Optional[str] = None,
        keep_original_array: Optional[bool] = None,
        max_page_bytes: Optional[int] = None,
    ) -> Any:
        """A :class:`~lancelet.file.LanceFileWriter` creating ``path`` (relative to the base
        path; missing directories are created)."""
        full = self._path(path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        return LanceFileWriter(
            full,
            schema,
            data_cache_bytes=data_cache_bytes,
            version=version,
            keep_original_array=keep_original_array,
            max_page_bytes=max_page_bytes,
        )

    def open_packed_blob_writer(self, path: str, blob_id: int) -> Any:
        """Blob files are not supported by lancelet yet."""
        raise UnsupportedFeatureError("blob writers are not supported by lancelet yet")

    def open_dedicated_blob_writer(self, path: str, blob_id: int) -> Any:
        """Blob files are not supported by lancelet yet."""
        raise UnsupportedFeatureError("blob writers are not supported by lancelet yet")

    # -- files --------------------------------------------------------------------------

    def contains(self, path: str) -> bool:
        """Whether a file (not a directory) exists at ``path``."""
        return os.path.isfile(self._path(path))

    def list(self, path: Optional[str] = None) -> List[str]:
        """Every file under ``path`` (the base path when None), recursively, as paths
        relative to the base path (sorted); empty when ``path`` does not exist."""
        root = self._path(path)
        if os.path.isfile(root):
            return [self._relative(root)]
        out: List[str] = []
        for directory, _, files in os.walk(root):
            out.extend(self._relative(os.path.join(directory, f)) for f in files)
        return sorted(out)

    def list_with_delimiter(self, path: Optional[str] = None) -> ListResult:
        """The directories and files directly under ``path`` (not recursive)."""
        root = self._path(path)
        result = ListResult()
        try:
            entries = sorted(os.scandir(root), key=lambda e: e.name)
        except (FileNotFoundError, NotADirectoryError):
            return result
        for e in entries:
            (result.common_prefixes if e.is_dir() else result.objects).append(self._relative(e.path))
        return result

    def read_range(self, path: str, offset: int, length: int) -> bytes:
        """``length`` bytes of ``path`` from ``offset`` (``OSError`` when the file is
        missing or shorter)."""
        for name, v in (("offset", offset), ("length", length)):
            if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                raise InvalidArgumentError(f"{name} must be a non-negative integer, got {v!r}")
        full = self._path(path)
        try:
            with open(full, "rb") as f:
                f.seek(offset)
                data = f.read(length)
        except OSError as e:
            raise OSError(f"cannot read {path!r}: {e.strerror or e}") from None
        if len(data) != length:
            raise OSError(
                f"cannot read bytes {offset}..{offset + length} of {path!r}: it has {os.path.getsize(full)} bytes"
            )
        return data

    def delete_file(self, path: str) -> None:
        """Deletes the file at ``path`` (``OSError`` when there is none)."""
        full = self._path(path)
        if not os.path.isfile(full):
            raise OSError(f"cannot delete {path!r}: no such file")
        os.remove(full)

    def upload_file(self, local_path: Union[str, Path], remote_path: str) -> None:
        """Copies local file ``local_path`` to ``remote_path`` (relative to the base path)."""
        full = self._path(remote_path)
        if not os.path.isfile(local_path):
            raise OSError(f"cannot upload {os.fspath(local_path)!r}: no such file")
        os.makedirs(os.path.dirname(full), exist_ok=True)
        tmp = full + ".lancelet-upload"
        shutil.copyfile(local_path, tmp)
        os.replace(tmp, full)

    def download_file(self, remote_path: str, local_path: Union[str, Path]) -> None:
        """Copies ``remote_path`` (relative to the base path) to local file ``local_path``
        (whose directory must exist)."""
        full = self._path(remote_path)
        if not os.path.isfile(full):
            raise OSError(f"cannot download {remote_path!r}: no such file")
        shutil.copyfile(full, local_path)

    def __repr__(self) -> str:
        return f"LanceFileSession(base_path={self.base_path!r})"
