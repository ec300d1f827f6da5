"""The ``__manifest`` table of a directory namespace: a Lance dataset at
``{root}/__manifest`` with one row per namespace and table, as pylance 14 keeps it.

Every change rewrites the (small) table as one Overwrite committed against the version
it was computed from, so two writers racing (lancelet or pylance) never lose each other's
rows: the loser sees a commit conflict, re-reads and tries again.
"""

from __future__ import annotations

import json
from typing import Any, Callable, Dict, List, Optional, Tuple

import pyarrow as pa

from .._native import storage as _native_storage
from ..dataset import LanceDataset, LanceOperation, dataset, write_dataset
from ..errors import CommitConflictError, DatasetAlreadyExistsError, LanceNotFoundError
from ..fragment import write_fragments
from ._storage import RootStorage

#: Directory of the manifest table under the root.
MANIFEST_DIR = "__manifest"

#: Separator of the parts of an object id (``ns$sub$table``).
DELIMITER = "$"

#: Primary-key marker pylance puts on ``object_id``.
_PK = {"lance-schema:unenforced-primary-key:position": "0"}

#: The manifest table's schema (no schema metadata), as pylance 14 writes it.
SCHEMA = pa.schema(
    [
        pa.field("object_id", pa.string(), nullable=False, metadata=_PK),
        pa.field("object_type", pa.string(), nullable=False),
        pa.field("location", pa.string()),
        pa.field("metadata", pa.string()),
        pa.field("base_objects", pa.list_(pa.field("object_id", pa.string()))),
    ]
)

Row = Dict[str, Any]


def object_id(parts: List[str]) -> str:
    """The manifest's id of ``parts`` (``["a", "t"]`` -> ``"a$t"``)."""
    return DELIMITER.join(parts)


def namespace_row(oid: str, properties: Optional[Dict[str, str]]) -> Row:
    """A ``namespace`` row with its properties as JSON (``None`` when there are none)."""
    meta = json.dumps(properties, separators=(",", ":")) if properties else None
    return {"object_id": oid, "object_type": "namespace", "location": None, "metadata": meta, "base_objects": None}


def table_row(oid: str, location: str) -> Row:
    """A ``table`` row; ``location`` is relative to the root."""
    return {"object_id": oid, "object_type": "table", "location": location, "metadata": None, "base_objects": None}


def properties_of(row: Row) -> Dict[str, str]:
    """A namespace row's properties."""
    text = row.get("metadata")
    if not text:
        return {}
    try:
        value = json.loads(text)
    except ValueError:
        return {}
    return {str(k): str(v) for k, v in value.items()} if isinstance(value, dict) else {}


_CATALOG_RETRIES = 50


class Catalog:
    """Reads and changes the ``__manifest`` table under a namespace root (a local
    directory or an object-store prefix).

    >>> Catalog(open_root("/data/catalog")).rows()  # doctest: +SKIP
    [{'object_id': 'a', 'object_type': 'namespace', ...}]
    """

    def __init__(self, fs: RootStorage):
        self._fs = fs
        self.path = fs.path(MANIFEST_DIR)
        self._options = fs.storage_options

    def snapshot(self) -> Tuple[List[Row], int]:
        """Every row and the manifest table's version (``0`` when it does not exist yet)."""
        if not self._fs.has_any_file(f"{MANIFEST_DIR}/_versions"):
            return [], 0
        try:
            ds = dataset(self.path, storage_options=self._options)
        except LanceNotFoundError:
            return [], 0
        return ds.to_table().to_pylist(), ds.version

    def rows(self) -> List[Row]:
        """Every row of the latest version."""
        return self.snapshot()[0]

    def _discard(self, frags: List[Any]) -> None:
        """Removes the data files of an attempt that lost its commit race."""
        for frag in frags:
            for f in frag.data_files():
                try:
                    self._fs.delete(f"{MANIFEST_DIR}/data/{f.path}")
                except OSError:
                    pass

    def change(self, edit: Callable[[List[Row]], Tuple[Optional[List[Row]], Any]]) -> Any:
        """Applies ``edit(rows) -> (new_rows or None, result)`` and commits the new rows as
        one version (nothing when ``new_rows`` is None); retried on a concurrent commit.
        Returns ``result``."""

        def attempt() -> Any:
            rows, version = self.snapshot()
            new_rows, result = edit(rows)
            if new_rows is None:
                return result
            table = pa.Table.from_pylist(new_rows, schema=SCHEMA)
            frags: List[Any] = []
            try:
                opts = self._options
                if version == 0:
                    write_dataset(table, self.path, mode="create", storage_options=opts)
                else:
                    frags = write_fragments(table, self.path, storage_options=opts) if table.num_rows else []
                    LanceDataset.commit(
                        self.path, LanceOperation.Overwrite(SCHEMA, frags), read_version=version, storage_options=opts
                    )
                return result
            except (CommitConflictError, DatasetAlreadyExistsError):
                self._discard(frags)
                raise

        # Another writer committed first: read the catalog again and redo the edit, with the
        # core's backoff. Many writers may share one catalog, so it gets more attempts than
        # a table write's default.
        return _native_storage.retry_conflicts(
            attempt, (CommitConflictError, DatasetAlreadyExistsError), _CATALOG_RETRIES
        )
