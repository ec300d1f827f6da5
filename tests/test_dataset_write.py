"""Writing datasets: ``write_dataset`` modes and inputs, versions, tags, scans, take,
fragments, row ids and deletes, with the API of pylance's ``lance`` module.

Every test goes through the ``lib`` fixture (``lancelet``; ``lance`` itself when
``LANCELET_TEST_ORACLE_SELF=1``, which proves the tests pass on the reference). Tests of
lancelet-only behaviour carry the ``lancelet_only`` marker.
"""

from __future__ import annotations

import datetime as dt
import pathlib

import pandas as pd
import pyarrow as pa
import pytest
from _tables import sample

V2 = {"data_storage_version": "2.0"}


def _write(lib, data, uri, **kwargs):
    for k, v in V2.items():
        kwargs.setdefault(k, v)
    return lib.write_dataset(data, uri, **kwargs)


def _ids(table: pa.Table) -> list:
    return table.column("id").to_pylist()


@pytest.fixture
def uri(tmp_path) -> str:
    return str(tmp_path / "ds.lance")


@pytest.fixture
def three_fragments(lib, uri) -> str:
    """Fragments 0, 1, 2 holding ids 0..9, 10..19, 20..24 (one create, ``max_rows_per_file=10``)."""
    _write(lib, sample(range(25)), uri, max_rows_per_file=10)
    return uri


# --------------------------------------------------------------------------------------
# Modes
# --------------------------------------------------------------------------------------


def test_create_writes_version_one_that_reads_back(lib, uri, tables_equal):
    ds = _write(lib, sample(range(100)), uri)
    assert ds.version == 1
    assert ds.latest_version == 1
    assert ds.count_rows() == 100
    assert ds.schema == sample(range(1)).schema
    assert ds.data_storage_version == "2.0"
    tables_equal(ds.to_table(), sample(range(100)))
    reopened = lib.dataset(uri)
    assert reopened.version == 1
    tables_equal(reopened.to_table(), sample(range(100)))


def test_uri_is_reported_as_given(lib, uri):
    assert _write(lib, sample(range(3)), uri).uri == uri
    assert lib.dataset(uri).uri == uri


def test_pathlib_uri_is_accepted(lib, tmp_path):
    ds = _write(lib, sample(range(3)), pathlib.Path(tmp_path) / "p.lance")
    assert ds.count_rows() == 3
    assert lib.dataset(pathlib.Path(tmp_path) / "p.lance").count_rows() == 3


def test_create_on_existing_dataset_raises_and_leaves_it_unchanged(lib, uri, errors):
    _write(lib, sample(range(10)), uri)
    with pytest.raises(errors.already_exists):
        _write(lib, sample(range(100, 105)), uri)
    with pytest.raises(errors.already_exists):
        _write(lib, sample(range(100, 105)), uri, mode="create")
    ds = lib.dataset(uri)
    assert ds.version == 1
    assert _ids(ds.to_table()) == list(range(10))


@pytest.mark.lancelet_only
def test_create_on_existing_dataset_raises_file_exists_error(lib, uri):
    _write(lib, sample(range(10)), uri)
    with pytest.raises(lib.LanceError) as info:
        _write(lib, sample(range(10)), uri)
    assert isinstance(info.value, FileExistsError)


def test_append_adds_rows_in_a_new_version(lib, uri):
    _write(lib, sample(range(10)), uri)
    ds = _write(lib, sample(range(10, 15)), uri, mode="append")
    assert ds.version == 2
    assert _ids(ds.to_table()) == list(range(15))
    assert _ids(lib.dataset(uri).to_table()) == list(range(15))


def test_append_creates_a_missing_dataset(lib, uri):
    ds = _write(lib, sample(range(7)), uri, mode="append")
    assert ds.version == 1
    assert _ids(lib.dataset(uri).to_table()) == list(range(7))


def test_overwrite_replaces_rows_and_keeps_history(lib, uri):
    _write(lib, sample(range(10)), uri)
    ds = _write(lib, sample(range(100, 103)), uri, mode="overwrite")
    assert ds.version == 2
    assert _ids(lib.dataset(uri).to_table()) == [100, 101, 102]
    assert _ids(lib.dataset(uri, version=1).to_table()) == list(range(10))


def test_overwrite_may_change_the_schema(lib, uri):
    _write(lib, sample(range(10)), uri)
    new = pa.table({"other": pa.array([1.5, 2.5], pa.float64())})
    ds = _write(lib, new, uri, mode="overwrite")
    assert ds.schema == new.schema
    assert lib.dataset(uri).to_table().equals(new)
    assert lib.dataset(uri, version=1).schema == sample(range(1)).schema
    # and appends now follow the new schema
    _write(lib, pa.table({"other": pa.array([3.5], pa.float64())}), uri, mode="append")
    assert lib.dataset(uri).to_table().column("other").to_pylist() == [1.5, 2.5, 3.5]


