"""Arrow view types (``string_view``, ``binary_view``, ``list_view``) in Python-side input.

Lance stores none of them: the native layer converts streams it imports, and this module
does the same for the few operations that compute on the input in pyarrow first (merge,
merge_insert), whose kernels do not all accept views.
"""

from __future__ import annotations

from typing import Optional

import pyarrow as pa


def plain_type(t: pa.DataType) -> Optional[pa.DataType]:
    """``t`` with every view type replaced by its plain equivalent, or None if it has none."""
    if pa.types.is_string_view(t):
        return pa.string()
    if pa.types.is_binary_view(t):
        return pa.binary()
    if pa.types.is_list_view(t) or pa.types.is_large_list_view(t):
        item = t.value_field
        inner = plain_type(item.type)
        field = item.with_type(inner) if inner is not None else item
        return pa.list_(field) if pa.types.is_list_view(t) else pa.large_list(field)
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        inner = plain_type(t.value_type)
        if inner is None:
            return None
        field = t.value_field.with_type(inner)
        if pa.types.is_fixed_size_list(t):
            return pa.list_(field, t.list_size)
        return pa.list_(field) if pa.types.is_list(t) else pa.large_list(field)
    if pa.types.is_struct(t):
        fields = [t.field(i) for i in range(t.num_fields)]
        changed = [plain_type(f.type) for f in fields]
        if all(c is None for c in changed):
            return None
        return pa.struct([f.with_type(c) if c is not None else f for f, c in zip(fields, changed)])
    return None


def without_views(table: pa.Table) -> pa.Table:
    """``table`` with view-typed columns cast to their plain types (itself when it has none)."""
    fields = []
    changed = False
    for f in table.schema:
        t = plain_type(f.type)
        changed |= t is not None
        fields.append(f.with_type(t) if t is not None else f)
    if not changed:
        return table
    columns = [_cast(col, f.type) for col, f in zip(table.columns, fields)]
    return pa.Table.from_arrays(columns, schema=pa.schema(fields, metadata=table.schema.metadata))


def _cast(col: pa.ChunkedArray, to: pa.DataType) -> pa.ChunkedArray:
    if col.type == to:
        return col
    try:
        out = col.cast(to)
        out.validate(full=True)
        return out
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        # pyarrow 26 builds invalid offsets casting large_list_view to large_list.
        return pa.chunked_array([pa.array(c.to_pylist(), to) for c in col.chunks], to)
