"""Blob columns: v1 (``large_binary`` marked ``lance-encoding:blob``, file formats 2.0 and
2.1) and v2 (the ``lance.blob.v2`` extension, 2.2: inline, packed, dedicated and external
values), written by one library and read by the other, in both directions.

Every test compares bytes through ``take_blobs``, ``read_blobs`` and ``read_blob_ranges``
on both sides, checks the scan descriptors equal pylance's, and checks what pylance 14
does on disk (payload placement, sidecar names). Hostile descriptors (ranges past the end
of a data file, sidecar or external object) give ``CorruptFileError``.
"""

from __future__ import annotations

import glob
import io
import os
import struct

import pyarrow as pa
import pytest

import lancelet
from lancelet.errors import CorruptFileError

lance = pytest.importorskip("lance")

LIBS = {"lancelet": lancelet, "pylance": lance}

V1_VALUES = [b"hello", b"", None, b"x" * 100_000, bytes(range(256)) * 3]
V2_VALUES = [b"abc", b"0123456789", b"0123456789ABCDEFG", None, b"", b"q" * 40]


def read_file(path):
    with open(path, "rb") as f:
        return f.read()


def write_file(path, data):
    with open(path, "wb") as f:
        f.write(data)


def v1_table():
    f = pa.field("img", pa.large_binary(), metadata={"lance-encoding:blob": "true"})
    schema = pa.schema([pa.field("id", pa.int64()), f])
    return pa.table({"id": list(range(len(V1_VALUES))), "img": pa.array(V1_VALUES, pa.large_binary())},
                    schema=schema)


def v2_table(mod):
    # Small thresholds so every kind appears: <= 4 inline, 5..16 packed, > 16 dedicated.
    schema = pa.schema([pa.field("id", pa.int64()),
                        mod.blob_field("b", inline_size_threshold=4, dedicated_size_threshold=16)])
    return pa.table({"id": list(range(len(V2_VALUES))), "b": mod.blob_array(V2_VALUES)}, schema=schema)


def allow_outside(mod):
    """The open option that lets ``mod`` read external blobs outside the registered bases
    (pylance reads them unasked)."""
    return {"allow_external_blob_outside_bases": True} if mod is lancelet else {}


def all_bytes(ds, col, n):
    """The blobs of rows 0..n through every read API of ``ds``."""
    files = ds.take_blobs(col, indices=list(range(n)))
    via_files = [None if f is None else f.read() for f in files]
    via_read = [b for _, b in ds.read_blobs(col, indices=list(range(n)))]
    assert via_files == via_read
    return via_read


def check_ranges(ds, col, values):
    reqs = [(i, 1, 2) for i, v in enumerate(values) if v is not None and len(v) >= 3]
    got = ds.read_blob_ranges(col, reqs, selector="indices")
    assert [b for _, _, b in got] == [values[i][1:3] for i, _, _ in reqs]


@pytest.mark.parametrize("version", ["2.0", "2.1"])
@pytest.mark.parametrize("writer,reader", [("lancelet", "pylance"), ("pylance", "lancelet")])
def test_v1_interop(tmp_path, version, writer, reader):
    uri = str(tmp_path / "v1.lance")
    LIBS[writer].write_dataset(v1_table(), uri, data_storage_version=version)
    w = LIBS[writer].dataset(uri)
    r = LIBS[reader].dataset(uri)
    assert r.schema.field("img").metadata == {b"lance-encoding:blob": b"true"}
    # Scans return (position, size) descriptors, equal on both sides.
    assert r.to_table().to_pylist() == w.to_table().to_pylist()
    assert all_bytes(r, "img", len(V1_VALUES)) == V1_VALUES
    assert all_bytes(w, "img", len(V1_VALUES)) == V1_VALUES
    check_ranges(r, "img", V1_VALUES)
    assert r.to_table(blob_handling="all_binary").column("img").to_pylist() == V1_VALUES


