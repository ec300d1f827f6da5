"""Training data: one iterable of batches that a training loop reads from — shuffled,
sharded across ranks and worker processes, resumable mid-epoch.

>>> loader = Loader(ds, batch_size=256, columns=["image", "label"], shuffle="clump",
...                 seed=7, rank=rank, world_size=world_size)
>>> for epoch in range(10):
...     loader.set_epoch(epoch)
...     for batch in loader:        # a pyarrow.RecordBatch (or dict of numpy arrays)
...         train_step(batch)

What each rank and worker reads is planned in Rust (``lancelet-dataset``'s ``loader``
module) from the rows, the shuffle, ``seed``, the epoch and the rank alone, so every
process of a job agrees without talking to the others:

- the rows are the live rows the ``filter`` keeps at the dataset's version when the loader
  was made (writers may append meanwhile; the loader keeps reading that version);
- ``shuffle`` orders an epoch: ``None`` (dataset order), ``"fragment"`` (whole fragments in
  a random order), ``"clump"`` (runs of ``clump_size`` consecutive rows in a random order:
  few large reads, good mixing) or ``"row"`` (a uniform permutation; ``True`` means
  ``"row"``). The order is drawn from ``(seed, epoch)``: epochs differ and replay;
- the epoch is cut into ``world_size`` contiguous shares, one per rank, so the ranks read
  every row exactly once, with the same number of batches each (see ``even_batches`` and
  ``drop_last``); inside a rank, worker ``w`` of ``n`` reads batches ``w, w + n, ...``, so a
  data loader that collects from its workers in turn hands the batches out in the same
  order as a single process;
- batches are read ahead in Rust (``batch_readahead`` in flight, the GIL released); a
  batch's rows come back in storage order, and blob columns as their bytes.

With PyTorch, the loader is an iterable dataset::

    class Rows(torch.utils.data.IterableDataset):
        def __init__(self, loader): self.loader = loader
        def __iter__(self): return iter(self.loader)

    data = torch.utils.data.DataLoader(Rows(loader), batch_size=None, num_workers=4,
                                       multiprocessing_context="spawn")  # fork works too

``batch_size=None`` hands the loader's batches through unchanged; inside a worker the
loader finds its worker number with ``torch.utils.data.get_worker_info()`` (only when torch
is already imported; lancelet never imports it). ``state_dict()`` / ``load_state_dict()``
follow the protocol of torchdata's ``StatefulDataLoader``: a worker's state says which
batch it would read next, and loading the states of any number of workers resumes at the
first batch not yet handed out.
"""

from __future__ import annotations

import os
import sys
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple, Union

import numpy as np
import pyarrow as pa

from ._argcheck import _exprs, _filter, _int_in, _names, _rank
from ._native import loader as _native_loader
from .dataset import LanceDataset
from .dataset import dataset as open_dataset
from .file import ReaderResults

__all__ = ["Loader", "to_numpy"]

#: The shuffle modes, as ``shuffle=`` takes them.
SHUFFLES = ("none", "fragment", "clump", "row")


def _shuffle_mode(shuffle: Union[None, bool, str]) -> str:
    if shuffle is None or shuffle is False:
        return "none"
    if shuffle is True:
        return "row"
    if isinstance(shuffle, str) and shuffle in SHUFFLES:
        return shuffle
    raise ValueError(f"shuffle must be None, True, False or one of {SHUFFLES}, got {shuffle!r}")


def to_numpy(batch: pa.RecordBatch) -> Dict[str, np.ndarray]:
    """A batch as a dict of numpy arrays: fixed-width columns without nulls and
    fixed-size lists of them (as 2-D arrays) without copying, the rest as numpy converts
    them (strings and bytes as object arrays)."""
    out: Dict[str, np.ndarray] = {}
    for name, col in zip(batch.schema.names, batch.columns):
        t = col.type
        if pa.types.is_fixed_size_list(t) and col.null_count == 0 and pa.types.is_primitive(t.value_type):
            values = col.flatten()  # honours the array's offset
            out[name] = values.to_numpy(zero_copy_only=values.null_count == 0).reshape(len(col), t.list_size)
        elif pa.types.is_primitive(t) and not pa.types.is_boolean(t) and col.null_count == 0:
            out[name] = col.to_numpy(zero_copy_only=True)
        else:
            out[name] = col.to_numpy(zero_copy_only=False)
    return out


def _torch_worker() -> Optional[Tuple[int, int]]:
    """``(worker id, number of workers)`` inside a PyTorch data loader worker, when torch
    is already imported; ``None`` elsewhere."""
    data = sys.modules.get("torch.utils.data")
    info = getattr(data, "get_worker_info", lambda: None)() if data is not None else None
    if info is None:
        return None
    return int(info.id), int(info.num_workers)


