"""Read and write lancelet datasets from PySpark (4.1+), and helpers for Arrow UDF jobs.

::

    import lancelet.spark
    lancelet.spark.register(spark)      # the "lancelet" source
    df = spark.read.format("lancelet").load("/data/items.lance")
    df = spark.read.format("lancelet").option("version", 3).load(uri)       # or a tag name
    df = spark.read.format("lancelet").option("filter", "price > 5").load(uri)  # pruned in the scan
    df.write.format("lancelet").mode("append").save(uri)                   # creates if absent
    df.write.format("lancelet").mode("overwrite").save(uri)

**Reads** pin one version when the DataFrame is loaded: every action on it reads that
version. Partitions are row ranges of fragments: large fragments are split, small ones
grouped, aiming at ``rows_per_partition`` rows (by default about 128 MiB of stored data);
``max_partitions`` caps their number. Each task opens the dataset at the pinned version
and yields Arrow batches from the native scanner, cast once to the exact Arrow types Spark
expects (Spark has no unsigned, large or fixed-size types). Spark evaluates its own
filters (``where``) on the rows the scan returns: Spark 4.3 would apply filters pushed
into a Python source to later scans that did not ask for them (see
:class:`LanceletReader`). The ``filter`` option (a lancelet SQL predicate) is evaluated
inside the scan, so rows that do not match are never materialized.

Read options: ``version`` (number or tag), ``filter`` (lancelet SQL), ``columns``
(comma-separated; Spark 4 cannot prune Python sources yet), ``with_row_id`` (adds
``_rowid``), ``rows_per_partition``, ``max_partitions``, ``batch_size``,
``min_partitions`` (default: the session's default parallelism; small datasets are split
so that every core reads), ``scan_stats_dir`` (each task writes its scan statistics there as JSON, for debugging
and tests).

**Writes** stream each task's batches into new data files; the driver commits them all in
one transaction (Append, or Overwrite for ``mode("overwrite")``) with the dataset layer's
conflict retry. Files carry a per-job tag in their names, so a job that fails or is
aborted leaves no new version and its files are removed, as are the files of failed,
retried or speculative task attempts once the job commits.

Datasets on object stores take their ``storage_options`` as options prefixed with
``storage.`` (``.option("storage.aws_endpoint", "http://...")``), for reads and writes.

Tables of a namespace are addressed by name: ``.option("namespace_root", root)`` (a
directory namespace, or ``namespace_uri`` for a REST server) and ``.load("sales$orders")``
/ ``.save("sales$orders")`` (a save declares a table the namespace does not know yet).

Write options: ``max_rows_per_file``, ``max_bytes_per_file``, ``commit_message``,
``fixed_size_lists`` (``"emb:768,thumb:32"``: write these array columns as fixed-size
lists; columns read from lancelet keep their size through the field metadata key
``lancelet.fixed_size_list``).

**Arrow UDF helpers** for custom jobs: :func:`take` (rows by ``_rowid`` on executors),
:func:`fragment_writer` + :func:`commit_fragments` (write with ``mapInArrow``, commit on
the driver).
"""

from __future__ import annotations

import json
import os
import uuid
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Tuple, cast

import pyarrow as pa

from . import _paths, _spark_namespace
from . import blob as _blob
from ._argcheck import _native_uri, _storage_options
from ._native import dataset as _native_dataset
from ._native import index as _native_index
from ._operations import index_from_dict
from .dataset import LanceDataset, LanceOperation, dataset
from .errors import InvalidArgumentError, LanceIOError, LanceNotFoundError, SchemaMismatchError, UnsupportedFeatureError
from .evolve import BatchUDF, commit_files, fragment_file, udf_schema
from .fragment import FragmentMetadata, write_fragments
from .query import params_json

try:
    from pyspark.sql import types as T
    from pyspark.sql.datasource import (
        DataSource,
        DataSourceArrowWriter,
        DataSourceReader,
        InputPartition,
        WriterCommitMessage,
    )
    from pyspark.sql.pandas.types import to_arrow_schema, to_arrow_type
except ImportError as e:  # pragma: no cover - exercised only without pyspark
    raise ImportError("lancelet.spark needs pyspark>=4.1 (pip install 'pyspark>=4.1')") from e

__all__ = [
    "register",
    "read",
    "activate",
    "LanceletDataSource",
    "take",
    "take_rows",
    "fragment_writer",
    "commit_fragments",
    "FIXED_SIZE_KEY",
]

#: Name of the data source (``lance`` is taken by the JVM connector).
SOURCE_NAME = "lancelet"
#: Field metadata key recording an array column's fixed size.
FIXED_SIZE_KEY = "lancelet.fixed_size_list"
DEFAULT_BATCH_SIZE = 32768
_SPECIAL_COLUMNS = ("_rowid",)


def register(spark: Any) -> None:
    """Registers the ``lancelet`` source with ``spark`` and makes ``spark`` the calling
    thread's active session. The source does not take Spark's filters (see
    :class:`LanceletReader`), so ``spark.sql.python.filterPushdown.enabled`` is left as is.

    Reads plan at least as many partitions as the session's default parallelism (Spark
    plans Python sources in a worker process that cannot ask the session, so the number is
    taken here and travels with the registered source)."""
    # A class made here is pickled by value, with the parallelism it carries.
    source = type(
        "_RegisteredLanceletSource",
        (LanceletDataSource,),
        {"default_parallelism": _default_parallelism(spark), "__module__": __name__},
    )
    spark.dataSource.register(source)
    activate(spark)


def _default_parallelism(spark: Any) -> Optional[int]:
    """``spark.sparkContext.defaultParallelism`` (``spark.default.parallelism`` on Spark
    Connect, which has no context), or None."""
    try:
        return int(spark.sparkContext.defaultParallelism)
    except Exception:  # noqa: BLE001 - Spark Connect sessions have no sparkContext
        try:
            return int(spark.conf.get("spark.default.parallelism"))
        except Exception:  # noqa: BLE001
            return None


