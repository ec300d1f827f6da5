"""The scalar SQL functions pylance 14 has (issue 28): string (``concat``, ``replace``,
``split_part``, padding, trimming, ...), math (``round``, ``trunc``, ``power``, logarithms,
trigonometry, ...), conditional (``nullif``, ``nvl``, ``greatest``, ...) and date/time
(``date_part``, ``date_trunc``) functions give pylance's results in filters,
``columns={...}`` projections, ``update`` and ``add_columns``, on small tables full of NULLs
and edge cases (empty strings, NaN, -0.0, combining characters, daylight-saving changes).

``lib`` is lancelet (pylance itself when ``LANCELET_TEST_ORACLE_SELF=1``). Values must be
equal (floats bit for bit, except the sign of NaN), types of the same kind (pylance returns
``string_view`` from some string functions, lancelet ``string``), and where pylance fails
(``split_part(s, ',', 0)``, ``chr(-1)``, ``factorial(21)``), lancelet must fail too.
"""

from __future__ import annotations

import datetime as dt
import math
import shutil
from decimal import Decimal

import pyarrow as pa
import pytest

lance = pytest.importorskip("lance")

pytestmark = pytest.mark.interop


def scalars_table() -> pa.Table:
    return pa.table(
        {
            "id": pa.array([1, 2, 3, 4, 5, 6], pa.int64()),
            "s": pa.array(["Hello", "a,b,c", None, "héllo wörld", "", "ab,,cd,"]),
            "ls": pa.array(["x", None, "y", "ü", "", "z"], pa.large_string()),
            "t": pa.array([",", "", None, "l", "é", ",,"]),
            "n": pa.array([2, -1, 0, None, 100, 3], pa.int64()),
            "f": pa.array([1.5, -2.5, None, 2.345, float("nan"), -0.0], pa.float64()),
            "g": pa.array([1.5, -2.5, None, 2.345, float("nan"), -0.0], pa.float32()),
            "i": pa.array([10, -7, None, 0, 3, 2147483647], pa.int32()),
            "u": pa.array([10, 7, None, 0, 3, 255], pa.uint8()),
            "h": pa.array([10, -7, None, 0, 3, 127], pa.int8()),
            "dec": pa.array(
                [Decimal("1.25"), Decimal("-2.55"), None, Decimal("0.00"), Decimal("4.99"), Decimal("-0.01")],
                pa.decimal128(10, 2),
            ),
            "w": pa.array(["e\u0301a", " \tab \n", None, "👍🏽x", "", "ǆa ßa ﬁx o'neil x-y 1abc"]),
            "bi": pa.array([b"ab", None, b"", b"\xff", b"x", b"yz"], pa.binary()),
            "big": pa.array([1e300, -1e300, None, 0.5, -0.5, 123456.789], pa.float64()),
        }
    )


def temporal_table() -> pa.Table:
    """Nine instants (UTC) in several types; the last four straddle New York's 2024
    daylight-saving changes."""
    ts = [
        dt.datetime(2024, 2, 29, 13, 45, 30, 123456),
        None,
        dt.datetime(1969, 12, 31, 23, 59, 59, 999999),
        dt.datetime(2023, 1, 1),
        dt.datetime(2021, 1, 3, 5),
        dt.datetime(2024, 11, 3, 5, 30),
        dt.datetime(2024, 11, 3, 6, 30),
        dt.datetime(2024, 3, 10, 6, 59),
        dt.datetime(2024, 3, 10, 7, 30),
    ]
    return pa.table(
        {
            "id": pa.array(range(1, len(ts) + 1), pa.int64()),
            "ts": pa.array(ts, pa.timestamp("us")),
            "tz": pa.array(ts, pa.timestamp("us", "America/New_York")),
            "k": pa.array(ts, pa.timestamp("ms", "Asia/Kolkata")),
            "tn": pa.array(ts, pa.timestamp("ns")),
            "ts_s": pa.array(ts, pa.timestamp("s")),
            "d": pa.array([None if x is None else x.date() for x in ts], pa.date32()),
        }
    )


