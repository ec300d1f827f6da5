"""Wire compatibility with pylance 14.0.2 (``import lance``), in both directions.

* lancelet writes, pylance reads (and the other way round) for every type of the
  catalogue in ``conftest.py``, including take/range/projection on pylance files;
* multi-page files, a 100k-row table holding every type, golden files written by pylance
  (``tests/data/pylance_v2_0/``), metadata and layout conventions, schema/field metadata.

pylance is the oracle: what it reads from a file is what the file means.
"""

from __future__ import annotations

import os
import random
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

import lance
import lancelet
from lancelet.file import LanceFileReader, LanceFileWriter

pytestmark = pytest.mark.interop

DATA_DIR = Path(__file__).parent / "data" / "pylance_v2_0"

# --------------------------------------------------------------------------------------
# Every catalogue type, both directions
# --------------------------------------------------------------------------------------


def test_pylance_reads_lancelet_file_of_every_type(type_case, tmp_path, io, tables_equal):
    table = type_case.table()
    path = io.lancelet_write(tmp_path / "t.lance", table)
    tables_equal(io.pylance_read(path), table)


def test_lancelet_reads_pylance_file_of_every_type(type_case, tmp_path, io, tables_equal):
    table = type_case.table()
    path = io.pylance_write(tmp_path / "t.lance", table)
    reader = LanceFileReader(path)
    assert reader.num_rows() == table.num_rows
    assert reader.schema.equals(table.schema)
    tables_equal(reader.read_all().to_table(), table)


