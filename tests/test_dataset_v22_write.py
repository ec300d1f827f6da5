"""Datasets whose data files are Lance file format 2.1 / 2.2, written by lancelet.

``lancelet.write_dataset(..., data_storage_version=v)`` for v in "2.1", "2.2", "stable":
pylance 14.0.2 reads the rows back and reports the same ``data_storage_version``; every
data file's footer carries the version; appends (by lancelet or pylance) keep it;
update / delete / merge_insert / add_columns / merge / compaction by lancelet write files
of the dataset's version and pylance reads the result. New datasets default to 2.2, as in
pylance 14.
"""

from __future__ import annotations

import os
import struct

import numpy as np
import pyarrow as pa
import pytest

import lancelet

lance = pytest.importorskip("lance")

pytestmark = pytest.mark.interop

#: data_storage_version given -> (reported version, footer version)
VERSIONS = {"2.1": ("2.1", (2, 1)), "2.2": ("2.2", (2, 2)), "stable": ("2.2", (2, 2))}

_AB = pa.struct([pa.field("a", pa.int32()), pa.field("b", pa.string())])


def _t(lo: int, hi: int) -> pa.Table:
    """Rows ``lo..hi`` of a table with the layouts that differ between 2.0 and 2.1+
    (nullable structs, lists, lists of structs, fixed-size lists, strings)."""
    r = range(lo, hi)
    return pa.table(
        {
            "id": pa.array(r, pa.int64()),
            "s": pa.array([None if i % 9 == 0 else f"row-{i % 50}" for i in r]),
            "price": pa.array([None if i % 7 == 0 else i * 0.5 for i in r], pa.float64()),
            "tags": pa.array([None if i % 10 == 0 else [f"t{(i + j) % 4}" for j in range(i % 3)] for i in r], pa.list_(pa.string())),
            "st": pa.array([None if i % 5 == 0 else {"a": None if i % 3 == 0 else i, "b": f"b{i % 6}"} for i in r], _AB),
            "ls": pa.array([[None if j == 1 else {"a": i + j, "b": None} for j in range(i % 4)] for i in r], pa.list_(_AB)),
            "vec": pa.FixedSizeListArray.from_arrays(pa.array(np.arange(len(r) * 8, dtype=np.float32) + lo * 8), 8),
        }
    )


def _by_id(t: pa.Table) -> list:
    return sorted(t.to_pylist(), key=lambda row: row["id"])


def _footer(path: str) -> tuple:
    with open(path, "rb") as f:
        f.seek(-8, os.SEEK_END)
        major, minor, magic = struct.unpack("<HH4s", f.read(8))
    assert magic == b"LANC", path
    return major, minor


def _data_file_versions(uri: str) -> set:
    """The footer versions of every data file the current version of ``uri`` uses, and
    the versions its manifest records for them (as pylance reads the manifest)."""
    out = set()
    for frag in lance.dataset(uri).get_fragments():
        for f in frag.metadata.files:
            footer = _footer(os.path.join(uri, "data", f.path))
            assert footer == (f.file_major_version, f.file_minor_version), f.path
            out.add(footer)
    return out


def _all_footers(uri: str) -> set:
    d = os.path.join(uri, "data")
    return {_footer(os.path.join(d, n)) for n in os.listdir(d) if n.endswith(".lance")}


def _check(uri: str, expected_rows: list, version: str) -> None:
    """pylance and lancelet read the same rows; both report ``version``."""
    theirs = lance.dataset(uri)
    assert theirs.data_storage_version == version
    assert _by_id(theirs.to_table()) == expected_rows
    theirs.validate()
    ours = lancelet.dataset(uri)
    assert ours.data_storage_version == version
    assert _by_id(ours.to_table()) == expected_rows
    footer = {"2.1": (2, 1), "2.2": (2, 2)}[version]
    assert _data_file_versions(uri) == {footer}


@pytest.mark.parametrize("given", sorted(VERSIONS))
def test_write_dataset_at_version(tmp_path, given, tables_equal):
    version, footer = VERSIONS[given]
    uri = str(tmp_path / "d.lance")
    table = _t(0, 2500)
    ds = lancelet.write_dataset(table, uri, data_storage_version=given, max_rows_per_file=1000)
    assert ds.data_storage_version == version
    assert len(ds.get_fragments()) == 3
    theirs = lance.dataset(uri)
    assert theirs.data_storage_version == version
    tables_equal(theirs.to_table(), table)
    theirs.validate()
    tables_equal(lancelet.dataset(uri).to_table(), table)
    assert lancelet.dataset(uri).data_storage_version == version
    assert _all_footers(uri) == {footer}
    assert _data_file_versions(uri) == {footer}
    # Projections, filters and takes through pylance (they use the manifest's field ids
    # and column indices, which differ from 2.0: structs and lists have no column).
    tables_equal(theirs.to_table(columns=["st", "vec"]), table.select(["st", "vec"]))
    tables_equal(theirs.to_table(columns=["ls"]), table.select(["ls"]))
    idx = [2499, 0, 1000, 999, 1234]
    tables_equal(theirs.take(idx), table.take(idx))
    assert theirs.to_table(filter="id >= 2490").num_rows == 10


