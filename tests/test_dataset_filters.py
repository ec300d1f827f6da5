"""SQL filters give pylance's rows: a fixed list of predicates covering every supported
feature, and random predicates drawn from a grammar (hypothesis), over one dataset
written by pylance (file format 2.0, five fragments, some rows deleted).

``lib`` is lancelet (pylance itself when ``LANCELET_TEST_ORACLE_SELF=1``). Results are
compared after sorting by the unique ``id`` column; when pylance refuses a predicate,
lancelet must refuse it too (with ValueError or a LanceError).
"""

from __future__ import annotations

import datetime as dt
import os

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

lance = pytest.importorskip("lance")

pytestmark = pytest.mark.interop

EXAMPLES = int(os.environ.get("LANCELET_HYPOTHESIS_EXAMPLES", "300"))

ROWS = 200
WORDS = ["apple", "Apple", "banana", "it's", 'say "hi"', "ünïcödé", "漢字", "", "100%", "a_b", "back\\slash", None]


def build_table(n: int = ROWS) -> pa.Table:
    """Every column of the filter tests. Built row by row (pylance 14 panics writing
    sliced struct arrays, so the fixture writes ``take``s, never slices)."""
    ids = list(range(n))
    f = [float("nan") if k % 11 == 5 else None if k % 9 == 4 else (k - 100) * 0.75 for k in ids]
    f[0], f[1], f[2], f[3] = float("inf"), float("-inf"), -0.0, 0.0
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "i": pa.array([None if k % 7 == 3 else (k * 37 % 101) - 50 for k in ids], pa.int32()),
            "f": pa.array(f, pa.float64()),
            "f32": pa.array(f, pa.float32()),
            "u8": pa.array([k % 256 for k in ids], pa.uint8()),
            "s": pa.array([WORDS[k % len(WORDS)] for k in ids], pa.string()),
            "b": pa.array([None if k % 5 == 0 else k % 2 == 0 for k in ids], pa.bool_()),
            "d": pa.array([None if k % 8 == 7 else dt.date(2023, 12, 25) + dt.timedelta(days=k * 3) for k in ids], pa.date32()),
            "ts": pa.array(
                [None if k % 6 == 1 else dt.datetime(2024, 1, 1) + dt.timedelta(hours=k * 5, microseconds=k) for k in ids],
                pa.timestamp("us"),
            ),
            "tstz": pa.array(
                [None if k % 6 == 2 else dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc) + dt.timedelta(hours=k * 7) for k in ids],
                pa.timestamp("us", "UTC"),
            ),
            "st": pa.array(
                [{"x": k % 10, "y": WORDS[(k + 3) % len(WORDS)], "inner": {"z": k * 1.5}} for k in ids],
                pa.struct([("x", pa.int32()), ("y", pa.string()), ("inner", pa.struct([("z", pa.float64())]))]),
            ),
            "my col": pa.array([k * 2 for k in ids], pa.int64()),
        }
    )


@pytest.fixture(scope="module")
def filter_uri(tmp_path_factory) -> str:
    """Fragments 0..4 (50, 50, 20, 50, 30 rows), then ``id % 13 = 6`` deleted."""
    uri = str(tmp_path_factory.mktemp("filters") / "f.lance")
    t = build_table()
    lance.write_dataset(t.take(list(range(120))), uri, data_storage_version="2.0", max_rows_per_file=50)
    lance.write_dataset(t.take(list(range(120, ROWS))), uri, mode="append", max_rows_per_file=50)
    lance.dataset(uri).delete("id % 13 = 6")
    return uri


@pytest.fixture(scope="module")
def pair(filter_uri, lib):
    """(ours, theirs): the library under test and pylance, opened on the same dataset."""
    return lib.dataset(filter_uri), lance.dataset(filter_uri)


def _by_id(t: pa.Table) -> pa.Table:
    return t.sort_by("id")


_NAN_STAND_IN = -1.2345e300  # not in the data


