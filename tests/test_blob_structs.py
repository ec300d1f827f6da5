"""Blob columns inside struct fields.

pylance 14 writes blob v2 (every kind) and blob v1 (2.0, 2.1) fields inside structs and
reads them through dotted paths (``take_blobs("s.b", ...)``). lancelet reads and writes
them the same way, byte for byte, including rows where the parent struct is null (their
values are not stored: no payload, no sidecar id). Datasets written by either library
look the same on disk: descriptors, sidecars, payload bytes, file schemas and the blob
column's page layout. Blobs inside lists are refused.
"""

from __future__ import annotations

import os
import re

import pyarrow as pa
import pytest
from _lance_pb import file_schema_fields

import lancelet
from lancelet.errors import UnsupportedFeatureError

lance = pytest.importorskip("lance")
lance_file = pytest.importorskip("lance.file")

LIBS = {"lancelet": lancelet, "pylance": lance}

# <= 4 bytes inline, 5..16 packed, > 16 dedicated (with the thresholds below).
VALUES = [b"abc", None, b"0123456789", b"y" * 40, b"", b"zz"]
PARENT_NULL = [False, False, False, False, False, True]  # the last row's struct is null
EXPECTED = VALUES[:-1] + [None]


def v2_struct_table(mod):
    blob = mod.blob_field("b", inline_size_threshold=4, dedicated_size_threshold=16)
    s = pa.StructArray.from_arrays(
        [pa.array(range(len(VALUES)), pa.int64()), mod.blob_array(VALUES)],
        fields=[pa.field("k", pa.int64()), blob],
        mask=pa.array(PARENT_NULL),
    )
    return pa.table({"id": list(range(len(VALUES))), "s": s})


def v1_struct_table(mod=None, parent_nulls=True):
    blob = pa.field("b", pa.large_binary(), metadata={"lance-encoding:blob": "true"})
    s = pa.StructArray.from_arrays(
        [pa.array(range(len(VALUES)), pa.int64()), pa.array(VALUES, pa.large_binary())],
        fields=[pa.field("k", pa.int64()), blob],
        mask=pa.array(PARENT_NULL) if parent_nulls else None,
    )
    return pa.table({"id": list(range(len(VALUES))), "s": s})


def check_reads_like_pylance(uri, expected=EXPECTED):
    ours, theirs = lancelet.dataset(uri), lance.dataset(uri)
    n = len(VALUES)
    assert ours.to_table().to_pylist() == theirs.to_table().to_pylist()
    rows = list(range(n))
    got = [b for _, b in ours.read_blobs("s.b", indices=rows)]
    assert got == [b for _, b in theirs.read_blobs("s.b", indices=rows)] == expected
    files = ours.take_blobs("s.b", indices=rows)
    assert [None if f is None else f.read() for f in files] == expected
    reqs = [(i, 1, 2) for i, v in enumerate(expected) if v is not None and len(v) >= 3]
    assert ours.read_blob_ranges("s.b", reqs, selector="indices") == [
        (j, i, expected[i][1:3]) for j, (i, _, _) in enumerate(reqs)
    ]
    # Row ids and addresses select the same rows.
    addrs = ours.to_table(columns=["id"], with_row_address=True).column("_rowaddr").to_pylist()
    assert [b for _, b in ours.read_blobs("s.b", addresses=addrs)] == expected


def test_pylance_v2_blobs_in_a_struct_read_by_lancelet(tmp_path):
    uri = str(tmp_path / "v2.lance")
    lance.write_dataset(v2_struct_table(lance), uri)
    kinds = [d and d["b"] and d["b"]["kind"] for d in lance.dataset(uri).to_table().column("s").to_pylist()]
    assert kinds == [0, None, 1, 2, 0, None]  # inline, null, packed, dedicated, empty, parent null
    check_reads_like_pylance(uri)


