"""pylance's samplers (``lance.sampler``), with their names, signatures and results, and
without their defects:

- ``set_epoch(e)`` changes the order of a randomized sampler (pylance's
  ``ShardedFragmentSampler`` and unfiltered ``ShardedBatchSampler`` ignore it and repeat
  epoch 0); every epoch's order is drawn from ``(seed, epoch)`` and replays;
- :func:`maybe_sample` returns exactly ``min(n, rows)`` distinct rows (pylance's can
  return fewer), with a filter too, and ``seed=`` makes it repeatable;
- the ranks of a sharded sampler read disjoint rows that together cover every row (every
  row the filter keeps) once per epoch.

The orders are lancelet's own: a randomized sampler does not give the same permutation
as pylance's for the same seed (pylance draws from Python's global ``random`` state).
For a training loop, :class:`lancelet.loader.Loader` adds clump and row shuffles,
worker processes and resuming mid-epoch.
"""

from __future__ import annotations

import importlib
import os
import random
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, Dict, Generic, Iterable, Iterator, List, Optional, Tuple, TypeVar, Union

import pyarrow as pa

from ._argcheck import _exprs, _filter, _names, _rank
from ._native import loader as _native_loader
from .dataset import LanceDataset
from .dataset import dataset as open_dataset
from .file import ReaderResults
from .fragment import LanceFragment

__all__ = [
    "maybe_sample",
    "reservoir_sampling",
    "Sampler",
    "FragmentSampler",
    "FullScanSampler",
    "ShardedFragmentSampler",
    "ShardedBatchSampler",
    "ShardedFixedBatchSampler",
]

_Columns = Optional[Union[List[str], Dict[str, str]]]


def _read(batches: "_native_loader.LoaderBatches", columns: _Columns, readahead: int = 4) -> Iterator[pa.RecordBatch]:
    names, exprs = (None, _exprs(columns)) if isinstance(columns, dict) else (_names(columns), None)
    stream = batches.read({"columns": names, "exprs": exprs, "readahead": max(1, readahead)})
    return iter(ReaderResults(stream).to_batches())


def _seed(seed: Optional[int]) -> int:
    return int.from_bytes(os.urandom(8), "little") if seed is None else int(seed) % 2**64


def maybe_sample(
    dataset: Union[str, "os.PathLike[str]", LanceDataset],
    n: int,
    columns: Union[List[str], Dict[str, str], str],
    batch_size: int = 10240,
    max_takes: int = 2048,
    filt: Optional[str] = None,
    *,
    seed: Optional[int] = None,
) -> Iterator[pa.RecordBatch]:
    """``min(n, rows)`` distinct rows of ``dataset`` (of the rows ``filt`` keeps), drawn at
    random, in batches of at most ``batch_size`` rows.

    With ``n`` above ``max_takes`` the rows come in at most ``max_takes`` runs of
    consecutive rows (the dataset cut into ``max_takes`` equal stretches, a run from each),
    which keeps the random reads few; otherwise they are a uniform sample. When ``n`` is at
    least the number of rows, every row is returned, in order. ``seed`` makes the draw
    repeatable (a fresh one otherwise).
    """
    ds = dataset if isinstance(dataset, LanceDataset) else open_dataset(os.fspath(dataset))
    if isinstance(columns, str):
        columns = [columns]
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise ValueError(f"n must be a non-negative int, got {n!r}")
    rows = _native_loader.LoaderRows.scan(ds._native, _filter(filt))
    batches = rows.sample(n, max(1, int(max_takes)), _seed(seed), int(batch_size))
    yield from _read(batches, columns)


T = TypeVar("T")


@dataclass(order=True)
class PrioritizedItem(Generic[T]):
    """An item with a random priority (pylance's helper of :func:`reservoir_sampling`)."""

    priority: int
    item: T = field(compare=False)


