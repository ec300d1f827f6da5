"""``LanceDataset.commit`` with the ``LanceOperation`` kinds beyond Append/Overwrite
(Delete, Update, Merge, Project, Restore, DataReplacement, UpdateConfig), transaction
properties and commit messages, ``read_transaction`` / ``get_transactions``.

Interop both ways: for every pair (setup library, committing library) the dataset is
written by one, the operation planned and committed by the other, and the result read by
both; every combination must give what pylance alone gives.
"""

from __future__ import annotations

import itertools
import json
import sys

import pyarrow as pa
import pytest

lance = pytest.importorskip("lance")

import lance.file  # noqa: E402,F811
import lance.fragment  # noqa: E402,F811
import lance.schema  # noqa: E402,F811

import lancelet  # noqa: E402
import lancelet.file  # noqa: E402
import lancelet.fragment  # noqa: E402
import lancelet.schema  # noqa: E402

pytestmark = pytest.mark.interop

LIBS = {"pylance": lance, "lancelet": lancelet}
PAIRS = list(itertools.product(LIBS, LIBS))


def sub(mod, name):
    """``lance.<name>`` / ``lancelet.<name>``."""
    return sys.modules[f"{mod.__name__}.{name}"]


def read_both(uri: str) -> list:
    """The dataset as each library reads it (rows sorted by ``a``)."""
    out = []
    for mod in LIBS.values():
        t = mod.dataset(uri).to_table()
        out.append((t.schema.names, t.sort_by("a").to_pydict(), mod.dataset(uri).count_rows()))
    assert out[0] == out[1], out
    return out[0]


def base(setup, uri: str, n: int = 10, per_file: int = 5) -> None:
    t = pa.table({"a": pa.array(range(n), pa.int64()), "b": [f"s{i}" for i in range(n)]})
    setup.write_dataset(t, uri, max_rows_per_file=per_file)


def run(setup_name: str, op_name: str, tmp_path, program) -> tuple:
    """``program(setup, committer, uri)`` for the given pair, and for pylance alone."""
    results = []
    for s, c, d in ((setup_name, op_name, "mixed"), ("pylance", "pylance", "oracle")):
        uri = str(tmp_path / d / "t.lance")
        program(LIBS[s], LIBS[c], uri)
        results.append(read_both(uri))
    return tuple(results)


@pytest.mark.parametrize("setup,committer", PAIRS)
def test_delete_planned_per_fragment(setup, committer, tmp_path):
    def program(s, c, uri):
        base(s, uri)
        ds = c.dataset(uri)
        pred = "a < 5 OR a = 7"
        updated, deleted = [], []
        for frag in ds.get_fragments():
            new = frag.delete(pred)
            if new is None:
                deleted.append(frag.fragment_id)
            else:
                updated.append(new)
        op = c.LanceOperation.Delete(updated, deleted, pred)
        c.LanceDataset.commit(uri, op, read_version=ds.version)

    ours, theirs = run(setup, committer, tmp_path, program)
    assert ours == theirs
    assert ours[1]["a"] == [5, 6, 8, 9]


@pytest.mark.parametrize("setup,committer", PAIRS)
def test_update_removes_changes_and_adds_fragments(setup, committer, tmp_path):
    def program(s, c, uri):
        base(s, uri)
        ds = c.dataset(uri)
        frags = ds.get_fragments()
        changed = frags[1].delete("a = 7")
        new = sub(c, "fragment").write_fragments(pa.table({"a": pa.array([70, 100], pa.int64()), "b": ["x", "y"]}), uri)
        op = c.LanceOperation.Update(
            removed_fragment_ids=[frags[0].fragment_id], updated_fragments=[changed], new_fragments=new
        )
        c.LanceDataset.commit(uri, op, read_version=ds.version)

    ours, theirs = run(setup, committer, tmp_path, program)
    assert ours == theirs
    assert ours[1]["a"] == [5, 6, 8, 9, 70, 100]


@pytest.mark.parametrize("setup,committer", PAIRS)
def test_project_renames_and_swaps_by_field_id(setup, committer, tmp_path):
    def program(s, c, uri):
        s.write_dataset(pa.table({"a": [1, 2], "b": ["x", "y"], "b1": ["p", "q"]}), uri)
        new = pa.schema([("a", pa.int64()), ("b0", pa.string()), ("b", pa.string())])
        op = c.LanceOperation.Project(sub(c, "schema").LanceSchema.from_pyarrow(new))
        c.LanceDataset.commit(uri, op, read_version=1)

    ours, theirs = run(setup, committer, tmp_path, program)
    assert ours == theirs
    assert ours[1] == {"a": [1, 2], "b0": ["x", "y"], "b": ["p", "q"]}


