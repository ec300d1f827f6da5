"""File format 2.1 / 2.2 benchmark: lancelet vs pylance, bytes on disk and scan speed.

Writes the benchmark table of issue 4 (ids, low-cardinality strings, free text, floats,
bools, nullable ints, lists of strings, 128-dim embeddings) as one dataset with each
library's defaults for the version (pylance 14: 2.2), then reports, from the same run:

* bytes on disk of each dataset's data files, per column too (one column per file),
  and the ratio lancelet / pylance (at most 1.0 is the target);
* full-scan time of each library reading its own dataset, and each reading the other's;
  ratio lancelet / pylance (at most 1.0 is the target);
* write time, for reference.

    python benches/bench_v22.py [--rows 1000000] [--repeat 3] [--version 2.2] [--out results.md]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

import numpy as np
import pyarrow as pa

import lancelet
from bench_file import timeit  # same median-of-N timer

try:
    import lance
except ImportError:  # pragma: no cover - the bench needs the oracle
    lance = None


WORDS = (
    "the of and to in is was for on that with as by at from his her an which this be are were not "
    "have has had but or one all they their there been more when will would who so if out up about "
    "into than them can only other new some time could these two may first then do any like my now"
).split()


def make_table(rows: int) -> pa.Table:
    rng = np.random.default_rng(11)
    cats = np.array(["red", "green", "blue", "cyan", "magenta", "yellow", "black", "white"])
    words = np.array(WORDS)
    lens = rng.integers(4, 14, rows)
    picks = rng.integers(0, len(words), int(lens.sum()))
    text, at = [], 0
    for n in lens:
        text.append(" ".join(words[picks[at:at + n]]))
        at += n
    nullable = rng.integers(0, 1000, rows)
    tag_lens = rng.integers(0, 4, rows)
    tag_offsets = np.concatenate([[0], np.cumsum(tag_lens)]).astype(np.int32)
    tags = pa.ListArray.from_arrays(pa.array(tag_offsets), pa.array(cats[rng.integers(0, 8, int(tag_lens.sum()))]))
    emb = pa.FixedSizeListArray.from_arrays(pa.array(rng.standard_normal(rows * 128).astype(np.float32)), 128)
    return pa.table({
        "id": pa.array(np.arange(rows, dtype=np.int64)),
        "category": pa.array(cats[rng.integers(0, 8, rows)]),
        "text": pa.array(text),
        "score": pa.array(rng.random(rows)),
        "flag": pa.array(rng.random(rows) < 0.3),
        "maybe": pa.array(nullable, mask=rng.random(rows) < 0.2),
        "tags": tags,
        "embedding": emb,
    })


def data_bytes(uri: str) -> int:
    total = 0
    for root, _, files in os.walk(os.path.join(uri, "data")):
        total += sum(os.path.getsize(os.path.join(root, f)) for f in files)
    return total


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--version", default="2.2")
    ap.add_argument("--out")
    args = ap.parse_args()
    if lance is None:
        raise SystemExit("pylance is needed as the comparison")
    table = make_table(args.rows)
    lines = [f"# bench_v22: {args.rows} rows, file format {args.version}, median of {args.repeat}", ""]
    with tempfile.TemporaryDirectory() as tmp:
        ours, theirs = os.path.join(tmp, "ours"), os.path.join(tmp, "theirs")
        t = time.perf_counter()
        lancelet.write_dataset(table, ours, data_storage_version=args.version)
        w_ours = time.perf_counter() - t
        t = time.perf_counter()
        lance.write_dataset(table, theirs, data_storage_version=args.version)
        w_theirs = time.perf_counter() - t
        b_ours, b_theirs = data_bytes(ours), data_bytes(theirs)
        lines += ["| measure | lancelet | pylance | ratio lancelet/pylance |", "| --- | --- | --- | --- |"]
        lines.append(f"| bytes on disk | {b_ours:,} | {b_theirs:,} | {b_ours / b_theirs:.3f} |")
        lines.append(f"| write (s) | {w_ours:.3f} | {w_theirs:.3f} | {w_ours / w_theirs:.2f} |")
        own = timeit(lambda: lancelet.dataset(ours).to_table(), args.repeat)
        other = timeit(lambda: lance.dataset(theirs).to_table(), args.repeat)
        lines.append(f"| scan own dataset (s) | {own:.3f} | {other:.3f} | {own / other:.2f} |")
        ours_on_theirs = timeit(lambda: lancelet.dataset(theirs).to_table(), args.repeat)
        theirs_on_ours = timeit(lambda: lance.dataset(ours).to_table(), args.repeat)
        lines.append(f"| scan pylance's files (s) | {ours_on_theirs:.3f} | {other:.3f} | {ours_on_theirs / other:.2f} |")
        lines.append(f"| scan lancelet's files (s) | {own:.3f} | {theirs_on_ours:.3f} | {own / theirs_on_ours:.2f} |")
        assert lancelet.dataset(ours).to_table().equals(table)
        assert lance.dataset(ours).to_table().equals(table)
        # Per column: one single-column dataset each.
        lines += ["", "| column | lancelet bytes | pylance bytes | ratio |", "| --- | --- | --- | --- |"]
        for name in table.column_names:
            sub = table.select([name])
            o, p = os.path.join(tmp, f"o_{name}"), os.path.join(tmp, f"p_{name}")
            lancelet.write_dataset(sub, o, data_storage_version=args.version)
            lance.write_dataset(sub, p, data_storage_version=args.version)
            bo, bp = data_bytes(o), data_bytes(p)
            lines.append(f"| {name} | {bo:,} | {bp:,} | {bo / bp:.3f} |")
    text = "\n".join(lines)
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
