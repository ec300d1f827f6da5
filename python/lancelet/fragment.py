"""Fragments written apart from their commit, as pylance's ``lance.fragment`` offers.

A distributed job writes data files on many workers with :func:`write_fragments`, sends the
returned :class:`FragmentMetadata` (JSON-serializable) to one place, and commits them all
as one version with :meth:`lancelet.LanceDataset.commit`::

    frags = lancelet.fragment.write_fragments(batches, uri)                 # on each worker
    op = lancelet.LanceOperation.Append([f for part in parts for f in part])
    lancelet.LanceDataset.commit(uri, op, read_version=ds.version)           # once

The JSON form is pylance's (``FragmentMetadata.to_json()``), so fragments can be committed
by either library.

A committed fragment of a dataset version is a :class:`LanceFragment`
(``ds.get_fragments()``): its rows can be counted, scanned and taken on their own.
"""

from __future__ import annotations

import json
import warnings
from collections import namedtuple
from typing import TYPE_CHECKING, Any, Callable, Dict, Iterator, List, Optional, Union

import pyarrow as pa

from . import _expressions, _fragment_ops, _namespace_io, _paths, _rowoffset
from . import progress as _progress
from ._argcheck import _check_write_args, _Columns, _filter, _indices, _names, _native_uri, _storage_options
from ._inputs import _as_reader, _progress_callback
from ._native import dataset as _native_dataset
from .errors import InvalidArgumentError, UnsupportedFeatureError
from .file import ReaderResults

if TYPE_CHECKING:  # pragma: no cover
    from .dataset import LanceDataset
    from .scanner import LanceScanner

__all__ = [
    "LanceFragment",
    "FragmentMetadata",
    "DataFile",
    "DeletionFile",
    "RowIdMeta",
    "RowIdSequence",
    "write_fragments",
]


class _PathText(str):
    """A data file's path (a ``str``) that may also be called, as pylance's deprecated
    ``DataFile.path()`` was."""

    def __call__(self) -> str:
        warnings.warn("DataFile.path() is deprecated, use DataFile.path instead", DeprecationWarning, stacklevel=2)
        return str(self)


_DataFileFields = namedtuple(
    "_DataFileFields",
    ["path", "fields", "column_indices", "file_major_version", "file_minor_version", "file_size_bytes", "base_id"],
    defaults=[None, 0, 0, None, None],  # pylance's defaults
)


class DataFile(_DataFileFields):
    """One data file of a fragment: ``path`` (relative to the data directory of its
    base), the field ids it holds and their column indices, its format version, size and
    base path id."""

    __slots__ = ()

    @property
    def path(self) -> _PathText:
        return _PathText(self[0])


#: A fragment's deletion file (``path`` is relative to the dataset root).
DeletionFile = namedtuple(
    "DeletionFile", ["read_version", "id", "file_type", "num_deleted_rows", "base_id", "path"], defaults=[None, None]
)

#: The most rows (and bytes) a data file may hold: ``LanceFragment.create`` writes one file.
_NO_LIMIT = 2**64 - 1

# Keys lancelet adds to the native dicts that are not part of pylance's JSON.
_EXTRA_KEYS = ("num_rows",)


class RowIdMeta:
    """Where a fragment keeps its rows' stable row ids, as pylance's
    ``lance.fragment.RowIdMeta``: inline bytes of a row id sequence (``{"Inline": [...]}``)
    or a range of an external file. Build one with :class:`RowIdSequence`.

    >>> meta = RowIdSequence([7, 12]).to_inline_metadata()  # doctest: +SKIP
    >>> meta.json()  # doctest: +SKIP
    '{"Inline":[...]}'
    """

    def __init__(self, value: Dict[str, Any]):
        if not isinstance(value, dict) or len(value) != 1 or not ({"Inline", "External"} & set(value)):
            raise ValueError(f"Could not load RowIdMeta: expected {{'Inline': [...]}}, got {value!r}")
        if "Inline" in value:
            data = value["Inline"]
            if isinstance(data, (bytes, bytearray)):
                data = list(data)
            if not isinstance(data, list) or not all(isinstance(b, int) and 0 <= b < 256 for b in data):
                raise ValueError("Could not load RowIdMeta: Inline must be a list of bytes")
            self._value: Dict[str, Any] = {"Inline": list(data)}
        else:
            ext = value["External"]
            if not isinstance(ext, dict) or set(ext) != {"path", "offset", "size"}:
                raise ValueError("Could not load RowIdMeta: External needs path, offset and size")
            self._value = {"External": dict(ext)}

    def json(self) -> str:
        """The JSON form (pylance's: no spaces)."""
        return json.dumps(self._value, separators=(",", ":"))

    @staticmethod
    def from_json(data: str) -> "RowIdMeta":
        """Reads :meth:`json`'s output."""
        try:
            value = json.loads(data)
        except ValueError as e:
            raise ValueError(f"Could not load RowIdMeta due to error: {e}") from None
        return RowIdMeta(value)

    def asdict(self) -> Dict[str, Any]:
        """The JSON form as a dict (as ``FragmentMetadata.to_json()`` holds it)."""
        return json.loads(self.json())

    @staticmethod
    def from_dict(data: Dict[str, Any]) -> "RowIdMeta":
        """Reads :meth:`asdict`'s output."""
        return RowIdMeta(data)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, RowIdMeta) and self._value == other._value

    def __hash__(self) -> int:
        return hash(self.json())

    def __reduce__(self) -> tuple:
        return RowIdMeta.from_json, (self.json(),)

    def __repr__(self) -> str:
        return f"RowIdMeta({self.json()})"