def test_v1_layout_matches_pylance(tmp_path):
    """Payloads first, 64-byte aligned with 'H' padding; descriptors as pylance's."""
    for mod in (lancelet, lance):
        uri = str(tmp_path / f"{mod.__name__}.lance")
        mod.write_dataset(v1_table(), uri, data_storage_version="2.1")
        data = read_file(glob.glob(f"{uri}/data/*.lance")[0])
        assert data[:5] == b"hello" and data[5:64] == b"H" * 59
        assert data[64:100_064] == b"x" * 100_000
    a = lancelet.dataset(str(tmp_path / "lancelet.lance")).to_table().to_pylist()
    b = lance.dataset(str(tmp_path / "lance.lance")).to_table().to_pylist()
    assert a == b


@pytest.mark.parametrize("writer,reader", [("lancelet", "pylance"), ("pylance", "lancelet")])
def test_v2_interop_every_kind(tmp_path, writer, reader):
    uri = str(tmp_path / "v2.lance")
    LIBS[writer].write_dataset(v2_table(LIBS[writer]), uri)
    w, r = LIBS[writer].dataset(uri), LIBS[reader].dataset(uri)
    desc = r.to_table().column("b").to_pylist()
    assert desc == w.to_table().column("b").to_pylist()
    assert [d and d["kind"] for d in desc] == [0, 1, 2, None, 0, 2]
    assert [d and d["blob_id"] for d in desc] == [0, 1, 2, None, 0, 3]
    assert all_bytes(r, "b", len(V2_VALUES)) == V2_VALUES
    assert all_bytes(w, "b", len(V2_VALUES)) == V2_VALUES
    check_ranges(r, "b", V2_VALUES)
    check_ranges(w, "b", V2_VALUES)
    # Sidecars: data/<stem>/<32-bit id, bits reversed>.blob
    names = sorted(os.path.basename(p) for p in glob.glob(f"{uri}/data/*/*.blob"))
    assert names == ["01000000000000000000000000000000.blob", "10000000000000000000000000000000.blob",
                     "11000000000000000000000000000000.blob"]
    assert r.to_table(blob_handling="all_binary").column("b").to_pylist() == V2_VALUES


def test_v2_pack_rollover_and_default_thresholds(tmp_path):
    """Values over 64 KiB go to packs, which roll over at the pack threshold; the same
    ids and positions as pylance."""
    values = [b"a" * 70_000, b"b" * 70_000, b"c" * 100, b"d" * 70_000]
    out = []
    for mod in (lancelet, lance):
        uri = str(tmp_path / f"{mod.__name__}.lance")
        schema = pa.schema([mod.blob_field("b", pack_file_size_threshold=150_000)])
        mod.write_dataset(pa.table({"b": mod.blob_array(values)}, schema=schema), uri)
        out.append(lance.dataset(uri).to_table().column("b").to_pylist())
        assert all_bytes(lancelet.dataset(uri), "b", 4) == values
    assert out[0] == out[1]
    assert [d["kind"] for d in out[0]] == [1, 1, 0, 1]


@pytest.mark.parametrize("writer", ["lancelet", "pylance"])
def test_v2_external_uris(tmp_path, writer):
    obj = tmp_path / "ext" / "a.bin"
    obj.parent.mkdir()
    obj.write_bytes(b"0123456789abcdef")
    mod = LIBS[writer]
    uri = str(tmp_path / "ext.lance")
    values = [f"file://{obj}", mod.Blob.from_uri(f"file://{obj}", position=5, size=3), None]
    schema = pa.schema([mod.blob_field("b")])
    table = pa.table({"b": mod.blob_array(values)}, schema=schema)
    with pytest.raises(Exception, match="outside registered external bases"):
        mod.write_dataset(table, uri)
    mod.write_dataset(table, uri, allow_external_blob_outside_bases=True)
    # lancelet reads blobs outside the registered bases only when the reader allows it.
    with pytest.raises(ValueError, match="outside the dataset's registered base paths"):
        lancelet.dataset(uri).read_blobs("b", indices=[0])
    for reader in LIBS.values():
        ds = reader.dataset(uri, **allow_outside(reader))
        d = ds.to_table().column("b").to_pylist()
        assert d[0] == {"kind": 3, "position": 0, "size": 0, "blob_id": 0, "blob_uri": f"file://{obj}"}
        assert all_bytes(ds, "b", 3) == [b"0123456789abcdef", b"567", None]
    # Ingest copies the bytes in.
    uri2 = str(tmp_path / "ingest.lance")
    mod.write_dataset(table, uri2, external_blob_mode="ingest")
    assert [d and d["kind"] for d in lance.dataset(uri2).to_table().column("b").to_pylist()] == [0, 0, None]
    assert all_bytes(lancelet.dataset(uri2), "b", 3) == [b"0123456789abcdef", b"567", None]


