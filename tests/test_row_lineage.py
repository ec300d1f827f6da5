"""Stable row ids, row versions and the change data feed, against pylance 14 as oracle.

Every history is run twice, once by pylance and once by lancelet, from the same input;
the two datasets must agree row for row on ``_rowid``, ``_row_created_at_version`` and
``_row_last_updated_at_version``, and each library must read the other's dataset the same.
"""

from __future__ import annotations

import threading

import lance
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import lancelet
from lancelet.errors import UnsupportedFeatureError
from _tables import id_strings

LINEAGE = ["_row_created_at_version", "_row_last_updated_at_version"]


def _table(ids, tag="s"):
    """Special table: ``v`` carries a tag telling which write or merge gave the row."""
    return id_strings(ids, column="v", fmt=tag + "{}")


def _view(ds):
    """Every live row with its lineage, ordered by row id."""
    t = ds.to_table(columns=["id", "v", *LINEAGE], with_row_id=True)
    return t.sort_by("_rowid").to_pydict()


def _history(mod, uri):
    """Create (3 fragments), append, delete, update, merge-insert, add a column, compact."""
    mod.write_dataset(_table(range(10)), uri, enable_stable_row_ids=True, max_rows_per_file=4,
                      data_storage_version="2.0")
    mod.write_dataset(_table([100, 101], "x"), uri, mode="append")
    mod.dataset(uri).delete("id = 2")
    mod.dataset(uri).update({"v": "'upd'"}, where="id = 5 OR id = 100")
    (mod.dataset(uri).merge_insert("id").when_matched_update_all().when_not_matched_insert_all()
     .execute(_table([1, 4, 7, 200], "m")))
    mod.dataset(uri).add_columns({"w": "id * 2"})
    mod.dataset(uri).optimize.compact_files(target_rows_per_fragment=100)
    return mod.dataset(uri)


@pytest.fixture(scope="module")
def histories(tmp_path_factory):
    root = tmp_path_factory.mktemp("lineage")
    out = {}
    for name, mod in (("pylance", lance), ("lancelet", lancelet)):
        _history(mod, str(root / name))
        out[name] = str(root / name)
    return out


def test_flag_and_next_row_id_are_recorded(tmp_path):
    ds = lancelet.write_dataset(_table(range(5)), tmp_path / "d", enable_stable_row_ids=True)
    assert ds.has_stable_row_ids
    assert lance.dataset(str(tmp_path / "d")).has_stable_row_ids
    plain = lancelet.write_dataset(_table(range(5)), tmp_path / "p")
    assert not plain.has_stable_row_ids
    # Appends continue the ids; an overwrite keeps the flag and does not reuse ids (pylance).
    lancelet.write_dataset(_table(range(3)), tmp_path / "d", mode="append")
    ds = lancelet.write_dataset(_table(range(2)), tmp_path / "d", mode="overwrite")
    assert ds.has_stable_row_ids
    assert ds.to_table(with_row_id=True)["_rowid"].to_pylist() == [8, 9]
    assert lance.dataset(str(tmp_path / "d")).to_table(with_row_id=True)["_rowid"].to_pylist() == [8, 9]


@pytest.mark.parametrize("version", range(1, 8))
def test_every_version_matches_pylance(histories, version):
    theirs = lance.dataset(histories["pylance"], version=version)
    ours = lancelet.dataset(histories["lancelet"], version=version)
    expected = _view(theirs)
    assert _view(ours) == expected
    # Each library reads the other's dataset the same way.
    assert _view(lancelet.dataset(histories["pylance"], version=version)) == expected
    assert _view(lance.dataset(histories["lancelet"], version=version)) == expected


def test_ids_survive_update_merge_and_compaction(histories):
    ds = lancelet.dataset(histories["lancelet"])
    rows = _view(ds)
    by_id = dict(zip(rows["id"], rows["_rowid"]))
    # Original ids kept through update (5), merge-insert update (1, 4, 7), compaction.
    assert [by_id[k] for k in (0, 1, 4, 5, 7, 100)] == [0, 1, 4, 5, 7, 10]
    assert by_id[200] == 12  # inserted by the merge: the next id
    assert 2 not in by_id
    assert len(ds.get_fragments()) == 1  # compacted