#: Projections over ``scalars_table()``: every function, with NULLs and edge cases.
SCALAR_EXPRS = [
    # concat: NULL is '', other types as their text, never NULL.
    "concat(s, 'x')",
    "concat(s, NULL, t)",
    "concat(s, ls)",
    "concat(s, t, n)",
    "concat(s, f)",
    "concat(g)",
    "concat(s, i, u, h)",
    "concat(s, true)",
    "concat(s, dec)",
    "concat(w, DATE '2024-01-01')",
    "concat(s, TIMESTAMP '2024-01-01 10:00:00')",
    "concat()",
    "concat_ws(t, s, ls)",
    "concat_ws(',', s, n, f)",
    "concat_ws('', s, NULL, t)",
    "concat_ws(s)",
    # replace: empty pattern between every character; NULL anywhere is NULL.
    "replace(s, 'l', 'L')",
    "replace(s, '', 'X')",
    "replace(s, t, 'X')",
    "replace(s, ',', NULL)",
    "replace(ls, 'x', 'yy')",
    "replace(w, 'a', 'ää')",
    "replace(n, 1, 2)",
    # split_part: 1-based, negative from the end, 0 is an error.
    "split_part(s, ',', 2)",
    "split_part(s, ',', -1)",
    "split_part(s, t, 1)",
    "split_part(s, ',', n)",
    "split_part(s, '', 1)",
    "split_part(s, '', 2)",
    "split_part(s, ',', -4)",
    "split_part(s, ',', 100)",
    "split_part(ls, 'x', 1)",
    "split_part(s, ',', 0)",
    "split_part(s, ',', i)",
    "split_part(s, ',', '1')",
    "left(s, 2)",
    "right(s, n)",
    "left(s, -2)",
    "right(s, -2)",
    "left(w, 1)",
    "right(s, -9223372036854775808)",
    "lpad(s, 8, '*')",
    "rpad(s, 8)",
    "lpad(s, n, t)",
    "rpad(s, n, t)",
    "lpad(s, 9, '')",
    "lpad(s, -1, 'x')",
    "lpad(ls, 8, 'x')",
    "rpad(s, 7, 'ab')",
    "lpad(w, 4, 'x')",
    "rpad(s, 2147483648, 'x')",
    "ltrim(s)",
    "rtrim(s, t)",
    "btrim(s, 'Hd')",
    "btrim(w)",
    "ltrim(s, NULL)",
    "strpos(s, 'l')",
    "instr(s, 'ö')",
    "strpos(s, '')",
    "strpos(ls, 'x')",
    "strpos(w, 'a')",
    "reverse(s)",
    "reverse(w)",
    "repeat(s, n)",
    "repeat(ls, 2)",
    "repeat(s, 9223372036854775807)",
    "initcap(s)",
    "initcap(w)",
    "ascii(t)",
    "ascii(w)",
    "chr(id + 64)",
    "chr(id - 1)",
    "chr(n)",
    "chr(id + 55295)",
    "octet_length(s)",
    "bit_length(ls)",
    "octet_length(i)",
    "to_hex(i)",
    "to_hex(u)",
    "to_hex(h)",
    "to_hex(f)",
    "translate(s, 'lé', 'L')",
    "translate(s, t, 'x')",
    "translate(w, 'a', 'b')",
    "md5(s)",
    "md5(ls)",
    "md5(bi)",
    # round: half away from zero, any integer digits (out of range gives NaN), decimals
    # stay decimal.
    "round(f)",
    "round(f, 1)",
    "round(f, 2)",
    "round(f, -1)",
    "round(f, n)",
    "round(f, NULL)",
    "round(f, 400)",
    "round(g, 1)",
    "round(i, -1)",
    "round(u, 1)",
    "round(big, 2)",
    "round(big, -2)",
    "round(dec)",
    "round(dec, 1)",
    "round(dec, -1)",
    "round(dec, n)",
    "round(CAST(99 - n * 0 AS decimal(2,0)), -1)",
    "round(f, 1.5)",
    "round(s)",
    "trunc(f)",
    "trunc(f, 1)",
    "trunc(g)",
    "trunc(dec, 1)",
    "trunc(big, -2)",
    "sqrt(f)",
    "sqrt(g)",
    "sqrt(i)",
    "sqrt(dec)",
    "cbrt(f)",
    "exp(g)",
    "ln(f)",
    "log(f)",
    "log(dec)",
    "log2(g)",
    "log10(u)",
    "log(2, f)",
    "log(n, 8)",
    "log(i, g)",
    "power(f, 2)",
    "pow(i, 2)",
    "power(g, 2)",
    "pow(2, n)",
    "power(f, 0.5)",
    "sin(f)",
    "cos(g)",
    "tan(f)",
    "asin(big)",
    "acos(big)",
    "atan(f)",
    "atan2(g, g)",
    "atan2(i, 2)",
    "atan2(f, i)",
    "sinh(f)",
    "cosh(g)",
    "tanh(f)",
    "asinh(f)",
    "acosh(f)",
    "atanh(big)",
    "cot(f)",
    "degrees(f)",
    "radians(g)",
    "signum(f)",
    "signum(i)",
    "signum(dec)",
    "pi() + f",
    "iszero(f)",
    "iszero(i)",
    "nanvl(f, 0)",
    "nanvl(g, 0)",
    "nanvl(i, 1)",
    "nanvl(f, NULL)",
    "gcd(n, i)",
    "gcd(h, u)",
    "lcm(n, -3)",
    "gcd(-9223372036854775808, n)",
    "lcm(9223372036854775807, n)",
    "factorial(id)",
    "factorial(n)",
    "factorial(n + 18)",
    "gcd(f, 2)",
    # conditional
    "nullif(i, 10)",
    "nullif(s, 'Hello')",
    "nullif(i, n)",
    "nullif(NULL, s)",
    "nullif(f, g)",
    "nullif(f, 0.0)",
    "nullif(f, -0.0)",
    "nvl(s, 'x')",
    "nvl(i, n)",
    "ifnull(s, t)",
    "nvl2(s, 'a', 'b')",
    "nvl2(i, s, 'b')",
    "nvl2(f, i, n)",
    "greatest(i, 1)",
    "least(i, 1)",
    "greatest(i, f)",
    "greatest(s, t)",
    "greatest(n, i, h)",
    "least(s, ls)",
    "greatest(f, CAST('NaN' AS double))",
    "least(f, 0.0)",
    "greatest(g, -0.0)",
    "greatest(dec, i)",
    "least(dec, 0)",
]

