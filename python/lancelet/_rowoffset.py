"""``take`` with the ``_rowoffset`` column and with SQL expressions, over native calls.

``_rowoffset`` is a row's position among the live rows of the dataset version (what
``take`` indexes by). Scans compute it natively (a special column of the dataset crate);
``take`` returns it as pylance does: a non-nullable column of the positions asked for.
"""

from __future__ import annotations

from typing import Any, List, Optional, Tuple

import pyarrow as pa
import pyarrow.compute as pc

from .file import ReaderResults

NAME = "_rowoffset"
_ADDR = "_rowaddr"


def split(columns: Optional[List[str]]) -> Tuple[Optional[List[str]], Optional[int]]:
    """``columns`` without ``_rowoffset``, and where ``_rowoffset`` was (None: absent)."""
    if columns is None or NAME not in columns:
        return columns, None
    pos = columns.index(NAME)
    return [c for c in columns if c != NAME], pos


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
    rows = ReaderResults(ds_native.scan({"exprs": list(exprs) + [(hidden, _ADDR)], "row_ranges": ranges})).to_table()
    where = pc.index_in(addresses, value_set=rows.column(hidden).combine_chunks())
    return rows.take(where).drop_columns([hidden])
