"""``DirectoryNamespace``: a catalog of Lance tables in one directory, kept exactly as
pylance 14's directory namespace keeps it, so either library lists, opens and changes
the other's catalog.

Layout (relative to ``root``): ``__manifest/`` (a Lance dataset, one row per namespace
and table), ``{name}.lance/`` for a table of the root namespace, ``{8 hex}_{a$b$t}/`` for
a table of a child namespace; ``.lance-reserved`` marks a declared table's directory and
``.lance-deregistered`` a deregistered root table. Child namespaces exist only as rows.
"""

from __future__ import annotations

import functools
import math
import os
import re
import secrets
from typing import Any, Dict, List, Optional

import lance_namespace as ln
from lance_namespace import LanceNamespace
from lance_namespace_urllib3_client.models import (
    BranchContents,
    FragmentStats,
    FragmentSummary,
    IndexContent,
    TagContents,
)

from ..dataset import dataset, write_dataset
from ..errors import LanceNotFoundError
from ._access import coerce, ident, ipc_table
from ._catalog import DELIMITER, Catalog, namespace_row, object_id, properties_of, table_row
from ._data import DataPlane
from ._routes import ROUTES
from ._schema import json_schema
from ._storage import open_root
from ._versions import Versions

__all__ = ["DirectoryNamespace"]

RESERVED = ".lance-reserved"
DEREGISTERED = ".lance-deregistered"
_MARKER_BYTES = b"reserved"


def _flag(value: Any, default: bool) -> bool:
    if value is None:
        return default
    return str(value).strip().lower() in ("1", "true", "yes", "on")


def _page(names: List[str], token: Optional[str], limit: Optional[int]):
    names = sorted(set(names))
    if token:
        names = [n for n in names if n > token]
    if limit is not None and limit > 0 and len(names) > limit:
        names = names[:limit]
        return names, names[-1]
    return names, None


