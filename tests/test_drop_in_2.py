"""Drop-in, part 2: pyarrow Expression filters, DuckDB pushdown, take() with expressions and
``_rowoffset``, ``order_by``, and ``LanceFileSession``.

As in ``test_drop_in.py``, each test runs one small program with ``lance`` (the pylance
oracle) and with ``lib`` (lancelet; pylance itself when ``LANCELET_TEST_ORACLE_SELF=1``) and
asserts the same results. Tests of lancelet's own behaviour carry ``lancelet_only``.
"""

from __future__ import annotations

import datetime as dt
import sys
from pathlib import Path
from typing import Any, Callable

import pyarrow as pa
import pyarrow.compute as pc
import pytest

lance = pytest.importorskip("lance")

import lancelet  # noqa: E402

pytestmark = pytest.mark.interop

F = pc.field
N = 20


def both(lib, tmp_path: Path, program: Callable[[Any, Path], Any]) -> tuple:
    """``program(module, workdir)`` with pylance, then with ``lib``: (theirs, ours)."""
    out = []
    for name, mod in (("pylance", lance), ("ours", lib)):
        d = tmp_path / name
        d.mkdir()
        out.append(program(mod, d))
    return tuple(out)


def submodule(mod, name: str):
    """``lance.<name>`` / ``lancelet.<name>``."""
    return sys.modules[f"{mod.__name__}.{name}"]


def mixed(n: int = N) -> pa.Table:
    utc = dt.timezone.utc
    return pa.table({
        "a": pa.array([None if i == 3 else i for i in range(n)], pa.int64()),
        "f": pa.array([i / 2 for i in range(n)], pa.float64()),
        "s": pa.array([None if i == 4 else "it's" if i == 5 else f"{'x' if i % 2 else 'y'}{i}" for i in range(n)]),
        "b": pa.array([None if i == 6 else i % 3 == 0 for i in range(n)]),
        "d": pa.array([dt.date(2024, 1, 1) + dt.timedelta(days=i) for i in range(n)], pa.date32()),
        "t": pa.array([dt.datetime(2024, 1, 1) + dt.timedelta(hours=i) for i in range(n)], pa.timestamp("us")),
        "tz": pa.array([dt.datetime(2024, 1, 1, tzinfo=utc) + dt.timedelta(hours=i) for i in range(n)],
                       pa.timestamp("us", "UTC")),
        "st": pa.array([{"x": i, "y": f"y{i}"} for i in range(n)]),
    })


# --------------------------------------------------------------------------------------
# 1. Filters given as pyarrow compute expressions
# --------------------------------------------------------------------------------------

FILTERS = {
    "greater": lambda: F("a") > 5,
    "and with isin": lambda: (F("a") > 1) & F("s").isin(["x1", "y2", "x3"]),
    "or": lambda: (F("a") < 2) | (F("a") >= 18),
    "not is_null": lambda: ~F("b").is_null(),
    "is_valid": lambda: F("a").is_valid(),
    "string equal with a quote": lambda: F("s") == "it's",
    "string less": lambda: F("s") < "x3",
    "date": lambda: F("d") >= dt.date(2024, 1, 10),
    "timestamp": lambda: F("t") < dt.datetime(2024, 1, 1, 5),
    "zoned timestamp": lambda: F("tz") < pa.scalar(dt.datetime(2024, 1, 1, 5, tzinfo=dt.timezone.utc),
                                                   pa.timestamp("us", "UTC")),
    "boolean literal": lambda: F("b") == True,  # noqa: E712
    "boolean column": lambda: F("b"),
    "invert": lambda: pc.invert(F("b")),
    "float": lambda: F("f") > 2.5,
    "int32 literal": lambda: F("a") == pa.scalar(3, pa.int32()),
    "isin with null": lambda: F("a").isin([1, None]),
    "not isin": lambda: ~F("a").isin([1, 2]),
    "arithmetic": lambda: (F("a") * 2 + 1) > 7,
    "division": lambda: (F("f") / 2) > 3,
    "subtraction": lambda: (F("a") - 1) == 4,
    "starts_with": lambda: pc.starts_with(F("s"), "x1"),
    "ends_with": lambda: pc.ends_with(F("s"), "9"),
    "match_substring": lambda: pc.match_substring(F("s"), "1"),
    "is_nan": lambda: pc.is_nan(F("f")),
    "true": lambda: pc.scalar(True),
    "equal null": lambda: F("a") == pa.scalar(None, pa.int64()),
}


@pytest.mark.parametrize("name", list(FILTERS))
def test_expression_filters(lib, tmp_path, name):
    def program(mod, d):
        ds = mod.write_dataset(mixed(), str(d / "t.lance"))
        return ds.to_table(columns=["a"], filter=FILTERS[name]())["a"].to_pylist()

    theirs, ours = both(lib, tmp_path, program)
    assert ours == theirs


