"""A small HTTP vector-search service over one lancelet dataset (standard library only).

Routes (JSON in, JSON out)::

    GET  /health   -> {"status": "ok", "version": N}
    POST /nearest  {"q": [...], "k": 10, "nprobes": 20, "columns": [...], "filter": "...",
                    "prefilter": true, "refine_factor": null, "column": "vec"}
                   -> {"rows": [{...}, ...], "version": N, "took_ms": ...}
    POST /take     {"indices": [...], "columns": [...]} -> {"rows": [...], "version": N, ...}
    POST /reload   -> {"version": N, "previous_version": M, "changed": bool}
    GET  /stats    -> request counters, latency percentiles, version, rows, reloads

The open dataset is held in one attribute (:attr:`SearchService.dataset`). Every request
reads that attribute exactly once and uses the object it got for all its work, so a search
runs entirely on the version it started with; ``/reload`` (or ``--reload-every``) opens the
latest version as a *new* object and swaps the attribute (a single, atomic assignment).
In-flight requests keep their old object; the next request sees the new one. The swap only
goes forwards (a newer version replaces an older one), so the version a client sees never
goes backwards across its successive requests.

The native search releases the GIL, so concurrent requests (one thread per connection,
:class:`http.server.ThreadingHTTPServer`) search in parallel on several cores.

There is no authentication: the service binds to 127.0.0.1 unless told otherwise.

    python examples/search_service.py URI --port 8080 [--reload-every 5]
    python examples/search_service.py --demo --port 8080     # builds a small dataset first

    curl -s localhost:8080/health
    curl -s -XPOST localhost:8080/nearest -d '{"q": [0.1, ...64 floats...], "k": 5}'
"""

from __future__ import annotations

import argparse
import base64
import collections
import datetime as _dt
import decimal
import json
import math
import os
import shutil
import signal
import socket
import sys
import tempfile
import threading
import time
import traceback
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Deque, Dict, List, Optional, Tuple

import pyarrow as pa

import lancelet
from lancelet.errors import InvalidArgumentError, RowIndexError, UnsupportedFeatureError

#: Largest request body accepted (bytes).
MAX_BODY = 8 * 1024 * 1024
#: Most rows one ``/take`` may ask for.
MAX_TAKE = 10_000
#: Latency samples kept per route for ``/stats`` (a bounded ring: memory stays flat).
LATENCY_SAMPLES = 2048

_NEAREST_KEYS = {"q", "k", "nprobes", "columns", "filter", "prefilter", "refine_factor", "column"}
_TAKE_KEYS = {"indices", "columns"}


class RequestError(Exception):
    """A request the service refuses: answered with ``status`` and ``{"error": message}``."""

    def __init__(self, message: str, status: int = 400):
        super().__init__(message)
        self.status = status


# --------------------------------------------------------------------------------------
# The service: dataset holder, request logic, statistics (no HTTP here)
# --------------------------------------------------------------------------------------


def _vector_columns(schema: pa.Schema) -> List[Tuple[str, int]]:
    """Top-level fixed-size-list-of-float columns: (name, dimension)."""
    out = []
    for f in schema:
        if pa.types.is_fixed_size_list(f.type) and pa.types.is_floating(f.type.value_type):
            out.append((f.name, f.type.list_size))
    return out