def _take_indices(n: int) -> list:
    """First and last rows, unsorted, with duplicates."""
    return [n - 1, 0, 1, n // 2, n // 2, 5, n - 2, 0, 64, 63, n - 1]


def test_lancelet_take_rows_from_pylance_file_equals_pyarrow_take(type_case, tmp_path, io, tables_equal):
    table = type_case.table()
    path = io.pylance_write(tmp_path / "t.lance", table)
    reader = LanceFileReader(path)
    indices = _take_indices(table.num_rows)
    tables_equal(reader.take_rows(indices).to_table(), table.take(indices))
    tables_equal(reader.take_rows([]).to_table(), table.slice(0, 0))


@pytest.mark.parametrize("start,num_rows", [(0, 150), (1, 3), (60, 70), (149, 1), (150, 0), (0, 0)])
def test_lancelet_read_range_from_pylance_file_equals_pyarrow_slice(
    type_case, start, num_rows, tmp_path, io, tables_equal
):
    table = type_case.table()
    assert table.num_rows == 150
    path = io.pylance_write(tmp_path / "t.lance", table)
    got = LanceFileReader(path).read_range(start, num_rows, batch_size=16).to_table()
    tables_equal(got, table.slice(start, num_rows))


def test_lancelet_projects_columns_of_pylance_file(type_case, tmp_path, io, tables_equal):
    table = type_case.table()
    path = io.pylance_write(tmp_path / "t.lance", table)
    for columns in (["c"], ["id"], ["c", "id"]):
        reader = LanceFileReader(path, columns=columns)
        expected = table.select(columns)
        tables_equal(reader.read_all().to_table(), expected)
        tables_equal(reader.take_rows([3, 1, 3]).to_table(), expected.take([3, 1, 3]))


def _nested_struct_table() -> pa.Table:
    return pa.table(
        {
            "p": pa.array(
                [{"x": i, "y": {"z": str(i) * (i % 3)}} for i in range(20)],
                pa.struct([("x", pa.int32()), ("y", pa.struct([("z", pa.string())]))]),
            ),
            "q": pa.array(range(20), pa.int64()),
        }
    )


@pytest.mark.parametrize("columns", [["p"], ["q", "p"], ["p", "q"]])
def test_lancelet_projection_of_whole_structs_matches_pylance(columns, tmp_path, io, tables_equal):
    path = io.pylance_write(tmp_path / "s.lance", _nested_struct_table())
    ours = LanceFileReader(path, columns=columns).read_all().to_table()
    theirs = lance.file.LanceFileReader(path, columns=columns).read_all().to_table()
    tables_equal(ours, theirs)


@pytest.mark.parametrize("columns", [["p.x"], ["p.y"], ["p.y.z"], ["p.x", "p.y.z"], ["q", "p.x"]])
def test_lancelet_projects_struct_children_by_dotted_path_like_pylance(columns, tmp_path, io, tables_equal):
    path = io.pylance_write(tmp_path / "s.lance", _nested_struct_table())
    theirs = lance.file.LanceFileReader(path, columns=columns).read_all().to_table()
    ours = LanceFileReader(path, columns=columns).read_all().to_table()
    tables_equal(ours, theirs)


# --------------------------------------------------------------------------------------
# Multi-page files
# --------------------------------------------------------------------------------------

MULTI_PAGE_ROWS = 3000


def multi_page_table(n: int = MULTI_PAGE_ROWS) -> pa.Table:
    rng = random.Random(7)
    words = ["alpha", "beta", "gamma", "delta"]
    return pa.table(
        {
            "id": pa.array(range(n), pa.int64()),
            "i32": pa.array([None if i % 7 == 3 else i * 3 - 1000 for i in range(n)], pa.int32()),
            "b": pa.array([None if i % 11 == 0 else i % 3 == 0 for i in range(n)], pa.bool_()),
            "s": pa.array([None if i % 5 == 2 else "row-%d-%s" % (i, "x" * (i % 9)) for i in range(n)]),
            "low": pa.array([None if i % 13 == 0 else words[i % 4] for i in range(n)]),
            "lb": pa.array([bytes([i % 256]) * (i % 6) for i in range(n)], pa.large_binary()),
            "l": pa.array(
                [None if i % 9 == 4 else [rng.randint(-50, 50) for _ in range(i % 5)] for i in range(n)],
                pa.list_(pa.int32()),
            ),
            "st": pa.array(
                [{"a": i, "b": None if i % 4 == 0 else str(i)} for i in range(n)],
                pa.struct([("a", pa.int32()), ("b", pa.string())]),
            ),
            "f": pa.array(
                [None if i % 10 == 1 else [float(i), -1.0, 0.5, float(i % 3)] for i in range(n)],
                pa.list_(pa.float32(), 4),
            ),
        }
    )


@pytest.fixture(scope="module")
def multi_page_files(tmp_path_factory):
    d = tmp_path_factory.mktemp("multi_page")
    table = multi_page_table()
    ours = str(d / "lancelet.lance")
    theirs = str(d / "pylance.lance")
    # Both writers cut pages the same way: a column flushes when its share of
    # data_cache_bytes fills up, and a flush of a single queued array is split by
    # max_page_bytes. lancelet gets several batches and a small cache, so its pages also
    # end at batch boundaries; pylance gets the table as one batch (it panics on nested
    # structs written in several small-page batches).
    with LanceFileWriter(
        ours, table.schema, version="2.0", max_page_bytes=4096, data_cache_bytes=4096 * table.num_columns
    ) as w:
        for b in table.to_batches(max_chunksize=700):
            w.write_batch(b)
    pw = lance.file.LanceFileWriter(theirs, table.schema, version="2.0", max_page_bytes=4096)
    pw.write_batch(table.combine_chunks())
    pw.close()
    return table, ours, theirs


def _page_row_starts(path: str, column: int) -> list:
    """First row of every page of a column (from pylance's view of the file)."""
    md = lance.file.LanceFileReader(path).metadata()
    lengths = [p.length for p in LanceFileReader(path).metadata().columns[column].pages]
    assert len(lengths) == len(md.columns[column].pages)
    starts, acc = [], 0
    for n in lengths:
        starts.append(acc)
        acc += n
    return starts


@pytest.mark.parametrize("writer", ["lancelet", "pylance"])
def test_small_max_page_bytes_gives_several_pages_per_column(multi_page_files, writer):
    table, ours, theirs = multi_page_files
    path = ours if writer == "lancelet" else theirs
    md = lance.file.LanceFileReader(path).metadata()
    # Column 0 is `id` (int64, 24 KB) and column 1 `i32`: both must be split.
    assert len(md.columns[0].pages) > 3
    assert len(md.columns[1].pages) > 1
    assert md.num_rows == table.num_rows


def test_pylance_reads_lancelet_multi_page_file(multi_page_files, io, tables_equal):
    table, ours, _ = multi_page_files
    tables_equal(io.pylance_read(ours), table)


def test_lancelet_reads_pylance_multi_page_file(multi_page_files, io, tables_equal):
    table, _, theirs = multi_page_files
    tables_equal(io.lancelet_read(theirs), table)


@pytest.mark.parametrize("writer", ["lancelet", "pylance"])
def test_lancelet_take_rows_across_page_boundaries(multi_page_files, writer, tables_equal):
    table, ours, theirs = multi_page_files
    path = ours if writer == "lancelet" else theirs
    boundaries = set()
    for column in range(len(LanceFileReader(path).metadata().columns)):
        boundaries.update(_page_row_starts(path, column))
    indices = []
    for b in sorted(boundaries):
        for i in (b - 1, b, b + 1):
            if 0 <= i < table.num_rows:
                indices.append(i)
    rng = random.Random(3)
    shuffled = indices + indices[:10]
    rng.shuffle(shuffled)
    reader = LanceFileReader(path)
    tables_equal(reader.take_rows(indices).to_table(), table.take(indices))
    tables_equal(reader.take_rows(shuffled).to_table(), table.take(shuffled))


@pytest.mark.parametrize("writer", ["lancelet", "pylance"])
def test_lancelet_read_range_across_page_boundaries(multi_page_files, writer, tables_equal):
    table, ours, theirs = multi_page_files
    path = ours if writer == "lancelet" else theirs
    reader = LanceFileReader(path)
    starts = _page_row_starts(path, 0)
    for b in starts[1:4]:
        for batch_size in (1, 13, 1024):
            got = reader.read_range(b - 5, 10, batch_size=batch_size).to_table()
            tables_equal(got, table.slice(b - 5, 10))
    tables_equal(reader.read_range(17, 2900, batch_size=333).to_table(), table.slice(17, 2900))


# --------------------------------------------------------------------------------------
# Every type in one 100k-row file
# --------------------------------------------------------------------------------------

BIG_ROWS = 100_000


@pytest.fixture(scope="module")
def big_mixed(tmp_path_factory, arrow_gen):
    """A 100k-row table with one column per catalogue type (some nulls), written by
    both implementations with 64 KiB pages."""
    cols = {}
    idx = pa.array(np.arange(BIG_ROWS) % 150)
    for spec in arrow_gen.catalogue_specs:
        cols[spec.name] = arrow_gen.build_variant(spec, "some_nulls").take(idx)
    table = pa.table(cols)
    d = tmp_path_factory.mktemp("big")
    ours = str(d / "lancelet.lance")
    theirs = str(d / "pylance.lance")
    with LanceFileWriter(
        ours, table.schema, version="2.0", max_page_bytes=65536, data_cache_bytes=65536 * table.num_columns
    ) as w:
        for b in table.to_batches(max_chunksize=30_000):
            w.write_batch(b)
    # One batch for pylance: it splits single arrays by max_page_bytes, and it panics
    # ("assertion failed: end <= self.len()") on nested structs written in several batches
    # with a small max_page_bytes.
    pw = lance.file.LanceFileWriter(theirs, table.schema, version="2.0", max_page_bytes=65536)
    pw.write_batch(table.combine_chunks())
    pw.close()
    return table, ours, theirs


def test_pylance_reads_lancelet_100k_row_file_with_every_type(big_mixed, io, tables_equal):
    table, ours, _ = big_mixed
    tables_equal(io.pylance_read(ours), table)


@pytest.mark.parametrize("writer", ["lancelet", "pylance"])
@pytest.mark.parametrize("batch_size", [1024, 100_000])
def test_lancelet_reads_100k_row_file_with_every_type(big_mixed, writer, batch_size, tables_equal):
    table, ours, theirs = big_mixed
    path = ours if writer == "lancelet" else theirs
    batches = list(LanceFileReader(path).read_all(batch_size=batch_size).to_batches())
    assert [b.num_rows for b in batches[:-1]] == [batch_size] * (len(batches) - 1)
    tables_equal(pa.Table.from_batches(batches, schema=table.schema), table)


# Tiny batches cost a round trip each, so they read a projection (all rows, every page).
SMALL_BATCH_COLUMNS = {
    1: ["int32", "string", "list<int32>", "struct<a:int32,b:string>"],
    7: [
        "bool",
        "int64",
        "float16",
        "large_binary",
        "decimal128_10_2",
        "fixed_size_list<float32,4>",
        "large_list<string>",
        "nested_struct",
        "list<list<int32>>",
        "dictionary<int32,string>",
        "low_cardinality_string",
    ],
}


@pytest.mark.parametrize("writer", ["lancelet", "pylance"])
@pytest.mark.parametrize("batch_size", [1, 7])
def test_lancelet_reads_100k_row_file_in_tiny_batches(big_mixed, writer, batch_size, tables_equal):
    table, ours, theirs = big_mixed
    path = ours if writer == "lancelet" else theirs
    columns = SMALL_BATCH_COLUMNS[batch_size]
    reader = LanceFileReader(path, columns=columns).read_all(batch_size=batch_size).to_batches()
    sizes = set()
    batches = []
    for b in reader:
        sizes.add(b.num_rows)
        batches.append(b)
    assert sizes <= {batch_size, BIG_ROWS % batch_size}
    tables_equal(pa.Table.from_batches(batches), table.select(columns))


def test_lancelet_take_rows_from_100k_row_pylance_file(big_mixed, tables_equal):
    table, _, theirs = big_mixed
    rng = random.Random(11)
    indices = [rng.randrange(BIG_ROWS) for _ in range(300)] + [0, BIG_ROWS - 1, 0]
    tables_equal(LanceFileReader(theirs).take_rows(indices).to_table(), table.take(indices))


# --------------------------------------------------------------------------------------
# Golden files written by pylance
# --------------------------------------------------------------------------------------

#: Golden files lancelet reads (written by tests/data/pylance_v2_0/make_golden.py).
GOLDEN_FILES = sorted(p.name for p in DATA_DIR.glob("*.lance") if not p.name.startswith("unsupported__"))

#: Valid pylance files lancelet does not read yet, and the error it must raise.
UNSUPPORTED_GOLDEN = {
    "unsupported__fsst_string.lance": lancelet.UnsupportedFeatureError,
    "unsupported__zstd_string.lance": lancelet.UnsupportedFeatureError,
    "unsupported__dict_u16_i64__nn.lance": lancelet.UnsupportedFeatureError,
    "unsupported__fsl_fsl.lance": lancelet.UnsupportedFeatureError,
}

#: Files of format 2.1 / 2.2 (kept under their old "unsupported" names): lancelet reads
#: them now (tests/test_file_v21_interop.py covers these versions in depth).
V21_GOLDEN = ["unsupported__ver_2.1.lance", "unsupported__ver_2.2.lance"]

def test_golden_directory_is_small_and_complete():
    assert len(GOLDEN_FILES) >= 100
    total = sum(p.stat().st_size for p in DATA_DIR.glob("*.lance"))
    assert total < 200 * 1024
    for name in UNSUPPORTED_GOLDEN:
        assert (DATA_DIR / name).exists(), name


@pytest.mark.parametrize("name", GOLDEN_FILES)
def test_lancelet_reads_pylance_golden_file_like_pylance(name, tables_equal):
    path = str(DATA_DIR / name)
    ours = LanceFileReader(path)
    theirs = lance.file.LanceFileReader(path)
    assert ours.num_rows() == theirs.num_rows()
    if len(ours.schema) == 0:
        # pylance refuses to read zero columns; lancelet returns 0 columns of num_rows rows.
        assert ours.read_all().to_table().num_columns == 0
        return
    expected = theirs.read_all().to_table()
    got = ours.read_all().to_table()
    tables_equal(got, expected)
    assert got.schema.metadata == expected.schema.metadata
    for f_got, f_exp in zip(got.schema, expected.schema):
        assert f_got.metadata == f_exp.metadata, f_got.name
    # Random access agrees with the full read.
    n = expected.num_rows
    if n:
        idx = sorted({0, n - 1, n // 2}, reverse=True)
        tables_equal(ours.take_rows(idx).to_table(), expected.take(idx))
        tables_equal(ours.read_range(n // 3, n - n // 3, batch_size=3).to_table(), expected.slice(n // 3))


@pytest.mark.parametrize("name", sorted(UNSUPPORTED_GOLDEN))
def test_lancelet_refuses_pylance_files_it_cannot_read_with_a_typed_error(name):
    path = str(DATA_DIR / name)
    # pylance reads every one of them.
    lance.file.LanceFileReader(path).read_all().to_table()
    with pytest.raises(UNSUPPORTED_GOLDEN[name]):
        LanceFileReader(path).read_all().to_table()


@pytest.mark.parametrize("name", V21_GOLDEN)
def test_lancelet_reads_pylance_v2_1_and_v2_2_golden_files(name, tables_equal):
    path = str(DATA_DIR / name)
    expected = lance.file.LanceFileReader(path).read_all().to_table()
    tables_equal(LanceFileReader(path).read_all().to_table(), expected)


def test_lancelet_reads_pylance_blob_golden_file_like_pylance(tables_equal):
    """A 2.0 file with a blob v1 column (kept under its old "unsupported" name): the file
    readers of both return the payloads (tests/test_blobs.py covers blobs in depth)."""
    path = str(DATA_DIR / "unsupported__blob.lance")
    expected = lance.file.LanceFileReader(path).read_all().to_table()
    got = LanceFileReader(path).read_all().to_table()
    tables_equal(got, expected)
    assert got.schema.field("c").metadata == expected.schema.field("c").metadata
    tables_equal(LanceFileReader(path).take_rows([2, 0]).to_table(), expected.take([2, 0]))


# --------------------------------------------------------------------------------------
# Metadata and layout
# --------------------------------------------------------------------------------------


def test_lancelet_metadata_of_lancelet_file(tmp_path, mixed_table, io):
    table = mixed_table()
    path = io.lancelet_write(tmp_path / "m.lance", table)
    md = LanceFileReader(path).metadata()
    size = os.path.getsize(path)
    assert md.version == "2.0"
    assert (md.major_version, md.minor_version) == (0, 3)
    assert md.num_rows == table.num_rows
    assert md.file_size == size
    # int32, string, list + item, struct header + a + b, fsl.
    assert len(md.columns) == 8
    assert md.schema.equals(table.schema)
    # The file descriptor, and lancelet's checksums (which pylance skips).
    assert len(md.global_buffers) == 2
    data_end = md.global_buffers[0].position
    for c in md.columns:
        assert c.column_buffers == []
        assert len(c.pages) == 1
        for p in c.pages:
            assert p.priority == 0
            for b in p.buffers:
                assert b.position % 64 == 0
                assert b.position + b.size <= data_end
    # 16 bytes per global buffer in its offset table, and the footer.
    assert md.num_data_bytes + md.num_global_buffer_bytes + md.num_column_metadata_bytes + 16 * 2 + 40 == size
    stats = LanceFileReader(path).file_statistics()
    assert [c.num_pages for c in stats.columns] == [1] * 8
    assert stats.columns[0].size_bytes == 1 + 28  # validity + 7 int32 values


def test_pylance_sees_the_same_layout_in_a_lancelet_file_as_lancelet(tmp_path, mixed_table, io):
    path = io.lancelet_write(tmp_path / "m.lance", mixed_table())
    ours = LanceFileReader(path).metadata()
    theirs = lance.file.LanceFileReader(path).metadata()
    for attr in ("num_rows", "num_data_bytes", "num_column_metadata_bytes", "num_global_buffer_bytes",
                 "major_version", "minor_version"):
        assert getattr(ours, attr) == getattr(theirs, attr), attr
    assert [(b.position, b.size) for b in ours.global_buffers] == [(b.position, b.size) for b in theirs.global_buffers]
    assert len(ours.columns) == len(theirs.columns)
    for co, ct in zip(ours.columns, theirs.columns):
        assert [[(b.position, b.size) for b in p.buffers] for p in co.pages] == [
            [(b.position, b.size) for b in p.buffers] for p in ct.pages
        ]
        assert [p.encoding for p in co.pages] == [p.encoding for p in ct.pages]
    assert theirs.schema.equals(mixed_table().schema)


def _layout(path: str):
    md = lance.file.LanceFileReader(path).metadata()
    return {
        "num_columns": len(md.columns),
        "pages": [len(c.pages) for c in md.columns],
        "buffers": [[[(b.position, b.size) for b in p.buffers] for p in c.pages] for c in md.columns],
        "encodings": [[p.encoding for p in c.pages] for c in md.columns],
        "global_buffers": [(b.position, b.size) for b in md.global_buffers],
        "num_data_bytes": md.num_data_bytes,
        "num_column_metadata_bytes": md.num_column_metadata_bytes,
        "version": (md.major_version, md.minor_version),
        "schema": md.schema,
    }


def _simple_inputs():
    return {
        "int32_with_nulls": pa.table({"c": pa.array([1, None, 3, None, -1], pa.int32())}),
        "strings": pa.table({"c": pa.array(["a", None, "", None, "eeeee"])}),
        "list_int32": pa.table({"c": pa.array([[1, 2], None, [], None, [7]], pa.list_(pa.int32()))}),
        "struct": pa.table({"c": pa.array([{"a": 1, "b": "x"}, {"a": None, "b": None}],
                                          pa.struct([("a", pa.int32()), ("b", pa.string())]))}),
        "fsl": pa.table({"c": pa.array([[1.0, 2.0], None, [3.0, 4.0]], pa.list_(pa.float32(), 2))}),
        "dictionary": pa.table({"c": pa.array(["foo", None, "foo", "bar"], pa.dictionary(pa.int32(), pa.string()))}),
        "low_cardinality_1000": pa.table({"c": pa.array([["red", "green", "blue"][i % 3] for i in range(1000)])}),
        "empty": pa.table({"a": pa.array([], pa.int32()), "s": pa.array([], pa.string())}),
        "int64_5000_pages": pa.table({"c": pa.array(range(5000), pa.int64())}),
        # The automatic dictionary for `string`: >= 100 rows and < 100 distinct values.
        "strings_99_distinct_of_1000": pa.table({"c": [f"v{i % 99}" for i in range(1000)]}),
        "strings_100_distinct_of_1000": pa.table({"c": [f"v{i % 100}" for i in range(1000)]}),
        "strings_3_distinct_of_99_rows": pa.table({"c": [f"v{i % 3}" for i in range(99)]}),
        "strings_3_distinct_of_100_rows": pa.table({"c": [f"v{i % 3}" for i in range(100)]}),
        "empty_strings_150": pa.table({"c": [""] * 150}),
        "all_null_strings_200": pa.table({"c": pa.array([None] * 200, pa.string())}),
        "large_strings_low_cardinality": pa.table({"c": pa.array([f"v{i % 3}" for i in range(300)], pa.large_string())}),
        "list_of_low_cardinality_strings": pa.table(
            {"c": pa.array([[f"v{i % 3}"] * 2 for i in range(60)], pa.list_(pa.string()))}
        ),
    }


@pytest.mark.parametrize("name", sorted(_simple_inputs()))
def test_lancelet_layout_matches_pylance_for_the_same_input(name, tmp_path, io):
    table = _simple_inputs()[name]
    kwargs = {"max_page_bytes": 8192} if name == "int64_5000_pages" else {}
    # Without checksums, the very file pylance writes (checked below: same layout, same
    # descriptor); with them, the same pages and one more global buffer.
    ours = io.lancelet_write(tmp_path / "ours.lance", table, checksums=False, **kwargs)
    theirs = io.pylance_write(tmp_path / "theirs.lance", table, **kwargs)
    lo, lt = _layout(ours), _layout(theirs)
    checked = _layout(io.lancelet_write(tmp_path / "checked.lance", table, **kwargs))
    for key in ("num_columns", "pages", "buffers", "encodings", "version"):
        assert checked[key] == lt[key], key
    assert len(checked["global_buffers"]) == len(lt["global_buffers"]) + 1
    assert lo["schema"].equals(table.schema)
    for key in ("num_columns", "pages", "buffers", "encodings", "global_buffers", "num_data_bytes",
                "num_column_metadata_bytes", "version"):
        assert lo[key] == lt[key], key
    # Global buffer 0 (the FileDescriptor) is the same protobuf message.
    assert LanceFileReader(ours).read_global_buffer(0) == LanceFileReader(theirs).read_global_buffer(0)


def _int64s(n: int) -> pa.Table:
    return pa.table({"c": pa.array(range(n), pa.int64())})


#: How pylance cuts pages (facts file section 8): (batches, writer options).
PAGE_CUTTING = {
    "5_batches_default_cache_one_page": ([_int64s(5000).slice(i * 1000, 1000) for i in range(5)], {}),
    "one_batch_split_by_max_page_bytes": ([_int64s(5000)], {"max_page_bytes": 8192}),
    "5_batches_small_cache_page_per_batch": (
        [_int64s(5000).slice(i * 1000, 1000) for i in range(5)],
        {"data_cache_bytes": 4096},
    ),
    "strings_split_334_334_332": ([pa.table({"c": [f"{i:08d}" for i in range(1000)]})], {"max_page_bytes": 4096}),
    "fixed_size_list_split": (
        [pa.table({"c": pa.array([[float(i)] * 8 for i in range(1000)], pa.list_(pa.float32(), 8))})],
        {"max_page_bytes": 10000},
    ),
    "list_items_split_offsets_not": (
        [pa.table({"c": pa.array([list(range(i % 10)) for i in range(1000)], pa.list_(pa.int64()))})],
        {"max_page_bytes": 4096},
    ),
    "two_columns_interleaved": (
        [
            pa.table({"a": pa.array(range(i * 100, i * 100 + 100), pa.int64()), "b": pa.array([i % 100] * 100, pa.int8())})
            for i in range(6)
        ],
        {"data_cache_bytes": 3000},
    ),
    "struct_two_batches_small_cache": (
        [
            pa.table({"s": pa.array([{"x": i, "y": str(i)} for i in range(k, k + 50)],
                                    pa.struct([("x", pa.int32()), ("y", pa.string())]))})
            for k in (0, 50)
        ],
        {"data_cache_bytes": 1},
    ),
}


@pytest.mark.parametrize("name", sorted(PAGE_CUTTING))
def test_lancelet_cuts_pages_like_pylance(name, tmp_path, io):
    batches, options = PAGE_CUTTING[name]
    ours = io.lancelet_write(tmp_path / "ours.lance", list(batches), checksums=False, **options)
    theirs = io.pylance_write(tmp_path / "theirs.lance", list(batches), **options)
    lo, lt = _layout(ours), _layout(theirs)
    for key in ("pages", "buffers", "encodings", "global_buffers"):
        assert lo[key] == lt[key], key
    assert Path(ours).read_bytes() == Path(theirs).read_bytes()


def _padding_ranges(path: str):
    """The gaps pylance and lancelet fill after each page buffer, up to the next 64 bytes."""
    md = lance.file.LanceFileReader(path).metadata()
    out = []
    for c in md.columns:
        for p in c.pages:
            for b in p.buffers:
                end = b.position + b.size
                out.append((end, -(-end // 64) * 64))
    return out


def test_lancelet_file_bytes_equal_pylance_bytes_outside_padding(tmp_path, mixed_table, io):
    table = mixed_table()
    ours = Path(io.lancelet_write(tmp_path / "ours.lance", table, checksums=False)).read_bytes()
    theirs = Path(io.pylance_write(tmp_path / "theirs.lance", table)).read_bytes()
    assert len(ours) == len(theirs)
    mask = bytearray(len(ours))
    for start, end in _padding_ranges(str(tmp_path / "theirs.lance")):
        for i in range(start, end):
            mask[i] = 1
    diff = [i for i in range(len(ours)) if ours[i] != theirs[i] and not mask[i]]
    assert diff == []


def test_lancelet_pads_page_buffers_with_the_same_byte_as_pylance(tmp_path, mixed_table, io):
    table = mixed_table()
    ours = Path(io.lancelet_write(tmp_path / "ours.lance", table, checksums=False)).read_bytes()
    theirs = Path(io.pylance_write(tmp_path / "theirs.lance", table)).read_bytes()
    assert ours == theirs


def test_pylance_metadata_schema_of_lancelet_file_equals_input_schema(type_case, tmp_path, io):
    table = type_case.table()
    path = io.lancelet_write(tmp_path / "t.lance", table)
    md = lance.file.LanceFileReader(path).metadata()
    assert md.schema.equals(table.schema)
    assert md.num_rows == table.num_rows
    assert len(md.columns) == len(LanceFileReader(path).metadata().columns)


def test_lancelet_reports_pylance_footer_version_and_column_count(tmp_path, io):
    table = multi_page_table(200)
    path = io.pylance_write(tmp_path / "p.lance", table)
    ours = LanceFileReader(path).metadata()
    theirs = lance.file.LanceFileReader(path).metadata()
    assert (ours.major_version, ours.minor_version) == (theirs.major_version, theirs.minor_version) == (0, 3)
    assert ours.version == "2.0"
    assert len(ours.columns) == len(theirs.columns)
    assert [len(c.pages) for c in ours.columns] == [len(c.pages) for c in theirs.columns]
    assert ours.num_rows == theirs.num_rows == 200


# --------------------------------------------------------------------------------------
# Schema and field metadata
# --------------------------------------------------------------------------------------


def _metadata_table() -> pa.Table:
    schema = pa.schema(
        [
            pa.field("a", pa.int32(), metadata={"fa": "1", "fb": "two", "empty": ""}),
            pa.field(
                "st",
                pa.struct([pa.field("x", pa.string(), metadata={"inner": "yes"})]),
                metadata={"outer": "ü"},
            ),
            pa.field("l", pa.list_(pa.field("item", pa.int64(), metadata={"item_key": "v"}))),
        ],
        metadata={"k1": "v1", "k2": "", "k3": "ü", "k4": "x" * 1000},
    )
    return pa.table(
        {"a": [1, 2], "st": [{"x": "p"}, {"x": None}], "l": [[1], None]},
        schema=schema,
    )


def _field_metadata(schema: pa.Schema) -> dict:
    out = {}

    def walk(prefix, field):
        out[prefix + field.name] = dict(field.metadata or {})
        t = field.type
        if pa.types.is_struct(t):
            for i in range(t.num_fields):
                walk(prefix + field.name + ".", t.field(i))
        elif pa.types.is_list(t) or pa.types.is_large_list(t):
            walk(prefix + field.name + ".", t.value_field)

    for f in schema:
        walk("", f)
    return out


def test_pylance_reads_schema_and_field_metadata_written_by_lancelet(tmp_path):
    table = _metadata_table()
    path = str(tmp_path / "m.lance")
    with LanceFileWriter(path, table.schema, version="2.0") as w:
        w.add_schema_metadata("added", "later")
        w.write_batch(table)
    schema = lance.file.LanceFileReader(path).metadata().schema
    assert dict(schema.metadata) == {**dict(table.schema.metadata), b"added": b"later"}
    assert _field_metadata(schema) == _field_metadata(table.schema)
    assert dict(lance.file.LanceFileReader(path).read_all().to_table().schema.metadata) == dict(schema.metadata)


def test_lancelet_reads_schema_and_field_metadata_written_by_pylance(tmp_path):
    table = _metadata_table()
    path = str(tmp_path / "m.lance")
    w = lance.file.LanceFileWriter(path, table.schema, version="2.0")
    w.add_schema_metadata("added", "later")
    w.write_batch(table)
    w.close()
    reader = LanceFileReader(path)
    assert dict(reader.schema.metadata) == {**dict(table.schema.metadata), b"added": b"later"}
    assert _field_metadata(reader.schema) == _field_metadata(table.schema)
    got = reader.read_all().to_table()
    assert dict(got.schema.metadata) == dict(reader.schema.metadata)
    assert _field_metadata(got.schema) == _field_metadata(table.schema)
    assert got.equals(table)

