"""Writes the pylance 14.0.2 golden datasets of this directory (see README.md).

Run from the repository root with the project's venv:

    .venv/bin/python tests/data/datasets/make_golden.py            # replace both datasets
    .venv/bin/python tests/data/datasets/make_golden.py --check    # compare, write nothing

File names hold random UUIDs and manifests hold timestamps, so a new run does not give the
same bytes: ``--check`` compares what pylance reads (every version's rows, deletions,
fragments and tags).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile

import lance
import pyarrow as pa

HERE = os.path.dirname(os.path.abspath(__file__))


def small(uri: str) -> None:
    """Three versions: 10 rows, 10 more appended, rows with a < 3 deleted; tag v1tag -> 1."""
    t = pa.table({"a": pa.array(range(10), pa.int64()), "s": [str(i) for i in range(10)]})
    lance.write_dataset(t, uri, data_storage_version="2.0")
    lance.write_dataset(t, uri, mode="append")
    ds = lance.dataset(uri)
    ds.delete("a < 3")
    ds.tags.create("v1tag", 1)


def bitmap_deletes(uri: str) -> None:
    """20,000 rows; every third deleted (6,667 rows: a roaring bitmap deletion file)."""
    lance.write_dataset(pa.table({"a": pa.array(range(20_000), pa.int64())}), uri, data_storage_version="2.0")
    lance.dataset(uri).delete("a % 3 = 0")


DATASETS = {"pylance_v2_0_small": small, "pylance_v2_0_bitmap_deletes": bitmap_deletes}


def summary(uri: str) -> list:
    ds = lance.dataset(uri)
    out = [ds.tags.list() and sorted((k, v["version"]) for k, v in ds.tags.list().items())]
    for v in ds.versions():
        at = lance.dataset(uri, version=v["version"])
        out.append((v["version"], at.to_table().to_pydict(), [f.count_rows() for f in at.get_fragments()],
                    [bool(f.metadata.deletion_file) for f in at.get_fragments()]))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="compare with the committed datasets; write nothing")
    args = parser.parse_args()
    bad = 0
    for name, make in DATASETS.items():
        path = os.path.join(HERE, name)
        target = os.path.join(tempfile.mkdtemp(), name) if args.check else path
        if not args.check and os.path.exists(path):
            shutil.rmtree(path)
        make(target)
        if args.check:
            same = summary(target) == summary(path)
            bad += not same
            print(f"{name}: {'same contents' if same else 'DIFFERENT'}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