#: Projections over ``temporal_table()``.
TEMPORAL_EXPRS = [
    "date_part('year', ts)",
    "date_part('QUARTER', ts)",
    "date_part('month', tz)",
    "date_part('week', d)",
    "date_part('day', tz)",
    "date_part('hour', tz)",
    "date_part('minute', k)",
    "date_part('second', ts)",
    "date_part('millisecond', ts)",
    "date_part('microsecond', tn)",
    "date_part('nanosecond', ts)",
    "date_part('dow', d)",
    "date_part('isodow', ts)",
    "date_part('doy', ts)",
    "date_part('isoyear', ts)",
    "date_part('epoch', ts)",
    "date_part('epoch', tz)",
    "date_part('epoch', d)",
    "date_part('epoch', ts_s)",
    "datepart('hrs', ts)",
    "date_part('century', ts)",
    "date_trunc('year', ts)",
    "date_trunc('quarter', d)",
    "date_trunc('month', tz)",
    "date_trunc('week', ts)",
    "date_trunc('week', tz)",
    "date_trunc('day', tz)",
    "date_trunc('day', k)",
    "date_trunc('hour', tz)",
    "date_trunc('hour', k)",
    "date_trunc('minute', k)",
    "date_trunc('second', ts_s)",
    "date_trunc('millisecond', tn)",
    "datetrunc('day', d)",
    "date_trunc('years', ts)",
]