class RowIdSequence:
    """The stable row ids of a fragment's rows, in row order (pylance's
    ``lance.fragment.RowIdSequence``). On a dataset with stable row ids, a Rewrite
    committed by hand gives each new fragment the ids of the rows it holds, so that they
    keep their ids (and versions)::

        live = ds.scanner(columns=["a"], fragments=frags, with_row_id=True).to_table()
        new = lancelet.fragment.write_fragments(live.drop(["_rowid"]), uri)
        new[0].row_id_meta = RowIdSequence(live["_rowid"].to_pylist()).to_inline_metadata()

    ``row_ids``: a ``range``, a pyarrow array or any iterable of ints; each id at most once.
    """

    def __init__(self, row_ids: Any):
        if isinstance(row_ids, (pa.Array, pa.ChunkedArray)):
            ids = [int(x) for x in row_ids.to_pylist()]
        else:
            ids = [int(x) for x in row_ids]
        if any(i < 0 for i in ids):
            raise OverflowError("can't convert negative int to unsigned")
        self._bytes: bytes = _native_dataset.encode_row_ids(ids)
        self._ids = ids

    @staticmethod
    def from_inline_metadata(metadata: RowIdMeta) -> "RowIdSequence":
        """The sequence an inline :class:`RowIdMeta` holds."""
        value = metadata._value
        if "Inline" not in value:
            raise ValueError("only row id metadata stored inline can be read as a RowIdSequence")
        return RowIdSequence(_native_dataset.decode_row_ids(bytes(value["Inline"])))

    def to_inline_metadata(self) -> RowIdMeta:
        """The sequence as inline row id metadata (for ``FragmentMetadata.row_id_meta``)."""
        return RowIdMeta({"Inline": list(self._bytes)})

    def to_pyarrow(self) -> pa.UInt64Array:
        """The row ids as a ``uint64`` array."""
        return pa.array(self._ids, pa.uint64())

    def __len__(self) -> int:
        return len(self._ids)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, RowIdSequence) and self._ids == other._ids

    def __repr__(self) -> str:
        if len(self._ids) > 10:
            return f"RowIdSequence({self._ids[:10]!r}"[:-1] + f", ...], len={len(self._ids)})"
        return f"RowIdSequence({self._ids!r})"


def _file_dict(f: Any) -> Dict[str, Any]:
    if isinstance(f, dict):
        return dict(f)
    if hasattr(f, "_asdict"):
        return dict(f._asdict())
    return {
        "path": getattr(f, "path", None) or getattr(f, "_path", None),
        "fields": list(f.fields),
        "column_indices": list(getattr(f, "column_indices", None) or []),
        "file_major_version": getattr(f, "file_major_version", 0),
        "file_minor_version": getattr(f, "file_minor_version", 0),
        "file_size_bytes": getattr(f, "file_size_bytes", None),
        "base_id": getattr(f, "base_id", None),
    }


def _deletion_dict(d: Any) -> Optional[Dict[str, Any]]:
    if d is None or isinstance(d, dict):
        return d
    if hasattr(d, "_asdict"):
        return {k: v for k, v in d._asdict().items() if k != "path"}
    return {k: getattr(d, k, None) for k in ("read_version", "id", "file_type", "num_deleted_rows", "base_id")}


