"""What checksums cost: writing a file with and without them, and reading it whole with
and without verifying them, on formatbench's 2M-row table (ids, floats, strings, text;
``--embedding`` adds 128-dim vectors). Wall and CPU (process time, both cores), median
of ``--reps`` alternated runs, warm page cache.

    python benches/bench_checksums.py --rows 2000000 [--embedding] [--reps 7]

For whole-dataset scans with and without verification, formatbench takes the
``_lancelet_unverified`` backend (see that module).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import formatbench  # noqa: E402

from lancelet.file import LanceFileReader, LanceFileWriter  # noqa: E402


def timed(fn):
    w0, c0 = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - w0, time.process_time() - c0


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=2_000_000)
    ap.add_argument("--embedding", action="store_true")
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--dir", default=None)
    args = ap.parse_args(argv)
    table = formatbench.make_table(args.rows, embedding=args.embedding)
    root = args.dir or tempfile.mkdtemp(prefix="bench-checksums-")
    paths = {on: os.path.join(root, f"checksums-{on}.lance") for on in (True, False)}

    def write(on):
        with LanceFileWriter(paths[on], table.schema, checksums=on, version="2.2") as w:
            for b in table.to_batches(max_chunksize=64 * 1024):
                w.write_batch(b)

    def read(path, verify):
        LanceFileReader(path, verify_checksums=verify).read_all(batch_size=64 * 1024).to_table()

    cases = {
        "write, checksums": lambda: write(True),
        "write, none": lambda: write(False),
    }
    for on in (True, False):
        write(on)  # warm: the files exist for the reads
    cases.update(
        {
            "read, verified": lambda: read(paths[True], True),
            "read, not verified": lambda: read(paths[True], False),
            "read, file without checksums": lambda: read(paths[False], True),
        }
    )
    results = {name: [] for name in cases}
    for _ in range(args.reps):
        for name, fn in cases.items():  # alternated, so drift hits every case alike
            results[name].append(timed(fn))
    sizes = {on: os.path.getsize(p) for on, p in paths.items()}
    print(f"{args.rows} rows{' with 128-dim embeddings' if args.embedding else ''}; file "
          f"{sizes[True]} bytes with checksums, {sizes[False]} without (+{sizes[True] / sizes[False] - 1:.3%})")
    print(f"{'case':<32} {'wall s':>8} {'CPU s':>8}")
    med = {}
    for name, runs in results.items():
        wall = statistics.median(r[0] for r in runs)
        cpu = statistics.median(r[1] for r in runs)
        med[name] = (wall, cpu)
        print(f"{name:<32} {wall:>8.3f} {cpu:>8.3f}")
    for a, b in (("write, checksums", "write, none"), ("read, verified", "read, not verified")):
        print(f"{a} / {b}: wall {med[a][0] / med[b][0]:.3f}x, CPU {med[a][1] / med[b][1]:.3f}x")
    if args.dir is None:
        shutil.rmtree(root)


if __name__ == "__main__":
    main()