def test_overwrite_creates_a_missing_dataset(lib, uri):
    ds = _write(lib, sample(range(4)), uri, mode="overwrite")
    assert ds.version == 1
    assert lib.dataset(uri).count_rows() == 4


def test_unknown_mode_raises_value_error(lib, uri):
    with pytest.raises(ValueError):
        _write(lib, sample(range(1)), uri, mode="upsert")


def test_commit_message_and_storage_options_none_are_accepted(lib, uri):
    ds = _write(lib, sample(range(3)), uri, commit_message="first", storage_options=None)
    assert ds.count_rows() == 3


# --------------------------------------------------------------------------------------
# Inputs
# --------------------------------------------------------------------------------------


def _gen(batches):
    yield from batches


class _CStreamOnly:
    """An object that is nothing but ``__arrow_c_stream__`` (like a polars or duckdb result)."""

    def __init__(self, table: pa.Table):
        self._table = table

    def __arrow_c_stream__(self, requested_schema=None):
        return self._table.__arrow_c_stream__(requested_schema)


INPUT_KINDS = {
    "table": lambda t: (t, {}),
    "record_batch": lambda t: (t.combine_chunks().to_batches()[0], {}),
    "list_of_batches_with_schema": lambda t: (t.to_batches(max_chunksize=7), {"schema": t.schema}),
    "record_batch_reader": lambda t: (pa.RecordBatchReader.from_batches(t.schema, t.to_batches(max_chunksize=7)), {}),
    "generator_with_schema": lambda t: (_gen(t.to_batches(max_chunksize=7)), {"schema": t.schema}),
}


@pytest.mark.parametrize("kind", list(INPUT_KINDS))
def test_every_input_kind_writes_the_same_rows(lib, uri, kind, tables_equal):
    table = sample(range(30))
    data, kwargs = INPUT_KINDS[kind](table)
    ds = _write(lib, data, uri, **kwargs)
    tables_equal(lib.dataset(uri).to_table(), table)
    assert ds.count_rows() == 30


@pytest.mark.parametrize("kind", list(INPUT_KINDS))
def test_every_input_kind_appends(lib, uri, kind):
    _write(lib, sample(range(5)), uri)
    data, kwargs = INPUT_KINDS[kind](sample(range(5, 35)))
    _write(lib, data, uri, mode="append", **kwargs)
    assert _ids(lib.dataset(uri).to_table()) == list(range(35))


def test_pandas_dataframe_is_written_like_pyarrow_converts_it(lib, uri, tables_equal):
    df = pd.DataFrame({"a": [1, 2, 3], "s": ["x", None, "z"], "f": [1.0, None, 2.5]})
    _write(lib, df, uri)
    tables_equal(lib.dataset(uri).to_table(), pa.Table.from_pandas(df))


def test_pandas_dataframe_with_a_non_default_index_keeps_it_as_a_column(lib, uri, tables_equal):
    df = pd.DataFrame({"a": [1, 2]}, index=[5, 6])
    _write(lib, df, uri)
    tables_equal(lib.dataset(uri).to_table(), pa.Table.from_pandas(df))


@pytest.mark.lancelet_only
def test_generator_without_schema_takes_the_schema_of_its_first_batch(lib, uri, tables_equal):
    # pylance raises ValueError here; lancelet peeks at the first batch instead.
    _write(lib, _gen(sample(range(3)).to_batches()), uri)
    tables_equal(lib.dataset(uri).to_table(), sample(range(3)))


@pytest.mark.lancelet_only
def test_empty_generator_without_schema_raises_value_error(lib, uri):
    with pytest.raises(ValueError):
        _write(lib, _gen([]), uri)


def test_unsupported_input_raises_type_error(lib, uri):
    with pytest.raises((TypeError, ValueError)):
        _write(lib, 42, uri)


@pytest.mark.lancelet_only
def test_any_arrow_c_stream_object_is_accepted(lib, uri, tables_equal):
    # pylance 14 refuses these with TypeError("Unknown data type").
    _write(lib, _CStreamOnly(sample(range(12))), uri)
    tables_equal(lib.dataset(uri).to_table(), sample(range(12)))


@pytest.mark.lancelet_only
def test_list_of_batches_needs_no_schema(lib, uri, tables_equal):
    # pylance 14 requires schema= for a list of batches.
    _write(lib, sample(range(12)).to_batches(max_chunksize=5), uri)
    tables_equal(lib.dataset(uri).to_table(), sample(range(12)))


def test_data_storage_version_2_0_is_accepted_on_every_mode(lib, uri):
    lib.write_dataset(sample(range(3)), uri, data_storage_version="2.0")
    lib.write_dataset(sample(range(3, 6)), uri, mode="append", data_storage_version="2.0")
    ds = lib.write_dataset(sample(range(6, 9)), uri, mode="overwrite", data_storage_version="2.0")
    assert ds.data_storage_version == "2.0"


