"""``merge_insert``: upserts by key with pylance 14's results (counts and rows), one Update
transaction both libraries read, conflicts and clear errors."""

from __future__ import annotations

import json
import os
import random
import uuid

import pyarrow as pa
import pytest

import lancelet

lance = pytest.importorskip("lance")


def _t(ids, tag: str) -> pa.Table:
    ids = list(ids)
    return pa.table({"id": pa.array(ids, pa.int64()), "k2": pa.array([i % 3 for i in ids], pa.int32()),
                     "v": [f"{tag}{i}" for i in ids]})


def _rows(lib, uri):
    return sorted(lib.dataset(uri).to_table().to_pylist(), key=lambda r: (r["id"], r["v"]))


def _merge(ds, on, update, insert, delete, expr, source):
    b = ds.merge_insert(on)
    if update:
        b = b.when_matched_update_all()
    if insert:
        b = b.when_not_matched_insert_all()
    if delete:
        b = b.when_not_matched_by_source_delete(expr)
    return b.execute(source)


FLAGS = [(u, i, d) for u in (True, False) for i in (True, False) for d in (True, False) if u or i or d]


@pytest.mark.parametrize("update,insert,delete", FLAGS)
@pytest.mark.parametrize("on", ["id", ["id", "k2"]])
def test_merge_insert_matches_pylance(tmp_path, update, insert, delete, on):
    rng = random.Random(hash((update, insert, delete, str(on))) & 0xFFFF)
    source = _t(sorted(rng.sample(range(0, 400), 120)), "new")
    out = {}
    for lib in (lance, lancelet):
        uri = str(tmp_path / lib.__name__)
        ds = lib.write_dataset(_t(range(0, 300), "old"), uri, max_rows_per_file=70, data_storage_version="2.0")
        ds.delete("id % 13 = 0")
        res = _merge(ds, on, update, insert, delete, "id < 200" if delete else None, source)
        out[lib.__name__] = (res, _rows(lib, uri))
    assert out["lancelet"] == out["lance"]


def test_pylance_reads_lancelet_merges_and_back(tmp_path):
    uri = str(tmp_path / "d.lance")
    ds = lancelet.write_dataset(_t(range(100), "old"), uri, max_rows_per_file=30)
    ds.merge_insert("id").when_matched_update_all().when_not_matched_insert_all().execute(_t(range(90, 120), "x"))
    assert _rows(lance, uri) == _rows(lancelet, uri)
    lance.dataset(uri).validate()
    lance.dataset(uri).merge_insert("id").when_matched_update_all().execute(_t(range(0, 5), "y"))
    assert _rows(lancelet, uri) == _rows(lance, uri)
    assert lancelet.dataset(uri, version=1).to_table().equals(_t(range(100), "old"))


def test_nothing_to_do_commits_nothing(tmp_path):
    uri = str(tmp_path / "d.lance")
    ds = lancelet.write_dataset(_t(range(10), "old"), uri)
    res = ds.merge_insert("id").when_matched_update_all().execute(_t(range(50, 60), "x"))
    assert res == {"num_inserted_rows": 0, "num_updated_rows": 0, "num_deleted_rows": 0}
    assert ds.version == 1


def test_errors_commit_nothing(tmp_path):
    uri = str(tmp_path / "d.lance")
    ds = lancelet.write_dataset(_t(range(10), "old"), uri)
    files = sorted(os.listdir(os.path.join(uri, "data")))
    with pytest.raises(lancelet.InvalidArgumentError, match="ambiguous"):
        ds.merge_insert("id").when_matched_update_all().execute(_t([3, 3], "dup"))
    with pytest.raises(lancelet.InvalidArgumentError):
        ds.merge_insert("nope")
    with pytest.raises(lancelet.InvalidArgumentError):
        ds.merge_insert([])
    with pytest.raises(lancelet.SchemaMismatchError):
        ds.merge_insert("id").when_not_matched_insert_all().execute(pa.table({"v": ["x"]}))
    with pytest.raises(lancelet.SchemaMismatchError):
        ds.merge_insert("id").when_not_matched_insert_all().execute(
            pa.table({"id": pa.array([99], pa.int64()), "other": [1]}))
    with pytest.raises(lancelet.InvalidArgumentError, match="no column"):
        ds.merge_insert("id").when_matched_update_all("target.nope != source.v").execute(_t([3], "x"))
    assert ds.version == 1 and sorted(os.listdir(os.path.join(uri, "data"))) == files


