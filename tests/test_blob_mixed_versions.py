"""Datasets whose data files mix format versions: 2.1 files with blob v1 values and 2.2
files with blob v2 values in the same column.

pylance 14 makes such a dataset when it appends with ``data_storage_version="2.2"`` to a
2.1 dataset with a blob v1 column: the column becomes blob v2 (``struct<data, uri>``), the
old rows read as inline v2 descriptors pointing into the 2.1 files. Both libraries read
these datasets byte for byte, whoever wrote the 2.1 files.
"""

from __future__ import annotations

import pyarrow as pa
import pytest

import lancelet

lance = pytest.importorskip("lance")

LIBS = {"lancelet": lancelet, "pylance": lance}
V1_VALUES = [b"hello", b"", None, b"x" * 100_000, bytes(range(256)) * 3]
# inline, inline, packed, null, empty, dedicated (default thresholds: 64 KiB, 4 MiB)
V2_VALUES = [b"abc", b"0123456789", b"p" * 70_000, None, b"", b"q" * 5_000_000]


def v1_table():
    f = pa.field("img", pa.large_binary(), metadata={"lance-encoding:blob": "true"})
    schema = pa.schema([pa.field("id", pa.int64()), f])
    return pa.table({"id": list(range(len(V1_VALUES))), "img": pa.array(V1_VALUES, pa.large_binary())},
                    schema=schema)


def v2_table(mod):
    schema = pa.schema([pa.field("id", pa.int64()), mod.blob_field("img")])
    return pa.table({"id": list(range(len(V2_VALUES))), "img": mod.blob_array(V2_VALUES)}, schema=schema)


def file_versions(uri):
    return [(d.file_major_version, d.file_minor_version)
            for f in lance.dataset(uri).get_fragments() for d in f.data_files()]


def all_bytes(ds, n):
    rows = list(range(n))
    via_read = [b for _, b in ds.read_blobs("img", indices=rows)]
    via_files = [None if f is None else f.read() for f in ds.take_blobs("img", indices=rows)]
    assert via_files == via_read
    reqs = [(i, 1, 2) for i, v in enumerate(via_read) if v is not None and len(v) >= 3]
    assert [b for _, _, b in ds.read_blob_ranges("img", reqs, selector="indices")] == [
        via_read[i][1:3] for i, _, _ in reqs]
    return via_read


@pytest.mark.parametrize("first", ["lancelet", "pylance"])
@pytest.mark.parametrize("appended", ["v2", "v1"])
def test_mixed_2_1_v1_and_2_2_v2_files_read_by_both(tmp_path, first, appended):
    """2.1 v1 files (written by either library) + a pylance 2.2 append (of v2 values, or of
    v1-marked values, which pylance stores as v2 at 2.2)."""
    uri = str(tmp_path / "mix.lance")
    LIBS[first].write_dataset(v1_table(), uri, data_storage_version="2.1")
    data = v2_table(lance) if appended == "v2" else v1_table()
    lance.write_dataset(data, uri, mode="append", data_storage_version="2.2")
    assert file_versions(uri) == [(2, 1), (2, 2)]
    expected = V1_VALUES + (V2_VALUES if appended == "v2" else V1_VALUES)
    ours, theirs = lancelet.dataset(uri), lance.dataset(uri)
    assert ours.schema.field("img").type.extension_name == "lance.blob.v2"
    assert ours.to_table().to_pylist() == theirs.to_table().to_pylist()
    assert all_bytes(ours, len(expected)) == expected
    assert all_bytes(theirs, len(expected)) == expected
    # Scans of the other columns and filters work across both file versions.
    assert ours.to_table(columns=["id"], filter="id >= 4").column("id").to_pylist() == \
        theirs.to_table(columns=["id"], filter="id >= 4").column("id").to_pylist()


def test_lancelet_append_of_v1_values_to_a_2_1_dataset_stays_2_1(tmp_path):
    """Without a format change, lancelet's append keeps the dataset's 2.1 files (blob v1),
    and pylance reads them."""
    uri = str(tmp_path / "v1.lance")
    lance.write_dataset(v1_table(), uri, data_storage_version="2.1")
    lancelet.write_dataset(v1_table(), uri, mode="append")
    assert file_versions(uri) == [(2, 1), (2, 1)]
    assert all_bytes(lance.dataset(uri), 10) == V1_VALUES * 2
    assert all_bytes(lancelet.dataset(uri), 10) == V1_VALUES * 2


@pytest.mark.xfail(strict=True, reason="lancelet does not yet upgrade a 2.1 dataset's blob v1 column to "
                   "v2 on an append with data_storage_version='2.2' (pylance does); it raises "
                   "SchemaMismatchError and writes nothing")
def test_lancelet_makes_a_mixed_dataset(tmp_path):
    uri = str(tmp_path / "mix.lance")
    lance.write_dataset(v1_table(), uri, data_storage_version="2.1")
    lancelet.write_dataset(v2_table(lancelet), uri, mode="append", data_storage_version="2.2")
    assert file_versions(uri) == [(2, 1), (2, 2)]
    assert all_bytes(lance.dataset(uri), 11) == V1_VALUES + V2_VALUES
