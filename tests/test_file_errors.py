"""Errors: bad files, bad writer input, bad reader arguments.

Every failure must surface as a ``lancelet.LanceError`` subclass (which also derives
from the builtin a Python user expects: ``FileNotFoundError``, ``ValueError``,
``OSError``, ``NotImplementedError``), never as a bare pyarrow error, a
``PanicException`` (a ``BaseException``) or a crash of the interpreter. Damaged files
are generated from a real lancelet file at test time; one sweep that corrupts every
byte runs in a subprocess, so a hard crash fails the test instead of killing pytest.
"""

from __future__ import annotations

import json
import os
import random
import struct
import subprocess
import sys
import textwrap
from pathlib import Path

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import lancelet
from lancelet.file import LanceFileReader, LanceFileWriter

FOOTER = struct.Struct("<QQQIIHH4s")
assert FOOTER.size == 40

def read_footer(data: bytes) -> list:
    return list(FOOTER.unpack(data[-40:]))


def with_footer(data: bytes, **changes) -> bytes:
    names = ["column_meta_start", "cmo_table_start", "gbo_table_start", "num_global_buffers", "num_columns",
             "major", "minor", "magic"]
    values = dict(zip(names, read_footer(data)))
    values.update(changes)
    return data[:-40] + FOOTER.pack(*(values[n] for n in names))


def open_and_read(path) -> pa.Table:
    """Everything a user would do with a file; raises what lancelet raises."""
    reader = LanceFileReader(str(path))
    reader.metadata()
    table = reader.read_all().to_table()
    if reader.num_rows():
        reader.take_rows([reader.num_rows() - 1, 0]).to_table()
    return table


# --------------------------------------------------------------------------------------
# Files that are missing or are not Lance files
# --------------------------------------------------------------------------------------


def test_opening_a_missing_file_raises_lance_not_found_error(tmp_path):
    missing = tmp_path / "does_not_exist.lance"
    with pytest.raises(lancelet.LanceNotFoundError) as info:
        LanceFileReader(str(missing))
    assert isinstance(info.value, FileNotFoundError)
    assert isinstance(info.value, lancelet.LanceError)
    assert "does_not_exist.lance" in str(info.value)


def test_opening_a_directory_raises_a_lance_error(tmp_path):
    with pytest.raises(lancelet.LanceError):
        LanceFileReader(str(tmp_path))


def _not_lance_files():
    rng = random.Random(1234)
    cases = {
        "empty_0_bytes": b"",
        "10_bytes": b"0123456789",
        "39_bytes": bytes(39),
        "40_zero_bytes": bytes(40),
        "100_random_bytes": bytes(rng.getrandbits(8) for _ in range(100)),
        "text_file": b"hello, this is not a lance file\n" * 10,
        "parquet_magic": b"PAR1" + bytes(100) + b"PAR1",
        "lanc_magic_only": b"LANC",
    }
    return cases


@pytest.mark.parametrize("name", sorted(_not_lance_files()))
def test_file_that_is_not_a_lance_file_raises_corrupt_file_error(name, tmp_path):
    path = tmp_path / "bad.lance"
    path.write_bytes(_not_lance_files()[name])
    with pytest.raises(lancelet.CorruptFileError) as info:
        open_and_read(path)
    assert isinstance(info.value, OSError)


def test_wrong_magic_raises_corrupt_file_error(small_file, tmp_path):
    data = Path(small_file).read_bytes()
    for magic in (b"LANc", b"CNAL", b"\x00\x00\x00\x00", b"PAR1"):
        bad = tmp_path / "magic.lance"
        bad.write_bytes(data[:-4] + magic)
        with pytest.raises(lancelet.CorruptFileError, match="not a Lance file|LANC|magic"):
            LanceFileReader(str(bad))


def test_every_truncation_of_a_small_file_raises_corrupt_file_error(small_file, tmp_path):
    data = Path(small_file).read_bytes()
    bad = tmp_path / "truncated.lance"
    for n in range(len(data)):
        bad.write_bytes(data[:n])
        try:
            open_and_read(bad)
        except lancelet.CorruptFileError:
            continue
        except BaseException as e:  # noqa: BLE001 - the point is to name what escaped
            pytest.fail(f"truncation to {n} bytes raised {type(e).__name__}: {e}")
        pytest.fail(f"truncation to {n} of {len(data)} bytes was read without error")


def test_a_lance_file_with_bytes_prepended_or_appended_raises_corrupt_file_error(small_file, tmp_path):
    data = Path(small_file).read_bytes()
    bad = tmp_path / "shifted.lance"
    # Appended garbage moves the footer: not a Lance file any more.
    bad.write_bytes(data + b"garbage")
    with pytest.raises(lancelet.CorruptFileError):
        open_and_read(bad)
    # Prepended bytes keep a valid footer whose absolute positions are now wrong: the
    # metadata no longer parses.
    bad.write_bytes(b"\x00" * 64 + data)
    with pytest.raises(lancelet.CorruptFileError):
        open_and_read(bad)


