"""Adding columns with Python functions: :func:`batch_udf` and the per-fragment backfill
behind :meth:`lancelet.LanceDataset.add_columns`.

A UDF maps a ``pyarrow.RecordBatch`` of existing columns to a batch (or pandas DataFrame)
of new columns with the same number of rows. It runs fragment by fragment; each fragment's
new columns go into one new data file, and one commit at the end adds them all. With a
``checkpoint_file``, every finished fragment is recorded there, so a backfill that fails
half-way resumes where it stopped instead of starting again.
"""

from __future__ import annotations

import json
import os
from typing import Any, Callable, Dict, Iterator, List, Optional

import pyarrow as pa

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
                    f"the UDF returned columns {out.schema.names}, not the declared {self.output_schema.names}"
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


class _Checkpoint:
    """Finished fragments of one backfill, kept in a JSON file keyed by dataset and version."""

    def __init__(self, path: Optional[str], uri: str, version: int):
        self.path, self.key = path, {"uri": uri, "version": version}
        self.done: Dict[int, Any] = {}
        self.schema: Optional[pa.Schema] = None
        if path and os.path.exists(path):
            with open(path) as f:
                saved = json.load(f)
            if saved.get("key") == self.key:
                self.done = {int(k): v for k, v in saved["done"].items()}
                if saved.get("schema"):
                    self.schema = pa.ipc.read_schema(pa.py_buffer(bytes.fromhex(saved["schema"])))

    def record(self, fragment_id: int, file: Any, schema: pa.Schema) -> None:
        self.done[fragment_id] = file
        self.schema = schema
        if not self.path:
            return
        body = {
            "key": self.key,
            "schema": schema.serialize().to_pybytes().hex(),
            "done": {str(k): v for k, v in self.done.items()},
        }
        tmp = f"{self.path}.tmp"
        with open(tmp, "w") as f:
            json.dump(body, f)
        os.replace(tmp, self.path)

    def clear(self) -> None:
        if self.path and os.path.exists(self.path):
            os.remove(self.path)


def _outputs(udf: BatchUDF, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    for batch in batches:
        yield udf(batch)


def udf_schema(native: Any, udf: BatchUDF, read_columns: Optional[List[str]]) -> Optional[pa.Schema]:
    """The new columns' schema: declared, or from running ``udf`` on a first small batch."""
    if udf.output_schema is not None:
        return udf.output_schema
    for frag in native.fragments():
        stream = native.scan(columns=read_columns, fragments=[frag["id"]], include_deleted=True, limit=16)
        for batch in pa.RecordBatchReader.from_stream(stream):
            return udf(batch).schema
    return None


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
    stream = native.scan(columns=read_columns, fragments=[fragment_id], include_deleted=True, batch_size=batch_size)
    outputs = _outputs(udf, iter(pa.RecordBatchReader.from_stream(stream)))
    failure: List[BaseException] = []
    reader = pa.RecordBatchReader.from_batches(schema, _guarded(outputs, schema, failure))
    try:
        return native.write_column_file(fragment_id, reader, file_tag=file_tag)
    except Exception:
        if failure:  # the UDF's own error, not the stream error wrapping it
            raise failure[0] from None
        raise


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
    new native dataset."""
    native = ds._native
    ckpt = _Checkpoint(udf.checkpoint_file, ds.uri, ds.version)
    schema = ckpt.schema or udf_schema(native, udf, read_columns)
    if schema is None:
        raise InvalidArgumentError(
            "the dataset has no rows to run the UDF on; give it an output_schema "
            "or add all-null columns with pyarrow fields"
        )
    written: List[str] = []
    files = []
    try:
        for frag in native.fragments():
            fid = frag["id"]
            if fid in ckpt.done:
                files.append(ckpt.done[fid])
                continue
            file = fragment_file(native, fid, udf, read_columns, batch_size, schema)
            written.extend(f["path"] for f in file["files"])
            ckpt.record(fid, file, schema)
            files.append(file)
    except BaseException:
        if not udf.checkpoint_file:
            native.remove_data_files(written)
        raise
    try:
        new = commit_files(native, schema, files)
    except LanceIOError:
        raise
    except BaseException:
        ckpt.clear()
        raise
    ckpt.clear()
    return new


def _guarded(
    outputs: Iterator[pa.RecordBatch], schema: pa.Schema, failure: List[BaseException]
) -> Iterator[pa.RecordBatch]:
    try:
        for b in outputs:
            yield _conform(b, schema)
    except BaseException as e:
        failure.append(e)
        raise


def _conform(batch: pa.RecordBatch, schema: pa.Schema) -> pa.RecordBatch:
    if batch.schema.equals(schema):
        return batch
    if batch.schema.names != schema.names:
        raise InvalidArgumentError(f"the UDF returned columns {batch.schema.names}, earlier {schema.names}")
    return batch.cast(schema)
