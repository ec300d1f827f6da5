"""More drop-in remainders (issue 18): ``LanceFragment.merge_columns`` committed with
``LanceOperation.Merge``; ``LanceOperation.DataReplacement`` recorded as pylance records it;
dictionary columns and ``max_page_bytes`` in the file writer.

Interop both ways: one library does the step, the other commits or reads, and every
combination gives what pylance alone gives.
"""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.compute as pc
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

from test_drop_in_ops import LIBS, PAIRS, read_both, sub  # noqa: E402


def base(lib, uri: str) -> None:
    """10 rows in two fragments, row a=3 deleted (so fragments hold deleted rows)."""
    t = pa.table({"a": pa.array(range(10), pa.int64()), "b": [f"s{i}" for i in range(10)]})
    lib.write_dataset(t, uri, max_rows_per_file=5)
    lib.dataset(uri).delete("a = 3")


def schema_ids(schema) -> list:
    """Depth-first field ids of either library's LanceSchema."""
    if hasattr(schema, "field_ids"):
        return list(schema.field_ids)
    out = []

    def visit(fields):
        for f in fields:
            out.append(f.id())
            visit(f.children())

    visit(schema.fields())
    return out


def to_lib(lib, meta, schema):
    """A fragment result of one library as the other takes it (the JSON a worker sends)."""
    meta = sub(lib, "fragment").FragmentMetadata.from_json(json.dumps(meta.to_json()))
    ids = schema_ids(schema)
    if lib is lance:
        assert ids == list(range(len(ids)))  # pylance numbers a pyarrow schema 0, 1, ...
        return meta, lance.schema.LanceSchema.from_pyarrow(schema.to_pyarrow())
    return meta, lancelet.schema.LanceSchema(schema.to_pyarrow(), ids)


def _udf(batch: pa.RecordBatch) -> pa.RecordBatch:
    return pa.record_batch([pc.multiply(batch["a"], 3)], names=["c"])


VALUE_FUNCS = {
    "sql": lambda frag: ({"c": "a * 2"}, {}),
    "udf": lambda frag: (_udf, {"columns": ["a"], "batch_size": 2}),
    "reader": lambda frag: (
        pa.RecordBatchReader.from_batches(
            pa.schema([("c", pa.int64())]),
            [pa.record_batch([pa.array([v * 10 for v in frag.to_table()["a"].to_pylist()], pa.int64())], names=["c"])],
        ),
        {},
    ),
}


@pytest.mark.parametrize("kind", list(VALUE_FUNCS))
@pytest.mark.parametrize("worker,committer", PAIRS)
def test_fragment_merge_columns_committed_with_merge(worker, committer, kind, tmp_path):
    def program(w, c, uri):
        base(w, uri)
        ds = w.dataset(uri)
        metas, schema = [], None
        for frag in ds.get_fragments():
            value_func, kwargs = VALUE_FUNCS[kind](frag)
            meta, schema = frag.merge_columns(value_func, **kwargs)
            assert meta.id == frag.fragment_id
            assert len(meta.data_files()) == 2
            metas.append(meta)
        assert schema.to_pyarrow().names == ["a", "b", "c"]
        assert schema_ids(schema) == [0, 1, 2]
        pairs = [to_lib(c, m, schema) for m in metas]
        op = c.LanceOperation.Merge([m for m, _ in pairs], pairs[0][1])
        c.LanceDataset.commit(uri, op, read_version=ds.version)

    results = []
    for w, c, d in ((worker, committer, "mixed"), ("pylance", "pylance", "oracle")):
        uri = str(tmp_path / d / "t.lance")
        program(LIBS[w], LIBS[c], uri)
        results.append(read_both(uri))
    ours, theirs = results
    assert ours == theirs
    factor = {"sql": 2, "udf": 3, "reader": 10}[kind]
    assert ours[0] == ["a", "b", "c"]
    assert ours[1]["c"] == [a * factor for a in ours[1]["a"]]
    assert ours[2] == 9


@pytest.mark.parametrize("mod", list(LIBS.values()), ids=list(LIBS))
def test_fragment_merge_columns_ids_follow_the_dataset_after_a_drop(mod, tmp_path):
    """With a dropped column the ids are not 0..n: both libraries give the same ids."""
    got = {}
    for name, lib in LIBS.items():
        uri = str(tmp_path / name / "t.lance")
        t = pa.table({"a": pa.array(range(4), pa.int64()), "x": [1.0] * 4, "b": ["p"] * 4})
        mod.write_dataset(t, uri)
        mod.dataset(uri).drop_columns(["x"])
        ds = lib.dataset(uri)
        frag = ds.get_fragments()[0]
        meta, schema = frag.merge_columns({"c": "a + 1"})
        got[name] = (schema_ids(schema), list(meta.data_files()[-1].fields), schema.to_pyarrow().names)
        if lib is lancelet:
            op = lancelet.LanceOperation.Merge([meta], schema)
            lancelet.LanceDataset.commit(uri, op, read_version=ds.version)
            assert read_both(uri)[1]["c"] == [1, 2, 3, 4]
    assert got["lancelet"] == got["pylance"]
    assert got["pylance"][0] == [0, 2, 3]


