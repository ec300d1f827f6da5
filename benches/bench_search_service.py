"""Load test of examples/search_service.py on loopback: throughput, latency, server memory.

Builds (or reuses, with ``--uri``) a dataset of ``--rows`` random ``--dim``-dim float32
vectors with an IVF_PQ index (``--partitions`` x ``--sub-vectors``), starts the service in a
subprocess on a free 127.0.0.1 port, then:

* for each client level (``--levels``, default 1,2,4,8 threads, one keep-alive connection
  each) sends ``--requests`` ``POST /nearest`` requests in all (split evenly between the
  threads), ``--repeat`` times, and prints the run of median throughput: req/s, p50/p99
  latency and the server's CPU use (above 100%: searches ran on both cores at once, the
  native search releasing the GIL); the errors column counts all runs;
* sends ``--rss-queries`` more requests (``--rss-threads`` threads) while sampling the
  server's RSS (psutil) and prints the first, last and largest sample.

Every request must answer 200 with ``k`` rows: any error fails the run (exit 1). All
traffic goes to 127.0.0.1; the request counts are fixed and every call has a timeout, so
the run stops by itself.

    python benches/bench_search_service.py [--rows 100000] [--uri bench_vectors.lance]
"""

from __future__ import annotations

import argparse
import http.client
import importlib.util
import json
import os
import queue
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import List, Tuple

import numpy as np
import psutil

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "examples" / "search_service.py"
TIMEOUT = 30.0  # seconds, per HTTP call