def activate(spark: Any) -> None:
    """Makes ``spark`` the active session of the calling thread. Spark looks Python data
    sources up in the thread's active session, and a new Python thread has none (reads
    and writes there fail with DATA_SOURCE_NOT_FOUND): call this first in each thread."""
    spark._jvm.org.apache.spark.sql.SparkSession.setActiveSession(spark._jsparkSession)


# -- types ---------------------------------------------------------------------------


def _spark_type(t: pa.DataType, where: str) -> Tuple[Any, Dict[str, Any]]:
    """The Spark type for an Arrow type, and field metadata to keep what Spark cannot say."""
    if pa.types.is_dictionary(t):
        return _spark_type(t.value_type, where)
    simple = [
        (pa.types.is_boolean, T.BooleanType),
        (pa.types.is_int8, T.ByteType),
        (pa.types.is_int16, T.ShortType),
        (pa.types.is_int32, T.IntegerType),
        (pa.types.is_int64, T.LongType),
        (pa.types.is_uint8, T.ShortType),
        (pa.types.is_uint16, T.IntegerType),
        (pa.types.is_uint32, T.LongType),
        (pa.types.is_float16, T.FloatType),
        (pa.types.is_float32, T.FloatType),
        (pa.types.is_float64, T.DoubleType),
        (pa.types.is_date, T.DateType),
        (pa.types.is_null, T.NullType),
    ]
    for test, make in simple:
        if test(t):
            return make(), {}
    if pa.types.is_uint64(t):
        return T.DecimalType(20, 0), {}
    if pa.types.is_string(t) or pa.types.is_large_string(t) or getattr(pa.types, "is_string_view", lambda _: False)(t):
        return T.StringType(), {}
    if pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t):
        return T.BinaryType(), {}
    if pa.types.is_decimal(t) and t.precision <= 38:
        return T.DecimalType(t.precision, t.scale), {}
    if pa.types.is_timestamp(t):
        return (T.TimestampType() if t.tz else T.TimestampNTZType()), {}
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        inner, _ = _spark_type(t.value_type, where + "[]")
        meta = {FIXED_SIZE_KEY: t.list_size} if pa.types.is_fixed_size_list(t) else {}
        return T.ArrayType(inner, t.value_field.nullable), meta
    if pa.types.is_struct(t):
        return T.StructType([_spark_field(t.field(i), f"{where}.") for i in range(t.num_fields)]), {}
    if pa.types.is_map(t):
        k, _ = _spark_type(t.key_type, where + ".key")
        v, _ = _spark_type(t.item_type, where + ".value")
        return T.MapType(k, v, t.item_field.nullable), {}
    raise UnsupportedFeatureError(
        f"column {where!r} has type {t}, which Spark cannot represent; leave it out with option('columns', ...)"
    )


def _spark_field(f: pa.Field, prefix: str = "") -> Any:
    dt, meta = _spark_type(f.type, prefix + f.name)
    return T.StructField(f.name, dt, f.nullable, meta or None)


def spark_schema(schema: pa.Schema) -> Any:
    """The Spark schema a lancelet read declares for an Arrow schema."""
    return T.StructType([_spark_field(f) for f in schema])


def _expected_arrow(spark: Any) -> pa.Schema:
    """The Arrow schema Spark checks read batches against."""
    return to_arrow_schema(spark, timezone="UTC")


def _arrow_from_spark(dt: Any, meta: Dict[str, Any], name: str, sizes: Dict[str, int]) -> pa.DataType:
    """The Arrow type a new dataset stores for a Spark type (strings stay ``string``;
    arrays become fixed-size lists when metadata or ``fixed_size_lists`` say so)."""
    if isinstance(dt, T.ArrayType):
        inner = pa.field("item", _arrow_from_spark(dt.elementType, {}, name + "[]", sizes), dt.containsNull)
        size = sizes.get(name, meta.get(FIXED_SIZE_KEY))
        return pa.list_(inner, int(size)) if size is not None else pa.list_(inner)
    if isinstance(dt, T.StructType):
        return pa.struct(
            [
                pa.field(f.name, _arrow_from_spark(f.dataType, f.metadata or {}, f"{name}.{f.name}", sizes), f.nullable)
                for f in dt.fields
            ]
        )
    if isinstance(dt, T.MapType):
        return pa.map_(
            _arrow_from_spark(dt.keyType, {}, name + ".key", sizes),
            pa.field("value", _arrow_from_spark(dt.valueType, {}, name + ".value", sizes), dt.valueContainsNull),
        )
    return to_arrow_type(dt, timezone="UTC")


def _parse_sizes(text: Optional[str]) -> Dict[str, int]:
    out: Dict[str, int] = {}
    for part in (text or "").split(","):
        if not part.strip():
            continue
        name, _, size = part.rpartition(":")
        try:
            n = int(size)
        except ValueError:
            n = 0
        if not name.strip() or n <= 0:
            raise InvalidArgumentError(f"fixed_size_lists expects 'column:size,...', got {text!r}")
        out[name.strip()] = n
    return out


def _cast_batch(batch: pa.RecordBatch, schema: pa.Schema) -> pa.RecordBatch:
    """``batch`` with exactly ``schema`` (columns matched by name), refusing nulls in
    non-nullable fields."""
    if batch.schema.equals(schema):
        return batch
    arrays = []
    for f in schema:
        col = batch.column(f.name)
        if not f.nullable and col.null_count:
            raise SchemaMismatchError(f"column {f.name!r} is not nullable but the data has {col.null_count} nulls")
        if not col.type.equals(f.type):
            try:
                col = col.cast(f.type)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as e:
                raise SchemaMismatchError(f"column {f.name!r}: cannot convert {col.type} to {f.type}: {e}") from None
        arrays.append(col)
    return pa.RecordBatch.from_arrays(arrays, schema=schema)


