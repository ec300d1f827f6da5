"""The data-plane operations of a namespace (merge_insert, update, delete, query, query
plans, indexes, schema changes, transactions), run through each library's directory
namespace and across REST in both directions (pylance's client against lancelet's server,
lancelet's client against pylance's server), on local and S3 roots: the answers of
lancelet's namespace equal pylance's, and both libraries read what each one wrote.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
import uuid

import numpy as np
import pyarrow as pa
import pytest

lance = pytest.importorskip("lance")
ln = pytest.importorskip("lance_namespace")

from _ns_support import KINDS, SERVED_BY, client, ipc, ipc_file_table, outcome  # noqa: E402
from lance_namespace_urllib3_client import models as M  # noqa: E402

import lancelet  # noqa: E402
from lancelet.namespace import DirectoryNamespace, RestAdapter  # noqa: E402

pytestmark = pytest.mark.lancelet_only

T = ["t"]
BASE = pa.table({"id": pa.array([1, 2, 3], pa.int64()), "v": [1.0, 2.0, 3.0], "s": ["a", "b", "c"]})


def rows(ids, v=0.5, s="n"):
    return pa.table({"id": pa.array(ids, pa.int64()), "v": [float(i) + v for i in ids], "s": [s] * len(ids)})


@pytest.fixture(params=["local", "s3"])
def where(request, tmp_path):
    """``(root maker, namespace properties, storage options)`` on local disk or S3."""
    if request.param == "local":
        counter = iter(range(1000))
        return (lambda: str(tmp_path / f"r{next(counter)}")), {}, None
    from _support import s3_options

    endpoint, _ = request.getfixturevalue("s3_endpoint")
    opts = s3_options(endpoint)
    base = f"s3://lancelet/{uuid.uuid4().hex}"
    counter = iter(range(1000))
    return (lambda: f"{base}/r{next(counter)}"), {f"storage.{k}": v for k, v in opts.items()}, opts


def _read(lib, ns, opts, table_id=T):
    return lib.dataset(namespace_client=ns, table_id=table_id, storage_options=opts).to_table().sort_by("id")


def _scenario(ns):
    """insert, upserts, by-source delete, update, delete, count: every answer."""
    out = []
    r = ns.create_table(ln.CreateTableRequest(id=T), ipc(BASE))
    out.append(("create", r.version))
    r = ns.insert_into_table(ln.InsertIntoTableRequest(id=T), ipc(rows([4, 5])))
    out.append(("insert", r.num_inserted_rows, r.version))
    r = ns.merge_insert_into_table(
        M.MergeInsertIntoTableRequest(id=T, on=["id"], when_matched_update_all=True, when_not_matched_insert_all=True),
        ipc(rows([5, 6, 7], v=0.25, s="u")),
    )
    out.append(("upsert", r.num_updated_rows, r.num_inserted_rows, r.num_deleted_rows, r.version))
    r = ns.merge_insert_into_table(
        M.MergeInsertIntoTableRequest(
            id=T,
            on=["id"],
            when_matched_update_all=True,
            when_matched_update_all_filt="target.v < 3",
            when_not_matched_by_source_delete=True,
            when_not_matched_by_source_delete_filt="id > 6",
        ),
        ipc(rows([1, 2, 4], v=0.75, s="m")),
    )
    out.append(("by_source", r.num_updated_rows, r.num_inserted_rows, r.num_deleted_rows, r.version))
    r = ns.update_table(M.UpdateTableRequest(id=T, predicate="id = 3", updates=[["v", "v + 10"], ["s", "'zz'"]]))
    out.append(("update", r.updated_rows, r.version))
    r = ns.delete_from_table(M.DeleteFromTableRequest(id=T, predicate="id = 4"))
    out.append(("delete", r.version))
    out.append(("count", ns.count_table_rows(ln.CountTableRowsRequest(id=T)).count))
    out.append(("count_where", ns.count_table_rows(ln.CountTableRowsRequest(id=T, predicate="s = 'u'")).count))
    return out


@pytest.mark.parametrize("kind", KINDS)
def test_data_plane_matches_pylance(kind, where):
    new_root, props, opts = where
    with client("theirs", new_root(), **props) as ns:
        expected = _scenario(ns)
        expected_rows = _read(lance, ns, opts)
    with client(kind, new_root(), **props) as ns:
        assert _scenario(ns) == expected
        # both libraries read the result, through the same client
        assert _read(lance, ns, opts) == expected_rows
        assert _read(lancelet, ns, opts) == expected_rows
    assert expected_rows.column("id").to_pylist() == [1, 2, 3, 5, 6]


def _error_cases(ns):
    ns.create_table(ln.CreateTableRequest(id=T), ipc(BASE))
    cases = {
        "merge_no_on": lambda: ns.merge_insert_into_table(
            M.MergeInsertIntoTableRequest(id=T, when_matched_update_all=True), ipc(rows([1]))
        ),
        "merge_no_action": lambda: ns.merge_insert_into_table(
            M.MergeInsertIntoTableRequest(id=T, on=["id"]), ipc(rows([1]))
        ),
        "delete_empty": lambda: ns.delete_from_table(M.DeleteFromTableRequest(id=T, predicate="")),
        "update_empty": lambda: ns.update_table(M.UpdateTableRequest(id=T, updates=[])),
        "unknown_table": lambda: ns.delete_from_table(M.DeleteFromTableRequest(id=["nope"], predicate="id = 1")),
        "insert_create": lambda: ns.insert_into_table(ln.InsertIntoTableRequest(id=T, mode="create"), ipc(rows([9]))),
        "stats_unknown": lambda: ns.describe_table_index_stats(
            M.DescribeTableIndexStatsRequest(id=T, index_name="nope")
        ),
        "drop_unknown": lambda: ns.drop_table_index(M.DropTableIndexRequest(id=T, index_name="nope")),
        "scalar_vector": lambda: ns.create_table_scalar_index(
            M.CreateTableIndexRequest(id=T, column="v", index_type="IVF_PQ")
        ),
        "unknown_type": lambda: ns.create_table_index(
            M.CreateTableIndexRequest(id=T, column="v", index_type="WHATEVER")
        ),
        "txn_no_key": lambda: ns.describe_transaction(M.DescribeTransactionRequest(id=T)),
        "txn_unknown": lambda: ns.describe_transaction(M.DescribeTransactionRequest(id=T + ["nope"])),
    }
    return {name: outcome(run) for name, run in cases.items()}


@pytest.mark.parametrize("kind", KINDS)
def test_data_plane_errors_match(kind, tmp_path):
    with client("theirs", str(tmp_path / "p")) as ns:
        expected = _error_cases(ns)
    with client(kind, str(tmp_path / "l")) as ns:
        got = _error_cases(ns)
    assert got == expected
    assert got["merge_no_on"] == {"error": "InvalidInputError"}
    assert got["stats_unknown"] == {"error": "TableIndexNotFoundError"}


VEC = pa.table(
    {
        "id": pa.array(range(300), pa.int64()),
        "v": [float(i % 7) for i in range(300)],
        "vec": pa.FixedSizeListArray.from_arrays(
            pa.array(np.random.default_rng(7).standard_normal(300 * 4), pa.float32()), 4
        ),
    }
)


def _queries(ns):
    ns.create_table(ln.CreateTableRequest(id=T), ipc(VEC))
    ns.insert_into_table(ln.InsertIntoTableRequest(id=T), ipc(VEC.slice(0, 10)))
    empty = M.QueryTableRequestVector()
    q = VEC.column("vec")[17].as_py()

    def run(**kw):
        return ipc_file_table(ns.query_table(M.QueryTableRequest(id=T, **kw)).data)

    out = {}
    t = run(k=0, vector=empty, filter="id < 50", columns=M.QueryTableRequestColumns(column_names=["id", "v"]))
    out["scan"] = t.sort_by("id")
    t = run(k=3, vector=empty, offset=2, with_row_id=True,
            columns=M.QueryTableRequestColumns(column_aliases={"x": "id", "y": "v * 2"}))
    out["aliases"] = {name: t.column(name).to_pylist() for name in sorted(t.column_names)}
    out["old_version"] = run(k=0, vector=empty, version=1, columns=M.QueryTableRequestColumns(column_names=["id"]))
    flat = run(k=5, vector=M.QueryTableRequestVector(single_vector=q), vector_column="vec",
               columns=M.QueryTableRequestColumns(column_names=["id"]))
    out["flat"] = (flat.column_names, flat.column("id").to_pylist())
    out["flat_distance"] = flat.column("_distance").to_pylist()
    ns.create_table_index(M.CreateTableIndexRequest(id=T, column="vec", index_type="IVF_FLAT", num_partitions=2))
    ann = run(k=5, vector=M.QueryTableRequestVector(single_vector=q), vector_column="vec", nprobes=2,
              filter="id < 200", prefilter=True, columns=M.QueryTableRequestColumns(column_names=["id"]))
    out["ann"] = ann.column("id").to_pylist()
    plan = ns.explain_table_query_plan(
        M.ExplainTableQueryPlanRequest(id=T, query=M.QueryTableRequest(id=T, k=5, vector=empty, filter="id > 1"))
    )
    out["plan_is_text"] = isinstance(plan, str) and len(plan) > 0
    analyzed = ns.analyze_table_query_plan(M.AnalyzeTableQueryPlanRequest(id=T, k=5, vector=empty, filter="id > 1"))
    out["analyze_is_text"] = isinstance(analyzed, str) and len(analyzed) > 0
    return out  # fmt: skip


@pytest.mark.parametrize("kind", KINDS)
def test_query_table_matches_pylance(kind, tmp_path):
    with client("theirs", str(tmp_path / "p")) as ns:
        expected = _queries(ns)
    with client(kind, str(tmp_path / "l")) as ns:
        got = _queries(ns)
    assert got["scan"] == expected["scan"]
    assert got["aliases"] == expected["aliases"]
    assert got["old_version"].num_rows == expected["old_version"].num_rows == 300
    assert got["flat"] == expected["flat"]
    assert got["flat"][0] == ["id", "_distance"]
    assert np.allclose(got["flat_distance"], expected["flat_distance"], rtol=1e-5)
    assert got["ann"] == expected["ann"]
    assert got["plan_is_text"] and got["analyze_is_text"]


@pytest.mark.parametrize("kind", [k for k in KINDS if SERVED_BY[k] == "lancelet"])
def test_unsupported_queries_are_refused_clearly(kind, tmp_path):
    with client(kind, str(tmp_path)) as ns:
        ns.create_table(ln.CreateTableRequest(id=T), ipc(BASE))
        fts = M.QueryTableRequestFullTextQuery(string_query=M.StringFtsQuery(query="a", columns=["s"]))
        with pytest.raises(ln.UnsupportedOperationError):
            ns.query_table(M.QueryTableRequest(id=T, k=3, vector=M.QueryTableRequestVector(), full_text_query=fts))
        with pytest.raises(ln.UnsupportedOperationError):
            ns.create_table_index(M.CreateTableIndexRequest(id=T, column="s", index_type="INVERTED"))


def _indices(ns):
    ns.create_table(ln.CreateTableRequest(id=T), ipc(VEC))
    out = {}
    r1 = ns.create_table_index(M.CreateTableIndexRequest(id=T, column="id", index_type="BTREE"))
    r2 = ns.create_table_index(M.CreateTableIndexRequest(id=T, column="id", index_type="BITMAP"))
    out["again"] = outcome(lambda: ns.create_table_index(M.CreateTableIndexRequest(id=T, column="id",
                                                                                      index_type="BTREE")))
    ns.create_table_scalar_index(M.CreateTableIndexRequest(id=T, column="v", index_type="SCALAR"))
    ns.create_table_index(M.CreateTableIndexRequest(id=T, column="vec", index_type="IVF_FLAT", name="vi",
                                                    num_partitions=2, distance_type="cosine"))
    out["txn_ids"] = all(isinstance(r.transaction_id, str) and len(r.transaction_id) == 36 for r in (r1, r2))

    def listing():
        return [(i.index_name, i.columns, i.index_type, i.status, i.type_url, i.num_indexed_rows,
                 i.num_unindexed_rows, i.num_segments, i.size_bytes > 0, i.created_at is not None)
                for i in ns.list_table_indices(ln.ListTableIndicesRequest(id=T)).indexes]

    out["listed"] = listing()
    s = ns.describe_table_index_stats(M.DescribeTableIndexStatsRequest(id=T, index_name="id_idx"))
    out["stats"] = (s.index_type, s.num_indexed_rows, s.num_unindexed_rows, s.num_indices)
    s = ns.describe_table_index_stats(M.DescribeTableIndexStatsRequest(id=T, index_name="vi"))
    out["vstats"] = (s.index_type, s.num_indexed_rows, s.num_indices)
    ns.drop_table_index(M.DropTableIndexRequest(id=T, index_name="id_idx_2"))
    out["after_drop"] = listing()
    return out  # fmt: skip


@pytest.mark.parametrize("kind", KINDS)
def test_indices_through_namespace(kind, tmp_path):
    with client("theirs", str(tmp_path / "p")) as ns:
        expected = _indices(ns)
    with client(kind, str(tmp_path / "l")) as ns:
        got = _indices(ns)
        location = ns.describe_table(ln.DescribeTableRequest(id=T)).location
    assert got == expected
    assert [n for n, *_ in got["listed"]] == ["id_idx", "id_idx_2", "v_idx", "vi"]
    assert got["again"] == {"error": "TableIndexAlreadyExistsError"}
    # each library uses the indexes the namespace built
    for lib in (lance, lancelet):
        ds = lib.dataset(location)
        assert sorted(i["name"] for i in ds.list_indices()) == ["id_idx", "v_idx", "vi"]
        assert "id_idx" in ds.scanner(filter="id = 5").explain_plan()
        assert ds.to_table(filter="id = 5").num_rows == 1


def _evolution(ns):
    ns.create_table(ln.CreateTableRequest(id=T), ipc(BASE))
    out = []
    r = ns.alter_table_add_columns(
        M.AlterTableAddColumnsRequest(id=T, new_columns=[M.AddColumnsEntry(name="w", expression="id * 2")])
    )
    out.append(("add", r.version))
    r = ns.alter_table_alter_columns(
        M.AlterTableAlterColumnsRequest(id=T, alterations=[M.AlterColumnsEntry(path="w", rename="w2")])
    )
    out.append(("rename", r.version))
    r = ns.update_table_schema_metadata(M.UpdateTableSchemaMetadataRequest(id=T, metadata={"a": "1"}))
    out.append(("meta", r.metadata))
    r = ns.update_table_schema_metadata(M.UpdateTableSchemaMetadataRequest(id=T, metadata={"b": "2"}))
    out.append(("meta", r.metadata))  # (over REST the reply is the bare map: no transaction_id)
    r = ns.alter_table_drop_columns(M.AlterTableDropColumnsRequest(id=T, columns=["s"]))
    out.append(("drop", r.version))
    return out


@pytest.mark.parametrize("kind", KINDS)
def test_schema_evolution_through_namespace(kind, where):
    new_root, props, opts = where
    with client("theirs", new_root(), **props) as ns:
        expected = _evolution(ns)
        theirs = lance.dataset(namespace_client=ns, table_id=T, storage_options=opts)
        expected_schema, expected_rows = theirs.schema, theirs.to_table()
    with client(kind, new_root(), **props) as ns:
        assert _evolution(ns) == expected
        for lib in (lance, lancelet):
            ds = lib.dataset(namespace_client=ns, table_id=T, storage_options=opts)
            assert ds.schema.equals(expected_schema, check_metadata=True)
            assert ds.to_table() == expected_rows
    assert expected_schema.names == ["id", "v", "w2"]
    assert expected_schema.metadata == {b"a": b"1", b"b": b"2"}


def test_lancelet_casts_columns_with_a_json_type(tmp_path):
    """pylance's server wants ``data_type`` as a JSON string, which the typed model cannot
    carry; lancelet takes the JSON object (or the string)."""
    ns = DirectoryNamespace(root=str(tmp_path))
    ns.create_table(ln.CreateTableRequest(id=T), ipc(BASE))
    ns.alter_table_alter_columns(M.AlterTableAlterColumnsRequest(
        id=T, alterations=[M.AlterColumnsEntry(path="v", data_type={"type": "float32"}, nullable=True)]))
    ns.alter_table_alter_columns({"id": T, "alterations": [{"path": "id", "data_type": json.dumps({"type": "int32"})}]})
    schema = lance.dataset(str(tmp_path / "t.lance")).schema
    assert schema.field("v").type == pa.float32() and schema.field("id").type == pa.int32()  # fmt: skip


def _transactions(ns):
    ns.create_table(ln.CreateTableRequest(id=T), ipc(BASE))
    ns.insert_into_table(ln.InsertIntoTableRequest(id=T), ipc(rows([4])))
    txn = ns.create_table_index(M.CreateTableIndexRequest(id=T, column="id", index_type="BTREE")).transaction_id
    out = {}
    for key in ("1", "2", "3", txn):
        props = dict(ns.describe_transaction(M.DescribeTransactionRequest(id=T + [key])).properties)
        name = key if key != txn else "by_uuid"
        out[name] = {k: props[k] for k in ("version", "read_version", "operation")}
        out[name + "_is_the_index_build"] = props["uuid"] == txn
    altered = ns.alter_transaction(M.AlterTransactionRequest(id=T + ["2"], actions=[
        M.AlterTransactionAction(set_status_action=M.AlterTransactionSetStatus(status="Canceled"))]))
    # (pylance answers SUCCEEDED in process but echoes the requested status over REST)
    out["altered"] = altered.properties["operation"]
    return out  # fmt: skip


@pytest.mark.parametrize("kind", KINDS)
def test_transactions_through_namespace(kind, tmp_path):
    with client("theirs", str(tmp_path / "p")) as ns:
        expected = _transactions(ns)
    with client(kind, str(tmp_path / "l")) as ns:
        got = _transactions(ns)
    assert got == expected
    assert got["by_uuid"] == {"version": "3", "read_version": "2", "operation": "CreateIndex"}
    assert got["3_is_the_index_build"] and not got["2_is_the_index_build"]
    assert got["1"]["operation"] == "Overwrite" and got["altered"] == "Append"


# -- the wire --------------------------------------------------------------------------


def _http(port, verb, path, body=None, raw=None, content_type="application/json"):
    data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
    headers = {"Content-Type": content_type} if data is not None else {}
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=data, method=verb, headers=headers)
    try:
        with urllib.request.urlopen(req) as resp:
            return resp.status, resp.headers.get("Content-Type"), resp.read()
    except urllib.error.HTTPError as e:
        return e.code, e.headers.get("Content-Type"), e.read()


def _exchanges(adapter):
    """What a raw HTTP client gets for the data-plane routes, reduced to comparable shapes."""
    out = []
    with adapter:
        port = adapter.port
        _http(port, "POST", "/v1/table/t/create", raw=ipc(BASE), content_type="application/vnd.apache.arrow.stream")
        for i in range(2):
            _http(port, "POST", "/v1/table/t/insert", raw=ipc(rows([10 + i])),
                  content_type="application/vnd.apache.arrow.stream")
        status, _, body = _http(port, "POST", "/v1/table/t/version/list?limit=1&descending=true")
        out.append(("versions", status, [v["version"] for v in json.loads(body)["versions"]]))
        status, _, body = _http(port, "POST", "/v1/table/t/version/list?limit=2")
        out.append(("versions_asc", status, [v["version"] for v in json.loads(body)["versions"]]))
        status, _, body = _http(
            port, "POST",
            "/v1/table/t/merge_insert?on=id&when_matched_update_all=true&when_not_matched_insert_all=true"
            "&when_not_matched_by_source_delete=false&use_index=false",
            raw=ipc(rows([1, 20])), content_type="application/vnd.apache.arrow.stream")
        out.append(("merge", status, json.loads(body)))
        status, ctype, body = _http(port, "POST", "/v1/table/t/query", {"k": 2, "vector": {}, "filter": "id > 1"})
        out.append(("query", status, ctype, body[:6], pa.ipc.open_file(pa.py_buffer(body)).read_all().num_rows))
        status, _, body = _http(port, "POST", "/v1/table/t/schema_metadata/update", {"a": "1"})
        out.append(("schema_metadata", status, json.loads(body)))
        status, _, body = _http(port, "POST", "/v1/table/t/create_index", {"column": "id", "index_type": "BTREE"})
        out.append(("create_index", status, sorted(json.loads(body))))
        status, _, body = _http(port, "POST", "/v1/table/t/index/id_idx/stats", {})
        out.append(("stats", status, json.loads(body)))
        status, _, body = _http(port, "POST", "/v1/table/t/index/id_idx/drop")
        out.append(("drop_index", status, sorted(json.loads(body))))
        status, _, body = _http(port, "POST", "/v1/table/t/index/id_idx/drop")
        out.append(("drop_again", status, json.loads(body)["code"]))
        status, _, body = _http(port, "POST", "/v1/table/t/explain_plan", {"query": {"k": 1, "vector": {}}})
        out.append(("explain", status, type(json.loads(body)).__name__))
        status, _, body = _http(port, "POST", "/v1/transaction/t%241/describe", {})
        out.append(("txn", status, json.loads(body)["properties"]["operation"]))
        status, _, body = _http(port, "POST", "/v1/table/t/delete", {"predicate": ""})
        out.append(("bad_delete", status, json.loads(body)["code"]))
    return out  # fmt: skip


def test_http_exchanges_match_pylances_server(tmp_path):
    """Status, content type and body shape of the data-plane routes, ours vs pylance's
    server: no-body POSTs with their parameters in the query (pylance's client sends
    version/list so), IPC bodies, Arrow IPC file replies, bare-map schema metadata."""
    import lance.namespace as pyns

    ours = _exchanges(RestAdapter("dir", {"root": str(tmp_path / "l")}, port=0))
    theirs = _exchanges(pyns.RestAdapter("dir", {"root": str(tmp_path / "p")}, port=0))
    assert ours == theirs
    assert ours[0] == ("versions", 200, [3])


def test_operations_lancelet_does_not_offer_are_refused_over_rest(tmp_path):
    """Routes of operations the directory namespace does not implement answer the spec's
    UNSUPPORTED error (501); lancelet's client raises UnsupportedOperationError for them."""
    from lancelet.namespace import RestNamespace

    with RestAdapter("dir", {"root": str(tmp_path)}, port=0) as server:
        ns = RestNamespace(uri=f"http://127.0.0.1:{server.port}")
        ns.create_table(ln.CreateTableRequest(id=T), ipc(BASE))
        calls = [
            lambda: ns.batch_commit_tables(M.BatchCommitTablesRequest(operations=[])),
            lambda: ns.update_field_metadata(M.UpdateFieldMetadataRequest(id=T, updates=[])),
            lambda: ns.alter_table_backfill_columns({"id": T, "column": "v"}),
        ]
        for call in calls:
            with pytest.raises(ln.UnsupportedOperationError):
                call()
        status, _, body = _http(server.port, "POST", "/v1/table/batch-commit", {"operations": []})
        assert status == 501 and json.loads(body)["code"] == 0
