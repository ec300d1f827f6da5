"""The data-plane operations of :class:`DirectoryNamespace` (the spec's ``merge_insert``,
``update``, ``delete``, ``query``, query plans, indexes, schema changes), over lancelet's
dataset API, with pylance 14's request handling and response shapes.

Requests are the spec's models or plain dicts of their fields; failures are the spec's
typed errors (where pylance reports an ``InternalError`` for a bad column or filter,
lancelet says ``InvalidInputError``).
"""

from __future__ import annotations

import contextlib
import json
from typing import Any, Dict, Iterator, List, Mapping, Optional

import lance_namespace as ln
import pyarrow as pa

from .. import errors as _errors
from ..dataset import LanceDataset, LanceOperation
from ._access import TableAccess, coerce, ident, ipc_table
from ._schema import arrow_type

__all__ = ["DataPlane"]

#: Scalar index types lancelet builds, with the spellings the spec also allows.
_SCALAR = {"BTREE", "BITMAP", "LABEL_LIST", "ZONEMAP", "NGRAM", "BLOOMFILTER", "SCALAR"}
#: Full-text indexes (lancelet has none yet).
_TEXT = {"INVERTED", "FTS"}


@contextlib.contextmanager
def translated() -> Iterator[None]:
    """lancelet's exceptions as the namespace spec's errors."""
    try:
        yield
    except ln.LanceNamespaceError:
        raise
    except _errors.CommitConflictError as e:
        raise ln.ConcurrentModificationError(f"Concurrent modification: {e}") from None
    except _errors.UnsupportedFeatureError as e:
        raise ln.UnsupportedOperationError(f"Not supported: {e}") from None
    except _errors.SchemaMismatchError as e:
        raise ln.TableSchemaValidationError(f"Table schema validation error: {e}") from None
    except _errors.LanceNotFoundError as e:
        raise ln.TableNotFoundError(f"Table not found: {e}") from None
    except (_errors.InvalidArgumentError, ValueError, TypeError) as e:
        raise ln.InvalidInputError(f"Invalid input: {e}") from None


def _txn_id(ds: Any) -> Optional[str]:
    """The uuid of the transaction that made ``ds``'s version (the spec's ``transaction_id``)."""
    txn = ds.read_transaction()
    return txn.uuid if txn is not None else None


def _ipc_file(table: pa.Table) -> bytes:
    sink = pa.BufferOutputStream()
    with pa.ipc.new_file(sink, table.schema) as w:
        w.write_table(table)
    return sink.getvalue().to_pybytes()


def _index_kind(index_type: str) -> str:
    kind = (index_type or "").strip().upper()
    if kind == "SCALAR":
        return "BTREE"
    if kind == "VECTOR":
        return "IVF_PQ"
    return kind