@pytest.mark.parametrize("version", ["2.0", "2.1", "2.2"])
def test_pylance_v1_blobs_in_a_struct_read_by_lancelet(tmp_path, version):
    """At 2.0 and 2.1 the field stays blob v1; at 2.2 pylance stores it as blob v2. (2.0
    cannot store a null struct, so no parent is null there.)"""
    uri = str(tmp_path / "v1.lance")
    parent_nulls = version != "2.0"
    lance.write_dataset(v1_struct_table(parent_nulls=parent_nulls), uri, data_storage_version=version)
    check_reads_like_pylance(uri, EXPECTED if parent_nulls else VALUES)


def read(path):
    with open(path, "rb") as f:
        return f.read()


def on_disk(uri):
    """What a dataset looks like on disk, per data file: its version and fields, the
    schema it records, the page layout of its last column (the blob), the payload bytes
    before its pages, and its sidecars (names and bytes); with every row's descriptors."""
    ds = lance.dataset(uri)
    files = []
    for frag in ds.get_fragments():
        for d in frag.data_files():
            path = os.path.join(uri, "data", d.path)
            md = lance_file.LanceFileReader(path).metadata()
            layout = re.sub(r"\s+", " ", str(md.columns[-1].pages[0].encoding))
            first_page = min(b.position for c in md.columns for p in c.pages for b in p.buffers)
            side = os.path.join(uri, "data", d.path.removesuffix(".lance"))
            names = sorted(os.listdir(side)) if os.path.isdir(side) else []
            files.append(
                {
                    "version": (d.file_major_version, d.file_minor_version),
                    "fields": d.field_ids(),
                    "schema": file_schema_fields(path),
                    "layout": layout,
                    "payloads": read(path)[:first_page],
                    "sidecars": [(n, read(os.path.join(side, n))) for n in names],
                }
            )
    return ds.to_table().to_pylist(), files


CASES = {
    "v2 at 2.2": (v2_struct_table, "2.2", True),
    "v1 at 2.0": (lambda mod: v1_struct_table(parent_nulls=False), "2.0", False),
    "v1 at 2.1": (v1_struct_table, "2.1", True),
    "v1 at 2.2": (v1_struct_table, "2.2", True),
}


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("writer", LIBS)
def test_blobs_in_a_struct_written_by_either_library(tmp_path, case, writer):
    """Written by ``writer``; both libraries read every byte, and the dataset looks on
    disk exactly as pylance's own."""
    table, version, parent_nulls = CASES[case]
    uri = str(tmp_path / "w.lance")
    LIBS[writer].write_dataset(table(LIBS[writer]), uri, data_storage_version=version)
    check_reads_like_pylance(uri, EXPECTED if parent_nulls else VALUES)
    twin = str(tmp_path / "twin.lance")
    lance.write_dataset(table(lance), twin, data_storage_version=version)
    assert on_disk(uri) == on_disk(twin)


def test_struct_blob_layouts_match_pylance(tmp_path):
    """The values under a null parent are not stored, and the blob column's layers
    count that parent (pylance's layout, checked on lancelet's files)."""
    uri = str(tmp_path / "v2.lance")
    lancelet.write_dataset(v2_struct_table(lancelet), uri)
    rows, files = on_disk(uri)
    (f,) = files
    assert f["fields"] == [0, 2, 3]
    assert [(x["name"], x["id"], x["parent"]) for x in f["schema"]] == [
        ("id", 0, -1), ("s", 1, -1), ("k", 2, 1), ("b", 3, 1), ("kind", -1, -1), ("position", -1, -1),
        ("size", -1, -1), ("blob_id", -1, -1), ("blob_uri", -1, -1)]
    assert [len(b) for _, b in f["sidecars"]] == [40, 10]  # id 2 (dedicated), id 1 (packed)
    assert f["payloads"].startswith(b"abc") and b"zz" not in f["payloads"]
    assert [r["s"] and r["s"]["b"] and (r["s"]["b"]["kind"], r["s"]["b"]["blob_id"]) for r in rows] == [
        (0, 0), None, (1, 1), (2, 2), (0, 0), None]
    uri = str(tmp_path / "v1.lance")
    lancelet.write_dataset(v1_struct_table(), uri, data_storage_version="2.1")
    rows, (f,) = on_disk(uri)
    assert b"zz" not in f["payloads"] and f["payloads"][64:74] == b"0123456789"
    assert "BlobLayout" in f["layout"]
    assert f["layout"].endswith("layers: [ RepdefNullableItem, RepdefNullableItem, ], }, ), ), }"), f["layout"]
    assert "layers: [ RepdefAllValidItem, ]" in f["layout"]  # the inner page: every row valid


