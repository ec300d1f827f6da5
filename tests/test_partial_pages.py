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


@pytest.fixture(scope="module", params=["2.1", "2.2"])
def pylance_file(request, tmp_path_factory):
    path = str(tmp_path_factory.mktemp("big") / f"big_{request.param}.lance")
    table = _table(ROWS)
    with plf.LanceFileWriter(path, table.schema, version=request.param) as w:
        w.write_batch(table)
    return path, table


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
