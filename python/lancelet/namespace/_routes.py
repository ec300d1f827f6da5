"""The REST routes of the Lance namespace spec (``lance-namespace`` 0.13), shared by
lancelet's client (:mod:`._rest`) and server (:mod:`._server`).

Object ids travel in the path joined by the delimiter (default ``$``, URL-encoded); the
root namespace is the bare delimiter. Request bodies are the JSON of the spec's request
models; ``create``/``insert`` carry an Arrow IPC stream and their options in the query.
Errors are ``{"error": message, "code": n}`` with an HTTP status.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

import lance_namespace as ln
from lance_namespace_urllib3_client import models


@dataclass(frozen=True)
class Route:
    """One operation: the ``LanceNamespace`` method, the HTTP verb and path, how the
    request travels and how the response does.

    ``body``: ``json`` (the request model's JSON), ``query`` (a GET: everything in the
    query string), ``none`` (a POST without a body: everything in the query string),
    ``ipc`` (an Arrow IPC stream, options in the query) or ``map`` (the bare string map
    of a schema metadata update). ``reply``: ``json``, ``empty``, ``int`` (a bare
    number), ``str`` (a JSON string), ``map`` (a bare string map) or ``ipc_file`` (Arrow
    IPC file bytes). ``query`` names the request fields that travel in the query string
    (the server reads them on every route; ``json`` routes also carry them in the body).
    Path placeholders other than ``{id}`` (``{index_name}``) are request fields too.
    """

    method: str
    verb: str
    path: str
    request: str
    response: str
    body: str = "json"
    reply: str = "json"
    query: Tuple[str, ...] = ()


def _r(method, verb, path, request, response, body="json", reply="json", query=()):
    return Route(method, verb, path, request, response, body, reply, tuple(query))


_PAGING = ("page_token", "limit")
_MERGE_QUERY = (
    "branch",
    "on",
    "when_matched_update_all",
    "when_matched_update_all_filt",
    "when_not_matched_insert_all",
    "when_not_matched_by_source_delete",
    "when_not_matched_by_source_delete_filt",
    "timeout",
    "use_index",
)
_T = "/v1/table/{id}"

ROUTES: List[Route] = [
    # namespaces
    _r("create_namespace", "POST", "/v1/namespace/{id}/create", "CreateNamespaceRequest", "CreateNamespaceResponse"),
    _r("list_namespaces", "GET", "/v1/namespace/{id}/list", "ListNamespacesRequest", "ListNamespacesResponse",
       body="query", query=_PAGING),
    _r("describe_namespace", "POST", "/v1/namespace/{id}/describe", "DescribeNamespaceRequest",
       "DescribeNamespaceResponse"),
    _r("drop_namespace", "POST", "/v1/namespace/{id}/drop", "DropNamespaceRequest", "DropNamespaceResponse"),
    _r("namespace_exists", "POST", "/v1/namespace/{id}/exists", "NamespaceExistsRequest", "NamespaceExistsResponse",
       reply="empty"),
    _r("list_tables", "GET", "/v1/namespace/{id}/table/list", "ListTablesRequest", "ListTablesResponse",
       body="query", query=_PAGING + ("include_declared",)),
    _r("list_all_tables", "GET", "/v1/table", "ListTablesRequest", "ListTablesResponse",
       body="query", query=_PAGING + ("include_declared",)),
    # tables
    _r("register_table", "POST", _T + "/register", "RegisterTableRequest", "RegisterTableResponse"),
    _r("deregister_table", "POST", _T + "/deregister", "DeregisterTableRequest", "DeregisterTableResponse"),
    _r("describe_table", "POST", _T + "/describe", "DescribeTableRequest", "DescribeTableResponse",
       query=("with_table_uri", "load_detailed_metadata", "check_declared")),
    _r("table_exists", "POST", _T + "/exists", "TableExistsRequest", "TableExistsResponse", reply="empty"),
    _r("drop_table", "POST", _T + "/drop", "DropTableRequest", "DropTableResponse"),
    _r("create_table", "POST", _T + "/create", "CreateTableRequest", "CreateTableResponse",
       body="ipc", query=("mode", "properties", "storage_options")),
    _r("declare_table", "POST", _T + "/declare", "DeclareTableRequest", "DeclareTableResponse"),
    _r("rename_table", "POST", _T + "/rename", "RenameTableRequest", "RenameTableResponse"),
    _r("restore_table", "POST", _T + "/restore", "RestoreTableRequest", "RestoreTableResponse"),
    _r("get_table_stats", "POST", _T + "/stats", "GetTableStatsRequest", "GetTableStatsResponse"),
    # data
    _r("insert_into_table", "POST", _T + "/insert", "InsertIntoTableRequest", "InsertIntoTableResponse",
       body="ipc", query=("mode", "branch")),
    _r("merge_insert_into_table", "POST", _T + "/merge_insert", "MergeInsertIntoTableRequest",
       "MergeInsertIntoTableResponse", body="ipc", query=_MERGE_QUERY),
    _r("update_table", "POST", _T + "/update", "UpdateTableRequest", "UpdateTableResponse"),
    _r("delete_from_table", "POST", _T + "/delete", "DeleteFromTableRequest", "DeleteFromTableResponse"),
    _r("count_table_rows", "POST", _T + "/count_rows", "CountTableRowsRequest", "CountTableRowsResponse",
       reply="int"),
    _r("query_table", "POST", _T + "/query", "QueryTableRequest", "QueryTableResponse", reply="ipc_file"),
    _r("explain_table_query_plan", "POST", _T + "/explain_plan", "ExplainTableQueryPlanRequest", "str",
       reply="str"),
    _r("analyze_table_query_plan", "POST", _T + "/analyze_plan", "AnalyzeTableQueryPlanRequest", "str",
       reply="str"),
    # indexes
    _r("create_table_index", "POST", _T + "/create_index", "CreateTableIndexRequest", "CreateTableIndexResponse"),
    _r("create_table_scalar_index", "POST", _T + "/create_scalar_index", "CreateTableIndexRequest",
       "CreateTableScalarIndexResponse"),
    _r("list_table_indices", "POST", _T + "/index/list", "ListTableIndicesRequest", "ListTableIndicesResponse"),
    _r("describe_table_index_stats", "POST", _T + "/index/{index_name}/stats", "DescribeTableIndexStatsRequest",
       "DescribeTableIndexStatsResponse"),
    _r("drop_table_index", "POST", _T + "/index/{index_name}/drop", "DropTableIndexRequest",
       "DropTableIndexResponse", body="none", query=("branch",)),
    # schema
    _r("update_table_schema_metadata", "POST", _T + "/schema_metadata/update", "UpdateTableSchemaMetadataRequest",
       "UpdateTableSchemaMetadataResponse", body="map", reply="map", query=("branch",)),
    _r("update_field_metadata", "POST", _T + "/update_field_metadata", "UpdateFieldMetadataRequest",
       "UpdateFieldMetadataResponse"),
    _r("alter_table_add_columns", "POST", _T + "/add_columns", "AlterTableAddColumnsRequest",
       "AlterTableAddColumnsResponse"),
    _r("alter_table_alter_columns", "POST", _T + "/alter_columns", "AlterTableAlterColumnsRequest",
       "AlterTableAlterColumnsResponse"),
    _r("alter_table_drop_columns", "POST", _T + "/drop_columns", "AlterTableDropColumnsRequest",
       "AlterTableDropColumnsResponse"),
    _r("alter_table_backfill_columns", "POST", _T + "/backfill_column", "AlterTableBackfillColumnsRequest",
       "AlterTableBackfillColumnsResponse"),
    # versions
    _r("list_table_versions", "POST", _T + "/version/list", "ListTableVersionsRequest", "ListTableVersionsResponse",
       body="none", query=("branch",) + _PAGING + ("descending",)),
    _r("create_table_version", "POST", _T + "/version/create", "CreateTableVersionRequest",
       "CreateTableVersionResponse"),
    _r("describe_table_version", "POST", _T + "/version/describe", "DescribeTableVersionRequest",
       "DescribeTableVersionResponse"),
    _r("batch_delete_table_versions", "POST", _T + "/version/delete", "BatchDeleteTableVersionsRequest",
       "BatchDeleteTableVersionsResponse"),
    _r("batch_create_table_versions", "POST", "/v1/table/version/batch-create", "BatchCreateTableVersionsRequest",
       "BatchCreateTableVersionsResponse"),
    _r("batch_commit_tables", "POST", "/v1/table/batch-commit", "BatchCommitTablesRequest",
       "BatchCommitTablesResponse"),
    # tags and branches
    _r("list_table_tags", "POST", _T + "/tags/list", "ListTableTagsRequest", "ListTableTagsResponse",
       body="none", query=_PAGING),
    _r("get_table_tag_version", "POST", _T + "/tags/version", "GetTableTagVersionRequest",
       "GetTableTagVersionResponse"),
    _r("create_table_tag", "POST", _T + "/tags/create", "CreateTableTagRequest", "CreateTableTagResponse"),
    _r("delete_table_tag", "POST", _T + "/tags/delete", "DeleteTableTagRequest", "DeleteTableTagResponse"),
    _r("update_table_tag", "POST", _T + "/tags/update", "UpdateTableTagRequest", "UpdateTableTagResponse"),
    _r("create_table_branch", "POST", _T + "/branches/create", "CreateTableBranchRequest",
       "CreateTableBranchResponse"),
    _r("list_table_branches", "POST", _T + "/branches/list", "ListTableBranchesRequest",
       "ListTableBranchesResponse", body="none", query=_PAGING),
    _r("delete_table_branch", "POST", _T + "/branches/delete", "DeleteTableBranchRequest",
       "DeleteTableBranchResponse"),
    # transactions
    _r("describe_transaction", "POST", "/v1/transaction/{id}/describe", "DescribeTransactionRequest",
       "DescribeTransactionResponse"),
    _r("alter_transaction", "POST", "/v1/transaction/{id}/alter", "AlterTransactionRequest",
       "AlterTransactionResponse"),
]  # fmt: skip

#: Query parameters that are numbers, booleans, lists (repeated) or JSON-encoded maps.
INT_PARAMS = {"limit"}
BOOL_PARAMS = {
    "include_declared",
    "descending",
    "with_table_uri",
    "load_detailed_metadata",
    "check_declared",
    "use_index",
    "when_matched_update_all",
    "when_not_matched_insert_all",
    "when_not_matched_by_source_delete",
}
LIST_PARAMS = {"on"}
JSON_PARAMS = {"properties", "storage_options"}

BY_METHOD: Dict[str, Route] = {r.method: r for r in ROUTES}

#: HTTP status of each error code (the body carries the code itself).
STATUS: Dict[int, int] = {
    ln.ErrorCode.UNSUPPORTED: 501,
    ln.ErrorCode.INVALID_INPUT: 400,
    ln.ErrorCode.TABLE_SCHEMA_VALIDATION_ERROR: 400,
    ln.ErrorCode.PERMISSION_DENIED: 403,
    ln.ErrorCode.UNAUTHENTICATED: 401,
    ln.ErrorCode.SERVICE_UNAVAILABLE: 503,
    ln.ErrorCode.THROTTLING: 429,
    ln.ErrorCode.INTERNAL: 500,
}
for _code in (
    "NAMESPACE_NOT_FOUND",
    "TABLE_NOT_FOUND",
    "TABLE_INDEX_NOT_FOUND",
    "TABLE_TAG_NOT_FOUND",
    "TRANSACTION_NOT_FOUND",
    "TABLE_VERSION_NOT_FOUND",
    "TABLE_COLUMN_NOT_FOUND",
    "TABLE_BRANCH_NOT_FOUND",
):
    STATUS[ln.ErrorCode[_code]] = 404
for _code in (
    "NAMESPACE_ALREADY_EXISTS",
    "NAMESPACE_NOT_EMPTY",
    "TABLE_ALREADY_EXISTS",
    "TABLE_INDEX_ALREADY_EXISTS",
    "TABLE_TAG_ALREADY_EXISTS",
    "CONCURRENT_MODIFICATION",
    "INVALID_TABLE_STATE",
    "TABLE_BRANCH_ALREADY_EXISTS",
):
    STATUS[ln.ErrorCode[_code]] = 409


def model(name: str):
    """The spec's model class called ``name``."""
    return getattr(models, name)


def split_id(text: str, delimiter: str) -> List[str]:
    """An id from its path form (already URL-decoded): the bare delimiter is the root."""
    if text == delimiter or text == "":
        return []
    return text.split(delimiter)


def join_id(parts: Optional[List[str]], delimiter: str) -> str:
    """The path form of an id (not yet URL-encoded)."""
    return delimiter.join(parts) if parts else delimiter


def prefix(code: int) -> str:
    """The kind prefix of an error message (``"Table not found: "``): Python-side
    errors carry it, REST bodies do not (as with pylance's client and server)."""
    try:
        name = ln.ErrorCode(code).name
    except ValueError:
        return ""
    if name == "UNSUPPORTED":
        return "Not supported: "
    return name.replace("_", " ").capitalize() + ": "


def strip_prefix(code: int, message: str) -> str:
    """``message`` without its kind prefix."""
    p = prefix(code)
    return message[len(p) :] if p and message.startswith(p) else message


def add_prefix(code: int, message: str) -> str:
    """``message`` with its kind prefix."""
    p = prefix(code)
    return message if not p or message.startswith(p) else p + message