def test_expression_filters_everywhere(lib, tmp_path):
    def program(mod, d):
        ds = mod.write_dataset(mixed(), str(d / "t.lance"), max_rows_per_file=7)
        frag = ds.get_fragments()[1]
        out = [
            ds.count_rows(filter=F("a") > 5),
            ds.count_rows(F("s").isin(pa.array([], pa.string()))),
            [b.num_rows for b in ds.to_batches(filter=F("a") < 9, columns=["a"])],
            ds.scanner(filter=F("a") < 9).count_rows(),
            ds.scanner(filter=F("a") < 9, columns=["a"]).to_table()["a"].to_pylist(),
            frag.count_rows(F("a") > 8),
            frag.to_table(filter=F("a") > 8, columns=["a"])["a"].to_pylist(),
            frag.scanner(filter=F("a") > 8, columns=["a"]).to_table()["a"].to_pylist(),
            ds.delete(F("a") < 3),
            ds.count_rows(),
            ds.update({"f": "f * 10"}, where=F("a") == 10),
            ds.to_table(filter="a = 10")["f"].to_pylist(),
        ]
        return out

    theirs, ours = both(lib, tmp_path, program)
    assert ours == theirs


@pytest.mark.lancelet_only
def test_expression_translation():
    from lancelet._expressions import to_sql

    assert to_sql((F("a") > 5) & F("s").isin(["x", "y"])) == "((`a` > 5) AND (`s` IN ('x', 'y')))"
    assert to_sql(F("s") == "it's") == "(`s` = 'it''s')"
    assert to_sql(F("d") < dt.date(2024, 1, 2)) == "(`d` < DATE '2024-01-02')"
    assert to_sql(F("t") >= pa.scalar(dt.datetime(2024, 1, 1, 10, 0, 0, 500), pa.timestamp("us"))) == \
        "(`t` >= TIMESTAMP '2024-01-01 10:00:00.0005')"
    assert to_sql(F("st", "x") == 1) == "(`st`.`x` = 1)"
    assert to_sql(~F("b").is_null()) == "(NOT (`b` IS NULL))"
    assert to_sql(pc.and_(F("a") > 1, F("a") < 3)) == "((`a` > 1) AND (`a` < 3))"


@pytest.mark.lancelet_only
def test_nested_field_expressions_and_ignore_case(tmp_path):
    # Beyond pylance (which refuses nested references and drops ignore_case).
    ds = lancelet.write_dataset(mixed(), str(tmp_path / "t.lance"))
    assert ds.to_table(columns=["a"], filter=F("st", "x") > 15)["a"].to_pylist() == [16, 17, 18, 19]
    assert ds.count_rows(pc.match_substring(F("s"), "X1", ignore_case=True)) == 6
    assert ds.count_rows(pc.match_like(F("s"), "x1%")) == 6


@pytest.mark.lancelet_only
def test_untranslatable_expressions_fail_clearly(tmp_path):
    ds = lancelet.write_dataset(mixed(), str(tmp_path / "t.lance"))
    # No SQL form, but pyarrow evaluates it (tests/test_duckdb_pushdown.py has more).
    assert ds.to_table(columns=["a"], filter=pc.utf8_reverse(F("s")) == "1x")["a"].to_pylist() == [1]
    # Neither lancelet's SQL nor pyarrow can compare an int64 with a time64.
    with pytest.raises(TypeError, match="literal"):
        ds.to_table(filter=F("a") == pa.scalar(dt.time(1, 2), pa.time64("us")))


# --------------------------------------------------------------------------------------
# 2. DuckDB pushes projections and filters into the scan
# --------------------------------------------------------------------------------------


def test_duckdb_queries(lib, tmp_path):
    duckdb = pytest.importorskip("duckdb")

    def program(mod, d):
        ds = mod.write_dataset(mixed(), str(d / "t.lance"))  # noqa: F841 - read by DuckDB
        con = duckdb.connect()
        return [
            con.sql("select count(*) from ds where a < 10").fetchall(),
            con.sql("select a, s from ds where s = 'x7' or a between 3 and 4 order by a").fetchall(),
            con.sql("select sum(f) from ds where b and d >= DATE '2024-01-05'").fetchall(),
            con.sql("select st.x from ds where a is null").fetchall(),
        ]

    theirs, ours = both(lib, tmp_path, program)
    assert ours == theirs


