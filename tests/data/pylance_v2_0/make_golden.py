"""Writes the pylance 14.0.2 golden files of this directory (file format 2.0).

Run from the repository root with the project's venv:

    .venv/bin/python tests/data/pylance_v2_0/make_golden.py            # rewrite every file
    .venv/bin/python tests/data/pylance_v2_0/make_golden.py --check    # compare, write nothing

``--check`` writes every case to a temporary directory and compares it with the file
here: byte for byte, and (for the few writes pylance does not make deterministic) by what
pylance reads back. Names are ``<type>__nn|sn|an`` (no nulls; rows 1 and 3 null; all
null) for the 5-row cases; other names describe an edge case.
"""

from __future__ import annotations

import argparse
import decimal
import functools
import os
import sys
import tempfile
from typing import Any, Callable, Dict, List, Optional, Tuple

import lance
import pyarrow as pa

HERE = os.path.dirname(os.path.abspath(__file__))

#: A case: (schema, batches, LanceFileWriter keyword arguments, schema metadata added after writing)
Case = Tuple[pa.Schema, List[pa.RecordBatch], Dict[str, Any], Dict[str, str]]

D = decimal.Decimal

#: Five values of each type (row 3 is a large or edge value).
BASE: Dict[str, Tuple[pa.DataType, List[Any]]] = {
    "int8": (pa.int8(), [1, -2, 3, 127, -128]),
    "int16": (pa.int16(), [1, -2, 3, 0x1234, -32768]),
    "int32": (pa.int32(), [1, -2, 3, 0x12345678, -1]),
    "int64": (pa.int64(), [1, -2, 3, 0x123456789ABCDEF0, -1]),
    "uint8": (pa.uint8(), [1, 2, 3, 250, 255]),
    "uint16": (pa.uint16(), [1, 2, 3, 0x1234, 65535]),
    "uint32": (pa.uint32(), [1, 2, 3, 0x12345678, 2**32 - 1]),
    "uint64": (pa.uint64(), [1, 2, 3, 0x123456789ABCDEF0, 2**64 - 1]),
    "float16": (pa.float16(), [1.0, -2.5, 0.0, 65504.0, 0.5]),
    "float32": (pa.float32(), [1.0, -2.5, 0.0, 3.25, 1e10]),
    "float64": (pa.float64(), [1.0, -2.5, 0.0, 3.25, 1e100]),
    "bool": (pa.bool_(), [True, False, True, True, False]),
    "string": (pa.string(), ["a", "bb", "", "dddd", "eeeee"]),
    "large_string": (pa.large_string(), ["a", "bb", "", "dddd", "eeeee"]),
    "binary": (pa.binary(), [b"\x01", b"\x02\x03", b"", b"\xff\xfe\xfd\xfc", b"abcde"]),
    "large_binary": (pa.large_binary(), [b"\x01", b"\x02\x03", b"", b"\xff\xfe\xfd\xfc", b"abcde"]),
    "fsb4": (pa.binary(4), [b"\x01\x02\x03\x04", b"abcd", b"\x00" * 4, b"\xff" * 4, b"wxyz"]),
    "date32": (pa.date32(), [1, 10957, -1, 19782, 0]),
    "date64": (pa.date64(), [d * 86_400_000 for d in (1, 10957, -1, 19782, 0)]),
    "decimal128": (pa.decimal128(10, 2), [D("1.00"), D("-2.50"), D("0.00"), D("12345678.99"), D("-0.01")]),
    "decimal256": (pa.decimal256(40, 2), [D("1.00"), D("-2.50"), D("0.00"), D("12345678.99"), D("-0.01")]),
    "time32s": (pa.time32("s"), [1, 2, 3, 86_399, 0]),
    "time32ms": (pa.time32("ms"), [1, 2, 3, 86_399_999, 0]),
    "time64us": (pa.time64("us"), [1, 2, 3, 86_399_999_999, 0]),
    "time64ns": (pa.time64("ns"), [1, 2, 3, 86_399_999_999_999, 0]),
    "null": (pa.null(), [None] * 5),
    "fsl_f32_4": (pa.list_(pa.float32(), 4), [[float(4 * i + j + 1) for j in range(4)] for i in range(5)]),
    "fsl_u8_4": (pa.list_(pa.uint8(), 4), [[4 * i + j + 1 for j in range(4)] for i in range(5)]),
    "list_i32": (pa.list_(pa.int32()), [[1, 2], [3], [], [4, 5, 6], [7]]),
    "large_list_str": (pa.large_list(pa.string()), [["a", "bb"], ["c"], [], ["dd", "e", "f"], ["g"]]),
}
for _unit in ("s", "ms", "us", "ns"):
    BASE[f"duration_{_unit}"] = (pa.duration(_unit), [1, 2, 3, 1_700_000_000, -1])
    BASE[f"ts_{_unit}"] = (pa.timestamp(_unit), [1, 2, 3, 1_700_000_000, -1])
    BASE[f"ts_{_unit}_utc"] = (pa.timestamp(_unit, "UTC"), [1, 2, 3, 1_700_000_000, -1])