FOOTER_POINTING_OUTSIDE = {
    "column_meta_start_past_end": dict(column_meta_start=2**40),
    "cmo_table_start_past_end": dict(cmo_table_start=2**40),
    "gbo_table_start_past_end": dict(gbo_table_start=2**40),
    "cmo_table_start_u64_max": dict(cmo_table_start=2**64 - 1),
    "gbo_table_start_u64_max": dict(gbo_table_start=2**64 - 1),
    "num_columns_huge": dict(num_columns=2**32 - 1),
    "num_global_buffers_huge": dict(num_global_buffers=2**32 - 1),
    "num_global_buffers_zero": dict(num_global_buffers=0),
    "num_columns_zero": dict(num_columns=0),
    "num_columns_plus_one": "plus_one_column",
    "cmo_table_inside_footer": "cmo_in_footer",
    "tables_swapped": "swap_tables",
}


@pytest.mark.parametrize("case", sorted(FOOTER_POINTING_OUTSIDE))
def test_footer_pointing_outside_the_file_raises_corrupt_file_error(case, small_file, tmp_path):
    data = Path(small_file).read_bytes()
    cms, cmo, gbo, ngb, ncols, major, minor, magic = read_footer(data)
    change = FOOTER_POINTING_OUTSIDE[case]
    if change == "plus_one_column":
        change = dict(num_columns=ncols + 1)
    elif change == "cmo_in_footer":
        change = dict(cmo_table_start=len(data) - 30)
    elif change == "swap_tables":
        change = dict(cmo_table_start=gbo, gbo_table_start=cmo)
    bad = tmp_path / "footer.lance"
    bad.write_bytes(with_footer(data, **change))
    with pytest.raises(lancelet.CorruptFileError):
        open_and_read(bad)


def _patch_table_entry(data: bytes, table_start: int, index: int, pos: int, size: int) -> bytes:
    at = table_start + 16 * index
    return data[:at] + struct.pack("<QQ", pos, size) + data[at + 16:]


@pytest.mark.parametrize("table", ["cmo", "gbo"])
@pytest.mark.parametrize("entry", ["past_end", "overflowing", "into_footer"])
def test_offset_table_entry_pointing_outside_the_file_raises_corrupt_file_error(table, entry, small_file, tmp_path):
    data = Path(small_file).read_bytes()
    cms, cmo, gbo, *_ = read_footer(data)
    pos, size = {
        "past_end": (len(data) + 10, 5),
        "overflowing": (2**64 - 8, 16),
        "into_footer": (len(data) - 20, 16),
    }[entry]
    bad = tmp_path / "table.lance"
    bad.write_bytes(_patch_table_entry(data, cmo if table == "cmo" else gbo, 0, pos, size))
    with pytest.raises(lancelet.CorruptFileError):
        open_and_read(bad)


@pytest.mark.parametrize("minor", [1, 2])
def test_v2_file_with_a_legacy_footer_version_is_corrupt(minor, small_file, tmp_path):
    """Footer versions 0.1 and 0.2 mean a legacy file, which lancelet reads; a 2.x file
    relabelled so does not parse as one."""
    data = Path(small_file).read_bytes()
    bad = tmp_path / "version.lance"
    bad.write_bytes(with_footer(data, major=0, minor=minor))
    with pytest.raises(lancelet.CorruptFileError):
        open_and_read(bad)


@pytest.mark.parametrize("major,minor", [(9, 9), (3, 0), (2, 99), (0, 0), (65535, 65535)])
def test_unknown_footer_version_raises_unsupported_feature_error(major, minor, small_file, tmp_path):
    data = Path(small_file).read_bytes()
    bad = tmp_path / "version.lance"
    bad.write_bytes(with_footer(data, major=major, minor=minor))
    with pytest.raises(lancelet.UnsupportedFeatureError) as info:
        LanceFileReader(str(bad))
    assert isinstance(info.value, NotImplementedError)
    assert f"{major}.{minor}" in str(info.value) or "legacy" in str(info.value)


def test_40_byte_file_with_magic_and_zero_footer_is_refused_with_a_lance_error(tmp_path):
    """All positions 0 fit in a 40-byte file, so the footer is consistent; its version
    (0.0) is unknown."""
    bad = tmp_path / "zero_footer.lance"
    bad.write_bytes(bytes(36) + b"LANC")
    with pytest.raises(lancelet.UnsupportedFeatureError):
        LanceFileReader(str(bad))