@pytest.mark.parametrize("name", ["pylance", "lancelet"])
def test_take_by_row_id(histories, name):
    ours = lancelet.dataset(histories[name])
    theirs = lance.dataset(histories[name])
    ids = [5, 0, 999, 12, 2, 5]  # 999 never existed, 2 was deleted: skipped; 5 repeated
    assert ours._take_rows(ids).to_pydict() == theirs._take_rows(ids).to_pydict()
    got = ours._take_rows([12, 1], columns=["id", "_rowid", "_row_created_at_version"]).to_pydict()
    assert got == {"id": [200, 1], "_rowid": [12, 1], "_row_created_at_version": [5, 1]}
    # Old versions resolve ids against their own rows.
    old = lancelet.dataset(histories[name], version=2)
    assert old._take_rows([2, 11]).to_pydict() == lance.dataset(histories[name], version=2)._take_rows([2, 11]).to_pydict()


def test_filters_and_projections_on_lineage_columns(histories):
    ours = lancelet.dataset(histories["lancelet"])
    theirs = lance.dataset(histories["lancelet"])
    for flt in ["_row_last_updated_at_version > 4", "_row_created_at_version = 2", "_rowid >= 10",
                "_row_created_at_version < _row_last_updated_at_version AND id > 3"]:
        a = ours.to_table(columns=["id"], filter=flt).sort_by("id")
        b = theirs.to_table(columns=["id"], filter=flt).sort_by("id")
        assert a == b, flt
        assert ours.count_rows(flt) == theirs.count_rows(flt), flt
    # Named among stored columns, in the order asked, as pylance does.
    cols = ["_row_created_at_version", "id", "_rowid"]
    assert ours.to_table(columns=cols).schema.names == theirs.to_table(columns=cols).schema.names == cols
    assert ours.to_table(columns=cols).sort_by("_rowid") == theirs.to_table(columns=cols).sort_by("_rowid")
    # Expressions may use them too (pylance refuses that; lancelet allows it).
    t = ours.to_table(columns={"age": "_row_last_updated_at_version - _row_created_at_version", "id": "id"})
    assert set(t["age"].to_pylist()) <= {0, 1, 2, 3, 4, 5, 6}


@pytest.mark.parametrize("begin,end", [(1, 2), (1, 7), (2, 5), (3, 4), (5, 7), (6, 7), (0, 3)])
def test_delta_matches_pylance(histories, begin, end):
    for name in ("pylance", "lancelet"):
        ours = lancelet.dataset(histories[name]).delta(begin_version=begin, end_version=end)
        theirs = lance.dataset(histories[name]).delta(begin_version=begin, end_version=end)
        for method in ("get_inserted_rows", "get_updated_rows"):
            a = getattr(ours, method)().read_all()
            b = getattr(theirs, method)().read_all()
            assert a.schema.names == b.schema.names, method
            assert a.sort_by("_rowid") == b.sort_by("_rowid"), (name, method)
        if begin > 0:
            a = ours.get_deleted_row_ids().read_all().sort_by("_rowid")
            b = theirs.get_deleted_row_ids().read_all().sort_by("_rowid")
            assert a == b, name
    delta = lancelet.dataset(histories["lancelet"], version=end).delta(compared_against=begin)
    assert [v["version"] for v in delta.list_transactions()] == list(range(begin + 1, end + 1))


def test_changes_convenience(histories):
    ds = lancelet.dataset(histories["lancelet"])
    ch = ds.checkout_version(4).changes(2)
    assert ch["inserted"].num_rows == 0
    assert sorted(ch["updated"]["id"].to_pylist()) == [5, 100]
    assert ch["deleted"]["_rowid"].to_pylist() == [2]
    # Rows are read from the version changes() is called on; versions only bound the
    # ranges: at the latest version every row was last updated by add_columns (6).
    assert ds.changes(2, end_version=4)["updated"].num_rows == 0
    ch = ds.changes(4, columns=["id"])
    assert ch["inserted"].schema.names == ["id", "_rowid", *LINEAGE]
    assert ch["inserted"]["id"].to_pylist() == [200]


