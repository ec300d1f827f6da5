"""``LanceOperation`` kinds beyond Append and Overwrite, pylance's ``Transaction``, and the
conversions between them and :mod:`lancelet._native.dataset` (``ds_commit_operation``,
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
import datetime as _dt
import uuid as _uuid
from dataclasses import dataclass
from typing import Any, Dict, Iterable, List, Optional, Tuple, Union

import pyarrow as pa

from ._argcheck import _native_uri
from ._native import dataset as _native_dataset
from .errors import InvalidArgumentError, UnsupportedFeatureError
from .fragment import DataFile, FragmentMetadata
from .schema import LanceSchema

#: The transaction property pylance keeps a commit message in.
COMMIT_MESSAGE_KEY = "__lance_commit_message"


class Bitmap(set):
    """A set of fragment ids (pylance returns a ``lance.bitmap.Bitmap``; this is a ``set``):
    an index segment's ``fragment_ids``."""

    def __repr__(self) -> str:
        return f"Bitmap({set(sorted(self))!r})" if self else "Bitmap({})"


class BaseOperation:
    """An operation :meth:`lancelet.LanceDataset.commit` applies."""


def _frag_list(frags: Any, what: str) -> list:
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
    """An index remapped onto a Rewrite's new fragments: the entry ``old_id`` becomes
    ``new_id`` (a directory of remapped files) with the given details and version."""

    old_id: str
    new_id: str
    new_details_type_url: str
    new_details_value: bytes
    new_index_version: int


@dataclass
class Rewrite(BaseOperation):
    """Fragments rewritten into others holding the same live rows (compaction). On a
    dataset with stable row ids each new fragment carries its rows' ids
    (``FragmentMetadata.row_id_meta``, see :class:`lancelet.fragment.RowIdSequence`).

    >>> op = lancelet.LanceOperation.Rewrite([lancelet.LanceOperation.RewriteGroup(old, new)], [])  # doctest: +SKIP
    """

    groups: Iterable[RewriteGroup]
    rewritten_indices: Iterable[RewrittenIndex] = ()

    def __post_init__(self) -> None:
        self.groups = list(self.groups)
        for g in self.groups:
            g.old_fragments = _frag_list(g.old_fragments, "old_fragments")
            g.new_fragments = _frag_list(g.new_fragments, "new_fragments")
        self.rewritten_indices = list(self.rewritten_indices or [])


@dataclass
class IndexFile:
    """One file of an index segment: its path inside the segment's directory and its size."""

    path: str
    size_bytes: int


@dataclass
class Index:
    """One index segment as the manifest records it (pylance's ``lance.dataset.Index``):
    what ``create_index_uncommitted`` returns and ``LanceOperation.CreateIndex`` commits.

    ``uuid`` names its directory under ``_indices/``; ``fields`` are field ids (the keyed
    one first, then any ``covering_fields``); ``fragment_ids`` the fragments it covers;
    ``created_at`` a timezone-aware datetime (stored to the millisecond); ``index_details``
    ``(type_url, value)``; ``files`` its :class:`IndexFile` list.

    >>> seg = ds.create_index_uncommitted("a", "BTREE", fragment_ids=[0])  # doctest: +SKIP
    >>> op = lancelet.LanceOperation.CreateIndex(new_indices=[seg], removed_indices=[])  # doctest: +SKIP
    """

    uuid: str
    name: str
    fields: List[int]
    dataset_version: int
    fragment_ids: Any
    index_version: int
    created_at: Optional[_dt.datetime] = None
    base_id: Optional[int] = None
    files: Optional[List[IndexFile]] = None
    index_details: Optional[Tuple[str, bytes]] = None
    covering_fields: List[int] = dataclasses.field(default_factory=list)


