"""Arrow dictionary columns (pandas categoricals arrive as ``dictionary<int8, string>``) at 2.1+.

pylance stores such a column as a mini-block dictionary page whose indices are as wide as
the key type, and checks that width when reading. These tests write every key type with
few and with many distinct values, with nulls, in both directions, and check the values,
the type and that a dictionary read back stays a dictionary (not one key per row).
"""

from __future__ import annotations

import pyarrow as pa
import pytest

import lancelet
import lancelet.file as lf

lance = pytest.importorskip("lance")
plf = pytest.importorskip("lance.file")

KEYS = [pa.int8(), pa.int16(), pa.int32(), pa.int64(), pa.uint8(), pa.uint16(), pa.uint32()]


def _column(key: pa.DataType, distinct: int, n: int = 3000) -> pa.Array:
    values = [None if i % 11 == 5 else f"value-{i % distinct}" for i in range(n)]
    return pa.array(values).dictionary_encode().cast(pa.dictionary(key, pa.string()))


CASES = [(k, d) for k in KEYS for d in (3, 100)] + [(pa.int16(), 2000), (pa.int32(), 2500)]


@pytest.mark.parametrize("writer", ["lancelet", "pylance"])
@pytest.mark.parametrize("version", ["2.1", "2.2"])
@pytest.mark.parametrize("key,distinct", CASES, ids=[f"{k}-{d}" for k, d in CASES])
def test_dictionary_columns_both_ways(key, distinct, version, writer, tmp_path, tables_equal):
    table = pa.table({"c": _column(key, distinct), "x": pa.array(range(3000))})
    path = str(tmp_path / "d.lance")
    mod = lf if writer == "lancelet" else plf
    with mod.LanceFileWriter(path, table.schema, version=version) as w:
        w.write_batch(table)
    for reader in (lf, plf):
        got = reader.LanceFileReader(path).read_all().to_table()
        assert got.schema == table.schema
        assert got.column("c").to_pylist() == table.column("c").to_pylist()
    got = lf.LanceFileReader(path).read_all().to_table().column("c").combine_chunks()
    assert len(got.dictionary) <= max(distinct, 1) * 2, "the dictionary was expanded to one entry per row"
    tables_equal(lf.LanceFileReader(path).read_range(1000, 17).to_table().cast(table.schema), table.slice(1000, 17))


def test_pandas_categoricals_round_trip_through_datasets(tmp_path):
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame({"color": pd.Categorical(["red", "green", None, "red"] * 500), "n": range(2000)})
    uri = str(tmp_path / "cat.lance")
    lancelet.write_dataset(df, uri)
    back = lance.dataset(uri).to_table().to_pandas()
    assert back["color"].astype(object).where(back["color"].notna(), None).tolist() == \
        df["color"].astype(object).where(df["color"].notna(), None).tolist()
    uri2 = str(tmp_path / "cat2.lance")
    lance.write_dataset(df, uri2)
    got = lancelet.dataset(uri2).to_table()
    assert got.column("color").to_pylist() == ["red", "green", None, "red"] * 500


EDGE = {
    "all_null": lambda: pa.array([None] * 300, pa.string()).dictionary_encode(),
    "one_value": lambda: pa.array(["x"] * 300).dictionary_encode(),
    "long_values": lambda: pa.array(["y" * 400 + str(i % 3) for i in range(300)]).dictionary_encode(),
    "int64_values": lambda: pa.array([i % 3 for i in range(300)], pa.int64()).dictionary_encode(),
    "float_values": lambda: pa.array([i % 3 / 2 for i in range(300)], pa.float64()).dictionary_encode(),
}


@pytest.mark.parametrize("writer", ["lancelet", "pylance"])
@pytest.mark.parametrize("version", ["2.1", "2.2"])
@pytest.mark.parametrize("case", sorted(EDGE))
def test_dictionary_edge_cases_both_ways(case, version, writer, tmp_path):
    column = EDGE[case]()
    table = pa.table({"c": column})
    path = str(tmp_path / "e.lance")
    with (lf if writer == "lancelet" else plf).LanceFileWriter(path, table.schema, version=version) as w:
        w.write_batch(table)
    for reader in (lf, plf):
        got = reader.LanceFileReader(path).read_all().to_table()
        assert got.schema == table.schema
        assert got.column("c").to_pylist() == column.to_pylist()