class DataPlane(TableAccess):
    """Mixin of :class:`DirectoryNamespace`: the operations on a table's rows, indexes
    and schema."""

    # ------------------------------------------------------------------ rows

    def merge_insert_into_table(self, request: Any, request_data: bytes) -> ln.MergeInsertIntoTableResponse:
        """Upserts the rows of an Arrow IPC stream by the key columns ``on``:
        ``when_matched_update_all`` (optionally only where ``when_matched_update_all_filt``
        holds), ``when_not_matched_insert_all``, ``when_not_matched_by_source_delete``
        (optionally filtered), as ``LanceDataset.merge_insert`` does.

        >>> ns.merge_insert_into_table(MergeInsertIntoTableRequest(id=["t"], on=["id"],
        ...     when_matched_update_all=True, when_not_matched_insert_all=True), ipc)  # doctest: +SKIP
        """
        req = coerce(request, "MergeInsertIntoTableRequest")
        on = [req.on] if isinstance(req.on, str) else list(req.on or [])
        if not on:
            raise ln.InvalidInputError("Invalid input: 'on' field is required for merge_insert_into_table")
        if not (
            req.when_matched_update_all or req.when_not_matched_insert_all or req.when_not_matched_by_source_delete
        ):
            raise ln.InvalidInputError(
                "Invalid input: the merge insert job is not configured to change the data in any way "
                "(set when_matched_update_all, when_not_matched_insert_all or when_not_matched_by_source_delete)"
            )
        table = ipc_table(request_data)
        ds = self._writable(req)
        with translated():
            builder = ds.merge_insert(on)
            if req.when_matched_update_all:
                builder = builder.when_matched_update_all(req.when_matched_update_all_filt or None)
            if req.when_not_matched_insert_all:
                builder = builder.when_not_matched_insert_all()
            if req.when_not_matched_by_source_delete:
                builder = builder.when_not_matched_by_source_delete(req.when_not_matched_by_source_delete_filt or None)
            counts = builder.execute(table)
        return ln.MergeInsertIntoTableResponse(
            num_updated_rows=counts.get("num_updated_rows", 0),
            num_inserted_rows=counts.get("num_inserted_rows", 0),
            num_deleted_rows=counts.get("num_deleted_rows", 0),
            version=ds.version,
        )

    def update_table(self, request: Any) -> ln.UpdateTableResponse:
        """Sets columns to SQL expressions (``updates=[["col", "expr"], ...]``) in the rows
        matching ``predicate`` (every row when None)."""
        req = coerce(request, "UpdateTableRequest")
        updates = [list(u) for u in (req.updates or [])]
        if not updates:
            raise ln.InvalidInputError("Invalid input: update_table requires at least one [column, expression] pair")
        if any(len(u) != 2 for u in updates):
            raise ln.InvalidInputError(f"Invalid input: each update is a [column, expression] pair, got {updates!r}")
        ds = self._writable(req)
        with translated():
            n = ds.update({c: e for c, e in updates}, where=req.predicate or None)["num_rows_updated"]
        return ln.UpdateTableResponse(updated_rows=n, version=ds.version, transaction_id=_txn_id(ds) if n else None)

    def delete_from_table(self, request: Any) -> ln.DeleteFromTableResponse:
        """Deletes the rows matching ``predicate`` (an SQL filter, required)."""
        req = coerce(request, "DeleteFromTableRequest")
        if not (req.predicate or "").strip():
            raise ln.InvalidInputError("Invalid input: delete_from_table requires a non-empty predicate")
        ds = self._writable(req)
        with translated():
            ds.delete(req.predicate)
        return ln.DeleteFromTableResponse(version=ds.version)

    # ------------------------------------------------------------------ queries

    def _scanner(self, req: Any) -> Any:
        """The scanner a ``QueryTableRequest`` (or the flat fields of an analyze request) describes."""
        if req.full_text_query is not None:
            raise ln.UnsupportedOperationError("Not supported: full-text queries (lancelet has no full-text index yet)")
        ds = self._open(ln.DescribeTableRequest(id=ident(req), version=req.version, branch=req.branch))
        columns: Any = None
        if req.columns is not None:
            if req.columns.column_aliases:
                columns = dict(req.columns.column_aliases)
            elif req.columns.column_names is not None:
                columns = list(req.columns.column_names)
        k = req.k or None
        vector = req.vector
        nearest = None
        if vector is not None and vector.multi_vector:
            raise ln.UnsupportedOperationError("Not supported: multi-vector queries")
        if vector is not None and vector.single_vector:
            nearest = {"column": req.vector_column or "vector", "q": list(vector.single_vector), "k": req.k or 10}
            for key, value in (
                ("nprobes", req.nprobes),
                ("minimum_nprobes", req.minimum_nprobes),
                ("maximum_nprobes", req.maximum_nprobes),
                ("refine_factor", req.refine_factor),
                ("metric", req.distance_type),
                ("ef", req.ef),
            ):
                if value is not None:
                    nearest[key] = value
            if req.bypass_vector_index:
                nearest["use_index"] = False
            if req.lower_bound is not None or req.upper_bound is not None:
                nearest["distance_range"] = (req.lower_bound, req.upper_bound)
        with translated():
            return ds.scanner(
                columns=columns,
                filter=req.filter or None,
                limit=k if nearest is None else None,
                offset=req.offset or None,
                nearest=nearest,
                prefilter=req.prefilter,
                with_row_id=req.with_row_id,
                fast_search=req.fast_search,
            )

    def query_table(self, request: Any) -> ln.QueryTableResponse:
        """Runs a scan or a vector search (``vector.single_vector`` against
        ``vector_column``, default ``"vector"``) and returns the rows as Arrow IPC *file*
        bytes (``pa.ipc.open_file(response.data).read_all()``), as pylance does. ``k=0``
        means no limit for plain scans."""
        req = coerce(request, "QueryTableRequest")
        scanner = self._scanner(req)
        with translated():
            table = scanner.to_table()
        return ln.QueryTableResponse(data=_ipc_file(table))

    def explain_table_query_plan(self, request: Any) -> str:
        """The plan of ``request.query`` (lancelet's plan text, not pylance's)."""
        req = coerce(request, "ExplainTableQueryPlanRequest")
        query = req.query.model_copy(update={"id": ident(req), "branch": req.branch or req.query.branch})
        scanner = self._scanner(query)
        with translated():
            return scanner.explain_plan(bool(req.verbose))

    def analyze_table_query_plan(self, request: Any) -> str:
        """The plan of the query, run, with what running it did."""
        req = coerce(request, "AnalyzeTableQueryPlanRequest")
        scanner = self._scanner(req)
        with translated():
            return scanner.analyze_plan()

    # ------------------------------------------------------------------ indexes

    def _index(self, req: Any, scalar_only: bool) -> str:
        kind = _index_kind(req.index_type)
        if kind in _TEXT:
            raise ln.UnsupportedOperationError(f"Not supported: {req.index_type} indexes (no full-text search yet)")
        is_scalar = kind in _SCALAR
        if scalar_only and not is_scalar:
            raise ln.InvalidInputError(
                f"Invalid input: create_table_scalar_index only supports scalar index types, got {req.index_type}"
            )
        if not is_scalar and not kind.startswith("IVF_"):
            raise ln.InvalidInputError(f"Invalid input: Unsupported index_type '{req.index_type}'")
        ds = self._writable(req)
        existing = ds.list_indices()
        name = req.name
        if name is None:
            same = [i for i in existing if list(i["fields"]) == [req.column] and _same_type(i["type"], kind)]
            if same:
                raise ln.TableIndexAlreadyExistsError(
                    f"Table index already exists: index '{same[0]['name']}' already covers column '{req.column}'"
                )
            taken = {i["name"] for i in existing}
            name, n = f"{req.column}_idx", 2
            while name in taken:
                name, n = f"{req.column}_idx_{n}", n + 1
        else:
            clash = [i for i in existing if i["name"] == name and list(i["fields"]) != [req.column]]
            if clash:
                raise ln.TableIndexAlreadyExistsError(
                    f"Table index already exists: index '{name}' already exists with different fields"
                )
        with translated():
            if is_scalar:
                ds.create_scalar_index(req.column, kind, name=name, replace=True)
            else:
                params: Dict[str, Any] = {}
                for key in ("num_partitions", "num_sub_vectors", "num_bits", "sample_rate", "target_partition_size"):
                    value = getattr(req, key, None)
                    if value is not None:
                        params[key] = value
                if req.max_iterations is not None:
                    params["max_iters"] = req.max_iterations
                ds.create_index(req.column, kind, name=name, metric=req.distance_type or "L2", replace=True, **params)
        return _txn_id(ds) or ""

    def create_table_index(self, request: Any) -> ln.CreateTableIndexResponse:
        """Builds an index on ``column``: scalar (``BTREE``, ``BITMAP``, ``LABEL_LIST``,
        ``ZONEMAP``, ``NGRAM``, ``BLOOMFILTER``, ``SCALAR`` = BTREE) or vector (``IVF_FLAT``,
        ``IVF_PQ``, ``IVF_SQ``, ``VECTOR`` = IVF_PQ; ``distance_type``, ``num_partitions``,
        ``num_sub_vectors``...). Unnamed indexes are called ``{column}_idx`` (``_2``,
        ``_3``... when taken), as pylance names them; a named one replaces the index of that
        name on the same column."""
        req = coerce(request, "CreateTableIndexRequest")
        return ln.CreateTableIndexResponse(transaction_id=self._index(req, scalar_only=False))

    def create_table_scalar_index(self, request: Any) -> ln.CreateTableScalarIndexResponse:
        """:meth:`create_table_index` for scalar index types only."""
        req = coerce(request, "CreateTableIndexRequest")
        return ln.CreateTableScalarIndexResponse(transaction_id=self._index(req, scalar_only=True))

    def describe_table_index_stats(self, request: Any) -> ln.DescribeTableIndexStatsResponse:
        """Type and coverage of index ``index_name`` (pylance's spelling of the type:
        ``BTree``, ``Bitmap``, ``IVF_PQ``...)."""
        req = coerce(request, "DescribeTableIndexStatsRequest")
        ds = self._open(ln.DescribeTableRequest(id=ident(req), version=req.version, branch=req.branch))
        if not any(i["name"] == req.index_name for i in ds.list_indices()):
            raise ln.TableIndexNotFoundError(f"Table index not found: {req.index_name}")
        with translated():
            stats = ds.index_statistics(req.index_name)
        return ln.DescribeTableIndexStatsResponse(
            index_type=stats.get("index_type"),
            num_indexed_rows=stats.get("num_indexed_rows"),
            num_unindexed_rows=stats.get("num_unindexed_rows"),
            num_indices=stats.get("num_indices"),
        )

    def drop_table_index(self, request: Any) -> ln.DropTableIndexResponse:
        """Drops index ``index_name`` (a new version; its files stay until cleanup)."""
        req = coerce(request, "DropTableIndexRequest")
        ds = self._writable(req)
        if not any(i["name"] == req.index_name for i in ds.list_indices()):
            raise ln.TableIndexNotFoundError(f"Table index not found: {req.index_name}")
        with translated():
            ds.drop_index(req.index_name)
        return ln.DropTableIndexResponse(transaction_id=_txn_id(ds))

    # ------------------------------------------------------------------ schema

    def update_table_schema_metadata(self, request: Any) -> ln.UpdateTableSchemaMetadataResponse:
        """Merges ``metadata`` into the schema's metadata (a new version); returns the
        whole metadata after, as pylance does."""
        req = coerce(request, "UpdateTableSchemaMetadataRequest")
        ds = self._writable(req)
        updates: Dict[str, Optional[str]] = {str(k): str(v) for k, v in (req.metadata or {}).items()}
        with translated():
            op = LanceOperation.UpdateConfig(schema_metadata_updates=LanceOperation.UpdateMap(updates))
            ds = LanceDataset.commit(ds, op, read_version=ds.version, storage_options=self._storage_options)
        meta = {k.decode(): v.decode() for k, v in (ds.schema.metadata or {}).items()}
        return ln.UpdateTableSchemaMetadataResponse(metadata=meta, transaction_id=_txn_id(ds))

    def alter_table_add_columns(self, request: Any) -> ln.AlterTableAddColumnsResponse:
        """Adds columns computed by SQL expressions (``new_columns=[{"name", "expression"}]``)."""
        req = coerce(request, "AlterTableAddColumnsRequest")
        transforms: Dict[str, str] = {}
        for entry in req.new_columns or []:
            if getattr(entry, "virtual_column", None) is not None or not entry.expression:
                raise ln.UnsupportedOperationError(
                    f"Not supported: column {entry.name!r} needs an SQL expression (virtual columns are not supported)"
                )
            transforms[entry.name] = entry.expression
        if not transforms:
            raise ln.InvalidInputError("Invalid input: alter_table_add_columns needs at least one new column")
        ds = self._writable(req)
        with translated():
            ds.add_columns(transforms)
        return ln.AlterTableAddColumnsResponse(version=ds.version)

    def alter_table_alter_columns(self, request: Any) -> ln.AlterTableAlterColumnsResponse:
        """Renames columns (``rename``), makes them nullable (``nullable=True``) or casts
        them (``data_type``: an Arrow type as the spec's JSON, ``{"type": "float32"}``, or
        that JSON as a string)."""
        req = coerce(_json_types(request), "AlterTableAlterColumnsRequest")
        alterations: List[Dict[str, Any]] = []
        for entry in req.alterations or []:
            if getattr(entry, "virtual_column", None) is not None:
                raise ln.UnsupportedOperationError("Not supported: virtual columns")
            change: Dict[str, Any] = {"path": entry.path}
            if entry.rename is not None:
                change["name"] = entry.rename
            if entry.nullable is not None:
                change["nullable"] = entry.nullable
            if entry.data_type is not None:
                with translated():
                    change["data_type"] = arrow_type(entry.data_type)
            alterations.append(change)
        if not alterations:
            raise ln.InvalidInputError("Invalid input: alter_table_alter_columns needs at least one alteration")
        ds = self._writable(req)
        with translated():
            ds.alter_columns(*alterations)
        return ln.AlterTableAlterColumnsResponse(version=ds.version)

    def alter_table_drop_columns(self, request: Any) -> ln.AlterTableDropColumnsResponse:
        """Drops ``columns`` (dotted paths reach struct fields)."""
        req = coerce(request, "AlterTableDropColumnsRequest")
        ds = self._writable(req)
        with translated():
            ds.drop_columns(list(req.columns or []))
        return ln.AlterTableDropColumnsResponse(version=ds.version, transaction_id=_txn_id(ds))


def _json_types(request: Any) -> Any:
    """A dict request with ``data_type`` given as a JSON string (pylance's form) turned into
    the JSON object the spec's model types it as."""
    if not isinstance(request, Mapping):
        return request
    alterations = []
    for entry in request.get("alterations") or []:
        if isinstance(entry, Mapping) and isinstance(entry.get("data_type"), str):
            try:
                entry = dict(entry, data_type=json.loads(entry["data_type"]))
            except ValueError as e:
                raise ln.InvalidInputError(f"Invalid input: data_type is not JSON: {e}") from None
        alterations.append(entry)
    return dict(request, alterations=alterations)


def _same_type(listed: str, kind: str) -> bool:
    """Whether an index listed with type ``listed`` (``BTree``, ``IVF_PQ``...) is of ``kind``."""
    return listed.replace("_", "").upper() == kind.replace("_", "").upper()
