"""The files a directory namespace keeps beside its datasets (marker files, listings of
table directories, dropped tables, staged manifests), under a local directory or an
object-store URI (``s3://bucket/prefix``, ``memory://name``).

:func:`open_root` picks the implementation: :class:`LocalRoot` (``os``) or
:class:`ObjectRoot` (``lancelet._native.storage.ObjectStore``, the same storage layer datasets
use). Paths are relative to the root and use ``/``.
"""

from __future__ import annotations

import os
import shutil
import uuid
from typing import Dict, List, Optional, Tuple

from lance_namespace import UnsupportedOperationError

from .. import _paths
from .._native import storage as _native_storage

#: ``(size in bytes, modified in ms since the epoch, entity tag)`` of one file.
Head = Tuple[int, int, Optional[str]]


class RootStorage:
    """Files under a namespace root. Subclasses implement the storage; this class holds
    what both share.

    >>> open_root("/data/catalog").exists("t.lance/.lance-reserved")  # doctest: +SKIP
    False
    """

    #: The root as given back to users: an absolute local path, or a URI.
    root: str
    #: Options for the root's object store (``None`` for local roots without any).
    storage_options: Optional[Dict[str, str]]
    #: Whether the root is a local directory.
    is_local: bool = False

    def path(self, rel: str) -> str:
        """What a dataset at ``rel`` is opened at: a local path or a URI."""
        raise NotImplementedError

    def uri(self, rel: str) -> str:
        """``rel`` as a URI (``file://`` for local roots), as pylance reports locations."""
        raise NotImplementedError

    def exists(self, rel: str) -> bool:
        """Whether the file ``rel`` exists."""
        raise NotImplementedError

    def has_any_file(self, rel_dir: str) -> bool:
        """Whether anything is stored under the directory ``rel_dir``."""
        raise NotImplementedError

    def list_files(self, rel_dir: str) -> List[str]:
        """Names of the files directly in ``rel_dir`` (sorted; empty when it is missing)."""
        raise NotImplementedError

    def child_dirs(self) -> List[str]:
        """Names of the directories directly under the root (sorted)."""
        raise NotImplementedError

    def head(self, rel: str) -> Optional[Head]:
        """Size, time and entity tag of the file ``rel`` (None when missing)."""
        raise NotImplementedError

    def read(self, rel: str) -> bytes:
        """The whole file ``rel``."""
        raise NotImplementedError

    def write(self, rel: str, data: bytes) -> None:
        """Writes the small file ``rel`` (replacing any)."""
        raise NotImplementedError

    def put_if_absent(self, rel: str, data: bytes) -> bool:
        """Creates the file ``rel`` unless it exists, atomically; False when it existed."""
        raise NotImplementedError

    def delete(self, rel: str) -> None:
        """Deletes the file ``rel`` if it exists."""
        raise NotImplementedError

    def delete_tree(self, rel_dir: str) -> None:
        """Deletes the directory ``rel_dir`` and everything in it."""
        raise NotImplementedError

    def store_path(self, rel: str) -> str:
        """How the object store names ``rel`` (pylance's ``manifest_path``): the absolute
        path without its leading ``/`` on local disk, the key in the bucket on S3."""
        raise NotImplementedError

    def from_store_path(self, path: str) -> Optional[str]:
        """The ``rel`` a :meth:`store_path` names, or None when it is outside the root."""
        raise NotImplementedError

    def relative(self, location: str) -> Optional[str]:
        """``location`` (a path or URI inside the root, or a relative path) relative to
        the root; None when it is elsewhere."""
        raise NotImplementedError

    def rename(self, rel: str, new_rel: str) -> None:
        """Moves the directory ``rel`` to ``new_rel``."""
        raise NotImplementedError


def _norm_rel(rel: str) -> Optional[str]:
    """A relative path without ``.``/``..`` escapes (None when it leaves the root)."""
    parts: List[str] = []
    for p in rel.replace("\\", "/").split("/"):
        if p in ("", "."):
            continue
        if p == "..":
            if not parts:
                return None
            parts.pop()
            continue
        parts.append(p)
    return "/".join(parts)


