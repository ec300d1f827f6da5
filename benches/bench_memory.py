"""Peak memory (RSS) of a write and of a full scan: lancelet vs pylance 14, same run.

    python benches/bench_memory.py [--rows 2000000] [--libs lancelet,pylance] [--dir DIR]

The table is formatbench's (int64 ids, 50-value Zipf categories, 20-200 character free
text, floats, bools, nullable int32, lists of 0-5 tags): ``make_table`` of
``benches/formatbench.py`` (or the file ``$LANCELET_FORMATBENCH`` names), otherwise the
generator below of the same shape (fixed seed).

Every measurement runs in a fresh interpreter; its peak RSS is ``ru_maxrss`` from
``os.wait4`` (``benches/_rss.py``). For each library:

* ``write``: import the library, load the table, ``write_dataset`` (each library's
  defaults, file format 2.2 for both); baseline = a child that imports the library and
  loads the table, and stops there. The parent generates the table once into an
  uncompressed Arrow IPC file (in a child too: on Linux a child inherits its parent's RSS
  high-water mark through ``exec``, so the parent stays small) and the children read it into memory (``read_all``, no
  memory map): loading peaks at the table's size, so the generator's transient
  allocations (about twice the table) do not hide what the write adds;
* ``scan to_table``: open the dataset that library wrote and ``to_table()`` every column;
* ``scan batches``: the same scan streamed with ``to_batches()``, each batch dropped;
  baseline of both scans = a child that only imports the library.

The table reports the whole child's peak and the peak above its baseline (what the
operation itself added), and lancelet / pylance ratios of both (below 1 is better).
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import json
import os
import shutil
import sys
import tempfile
from typing import Any, Callable, Dict, List

import numpy as np
import pyarrow as pa

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from _rss import maxrss_mb, run_child  # noqa: E402

MODULES = {"lancelet": "lancelet", "pylance": "lance"}
PHASES = ["write", "scan to_table", "scan batches"]
BASELINE_OF = {"write": "import + load", "scan to_table": "import", "scan batches": "import"}


# -- the table ------------------------------------------------------------------------------

def _formatbench_path() -> str:
    env = os.environ.get("LANCELET_FORMATBENCH")
    if env:
        return env
    return os.path.join(HERE, "formatbench.py")


def generator() -> "tuple[Callable[[int], pa.Table], str]":
    """formatbench's ``make_table`` if its file is there, else ``make_table`` below."""
    path = _formatbench_path()
    if os.path.isfile(path):
        spec = importlib.util.spec_from_file_location("formatbench", path)
        if spec is not None and spec.loader is not None:
            mod = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(mod)
            return mod.make_table, "formatbench.make_table"
    return make_table, "bench_memory.make_table"


def make_table(n: int, seed: int = 42) -> pa.Table:
    """formatbench's shape: id, category, text (20-200 chars), value, flag, maybe_null, tags."""
    rng = np.random.default_rng(seed)
    letters = np.frombuffer(b"abcdefghijklmnopqrstuvwxyz", dtype=np.uint8)

    def words(count: int, lo: int, hi: int) -> List[str]:
        return [bytes(letters[rng.integers(0, 26, k)]).decode() for k in rng.integers(lo, hi + 1, count)]

    vocab = np.frombuffer(" ".join(words(5000, 2, 10)).encode() + b" ", dtype=np.uint8)
    cats = pa.array(sorted(set(words(200, 4, 12)))[:50])
    tags = pa.array(sorted(set(words(400, 3, 8)))[:200])
    w = 1.0 / np.arange(1, len(cats) + 1) ** 0.7
    # Free text: windows of a word soup, lengths uniform in [20, 200].
    lengths = rng.integers(20, 201, n)
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    starts = rng.integers(0, len(vocab) - 200, n)
    idx = np.repeat(starts - offsets[:-1], lengths) + np.arange(int(offsets[-1]))
    text = pa.LargeStringArray.from_buffers(n, pa.py_buffer(offsets), pa.py_buffer(vocab[idx].copy()))
    counts = rng.integers(0, 6, n)
    toffs = np.zeros(n + 1, dtype=np.int32)
    np.cumsum(counts, out=toffs[1:])
    return pa.table({
        "id": pa.array(np.arange(n, dtype=np.int64)),
        "category": cats.take(pa.array(rng.choice(len(cats), n, p=w / w.sum()))),
        "text": text.cast(pa.string()),
        "value": pa.array(rng.random(n)),
        "flag": pa.array(rng.random(n) < 0.5),
        "maybe_null": pa.array(rng.integers(-1_000_000, 1_000_000, n).astype(np.int32),
                               mask=rng.random(n) < 0.10, type=pa.int32()),
        "tags": pa.ListArray.from_arrays(pa.array(toffs), tags.take(pa.array(rng.integers(0, 200, int(toffs[-1]))))),
    })


# -- children -------------------------------------------------------------------------------

