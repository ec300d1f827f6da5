"""``update``: the same rows as pylance 14, an Update transaction both read, conflicts
with concurrent deletes, and clear errors that commit nothing."""

from __future__ import annotations

import os

import pyarrow as pa
import pytest

import lancelet

lance = pytest.importorskip("lance")


def _t(lo: int, hi: int) -> pa.Table:
    return pa.table({
        "id": pa.array(range(lo, hi), pa.int32()),
        "price": pa.array([None if i % 9 == 0 else i * 1.5 for i in range(lo, hi)], pa.float64()),
        "color": [["red", "blue", "green"][i % 3] for i in range(lo, hi)],
        "tags": [[f"t{i % 4}"] for i in range(lo, hi)],
    })


def _sorted(t: pa.Table) -> list:
    return sorted(t.to_pylist(), key=lambda r: r["id"])


CASES = [
    ({"price": "price * 2"}, "color = 'red'"),
    ({"id": "id + 10000", "color": "upper(color)"}, "id % 5 = 1"),
    ({"price": "coalesce(price, 0.0)"}, None),
    ({"color": "'gone'"}, "price IS NULL"),
    ({"price": "price + 1"}, "id < 0"),  # matches nothing
]


@pytest.mark.parametrize("updates,where", CASES)
def test_update_matches_pylance(tmp_path, updates, where):
    out = {}
    for lib in (lance, lancelet):
        uri = str(tmp_path / lib.__name__)
        ds = lib.write_dataset(_t(0, 900), uri, max_rows_per_file=300, data_storage_version="2.0")
        ds.delete("id % 11 = 0")
        res = ds.update(updates, where=where)
        # pylance commits an empty version when nothing matches; lancelet commits nothing.
        version = lib.dataset(uri).version if res["num_rows_updated"] else None
        out[lib.__name__] = (res["num_rows_updated"], _sorted(lib.dataset(uri).to_table()), version)
    assert out["lancelet"] == out["lance"]


def test_pylance_reads_lancelet_updates_and_back(tmp_path):
    uri = str(tmp_path / "d.lance")
    ds = lancelet.write_dataset(_t(0, 600), uri, max_rows_per_file=200)
    ds.update({"price": "-1.0"}, where="id >= 150 AND id < 450")
    ours = _sorted(ds.to_table())
    assert _sorted(lance.dataset(uri).to_table()) == ours
    lance.dataset(uri).validate()
    assert len([r for r in ours if r["price"] == -1.0]) == 300
    assert lancelet.dataset(uri, version=1).to_table().equals(_t(0, 600))  # time travel
    lance.dataset(uri).update({"color": "'x'"}, where="id < 10")
    assert _sorted(lancelet.dataset(uri).to_table()) == _sorted(lance.dataset(uri).to_table())


def test_pylance_2_2_updates_read_in_lancelet_and_lancelet_updates_them(tmp_path):
    uri = str(tmp_path / "p.lance")
    lance.write_dataset(_t(0, 100), uri).update({"price": "price + 1"}, where="id < 50")
    assert _sorted(lancelet.dataset(uri).to_table()) == _sorted(lance.dataset(uri).to_table())
    lancelet.dataset(uri).update({"price": "0.0"}, where="id >= 90")
    assert lancelet.dataset(uri).version == 3
    assert lance.dataset(uri).data_storage_version == "2.2"
    assert _sorted(lancelet.dataset(uri).to_table()) == _sorted(lance.dataset(uri).to_table())


def test_an_update_conflicts_with_a_concurrent_delete_of_its_rows(tmp_path):
    uri = str(tmp_path / "d.lance")
    lancelet.write_dataset(_t(0, 300), uri, max_rows_per_file=100)
    stale = lancelet.dataset(uri)
    lancelet.dataset(uri).delete("id = 5")
    files = sorted(os.listdir(os.path.join(uri, "data")))
    with pytest.raises(lancelet.CommitConflictError):
        stale.update({"price": "0.0"}, where="id < 10", conflict_retries=0)
    assert sorted(os.listdir(os.path.join(uri, "data"))) == files, "its new fragment is removed"
    # By default (as in pylance) it runs again on the latest version instead.
    assert stale.update({"price": "0.0"}, where="id < 10")["num_rows_updated"] == 9
    assert stale.version == 3 and lancelet.dataset(uri).count_rows(filter="price = 0.0") == 9
    # Another fragment's rows, and appends, do not conflict.
    stale = lancelet.dataset(uri)
    lancelet.write_dataset(_t(300, 310), uri, mode="append")
    lancelet.dataset(uri).delete("id = 150")
    assert stale.update({"price": "0.0"}, where="id >= 250")["num_rows_updated"] == 50
    t = lancelet.dataset(uri).to_table()
    assert t.num_rows == 300 + 10 - 2
    assert [r["price"] for r in t.to_pylist() if 250 <= r["id"] < 300] == [0.0] * 50


def test_bad_updates_commit_nothing(tmp_path):
    uri = str(tmp_path / "d.lance")
    ds = lancelet.write_dataset(_t(0, 100), uri)
    for updates, where, err in [
        ({"nope": "1"}, None, lancelet.InvalidArgumentError),
        ({"price": "nope + 1"}, None, ValueError),
        ({"id": "id * 100000000000"}, None, lancelet.InvalidArgumentError),  # overflows int32
        ({}, None, lancelet.InvalidArgumentError),
        ({"price": "1.0"}, "nope > 1", ValueError),
        ({"price": 1.0}, None, lancelet.InvalidArgumentError),
    ]:
        with pytest.raises(err):
            ds.update(updates, where=where)
    assert lancelet.dataset(uri).version == 1 and ds.version == 1
    assert os.listdir(os.path.join(uri, "data")) == [f.data_files()[0].path for f in ds.get_fragments()]


def test_update_every_row_and_types_are_kept(tmp_path):
    uri = str(tmp_path / "d.lance")
    ds = lancelet.write_dataset(_t(0, 50), uri)
    assert ds.update({"id": "id + 1"})["num_rows_updated"] == 50
    t = ds.to_table()
    assert t.schema == _t(0, 1).schema
    assert sorted(t["id"].to_pylist()) == list(range(1, 51))
    assert len(ds.get_fragments()) == 1, "the old fragment, wholly replaced, is dropped"