@pytest.mark.parametrize("given", ["2.1", "2.2"])
def test_manifest_fields_and_column_indices_match_pylance(tmp_path, given):
    """Each data file's ``fields`` / ``column_indices`` as pylance would write them."""
    table = _t(0, 300)
    ours, theirs = str(tmp_path / "ours"), str(tmp_path / "theirs")
    lancelet.write_dataset(table, ours, data_storage_version=given)
    lance.write_dataset(table, theirs, data_storage_version=given)

    def files(uri):
        return [(f.fields, f.column_indices, f.file_major_version, f.file_minor_version)
                for frag in lance.dataset(uri).get_fragments() for f in frag.metadata.files]

    assert files(ours) == files(theirs)


@pytest.mark.parametrize("given", ["2.1", "2.2"])
def test_lancelet_append_keeps_the_version(tmp_path, given):
    version, footer = VERSIONS[given]
    uri = str(tmp_path / "d.lance")
    lancelet.write_dataset(_t(0, 500), uri, data_storage_version=given)
    ds = lancelet.write_dataset(_t(500, 800), uri, mode="append")
    assert ds.data_storage_version == version
    ds = lancelet.write_dataset(_t(800, 900), uri, mode="append", data_storage_version=given)
    assert ds.data_storage_version == version
    assert len(ds.get_fragments()) == 3
    assert _all_footers(uri) == {footer}
    _check(uri, _by_id(_t(0, 900)), version)


def test_pylance_appends_to_a_lancelet_v22_dataset(tmp_path):
    uri = str(tmp_path / "d.lance")
    lancelet.write_dataset(_t(0, 400), uri, data_storage_version="2.2")
    lance.write_dataset(_t(400, 700), uri, mode="append")
    _check(uri, _by_id(_t(0, 700)), "2.2")
    # and lancelet appends after pylance
    lancelet.write_dataset(_t(700, 750), uri, mode="append")
    _check(uri, _by_id(_t(0, 750)), "2.2")


@pytest.mark.parametrize("given", ["2.1", "2.2"])
def test_lancelet_appends_to_a_pylance_dataset(tmp_path, given):
    uri = str(tmp_path / "d.lance")
    lance.write_dataset(_t(0, 400), uri, data_storage_version=given)
    lancelet.write_dataset(_t(400, 600), uri, mode="append")
    _check(uri, _by_id(_t(0, 600)), given)


def test_overwrite_keeps_history_readable(tmp_path):
    uri = str(tmp_path / "d.lance")
    lancelet.write_dataset(_t(0, 100), uri, data_storage_version="2.2")
    lancelet.write_dataset(_t(100, 250), uri, mode="overwrite", data_storage_version="2.2")
    _check(uri, _by_id(_t(100, 250)), "2.2")
    assert _by_id(lance.dataset(uri, version=1).to_table()) == _by_id(_t(0, 100))


@pytest.mark.parametrize("first", ["2.0", "2.1", "2.2"])
def test_overwrite_without_a_version_keeps_the_datasets_version(tmp_path, first):
    """As pylance 14: an overwrite that names no version writes the dataset's version;
    naming one switches to it."""
    uri = str(tmp_path / "d.lance")

    def t(lo, hi):  # no null structs: 2.0 cannot store them
        return _t(lo, hi).select(["id", "s", "price", "tags", "vec"])

    lancelet.write_dataset(t(0, 100), uri, data_storage_version=first)
    ds = lancelet.write_dataset(t(100, 150), uri, mode="overwrite")
    assert ds.data_storage_version == first
    assert lance.dataset(uri).data_storage_version == first
    assert _by_id(lance.dataset(uri).to_table()) == _by_id(t(100, 150))
    ds = lancelet.write_dataset(t(150, 160), uri, mode="overwrite", data_storage_version="2.2")
    assert ds.data_storage_version == "2.2"
    _check(uri, _by_id(t(150, 160)), "2.2")


@pytest.mark.parametrize("given", ["2.1", "2.2"])
def test_write_fragments_and_commit(tmp_path, given):
    """Fragments written apart (no version named: the dataset's) and committed as an append."""
    uri = str(tmp_path / "d.lance")
    lancelet.write_dataset(_t(0, 100), uri, data_storage_version=given)
    frags = lancelet.fragment.write_fragments(_t(100, 250), uri, max_rows_per_file=100)
    assert len(frags) == 2
    lancelet.LanceDataset.commit(uri, lancelet.LanceOperation.Append(frags), read_version=1)
    _check(uri, _by_id(_t(0, 250)), given)
    frags = lancelet.fragment.write_fragments(_t(250, 260), uri, data_storage_version=given)
    lancelet.LanceDataset.commit(uri, lancelet.LanceOperation.Append(frags), read_version=2)
    _check(uri, _by_id(_t(0, 260)), given)


