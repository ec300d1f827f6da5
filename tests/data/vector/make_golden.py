"""Regenerates the pylance-written golden vector indexes used by tests/pylance_golden.rs.

Run from the repository root: .venv/bin/python tests/data/vector/make_golden.py

For every case it writes `<case>/auxiliary.idx`, `<case>/index.idx` (copied from the index
directory pylance created) and `<case>/expected.json`: the index type, metric, the queries,
nprobes, k and pylance's own answers (row ids and `_distance`) for each query.
The shared data set is `vectors.f32` (little-endian f32, ROWS x DIM, row i has row id i).
"""
import json
import os
import shutil
import tempfile

import lance
import numpy as np
import pyarrow as pa

HERE = os.path.dirname(os.path.abspath(__file__))
ROWS, DIM, K = 1000, 16, 10

CASES = [
    # name, index_type, metric, kwargs
    ("ivf_flat_l2", "IVF_FLAT", "l2", {"num_partitions": 4}),
    ("ivf_flat_cosine", "IVF_FLAT", "cosine", {"num_partitions": 4}),
    ("ivf_flat_dot", "IVF_FLAT", "dot", {"num_partitions": 4}),
    ("ivf_pq_l2", "IVF_PQ", "l2", {"num_partitions": 4, "num_sub_vectors": 4}),
    ("ivf_pq_cosine", "IVF_PQ", "cosine", {"num_partitions": 4, "num_sub_vectors": 4}),
    ("ivf_pq_dot", "IVF_PQ", "dot", {"num_partitions": 4, "num_sub_vectors": 4}),
    ("ivf_pq4_l2", "IVF_PQ", "l2", {"num_partitions": 4, "num_sub_vectors": 4, "num_bits": 4}),
    ("ivf_sq_l2", "IVF_SQ", "l2", {"num_partitions": 4}),
    ("ivf_sq_cosine", "IVF_SQ", "cosine", {"num_partitions": 4}),
    ("ivf_sq_dot", "IVF_SQ", "dot", {"num_partitions": 4}),
    ("ivf_hnsw_sq_l2", "IVF_HNSW_SQ", "l2", {"num_partitions": 2}),
    ("ivf_hnsw_pq_l2", "IVF_HNSW_PQ", "l2", {"num_partitions": 2, "num_sub_vectors": 4}),
    ("ivf_hnsw_flat_l2", "IVF_HNSW_FLAT", "l2", {"num_partitions": 2}),
    ("ivf_rq_l2", "IVF_RQ", "l2", {"num_partitions": 2}),
]


def main():
    rng = np.random.default_rng(7)
    # A few clusters so that partitions differ.
    centers = rng.normal(0, 4, size=(6, DIM)).astype(np.float32)
    data = (centers[rng.integers(0, 6, ROWS)] + rng.normal(0, 1, size=(ROWS, DIM))).astype(np.float32)
    data.tofile(os.path.join(HERE, "vectors.f32"))
    queries = (data[[3, 500, 997]] + rng.normal(0, 0.3, size=(3, DIM))).astype(np.float32)
    queries = np.concatenate([queries, rng.normal(0, 3, size=(1, DIM)).astype(np.float32)])
    tbl = pa.table({"vec": pa.FixedSizeListArray.from_arrays(pa.array(data.reshape(-1)), DIM)})
    for name, itype, metric, kw in CASES:
        with tempfile.TemporaryDirectory() as tmp:
            uri = os.path.join(tmp, "ds")
            ds = lance.write_dataset(tbl, uri)
            ds.create_index("vec", itype, metric=metric, **kw)
            idx = ds.list_indices()[0]
            src = os.path.join(uri, "_indices", idx["uuid"])
            out = os.path.join(HERE, name)
            os.makedirs(out, exist_ok=True)
            for f in ("auxiliary.idx", "index.idx"):
                shutil.copy(os.path.join(src, f), os.path.join(out, f))
            results = []
            for nprobes in (1, 2, 4):
                for qi, q in enumerate(queries):
                    try:
                        t = ds.to_table(
                            nearest={"column": "vec", "q": q, "k": K, "nprobes": nprobes},
                            columns=["_distance"], disable_scoring_autoprojection=True,
                            with_row_id=True,
                        )
                    except Exception as e:  # IVF_RQ and friends may fail; record it
                        results.append({"error": str(e)})
                        continue
                    results.append({
                        "query": qi,
                        "nprobes": nprobes,
                        "row_ids": t["_rowid"].to_pylist(),
                        "distances": t["_distance"].to_pylist(),
                    })
            stats = ds.stats.index_stats(idx["name"])
            seg = stats["indices"][0]
            expected = {
                "index_type": itype,
                "metric": metric,
                "params": kw,
                "k": K,
                "queries": queries.tolist(),
                "results": results,
                "partition_sizes": [p["size"] for p in seg["partitions"]],
                "statistics": {k: v for k, v in seg.items() if k not in ("centroids", "uuid", "uri")},
            }
            with open(os.path.join(out, "expected.json"), "w") as f:
                json.dump(expected, f, indent=1)
            print(name, [p["size"] for p in seg["partitions"]])


if __name__ == "__main__":
    main()
