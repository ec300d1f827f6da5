"""A small server of the Lance namespace REST protocol over any ``LanceNamespace``
(a :class:`DirectoryNamespace` by default), on the standard library's threaded HTTP
server. It listens on loopback unless told otherwise and has no authentication: put it
behind a proxy before exposing it.

Request bodies are bounded: JSON bodies by ``max_body_bytes`` (default 8 MiB), the Arrow
IPC bodies of ``create``/``insert``/``merge_insert`` by ``max_data_body_bytes`` (default
256 MiB; the namespace interface takes them as one ``bytes`` value, so they are held in
memory whole). A larger ``Content-Length`` is answered 413 before anything is read; a
malformed one 400. Error bodies never carry the namespace root's path, and failures the
server did not expect are answered with a generic 500 (the details go to its stderr).
"""

from __future__ import annotations

import datetime
import errno
import json
import os
import re
import socket
import sys
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Dict, List, Optional, Tuple

import lance_namespace as ln
from lance_namespace import LanceNamespace

from ..errors import InvalidArgumentError, LanceNotFoundError
from ._connect import connect
from ._directory import DirectoryNamespace
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

#: Default bounds of request bodies: JSON requests, and the Arrow IPC bodies of data routes.
DEFAULT_MAX_BODY_BYTES = 8 << 20
DEFAULT_MAX_DATA_BODY_BYTES = 256 << 20
#: After refusing a body, at most this much of it is read and dropped (for this long) so
#: the client, still sending, gets to read the refusal instead of a reset connection.
_DRAIN_BYTES = 64 << 20
_DRAIN_SECONDS = 2.0
_TRUE = ("1", "true", "yes", "on")
_INTERNAL = "Internal error: the server failed to handle the request (the server's log has the details)"
_DIGITS = re.compile(r"^[0-9]+$")


class _Refused(Exception):
    """A request refused before its body was read: ``status`` and the spec's error."""

    def __init__(self, status: int, error: ln.LanceNamespaceError):
        super().__init__(str(error))
        self.status = status
        self.error = error


def _namespace(impl: Any, properties: Optional[Dict[str, Any]]) -> LanceNamespace:
    if isinstance(impl, LanceNamespace):
        return impl
    return connect(impl, dict(properties or {}))


def _name_too_long(e: BaseException) -> bool:
    if isinstance(e, OSError) and e.errno == errno.ENAMETOOLONG:
        return True
    return f"(os error {errno.ENAMETOOLONG})" in str(e) or "File name too long" in str(e)


def _as_error(e: BaseException) -> Tuple[ln.LanceNamespaceError, bool]:
    """The spec's error for ``e``, and whether it is one the server did not expect
    (answered with a generic message)."""
    if isinstance(e, ln.LanceNamespaceError):
        return e, False
    if isinstance(e, RecursionError):
        return ln.InvalidInputError("Invalid input: the request is nested too deeply"), False
    if _name_too_long(e):
        return ln.InvalidInputError(
            "Invalid input: a name in the request is too long for the namespace's storage"
        ), False
    if isinstance(e, LanceNotFoundError):
        return ln.TableNotFoundError(str(e)), False
    if isinstance(e, NotImplementedError):
        return ln.UnsupportedOperationError(str(e)), False
    if isinstance(e, (InvalidArgumentError, ValueError)):
        return ln.InvalidInputError(str(e)), False
    return ln.InternalError(_INTERNAL), True


def _root_forms(namespace: Any) -> List[str]:
    """The spellings of the served namespace's root (longest first), kept out of error
    bodies."""
    forms = set()
    for attr in ("root", "_root_arg"):
        try:
            value = getattr(namespace, attr, None)
        except Exception:  # a property that fails: nothing to hide
            value = None
        if not isinstance(value, str) or not value.strip("/"):
            continue
        candidates = {value.rstrip("/")}
        if "://" not in value:
            candidates |= {os.path.abspath(value), os.path.realpath(value)}
        for c in list(candidates):
            if "://" not in c and c.startswith("/"):
                candidates.add("file://" + c)
        forms |= {c for c in candidates if c.strip("/")}
    return sorted(forms, key=len, reverse=True)


