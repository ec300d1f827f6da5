"""Datasets whose data files mix format versions: 2.1 files with blob v1 values and 2.2
files with blob v2 values in the same column.

Either library makes such a dataset when it appends with ``data_storage_version="2.2"`` to
a 2.1 dataset with a blob v1 column: the column becomes blob v2 (``struct<data, uri>``, new
field ids for its children), the dataset keeps data format 2.1 and gains feature flag 256,
the old rows read as inline v2 descriptors pointing into the 2.1 files. Both libraries
read these datasets byte for byte, and lancelet's manifests are pylance's field for field.
Rewrites of such datasets, which pylance 14 refuses, work in lancelet (the rewritten rows
go to 2.2 files) and pylance reads the result.
"""

from __future__ import annotations

import pyarrow as pa
import pytest
from _lance_pb import manifest, raw_manifest_fields

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


def state(uri):
    """What a mixed dataset looks like: raw manifest fields, flags and data format, file
    versions and field ids, and the descriptors pylance reads."""
    m = manifest(uri)
    ds = lance.dataset(uri)
    files = [(d.file_major_version, d.file_minor_version, d.field_ids()) for f in ds.get_fragments() for d in f.data_files()]
    return raw_manifest_fields(uri), m["reader_flags"], m["writer_flags"], m["data_format"], files, ds.to_table().to_pylist()


@pytest.mark.parametrize("first", ["lancelet", "pylance"])
@pytest.mark.parametrize("appended", ["v2", "v1"])
def test_lancelet_makes_a_mixed_dataset(tmp_path, first, appended):
    """lancelet appends at 2.2 to a 2.1 dataset with a blob v1 column (v2 values, or
    v1-marked values): the same dataset as pylance makes, read by both."""
    seen = []
    for appender in ["lancelet", "pylance"]:
        uri = str(tmp_path / f"{appender}.lance")
        LIBS[first].write_dataset(v1_table(), uri, data_storage_version="2.1")
        data = v2_table(LIBS[appender]) if appended == "v2" else v1_table()
        LIBS[appender].write_dataset(data, uri, mode="append", data_storage_version="2.2")
        assert file_versions(uri) == [(2, 1), (2, 2)]
        expected = V1_VALUES + (V2_VALUES if appended == "v2" else V1_VALUES)
        for mod in LIBS.values():
            assert all_bytes(mod.dataset(uri), len(expected)) == expected
        seen.append(state(uri))
    assert seen[0] == seen[1]
    fields, rflags, wflags, data_format, files, _ = seen[0]
    assert (rflags & 256, wflags & 256, data_format[1]) == (256, 256, "2.1")
    assert [dict(f)[2] for f in fields] == [b"id", b"img", b"data", b"uri"]
    assert lancelet.dataset(str(tmp_path / "lancelet.lance")).schema.field("img").type.extension_name == "lance.blob.v2"


def test_mixed_dataset_with_two_blob_columns_and_a_struct(tmp_path):
    """New child ids follow the largest id, in field order (``img`` then ``aud`` and the
    one inside ``s``)."""
    f1 = pa.field("img", pa.large_binary(), metadata={"lance-encoding:blob": "true"})
    f2 = pa.field("aud", pa.large_binary(), metadata={"lance-encoding:blob": "true"})
    s = pa.field("s", pa.struct([pa.field("k", pa.int64()), pa.field("b", pa.large_binary(), metadata={
        "lance-encoding:blob": "true"})]))
    schema = pa.schema([pa.field("id", pa.int64()), f1, pa.field("tag", pa.string()), f2, s])

    def table(n):
        return pa.table({"id": list(range(n)), "img": pa.array([b"i%d" % i for i in range(n)], pa.large_binary()),
                         "tag": ["x"] * n, "aud": pa.array([b"a" * 70_000] * n, pa.large_binary()),
                         "s": pa.array([{"k": i, "b": b"s%d" % i} for i in range(n)], s.type)}, schema=schema)

    seen = []
    for appender in ["lancelet", "pylance"]:
        uri = str(tmp_path / f"{appender}.lance")
        lance.write_dataset(table(2), uri, data_storage_version="2.1")
        LIBS[appender].write_dataset(table(3), uri, mode="append", data_storage_version="2.2")
        for mod in LIBS.values():
            ds = mod.dataset(uri)
            assert [b for _, b in ds.read_blobs("aud", indices=list(range(5)))] == [b"a" * 70_000] * 5
            assert [b for _, b in ds.read_blobs("s.b", indices=list(range(5)))] == [b"s0", b"s1", b"s0", b"s1", b"s2"]
        seen.append(state(uri))
    assert seen[0] == seen[1]
    ids = [(dict(f)[2], dict(f).get(3, 0), dict(f).get(4)) for f in seen[0][0]]
    assert [(n, i) for n, i, _ in ids] == [(b"id", 0), (b"img", 1), (b"data", 7), (b"uri", 8), (b"tag", 2),
                                          (b"aud", 3), (b"data", 9), (b"uri", 10), (b"s", 4), (b"k", 5),
                                          (b"b", 6), (b"data", 11), (b"uri", 12)]


