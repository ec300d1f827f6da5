"""The namespace REST server against bad requests: over-long ids, deeply nested JSON,
malformed or oversized Content-Length, chunked bodies, internal failures. Each is answered
(400/411/413/500) with a body that names no server path, and the server keeps serving.

Every test runs a real server on 127.0.0.1 (port 0) and speaks raw HTTP to it.
"""

from __future__ import annotations

import http.client
import json
import os
import re
import socket
import subprocess
import sys
import time
from typing import Dict, Optional, Tuple

import pyarrow as pa
import pytest

ln = pytest.importorskip("lance_namespace")

from lancelet.namespace import DirectoryNamespace, RestAdapter  # noqa: E402

pytestmark = pytest.mark.lancelet_only


def _ipc(table: pa.Table) -> bytes:
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as w:
        w.write_table(table)
    return sink.getvalue().to_pybytes()


def _request(
    port: int, method: str, path: str, body: bytes = b"", headers: Optional[Dict[str, str]] = None
) -> Tuple[int, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.request(method, path, body=body, headers=headers or {})
        resp = conn.getresponse()
        return resp.status, resp.read()
    finally:
        conn.close()


def _raw(port: int, head: bytes, body: bytes = b"") -> bytes:
    """Sends ``head`` (request line and headers, without the blank line) and ``body`` on a
    fresh socket; returns everything the server sends until it closes (or 10 s pass)."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(head + b"\r\n\r\n" + body)
        chunks = []
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                chunk = sock.recv(65536)
            except socket.timeout:
                break
            if not chunk:
                break
            chunks.append(chunk)
            if b"\r\n\r\n" in b"".join(chunks):
                reply = b"".join(chunks)
                m = re.search(rb"(?i)content-length:\s*(\d+)", reply)
                if m and len(reply.split(b"\r\n\r\n", 1)[1]) >= int(m.group(1)):
                    break
        return b"".join(chunks)


def _status(reply: bytes) -> int:
    m = re.match(rb"HTTP/1\.[01] (\d{3}) ", reply)
    assert m, reply[:200]
    return int(m.group(1))


def _body(reply: bytes) -> dict:
    return json.loads(reply.split(b"\r\n\r\n", 1)[1])


def _no_root(text: bytes, root: str) -> None:
    for form in {root, os.path.realpath(root)}:
        assert form.encode() not in text, text[:500]


def _still_serving(port: int) -> None:
    status, body = _request(port, "GET", "/v1/namespace/%24/list")
    assert status == 200, body
    assert "namespaces" in json.loads(body)


@pytest.fixture
def served(tmp_path):
    root = str(tmp_path / "catalog")
    os.makedirs(root)
    with RestAdapter("dir", {"root": root}, port=0) as adapter:
        yield adapter.port, root


def test_a_table_id_too_long_for_the_filesystem_is_a_400_without_the_root(served):
    port, root = served
    long_id = "a" * 5000
    status, body = _request(port, "POST", f"/v1/table/{long_id}/declare", b"{}")
    assert status == 400, body
    assert json.loads(body)["code"] == int(ln.ErrorCode.INVALID_INPUT)
    _no_root(body, root)
    status, body = _request(port, "POST", f"/v1/table/{long_id}/create", _ipc(pa.table({"x": [1]})))
    assert status == 400, body
    _no_root(body, root)
    _still_serving(port)


def test_deeply_nested_json_is_a_400_and_the_connection_stays_usable(served):
    port, root = served
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        for body in (b"[" * 100_000 + b"]" * 100_000, b'{"a":' * 100_000 + b"1" + b"}" * 100_000):
            conn.request("POST", "/v1/table/t/describe", body=body, headers={"Content-Type": "application/json"})
            resp = conn.getresponse()
            payload = resp.read()
            assert resp.status == 400, payload
            assert "nested" in json.loads(payload)["error"]
            _no_root(payload, root)
        conn.request("GET", "/v1/namespace/%24/list")  # same connection
        resp = conn.getresponse()
        assert resp.status == 200 and "namespaces" in json.loads(resp.read())
    finally:
        conn.close()


@pytest.mark.parametrize("value", [b"abc", b"-5", b"1.5", b"0x10", b"12, 13"])
def test_a_malformed_content_length_is_answered_400(served, value):
    port, _ = served
    reply = _raw(port, b"POST /v1/table/t/describe HTTP/1.1\r\nHost: x\r\nContent-Length: " + value, b"{}")
    assert _status(reply) == 400, reply
    assert "Content-Length" in _body(reply)["error"]
    _still_serving(port)


def test_an_oversized_content_length_is_refused_413_before_reading(served):
    port, _ = served
    # 3 GiB announced, nothing sent: the reply comes at once.
    start = time.monotonic()
    reply = _raw(port, b"POST /v1/table/t/describe HTTP/1.1\r\nHost: x\r\nContent-Length: 3221225472")
    assert _status(reply) == 413, reply
    assert _body(reply)["code"] == int(ln.ErrorCode.INVALID_INPUT)
    assert b"connection: close" in reply.lower()
    assert time.monotonic() - start < 5
    # the same for a data route (its own, larger limit)
    reply = _raw(port, b"POST /v1/table/t/insert HTTP/1.1\r\nHost: x\r\nContent-Length: 3221225472")
    assert _status(reply) == 413, reply
    _still_serving(port)


def test_a_client_expecting_100_continue_hears_413_instead(served):
    port, _ = served
    reply = _raw(
        port, b"POST /v1/table/t/create HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 3221225472"
    )
    assert _status(reply) == 413, reply
    assert b"100 Continue" not in reply
    _still_serving(port)


def test_a_chunked_body_is_refused(served):
    port, _ = served
    reply = _raw(
        port, b"POST /v1/table/t/describe HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked", b"2\r\n{}\r\n0\r\n\r\n"
    )
    assert _status(reply) == 411, reply
    _still_serving(port)


def test_body_limits_are_configurable(tmp_path):
    root = str(tmp_path)
    with RestAdapter("dir", {"root": root}, port=0, max_body_bytes=1024, max_data_body_bytes=64 << 10) as adapter:
        port = adapter.port
        big_json = json.dumps({"id": ["t"], "padding": "x" * 2000}).encode()
        status, body = _request(port, "POST", "/v1/table/t/describe", big_json)
        assert status == 413, body
        # an IPC body above the JSON limit but within the data limit is taken
        table = pa.table({"x": list(range(1000))})
        data = _ipc(table)
        assert 1024 < len(data) < 64 << 10
        status, body = _request(port, "POST", "/v1/table/t/create", data)
        assert status == 200, body
        assert DirectoryNamespace(root=root).count_table_rows(ln.CountTableRowsRequest(id=["t"])).count == 1000
        # ... and one above the data limit is not
        status, body = _request(port, "POST", "/v1/table/t/insert", _ipc(pa.table({"x": list(range(20000))})))
        assert status == 413, body
        _still_serving(port)
    with pytest.raises(Exception, match="max_body_bytes"):
        RestAdapter("dir", {"root": root}, port=0, max_body_bytes=-1)


def test_the_default_json_limit_is_a_few_mib(served):
    port, _ = served
    reply = _raw(port, b"POST /v1/table/t/describe HTTP/1.1\r\nHost: x\r\nContent-Length: " + str(64 << 20).encode())
    assert _status(reply) == 413, reply


class _Failing(DirectoryNamespace):
    """describe_table fails unexpectedly; count_table_rows fails with a ValueError naming the root."""

    def describe_table(self, request):
        raise RuntimeError(f"disk on fire under {self.root}/t.lance")

    def count_table_rows(self, request):
        raise ValueError(f"bad value in {self.root}/t.lance")


def test_internal_errors_are_generic_and_no_error_names_the_root(tmp_path, capfd):
    root = str(tmp_path)
    with RestAdapter(_Failing(root=root), port=0) as adapter:
        status, body = _request(adapter.port, "POST", "/v1/table/t/describe", b"{}")
        assert status == 500, body
        reply = json.loads(body)
        assert reply["code"] == int(ln.ErrorCode.INTERNAL)
        assert "fire" not in reply["error"]
        _no_root(body, root)
        status, body = _request(adapter.port, "POST", "/v1/table/t/count_rows", b"{}")
        assert status == 400, body
        assert "bad value in" in json.loads(body)["error"]
        _no_root(body, root)
        _no_root(json.dumps(json.loads(body)).encode(), root)
        _still_serving(adapter.port)
    assert "disk on fire" in capfd.readouterr().err  # the details go to the server's log


def test_an_unknown_route_with_a_body_does_not_poison_the_connection(served):
    port, _ = served
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        # (were the body left unread, it would be taken for a second request, answered 404)
        conn.request("POST", "/v1/nothing/here", body=b"GET /v1/smuggled HTTP/1.1\r\nHost: x\r\n\r\n")
        resp = conn.getresponse()
        resp.read()
        assert resp.status == 404
        conn.request("GET", "/v1/namespace/%24/list")
        resp = conn.getresponse()
        assert resp.status == 200 and "namespaces" in json.loads(resp.read())
    finally:
        conn.close()


def test_the_cli_server_takes_body_limits(tmp_path):
    root = tmp_path / "catalog"
    root.mkdir()
    cmd = [sys.executable, "-m", "lancelet", "namespace", "serve", str(root), "--port", "0", "--max-body", "1KiB"]
    with subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as proc:
        try:
            line = proc.stdout.readline()
            m = re.search(r"http://127\.0\.0\.1:(\d+)", line)
            assert m, (line, proc.stderr.read() if proc.poll() is not None else "")
            port = int(m.group(1))
            status, body = _request(port, "POST", "/v1/table/t/describe", b"{" + b" " * 2048 + b"}")
            assert status == 413, body
            _still_serving(port)
        finally:
            proc.terminate()
            proc.wait(timeout=30)
    bad = subprocess.run(cmd[:-1] + ["lots"], capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr and "size" in bad.stderr