def test_blob_file_api(tmp_path):
    uri = str(tmp_path / "f.lance")
    lance.write_dataset(v1_table(), uri, data_storage_version="2.1")
    ds = lancelet.dataset(uri)
    f = ds.take_blobs("img", indices=[3], buffer_size=1000)[0]
    assert isinstance(f, io.BufferedIOBase) and isinstance(f, lancelet.BlobFile)
    assert repr(f) == "<BlobFile size=100000>" and f.size() == 100_000
    assert f.seek(99_990) == 99_990 and f.read() == b"x" * 10 and f.tell() == 100_000
    assert f.seek(-5, io.SEEK_END) == 99_995 and f.read(2) == b"xx"
    assert f.seek(-2, io.SEEK_CUR) == 99_995
    f.seek(0)
    buf = bytearray(7)
    assert f.readinto(buf) == 7 and bytes(buf) == b"x" * 7 and f.tell() == 7
    assert f.read_range(10, 3) == b"xxx" and f.read_ranges([(0, 1), (99_999, 5)]) == [b"x", b"x"]
    assert f.tell() == 7
    with pytest.raises(ValueError):
        f.seek(-1)
    with ds.take_blobs("img", indices=[0])[0] as g:
        assert g.read() == b"hello"
    with pytest.raises(ValueError, match="closed"):
        g.read()
    assert ds.take_blobs("img", indices=[2]) == [None]
    assert ds.take_blobs("img", indices=[1])[0].read() == b""
    with pytest.raises(ValueError, match="Exactly one"):
        ds.take_blobs("img")
    with pytest.raises(ValueError, match="not a blob column"):
        ds.take_blobs("id", indices=[0])
    addr = ds.to_table(with_row_address=True).column("_rowaddr").to_pylist()
    assert ds.read_blobs("img", addresses=addr[:1]) == [(addr[0], b"hello")]
    assert ds.read_blobs("img", ids=addr[:1]) == [(addr[0], b"hello")]


def test_to_pandas_blob_modes(tmp_path):
    pytest.importorskip("pandas")
    uri = str(tmp_path / "p.lance")
    lancelet.write_dataset(v2_table(lancelet), uri)
    ds = lancelet.dataset(uri)
    lazy = ds.to_pandas()
    assert isinstance(lazy["b"][0], lancelet.BlobFile) and lazy["b"][0].read() == b"abc"
    assert lazy["b"][3] is None
    assert list(ds.to_pandas(blob_mode="bytes")["b"]) == V2_VALUES
    assert ds.to_pandas(blob_mode="descriptions")["b"][0]["kind"] == 0


def test_metadata_scan_reads_no_payload(tmp_path):
    """A scan of the other columns never touches blob bytes (counted by the I/O layer)."""
    uri = str(tmp_path / "m.lance")
    values = [os.urandom(20_000) for _ in range(50)]
    schema = pa.schema([pa.field("id", pa.int64()), lancelet.blob_field("b")])
    lancelet.write_dataset(pa.table({"id": list(range(50)), "b": lancelet.blob_array(values)}, schema=schema), uri)
    sc = lancelet.dataset(uri).scanner(columns=["id"])
    sc.to_table()
    assert sc.scan_stats.bytes_read < 20_000


