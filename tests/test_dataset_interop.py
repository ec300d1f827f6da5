"""Datasets shared with pylance: whatever one library commits, the other reads the same.

(a) lancelet writes a history (appends, an overwrite, small and large deletes, tags) and
pylance reads every version identically; (b) pylance writes (file format 2.0, both
manifest naming schemes) and lancelet reads every version identically; (c) the two
libraries take turns committing to one dataset.

``lib`` is lancelet (pylance itself when ``LANCELET_TEST_ORACLE_SELF=1``); ``lance`` is
always the pylance oracle.
"""

from __future__ import annotations

from typing import Callable, List, Tuple

import pyarrow as pa
import pytest

lance = pytest.importorskip("lance")

pytestmark = pytest.mark.interop

V2 = {"data_storage_version": "2.0"}


# Special table (not in _tables): the asserts below pin its values (names "n8", null counts, deleted rows).
def _table(start: int, n: int) -> pa.Table:
    """Built fresh (not sliced): pylance 14 panics writing sliced struct arrays."""
    ids = list(range(start, start + n))
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "name": pa.array([None if i % 7 == 0 else f"n{i}" for i in ids], pa.string()),
            "score": pa.array([None if i % 11 == 3 else i / 4 for i in ids], pa.float64()),
            "tags": pa.array([[f"t{i % 3}"] * (i % 4) if i % 9 else None for i in ids], pa.list_(pa.string())),
            "meta": pa.array([{"a": i % 5, "b": f"b{i}"} for i in ids], pa.struct([("a", pa.int32()), ("b", pa.string())])),
            "vec": pa.FixedSizeListArray.from_arrays(pa.array([float(i + k) for i in ids for k in range(4)], pa.float32()), 4),
        }
    )


def _sorted(t: pa.Table) -> pa.Table:
    return t.sort_by("id")


def assert_same_everywhere(ours_lib, uri: str, tables_equal) -> None:
    """Both libraries see the same versions, and at every version the same rows (in the
    same order), row counts, fragments and row addresses; and the same tags."""
    theirs = lance.dataset(uri)
    ours = ours_lib.dataset(uri)
    assert ours.version == theirs.version
    assert ours.latest_version == theirs.latest_version
    assert [v["version"] for v in ours.versions()] == [v["version"] for v in theirs.versions()]
    for v in (x["version"] for x in theirs.versions()):
        a, b = ours_lib.dataset(uri, version=v), lance.dataset(uri, version=v)
        assert a.count_rows() == b.count_rows(), f"version {v}"
        assert a.schema == b.schema, f"version {v}"
        expected = b.to_table()
        got = a.to_table()
        tables_equal(_sorted(got), _sorted(expected))
        tables_equal(got, expected)
        assert [f.fragment_id for f in a.get_fragments()] == [f.fragment_id for f in b.get_fragments()], f"version {v}"
        assert [f.count_rows() for f in a.get_fragments()] == [f.count_rows() for f in b.get_fragments()]
        addr = {"columns": ["id"], "with_row_address": True}
        tables_equal(a.to_table(**addr), b.to_table(**addr))
    assert _tag_versions(ours) == _tag_versions(theirs)


def _tag_versions(ds) -> dict:
    return {name: t["version"] for name, t in ds.tags.list().items()}


# --------------------------------------------------------------------------------------
# (a) lancelet writes, pylance reads
# --------------------------------------------------------------------------------------


def _history(writer, uri: str, **create_kwargs) -> List[int]:
    """Eleven versions through ``writer`` (a module with ``write_dataset``/``dataset``).
    Returns the row count after each version."""
    counts = []

    def step(fn):
        fn()
        counts.append(writer.dataset(uri).count_rows())

    step(lambda: writer.write_dataset(_table(0, 100), uri, max_rows_per_file=40, **V2, **create_kwargs))
    step(lambda: writer.write_dataset(_table(100, 50), uri, mode="append"))
    step(lambda: writer.dataset(uri).delete("id < 5 OR id = 120"))  # small: Arrow deletion file
    step(lambda: writer.write_dataset(_table(150, 8000), uri, mode="append"))
    step(lambda: writer.dataset(uri).delete("id >= 150 AND id % 3 <> 0"))  # large: bitmap
    step(lambda: writer.dataset(uri).delete("id >= 40 AND id < 80"))  # all of fragment 1
    step(lambda: writer.write_dataset(_table(9000, 20), uri, mode="append", max_rows_per_file=8))
    step(lambda: writer.write_dataset(_table(20000, 30), uri, mode="overwrite"))
    step(lambda: writer.write_dataset(_table(20030, 5), uri, mode="append"))
    step(lambda: writer.dataset(uri).delete("id = 20031"))
    step(lambda: writer.dataset(uri, version=4).restore())
    ds = writer.dataset(uri)
    ds.tags.create("first", 1)
    ds.tags.create("after-deletes", 6)
    ds.tags.create("moving", 2)
    ds.tags.update("moving", 9)
    ds.tags.create("doomed", 3)
    ds.tags.delete("doomed")
    return counts


