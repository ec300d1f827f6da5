"""``LanceDataset.commit`` with ``LanceOperation.CreateIndex``, ``Rewrite`` and ``Clone``,
and pylance's distributed index build (``create_index_uncommitted``,
``merge_existing_index_segments``, ``commit_existing_index_segments``) (issue 18).

Interop both ways: for every pair (preparing library, committing library), one library
writes the dataset and prepares the change (index segments, rewritten fragments), the other
commits it, both read the result, and every combination must give what pylance alone gives.
Where pylance 14 loses data or breaks a dataset, lancelet refuses instead (tested apart).
"""

from __future__ import annotations

import datetime as dt
import os
import shutil
import uuid

import pyarrow as pa
import pytest

lance = pytest.importorskip("lance")

import lance.commit  # noqa: E402,F811
import lance.dataset  # noqa: E402,F811
import lance.fragment  # noqa: E402,F811

import lancelet  # noqa: E402
import lancelet.dataset  # noqa: E402
import lancelet.fragment  # noqa: E402

pytestmark = pytest.mark.interop

from test_drop_in_ops import LIBS, PAIRS, sub  # noqa: E402

INDEX_FIELDS = (
    "uuid",
    "name",
    "fields",
    "dataset_version",
    "fragment_ids",
    "index_version",
    "created_at",
    "base_id",
    "files",
    "index_details",
    "covering_fields",
)


def as_index(lib, seg):
    """``seg`` (an Index of either library) as an Index of ``lib``."""
    d = sub(lib, "dataset")
    kw = {f: getattr(seg, f) for f in INDEX_FIELDS}
    kw["fragment_ids"] = set(seg.fragment_ids)
    kw["files"] = None if seg.files is None else [d.IndexFile(f.path, f.size_bytes) for f in seg.files]
    return d.Index(**kw)


def uses_index(plan: str, name: str, kind: str) -> bool:
    return "ScalarIndexQuery" in plan and f"@{name}({kind})" in plan


def three_fragments(lib, uri, stable=False):
    t = pa.table({"a": pa.array(range(30), pa.int64()), "b": [f"s{i % 3}" for i in range(30)]})
    kw = {"enable_stable_row_ids": True} if stable else {}
    return lib.write_dataset(t, uri, max_rows_per_file=10, **kw)


def described(mod, uri):
    """What both libraries must agree on in ``describe_indices`` (no uuids, times or sizes:
    segments built by different libraries differ there)."""
    out = {}
    for d in mod.dataset(uri).describe_indices():
        out[d.name] = (
            d.index_type,
            d.type_url,
            d.field_names,
            d.num_rows_indexed,
            sorted((sorted(s.fragment_ids), s.index_version, s.dataset_version_at_last_update) for s in d.segments),
        )
    return out


def listed(mod, uri):
    return sorted(
        (x["name"], x["type"], x["fields"], x["version"], sorted(x["fragment_ids"]), x["base_id"])
        for x in mod.dataset(uri).list_indices()
    )


def observe(uri, queries):
    """Indexes, rows and index use as each library reads them; both must agree."""
    out = []
    for mod in LIBS.values():
        ds = mod.dataset(uri)
        rows = {q: sorted(ds.to_table(filter=q)["a"].to_pylist()) for q, _, _ in queries}
        used = {q: uses_index(ds.scanner(filter=q).explain_plan(), n, k) for q, n, k in queries}
        out.append((described(mod, uri), listed(mod, uri), rows, used, ds.version))
    assert out[0] == out[1], out
    return out[0]


QUERIES = [("a = 15", "a_idx", "BTree"), ("b = 's1'", "b_idx", "Bitmap")]