# --------------------------------------------------------------------------------------
# Operations on a 2.2 dataset: lancelet writes, pylance reads
# --------------------------------------------------------------------------------------


@pytest.fixture
def v22(tmp_path) -> str:
    """A lancelet 2.2 dataset of three fragments of 400 rows."""
    uri = str(tmp_path / "d.lance")
    lancelet.write_dataset(_t(0, 1200), uri, data_storage_version="2.2", max_rows_per_file=400)
    return uri


def test_delete_on_v22(v22):
    lancelet.dataset(v22).delete("id % 7 = 3 OR st IS NULL")
    expected = [r for r in _by_id(_t(0, 1200)) if not (r["id"] % 7 == 3 or r["st"] is None)]
    _check(v22, expected, "2.2")


def test_update_on_v22(v22):
    ds = lancelet.dataset(v22)
    res = ds.update({"price": "-1.0", "s": "upper(s)"}, where="id >= 150 AND id < 450")
    assert res["num_rows_updated"] == 300
    expected = _by_id(_t(0, 1200))
    for r in expected:
        if 150 <= r["id"] < 450:
            r["price"] = -1.0
            r["s"] = None if r["s"] is None else r["s"].upper()
    _check(v22, expected, "2.2")
    assert _all_footers(v22) == {(2, 2)}


def test_merge_insert_on_v22(v22):
    ds = lancelet.dataset(v22)
    source = _t(1100, 1300).set_column(1, "s", pa.array([f"new-{i}" for i in range(1100, 1300)]))
    res = ds.merge_insert("id").when_matched_update_all().when_not_matched_insert_all().execute(source)
    assert res["num_updated_rows"] == 100 and res["num_inserted_rows"] == 100
    expected = [r for r in _by_id(_t(0, 1100))] + _by_id(source)
    _check(v22, expected, "2.2")
    assert _all_footers(v22) == {(2, 2)}


def test_add_columns_on_v22(v22):
    ds = lancelet.dataset(v22)
    ds.add_columns({"double": "id * 2"})
    ds.add_columns(lambda b: pa.record_batch({"upper": pa.array([None if x is None else x.upper() for x in b["s"].to_pylist()], pa.string())}),
                   read_columns=["s"])
    ds.add_columns(pa.field("empty", pa.float32()))
    expected = _by_id(_t(0, 1200))
    for r in expected:
        r["double"] = r["id"] * 2
        r["upper"] = None if r["s"] is None else r["s"].upper()
        r["empty"] = None
    _check(v22, expected, "2.2")
    assert _all_footers(v22) == {(2, 2)}


def test_merge_columns_on_v22(v22):
    ds = lancelet.dataset(v22)
    other = pa.table({"id": pa.array(range(0, 1200, 2), pa.int64()),
                      "extra": pa.array([{"a": i, "b": "e"} for i in range(0, 1200, 2)], _AB)})
    ds.merge(other, "id")
    expected = _by_id(_t(0, 1200))
    for r in expected:
        r["extra"] = {"a": r["id"], "b": "e"} if r["id"] % 2 == 0 else None
    _check(v22, expected, "2.2")


def test_compaction_on_v22(tmp_path):
    uri = str(tmp_path / "d.lance")
    lancelet.write_dataset(_t(0, 50), uri, data_storage_version="2.2")
    for k in range(1, 12):
        lancelet.write_dataset(_t(k * 50, (k + 1) * 50), uri, mode="append")
    ds = lancelet.dataset(uri)
    ds.delete("id % 10 = 3")
    m = ds.optimize.compact_files(target_rows_per_fragment=1000)
    assert m.fragments_removed == 12 and m.fragments_added == 1
    expected = [r for r in _by_id(_t(0, 600)) if r["id"] % 10 != 3]
    _check(uri, expected, "2.2")
    # Rows keep their order through compaction.
    assert lance.dataset(uri).to_table()["id"].to_pylist() == [r["id"] for r in expected]


def test_pylance_operations_on_a_lancelet_v22_dataset(v22):
    """pylance deletes, updates and compacts a lancelet 2.2 dataset; lancelet reads it."""
    theirs = lance.dataset(v22)
    theirs.delete("id < 100")
    theirs.update({"price": "0.0"}, where="id >= 1100")
    theirs.optimize.compact_files(target_rows_per_fragment=10_000)
    expected = [dict(r, price=0.0) if r["id"] >= 1100 else r for r in _by_id(_t(100, 1200))]
    _check(v22, expected, "2.2")


# --------------------------------------------------------------------------------------
# The default
# --------------------------------------------------------------------------------------


def test_new_datasets_default_to_2_2(tmp_path):
    # requires the 2.2 default
    uri = str(tmp_path / "d.lance")
    ds = lancelet.write_dataset(_t(0, 100), uri)
    assert ds.data_storage_version == "2.2"
    assert lance.dataset(uri).data_storage_version == "2.2"
    assert _all_footers(uri) == {(2, 2)}
