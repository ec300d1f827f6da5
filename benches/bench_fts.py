"""Full-text search: lancelet vs pylance 14 vs tantivy, one run on one machine.

    python benches/bench_fts.py                      # both corpora, 1M synthetic documents
    python benches/bench_fts.py --docs 200000 --corpus zipf --queries 100
    python benches/bench_fts.py --quick              # a smoke test (50k documents)

Corpora: ``stdlib`` (the docstrings of the installed Python standard library, split into
paragraphs of 5 words or more: real English on every machine) and ``zipf`` (``--docs``
documents of 20-60 words from a Zipf(1.1) vocabulary of 100,000 pseudo-words, fixed seed).

Per library and corpus: the index build's wall and CPU time and peak RSS (each build runs in
a child process, measured from its rusage), the index size on disk, and query latency p50/p99
at limit 10 and 100 for 1-term, 3-term OR, 3-term AND and 2-word phrase queries (warm, one
thread), and QPS of 3-term OR queries on two threads. Each library indexes with positions
(phrases need them) and its English analyzer: Lance's (lower-case, stem, stop words, ASCII
folding) and tantivy's ``en_stem`` (lower-case, stem; no stop words, no folding), so tantivy's
index and answers are close to, not the same as, Lance's. Ratios are lancelet / other: below 1
means lancelet is faster or smaller.

``tantivy`` (PyPI) is needed for its column: ``pip install tantivy``; without it the column is
skipped.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import shutil
import sys
import sysconfig
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _rss import maxrss_mb, run_child  # noqa: E402


def stdlib_paragraphs() -> list:
    out = []
    root = sysconfig.get_paths()["stdlib"]
    for dirpath, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d not in ("test", "tests", "site-packages", "idlelib")]
        for f in files:
            if not f.endswith(".py"):
                continue
            try:
                with open(os.path.join(dirpath, f), encoding="utf-8") as fh:
                    tree = ast.parse(fh.read())
            except (SyntaxError, UnicodeDecodeError, ValueError):
                continue
            for node in ast.walk(tree):
                if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                    doc = ast.get_docstring(node)
                    if doc:
                        out += [p.strip() for p in doc.split("\n\n") if len(p.split()) >= 5]
    return out


def zipf_docs(n: int, seed: int = 0) -> list:
    import numpy as np

    rng = np.random.default_rng(seed)
    vocab = np.array([f"w{i}" for i in range(100_000)])
    lens = rng.integers(20, 61, size=n)
    ranks = rng.zipf(1.1, size=int(lens.sum()) * 2)
    ranks = ranks[ranks < 100_000][: int(lens.sum())]
    words = vocab[ranks]
    out, at = [], 0
    for k in lens:
        out.append(" ".join(words[at : at + k]))
        at += k
    return out


def corpus(name: str, docs: int) -> list:
    return stdlib_paragraphs() if name == "stdlib" else zipf_docs(docs)


def queries(texts: list, n: int, seed: int = 1) -> dict:
    """Query words drawn from the documents themselves (so they exist), by kind."""
    import random

    rng = random.Random(seed)
    stop = {"the", "a", "an", "of", "to", "and", "in", "is", "it", "for", "on", "or", "be", "as", "by", "this", "that"}
    picks = []
    while len(picks) < 4 * n:
        words = [w.strip(".,:;()[]`'\"").lower() for w in rng.choice(texts).split()]
        words = [w for w in words if w.isalnum() and w not in stop and len(w) > 2]
        if len(words) >= 3:
            i = rng.randrange(len(words) - 1)
            picks.append((words, i))
    one = [w[i] for w, i in picks[:n]]
    three = [" ".join(rng.sample(w, 3)) for w, _ in picks[n : 2 * n]]
    phrase = [f"{w[i]} {w[i + 1]}" for w, i in picks[2 * n : 3 * n]]
    return {"1-term": one, "3-term OR": three, "3-term AND": three, "phrase": phrase}


# --- the libraries, each behind the same four calls ---------------------------------------


class LanceLib:
    def __init__(self, module: str):
        self.name = module
        self.mod = __import__(module)
        q = __import__(f"{module}.query", fromlist=["query"])
        self.q = q

    def write(self, texts: list, path: str) -> None:
        import pyarrow as pa

        self.mod.write_dataset(pa.table({"id": range(len(texts)), "text": texts}), path)

    def build(self, path: str) -> None:
        self.mod.dataset(path).create_scalar_index("text", "INVERTED", with_position=True)

    def size(self, path: str) -> int:
        return dir_size(os.path.join(path, "_indices"))

    def open(self, path: str):
        ds = self.mod.dataset(path)
        q = self.q
        and_op = q.FullTextOperator.AND

        def search(kind: str, text: str, k: int) -> list:
            if kind == "3-term AND":
                query = q.MatchQuery(text, "text", operator=and_op)
            elif kind == "phrase":
                query = q.PhraseQuery(text, "text")
            else:
                query = text
            return ds.to_table(full_text_query=query, limit=k, columns=["id", "_score"])["id"].to_pylist()

        return search


class TantivyLib:
    name = "tantivy"

    def write(self, texts: list, path: str) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        os.makedirs(path, exist_ok=True)
        pq.write_table(pa.table({"text": texts}), os.path.join(path, "docs.parquet"))

    def _schema(self):
        import tantivy

        b = tantivy.SchemaBuilder()
        b.add_integer_field("id", stored=True, indexed=True)
        b.add_text_field("text", stored=False, tokenizer_name="en_stem", index_option="position")
        return b.build()

    def build(self, path: str) -> None:
        import pyarrow.parquet as pq
        import tantivy

        texts = pq.read_table(os.path.join(path, "docs.parquet"))["text"].to_pylist()
        os.makedirs(os.path.join(path, "index"), exist_ok=True)
        index = tantivy.Index(self._schema(), path=os.path.join(path, "index"))
        w = index.writer(heap_size=256 * 1024 * 1024, num_threads=2)
        for i, t in enumerate(texts):
            w.add_document(tantivy.Document(id=i, text=t))
        w.commit()
        w.wait_merging_threads()

    def size(self, path: str) -> int:
        return dir_size(os.path.join(path, "index"))

    def open(self, path: str):
        import tantivy

        index = tantivy.Index(self._schema(), path=os.path.join(path, "index"))
        index.reload()

        def search(kind: str, text: str, k: int) -> list:
            s = index.searcher()
            if kind == "3-term AND":
                query = index.parse_query(" ".join(f"+{w}" for w in text.split()), ["text"])
            elif kind == "phrase":
                query = index.parse_query(f'"{text}"', ["text"])
            else:
                query = index.parse_query(text, ["text"])
            return [s.doc(a)["id"][0] for _, a in s.search(query, k).hits]

        return search


def dir_size(d: str) -> int:
    return sum(os.path.getsize(os.path.join(p, f)) for p, _, fs in os.walk(d) for f in fs)


def make_lib(name: str):
    return TantivyLib() if name == "tantivy" else LanceLib(name)


# --- child: one build, measured --------------------------------------------------------------


def child_build(lib: str, path: str) -> None:
    t0, c0 = time.perf_counter(), time.process_time()
    make_lib(lib).build(path)
    print(json.dumps({"wall": time.perf_counter() - t0, "cpu": time.process_time() - c0}))


def child_queries(corpus_name: str, docs: int, n: int) -> None:
    texts = corpus(corpus_name, docs)
    print(json.dumps([len(texts), queries(texts, n)]))


def child_write(lib: str, path: str, corpus_name: str, docs: int) -> None:
    make_lib(lib).write(corpus(corpus_name, docs), path)


# --- parent ----------------------------------------------------------------------------------


def pct(xs: list, p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p * len(xs)))]


def run(args) -> dict:
    libs = ["lancelet", "lance"]
    try:
        import tantivy  # noqa: F401

        libs.append("tantivy")
    except ImportError:
        print("tantivy is not installed: its column is skipped (pip install tantivy)")
    results: dict = {}
    for cname in args.corpus:
        # The corpus lives in children only: the parent stays small, so each child's peak RSS
        # is its own (exec inherits the parent's high-water mark).
        out, _ = run_child(
            [sys.executable, __file__, "--child-queries", cname, str(args.docs), str(args.queries)], "queries"
        )
        n_docs, qs = json.loads(out.strip().splitlines()[-1])
        print(f"\n== corpus {cname}: {n_docs:,} documents, {args.queries} queries per kind")
        res = results.setdefault(cname, {})
        for lib in libs:
            path = os.path.join(args.dir, f"{cname}-{lib}")
            shutil.rmtree(path, ignore_errors=True)
            run_child([sys.executable, __file__, "--child-write", lib, path, cname, str(args.docs)], "write")
            out, usage = run_child([sys.executable, __file__, "--child-build", lib, path], "build")
            r = json.loads(out.strip().splitlines()[-1])
            r["rss_mb"] = maxrss_mb(usage)
            r["size_mb"] = make_lib(lib).size(path) / 2**20
            search = make_lib(lib).open(path)
            for kind, items in qs.items():
                for k in (10, 100):
                    for q in items[:5]:
                        search(kind, q, k)
                    lat = []
                    for q in items:
                        t0 = time.perf_counter()
                        search(kind, q, k)
                        lat.append((time.perf_counter() - t0) * 1000)
                    r[f"{kind} k={k} p50"] = pct(lat, 0.5)
                    r[f"{kind} k={k} p99"] = pct(lat, 0.99)
            work = qs["3-term OR"] * 3
            t0 = time.perf_counter()
            with ThreadPoolExecutor(2) as ex:
                list(ex.map(lambda q, f=search: f("3-term OR", q, 10), work))
            r["QPS 2 threads"] = len(work) / (time.perf_counter() - t0)
            if lib != "tantivy":
                r["top10 ids"] = [search("3-term OR", q, 10) for q in qs["3-term OR"][:20]]
            res[lib] = r
            print(
                f"  {lib:9s} build {r['wall']:.2f}s wall {r['cpu']:.2f}s CPU {r['rss_mb']:.0f} MiB, index {r['size_mb']:.1f} MiB, "
                f"3-term OR k=10 p50 {r['3-term OR k=10 p50']:.2f} ms, QPS {r['QPS 2 threads']:.0f}"
            )
        report(res)
    return results


def report(res: dict) -> None:
    ours = res["lancelet"]
    keys = [k for k in ours if k not in ("top10 ids",)]
    others = [lib for lib in res if lib != "lancelet"]
    print(f"  {'metric':28s} {'lancelet':>10s} " + " ".join(f"{o:>10s} {'ratio':>7s}" for o in others))
    for k in keys:
        row = f"  {k:28s} {ours[k]:10.3f} "
        for o in others:
            v = res[o].get(k)
            row += f"{v:10.3f} {ours[k] / v:7.2f} " if v else " " * 19
        print(row)
    if "lance" in res:
        same = sum(set(a) == set(b) for a, b in zip(ours["top10 ids"], res["lance"]["top10 ids"]))
        print(
            f"  top-10 id sets equal to pylance's on {same}/{len(ours['top10 ids'])} queries (ties at the cut may differ)"
        )


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child-build":
        return child_build(sys.argv[2], sys.argv[3])
    if len(sys.argv) > 1 and sys.argv[1] == "--child-queries":
        return child_queries(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
    if len(sys.argv) > 1 and sys.argv[1] == "--child-write":
        return child_write(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]))
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--docs", type=int, default=1_000_000)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--corpus", nargs="+", default=["stdlib", "zipf"], choices=["stdlib", "zipf"])
    ap.add_argument("--dir", default=None)
    ap.add_argument("--json", default=None)
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    if args.quick:
        args.docs, args.queries = 50_000, 40
    args.dir = args.dir or tempfile.mkdtemp(prefix="bench-fts-")
    results = run(args)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
