#!/usr/bin/env python3
"""bench_fts -- full-text search: lancelet vs pylance 14 vs tantivy, one run, one machine.

How to run (from the repository root, with the project's virtualenv):

    source .venv/bin/activate
    pip install tantivy                      # optional: without it the tantivy column is skipped
    python benches/bench_fts.py --quick      # smoke test: 50k synthetic docs + stdlib, 50 queries
    python benches/bench_fts.py              # both corpora, 1,000,000 synthetic docs, 200 queries
    python benches/bench_fts.py --corpus zipf --docs 200000 --queries 100 --json fts.json
    python benches/bench_fts.py --memory-limit 512 --workers 2   # same build budget for all three

Corpora (``--corpus``, default both)
  stdlib  real English: the module, class and function docstrings of the installed Python
          standard library (site-packages excluded), split into paragraphs on blank lines,
          paragraphs of 5 words or more.  Its size depends on the Python version (printed).
  zipf    ``--docs`` documents of 20-60 words (uniform), each word drawn from a Zipf(s=1.1)
          distribution over a vocabulary of 100,000 pseudo-words ``w0 .. w99999`` (``w0`` the
          most frequent; pseudo-words of this shape are left alone by every analyzer here:
          no stemming, no stop words).  Generated with numpy, vectorised, fixed ``--seed``.

Queries (fixed seed; ``--queries`` per kind).  Every query is drawn from a random document of the
corpus, so it matches at least one document and its words are frequency-weighted the way real
queries are: ``1-term`` one word; ``3-term OR`` and ``3-term AND`` the same three distinct words
of one document (OR: a plain string query; AND: ``MatchQuery(operator=AND)`` / tantivy ``+a +b
+c``); ``phrase`` two adjacent words of one document (``PhraseQuery`` / tantivy ``"a b"``).  Query
words are alphanumeric, ASCII, 3+ characters and not common English function words.  Each kind
runs at limit 10 and at limit 100.

Measurements, per library and corpus, every one in its own child process (the parent never
imports a search library or holds the corpus, so the children's peak RSS -- ``ru_maxrss`` from
``os.wait4``, see ``_rss.py`` -- is each library's own):
  build       wall (perf_counter) and CPU (process_time: all threads) of the index build call
              alone, and the child's peak RSS (for tantivy that includes the documents as Python
              strings, which its writer is fed one by one from Python)
  index MiB   bytes on disk of ``<dataset>/_indices/`` (Lance) or of the tantivy index directory
              (which also stores the ``id`` field: tantivy has no other place to keep it)
  open+first query ms   opening the dataset/index and running one query (index loading)
  latency     p50 / p99 milliseconds per query (one thread, warm: one untimed pass over the same
              queries first; with 50 queries p99 is the maximum), and mean CPU ms per query
  QPS 1thr    queries per second of the timed single-thread pass at limit 10
  QPS 2thr    queries per second with two threads (``ThreadPoolExecutor(2)``) sharing one opened
              dataset / one tantivy searcher, limit 10, every query twice.  Every library drops
              the GIL while it searches, but for queries well under a millisecond the hand-offs
              of the GIL between the two threads can cost more than the second core gains, so
              2thr may come out below 1thr (both lancelet and tantivy show it on 2 cores)
  query RSS   peak RSS of the query child
Each search returns the ids and scores of its hits: ``to_table(full_text_query=q, limit=k,
columns=["id", "_score"])`` for the Lance libraries, ``searcher.search(q, k, count=False)`` plus
``searcher.doc(addr)["id"]`` (the stored id) for tantivy.

Index settings.  One index per library with positions (``with_position=True``; tantivy
``index_option="position"``) serves every query kind, phrases included; ``--no-positions``
builds without them (and skips phrases).  The Lance libraries use their default English analyzer
(simple tokenizer, drop tokens over 40 bytes, lower-case, Snowball English stemmer, stop words,
ASCII folding; ``--no-stem`` / ``--no-stop-words`` switch stemming / stop words off).  tantivy
uses its built-in ``en_stem`` analyzer, the closest one it ships: simple tokenizer, drop long
tokens, lower-case, Snowball English stemmer (tantivy's, the older rules: "added" -> "ad", where
pylance 14 gives "add") -- but NO stop-word removal and NO ASCII folding, so
stop words stay in tantivy's index (bigger postings, different document lengths, hence somewhat
different BM25 scores) and accents are not folded.  ``--tantivy-analyzer lance`` registers a
custom tantivy analyzer in Lance's order instead (tantivy's own English stop-word list, which is
not exactly pylance's).  ``--memory-limit MiB`` and ``--workers N`` are passed as
``memory_limit`` / ``num_workers`` to the Lance builds and as ``heap_size`` / ``num_threads`` to
tantivy's writer; unset, each library uses its default (they differ: pylance 2 GiB per worker,
lancelet 128 MiB, tantivy-py 128 MB).

Checks.  lancelet's and pylance's top 10 (ids and scores) are compared query by query and kind by
kind: "same" (identical lists), "ties" (same scores, ids differing only among equal scores) or
MISMATCH; also how many queries return a different number of hits at limit 100.  tantivy's overlap
with pylance's top 10 is printed for information only (different analyzer, so not expected equal).

Output: a table per corpus, ratios lancelet/pylance and lancelet/tantivy (for QPS higher is
better, for everything else lower is better), and with ``--json FILE`` every number, the query
lists and the check details.  Timings are as noisy as the machine: run it with nothing else busy.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import importlib.util
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _rss import maxrss_mb, run_child  # noqa: E402

# The parent imports nothing heavy (no numpy, pyarrow or search library): a child's ru_maxrss
# starts at its parent's high-water mark, so the parent must stay small.

LIBS = {"lancelet": "lancelet", "pylance": "lance", "tantivy": "tantivy"}  # label -> module
KINDS = ["1-term", "3-term OR", "3-term AND", "phrase"]
LIMITS = [10, 100]
VOCAB = 100_000
ZIPF_S = 1.1
# Common English function words, kept out of the queries (the Lance analyzers drop stop words,
# tantivy's en_stem does not, so such words would make the libraries' queries differ).
QUERY_STOP = set(
    """a about above after again against all also am an and any are as at be because been before
    being below between both but by can could did do does doing down during each else few for from
    further had has have having he her here hers herself him himself his how if in into is it its
    itself just may me might more most must my myself no nor not now of off on once only or other
    our ours ourselves out over own same shall she should so some such than that the their theirs
    them themselves then there these they this those through to too under until up upon very was
    we were what when where which while who whom why will with would you your yours yourself""".split()
)
TOKEN_RE = re.compile(r"[^\W_]+")  # runs of Unicode letters/digits: the "simple" tokenizer's split


# ==============================================================================================
# children: corpus generation, dataset write, index build, queries
# ==============================================================================================


def stdlib_paragraphs() -> list:
    """Docstring paragraphs (>= 5 words) of the installed standard library, in a fixed order."""
    import ast
    import sysconfig
    import warnings

    root = sysconfig.get_paths()["stdlib"]
    out = []
    for dirpath, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in ("site-packages", "dist-packages", "__pycache__"))
        for name in sorted(files):
            if not name.endswith(".py"):
                continue
            try:
                with open(os.path.join(dirpath, name), encoding="utf-8") as fh:
                    src = fh.read()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    tree = ast.parse(src)
            except (SyntaxError, UnicodeDecodeError, ValueError, OSError):
                continue
            for node in ast.walk(tree):
                if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                    doc = ast.get_docstring(node)
                    if doc:
                        out += [p.strip() for p in re.split(r"\n\s*\n", doc) if len(p.split()) >= 5]
    return out


def zipf_texts(n: int, seed: int):
    """n documents of 20-60 Zipf(1.1) pseudo-words, as a pyarrow string array (vectorised)."""
    import numpy as np
    import pyarrow as pa

    rng = np.random.default_rng(seed)
    cdf = np.cumsum(np.arange(1, VOCAB + 1, dtype=np.float64) ** -ZIPF_S)
    cdf /= cdf[-1]
    # the vocabulary as a (VOCAB, width) byte matrix: word bytes, then a space, then padding
    words = np.array([f"w{i}" for i in range(VOCAB)], dtype="S")
    wlen = np.char.str_len(words).astype(np.int64) + 1  # with the separating space
    width = words.dtype.itemsize + 1
    mat = np.zeros((VOCAB, width), dtype=np.uint8)
    mat[:, :-1] = np.frombuffer(words.tobytes(), dtype=np.uint8).reshape(VOCAB, width - 1)
    mat[np.arange(VOCAB), wlen - 1] = ord(" ")
    chunks = []
    for lo in range(0, n, 100_000):
        m = min(100_000, n - lo)
        lens = rng.integers(20, 61, size=m)
        tok = np.searchsorted(cdf, rng.random(int(lens.sum())), side="right")
        tok = np.minimum(tok, VOCAB - 1)
        tl = wlen[tok]
        data = mat[tok][np.arange(width) < tl[:, None]]  # row-major: tokens in order
        ends = np.cumsum(tl)[np.cumsum(lens) - 1]  # byte end of each document (after its space)
        data = np.delete(data, ends - 1)  # drop each document's trailing space
        offsets = np.zeros(m + 1, dtype=np.int64)
        offsets[1:] = ends - np.arange(1, m + 1)
        chunks.append(pa.LargeStringArray.from_buffers(m, pa.py_buffer(offsets), pa.py_buffer(data)))
    return pa.chunked_array(chunks).cast(pa.string())


def make_queries(texts: list, n: int, seed: int) -> dict:
    """n queries per kind, each from one random document (see the module docstring)."""
    import random

    rng = random.Random(seed)

    def good(w: str) -> bool:
        return 3 <= len(w) <= 30 and w.isascii() and not w.isdigit() and w not in QUERY_STOP

    one, three, phrase = [], [], []
    for _ in range(2000 * n):
        if len(one) >= n and len(three) >= n and len(phrase) >= n:
            break
        toks = TOKEN_RE.findall(texts[rng.randrange(len(texts))].lower())
        ok = [good(t) for t in toks]
        words = sorted({t for t, g in zip(toks, ok) if g})  # sorted: independent of hash seeds
        if len(one) < n and words:
            one.append(rng.choice(words))
        if len(three) < n and len(words) >= 3:
            three.append(" ".join(rng.sample(words, 3)))
        pairs = [f"{a} {b}" for a, b, ga, gb in zip(toks, toks[1:], ok, ok[1:]) if ga and gb and a != b]
        if len(phrase) < n and pairs:
            phrase.append(rng.choice(pairs))
    return {"1-term": one, "3-term OR": three, "3-term AND": three, "phrase": phrase}


def child_gen(corpus: str, docs: int, seed: int, nq: int, workdir: str) -> None:
    """Writes workdir/corpus.parquet (id, text) and workdir/queries.json."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    texts = zipf_texts(docs, seed) if corpus == "zipf" else pa.array(stdlib_paragraphs(), pa.string())
    table = pa.table({"id": pa.array(range(len(texts)), pa.int64()), "text": texts})
    pq.write_table(table, os.path.join(workdir, "corpus.parquet"))
    pylist = texts.to_pylist()
    qs = make_queries(pylist, nq, seed + 1)
    words = sum(len(t.split()) for t in pylist)
    with open(os.path.join(workdir, "queries.json"), "w") as f:
        json.dump(qs, f)
    print(json.dumps({"docs": len(pylist), "words": words}))


