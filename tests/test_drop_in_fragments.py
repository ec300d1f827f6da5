"""pylance's fragment writers (``LanceFragment.create``, ``create_from_file``,
``update_columns``), automatic cleanup (``lance.auto_cleanup.*``) and ``commit_lock``, as
``import lancelet as lance`` programs use them.

Interop both ways: for every pair (preparing library, committing library) the fragments
one library writes are committed by the other, both read the result, and every
combination must give what pylance alone gives. Automatic cleanup is configured by one
library and applied by the other's commits; the versions left must be pylance's.
"""

from __future__ import annotations

import json
import logging
import os
import shutil

import pyarrow as pa
import pytest

lance = pytest.importorskip("lance")

import lance.fragment  # noqa: E402,F811

import lancelet  # noqa: E402
import lancelet.fragment  # noqa: E402
from lancelet import _fragment_ops  # noqa: E402

pytestmark = pytest.mark.interop

from test_drop_in_ops import LIBS, PAIRS, sub  # noqa: E402

TABLE = pa.table(
    {
        "id": pa.array([1, 2, 3, 4], pa.int64()),
        "name": ["a", "b", "c", "d"],
        "value": pa.array([10, 20, 30, 40], pa.int64()),
        "s": [{"x": i, "y": str(i)} for i in range(4)],
        "l": [[1, 2]] * 4,
    }
)


def meta_in(lib, frag):
    """A FragmentMetadata of either library as ``lib``'s (through pylance's JSON)."""
    return sub(lib, "fragment").FragmentMetadata.from_json(json.dumps(frag.to_json()))


def rows(uri):
    """The dataset as each library reads it, sorted by id (they must agree)."""
    a = sorted(lance.dataset(uri).to_table().to_pylist(), key=lambda r: r["id"])
    b = sorted(lancelet.dataset(uri).to_table().to_pylist(), key=lambda r: r["id"])
    assert a == b
    return a


def without_paths(meta):
    """``to_json()`` without what differs between two writes of the same data."""
    out = json.loads(json.dumps(meta.to_json()))
    for f in out["files"]:
        f.pop("path")
        f.pop("file_size_bytes")
    return out


# -- LanceFragment.create ----------------------------------------------------------------


@pytest.mark.parametrize("prep,com", PAIRS)
def test_create_commit_interop(tmp_path, prep, com):
    results = {}
    for p, c in {(prep, com), ("pylance", "pylance")}:
        P, C = LIBS[p], LIBS[c]
        uri = str(tmp_path / f"{p}-{c}")
        first = P.LanceFragment.create(uri, TABLE.slice(0, 2), mode="create")
        second = P.LanceFragment.create(uri, TABLE.slice(2, 1), fragment_id=7, mode="create")
        assert (first.id, second.id) == (0, 7)
        ds = C.LanceDataset.commit(
            uri, C.LanceOperation.Overwrite(TABLE.schema, [meta_in(C, first), meta_in(C, second)])
        )
        more = P.LanceFragment.create(uri, TABLE.slice(3), fragment_id=9)
        ds = C.LanceDataset.commit(uri, C.LanceOperation.Append([meta_in(C, more)]), read_version=ds.version)
        results[(p, c)] = (rows(uri), [f.fragment_id for f in lance.dataset(uri).get_fragments()])
    assert results[(prep, com)] == results[("pylance", "pylance")]
    assert results[(prep, com)][0] == TABLE.to_pylist()


def test_create_metadata_matches_pylance(tmp_path):
    metas = {}
    for name, lib in LIBS.items():
        uri = str(tmp_path / name)
        lance.write_dataset(TABLE.slice(0, 1), uri)
        metas[name] = lib.LanceFragment.create(uri, TABLE.slice(1), fragment_id=3)
    assert without_paths(metas["lancelet"]) == without_paths(metas["pylance"])
    assert metas["lancelet"].physical_rows == 3


def test_create_appends_in_the_datasets_format(tmp_path):
    # pylance 14 writes 2.2 files into a 2.0 dataset here; lancelet keeps the dataset's
    # format, so the fragment can be committed (and read) by either library.
    uri = str(tmp_path / "d")
    lance.write_dataset(TABLE.slice(0, 1), uri, data_storage_version="2.0")
    meta = lancelet.LanceFragment.create(uri, TABLE.slice(1))
    assert (meta.files[0].file_major_version, meta.files[0].file_minor_version) == (2, 0)
    ds = lance.LanceDataset.commit(uri, lance.LanceOperation.Append([meta_in(lance, meta)]), read_version=1)
    assert ds.data_storage_version == "2.0"
    assert rows(uri) == TABLE.to_pylist()


