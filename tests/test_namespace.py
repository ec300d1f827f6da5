"""Namespaces (catalogs of tables): lancelet's DirectoryNamespace, REST client and server,
``dataset``/``write_dataset`` through ``namespace_client=``, and ``lancelet ls``, checked
against pylance 14's ``lance.namespace`` in both directions: what one library creates in a
catalog, the other lists, describes, opens and extends, over the directory and over REST.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import urllib.error
import urllib.request

import pyarrow as pa
import pytest

lance = pytest.importorskip("lance")
ln = pytest.importorskip("lance_namespace")

import lance.namespace as pyns  # noqa: E402

import lancelet  # noqa: E402
from lancelet.namespace import DirectoryNamespace, RestAdapter, RestNamespace  # noqa: E402

pytestmark = pytest.mark.lancelet_only

T = pa.table({"id": [1, 2, 3], "name": ["a", "b", "c"]})


def _ipc(table: pa.Table) -> bytes:
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as w:
        w.write_table(table)
    return sink.getvalue().to_pybytes()


def _ours(root) -> DirectoryNamespace:
    return DirectoryNamespace(root=str(root))


def _theirs(root):
    return pyns.DirectoryNamespace(root=str(root))


def _catalog(ns):
    """Everything a client sees: {namespace id: (properties, tables)}, recursively."""
    out = {}

    def walk(parts):
        tables = ns.list_tables(ln.ListTablesRequest(id=parts)).tables
        props = ns.describe_namespace(ln.DescribeNamespaceRequest(id=parts)).properties if parts else {}
        out["$".join(parts)] = (dict(props or {}), sorted(tables))
        for child in ns.list_namespaces(ln.ListNamespacesRequest(id=parts)).namespaces:
            walk(parts + [child])

    walk([])
    return out


def _build(ns, lib):
    """The same catalog, made through ``ns`` with ``lib`` (lance or lancelet) writing data."""
    ns.create_namespace(ln.CreateNamespaceRequest(id=["sales"], properties={"owner": "ana"}))
    ns.create_namespace(ln.CreateNamespaceRequest(id=["sales", "eu"]))
    lib.write_dataset(T, namespace_client=ns, table_id=["sales", "orders"])
    lib.write_dataset(T, namespace_client=ns, table_id=["sales", "orders"], mode="append")
    lib.write_dataset(T, namespace_client=ns, table_id=["sales", "eu", "shops"])
    lib.write_dataset(T, namespace_client=ns, table_id=["top"])
    ns.create_table(ln.CreateTableRequest(id=["sales", "ipc"]), _ipc(T))
    ns.declare_table(ln.DeclareTableRequest(id=["sales", "later"]))


EXPECTED = {
    "": ({}, ["top"]),
    "sales": ({"owner": "ana"}, ["ipc", "later", "orders"]),
    "sales$eu": ({}, ["shops"]),
}


def _check_tables(ns, lib):
    assert lib.dataset(namespace_client=ns, table_id=["sales", "orders"]).count_rows() == 6
    assert lib.dataset(namespace_client=ns, table_id=["sales", "eu", "shops"]).to_table() == T
    assert lib.dataset(namespace_client=ns, table_id=["top"]).count_rows() == 3
    assert lib.dataset(namespace_client=ns, table_id=["sales", "ipc"]).to_table() == T


# -- directory namespace ---------------------------------------------------------------


def test_manifest_table_has_pylances_schema_and_rows(tmp_path):
    _build(_ours(tmp_path / "l"), lancelet)
    _build(_theirs(tmp_path / "p"), lance)
    ours = lance.dataset(str(tmp_path / "l" / "__manifest"))
    theirs = lance.dataset(str(tmp_path / "p" / "__manifest"))
    assert ours.schema.equals(theirs.schema, check_metadata=True)
    assert "unenforced_primary_key_position: Some(0)" in str(ours.lance_schema)

    def rows(ds):
        out = {}
        for r in ds.to_table().to_pylist():
            loc = r["location"]
            if loc and "_" in loc and not loc.endswith(".lance"):  # random 8-hex prefix
                prefix, rest = loc.split("_", 1)
                assert len(prefix) == 8 and int(prefix, 16) >= 0 and rest == r["object_id"]
                loc = "HEX_" + rest
            out[r["object_id"]] = (r["object_type"], loc, r["metadata"], r["base_objects"])
        return out

    assert rows(ours) == rows(theirs)
    assert rows(ours)["sales"] == ("namespace", None, '{"owner":"ana"}', None)
    assert rows(ours)["top"] == ("table", "top.lance", None, None)
    # declared tables get the same marker
    later = [d for d in os.listdir(tmp_path / "l") if d.endswith("_sales$later")][0]
    assert (tmp_path / "l" / later / ".lance-reserved").read_bytes() == b"reserved"


@pytest.mark.parametrize("writer", ["lancelet", "pylance"])
def test_directory_catalog_is_shared(tmp_path, writer):
    """A catalog made by one library is listed, opened and extended by the other."""
    if writer == "lancelet":
        _build(_ours(tmp_path), lancelet)
        reader_ns, reader_lib = _theirs(tmp_path), lance
    else:
        _build(_theirs(tmp_path), lance)
        reader_ns, reader_lib = _ours(tmp_path), lancelet
    assert _catalog(reader_ns) == EXPECTED
    _check_tables(reader_ns, reader_lib)
    # the reader extends it, the writer sees that
    # a declared table is written with mode="append" (create would declare it again)
    reader_lib.write_dataset(T, namespace_client=reader_ns, table_id=["sales", "later"], mode="append")
    reader_lib.write_dataset(T, namespace_client=reader_ns, table_id=["sales", "orders"], mode="append")
    reader_ns.create_namespace(ln.CreateNamespaceRequest(id=["hr"], properties={"k": "v"}))
    writer_ns = _ours(tmp_path) if writer == "lancelet" else _theirs(tmp_path)
    writer_lib = lancelet if writer == "lancelet" else lance
    assert writer_lib.dataset(namespace_client=writer_ns, table_id=["sales", "later"]).count_rows() == 3
    assert writer_lib.dataset(namespace_client=writer_ns, table_id=["sales", "orders"]).count_rows() == 9
    assert writer_ns.describe_namespace(ln.DescribeNamespaceRequest(id=["hr"])).properties == {"k": "v"}


def test_each_library_opens_tables_through_the_others_client(tmp_path):
    ours, theirs = _ours(tmp_path), _theirs(tmp_path)
    lance.write_dataset(T, namespace_client=ours, table_id=["a"])           # pylance writes via our client
    lancelet.write_dataset(T, namespace_client=theirs, table_id=["b"])      # and we via pylance's
    assert lancelet.dataset(namespace_client=theirs, table_id=["a"]).to_table() == T
    assert lance.dataset(namespace_client=ours, table_id=["b"]).to_table() == T
    assert sorted(theirs.list_tables(ln.ListTablesRequest(id=[])).tables) == ["a", "b"]


def test_root_tables_from_plain_directories_are_listed(tmp_path):
    lance.write_dataset(T, str(tmp_path / "stray.lance"))
    lancelet.write_dataset(T, str(tmp_path / "mine.lance"))
    for ns in (_ours(tmp_path), _theirs(tmp_path)):
        assert ns.list_tables(ln.ListTablesRequest(id=[])).tables == ["mine", "stray"]
    assert lancelet.dataset(namespace_client=_ours(tmp_path), table_id=["stray"]).count_rows() == 3


def test_describe_table(tmp_path):
    ns = _ours(tmp_path)
    ns.create_namespace(ln.CreateNamespaceRequest(id=["a"]))
    lancelet.write_dataset(T, namespace_client=ns, table_id=["a", "t"])
    ns.declare_table(ln.DeclareTableRequest(id=["a", "d"]))
    ours = ns.describe_table(ln.DescribeTableRequest(id=["a", "t"], load_detailed_metadata=True))
    theirs = _theirs(tmp_path).describe_table(ln.DescribeTableRequest(id=["a", "t"], load_detailed_metadata=True))
    for key in ("table", "namespace", "version", "location", "table_uri", "is_only_declared"):
        assert getattr(ours, key) == getattr(theirs, key), key
    assert ours.location.startswith("file://")
    assert ours.var_schema.to_dict() == theirs.var_schema.to_dict()
    assert ours.metadata["total_rows"] == "3"
    declared = ns.describe_table(ln.DescribeTableRequest(id=["a", "d"], load_detailed_metadata=True))
    assert declared.is_only_declared is True
    assert ns.list_tables(ln.ListTablesRequest(id=["a"], include_declared=False)).tables == ["t"]
    with pytest.raises(ln.TableNotFoundError):
        ns.describe_table(ln.DescribeTableRequest(id=["a", "nope"]))


def test_errors_are_the_specs(tmp_path):
    ns = _ours(tmp_path)
    ns.create_namespace(ln.CreateNamespaceRequest(id=["a"]))
    with pytest.raises(ln.NamespaceAlreadyExistsError):
        ns.create_namespace(ln.CreateNamespaceRequest(id=["a"]))
    ns.create_namespace(ln.CreateNamespaceRequest(id=["a"], mode="exist_ok"))  # pylance 14 refuses this
    with pytest.raises(ln.NamespaceNotFoundError):
        ns.create_namespace(ln.CreateNamespaceRequest(id=["x", "y"]))
    with pytest.raises(ln.NamespaceNotFoundError):
        ns.namespace_exists(ln.NamespaceExistsRequest(id=["x"]))
    ns.namespace_exists(ln.NamespaceExistsRequest(id=["a"]))
    lancelet.write_dataset(T, namespace_client=ns, table_id=["a", "t"])
    with pytest.raises(ln.TableAlreadyExistsError):
        lancelet.write_dataset(T, namespace_client=ns, table_id=["a", "t"])
    with pytest.raises(ln.TableAlreadyExistsError):
        ns.create_table(ln.CreateTableRequest(id=["a", "t"]), _ipc(T))
    with pytest.raises(ln.NamespaceNotFoundError):
        ns.declare_table(ln.DeclareTableRequest(id=["x", "t"]))
    with pytest.raises(ln.NamespaceNotEmptyError):
        ns.drop_namespace(ln.DropNamespaceRequest(id=["a"]))
    # declare_table takes only the location the layout would choose, as pylance does
    for client in (ns, _theirs(tmp_path)):
        with pytest.raises(ln.InvalidInputError):
            client.declare_table(ln.DeclareTableRequest(id=["custom"], location=str(tmp_path / "elsewhere")))
    ns.declare_table(ln.DeclareTableRequest(id=["root_t"], location=str(tmp_path / "root_t.lance")))
    with pytest.raises(ln.TableNotFoundError):
        lancelet.dataset(namespace_client=ns, table_id=["a", "nope"])
    with pytest.raises(ValueError):
        lancelet.dataset(str(tmp_path), namespace_client=ns, table_id=["a", "t"])
    with pytest.raises(ValueError):
        lancelet.dataset(namespace_client=ns)
    with pytest.raises(ValueError):
        lancelet.write_dataset(T, table_id=["a", "t"])


def test_drop_deregister_register(tmp_path):
    ns = _ours(tmp_path)
    ns.create_namespace(ln.CreateNamespaceRequest(id=["a"]))
    lancelet.write_dataset(T, namespace_client=ns, table_id=["a", "t"])
    lancelet.write_dataset(T, namespace_client=ns, table_id=["a", "gone"])
    lancelet.write_dataset(T, namespace_client=ns, table_id=["root"])
    loc = ns.describe_table(ln.DescribeTableRequest(id=["a", "t"])).location
    rel = loc.rsplit("/", 1)[1]

    ns.deregister_table(ln.DeregisterTableRequest(id=["a", "t"]))     # data kept
    assert (tmp_path / rel / "_versions").is_dir()
    ns.deregister_table(ln.DeregisterTableRequest(id=["root"]))       # a root table: hidden from listing too
    for client in (ns, _theirs(tmp_path)):
        assert client.list_tables(ln.ListTablesRequest(id=["a"])).tables == ["gone"]
        assert client.list_tables(ln.ListTablesRequest(id=[])).tables == []
    gone = ns.drop_table(ln.DropTableRequest(id=["a", "gone"])).location  # data deleted
    assert not os.path.exists(gone[len("file://"):])

    with pytest.raises(ln.InvalidInputError):
        ns.register_table(ln.RegisterTableRequest(id=["a", "back"], location=str(tmp_path / rel)))
    with pytest.raises(ln.InvalidInputError):
        ns.register_table(ln.RegisterTableRequest(id=["a", "back"], location="../elsewhere"))
    ns.register_table(ln.RegisterTableRequest(id=["a", "back"], location=rel))
    ns.register_table(ln.RegisterTableRequest(id=["root"], location="root.lance"))
    assert lance.dataset(namespace_client=_theirs(tmp_path), table_id=["a", "back"]).count_rows() == 3
    assert _theirs(tmp_path).list_tables(ln.ListTablesRequest(id=[])).tables == ["root"]

    ns.drop_namespace(ln.DropNamespaceRequest(id=["a"], behavior="Cascade"))
    assert not (tmp_path / rel).exists()
    assert _theirs(tmp_path).list_namespaces(ln.ListNamespacesRequest(id=[])).namespaces == []


def test_rename_table(tmp_path):
    ns = _ours(tmp_path)
    ns.create_namespace(ln.CreateNamespaceRequest(id=["a"]))
    ns.create_namespace(ln.CreateNamespaceRequest(id=["b"]))
    lancelet.write_dataset(T, namespace_client=ns, table_id=["a", "t"])
    lancelet.write_dataset(T, namespace_client=ns, table_id=["root"])
    ns.rename_table(ln.RenameTableRequest(id=["a", "t"], new_table_name="u", new_namespace_id=["b"]))
    ns.rename_table(ln.RenameTableRequest(id=["root"], new_table_name="top"))
    with pytest.raises(ln.TableAlreadyExistsError):
        ns.rename_table(ln.RenameTableRequest(id=["top"], new_table_name="u", new_namespace_id=["b"]))
    with pytest.raises(ln.NamespaceNotFoundError):
        ns.rename_table(ln.RenameTableRequest(id=["top"], new_table_name="x", new_namespace_id=["nope"]))
    theirs = _theirs(tmp_path)
    assert _catalog(theirs) == {"": ({}, ["top"]), "a": ({}, []), "b": ({}, ["u"])}
    assert lance.dataset(namespace_client=theirs, table_id=["b", "u"]).count_rows() == 3
    assert lance.dataset(namespace_client=theirs, table_id=["top"]).count_rows() == 3


def test_paging(tmp_path):
    ns = _ours(tmp_path)
    for name in ["c", "a", "b"]:
        ns.declare_table(ln.DeclareTableRequest(id=[name]))
        ns.create_namespace(ln.CreateNamespaceRequest(id=["n" + name]))
    seen, token = [], None
    while True:
        page = ns.list_tables(ln.ListTablesRequest(id=[], limit=2, page_token=token))
        seen += page.tables
        token = page.page_token
        if not token:
            break
    assert seen == ["a", "b", "c"]
    first = ns.list_namespaces(ln.ListNamespacesRequest(id=[], limit=1))
    assert first.namespaces == ["na"] and first.page_token == "na"


def test_tags_versions_counts(tmp_path):
    ns = _ours(tmp_path)
    lancelet.write_dataset(T, namespace_client=ns, table_id=["t"])
    lance.write_dataset(T, namespace_client=_theirs(tmp_path), table_id=["t"], mode="append")
    ident = ["t"]
    ns.create_table_tag(ln.CreateTableTagRequest(id=ident, tag="first", version=1))
    with pytest.raises(ln.TableTagAlreadyExistsError):
        ns.create_table_tag(ln.CreateTableTagRequest(id=ident, tag="first", version=1))
    assert lance.dataset(str(tmp_path / "t.lance")).tags.list()["first"]["version"] == 1
    assert ns.get_table_tag_version(ln.GetTableTagVersionRequest(id=ident, tag="first")).version == 1
    ns.update_table_tag(ln.UpdateTableTagRequest(id=ident, tag="first", version=2))
    theirs = _theirs(tmp_path).list_table_tags(ln.ListTableTagsRequest(id=ident)).tags
    assert theirs["first"].version == 2
    assert ns.list_table_tags(ln.ListTableTagsRequest(id=ident)).tags["first"].version == 2
    ns.delete_table_tag(ln.DeleteTableTagRequest(id=ident, tag="first"))
    with pytest.raises(ln.TableTagNotFoundError):
        ns.get_table_tag_version(ln.GetTableTagVersionRequest(id=ident, tag="first"))

    ours = ns.list_table_versions(ln.ListTableVersionsRequest(id=ident)).versions
    theirs = _theirs(tmp_path).list_table_versions(ln.ListTableVersionsRequest(id=ident)).versions
    assert [(v.version, v.manifest_path, v.manifest_size) for v in ours] == \
        [(v.version, v.manifest_path, v.manifest_size) for v in theirs]
    assert ns.describe_table_version(ln.DescribeTableVersionRequest(id=ident, version=1)).version.version == 1
    assert ns.count_table_rows(ln.CountTableRowsRequest(id=ident)).count == 6
    assert ns.count_table_rows(ln.CountTableRowsRequest(id=ident, version=1, predicate="id > 1")).count == 2
    ns.insert_into_table(ln.InsertIntoTableRequest(id=ident), _ipc(T))
    ns.restore_table(ln.RestoreTableRequest(id=ident, version=1))
    assert lance.dataset(namespace_client=_theirs(tmp_path), table_id=ident).count_rows() == 3


def test_stats_indices_and_detailed_metadata_match_pylance(tmp_path):
    data = pa.table({"x": list(range(100)), "s": ["a", "b"] * 50})
    lance.write_dataset(data, namespace_client=_theirs(tmp_path), table_id=["t"], max_rows_per_file=30)
    ds = lance.dataset(str(tmp_path / "t.lance"))
    ds.create_scalar_index("x", "BTREE")
    ds.create_scalar_index("s", "BITMAP")
    ds.delete("x < 3")
    ours, theirs = _ours(tmp_path), _theirs(tmp_path)

    def indices(ns):
        return [(i.index_name, i.index_uuid, i.columns, i.status, i.index_type)
                for i in ns.list_table_indices(ln.ListTableIndicesRequest(id=["t"])).indexes]

    assert indices(ours) == indices(theirs)
    a = ours.get_table_stats(ln.GetTableStatsRequest(id=["t"]))
    b = theirs.get_table_stats(ln.GetTableStatsRequest(id=["t"]))
    assert (a.num_rows, a.num_indices, a.fragment_stats) == (b.num_rows, b.num_indices, b.fragment_stats)
    request = ln.DescribeTableRequest(id=["t"], load_detailed_metadata=True)
    assert ours.describe_table(request).metadata == theirs.describe_table(request).metadata


@pytest.mark.skipif(not hasattr(lancelet.LanceDataset, "create_branch"), reason="needs lancelet's branches")
def test_branches_through_the_namespace(tmp_path):
    ours, theirs = _ours(tmp_path), _theirs(tmp_path)
    lancelet.write_dataset(T, namespace_client=ours, table_id=["t"])
    ours.create_table_branch(ln.CreateTableBranchRequest(id=["t"], name="dev"))
    theirs.create_table_branch(ln.CreateTableBranchRequest(id=["t"], name="exp"))
    for ns in (ours, theirs):
        branches = ns.list_table_branches(ln.ListTableBranchesRequest(id=["t"])).branches
        assert sorted(branches) == ["dev", "exp"] and branches["dev"].parent_version == 1
        with pytest.raises(ln.TableBranchAlreadyExistsError):
            ns.create_table_branch(ln.CreateTableBranchRequest(id=["t"], name="dev"))
        with pytest.raises(ln.TableBranchNotFoundError):
            ns.delete_table_branch(ln.DeleteTableBranchRequest(id=["t"], name="nope"))
    assert ours.count_table_rows(ln.CountTableRowsRequest(id=["t"], branch="exp")).count == 3
    ours.create_table_tag(ln.CreateTableTagRequest(id=["t"], tag="on-dev", version=1, branch="dev"))
    assert theirs.get_table_tag_version(ln.GetTableTagVersionRequest(id=["t"], tag="on-dev")).branch == "dev"
    ours.delete_table_branch(ln.DeleteTableBranchRequest(id=["t"], name="exp"))
    assert sorted(theirs.list_table_branches(ln.ListTableBranchesRequest(id=["t"])).branches) == ["dev"]


def test_directory_listing_only_mode(tmp_path):
    ns = DirectoryNamespace(root=str(tmp_path), manifest_enabled="false")
    lancelet.write_dataset(T, namespace_client=ns, table_id=["t"])
    assert not (tmp_path / "__manifest").exists()
    theirs = pyns.DirectoryNamespace(root=str(tmp_path), manifest_enabled="false")
    assert theirs.list_tables(ln.ListTablesRequest(id=[])).tables == ["t"]
    lance.write_dataset(T, namespace_client=theirs, table_id=["p"])
    assert ns.list_tables(ln.ListTablesRequest(id=[])).tables == ["p", "t"]
    with pytest.raises(ln.LanceNamespaceError):
        ns.create_namespace(ln.CreateNamespaceRequest(id=["a"]))
    ns.deregister_table(ln.DeregisterTableRequest(id=["p"]))
    assert (tmp_path / "p.lance" / ".lance-deregistered").read_bytes() == b"reserved"
    assert theirs.list_tables(ln.ListTablesRequest(id=[])).tables == ["t"]


def test_concurrent_changes_are_all_kept(tmp_path):
    """Writers racing on __manifest (lancelet threads and pylance) lose no row."""
    names = [f"n{i}" for i in range(8)]
    errors = []

    def make(name, lib):
        try:
            if lib == "lance":
                _theirs(tmp_path).create_namespace(ln.CreateNamespaceRequest(id=[name]))
            else:
                _ours(tmp_path).create_namespace(ln.CreateNamespaceRequest(id=[name]))
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    _ours(tmp_path).create_namespace(ln.CreateNamespaceRequest(id=["first"]))
    threads = [threading.Thread(target=make, args=(n, "lance" if i % 4 == 0 else "lancelet"))
               for i, n in enumerate(names)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    # pylance itself may refuse a racing commit; lancelet's writers retry and never fail
    assert not [e for e in errors if "lancelet" in type(e).__module__]
    made = set(_ours(tmp_path).list_namespaces(ln.ListNamespacesRequest(id=[])).namespaces)
    failed_lance = len(errors)
    assert "first" in made and len(made) == len(names) + 1 - failed_lance


# -- REST ------------------------------------------------------------------------------


def _exercise_rest(client, root):
    """Builds a catalog through a REST client; checks it locally with both libraries."""
    _build(client, lancelet)
    assert _catalog(client) == EXPECTED
    _check_tables(client, lance)
    _check_tables(client, lancelet)
    assert client.count_table_rows(ln.CountTableRowsRequest(id=["sales", "orders"])).count == 6
    client.create_table_tag(ln.CreateTableTagRequest(id=["top"], tag="v1", version=1))
    assert client.list_table_tags(ln.ListTableTagsRequest(id=["top"])).tags["v1"].version == 1
    assert [v.version for v in client.list_table_versions(
        ln.ListTableVersionsRequest(id=["sales", "orders"])).versions] == [1, 2]
    client.table_exists(ln.TableExistsRequest(id=["top"]))
    with pytest.raises(ln.TableNotFoundError) as e:
        client.table_exists(ln.TableExistsRequest(id=["sales", "nope"]))
    assert str(e.value).count("Table not found") == 1
    with pytest.raises(ln.NamespaceNotEmptyError):
        client.drop_namespace(ln.DropNamespaceRequest(id=["sales"]))
    with pytest.raises(ln.InvalidInputError):
        client.register_table(ln.RegisterTableRequest(id=["x"], location="/abs/path"))
    client.drop_table(ln.DropTableRequest(id=["sales", "later"]))
    # the same catalog, seen through both directory clients
    EXPECTED_AFTER = dict(EXPECTED, sales=({"owner": "ana"}, ["ipc", "orders"]))
    assert _catalog(_ours(root)) == EXPECTED_AFTER
    assert _catalog(_theirs(root)) == EXPECTED_AFTER


def test_pylance_rest_client_against_lancelet_server(tmp_path):
    with RestAdapter("dir", {"root": str(tmp_path)}, port=0) as adapter:
        _exercise_rest(pyns.RestNamespace(uri=f"http://127.0.0.1:{adapter.port}"), tmp_path)


def test_lancelet_rest_client_against_pylance_adapter(tmp_path):
    with pyns.RestAdapter("dir", {"root": str(tmp_path)}, port=0) as adapter:
        _exercise_rest(RestNamespace(uri=f"http://127.0.0.1:{adapter.port}"), tmp_path)


def test_lancelet_client_and_server(tmp_path):
    with RestAdapter(_ours(tmp_path), port=0) as adapter:
        _exercise_rest(RestNamespace(uri=f"http://127.0.0.1:{adapter.port}"), tmp_path)


def test_concurrent_clients_of_the_server(tmp_path):
    """Eight pylance clients creating tables at once through lancelet's threaded server."""
    errors = []
    with RestAdapter("dir", {"root": str(tmp_path)}, port=0) as adapter:
        uri = f"http://127.0.0.1:{adapter.port}"
        pyns.RestNamespace(uri=uri).create_namespace(ln.CreateNamespaceRequest(id=["a"]))

        def work(i):
            try:
                client = pyns.RestNamespace(uri=uri)
                lance.write_dataset(pa.table({"x": [i]}), namespace_client=client, table_id=["a", f"t{i}"])
            except Exception as e:  # noqa: BLE001
                errors.append(e)

        threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert errors == []
    assert _theirs(tmp_path).list_tables(ln.ListTablesRequest(id=["a"])).tables == [f"t{i}" for i in range(8)]