def test_without_stable_row_ids(tmp_path):
    uri = str(tmp_path / "plain")
    lancelet.write_dataset(_table(range(4)), uri)
    lancelet.write_dataset(_table(range(4)), uri, mode="append")
    ds = lancelet.dataset(uri)
    # Like pylance: no recorded versions read as 1; _rowid is the address.
    t = ds.to_table(columns=["id", *LINEAGE], with_row_id=True, with_row_address=True)
    assert t == lance.dataset(uri).to_table(columns=["id", *LINEAGE], with_row_id=True, with_row_address=True)
    assert t["_rowid"] == t["_rowaddr"]
    assert ds._take_rows([1 << 32, 1]).to_pydict() == lance.dataset(uri)._take_rows([1 << 32, 1]).to_pydict()
    d = ds.delta(begin_version=1, end_version=2)
    assert d.get_inserted_rows().read_all().num_rows == 0
    with pytest.raises(UnsupportedFeatureError, match="stable row ids"):
        d.get_deleted_row_ids()
    with pytest.raises(UnsupportedFeatureError, match="stable row ids"):
        ds.changes(1)


def test_bad_delta_arguments(histories):
    ds = lancelet.dataset(histories["lancelet"])
    with pytest.raises(ValueError):
        ds.delta()
    with pytest.raises(ValueError):
        ds.delta(1, begin_version=1, end_version=2)
    with pytest.raises(lancelet.errors.InvalidArgumentError):
        ds.delta(begin_version=-1, end_version=2)
    with pytest.raises(lancelet.errors.InvalidArgumentError):
        ds.changes(99)
    with pytest.raises(UnsupportedFeatureError, match="write_dataset"):
        lancelet.LanceDataset.commit(histories["lancelet"], lancelet.LanceOperation.Append([]), read_version=1,
                                     enable_stable_row_ids=True)


def test_concurrent_appends_get_distinct_ids(tmp_path):
    """Row ids are assigned at commit: writers racing from the same version are rebased
    onto each other's next_row_id, so no id is handed out twice."""
    uri = str(tmp_path / "race")
    lancelet.write_dataset(_table(range(3)), uri, enable_stable_row_ids=True)
    errors = []

    def append(k):
        try:
            lancelet.write_dataset(_table(range(1000 * k, 1000 * k + 50)), uri, mode="append")
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=append, args=(k,)) for k in range(1, 7)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    ids = lancelet.dataset(uri).to_table(with_row_id=True)["_rowid"].to_pylist()
    assert sorted(ids) == list(range(3 + 6 * 50))
    assert sorted(lance.dataset(uri).to_table(with_row_id=True)["_rowid"].to_pylist()) == sorted(ids)


def test_lancelet_continues_a_pylance_dataset(tmp_path):
    uri = str(tmp_path / "p")
    lance.write_dataset(_table(range(6)), uri, enable_stable_row_ids=True, max_rows_per_file=2,
                        data_storage_version="2.0")
    lance.dataset(uri).update({"v": "'p'"}, where="id = 1")
    ds = lancelet.dataset(uri)
    ds.update({"v": "'l'"}, where="id = 1 OR id = 4")
    lancelet.write_dataset(_table([50]), uri, mode="append")
    lancelet.dataset(uri).optimize.compact_files()
    lance.dataset(uri).update({"v": "'p2'"}, where="id = 50")
    assert _view(lancelet.dataset(uri)) == _view(lance.dataset(uri))
    rows = _view(lance.dataset(uri))
    assert rows["_rowid"] == [0, 1, 2, 3, 4, 5, 6]
    assert dict(zip(rows["id"], rows["_row_last_updated_at_version"])) == {0: 1, 1: 3, 2: 1, 3: 1, 4: 3, 5: 1, 50: 6}


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=st.lists(st.tuples(st.sampled_from(["append", "delete", "update", "merge", "compact"]),
                                st.integers(0, 40)), min_size=1, max_size=6))
