"""A small server of the Lance namespace REST protocol over any ``LanceNamespace``
(a :class:`DirectoryNamespace` by default), on the standard library's threaded HTTP
server. It listens on loopback unless told otherwise and has no authentication: put it
behind a proxy before exposing it."""

from __future__ import annotations

import datetime
import json
import re
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Dict, List, Optional, Tuple

import lance_namespace as ln
from lance_namespace import LanceNamespace

from ..errors import InvalidArgumentError, LanceNotFoundError
from ._routes import (
    BOOL_PARAMS,
    INT_PARAMS,
    JSON_PARAMS,
    LIST_PARAMS,
    ROUTES,
    STATUS,
    Route,
    model,
    split_id,
    strip_prefix,
)

__all__ = ["RestAdapter", "serve"]


def _pattern(path: str) -> "re.Pattern[str]":
    """A route's path as a regex: each ``{name}`` matches one URL-encoded segment."""
    out, pos = "^", 0
    for m in re.finditer(r"\{(\w+)\}", path):
        out += re.escape(path[pos : m.start()]) + f"(?P<{m.group(1)}>[^/]+)"
        pos = m.end()
    return re.compile(out + re.escape(path[pos:]) + "$")


_PATTERNS: List[Tuple[Route, "re.Pattern[str]"]] = [(r, _pattern(r.path)) for r in ROUTES]

_MAX_BODY = 1 << 31
_TRUE = ("1", "true", "yes", "on")


def _namespace(impl: Any, properties: Optional[Dict[str, Any]]) -> LanceNamespace:
    if isinstance(impl, LanceNamespace):
        return impl
    from . import connect

    return connect(impl, dict(properties or {}))


def _as_error(e: BaseException) -> ln.LanceNamespaceError:
    if isinstance(e, ln.LanceNamespaceError):
        return e
    if isinstance(e, LanceNotFoundError):
        return ln.TableNotFoundError(str(e))
    if isinstance(e, NotImplementedError):
        return ln.UnsupportedOperationError(str(e))
    if isinstance(e, (InvalidArgumentError, ValueError)):
        return ln.InvalidInputError(str(e))
    return ln.InternalError(f"{type(e).__name__}: {e}")


class _Handler(BaseHTTPRequestHandler):
    server_version = "lancelet-namespace"
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # quiet by default
        if getattr(self.server, "verbose", False):
            super().log_message(format, *args)

    def do_GET(self) -> None:
        self._dispatch("GET")

    def do_POST(self) -> None:
        self._dispatch("POST")

    def _send(self, status: int, body: bytes, content_type: Optional[str] = "application/json") -> None:
        self.send_response(status)
        if content_type and body:
            self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _fail(self, err: ln.LanceNamespaceError) -> None:
        code = int(err.code)
        body = {"error": strip_prefix(code, str(err)), "code": code}
        self._send(STATUS.get(code, 500), json.dumps(body).encode())

    def _dispatch(self, verb: str) -> None:
        url = urllib.parse.urlsplit(self.path)
        length = int(self.headers.get("Content-Length") or 0)
        if length > _MAX_BODY:
            self._fail(ln.InvalidInputError("request body too large"))
            return
        raw = self.rfile.read(length) if length else b""
        for route, pattern in _PATTERNS:
            m = pattern.match(url.path)
            if m and route.verb == verb:
                break
        else:
            self._send(404, b"", None)
            return
        query = urllib.parse.parse_qs(url.query, keep_blank_values=True)
        delimiter = (query.pop("delimiter", None) or ["$"])[-1] or "$"
        try:
            groups = {k: urllib.parse.unquote(v) for k, v in m.groupdict().items()}
            parts = split_id(groups.pop("id"), delimiter) if "id" in groups else None
            request, data = self._request(route, query, raw, parts, groups)
            ns = self.server.namespace  # type: ignore[attr-defined]
            method = getattr(ns, route.method)
            response = method(request, data) if route.body == "ipc" else method(request)
        except BaseException as e:  # every failure becomes the spec's error body
            if isinstance(e, (KeyboardInterrupt, SystemExit)):
                raise
            self._fail(_as_error(e))
            return
        if route.reply == "empty":
            self._send(200, b"", None)
        elif route.reply == "int":
            count = getattr(response, "count", response)
            self._send(200, str(int(count)).encode())
        elif route.reply == "ipc_file":
            data = getattr(response, "data", response)
            self._send(200, bytes(data or b""), "application/vnd.apache.arrow.file")
        elif route.reply == "str":
            self._send(200, json.dumps(str(response)).encode())
        elif route.reply == "map":
            meta = getattr(response, "metadata", response)
            self._send(200, json.dumps(dict(meta or {})).encode())
        else:
            try:
                payload = json.dumps(_as_dict(response), default=_json_value).encode()
            except (TypeError, ValueError) as e:
                self._fail(ln.InternalError(f"Internal error: the reply cannot be sent as JSON: {e}"))
                return
            self._send(200, payload)

    @staticmethod
    def _request(
        route: Route,
        query: Dict[str, List[str]],
        raw: bytes,
        parts: Optional[List[str]],
        path_fields: Dict[str, str],
    ):
        cls = model(route.request)
        data = None
        fields: Dict[str, Any] = {}
        # Query parameters the route declares (pylance's client sends some POSTs with no
        # body at all, and others with their flags in both places).
        for k, values in query.items():
            if k not in route.query or not values:
                continue
            v = values[-1]
            try:
                if k in INT_PARAMS:
                    fields[k] = int(v)
                elif k in BOOL_PARAMS:
                    fields[k] = v.lower() in _TRUE
                elif k in LIST_PARAMS:
                    fields[k] = [p for item in values for p in item.split(",") if p]
                elif k in JSON_PARAMS:
                    fields[k] = json.loads(v) if v else None
                else:
                    fields[k] = v
            except ValueError as e:
                raise ln.InvalidInputError(f"Invalid input: query parameter {k}={v!r}: {e}") from None
        # (a body on a route pylance sends without one is read too: older clients send JSON)
        if route.body in ("json", "map", "none") and raw.strip():
            try:
                body = json.loads(raw)
            except ValueError as e:
                raise ln.InvalidInputError(f"Invalid input: the body is not JSON: {e}") from None
            if not isinstance(body, dict):
                raise ln.InvalidInputError("Invalid input: the body must be a JSON object")
            if route.body == "map":
                fields["metadata"] = body
            else:
                fields.update(body)
        if route.body == "ipc":
            data = raw
        fields.update(path_fields)
        if parts is not None:
            fields["id"] = parts
        try:
            request = cls.from_dict(fields)
        except Exception as e:  # pydantic validation
            raise ln.InvalidInputError(f"Invalid input: {e}") from None
        return request, data


