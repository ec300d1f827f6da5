"""JSON columns (``pa.json_()``) stored as pylance 14 stores them: JSONB in ``large_binary``
with the ``lance.json`` extension and logical type ``json`` (issue 18, drop-in).

Every test writes with one library and reads with the other, both ways: the text read back
is pylance's (compact, keys sorted, numbers as JSONB prints them), the stored JSONB bytes
are the same whichever library wrote them (read through both ``LanceFileReader``s, which
return the raw ``large_binary``), and the JSON SQL functions give pylance's results on
either library's datasets.
"""

from __future__ import annotations

import itertools
import json
import math
import os
import random
import re

import pyarrow as pa
import pytest

lance = pytest.importorskip("lance")

import lance.file  # noqa: E402,F811

import lancelet  # noqa: E402
import lancelet.file  # noqa: E402

pytestmark = pytest.mark.interop

LIBS = {"pylance": lance, "lancelet": lancelet}
PAIRS = list(itertools.product(LIBS, LIBS))
JSON_MD = {b"ARROW:extension:name": b"lance.json", b"ARROW:extension:metadata": b""}

# Values of the notes (§1, §2): plain JSON, pylance's lenient forms, numbers of every width.
VALUES = [
    '{"a":1,"b":"x"}',
    "[1,2,3]",
    None,
    '"str"',
    "3.5",
    "true",
    "null",
    '{"n":{"m":[1,{"k":false}]}}',
    '{ "b" : 1 , "a" : 2 }',
    '{"zz":1,"a":{"y":1,"b":2},"m":3}',
    '{"b":1,"aa":2,"a":3,"B":4,"é":5,"_":6}',
    '[1.5, -2, 300, {"a":[]}]',
    "",
    "  ",
    "NULL",
    "True",
    "nan",
    "-Infinity",
    "1e400",
    "{'a':1}",
    "{a: 'x', $b_2: [1,,3]}",
    "[1,]",
    "01",
    ".5",
    "1.",
    "+1",
    "-0",
    "-0.0",
    "0.0",
    "0x1F",
    "-0x10",
    '"a\tb\\u0000"',
    '"\\ud800x"',
    '"\\ud83d\\ude00"',
    '"q\\"b\\\\s\\/t\\u0001e\\u001f\\u007f\\u2028"',
    "0",
    "-1",
    "127",
    "128",
    "255",
    "256",
    "65536",
    "-128",
    "-129",
    "-32769",
    "4294967296",
    "18446744073709551615",
    "18446744073709551616",
    "-9223372036854775808",
    "-9223372036854775809",
    "123456789012345678901234567890",
    "1.0",
    "1e10",
    "1e15",
    "1e16",
    "1e-4",
    "1e-5",
    "1.5e-7",
    "5e-324",
    "1.7976931348623157e308",
    "0.30000000000000004",
    "[[[[[]]]]]",
    '{"":1}',
]

# Invalid text and the message pylance gives (lancelet's error carries the same).
INVALID = {
    "not json": "expected ident, pos 2",
    '{"a":1': "EOF while parsing a value, pos 6",
    '{"a":1,"a":2}': 'duplicate object attribute "a", pos 10',
    "1 2": "trailing characters, pos 3",
    "-": "invalid number, pos 1",
    '"\\x41"': "invalid escaped '78', pos 4",
    "/*c*/1": "expected value, pos 1",
    '{"a":1,}': "object attribute name cannot be invalid character, pos 7",
    "inf": "EOF while parsing a value, pos 3",
    "-NaN": "invalid number, pos 4",
    "[1 2]": "expected `,` or `]`, pos 3",
}


def json_table(values, **extra) -> pa.Table:
    cols = {"id": pa.array(range(len(values)), pa.int64()), "j": pa.array(values, pa.json_())}
    cols.update(extra)
    return pa.table(cols)


def data_paths(uri: str) -> list:
    """Data files of the dataset's fragments, in fragment order."""
    return [
        os.path.join(uri, "data", df.path) for frag in lance.dataset(uri).get_fragments() for df in frag.data_files()
    ]


