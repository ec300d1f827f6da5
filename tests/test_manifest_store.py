"""Commits through an external manifest store (``storage_options={"manifest_store": ...}``),
for S3-compatible stores without conditional put: here SeaweedFS (the ``s3`` fixture of
``conftest.py``) with lancelet told not to use ``If-None-Match``
(``aws_conditional_put=disabled``), and local disk."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import threading
import uuid

import pytest

import lancelet
from _support import kill_after_ready, start_appenders, wait_appenders
from _tables import id_strings

pytestmark = pytest.mark.lancelet_only
lance = pytest.importorskip("lance")


@pytest.fixture
def no_cas(s3, tmp_path):
    """A dataset on S3 whose writers may not use conditional put, and a SQLite manifest store."""
    uri, opts, client = s3
    plain = dict(opts, aws_conditional_put="disabled")
    db = str(tmp_path / "manifests.db")
    return uri, plain, dict(plain, manifest_store=f"sqlite:{db}"), db, client


def _keys(client, uri):
    prefix = uri[len("s3://lancelet/"):]
    listed = client.list_objects_v2(Bucket="lancelet", Prefix=prefix).get("Contents", [])
    return sorted(o["Key"][len(prefix) + 1:] for o in listed)


def test_without_conditional_put_or_manifest_store_commits_are_refused(no_cas):
    uri, plain, _, _, client = no_cas
    with pytest.raises(lancelet.UnsupportedFeatureError, match="manifest_store"):
        lancelet.write_dataset(id_strings(range(0, 10)), uri, storage_options=plain)
    assert not [k for k in _keys(client, uri) if k.startswith("_versions/") and k.endswith(".manifest")]


def test_the_whole_api_works_through_a_sqlite_manifest_store(no_cas):
    uri, _, opts, db, client = no_cas
    lancelet.write_dataset(id_strings(range(0, 100)), uri, storage_options=opts)
    lancelet.write_dataset(id_strings(range(100, 150)), uri, mode="append", storage_options=opts)
    ds = lancelet.dataset(uri, storage_options=opts)
    ds.delete("id < 5")
    ds.tags.create("trimmed", 3)
    assert lancelet.dataset(uri, storage_options=opts).to_table().equals(id_strings(range(5, 150)))
    assert lancelet.dataset(uri, version=1, storage_options=opts).to_table().equals(id_strings(range(0, 100)))
    assert lancelet.dataset(uri, version="trimmed", storage_options=opts).count_rows() == 145
    # Every version is a complete manifest under its final name; no staged copies remain.
    keys = _keys(client, uri)
    assert not [k for k in keys if ".manifest-" in k]
    assert len([k for k in keys if k.startswith("_versions/") and k.endswith(".manifest")]) == 3
    with sqlite3.connect(db) as c:
        rows = c.execute("SELECT version, path FROM lancelet_manifests ORDER BY version").fetchall()
    assert [v for v, _ in rows] == [1, 2, 3]
    assert all(p.startswith("_versions/") and p.endswith(".manifest") for _, p in rows)
    # Readers that know nothing of the manifest store (pylance included) see the same history.
    s3_opts = {k: v for k, v in opts.items() if k not in ("manifest_store", "aws_conditional_put")}
    theirs = lance.dataset(uri, storage_options=s3_opts)
    assert theirs.version == 3 and theirs.to_table().equals(id_strings(range(5, 150)))


def test_concurrent_writers_through_sqlite_all_land(no_cas):
    uri, _, opts, _, _ = no_cas
    lancelet.write_dataset(id_strings(range(0, 10)), uri, storage_options=opts)
    procs = start_appenders(uri, opts, 4)
    errors = []

    def append(i):
        try:
            lancelet.write_dataset(id_strings(range(200_000 + 100 * i, 200_000 + 100 * i + 20)), uri, mode="append",
                                   storage_options=opts)
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=append, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wait_appenders(procs)
    assert not errors
    ds = lancelet.dataset(uri, storage_options=opts)
    assert ds.version == 9 and ds.count_rows() == 10 + 8 * 20
    assert [v["version"] for v in ds.versions()] == list(range(1, 10))
    ids = [f.fragment_id for f in ds.get_fragments()]
    assert len(ids) == len(set(ids))


def _interrupt_last_commit(root: str, db: str, key: str) -> str:
    """Turns the newest commit into one whose writer died after claiming the version in
    the manifest store: the manifest only under a staging name, the record pointing at it."""
    with sqlite3.connect(db) as c:
        version, path = c.execute(
            "SELECT version, path FROM lancelet_manifests WHERE dataset = ? ORDER BY version DESC LIMIT 1",
            (key,)).fetchone()
        staged = f"{path}-{uuid.uuid4().hex}"
        os.rename(os.path.join(root, path), os.path.join(root, staged))
        c.execute("UPDATE lancelet_manifests SET path = ? WHERE dataset = ? AND version = ?", (staged, key, version))
    return path


def test_a_reader_finishes_a_commit_whose_writer_died(tmp_path):
    root = str(tmp_path / "d.lance")
    db = str(tmp_path / "m.db")
    opts = {"manifest_store": f"sqlite:{db}"}
    lancelet.write_dataset(id_strings(range(0, 10)), root, storage_options=opts)
    lancelet.write_dataset(id_strings(range(10, 20)), root, mode="append", storage_options=opts)
    final = _interrupt_last_commit(root, db, f"file://{os.path.abspath(root)}")
    # Without the store the half-done version 2 is invisible...
    assert lancelet.dataset(root).version == 1
    # ...with it, opening finishes the commit the store promised.
    ds = lancelet.dataset(root, storage_options=opts)
    assert ds.version == 2 and ds.to_table().equals(id_strings(range(0, 20)))
    assert os.path.exists(os.path.join(root, final))
    assert not [n for n in os.listdir(os.path.join(root, "_versions")) if ".manifest-" in n]
    assert lance.dataset(root).to_table().equals(id_strings(range(0, 20)))
    # A writer arriving at an interrupted commit finishes it first and takes the next version.
    lancelet.write_dataset(id_strings(range(20, 30)), root, mode="append", storage_options=opts)
    _interrupt_last_commit(root, db, f"file://{os.path.abspath(root)}")
    lancelet.write_dataset(id_strings(range(30, 40)), root, mode="append", storage_options=opts)
    ds = lancelet.dataset(root)
    assert ds.version == 4 and ds.to_table().equals(id_strings(range(0, 40)))


def test_memory_manifest_store_on_a_memory_dataset():
    uri = f"memory://{uuid.uuid4().hex}/d.lance"
    opts = {"manifest_store": "memory"}
    lancelet.write_dataset(id_strings(range(0, 10)), uri, storage_options=opts)
    lancelet.write_dataset(id_strings(range(10, 20)), uri, mode="append", storage_options=opts)
    assert lancelet.dataset(uri, storage_options=opts).to_table().equals(id_strings(range(0, 20)))


_WRITER = """
import sys
import pyarrow as pa
import lancelet
uri, db = sys.argv[1], sys.argv[2]
opts = {"manifest_store": "sqlite:" + db}
v = lancelet.dataset(uri, storage_options=opts).version
print("ready", v, flush=True)
while True:
    lancelet.write_dataset(pa.table({"id": pa.array(range(v * 10, v * 10 + 10), pa.int64()),
                                     "s": [f"v{i}" for i in range(v * 10, v * 10 + 10)]}),
                           uri, mode="append", storage_options=opts)
    v += 1
    print(v, flush=True)
