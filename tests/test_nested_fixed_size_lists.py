"""Fixed-size lists of fixed-size lists (e.g. 2x2 matrices, stacks of embeddings) at 2.1+.

pylance nests FixedSizeList encodings (mini-block, or full-zip when a value is 256 bytes or
more, where each level's validity bitmap precedes the values); lancelet writes the same
shapes and reads pylance's, outer nulls included. Nulls inside the nested lists (below a
valid outer list) are refused by lancelet's writer with a clear error.
"""

from __future__ import annotations

import pyarrow as pa
import pytest

import lancelet
import lancelet.file as lf

plf = pytest.importorskip("lance.file")

N = 500
F2x2 = pa.list_(pa.list_(pa.float32(), 2), 2)

CASES = {
    "2x2": lambda: pa.array([[[float(i), 2.0], [3.0, -float(i)]] for i in range(N)], F2x2),
    "2x2_outer_nulls": lambda: pa.array([[[1.0, 2.0], [3.0, 4.0]] if i % 5 else None for i in range(N)], F2x2),
    "3x2x2_int16": lambda: pa.array([[[[i, 1], [2, 3]]] * 3 for i in range(N)],
                                    pa.list_(pa.list_(pa.list_(pa.int16(), 2), 2), 3)),
    "wide_2x64": lambda: pa.array([[[float(i)] * 64] * 2 for i in range(N)], pa.list_(pa.list_(pa.float32(), 64), 2)),
    "wide_2x64_outer_nulls": lambda: pa.array([[[float(i)] * 64] * 2 if i % 3 else None for i in range(N)],
                                              pa.list_(pa.list_(pa.float32(), 64), 2)),
    # 65 items: each level's validity bitmap spans all its items, not one per inner list.
    "wide_2x65_outer_nulls": lambda: pa.array([[[float(i)] * 65] * 2 if i % 3 else None for i in range(N)],
                                              pa.list_(pa.list_(pa.float32(), 65), 2)),
    "wide_3x2x65_outer_nulls": lambda: pa.array([[[[float(i)] * 65] * 2] * 3 if i % 4 else None for i in range(N)],
                                                pa.list_(pa.list_(pa.list_(pa.float32(), 65), 2), 3)),
    "in_a_list": lambda: pa.array([[[[1.0, 2.0], [3.0, 4.0]]] * (i % 3) for i in range(N)], pa.list_(F2x2)),
    "sliced": lambda: pa.array([[[float(i), 2.0], [3.0, 4.0]] for i in range(N)], F2x2).slice(7, 300),
}


@pytest.mark.parametrize("writer", ["lancelet", "pylance"])
@pytest.mark.parametrize("version", ["2.1", "2.2"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_nested_fixed_size_lists_both_ways(case, version, writer, tmp_path):
    column = CASES[case]()
    table = pa.table({"c": column, "i": pa.array(range(len(column)))})
    path = str(tmp_path / "n.lance")
    with (lf if writer == "lancelet" else plf).LanceFileWriter(path, table.schema, version=version) as w:
        w.write_batch(table)
    for reader in (lf, plf):
        got = reader.LanceFileReader(path).read_all().to_table()
        assert got.schema == table.schema
        # Compared as values: children hidden under null lists may differ in validity.
        assert got.to_pylist() == table.to_pylist()
    part = lf.LanceFileReader(path).read_range(100, 50).to_table()
    assert part.to_pylist() == table.slice(100, 50).to_pylist()


@pytest.mark.parametrize("version", ["2.1", "2.2"])
def test_nulls_inside_nested_lists_are_refused(version, tmp_path):
    column = pa.array([[[1.0, None], [3.0, 4.0]]] * 10, F2x2)
    table = pa.table({"c": column})
    with pytest.raises(lancelet.UnsupportedFeatureError, match="nested fixed-size lists"):
        with lf.LanceFileWriter(str(tmp_path / "n.lance"), table.schema, version=version) as w:
            w.write_batch(table)


def test_lancelet_reads_pylance_nested_lists_with_inner_nulls(tmp_path):
    column = pa.array([[[1.0, None], [3.0, 4.0]] if i % 4 else None for i in range(N)], F2x2)
    table = pa.table({"c": column})
    path = str(tmp_path / "p.lance")
    with plf.LanceFileWriter(path, table.schema, version="2.2") as w:
        w.write_batch(table)
    assert lf.LanceFileReader(path).read_all().to_table().to_pylist() == table.to_pylist()
