"""Adding columns with Python functions: :func:`batch_udf` and the per-fragment backfill
behind :meth:`lancelet.LanceDataset.add_columns`.

A UDF maps a ``pyarrow.RecordBatch`` of existing columns to a batch (or pandas DataFrame)
of new columns with the same number of rows. It runs fragment by fragment; each fragment's
new columns go into one new data file, and one commit at the end adds them all. With a
``checkpoint_file``, every finished fragment is recorded there, so a backfill that fails
half-way resumes where it stopped instead of starting again.
"""

from __future__ import annotations

import os
from typing import Any, Callable, Dict, List, Optional

import pyarrow as pa

from ._native import dataset as _native_dataset
from .errors import InvalidArgumentError, LanceIOError

__all__ = ["BatchUDF", "batch_udf"]


class BatchUDF:
    """A function from a batch of existing columns to a batch of new ones, with an optional
    declared ``output_schema`` and ``checkpoint_file`` (see :func:`batch_udf`)."""

    def __init__(
        self,
        func: Callable[[pa.RecordBatch], Any],
        output_schema: Optional[pa.Schema] = None,
        checkpoint_file: Optional[str] = None,
    ):
        if not callable(func):
            raise InvalidArgumentError(f"a UDF must be callable, got {type(func).__name__}")
        if output_schema is not None and not isinstance(output_schema, pa.Schema):
            raise InvalidArgumentError("output_schema must be a pyarrow.Schema")
        self.func = func
        self.output_schema = output_schema
        self.checkpoint_file = None if checkpoint_file is None else os.fspath(checkpoint_file)

    def __call__(self, batch: pa.RecordBatch) -> pa.RecordBatch:
        out = self.func(batch)
        if type(out).__module__.startswith("pandas"):
            out = pa.RecordBatch.from_pandas(out, preserve_index=False)
        elif isinstance(out, pa.Table):
            out = out.combine_chunks().to_batches()[0] if out.num_rows else pa.RecordBatch.from_pylist([], out.schema)
        if not isinstance(out, pa.RecordBatch):
            raise InvalidArgumentError(
                f"the UDF returned {type(out).__name__}; it must return a pyarrow.RecordBatch or a pandas DataFrame"
            )
        if out.num_rows != batch.num_rows:
            raise InvalidArgumentError(f"the UDF returned {out.num_rows} rows for a batch of {batch.num_rows}")
        if self.output_schema is not None:
            if out.schema.names != self.output_schema.names:
                raise InvalidArgumentError(
                    "Output schema of function does not match the expected schema: the UDF returned columns "
                    f"{out.schema.names}, not the declared {self.output_schema.names}"
                )
            out = out.cast(self.output_schema)
        return out


def batch_udf(output_schema: Optional[pa.Schema] = None, checkpoint_file: Optional[str] = None):
    """Decorates a function ``RecordBatch -> RecordBatch | pandas.DataFrame`` for
    ``add_columns``. ``output_schema`` fixes the new columns' types; ``checkpoint_file`` (a
    local path) makes a failed backfill resumable."""

    def wrap(func: Callable) -> BatchUDF:
        return BatchUDF(func, output_schema, checkpoint_file)

    return wrap


def _callback(udf: BatchUDF) -> Callable[[Any], pa.RecordBatch]:
    """``udf`` as the native backfill calls it: with a one-batch stream."""

    def call(stream: Any) -> pa.RecordBatch:
        return udf(pa.RecordBatchReader.from_stream(stream).read_next_batch())

    return call


def udf_schema(native: Any, udf: BatchUDF, read_columns: Optional[List[str]]) -> Optional[pa.Schema]:
    """The new columns' schema: declared, or from running ``udf`` on a first small batch."""
    if udf.output_schema is not None:
        return udf.output_schema
    found = _native_dataset.backfill_schema(native, _callback(udf), read_columns)
    return None if found is None else pa.schema(found)


def fragment_file(
    native: Any,
    fragment_id: int,
    udf: BatchUDF,
    read_columns: Optional[List[str]],
    batch_size: Optional[int],
    schema: pa.Schema,
    file_tag: Optional[str] = None,
) -> Dict[str, Any]:
    """Runs ``udf`` over one fragment (deleted rows included) and writes its new columns as
    one data file, not committed; returns it as fragment metadata (a dict)."""
    return _native_dataset.backfill_fragment(
        native,
        fragment_id,
        _callback(udf),
        schema,
        {"read_columns": read_columns, "batch_size": batch_size, "file_tag": file_tag},
    )


def commit_files(native: Any, schema: pa.Schema, files: List[Dict[str, Any]]) -> Any:
    """Commits new column files (one per fragment); on a failure that surely committed
    nothing, removes them. Returns the new native dataset."""
    try:
        return native.commit_new_columns(schema, files)
    except LanceIOError:
        # The commit may have landed with its answer lost: its files must stay.
        raise
    except BaseException:
        native.remove_data_files([f["path"] for frag in files for f in frag["files"]])
        raise


def backfill(ds: Any, udf: BatchUDF, read_columns: Optional[List[str]], batch_size: Optional[int]) -> Any:
    """Runs ``udf`` over every fragment of ``ds`` and commits the new columns; returns the
    new native dataset. The fragments, batches, writes, checkpoint and cleanup are driven
    natively; ``udf`` is called back with each batch. Without a checkpoint file a failure
    removes every file written; with one, finished fragments stay recorded for a resumed
    run on the same version."""
    return _native_dataset.backfill(
        ds._native,
        _callback(udf),
        {
            "read_columns": read_columns,
            "batch_size": batch_size,
            "output_schema": udf.output_schema,
            "checkpoint_file": udf.checkpoint_file,
            "checkpoint_key": ds.uri,
        },
    )