"""


@pytest.mark.parametrize("seed", [1, 2])
def test_killed_writers_leave_a_committed_version(tmp_path, seed):
    import random

    root, db = str(tmp_path / "d.lance"), str(tmp_path / "m.db")
    opts = {"manifest_store": f"sqlite:{db}"}
    lancelet.write_dataset(id_strings(range(0, 10)), root, storage_options=opts)
    rng, printed = random.Random(seed), 1
    for _ in range(6):
        proc = subprocess.Popen([sys.executable, "-c", _WRITER, root, db],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        _, out = kill_after_ready(proc, rng.uniform(0.05, 0.6))
        for line in out.split():
            printed = int(line)
        ds = lancelet.dataset(root, storage_options=opts)
        assert ds.version in (printed, printed + 1)
        assert ds.to_table().equals(id_strings(range(0, 10 * ds.version)))
        printed = ds.version
    with sqlite3.connect(db) as c:
        (recorded,) = c.execute("SELECT max(version) FROM lancelet_manifests").fetchone()
    assert recorded == printed


@pytest.mark.parametrize("spec", ["postgres://db", "sqlite:", "", "sqlite:/no/such/dir/m.db"])
def test_bad_manifest_store_options_are_clear_errors(tmp_path, spec):
    with pytest.raises((lancelet.InvalidArgumentError, OSError)):
        lancelet.write_dataset(id_strings(range(0, 1)), str(tmp_path / "d.lance"), storage_options={"manifest_store": spec})
    assert not os.path.exists(tmp_path / "d.lance" / "_versions")
