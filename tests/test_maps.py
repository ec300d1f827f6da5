"""Map columns (file format 2.2): stored as a list of entries structs (key, value).

pylance 14 writes maps in 2.2 files and datasets (its default) and refuses them at 2.0 and
2.1, and refuses sorted-key maps. These tests check both directions for files and
datasets, maps nested in structs and lists and holding lists and structs, slices and
takes, and the refusals.
"""

from __future__ import annotations

import pyarrow as pa
import pytest

import lancelet
import lancelet.file as lf

lance = pytest.importorskip("lance")
plf = pytest.importorskip("lance.file")

N = 3000
M = pa.map_(pa.string(), pa.int32())


def _rows(i: int):
    return [None, [], [("a", i), ("b", None)], [(f"k{i}", i * 2)] * (i % 5)][i % 4]


# Special table (not in _tables): nested maps of lists, the subject of these tests.
def _table(n: int = N) -> pa.Table:
    rows = [_rows(i) for i in range(n)]
    inner = pa.map_(pa.int64(), pa.list_(pa.string()))
    return pa.table({
        "id": pa.array(range(n), pa.int64()),
        "m": pa.array(rows, M),
        "lists": pa.array([None if i % 7 == 3 else [(i, ["x"] * (i % 3)), (-i, None)] for i in range(n)], inner),
        "structs": pa.array([[("p", {"a": i, "b": str(i)})] if i % 2 else [] for i in range(n)],
                            pa.map_(pa.string(), pa.struct([pa.field("a", pa.int64()), pa.field("b", pa.string())]))),
        "in_struct": pa.array([{"mm": r} for r in rows], pa.struct([pa.field("mm", M)])),
        "in_list": pa.array([None if r is None else [r, []] for r in rows], pa.list_(M)),
    })


@pytest.mark.parametrize("writer", ["lancelet", "pylance"])
def test_map_files_both_ways(writer, tmp_path, tables_equal):
    table = _table()
    path = str(tmp_path / "m.lance")
    mod = lf if writer == "lancelet" else plf
    with mod.LanceFileWriter(path, table.schema, version="2.2") as w:
        w.write_batch(table)
    tables_equal(lf.LanceFileReader(path).read_all().to_table(), table)
    tables_equal(plf.LanceFileReader(path).read_all().to_table(), table)
    reader = lf.LanceFileReader(path)
    for start, n in [(0, 1), (1001, 7), (N - 3, 3)]:
        tables_equal(reader.read_range(start, n).to_table(), table.slice(start, n))
    idx = [5, 0, 2999, 1234, 5]
    tables_equal(reader.take_rows(idx).to_table(), table.take(idx))
    tables_equal(lf.LanceFileReader(path, columns=["m", "id"]).read_all().to_table(), table.select(["m", "id"]))


@pytest.mark.parametrize("writer", ["lancelet", "pylance"])
def test_map_datasets_both_ways(writer, tmp_path, tables_equal):
    table = _table()
    uri = str(tmp_path / "ds.lance")
    (lancelet if writer == "lancelet" else lance).write_dataset(table, uri, max_rows_per_file=1000)
    for reader in (lancelet, lance):
        tables_equal(reader.dataset(uri).to_table(), table)
    ds = lancelet.dataset(uri)
    tables_equal(ds.to_table(columns=["id", "m"], filter="id >= 2990"), table.select(["id", "m"]).slice(2990))
    tables_equal(ds.take([3, 2001]), table.take([3, 2001]))
    tables_equal(ds.to_table(columns=["in_struct.mm"]).rename_columns(["x"]),
                 pa.table({"x": table.column("in_struct").combine_chunks().field("mm")}))


def test_appending_maps_across_writers(tmp_path, tables_equal):
    table = _table(500)
    uri = str(tmp_path / "ds.lance")
    lance.write_dataset(table, uri)
    lancelet.write_dataset(table, uri, mode="append")
    lance.write_dataset(table, uri, mode="append")
    tables_equal(lancelet.dataset(uri).to_table(), pa.concat_tables([table] * 3))
    tables_equal(lance.dataset(uri).to_table(), pa.concat_tables([table] * 3))


@pytest.mark.parametrize("version", ["2.0", "2.1"])
def test_maps_before_2_2_are_refused_like_pylance(version, tmp_path):
    table = _table(10)
    with pytest.raises(NotImplementedError):
        with plf.LanceFileWriter(str(tmp_path / "p.lance"), table.schema, version=version) as w:
            w.write_batch(table)
    with pytest.raises(lancelet.UnsupportedFeatureError, match="2.2"):
        with lf.LanceFileWriter(str(tmp_path / "o.lance"), table.schema, version=version) as w:
            w.write_batch(table)
    with pytest.raises(lancelet.UnsupportedFeatureError, match="2.2"):
        lancelet.write_dataset(table, str(tmp_path / "ds"), data_storage_version=version)


def test_sorted_key_maps_are_refused(tmp_path):
    t = pa.table({"m": pa.array([[("a", 1)]], pa.map_(pa.string(), pa.int32(), keys_sorted=True))})
    with pytest.raises(lancelet.UnsupportedFeatureError, match="sorted"):
        with lf.LanceFileWriter(str(tmp_path / "o.lance"), t.schema, version="2.2") as w:
            w.write_batch(t)
