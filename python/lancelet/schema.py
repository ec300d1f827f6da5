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

from typing import Any, Dict, List, Optional

import pyarrow as pa

__all__ = ["LanceField", "LanceSchema"]


def _children(t: pa.DataType) -> List[pa.Field]:
    """The child fields Lance gives a type, numbered after it depth-first: a struct's
    fields, a list's item, a map's entries struct (its key and value below it)."""
    if pa.types.is_struct(t):
        return [t.field(i) for i in range(t.num_fields)]
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return [t.value_field]
    if pa.types.is_map(t):
        return [pa.field("entries", pa.struct([t.key_field, t.item_field]), nullable=False)]
    return []


def _count(t: pa.DataType) -> int:
    """Fields a type holds below it (its children, depth-first), as Lance numbers them."""
    return sum(1 + _count(c.type) for c in _children(t))


class LanceField:
    """One field of a :class:`LanceSchema` with its Lance id, as pylance's ``LanceField``:
    ``name()``, ``id()``, ``children()``, ``to_arrow()`` and the ``metadata`` dict.

    >>> s = LanceSchema.from_pyarrow(pa.schema([("s", pa.struct([("a", pa.int32())]))]))
    >>> [(f.name(), f.id()) for f in s.fields()[0].children()]
    [('a', 1)]
    """

    def __init__(self, field: pa.Field, field_id: int, children: List["LanceField"]):
        self._field = field
        self._id = field_id
        self._children = children

    def name(self) -> str:
        return str(self._field.name)

    def id(self) -> int:
        return self._id

    def children(self) -> List["LanceField"]:
        return list(self._children)

    def to_arrow(self) -> pa.Field:
        return self._field

    @property
    def metadata(self) -> Dict[str, str]:
        """The field's metadata, as text."""
        md = self._field.metadata or {}
        return {k.decode(): v.decode(errors="replace") for k, v in md.items()}

    def is_unenforced_primary_key(self) -> bool:
        return self.metadata.get("lance-schema:unenforced-primary-key", "").lower() == "true"

    def __repr__(self) -> str:
        return f"LanceField(name={self.name()!r}, id={self._id}, type={self._field.type})"


class LanceSchema:
    """An Arrow schema with Lance field ids (depth-first: each field, then its children).

    :meth:`from_pyarrow` numbers the fields 0, 1, ... in that order, as pylance does; a
    schema read from a transaction keeps the dataset's ids. ``LanceDataset.lance_schema``
    is the dataset's, printed as pylance prints it (``Schema { fields: [Field { ... }] }``).
    """

    def __init__(self, schema: pa.Schema, field_ids: Optional[List[int]] = None, _debug: Optional[str] = None):
        if not isinstance(schema, pa.Schema):
            raise TypeError(f"expected a pyarrow.Schema, got {type(schema).__name__}")
        self._schema = schema
        self._ids = None if field_ids is None else [int(i) for i in field_ids]
        self._debug = _debug

    def fields(self) -> List[LanceField]:
        """The top-level fields, each with its children (pylance's ``fields()``)."""
        ids = iter(self.field_ids)

        def make(f: pa.Field) -> LanceField:
            fid = next(ids, -1)
            return LanceField(f, fid, [make(c) for c in _children(f.type)])

        return [make(f) for f in self._schema]

    def field(self, name: str) -> Optional[LanceField]:
        """The field at dotted path ``name`` (``"s.a"``), or None."""
        return self._find(name.split("."), lambda a, b: a == b)

    def field_case_insensitive(self, name: str) -> Optional[LanceField]:
        """As :meth:`field`, ignoring case."""
        return self._find(name.split("."), lambda a, b: a.lower() == b.lower())

    def _find(self, path: List[str], same: Any) -> Optional[LanceField]:
        level = self.fields()
        found: Optional[LanceField] = None
        for part in path:
            found = next((f for f in level if same(f.name(), part)), None)
            if found is None:
                return None
            level = found.children()
        return found

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
        if self._debug is not None:
            return self._debug
        names = ", ".join(f"{f.name}: {f.type}" for f in self._schema)
        return f"LanceSchema({names}; field_ids={self.field_ids})"
