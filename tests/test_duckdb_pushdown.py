"""DuckDB filter pushdown into a lancelet dataset (a ``pyarrow.dataset.Dataset``).

DuckDB hands the scan a pyarrow Expression for the WHERE clause and does not filter the
returned rows again, so each query here runs on the lancelet dataset and on the same data as
a pyarrow table (where pyarrow applies the same pushed expression) and must give the same
rows. Checked with DuckDB 2.0.1, which pushes ``x IN (...)`` as
``if_else(is_valid(x), is_in(x, value_set), null)``.
"""

from __future__ import annotations

import datetime as dt
import decimal

import pyarrow as pa
import pyarrow.compute as pc
import pytest

import lancelet
from lancelet._expressions import to_sql

duckdb = pytest.importorskip("duckdb")

F = pc.field


def _table() -> pa.Table:
    n = 12
    utc = dt.timezone.utc
    return pa.table(
        {
            "id": pa.array([None if i == 3 else i for i in range(n)], pa.int64()),
            "u": pa.array([i % 5 for i in range(n)], pa.uint8()),
            "s": pa.array([None if i == 4 else f"s{i}" for i in range(n)]),
            "d": pa.array([None if i == 5 else dt.date(2024, 1, 1) + dt.timedelta(days=i) for i in range(n)]),
            "ts": pa.array(
                [None if i == 6 else dt.datetime(2024, 1, 1) + dt.timedelta(hours=i) for i in range(n)],
                pa.timestamp("us"),
            ),
            "tz": pa.array(
                [dt.datetime(2024, 1, 1, tzinfo=utc) + dt.timedelta(hours=i) for i in range(n)],
                pa.timestamp("us", "UTC"),
            ),
            "dec": pa.array([None if i == 7 else decimal.Decimal(i) / 4 for i in range(n)], pa.decimal128(10, 2)),
            "st": pa.array([None if i == 8 else {"x": i % 4, "y": f"y{i}"} for i in range(n)]),
            "b": pa.array([None if i == 9 else i % 3 == 0 for i in range(n)]),
            "tm": pa.array([None if i == 10 else dt.time(i) for i in range(n)], pa.time64("us")),
            "dict": pa.array([f"k{i % 3}" for i in range(n)]).dictionary_encode(),
        }
    )


WHERE = [
    # IN lists of every literal type, and their negations and combinations
    "id IN (1, 2, 5)",
    "id NOT IN (1, 2, 5)",
    "NOT (id IN (1, 2))",
    "id IN (1, 2) OR s = 's7'",
    "id NOT IN (1, 2) OR s IN ('s1', 's9')",
    "id IN (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13)",
    "u IN (0, 4)",
    "s IN ('s1', 's4', 's11', 'zz')",
    "s NOT IN ('s1', 's2')",
    "d IN (DATE '2024-01-02', DATE '2024-01-06', DATE '2024-01-09')",
    "ts IN (TIMESTAMP '2024-01-01 01:00:00', TIMESTAMP '2024-01-01 06:00:00', TIMESTAMP '2024-01-01 11:00:00')",
    "tz IN (TIMESTAMPTZ '2024-01-01 01:00:00+00', TIMESTAMPTZ '2024-01-01 04:00:00+02')",
    "dec IN (0.25, 1.75, 2.50)",
    "st.x IN (1, 3)",
    "st.y IN ('y1', 'y8', 'y10')",
    "dict IN ('k0', 'k2')",
    "id IN (1, 2) AND s NOT IN ('s1')",
    "NOT (id IN (1, 2) AND s IN ('s2'))",
    # comparisons, NULL tests, AND/OR/NOT
    "id > 4",
    "id BETWEEN 2 AND 6",
    "s >= 's5' AND s < 's8'",
    "d > DATE '2024-01-04'",
    "ts <= TIMESTAMP '2024-01-01 05:30:00'",
    "tz > TIMESTAMPTZ '2024-01-01 05:00:00+00'",
    "dec > 1.5",
    "st.x = 2",
    "st IS NULL",
    "st.y IS NOT NULL",
    "s IS NULL",
    "id IS NOT NULL AND b",
    "b = false",
    "NOT (id = 1 OR s = 's2')",
    "id = 1 OR (s = 's2' AND d IS NOT NULL)",
    # lancelet's SQL has no TIME literal: pyarrow evaluates these on the scanned batches
    "tm = TIME '02:00:00'",
    "tm > TIME '08:00:00' OR id = 1",
    "tm IN (TIME '01:00:00', TIME '10:00:00', TIME '11:00:00')",
]


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    table = _table()
    ds = lancelet.write_dataset(table, str(tmp_path_factory.mktemp("duck") / "t.lance"), max_rows_per_file=5)
    return table, ds


