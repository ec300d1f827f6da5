"""Branches, tags on branches and shallow/deep clones, shared with pylance 14 both ways.

A branch made, written and tagged by one library is read and extended by the other; shallow
clones of either library's datasets are read and appended by the other while the source stays
byte-for-byte untouched.
"""

from __future__ import annotations

import hashlib
import json
import os

import pyarrow as pa
import pytest

import lancelet
from lancelet.errors import DatasetAlreadyExistsError, InvalidArgumentError

lance = pytest.importorskip("lance")

pytestmark = pytest.mark.interop


def _t(ids):
    ids = list(ids)
    return pa.table({"id": pa.array(ids, pa.int64()), "s": pa.array([f"s{i}" for i in ids])})


def _ids(ds) -> list:
    return sorted(ds.to_table(columns=["id"])["id"].to_pylist())


def _snapshot(root: str) -> dict:
    """Every file under ``root`` with its content hash."""
    out = {}
    for d, _, files in os.walk(root):
        for f in files:
            p = os.path.join(d, f)
            with open(p, "rb") as fh:
                out[os.path.relpath(p, root)] = hashlib.sha256(fh.read()).hexdigest()
    return out


@pytest.mark.parametrize("maker", ["lance", "lancelet"])
def test_branch_made_by_one_is_read_and_extended_by_the_other(tmp_path, maker):
    uri = str(tmp_path / "d.lance")
    mk = lance if maker == "lance" else lancelet
    other = lancelet if maker == "lance" else lance
    ds = mk.write_dataset(_t(range(10)), uri)
    ds.delete("id < 2")  # main v2, with a deletion file the branch inherits
    dev = ds.create_branch("dev")
    assert dev.version == 2
    assert dev.uri.rstrip("/").endswith(os.path.join("tree", "dev"))
    mk.write_dataset(_t(range(100, 103)), dev, mode="append")  # dev v3
    mk.dataset(uri + "/tree/dev").tags.create("devtag", ("dev", 3))
    main_before = _ids(mk.dataset(uri))

    # The other library sees the branch, its numbering and the tag into it.
    b = other.dataset(uri + "/tree/dev")
    assert b.version == 3 and _ids(b) == list(range(2, 10)) + [100, 101, 102]
    assert _ids(other.dataset(uri).checkout_version(("dev", 2))) == list(range(2, 10))
    assert _ids(other.dataset(uri, version="devtag")) == _ids(b)
    tags = other.dataset(uri).tags.list()
    assert tags["devtag"]["branch"] == "dev" and tags["devtag"]["version"] == 3
    br = other.dataset(uri).branches.list()
    assert list(br) == ["dev"] and br["dev"]["parent_version"] == 2 and br["dev"]["parent_branch"] is None
    assert _ids(other.dataset(uri)) == main_before and other.dataset(uri).version == 2

    # ... and extends it: append, delete, update on the branch; main is untouched.
    other.write_dataset(_t(range(200, 202)), uri + "/tree/dev", mode="append")  # dev v4
    b = other.dataset(uri + "/tree/dev")
    b.delete("id = 100")  # v5
    b.update({"s": "'changed'"}, where="id = 3")  # v6
    b.tags.create("devtag2")  # this branch's newest version
    for lib in (lance, lancelet):
        got = lib.dataset(uri + "/tree/dev")
        assert got.version == 6
        assert _ids(got) == list(range(2, 10)) + [101, 102, 200, 201]
        assert got.to_table(filter="id = 3")["s"].to_pylist() == ["changed"]
        assert lib.dataset(uri).version == 2 and _ids(lib.dataset(uri)) == main_before
        t = lib.dataset(uri).tags.list()["devtag2"]
        assert (t["branch"], t["version"]) == ("dev", 6)
        assert _ids(lib.dataset(uri).checkout_version("devtag")) == list(range(2, 10)) + [100, 101, 102]

    # Main keeps numbering on its own.
    mk.write_dataset(_t([50]), uri, mode="append")
    assert other.dataset(uri).version == 3 and 50 in _ids(other.dataset(uri))
    assert 50 not in _ids(other.dataset(uri + "/tree/dev"))


