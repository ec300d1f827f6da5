"""Schema evolution without rewriting data: ``add_columns`` (SQL, all-null fields, Python
UDFs with checkpoints), ``drop_columns`` and ``alter_columns``, checked against pylance 14
both ways."""

from __future__ import annotations

import os
import uuid

import pyarrow as pa
import pyarrow.compute as pc
import pytest

import lancelet

lance = pytest.importorskip("lance")


def _t(lo: int, hi: int) -> pa.Table:
    return pa.table({
        "id": pa.array(range(lo, hi), pa.int64()),
        "s": [f"row-{i}" for i in range(lo, hi)],
        "st": [{"x": i, "y": str(i)} for i in range(lo, hi)],
    })


@pytest.fixture
def ds(tmp_path):
    """Three fragments of 400 rows, with some rows deleted."""
    uri = str(tmp_path / "d.lance")
    d = lancelet.write_dataset(_t(0, 1200), uri, max_rows_per_file=400)
    d.delete("id % 7 = 3")
    return d


def _data_files(uri: str):
    d = os.path.join(uri, "data")
    return {n: os.path.getsize(os.path.join(d, n)) for n in os.listdir(d)}


def _expected(ids, fn):
    return [fn(i) for i in ids]


def test_sql_columns_go_into_new_files_only(ds):
    before = _data_files(ds.uri)
    ds.add_columns({"double": "id * 2", "tag": "upper(s)"})
    after = _data_files(ds.uri)
    assert {k: after[k] for k in before} == before, "existing data files are never rewritten"
    new = set(after) - set(before)
    assert len(new) == 3, "one new data file per fragment"
    # Bytes written are the new columns', a fraction of the table's.
    assert sum(after[n] for n in new) < 0.8 * sum(before.values())
    t = ds.to_table()
    ids = t["id"].to_pylist()
    assert len(ids) == 1200 - len([i for i in range(1200) if i % 7 == 3])
    assert t["double"].to_pylist() == _expected(ids, lambda i: i * 2)
    assert t["tag"].to_pylist() == _expected(ids, lambda i: f"ROW-{i}")
    theirs = lance.dataset(ds.uri)
    assert theirs.to_table().equals(t)
    theirs.validate()
    assert ds.to_table(filter="double > 2000", columns=["id"])["id"].to_pylist() == [i for i in ids if i > 1000]


def test_null_columns_write_nothing(ds):
    files = _data_files(ds.uri)
    ds.add_columns([pa.field("score", pa.float32()), pa.field("note", pa.string())])
    ds.add_columns(pa.schema([pa.field("extra", pa.list_(pa.int32()))]))
    assert _data_files(ds.uri) == files
    t = ds.to_table()
    assert t.schema.field("score").type == pa.float32()
    assert t["score"].null_count == t.num_rows and t["extra"].null_count == t.num_rows
    assert lance.dataset(ds.uri).to_table().equals(t)
    # Appends may fill them in.
    lancelet.write_dataset(pa.table({"id": pa.array([5000], pa.int64()), "s": ["new"],
                                     "st": [{"x": 1, "y": "1"}], "score": pa.array([0.5], pa.float32()),
                                     "note": ["n"], "extra": pa.array([[1, 2]], pa.list_(pa.int32()))}),
                           ds.uri, mode="append")
    assert lancelet.dataset(ds.uri).to_table(filter="score IS NOT NULL")["note"].to_pylist() == ["n"]


def test_udf_columns(ds):
    ds.add_columns(lambda b: pa.record_batch({"upper": pc.utf8_upper(b["s"])}), read_columns=["s"])

    @lancelet.batch_udf(output_schema=pa.schema([pa.field("half", pa.float64())]))
    def half(batch):
        import pandas as pd

        return pd.DataFrame({"half": batch["id"].to_numpy() / 2})

    ds.add_columns(half, read_columns=["id"], batch_size=100)
    t = ds.to_table()
    ids = t["id"].to_pylist()
    assert t["upper"].to_pylist() == _expected(ids, lambda i: f"ROW-{i}")
    assert t["half"].to_pylist() == _expected(ids, lambda i: i / 2)
    assert lance.dataset(ds.uri).to_table().equals(t)


