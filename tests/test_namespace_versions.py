"""Table versions through a namespace, and managed versioning (a namespace with
``table_version_tracking_enabled``, whose writers commit with ``create_table_version``),
checked against pylance 14 both ways: pylance writes through lancelet's namespace and
lancelet writes through pylance's, in process and over REST, on local and S3 roots.
"""

from __future__ import annotations

import os
import uuid

import pyarrow as pa
import pytest

lance = pytest.importorskip("lance")
ln = pytest.importorskip("lance_namespace")

from _ns_support import KINDS, SERVED_BY, client, outcome, spy  # noqa: E402

import lancelet  # noqa: E402
from lancelet.namespace import DirectoryNamespace  # noqa: E402

pytestmark = pytest.mark.lancelet_only

T = ["t"]
DATA = pa.table({"id": pa.array([1, 2, 3], pa.int64()), "s": ["a", "b", "c"]})
TRACKED = {"table_version_tracking_enabled": "true"}


@pytest.fixture(params=["local", "s3"])
def where(request, tmp_path):
    """``(root, namespace properties, storage options, list of the root's file names)``."""
    if request.param == "local":
        root = str(tmp_path / "root")

        def files():
            return sorted(os.path.relpath(os.path.join(d, f), root) for d, _, fs in os.walk(root) for f in fs)

        return root, {}, None, files
    from _support import s3_options

    endpoint, s3 = request.getfixturevalue("s3_endpoint")
    prefix = uuid.uuid4().hex

    def keys():
        listed = s3.list_objects_v2(Bucket="lancelet", Prefix=prefix + "/")
        return sorted(o["Key"][len(prefix) + 1 :] for o in listed.get("Contents", []))

    opts = s3_options(endpoint)
    return f"s3://lancelet/{prefix}", {f"storage.{k}": v for k, v in opts.items()}, opts, keys


@pytest.mark.parametrize("kind", KINDS)
def test_managed_versioning_flag(kind, tmp_path):
    for props, expected in ((TRACKED, True), ({}, None)):
        root = str(tmp_path / f"r{expected}")
        with client(kind, root, **props) as ns:
            assert ns.declare_table(ln.DeclareTableRequest(id=["d"])).managed_versioning is expected
            assert ns.describe_table(ln.DescribeTableRequest(id=["d"])).managed_versioning is expected


def _staged(vdir: str, final: str, data: bytes) -> str:
    """Writes ``data`` as a staged manifest next to ``final``; returns its store path."""
    path = os.path.join(vdir, f"{final}-{uuid.uuid4()}")
    with open(path, "wb") as f:
        f.write(data)
    return path.lstrip("/")


