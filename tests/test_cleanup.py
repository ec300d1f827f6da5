"""``cleanup_old_versions``: which versions go, which files go, and that nothing a kept
version or tag uses is ever deleted (checked against pylance 14 on the same histories)."""

from __future__ import annotations

import datetime as dt
import os
import time
import uuid

import pytest

import lancelet
from _support import referenced_files
from _tables import id_strings

lance = pytest.importorskip("lance")

ZERO = dt.timedelta(0)


def _history(lib, uri: str) -> None:
    """Eight versions: appends, deletes (small and bitmap-sized), an overwrite."""
    lib.write_dataset(id_strings(range(0, 100)), uri)                          # 1
    lib.write_dataset(id_strings(range(100, 200)), uri, mode="append")         # 2
    lib.dataset(uri).delete("id < 10")                                         # 3
    lib.write_dataset(id_strings(range(200, 300)), uri, mode="append")         # 4
    lib.write_dataset(id_strings(range(0, 7000)), uri, mode="overwrite")       # 5
    lib.dataset(uri).delete("id % 2 = 0")                                      # 6 (bitmap deletion file)
    lib.write_dataset(id_strings(range(7000, 7100)), uri, mode="append")       # 7
    lib.dataset(uri).delete("id = 7001")                                       # 8


def _files(uri: str):
    return sorted(os.path.relpath(os.path.join(r, f), uri) for r, _, fs in os.walk(uri) for f in fs)


POLICIES = [
    dict(older_than=ZERO),
    dict(retain_versions=3),
    dict(older_than=ZERO, retain_versions=5),
    dict(older_than=dt.timedelta(days=1), retain_versions=2),
    dict(),
    dict(older_than=ZERO, versions=[2, 3, 5]),
]


@pytest.mark.parametrize("policy", POLICIES, ids=lambda p: ",".join(f"{k}={v}" for k, v in p.items()) or "default")
def test_the_same_versions_and_file_counts_go_as_with_pylance(tmp_path, policy):
    results = {}
    for lib in (lance, lancelet):
        uri = str(tmp_path / lib.__name__)
        _history(lib, uri)
        stats = lib.dataset(uri).cleanup_old_versions(**policy)
        counts = {k: getattr(stats, k) for k in ("old_versions", "data_files_removed", "deletion_files_removed",
                                                 "transaction_files_removed", "index_files_removed")}
        kept = [v["version"] for v in lib.dataset(uri).versions()]
        dirs = {d: len(os.listdir(os.path.join(uri, d))) for d in ("data", "_deletions", "_transactions")}
        results[lib.__name__] = (counts, kept, dirs)
        assert stats.bytes_removed > 0 or counts["old_versions"] == 0
    assert results["lancelet"] == results["lance"]


def test_kept_versions_and_tags_read_the_same_after_cleanup(tmp_path):
    uri = str(tmp_path / "d.lance")
    _history(lancelet, uri)
    ds = lancelet.dataset(uri)
    ds.tags.create("before-overwrite", 4)
    before = {v: lancelet.dataset(uri, version=v).to_table() for v in range(1, 9)}
    stats = ds.cleanup_old_versions(older_than=ZERO, error_if_tagged_old_versions=False)
    assert stats.old_versions == 6  # all but the tagged 4 and the latest 8
    assert [v["version"] for v in lancelet.dataset(uri).versions()] == [4, 8]
    for v in (4, 8):
        assert lancelet.dataset(uri, version=v).to_table().equals(before[v])
        assert lance.dataset(uri, version=v).to_table().equals(before[v])
    assert lancelet.dataset(uri, version="before-overwrite").to_table().equals(before[4])
    # Only files the kept versions use remain.
    on_disk = {f for f in _files(uri) if f.split("/")[0] in ("data", "_deletions")}
    assert on_disk == referenced_files(lancelet, uri)
    lance.dataset(uri).validate()
    # A version that is gone cannot be opened.
    with pytest.raises(ValueError):
        lancelet.dataset(uri, version=5)


def test_a_tagged_old_version_is_an_error_that_removes_nothing(tmp_path):
    uri = str(tmp_path / "d.lance")
    _history(lancelet, uri)
    lancelet.dataset(uri).tags.create("keep", 2)
    files = _files(uri)
    with pytest.raises(lancelet.InvalidArgumentError, match="keep"):
        lancelet.dataset(uri).cleanup_old_versions(older_than=ZERO)
    assert _files(uri) == files