BASE["ts_us_ny"] = (pa.timestamp("us", "America/New_York"), [1, 2, 3, 1_700_000_000, -1])

#: Rows that are null in the ``sn`` variant.
SOME_NULLS = (1, 3)


def _one(name: str, array: pa.Array, **writer: Any) -> Case:
    batch = pa.record_batch([array], names=[name])
    return batch.schema, [batch], writer, {}


def _variant(values: List[Any], variant: str) -> List[Any]:
    if variant == "nn":
        return list(values)
    if variant == "sn":
        return [None if i in SOME_NULLS else v for i, v in enumerate(values)]
    return [None] * len(values)


def _dictionary(values: List[Optional[str]], index_type: pa.DataType, words=("foo", "bar", "baz")) -> pa.Array:
    indices = pa.array([None if v is None else words.index(v) for v in values], index_type)
    return pa.DictionaryArray.from_arrays(indices, pa.array(list(words)))


def _typed(t: pa.DataType, values: List[Any]) -> Case:
    return _one("c", pa.array(values, t))


def _dict_case(values: List[Optional[str]]) -> Case:
    return _one("c", _dictionary(values, pa.int32()))


def typed_cases() -> Dict[str, Callable[[], Case]]:
    out: Dict[str, Callable[[], Case]] = {}
    for name, (t, values) in BASE.items():
        for variant in ("nn", "sn", "an"):
            out[f"{name}__{variant}"] = functools.partial(_typed, t, _variant(values, variant))
    words = ["foo", "bar", "foo", "baz", "bar"]
    for variant in ("nn", "sn", "an"):
        out[f"dict_i32_str__{variant}"] = functools.partial(_dict_case, _variant(words, variant))
    out["dict_i8_str__nn"] = lambda: _one("c", _dictionary(words, pa.int8()))
    out["unsupported__dict_u16_i64__nn"] = lambda: _one(
        "c", pa.DictionaryArray.from_arrays(pa.array([0, 1, 0, 2, 1], pa.uint16()), pa.array([10, 20, 30], pa.int64()))
    )
    out["struct__nn"] = lambda: _one(
        "c", pa.StructArray.from_arrays([pa.array([1, 2, 3, 4, 5], pa.int32()), pa.array(["x", "yy", "", "zzzz", "w"])],
                                        names=["a", "b"])
    )
    out["struct__childnulls"] = lambda: _one(
        "c", pa.StructArray.from_arrays([pa.array([1, None, 3, 4, None], pa.int32()),
                                         pa.array(["x", "yy", None, "zzzz", None])], names=["a", "b"])
    )
    out["fsl_f32_4__itemnulls"] = lambda: _one(
        "c", pa.array([[1.0, None, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0], [9.0, 10.0, None, 12.0], [13.0, 14.0, 15.0, 16.0],
                       [17.0, 18.0, 19.0, 20.0]], pa.list_(pa.float32(), 4))
    )
    out["list_i32__mixed"] = lambda: _one("c", pa.array([[1, 2], None, [], [3, 4, 5], [None, 6]], pa.list_(pa.int32())))
    out["list_i32__emptyonly"] = lambda: _one("c", pa.array([[]] * 5, pa.list_(pa.int32())))
    out["large_list_str__mixed"] = lambda: _one(
        "c", pa.array([["a", "bb"], None, [], ["dd", None, "f"], ["g"]], pa.large_list(pa.string()))
    )
    return out