class _RouteStats:
    """Counters and a bounded ring of latencies for one route."""

    __slots__ = ("count", "errors", "server_errors", "latencies")

    def __init__(self) -> None:
        self.count = 0
        self.errors = 0
        self.server_errors = 0
        self.latencies: Deque[float] = collections.deque(maxlen=LATENCY_SAMPLES)

    def summary(self) -> Dict[str, Any]:
        lat = sorted(self.latencies)
        out: Dict[str, Any] = {"count": self.count, "errors": self.errors, "server_errors": self.server_errors}
        if lat:
            out["latency_ms"] = {
                "samples": len(lat),
                "mean": round(sum(lat) / len(lat) * 1000, 3),
                "p50": round(lat[len(lat) // 2] * 1000, 3),
                "p99": round(lat[min(len(lat) - 1, int(len(lat) * 0.99))] * 1000, 3),
                "max": round(lat[-1] * 1000, 3),
            }
        return out


class SearchService:
    """Vector search, row lookups and reloads over one dataset, independent of HTTP.

    ``uri``: the dataset (opened at its latest version). ``column``: the vector column
    searched by default (by default the column of the dataset's vector index, or its only
    vector column). ``default_columns``: the columns returned when a request names none
    (by default every column but the vector column). ``max_k``: the largest ``k`` accepted.
    """

    def __init__(self, uri: str, *, column: Optional[str] = None, default_columns: Optional[List[str]] = None,
                 max_k: int = 1000):
        self.uri = uri
        self.max_k = max_k
        self._dataset = lancelet.dataset(uri)
        self._reload_lock = threading.Lock()
        self._stats_lock = threading.Lock()
        self._routes: Dict[str, _RouteStats] = collections.defaultdict(_RouteStats)
        self._reloads = 0
        self._reload_errors = 0
        self._last_reload: Optional[float] = None
        self._started = time.time()
        self._in_flight = 0

        vectors = dict(_vector_columns(self._dataset.schema))
        if column is None:
            indexed = [i["fields"][0] for i in self._dataset.list_indices()
                       if i["type"].startswith("IVF") and i["fields"][0] in vectors]
            candidates = sorted(set(indexed)) or sorted(vectors)
            if len(candidates) != 1:
                raise ValueError(f"cannot tell which vector column to search among {candidates}: pass column=")
            column = candidates[0]
        if column not in vectors:
            raise ValueError(f"{column!r} is not a vector column of {uri} (vector columns: {sorted(vectors)})")
        self.column = column
        self.dim = vectors[column]
        self.default_columns = (list(default_columns) if default_columns is not None
                                else [f.name for f in self._dataset.schema if f.name != column])

    # -- the dataset holder ------------------------------------------------------------

    @property
    def dataset(self) -> "lancelet.LanceDataset":
        """The dataset object requests use now. Read it once per request and keep the
        object: a concurrent reload replaces the attribute, never the object."""
        return self._dataset

    def reload(self) -> Dict[str, Any]:
        """Opens the latest version and swaps it in if it is newer than the current one.

        Opening happens outside any lock requests take; only reloads are serialized (so two
        concurrent reloads cannot swap in an older version after a newer one)."""
        with self._reload_lock:
            old = self._dataset
            try:
                new = lancelet.dataset(self.uri)
            except Exception:
                with self._stats_lock:
                    self._reload_errors += 1
                raise
            changed = new.version > old.version
            if changed:
                self._dataset = new  # the atomic swap
            with self._stats_lock:
                self._reloads += 1
                self._last_reload = time.time()
            return {"version": self._dataset.version, "previous_version": old.version, "changed": changed}

    # -- requests ------------------------------------------------------------------------

    def _columns(self, body: Dict[str, Any]) -> List[str]:
        cols = body.get("columns")
        if cols is None:
            return list(self.default_columns)
        if not isinstance(cols, list) or not all(isinstance(c, str) for c in cols):
            raise RequestError("'columns' must be a list of column names")
        return cols

    @staticmethod
    def _int(body: Dict[str, Any], key: str, default: Optional[int], lo: int = 1,
             hi: Optional[int] = None) -> Optional[int]:
        v = body.get(key, default)
        if v is None:
            return None
        if isinstance(v, bool) or not isinstance(v, int) or v < lo or (hi is not None and v > hi):
            bound = f" and at most {hi}" if hi is not None else ""
            raise RequestError(f"{key!r} must be an integer at least {lo}{bound}, got {v!r}")
        return v

    def nearest_args(self, body: Dict[str, Any]) -> Dict[str, Any]:
        """The keyword arguments of ``LanceDataset.to_table`` a ``/nearest`` body stands for
        (checked: a bad request raises :class:`RequestError`)."""
        if not isinstance(body, dict):
            raise RequestError("the body must be a JSON object")
        unknown = set(body) - _NEAREST_KEYS
        if unknown:
            raise RequestError(f"unknown key(s) {sorted(unknown)}; accepted: {sorted(_NEAREST_KEYS)}")
        column = body.get("column", self.column)
        if column != self.column:
            raise RequestError(f"this service searches column {self.column!r}")
        q = body.get("q")
        if (not isinstance(q, list) or len(q) != self.dim
                or not all(isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) for x in q)):
            raise RequestError(f"'q' must be a list of {self.dim} finite numbers")
        nearest: Dict[str, Any] = {"column": column, "q": q, "k": self._int(body, "k", 10, hi=self.max_k)}
        nprobes = self._int(body, "nprobes", None)
        if nprobes is not None:
            nearest["nprobes"] = nprobes
        refine = self._int(body, "refine_factor", None)
        if refine is not None:
            nearest["refine_factor"] = refine
        args: Dict[str, Any] = {"nearest": nearest, "columns": self._columns(body)}
        flt = body.get("filter")
        if flt is not None:
            if not isinstance(flt, str):
                raise RequestError("'filter' must be a string (an SQL predicate)")
            prefilter = body.get("prefilter", True)
            if not isinstance(prefilter, bool):
                raise RequestError("'prefilter' must be true or false")
            args["filter"] = flt
            args["prefilter"] = prefilter
        return args

    def nearest(self, body: Dict[str, Any]) -> Dict[str, Any]:
        """``POST /nearest``: the ``k`` nearest rows (requested columns and ``_distance``,
        closest first) and the version searched."""
        args = self.nearest_args(body)
        ds = self._dataset  # read once: the whole search uses this version
        table = ds.to_table(**args)
        return {"rows": table.to_pylist(), "version": ds.version}

    def take(self, body: Dict[str, Any]) -> Dict[str, Any]:
        """``POST /take``: rows at positions ``indices`` (among live rows, in the order given)."""
        if not isinstance(body, dict):
            raise RequestError("the body must be a JSON object")
        unknown = set(body) - _TAKE_KEYS
        if unknown:
            raise RequestError(f"unknown key(s) {sorted(unknown)}; accepted: {sorted(_TAKE_KEYS)}")
        idx = body.get("indices")
        if (not isinstance(idx, list) or not all(isinstance(i, int) and not isinstance(i, bool) and i >= 0 for i in idx)):
            raise RequestError("'indices' must be a list of non-negative integers")
        if len(idx) > MAX_TAKE:
            raise RequestError(f"at most {MAX_TAKE} indices per request")
        columns = self._columns(body)
        ds = self._dataset
        table = ds.take(idx, columns=columns)
        return {"rows": table.to_pylist(), "version": ds.version}

    def health(self) -> Dict[str, Any]:
        """``GET /health``."""
        return {"status": "ok", "version": self._dataset.version}

    def stats(self) -> Dict[str, Any]:
        """``GET /stats``: what is served, and how requests went."""
        ds = self._dataset
        with self._stats_lock:
            routes = {name: r.summary() for name, r in sorted(self._routes.items())}
            reloads, reload_errors, last, in_flight = (self._reloads, self._reload_errors, self._last_reload,
                                                       self._in_flight)
        return {
            "uri": self.uri,
            "version": ds.version,
            "latest_version": ds.latest_version,
            "rows": ds.count_rows(),
            "column": self.column,
            "dim": self.dim,
            "indices": [{"name": i["name"], "type": i["type"], "fields": i["fields"]} for i in ds.list_indices()],
            "reloads": reloads,
            "reload_errors": reload_errors,
            "last_reload_age_s": None if last is None else round(time.time() - last, 3),
            "uptime_s": round(time.time() - self._started, 3),
            "in_flight": in_flight,
            "threads": threading.active_count(),
            "routes": routes,
        }

    def record(self, route: str, seconds: float, status: int) -> None:
        """Counts one finished request (``errors``: any status but 200; ``server_errors``: 5xx)."""
        with self._stats_lock:
            r = self._routes[route]
            r.count += 1
            if status != 200:
                r.errors += 1
            if status >= 500:
                r.server_errors += 1
            r.latencies.append(seconds)

    def enter(self) -> None:
        with self._stats_lock:
            self._in_flight += 1

    def leave(self) -> None:
        with self._stats_lock:
            self._in_flight -= 1


class Reloader:
    """A daemon thread calling :meth:`SearchService.reload` every ``interval`` seconds."""

    def __init__(self, service: SearchService, interval: float, log=None):
        self.service = service
        self.interval = interval
        self._log = log or (lambda msg: print(msg, file=sys.stderr, flush=True))
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="reloader", daemon=True)

    def start(self) -> "Reloader":
        self._thread.start()
        return self

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            try:
                r = self.service.reload()
                if r["changed"]:
                    self._log(f"reloaded: version {r['previous_version']} -> {r['version']}")
            except Exception as e:  # keep serving the old version; try again next time
                self._log(f"reload failed (still serving version {self.service.dataset.version}): {e!r}")

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=max(5.0, self.interval * 2))


