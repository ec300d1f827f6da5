"""examples/search_service.py: the HTTP search service, run as a subprocess on loopback.

Every route's answers are checked against direct lancelet calls on the version the
response reports. The concurrency test searches from several client threads while
another process appends rows and rebuilds the index (``create_index(replace=True)``) and
the service reloads (``--reload-every`` plus explicit ``POST /reload``): every response
must be well-formed, a client's versions never go backwards, sampled results equal a
direct search of the version they report, and there are no errors.

All traffic goes to 127.0.0.1; every loop is bounded in count and time.
"""

from __future__ import annotations

import http.client
import importlib.util
import json
import os
import queue
import random
import re
import signal
import subprocess
import sys
import threading
import time
import zlib
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import numpy as np
import pytest

import lancelet

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "examples" / "search_service.py"
DIM = 64
BASE_ROWS = 3000


def _load_example():
    spec = importlib.util.spec_from_file_location("lancelet_search_service_example", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


example = _load_example()


class Service:
    """The service in a subprocess: started on a free loopback port (``--port 0``; the
    bound port is read from its first line), stopped with SIGTERM."""

    def __init__(self, args: List[str], log_path: Path, startup_timeout: float = 60.0):
        self.log_path = log_path
        self._log = open(log_path, "w")
        self.proc = subprocess.Popen(
            [sys.executable, str(SCRIPT), *args, "--host", "127.0.0.1", "--port", "0"],
            stdout=subprocess.PIPE, stderr=self._log, text=True, cwd=str(ROOT))
        self.lines: "queue.Queue[Optional[str]]" = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self.port = None
        self.banner: List[str] = []
        deadline = time.monotonic() + startup_timeout
        while self.port is None:
            try:
                line = self.lines.get(timeout=max(0.01, deadline - time.monotonic()))
            except queue.Empty:
                line = None
            if line is None:
                self.stop()
                raise AssertionError(f"the service did not start: {self.stderr()}")
            self.banner.append(line)
            m = re.search(r" on http://127\.0\.0\.1:(\d+)$", line.rstrip())
            if m:
                self.port = int(m.group(1))

    def _read(self) -> None:
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def stderr(self) -> str:
        self._log.flush()
        return self.log_path.read_text()

    def connect(self) -> "Client":
        return Client(self.port)

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            rc = self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            rc = self.proc.wait(timeout=20)
        self._reader.join(timeout=5)
        self.proc.stdout.close()
        self._log.close()
        return rc


class Client:
    """One keep-alive HTTP/1.1 connection to the service."""

    def __init__(self, port: int):
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)

    def call(self, method: str, path: str, body: Any = None, raw: Optional[bytes] = None) -> Tuple[int, Any]:
        data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
        headers = {"Content-Type": "application/json"} if data is not None else {}
        self.conn.request(method, path, body=data, headers=headers)
        resp = self.conn.getresponse()
        payload = resp.read()
        assert resp.getheader("Content-Type") == "application/json"
        return resp.status, json.loads(payload)

    def close(self) -> None:
        self.conn.close()


def _build(uri: str, rows: int = BASE_ROWS) -> None:
    example.build_demo_dataset(uri, rows=rows, num_partitions=16, num_sub_vectors=8, seed=11)


def _direct_nearest(ds, body: Dict[str, Any]) -> List[Dict[str, Any]]:
    """What the service should answer for a /nearest ``body``, by a direct lancelet call."""
    nearest = {"column": "vec", "q": np.asarray(body["q"], dtype=np.float32), "k": body.get("k", 10)}
    for key in ("nprobes", "refine_factor"):
        if key in body:
            nearest[key] = body[key]
    kwargs: Dict[str, Any] = {"columns": body.get("columns", ["id", "label"])}
    if "filter" in body:
        kwargs["filter"] = body["filter"]
        kwargs["prefilter"] = body.get("prefilter", True)
    return ds.to_table(nearest=nearest, **kwargs).to_pylist()


def _query(rng: random.Random) -> List[float]:
    return [rng.gauss(0.0, 1.0) for _ in range(DIM)]


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """A 3000-row dataset with an IVF_PQ index, and the service over it (no auto reload)."""
    work = tmp_path_factory.mktemp("search_service")
    uri = str(work / "vectors.lance")
    _build(uri)
    svc = Service([uri], work / "service.log")
    try:
        yield uri, svc
    finally:
        assert svc.stop() == 0, svc.stderr()


@pytest.fixture
def client(served):
    c = served[1].connect()
    try:
        yield c
    finally:
        c.close()