# -- reads ---------------------------------------------------------------------------


def _storage(options: Any) -> Dict[str, str]:
    """Storage options given to the source as ``storage.<key>`` options."""
    return {k[len("storage.") :]: v for k, v in options.items() if k.lower().startswith("storage.")}


def _open(uri: str, version: Optional[Any], storage: Optional[Dict[str, str]] = None) -> LanceDataset:
    """A dataset version opened once per worker process (workers run many tasks)."""
    if version is None:
        return dataset(uri, storage_options=storage or None)
    return _open_cached(uri, version, tuple(sorted((storage or {}).items())))


@lru_cache(maxsize=16)
def _open_cached(uri: str, version: Any, storage: Tuple[Tuple[str, str], ...]) -> LanceDataset:
    return dataset(uri, version=version, storage_options=dict(storage) or None)


class LanceletPartition(InputPartition):
    """Physical row ranges ``(fragment id, start, end)`` read by one Spark task."""

    def __init__(self, index: int, pieces: List[Tuple[int, int, int]]):
        super().__init__(index)
        self.index = index
        self.pieces = pieces

    def __repr__(self) -> str:
        return f"LanceletPartition({self.index}, {self.pieces})"


def _positive(options: Any, name: str) -> Optional[int]:
    v = options.get(name)
    if v is None:
        return None
    try:
        n = int(v)
    except (TypeError, ValueError):
        n = 0
    if n <= 0:
        raise InvalidArgumentError(f"option {name!r} must be a positive integer, got {v!r}")
    return n


def plan_partitions(
    fragments: List[Dict[str, Any]],
    rows_per_partition: Optional[int] = None,
    max_partitions: Optional[int] = None,
    min_partitions: Optional[int] = None,
) -> List[List[Tuple[int, int, int]]]:
    """Splits fragments (dicts with ``id``, ``physical_rows``, ``files``) into partitions of
    ``(fragment id, start, end)`` row ranges: about ``rows_per_partition`` stored rows each
    (by default about 128 MiB of stored data, as Spark's file sources aim at), at least
    ``min_partitions`` when the data is small, at most ``max_partitions``. The dataset crate
    plans them (``scan::partitions``); this shapes the fragments for it."""
    sizes = [
        (int(f["id"]), int(f["physical_rows"]), sum(int(d.get("file_size_bytes") or 0) for d in f["files"]))
        for f in fragments
    ]
    return _native_dataset.plan_partitions(sizes, rows_per_partition, max_partitions, min_partitions)


class LanceletReader(DataSourceReader):
    """Reads one pinned version; see the module docs."""

    # Why this reader takes no filters from Spark (no ``pushFilters``): Spark 4.3 plans a
    # Python source's read once -- the pickled reader with its read function, and its
    # partitions -- and keeps that plan on the provider object ``load()`` created, which all
    # DataFrames derived from that load share. Filter pushdown replaces the kept plan with
    # the reader ``pushFilters`` was called on, and later scans reuse whatever is kept: an
    # action with no filter Spark can hand to Python (``df.count()``, ``df.write``, an OR of
    # computed conditions) runs no Python planning at all, and both sides of
    # ``df.where(a).union(df.where(b))`` read with the last reader pushed. Filters kept by
    # the reader thus dropped rows from plans that never asked for them (``df.count()`` after
    # ``df.where(...).count()`` counted the filtered rows; overwriting the source lost rows).
    # No per-plan state can fix this: nothing of the current plan reaches ``partitions()`` or
    # ``read()`` (partitions are kept together with the reader), and reporting the filters
    # back to Spark as not pushed does not help either, since Spark re-applies them to the
    # rows a scan returns but cannot restore rows a stale filter removed. So the rows read
    # depend only on what the DataFrame was loaded with -- its options and the version
    # ``load()`` pinned -- and a kept plan reads exactly what a fresh one would. Pruning in
    # the scan remains, correctly, as ``option("filter", ...)``: it is part of the
    # DataFrame's definition, so every scan of that DataFrame applies it.

    def __init__(
        self, uri: str, version: int, schema: Any, options: Dict[str, str], default_parallelism: Optional[int] = None
    ):
        self.uri = uri
        self.version = version
        self.options = options
        self.storage = _storage(options)
        ds = _open(uri, version, self.storage)
        self.dataset_schema = ds.schema
        names = [f.name for f in schema.fields]
        self.with_row_id = "_rowid" in names
        self.columns = [n for n in names if n not in _SPECIAL_COLUMNS]
        missing = [n for n in self.columns if self.dataset_schema.get_field_index(n) < 0]
        if missing:
            raise SchemaMismatchError(f"columns {missing} are not in {uri} (version {version})")
        self.arrow_schema = _expected_arrow(schema)
        raw_filter = options.get("filter")
        if raw_filter is not None and not raw_filter.strip():
            # As everywhere else: a blank filter is a mistake, not "every row".
            raise InvalidArgumentError("option 'filter' is empty; leave it out to read every row")
        self.filter: Optional[str] = raw_filter.strip() if raw_filter is not None else None
        if self.filter is not None:
            try:
                ds._native.scan({"columns": [], "filter": self.filter, "limit": 0, "row_ranges": []})
            except Exception as e:  # noqa: BLE001 - report any refusal as a bad option
                raise InvalidArgumentError(f"option 'filter' ({self.filter!r}) is not a lancelet filter: {e}") from e
        self.batch_size = _positive(options, "batch_size") or DEFAULT_BATCH_SIZE
        self.rows_per_partition = _positive(options, "rows_per_partition")
        self.max_partitions = _positive(options, "max_partitions")
        self.min_partitions = _positive(options, "min_partitions") or default_parallelism
        self.stats_dir = options.get("scan_stats_dir")

    def partitions(self) -> List[LanceletPartition]:
        frags = _open(self.uri, self.version, self.storage)._native.fragments()
        min_parts = None if self.rows_per_partition else self.min_partitions
        parts = plan_partitions(frags, self.rows_per_partition, self.max_partitions, min_parts)
        return [LanceletPartition(i, p) for i, p in enumerate(parts)]

    # Spark hands back the partitions planned above, so the narrower type is safe.
    def read(self, partition: LanceletPartition) -> Iterator[pa.RecordBatch]:  # type: ignore[override]
        ds = _open(self.uri, self.version, self.storage)
        stats = _native_dataset.ScanStats()
        stream = ds._native.scan(
            {
                "columns": self.columns,
                "filter": self.filter,
                "batch_size": self.batch_size,
                "with_row_id": self.with_row_id,
                "row_ranges": [tuple(p) for p in partition.pieces],
                "stats": stats,
            }
        )
        rows = 0
        for batch in pa.RecordBatchReader.from_stream(stream):
            rows += batch.num_rows
            yield _cast_batch(batch, self.arrow_schema)
        if self.stats_dir:
            record = dict(stats.snapshot(), partition=partition.index, rows_returned=rows, filter=self.filter)
            path = os.path.join(self.stats_dir, f"{uuid.uuid4().hex}.json")
            with open(path, "w") as fh:
                json.dump(record, fh)