def test_fragment_merge_columns_refusals(tmp_path):
    uri = str(tmp_path / "t.lance")
    base(lancelet, uri)
    frag = lancelet.dataset(uri).get_fragments()[0]
    with pytest.raises(ValueError, match="already exists"):
        frag.merge_columns({"a": "a + 1"})
    with pytest.raises(TypeError):
        frag.merge_columns(5)
    too_many = pa.table({"c": pa.array(range(5), pa.int64())})  # fragment 0 has 4 live rows
    with pytest.raises(ValueError, match="4 rows"):
        frag.merge_columns(too_many.to_reader())
    with pytest.raises(ValueError, match="checkpoint"):
        frag.merge_columns(lancelet.batch_udf(checkpoint_file=str(tmp_path / "ck.sqlite"))(_udf))
    # Nothing was committed.
    assert lancelet.dataset(uri).schema.names == ["a", "b"]


# -- DataReplacement is recorded as a DataReplacement -------------------------------------


def replace_first_file(lib, uri: str) -> int:
    """Replaces column ``b`` of fragment 0 (its own data file) with a file ``lib`` writes;
    returns the version read."""
    t = pa.table({"a": pa.array(range(4), pa.int64())})
    lib.write_dataset(t, uri)
    lib.dataset(uri).add_columns({"b": "CAST(a AS STRING)"})  # b in its own file
    ds = lib.dataset(uri)
    frag = ds.get_fragments()[0]
    old = frag.data_files()[1]
    assert list(old.fields) == [1]
    name = "replacement.lance"
    b = pa.table({"b": ["r0", "r1", "r2", "r3"]})
    minor = old.file_minor_version
    with sub(lib, "file").LanceFileWriter(f"{uri}/data/{name}", b.schema, version=f"2.{minor}") as w:
        w.write_batch(b)
    new_file = sub(lib, "fragment").DataFile(name, [1], [0], 2, minor)
    op = lib.LanceOperation.DataReplacement([lib.LanceOperation.DataReplacementGroup(frag.fragment_id, new_file)])
    lib.LanceDataset.commit(uri, op, read_version=ds.version)
    return ds.version


@pytest.mark.parametrize("writer", list(LIBS))
def test_data_replacement_is_read_back_as_a_data_replacement(writer, tmp_path):
    uri = str(tmp_path / "t.lance")
    read_version = replace_first_file(LIBS[writer], uri)
    for reader in LIBS.values():
        ds = reader.dataset(uri)
        assert ds.to_table().to_pydict() == {"a": [0, 1, 2, 3], "b": ["r0", "r1", "r2", "r3"]}
        txn = ds.read_transaction(ds.version)
        assert txn.read_version == read_version
        op = txn.operation
        assert type(op).__name__ == "DataReplacement", reader.__name__
        assert len(op.replacements) == 1
        group = op.replacements[0]
        assert group.fragment_id == 0
        assert group.new_file.path == "replacement.lance"
        assert list(group.new_file.fields) == [1]
        # The fragment keeps its rows and its other file.
        files = [f.path for f in ds.get_fragments()[0].data_files()]
        assert len(files) == 2 and files[1] == "replacement.lance"


def test_data_replacement_committed_after_an_append_rebases(tmp_path):
    """A DataReplacement planned on an older version still applies after an append."""
    uri = str(tmp_path / "t.lance")
    t = pa.table({"a": pa.array(range(4), pa.int64())})
    lancelet.write_dataset(t, uri)
    lancelet.dataset(uri).add_columns({"b": "CAST(a AS STRING)"})
    ds = lancelet.dataset(uri)
    lance.write_dataset(pa.table({"a": pa.array([9], pa.int64()), "b": ["n"]}), uri, mode="append")
    b = pa.table({"b": ["r0", "r1", "r2", "r3"]})
    minor = ds.get_fragments()[0].data_files()[1].file_minor_version
    with lancelet.file.LanceFileWriter(f"{uri}/data/r.lance", b.schema, version=f"2.{minor}") as w:
        w.write_batch(b)
    new_file = lancelet.fragment.DataFile("r.lance", [1], [0], 2, minor)
    group = lancelet.LanceOperation.DataReplacementGroup(0, new_file)
    lancelet.LanceDataset.commit(uri, lancelet.LanceOperation.DataReplacement([group]), read_version=ds.version)
    for reader in LIBS.values():
        got = reader.dataset(uri).to_table().sort_by("a").to_pydict()
        assert got == {"a": [0, 1, 2, 3, 9], "b": ["r0", "r1", "r2", "r3", "n"]}


