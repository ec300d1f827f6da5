"""Names pylance's ``lance.commit`` offers: the commit lock type and the conflict error.

A commit lock is a callable that takes the version about to be committed and returns a
context manager held while it is created (``write_dataset(..., commit_lock=lock)``,
``lancelet.dataset(uri, commit_lock=lock)``); raising :class:`CommitConflictError` from it
refuses the commit.

>>> import contextlib
>>> from lancelet.commit import CommitConflictError, CommitLock
>>> @contextlib.contextmanager
... def lock(version):
...     yield
>>> checked: CommitLock = lock
>>> issubclass(CommitConflictError, OSError)
True
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Callable

from .errors import CommitConflictError

#: A commit lock: called with the version being committed, held while it is created.
CommitLock = Callable[[int], AbstractContextManager[None]]

__all__ = ["CommitConflictError", "CommitLock"]
