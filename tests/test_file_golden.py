"""Golden bytes: for the same input, lancelet writes byte-for-byte the file pylance writes.

This pins the whole wire format at once (page buffers, padding, protobuf encodings,
file descriptor, column metadata, offset tables, footer): any accidental change in
what lancelet writes fails here.
"""

from __future__ import annotations

import pyarrow as pa
import pytest

import lancelet.file as lf

plf = pytest.importorskip("lance.file")

pytestmark = pytest.mark.interop

CASES = {
    "int32_some_nulls": pa.table({"c": pa.array([1, None, 3, None, -1], pa.int32())}),
    "float64_no_nulls": pa.table({"c": pa.array([0.5, 1.5, -2.0], pa.float64())}),
    "bool_some_nulls": pa.table({"c": pa.array([True, None, False, True, None])}),
    "all_null_int64": pa.table({"c": pa.array([None] * 4, pa.int64())}),
    "string_some_nulls": pa.table({"c": pa.array(["a", None, "eeee", "", None])}),
    "all_null_string": pa.table({"c": pa.array([None, None], pa.string())}),
    "large_binary": pa.table({"c": pa.array([b"x", b"", None, b"yz"], pa.large_binary())}),
    "fixed_size_binary": pa.table({"c": pa.array([b"abcd", None, b"wxyz"], pa.binary(4))}),
    "timestamp_tz": pa.table({"c": pa.array([1, None, 3], pa.timestamp("us", tz="UTC"))}),
    "decimal": pa.table({"c": pa.array([1, None, 3], pa.decimal128(10, 2))}),
    "embedding": pa.table(
        {"c": pa.FixedSizeListArray.from_arrays(pa.array([float(i) for i in range(12)], pa.float32()), 4)}
    ),
    "list_with_nulls_and_empties": pa.table({"c": pa.array([[1, 2], None, [], [3, None, 5]], pa.list_(pa.int32()))}),
    "large_list_of_strings": pa.table({"c": pa.array([["a"], None, ["b", "c"]], pa.large_list(pa.string()))}),
    "struct": pa.table(
        {"c": pa.StructArray.from_arrays([pa.array([1, None, 3], pa.int32()), pa.array(["x", "y", None])], ["a", "b"])}
    ),
    "list_of_struct": pa.table(
        {
            "c": pa.array(
                [[{"a": 1, "b": "x"}], None, [{"a": 2, "b": None}, {"a": 3, "b": "z"}]],
                pa.list_(pa.struct([("a", pa.int32()), ("b", pa.string())])),
            )
        }
    ),
    "low_cardinality_strings": pa.table({"c": pa.array([["red", "green", None, "blue"][i % 4] for i in range(400)])}),
    "dictionary_with_null_keys": pa.table(
        {"c": pa.DictionaryArray.from_arrays(pa.array([0, 1, None, 2], pa.int32()), pa.array(["p", "q", "r"]))}
    ),
    "several_columns": pa.table(
        {"a": pa.array(range(100), pa.int64()), "b": pa.array([str(i) for i in range(100)]), "c": [i % 2 == 0 for i in range(100)]}
    ),
    "empty_file": pa.table({"a": pa.array([], pa.int32()), "b": pa.array([], pa.string())}),
}


def _write(module, path, table: pa.Table, batches: bool, **kwargs) -> bytes:
    with module.LanceFileWriter(str(path), table.schema, version="2.0", **kwargs) as w:
        for b in table.to_batches(max_chunksize=2 if batches else None) if table.num_rows else []:
            w.write_batch(b)
    return path.read_bytes()


@pytest.mark.parametrize("batches", [False, True], ids=["one_batch", "many_batches"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_lancelet_writes_the_same_bytes_as_pylance(tmp_path, name, batches):
    table = CASES[name]
    # Without checksums, pylance's very bytes; with them (the default), pylance's bytes up to
    # the checksum buffer, which follows the pages.
    ours = _write(lf, tmp_path / "ours.lance", table, batches, checksums=False)
    theirs = _write(plf, tmp_path / "theirs.lance", table, batches)
    checked = _write(lf, tmp_path / "checked.lance", table, batches)
    data_section = plf.LanceFileReader(str(tmp_path / "checked.lance")).metadata().global_buffers[-1].position
    assert checked[:data_section] == theirs[:data_section]
    if ours != theirs:
        first = next((i for i, (a, b) in enumerate(zip(ours, theirs)) if a != b), min(len(ours), len(theirs)))
        pytest.fail(
            f"{name}: files differ (lancelet {len(ours)} B, pylance {len(theirs)} B); first difference at byte "
            f"{first}: {ours[first:first + 16].hex()} vs {theirs[first:first + 16].hex()}"
        )


def test_global_buffers_are_written_like_pylance(tmp_path):
    table = pa.table({"a": pa.array([1, 2, 3], pa.int32())})
    files = {}
    for name, module in (("ours", lf), ("theirs", plf)):
        path = tmp_path / f"{name}.lance"
        extra = {"checksums": False} if module is lf else {}
        w = module.LanceFileWriter(str(path), table.schema, version="2.0", **extra)
        assert w.add_global_buffer(b"first buffer") == 1
        w.write_batch(table)
        assert w.add_global_buffer(b"\x00" * 100) == 2
        w.close()
        files[name] = path.read_bytes()
    assert files["ours"] == files["theirs"]
    for path in (tmp_path / "ours.lance", tmp_path / "theirs.lance"):
        for reader in (lf.LanceFileReader(str(path)), plf.LanceFileReader(str(path))):
            assert reader.read_global_buffer(1) == b"first buffer"
            assert reader.read_global_buffer(2) == b"\x00" * 100
