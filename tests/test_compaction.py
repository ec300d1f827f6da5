"""``optimize.compact_files``: small fragments merge, deleted rows are dropped, rows keep
pylance's order, pylance reads the result; conflicts with concurrent deletes only."""

from __future__ import annotations

import pytest
from _tables import sample

import lancelet

lance = pytest.importorskip("lance")


def _small_fragments(lib, uri, n=20, rows=50):
    lib.write_dataset(sample(range(0, rows), vector_dim=4), uri, data_storage_version="2.0")
    for k in range(1, n):
        lib.write_dataset(sample(range(k * rows, (k + 1) * rows), vector_dim=4), uri, mode="append")
    return lib.dataset(uri)


@pytest.mark.parametrize("target", [120, 1000, 10_000])
def test_compaction_matches_pylance(tmp_path, target):
    out = {}
    for lib in (lance, lancelet):
        uri = str(tmp_path / lib.__name__)
        ds = _small_fragments(lib, uri)
        ds.delete("id % 10 = 3")
        ds.delete("id >= 400 AND id < 450")  # a whole fragment
        m = ds.optimize.compact_files(target_rows_per_fragment=target)
        after = lib.dataset(uri)
        out[lib.__name__] = (m.fragments_removed, m.fragments_added,
                             [f.count_rows() for f in after.get_fragments()],
                             after.to_table().to_pylist())
    assert out["lancelet"] == out["lance"]


def test_compaction_keeps_rows_order_and_history(tmp_path):
    uri = str(tmp_path / "d.lance")
    ds = _small_fragments(lancelet, uri, n=30, rows=40)
    ds.delete("id % 7 = 0")
    before = ds.to_table()
    version = ds.version
    m = ds.optimize.compact_files(target_rows_per_fragment=500)
    assert m.fragments_removed == 30 and m.fragments_added == 2
    assert ds.version == version + 1
    assert ds.to_table().equals(before), "same rows in the same order"
    assert all(f.deletion_file() is None for f in ds.get_fragments()), "deletions materialized"
    assert lancelet.dataset(uri, version=version).to_table().equals(before)
    assert lance.dataset(uri).to_table().equals(before)
    lance.dataset(uri).validate()
    # Nothing left to do: no new version.
    assert ds.optimize.compact_files(target_rows_per_fragment=500).fragments_removed == 0
    assert ds.version == version + 1
    # Cleanup then frees the old small files.
    import datetime as dt

    stats = ds.cleanup_old_versions(older_than=dt.timedelta(0))
    assert stats.data_files_removed == 30


def test_compaction_conflicts_with_deletes_not_appends(tmp_path):
    uri = str(tmp_path / "d.lance")
    _small_fragments(lancelet, uri, n=6, rows=20)
    stale = lancelet.dataset(uri)
    lancelet.write_dataset(sample(range(1000, 1010), vector_dim=4), uri, mode="append")
    stale.optimize.compact_files(target_rows_per_fragment=1000)
    t = lancelet.dataset(uri).to_table()
    # The rewritten rows take the next fragment id, after the appended fragment (pylance's order).
    assert [f.fragment_id for f in lancelet.dataset(uri).get_fragments()] == [6, 7]
    assert t["id"].to_pylist() == list(range(1000, 1010)) + list(range(120))
    oracle = str(tmp_path / "oracle.lance")
    _small_fragments(lance, oracle, n=6, rows=20)
    stale = lance.dataset(oracle)
    lance.write_dataset(sample(range(1000, 1010), vector_dim=4), oracle, mode="append")
    stale.optimize.compact_files(target_rows_per_fragment=1000)
    assert lance.dataset(oracle).to_table()["id"].to_pylist() == t["id"].to_pylist()
    stale = lancelet.dataset(uri)
    lancelet.dataset(uri).delete("id = 5")
    lancelet.write_dataset(sample(range(2000, 2001), vector_dim=4), uri, mode="append")
    with pytest.raises(lancelet.CommitConflictError):
        stale.optimize.compact_files(target_rows_per_fragment=10_000)
    assert lancelet.dataset(uri).count_rows() == 130


def test_config_defaults_and_bad_options(tmp_path):
    uri = str(tmp_path / "d.lance")
    ds = _small_fragments(lancelet, uri, n=8, rows=10)
    ds.update_config({"lance.compaction.target_rows_per_fragment": "40"})
    m = ds.optimize.compact_files()
    assert [f.count_rows() for f in ds.get_fragments()] == [40, 40]
    assert m.fragments_removed == 8
    for bad in [dict(target_rows_per_fragment=0), dict(materialize_deletions_threshold=2.0),
                dict(batch_size=-1), dict(nonsense=1)]:
        with pytest.raises(lancelet.InvalidArgumentError):
            ds.optimize.compact_files(**bad)
