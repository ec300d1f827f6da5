"""Reading Lance file format 2.1 and 2.2 as pylance 14.0.2 writes them.

lancelet reads these versions but does not write them yet. Every file here is written by
pylance (``lance.file.LanceFileWriter(..., version=...)`` or ``lance.write_dataset`` with
its defaults, which is 2.2) and read back by lancelet: whole file, a row range and
``take_rows``. pylance is the oracle: the table it was given is what the file means.

The cases cover the layouts pylance picks (mini-block with bit packing, RLE, dictionary,
FSST, ByteStreamSplit + zstd/lz4; full-zip for wide values; constant / all-null pages)
and the nesting folded into repetition/definition levels (lists, large lists, lists of
lists, lists of structs, nullable structs, fixed-size lists).
"""

from __future__ import annotations

import datetime
import decimal
import random

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

import lance
from lancelet.file import LanceFileReader

pytestmark = pytest.mark.interop

VERSIONS = ["2.1", "2.2"]


def _strings(rng: random.Random, n: int, lo: int, hi: int) -> list:
    return ["".join(rng.choice("abcdefghij klmnop") for _ in range(rng.randint(lo, hi))) for _ in range(n)]


def _cases() -> dict:
    rng = random.Random(42)
    nrng = np.random.default_rng(42)
    n = 3000
    c = {}
    c["int_sorted"] = pa.table({"x": pa.array(np.arange(n, dtype=np.int64))})
    c["int_random"] = pa.table({"x": pa.array(nrng.integers(-(1 << 31), 1 << 31, n, dtype=np.int64).astype(np.int32))})
    c["int_small_random_nulls"] = pa.table(
        {"x": pa.array([None if i % 7 == 3 else rng.randint(0, 999) for i in range(n)], pa.int32())}
    )
    c["int_constant"] = pa.table({"x": pa.array([7] * n, pa.int32())})
    c["int_runs"] = pa.table({"x": pa.array([i // 500 for i in range(n)], pa.int64())})
    c["uint8_and_int16"] = pa.table(
        {
            "a": pa.array([i % 50 for i in range(n)], pa.uint8()),
            "b": pa.array(range(n), pa.int16()),
            "c": pa.array([i * 3 for i in range(n)], pa.uint64()),
        }
    )
    c["floats"] = pa.table(
        {
            "f32": pa.array(nrng.random(n, dtype=np.float32)),
            "f64": pa.array([None if i % 13 == 0 else float(i) / 7 for i in range(n)]),
            "f64_const": pa.array([2.5] * n),
            "f64_lowcard": pa.array([[0.5, 1.5, 2.5, 3.5][i % 4] for i in range(n)]),
        }
    )
    c["bools"] = pa.table(
        {
            "b": pa.array([rng.random() < 0.5 for _ in range(n)]),
            "bn": pa.array([None if i % 5 == 0 else i % 3 == 0 for i in range(n)]),
            "bc": pa.array([True] * n),
        }
    )
    c["strings_lowcard"] = pa.table(
        {"s": pa.array([None if i % 9 == 0 else ["red", "green", "blue"][i % 3] for i in range(n)])}
    )
    c["strings_highcard_small"] = pa.table({"s": pa.array(_strings(rng, 500, 0, 12))})
    c["strings_highcard_fsst"] = pa.table(
        {"s": pa.array([None if i % 17 == 0 else f"user-{i}-{s}" for i, s in enumerate(_strings(rng, n, 5, 30))])}
    )
    c["strings_long"] = pa.table(
        {"s": pa.array([("row %d alpha beta gamma delta " % i) * rng.randint(10, 40) for i in range(200)])}
    )
    c["strings_very_long"] = pa.table(
        {"s": pa.array([None if i == 1 else "q" * 40000 + str(i) for i in range(4)], pa.large_string())}
    )
    c["binary"] = pa.table(
        {"b": pa.array([None if i % 11 == 0 else bytes(rng.getrandbits(8) for _ in range(i % 20)) for i in range(n)])}
    )
    c["large_string_and_binary"] = pa.table(
        {
            "s": pa.array([None if i % 4 == 0 else f"v{i}" for i in range(n)], pa.large_string()),
            "b": pa.array([b"x" * (i % 9) for i in range(n)], pa.large_binary()),
        }
    )
    c["fsl_f32_1024"] = pa.table(
        {"v": pa.FixedSizeListArray.from_arrays(pa.array(nrng.random(20 * 1024, dtype=np.float32)), 1024)}
    )
    c["fsl_f32_1024_nulls"] = pa.table(
        {
            "v": pa.array(
                [None if i % 3 == 1 else list(map(float, nrng.random(1024, dtype=np.float32))) for i in range(12)],
                pa.list_(pa.float32(), 1024),
            )
        }
    )
    c["fsl_small_with_nulls"] = pa.table(
        {"v": pa.array([None if i % 6 == 0 else [i, None, i + 1.0] for i in range(n)], pa.list_(pa.float64(), 3))}
    )
    c["list_int"] = pa.table(
        {
            "l": pa.array(
                [None if i % 10 == 0 else [] if i % 10 == 1 else [j if j % 4 else None for j in range(i % 6)] for i in range(n)],
                pa.list_(pa.int32()),
            )
        }
    )
    c["large_list_strings"] = pa.table(
        {
            "l": pa.array(
                [None if i % 8 == 0 else [f"s{i}", None, ""][: i % 4] for i in range(n)],
                pa.large_list(pa.string()),
            )
        }
    )
    c["list_list_int"] = pa.table(
        {
            "l": pa.array(
                [
                    None if i % 9 == 0 else [] if i % 9 == 1 else [None if j == 1 else list(range(j + i % 3)) for j in range(i % 4)]
                    for i in range(n)
                ],
                pa.list_(pa.list_(pa.int64())),
            )
        }
    )
    st = pa.struct([pa.field("a", pa.int32()), pa.field("b", pa.string())])
    c["list_struct"] = pa.table(
        {
            "l": pa.array(
                [
                    None if i % 7 == 0 else [None if j == 2 else {"a": None if j == 1 else i + j, "b": f"b{j}" if j % 2 else None} for j in range(i % 4)]
                    for i in range(n)
                ],
                pa.list_(st),
            )
        }
    )
    c["struct_nullable"] = pa.table(
        {
            "s": pa.array(
                [None if i % 5 == 0 else {"a": None if i % 3 == 0 else i, "b": f"x{i % 4}"} for i in range(n)], st
            )
        }
    )
    c["struct_nested"] = pa.table(
        {
            "s": pa.array(
                [None if i % 4 == 0 else {"t": None if i % 4 == 1 else {"x": None if i % 4 == 2 else i}} for i in range(n)],
                pa.struct([pa.field("t", pa.struct([pa.field("x", pa.int64())]))]),
            )
        }
    )
    c["struct_with_list_and_fsl"] = pa.table(
        {
            "s": pa.array(
                [{"l": None if i % 3 == 0 else list(range(i % 5)), "v": [float(i), 1.0]} for i in range(n)],
                pa.struct([pa.field("l", pa.list_(pa.int32())), pa.field("v", pa.list_(pa.float32(), 2))]),
            )
        }
    )
    c["list_fsl"] = pa.table(
        {
            "l": pa.array(
                [[list(map(float, nrng.random(128, dtype=np.float32)))] * (i % 3) for i in range(60)],
                pa.list_(pa.list_(pa.float32(), 128)),
            )
        }
    )
    c["all_null"] = pa.table(
        {
            "i": pa.array([None] * n, pa.int32()),
            "s": pa.array([None] * n, pa.string()),
            "l": pa.array([None] * n, pa.list_(pa.int32())),
            "n": pa.nulls(n),
        }
    )
    base = datetime.datetime(2024, 1, 1)
    c["temporal_decimal"] = pa.table(
        {
            "ts": pa.array([None if i % 10 == 0 else base + datetime.timedelta(seconds=i * 37) for i in range(n)], pa.timestamp("us")),
            "tz": pa.array([base + datetime.timedelta(minutes=i) for i in range(n)], pa.timestamp("ms", tz="UTC")),
            "d": pa.array([datetime.date(2020, 1, 1) + datetime.timedelta(days=i % 400) for i in range(n)], pa.date32()),
            "t": pa.array([i * 1000 for i in range(n)], pa.time64("us")),
            "dec": pa.array([None if i % 6 == 0 else decimal.Decimal(i) / 100 for i in range(n)], pa.decimal128(12, 2)),
            "dec_const": pa.array([decimal.Decimal("1.50")] * n, pa.decimal128(10, 2)),
            "dur": pa.array([i for i in range(n)], pa.duration("s")),
        }
    )
    c["fixed_size_binary"] = pa.table(
        {"f": pa.array([None if i % 3 == 0 else bytes([i % 256]) * 16 for i in range(n)], pa.binary(16))}
    )
    c["constant_strings"] = pa.table(
        {
            "s": pa.array(["hello!"] * n),
            "sn": pa.array([None if i % 2 else "same" for i in range(n)]),
        }
    )
    c["float16"] = pa.table({"h": pa.array(np.arange(n, dtype=np.float16))})
    c["empty"] = pa.table({"i": pa.array([], pa.int32()), "s": pa.array([], pa.string())})
    return c


CASES = _cases()


def _write(path, table: pa.Table, version: str, **kw) -> str:
    with lance.file.LanceFileWriter(str(path), table.schema, version=version, **kw) as w:
        if table.num_rows:
            w.write_batch(table)
    return str(path)


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("name", sorted(CASES))
def test_lancelet_reads_pylance_v21_file(name, version, tmp_path, tables_equal):
    table = CASES[name]
    path = _write(tmp_path / "t.lance", table, version)
    reader = LanceFileReader(path)
    assert reader.num_rows() == table.num_rows
    assert reader.schema.equals(table.schema)
    assert reader.metadata().version == version
    tables_equal(reader.read_all().to_table(), table)
    n = table.num_rows
    if n == 0:
        return
    indices = [n - 1, 0, n // 2, n // 2, 1 % n, n // 3]
    tables_equal(reader.take_rows(indices).to_table(), table.take(indices))
    start, length = n // 4, max(1, n // 3)
    tables_equal(reader.read_range(start, length).to_table(), table.slice(start, length))


@pytest.mark.parametrize("version", VERSIONS)
def test_catalogue_types_at_v21(type_case, version, tmp_path, tables_equal):
    """Every type of the shared catalogue (conftest.py), written by pylance at 2.1 / 2.2."""
    table = type_case.table()
    path = _write(tmp_path / "t.lance", table, version)
    reader = LanceFileReader(path)
    tables_equal(reader.read_all().to_table(), table)
    idx = [table.num_rows - 1, 0, 3, 3, table.num_rows // 2]
    tables_equal(reader.take_rows(idx).to_table(), table.take(idx))


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("compression", ["zstd", "lz4", "fsst"])
def test_field_compression_metadata(version, compression, tmp_path, tables_equal):
    n = 10_000
    md = {"lance-encoding:compression": compression}
    schema = pa.schema(
        [
            pa.field("i", pa.int32(), metadata=md),
            pa.field("f", pa.float32(), metadata=md),
            pa.field("s", pa.string(), metadata=md),
        ]
    )
    table = pa.table(
        {
            "i": pa.array(range(n), pa.int32()),
            "f": pa.array(np.linspace(0, 1, n, dtype=np.float32)),
            "s": pa.array([None if i % 10 == 0 else f"string number {i % 300}" for i in range(n)]),
        },
        schema=schema,
    )
    path = _write(tmp_path / "t.lance", table, version)
    tables_equal(LanceFileReader(path).read_all().to_table(), table)


@pytest.mark.parametrize("version", VERSIONS)
def test_multi_page_columns(version, tmp_path, tables_equal):
    n = 300_000
    rng = np.random.default_rng(1)
    table = pa.table(
        {
            "i": pa.array(rng.integers(0, 1 << 40, n)),
            "s": pa.array([f"value-{i}-" + "x" * (i % 50) for i in range(n)]),
            "l": pa.array([None if i % 11 == 0 else list(range(i % 7)) for i in range(n)], pa.list_(pa.int32())),
        }
    )
    path = _write(tmp_path / "t.lance", table, version)
    reader = LanceFileReader(path)
    assert any(len(c.pages) > 1 for c in reader.metadata().columns)
    tables_equal(reader.read_all().to_table(), table)
    idx = [299_999, 5, 150_000, 0, 77_777]
    tables_equal(reader.take_rows(idx).to_table(), table.take(idx))
    tables_equal(reader.read_range(100_000, 60_000).to_table(), table.slice(100_000, 60_000))
    batches = list(reader.read_all(batch_size=70_000).to_batches())
    tables_equal(pa.Table.from_batches(batches), table)


@pytest.mark.parametrize("version", VERSIONS)
def test_projection_of_struct_children(version, tmp_path, tables_equal):
    table = CASES["list_struct"].append_column("k", pa.array(range(3000), pa.int64()))
    path = _write(tmp_path / "t.lance", table, version)
    got = LanceFileReader(path, columns=["k"]).read_all().to_table()
    tables_equal(got, table.select(["k"]))
    table = CASES["struct_nullable"]
    path = _write(tmp_path / "s.lance", table, version)
    got = LanceFileReader(path, columns=["s.b"]).read_all().to_table()
    expected = lance.file.LanceFileReader(path, columns=["s.b"]).read_all().to_table()
    tables_equal(got, expected)


def test_pylance_default_dataset_is_readable(tmp_path, tables_equal):
    import lancelet

    table = pa.table(
        {
            "id": pa.array(range(5000), pa.int64()),
            "name": pa.array([None if i % 9 == 0 else f"name-{i % 200}" for i in range(5000)]),
            "tags": pa.array([[f"t{j}" for j in range(i % 3)] for i in range(5000)], pa.list_(pa.string())),
            "vec": pa.FixedSizeListArray.from_arrays(pa.array(np.arange(5000 * 8, dtype=np.float32)), 8),
        }
    )
    uri = str(tmp_path / "ds")
    lance.write_dataset(table, uri, max_rows_per_file=2000)
    assert lance.dataset(uri).data_storage_version == "2.2"
    ds = lancelet.dataset(uri)
    tables_equal(ds.to_table(), table)
    filtered = ds.to_table(filter="id >= 4990 and name is not null")
    tables_equal(filtered, table.filter(pc.and_(pc.greater_equal(table["id"], 4990), pc.is_valid(table["name"]))))
    tables_equal(ds.take([4999, 0, 2500]), table.take([4999, 0, 2500]))
    tables_equal(ds.to_table(columns=["tags"]), table.select(["tags"]))


def test_appending_at_2_0_to_a_v22_dataset_keeps_its_data_format(tmp_path):
    """The appended file is of the version asked for (as pylance writes it); the dataset's
    data format stays 2.2, and both libraries read the mixed files."""
    import lancelet

    table = pa.table({"id": pa.array(range(10), pa.int64())})
    uri = str(tmp_path / "ds")
    lance.write_dataset(table, uri)
    lancelet.write_dataset(table, uri, mode="append", data_storage_version="2.0")
    assert lance.dataset(uri).count_rows() == 20
    assert lance.dataset(uri).data_storage_version == "2.2"
    files = [(d.file_major_version, d.file_minor_version) for f in lance.dataset(uri).get_fragments()
             for d in f.data_files()]
    assert files == [(2, 2), (2, 0)]
    assert lancelet.dataset(uri).to_table().column("id").to_pylist() == list(range(10)) * 2