# -- dictionary columns keep their dictionary ------------------------------------------------

DICTS = {
    "nulls": pa.array(["x", "y", "x", "z", None, "y"]).dictionary_encode(),
    "unused_items": pa.DictionaryArray.from_arrays(pa.array([0, 2, 0, 2], pa.int32()), pa.array(["a", "b", "c"])),
    "item_order": pa.DictionaryArray.from_arrays(pa.array([2, 0, 1, 2], pa.int32()), pa.array(["a", "b", "c"])),
    "int8_keys": pa.DictionaryArray.from_arrays(pa.array([1, 0, None, 1], pa.int8()), pa.array(["p", "q"])),
    "int_values": pa.DictionaryArray.from_arrays(pa.array([1, 0, None, 1], pa.int32()), pa.array([10, 20], pa.int64())),
    "null_item": pa.DictionaryArray.from_arrays(pa.array([1, 0, 2, 1], pa.int32()), pa.array(["p", None, "q"])),
    "large_values": pa.DictionaryArray.from_arrays(pa.array([1, 0, 1], pa.int16()), pa.array(["p", "q"], pa.large_string())),
    "sliced": pa.DictionaryArray.from_arrays(pa.array([0, 1, 2, 3, 1], pa.int32()), pa.array(list("abcd"))).slice(1, 3),
    "many_pages": pa.array([f"v{i % 300}" for i in range(3000)]).dictionary_encode(),
}


def dict_view(col: pa.ChunkedArray) -> tuple:
    """Type, each chunk's dictionary, and the values."""
    dicts = [c.dictionary.to_pylist() for c in col.chunks] if pa.types.is_dictionary(col.type) else None
    return str(col.type), dicts, col.to_pylist()


@pytest.mark.parametrize("version", ["2.1", "2.2"])
@pytest.mark.parametrize("case", list(DICTS))
def test_dictionary_file_round_trip_keeps_pylances_dictionary(case, version, tmp_path):
    arr = DICTS[case]
    t = pa.table({"d": arr, "i": pa.array(range(len(arr)), pa.int32())})
    seen = {}
    for wname, w in LIBS.items():
        path = str(tmp_path / f"{wname}.lance")
        with sub(w, "file").LanceFileWriter(path, t.schema, version=version) as fw:
            fw.write_batch(t)
        for rname, r in LIBS.items():
            got = sub(r, "file").LanceFileReader(path).read_all().to_table()
            seen[wname, rname] = dict_view(got["d"])
    oracle = seen["pylance", "pylance"]
    assert oracle[0].startswith("dictionary") and oracle[2] == arr.to_pylist()
    assert all(v == oracle for v in seen.values()), seen


@pytest.mark.parametrize("case", ["nulls", "unused_items", "item_order", "int8_keys"])
@pytest.mark.parametrize("writer,reader", PAIRS)
def test_dictionary_dataset_round_trip(case, writer, reader, tmp_path):
    arr = DICTS[case]
    t = pa.table({"d": arr})
    uri = str(tmp_path / "t.lance")
    LIBS[writer].write_dataset(t, uri)
    ours = dict_view(LIBS[reader].dataset(uri).to_table()["d"])
    oracle_uri = str(tmp_path / "oracle.lance")
    lance.write_dataset(t, oracle_uri)
    assert ours == dict_view(lance.dataset(oracle_uri).to_table()["d"])
    assert ours[0] == str(arr.type)


# -- max_page_bytes ----------------------------------------------------------------------------


def test_max_page_bytes_page_counts_match_pylance(tmp_path):
    import numpy as np

    n = 400_000
    t = pa.table({"i": pa.array(np.arange(n), pa.int64()), "f": pa.array(np.linspace(0, 1, n))})
    counts = {}
    for name, lib in LIBS.items():
        path = str(tmp_path / f"{name}.lance")
        with sub(lib, "file").LanceFileWriter(path, t.schema, version="2.1", max_page_bytes=1 << 16) as w:
            for b in t.to_batches(max_chunksize=100_000):
                w.write_batch(b)
        counts[name] = [c.num_pages for c in sub(lib, "file").LanceFileReader(path).file_statistics().columns]
    assert counts["lancelet"] == counts["pylance"]