def _lowcard(n: int, nulls_every: int = 0) -> pa.Array:
    words = ["red", "green", "blue"]
    return pa.array([None if nulls_every and i % nulls_every == 0 else words[i % 3] for i in range(n)])


def edge_cases() -> Dict[str, Callable[[], Case]]:
    i32 = pa.int32()
    s_ab = pa.struct([("a", i32), ("b", pa.string())])
    out: Dict[str, Callable[[], Case]] = {
        "t_int32": lambda: _one("a", pa.array([1, 2, None, 4, 5], i32)),
        "ver_2.0": lambda: _one("a", pa.array([1], i32)),
        "ctx": lambda: _one("a", pa.array([1, 2, 3], i32)),
        "nonnull_no_nulls": lambda: (pa.schema([pa.field("c", i32, nullable=False)]),
                                     [pa.record_batch([pa.array([1, 2, 3], i32)],
                                                      schema=pa.schema([pa.field("c", i32, nullable=False)]))], {}, {}),
        "validity_no_nulls": lambda: _one("c", pa.array([1, 2, 3, 4, 5], i32)),
        # Validity bits set past the last row, and values under the nulls.
        "validity_trailing_bits": lambda: _one("c", pa.Array.from_buffers(
            i32, 5, [pa.py_buffer(b"\xf5"), pa.array([1, 2, 3, 4, 5], i32).buffers()[1]])),
        # An all-valid bitmap with an unknown null count.
        "validity_no_nulls_unknown": lambda: _one("c", pa.Array.from_buffers(
            i32, 5, [pa.py_buffer(b"\x1f"), pa.array([1, 2, 3, 4, 5], i32).buffers()[1]], null_count=-1)),
        "zero_columns": lambda: (pa.schema([]), [], {}, {}),
        "zero_columns_batch": lambda: (pa.schema([]), [pa.RecordBatch.from_pydict({})], {}, {}),
        "bool_1000": lambda: _one("c", pa.array([i % 3 == 0 for i in range(1000)])),
        "bool_sliced": lambda: _one("c", pa.array([False, False, True, False, True, True, True, False]).slice(2, 5)),
        "sliced_int32": lambda: _one("c", pa.array([0, 0, 1, None, 3, 4, None, 6, 0], i32).slice(2, 6)),
        "sliced_string": lambda: _one("c", pa.array(["a", "bb", None, "ccc", "dd", "e"]).slice(2, 4)),
        "list_sliced": lambda: _one("c", pa.array([[1], [2, 3], None, [4, 5, 6], [], [7]], pa.list_(i32)).slice(1, 4)),
        "list_null_nonempty_slot": lambda: _one("c", pa.ListArray.from_arrays(
            pa.array([0, 2, 4, 5], i32), pa.array([1, 2, 3, 4, 5], i32), mask=pa.array([False, True, False]))),
        "card100_str_1000": lambda: _one("c", pa.array([f"v{i % 100}" for i in range(1000)])),
        "card99_str_1000": lambda: _one("c", pa.array([f"v{i % 99}" for i in range(1000)])),
        "lowcard_str_10": lambda: _one("c", _lowcard(10)),
        "lowcard_str_99": lambda: _one("c", _lowcard(99)),
        "lowcard_str_100": lambda: _one("c", _lowcard(100)),
        "lowcard_str_1000": lambda: _one("c", _lowcard(1000)),
        "lowcard_str_1000__sn": lambda: _one("c", _lowcard(1000, nulls_every=7)),
        "str_allnull_200": lambda: _one("c", pa.array([None] * 200, pa.string())),
        "str_empty_strings_150": lambda: _one("c", pa.array([""] * 150)),
        "str_dict_with_empty_150": lambda: _one("c", pa.array([["", "a", None][i % 3] for i in range(150)])),
        "string_maxpage": lambda: _one("s", pa.array([f"val{i:05d}" for i in range(1000)]), max_page_bytes=4096),
        "lt": lambda: _one("c", pa.array(["x"], pa.large_string())),
        "dict_binary": lambda: _one("c", pa.DictionaryArray.from_arrays(pa.array([0, 1, 0], i32), pa.array([b"x", b"y"]))),
        "dict_large_string": lambda: _one("c", pa.DictionaryArray.from_arrays(
            pa.array([0, 1, 0], i32), pa.array(["x", "y"], pa.large_string()))),
        "fsl_bool": lambda: _one("c", pa.array([[True, False], [False, True]], pa.list_(pa.bool_(), 2))),
        "fsl_parentnull_childvalid": lambda: _one("c", pa.FixedSizeListArray.from_arrays(
            pa.array([1, 2, 3, 4, 5, 6, 7, 8], i32), 2, mask=pa.array([False, True, False, False]))),
        "list_dict": lambda: _one("c", pa.array([["a", "b"], ["a"]], pa.list_(pa.dictionary(i32, pa.string())))),
        "list_fsl": lambda: _one("c", pa.array([[[1.0, 2.0]], [], [[3.0, 4.0], [5.0, 6.0]]],
                                               pa.list_(pa.list_(pa.float32(), 2)))),
        "list_list": lambda: _one("c", pa.array([[[1], [2, 3]], [], None, [[4, 5]], [[], None]], pa.list_(pa.list_(i32)))),
        "list_null_type": lambda: _one("c", pa.array([[None], [None, None]], pa.list_(pa.null()))),
        "list_struct": lambda: _one("c", pa.array(
            [[{"a": 1, "b": "x"}, {"a": 2, "b": "y"}], [], None, [{"a": 3, "b": "z"}], [{"a": 4, "b": None}]],
            pa.list_(s_ab))),
        "struct_list": lambda: _one("c", pa.array(
            [{"a": 1, "l": [1, 2]}, {"a": 2, "l": []}, {"a": 3, "l": None}, {"a": 4, "l": [3]}, {"a": 5, "l": [4, 5, 6]}],
            pa.struct([("a", i32), ("l", pa.list_(i32))]))),
        "nested_struct": lambda: _one("c", pa.array(
            [{"x": i, "inner": {"y": 10 * i, "z": str(i)}} for i in range(5)],
            pa.struct([("x", i32), ("inner", pa.struct([("y", pa.int64()), ("z", pa.string())]))]))),
        "null_in_struct": lambda: _one("c", pa.array([{"n": None, "x": 1}, {"n": None, "x": 2}],
                                                     pa.struct([("n", pa.null()), ("x", i32)]))),
        "struct_empty": lambda: _one("c", pa.StructArray.from_arrays([], fields=[], mask=None) if False
                                     else pa.array([{}, {}], pa.struct([]))),
        "packed_struct": lambda: (
            pa.schema([pa.field("c", pa.struct([("x", i32), ("y", pa.float64())]),
                                metadata={"lance-encoding:packed": "true"})]),
            [pa.record_batch([pa.array([{"x": 1, "y": 2.0}, {"x": 3, "y": 4.0}],
                                       pa.struct([("x", i32), ("y", pa.float64())]))],
                             schema=pa.schema([pa.field("c", pa.struct([("x", i32), ("y", pa.float64())]),
                                                        metadata={"lance-encoding:packed": "true"})]))],
            {}, {}),
        "zstd_int": lambda: _with_field_metadata("c", pa.array([1, 2, 3], i32), {"lance-encoding:compression": "zstd"}),
        "unsupported__zstd_string": lambda: _with_field_metadata(
            "c", pa.array(["hello", "world", "hello"]), {"lance-encoding:compression": "zstd"}),
        "unsupported__fsst_string": lambda: _with_field_metadata(
            "c", pa.array(["hello", "world", "hello"]), {"lance-encoding:compression": "fsst"}),
        "unsupported__blob": lambda: _with_field_metadata(
            "c", pa.array([b"abc", None, b"defgh"], pa.large_binary()), {"lance-encoding:blob": "true"}),
        "unsupported__fsl_fsl": lambda: _one("c", pa.array([[[1, 2], [3, 4]], [[5, 6], [7, 8]]],
                                                           pa.list_(pa.list_(i32, 2), 2))),
        "unsupported__ver_2.1": lambda: _one("a", pa.array([1], i32), version="2.1"),
        "unsupported__ver_2.2": lambda: _one("a", pa.array([1], i32), version="2.2"),
        "empty_0rows": lambda: (pa.schema([("a", i32), ("b", pa.string())]), [], {}, {}),
        "empty_0rows_batch": lambda: (pa.schema([("a", i32), ("b", pa.string())]),
                                      [pa.record_batch([pa.array([], i32), pa.array([], pa.string())], names=["a", "b"])],
                                      {}, {}),
        "empty_nested": lambda: (pa.schema([("s", pa.struct([("a", i32)])), ("l", pa.list_(i32))]), [], {}, {}),
        "after": lambda: (pa.schema([("a", i32)]), [], {}, {}),
        "empty_meta_value": lambda: (
            pa.schema([pa.field("a", i32, metadata={"e": ""})], metadata={"x": ""}),
            [pa.record_batch([pa.array([1], i32)],
                             schema=pa.schema([pa.field("a", i32, metadata={"e": ""})], metadata={"x": ""}))], {}, {}),
        "schema_meta": lambda: (
            pa.schema([pa.field("a", i32, metadata={"fk": "fv"}), pa.field("b", i32, nullable=False)],
                      metadata={"sk": "sv"}),
            [pa.record_batch([pa.array([1, 2], i32), pa.array([3, 4], i32)],
                             schema=pa.schema([pa.field("a", i32, metadata={"fk": "fv"}),
                                               pa.field("b", i32, nullable=False)], metadata={"sk": "sv"}))],
            {}, {"added": "later"}),
        "noschema": lambda: (None, [pa.record_batch([pa.array([1, 2], i32)], names=["z"])], {}, {}),
        "multi_batch_small": lambda: (pa.schema([("a", i32), ("b", pa.string())]),
                                      [pa.record_batch([pa.array([3 * k + j for j in range(3)], i32),
                                                        pa.array([f"s{k}{j}" for j in range(3)])], names=["a", "b"])
                                       for k in range(4)], {}, {}),
        # Two batches whose values differ ("a" in the first, "d" in the second).
        "dict_2batches": lambda: (pa.schema([("s", pa.string())]),
                                  [pa.record_batch([pa.array([first, "b", "c"] * k)], names=["s"])
                                   for first, k in (("a", 17), ("d", 20))], {}, {}),
        "list_2batches": lambda: _two_batches_list({}),
        "list_2batches_cache1": lambda: _two_batches_list({"data_cache_bytes": 1}),
        "struct_2batches": lambda: _two_batches_struct({}),
        "struct_2batches_cache1": lambda: _two_batches_struct({"data_cache_bytes": 1}),
        "lc_split": lambda: (pa.schema([("s", pa.string())]),
                             [pa.record_batch([_lowcard(3000).slice(a, 1000)], names=["s"]) for a in (0, 1000, 2000)],
                             {"data_cache_bytes": 1}, {}),
        "fsl_split": lambda: _one("f", pa.array([[float(j) for j in range(8)]] * 1000, pa.list_(pa.float32(), 8)),
                                  max_page_bytes=8192),
        "interleave_cache3000": lambda: (pa.schema([("small", pa.int8()), ("big", pa.int64())]),
                                         [pa.record_batch([pa.array([i % 100 for i in range(a, a + 200)], pa.int8()),
                                                           pa.array(range(a, a + 200), pa.int64())],
                                                          names=["small", "big"]) for a in (0, 200, 400)],
                                         {"data_cache_bytes": 3000}, {}),
        "uuid_ext": lambda: _one("c", pa.ExtensionArray.from_storage(
            pa.uuid(), pa.array([(1).to_bytes(16, "big"), (2).to_bytes(16, "big")], pa.binary(16)))),
        "json_ext": lambda: _json_case(),
    }
    return out


