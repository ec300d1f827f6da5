"""``scanner(order_by=[...])``: sorted scans, as pylance's.

The native scan has no sort, so an ordered scan reads every row that passes the filter
(without ``limit``/``offset``), sorts them here with Arrow's stable ``sort_indices`` and then
applies ``offset`` and ``limit``, which is the order pylance applies them in. Sort keys
follow pylance (DataFusion): NULLs last unless ``nulls_first``; floating-point NaN is
greater than every number (so it comes last ascending and first descending, next to the
NULLs only when they are on the same side); ties keep the scan order. Sort columns need not
be selected: they are read for the sort and dropped afterwards.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Tuple

import pyarrow as pa
import pyarrow.compute as pc

from .errors import InvalidArgumentError

__all__ = ["ColumnOrdering"]

_HIDDEN = "__lancelet_order_key_"
_DEFAULT_BATCH = 8192


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


def _path_sql(name: str) -> str:
    return ".".join(f"`{p}`" for p in name.split("."))


def _plan(
    kwargs: Dict[str, Any], order: List[ColumnOrdering], present: Tuple[str, ...] = ()
) -> Tuple[Dict[str, Any], List[str], List[str]]:
    """The native scan arguments for an ordered scan, the names of the sort key columns in
    its output, and the output columns to keep (empty: keep all). ``present`` names columns
    the result has beyond the projection (``_rowid``, ``_rowaddr``, ``_rowoffset``)."""
    k = dict(kwargs, limit=None, offset=None)
    keys: List[str] = []
    keep: List[str] = []
    if k.get("exprs") is not None:
        exprs = list(k["exprs"])
        keep = [name for name, _ in exprs]
        for i, o in enumerate(order):
            if o.column_name in present:
                keys.append(o.column_name)
                continue
            keys.append(f"{_HIDDEN}{i}")
            exprs.append((keys[-1], _path_sql(o.column_name)))
        k["exprs"] = exprs
    elif k.get("columns") is not None:
        columns = list(k["columns"])
        keep = list(columns)
        for i, o in enumerate(order):
            if o.column_name in columns or o.column_name in present:
                keys.append(o.column_name)
            else:
                keys.append(f"{_HIDDEN}{i}")
        if any(key.startswith(_HIDDEN) for key in keys):
            # Projected names and hidden sort keys: as expressions over the dataset's columns.
            k.pop("columns")
            k["exprs"] = [(c, _path_sql(c)) for c in columns] + [
                (key, _path_sql(o.column_name)) for key, o in zip(keys, order) if key.startswith(_HIDDEN)
            ]
    else:
        keys = [o.column_name for o in order]
    return k, keys, keep


def _key_array(table: pa.Table, name: str) -> pa.ChunkedArray:
    if name in table.column_names:
        return table.column(name)
    parts = name.split(".")
    try:
        col = table.column(parts[0])
        for p in parts[1:]:
            col = pc.struct_field(col, p)
    except (KeyError, pa.ArrowException):
        raise InvalidArgumentError(f"order_by column {name!r} not found") from None
    return col


def sort_table(table: pa.Table, keys: List[str], order: List[ColumnOrdering]) -> pa.Table:
    """``table`` sorted by ``order`` (whose key columns are named ``keys``), stably."""
    if table.num_rows == 0:
        return table
    arrays: Dict[str, Any] = {}
    sort_keys = []
    for i, (key, o) in enumerate(zip(keys, order)):
        values = _key_array(table, key)
        direction = "ascending" if o.ascending else "descending"
        # NULLs first or last whatever the direction: their own leading key.
        nulls = pc.is_null(values)
        arrays[f"g{i}"] = pc.cast(nulls, pa.int8())
        sort_keys.append((f"g{i}", "descending" if o.nulls_first else "ascending"))
        if pa.types.is_floating(values.type):
            nan = pc.fill_null(pc.is_nan(values), False)
            values = pc.if_else(nan, pa.scalar(float("inf"), values.type), values)
            arrays[f"v{i}"] = values
            arrays[f"n{i}"] = pc.cast(nan, pa.int8())
            sort_keys += [(f"v{i}", direction), (f"n{i}", direction)]
        else:
            if pa.types.is_dictionary(values.type):
                values = values.cast(values.type.value_type)
            arrays[f"v{i}"] = values
            sort_keys.append((f"v{i}", direction))
    try:
        idx = pc.sort_indices(pa.table(arrays), sort_keys=sort_keys)
    except (pa.ArrowNotImplementedError, pa.ArrowTypeError) as e:
        raise InvalidArgumentError(f"cannot order by {[o.column_name for o in order]}: {e}") from None
    return table.take(idx)


class _TableStream:
    """A finished, sorted result with the interface of a native batch stream."""

    def __init__(self, reader: pa.RecordBatchReader):
        self._reader = reader

    def __arrow_c_stream__(self, requested_schema: Any = None) -> Any:
        return self._reader.__arrow_c_stream__(requested_schema)

    def take_error(self) -> None:
        return None


def ordered_stream(scanner: Any) -> _TableStream:
    """Runs ``scanner`` (a LanceScanner with ``_order`` and/or ``_rowoffset`` set): its rows
    sorted by ``_order`` and with the ``_rowoffset`` column where it was asked for."""
    from . import _native, _rowoffset
    from .file import ReaderResults
    from .scanner import ScanStatistics, _reporting

    order: Optional[List[ColumnOrdering]] = scanner._order
    spec = scanner._rowoffset
    native = scanner._ds._native
    kwargs = scanner._kwargs
    scanner._stats = _native.ScanStats()
    if not order:
        reader = _rowoffset.stream(native.scan(stats=scanner._stats, **kwargs), native, spec)
        if scanner._stats_callback is not None:
            reader = _reporting(reader, scanner._stats, scanner._stats_callback)
        return _TableStream(reader)
    system = [
        c
        for c, on in (("_rowid", kwargs.get("with_row_id")), ("_rowaddr", kwargs.get("with_row_address")))
        if on and not (c == "_rowaddr" and spec and spec[1])
    ]
    present = tuple(system) + ((_rowoffset.NAME,) if spec else ())
    k, keys, keep = _plan(kwargs, order, present)
    table = ReaderResults(native.scan(stats=scanner._stats, **k)).to_table()
    if spec:
        table = _rowoffset.add_to_table(table, _rowoffset.RowOffsets(native), spec)
    table = sort_table(table, keys, order)
    offset = kwargs.get("offset") or 0
    limit = kwargs.get("limit")
    table = table.slice(offset, limit) if limit is not None else table.slice(offset)
    if keep:
        if spec:
            keep.insert(min(spec[0], len(keep)), _rowoffset.NAME)
        table = table.select(keep + [c for c in system if c not in keep])
    table = table.combine_chunks()
    batches = table.to_batches(max_chunksize=kwargs.get("batch_size") or _DEFAULT_BATCH)
    if scanner._stats_callback is not None:
        scanner._stats_callback(ScanStatistics(**scanner._stats.snapshot()))
    return _TableStream(pa.RecordBatchReader.from_batches(table.schema, batches))