# -- writes --------------------------------------------------------------------------


@dataclass
class LanceletCommitMessage(WriterCommitMessage):
    """What one write task hands to the driver: its fragments (pylance JSON dicts)."""

    fragments: List[Dict[str, Any]] = field(default_factory=list)


def _files_of(fragments: Iterable[Dict[str, Any]]) -> List[str]:
    return [d["path"] for f in fragments for d in f["files"]]


class LanceletWriter(DataSourceArrowWriter):
    """Writes a Spark job's rows as one commit; see the module docs."""

    def __init__(self, uri: str, schema: Any, overwrite: bool, options: Dict[str, str]):
        self.uri = uri
        self.overwrite = overwrite
        self.tag = "spark_" + uuid.uuid4().hex
        self.max_rows_per_file = _positive(options, "max_rows_per_file") or _native_dataset.DEFAULT_MAX_ROWS_PER_FILE
        self.max_bytes_per_file = _positive(options, "max_bytes_per_file") or _native_dataset.DEFAULT_MAX_BYTES_PER_FILE
        self.commit_message = options.get("commit_message")
        sizes = _parse_sizes(options.get("fixed_size_lists"))
        self.storage = _storage(options)
        try:
            existing: Optional[LanceDataset] = _open(uri, None, self.storage)
        except LanceNotFoundError:
            existing = None
        self.read_version = existing.version if existing is not None else None
        self.new_schema = pa.schema(
            [
                pa.field(f.name, _arrow_from_spark(f.dataType, f.metadata or {}, f.name, sizes), f.nullable)
                for f in schema.fields
            ]
        )
        if existing is not None and not overwrite:
            self.schema = _append_schema(existing.schema, schema, uri)
        else:
            self.schema = self.new_schema

    def write(self, iterator: Iterator[pa.RecordBatch]) -> LanceletCommitMessage:
        batches = (_cast_batch(b, self.schema) for b in iterator)
        frags, _, _ = _native_dataset.Dataset.write_fragments(
            self.uri,
            pa.RecordBatchReader.from_batches(self.schema, batches),
            {
                "mode": "overwrite" if self.overwrite else "append",
                "max_rows_per_file": self.max_rows_per_file,
                "max_bytes_per_file": self.max_bytes_per_file,
                "file_tag": self.tag,
                "storage_options": self.storage or None,
            },
        )
        return LanceletCommitMessage(frags)

    # Spark hands back the messages write() returned, so the narrower type is safe.
    def commit(self, messages: List[Optional[LanceletCommitMessage]]) -> None:  # type: ignore[override]
        frags = [f for m in messages if m is not None for f in m.fragments]
        try:
            _commit(
                self.uri, frags, self.overwrite, self.new_schema, self.read_version, self.commit_message, self.storage
            )
        except LanceIOError:
            raise  # the commit may have landed: its files stay (cleanup removes them if not)
        except BaseException:
            self._remove([])
            raise
        # Attempts that failed, were retried or ran speculatively left files: drop them.
        self._remove(_files_of(frags))

    def _remove(self, keep: List[str]) -> None:
        _native_dataset.Dataset.remove_tagged_files(self.uri, self.tag, keep, storage_options=self.storage or None)

    def abort(self, messages: List[Optional[LanceletCommitMessage]]) -> None:  # type: ignore[override]
        # Messages are missing for failed tasks, so find the job's files by their tag.
        self._remove([])


def _append_schema(ds_schema: pa.Schema, spark: Any, uri: str) -> pa.Schema:
    """The dataset's fields for the DataFrame's columns (in the DataFrame's order)."""
    by_lower = {f.name.lower(): f for f in ds_schema}
    fields, unknown = [], []
    for f in spark.fields:
        target = ds_schema.field(f.name) if f.name in ds_schema.names else by_lower.get(f.name.lower())
        if target is None:
            unknown.append(f.name)
        else:
            fields.append(target.with_name(f.name) if target.name == f.name else target)
    if unknown:
        raise SchemaMismatchError(
            f"cannot append to {uri}: columns {unknown} are not in the dataset (its columns: {ds_schema.names})"
        )
    given = {f.name for f in fields}
    required = [f.name for f in ds_schema if not f.nullable and f.name not in given]
    if required:
        raise SchemaMismatchError(f"cannot append to {uri}: non-nullable columns {required} are missing")
    return pa.schema(fields, metadata=ds_schema.metadata)


