"""``lancelet inspect`` (see :mod:`lancelet.cli`): what a dataset version holds, checked
against storage.

Every file the version names is looked at: each data file must exist with the size its
manifest entry says, each deletion file must exist and read, each index file must exist
(with its recorded size, when the manifest has one), and every blob value kept in a
sidecar (or inline in a data file) must lie inside its file. Blob sidecars are listed
from storage (the manifest does not name them) and counted in the total size; external
blobs (URIs) are counted, not followed. Problems are listed after the report and make the
command fail.
"""

from __future__ import annotations

import argparse
import os
from typing import Any, Dict, List, Optional, Tuple

import pyarrow as pa
import pyarrow.compute as pc

from . import _paths
from ._cli_common import _open, _size, _storage_options
from ._native import dataset as _native_dataset
from ._native import storage as _native_storage
from .blob import is_blob_field
from .indices import _segments

__all__ = ["cmd_inspect", "DamagedDatasetError"]

#: Blob sidecar files listed by name before the rest are summed up in one line.
_SHOWN_SIDECARS = 20
#: The descriptor ``kind`` of an external blob (a URI, not one of the dataset's files).
_EXTERNAL = 3


class DamagedDatasetError(Exception):
    """Files the manifest names are missing, of the wrong size or unreadable."""


def _first_line(e: BaseException) -> str:
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__


class _Storage:
    """Sizes and listings of a dataset's files, on local disk or in an object store, under
    the dataset's root or one of its base paths."""

    def __init__(self, uri: str, storage_options: Optional[Dict[str, str]], bases: Dict[int, Any]):
        self._uri = uri
        self._options = storage_options
        self._bases = bases
        self._stores: Dict[str, Any] = {}

    def locate(self, base_id: Optional[int], directory: str, rel: str) -> Tuple[str, str]:
        """``(root, path under root)`` of file ``rel`` kept in ``directory`` (``data``,
        ``_deletions``, ``_indices``) of the dataset root or of base ``base_id``."""
        if base_id is None:
            return self._uri, f"{directory}/{rel}"
        base = self._bases.get(base_id)
        if base is None:
            raise KeyError(f"base path {base_id} is not in the manifest")
        return base.path, (f"{directory}/{rel}" if base.is_dataset_root else rel)

    def _local(self, root: str) -> Optional[str]:
        path = _paths.native_path(root)
        return path if _paths.is_local(path) else None

    def _store(self, root: str) -> Any:
        if root not in self._stores:
            self._stores[root] = _native_storage.ObjectStore(root.rstrip("/"), self._options)
        return self._stores[root]

    def size(self, root: str, path: str) -> Optional[int]:
        """The file's size, or ``None`` when there is no such file."""
        local = self._local(root)
        if local is not None:
            try:
                st = os.stat(os.path.join(local, path))
            except (FileNotFoundError, NotADirectoryError):
                return None
            return st.st_size if not os.path.isdir(os.path.join(local, path)) else None
        head = self._store(root).head(path)
        return None if head is None else int(head[0])

    def files(self, root: str, directory: str) -> List[Tuple[str, int]]:
        """``(name, size)`` of the files directly in ``directory`` (none when it is absent)."""
        local = self._local(root)
        if local is not None:
            try:
                entries = list(os.scandir(os.path.join(local, directory)))
            except (FileNotFoundError, NotADirectoryError):
                return []
            return sorted((e.name, e.stat().st_size) for e in entries if e.is_file())
        store = self._store(root)
        out = []
        for name in store.list(directory)[0]:
            head = store.head(f"{directory}/{name}")
            if head is not None:
                out.append((name, int(head[0])))
        return sorted(out)

    def show(self, root: str, path: str) -> str:
        """How a file is named in the report: relative to the dataset, or a full location
        for files under another base."""
        return path if root == self._uri else f"{root.rstrip('/')}/{path}"


def _blob_columns(schema: Any) -> List[Tuple[str, List[str]]]:
    """``(dotted name, path of field names)`` of every blob column, those inside structs too."""
    out: List[Tuple[str, List[str]]] = []

    def walk(field: Any, path: List[str]) -> None:
        if is_blob_field(field):
            out.append((".".join(path), path))
        elif pa.types.is_struct(field.type):
            for child in field.type:
                walk(child, path + [child.name])

    for f in schema:
        walk(f, [f.name])
    return out


def _descend(column: Any, path: List[str]) -> Any:
    """The array at ``path`` below a (struct) column of a scan result."""
    for name in path:
        if isinstance(column, pa.ChunkedArray):
            column = column.combine_chunks()
        column = pc.struct_field(column, name)
    return column