class FragmentMetadata:
    """A fragment's manifest entry: its data files, row count, deletion file and (on a
    dataset with stable row ids) its rows' ids.

    Made by :func:`write_fragments` and ``LanceFragment.metadata``; or as pylance's
    dataclass, ``FragmentMetadata(id, files, physical_rows, deletion_file=None,
    row_id_meta=None)``. ``id`` and ``row_id_meta`` may be set.

    >>> frag = lancelet.fragment.FragmentMetadata(0, files, 100)  # doctest: +SKIP
    """

    def __init__(
        self,
        meta: Any = None,
        files: Optional[List[Any]] = None,
        physical_rows: Optional[int] = None,
        deletion_file: Any = None,
        row_id_meta: Optional[RowIdMeta] = None,
        created_at_version_meta: Any = None,
        last_updated_at_version_meta: Any = None,
        overlays: Optional[List[Any]] = None,
        *,
        id: Optional[int] = None,
    ):
        if isinstance(meta, dict) and files is None and physical_rows is None and id is None:
            self._meta = meta
            return
        fid = meta if id is None else id
        if fid is None or files is None or physical_rows is None:
            raise TypeError("FragmentMetadata needs id, files and physical_rows")
        del created_at_version_meta, last_updated_at_version_meta  # given by the commit
        self._meta = {
            "id": int(fid),
            "files": [_file_dict(f) for f in files],
            "overlays": list(overlays or []),
            "physical_rows": int(physical_rows),
            "deletion_file": _deletion_dict(deletion_file),
            "row_id_meta": None,
            "created_at_version_meta": None,
            "last_updated_at_version_meta": None,
        }
        self.row_id_meta = row_id_meta

    @property
    def id(self) -> int:
        """The fragment id (0 for a fragment :func:`write_fragments` wrote: the commit gives it
        the dataset's next id; any other id is kept, as in pylance)."""
        return self._meta["id"]

    @id.setter
    def id(self, value: int) -> None:
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise TypeError(f"a fragment id is a non-negative int, got {value!r}")
        self._meta = {**self._meta, "id": value}

    @property
    def row_id_meta(self) -> Optional[RowIdMeta]:
        """The stable row ids of the fragment's rows (None when the dataset has none)."""
        v = self._meta.get("row_id_meta")
        return None if v is None else RowIdMeta.from_dict(v)

    @row_id_meta.setter
    def row_id_meta(self, value: Optional[RowIdMeta]) -> None:
        if value is not None and not isinstance(value, RowIdMeta):
            raise TypeError(f"row_id_meta must be a RowIdMeta or None, got {type(value).__name__}")
        self._meta = {**self._meta, "row_id_meta": None if value is None else value.asdict()}

    @property
    def physical_rows(self) -> int:
        """Rows stored, deleted ones included."""
        return self._meta["physical_rows"]

    @property
    def files(self) -> List[DataFile]:
        """The data files."""
        return [DataFile(**{k: v for k, v in f.items() if k in DataFile._fields}) for f in self._meta["files"]]

    def data_files(self) -> List[DataFile]:
        """The data files (as :attr:`files`)."""
        return self.files

    @property
    def deletion_file(self) -> Optional[DeletionFile]:
        """The deletion file, if rows were deleted."""
        d = self._meta.get("deletion_file")
        return DeletionFile(**{k: v for k, v in d.items() if k in DeletionFile._fields}) if d else None

    @property
    def num_deletions(self) -> int:
        """Rows deleted."""
        d = self._meta.get("deletion_file")
        return d["num_deleted_rows"] if d else 0

    @property
    def num_rows(self) -> int:
        """Live rows."""
        return self.physical_rows - self.num_deletions

    def to_json(self) -> Dict[str, Any]:
        """The fragment as a JSON-ready dict, in pylance's format."""
        out = {k: v for k, v in self._meta.items() if k not in _EXTRA_KEYS}
        if out.get("deletion_file"):
            out["deletion_file"] = {k: v for k, v in out["deletion_file"].items() if k != "path"}
        return out

    @staticmethod
    def from_json(data: Union[str, bytes, Dict[str, Any]]) -> "FragmentMetadata":
        """Reads :meth:`to_json`'s output (a dict, or a JSON string as pylance takes)."""
        meta = json.loads(data) if isinstance(data, (str, bytes)) else dict(data)
        if not isinstance(meta, dict):
            raise ValueError(f"fragment metadata must be a JSON object, got {type(meta).__name__}")
        return FragmentMetadata(meta)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, FragmentMetadata) and self.to_json() == other.to_json()

    def __repr__(self) -> str:
        return (
            f"FragmentMetadata(id={self.id}, physical_rows={self.physical_rows}, files={[f.path for f in self.files]})"
        )