def stored(uri: str, column: str = "j") -> list:
    """The stored values of ``column`` (JSONB bytes) in every data file holding it: both
    file readers return the same raw ``large_binary`` with the ``lance.json`` metadata."""
    out = []
    for path in data_paths(uri):
        theirs = lance.file.LanceFileReader(path).read_all().to_table()
        if column not in theirs.column_names:
            continue
        ours = lancelet.file.LanceFileReader(path).read_all().to_table()
        for t in (theirs, ours):
            f = t.schema.field(column)
            assert f.type == pa.large_binary() and f.metadata[b"ARROW:extension:name"] == b"lance.json", f
        assert ours.column(column).to_pylist() == theirs.column(column).to_pylist()
        out.extend(theirs.column(column).to_pylist())
    return out


def read_both(uri: str, **kw) -> pa.Table:
    """The dataset read by both libraries: the same schema (JSON as ``arrow.json`` text) and rows."""
    theirs = lance.dataset(uri).to_table(**kw)
    ours = lancelet.dataset(uri).to_table(**kw)
    assert ours.schema.equals(theirs.schema, check_metadata=True), (ours.schema, theirs.schema)
    assert ours.to_pylist() == theirs.to_pylist()
    return theirs


def outcome(fn):
    """``("ok", value)`` or ``("error", None)``."""
    try:
        return ("ok", fn())
    except Exception:  # noqa: BLE001 - either library's error class
        return ("error", None)


@pytest.mark.parametrize("version", ["2.0", "2.1", "2.2"])
@pytest.mark.parametrize("writer", list(LIBS))
def test_written_by_either_read_by_both(tmp_path, writer, version):
    uri = str(tmp_path / "ds")
    LIBS[writer].write_dataset(json_table(VALUES), uri, data_storage_version=version)
    t = read_both(uri)
    assert t.schema.field("j").type == pa.json_()
    ref = str(tmp_path / "ref")
    lance.write_dataset(json_table(VALUES), ref, data_storage_version=version)
    assert t.to_pylist() == lance.dataset(ref).to_table().to_pylist()
    # The stored JSONB is byte for byte what pylance stores.
    assert stored(uri) == stored(ref)
    # The manifest field: logical type json, extension lance.json (as pylance writes it).
    schema = str(lance.dataset(uri).lance_schema)
    assert re.search(r'name: "j".*?logical_type: LogicalType\("json"\)', schema, re.S), schema
    # Scans, takes, heads, batches and fragment reads all give JSON text.
    for lib in LIBS.values():
        ds = lib.dataset(uri)
        assert ds.schema.field("j").type == pa.json_()
        assert ds.take([0, 7]).column("j").to_pylist() == [t["j"][0].as_py(), t["j"][7].as_py()]
        assert ds.head(2).schema.field("j").type == pa.json_()
        batches = list(ds.to_batches(batch_size=5))
        assert all(b.schema.field("j").type == pa.json_() for b in batches)
        frag = ds.get_fragments()[0]
        assert frag.to_table().column("j").to_pylist() == t.column("j").to_pylist()
        assert ds.to_table(columns=["j"], filter="id = 0").column("j").to_pylist() == ['{"a":1,"b":"x"}']


def test_legacy_datasets_of_pylance_read_the_same(tmp_path):
    uri = str(tmp_path / "ds")
    lance.write_dataset(json_table(VALUES[:12]), uri, data_storage_version="legacy")
    read_both(uri)


@pytest.mark.parametrize("writer", list(LIBS))
def test_each_value_reads_as_pylance_prints_it(tmp_path, writer):
    """Per value, so that a difference names the value."""
    ref = str(tmp_path / "ref")
    lance.write_dataset(json_table(VALUES), ref)
    expected = lance.dataset(ref).to_table().column("j").to_pylist()
    expected_bytes = stored(ref)
    uri = str(tmp_path / "ds")
    LIBS[writer].write_dataset(json_table(VALUES), uri)
    for lib in LIBS.values():
        got = lib.dataset(uri).to_table().column("j").to_pylist()
        for value, want, have in zip(VALUES, expected, got):
            assert have == want, (value, lib.__name__)
    for value, want, have in zip(VALUES, expected_bytes, stored(uri)):
        assert have == want, value


