"""A random sequence of appends, deletes, updates, merge-inserts, column additions and drops,
renames and compactions, applied to lancelet and to a plain in-memory model (a dict of rows keyed by
id), gives the same table after every step; every version stays readable as it was, and
pylance reads the final dataset the same."""

from __future__ import annotations

import datetime as dt

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import lancelet

lance = pytest.importorskip("lance")

OPS = st.lists(
    st.one_of(
        st.tuples(st.just("append"), st.integers(1, 40)),
        st.tuples(st.just("delete"), st.integers(2, 9), st.integers(0, 8)),
        st.tuples(st.just("update"), st.integers(2, 9), st.integers(0, 8), st.integers(-5, 5)),
        st.tuples(st.just("add_sql"),),
        st.tuples(st.just("add_null"),),
        st.tuples(st.just("drop"),),
        st.tuples(st.just("rename"),),
        st.tuples(st.just("compact"), st.sampled_from([10, 50, 1000])),
        st.tuples(st.just("merge"), st.integers(0, 60), st.integers(1, 15), st.booleans(), st.booleans()),
    ),
    min_size=1,
    max_size=12,
)


class Model:
    """Rows by id; columns in order."""

    def __init__(self) -> None:
        self.columns = ["id", "v"]
        self.rows = {}
        self.next_id = 0
        self.extra = 0

    def table(self) -> list:
        return [dict(zip(self.columns, [r[c] for c in self.columns])) for _, r in sorted(self.rows.items())]


def _canonical(t: pa.Table) -> list:
    return sorted(t.to_pylist(), key=lambda r: r["id"])


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=OPS)
def test_random_histories_match_a_model(tmp_path_factory, ops):
    uri = str(tmp_path_factory.mktemp("model") / "d.lance")
    model = Model()
    first = pa.table({"id": pa.array(range(20), pa.int64()), "v": pa.array(range(20), pa.int64())})
    lancelet.write_dataset(first, uri, max_rows_per_file=8)
    model.rows = {i: {"id": i, "v": i} for i in range(20)}
    model.next_id = 20
    snapshots = {1: model.table()}
    for op in ops:
        ds = lancelet.dataset(uri)
        kind = op[0]
        if kind == "append":
            n = op[1]
            ids = list(range(model.next_id, model.next_id + n))
            model.next_id += n
            cols = {"id": pa.array(ids, pa.int64()), "v": pa.array(ids, pa.int64())}
            for c in model.columns[2:]:
                t = ds.schema.field(c).type
                cols[c] = pa.array([None] * n, t)
            lancelet.write_dataset(pa.table({c: cols[c] for c in model.columns}), uri, mode="append",
                                   max_rows_per_file=8)
            for i in ids:
                model.rows[i] = {c: (i if c in ("id", "v") else None) for c in model.columns}
        elif kind == "delete":
            m, r = op[1], op[2] % op[1]
            ds.delete(f"id % {m} = {r}")
            model.rows = {i: row for i, row in model.rows.items() if i % m != r}
        elif kind == "update":
            m, r, d = op[1], op[2] % op[1], op[3]
            res = ds.update({"v": f"v + {d}"}, where=f"id % {m} = {r}")
            hit = [i for i in model.rows if i % m == r]
            assert res["num_rows_updated"] == len(hit)
            for i in hit:
                model.rows[i]["v"] += d
        elif kind == "add_sql":
            name = f"c{model.extra}"
            model.extra += 1
            ds.add_columns({name: "v * 3"})
            model.columns.append(name)
            for row in model.rows.values():
                row[name] = row["v"] * 3
        elif kind == "add_null":
            name = f"n{model.extra}"
            model.extra += 1
            ds.add_columns(pa.field(name, pa.int64()))
            model.columns.append(name)
            for row in model.rows.values():
                row[name] = None
        elif kind == "drop":
            if len(model.columns) <= 2:
                continue
            name = model.columns.pop()
            ds.drop_columns([name])
            for row in model.rows.values():
                del row[name]
        elif kind == "rename":
            if len(model.columns) <= 2:
                continue
            old = model.columns[-1]
            new = f"r{model.extra}"
            model.extra += 1
            ds.alter_columns({"path": old, "name": new})
            model.columns[-1] = new
            for row in model.rows.values():
                row[new] = row.pop(old)
        elif kind == "compact":
            ds.optimize.compact_files(target_rows_per_fragment=op[1])
        elif kind == "merge":
            lo, n, update, insert = op[1:]
            ids = list(range(lo, lo + n))
            source = pa.table({"id": pa.array(ids, pa.int64()), "v": pa.array([i * 10 for i in ids], pa.int64())})
            b = ds.merge_insert("id")
            b = b.when_matched_update_all() if update else b
            b = b.when_not_matched_insert_all() if insert else b
            if not (update or insert):
                continue
            res = b.execute(source)
            matched = [i for i in ids if i in model.rows]
            assert res["num_updated_rows"] == (len(matched) if update else 0)
            for i in ids:
                if i in model.rows and update:  # columns the source lacks keep their values (as pylance)
                    model.rows[i]["v"] = i * 10
                elif i not in model.rows and insert:
                    model.rows[i] = {c: (i if c == "id" else i * 10 if c == "v" else None) for c in model.columns}
            model.next_id = max(model.next_id, lo + n)
        latest = lancelet.dataset(uri)
        assert latest.schema.names == model.columns, op
        assert _canonical(latest.to_table()) == model.table(), op
        snapshots[latest.version] = model.table()
    for v, rows in snapshots.items():
        assert _canonical(lancelet.dataset(uri, version=v).to_table()) == rows, f"version {v}"
    assert _canonical(lance.dataset(uri).to_table()) == model.table()
    # Cleanup keeps the latest version whole.
    lancelet.dataset(uri).cleanup_old_versions(older_than=dt.timedelta(0), delete_unverified=True)
    assert _canonical(lancelet.dataset(uri).to_table()) == model.table()
    assert _canonical(lance.dataset(uri).to_table()) == model.table()
