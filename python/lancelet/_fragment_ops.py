"""The work behind ``LanceFragment.merge_columns``, ``update_columns`` and
``create_from_file``: fragments and columns written without a commit, as pylance's
fragment API offers. Each function returns the new fragment's metadata as JSON (a dict);
:mod:`lancelet.fragment` wraps it in a ``FragmentMetadata``.

``merge_columns`` writes the new columns for one fragment as one data file. The caller gathers the results of
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
import struct
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Tuple

import pyarrow as pa
import pyarrow.compute as pc

from . import _dropin
from ._argcheck import _names
from ._inputs import _as_reader
from ._native import dataset as _native_dataset
from .errors import InvalidArgumentError
from .evolve import BatchUDF, fragment_file, udf_schema
from .file import LanceFileReader
from .schema import LanceSchema, _count

if TYPE_CHECKING:  # pragma: no cover
    from .dataset import LanceDataset
    from .fragment import LanceFragment


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
) -> Tuple[Dict[str, Any], LanceSchema]:
    """See :meth:`lancelet.fragment.LanceFragment.merge_columns` (the fragment as JSON)."""
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
                "A checkpoint file cannot be used with LanceFragment.merge_columns; "
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
    ids = list(_native_dataset.dataset_field_ids(native)) + list(new_file["fields"])
    return out, LanceSchema(schema, ids)


def create_from_file(filename: str, dataset: "LanceDataset", fragment_id: int) -> Tuple[List[Dict[str, Any]], int]:
    """See :meth:`lancelet.fragment.LanceFragment.create_from_file`: the fragment's files
    and row count."""
    if not isinstance(filename, str) or not filename:
        raise InvalidArgumentError(f"filename must be a data file name, got {filename!r}")
    if isinstance(fragment_id, bool) or not isinstance(fragment_id, int) or fragment_id < 0:
        raise InvalidArgumentError(f"fragment_id must be a non-negative int, got {fragment_id!r}")
    reader = LanceFileReader(f"{dataset._path.rstrip('/')}/data/{filename}", dataset._storage_options)
    meta = reader.metadata()
    # The data storage version ("2.0" files carry 0.3 in their footer).
    major, minor = (int(x) for x in meta.version.split(".")[:2])
    if meta.schema.names != dataset.schema.names:
        raise InvalidArgumentError(
            f"data file {filename} has columns {meta.schema.names}; the dataset has {dataset.schema.names}"
        )
    # The dataset's data file holding the most fields tells which field ids a file of every
    # column lists (file format 2.1+ lists no struct or list parents) and their columns.
    known = [f for frag in dataset._native.fragments() for f in frag["files"] if -2 not in f["fields"]]
    widest = max(known, key=lambda f: len(f["fields"]), default=None)
    if widest is not None:
        fields, columns = list(widest["fields"]), list(widest["column_indices"])
    else:
        fields = list(_native_dataset.dataset_field_ids(dataset._native))
        columns = list(range(len(fields)))
    file = {
        "path": filename,
        "fields": fields,
        "column_indices": columns,
        "file_major_version": major,
        "file_minor_version": minor,
        "file_size_bytes": None,
        "base_id": None,
    }
    return [file], meta.num_rows


def portable_roaring(values: List[int]) -> bytes:
    """``values`` (distinct u32s) as a roaring bitmap in the portable format, without run
    containers: what pylance's ``update_columns(with_offsets=True)`` returns.

    >>> portable_roaring([1])
    b':0\\x00\\x00\\x01\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x10\\x00\\x00\\x00\\x01\\x00'
    """
    groups: Dict[int, List[int]] = {}
    for v in sorted(set(values)):
        groups.setdefault(v >> 16, []).append(v & 0xFFFF)
    header = struct.pack("<II", 12346, len(groups))
    header += b"".join(struct.pack("<HH", key, len(low) - 1) for key, low in groups.items())
    bodies = []
    for low in groups.values():
        if len(low) <= 4096:
            bodies.append(struct.pack(f"<{len(low)}H", *low))
        else:
            words = [0] * 1024
            for v in low:
                words[v >> 6] |= 1 << (v & 63)
            bodies.append(struct.pack("<1024Q", *words))
    offset = len(header) + 4 * len(groups)
    offsets = []
    for body in bodies:
        offsets.append(offset)
        offset += len(body)
    return header + struct.pack(f"<{len(offsets)}I", *offsets) + b"".join(bodies)


def _subtree_ids(ds: Any, names: List[str]) -> Dict[str, List[int]]:
    """The field ids (depth-first) of each top-level column in ``names``."""
    ids = list(_native_dataset.dataset_field_ids(ds._native))
    out: Dict[str, List[int]] = {}
    pos = 0
    for f in ds.schema:
        n = 1 + _count(f.type)
        if f.name in names:
            out[f.name] = ids[pos : pos + n]
        pos += n
    return out


def update_columns(
    frag: "LanceFragment",
    data_obj: Any,
    left_on: str,
    right_on: Optional[str],
    schema: Optional[pa.Schema],
    with_offsets: bool,
) -> tuple:
    """See :meth:`lancelet.fragment.LanceFragment.update_columns` (the fragment as JSON)."""
    import numpy as np  # noqa: PLC0415 (optional dependency)

    right_on = left_on if right_on is None else right_on
    if not isinstance(left_on, str) or not isinstance(right_on, str):
        raise InvalidArgumentError("left_on and right_on must be column names")
    right = _as_reader(data_obj, schema).read_all()
    ds = frag._ds
    dschema = ds.schema
    if right_on not in right.column_names:
        raise InvalidArgumentError(f"update_columns: column {right_on} does not exist in the new data")
    if left_on not in dschema.names and left_on not in ("_rowid", "_rowaddr"):
        raise InvalidArgumentError(f"update_columns: column {left_on} does not exist in fragment {frag.fragment_id}")
    names = [n for n in right.column_names if n != right_on]
    for n in names:
        if n in ("_rowid", "_rowaddr", left_on) or n not in dschema.names:
            raise InvalidArgumentError(
                f"update_columns: column {n} is not a column of the dataset that can be updated "
                f"(the join column and _rowid/_rowaddr cannot be)"
            )
    if not names:
        raise InvalidArgumentError("update_columns: the new data has no column to update besides the join column")
    meta_key = left_on if left_on in dschema.names else None
    columns = names + ([meta_key] if meta_key and meta_key not in names else [])
    live = frag.to_table(columns=columns, with_row_id=left_on == "_rowid", with_row_address=left_on == "_rowaddr")
    left_keys = live.column(left_on).combine_chunks()
    right_keys = right.column(right_on).combine_chunks()
    if right_keys.type != left_keys.type:
        try:
            right_keys = right_keys.cast(left_keys.type)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as e:
            raise InvalidArgumentError(
                f"update_columns: {right_on} ({right_keys.type}) cannot be joined with {left_on} ({left_keys.type})"
            ) from e
    match = pc.index_in(left_keys, value_set=right_keys).to_numpy(zero_copy_only=False)
    matched = ~np.isnan(match.astype(np.float64))
    n_live = live.num_rows
    take = np.arange(n_live, dtype=np.int64)
    take[matched] = n_live + match[matched].astype(np.int64)
    new_cols = []
    for n in names:
        target = dschema.field(n).type
        try:
            values = right.column(n).combine_chunks().cast(target)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as e:
            raise InvalidArgumentError(f"update_columns: column {n} cannot be cast to {target}: {e}") from e
        both = pa.concat_arrays([live.column(n).combine_chunks(), values])
        new_cols.append(both.take(pa.array(take)))
    fid = frag.fragment_id
    native = ds._native
    native_meta = next(f for f in native.fragments() if f["id"] == fid)
    temp = [f"__lancelet_update_{i}" for i in range(len(names))]
    fields = [pa.field(t, dschema.field(n).type, dschema.field(n).nullable) for t, n in zip(temp, names)]
    table = pa.Table.from_arrays(new_cols, schema=pa.schema(fields))
    if n_live != native_meta["physical_rows"]:
        # Deleted rows are never read: they get a copy of a live row's values (a null would
        # not fit a non-nullable column, nor a struct in file format 2.0).
        addrs = frag.to_table(columns=[], with_row_address=True).column("_rowaddr").to_numpy()
        index = np.zeros(native_meta["physical_rows"], dtype=np.int64)
        index[(addrs.astype(np.uint64) & np.uint64(0xFFFFFFFF)).astype(np.int64)] = np.arange(n_live)
        table = table.take(pa.array(index))
    new_file = dict(native.write_column_file(fid, table.to_reader())["files"][0])
    # The file's fields got fresh ids (depth-first, consecutive); they stand for the
    # updated columns' own ids, in the same order.
    subtrees = _subtree_ids(ds, names)
    old_ids = [i for n in names for i in subtrees[n]]
    meta = frag.metadata.to_json()
    stored = {i for f in meta["files"] for i in f["fields"]}
    first = next((p for p, i in enumerate(old_ids) if i in stored), None)
    if first is None or not new_file["fields"]:
        raise InvalidArgumentError(f"update_columns: fragment {fid} stores none of the columns {names}")
    start = min(new_file["fields"]) - first
    mapped = [old_ids[i - start] for i in new_file["fields"]]
    new_file["fields"] = mapped
    old = set(old_ids)
    files = [{**f, "fields": [-2 if i in old else i for i in f["fields"]]} for f in meta["files"]]
    out = {**meta, "files": files + [new_file]}
    if not with_offsets:
        return out, mapped
    addrs = frag.to_table(columns=[], with_row_address=True).column("_rowaddr").to_numpy()
    offsets = (addrs[matched].astype(np.uint64) & np.uint64(0xFFFFFFFF)).tolist()
    return out, mapped, portable_roaring([int(o) for o in offsets])