@pytest.mark.parametrize("text", list(INVALID))
def test_invalid_json_is_an_error_in_both(tmp_path, text):
    with pytest.raises(OSError):
        lance.write_dataset(json_table([text]), str(tmp_path / "theirs"))
    with pytest.raises(ValueError, match=re.escape(INVALID[text])):
        lancelet.write_dataset(json_table(["[1]", text]), str(tmp_path / "ours"))
    assert not (tmp_path / "ours").exists() or not list((tmp_path / "ours").rglob("*.manifest"))


def test_random_floats_print_as_pylance_prints_them(tmp_path):
    rng = random.Random(7)
    floats = [rng.uniform(-1, 1) * 10 ** rng.uniform(-30, 30) for _ in range(300)]
    floats += [m * 10.0**e for e in range(-12, 26) for m in (1, 1.5, 9.999999, 3.14159265358979)]
    docs = [json.dumps({"v": f}) for f in floats if math.isfinite(f)]
    ref, uri = str(tmp_path / "ref"), str(tmp_path / "ds")
    lance.write_dataset(json_table(docs), ref)
    lancelet.write_dataset(json_table(docs), uri)
    assert stored(uri) == stored(ref)
    expected = lance.dataset(ref).to_table().column("j").to_pylist()
    assert lancelet.dataset(ref).to_table().column("j").to_pylist() == expected
    assert lancelet.dataset(uri).to_table(columns={"x": "json_extract(j, '$.v')"}).column("x").to_pylist() == [
        e[len('{"v":') : -1] for e in expected
    ]


def test_field_metadata_and_input_forms(tmp_path):
    """``large_utf8`` JSON and ``utf8`` marked ``arrow.json`` (other keys kept) are stored
    as JSON; ``large_binary`` marked ``lance.json`` is stored as it is (raw bytes that are
    not JSONB read back as text)."""
    vals = ['{"b":1,"a":2}', None]
    raw = [bytes.fromhex("400000011000000120000002615001"), b'{"b":1,"a":2}', b"garbage", b"", None]
    schema = pa.schema(
        [
            pa.field("big", pa.json_(pa.large_utf8())),
            pa.field("marked", pa.utf8(), metadata={"ARROW:extension:name": "arrow.json", "foo": "bar"}),
        ]
    )
    t = pa.Table.from_arrays([pa.array(vals, pa.large_utf8()), pa.array(vals)], schema=schema)
    raw_t = pa.table(
        [pa.array(raw, pa.large_binary())],
        schema=pa.schema([pa.field("r", pa.large_binary(), metadata={"ARROW:extension:name": "lance.json"})]),
    )
    for writer in LIBS.values():
        uri = str(tmp_path / f"{writer.__name__}")
        writer.write_dataset(t, uri)
        out = read_both(uri)
        assert out.schema.field("big").type == pa.json_()
        assert out.schema.field("marked").metadata == {b"foo": b"bar"}
        assert out.column("marked").to_pylist() == ['{"a":2,"b":1}', None]
        raw_uri = str(tmp_path / f"{writer.__name__}_raw")
        writer.write_dataset(raw_t, raw_uri)
        out = read_both(raw_uri)
        assert out.column("r").to_pylist() == ['{"a":1}', '{"b":1,"a":2}', "garbage", "null", None]
        assert stored(raw_uri, "r") == raw


FUNC_DOCS = [
    '{"a":1,"s":"hi","f":2.5,"b":true,"arr":[1,2,"x"],"o":{"k":"v","n":null}}',
    '{"a":"2","s":3,"f":"1.5","b":"true","arr":[],"o":{"k":1}}',
    None,
    "[10,20,30]",
    '"plain"',
    '{"a":null}',
    '{"v":-2.5,"big":18446744073709551615,"e":"1e3","y":"YES","z":0,"g":1e20}',
    '[1.5,true,"2",null,{"k":1},"a\\"b",[1,2],1.0,100,"x"]',
]