SCALAR_FILTERS = [
    "split_part(s, ',', 2) = 'b'",
    "concat(s, 'x') = 'x'",
    "replace(s, 'l', 'L') LIKE '%LL%'",
    "round(f, 1) = 1.5",
    "round(f) = 2",
    "left(s, 2) = 'ab'",
    "length(concat_ws('-', s, t)) > 5",
    "strpos(s, 'l') = 3",
    "greatest(i, n) > 5",
    "nullif(i, 10) IS NULL",
    "nvl(f, 0) = 0",
    "power(n, 2) >= 4",
    "trunc(f) = -2",
    "abs(round(dec)) = 3",
    "md5(s) = '8b1a9953c4611296a827abf8c47804d7'",
    "initcap(s) = 'A,B,C'",
    "to_hex(i) = 'a'",
    "signum(f) < 0",
    "iszero(g)",
    "nvl2(s, 1, 0) = 0",
    "translate(s, ',', ';') = 'a;b;c'",
    "rtrim(s, ',') = 'ab,,cd'",
]

TEMPORAL_FILTERS = [
    "date_part('year', ts) = 2024",
    "date_part('hour', tz) = 1",
    "date_trunc('month', ts) = TIMESTAMP '2024-11-01 00:00:00'",
    "date_trunc('day', d) < TIMESTAMP '2022-01-01 00:00:00'",
    "date_part('dow', d) = 0",
]


@pytest.fixture(scope="module")
def uris(tmp_path_factory) -> dict:
    """Both tables, written by pylance."""
    root = tmp_path_factory.mktemp("sqlfuncs")
    out = {}
    for name, table in (("scalars", scalars_table()), ("temporal", temporal_table())):
        uri = str(root / f"{name}.lance")
        lance.write_dataset(table, uri)
        out[name] = uri
    return out


def same_value(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return a == b and math.copysign(1.0, a) == math.copysign(1.0, b)
    return type(a) is type(b) and a == b


def kind(t: pa.DataType) -> str:
    """A type, with every string type one kind and decimals by scale only."""
    if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t):
        return "text"
    if pa.types.is_decimal(t):
        return f"decimal(scale={t.scale})"
    return str(t)


def outcome(fn):
    """``("ok", result)`` or ``("error", exception)``."""
    try:
        return "ok", fn()
    except Exception as e:  # noqa: BLE001 - any failure is compared with pylance's
        return "error", e


def check_projection(lib, uri: str, sql: str) -> None:
    want = outcome(lambda: lance.dataset(uri).to_table(columns={"x": sql})["x"])
    got = outcome(lambda: lib.dataset(uri).to_table(columns={"x": sql})["x"])
    if want[0] == "error":
        assert got[0] == "error", f"pylance fails ({want[1]}), {lib.__name__} gives {got[1]}"
        return
    assert got[0] == "ok", f"{lib.__name__} fails: {got[1]}"
    w, g = want[1], got[1]
    assert kind(g.type) == kind(w.type), (g.type, w.type)
    wv, gv = w.to_pylist(), g.to_pylist()
    assert len(gv) == len(wv) and all(same_value(x, y) for x, y in zip(gv, wv)), (gv, wv)


@pytest.mark.parametrize("sql", SCALAR_EXPRS)
def test_projection_matches_pylance(lib, uris, sql):
    check_projection(lib, uris["scalars"], sql)


@pytest.mark.parametrize("sql", TEMPORAL_EXPRS)
def test_temporal_projection_matches_pylance(lib, uris, sql):
    check_projection(lib, uris["temporal"], sql)


