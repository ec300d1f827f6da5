"""Dataset URIs and local paths as the native layer takes them, and clear errors for
local paths that cannot be written (used by :mod:`lancelet.dataset` and
:mod:`lancelet.fragment`).

URIs behave as in pylance: ``~`` is expanded in local paths, relative paths are relative to
the working directory, ``file:///abs/path`` (and ``file:/abs/path``) name the same dataset
as ``/abs/path``; ``memory://`` and ``s3://`` URIs pass through unchanged.
"""

from __future__ import annotations

import errno
import os
import re
from typing import Any, Callable, Optional, TypeVar

from ._native import storage as _native_storage
from .errors import InvalidArgumentError, LanceIOError, LanceNotFoundError

_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.\-]*)://")

#: The longest file name (in bytes) local file systems allow.
NAME_MAX = 255

T = TypeVar("T")


def scheme(uri: str) -> Optional[str]:
    """The URI's scheme in lower case (``None`` for a plain path)."""
    m = _SCHEME.match(uri)
    return m.group(1).lower() if m else None


def native_path(uri: str) -> str:
    """``uri`` as the native layer opens it: a local path (``~`` expanded; ``file:`` URIs
    decoded as RFC 8089 says, so ``%20`` is a space, by the native layer's one rule) or a
    ``scheme://`` URI unchanged."""
    s = scheme(uri)
    if s is not None and s != "file":
        return uri
    local = _native_storage.local_path(uri)
    return uri if local is None else os.path.expanduser(local)


def is_local(path: str) -> bool:
    """Whether ``path`` (as :func:`native_path` returns it) is on local disk."""
    return scheme(path) is None


def check_write_target(path: str) -> None:
    """Refuses, before anything is written, a local dataset path that cannot be a
    directory because it, or one of its parents, is an existing file."""
    if not is_local(path):
        return
    target = os.path.abspath(path)
    cur = target
    while not os.path.lexists(cur):
        parent = os.path.dirname(cur)
        if parent == cur:
            return
        cur = parent
    if os.path.isdir(cur):
        return
    where = "it is a file" if cur == target else f"{cur} is a file"
    raise LanceIOError(errno.ENOTDIR, f"cannot write a dataset at {path}: {where}, not a directory")


def creating(path: str, run: Callable[[], T]) -> T:
    """``run()`` (a write that may create the dataset at local ``path``); a "not found"
    error while the dataset directory still does not exist becomes an error saying the
    directory could not be created."""
    check_write_target(path)
    existed = is_local(path) and os.path.isdir(path)
    try:
        return run()
    except LanceNotFoundError as e:
        if not is_local(path) or existed or os.path.isdir(path):
            raise
        raise LanceIOError(errno.ENOENT, f"cannot create the dataset directory {path}: {e}") from None


def check_tag_name(name: Any) -> str:
    """A tag name, refused with a clear message when longer than a file name can be
    (tags are stored as files named after them)."""
    if not isinstance(name, str):
        raise InvalidArgumentError(f"tag names are strings, got {name!r}")
    size = len(name.encode("utf-8", "surrogatepass"))
    if size > NAME_MAX:
        raise InvalidArgumentError(
            f"tag name {name[:32]!r}... is {size} bytes long; tag names are at most {NAME_MAX} bytes "
            "(each tag is stored as a file named after it)"
        )
    return name


def tag_call(name: str, run: Callable[[], T]) -> T:
    """``run()`` (a tag operation); the file system refusing the tag file's name as too
    long becomes a ``ValueError`` saying so."""
    try:
        return run()
    except LanceIOError as e:
        text = str(e)
        if "os error 36" in text or "File name too long" in text:
            size = len(name.encode("utf-8", "surrogatepass"))
            raise InvalidArgumentError(
                f"tag name {name[:32]!r}... ({size} bytes) is too long for this file system: each tag is "
                f"stored as a file named after it, and file names are limited to {NAME_MAX} bytes "
                "including lancelet's suffixes; use a shorter name"
            ) from None
        raise