def reservoir_sampling(stream: Iterable[T], k: int) -> List[T]:
    """``min(k, len(stream))`` items of ``stream``, each item equally likely to be kept
    (Algorithm R: one pass, ``k`` items held)."""
    rng = random.Random()
    kept: List[T] = []
    for i, item in enumerate(stream):
        if i < k:
            kept.append(item)
        else:
            j = rng.randrange(i + 1)
            if j < k:
                kept[j] = item
    return kept


class Sampler(ABC):
    """A way to read a dataset as batches: ``sampler(dataset, batch_size=..., columns=...,
    filter=...)`` yields ``pyarrow.RecordBatch``. Subclasses implement ``__call__``."""

    @abstractmethod
    def __call__(
        self,
        dataset: LanceDataset,
        *args: Any,
        batch_size: int = 128,
        columns: _Columns = None,
        filter: Optional[str] = None,
        batch_readahead: int = 16,
        with_row_id: Optional[bool] = False,
        **kwargs: Any,
    ) -> Iterator[pa.RecordBatch]:
        """The batches of ``dataset``."""


class FragmentSampler(Sampler):
    """Reads whole fragments in the order ``iter_fragments`` gives."""

    def __call__(
        self,
        dataset: LanceDataset,
        *args: Any,
        batch_size: int = 128,
        columns: _Columns = None,
        filter: Optional[str] = None,
        batch_readahead: int = 16,
        with_row_id: Optional[bool] = False,
        **kwargs: Any,
    ) -> Iterator[pa.RecordBatch]:
        fragments = list(self.iter_fragments(dataset, *args, **kwargs))
        scanner = dataset.scanner(
            batch_size=batch_size,
            columns=columns,
            filter=filter,
            with_row_id=bool(with_row_id),
            batch_readahead=batch_readahead,
            fragments=fragments,
        )
        yield from scanner.to_batches()

    @abstractmethod
    def iter_fragments(self, dataset: LanceDataset, *args: Any, **kwargs: Any) -> Iterator[LanceFragment]:
        """The fragments to read, in order."""


class FullScanSampler(FragmentSampler):
    """Every fragment, in order (the default)."""

    def iter_fragments(self, dataset: LanceDataset, *args: Any, **kwargs: Any) -> Iterator[LanceFragment]:
        yield from dataset.get_fragments()


def _torch_rank() -> "tuple[int, int]":
    # Imported on demand: from_torch is for PyTorch jobs, and lancelet does not need torch.
    dist = importlib.import_module("torch.distributed")
    return int(dist.get_rank()), int(dist.get_world_size())


class ShardedFragmentSampler(FragmentSampler):
    """Rank ``rank`` reads fragments ``rank, rank + world_size, ...`` of the fragment list;
    with ``randomize`` the list is first put in an order drawn from ``(seed, epoch)``.
    Cheaper than :class:`ShardedBatchSampler` (whole fragments), but the ranks' row counts
    follow their fragments' sizes."""

    def __init__(self, rank: int, world_size: int, randomize: bool = False, seed: int = 0):
        _rank(rank, world_size)
        self._rank, self._world_size = rank, world_size
        self._randomize, self._seed, self._epoch = randomize, seed, 0

    def set_epoch(self, epoch: int) -> None:
        """Read epoch ``epoch`` next (its own fragment order when randomized)."""
        self._epoch = epoch

    @staticmethod
    def from_torch(randomize: bool = False, seed: int = 0) -> "ShardedFragmentSampler":
        """The sampler of this process's rank in a ``torch.distributed`` job."""
        rank, world_size = _torch_rank()
        return ShardedFragmentSampler(rank, world_size, randomize=randomize, seed=seed)

    def iter_fragments(self, dataset: LanceDataset, *args: Any, **kwargs: Any) -> Iterator[LanceFragment]:
        fragments = dataset.get_fragments()
        if self._randomize:
            order = _native_loader.permutation(len(fragments), _seed(self._seed), self._epoch)
            fragments = [fragments[i] for i in order]
        yield from fragments[self._rank :: self._world_size]