def test_a_failed_udf_commits_nothing_and_leaves_no_files(ds):
    files, version = _data_files(ds.uri), ds.version

    def fails(batch):
        if batch["id"][0].as_py() >= 800:
            raise RuntimeError("boom")
        return pa.record_batch({"c": batch["id"]})

    with pytest.raises(RuntimeError, match="boom"):
        ds.add_columns(fails, read_columns=["id"])
    assert _data_files(ds.uri) == files
    assert lancelet.dataset(ds.uri).version == version == ds.version


def test_a_checkpointed_backfill_resumes_where_it_stopped(ds, tmp_path):
    ckpt = str(tmp_path / "backfill.json")
    calls = []
    fail = {"on": True}

    @lancelet.batch_udf(checkpoint_file=ckpt)
    def plus_one(batch):
        first = batch["id"][0].as_py()
        calls.append(first)
        if fail["on"] and first >= 800:
            raise RuntimeError("interrupted")
        return pa.record_batch({"next": pc.add(batch["id"], 1)})

    with pytest.raises(RuntimeError):
        ds.add_columns(plus_one, read_columns=["id"])
    assert os.path.exists(ckpt)
    done_before = len(calls)
    fail["on"] = False
    calls.clear()
    ds.add_columns(plus_one, read_columns=["id"])
    assert min(calls) >= 800, "fragments finished before the failure are not computed again"
    assert done_before >= 2 and not os.path.exists(ckpt)
    t = ds.to_table()
    assert t["next"].to_pylist() == [i + 1 for i in t["id"].to_pylist()]
    # Only the files of the committed columns remain: one per fragment.
    assert len(_data_files(ds.uri)) == 6


def test_udf_errors_are_clear(ds):
    with pytest.raises(lancelet.InvalidArgumentError, match="rows"):
        ds.add_columns(lambda b: pa.record_batch({"c": [1]}), read_columns=["id"])
    with pytest.raises(lancelet.InvalidArgumentError, match="RecordBatch"):
        ds.add_columns(lambda b: 5, read_columns=["id"])
    with pytest.raises(lancelet.InvalidArgumentError, match="already exists"):
        ds.add_columns({"s": "id"})
    with pytest.raises(lancelet.InvalidArgumentError, match="nullable"):
        ds.add_columns(pa.field("n", pa.int32(), nullable=False))
    with pytest.raises(lancelet.InvalidArgumentError):
        ds.add_columns(42)
    with pytest.raises(ValueError, match="nope"):
        ds.add_columns({"c": "nope + 1"})
    assert ds.version == 2 and set(ds.schema.names) == {"id", "s", "st"}


def test_drop_columns_is_metadata_only(ds):
    files = _data_files(ds.uri)
    ds.drop_columns(["s"])
    assert _data_files(ds.uri) == files
    assert ds.schema.names == ["id", "st"]
    assert lance.dataset(ds.uri).schema.names == ["id", "st"]
    assert lance.dataset(ds.uri).to_table().equals(ds.to_table())
    # A column added again under the same name is new: the old data never shows through.
    ds.add_columns(pa.field("s", pa.string()))
    assert ds.to_table()["s"].null_count == ds.count_rows()
    assert lance.dataset(ds.uri).to_table()["s"].null_count == ds.count_rows()
    ds.add_columns({"s2": "id + 1"})
    with pytest.raises(lancelet.InvalidArgumentError, match="every column"):
        ds.drop_columns(["id", "st", "s", "s2"])
    with pytest.raises(lancelet.InvalidArgumentError, match="nope"):
        ds.drop_columns(["nope"])
    with pytest.raises(lancelet.InvalidArgumentError):
        ds.drop_columns("id")
    # Old versions still have the column.
    assert "s" in lancelet.dataset(ds.uri, version=2).to_table().column_names


