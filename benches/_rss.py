"""Peak RSS of a child process (shared by the benches).

    out, usage = run_child([sys.executable, script, "--child", ...])
    peak_mb = maxrss_mb(usage)

``ru_maxrss`` from ``os.wait4`` is the child's high-water mark of resident memory (kilobytes
on Linux, bytes on macOS). One pitfall: on Linux the child starts as a copy of the parent
(fork / vfork), and ``exec`` carries the parent's high-water mark over into the child's
``ru_maxrss``: a child of a parent that has held 1 GiB reports at least 1 GiB. (A bench
that measured pylance first and lancelet after its parent had grown read 932 against 510 MiB
for an IVF_PQ build whose own peaks are 408 and 406-436 MiB.)

So a child that imports this module (the bench scripts run themselves as children) reports
its own peak when it exits: ``VmHWM`` of ``/proc/self/status``, which belongs to the memory
map that ``exec`` made fresh. ``run_child`` takes that line off the output and puts the
number in the rusage it returns. Where there is no ``/proc`` (macOS), ``ru_maxrss`` is used
and ``run_child`` warns when the child's peak is not above the parent's own.
"""

from __future__ import annotations

import atexit
import os
import resource
import subprocess
import sys
import warnings
from typing import List, Optional, Tuple


_MARK = "__own_peak_rss_kb__ "
_CHILD_ENV = "LANCELET_BENCH_RSS_CHILD"


def _own_peak_kb() -> Optional[int]:
    """This process's own peak RSS in KiB (``VmHWM``), or None without ``/proc``."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


if os.environ.get(_CHILD_ENV) == "1":
    # A child of run_child: its last line of output is its own peak, printed at exit.
    atexit.register(lambda: _own_peak_kb() is not None and print(f"{_MARK}{_own_peak_kb()}", flush=True))


def run_child(argv: List[str], what: str = "child") -> Tuple[str, "resource.struct_rusage"]:
    """Runs ``argv``, returns its stdout and its rusage; raises if it exits non-zero. When the
    child reported its own peak (see the module's doc), the rusage's ``ru_maxrss`` is that."""
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True, env={**os.environ, _CHILD_ENV: "1"})
    assert p.stdout is not None
    with p.stdout:
        out = p.stdout.read()
    _, status, usage = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        raise RuntimeError(f"{what} failed ({p.returncode})")
    lines = out.splitlines(keepends=True)
    own = [ln for ln in lines if ln.startswith(_MARK)]
    if own:
        out = "".join(ln for ln in lines if not ln.startswith(_MARK))
        fields = list(usage)
        fields[2] = int(own[-1][len(_MARK):])  # ru_maxrss, in KiB as Linux reports it
        return out, resource.struct_rusage(fields)
    parent = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    if usage.ru_maxrss <= parent:
        warnings.warn(f"{what}: peak RSS {maxrss_mb(usage):.0f} MiB is not above the parent's own peak "
                      f"({parent / _SCALE:.0f} MiB), so it may be the parent's "
                      "(exec inherits the high-water mark); keep the parent small", stacklevel=2)
    return out, usage


_SCALE = 1024 * 1024 if sys.platform == "darwin" else 1024  # ru_maxrss units per MiB


def maxrss_mb(usage: "resource.struct_rusage") -> float:
    """``ru_maxrss`` in MiB (Linux reports kilobytes, macOS bytes)."""
    return usage.ru_maxrss / _SCALE
