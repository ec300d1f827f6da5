"""The few file operations a directory namespace needs beside datasets (marker files,
listing table directories, deleting a dropped table). Roots are local directories (or
``file://`` URIs); object-store roots are refused for now.
"""

from __future__ import annotations

import os
import shutil
from typing import Dict, List, Optional

from .. import _paths
from ..errors import UnsupportedFeatureError


class RootStorage:
    """Files under a namespace root (paths are relative to the root, ``/``-separated).

    >>> RootStorage("/data/catalog").exists("t.lance/.lance-reserved")  # doctest: +SKIP
    False
    """

    def __init__(self, root: str, storage_options: Optional[Dict[str, str]] = None):
        path = _paths.native_path(root)
        if not _paths.is_local(path):
            raise UnsupportedFeatureError(
                f"lancelet's DirectoryNamespace takes a local directory as root, not {root!r} "
                "(object-store roots are not supported yet)"
            )
        self.root = os.path.abspath(path)
        self.storage_options = storage_options or None

    def path(self, rel: str) -> str:
        """The full path (or URI) of ``rel``."""
        return os.path.join(self.root, *rel.split("/"))

    def uri(self, rel: str) -> str:
        """``rel`` as a URI (``file://`` for local roots), as pylance reports table locations."""
        return "file://" + self.path(rel)

    def exists(self, rel: str) -> bool:
        """Whether the file ``rel`` exists."""
        return os.path.isfile(self.path(rel))

    def has_any_file(self, rel_dir: str) -> bool:
        """Whether the directory ``rel_dir`` holds at least one file."""
        d = self.path(rel_dir)
        if not os.path.isdir(d):
            return False
        with os.scandir(d) as entries:
            return any(True for _ in entries)

    def write(self, rel: str, data: bytes) -> None:
        """Writes the small file ``rel`` (parents created)."""
        full = self.path(rel)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "wb") as f:
            f.write(data)

    def delete(self, rel: str) -> None:
        """Deletes the file ``rel`` if it exists."""
        try:
            os.unlink(self.path(rel))
        except FileNotFoundError:
            pass

    def delete_tree(self, rel_dir: str) -> None:
        """Deletes the directory ``rel_dir`` and everything in it."""
        shutil.rmtree(self.path(rel_dir), ignore_errors=True)

    def child_dirs(self) -> List[str]:
        """Names of the directories directly under the root."""
        if not os.path.isdir(self.root):
            return []
        with os.scandir(self.root) as entries:
            return sorted(e.name for e in entries if e.is_dir())
