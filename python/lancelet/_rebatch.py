"""``scanner(batch_size=N, strict_batch_size=True)``: batches of exactly ``N`` rows, the last
one excepted, as pylance gives them (without it, a batch never spans two fragments and may
be shorter).

>>> [b.num_rows for b in ds.to_batches(batch_size=3, strict_batch_size=True)]  # doctest: +SKIP
[3, 3, 3, 1]
"""

from __future__ import annotations

from typing import Iterator, List

import pyarrow as pa


def _join(parts: List[pa.RecordBatch], schema: pa.Schema) -> pa.RecordBatch:
    if len(parts) == 1:
        return parts[0]
    return pa.Table.from_batches(parts, schema).combine_chunks().to_batches()[0]


def exact(reader: pa.RecordBatchReader, n: int) -> pa.RecordBatchReader:
    """``reader``'s rows in batches of exactly ``n`` rows (the last may be shorter); rows
    are sliced and joined, never reordered."""
    schema = reader.schema

    def batches() -> Iterator[pa.RecordBatch]:
        parts: List[pa.RecordBatch] = []
        held = 0
        for b in reader:
            while b.num_rows:
                take = min(n - held, b.num_rows)
                parts.append(b.slice(0, take))
                held += take
                b = b.slice(take)
                if held == n:
                    yield _join(parts, schema)
                    parts, held = [], 0
        if held:
            yield _join(parts, schema)

    return pa.RecordBatchReader.from_batches(schema, batches())