@pytest.mark.parametrize("appender", ["lancelet", "pylance"])
def test_a_2_2_append_without_the_blob_column_keeps_it_v1(tmp_path, appender):
    uri = str(tmp_path / "p.lance")
    lance.write_dataset(v1_table(), uri, data_storage_version="2.1")
    LIBS[appender].write_dataset(pa.table({"id": [9]}), uri, mode="append", data_storage_version="2.2")
    for mod in LIBS.values():
        ds = mod.dataset(uri)
        assert ds.schema.field("img").type == pa.large_binary()
        assert all_bytes(ds, 6) == V1_VALUES + [None]
    assert file_versions(uri) == [(2, 1), (2, 2)]


@pytest.mark.parametrize("base,appended", [("2.1", "2.2"), ("2.2", "2.1"), ("2.0", "2.2"), ("2.0", "2.1"),
                                           ("2.1", "2.1")])
def test_appends_write_the_version_they_name(tmp_path, base, appended):
    """As in pylance, for any dataset: the files are of the named version, the dataset's
    data format stays, flag 256 marks mixed versions."""
    seen = []
    for appender in ["lancelet", "pylance"]:
        uri = str(tmp_path / f"{appender}.lance")
        lance.write_dataset(pa.table({"a": [1, 2]}), uri, data_storage_version=base)
        LIBS[appender].write_dataset(pa.table({"a": [3]}), uri, mode="append", data_storage_version=appended)
        for mod in LIBS.values():
            assert mod.dataset(uri).to_table().column("a").to_pylist() == [1, 2, 3]
            assert mod.dataset(uri).data_storage_version == base
        m = manifest(uri)
        seen.append((file_versions(uri), m["reader_flags"], m["writer_flags"], m["data_format"]))
    assert seen[0] == seen[1]
    want = [tuple(map(int, base.split("."))), tuple(map(int, appended.split(".")))]
    assert seen[0][0] == want and bool(seen[0][1] & 256) == (base != appended)


def mixed(tmp_path, name="mix"):
    """A 2.1 dataset (ids 0..4, blob v1) appended at 2.2 by lancelet (ids 10..15, blob v2)."""
    uri = str(tmp_path / f"{name}.lance")
    lance.write_dataset(v1_table(), uri, data_storage_version="2.1")
    v2 = v2_table(lancelet)
    v2 = v2.set_column(0, "id", pa.array(range(10, 10 + v2.num_rows), pa.int64()))
    lancelet.write_dataset(v2, uri, mode="append", data_storage_version="2.2")
    return uri


def test_after_the_upgrade_a_default_append_of_v2_values_is_refused_by_both(tmp_path):
    uri = mixed(tmp_path)
    with pytest.raises(OSError, match="2.2"):
        lance.write_dataset(v2_table(lance), uri, mode="append")
    with pytest.raises(ValueError, match="2.2"):
        lancelet.write_dataset(v2_table(lancelet), uri, mode="append")
    assert lance.dataset(uri).version == 2
    lance.write_dataset(v2_table(lance), uri, mode="append", data_storage_version="2.2")
    assert file_versions(uri) == [(2, 1), (2, 2), (2, 2)]
    for mod in LIBS.values():
        assert all_bytes(mod.dataset(uri), 17) == V1_VALUES + V2_VALUES * 2


def test_rewrites_of_a_mixed_dataset(tmp_path):
    """pylance 14 refuses to rewrite rows of a mixed dataset; lancelet writes them to 2.2
    files (the only ones that hold blob v2 values), and pylance reads the result."""
    uri = mixed(tmp_path)
    src = pa.table({"id": pa.array([0, 11], pa.int64())})
    for what in [lambda ds: ds.update({"id": "id + 100"}, where="id IN (3, 12)"),
                 lambda ds: ds.merge_insert("id").when_matched_update_all().execute(src),
                 lambda ds: ds.optimize.compact_files()]:
        with pytest.raises(OSError, match="Blob v2 requires file version >= 2.2"):
            what(lance.dataset(uri))
    assert lance.dataset(uri).version == 2
    ds = lancelet.dataset(uri)
    assert ds.update({"id": "id + 100"}, where="id IN (3, 12)") == {"num_rows_updated": 2}
    ds = lancelet.dataset(uri)
    assert ds.merge_insert("id").when_matched_update_all().execute(src)["num_updated_rows"] == 2
    lancelet.dataset(uri).optimize.compact_files()
    assert [(d.file_major_version, d.file_minor_version) for f in lance.dataset(uri).get_fragments()
            for d in f.data_files()] == [(2, 2)]
    want = sorted(v or b"-" for v in V1_VALUES + V2_VALUES)
    for mod in LIBS.values():
        ds = mod.dataset(uri)
        assert ds.data_storage_version == "2.1"
        assert sorted(b or b"-" for b in all_bytes(ds, 11)) == want
    assert manifest(uri)["reader_flags"] & 256
