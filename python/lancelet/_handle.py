"""The base class of :class:`lancelet.LanceDataset`: what a dataset is to the modules
below ``dataset.py``.

A dataset object reads one version of a dataset through a native handle (``_native``, a
``lancelet._native.dataset.Dataset``) and remembers how it was opened: its URI, storage options,
default scan options, and the namespace and lock its commits go through. A commit returns
a new native handle; the object moves to it with :meth:`DatasetHandle._move_to`.

The modules that work on a dataset (``indices``, ``optimize``, ``merge``, ``blob``,
``_branches``, ``_nearest``...) sit below ``dataset.py``: they are given the
``LanceDataset`` they work on (typed under ``TYPE_CHECKING``), call its methods and move it
to a new version with ``_move_to``. None of them imports ``dataset.py`` or assigns a
dataset's attributes; ``isinstance(x, DatasetHandle)`` is how they tell a dataset from
other input (``write_fragments(ds, ...)``, ``LanceDataset.commit(ds, ...)``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Dict, Optional, Type, TypeVar

if TYPE_CHECKING:  # pragma: no cover
    from ._namespace_io import CommitNamespace

__all__ = ["DatasetHandle"]

_H = TypeVar("_H", bound="DatasetHandle")


class DatasetHandle:
    """One version of a dataset, as a native handle and the options it was opened with."""

    #: The dataset's URI as the user gave it.
    uri: str
    #: The URI as the native layer takes it (see ``_argcheck._native_uri``).
    _path: str
    #: The native dataset (one version); replaced by :meth:`_move_to`.
    _native: Any
    #: The options the dataset was opened with (kept for pickling and ``insert``).
    _storage_options: Optional[Dict[str, str]] = None
    #: ``scanner()`` arguments applied to every scan (see :func:`lancelet.dataset`).
    _default_scan_options: Optional[Dict[str, Any]] = None
    #: The namespace that creates this table's versions (managed versioning), if any.
    _commit_namespace: Optional[CommitNamespace] = None
    #: ``commit_lock(version)``: a context manager entered around every commit (see :func:`lancelet.dataset`).
    _commit_lock: Optional[Callable[[int], Any]] = None

    @classmethod
    def _from_native(
        cls: Type[_H],
        uri: str,
        path: str,
        native: Any,
        storage_options: Optional[Dict[str, str]] = None,
        commit_namespace: Optional[CommitNamespace] = None,
        *,
        default_scan_options: Optional[Dict[str, Any]] = None,
        commit_lock: Optional[Callable[[int], Any]] = None,
    ) -> _H:
        """A dataset over ``native``, a version opened or committed elsewhere (a write, a
        commit, a clone, an unpickling)."""
        ds = cls.__new__(cls)
        ds._init(uri, path, native)
        ds._storage_options = storage_options
        ds._commit_namespace = commit_namespace
        ds._default_scan_options = default_scan_options
        ds._commit_lock = commit_lock
        return ds

    def _init(self, uri: str, path: str, native: Any) -> None:
        self.uri = uri
        self._path = path
        self._native = native

    def _move_to(self, native: Any) -> None:
        """Moves this object to ``native``: the version a commit made, or the same version
        opened with other read options."""
        self._native = native

    def _use_commit_lock(self, lock: Optional[Callable[[int], Any]]) -> None:
        """Enters ``lock(version)`` around every commit of this dataset and of the datasets
        derived from it (see :func:`lancelet.dataset`)."""
        self._native.set_commit_lock(lock)
        self._commit_lock = lock

    def _with(self: _H, native: Any) -> _H:
        """Another object over ``native`` (a version of the same dataset), with this one's
        options."""
        return type(self)._from_native(
            self.uri,
            self._path,
            native,
            self._storage_options,
            self._commit_namespace,
            default_scan_options=self._default_scan_options,
            commit_lock=self._commit_lock,
        )

    def _plain(self: _H) -> _H:
        """This dataset without its ``default_scan_options`` (itself when it has none)."""
        if not self._default_scan_options:
            return self
        ds = self._with(self._native)
        ds._default_scan_options = None
        return ds