@pytest.mark.parametrize("maker", ["lance", "lancelet"])
def test_branch_of_a_branch_and_deletion_rules(tmp_path, maker):
    uri = str(tmp_path / "d.lance")
    mk = lance if maker == "lance" else lancelet
    other = lancelet if maker == "lance" else lance
    ds = mk.write_dataset(_t(range(4)), uri)
    dev = ds.create_branch("dev", 1)
    mk.write_dataset(_t([10]), dev, mode="append")  # dev v2
    child = mk.dataset(uri + "/tree/dev").create_branch("feat/x")
    assert child.version == 2
    mk.write_dataset(_t([20]), child, mode="append")  # feat/x v3
    assert os.path.exists(os.path.join(uri, "_refs", "branches", "feat%2Fx.json"))

    got = other.dataset(uri + "/tree/feat/x")
    assert _ids(got) == [0, 1, 2, 3, 10, 20]
    listed = other.dataset(uri).branches.list()
    assert listed["feat/x"]["parent_branch"] == "dev" and listed["feat/x"]["parent_version"] == 2
    assert [v for v, _ in listed["feat/x"]["branch_identifier"]] == [1, 2]
    assert [n for n, _ in other.dataset(uri).branches.list_ordered()] == ["feat/x", "dev"]
    # The other library writes to the nested branch too.
    other.write_dataset(_t([30]), uri + "/tree/feat/x", mode="append")
    assert _ids(mk.dataset(uri + "/tree/feat/x")) == [0, 1, 2, 3, 10, 20, 30]

    # A branch another descends from cannot be deleted; the leaf can, with its files.
    with pytest.raises(InvalidArgumentError, match="feat/x"):
        lancelet.dataset(uri).branches.delete("dev")
    lancelet.dataset(uri).branches.delete("feat/x")
    assert not os.path.exists(os.path.join(uri, "tree", "feat", "x"))
    assert list(lance.dataset(uri).branches.list()) == ["dev"]
    lance.dataset(uri).branches.delete("dev")
    assert lancelet.dataset(uri).branches.list() == {}
    assert _ids(lancelet.dataset(uri)) == [0, 1, 2, 3]


def test_branch_names_and_duplicates(tmp_path):
    uri = str(tmp_path / "d.lance")
    ds = lancelet.write_dataset(_t(range(3)), uri)
    for bad in ["main", "a b", "x.lock", "a..b", "a/", "/a", ""]:
        with pytest.raises(InvalidArgumentError):
            ds.create_branch(bad)
    ds.create_branch("ok.name-1_x")
    with pytest.raises(DatasetAlreadyExistsError):
        ds.create_branch("ok.name-1_x")
    with pytest.raises(InvalidArgumentError):
        ds.branches.delete("missing")
    with pytest.raises(InvalidArgumentError, match="missing"):
        ds.checkout_version(("missing", None))
    # The duplicate left nothing behind: pylance still reads the branch.
    assert _ids(lance.dataset(uri + "/tree/ok.name-1_x")) == [0, 1, 2]


def test_branch_reference_file_matches_pylance_shape(tmp_path):
    uri = str(tmp_path / "d.lance")
    ds = lancelet.write_dataset(_t(range(3)), uri)
    ds.create_branch("dev")
    with open(os.path.join(uri, "_refs", "branches", "dev.json")) as f:
        body = json.load(f)
    assert set(body) == {"parentBranch", "identifier", "parentVersion", "createAt", "manifestSize", "metadata"}
    assert body["parentBranch"] is None and body["parentVersion"] == 1
    [[v, ident]] = body["identifier"]["version_mapping"]
    assert v == 1 and len(ident) == 32
    assert body["manifestSize"] == os.path.getsize(
        os.path.join(uri, "_versions", sorted(os.listdir(os.path.join(uri, "_versions")))[0]))
    ds.branches.replace_metadata("dev", {"owner": "me"})
    assert lance.dataset(uri).branches.list()["dev"]["metadata"] == {"owner": "me"}


@pytest.mark.parametrize("cleaner", ["lance", "lancelet"])
def test_cleanup_keeps_what_branches_need(tmp_path, cleaner):
    uri = str(tmp_path / "d.lance")
    lib = lance if cleaner == "lance" else lancelet
    ds = lancelet.write_dataset(_t(range(5)), uri)
    ds.create_branch("dev")  # from main v1
    lancelet.write_dataset(_t(range(100, 102)), uri, mode="overwrite")  # main v2 drops v1's files
    lancelet.write_dataset(_t([7]), uri + "/tree/dev", mode="append")
    lancelet.write_dataset(_t([8]), uri + "/tree/dev", mode="append")
    lib.dataset(uri).cleanup_old_versions(older_than=__import__("datetime").timedelta(0), delete_unverified=True)
    lib.dataset(uri + "/tree/dev").cleanup_old_versions(
        older_than=__import__("datetime").timedelta(0), delete_unverified=True)
    for reader in (lance, lancelet):
        assert _ids(reader.dataset(uri + "/tree/dev")) == [0, 1, 2, 3, 4, 7, 8]
        assert _ids(reader.dataset(uri)) == [100, 101]


