"""Two builds of lancelet, one process, the same data: what a Cargo profile buys.

    bash scripts/wheel.sh --profile release --no-sdist --out dist/release
    bash scripts/wheel.sh --no-sdist --out dist/shipped                    # the shipped `dist` profile
    python benches/compare_builds.py dist/release/lancelet-*.whl dist/shipped/lancelet-*.whl

Each wheel's package is unpacked under another name (``lancelet_a``, ``lancelet_b``) so both load
side by side. formatbench's table (2M rows) is written once; then every case runs for both builds
in alternating order, round after round, and the medians of wall and process CPU time (all
threads) are compared: the second build over the first. Vector cases: an IVF_PQ build and k=10
searches at several nprobes on 200,000 x 128 clustered vectors (vecbench's data).
"""

from __future__ import annotations

import argparse
import importlib
import os
import shutil
import statistics
import sys
import tempfile
import time
import zipfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import formatbench  # noqa: E402
import vecbench  # noqa: E402


def load(wheel: str, name: str, into: str):
    with zipfile.ZipFile(wheel) as z:
        for info in z.infolist():
            if info.filename.startswith("lancelet/"):
                target = os.path.join(into, name, info.filename[len("lancelet/"):])
                os.makedirs(os.path.dirname(target), exist_ok=True)
                with open(target, "wb") as f:
                    f.write(z.read(info))
    return importlib.import_module(name)


def ab(label, mods, fn, rounds):
    """Medians of (wall, cpu) per build; the order alternates each round."""
    names = list(mods)
    for n in names:
        fn(mods[n])  # warm-up: the page cache and each build's caches
    res = {n: [] for n in names}
    for r in range(rounds):
        for n in names if r % 2 == 0 else names[::-1]:
            c0, t0 = time.process_time(), time.perf_counter()
            fn(mods[n])
            res[n].append((time.perf_counter() - t0, time.process_time() - c0))
    (wa, ca), (wb, cb) = ((statistics.median(w for w, _ in res[n]), statistics.median(c for _, c in res[n])) for n in names)
    print(f"{label:<22} {wa * 1e3:10.1f} {ca * 1e3:10.1f} {wb * 1e3:10.1f} {cb * 1e3:10.1f}   {wb / wa:5.2f}x {cb / ca:5.2f}x",
          flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("wheel_a")
    ap.add_argument("wheel_b")
    ap.add_argument("--rows", type=int, default=2_000_000)
    ap.add_argument("--rounds", type=int, default=12)
    ap.add_argument("--vectors", type=int, default=200_000, help="0 skips the vector cases")
    a = ap.parse_args()
    work = tempfile.mkdtemp(prefix="compare-builds-")
    try:
        sys.path.insert(0, work)
        mods = {"a": load(a.wheel_a, "lancelet_a", work), "b": load(a.wheel_b, "lancelet_b", work)}
        print(f"a = {os.path.basename(a.wheel_a)} ({os.path.dirname(a.wheel_a)})")
        print(f"b = {os.path.basename(a.wheel_b)} ({os.path.dirname(a.wheel_b)})")
        print(f"{'case':<22} {'a wall ms':>10} {'a cpu ms':>10} {'b wall ms':>10} {'b cpu ms':>10}   {'b/a wall, cpu'}")
        table = formatbench.make_table(a.rows, 42, False)
        uri = os.path.join(work, "table.lance")
        mods["a"].write_dataset(table, uri)
        idx = sorted(range(0, a.rows, max(1, a.rows // 1000)))[:1000]

        def write(m):
            path = os.path.join(work, "w.lance")
            shutil.rmtree(path, ignore_errors=True)
            m.write_dataset(table, path)

        ab("write", mods, write, max(4, a.rounds // 3))
        ab("full scan", mods, lambda m: m.dataset(uri).to_table(), a.rounds)
        ab("projected scan", mods, lambda m: m.dataset(uri).to_table(columns=["id", "value"]), a.rounds)
        ab("filtered scan", mods,
           lambda m: m.dataset(uri).to_table(columns=["id", "category", "value"], filter="value > 0.9"), a.rounds)
        ab("take 1,000 rows", mods, lambda m: m.dataset(uri).take(idx), a.rounds)
        if a.vectors:
            vt, x = vecbench.make(a.vectors, 128)
            vuri = os.path.join(work, "vectors.lance")
            mods["a"].write_dataset(vt, vuri)
            parts = int(a.vectors**0.5)
            ab("IVF_PQ build", mods,
               lambda m: m.dataset(vuri).create_index("vec", "IVF_PQ", num_partitions=parts, num_sub_vectors=16,
                                                      replace=True), 2)
            queries = x[:: max(1, a.vectors // 200)][:200]
            for nprobes in (1, 8, 32):
                def search(m, nprobes=nprobes):
                    ds = m.dataset(vuri)
                    for q in queries:
                        ds.to_table(nearest={"column": "vec", "q": q, "k": 10, "nprobes": nprobes}, columns=["id"])
                ab(f"200 searches, nprobes {nprobes}", mods, search, max(4, a.rounds // 3))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