def test_footer_version_2_0_alias_is_accepted(small_file, tmp_path, mixed_table):
    """Both (0, 3) and (2, 0) mean file format 2.0."""
    data = Path(small_file).read_bytes()
    alias = tmp_path / "alias.lance"
    alias.write_bytes(with_footer(data, major=2, minor=0))
    # The rewritten footer no longer matches its checksum: read it unchecked.
    assert LanceFileReader(str(alias), verify_checksums=False).read_all().to_table().equals(mixed_table())
    with pytest.raises(lancelet.CorruptFileError, match="footer"):
        LanceFileReader(str(alias))


def test_garbage_file_descriptor_raises_corrupt_file_error(small_file, tmp_path):
    data = bytearray(Path(small_file).read_bytes())
    md = LanceFileReader(small_file).metadata()
    gb0 = md.global_buffers[0]
    data[gb0.position:gb0.position + gb0.size] = b"\xff" * gb0.size
    bad = tmp_path / "descriptor.lance"
    bad.write_bytes(bytes(data))
    with pytest.raises(lancelet.CorruptFileError):
        open_and_read(bad)


def test_damaged_string_offsets_raise_corrupt_file_error_when_read(small_file, tmp_path):
    """The string column's end offsets made to go backwards: detectable only when the
    page is decoded, i.e. while the result stream is consumed."""
    data = bytearray(Path(small_file).read_bytes())
    md = LanceFileReader(small_file).metadata()
    offsets = md.columns[1].pages[0].buffers[0]  # column 1 is `s` (string): u64 end offsets
    data[offsets.position:offsets.position + 16] = struct.pack("<QQ", 1000, 1)
    bad = tmp_path / "offsets.lance"
    bad.write_bytes(bytes(data))
    reader = LanceFileReader(str(bad))  # the page table itself is intact
    with pytest.raises(lancelet.CorruptFileError):
        reader.read_all().to_table()


def test_field_name_with_a_nul_byte_raises_lance_errors_only(small_file, tmp_path):
    """A FileDescriptor whose field name became "\\x00" (one flipped byte): opening may
    succeed, but every later failure must still be a LanceError."""
    data = bytearray(Path(small_file).read_bytes())
    md = LanceFileReader(small_file).metadata()
    gb0 = md.global_buffers[0]
    descriptor = bytes(data[gb0.position:gb0.position + gb0.size])
    at = descriptor.index(b"\x12\x01i")  # Field.name = "i" (tag 2, length 1)
    data[gb0.position + at + 2] = 0
    bad = tmp_path / "nul.lance"
    bad.write_bytes(bytes(data))
    failures = []
    for op in (
        lambda r: r.schema,
        lambda r: r.read_all().to_table(),
        lambda r: r.take_rows([0]).to_table(),
    ):
        try:
            op(LanceFileReader(str(bad)))
        except lancelet.LanceError:
            pass
        except Exception as e:  # noqa: BLE001
            failures.append(f"{type(e).__module__}.{type(e).__name__}: {e}")
    assert failures == []


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(footer=st.binary(min_size=36, max_size=36))
def test_random_footers_raise_lance_errors(footer, small_file_bytes, tmp_path_factory):
    """Any 36 bytes followed by the magic: a LanceError or a successful open, nothing else."""
    path = tmp_path_factory.getbasetemp() / "random_footer.lance"
    path.write_bytes(small_file_bytes[:-40] + footer + b"LANC")
    try:
        LanceFileReader(str(path))
    except lancelet.LanceError:
        pass


@pytest.fixture(scope="module")
def small_file_bytes(tmp_path_factory, mixed_table):
    path = tmp_path_factory.mktemp("small") / "small.lance"
    with LanceFileWriter(str(path), version="2.0") as w:
        w.write_batch(mixed_table())
    return path.read_bytes()


# --------------------------------------------------------------------------------------
# Every byte corrupted, in a subprocess (a crash must not take pytest down)
# --------------------------------------------------------------------------------------

