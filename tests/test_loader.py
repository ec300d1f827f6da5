"""``lancelet.loader.Loader``: every rank and worker reads its share of an epoch exactly once
(shuffles, filters, deletions, padding, drop_last), epochs differ and replay, worker
processes (fork, spawn, a stand-in for torch's worker info) reproduce the single-process
order, state_dict/load_state_dict resume mid-epoch, output forms, blob columns, the pinned
version, and bad input as typed errors.

The ids of the test datasets are written in increasing order, so ``id`` order is storage
order, and a batch's ids come back ascending.
"""

from __future__ import annotations

import copy
import itertools
import multiprocessing
import pickle
import subprocess
import sys
import textwrap
import types
from typing import Dict, List, Optional, Sequence

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import lancelet
from lancelet.errors import InvalidArgumentError
from lancelet.loader import Loader, to_numpy

# 1,320 rows in 11 fragments of 120; the deletions take every fifth row and all of
# fragment 3 (ids 360..479), which leaves 960 live rows in 10 fragments.
ROWS, PER_FILE = 1320, 120
LIVE = [i for i in range(ROWS) if i % 5 != 4 and not 360 <= i < 480]
FILTERS = {
    None: LIVE,
    "id % 3 != 0": [i for i in LIVE if i % 3 != 0],  # 640 rows
    "id = 17": [17],
    "id < 0": [],
}
SHUFFLES = [None, "fragment", ("clump", 1), ("clump", 7), ("clump", 100), ("clump", 5000), "row", True]


def table(start: int, n: int) -> pa.Table:
    ids = np.arange(start, start + n, dtype=np.int64)
    vec = np.arange(start * 4, (start + n) * 4, dtype=np.float32)
    return pa.table(
        {
            "id": ids,
            "x": pa.array(ids % 13, pa.int32()),
            "v": pa.FixedSizeListArray.from_arrays(pa.array(vec), 4),
            "s": [f"s{i}" for i in ids],
        }
    )


def make(path, n: int = ROWS, per_file: int = PER_FILE, delete: Optional[str] = None):
    ds = lancelet.write_dataset(table(0, n), str(path), max_rows_per_file=per_file)
    if delete:
        ds.delete(delete)
    return lancelet.dataset(str(path))


@pytest.fixture(scope="module")
def ds(tmp_path_factory):
    d = make(tmp_path_factory.mktemp("loader") / "d", delete="id % 5 = 4 OR (id >= 360 AND id < 480)")
    assert d.count_rows() == len(LIVE) == 960
    assert len(d.get_fragments()) == 10
    return d


def shuffle_kw(shuffle) -> dict:
    if isinstance(shuffle, tuple):
        return {"shuffle": shuffle[0], "clump_size": shuffle[1]}
    return {"shuffle": shuffle}


def ids(batches) -> List[List[int]]:
    return [b["id"].to_pylist() if isinstance(b, pa.RecordBatch) else list(b["id"]) for b in batches]


def epoch(ds, world_size: int = 1, **kw) -> List[List[List[int]]]:
    """Every rank's batches (as id lists) of one epoch, each rank from a new Loader."""
    out = []
    for rank in range(world_size):
        loader = Loader(ds, rank=rank, world_size=world_size, columns=["id"], **kw)
        got = ids(loader)
        assert len(loader) == len(got)
        out.append(got)
    return out


