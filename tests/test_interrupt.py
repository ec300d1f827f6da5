"""Ctrl-C interrupts a long blocking call (every call waits through one helper that runs
Python's signal handlers while it waits): a write of a large table, which leaves nothing
behind, and a scan consumed by pyarrow (``to_table``), whose batches arrive through the
Arrow C stream interface with no Python code running between them."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
import time

import pytest

pytestmark = pytest.mark.lancelet_only

CHILD = textwrap.dedent(
    """
    import os, sys
    import numpy as np, pyarrow as pa, lancelet
    mode, root = sys.argv[1], sys.argv[2]
    chunk = pa.record_batch({"a": np.arange(1_000_000, dtype=np.int64)})
    # Chunks sharing one buffer: a table of 100M rows that costs 8 MB of memory.
    table = pa.Table.from_batches([chunk] * 100)
    if mode == "scan":
        ds = lancelet.write_dataset(pa.Table.from_batches([chunk] * 10), root + "/t.lance")
    print("ready", flush=True)
    try:
        if mode == "write":
            lancelet.write_dataset(table, root + "/t.lance")
        else:
            for _ in range(1000):
                ds.to_table(filter="a % 7 = 3")
        print("finished", flush=True)
    except KeyboardInterrupt:
        left = 0
        if mode == "write":
            for sub in ("data", "_versions"):
                d = os.path.join(root, "t.lance", sub)
                left += len(os.listdir(d)) if os.path.exists(d) else 0
        print("interrupted", left, flush=True)
    """
)


@pytest.mark.parametrize("mode", ["write", "scan"])
def test_ctrl_c_interrupts_a_long_call(mode, tmp_path):
    with subprocess.Popen(
        [sys.executable, "-c", CHILD, mode, str(tmp_path)], stdout=subprocess.PIPE, text=True
    ) as proc:
        try:
            assert proc.stdout.readline().strip() == "ready"
            time.sleep(0.5)
            proc.send_signal(signal.SIGINT)
            out = proc.stdout.read().split()
            assert proc.wait(timeout=300) == 0
        finally:
            if proc.poll() is None:
                proc.kill()
    # An interrupted write removes the files it had written.
    assert out == ["interrupted", "0"], out
