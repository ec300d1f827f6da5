"""Zone statistics (null count, min, max per run of rows) and the pruning they allow.

lancelet's dataset writes record the statistics in an extra global buffer of each data
file, which pylance ignores; filtered scans use them to skip fragments and row ranges that
cannot match. Checked here: a selective filter on a sorted column reads a small fraction of
a full scan's bytes, pruned and unpruned scans (``use_stats=False``) return the same rows
for random predicates, pylance reads files and datasets that carry statistics, and
datasets without statistics (written by pylance) still scan correctly.
"""

from __future__ import annotations

import os
import struct

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings

import lancelet
import lancelet.file as lf
from test_dataset_filters import PREDICATE, _by_id, _nan_comparable, build_table

lance = pytest.importorskip("lance")
plf = pytest.importorskip("lance.file")

pytestmark = pytest.mark.lancelet_only

EXAMPLES = int(os.environ.get("LANCELET_HYPOTHESIS_EXAMPLES", "300"))
BIG = 2_000_000


@pytest.fixture(scope="module")
def sorted_uri(tmp_path_factory) -> str:
    """2M rows sorted by ``id`` in two fragments, written by lancelet."""
    uri = str(tmp_path_factory.mktemp("sorted") / "s.lance")
    rng = np.random.default_rng(7)
    t = pa.table(
        {
            "id": pa.array(np.arange(BIG, dtype=np.int64)),
            "x": pa.array(rng.random(BIG)),
            "name": pa.array([f"name-{i % 5000:05d}" for i in range(BIG)]),
            "cat": pa.array(rng.integers(0, 100, BIG).astype(np.int32)),
        }
    )
    lancelet.write_dataset(t, uri)
    return uri


def _same(tables_equal, got: pa.Table, expected: pa.Table) -> None:
    tables_equal(_nan_comparable(_by_id(got)), _nan_comparable(_by_id(expected)))


def _scan(ds, **kwargs):
    s = ds.scanner(**kwargs)
    return s.to_table(), s.scan_stats


def test_selective_filter_on_a_sorted_column_reads_a_small_fraction(sorted_uri, tables_equal):
    ds = lancelet.dataset(sorted_uri)
    full, full_stats = _scan(ds)
    assert full.num_rows == BIG
    predicate = "id BETWEEN 1234567 AND 1254566"
    pruned, pruned_stats = _scan(ds, filter=predicate)
    unpruned, unpruned_stats = _scan(ds, filter=predicate, use_stats=False)
    assert pruned.num_rows == 20000
    tables_equal(pruned, unpruned)
    tables_equal(pruned, lance.dataset(sorted_uri).to_table(filter=predicate))
    ratio = pruned_stats.bytes_read / full_stats.bytes_read
    # 2.1+ pages are fetched whole (no partial mini-block reads yet), so the kept zones
    # cost their pages' bytes; 2.0 pages are sliced to the rows.
    assert ratio < (0.05 if ds.data_storage_version == "2.0" else 0.25), (pruned_stats, full_stats)
    # Without statistics the whole filter column is read.
    assert unpruned_stats.bytes_read > (4 if ds.data_storage_version == "2.0" else 2) * pruned_stats.bytes_read
    assert pruned_stats.rows_scanned < 0.05 * BIG <= unpruned_stats.rows_scanned


@pytest.mark.parametrize(
    "predicate, rows",
    [
        ("id < 10", 10),
        ("id >= 1999990", 10),
        ("id = 1500000 OR id = 3", 2),
        ("id IN (5, 999999, 1000000, 1999999)", 4),
        ("id > 1999999", 0),
        ("NOT (id >= 100)", 100),
        ("id IS NULL", 0),
        ("id BETWEEN 100 AND 199 AND cat >= 0", 100),
        ("id < 50 AND name = 'name-00007'", 1),
    ],
)
def test_pruned_results_match_pylance(sorted_uri, predicate, rows, tables_equal):
    ds = lancelet.dataset(sorted_uri)
    got, stats = _scan(ds, filter=predicate)
    assert got.num_rows == rows
    _same(tables_equal, got, lance.dataset(sorted_uri).to_table(filter=predicate))
    assert stats.rows_scanned <= 2 * 8192 * 4
    assert ds.count_rows(predicate) == rows


def test_unprunable_filters_still_read_everything(sorted_uri):
    ds = lancelet.dataset(sorted_uri)
    got, stats = _scan(ds, filter="cat = 5", columns=["id"])
    assert stats.rows_scanned == BIG
    assert got.num_rows == lance.dataset(sorted_uri).count_rows("cat = 5")


@pytest.fixture(scope="module")
def many_fragments_uri(tmp_path_factory) -> str:
    """The filter-test table written by lancelet in fragments of 7 rows, some rows deleted."""
    uri = str(tmp_path_factory.mktemp("frags") / "f.lance")
    lancelet.write_dataset(build_table(), uri, max_rows_per_file=7)
    lancelet.dataset(uri).delete("id % 13 = 6")
    return uri


def test_whole_fragments_are_skipped(many_fragments_uri):
    ds = lancelet.dataset(many_fragments_uri)
    got, stats = _scan(ds, filter="id BETWEEN 22 AND 24")  # fragment 3 holds ids 21..27
    assert got.column("id").to_pylist() == [22, 23, 24]
    assert stats.tasks == 1 and stats.rows_scanned <= 7
    _, stats = _scan(ds, filter="id > 1000")
    assert stats.tasks == 0 and stats.bytes_read < 20_000