def test_a_merge_conflicts_with_a_concurrent_delete_of_its_rows(tmp_path):
    uri = str(tmp_path / "d.lance")
    lancelet.write_dataset(_t(range(100), "old"), uri, max_rows_per_file=50)
    stale = lancelet.dataset(uri)
    lancelet.dataset(uri).delete("id = 3")
    files = sorted(os.listdir(os.path.join(uri, "data")))
    with pytest.raises(lancelet.CommitConflictError):
        stale.merge_insert("id").when_matched_update_all().conflict_retries(0).execute(_t(range(0, 10), "x"))
    assert sorted(os.listdir(os.path.join(uri, "data"))) == files
    # Inserts only, or rows of another fragment: no conflict.
    stale = lancelet.dataset(uri)
    lancelet.dataset(uri).delete("id = 4")
    res = stale.merge_insert("id").when_matched_update_all().when_not_matched_insert_all() \
        .execute(_t(range(95, 105), "y"))
    assert res == {"num_inserted_rows": 5, "num_updated_rows": 5, "num_deleted_rows": 0}
    assert lancelet.dataset(uri).count_rows() == 100 - 2 + 5


def test_merge_insert_on_a_memory_dataset():
    uri = f"memory://{uuid.uuid4().hex}/d.lance"
    ds = lancelet.write_dataset(_t(range(20), "old"), uri, max_rows_per_file=8)
    ds.merge_insert("id").when_matched_update_all().when_not_matched_insert_all().execute(_t(range(15, 25), "x"))
    rows = _rows(lancelet, uri)
    assert [r["id"] for r in rows] == list(range(25))
    assert [r["v"] for r in rows][15:] == [f"x{i}" for i in range(15, 25)]


# ---- when_matched_update_all(condition=...) -------------------------------------------

_COND_TARGET = pa.table({"id": [1, 2, 3, 4], "v": [10, 20, 30, None], "s": ["a", "b", "c", "d"]})
_COND_SOURCE = pa.table({"id": [2, 3, 4, 5], "v": [25, 5, 40, 50], "s": ["B", "C", "D", "E"]})
CONDITIONS = [
    "source.v > target.v", "target.v < 25", "source.v > 20", "target.v IS NULL",
    "source.s = 'C' OR target.v IS NULL", "target.v > 100", "TARGET.v > 1", "target.V > 1",
    "target.v + 1 > source.v", "1 = 1", "target.s LIKE 'b%'", "target.id = 2", "NULL",
    "target.`v` > 1", "`target`.v > 1",
]


def _conditional(lib, uri, condition, insert=True, source=_COND_SOURCE, delete=None):
    ds = lib.write_dataset(_COND_TARGET, uri, max_rows_per_file=2, data_storage_version="2.0")
    b = ds.merge_insert("id").when_matched_update_all(condition=condition)
    if insert:
        b = b.when_not_matched_insert_all()
    if delete:
        b = b.when_not_matched_by_source_delete(delete)
    res = b.execute(source)
    # Versions are not compared: pylance commits a version even when nothing changed,
    # lancelet does not (see test_nothing_to_do_commits_nothing).
    return res, sorted(lib.dataset(uri).to_table().to_pylist(), key=lambda r: r["id"])


@pytest.mark.parametrize("insert", [True, False])
@pytest.mark.parametrize("condition", CONDITIONS)
def test_update_condition_matches_pylance(tmp_path, condition, insert):
    want = _conditional(lance, str(tmp_path / "p"), condition, insert)
    assert _conditional(lancelet, str(tmp_path / "l"), condition, insert) == want


def test_update_condition_with_deletes_and_partial_sources(tmp_path):
    # Matched rows the condition rejects are neither updated nor "not matched by source".
    for delete in ("true", "id > 3"):
        want = _conditional(lance, str(tmp_path / f"p{delete}"), "source.v > target.v", delete=delete)
        assert _conditional(lancelet, str(tmp_path / f"l{delete}"), "source.v > target.v", delete=delete) == want
    # A source without some columns: updated rows keep the target's values there.
    partial = _COND_SOURCE.drop_columns(["s"])
    want = _conditional(lance, str(tmp_path / "pp"), "source.v > target.v", source=partial)
    assert _conditional(lancelet, str(tmp_path / "lp"), "source.v > target.v", source=partial) == want


@pytest.mark.parametrize("condition,match", [
    ("v > 20", "both"), ("s = 'b'", "both"), ("source.nope > 1", "no column"),
    ("source.v", "boolean"), ("target.v", "boolean"), ("", "syntax"), ("source.v > target.v AND", "syntax"),
])
def test_bad_update_conditions_are_refused_like_pylance(tmp_path, condition, match):
    with pytest.raises(OSError):
        _conditional(lance, str(tmp_path / "p"), condition)
    uri = str(tmp_path / "l")
    with pytest.raises(lancelet.InvalidArgumentError, match=match):
        _conditional(lancelet, uri, condition)
    assert lancelet.dataset(uri).version == 1


