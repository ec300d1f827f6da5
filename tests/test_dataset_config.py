"""Table config: UpdateConfig commits that pylance reads back, and vice versa."""

from __future__ import annotations

import lance
import pyarrow as pa

import lancelet


def _make(uri: str) -> None:
    lancelet.write_dataset(pa.table({"a": [1, 2, 3]}), uri)


def test_update_config_commits_a_version_pylance_reads(tmp_path):
    uri = str(tmp_path / "c.lance")
    _make(uri)
    ds = lancelet.dataset(uri)
    assert ds.update_config({"owner": "team-a", "tier": "gold"}) == {"owner": "team-a", "tier": "gold"}
    assert ds.version == 2
    assert lance.dataset(uri).config() == {"owner": "team-a", "tier": "gold"}
    ds.delete_config_keys(["tier"])
    ds.update_config({"owner": None, "x": "1"})
    assert lancelet.dataset(uri).config() == {"x": "1"} == lance.dataset(uri).config()
    assert lancelet.dataset(uri, version=2).config() == {"owner": "team-a", "tier": "gold"}
    assert lancelet.dataset(uri).to_table().num_rows == 3


def test_replace_drops_other_keys_and_data_survives_appends(tmp_path):
    uri = str(tmp_path / "c.lance")
    _make(uri)
    ds = lancelet.dataset(uri)
    ds.update_config({"a": "1", "b": "2"})
    ds.update_config({"c": "3"}, replace=True)
    lancelet.write_dataset(pa.table({"a": [4]}), uri, mode="append")
    assert lancelet.dataset(uri).config() == {"c": "3"} == lance.dataset(uri).config()
    assert lance.dataset(uri).count_rows() == 4


def test_pylance_config_is_read(tmp_path):
    uri = str(tmp_path / "c.lance")
    lance.write_dataset(pa.table({"a": [1]}), uri, data_storage_version="2.0")
    lance.dataset(uri).update_config({"k": "v"})
    assert lancelet.dataset(uri).config() == {"k": "v"}
    lancelet.write_dataset(pa.table({"a": [2]}), uri, mode="append")
    assert lance.dataset(uri).config() == {"k": "v"}


def test_dataset_stats_match_pylance(tmp_path):
    uri = str(tmp_path / "s.lance")
    lancelet.write_dataset(pa.table({"a": list(range(3000))}), uri, max_rows_per_file=1000)
    lancelet.write_dataset(pa.table({"a": [1, 2]}), uri, mode="append")
    lancelet.dataset(uri).delete("a < 10 OR a = 2500")
    for rows_per_group in (1024, 100):
        ours = lancelet.dataset(uri).stats.dataset_stats(max_rows_per_group=rows_per_group)
        assert ours == dict(lance.dataset(uri).stats.dataset_stats(max_rows_per_group=rows_per_group))