class LanceFragment:
    """One fragment of a dataset version: a set of rows stored in its own data files."""

    def __init__(self, ds: "LanceDataset", meta: Dict[str, Any]):
        self._ds = ds
        self._meta = FragmentMetadata(meta)

    @property
    def fragment_id(self) -> int:
        """The fragment's id."""
        return self._meta.id

    @property
    def physical_rows(self) -> int:
        """Rows stored, including deleted ones."""
        return self._meta.physical_rows

    @property
    def num_deletions(self) -> int:
        """Rows deleted."""
        return self._meta.num_deletions

    @property
    def metadata(self) -> FragmentMetadata:
        """The fragment's manifest entry."""
        return self._meta

    @property
    def schema(self) -> pa.Schema:
        """The dataset's schema."""
        return self._ds.schema

    def count_rows(self, filter: Optional[str] = None) -> int:
        """Live rows (matching ``filter`` when given)."""
        if filter is None:
            return self._meta.num_rows
        return self._ds._native.count_rows(_filter(filter), [self.fragment_id])

    def data_files(self) -> List[DataFile]:
        """The fragment's data files."""
        return self.metadata.files

    def deletion_file(self) -> Optional[str]:
        """The path of the deletion file, relative to the dataset root (None if no deletions)."""
        d = self._meta.deletion_file
        return d.path if d else None

    def scanner(self, **kwargs: Any) -> "LanceScanner":
        """A scan of this fragment only (the dataset's ``default_scan_options`` do not
        apply, as in pylance)."""
        return self._ds._plain().scanner(fragments=[self.fragment_id], **kwargs)

    def __reduce__(self) -> tuple:
        # The dataset (reopened at its version) and this fragment's manifest entry.
        return LanceFragment, (self._ds, self._meta._meta)

    def to_table(self, **kwargs: Any) -> pa.Table:
        """The fragment's rows as a table."""
        return self.scanner(**kwargs).to_table()

    def to_batches(self, **kwargs: Any) -> Iterator[pa.RecordBatch]:
        """The fragment's rows as batches."""
        return self.scanner(**kwargs).to_batches()

    def head(self, num_rows: int) -> pa.Table:
        """The fragment's first ``num_rows`` live rows (fewer if it has fewer).

        >>> ds.get_fragments()[0].head(5)  # doctest: +SKIP
        """
        return self.scanner(limit=num_rows).to_table()

    def take(self, indices: Union[List[int], pa.Array], columns: _Columns = None) -> pa.Table:
        """Rows at offsets ``indices`` among this fragment's live rows. ``columns`` may name
        ``_rowoffset``: each row's position among the live rows of the whole dataset version,
        as fragment scans give it.

        >>> ds.get_fragments()[1].take([0, 2], columns=["a", "_rowoffset"])  # doctest: +SKIP
        """
        idx = _indices(indices)
        names, pos = _rowoffset.split(_names(columns))
        native = self._ds._native
        if pos is None:
            return ReaderResults(native.fragment_take(self.fragment_id, idx, names)).to_table()
        wanted = (self._ds.schema.names if names is None else names) + [_rowoffset.NAME]
        table = ReaderResults(native.fragment_take(self.fragment_id, idx, wanted)).to_table()
        offsets = table.column(_rowoffset.NAME).to_pylist()
        return _rowoffset.take_with_offsets(table.drop_columns([_rowoffset.NAME]), offsets, pos)

    def delete(self, predicate: Any) -> Optional[FragmentMetadata]:
        """Deletes this fragment's rows matching ``predicate`` (SQL or a pyarrow compute
        expression) without committing: returns the fragment's metadata with a new deletion
        file (unchanged when nothing matched), or None when no row would be left. Commit the
        results with ``LanceOperation.Delete``, as in pylance.

        >>> new = ds.get_fragments()[0].delete("a > 1")  # doctest: +SKIP
        """
        if not isinstance(predicate, str):
            predicate = _expressions.to_sql(predicate)
        d = _native_dataset.ds_fragment_delete(self._ds._native, self.fragment_id, predicate)
        return None if d is None else FragmentMetadata(d)

    def merge_columns(
        self,
        value_func: Any,
        columns: Optional[List[str]] = None,
        batch_size: Optional[int] = None,
        reader_schema: Optional[pa.Schema] = None,
    ) -> tuple:
        """Computes new columns for this fragment and writes them as one data file without
        committing; returns ``(FragmentMetadata, LanceSchema)``: the fragment with the new
        file and the dataset's whole new schema. ``value_func`` is as in
        :meth:`lancelet.LanceDataset.add_columns`: a dict ``{name: SQL expression}``, a
        function or :func:`lancelet.batch_udf` (given batches of ``columns``), or a reader
        of the new values of this fragment's live rows (``reader_schema`` gives its schema).
        Commit every fragment's result at once with ``LanceOperation.Merge``, as in pylance.

        >>> metas = [f.merge_columns({"c": "a * 2"}) for f in ds.get_fragments()]  # doctest: +SKIP
        >>> op = lancelet.LanceOperation.Merge([m for m, _ in metas], metas[0][1])  # doctest: +SKIP
        >>> lancelet.LanceDataset.commit(uri, op, read_version=ds.version)  # doctest: +SKIP
        """
        meta, schema = _fragment_ops.merge_columns(self, value_func, columns, batch_size, reader_schema)
        return FragmentMetadata.from_json(meta), schema

    def update_columns(
        self,
        data_obj: Any,
        left_on: str = "_rowid",
        right_on: Optional[str] = None,
        schema: Optional[pa.Schema] = None,
        *,
        with_offsets: bool = False,
    ) -> tuple:
        """Replaces values of existing columns in this fragment's rows without committing,
        as pylance's ``update_columns``: each row whose ``left_on`` value (a column, or
        ``_rowid``/``_rowaddr``) equals ``right_on`` in ``data_obj`` (default: the same
        name) takes that row's values of ``data_obj``'s other columns; other rows keep
        theirs (when a key repeats in ``data_obj``, one of its rows is used). The new values
        go into one new data file; the old files keep their data, their copies of the
        updated fields tombstoned. Returns ``(FragmentMetadata, fields_modified)``, and with
        ``with_offsets=True`` also the matched rows' offsets in the fragment as portable
        roaring bitmap bytes. Commit with ``LanceOperation.Update(updated_fragments=[...],
        fields_modified=...)``.

        >>> meta, fields = ds.get_fragment(0).update_columns(pa.table({"id": [1], "value": [100]}), left_on="id")  # doctest: +SKIP
        >>> op = lancelet.LanceOperation.Update(updated_fragments=[meta], fields_modified=fields)  # doctest: +SKIP
        >>> lancelet.LanceDataset.commit(uri, op, read_version=ds.version)  # doctest: +SKIP
        """
        meta, *rest = _fragment_ops.update_columns(self, data_obj, left_on, right_on, schema, bool(with_offsets))
        return (FragmentMetadata.from_json(meta), *rest)

    @staticmethod
    def create(
        dataset_uri: Any,
        data: Any,
        fragment_id: Optional[int] = None,
        schema: Optional[pa.Schema] = None,
        max_rows_per_group: Optional[int] = 1024,
        progress: Any = None,
        mode: str = "append",
        *,
        data_storage_version: Optional[str] = None,
        use_legacy_format: Optional[bool] = None,
        storage_options: Optional[Dict[str, str]] = None,
        namespace_client: Any = None,
        table_id: Optional[List[str]] = None,
        session: Any = None,
    ) -> FragmentMetadata:
        """Writes ``data`` as one new fragment (one data file) of the dataset at
        ``dataset_uri`` without committing it, as pylance's ``LanceFragment.create``; returns
        its :class:`FragmentMetadata` (id ``fragment_id``, 0 when None). The dataset need not
        exist yet. ``mode="append"`` writes with the dataset's schema and field ids (commit
        with ``LanceOperation.Append``); ``"create"`` or ``"overwrite"`` with the data's own
        (``LanceOperation.Overwrite``). ``namespace_client`` + ``table_id`` name the
        dataset through a namespace instead of ``dataset_uri``.

        >>> frag = lancelet.LanceFragment.create("items.lance", table)  # doctest: +SKIP
        >>> lancelet.LanceDataset.commit("items.lance", lancelet.LanceOperation.Overwrite(table.schema, [frag]))  # doctest: +SKIP
        """
        if fragment_id is not None and (
            isinstance(fragment_id, bool) or not isinstance(fragment_id, int) or fragment_id < 0
        ):
            raise InvalidArgumentError(f"fragment_id must be a non-negative int, got {fragment_id!r}")
        if namespace_client is not None:
            dataset_uri, storage_options, _ = _namespace_io.resolve_read(
                dataset_uri, namespace_client, table_id, storage_options
            )
        fid = 0 if fragment_id is None else fragment_id
        # A FragmentWriteProgress hears of this fragment before its first byte is written
        # (its id is known here), and of the finished fragment after.
        tracker = progress if isinstance(progress, _progress.FragmentWriteProgress) else None
        if tracker is not None:
            tracker.begin(FragmentMetadata(id=fid, files=[], physical_rows=0))
        frags = write_fragments(
            data,
            dataset_uri,
            schema,
            mode=mode,
            max_rows_per_file=_NO_LIMIT,
            max_rows_per_group=1024 if max_rows_per_group is None else max_rows_per_group,
            max_bytes_per_file=_NO_LIMIT,
            progress=None if tracker is not None else progress,
            data_storage_version="legacy" if use_legacy_format else data_storage_version,
            storage_options=storage_options,
        )
        if len(frags) != 1:
            raise InvalidArgumentError("LanceFragment.create needs at least one row of data")
        frag = frags[0]
        frag.id = fid
        if tracker is not None:
            tracker.complete(frag)
        return frag

    @staticmethod
    def create_from_file(filename: str, dataset: "LanceDataset", fragment_id: int) -> FragmentMetadata:
        """The :class:`FragmentMetadata` of a fragment made of one existing data file
        (``filename``, relative to the dataset's ``data/`` directory) holding every column of
        ``dataset``, e.g. a file whose fragment was lost; not committed. As in pylance.

        >>> meta = lancelet.LanceFragment.create_from_file(path, ds, 42)  # doctest: +SKIP
        >>> lancelet.LanceDataset.commit(ds.uri, lancelet.LanceOperation.Append([meta]), read_version=ds.version)  # doctest: +SKIP
        """
        files, rows = _fragment_ops.create_from_file(filename, dataset, fragment_id)
        return FragmentMetadata(fragment_id, files, rows)

    def __repr__(self) -> str:
        return f"LanceFragment(id={self.fragment_id}, physical_rows={self.physical_rows})"