SWEEP_SCRIPT = textwrap.dedent(
    r'''
    import collections, json, sys
    import pyarrow as pa
    import lancelet
    from lancelet.file import LanceFileReader, LanceFileWriter

    work = sys.argv[1]
    table = pa.table({
        "i": pa.array([1, None, 3, -4, None, 6, 7], pa.int32()),
        "s": pa.array(["a", None, "", "dddd", "ee", None, "ggggggg"]),
        "l": pa.array([[1, 2], [], None, [3], [4, 5, 6], None, []], pa.list_(pa.int32())),
        "st": pa.array([{"a": i, "b": str(i)} for i in range(7)],
                       pa.struct([("a", pa.int32()), ("b", pa.string())])),
        "f": pa.array([[float(i)] * 2 for i in range(7)], pa.list_(pa.float32(), 2)),
    })
    good = work + "/good.lance"
    with LanceFileWriter(good, table.schema, version="2.0") as w:
        w.write_batch(table)
    data = open(good, "rb").read()
    bad = work + "/bad.lance"

    counts = collections.Counter()
    non_lance = collections.Counter()
    examples = {}
    OPS = [
        ("metadata", lambda r: r.metadata()),
        ("read_all", lambda r: r.read_all(batch_size=3).to_table()),
        ("take_rows", lambda r: r.take_rows([6, 0, 3, 3]).to_table()),
        ("read_range", lambda r: r.read_range(2, 4, batch_size=2).to_table()),
    ]

    def record(kind, label, exc):
        key = f"{kind}:{type(exc).__module__}.{type(exc).__name__}"
        if isinstance(exc, lancelet.LanceError):
            counts[key] += 1
        else:
            non_lance[key] += 1
            examples.setdefault(key, f"{label}: {exc}"[:300])

    def attempt(blob, label):
        with open(bad, "wb") as f:
            f.write(blob)
        try:
            reader = LanceFileReader(bad)
        except BaseException as e:
            record("open", label, e)
            return
        counts["open:ok"] += 1
        for name, op in OPS:
            try:
                op(reader)
                counts[name + ":ok"] += 1
            except BaseException as e:
                record(name, label, e)

    n = 0
    for i in range(len(data)):
        for how in ("xor", "zero", "ff"):
            b = bytearray(data)
            b[i] = {"xor": b[i] ^ 0xFF, "zero": 0, "ff": 0xFF}[how]
            if bytes(b) == data:
                continue
            attempt(bytes(b), f"byte {i} {how}")
            n += 1
    for cut in range(len(data)):
        attempt(data[:cut], f"truncated to {cut}")
        n += 1
    print(json.dumps({"file_size": len(data), "variants": n, "counts": counts,
                      "non_lance": non_lance, "examples": examples}))
    '''
)


