"""Blob errors say what went wrong in the user's terms: an unreadable external blob names its
column, row and URI and the reason (never a traceback or an install path); a scan's blob
descriptors cannot be written back as values; a ``BlobFile`` does not pickle."""

from __future__ import annotations

import os
import pickle

import pyarrow as pa
import pytest

import lancelet
from lancelet.errors import LanceNotFoundError, SchemaMismatchError


def _external(tmp_path):
    ext = tmp_path / "clip.bin"
    ext.write_bytes(b"0123456789")
    uri = f"file://{ext}"
    values = [b"inline", lancelet.Blob.from_uri(uri, position=2, size=5), uri]
    t = pa.table({"id": [0, 1, 2], "clip": lancelet.blob_array(values)})
    ds = lancelet.write_dataset(t, str(tmp_path / "refs.lance"), allow_external_blob_outside_bases=True)
    return ds, ext, uri


def _check_message(err: BaseException, row: str, uri: str) -> None:
    text = str(err)
    assert "column 'clip'" in text
    assert row in text
    assert uri in text
    assert "not found" in text  # why
    assert "Traceback" not in text and ".py" not in text and "site-packages" not in text


def test_unreadable_external_blob_names_the_blob(tmp_path):
    ds, ext, uri = _external(tmp_path)
    f = ds.take_blobs("clip", indices=[1])[0]
    os.remove(ext)
    with pytest.raises(LanceNotFoundError) as e:
        f.read()
    _check_message(e.value, "row index 1", uri)
    with pytest.raises(LanceNotFoundError) as e:
        ds.read_blobs("clip", ids=[0, 1])
    _check_message(e.value, "row id 1", uri)
    with pytest.raises(LanceNotFoundError) as e:
        ds.take_blobs("clip", addresses=[0, 2])  # the size of a whole-object reference is looked up
    _check_message(e.value, "row address 2", uri)
    with pytest.raises(LanceNotFoundError) as e:
        ds.read_blob_ranges("clip", [(0, 0, 2), (1, 1, 2)], selector="indices")
    _check_message(e.value, "row index 1", uri)


def test_unreadable_external_blob_in_a_binary_scan(tmp_path):
    # Bytes produced while scanning used to cross the Arrow C stream interface, which turned
    # the error into an ArrowInvalid (hidden behind an AttributeError) quoting the traceback.
    ds, ext, uri = _external(tmp_path)
    os.remove(ext)
    for read in (
        lambda: ds.to_table(blob_handling="all_binary"),
        lambda: list(ds.to_batches(blob_handling="all_binary")),
        lambda: ds.to_pandas(blob_mode="bytes"),
    ):
        with pytest.raises(LanceNotFoundError) as e:
            read()
        _check_message(e.value, "row address 1", uri)


def _v2(tmp_path):
    schema = pa.schema([pa.field("id", pa.int64()), lancelet.blob_field("img")])
    t = pa.table({"id": [0, 1], "img": lancelet.blob_array([b"abc", None])}, schema=schema)
    return lancelet.write_dataset(t, str(tmp_path / "v2.lance"))


def _v1(tmp_path):
    field = pa.field("img", pa.large_binary(), metadata={"lance-encoding:blob": "true"})
    t = pa.table(
        {"id": [0, 1], "img": pa.array([b"abc", None], pa.large_binary())},
        schema=pa.schema([pa.field("id", pa.int64()), field]),
    )
    return lancelet.write_dataset(t, str(tmp_path / "v1.lance"), data_storage_version="2.1")


@pytest.mark.parametrize("make", [_v2, _v1], ids=["blob-v2", "blob-v1"])
def test_writing_scanned_blob_descriptors_back_is_refused(tmp_path, make):
    ds = make(tmp_path)
    scanned = ds.to_table()
    writes = [
        lambda: lancelet.write_dataset(scanned, ds.uri, mode="append"),
        lambda: ds.insert(scanned),
        lambda: ds.merge_insert("id").when_matched_update_all().execute(scanned),
        # a new dataset would keep descriptors pointing into the old one's files
        lambda: lancelet.write_dataset(scanned, str(tmp_path / "copy.lance")),
        lambda: lancelet.write_dataset(
            pa.table(
                {
                    "s": pa.StructArray.from_arrays(
                        [scanned.column("img").combine_chunks()], fields=[scanned.schema.field("img")]
                    )
                }
            ),
            str(tmp_path / "nested.lance"),
        ),
    ]
    for write in writes:
        with pytest.raises(SchemaMismatchError) as e:
            write()
        text = str(e.value)
        assert "blob descriptors" in text and "to_table()" in text
        assert "take_blobs" in text and 'blob_handling="all_binary"' in text
        assert "blob_uri" not in text and "Struct(" not in text
    assert ds.count_rows() == 2
    # What the message suggests works.
    ds = lancelet.write_dataset(ds.to_table(blob_handling="all_binary"), ds.uri, mode="append")
    assert [f.read() if f else None for f in ds.take_blobs("img", indices=[0, 1, 2, 3])] == [b"abc", None] * 2


def test_blob_file_does_not_pickle(tmp_path):
    ds = _v2(tmp_path)
    f = ds.take_blobs("img", indices=[0])[0]
    with pytest.raises(TypeError) as e:
        pickle.dumps(f)
    text = str(e.value)
    assert "lancelet.BlobFile" in text and "take_blobs" in text
    assert "_native" not in text
    assert f.read() == b"abc"  # still usable
