"""Fragments written apart and committed later (``write_fragments`` + ``LanceDataset.commit``),
with pylance on the other side of each step, and the scanner's statistics."""

from __future__ import annotations

import json
import os

import numpy as np
import pyarrow as pa
import pytest

import lance
import lancelet
from lancelet import FragmentMetadata, LanceDataset, LanceOperation
from lancelet import errors as E
from _tables import id_strings

pytestmark = pytest.mark.lancelet_only


SCHEMA = pa.schema([("id", pa.int64()), ("s", pa.string())])


def test_write_fragments_commits_nothing_until_commit(tmp_path):
    uri = str(tmp_path / "a.lance")
    frags = lancelet.write_fragments(id_strings(range(0, 10)), uri, max_rows_per_file=4)
    assert [f.physical_rows for f in frags] == [4, 4, 2]
    assert not os.path.exists(os.path.join(uri, "_versions"))
    ds = LanceDataset.commit(uri, LanceOperation.Overwrite(SCHEMA, frags))
    assert ds.version == 1
    assert ds.to_table().equals(id_strings(range(0, 10)))


def test_fragments_from_many_writers_commit_as_one_append(tmp_path):
    uri = str(tmp_path / "a.lance")
    lancelet.write_dataset(id_strings(range(0, 5)), uri)
    parts = [lancelet.write_fragments(id_strings(range(lo, lo + 5)), uri) for lo in (5, 10, 15)]
    ds = LanceDataset.commit(uri, LanceOperation.Append([f for p in parts for f in p]), read_version=1)
    assert ds.version == 2
    assert sorted(f.fragment_id for f in ds.get_fragments()) == [0, 1, 2, 3]
    assert ds.to_table().sort_by("id").equals(id_strings(range(0, 20)))
    assert lance.dataset(uri).to_table().sort_by("id").equals(id_strings(range(0, 20)))


def test_metadata_json_round_trips_through_pylance(tmp_path):
    uri = str(tmp_path / "a.lance")
    lancelet.write_dataset(id_strings(range(0, 5)), uri)
    ours = lancelet.write_fragments(id_strings(range(5, 9)), uri)
    text = json.dumps(ours[0].to_json())
    theirs = lance.fragment.FragmentMetadata.from_json(text)
    assert theirs.physical_rows == 4
    assert FragmentMetadata.from_json(text) == ours[0]
    # pylance commits lancelet's fragments...
    pds = lance.LanceDataset.commit(uri, lance.LanceOperation.Append([theirs]), read_version=1)
    assert pds.count_rows() == 9
    # ...and lancelet commits pylance's (2.2 files, as the dataset's format).
    pf = lance.fragment.write_fragments(id_strings(range(9, 12)), uri, data_storage_version="2.2")
    back = [FragmentMetadata.from_json(json.dumps(f.to_json())) for f in pf]
    ds = LanceDataset.commit(uri, LanceOperation.Append(back), read_version=2)
    assert ds.to_table().sort_by("id").equals(id_strings(range(0, 12)))


def test_existing_fragment_metadata_has_pylance_fields(tmp_path):
    uri = str(tmp_path / "a.lance")
    ds = lancelet.write_dataset(id_strings(range(0, 10)), uri)
    ds.delete("id < 3")
    meta = lancelet.dataset(uri).get_fragments()[0].metadata
    assert meta.num_deletions == 3 and meta.num_rows == 7
    assert meta.deletion_file.num_deleted_rows == 3
    theirs = lance.dataset(uri).get_fragments()[0].metadata.to_json()
    assert meta.to_json() == theirs


def test_append_commit_without_dataset_is_not_found(tmp_path):
    uri = str(tmp_path / "a.lance")
    frags = lancelet.write_fragments(id_strings(range(0, 3)), uri)
    with pytest.raises(E.LanceNotFoundError):
        LanceDataset.commit(uri, LanceOperation.Append(frags))


def test_commit_refuses_hostile_fragment_metadata(tmp_path):
    uri = str(tmp_path / "a.lance")
    lancelet.write_dataset(id_strings(range(0, 3)), uri)
    good = lancelet.write_fragments(id_strings(range(3, 6)), uri)[0].to_json()
    cases = {
        "escaping path": dict(good, files=[dict(good["files"][0], path="../../etc/passwd")]),
        "unknown field id": dict(good, files=[dict(good["files"][0], fields=[0, 99], column_indices=[0, 1])]),
        "no files": dict(good, files=[]),
        "wrong type": dict(good, physical_rows="many"),
    }
    for name, bad in cases.items():
        with pytest.raises((E.CorruptFileError, E.SchemaMismatchError, ValueError)):
            LanceDataset.commit(uri, LanceOperation.Append([FragmentMetadata(bad)]))
        assert lancelet.dataset(uri).version == 1, name


def test_overwrite_commit_on_a_stale_version_conflicts_only_with_an_overwrite(tmp_path):
    # As in pylance 14 (tests/test_conflicts.py): an overwrite replaces a concurrent
    # append, but not a concurrent overwrite.
    uri = str(tmp_path / "a.lance")
    lancelet.write_dataset(id_strings(range(0, 3)), uri)
    frags = lancelet.write_fragments(id_strings(range(0, 2)), uri, mode="overwrite")
    lancelet.write_dataset(id_strings(range(3, 4)), uri, mode="append")  # version 2 lands meanwhile
    LanceDataset.commit(uri, LanceOperation.Overwrite(SCHEMA, frags), read_version=1)
    assert lancelet.dataset(uri).count_rows() == 2
    frags = lancelet.write_fragments(id_strings(range(0, 1)), uri, mode="overwrite")
    lancelet.write_dataset(id_strings(range(3, 4)), uri, mode="overwrite")  # version 4 lands meanwhile
    with pytest.raises(E.CommitConflictError):
        LanceDataset.commit(uri, LanceOperation.Overwrite(SCHEMA, frags), read_version=3)
    assert lancelet.dataset(uri).count_rows() == 1 and lancelet.dataset(uri).version == 4


def test_scan_stats_count_rows_and_bytes(tmp_path):
    uri = str(tmp_path / "a.lance")
    n = 200_000
    raw = np.random.default_rng(1).bytes(100 * n)  # incompressible: a constant would take no bytes
    t = pa.table({"id": pa.array(range(n), pa.int64()), "payload": [raw[i * 100:(i + 1) * 100] for i in range(n)]})
    ds = lancelet.write_dataset(t, uri)
    full = ds.scanner()
    assert full.scan_stats.bytes_read == 0
    full.to_table()
    seen = []
    narrow = ds.scanner(filter="id = 123", scan_stats_callback=seen.append)
    assert narrow.to_table().num_rows == 1
    # Page statistics skip the pages whose id range cannot hold 123.
    assert len(seen) == 1 and seen[0].rows_matched == 1 and 0 < seen[0].rows_scanned < n
    # The filter reads `id`; the payloads are read for the matching row only at 2.0, and for
    # its page at 2.1+ (pages are fetched whole there).
    assert seen[0].bytes_read < full.scan_stats.bytes_read
    assert full.scan_stats.rows_matched == n
