"""Peak RSS of a child process, from ``os.wait4``'s rusage (shared by the benches).

    out, usage = run_child([sys.executable, script, "--child", ...])
    peak_mb = maxrss_mb(usage)

``ru_maxrss`` is the child's high-water mark of resident memory (kilobytes on Linux, bytes
on macOS). One pitfall: on Linux the child starts as a copy of the parent (fork / vfork),
and ``exec`` carries the parent's high-water mark over into the child's ``ru_maxrss``; a
child of a parent that has held 1 GiB reports at least 1 GiB. So keep the parent small
(build big inputs in a child too); ``run_child`` warns when the child's peak is not above
the parent's own, as its number is then the parent's.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import warnings
from typing import List, Tuple


def run_child(argv: List[str], what: str = "child") -> Tuple[str, "os.struct_rusage"]:
    """Runs ``argv``, returns its stdout and its rusage; raises if it exits non-zero."""
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True)
    assert p.stdout is not None
    with p.stdout:
        out = p.stdout.read()
    _, status, usage = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        raise RuntimeError(f"{what} failed ({p.returncode})")
    parent = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    if usage.ru_maxrss <= parent:
        warnings.warn(f"{what}: peak RSS {maxrss_mb(usage):.0f} MiB is not above the parent's own peak "
                      f"({parent / _SCALE:.0f} MiB), so it may be the parent's "
                      "(exec inherits the high-water mark); keep the parent small", stacklevel=2)
    return out, usage


_SCALE = 1024 * 1024 if sys.platform == "darwin" else 1024  # ru_maxrss units per MiB


def maxrss_mb(usage: "os.struct_rusage") -> float:
    """``ru_maxrss`` in MiB (Linux reports kilobytes, macOS bytes)."""
    return usage.ru_maxrss / _SCALE