@pytest.mark.parametrize(
    "name,sql",
    [("scalars", f) for f in SCALAR_FILTERS] + [("temporal", f) for f in TEMPORAL_FILTERS],
    ids=lambda v: v,
)
def test_filter_matches_pylance(lib, uris, name, sql):
    want = lance.dataset(uris[name]).to_table(filter=sql)["id"].to_pylist()
    got = lib.dataset(uris[name]).to_table(filter=sql)["id"].to_pylist()
    assert sorted(got) == sorted(want)
    assert want, "every filter keeps some rows"


def _copy(src: str, dst) -> str:
    path = str(dst)
    shutil.copytree(src, path)
    return path


def _rows(uri: str) -> list:
    """The dataset's rows as pylance reads them, by id."""
    return sorted(lance.dataset(uri).to_table().to_pylist(), key=lambda r: r["id"])


def _same_rows(got: list, want: list) -> None:
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.keys() == w.keys()
        for k in w:
            assert same_value(g[k], w[k]), (k, g, w)


@pytest.mark.parametrize(
    "updates,where",
    [
        ({"s": "replace(s, 'l', 'L')"}, None),
        ({"s": "concat(s, '!', n)"}, "id > 2"),
        ({"s": "split_part(s, ',', -1)", "t": "lpad(t, 3, '-')"}, None),
        ({"f": "round(f, 1)", "g": "trunc(g)"}, None),
        ({"dec": "round(dec, 1)"}, None),
        ({"i": "greatest(i, 0)", "n": "nullif(n, 2)"}, None),
        ({"f": "power(f, 2)"}, "nvl(n, 0) > 0"),
        ({"s": "initcap(w)"}, "strpos(s, 'l') > 0"),
    ],
    ids=lambda v: str(v),
)
def test_update_matches_pylance(lib, uris, tmp_path, updates, where):
    ours, theirs = _copy(uris["scalars"], tmp_path / "ours"), _copy(uris["scalars"], tmp_path / "theirs")
    lance.dataset(theirs).update(updates, where=where)
    lib.dataset(ours).update(updates, where=where)
    _same_rows(_rows(ours), _rows(theirs))


def test_temporal_update_matches_pylance(lib, uris, tmp_path):
    updates = {"ts": "date_trunc('hour', ts)", "tz": "date_trunc('day', tz)"}
    ours, theirs = _copy(uris["temporal"], tmp_path / "ours"), _copy(uris["temporal"], tmp_path / "theirs")
    lance.dataset(theirs).update(updates, where="date_part('year', ts) = 2024")
    lib.dataset(ours).update(updates, where="date_part('year', ts) = 2024")
    _same_rows(_rows(ours), _rows(theirs))


@pytest.mark.parametrize(
    "name,columns",
    [
        (
            "scalars",
            {
                "c": "concat(s, '-', n)",
                "r": "replace(s, ',', ';')",
                "p": "split_part(s, ',', 2)",
                "rd": "round(f, 1)",
                "rdec": "round(dec, 1)",
                "m": "md5(s)",
                "gr": "greatest(i, n)",
                "lp": "lpad(to_hex(u), 4, '0')",
                "lg": "log(2, f)",
            },
        ),
        (
            "temporal",
            {"y": "date_part('year', tz)", "e": "date_part('epoch', ts)", "w": "date_trunc('week', tz)"},
        ),
    ],
    ids=["scalars", "temporal"],
)
def test_add_columns_matches_pylance(lib, uris, tmp_path, name, columns):
    ours, theirs = _copy(uris[name], tmp_path / "ours"), _copy(uris[name], tmp_path / "theirs")
    lance.dataset(theirs).add_columns(columns)
    lib.dataset(ours).add_columns(columns)
    want, got = lance.dataset(theirs), lance.dataset(ours)
    assert [(f.name, kind(f.type)) for f in got.schema] == [(f.name, kind(f.type)) for f in want.schema]
    _same_rows(_rows(ours), _rows(theirs))
