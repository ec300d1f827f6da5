"""``LanceOperation`` kinds beyond Append and Overwrite, pylance's ``Transaction``, and the
conversions between them and :mod:`lancelet._native` (``ds_commit_operation``,
``ds_read_transaction``).

A distributed job plans a change, writes its files (``LanceFragment.delete``, fragments
written with :func:`lancelet.fragment.write_fragments`...), and commits it once with
``LanceDataset.commit(uri, operation, read_version=...)``, as with pylance::

    updated, deleted = [], []
    for frag in ds.get_fragments():
        new = frag.delete("a >= 2")
        (updated.append(new) if new is not None else deleted.append(frag.fragment_id))
    op = lancelet.LanceOperation.Delete(updated, deleted, "a >= 2")
    lancelet.LanceDataset.commit(uri, op, read_version=ds.version)

``transaction_properties`` (and ``commit_message``, stored as ``__lance_commit_message``)
go into the transaction file, where ``ds.read_transaction(version)`` and
``ds.get_transactions()`` find them, in either library.
"""

from __future__ import annotations

import dataclasses
import uuid as _uuid
from dataclasses import dataclass
from typing import Any, Dict, Iterable, List, Optional, Tuple, Union

import pyarrow as pa

from .errors import InvalidArgumentError, UnsupportedFeatureError
from .schema import LanceSchema

#: The transaction property pylance keeps a commit message in.
COMMIT_MESSAGE_KEY = "__lance_commit_message"


class BaseOperation:
    """An operation :meth:`lancelet.LanceDataset.commit` applies."""


def _frag_list(frags: Any, what: str) -> list:
    from .fragment import FragmentMetadata

    if frags is None:
        return []
    if isinstance(frags, (str, bytes, dict)) or not isinstance(frags, Iterable):
        raise TypeError(f"{what} must be a list of FragmentMetadata, got {type(frags).__name__}")
    out = list(frags)
    for f in out:
        if not isinstance(f, FragmentMetadata):
            raise TypeError(f"{what} must be a list of FragmentMetadata, got {type(f).__name__}")
    return out


def _ids(ids: Any, what: str) -> List[int]:
    try:
        out = [int(i) for i in (ids or [])]
    except (TypeError, ValueError):
        raise TypeError(f"{what} must be a list of fragment ids, got {ids!r}") from None
    if any(i < 0 for i in out):
        raise InvalidArgumentError(f"{what} must be non-negative, got {out}")
    return out


@dataclass
class Delete(BaseOperation):
    """Rows deleted: ``updated_fragments`` carry new deletion files (from
    :meth:`LanceFragment.delete`), ``deleted_fragment_ids`` lost every row.

    >>> op = lancelet.LanceOperation.Delete([frag.delete("a > 1")], [], "a > 1")  # doctest: +SKIP
    """

    updated_fragments: Iterable[Any]
    deleted_fragment_ids: Iterable[int]
    predicate: str

    def __post_init__(self) -> None:
        self.updated_fragments = _frag_list(self.updated_fragments, "updated_fragments")
        self.deleted_fragment_ids = _ids(self.deleted_fragment_ids, "deleted_fragment_ids")


@dataclass
class Update(BaseOperation):
    """Rows rewritten: fragments removed whole, fragments with new deletion (or data)
    files, and new fragments holding the new rows.

    >>> op = lancelet.LanceOperation.Update(updated_fragments=[f], new_fragments=new)  # doctest: +SKIP
    """

    removed_fragment_ids: List[int] = dataclasses.field(default_factory=list)
    updated_fragments: List[Any] = dataclasses.field(default_factory=list)
    new_fragments: List[Any] = dataclasses.field(default_factory=list)
    fields_modified: List[int] = dataclasses.field(default_factory=list)
    fields_for_preserving_frag_bitmap: List[int] = dataclasses.field(default_factory=list)
    update_mode: str = ""
    updated_fragment_offsets: Optional[Dict[int, bytes]] = None

    def __post_init__(self) -> None:
        self.removed_fragment_ids = _ids(self.removed_fragment_ids, "removed_fragment_ids")
        self.updated_fragments = _frag_list(self.updated_fragments, "updated_fragments")
        self.new_fragments = _frag_list(self.new_fragments, "new_fragments")
        self.fields_modified = [int(x) for x in self.fields_modified or []]
        self.fields_for_preserving_frag_bitmap = [int(x) for x in self.fields_for_preserving_frag_bitmap or []]