def test_update_condition_on_a_stable_row_id_dataset_keeps_row_ids(tmp_path):
    uri = str(tmp_path / "d.lance")
    ds = lancelet.write_dataset(_COND_TARGET, uri, max_rows_per_file=2, enable_stable_row_ids=True)
    ids = dict(zip(*ds.to_table(with_row_id=True).select(["id", "_rowid"]).to_pydict().values()))
    res = ds.merge_insert("id").when_matched_update_all("source.v > target.v").execute(_COND_SOURCE)
    assert res == {"num_inserted_rows": 0, "num_updated_rows": 1, "num_deleted_rows": 0}
    after = ds.to_table(with_row_id=True).to_pylist()
    assert {r["id"]: r["_rowid"] for r in after} == ids
    assert [r["v"] for r in sorted(after, key=lambda r: r["id"])] == [10, 25, 30, None]


@pytest.mark.parametrize("stable", [False, True])
@pytest.mark.parametrize("condition", [None, "source.v != 'x2'"])
def test_a_source_row_updates_every_target_row_with_its_key(tmp_path, stable, condition):
    # Target keys repeat; a source row replaces each target row with its key, and each
    # keeps its own values of the columns the source lacks (and its row id), as in pylance.
    target = pa.table({"id": [1, 1, 2, 2, 2, 3], "v": ["a", "b", "c", "d", "e", "f"], "w": [10, 11, 12, 13, 14, 15]})
    source = pa.table({"id": [1, 2, 4], "v": ["x1", "x2", "x4"]})
    out = {}
    for lib in (lance, lancelet):
        uri = str(tmp_path / lib.__name__)
        ds = lib.write_dataset(target, uri, max_rows_per_file=4, enable_stable_row_ids=stable)
        before = ds.to_table(with_row_id=True).to_pylist()
        res = ds.merge_insert("id").when_matched_update_all(condition).when_not_matched_insert_all().execute(source)
        after = lib.dataset(uri).to_table(with_row_id=True).to_pylist()
        key = lambda r: (r["id"], r["w"] if r["w"] is not None else -1)  # noqa: E731
        rows = sorted(({k: r[k] for k in ("id", "v", "w")} for r in after), key=key)
        if stable:
            ids = {r["w"]: r["_rowid"] for r in before}
            assert all(ids[r["w"]] == r["_rowid"] for r in after if r["w"] in ids)
        out[lib.__name__] = (res, rows)
    assert out["lancelet"] == out["lance"]
    assert len(out["lancelet"][1]) == 7  # nothing lost: six target rows and one inserted


# --- when_matched_fail, execute_uncommitted, explain_plan / analyze_plan, retry_timeout, use_index


@pytest.mark.parametrize("matches", [False, True])
def test_when_matched_fail_matches_pylance(tmp_path, matches):
    """No match: the inserts land as in pylance. A match: both libraries raise, and nothing
    is committed or left behind."""
    source = _t([1, 2, 500] if matches else [500, 501], "new")
    out = {}
    for lib in (lance, lancelet):
        uri = str(tmp_path / lib.__name__)
        ds = lib.write_dataset(_t(range(0, 50), "old"), uri)
        files = sorted(os.listdir(os.path.join(uri, "data")))
        b = ds.merge_insert("id").when_matched_fail().when_not_matched_insert_all()
        if matches:
            with pytest.raises(Exception, match="Merge insert failed"):
                b.execute(source)
            with pytest.raises(Exception, match="Merge insert failed"):
                ds.merge_insert("id").when_matched_fail().execute_uncommitted(source)
            assert lib.dataset(uri).version == 1
            if lib is lancelet:  # pylance leaves the files of a failed merge behind
                assert sorted(os.listdir(os.path.join(uri, "data"))) == files
            out[lib.__name__] = _rows(lib, uri)
        else:
            out[lib.__name__] = (b.execute(source), _rows(lib, uri))
    assert out["lancelet"] == out["lance"]


def test_when_matched_update_all_after_fail_updates(tmp_path):
    uri = str(tmp_path / "d.lance")
    ds = lancelet.write_dataset(_t(range(10), "old"), uri)
    res = ds.merge_insert("id").when_matched_fail().when_matched_update_all().execute(_t([1, 2], "new"))
    assert res["num_updated_rows"] == 2