class LanceLib:
    """lancelet or pylance: the same Python API."""

    def __init__(self, module: str):
        import importlib

        self.mod = importlib.import_module(module)
        self.q = importlib.import_module(f"{module}.query")

    def write(self, corpus_file: str, path: str) -> None:
        import pyarrow.parquet as pq

        self.mod.write_dataset(pq.read_table(corpus_file), path)

    def prepare(self, path: str, corpus_file: str, p: dict):
        ds = self.mod.dataset(path)
        kw = dict(with_position=p["positions"], stem=p["stem"], remove_stop_words=p["stop_words"])
        if p["memory_limit"]:
            kw["memory_limit"] = p["memory_limit"]
        if p["workers"]:
            kw["num_workers"] = p["workers"]
        return lambda: ds.create_scalar_index("text", "INVERTED", **kw)

    def index_dir(self, path: str) -> str:
        return os.path.join(path, "_indices")

    def open(self, path: str, p: dict):
        ds = self.mod.dataset(path)
        q = self.q
        and_op = q.FullTextOperator.AND

        def search(kind: str, text: str, k: int):
            if kind == "3-term AND":
                query = q.MatchQuery(text, "text", operator=and_op)
            elif kind == "phrase":
                query = q.PhraseQuery(text, "text")
            else:
                query = text  # a plain string: OR of its terms
            t = ds.to_table(full_text_query=query, limit=k, columns=["id", "_score"])
            return t.column("id").to_pylist(), t.column("_score").to_pylist()

        return search, {}