@dataclass
class Merge(BaseOperation):
    """New columns: every fragment of the version read, with its new data files, and the
    whole new schema (a :class:`lancelet.schema.LanceSchema`; a ``pyarrow.Schema`` is
    numbered 0, 1, ... as pylance does).

    >>> op = lancelet.LanceOperation.Merge(fragments, schema)  # doctest: +SKIP
    """

    fragments: Iterable[Any]
    schema: Union[LanceSchema, pa.Schema]
    preserves_nullability: bool = False

    def __post_init__(self) -> None:
        self.fragments = _frag_list(self.fragments, "fragments")
        _schema_arg(self.schema)


@dataclass
class Project(BaseOperation):
    """A new schema over the same data: drop, rename, reorder or swap columns (field ids
    say which stored column each field reads).

    >>> op = lancelet.LanceOperation.Project(LanceSchema.from_pyarrow(new_schema))  # doctest: +SKIP
    """

    schema: Union[LanceSchema, pa.Schema]
    preserves_nullability: bool = False

    def __post_init__(self) -> None:
        _schema_arg(self.schema)


@dataclass
class Restore(BaseOperation):
    """The content of ``version`` becomes the newest version.

    >>> op = lancelet.LanceOperation.Restore(2)  # doctest: +SKIP
    """

    version: int


@dataclass
class DataReplacementGroup:
    """One new data file for fragment ``fragment_id``: it replaces the file holding
    exactly the same fields (or joins the fragment when no file holds any of them)."""

    fragment_id: int
    new_file: Any


@dataclass
class DataReplacement(BaseOperation):
    """Data files replaced in place (committed as the Update it amounts to).

    >>> op = lancelet.LanceOperation.DataReplacement([DataReplacementGroup(0, data_file)])  # doctest: +SKIP
    """

    replacements: List[DataReplacementGroup]


@dataclass
class RewriteGroup:
    """Fragments rewritten (``old_fragments``) into others (``new_fragments``)."""

    old_fragments: Iterable[Any]
    new_fragments: Iterable[Any]


@dataclass
class RewrittenIndex:
    """An index rewritten along with a Rewrite (read from pylance's transactions)."""

    old_id: str
    new_id: str
    new_details_type_url: str
    new_details_value: bytes
    new_index_version: int


@dataclass
class Rewrite(BaseOperation):
    """Fragments rewritten into others holding the same live rows (compaction)."""

    groups: Iterable[RewriteGroup]
    rewritten_indices: Iterable[RewrittenIndex] = ()

    def __post_init__(self) -> None:
        self.groups = list(self.groups)
        for g in self.groups:
            g.old_fragments = _frag_list(g.old_fragments, "old_fragments")
            g.new_fragments = _frag_list(g.new_fragments, "new_fragments")
        self.rewritten_indices = list(self.rewritten_indices or [])


@dataclass
class CreateIndex(BaseOperation):
    """An index created (read from transactions; build indexes with ``create_index``)."""

    new_indices: List[Any]
    removed_indices: List[Any]


@dataclass
class UpdateMap:
    """Changes to a string map: ``None`` values delete keys; ``replace`` replaces the map."""

    updates: Dict[str, Optional[str]]
    replace: bool = False