def _json_value(value: Any) -> Any:
    """JSON for what models hold beside JSON types: times (RFC 3339, as the spec's clients
    parse them)."""
    if isinstance(value, (datetime.datetime, datetime.date)):
        return value.isoformat()
    raise TypeError(f"{type(value).__name__} is not JSON")


def _as_dict(response: Any) -> Any:
    """A response (a model, or a dict from a namespace that returns plain dicts) as JSON."""
    if response is None:
        return {}
    if isinstance(response, dict):
        return {k: _as_dict(v) if hasattr(v, "to_dict") else v for k, v in response.items()}
    return response.to_dict()


class RestAdapter:
    """Serves ``namespace_client_impl`` (``"dir"``, ``"rest"``, a class path, or a
    ``LanceNamespace`` instance) over the REST protocol, as pylance's
    ``lance.namespace.RestAdapter`` does: ``start()``/``stop()`` or a ``with`` block;
    ``port=0`` picks a free port (read it from ``.port``).

    >>> import tempfile
    >>> from lancelet.namespace import RestNamespace, ListNamespacesRequest
    >>> with RestAdapter("dir", {"root": tempfile.mkdtemp()}, port=0) as adapter:
    ...     client = RestNamespace(uri=f"http://127.0.0.1:{adapter.port}")
    ...     client.list_namespaces(ListNamespacesRequest(id=[])).namespaces
    []
    """

    def __init__(
        self,
        namespace_client_impl: Any,
        namespace_client_properties: Optional[Dict[str, Any]] = None,
        session: Any = None,
        host: Optional[str] = None,
        port: Optional[int] = None,
        verbose: bool = False,
    ):
        self._namespace = _namespace(namespace_client_impl, namespace_client_properties)
        self._host = host or "127.0.0.1"
        self._port = 2333 if port is None else int(port)
        self._verbose = verbose
        self._server: Optional[ThreadingHTTPServer] = None
        self._thread: Optional[threading.Thread] = None

    @property
    def namespace(self) -> LanceNamespace:
        """The namespace being served."""
        return self._namespace

    @property
    def port(self) -> int:
        """The port listened on (the chosen one once started with ``port=0``)."""
        return self._server.server_address[1] if self._server is not None else self._port

    def _bind(self) -> ThreadingHTTPServer:
        server = ThreadingHTTPServer((self._host, self._port), _Handler)
        server.daemon_threads = True
        server.namespace = self._namespace  # type: ignore[attr-defined]
        server.verbose = self._verbose  # type: ignore[attr-defined]
        return server

    def start(self) -> None:
        """Starts serving on a background thread."""
        if self._server is not None:
            return
        self._server = self._bind()
        self._thread = threading.Thread(target=self._server.serve_forever, name="lancelet-namespace", daemon=True)
        self._thread.start()

    def serve_forever(self, ready: Any = None) -> None:
        """Serves on this thread until interrupted; ``ready()`` is called once listening."""
        self._server = self._bind()
        if ready is not None:
            ready()
        try:
            self._server.serve_forever()
        finally:
            self._server.server_close()
            self._server = None

    def stop(self) -> None:
        """Stops serving."""
        if self._server is None:
            return
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join()
        self._server = None
        self._thread = None

    def __enter__(self) -> "RestAdapter":
        self.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()


def serve(root: str, host: str = "127.0.0.1", port: int = 2333, verbose: bool = False, **properties: Any) -> None:
    """Serves the directory namespace at ``root`` until interrupted (what
    ``python -m lancelet namespace serve ROOT`` runs).

    >>> serve("/data/catalog", port=2333)  # doctest: +SKIP
    """
    from ._directory import DirectoryNamespace

    adapter = RestAdapter(DirectoryNamespace(root=root, **properties), host=host, port=port, verbose=verbose)
    try:
        adapter.serve_forever(
            lambda: print(f"serving the namespace at {root} on http://{host}:{adapter.port}", flush=True)
        )
    except KeyboardInterrupt:
        pass
