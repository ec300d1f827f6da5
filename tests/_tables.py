"""Table builders shared by the Python suite.

Most tests need "some rows keyed by an id" and differ only in which columns ride along.
Every builder here takes the ids of its rows (``range(lo, hi)``, ``range(start, start + n)``
or any list) and computes each row's values from its id alone, so a table built in two
pieces (``range(0, 10)`` then ``range(10, 20)``) holds the same rows as one built at once,
and every run writes the same bytes.

- :func:`id_strings`: ``id`` and one string column, the commonest table of the suite.
- :func:`sample`: ``id``, a nullable ``name``, ``score`` and a ``vec`` vector column, and
  with ``nested=True`` a nullable list column ``tags`` and a struct column ``meta``.
- :func:`rows`: ``id`` and any columns, each given as a function of the id (see
  :func:`nulls`, :func:`typed` and :func:`vector` for nullable, typed and vector columns)
  or as values already built (say by a seeded ``numpy`` generator).

Tests import it directly (pytest puts ``tests/`` on ``sys.path``).

>>> id_strings(range(3)).to_pydict()
{'id': [0, 1, 2], 's': ['v0', 'v1', 'v2']}
>>> rows(range(3), half=lambda i: i / 2, name=nulls(2, lambda i: f"n{i}")).to_pydict()
{'id': [0, 1, 2], 'half': [0.0, 0.5, 1.0], 'name': [None, 'n1', None]}
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, NamedTuple, Optional, Union

import numpy as np
import pyarrow as pa

#: The default type of the ``id`` column.
INT64 = pa.int64()

#: A column's value at the row with a given id.
Value = Callable[[int], Any]


class Col(NamedTuple):
    """A column of :func:`rows`: the value of each row from its id, and the Arrow type
    (``None``: inferred by ``pa.array``)."""

    value: Value
    type: Optional[pa.DataType] = None


#: What :func:`rows` takes for a column: a function of the id, a :class:`Col`, or values
#: already built, one per id (a ``pa.Array``, ``numpy`` array or list).
Column = Union[Value, Col, pa.Array, np.ndarray, list]


def typed(type: pa.DataType, value: Value) -> Col:
    """The column ``value(id)`` stored as ``type`` (``rows(ids, k=typed(pa.int32(), f))``)."""
    return Col(value, type)


def nulls(every: int, value: Value, at: int = 0) -> Value:
    """``value(id)``, but null on the rows whose ``id % every == at``."""
    return lambda i: None if i % every == at else value(i)


def vector(dim: int, value: Union[Callable[[int, int], float], np.ndarray, None] = None,
           null_mask: Optional[np.ndarray] = None) -> Union[Col, pa.Array]:
    """A fixed-size list column of ``dim`` values per row: ``value(id, k)`` for the k-th
    (as float32; default ``float(id)``), or the rows of a 2-D ``numpy`` array (its dtype
    kept, ``null_mask`` marking null rows) in the order of the ids."""
    if isinstance(value, np.ndarray):
        flat = pa.array(value.ravel())
        mask = None if null_mask is None else pa.array(null_mask)
        return pa.FixedSizeListArray.from_arrays(flat, value.shape[1], mask=mask)
    each = value if value is not None else (lambda i, _k: float(i))
    return Col(lambda i: [each(i, k) for k in range(dim)], pa.list_(pa.float32(), dim))


def rows(ids: Iterable[int], *, id_type: pa.DataType = INT64, schema: Optional[pa.Schema] = None,
         **columns: Column) -> pa.Table:
    """A table of ``id`` (the given ids, as ``id_type``) followed by ``columns`` in the
    order given. With ``schema``, the columns are cast to it (field nullability and
    metadata included)."""
    ids = list(ids)
    arrays = {"id": pa.array(ids, id_type)}
    for name, col in columns.items():
        if isinstance(col, Col):
            arrays[name] = pa.array([col.value(i) for i in ids], col.type)
        elif callable(col):
            arrays[name] = pa.array([col(i) for i in ids])
        else:
            arrays[name] = col if isinstance(col, pa.Array) else pa.array(col)
    return pa.table(arrays, schema=schema)


def id_strings(ids: Iterable[int], *, column: str = "s", fmt: str = "v{}", cycle: int = 0,
               id_type: pa.DataType = INT64, schema: Optional[pa.Schema] = None) -> pa.Table:
    """``id`` and one string ``column`` holding ``fmt.format(id)``, or with ``cycle`` only
    ``cycle`` distinct values, ``fmt.format(id % cycle)``.

    >>> id_strings([7, 8], column="v", fmt="x{}", cycle=4).to_pydict()
    {'id': [7, 8], 'v': ['x3', 'x0']}
    """
    return rows(ids, id_type=id_type, schema=schema, **{column: lambda i: fmt.format(i % cycle if cycle else i)})


#: The struct type of :func:`sample`'s ``meta`` column.
META = pa.struct([("a", pa.int32()), ("b", pa.string())])


def sample(ids: Iterable[int], *, vector_dim: int = 2, nested: bool = False) -> pa.Table:
    """A typical table of the dataset suites. Columns, for the row with id ``i``:

    - ``id``: int64 ``i``;
    - ``name``: ``f"name-{i}"``, null when ``i % 5 == 0``;
    - ``score``: float64 ``i * 0.5``;
    - ``vec``: ``vector_dim`` float32 values, ``i, -i, i, -i, ...``;
    - with ``nested``: ``tags``, a list of strings (``i % 4`` copies of ``f"t{i % 3}"``,
      null when ``i % 9 == 0``), and ``meta``, a struct ``{a: int32 i % 5, b: f"b{i}"}``.

    >>> sample([5, 6]).to_pydict()
    {'id': [5, 6], 'name': [None, 'name-6'], 'score': [2.5, 3.0], 'vec': [[5.0, -5.0], [6.0, -6.0]]}
    """
    extra = {}
    if nested:
        extra = {"tags": typed(pa.list_(pa.string()), nulls(9, lambda i: [f"t{i % 3}"] * (i % 4))),
                 "meta": typed(META, lambda i: {"a": i % 5, "b": f"b{i}"})}
    return rows(
        ids,
        name=typed(pa.string(), nulls(5, lambda i: f"name-{i}")),
        score=typed(pa.float64(), lambda i: i * 0.5),
        vec=vector(vector_dim, lambda i, k: float(-i if k % 2 else i)),
        **extra,
    )
