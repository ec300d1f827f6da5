"""The ``lancelet`` command line (``python -m lancelet``): inspect, versions, head.

Each test runs the CLI in a subprocess. With ``LANCELET_TEST_ORACLE_SELF=1`` the
commands run a pylance-backed stand-in (tests/_oracle_cli.py) instead, which proves the
assertions are satisfiable; the output format is otherwise free, so the tests only check
what it must mention.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import List

import pyarrow as pa
import pytest

ORACLE_CLI = Path(__file__).with_name("_oracle_cli.py")


@pytest.fixture(scope="session")
def cli(oracle_self):
    """``cli(*args)`` -> CompletedProcess of the CLI run with ``args``."""
    base: List[str] = [sys.executable, str(ORACLE_CLI)] if oracle_self else [sys.executable, "-m", "lancelet"]

    def run(*args: str, check_ok: bool = False) -> subprocess.CompletedProcess:
        env = dict(os.environ, COLUMNS="200", RUST_BACKTRACE="0")
        proc = subprocess.run(base + [str(a) for a in args], capture_output=True, text=True, timeout=120, env=env)
        if check_ok:
            assert proc.returncode == 0, f"exit {proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
        return proc

    return run


# Special table (not in _tables): the CLI's output is checked for these column names and captions.
def _table(start: int, n: int) -> pa.Table:
    ids = list(range(start, start + n))
    return pa.table(
        {
            "row_id": pa.array(ids, pa.int64()),
            "caption": pa.array([f"caption-{i}" for i in ids]),
            "score_value": pa.array([i / 2 for i in ids], pa.float64()),
            "nested_info": pa.array([{"k": i, "tags": [f"t{i}"]} for i in ids],
                                    pa.struct([("k", pa.int32()), ("tags", pa.list_(pa.string()))])),
            "embedding": pa.FixedSizeListArray.from_arrays(pa.array([float(i) for i in ids for _ in range(2)], pa.float32()), 2),
        }
    )


@pytest.fixture
def dataset_uri(lib, tmp_path) -> str:
    """Version 1: 30 rows in 3 fragments; 2: +7 rows (4 fragments); 3: 5 rows deleted;
    4: overwritten with rows 500..504 (1 fragment). Tag "before" -> version 3."""
    uri = str(tmp_path / "cli.lance")
    lib.write_dataset(_table(0, 30), uri, max_rows_per_file=10, data_storage_version="2.0")
    lib.write_dataset(_table(30, 7), uri, mode="append")
    lib.dataset(uri).delete("row_id < 5")
    lib.dataset(uri).tags.create("before", 3)
    lib.write_dataset(_table(500, 5), uri, mode="overwrite")
    return uri


def mentions(text: str, word: str, number: int) -> bool:
    """``text`` has ``word`` and ``number`` next to each other ("fragments: 3", "3 fragments",
    "rows = 5"...), ignoring case."""
    w, n = re.escape(word), rf"(?<![\d.]){number}(?![\d.])"
    return re.search(rf"(?i)\b{w}\w*\b[^\n\d]{{0,20}}{n}|{n}[^\n\d]{{0,20}}\b{w}", text) is not None


def assert_clean_failure(proc: subprocess.CompletedProcess) -> None:
    assert proc.returncode != 0
    assert "Traceback" not in proc.stderr, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, proc.stderr
    assert "panicked" not in proc.stderr


# --------------------------------------------------------------------------------------
# inspect
# --------------------------------------------------------------------------------------


def test_inspect_shows_schema_version_fragments_and_rows(cli, dataset_uri):
    out = cli("inspect", dataset_uri, check_ok=True).stdout
    for name in ["row_id", "caption", "score_value", "nested_info", "embedding"]:
        assert name in out
    assert "int64" in out and "string" in out
    assert mentions(out, "version", 4)
    assert mentions(out, "fragment", 1)
    assert mentions(out, "rows", 5)
    assert "2.0" in out


def test_inspect_of_a_multi_fragment_dataset(cli, lib, tmp_path):
    uri = str(tmp_path / "multi.lance")
    lib.write_dataset(_table(0, 30), uri, max_rows_per_file=10, data_storage_version="2.0")
    lib.write_dataset(_table(30, 7), uri, mode="append")
    lib.dataset(uri).delete("row_id < 5")
    out = cli("inspect", uri, check_ok=True).stdout
    assert mentions(out, "version", 3)
    assert mentions(out, "fragment", 4)
    assert mentions(out, "rows", 32)


def test_inspect_of_an_empty_dataset(cli, lib, tmp_path):
    uri = str(tmp_path / "empty.lance")
    lib.write_dataset(_table(0, 0), uri, data_storage_version="2.0")
    out = cli("inspect", uri, check_ok=True).stdout
    assert "caption" in out
    assert mentions(out, "rows", 0)
    assert mentions(out, "fragment", 0)


# --------------------------------------------------------------------------------------
# versions
# --------------------------------------------------------------------------------------


def _first_ints(out: str) -> List[int]:
    """The first integer of each line that starts with one (after optional spaces/markers)."""
    firsts = []
    for line in out.splitlines():
        m = re.match(r"^\W*(\d+)\b", line)
        if m:
            firsts.append(int(m.group(1)))
    return firsts


def test_versions_lists_every_version_with_its_row_count(cli, dataset_uri):
    out = cli("versions", dataset_uri, check_ok=True).stdout
    assert _first_ints(out) == [1, 2, 3, 4]
    rows_by_version = {1: 30, 2: 37, 3: 32, 4: 5}
    lines = {int(m.group(1)): line for line in out.splitlines() if (m := re.match(r"^\W*(\d+)\b", line))}
    for v, rows in rows_by_version.items():
        assert re.search(rf"(?<![\d.:-]){rows}(?![\d.:-])", lines[v][len(str(v)):]), f"version {v}: {lines[v]!r}"


def test_versions_mentions_tags(cli, dataset_uri):
    out = cli("versions", dataset_uri, check_ok=True).stdout
    tagged = [line for line in out.splitlines() if "before" in line]
    assert tagged and _first_ints(tagged[0]) == [3]


# --------------------------------------------------------------------------------------
# head
# --------------------------------------------------------------------------------------


def test_head_prints_the_first_rows(cli, dataset_uri):
    out = cli("head", dataset_uri, "-n", "3", check_ok=True).stdout
    assert "caption" in out and "row_id" in out
    assert all(f"caption-{i}" in out for i in (500, 501, 502))
    assert "caption-503" not in out


def test_head_defaults_to_a_few_rows(cli, lib, tmp_path):
    uri = str(tmp_path / "long.lance")
    lib.write_dataset(_table(1000, 500), uri, data_storage_version="2.0")
    out = cli("head", uri, check_ok=True).stdout
    assert "caption-1000" in out
    assert "caption-1499" not in out


def test_head_of_an_old_version(cli, dataset_uri):
    out = cli("head", dataset_uri, "-n", "2", "--version", "1", check_ok=True).stdout
    assert "caption-0" in out and "caption-1" in out
    assert "caption-2" not in out and "caption-500" not in out
    out = cli("head", dataset_uri, "-n", "2", "--version", "3", check_ok=True).stdout
    assert "caption-5" in out and "caption-6" in out


def test_head_by_tag(cli, dataset_uri):
    out = cli("head", dataset_uri, "-n", "1", "--version", "before", check_ok=True).stdout
    assert "caption-5" in out


def test_head_shows_nested_values(cli, dataset_uri):
    out = cli("head", dataset_uri, "-n", "1", check_ok=True).stdout
    assert "t500" in out


# --------------------------------------------------------------------------------------
# failures
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("command", ["inspect", "versions", "head"])
def test_a_missing_dataset_fails_with_one_line(cli, tmp_path, command):
    proc = cli(command, str(tmp_path / "missing.lance"))
    assert_clean_failure(proc)
    assert proc.stdout.strip() == ""


def test_a_missing_version_fails_with_one_line(cli, dataset_uri):
    assert_clean_failure(cli("head", dataset_uri, "--version", "99"))
    assert_clean_failure(cli("head", dataset_uri, "--version", "no-such-tag"))


def test_a_directory_that_is_not_a_dataset_fails_with_one_line(cli, tmp_path):
    (tmp_path / "junk.lance").mkdir()
    (tmp_path / "junk.lance" / "readme.txt").write_text("not a dataset")
    assert_clean_failure(cli("inspect", str(tmp_path / "junk.lance")))


def test_a_corrupt_manifest_fails_with_one_line(cli, dataset_uri):
    versions = Path(dataset_uri) / "_versions"
    for manifest in versions.glob("*.manifest"):
        manifest.write_bytes(b"garbage" * 10)
    assert_clean_failure(cli("inspect", dataset_uri))


def test_usage_errors_exit_nonzero(cli):
    proc = cli("frobnicate")
    assert proc.returncode != 0
    assert "Traceback" not in proc.stderr
    proc = cli()
    assert proc.returncode != 0
    assert "Traceback" not in proc.stderr


def test_help_lists_the_commands(cli):
    proc = cli("--help", check_ok=True)
    for command in ["inspect", "versions", "head"]:
        assert command in proc.stdout