def _commit(
    uri: str,
    frags: List[Dict[str, Any]],
    overwrite: bool,
    new_schema: pa.Schema,
    read_version: Optional[int],
    message: Optional[str],
    storage: Dict[str, str],
) -> None:
    """One commit of a job's fragments, with the intent the job was planned with: an
    overwrite of ``read_version`` (or a create, when the dataset was absent: one that
    another job created meanwhile is not replaced), an append at ``read_version``, or,
    when the dataset was absent, a create that appends instead to a dataset another job
    created first. One native call: an I/O error is never followed by a second commit of
    the same fragments (the first may have landed)."""
    if overwrite:
        kind = "overwrite" if read_version is not None else "create"
    else:
        kind = "append" if read_version is not None else "create_or_append"
    path = _native_uri(uri, storage or None)
    _paths.check_write_target(path)
    # The native commit applies the dataset's automatic cleanup, as every commit does.
    _native_dataset.Dataset.commit(
        path,
        kind,
        frags,
        schema=None if kind == "append" else new_schema,
        read_version=read_version,
        options={"commit_message": message, "storage_options": _storage_options(storage or None)},
    )


class LanceletDataSource(DataSource):
    """The ``lancelet`` Spark data source (``spark.read.format("lancelet")``)."""

    #: Minimum read partitions when the data is small (set by :func:`register`).
    default_parallelism: Optional[int] = None

    @classmethod
    def name(cls) -> str:
        return SOURCE_NAME

    def _uri(self, create: bool = False) -> str:
        if _spark_namespace.uses_namespace(self.options):
            resolved = self.__dict__.get("_resolved_uri")
            if resolved is None:
                resolved = _spark_namespace.resolve(self.options.get("path"), dict(self.options), create)
                self._resolved_uri = resolved
            return resolved
        uri = self.options.get("path")
        if not uri:
            raise InvalidArgumentError("give the dataset location: .load(uri) / .save(uri)")
        return uri

    def _version(self) -> int:
        """The version this DataFrame reads, resolved once. ``schema()`` runs at ``load()``
        and Spark then ships this object, pin included, to every planning of the DataFrame's
        reads: each action reads the version its schema came from, whichever plan Spark
        reuses (see :class:`LanceletReader`), until the DataFrame is loaded again. (With a
        schema given to ``spark.read.schema(...)`` Spark skips ``schema()``, and each
        planning of a read resolves the version itself.)"""
        pinned = self.__dict__.get("_pinned_version")
        if pinned is None:
            v = self.options.get("version")
            storage = _storage(self.options) or None
            if v is None:
                pinned = dataset(self._uri(), storage_options=storage).version
            else:
                pinned = dataset(
                    self._uri(), version=int(v) if str(v).isdigit() else v, storage_options=storage
                ).version
            self._pinned_version = pinned
        return pinned

    def schema(self) -> Any:
        ds = _open(self._uri(), self._version(), _storage(self.options))
        schema = _blob.scan_schema(ds.schema)  # blob columns read as descriptors
        cols = self.options.get("columns")
        if cols:
            names = [c.strip() for c in cols.split(",") if c.strip()]
            missing = [n for n in names if n not in schema.names]
            if missing:
                raise SchemaMismatchError(f"columns {missing} are not in {self._uri()} (columns: {schema.names})")
            schema = pa.schema([schema.field(n) for n in names])
        out = spark_schema(schema)
        if str(self.options.get("with_row_id", "false")).lower() == "true":
            out = out.add("_rowid", T.LongType(), True)
        return out

    def reader(self, schema: Any) -> LanceletReader:
        return LanceletReader(
            self._uri(), self._version(), schema, dict(self.options), getattr(type(self), "default_parallelism", None)
        )

    def writer(self, schema: Any, overwrite: bool) -> LanceletWriter:
        return LanceletWriter(self._uri(create=True), schema, overwrite, dict(self.options))


# -- Arrow UDF helpers ---------------------------------------------------------------