def test_health_and_stats(served, client):
    uri, _ = served
    ds = lancelet.dataset(uri)
    status, body = client.call("GET", "/health")
    assert (status, body) == (200, {"status": "ok", "version": ds.version})

    status, before = client.call("GET", "/stats")
    assert status == 200
    assert before["version"] == ds.version and before["latest_version"] == ds.latest_version
    assert before["rows"] == ds.count_rows() == BASE_ROWS
    assert (before["column"], before["dim"]) == ("vec", DIM)
    assert [i["name"] for i in before["indices"]] == [i["name"] for i in ds.list_indices()]
    assert before["indices"][0]["type"] == "IVF_PQ"

    q = _query(random.Random(1))
    for _ in range(3):
        assert client.call("POST", "/nearest", {"q": q})[0] == 200
    _, after = client.call("GET", "/stats")
    n0 = before["routes"].get("POST /nearest", {}).get("count", 0)
    assert after["routes"]["POST /nearest"]["count"] == n0 + 3
    lat = after["routes"]["POST /nearest"]["latency_ms"]
    assert 0 < lat["p50"] <= lat["p99"] <= lat["max"]
    assert after["routes"]["GET /stats"]["count"] >= 1


@pytest.mark.parametrize("extra", [
    {},
    {"k": 1},
    {"k": 25, "nprobes": 4},
    {"k": 10, "nprobes": 16, "columns": ["id"]},
    {"k": 7, "columns": ["id", "label", "vec"]},
    {"k": 10, "filter": "label = 'bravo'"},
    {"k": 10, "filter": "id < 500 AND label != 'alpha'", "prefilter": True, "nprobes": 8},
    {"k": 10, "filter": "label = 'charlie'", "prefilter": False},
    {"k": 5, "refine_factor": 4},
    {"k": 10, "columns": []},
], ids=lambda e: ",".join(e) or "defaults")
def test_nearest_matches_library(served, client, extra):
    uri, _ = served
    rng = random.Random(zlib.crc32(json.dumps(extra, sort_keys=True).encode()))
    for _ in range(3):
        body = {"q": _query(rng), **extra}
        status, resp = client.call("POST", "/nearest", body)
        assert status == 200, resp
        assert set(resp) == {"rows", "version", "took_ms"}
        ds = lancelet.dataset(uri).checkout_version(resp["version"])
        expected = _direct_nearest(ds, body)
        assert resp["rows"] == expected
        assert len(resp["rows"]) == (extra.get("k", 10) if "filter" not in extra or extra.get("prefilter", True)
                                     else len(expected))
        assert all(set(r) == set(extra.get("columns", ["id", "label"])) | {"_distance"} for r in resp["rows"])


def test_take_matches_library(served, client):
    uri, _ = served
    rng = random.Random(5)
    for columns in (None, ["id"], ["label", "vec", "id"]):
        idx = [rng.randrange(BASE_ROWS) for _ in range(50)] + [0, 0, BASE_ROWS - 1]
        body = {"indices": idx} if columns is None else {"indices": idx, "columns": columns}
        status, resp = client.call("POST", "/take", body)
        assert status == 200, resp
        ds = lancelet.dataset(uri).checkout_version(resp["version"])
        assert resp["rows"] == ds.take(idx, columns=columns or ["id", "label"]).to_pylist()
    status, resp = client.call("POST", "/take", {"indices": []})
    assert (status, resp["rows"]) == (200, [])


def test_errors_are_json_and_keep_the_connection(served, client):
    q = _query(random.Random(2))
    cases = [
        ("POST", "/nearest", {"q": q[:10]}, 400, "64"),
        ("POST", "/nearest", {"q": ["x"] * DIM}, 400, "finite numbers"),
        ("POST", "/nearest", {"q": q, "k": 0}, 400, "'k'"),
        ("POST", "/nearest", {"q": q, "k": 10**6}, 400, "at most"),
        ("POST", "/nearest", {"q": q, "nprobes": "many"}, 400, "nprobes"),
        ("POST", "/nearest", {"q": q, "colums": ["id"]}, 400, "unknown key"),
        ("POST", "/nearest", {"q": q, "filter": "no_such = 1"}, 400, "no_such"),
        ("POST", "/nearest", {"q": q, "columns": ["nope"]}, 400, "nope"),
        ("POST", "/nearest", [1, 2], 400, "JSON object"),
        ("POST", "/take", {"indices": [BASE_ROWS + 5]}, 400, "out of range"),
        ("POST", "/take", {"indices": [-1]}, 400, "non-negative"),
        ("POST", "/take", {"indices": "0"}, 400, "non-negative"),
        ("GET", "/nearest", None, 405, "not allowed"),
        ("GET", "/nope", None, 404, "no route"),
        ("POST", "/nope", {"a": 1}, 404, "no route"),
    ]
    for method, path, body, want, text in cases:
        status, resp = client.call(method, path, body)
        assert status == want, (method, path, body, resp)
        assert text in resp["error"], resp
    status, resp = client.call("POST", "/nearest", raw=b"{not json")
    assert status == 400 and "not valid JSON" in resp["error"]
    # the same connection still answers
    assert client.call("POST", "/nearest", {"q": q, "k": 3})[0] == 200
    _, stats = client.call("GET", "/stats")
    assert stats["routes"]["POST /nearest"]["errors"] >= 10
    assert all(r["server_errors"] == 0 for r in stats["routes"].values())