def v2_pair_table(mod, order):
    """``s: {b, c}`` (blob v2) and a top-level blob ``a``, in ``order``."""
    def f(n):
        return mod.blob_field(n, inline_size_threshold=4, dedicated_size_threshold=16)

    s = pa.StructArray.from_arrays(
        [mod.blob_array([b"s" * 10, b"S" * 40]), mod.blob_array([b"t" * 10, b"T" * 10])], fields=[f("b"), f("c")]
    )
    cols = {"s": s, "a": mod.blob_array([b"a" * 10, b"A" * 40])}
    t = pa.table({k: cols[k] for k in order})
    return t.cast(pa.schema([f("a") if k == "a" else t.schema.field("s") for k in order]))


@pytest.mark.parametrize("order", [["s", "a"], ["a", "s"]])
def test_blob_columns_in_and_out_of_structs_share_packs_in_pre_order(tmp_path, order):
    seen = []
    for name, mod in LIBS.items():
        uri = str(tmp_path / f"{name}.lance")
        mod.write_dataset(v2_pair_table(mod, order), uri)
        for reader in LIBS.values():
            ds = reader.dataset(uri)
            for col, want in [("s.b", [b"s" * 10, b"S" * 40]), ("s.c", [b"t" * 10, b"T" * 10]),
                              ("a", [b"a" * 10, b"A" * 40])]:
                assert [b for _, b in ds.read_blobs(col, indices=[0, 1])] == want
        seen.append(on_disk(uri))
    assert seen[0] == seen[1]
    pack = dict(seen[0][1][0]["sidecars"])["10000000000000000000000000000000.blob"]
    assert pack == (b"s" * 10 + b"t" * 10 + b"T" * 10 + b"a" * 10 if order[0] == "s" else
                    b"a" * 10 + b"s" * 10 + b"t" * 10 + b"T" * 10)


def test_blobs_in_lists_are_refused(tmp_path):
    blob = pa.field("b", pa.large_binary(), metadata={"lance-encoding:blob": "true"})
    items = pa.StructArray.from_arrays([pa.array([b"x", b"y"], pa.large_binary())], fields=[blob])
    t = pa.table({"l": pa.ListArray.from_arrays(pa.array([0, 1, 2], pa.int32()), items)})
    uri = str(tmp_path / "l.lance")
    with pytest.raises(UnsupportedFeatureError, match="l.item.b"):
        lancelet.write_dataset(t, uri, data_storage_version="2.1")
    assert not os.path.exists(os.path.join(uri, "_versions"))  # nothing committed


@pytest.mark.parametrize("first,second", [("pylance", "lancelet"), ("lancelet", "pylance")])
@pytest.mark.parametrize("case", ["v2 at 2.2", "v1 at 2.1"])
def test_appends_of_struct_blobs_both_ways(tmp_path, first, second, case):
    table, version, _ = CASES[case]
    uri = str(tmp_path / "a.lance")
    LIBS[first].write_dataset(table(LIBS[first]), uri, data_storage_version=version)
    LIBS[second].write_dataset(table(LIBS[second]), uri, mode="append")
    for mod in LIBS.values():
        ds = mod.dataset(uri)
        assert ds.version == 2
        assert [b for _, b in ds.read_blobs("s.b", indices=list(range(12)))] == EXPECTED * 2
        assert [None if f is None else f.read() for f in ds.take_blobs("s.b", indices=list(range(12)))] == EXPECTED * 2