# --------------------------------------------------------------------------------------
# HTTP
# --------------------------------------------------------------------------------------


def _json_default(o: Any) -> Any:
    if isinstance(o, (_dt.datetime, _dt.date, _dt.time)):
        return o.isoformat()
    if isinstance(o, _dt.timedelta):
        return o.total_seconds()
    if isinstance(o, (bytes, bytearray, memoryview)):
        return base64.b64encode(bytes(o)).decode("ascii")
    if isinstance(o, decimal.Decimal):
        return str(o)
    if hasattr(o, "tolist"):  # numpy scalars and arrays
        return o.tolist()
    if isinstance(o, (set, frozenset)):
        return sorted(o)
    return str(o)


def _finite(o: Any) -> Any:
    """``o`` with NaN and infinities replaced by null (strict JSON has no such numbers)."""
    if isinstance(o, float):
        return o if math.isfinite(o) else None
    if isinstance(o, dict):
        return {k: _finite(v) for k, v in o.items()}
    if isinstance(o, (list, tuple)):
        return [_finite(v) for v in o]
    return o


def dumps(obj: Any) -> bytes:
    """Strict JSON (non-finite floats become null), UTF-8."""
    try:
        s = json.dumps(obj, default=_json_default, allow_nan=False, separators=(",", ":"))
    except ValueError:
        s = json.dumps(_finite(obj), default=_json_default, allow_nan=False, separators=(",", ":"))
    return s.encode("utf-8")


