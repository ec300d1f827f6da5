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


@dataclass(frozen=True)
class Route:
    """One operation: the ``LanceNamespace`` method, the HTTP verb and path, how the
    request travels (``json`` body, ``query`` string, ``ipc`` body + query) and how the
    response does (``json``, ``empty``, ``int``)."""

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


ROUTES: List[Route] = [
    _r("create_namespace", "POST", "/v1/namespace/{id}/create", "CreateNamespaceRequest", "CreateNamespaceResponse"),
    _r(
        "list_namespaces",
        "GET",
        "/v1/namespace/{id}/list",
        "ListNamespacesRequest",
        "ListNamespacesResponse",
        body="query",
        query=("page_token", "limit"),
    ),
    _r(
        "describe_namespace",
        "POST",
        "/v1/namespace/{id}/describe",
        "DescribeNamespaceRequest",
        "DescribeNamespaceResponse",
    ),
    _r("drop_namespace", "POST", "/v1/namespace/{id}/drop", "DropNamespaceRequest", "DropNamespaceResponse"),
    _r(
        "namespace_exists",
        "POST",
        "/v1/namespace/{id}/exists",
        "NamespaceExistsRequest",
        "NamespaceExistsResponse",
        reply="empty",
    ),
    _r(
        "list_tables",
        "GET",
        "/v1/namespace/{id}/table/list",
        "ListTablesRequest",
        "ListTablesResponse",
        body="query",
        query=("page_token", "limit", "include_declared"),
    ),
    _r(
        "list_all_tables",
        "GET",
        "/v1/table",
        "ListTablesRequest",
        "ListTablesResponse",
        body="query",
        query=("page_token", "limit"),
    ),
    _r("register_table", "POST", "/v1/table/{id}/register", "RegisterTableRequest", "RegisterTableResponse"),
    _r("deregister_table", "POST", "/v1/table/{id}/deregister", "DeregisterTableRequest", "DeregisterTableResponse"),
    _r("describe_table", "POST", "/v1/table/{id}/describe", "DescribeTableRequest", "DescribeTableResponse"),
    _r("table_exists", "POST", "/v1/table/{id}/exists", "TableExistsRequest", "TableExistsResponse", reply="empty"),
    _r("drop_table", "POST", "/v1/table/{id}/drop", "DropTableRequest", "DropTableResponse"),
    _r(
        "create_table",
        "POST",
        "/v1/table/{id}/create",
        "CreateTableRequest",
        "CreateTableResponse",
        body="ipc",
        query=("mode",),
    ),
    _r("declare_table", "POST", "/v1/table/{id}/declare", "DeclareTableRequest", "DeclareTableResponse"),
    _r(
        "insert_into_table",
        "POST",
        "/v1/table/{id}/insert",
        "InsertIntoTableRequest",
        "InsertIntoTableResponse",
        body="ipc",
        query=("mode", "branch"),
    ),
    _r(
        "count_table_rows",
        "POST",
        "/v1/table/{id}/count_rows",
        "CountTableRowsRequest",
        "CountTableRowsResponse",
        reply="int",
    ),
    _r("restore_table", "POST", "/v1/table/{id}/restore", "RestoreTableRequest", "RestoreTableResponse"),
    _r("rename_table", "POST", "/v1/table/{id}/rename", "RenameTableRequest", "RenameTableResponse"),
    _r("get_table_stats", "POST", "/v1/table/{id}/stats", "GetTableStatsRequest", "GetTableStatsResponse"),
    _r(
        "list_table_indices", "POST", "/v1/table/{id}/index/list", "ListTableIndicesRequest", "ListTableIndicesResponse"
    ),
    _r(
        "list_table_versions",
        "POST",
        "/v1/table/{id}/version/list",
        "ListTableVersionsRequest",
        "ListTableVersionsResponse",
    ),
    _r(
        "describe_table_version",
        "POST",
        "/v1/table/{id}/version/describe",
        "DescribeTableVersionRequest",
        "DescribeTableVersionResponse",
    ),
    _r("list_table_tags", "POST", "/v1/table/{id}/tags/list", "ListTableTagsRequest", "ListTableTagsResponse"),
    _r(
        "get_table_tag_version",
        "POST",
        "/v1/table/{id}/tags/version",
        "GetTableTagVersionRequest",
        "GetTableTagVersionResponse",
    ),
    _r("create_table_tag", "POST", "/v1/table/{id}/tags/create", "CreateTableTagRequest", "CreateTableTagResponse"),
    _r("delete_table_tag", "POST", "/v1/table/{id}/tags/delete", "DeleteTableTagRequest", "DeleteTableTagResponse"),
    _r("update_table_tag", "POST", "/v1/table/{id}/tags/update", "UpdateTableTagRequest", "UpdateTableTagResponse"),
    _r(
        "create_table_branch",
        "POST",
        "/v1/table/{id}/branches/create",
        "CreateTableBranchRequest",
        "CreateTableBranchResponse",
    ),
    _r(
        "list_table_branches",
        "POST",
        "/v1/table/{id}/branches/list",
        "ListTableBranchesRequest",
        "ListTableBranchesResponse",
    ),
    _r(
        "delete_table_branch",
        "POST",
        "/v1/table/{id}/branches/delete",
        "DeleteTableBranchRequest",
        "DeleteTableBranchResponse",
    ),
]

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
    from lance_namespace_urllib3_client import models

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
