"""Progress reporting of writes, with the names of pylance's ``lance.progress``.

Pass a :class:`FragmentWriteProgress` as ``progress=`` to :func:`lancelet.write_dataset` or
:func:`lancelet.fragment.write_fragments` to be told about every fragment the write
produces::

    class Log(lancelet.progress.FragmentWriteProgress):
        def begin(self, fragment, **kwargs):
            print("writing", fragment.id)

        def complete(self, fragment, **kwargs):
            print("wrote", fragment.id, fragment.physical_rows, "rows")

    lancelet.write_dataset(table, uri, progress=Log())

Note: lancelet's native writer streams rows to data files and only reports counts while
it runs (``progress=True`` draws a bar from them, a plain callable receives them as
:data:`lancelet.dataset.WriteProgress`). A fragment's metadata exists once its file is
closed, so ``begin`` and ``complete`` are both called, in that order and fragment by
fragment, when the write has finished and before ``write_dataset`` returns, with the
fragment as committed (its final id). pylance calls ``begin`` before the fragment's first
byte is written.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Any, Iterable

if TYPE_CHECKING:  # pragma: no cover
    from .fragment import FragmentMetadata

__all__ = ["FragmentWriteProgress", "NoopFragmentWriteProgress"]


class FragmentWriteProgress(ABC):
    """Receives the fragments a write produces (subclass it and implement both methods).

    See the module documentation for when lancelet calls them."""

    @abstractmethod
    def begin(self, fragment: "FragmentMetadata", **kwargs: Any) -> None:
        """Called first for each new fragment (its id may be provisional in pylance; in
        lancelet it is final)."""

    @abstractmethod
    def complete(self, fragment: "FragmentMetadata", **kwargs: Any) -> None:
        """Called once the fragment's data files are written."""


class NoopFragmentWriteProgress(FragmentWriteProgress):
    """A :class:`FragmentWriteProgress` that does nothing."""

    def begin(self, fragment: "FragmentMetadata", **kwargs: Any) -> None:
        """Does nothing."""

    def complete(self, fragment: "FragmentMetadata", **kwargs: Any) -> None:
        """Does nothing."""


class _FragmentReporter:
    """The native write's progress callback when the user passed a
    :class:`FragmentWriteProgress`: it remembers how many files were written, and
    :meth:`report` hands the resulting fragments to the user's object afterwards."""

    def __init__(self, progress: FragmentWriteProgress):
        self.progress = progress
        self.files = 0

    def __call__(self, rows: int, nbytes: int, files: int) -> None:
        self.files = max(self.files, int(files))

    def report(self, fragments: Iterable["FragmentMetadata"]) -> None:
        for f in fragments:
            self.progress.begin(f)
            self.progress.complete(f)
