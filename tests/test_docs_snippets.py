"""Every ```python block of README.md and docs/*.md runs as written.

The blocks of one file run in order, in one namespace, in a fresh working directory.
The blocks make their datasets under ``tempfile.mkdtemp()``, which is pointed at a per-test
temporary directory (so parallel runs do not collide and nothing is left behind); the code
runs exactly as written.

A block preceded by ``<!-- snippet: skip (reason) -->`` is not run (e.g. it needs an S3
endpoint). Blocks that use Spark run when Java and pyspark are available (with
``PYSPARK_PYTHON`` pointing at this interpreter, as docs/spark.md asks) and are skipped
otherwise.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
import tempfile
import textwrap
from pathlib import Path
from typing import List, NamedTuple

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

_FENCE = re.compile(r"^(?P<indent>[ \t]*)```(?P<lang>[^\n`]*)\n(?P<body>.*?)^(?P=indent)```[ \t]*$",
                    re.MULTILINE | re.DOTALL)
_SKIP = re.compile(r"<!--\s*snippet:\s*skip\b[^>]*-->\s*$")
_SPARK = re.compile(r"\bspark\b|SparkSession|pyspark|format\(\"lancelet\"\)")


class Snippet(NamedTuple):
    path: Path
    line: int
    code: str
    skip: bool
    spark: bool


def snippets(path: Path) -> List[Snippet]:
    """The python blocks of a Markdown file, in order."""
    text = path.read_text()
    out = []
    for m in _FENCE.finditer(text):
        if m.group("lang").strip().split(" ")[0] != "python":
            continue
        before = text[: m.start()].rstrip("\n").rsplit("\n", 1)[-1]
        code = textwrap.dedent(m.group("body"))
        line = text.count("\n", 0, m.start("body")) + 1
        out.append(Snippet(path, line, code, bool(_SKIP.search(before)), bool(_SPARK.search(code))))
    return out


def spark_available() -> bool:
    try:
        import pyspark  # noqa: F401
    except ImportError:
        return False
    java_home = os.environ.get("JAVA_HOME")
    return bool(shutil.which("java") or (java_home and os.path.exists(os.path.join(java_home, "bin", "java"))))


def test_the_extractor_finds_the_blocks():
    readme = snippets(ROOT / "README.md")
    assert len(readme) >= 4
    assert any(s.spark for s in readme) and not all(s.spark for s in readme)
    spark_doc = snippets(ROOT / "docs" / "spark.md")
    assert any(s.skip for s in spark_doc), "the S3 block of docs/spark.md should be marked skip"
    assert any("option(\"filter\"" in s.code for s in spark_doc), "indented blocks are found too"


@pytest.mark.parametrize("path", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_python_blocks_run(path, tmp_path, monkeypatch):
    blocks = snippets(path)
    if not blocks:
        pytest.skip("no python blocks")
    run_spark = spark_available()
    work = tmp_path / "work"
    work.mkdir()
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    if run_spark:
        monkeypatch.setenv("PYSPARK_PYTHON", sys.executable)
        monkeypatch.setenv("PYSPARK_DRIVER_PYTHON", sys.executable)
    had_session = _active_spark() is not None
    namespace: dict = {"__name__": "__snippet__"}
    ran = 0
    try:
        for s in blocks:
            if s.skip or (s.spark and not run_spark):
                continue
            try:
                exec(compile(s.code, f"{path.name}:{s.line}", "exec"), namespace)
            except Exception as e:
                raise AssertionError(f"{path.relative_to(ROOT)} block at line {s.line} failed: "
                                     f"{type(e).__name__}: {e}\n{s.code}") from e
            ran += 1
    finally:
        spark = namespace.get("spark")
        if spark is not None and not had_session and hasattr(spark, "stop"):
            spark.stop()
    if not ran:
        pytest.skip("every block needs Spark (Java and pyspark are not available)")


def _active_spark():
    if "pyspark" not in sys.modules:
        return None
    from pyspark.sql import SparkSession

    return SparkSession.getActiveSession()
