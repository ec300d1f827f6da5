"""The ``pyarrow.dataset.Dataset`` base of :class:`lancelet.LanceDataset`.

Tools that accept Arrow datasets recognise them with ``isinstance(obj,
pyarrow.dataset.Dataset)`` and then push work into them. DuckDB, for one, reads a dataset
named in a query (``duckdb.sql("select id from ds where id < 10")``) by calling
``type(ds).scanner(ds, columns=[...], filter=<pyarrow Expression>)`` and then
``.to_reader()`` on the result, so only the selected columns and the matching rows leave
lancelet; objects that only export ``__arrow_c_stream__`` are read whole and filtered by
DuckDB. pylance's ``LanceDataset`` subclasses ``pyarrow.dataset.Dataset`` for this reason, and
so does lancelet's.

``pyarrow.dataset.Dataset`` is a Cython class that wraps a C++ dataset; lancelet's datasets
never set that wrapped pointer, so every inherited method that would reach it is overridden
here (the subclass overrides the rest), failing cleanly instead of crashing.
"""

from __future__ import annotations

from typing import Any

import pyarrow.dataset as _pds

from .errors import UnsupportedFeatureError

__all__ = ["ArrowDatasetBase"]


def _unsupported(what: str) -> UnsupportedFeatureError:
    return UnsupportedFeatureError(f"{what} is not supported on Lance datasets")


class ArrowDatasetBase(_pds.Dataset):
    """Makes lancelet datasets ``pyarrow.dataset.Dataset`` instances (see the module docs)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:  # pragma: no cover - subclasses define it
        raise TypeError("ArrowDatasetBase is only a base class")

    @property
    def partition_expression(self) -> Any:
        """Lance datasets are not partitioned: unsupported."""
        raise _unsupported("partition_expression")

    def replace_schema(self, schema: Any) -> Any:
        """Unsupported (use ``alter_columns`` or the metadata methods)."""
        raise _unsupported("replace_schema")

    def filter(self, expression: Any) -> Any:
        """Unsupported (pass ``filter=`` to ``scanner``/``to_table``)."""
        raise _unsupported("Dataset.filter")

    def sort_by(self, sorting: Any, **kwargs: Any) -> Any:
        """Unsupported (pass ``order_by=`` to ``scanner``/``to_table``)."""
        raise _unsupported("Dataset.sort_by")

    def join(self, *args: Any, **kwargs: Any) -> Any:
        """Unsupported."""
        raise _unsupported("Dataset.join")

    def join_asof(self, *args: Any, **kwargs: Any) -> Any:
        """Unsupported."""
        raise _unsupported("Dataset.join_asof")

    def _get_fragments(self, filter: Any = None) -> Any:
        raise _unsupported("pyarrow fragments")

    def _scanner_options(self, *args: Any, **kwargs: Any) -> Any:
        raise _unsupported("pyarrow scanner options")

    def _scan_options(self, *args: Any, **kwargs: Any) -> Any:
        raise _unsupported("pyarrow scan options")
