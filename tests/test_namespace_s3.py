"""Directory namespaces rooted on S3 (SeaweedFS, the ``s3_endpoint`` fixture of
``conftest.py``): lancelet's and pylance's share one catalog under an ``s3://`` prefix, with
the same object layout, and serve it over REST.
"""

from __future__ import annotations

import re
import uuid

import pyarrow as pa
import pytest

lance = pytest.importorskip("lance")
ln = pytest.importorskip("lance_namespace")

from _ns_support import client, ipc  # noqa: E402

import lancelet  # noqa: E402
from lancelet.namespace import DirectoryNamespace  # noqa: E402

pytestmark = pytest.mark.lancelet_only

T = pa.table({"id": [1, 2, 3], "name": ["a", "b", "c"]})


def _s3root(server):
    from _support import s3_options

    endpoint, s3 = server
    prefix = f"{uuid.uuid4().hex}/cat"
    opts = s3_options(endpoint)

    def keys():
        listed = s3.get_paginator("list_objects_v2").paginate(Bucket="lancelet", Prefix=prefix + "/")
        return sorted(o["Key"][len(prefix) + 1 :] for page in listed for o in page.get("Contents", []))

    return f"s3://lancelet/{prefix}", {f"storage.{k}": v for k, v in opts.items()}, opts, keys


@pytest.fixture
def s3root(s3_endpoint):
    """``(root URI, namespace properties, storage options, object keys under the root)``."""
    return _s3root(s3_endpoint)


@pytest.fixture
def moto_s3root(moto_s3_endpoint):
    """``s3root`` on moto's mock server, for the one test SeaweedFS cannot serve."""
    return _s3root(moto_s3_endpoint)


def _build(ns, lib, opts):
    ns.create_namespace(ln.CreateNamespaceRequest(id=["sales"], properties={"owner": "ana"}))
    ns.create_namespace(ln.CreateNamespaceRequest(id=["sales", "eu"]))
    lib.write_dataset(T, namespace_client=ns, table_id=["sales", "orders"], storage_options=opts)
    lib.write_dataset(T, namespace_client=ns, table_id=["sales", "orders"], mode="append", storage_options=opts)
    lib.write_dataset(T, namespace_client=ns, table_id=["sales", "eu", "shops"], storage_options=opts)
    lib.write_dataset(T, namespace_client=ns, table_id=["top"], storage_options=opts)
    ns.create_table(ln.CreateTableRequest(id=["sales", "ipc"]), ipc(T))
    ns.declare_table(ln.DeclareTableRequest(id=["sales", "later"]))


def _catalog(ns):
    out = {}

    def walk(parts):
        tables = ns.list_tables(ln.ListTablesRequest(id=parts)).tables
        props = ns.describe_namespace(ln.DescribeNamespaceRequest(id=parts)).properties if parts else {}
        out["$".join(parts)] = (dict(props or {}), sorted(tables))
        for child in ns.list_namespaces(ln.ListNamespacesRequest(id=parts)).namespaces:
            walk(parts + [child])

    walk([])
    return out


EXPECTED = {"": ({}, ["top"]), "sales": ({"owner": "ana"}, ["ipc", "later", "orders"]), "sales$eu": ({}, ["shops"])}


@pytest.mark.parametrize("writer", ["lancelet", "pylance"])
def test_s3_catalog_is_shared(writer, s3root):
    root, props, opts, _ = s3root
    libs = {"lancelet": lancelet, "pylance": lance}
    reader = "pylance" if writer == "lancelet" else "lancelet"
    with client("ours" if writer == "lancelet" else "theirs", root, **props) as ns:
        _build(ns, libs[writer], opts)
    with client("ours" if reader == "lancelet" else "theirs", root, **props) as ns:
        assert _catalog(ns) == EXPECTED
        lib = libs[reader]
        assert lib.dataset(namespace_client=ns, table_id=["sales", "orders"], storage_options=opts).count_rows() == 6
        assert lib.dataset(namespace_client=ns, table_id=["sales", "eu", "shops"], storage_options=opts).to_table() == T
        assert lib.dataset(namespace_client=ns, table_id=["sales", "ipc"], storage_options=opts).to_table() == T
        location = ns.describe_table(ln.DescribeTableRequest(id=["top"])).location
        assert location == f"{root}/top.lance"
        lib.write_dataset(T, namespace_client=ns, table_id=["sales", "later"], mode="append", storage_options=opts)
    with client("ours" if writer == "lancelet" else "theirs", root, **props) as ns:
        assert libs[writer].dataset(namespace_client=ns, table_id=["sales", "later"],
                                    storage_options=opts).count_rows() == 3