def _create_version_cases(ns, root):
    """The create_table_version protocol: gaps, missing staging files, V1/V2 names,
    repeats, and batch_delete_table_versions ranges."""
    lance.write_dataset(DATA, os.path.join(root, "t.lance"))
    lance.write_dataset(DATA, os.path.join(root, "t.lance"), mode="append")
    vdir = os.path.join(root, "t.lance", "_versions")
    v2 = "18446744073709551613.manifest"
    with open(os.path.join(vdir, v2), "rb") as f:
        v2_bytes = f.read()
    os.unlink(os.path.join(vdir, v2))
    out = {}
    out["gap"] = outcome(lambda: ns.create_table_version(
        {"id": T, "version": 3, "manifest_path": _staged(vdir, v2, v2_bytes), "naming_scheme": "V2"}))
    out["relative_path"] = outcome(lambda: ns.create_table_version(
        {"id": T, "version": 2, "manifest_path": f"t.lance/_versions/{v2}-x", "naming_scheme": "V2"}))
    out["outside"] = outcome(lambda: ns.create_table_version(
        {"id": T, "version": 2, "manifest_path": os.path.join(root, "elsewhere").lstrip("/")}))
    for name in os.listdir(vdir):
        if "-" in name:
            os.unlink(os.path.join(vdir, name))
    staged = _staged(vdir, v2, v2_bytes)
    made = ns.create_table_version({"id": T, "version": 2, "manifest_path": staged, "manifest_size": len(v2_bytes),
                                    "naming_scheme": "V2"})
    made = made if isinstance(made, dict) else made.to_dict()
    out["made"] = (made["version"]["version"], made["version"]["manifest_path"],
                   made["version"]["manifest_size"] == len(v2_bytes))
    out["staged_left"] = sorted(n for n in os.listdir(vdir) if "-" in n)
    out["again"] = outcome(lambda: ns.create_table_version(
        {"id": T, "version": 2, "manifest_path": _staged(vdir, v2, b"other"), "naming_scheme": "V2"}))
    for name in os.listdir(vdir):
        if "-" in name:
            os.unlink(os.path.join(vdir, name))
    # V1 names, on a table that uses them
    lance.write_dataset(DATA, os.path.join(root, "v1.lance"), enable_v2_manifest_paths=False)
    lance.write_dataset(DATA, os.path.join(root, "v1.lance"), mode="append", enable_v2_manifest_paths=False)
    v1dir = os.path.join(root, "v1.lance", "_versions")
    with open(os.path.join(v1dir, "2.manifest"), "rb") as f:
        v1_bytes = f.read()
    os.unlink(os.path.join(v1dir, "2.manifest"))
    made = ns.create_table_version({"id": ["v1"], "version": 2, "manifest_path": _staged(v1dir, "2.manifest", v1_bytes),
                                    "naming_scheme": "V1"})
    made = made if isinstance(made, dict) else made.to_dict()
    out["v1_name"] = os.path.basename(made["version"]["manifest_path"])
    out["v1_files"] = sorted(n for n in os.listdir(v1dir) if n.endswith(".manifest"))
    # versions listed and deleted: ranges are [start, end)
    lance.write_dataset(DATA, os.path.join(root, "t.lance"), mode="append")
    listed = ns.list_table_versions(ln.ListTableVersionsRequest(id=T, limit=1, descending=True))
    out["latest"] = [v.version for v in listed.versions]
    deleted = ns.batch_delete_table_versions({"id": T, "ranges": [{"start_version": 1, "end_version": 2},
                                                                  {"start_version": 3, "end_version": 3}]})
    deleted = deleted if isinstance(deleted, dict) else deleted.to_dict()
    out["deleted"] = deleted["deleted_count"]
    out["left"] = [v.version for v in ns.list_table_versions(ln.ListTableVersionsRequest(id=T)).versions]
    return out  # fmt: skip


@pytest.mark.parametrize("kind", KINDS)
def test_create_table_version_matches_pylance(kind, tmp_path):
    (tmp_path / "p").mkdir()
    (tmp_path / "l").mkdir()
    with client("theirs", str(tmp_path / "p")) as ns:
        expected = _create_version_cases(ns, str(tmp_path / "p"))
    with client(kind, str(tmp_path / "l")) as ns:
        got = _create_version_cases(ns, str(tmp_path / "l"))
    assert got["made"][1] == str(tmp_path / "l" / "t.lance" / "_versions" / "18446744073709551613.manifest").lstrip("/")
    expected["made"] = (expected["made"][0], None, expected["made"][2])
    got["made"] = (got["made"][0], None, got["made"][2])
    assert got == expected
    assert got["made"] == (2, None, True)
    assert got["gap"] == {"error": "ConcurrentModificationError"}
    assert got["relative_path"] == {"error": "InvalidInputError"}
    assert got["again"] == {"error": "ConcurrentModificationError"}
    assert got["staged_left"] == [] and got["v1_name"] == "2.manifest"
    assert got["deleted"] == 1 and got["left"] == [2, 3]
    # the table the namespace finished is whole for both libraries
    for lib in (lance, lancelet):
        assert lib.dataset(str(tmp_path / "l" / "t.lance"), version=2).count_rows() == 6


def _no_staging(files):
    return [f for f in files() if ".manifest-" in f]


@pytest.mark.parametrize("kind", [k for k in KINDS if SERVED_BY[k] == "lancelet"])
def test_pylance_writes_through_lancelet_managed_namespace(kind, where):
    root, props, opts, files = where
    calls = []
    with client(kind, root, **TRACKED, **props) as inner:
        ns = spy(inner, calls)
        lance.write_dataset(DATA, namespace_client=ns, table_id=T, storage_options=opts)
        lance.write_dataset(DATA, namespace_client=ns, table_id=T, mode="append", storage_options=opts)
        ds = lance.dataset(namespace_client=ns, table_id=T, storage_options=opts)
        ds.delete("id = 1")
        ds.create_scalar_index("id", "BTREE")
        assert lance.dataset(namespace_client=ns, table_id=T, storage_options=opts, version=2).count_rows() == 6
        created = [c for name, c in calls if name == "create_table_version"]
        assert [c["version"] for c in created] == [1, 2, 3, 4]
        assert all(c["naming_scheme"] == "V2" and ".manifest-" in c["manifest_path"] for c in created)
        assert ("describe_table_version", {"id": T, "version": 2}) in [(n, {k: c[k] for k in ("id", "version")})
                                                                      for n, c in calls if n == "describe_table_version"]
        for lib in (lance, lancelet):
            got = lib.dataset(namespace_client=inner, table_id=T, storage_options=opts)
            assert got.version == 4 and got.count_rows() == 4
            assert [i["name"] for i in got.list_indices()] == ["id_idx"]
    assert _no_staging(files) == []  # fmt: skip