class TantivyLib:
    TOKENIZER = "lance_like"

    def __init__(self):
        import tantivy

        self.t = tantivy

    def _schema_and_register(self, p: dict, index_path: str, create: bool):
        t = self.t
        if p["tantivy_analyzer"] == "lance":
            name = self.TOKENIZER
        else:
            name = "en_stem" if p["stem"] else "default"
        b = t.SchemaBuilder()
        b.add_integer_field("id", stored=True)
        b.add_text_field(
            "text", stored=False, tokenizer_name=name, index_option="position" if p["positions"] else "freq"
        )
        if create:
            os.makedirs(index_path, exist_ok=True)
            index = t.Index(b.build(), path=index_path, reuse=False)
        else:
            index = t.Index.open(index_path)
        if name == self.TOKENIZER:  # registered tokenizers are not persisted: register each time
            ab = t.TextAnalyzerBuilder(t.Tokenizer.simple()).filter(t.Filter.remove_long(40))
            ab = ab.filter(t.Filter.lowercase())
            if p["stem"]:
                ab = ab.filter(t.Filter.stemmer("english"))
            if p["stop_words"]:
                ab = ab.filter(t.Filter.stopword("english"))
            index.register_tokenizer(name, ab.filter(t.Filter.ascii_fold()).build())
        return index

    def prepare(self, path: str, corpus_file: str, p: dict):
        import pyarrow.parquet as pq

        table = pq.read_table(corpus_file)
        ids, texts = table.column("id").to_pylist(), table.column("text").to_pylist()
        del table
        index = self._schema_and_register(p, self.index_dir(path), create=True)
        heap = (p["memory_limit"] or 128) * 1024 * 1024
        Document = self.t.Document

        def build():
            w = index.writer(heap_size=heap, num_threads=p["workers"] or 0)
            for i, text in zip(ids, texts):
                w.add_document(Document(id=i, text=text))
            w.commit()
            w.wait_merging_threads()

        return build

    def index_dir(self, path: str) -> str:
        return os.path.join(path, "index")

    def open(self, path: str, p: dict):
        index = self._schema_and_register(p, self.index_dir(path), create=False)
        index.reload()
        searcher = index.searcher()

        def search(kind: str, text: str, k: int):
            if kind == "3-term AND":
                qs = " ".join(f"+{w}" for w in text.split())
            elif kind == "phrase":
                qs = f'"{text}"'
            else:
                qs = text
            hits = searcher.search(index.parse_query(qs, ["text"]), k, count=False).hits
            return [searcher.doc(a)["id"][0] for _, a in hits], [s for s, _ in hits]

        return search, {"segments": searcher.num_segments}


