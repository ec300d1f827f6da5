"""What write calls accept, turned into what the native writer takes.

:func:`lancelet.write_dataset`, :func:`lancelet.fragment.write_fragments`, ``merge`` and
``add_columns`` take data in every form pylance does (a table, batches, a reader, pandas,
a dict of columns, row dicts, anything with ``__arrow_c_stream__``); :func:`_as_reader`
streams each as a ``pyarrow.RecordBatchReader`` without materializing it.
``progress=`` becomes a callback with :func:`_progress_callback`. For example,
``_as_reader({"a": [1, 2]}, None).read_all()`` is a one-column table.
"""

from __future__ import annotations

from collections import namedtuple
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Optional, cast

import pyarrow as pa
import pyarrow.dataset as pa_ds

from . import blob as _blob
from ._handle import DatasetHandle
from .errors import InvalidArgumentError
from .progress import FragmentWriteProgress, _FragmentReporter, optional_tqdm

if TYPE_CHECKING:  # pragma: no cover
    from .dataset import LanceDataset

#: What a ``progress`` callback of :func:`write_dataset` receives.
WriteProgress = namedtuple("WriteProgress", ["rows_written", "bytes_written", "files_written"])


def _as_reader(data: Any, schema: Optional[pa.Schema]) -> pa.RecordBatchReader:
    """Any supported input as a stream of batches (nothing is materialized)."""
    if schema is not None and not isinstance(schema, pa.Schema):
        raise TypeError(f"schema must be a pyarrow.Schema, got {type(schema).__name__}")
    if isinstance(data, DatasetHandle):
        data = cast("LanceDataset", data).to_batches()
    if isinstance(data, pa.RecordBatchReader):
        reader = data
    elif isinstance(data, pa.Table):
        reader = data.to_reader()
    elif isinstance(data, pa.RecordBatch):
        reader = pa.RecordBatchReader.from_batches(data.schema, [data])
    elif isinstance(data, pa_ds.Dataset):
        # A pyarrow dataset (Parquet files, ...), streamed as pylance takes it.
        reader = data.scanner().to_reader()
    elif isinstance(data, pa_ds.Scanner) or (hasattr(data, "to_reader") and hasattr(data, "projected_schema")):
        # A pyarrow scanner or a LanceScanner: its batches, streamed.
        reader = data.to_reader()
    elif _is_pandas(data):
        reader = pa.Table.from_pandas(data, schema=schema).to_reader()
    elif isinstance(data, dict):
        # Columns by name, as pylance takes them.
        reader = (pa.table(data) if schema is None else pa.Table.from_pydict(data, schema=schema)).to_reader()
    elif isinstance(data, (list, tuple)) and data and all(isinstance(row, dict) for row in data):
        # Rows as dicts, as pylance takes them.
        reader = pa.Table.from_pylist(list(data), schema=schema).to_reader()
    elif isinstance(data, (list, tuple)):
        batches = [b if isinstance(b, pa.RecordBatch) else _to_batch(b) for b in data]
        if schema is None and not batches:
            raise InvalidArgumentError("cannot write an empty list of batches without schema=")
        reader = pa.RecordBatchReader.from_batches(schema or batches[0].schema, batches)
    elif hasattr(data, "__arrow_c_stream__"):
        reader = pa.RecordBatchReader.from_stream(data)
    elif hasattr(data, "__arrow_c_array__"):
        reader = pa.RecordBatchReader.from_batches(*_one(pa.record_batch(data)))
    elif isinstance(data, (Iterator, Iterable)) and not isinstance(data, (str, bytes, dict)):
        it = iter(data)
        if schema is None:
            try:
                first = _to_batch(next(it))
            except StopIteration:
                raise InvalidArgumentError("cannot write an empty iterator without schema=") from None
            schema = first.schema
            it = _chain_first(first, it)
        reader = pa.RecordBatchReader.from_batches(schema, (_to_batch(b) for b in it))
    else:
        raise TypeError(
            f"cannot write {type(data).__name__}: pass a pyarrow Table, RecordBatch, RecordBatchReader, "
            "a list or iterator of RecordBatches, a dict of columns, a list of row dicts, a pandas DataFrame, "
            "a pyarrow dataset or scanner, a LanceScanner, or an object with __arrow_c_stream__"
        )
    if schema is not None and reader.schema != schema:
        reader = reader.cast(schema) if hasattr(reader, "cast") else reader
    # A scan's blob column (descriptors) written back would point at the wrong bytes.
    _blob.refuse_descriptors(reader.schema)
    return reader


def _one(batch: pa.RecordBatch):
    return batch.schema, [batch]


def _chain_first(first: pa.RecordBatch, rest: Iterator) -> Iterator:
    yield first
    yield from rest


def _to_batch(b: Any) -> pa.RecordBatch:
    if isinstance(b, pa.RecordBatch):
        return b
    if isinstance(b, pa.Table):
        return b.combine_chunks().to_batches()[0] if b.num_rows else pa.RecordBatch.from_pylist([], schema=b.schema)
    if hasattr(b, "__arrow_c_array__"):
        return pa.record_batch(b)
    raise TypeError(f"expected RecordBatches, got {type(b).__name__}")


def _is_pandas(data: Any) -> bool:
    mod = type(data).__module__
    return mod.startswith("pandas") and type(data).__name__ == "DataFrame"


def _progress_callback(progress: Any) -> Optional[Callable]:
    if progress is None or progress is False:
        return None
    if progress is True:
        tqdm = optional_tqdm("progress", "writing")
        if tqdm is None:
            return None
        bar = tqdm(unit=" rows", desc="writing")

        def update(rows: int, nbytes: int, files: int) -> None:
            bar.update(rows - bar.n)
            bar.set_postfix(files=files, MB=round(nbytes / 1e6, 1), refresh=False)

        update.close = bar.close  # type: ignore[attr-defined]
        return update
    if isinstance(progress, FragmentWriteProgress):
        return _FragmentReporter(progress)
    if callable(progress):
        return lambda rows, nbytes, files: progress(WriteProgress(rows, nbytes, files))
    raise InvalidArgumentError("progress must be True, False, None, a callable or a FragmentWriteProgress")