def _with_field_metadata(name: str, array: pa.Array, metadata: Dict[str, str]) -> Case:
    schema = pa.schema([pa.field(name, array.type, metadata=metadata)])
    return schema, [pa.record_batch([array], schema=schema)], {}, {}


def _two_batches_list(writer: Dict[str, Any]) -> Case:
    schema = pa.schema([("l", pa.list_(pa.int32())), ("i", pa.int64())])
    rows = [[1, 2], None, [3], [], [4, 5, 6], None]
    batches = [pa.record_batch([pa.array(rows[a:b], pa.list_(pa.int32())), pa.array(range(a + 1, b + 1), pa.int64())],
                               schema=schema) for a, b in ((0, 3), (3, 6))]
    return schema, batches, writer, {}


def _two_batches_struct(writer: Dict[str, Any]) -> Case:
    t = pa.struct([("a", pa.int32()), ("b", pa.string())])
    schema = pa.schema([("s", t), ("x", pa.int32())])
    rows = [{"a": 1, "b": "p"}, {"a": 2, "b": "q"}, {"a": 3, "b": "r"}]
    batches = [pa.record_batch([pa.array(rows[a:b], t), pa.array(range(7 + a, 7 + b), pa.int32())], schema=schema)
               for a, b in (((0, 1), (1, 3)) if not writer else ((0, 2), (2, 3)))]
    return schema, batches, writer, {}