def load_example():
    spec = importlib.util.spec_from_file_location("lancelet_search_service_example", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def start_service(uri: str) -> Tuple[subprocess.Popen, int]:
    """The service on a free loopback port; its stdout is read until it prints the port."""
    proc = subprocess.Popen([sys.executable, str(SCRIPT), uri, "--host", "127.0.0.1", "--port", "0"],
                            stdout=subprocess.PIPE, text=True)
    lines: "queue.Queue" = queue.Queue()
    threading.Thread(target=lambda: [lines.put(x) for x in proc.stdout] + [lines.put(None)], daemon=True).start()
    deadline = time.monotonic() + 120
    while True:
        line = lines.get(timeout=max(0.01, deadline - time.monotonic()))
        if line is None:
            raise SystemExit("the service did not start")
        m = re.search(r" on http://127\.0\.0\.1:(\d+)$", line.rstrip())
        if m:
            return proc, int(m.group(1))


def stop_service(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=20)


def run_level(port: int, bodies: List[bytes], threads: int, k: int) -> dict:
    """``len(bodies)`` requests split between ``threads`` keep-alive clients."""
    latencies: List[List[float]] = [[] for _ in range(threads)]
    errors: List[str] = []
    share = [bodies[i::threads] for i in range(threads)]
    start = threading.Barrier(threads + 1)

    def client(i: int) -> None:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=TIMEOUT)
        try:
            start.wait()
            for body in share[i]:
                t0 = time.perf_counter()
                try:
                    conn.request("POST", "/nearest", body=body, headers={"Content-Type": "application/json"})
                    resp = conn.getresponse()
                    payload = resp.read()
                    dt = time.perf_counter() - t0
                    if resp.status != 200:
                        errors.append(f"HTTP {resp.status}: {payload[:200]!r}")
                        continue
                    if len(json.loads(payload)["rows"]) != k:
                        errors.append("wrong number of rows")
                        continue
                    latencies[i].append(dt)
                except Exception as e:  # counted as an error; reconnect and go on
                    errors.append(repr(e))
                    conn.close()
                    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=TIMEOUT)
        finally:
            conn.close()

    ts = [threading.Thread(target=client, args=(i,)) for i in range(threads)]
    for t in ts:
        t.start()
    start.wait()
    t0 = time.perf_counter()
    for t in ts:
        t.join()
    wall = time.perf_counter() - t0
    lat = sorted(x for per in latencies for x in per)
    return {
        "wall": wall, "ok": len(lat), "errors": errors,
        "rps": len(lat) / wall,
        "p50": lat[len(lat) // 2] * 1000 if lat else float("nan"),
        "p99": lat[min(len(lat) - 1, int(len(lat) * 0.99))] * 1000 if lat else float("nan"),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--dim", type=int, default=64)
    ap.add_argument("--partitions", type=int, default=64)
    ap.add_argument("--sub-vectors", type=int, default=16)
    ap.add_argument("--uri", default=None, help="dataset path: reused if it exists (with an IVF_PQ index), "
                    "else built there and kept (default: a temporary directory, removed)")
    ap.add_argument("--levels", default="1,2,4,8")
    ap.add_argument("--requests", type=int, default=500, help="requests per level, in all")
    ap.add_argument("--repeat", type=int, default=3, help="runs per level; the one of median throughput "
                    "is shown (the cores are shared with whatever else runs)")
    ap.add_argument("--rss-queries", type=int, default=10_000)
    ap.add_argument("--rss-threads", type=int, default=4)
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--nprobes", type=int, default=20)
    a = ap.parse_args()

    import lancelet

    example = load_example()
    tmp = None
    uri = a.uri
    if uri is None:
        tmp = tempfile.mkdtemp(prefix="bench_search_service_")
        uri = os.path.join(tmp, "vectors.lance")
    proc = None
    failed = False
    try:
        if os.path.exists(uri) and any(i["type"] == "IVF_PQ" for i in lancelet.dataset(uri).list_indices()):
            print(f"reusing {uri}")
        else:
            shutil.rmtree(uri, ignore_errors=True)
            t0 = time.perf_counter()
            example.build_demo_dataset(uri, rows=a.rows, dim=a.dim, num_partitions=a.partitions,
                                       num_sub_vectors=a.sub_vectors)
            print(f"built {a.rows:,} x {a.dim} vectors + IVF_PQ ({a.partitions} partitions, {a.sub_vectors} "
                  f"sub-vectors) in {time.perf_counter() - t0:.1f}s")
        ds = lancelet.dataset(uri)
        dim = ds.schema.field("vec").type.list_size
        print(f"dataset: {ds.count_rows():,} rows, version {ds.version}, dim {dim}; k={a.k}, nprobes={a.nprobes}; "
              f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} (other processes share the cores)")

        rng = np.random.default_rng(123)

        def bodies(n: int) -> List[bytes]:
            qs = rng.standard_normal((n, dim), dtype=np.float32)
            return [json.dumps({"q": q.tolist(), "k": a.k, "nprobes": a.nprobes}).encode() for q in qs]

        # The library alone, in this process: what one search costs without HTTP.
        direct = []
        for q in rng.standard_normal((200, dim), dtype=np.float32):
            t0 = time.perf_counter()
            ds.to_table(nearest={"column": "vec", "q": q, "k": a.k, "nprobes": a.nprobes}, columns=["id", "label"])
            direct.append(time.perf_counter() - t0)
        print(f"direct library search (no HTTP, 1 thread): p50 {statistics.median(direct) * 1000:.2f} ms")

        proc, port = start_service(uri)
        server = psutil.Process(proc.pid)
        run_level(port, bodies(100), 2, a.k)  # warm-up

        print(f"\n{'clients':>7} {'requests':>9} {'req/s':>9} {'p50 ms':>8} {'p99 ms':>8} {'server CPU':>11} {'errors':>7}")
        for threads in [int(x) for x in a.levels.split(",")]:
            runs = []
            for _ in range(a.repeat):
                cpu0 = sum(server.cpu_times()[:2])
                r = run_level(port, bodies(a.requests), threads, a.k)
                r["cpu"] = (sum(server.cpu_times()[:2]) - cpu0) / r["wall"] * 100
                runs.append(r)
            errors = [e for r in runs for e in r["errors"]]
            r = sorted(runs, key=lambda r: r["rps"])[len(runs) // 2]
            cpu = r["cpu"]
            print(f"{threads:>7} {a.requests:>9} {r['rps']:>9.0f} {r['p50']:>8.2f} {r['p99']:>8.2f} {cpu:>10.0f}% "
                  f"{len(errors):>7}", flush=True)
            if errors:
                failed = True
                print("  first errors:", errors[:3])

        samples: List[Tuple[float, int]] = []
        stop = threading.Event()

        def sample() -> None:
            t0 = time.perf_counter()
            while True:
                samples.append((time.perf_counter() - t0, server.memory_info().rss))
                if stop.wait(0.1):
                    break
            samples.append((time.perf_counter() - t0, server.memory_info().rss))

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        r = run_level(port, bodies(a.rss_queries), a.rss_threads, a.k)
        stop.set()
        sampler.join()
        rss = [s[1] / 2**20 for s in samples]
        print(f"\nRSS over {a.rss_queries:,} queries ({a.rss_threads} clients, {r['wall']:.1f}s, {r['rps']:.0f} req/s, "
              f"p50 {r['p50']:.2f} ms, p99 {r['p99']:.2f} ms, {len(r['errors'])} errors), "
              f"{len(samples)} samples: first {rss[0]:.1f} MiB, last {rss[-1]:.1f} MiB, max {max(rss):.1f} MiB "
              f"(last - first: {rss[-1] - rss[0]:+.1f} MiB)")
        print("  mean of each quarter of the run (MiB): "
              + ", ".join(f"{part.mean():.1f}" for part in np.array_split(np.array(rss), 4) if len(part)))
        if r["errors"]:
            failed = True
            print("  first errors:", r["errors"][:3])

        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=TIMEOUT)
        conn.request("GET", "/stats")
        stats = json.loads(conn.getresponse().read())
        conn.close()
        served = sum(v["count"] for v in stats["routes"].values())
        bad = sum(v["errors"] for v in stats["routes"].values())
        print(f"server /stats: {served:,} requests, {bad} errors, {stats['threads']} threads; "
              f"load average now {os.getloadavg()[0]:.1f}")
        failed = failed or bad > 0
    finally:
        if proc is not None:
            stop_service(proc)
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)
    if failed:
        print("FAILED: some requests had errors")
        sys.exit(1)
    print("zero errors")


if __name__ == "__main__":
    main()