@pytest.mark.lancelet_only
def test_default_data_storage_version_is_2_2(lib, uri):
    assert lib.write_dataset(sample(range(3)), uri).data_storage_version == "2.2"


@pytest.mark.lancelet_only
@pytest.mark.parametrize("version", ["legacy", "0.1", "2.3"])
def test_other_storage_versions_are_unsupported(lib, uri, version, errors):
    with pytest.raises(errors.unsupported):
        lib.write_dataset(sample(range(3)), uri, data_storage_version=version)
    with pytest.raises(errors.lance_error):
        lib.dataset(uri)  # nothing was committed


def test_unknown_storage_version_raises(lib, uri):
    with pytest.raises((ValueError, NotImplementedError)):
        lib.write_dataset(sample(range(3)), uri, data_storage_version="9.9")


# --------------------------------------------------------------------------------------
# Schema mismatches
# --------------------------------------------------------------------------------------

def _strict_table(n: int = 5) -> pa.Table:
    """``sample`` with ``id`` declared non-nullable (pylance lets appends omit nullable fields)."""
    t = sample(range(n))
    return t.cast(pa.schema([t.schema.field("id").with_nullable(False)] + list(t.schema)[1:]))


_VEC = pa.array([[1.0, 2.0]], pa.list_(pa.float32(), 2))

MISMATCHES = {
    # label: (table to append, a field name the message must contain)
    "extra_field": (pa.table({"id": pa.array([1], pa.int64()), "name": ["a"], "score": [1.0], "vec": _VEC,
                              "extra": [1]}), "extra"),
    "missing_non_nullable_field": (pa.table({"name": ["a"], "score": [1.0], "vec": _VEC}), "id"),
    "different_type": (pa.table({"id": pa.array([1], pa.int32()), "name": ["a"], "score": [1.0], "vec": _VEC}), "id"),
    "renamed_field": (pa.table({"id": pa.array([1], pa.int64()), "title": ["a"], "score": [1.0], "vec": _VEC}),
                      "title"),
    "different_list_size": (pa.table({"id": pa.array([1], pa.int64()), "name": ["a"], "score": [1.0],
                                      "vec": pa.array([[1.0, 2.0, 3.0]], pa.list_(pa.float32(), 3))}), "vec"),
}


@pytest.mark.parametrize("case", list(MISMATCHES))
def test_append_with_a_different_schema_raises_naming_the_field(lib, uri, case, errors):
    _write(lib, _strict_table(), uri)
    data, field = MISMATCHES[case]
    with pytest.raises(errors.schema_mismatch) as info:
        _write(lib, data, uri, mode="append")
    assert field in str(info.value)
    ds = lib.dataset(uri)
    assert ds.version == 1
    assert ds.count_rows() == 5


def test_append_with_columns_in_another_order_is_reordered(lib, uri):
    _write(lib, sample(range(5)), uri)
    _write(lib, sample(range(5, 8)).select(["vec", "score", "name", "id"]), uri, mode="append")
    ds = lib.dataset(uri)
    assert ds.schema == sample(range(1)).schema
    assert _ids(ds.to_table()) == list(range(8))
    assert ds.to_table().column("vec").to_pylist()[5:] == [[5.0, -5.0], [6.0, -6.0], [7.0, -7.0]]


def test_append_without_a_nullable_column_reads_it_as_null(lib, uri):
    # pylance writes such a fragment with data files covering only the given fields.
    _write(lib, sample(range(3)), uri)
    _write(lib, sample(range(3, 5)).select(["id", "name"]), uri, mode="append")
    got = lib.dataset(uri).to_table()
    assert got.schema == sample(range(1)).schema
    assert got.column("score").to_pylist() == [0.0, 0.5, 1.0, None, None]
    assert got.column("vec").to_pylist()[3:] == [None, None]
    assert lib.dataset(uri).to_table(columns=["vec"], filter="id > 2").column("vec").to_pylist() == [None, None]


@pytest.mark.lancelet_only
def test_schema_mismatch_is_a_value_error(lib, uri):
    _write(lib, _strict_table(), uri)
    with pytest.raises(ValueError):
        _write(lib, MISMATCHES["extra_field"][0], uri, mode="append")


# --------------------------------------------------------------------------------------
# Fragments and sizes
# --------------------------------------------------------------------------------------


def test_max_rows_per_file_splits_into_fragments(lib, three_fragments):
    ds = lib.dataset(three_fragments)
    frags = ds.get_fragments()
    assert [f.fragment_id for f in frags] == [0, 1, 2]
    assert [f.count_rows() for f in frags] == [10, 10, 5]
    assert [f.physical_rows for f in frags] == [10, 10, 5]
    assert _ids(ds.to_table()) == list(range(25))


