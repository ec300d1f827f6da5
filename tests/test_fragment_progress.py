"""``FileSystemFragmentWriteProgress`` with ``LanceFragment.create``: the same program with
``lance`` and with ``lancelet``, including a write that dies midway (its ``.in_progress``
record stays, naming the fragment and the worker's metadata)."""

from __future__ import annotations

import json
import multiprocessing

import pyarrow as pa
import pytest

import lancelet
import lancelet.fragment
import lancelet.progress

lance = pytest.importorskip("lance")
pytest.importorskip("lance.progress")
pytest.importorskip("lance.fragment")

LIBS = {"lance": lance, "lancelet": lancelet}


@pytest.mark.parametrize("name", list(LIBS))
def test_a_finished_fragment_leaves_its_json_and_no_in_progress(name, tmp_path):
    lib = LIBS[name]
    progress = lib.progress.FileSystemFragmentWriteProgress(str(tmp_path / "progress"))
    frag = lib.fragment.LanceFragment.create(str(tmp_path / "d"), pa.table({"a": range(100)}), progress=progress)
    assert not (tmp_path / "progress" / "fragment_0.in_progress").exists()
    meta = json.loads((tmp_path / "progress" / "fragment_0.json").read_text())
    assert meta["id"] == 0 and len(meta["files"]) == 1
    assert lib.fragment.FragmentMetadata.from_json(json.dumps(meta)).files[0].path == frag.files[0].path


def _failing_write(name: str, progress_uri: str, dataset_uri: str) -> None:
    lib = LIBS[name]
    progress = lib.progress.FileSystemFragmentWriteProgress(progress_uri, metadata={"worker": "7"})
    batch = pa.record_batch([pa.array(range(100))], names=["a"])

    def data():
        yield batch
        raise RuntimeError("the source failed")

    reader = pa.RecordBatchReader.from_batches(batch.schema, data())
    try:
        lib.fragment.LanceFragment.create(dataset_uri, reader, fragment_id=1, progress=progress)
    except Exception:
        pass


@pytest.mark.parametrize("name", list(LIBS))
def test_a_failed_write_leaves_its_in_progress_record(name, tmp_path):
    p = multiprocessing.get_context("spawn").Process(
        target=_failing_write, args=(name, str(tmp_path / "progress"), str(tmp_path / "d"))
    )
    p.start()
    p.join(120)
    record = json.loads((tmp_path / "progress" / "fragment_1.in_progress").read_text())
    assert record == {"fragment_id": 1, "metadata": {"worker": "7"}}
    assert json.loads((tmp_path / "progress" / "fragment_1.json").read_text())["id"] == 1
