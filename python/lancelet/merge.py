"""``merge_insert``: upserts by key, as pylance's ``MergeInsertBuilder``.

The source rows are joined with the dataset on the ``on`` columns (keys that are null never
match). Matched target rows are replaced by their source rows
(``when_matched_update_all``), unmatched source rows are inserted
(``when_not_matched_insert_all``), and target rows no source row matches may be deleted
(``when_not_matched_by_source_delete``, optionally only where a SQL predicate holds). The
new rows are written as new fragments and the replaced or deleted rows tombstoned, in one
Update transaction: readers see the whole merge or none of it. ``when_matched_update_all``
takes an optional SQL ``condition`` over ``source.<column>`` and ``target.<column>``; a
matched row where it does not hold is left as it is (and not inserted either).

:func:`merge_columns` is ``LanceDataset.merge``: it adds the columns of a table joined on a
key, one new data file per fragment, as ``add_columns`` does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, List, Optional, Union

import pyarrow as pa
import pyarrow.compute as pc

from . import _native
from ._views import without_views
from .errors import CommitConflictError, InvalidArgumentError, SchemaMismatchError

if TYPE_CHECKING:  # pragma: no cover
    from .dataset import LanceDataset

__all__ = ["MergeInsertBuilder", "merge_columns"]


def _positions(n: int) -> pa.Array:
    """0, 1, ..., n - 1 as int64, without a Python loop."""
    if n == 0:
        return pa.array([], pa.int64())
    return pc.subtract(pc.cumulative_sum(pa.nulls(n, pa.int64()).fill_null(1)), 1)

_ADDR = "_rowaddr"
_SRC = "__lancelet_source_row"


class MergeInsertBuilder:
    """Configures and runs a merge-insert; get one from ``dataset.merge_insert(on)``."""

    def __init__(self, ds: "LanceDataset", on: Union[str, List[str]]):
        keys = [on] if isinstance(on, str) else list(on) if on is not None else []
        if not keys or not all(isinstance(k, str) for k in keys):
            raise InvalidArgumentError("merge_insert needs the key column name(s) to join on")
        names = ds.schema.names
        missing = [k for k in keys if k not in names]
        if missing:
            raise InvalidArgumentError(f"merge_insert key column(s) {missing} are not in the dataset")
        self._ds = ds
        self._on = keys
        self._update = False
        self._insert = False
        self._delete = False
        self._delete_expr: Optional[str] = None
        self._condition: Optional[str] = None
        self._retries = 10

    def when_matched_update_all(self, condition: Optional[str] = None) -> "MergeInsertBuilder":
        """Replace each matched target row by its source row; with a SQL ``condition``
        (e.g. ``"source.updated_at > target.updated_at"``), only the matched rows where it
        holds. Columns are named ``source.<name>`` and ``target.<name>``; a bare name is
        allowed when only one side has it."""
        if condition is not None and not isinstance(condition, str):
            raise InvalidArgumentError("the update condition is a SQL predicate string")
        self._update = True
        self._condition = condition
        return self

    def when_not_matched_insert_all(self) -> "MergeInsertBuilder":
        """Insert source rows that match no target row."""
        self._insert = True
        return self

    def when_not_matched_by_source_delete(self, expr: Optional[str] = None) -> "MergeInsertBuilder":
        """Delete target rows no source row matches (only those where ``expr`` holds, when
        given)."""
        if expr is not None and not isinstance(expr, str):
            raise InvalidArgumentError("the delete condition is a SQL predicate string")
        self._delete = True
        self._delete_expr = expr
        return self

    def conflict_retries(self, max_retries: int) -> "MergeInsertBuilder":
        """How many times a merge that conflicts with a concurrent commit (one that changed
        the same fragments) is run again on the latest version before
        ``CommitConflictError`` is raised (default 10, as in pylance)."""
        if isinstance(max_retries, bool) or not isinstance(max_retries, int) or max_retries < 0:
            raise InvalidArgumentError(f"conflict_retries takes a non-negative integer, got {max_retries!r}")
        self._retries = max_retries
        return self

    def execute(self, data_obj: Any, *, schema: Optional[pa.Schema] = None) -> Dict[str, int]:
        """Runs the merge with ``data_obj`` (anything ``write_dataset`` takes) as the source;
        returns ``{"num_inserted_rows", "num_updated_rows", "num_deleted_rows"}``. Nothing is
        committed when nothing changes. A merge that conflicts with a concurrent commit is
        run again on the latest version (see :meth:`conflict_retries`)."""
        from .dataset import _as_reader

        source = without_views(_as_reader(data_obj, schema).read_all())
        attempt = 0
        while True:
            try:
                return self._execute(source)
            except CommitConflictError as e:
                if attempt >= self._retries or replaced_table(e):
                    raise
                attempt += 1
                self._ds._native = self._ds._native.checkout(None)

    def _fill_from_target(self, source: pa.Table, positions: pa.Array, pairs: pa.Table) -> pa.Table:
        """``source`` with the dataset columns it lacks added: an updated row keeps its
        target row's values there (as in pylance), any other row gets nulls."""
        missing = [n for n in self._ds.schema.names if n not in source.column_names]
        if not missing or not self._update:
            return source
        if pairs.num_rows:
            reader = self._ds._native.take_addresses(pairs[_ADDR].to_pylist(), columns=missing)
            kept = pa.RecordBatchReader.from_stream(reader).read_all()
            at = pc.index_in(positions, value_set=pairs[_SRC])
        for name in missing:
            column = kept[name].take(at) if pairs.num_rows \
                else pa.nulls(source.num_rows, self._ds.schema.field(name).type)
            source = source.append_column(self._ds.schema.field(name), column)
        return source

    def _execute(self, source: pa.Table) -> Dict[str, int]:
        missing = [k for k in self._on if k not in source.column_names]
        if missing:
            raise SchemaMismatchError(f"the source has no key column(s) {missing}")
        stable = self._ds._native.has_stable_row_ids()
        target = self._ds.to_table(columns=self._on, with_row_address=True, with_row_id=stable)
        positions = _positions(source.num_rows)
        src_keys = source.select(self._on).append_column(_SRC, positions)
        for k in self._on:  # join keys need the same type on both sides
            src_keys = src_keys.set_column(src_keys.schema.get_field_index(k), k,
                                           src_keys[k].cast(target.schema.field(k).type))
        matches = src_keys.join(target, keys=self._on, join_type="inner")
        if self._update and matches.num_rows and \
                pc.count_distinct(matches[_ADDR]).as_py() < matches.num_rows:
            raise InvalidArgumentError("ambiguous merge_insert: several source rows match the same target row")
        pairs = matches  # the matched rows that are updated
        if self._update and self._condition is not None:
            pairs = matches.filter(_condition_mask(self._ds, self._condition, source, matches))
        matched_src = pairs[_SRC].to_numpy() if pairs.num_rows else []
        matched_addr = pairs[_ADDR]
        source = self._fill_from_target(source, positions, pairs)

        is_matched = pc.is_in(positions, value_set=matches[_SRC]) if matches.num_rows \
            else pa.nulls(source.num_rows, pa.bool_()).fill_null(False)
        is_updated = pc.is_in(positions, value_set=pairs[_SRC]) if pairs.num_rows \
            else pa.nulls(source.num_rows, pa.bool_()).fill_null(False)
        take = []
        if self._update:
            take.append(pc.filter(positions, is_updated))
        if self._insert:
            take.append(pc.filter(positions, pc.invert(is_matched)))
        rows = pa.concat_arrays(take) if take else pa.array([], pa.int64())
        rows = pc.take(rows, pc.sort_indices(rows))  # in source order
        new_rows = source.take(rows)
        num_updated = len(matched_src) if self._update else 0
        num_inserted = new_rows.num_rows - num_updated

        gone: List[int] = list(matched_addr.to_pylist()) if self._update else []
        num_deleted = 0
        if self._delete:
            scope = self._ds.to_table(columns=self._on, filter=self._delete_expr, with_row_address=True)
            unmatched = pc.invert(pc.is_in(scope[_ADDR], value_set=matches[_ADDR])) if matches.num_rows \
                else pa.array([True] * scope.num_rows)
            doomed = pc.filter(scope[_ADDR], unmatched).to_pylist()
            num_deleted = len(doomed)
            gone.extend(doomed)
        if not gone and not new_rows.num_rows:
            return {"num_inserted_rows": 0, "num_updated_rows": 0, "num_deleted_rows": 0}
        native = self._ds._native
        if stable and num_updated:
            # Updated rows keep their row ids: write them first, in fragments of their own,
            # and name their ids; inserted rows get new ids when the commit lands.
            by_src = dict(zip(pairs[_SRC].to_pylist(), pairs["_rowid"].to_pylist()))
            upd = [r for r in rows.to_pylist() if r in by_src]
            ins = [r for r in rows.to_pylist() if r not in by_src]
            moved = [by_src[r] for r in upd]
            frags = native.write_rows(source.take(pa.array(upd, pa.int64())))
            if ins:
                frags += native.write_rows(source.take(pa.array(ins, pa.int64())))
            self._ds._native = native.replace_rows(gone, frags, moved)
        else:
            frags = native.write_rows(new_rows) if new_rows.num_rows else []
            self._ds._native = native.replace_rows(gone, frags)
        return {"num_inserted_rows": num_inserted, "num_updated_rows": num_updated,
                "num_deleted_rows": num_deleted}