def _raw(port, verb, path, body=None):
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=data, method=verb,
                                 headers={"Content-Type": "application/json"} if data else {})
    try:
        with urllib.request.urlopen(req) as resp:
            return resp.status, resp.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def test_http_exchanges_match_pylances_server(tmp_path):
    """Status, error code and JSON keys of each exchange, ours vs pylance's RestAdapter."""
    calls = [
        ("POST", "/v1/namespace/ns1/create", {"properties": {"k": "v"}}),
        ("POST", "/v1/namespace/ns1/create", {}),
        ("POST", "/v1/namespace/zz%24q/create", {}),
        ("GET", "/v1/namespace/%24/list", None),
        ("POST", "/v1/namespace/ns1/describe", {}),
        ("POST", "/v1/namespace/zz/describe", {}),
        ("POST", "/v1/namespace/ns1/exists", {}),
        ("POST", "/v1/namespace/zz/exists", {}),
        ("POST", "/v1/table/ns1%24t/declare", {}),
        ("GET", "/v1/namespace/ns1/table/list", None),
        ("POST", "/v1/table/ns1%24t/describe", {}),
        ("POST", "/v1/table/ns1%24t/exists", {}),
        ("POST", "/v1/table/ns1%24nope/describe", {}),
        ("POST", "/v1/table/ns1%24x/register", {"location": "/abs"}),
        ("POST", "/v1/namespace/ns1/drop", {}),
        ("POST", "/v1/table/ns1%24t/drop", {}),
        ("POST", "/v1/namespace/ns1/drop", {}),
    ]

    def run(adapter):
        out = []
        with adapter:
            for verb, path, body in calls:
                status, payload = _raw(adapter.port, verb, path, body)
                value = json.loads(payload) if payload.strip() else None
                shape = sorted(value) if isinstance(value, dict) else value
                code = value.get("code") if isinstance(value, dict) else None
                if isinstance(value, dict) and "location" in value:
                    shape = (shape, value["location"].startswith("file://"))
                out.append((verb, path, status, code, shape if status == 200 and "list" in path else
                            (sorted(value) if isinstance(value, dict) else value) if status == 200 else None))
        return out

    ours = run(RestAdapter("dir", {"root": str(tmp_path / "l")}, port=0))
    theirs = run(pyns.RestAdapter("dir", {"root": str(tmp_path / "p")}, port=0))
    assert ours == theirs


