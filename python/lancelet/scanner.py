"""Scans of a dataset version: :class:`LanceScanner` and the handling of
:meth:`lancelet.LanceDataset.scanner`'s options.

``ds.scanner(...)`` checks its options here (:func:`make_scanner`): options pylance uses
only to tune its own execution are accepted and ignored, options for features lancelet
lacks raise ``UnsupportedFeatureError``, anything else is a ``TypeError``. A
:class:`LanceScanner` holds the checked options and runs the native scan each time it is
read; :class:`ScanStatistics` reports what a run did. A pyarrow Expression filter with no
SQL form makes a :class:`PostFilteredScanner` (pyarrow filters the scanned batches; see
:func:`plan`). Vector queries (``nearest=``) are planned by ``_nearest``; ``order_by``,
``_rowoffset``, ``strict_batch_size`` and ``blob_handling="all_binary"`` are the native
scan's (the dataset crate sorts, numbers live rows, cuts exact batches and reads blob bytes).

>>> ds.scanner(columns=["id"], filter="id > 10", limit=5).to_table()  # doctest: +SKIP
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Dict, Iterable, Iterator, List, Optional, Union, cast

import pyarrow as pa

from . import _argcheck, _expressions
from . import blob as _blob
from ._argcheck import (
    _HANDLED_SCAN_KWARGS,
    _IGNORED_SCAN_OPTIONS,
    _U64_MAX,
    _UNSUPPORTED_SCAN_OPTIONS,
    _Columns,
    _filter,
    _names,
)
from ._counters import _Counters
from ._fulltext import FullTextScanner, HybridScanner
from ._native import dataset as _native_dataset
from ._nearest import NearestScanner
from .errors import InvalidArgumentError, LanceError, UnsupportedFeatureError
from .file import ReaderResults
from .fragment import LanceFragment

if TYPE_CHECKING:  # pragma: no cover
    from ._native.dataset import _ScanArgs
    from .dataset import LanceDataset

__all__ = ["ColumnOrdering", "LanceScanner", "ScanStatistics"]


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

    # pylance's counters of index work; lancelet does not count index work (always 0).
    indices_loaded = 0
    parts_loaded = 0
    index_comparisons = 0


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


@dataclass
class ColumnOrdering:
    """One sort key of ``scanner(order_by=[...])``: a column (``"a"``, or ``"s.x"`` for a
    struct child), ``ascending`` (default True) and ``nulls_first`` (default False)."""

    column_name: str
    ascending: bool = True
    nulls_first: bool = False


def orderings(order_by: Any) -> Optional[List[ColumnOrdering]]:
    """``order_by`` as a list of :class:`ColumnOrdering` (strings mean ascending); None
    when there is nothing to sort by."""
    if order_by is None:
        return None
    if isinstance(order_by, (str, ColumnOrdering)) or not isinstance(order_by, (list, tuple)):
        raise InvalidArgumentError(
            f"order_by takes a list of ColumnOrdering or column names, got {type(order_by).__name__}"
        )
    out = []
    for o in order_by:
        if isinstance(o, str):
            o = ColumnOrdering(o)
        elif not (hasattr(o, "column_name") and hasattr(o, "ascending") and hasattr(o, "nulls_first")):
            raise InvalidArgumentError(f"order_by takes ColumnOrdering objects or column names, got {o!r}")
        if not isinstance(o.column_name, str):
            raise InvalidArgumentError(f"ColumnOrdering.column_name must be a string, got {o.column_name!r}")
        out.append(ColumnOrdering(o.column_name, bool(o.ascending), bool(o.nulls_first)))
    return out or None


def make_scanner(
    ds: "LanceDataset",
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
    fragments: Optional[Iterable[Union[LanceFragment, int]]] = None,
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
    """``ds.scanner(...)`` once the dataset's ``default_scan_options`` are applied: the
    options checked (see :meth:`lancelet.LanceDataset.scanner`) and the scanner planned.
    The readahead and size hints are accepted and ignored."""
    del batch_size_bytes, batch_readahead, fragment_readahead, scan_in_order
    if full_text_query is not None:
        common: Dict[str, Any] = dict(
            columns=columns,
            filter=_filter(filter),
            prefilter=prefilter,
            fast_search=kwargs.get("fast_search"),
            limit=limit,
            offset=offset,
            with_row_id=with_row_id,
        )
        if nearest is not None:
            return cast(
                "LanceScanner",
                HybridScanner(ds, nearest, full_text_query, fusion=kwargs.get("fusion"), **common),
            )
        return cast("LanceScanner", FullTextScanner(ds, full_text_query, **common))
    if nearest is not None:
        # A NearestScanner has LanceScanner's reading methods (to_table, to_batches, ...).
        return cast(
            "LanceScanner",
            NearestScanner(
                ds,
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
    if index_segments is not None:
        raise UnsupportedFeatureError("scanner option 'index_segments' is not supported yet")
    for k in kwargs:
        if k in _UNSUPPORTED_SCAN_OPTIONS:
            if kwargs[k] is not None:
                raise UnsupportedFeatureError(f"scanner option {k!r} is not supported yet")
        elif k not in _IGNORED_SCAN_OPTIONS and k not in _HANDLED_SCAN_KWARGS:
            raise TypeError(f"scanner() got an unexpected keyword argument {k!r}")
    if _expressions.is_expression(filter):
        # A pyarrow Expression with no SQL form is evaluated by pyarrow (see PostFilteredScanner).
        translated = plan(
            ds,
            filter,
            dict(
                columns=columns,
                limit=limit,
                offset=offset,
                batch_size=batch_size,
                fragments=fragments,
                prefilter=prefilter,
                with_row_id=with_row_id,
                with_row_address=with_row_address,
                use_stats=use_stats,
                scan_stats_callback=scan_stats_callback,
                **kwargs,
            ),
        )
        if not isinstance(translated, str):
            return cast("LanceScanner", translated)
        filter = translated
    use_scalar_index = kwargs.get("use_scalar_index")
    order = orderings(kwargs.get("order_by"))
    scanner = LanceScanner(
        ds,
        columns=columns,
        filter=filter,
        limit=limit,
        offset=offset,
        batch_size=batch_size,
        fragments=fragments,
        with_row_id=bool(with_row_id),
        with_row_address=bool(with_row_address),
        use_stats=True if use_stats is None else bool(use_stats),
        scan_stats_callback=scan_stats_callback,
        use_scalar_index=True if use_scalar_index is None else bool(use_scalar_index),
    )
    if _blob.wants_binary(kwargs.get("blob_handling")):
        # blob_handling="all_binary": the native scan reads blob columns as their bytes.
        scanner._kwargs["blob_binary"] = True
    if order:
        scanner._kwargs["order_by"] = [(o.column_name, o.ascending, o.nulls_first) for o in order]
    if kwargs.get("strict_batch_size") and batch_size is not None:
        scanner._kwargs["strict_batch_size"] = True
    return scanner


class LanceScanner:
    """A planned read of a dataset version (see :meth:`LanceDataset.scanner`)."""

    def __init__(
        self,
        ds: "LanceDataset",
        columns: _Columns = None,
        filter: Optional[str] = None,
        limit: Optional[int] = None,
        offset: Optional[int] = None,
        batch_size: Optional[int] = None,
        fragments: Optional[Iterable[Union[LanceFragment, int]]] = None,
        with_row_id: bool = False,
        with_row_address: bool = False,
        scan_stats_callback: Optional[Callable[[ScanStatistics], None]] = None,
        use_stats: bool = True,
        use_scalar_index: bool = True,
    ):
        _argcheck.check_limit_offset(limit, offset)
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
        self._kwargs: _ScanArgs = {
            "filter": _filter(filter),
            "limit": limit,
            "offset": offset,
            "batch_size": batch_size,
            "with_row_id": with_row_id,
            "with_row_address": with_row_address,
            "use_stats": use_stats,
            "use_scalar_index": use_scalar_index,
        }
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

    def _stream(self) -> Any:
        self._stats = _native_dataset.ScanStats()
        stream = self._ds._native.scan({**self._kwargs, "stats": self._stats})
        if self._stats_callback is None:
            return stream
        return _reporting(pa.RecordBatchReader.from_stream(stream), self._stats, self._stats_callback)

    def __reduce__(self) -> tuple:
        # The same scan of the same dataset version (the dataset pickles by reference).
        return _reopen_scanner, (self._ds, self._kwargs, self._stats_callback)

    def explain_plan(self, verbose: bool = False) -> str:
        """A readable plan of this scan: the version, the columns read, the filter, the
        scalar indexes that narrow it (``ScalarIndexQuery: query=[id = 5]@id_idx(BTree)``)
        and how many rows its tasks cover.

        >>> print(ds.scanner(filter="id = 5").explain_plan())  # doctest: +SKIP
        """
        del verbose
        return self._ds._native.scan({**self._kwargs, "explain": True})

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


def _reopen_scanner(
    ds: "LanceDataset", kwargs: Dict[str, Any], stats_callback: Any, extra: Optional[Dict[str, Any]] = None
) -> LanceScanner:
    """A pickled scanner (see ``LanceScanner.__reduce__``): the same scan of the same
    dataset version. ``extra`` comes from scanners pickled by earlier releases, which
    kept ``blob_handling="all_binary"`` there (whether ``_rowaddr`` was asked for)."""
    scanner = LanceScanner.__new__(LanceScanner)
    scanner._ds = ds
    scanner._kwargs = cast("_ScanArgs", dict(kwargs))
    scanner._stats_callback = stats_callback
    scanner._stats = None
    keep_addr = (extra or {}).get("_blob_binary")
    if keep_addr is not None:
        scanner._kwargs.update({"blob_binary": True, "with_row_address": bool(keep_addr)})
    return scanner


# --------------------------------------------------------------------------------------
# Scans whose pyarrow filter has no lancelet SQL form: pyarrow evaluates it.
#
# ``scanner(filter=<pyarrow Expression>)`` translates the expression into lancelet SQL
# (``_expressions``) so the native scan filters rows (and skips fragments and pages by their
# statistics). Some expressions have no exact SQL form: a compute function lancelet's SQL
# lacks, a literal type it has no syntax for. Raising there would break DuckDB, which reads a
# ``pyarrow.dataset.Dataset`` by calling ``scanner(columns=..., filter=...)`` with whatever
# it can express as a pyarrow Expression, and then does **not** filter the rows again: the
# scan must return exactly the matching rows. So the scan reads the requested columns plus
# those the filter needs, pyarrow evaluates the filter on each batch (with pyarrow's own
# semantics, which is what the expression means), the extra columns are dropped, and
# ``offset``/``limit`` apply to what is left.
# --------------------------------------------------------------------------------------


def plan(ds: "LanceDataset", expr: Any, options: Dict[str, Any]) -> Any:
    """``expr`` as lancelet SQL (a ``str``) when it has an exact SQL form; otherwise a
    :class:`PostFilteredScanner` for ``ds.scanner(filter=expr, **options)``.

    Raises the translation error when pyarrow cannot evaluate ``expr`` on the scanned
    columns either (an unknown column, mismatched types) or when ``columns`` is a dict of
    SQL expressions (whose inputs cannot be told apart from its outputs here)."""
    try:
        return _expressions.to_sql(expr)
    except _expressions.UntranslatableExpressionError as err:
        if isinstance(options.get("columns"), dict):
            raise
        return PostFilteredScanner(ds, expr, options, err)


def _drop(batch: pa.RecordBatch, positions: List[int]) -> pa.RecordBatch:
    # select() keeps the row count when no column is left (count(*) reads no column).
    return batch.select([i for i in range(batch.num_columns) if i not in positions])


class PostFilteredScanner(LanceScanner):
    """A :class:`LanceScanner` whose filter pyarrow evaluates (see the comment above :func:`plan`)."""

    def __init__(self, ds: "LanceDataset", expr: Any, options: Dict[str, Any], failure: Exception):
        self._ds = ds
        self._expr = expr
        self._options = dict(options)
        self._stats_callback = options.get("scan_stats_callback")
        limit, offset = options.get("limit"), options.get("offset")
        _argcheck.check_limit_offset(limit, offset)
        self._limit, self._offset = limit, offset or 0
        requested = options.get("columns")
        if requested is not None:
            requested = [requested] if isinstance(requested, str) else list(requested)
            needed = _expressions.referenced_columns(expr)
            if needed is None:  # references pyarrow cannot name for us: read every column
                needed = list(ds.schema.names)
            extras = [n for n in needed if n not in requested]
        else:
            extras = []
        inner = dict(options, columns=None if requested is None else requested + extras)
        inner.update(filter=None, limit=None, offset=None)
        strict = inner.pop("strict_batch_size", False)
        self._inner = make_scanner(ds, **inner)
        self._strict = bool(strict) and inner.get("batch_size") is not None
        schema = self._inner.projected_schema
        # The extra columns follow the requested ones in the scan's output.
        start = len(requested) if requested is not None else 0
        self._drop: List[int] = []
        for name in extras:
            idx = [i for i, f in enumerate(schema) if f.name == name and i >= start and i not in self._drop]
            if idx:
                self._drop.append(idx[0])
        try:
            pa.Table.from_batches([], schema=schema).filter(expr)
        except (pa.ArrowException, TypeError, ValueError) as e:
            if isinstance(e, LanceError):
                raise
            # pyarrow cannot evaluate it on these columns either: the translation error is
            # the clearer message.
            raise failure from None
        self._schema = pa.schema([schema.field(i) for i in range(len(schema)) if i not in self._drop])

    def _batches(self) -> Iterator[pa.RecordBatch]:
        skip, left = self._offset, self._limit
        for batch in self._inner.to_reader():
            if left is not None and left <= 0:
                break
            try:
                kept = pa.Table.from_batches([batch]).filter(self._expr)
            except pa.ArrowException as e:
                raise InvalidArgumentError(f"cannot evaluate the filter {self._expr}: {e}") from None
            for b in kept.to_batches():
                if self._drop:
                    b = _drop(b, self._drop)
                if skip:
                    cut = min(skip, b.num_rows)
                    b, skip = b.slice(cut), skip - cut
                if left is not None:
                    b = b.slice(0, left)
                    left -= b.num_rows
                if b.num_rows:
                    yield b

    def _stream(self) -> pa.RecordBatchReader:
        reader = pa.RecordBatchReader.from_batches(self._schema, self._batches())
        if self._strict:
            return _exact(reader, self._options["batch_size"])
        return reader

    def __reduce__(self) -> tuple:
        return _reopen_post_filtered, (self._ds, self._expr, self._options)

    def explain_plan(self, verbose: bool = False) -> str:
        """The plan of the scan, then the filter pyarrow applies to its rows."""
        plan = self._inner.explain_plan(verbose)
        return plan.rstrip("\n") + f"\nPostFilter (evaluated by pyarrow): {self._expr}\n"

    @property
    def scan_stats(self) -> ScanStatistics:
        """What the most recent execution of the underlying scan did (``rows_matched``
        counts rows before pyarrow's filter)."""
        return self._inner.scan_stats

    @property
    def projected_schema(self) -> pa.Schema:
        """The schema of the results."""
        return self._schema

    def to_table(self) -> pa.Table:
        """The results as a ``pyarrow.Table``."""
        return self._stream().read_all()

    def to_reader(self) -> pa.RecordBatchReader:
        """The results as a ``pyarrow.RecordBatchReader``."""
        return self._stream()

    def count_rows(self) -> int:
        """How many rows the scan returns."""
        return sum(b.num_rows for b in self._stream())

    def __arrow_c_stream__(self, requested_schema: Any = None) -> Any:
        return self._stream().__arrow_c_stream__(requested_schema)


def _reopen_post_filtered(ds: Any, expr: Any, options: Dict[str, Any]) -> Optional[Any]:
    return plan(ds, expr, options)


# Strict batch sizes for rows filtered here (the native scan cuts its own).
def _join(parts: List[pa.RecordBatch], schema: pa.Schema) -> pa.RecordBatch:
    if len(parts) == 1:
        return parts[0]
    return pa.Table.from_batches(parts, schema).combine_chunks().to_batches()[0]


def _exact(reader: pa.RecordBatchReader, n: int) -> pa.RecordBatchReader:
    """``reader``'s rows in batches of exactly ``n`` rows (the last may be shorter); rows
    are sliced and joined, never reordered."""
    schema = reader.schema

    def batches() -> Iterator[pa.RecordBatch]:
        parts: List[pa.RecordBatch] = []
        held = 0
        for b in reader:
            while b.num_rows:
                take = min(n - held, b.num_rows)
                parts.append(b.slice(0, take))
                held += take
                b = b.slice(take)
                if held == n:
                    yield _join(parts, schema)
                    parts, held = [], 0
        if held:
            yield _join(parts, schema)

    return pa.RecordBatchReader.from_batches(schema, batches())