@pytest.mark.lancelet_only
def test_duckdb_pushes_columns_and_filters_down(tmp_path, monkeypatch):
    duckdb = pytest.importorskip("duckdb")
    import pyarrow.dataset as pds

    n = 100_000
    table = pa.table({"id": pa.array(range(n), pa.int64()), "s": [f"s{i}" for i in range(n)]})
    ds = lancelet.write_dataset(table, str(tmp_path / "t.lance"))
    assert isinstance(ds, pds.Dataset)
    scanners = []
    original = lancelet.LanceDataset.scanner

    def spy(self, *args, **kwargs):
        scanner = original(self, *args, **kwargs)
        scanners.append((kwargs, scanner))
        return scanner

    monkeypatch.setattr(lancelet.LanceDataset, "scanner", spy)
    assert duckdb.sql("select id from ds where id < 10").fetchall() == [(i,) for i in range(10)]
    assert len(scanners) == 1
    kwargs, scanner = scanners[0]
    assert kwargs["columns"] == ["id"]
    assert str(kwargs["filter"]) == "(id < 10)"
    stats = scanner.scan_stats
    assert stats.rows_matched == 10
    assert stats.rows_scanned < n / 4
    full = ds.scanner()
    full.to_table()
    assert stats.bytes_read < full.scan_stats.bytes_read / 10


@pytest.mark.lancelet_only
def test_inherited_arrow_dataset_methods_fail_cleanly(tmp_path):
    ds = lancelet.write_dataset(mixed(), str(tmp_path / "t.lance"))
    for call in (lambda: ds.partition_expression, lambda: ds.sort_by("a"), lambda: ds.filter(F("a") > 1),
                 lambda: ds.join(ds, "a"), lambda: ds.replace_schema(ds.schema)):
        with pytest.raises(NotImplementedError):
            call()


# --------------------------------------------------------------------------------------
# 3. take() with SQL expressions, _rowid and _rowoffset
# --------------------------------------------------------------------------------------


def test_take_with_expressions_and_system_columns(lib, tmp_path):
    def program(mod, d):
        t = pa.table({"a": pa.array(range(10), pa.int64()), "s": [f"s{i}" for i in range(10)]})
        ds = mod.write_dataset(t, str(d / "t.lance"), max_rows_per_file=4)
        ds.delete("a = 1")
        return [
            ds.take([0, 5, 2], columns={"x": "a * 2", "s": "s"}).to_pydict(),
            ds.take([3], columns={"r": "_rowid", "o": "_rowaddr"}).to_pydict(),
            ds.take([], columns={"x": "a * 2"}).to_pydict(),
            ds.take([3, 3], columns={"x": "a * 2"}).to_pydict(),
            ds.take([0, 5, 2], columns=["_rowid"]).to_pydict(),
            ds.take([0, 5, 2], columns=["a", "_rowid"]).to_pydict(),
            ds.take([0, 5, 2], columns=["_rowaddr", "a"]).to_pydict(),
            ds.take([0, 5, 2], columns=["_rowoffset"]).to_pydict(),
            ds.take([0, 5, 2], columns=["a", "_rowoffset"]).to_pydict(),
            ds.take([1], columns=["a", "_rowoffset"]).schema.field("_rowoffset").type,
        ]

    theirs, ours = both(lib, tmp_path, program)
    assert ours == theirs


def test_rowoffset_in_scans(lib, tmp_path):
    def program(mod, d):
        t = pa.table({"a": pa.array(range(10), pa.int64())})
        ds = mod.write_dataset(t, str(d / "t.lance"), max_rows_per_file=4)
        ds.delete("a = 1 OR a = 6")
        return [
            ds.to_table(columns=["a", "_rowoffset"]).to_pydict(),
            ds.to_table(columns=["a", "_rowoffset"], filter="a > 4").to_pydict(),
            ds.to_table(columns=["a", "_rowoffset"], limit=2, offset=3).to_pydict(),
            ds.get_fragments()[1].to_table(columns=["a", "_rowoffset"]).to_pydict(),
            ds.to_table(columns=["_rowoffset", "a"], with_row_id=True).to_pydict(),
            ds.to_table(columns=["a", "_rowoffset"]).schema.field("_rowoffset").type,
        ]

    theirs, ours = both(lib, tmp_path, program)
    assert ours == theirs


# --------------------------------------------------------------------------------------
# 4. scanner(order_by=[ColumnOrdering(...)])
# --------------------------------------------------------------------------------------