@pytest.mark.parametrize("writer,committer", [("lance", "lancelet"), ("lancelet", "lance"), ("lancelet", "lancelet")])
def test_execute_uncommitted_commits_later_in_either_library(tmp_path, writer, committer):
    """The transaction of an uncommitted merge, committed by either library, gives
    pylance's rows and counts; nothing is visible before the commit."""
    libs = {"lance": lance, "lancelet": lancelet}
    src = _t([5, 6, 700, 701], "new")
    ref_uri = str(tmp_path / "ref")
    ref = lance.write_dataset(_t(range(0, 20), "old"), ref_uri)
    expected_counts = ref.merge_insert("id").when_matched_update_all().when_not_matched_insert_all().execute(src)
    expected = _rows(lance, ref_uri)

    uri = str(tmp_path / "d")
    w, c = libs[writer], libs[committer]
    ds = w.write_dataset(_t(range(0, 20), "old"), uri)
    txn, counts = ds.merge_insert("id").when_matched_update_all().when_not_matched_insert_all().execute_uncommitted(src)
    assert counts == expected_counts
    assert type(txn.operation).__name__ == "Update"
    assert txn.read_version == 1
    assert lancelet.dataset(uri).version == 1 and len(lancelet.dataset(uri).to_table()) == 20
    if writer != committer:  # rebuild the transaction in the committing library
        op = c.LanceOperation.Update(
            removed_fragment_ids=txn.operation.removed_fragment_ids,
            updated_fragments=[_frag_in(c, f) for f in txn.operation.updated_fragments],
            new_fragments=[_frag_in(c, f) for f in txn.operation.new_fragments],
        )
        c.LanceDataset.commit(uri, op, read_version=txn.read_version)
    else:
        c.LanceDataset.commit(uri, txn)
    assert _rows(lancelet, uri) == expected
    assert _rows(lance, uri) == expected


def _frag_in(lib, frag):
    """A fragment's metadata in the other library's class (through its JSON)."""
    return lib.FragmentMetadata.from_json(json.dumps(frag.to_json()))


@pytest.mark.parametrize("update,insert,delete", [(True, True, False), (False, True, False), (True, False, True)])
def test_explain_and_analyze_plan_name_the_merge_like_pylance(tmp_path, update, insert, delete):
    """explain_plan and analyze_plan start with pylance's MergeInsert line (the same
    settings, in the same words); analyze_plan reports pylance's counts, bytes and files
    written, and leaves the dataset as it was."""
    src = _t([1, 2, 300], "new")
    first, metrics = {}, {}
    for lib in (lance, lancelet):
        uri = str(tmp_path / lib.__name__)
        ds = lib.write_dataset(_t(range(0, 30), "old"), uri)
        b = ds.merge_insert("id")
        if update:
            b = b.when_matched_update_all()
        if insert:
            b = b.when_not_matched_insert_all()
        if delete:
            b = b.when_not_matched_by_source_delete()
        plan = b.explain_plan()
        assert plan == b.explain_plan(ds.schema, verbose=False)
        assert "MergeInsert" in b.explain_plan(verbose=True)
        first[lib.__name__] = plan.splitlines()[0]
        analysis = b.analyze_plan(src)
        line = next(x for x in analysis.splitlines() if "MergeInsert" in x)
        metrics[lib.__name__] = {
            k: int(v) for k, v in
            (m.split("=") for m in line.split("metrics=[")[1].rstrip("]").split(", "))
            if k in ("num_inserted_rows", "num_updated_rows", "num_deleted_rows", "num_files_written")
        }
        assert "bytes_written=" in line
        assert lib.dataset(uri).version == 1 and len(lib.dataset(uri).to_table()) == 30
    assert first["lancelet"] == first["lance"]
    assert metrics["lancelet"] == metrics["lance"]
    # The dataset's data directory holds only its own file again.
    assert len(os.listdir(tmp_path / "lancelet" / "data")) == 1


def test_explain_plan_checks_the_source_schema(tmp_path):
    ds = lancelet.write_dataset(_t(range(5), "old"), str(tmp_path / "d"))
    with pytest.raises(lancelet.errors.SchemaMismatchError):
        ds.merge_insert("id").when_matched_update_all().explain_plan(pa.schema([("id", pa.string())]))


def test_retry_timeout_and_use_index_are_accepted_like_pylance(tmp_path):
    from datetime import timedelta

    out = {}
    for lib in (lance, lancelet):
        uri = str(tmp_path / lib.__name__)
        ds = lib.write_dataset(_t(range(0, 30), "old"), uri)
        ds.create_scalar_index("id", "BTREE")
        for use_index in (True, False):
            res = (ds.merge_insert("id").when_matched_update_all().when_not_matched_insert_all()
                   .retry_timeout(timedelta(seconds=5)).conflict_retries(0).use_index(use_index)
                   .execute(_t([1, 2, 100 + int(use_index)], "n")))
            out.setdefault(lib.__name__, []).append(res)
        out[lib.__name__].append(_rows(lib, uri))
    assert out["lancelet"] == out["lance"]
    with pytest.raises(lancelet.errors.InvalidArgumentError):
        lancelet.dataset(str(tmp_path / "lancelet")).merge_insert("id").retry_timeout("5s")