def test_appended_fragments_get_new_ids(lib, three_fragments):
    _write(lib, sample(range(25, 37)), three_fragments, mode="append", max_rows_per_file=5)
    frags = lib.dataset(three_fragments).get_fragments()
    assert [f.fragment_id for f in frags] == [0, 1, 2, 3, 4, 5]
    assert [f.count_rows() for f in frags] == [10, 10, 5, 5, 5, 2]


def test_max_rows_per_group_does_not_change_the_rows(lib, uri, tables_equal):
    _write(lib, sample(range(50)), uri, max_rows_per_group=7)
    tables_equal(lib.dataset(uri).to_table(), sample(range(50)))


def test_max_bytes_per_file_is_accepted(lib, uri, tables_equal):
    _write(lib, sample(range(50)), uri, max_bytes_per_file=1 << 20)
    tables_equal(lib.dataset(uri).to_table(), sample(range(50)))


def test_empty_table_writes_a_version_without_fragments(lib, uri):
    ds = _write(lib, sample(range(0)), uri)
    assert ds.version == 1
    assert ds.count_rows() == 0
    assert ds.get_fragments() == []
    assert ds.schema == sample(range(0)).schema
    assert lib.dataset(uri).to_table().num_rows == 0


def test_appending_an_empty_table_keeps_the_rows_and_commits_a_version(lib, uri):
    _write(lib, sample(range(5)), uri)
    ds = _write(lib, sample(range(0)), uri, mode="append")
    assert ds.version == 2
    assert ds.count_rows() == 5
    assert len(ds.get_fragments()) == 1


def test_data_files_and_fragment_metadata(lib, three_fragments):
    frag = lib.dataset(three_fragments).get_fragment(1)
    assert frag.fragment_id == 1
    files = frag.data_files()
    assert len(files) == 1
    assert files[0].path.endswith(".lance")
    assert frag.deletion_file() is None
    assert frag.metadata.id == 1
    assert frag.metadata.physical_rows == 10


def test_get_fragment_of_a_missing_id_is_none(lib, three_fragments):
    assert lib.dataset(three_fragments).get_fragment(99) is None


def test_fragment_reads(lib, three_fragments, tables_equal):
    ds = lib.dataset(three_fragments)
    frag = ds.get_fragment(1)
    tables_equal(frag.to_table(), sample(range(10, 20)))
    assert frag.count_rows("id % 2 = 0") == 5
    assert _ids(frag.to_table(filter="id >= 15")) == [15, 16, 17, 18, 19]
    assert frag.to_table(columns=["name"]).column_names == ["name"]
    assert _ids(frag.scanner(columns=["id"], filter="id < 13").to_table()) == [10, 11, 12]
    assert _ids(frag.take([0, 4, 9])) == [10, 14, 19]
    assert _ids(frag.to_table(limit=3, offset=2)) == [12, 13, 14]


def test_scanner_restricted_to_fragments_reads_them_in_the_given_order(lib, three_fragments):
    ds = lib.dataset(three_fragments)
    frags = ds.get_fragments()
    got = ds.scanner(fragments=[frags[2], frags[0]], columns=["id"]).to_table()
    assert _ids(got) == list(range(20, 25)) + list(range(10))


# --------------------------------------------------------------------------------------
# Types
# --------------------------------------------------------------------------------------


def test_every_catalogue_type_round_trips(lib, tmp_path, type_case, tables_equal):
    table = type_case.table()
    uri = str(tmp_path / "types.lance")
    _write(lib, table, uri, max_rows_per_file=60)
    ds = lib.dataset(uri)
    assert len(ds.get_fragments()) == 3
    tables_equal(ds.to_table(), table)
    idx = [149, 0, 61, 60, 59, 61]
    tables_equal(ds.take(idx), table.take(idx))


def test_nested_types_round_trip_across_appends(lib, uri, mixed_table, tables_equal):
    table = mixed_table()
    for i in range(3):
        _write(lib, table, uri, mode="append" if i else "create")
    tables_equal(lib.dataset(uri).to_table(), pa.concat_tables([table] * 3))
    tables_equal(lib.dataset(uri).to_table(columns=["st", "l"]), pa.concat_tables([table.select(["st", "l"])] * 3))


# --------------------------------------------------------------------------------------
# Versions, time travel, tags, restore
# --------------------------------------------------------------------------------------


@pytest.fixture
def history(lib, uri):
    """Versions 1..5: create 0..9, append 10..19, append 20..24, overwrite 100..102, append 103..104."""
    _write(lib, sample(range(10)), uri)
    _write(lib, sample(range(10, 20)), uri, mode="append")
    _write(lib, sample(range(20, 25)), uri, mode="append")
    _write(lib, sample(range(100, 103)), uri, mode="overwrite")
    _write(lib, sample(range(103, 105)), uri, mode="append")
    return uri


HISTORY = {
    1: list(range(10)),
    2: list(range(20)),
    3: list(range(25)),
    4: [100, 101, 102],
    5: [100, 101, 102, 103, 104],
}