FUNC_EXPRS = [
    "json_extract(j, '$.a')",
    "json_extract(j, '$.o')",
    "json_extract(j, '$.s')",
    "json_extract(j, '$.arr[1]')",
    "json_extract(j, '$[1]')",
    "json_extract(j, '$')",
    "json_extract(j, '$.o.k')",
    "json_extract(j, '$.missing')",
    "json_extract(j, 'a')",
    "json_extract(j, '$.arr[*]')",
    "json_extract(j, '$[last]')",
    "json_extract(j, '$[0 to 1]')",
    "json_extract(j, '$.\"a\"')",
    "json_extract(j, '$[\"a\"]')",
    "json_extract(j, '$.o.*')",
    "json_get(j, 'a')",
    "json_get(j, 'o')",
    "json_get(j, '1')",
    "json_get(j, 1)",
    "json_get_string(json_get(j, 'o'), 'k')",
    "json_get_string(j, 's')",
    "json_get_string(j, 'a')",
    "json_get_string(j, 'g')",
    "json_get_int(j, 'a')",
    "json_get_int(j, 'v')",
    "json_get_int(j, 'e')",
    "json_get_float(j, 'f')",
    "json_get_float(j, 'big')",
    "json_get_bool(j, 'b')",
    "json_get_bool(j, 'y')",
    "json_exists(j, '$.a')",
    "json_exists(j, '$.o.n')",
    "json_exists(j, '$[0]')",
    "json_array_length(j, '$.arr')",
    "json_array_length(j, '$')",
    "json_array_length(j, '$.a')",
    "json_array_contains(j, '$.arr', 2)",
    "json_array_contains(j, '$.arr', 'x')",
    "json_array_contains(j, '$', 20)",
    "json_array_contains(j, '$', 1.0)",
    "json_array_contains(j, '$', 'true')",
    "json_array_contains(j, '$', '{\"k\":1}')",
    "json_array_contains(j, '$', 'a\"b')",
    "json_array_contains(j, '$', NULL)",
    # Conversions that fail fail the query, in both.
    "json_get_string(j, 'o')",
    "json_get_int(j, 's')",
    "json_get_bool(j, 'a')",
    "json_extract(j, '$..a')",
]

FUNC_FILTERS = [
    "json_get_int(j, 'a') = 1",
    "json_extract(j, '$.a') = '1'",
    "json_extract(j, '$.a') = 'null'",
    "json_extract(j, '$.a') IS NULL",
    "json_get_string(j, 's') = 'hi'",
    "json_exists(j, '$.a')",
    "NOT json_exists(j, '$.a')",
    "json_array_contains(j, '$.arr', 2)",
    "json_array_length(j, '$.arr') > 0",
    "j IS NULL",
    "j IS NOT NULL",
    "json_get(j, 'a') IS NULL",
]


@pytest.mark.parametrize("writer", list(LIBS))
def test_json_functions_match_pylance(tmp_path, writer):
    ref, uri = str(tmp_path / "ref"), str(tmp_path / "ds")
    lance.write_dataset(json_table(FUNC_DOCS), ref)
    LIBS[writer].write_dataset(json_table(FUNC_DOCS), uri)
    theirs = lance.dataset(ref)
    for sql in FUNC_EXPRS:
        want = outcome(lambda sql=sql: theirs.to_table(columns={"x": sql}).column("x"))
        for lib in LIBS.values():
            ds = lib.dataset(uri)
            got = outcome(lambda ds=ds, sql=sql: ds.to_table(columns={"x": sql}).column("x"))
            assert got[0] == want[0], (sql, lib.__name__, got)
            if want[0] == "ok":
                assert got[1].type == want[1].type, (sql, lib.__name__)
                assert got[1].to_pylist() == want[1].to_pylist(), (sql, lib.__name__)
    for sql in FUNC_FILTERS:
        want = theirs.to_table(filter=sql).column("id").to_pylist()
        for lib in LIBS.values():
            assert lib.dataset(uri).to_table(filter=sql).column("id").to_pylist() == want, (sql, lib.__name__)
            assert lib.dataset(uri).count_rows(filter=sql) == len(want), sql