class Loader:
    """Batches of a dataset for training: shuffled, sharded, resumable (see the module's
    documentation for the guarantees).

    Parameters
    ----------
    dataset : LanceDataset or str
        The dataset (a URI opens its latest version). The loader reads this version only.
    batch_size : int
        Rows per batch; only a rank's last batch of an epoch can be shorter (none with
        ``drop_last``).
    columns : list of str or dict of str to str, optional
        Columns to read (all by default), or output names mapped to SQL expressions. Blob
        columns are read as their bytes, fetched per batch.
    filter : str, optional
        A SQL predicate: train on the rows it keeps (evaluated once, when the loader is
        made).
    shuffle : None, bool or str
        ``None``/``False``, ``"fragment"``, ``"clump"``, ``"row"``/``True``.
    clump_size : int
        Rows per clump for ``shuffle="clump"`` (default 1024).
    seed : int
        The seed of every epoch's order (with the epoch).
    rank, world_size : int
        This process's share of each epoch.
    drop_last : bool
        Full batches only, as many on every rank; the rows past them are skipped that epoch.
    even_batches : bool
        When the rows cannot give every rank the same number of batches (fewer rows than
        ranks left for the last round), let the short ranks repeat one row (default), as
        distributed data parallel training needs; ``False`` gives them a batch fewer.
    batch_readahead : int
        Batches read ahead (in Rust, the GIL released).
    output : str
        ``"arrow"`` (``pyarrow.RecordBatch``) or ``"numpy"`` (dict of numpy arrays, see
        :func:`to_numpy`).
    transform : callable, optional
        Applied to each batch (after ``output``), in the process that iterates (each
        worker's own).
    with_row_id : bool
        Add ``_rowid``.
    """

    def __init__(
        self,
        dataset: Union[LanceDataset, str, "os.PathLike[str]"],
        batch_size: int = 128,
        *,
        columns: Optional[Union[Sequence[str], Dict[str, str]]] = None,
        filter: Optional[str] = None,
        shuffle: Union[None, bool, str] = None,
        clump_size: int = 1024,
        seed: int = 0,
        rank: int = 0,
        world_size: int = 1,
        drop_last: bool = False,
        even_batches: bool = True,
        batch_readahead: int = 4,
        output: str = "arrow",
        transform: Optional[Callable[[Any], Any]] = None,
        with_row_id: bool = False,
    ):
        self._ds = dataset if isinstance(dataset, LanceDataset) else open_dataset(os.fspath(dataset))
        self._batch_size = _int_in("batch_size", batch_size, 1)
        self._shuffle = _shuffle_mode(shuffle)
        self._clump_size = _int_in("clump_size", clump_size, 1)
        rank, self._world_size = _rank(rank, world_size)
        _int_in("seed", seed, 0)
        if output not in ("arrow", "numpy"):
            raise ValueError(f"output must be 'arrow' or 'numpy', got {output!r}")
        self._rank, self._seed = rank, seed
        self._drop_last, self._even_batches = bool(drop_last), bool(even_batches)
        self._readahead = _int_in("batch_readahead", batch_readahead, 1)
        self._output, self._transform, self._with_row_id = output, transform, bool(with_row_id)
        if isinstance(columns, dict):
            self._names: Optional[List[str]] = None
            self._exprs: Optional[List[Tuple[str, str]]] = _exprs(columns)
        else:
            self._names, self._exprs = _names(columns), None
        self._filter = filter = _filter(filter)
        self._rows = _native_loader.LoaderRows.scan(self._ds._native, filter)
        self._epoch = 0
        # Where the next iteration starts: batch `_next_batch` of the epoch, as seen by the
        # worker layout `_layout` ((worker, number of workers) whose sequence it is in), or
        # the first batch not yet handed out when `_layout` is None.
        self._next_batch = 0
        self._layout: Optional[Tuple[int, int]] = None
        self._finished = False  # the last iteration ran to the end of the epoch
        self._worker: Optional[Tuple[int, int]] = None

    # -- pickling: a worker process gets the same loader at the same version ------------

    def __getstate__(self) -> Dict[str, Any]:
        state = dict(self.__dict__)
        del state["_rows"]  # listed again from the (pinned) dataset in the new process
        return state

    def __setstate__(self, state: Dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._rows = _native_loader.LoaderRows.scan(self._ds._native, self._filter)

    # -- the epoch ---------------------------------------------------------------------

    @property
    def dataset(self) -> LanceDataset:
        """The dataset, at the version the loader reads."""
        return self._ds

    @property
    def epoch(self) -> int:
        """The epoch the next iteration reads."""
        return self._epoch

    @property
    def num_rows(self) -> int:
        """Rows the loader draws from (all ranks together): the live rows the filter keeps."""
        return len(self._rows)

    def set_epoch(self, epoch: int) -> None:
        """Read epoch ``epoch`` next, from its first batch. Call it before every epoch (as
        with PyTorch's ``DistributedSampler``): the epoch, with the seed, draws the order."""
        self._epoch = _int_in("epoch", epoch, 0)
        self._next_batch, self._layout, self._finished = 0, None, False

    def for_worker(self, worker_id: int, num_workers: int) -> "Loader":
        """Read only worker ``worker_id``'s batches of ``num_workers`` (``worker_id``,
        ``worker_id + num_workers``, ...). Inside a PyTorch data loader worker this is
        found automatically."""
        self._worker = _rank(worker_id, num_workers, ("worker_id", "num_workers"))
        return self

    def _plan_args(self) -> Tuple[int, str, int, int, int, int, int, bool, bool]:
        return (
            self._batch_size,
            self._shuffle,
            self._clump_size,
            self._seed,
            self._epoch,
            self._rank,
            self._world_size,
            self._drop_last,
            self._even_batches,
        )

    def _plan(self) -> "_native_loader.LoaderBatches":
        return self._rows.epoch(self._plan_args())

    def __len__(self) -> int:
        """Batches this rank reads per epoch (all its workers together)."""
        return self._rows.count(self._plan_args())

    def __iter__(self) -> Iterator[Any]:
        layout = self._worker or _torch_worker() or (0, 1)
        worker, workers = layout
        if self._finished:  # iterating again replays the epoch
            self._next_batch, self._layout, self._finished = 0, None, False
        # A position saved by this very worker layout continues its own sequence; any other
        # is the first batch not handed out, from which this worker takes its turn.
        first = self._next_batch if self._layout == layout else self._next_batch + worker
        self._next_batch, self._layout = first, layout
        stream = self._plan().read(
            {
                "columns": self._names,
                "exprs": self._exprs,
                "with_row_id": self._with_row_id,
                "start": first,
                "step": workers,
                "readahead": self._readahead,
            }
        )
        for batch in ReaderResults(stream).to_batches():
            self._next_batch += workers  # the next batch this process reads
            out: Any = to_numpy(batch) if self._output == "numpy" else batch
            yield out if self._transform is None else self._transform(out)
        self._finished = True

    # -- resuming ----------------------------------------------------------------------

    def _position(self) -> Tuple[int, Optional[Tuple[int, int]]]:
        """The next batch this process reads and the worker layout it belongs to. A worker
        that has not started yet reads its turn from the resume point first."""
        if self._layout is None and not self._finished:
            layout = self._worker or _torch_worker()
            if layout is not None:
                return self._next_batch + layout[0], layout
        return self._next_batch, self._layout

    def state_dict(self) -> Dict[str, Any]:
        """Where the loader is: the epoch and the next batch this process reads (with the
        worker layout that position belongs to: every earlier batch of that worker was
        handed out), and what the plan depends on (checked when loading)."""
        next_batch, layout = self._position()
        return {
            "epoch": self._epoch,
            "next_batch": next_batch,
            "worker": None if layout is None else list(layout),
            "seed": self._seed,
            "shuffle": self._shuffle,
            "clump_size": self._clump_size,
            "batch_size": self._batch_size,
            "rank": self._rank,
            "world_size": self._world_size,
            "drop_last": self._drop_last,
            "version": self._ds.version,
            "num_rows": len(self._rows),
        }

    def load_state_dict(self, state: Union[Dict[str, Any], Sequence[Dict[str, Any]]]) -> None:
        """Resume where ``state`` stopped.

        One state given back to the worker that saved it (what torchdata's
        ``StatefulDataLoader`` does) continues that worker's own sequence. A list of states
        (one per worker), or a state loaded under another worker layout, resumes at the
        first batch none of them had handed out, whatever the number of workers now."""
        states = [state] if isinstance(state, dict) else list(state)
        if not states:
            raise ValueError("load_state_dict needs at least one state")
        mine = self.state_dict()
        for s in states:
            for key in (
                "seed",
                "shuffle",
                "clump_size",
                "batch_size",
                "rank",
                "world_size",
                "drop_last",
                "version",
                "num_rows",
            ):
                if key in s and s[key] != mine[key]:
                    raise ValueError(f"the state was saved with {key}={s[key]!r}, this loader has {mine[key]!r}")
        epochs = {s["epoch"] for s in states}
        if len(epochs) != 1:
            raise ValueError(f"the states are from different epochs: {sorted(epochs)}")
        self._epoch = _int_in("epoch", epochs.pop(), 0)
        self._finished = False
        if len(states) == 1 and states[0].get("worker") is not None:
            self._next_batch = _int_in("next_batch", states[0]["next_batch"], 0)
            w, k = states[0]["worker"]
            self._layout = (int(w), int(k))
        else:
            self._next_batch = min(_int_in("next_batch", s["next_batch"], 0) for s in states)
            self._layout = None