def child(mode: str, lib: str, rows: int, uri: str, source: str) -> None:
    """Runs in a fresh interpreter; prints a JSON line (sizes, for the report)."""
    if mode == "generate":  # the input, written by a child so that the parent stays small
        make, name = generator()
        table = make(rows)
        with pa.OSFile(source, "wb") as f, pa.ipc.new_file(f, table.schema) as w:
            w.write_table(table)
        print(json.dumps({"generator": name}))
        return
    mod = importlib.import_module(MODULES[lib])
    out: Dict[str, Any] = {}
    if mode in ("import + load", "write"):
        with pa.OSFile(source, "rb") as f:
            table = pa.ipc.open_file(f).read_all()
        out["table_mb"] = table.nbytes / 2**20
        if mode == "write":
            mod.write_dataset(table, uri)
    elif mode == "scan to_table":
        t = mod.dataset(uri).to_table()
        out["rows"], out["result_mb"] = t.num_rows, t.nbytes / 2**20
    elif mode == "scan batches":
        n = 0
        for b in mod.dataset(uri).to_batches():
            n += b.num_rows
        out["rows"] = n
    print(json.dumps(out))


def measure(mode: str, lib: str, rows: int, uri: str, source: str) -> Dict[str, Any]:
    out, usage = run_child([sys.executable, __file__, "--child", mode, lib, str(rows), uri, source],
                           what=f"{lib} {mode}")
    res = json.loads(out.strip().splitlines()[-1])
    res["peak_mb"] = maxrss_mb(usage)
    return res


# -- report ---------------------------------------------------------------------------------

def run(rows: int, libs: List[str], root: str) -> "tuple[Dict[str, Dict[str, Dict[str, Any]]], str]":
    # On Linux a child inherits its parent's RSS high-water mark through exec (see _rss.py),
    # so the parent never holds the table: a child generates it.
    source = os.path.join(root, "input.arrow")
    name = measure("generate", "", rows, "", source)["generator"]
    res: Dict[str, Dict[str, Dict[str, Any]]] = {}
    for lib in libs:
        uri = os.path.join(root, f"{lib}.lance")
        r = res[lib] = {}
        for mode in ["import", "import + load", *PHASES]:
            r[mode] = measure(mode, lib, rows, uri, source)
        for phase in ("scan to_table", "scan batches"):
            if r[phase]["rows"] != rows:
                raise RuntimeError(f"{lib} {phase} read {r[phase]['rows']} rows, expected {rows}")
    return res, name


def render(res: Dict[str, Dict[str, Dict[str, Any]]], rows: int, source: str) -> str:
    libs = list(res)
    lines = [f"Peak RSS (MiB), {rows:,} rows, table from {source} "
             f"({next(iter(res.values()))['import + load']['table_mb']:.0f} MiB in Arrow); one child per cell",
             "",
             "| phase | baseline | " + " | ".join(f"{lib} peak | {lib} above" for lib in libs)
             + (" | ratio peak | ratio above |" if len(libs) == 2 else " |"),
             "| --- | --- | " + " | ".join("---: | ---:" for _ in libs) + (" | ---: | ---: |" if len(libs) == 2 else " |")]
    for phase in ["import", "import + load", *PHASES]:
        base = BASELINE_OF.get(phase)
        cells, peaks, aboves = [], [], []
        for lib in libs:
            peak = res[lib][phase]["peak_mb"]
            above = peak - res[lib][base]["peak_mb"] if base else None
            peaks.append(peak)
            aboves.append(above)
            cells.append(f"{peak:,.0f} | " + (f"{above:,.0f}" if above is not None else ""))
        row = f"| {phase} | {base or '(baseline)'} | " + " | ".join(cells)
        if len(libs) == 2:
            ratio_above = f"{aboves[0] / aboves[1]:.2f}" if base and aboves[1] and aboves[1] > 0 else ""
            row += f" | {peaks[0] / peaks[1]:.2f} | {ratio_above}"
        lines.append(row + " |")
    return "\n".join(lines)


def main(argv: "List[str] | None" = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "--child":
        _, mode, lib, rows, uri, source = argv
        child(mode, lib, int(rows), uri, source)
        return
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=int(os.environ.get("LANCELET_BENCH_ROWS", "2000000")))
    ap.add_argument("--libs", default="lancelet,pylance", help="comma-separated: lancelet, pylance")
    ap.add_argument("--dir", default=None, help="where the datasets go (kept); default: a temporary directory")
    args = ap.parse_args(argv)
    libs = [x.strip() for x in args.libs.split(",") if x.strip()]
    unknown = [x for x in libs if x not in MODULES]
    if unknown:
        ap.error(f"unknown libraries {unknown}; choose from {sorted(MODULES)}")
    root = args.dir or tempfile.mkdtemp(prefix="lancelet-bench-memory-")
    try:
        res, source = run(args.rows, libs, root)
    finally:
        if not args.dir:
            shutil.rmtree(root, ignore_errors=True)
    print(render(res, args.rows, source))


if __name__ == "__main__":
    main()