@pytest.mark.parametrize("maker", ["lance", "lancelet"])
def test_shallow_clone_is_read_and_appended_by_the_other(tmp_path, maker):
    src, dst = str(tmp_path / "src.lance"), str(tmp_path / "clone.lance")
    mk = lance if maker == "lance" else lancelet
    other = lancelet if maker == "lance" else lance
    ds = mk.write_dataset(_t(range(10)), src)
    ds.delete("id % 3 = 0")  # v2 with deletion files
    mk.write_dataset(_t(range(20, 23)), src, mode="append")  # v3
    before = _snapshot(src)

    clone = other.dataset(src).shallow_clone(dst, 2)
    assert clone.version == 2
    assert not os.path.exists(os.path.join(dst, "data"))
    expected = [i for i in range(10) if i % 3]
    for lib in (lance, lancelet):
        got = lib.dataset(dst)
        assert _ids(got) == expected
        assert got.base_paths()[0].path == src and got.base_paths()[0].is_dataset_root
    # Both libraries append to the clone and delete from it.
    mk.write_dataset(_t([40]), dst, mode="append")
    other.write_dataset(_t([41]), dst, mode="append")
    other.dataset(dst).delete("id = 1")
    for lib in (lance, lancelet):
        assert _ids(lib.dataset(dst)) == [i for i in expected if i != 1] + [40, 41]
    assert _snapshot(src) == before
    assert _ids(lance.dataset(src)) == expected + [20, 21, 22]


def test_shallow_clone_references_tags_and_branches(tmp_path):
    src = str(tmp_path / "src.lance")
    ds = lancelet.write_dataset(_t(range(3)), src)
    lancelet.write_dataset(_t([3]), src, mode="append")
    ds = lancelet.dataset(src)
    ds.tags.create("first", 1)
    dev = ds.create_branch("dev", 1)
    lancelet.write_dataset(_t([9]), dev, mode="append")
    c1 = ds.shallow_clone(str(tmp_path / "c1.lance"), "first")
    c2 = ds.shallow_clone(str(tmp_path / "c2.lance"), ("dev", None))
    c3 = ds.shallow_clone(str(tmp_path / "c3.lance"), (None, None))
    assert (c1.version, _ids(c1)) == (1, [0, 1, 2])
    assert (c2.version, _ids(c2)) == (2, [0, 1, 2, 9])
    assert (c3.version, _ids(c3)) == (2, [0, 1, 2, 3])
    assert _ids(lance.dataset(str(tmp_path / "c2.lance"))) == [0, 1, 2, 9]
    named = {b.name for b in c2.base_paths().values()}
    assert "dev" in named
    with pytest.raises(DatasetAlreadyExistsError):
        ds.shallow_clone(str(tmp_path / "c1.lance"), 1)


@pytest.mark.parametrize("maker", ["lance", "lancelet"])
def test_deep_clone_copies_everything(tmp_path, maker):
    src, dst = str(tmp_path / "src.lance"), str(tmp_path / "deep.lance")
    mk = lance if maker == "lance" else lancelet
    ds = mk.write_dataset(_t(range(8)), src)
    ds.delete("id = 5")
    dev = ds.create_branch("dev")
    mk.write_dataset(_t([70]), dev, mode="append")
    # A deep clone of a branch version: its files live in two roots (main's and the branch's).
    deep = lancelet.dataset(src).deep_clone(dst, ("dev", 3))
    assert deep.base_paths() == {}
    for lib in (lance, lancelet):
        got = lib.dataset(dst)
        assert _ids(got) == [0, 1, 2, 3, 4, 6, 7, 70]
    import shutil

    shutil.rmtree(src)
    lance.write_dataset(_t([99]), dst, mode="append")
    assert _ids(lancelet.dataset(dst)) == [0, 1, 2, 3, 4, 6, 7, 70, 99]


def test_version_tuple_opens_a_branch(tmp_path):
    uri = str(tmp_path / "d.lance")
    ds = lancelet.write_dataset(_t(range(2)), uri)
    dev = ds.create_branch("dev")
    lancelet.write_dataset(_t([5]), dev, mode="append")
    assert _ids(lancelet.dataset(uri, version=("dev", 1))) == [0, 1]
    assert _ids(lancelet.dataset(uri, version=("dev", None))) == [0, 1, 5]
    assert lancelet.dataset(uri, version=("dev", None)).branch == "dev"
    assert lancelet.dataset(uri).branch is None
    back = lancelet.dataset(uri + "/tree/dev").checkout_version(("main", None))
    assert back.branch is None and _ids(back) == [0, 1]