EXPECTED_COUNTS = [100, 150, 144, 8144, 2811, 2771, 2791, 30, 35, 34, 8144]


@pytest.mark.parametrize("v2_paths", [True, False], ids=["v2_manifest_paths", "v1_manifest_paths"])
def test_pylance_reads_every_version_lancelet_wrote(lib, tmp_path, v2_paths, tables_equal):
    uri = str(tmp_path / "ours.lance")
    counts = _history(lib, uri, enable_v2_manifest_paths=v2_paths)
    assert counts == EXPECTED_COUNTS
    theirs = lance.dataset(uri)
    assert theirs.version == 11
    assert [lance.dataset(uri, version=v).count_rows() for v in range(1, 12)] == EXPECTED_COUNTS
    assert _tag_versions(theirs) == {"first": 1, "after-deletes": 6, "moving": 9}
    assert lance.dataset(uri, version="after-deletes").count_rows() == EXPECTED_COUNTS[5]
    assert_same_everywhere(lib, uri, tables_equal)


def test_pylance_validates_what_lancelet_wrote(lib, tmp_path):
    uri = str(tmp_path / "ours.lance")
    _history(lib, uri)
    for v in range(1, 12):
        lance.dataset(uri, version=v).validate()


def test_pylance_sees_lancelet_deletion_files_and_fragments(lib, tmp_path):
    uri = str(tmp_path / "ours.lance")
    _history(lib, uri)
    frags = lance.dataset(uri, version=6).get_fragments()
    assert [f.fragment_id for f in frags] == [0, 2, 3, 4]
    assert frags[0].deletion_file().endswith(".arrow")  # 5 rows of fragment 0
    assert frags[1].deletion_file() is None  # fragment 2 (ids 80..99) untouched
    assert frags[3].metadata.deletion_file.num_deleted_rows == 5333
    # rows of every scan match: filters, projections, take
    ours, theirs = lib.dataset(uri, version=6), lance.dataset(uri, version=6)
    for f in ["id % 10 = 0", "name IS NULL AND id > 100", "meta.a = 2"]:
        assert ours.to_table(filter=f).equals(theirs.to_table(filter=f))
    idx = [0, 5, 99, 1000, 2770]
    assert ours.take(idx).equals(theirs.take(idx))


def test_pylance_appends_to_what_lancelet_wrote(lib, tmp_path, tables_equal):
    uri = str(tmp_path / "ours.lance")
    lib.write_dataset(_table(0, 10), uri, **V2)
    lance.write_dataset(_table(10, 10), uri, mode="append")
    lance.dataset(uri).delete("id = 3")
    assert lib.dataset(uri).version == 3
    assert lib.dataset(uri).to_table().column("id").to_pylist() == [i for i in range(20) if i != 3]
    assert_same_everywhere(lib, uri, tables_equal)


# --------------------------------------------------------------------------------------
# (b) pylance writes, lancelet reads
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("v2_paths", [True, False], ids=["v2_manifest_paths", "v1_manifest_paths"])
def test_lancelet_reads_every_version_pylance_wrote(lib, tmp_path, v2_paths, tables_equal):
    uri = str(tmp_path / "theirs.lance")
    counts = _history(lance, uri, enable_v2_manifest_paths=v2_paths)
    assert counts == EXPECTED_COUNTS
    ours = lib.dataset(uri)
    assert ours.version == 11
    assert [lib.dataset(uri, version=v).count_rows() for v in range(1, 12)] == EXPECTED_COUNTS
    assert _tag_versions(ours) == {"first": 1, "after-deletes": 6, "moving": 9}
    assert lib.dataset(uri, version="after-deletes").version == 6
    assert ours.checkout_version("moving").count_rows() == EXPECTED_COUNTS[8]
    assert_same_everywhere(lib, uri, tables_equal)