def check_epoch(
    per_rank: List[List[List[int]]],
    expected: Sequence[int],
    batch_size: int,
    drop_last: bool = False,
    even_batches: bool = True,
) -> None:
    """The guarantees of one epoch over all ranks (see ``lancelet.loader``)."""
    ws, n = len(per_rank), len(expected)
    counts = [len(r) for r in per_rank]
    flat = [i for rank in per_rank for b in rank for i in b]
    for rank in per_rank:
        for j, b in enumerate(rank):
            assert b == sorted(b), "a batch's rows come back in storage order"
            assert 0 < len(b) <= batch_size
            if j + 1 < len(rank) or drop_last:
                assert len(b) == batch_size, f"only a rank's last batch may be short: {[len(x) for x in rank]}"
    if drop_last:
        assert counts == [n // ws // batch_size] * ws
        assert len(flat) == len(set(flat))
        assert set(flat) <= set(expected)
        return
    assert set(flat) == set(expected)
    if n == 0:
        assert counts == [0] * ws
        return
    k = -(-n // (ws * batch_size))
    left = n - ws * (k - 1) * batch_size  # rows left for the last round
    short = max(0, ws - left)  # ranks that cannot have a k-th batch of their own
    if even_batches:
        assert counts == [k] * ws
        assert len(flat) - n == short
        assert short <= ws - 1
        # The short ranks all repeat one row, the first of the epoch's order.
        repeated = [i for i in set(flat) if flat.count(i) > 1]
        assert [flat.count(i) for i in repeated] == ([1 + short] if short else [])
    else:
        assert len(flat) == n, "no row twice without even_batches"
        assert sorted(counts, reverse=True) == [k] * (ws - short) + [k - 1] * short


# --------------------------------------------------------------------------------------
# 1. Exactly once
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("world_size", [1, 2, 3, 4])
@pytest.mark.parametrize("filter", [None, "id % 3 != 0"])
@pytest.mark.parametrize("shuffle", SHUFFLES, ids=str)
def test_every_live_row_once_per_epoch(ds, shuffle, filter, world_size):
    # 960 and 640 rows: batches of 40 divide them (except 640 in three shares), 77 does not.
    for batch_size in (40, 77):
        per_rank = epoch(ds, world_size, batch_size=batch_size, filter=filter, seed=5, **shuffle_kw(shuffle))
        check_epoch(per_rank, FILTERS[filter], batch_size)
        n = len(FILTERS[filter])
        full = n % (world_size * batch_size) == 0
        assert all(len(b) == batch_size for r in per_rank for b in r) == full


@settings(derandomize=True, max_examples=250, deadline=None)
@given(
    shuffle=st.sampled_from(SHUFFLES),
    filter=st.sampled_from(list(FILTERS)),
    world_size=st.integers(1, 4),
    batch_size=st.sampled_from([1, 3, 40, 64, 213, 239, 240, 241, 320, 959, 960, 4000]),
    seed=st.integers(0, 2**64 - 1),
    epoch_no=st.integers(0, 2**20),
    mode=st.sampled_from(["even", "uneven", "drop_last"]),
)
@example(shuffle="row", filter="id = 17", world_size=4, batch_size=3, seed=1, epoch_no=0, mode="even")
@example(shuffle=None, filter=None, world_size=4, batch_size=239, seed=1, epoch_no=0, mode="even")
@example(shuffle=("clump", 7), filter="id % 3 != 0", world_size=3, batch_size=213, seed=1, epoch_no=2, mode="even")
@example(shuffle=("clump", 7), filter="id % 3 != 0", world_size=3, batch_size=213, seed=1, epoch_no=2, mode="uneven")
def test_every_live_row_once_any_options(ds, shuffle, filter, world_size, batch_size, seed, epoch_no, mode):
    # 640 rows, three ranks, batches of 213: one row left for the last round, two ranks pad.
    if batch_size == 1 and filter in (None, "id % 3 != 0"):
        batch_size = 2  # 960 one-row batches per epoch only cost time
    kw = dict(drop_last=mode == "drop_last", even_batches=mode == "even")
    out = []
    for rank in range(world_size):
        loader = Loader(
            ds,
            batch_size,
            columns=["id"],
            filter=filter,
            seed=seed,
            rank=rank,
            world_size=world_size,
            **kw,
            **shuffle_kw(shuffle),
        )
        loader.set_epoch(epoch_no)
        out.append(ids(loader))
        assert loader.num_rows == len(FILTERS[filter])
    check_epoch(out, FILTERS[filter], batch_size, drop_last=kw["drop_last"], even_batches=kw["even_batches"])


def test_fewer_rows_than_ranks_for_the_last_round_pads_or_shortens(tmp_path):
    d = make(tmp_path / "p", n=1002, per_file=300)
    padded = epoch(d, 4, batch_size=250)
    assert [[len(b) for b in r] for r in padded] == [[250, 1]] * 4
    flat = [i for r in padded for b in r for i in b]
    assert len(flat) == 1004 and set(flat) == set(range(1002))
    assert [i for i in set(flat) if flat.count(i) > 1] == [0], "the padding repeats the first row of the order"
    assert flat.count(0) == 3
    assert [b for r in padded for b in r if len(b) == 1].count([0]) == 2
    check_epoch(padded, range(1002), 250)

    uneven = epoch(d, 4, batch_size=250, even_batches=False)
    assert [[len(b) for b in r] for r in uneven] == [[250, 1], [250, 1], [250], [250]]
    assert sorted(i for r in uneven for b in r for i in b) == list(range(1002))

    dropped = epoch(d, 4, batch_size=250, drop_last=True)
    assert [[len(b) for b in r] for r in dropped] == [[250]] * 4
    assert sorted(i for r in dropped for b in r for i in b) == list(range(1000))

    # Shuffled, the padding is the first row of the epoch's order, a row of the epoch.
    for shuffle in ("row", "fragment", "clump"):
        per_rank = epoch(d, 4, batch_size=250, shuffle=shuffle, clump_size=10, seed=3)
        check_epoch(per_rank, range(1002), 250)


def test_one_row_and_no_rows(ds, tmp_path):
    # One row, four ranks: every rank reads it (three of them as padding); without
    # even_batches only rank 0 does.
    assert epoch(ds, 4, batch_size=8, filter="id = 17") == [[[17]]] * 4
    assert epoch(ds, 4, batch_size=8, filter="id = 17", even_batches=False) == [[[17]], [], [], []]
    assert epoch(ds, 4, batch_size=8, filter="id = 17", drop_last=True) == [[], [], [], []]
    assert epoch(ds, 3, batch_size=8, filter="id < 0", shuffle="row") == [[], [], []]
    empty = lancelet.write_dataset(pa.table({"id": pa.array([], pa.int64())}), str(tmp_path / "e"))
    for shuffle in (None, "fragment", "clump", "row"):
        loader = Loader(empty, 4, shuffle=shuffle, world_size=2, rank=1)
        assert len(loader) == 0 and list(loader) == [] and loader.num_rows == 0


def test_ranks_read_contiguous_shares_of_the_order(ds):
    # Without a shuffle the order is the dataset's: rank r's share follows rank r - 1's.
    per_rank = epoch(ds, 3, batch_size=64)
    assert [i for r in per_rank for b in r for i in b] == LIVE
    # A one-rank epoch without a shuffle is a plain scan.
    assert [i for b in epoch(ds, 1, batch_size=100)[0] for i in b] == LIVE


def test_drop_last_skips_different_rows_each_epoch(ds):
    seen = []
    for e in range(3):
        out = []
        for rank in range(3):
            loader = Loader(ds, 100, columns=["id"], shuffle="row", seed=1, rank=rank, world_size=3, drop_last=True)
            loader.set_epoch(e)
            out.append(ids(loader))
        check_epoch(out, LIVE, 100, drop_last=True)
        seen.append(set(LIVE) - {i for r in out for b in r for i in b})
        assert len(seen[-1]) == 960 - 900
    assert seen[0] != seen[1] != seen[2]


# --------------------------------------------------------------------------------------
# Shuffle semantics
# --------------------------------------------------------------------------------------


def test_fragment_shuffle_reads_whole_fragments(tmp_path):
    d = make(tmp_path / "f", n=300, per_file=40, delete="id % 7 = 1")
    live = d.to_table(columns=["id"])["id"].to_pylist()
    frag_of = {i: i // 40 for i in live}
    orders = set()
    for e in range(4):
        loader = Loader(d, 1, columns=["id"], shuffle="fragment", seed=11)
        loader.set_epoch(e)
        seq = [b[0] for b in ids(loader)]
        assert sorted(seq) == live
        frags = [frag_of[i] for i in seq]
        runs = [f for f, _ in itertools.groupby(frags)]
        assert len(runs) == 8 == len(set(runs)), "each fragment is one run"
        for f in runs:
            assert [i for i in seq if frag_of[i] == f] == sorted(i for i in live if frag_of[i] == f)
        orders.add(tuple(runs))
    assert len(orders) > 1


@pytest.mark.parametrize("clump", [1, 7, 64, 500])
def test_clump_shuffle_reads_runs_of_consecutive_live_rows(ds, clump):
    # One-row batches show the epoch's order: a permutation of the clumps, each the
    # stretch keep[j * clump : (j + 1) * clump] of the rows the filter keeps.
    keep = [i for i in LIVE if i < 300]
    seq = [
        b[0] for b in ids(Loader(ds, 1, columns=["id"], filter="id < 300", shuffle="clump", clump_size=clump, seed=2))
    ]
    assert sorted(seq) == keep
    pos = {i: p for p, i in enumerate(keep)}
    at, starts = 0, []
    while at < len(seq):
        start = pos[seq[at]]
        assert start % clump == 0, "a clump is read from its start"
        run = keep[start : start + clump]
        assert seq[at : at + len(run)] == run
        starts.append(start)
        at += len(run)
    assert sorted(starts) == list(range(0, len(keep), clump))
    assert (starts == sorted(starts)) == (len(starts) == 1)


def test_row_shuffle_mixes_the_whole_dataset(ds):
    batches = ids(Loader(ds, 64, columns=["id"], shuffle="row", seed=9))
    assert sorted(i for b in batches for i in b) == LIVE
    assert batches != ids(Loader(ds, 64, columns=["id"]))
    # A uniform permutation: the first batch touches most of the ten fragments.
    assert len({i // PER_FILE for i in batches[0]}) >= 7
    assert ids(Loader(ds, 64, columns=["id"], shuffle=True, seed=9)) == batches


# --------------------------------------------------------------------------------------
# 2. Epochs and seeds
# --------------------------------------------------------------------------------------


def one_epoch(ds, e: int, seed: int, shuffle, world_size: int = 1, rank: int = 0, **kw) -> List[List[int]]:
    loader = Loader(ds, 50, columns=["id"], seed=seed, rank=rank, world_size=world_size, **shuffle_kw(shuffle), **kw)
    loader.set_epoch(e)
    assert loader.epoch == e
    return ids(loader)


@pytest.mark.parametrize("shuffle", ["fragment", ("clump", 30), "row"], ids=str)
def test_epochs_differ_and_replay(ds, shuffle):
    for world_size, rank in ((1, 0), (3, 2)):
        e0 = one_epoch(ds, 0, 4, shuffle, world_size, rank)
        e1 = one_epoch(ds, 1, 4, shuffle, world_size, rank)
        assert e0 != e1
        assert one_epoch(ds, 1, 4, shuffle, world_size, rank) == e1
        assert one_epoch(ds, 0, 4, shuffle, world_size, rank) == e0
        assert one_epoch(ds, 1, 5, shuffle, world_size, rank) != e1
        big = one_epoch(ds, 2**40, 2**64 - 1, shuffle, world_size, rank)
        assert big == one_epoch(ds, 2**40, 2**64 - 1, shuffle, world_size, rank) != e1


@pytest.mark.parametrize("shuffle", [None, False], ids=str)
def test_no_shuffle_is_dataset_order_every_epoch(ds, shuffle):
    first = one_epoch(ds, 0, 1, shuffle)
    assert [i for b in first for i in b] == LIVE
    assert one_epoch(ds, 7, 99, shuffle) == first


def test_iterating_again_repeats_the_epoch_until_set_epoch(ds):
    loader = Loader(ds, 100, columns=["id"], shuffle="row", seed=1)
    a, b = ids(loader), ids(loader)
    assert a == b
    loader.set_epoch(1)
    assert ids(loader) != a
    loader.set_epoch(0)
    assert ids(loader) == a


# --------------------------------------------------------------------------------------
# 3. Workers
# --------------------------------------------------------------------------------------


def round_robin(per_worker: List[List[List[int]]]) -> List[List[int]]:
    """What a data loader hands out when it takes a batch from each worker in turn."""
    out = []
    for j in itertools.count():
        row = [w[j] for w in per_worker if j < len(w)]
        if not row:
            return out
        out.extend(row)


@pytest.mark.parametrize("workers", [1, 2, 3, 5, 30])
@pytest.mark.parametrize("shuffle", [None, ("clump", 16), "row"], ids=str)
def test_workers_interleave_to_the_single_process_order(ds, shuffle, workers):
    for world_size, rank in ((1, 0), (3, 1)):
        kw = dict(columns=["id"], seed=3, rank=rank, world_size=world_size, **shuffle_kw(shuffle))
        whole = Loader(ds, 37, **kw)
        whole.set_epoch(2)
        single = ids(whole)
        per_worker = []
        for w in range(workers):
            loader = Loader(ds, 37, **kw)
            loader.set_epoch(2)
            assert loader.for_worker(w, workers) is loader
            mine = ids(loader)
            assert len(mine) == len(range(w, len(single), workers))
            per_worker.append(mine)
        assert round_robin(per_worker) == single


def _worker_batches(args) -> List[List[int]]:
    """Runs in a pool worker: one worker's batches of a pickled loader."""
    loader, w, n = args
    return ids(loader.for_worker(w, n))


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_worker_processes_reproduce_the_single_process_order(ds, tmp_path, method):
    if method not in multiprocessing.get_all_start_methods():
        pytest.skip(f"no {method} start method here")
    path = tmp_path / "w"
    d = make(path, n=700, per_file=100, delete="id % 9 = 0")
    loader = Loader(d, 32, columns=["id"], shuffle="row", seed=8, world_size=2, rank=1)
    loader.set_epoch(3)
    single = ids(loader)  # the parent reads before the workers start
    # An append after the loader was made: the workers still read the loader's version.
    lancelet.write_dataset(table(700, 50), str(path), mode="append")
    with multiprocessing.get_context(method).Pool(3) as pool:
        per_worker = pool.map(_worker_batches, [(loader, w, 3) for w in range(3)])
    assert round_robin(per_worker) == single
    assert all(i < 700 for b in single for i in b)


def test_a_pickled_loader_is_the_same_loader(ds):
    loader = Loader(
        ds,
        64,
        columns={"id": "id", "y": "x + 1"},
        filter="x > 2",
        shuffle="clump",
        clump_size=5,
        seed=6,
        world_size=2,
        rank=1,
        transform=None,
        output="numpy",
    )
    loader.set_epoch(4)
    again = pickle.loads(pickle.dumps(loader))
    assert again.epoch == 4 and again.num_rows == loader.num_rows and len(again) == len(loader)
    a, b = list(loader), list(again)
    assert len(a) == len(b)
    for x, y in zip(a, b):
        assert x.keys() == y.keys() == {"id", "y"}
        np.testing.assert_array_equal(x["id"], y["id"])
        np.testing.assert_array_equal(x["y"], y["y"])


def fake_torch(monkeypatch, info) -> None:
    """Puts a stand-in for ``torch.utils.data`` (only ``get_worker_info``) in sys.modules."""
    mod = types.ModuleType("torch.utils.data")
    mod.get_worker_info = lambda: info  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "torch.utils.data", mod)


def test_the_torch_worker_info_picks_the_share(ds, monkeypatch):
    def make_loader():
        loader = Loader(ds, 30, columns=["id"], shuffle="row", seed=1)
        loader.set_epoch(1)
        return loader

    single = ids(make_loader())
    assert "torch.utils.data" not in sys.modules or sys.modules["torch.utils.data"].get_worker_info() is None
    per_worker = []
    for w in range(4):
        fake_torch(monkeypatch, types.SimpleNamespace(id=w, num_workers=4, seed=0, dataset=None))
        per_worker.append(ids(make_loader()))
        assert ids(make_loader().for_worker(0, 1)) == single, "an explicit for_worker wins"
    assert round_robin(per_worker) == single
    # The main process of a torch job: get_worker_info() is None, the whole sequence.
    fake_torch(monkeypatch, None)
    assert ids(make_loader()) == single
    # A torch module without the function: ignored.
    monkeypatch.setitem(sys.modules, "torch.utils.data", types.ModuleType("torch.utils.data"))
    assert ids(make_loader()) == single
    monkeypatch.undo()
    assert ids(make_loader()) == single


def test_bad_worker_numbers_are_value_errors(ds):
    loader = Loader(ds, 10)
    for args in ((2, 2), (-1, 2), (0, 0), (True, 2), (0, 1.5)):
        with pytest.raises(ValueError):
            loader.for_worker(*args)


# --------------------------------------------------------------------------------------
# 4. Resume
# --------------------------------------------------------------------------------------

RESUME_KW = dict(columns=["id"], filter="x != 4", shuffle="clump", clump_size=9, seed=12, world_size=2, rank=1)


def resumable(ds, e: int = 2, **kw) -> Loader:
    loader = Loader(ds, 23, **{**RESUME_KW, **kw})
    loader.set_epoch(e)
    return loader


@settings(derandomize=True, max_examples=40, deadline=None)
@given(k=st.integers(0, 30), e=st.integers(0, 5))
def test_resume_after_k_batches_yields_exactly_the_rest(ds, k, e):
    full = ids(resumable(ds, e))
    assert len(full) == 20
    k = min(k, 20)
    loader = resumable(ds, e)
    it = iter(loader)
    taken = ids(itertools.islice(it, k))
    assert taken == full[:k]
    state = loader.state_dict()
    assert state["epoch"] == e and state["next_batch"] == k
    fresh = Loader(ds, 23, **RESUME_KW)  # epoch 0 until the state says otherwise
    fresh.load_state_dict(pickle.loads(pickle.dumps(state)))
    assert fresh.epoch == e
    assert ids(fresh) == full[k:]
    # After the resumed epoch the loader reads the epoch again from its start.
    assert ids(fresh) == full
    # A finished epoch's state says so (every batch read); iterating again replays it.
    assert ids(it) == full[k:] and loader.state_dict()["next_batch"] == 20
    assert ids(loader) == full


@pytest.mark.parametrize("before,after", [(1, 3), (3, 1), (2, 5), (4, 4), (3, 2)])
def test_resume_with_another_number_of_workers(ds, before, after):
    full = ids(resumable(ds))
    # The workers each hand out their batches in turn; the job stops after `handed` batches.
    handed = 3 * before + 1
    workers = [resumable(ds).for_worker(w, before) for w in range(before)]
    its = [iter(w) for w in workers]
    out = []
    for j in range(handed):
        out.extend(ids([next(its[j % before])]))
    assert out == full[:handed]
    states = [w.state_dict() for w in workers]
    assert min(s["next_batch"] for s in states) == handed
    per_worker = []
    for w in range(after):
        loader = Loader(ds, 23, **RESUME_KW)
        loader.load_state_dict(states)
        per_worker.append(ids(loader.for_worker(w, after)))
    assert round_robin(per_worker) == full[handed:]
    # One process takes the rest too.
    single = Loader(ds, 23, **RESUME_KW)
    single.load_state_dict(states)
    assert ids(single) == full[handed:]


def test_worker_copies_resume_at_the_first_batch_not_handed_out(ds):
    base = resumable(ds)
    full = ids(copy.copy(base))
    workers = [copy.copy(base).for_worker(w, 3) for w in range(3)]
    its = [iter(w) for w in workers]
    # Worker 1 ran ahead of the others (prefetching); the data loader handed out 0..4.
    got = {j: ids([next(its[j % 3])])[0] for j in (0, 1, 2, 3, 4, 7)}
    assert all(got[j] == full[j] for j in got)
    states = [w.state_dict() for w in workers]
    assert [s["next_batch"] for s in states] == [6, 10, 5]
    resumed = Loader(ds, 23, **RESUME_KW)
    resumed.load_state_dict(states)
    assert ids(resumed) == full[5:]


def test_resume_before_every_worker_has_handed_out_a_batch(ds):
    full = ids(resumable(ds))
    workers = [resumable(ds).for_worker(w, 3) for w in range(3)]
    its = [iter(w) for w in workers]
    assert ids([next(its[0])]) == full[:1]  # batch 0 handed out; workers 1 and 2 still starting
    resumed = Loader(ds, 23, **RESUME_KW)
    resumed.load_state_dict([w.state_dict() for w in workers])
    assert ids(resumed) == full[1:]


def test_resume_after_a_worker_has_finished_its_share(ds):
    full = ids(resumable(ds))
    n = len(full)
    workers = [resumable(ds).for_worker(w, n - 1) for w in range(n - 1)]
    its = [iter(w) for w in workers]
    out = [ids([next(its[j % (n - 1)])])[0] for j in range(n - 1)]
    assert out == full[: n - 1]
    assert list(its[1]) == []  # worker 1 has read all its batches (prefetching the end)
    resumed = Loader(ds, 23, **RESUME_KW)
    resumed.load_state_dict([w.state_dict() for w in workers])
    assert ids(resumed) == full[n - 1 :]


def test_each_worker_resumes_from_its_own_state_as_torchdata_restores_it(ds, monkeypatch):
    full = ids(resumable(ds))
    n, handed = 3, 7
    states = []
    for w in range(n):
        fake_torch(monkeypatch, types.SimpleNamespace(id=w, num_workers=n))
        loader = resumable(ds)
        mine = ids(itertools.islice(iter(loader), len(range(w, handed, n))))
        assert mine == full[w:handed:n]
        states.append(loader.state_dict())
    for w in range(n):
        fake_torch(monkeypatch, types.SimpleNamespace(id=w, num_workers=n))
        loader = Loader(ds, 23, **RESUME_KW)
        loader.load_state_dict(states[w])
        assert ids(loader) == [full[j] for j in range(handed, len(full)) if j % n == w], f"worker {w}"


def test_mismatched_states_are_refused(ds, tmp_path):
    loader = resumable(ds)
    next(iter(loader))
    state = loader.state_dict()
    for key, value in [
        ("seed", 13),
        ("batch_size", 24),
        ("shuffle", "row"),
        ("clump_size", 10),
        ("rank", 0),
        ("world_size", 3),
        ("drop_last", True),
        ("version", state["version"] + 1),
        ("num_rows", 1),
    ]:
        with pytest.raises(ValueError, match=key):
            loader.load_state_dict({**state, key: value})
        with pytest.raises(ValueError, match=key):
            Loader(ds, 23, **RESUME_KW).load_state_dict([state, {**state, key: value}])
    with pytest.raises(ValueError):
        Loader(ds, 24, **RESUME_KW).load_state_dict(state)
    with pytest.raises(ValueError):
        Loader(ds, 23, **{**RESUME_KW, "seed": 1}).load_state_dict(state)
    with pytest.raises(ValueError):
        loader.load_state_dict([state, {**state, "epoch": 3}])
    with pytest.raises(ValueError):
        loader.load_state_dict([])
    # Another version of the dataset: refused too.
    path = tmp_path / "v"
    d = make(path, n=300, per_file=100)
    old = Loader(d, 10)
    lancelet.write_dataset(table(300, 10), str(path), mode="append")
    new = Loader(str(path), 10)
    assert new.dataset.version == old.dataset.version + 1
    with pytest.raises(ValueError, match="version"):
        new.load_state_dict(old.state_dict())
    # The state survived the refusals unchanged.
    loader.load_state_dict(state)
    assert loader.state_dict() == state


# --------------------------------------------------------------------------------------
# 5. Output forms
# --------------------------------------------------------------------------------------


def test_numpy_output_without_copies(ds):
    loader = Loader(ds, 50, output="numpy", shuffle="row", seed=3, filter="x > 5")
    n = 0
    for batch in loader:
        assert isinstance(batch, dict) and list(batch) == ["id", "x", "v", "s"]
        ids_, v = batch["id"], batch["v"]
        assert ids_.dtype == np.int64 and batch["x"].dtype == np.int32
        assert v.dtype == np.float32 and v.shape == (len(ids_), 4)
        np.testing.assert_array_equal(v, (ids_[:, None] * 4 + np.arange(4)).astype(np.float32))
        np.testing.assert_array_equal(batch["x"], ids_ % 13)
        assert batch["s"].dtype == object and list(batch["s"]) == [f"s{i}" for i in ids_]
        for col in (ids_, batch["x"], v):
            assert not col.flags.owndata and col.base is not None, "a view of Arrow's buffer"
        n += len(ids_)
    assert n == sum(1 for i in LIVE if i % 13 > 5)


def test_to_numpy_shares_memory_with_arrow(ds):
    batch = next(iter(Loader(ds, 40)))
    for sliced in (batch, batch.slice(7, 20)):
        out = to_numpy(sliced)
        flat = sliced.column("v").flatten().to_numpy()
        assert np.shares_memory(out["v"], flat)
        assert np.shares_memory(out["id"], sliced.column("id").to_numpy())
        np.testing.assert_array_equal(out["id"], np.array(sliced["id"].to_pylist()))
        np.testing.assert_array_equal(out["v"], np.array(sliced["v"].to_pylist(), np.float32))
    # Nulls and booleans are converted (copied) rather than refused.
    t = pa.record_batch(
        {
            "i": pa.array([1, None, 3], pa.int64()),
            "b": [True, False, None],
            "f": pa.array([[1.0, 2.0], None, [5.0, 6.0]], pa.list_(pa.float32(), 2)),
        }
    )
    out = to_numpy(t)
    assert np.isnan(out["i"][1]) and out["i"][2] == 3
    assert list(out["b"]) == [True, False, None]
    assert len(out["f"]) == 3 and out["f"][1] is None


def test_sql_columns_row_ids_and_transform(ds):
    rowids = dict(zip(*ds.to_table(columns=["id"], with_row_id=True).to_pydict().values()))
    assert len(rowids) == 960
    loader = Loader(
        ds,
        64,
        columns={"x2": "id * 2", "id": "id", "t": "concat(s, '!')"},
        filter="id % 3 != 0",
        shuffle="row",
        seed=4,
        with_row_id=True,
        world_size=2,
        rank=0,
    )
    seen = []
    for b in loader:
        assert b.schema.names == ["x2", "id", "t", "_rowid"]
        d = b.to_pydict()
        assert d["x2"] == [2 * i for i in d["id"]]
        assert d["t"] == [f"s{i}!" for i in d["id"]]
        assert d["_rowid"] == [rowids[i] for i in d["id"]]
        seen += d["id"]
    other = [
        i
        for b in Loader(ds, 64, columns={"id": "id"}, filter="id % 3 != 0", shuffle="row", seed=4, world_size=2, rank=1)
        for i in b["id"].to_pylist()
    ]
    assert sorted(seen + other) == FILTERS["id % 3 != 0"]
    # Stored columns with row ids.
    for b in Loader(ds, 100, columns=["s", "id"], with_row_id=True, shuffle="clump", clump_size=20):
        assert b.schema.names == ["s", "id", "_rowid"]
        assert b["_rowid"].to_pylist() == [rowids[i] for i in b["id"].to_pylist()]
    # The transform runs on every batch, after the output conversion.
    sizes = list(Loader(ds, 100, transform=lambda b: b.num_rows))
    assert sizes == [100] * 9 + [60]
    sums = list(Loader(ds, 480, output="numpy", columns=["id"], transform=lambda d: int(d["id"].sum())))
    assert sums == [sum(LIVE[:480]), sum(LIVE[480:])]


# --------------------------------------------------------------------------------------
# 6. Blobs
# --------------------------------------------------------------------------------------


def blob_value(i: int) -> Optional[bytes]:
    return None if i % 9 == 4 else bytes([i % 251]) * (i % 40)


def test_blob_columns_come_back_as_bytes(tmp_path):
    n = 400
    schema = pa.schema(
        [pa.field("id", pa.int64()), lancelet.blob_field("b", inline_size_threshold=4, dedicated_size_threshold=16)]
    )
    t = pa.table({"id": list(range(n)), "b": lancelet.blob_array([blob_value(i) for i in range(n)])}, schema=schema)
    d = lancelet.write_dataset(t, str(tmp_path / "b"), max_rows_per_file=90)
    d.delete("id % 10 = 3")
    d = lancelet.dataset(str(tmp_path / "b"))
    keep = [i for i in range(n) if i % 10 != 3 and i > 20]
    seen = []
    for rank in range(2):
        for b in Loader(d, 32, filter="id > 20", shuffle="row", seed=1, rank=rank, world_size=2):
            assert b.schema.field("b").type == pa.large_binary()
            got = b.to_pydict()
            assert got["b"] == [blob_value(i) for i in got["id"]]
            seen += got["id"]
    assert sorted(seen) == keep
    assert any(blob_value(i) is None for i in seen) and any(blob_value(i) == b"" for i in seen)
    # Only the blob column, and as numpy (an object array of bytes and None).
    got = []
    for b in Loader(d, 50, columns=["b"], filter="id < 60", output="numpy"):
        assert list(b) == ["b"] and b["b"].dtype == object
        got += list(b["b"])
    assert got == [blob_value(i) for i in range(60) if i % 10 != 3]


# --------------------------------------------------------------------------------------
# 7. The pinned version
# --------------------------------------------------------------------------------------


def test_the_loader_reads_the_version_it_was_made_at(tmp_path):
    path = tmp_path / "pin"
    d = make(path, n=500, per_file=100)
    loaders = [Loader(d, 64, columns=["id"], shuffle=s, seed=1) for s in (None, "fragment", "row")]
    by_uri = Loader(str(path), 64, columns=["id"], filter="id >= 100")
    version = d.version
    lancelet.write_dataset(table(500, 300), str(path), mode="append")
    lancelet.dataset(str(path)).delete("id < 50")
    assert lancelet.dataset(str(path)).count_rows() == 750
    for loader in loaders:
        assert loader.dataset.version == version and loader.num_rows == 500
        assert sorted(i for b in ids(loader) for i in b) == list(range(500))
        again = pickle.loads(pickle.dumps(loader))
        assert sorted(i for b in ids(again) for i in b) == list(range(500))
    assert sorted(i for b in ids(by_uri) for i in b) == list(range(100, 500))
    # A loader made now reads the new version.
    assert sorted(i for b in ids(Loader(str(path), 64, columns=["id"])) for i in b) == list(range(50, 800))


# --------------------------------------------------------------------------------------
# 8. Bad input
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kw,error",
    [
        (dict(batch_size=0), ValueError),
        (dict(batch_size=-3), ValueError),
        (dict(batch_size=2.5), ValueError),
        (dict(batch_size=True), ValueError),
        (dict(rank=2, world_size=2), ValueError),
        (dict(rank=-1), ValueError),
        (dict(world_size=0), ValueError),
        (dict(shuffle="bogus"), ValueError),
        (dict(shuffle="global"), ValueError),
        (dict(shuffle=1), ValueError),
        (dict(shuffle="clump", clump_size=0), ValueError),
        (dict(clump_size=-1), ValueError),
        (dict(seed=-1), ValueError),
        (dict(output="pandas"), ValueError),
        (dict(batch_readahead=0), ValueError),
        (dict(filter="id >>> 3"), InvalidArgumentError),
        (dict(filter="no_such_column = 1"), InvalidArgumentError),
        (dict(filter="id +"), InvalidArgumentError),
        (dict(columns=["no_such_column"]), InvalidArgumentError),
        (dict(columns={"y": "no_such_column + 1"}), InvalidArgumentError),
        (dict(columns={"y": "id +* 1"}), InvalidArgumentError),
    ],
    ids=lambda v: "-".join(f"{k}={v[k]!r}" for k in v) if isinstance(v, dict) else v.__name__,
)
def test_bad_input_is_a_typed_error(ds, kw, error):
    with pytest.raises(error):
        loader = Loader(ds, **{"batch_size": 10, **kw})
        list(loader)


def test_bad_epochs_and_huge_numbers(ds):
    loader = Loader(ds, 10, shuffle="row")
    for bad in (-1, 1.0, True, "1"):
        with pytest.raises(ValueError):
            loader.set_epoch(bad)
    # Past u64: refused as typed errors, before or when the epoch is planned.
    for kw in (dict(seed=2**64), dict(batch_size=2**70), dict(clump_size=2**64, shuffle="clump")):
        with pytest.raises((ValueError, OverflowError)):
            list(Loader(ds, **{"batch_size": 10, **kw}))
    with pytest.raises(ValueError):
        loader.set_epoch(2**64)
    # Big but representable numbers just work.
    assert [len(b) for b in Loader(ds, 2**62, columns=["id"])] == [960]
    assert sum(len(b) for b in Loader(ds, 100, columns=["id"], shuffle="clump", clump_size=2**63)) == 960
    # More ranks than rows: every rank gets one row (most of them padding).
    assert ids(Loader(ds, 10, columns=["id"], world_size=10_000, rank=9_999)) == [[LIVE[0]]]
    assert ids(Loader(ds, 10, columns=["id"], world_size=10_000, rank=9_999, even_batches=False)) == []


def test_a_batch_size_times_world_size_past_u64_is_not_a_panic(ds):
    loader = Loader(ds, 2**63, world_size=2)
    try:
        assert len(loader) == 1
        assert [len(b) for b in loader] == [480]
    except BaseException as e:  # the panic is a BaseException: fail the test, not the run
        if isinstance(e, (KeyboardInterrupt, SystemExit)):
            raise
        pytest.fail(f"{type(e).__name__}: {e}")


def test_a_huge_world_size_does_not_abort_the_process(ds):
    code = textwrap.dedent(
        f"""
        from lancelet.loader import Loader
        loader = Loader({ds.uri!r}, 10, world_size=2**40, rank=5)
        try:
            print(len(loader), [b.num_rows for b in loader])
        except (ValueError, OverflowError, MemoryError) as e:
            print("refused:", type(e).__name__)
        """
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[:300]


# --------------------------------------------------------------------------------------
# Interop: a dataset written by pylance
# --------------------------------------------------------------------------------------


@pytest.mark.interop
def test_a_pylance_dataset_is_read_exactly_once(tmp_path):
    lance = pytest.importorskip("lance")
    uri = str(tmp_path / "pl.lance")
    lance.write_dataset(table(0, 600), uri, max_rows_per_file=110)
    lance.dataset(uri).delete("id % 4 = 1 OR id BETWEEN 220 AND 329")
    expected = lance.dataset(uri).to_table(columns=["id"], filter="x < 9")["id"].to_pylist()
    d = lancelet.dataset(uri)
    for shuffle in (None, "fragment", ("clump", 13), "row"):
        check_epoch(epoch(d, 3, batch_size=17, filter="x < 9", seed=2, **shuffle_kw(shuffle)), expected, 17)
    batches = list(Loader(d, 64, output="numpy", filter="x < 9", shuffle="row"))
    got: Dict[int, np.ndarray] = {int(i): v for b in batches for i, v in zip(b["id"], b["v"])}
    assert sorted(got) == expected
    assert all((got[i] == np.arange(4 * i, 4 * i + 4, dtype=np.float32)).all() for i in expected)