def _masked(keys):
    """Object keys with random parts (8-hex table prefixes, data and transaction file
    names) masked, manifest counts kept."""
    out = []
    for k in keys:
        k = re.sub(r"^[0-9a-f]{8}_", "HEX_", k)
        k = re.sub(r"/data/[^/]+$", "/data/FILE", k)
        k = re.sub(r"/_transactions/[^/]+$", "/_transactions/FILE", k)
        k = re.sub(r"/_indices/.*$", "/_indices/FILE", k)
        out.append(k)
    return sorted(out)


def test_s3_layout_matches_pylance(s3_endpoint):
    from _support import s3_options

    endpoint, s3 = s3_endpoint
    opts = s3_options(endpoint)
    props = {f"storage.{k}": v for k, v in opts.items()}
    layouts, rows = {}, {}
    for kind, lib in (("ours", lancelet), ("theirs", lance)):
        prefix = f"{uuid.uuid4().hex}/cat"
        with client(kind, f"s3://lancelet/{prefix}", **props) as ns:
            _build(ns, lib, opts)
        listed = s3.get_paginator("list_objects_v2").paginate(Bucket="lancelet", Prefix=prefix + "/")
        keys = [o["Key"][len(prefix) + 1 :] for page in listed for o in page.get("Contents", [])]
        # (lancelet keeps pylance's latest_version_hint.json on S3 too; pylance 14 only on disk)
        layouts[kind] = _masked(k for k in keys if not k.startswith("__manifest/")
                                and not k.endswith("/latest_version_hint.json"))
        reserved = [k for k in keys if k.endswith(".lance-reserved")]
        assert s3.get_object(Bucket="lancelet", Key=f"{prefix}/{reserved[0]}")["Body"].read() == b"reserved"
        manifest = lance.dataset(f"s3://lancelet/{prefix}/__manifest", storage_options=opts).to_table().to_pylist()
        rows[kind] = sorted((r["object_id"], r["object_type"], r["metadata"]) for r in manifest)
    assert layouts["ours"] == layouts["theirs"]
    assert rows["ours"] == rows["theirs"]
    assert "top.lance/_versions/18446744073709551614.manifest" in layouts["ours"]


@pytest.mark.parametrize("kind", ["ours", "theirs", "pylance_rest", "lancelet_rest"])
def test_s3_vend_input_storage_options(kind, s3root):
    root, props, opts, _ = s3root
    for vend, expected in (("false", None), ("true", opts)):
        with client(kind, f"{root}/{vend}", vend_input_storage_options=vend, **props) as ns:
            created = ns.create_table(ln.CreateTableRequest(id=["c"]), ipc(T))
            assert created.storage_options == opts  # create_table hands them out either way
            assert ns.declare_table(ln.DeclareTableRequest(id=["d"])).storage_options == expected
            assert ns.describe_table(ln.DescribeTableRequest(id=["c"])).storage_options == expected
            if vend == "true":  # then the libraries need no options of their own
                assert lancelet.dataset(namespace_client=ns, table_id=["c"]).to_table() == T
                assert lance.dataset(namespace_client=ns, table_id=["c"]).to_table() == T


