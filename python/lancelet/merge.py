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

from ._inputs import _as_reader
from ._native import dataset as _native_dataset
from .errors import InvalidArgumentError

if TYPE_CHECKING:  # pragma: no cover
    from .dataset import LanceDataset

__all__ = ["MergeInsertBuilder", "merge_columns"]


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
        self._target_bases: List[str] = []
        self._target_all: Optional[bool] = None

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

    def target_bases(self, bases: List[str]) -> "MergeInsertBuilder":
        """Write the merge's new data files to the base paths ``bases`` in turn (bases
        registered in the dataset, by name or path; the dataset's URI means its own root):
        the first new file goes to ``bases[0]``, the next to ``bases[1]``, and so on round
        robin, as pylance does. Deletion files stay at the root. Cannot be combined with
        :meth:`target_all_bases`.

        >>> ds.merge_insert("id").when_not_matched_insert_all() \\
        ...     .target_bases(["archive"]).execute(rows)  # doctest: +SKIP
        """
        if isinstance(bases, str):
            bases = [bases]
        if not isinstance(bases, (list, tuple)) or not all(isinstance(b, str) for b in bases):
            raise InvalidArgumentError(f"target_bases takes a list of base names or paths, got {bases!r}")
        if self._target_all is not None:
            raise InvalidArgumentError("target_bases cannot be combined with target_all_bases")
        self._target_bases = list(bases)
        return self

    def target_all_bases(self, include_primary: bool = True) -> "MergeInsertBuilder":
        """Spread the merge's new data files over every base path registered in the dataset
        (by id, resolved when the merge runs), round robin; with ``include_primary`` the
        dataset's own root takes the first turn. Cannot be combined with
        :meth:`target_bases`.

        >>> ds.merge_insert("id").when_not_matched_insert_all() \\
        ...     .target_all_bases(include_primary=False).execute(rows)  # doctest: +SKIP
        """
        if not isinstance(include_primary, bool):
            raise InvalidArgumentError(f"include_primary takes a bool, got {include_primary!r}")
        if self._target_bases:
            raise InvalidArgumentError("target_all_bases cannot be combined with target_bases")
        self._target_all = include_primary
        return self

    def execute(self, data_obj: Any, *, schema: Optional[pa.Schema] = None) -> Dict[str, int]:
        """Runs the merge with ``data_obj`` (anything ``write_dataset`` takes) as the source;
        returns ``{"num_inserted_rows", "num_updated_rows", "num_deleted_rows"}``. Nothing is
        committed when nothing changes. A merge that conflicts with a concurrent commit is
        run again on the latest version (see :meth:`conflict_retries`); one replaced by a
        concurrent overwrite or restore is not.

        >>> ds.merge_insert("id").when_matched_update_all() \\
        ...     .when_not_matched_insert_all().execute(new_rows)  # doctest: +SKIP
        {'num_inserted_rows': 5, 'num_updated_rows': 5, 'num_deleted_rows': 0}
        """
        native, counts = _native_dataset.merge_insert(
            self._ds._native,
            _as_reader(data_obj, schema),
            self._on,
            {
                "update": self._update,
                "update_condition": self._condition,
                "insert": self._insert,
                "delete": self._delete,
                "delete_filter": self._delete_expr,
                "conflict_retries": self._retries,
                "target_bases": self._target_bases,
                "target_all_bases": self._target_all,
            },
        )
        self._ds._move_to(native)
        return dict(counts)


def merge_columns(
    ds: "LanceDataset", data_obj: Any, left_on: str, right_on: Optional[str] = None, schema: Optional[pa.Schema] = None
) -> Any:
    """``LanceDataset.merge``: joins ``data_obj`` to ``ds`` on ``left_on`` = ``right_on``
    and adds its other columns, one new data file per fragment, committed as a Merge.
    Returns the new native dataset. The join runs natively
    (``lancelet_dataset::merge_columns``): ``data_obj`` is streamed once, only its keys
    are held in a hash table, and its other columns are spilled to a file past a budget."""
    if not isinstance(left_on, str) or (right_on is not None and not isinstance(right_on, str)):
        raise TypeError("merge joins on one column: left_on and right_on are column names (str)")
    return _native_dataset.merge_columns(ds._native, _as_reader(data_obj, schema), left_on, right_on)
