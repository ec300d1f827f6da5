"""What the parts of :class:`DirectoryNamespace` share: request handling (models or
plain dicts), object ids, Arrow IPC bodies, and :class:`TableAccess`, the table lookups
the operation mixins build on.
"""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional

import lance_namespace as ln
import pyarrow as pa

from ._catalog import DELIMITER
from ._routes import model
from ._storage import RootStorage


def coerce(request: Any, model_name: str) -> Any:
    """``request`` as the spec's model ``model_name``: models pass through, dicts (pylance
    hands Python namespaces plain dicts for the version operations) are validated.

    >>> coerce({"id": ["t"], "version": 2}, "DescribeTableVersionRequest").version
    2
    """
    cls = model(model_name)
    if isinstance(request, cls):
        return request
    if isinstance(request, Mapping):
        data = dict(request)
    elif hasattr(request, "model_dump"):
        data = request.model_dump()
    else:
        raise ln.InvalidInputError(f"Invalid input: expected a {model_name} or a dict, got {type(request).__name__}")
    try:
        return cls.model_validate(data)
    except Exception as e:  # pydantic's ValidationError
        raise ln.InvalidInputError(f"Invalid input: {e}") from None


def ident(request: Any) -> List[str]:
    """The object id of a request (model or dict), checked to be safe as a path part."""
    raw = request.get("id") if isinstance(request, Mapping) else getattr(request, "id", None)
    parts = list(raw or [])
    for p in parts:
        if not isinstance(p, str) or not p:
            raise ln.InvalidInputError(f"Invalid input: object id parts are non-empty strings, got {parts!r}")
        if DELIMITER in p:
            raise ln.InvalidInputError(f"Invalid input: object id part {p!r} contains the delimiter {DELIMITER!r}")
        if p in (".", "..") or any(c in p for c in "/\\\x00"):
            raise ln.InvalidInputError(
                f"Invalid input: object id part {p!r} is not a valid name (no '/', '\\', '.', '..')"
            )
    return parts


def ipc_table(data: bytes) -> pa.Table:
    """The table of an Arrow IPC stream (or file) body."""
    if not data:
        raise ln.InvalidInputError("Invalid input: the request carries no Arrow IPC stream")
    try:
        return pa.ipc.open_stream(pa.py_buffer(data)).read_all()
    except pa.ArrowInvalid:
        try:
            return pa.ipc.open_file(pa.py_buffer(data)).read_all()
        except pa.ArrowInvalid as e:
            raise ln.InvalidInputError(f"Invalid input: the body is not an Arrow IPC stream: {e}") from None


class TableAccess:
    """The table lookups :class:`DirectoryNamespace` provides to its operation mixins."""

    _fs: RootStorage
    _storage_options: Optional[Dict[str, str]]

    def _rows(self) -> List[Dict[str, Any]]:
        raise NotImplementedError

    def _require_table(self, rows: List[Dict[str, Any]], parts: List[str]) -> str:
        raise NotImplementedError

    def _has_data(self, rel: str) -> bool:
        raise NotImplementedError

    def _open(self, request: Any, parts: Optional[List[str]] = None) -> Any:
        raise NotImplementedError

    def _writable(self, request: Any) -> Any:
        """The latest version of the request's table (of its ``branch``), to change."""
        return self._open(ln.DescribeTableRequest(id=ident(request), branch=getattr(request, "branch", None)))