def test_reload_route(tmp_path):
    uri = str(tmp_path / "vectors.lance")
    _build(uri, rows=1000)
    svc = Service([uri], tmp_path / "service.log")
    c = svc.connect()
    try:
        v0 = lancelet.dataset(uri).version
        assert c.call("POST", "/reload")[1] == {"version": v0, "previous_version": v0, "changed": False}

        writer = lancelet.dataset(uri)
        writer.insert(example.demo_table(200, seed=99, start=1000))
        v1 = writer.version
        assert v1 > v0
        q = _query(random.Random(3))
        status, resp = c.call("POST", "/nearest", {"q": q, "k": 5})
        assert (status, resp["version"]) == (200, v0), "no reload yet: still the old version"
        status, resp = c.call("POST", "/take", {"indices": [1100]})
        assert status == 400, "row 1100 does not exist in the version served"

        assert c.call("POST", "/reload")[1] == {"version": v1, "previous_version": v0, "changed": True}
        assert c.call("GET", "/health")[1]["version"] == v1
        body = {"q": q, "k": 5, "columns": ["id", "label"]}
        status, resp = c.call("POST", "/nearest", body)
        assert (status, resp["version"]) == (200, v1)
        assert resp["rows"] == _direct_nearest(lancelet.dataset(uri), body)
        status, resp = c.call("POST", "/take", {"indices": [1100, 0]})
        assert resp["rows"] == [{"id": 1100, "label": example.LABELS[1100 % 8]}, {"id": 0, "label": "alpha"}]
        _, stats = c.call("GET", "/stats")
        assert (stats["version"], stats["rows"], stats["reloads"]) == (v1, 1200, 2)
    finally:
        c.close()
        assert svc.stop() == 0, svc.stderr()


def test_demo_mode(tmp_path):
    svc = Service(["--demo", "--demo-rows", "1500"], tmp_path / "service.log")
    c = svc.connect()
    try:
        demo = re.search(r" at (\S+\.lance) \(", svc.banner[0]).group(1)
        ds = lancelet.dataset(demo)
        assert ds.count_rows() == 1500 and ds.list_indices()[0]["type"] == "IVF_PQ"
        body = {"q": _query(random.Random(4)), "k": 4, "nprobes": 16}
        status, resp = c.call("POST", "/nearest", body)
        assert status == 200 and resp["rows"] == _direct_nearest(ds, body)
    finally:
        c.close()
        assert svc.stop() == 0, svc.stderr()
    assert not os.path.exists(demo), "the demo dataset is removed on exit"


WRITER = r"""
import sys, time
sys.path.insert(0, sys.argv[1])
import lancelet
from search_service import demo_table
uri, rounds, start = sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
for r in range(rounds):
    ds = lancelet.dataset(uri)
    ds.insert(demo_table(300, seed=1000 + r, start=start + 300 * r))
    print("appended", ds.version, flush=True)
    time.sleep(0.25)
    ds = lancelet.dataset(uri)
    ds.create_index("vec", "IVF_PQ", num_partitions=16, num_sub_vectors=8, replace=True)
    print("reindexed", ds.version, flush=True)
    time.sleep(0.25)
"""

#: The request shapes the concurrent clients send (``q`` added per request).
VARIANTS = [
    {"k": 10},
    {"k": 10, "nprobes": 4, "columns": ["id"]},
    {"k": 8, "filter": "label = 'bravo'"},
    {"k": 12, "nprobes": 16, "columns": ["id", "label"], "filter": "id % 3 = 0"},
]


