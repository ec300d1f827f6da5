"""merge_insert benchmark: lancelet vs pylance 14, an upsert of ``--source`` rows into a
dataset of ``--rows`` rows.

The target has ``id`` (int64, a random permutation), ``x`` (float64) and ``s`` (a short
string); the source has half its rows matching existing ids (updated) and half new ids
(inserted). Each run merges into a fresh copy of one dataset written by pylance, with
``when_matched_update_all().when_not_matched_insert_all()`` on ``id``, in a child process
of its own, so that each library's peak memory is its own. Reports, per library, the median
wall time, the CPU time (user + system, all threads) and the peak RSS of the child (which
includes loading the source, the same for both), and the ratio lancelet / pylance. The
results are checked equal (row count and a sample of updated and inserted rows).

    python benches/bench_merge_insert.py [--rows 2000000] [--source 100000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq


def make_target(n: int, seed: int = 3) -> pa.Table:
    rng = np.random.default_rng(seed)
    ids = rng.permutation(n).astype(np.int64)
    return pa.table({
        "id": pa.array(ids),
        "x": pa.array(rng.random(n)),
        "s": pa.array([f"row-{i:09d}" for i in ids]),
    })


def make_source(n_target: int, n: int, seed: int = 4) -> pa.Table:
    rng = np.random.default_rng(seed)
    half = n // 2
    updated = rng.choice(n_target, half, replace=False).astype(np.int64)
    inserted = np.arange(n_target, n_target + (n - half), dtype=np.int64)
    ids = np.concatenate([updated, inserted])
    rng.shuffle(ids)
    return pa.table({
        "id": pa.array(ids),
        "x": pa.array(-rng.random(len(ids))),
        "s": pa.array([f"new-{i:09d}" for i in ids]),
    })


def _hwm_mib() -> float:
    """This process's peak resident memory (VmHWM: unlike ru_maxrss, not inherited from the
    parent that forked it)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def child(lib_name: str, uri: str, source_path: str) -> None:
    """Runs one merge and prints its measurements as JSON."""
    if lib_name == "lancelet":
        import lancelet as lib
    else:
        import lance as lib
    source = pq.read_table(source_path)
    ds = lib.dataset(uri)
    n0 = ds.count_rows()
    rss_before = _hwm_mib()
    t0, c0 = time.perf_counter(), time.process_time()
    res = ds.merge_insert("id").when_matched_update_all().when_not_matched_insert_all().execute(source)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    peak = _hwm_mib()
    check = lib.dataset(uri)
    sample = check.to_table(columns=["id", "s"], filter=f"id < 1000 OR id >= {n0 - 10}").to_pylist()
    print(json.dumps({
        "wall": wall, "cpu": cpu, "peak_rss_mib": peak, "rss_before_mib": rss_before,
        "result": {k: int(v) for k, v in res.items()}, "rows": check.count_rows(),
        "sample": sorted((r["id"], r["s"]) for r in sample),
    }))


def run(lib_name: str, base: str, work: str, source_path: str) -> dict:
    uri = os.path.join(work, f"{lib_name}.lance")
    shutil.rmtree(uri, ignore_errors=True)
    shutil.copytree(base, uri)
    out = subprocess.run([sys.executable, __file__, "--child", lib_name, uri, source_path],
                         check=True, capture_output=True, text=True)
    shutil.rmtree(uri, ignore_errors=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=2_000_000)
    ap.add_argument("--source", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--child", nargs=3, metavar=("LIB", "URI", "SOURCE"))
    args = ap.parse_args()
    if args.child:
        child(*args.child)
        return
    import lance

    work = tempfile.mkdtemp(prefix="bench_merge_insert_")
    try:
        base = os.path.join(work, "base.lance")
        lance.write_dataset(make_target(args.rows), base)
        source_path = os.path.join(work, "source.parquet")
        pq.write_table(make_source(args.rows, args.source), source_path)
        runs: dict = {"pylance": [], "lancelet": []}
        for _ in range(args.repeat):
            for name in ("pylance", "lancelet"):
                runs[name].append(run(name, base, work, source_path))
        a, b = runs["pylance"][0], runs["lancelet"][0]
        assert (a["result"], a["rows"], a["sample"]) == (b["result"], b["rows"], b["sample"]), "results differ"
        print(f"merge_insert of {args.source:,} rows into {args.rows:,} (update + insert), "
              f"median of {args.repeat}: {a['result']}")
        print(f"{'':10} {'wall s':>8} {'cpu s':>8} {'peak RSS MiB':>13} {'(before merge)':>15}")
        med = {}
        for name, rs in runs.items():
            med[name] = {k: statistics.median(r[k] for r in rs) for k in ("wall", "cpu", "peak_rss_mib",
                                                                            "rss_before_mib")}
            m = med[name]
            print(f"{name:10} {m['wall']:8.3f} {m['cpu']:8.3f} {m['peak_rss_mib']:13.0f} {m['rss_before_mib']:15.0f}")
        for k in ("wall", "cpu", "peak_rss_mib"):
            print(f"ratio lancelet / pylance, {k}: {med['lancelet'][k] / med['pylance'][k]:.2f}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
