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

import datetime as _dt
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Tuple, Union

import pyarrow as pa

from . import _operations
from ._inputs import _as_reader
from ._native import dataset as _native_dataset
from .errors import InvalidArgumentError

if TYPE_CHECKING:  # pragma: no cover
    from ._native.dataset import _MergeInsertOptions
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
        self._fail = False
        self._timeout: Optional[float] = 30.0
        self._use_index = True
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
        self._fail = False
        self._condition = condition
        return self

    def when_matched_fail(self) -> "MergeInsertBuilder":
        """Fail the merge if any source row matches a target row: nothing is written or
        committed, and ``InvalidArgumentError`` names how many source rows matched. For
        inserts that must be new (``when_not_matched_insert_all`` of rows whose keys must
        not exist yet). Replaces :meth:`when_matched_update_all`.

        >>> ds.merge_insert("id").when_matched_fail() \\
        ...     .when_not_matched_insert_all().execute(new_rows)  # doctest: +SKIP
        """
        self._update = False
        self._condition = None
        self._fail = True
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

    def retry_timeout(self, timeout: _dt.timedelta) -> "MergeInsertBuilder":
        """No new attempt after a conflict starts once ``timeout`` has passed since the
        first (default 30 seconds, as in pylance); ``conflict_retries`` bounds the attempts
        as well."""
        if isinstance(timeout, (int, float)) and not isinstance(timeout, bool):
            seconds = float(timeout)
        elif isinstance(timeout, _dt.timedelta):
            seconds = timeout.total_seconds()
        else:
            raise InvalidArgumentError(f"retry_timeout takes a datetime.timedelta, got {timeout!r}")
        if seconds < 0:
            raise InvalidArgumentError(f"retry_timeout must not be negative, got {timeout!r}")
        self._timeout = seconds
        return self

    def use_index(self, use_index: bool) -> "MergeInsertBuilder":
        """pylance's switch between joining through a scalar index on the key and scanning
        the key column. lancelet always streams the target's key column through a hash
        table of the source's keys (the source is the small side), which reads the keys
        once whatever indexes exist; the flag is accepted and changes nothing, results
        included."""
        if not isinstance(use_index, bool):
            raise InvalidArgumentError(f"use_index takes a bool, got {use_index!r}")
        self._use_index = use_index
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
            self._ds._native, _as_reader(data_obj, schema), self._on, self._options()
        )
        self._ds._move_to(native)
        return dict(counts)

    def execute_uncommitted(
        self, data_obj: Any, *, schema: Optional[pa.Schema] = None
    ) -> Tuple["_operations.Transaction", Dict[str, int]]:
        """Runs the merge without committing it: the new data files and deletion files
        are written, and the :class:`Transaction` (an ``Update``) that would commit them is
        returned with the counts. Commit it with ``LanceDataset.commit(uri, transaction)``;
        it conflicts like any commit read at this version.

        >>> txn, counts = ds.merge_insert("id").when_not_matched_insert_all() \\
        ...     .execute_uncommitted(new_rows)  # doctest: +SKIP
        >>> ds = lancelet.LanceDataset.commit(ds.uri, txn)  # doctest: +SKIP
        """
        txn, counts = _native_dataset.merge_insert_uncommitted(
            self._ds._native, _as_reader(data_obj, schema), self._on, self._options()
        )
        # An Update: from_native builds it without the LanceOperation namespace.
        return _operations.from_native(txn, None), dict(counts)

    def explain_plan(self, schema: Optional[pa.Schema] = None, verbose: bool = False) -> str:
        """The merge's plan for a source of ``schema`` (the dataset's schema when None),
        checked as ``execute`` would check it: the settings on the first line
        (``MergeInsert: on=[...], when_matched=..., when_not_matched=...,
        when_not_matched_by_source=...``), then the join and its two sides.

        >>> print(ds.merge_insert("id").when_matched_update_all().explain_plan())  # doctest: +SKIP
        """
        if not isinstance(verbose, bool):
            raise InvalidArgumentError(f"verbose takes a bool, got {verbose!r}")
        return str(_native_dataset.merge_insert_plan(self._ds._native, self._on, schema, verbose, self._options()))

    def analyze_plan(self, data_obj: Any, *, schema: Optional[pa.Schema] = None) -> str:
        """Runs the merge with ``data_obj`` without committing it and returns its plan
        with what it did (``metrics=[num_inserted_rows=..., num_updated_rows=...,
        num_deleted_rows=..., bytes_written=..., num_files_written=...]`` and the time
        taken). The files it wrote are removed again: the dataset is unchanged.

        >>> print(ds.merge_insert("id").when_matched_update_all().analyze_plan(rows))  # doctest: +SKIP
        """
        return str(
            _native_dataset.merge_insert_analyze(
                self._ds._native, _as_reader(data_obj, schema), self._on, self._options()
            )
        )

    def _options(self) -> "_MergeInsertOptions":
        return {
            "update": self._update,
            "update_condition": self._condition,
            "fail_on_match": self._fail,
            "insert": self._insert,
            "delete": self._delete,
            "delete_filter": self._delete_expr,
            "conflict_retries": self._retries,
            "retry_timeout": self._timeout,
            "target_bases": self._target_bases,
            "target_all_bases": self._target_all,
        }


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