def test_random_histories_keep_ids_stable(tmp_path_factory, steps):
    """Against a model: each logical row keeps the id it was given when inserted; a
    lookup by id always finds the row's current values."""
    uri = str(tmp_path_factory.mktemp("model") / "d")
    lancelet.write_dataset(_table(range(10)), uri, enable_stable_row_ids=True, max_rows_per_file=4)
    first = _view(lancelet.dataset(uri))
    model = {key: (rid, v) for key, rid, v in zip(first["id"], first["_rowid"], first["v"])}  # key -> (rowid, value)
    next_key = 1000
    for op, k in steps:
        ds = lancelet.dataset(uri)
        if op == "append":
            keys = list(range(next_key, next_key + k % 7 + 1))
            next_key += len(keys)
            lancelet.write_dataset(_table(keys), uri, mode="append")
            t = lancelet.dataset(uri).to_table(columns=["id", "v"], filter=f"id >= {keys[0]} AND id <= {keys[-1]}", with_row_id=True)
            for key, rid, v in zip(t["id"].to_pylist(), t["_rowid"].to_pylist(), t["v"].to_pylist()):
                assert all(rid != r for r, _ in model.values())
                model[key] = (rid, v)
        elif op == "delete" and model:
            key = sorted(model)[k % len(model)]
            ds.delete(f"id = {key}")
            del model[key]
        elif op == "update" and model:
            key = sorted(model)[k % len(model)]
            ds.update({"v": f"'u{k}'"}, where=f"id = {key}")
            model[key] = (model[key][0], f"u{k}")
        elif op == "merge" and model:
            key = sorted(model)[k % len(model)]
            ds.merge_insert("id").when_matched_update_all().when_not_matched_insert_all().execute(
                pa.table({"id": pa.array([key, next_key], pa.int64()), "v": [f"m{k}", f"m{k}"]}))
            model[key] = (model[key][0], f"m{k}")
            t = lancelet.dataset(uri).to_table(filter=f"id = {next_key}", with_row_id=True)
            model[next_key] = (t["_rowid"][0].as_py(), f"m{k}")
            next_key += 1
        elif op == "compact":
            ds.optimize.compact_files(target_rows_per_fragment=1000)
        ds = lancelet.dataset(uri)
        view = _view(ds)
        assert {key: (rid, v) for key, rid, v in zip(view["id"], view["_rowid"], view["v"])} == model
        if model:
            ids = [rid for rid, _ in model.values()]
            got = ds._take_rows(ids, columns=["id", "v"]).to_pydict()
            assert got["v"] == [v for _, v in model.values()]
    assert _view(lance.dataset(uri)) == _view(lancelet.dataset(uri))


def test_fragment_metadata_and_distributed_appends(tmp_path, histories):
    """Fragment metadata carries the lineage in pylance's JSON form; fragments written apart
    and committed later get their ids at commit, whatever ids they claim."""
    ours = [f.metadata.to_json() for f in lancelet.dataset(histories["pylance"]).get_fragments()]
    theirs = [f.metadata.to_json() for f in lance.dataset(histories["pylance"]).get_fragments()]
    for key in ("row_id_meta", "created_at_version_meta", "last_updated_at_version_meta"):
        assert [o[key] for o in ours] == [t[key] for t in theirs]
    uri = str(tmp_path / "d")
    lancelet.write_dataset(_table(range(4)), uri, enable_stable_row_ids=True)
    frags = lancelet.fragment.write_fragments(_table(range(10, 13)), uri)
    claimed = frags[0].to_json()
    claimed["row_id_meta"] = ours[0]["row_id_meta"]  # nonsense ids: replaced at commit
    op = lancelet.LanceOperation.Append([lancelet.FragmentMetadata.from_json(claimed)])
    ds = lancelet.LanceDataset.commit(uri, op, read_version=1)
    assert ds.to_table(with_row_id=True)["_rowid"].to_pylist() == list(range(7))
    assert _view(lance.dataset(uri))["_row_created_at_version"] == [1, 1, 1, 1, 2, 2, 2]