class _Report:
    """Problems found while looking at the files, each with the file it concerns."""

    def __init__(self) -> None:
        self.problems: List[str] = []

    def add(self, what: str) -> None:
        self.problems.append(what)


def _data_files(
    frags: List[Any], store: _Storage, report: _Report
) -> Tuple[Dict[Tuple[str, str], int], Dict[int, bool]]:
    """Checks each data file. Returns the size of each one found (by location), and
    whether each fragment's data files are all there with their sizes."""
    found: Dict[Tuple[str, str], int] = {}
    intact: Dict[int, bool] = {}
    for f in frags:
        intact[f.fragment_id] = True
        for d in f.data_files():
            try:
                root, path = store.locate(d.base_id, "data", d.path)
            except KeyError as e:
                report.add(f"fragment {f.fragment_id}: data file {d.path}: {e.args[0]}")
                intact[f.fragment_id] = False
                continue
            actual = store.size(root, path)
            shown = store.show(root, path)
            if actual is None:
                report.add(f"{shown}: missing (fragment {f.fragment_id})")
                intact[f.fragment_id] = False
                continue
            found[(root, path)] = actual
            if d.file_size_bytes and actual != d.file_size_bytes:
                report.add(f"{shown}: {actual} bytes, the manifest says {d.file_size_bytes} (fragment {f.fragment_id})")
                intact[f.fragment_id] = False
    return found, intact


def _deletion_location(store: _Storage, f: Any) -> Optional[Tuple[str, str]]:
    meta = f.metadata.deletion_file
    if meta is None:
        return None
    rel = meta.path[len("_deletions/") :] if meta.path.startswith("_deletions/") else meta.path
    return store.locate(meta.base_id, "_deletions", rel)


def _contents(
    ds: Any,
    frags: List[Any],
    store: _Storage,
    report: _Report,
    data_ok: Dict[int, bool],
    deletions: Dict[int, Optional[int]],
) -> Dict[str, int]:
    """Reads what only reading can check: deletion files, and where each blob value lies
    (its sidecar, or its data file, must hold it). Returns how many external blobs there
    are per blob column."""
    blobs = _blob_columns(ds.schema)
    tops = sorted({path[0] for _, path in blobs})
    externals: Dict[str, int] = {}
    for f in frags:
        has_deletions = f.metadata.deletion_file is not None
        if not (blobs or has_deletions) or not data_ok.get(f.fragment_id, False):
            continue
        if has_deletions and deletions.get(f.fragment_id) is None:
            continue  # missing: reported already
        try:
            scan = ds.scanner(columns=tops, with_row_address=True, fragments=[f])
            for batch in scan.to_batches():
                addrs = batch.column("_rowaddr")
                for name, path in blobs:
                    desc = _descend(batch.column(path[0]), path[1:])
                    valid = desc.is_valid().to_pylist()
                    kinds = (
                        desc.field("kind").to_pylist() if any(t.name == "kind" for t in desc.type) else [0] * len(desc)
                    )
                    local = [a for a, ok, k in zip(addrs.to_pylist(), valid, kinds) if ok and k != _EXTERNAL]
                    externals[name] = externals.get(name, 0) + sum(
                        1 for ok, k in zip(valid, kinds) if ok and k == _EXTERNAL
                    )
                    if local:
                        _native_dataset.blob_locations(ds._native, name, local)
        except Exception as e:  # noqa: BLE001 - each failure is a finding about this fragment
            report.add(f"fragment {f.fragment_id}: {_first_line(e)}")
    return externals


def _sidecars(frags: List[Any], store: _Storage, uri: str) -> List[Tuple[str, int]]:
    """``(path, size)`` of the blob sidecar files of the version's data files
    (``data/<data file stem>/*.blob``; sidecars live under the dataset's own root)."""
    out = []
    seen = set()
    for f in frags:
        for d in f.data_files():
            stem = d.path[: -len(".lance")] if d.path.endswith(".lance") else d.path
            if stem in seen:
                continue
            seen.add(stem)
            for name, size in store.files(uri, f"data/{stem}"):
                if name.endswith(".blob"):
                    out.append((f"data/{stem}/{name}", size))
    return sorted(out)