@pytest.mark.parametrize("kind", KINDS)
def test_lancelet_writes_through_managed_namespace(kind, where):
    """lancelet as the writer: every commit (create, append, delete, index, new column,
    tag) is a staged manifest plus create_table_version, against both libraries'
    namespaces, in process and over REST."""
    root, props, opts, files = where
    calls = []
    with client(kind, root, **TRACKED, **props) as inner:
        ns = spy(inner, calls)
        ds = lancelet.write_dataset(DATA, namespace_client=ns, table_id=T, storage_options=opts)
        lancelet.write_dataset(DATA, namespace_client=ns, table_id=T, mode="append", storage_options=opts)
        ds = lancelet.dataset(namespace_client=ns, table_id=T, storage_options=opts)
        ds.delete("id = 1")
        ds.create_scalar_index("id", "BTREE")
        ds.add_columns({"twice": "id * 2"})
        ds.insert(DATA)
        created = [c for name, c in calls if name == "create_table_version"]
        assert [c["version"] for c in created] == [1, 2, 3, 4, 5, 6]
        assert all(c["naming_scheme"] == "V2" and ".manifest-" in c["manifest_path"] for c in created)
        assert all(c["id"] == T for c in created)
        for lib in (lance, lancelet):
            got = lib.dataset(namespace_client=inner, table_id=T, storage_options=opts)
            assert got.version == 6 and got.count_rows() == 7
            assert got.schema.names == ["id", "s", "twice"]
    assert _no_staging(files) == []


@pytest.mark.parametrize("kind", ["ours", "theirs"])
def test_lancelet_retries_when_the_namespace_reports_a_concurrent_version(kind, tmp_path):
    """A version taken between lancelet's read and its commit: the namespace refuses it
    (ConcurrentModificationError), lancelet rebases on the newer version and commits the
    next one (pylance reports the outcome as unknown instead)."""
    root = str(tmp_path)
    calls = []
    with client(kind, root, **TRACKED) as inner:
        lancelet.write_dataset(DATA, namespace_client=inner, table_id=T)
        location = inner.describe_table(ln.DescribeTableRequest(id=T)).location
        raced = []

        def before(name, request):
            if name == "create_table_version" and not raced:
                raced.append(True)
                lance.write_dataset(DATA, location, mode="append")  # a writer bypassing the namespace

        ns = spy(inner, calls, before)
        ds = lancelet.dataset(namespace_client=ns, table_id=T)
        ds.insert(DATA)
        created = [c["version"] for name, c in calls if name == "create_table_version"]
        assert created == [2, 3]
        assert lance.dataset(location).count_rows() == 9
        assert lancelet.dataset(location).version == 3
    assert not [f for f in os.listdir(os.path.join(location.replace("file://", ""), "_versions")) if "-" in f]


def test_without_tracking_lancelet_commits_directly(tmp_path):
    calls = []
    ns = spy(DirectoryNamespace(root=str(tmp_path)), calls)
    lancelet.write_dataset(DATA, namespace_client=ns, table_id=T)
    lancelet.dataset(namespace_client=ns, table_id=T).delete("id = 1")
    assert "create_table_version" not in [name for name, _ in calls]
    assert lance.dataset(str(tmp_path / "t.lance")).count_rows() == 2


def test_lancelet_refuses_mixing_manifest_naming_schemes(tmp_path):
    """pylance's namespace accepts a V1 version in a V2 table (which then cannot be
    opened); lancelet's refuses it and leaves the table readable."""
    ns = DirectoryNamespace(root=str(tmp_path))
    lance.write_dataset(DATA, str(tmp_path / "t.lance"))
    vdir = str(tmp_path / "t.lance" / "_versions")
    with open(os.path.join(vdir, "18446744073709551614.manifest"), "rb") as f:
        data = f.read()
    staged = _staged(vdir, "2.manifest", data)
    with pytest.raises(ln.InvalidInputError):
        ns.create_table_version({"id": T, "version": 2, "manifest_path": staged, "naming_scheme": "V1"})
    assert not os.path.exists(os.path.join(vdir, "2.manifest"))
    assert lance.dataset(str(tmp_path / "t.lance")).count_rows() == 3