@dataclass
class UpdateConfig(BaseOperation):
    """Changes to the dataset configuration and table metadata.

    >>> op = lancelet.LanceOperation.UpdateConfig(config_updates=UpdateMap({"k": "v"}))  # doctest: +SKIP
    """

    config_updates: Optional[UpdateMap] = None
    table_metadata_updates: Optional[UpdateMap] = None
    schema_metadata_updates: Optional[UpdateMap] = None
    field_metadata_updates: Optional[Dict[int, UpdateMap]] = None


@dataclass
class Clone(BaseOperation):
    """A shallow clone or a branch's creation (read from transactions)."""

    is_shallow: bool
    ref_name: Optional[str]
    ref_version: int
    ref_path: str
    branch_name: Optional[str]


@dataclass
class Other(BaseOperation):
    """An operation lancelet reads but does not model (its name only)."""

    name: str


@dataclass
class Transaction:
    """An operation with the version it was planned on and its properties, as pylance's
    ``lance.Transaction`` (``ds.read_transaction(v)``; ``LanceDataset.commit`` takes one)."""

    read_version: int
    operation: BaseOperation
    uuid: str = dataclasses.field(default_factory=lambda: str(_uuid.uuid4()))
    transaction_properties: Optional[Dict[str, str]] = dataclasses.field(default_factory=dict)


#: Operation classes this module adds to ``LanceOperation``.
CLASSES = {
    c.__name__: c
    for c in (
        Delete,
        Update,
        Merge,
        Project,
        Restore,
        DataReplacementGroup,
        DataReplacement,
        RewriteGroup,
        RewrittenIndex,
        Rewrite,
        CreateIndex,
        UpdateMap,
        UpdateConfig,
        Clone,
    )
}


def _schema_arg(schema: Any) -> Tuple[pa.Schema, Optional[List[int]]]:
    if isinstance(schema, LanceSchema):
        return schema.to_pyarrow(), schema._native_ids()
    if isinstance(schema, pa.Schema):
        return schema, None
    raise TypeError(f"schema must be a lancelet.schema.LanceSchema or pyarrow.Schema, got {type(schema).__name__}")


def _json(frags: Iterable[Any]) -> List[Dict[str, Any]]:
    return [f.to_json() for f in frags]


def _file_json(f: Any) -> Dict[str, Any]:
    if hasattr(f, "_asdict"):
        d = dict(f._asdict())
    elif isinstance(f, dict):
        d = dict(f)
    else:
        d = {k: getattr(f, k) for k in ("path", "fields", "column_indices", "file_major_version", "file_minor_version")}
        d["file_size_bytes"] = getattr(f, "file_size_bytes", None)
        d["base_id"] = getattr(f, "base_id", None)
    return {k: v for k, v in d.items() if v is not None or k != "base_id"}


def _map_json(m: Optional[UpdateMap]) -> Optional[Dict[str, Any]]:
    if m is None:
        return None
    if not isinstance(m, UpdateMap):
        raise TypeError(f"expected LanceOperation.UpdateMap, got {type(m).__name__}")
    return {"updates": dict(m.updates), "replace": bool(m.replace)}