def test_projections_keep_json_and_functions_give_pylance_types(tmp_path):
    uri = str(tmp_path / "ds")
    lancelet.write_dataset(json_table(FUNC_DOCS), uri)
    for lib in LIBS.values():
        t = lib.dataset(uri).to_table(columns={"x": "j", "g": "json_get(j, 'a')", "e": "json_extract(j, '$.a')"})
        assert t.schema.field("x").type == pa.json_()
        assert t.schema.field("g").type == pa.large_binary()
        assert t.schema.field("e").type == pa.string()
        assert t.column("g").to_pylist()[0] == bytes.fromhex("20000000200000025001")
        scanner = lib.dataset(uri).scanner(columns={"x": "j"}, filter="json_exists(j, '$.a')")
        assert scanner.to_table().column("x").to_pylist() == [t["x"][i].as_py() for i in (0, 1, 5)]


@pytest.mark.parametrize("setup,actor", PAIRS)
def test_update_parses_json_text(tmp_path, setup, actor):
    uri = str(tmp_path / "ds")
    LIBS[setup].write_dataset(json_table(['{"a":1}', '{"a":2}', '{"a":3}']), uri)
    ds = LIBS[actor].dataset(uri)
    ds.update({"j": '\'{ "z" : 9, "a": 5 }\''}, where="id = 0")
    ds = LIBS[actor].dataset(uri)
    ds.update({"j": "NULL"}, where="id = 1")
    ds = LIBS[actor].dataset(uri)
    ds.update({"j": "json_get(j, 'a')"}, where="id = 2")
    t = read_both(uri)
    assert sorted(zip(t["id"].to_pylist(), t["j"].to_pylist())) == [(0, '{"a":5,"z":9}'), (1, None), (2, "3")]
    assert bytes.fromhex("400000021000000110000001200000022000000261 7a 5005 5009".replace(" ", "")) in stored(uri)
    with pytest.raises(Exception, match="expected ident, pos 2"):
        LIBS[actor].dataset(uri).update({"j": "'not json'"}, where="id = 0")
    assert read_both(uri).to_pylist() == t.to_pylist()


@pytest.mark.parametrize("setup,actor", PAIRS)
def test_merge_insert_with_a_json_source(tmp_path, setup, actor):
    uri = str(tmp_path / "ds")
    LIBS[setup].write_dataset(json_table(['{"a":1}', "[2]"]), uri)
    src = pa.table({"id": pa.array([1, 7], pa.int64()), "j": pa.array(['{"new": 1.50}', "'x'"], pa.json_())})
    ds = LIBS[actor].dataset(uri)
    ds.merge_insert("id").when_matched_update_all().when_not_matched_insert_all().execute(src)
    t = read_both(uri)
    assert sorted(zip(t["id"].to_pylist(), t["j"].to_pylist())) == [(0, '{"a":1}'), (1, '{"new":1.5}'), (7, '"x"')]
    plain = pa.table({"id": pa.array([0], pa.int64()), "j": ['{"a":1}']})
    with pytest.raises(OSError):
        LIBS[actor].dataset(uri).merge_insert("id").when_matched_update_all().execute(plain)


@pytest.mark.parametrize("setup,actor", PAIRS)
def test_append_json_and_refuse_plain_strings(tmp_path, setup, actor):
    uri = str(tmp_path / "ds")
    LIBS[setup].write_dataset(json_table(['{"a":1}']), uri)
    LIBS[actor].write_dataset(json_table(['{"b":2}', None]), uri, mode="append")
    assert read_both(uri).column("j").to_pylist() == ['{"a":1}', '{"b":2}', None]
    plain = pa.table({"id": pa.array([5], pa.int64()), "j": ['{"c":3}']})
    with pytest.raises(OSError, match="json"):
        LIBS[actor].write_dataset(plain, uri, mode="append")
    assert lancelet.dataset(uri).count_rows() == 3


