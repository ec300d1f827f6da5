"""A writer killed with SIGKILL at random moments never leaves a half-committed dataset.

A subprocess commits versions in a loop following a fixed plan (what version ``w`` does
depends only on ``w``: appends, small and large deletes, overwrites) and prints
``"<version> <row count>"`` after each commit. The test kills it after a random delay,
then checks that the dataset opens with lancelet and pylance, that its latest version is
the last one printed or the next one, and that its rows are exactly the plan's rows at
that version. The next writer continues from there; at the end every version of the
history is checked.

``LANCELET_CRASH_KILLS`` sets the kills per test (default 10). ``lib`` is lancelet
(pylance itself when ``LANCELET_TEST_ORACLE_SELF=1``).
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import lancelet
from _support import kill_after_ready, referenced_files

lance = pytest.importorskip("lance")

KILLS = int(os.environ.get("LANCELET_CRASH_KILLS", "10"))

# The plan, shared by the writer subprocess (as source) and the test (exec'd below).
_PLAN = textwrap.dedent(
    """
    import pyarrow as pa

    ROWS = 2000
    STRIDE = 10_000


    def chunk(w):
        ids = list(range(w * STRIDE, w * STRIDE + ROWS))
        return pa.table({
            "id": pa.array(ids, pa.int64()),
            "s": pa.array([f"row-{i}" for i in ids]),
            "f": pa.array([i / 3 for i in ids], pa.float64()),
        })


    def op(mode, w):
        '''What version ``w`` (>= 2) does: ("append" | "overwrite", table) or ("delete", predicate).'''
        if mode == "mixed":
            base = (w - 1) * STRIDE  # version w - 1 always wrote chunk w - 1
            if w % 10 == 0:
                return "delete", f"id >= {base} AND id % 2 = 0"  # half a fragment
            if w % 5 == 0:
                return "delete", f"id >= {base} AND id < {base + 50}"
            if w % 13 == 0:
                return "overwrite", chunk(w)
        return "append", chunk(w)
    """
)

_WRITER = _PLAN + textwrap.dedent(
    """
    import os
    import sys
    lib = __import__(sys.argv[1])
    uri, mode, steps = sys.argv[2], sys.argv[3], int(sys.argv[4])
    version = lib.dataset(uri).latest_version
    print("ready", version, flush=True)
    done = 0
    while steps < 0 or done < steps:
        w = version + 1
        kind, arg = op(mode, w)
        if kind == "delete":
            lib.dataset(uri).delete(arg)
        else:
            lib.write_dataset(arg, uri, mode=kind)
        ds = lib.dataset(uri)
        assert ds.version == w, (ds.version, w)
        # One write(2) per report line: a kill can stop the writer between lines, never
        # inside one.
        os.write(1, f"{w} {ds.count_rows()}\\n".encode())
        version = w
        done += 1
    """
)

_plan: dict = {}
exec(_PLAN, _plan)


class Expected:
    """The plan's ids at each version, computed incrementally."""

    def __init__(self, mode: str):
        self.mode = mode
        self.ids = {1: np.arange(_plan["STRIDE"], _plan["STRIDE"] + _plan["ROWS"], dtype=np.int64)}

    def __call__(self, v: int) -> np.ndarray:
        for w in range(max(self.ids) + 1, v + 1):
            prev = self.ids[w - 1]
            kind, arg = _plan["op"](self.mode, w)
            new = np.asarray(_plan["chunk"](w).column("id").to_numpy(), dtype=np.int64)
            if kind == "append":
                self.ids[w] = np.concatenate([prev, new])
            elif kind == "overwrite":
                self.ids[w] = new
            else:
                base = (w - 1) * _plan["STRIDE"]
                if "% 2" in arg:
                    gone = (prev >= base) & (prev % 2 == 0)
                else:
                    gone = (prev >= base) & (prev < base + 50)
                assert gone.any(), "every planned delete removes rows"
                self.ids[w] = prev[~gone]
        return self.ids[v]