class DirectoryNamespace(DataPlane, Versions, LanceNamespace):
    """A namespace of tables under ``root`` (a local directory, a ``file://`` URI, or an
    object-store URI such as ``s3://bucket/catalog``), compatible with pylance 14's
    ``lance.namespace.DirectoryNamespace`` (same ``__manifest`` table, same layout).

    ``properties`` are pylance's: ``manifest_enabled`` (default ``"true"``),
    ``dir_listing_enabled`` (default ``"true"``: ``*.lance`` directories directly under
    the root are tables of the root namespace too), ``storage.<key>`` (storage options of
    the root's object store, e.g. ``storage.aws_region``), ``vend_input_storage_options``
    (default ``"false"``: ``describe_table``/``declare_table`` hand those options to
    clients only when true), ``table_version_tracking_enabled`` (default ``"false"``:
    when true, tables are versioned through the namespace, ``managed_versioning``).
    Methods take the request models of the ``lance_namespace`` package (or plain dicts
    of their fields) and return its response models; failures raise its typed errors.

    >>> import tempfile, lance_namespace as ln
    >>> ns = DirectoryNamespace(root=tempfile.mkdtemp())
    >>> _ = ns.create_namespace(ln.CreateNamespaceRequest(id=["sales"]))
    >>> ns.list_namespaces(ln.ListNamespacesRequest(id=[])).namespaces
    ['sales']
    """

    def __init__(
        self, root: Optional[str] = None, session: Any = None, context_provider: Any = None, **properties: Any
    ):
        props = {k: (str(v).lower() if isinstance(v, bool) else str(v)) for k, v in properties.items()}
        if root is None:
            root = props.pop("root", None)
        if root is None:
            raise ln.InvalidInputError("Invalid input: DirectoryNamespace needs root=")
        self._root_arg = os.fspath(root)
        self._props = props
        self._manifest = _flag(props.get("manifest_enabled"), True)
        self._listing = _flag(props.get("dir_listing_enabled"), True)
        self._vend = _flag(props.get("vend_input_storage_options"), False)
        self._tracking = _flag(props.get("table_version_tracking_enabled"), False)
        self._storage_options = {k[len("storage.") :]: v for k, v in props.items() if k.startswith("storage.")} or None
        self._fs = open_root(self._root_arg, self._storage_options)
        self._catalog = Catalog(self._fs)

    @property
    def root(self) -> str:
        """The root: an absolute local path, or the object-store URI."""
        return self._fs.root

    @property
    def table_version_tracking_enabled(self) -> bool:
        """Whether tables are versioned through the namespace (``describe_table`` and
        ``declare_table`` then say ``managed_versioning=True``, and writers commit with
        ``create_table_version``): the ``table_version_tracking_enabled`` property."""
        return self._tracking

    def _vended(self) -> Optional[Dict[str, str]]:
        """The storage options handed to readers and writers of a table: only with
        ``vend_input_storage_options="true"``, as pylance (they carry credentials)."""
        return self._storage_options if self._vend else None

    def _managed(self) -> Optional[bool]:
        return True if self._tracking else None

    def namespace_id(self) -> str:
        """``DirectoryNamespace { root: "/path" }``, as pylance names it."""
        return f'DirectoryNamespace {{ root: "{self._fs.root}" }}'

    def __repr__(self) -> str:
        return self.namespace_id()

    # ------------------------------------------------------------------ lookups

    def _rows(self) -> List[Dict[str, Any]]:
        return self._catalog.rows() if self._manifest else []

    @staticmethod
    def _find(rows, oid: str, kind: str):
        for r in rows:
            if r["object_id"] == oid and r["object_type"] == kind:
                return r
        return None

    def _listed_root_tables(self) -> Dict[str, str]:
        """Root tables found by listing ``*.lance`` directories: ``{name: dir}``."""
        if not self._listing:
            return {}
        out = {}
        for d in self._fs.child_dirs():
            if d.endswith(".lance") and len(d) > len(".lance") and DELIMITER not in d:
                if self._fs.has_any_file(d) and not self._fs.exists(f"{d}/{DEREGISTERED}"):
                    out[d[: -len(".lance")]] = d
        return out

    def _namespace_exists(self, rows, parts: List[str]) -> bool:
        return not parts or self._find(rows, object_id(parts), "namespace") is not None

    def _check_parent(self, rows, parts: List[str]) -> None:
        if len(parts) > 1 and not self._manifest:
            raise ln.UnsupportedOperationError(
                "Not supported: child namespaces are only supported when manifest mode is enabled"
            )
        if not self._namespace_exists(rows, parts[:-1]):
            raise ln.NamespaceNotFoundError(f"Namespace not found: parent namespace '{object_id(parts[:-1])}'")

    def _table_dir(self, rows, parts: List[str]) -> Optional[str]:
        """The table's directory relative to the root, or None when it is not in the catalog."""
        if not parts:
            return None
        row = self._find(rows, object_id(parts), "table")
        if row is not None and row.get("location"):
            return _inside_root(row["location"], object_id(parts))
        if len(parts) == 1:
            return self._listed_root_tables().get(parts[0])
        return None

    def _require_table(self, rows, parts: List[str]) -> str:
        loc = self._table_dir(rows, parts)
        if loc is None:
            raise ln.TableNotFoundError(f"Table not found: table id '{object_id(parts)}'")
        return loc

    def _location(self, rel: str, parts: List[str]) -> str:
        # pylance reports local root tables by path, child-namespace tables by file:// URI,
        # and every table of an object-store root by its URI.
        return self._fs.path(rel) if len(parts) == 1 and self._fs.is_local else self._fs.uri(rel)

    def _new_dir(self, parts: List[str]) -> str:
        if len(parts) == 1:
            return f"{parts[0]}.lance"
        return f"{secrets.token_hex(4)}_{object_id(parts)}"

    def _has_data(self, rel: str) -> bool:
        return any(n.endswith(".manifest") for n in self._fs.list_files(f"{rel}/_versions"))

    def _open(self, request: Any, parts: Optional[List[str]] = None):
        parts = ident(request) if parts is None else parts
        rel = self._require_table(self._rows(), parts)
        if not self._has_data(rel):
            raise ln.InvalidTableStateError(
                f"Invalid table state: table '{object_id(parts)}' is declared but has no data"
            )
        version = getattr(request, "version", None)
        branch = getattr(request, "branch", None)
        try:
            ds = dataset(self._fs.path(rel), version=None if branch else version, storage_options=self._storage_options)
            if branch and branch != "main":
                if not hasattr(ds, "create_branch"):
                    raise ln.UnsupportedOperationError("Not supported: branches need a lancelet with branch support")
                ds = ds.checkout_version((branch, version))
            return ds
        except LanceNotFoundError as e:
            if version is not None or branch:
                raise ln.TableVersionNotFoundError(f"Table version not found: {version} ({e})") from None
            raise ln.TableNotFoundError(f"Table not found: {e}") from None

    # ------------------------------------------------------------------ namespaces

    def list_namespaces(self, request: ln.ListNamespacesRequest) -> ln.ListNamespacesResponse:
        """The direct child namespaces of ``request.id`` (``[]`` = the root), sorted."""
        parts = ident(request)
        prefix = object_id(parts) + DELIMITER if parts else ""
        names = [
            r["object_id"][len(prefix) :]
            for r in self._rows()
            if r["object_type"] == "namespace"
            and r["object_id"].startswith(prefix)
            and DELIMITER not in r["object_id"][len(prefix) :]
        ]
        names, token = _page(names, request.page_token, request.limit)
        return ln.ListNamespacesResponse(namespaces=names, page_token=token)

    def describe_namespace(self, request: ln.DescribeNamespaceRequest) -> ln.DescribeNamespaceResponse:
        """The namespace's properties."""
        parts = ident(request)
        if not parts:
            return ln.DescribeNamespaceResponse(properties={})
        row = self._find(self._rows(), object_id(parts), "namespace")
        if row is None:
            raise ln.NamespaceNotFoundError(f"Namespace not found: {object_id(parts)}")
        return ln.DescribeNamespaceResponse(properties=properties_of(row))

    def namespace_exists(self, request: ln.NamespaceExistsRequest) -> ln.NamespaceExistsResponse:
        """An empty response when the namespace exists, else ``NamespaceNotFoundError``."""
        parts = ident(request)
        if not self._namespace_exists(self._rows(), parts):
            raise ln.NamespaceNotFoundError(f"Namespace not found: {object_id(parts)}")
        return ln.NamespaceExistsResponse()

    def create_namespace(self, request: ln.CreateNamespaceRequest) -> ln.CreateNamespaceResponse:
        """Adds a namespace (its parent must exist). ``mode``: ``"create"`` (default: an
        existing one is ``NamespaceAlreadyExistsError``), ``"exist_ok"``, ``"overwrite"``
        (replaces the properties)."""
        parts = ident(request)
        if not parts:
            raise ln.NamespaceAlreadyExistsError("Namespace already exists: the root namespace")
        if not self._manifest:
            raise ln.UnsupportedOperationError("Not supported: namespaces need manifest_enabled=true")
        mode = (request.mode or "create").lower()
        props = dict(request.properties or {})
        oid = object_id(parts)

        def edit(rows):
            self._check_parent(rows, parts)
            row = self._find(rows, oid, "namespace")
            if row is not None:
                if mode in ("exist_ok", "existok"):
                    return None, properties_of(row)
                if mode != "overwrite":
                    raise ln.NamespaceAlreadyExistsError(f"Namespace already exists: {oid}")
                rows = [r for r in rows if r is not row]
            return rows + [namespace_row(oid, props)], props

        result = self._catalog.change(edit)
        return ln.CreateNamespaceResponse(properties=result)

    def drop_namespace(self, request: ln.DropNamespaceRequest) -> ln.DropNamespaceResponse:
        """Drops an empty namespace; ``behavior="Cascade"`` drops its tables (data deleted)
        and child namespaces too. ``mode="skip"`` ignores a missing namespace."""
        parts = ident(request)
        if not parts:
            raise ln.InvalidInputError("Invalid input: the root namespace cannot be dropped")
        oid = object_id(parts)
        cascade = (request.behavior or "").lower() == "cascade"
        skip = (request.mode or "").lower() == "skip"
        doomed: List[str] = []

        def edit(rows):
            row = self._find(rows, oid, "namespace")
            if row is None:
                if skip:
                    return None, {}
                raise ln.NamespaceNotFoundError(f"Namespace not found: {oid}")
            children = [r for r in rows if r["object_id"].startswith(oid + DELIMITER)]
            if children and not cascade:
                raise ln.NamespaceNotEmptyError(
                    f"Namespace not empty: '{oid}' (contains {len(children)} child objects)"
                )
            doomed[:] = [r["location"] for r in children if r["object_type"] == "table" and r.get("location")]
            gone = {id(r) for r in children} | {id(row)}
            return [r for r in rows if id(r) not in gone], properties_of(row)

        self._catalog.change(edit)
        for rel in doomed:
            self._fs.delete_tree(rel)
        return ln.DropNamespaceResponse()

    # ------------------------------------------------------------------ tables

    def _table_names(self, parts: List[str], include_declared: bool) -> List[str]:
        rows = self._rows()
        prefix = object_id(parts) + DELIMITER if parts else ""
        names = []
        for r in rows:
            if r["object_type"] != "table" or not r["object_id"].startswith(prefix):
                continue
            rest = r["object_id"][len(prefix) :]
            if DELIMITER in rest:
                continue
            if not include_declared and not self._has_data(r["location"]):
                continue
            names.append(rest)
        if not parts:
            for name, rel in self._listed_root_tables().items():
                if include_declared or self._has_data(rel):
                    names.append(name)
        return names

    def list_tables(self, request: ln.ListTablesRequest) -> ln.ListTablesResponse:
        """The tables directly in ``request.id``, sorted; declared tables (no data yet)
        too unless ``include_declared=False``; ``limit``/``page_token`` page through."""
        parts = ident(request)
        if parts and not self._manifest:
            raise ln.UnsupportedOperationError(
                "Not supported: child namespaces are only supported when manifest mode is enabled"
            )
        include = request.include_declared is not False
        names, token = _page(self._table_names(parts, include), request.page_token, request.limit)
        return ln.ListTablesResponse(tables=names, page_token=token)

    def list_all_tables(self, request: ln.ListTablesRequest) -> ln.ListTablesResponse:
        """Every table of every namespace, by full id (``a$b$t``), sorted."""
        names = [r["object_id"] for r in self._rows() if r["object_type"] == "table"]
        names += list(self._listed_root_tables())
        names, token = _page(names, request.page_token, request.limit)
        return ln.ListTablesResponse(tables=names, page_token=token)

    def describe_table(self, request: ln.DescribeTableRequest) -> ln.DescribeTableResponse:
        """Where the table lives (``location``, ``table_uri``); with
        ``load_detailed_metadata=True`` also its version, schema and statistics."""
        parts = ident(request)
        rel = self._require_table(self._rows(), parts)
        loc = self._location(rel, parts)
        out: Dict[str, Any] = dict(
            table=parts[-1],
            namespace=parts[:-1],
            location=loc,
            table_uri=loc,
            storage_options=self._vended(),
            managed_versioning=self._managed(),
        )
        wants = request.load_detailed_metadata or request.version is not None or request.tag
        if wants and self._has_data(rel):
            ds = dataset(
                self._fs.path(rel),
                version=request.version if request.version is not None else request.tag,
                storage_options=self._storage_options,
            )
            out.update(version=ds.version, is_only_declared=False)
            if request.load_detailed_metadata:
                out["var_schema"] = json_schema(ds.schema)
                out["metadata"] = _table_metadata(ds)
        elif request.load_detailed_metadata:
            out["is_only_declared"] = True
        return ln.DescribeTableResponse(**out)

    def get_table_stats(self, request: ln.GetTableStatsRequest) -> ln.GetTableStatsResponse:
        """Rows, bytes of data files, index count and fragment length statistics. Rows are
        counted as stored (deleted rows included), as pylance 14 counts them here."""
        ds = self._open(request)
        frags = ds.get_fragments()
        lengths = sorted(f.physical_rows for f in frags) or [0]

        def pct(p: float) -> int:  # nearest rank
            return lengths[max(0, math.ceil(p * len(lengths)) - 1)]

        summary = FragmentSummary(
            min=lengths[0], max=lengths[-1], mean=sum(lengths) // len(lengths),
            p25=pct(0.25), p50=pct(0.5), p75=pct(0.75), p99=pct(0.99),
        )  # fmt: skip
        small = sum(1 for f in frags if f.physical_rows < _SMALL_FRAGMENT_ROWS)
        return ln.GetTableStatsResponse(
            total_bytes=sum(d.file_size_bytes or 0 for f in frags for d in f.data_files()),
            num_rows=sum(f.physical_rows for f in frags),
            num_indices=len(ds.list_indices()),
            fragment_stats=FragmentStats(num_fragments=len(frags), num_small_fragments=small, lengths=summary),
        )

    def list_table_indices(self, request: ln.ListTableIndicesRequest) -> ln.ListTableIndicesResponse:
        """The table's indexes, one per name, sorted: name, uuid (of its first segment),
        columns, type, type URL, indexed and unindexed rows, size, segments, creation time."""
        ds = self._open(request)
        rows = ds.count_rows()
        indexes = []
        for d in sorted(ds.describe_indices(), key=lambda d: d.name):
            first = d.segments[0] if d.segments else None
            indexes.append(
                IndexContent(
                    index_name=d.name,
                    index_uuid=first.uuid if first else "",
                    columns=list(d.field_names),
                    status="SUCCEEDED",
                    index_type=d.index_type,
                    type_url=d.type_url,
                    num_indexed_rows=d.num_rows_indexed,
                    num_unindexed_rows=max(0, rows - d.num_rows_indexed),
                    size_bytes=d.total_size_bytes,
                    num_segments=d.num_segments,
                    created_at=first.created_at if first else None,
                    index_version=first.index_version if first else None,
                )
            )
        return ln.ListTableIndicesResponse(indexes=indexes)

    def table_exists(self, request: ln.TableExistsRequest) -> ln.TableExistsResponse:
        """An empty response when the table is in the catalog (declared ones too)."""
        self._require_table(self._rows(), ident(request))
        return ln.TableExistsResponse()

    def _reserve(self, parts: List[str], location: Optional[str] = None, marker: bool = True) -> str:
        """Adds a table row (and the ``.lance-reserved`` marker of a declared table, unless
        ``marker`` is False: a table created with its data at once has none, as in
        pylance); returns its directory."""
        if not parts:
            raise ln.InvalidInputError("Invalid input: a table id needs at least one part")
        oid = object_id(parts)

        def edit(rows):
            self._check_parent(rows, parts)
            if self._table_dir(rows, parts) is not None:
                raise ln.TableAlreadyExistsError(f"Table already exists: {oid}")
            rel = location or self._new_dir(parts)
            if marker:
                self._fs.write(f"{rel}/{RESERVED}", _MARKER_BYTES)
            self._fs.delete(f"{rel}/{DEREGISTERED}")
            if not self._manifest:
                return None, rel
            return rows + [table_row(oid, rel)], rel

        return self._catalog.change(edit)

    def declare_table(self, request: ln.DeclareTableRequest) -> ln.DeclareTableResponse:
        """Reserves a table (a catalog row and its directory, no data yet); write it with
        ``lancelet.write_dataset(data, namespace_client=ns, table_id=...)``."""
        parts = ident(request)
        rel = self._reserve(parts, self._requested_dir(parts, request.location))
        return ln.DeclareTableResponse(
            location=self._fs.uri(rel), storage_options=self._vended(), managed_versioning=self._managed()
        )

    def _requested_dir(self, parts: List[str], location: Optional[str]) -> Optional[str]:
        """The directory a declare asked for: only the one the layout would choose
        (``{name}.lance``, or ``{8 hex}_{id}`` in a child namespace), as pylance allows."""
        if not location or not parts:
            return None
        rel = self._fs.relative(location) or ""
        want = object_id(parts)
        ok = rel == f"{want}.lance" if len(parts) == 1 else re.fullmatch(r"[0-9a-f]{8}_" + re.escape(want), rel)
        if not ok:
            expected = self._fs.uri(f"{want}.lance") if len(parts) == 1 else self._fs.uri(f"{{8 hex}}_{want}")
            raise ln.InvalidInputError(
                f"Invalid input: Cannot declare table {want} at location {location}, must be at location {expected}"
            )
        return rel

    def create_table(self, request: ln.CreateTableRequest, request_data: bytes) -> ln.CreateTableResponse:
        """Creates a table from an Arrow IPC stream (``request_data``). ``mode``:
        ``"create"`` (default), ``"exist_ok"``, ``"overwrite"``."""
        parts = ident(request)
        table = ipc_table(request_data)
        mode = (request.mode or "create").lower()
        rows = self._rows()
        rel = self._table_dir(rows, parts)
        if rel is not None and self._has_data(rel):
            if mode in ("exist_ok", "existok"):
                ds = self._open(request, parts)
                return ln.CreateTableResponse(
                    location=self._fs.uri(rel), version=ds.version, storage_options=self._storage_options
                )
            if mode != "overwrite":
                raise ln.TableAlreadyExistsError(f"Table already exists: {object_id(parts)}")
        if rel is None:
            rel = self._reserve(parts, marker=False)
        ds = write_dataset(
            table,
            self._fs.path(rel),
            mode="overwrite" if self._has_data(rel) else "create",
            storage_options=self._storage_options,
        )
        return ln.CreateTableResponse(
            location=self._fs.uri(rel), version=ds.version, storage_options=self._storage_options
        )

    def insert_into_table(self, request: ln.InsertIntoTableRequest, request_data: bytes) -> ln.InsertIntoTableResponse:
        """Appends (``mode="append"``, default) or overwrites with an Arrow IPC stream."""
        parts = ident(request)
        rel = self._require_table(self._rows(), parts)
        table = ipc_table(request_data)
        mode = (request.mode or "append").lower()
        if mode not in ("append", "overwrite"):
            raise ln.InvalidInputError(
                f"Invalid input: Unsupported write mode '{request.mode}'. Supported modes are: 'append', 'overwrite'"
            )
        ds = write_dataset(
            table,
            self._fs.path(rel),
            mode=mode if self._has_data(rel) else "create",
            storage_options=self._storage_options,
        )
        return ln.InsertIntoTableResponse(num_inserted_rows=table.num_rows, version=ds.version)

    def register_table(self, request: ln.RegisterTableRequest) -> ln.RegisterTableResponse:
        """Adds an existing dataset to the catalog; ``location`` is relative to the root."""
        parts = ident(request)
        loc = request.location or ""
        within = f"Location must be a relative path within the root directory: {loc}"
        if "://" in loc:
            raise ln.InvalidInputError(f"Invalid input: Absolute URIs are not allowed for register_table. {within}")
        if os.path.isabs(loc):
            raise ln.InvalidInputError(f"Invalid input: Absolute paths are not allowed for register_table. {within}")
        norm = os.path.normpath(loc).replace(os.sep, "/")
        if norm.startswith("../") or norm == "..":
            raise ln.InvalidInputError(f"Invalid input: Path traversal is not allowed. {within}")
        if not loc or norm == ".":
            raise ln.InvalidInputError(f"Invalid input: location {loc!r} must name a directory inside the root")
        if not self._manifest:
            raise ln.UnsupportedOperationError("Not supported: register_table needs manifest_enabled=true")
        oid = object_id(parts)

        def edit(rows):
            self._check_parent(rows, parts)
            if self._find(rows, oid, "table") is not None:
                raise ln.TableAlreadyExistsError(f"Table already exists: {oid}")
            return rows + [table_row(oid, norm)], None

        self._catalog.change(edit)
        self._fs.delete(f"{norm}/{DEREGISTERED}")
        return ln.RegisterTableResponse(location=norm, properties=request.properties)

    def deregister_table(self, request: ln.DeregisterTableRequest) -> ln.DeregisterTableResponse:
        """Removes the table from the catalog and keeps its data. A root table's directory
        also gets a ``.lance-deregistered`` marker, so directory listing no longer finds it."""
        parts = ident(request)
        oid = object_id(parts)

        def edit(rows):
            rel = self._require_table(rows, parts)
            row = self._find(rows, oid, "table")
            return ([r for r in rows if r is not row] if row is not None else None), rel

        rel = self._catalog.change(edit)
        if len(parts) == 1 and rel == f"{parts[0]}.lance":
            self._fs.write(f"{rel}/{DEREGISTERED}", _MARKER_BYTES)
        return ln.DeregisterTableResponse(id=parts, location=self._fs.uri(rel))

    def drop_table(self, request: ln.DropTableRequest) -> ln.DropTableResponse:
        """Removes the table from the catalog and deletes its directory."""
        parts = ident(request)
        oid = object_id(parts)

        def edit(rows):
            rel = self._require_table(rows, parts)
            row = self._find(rows, oid, "table")
            return ([r for r in rows if r is not row] if row is not None else None), rel

        rel = self._catalog.change(edit)
        self._fs.delete_tree(rel)
        return ln.DropTableResponse(id=parts, location=self._fs.uri(rel))

    def rename_table(self, request: ln.RenameTableRequest) -> ln.RenameTableResponse:
        """Renames a table (``new_table_name``, optionally into ``new_namespace_id``)
        (pylance 14's directory namespace does not rename). The catalog row changes; a root
        table's ``{name}.lance`` directory is moved to the new name's directory, since
        directory listing would otherwise find it under the old name too."""
        parts = ident(request)
        if not self._manifest:
            raise ln.UnsupportedOperationError("Not supported: rename_table needs manifest_enabled=true")
        target_ns = list(request.new_namespace_id) if request.new_namespace_id is not None else parts[:-1]
        target = ident(ln.ListTablesRequest(id=target_ns + [request.new_table_name]))
        oid, new_oid = object_id(parts), object_id(target)
        rows = self._rows()
        rel = self._require_table(rows, parts)
        self._check_parent(rows, target)
        if self._table_dir(rows, target) is not None:
            raise ln.TableAlreadyExistsError(f"Table already exists: {new_oid}")
        new_rel = self._new_dir(target) if len(parts) == 1 and rel == f"{parts[0]}.lance" else rel
        if new_rel != rel:
            self._fs.rename(rel, new_rel)

        def edit(rows):
            if self._find(rows, new_oid, "table") is not None:  # (directories were checked above)
                raise ln.TableAlreadyExistsError(f"Table already exists: {new_oid}")
            kept = [r for r in rows if not (r["object_id"] == oid and r["object_type"] == "table")]
            return kept + [table_row(new_oid, new_rel)], None

        try:
            self._catalog.change(edit)
        except BaseException:
            if new_rel != rel:
                self._fs.rename(new_rel, rel)
            raise
        return ln.RenameTableResponse()

    def count_table_rows(self, request: ln.CountTableRowsRequest) -> ln.CountTableRowsResponse:
        """Rows of the table (at ``version``; matching ``predicate``, an SQL filter)."""
        return ln.CountTableRowsResponse(count=self._open(request).count_rows(request.predicate or None))

    def restore_table(self, request: ln.RestoreTableRequest) -> ln.RestoreTableResponse:
        """Commits a new version with the content of ``request.version``."""
        ds = self._open(ln.DescribeTableRequest(id=request.id))
        ds.checkout_version(request.version).restore()
        return ln.RestoreTableResponse()

    # ------------------------------------------------------------------ versions and tags

    def list_table_tags(self, request: ln.ListTableTagsRequest) -> ln.ListTableTagsResponse:
        """Every tag: ``{name: TagContents(branch, version, manifest_size)}``."""
        tags = self._open(ln.DescribeTableRequest(id=request.id)).tags.list()
        return ln.ListTableTagsResponse(
            tags={
                name: TagContents.model_validate(
                    {"branch": t.get("branch"), "version": t["version"], "manifestSize": t.get("manifest_size") or 0}
                )
                for name, t in sorted(tags.items())
            }
        )

    def _tags(self, request: Any):
        return self._open(ln.DescribeTableRequest(id=request.id)).tags

    def get_table_tag_version(self, request: ln.GetTableTagVersionRequest) -> ln.GetTableTagVersionResponse:
        """The version a tag points at."""
        tags = self._tags(request).list()
        if request.tag not in tags:
            raise ln.TableTagNotFoundError(f"Table tag not found: {request.tag}")
        return ln.GetTableTagVersionResponse(
            version=tags[request.tag]["version"], branch=tags[request.tag].get("branch")
        )

    def create_table_tag(self, request: ln.CreateTableTagRequest) -> ln.CreateTableTagResponse:
        """Creates a tag (``TableTagAlreadyExistsError`` if it exists)."""
        tags = self._tags(request)
        if request.tag in tags.list():
            raise ln.TableTagAlreadyExistsError(f"Table tag already exists: {request.tag}")
        ref: Any = (request.branch, request.version) if request.branch else request.version
        _tag_call(lambda: tags.create(request.tag, ref), request.version)
        return ln.CreateTableTagResponse()

    def update_table_tag(self, request: ln.UpdateTableTagRequest) -> ln.UpdateTableTagResponse:
        """Moves a tag to another version."""
        tags = self._tags(request)
        if request.tag not in tags.list():
            raise ln.TableTagNotFoundError(f"Table tag not found: {request.tag}")
        _tag_call(lambda: tags.update(request.tag, request.version), request.version)
        return ln.UpdateTableTagResponse()

    def delete_table_tag(self, request: ln.DeleteTableTagRequest) -> ln.DeleteTableTagResponse:
        """Deletes a tag."""
        tags = self._tags(request)
        if request.tag not in tags.list():
            raise ln.TableTagNotFoundError(f"Table tag not found: {request.tag}")
        tags.delete(request.tag)
        return ln.DeleteTableTagResponse()

    # ------------------------------------------------------------------ branches

    def _branching(self, request: Any):
        ds = self._open(ln.DescribeTableRequest(id=request.id))
        if not hasattr(ds, "create_branch") or not hasattr(ds, "branches"):
            raise ln.UnsupportedOperationError("Not supported: branches need a lancelet with branch support")
        return ds

    def create_table_branch(self, request: ln.CreateTableBranchRequest) -> ln.CreateTableBranchResponse:
        """Creates branch ``name`` from ``from_branch`` (main when None) at ``from_version``."""
        ds = self._branching(request)
        if request.name in ds.branches.list():
            raise ln.TableBranchAlreadyExistsError(f"Table branch already exists: {request.name}")
        if request.from_branch:
            ref: Any = (request.from_branch, request.from_version)
        else:
            ref = request.from_version
        ds.create_branch(request.name, ref)
        return ln.CreateTableBranchResponse()

    def list_table_branches(self, request: ln.ListTableBranchesRequest) -> ln.ListTableBranchesResponse:
        """Every branch: ``{name: BranchContents(parent_branch, parent_version, ...)}``."""
        ds = self._branching(request)
        out = {}
        for name, b in sorted(ds.branches.list().items()):
            out[name] = BranchContents.model_validate(
                {
                    "parentBranch": b.get("parent_branch"),
                    "parentVersion": b.get("parent_version") or 0,
                    "createAt": b.get("create_at") or 0,
                    "manifestSize": b.get("manifest_size") or 0,
                    "metadata": b.get("metadata") or None,
                }
            )
        return ln.ListTableBranchesResponse(branches=out)

    def delete_table_branch(self, request: ln.DeleteTableBranchRequest) -> ln.DeleteTableBranchResponse:
        """Deletes a branch."""
        ds = self._branching(request)
        if request.name not in ds.branches.list():
            raise ln.TableBranchNotFoundError(f"Table branch not found: {request.name}")
        ds.branches.delete(request.name)
        return ln.DeleteTableBranchResponse()


