"""Helpers shared by tests and benches: a local S3 server, a killable writer process.

Tests import it directly (pytest puts ``tests/`` on ``sys.path``); benches add ``tests/``
to ``sys.path`` first.
"""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import time
import urllib.request
from typing import Any, Dict, List, Tuple


def free_port() -> int:
    """A TCP port on loopback nobody listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_s3_server(bucket: str) -> Tuple[subprocess.Popen, str, Any]:
    """Starts moto's S3 server on a free loopback port with ``bucket`` created; returns the
    process (stop it with ``stop``), its endpoint and a boto3 client."""
    import boto3

    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
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
