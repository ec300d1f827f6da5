"""``lancelet.file.LanceFileSession``: readers, writers and file operations relative to one
base path, with the API of pylance's ``lance.file.LanceFileSession``.

lancelet's file layer reads and writes local files only, so the session's base path is a
local directory (or ``file://`` URI); paths given to its methods are relative to it, with
``/`` separators, and listings return such relative paths.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Union

import pyarrow as pa

from .errors import InvalidArgumentError, UnsupportedFeatureError

__all__ = ["LanceFileSession", "ListResult"]


@dataclass
class ListResult:
    """One directory level of a session (see :meth:`LanceFileSession.list_with_delimiter`):
    the child directories (``common_prefixes``) and the files directly in it (``objects``),
    as paths relative to the session's base path."""

    common_prefixes: List[str] = field(default_factory=list)
    objects: List[str] = field(default_factory=list)


def _base(path: Any, storage_options: Optional[Dict[str, str]]) -> str:
    from .file import _local_path

    text = os.fspath(path) if isinstance(path, os.PathLike) else str(path)
    return os.path.abspath(_local_path(text, storage_options))


class LanceFileSession:
    """Opens Lance file readers and writers, and reads, lists, uploads and deletes files,
    relative to ``base_path``.

    >>> s = LanceFileSession("/data/files")  # doctest: +SKIP
    >>> with s.open_writer("part/0.lance") as w:  # doctest: +SKIP
    ...     w.write_batch(table)
    >>> s.open_reader("part/0.lance").read_all().to_table()  # doctest: +SKIP
    """

    def __init__(
        self,
        base_path: Union[str, Path],
        storage_options: Optional[Dict[str, str]] = None,
        namespace_client: Optional[Any] = None,
        table_id: Optional[List[str]] = None,
    ):
        if (namespace_client is None) != (table_id is None):
            raise InvalidArgumentError("namespace_client and table_id go together")
        if namespace_client is not None:
            raise UnsupportedFeatureError("namespace clients are not supported by lancelet.file")
        self.base_path = _base(base_path, storage_options)

    def _path(self, path: Optional[str]) -> str:
        if path is None or path in ("", "/"):
            return self.base_path
        if not isinstance(path, (str, os.PathLike)):
            raise TypeError(f"paths are strings, got {type(path).__name__}")
        rel = os.fspath(path).lstrip("/")
        full = os.path.normpath(os.path.join(self.base_path, rel))
        if full != self.base_path and not full.startswith(self.base_path.rstrip(os.sep) + os.sep):
            raise InvalidArgumentError(f"path {path!r} leaves the session's base path")
        return full

    def _relative(self, full: str) -> str:
        return os.path.relpath(full, self.base_path).replace(os.sep, "/")

    # -- readers and writers ------------------------------------------------------------

    def open_reader(self, path: str, columns: Optional[List[str]] = None) -> Any:
        """A :class:`~lancelet.file.LanceFileReader` of ``path`` (relative to the base path)."""
        from .file import LanceFileReader

        return LanceFileReader(self._path(path), columns=columns)

    def open_writer(
        self,
        path: str,
        *,
        schema: Optional[pa.Schema] = None,
        data_cache_bytes: Optional[int] = None,
        version: Optional[str] = None,
        keep_original_array: Optional[bool] = None,
        max_page_bytes: Optional[int] = None,
    ) -> Any:
        """A :class:`~lancelet.file.LanceFileWriter` creating ``path`` (relative to the base
        path; missing directories are created)."""
        from .file import LanceFileWriter

        full = self._path(path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        return LanceFileWriter(
            full,
            schema,
            data_cache_bytes=data_cache_bytes,
            version=version,
            keep_original_array=keep_original_array,
            max_page_bytes=max_page_bytes,
        )

    def open_packed_blob_writer(self, path: str, blob_id: int) -> Any:
        """Blob files are not supported by lancelet yet."""
        raise UnsupportedFeatureError("blob writers are not supported by lancelet yet")

    def open_dedicated_blob_writer(self, path: str, blob_id: int) -> Any:
        """Blob files are not supported by lancelet yet."""
        raise UnsupportedFeatureError("blob writers are not supported by lancelet yet")

    # -- files --------------------------------------------------------------------------

    def contains(self, path: str) -> bool:
        """Whether a file (not a directory) exists at ``path``."""
        return os.path.isfile(self._path(path))

    def list(self, path: Optional[str] = None) -> List[str]:
        """Every file under ``path`` (the base path when None), recursively, as paths
        relative to the base path (sorted); empty when ``path`` does not exist."""
        root = self._path(path)
        if os.path.isfile(root):
            return [self._relative(root)]
        out: List[str] = []
        for directory, _, files in os.walk(root):
            out.extend(self._relative(os.path.join(directory, f)) for f in files)
        return sorted(out)

    def list_with_delimiter(self, path: Optional[str] = None) -> ListResult:
        """The directories and files directly under ``path`` (not recursive)."""
        root = self._path(path)
        result = ListResult()
        try:
            entries = sorted(os.scandir(root), key=lambda e: e.name)
        except (FileNotFoundError, NotADirectoryError):
            return result
        for e in entries:
            (result.common_prefixes if e.is_dir() else result.objects).append(self._relative(e.path))
        return result

    def read_range(self, path: str, offset: int, length: int) -> bytes:
        """``length`` bytes of ``path`` from ``offset`` (``OSError`` when the file is
        missing or shorter)."""
        for name, v in (("offset", offset), ("length", length)):
            if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                raise InvalidArgumentError(f"{name} must be a non-negative integer, got {v!r}")
        full = self._path(path)
        try:
            with open(full, "rb") as f:
                f.seek(offset)
                data = f.read(length)
        except OSError as e:
            raise OSError(f"cannot read {path!r}: {e.strerror or e}") from None
        if len(data) != length:
            raise OSError(
                f"cannot read bytes {offset}..{offset + length} of {path!r}: it has {os.path.getsize(full)} bytes"
            )
        return data

    def delete_file(self, path: str) -> None:
        """Deletes the file at ``path`` (``OSError`` when there is none)."""
        full = self._path(path)
        if not os.path.isfile(full):
            raise OSError(f"cannot delete {path!r}: no such file")
        os.remove(full)

    def upload_file(self, local_path: Union[str, Path], remote_path: str) -> None:
        """Copies local file ``local_path`` to ``remote_path`` (relative to the base path)."""
        full = self._path(remote_path)
        if not os.path.isfile(local_path):
            raise OSError(f"cannot upload {os.fspath(local_path)!r}: no such file")
        os.makedirs(os.path.dirname(full), exist_ok=True)
        tmp = full + ".lancelet-upload"
        shutil.copyfile(local_path, tmp)
        os.replace(tmp, full)

    def download_file(self, remote_path: str, local_path: Union[str, Path]) -> None:
        """Copies ``remote_path`` (relative to the base path) to local file ``local_path``
        (whose directory must exist)."""
        full = self._path(remote_path)
        if not os.path.isfile(full):
            raise OSError(f"cannot download {remote_path!r}: no such file")
        shutil.copyfile(full, local_path)

    def __repr__(self) -> str:
        return f"LanceFileSession(base_path={self.base_path!r})"