def test_lancelet_reads_pylance_fragments_missing_nullable_columns(lib, tmp_path, tables_equal):
    # pylance lets an append omit nullable columns: that fragment's data file covers only
    # the given fields, and the others read as null.
    uri = str(tmp_path / "theirs.lance")
    lance.write_dataset(_table(0, 5), uri, **V2)
    lance.write_dataset(_table(5, 3).select(["id", "meta"]), uri, mode="append")
    lance.write_dataset(_table(8, 2).select(["vec", "id", "name", "meta", "tags", "score"]), uri, mode="append")
    got = lib.dataset(uri).to_table()
    assert got.column("name").to_pylist()[5:8] == [None, None, None]
    assert got.column("vec").to_pylist()[5:8] == [None, None, None]
    assert got.column("name").to_pylist()[8:] == ["n8", "n9"]
    assert_same_everywhere(lib, uri, tables_equal)
    assert lib.dataset(uri).to_table(columns=["score"], filter="id >= 5 AND id < 8").column("score").null_count == 3


def test_lancelet_appends_to_what_pylance_wrote(lib, tmp_path, tables_equal):
    uri = str(tmp_path / "theirs.lance")
    lance.write_dataset(_table(0, 10), uri, **V2)
    lance.dataset(uri).delete("id = 4")
    lib.write_dataset(_table(10, 5), uri, mode="append")
    lib.dataset(uri).delete("id = 12")
    lib.dataset(uri).tags.create("mine", 4)
    assert lance.dataset(uri).version == 4
    assert lance.dataset(uri).to_table().column("id").to_pylist() == [i for i in range(15) if i not in (4, 12)]
    assert lance.dataset(uri, version="mine").version == 4
    assert_same_everywhere(lib, uri, tables_equal)


# --------------------------------------------------------------------------------------
# (c) the two libraries take turns
# --------------------------------------------------------------------------------------

Step = Tuple[str, str, Callable]


def _alternating_steps(uri: str) -> List[Tuple[str, str, Callable]]:
    """(writer label, description, fn(writer module)) for each commit."""
    return [
        ("pylance", "create", lambda m: m.write_dataset(_table(0, 50), uri, max_rows_per_file=20, **V2)),
        ("lancelet", "append", lambda m: m.write_dataset(_table(50, 30), uri, mode="append")),
        ("pylance", "small delete", lambda m: m.dataset(uri).delete("id % 10 = 3")),
        ("lancelet", "delete in the same fragments", lambda m: m.dataset(uri).delete("id % 10 = 4 OR id = 55")),
        ("pylance", "append", lambda m: m.write_dataset(_table(80, 6000), uri, mode="append")),
        ("lancelet", "large delete", lambda m: m.dataset(uri).delete("id >= 80 AND id % 5 <> 0")),
        ("pylance", "delete on top of the bitmap", lambda m: m.dataset(uri).delete("id >= 80 AND id % 10 = 0")),
        ("lancelet", "tag", lambda m: m.dataset(uri).tags.create("before-overwrite", 7)),
        ("lancelet", "overwrite", lambda m: m.write_dataset(_table(10000, 25), uri, mode="overwrite", max_rows_per_file=10)),
        ("pylance", "append", lambda m: m.write_dataset(_table(10025, 5), uri, mode="append")),
        ("lancelet", "delete a whole fragment", lambda m: m.dataset(uri).delete("id >= 10010 AND id < 10020")),
        ("pylance", "restore", lambda m: m.dataset(uri, version=4).restore()),
        ("lancelet", "append", lambda m: m.write_dataset(_table(30000, 3), uri, mode="append")),
        ("pylance", "tag update", lambda m: m.dataset(uri).tags.update("before-overwrite", 2)),
        ("lancelet", "restore", lambda m: m.dataset(uri, version="before-overwrite").restore()),
        ("pylance", "append", lambda m: m.write_dataset(_table(40000, 4), uri, mode="append")),
    ]


def test_alternating_writers_agree_after_every_step(lib, tmp_path, tables_equal):
    uri = str(tmp_path / "shared.lance")
    versions = 0
    for who, what, fn in _alternating_steps(uri):
        fn(lance if who == "pylance" else lib)
        if what.startswith("tag"):
            assert lance.dataset(uri).version == versions
        else:
            versions += 1
        theirs, ours = lance.dataset(uri), lib.dataset(uri)
        assert theirs.version == ours.version == versions, f"after {who} {what}"
        assert len(theirs.versions()) == len(ours.versions()) == versions
        assert theirs.count_rows() == ours.count_rows(), f"after {who} {what}"
        assert ours.count_rows("id % 2 = 0") == theirs.count_rows("id % 2 = 0")
        tables_equal(ours.to_table(), theirs.to_table())
    assert_same_everywhere(lib, uri, tables_equal)
    final = lance.dataset(uri)
    ids = final.to_table().column("id").to_pylist()
    # the last restore went back to version 2 (the retargeted tag): ids 0..79, no deletes
    assert ids == list(range(80)) + [40000, 40001, 40002, 40003]
    for v in range(1, versions + 1):
        lance.dataset(uri, version=v).validate()