def _nan_comparable(t: pa.Table) -> pa.Table:
    """``t`` with NaN replaced by a stand-in value in float columns (Arrow equality
    says NaN != NaN)."""
    for k, field in enumerate(t.schema):
        if pa.types.is_floating(field.type):
            col = t.column(k)
            t = t.set_column(k, field, pc.if_else(pc.is_nan(col), pa.scalar(_NAN_STAND_IN, field.type), col))
    return t


def assert_same_result(ours, theirs, predicate: str, errors, tables_equal, **kwargs) -> None:
    try:
        expected = theirs.to_table(filter=predicate, **kwargs)
    except Exception:  # pylance refuses the predicate: so must we
        with pytest.raises((ValueError, errors.lance_error)):
            ours.to_table(filter=predicate, **kwargs)
        return
    got = ours.to_table(filter=predicate, **kwargs)
    tables_equal(_nan_comparable(_by_id(got)), _nan_comparable(_by_id(expected)))


# --------------------------------------------------------------------------------------
# (i) hand-written predicates
# --------------------------------------------------------------------------------------

PREDICATES = [
    # comparisons, AND/OR/NOT, NULL semantics
    "i > 10",
    "10 < i",
    "i >= -5 AND i < 20",
    "i = 0 OR i IS NULL",
    "i <> 3",
    "i != 3",
    "NOT (i > 0)",
    "NOT NOT (i > 0)",
    "i IS NOT NULL",
    "i = NULL",
    "NOT (i IS NULL OR b IS NULL)",
    "(i > 0 AND f > 0) OR (s = 'apple' AND NOT b)",
    "i > 0 AND (f < 0 OR s IN ('apple', 'Apple'))",
    "id = 3 OR id = 7 OR id = 199",
    "true",
    "false",
    "1 = 1",
    # IN, BETWEEN
    "i IN (1, 2, 3, -50)",
    "i NOT IN (1, 2, 3)",
    "i IN (1, NULL)",
    "i NOT IN (1, NULL)",
    "i BETWEEN -10 AND 10",
    "i NOT BETWEEN -10 AND 10",
    "id BETWEEN 10 AND 5",
    "f IN (0.75, 1)",
    "d IN (date '2024-01-03', date '2024-01-06')",
    # arithmetic (integer literals are int64: no int32 or uint8 overflow)
    "i + 5 > 20",
    "i * 2 - 1 < 0",
    "i % 3 = 0",
    "i % -3 = 1",
    "i / 2 = 3",
    "-i > 10",
    "i - id > 0",
    "i + 2147483647 > 0",
    "u8 + 250 > 260",
    "u8 - 1 < 0",
    "u8 * 3 > 100",
    "`my col` = 2 * id",
    "id + f > 10",
    "f * 2 = i",
    # floats: NaN sorts above +inf and equals itself; -0.0 = 0.0
    "f > 0",
    "f < 0",
    "f = 0",
    "f = -0.0",
    "f != f",
    "f > 1e308",
    "-f > 0",
    "f / 0 > 1",
    "f IS NULL",
    "f BETWEEN -3.5 AND 3.5",
    "f32 > 1.5",
    "f32 = f",
    # strings: quotes, unicode, empty, LIKE with wildcards and escapes
    "s = 'apple'",
    "s = 'it''s'",
    "s = 'say \"hi\"'",
    "s = 'back\\slash'",
    "s = 'ünïcödé'",
    "s = '漢字'",
    "s = ''",
    "s <> 'apple'",
    "s < 'b'",
    "s > 'Z'",
    "'apple' = s",
    "s LIKE 'a%'",
    "s LIKE 'A%'",
    "s LIKE '%p%'",
    "s LIKE '_pple'",
    "s LIKE '%'",
    "s NOT LIKE 'a%'",
    "s NOT LIKE '%'",
    "s LIKE '100\\%'",
    "s LIKE 'a\\_b'",
    "s LIKE '%字'",
    "s IN ('apple', 'banana', '')",
    "s IS NULL",
    "s = NULL",
    # booleans
    "b",
    "NOT b",
    "b = true",
    "b = false",
    "b != true",
    "b IS NULL",
    "b AND i > 0",
    "b OR i > 0",
    # dates and timestamps (with and without a time zone)
    "d > date '2024-01-15'",
    "d = date '2024-01-03'",
    "d BETWEEN date '2024-01-01' AND date '2024-02-01'",
    "d IS NULL",
    "ts > timestamp '2024-01-03 00:00:00'",
    "ts <= timestamp '2024-01-02 10:00:00.000002'",
    "ts = timestamp '2024-01-01 15:00:00.000003'",
    "ts BETWEEN timestamp '2024-01-02' AND timestamp '2024-01-04'",
    "ts IS NULL",
    "tstz > timestamp '2024-01-05 00:00:00'",
    "tstz > timestamp '2024-01-05T00:00:00Z'",
    "tstz < timestamp '2024-01-05T00:00:00+02:00'",
    "tstz = timestamp '2024-01-01 07:00:00+00:00'",
    # nested fields, backquoted names
    "st.x = 3",
    "st.x > 5 AND st.y LIKE 'a%'",
    "st.inner.z > 30",
    "st.inner.z BETWEEN 3 AND 9",
    "st.y IS NULL",
    "`my col` > 40",
    "`id` < 5",
    # row ids and addresses (fragment << 32 | offset)
    "_rowid < 5",
    "_rowid >= 4294967296 AND _rowid < 4294967300",
    "_rowaddr = 8589934593",
    "_rowaddr >= 12884901888",
    "_rowaddr % 4294967296 = 0",
    # refused by pylance, so refused by lancelet too
    "i = 1.5",
    "i > 1.5",
    "d > '2024-02-01'",
    "tstz > '2024-01-05T00:00:00Z'",
    "b = 1",
    "i > 5 AND",
    "i IN ()",
    "id / 0 > 1",
]