def test_order_by(lib, tmp_path):
    def program(mod, d):
        co = submodule(mod, "dataset").ColumnOrdering
        t = pa.table({
            "a": pa.array([3, None, 1, 2, None, 5, 4, 0], pa.int64()),
            "b": ["x", "y", "z", "w", "v", "u", "t", "s"],
            "f": [1.0, float("nan"), None, 2.0, 0.5, -1.0, 3.0, 4.0],
        })
        ds = mod.write_dataset(t, str(d / "t.lance"), max_rows_per_file=3)

        def run(**kw):  # NaN as a string, since NaN != NaN
            return {k: ["nan" if x != x else x for x in v] for k, v in ds.to_table(**kw).to_pydict().items()}

        return [
            run(order_by=[co("a")]),
            run(order_by=[co("a", ascending=False)]),
            run(order_by=[co("a", nulls_first=True)]),
            run(order_by=[co("a", ascending=False, nulls_first=True)]),
            run(order_by=["b"]),
            run(order_by=[co("a")], limit=3, offset=1),
            run(order_by=[co("f")]),
            run(order_by=[co("f", ascending=False, nulls_first=True)]),
            run(order_by=[co("a"), co("b", ascending=False)], filter="a > 1"),
            run(order_by=[co("a")], with_row_id=True, columns=["a"]),
            run(order_by=[]),
            run(order_by=[co("a")], columns={"y": "a * 2"}),
            [b.num_rows for b in ds.to_batches(order_by=[co("a")], batch_size=3)],
            ds.scanner(order_by=[co("b", ascending=False)]).to_table()["b"].to_pylist(),
            ds.get_fragments()[0].to_table(order_by=[co("b")])["b"].to_pylist(),
            [co("a"), co("a").ascending, co("a").nulls_first],
        ]

    theirs, ours = both(lib, tmp_path, program)
    assert ours[:-1] == theirs[:-1]
    assert [repr(x) for x in ours[-1]] == [repr(x) for x in theirs[-1]]


@pytest.mark.lancelet_only
def test_order_by_columns_not_selected_and_errors(tmp_path):
    from lancelet.dataset import ColumnOrdering

    t = pa.table({"a": pa.array([2, 1, 3], pa.int64()), "st": pa.array([{"x": 3}, {"x": 1}, {"x": 2}]),
                  "b": ["p", "q", "r"]})
    ds = lancelet.write_dataset(t, str(tmp_path / "t.lance"))
    assert ds.to_table(columns=["b"], order_by=[ColumnOrdering("a")]).to_pydict() == {"b": ["q", "p", "r"]}
    assert ds.to_table(order_by=[ColumnOrdering("st.x")])["b"].to_pylist() == ["q", "r", "p"]
    assert ds.to_table(columns=["a", "_rowoffset"], order_by=[ColumnOrdering("_rowoffset", False)]).to_pydict() == \
        {"a": [3, 1, 2], "_rowoffset": [2, 1, 0]}
    with pytest.raises(ValueError, match="zz"):
        ds.to_table(order_by=[ColumnOrdering("zz")])
    with pytest.raises(ValueError, match="order_by"):
        ds.to_table(order_by="a")


# --------------------------------------------------------------------------------------
# 5. LanceFileSession
# --------------------------------------------------------------------------------------


def test_file_session(lib, tmp_path):
    def program(mod, d):
        fm = submodule(mod, "file")
        s = fm.LanceFileSession(str(d / "files"))
        w = s.open_writer("a/b/x.lance", schema=pa.schema([("x", pa.int64())]))
        w.write_batch(pa.table({"x": [1, 2]}))
        rows = w.close()
        w = s.open_writer("y.lance", version="2.0")
        w.write_batch(pa.table({"x": [3]}))
        w.close()
        (d / "local.txt").write_text("hi")
        s.upload_file(str(d / "local.txt"), "up/l.txt")
        listed = sorted(s.list())
        s.download_file("up/l.txt", str(d / "back.txt"))
        s.delete_file("up/l.txt")
        errors = []
        for call in (lambda: s.delete_file("nope"), lambda: s.read_range("nope", 0, 1),
                     lambda: s.read_range("y.lance", 10**6, 4), lambda: s.download_file("nope", str(d / "z"))):
            try:
                call()
                errors.append(None)
            except OSError:
                errors.append("OSError")
        return [
            rows,
            s.contains("a/b/x.lance"), s.contains("a/b"), s.contains("nope"),
            listed, sorted(s.list()), s.list("a"), s.list("nope"),
            s.list_with_delimiter(), s.list_with_delimiter("a"), s.list_with_delimiter("a/b"),
            s.open_reader("a/b/x.lance", columns=["x"]).read_all().to_table().to_pydict(),
            s.open_reader("y.lance").num_rows(),
            s.read_range("a/b/x.lance", 0, 4) == (d / "files/a/b/x.lance").read_bytes()[:4],
            (d / "back.txt").read_text(),
            errors,
        ]

    theirs, ours = both(lib, tmp_path, program)
    for i, (o, t) in enumerate(zip(ours, theirs)):
        if hasattr(t, "common_prefixes"):
            o, t = (o.common_prefixes, o.objects), (t.common_prefixes, t.objects)
        assert o == t, i
