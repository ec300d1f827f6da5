"""The ``_rowoffset`` system column and ``take`` with SQL expressions, over native calls.

``_rowoffset`` is a row's position among the live rows of the dataset version (what
``take`` indexes by): 0-based, counting fragments in manifest order and skipping deleted
rows. pylance offers it in scans (``columns=[..., "_rowoffset"]``; with a filter, limit or
a fragment scan the values are still dataset-wide positions) and in ``take``, where it is the
index asked for. The native scan has no such column, so a scan asking for it reads
``_rowaddr`` instead and converts each address: the live rows of the fragments before it,
plus the row's live position inside its fragment (its physical offset when the fragment
has no deletions; otherwise looked up among the fragment's live addresses, read once).
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

import pyarrow as pa
import pyarrow.compute as pc

from .errors import InvalidArgumentError

NAME = "_rowoffset"
_ADDR = "_rowaddr"


class RowOffsets:
    """Converts row addresses of one dataset version into ``_rowoffset`` values."""

    def __init__(self, native: Any):
        self._native = native
        self._base: Dict[int, int] = {}
        self._deleted: Dict[int, bool] = {}
        self._live: Dict[int, pa.Array] = {}
        start = 0
        for meta in native.fragments():
            fid = int(meta["id"])
            deletion_file = meta.get("deletion_file")
            self._base[fid] = start
            self._deleted[fid] = bool(deletion_file)
            if not deletion_file:
                start += int(meta["physical_rows"])
            elif deletion_file.get("num_deleted_rows"):
                start += int(meta["physical_rows"]) - int(deletion_file["num_deleted_rows"])
            else:  # a deletion file that does not record its count: count the live rows
                start += len(self._live_addresses(fid))

    def _live_addresses(self, fid: int) -> pa.Array:
        if fid not in self._live:
            from .file import ReaderResults

            t = ReaderResults(self._native.scan(columns=[], with_row_address=True, fragments=[fid])).to_table()
            self._live[fid] = t.column(_ADDR).combine_chunks()
        return self._live[fid]

    def offsets(self, addresses: Any) -> pa.Array:
        """``_rowoffset`` (uint64) of each row address in ``addresses``."""
        addr = pa.array(addresses, pa.uint64()) if not isinstance(addresses, (pa.Array, pa.ChunkedArray)) else addresses
        if isinstance(addr, pa.ChunkedArray):
            addr = addr.combine_chunks()
        if len(addr) == 0:
            return pa.array([], pa.uint64())
        frag = pc.shift_right(addr, 32)
        phys = pc.bit_wise_and(addr, pa.scalar(0xFFFFFFFF, pa.uint64()))
        out = pa.nulls(len(addr), pa.uint64())
        for fid in pc.unique(frag).to_pylist():
            mask = pc.equal(frag, pa.scalar(fid, pa.uint64()))
            if fid not in self._base:
                raise InvalidArgumentError(f"row address of fragment {fid}, which is not in this version")
            if self._deleted[fid]:
                pos = pc.cast(pc.index_in(addr, value_set=self._live_addresses(fid)), pa.uint64())
            else:
                pos = phys
            value = pc.add(pos, pa.scalar(self._base[fid], pa.uint64()))
            out = pc.if_else(mask, value, out)
        return out


def split(columns: Optional[List[str]]) -> Tuple[Optional[List[str]], Optional[int]]:
    """``columns`` without ``_rowoffset``, and where ``_rowoffset`` was (None: absent)."""
    if columns is None or NAME not in columns:
        return columns, None
    pos = columns.index(NAME)
    return [c for c in columns if c != NAME], pos


def plan_scan(kwargs: Dict[str, Any]) -> Optional[Tuple[int, bool]]:
    """Rewrites native scan arguments asking for ``_rowoffset`` to read ``_rowaddr``
    instead; returns ``(position, drop_rowaddr)`` or None when the scan does not ask."""
    columns, pos = split(kwargs.get("columns"))
    if pos is None:
        return None
    kwargs["columns"] = columns
    drop = not kwargs.get("with_row_address")
    kwargs["with_row_address"] = True
    return pos, drop


def add_to_table(table: pa.Table, offsets: RowOffsets, spec: Tuple[int, bool]) -> pa.Table:
    """``table`` (a scan result with ``_rowaddr``) with ``_rowoffset`` where it was asked."""
    pos, drop = spec
    column = offsets.offsets(table.column(_ADDR))
    table = table.add_column(min(pos, table.num_columns), NAME, column)
    if drop:
        table = table.drop_columns([_ADDR])
    return table


def schema_with(schema: pa.Schema, spec: Tuple[int, bool]) -> pa.Schema:
    """The schema of a scan with ``_rowoffset``, given the native scan's."""
    pos, drop = spec
    schema = schema.insert(min(pos, len(schema)), pa.field(NAME, pa.uint64()))
    if drop:
        schema = schema.remove(schema.get_field_index(_ADDR))
    return schema


def stream(native_stream: Any, ds_native: Any, spec: Tuple[int, bool]) -> pa.RecordBatchReader:
    """The native scan ``native_stream`` (read through ReaderResults for typed errors) with
    ``_rowoffset`` added to every batch."""
    from .file import ReaderResults

    reader = ReaderResults(native_stream).to_batches()
    offsets = RowOffsets(ds_native)
    schema = schema_with(reader.schema, spec)

    def batches():
        for b in reader:
            if b.num_rows:
                yield add_to_table(pa.Table.from_batches([b], b.schema), offsets, spec).combine_chunks().to_batches()[0]

    return pa.RecordBatchReader.from_batches(schema, batches())


# -- take ---------------------------------------------------------------------------------


def take_with_offsets(table: pa.Table, indices: List[int], pos: int) -> pa.Table:
    """A take result with ``_rowoffset`` (the indices asked for) inserted at ``pos``."""
    return table.add_column(
        min(pos, table.num_columns), pa.field(NAME, pa.uint64(), nullable=False), pa.array(indices, pa.uint64())
    )


def take_expressions(ds_native: Any, address_stream: Any, exprs: List[Tuple[str, str]]) -> pa.Table:
    """Rows whose addresses ``address_stream`` (a native take of ``_rowaddr``) lists, in its
    order, projected through SQL expressions ``exprs``: the rows are re-read by a scan of
    exactly their physical row ranges, which evaluates the expressions natively."""
    from .file import ReaderResults

    addresses = ReaderResults(address_stream).to_table().column(_ADDR).combine_chunks()
    wanted = sorted(set(addresses.to_pylist()))
    ranges: List[Tuple[int, int, int]] = []
    for a in wanted:
        fid, off = a >> 32, a & 0xFFFFFFFF
        if ranges and ranges[-1][0] == fid and ranges[-1][2] == off:
            ranges[-1] = (fid, ranges[-1][1], off + 1)
        else:
            ranges.append((fid, off, off + 1))
    hidden = "__lancelet_take_address"
    rows = ReaderResults(ds_native.scan(exprs=list(exprs) + [(hidden, _ADDR)], row_ranges=ranges)).to_table()
    where = pc.index_in(addresses, value_set=rows.column(hidden).combine_chunks())
    return rows.take(where).drop_columns([hidden])