@pytest.mark.parametrize("predicate", PREDICATES)
def test_predicate_matches_pylance(pair, predicate, errors, tables_equal):
    ours, theirs = pair
    assert_same_result(ours, theirs, predicate, errors, tables_equal)
    assert_same_result(ours, theirs, predicate, errors, tables_equal, columns=["id"])


@pytest.mark.parametrize("predicate", [p for p in PREDICATES[:40] if p not in ("i > 5 AND", "i IN ()")])
def test_count_rows_with_predicate_matches_pylance(pair, predicate):
    ours, theirs = pair
    try:
        expected = theirs.count_rows(predicate)
    except Exception:
        pytest.skip("pylance refuses it")
    assert ours.count_rows(predicate) == expected
    assert ours.count_rows(filter=predicate) == expected
    assert sum(f.count_rows(predicate) for f in ours.get_fragments()) == expected


def test_the_fixed_predicates_select_something_and_not_everything(pair):
    """Guards the fixture: most predicates must be informative on this data."""
    _, theirs = pair
    total = theirs.count_rows()
    informative = 0
    for p in PREDICATES:
        try:
            n = theirs.count_rows(p)
        except Exception:
            continue
        informative += 0 < n < total
    assert informative >= 80


@pytest.mark.parametrize(
    "kwargs",
    [
        {"columns": ["s", "id"], "limit": 7},
        {"columns": ["id", "f"], "limit": 5, "offset": 3},
        {"columns": ["id"], "offset": 40},
        {"columns": ["st", "id"], "limit": 100, "offset": 1},
        {"columns": ["id"], "limit": 0},
        {"columns": ["id", "b"], "with_row_id": True},
        {"columns": ["id"], "with_row_address": True, "limit": 10, "offset": 10},
        {"columns": {"id": "id", "twice": "i * 2", "neg": "-f"}, "limit": 9},
    ],
    ids=lambda k: ",".join(f"{a}={b}" for a, b in k.items()),
)
@pytest.mark.parametrize("predicate", ["i > 0", "s LIKE '%a%' OR b", "_rowaddr > 4294967296", "st.x BETWEEN 2 AND 6"])
def test_projection_limit_offset_with_filter_match_pylance_in_order(pair, predicate, kwargs, tables_equal):
    ours, theirs = pair
    expected = _nan_comparable(theirs.to_table(filter=predicate, scan_in_order=True, **kwargs))
    tables_equal(_nan_comparable(ours.to_table(filter=predicate, scan_in_order=True, **kwargs)), expected)
    tables_equal(_nan_comparable(ours.scanner(filter=predicate, scan_in_order=True, **kwargs).to_table()), expected)