def replaced_table(error: CommitConflictError) -> bool:
    """Whether ``error`` reports a concurrent overwrite or restore: running the operation
    again on the table that replaced the one it was meant for would be a different
    operation, so, as in pylance, such a conflict is not retried."""
    return any(f"a concurrent {op} " in str(error) for op in ("Overwrite", "Restore", "Clone"))


def _resolve(name: str, names: List[str]) -> Optional[str]:
    """The column ``name`` refers to: the exact name, else the one equal ignoring case."""
    if name in names:
        return name
    folded = [n for n in names if n.lower() == name.lower()]
    return folded[0] if len(folded) == 1 else None


def _condition_mask(ds: "LanceDataset", condition: str, source: pa.Table, matches: pa.Table) -> pa.Array:
    """Where ``condition`` holds for each matched pair (a row of ``matches``: the source row
    ``_SRC`` and the target row at ``_ADDR``). The condition reads ``source.x``,
    ``target.x`` (qualifiers and column names match ignoring case, as in pylance) and bare
    names that only one side has."""
    sides = {"source": source.column_names, "target": ds.schema.names}
    wanted: Dict[str, Dict[str, str]] = {"source": {}, "target": {}}  # spelling -> column
    bare: Dict[str, tuple] = {}
    for path in _native.condition_columns(condition):
        side = path[0].lower()
        if side in sides and len(path) > 1:
            column = _resolve(path[1], sides[side])
            if column is None:
                raise InvalidArgumentError(
                    f"the update condition reads {path[0]}.{path[1]}, but the {side} has no column {path[1]!r}")
            wanted[side][path[1]] = column
            continue
        found = [(s, _resolve(path[0], names)) for s, names in sides.items() if _resolve(path[0], names)]
        if len(found) > 1:
            raise InvalidArgumentError(
                f"the update condition reads {path[0]!r}, a column of both the source and the target; "
                f"write source.{path[0]} or target.{path[0]}")
        if not found:
            raise InvalidArgumentError(f"the update condition reads {path[0]!r}, a column of neither side")
        bare[path[0]] = found[0]
    target_cols = sorted(set(wanted["target"].values()) | {c for s, c in bare.values() if s == "target"})
    src = source.take(matches[_SRC])
    if target_cols:
        reader = ds._native.take_addresses(matches[_ADDR].to_pylist(), columns=target_cols)
        tgt = pa.RecordBatchReader.from_stream(reader).read_all()
    else:
        tgt = pa.table({})
    tables = {"source": src, "target": tgt}

    def column(side: str, name: str) -> pa.Array:
        return tables[side][name].combine_chunks() if matches.num_rows \
            else pa.array([], tables[side].schema.field(name).type)

    arrays, names = [], []
    for side in ("source", "target"):
        if wanted[side]:
            spelled = list(wanted[side])
            arrays.append(pa.StructArray.from_arrays([column(side, wanted[side][n]) for n in spelled], names=spelled))
            names.append(side)
    for spelling, (side, name) in bare.items():
        arrays.append(column(side, name))
        names.append(spelling)
    if arrays:
        batch = pa.RecordBatch.from_arrays(arrays, names=names)
    else:  # a condition without columns (``1 = 1``)
        batch = pa.RecordBatch.from_arrays([pa.nulls(matches.num_rows, pa.bool_())], names=["__rows"])
    return pa.RecordBatchReader.from_stream(_native.evaluate_condition(batch, condition)).read_all()["mask"]


