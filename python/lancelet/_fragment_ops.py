"""``LanceFragment.merge_columns``: new columns for one fragment, written as one data file
and not committed, as pylance's fragment API offers. The caller gathers the results of
every fragment and commits them with ``LanceOperation.Merge``::

    frags, schema = [], None
    for frag in ds.get_fragments():
        meta, schema = frag.merge_columns({"c": "a * 2"})
        frags.append(meta)
    lancelet.LanceDataset.commit(uri, lancelet.LanceOperation.Merge(frags, schema), read_version=ds.version)

The new fields get the same ids on every fragment of a version (the dataset's next free
ids), so the per-fragment results fit together in one schema.
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any, List, Optional, Tuple

import pyarrow as pa

from . import _native
from .errors import InvalidArgumentError

if TYPE_CHECKING:  # pragma: no cover
    from .fragment import FragmentMetadata, LanceFragment
    from .schema import LanceSchema


def _new_names(frag: "LanceFragment", names: List[str]) -> None:
    existing = set(frag._ds.schema.names)
    clash = [n for n in names if n in existing]
    if clash:
        raise InvalidArgumentError(f"merge_columns: column {clash[0]} already exists in the dataset")


def merge_columns(
    frag: "LanceFragment",
    value_func: Any,
    columns: Optional[List[str]] = None,
    batch_size: Optional[int] = None,
    reader_schema: Optional[pa.Schema] = None,
) -> Tuple["FragmentMetadata", "LanceSchema"]:
    """See :meth:`lancelet.fragment.LanceFragment.merge_columns`."""
    from . import _dropin
    from ._argcheck import _names
    from ._inputs import _as_reader
    from .evolve import BatchUDF, fragment_file, udf_schema
    from .fragment import FragmentMetadata
    from .schema import LanceSchema

    if batch_size is not None and (isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size <= 0):
        raise InvalidArgumentError(f"batch_size must be a positive integer, got {batch_size!r}")
    names = _names(columns) if columns is not None else None
    ds = frag._ds
    native = ds._native
    meta = frag.metadata.to_json()
    fid = frag.fragment_id
    native_meta = next(f for f in native.fragments() if f["id"] == fid)
    if isinstance(value_func, dict):
        if not value_func or not all(isinstance(k, str) and isinstance(v, str) for k, v in value_func.items()):
            raise InvalidArgumentError("merge_columns takes a non-empty dict of {name: SQL expression}")
        _new_names(frag, list(value_func))
        live = frag.to_table(columns=dict(value_func))
        table = _dropin._physical(native, native_meta, live)
        new = native.write_column_file(fid, table.to_reader())
        added = table.schema
    elif callable(value_func):
        udf = value_func if isinstance(value_func, BatchUDF) else BatchUDF(value_func)
        if udf.checkpoint_file is not None:
            raise InvalidArgumentError(
                "a checkpoint file cannot be used with LanceFragment.merge_columns; "
                "checkpoint fragment-level work yourself"
            )
        added = udf_schema(native, udf, names)
        if added is None:
            raise InvalidArgumentError("merge_columns: the dataset has no rows to infer the UDF's output schema from")
        _new_names(frag, added.names)
        new = fragment_file(native, fid, udf, names, batch_size, added)
    elif _dropin.is_stream(value_func):
        reader = _as_reader(value_func, reader_schema)
        added = reader.schema
        if not len(added):
            raise InvalidArgumentError("merge_columns got a stream with no columns")
        _new_names(frag, added.names)
        live = reader.read_all()
        want = native_meta["num_rows"]
        if live.num_rows != want:
            raise InvalidArgumentError(
                f"merge_columns: the stream has {live.num_rows} rows; fragment {fid} has {want} rows "
                "and the stream must give one row per row, in order"
            )
        table = _dropin._physical(native, native_meta, live)
        new = native.write_column_file(fid, table.to_reader())
    else:
        raise TypeError(
            "merge_columns takes a dict of SQL expressions, a function or BatchUDF, or a reader of "
            f"the new columns' rows; got {type(value_func).__name__}"
        )
    out = copy.deepcopy(meta)
    new_file = dict(new["files"][0])
    out["files"] = list(out["files"]) + [new_file]
    schema = pa.schema(list(ds.schema) + list(added), metadata=ds.schema.metadata)
    ids = list(_native.dataset_field_ids(native)) + list(new_file["fields"])
    return FragmentMetadata.from_json(out), LanceSchema(schema, ids)