def test_hostile_ids_and_locations_are_refused(tmp_path):
    """Names that would leave the root are refused, in process and over REST."""
    root = tmp_path / "root"
    ns = _ours(root)
    for bad in (["..", "t"], ["../escape"], ["a/b"], ["."]):
        with pytest.raises(ln.InvalidInputError):
            ns.declare_table(ln.DeclareTableRequest(id=bad))
    with RestAdapter(ns, port=0) as adapter:
        client = pyns.RestNamespace(uri=f"http://127.0.0.1:{adapter.port}")
        with pytest.raises(ln.InvalidInputError):
            client.declare_table(ln.DeclareTableRequest(id=["../escape"]))
        with pytest.raises(ln.InvalidInputError):
            client.register_table(ln.RegisterTableRequest(id=["t"], location="../../etc"))
        status, body = _raw(adapter.port, "POST", "/v1/table/%2E%2E%2Fx/declare", {})
        assert status == 400 and json.loads(body)["code"] == 13
        status, _ = _raw(adapter.port, "GET", "/v1/nothing/here")
        assert status == 404
    assert os.listdir(tmp_path) in ([], ["root"])  # nothing written beside (or in) the root
    assert not root.exists() or os.listdir(root) == []


def test_manifest_rows_pointing_outside_the_root_are_refused(tmp_path):
    """A damaged or hostile __manifest row cannot make drop_table delete outside the root."""
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "keep.txt").write_text("precious")
    root = tmp_path / "root"
    ns = _ours(root)
    ns.create_namespace(ln.CreateNamespaceRequest(id=["a"]))
    rows = lance.dataset(str(root / "__manifest")).to_table().to_pylist()
    rows += [{"object_id": "a$evil", "object_type": "table", "location": "../victim", "metadata": None,
              "base_objects": None},
             {"object_id": "a$abs", "object_type": "table", "location": str(victim), "metadata": None,
              "base_objects": None}]
    from lancelet.namespace._catalog import SCHEMA

    lance.write_dataset(pa.Table.from_pylist(rows, schema=SCHEMA), str(root / "__manifest"), mode="overwrite")
    for name in ("evil", "abs"):
        with pytest.raises(ln.InvalidTableStateError):
            ns.drop_table(ln.DropTableRequest(id=["a", name]))
        with pytest.raises(ln.InvalidTableStateError):
            ns.describe_table(ln.DescribeTableRequest(id=["a", name]))
    assert (victim / "keep.txt").read_text() == "precious"