def make_lib(label: str):
    return TantivyLib() if label == "tantivy" else LanceLib(LIBS[label])


def child_write(label: str, corpus_file: str, path: str) -> None:
    import time

    t0 = time.perf_counter()
    make_lib(label).write(corpus_file, path)
    print(json.dumps({"write_s": time.perf_counter() - t0}))


def child_build(label: str, corpus_file: str, path: str, p: dict) -> None:
    import time

    build = make_lib(label).prepare(path, corpus_file, p)
    t0, c0 = time.perf_counter(), time.process_time()
    build()
    print(json.dumps({"build_wall_s": time.perf_counter() - t0, "build_cpu_s": time.process_time() - c0}))


def pct(xs: list, p: float) -> float:
    """Nearest-rank percentile: the smallest value with at least p of the values at or below it."""
    import math

    xs = sorted(xs)
    return xs[max(0, math.ceil(p * len(xs)) - 1)]


def child_query(label: str, path: str, queries_file: str, p: dict) -> None:
    import time
    from concurrent.futures import ThreadPoolExecutor

    with open(queries_file) as f:
        qs = json.load(f)
    kinds = [k for k in KINDS if p["positions"] or k != "phrase"]
    lib = make_lib(label)
    t0 = time.perf_counter()
    search, info = lib.open(path, p)
    search(kinds[0], qs[kinds[0]][0], 10)
    r: dict = {"open+first query ms": (time.perf_counter() - t0) * 1000, **info}
    top10: dict = {}
    counts100: dict = {}
    for kind in kinds:
        items = qs[kind]
        for k in LIMITS:
            for q in items:  # warm-up pass
                search(kind, q, k)
            lat, outs = [], []
            c0 = time.process_time()
            for q in items:
                t0 = time.perf_counter()
                out = search(kind, q, k)
                lat.append((time.perf_counter() - t0) * 1000)
                outs.append(out)
            cpu = time.process_time() - c0
            r[f"{kind} k={k} p50 ms"] = pct(lat, 0.50)
            r[f"{kind} k={k} p99 ms"] = pct(lat, 0.99)
            r[f"{kind} k={k} mean ms"] = sum(lat) / len(lat)
            r[f"{kind} k={k} cpu ms"] = cpu * 1000 / len(items)
            if k == 10:
                r[f"{kind} QPS 1thr"] = len(items) / (sum(lat) / 1000)
                top10[kind] = [[ids, [round(s, 6) for s in sc]] for ids, sc in outs]
            else:
                counts100[kind] = [len(ids) for ids, _ in outs]
        work = items * 2
        with ThreadPoolExecutor(2) as ex:
            list(ex.map(lambda q, kind=kind: search(kind, q, 10), items))  # warm the pool
            t0 = time.perf_counter()
            list(ex.map(lambda q, kind=kind: search(kind, q, 10), work))
            r[f"{kind} QPS 2thr"] = len(work) / (time.perf_counter() - t0)
    print(json.dumps({"metrics": r, "top10": top10, "count100": counts100}))