@dataclass
class CreateIndex(BaseOperation):
    """Index segments added (``new_indices``, their files written, e.g. by
    ``create_index_uncommitted`` in either library) and others removed
    (``removed_indices``, matched by uuid; ones the dataset lacks are ignored).

    >>> segs = [ds.create_index_uncommitted("a", "BTREE", fragment_ids=[f]) for f in (0, 1)]  # doctest: +SKIP
    >>> op = lancelet.LanceOperation.CreateIndex(new_indices=segs, removed_indices=[])  # doctest: +SKIP
    >>> lancelet.LanceDataset.commit(uri, op, read_version=ds.version)  # doctest: +SKIP
    """

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
    """A shallow clone (or a branch's creation, read from transactions). Committed to a new
    location, it makes that location a shallow clone of ``ref_path`` at ``ref_version``
    whose base path for the source is named ``ref_name``, as in pylance.

    >>> op = lancelet.LanceOperation.Clone(True, None, 2, src_uri, None)  # doctest: +SKIP
    >>> lancelet.LanceDataset.commit(new_uri, op, read_version=0)  # doctest: +SKIP
    """

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
        IndexFile,
        Index,
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


#: The field id pylance gives a data file's copy of a field that another file now holds.
TOMBSTONE = -2


def without_tombstones(frag: Dict[str, Any]) -> Dict[str, Any]:
    """A fragment's JSON without tombstoned fields (-2, as pylance's ``update_columns``,
    ``alter_columns`` and ``drop_columns`` leave them): each such field is dropped with its
    column index, which reads the same. lancelet's native commit checks every field id
    against the schema and has no tombstones (a Rust-side gap); files left with no field
    are dropped."""
    files = []
    for f in frag.get("files", []):
        if TOMBSTONE not in f.get("fields", []):
            files.append(f)
            continue
        keep = [k for k, i in enumerate(f["fields"]) if i != TOMBSTONE]
        if keep:
            cols = f.get("column_indices") or []
            files.append(
                {
                    **f,
                    "fields": [f["fields"][k] for k in keep],
                    "column_indices": [cols[k] for k in keep] if len(cols) == len(f["fields"]) else cols,
                }
            )
    return {**frag, "files": files}


def _json(frags: Iterable[Any]) -> List[Dict[str, Any]]:
    return [without_tombstones(f.to_json()) for f in frags]


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


_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)


def _int(v: Any, what: str) -> int:
    if isinstance(v, bool) or not isinstance(v, int):
        raise TypeError(f"{what} must be an int, got {type(v).__name__}")
    return v


def index_dict(x: Any) -> Dict[str, Any]:
    """An ``Index`` (lancelet's, pylance's, or any object with its attributes) as the dict
    ``_native`` takes."""
    created = x.created_at
    if created is not None:
        if not isinstance(created, _dt.datetime) or created.tzinfo is None:
            raise TypeError("expected a datetime with non-None tzinfo")
        created = (created - _EPOCH) // _dt.timedelta(milliseconds=1)
    files = x.files
    if files is not None:
        files = [(str(f.path), _int(f.size_bytes, "IndexFile.size_bytes")) for f in files]
    details = x.index_details
    if details is not None:
        type_url, value = details
        if not isinstance(value, bytes):
            raise TypeError(f"index_details value must be bytes, got {type(value).__name__}")
        details = (str(type_url), value)
    base_id = x.base_id
    return {
        "uuid": str(x.uuid),
        "name": str(x.name),
        "fields": [_int(f, "Index.fields") for f in x.fields],
        "dataset_version": _int(x.dataset_version, "Index.dataset_version"),
        "fragment_ids": sorted(int(f) for f in x.fragment_ids),
        "index_version": _int(x.index_version, "Index.index_version"),
        "created_at": created,
        "base_id": None if base_id is None else _int(base_id, "Index.base_id"),
        "files": files,
        "details": details,
        "covering_fields": [_int(f, "Index.covering_fields") for f in getattr(x, "covering_fields", None) or []],
    }


def index_from_dict(d: Dict[str, Any]) -> Index:
    """An :class:`Index` from ``_native``'s dict."""
    created = d["created_at"]
    return Index(
        uuid=d["uuid"],
        name=d["name"],
        fields=list(d["fields"]),
        dataset_version=d["dataset_version"],
        fragment_ids=Bitmap(d["fragment_ids"]),
        index_version=d["index_version"],
        created_at=None if created is None else _EPOCH + _dt.timedelta(milliseconds=created),
        base_id=d["base_id"],
        files=None if d["files"] is None else [IndexFile(p, n) for p, n in d["files"]],
        index_details=None if d["details"] is None else (d["details"][0], bytes(d["details"][1])),
        covering_fields=list(d["covering_fields"]),
    )