def native_args(op: BaseOperation) -> Tuple[str, Dict[str, Any]]:
    """``(kind, args)`` for ``_native.ds_commit_operation``."""
    if isinstance(op, Delete):
        return "Delete", {
            "updated_fragments": _json(op.updated_fragments),
            "deleted_fragment_ids": list(op.deleted_fragment_ids),
            "predicate": str(op.predicate or ""),
        }
    if isinstance(op, Update):
        if op.updated_fragment_offsets:
            raise UnsupportedFeatureError("Update.updated_fragment_offsets are not supported by lancelet")
        return "Update", {
            "removed_fragment_ids": list(op.removed_fragment_ids),
            "updated_fragments": _json(op.updated_fragments),
            "new_fragments": _json(op.new_fragments),
            "fields_modified": list(op.fields_modified),
        }
    if isinstance(op, Merge):
        schema, ids = _schema_arg(op.schema)
        return "Merge", {"fragments": _json(op.fragments), "schema": schema, "field_ids": ids}
    if isinstance(op, Project):
        schema, ids = _schema_arg(op.schema)
        return "Project", {"schema": schema, "field_ids": ids}
    if isinstance(op, Restore):
        return "Restore", {"version": int(op.version)}
    if isinstance(op, DataReplacement):
        groups = []
        for g in op.replacements:
            if not isinstance(g, DataReplacementGroup):
                raise TypeError(f"replacements must be DataReplacementGroup objects, got {type(g).__name__}")
            groups.append((int(g.fragment_id), _file_json(g.new_file)))
        return "DataReplacement", {"replacements": groups}
    if isinstance(op, Rewrite):
        if op.rewritten_indices:
            raise UnsupportedFeatureError("committing a Rewrite with rewritten_indices is not supported by lancelet")
        rewrite = [
            {"old_fragments": _json(g.old_fragments), "new_fragments": _json(g.new_fragments)} for g in op.groups
        ]
        return "Rewrite", {"groups": rewrite}
    if isinstance(op, UpdateConfig):
        if op.field_metadata_updates:
            raise UnsupportedFeatureError("UpdateConfig.field_metadata_updates are not supported by lancelet")
        return "UpdateConfig", {
            "config_updates": _map_json(op.config_updates),
            "table_metadata_updates": _map_json(op.table_metadata_updates),
            "schema_metadata_updates": _map_json(op.schema_metadata_updates),
        }
    if isinstance(op, Clone):
        raise UnsupportedFeatureError("commit a Clone with ds.shallow_clone() or ds.create_branch()")
    raise UnsupportedFeatureError(f"lancelet cannot commit {type(op).__name__} operations")


def properties(transaction_properties: Optional[Dict[str, str]], commit_message: Optional[str]) -> Dict[str, str]:
    """The transaction properties of a commit (the message under pylance's key)."""
    if transaction_properties is not None and not isinstance(transaction_properties, dict):
        raise InvalidArgumentError(
            f"transaction_properties must be a dict, got {type(transaction_properties).__name__}"
        )
    out = {}
    for k, v in (transaction_properties or {}).items():
        if not isinstance(k, str) or not isinstance(v, str):
            raise InvalidArgumentError(f"transaction_properties must map strings to strings, got {k!r}: {v!r}")
        out[k] = v
    if commit_message is not None:
        out[COMMIT_MESSAGE_KEY] = str(commit_message)
    return out


def _capsule_schema(capsule: Any) -> pa.Schema:
    """A schema exported by ``_native`` as an Arrow C schema capsule."""
    return pa.Schema._import_from_c_capsule(capsule)


def _schema_from(d: Dict[str, Any]) -> LanceSchema:
    return LanceSchema(_capsule_schema(d["schema"]), d.get("field_ids"))


