"""Base paths: datasets whose files live under several storage roots, shared with pylance 14.

Multi-base datasets written by either library are read and extended by the other; feature
flags 16 (base paths) and 256 (files of mixed format versions) are set as pylance sets them;
manifests whose base paths would lead reads elsewhere are refused as corrupt.
"""

from __future__ import annotations

import os
import struct

import pyarrow as pa
import pytest

import lancelet
from _lance_pb import _varint
from lancelet.errors import CorruptFileError, InvalidArgumentError

lance = pytest.importorskip("lance")

pytestmark = pytest.mark.interop


def _t(ids):
    return pa.table({"id": pa.array(list(ids), pa.int64())})


def _ids(ds) -> list:
    return sorted(ds.to_table(columns=["id"])["id"].to_pylist())


def _latest_manifest(root: str) -> str:
    d = os.path.join(root, "_versions")
    return os.path.join(d, min(f for f in os.listdir(d) if f.endswith(".manifest")))


def _flags(root: str) -> tuple:
    """(reader, writer) feature flags of the newest manifest (fields 9 and 10)."""
    with open(_latest_manifest(root), "rb") as f:
        data = f.read()
    (pos,) = struct.unpack("<q", data[-16:-8])
    (n,) = struct.unpack("<I", data[pos:pos + 4])
    body, i, found = data[pos + 4:pos + 4 + n], 0, {}
    while i < len(body):
        key, i = _varint(body, i)
        field, wire = key >> 3, key & 7
        if wire == 0:
            value, i = _varint(body, i)
            found[field] = value
        elif wire == 2:
            size, i = _varint(body, i)
            i += size
        elif wire == 1:
            i += 8
        elif wire == 5:
            i += 4
    return found.get(9, 0), found.get(10, 0)


def _files(d: str) -> list:
    return sorted(f for f in os.listdir(d) if f.endswith(".lance")) if os.path.isdir(d) else []


@pytest.mark.parametrize("maker", ["lance", "lancelet"])
def test_multi_base_dataset_is_shared(tmp_path, maker):
    mk = lance if maker == "lance" else lancelet
    other = lancelet if maker == "lance" else lance
    uri, flat, rooted = str(tmp_path / "d.lance"), str(tmp_path / "flat"), str(tmp_path / "rooted")
    bases = [mk.DatasetBasePath(flat, name="flat"), mk.DatasetBasePath(rooted, name="rooted", is_dataset_root=True)]
    mk.write_dataset(_t(range(3)), uri, initial_bases=bases, target_bases=["flat"])
    assert len(_files(flat)) == 1 and _files(os.path.join(uri, "data")) == []
    assert _flags(uri) == (16, 16)
    # The other library reads it and writes to the other base, by name then by path.
    got = other.dataset(uri)
    assert _ids(got) == [0, 1, 2]
    paths = got.base_paths()
    assert {i: (b.name, b.path, b.is_dataset_root) for i, b in paths.items()} == {
        1: ("flat", flat, False), 2: ("rooted", rooted, True)}
    other.write_dataset(_t([10]), uri, mode="append", target_bases=["rooted"])
    other.write_dataset(_t([11]), uri, mode="append", target_bases=[flat])
    other.write_dataset(_t([12]), uri, mode="append")  # the dataset's own root
    assert len(_files(os.path.join(rooted, "data"))) == 1 and len(_files(flat)) == 2
    assert len(_files(os.path.join(uri, "data"))) == 1
    for lib in (lance, lancelet):
        assert _ids(lib.dataset(uri)) == [0, 1, 2, 10, 11, 12]
    lance.dataset(uri).delete("id = 1")
    lancelet.dataset(uri).delete("id = 10")
    for lib in (lance, lancelet):
        assert _ids(lib.dataset(uri)) == [0, 2, 11, 12]
    assert _flags(uri) == (17, 17)


