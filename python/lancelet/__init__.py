"""lancelet: a from-scratch implementation of the Lance columnar format.

>>> import pyarrow as pa, lancelet.file
>>> with lancelet.file.LanceFileWriter("/tmp/x.lance", version="2.0") as w:  # doctest: +SKIP
...     w.write_batch(pa.record_batch({"a": [1, 2, 3]}))
>>> lancelet.file.LanceFileReader("/tmp/x.lance").read_all().to_table()  # doctest: +SKIP
"""

from __future__ import annotations

import importlib

from . import errors, file, fragment, progress, schema
from ._branches import DatasetBasePath
from ._native import __version__, set_worker_threads
from .blob import Blob, BlobArray, BlobColumn, BlobFile, BlobType, blob_array, blob_field
from .dataset import (
    CleanupStats,
    DatasetDelta,
    LanceDataset,
    LanceFragment,
    LanceOperation,
    LanceScanner,
    ScanStatistics,
    Transaction,
    ValidationReport,
    dataset,
    write_dataset,
)
from .errors import (
    CommitConflictError,
    CorruptFileError,
    DatasetAlreadyExistsError,
    IndexNotFoundError,
    InternalError,
    InvalidArgumentError,
    LanceError,
    LanceIOError,
    LanceNotFoundError,
    RowIndexError,
    SchemaMismatchError,
    UnsupportedFeatureError,
)
from .evolve import BatchUDF, batch_udf
from .fragment import FragmentMetadata, write_fragments

__all__ = [
    "__version__",
    "dataset",
    "write_dataset",
    "LanceDataset",
    "DatasetBasePath",
    "DatasetDelta",
    "LanceScanner",
    "LanceFragment",
    "LanceOperation",
    "Transaction",
    "ScanStatistics",
    "CleanupStats",
    "ValidationReport",
    "BatchUDF",
    "batch_udf",
    "FragmentMetadata",
    "write_fragments",
    "fragment",
    "progress",
    "schema",
    "CommitConflictError",
    "DatasetAlreadyExistsError",
    "RowIndexError",
    "IndexNotFoundError",
    "errors",
    "file",
    "set_worker_threads",
    "LanceError",
    "CorruptFileError",
    "LanceNotFoundError",
    "LanceIOError",
    "SchemaMismatchError",
    "UnsupportedFeatureError",
    "InvalidArgumentError",
    "InternalError",
    "Blob",
    "BlobArray",
    "BlobColumn",
    "BlobFile",
    "BlobType",
    "blob_array",
    "blob_field",
]


def __getattr__(name: str):
    # ``lancelet.namespace`` is imported on first use (it needs the lance-namespace package);
    # so is ``lancelet.arrow`` (it needs numpy), so that ``lance.arrow.X`` works after
    # ``import lancelet as lance``.
    if name in ("namespace", "arrow"):
        return importlib.import_module("." + name, __name__)
    raise AttributeError(f"module 'lancelet' has no attribute {name!r}")
