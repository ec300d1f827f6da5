"""Reading some rows of a large 2.1+ page fetches only the part of the page that holds them.

pylance 14 writes a column of a few hundred thousand rows as a single page (mini-block for
narrow values, full-zip for embeddings and long strings). A scan task, ``read_range`` or a
``take`` that needs a few rows of such a page must read the mini-block chunks, or the
zipped rows, that hold them: these tests write such files with pylance and check both the
rows lancelet returns (equal to pylance's) and the bytes it reads (a small fraction of the
file).
"""

from __future__ import annotations

import os

import numpy as np
import pyarrow as pa
import pytest

import lancelet
import lancelet.file as lf

lance = pytest.importorskip("lance")
plf = pytest.importorskip("lance.file")

ROWS = 200_000


# Special table (not in _tables): long strings and 32-dim vectors sized to fill pages partially.
def _table(rows: int) -> pa.Table:
    rng = np.random.default_rng(5)
    words = np.array("alpha beta gamma delta epsilon zeta eta theta iota kappa lambda".split())
    text = [" ".join(words[rng.integers(0, len(words), 6)]) for _ in range(rows)]
    long_text = ["x" * 300 + str(i) if i % 3 else None for i in range(rows)]
    emb = pa.FixedSizeListArray.from_arrays(pa.array(rng.standard_normal(rows * 32).astype(np.float32)), 32)
    return pa.table({
        "id": pa.array(np.arange(rows, dtype=np.int64)),
        "maybe": pa.array(rng.integers(0, 1000, rows), mask=rng.random(rows) < 0.2),
        "category": pa.array(np.array(["red", "green", "blue"])[rng.integers(0, 3, rows)]),
        "text": pa.array(text),
        "long_text": pa.array(long_text),
        "embedding": emb,
    })


def _pylance_file(tmp_path_factory, name: str, table: pa.Table, version: str):
    path = str(tmp_path_factory.mktemp(name) / f"{name}_{version}.lance")
    with plf.LanceFileWriter(path, table.schema, version=version) as w:
        w.write_batch(table)
    return path, table


@pytest.fixture(scope="module", params=["2.1", "2.2"])
def pylance_file(request, tmp_path_factory):
    return _pylance_file(tmp_path_factory, "big", _table(ROWS), request.param)


def test_pylance_writes_one_page_per_column(pylance_file):
    """The premise: without partial reads each of these reads would fetch whole columns."""
    path, _ = pylance_file
    meta = plf.LanceFileReader(path).metadata()
    assert max(len(c.pages) for c in meta.columns) <= 2


@pytest.mark.parametrize("column", ["id", "maybe", "category", "text", "long_text", "embedding"])
def test_a_slice_of_a_one_page_column_reads_a_small_part_of_it(pylance_file, column, tables_equal):
    path, table = pylance_file
    reader = lf.LanceFileReader(path, columns=[column])
    opened = reader.io_stats()["bytes_read"]  # the file's tail, read at open
    got = reader.read_range(123_457, 500).to_table()
    tables_equal(got, table.select([column]).slice(123_457, 500))
    whole = lf.LanceFileReader(path, columns=[column])
    whole.read_all().to_table()
    part, full = reader.io_stats()["bytes_read"] - opened, whole.io_stats()["bytes_read"] - opened
    assert part * 10 < full, f"{column}: a 500-row slice read {part} bytes, the whole column {full}"


def test_take_of_scattered_rows_equals_pylance(pylance_file, tables_equal):
    path, table = pylance_file
    rng = np.random.default_rng(1)
    idx = sorted(set(int(i) for i in rng.integers(0, ROWS, 25)) | {0, ROWS - 1})
    reader = lf.LanceFileReader(path)
    opened = reader.io_stats()["bytes_read"]
    got = reader.take_rows(idx).to_table()
    tables_equal(got, plf.LanceFileReader(path).take_rows(idx).to_table())
    assert reader.io_stats()["bytes_read"] - opened < os.path.getsize(path) / 3


def test_ranges_that_share_chunks_and_cross_chunk_edges(pylance_file, tables_equal):
    """Adjacent and overlapping-chunk ranges, first and last rows, one-row ranges."""
    path, table = pylance_file
    reader = lf.LanceFileReader(path)
    for start, n in [(0, 1), (ROWS - 1, 1), (4095, 2), (4096, 4096), (511, 1026), (ROWS - 3000, 3000)]:
        tables_equal(reader.read_range(start, n).to_table(), table.slice(start, n))


def test_scanning_a_pylance_dataset_reads_each_page_about_once(tmp_path, tables_equal):
    """A multi-task scan of one-page columns must not re-read the page for every task."""
    uri = str(tmp_path / "ds.lance")
    table = _table(ROWS)
    lance.write_dataset(table, uri)
    ds = lancelet.dataset(uri)
    scanner = ds.scanner(batch_size=4096)
    got = scanner.to_table()
    tables_equal(got, table)
    stats = scanner.scan_stats
    data = sum(os.path.getsize(os.path.join(uri, "data", f)) for f in os.listdir(os.path.join(uri, "data")))
    assert stats.tasks > 1
    assert stats.bytes_read < 1.3 * data, f"scan read {stats.bytes_read} bytes of a {data}-byte dataset"