@pytest.mark.parametrize("case", ["v2 at 2.2", "v1 at 2.1"])
@pytest.mark.parametrize("writer,rewriter", [(w, r) for w in LIBS for r in LIBS])
def test_updates_of_struct_blobs(tmp_path, case, writer, rewriter):
    """Updated rows move with the blobs in their structs, by either library."""
    table, version, _ = CASES[case]
    uri = str(tmp_path / "u.lance")
    for _ in range(2):
        LIBS[writer].write_dataset(table(LIBS[writer]), uri, mode="append", data_storage_version=version)
    assert LIBS[rewriter].dataset(uri).update({"id": "id + 100"}, where="id < 3") == {"num_rows_updated": 6}
    got = []
    for mod in LIBS.values():
        ds = mod.dataset(uri)
        ids = ds.to_table(columns=["id"]).column("id").to_pylist()
        blobs = [b for _, b in ds.read_blobs("s.b", indices=list(range(12)))]
        files = [None if f is None else f.read() for f in ds.take_blobs("s.b", indices=list(range(12)))]
        assert blobs == files
        got.append(sorted(zip(ids, [b or b"-" for b in blobs])))
    assert got[0] == got[1]
    assert got[0] == sorted(zip([i + (100 if i < 3 else 0) for i in range(6)] * 2, [b or b"-" for b in EXPECTED * 2]))


@pytest.mark.parametrize("case", ["v2 at 2.2", "v1 at 2.1"])
@pytest.mark.parametrize("writer,rewriter", [(w, r) for w in LIBS for r in LIBS])
def test_compaction_of_struct_blobs(tmp_path, case, writer, rewriter):
    """Compaction (after a delete) by either library looks on disk as pylance's: the
    payloads placed anew as a fresh write of the rows would place them."""
    table, version, _ = CASES[case]
    seen = []
    for k, (w, r) in enumerate([(writer, rewriter), ("pylance", "pylance")]):
        uri = str(tmp_path / f"{k}-{w}-{r}.lance")
        for _ in range(3):
            LIBS[w].write_dataset(table(LIBS[w]), uri, mode="append", data_storage_version=version)
        LIBS[r].dataset(uri).delete("id = 2")
        m = LIBS[r].dataset(uri).optimize.compact_files()
        assert (m.fragments_removed, m.fragments_added) == (3, 1)
        want = [v for v in EXPECTED if v != b"0123456789"] * 3
        for mod in LIBS.values():
            ds = mod.dataset(uri)
            assert [b for _, b in ds.read_blobs("s.b", indices=list(range(15)))] == want
        seen.append(on_disk(uri))
    assert seen[0] == seen[1]


def test_hostile_descriptors_in_structs_are_corrupt(tmp_path):
    import glob
    import struct

    from lancelet.errors import CorruptFileError

    # A packed v2 value whose sidecar was truncated.
    uri = str(tmp_path / "v2.lance")
    lancelet.write_dataset(v2_struct_table(lancelet), uri)
    pack = [p for p in glob.glob(f"{uri}/data/*/*.blob") if p.endswith("10000000000000000000000000000000.blob")][0]
    with open(pack, "r+b") as f:
        f.truncate(4)
    ds = lancelet.dataset(uri)
    with pytest.raises(CorruptFileError):
        ds.read_blobs("s.b", indices=[2])
    with pytest.raises(CorruptFileError):
        ds.take_blobs("s.b", indices=[2])
    assert ds.read_blobs("s.b", indices=[0]) == [(0, b"abc")]
    # A v1 descriptor (2.1, inside a struct) pointing past the end of its data file.
    uri = str(tmp_path / "v1.lance")
    lancelet.write_dataset(v1_struct_table(), uri, data_storage_version="2.1")
    path = glob.glob(f"{uri}/data/*.lance")[0]
    data = bytearray(read(path))
    at = data.rindex(struct.pack("<QQ", 64, 10))
    data[at : at + 8] = struct.pack("<Q", 10**12)
    with open(path, "wb") as f:
        f.write(bytes(data))
    # The file's checksums refuse the changed bytes (and every row in their 4 KiB block).
    with pytest.raises(CorruptFileError, match="checksum mismatch"):
        lancelet.dataset(uri).read_blobs("s.b", indices=[3])
    # Unchecked, the descriptor itself is refused: it points past the end of the file.
    ds = lancelet.dataset(uri, verify_checksums=False)
    with pytest.raises(CorruptFileError):
        ds.read_blobs("s.b", indices=[2])
    assert ds.read_blobs("s.b", indices=[3]) == [(3, b"y" * 40)]