@pytest.mark.parametrize("setup,committer", PAIRS)
def test_merge_adds_a_column_over_the_same_fragments(setup, committer, tmp_path):
    def program(s, c, uri):
        base(s, uri)
        ds = c.dataset(uri)
        frags = [f.metadata for f in ds.get_fragments()]
        new = pa.schema([("a", pa.int64()), ("b", pa.string()), ("c", pa.float64())])
        op = c.LanceOperation.Merge(frags, sub(c, "schema").LanceSchema.from_pyarrow(new))
        c.LanceDataset.commit(uri, op, read_version=ds.version)

    ours, theirs = run(setup, committer, tmp_path, program)
    assert ours == theirs
    assert ours[0] == ["a", "b", "c"] and ours[1]["c"] == [None] * 10


@pytest.mark.parametrize("setup,committer", PAIRS)
def test_restore_an_older_version(setup, committer, tmp_path):
    def program(s, c, uri):
        base(s, uri)
        s.dataset(uri).delete("a > 2")
        c.LanceDataset.commit(uri, c.LanceOperation.Restore(1), read_version=2)

    ours, theirs = run(setup, committer, tmp_path, program)
    assert ours == theirs
    assert ours[2] == 10


@pytest.mark.parametrize("setup,committer", PAIRS)
def test_data_replacement_swaps_a_data_file(setup, committer, tmp_path):
    def program(s, c, uri):
        base(s, uri, n=4, per_file=4)
        ds = c.dataset(uri)
        frag = ds.get_fragments()[0]
        old = frag.data_files()[0]
        name = "replacement.lance"
        t = pa.table({"a": pa.array([10, 11, 12, 13], pa.int64()), "b": ["r0", "r1", "r2", "r3"]})
        with sub(c, "file").LanceFileWriter(f"{uri}/data/{name}", t.schema, version="2.2") as w:
            w.write_batch(t)
        new_file = sub(c, "fragment").DataFile(name, list(old.fields), list(old.column_indices), 2, 2)
        op = c.LanceOperation.DataReplacement([c.LanceOperation.DataReplacementGroup(frag.fragment_id, new_file)])
        c.LanceDataset.commit(uri, op, read_version=ds.version)

    ours, theirs = run(setup, committer, tmp_path, program)
    assert ours == theirs
    assert ours[1] == {"a": [10, 11, 12, 13], "b": ["r0", "r1", "r2", "r3"]}


@pytest.mark.parametrize("setup,committer", PAIRS)
def test_update_config(setup, committer, tmp_path):
    configs = []

    def program(s, c, uri):
        base(s, uri)
        UpdateMap = c.LanceOperation.UpdateMap
        op = c.LanceOperation.UpdateConfig(config_updates=UpdateMap({"team.owner": "ml", "x": "1"}))
        c.LanceDataset.commit(uri, op, read_version=1)
        op = c.LanceOperation.UpdateConfig(config_updates=UpdateMap({"x": None}))
        c.LanceDataset.commit(uri, op, read_version=2)
        configs.append(
            [{k: v for k, v in m.dataset(uri).config().items() if not k.startswith("lance.")} for m in LIBS.values()]
        )

    run(setup, committer, tmp_path, program)
    assert configs[0] == configs[1] == [{"team.owner": "ml"}] * 2


# --------------------------------------------------------------------------------------
# Transaction properties and commit messages
# --------------------------------------------------------------------------------------


def _props(mod, uri, version):
    return mod.dataset(uri).read_transaction(version).transaction_properties