def _rewritten_dict(r: Any) -> Dict[str, Any]:
    value = r.new_details_value
    if not isinstance(value, bytes):
        raise TypeError(f"new_details_value must be bytes, got {type(value).__name__}")
    return {
        "old_id": str(r.old_id),
        "new_id": str(r.new_id),
        "new_details_type_url": str(r.new_details_type_url),
        "new_details_value": value,
        "new_index_version": _int(r.new_index_version, "RewrittenIndex.new_index_version"),
    }


def native_args(op: BaseOperation) -> Tuple[str, Dict[str, Any]]:
    """``(kind, args)`` for ``_native_dataset.ds_commit_operation``."""
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
        rewrite = [
            {"old_fragments": _json(g.old_fragments), "new_fragments": _json(g.new_fragments)} for g in op.groups
        ]
        return "Rewrite", {"groups": rewrite, "rewritten_indices": [_rewritten_dict(r) for r in op.rewritten_indices]}
    if isinstance(op, CreateIndex):
        return "CreateIndex", {
            "new_indices": [index_dict(x) for x in op.new_indices],
            "removed_indices": [index_dict(x) for x in op.removed_indices],
        }
    if isinstance(op, UpdateConfig):
        if op.field_metadata_updates:
            raise UnsupportedFeatureError("UpdateConfig.field_metadata_updates are not supported by lancelet")
        return "UpdateConfig", {
            "config_updates": _map_json(op.config_updates),
            "table_metadata_updates": _map_json(op.table_metadata_updates),
            "schema_metadata_updates": _map_json(op.schema_metadata_updates),
        }
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
    """A :class:`Transaction` from ``_native_dataset.ds_read_transaction``'s dict."""

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
        op = Rewrite(
            [RewriteGroup(frags("old_fragments", g), frags("new_fragments", g)) for g in d["groups"]],
            [
                RewrittenIndex(
                    r["old_id"],
                    r["new_id"],
                    r["new_details_type_url"],
                    bytes(r["new_details_value"]),
                    r["new_index_version"],
                )
                for r in d.get("rewritten_indices", [])
            ],
        )
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
        op = CreateIndex(
            [index_from_dict(x) for x in d["new_indices"]], [index_from_dict(x) for x in d["removed_indices"]]
        )
    else:
        op = Other(kind)
    return Transaction(d["read_version"], op, d["uuid"], dict(d["properties"]))


def read_transaction(ds: Any, version: Optional[int], lance_operation: Any) -> Optional[Transaction]:
    """See ``LanceDataset.read_transaction``."""
    d = _native_dataset.ds_read_transaction(ds._native, version)
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
    commit_lock: Any = None,
) -> Any:
    """Commits an operation other than Append/Overwrite (through ``commit_namespace`` when
    a namespace manages the table's versions, inside ``commit_lock`` when given); returns the
    native dataset."""
    if isinstance(operation, Clone):
        return commit_clone(path, operation, read_version, props, storage_options)
    kind, args = native_args(operation)
    return _native_dataset.ds_commit_operation(
        path,
        kind,
        args,
        {
            "read_version": read_version,
            "properties": props,
            "storage_options": storage_options,
            "max_retries": max_retries,
            "commit_namespace": commit_namespace,
            "commit_lock": commit_lock,
        },
    )


def commit_clone(
    path: str,
    op: Clone,
    read_version: Optional[int],
    props: Dict[str, str],
    storage_options: Optional[Dict[str, str]],
) -> Any:
    """Commits a Clone to ``path`` (a new location); returns the native dataset."""
    if read_version is None:
        raise InvalidArgumentError("read_version is required for all operations except Overwrite and Restore")
    ref_path = _native_uri(op.ref_path, storage_options)
    return _native_dataset.ds_commit_clone(
        path,
        {
            "is_shallow": bool(op.is_shallow),
            "ref_name": op.ref_name,
            "ref_version": _int(op.ref_version, "Clone.ref_version"),
            "ref_path": ref_path,
            "branch_name": op.branch_name,
            "read_version": read_version,
            "properties": props,
            "storage_options": storage_options,
        },
    )