def test_the_latest_version_is_never_removed(tmp_path):
    uri = str(tmp_path / "d.lance")
    lancelet.write_dataset(id_strings(range(0, 10)), uri)
    stats = lancelet.dataset(uri).cleanup_old_versions(older_than=ZERO, delete_unverified=True)
    assert stats.old_versions == 0 and stats.data_files_removed == 0
    assert lancelet.dataset(uri).to_table().equals(id_strings(range(0, 10)))
    # Cleaning up through an old checkout still keeps the newest version.
    lancelet.write_dataset(id_strings(range(10, 20)), uri, mode="append")
    old = lancelet.dataset(uri, version=1)
    assert old.cleanup_old_versions(older_than=ZERO).old_versions == 1
    assert lancelet.dataset(uri).to_table().equals(id_strings(range(0, 20)))


def _orphans(uri: str):
    """Files a writer that died before committing would leave: a data file and a
    transaction file nobody references."""
    data = os.path.join(uri, "data", f"{uuid.uuid4().hex}.lance")
    txn = os.path.join(uri, "_transactions", f"7-{uuid.uuid4()}.txn")
    for p in (data, txn):
        with open(p, "wb") as f:
            f.write(b"x" * 100)
    return data, txn


def test_unreferenced_files_wait_a_week_unless_delete_unverified(tmp_path):
    uri = str(tmp_path / "d.lance")
    _history(lancelet, uri)
    data, txn = _orphans(uri)
    lancelet.dataset(uri).cleanup_old_versions(older_than=ZERO)
    assert os.path.exists(data) and os.path.exists(txn), "a write in progress may still commit them"
    week_ago = time.time() - 8 * 24 * 3600
    os.utime(data, (week_ago, week_ago))
    stats = lancelet.dataset(uri).cleanup_old_versions(older_than=ZERO)
    assert not os.path.exists(data) and os.path.exists(txn)
    assert stats.data_files_removed == 1 and stats.bytes_removed == 100
    stats = lancelet.dataset(uri).cleanup_old_versions(older_than=ZERO, delete_unverified=True)
    assert not os.path.exists(txn) and stats.transaction_files_removed == 1
    assert lancelet.dataset(uri).to_table().equals(lance.dataset(uri).to_table())


def test_pylance_datasets_clean_up_and_stay_readable_by_pylance(tmp_path):
    uri = str(tmp_path / "d.lance")
    _history(lance, uri)  # pylance's defaults: file format 2.2
    latest = lance.dataset(uri).to_table()
    stats = lancelet.dataset(uri).cleanup_old_versions(retain_versions=2)
    assert stats.old_versions == 6
    assert [v["version"] for v in lance.dataset(uri).versions()] == [7, 8]
    assert lance.dataset(uri).to_table().equals(latest)
    assert lancelet.dataset(uri).to_table().equals(latest)
    lance.dataset(uri).validate()


def test_cleanup_on_memory_store():
    uri = f"memory://{uuid.uuid4().hex}/d.lance"
    _history(lancelet, uri)
    latest = lancelet.dataset(uri).to_table()
    stats = lancelet.dataset(uri).cleanup_old_versions(older_than=ZERO)
    assert stats.old_versions == 7 and stats.data_files_removed > 0
    assert [v["version"] for v in lancelet.dataset(uri).versions()] == [8]
    assert lancelet.dataset(uri).to_table().equals(latest)


def test_rate_limit_and_concurrency_are_honoured(tmp_path):
    uri = str(tmp_path / "d.lance")
    _history(lancelet, uri)
    t0 = time.monotonic()
    stats = lancelet.dataset(uri).cleanup_old_versions(older_than=ZERO, delete_rate_limit=50, delete_concurrency=1)
    removed = stats.old_versions + stats.data_files_removed + stats.deletion_files_removed \
        + stats.transaction_files_removed
    assert removed > 10
    assert time.monotonic() - t0 >= (removed - 2) / 50 * 0.9


@pytest.mark.parametrize("kwargs", [
    dict(retain_versions=0),
    dict(retain_versions=-1),
    dict(older_than=5),
    dict(older_than=-dt.timedelta(days=1)),
    dict(versions="3"),
    dict(versions=[0]),
    dict(delete_rate_limit=0),
    dict(delete_concurrency=-2),
])
def test_bad_arguments_are_clear_errors(tmp_path, kwargs):
    uri = str(tmp_path / "d.lance")
    lancelet.write_dataset(id_strings(range(0, 10)), uri)
    with pytest.raises(lancelet.InvalidArgumentError):
        lancelet.dataset(uri).cleanup_old_versions(**kwargs)
