"""Which field metadata marks a struct as packed: one rule for files and datasets.

pylance 14's writer packs a struct whose metadata ``packed`` or ``lance-encoding:packed``
is ``true``, ``1``, ``yes``, ``y`` or ``on`` in any letter case, exactly (``" true"`` and
``"t"`` do not pack), and never packs a non-struct field whatever its metadata. lancelet
follows that rule in its file reader, file writer and dataset reads: both libraries write
the same columns, and lancelet reads what pylance writes.

pylance 14's own 2.1+ reader only takes ``true``: it panics on any 2.1+ file with a struct
marked ``yes``, ``1``, ``y`` or ``on`` (its own or ours, packed or not), so those files are
only read back here through lancelet. At 2.0 pylance reads them.
"""

from __future__ import annotations

import pyarrow as pa
import pytest

import lancelet
import lancelet.file as lf

lance = pytest.importorskip("lance")
plf = pytest.importorskip("lance.file")

POINT = pa.struct([pa.field("a", pa.int32()), pa.field("b", pa.int32())])


# Special table (not in _tables): the packed flag lives in the field metadata under test.
def _table(value: str, key: str = "packed") -> pa.Table:
    schema = pa.schema([pa.field("p", POINT, metadata={key: value}), pa.field("x", pa.int32())])
    points = pa.array([{"a": i, "b": -i} for i in range(5)], POINT)
    return pa.Table.from_arrays([points, pa.array(range(5), pa.int32())], schema=schema)


def _write(module, path: str, table: pa.Table, version: str) -> None:
    with module.LanceFileWriter(path, table.schema, version=version) as w:
        w.write_batch(table)


@pytest.mark.parametrize(
    "value,packs", [("yes", True), ("1", True), ("On", True), ("TRUE", True), (" true", False), ("t", False)]
)
@pytest.mark.parametrize("key", ["packed", "lance-encoding:packed"])
@pytest.mark.parametrize("version", ["2.1", "2.2"])
def test_files_agree_on_packed_values_both_ways(value, packs, key, version, tmp_path, tables_equal):
    table = _table(value, key)
    ours, theirs = str(tmp_path / "ours.lance"), str(tmp_path / "theirs.lance")
    _write(lf, ours, table, version)
    _write(plf, theirs, table, version)
    columns = 2 if packs else 3
    assert len(plf.LanceFileReader(theirs).metadata().columns) == columns
    assert len(plf.LanceFileReader(ours).metadata().columns) == columns
    tables_equal(lf.LanceFileReader(theirs).read_all().to_table(), table)
    tables_equal(lf.LanceFileReader(ours).read_all().to_table(), table)
    if value.lower() == "true" or not packs:
        tables_equal(plf.LanceFileReader(ours).read_all().to_table(), table)


def test_lancelet_reads_a_2_0_file_pylance_packed_with_yes(tmp_path, tables_equal):
    table = _table("yes")
    path = str(tmp_path / "p.lance")
    _write(plf, path, table, "2.0")
    tables_equal(lf.LanceFileReader(path).read_all().to_table(), table)


@pytest.mark.parametrize("version", ["2.1", "2.2"])
def test_a_list_marked_packed_is_not_packed(version, tmp_path, tables_equal):
    schema = pa.schema([pa.field("l", pa.list_(pa.int32()), metadata={"packed": "true"}), pa.field("x", pa.int32())])
    table = pa.table({"l": [[1, 2], [3], []], "x": [1, 2, 3]}, schema=schema)
    ours, theirs = str(tmp_path / "ours.lance"), str(tmp_path / "theirs.lance")
    _write(lf, ours, table, version)
    _write(plf, theirs, table, version)
    assert len(lf.LanceFileReader(ours).metadata().columns) == len(plf.LanceFileReader(theirs).metadata().columns)
    tables_equal(lf.LanceFileReader(theirs).read_all().to_table(), table)
    tables_equal(plf.LanceFileReader(ours).read_all().to_table(), table)


def test_datasets_packed_with_yes(tmp_path, tables_equal):
    table = _table("yes")
    ours, theirs = str(tmp_path / "ours"), str(tmp_path / "theirs")
    lancelet.write_dataset(table, ours)
    lance.write_dataset(table, theirs)
    for uri in (ours, theirs):
        tables_equal(lancelet.dataset(uri).to_table(), table)
        assert lancelet.dataset(uri).to_table(columns=["p.a"]).column(0).to_pylist() == list(range(5))
    files = [lance.dataset(u).get_fragments()[0].metadata.data_files()[0] for u in (ours, theirs)]
    assert files[0].fields == files[1].fields == [0, 3]