#: (method, path) -> (service method name, reads a body)
_ROUTES = {
    ("GET", "/health"): ("health", False),
    ("GET", "/stats"): ("stats", False),
    ("POST", "/nearest"): ("nearest", True),
    ("POST", "/take"): ("take", True),
    ("POST", "/reload"): ("reload", False),
}
_PATHS = {path for _, path in _ROUTES}


def _status_of(e: BaseException) -> int:
    if isinstance(e, RequestError):
        return e.status
    if isinstance(e, (InvalidArgumentError, RowIndexError, UnsupportedFeatureError)):
        return 400
    return 500


class SearchHandler(BaseHTTPRequestHandler):
    """Routes requests to ``self.server.service`` (HTTP/1.1, keep-alive)."""

    protocol_version = "HTTP/1.1"
    server_version = "lancelet-search/0.1"
    server: "SearchHTTPServer"
    #: Buffered writes: the status line, headers and body leave in one send() (flushed by
    #: the base class after each request). Sent apart, Nagle's algorithm on this side and
    #: delayed ACKs on the client's would hold every response back ~40 ms.
    wbufsize = -1

    def setup(self) -> None:
        super().setup()
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (the base class's name)
        if self.server.verbose:
            super().log_message(format, *args)

    def _send(self, status: int, payload: Any, extra_headers: Optional[Dict[str, str]] = None) -> None:
        data = dumps(payload)
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in (extra_headers or {}).items():
            self.send_header(k, v)
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def _body(self) -> Any:
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            self.close_connection = True
            raise RequestError("chunked bodies are not supported: send Content-Length", 411)
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            self.close_connection = True
            raise RequestError("bad Content-Length") from None
        if length < 0 or length > MAX_BODY:
            self.close_connection = True
            raise RequestError(f"body larger than {MAX_BODY} bytes", 413)
        raw = self.rfile.read(length) if length else b""
        if not raw.strip():
            return {}
        try:
            return json.loads(raw)
        except (ValueError, UnicodeDecodeError) as e:
            raise RequestError(f"the body is not valid JSON: {e}") from None

    def _dispatch(self, method: str) -> None:
        path = self.path.split("?", 1)[0].rstrip("/") or "/"
        service = self.server.service
        route = _ROUTES.get((method, path))
        t0 = time.perf_counter()
        headers: Optional[Dict[str, str]] = None
        service.enter()
        try:
            if route is None:
                if method == "POST":
                    self._body()  # read (and drop) the body so the connection stays usable
                if path in _PATHS:
                    headers = {"Allow": ", ".join(m for (m, p) in _ROUTES if p == path)}
                    raise RequestError(f"{method} not allowed on {path}", 405)
                raise RequestError(f"no route {method} {path}; routes: "
                                   + ", ".join(f"{m} {p}" for m, p in _ROUTES), 404)
            name, takes_body = route
            body = self._body() if takes_body or method == "POST" else None
            result = getattr(service, name)(body) if takes_body else getattr(service, name)()
            if takes_body:
                result["took_ms"] = round((time.perf_counter() - t0) * 1000, 3)
            status, payload = 200, result
        except Exception as e:
            status = _status_of(e)
            if status >= 500:
                traceback.print_exc(file=sys.stderr)
            payload = {"error": str(e) or type(e).__name__, "type": type(e).__name__}
        finally:
            service.leave()
        try:
            self._send(status, payload, headers)
        except OSError:  # the client went away
            self.close_connection = True
        service.record(f"{method} {path}" if route else "other", time.perf_counter() - t0, status)

    def do_GET(self) -> None:  # noqa: N802 (the base class's naming)
        self._dispatch("GET")

    def do_POST(self) -> None:  # noqa: N802
        self._dispatch("POST")


class SearchHTTPServer(ThreadingHTTPServer):
    """A thread per connection; carries the :class:`SearchService` it serves."""

    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128

    def __init__(self, address: Tuple[str, int], service: SearchService, verbose: bool = False):
        self.service = service
        self.verbose = verbose
        super().__init__(address, SearchHandler)


def make_server(service: SearchService, host: str = "127.0.0.1", port: int = 8080,
                verbose: bool = False) -> SearchHTTPServer:
    """An HTTP server for ``service`` bound to ``host:port`` (port 0: any free port; the
    bound one is ``server.server_address[1]``). Run it with ``serve_forever()``."""
    return SearchHTTPServer((host, port), service, verbose)


# --------------------------------------------------------------------------------------
# Demo data
# --------------------------------------------------------------------------------------

LABELS = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"]


def demo_table(rows: int, dim: int = 64, seed: int = 0, start: int = 0) -> pa.Table:
    """``rows`` rows: ``id`` (int64, from ``start``), ``label`` (one of 8 words) and ``vec``
    (``dim`` float32 drawn from a standard normal)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    vec = rng.standard_normal((rows, dim), dtype=np.float32)
    ids = np.arange(start, start + rows, dtype=np.int64)
    return pa.table({
        "id": pa.array(ids),
        "label": pa.array([LABELS[i % len(LABELS)] for i in range(start, start + rows)]),
        "vec": pa.FixedSizeListArray.from_arrays(pa.array(vec.ravel()), dim),
    })


def build_demo_dataset(uri: str, rows: int = 5000, dim: int = 64, num_partitions: int = 16,
                       num_sub_vectors: int = 16, seed: int = 0) -> "lancelet.LanceDataset":
    """Writes :func:`demo_table` to ``uri`` and builds an IVF_PQ index on ``vec``."""
    step = 50_000
    ds = None
    for start in range(0, rows, step):
        t = demo_table(min(step, rows - start), dim, seed + start, start)
        ds = lancelet.write_dataset(t, uri, mode="create" if start == 0 else "append")
    assert ds is not None
    ds = lancelet.dataset(uri)
    ds.create_index("vec", "IVF_PQ", num_partitions=num_partitions, num_sub_vectors=num_sub_vectors)
    return ds


# --------------------------------------------------------------------------------------
# CLI
# --------------------------------------------------------------------------------------


def main(argv: Optional[List[str]] = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("uri", nargs="?", help="the dataset to serve (omit with --demo)")
    ap.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1; there is no auth)")
    ap.add_argument("--port", type=int, default=8080, help="port (0: any free port; the bound one is printed)")
    ap.add_argument("--reload-every", type=float, default=None, metavar="SECONDS",
                    help="reopen the latest version every SECONDS")
    ap.add_argument("--column", default=None, help="the vector column (default: the indexed one)")
    ap.add_argument("--columns", default=None,
                    help="comma-separated columns returned by default (default: all but the vector)")
    ap.add_argument("--max-k", type=int, default=1000)
    ap.add_argument("--demo", action="store_true", help="serve a new dataset of random 64-dim vectors "
                    "(with an IVF_PQ index) in a temporary directory, removed on exit")
    ap.add_argument("--demo-rows", type=int, default=5000)
    ap.add_argument("--verbose", action="store_true", help="log every request to stderr")
    a = ap.parse_args(argv)
    if (a.uri is None) == (not a.demo):
        ap.error("give a dataset URI, or --demo")

    demo_dir = None
    uri = a.uri
    if a.demo:
        demo_dir = tempfile.mkdtemp(prefix="lancelet-search-demo-")
        uri = os.path.join(demo_dir, "vectors.lance")
        t0 = time.perf_counter()
        build_demo_dataset(uri, rows=a.demo_rows)
        print(f"demo: {a.demo_rows:,} random 64-dim vectors with an IVF_PQ index at {uri} "
              f"({time.perf_counter() - t0:.1f}s)", flush=True)
    try:
        service = SearchService(uri, column=a.column, max_k=a.max_k,
                                default_columns=a.columns.split(",") if a.columns else None)
        server = make_server(service, a.host, a.port, a.verbose)
        reloader = Reloader(service, a.reload_every).start() if a.reload_every else None

        def stop(signum: int, frame: Any) -> None:
            threading.Thread(target=server.shutdown, daemon=True).start()

        signal.signal(signal.SIGTERM, stop)
        host, port = server.server_address[:2]
        print(f"serving {uri} (version {service.dataset.version}, column {service.column!r}, dim {service.dim}) "
              f"on http://{host}:{port}", flush=True)
        if a.demo:
            print(f"try: curl -s -XPOST http://{host}:{port}/nearest "
                  f"-d \"{{\\\"q\\\": $(python3 -c 'print([0.5] * {service.dim})'), \\\"k\\\": 3}}\"", flush=True)
        try:
            server.serve_forever(poll_interval=0.2)
        except KeyboardInterrupt:
            pass
        finally:
            if reloader:
                reloader.stop()
            server.server_close()
            print("stopped", flush=True)
    finally:
        if demo_dir:
            shutil.rmtree(demo_dir, ignore_errors=True)


if __name__ == "__main__":
    main()