@pytest.mark.parametrize("setup,actor", PAIRS)
def test_new_json_columns(tmp_path, setup, actor):
    uri = str(tmp_path / "ds")
    LIBS[setup].write_dataset(json_table(['{"b":1,"a":2}', None, "[1]"]), uri)

    def udf(batch: pa.RecordBatch) -> pa.RecordBatch:
        out = [None if i == 1 else json.dumps({"id": i, "v": [i, 1.0]}) for i in batch["id"].to_pylist()]
        return pa.record_batch([pa.array(out, pa.json_())], names=["u"])

    LIBS[actor].dataset(uri).add_columns(udf, read_columns=["id"])
    LIBS[actor].dataset(uri).add_columns(pa.field("n", pa.json_()))
    other = pa.table({"id": pa.array([0, 2], pa.int64()), "m": pa.array(['{"m":true}', "-0"], pa.json_())})
    LIBS[actor].dataset(uri).merge(other, "id")
    t = read_both(uri)
    for name in ("u", "n", "m"):
        assert t.schema.field(name).type == pa.json_(), name
    assert t.column("u").to_pylist() == ['{"id":0,"v":[0,1.0]}', None, '{"id":2,"v":[2,1.0]}']
    assert t.column("n").to_pylist() == [None] * 3
    assert t.column("m").to_pylist() == ['{"m":true}', None, "0"]
    assert stored(uri, "u")[0] == stored_alone('{"id":0,"v":[0,1.0]}', tmp_path)


def test_udfs_read_json_as_text(tmp_path):
    """lancelet hands a UDF the JSON columns it reads as text, as every read returns them.
    (pylance gives the text to the call that infers the output schema, then the stored
    JSONB bytes to the calls that compute the column.)"""
    uri = str(tmp_path / "ds")
    lancelet.write_dataset(json_table(['{"b":1,"a":2}', None]), uri)
    seen = []

    def udf(batch: pa.RecordBatch) -> pa.RecordBatch:
        seen.append(batch.schema.field("j").type)
        lengths = [None if v is None else len(v) for v in batch["j"].to_pylist()]
        return pa.record_batch([pa.array(lengths, pa.int64())], names=["len"])

    lancelet.dataset(uri).add_columns(udf, read_columns=["j"])
    assert seen and all(t == pa.json_() for t in seen)
    assert read_both(uri).column("len").to_pylist() == [13, None]


def stored_alone(text: str, tmp_path) -> bytes:
    """The JSONB pylance stores for ``text``."""
    uri = str(tmp_path / "alone")
    lance.write_dataset(json_table([text]), uri, mode="overwrite")
    return stored(uri)[0]


@pytest.mark.parametrize("writer", list(LIBS))
def test_nested_json_in_structs_and_lists(tmp_path, writer):
    texts = pa.array(['{"a":1}', None, "[1, 2]", '{"a": 2.0}'], pa.json_())
    st = pa.StructArray.from_arrays(
        [pa.array([1, 2, 3, 4], pa.int64()), texts], fields=[pa.field("x", pa.int64()), pa.field("j", pa.json_())]
    )
    lst = pa.ListArray.from_arrays(
        pa.array([0, 2, 2, 3, 4], pa.int32()), texts, type=pa.list_(pa.field("item", pa.json_()))
    )
    t = pa.table({"id": pa.array(range(4), pa.int64()), "s": st, "l": lst})
    ref, uri = str(tmp_path / "ref"), str(tmp_path / "ds")
    lance.write_dataset(t, ref)
    LIBS[writer].write_dataset(t, uri)
    out = read_both(uri)
    assert out.to_pylist() == lance.dataset(ref).to_table().to_pylist()
    assert out.schema.field("s").type.field("j").type == pa.json_()
    assert out.schema.field("l").type.value_type == pa.json_()
    for lib in LIBS.values():
        ds = lib.dataset(uri)
        assert ds.to_table(filter="json_get_int(s.j, 'a') = 1").column("id").to_pylist() == [0]
        sj = ds.to_table(columns=["s.j"])
        assert sj.schema.field("s.j").type == pa.json_()
        assert sj.column("s.j").to_pylist() == ['{"a":1}', None, "[1,2]", '{"a":2.0}']
    theirs = lance.file.LanceFileReader(data_paths(ref)[0]).read_all().to_table()
    for path in data_paths(uri):
        ours = lance.file.LanceFileReader(path).read_all().to_table()
        assert ours.column("s").to_pylist() == theirs.column("s").to_pylist()
        assert ours.column("l").to_pylist() == theirs.column("l").to_pylist()


