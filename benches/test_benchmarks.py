"""pytest-benchmark suites: lancelet, pylance and Parquet side by side, case by case.

    pytest benches --benchmark-only                              # run and print, grouped by case
    pytest benches --benchmark-only --benchmark-autosave         # keep the run (.benchmarks/)
    pytest benches --benchmark-only --benchmark-compare          # against the last kept run
    LANCELET_BENCH_ROWS=2000000 pytest benches --benchmark-only  # the size of the README's tables

Every case is a benchmark group (``dataset: full scan``, ``vector: search nprobes=8`` ...),
and each group holds one benchmark per library (``[lancelet]``, ``[pylance]``,
``[parquet]`` where Parquet has an equivalent), so the table pytest-benchmark prints
compares them directly. The data is the formatbench-like table of ``bench_file.py`` (ids,
floats with nulls, categories, free text, 8-dim embeddings), written once per session by
each library with its defaults (file format 2.2 for both). Results of the libraries are
checked equal before anything is timed. With ``--benchmark-disable`` each case runs once,
as a smoke test (the test command does this on a small table).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from typing import Any, Callable, Dict

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from bench_file import make_table

lance = pytest.importorskip("lance")
import lancelet  # noqa: E402

ROWS = int(os.environ.get("LANCELET_BENCH_ROWS", "200000"))
LIBS = {"lancelet": lancelet, "pylance": lance}
TAKE = 1000


@pytest.fixture(scope="session")
def table() -> pa.Table:
    return make_table(ROWS)


@pytest.fixture(scope="session")
def workdir():
    d = tempfile.mkdtemp(prefix="lancelet-bench-")
    yield d
    shutil.rmtree(d, ignore_errors=True)


@pytest.fixture(scope="session")
def written(table, workdir) -> Dict[str, str]:
    """Each library's dataset (and the Parquet file) of ``table``."""
    out = {}
    for name, lib in LIBS.items():
        uri = os.path.join(workdir, f"{name}.lance")
        lib.write_dataset(table, uri)
        out[name] = uri
    out["parquet"] = os.path.join(workdir, "table.parquet")
    pq.write_table(table, out["parquet"])
    return out


def _run(benchmark: Any, group: str, fn: Callable[[], Any]) -> Any:
    benchmark.group = group
    return benchmark(fn)


# -- dataset ------------------------------------------------------------------------------

CASES = ["full scan", "projected scan", "filtered scan", "take sorted", "take unsorted", "single-row take",
         "count_rows", "open latest"]


def _case(lib_name: str, case: str, uri: str, rng_rows: np.ndarray) -> Callable[[], Any]:
    if lib_name == "parquet":
        return {
            "full scan": lambda: pq.read_table(uri),
            "projected scan": lambda: pq.read_table(uri, columns=["id", "value"]),
            "filtered scan": lambda: pq.read_table(uri, filters=pc.field("value") > 0.9),
            "take sorted": lambda: pq.read_table(uri).take(np.sort(rng_rows)),
            "take unsorted": lambda: pq.read_table(uri).take(rng_rows),
            "single-row take": lambda: pq.read_table(uri).take([int(rng_rows[0])]),
            "count_rows": lambda: pq.ParquetFile(uri).metadata.num_rows,
            "open latest": lambda: pq.ParquetFile(uri).schema_arrow,
        }[case]
    lib = LIBS[lib_name]
    ds = lib.dataset(uri)
    return {
        "full scan": lambda: ds.to_table(),
        "projected scan": lambda: ds.to_table(columns=["id", "value"]),
        "filtered scan": lambda: ds.to_table(filter="value > 0.9"),
        "take sorted": lambda: ds.take(np.sort(rng_rows)),
        "take unsorted": lambda: ds.take(rng_rows),
        "single-row take": lambda: ds.take([int(rng_rows[0])]),
        "count_rows": lambda: ds.count_rows(),
        "open latest": lambda: lib.dataset(uri),
    }[case]


# Parquet has no random access: its takes read the file (shown for scale, not parity).
@pytest.mark.parametrize("lib_name", ["lancelet", "pylance", "parquet"])
@pytest.mark.parametrize("case", CASES)
def test_dataset(benchmark, written, table, case, lib_name):
    rows = np.random.default_rng(3).choice(table.num_rows, min(TAKE, table.num_rows), replace=False)
    fn = _case(lib_name, case, written[lib_name], rows)
    expected = _case("pylance", case, written["pylance"], rows)()
    got = fn()
    if isinstance(got, (pa.Table, pa.RecordBatch)):
        assert got.num_rows == expected.num_rows
    elif isinstance(got, int):
        assert got == expected
    _run(benchmark, f"dataset: {case}", fn)