class LocalRoot(RootStorage):
    """Files under a local directory.

    >>> LocalRoot("/data/catalog").uri("t.lance")
    'file:///data/catalog/t.lance'
    """

    is_local = True

    def __init__(self, root: str, storage_options: Optional[Dict[str, str]] = None):
        self.root = os.path.abspath(root)
        self.storage_options = storage_options or None

    def path(self, rel: str) -> str:
        return os.path.join(self.root, *[p for p in rel.split("/") if p])

    def uri(self, rel: str) -> str:
        # As pylance reports it (the path as it is), with only "%" escaped, so that reading
        # the location back (file: URIs are percent-decoded) names this very path.
        return "file://" + self.path(rel).replace("%", "%25")

    def exists(self, rel: str) -> bool:
        return os.path.isfile(self.path(rel))

    def has_any_file(self, rel_dir: str) -> bool:
        d = self.path(rel_dir)
        if not os.path.isdir(d):
            return False
        with os.scandir(d) as entries:
            return any(True for _ in entries)

    def list_files(self, rel_dir: str) -> List[str]:
        d = self.path(rel_dir)
        if not os.path.isdir(d):
            return []
        with os.scandir(d) as entries:
            return sorted(e.name for e in entries if e.is_file())

    def child_dirs(self) -> List[str]:
        if not os.path.isdir(self.root):
            return []
        with os.scandir(self.root) as entries:
            return sorted(e.name for e in entries if e.is_dir())

    def head(self, rel: str) -> Optional[Head]:
        try:
            st = os.stat(self.path(rel))
        except FileNotFoundError:
            return None
        micros = st.st_mtime_ns // 1000
        # The entity tag object stores give local files (and pylance reports).
        return st.st_size, micros // 1000, f'"{st.st_ino:x}-{micros:x}-{st.st_size:x}"'

    def read(self, rel: str) -> bytes:
        with open(self.path(rel), "rb") as f:
            return f.read()

    def write(self, rel: str, data: bytes) -> None:
        full = self.path(rel)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "wb") as f:
            f.write(data)

    def put_if_absent(self, rel: str, data: bytes) -> bool:
        full = self.path(rel)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        tmp = f"{full}.{uuid.uuid4().hex}.tmp"
        with open(tmp, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        try:
            os.link(tmp, full)  # atomic, and never replaces: the file appears complete or not at all
            return True
        except FileExistsError:
            return False
        finally:
            os.unlink(tmp)

    def delete(self, rel: str) -> None:
        try:
            os.unlink(self.path(rel))
        except FileNotFoundError:
            pass

    def delete_tree(self, rel_dir: str) -> None:
        if _norm_rel(rel_dir):
            shutil.rmtree(self.path(rel_dir), ignore_errors=True)

    def store_path(self, rel: str) -> str:
        return self.path(rel).lstrip("/")

    def from_store_path(self, path: str) -> Optional[str]:
        return self.relative("/" + path.lstrip("/"))

    def relative(self, location: str) -> Optional[str]:
        native = _paths.native_path(location)
        if "://" in native:
            return None
        if not os.path.isabs(native):
            return _norm_rel(native)
        rel = os.path.relpath(os.path.normpath(native), self.root)
        if rel == os.curdir:
            return ""
        if rel == os.pardir or rel.startswith(os.pardir + os.sep):
            return None
        return rel.replace(os.sep, "/")

    def rename(self, rel: str, new_rel: str) -> None:
        os.rename(self.path(rel), self.path(new_rel))


class ObjectRoot(RootStorage):
    """Objects under an object-store URI (``s3://bucket/prefix``, ``memory://name``).

    >>> ObjectRoot("memory://catalog").uri("t.lance")
    'memory://catalog/t.lance'
    """

    def __init__(self, root: str, storage_options: Optional[Dict[str, str]] = None):
        self.storage_options = storage_options or None
        self._store = _native_storage.ObjectStore(root.rstrip("/") or root, storage_options)
        self.root = self._store.uri

    def path(self, rel: str) -> str:
        rel = rel.strip("/")
        return f"{self.root}/{rel}" if rel else self.root

    def uri(self, rel: str) -> str:
        return self.path(rel)

    def exists(self, rel: str) -> bool:
        return self._store.head(rel) is not None

    def has_any_file(self, rel_dir: str) -> bool:
        return bool(rel_dir.strip("/")) and self._store.exists(rel_dir)

    def list_files(self, rel_dir: str) -> List[str]:
        return self._store.list(rel_dir)[0]

    def child_dirs(self) -> List[str]:
        return self._store.list("")[1]

    def head(self, rel: str) -> Optional[Head]:
        return self._store.head(rel)

    def read(self, rel: str) -> bytes:
        return self._store.read(rel)

    def write(self, rel: str, data: bytes) -> None:
        self._store.put(rel, data)

    def put_if_absent(self, rel: str, data: bytes) -> bool:
        return self._store.put_if_absent(rel, data)

    def delete(self, rel: str) -> None:
        self._store.delete(rel)

    def delete_tree(self, rel_dir: str) -> None:
        if _norm_rel(rel_dir):
            self._store.delete_all(rel_dir)

    def store_path(self, rel: str) -> str:
        return self._store.key(rel)

    def from_store_path(self, path: str) -> Optional[str]:
        base = self._store.key("")
        path = path.lstrip("/")
        if not base:
            return _norm_rel(path)
        if not path.startswith(base + "/"):
            return None
        return _norm_rel(path[len(base) + 1 :])

    def relative(self, location: str) -> Optional[str]:
        if "://" not in location:
            return None if os.path.isabs(location) else _norm_rel(location)
        loc = location.rstrip("/")
        if loc == self.root:
            return ""
        if not loc.startswith(self.root + "/"):
            return None
        return _norm_rel(loc[len(self.root) + 1 :])

    def rename(self, rel: str, new_rel: str) -> None:
        raise UnsupportedOperationError(
            f"Not supported: moving the table directory {rel!r} on an object store ({self.root})"
        )


def open_root(root: str, storage_options: Optional[Dict[str, str]] = None) -> RootStorage:
    """The storage of a namespace root: a local directory (or ``file://`` URI), or an
    object-store URI (``s3://``, ``memory://``) configured by ``storage_options``.

    >>> open_root("memory://catalog").root
    'memory://catalog'
    """
    path = _paths.native_path(root)
    if _paths.is_local(path):
        return LocalRoot(path, storage_options)
    return ObjectRoot(path, storage_options)