@pytest.mark.parametrize("writer", list(LIBS))
def test_transaction_properties_and_commit_message_are_recorded(writer, tmp_path):
    w = LIBS[writer]
    uri = str(tmp_path / "t.lance")
    w.write_dataset(pa.table({"a": [1]}), uri, commit_message="first", transaction_properties={"job": "nightly"})
    w.write_dataset(pa.table({"a": [2]}), uri, mode="append", transaction_properties={"k": "v"})
    frags = sub(w, "fragment").write_fragments(pa.table({"a": [3]}), uri)
    w.LanceDataset.commit(uri, w.LanceOperation.Append(frags), read_version=2, commit_message="third")
    for reader in LIBS.values():
        assert _props(reader, uri, 1) == {"__lance_commit_message": "first", "job": "nightly"}
        assert _props(reader, uri, 2) == {"k": "v"}
        assert _props(reader, uri, 3) == {"__lance_commit_message": "third"}


@pytest.mark.parametrize("writer", list(LIBS))
def test_read_transaction_names_each_operation(writer, tmp_path):
    w = LIBS[writer]
    uri = str(tmp_path / "t.lance")
    base(w, uri)  # 1 Overwrite
    w.write_dataset(pa.table({"a": [99], "b": ["z"]}), uri, mode="append")  # 2 Append
    ds = w.dataset(uri)
    ds.delete("a = 3")  # 3 Delete
    ds.update({"b": "'u'"}, where="a = 4")  # 4 Update
    ds.add_columns({"c": "a * 2"})  # 5 Merge
    ds.drop_columns(["c"])  # 6 Project
    w.LanceDataset.commit(uri, w.LanceOperation.Restore(2), read_version=6)  # 7 Restore
    names = {}
    for name, reader in LIBS.items():
        r = reader.dataset(uri)
        names[name] = [type(r.read_transaction(v).operation).__name__ for v in range(1, 8)]
        txns = r.get_transactions(3)
        assert [type(t.operation).__name__ for t in txns] == names[name][::-1][:3]
        assert txns[0].read_version == 6
    assert (
        names["pylance"]
        == names["lancelet"]
        == ["Overwrite", "Append", "Delete", "Update", "Merge", "Project", "Restore"]
    )


@pytest.mark.parametrize("writer", list(LIBS))
def test_read_transaction_carries_operation_fields(writer, tmp_path):
    w = LIBS[writer]
    uri = str(tmp_path / "t.lance")
    base(w, uri)
    ds = w.dataset(uri)
    ds.delete("a < 5 OR a = 7")
    for reader in LIBS.values():
        t = reader.dataset(uri).read_transaction(2)
        op = t.operation
        assert t.read_version == 1
        assert op.predicate == "a < 5 OR a = 7"
        assert list(op.deleted_fragment_ids) == [0]
        assert [f.id for f in op.updated_fragments] == [1]
        assert op.updated_fragments[0].deletion_file.num_deleted_rows == 1
        over = reader.dataset(uri).read_transaction(1).operation
        assert [f.physical_rows for f in over.fragments] == [5, 5]


def test_a_transaction_object_commits_with_its_properties(tmp_path):
    uri = str(tmp_path / "t.lance")
    lancelet.write_dataset(pa.table({"a": [1, 2, 3]}), uri)
    frags = lancelet.fragment.write_fragments(pa.table({"a": [4]}), uri)
    txn = lancelet.Transaction(1, lancelet.LanceOperation.Append(frags), transaction_properties={"src": "t"})
    ds = lancelet.LanceDataset.commit(uri, txn)
    assert ds.count_rows() == 4
    assert lance.dataset(uri).read_transaction(2).transaction_properties == {"src": "t"}


def test_read_transaction_of_a_lancelet_merge_has_the_schema_with_ids(tmp_path):
    uri = str(tmp_path / "t.lance")
    base(lancelet, uri)
    ds = lancelet.dataset(uri)
    ds.drop_columns(["b"])
    ds.add_columns({"c": "a + 1"})
    op = ds.read_transaction(3).operation
    assert op.schema.to_pyarrow().names == ["a", "c"]
    assert op.schema.field_ids == [0, 2]


# --------------------------------------------------------------------------------------
# Refusals
# --------------------------------------------------------------------------------------


def test_delete_of_an_unknown_fragment_is_refused(tmp_path):
    uri = str(tmp_path / "t.lance")
    base(lancelet, uri)
    ds = lancelet.dataset(uri)
    with pytest.raises(lancelet.errors.InvalidArgumentError):
        lancelet.LanceDataset.commit(uri, lancelet.LanceOperation.Delete([], [7], "x"), read_version=1)
    meta = ds.get_fragments()[0].delete("a = 1").to_json()
    meta["id"] = 9
    bad = lancelet.fragment.FragmentMetadata.from_json(json.dumps(meta))
    with pytest.raises(lancelet.errors.InvalidArgumentError, match="fragment 9"):
        lancelet.LanceDataset.commit(uri, lancelet.LanceOperation.Delete([bad], [], "a = 1"), read_version=1)
    assert lancelet.dataset(uri).version == 1