def child_main(argv: list) -> None:
    what = argv[0]
    if what == "gen":
        child_gen(argv[1], int(argv[2]), int(argv[3]), int(argv[4]), argv[5])
    elif what == "write":
        child_write(argv[1], argv[2], argv[3])
    elif what == "build":
        child_build(argv[1], argv[2], argv[3], json.loads(argv[4]))
    elif what == "query":
        child_query(argv[1], argv[2], argv[3], json.loads(argv[4]))
    else:
        raise SystemExit(f"unknown child command {what!r}")


# ==============================================================================================
# parent
# ==============================================================================================


def child(args: list, what: str):
    """Runs this script as a child; returns (its last stdout line as JSON, its peak RSS MiB)."""
    out, usage = run_child([sys.executable, os.path.abspath(__file__), "--child", *args], what)
    lines = [ln for ln in out.strip().splitlines() if ln.startswith("{")]
    return json.loads(lines[-1]) if lines else {}, maxrss_mb(usage)


def dir_mib(d: str) -> float:
    return sum(os.path.getsize(os.path.join(p, f)) for p, _, fs in os.walk(d) for f in fs) / 2**20


def compare(a: list, b: list, rel: float = 1e-4) -> str:
    """'same', 'ties' (scores agree, ids differ only among equal scores) or 'MISMATCH'."""
    (ia, sa), (ib, sb) = a, b
    if ia == ib:
        return "same"
    if len(ia) != len(ib) or any(abs(x - y) > rel * max(1.0, abs(x)) for x, y in zip(sa, sb)):
        return "MISMATCH"
    # ids may differ within a run of equal scores (in any order) and, at the cut, the last
    # run may hold different members of a larger tie; every other run must hold the same ids
    runs_a: dict = {}
    runs_b: dict = {}
    for x, y, s in zip(ia, ib, sa):
        runs_a.setdefault(round(s, 4), set()).add(x)
        runs_b.setdefault(round(s, 4), set()).add(y)
    cut = round(sa[-1], 4)
    return "ties" if all(runs_a[s] == runs_b[s] for s in runs_a if s != cut) else "MISMATCH"


def checks(res: dict, queries: dict) -> dict:
    out: dict = {}
    if "lancelet" in res and "pylance" in res:
        a, b = res["lancelet"], res["pylance"]
        for kind in a.get("top10", {}):
            if kind not in b.get("top10", {}):
                continue
            verdicts = [compare(x, y) for x, y in zip(a["top10"][kind], b["top10"][kind])]
            bad = [i for i, v in enumerate(verdicts) if v == "MISMATCH"]
            ca, cb = a["count100"].get(kind, []), b["count100"].get(kind, [])
            out[kind] = {
                "same": verdicts.count("same"),
                "ties": verdicts.count("ties"),
                "mismatch": len(bad),
                "count100_differs": sum(x != y for x, y in zip(ca, cb)),
                "n": len(verdicts),
                "examples": [
                    {"query": queries[kind][i], "lancelet": a["top10"][kind][i], "pylance": b["top10"][kind][i]}
                    for i in bad[:3]
                ],
            }
    if "tantivy" in res and "pylance" in res:
        for kind in res["tantivy"].get("top10", {}):
            pairs = list(zip(res["tantivy"]["top10"][kind], res["pylance"]["top10"].get(kind, [])))
            if pairs:
                ov = [len(set(x[0]) & set(y[0])) / max(1, len(y[0]), len(x[0])) for x, y in pairs]
                out.setdefault(kind, {})["tantivy_overlap_with_pylance"] = sum(ov) / len(ov)
    return out


