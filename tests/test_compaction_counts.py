"""``optimize.compact_files`` plans as pylance 14 does: on the same input (fragment sizes,
deletions, options) both libraries end with the same number of fragments holding the same
row counts. lancelet keeps rewritten fragments in place where pylance moves them to the
end, so counts are compared as sorted lists.

Interop both ways: the dataset is written (and rows deleted) by one library and compacted
by the other; both then read the same rows.
"""

from __future__ import annotations

import pyarrow as pa
import pytest

lance = pytest.importorskip("lance")

import lancelet  # noqa: E402

pytestmark = pytest.mark.interop

LIBS = {"pylance": lance, "lancelet": lancelet}

CASES = [
    ([10] * 20, [], dict(target_rows_per_fragment=50)),
    ([10] * 20, [], dict(target_rows_per_fragment=35)),
    ([10] * 20, [], dict(target_rows_per_fragment=1000)),
    ([10] * 10, [], dict(target_rows_per_fragment=35)),
    ([100, 5, 5, 100, 5], [], dict(target_rows_per_fragment=50)),
    ([100, 5, 5, 100, 5, 5, 5], [], dict(target_rows_per_fragment=50)),
    ([30, 30, 30, 30], [], dict(target_rows_per_fragment=50)),
    ([30, 30, 30], [], dict(target_rows_per_fragment=50)),
    ([40, 40, 40, 40, 40], [], dict(target_rows_per_fragment=100)),
    ([250, 250, 250, 250], [], dict(target_rows_per_fragment=300)),
    ([7, 13, 2, 50, 1, 1, 60, 3], [], dict(target_rows_per_fragment=20)),
    ([7, 13, 2, 50, 1, 1, 60, 3], ["a = 30"], dict(target_rows_per_fragment=20)),
    # deletions: exactly the threshold is not above it; physical rows decide "small"
    ([100, 100, 100], ["a % 10 = 0"], dict(target_rows_per_fragment=100)),
    ([100, 100, 100], ["a % 10 = 0"], dict(target_rows_per_fragment=50)),
    ([100, 100, 100], ["a < 5"], dict(target_rows_per_fragment=100)),
    ([100, 100, 100], ["a < 20"], dict(target_rows_per_fragment=100)),
    ([100, 100, 100], ["a < 20"], dict(target_rows_per_fragment=100, materialize_deletions=False)),
    ([100, 100, 100], ["a < 20"], dict(target_rows_per_fragment=100, materialize_deletions_threshold=0.5)),
    ([10] * 12, ["a % 3 = 0"], dict(target_rows_per_fragment=25)),
    ([10] * 20, ["a >= 50 AND a < 60"], dict(target_rows_per_fragment=45)),
    ([1000], ["a < 10"], dict(target_rows_per_fragment=300)),
    ([1000], [], dict(target_rows_per_fragment=300)),
    # a big fragment rewritten for its deletions is cut into target-sized fragments
    ([5, 900], ["a >= 5 AND a < 205"], dict(target_rows_per_fragment=100)),
    ([5, 5, 2000], ["a >= 10 AND a < 1000"], dict(target_rows_per_fragment=100)),
    ([200] * 10, [], dict(target_rows_per_fragment=1000, max_bytes_per_file=3000)),
    ([200] * 10, [], dict(target_rows_per_fragment=1000, max_rows_per_group=50)),
]


def setup(mod, uri: str, sizes, deletes) -> None:
    start = 0
    for i, n in enumerate(sizes):
        t = pa.table(
            {"a": pa.array(range(start, start + n), pa.int64()), "s": [f"x{j}" for j in range(start, start + n)]}
        )
        mod.write_dataset(t, uri, mode="append" if i else "create", max_rows_per_file=n)
        start += n
    for pred in deletes:
        mod.dataset(uri).delete(pred)


def compacted(writer, compactor, uri: str, case) -> tuple:
    sizes, deletes, opts = case
    setup(writer, uri, sizes, deletes)
    before = sorted(writer.dataset(uri).to_table()["a"].to_pylist())
    metrics = compactor.dataset(uri).optimize.compact_files(**opts)
    counts = sorted(f.count_rows() for f in compactor.dataset(uri).get_fragments())
    for reader in LIBS.values():
        ds = reader.dataset(uri)
        assert sorted(ds.to_table()["a"].to_pylist()) == before
        assert sorted(f.count_rows() for f in ds.get_fragments()) == counts
    return counts, (metrics.fragments_removed, metrics.fragments_added)


@pytest.mark.parametrize("case", CASES, ids=[str(i) for i in range(len(CASES))])
def test_fragment_counts_match_pylance(case, tmp_path):
    theirs = compacted(lance, lance, str(tmp_path / "theirs.lance"), case)
    ours = compacted(lancelet, lancelet, str(tmp_path / "ours.lance"), case)
    assert len(ours[0]) == len(theirs[0])
    assert sum(ours[0]) == sum(theirs[0])
    assert ours == theirs


@pytest.mark.parametrize("writer,compactor", [("pylance", "lancelet"), ("lancelet", "pylance")])
@pytest.mark.parametrize("case", [CASES[4], CASES[11], CASES[18], CASES[22]], ids=["small", "del", "share", "big"])
def test_compacting_the_other_librarys_dataset(writer, compactor, case, tmp_path):
    oracle = compacted(lance, lance, str(tmp_path / "oracle.lance"), case)
    mixed = compacted(LIBS[writer], LIBS[compactor], str(tmp_path / "mixed.lance"), case)
    assert mixed == oracle


@pytest.mark.parametrize(
    "writer,compactor", [("pylance", "lancelet"), ("lancelet", "pylance"), ("lancelet", "lancelet")]
)
def test_runs_are_cut_where_index_coverage_changes(writer, compactor, tmp_path):
    def run(w, c, uri):
        for i in range(10):
            w.write_dataset(pa.table({"a": pa.array(range(i * 10, i * 10 + 10), pa.int64())}), uri, mode="append")
            if i == 4:
                w.dataset(uri).create_scalar_index("a", "BTREE")
        c.dataset(uri).optimize.compact_files(target_rows_per_fragment=100)
        out = [sorted(f.count_rows() for f in m.dataset(uri).get_fragments()) for m in LIBS.values()]
        assert out[0] == out[1]
        assert all(m.dataset(uri).count_rows("a >= 42") == 58 for m in LIBS.values())
        return out[0]

    oracle = run(lance, lance, str(tmp_path / "oracle.lance"))
    assert oracle == [50, 50]
    assert run(LIBS[writer], LIBS[compactor], str(tmp_path / "mixed.lance")) == oracle