# On moto, not SeaweedFS: SeaweedFS keeps a "directory" whose last object was deleted and
# lists it as a common prefix for 2.5 minutes more (its filer's EmptyFolderCleaner removes
# empty directories only after 2 min, checking every 30 s; AWS S3 lists no prefix without
# objects). pylance's namespace lists by common prefix, so after drop_table it would still
# list (and describe) the dropped table; lancelet's (which wants a file under it) would not.
def test_s3_dir_listing_drop_and_deregister(moto_s3root):
    root, props, opts, keys = moto_s3root
    lance.write_dataset(T, f"{root}/stray.lance", storage_options=opts)
    lancelet.write_dataset(T, f"{root}/mine.lance", storage_options=opts)
    for kind in ("ours", "theirs"):
        with client(kind, root, **props) as ns:
            assert ns.list_tables(ln.ListTablesRequest(id=[])).tables == ["mine", "stray"]
    ours = DirectoryNamespace(root=root, **props)
    ours.create_namespace(ln.CreateNamespaceRequest(id=["a"]))
    lancelet.write_dataset(T, namespace_client=ours, table_id=["a", "t"], storage_options=opts)
    rel = ours.describe_table(ln.DescribeTableRequest(id=["a", "t"])).location.rsplit("/", 1)[1]
    assert any(k.startswith(rel + "/") for k in keys())
    ours.drop_table(ln.DropTableRequest(id=["a", "t"]))
    assert not any(k.startswith(rel + "/") for k in keys())
    ours.drop_table(ln.DropTableRequest(id=["stray"]))
    assert not any(k.startswith("stray.lance/") for k in keys())
    with client("theirs", root, **props) as theirs:
        assert theirs.list_tables(ln.ListTablesRequest(id=[])).tables == ["mine"]
    with pytest.raises(ln.UnsupportedOperationError):  # moving a root table's objects is refused
        ours.rename_table(ln.RenameTableRequest(id=["mine"], new_table_name="other"))
    assert ours.namespace_id() == f'DirectoryNamespace {{ root: "{root}" }}'


@pytest.mark.parametrize("kind", ["pylance_rest", "lancelet_rest"])
def test_rest_over_s3_root(kind, s3root):
    root, props, opts, _ = s3root
    with client(kind, root, **props) as ns:
        _build(ns, lance if kind == "pylance_rest" else lancelet, opts)
        assert _catalog(ns) == EXPECTED
        for lib in (lance, lancelet):
            assert lib.dataset(namespace_client=ns, table_id=["sales", "orders"], storage_options=opts).count_rows() == 6
        assert ns.count_table_rows(ln.CountTableRowsRequest(id=["sales", "ipc"])).count == 3


def test_memory_root_within_one_process():
    """``memory://`` roots work for lancelet (pylance 14 loses tables created there)."""
    root = f"memory://ns-{uuid.uuid4().hex}"
    ns = DirectoryNamespace(root=root)
    ns.create_namespace(ln.CreateNamespaceRequest(id=["a"]))
    lancelet.write_dataset(T, namespace_client=ns, table_id=["a", "t"])
    ns.create_table(ln.CreateTableRequest(id=["top"]), ipc(T))
    again = DirectoryNamespace(root=root)
    assert _catalog(again) == {"": ({}, ["top"]), "a": ({}, ["t"])}
    assert lancelet.dataset(namespace_client=again, table_id=["a", "t"]).to_table() == T
    assert again.describe_table(ln.DescribeTableRequest(id=["top"])).location == f"{root}/top.lance"
    again.drop_table(ln.DropTableRequest(id=["a", "t"]))
    assert ns.list_tables(ln.ListTablesRequest(id=["a"])).tables == []


def test_cli_ls_on_s3(s3root):
    import subprocess
    import sys

    root, props, opts, _ = s3root
    with client("theirs", root, **props) as ns:
        _build(ns, lance, opts)
    args = [a for k, v in opts.items() for a in ("--storage-option", f"{k}={v}")]
    out = subprocess.run([sys.executable, "-m", "lancelet", "ls", root, *args], capture_output=True, text=True,
                         check=True).stdout
    lines = [line.split()[:3] for line in out.splitlines()]
    assert ["top", "3", "1"] in lines and ["orders", "6", "2"] in lines and ["sales/"] in lines
