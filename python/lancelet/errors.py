"""Exceptions raised by lancelet.

Every error lancelet raises derives from :class:`LanceError`, and also from the builtin
exception a Python user would expect, so both ``except lancelet.LanceError`` and
``except ValueError`` (or ``OSError``, ``NotImplementedError``...) work.
"""

from __future__ import annotations

__all__ = [
    "LanceError",
    "CorruptFileError",
    "LanceNotFoundError",
    "LanceIOError",
    "SchemaMismatchError",
    "UnsupportedFeatureError",
    "InvalidArgumentError",
    "IndexNotFoundError",
    "InternalError",
    "CommitConflictError",
    "DatasetAlreadyExistsError",
    "RowIndexError",
]


class LanceError(Exception):
    """Base class of every lancelet error."""


class CorruptFileError(LanceError, OSError):
    """A file or dataset is damaged: bad footer, offsets outside the file, unparsable metadata."""


class LanceNotFoundError(LanceError, FileNotFoundError, ValueError):
    """The file or dataset does not exist.

    Also a ``ValueError``: pylance raises ``ValueError`` for a missing dataset, so code
    written for it (``except ValueError``) keeps working."""


class LanceIOError(LanceError, OSError):
    """Reading or writing storage failed."""


class SchemaMismatchError(LanceError, ValueError, OSError):
    """Data does not match the schema of the file or dataset it is written to.

    Also an ``OSError``: pylance raises ``OSError`` for an append whose schema does not
    match, so code written for it (``except OSError``) keeps working."""


class UnsupportedFeatureError(LanceError, NotImplementedError):
    """A valid feature (file version, encoding, type) that lancelet does not support yet."""


class InvalidArgumentError(LanceError, ValueError):
    """A bad argument: unknown column, row index out of range, bad option value..."""


class IndexNotFoundError(InvalidArgumentError, KeyError):
    """No index of that name (``ds.stats.index_stats(name)``, ``ds.index_statistics(name)``).

    Both an :class:`InvalidArgumentError` (a ``ValueError``) and a ``KeyError``, the class
    pylance raises here, so code written for either keeps working.

    >>> issubclass(IndexNotFoundError, KeyError) and issubclass(IndexNotFoundError, ValueError)
    True
    """


class InternalError(LanceError, RuntimeError):
    """A bug in lancelet (a Rust panic caught at the boundary). Please report it."""


class CommitConflictError(LanceError, OSError):
    """Another writer committed a change that conflicts with this one; nothing was written.

    Also an ``OSError``, as pylance's ``lance.commit.CommitConflictError`` is, so code
    written for it (``except OSError``) keeps working.

    Re-read the dataset and try again (``delete``, ``update`` and ``merge_insert`` do so
    themselves, up to ``conflict_retries`` times). Concurrent appends never conflict; two
    changes to rows of the same fragment do; a schema change conflicts with new columns
    and other schema changes; an overwrite conflicts only with another overwrite or a
    restore, but every other operation conflicts with a concurrent overwrite. See
    ``docs/data_evolution.md`` for the full table.

    ``retryable`` says whether running the operation again on the newest version may
    succeed, as in pylance. A commit lock may raise this class itself (pylance's
    ``CommitConflictError()``, importable as ``lancelet.commit.CommitConflictError``) to
    refuse a commit.

    >>> CommitConflictError("version 3 is taken").retryable
    True
    """

    def __init__(self, message: str = "", retryable: bool = True) -> None:
        super().__init__(message)
        self.retryable = retryable


class DatasetAlreadyExistsError(LanceError, FileExistsError):
    """``write_dataset(..., mode="create")`` found a dataset at the target."""


class RowIndexError(LanceError, IndexError):
    """A row index or row address past the end of the dataset or fragment."""