@pytest.mark.parametrize("version", ["2.0", "2.1", "2.2"])
def test_file_writers_store_jsonb_and_file_readers_return_it(tmp_path, version):
    t = json_table(VALUES[:20])
    bytes_by_writer = {}
    for name, lib in LIBS.items():
        path = str(tmp_path / f"{name}.lance")
        writer = lib.file.LanceFileWriter(path, version=version)
        writer.write_batch(t)
        writer.close()
        for reader in LIBS.values():
            got = reader.file.LanceFileReader(path).read_all().to_table()
            f = got.schema.field("j")
            assert f.type == pa.large_binary() and f.metadata == JSON_MD, (name, reader.__name__)
            bytes_by_writer.setdefault(name, got.column("j").to_pylist())
            assert got.column("j").to_pylist() == bytes_by_writer[name]
    assert bytes_by_writer["lancelet"] == bytes_by_writer["pylance"]


@pytest.mark.parametrize("actor", list(LIBS))
def test_rewrites_keep_the_stored_bytes(tmp_path, actor):
    """Updates of other columns, merge_insert and (lancelet's) compaction copy the stored
    JSONB as it is: NaN and infinities (which read as ``null``) and bytes that are not JSONB
    survive. (pylance's compaction re-parses the text it reads: NaN becomes ``null`` and
    bytes that are not JSONB fail, so it is lancelet's alone here.)"""
    uri = str(tmp_path / "ds")
    docs = ["NaN", "[1e400, -Infinity]", '{"a":1}', None]
    lance.write_dataset(json_table(docs), uri, max_rows_per_file=2)
    raw = pa.table(
        {"id": pa.array([10], pa.int64()), "j": pa.array([b"not jsonb"], pa.large_binary())},
        schema=pa.schema([pa.field("id", pa.int64()), pa.field("j", pa.large_binary(), metadata=JSON_MD)]),
    )
    lance.write_dataset(raw, uri, mode="append")
    before = sorted(stored(uri), key=lambda b: b or b"")
    lib = LIBS[actor]
    lib.dataset(uri).update({"id": "id + 100"}, where="id < 3")
    src = pa.table({"id": pa.array([102], pa.int64()), "j": pa.array(["[3]"], pa.json_())})
    lib.dataset(uri).merge_insert("id").when_matched_update_all().execute(src)
    if lib is lancelet:
        # One file holding the live rows only: their stored bytes are the ones written.
        lib.dataset(uri).optimize.compact_files()
        assert len(lance.dataset(uri).get_fragments()) == 1
        after = sorted(stored(uri), key=lambda b: b or b"")
        expected = sorted(
            [b for b in before if b != stored_alone('{"a":1}', tmp_path)] + [stored_alone("[3]", tmp_path)],
            key=lambda b: b or b"",
        )
        assert after == expected
    t = read_both(uri)
    assert sorted(zip(t["id"].to_pylist(), t["j"].to_pylist())) == [
        (3, None),
        (10, "not jsonb"),
        (100, "null"),
        (101, "[null,null]"),
        (102, "[3]"),
    ]