def _accepting_dicts(method: Any, model_name: str) -> Any:
    """``method`` taking its request as the spec's model or a plain dict of its fields."""

    @functools.wraps(method)
    def call(self: Any, request: Any, *args: Any) -> Any:
        return method(self, coerce(request, model_name), *args)

    return call


for _route in ROUTES:
    # (the operations of the mixins take dicts themselves)
    own = not any(_route.method in vars(mixin) for mixin in (DataPlane, Versions))
    if own and hasattr(DirectoryNamespace, _route.method):
        setattr(
            DirectoryNamespace,
            _route.method,
            _accepting_dicts(getattr(DirectoryNamespace, _route.method), _route.request),
        )


def _inside_root(location: str, oid: str) -> str:
    """A manifest row's table location, refused when it is absolute or leaves the root
    (a hostile or damaged ``__manifest`` must not make ``drop_table`` delete elsewhere)."""
    norm = os.path.normpath(location).replace(os.sep, "/")
    if os.path.isabs(location) or "://" in location or norm in (".", "..") or norm.startswith("../"):
        raise ln.InvalidTableStateError(
            f"Invalid table state: table '{oid}' has location {location!r} in __manifest, outside the root"
        )
    return norm


#: Fragments with fewer rows than this count as small in ``get_table_stats``.
_SMALL_FRAGMENT_ROWS = 1024 * 1024


