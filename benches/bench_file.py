"""End-to-end file benchmark: lancelet vs pylance (file format 2.0) vs Parquet, same run.

Writes one 2M-row table (ints, floats with nulls, low-cardinality strings, free text,
an 8-dim float32 embedding) with each writer, then times, on the same machine and in
the same process:

* full read (``read_all`` / ``pq.read_table``),
* projected read of two columns,
* ``take_rows`` of 1,000 random rows (sorted, as pylance requires).

Each reader reads the file written by pylance too, so reader speed is compared on the
same bytes. Prints a table of median times and ratios (pylance time / lancelet time:
above 1 means lancelet is faster).

    python benches/bench_file.py [--rows 2000000] [--repeat 5] [--out results.md]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import tempfile
import time

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

import lancelet.file as lf

try:
    import lance.file as plf
except ImportError:  # pragma: no cover - the bench is most useful with the oracle
    plf = None


def make_table(rows: int) -> pa.Table:
    rng = np.random.default_rng(7)
    words = np.array(["alpha", "beta", "gamma", "delta", "epsilon"])
    floats = rng.random(rows)
    mask = rng.random(rows) < 0.1
    text = pa.array([f"row {i} says {w}" for i, w in zip(range(rows), words[rng.integers(0, 5, rows)])])
    emb = pa.FixedSizeListArray.from_arrays(pa.array(rng.random(rows * 8, dtype=np.float32)), 8)
    return pa.table(
        {
            "id": pa.array(np.arange(rows, dtype=np.int64)),
            "value": pa.array(floats, mask=mask),
            "category": pa.array(words[rng.integers(0, 5, rows)]),
            "text": text,
            "embedding": emb,
        }
    )


def timeit(fn, repeat: int) -> float:
    fn()  # warm up (page cache, lazy init)
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=2_000_000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()

    table = make_table(args.rows)
    d = tempfile.mkdtemp(prefix="lancelet-bench-")
    ours, theirs, parquet = (os.path.join(d, n) for n in ("ours.lance", "pylance.lance", "t.parquet"))
    batches = table.to_batches(max_chunksize=100_000)

    rows = []

    def write_ours():
        with lf.LanceFileWriter(ours, table.schema, version="2.0") as w:
            for b in batches:
                w.write_batch(b)

    def write_theirs():
        with plf.LanceFileWriter(theirs, table.schema, version="2.0") as w:
            for b in batches:
                w.write_batch(b)

    rows.append(("write", timeit(write_ours, args.repeat), timeit(write_theirs, args.repeat) if plf else None,
                 timeit(lambda: pq.write_table(table, parquet), args.repeat)))

    idx = sorted(random.Random(1).sample(range(args.rows), 1000))
    for label, path in (("lancelet-written file", ours), ("pylance-written file", theirs)):
        if plf is None and path == theirs:
            continue
        cases = {
            "full read": (
                lambda: lf.LanceFileReader(path).read_all(batch_size=65536).to_table(),
                lambda: plf.LanceFileReader(path).read_all(batch_size=65536).to_table(),
                lambda: pq.read_table(parquet),
            ),
            "projected read (id, value)": (
                lambda: lf.LanceFileReader(path, columns=["id", "value"]).read_all(batch_size=65536).to_table(),
                lambda: plf.LanceFileReader(path, columns=["id", "value"]).read_all(batch_size=65536).to_table(),
                lambda: pq.read_table(parquet, columns=["id", "value"]),
            ),
            "take_rows(1000 random)": (
                lambda: lf.LanceFileReader(path).take_rows(idx).to_table(),
                lambda: plf.LanceFileReader(path).take_rows(idx).to_table(),
                lambda: pq.read_table(parquet).take(idx),
            ),
        }
        # Results must agree before they are timed.
        assert cases["full read"][0]().equals(cases["full read"][1]())
        assert cases["take_rows(1000 random)"][0]().equals(table.take(idx))
        for name, (ours_fn, theirs_fn, pq_fn) in cases.items():
            rows.append((f"{name} [{label}]", timeit(ours_fn, args.repeat),
                         timeit(theirs_fn, args.repeat) if plf else None, timeit(pq_fn, args.repeat)))

    lines = [
        f"rows: {args.rows:,}; file sizes: lancelet {os.path.getsize(ours):,} B, "
        + (f"pylance {os.path.getsize(theirs):,} B, " if plf else "")
        + f"parquet {os.path.getsize(parquet):,} B; median of {args.repeat}",
        "",
        "| case | lancelet | pylance | parquet | pylance/lancelet | parquet/lancelet |",
        "|---|---|---|---|---|---|",
    ]
    for name, a, b, c in rows:
        ratio = f"{b / a:.2f}x" if b else "-"
        lines.append(f"| {name} | {a * 1000:.1f} ms | {b * 1000:.1f} ms | {c * 1000:.1f} ms | {ratio} | {c / a:.2f}x |"
                     if b else f"| {name} | {a * 1000:.1f} ms | - | {c * 1000:.1f} ms | - | {c / a:.2f}x |")
    text = "\n".join(lines)
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