def _sorted_ids(ds) -> np.ndarray:
    return np.sort(ds.to_table(columns=["id"]).column("id").to_numpy())


def _check_version(lib, uri: str, v: int, expected: Expected, rows: bool = True) -> None:
    """Both libraries open version ``v`` with the plan's row count (and ids if ``rows``)."""
    want = np.sort(expected(v))
    ours = lib.dataset(uri, version=v)
    assert ours.count_rows() == len(want), f"version {v}"
    theirs = lance.dataset(uri, version=v)
    assert theirs.count_rows() == len(want), f"pylance, version {v}"
    if rows:
        assert np.array_equal(_sorted_ids(ours), want), f"version {v}"
        assert np.array_equal(_sorted_ids(theirs), want), f"pylance, version {v}"


def _start_writer(lib_name: str, uri: str, mode: str, steps: int) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-c", _WRITER, lib_name, uri, mode, str(steps)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


@pytest.mark.parametrize("mode,seed", [("appends", 1), ("mixed", 2), ("mixed", 3)])
def test_killed_writer_leaves_a_committed_version(lib, lib_name, tmp_path, mode, seed):
    uri = str(tmp_path / "crash.lance")
    rng = random.Random(seed)
    expected = Expected(mode)
    lib.write_dataset(_plan["chunk"](1), uri, data_storage_version="2.0")
    printed = 1  # the last version a writer reported as committed
    for _ in range(KILLS):
        proc = _start_writer(lib_name, uri, mode, -1)
        first, out = kill_after_ready(proc, rng.uniform(0, 0.3))
        assert int(first[1]) in (printed, printed + 1)
        assert proc.returncode == -signal.SIGKILL
        for line in out.splitlines():
            words = line.split()
            assert len(words) == 2, f"unexpected writer output line {line!r} in {out!r}"
            w, count = map(int, words)
            assert count == len(expected(w)), f"writer reported {count} rows at version {w}"
            printed = w
        latest = lib.dataset(uri).version
        assert lance.dataset(uri).version == latest
        assert latest in (printed, printed + 1), f"latest {latest}, last reported {printed}"
        _check_version(lib, uri, latest, expected)
        printed = latest

    # writing continues normally after the last kill
    proc = _start_writer(lib_name, uri, mode, 12)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    lines = out.splitlines()
    assert lines[0].split() == ["ready", str(printed)]
    assert [int(line.split()[0]) for line in lines[1:]] == list(range(printed + 1, printed + 13))
    final = printed + 12

    ds = lib.dataset(uri)
    assert ds.version == final
    assert [v["version"] for v in ds.versions()] == list(range(1, final + 1))
    assert [v["version"] for v in lance.dataset(uri).versions()] == list(range(1, final + 1))
    for v in range(1, final + 1):  # every version opens; rows of a sample are compared
        _check_version(lib, uri, v, expected, rows=v % 7 == 0 or v > final - 3)
    lance.dataset(uri).validate()
    assert final > KILLS, "the writers committed too little to test anything"

    # Cleanup removes the killed writers' orphans and the old versions' files, nothing else.
    def on_disk():
        dirs = [d for d in ("data", "_deletions") if os.path.isdir(os.path.join(uri, d))]
        return {os.path.join(d, f) for d in dirs for f in os.listdir(os.path.join(uri, d))}

    orphans = on_disk() - referenced_files(lancelet, uri)
    keep = final // 2
    stats = lib.dataset(uri).cleanup_old_versions(retain_versions=keep, delete_unverified=True)
    assert stats.old_versions == final - keep
    assert stats.data_files_removed + stats.deletion_files_removed >= len(orphans)
    assert on_disk() == referenced_files(lancelet, uri)
    for v in range(final - keep + 1, final + 1):
        _check_version(lib, uri, v, expected, rows=v % 3 == 0 or v == final)
    lance.dataset(uri).validate()