def test_create_without_dataset_writes_no_version(tmp_path):
    for name, lib in LIBS.items():
        uri = str(tmp_path / name)
        meta = lib.LanceFragment.create(uri, TABLE, mode="create")
        assert meta.id == 0 and meta.physical_rows == 4
        assert not os.path.exists(os.path.join(uri, "_versions"))


def test_create_rejects_foreign_columns(tmp_path):
    for name, lib in LIBS.items():
        uri = str(tmp_path / name)
        lance.write_dataset(TABLE, uri)
        with pytest.raises((OSError, ValueError)):
            lib.LanceFragment.create(uri, pa.table({"zz": [1]}))
    with pytest.raises(ValueError):
        lancelet.LanceFragment.create(str(tmp_path / "lancelet"), TABLE, fragment_id=-1)


# -- LanceFragment.create_from_file ------------------------------------------------------


FLAT = TABLE.select(["id", "name", "value"])


@pytest.mark.parametrize("prep,com", PAIRS)
@pytest.mark.parametrize("dsv", ["2.0", "2.2"])
def test_create_from_file_interop(tmp_path, prep, com, dsv):
    P, C = LIBS[prep], LIBS[com]
    uri = str(tmp_path / "d")
    lance.write_dataset(FLAT.slice(0, 2), uri, data_storage_version=dsv)
    lost = lance.LanceFragment.create(uri, FLAT.slice(2), data_storage_version=dsv)  # never committed
    ds = P.dataset(uri)
    meta = P.LanceFragment.create_from_file(lost.files[0].path, ds, 42)
    oracle = lance.LanceFragment.create_from_file(lost.files[0].path, lance.dataset(uri), 42)
    assert meta.to_json()["files"][0] == oracle.to_json()["files"][0]
    assert (meta.id, meta.physical_rows) == (42, 2)
    C.LanceDataset.commit(uri, C.LanceOperation.Append([meta_in(C, meta)]), read_version=ds.version)
    assert rows(uri) == FLAT.to_pylist()
    assert [f.fragment_id for f in lance.dataset(uri).get_fragments()] == [0, 42]


@pytest.mark.parametrize("com", LIBS)
@pytest.mark.parametrize("dsv", ["2.0", "2.2"])
def test_create_from_file_nested(tmp_path, com, dsv):
    # With struct and list columns in file format 2.2, pylance 14 lists 8 field ids for 6
    # columns (its own commit then refuses the fragment); lancelet lists the fields such a
    # file holds, as the dataset's other data files do, and either library commits it.
    C = LIBS[com]
    uri = str(tmp_path / "d")
    lance.write_dataset(TABLE.slice(0, 2), uri, data_storage_version=dsv)
    lost = lance.LanceFragment.create(uri, TABLE.slice(2), data_storage_version=dsv)
    meta = lancelet.LanceFragment.create_from_file(lost.files[0].path, lancelet.dataset(uri), 5)
    committed = lance.dataset(uri).get_fragments()[0].metadata.to_json()["files"][0]
    assert meta.to_json()["files"][0]["fields"] == committed["fields"]
    assert meta.to_json()["files"][0]["column_indices"] == committed["column_indices"]
    C.LanceDataset.commit(uri, C.LanceOperation.Append([meta_in(C, meta)]), read_version=1)
    assert rows(uri) == TABLE.to_pylist()


def test_create_from_file_missing(tmp_path):
    uri = str(tmp_path / "d")
    lance.write_dataset(TABLE, uri)
    for lib in LIBS.values():
        with pytest.raises(OSError):
            lib.LanceFragment.create_from_file("nope.lance", lib.dataset(uri), 1)


# -- LanceFragment.update_columns --------------------------------------------------------

UPDATE = pa.table(
    {
        "id": pa.array([3, 4, 9], pa.int64()),
        "value": pa.array([300, 400, 900], pa.int64()),
        "s": [{"x": 7, "y": "q"}] * 3,
        "l": [[5]] * 3,
    }
)