def test_hostile_descriptors_are_corrupt(tmp_path):
    # A v1 descriptor whose position lies past the end of its data file.
    uri = str(tmp_path / "h.lance")
    lancelet.write_dataset(v1_table(), uri, data_storage_version="2.0")
    path = glob.glob(f"{uri}/data/*.lance")[0]
    data = bytearray(read_file(path))
    good = struct.pack("<QQ", 64, 100_000)
    at = data.rindex(good)
    data[at:at + 8] = struct.pack("<Q", 10**12)
    write_file(path, bytes(data))
    # The file's checksums refuse the changed bytes; unchecked, the descriptor is refused.
    with pytest.raises(CorruptFileError, match="checksum mismatch"):
        lancelet.dataset(uri).take_blobs("img", indices=[3])
    ds = lancelet.dataset(uri, verify_checksums=False)
    with pytest.raises(CorruptFileError):
        ds.take_blobs("img", indices=[3])
    with pytest.raises(CorruptFileError):
        ds.read_blobs("img", indices=[3])
    assert ds.read_blobs("img", indices=[0]) == [(0, b"hello")]
    # A packed descriptor past the end of a (truncated) sidecar.
    uri = str(tmp_path / "s.lance")
    lancelet.write_dataset(v2_table(lancelet), uri)
    side = sorted(glob.glob(f"{uri}/data/*/*.blob"))[1]  # "1000..." = id 1, the pack
    with open(side, "r+b") as f:
        f.truncate(4)
    with pytest.raises(CorruptFileError):
        lancelet.dataset(uri).read_blobs("b", indices=[1])
    # An external range past the end of its object.
    obj = tmp_path / "o.bin"
    obj.write_bytes(b"0123")
    uri = str(tmp_path / "e.lance")
    lancelet.write_dataset(pa.table({"b": lancelet.blob_array([lancelet.Blob.from_uri(f"file://{obj}", 2, 10)])}),
                           uri, allow_external_blob_outside_bases=True)
    with pytest.raises(CorruptFileError):
        lancelet.dataset(uri, allow_external_blob_outside_bases=True).take_blobs("b", indices=[0])


def test_blob_values_validate():
    with pytest.raises(ValueError):
        lancelet.Blob(data=b"a", uri="s3://b/k")
    with pytest.raises(ValueError):
        lancelet.Blob.from_uri("s3://b/k", position=1)
    with pytest.raises(ValueError):
        lancelet.Blob.from_uri("s3://b/k", position=1, size=0)
    assert lancelet.Blob.empty().data == b""
    f = lancelet.blob_field("b", inline_size_threshold=0, dedicated_size_threshold=10)
    assert f.metadata == {b"lance-encoding:blob-inline-size-threshold": b"0",
                          b"lance-encoding:blob-dedicated-size-threshold": b"10"}
    with pytest.raises(ValueError):
        lancelet.blob_field("b", dedicated_size_threshold=0)
    # Both libraries' blob arrays are the same registered extension type.
    assert lancelet.blob_array([b"x"]).type.extension_name == lance.blob_array([b"x"]).type.extension_name


def test_v2_needs_format_2_2(tmp_path):
    with pytest.raises(Exception, match="2.2"):
        lancelet.write_dataset(v2_table(lancelet), str(tmp_path / "x.lance"), data_storage_version="2.1")


def test_mixed_v1_and_v2_files(tmp_path):
    """A 2.1 v1 dataset appended by pylance at 2.2 (v2): old rows read as inline v2."""
    uri = str(tmp_path / "mix.lance")
    lance.write_dataset(v1_table(), uri, data_storage_version="2.1")
    schema = pa.schema([pa.field("id", pa.int64()), lance.blob_field("img")])
    lance.write_dataset(pa.table({"id": list(range(len(V2_VALUES))), "img": lance.blob_array(V2_VALUES)},
                                 schema=schema), uri, mode="append", data_storage_version="2.2")
    n = len(V1_VALUES) + len(V2_VALUES)
    ds = lancelet.dataset(uri)
    assert ds.to_table().column("img").to_pylist() == lance.dataset(uri).to_table().column("img").to_pylist()
    assert all_bytes(ds, "img", n) == V1_VALUES + V2_VALUES