@pytest.mark.parametrize("version", list(HISTORY))
def test_every_version_can_be_opened(lib, history, version):
    ds = lib.dataset(history, version=version)
    assert ds.version == version
    assert ds.latest_version == 5
    assert _ids(ds.to_table()) == HISTORY[version]
    assert ds.count_rows() == len(HISTORY[version])


def test_versions_lists_every_version_with_timestamp_and_metadata(lib, history):
    versions = lib.dataset(history).versions()
    assert [v["version"] for v in versions] == [1, 2, 3, 4, 5]
    for v in versions:
        assert {"version", "timestamp", "metadata"} <= set(v)
        assert isinstance(v["timestamp"], dt.datetime)
        assert isinstance(v["metadata"], dict)
    stamps = [v["timestamp"] for v in versions]
    assert stamps == sorted(stamps)


def test_versions_of_an_old_checkout_still_lists_all(lib, history):
    assert len(lib.dataset(history, version=2).versions()) == 5


def test_checkout_version_returns_that_version(lib, history):
    ds = lib.dataset(history)
    old = ds.checkout_version(2)
    assert old.version == 2
    assert _ids(old.to_table()) == HISTORY[2]
    assert ds.version == 5


def test_checkout_latest_moves_an_old_checkout_to_the_newest_version(lib, history):
    ds = lib.dataset(history, version=1)
    ds.checkout_latest()
    assert ds.version == 5
    assert _ids(ds.to_table()) == HISTORY[5]


def test_latest_version_sees_commits_made_after_opening(lib, uri):
    _write(lib, sample(range(3)), uri)
    ds = lib.dataset(uri)
    _write(lib, sample(range(3, 6)), uri, mode="append")
    assert ds.version == 1
    assert ds.latest_version == 2
    assert ds.count_rows() == 3


def test_opening_a_missing_version_raises_value_error(lib, history):
    with pytest.raises(ValueError):
        lib.dataset(history, version=99)


def test_opening_a_missing_dataset_raises(lib, tmp_path, errors):
    with pytest.raises(errors.not_found):
        lib.dataset(str(tmp_path / "nope.lance"))


@pytest.mark.lancelet_only
def test_opening_a_missing_dataset_raises_file_not_found(lib, tmp_path):
    with pytest.raises(FileNotFoundError):
        lib.dataset(str(tmp_path / "nope.lance"))


def test_restore_commits_the_checked_out_version_as_the_newest(lib, history):
    lib.dataset(history, version=2).restore()
    ds = lib.dataset(history)
    assert ds.version == 6
    assert _ids(ds.to_table()) == HISTORY[2]
    assert [v["version"] for v in ds.versions()] == [1, 2, 3, 4, 5, 6]
    # history is untouched, and appends continue from the restored state
    assert _ids(lib.dataset(history, version=5).to_table()) == HISTORY[5]
    _write(lib, sample(range(500, 501)), history, mode="append")
    assert _ids(lib.dataset(history).to_table()) == HISTORY[2] + [500]


def test_restore_of_the_latest_version_commits_an_identical_version(lib, history):
    lib.dataset(history).restore()
    ds = lib.dataset(history)
    assert ds.version == 6
    assert _ids(ds.to_table()) == HISTORY[5]


def test_tags_create_list_update_delete(lib, history):
    ds = lib.dataset(history)
    assert ds.tags.list() == {}
    ds.tags.create("first", 1)
    ds.tags.create("before-overwrite", 3)
    tags = lib.dataset(history).tags.list()
    assert set(tags) == {"first", "before-overwrite"}
    assert tags["first"]["version"] == 1
    assert tags["before-overwrite"]["version"] == 3
    assert all(isinstance(t["manifest_size"], int) and t["manifest_size"] > 0 for t in tags.values())
    ds.tags.update("first", 2)
    assert lib.dataset(history).tags.list()["first"]["version"] == 2
    ds.tags.delete("first")
    assert set(lib.dataset(history).tags.list()) == {"before-overwrite"}


def test_dataset_opens_by_tag(lib, history):
    lib.dataset(history).tags.create("v3", 3)
    ds = lib.dataset(history, version="v3")
    assert ds.version == 3
    assert _ids(ds.to_table()) == HISTORY[3]
    assert lib.dataset(history).checkout_version("v3").version == 3


def test_tags_survive_later_commits(lib, history):
    lib.dataset(history).tags.create("v2", 2)
    _write(lib, sample(range(900, 901)), history, mode="append")
    lib.dataset(history).delete("id = 900")
    assert lib.dataset(history).tags.list()["v2"]["version"] == 2
    assert _ids(lib.dataset(history, version="v2").to_table()) == HISTORY[2]


