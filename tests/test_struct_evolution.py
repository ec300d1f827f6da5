"""Fields inside structs: dropping them (a Project; data files untouched) and selecting them
by dotted path, compared with pylance 14 on the same datasets."""

from __future__ import annotations

import lance
import pyarrow as pa
import pytest

import lancelet
from lancelet.errors import InvalidArgumentError, UnsupportedFeatureError


# Special table (not in _tables): hand-written nested struct rows the evolution asserts name.
def _table(null_struct: bool = False) -> pa.Table:
    rows = [{"a": 1, "b": "x", "c": {"d": 1.0, "e": 2}}, {"a": 2, "b": None, "c": {"d": None, "e": 3}},
            {"a": 3, "b": "z", "c": None if null_struct else {"d": 3.5, "e": None}}]
    if null_struct:
        rows.append(None)
    return pa.table({"id": list(range(len(rows))), "s": pa.array(rows),
                     "l": pa.array([[{"p": i}] for i in range(len(rows))])})


@pytest.mark.parametrize("steps", [
    [["s.a"]],
    [["s.c.d"]],
    [["s.a"], ["s.c.d"], ["s.b", "s.c"]],   # the last leaves s empty: s goes too
    [["s.c.d", "s.c.e"]],                    # c left empty: c goes, s stays
    [["s.a", "id"]],
])
@pytest.mark.parametrize("writer", ["lancelet", "pylance"])
def test_drop_fields_inside_structs(tmp_path, steps, writer):
    """pylance and lancelet apply the same drops to the same dataset; both read both results
    the same way."""
    uris = {}
    for lib in ("lancelet", "pylance"):
        uri = str(tmp_path / lib)
        if writer == "pylance":
            lance.write_dataset(_table(), uri, data_storage_version="2.0")
        else:
            lancelet.write_dataset(_table(), uri)
        mod = lancelet if lib == "lancelet" else lance
        for names in steps:
            mod.dataset(uri).drop_columns(names)
        uris[lib] = uri
    expected = lance.dataset(uris["pylance"]).to_table()
    assert lancelet.dataset(uris["lancelet"]).schema == lance.dataset(uris["pylance"]).schema
    assert lancelet.dataset(uris["lancelet"]).to_table() == expected
    assert lance.dataset(uris["lancelet"]).to_table() == expected
    assert lancelet.dataset(uris["pylance"]).to_table() == expected
    # Data files are never rewritten by a drop.
    assert sorted(lancelet.dataset(uris["lancelet"]).get_fragments()[0].data_files()) == \
        sorted(lancelet.dataset(uris["lancelet"], version=1).get_fragments()[0].data_files())


def test_dropped_struct_fields_with_renames_and_filters(tmp_path):
    uri = str(tmp_path / "d")
    lancelet.write_dataset(_table(), uri)
    ds = lancelet.dataset(uri)
    ds.alter_columns({"path": "s.b", "name": "bb"})
    lancelet.dataset(uri).drop_columns(["s.a"])
    ours = lancelet.dataset(uri)
    theirs = lance.dataset(uri)
    assert ours.to_table() == theirs.to_table()
    assert ours.to_table(filter="s.c.e >= 3") == theirs.to_table(filter="s.c.e >= 3")
    assert ours.to_table(columns=["s.bb", "id"]) == theirs.to_table(columns=["s.bb", "id"])
    # A field dropped and added again under the same name starts out null.
    ours.add_columns(pa.field("t", pa.struct([("a", pa.int64())])))
    assert lancelet.dataset(uri).to_table()["t"].null_count == 3


def test_bad_struct_drops(tmp_path):
    uri = str(tmp_path / "d")
    lancelet.write_dataset(_table(), uri)
    ds = lancelet.dataset(uri)
    with pytest.raises(InvalidArgumentError, match="s.zz"):
        ds.drop_columns(["s.zz"])
    with pytest.raises(UnsupportedFeatureError, match="list"):
        ds.drop_columns(["l.item.p"])
    assert lancelet.dataset(uri).version == 1


@pytest.mark.parametrize("storage", ["2.0", "2.1", "2.2"])
@pytest.mark.parametrize("columns", [["s.b"], ["s.b", "s.a"], ["id", "s.c.e", "s"], ["s.c"], ["s.c.d", "id"]])
def test_dotted_columns_come_back_flat(tmp_path, storage, columns):
    """pylance 14 returns `columns=["s.b"]` as a flat column named "s.b" (null where a struct
    above it is null); take() keeps the struct."""
    uri = str(tmp_path / "d")
    lance.write_dataset(_table(null_struct=storage != "2.0"), uri, data_storage_version=storage)
    ours, theirs = lancelet.dataset(uri), lance.dataset(uri)
    assert ours.to_table(columns=columns) == theirs.to_table(columns=columns)
    assert ours.to_table(columns=columns, filter="id > 0") == theirs.to_table(columns=columns, filter="id > 0")
    assert ours.take([2, 0], columns=columns) == theirs.take([2, 0], columns=columns)