@settings(max_examples=EXAMPLES, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(predicate=PREDICATE)
def test_random_predicates_give_the_same_rows_with_and_without_pruning(many_fragments_uri, tables_equal, predicate):
    ds = lancelet.dataset(many_fragments_uri)
    try:
        unpruned = ds.to_table(filter=predicate, use_stats=False)
    except (ValueError, lancelet.LanceError):
        with pytest.raises((ValueError, lancelet.LanceError)):
            ds.to_table(filter=predicate)
        return
    pruned = ds.to_table(filter=predicate)
    tables_equal(_nan_comparable(_by_id(pruned)), _nan_comparable(_by_id(unpruned)))
    assert ds.count_rows(predicate) == unpruned.num_rows


def test_pylance_reads_lancelet_datasets_with_stats(many_fragments_uri, tables_equal):
    theirs = lance.dataset(many_fragments_uri)
    ours = lancelet.dataset(many_fragments_uri)
    _same(tables_equal, theirs.to_table(), ours.to_table())
    for predicate in ["id BETWEEN 20 AND 40", "s = 'apple'", "d > date '2024-06-01'"]:
        _same(tables_equal, theirs.to_table(filter=predicate), ours.to_table(filter=predicate))


def test_mixed_fragments_with_and_without_stats(tmp_path, tables_equal):
    """pylance appends fragments without statistics to a lancelet dataset."""
    uri = str(tmp_path / "mixed.lance")
    t = build_table()
    lancelet.write_dataset(t.slice(0, 100), uri, max_rows_per_file=25)
    lance.write_dataset(t.take(list(range(100, 200))), uri, mode="append", max_rows_per_file=25)
    ours, theirs = lancelet.dataset(uri), lance.dataset(uri)
    for predicate in ["id BETWEEN 90 AND 110", "id > 150", "id < 3 OR id > 197", "i IS NULL AND id < 50"]:
        _same(tables_equal, ours.to_table(filter=predicate), theirs.to_table(filter=predicate))


def test_datasets_written_by_pylance_scan_correctly(tmp_path, tables_equal):
    uri = str(tmp_path / "p.lance")
    lance.write_dataset(build_table(), uri, data_storage_version="2.0", max_rows_per_file=30)
    ours, theirs = lancelet.dataset(uri), lance.dataset(uri)
    for predicate in ["id BETWEEN 20 AND 40", "id > 1000", "s IS NULL OR i > 3"]:
        _same(tables_equal, ours.to_table(filter=predicate), theirs.to_table(filter=predicate))
        _same(tables_equal, ours.to_table(filter=predicate, use_stats=False), ours.to_table(filter=predicate))


def _global_buffers(data: bytes):
    gbo, = struct.unpack_from("<Q", data, len(data) - 40 + 16)
    n, = struct.unpack_from("<I", data, len(data) - 40 + 24)
    return [struct.unpack_from("<QQ", data, gbo + 16 * i) for i in range(n)]


def test_pylance_file_reader_reads_files_with_stats(tmp_path, tables_equal):
    t = build_table().drop_columns(["st"])
    path = str(tmp_path / "s.lance")
    with lf.LanceFileWriter(path, t.schema, page_stats=True) as w:
        w.write_batch(t)
    plain = str(tmp_path / "p.lance")
    with lf.LanceFileWriter(plain, t.schema) as w:
        w.write_batch(t)
    data = (tmp_path / "s.lance").read_bytes()
    # One more global buffer than the plain file (which pylance would write byte for byte).
    assert len(_global_buffers(data)) == len(_global_buffers((tmp_path / "p.lance").read_bytes())) + 1
    _same(tables_equal, plf.LanceFileReader(path).read_all().to_table(), t)
    assert plf.LanceFileReader(path).metadata().num_rows == t.num_rows
    _same(tables_equal, lf.LanceFileReader(path).read_all().to_table(), t)


def test_damaged_stats_are_ignored_not_trusted(tmp_path, tables_equal):
    uri = str(tmp_path / "d.lance")
    t = build_table()
    lancelet.write_dataset(t, uri, max_rows_per_file=50)
    # Damage the statistics of every data file: the bounds would now exclude matching rows.
    data_dir = os.path.join(uri, "data")
    for name in os.listdir(data_dir):
        p = os.path.join(data_dir, name)
        with open(p, "rb") as f:
            data = bytearray(f.read())
        # The statistics come just before the checksums (the last global buffer).
        pos, size = _global_buffers(bytes(data))[-2]
        assert data[pos:pos + 4] == b"LLZS"
        for k in range(pos + 9, pos + size - 8, 7):
            data[k] ^= 0x5A
        with open(p, "wb") as f:
            f.write(bytes(data))
    # Checked, the damaged blocks are refused; this checks the statistics' own hash.
    with pytest.raises(lancelet.CorruptFileError):
        lancelet.dataset(uri).to_table(filter="id > 120")
    ds = lancelet.dataset(uri, verify_checksums=False)
    for predicate in ["id BETWEEN 20 AND 40", "id > 120", "s = 'apple'"]:
        _same(tables_equal, ds.to_table(filter=predicate), lance.dataset(uri).to_table(filter=predicate))
