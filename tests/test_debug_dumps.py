"""``lance_schema``, ``lance.debug`` (``format_schema``, ``format_manifest``,
``format_fragment``, ``list_transactions``): both libraries print the same dataset the same
way, whichever wrote it."""

from __future__ import annotations

import pickle

import pyarrow as pa
import pytest

import lancelet
import lancelet.debug
from lancelet.schema import LanceSchema

lance = pytest.importorskip("lance")
pytest.importorskip("lance.debug")  # makes lance.debug an attribute of lance

LIBS = {"lance": lance, "lancelet": lancelet}
DATA = pa.table({
    "x": pa.array(range(4), pa.int64()),
    "s": [{"a": i, "b": f"v{i}"} for i in range(4)],
    "y": [[1.0, 2.0]] * 4,
    "m": pa.array([[("k", "v")]] * 4, pa.map_(pa.string(), pa.string())),
})


@pytest.fixture(params=list(LIBS))
def uri(request, tmp_path):
    uri = str(tmp_path / "d")
    lib = LIBS[request.param]
    ds = lib.write_dataset(DATA, uri)
    ds = lib.write_dataset(DATA, uri, mode="append")
    ds.delete("x = 1")
    ds.update({"x": "7"}, where="x = 2")
    ds.update_field_metadata({"x": {"k": "v"}})
    return uri


def test_lance_schema_prints_and_walks_like_pylance(uri):
    theirs, ours = lance.dataset(uri).lance_schema, lancelet.dataset(uri).lance_schema
    assert repr(ours) == repr(theirs)
    assert repr(ours).startswith("Schema {")

    def walk(fields):
        return [(f.name(), f.id(), f.metadata, walk(f.children())) for f in fields]

    assert walk(ours.fields()) == walk(theirs.fields())
    assert ours.to_pyarrow() == theirs.to_pyarrow()
    assert pickle.loads(pickle.dumps(ours)) == ours
    assert ours.field("s.b").id() == theirs.field("s.b").id()
    assert ours.field_case_insensitive("S.B").name() == "b" and ours.field("nope") is None


def test_a_fresh_schema_numbers_like_the_dataset(tmp_path):
    ds = lancelet.write_dataset(DATA, str(tmp_path / "d"))
    assert LanceSchema.from_pyarrow(DATA.schema) == ds.lance_schema


def test_format_schema_and_list_transactions_match_pylance(uri):
    assert lancelet.debug.format_schema(lancelet.dataset(uri)) == lance.debug.format_schema(lance.dataset(uri))
    ours = lancelet.debug.list_transactions(lancelet.dataset(uri))
    theirs = lance.debug.list_transactions(lance.dataset(uri))
    kinds = [[ln.strip() for ln in t.splitlines() if ln.startswith("    operation:")] for t in ours]
    assert kinds == [[ln.strip() for ln in t.splitlines() if ln.startswith("    operation:")] for t in theirs]
    assert all(t.startswith("Transaction {") for t in ours)
    assert lancelet.debug.list_transactions(lancelet.dataset(uri), max_transactions=2) == ours[:2]


def test_format_manifest_and_fragment(uri):
    ds = lancelet.dataset(uri)
    m = lancelet.debug.format_manifest(ds)
    assert m.startswith("Manifest {\n    schema: Schema {") and "fragments: [\n        Fragment {" in m
    assert f"    version: {ds.version},\n" in m
    frag = ds.get_fragments()[0].metadata
    ours = lancelet.debug.format_fragment(frag, ds)
    theirs = lance.debug.format_fragment(lance.dataset(uri).get_fragments()[0].metadata, lance.dataset(uri))
    assert ours.startswith("PrettyPrintableFragment {") and "schema: Schema {" in ours
    # The per-file schemas (names, ids, types) read the same.
    def names(text):
        return [ln.strip() for ln in text.splitlines() if ln.strip().startswith(("name:", "id:", "path:"))]

    assert names(ours) == names(theirs)
    with pytest.raises(lancelet.errors.InvalidArgumentError):
        lancelet.debug.format_fragment(999, ds)