# -- command line ----------------------------------------------------------------------


def test_cli_ls(tmp_path):
    _build(_theirs(tmp_path), lance)
    out = subprocess.run([sys.executable, "-m", "lancelet", "ls", str(tmp_path)], capture_output=True, text=True,
                         check=True).stdout
    lines = [line.rstrip() for line in out.splitlines()]
    assert lines[0].split() == ["namespace", "/", "table", "rows", "versions", "size"]
    assert lines[1].split()[:3] == ["top", "3", "1"]
    assert lines[2] == "sales/"
    assert [line.split()[:3] for line in lines[3:5]] == [["ipc", "3", "1"], ["later", "(declared,", "no"]]
    assert lines[5].split()[:3] == ["orders", "6", "2"] and lines[5].startswith("  orders")
    assert lines[6] == "  eu/" and lines[7].split()[:3] == ["shops", "3", "1"]
    bad = subprocess.run([sys.executable, "-m", "lancelet", "ls", str(tmp_path / "missing")],
                         capture_output=True, text=True)
    assert bad.returncode == 1 and "not a directory" in bad.stderr


def test_cli_serve(tmp_path):
    proc = subprocess.Popen([sys.executable, "-m", "lancelet", "namespace", "serve", str(tmp_path), "--port", "0"],
                            stdout=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        assert "127.0.0.1" in line, line
        uri = "http://" + line.strip().rsplit("http://", 1)[1]
        client = pyns.RestNamespace(uri=uri)
        client.create_namespace(ln.CreateNamespaceRequest(id=["a"]))
        lance.write_dataset(T, namespace_client=client, table_id=["a", "t"])
        assert _catalog(_ours(tmp_path)) == {"": ({}, []), "a": ({}, ["t"])}
        ls = subprocess.run([sys.executable, "-m", "lancelet", "ls", uri], capture_output=True, text=True,
                            check=True).stdout
        assert "  t " in ls and ls.splitlines()[2].split()[:2] == ["t", "3"]
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        proc.stdout.close()


@pytest.mark.parametrize("loc", ["s3://bucket/t.lance", "/abs/t.lance", "../outside/t.lance", "a/../../b"])
def test_register_table_refuses_locations_outside_the_root_in_pylances_words(tmp_path, loc):
    got = {}
    for name, make in (("ours", _ours), ("theirs", _theirs)):
        ns = make(tmp_path / name)
        ns.create_namespace(ln.CreateNamespaceRequest(id=["w"]))
        with pytest.raises(Exception) as e:
            ns.register_table(ln.RegisterTableRequest(id=["w", "t"], location=loc))
        got[name] = (type(e.value).__name__, str(e.value))
    assert got["ours"] == got["theirs"]