def fmt(v) -> str:
    if isinstance(v, float):
        return f"{v:.4g}" if abs(v) < 1e5 else f"{v:,.0f}"
    return "" if v is None else str(v)


def print_table(libs: list, res: dict) -> None:
    """One row per metric (mean latencies and CPU per query at limit 100: JSON only)."""
    keys: list = []
    for lab in libs:
        keys += [
            k
            for k in res.get(lab, {}).get("metrics", {})
            if k not in keys and not k.endswith(("mean ms", "k=100 cpu ms"))
        ]
    others = [o for o in ("pylance", "tantivy") if o in libs and "lancelet" in libs]
    head = f"  {'metric':<28}" + "".join(f"{lab:>12}" for lab in libs)
    head += "".join(f"{'lancelet/' + o:>18}" for o in others)
    print(head)
    for k in keys:
        vals = [res.get(lab, {}).get("metrics", {}).get(k) for lab in libs]
        row = f"  {k:<28}" + "".join(f"{fmt(v):>12}" for v in vals)
        ours = res.get("lancelet", {}).get("metrics", {}).get(k)
        for o in others:
            v = res.get(o, {}).get("metrics", {}).get(k)
            ok = isinstance(ours, (int, float)) and isinstance(v, (int, float)) and v
            row += f"{ours / v:>18.2f}" if ok else f"{'':>18}"
        print(row)


def print_checks(chk: dict) -> None:
    for kind, c in chk.items():
        line = f"  {kind:<11}"
        if "n" in c:
            flag = "  <-- MISMATCH" if c["mismatch"] or c["count100_differs"] else ""
            line += (
                f" lancelet vs pylance top-10: same {c['same']}/{c['n']}, equal up to ties {c['ties']}, "
                f"mismatch {c['mismatch']}; hit counts at limit 100 differ on {c['count100_differs']}{flag}"
            )
        if "tantivy_overlap_with_pylance" in c:
            sep = ";" if "n" in c else ""
            line += f"{sep} tantivy's top 10 overlap pylance's by {c['tantivy_overlap_with_pylance']:.0%}"
        print(line)
        for ex in c.get("examples", []):
            print(f"      {ex['query']!r}:\n        lancelet {ex['lancelet']}\n        pylance  {ex['pylance']}")