def take_rows(
    uri: str,
    columns: Optional[List[str]] = None,
    version: Optional[Any] = None,
    id_column: str = "_rowid",
    storage_options: Optional[Dict[str, str]] = None,
) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    """A ``mapInArrow`` function that looks up rows by id on executors: each input batch's
    ``id_column`` (row ids from a read with ``with_row_id``) becomes the rows' ``columns``,
    with the id column kept first. See :func:`take` for a ready DataFrame."""
    pinned = dataset(uri, version=version, storage_options=storage_options).version

    def fn(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        ds = _open(uri, pinned, storage_options)
        for b in batches:
            ids = b.column(id_column).cast(pa.uint64())
            rows = ds._take_rows(ids.to_pylist(), columns=columns)
            arrays = [b.column(id_column)] + [c.combine_chunks() for c in rows.columns]
            yield pa.RecordBatch.from_arrays(arrays, names=[id_column] + rows.column_names)

    return fn


def read(
    spark: Any,
    uri: str,
    columns: Optional[List[str]] = None,
    filter: Optional[str] = None,
    version: Optional[Any] = None,
    with_row_id: bool = False,
    storage_options: Optional[Dict[str, str]] = None,
    **options: Any,
) -> Any:
    """A DataFrame over ``uri`` that reads only ``columns`` and only the rows matching the
    lancelet SQL ``filter``, both inside the scan.

    Spark (4.3) neither prunes the columns of a Python data source nor hands it the
    query's filters safely (see :class:`LanceletReader`), so ``select`` after ``load``
    reads every column. Naming the columns here is the route that reads less::

        df = lancelet.spark.read(spark, uri, columns=["id", "value"], filter="value > 0.5")

    ``options`` are further read options (``rows_per_partition``, ``batch_size``, ...)."""
    register(spark)
    reader = spark.read.format(SOURCE_NAME)
    if columns:
        reader = reader.option("columns", ",".join(columns))
    if filter is not None:  # a blank filter reaches the scan, which refuses it
        reader = reader.option("filter", filter)
    if version is not None:
        reader = reader.option("version", str(version))
    if with_row_id:
        reader = reader.option("with_row_id", "true")
    for k, v in (storage_options or {}).items():
        reader = reader.option(f"storage.{k}", v)
    for k, v in options.items():
        reader = reader.option(k, str(v))
    return reader.load(uri)


def take(
    ids_df: Any,
    uri: str,
    columns: Optional[List[str]] = None,
    version: Optional[Any] = None,
    id_column: str = "_rowid",
    storage_options: Optional[Dict[str, str]] = None,
) -> Any:
    """The rows of ``uri`` whose ids are in ``ids_df[id_column]``, fetched on executors:
    a DataFrame of ``id_column`` plus ``columns`` (all when None)."""
    ds = dataset(uri, version=version, storage_options=storage_options)
    names = columns or ds.schema.names
    schema = spark_schema(pa.schema([ds.schema.field(n) for n in names]))
    id_field = ids_df.schema[id_column]
    out = T.StructType([id_field] + list(schema.fields))
    expected = _expected_arrow(out)
    fn = take_rows(uri, names, ds.version, id_column, storage_options)

    def cast(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for b in fn(batches):
            yield _cast_batch(b, expected)

    return ids_df.select(id_column).mapInArrow(cast, out)


def fragment_writer(
    uri: str, schema: Optional[pa.Schema] = None, mode: str = "append", **write_options: Any
) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    """A ``mapInArrow`` function writing each partition's batches as fragments of ``uri``
    (uncommitted) and yielding one row per fragment: ``fragment`` (its JSON). Collect them
    and pass them to :func:`commit_fragments`::

        rows = df.mapInArrow(lancelet.spark.fragment_writer(uri), "fragment string").collect()
        lancelet.spark.commit_fragments(uri, rows, schema=arrow_schema)
    """

    def fn(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        it = iter(batches)
        first = next(it, None)
        if first is None:
            return
        target = schema or first.schema

        def all_batches() -> Iterator[pa.RecordBatch]:
            yield _cast_batch(first, target)
            for b in it:
                yield _cast_batch(b, target)

        frags = write_fragments(
            pa.RecordBatchReader.from_batches(target, all_batches()), uri, mode=mode, **write_options
        )
        yield pa.record_batch([pa.array([json.dumps(f.to_json()) for f in frags], pa.string())], names=["fragment"])

    return fn


def commit_fragments(
    uri: str,
    fragments: Iterable[Any],
    mode: str = "append",
    schema: Optional[pa.Schema] = None,
    read_version: Optional[int] = None,
    commit_message: Optional[str] = None,
    storage_options: Optional[Dict[str, str]] = None,
) -> LanceDataset:
    """Commits fragments written by :func:`fragment_writer` (Rows, JSON strings or
    :class:`FragmentMetadata`) as one version: ``mode`` is "append" or "overwrite" (which
    needs ``schema`` and creates the dataset if absent)."""
    metas = []
    for f in fragments:
        if hasattr(f, "asDict"):
            f = f["fragment"]
        metas.append(f if isinstance(f, FragmentMetadata) else FragmentMetadata.from_json(f))
    if mode == "overwrite":
        if schema is None:
            raise InvalidArgumentError("an overwrite needs the dataset schema (schema=...)")
        op: Any = LanceOperation.Overwrite(schema, metas)
    elif mode == "append":
        op = LanceOperation.Append(metas)
    else:
        raise InvalidArgumentError(f'mode must be "append" or "overwrite", got {mode!r}')
    return LanceDataset.commit(
        uri, op, read_version=read_version, commit_message=commit_message, storage_options=storage_options
    )


def add_columns(
    spark: Any,
    uri: str,
    udf: Any,
    read_columns: Optional[List[str]] = None,
    batch_size: Optional[int] = None,
    storage_options: Optional[Dict[str, str]] = None,
) -> LanceDataset:
    """Adds columns computed by ``udf`` (a function ``RecordBatch -> RecordBatch`` or a
    :func:`lancelet.batch_udf`) on Spark executors, one task per fragment, committed once
    on the driver; returns the dataset at the new version.

    Each task reads its fragment's ``read_columns`` (deleted rows included) from the version
    the driver pinned, runs the UDF and writes the new columns as one data file; the driver
    commits all files as one Merge. Existing data files are never rewritten. If a task or the
    commit fails, the files written are removed and nothing is committed. The UDF must be
    picklable (lambdas and closures are, through Spark's cloudpickle)."""
    udf = udf if isinstance(udf, BatchUDF) else BatchUDF(udf)
    storage = dict(storage_options or {})
    ds = _open(uri, None, storage)
    native = ds._native
    schema = udf_schema(native, udf, read_columns)
    if schema is None:
        raise InvalidArgumentError("the dataset has no rows to run the UDF on; give the UDF an output_schema")
    version = ds.version
    frag_ids = [f["id"] for f in native.fragments()]
    schema_bytes = schema.serialize().to_pybytes()
    # Every file this job writes is named with its tag, so that files of failed, retried or
    # speculative task attempts can be found and removed.
    tag = f"addcol_{uuid.uuid4().hex}"

    def run(ids: Iterable[int]) -> Iterable[str]:
        task_schema = pa.ipc.read_schema(pa.py_buffer(schema_bytes))
        task_native = _open_cached(uri, version, tuple(sorted(storage.items())))._native
        for fid in ids:
            yield json.dumps(fragment_file(task_native, fid, udf, read_columns, batch_size, task_schema, tag))

    files: List[Dict[str, Any]] = []
    try:
        if frag_ids:
            rdd = spark.sparkContext.parallelize(frag_ids, len(frag_ids))
            files = [json.loads(s) for s in rdd.mapPartitions(run).collect()]
        native = commit_files(native, schema, files)
    except LanceIOError:
        raise  # the commit may have landed: its files stay
    except BaseException:
        _native_dataset.Dataset.remove_tagged_files(uri, tag, [], storage or None)
        raise
    kept = [f["path"] for frag in files for f in frag["files"]]
    _native_dataset.Dataset.remove_tagged_files(uri, tag, kept, storage or None)
    return ds._with(native)


def nearest(
    spark: Any,
    uri: str,
    queries_df: Any,
    column: str,
    k: int = 10,
    *,
    query_column: str = "q",
    id_column: Optional[str] = None,
    columns: Optional[List[str]] = None,
    version: Optional[Any] = None,
    nprobes: Optional[int] = None,
    refine_factor: Optional[int] = None,
    metric: Optional[str] = None,
    filter: Optional[str] = None,
    prefilter: bool = False,
    use_index: bool = True,
    storage_options: Optional[Dict[str, str]] = None,
) -> Any:
    """Batch nearest-neighbour search on the executors: for each row of ``queries_df`` (a
    vector in ``query_column``, and an id in ``id_column`` when given), the ``k`` nearest rows
    of ``uri``'s ``column``, one output row per (query, neighbour): the query id (or the
    query vector's position among its partition's rows when there is no id), ``_rowid``,
    ``_distance`` and the neighbour's columns: all of the dataset's, as ``nearest=`` on a
    dataset returns them (blob columns as descriptors), or only ``columns``. A dataset
    column named like the query id column is left out of the default. Each partition of
    queries is searched in one task, with the dataset pinned at the driver's version::

        pairs = lancelet.spark.nearest(spark, uri, queries_df, "vec", k=10, id_column="qid")
        dups = pairs.where("_distance < 0.01 AND qid != _rowid")     # semantic dedup
        slim = lancelet.spark.nearest(spark, uri, queries_df, "vec", columns=["id"])
    """
    del spark
    ds = dataset(uri, version=version, storage_options=storage_options)
    pinned = ds.version
    qid_field = (
        queries_df.schema[id_column] if id_column is not None else T.StructField("query_index", T.LongType(), False)
    )
    reserved = {qid_field.name, "_rowid", "_distance"}
    scanned = _blob.scan_schema(ds.schema)  # what the search returns: blob columns as descriptors
    if columns is None:
        names = [n for n in scanned.names if n not in reserved]
    else:
        names = [columns] if isinstance(columns, str) else list(columns)
        clash = [n for n in names if n in reserved]
        if clash:
            raise InvalidArgumentError(
                f"columns {clash} would repeat the output's {sorted(reserved)} columns; "
                "name the query id column differently (id_column)"
            )
        missing = [n for n in names if n not in scanned.names]
        if missing:
            raise InvalidArgumentError(f"columns {missing} are not in {uri} (columns: {scanned.names})")
    field_types = [scanned.field(n) for n in names]
    out = T.StructType(
        [qid_field, T.StructField("_rowid", T.LongType(), True), T.StructField("_distance", T.FloatType(), True)]
        + list(spark_schema(pa.schema(field_types)).fields)
    )
    expected = _expected_arrow(out)
    opts: Dict[str, Any] = {"k": int(k)}
    for key, value in (("nprobes", nprobes), ("refine_factor", refine_factor), ("metric", metric)):
        if value is not None:
            opts[key] = value
    opts["use_index"] = bool(use_index)
    selected = [query_column] + ([id_column] if id_column is not None else [])

    def fn(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        target = _open(uri, pinned, storage_options)
        seen = 0
        for b in batches:
            if b.num_rows == 0:
                continue
            vectors = b.column(query_column).to_pylist()
            qids = (
                b.column(id_column) if id_column is not None else pa.array(range(seen, seen + b.num_rows), pa.int64())
            )
            seen += b.num_rows
            hits = target.to_table(
                nearest=dict(opts, column=column, q=vectors),
                columns=names,
                filter=filter,
                prefilter=prefilter,
                with_row_id=True,
            )
            # A 2-D query always runs as a batch: `query_index` says which row each hit is for.
            qi = hits.column("query_index").combine_chunks().cast(pa.int64())
            arrays = [qids.take(qi), hits.column("_rowid").cast(pa.int64()), hits.column("_distance")]
            arrays += [hits.column(n) for n in names]
            arrays = [a.combine_chunks() if isinstance(a, pa.ChunkedArray) else a for a in arrays]
            batch = pa.RecordBatch.from_arrays(arrays, names=[f.name for f in expected])
            yield _cast_batch(batch, expected)

    return queries_df.select(*selected).mapInArrow(fn, out)


def create_index(
    spark: Any,
    uri: str,
    column: str,
    index_type: str = "IVF_PQ",
    name: Optional[str] = None,
    *,
    metric: str = "L2",
    num_partitions: Optional[int] = None,
    num_sub_vectors: Optional[int] = None,
    num_bits: int = 8,
    replace: bool = False,
    fragments_per_task: int = 1,
    sample_rows: int = 65536,
    storage_options: Optional[Dict[str, str]] = None,
    **params: Any,
) -> LanceDataset:
    """Builds a vector or full-text index with Spark.

    ``INVERTED`` (or ``FTS``): each task tokenizes ``fragments_per_task`` fragments into a
    segment with ``params`` (``create_scalar_index``'s keyword arguments: ``with_position``,
    ``base_tokenizer``, ...); the driver commits every segment as one index in one
    CreateIndex, searched as one (scores use the statistics of all segments)::

        lancelet.spark.create_index(spark, uri, "text", "INVERTED", with_position=True)

    Vector types: the driver trains the IVF centroids and the PQ/SQ
    quantizer on a sample of at most ``sample_rows`` rows; each task encodes
    ``fragments_per_task`` fragments with that model into an index segment; the driver
    commits every segment as one index ``name`` (``{column}_idx``) in one CreateIndex. All
    segments share the model, so the index searches like one built in a single process
    (pylance treats the segments as deltas of one index)::

        lancelet.spark.create_index(spark, uri, "vec", "IVF_PQ", num_partitions=256, num_sub_vectors=16)
    """
    if index_type.upper() in ("INVERTED", "FTS"):
        return _create_fts_index(spark, uri, column, name, replace, fragments_per_task, storage_options, params)
    if params:
        raise TypeError(f"create_index() got unexpected keyword arguments {sorted(params)} for {index_type}")
    if index_type.upper() == "IVF_PQ" and num_sub_vectors is None:
        raise InvalidArgumentError("num_partitions and num_sub_vectors are required for IVF_PQ")
    if fragments_per_task < 1:
        raise InvalidArgumentError(f"fragments_per_task must be positive, got {fragments_per_task}")
    ds = dataset(uri, storage_options=storage_options)
    pinned = ds.version
    name = name or f"{column}_idx"
    if not replace and any(i["name"] == name for i in ds.list_indices()):
        raise InvalidArgumentError(f"Index name '{name}' already exists; pass replace=True to replace it")
    model = _native_index.train_vector_model(
        ds._native,
        column,
        index_type,
        {
            "metric": str(metric).lower(),
            "num_partitions": num_partitions,
            "num_sub_vectors": num_sub_vectors,
            "num_bits": num_bits,
        },
        sample_rows,
    )
    ids = [f.fragment_id for f in ds.get_fragments()]
    groups = [ids[i : i + fragments_per_task] for i in range(0, len(ids), fragments_per_task)]

    def build(group: List[int]) -> bytes:
        target = _open(uri, pinned, storage_options)
        return bytes(_native_index.build_vector_segment(target._native, column, name, model, group))

    segments = spark.sparkContext.parallelize(groups, max(1, len(groups))).map(build).collect()
    ds._move_to(_native_index.commit_index_segments(ds._native, name, segments, replace))
    return ds


def _create_fts_index(
    spark: Any,
    uri: str,
    column: str,
    name: Optional[str],
    replace: bool,
    fragments_per_task: int,
    storage_options: Optional[Dict[str, str]],
    params: Dict[str, Any],
) -> LanceDataset:
    """A full-text index built by Spark tasks, one segment per group of fragments."""
    if fragments_per_task < 1:
        raise InvalidArgumentError(f"fragments_per_task must be positive, got {fragments_per_task}")
    ds = dataset(uri, storage_options=storage_options)
    pinned = ds.version
    name = name or f"{column}_idx"
    if not replace and any(i["name"] == name for i in ds.list_indices()):
        raise InvalidArgumentError(f"Index name '{name}' already exists; pass replace=True to replace it")
    # Checked once on the driver, before any task starts.
    text_params = params_json(params, params.pop("format_version", None))
    _native_index.tokenize(text_params, "")
    ids = [f.fragment_id for f in ds.get_fragments()]
    groups = [ids[i : i + fragments_per_task] for i in range(0, len(ids), fragments_per_task)]

    def build(group: List[int]) -> Dict[str, Any]:
        target = _open(uri, pinned, storage_options)
        return dict(_native_index.build_fts_segment(target._native, column, group, text_params, name, True))

    segments = spark.sparkContext.parallelize(groups, max(1, len(groups))).map(build).collect()
    if not segments:
        raise InvalidArgumentError(f"the dataset at {uri!r} has no fragments to index")
    committed = ds.commit_existing_index_segments(name, column, [index_from_dict(d) for d in segments])
    return cast(LanceDataset, committed)


def read_blobs(
    df: Any,
    uri: str,
    column: str,
    *,
    version: Optional[Any] = None,
    address_column: str = "_rowaddr",
    output_column: Optional[str] = None,
    storage_options: Optional[Dict[str, str]] = None,
) -> Any:
    """``df`` with the payloads of blob column ``column`` of ``uri`` added as a binary
    column (``output_column``, default ``column + "_bytes"``), fetched on the executors
    for the row addresses in ``address_column`` (``_rowaddr``; ``_rowid`` of a dataset
    without stable row ids is the same number). Filter on metadata first, then pull the
    payloads of the rows left::

        meta = lancelet.spark.read(spark, uri, columns=["id", "label"], filter="label = 3")
        ...  # a DataFrame with a `_rowaddr` column, e.g. from lancelet.dataset(uri).to_table(with_row_address=True)
        images = lancelet.spark.read_blobs(meta_with_addr, uri, "image")
    """
    pinned = dataset(uri, version=version, storage_options=storage_options).version
    out_name = output_column or f"{column}_bytes"
    out = T.StructType(list(df.schema.fields) + [T.StructField(out_name, T.BinaryType(), True)])
    expected = _expected_arrow(out)

    def fetch(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        ds = _open(uri, pinned, storage_options)
        for b in batches:
            addrs = [int(a) for a in b.column(address_column).cast(pa.uint64()).to_pylist()]
            data = [x for _, x in ds.read_blobs(column, addresses=addrs)] if addrs else []
            full = pa.RecordBatch.from_arrays(
                list(b.columns) + [pa.array(data, pa.binary())], names=list(b.schema.names) + [out_name]
            )
            yield _cast_batch(full, expected)

    return df.mapInArrow(fetch, out)