def test_concurrent_search_during_appends_reindexing_and_reloads(tmp_path):
    uri = str(tmp_path / "vectors.lance")
    _build(uri)
    v_start = lancelet.dataset(uri).version
    svc = Service([uri, "--reload-every", "0.05"], tmp_path / "service.log")
    n_clients, rounds = 4, 4
    done = threading.Event()
    results: List[List[Tuple[Dict[str, Any], int, Any]]] = [[] for _ in range(n_clients)]
    failures: List[str] = []

    def client_loop(i: int) -> None:
        rng = random.Random(100 + i)
        c = svc.connect()
        try:
            deadline = time.monotonic() + 120
            after_done = 0
            while after_done < 20 and len(results[i]) < 20_000 and time.monotonic() < deadline:
                if done.is_set():
                    after_done += 1
                body = {"q": _query(rng), **rng.choice(VARIANTS)}
                status, resp = c.call("POST", "/nearest", body)
                results[i].append((body, status, resp))
                time.sleep(rng.random() * 0.004)  # random gaps: varied interleavings, bounded volume
        except Exception as e:  # recorded, and the test fails below
            failures.append(f"client {i}: {e!r}")
        finally:
            c.close()

    threads = [threading.Thread(target=client_loop, args=(i,)) for i in range(n_clients)]
    for t in threads:
        t.start()
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(SCRIPT.parent), uri, str(rounds), str(BASE_ROWS)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    reloads = []
    admin = svc.connect()
    try:
        writer_deadline = time.monotonic() + 100
        while writer.poll() is None:  # explicit reloads, concurrent with the periodic ones
            assert time.monotonic() < writer_deadline, "the writer process did not finish"
            status, resp = admin.call("POST", "/reload")
            assert status == 200, resp
            reloads.append(resp)
            time.sleep(0.1)
        out, err = writer.communicate(timeout=60)
        assert writer.returncode == 0, err
        final = lancelet.dataset(uri).version
        assert final == v_start + 2 * rounds, out
        deadline = time.monotonic() + 10
        while admin.call("GET", "/health")[1]["version"] != final:
            assert time.monotonic() < deadline, "the service never reloaded the final version"
            time.sleep(0.05)
        done.set()
        for t in threads:
            t.join(timeout=60)
        _, stats = admin.call("GET", "/stats")
    finally:
        done.set()
        if writer.poll() is None:
            writer.kill()
            writer.communicate()
        admin.close()
        rc = svc.stop()
    assert rc == 0, svc.stderr()
    assert not failures, failures
    assert all(not t.is_alive() for t in threads)

    seen_versions = set()
    total = 0
    for i, seq in enumerate(results):
        assert len(seq) > 20, f"client {i} made only {len(seq)} requests"
        last = 0
        for body, status, resp in seq:
            total += 1
            assert status == 200, resp
            assert set(resp) == {"rows", "version", "took_ms"}, resp
            v = resp["version"]
            assert isinstance(v, int) and v_start <= v <= final
            assert v >= last, f"client {i}: version went back from {last} to {v}"
            last = v
            seen_versions.add(v)
            rows = resp["rows"]
            k = body["k"]
            assert 0 < len(rows) <= k and ("filter" in body or len(rows) == k)
            cols = set(body.get("columns", ["id", "label"])) | {"_distance"}
            assert all(set(r) == cols for r in rows)
            d = [r["_distance"] for r in rows]
            assert d == sorted(d)
            if "filter" in body and body["filter"].startswith("label"):
                assert all(r.get("label", "bravo") == "bravo" for r in rows)
        assert seq[-1][2]["version"] == final, f"client {i} never saw the final version"
    assert len(seen_versions) >= 3, f"searches saw only versions {sorted(seen_versions)}"
    assert any(r["changed"] for r in reloads) or stats["reloads"] > len(reloads)
    assert all(r["server_errors"] == 0 and r["errors"] == 0 for r in stats["routes"].values()), stats["routes"]

    # Results equal a direct search on the version they report. A torn read (a search on
    # one version reported as another) can only happen around a reload, so check every
    # response within 8 requests of a version change in its client's sequence, the first
    # few of every version, and a random sample of the rest.
    rng = random.Random(9)
    picked = set()
    for i, seq in enumerate(results):
        versions = [resp["version"] for _, _, resp in seq]
        for j in range(1, len(seq)):
            if versions[j] != versions[j - 1]:
                picked.update((i, x) for x in range(max(0, j - 8), min(len(seq), j + 8)))
    by_version: Dict[int, List[Tuple[int, int]]] = {}
    for i, seq in enumerate(results):
        for j, (_, _, resp) in enumerate(seq):
            by_version.setdefault(resp["version"], []).append((i, j))
    for group in by_version.values():
        picked.update(rng.sample(group, min(3, len(group))))
    everything = [(i, j) for i, seq in enumerate(results) for j in range(len(seq))]
    picked.update(rng.sample(everything, min(300, len(everything))))
    base = lancelet.dataset(uri)
    opened: Dict[int, Any] = {}
    for i, j in sorted(picked):
        body, _, resp = results[i][j]
        v = resp["version"]
        ds = opened.setdefault(v, base.checkout_version(v))
        assert resp["rows"] == _direct_nearest(ds, body), (f"client {i}, request {j}: the rows are not those of "
                                                           f"version {v}", body)
    sample = picked
    print(f"{total} searches by {n_clients} clients over versions {sorted(seen_versions)}; "
          f"{len(sample)} checked against direct searches")