def test_tag_errors_raise_value_error(lib, history):
    ds = lib.dataset(history)
    ds.tags.create("t", 1)
    with pytest.raises(ValueError):
        ds.tags.create("t", 2)  # exists
    with pytest.raises(ValueError):
        ds.tags.create("u", 99)  # no such version
    with pytest.raises(ValueError):
        ds.tags.delete("nope")
    with pytest.raises(ValueError):
        lib.dataset(history, version="nope")
    assert lib.dataset(history).tags.list()["t"]["version"] == 1


# --------------------------------------------------------------------------------------
# Scans: head, to_pandas, limit/offset/batch_size, projections, row ids
# --------------------------------------------------------------------------------------


def test_head_returns_the_first_rows_across_fragments(lib, three_fragments):
    ds = lib.dataset(three_fragments)
    assert _ids(ds.head(12)) == list(range(12))
    assert ds.head(0).num_rows == 0
    assert ds.head(0).schema == ds.schema
    assert _ids(ds.head(1000)) == list(range(25))


def test_to_pandas_matches_to_table(lib, three_fragments):
    ds = lib.dataset(three_fragments)
    pd.testing.assert_frame_equal(ds.to_pandas(), ds.to_table().to_pandas())


@pytest.mark.lancelet_only
def test_dataset_is_an_arrow_c_stream(lib, three_fragments, tables_equal):
    # pylance 14's LanceDataset has no __arrow_c_stream__.
    tables_equal(pa.table(lib.dataset(three_fragments)), sample(range(25)))


LIMIT_OFFSET = [
    (None, None),
    (5, None),
    (None, 5),
    (5, 5),
    (10, 8),  # crosses a fragment boundary
    (0, 0),
    (100, 0),
    (3, 24),
    (3, 25),
    (3, 100),
    (None, 22),
]


@pytest.mark.parametrize("limit,offset", LIMIT_OFFSET)
def test_limit_and_offset_slice_the_dataset_in_order(lib, three_fragments, limit, offset):
    ds = lib.dataset(three_fragments)
    start = offset or 0
    expected = list(range(25))[start: None if limit is None else start + limit]
    assert _ids(ds.to_table(limit=limit, offset=offset)) == expected
    assert _ids(ds.scanner(limit=limit, offset=offset).to_table()) == expected
    got = [r for b in ds.to_batches(limit=limit, offset=offset) for r in b.column("id").to_pylist()]
    assert got == expected


def test_limit_and_offset_apply_after_the_filter(lib, three_fragments):
    ds = lib.dataset(three_fragments)
    assert _ids(ds.to_table(filter="id % 3 = 0", limit=3, offset=2)) == [6, 9, 12]


@pytest.mark.parametrize("batch_size", [1, 3, 7, 10, 64])
@pytest.mark.parametrize("filter", [None, "id % 3 = 0"])
def test_batches_never_exceed_batch_size(lib, three_fragments, batch_size, filter):
    ds = lib.dataset(three_fragments)
    batches = list(ds.to_batches(batch_size=batch_size, filter=filter))
    assert all(0 < b.num_rows <= batch_size for b in batches)
    expected = [i for i in range(25) if filter is None or i % 3 == 0]
    assert [r for b in batches for r in b.column("id").to_pylist()] == expected
    assert all(b.schema == ds.schema for b in batches)
    sc_batches = list(ds.scanner(batch_size=batch_size, filter=filter).to_batches())
    assert all(0 < b.num_rows <= batch_size for b in sc_batches)


def test_full_batches_within_a_fragment(lib, three_fragments):
    # batch_size 4 over fragments of 10, 10, 5 rows: only a fragment's last batch is short
    sizes = [b.num_rows for b in lib.dataset(three_fragments).to_batches(batch_size=4)]
    assert sum(sizes) == 25
    assert sizes[:2] == [4, 4]


def test_scanner_outputs_agree(lib, three_fragments, tables_equal):
    ds = lib.dataset(three_fragments)
    sc = ds.scanner(columns=["id", "name"], filter="id > 3")
    table = sc.to_table()
    assert sc.projected_schema == table.schema
    assert table.column_names == ["id", "name"]
    tables_equal(pa.Table.from_batches(list(sc.to_batches()), schema=table.schema), table)
    tables_equal(sc.to_reader().read_all(), table)
    assert sc.count_rows() == 21


def test_columns_are_returned_in_the_requested_order(lib, three_fragments):
    ds = lib.dataset(three_fragments)
    assert ds.to_table(columns=["vec", "id"]).column_names == ["vec", "id"]


def test_unknown_column_raises_value_error_naming_it(lib, three_fragments):
    ds = lib.dataset(three_fragments)
    with pytest.raises(ValueError, match="nope"):
        ds.to_table(columns=["id", "nope"])


