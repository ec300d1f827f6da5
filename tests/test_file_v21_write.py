"""Writing Lance file format 2.1 and 2.2 with lancelet, read back by pylance 14.0.2.

lancelet writes every case with ``LanceFileWriter(path, schema, version=v)`` (several
``write_batch`` calls for some cases) and then:

(a) pylance's ``lance.file.LanceFileReader`` reads the whole file back equal to the input
    (plus a sorted ``take_rows`` and a ``read_range``, which go through the repetition
    index and the chunk metadata rather than a plain scan);
(b) lancelet's own reader reads it back equal (``read_all``, ``take_rows``, ``read_range``);
(c) the footer says ``(2, 1)`` / ``(2, 2)`` (last 8 bytes: u16 major, u16 minor, ``LANC``).

The cases cover every type of the foundation list in the data shapes that make pylance pick
its different layouts (bit packing, RLE, dictionary, FSST, constant pages at 2.2, full-zip
for wide values, all-null pages) and the nesting folded into repetition/definition levels.
A hypothesis property test draws random nested schemas (nullable structs included) and
writes them at 2.2.

``LANCELET_TEST_ORACLE_SELF=1`` writes with pylance instead of lancelet, which checks that
the expectations here hold for the reference implementation.
"""

from __future__ import annotations

import dataclasses
import datetime
import decimal
import os
import random
import struct
from typing import Callable, Dict, List, NamedTuple, Optional

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import lance
from lancelet.file import LanceFileReader, LanceFileWriter
from test_file_roundtrip import NULL_PATTERNS, null_mask

pytestmark = pytest.mark.interop

VERSIONS = ["2.1", "2.2"]
FOOTER_VERSION = {"2.1": (2, 1), "2.2": (2, 2), "stable": (2, 2)}

#: Write with pylance instead of lancelet (checks the oracle side of every expectation).
ORACLE_SELF = os.environ.get("LANCELET_TEST_ORACLE_SELF", "") == "1"

N = 3000  # rows of most cases


# --------------------------------------------------------------------------------------
# Writing and checking
# --------------------------------------------------------------------------------------


def write_file(path, table: pa.Table, version: str, batches: List[int], **kwargs) -> str:
    """Writes ``table`` at ``version`` in ``write_batch`` calls of ``batches`` rows each
    (the last call takes the rest)."""
    pieces = []
    start = 0
    for size in batches:
        pieces.append(table.slice(start, size))
        start += size
    if start < table.num_rows or not pieces:
        pieces.append(table.slice(start))
    if ORACLE_SELF:
        # One batch: pylance panics on nested structs written in several small batches.
        w = lance.file.LanceFileWriter(str(path), table.schema, version=version, **kwargs)
        if table.num_rows:
            w.write_batch(table.combine_chunks())
        w.close()
    else:
        with LanceFileWriter(str(path), table.schema, version=version, **kwargs) as w:
            for p in pieces:
                w.write_batch(p)
    return str(path)


def footer_version(path) -> tuple:
    with open(path, "rb") as f:
        f.seek(-8, os.SEEK_END)
        major, minor, magic = struct.unpack("<HH4s", f.read(8))
    assert magic == b"LANC"
    return major, minor


