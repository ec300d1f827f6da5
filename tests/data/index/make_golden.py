"""Regenerates the golden index files in this directory with pylance (14.0.2).

Run from anywhere: `python make_golden.py`. It builds a small dataset (three fragments,
nulls, duplicates, some deleted rows), creates one index of each scalar type with
pylance, and copies the index files into `<kind>/`. It also writes:
  - source.lance: the indexed columns of every live row plus `_rowaddr` (the row address),
    so tests can compute the expected answers with a naive scan;
  - stats.txt: `kind key value` lines with pylance's index_statistics per index.
"""
import json
import os
import shutil
import tempfile

import lance
import pyarrow as pa
from lance.file import LanceFileWriter
from lance.indices import IndexConfig

HERE = os.path.dirname(os.path.abspath(__file__))
N = 70

def column_data():
    words = ["apple pie", "Banana split", "cherry-tart", "Dátil", "elder", "fig_jam 42"]
    i = [None if k % 7 == 3 else (k * 37) % 23 - 5 for k in range(N)]
    s = [None if k % 9 == 4 else f"{words[k % 6]} {words[(k * 5) % 6]}" for k in range(N)]
    lab = []
    for k in range(N):
        if k % 11 == 5:
            lab.append(None)
        elif k % 13 == 6:
            lab.append([])
        else:
            lab.append([f"t{k % 4}", f"t{(k * 3) % 5}"])
    return pa.table({
        "i": pa.array(i, pa.int64()),
        "s": pa.array(s, pa.string()),
        "l": pa.array(lab, pa.list_(pa.string())),
    })

def main():
    tmp = tempfile.mkdtemp()
    uri = os.path.join(tmp, "ds")
    ds = lance.write_dataset(column_data(), uri, max_rows_per_file=30)
    ds.delete("i = 0 OR s = 'elder elder'")
    specs = [
        ("btree", "i", IndexConfig("btree", {"zone_size": 16})),
        ("bitmap", "s", "BITMAP"),
        ("label_list", "l", "LABEL_LIST"),
        ("zonemap", "i", IndexConfig("zonemap", {"rows_per_zone": 8})),
        ("ngram", "s", "NGRAM"),
        ("bloomfilter", "i", IndexConfig("bloomfilter", {"number_of_items": 8, "probability": 0.01})),
        # 2 KiB (64-block) filters over strings: pins the block choice and string hashing.
        ("bloomfilter_s", "s", IndexConfig("bloomfilter", {"number_of_items": 1000, "probability": 0.01})),
    ]
    stats = []
    for kind, col, cfg in specs:
        ds.create_scalar_index(col, cfg, name=kind)
        ds = lance.dataset(uri)
        st = ds.stats.index_stats(kind)
        for k, v in sorted(st["indices"][0].items()):
            stats.append(f"{kind} {k} {v}")
    for idx in ds.list_indices():
        out = os.path.join(HERE, idx["name"])
        shutil.rmtree(out, ignore_errors=True)
        shutil.copytree(os.path.join(uri, "_indices", idx["uuid"]), out)
    live = ds.to_table(columns=["i", "s", "l"], with_row_address=True)
    live = live.rename_columns(["i", "s", "l", "_rowaddr"])
    with LanceFileWriter(os.path.join(HERE, "source.lance"), live.schema, version="2.0") as w:
        w.write_batch(live)
    with open(os.path.join(HERE, "stats.txt"), "w") as f:
        f.write("\n".join(stats) + "\n")
    shutil.rmtree(tmp)

if __name__ == "__main__":
    main()