def _table_metadata(ds: Any) -> Dict[str, str]:
    """pylance's ``describe_table`` metadata: row, fragment, file and size totals."""
    frags = ds.get_fragments()
    files = [d for f in frags for d in f.data_files()]
    deletions = [f.num_deletions for f in frags if f.num_deletions]
    physical = sum(f.physical_rows for f in frags)
    return {
        "total_rows": str(physical - sum(deletions)),
        "total_fragments": str(len(frags)),
        "total_data_files": str(len(files)),
        "total_data_file_rows": str(physical),
        "total_deletion_files": str(len(deletions)),
        "total_deletion_file_rows": str(sum(deletions)),
        "total_files_size": str(sum(d.file_size_bytes or 0 for d in files)),
    }


def _tag_call(run, version: Any) -> None:
    """Runs a tag change for ``version``: a version that cannot exist (not a positive
    number) or does not exist is the namespace's TableVersionNotFoundError; another bad
    argument is InvalidInputError."""
    if isinstance(version, int) and not isinstance(version, bool) and version <= 0:
        raise ln.TableVersionNotFoundError(f"Table version not found: {version}")
    try:
        run()
    except LanceNotFoundError as e:
        raise ln.TableVersionNotFoundError(f"Table version not found: {e}") from None
    except ValueError as e:
        raise ln.InvalidInputError(f"Invalid input: {e}") from None