def _update(prep, com, uri, dsv):
    P, C = LIBS[prep], LIBS[com]
    lance.write_dataset(TABLE, uri, max_rows_per_file=2, data_storage_version=dsv)
    ds = P.dataset(uri)
    ds.delete("id = 3")  # a deleted row in the fragment updated
    meta, fields = ds.get_fragment(1).update_columns(UPDATE, left_on="id")
    op = C.LanceOperation.Update(updated_fragments=[meta_in(C, meta)], fields_modified=fields)
    C.LanceDataset.commit(uri, op, read_version=ds.version)
    layout = [(f["fields"], f["column_indices"]) for f in meta.to_json()["files"]]
    return rows(uri), fields, layout


@pytest.mark.parametrize("prep,com", PAIRS)
@pytest.mark.parametrize("dsv", ["2.0", "2.2"])
def test_update_columns_interop(tmp_path, prep, com, dsv):
    got = _update(prep, com, str(tmp_path / "a"), dsv)
    want = _update("pylance", "pylance", str(tmp_path / "b"), dsv)
    assert got == want
    assert got[0][-1] == {"id": 4, "name": "d", "value": 400, "s": {"x": 7, "y": "q"}, "l": [5]}
    assert got[0][0] == TABLE.to_pylist()[0]


@pytest.mark.parametrize("name", LIBS)
def test_update_columns_by_rowid_with_offsets(tmp_path, name):
    uri = str(tmp_path / name)
    lance.write_dataset(TABLE, uri)
    frag = LIBS[name].dataset(uri).get_fragment(0)
    right = pa.table({"_rowid": pa.array([1, 3], pa.uint64()), "name": ["B", "D"]})
    meta, fields, offsets = frag.update_columns(right, with_offsets=True)
    oracle = lance.dataset(uri).get_fragment(0).update_columns(right, with_offsets=True)
    assert (fields, offsets) == (oracle[1], oracle[2])
    assert without_paths(meta) == without_paths(oracle[0])


def test_update_columns_offsets_bytes_match_pylance(tmp_path):
    # More than 4096 matches in one 65536-row block (a bitmap container), and a second block.
    uri = str(tmp_path / "d")
    n = 70_000
    lance.write_dataset(pa.table({"id": pa.array(range(n), pa.int64()), "v": pa.array([0] * n, pa.int64())}), uri)
    keys = list(range(0, n, 3))
    right = pa.table({"id": pa.array(keys, pa.int64()), "v": pa.array([1] * len(keys), pa.int64())})
    got = lancelet.dataset(uri).get_fragment(0).update_columns(right, left_on="id", with_offsets=True)
    want = lance.dataset(uri).get_fragment(0).update_columns(right, left_on="id", with_offsets=True)
    assert got[2] == want[2]
    assert _fragment_ops.portable_roaring([]) == b":0\x00\x00\x00\x00\x00\x00"


def test_update_columns_errors(tmp_path):
    uri = str(tmp_path / "d")
    lance.write_dataset(TABLE, uri)
    frag = lancelet.dataset(uri).get_fragment(0)
    bad = [
        ({"data_obj": pa.table({"id": [1], "nope": [1]}), "left_on": "id"}, "nope"),
        ({"data_obj": pa.table({"id": [1]}), "left_on": "id"}, "no column to update"),
        ({"data_obj": pa.table({"id": [1], "value": [5]})}, "_rowid"),
        ({"data_obj": pa.table({"id": [1], "value": [5]}), "left_on": "nope"}, "nope"),
        ({"data_obj": pa.table({"id": [1], "value": ["x"]}), "left_on": "id"}, "cannot be cast"),
    ]
    for kwargs, msg in bad:
        with pytest.raises(ValueError, match=msg):
            frag.update_columns(**kwargs)


def test_commit_strips_tombstones_reads_the_same(tmp_path):
    uri = str(tmp_path / "d")
    lance.write_dataset(TABLE, uri)
    ds = lance.dataset(uri)
    meta, fields = ds.get_fragment(0).update_columns(pa.table({"id": [2], "value": [7]}), left_on="id")
    assert -2 in meta.to_json()["files"][0]["fields"]
    op = lancelet.LanceOperation.Update(updated_fragments=[meta_in(lancelet, meta)], fields_modified=fields)
    lancelet.LanceDataset.commit(uri, op, read_version=ds.version)
    assert [r["value"] for r in rows(uri)] == [10, 7, 30, 40]
    assert -2 not in lancelet.dataset(uri).get_fragment(0).metadata.to_json()["files"][0]["fields"]