@pytest.mark.parametrize("lib_name", ["lancelet", "pylance", "parquet"])
def test_write(benchmark, table, workdir, lib_name):
    target = os.path.join(workdir, f"write-{lib_name}")

    def write():
        shutil.rmtree(target, ignore_errors=True)
        if lib_name == "parquet":
            pq.write_table(table, target)
        else:
            LIBS[lib_name].write_dataset(table, target)

    benchmark.group = "dataset: write"
    benchmark.pedantic(write, rounds=3, iterations=1)


@pytest.mark.parametrize("lib_name", ["lancelet", "pylance"])
def test_append(benchmark, table, workdir, lib_name):
    uri = os.path.join(workdir, f"append-{lib_name}.lance")
    shutil.rmtree(uri, ignore_errors=True)
    lib = LIBS[lib_name]
    lib.write_dataset(table, uri)
    more = table.slice(0, max(1, table.num_rows // 10))
    _run(benchmark, "dataset: append 10% (a commit)", lambda: lib.write_dataset(more, uri, mode="append"))


# -- indexes ------------------------------------------------------------------------------

DIM = 32


@pytest.fixture(scope="session")
def vectors() -> np.ndarray:
    rng = np.random.default_rng(5)
    n = max(1000, ROWS // 4)
    centres = rng.normal(size=(64, DIM)).astype(np.float32) * 3
    return (centres[rng.integers(0, 64, n)] + rng.normal(size=(n, DIM)).astype(np.float32)).astype(np.float32)


@pytest.fixture(scope="session")
def indexed(vectors, workdir) -> Dict[str, str]:
    """Each library's dataset of ``vectors`` with an IVF_PQ on ``vec`` and a BTREE on ``key``."""
    n = len(vectors)
    t = pa.table({"id": pa.array(np.arange(n), pa.int64()),
                  "key": pa.array(np.random.default_rng(1).permutation(n), pa.int64()),
                  "vec": pa.FixedSizeListArray.from_arrays(pa.array(vectors.ravel()), DIM)})
    out = {}
    for name, lib in LIBS.items():
        uri = os.path.join(workdir, f"indexed-{name}.lance")
        lib.write_dataset(t, uri)
        ds = lib.dataset(uri)
        ds.create_index("vec", "IVF_PQ", num_partitions=max(4, int(np.sqrt(n)) // 2), num_sub_vectors=DIM // 8)
        ds.create_scalar_index("key", "BTREE")
        out[name] = uri
    return out


@pytest.mark.parametrize("lib_name", ["lancelet", "pylance"])
@pytest.mark.parametrize("nprobes,refine", [(8, None), (8, 4), (32, 4)])
def test_vector_search(benchmark, indexed, vectors, lib_name, nprobes, refine):
    ds = LIBS[lib_name].dataset(indexed[lib_name])
    queries = vectors[::max(1, len(vectors) // 50)][:50] + 0.05
    nearest = {"column": "vec", "k": 10, "nprobes": nprobes}
    if refine:
        nearest["refine_factor"] = refine

    def search():
        for q in queries:
            ds.to_table(nearest=dict(nearest, q=q), columns=["id"])

    assert ds.to_table(nearest=dict(nearest, q=queries[0]), columns=["id"]).num_rows == 10
    _run(benchmark, f"vector: 50 searches nprobes={nprobes} refine={refine}", search)


@pytest.mark.parametrize("lib_name", ["lancelet", "pylance"])
def test_exact_search(benchmark, indexed, vectors, lib_name):
    ds = LIBS[lib_name].dataset(indexed[lib_name])
    q = vectors[0] + 0.05
    _run(benchmark, "vector: exact search (use_index=False)",
         lambda: ds.to_table(nearest={"column": "vec", "q": q, "k": 10, "use_index": False}, columns=["id"]))


@pytest.mark.parametrize("lib_name", ["lancelet", "pylance"])
def test_btree_lookup(benchmark, indexed, vectors, lib_name):
    ds = LIBS[lib_name].dataset(indexed[lib_name])
    keys = np.random.default_rng(2).integers(0, len(vectors), 20)

    def lookups():
        for k in keys:
            ds.to_table(filter=f"key = {k}", columns=["id"])

    assert ds.to_table(filter=f"key = {keys[0]}", columns=["id"]).num_rows == 1
    _run(benchmark, "index: 20 BTREE point lookups", lookups)


@pytest.mark.parametrize("lib_name", ["lancelet", "pylance"])
def test_ivf_pq_build(benchmark, vectors, workdir, lib_name):
    lib = LIBS[lib_name]
    uri = os.path.join(workdir, f"build-{lib_name}.lance")
    shutil.rmtree(uri, ignore_errors=True)
    lib.write_dataset(pa.table({"vec": pa.FixedSizeListArray.from_arrays(pa.array(vectors.ravel()), DIM)}), uri)

    def build():
        lib.dataset(uri).create_index("vec", "IVF_PQ", num_partitions=16, num_sub_vectors=DIM // 8, replace=True)

    benchmark.group = "index: IVF_PQ build"
    benchmark.pedantic(build, rounds=2, iterations=1)
