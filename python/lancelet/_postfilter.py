"""Scans whose pyarrow filter has no lancelet SQL form: pyarrow evaluates it.

``scanner(filter=<pyarrow Expression>)`` translates the expression into lancelet SQL
(``_expressions``) so the native scan filters rows (and skips fragments and pages by their
statistics). Some expressions have no exact SQL form: a compute function lancelet's SQL
lacks, a literal type it has no syntax for. Raising there would break DuckDB, which reads a
``pyarrow.dataset.Dataset`` by calling ``scanner(columns=..., filter=...)`` with whatever
it can express as a pyarrow Expression, and then does **not** filter the rows again: the
scan must return exactly the matching rows. So the scan reads the requested columns plus
those the filter needs, pyarrow evaluates the filter on each batch (with pyarrow's own
semantics, which is what the expression means), the extra columns are dropped, and
``offset``/``limit`` apply to what is left.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, Iterator, List, Optional

import pyarrow as pa

from . import _expressions
from .errors import InvalidArgumentError, LanceError
from .scanner import LanceScanner, ScanStatistics

if TYPE_CHECKING:  # pragma: no cover
    from .dataset import LanceDataset

__all__ = ["PostFilteredScanner", "plan"]


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
    """A :class:`LanceScanner` whose filter pyarrow evaluates (see the module docs)."""

    def __init__(self, ds: "LanceDataset", expr: Any, options: Dict[str, Any], failure: Exception):
        from .scanner import make_scanner

        self._ds = ds
        self._expr = expr
        self._options = dict(options)
        self._stats_callback = options.get("scan_stats_callback")
        limit, offset = options.get("limit"), options.get("offset")
        for name, v in (("limit", limit), ("offset", offset)):
            if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < 0):
                raise InvalidArgumentError(f"{name} must be a non-negative integer, got {v!r}")
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
        return _reopen, (self._ds, self._expr, self._options)

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


def _reopen(ds: Any, expr: Any, options: Dict[str, Any]) -> Optional[Any]:
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