def test_filter_over_fragments_and_batches_matches_pylance(pair, tables_equal):
    ours, theirs = pair
    for p in ["i > 0", "f IS NULL OR s = ''"]:
        got = pa.Table.from_batches(list(ours.to_batches(filter=p, batch_size=16)))
        expected = theirs.to_table(filter=p)
        tables_equal(_nan_comparable(got), _nan_comparable(expected))
        for a, b in zip(ours.get_fragments(), theirs.get_fragments()):
            tables_equal(_nan_comparable(a.to_table(filter=p)), _nan_comparable(b.to_table(filter=p)))


# --------------------------------------------------------------------------------------
# errors
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("predicate", ["nope = 1", "nope > 1 AND i > 0", "nope IS NULL"])
def test_unknown_column_in_a_filter_raises_value_error_naming_it(pair, predicate):
    ours, _ = pair
    with pytest.raises(ValueError, match="nope"):
        ours.to_table(filter=predicate)
    with pytest.raises(ValueError, match="nope"):
        ours.scanner(filter=predicate).to_table()


def test_unknown_column_in_count_rows_raises_naming_it(pair, errors):
    ours, _ = pair
    with pytest.raises(errors.bad_predicate, match="nope"):
        ours.count_rows("nope = 1")


@pytest.mark.parametrize("predicate", ["i = 'x'", "s > 5", "d > 5", "i >>> 5", "i = ", "(i > 1"])
def test_bad_predicates_raise_value_error(pair, predicate):
    ours, _ = pair
    with pytest.raises(ValueError):
        ours.to_table(filter=predicate)


@pytest.mark.lancelet_only
@pytest.mark.parametrize("predicate", ["nope = 1", "i = 'x'", "i >>> 5"])
def test_bad_predicates_raise_lance_errors(pair, predicate, lib):
    ours, _ = pair
    with pytest.raises(lib.LanceError):
        ours.to_table(filter=predicate)


# --------------------------------------------------------------------------------------
# (ii) random predicates
# --------------------------------------------------------------------------------------

CMP = st.sampled_from(["=", "!=", "<>", "<", "<=", ">", ">="])
INTS = st.integers(-60, 60)
NONZERO = st.integers(-7, 7).filter(bool)
FLOATS = st.one_of(
    st.sampled_from(["0.0", "-0.0", "1.5", "-2.25", "1e308", "-1e308", "0.75"]),
    st.floats(-80, 80, allow_nan=False).map(lambda x: repr(round(x, 2))),
)
_TEXT = st.text(alphabet="aApPlen'\"%_ é漢字\\", max_size=6)


