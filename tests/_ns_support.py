"""Namespace clients for interop tests: the same catalog root reached through each
library's directory namespace and across REST in both directions.

``clients(root, **props)`` is a context manager yielding ``{kind: client}``; ``KINDS`` names
them, ``SERVED_BY`` says which library's namespace implementation answers each one:

* ``ours``: ``lancelet.namespace.DirectoryNamespace``;
* ``theirs``: ``lance.namespace.DirectoryNamespace`` (pylance);
* ``pylance_rest``: pylance's ``RestNamespace`` against lancelet's ``RestAdapter``;
* ``lancelet_rest``: lancelet's ``RestNamespace`` against pylance's ``RestAdapter``.
"""

from __future__ import annotations

import contextlib
from typing import Any, Dict, Iterator

import pyarrow as pa

KINDS = ["ours", "theirs", "pylance_rest", "lancelet_rest"]
SERVED_BY = {"ours": "lancelet", "theirs": "pylance", "pylance_rest": "lancelet", "lancelet_rest": "pylance"}


def ipc(table: pa.Table) -> bytes:
    """``table`` as an Arrow IPC stream."""
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as w:
        w.write_table(table)
    return sink.getvalue().to_pybytes()


def ipc_file_table(data: bytes) -> pa.Table:
    """The table in Arrow IPC file bytes (a ``query_table`` reply)."""
    return pa.ipc.open_file(pa.py_buffer(data)).read_all()


@contextlib.contextmanager
def client(kind: str, root: str, **props: str) -> Iterator[Any]:
    """One client of the catalog at ``root`` (see the module doc for ``kind``)."""
    import lance.namespace as pyns

    from lancelet.namespace import DirectoryNamespace, RestAdapter, RestNamespace

    props = {k: str(v) for k, v in props.items()}
    if kind == "ours":
        yield DirectoryNamespace(root=root, **props)
    elif kind == "theirs":
        yield pyns.DirectoryNamespace(root=root, **props)
    elif kind == "pylance_rest":
        with RestAdapter("dir", {"root": root, **props}, port=0) as server:
            yield pyns.RestNamespace(uri=f"http://127.0.0.1:{server.port}")
    elif kind == "lancelet_rest":
        with pyns.RestAdapter("dir", {"root": root, **props}, port=0) as server:
            yield RestNamespace(uri=f"http://127.0.0.1:{server.port}")
    else:
        raise ValueError(kind)


def error_name(e: BaseException) -> str:
    """The spec error class of ``e`` (pylance reports some failures as other classes)."""
    return type(e).__name__


def outcome(run: Any) -> Dict[str, Any]:
    """``{"ok": result}`` or ``{"error": class name}`` of ``run()``."""
    try:
        return {"ok": run()}
    except Exception as e:  # noqa: BLE001 - the class is the outcome
        return {"error": error_name(e)}


def spy(inner: Any, calls: list, before: Any = None) -> Any:
    """A ``LanceNamespace`` forwarding every method to ``inner`` and recording
    ``(method, request as a dict)`` in ``calls``; ``before(method, request)`` runs first
    (to inject a failure or a concurrent commit)."""
    from lance_namespace import LanceNamespace

    class Spy(LanceNamespace):
        def namespace_id(self) -> str:
            return f"Spy({inner.namespace_id()})"

    def forward(name: str) -> Any:
        def call(self: Any, request: Any, *args: Any) -> Any:
            as_dict = dict(request) if isinstance(request, dict) else request.model_dump(exclude_none=True)
            calls.append((name, as_dict))
            if before is not None:
                before(name, as_dict)
            return getattr(inner, name)(request, *args)

        call.__name__ = name
        return call

    for name in dir(LanceNamespace):
        if not name.startswith("_") and name != "namespace_id" and callable(getattr(LanceNamespace, name)):
            setattr(Spy, name, forward(name))
    return Spy()
