"""Lance schemas: an Arrow schema plus the field ids Lance gives every field, as pylance's
``lance.schema`` offers.

Operations that change a dataset's schema (``LanceOperation.Merge``, ``Project``) take a
:class:`LanceSchema`: the ids say which stored data each field reads, so a field may be
renamed (same id, new name) or swapped with another.

>>> import pyarrow as pa
>>> from lancelet.schema import LanceSchema
>>> s = LanceSchema.from_pyarrow(pa.schema([("a", pa.int64()), ("b", pa.string())]))
>>> s.field_ids
[0, 1]
"""

from __future__ import annotations

from typing import Any, List, Optional

import pyarrow as pa

__all__ = ["LanceSchema"]


def _count(t: pa.DataType) -> int:
    """Fields a type holds below it (its children, depth-first), as Lance numbers them: a
    struct's fields, a list's item, a map's entries struct."""
    if pa.types.is_struct(t):
        return sum(1 + _count(t.field(i).type) for i in range(t.num_fields))
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return 1 + _count(t.value_type)
    if pa.types.is_map(t):
        return 1 + _count(pa.struct([t.key_field, t.item_field]))
    return 0


class LanceSchema:
    """An Arrow schema with Lance field ids (depth-first: each field, then its children).

    :meth:`from_pyarrow` numbers the fields 0, 1, ... in that order, as pylance does; a
    schema read from a transaction keeps the dataset's ids.
    """

    def __init__(self, schema: pa.Schema, field_ids: Optional[List[int]] = None):
        if not isinstance(schema, pa.Schema):
            raise TypeError(f"expected a pyarrow.Schema, got {type(schema).__name__}")
        self._schema = schema
        self._ids = None if field_ids is None else [int(i) for i in field_ids]

    @staticmethod
    def from_pyarrow(schema: pa.Schema) -> "LanceSchema":
        """The schema with fields numbered 0, 1, ... depth-first (pylance's numbering).

        >>> LanceSchema.from_pyarrow(pa.schema([("a", pa.int32())])).field_ids
        [0]
        """
        return LanceSchema(schema, None)

    def to_pyarrow(self) -> pa.Schema:
        """The Arrow schema (without ids)."""
        return self._schema

    @property
    def field_ids(self) -> List[int]:
        """Field ids, depth-first (children after their parent)."""
        if self._ids is not None:
            return list(self._ids)
        n = sum(1 + _count(f.type) for f in self._schema)
        return list(range(n))

    def _native_ids(self) -> Optional[List[int]]:
        return None if self._ids is None else list(self._ids)

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, LanceSchema) and self._schema == other._schema and self.field_ids == other.field_ids

    def __reduce__(self) -> tuple:
        return (LanceSchema, (self._schema, self._ids))

    def __repr__(self) -> str:
        names = ", ".join(f"{f.name}: {f.type}" for f in self._schema)
        return f"LanceSchema({names}; field_ids={self.field_ids})"
