"""Blob benchmark: lancelet vs pylance 14 on the same workload (blob v2, file format 2.2).

* write ``--rows`` images of ``--size`` bytes (random bytes, so nothing compresses) with an
  ``id`` and a ``label`` column, as a blob column with default thresholds (100 KB images
  are packed into sidecars);
* ``take_blobs`` of ``--take`` random rows, reading every image whole;
* a metadata-only scan (``id``, ``label``, filter ``label = 3``), which must read none of the
  payload bytes: the bytes read are reported (lancelet's scan statistics; pylance's
  ``scan_stats_callback``).

Each library reads the dataset it wrote. Prints median seconds of ``--repeat`` runs and the
ratio lancelet / pylance (below 1: lancelet is faster).

    python benches/bench_blobs.py [--rows 10000] [--size 100000] [--take 100] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import tempfile
import time

import lance
import pyarrow as pa

import lancelet

LIBS = {"lancelet": lancelet, "pylance": lance}


def batches(rows: int, size: int, mod):
    rng = random.Random(7)
    schema = pa.schema([pa.field("id", pa.int64()), pa.field("label", pa.int32()), mod.blob_field("image")])
    step = 500
    for start in range(0, rows, step):
        n = min(step, rows - start)
        yield pa.record_batch({
            "id": pa.array(range(start, start + n), pa.int64()),
            "label": pa.array([rng.randrange(10) for _ in range(n)], pa.int32()),
            "image": mod.blob_array([rng.randbytes(size) for _ in range(n)]),
        }, schema=schema)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=10_000)
    ap.add_argument("--size", type=int, default=100_000)
    ap.add_argument("--take", type=int, default=100)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    root = tempfile.mkdtemp(prefix="bench_blobs_")
    results = {}
    scan_bytes = {}
    try:
        for name, mod in LIBS.items():
            uri = os.path.join(root, f"{name}.lance")
            times = []
            for _ in range(args.repeat):
                shutil.rmtree(uri, ignore_errors=True)
                schema = next(batches(1, 1, mod)).schema
                reader = pa.RecordBatchReader.from_batches(schema, batches(args.rows, args.size, mod))
                t0 = time.perf_counter()
                mod.write_dataset(reader, uri)
                times.append(time.perf_counter() - t0)
            results[(name, "write")] = statistics.median(times)
            ds = mod.dataset(uri)
            rng = random.Random(11)
            times = []
            for _ in range(args.repeat):
                idx = rng.sample(range(args.rows), args.take)
                t0 = time.perf_counter()
                total = sum(len(f.read()) for f in ds.take_blobs("image", indices=idx))
                times.append(time.perf_counter() - t0)
                assert total == args.take * args.size
            results[(name, "take_blobs")] = statistics.median(times)
            times = []
            stats = []
            for _ in range(args.repeat):
                t0 = time.perf_counter()
                sc = ds.scanner(columns=["id", "label"], filter="label = 3",
                                scan_stats_callback=stats.append)
                sc.to_table()
                times.append(time.perf_counter() - t0)
            results[(name, "metadata scan")] = statistics.median(times)
            scan_bytes[name] = stats[-1].bytes_read if stats else None
        print(f"{args.rows} images of {args.size} bytes; take_blobs of {args.take}; median of {args.repeat}")
        print(f"{'case':<16}{'lancelet s':>12}{'pylance s':>12}{'ratio':>8}")
        for case in ("write", "take_blobs", "metadata scan"):
            a, b = results[("lancelet", case)], results[("pylance", case)]
            print(f"{case:<16}{a:>12.4f}{b:>12.4f}{a / b:>8.2f}")
        data_bytes = args.rows * args.size
        for name, n in scan_bytes.items():
            print(f"metadata scan bytes read ({name}): {n} of {data_bytes} payload bytes")
        # The scan reads the id and label pages only: less than one image's bytes.
        if scan_bytes["lancelet"] is not None and scan_bytes["lancelet"] >= args.size:
            raise SystemExit(f"lancelet's metadata scan read {scan_bytes['lancelet']} bytes: payload bytes were read")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
