"""Progress reporting of writes and index builds, with the names of pylance's ``lance.progress``.

Index builds take ``progress_callback=``: a callable receiving :class:`IndexProgress` events
(pylance's), or ``True`` for a progress bar per stage (needs tqdm: ``lancelet[progress]``)::

    ds.create_scalar_index("text", "INVERTED", progress_callback=print)

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

import json
import warnings
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Dict, Iterable, Literal, Optional

import pyarrow.fs as pafs

from .errors import InvalidArgumentError

if TYPE_CHECKING:  # pragma: no cover
    from .fragment import FragmentMetadata

__all__ = [
    "FileSystemFragmentWriteProgress",
    "FragmentWriteProgress",
    "IndexProgress",
    "NoopFragmentWriteProgress",
]


@dataclass
class IndexProgress:
    """One progress event of an index build (pylance's fields): each stage reports
    ``"start"``, then ``"progress"`` as work completes, then ``"complete"``. An INVERTED
    build has the stages ``tokenize_docs`` (``unit="rows"``, ``total`` the rows to index)
    and ``write_metadata`` (``unit="files"``)."""

    event: Literal["start", "progress", "complete"]
    stage: str
    completed: Optional[int] = None
    total: Optional[int] = None
    unit: str = ""

    @property
    def fraction(self) -> Optional[float]:
        """``completed / total`` (at most 1), or ``None`` when the total is unknown or 0."""
        if self.completed is None or not self.total:
            return None
        return min(self.completed / self.total, 1.0)


def optional_tqdm(option: str, doing: str) -> Any:
    """tqdm's progress bar class, or ``None`` (with a warning naming ``option`` and saying
    the work goes on ``doing``, without a bar) when tqdm is not installed."""
    try:
        from tqdm.auto import tqdm  # noqa: PLC0415 (optional dependency: lancelet[progress])
    except ImportError:
        warnings.warn(
            f"{option}=True needs tqdm, which is not installed (pip install 'lancelet[progress]'); "
            f"{doing} without a progress bar",
            stacklevel=4,
        )
        return None
    return tqdm


def index_progress_callback(progress: Any) -> Optional[Callable[..., None]]:
    """The native layer's progress callback for an index build's ``progress_callback``:
    ``None``, ``True`` (a bar per stage) or a callable receiving :class:`IndexProgress`."""
    if progress is None or progress is False:
        return None
    if progress is True:
        tqdm = optional_tqdm("progress_callback", "building")
        if tqdm is None:
            return None
        bars: Dict[str, Any] = {}

        def draw(e: IndexProgress) -> None:
            if e.event == "start":
                bars[e.stage] = tqdm(total=e.total, unit=f" {e.unit}", desc=e.stage.replace("_", " "))
            bar = bars.get(e.stage)
            if bar is not None:
                bar.update((e.completed or 0) - bar.n)
                if e.event == "complete":
                    bar.close()

        progress = draw
    if not callable(progress):
        raise InvalidArgumentError("progress_callback must be None, True or a callable")
    user = progress
    return lambda event, stage, completed, total, unit: user(IndexProgress(event, stage, completed, total, unit))


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


class FileSystemFragmentWriteProgress(FragmentWriteProgress):
    """Records the fragments a write produces as files under ``base_uri`` (any pyarrow
    filesystem URI), as pylance's: ``begin`` writes ``fragment_<id>.in_progress`` (the id
    and ``metadata``, e.g. which worker wrote it) and ``fragment_<id>.json`` (the fragment
    as far as it is known), ``complete`` rewrites the JSON with the finished fragment and
    removes the ``.in_progress`` file. A write that dies midway leaves its
    ``.in_progress`` file behind, so a distributed job can find and clean up its
    fragments. ``LanceFragment.create`` calls ``begin`` before the first byte is written.

    >>> progress = FileSystemFragmentWriteProgress("progress", {"worker": "3"})  # doctest: +SKIP
    >>> frag = lancelet.LanceFragment.create(uri, table, fragment_id=7, progress=progress)  # doctest: +SKIP
    """

    PROGRESS_EXT: str = ".in_progress"

    def __init__(self, base_uri: Any, metadata: Optional[Dict[str, str]] = None):
        self._fs, self._base_path = pafs.FileSystem.from_uri(str(base_uri))
        self._metadata = dict(metadata or {})

    def _path(self, fragment: "FragmentMetadata", suffix: str) -> str:
        return f"{self._base_path.rstrip('/')}/fragment_{fragment.id}{suffix}"

    def _write(self, path: str, value: Any) -> None:
        with self._fs.open_output_stream(path) as out:
            out.write(json.dumps(value).encode("utf-8"))

    def begin(self, fragment: "FragmentMetadata", **kwargs: Any) -> None:
        self._fs.create_dir(self._base_path, recursive=True)
        self._write(self._path(fragment, self.PROGRESS_EXT), {"fragment_id": fragment.id, "metadata": self._metadata})
        self._write(self._path(fragment, ".json"), fragment.to_json())

    def complete(self, fragment: "FragmentMetadata", **kwargs: Any) -> None:
        self._write(self._path(fragment, ".json"), fragment.to_json())
        self._fs.delete_file(self._path(fragment, self.PROGRESS_EXT))


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