@pytest.mark.parametrize("column,buffer", [("text", 0), ("long_text", 1), ("id", 0)])
def test_damaged_page_index_buffers_give_typed_errors(pylance_file, column, buffer, tmp_path):
    """Chunk metadata or a row index that points outside its page is a CorruptFileError."""
    path, table = pylance_file
    col = table.schema.get_field_index(column)
    page = plf.LanceFileReader(path).metadata().columns[col].pages[0]
    if buffer >= len(page.buffers):
        pytest.skip("this page has no such buffer")
    with open(path, "rb") as f:
        data = bytearray(f.read())
    b = page.buffers[buffer]
    for junk in (b"\xff", b"\x00\xf0", b"\x7f\xff\xff\xff"):
        damaged = bytearray(data)
        damaged[b.position:b.position + b.size] = (junk * (b.size // len(junk) + 1))[:b.size]
        bad = str(tmp_path / "bad.lance")
        with open(bad, "wb") as f:
            f.write(damaged)
        reader = lf.LanceFileReader(bad, columns=[column])
        try:
            got = reader.read_range(100_000, 50).to_table()
        except lancelet.LanceError:
            continue
        # Damage that still decodes must at least give the right number of rows.
        assert got.num_rows == 50


def _lists(rows: int) -> pa.Table:
    rng = np.random.default_rng(9)
    words = np.array(["red", "green", "blue", "a much longer word"])
    lens = rng.integers(0, 5, rows)
    tags = [None if i % 13 == 4 else list(words[rng.integers(0, 4, n)]) for i, n in enumerate(lens)]
    nums = [[int(x) for x in range(i % 7)] for i in range(rows)]
    # Some rows much longer than a chunk, so rows continue across chunks.
    nums[1000] = list(range(20_000))
    nums[150_000] = list(range(9_000))
    nested = [[[i, i + 1], [], None][: i % 4] if i % 9 else None for i in range(rows)]
    structs = [[{"a": i, "b": str(i)}] * (i % 3) for i in range(rows)]
    return pa.table({
        "tags": pa.array(tags, pa.list_(pa.string())),
        "nums": pa.array(nums, pa.list_(pa.int32())),
        "nested": pa.array(nested, pa.list_(pa.list_(pa.int64()))),
        "structs": pa.array(structs, pa.list_(pa.struct([pa.field("a", pa.int64()), pa.field("b", pa.string())]))),
    })


@pytest.fixture(scope="module", params=["2.1", "2.2"])
def pylance_list_file(request, tmp_path_factory):
    return _pylance_file(tmp_path_factory, "lists", _lists(ROWS), request.param)


@pytest.mark.parametrize("column", ["tags", "nums", "nested", "structs"])
def test_slices_of_list_columns_through_the_repetition_index(pylance_list_file, column, tables_equal):
    path, table = pylance_list_file
    reader = lf.LanceFileReader(path, columns=[column])
    opened = reader.io_stats()["bytes_read"]
    for start, n in [(0, 1), (999, 3), (1000, 1), (1001, 5000), (149_990, 20), (ROWS - 1, 1), (77_777, 4096)]:
        tables_equal(reader.read_range(start, n).to_table(), table.select([column]).slice(start, n))
    idx = [5, 1000, 1001, 150_000, 199_999, 3, 150_000]
    tables_equal(reader.take_rows(idx).to_table(), table.select([column]).take(idx))
    part = reader.io_stats()["bytes_read"] - opened
    whole = lf.LanceFileReader(path, columns=[column])
    whole.read_all().to_table()
    full = whole.io_stats()["bytes_read"] - opened
    if column in ("tags", "nums"):
        assert part * 2 < full, f"{column}: slices read {part} bytes, the whole column {full}"


def test_lancelet_list_pages_read_in_part_too(tmp_path, tables_equal):
    table = _lists(ROWS)
    path = str(tmp_path / "ours.lance")
    with lf.LanceFileWriter(path, table.schema) as w:
        w.write_batch(table)
    reader = lf.LanceFileReader(path)
    for start, n in [(0, 10), (1000, 2), (123_456, 789), (ROWS - 5, 5)]:
        tables_equal(reader.read_range(start, n).to_table(), table.slice(start, n))


from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


@st.composite
def _list_rows(draw):
    n = draw(st.integers(1, 3000))
    kinds = draw(st.lists(st.sampled_from(["empty", "null", "short", "long"]), min_size=1, max_size=6))
    rows = []
    for i in range(n):
        k = kinds[i % len(kinds)]
        rows.append([] if k == "empty" else None if k == "null" else
                    list(range(i % 5 + 1)) if k == "short" else list(range(draw(st.integers(100, 5000)) if i % 97 == 0 else 40)))
    slices = draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(1, 300)), min_size=1, max_size=5))
    return rows, slices


@settings(max_examples=int(os.environ.get("LANCELET_HYPOTHESIS_EXAMPLES", "40")), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large])
@given(case=_list_rows(), writer=st.sampled_from(["lancelet", "pylance"]))
def test_random_slices_of_list_pages(case, writer, tmp_path, tables_equal):
    rows, slices = case
    table = pa.table({"l": pa.array(rows, pa.list_(pa.int32())),
                      "n": pa.array([None if r is None else [r[:2], []] for r in rows], pa.list_(pa.list_(pa.int32())))})
    path = str(tmp_path / f"r_{writer}.lance")
    if os.path.exists(path):
        os.remove(path)
    w = (lf if writer == "lancelet" else plf).LanceFileWriter(path, table.schema, version="2.2")
    w.write_batch(table)
    w.close()
    reader = lf.LanceFileReader(path)
    for start, n in slices:
        n = min(n, len(rows) - start)
        tables_equal(reader.read_range(start, n).to_table(), table.slice(start, n))
    idx = sorted({s for s, _ in slices})
    tables_equal(reader.take_rows(idx).to_table(), table.take(idx))
