"""What the ``lancelet`` command line's subcommands share (see :mod:`lancelet.cli`): the
``--version`` and ``--storage-option`` arguments, opening the dataset they name, and sizes
as text.
"""

from __future__ import annotations

import re
from typing import Dict, List, Optional

from .dataset import LanceDataset, dataset

_INT = re.compile(r"^[+-]?\d+$")


def _version(version: Optional[str]):
    """A --version value: a version number (positive) or a tag name."""
    if version is None or not _INT.match(version.strip()):
        return version
    v = int(version)
    if v < 1:
        raise ValueError(f"--version must be a positive version number or a tag name, got {version}")
    return v


def _storage_options(pairs: Optional[List[str]]) -> Optional[Dict[str, str]]:
    out: Dict[str, str] = {}
    for pair in pairs or []:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"--storage-option takes KEY=VALUE, got {pair!r}")
        out[key.strip()] = value
    return out or None


def _open(uri: str, version: Optional[str] = None, storage_options: Optional[List[str]] = None) -> LanceDataset:
    return dataset(uri, version=_version(version), storage_options=_storage_options(storage_options))


def _size(n: int) -> str:
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{n} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return str(size)