def _json_case() -> Case:
    # pylance stores a JSON column as its binary JSONB encoding in a large_binary column.
    import lance.file  # noqa: F401

    values = [b"@\x00\x00\x01\x10\x00\x00\x01 \x00\x00\x02aP\x01", b"\x80\x00\x00\x00"]
    field = pa.field("c", pa.large_binary(),
                     metadata={"ARROW:extension:name": "lance.json", "ARROW:extension:metadata": ""})
    schema = pa.schema([field])
    return schema, [pa.record_batch([pa.array(values, pa.large_binary())], schema=schema)], {}, {}


def all_cases() -> Dict[str, Callable[[], Case]]:
    return {**typed_cases(), **edge_cases()}


def write(path: str, case: Case) -> None:
    schema, batches, writer, later = case
    writer = dict(writer)
    version = writer.pop("version", "2.0")
    w = lance.file.LanceFileWriter(path, schema, version=version, **writer)
    for b in batches:
        w.write_batch(b)
    for k, v in later.items():
        w.add_schema_metadata(k, v)
    w.close()


def _read(path: str) -> Any:
    r = lance.file.LanceFileReader(path)
    try:
        return r.read_all().to_table()
    except Exception:  # noqa: BLE001 - pylance refuses to read zero columns
        return (r.metadata().num_rows, str(r.metadata().schema))


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="compare with the committed files; write nothing")
    parser.add_argument("names", nargs="*", help="only these cases")
    args = parser.parse_args(argv)
    cases = all_cases()
    names = args.names or sorted(cases)
    tmp = tempfile.mkdtemp()
    bad = 0
    for name in names:
        path = os.path.join(HERE, name + ".lance")
        target = os.path.join(tmp, name + ".lance") if args.check else path
        write(target, cases[name]())
        if args.check:
            same_bytes = open(target, "rb").read() == open(path, "rb").read()
            same_rows = same_bytes or _read(target) == _read(path)
            if not same_rows:
                bad += 1
            print(f"{name}: {'identical' if same_bytes else 'same rows' if same_rows else 'DIFFERENT'}")
    missing = sorted(f[:-6] for f in os.listdir(HERE) if f.endswith(".lance") and f[:-6] not in cases)
    if missing:
        print("files without a case:", " ".join(missing))
    return 1 if bad or missing else 0


if __name__ == "__main__":
    sys.exit(main())
