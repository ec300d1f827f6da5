"""Blob columns inside struct fields.

pylance 14 writes blob v2 (every kind) and blob v1 (2.0, 2.1) fields inside structs and
reads them through dotted paths (``take_blobs("s.b", ...)``). lancelet reads such
datasets the same way, byte for byte, including rows where the parent struct is null.
lancelet does not write blobs below the top level yet: it refuses them with
``UnsupportedFeatureError`` before writing anything (it used to write all-null values
for v2 and files pylance could not read for v1).
"""

from __future__ import annotations

import os

import pyarrow as pa
import pytest

import lancelet
from lancelet.errors import UnsupportedFeatureError

lance = pytest.importorskip("lance")

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


def v1_struct_table(parent_nulls=True):
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
    lance.write_dataset(v1_struct_table(parent_nulls), uri, data_storage_version=version)
    check_reads_like_pylance(uri, EXPECTED if parent_nulls else VALUES)


@pytest.mark.parametrize(
    "table,version",
    [
        (lambda: v2_struct_table(lancelet), "2.2"),
        (lambda: v1_struct_table(parent_nulls=False), "2.0"),
        (v1_struct_table, "2.1"),
        (v1_struct_table, "2.2"),
    ],
)
def test_lancelet_refuses_to_write_blobs_in_structs(tmp_path, table, version):
    uri = str(tmp_path / "w.lance")
    with pytest.raises(UnsupportedFeatureError, match="s.b"):
        lancelet.write_dataset(table(), uri, data_storage_version=version)
    assert not os.path.exists(os.path.join(uri, "_versions"))  # nothing committed


def test_append_to_pylance_struct_blobs_is_refused_and_loses_nothing(tmp_path):
    uri = str(tmp_path / "a.lance")
    lance.write_dataset(v2_struct_table(lance), uri)
    with pytest.raises(UnsupportedFeatureError):
        lancelet.write_dataset(v2_struct_table(lancelet), uri, mode="append")
    assert lance.dataset(uri).version == 1
    check_reads_like_pylance(uri)