def write_fragments(
    data: Any,
    dataset_uri: Any,
    schema: Optional[pa.Schema] = None,
    *,
    mode: str = "append",
    max_rows_per_file: int = _native_dataset.DEFAULT_MAX_ROWS_PER_FILE,
    max_rows_per_group: int = 1024,
    max_bytes_per_file: int = _native_dataset.DEFAULT_MAX_BYTES_PER_FILE,
    progress: Optional[Union[bool, Callable]] = None,
    data_storage_version: Optional[str] = None,
    storage_options: Optional[Dict[str, str]] = None,
    return_transaction: bool = False,
    **kwargs: Any,
) -> List[FragmentMetadata]:
    """Writes ``data`` as new data files of the dataset at ``dataset_uri`` without
    committing them; returns one :class:`FragmentMetadata` per file.

    With ``mode="append"`` and an existing dataset, the files use the dataset's schema and
    field ids (columns may come in any order; missing nullable ones read as nulls), so the
    fragments can be committed with ``LanceOperation.Append``. Otherwise (a new dataset,
    or ``mode="overwrite"``) they use the data's schema, for ``LanceOperation.Overwrite``.
    Nothing is visible to readers until the commit; uncommitted files are garbage that
    ``cleanup_old_versions`` may remove later.

    >>> frags = lancelet.fragment.write_fragments(table, "/tmp/items.lance")  # doctest: +SKIP
    """
    if return_transaction:
        raise UnsupportedFeatureError("return_transaction=True is not supported; commit a LanceOperation instead")
    _check_write_args(
        mode, data_storage_version, max_rows_per_file, max_rows_per_group, max_bytes_per_file, kwargs, "write_fragments"
    )
    path = _native_uri(dataset_uri, storage_options)
    _paths.check_write_target(path)
    callback = _progress_callback(progress)
    try:
        frags, _schema, _appending = _paths.creating(
            path,
            lambda: _native_dataset.Dataset.write_fragments(
                path,
                _as_reader(data, schema),
                {
                    "mode": "create" if mode == "create" else mode,
                    "max_rows_per_file": max_rows_per_file,
                    "max_bytes_per_file": max_bytes_per_file,
                    "data_storage_version": data_storage_version,
                    "progress": callback,
                    "storage_options": _storage_options(storage_options),
                },
            ),
        )
    finally:
        close = getattr(callback, "close", None)
        if close is not None:
            close()
    out = [FragmentMetadata(f) for f in frags]
    report = getattr(callback, "report", None)
    if report is not None:
        report(out)
    return out
