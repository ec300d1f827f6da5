"""lancelet.file.LanceFileWriter cuts pages as pylance 14 does (its page rules): the same
batches give the same page counts in ``file_statistics()``, for 2.0 and 2.1+, with and
without ``max_page_bytes`` and ``data_cache_bytes``, one batch or many small ones. Each
file is also read back by the other library.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

lance = pytest.importorskip("lance")

import lance.file  # noqa: E402,F811

import lancelet.file  # noqa: E402

pytestmark = pytest.mark.interop

N = 20_000


def _tables(n: int) -> dict:
    ints = pa.array(np.arange(n), pa.int64())
    strs = pa.array([f"s{i}" * (i % 5) for i in range(n)])
    lists = pa.array([list(range(i % 4)) if i % 9 else None for i in range(n)], pa.list_(pa.int64()))
    structs = pa.StructArray.from_arrays([ints, strs], ["a", "b"], mask=pa.array([i % 11 == 0 for i in range(n)]))
    return {
        "ints": pa.table({"i": ints, "f": pa.array(np.linspace(0, 1, n))}),
        "nulls": pa.table({"n": pa.array([None if i % 7 == 0 else i for i in range(n)], pa.int32())}),
        "strings": pa.table({"s": pa.array([None if i % 5 == 0 else "y" * (i % 7) for i in range(n)])}),
        "bools": pa.table({"b": pa.array([None if i % 13 == 0 else i % 3 == 0 for i in range(n)])}),
        "lists": pa.table({"l": lists}),
        "list_strings": pa.table(
            {"ls": pa.array([[f"x{j}" for j in range(i % 3)] for i in range(n)], pa.list_(pa.string()))}
        ),
        "list_structs": pa.table(
            {
                "ls": pa.array(
                    [[{"a": j, "b": f"q{j}"} for j in range(i % 3)] if i % 4 else None for i in range(n)],
                    pa.list_(pa.struct([("a", pa.int64()), ("b", pa.string())])),
                )
            }
        ),
        "structs": pa.table({"st": structs}),
        "mixed": pa.table({"i": ints, "s": strs, "l": lists, "st": structs}),
    }


TABLES = _tables(N)


def _write(mod, path, table, version, max_page_bytes, chunk, cache):
    kw = {"version": version}
    if max_page_bytes is not None:
        kw["max_page_bytes"] = max_page_bytes
    if cache is not None:
        kw["data_cache_bytes"] = cache
    with mod.LanceFileWriter(str(path), table.schema, **kw) as w:
        for b in table.to_batches(max_chunksize=chunk):
            w.write_batch(b)
    return [c.num_pages for c in mod.LanceFileReader(str(path)).file_statistics().columns]


CASES = [
    (name, version, mpb, chunk, cache)
    for name in TABLES
    for version in ("2.0", "2.1", "2.2")
    for (mpb, chunk, cache) in (
        (None, N, None),
        (1 << 12, N, None),
        (1 << 16, 1000, None),
        (1 << 12, 37, None),
        (1 << 20, 1000, 1 << 16),
        (1 << 12, 37, 1 << 16),
    )
    # 2.0 does not store struct validity (both libraries refuse these).
    if not (version == "2.0" and name in ("structs", "mixed"))
]


@pytest.mark.parametrize("name,version,max_page_bytes,chunk,cache", CASES)
def test_page_counts_match_pylance(tmp_path, name, version, max_page_bytes, chunk, cache):
    table = TABLES[name]
    ours = _write(lancelet.file, tmp_path / "ours.lance", table, version, max_page_bytes, chunk, cache)
    theirs = _write(lance.file, tmp_path / "theirs.lance", table, version, max_page_bytes, chunk, cache)
    assert ours == theirs
    # Many pages somewhere, so the cuts are exercised, not only one page per column.
    if max_page_bytes == 1 << 12 and chunk == N and version == "2.0":
        assert max(theirs) > 1
    # Both files read back whole by the other library.
    assert lance.file.LanceFileReader(str(tmp_path / "ours.lance")).read_all().to_table() == table
    assert lancelet.file.LanceFileReader(str(tmp_path / "theirs.lance")).read_all().to_table() == table


@pytest.mark.parametrize("version", ["2.0", "2.1"])
def test_large_single_batches_split_like_pylance(tmp_path, version):
    """Bigger arrays than the cache: the flushes and their cuts match."""
    n = 400_000
    t = pa.table({"i": pa.array(np.arange(n), pa.int64()), "s": pa.array([f"v{i % 1000}" for i in range(n)])})
    ours = _write(lancelet.file, tmp_path / "ours.lance", t, version, 1 << 16, 100_000, 1 << 20)
    theirs = _write(lance.file, tmp_path / "theirs.lance", t, version, 1 << 16, 100_000, 1 << 20)
    assert ours == theirs
    assert sum(theirs) > len(theirs)
