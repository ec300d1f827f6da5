"""Reading datasets written by pylance (file format 2.0): versions, time travel, deletions."""

from __future__ import annotations

import pyarrow as pa
import pytest
from _tables import sample

import lancelet

lance = pytest.importorskip("lance")

pytestmark = pytest.mark.interop


@pytest.fixture
def pylance_dataset(tmp_path):
    """Three appends, a small delete (Arrow deletion file) and a large one (bitmap)."""
    uri = str(tmp_path / "ds.lance")
    lance.write_dataset(sample(range(100)), uri, data_storage_version="2.0")
    lance.write_dataset(sample(range(100, 5100)), uri, mode="append")
    lance.write_dataset(sample(range(5100, 5150)), uri, mode="append")
    ds = lance.dataset(uri)
    ds.delete("id < 3")
    ds.delete("id % 3 = 1 AND id > 200")
    return uri


def test_latest_version_reads_like_pylance(pylance_dataset):
    ours = lancelet.dataset(pylance_dataset)
    theirs = lance.dataset(pylance_dataset)
    assert ours.version == theirs.version == 5
    assert ours.count_rows() == theirs.count_rows()
    assert ours.schema == theirs.schema
    assert ours.to_table().equals(theirs.to_table())


@pytest.mark.parametrize("version", [1, 2, 3, 4, 5])
def test_every_version_reads_like_pylance(pylance_dataset, version):
    ours = lancelet.dataset(pylance_dataset, version=version)
    theirs = lance.dataset(pylance_dataset, version=version)
    assert ours.count_rows() == theirs.count_rows()
    assert ours.to_table().equals(theirs.to_table())
    assert ours.to_table(columns=["name", "id"]).equals(theirs.to_table(columns=["name", "id"]))


def test_versions_list_matches_pylance(pylance_dataset):
    ours = lancelet.dataset(pylance_dataset)
    assert [v["version"] for v in ours.versions()] == [v["version"] for v in lance.dataset(pylance_dataset).versions()]
    assert ours.latest_version == 5
    assert ours.checkout_version(2).count_rows() == 5100


def test_missing_dataset_and_version_raise_typed_errors(tmp_path, pylance_dataset):
    with pytest.raises(lancelet.LanceNotFoundError):
        lancelet.dataset(str(tmp_path / "nope.lance"))
    # a missing version is "not found", and a ValueError as pylance raises
    with pytest.raises(lancelet.LanceNotFoundError) as info:
        lancelet.dataset(pylance_dataset, version=99)
    assert isinstance(info.value, ValueError)
    with pytest.raises(lancelet.InvalidArgumentError):
        lancelet.dataset(pylance_dataset).to_table(columns=["nope"])


def test_dataset_is_an_arrow_stream(pylance_dataset):
    assert pa.table(lancelet.dataset(pylance_dataset)).num_rows == lance.dataset(pylance_dataset).count_rows()
