"""Checks that pylance 14 reads and searches vector index files written by lancelet-vector.

1. Export our indexes (built from tests/data/vector/vectors.f32) and our own search answers:
     LANCELET_VECTOR_EXPORT=DIR \
       cargo test --release -p lancelet-vector --test roundtrip
2. Run:  .venv/bin/python tests/data/vector/check_pylance_reads_ours.py [dir]

For every exported case it writes a pylance dataset holding the same vectors (one fragment,
so row address = row id), copies our `auxiliary.idx` / `index.idx` into `_indices/{uuid}/`,
commits them with `LanceOperation.CreateIndex` (our VectorIndexDetails bytes, index_version
1), then runs pylance's own `nearest` search for each recorded (query, nprobes) and compares
row ids and `_distance` with our answers (HNSW cases pass the recorded `ef` to both graph
walks). Exits non-zero on any mismatch.
"""
import json
import os
import shutil
import sys
import tempfile
import uuid

import lance
import numpy as np
import pyarrow as pa
from lance.bitmap import Bitmap
from lance.dataset import Index, IndexFile

HERE = os.path.dirname(os.path.abspath(__file__))
DIM = 16


def check_case(case_dir, data):
    ours = json.load(open(os.path.join(case_dir, "ours.json")))
    with tempfile.TemporaryDirectory() as tmp:
        uri = os.path.join(tmp, "ds")
        tbl = pa.table({"vec": pa.FixedSizeListArray.from_arrays(pa.array(data.reshape(-1)), DIM)})
        ds = lance.write_dataset(tbl, uri, data_storage_version="2.0")
        idx_uuid = str(uuid.uuid4())
        dst = os.path.join(uri, "_indices", idx_uuid)
        os.makedirs(dst)
        files = []
        for f in ("auxiliary.idx", "index.idx"):
            shutil.copy(os.path.join(case_dir, f), os.path.join(dst, f))
            files.append(IndexFile(path=f, size_bytes=os.path.getsize(os.path.join(dst, f))))
        frags = Bitmap()
        for fr in ds.get_fragments():
            frags.add(fr.fragment_id)
        index = Index(
            uuid=idx_uuid,
            name="vec_idx",
            fields=[ds.schema.get_field_index("vec")],
            dataset_version=ds.version,
            fragment_ids=frags,
            index_version=ours["index_version"],
            files=files,
            index_details=(ours["details_type_url"], bytes.fromhex(ours["details_hex"])),
        )
        op = lance.LanceOperation.CreateIndex(new_indices=[index], removed_indices=[])
        ds = lance.LanceDataset.commit(uri, op, read_version=ds.version)
        listed = ds.list_indices()[0]
        stats = ds.stats.index_stats("vec_idx")
        seg = stats["indices"][0]
        sizes = [p["size"] for p in seg["partitions"]]
        problems = []
        if listed["type"] != ours["index_type"]:
            problems.append(f"listed as {listed['type']}")
        if sizes != ours["partition_sizes"]:
            problems.append(f"partition sizes {sizes} vs {ours['partition_sizes']}")
        compared = 0
        for r in ours["results"]:
            q = np.array(ours["queries"][r["query"]], dtype=np.float32)
            nearest = {"column": "vec", "q": q, "k": ours["k"], "nprobes": r["nprobes"]}
            if r.get("ef") is not None:  # HNSW: both sides walk the graph with this ef
                nearest["ef"] = r["ef"]
            t = ds.to_table(
                nearest=nearest,
                columns=["_distance"],
                disable_scoring_autoprojection=True,
                with_row_id=True,
            )
            ids = t["_rowid"].to_pylist()
            dist = t["_distance"].to_pylist()
            if ids != r["row_ids"]:
                problems.append(f"query {r['query']} nprobes {r['nprobes']}: rows {ids} vs ours {r['row_ids']}")
            elif not np.allclose(dist, r["distances"], rtol=1e-4, atol=1e-4):
                problems.append(f"query {r['query']} nprobes {r['nprobes']}: distances {dist} vs ours {r['distances']}")
            compared += 1
        return listed["type"], compared, problems


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(tempfile.gettempdir(), "lancelet-vector-ours")
    data = np.fromfile(os.path.join(HERE, "vectors.f32"), dtype=np.float32).reshape(-1, DIM)
    failed = 0
    for case in sorted(os.listdir(root)):
        case_dir = os.path.join(root, case)
        if not os.path.isfile(os.path.join(case_dir, "ours.json")):
            continue
        try:
            itype, compared, problems = check_case(case_dir, data)
        except Exception as e:  # report and continue with the other cases
            print(f"{case}: ERROR {e!r}")
            failed += 1
            continue
        status = "OK" if not problems else "MISMATCH"
        print(f"{case}: {status} (pylance lists {itype}; {compared} searches compared)")
        for p in problems[:5]:
            print("   ", p)
        failed += bool(problems)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