def test_merge_must_cover_every_fragment(tmp_path):
    uri = str(tmp_path / "t.lance")
    base(lancelet, uri)
    frags = [f.metadata for f in lancelet.dataset(uri).get_fragments()][:1]
    schema = lancelet.schema.LanceSchema.from_pyarrow(pa.schema([("a", pa.int64()), ("b", pa.string())]))
    with pytest.raises(lancelet.errors.InvalidArgumentError, match="exactly"):
        lancelet.LanceDataset.commit(uri, lancelet.LanceOperation.Merge(frags, schema), read_version=1)


def test_operations_pickle():
    import pickle

    op = lancelet.LanceOperation.Restore(3)
    assert pickle.loads(pickle.dumps(op)) == op
    m = lancelet.LanceOperation.UpdateConfig(config_updates=lancelet.LanceOperation.UpdateMap({"a": None}))
    assert pickle.loads(pickle.dumps(m)) == m


# --------------------------------------------------------------------------------------
# add_columns with typed-null SQL: no data file, as in pylance
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("writer,adder", PAIRS)
@pytest.mark.parametrize(
    "exprs,files_added",
    [
        ({"x": "CAST(NULL AS int)"}, 0),
        ({"x": "CAST(NULL AS double)", "y": "CAST(NULL AS string)"}, 0),
        ({"x": "CAST(NULL AS timestamp)"}, 0),
        ({"x": "CAST(NULL AS string)", "y": "a * 2"}, 1),  # one computed column: files as usual
        ({"x": "CAST(NULL AS bigint) + 1"}, 1),  # not a bare typed null
    ],
    ids=["int", "two", "timestamp", "mixed", "arith"],
)
def test_add_columns_typed_null_writes_no_data_file(writer, adder, exprs, files_added, tmp_path):
    uri = str(tmp_path / "t.lance")
    base(LIBS[writer], uri, n=6, per_file=3)
    LIBS[adder].dataset(uri).add_columns(exprs)
    for mod in LIBS.values():
        ds = mod.dataset(uri)
        assert [len(f.data_files()) for f in ds.get_fragments()] == [1 + files_added] * 2
        t = ds.to_table()
        assert t.schema.names == ["a", "b", *exprs]
        for name, expr in exprs.items():
            if "NULL" in expr:
                assert t[name].null_count == 6
    oracle = str(tmp_path / "oracle.lance")
    base(lance, oracle, n=6, per_file=3)
    lance.dataset(oracle).add_columns(exprs)
    assert lancelet.dataset(uri).schema == lance.dataset(oracle).schema


# --------------------------------------------------------------------------------------
# Tag metadata (tags.replace_metadata)
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("setup,editor", PAIRS)
def test_tag_metadata_is_replaced_kept_on_update_and_read_by_both(setup, editor, tmp_path):
    uri = str(tmp_path / "t.lance")
    base(LIBS[setup], uri)
    LIBS[setup].dataset(uri).delete("a = 1")
    LIBS[setup].dataset(uri).tags.create("v1", 1)
    ds = LIBS[editor].dataset(uri)
    ds.tags.replace_metadata("v1", {"owner": "ml", "stage": "raw"})
    before = {m: LIBS[m].dataset(uri).tags.list()["v1"] for m in LIBS}
    for t in before.values():
        assert t["metadata"] == {"owner": "ml", "stage": "raw"} and t["version"] == 1
        assert t["updated_at"] == t["created_at"]  # replacing metadata does not touch the times
    LIBS[setup].dataset(uri).tags.update("v1", 2)  # moving a tag keeps its metadata
    for m in LIBS.values():
        t = m.dataset(uri).tags.list()["v1"]
        assert (t["version"], t["metadata"]) == (2, {"owner": "ml", "stage": "raw"})
    ds.tags.replace_metadata("v1", {})
    for m in LIBS.values():
        assert m.dataset(uri).tags.list()["v1"]["metadata"] == {}


