"""Change data feeds between two versions: :meth:`lancelet.LanceDataset.delta` returns a
:class:`DatasetDelta`; :meth:`lancelet.LanceDataset.changes` reads one as three tables.

>>> ds.delta(begin_version=1, end_version=3).get_inserted_rows().read_all()  # doctest: +SKIP
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, List, Optional, Tuple

import pyarrow as pa

from ._argcheck import _check_delta_version, _check_int_version
from .errors import InvalidArgumentError, UnsupportedFeatureError
from .file import ReaderResults

if TYPE_CHECKING:  # pragma: no cover
    from .dataset import LanceDataset

__all__ = ["DatasetDelta"]


class DatasetDelta:
    """The differences between two versions (from :meth:`LanceDataset.delta`): rows
    inserted or updated after the begin version up to the end version, and ids of rows
    deleted in between. As in pylance, the rows are read from the dataset ``delta`` was
    called on; the versions bound the ranges of ``_row_created_at_version`` and
    ``_row_last_updated_at_version``."""

    def __init__(self, ds: "LanceDataset", begin: int, end: int, columns: Optional[List[str]] = None) -> None:
        if begin > end:
            raise InvalidArgumentError(f"begin version {begin} is after end version {end}")
        self._ds = ds
        self._begin = begin
        self._end = end
        self._columns = columns
        self._result: Optional[Tuple[pa.Table, pa.Table, Optional[List[int]]]] = None

    def _compute(self) -> Tuple[pa.Table, pa.Table, Optional[List[int]]]:
        if self._result is None:
            inserted, updated, deleted = self._ds._native.changes(self._begin, self._end, self._columns)
            self._result = (ReaderResults(inserted).to_table(), ReaderResults(updated).to_table(), deleted)
        return self._result

    @staticmethod
    def _reader(table: pa.Table) -> pa.RecordBatchReader:
        return pa.RecordBatchReader.from_batches(table.schema, table.to_batches())

    def get_inserted_rows(self) -> pa.RecordBatchReader:
        """Rows created after the begin version and by the end version, with
        ``_rowid``, ``_row_created_at_version`` and ``_row_last_updated_at_version``."""
        return self._reader(self._compute()[0])

    def get_updated_rows(self) -> pa.RecordBatchReader:
        """Rows that existed at the begin version and were updated after it."""
        return self._reader(self._compute()[1])

    def get_deleted_row_ids(self) -> pa.RecordBatchReader:
        """The ``_rowid`` of rows live at the begin version and gone at the end version.
        Needs stable row ids."""
        deleted = self._compute()[2]
        if deleted is None:
            raise UnsupportedFeatureError(
                f"deleted row ids need stable row ids, which version {self._end} does not use"
            )
        return self._reader(pa.table({"_rowid": pa.array(deleted, pa.uint64())}))

    def list_transactions(self) -> List[Dict[str, Any]]:
        """The versions after the begin version up to the end version, as
        :meth:`LanceDataset.versions` describes them."""
        return [v for v in self._ds.versions() if self._begin < v["version"] <= self._end]


def delta_between(
    ds: "LanceDataset",
    compared_against: Optional[int],
    begin_version: Optional[int],
    end_version: Optional[int],
) -> DatasetDelta:
    """``ds.delta(...)`` (see there): the versions checked and ordered."""
    if compared_against is not None and (begin_version is not None or end_version is not None):
        raise ValueError("give either compared_against or begin_version and end_version, not both")
    if compared_against is not None:
        begin, end = _check_delta_version(compared_against, "compared_against"), ds.version
    elif begin_version is not None and end_version is not None:
        begin = _check_delta_version(begin_version, "begin_version")
        end = _check_int_version(end_version)
    else:
        raise ValueError("delta() needs compared_against, or both begin_version and end_version")
    if begin > end:
        begin, end = end, begin
    return DatasetDelta(ds, begin, end)


def change_feed(
    ds: "LanceDataset", begin_version: int, end_version: Optional[int], columns: Optional[List[str]]
) -> Dict[str, pa.Table]:
    """``ds.changes(...)`` (see there)."""
    if not ds.has_stable_row_ids:
        raise UnsupportedFeatureError(
            "changes() needs stable row ids: create the dataset with enable_stable_row_ids=True"
        )
    end = ds.version if end_version is None else _check_int_version(end_version)
    d = DatasetDelta(ds, _check_delta_version(begin_version, "begin_version"), end, columns)
    return {
        "inserted": d.get_inserted_rows().read_all(),
        "updated": d.get_updated_rows().read_all(),
        "deleted": d.get_deleted_row_ids().read_all(),
    }