@pytest.mark.parametrize("writer,reader", [("lancelet", "pylance"), ("pylance", "lancelet")])
def test_v1_input_at_2_2_becomes_v2(tmp_path, writer, reader):
    """A ``lance-encoding:blob`` column written at 2.2 (the default) is stored as blob v2."""
    uri = str(tmp_path / "legacy22.lance")
    LIBS[writer].write_dataset(v1_table(), uri)
    r = LIBS[reader].dataset(uri)
    assert r.schema.field("img").type.extension_name == "lance.blob.v2"
    desc = r.to_table().column("img").to_pylist()
    assert desc == LIBS[writer].dataset(uri).to_table().column("img").to_pylist()
    assert [d and d["kind"] for d in desc] == [0, 0, None, 1, 0]
    assert all_bytes(r, "img", len(V1_VALUES)) == V1_VALUES


def test_rewrites_of_blob_rows_keep_their_payloads(tmp_path):
    """Compaction and update rewrite blob rows (v2 and v1) with their payloads placed anew
    (more cases, both ways, in tests/test_blob_updates.py)."""
    uri = str(tmp_path / "c.lance")
    for _ in range(2):
        lancelet.write_dataset(v2_table(lancelet), uri, mode="append")
    ds = lancelet.dataset(uri)
    ds.optimize.compact_files()
    ds.update({"id": "id + 1"})
    for mod in LIBS.values():
        assert all_bytes(mod.dataset(uri), "b", 2 * len(V2_VALUES)) == V2_VALUES * 2
    v1 = str(tmp_path / "v1.lance")
    for _ in range(2):
        lancelet.write_dataset(v1_table(), v1, mode="append", data_storage_version="2.1")
    lancelet.dataset(v1).optimize.compact_files()
    lancelet.dataset(v1).update({"id": "id + 1"})
    for mod in LIBS.values():
        assert all_bytes(mod.dataset(v1), "img", 2 * len(V1_VALUES)) == V1_VALUES * 2
        assert [len(f.data_files()) for f in mod.dataset(v1).get_fragments()] == [1]


def test_cleanup_removes_sidecars_of_removed_files_only(tmp_path):
    from datetime import timedelta

    uri = str(tmp_path / "clean.lance")
    lance.write_dataset(v2_table(lance), uri)
    old = set(glob.glob(f"{uri}/data/*/*.blob"))
    lancelet.write_dataset(v2_table(lancelet), uri, mode="overwrite")
    new = set(glob.glob(f"{uri}/data/*/*.blob")) - old
    assert len(old) == 3 and len(new) == 3
    ds = lancelet.dataset(uri)
    ds.cleanup_old_versions(older_than=timedelta(0))
    assert set(glob.glob(f"{uri}/data/*/*.blob")) == new
    assert len(glob.glob(f"{uri}/data/*/")) == 1
    for mod in (lancelet, lance):
        assert all_bytes(mod.dataset(uri), "b", len(V2_VALUES)) == V2_VALUES


def test_external_uris_under_a_registered_base(tmp_path):
    """A URI under a registered base path is stored relative to it (blob_id = the base id),
    by either library, and read by both."""
    ext = tmp_path / "ext"
    ext.mkdir()
    (ext / "a.bin").write_bytes(b"0123456789")
    uri = str(tmp_path / "based.lance")
    schema = pa.schema([lance.blob_field("b")])
    lance.write_dataset(pa.table({"b": lance.blob_array([f"file://{ext}/a.bin"])}, schema=schema), uri,
                        initial_bases=[lance.DatasetBasePath(str(ext), name="extbase")])
    lancelet.write_dataset(
        pa.table({"b": lancelet.blob_array([lancelet.Blob.from_uri(f"file://{ext}/a.bin", position=2, size=3)])},
                 schema=pa.schema([lancelet.blob_field("b")])), uri, mode="append")
    for mod in (lancelet, lance):
        ds = mod.dataset(uri)
        d = ds.to_table().column("b").to_pylist()
        assert [(x["blob_id"], x["blob_uri"]) for x in d] == [(1, "a.bin"), (1, "a.bin")]
        assert all_bytes(ds, "b", 2) == [b"0123456789", b"234"]