def _quote(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


STRINGS = st.one_of(st.sampled_from([w for w in WORDS if w is not None]), _TEXT).map(_quote)
PATTERNS = st.lists(st.sampled_from(["%", "_", "a", "A", "p", "an", "'", "é", "漢", "\\%", "\\_", " "]), max_size=4).map(
    lambda parts: _quote("".join(parts))
)
DATES = st.dates(dt.date(2023, 12, 1), dt.date(2025, 12, 31)).map(lambda d: f"date '{d.isoformat()}'")


def _join(items) -> str:
    return ", ".join(items)


@st.composite
def int_atom(draw) -> str:
    col = draw(st.sampled_from(["i", "i", "id", "u8", "`my col`", "st.x"]))
    if col == "u8":
        # pylance refuses out-of-range literals for uint8, except under NOT where it folds
        # them away; that quirk is not worth matching, so keep u8 literals in range.
        return f"u8 {draw(CMP)} {draw(st.integers(0, 255))}"
    kind = draw(st.integers(0, 8))
    if kind == 0:
        return f"{col} {draw(CMP)} {draw(INTS)}"
    if kind == 1:
        return f"{draw(INTS)} {draw(CMP)} {col}"
    if kind == 2:
        op = draw(st.sampled_from(["+", "-", "*"]))
        return f"{col} {op} {draw(INTS)} {draw(CMP)} {draw(INTS)}"
    if kind == 3:
        return f"{col} % {draw(NONZERO)} = {draw(st.integers(-3, 3))}"
    if kind == 4:
        return f"{col} IS {draw(st.sampled_from(['', 'NOT ']))}NULL"
    if kind == 5:
        # An IN list of only NULLs: pylance simplifies `NOT (NOT (i NOT IN (NULL)) AND ...)`
        # to true for every row, NULLs included (SQL says NULL); not a quirk worth matching.
        items = draw(st.lists(st.one_of(INTS.map(str), st.just("NULL")), min_size=1, max_size=4)
                     .filter(lambda xs: any(x != "NULL" for x in xs)))
        return f"{col} {draw(st.sampled_from(['', 'NOT ']))}IN ({_join(items)})"
    if kind == 6:
        return f"{col} {draw(st.sampled_from(['', 'NOT ']))}BETWEEN {draw(INTS)} AND {draw(INTS)}"
    if kind == 7:
        return f"-{col} {draw(CMP)} {draw(INTS)}"
    return f"{col} {draw(st.sampled_from(['+', '-']))} id {draw(CMP)} {draw(INTS)}"


@st.composite
def float_atom(draw) -> str:
    col = draw(st.sampled_from(["f", "f", "f32", "st.inner.z"]))
    kind = draw(st.integers(0, 5))
    # A float32 column against a literal beyond float32's range: pylance casts the literal
    # to inf for `f32 = 1e308` but not under NOT; that quirk is not worth matching.
    floats = FLOATS.filter(lambda x: "308" not in x) if col == "f32" else FLOATS
    if kind == 0:
        return f"{col} {draw(CMP)} {draw(floats)}"
    if kind == 1:
        return f"{col} {draw(CMP)} {draw(INTS)}"
    if kind == 2:
        return f"{col} IS {draw(st.sampled_from(['', 'NOT ']))}NULL"
    if kind == 3:
        return f"{col} {draw(st.sampled_from(['', 'NOT ']))}BETWEEN {draw(floats)} AND {draw(floats)}"
    if kind == 4:
        op = draw(st.sampled_from(["+", "-", "*"]))
        return f"{col} {op} {draw(st.sampled_from(['i', 'id', '2', '0.5']))} {draw(CMP)} {draw(floats)}"
    return f"{col} {draw(CMP)} {draw(st.sampled_from(['f', 'f32', 'i']))}"


@st.composite
def string_atom(draw) -> str:
    col = draw(st.sampled_from(["s", "s", "st.y"]))
    kind = draw(st.integers(0, 4))
    if kind == 0:
        return f"{col} {draw(CMP)} {draw(STRINGS)}"
    if kind == 1:
        return f"{col} {draw(st.sampled_from(['', 'NOT ']))}LIKE {draw(PATTERNS)}"
    if kind == 2:
        items = draw(st.lists(STRINGS, min_size=1, max_size=4))
        return f"{col} {draw(st.sampled_from(['', 'NOT ']))}IN ({_join(items)})"
    if kind == 3:
        return f"{col} IS {draw(st.sampled_from(['', 'NOT ']))}NULL"
    return f"{col} {draw(CMP)} {draw(st.sampled_from(['s', 'st.y']))}"


@st.composite
def bool_atom(draw) -> str:
    return draw(
        st.sampled_from(["b", "NOT b", "b = true", "b = false", "b != true", "b IS NULL", "b IS NOT NULL", "b = (i > 0)"])
    )


@st.composite
def date_atom(draw) -> str:
    kind = draw(st.integers(0, 3))
    if kind == 0:
        return f"d {draw(CMP)} {draw(DATES)}"
    if kind == 1:
        return f"d {draw(st.sampled_from(['', 'NOT ']))}BETWEEN {draw(DATES)} AND {draw(DATES)}"
    if kind == 2:
        return f"d IS {draw(st.sampled_from(['', 'NOT ']))}NULL"
    items = draw(st.lists(DATES, min_size=1, max_size=3))
    return f"d {draw(st.sampled_from(['', 'NOT ']))}IN ({_join(items)})"


ATOMS = st.one_of(int_atom(), float_atom(), string_atom(), bool_atom(), date_atom())

def _not_contradiction(t) -> bool:
    """pylance's optimizer folds ``x AND NOT x`` (and ``x OR NOT x``) to a constant, which is
    wrong for rows where x is NULL; lancelet keeps SQL's three-valued logic, so such pairs
    are not generated."""
    a, _, b = t

    def positive(p: str) -> str:
        while p.startswith("NOT (") and p.endswith(")"):
            p = p[5:-1]
        for neg, pos in ((" NOT IN ", " IN "), (" NOT BETWEEN ", " BETWEEN "), (" NOT LIKE ", " LIKE "),
                         (" IS NOT ", " IS ")):
            p = p.replace(neg, pos)
        return p

    return a == b or positive(a) != positive(b)


PREDICATE = st.recursive(
    ATOMS,
    lambda inner: st.one_of(
        st.tuples(inner, st.sampled_from(["AND", "OR"]), inner)
        .filter(_not_contradiction)
        .map(lambda t: f"({t[0]}) {t[1]} ({t[2]})"),
        inner.map(lambda p: f"NOT ({p})"),
    ),
    max_leaves=5,
)


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(predicate=PREDICATE)
def test_random_predicates_match_pylance(pair, errors, tables_equal, predicate):
    ours, theirs = pair
    try:
        assert_same_result(ours, theirs, predicate, errors, tables_equal)
    except AssertionError:
        # pylance's optimizer folds contradictions such as `s IN ('a') AND s IN ('b')` or
        # `x AND NOT x` to a constant, which is wrong for rows where s or x is NULL (SQL's
        # three-valued logic, which lancelet keeps). Rows whose columns are all set must
        # still agree exactly.
        guard = _not_null_guard(predicate)
        if guard is None:
            raise
        assert_same_result(ours, theirs, f"({predicate}) AND {guard}", errors, tables_equal)


_GUARDED_COLUMNS = ["`my col`", "st.inner.z", "st.x", "f32", "tstz", "id", "u8", "ts", "i", "f", "s", "b", "d"]


def _not_null_guard(predicate: str):
    """`c1 IS NOT NULL AND ...` over the columns ``predicate`` names, or None."""
    import re

    cols = [c for c in _GUARDED_COLUMNS if re.search(rf"(?<![\w.`']){re.escape(c)}(?![\w`'])", predicate)]
    return " AND ".join(f"{c} IS NOT NULL" for c in cols) or None


@settings(max_examples=max(1, EXAMPLES // 3), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(predicate=PREDICATE, limit=st.none() | st.integers(0, 30), offset=st.none() | st.integers(0, 30))
def test_random_predicates_with_limit_offset_match_pylance_in_order(pair, tables_equal, predicate, limit, offset):
    ours, theirs = pair
    kwargs = {"filter": predicate, "limit": limit, "offset": offset, "columns": ["id", "s"], "scan_in_order": True}
    try:
        expected = theirs.to_table(**kwargs)
    except Exception:
        return
    got = ours.to_table(**kwargs)
    if not got.equals(expected) and _not_null_guard(predicate):
        # pylance's constant folding is wrong on NULL rows (see above): compare set rows only.
        kwargs["filter"] = f"({predicate}) AND {_not_null_guard(predicate)}"
        expected, got = theirs.to_table(**kwargs), ours.to_table(**kwargs)
    tables_equal(_nan_comparable(got), _nan_comparable(expected))


def test_random_predicates_are_mostly_accepted_by_pylance(filter_uri):
    """Guards the grammar: at most a few percent of generated predicates may be refused."""
    theirs = lance.dataset(filter_uri)
    refused, seen = [], 0

    @settings(max_examples=200, deadline=None, database=None)
    @given(predicate=PREDICATE)
    def probe(predicate):
        nonlocal seen
        seen += 1
        try:
            theirs.count_rows(predicate)
        except Exception:
            refused.append(predicate)

    probe()
    assert len(refused) <= seen // 10, refused[:10]
