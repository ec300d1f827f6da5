"""``validate(deep=True)`` checks that index files cover the fragments their bitmaps claim.

Healthy datasets pass, written by lancelet or by pylance, with and without stable row ids,
with every index kind, through appends, deletes, updates, delta segments and compaction
(pylance remaps its indexes into new directories; lancelet rebuilds them). A bitmap that
claims a fragment the index files do not hold, committed through pylance's own
``CreateIndex`` operation, is reported on the index directory, naming the fragment.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

import lancelet
from lancelet.errors import CorruptFileError

lance = pytest.importorskip("lance")
from lance.dataset import Index  # noqa: E402

pytestmark = pytest.mark.lancelet_only

DIM = 16


def _table(lo: int, hi: int) -> pa.Table:
    rng = np.random.default_rng(lo)
    ids = list(range(lo, hi))
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "cat": pa.array([f"c{i % 5}" if i % 7 else None for i in ids]),
            "tags": pa.array([[f"t{k}" for k in range(i % 3)] if i % 11 else None for i in ids], pa.list_(pa.string())),
            "text": pa.array([f"hello world number {i}" if i % 13 else None for i in ids]),
            "vec": pa.FixedSizeListArray.from_arrays(pa.array(rng.random((hi - lo) * DIM, dtype=np.float32)), DIM),
            "vec2": pa.FixedSizeListArray.from_arrays(pa.array(rng.random((hi - lo) * DIM, dtype=np.float32)), DIM),
        }
    )


def _index_everything(mod, uri: str) -> None:
    for column, kind, name in [
        ("id", "BTREE", "id_btree"),
        ("cat", "BITMAP", "cat_bitmap"),
        ("tags", "LABEL_LIST", "tags_ll"),
        ("text", "NGRAM", "text_ngram"),
        ("id", "ZONEMAP", "id_zonemap"),
        ("cat", "BLOOMFILTER", "cat_bloom"),
        ("text", "INVERTED", "text_fts"),
    ]:
        mod.dataset(uri).create_scalar_index(column, kind, name=name)
    mod.dataset(uri).create_index("vec", "IVF_PQ", name="vec_pq", num_partitions=2, num_sub_vectors=4)
    mod.dataset(uri).create_index("vec2", "IVF_FLAT", name="vec2_flat", num_partitions=2, metric="cosine")


def _deep_ok(uri: str) -> None:
    report = lancelet.dataset(uri).validate(deep=True)
    assert report.ok, report


@pytest.mark.parametrize("stable", [False, True], ids=["addresses", "stable_row_ids"])
@pytest.mark.parametrize("writer", ["lancelet", "pylance"])
def test_every_index_kind_covers_its_fragments_through_the_lifecycle(tmp_path, writer, stable):
    mod = lancelet if writer == "lancelet" else lance
    uri = str(tmp_path / "ds.lance")
    mod.write_dataset(_table(0, 600), uri, max_rows_per_file=200, enable_stable_row_ids=stable)
    _index_everything(mod, uri)
    _deep_ok(uri)
    # New rows no index covers, deletions, an update (rows move to a new fragment, keeping
    # their ids with stable row ids).
    mod.write_dataset(_table(600, 800), uri, mode="append", max_rows_per_file=200)
    mod.dataset(uri).delete("id < 50 OR (id >= 200 AND id < 400)")
    mod.dataset(uri).update({"text": "'changed text'"}, where="id % 10 = 1")
    _deep_ok(uri)
    # Delta segments over the new fragments, then a compaction that remaps (pylance) or
    # rebuilds (lancelet) the indexes over the rewritten fragments.
    mod.dataset(uri).optimize.optimize_indices(num_indices_to_merge=0)
    _deep_ok(uri)
    mod.dataset(uri).optimize.compact_files(target_rows_per_fragment=2000)
    assert len(lance.dataset(uri).get_fragments()) < 4
    _deep_ok(uri)
    # The merged indexes, too.
    mod.dataset(uri).optimize.optimize_indices()
    _deep_ok(uri)


@pytest.mark.parametrize("stable", [False, True], ids=["addresses", "stable_row_ids"])
def test_a_bitmap_claiming_a_fragment_the_index_does_not_hold_is_reported(tmp_path, stable):
    uri = str(tmp_path / "ds.lance")
    lance.write_dataset(_table(0, 400), uri, max_rows_per_file=200, enable_stable_row_ids=stable)
    _index_everything(lance, uri)
    lance.write_dataset(_table(400, 600), uri, mode="append", max_rows_per_file=200)
    _deep_ok(uri)
    ds = lance.dataset(uri)
    described = {d.name: d for d in ds.describe_indices()}
    segments = ds.list_indices()
    assert len(segments) == 9 and all(set(s["fragment_ids"]) == {0, 1} for s in segments)
    # Every segment committed again through pylance, now claiming the appended fragment 2.
    forged = [
        Index(
            uuid=s["uuid"],
            name=s["name"],
            fields=described[s["name"]].fields,
            dataset_version=s["version"],
            fragment_ids={0, 1, 2},
            index_version=described[s["name"]].segments[0].index_version,
            index_details=(described[s["name"]].type_url, b""),
        )
        for s in segments
    ]
    lance.LanceDataset.commit(
        uri, lance.LanceOperation.CreateIndex(new_indices=forged, removed_indices=[]), read_version=ds.version
    )
    assert all(set(s["fragment_ids"]) == {0, 1, 2} for s in lance.dataset(uri).list_indices())
    # Without deep nothing reads the index contents.
    assert lancelet.dataset(uri).validate().ok
    with pytest.raises(CorruptFileError) as e:
        lancelet.dataset(uri).validate(deep=True)
    report = e.value.report
    named = {p for p, r in report.problems if "claims fragment 2" in r and "holds none of its rows" in r}
    expected = {f"_indices/{s['uuid']}" for s in segments}
    assert named == expected, report
    assert len(report.problems) == len(expected), report


def test_a_compaction_that_defers_the_index_remap_passes(tmp_path):
    # pylance's fragment-reuse index: the bitmaps name the new fragments while the index
    # files keep the old addresses, remapped at query time. Nothing is wrong.
    uri = str(tmp_path / "ds.lance")
    lance.write_dataset(_table(0, 600), uri, max_rows_per_file=200)
    _index_everything(lance, uri)
    lance.dataset(uri).delete("id < 50")
    lance.dataset(uri).optimize.compact_files(target_rows_per_fragment=2000, defer_index_remap=True)
    assert "__lance_frag_reuse" in {i["name"] for i in lance.dataset(uri).list_indices()}
    _deep_ok(uri)
