"""Pieces of :mod:`lancelet.dataset` that exist so pylance programs run unchanged:
``default_scan_options`` and ``add_columns`` from a stream of rows. (Datasets and scanners
pickle by their own ``__reduce__``, in ``dataset.py`` and ``scanner.py``.)
"""

from __future__ import annotations

import inspect
from typing import TYPE_CHECKING, Any, Dict, Iterator, List, Optional

import pyarrow as pa

from ._argcheck import _HANDLED_SCAN_KWARGS, _IGNORED_SCAN_OPTIONS, _UNSUPPORTED_SCAN_OPTIONS
from ._inputs import _as_reader, _is_pandas
from .errors import InvalidArgumentError
from .evolve import commit_files

if TYPE_CHECKING:  # pragma: no cover
    from .dataset import LanceDataset

# --------------------------------------------------------------------------------------
# default_scan_options
# --------------------------------------------------------------------------------------


def check_default_scan_options(options: Any) -> Optional[Dict[str, Any]]:
    """``default_scan_options`` as given to :func:`lancelet.dataset` (a dict of
    :meth:`LanceDataset.scanner` arguments), checked to be a dict with string keys."""
    if options is None:
        return None
    if not isinstance(options, dict) or not all(isinstance(k, str) for k in options):
        raise InvalidArgumentError(
            f"default_scan_options must be a dict of scanner() arguments, got {type(options).__name__}"
        )
    return dict(options) or None


def _scanner_options(ds: "LanceDataset") -> set:
    params = inspect.signature(type(ds).scanner).parameters
    named = {n for n, p in params.items() if p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL) and n != "self"}
    return named | _IGNORED_SCAN_OPTIONS | _UNSUPPORTED_SCAN_OPTIONS | _HANDLED_SCAN_KWARGS


def scanner_with_defaults(ds: "LanceDataset", explicit: Dict[str, Any]) -> Any:
    """``ds.scanner(**explicit)`` with the dataset's ``default_scan_options`` filling in
    every argument left at None, as pylance applies them."""
    defaults = ds._default_scan_options or {}
    unknown = sorted(set(defaults) - _scanner_options(ds))
    if unknown:
        raise InvalidArgumentError(f"unknown default_scan_options {unknown}: they must be scanner() arguments")
    merged = dict(defaults)
    merged.update({k: v for k, v in explicit.items() if v is not None})
    return ds._plain().scanner(**merged)


# --------------------------------------------------------------------------------------
# add_columns from a stream: rows line up with the dataset's rows, in order
# --------------------------------------------------------------------------------------


def is_stream(data: Any) -> bool:
    """Whether ``add_columns`` should take ``data`` as the new columns' rows."""
    if isinstance(data, (pa.RecordBatchReader, pa.Table, pa.RecordBatch)) or _is_pandas(data):
        return True
    if hasattr(data, "__arrow_c_stream__") or hasattr(data, "__arrow_c_array__"):
        return True
    if isinstance(data, (list, tuple)):
        return bool(data) and all(isinstance(b, (pa.RecordBatch, pa.Table)) for b in data)
    return isinstance(data, Iterator)


class _Rows:
    """Hands out a stream's rows in runs of a requested length."""

    def __init__(self, reader: pa.RecordBatchReader):
        self._batches = iter(reader)
        self._pending: List[pa.RecordBatch] = []
        self.schema = reader.schema
        self.seen = 0

    def take(self, n: int) -> Optional[pa.Table]:
        """The next ``n`` rows (None when the stream ends first)."""
        parts, have = [], 0
        while have < n:
            if self._pending:
                b = self._pending.pop()
            else:
                b = next(self._batches, None)
                if b is None:
                    return None
                self.seen += b.num_rows
            if have + b.num_rows > n:
                keep = n - have
                self._pending.append(b.slice(keep))
                b = b.slice(0, keep)
            parts.append(b)
            have += b.num_rows
        return pa.Table.from_batches(parts, schema=self.schema)

    def rest(self) -> int:
        """How many rows remain (reads the stream to its end)."""
        left = sum(b.num_rows for b in self._pending)
        for b in self._batches:
            self.seen += b.num_rows
            left += b.num_rows
        return left


def _physical(native: Any, frag: Dict[str, Any], live: pa.Table) -> pa.Table:
    """``live`` (one value per live row of the fragment) spread over the fragment's
    physical rows: deleted rows get nulls, or for non-nullable columns a copy of a live
    row's value (they are never read)."""
    import numpy as np  # noqa: PLC0415 (optional dependency)

    physical = frag["physical_rows"]
    if live.num_rows == physical:
        return live
    stream = native.scan({"columns": [], "fragments": [frag["id"]], "with_row_address": True})
    addrs = pa.RecordBatchReader.from_stream(stream).read_all().column("_rowaddr")
    offsets = (np.asarray(addrs.to_numpy(), dtype=np.uint64) & np.uint64(0xFFFFFFFF)).astype(np.int64)
    index = np.full(physical, -1, dtype=np.int64)
    index[offsets] = np.arange(len(offsets), dtype=np.int64)
    if live.num_rows and not all(f.nullable for f in live.schema):
        index[index < 0] = 0
    return live.take(pa.array(index, mask=index < 0))


def add_columns_from_stream(ds: Any, data: Any, reader_schema: Optional[pa.Schema]) -> Any:
    """Adds the columns of ``data`` (a reader, table, batches, generator...): its rows are
    the new values of the dataset's live rows, in order, as pylance's ``add_columns``
    takes a reader. Each fragment gets one new data file; one commit adds them all.
    Returns the new native dataset."""
    reader = _as_reader(data, reader_schema)
    schema = reader.schema
    if not len(schema):
        raise InvalidArgumentError("add_columns got a stream with no columns")
    existing = set(ds.schema.names)
    clash = [n for n in schema.names if n in existing]
    if clash:
        raise InvalidArgumentError(f"add_columns: columns {clash} already exist in the dataset")
    native = ds._native
    rows = _Rows(reader)
    frags = native.fragments()
    expected = sum(f["num_rows"] for f in frags)
    files: List[Dict[str, Any]] = []
    written: List[str] = []
    try:
        for frag in frags:
            live = rows.take(frag["num_rows"])
            if live is None:
                raise InvalidArgumentError(
                    f"add_columns: the stream ended after {rows.seen} rows; the dataset has {expected} rows "
                    "and the stream must give one row per row, in order"
                )
            table = _physical(native, frag, live)
            file = native.write_column_file(frag["id"], table.to_reader())
            written.extend(f["path"] for f in file["files"])
            files.append(file)
        extra = rows.rest()
        if extra:
            raise InvalidArgumentError(
                f"add_columns: the stream has {expected + extra} rows; the dataset has {expected} rows "
                "and the stream must give one row per row, in order"
            )
    except BaseException:
        if written:
            native.remove_data_files(written)
        raise
    return commit_files(native, schema, files)