@pytest.fixture(scope="module")
def corruption_sweep(tmp_path_factory):
    work = tmp_path_factory.mktemp("sweep")
    proc = subprocess.run(
        [sys.executable, "-c", SWEEP_SCRIPT, str(work)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    summary = None
    if proc.returncode == 0 and proc.stdout.strip():
        summary = json.loads(proc.stdout.strip().splitlines()[-1])
        print(
            f"\ncorruption sweep: {summary['variants']} damaged variants of a {summary['file_size']}-byte file; "
            f"outcomes: {dict(summary['counts'])}; non-LanceError failures: {dict(summary['non_lance'])}"
        )
    return proc, summary


def test_corrupting_every_byte_never_crashes_the_interpreter(corruption_sweep):
    proc, summary = corruption_sweep
    assert proc.returncode == 0, f"sweep subprocess died with {proc.returncode}:\n{proc.stderr[-3000:]}"
    assert summary is not None
    assert summary["variants"] > 3 * summary["file_size"]
    # Nothing escaped as a BaseException that is not an Exception (PanicException, ...).
    for key in list(summary["non_lance"]) + list(summary["counts"]):
        assert "PanicException" not in key, summary["examples"].get(key)
    # Most damage is caught when the file is opened.
    assert summary["counts"].get("open:lancelet.errors.CorruptFileError", 0) > summary["file_size"]


def test_corrupting_every_byte_raises_only_lance_errors(corruption_sweep):
    proc, summary = corruption_sweep
    assert proc.returncode == 0
    assert summary["non_lance"] == {}, summary["examples"]


# --------------------------------------------------------------------------------------
# Writer errors
# --------------------------------------------------------------------------------------

SCHEMA = pa.schema([("a", pa.int32()), ("s", pa.string())])


def good_batch(n: int = 3) -> pa.RecordBatch:
    return pa.record_batch({"a": pa.array(range(n), pa.int32()), "s": [str(i) for i in range(n)]})


def leftovers(directory: Path) -> list:
    return sorted(p.name for p in directory.iterdir())


@pytest.mark.parametrize(
    "bad",
    [
        pa.record_batch({"a": pa.array([1], pa.int64()), "s": ["x"]}),
        pa.record_batch({"a": pa.array([1], pa.int32()), "s": pa.array([b"x"], pa.binary())}),
        pa.record_batch({"a": pa.array([1], pa.int32())}),
        pa.record_batch({"s": ["x"]}),
        pa.record_batch({"a": pa.array([1], pa.int32()), "s": ["x"], "extra": [1.0]}),
        pa.record_batch({"A": pa.array([1], pa.int32()), "s": ["x"]}),
    ],
    ids=["wrong_type", "string_vs_binary", "missing_column", "missing_first_column", "extra_column", "renamed"],
)
def test_batch_not_matching_the_schema_raises_schema_mismatch_error(bad, tmp_path):
    path = tmp_path / "w.lance"
    w = LanceFileWriter(str(path), SCHEMA, version="2.0")
    with pytest.raises(lancelet.SchemaMismatchError) as info:
        w.write_batch(bad)
    assert isinstance(info.value, ValueError)
    assert not path.exists()
    # The writer is still usable: a correct batch goes through, and only it is stored.
    w.write_batch(good_batch())
    assert w.close() == 3
    assert LanceFileReader(str(path)).read_all().to_table().equals(pa.Table.from_batches([good_batch()]))


def test_close_after_only_a_failed_batch_writes_an_empty_file(tmp_path):
    """Decision: a refused batch leaves no trace, so the writer is exactly as if it had
    never been called; closing it writes a valid 0-row file with the schema."""
    path = tmp_path / "w.lance"
    w = LanceFileWriter(str(path), SCHEMA, version="2.0")
    with pytest.raises(lancelet.SchemaMismatchError):
        w.write_batch(pa.record_batch({"a": pa.array([1], pa.int64()), "s": ["x"]}))
    assert not path.exists()
    assert w.close() == 0
    reader = LanceFileReader(str(path))
    assert reader.num_rows() == 0
    assert reader.schema.equals(SCHEMA)


def test_failed_write_then_abort_leaves_nothing_behind(tmp_path):
    path = tmp_path / "w.lance"
    w = LanceFileWriter(str(path), SCHEMA, version="2.0")
    w.write_batch(good_batch())
    with pytest.raises(lancelet.SchemaMismatchError):
        w.write_batch(pa.record_batch({"a": pa.array([1], pa.int64()), "s": ["x"]}))
    w.abort()
    assert leftovers(tmp_path) == []
    assert w.closed


def test_nulls_in_a_non_nullable_field_raise_schema_mismatch_error(tmp_path):
    schema = pa.schema([pa.field("a", pa.int32(), nullable=False), pa.field("s", pa.string())])
    path = tmp_path / "nn.lance"
    w = LanceFileWriter(str(path), schema, version="2.0")
    with pytest.raises(lancelet.SchemaMismatchError, match="a"):
        w.write_batch(pa.record_batch({"a": pa.array([1, None], pa.int32()), "s": ["x", "y"]}))
    w.write_batch(pa.record_batch({"a": pa.array([1, 2], pa.int32()), "s": ["x", None]}, schema=schema))
    w.close()
    got = LanceFileReader(str(path)).read_all().to_table()
    assert got.schema.field("a").nullable is False
    assert got.column("a").to_pylist() == [1, 2]


STRUCT = pa.struct([("x", pa.int32()), ("y", pa.string())])


@pytest.mark.parametrize(
    "schema,data",
    [
        (pa.schema([("c", STRUCT)]), {"c": pa.array([{"x": 1, "y": "a"}, None], STRUCT)}),
        (
            pa.schema([("c", pa.struct([("inner", STRUCT)]))]),
            {"c": pa.array([{"inner": None}], pa.struct([("inner", STRUCT)]))},
        ),
        (pa.schema([("c", pa.list_(STRUCT))]), {"c": pa.array([[{"x": 1, "y": "a"}, None]], pa.list_(STRUCT))}),
    ],
    ids=["top_level_struct", "nested_struct", "struct_in_list"],
)
def test_struct_with_nulls_raises_invalid_argument_error_at_2_0(schema, data, tmp_path):
    path = tmp_path / "s.lance"
    w = LanceFileWriter(str(path), schema, version="2.0")
    with pytest.raises(lancelet.InvalidArgumentError, match="2.0"):
        w.write_batch(pa.table(data, schema=schema))
    w.abort()
    assert leftovers(tmp_path) == []


def test_null_struct_under_a_null_list_slot_is_accepted(tmp_path):
    """Only reachable struct nulls are refused (as pylance does)."""
    values = pa.array([{"x": 1, "y": "a"}, None], STRUCT)
    lists = pa.ListArray.from_arrays(pa.array([0, 1, 2], pa.int32()), values, mask=pa.array([False, True]))
    table = pa.table({"c": lists})
    path = tmp_path / "ok.lance"
    with LanceFileWriter(str(path), table.schema, version="2.0") as w:
        w.write_batch(table)
    assert LanceFileReader(str(path)).read_all().to_table().column("c").to_pylist() == [[{"x": 1, "y": "a"}], None]


@pytest.mark.parametrize(
    "version,error",
    [
        ("0.1", lancelet.UnsupportedFeatureError),
        ("legacy", lancelet.UnsupportedFeatureError),
        ("bogus", lancelet.InvalidArgumentError),
        ("2", lancelet.InvalidArgumentError),
        ("3.0", lancelet.InvalidArgumentError),
        ("", lancelet.InvalidArgumentError),
    ],
)
def test_unsupported_or_unknown_version_strings_are_refused(version, error, tmp_path):
    path = tmp_path / "v.lance"
    with pytest.raises(error):
        w = LanceFileWriter(str(path), SCHEMA, version=version)
        w.write_batch(good_batch())
        w.close()
    assert not path.exists()


def test_version_error_without_schema_surfaces_at_the_first_batch(tmp_path):
    path = tmp_path / "v.lance"
    w = LanceFileWriter(str(path), version="legacy")
    with pytest.raises(lancelet.UnsupportedFeatureError):
        w.write_batch(good_batch())
    assert leftovers(tmp_path) == []


UNSUPPORTED_TYPES = {
    "map": pa.map_(pa.string(), pa.int32()),
    "string_view": pa.string_view(),
    "binary_view": pa.binary_view(),
    "month_day_nano_interval": pa.month_day_nano_interval(),
    "decimal32": pa.decimal32(5, 2),
    "decimal64": pa.decimal64(12, 2),
    "run_end_encoded": pa.run_end_encoded(pa.int32(), pa.string()),
    "list_view": pa.list_view(pa.int32()),
    "dense_union": pa.dense_union([pa.field("a", pa.int32())]),
    "fixed_size_list_of_string": pa.list_(pa.string(), 2),
    "list_of_map": pa.list_(pa.map_(pa.string(), pa.int32())),
    "struct_with_string_view": pa.struct([("v", pa.string_view())]),
}


@pytest.mark.parametrize("name", sorted(UNSUPPORTED_TYPES))
def test_unsupported_types_raise_unsupported_feature_error(name, tmp_path):
    path = tmp_path / "t.lance"
    schema = pa.schema([("ok", pa.int32()), ("c", UNSUPPORTED_TYPES[name])])
    with pytest.raises(lancelet.UnsupportedFeatureError) as info:
        LanceFileWriter(str(path), schema, version="2.0")
    assert isinstance(info.value, NotImplementedError)
    assert leftovers(tmp_path) == []


def test_unsupported_type_in_first_batch_without_schema_raises_unsupported_feature_error(tmp_path):
    path = tmp_path / "t.lance"
    batch = pa.record_batch({"v": pa.array(["a", "b"], pa.string_view())})
    w = LanceFileWriter(str(path), version="2.0")
    with pytest.raises(lancelet.UnsupportedFeatureError):
        w.write_batch(batch)
    assert leftovers(tmp_path) == []


def test_write_after_close_raises_invalid_argument_error(tmp_path):
    w = LanceFileWriter(str(tmp_path / "c.lance"), SCHEMA, version="2.0")
    w.write_batch(good_batch())
    w.close()
    with pytest.raises(lancelet.InvalidArgumentError, match="closed"):
        w.write_batch(good_batch())
    with pytest.raises(lancelet.InvalidArgumentError, match="closed"):
        w.add_schema_metadata("k", "v")


def test_close_twice_returns_none_the_second_time(tmp_path):
    w = LanceFileWriter(str(tmp_path / "c.lance"), SCHEMA, version="2.0")
    w.write_batch(good_batch(5))
    assert w.close() == 5
    assert w.close() is None
    assert w.closed


def test_close_without_schema_or_data_raises_invalid_argument_error(tmp_path):
    w = LanceFileWriter(str(tmp_path / "nothing.lance"), version="2.0")
    with pytest.raises(lancelet.InvalidArgumentError, match="schema"):
        w.close()
    assert leftovers(tmp_path) == []


def test_with_block_that_raises_leaves_no_file_behind(tmp_path):
    path = tmp_path / "w.lance"
    with pytest.raises(RuntimeError, match="boom"):
        with LanceFileWriter(str(path), SCHEMA, version="2.0") as w:
            w.write_batch(good_batch())
            raise RuntimeError("boom")
    assert leftovers(tmp_path) == []


def test_abandoned_writer_leaves_no_file_behind(tmp_path):
    w = LanceFileWriter(str(tmp_path / "w.lance"), SCHEMA, version="2.0")
    w.write_batch(good_batch())
    del w
    import gc

    gc.collect()
    assert leftovers(tmp_path) == []


def test_file_appears_only_when_close_succeeds(tmp_path):
    path = tmp_path / "atomic.lance"
    w = LanceFileWriter(str(path), SCHEMA, version="2.0")
    w.write_batch(good_batch())
    assert not path.exists()
    w.close()
    assert leftovers(tmp_path) == ["atomic.lance"]


def test_writing_into_a_missing_directory_raises_lance_not_found_error(tmp_path):
    with pytest.raises(lancelet.LanceNotFoundError):
        LanceFileWriter(str(tmp_path / "no" / "such" / "dir.lance"), SCHEMA, version="2.0")


def test_write_batch_of_a_non_arrow_object_raises_type_error(tmp_path):
    w = LanceFileWriter(str(tmp_path / "w.lance"), SCHEMA, version="2.0")
    with pytest.raises(TypeError):
        w.write_batch({"a": [1], "s": ["x"]})
    with pytest.raises(lancelet.LanceError):
        w.write_batch(pa.array([1, 2, 3]))  # an array, not a record batch
    w.abort()


def test_writer_stays_consistent_after_a_write_batch_that_fails_while_flushing(tmp_path):
    values = pa.array([f"v{i}" for i in range(128)])
    bad = pa.table(
        {
            "a": pa.array([1, 2, 3], pa.int32()),
            "d": pa.DictionaryArray.from_arrays(pa.array([0, None, 127], pa.int8()), values),
        }
    )
    good = pa.table(
        {"a": pa.array([4], pa.int32()), "d": pa.DictionaryArray.from_arrays(pa.array([1], pa.int8()), values)}
    )
    path = tmp_path / "w.lance"
    w = LanceFileWriter(str(path), bad.schema, version="2.0", max_page_bytes=16)
    with pytest.raises(lancelet.LanceError):
        w.write_batch(bad)
    try:
        w.write_batch(good)
        w.close()
    except lancelet.LanceError:
        # Refusing to continue after a half-written batch is acceptable too.
        assert not path.exists()
        return
    got = LanceFileReader(str(path)).read_all().to_table()
    assert got.column("a").to_pylist() == [4]


@pytest.mark.parametrize("max_page_bytes", [0, -1, 1.5, "8"])
def test_bad_max_page_bytes_raises_invalid_argument_error(max_page_bytes, tmp_path):
    with pytest.raises(lancelet.InvalidArgumentError):
        LanceFileWriter(str(tmp_path / "m.lance"), SCHEMA, version="2.0", max_page_bytes=max_page_bytes)


def test_unknown_keyword_argument_raises_type_error(tmp_path):
    with pytest.raises(TypeError):
        LanceFileWriter(str(tmp_path / "k.lance"), SCHEMA, version="2.0", compression="zstd")
    with pytest.raises(TypeError):
        LanceFileReader(str(tmp_path / "k.lance"), colums=["a"])


# --------------------------------------------------------------------------------------
# Reader argument errors
# --------------------------------------------------------------------------------------


@pytest.fixture
def ten_rows(tmp_path) -> str:
    path = str(tmp_path / "ten.lance")
    with LanceFileWriter(path, SCHEMA, version="2.0") as w:
        w.write_batch(good_batch(10))
    return path


@pytest.mark.parametrize("indices", [[-1], [0, -5], [10], [0, 9, 10], [2**62]], ids=str)
def test_take_rows_with_negative_or_out_of_range_indices_raises_invalid_argument_error(indices, ten_rows):
    with pytest.raises(lancelet.InvalidArgumentError) as info:
        LanceFileReader(ten_rows).take_rows(indices).to_table()
    assert isinstance(info.value, ValueError)


@pytest.mark.parametrize("indices", [[2**63], [2**64 + 1], [-(2**63) - 1]], ids=str)
def test_take_rows_with_indices_beyond_int64_raises_invalid_argument_error(indices, ten_rows):
    with pytest.raises(lancelet.InvalidArgumentError):
        LanceFileReader(ten_rows).take_rows(indices)


@pytest.mark.parametrize("start,num_rows", [(2**64, 1), (0, 2**64)])
def test_read_range_with_arguments_beyond_u64_raises_invalid_argument_error(start, num_rows, ten_rows):
    with pytest.raises(lancelet.InvalidArgumentError):
        LanceFileReader(ten_rows).read_range(start, num_rows)


@pytest.mark.parametrize("indices", [["a"], [None], [object()], 3], ids=["str", "none", "object", "not_a_list"])
def test_take_rows_with_non_integer_indices_raises_invalid_argument_error(indices, ten_rows):
    with pytest.raises(lancelet.InvalidArgumentError):
        LanceFileReader(ten_rows).take_rows(indices)


@pytest.mark.parametrize("indices", [[1.5], ["2"]], ids=str)
def test_take_rows_with_float_or_string_numbers_raises_invalid_argument_error(indices, ten_rows):
    with pytest.raises(lancelet.InvalidArgumentError):
        LanceFileReader(ten_rows).take_rows(indices)


@pytest.mark.parametrize(
    "start,num_rows",
    [(0, 11), (5, 6), (10, 1), (11, 0), (2**40, 1), (-1, 2), (0, -1), (1, 2**64 - 1)],
)
def test_read_range_past_the_end_or_negative_raises_invalid_argument_error(start, num_rows, ten_rows):
    with pytest.raises(lancelet.InvalidArgumentError):
        LanceFileReader(ten_rows).read_range(start, num_rows).to_table()


@pytest.mark.parametrize("start,num_rows", [(0.5, 1), (0, "3"), (None, 1), (True, 1)])
def test_read_range_with_non_integer_arguments_raises_invalid_argument_error(start, num_rows, ten_rows):
    with pytest.raises(lancelet.InvalidArgumentError):
        LanceFileReader(ten_rows).read_range(start, num_rows)


@pytest.mark.parametrize("columns", [["nope"], ["a", "nope"], ["a.b"], [""], ["s.x"]])
def test_unknown_column_name_raises_invalid_argument_error_at_open(columns, ten_rows):
    with pytest.raises(lancelet.InvalidArgumentError, match="nope|a.b|s.x|''|\"\""):
        LanceFileReader(ten_rows, columns=columns)


@pytest.mark.parametrize("batch_size", [0, -1, 2.5, None, "10"])
def test_bad_batch_size_raises_invalid_argument_error(batch_size, ten_rows):
    reader = LanceFileReader(ten_rows)
    with pytest.raises(lancelet.InvalidArgumentError):
        reader.read_all(batch_size=batch_size)
    with pytest.raises(lancelet.InvalidArgumentError):
        reader.read_range(0, 5, batch_size=batch_size)
    with pytest.raises(lancelet.InvalidArgumentError):
        reader.take_rows([1], batch_size=batch_size)


@pytest.mark.parametrize("index", [2, 99, -1])
def test_read_global_buffer_out_of_range_raises_invalid_argument_error(index, ten_rows):
    # Global buffer 1 of a file lancelet wrote holds its checksums.
    with pytest.raises(lancelet.InvalidArgumentError):
        LanceFileReader(ten_rows).read_global_buffer(index)


def test_invalid_argument_errors_are_value_errors(ten_rows):
    with pytest.raises(ValueError):
        LanceFileReader(ten_rows).take_rows([100])


# --------------------------------------------------------------------------------------
# storage_options and remote paths
# --------------------------------------------------------------------------------------


def test_storage_options_on_local_files_are_ignored_as_in_pylance(ten_rows, tmp_path):
    assert LanceFileReader(ten_rows, storage_options={"region": "us-east-1"}).num_rows() == 10
    target = tmp_path / "w.lance"
    with LanceFileWriter(str(target), SCHEMA, version="2.0", storage_options={"region": "us-east-1"}) as w:
        w.write_batch(good_batch(3))
    assert LanceFileReader(str(target)).num_rows() == 3
    assert leftovers(tmp_path) == ["ten.lance", "w.lance"]


def test_unknown_storage_options_on_object_stores_raise_invalid_argument_error(tmp_path):
    with pytest.raises(lancelet.InvalidArgumentError, match="storage option"):
        LanceFileReader("s3://bucket/key.lance", storage_options={"no_such_option": "1"})
    with pytest.raises(lancelet.InvalidArgumentError, match="storage option"):
        LanceFileWriter("s3://bucket/key.lance", SCHEMA, storage_options={"no_such_option": "1"})


def test_empty_storage_options_are_accepted(ten_rows):
    assert LanceFileReader(ten_rows, storage_options={}).num_rows() == 10
    assert LanceFileReader(ten_rows, storage_options=None).num_rows() == 10


@pytest.mark.parametrize("uri", ["gs://bucket/key.lance", "az://c/key.lance"])
def test_object_stores_other_than_s3_raise_unsupported_feature_error(uri, tmp_path):
    with pytest.raises(lancelet.UnsupportedFeatureError, match="s3://"):
        LanceFileReader(uri)
    with pytest.raises(lancelet.UnsupportedFeatureError, match="s3://"):
        LanceFileWriter(uri, SCHEMA)


def test_file_uri_is_a_local_path(ten_rows, tmp_path):
    assert LanceFileReader("file://" + os.path.abspath(ten_rows)).num_rows() == 10
    target = tmp_path / "uri.lance"
    with LanceFileWriter("file://" + str(target), SCHEMA, version="2.0") as w:
        w.write_batch(good_batch(4))
    assert LanceFileReader(str(target)).num_rows() == 4


def test_pathlib_paths_are_accepted(tmp_path):
    path = tmp_path / "pathlib.lance"
    with LanceFileWriter(path, SCHEMA, version="2.0") as w:
        w.write_batch(good_batch(2))
    assert LanceFileReader(path).num_rows() == 2
