"""The test command's gates cannot pass by skipping: under ``CI=1`` (set by ``.ci/run``) a
suite that would skip because pylance or another test requirement is missing fails."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).parent

MODULE_SKIP = """
import pytest
oracle = pytest.importorskip("no_such_oracle_module")
def test_interop():
    pass
"""

TEST_SKIP = """
import pytest
def test_needs_it():
    pytest.importorskip("no_such_oracle_module")
def test_other_skip():
    pytest.skip("not about a missing module")
"""


PLAIN_SKIP = """
import pytest
def test_plain_skip():
    pytest.skip("Spark needs Java")
"""


def _run(tmp_path: Path, ci: bool) -> subprocess.CompletedProcess:
    shutil.copy(HERE / "conftest.py", tmp_path / "conftest.py")
    for name, source in (("test_module_skip.py", MODULE_SKIP), ("test_test_skip.py", TEST_SKIP),
                         ("test_plain_skip.py", PLAIN_SKIP)):
        (tmp_path / name).write_text(source)
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    if ci:
        env["CI"] = "1"
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rA", "-p", "no:cacheprovider", "--continue-on-collection-errors",
         "--rootdir", str(tmp_path), str(tmp_path)],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120,
    )


def test_a_missing_module_skips_locally_and_fails_under_ci(tmp_path):
    local = _run(tmp_path, ci=False)
    assert local.returncode == 0, local.stdout + local.stderr
    assert "4 skipped" in local.stdout, local.stdout
    ci = _run(tmp_path, ci=True)
    assert ci.returncode != 0, ci.stdout + ci.stderr
    out = ci.stdout
    assert "ERROR test_module_skip.py - CI=1: a test dependency is missing" in out, out
    assert "FAILED test_test_skip.py::test_needs_it - CI=1: a test dependency is missing" in out, out
    assert "no_such_oracle_module" in out
    # A missing Java fails too: the Spark suites cannot pass unnoticed on a runner without it.
    assert "FAILED test_plain_skip.py::test_plain_skip - CI=1: a test dependency is missing" in out, out
    assert "Spark needs Java" in out, out
    # Skips for other reasons stay skips.
    assert "SKIPPED [1] test_test_skip.py" in out and "not about a missing module" in out, out
