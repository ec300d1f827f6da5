"""Scanners whose result is one ranked batch (nearest neighbours, full-text and hybrid
search): the reading methods of :class:`lancelet.LanceScanner` over that batch."""

from __future__ import annotations

from typing import Any, Iterator

import pyarrow as pa


class RankedScanner:
    """A search whose rows come back best first; subclasses give :meth:`to_table`."""

    def to_table(self) -> pa.Table:  # pragma: no cover (every subclass overrides it)
        """The result as a ``pyarrow.Table``."""
        raise NotImplementedError

    def to_reader(self) -> pa.RecordBatchReader:
        """The result as a ``pyarrow.RecordBatchReader``."""
        t = self.to_table()
        return pa.RecordBatchReader.from_batches(t.schema, t.to_batches())

    def to_batches(self) -> Iterator[pa.RecordBatch]:
        """The result as record batches."""
        return iter(self.to_table().to_batches())

    def count_rows(self) -> int:
        """How many rows the search returns."""
        return self.to_table().num_rows

    def __arrow_c_stream__(self, requested_schema: Any = None) -> Any:
        return self.to_reader().__arrow_c_stream__(requested_schema)
