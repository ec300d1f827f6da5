"""Table config: UpdateConfig commits that pylance reads back, and vice versa."""

from __future__ import annotations

import lance
import pyarrow as pa
import pytest

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


def _lib(name):
    return {"lancelet": lancelet, "pylance": lance}[name]


@pytest.mark.parametrize("writer, reader", [("lancelet", "pylance"), ("pylance", "lancelet")])
def test_table_schema_and_field_metadata_round_trip(tmp_path, writer, reader):
    """update_metadata / update_schema_metadata / update_field_metadata written by one library
    read back by the other: set, update, remove with None, replace."""
    uri = str(tmp_path / "m.lance")
    schema = pa.schema([pa.field("a", pa.int64(), metadata={"unit": "m"}), pa.field("s", pa.struct([("x", pa.int32())]))])
    _lib(writer).write_dataset(pa.table({"a": [1, 2], "s": [{"x": 1}, {"x": 2}]}, schema=schema), uri)
    ds = _lib(writer).dataset(uri)
    assert ds.update_metadata({"k1": "v1", "k2": "v2"}) == {"k1": "v1", "k2": "v2"}
    ds.update_metadata({"k2": None, "k3": "v3"})
    ds.update_schema_metadata({"source": "crawl"})
    ds.update_field_metadata({"a": {"unit": "cm", "note": "x"}, "s.x": {"role": "label"}})
    ds.update_field_metadata({"a": {"note": None}})
    other = _lib(reader).dataset(uri)
    assert other.metadata == {"k1": "v1", "k3": "v3"}
    assert other.schema.metadata[b"source"] == b"crawl"
    assert other.schema.field("a").metadata == {b"unit": b"cm"}
    assert other.schema.field("s").type.field("x").metadata == {b"role": b"label"}
    assert other.to_table()["a"].to_pylist() == [1, 2]
    ds = _lib(writer).dataset(uri)
    ds.update_metadata({"only": "1"}, replace=True)
    ds.update_schema_metadata({"only": "2"}, replace=True)
    ds.update_field_metadata({"a": {"only": "3"}}, replace=True)
    other = _lib(reader).dataset(uri)
    assert other.metadata == {"only": "1"}
    assert other.schema.metadata == {b"only": b"2"}
    assert other.schema.field("a").metadata == {b"only": b"3"}


def test_metadata_updates_refuse_bad_input_and_unknown_fields(tmp_path):
    uri = str(tmp_path / "m.lance")
    _make(uri)
    ds = lancelet.dataset(uri)
    with pytest.raises(ValueError, match="not in the dataset's schema"):
        ds.update_field_metadata({"nope": {"k": "v"}})
    with pytest.raises(ValueError, match="string keys"):
        ds.update_metadata({"k": 1})  # type: ignore[dict-item]
    with pytest.raises(ValueError, match="field paths"):
        ds.update_field_metadata({"a": "v"})  # type: ignore[dict-item]
    # Nothing was committed by the refused calls.
    assert lancelet.dataset(uri).version == 1
    assert ds.schema_metadata == {}


def test_write_dataset_takes_pyarrow_datasets_and_scanners(tmp_path):
    """As pylance: a pyarrow dataset, a pyarrow scanner and a LanceScanner stream into a write."""
    import pyarrow.dataset as pa_ds
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"a": list(range(10))}), tmp_path / "p.parquet")
    source = pa_ds.dataset(tmp_path / "p.parquet")
    one = lancelet.write_dataset(source, str(tmp_path / "one.lance"))
    two = lancelet.write_dataset(source.scanner(filter=pa_ds.field("a") < 5), str(tmp_path / "two.lance"))
    three = lancelet.write_dataset(one.scanner(filter="a >= 8"), str(tmp_path / "three.lance"))
    assert one.to_table()["a"].to_pylist() == list(range(10))
    assert two.to_table()["a"].to_pylist() == list(range(5))
    assert lance.dataset(str(tmp_path / "three.lance")).to_table()["a"].to_pylist() == [8, 9]
    assert three.count_rows() == 2


def test_stats_of_a_missing_index_raise_key_error_as_pylance(tmp_path):
    uri = str(tmp_path / "i.lance")
    _make(uri)
    for lib in (lancelet, lance):
        with pytest.raises(KeyError):
            lib.dataset(uri).stats.index_stats("a_idx")
    with pytest.raises(ValueError, match="a_idx"):
        lancelet.dataset(uri).stats.index_stats("a_idx")
