"""``RestNamespace``: a client of the Lance namespace REST protocol (standard library
HTTP, no extra dependency), interchangeable with pylance 14's ``lance.namespace.RestNamespace``."""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, List, Optional, Tuple

import lance_namespace as ln
from lance_namespace import LanceNamespace

from ._access import coerce
from ._routes import ROUTES, Route, add_prefix, join_id, model

__all__ = ["RestNamespace"]


class RestNamespace(LanceNamespace):
    """Talks to a namespace server at ``uri`` (pylance's ``RestAdapter``, lancelet's
    ``python -m lancelet namespace serve``, or any server of the spec).

    Properties are pylance's: ``uri`` (required), ``delimiter`` (default ``$``),
    ``header.<Name>`` (sent with every request), ``timeout`` (seconds, default 60).
    Every operation of the REST routes is a method taking the spec's request model (or
    a dict of its fields), sent as pylance's client sends it.

    >>> ns = RestNamespace(uri="http://127.0.0.1:2333")  # doctest: +SKIP
    >>> ns.list_tables(ListTablesRequest(id=["sales"])).tables  # doctest: +SKIP
    ['orders']
    """

    def __init__(self, context_provider: Any = None, **properties: Any):
        props = {k: str(v) for k, v in properties.items()}
        uri = props.get("uri")
        if not uri:
            raise ln.InvalidInputError("Invalid input: RestNamespace needs uri=")
        self._uri = uri.rstrip("/")
        self._delimiter = props.get("delimiter") or "$"
        self._headers = {k[len("header.") :]: v for k, v in props.items() if k.startswith("header.")}
        self._timeout = float(props.get("timeout", 60))

    def namespace_id(self) -> str:
        """``RestNamespace { endpoint: "..." }``."""
        return f'RestNamespace {{ endpoint: "{self._uri}", delimiter: "{self._delimiter}" }}'

    def __repr__(self) -> str:
        return self.namespace_id()

    def _call(self, route: Route, request: Any, data: Optional[bytes] = None) -> Any:
        request = coerce(request, route.request)
        req_id = getattr(request, "id", None)
        path = route.path.replace("{id}", urllib.parse.quote(join_id(req_id, self._delimiter), safe=""))
        if "{index_name}" in path:
            name = getattr(request, "index_name", None)
            if not name:
                raise ln.InvalidInputError(f"Invalid input: {route.method} needs index_name")
            path = path.replace("{index_name}", urllib.parse.quote(name, safe=""))
        query: List[Tuple[str, str]] = []
        if self._delimiter != "$":
            query.append(("delimiter", self._delimiter))
        if route.body != "json":  # json bodies carry every field; the others travel in the query
            for name in route.query:
                value = getattr(request, name, None)
                if value is None:
                    continue
                if isinstance(value, bool):
                    query.append((name, str(value).lower()))
                elif isinstance(value, (list, tuple)):
                    query.extend((name, str(v)) for v in value)
                elif isinstance(value, dict):
                    query.append((name, json.dumps(value, separators=(",", ":"))))
                else:
                    query.append((name, str(value)))
        headers = dict(self._headers)
        body: Optional[bytes] = None
        if route.body == "json":
            body = json.dumps(request.to_dict()).encode()
            headers["Content-Type"] = "application/json"
        elif route.body == "map":
            body = json.dumps(dict(getattr(request, "metadata", None) or {})).encode()
            headers["Content-Type"] = "application/json"
        elif route.body == "ipc":
            body = bytes(data or b"")
            headers["Content-Type"] = "application/vnd.apache.arrow.stream"
        url = self._uri + path + ("?" + urllib.parse.urlencode(query) if query else "")
        http = urllib.request.Request(url, data=body, method=route.verb, headers=headers)
        try:
            with urllib.request.urlopen(http, timeout=self._timeout) as resp:
                payload = resp.read()
        except urllib.error.HTTPError as e:
            raise _error(e.code, e.read()) from None
        except urllib.error.URLError as e:
            raise ln.ServiceUnavailableError(f"Service unavailable: {self._uri}: {e.reason}") from None
        if route.reply == "str":
            text = json.loads(payload) if payload.strip() else ""
            return text if isinstance(text, str) else json.dumps(text)
        cls = model(route.response)
        if route.reply == "ipc_file":
            return cls(data=payload)
        if route.reply == "empty" or not payload.strip():
            return cls()
        value = json.loads(payload)
        if route.reply == "int" and isinstance(value, int):
            return cls(count=value)
        if route.reply == "map":
            return cls(metadata={str(k): str(v) for k, v in (value or {}).items()})
        return cls.from_dict(value)


def _error(status: int, payload: bytes) -> ln.LanceNamespaceError:
    try:
        value = json.loads(payload)
        code, message = int(value.get("code")), str(value.get("error", ""))
    except (ValueError, TypeError, AttributeError):
        code = {404: 4, 409: 5, 400: 13, 401: 16, 403: 15, 503: 17}.get(status, 18)
        message = payload.decode(errors="replace") or f"HTTP {status}"
    try:
        return ln.from_error_code(code, add_prefix(code, message))
    except (ValueError, KeyError):
        return ln.InternalError(message)


def _method(route: Route) -> Any:
    def call(self: RestNamespace, request: Any) -> Any:
        return self._call(route, request)

    def call_with_data(self: RestNamespace, request: Any, request_data: bytes) -> Any:
        return self._call(route, request, request_data)

    method = call_with_data if route.body == "ipc" else call
    method.__name__ = route.method
    method.__doc__ = f"{route.verb} ``{route.path}`` (``{route.request}`` -> ``{route.response}``)."
    return method


for _route in ROUTES:
    setattr(RestNamespace, _route.method, _method(_route))
