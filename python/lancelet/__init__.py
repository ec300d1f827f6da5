"""lancelet: a from-scratch implementation of the Lance columnar format.

>>> import pyarrow as pa, lancelet.file
>>> with lancelet.file.LanceFileWriter("/tmp/x.lance", version="2.0") as w:  # doctest: +SKIP
...     w.write_batch(pa.record_batch({"a": [1, 2, 3]}))
>>> lancelet.file.LanceFileReader("/tmp/x.lance").read_all().to_table()  # doctest: +SKIP
"""

from __future__ import annotations

from . import errors, file, fragment, progress
from .dataset import (
    CleanupStats,
    DatasetDelta,
    LanceDataset,
    LanceFragment,
    LanceOperation,
    LanceScanner,
    ScanStatistics,
    dataset,
    write_dataset,
)
from .evolve import BatchUDF, batch_udf
from .fragment import FragmentMetadata, write_fragments
from ._native import __version__, set_worker_threads
from .errors import (
    CommitConflictError,
    CorruptFileError,
    DatasetAlreadyExistsError,
    RowIndexError,
    InternalError,
    InvalidArgumentError,
    LanceError,
    LanceIOError,
    LanceNotFoundError,
    SchemaMismatchError,
    UnsupportedFeatureError,
)

__all__ = [
    "__version__",
    "dataset",
    "write_dataset",
    "LanceDataset",
    "DatasetDelta",
    "LanceScanner",
    "LanceFragment",
    "LanceOperation",
    "ScanStatistics",
    "CleanupStats",
    "BatchUDF",
    "batch_udf",
    "FragmentMetadata",
    "write_fragments",
    "fragment",
    "progress",
    "CommitConflictError",
    "DatasetAlreadyExistsError",
    "RowIndexError",
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
]