def test_validate_detects_a_shallow_clone_broken_by_source_cleanup(tmp_path):
    """pylance 14 lets cleaning the source delete files its shallow clones read; lancelet's
    ``validate()`` reports it (pylance's own validate of the clone does not look)."""
    import datetime

    src, dst = str(tmp_path / "src.lance"), str(tmp_path / "clone.lance")
    lance.write_dataset(_t(range(4)), src)
    clone = lancelet.dataset(src).shallow_clone(dst, 1)
    clone.validate()
    lance.write_dataset(_t([9]), src, mode="overwrite")
    lance.dataset(src).cleanup_old_versions(older_than=datetime.timedelta(0), delete_unverified=True)
    with pytest.raises(lancelet.CorruptFileError, match="shallow clone"):
        lancelet.dataset(dst).validate()
    lancelet.dataset(src).validate()


@pytest.mark.parametrize("maker", ["lance", "lancelet"])
def test_every_operation_on_a_branch_and_inherited_indexes(tmp_path, maker):
    uri = str(tmp_path / "d.lance")
    mk = lance if maker == "lance" else lancelet
    ds = mk.write_dataset(_t(range(20)), uri, max_rows_per_file=5)
    ds.create_scalar_index("id", "BTREE")
    dev = ds.create_branch("dev")
    # lancelet changes the branch in every way; main stays as it was.
    b = lancelet.dataset(uri + "/tree/dev")
    assert b.to_table(filter="id = 7")["s"].to_pylist() == ["s7"]  # through the inherited index
    b.merge_insert("id").when_matched_update_all().when_not_matched_insert_all().execute(_t([3, 30]))
    b = lancelet.dataset(uri + "/tree/dev")
    b.add_columns({"twice": "id * 2"})
    b.optimize.compact_files(target_rows_per_fragment=1000)
    b.create_scalar_index("s", "BITMAP")
    b.delete("id = 4")
    for lib in (lance, lancelet):
        got = lib.dataset(uri + "/tree/dev")
        assert _ids(got) == [i for i in range(20) if i != 4] + [30]
        assert got.to_table(filter="id = 30")["twice"].to_pylist() == [60]
        assert got.to_table(filter="s = 's9'")["id"].to_pylist() == [9]
        main = lib.dataset(uri)
        assert main.version == 2 and _ids(main) == list(range(20)) and "twice" not in main.schema.names
    assert dev.version == 2


_CRASH_WRITER = r"""
import os, sys
import pyarrow as pa
import lancelet

uri, clones, start = sys.argv[1], sys.argv[2], int(sys.argv[3])
ds = lancelet.dataset(uri)
print("ready", flush=True)
for i in range(start, start + 1000):
    name = f"b{i}"
    if name not in ds.branches.list():
        b = ds.create_branch(name)
        lancelet.write_dataset(pa.table({"id": pa.array([1000 + i], pa.int64()), "s": ["x"]}), b, mode="append")
    target = os.path.join(clones, f"c{i}")
    if not os.path.isdir(os.path.join(target, "_versions")):
        ds.shallow_clone(target, 1)
    print(i, flush=True)
"""


def test_sigkill_during_branch_creation_and_clone_leaves_everything_readable(tmp_path):
    import random
    import subprocess
    import sys

    from _support import kill_after_ready

    uri, clones = str(tmp_path / "d.lance"), str(tmp_path / "clones")
    os.makedirs(clones)
    lancelet.write_dataset(_t(range(3)), uri)
    rng = random.Random(23)
    start = 0
    for _ in range(4):
        proc = subprocess.Popen([sys.executable, "-c", _CRASH_WRITER, uri, clones, str(start)],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        _, out = kill_after_ready(proc, rng.uniform(0.05, 0.25))
        done = [int(x) for x in out.split()]
        start = (done[-1] + 1) if done else start
        for name in lancelet.dataset(uri).branches.list():
            for lib in (lance, lancelet):
                assert _ids(lib.dataset(f"{uri}/tree/{name}")) in ([0, 1, 2], [0, 1, 2, 1000 + int(name[1:])])
        for c in os.listdir(clones):
            versions = os.path.join(clones, c, "_versions")
            # a clone exists once a manifest landed (a killed writer may leave only a temp file)
            if os.path.isdir(versions) and any(f.endswith(".manifest") for f in os.listdir(versions)):
                for lib in (lance, lancelet):
                    assert _ids(lib.dataset(os.path.join(clones, c))) == [0, 1, 2]
    assert _ids(lance.dataset(uri)) == [0, 1, 2]
