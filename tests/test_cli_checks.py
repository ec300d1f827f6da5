"""``python -m lancelet``: ``inspect`` checks the files a version names against storage and
lists indexes and blob sidecars; ``head`` abbreviates long lists and takes ``--columns``
and ``--filter``; ``versions`` prints times with their UTC offset; ``ls`` on a dataset
says it is one.

Each test runs the CLI in a subprocess.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Optional

import numpy as np
import pyarrow as pa
import pytest

import lancelet

pytestmark = pytest.mark.lancelet_only


def _cli(*args: str, env: Optional[Dict[str, str]] = None) -> subprocess.CompletedProcess:
    full_env = dict(os.environ, COLUMNS="200", RUST_BACKTRACE="0", **(env or {}))
    return subprocess.run(
        [sys.executable, "-m", "lancelet", *[str(a) for a in args]],
        capture_output=True,
        text=True,
        timeout=120,
        env=full_env,
    )


def _ok(proc: subprocess.CompletedProcess) -> str:
    assert proc.returncode == 0, f"exit {proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    return proc.stdout


def _clean_failure(proc: subprocess.CompletedProcess) -> None:
    assert proc.returncode != 0, proc.stdout
    assert "Traceback" not in proc.stderr and "panicked" not in proc.stderr, proc.stderr
    assert len([line for line in proc.stderr.splitlines() if line.strip()]) == 1, proc.stderr


def _blob_dataset(uri: str, storage_options: Optional[Dict[str, str]] = None) -> None:
    """Rows 0..3: a small (inline), a 100 KiB (packed sidecar), a 5 MiB (dedicated
    sidecar) blob and a null; a BTREE index on ``id``; row 3 deleted."""
    values = [b"s" * 100, b"p" * (100 << 10), b"d" * (5 << 20), None]
    schema = pa.schema([pa.field("id", pa.int64()), lancelet.blob_field("img")])
    table = pa.table({"id": pa.array(range(4), pa.int64()), "img": lancelet.blob_array(values)}, schema=schema)
    ds = lancelet.write_dataset(table, uri, data_storage_version="2.2", storage_options=storage_options)
    ds.create_scalar_index("id", "BTREE")
    lancelet.dataset(uri, storage_options=storage_options).delete("id = 3")


def _files(uri: str, pattern: str) -> List[Path]:
    found = sorted(Path(uri).glob(pattern))
    assert found, pattern
    return found


def _size_mib(out: str) -> float:
    """The total of the ``size:`` line, in MiB."""
    m = re.search(r"(?im)^size:\s+([\d.]+) (B|KiB|MiB|GiB)\b", out)
    assert m, out
    scale = {"B": 1 / (1 << 20), "KiB": 1 / 1024, "MiB": 1, "GiB": 1024}[m.group(2)]
    return float(m.group(1)) * scale


# --------------------------------------------------------------------------------------
# inspect: indexes, blob files, sizes
# --------------------------------------------------------------------------------------


def test_inspect_lists_indexes_and_blob_sidecars_and_counts_them(tmp_path):
    uri = str(tmp_path / "blobs.lance")
    _blob_dataset(uri)
    out = _ok(_cli("inspect", uri))
    index_lines = [line for line in out.splitlines() if "id_idx" in line]
    assert index_lines and "BTree" in index_lines[0] and re.search(r"\bid\b", index_lines[0].split("id_idx", 1)[1])
    for sidecar in _files(uri, "data/*/*.blob"):
        assert f"{sidecar.parent.name}/{sidecar.name}" in out
    assert re.search(r"(?i)blob files?:\s*2\b", out), out
    on_disk = sum(
        p.stat().st_size
        for p in Path(uri).rglob("*")
        if p.is_file() and "_versions" not in p.parts and "_transactions" not in p.parts
    )
    assert _size_mib(out) >= 5.0
    assert abs(_size_mib(out) - on_disk / (1 << 20)) < 0.1, (out, on_disk)


# --------------------------------------------------------------------------------------
# inspect: damaged files
# --------------------------------------------------------------------------------------


def _damaged(tmp_path, how: str):
    """A blob dataset with one of its files removed or cut in half: ``(uri, file, its
    original size)``."""
    uri = str(tmp_path / f"{how}.lance")
    _blob_dataset(uri)
    data = _files(uri, "data/*.lance")[0]
    sidecar = max(_files(uri, "data/*/*.blob"), key=lambda p: p.stat().st_size)
    deletion = _files(uri, "_deletions/*")[0]
    index_file = _files(uri, "_indices/*/*")[0]
    target = {"data": data, "sidecar": sidecar, "deletion": deletion, "index": index_file}[how.split("-")[0]]
    size = target.stat().st_size
    if how.endswith("missing"):
        target.unlink()
    else:
        os.truncate(target, size // 2)
    return uri, target, size


@pytest.mark.parametrize(
    "how",
    [
        "data-missing",
        "data-halved",
        "sidecar-missing",
        "sidecar-halved",
        "deletion-missing",
        "deletion-halved",
        "index-missing",
        "index-halved",
    ],
)
def test_inspect_fails_on_a_missing_or_short_file(tmp_path, how):
    uri, target, size = _damaged(tmp_path, how)
    proc = _cli("inspect", uri)
    _clean_failure(proc)
    assert "problem" in proc.stderr
    # the report is still printed, with the file named among the problems
    assert "schema:" in proc.stdout
    problems = proc.stdout.split("problems:", 1)[1]
    assert target.name in problems, proc.stdout
    if how == "data-halved":
        assert f"{size // 2} bytes" in problems and str(size) in problems


def test_inspect_of_an_intact_dataset_with_deletions_and_blobs_succeeds(tmp_path):
    uri = str(tmp_path / "fine.lance")
    _blob_dataset(uri)
    out = _ok(_cli("inspect", uri))
    assert "problems" not in out


def test_inspect_checks_files_on_s3(s3):
    uri, options, client = s3
    _blob_dataset(uri, options)
    flags = [a for k, v in options.items() for a in ("--storage-option", f"{k}={v}")]
    out = _ok(_cli("inspect", uri, *flags))
    assert "id_idx" in out and re.search(r"(?i)blob files?:\s*2\b", out) and _size_mib(out) >= 5.0
    bucket, prefix = uri[len("s3://") :].split("/", 1)
    keys = [o["Key"] for o in client.list_objects_v2(Bucket=bucket, Prefix=prefix)["Contents"]]
    sidecar = next(k for k in keys if k.endswith(".blob") and "0100000" in k.rsplit("/", 1)[1])
    client.delete_object(Bucket=bucket, Key=sidecar)
    proc = _cli("inspect", uri, *flags)
    _clean_failure(proc)
    assert sidecar.rsplit("/", 1)[1] in proc.stdout.split("problems:", 1)[1]


# --------------------------------------------------------------------------------------
# head
# --------------------------------------------------------------------------------------


@pytest.fixture
def vectors(tmp_path) -> str:
    uri = str(tmp_path / "vectors.lance")
    n = 6
    emb = pa.FixedSizeListArray.from_arrays(pa.array(np.arange(n * 384, dtype=np.float32) / 7), 384)
    table = pa.table(
        {
            "id": pa.array(range(n), pa.int64()),
            "caption": [f"caption-{i}" for i in range(n)],
            "emb": emb,
            "tags": [[f"tag{i}-{j}" for j in range(50)] for i in range(n)],
        }
    )
    lancelet.write_dataset(table, uri)
    return uri


def test_head_abbreviates_long_vectors_and_lists(vectors):
    out = _ok(_cli("head", vectors, "-n", "2"))
    assert "caption-0" in out and "caption-1" in out
    for line in out.splitlines():
        assert len(line) < 400, line
    assert "384" in out and "50" in out
    assert "…" in out
    assert "tag0-0" in out and "tag0-49" not in out


def test_head_columns_and_filter(vectors):
    out = _ok(_cli("head", vectors, "--columns", "id,caption", "--filter", "id >= 4"))
    assert "caption-4" in out and "caption-5" in out and "caption-3" not in out
    assert "emb" not in out and "tag" not in out
    out = _ok(_cli("head", vectors, "--columns", "caption", "--columns", "id", "-n", "1", "--filter", "id = 2"))
    assert "caption-2" in out and "caption-0" not in out
    assert "emb" not in out


def test_head_with_a_filter_that_matches_nothing(vectors):
    out = _ok(_cli("head", vectors, "--filter", "id > 100"))
    assert "caption" in out and "caption-" not in out


@pytest.mark.parametrize(
    "args", [["--columns", "nope"], ["--columns", "id,,caption"], ["--filter", "id >"], ["--filter", "  "]]
)
def test_head_bad_columns_or_filter_fail_cleanly(vectors, args):
    _clean_failure(_cli("head", vectors, *args))


# --------------------------------------------------------------------------------------
# versions, ls
# --------------------------------------------------------------------------------------


def test_versions_prints_times_with_their_utc_offset(vectors):
    out = _ok(_cli("versions", vectors, env={"TZ": "XYZ-5:30"}))
    line = next(line for line in out.splitlines() if re.match(r"^\s*1\b", line))
    m = re.search(r"\b(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)([+-]\d\d:\d\d|Z)\b", line)
    assert m and m.group(2) == "+05:30", line
    out = _ok(_cli("versions", vectors, env={"TZ": "UTC"}))
    assert re.search(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\+00:00|Z)", out), out


def test_ls_on_a_dataset_says_it_is_one(vectors):
    proc = _cli("ls", vectors)
    _clean_failure(proc)
    assert "dataset" in proc.stderr and "inspect" in proc.stderr
    assert "(no tables)" not in proc.stdout


def test_ls_on_an_empty_namespace_still_succeeds(tmp_path):
    out = _ok(_cli("ls", tmp_path))
    assert "(no tables)" in out


def test_inspect_counts_external_blobs_without_following_them(tmp_path):
    outside = tmp_path / "clip.bin"
    outside.write_bytes(b"0123456789")
    uri = str(tmp_path / "refs.lance")
    values = [f"file://{outside}", lancelet.Blob.from_bytes(b"inline")]
    lancelet.write_dataset(
        pa.table({"clip": lancelet.blob_array(values)}, schema=pa.schema([lancelet.blob_field("clip")])),
        uri,
        allow_external_blob_outside_bases=True,
    )
    outside.unlink()  # not one of the dataset's files: not a problem of the dataset
    out = _ok(_cli("inspect", uri))
    assert re.search(r"(?i)external blobs?:.*\b1\b", out), out