def versions() -> dict:
    from importlib.metadata import PackageNotFoundError, version

    out = {"python": platform.python_version()}
    for dist in ("lancelet", "pylance", "tantivy", "pyarrow", "numpy"):
        try:
            out[dist] = version(dist)
        except PackageNotFoundError:
            out[dist] = None
    try:
        here = os.path.dirname(os.path.abspath(__file__))
        out["lancelet_git"] = subprocess.run(
            ["git", "-C", here, "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        pass
    return out


def run_corpus(cname: str, args, libs: list, p: dict, root: str) -> dict:
    work = os.path.join(root, cname)
    os.makedirs(work, exist_ok=True)
    corpus_file, queries_file = os.path.join(work, "corpus.parquet"), os.path.join(work, "queries.json")
    info, _ = child(["gen", cname, str(args.docs), str(args.seed), str(args.queries), work], "corpus")
    with open(queries_file) as f:
        queries = json.load(f)
    nq = {k: len(v) for k, v in queries.items()}
    print(
        f"\n== corpus {cname}: {info['docs']:,} documents ({info['words']:,} words); queries per kind: {nq}", flush=True
    )
    res: dict = {}
    for lab in libs:
        path = os.path.join(work, f"{lab}.lance" if lab != "tantivy" else "tantivy")
        shutil.rmtree(path, ignore_errors=True)
        r: dict = {"metrics": {}}
        try:
            # the dataset write is not measured (tantivy indexes straight from the corpus file)
            w = child(["write", lab, corpus_file, path], f"{lab} write")[0] if lab != "tantivy" else {}
            b, rss = child(["build", lab, corpus_file, path, json.dumps(p)], f"{lab} build")
            m = r["metrics"]
            m["build wall s"], m["build CPU s"], m["build peak RSS MiB"] = b["build_wall_s"], b["build_cpu_s"], rss
            m["index MiB"] = dir_mib(make_index_dir(lab, path))
            q, qrss = child(["query", lab, path, queries_file, json.dumps(p)], f"{lab} queries")
            m.update(q["metrics"])
            m["query peak RSS MiB"] = qrss
            r.update(write_s=w.get("write_s"), top10=q["top10"], count100=q["count100"])
            print(
                f"  {lab:<9} build {m['build wall s']:.2f}s wall / {m['build CPU s']:.2f}s CPU / "
                f"{rss:.0f} MiB, index {m['index MiB']:.1f} MiB, 1-term k=10 p50 "
                f"{m['1-term k=10 p50 ms']:.3f} ms",
                flush=True,
            )
        except Exception as e:  # noqa: BLE001 -- one library failing must not hide the others
            r["error"] = f"{type(e).__name__}: {e}"
            print(f"  {lab:<9} FAILED: {r['error']} (its stderr is above)", flush=True)
        res[lab] = r
    print(f"\n  {cname}: ratio = lancelet / other; QPS: higher is better, everything else: lower is better")
    print_table(libs, res)
    chk = checks(res, queries)
    print_checks(chk)
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    return {"docs": info["docs"], "words": info["words"], "queries": queries, "libs": res, "checks": chk}


def make_index_dir(lab: str, path: str) -> str:
    return os.path.join(path, "index") if lab == "tantivy" else os.path.join(path, "_indices")


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        return child_main(sys.argv[2:])
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", nargs="+", choices=["stdlib", "zipf"], default=["stdlib", "zipf"])
    ap.add_argument("--docs", type=int, default=1_000_000, help="synthetic (zipf) documents")
    ap.add_argument("--queries", type=int, default=200, help="queries per kind")
    ap.add_argument("--libs", nargs="+", choices=list(LIBS), default=list(LIBS))
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--no-positions", action="store_true", help="index without positions (no phrases)")
    ap.add_argument("--no-stem", action="store_true")
    ap.add_argument("--no-stop-words", action="store_true")
    ap.add_argument("--memory-limit", type=int, default=None, help="build memory budget, MiB (all libs)")
    ap.add_argument("--workers", type=int, default=None, help="build threads (all libs)")
    ap.add_argument("--tantivy-analyzer", choices=["en_stem", "lance"], default="en_stem")
    ap.add_argument("--dir", default=None, help="work directory (default: a temporary one)")
    ap.add_argument("--keep", action="store_true", help="keep the datasets and indexes")
    ap.add_argument("--json", default=None, help="write every result to this file")
    ap.add_argument("--quick", action="store_true", help="smoke test: 50k docs, 50 queries")
    args = ap.parse_args()
    if args.quick:
        args.docs, args.queries = 50_000, 50
    libs = list(args.libs)
    if "tantivy" in libs and importlib.util.find_spec("tantivy") is None:
        print("tantivy is not installed (pip install tantivy): its column is skipped")
        libs.remove("tantivy")
    p = {
        "positions": not args.no_positions,
        "stem": not args.no_stem,
        "stop_words": not args.no_stop_words,
        "memory_limit": args.memory_limit,
        "workers": args.workers,
        "tantivy_analyzer": args.tantivy_analyzer,
    }
    root = args.dir or tempfile.mkdtemp(prefix="bench-fts-")
    os.makedirs(root, exist_ok=True)
    vers = versions()
    print(f"bench_fts: {', '.join(f'{k} {v}' for k, v in vers.items() if v)}; {os.cpu_count()} CPUs; index params {p}")
    out = {
        "meta": {
            "date": _dt.datetime.now().isoformat(timespec="seconds"),
            "machine": platform.platform(),
            "cpus": os.cpu_count(),
            "versions": vers,
            "args": vars(args),
            "index_params": p,
        },
        "corpora": {},
    }
    try:
        for cname in args.corpus:
            out["corpora"][cname] = run_corpus(cname, args, libs, p, root)
    finally:
        if not args.dir and not args.keep:
            shutil.rmtree(root, ignore_errors=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)
        print(f"\nresults written to {args.json}")


if __name__ == "__main__":
    main()