def from_native(d: Dict[str, Any], lance_operation: Any) -> Transaction:
    """A :class:`Transaction` from ``_native.ds_read_transaction``'s dict."""
    from .fragment import DataFile, FragmentMetadata

    def frags(key: str, src: Optional[Dict[str, Any]] = None) -> List[Any]:
        return [FragmentMetadata(f) for f in (src or d).get(key, [])]

    def update_map(m: Optional[Dict[str, Any]]) -> Optional[UpdateMap]:
        return None if m is None else UpdateMap(dict(m["updates"]), bool(m["replace"]))

    kind = d["kind"]
    op: BaseOperation
    if kind == "Append":
        op = lance_operation.Append(frags("fragments"))
    elif kind == "Overwrite":
        op = lance_operation.Overwrite(_capsule_schema(d["schema"]), frags("fragments"))
    elif kind == "Delete":
        op = Delete(frags("updated_fragments"), list(d["deleted_fragment_ids"]), d["predicate"])
    elif kind == "Update":
        op = Update(
            removed_fragment_ids=list(d["removed_fragment_ids"]),
            updated_fragments=frags("updated_fragments"),
            new_fragments=frags("new_fragments"),
            fields_modified=list(d["fields_modified"]),
            fields_for_preserving_frag_bitmap=list(d.get("fields_for_preserving_frag_bitmap", [])),
        )
    elif kind == "Merge":
        op = Merge(frags("fragments"), _schema_from(d), preserves_nullability=False)
    elif kind == "Project":
        op = Project(_schema_from(d))
    elif kind == "Restore":
        op = Restore(d["version"])
    elif kind == "Rewrite":
        op = Rewrite([RewriteGroup(frags("old_fragments", g), frags("new_fragments", g)) for g in d["groups"]])
    elif kind == "DataReplacement":
        op = DataReplacement(
            [
                DataReplacementGroup(fid, DataFile(**{k: v for k, v in f.items() if k in DataFile._fields}))
                for fid, f in d["replacements"]
            ]
        )
    elif kind == "UpdateConfig":
        op = UpdateConfig(
            config_updates=update_map(d.get("config_updates")),
            table_metadata_updates=update_map(d.get("table_metadata_updates")),
            schema_metadata_updates=update_map(d.get("schema_metadata_updates")),
        )
    elif kind == "Clone":
        op = Clone(d["is_shallow"], d["ref_name"], d["ref_version"], d["ref_path"], d["branch_name"])
    elif kind == "CreateIndex":
        op = CreateIndex([], [])
    else:
        op = Other(kind)
    return Transaction(d["read_version"], op, d["uuid"], dict(d["properties"]))


def read_transaction(ds: Any, version: Optional[int], lance_operation: Any) -> Optional[Transaction]:
    """See ``LanceDataset.read_transaction``."""
    from . import _native

    d = _native.ds_read_transaction(ds._native, version)
    return None if d is None else from_native(d, lance_operation)


def get_transactions(ds: Any, recent_transactions: int, lance_operation: Any) -> List[Optional[Transaction]]:
    """See ``LanceDataset.get_transactions``: newest first, from this version down."""
    if isinstance(recent_transactions, bool) or not isinstance(recent_transactions, int) or recent_transactions < 0:
        raise InvalidArgumentError(f"recent_transactions must be a non-negative int, got {recent_transactions!r}")
    out: List[Optional[Transaction]] = []
    v = ds.version
    while v >= 1 and len(out) < recent_transactions:
        try:
            out.append(read_transaction(ds, v, lance_operation))
        except Exception:  # a version cleaned up: pylance gives None for it as well
            out.append(None)
        v -= 1
    return out


def commit_other(
    path: str,
    operation: BaseOperation,
    read_version: Optional[int],
    props: Dict[str, str],
    storage_options: Optional[Dict[str, str]],
    max_retries: Optional[int],
    commit_namespace: Any = None,
) -> Any:
    """Commits an operation other than Append/Overwrite (through ``commit_namespace`` when
    a namespace manages the table's versions); returns the native dataset."""
    from . import _native

    kind, args = native_args(operation)
    return _native.ds_commit_operation(
        path,
        kind,
        args,
        read_version=read_version,
        properties=props,
        storage_options=storage_options,
        max_retries=max_retries,
        commit_namespace=commit_namespace,
    )


def fragment_delete(fragment: Any, predicate: Any) -> Any:
    """See ``LanceFragment.delete``: the fragment's metadata with the rows matching
    ``predicate`` deleted (a new deletion file, not committed), or None when no row is left."""
    from . import _native
    from .fragment import FragmentMetadata

    if not isinstance(predicate, str):
        from ._expressions import to_sql

        predicate = to_sql(predicate)
    d = _native.ds_fragment_delete(fragment._ds._native, fragment.fragment_id, predicate)
    return None if d is None else FragmentMetadata(d)
