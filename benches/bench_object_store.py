"""Scans and takes on an S3-compatible server (moto, on loopback) vs local disk, lancelet vs
pylance on the same server and dataset, in one run.

    .venv/bin/python benches/bench_object_store.py [--rows 500000] [--repeat 3]

moto is a Python server, far slower than real S3, so absolute times say little; compare
the libraries on the same store (ratio = lancelet time / pylance time, below 1 means
lancelet is faster) and each library's S3 time against its local time.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile

import lancelet

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
from _support import s3_options, start_s3_server, stop  # noqa: E402
from bench_file import make_table, timeit  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--rows", type=int, default=500_000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    import lance

    proc, endpoint, _ = start_s3_server("bench")
    try:
        opts = s3_options(endpoint)
        table = make_table(args.rows)
        local = os.path.join(tempfile.mkdtemp(prefix="lancelet-bench-os-"), "t.lance")
        remote = "s3://bench/t.lance"
        t_write_local = timeit(lambda: lancelet.write_dataset(table, local, mode="overwrite"), 1)
        t_write_s3 = timeit(lambda: lancelet.write_dataset(table, remote, mode="overwrite", storage_options=opts), 1)
        idx = sorted(random.Random(1).sample(range(args.rows), 1000))
        ours_local = lancelet.dataset(local)
        ours = lancelet.dataset(remote, storage_options=opts)
        theirs = lance.dataset(remote, storage_options=opts)
        rows = [
            ("write", t_write_local, t_write_s3, None),
            ("full scan", timeit(ours_local.to_table, args.repeat), timeit(ours.to_table, args.repeat),
             timeit(theirs.to_table, args.repeat)),
            ("projected scan (id, value)", timeit(lambda: ours_local.to_table(columns=["id", "value"]), args.repeat),
             timeit(lambda: ours.to_table(columns=["id", "value"]), args.repeat),
             timeit(lambda: theirs.to_table(columns=["id", "value"]), args.repeat)),
            ("take 1,000 random rows", timeit(lambda: ours_local.take(idx), args.repeat),
             timeit(lambda: ours.take(idx), args.repeat), timeit(lambda: theirs.take(idx), args.repeat)),
            ("open latest version", timeit(lambda: lancelet.dataset(local), args.repeat),
             timeit(lambda: lancelet.dataset(remote, storage_options=opts), args.repeat),
             timeit(lambda: lance.dataset(remote, storage_options=opts), args.repeat)),
        ]
        print(f"{'case':<28} {'lancelet local':>15} {'lancelet S3':>12} {'pylance S3':>11} {'S3/local':>9} {'vs pylance':>11}")
        for name, loc, s3, py in rows:
            ratio = f"{s3 / py:11.2f}" if py else f"{'':>11}"
            pys = f"{py:10.3f}s" if py else f"{'':>11}"
            print(f"{name:<28} {loc:14.3f}s {s3:11.3f}s {pys} {s3 / loc:9.1f} {ratio}")
        print(f"\n{args.rows:,} rows; moto S3 server on loopback; median of {args.repeat}")
    finally:
        stop(proc)


if __name__ == "__main__":
    main()
