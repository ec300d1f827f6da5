"""Vector search benchmark: lancelet vs pylance 14 in one run, on the same machine.

Data (``--data``):

* ``clustered``: ``--rows`` x ``--dim`` float32 vectors around 256 centres with most variance
  in a 16-dim subspace (like ``benches/vecbench.py``), L2;
* ``minilm``: real sentence embeddings (384-dim, unit norm) of ``--rows`` generated sentences
  from all-MiniLM-L6-v2 (``benches/_minilm.py``, cached after the first run), cosine; the
  queries are embeddings of other generated sentences.

For each library, on a dataset it wrote itself:

* IVF_PQ build (``sqrt(rows)`` partitions, ``dim / 8`` sub-vectors, 8 bits) in a child
  process: wall time, CPU time (user + system of every thread) and the child's peak RSS;
* a sweep of ``nprobes`` x ``refine_factor``: recall@10 against exact neighbours and queries
  per second (one query at a time); then, for recall targets 0.90 and 0.95, the fastest
  setting that reaches the target, and the ratio of QPS at equal recall;
* exact search (``use_index=False``): vectors scanned per second, against the machine's
  memory bandwidth measured with a numpy copy.

    python benches/bench_vectors.py --data clustered --rows 1000000 --dim 128
    python benches/bench_vectors.py --data minilm --rows 200000
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import sys
import tempfile
import time
from typing import Dict, List, Tuple

import numpy as np
import pyarrow as pa

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from _rss import maxrss_mb, run_child  # noqa: E402  (child-process peak RSS, shared with bench_memory)

SWEEP = [(p, r) for p in (1, 2, 4, 8, 16, 32, 64) for r in (None, 4, 16)]


def clustered(n: int, dim: int, queries: int, seed: int = 42) -> Tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    centers = rng.standard_normal((256, dim)).astype(np.float32) * 2
    basis = rng.standard_normal((16, dim)).astype(np.float32) * 0.5
    x = (centers[rng.integers(0, 256, n)] + rng.standard_normal((n, 16)).astype(np.float32) @ basis
         + rng.standard_normal((n, dim)).astype(np.float32) * 0.1)
    q = x[rng.integers(0, n, queries)] + rng.standard_normal((queries, dim)).astype(np.float32) * 0.1
    return x, q


def minilm(n: int, queries: int, cache: str) -> Tuple[np.ndarray, np.ndarray]:
    sys.path.insert(0, HERE)
    import _minilm

    x = _minilm.embeddings(n, cache)
    model = _minilm.MiniLM()
    texts = _minilm.sentences(queries, seed=8)
    return x, model.encode(texts)


def exact_ids(x: np.ndarray, qs: np.ndarray, k: int, metric: str) -> List[set]:
    out = []
    for q in qs:
        if metric == "cosine":
            d = 1 - (x @ q) / (np.linalg.norm(x, axis=1) * np.linalg.norm(q))
        else:
            d = ((x - q) ** 2).sum(1)
        out.append(set(np.argpartition(d, k)[:k].tolist()))
    return out


def child_build(module: str, uri: str, nparts: int, nsub: int, metric: str) -> None:
    """Runs in a child process: builds the index and prints wall / CPU seconds as JSON."""
    mod = __import__(module)
    ds = mod.dataset(uri)
    t0, c0 = time.perf_counter(), time.process_time()
    ds.create_index("vec", "IVF_PQ", num_partitions=nparts, num_sub_vectors=nsub, metric=metric)
    print(json.dumps({"wall": time.perf_counter() - t0, "cpu": time.process_time() - c0}))


def build(module: str, uri: str, nparts: int, nsub: int, metric: str) -> Dict[str, float]:
    """The build in a fresh interpreter; its own peak RSS from ``wait4``."""
    out, usage = run_child([sys.executable, __file__, "--child", module, uri, str(nparts), str(nsub), metric],
                           what=f"{module} index build")
    res = json.loads(out.strip().splitlines()[-1])
    res["peak_rss_mb"] = maxrss_mb(usage)
    return res


def sweep(mod, uri: str, qs: np.ndarray, truth: List[set], metric: str) -> List[dict]:
    ds = mod.dataset(uri)
    rows = []
    for nprobes, refine in SWEEP:
        nn = {"column": "vec", "k": 10, "nprobes": nprobes, "metric": metric}
        if refine:
            nn["refine_factor"] = refine
        ds.to_table(nearest=dict(nn, q=qs[0]), columns=["id"])  # warm the partitions
        hits, t0 = 0, time.perf_counter()
        for q, tr in zip(qs, truth):
            got = ds.to_table(nearest=dict(nn, q=q), columns=["id"])["id"].to_pylist()
            hits += len(set(got) & tr)
        el = time.perf_counter() - t0
        rows.append({"nprobes": nprobes, "refine": refine or 0, "recall": hits / (10 * len(qs)), "qps": len(qs) / el})
    return rows


def best_at(rows: List[dict], target: float) -> dict:
    ok = [r for r in rows if r["recall"] >= target]
    return max(ok, key=lambda r: r["qps"]) if ok else {}


def exact_rate(mod, uri: str, qs: np.ndarray, metric: str, n: int) -> float:
    ds = mod.dataset(uri)
    nn = {"column": "vec", "k": 10, "use_index": False, "metric": metric}
    ds.to_table(nearest=dict(nn, q=qs[0]), columns=["id"])
    t0 = time.perf_counter()
    for q in qs[:10]:
        ds.to_table(nearest=dict(nn, q=q), columns=["id"])
    return n * 10 / (time.perf_counter() - t0)


def bandwidth_gbs() -> float:
    a = np.ones(256 << 20 >> 2, dtype=np.float32)  # 256 MiB
    b = np.empty_like(a)
    best = 0.0
    for _ in range(5):
        t0 = time.perf_counter()
        np.copyto(b, a)
        best = max(best, 2 * a.nbytes / (time.perf_counter() - t0) / 1e9)
    return best


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        _, _, module, uri, nparts, nsub, metric = sys.argv
        child_build(module, uri, int(nparts), int(nsub), metric)
        return
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", choices=["clustered", "minilm"], default="clustered")
    ap.add_argument("--rows", type=int, default=200_000)
    ap.add_argument("--dim", type=int, default=128, help="clustered data only")
    ap.add_argument("--queries", type=int, default=100)
    ap.add_argument("--cache", default=os.path.expanduser("~/.cache/lancelet-bench"))
    ap.add_argument("--workdir", default=None)
    a = ap.parse_args()
    if a.data == "minilm":
        x, qs = minilm(a.rows, a.queries, a.cache)
        metric = "cosine"
    else:
        x, qs = clustered(a.rows, a.dim, a.queries)
        metric = "L2"
    n, dim = x.shape
    truth = exact_ids(x, qs, 10, metric.lower())
    nparts, nsub = int(math.sqrt(n)), dim // 8
    table = pa.table({"id": pa.array(np.arange(n), pa.int64()),
                      "vec": pa.FixedSizeListArray.from_arrays(pa.array(x.ravel()), dim)})
    work = a.workdir or tempfile.mkdtemp(prefix="bench-vectors-")
    os.environ.setdefault("LANCE_LOG", "error")  # pylance's deprecation warnings, once per query
    import lance

    import lancelet

    results = {}
    for label, mod in (("pylance", lance), ("lancelet", lancelet)):
        uri = os.path.join(work, f"{label}.lance")
        shutil.rmtree(uri, ignore_errors=True)
        mod.write_dataset(table, uri)
        res: Dict = {"build": build(mod.__name__, uri, nparts, nsub, metric)}
        res["sweep"] = sweep(mod, uri, qs, truth, metric)
        res["exact_vps"] = exact_rate(mod, uri, qs, metric, n)
        results[label] = res
    bw = bandwidth_gbs()
    print(f"bench_vectors: {a.data}, {n:,} x {dim} float32, {metric}, IVF_PQ {nparts} partitions x {nsub} "
          f"sub-vectors, {len(qs)} queries, k=10")
    ours, theirs = results["lancelet"], results["pylance"]
    print(f"{'':<28}{'lancelet':>12}{'pylance':>12}{'ratio':>8}")
    for key in ("wall", "cpu", "peak_rss_mb"):
        o, t = ours["build"][key], theirs["build"][key]
        print(f"{'build ' + key:<28}{o:>12.1f}{t:>12.1f}{o / t:>8.2f}")
    for target in (0.90, 0.95):
        o, t = best_at(ours["sweep"], target), best_at(theirs["sweep"], target)
        desc = lambda r: f"{r['qps']:.0f} (np{r['nprobes']},rf{r['refine']})" if r else "n/a"  # noqa: E731
        ratio = f"{o['qps'] / t['qps']:.2f}" if o and t else ""
        print(f"{f'QPS at recall >= {target}':<28}{desc(o):>12}  {desc(t):>12}{ratio:>8}")
    o, t = ours["exact_vps"], theirs["exact_vps"]
    print(f"{'exact search, vectors/s':<28}{o:>12.3g}{t:>12.3g}{o / t:>8.2f}")
    print(f"exact search reads {o * dim * 4 / 1e9:.1f} GB/s (lancelet), {t * dim * 4 / 1e9:.1f} GB/s (pylance); "
          f"numpy copy on this machine: {bw:.1f} GB/s")
    print("sweep (recall / QPS):")
    for ro, rt in zip(ours["sweep"], theirs["sweep"]):
        print(f"  nprobes {ro['nprobes']:>3} refine {ro['refine']:>2}:  lancelet {ro['recall']:.3f} / {ro['qps']:>7.0f}"
              f"   pylance {rt['recall']:.3f} / {rt['qps']:>7.0f}")
    if not a.workdir:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