def test_replace_metadata_of_a_missing_tag_is_a_value_error(tmp_path):
    uri = str(tmp_path / "t.lance")
    base(lancelet, uri)
    for mod in LIBS.values():
        with pytest.raises(ValueError):
            mod.dataset(uri).tags.replace_metadata("nope", {"a": "b"})
    with pytest.raises(lancelet.errors.InvalidArgumentError):
        lancelet.dataset(uri).tags.replace_metadata("v1", {"a": 1})


# --------------------------------------------------------------------------------------
# merge_insert(...).target_bases(...)
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("root_base", [False, True], ids=["plain-base", "dataset-root-base"])
@pytest.mark.parametrize("setup,merger", PAIRS)
def test_merge_insert_target_bases_writes_new_files_to_the_base(setup, merger, root_base, tmp_path):
    import os

    uri = str(tmp_path / "t.lance")
    b1 = str(tmp_path / "b1")
    s, m = LIBS[setup], LIBS[merger]
    t = pa.table({"id": pa.array([1, 2, 3], pa.int64()), "v": ["a", "b", "c"]})
    s.write_dataset(t, uri, initial_bases=[s.DatasetBasePath(b1, name="b1", is_dataset_root=root_base)])
    src = pa.table({"id": pa.array([2, 4], pa.int64()), "v": ["B", "D"]})
    counts = (
        m.dataset(uri)
        .merge_insert("id")
        .when_matched_update_all()
        .when_not_matched_insert_all()
        .target_bases(["b1"])
        .execute(src)
    )
    assert (counts["num_inserted_rows"], counts["num_updated_rows"]) == (1, 1)
    for mod in LIBS.values():
        ds = mod.dataset(uri)
        assert ds.to_table().sort_by("id").to_pydict() == {"id": [1, 2, 3, 4], "v": ["a", "B", "c", "D"]}
        new = [d for f in ds.get_fragments() for d in f.data_files() if d.base_id is not None]
        assert len(new) == 1
    where = os.path.join(b1, "data") if root_base else b1
    assert [n for n in os.listdir(where) if n.endswith(".lance")] == [new[0].path]


def test_merge_insert_target_bases_refusals(tmp_path):
    uri = str(tmp_path / "t.lance")
    lancelet.write_dataset(pa.table({"id": [1]}), uri)
    b = lancelet.dataset(uri).merge_insert("id").when_not_matched_insert_all()
    # several bases are spread over (tests/test_base_paths_more.py); they must exist
    with pytest.raises(lancelet.errors.InvalidArgumentError, match="names no base"):
        b.target_bases(["x", "y"]).execute(pa.table({"id": [2]}))
    with pytest.raises(lancelet.errors.InvalidArgumentError):
        b.target_all_bases()  # not together with target_bases
    with pytest.raises(lancelet.errors.InvalidArgumentError, match="names no base"):
        b.target_bases(["nope"]).execute(pa.table({"id": [2]}))
    assert lancelet.dataset(uri).count_rows() == 1
    # the dataset's own URI is its root
    lancelet.dataset(uri).merge_insert("id").when_not_matched_insert_all().target_bases([uri]).execute(
        pa.table({"id": [2]})
    )
    assert lance.dataset(uri).count_rows() == 2


@pytest.mark.parametrize("lib", [lance, lancelet], ids=["pylance", "lancelet"])
def test_an_overwrite_at_a_stale_version_names_the_version_like_pylance(lib, tmp_path):
    """pylance's words for a commit that lost to a concurrent overwrite, which programs
    (and pylance's own tests) match: "Commit conflict for version N"."""
    table = pa.table({"a": range(10)})
    uri = str(tmp_path / "d")
    frag = lib.fragment.LanceFragment.create(uri, table)
    op = lib.LanceOperation.Overwrite(table.schema, [frag])
    v1 = lib.LanceDataset.commit(uri, op, max_retries=0)
    lib.LanceDataset.commit(uri, op, read_version=v1.version, max_retries=0)
    with pytest.raises(OSError, match=f"Commit conflict for version {v1.version + 1}"):
        lib.LanceDataset.commit(uri, op, read_version=v1.version, max_retries=0)