# -- automatic cleanup --------------------------------------------------------------------


def versions(uri):
    return [v["version"] for v in lance.dataset(uri).versions()]


def _cleanup_run(tmp_path, config_lib, commit_lib, config, commits=7):
    uri = str(tmp_path / f"{config_lib}-{commit_lib}")
    LIBS[config_lib].write_dataset(TABLE, uri)
    ds = LIBS[config_lib].dataset(uri)
    ds.update_config(config)
    seen = []
    for _ in range(commits):
        LIBS[commit_lib].write_dataset(TABLE.slice(0, 1), uri, mode="append")
        seen.append(versions(uri))
    return seen


@pytest.mark.parametrize("config_lib,commit_lib", PAIRS)
def test_auto_cleanup_same_versions_as_pylance(tmp_path, config_lib, commit_lib):
    config = {"lance.auto_cleanup.interval": "3", "lance.auto_cleanup.older_than": "0s"}
    got = _cleanup_run(tmp_path, config_lib, commit_lib, config)
    want = _cleanup_run(tmp_path / "oracle", "pylance", "pylance", config)
    assert got == want
    assert got[-1] == [8, 9]


@pytest.mark.parametrize(
    "config",
    [
        {"lance.auto_cleanup.interval": "0", "lance.auto_cleanup.older_than": "0s"},  # every commit
        {"lance.auto_cleanup.interval": "1", "lance.auto_cleanup.retain_versions": "3"},
        {"lance.auto_cleanup.interval": "2", "lance.auto_cleanup.older_than": "1h"},  # nothing old enough
        {"lance.auto_cleanup.interval": "2", "lance.auto_cleanup.older_than": "1h 30m"},
    ],
)
def test_auto_cleanup_policies_match_pylance(tmp_path, config):
    got = _cleanup_run(tmp_path, "lancelet", "lancelet", config, commits=4)
    want = _cleanup_run(tmp_path / "oracle", "pylance", "pylance", config, commits=4)
    assert got == want


def test_auto_cleanup_other_commits(tmp_path):
    # Every kind of commit applies it (delete, update_config, LanceDataset.commit...).
    for name, lib in LIBS.items():
        uri = str(tmp_path / name)
        ds = lib.write_dataset(TABLE, uri)
        ds.optimize.enable_auto_cleanup({"interval": 1, "older_than_seconds": 0})
        ds = lib.dataset(uri)
        ds.delete("id = 1")
        assert versions(uri) == [2, 3], name
        frag = lib.LanceFragment.create(uri, TABLE.slice(0, 1))
        lib.LanceDataset.commit(uri, lib.LanceOperation.Append([frag]), read_version=ds.version)
        assert versions(uri) == [3, 4], name
        ds = lib.dataset(uri)
        ds.optimize.disable_auto_cleanup()
        lib.write_dataset(TABLE, uri, mode="append")
        assert versions(uri) == [3, 4, 5, 6], name  # the disabling commit cleans nothing
        assert "lance.auto_cleanup.interval" not in ds.config()


def test_write_dataset_auto_cleanup_options(tmp_path):
    options = {"interval": 2, "older_than_seconds": 0}
    configs = {}
    for name, lib in LIBS.items():
        uri = str(tmp_path / name)
        configs[name] = lib.write_dataset(TABLE, uri, auto_cleanup_options=options).config()
        # Appending with the option changes nothing (it only applies when creating).
        lib.write_dataset(TABLE, uri, mode="append", auto_cleanup_options={"interval": 9, "older_than_seconds": 9})
        assert lib.dataset(uri).config() == configs[name]
    assert configs["lancelet"] == configs["pylance"]
    # pylance's defaults for a missing key.
    a = lance.write_dataset(TABLE, str(tmp_path / "p2"), auto_cleanup_options={"interval": 3}).config()
    b = lancelet.write_dataset(TABLE, str(tmp_path / "l2"), auto_cleanup_options={"interval": 3}).config()
    assert a == b
    with pytest.raises(ValueError):
        lancelet.write_dataset(TABLE, str(tmp_path / "l3"), auto_cleanup_options={"interval": -1})