@pytest.mark.parametrize("maker", ["lance", "lancelet"])
def test_add_bases_then_write_there(tmp_path, maker):
    mk = lance if maker == "lance" else lancelet
    other = lancelet if maker == "lance" else lance
    uri, extra = str(tmp_path / "d.lance"), str(tmp_path / "extra")
    ds = mk.write_dataset(_t(range(2)), uri)
    assert _flags(uri) == (0, 0)
    ds = ds.add_bases([mk.DatasetBasePath(extra, name="x")])
    assert ds.version == 2 and _flags(uri) == (16, 16)
    assert {i: b.name for i, b in other.dataset(uri).base_paths().items()} == {1: "x"}
    other.write_dataset(_t([5]), uri, mode="append", target_bases=["x"])
    assert len(_files(extra)) == 1
    assert _ids(mk.dataset(uri)) == [0, 1, 5]
    other.dataset(uri).add_bases([other.DatasetBasePath(str(tmp_path / "more"))])
    assert sorted(mk.dataset(uri).base_paths()) == [1, 2]


def test_bad_base_arguments(tmp_path):
    uri = str(tmp_path / "d.lance")
    lancelet.write_dataset(_t(range(2)), uri)
    with pytest.raises(InvalidArgumentError):
        lancelet.write_dataset(_t([1]), uri, mode="append",
                               initial_bases=[lancelet.DatasetBasePath(str(tmp_path / "b"))])
    with pytest.raises(InvalidArgumentError):
        lancelet.write_dataset(_t([1]), uri, mode="append", target_bases=["nope"])
    ds = lancelet.dataset(uri).add_bases([lancelet.DatasetBasePath(str(tmp_path / "b"), name="b")])
    with pytest.raises(InvalidArgumentError):
        ds.add_bases([lancelet.DatasetBasePath(str(tmp_path / "c"), name="b")])  # duplicate name
    with pytest.raises(InvalidArgumentError):
        ds.add_bases([lancelet.DatasetBasePath(str(tmp_path / "b"))])  # duplicate path
    with pytest.raises(InvalidArgumentError):
        lancelet.DatasetBasePath(str(tmp_path), id=-1)
    assert lancelet.dataset(uri).version == 2  # the refused calls committed nothing


def test_mixed_file_versions_flag_is_read_and_kept(tmp_path):
    uri = str(tmp_path / "d.lance")
    lance.write_dataset(_t(range(2)), uri, data_storage_version="2.1")
    lance.write_dataset(_t([2]), uri, mode="append", data_storage_version="2.2")
    assert _flags(uri)[0] & 256
    ds = lancelet.dataset(uri)
    assert _ids(ds) == [0, 1, 2]
    lancelet.write_dataset(_t([3]), uri, mode="append")
    assert _flags(uri)[0] & 256
    assert _ids(lance.dataset(uri)) == [0, 1, 2, 3]


@pytest.mark.parametrize("how", ["climbs", "relative"])
def test_hostile_base_paths_are_corrupt(tmp_path, how):
    uri = str(tmp_path / "d.lance")
    ds = lancelet.write_dataset(_t(range(3)), uri)
    ds.create_branch("dev")
    manifest = _latest_manifest(os.path.join(uri, "tree", "dev"))
    with open(manifest, "rb") as f:
        data = f.read()
    old = uri.encode()
    assert old in data
    # Same length, so the protobuf stays well formed: only the path's meaning changes.
    new = old[:-3] + b"/.." if how == "climbs" else b"x" * len(old)
    with open(manifest, "wb") as f:
        f.write(data.replace(old, new))
    with pytest.raises(CorruptFileError):
        lancelet.dataset(uri + "/tree/dev").to_table()


def test_memory_bases_ignore_storage_options(tmp_path):
    """A base on a store that takes no options (``memory://`` here, like local disk)
    ignores them, unprefixed or ``base_{id}.`` ones, as pylance does. (That ``base_{id}.``
    options reach their base only is checked on S3 bases in test_base_paths_more.py.)"""
    uri = str(tmp_path / "d.lance")
    mem = "memory://base-options-test/b1"
    lancelet.write_dataset(_t(range(3)), uri, initial_bases=[lancelet.DatasetBasePath(mem, name="m")],
                           target_bases=["m"])
    lancelet.write_dataset(_t([7]), uri, mode="append")
    assert _ids(lancelet.dataset(uri)) == [0, 1, 2, 7]
    for opts in ({"base_2.bogus_option": "x"}, {"base_1.bogus_option": "x"}, {"aws_region": "x"}):
        assert _ids(lancelet.dataset(uri, storage_options=opts)) == [0, 1, 2, 7]