def _scrub(message: str, roots: List[str]) -> str:
    """``message`` with the root's path replaced by ``<root>``."""
    for form in roots:
        message = message.replace(form, "<root>")
    return message


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

    def handle_expect_100(self) -> bool:
        # A client that waits for "100 Continue" hears of a refused body before sending it.
        try:
            self._body_length(self._route(self.command)[0])
        except _Refused as e:
            self._fail(e.error, e.status, close=True)
            return False
        return super().handle_expect_100()

    def _send(
        self, status: int, body: bytes, content_type: Optional[str] = "application/json", close: bool = False
    ) -> None:
        self.send_response(status)
        if content_type and body:
            self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        if close:
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        self.wfile.write(body)

    def _fail(self, err: ln.LanceNamespaceError, status: Optional[int] = None, close: bool = False) -> None:
        code = int(err.code)
        message = _scrub(strip_prefix(code, str(err)), self.server.root_forms)  # type: ignore[attr-defined]
        body = {"error": message, "code": code}
        self._send(status or STATUS.get(code, 500), json.dumps(body).encode(), close=close)

    def _internal(self, e: BaseException) -> None:
        """Logs an unexpected failure on the server's stderr (never in the reply)."""
        try:
            text = _scrub(f"{type(e).__name__}: {e}", self.server.root_forms)  # type: ignore[attr-defined]
            print(f"lancelet namespace server: {self.command} {self.path[:200]}: {text[:2000]}", file=sys.stderr)
        except Exception:  # logging must not fail the reply
            pass

    def _route(self, verb: str) -> Tuple[Optional[Route], Any]:
        """The route of the request line and its path match (``None`` when none matches)."""
        path = urllib.parse.urlsplit(self.path).path
        for route, pattern in _PATTERNS:
            m = pattern.match(path)
            if m and route.verb == verb:
                return route, m
        return None, None

    def _body_length(self, route: Optional[Route]) -> int:
        """The request's Content-Length, checked against the route's bound (raises
        :class:`_Refused`)."""
        if self.headers.get("Transfer-Encoding"):
            raise _Refused(411, ln.InvalidInputError("Invalid input: send the body with a Content-Length"))
        values = [v.strip() for v in self.headers.get_all("Content-Length") or []]
        if not values:
            return 0
        if len(set(values)) > 1 or not _DIGITS.match(values[0]):
            raise _Refused(400, ln.InvalidInputError("Invalid input: Content-Length must be one non-negative integer"))
        length = int(values[0])
        data = route is not None and route.body == "ipc"
        limit = self.server.max_data_body_bytes if data else self.server.max_body_bytes  # type: ignore[attr-defined]
        if length > limit:
            what = "Arrow IPC body" if data else "request body"
            raise _Refused(
                413, ln.InvalidInputError(f"Invalid input: the {what} is {length} bytes; the limit is {limit}")
            )
        return length

    def _drain(self, length: int) -> None:
        """Reads and drops up to ``length`` bytes of a refused body, briefly (see
        ``_DRAIN_BYTES``), unless the client waited for "100 Continue"."""
        if self.headers.get("Expect", "").lower() == "100-continue":
            return
        try:
            self.connection.settimeout(_DRAIN_SECONDS)
            left = min(length, _DRAIN_BYTES)
            while left > 0:
                chunk = self.rfile.read1(min(left, 1 << 16))
                if not chunk:
                    break
                left -= len(chunk)
        except (OSError, socket.timeout):
            pass

    def _dispatch(self, verb: str) -> None:
        try:
            self._handle(verb)
        except (KeyboardInterrupt, SystemExit):
            raise
        except ConnectionError:
            self.close_connection = True
        except BaseException as e:  # a last resort: a generic 500, the details in the log
            self._internal(e)
            self.close_connection = True
            try:
                self._fail(ln.InternalError(_INTERNAL), 500, close=True)
            except Exception:
                pass

    def _handle(self, verb: str) -> None:
        route, m = self._route(verb)
        try:
            length = self._body_length(route)
        except _Refused as e:
            self._fail(e.error, e.status, close=True)
            if e.status == 413:
                self._drain(int(self.headers.get("Content-Length", "0").strip() or 0))
            return
        raw = self.rfile.read(length) if length else b""
        if len(raw) < length:  # the client went away mid-body
            self.close_connection = True
            return
        if route is None:
            self._send(404, b"", None)
            return
        url = urllib.parse.urlsplit(self.path)
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
            err, unexpected = _as_error(e)
            if unexpected:
                self._internal(e)
            self._fail(err)
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
                self._internal(e)
                self._fail(ln.InternalError(_INTERNAL))
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
            except RecursionError:
                raise ln.InvalidInputError("Invalid input: the JSON body is nested too deeply") from None
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
        except RecursionError:
            raise ln.InvalidInputError("Invalid input: the request is nested too deeply") from None
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
    ``port=0`` picks a free port (read it from ``.port``). ``max_body_bytes`` bounds JSON
    request bodies (default 8 MiB), ``max_data_body_bytes`` the Arrow IPC bodies of
    ``create``/``insert``/``merge_insert`` (default 256 MiB, held in memory whole); a larger
    request is answered 413 unread.

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
        *,
        max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
        max_data_body_bytes: int = DEFAULT_MAX_DATA_BODY_BYTES,
    ):
        self._max_body = _limit("max_body_bytes", max_body_bytes)
        self._max_data_body = _limit("max_data_body_bytes", max_data_body_bytes)
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
        server.max_body_bytes = self._max_body  # type: ignore[attr-defined]
        server.max_data_body_bytes = self._max_data_body  # type: ignore[attr-defined]
        server.root_forms = _root_forms(self._namespace)  # type: ignore[attr-defined]
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


def _limit(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise InvalidArgumentError(f"{name} must be a non-negative number of bytes, got {value!r}")
    return value


def serve(
    root: str,
    host: str = "127.0.0.1",
    port: int = 2333,
    verbose: bool = False,
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    max_data_body_bytes: int = DEFAULT_MAX_DATA_BODY_BYTES,
    **properties: Any,
) -> None:
    """Serves the directory namespace at ``root`` until interrupted (what
    ``python -m lancelet namespace serve ROOT`` runs); the body bounds are
    :class:`RestAdapter`'s.

    >>> serve("/data/catalog", port=2333)  # doctest: +SKIP
    """
    adapter = RestAdapter(
        DirectoryNamespace(root=root, **properties),
        host=host,
        port=port,
        verbose=verbose,
        max_body_bytes=max_body_bytes,
        max_data_body_bytes=max_data_body_bytes,
    )
    try:
        adapter.serve_forever(
            lambda: print(f"serving the namespace at {root} on http://{host}:{adapter.port}", flush=True)
        )
    except KeyboardInterrupt:
        pass