def merge_columns(ds: "LanceDataset", data_obj: Any, left_on: str, right_on: Optional[str] = None,
                  schema: Optional[pa.Schema] = None) -> Any:
    """``LanceDataset.merge``: joins ``data_obj`` to ``ds`` on ``left_on`` = ``right_on``
    and adds its other columns, one new data file per fragment, committed as a Merge.
    Returns the new native dataset."""
    from .dataset import _as_reader
    from .evolve import commit_files

    if not isinstance(left_on, str) or (right_on is not None and not isinstance(right_on, str)):
        raise TypeError("merge joins on one column: left_on and right_on are column names (str)")
    right_on = left_on if right_on is None else right_on
    if left_on not in ds.schema.names:
        raise InvalidArgumentError(f"column {left_on!r} does not exist in the dataset (merge joins on a "
                                   "top-level column)")
    right = without_views(_as_reader(data_obj, schema).read_all())
    if right_on not in right.column_names:
        raise InvalidArgumentError(f"column {right_on!r} does not exist in the data to merge")
    new_cols = [n for n in right.column_names if n != right_on]
    clash = [n for n in new_cols if n in ds.schema.names]
    if clash:
        raise InvalidArgumentError(f"column(s) {clash} exist in both the dataset and the data to merge")
    if not new_cols:
        raise InvalidArgumentError("the data to merge has no columns besides the key")
    if right.num_rows == 0:
        raise InvalidArgumentError("the data to merge has no rows")
    left_type, right_type = ds.schema.field(left_on).type, right.schema.field(right_on).type
    if left_type != right_type:
        raise InvalidArgumentError(f"the key columns differ in type: {left_on!r} is {left_type} in the dataset, "
                                   f"{right_on!r} is {right_type} in the data to merge")
    # When a key repeats, its last row wins (as in pylance): look keys up in reverse order.
    rev = right.take(pc.subtract(right.num_rows - 1, _positions(right.num_rows)))
    keys, values = rev[right_on].combine_chunks(), rev.select(new_cols)
    out_schema = values.schema
    native = ds._native

    def joined(fragment_id: int):
        stream = native.scan(columns=[left_on], fragments=[fragment_id], include_deleted=True)
        for batch in pa.RecordBatchReader.from_stream(stream):
            # Null keys match null keys, as in pylance.
            at = pc.index_in(batch.column(0), value_set=keys, skip_nulls=False)
            yield from values.take(at).combine_chunks().to_batches()

    files: List[Dict[str, Any]] = []
    try:
        for frag in native.fragments():
            reader = pa.RecordBatchReader.from_batches(out_schema, joined(frag["id"]))
            files.append(native.write_column_file(frag["id"], reader))
    except BaseException:
        native.remove_data_files([f["path"] for frag in files for f in frag["files"]])
        raise
    return commit_files(native, out_schema, files)
