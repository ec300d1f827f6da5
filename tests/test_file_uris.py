"""``lancelet.file`` readers and writers on any URI datasets accept: a local path, ``file://``,
``memory://`` and ``s3://`` (SeaweedFS, the ``s3`` fixture of ``conftest.py``) with
pylance-style ``storage_options``; files cross between pylance and lancelet by URI."""

from __future__ import annotations

import os
import uuid

import pyarrow as pa
import pytest
from _tables import sample

import lancelet
from lancelet.file import LanceFileReader, LanceFileWriter


def _write(uri: str, table: pa.Table, **kwargs) -> int:
    with LanceFileWriter(uri, table.schema, **kwargs) as w:
        w.write_batch(table)
    return w.size_bytes


def _read(uri: str, **kwargs) -> pa.Table:
    return LanceFileReader(uri, **kwargs).read_all().to_table()


def test_memory_round_trip():
    uri = f"memory://file-uris/{uuid.uuid4().hex}/t.lance"
    table = sample(range(1000))
    size = _write(uri, table)
    assert size and size > 0
    reader = LanceFileReader(uri)
    assert reader.num_rows() == 1000
    assert reader.read_all().to_table().equals(table)
    assert reader.take_rows([999, 0, 5]).to_table().column("id").to_pylist() == [999, 0, 5]
    assert reader.read_range(10, 5).to_table().equals(table.slice(10, 5))


def test_a_memory_file_appears_only_when_closed():
    uri = f"memory://file-uris/{uuid.uuid4().hex}/t.lance"
    w = LanceFileWriter(uri, sample(range(1000)).schema)
    w.write_batch(sample(range(10)))
    with pytest.raises(lancelet.LanceNotFoundError):
        LanceFileReader(uri)
    w.abort()
    with pytest.raises(lancelet.LanceNotFoundError):
        LanceFileReader(uri)


def test_a_data_file_of_a_memory_dataset_opens_by_uri():
    root = f"memory://file-uris/{uuid.uuid4().hex}/ds.lance"
    table = sample(range(300))
    ds = lancelet.write_dataset(table, root)
    path = ds.get_fragments()[0].data_files()[0].path
    assert _read(f"{root}/data/{path}").equals(table)


def test_file_uri(tmp_path):
    table = sample(range(1000))
    target = tmp_path / "uri.lance"
    _write("file://" + str(target), table)
    assert sorted(os.listdir(tmp_path)) == ["uri.lance"]
    assert _read("file://" + str(target)).equals(table)
    assert _read(str(target)).equals(table)


def test_local_path(tmp_path):
    table = sample(range(1000))
    target = tmp_path / "local.lance"
    _write(str(target), table, version="2.1")
    assert _read(target).equals(table)
    assert LanceFileReader(str(target)).metadata().minor_version == 1


def test_missing_files_are_not_found(tmp_path):
    with pytest.raises(lancelet.LanceNotFoundError):
        LanceFileReader(f"memory://file-uris/{uuid.uuid4().hex}/missing.lance")
    with pytest.raises(lancelet.LanceNotFoundError):
        LanceFileReader("file://" + str(tmp_path / "missing.lance"))


def test_s3_round_trip(s3):
    uri, opts, client = s3
    uri = uri.replace("items.lance", "f.lance")
    table = sample(range(5000))
    size = _write(uri, table, storage_options=opts)
    key = uri[len("s3://lancelet/") :]
    assert client.head_object(Bucket="lancelet", Key=key)["ContentLength"] == size
    reader = LanceFileReader(uri, storage_options=opts)
    assert reader.read_all(batch_size=700).to_table().equals(table)
    assert reader.take_rows([4999, 3]).to_table().column("id").to_pylist() == [4999, 3]
    stats = reader.io_stats()
    assert stats["read_requests"] > 0 and stats["bytes_read"] >= size // 2


def test_s3_missing_object_and_bad_options(s3):
    uri, opts, _ = s3
    with pytest.raises(lancelet.LanceNotFoundError):
        LanceFileReader(uri.replace("items.lance", "missing.lance"), storage_options=opts)
    with pytest.raises(lancelet.InvalidArgumentError, match="storage option"):
        LanceFileReader(uri, storage_options={**opts, "no_such_option": "x"})


@pytest.mark.interop
def test_pylance_writes_lancelet_reads_by_file_uri(tmp_path):
    lance_file = pytest.importorskip("lance.file")
    table = sample(range(1000))
    target = tmp_path / "pylance.lance"
    with lance_file.LanceFileWriter("file://" + str(target), table.schema) as w:
        w.write_batch(table)
    assert _read("file://" + str(target)).equals(table)


@pytest.mark.interop
def test_lancelet_writes_pylance_reads_by_file_uri(tmp_path):
    lance_file = pytest.importorskip("lance.file")
    table = sample(range(1000))
    target = tmp_path / "lancelet.lance"
    _write("file://" + str(target), table)
    assert lance_file.LanceFileReader("file://" + str(target)).read_all().to_table().equals(table)


@pytest.mark.interop
def test_pylance_and_lancelet_exchange_files_on_s3(s3):
    lance_file = pytest.importorskip("lance.file")
    uri, opts, _ = s3
    theirs, ours = uri.replace("items.lance", "theirs.lance"), uri.replace("items.lance", "ours.lance")
    table = sample(range(3000))
    with lance_file.LanceFileWriter(theirs, table.schema, storage_options=opts) as w:
        w.write_batch(table)
    assert _read(theirs, storage_options=opts).equals(table)
    _write(ours, table, storage_options=opts)
    got = lance_file.LanceFileReader(ours, storage_options=opts).read_all().to_table()
    assert got.equals(table)
