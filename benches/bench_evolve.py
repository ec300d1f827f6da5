"""Data evolution benchmark: lancelet vs pylance 14 on the same datasets (file format 2.0).

Each case starts from a fresh copy of a dataset each library wrote (the copy is not
timed) and times one operation, median of ``--repeat`` runs:

* ``add_columns`` with a SQL expression (``value * 2``) over the bench table
  (``bench_file.make_table``), and with a Python UDF (pyarrow compute);
* ``update`` of 1% of the rows (``id % 100 = 0``), on a plain dataset and on one with stable
  row ids (where updated rows keep their ids and versions are tracked);
* ``merge_insert`` of 100k rows (half update existing ids, half are new);
* ``_take_rows`` of 10k random row ids on the stable-row-id dataset after the 1% update (the
  row id index is built on the first take of each run);
* ``optimize.compact_files`` of 100 small fragments;
* ``cleanup_old_versions`` after 50 appends.

Prints median seconds and the ratio lancelet / pylance (below 1: lancelet is faster), and
the bytes each ``add_columns`` wrote.

    python benches/bench_evolve.py [--rows 2000000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import random
import shutil
import statistics
import sys
import tempfile
import time

import pyarrow as pa
import pyarrow.compute as pc

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_file import make_table  # noqa: E402

import lance  # noqa: E402
import lancelet  # noqa: E402

LIBS = {"lancelet": lancelet, "pylance": lance}


def _size(path: str) -> int:
    return sum(os.path.getsize(os.path.join(r, f)) for r, _, fs in os.walk(path) for f in fs)


def _timed(base: str, work: str, op) -> float:
    shutil.rmtree(work, ignore_errors=True)
    shutil.copytree(base, work)
    t0 = time.perf_counter()
    op(work)
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=2_000_000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    root = tempfile.mkdtemp(prefix="lancelet-bench-evolve-")
    table = make_table(args.rows)
    small = table.slice(0, 200_000)
    bases = {}
    for name, lib in LIBS.items():
        big = os.path.join(root, f"{name}-big")
        lib.write_dataset(table, big, data_storage_version="2.0", max_rows_per_file=1024 * 1024)
        frag = os.path.join(root, f"{name}-frag")
        for k in range(100):
            lib.write_dataset(small.slice(k * 2000, 2000), frag, mode="append" if k else "create",
                              data_storage_version="2.0")
        stable = os.path.join(root, f"{name}-stable")
        lib.write_dataset(table, stable, data_storage_version="2.0", max_rows_per_file=1024 * 1024,
                          enable_stable_row_ids=True)
        updated = os.path.join(root, f"{name}-stable-updated")
        shutil.copytree(stable, updated)
        lib.dataset(updated).update({"value": "value + 1"}, where="id % 100 = 0")
        bases[name] = (big, frag, stable, updated)
    matched = table.slice(0, 50_000)
    fresh = table.slice(50_000, 50_000)
    fresh = fresh.set_column(0, "id", pc.add(fresh["id"], args.rows))
    source = pa.concat_tables([matched, fresh])
    rng = random.Random(7)
    probe = [rng.randrange(args.rows) for _ in range(10_000)]

    def udf(batch):
        return pa.record_batch({"upper": pc.utf8_upper(batch["category"])})

    cases = {
        "add_columns SQL (value * 2)": (0, lambda lib, uri: lib.dataset(uri).add_columns({"v2": "value * 2"})),
        "add_columns UDF (upper(category))": (
            0, lambda lib, uri: lib.dataset(uri).add_columns(udf, read_columns=["category"])),
        "update 1% of rows": (0, lambda lib, uri: lib.dataset(uri).update({"value": "value + 1"},
                                                                            where="id % 100 = 0")),
        "update 1% of rows, stable row ids": (2, lambda lib, uri: lib.dataset(uri).update(
            {"value": "value + 1"}, where="id % 100 = 0")),
        "merge_insert 100k rows (50% matched)": (0, lambda lib, uri: lib.dataset(uri).merge_insert("id")
                                                 .when_matched_update_all().when_not_matched_insert_all()
                                                 .execute(source)),
        "_take_rows 10k random ids, stable row ids": (3, lambda lib, uri: lib.dataset(uri)._take_rows(
            probe, columns=["id", "value"])),
        "compact 100 small fragments": (1, lambda lib, uri: lib.dataset(uri).optimize.compact_files()),
        "cleanup_old_versions (100 versions)": (
            1, lambda lib, uri: lib.dataset(uri).cleanup_old_versions(older_than=dt.timedelta(0))),
    }
    print(f"{args.rows:,} rows; median of {args.repeat}; ratio = lancelet / pylance\n")
    print("| case | lancelet s | pylance s | ratio |\n| --- | --- | --- | --- |")
    for case, (which, op) in cases.items():
        medians = {}
        for name, lib in LIBS.items():
            work = os.path.join(root, f"{name}-work")
            runs = [_timed(bases[name][which], work, lambda uri: op(lib, uri)) for _ in range(args.repeat)]
            medians[name] = statistics.median(runs)
            if case.startswith("add_columns SQL"):
                grown = _size(os.path.join(work, "data")) - _size(os.path.join(bases[name][which], "data"))
                medians[name + " bytes"] = grown
        print(f"| {case} | {medians['lancelet']:.3f} | {medians['pylance']:.3f} | "
              f"{medians['lancelet'] / medians['pylance']:.2f} |")
        if "lancelet bytes" in medians:
            print(f"|   bytes written: lancelet {medians['lancelet bytes']:,}, pylance {medians['pylance bytes']:,} "
                  f"(table {_size(os.path.join(bases['lancelet'][0], 'data')):,}) | | | |")
    shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