def test_pylance_created_auto_cleanup_applied_by_lancelet(tmp_path):
    got = {}
    for name in LIBS:
        uri = str(tmp_path / name)
        lance.write_dataset(TABLE, uri, auto_cleanup_options={"interval": 3, "older_than_seconds": 0})
        for _ in range(5):
            LIBS[name].write_dataset(TABLE, uri, mode="append")
        got[name] = versions(uri)
    assert got["lancelet"] == got["pylance"] == [5, 6]


@pytest.mark.parametrize("name", LIBS)
def test_auto_cleanup_problems_warn_and_keep_the_commit(tmp_path, name, caplog):
    lib = LIBS[name]
    uri = str(tmp_path / name)
    ds = lib.write_dataset(TABLE, uri)
    ds.tags.create("keep", 1)
    ds.update_config({"lance.auto_cleanup.interval": "1", "lance.auto_cleanup.older_than": "0s"})
    with caplog.at_level(logging.WARNING):
        lib.write_dataset(TABLE, uri, mode="append")  # version 1 is tagged: nothing removed
        assert versions(uri) == [1, 2, 3]
        lib.dataset(uri).update_config({"lance.auto_cleanup.interval": "abc"})
        assert lib.dataset(uri).version == 4
        lib.dataset(uri).update_config({"lance.auto_cleanup.interval": "1", "lance.auto_cleanup.older_than": "zz"})
        assert lib.dataset(uri).version == 5
    assert versions(uri) == [1, 2, 3, 4, 5]
    if name == "lancelet":
        assert sum("Auto cleanup failed" in r.getMessage() for r in caplog.records) == 3


# -- commit_lock --------------------------------------------------------------------------


class Recorder:
    """A commit lock recording how it is used."""

    def __init__(self):
        self.calls = []

    def __call__(self, version):
        self.calls.append(("call", version))
        rec = self

        class Ctx:
            def __enter__(self):
                rec.calls.append(("enter", version))

            def __exit__(self, kind, exc, tb):
                rec.calls.append(("exit", version, kind is None))
                return False

        return Ctx()


def _locked_ops(lib, uri, lock):
    """Commits through every kind of call; the lock's record after each."""
    out = []

    def step(name, fn):
        lock.calls.clear()
        fn()
        out.append((name, list(lock.calls)))

    step("create", lambda: lib.write_dataset(TABLE, uri, commit_lock=lock))
    step("append", lambda: lib.write_dataset(TABLE, uri, mode="append", commit_lock=lock))
    ds = lib.dataset(uri, commit_lock=lock)
    step("delete", lambda: ds.delete("id = 1"))
    step("update", lambda: ds.update({"value": "value + 1"}, "id = 2"))
    step("config", lambda: ds.update_config({"k": "v"}))
    step("add_columns", lambda: ds.add_columns({"w": "value * 2"}))
    step("alter", lambda: ds.alter_columns({"path": "w", "name": "w2"}))
    step("drop", lambda: ds.drop_columns(["w2"]))
    step("index", lambda: ds.create_scalar_index("id", "BTREE"))
    step("merge_insert", lambda: ds.merge_insert("id").when_matched_update_all().execute(TABLE.slice(3, 1)))
    step("insert", lambda: ds.insert(TABLE.slice(0, 1)))
    step("restore", lambda: ds.checkout_version(2).restore())
    frag = lib.LanceFragment.create(uri, TABLE.slice(0, 1))
    step(
        "commit",
        lambda: lib.LanceDataset.commit(
            uri, lib.LanceOperation.Append([frag]), read_version=ds.latest_version, commit_lock=lock
        ),
    )
    return out


def test_commit_lock_entered_once_per_commit_like_pylance(tmp_path):
    got = _locked_ops(lancelet, str(tmp_path / "a"), Recorder())
    want = _locked_ops(lance, str(tmp_path / "b"), Recorder())
    assert got == want
    for version, (name, calls) in enumerate(got, start=1):
        assert calls == [("call", version), ("enter", version), ("exit", version, True)], name


