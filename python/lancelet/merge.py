"""``merge_insert``: upserts by key, as pylance's ``MergeInsertBuilder``.

The source rows are joined with the dataset on the ``on`` columns (keys that are null never
match). Matched target rows are replaced by their source rows
(``when_matched_update_all``), unmatched source rows are inserted
(``when_not_matched_insert_all``), and target rows no source row matches may be deleted
(``when_not_matched_by_source_delete``, optionally only where a SQL predicate holds). The
new rows are written as new fragments and the replaced or deleted rows tombstoned, in one
Update transaction: readers see the whole merge or none of it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, List, Optional, Union

import pyarrow as pa
import pyarrow.compute as pc

from .errors import InvalidArgumentError, SchemaMismatchError, UnsupportedFeatureError

if TYPE_CHECKING:  # pragma: no cover
    from .dataset import LanceDataset

__all__ = ["MergeInsertBuilder"]


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

    def when_matched_update_all(self, condition: Optional[str] = None) -> "MergeInsertBuilder":
        """Replace each matched target row by its source row."""
        if condition is not None:
            raise UnsupportedFeatureError("when_matched_update_all(condition=...)")
        self._update = True
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
        """Accepted for pylance compatibility: a conflicting concurrent change to the same
        fragments raises ``CommitConflictError``."""
        return self

    def execute(self, data_obj: Any, *, schema: Optional[pa.Schema] = None) -> Dict[str, int]:
        """Runs the merge with ``data_obj`` (anything ``write_dataset`` takes) as the source;
        returns ``{"num_inserted_rows", "num_updated_rows", "num_deleted_rows"}``. Nothing is
        committed when nothing changes."""
        from .dataset import _as_reader

        source = _as_reader(data_obj, schema).read_all()
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
        pairs = src_keys.join(target, keys=self._on, join_type="inner")
        matched_src = pairs[_SRC].to_numpy() if pairs.num_rows else []
        matched_addr = pairs[_ADDR]
        if self._update and pairs.num_rows and pc.count_distinct(matched_addr).as_py() < pairs.num_rows:
            raise InvalidArgumentError("ambiguous merge_insert: several source rows match the same target row")

        is_matched = pc.is_in(positions, value_set=pairs[_SRC]) if pairs.num_rows \
            else pa.nulls(source.num_rows, pa.bool_()).fill_null(False)
        take = []
        if self._update:
            take.append(pc.filter(positions, is_matched))
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
            unmatched = pc.invert(pc.is_in(scope[_ADDR], value_set=matched_addr)) if pairs.num_rows \
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
