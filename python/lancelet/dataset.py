"""Lance datasets (read-only for now), with the API of ``lance.dataset``.

Example::

    import lancelet
    ds = lancelet.dataset("/data/items.lance")          # latest version
    ds.count_rows(), ds.version, ds.versions()
    ds.to_table(columns=["id", "caption"])
    lancelet.dataset("/data/items.lance", version=1).to_table()   # time travel

Datasets written by pylance with ``data_storage_version="2.0"`` are read, including their
deletions (rows removed by ``delete``). Writing, filters and newer file versions come next.
"""

from __future__ import annotations

import datetime as _dt
from typing import Any, Dict, List, Optional

import pyarrow as pa

from . import _native
from .errors import InvalidArgumentError, UnsupportedFeatureError
from .file import ReaderResults

__all__ = ["dataset", "LanceDataset"]


def _local(uri: Any, storage_options: Optional[Dict[str, str]]) -> str:
    uri = str(uri)
    if "://" in uri and not uri.startswith("file://"):
        raise UnsupportedFeatureError(f"only local datasets are supported for now, got {uri!r}")
    if storage_options:
        raise InvalidArgumentError(f"storage_options are not used for local datasets: {sorted(storage_options)}")
    return uri


def dataset(
    uri: str,
    version: Optional[int] = None,
    asof: Any = None,
    storage_options: Optional[Dict[str, str]] = None,
) -> "LanceDataset":
    """Opens the dataset at ``uri`` at ``version`` (the latest when None)."""
    if asof is not None:
        raise UnsupportedFeatureError("asof= is not supported yet; pass version=")
    return LanceDataset(uri, version=version, storage_options=storage_options)


class LanceDataset:
    """One version of a Lance dataset."""

    def __init__(self, uri: str, version: Optional[int] = None, storage_options: Optional[Dict[str, str]] = None):
        if version is not None and (isinstance(version, bool) or not isinstance(version, int) or version < 1):
            raise InvalidArgumentError(f"version must be a positive integer, got {version!r}")
        self.uri = str(uri)
        self._path = _local(uri, storage_options)
        self._ds = _native.Dataset.open(self._path, version)

    @property
    def version(self) -> int:
        """The version this object reads."""
        return self._ds.version()

    @property
    def latest_version(self) -> int:
        """The newest version of the dataset."""
        return self.versions()[-1]["version"]

    @property
    def schema(self) -> pa.Schema:
        """The table schema."""
        return pa.schema(self._ds)

    def versions(self) -> List[Dict[str, Any]]:
        """Every version, oldest first: ``{"version", "timestamp", "metadata"}``."""
        out = []
        for v, secs, nanos in _native.Dataset.versions(self._path):
            ts = _dt.datetime.fromtimestamp(secs + nanos / 1e9)
            out.append({"version": v, "timestamp": ts, "metadata": {}})
        return out

    def checkout_version(self, version: int) -> "LanceDataset":
        """The same dataset at another version."""
        return LanceDataset(self.uri, version=version)

    def count_rows(self, filter: Optional[str] = None) -> int:
        """Number of rows (deleted rows excluded)."""
        if filter is not None:
            raise UnsupportedFeatureError("filters are not supported yet")
        return self._ds.count_rows()

    def to_batches(self, columns: Optional[List[str]] = None) -> pa.RecordBatchReader:
        """The rows as a ``pyarrow.RecordBatchReader`` (one batch per fragment)."""
        return ReaderResults(self._ds.scan(_columns(columns))).to_batches()

    def to_table(self, columns: Optional[List[str]] = None) -> pa.Table:
        """The rows as a ``pyarrow.Table``."""
        return ReaderResults(self._ds.scan(_columns(columns))).to_table()

    def __arrow_c_stream__(self, requested_schema: Any = None) -> Any:
        return self._ds.scan(None).__arrow_c_stream__(requested_schema)

    def __repr__(self) -> str:
        return f"LanceDataset(uri={self.uri!r}, version={self.version})"


def _columns(columns: Optional[List[str]]) -> Optional[List[str]]:
    if columns is None:
        return None
    if isinstance(columns, str) or not all(isinstance(c, str) for c in columns):
        raise InvalidArgumentError("columns must be a list of column names")
    return list(columns)
