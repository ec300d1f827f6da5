#!/usr/bin/env python3
"""bench_take_random -- random-row reads (a training loader's full row shuffle), per row.

Each batch is ``--batch`` rows at uniformly random positions of the dataset, read with
``Dataset.take`` (``--what take``) or by ``lancelet.loader.Loader(shuffle="row")``
(``--what loader``); both end in the dataset's ``take_addresses`` and the file reader's
partial page reads. Measured per row: wall (perf_counter) and CPU (process_time, all
threads), after one warm-up batch (the data is on local disk, in the page cache).

Data: ``--rows`` rows (one file of up to ``--rows-per-file`` rows each, 2.2 file format
defaults) generated with numpy from a fixed seed: id int64, label int32, score float64, a
16-character string and a ``--dim``-dim float32 embedding (fixed-size list), as
``benches/bench_loader.py``'s tabular data.

How to run (from the repository root, with the project's virtualenv):

    python benches/bench_take_random.py                       # 300k rows, take and loader
    python benches/bench_take_random.py --rows 500000 --pylance   # also pylance's take
    python benches/bench_take_random.py --dir DIR --keep      # write once into DIR, keep it
    # a small take loop for a profiler, on data written before with --dir DIR --keep:
    valgrind --tool=callgrind python benches/bench_take_random.py --dir DIR --reuse \\
        --what take --batches 3
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time
from typing import Callable

import numpy as np
import pyarrow as pa

# The same tabular rows as the loader bench (run from the repository root or benches/).
from bench_loader import tabular_chunks

import lancelet
from lancelet.loader import Loader


def schema(dim: int) -> pa.Schema:
    return next(tabular_chunks(1, dim, 1, 0)).schema


def timed(label: str, rows_per_batch: int, batches: int, read: Callable[[int], int]) -> None:
    read(-1)  # warm-up
    rows = 0
    c0, t0 = time.process_time(), time.perf_counter()
    for i in range(batches):
        rows += read(i)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    print(f"{label:>16}: {rows:>7,} rows  {wall / rows * 1e6:7.2f} us/row wall  {cpu / rows * 1e6:7.2f} us/row CPU")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=300_000)
    ap.add_argument("--rows-per-file", type=int, default=1 << 20)
    ap.add_argument("--dim", type=int, default=768)
    ap.add_argument("--batch", type=int, default=1024)
    ap.add_argument("--batches", type=int, default=20)
    ap.add_argument("--what", choices=["take", "loader", "both"], default="both")
    ap.add_argument("--pylance", action="store_true", help="also time pylance's take (needs `lance`)")
    ap.add_argument("--dir", help="where the data goes (default: a temporary folder)")
    ap.add_argument("--keep", action="store_true", help="keep the data written into --dir")
    ap.add_argument("--reuse", action="store_true", help="read the data already in --dir")
    args = ap.parse_args()

    root = args.dir or tempfile.mkdtemp(prefix="take_random_")
    path = os.path.join(root, "tab.lancelet")
    lpath = os.path.join(root, "tab.pylance")
    try:
        if not args.reuse:
            t0 = time.perf_counter()
            reader = pa.RecordBatchReader.from_batches(
                schema(args.dim), tabular_chunks(args.rows, args.dim, min(args.rows_per_file, 65_536), 1)
            )
            lancelet.write_dataset(reader, path, mode="overwrite", max_rows_per_file=args.rows_per_file)
            print(f"wrote {args.rows:,} rows in {time.perf_counter() - t0:.1f} s")
        ds = lancelet.dataset(path)
        n = ds.count_rows()
        rng = np.random.default_rng(7)
        batches = [np.sort(rng.choice(n, args.batch, replace=False)) for _ in range(args.batches + 1)]

        if args.what in ("take", "both"):

            def take(i: int) -> int:
                return ds.take(pa.array(batches[i])).num_rows

            timed("lancelet take", args.batch, args.batches, take)
        if args.what in ("loader", "both"):
            loader = Loader(ds, args.batch, shuffle="row", seed=1)
            it = iter(loader)

            def load(i: int) -> int:
                return next(it).num_rows

            timed("lancelet loader", args.batch, min(args.batches, n // args.batch - 1), load)
        if args.pylance:
            import lance

            if not args.reuse or not os.path.exists(lpath):
                reader = pa.RecordBatchReader.from_batches(
                    schema(args.dim), tabular_chunks(args.rows, args.dim, min(args.rows_per_file, 65_536), 1)
                )
                lance.write_dataset(
                    reader, lpath, mode="overwrite", max_rows_per_file=args.rows_per_file, data_storage_version="2.2"
                )
            lds = lance.dataset(lpath)

            def ltake(i: int) -> int:
                return lds.take(batches[i]).num_rows

            timed("pylance take", args.batch, args.batches, ltake)
    finally:
        if not args.keep and not args.reuse:
            shutil.rmtree(root if not args.dir else path, ignore_errors=True)
            if args.dir:
                shutil.rmtree(lpath, ignore_errors=True)


if __name__ == "__main__":
    main()