def test_column_dict_evaluates_sql_expressions(lib, three_fragments):
    ds = lib.dataset(three_fragments)
    got = ds.to_table(columns={"twice": "id * 2", "n": "name", "neg": "-score", "big": "id > 20"}, limit=3, offset=20)
    assert got.column_names == ["twice", "n", "neg", "big"]
    assert got.column("twice").to_pylist() == [40, 42, 44]
    assert got.column("n").to_pylist() == [None, "name-21", "name-22"]
    assert got.column("neg").to_pylist() == [-10.0, -10.5, -11.0]
    assert got.column("big").to_pylist() == [False, True, True]
    assert ds.scanner(columns={"twice": "id * 2"}).projected_schema.names == ["twice"]


def test_row_ids_and_addresses_are_fragment_and_offset(lib, three_fragments):
    ds = lib.dataset(three_fragments)
    t = ds.to_table(columns=["id"], with_row_id=True, with_row_address=True)
    assert t.column_names == ["id", "_rowid", "_rowaddr"]
    assert t.schema.field("_rowid").type == pa.uint64()
    assert t.schema.field("_rowaddr").type == pa.uint64()
    expected = [(i // 10 << 32) | (i % 10) for i in range(25)]
    assert t.column("_rowaddr").to_pylist() == expected
    assert t.column("_rowid").to_pylist() == expected


def test_row_addresses_skip_deleted_rows_and_follow_filters(lib, three_fragments):
    ds = lib.dataset(three_fragments)
    ds.delete("id = 11 OR id = 0")
    ds = lib.dataset(three_fragments)
    t = ds.to_table(columns=["id"], filter="id < 14", with_row_address=True)
    assert _ids(t) == [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 13]
    assert t.column("_rowaddr").to_pylist() == [1, 2, 3, 4, 5, 6, 7, 8, 9, 1 << 32, (1 << 32) | 2, (1 << 32) | 3]
    only = ds.to_table(columns=["id"], filter="_rowaddr = 4294967298")
    assert _ids(only) == [12]


def test_fragment_scans_have_row_addresses_too(lib, three_fragments):
    frag = lib.dataset(three_fragments).get_fragment(2)
    t = frag.to_table(columns=["id"], with_row_address=True)
    assert t.column("_rowaddr").to_pylist() == [(2 << 32) | k for k in range(5)]


def test_count_rows_with_filters(lib, three_fragments):
    ds = lib.dataset(three_fragments)
    assert ds.count_rows() == 25
    assert ds.count_rows("id >= 20") == 5
    assert ds.count_rows(filter="id + 1 > 20") == 5
    assert ds.count_rows("name IS NULL") == 5
    assert ds.count_rows("id < 0") == 0


# --------------------------------------------------------------------------------------
# take
# --------------------------------------------------------------------------------------


def test_take_rows_across_fragments(lib, three_fragments, tables_equal):
    ds = lib.dataset(three_fragments)
    idx = [0, 9, 10, 19, 20, 24]
    tables_equal(ds.take(idx), sample(range(25)).take(idx))


def test_take_keeps_duplicates_and_order(lib, three_fragments):
    ds = lib.dataset(three_fragments)
    assert _ids(ds.take([24, 3, 3, 15, 0, 24])) == [24, 3, 3, 15, 0, 24]


def test_take_with_columns(lib, three_fragments):
    got = lib.dataset(three_fragments).take([5, 1], columns=["name", "id"])
    assert got.column_names == ["name", "id"]
    assert got.to_pydict() == {"name": [None, "name-1"], "id": [5, 1]}


def test_take_accepts_an_arrow_array_and_an_empty_list(lib, three_fragments):
    ds = lib.dataset(three_fragments)
    assert _ids(ds.take(pa.array([2, 1], pa.int64()))) == [2, 1]
    empty = ds.take([])
    assert empty.num_rows == 0
    assert empty.schema == ds.schema


def test_take_indices_skip_deleted_rows(lib, three_fragments):
    ds = lib.dataset(three_fragments)
    ds.delete("id < 3 OR id = 12")
    ds = lib.dataset(three_fragments)
    assert _ids(ds.take([0, 7, 8, 9])) == [3, 10, 11, 13]


@pytest.mark.parametrize("index", [25, 1000])
def test_take_out_of_range_raises(lib, three_fragments, index, errors):
    with pytest.raises(errors.take_out_of_range):
        lib.dataset(three_fragments).take([0, index])


def test_take_negative_index_raises(lib, three_fragments):
    with pytest.raises((OverflowError, IndexError, ValueError)):
        lib.dataset(three_fragments).take([-1])


def test_take_at_an_old_version(lib, history):
    assert _ids(lib.dataset(history, version=3).take([24, 0])) == [24, 0]


# --------------------------------------------------------------------------------------
# delete
# --------------------------------------------------------------------------------------


def test_delete_removes_matching_rows_in_a_new_version(lib, three_fragments):
    ds = lib.dataset(three_fragments)
    ds.delete("id % 4 = 1")
    after = lib.dataset(three_fragments)
    assert after.version == 2
    assert _ids(after.to_table()) == [i for i in range(25) if i % 4 != 1]
    assert after.count_rows() == 19
    assert _ids(lib.dataset(three_fragments, version=1).to_table()) == list(range(25))
    assert [f.physical_rows for f in after.get_fragments()] == [10, 10, 5]
    assert [f.count_rows() for f in after.get_fragments()] == [7, 8, 4]


def test_the_deleting_dataset_object_sees_its_delete(lib, three_fragments):
    ds = lib.dataset(three_fragments)
    ds.delete("id < 5")
    assert ds.version == 2
    assert ds.count_rows() == 20


def test_deletes_accumulate(lib, three_fragments):
    ds = lib.dataset(three_fragments)
    ds.delete("id < 3")
    ds = lib.dataset(three_fragments)
    ds.delete("id > 21")
    ds = lib.dataset(three_fragments)
    ds.delete("id = 12")
    ds = lib.dataset(three_fragments)
    assert ds.version == 4
    assert _ids(ds.to_table()) == [i for i in range(3, 22) if i != 12]


def test_small_delete_writes_an_arrow_deletion_file(lib, uri):
    _write(lib, sample(range(20_000)), uri)
    lib.dataset(uri).delete("id < 3")
    frag = lib.dataset(uri).get_fragments()[0]
    assert frag.deletion_file().endswith(".arrow")
    assert frag.count_rows() == 19_997


def test_large_delete_writes_a_bitmap_deletion_file(lib, uri):
    _write(lib, sample(range(20_000)), uri)
    lib.dataset(uri).delete("id % 4 <> 0")
    ds = lib.dataset(uri)
    frag = ds.get_fragments()[0]
    assert frag.deletion_file().endswith(".bin")
    assert frag.count_rows() == 5_000
    assert _ids(ds.to_table())[:3] == [0, 4, 8]
    assert ds.count_rows("id > 19990") == 2


def test_deleting_every_row_of_a_fragment_removes_the_fragment(lib, three_fragments):
    lib.dataset(three_fragments).delete("id >= 10 AND id < 20")
    ds = lib.dataset(three_fragments)
    assert [f.fragment_id for f in ds.get_fragments()] == [0, 2]
    assert _ids(ds.to_table()) == list(range(10)) + list(range(20, 25))
    assert ds.get_fragment(1) is None


def test_deleting_everything_leaves_an_empty_dataset(lib, three_fragments):
    lib.dataset(three_fragments).delete("true")
    ds = lib.dataset(three_fragments)
    assert ds.count_rows() == 0
    assert ds.get_fragments() == []
    assert ds.to_table().schema == ds.schema
    _write(lib, sample(range(50, 52)), three_fragments, mode="append")
    assert _ids(lib.dataset(three_fragments).to_table()) == [50, 51]


def test_delete_matching_nothing_keeps_the_rows(lib, three_fragments):
    lib.dataset(three_fragments).delete("id < 0")
    ds = lib.dataset(three_fragments)
    assert ds.count_rows() == 25
    assert all(f.deletion_file() is None for f in ds.get_fragments())


def test_delete_with_an_unknown_column_raises_naming_it(lib, three_fragments, errors):
    with pytest.raises(errors.bad_predicate, match="nope"):
        lib.dataset(three_fragments).delete("nope = 1")
    assert lib.dataset(three_fragments).version == 1


def test_delete_through_an_old_checkout_commits_on_top_of_concurrent_appends(lib, uri):
    # The delete applies to the rows of the version it was made from; the appended
    # fragment is untouched, and the commit is rebased onto the latest version.
    _write(lib, sample(range(10)), uri)
    stale = lib.dataset(uri)
    _write(lib, sample(range(10, 20)), uri, mode="append")
    stale.delete("id % 2 = 0")
    ds = lib.dataset(uri)
    assert ds.version == 3
    assert _ids(ds.to_table()) == [1, 3, 5, 7, 9] + list(range(10, 20))


# --------------------------------------------------------------------------------------
# progress
# --------------------------------------------------------------------------------------


def test_progress_is_reported(lib, uri, oracle_self):
    calls = []
    if oracle_self:
        from lance.progress import FragmentWriteProgress

        class Recorder(FragmentWriteProgress):
            def begin(self, fragment, **kwargs):
                calls.append(("begin", fragment))

            def complete(self, fragment, **kwargs):
                calls.append(("complete", fragment))

        progress = Recorder()
    else:
        def progress(*args, **kwargs):
            calls.append((args, kwargs))

    _write(lib, sample(range(25)), uri, max_rows_per_file=10, progress=progress)
    assert calls
    assert lib.dataset(uri).count_rows() == 25


@pytest.mark.lancelet_only
def test_progress_true_shows_a_bar_and_writes(lib, uri, capsys):
    _write(lib, sample(range(25)), uri, progress=True)
    assert lib.dataset(uri).count_rows() == 25