@pytest.mark.parametrize("where", WHERE)
def test_duckdb_filters_match_a_pyarrow_table(data, where):
    table, ds = data
    con = duckdb.connect()
    con.register("ds", ds)
    con.register("t", table)
    query = "SELECT id, s FROM {} WHERE " + where + " ORDER BY id NULLS LAST, s NULLS LAST"
    expected = con.sql(query.format("t")).fetchall()
    assert con.sql(query.format("ds")).fetchall() == expected
    count = "SELECT count(*) FROM {} WHERE " + where
    assert con.sql(count.format("ds")).fetchall() == con.sql(count.format("t")).fetchall()


def test_duckdb_in_lists_are_filtered_by_the_native_scan(tmp_path, monkeypatch):
    n = 50_000
    table = pa.table({"id": pa.array(range(n), pa.int64()), "s": [f"s{i}" for i in range(n)]})
    ds = lancelet.write_dataset(table, str(tmp_path / "t.lance"))  # noqa: F841 - read by DuckDB
    scanners = []
    original = lancelet.LanceDataset.scanner

    def spy(self, *args, **kwargs):
        scanners.append(original(self, *args, **kwargs))
        return scanners[-1]

    monkeypatch.setattr(lancelet.LanceDataset, "scanner", spy)
    got = duckdb.sql("SELECT id FROM ds WHERE s IN ('s3', 's40000', 'nope') ORDER BY id").fetchall()
    assert got == [(3,), (40000,)]
    (scanner,) = scanners
    assert type(scanner) is lancelet.LanceScanner  # translated into SQL, not evaluated by pyarrow
    assert scanner.scan_stats.rows_matched == 2


def test_in_with_null_semantics_translates_exactly(tmp_path):
    # if_else(is_valid(x), is_in(x, set), null): NULL for a NULL x, else membership. A NULL in
    # the set matches nothing (MATCH: x is never NULL there), so NOT IN keeps the misses.
    t = pa.table({"x": pa.array([1, 2, None, 4], pa.int64())})
    ds = lancelet.write_dataset(t, str(tmp_path / "t.lance"))
    null = pa.scalar(None, pa.bool_())

    def pattern(values, **kw):
        return pc.if_else(pc.is_valid(F("x")), pc.is_in(F("x"), pa.array(values, pa.int64()), **kw), null)

    exprs = [
        pattern([1, 4]),
        ~pattern([1, 4]),
        pattern([1, None]),
        ~pattern([1, None]),
        ~pattern([None]),
        pattern([]),
        ~pattern([]),
        ~pattern([1], skip_nulls=True),
        pc.if_else(F("x") > 1, F("x") < 4, pa.scalar(False)),
        ~pc.if_else(F("x") > 1, F("x") < 4, pa.scalar(False)),
        ~pc.if_else(F("x") > 1, pa.scalar(True), null),
    ]
    for e in exprs:
        assert "if_else" not in to_sql(e)
        want = t.filter(e)["x"].to_pylist()
        assert ds.to_table(filter=e)["x"].to_pylist() == want, str(e)
        assert ds.count_rows(e) == len(want), str(e)
    assert to_sql(pattern([1, None])) == "(`x` IN (1))"


def test_untranslatable_filters_are_evaluated_by_pyarrow(tmp_path):
    t = pa.table(
        {
            "id": pa.array(range(10), pa.int64()),
            "s": [f"{i}x" for i in range(10)],
            "tm": pa.array([dt.time(i) for i in range(10)], pa.time64("us")),
        }
    )
    from lancelet._expressions import UntranslatableExpressionError

    ds = lancelet.write_dataset(t, str(tmp_path / "t.lance"), max_rows_per_file=4)
    expr = (pc.utf8_reverse(F("s")) == "x3") | (F("tm") >= pa.scalar(dt.time(7), pa.time64("us")))
    with pytest.raises(UntranslatableExpressionError):
        to_sql(expr)
    want = t.filter(expr)
    scanner = ds.scanner(columns=["id"], filter=expr)
    assert scanner.projected_schema == pa.schema([("id", pa.int64())])
    assert scanner.to_table() == want.select(["id"])
    assert scanner.count_rows() == 4
    assert ds.count_rows(expr) == 4
    assert ds.to_table(filter=expr) == want
    assert ds.to_table(columns=["s"], filter=expr, offset=1, limit=2)["s"].to_pylist() == ["7x", "8x"]
    assert ds.to_table(columns=[], filter=expr).num_rows == 4
    assert ds.to_table(columns=["id"], filter=expr, with_row_id=True).column_names == ["id", "_rowid"]
    assert duckdb.sql("SELECT id FROM ds WHERE tm >= TIME '07:00:00' ORDER BY id").fetchall() == [(7,), (8,), (9,)]
    # pyarrow cannot evaluate it either: the translation error stands.
    with pytest.raises(TypeError, match="literal"):
        ds.to_table(filter=F("id") == pa.scalar(dt.time(1), pa.time64("us")))