@pytest.mark.parametrize("randomize_order", [True, False])
def test_sample_draws_distinct_rows_like_pylance(tmp_path, randomize_order):
    """``sample(n)``: n distinct live rows (all when fewer), columns as asked; rows come
    from the dataset whichever library wrote it."""
    uri = str(tmp_path / "d")
    lance.write_dataset(pa.table({"x": [i * 10 for i in range(50)], "y": range(50)}), uri, max_rows_per_file=20)
    lance.dataset(uri).delete("y < 5")
    for lib in (lance, lancelet):
        ds = lib.dataset(uri)
        t = ds.sample(7, randomize_order=randomize_order)
        assert t.num_rows == 7 and t.column_names == ["x", "y"]
        ys = t.column("y").to_pylist()
        assert len(set(ys)) == 7 and all(5 <= y < 50 for y in ys)
        assert t.column("x").to_pylist() == [y * 10 for y in ys]
        if lib is lancelet and not randomize_order:
            assert ys == sorted(ys)
        assert ds.sample(4, columns=["x"]).column_names == ["x"]
    # More than there are: pylance's random.sample raises ValueError; lancelet gives every row.
    assert lancelet.dataset(uri).sample(1000).num_rows == 45
    with pytest.raises(lancelet.errors.InvalidArgumentError):
        lancelet.dataset(uri).sample(-1)


@pytest.mark.parametrize("lib", [lance, lancelet], ids=["pylance", "lancelet"])
def test_data_file_path_is_a_string_and_calling_it_is_deprecated(lib, tmp_path):
    frag = lib.fragment.LanceFragment.create(str(tmp_path / "d"), pa.table({"a": range(3)}))
    f = frag.files[0]
    assert isinstance(f.path, str) and f.path.endswith(".lance")
    with pytest.warns(DeprecationWarning):
        assert f.path() == f.path


@pytest.mark.parametrize("setup,committer", [("lance", "lancelet"), ("lancelet", "lance"), ("lancelet", "lancelet")])
def test_commit_batch_merges_appends_like_pylance(setup, committer, tmp_path):
    libs = {"lance": lance, "lancelet": lancelet}
    s, c = libs[setup], libs[committer]
    uri = str(tmp_path / "d")
    data1 = pa.table({"a": range(10), "b": range(10)})
    s.write_dataset(data1, uri)
    ds = c.dataset(uri)
    parts = [pa.table({"a": range(i * 10, i * 10 + 10), "b": range(i * 10, i * 10 + 10)}) for i in (1, 2)]
    frags = [c.fragment.write_fragments(p, ds) for p in parts]
    txns = [c.Transaction(1, c.LanceOperation.Append(frags[0])), c.Transaction(2, c.LanceOperation.Append(frags[1]))]
    result = c.LanceDataset.commit_batch(ds, txns)
    assert result["dataset"].version == 2
    assert isinstance(result["merged"], c.Transaction)
    assert result["merged"].operation.fragments == frags[0] + frags[1]
    for lib in (lance, lancelet):
        assert lib.dataset(uri).to_table() == pa.concat_tables([data1, *parts])
        assert len(lib.dataset(uri).get_fragments()) == 3
    if c is lancelet:
        with pytest.raises(lancelet.errors.UnsupportedFeatureError, match="Append transactions only"):
            lancelet.LanceDataset.commit_batch(ds, [lancelet.Transaction(2, lancelet.LanceOperation.Delete([], [0], "a > 1"))])


@pytest.mark.parametrize("writer", [lance, lancelet], ids=["pylance", "lancelet"])
def test_drop_removes_a_dataset_like_pylance(writer, tmp_path):
    import os

    for lib in (lance, lancelet):
        uri = str(tmp_path / lib.__name__)
        ds = writer.write_dataset(pa.table({"x": range(10), "t": [f"w{i}" for i in range(10)]}), uri)
        ds.create_scalar_index("x", "BTREE")
        ds.tags.create("t1", 1)
        lib.LanceDataset.drop(uri)
        assert not os.path.exists(uri)
        lib.LanceDataset.drop(uri, ignore_not_found=True)
        with pytest.raises(OSError):
            lib.LanceDataset.drop(uri)
        with pytest.raises(OSError):
            lib.LanceDataset.drop(uri, ignore_not_found=False)


def test_drop_a_dataset_in_memory():
    uri = "memory://drop-me"
    lancelet.write_dataset(pa.table({"x": range(3)}), uri)
    lancelet.LanceDataset.drop(uri)
    with pytest.raises(OSError):
        lancelet.dataset(uri)
