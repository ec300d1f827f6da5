"""End-to-end dataset benchmark: lancelet vs pylance (both file format 2.0) vs Parquet.

Writes the 2M-row table of bench_file.py (ids, floats with nulls, low-cardinality
strings, free text, an 8-dim float32 embedding) as a dataset with each library, in
separate directories, then times in the same process:

* write (a fresh dataset each run; Parquet: ``pq.write_table``),
* full scan (``to_table``), projected scan of two columns, filtered scan (~1% of rows),
* ``take`` of 1,000 random rows (unsorted), ``count_rows()``, ``count_rows(filter)``,
* open the latest version (``dataset(uri)``; Parquet: read the footer),
* append 10,000 rows (a commit on a growing dataset; no Parquet equivalent).

The scans also run on the dataset the *other* library wrote, so readers are compared on
the same bytes. Results must agree before they are timed. Prints a table of median times
with ratios (pylance time / lancelet time and parquet time / lancelet time: above 1 means
lancelet is faster).

    python benches/bench_dataset.py [--rows 2000000] [--repeat 5] [--out results.md] [--json results.json]

``LANCELET_TEST_ORACLE_SELF=1`` runs pylance in lancelet's place (to check the script).
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import random
import shutil
import sys
import tempfile

import pyarrow.compute as pc
import pyarrow.parquet as pq

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_file import make_table, timeit  # noqa: E402

if os.environ.get("LANCELET_TEST_ORACLE_SELF", "") == "1":
    import lance as ours_lib
else:
    import lancelet as ours_lib

try:
    import lance as theirs_lib
except ImportError:  # pragma: no cover - the bench is most useful with the oracle
    theirs_lib = None

V2 = {"data_storage_version": "2.0"}
FILTER = "value < 0.01"  # ~1% of rows (value is uniform in [0, 1), 10% null)
PQ_FILTER = [("value", "<", 0.01)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=2_000_000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--out", default=None, help="write the markdown table here too")
    ap.add_argument("--json", default=None, help="write the results as JSON here")
    ap.add_argument("--keep", action="store_true", help="keep the temporary directory")
    args = ap.parse_args()

    table = make_table(args.rows)
    append_rows = make_table(10_000)
    d = tempfile.mkdtemp(prefix="lancelet-bench-ds-")
    ours_uri, theirs_uri, parquet = (os.path.join(d, n) for n in ("ours.lance", "pylance.lance", "t.parquet"))
    counter = itertools.count()

    rows = []  # (case, lancelet seconds, pylance seconds or None, parquet seconds or None)

    def fresh(prefix: str) -> str:
        path = os.path.join(d, f"{prefix}-{next(counter)}.lance")
        return path

    def write_once(lib, prefix):
        def run():
            path = fresh(prefix)
            lib.write_dataset(table, path, **V2)
            shutil.rmtree(path)
        return run

    # -- write ---------------------------------------------------------------------
    rows.append((
        "write",
        timeit(write_once(ours_lib, "w-ours"), args.repeat),
        timeit(write_once(theirs_lib, "w-theirs"), args.repeat) if theirs_lib else None,
        timeit(lambda: pq.write_table(table, parquet), args.repeat),
    ))
    ours_lib.write_dataset(table, ours_uri, **V2)
    if theirs_lib:
        theirs_lib.write_dataset(table, theirs_uri, **V2)

    # -- reads, on each library's dataset ------------------------------------------
    idx = random.Random(1).sample(range(args.rows), 1000)
    expected_filtered = table.filter(pc.less(table["value"], 0.01))
    for label, uri in (("lancelet-written", ours_uri), ("pylance-written", theirs_uri)):
        if theirs_lib is None and uri == theirs_uri:
            continue
        ours_ds = ours_lib.dataset(uri)
        theirs_ds = theirs_lib.dataset(uri) if theirs_lib else None
        cases = {
            "full scan": (
                lambda: ours_ds.to_table(),
                lambda: theirs_ds.to_table(),
                lambda: pq.read_table(parquet),
            ),
            "projected scan (id, value)": (
                lambda: ours_ds.to_table(columns=["id", "value"]),
                lambda: theirs_ds.to_table(columns=["id", "value"]),
                lambda: pq.read_table(parquet, columns=["id", "value"]),
            ),
            f"filtered scan ({FILTER})": (
                lambda: ours_ds.to_table(filter=FILTER),
                lambda: theirs_ds.to_table(filter=FILTER),
                lambda: pq.read_table(parquet, filters=PQ_FILTER),
            ),
            "take(1000 random)": (
                lambda: ours_ds.take(idx),
                lambda: theirs_ds.take(idx),
                lambda: pq.read_table(parquet).take(idx),
            ),
            "count_rows()": (
                lambda: ours_ds.count_rows(),
                lambda: theirs_ds.count_rows(),
                lambda: pq.ParquetFile(parquet).metadata.num_rows,
            ),
            f"count_rows({FILTER})": (
                lambda: ours_ds.count_rows(FILTER),
                lambda: theirs_ds.count_rows(FILTER),
                lambda: pq.read_table(parquet, columns=["value"], filters=PQ_FILTER).num_rows,
            ),
            "open latest version": (
                lambda: ours_lib.dataset(uri),
                lambda: theirs_lib.dataset(uri),
                lambda: pq.ParquetFile(parquet).metadata,
            ),
        }
        # Results must agree before they are timed.
        assert ours_ds.to_table().equals(table), f"full scan of the {label} dataset differs"
        assert ours_ds.to_table(filter=FILTER).equals(expected_filtered), "filtered scan differs"
        assert ours_ds.take(idx).equals(table.take(idx)), "take differs"
        assert ours_ds.count_rows(FILTER) == expected_filtered.num_rows
        if theirs_ds is not None:
            assert theirs_ds.to_table().equals(table)
        for name, (ours_fn, theirs_fn, pq_fn) in cases.items():
            rows.append((
                f"{name} [{label}]",
                timeit(ours_fn, args.repeat),
                timeit(theirs_fn, args.repeat) if theirs_ds is not None else None,
                timeit(pq_fn, args.repeat),
            ))

    # -- append: one commit of 10k rows onto a growing dataset ----------------------
    def appender(lib, prefix):
        path = fresh(prefix)
        lib.write_dataset(table.slice(0, 100_000), path, **V2)
        return lambda: lib.write_dataset(append_rows, path, mode="append")

    rows.append((
        "append 10k rows",
        timeit(appender(ours_lib, "a-ours"), args.repeat),
        timeit(appender(theirs_lib, "a-theirs"), args.repeat) if theirs_lib else None,
        None,
    ))

    sizes = {
        "lancelet": _dir_size(ours_uri),
        "pylance": _dir_size(theirs_uri) if theirs_lib else None,
        "parquet": os.path.getsize(parquet),
    }
    lines = [
        f"rows: {args.rows:,}; dataset sizes: lancelet {sizes['lancelet']:,} B, "
        + (f"pylance {sizes['pylance']:,} B, " if sizes["pylance"] else "")
        + f"parquet {sizes['parquet']:,} B; median of {args.repeat}"
        + (" (ORACLE SELF: pylance runs as lancelet)" if ours_lib is theirs_lib else ""),
        "",
        "| case | lancelet | pylance | parquet | pylance/lancelet | parquet/lancelet |",
        "|---|---|---|---|---|---|",
    ]
    for name, a, b, c in rows:
        lines.append(
            f"| {name} | {_ms(a)} | {_ms(b)} | {_ms(c)} | "
            f"{f'{b / a:.2f}x' if b else '-'} | {f'{c / a:.2f}x' if c else '-'} |"
        )
    text = "\n".join(lines)
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text + "\n")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(
                {
                    "rows": args.rows,
                    "repeat": args.repeat,
                    "sizes_bytes": sizes,
                    "results": [
                        {"case": name, "lancelet_s": a, "pylance_s": b, "parquet_s": c} for name, a, b, c in rows
                    ],
                },
                f,
                indent=2,
            )
    if args.keep:
        print(f"kept {d}")
    else:
        shutil.rmtree(d, ignore_errors=True)


def _ms(seconds) -> str:
    if seconds is None:
        return "-"
    ms = seconds * 1000
    return f"{ms:.1f} ms" if ms >= 10 else f"{ms:.3f} ms"


def _dir_size(path: str) -> int:
    return sum(os.path.getsize(os.path.join(root, f)) for root, _, files in os.walk(path) for f in files)


if __name__ == "__main__":
    main()