def probe_indices(n: int) -> List[int]:
    """A sorted, duplicate-free set of rows (pylance's take_rows wants ascending indices)."""
    if n == 0:
        return []
    return sorted({0, 1 % n, n // 3, n // 2, n // 2 + 1 if n > 2 else 0, n - 2 if n > 1 else 0, n - 1})


def check_file(path: str, table: pa.Table, version: str, tables_equal) -> None:
    # (c) footer
    assert footer_version(path) == FOOTER_VERSION[version]
    n = table.num_rows
    # (a) pylance, the oracle
    theirs = lance.file.LanceFileReader(path)
    assert theirs.metadata().num_rows == n
    try:
        got = theirs.read_all().to_table()
    except Exception as e:  # pragma: no cover - reported with the schema that caused it
        raise AssertionError(f"pylance cannot read lancelet's {version} file of {table.schema}: {e}") from e
    tables_equal(got, table)
    if n:
        idx = probe_indices(n)
        tables_equal(lance.file.LanceFileReader(path).take_rows(idx).to_table(), table.take(idx))
        start, length = n // 4, max(1, n // 3)
        tables_equal(lance.file.LanceFileReader(path).read_range(start, length).to_table(), table.slice(start, length))
    # (b) lancelet
    ours = LanceFileReader(path)
    assert ours.num_rows() == n
    assert ours.schema.equals(table.schema)
    assert ours.metadata().version == {"stable": "2.2"}.get(version, version)
    tables_equal(ours.read_all().to_table(), table)
    if n:
        idx = [n - 1, 0, n // 2, n // 2, 1 % n]
        tables_equal(ours.take_rows(idx).to_table(), table.take(idx))
        start, length = n // 4, max(1, n // 3)
        tables_equal(ours.read_range(start, length).to_table(), table.slice(start, length))


# --------------------------------------------------------------------------------------
# Cases
# --------------------------------------------------------------------------------------


class Case(NamedTuple):
    table: pa.Table
    #: rows per write_batch call (the rest goes into a last call)
    batches: List[int]


INT_TYPES = [pa.int8(), pa.int16(), pa.int32(), pa.int64(), pa.uint8(), pa.uint16(), pa.uint32(), pa.uint64()]
FLOAT_TYPES = [pa.float16(), pa.float32(), pa.float64()]
STRING_TYPES = [pa.string(), pa.large_string(), pa.binary(), pa.large_binary()]

_WORDS = (
    "the of and to in is was that for it with as his on be at by had are but from or have an they which one "
    "you were all her she there would their we him been has when who will no more if out so said what up its "
    "about than into them can only other new some could time these two may then first any my now such like "
    "our over man me even most made after also did many before must through back years where much your way "
    "well down should because each just those people how too little state good very make world still own see "
    "men work long get here between both life being under never day same another know while last might us "
    "great old year off come since against go came right used take three river mountain library column "
    "page chunk dictionary encoding compression lance arrow table vector embedding"
).split()


def _english(rng: random.Random, lo: int, hi: int) -> str:
    words = [rng.choice(_WORDS) for _ in range(rng.randint(lo, hi))]
    s = " ".join(words)
    return s[:1].upper() + s[1:] + rng.choice([".", ".", ".", "?", "!"])


def _int_variants(t: pa.DataType, nrng: np.random.Generator, rng: random.Random) -> Dict[str, pa.Array]:
    info = np.iinfo(t.to_pandas_dtype())
    lo, hi = int(info.min), int(info.max)
    dtype = t.to_pandas_dtype()
    full = nrng.integers(lo, hi, N, dtype=dtype, endpoint=True)
    full[:2] = [lo, hi]  # the extremes are always there
    small_lo = 0 if lo == 0 else -8
    runs: List[int] = []
    while len(runs) < N:
        runs += [rng.randint(lo, hi)] * rng.choice([1, 2, 7, 50, 300])
    return {
        "sorted": pa.array(np.sort(nrng.integers(lo, hi, N, dtype=dtype, endpoint=True)), t),
        "random": pa.array(full, t),
        "small_range": pa.array(nrng.integers(small_lo, small_lo + 16, N).astype(dtype), t),
        "constant": pa.array([hi // 3] * N, t),
        "runs": pa.array(runs[:N], t),
        "nulls": pa.array([None if rng.random() < 0.15 else rng.randint(lo, hi) for _ in range(N)], t),
        "all_null": pa.array([None] * N, t),
    }


def _float_variants(t: pa.DataType, nrng: np.random.Generator, rng: random.Random) -> Dict[str, pa.Array]:
    dtype = t.to_pandas_dtype()
    rand = (nrng.standard_normal(N) * 1000).astype(dtype)
    rand[:4] = [0.0, -0.0, np.inf, -np.inf]
    return {
        "random": pa.array(rand, t),
        "constant": pa.array(np.full(N, 1.25, dtype=dtype), t),
        "low_card": pa.array(np.array([[0.5, -1.5, 2.0, 1e3][rng.randrange(4)] for _ in range(N)], dtype=dtype), t),
        "nulls": pa.array(
            [None if i % 7 == 2 else v for i, v in enumerate(nrng.random(N).astype(dtype).tolist())], t
        ),
    }


def _string_variants(t: pa.DataType, rng: random.Random) -> Dict[str, pa.Array]:
    binary = pa.types.is_binary(t) or pa.types.is_large_binary(t)

    def arr(values: list) -> pa.Array:
        if binary:
            values = [None if v is None else v.encode() for v in values]
        return pa.array(values, t)

    colors = ["red", "green", "blue", "cyan", "magenta", "yellow", ""]
    hi_short = [f"{rng.getrandbits(40):x}"[: rng.randint(0, 10)] for _ in range(N)]
    text = [_english(rng, 5, 35) for _ in range(N + 500)]
    assert sum(len(s) for s in text) >= 32 * 1024
    very_long = ["".join(rng.choice("abcdefghijklmnopqrstuvwxyz ") for _ in range(rng.randint(5000, 50000))) for _ in range(40)]
    out = {
        "low_card": arr([rng.choice(colors) for _ in range(N)]),
        "high_card_short": arr(hi_short),
        "english_text": arr(text),
        "very_long": arr([None if i % 9 == 4 else s for i, s in enumerate(very_long)]),
        "empty": arr([""] * N),
        "empty_and_nulls": arr([None if i % 3 == 0 else "" if i % 3 == 1 else f"v{i}" for i in range(N)]),
        "nulls": arr([None if rng.random() < 0.3 else _english(rng, 1, 6) for _ in range(N)]),
        "all_null": arr([None] * N),
        "constant_with_nulls": arr([None if i % 4 == 0 else "same value" for i in range(N)]),
    }
    if binary:
        out["random_bytes"] = pa.array(
            [None if i % 11 == 0 else bytes(rng.getrandbits(8) for _ in range(i % 23)) for i in range(N)], t
        )
    return out


def _list_int32_values(rng: random.Random, n: int) -> list:
    """Null lists, empty lists, null items and normal items, each at every position."""
    out = []
    for i in range(n):
        r = i % 10
        if r == 0:
            out.append(None)
        elif r == 1:
            out.append([])
        elif r == 2:
            out.append([None])
        else:
            out.append([None if rng.random() < 0.2 else rng.randint(-1000, 1000) for _ in range(rng.randint(1, 6))])
    return out


def _cases() -> Dict[str, Case]:
    rng = random.Random(20240601)
    nrng = np.random.default_rng(20240601)
    c: Dict[str, Case] = {}

    def add(name: str, table: pa.Table, batches: Optional[List[int]] = None) -> None:
        assert name not in c, name
        c[name] = Case(table, batches or [])

    # --- integers: every width and signedness, every data shape
    for t in INT_TYPES:
        for variant, a in _int_variants(t, nrng, rng).items():
            add(f"{t}_{variant}", pa.table({"x": a}), [1000, 1] if variant in ("sorted", "nulls") else None)
    add(
        "all_ints_one_file",
        pa.table({f"{t}_{k}": a for t in INT_TYPES for k, a in _int_variants(t, nrng, rng).items()}),
        [700, 700, 0, 700],
    )

    # --- floats
    for t in FLOAT_TYPES:
        for variant, a in _float_variants(t, nrng, rng).items():
            add(f"{t}_{variant}", pa.table({"x": a}), [1500] if variant == "random" else None)

    # --- bool
    add("bool_random", pa.table({"b": pa.array([rng.random() < 0.5 for _ in range(N)])}), [999, 1, 7])
    add("bool_constant", pa.table({"b": pa.array([True] * N)}))
    add("bool_constant_false", pa.table({"b": pa.array([False] * N)}))
    add("bool_nulls", pa.table({"b": pa.array([None if i % 5 == 0 else rng.random() < 0.3 for i in range(N)])}))
    add("bool_all_null", pa.table({"b": pa.array([None] * N, pa.bool_())}))

    # --- strings and binaries
    for t in STRING_TYPES:
        for variant, a in _string_variants(t, rng).items():
            add(f"{t}_{variant}", pa.table({"s": a}), [len(a) // 3, 1] if variant in ("english_text", "very_long") else None)

    # --- temporal, decimal, fixed-size binary, null
    base = datetime.datetime(2024, 1, 1)
    add(
        "date32",
        pa.table({"d": pa.array([None if i % 10 == 3 else datetime.date(1970, 1, 1) + datetime.timedelta(days=rng.randint(-30000, 30000)) for i in range(N)], pa.date32())}),
    )
    add("date32_sorted", pa.table({"d": pa.array([datetime.date(2020, 1, 1) + datetime.timedelta(days=i // 3) for i in range(N)], pa.date32())}))
    add(
        "timestamp_us_tz",
        pa.table(
            {
                "ts": pa.array([None if i % 8 == 0 else base + datetime.timedelta(seconds=i * 37, microseconds=i) for i in range(N)], pa.timestamp("us", tz="UTC")),
                "ny": pa.array([rng.randint(-(10**15), 10**15) for _ in range(N)], pa.timestamp("us", tz="America/New_York")),
            }
        ),
        [100],
    )
    add(
        "decimal128",
        pa.table(
            {
                "d": pa.array([None if i % 6 == 0 else decimal.Decimal(rng.randint(-(10**17), 10**17)).scaleb(-4) for i in range(N)], pa.decimal128(20, 4)),
                "small": pa.array([decimal.Decimal(i % 100).scaleb(-2) for i in range(N)], pa.decimal128(5, 2)),
                "const": pa.array([decimal.Decimal("1.50")] * N, pa.decimal128(10, 2)),
            }
        ),
    )
    add(
        "fixed_size_binary",
        pa.table(
            {
                "f16": pa.array([None if i % 3 == 0 else bytes(rng.getrandbits(8) for _ in range(16)) for i in range(N)], pa.binary(16)),
                "f4_lowcard": pa.array([[b"abcd", b"efgh", b"\x00\x00\x00\x00"][i % 3] for i in range(N)], pa.binary(4)),
                "f40_const": pa.array([b"z" * 40] * N, pa.binary(40)),
            }
        ),
    )
    add("null_type", pa.table({"n": pa.nulls(N), "i": pa.array(range(N), pa.int32())}), [10])

    # --- fixed-size lists
    emb = nrng.standard_normal(50 * 1024).astype(np.float32)
    add("fsl_f32_1024", pa.table({"v": pa.FixedSizeListArray.from_arrays(pa.array(emb), 1024)}), [20, 1])
    add(
        "fsl_f32_1024_null_rows",
        pa.table(
            {
                "v": pa.FixedSizeListArray.from_arrays(
                    pa.array(emb[: 30 * 1024]), 1024, mask=pa.array([i % 4 == 1 for i in range(30)])
                )
            }
        ),
    )
    vec4 = nrng.random(N * 4).astype(np.float32)
    add("fsl_f32_4", pa.table({"v": pa.FixedSizeListArray.from_arrays(pa.array(vec4), 4)}), [1234])
    add(
        "fsl_f32_4_nulls",
        pa.table(
            {
                "v": pa.array(
                    [None if i % 6 == 0 else [float(i), None if i % 5 == 0 else 0.5, 1.0, -2.0] for i in range(N)],
                    pa.list_(pa.float32(), 4),
                )
            }
        ),
    )
    add("fsl_f32_4_constant", pa.table({"v": pa.array([[1.0, 2.0, 3.0, 4.0]] * N, pa.list_(pa.float32(), 4))}))

    # --- variable lists
    add("list_int32", pa.table({"l": pa.array(_list_int32_values(rng, N), pa.list_(pa.int32()))}), [333, 0, 1])
    add("list_int32_all_null", pa.table({"l": pa.array([None] * N, pa.list_(pa.int32()))}))
    add("list_int32_all_empty", pa.table({"l": pa.array([[]] * N, pa.list_(pa.int32()))}))
    add("list_int32_constant_items", pa.table({"l": pa.array([None if i % 7 == 0 else [5] * (i % 4) for i in range(N)], pa.list_(pa.int32()))}))
    add(
        "large_list_int64",
        pa.table({"l": pa.array([None if v is None else [None if x is None else x * 10**12 for x in v] for v in _list_int32_values(rng, N)], pa.large_list(pa.int64()))}),
    )
    add(
        "list_list_int32",
        pa.table(
            {
                "l": pa.array(
                    [
                        None if i % 9 == 0 else [] if i % 9 == 1 else [
                            None if j == 1 else [] if j == 2 else [None if (i + k) % 5 == 0 else i + k for k in range(j % 4 + 1)]
                            for j in range(i % 5)
                        ]
                        for i in range(N)
                    ],
                    pa.list_(pa.list_(pa.int32())),
                )
            }
        ),
        [1000, 1000],
    )
    add(
        "list_utf8",
        pa.table(
            {
                "l": pa.array(
                    [None if i % 8 == 0 else [] if i % 8 == 1 else [None if j == 1 else f"s{i}-{j}" if j % 2 else "" for j in range(i % 5)] for i in range(N)],
                    pa.list_(pa.string()),
                )
            }
        ),
    )
    add(
        "list_utf8_lowcard",
        pa.table({"l": pa.array([[["a", "b", "c"][(i + j) % 3] for j in range(i % 4)] for i in range(N)], pa.list_(pa.string()))}),
    )
    add(
        "large_list_large_utf8",
        pa.table({"l": pa.array([None if i % 5 == 0 else [_english(rng, 1, 4) for _ in range(i % 3)] for i in range(N)], pa.large_list(pa.large_string()))}),
    )
    add(
        "list_fsl_f32_8",
        pa.table({"l": pa.array([[list(map(float, range(k, k + 8))) for k in range(i % 3)] for i in range(500)], pa.list_(pa.list_(pa.float32(), 8)))}),
    )
    add(
        "list_long_strings",
        pa.table({"l": pa.array([None if i % 5 == 0 else ["x" * rng.randint(300, 3000) for _ in range(i % 3)] for i in range(120)], pa.list_(pa.string()))}),
    )

    # --- structs
    ab = pa.struct([pa.field("a", pa.int32()), pa.field("b", pa.string())])
    add(
        "struct_nullable",
        pa.table({"s": pa.array([None if i % 5 == 0 else {"a": None if i % 3 == 0 else i, "b": None if i % 7 == 0 else f"x{i % 4}"} for i in range(N)], ab)}),
        [17, 1000],
    )
    add("struct_all_null", pa.table({"s": pa.array([None] * N, ab)}))
    add(
        "struct_constant_children",
        pa.table({"s": pa.array([None if i % 9 == 0 else {"a": 1, "b": "k"} for i in range(N)], ab)}),
    )
    add(
        "struct_of_struct",
        pa.table(
            {
                "s": pa.array(
                    [
                        None if i % 4 == 0 else {"t": None if i % 4 == 1 else {"x": None if i % 4 == 2 else i, "y": f"y{i}"}, "z": i * 0.5}
                        for i in range(N)
                    ],
                    pa.struct([pa.field("t", pa.struct([pa.field("x", pa.int64()), pa.field("y", pa.string())])), pa.field("z", pa.float64())]),
                )
            }
        ),
    )
    add(
        "struct_with_list_child",
        pa.table(
            {
                "s": pa.array(
                    [
                        None if i % 6 == 5 else {"l": None if i % 3 == 0 else [None if j == 2 else j for j in range(i % 5)], "v": [float(i), 1.0], "k": i}
                        for i in range(N)
                    ],
                    pa.struct([pa.field("l", pa.list_(pa.int32())), pa.field("v", pa.list_(pa.float32(), 2)), pa.field("k", pa.int64())]),
                )
            }
        ),
        [1, 1, 1],
    )
    add(
        "list_struct_nullable",
        pa.table(
            {
                "l": pa.array(
                    [
                        None if i % 7 == 0 else [] if i % 7 == 1 else [
                            None if j == 2 else {"a": None if j == 1 else i + j, "b": f"b{j}" if j % 2 else None} for j in range(i % 5)
                        ]
                        for i in range(N)
                    ],
                    pa.list_(ab),
                )
            }
        ),
        [1500],
    )
    add(
        "struct_many_types",
        pa.table(
            {
                "s": pa.array(
                    [
                        None if i % 10 == 0 else {"b": i % 2 == 0, "f": float(i), "d": datetime.date(2000, 1, 1) + datetime.timedelta(days=i), "n": None}
                        for i in range(N)
                    ],
                    pa.struct([pa.field("b", pa.bool_()), pa.field("f", pa.float32()), pa.field("d", pa.date32()), pa.field("n", pa.null())]),
                )
            }
        ),
    )

    # --- sizes
    add("zero_rows", pa.table({"i": pa.array([], pa.int32()), "s": pa.array([], pa.string()), "l": pa.array([], pa.list_(pa.int64())), "st": pa.array([], ab)}))
    add(
        "one_row",
        pa.table(
            {
                "i": pa.array([42], pa.int64()),
                "s": pa.array(["only"]),
                "l": pa.array([[1, None, 3]], pa.list_(pa.int32())),
                "st": pa.array([{"a": 1, "b": None}], ab),
                "v": pa.array([[1.0, 2.0, 3.0, 4.0]], pa.list_(pa.float32(), 4)),
                "n": pa.array([None], pa.float64()),
            }
        ),
    )
    m = 100_000
    add(
        "rows_100k",
        pa.table(
            {
                "id": pa.array(np.arange(m, dtype=np.int64)),
                "r": pa.array(nrng.integers(0, 1 << 40, m)),
                "f": pa.array(nrng.random(m).astype(np.float32)),
                "s": pa.array([None if i % 13 == 0 else f"value-{i % 977}" for i in range(m)]),
                "t": pa.array([f"row {i} " + "x" * (i % 40) for i in range(m)]),
                "l": pa.array([None if i % 11 == 0 else list(range(i % 7)) for i in range(m)], pa.list_(pa.int32())),
                "st": pa.array([None if i % 17 == 0 else {"a": i % 100, "b": None if i % 3 else "b"} for i in range(m)], ab),
                "b": pa.array([i % 3 == 0 for i in range(m)]),
            }
        ),
        [30_000, 1, 20_000, 0, 25_000],
    )
    return c


CASES = _cases()


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("name", sorted(CASES))
def test_pylance_reads_lancelet_v21_file(name, version, tmp_path, tables_equal):
    case = CASES[name]
    path = write_file(tmp_path / "t.lance", case.table, version, case.batches)
    check_file(path, case.table, version, tables_equal)


@pytest.mark.parametrize("name", sorted(n for n in CASES if CASES[n].table.num_rows <= N + 500))
def test_many_small_batches_at_v22(name, tmp_path, tables_equal):
    """The same data handed over in many uneven batches (some empty) at 2.2."""
    table = CASES[name].table
    rng = random.Random(name)
    batches = []
    left = table.num_rows
    while left > 0:
        b = min(left, rng.choice([0, 1, 2, 5, 64, 100, 333, 1024]))
        batches.append(b)
        left -= b
    path = write_file(tmp_path / "t.lance", table, "2.2", batches)
    check_file(path, table, "2.2", tables_equal)


def test_stable_means_2_2(tmp_path, tables_equal):
    table = CASES["list_struct_nullable"].table
    path = write_file(tmp_path / "t.lance", table, "stable", [])
    assert footer_version(path) == (2, 2)
    check_file(path, table, "stable", tables_equal)


@pytest.mark.parametrize("version", VERSIONS)
def test_catalogue_types_written_at_v21(type_case, version, tmp_path, tables_equal):
    """Every type of the shared catalogue (conftest.py), written by lancelet at 2.1 / 2.2."""
    table = type_case.table()
    path = write_file(tmp_path / "t.lance", table, version, [table.num_rows // 3, 1])
    check_file(path, table, version, tables_equal)


@pytest.mark.parametrize("version", VERSIONS)
def test_columns_projection_of_lancelet_v21_file(version, tmp_path, tables_equal):
    table = CASES["rows_100k"].table
    path = write_file(tmp_path / "t.lance", table, version, CASES["rows_100k"].batches)
    for cols in (["st"], ["l", "id"], ["st.b"]):
        expected = lance.file.LanceFileReader(path, columns=cols).read_all().to_table()
        tables_equal(LanceFileReader(path, columns=cols).read_all().to_table(), expected)
    tables_equal(lance.file.LanceFileReader(path, columns=["l", "id"]).read_all().to_table(), table.select(["l", "id"]))


@pytest.mark.parametrize("version", VERSIONS)
def test_global_buffers_and_schema_metadata_at_v21(version, tmp_path, tables_equal):
    table = CASES["struct_nullable"].table
    path = str(tmp_path / "t.lance")
    if ORACLE_SELF:
        w = lance.file.LanceFileWriter(path, table.schema, version=version)
        w.write_batch(table)
        idx = w.add_global_buffer(b"hello world")
        w.add_schema_metadata("k", "v")
        w.close()
    else:
        with LanceFileWriter(path, table.schema, version=version) as w:
            w.write_batch(table)
            idx = w.add_global_buffer(b"hello world")
            w.add_schema_metadata("k", "v")
    assert footer_version(path) == FOOTER_VERSION[version]
    assert lance.file.LanceFileReader(path).read_global_buffer(idx) == b"hello world"
    assert LanceFileReader(path).read_global_buffer(idx) == b"hello world"
    assert lance.file.LanceFileReader(path).metadata().schema.metadata[b"k"] == b"v"
    tables_equal(lance.file.LanceFileReader(path).read_all().to_table(), table)


# --------------------------------------------------------------------------------------
# Property test: random nested schemas at 2.2
# --------------------------------------------------------------------------------------

EXAMPLES = int(os.environ.get("LANCELET_HYPOTHESIS_EXAMPLES", "100"))


def _leaf_specs(g):
    s = g.scalar
    return list(g.scalars) + [
        g.fixed_size_list_of(s["float32"], 4),
        g.fixed_size_list_of(s["int8"], 3),
        g.fixed_size_list_of(s["float32"], 300),  # wide: full-zip
        g.low_cardinality_strings(),
    ]


def _spec_strategy(g, depth: int = 0):
    """A leaf, or a list / large_list / struct (nullable at 2.1+) of specs, up to depth 3."""
    leaves = st.sampled_from(_leaf_specs(g))
    if depth >= 3:
        return leaves
    child = _spec_strategy(g, depth + 1)
    lists = st.tuples(child, st.booleans(), st.sampled_from([0, 1, 4, 9])).map(
        lambda t: g.list_of(t[0], large=t[1], max_len=t[2])
    )
    structs = st.tuples(st.lists(child, min_size=1, max_size=3), st.booleans()).map(
        lambda t: dataclasses.replace(g.struct_of([(f"f{i}", k) for i, k in enumerate(t[0])]), can_be_null=t[1])
    )
    return st.one_of(leaves, lists, structs)


@st.composite
def _random_tables(draw, g, max_rows: int = 400):
    n = draw(st.integers(0, max_rows))
    ncols = draw(st.integers(1, 4))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = random.Random(seed)
    cols = {}
    for i in range(ncols):
        spec = draw(_spec_strategy(g))
        pattern = draw(st.sampled_from(NULL_PATTERNS))
        inner_p = draw(st.sampled_from([0.0, 0.2, 0.7, 1.0]))
        cols[f"c{i}"] = g.build_array(spec, n, mask=null_mask(pattern, n, rng), p=inner_p, seed=rng.getrandbits(32))
    table = pa.table(cols)
    cuts = sorted(draw(st.lists(st.integers(0, n), max_size=4)))
    bounds = [0] + cuts + [n]
    batches = [b - a for a, b in zip(bounds, bounds[1:])]
    return table, batches


@pytest.fixture(scope="module")
def scratch_dir(tmp_path_factory):
    """A directory for hypothesis examples (function-scoped tmp_path does not mix with @given)."""
    return tmp_path_factory.mktemp("v22_write")


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.function_scoped_fixture],
)
@given(data=st.data())
def test_random_nested_schemas_at_v22(data, arrow_gen, scratch_dir, tables_equal):
    table, batches = data.draw(_random_tables(arrow_gen))
    path = write_file(scratch_dir / "rnd.lance", table, "2.2", batches)
    assert footer_version(path) == (2, 2)
    try:
        got = lance.file.LanceFileReader(path).read_all().to_table()
    except Exception as e:  # pragma: no cover - reported with the table that caused it
        raise AssertionError(f"pylance cannot read lancelet's 2.2 file of {table.schema}: {e}") from e
    tables_equal(got, table)
    tables_equal(LanceFileReader(path).read_all().to_table(), table)
    n = table.num_rows
    if n:
        idx = sorted(set(data.draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=20))))
        expected = table.take(pa.array(idx, pa.int64()))
        tables_equal(lance.file.LanceFileReader(path).take_rows(idx).to_table(), expected)
        tables_equal(LanceFileReader(path).take_rows(idx).to_table(), expected)