# --------------------------------------------------------------------------------------
# CreateIndex of segments built elsewhere
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("builder,committer", PAIRS)
def test_create_index_commits_segments_built_elsewhere(builder, committer, tmp_path):
    results, txns = [], []
    for b, c, d in ((builder, committer, "mixed"), ("pylance", "pylance", "oracle")):
        b, c = LIBS[b], LIBS[c]
        uri = str(tmp_path / d / "t.lance")
        ds = three_fragments(b, uri)
        segs = [ds.create_index_uncommitted("a", "BTREE", name="a_idx", fragment_ids=[f]) for f in (0, 1, 2)]
        segs.append(ds.create_index_uncommitted("b", "BITMAP", name="b_idx", fragment_ids=[0, 1, 2]))
        assert ds.version == 1 and b.dataset(uri).version == 1, "nothing committed yet"
        op = c.LanceOperation.CreateIndex(new_indices=[as_index(c, s) for s in segs], removed_indices=[])
        assert c.LanceDataset.commit(uri, op, read_version=1).version == 2
        results.append(observe(uri, QUERIES))
        for mod in LIBS.values():
            got = mod.dataset(uri).read_transaction(2).operation
            assert type(got).__name__ == "CreateIndex" and got.removed_indices == []
            assert [
                (str(x.uuid), sorted(x.fragment_ids), sorted(f.path for f in x.files)) for x in got.new_indices
            ] == [(s.uuid, sorted(s.fragment_ids), sorted(f.path for f in s.files)) for s in segs]
            ms = [x.created_at for x in got.new_indices]
            assert ms == [s.created_at.replace(microsecond=s.created_at.microsecond // 1000 * 1000) for s in segs]
            txns.append(
                [(x.name, x.fields, x.dataset_version, x.index_version, x.index_details) for x in got.new_indices]
            )
    assert results[0] == results[1]
    described_, listed_, rows, used, _ = results[0]
    assert described_["a_idx"][:4] == ("BTree", "/lance.table.BTreeIndexDetails", ["a"], 30)
    assert len(listed_) == 4
    assert rows == {"a = 15": [15], "b = 's1'": list(range(1, 30, 3))}
    assert used == {"a = 15": True, "b = 's1'": True}
    assert all(t == txns[0] for t in txns)


@pytest.mark.parametrize("builder,committer", [("lancelet", "pylance"), ("pylance", "lancelet")])
def test_index_objects_of_either_library_commit_as_they_are(builder, committer, tmp_path):
    # pylance takes any object with Index's attributes, and so does lancelet.
    b, c = LIBS[builder], LIBS[committer]
    uri = str(tmp_path / "t.lance")
    ds = three_fragments(b, uri)
    segs = [ds.create_index_uncommitted("a", "BTREE", name="a_idx", fragment_ids=[f]) for f in (0, 1, 2)]
    c.LanceDataset.commit(uri, c.LanceOperation.CreateIndex(segs, []), read_version=1)
    for mod in LIBS.values():
        r = mod.dataset(uri)
        assert sorted(x["uuid"] for x in r.list_indices()) == sorted(s.uuid for s in segs)
        assert uses_index(r.scanner(filter="a = 15").explain_plan(), "a_idx", "BTree")
    c.dataset(uri).commit_existing_index_segments("a_idx", "a", [b.dataset(uri).merge_existing_index_segments(segs)])
    assert [len(m.dataset(uri).list_indices()) for m in LIBS.values()] == [1, 1]


@pytest.mark.parametrize("builder,committer", PAIRS)
def test_create_index_merges_replaces_and_drops(builder, committer, tmp_path):
    results = []
    for b, c, d in ((builder, committer, "mixed"), ("pylance", "pylance", "oracle")):
        b, c = LIBS[b], LIBS[c]
        uri = str(tmp_path / d / "t.lance")
        ds = three_fragments(b, uri)
        segs = [ds.create_index_uncommitted("a", "BTREE", name="a_idx", fragment_ids=[f]) for f in (0, 1)]

        def commit(new, gone, v, c=c, uri=uri):
            op = c.LanceOperation.CreateIndex([as_index(c, s) for s in new], [as_index(c, s) for s in gone])
            c.LanceDataset.commit(uri, op, read_version=v)

        steps = []
        commit(segs[:1], [], 1)  # one segment
        steps.append(observe(uri, QUERIES[:1]))
        commit(segs[1:], [], 2)  # the index gains a segment
        steps.append(observe(uri, QUERIES[:1]))
        merged = b.dataset(uri).merge_existing_index_segments(segs)
        assert sorted(merged.fragment_ids) == [0, 1] and merged.uuid not in {s.uuid for s in segs}
        commit([merged], segs, 3)  # replaced by the merged segment
        steps.append(observe(uri, QUERIES[:1]))
        commit([], [merged], 4)  # dropped
        steps.append(observe(uri, QUERIES[:1]))
        commit([], [segs[0]], 5)  # removing what is not there changes nothing
        steps.append(observe(uri, QUERIES[:1]))
        results.append(steps)
    assert results[0] == results[1]
    steps = results[0]
    assert [len(s[1]) for s in steps] == [1, 2, 1, 0, 0]
    assert [s[3]["a = 15"] for s in steps] == [True, True, True, False, False]
    assert all(s[2]["a = 15"] == [15] for s in steps)


@pytest.mark.parametrize("builder,committer", PAIRS)
def test_commit_existing_index_segments(builder, committer, tmp_path):
    results = []
    for b, c, d in ((builder, committer, "mixed"), ("pylance", "pylance", "oracle")):
        b, c = LIBS[b], LIBS[c]
        uri = str(tmp_path / d / "t.lance")
        ds = three_fragments(b, uri)
        segs = [ds.create_index_uncommitted("a", "BTREE", fragment_ids=[f]) for f in (0, 1, 2)]
        assert {s.name for s in segs} == {"a_idx"}
        merged = ds.merge_existing_index_segments(segs[:2])
        out = c.dataset(uri).commit_existing_index_segments("my_idx", "a", [as_index(c, merged), as_index(c, segs[2])])
        assert out.version == 2
        results.append(observe(uri, [("a = 15", "my_idx", "BTree"), ("a = 25", "my_idx", "BTree")]))
        # Once more: segments the new ones cover are replaced; one covered in part is an
        # error (its other fragments would lose their index).
        seg = c.dataset(uri).create_index_uncommitted("a", "BTREE", name="x", fragment_ids=[0])
        with pytest.raises(ValueError, match=r"would orphan fragments \[1\]"):
            c.dataset(uri).commit_existing_index_segments("my_idx", "a", [seg])
        seg = c.dataset(uri).create_index_uncommitted("a", "BTREE", name="x", fragment_ids=[0, 1])
        c.dataset(uri).commit_existing_index_segments("my_idx", "a", [seg])
        results.append(listed(c, uri))
        assert [x.uuid for x in c.dataset(uri).read_transaction(3).operation.removed_indices] == [merged.uuid]
    assert results[0] == results[2] and results[1] == results[3]
    assert sorted(x[4] for x in results[1]) == [[0, 1], [2]]


def test_distributed_build_refusals_match_pylance(tmp_path):
    for mod in LIBS.values():
        uri = str(tmp_path / mod.__name__ / "t.lance")
        ds = three_fragments(mod, uri)
        with pytest.raises(ValueError, match="requires fragment_ids"):
            ds.create_index_uncommitted("a", "BTREE")
        with pytest.raises(ValueError, match="create_index_uncommitted"):
            ds.create_scalar_index("a", "BTREE", fragment_ids=[0])
        with pytest.raises(ValueError, match="index_uuid is no longer accepted"):
            ds.create_index_uncommitted("a", "BTREE", fragment_ids=[0], index_uuid=str(uuid.uuid4()))
        with pytest.raises(ValueError, match="No fragment with id 9"):
            ds.create_index_uncommitted("a", "BTREE", fragment_ids=[9])
        with pytest.raises(ValueError, match="no longer supports merge_index_metadata"):
            ds.merge_index_metadata(str(uuid.uuid4()), "BTREE")
        with pytest.raises(ValueError, match="no longer supports merge_index_metadata"):
            ds.merge_index_metadata(str(uuid.uuid4()), "IVF_PQ")
        with pytest.raises(NotImplementedError):
            ds.merge_index_metadata(str(uuid.uuid4()), "BITMAP")
        seg = ds.create_index_uncommitted("b", "BITMAP", fragment_ids=[0])
        assert seg.name == "b_idx"
        with pytest.raises(ValueError, match="expected keyed field"):
            ds.commit_existing_index_segments("b_idx", "a", [seg])
        with pytest.raises(ValueError, match="at least one index segment"):
            ds.commit_existing_index_segments("b_idx", "b", [])
        with pytest.raises(ValueError, match="at least one index segment"):
            ds.merge_existing_index_segments([])
        ds.commit_existing_index_segments("b_idx", "b", [seg])
        with pytest.raises(Exception, match="already exists"):
            mod.dataset(uri).create_index_uncommitted("b", "BITMAP", fragment_ids=[1])
        assert mod.dataset(uri).create_index_uncommitted("b", "BITMAP", replace=True, fragment_ids=[1]).name == "b_idx"
        assert mod.dataset(uri).version == 2


def test_full_text_segments_both_routes(tmp_path):
    uri = str(tmp_path / "t.lance")
    ds = three_fragments(lancelet, uri)
    # pylance's route (parts under one uuid, joined by merge_index_metadata; tests/test_fts.py
    # checks its scores) and lancelet's segments built with create_index_uncommitted.
    iid = str(uuid.uuid4())
    ds.create_scalar_index("b", "INVERTED", fragment_ids=[0], index_uuid=iid)
    ds.merge_index_metadata(iid, "INVERTED")
    assert ds.version == 1
    seg = ds.create_index_uncommitted("b", "INVERTED", fragment_ids=[0])
    assert list(seg.fragment_ids) == [0]


@pytest.mark.parametrize("committer", list(LIBS))
def test_an_index_committed_without_details_lists_as_unknown(committer, tmp_path):
    # pylance's full-text index built in pieces, committed by hand (pylance's documented flow).
    uri = str(tmp_path / "t.lance")
    words = ["apple pie", "banana split", "cherry tart"]
    t = pa.table({"a": pa.array(range(30), pa.int64()), "text": [words[i % 3] + f" w{i}" for i in range(30)]})
    ds = lance.write_dataset(t, uri, max_rows_per_file=10)
    iid = str(uuid.uuid4())
    for f in ds.get_fragments():
        ds.create_scalar_index("text", "INVERTED", fragment_ids=[f.fragment_id], index_uuid=iid)
    ds.merge_index_metadata(iid, "INVERTED")
    c = LIBS[committer]
    idx = sub(c, "dataset").Index(
        uuid=iid, name="text_idx", fields=[1], dataset_version=1, fragment_ids={0, 1, 2}, index_version=0
    )
    c.LanceDataset.commit(uri, c.LanceOperation.CreateIndex(new_indices=[idx], removed_indices=[]), read_version=1)
    seen = []
    for mod in LIBS.values():
        r = mod.dataset(uri)
        (d,) = r.describe_indices()
        seen.append((d.index_type, d.type_url, d.field_names, d.segments[0].size_bytes, d.segments[0].created_at))
        assert [x["type"] for x in r.list_indices()] == ["Unknown"]
        back = r.read_transaction(2).operation.new_indices[0]
        assert (back.files, back.index_details, back.created_at) == (None, None, None)
    assert seen[0] == seen[1]
    assert seen[0][:3] == ("Unknown", "", ["text"]) and seen[0][3] > 0
    # Both search it: the files tell it is a full-text index.
    assert lance.dataset(uri).to_table(full_text_query="apple").num_rows == 10
    assert lancelet.dataset(uri).to_table(full_text_query="apple").num_rows == 10


@pytest.mark.parametrize("committer", list(LIBS))
def test_concurrent_index_commits(committer, tmp_path):
    c = LIBS[committer]
    uri = str(tmp_path / "t.lance")
    ds = three_fragments(c, uri)
    a1 = ds.create_index_uncommitted("a", "BTREE", name="a_idx", fragment_ids=[0, 1, 2])
    a2 = ds.create_index_uncommitted("a", "BTREE", name="a_idx", fragment_ids=[0, 1, 2])
    CreateIndex = c.LanceOperation.CreateIndex
    c.LanceDataset.commit(uri, CreateIndex([a1], []), read_version=1)
    with pytest.raises(OSError) as e:
        c.LanceDataset.commit(uri, CreateIndex([a2], []), read_version=1)
    assert type(e.value).__name__ == "CommitConflictError"
    assert os.listdir(f"{uri}/_indices/{a2.uuid}"), "the losing segment's files stay"
    c.LanceDataset.commit(uri, CreateIndex([a2], [a1]), read_version=2)
    # An append in between does not conflict; the new fragment is simply not covered.
    b1 = c.dataset(uri).create_index_uncommitted("b", "BITMAP", name="b_idx", fragment_ids=[0, 1, 2])
    c.write_dataset(pa.table({"a": pa.array([100], pa.int64()), "b": ["s1"]}), uri, mode="append")
    c.LanceDataset.commit(uri, CreateIndex([b1], []), read_version=3)
    # A rewrite of covered fragments in between does.
    v = c.dataset(uri).version
    b2 = c.dataset(uri).create_index_uncommitted("b", "BITMAP", name="b2_idx", fragment_ids=[0, 1])
    c.dataset(uri).optimize.compact_files(target_rows_per_fragment=1000)
    with pytest.raises(OSError, match="(?i)conflict|preempted"):
        c.LanceDataset.commit(uri, CreateIndex([b2], []), read_version=v)
    for mod in LIBS.values():
        r = mod.dataset(uri)
        assert sorted(r.to_table(filter="b = 's1'")["a"].to_pylist()) == list(range(1, 30, 3)) + [100]
        assert {x["name"] for x in r.list_indices()} == {"a_idx", "b_idx"}


@pytest.mark.parametrize("committer", list(LIBS))
def test_create_index_argument_errors(committer, tmp_path):
    c = LIBS[committer]
    uri = str(tmp_path / "t.lance")
    ds = three_fragments(c, uri)
    seg = ds.create_index_uncommitted("a", "BTREE", name="a_idx", fragment_ids=[0, 1, 2])
    Index = sub(c, "dataset").Index

    def commit(**change):
        kw = {f: getattr(seg, f) for f in INDEX_FIELDS}
        kw.update(change)
        op = c.LanceOperation.CreateIndex([Index(**kw)], [])
        return c.LanceDataset.commit(uri, op, read_version=1)

    with pytest.raises(ValueError):
        commit(uuid="not-a-uuid")
    with pytest.raises(TypeError, match="tzinfo"):
        commit(created_at=dt.datetime(2024, 1, 2, 3, 4, 5))
    with pytest.raises(TypeError):
        commit(fragment_ids=None)
    with pytest.raises(TypeError):
        commit(dataset_version="1")
    with pytest.raises((ValueError, OSError), match="are not among its fields"):
        commit(fields=[0], covering_fields=[1])
    with pytest.raises((ValueError, OSError), match="at least one field must remain indexed"):
        commit(fields=[0], covering_fields=[0])
    assert c.dataset(uri).version == 1
    # Covering fields are kept (with the feature flag pylance sets), by both libraries.
    stamp = dt.datetime(2024, 1, 2, 3, 4, 5, 678901, tzinfo=dt.timezone.utc)
    commit(fields=[0, 1], covering_fields=[1], created_at=stamp)
    lancelet.write_dataset(pa.table({"a": pa.array([99], pa.int64()), "b": ["z"]}), uri, mode="append")
    for mod in LIBS.values():
        r = mod.dataset(uri)
        (s,) = r.describe_indices()[0].segments
        assert (s.covering_fields, s.uuid) == ([1], seg.uuid)
        assert r.read_transaction(2).operation.new_indices[0].created_at == stamp.replace(microsecond=678000)
        assert r.count_rows() == 31
    # A covering index answers no filter in lancelet (it only uses indexes on one field).
    assert lancelet.dataset(uri).to_table(filter="a = 5")["a"].to_pylist() == [5]


def test_lancelet_refuses_index_entries_that_would_break_the_dataset(tmp_path):
    uri = str(tmp_path / "t.lance")
    ds = three_fragments(lancelet, uri)
    seg = ds.create_index_uncommitted("a", "BTREE", name="a_idx", fragment_ids=[0])
    kw = {f: getattr(seg, f) for f in INDEX_FIELDS}
    Index, CreateIndex = sub(lancelet, "dataset").Index, lancelet.LanceOperation.CreateIndex
    # A field id the schema lacks would describe whichever column gets that id later
    # (pylance accepts it).
    with pytest.raises(ValueError, match="field id 7"):
        lancelet.LanceDataset.commit(uri, CreateIndex([Index(**{**kw, "fields": [7]})], []), read_version=1)
    # Files that are not there would make every query through the index fail (pylance
    # accepts it).
    missing = {**kw, "uuid": str(uuid.uuid4())}
    with pytest.raises(ValueError, match="missing"):
        lancelet.LanceDataset.commit(uri, CreateIndex([Index(**missing)], []), read_version=1)
    assert lancelet.dataset(uri).version == 1


# --------------------------------------------------------------------------------------
# Rewrite
# --------------------------------------------------------------------------------------


def stable_base(lib, uri):
    """Stable row ids: fragment 0 (v1), fragment 1 (v2), row a=12 updated (v3), three
    indexes (v4-v6) and one more fragment that no index covers (v7)."""
    t = pa.table({"a": pa.array(range(10), pa.int64()), "b": [f"s{i % 3}" for i in range(10)]})
    lib.write_dataset(t, uri, max_rows_per_file=10, enable_stable_row_ids=True)
    t = pa.table({"a": pa.array(range(10, 20), pa.int64()), "b": [f"s{i % 3}" for i in range(10, 20)]})
    lib.write_dataset(t, uri, mode="append")
    lib.dataset(uri).update({"a": "a + 100"}, where="a = 12")
    ds = lib.dataset(uri)
    ds.create_scalar_index("a", "BTREE", name="a_idx")
    ds.create_scalar_index("b", "BITMAP", name="b_idx")
    ds.create_scalar_index("a", "ZONEMAP", name="z_idx")
    lib.write_dataset(pa.table({"a": pa.array([500, 501], pa.int64()), "b": ["s1", "s2"]}), uri, mode="append")


def rewrite_fragments(c, uri, ids, with_row_ids=True):
    """Rewrites fragments ``ids`` into one, as pylance's docs show (row ids kept)."""
    ds = c.dataset(uri)
    frags = [f for f in ds.get_fragments() if f.fragment_id in ids]
    live = ds.scanner(columns=["a", "b"], fragments=frags, with_row_id=True).to_table()
    new = sub(c, "fragment").write_fragments(live.drop(["_rowid"]), uri)
    assert [f.id for f in new] == [0]
    if with_row_ids:
        new[0].row_id_meta = sub(c, "fragment").RowIdSequence(live["_rowid"].to_pylist()).to_inline_metadata()
    group = c.LanceOperation.RewriteGroup([f.metadata for f in frags], new)
    return c.LanceDataset.commit(uri, c.LanceOperation.Rewrite([group], []), read_version=ds.version)


LINEAGE = ["a", "_rowid", "_row_created_at_version", "_row_last_updated_at_version"]


def lineage(mod, uri):
    return mod.dataset(uri).to_table(columns=LINEAGE).sort_by("a").to_pydict()


@pytest.mark.parametrize("setup,committer", PAIRS)
@pytest.mark.parametrize("rewritten", [[1], [0, 1]], ids=["one", "two"])
def test_rewrite_on_stable_row_ids(setup, committer, rewritten, tmp_path):
    out = []
    for s, c, d in ((setup, committer, "mixed"), ("pylance", "pylance", "oracle")):
        s, c = LIBS[s], LIBS[c]
        uri = str(tmp_path / d / "t.lance")
        stable_base(s, uri)
        before = lineage(lancelet, uri)
        assert before == lineage(lance, uri)
        rewrite_fragments(c, uri, rewritten)
        queries = [("a = 15", "a_idx", "BTree"), ("b = 's1'", "b_idx", "Bitmap"), ("a = 500", "a_idx", "BTree")]
        state = observe(uri, queries)
        frags = [[(f.fragment_id, f.count_rows()) for f in m.dataset(uri).get_fragments()] for m in LIBS.values()]
        assert frags[0] == frags[1]
        after = [lineage(m, uri) for m in LIBS.values()]
        assert after[0] == after[1]
        assert after[0]["_rowid"] == before["_rowid"], "every row keeps its id"
        if c is lancelet:
            assert after[0] == before, "and its versions"
        else:
            # pylance leaves the rewritten rows without versions: they read as 1.
            moved = [i for i, a in enumerate(before["a"]) if a < 20 and (a >= 10 or 0 in rewritten)]
            assert all(after[0]["_row_created_at_version"][i] == 1 for i in moved)
        # The next appended row gets the next id, and ids are found by take.
        c.write_dataset(pa.table({"a": pa.array([900], pa.int64()), "b": ["x"]}), uri, mode="append")
        ids = [m.dataset(uri).to_table(filter="a = 900", with_row_id=True)["_rowid"].to_pylist() for m in LIBS.values()]
        assert ids[0] == ids[1] == [22]
        took = [m.dataset(uri)._take_rows([15, 12], columns=["a"])["a"].to_pylist() for m in LIBS.values()]
        assert took[0] == took[1] == [15, 112]
        out.append((state, frags[0], after[0]["_rowid"]))
    assert out[0] == out[1]
    state, frags, _ = out[0]
    described_ = state[0]
    # Fragments 0-2 were indexed. The BTREE (keyed by address: index version 1) and the
    # zone map lose the rewritten fragments; the bitmap index (keyed by row id) gains the
    # new fragment under the id the transaction gives it (0: numbered at commit).
    bitmaps = {n: described_[n][4][0][0] for n in ("a_idx", "b_idx", "z_idx")}
    if rewritten == [1]:
        assert bitmaps == {"a_idx": [0, 2], "b_idx": [0, 2], "z_idx": [0, 2]}
    else:
        assert bitmaps == {"a_idx": [2], "b_idx": [0, 2], "z_idx": [2]}
    assert [f for f, _ in frags] == ([0, 2, 3, 4] if rewritten == [1] else [2, 3, 4])
    assert state[2]["a = 15"] == [15] and state[2]["a = 500"] == [500]


@pytest.mark.parametrize("committer", list(LIBS))
def test_rewrite_on_stable_row_ids_needs_row_ids(committer, tmp_path):
    uri = str(tmp_path / "t.lance")
    stable_base(LIBS[committer], uri)
    with pytest.raises((OSError, ValueError), match="All fragments must have row ids"):
        rewrite_fragments(LIBS[committer], uri, [1], with_row_ids=False)
    assert lancelet.dataset(uri).version == 7


@pytest.mark.parametrize("committer", list(LIBS))
def test_rewrite_of_indexed_and_unindexed_fragments_together_is_refused(committer, tmp_path):
    uri = str(tmp_path / "t.lance")
    stable_base(LIBS[committer], uri)
    # Fragment 3 (appended last) is not in b_idx (a bitmap index, keyed by row id).
    with pytest.raises((OSError, ValueError), match="split of indexed and non-indexed data"):
        rewrite_fragments(LIBS[committer], uri, [2, 3])
    assert lancelet.dataset(uri).version == 7


@pytest.mark.parametrize("bad", ["fewer", "foreign", "twice"])
def test_lancelet_refuses_row_ids_that_are_not_the_rewritten_rows(bad, tmp_path):
    # pylance 14 commits each of these: fewer ids leave a dataset whose scans fail; foreign
    # ids and ids given twice break the uniqueness of row ids.
    uri = str(tmp_path / "t.lance")
    stable_base(lancelet, uri)
    ds = lancelet.dataset(uri)
    frag = ds.get_fragments()[1]
    live = ds.scanner(columns=["a", "b"], fragments=[frag], with_row_id=True).to_table()
    ids = live["_rowid"].to_pylist()
    ids = {"fewer": ids[:3], "foreign": [1000 + i for i in range(len(ids))], "twice": [0] + ids[1:]}[bad]
    new = lancelet.fragment.write_fragments(live.drop(["_rowid"]), uri)
    new[0].row_id_meta = lancelet.fragment.RowIdSequence(ids).to_inline_metadata()
    op = lancelet.LanceOperation.Rewrite([lancelet.LanceOperation.RewriteGroup([frag.metadata], new)], [])
    with pytest.raises(ValueError, match="row id"):
        lancelet.LanceDataset.commit(uri, op, read_version=ds.version)
    assert lancelet.dataset(uri).version == ds.version


@pytest.mark.parametrize("builder", list(LIBS))
def test_a_rewrite_never_makes_an_index_claim_an_unindexed_fragment(builder, tmp_path):
    # A bitmap index over fragments 2 and 3 only; they are rewritten into a fragment
    # numbered at commit. pylance 14 then lists fragment 0 (never indexed) as covered, and
    # its matching rows go missing from filtered scans; lancelet leaves it uncovered.
    b = LIBS[builder]
    uri = str(tmp_path / "t.lance")
    t = pa.table({"a": pa.array(range(40), pa.int64()), "b": [f"s{i % 3}" for i in range(40)]})
    ds = b.write_dataset(t, uri, max_rows_per_file=10, enable_stable_row_ids=True)
    seg = ds.create_index_uncommitted("b", "BITMAP", name="b_idx", fragment_ids=[2, 3])
    lancelet.LanceDataset.commit(
        uri, lancelet.LanceOperation.CreateIndex([as_index(lancelet, seg)], []), read_version=1
    )
    rewrite_fragments(lancelet, uri, [2, 3])
    for mod in LIBS.values():
        r = mod.dataset(uri)
        assert [f.fragment_id for f in r.get_fragments()] == [0, 1, 4]
        assert [sorted(s.fragment_ids) for s in r.describe_indices()[0].segments] == [[]]
        assert sorted(r.to_table(filter="b = 's1'")["a"].to_pylist()) == list(range(1, 40, 3))


@pytest.mark.parametrize("setup,committer", PAIRS)
def test_rewrite_fragment_ids_and_index_bitmaps(setup, committer, tmp_path):
    out = []
    for s, c, d in ((setup, committer, "mixed"), ("pylance", "pylance", "oracle")):
        s, c = LIBS[s], LIBS[c]
        uri = str(tmp_path / d / "t.lance")
        t = pa.table({"a": pa.array(range(40), pa.int64()), "b": [f"s{i % 3}" for i in range(40)]})
        ds = s.write_dataset(t, uri, max_rows_per_file=10)
        ds.create_scalar_index("a", "BTREE", name="a_idx")
        ds.create_scalar_index("b", "BITMAP", name="b_idx")
        steps = []
        # Fragment 1 rewritten into a fragment numbered at commit: it takes id 4, last.
        rewrite_fragments(c, uri, [1], with_row_ids=False)
        steps.append(observe(uri, QUERIES))
        # Two groups with ids of their own choosing: kept, and the list ordered by id.
        ds = c.dataset(uri)
        fr = {f.fragment_id: f for f in ds.get_fragments()}
        groups = []
        for old, new_id in ((0, 12), (2, 11)):
            new = sub(c, "fragment").write_fragments(ds.scanner(fragments=[fr[old]]).to_table(), uri)
            new[0].id = new_id
            groups.append(c.LanceOperation.RewriteGroup([fr[old].metadata], new))
        c.LanceDataset.commit(uri, c.LanceOperation.Rewrite(groups, []), read_version=ds.version)
        steps.append(observe(uri, QUERIES))
        # An id the dataset has is refused.
        ds = c.dataset(uri)
        fr = {f.fragment_id: f for f in ds.get_fragments()}
        new = sub(c, "fragment").write_fragments(ds.scanner(fragments=[fr[3]]).to_table(), uri)
        new[0].id = 4
        op = c.LanceOperation.Rewrite([c.LanceOperation.RewriteGroup([fr[3].metadata], new)], [])
        with pytest.raises((OSError, ValueError), match="two fragments with id 4"):
            c.LanceDataset.commit(uri, op, read_version=ds.version)
        frags = [[f.fragment_id for f in m.dataset(uri).get_fragments()] for m in LIBS.values()]
        order = [m.dataset(uri).to_table()["a"].to_pylist() for m in LIBS.values()]
        assert frags[0] == frags[1] and order[0] == order[1]
        out.append((steps, frags[0], order[0]))
    assert out[0] == out[1]
    steps, frags, order = out[0]
    assert frags == [3, 4, 11, 12]
    assert order == list(range(30, 40)) + list(range(10, 20)) + list(range(20, 30)) + list(range(10))
    # Without stable row ids an index not remapped keeps its bitmap (its entries still
    # point into the old fragments, which are gone; the new ones are scanned).
    assert [sorted(st[0]["a_idx"][4][0][0]) for st in steps] == [[0, 1, 2, 3]] * 2
    assert all(st[2] == {"a = 15": [15], "b = 's1'": list(range(1, 40, 3))} for st in steps)


@pytest.mark.parametrize("committer", list(LIBS))
def test_rewrite_with_rewritten_indices(committer, tmp_path):
    out = []
    for c, d in ((LIBS[committer], "mixed"), (lance, "oracle")):
        uri = str(tmp_path / d / "t.lance")
        ds = three_fragments(lance, uri)
        ds.create_scalar_index("a", "BTREE", name="a_idx")
        ds = c.dataset(uri)
        old = ds.describe_indices()[0].segments[0].uuid
        nid = str(uuid.uuid4())
        shutil.copytree(f"{uri}/_indices/{old}", f"{uri}/_indices/{nid}")
        fr = ds.get_fragments()
        new = sub(c, "fragment").write_fragments(ds.scanner(fragments=fr[:2]).to_table(), uri)
        ri = c.LanceOperation.RewrittenIndex(old, nid, "/lance.table.BTreeIndexDetails", b"", 0)
        group = c.LanceOperation.RewriteGroup([f.metadata for f in fr[:2]], new)
        c.LanceDataset.commit(uri, c.LanceOperation.Rewrite([group], [ri]), read_version=ds.version)
        for mod in LIBS.values():
            (seg,) = mod.dataset(uri).describe_indices()[0].segments
            out.append((seg.uuid == nid, sorted(seg.fragment_ids), seg.index_version))
        # lancelet reads the record back (pylance 14 cannot: its RewrittenIndex misses fields).
        back = lancelet.dataset(uri).read_transaction(3).operation.rewritten_indices
        assert [(r.old_id, r.new_id, r.new_details_type_url) for r in back] == [
            (old, nid, "/lance.table.BTreeIndexDetails")
        ]
    assert out == [(True, [0, 2], 0)] * 4


def test_compaction_places_rewritten_fragments_as_pylance(tmp_path):
    out = []
    for mod in LIBS.values():
        uri = str(tmp_path / mod.__name__ / "t.lance")
        mod.write_dataset(pa.table({"a": pa.array(range(30), pa.int64())}), uri, max_rows_per_file=10)
        for i in range(3):
            mod.write_dataset(pa.table({"a": pa.array([100 + i], pa.int64())}), uri, mode="append")
        mod.write_dataset(pa.table({"a": pa.array(range(200, 230), pa.int64())}), uri, mode="append")
        mod.dataset(uri).optimize.compact_files(target_rows_per_fragment=10)
        for reader in LIBS.values():
            ds = reader.dataset(uri)
            out.append(([(f.fragment_id, f.count_rows()) for f in ds.get_fragments()], ds.to_table()["a"].to_pylist()))
    assert all(o == out[0] for o in out)
    assert out[0][0] == [(0, 10), (1, 10), (2, 10), (6, 30), (7, 3)]


# --------------------------------------------------------------------------------------
# Clone
# --------------------------------------------------------------------------------------


def clone_source(lib, uri):
    three_fragments(lib, uri, stable=True)
    ds = lib.dataset(uri)
    ds.create_scalar_index("a", "BTREE", name="a_idx")
    ds.delete("a = 4")
    ds.update_config({"team": "ml"})


def clone_state(uri):
    out = []
    for mod in LIBS.values():
        ds = mod.dataset(uri)
        bases = {i: (b.name, os.path.realpath(b.path), b.is_dataset_root) for i, b in ds.base_paths().items()}
        txn = ds.read_transaction(ds.version)
        op = txn.operation
        out.append(
            (
                ds.version,
                ds.to_table(columns=["a", "b", "_rowid"]).to_pydict(),
                bases,
                [(x["name"], sorted(x["fragment_ids"]), x["base_id"]) for x in ds.list_indices()],
                {k: v for k, v in ds.config().items() if not k.startswith("lance.")},
                ds.to_table(filter="a = 15")["a"].to_pylist(),
                uses_index(ds.scanner(filter="a = 15").explain_plan(), "a_idx", "BTree"),
                (type(op).__name__, op.is_shallow, op.ref_name, op.ref_version, op.branch_name, txn.read_version),
            )
        )
    assert out[0] == out[1], out
    return out[0]


@pytest.mark.parametrize("setup,committer", PAIRS)
def test_clone_commit(setup, committer, tmp_path):
    out = []
    for s, c, d in ((setup, committer, "mixed"), ("pylance", "pylance", "oracle")):
        s, c = LIBS[s], LIBS[c]
        src, dst = str(tmp_path / d / "src.lance"), str(tmp_path / d / "dst.lance")
        clone_source(s, src)
        op = c.LanceOperation.Clone(True, None, 3, src, None)
        c.LanceDataset.commit(dst, op, read_version=0)
        state = clone_state(dst)
        # Writing to the clone leaves the source alone.
        c.write_dataset(pa.table({"a": pa.array([77], pa.int64()), "b": ["n"]}), dst, mode="append")
        assert [m.dataset(dst).count_rows() for m in LIBS.values()] == [30, 30]
        assert [m.dataset(src).count_rows() for m in LIBS.values()] == [29, 29]
        # Named base (ref_name names the base path, the source is ref_path at ref_version).
        named = str(tmp_path / d / "named.lance")
        c.LanceDataset.commit(named, c.LanceOperation.Clone(True, "dev", 2, src, None), read_version=2)
        out.append((state, clone_state(named)))
    strip = lambda st: (st[0], st[1], {i: (n, r) for i, (n, _, r) in st[2].items()}, *st[3:])  # noqa: E731
    assert [strip(x) for x in out[0]] == [strip(x) for x in out[1]]
    (state, named) = out[0]
    assert state[0] == 3 and len(state[1]["a"]) == 29 and state[6] is True
    assert state[7] == ("Clone", True, None, 3, None, 0)
    assert named[0] == 2 and {n for n, _, _ in named[2].values()} == {"dev"} and named[7][5] == 2


@pytest.mark.parametrize("committer", list(LIBS))
def test_clone_of_a_branch(committer, tmp_path):
    c = LIBS[committer]
    src = str(tmp_path / "src.lance")
    three_fragments(lance, src)
    lance.dataset(src).create_branch("dev", 1)
    lance.write_dataset(pa.table({"a": pa.array([50], pa.int64()), "b": ["x"]}), src + "/tree/dev", mode="append")
    dst = str(tmp_path / "dst.lance")
    c.LanceDataset.commit(dst, c.LanceOperation.Clone(True, "dev", 2, src + "/tree/dev", None), read_version=2)
    for mod in LIBS.values():
        ds = mod.dataset(dst)
        assert ds.count_rows() == 31
        names = sorted((b.name or "") for b in ds.base_paths().values())
        assert names == ["", "dev"]


@pytest.mark.parametrize("committer", list(LIBS))
def test_clone_refusals(committer, tmp_path):
    c = LIBS[committer]
    src = str(tmp_path / "src.lance")
    three_fragments(lance, src)
    Clone = c.LanceOperation.Clone
    fresh = iter(str(tmp_path / f"new{i}.lance") for i in range(10))
    if c is lancelet:
        # A branch's Clone (how create_branch records one) cannot be committed by hand:
        # nothing would write the branch's reference. (pylance refuses it for some target
        # paths only, with "Can not find the root location of branch".)
        with pytest.raises(ValueError, match="create_branch"):
            c.LanceDataset.commit(next(fresh), Clone(True, None, 1, src, "x"), read_version=0)
    else:
        next(fresh)
    with pytest.raises((OSError, ValueError), match="(?i)deep"):
        c.LanceDataset.commit(next(fresh), Clone(False, None, 1, src, None), read_version=0)
    with pytest.raises((OSError, ValueError)):
        c.LanceDataset.commit(next(fresh), Clone(True, None, 99, src, None), read_version=0)
    with pytest.raises(ValueError, match="read_version is required"):
        c.LanceDataset.commit(next(fresh), Clone(True, None, 1, src, None))
    for i in range(4):
        assert not os.path.exists(str(tmp_path / f"new{i}.lance" / "_versions"))
    new = next(fresh)
    c.LanceDataset.commit(new, Clone(True, None, 1, src, None), read_version=0)
    with pytest.raises(OSError):
        c.LanceDataset.commit(new, Clone(True, None, 1, src, None), read_version=0)
    with pytest.raises(OSError):
        c.LanceDataset.commit(src, Clone(True, None, 1, src, None), read_version=1)
    assert lance.dataset(src).version == 1


# --------------------------------------------------------------------------------------
# Reading transactions, row id sequences, small parity points
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("writer", list(LIBS))
def test_read_transaction_names_index_rewrite_and_clone(writer, tmp_path):
    w = LIBS[writer]
    uri = str(tmp_path / "t.lance")
    ds = three_fragments(w, uri)
    ds.create_scalar_index("a", "BTREE")  # 2 CreateIndex
    lance.write_dataset(pa.table({"a": pa.array([99], pa.int64()), "b": ["z"]}), uri, mode="append")  # 3
    w.dataset(uri).optimize.compact_files(target_rows_per_fragment=1000)  # a Rewrite (pylance: after a
    # ReserveFragments; lancelet: then a CreateIndex rebuilding the index)
    dst = str(tmp_path / "dst.lance")
    w.LanceDataset.commit(dst, w.LanceOperation.Clone(True, None, 2, uri, None), read_version=0)
    rewrite = 5 if writer == "pylance" else 4
    for mod in LIBS.values():
        r = mod.dataset(uri)
        assert type(r.read_transaction(2).operation).__name__ == "CreateIndex"
        (idx,) = r.read_transaction(2).operation.new_indices
        assert (idx.name, idx.fields, sorted(idx.fragment_ids)) == ("a_idx", [0], [0, 1, 2])
        if mod is lancelet or writer == "lancelet":  # pylance cannot read its remapped Rewrites
            op = r.read_transaction(rewrite).operation
            assert type(op).__name__ == "Rewrite"
            assert [sorted(f.id for f in g.old_fragments) for g in op.groups] == [[0, 1, 2]]
            assert len(op.rewritten_indices) == (1 if writer == "pylance" else 0)
        op = mod.dataset(dst).read_transaction(2).operation
        assert (type(op).__name__, op.ref_version, op.is_shallow) == ("Clone", 2, True)


@pytest.mark.parametrize(
    "ids", [[0, 1, 2, 4, 5], list(range(10, 20)), [3, 1, 2], [], list(range(0, 5000, 7)), [2**40, 5, 2**33]]
)
def test_row_id_sequences_read_by_both(ids):
    for make, read in ((lancelet, lance), (lance, lancelet)):
        meta = sub(make, "fragment").RowIdSequence(ids).to_inline_metadata()
        back = sub(read, "fragment").RowIdMeta.from_json(meta.json())
        seq = sub(read, "fragment").RowIdSequence.from_inline_metadata(back)
        assert seq.to_pyarrow().to_pylist() == ids and len(seq) == len(ids)
        assert back.asdict() == meta.asdict()
    assert repr(lancelet.fragment.RowIdSequence(ids)) == repr(lance.fragment.RowIdSequence(ids))


def test_row_id_sequence_refusals():
    for mod in LIBS.values():
        with pytest.raises(ValueError, match="must be unique"):
            sub(mod, "fragment").RowIdSequence([1, 2, 1])
        with pytest.raises(OverflowError):
            sub(mod, "fragment").RowIdSequence([-1])


@pytest.mark.parametrize("committer", list(LIBS))
def test_append_and_update_keep_chosen_fragment_ids(committer, tmp_path):
    out = []
    for c, d in ((LIBS[committer], "mixed"), (lance, "oracle")):
        uri = str(tmp_path / d / "t.lance")
        c.write_dataset(pa.table({"a": pa.array(range(3), pa.int64())}), uri)
        new = sub(c, "fragment").write_fragments(
            pa.table({"a": pa.array([10, 11, 12], pa.int64())}), uri, max_rows_per_file=1
        )
        for f, i in zip(new, (7, 3, 0)):
            f.id = i
        c.LanceDataset.commit(uri, c.LanceOperation.Append(new), read_version=1)
        new = sub(c, "fragment").write_fragments(pa.table({"a": pa.array([20], pa.int64())}), uri)
        new[0].id = 5
        c.LanceDataset.commit(uri, c.LanceOperation.Update(new_fragments=new), read_version=2)
        dup = sub(c, "fragment").write_fragments(pa.table({"a": pa.array([30], pa.int64())}), uri)
        dup[0].id = 3
        with pytest.raises((OSError, ValueError), match="two fragments with id 3"):
            c.LanceDataset.commit(uri, c.LanceOperation.Append(dup), read_version=3)
        c.write_dataset(pa.table({"a": pa.array([40], pa.int64())}), uri, mode="append")
        for mod in LIBS.values():
            ds = mod.dataset(uri)
            out.append(([f.fragment_id for f in ds.get_fragments()], ds.to_table()["a"].to_pylist()))
    assert all(o == out[0] for o in out)
    assert out[0] == ([0, 1, 3, 5, 7, 8], [0, 1, 2, 12, 11, 20, 10, 40])


def test_fragment_metadata_is_built_as_pylance_builds_it(tmp_path):
    uri = str(tmp_path / "t.lance")
    lancelet.write_dataset(pa.table({"a": pa.array(range(3), pa.int64())}), uri)
    (written,) = lancelet.fragment.write_fragments(pa.table({"a": pa.array([9], pa.int64())}), uri)
    frag = lancelet.fragment.FragmentMetadata(0, written.files, 1)
    assert frag == written and frag.row_id_meta is None
    lancelet.LanceDataset.commit(uri, lancelet.LanceOperation.Append([frag]), read_version=1)
    assert lance.dataset(uri).to_table()["a"].to_pylist() == [0, 1, 2, 9]


def test_write_fragments_leaves_ids_to_the_commit(tmp_path):
    uri = str(tmp_path / "t.lance")
    t = pa.table({"a": pa.array(range(9), pa.int64())})
    for mod in LIBS.values():
        frags = sub(mod, "fragment").write_fragments(t, uri, max_rows_per_file=3)
        assert [f.id for f in frags] == [0, 0, 0]


def test_commit_conflict_error_is_an_os_error():
    assert issubclass(lancelet.CommitConflictError, OSError)
    assert issubclass(lance.commit.CommitConflictError, OSError)