def _indexes(ds: Any, store: _Storage, report: _Report) -> Tuple[List[Any], int]:
    """The index descriptions, with their files checked; returns them and their size on
    storage."""
    described = ds.describe_indices()
    total = 0
    for seg in _segments(ds):
        for name, recorded in seg.get("files") or []:
            try:
                root, path = store.locate(seg.get("base_id"), "_indices", f"{seg['uuid']}/{name}")
            except KeyError as e:
                report.add(f"index {seg['name']}: {e.args[0]}")
                continue
            actual = store.size(root, path)
            shown = store.show(root, path)
            if actual is None:
                report.add(f"{shown}: missing (index {seg['name']})")
                continue
            total += actual
            if recorded and actual != recorded:
                report.add(f"{shown}: {actual} bytes, the manifest says {recorded} (index {seg['name']})")
    return described, total


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def cmd_inspect(args: argparse.Namespace) -> None:
    ds = _open(args.uri, args.version, args.storage_option)
    store = _Storage(ds.uri, _storage_options(args.storage_option), ds.base_paths())
    report = _Report()
    frags = ds.get_fragments()

    found, data_ok = _data_files(frags, store, report)
    deletions: Dict[int, Optional[int]] = {}
    for f in frags:
        try:
            loc = _deletion_location(store, f)
        except KeyError as e:
            report.add(f"fragment {f.fragment_id}: deletion file: {e.args[0]}")
            continue
        if loc is None:
            continue
        size = store.size(*loc)
        deletions[f.fragment_id] = size
        if size is None:
            report.add(f"{store.show(*loc)}: missing (fragment {f.fragment_id}'s deletion file)")
    externals = _contents(ds, frags, store, report, data_ok, deletions)
    sidecars = _sidecars(frags, store, ds.uri)
    indexes, index_bytes = _indexes(ds, store, report)

    n_files = sum(len(f.data_files()) for f in frags)
    data_bytes = sum(found.values())
    blob_bytes = sum(s for _, s in sidecars)
    deletion_bytes = sum(s for s in deletions.values() if s)
    total = data_bytes + blob_bytes + deletion_bytes + index_bytes

    print(f"dataset:  {ds.uri}")
    print(f"version:  {ds.version} (latest {ds.latest_version}, {len(ds.versions())} versions)")
    print(f"format:   Lance file format {ds.data_storage_version}")
    print(f"rows:     {ds.count_rows()}")
    print(f"fragments: {len(frags)} ({_count(n_files, 'data file')}, {_size(data_bytes)})")
    if sidecars:
        print(f"blob files: {_count(len(sidecars), 'sidecar')}, {_size(blob_bytes)}")
    if any(externals.values()):
        print("external blobs: " + ", ".join(f"{n} in {c}" for c, n in sorted(externals.items()) if n))
    if deletions:
        print(f"deletion files: {len(deletions)}, {_size(deletion_bytes)}")
    if indexes:
        print(f"indexes:  {len(indexes)}, {_size(index_bytes)}")
    print(f"size:     {_size(total)} on storage (data, blob, deletion and index files)")
    tags = ds.tags.list()
    if tags:
        print("tags:     " + ", ".join(f"{n} -> v{t['version']}" for n, t in sorted(tags.items())))
    print("schema:")
    for field in ds.schema:
        print(f"  {field.name}: {field.type}{'' if field.nullable else ' not null'}")
    if indexes:
        print("indexes:")
        width = max(len(i.name) for i in indexes)
        kinds = max(len(str(i.index_type)) for i in indexes)
        for i in indexes:
            size_note = "" if i.total_size_bytes is None else f", {_size(i.total_size_bytes)}"
            segments = _count(i.num_segments, "segment")
            print(
                f"  {i.name:<{width}}  {i.index_type:<{kinds}}  on {', '.join(i.field_names)}"
                f"  ({segments}, {i.num_rows_indexed} rows indexed{size_note})"
            )
    if frags:
        print("fragments:")
        print(f"  {'id':>6} {'rows':>10} {'physical':>10} {'deleted':>8}  files")
        for f in frags:
            names = ", ".join(f"{d.path} ({_size(d.file_size_bytes or 0)})" for d in f.data_files())
            deletion = f"  deletions: {f.deletion_file()}" if f.deletion_file() else ""
            print(
                f"  {f.fragment_id:>6} {f.count_rows():>10} {f.physical_rows:>10} {f.num_deletions:>8}  {names}{deletion}"
            )
    if sidecars:
        print("blob files:")
        for path, size in sidecars[:_SHOWN_SIDECARS]:
            print(f"  {path} ({_size(size)})")
        if len(sidecars) > _SHOWN_SIDECARS:
            print(f"  ... and {len(sidecars) - _SHOWN_SIDECARS} more")
    if report.problems:
        print("problems:")
        for p in report.problems:
            print(f"  {p}")
        raise DamagedDatasetError(
            f"{_count(len(report.problems), 'problem')} with the files of {ds.uri} version {ds.version}: "
            f"{report.problems[0]}"
        )