class ShardedBatchSampler(Sampler):
    """Rank ``rank`` reads every ``world_size``-th batch of ``batch_size`` rows (without a
    filter) or every ``world_size``-th row the filter keeps (with one), so the ranks'
    rows are disjoint and cover every row once; with ``randomize`` its batches come in an
    order drawn from ``(seed, epoch)``."""

    def __init__(self, rank: int, world_size: int, randomize: bool = False, seed: int = 0):
        _rank(rank, world_size)
        self._rank, self._world_size = rank, world_size
        self._randomize, self._seed, self._epoch = randomize, seed, 0
        self._len = 0

    def __len__(self) -> int:
        return self._len

    def set_epoch(self, epoch: int) -> None:
        """Read epoch ``epoch`` next (its own batch order when randomized)."""
        self._epoch = epoch

    @staticmethod
    def from_torch(randomize: bool = False, seed: int = 0) -> "ShardedBatchSampler":
        """The sampler of this process's rank in a ``torch.distributed`` job."""
        rank, world_size = _torch_rank()
        return ShardedBatchSampler(rank, world_size, randomize=randomize, seed=seed)

    def __call__(
        self,
        dataset: LanceDataset,
        *args: Any,
        batch_size: int = 128,
        columns: _Columns = None,
        filter: Optional[str] = None,
        batch_readahead: int = 16,
        with_row_id: Optional[bool] = None,
        **kwargs: Any,
    ) -> Iterator[pa.RecordBatch]:
        filter = _filter(filter)
        rows = _native_loader.LoaderRows.scan(dataset._native, filter)
        sharding = self._sharding(batch_size)
        if filter is None:
            ranges = _native_loader.sampler_ranges("interleaved", sharding, len(rows))
            batches = rows.positions([[r] for r in ranges])
        else:
            batches = rows.strided(sharding)
        return _read(batches, columns, batch_readahead)

    def _sharding(self, batch_size: int) -> Tuple[int, int, int, bool, int, int]:
        """The native side's sampler options for batches of ``batch_size``."""
        return (self._rank, self._world_size, batch_size, bool(self._randomize), _seed(self._seed), self._epoch)


class ShardedFixedBatchSampler(ShardedBatchSampler):
    """Index batches for a known number of rows: rank ``rank`` gets the ``rank``-th of
    ``world_size`` consecutive ranges of ``0..total_num_rows`` (each
    ``ceil(total_num_rows / world_size)`` long), cut into batches of ``batch_size``
    consecutive indices; iterating yields them as lists (a ``batch_sampler`` for a
    map-style data loader), in an order drawn from ``(seed, epoch)`` with ``randomize``.
    Called on a dataset, it reads like :class:`ShardedBatchSampler`."""

    def __init__(
        self,
        rank: int,
        world_size: int,
        randomize: bool = False,
        seed: int = 0,
        batch_size: int = 0,
        total_num_rows: int = 0,
    ):
        super().__init__(rank, world_size, randomize, seed)
        self._batch_size, self._total_num_rows = batch_size, total_num_rows
        self._len = self._compute_length()

    def _compute_length(self) -> int:
        if self._batch_size <= 0 or self._total_num_rows <= 0:
            return 0
        per_rank = -(-self._total_num_rows // self._world_size)
        mine = max(0, min(per_rank, self._total_num_rows - self._rank * per_rank))
        return -(-mine // self._batch_size)

    def __iter__(self) -> Iterator[List[int]]:
        ranges = _native_loader.sampler_ranges("fixed", self._sharding(self._batch_size), self._total_num_rows)
        for start, end in ranges:
            yield list(range(start, end))

    @staticmethod
    def from_torch(  # type: ignore[override]
        batch_size: int, total_num_rows: int, randomize: bool = False, seed: int = 0
    ) -> "ShardedFixedBatchSampler":
        """The sampler of this process's rank in a ``torch.distributed`` job."""
        rank, world_size = _torch_rank()
        return ShardedFixedBatchSampler(rank, world_size, randomize, seed, batch_size, total_num_rows)
