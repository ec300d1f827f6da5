"""Concurrent writers on one dataset: threads and processes appending at once, and
concurrent deletes, commit without losing or duplicating anything.

Appends never conflict (each retries onto the newest version); two deletes touching the
same fragment may conflict, and the loser raises ``CommitConflictError`` (pylance instead
re-runs the delete on the newest version, which the tests accept as well: either way the
final table must equal applying exactly the deletes that reported success).

``lib`` is lancelet (pylance itself when ``LANCELET_TEST_ORACLE_SELF=1``).
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
import time
from typing import Callable, List

import pyarrow as pa
import pytest

lance = pytest.importorskip("lance")

V2 = {"data_storage_version": "2.0"}

THREADS = 8
PROCESSES = 4
APPENDS_EACH = 3
ROWS_EACH = 50


# Special table (not in _tables): the subprocess writers below append rows of this schema without importing it.
def _table(start: int, n: int) -> pa.Table:
    ids = list(range(start, start + n))
    return pa.table({"id": pa.array(ids, pa.int64()), "payload": pa.array([f"p{i}" for i in ids])})


def _run_together(fns: List[Callable[[], object]]) -> List[object]:
    """Runs every fn in its own thread, released at the same moment; returns each result
    or the exception it raised."""
    barrier = threading.Barrier(len(fns))
    results: List[object] = [None] * len(fns)

    def run(k):
        barrier.wait()
        try:
            results[k] = fns[k]()
        except BaseException as e:  # noqa: BLE001 - reported to the test
            results[k] = e

    threads = [threading.Thread(target=run, args=(k,)) for k in range(len(fns))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    assert not any(t.is_alive() for t in threads), "a writer hung"
    return results


def assert_consistent_history(lib, uri: str, expected_ids: List[int], versions: int) -> None:
    """The latest version holds exactly ``expected_ids``, versions are 1..versions with no
    gap, every version opens and reads, fragment ids are unique, and pylance agrees."""
    ds = lib.dataset(uri)
    assert ds.version == versions
    assert [v["version"] for v in ds.versions()] == list(range(1, versions + 1))
    ids = ds.to_table(columns=["id"]).column("id").to_pylist()
    assert sorted(ids) == sorted(expected_ids)
    assert len(ids) == len(set(ids)), "duplicate rows"
    assert ds.count_rows() == len(expected_ids)
    frag_ids = [f.fragment_id for f in ds.get_fragments()]
    assert len(frag_ids) == len(set(frag_ids)), f"duplicate fragment ids {frag_ids}"
    for v in range(1, versions + 1):
        old = lib.dataset(uri, version=v)
        n = old.to_table(columns=["id"]).num_rows
        assert n == old.count_rows()
        assert lance.dataset(uri, version=v).count_rows() == n
    theirs = lance.dataset(uri)
    assert sorted(theirs.to_table(columns=["id"]).column("id").to_pylist()) == sorted(expected_ids)


# --------------------------------------------------------------------------------------
# appends
# --------------------------------------------------------------------------------------


def test_threads_appending_at_once_lose_nothing(lib, tmp_path):
    uri = str(tmp_path / "threads.lance")
    lib.write_dataset(_table(0, 10), uri, **V2)

    def writer(k):
        def run():
            for j in range(APPENDS_EACH):
                start = 1000 * (k + 1) + ROWS_EACH * j
                lib.write_dataset(_table(start, ROWS_EACH), uri, mode="append")
        return run

    results = _run_together([writer(k) for k in range(THREADS)])
    assert not [r for r in results if isinstance(r, BaseException)], results
    expected = list(range(10)) + [
        1000 * (k + 1) + ROWS_EACH * j + r for k in range(THREADS) for j in range(APPENDS_EACH) for r in range(ROWS_EACH)
    ]
    assert_consistent_history(lib, uri, expected, 1 + THREADS * APPENDS_EACH)
    # every version after the first adds exactly one append's rows
    counts = [lib.dataset(uri, version=v).count_rows() for v in range(1, 2 + THREADS * APPENDS_EACH)]
    assert counts == [10 + ROWS_EACH * k for k in range(len(counts))]


_CHILD = textwrap.dedent(
    """
    import os, sys, time
    import pyarrow as pa
    lib = __import__(sys.argv[1])
    uri, k, appends, rows, go = sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), sys.argv[6]
    print("ready", flush=True)
    while not os.path.exists(go):
        time.sleep(0.002)
    for j in range(appends):
        start = 1000 * (k + 1) + rows * j
        ids = list(range(start, start + rows))
        t = pa.table({"id": pa.array(ids, pa.int64()), "payload": pa.array([f"p{i}" for i in ids])})
        lib.write_dataset(t, uri, mode="append")
    print("done", flush=True)
    """
)


def test_processes_appending_at_once_lose_nothing(lib, lib_name, tmp_path):
    uri = str(tmp_path / "procs.lance")
    go = tmp_path / "go"
    lib.write_dataset(_table(0, 10), uri, **V2)
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _CHILD, lib_name, uri, str(k), str(APPENDS_EACH), str(ROWS_EACH), str(go)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for k in range(PROCESSES)
    ]
    try:
        for p in procs:
            assert p.stdout.readline().strip() == "ready", p.stderr.read()
        go.touch()
        for p in procs:
            out, err = p.communicate(timeout=300)
            assert p.returncode == 0, err
            assert out.strip() == "done"
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    expected = list(range(10)) + [
        1000 * (k + 1) + ROWS_EACH * j + r for k in range(PROCESSES) for j in range(APPENDS_EACH) for r in range(ROWS_EACH)
    ]
    assert_consistent_history(lib, uri, expected, 1 + PROCESSES * APPENDS_EACH)


def test_threads_and_a_process_appending_at_once(lib, lib_name, tmp_path):
    uri = str(tmp_path / "mixed.lance")
    go = tmp_path / "go"
    lib.write_dataset(_table(0, 10), uri, **V2)
    proc = subprocess.Popen(
        [sys.executable, "-c", _CHILD, lib_name, uri, "7", str(APPENDS_EACH), str(ROWS_EACH), str(go)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout.readline().strip() == "ready"
        go.touch()

        def writer(k):
            return lambda: [lib.write_dataset(_table(1000 * (k + 1) + ROWS_EACH * j, ROWS_EACH), uri, mode="append")
                            for j in range(APPENDS_EACH)]

        results = _run_together([writer(k) for k in range(3)])
        assert not [r for r in results if isinstance(r, BaseException)], results
        _, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    writers = [0, 1, 2, 7]
    expected = list(range(10)) + [
        1000 * (k + 1) + ROWS_EACH * j + r for k in writers for j in range(APPENDS_EACH) for r in range(ROWS_EACH)
    ]
    assert_consistent_history(lib, uri, expected, 1 + len(writers) * APPENDS_EACH)


_CONTENDER = textwrap.dedent(
    """
    import os, sys, time
    import pyarrow as pa
    lib = __import__(sys.argv[1])
    uri, k, seconds, go, role = sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), sys.argv[5], sys.argv[6]
    print("ready", flush=True)
    while not os.path.exists(go):
        time.sleep(0.002)
    end = time.monotonic() + seconds
    done, failed, j = 0, [], 0
    while time.monotonic() < end:
        try:
            if role == "append":
                ids = [100_000 * (k + 1) + j]
                lib.write_dataset(pa.table({"id": pa.array(ids, pa.int64()), "payload": ["x"]}), uri, mode="append")
            else:
                lib.dataset(uri).delete(f"id = {j % 10}")
            done += 1
        except Exception as e:
            failed.append(repr(e)[:300])
        j += 1
    print(done, len(failed), failed[:3], flush=True)
    """
)


@pytest.mark.parametrize("seconds", [6])
def test_appends_under_contention_never_give_up_and_share_commits_fairly(lib, lib_name, tmp_path, seconds):
    """Two appenders and a deleter committing as fast as they can: appends never conflict,
    so none may fail however often it loses the race; each appender gets a fair share of the
    commits (with exponential backoff one appender made 124 commits against the other's
    3,234 and some of its appends gave up); failed attempts leave no transaction file."""
    uri = str(tmp_path / "contended.lance")
    go = tmp_path / "go"
    lib.write_dataset(_table(0, 10), uri)
    roles = ["append", "append", "delete"]
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _CONTENDER, lib_name, uri, str(k), str(seconds), str(go), role],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for k, role in enumerate(roles)
    ]
    try:
        for p in procs:
            assert p.stdout.readline().strip() == "ready", p.stderr.read()
        go.touch()
        outs = []
        for p in procs:
            out, err = p.communicate(timeout=300)
            assert p.returncode == 0, err
            outs.append(out.split(maxsplit=2))
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    appended = [int(outs[k][0]) for k in (0, 1)]
    append_failures = [int(outs[k][1]) for k in (0, 1)]
    print(f"commits per appender {appended}, deleter {outs[2][0]}")
    assert append_failures == [0, 0], outs
    assert min(appended) >= 5 and min(appended) * 4 >= max(appended), f"unfair: {appended}"
    ds = lib.dataset(uri)
    ids = set(ds.to_table(columns=["id"]).column("id").to_pylist())
    for k in (0, 1):
        assert {100_000 * (k + 1) + j for j in range(appended[k])} <= ids
    # one transaction file per committed version: none left by lost or failed attempts
    txns = list((tmp_path / "contended.lance" / "_transactions").iterdir())
    assert len(txns) == ds.version, (len(txns), ds.version)


# --------------------------------------------------------------------------------------
# deletes
# --------------------------------------------------------------------------------------


def _apply_deletes(ids: List[int], predicates: List[Callable[[int], bool]]) -> List[int]:
    return [i for i in ids if not any(p(i) for p in predicates)]


def test_concurrent_deletes_on_one_fragment_either_commit_or_conflict(lib, tmp_path, errors):
    uri = str(tmp_path / "deletes.lance")
    lib.write_dataset(_table(0, 1000), uri, **V2)
    predicates = [f"id % 8 = {k}" for k in range(4)] + ["id >= 900", "id < 100"]
    matchers = [lambda i, k=k: i % 8 == k for k in range(4)] + [lambda i: i >= 900, lambda i: i < 100]
    handles = [lib.dataset(uri) for _ in predicates]  # all read version 1
    results = _run_together([lambda h=h, p=p: h.delete(p) for h, p in zip(handles, predicates)])
    won = [k for k, r in enumerate(results) if not isinstance(r, BaseException)]
    lost = [r for r in results if isinstance(r, BaseException)]
    for e in lost:
        assert isinstance(e, errors.commit_conflict), repr(e)
    assert won, "at least one delete must commit"
    expected = _apply_deletes(list(range(1000)), [matchers[k] for k in won])
    assert_consistent_history(lib, uri, expected, 1 + len(won))
    assert lance.dataset(uri).to_table().column("id").to_pylist() == expected


def test_concurrent_deletes_on_different_fragments_all_commit(lib, tmp_path):
    uri = str(tmp_path / "deletes.lance")
    lib.write_dataset(_table(0, 400), uri, max_rows_per_file=100, **V2)
    predicates = [f"id >= {100 * k} AND id < {100 * k + 10 + k}" for k in range(4)]
    handles = [lib.dataset(uri) for _ in predicates]
    results = _run_together([lambda h=h, p=p: h.delete(p) for h, p in zip(handles, predicates)])
    assert not [r for r in results if isinstance(r, BaseException)], results
    expected = [i for i in range(400) if not (i % 100) < 10 + i // 100]
    assert_consistent_history(lib, uri, expected, 5)


def test_appends_do_not_conflict_with_a_concurrent_delete(lib, tmp_path):
    uri = str(tmp_path / "mixed.lance")
    lib.write_dataset(_table(0, 100), uri, **V2)
    deleter = lib.dataset(uri)
    fns = [lambda: deleter.delete("id < 50")] + [
        (lambda k=k: lib.write_dataset(_table(1000 * (k + 1), 20), uri, mode="append")) for k in range(3)
    ]
    results = _run_together(fns)
    assert not [r for r in results if isinstance(r, BaseException)], results
    expected = list(range(50, 100)) + [1000 * (k + 1) + r for k in range(3) for r in range(20)]
    assert_consistent_history(lib, uri, expected, 5)


@pytest.mark.lancelet_only
def test_a_stale_delete_on_the_same_fragment_raises_commit_conflict(lib, tmp_path):
    # Without retries (by default it runs again on the newest version, as pylance 14 does);
    # pylance also rebases deletes of disjoint rows of one fragment, lancelet does not.
    uri = str(tmp_path / "stale.lance")
    lib.write_dataset(_table(0, 100), uri, **V2)
    a, b = lib.dataset(uri), lib.dataset(uri)
    a.delete("id < 10")
    with pytest.raises(lib.CommitConflictError):
        b.delete("id >= 90", conflict_retries=0)
    assert issubclass(lib.CommitConflictError, lib.LanceError)
    ds = lib.dataset(uri)
    assert ds.version == 2
    assert ds.to_table().column("id").to_pylist() == list(range(10, 100))


def test_a_stale_delete_on_another_fragment_commits(lib, tmp_path):
    uri = str(tmp_path / "stale.lance")
    lib.write_dataset(_table(0, 100), uri, max_rows_per_file=50, **V2)
    a, b = lib.dataset(uri), lib.dataset(uri)
    a.delete("id < 10")
    b.delete("id >= 90")
    ds = lib.dataset(uri)
    assert ds.version == 3
    assert ds.to_table().column("id").to_pylist() == list(range(10, 90))


def test_a_stale_delete_after_an_overwrite_conflicts(lib, tmp_path, errors):
    uri = str(tmp_path / "stale.lance")
    lib.write_dataset(_table(0, 100), uri, **V2)
    stale = lib.dataset(uri)
    lib.write_dataset(_table(500, 10), uri, mode="overwrite")
    with pytest.raises(errors.commit_conflict):
        stale.delete("id < 10")
    ds = lib.dataset(uri)
    assert ds.version == 2
    assert ds.to_table().column("id").to_pylist() == list(range(500, 510))


def test_appends_racing_an_overwrite_leave_a_consistent_history(lib, tmp_path, errors):
    """Each append lands either before the overwrite (and is replaced) or after it; none
    is lost from the history and the final rows are the overwrite's plus later appends."""
    uri = str(tmp_path / "race.lance")
    lib.write_dataset(_table(0, 10), uri, **V2)
    fns = [lambda: lib.write_dataset(_table(5000, 5), uri, mode="overwrite")] + [
        (lambda k=k: lib.write_dataset(_table(1000 * (k + 1), 3), uri, mode="append")) for k in range(4)
    ]
    results = _run_together(fns)
    for r in results:
        assert not isinstance(r, BaseException) or isinstance(r, errors.commit_conflict), repr(r)
    ds = lib.dataset(uri)
    versions = [v["version"] for v in ds.versions()]
    assert versions == list(range(1, len(versions) + 1))
    ids = sorted(ds.to_table().column("id").to_pylist())
    appended = sum(not isinstance(r, BaseException) for r in results[1:])
    if isinstance(results[0], BaseException):  # the overwrite lost: nothing was replaced
        assert len(versions) == 1 + appended
        assert len(ids) == 10 + 3 * appended
        return
    assert len(versions) == 2 + appended
    assert [i for i in ids if i < 1000] == []  # the first create was overwritten
    assert {5000, 5001, 5002, 5003, 5004} <= set(ids)
    # the version the overwrite made holds just its rows
    ow = [v for v in range(1, len(versions) + 1)
          if sorted(lib.dataset(uri, version=v).to_table().column("id").to_pylist()) == list(range(5000, 5005))]
    assert len(ow) == 1
    later = len(versions) - ow[0]
    assert len(ids) == 5 + 3 * later
    assert lance.dataset(uri).count_rows() == len(ids)


def test_readers_see_whole_versions_while_a_writer_appends(lib, tmp_path):
    uri = str(tmp_path / "readers.lance")
    lib.write_dataset(_table(0, 10), uri, **V2)
    stop = time.monotonic() + 60
    seen: List[int] = []

    def write():
        for j in range(15):
            lib.write_dataset(_table(100 + 10 * j, 10), uri, mode="append")

    def read():
        while len(seen) < 400 and time.monotonic() < stop:
            ds = lib.dataset(uri)
            n = ds.to_table(columns=["id"]).num_rows
            assert n == ds.count_rows() == 10 * ds.version
            seen.append(n)
            if ds.version == 16:
                return

    results = _run_together([write, read, read])
    assert not [r for r in results if isinstance(r, BaseException)], results
    assert lib.dataset(uri).count_rows() == 160