def test_alter_columns_renames_and_relaxes(tmp_path):
    uri = str(tmp_path / "d.lance")
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("s", pa.string()),
                        pa.field("st", pa.struct([("x", pa.int64()), ("y", pa.string())]))])
    ds = lancelet.write_dataset(_t(0, 100).cast(schema), uri)
    ds.alter_columns({"path": "id", "name": "key", "nullable": True}, {"path": "st.x", "name": "xx"})
    assert ds.schema.field("key").nullable and ds.schema.field("st").type.field("xx")
    t = ds.to_table()
    assert t["key"].to_pylist() == list(range(100))
    assert ds.to_table(columns=["key"], filter="key < 3")["key"].to_pylist() == [0, 1, 2]
    assert lance.dataset(uri).to_table().equals(t)
    with pytest.raises(lancelet.InvalidArgumentError, match="already exists"):
        ds.alter_columns({"path": "key", "name": "s"})
    with pytest.raises(lancelet.UnsupportedFeatureError):
        ds.alter_columns({"path": "s", "nullable": False})
    with pytest.raises(lancelet.UnsupportedFeatureError):
        ds.alter_columns({"path": "s", "data_type": pa.large_string()})
    with pytest.raises(lancelet.InvalidArgumentError):
        ds.alter_columns({"path": "nope", "name": "x"})
    with pytest.raises(lancelet.InvalidArgumentError):
        ds.alter_columns({"name": "x"})


def test_lancelet_reads_pylance_evolved_datasets(tmp_path):
    for version in ("2.0", None):  # None: pylance 14's default, 2.2
        uri = str(tmp_path / f"p{version}.lance")
        kw = {"data_storage_version": version} if version else {}
        theirs = lance.write_dataset(_t(0, 600), uri, max_rows_per_file=200, **kw)
        theirs.delete("id % 5 = 0")
        theirs.add_columns({"double": "id * 2"})
        theirs.add_columns(pa.field("empty", pa.float64()))
        theirs.drop_columns(["s"])
        theirs.alter_columns({"path": "id", "name": "key"})
        ours = lancelet.dataset(uri)
        assert ours.to_table().equals(lance.dataset(uri).to_table())
        want = [2 * i for i in range(591, 600) if i % 5]
        assert ours.to_table(columns=["double"], filter="key > 590")["double"].to_pylist() == want


def test_adding_columns_to_a_pylance_2_2_dataset_is_refused_cleanly(tmp_path):
    uri = str(tmp_path / "p.lance")
    lance.write_dataset(_t(0, 10), uri)
    files = _data_files(uri)
    with pytest.raises(lancelet.UnsupportedFeatureError):
        lancelet.dataset(uri).add_columns({"c": "id + 1"})
    assert _data_files(uri) == files and lancelet.dataset(uri).version == 1
    lancelet.dataset(uri).add_columns(pa.field("n", pa.int8()))  # no data: fine at any version
    assert lance.dataset(uri).to_table()["n"].null_count == 10


def test_new_columns_conflict_with_a_concurrent_append(ds):
    stale = lancelet.dataset(ds.uri)
    lancelet.write_dataset(_t(2000, 2010), ds.uri, mode="append")
    files = _data_files(ds.uri)
    with pytest.raises(lancelet.CommitConflictError):
        stale.add_columns({"c": "id + 1"})
    assert _data_files(ds.uri) == files, "the uncommitted column files are removed"
    # Two schema changes from the same version conflict too; the second is refused.
    a, b = lancelet.dataset(ds.uri), lancelet.dataset(ds.uri)
    a.drop_columns(["s"])
    with pytest.raises(lancelet.CommitConflictError):
        b.alter_columns({"path": "id", "name": "key"})
    assert lancelet.dataset(ds.uri).schema.names == ["id", "st"]


def test_add_columns_on_a_memory_dataset():
    uri = f"memory://{uuid.uuid4().hex}/d.lance"
    ds = lancelet.write_dataset(_t(0, 50), uri, max_rows_per_file=20)
    ds.add_columns({"c": "id * 3"})
    ds.add_columns(lambda b: pa.record_batch({"d": pc.negate(b["id"])}), read_columns=["id"])
    t = lancelet.dataset(uri).to_table()
    assert t["c"].to_pylist() == [i * 3 for i in range(50)]
    assert t["d"].to_pylist() == [-i for i in range(50)]