@pytest.mark.parametrize("name", LIBS)
def test_commit_lock_follows_the_dataset(tmp_path, name):
    lib = LIBS[name]
    uri = str(tmp_path / name)
    lock = Recorder()
    ds = lib.write_dataset(TABLE, uri, commit_lock=lock)
    ds.delete("id = 1")  # the dataset write_dataset returns keeps the lock
    frag = lib.LanceFragment.create(uri, TABLE.slice(0, 1))
    ds = lib.LanceDataset.commit(uri, lib.LanceOperation.Append([frag]), read_version=2, commit_lock=lock)
    ds.delete("id = 2")  # and so does the one commit returns
    lib.dataset(uri).delete("id = 3")  # a dataset opened without it does not
    assert [c[1] for c in lock.calls if c[0] == "call"] == [1, 2, 3, 4]


def _failing(kind):
    def lock(version):
        if kind == "call":
            raise ValueError("no lock for you")

        class Ctx:
            def __enter__(self):
                raise ValueError("no lock for you")

            def __exit__(self, *exc):
                return False

        return Ctx()

    return lock


@pytest.mark.parametrize("name", LIBS)
@pytest.mark.parametrize("kind", ["call", "enter"])
def test_commit_lock_failure_aborts_the_commit(tmp_path, name, kind):
    lib = LIBS[name]
    uri = str(tmp_path / name)
    lib.write_dataset(TABLE, uri)
    before = sorted(os.listdir(os.path.join(uri, "_versions")))
    # pylance wraps the lock's error in an OSError; lancelet lets it through unchanged.
    with pytest.raises(ValueError if name == "lancelet" else OSError, match="no lock for you"):
        lib.write_dataset(TABLE, uri, mode="append", commit_lock=_failing(kind))
    ds = lib.dataset(uri, commit_lock=_failing(kind))
    with pytest.raises(ValueError if name == "lancelet" else OSError, match="no lock for you"):
        ds.delete("id = 1")
    assert sorted(os.listdir(os.path.join(uri, "_versions"))) == before
    assert lance.dataset(uri).count_rows() == 4 and lancelet.dataset(uri).version == 1
    if name == "lancelet":  # stopped before anything was written
        assert len(os.listdir(os.path.join(uri, "data"))) == 1


def test_commit_lock_must_be_callable(tmp_path):
    for name, lib in LIBS.items():
        with pytest.raises(TypeError, match="commit_lock must be a function"):
            lib.write_dataset(TABLE, str(tmp_path / name), commit_lock=5)
    with pytest.raises(TypeError, match="commit_lock must be a function"):
        lancelet.dataset(str(tmp_path / "pylance"), commit_lock=5)


def test_commit_lock_exit_sees_a_failed_commit(tmp_path):
    uri = str(tmp_path / "d")
    lancelet.write_dataset(TABLE, uri)
    lancelet.dataset(uri).delete("id = 1")  # version 2
    lock = Recorder()
    # A delete planned at version 1 of a fragment version 2 changed: the commit conflicts.
    op = lancelet.LanceOperation.Delete([], [0], "true")
    with pytest.raises(lancelet.errors.CommitConflictError):
        lancelet.LanceDataset.commit(uri, op, read_version=1, commit_lock=lock)
    assert lock.calls == [("call", 3), ("enter", 3), ("exit", 3, False)]
    assert lancelet.dataset(uri).version == 2


def test_a_create_refused_before_committing_never_takes_the_lock(tmp_path):
    for name, lib in LIBS.items():
        uri = str(tmp_path / name)
        lib.write_dataset(TABLE, uri)
        lock = Recorder()
        with pytest.raises(OSError):
            lib.write_dataset(TABLE, uri, mode="create", commit_lock=lock)
        assert lock.calls == [], name


def test_auto_cleanup_after_a_spark_job_commit(tmp_path):
    # The Spark source commits its jobs' fragments in one native call; cleanup follows it too.
    pytest.importorskip("pyspark")
    from lancelet import spark as lspark

    uri = str(tmp_path / "d")
    lancelet.write_dataset(TABLE, uri)
    lance.dataset(uri).update_config({"lance.auto_cleanup.interval": "3", "lance.auto_cleanup.older_than": "0s"})
    frags = [f.to_json() for f in lancelet.fragment.write_fragments(TABLE.slice(0, 1), uri)]
    lspark._commit(uri, frags, False, TABLE.schema, 2, None, {})
    assert versions(uri) == [2, 3]
