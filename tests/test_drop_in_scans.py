"""Scan details pylance programs rely on: ``strict_batch_size`` and the ``_rowoffset``
system column (scans, fragment scans, ``take`` and ``LanceFragment.take``).

Each check runs on datasets written by either library and read by both: the answers must
be pylance's.
"""

from __future__ import annotations

import pyarrow as pa
import pytest

lance = pytest.importorskip("lance")

import lancelet  # noqa: E402

pytestmark = pytest.mark.interop

LIBS = {"pylance": lance, "lancelet": lancelet}


@pytest.fixture(params=list(LIBS))
def uri(request, tmp_path):
    """10 rows in fragments of 4, row ``a = 1`` deleted, written by each library."""
    path = str(tmp_path / "t.lance")
    w = LIBS[request.param]
    w.write_dataset(
        pa.table({"a": pa.array(range(10), pa.int64()), "s": [f"x{i}" for i in range(10)]}), path, max_rows_per_file=4
    )
    w.dataset(path).delete("a = 1")
    return path


def both(uri, f):
    """``f(dataset)`` under each library; asserts they agree and returns pylance's answer."""
    out = [f(m.dataset(uri)) for m in LIBS.values()]
    assert out[0] == out[1], out
    return out[0]


def sizes(batches):
    return [b.num_rows for b in batches]


@pytest.mark.parametrize(
    "kwargs",
    [
        dict(batch_size=3, strict_batch_size=True),
        dict(batch_size=4, strict_batch_size=True),
        dict(batch_size=1, strict_batch_size=True),
        dict(batch_size=100, strict_batch_size=True),
        dict(batch_size=3, strict_batch_size=True, filter="a > 0"),
        dict(batch_size=3, strict_batch_size=True, limit=7, offset=1),
        dict(batch_size=4, strict_batch_size=True, columns=["a", "_rowoffset"]),
        dict(batch_size=2, strict_batch_size=False),
        dict(batch_size=3),
    ],
    ids=lambda k: ",".join(f"{a}={b}" for a, b in k.items()),
)
def test_strict_batch_size_gives_exact_batches(uri, kwargs):
    got = both(uri, lambda ds: sizes(ds.to_batches(**kwargs)))
    if kwargs.get("strict_batch_size"):
        n = kwargs["batch_size"]
        assert all(s == n for s in got[:-1]) and 0 < got[-1] <= n
    # rows and their order are those of the plain scan
    plain = {k: v for k, v in kwargs.items() if k not in ("batch_size", "strict_batch_size")}
    both(
        uri,
        lambda ds: pa.Table.from_batches(list(ds.to_batches(**kwargs))).to_pydict() == ds.to_table(**plain).to_pydict(),
    )


def test_strict_batch_size_on_scanners_and_fragments(uri):
    both(uri, lambda ds: sizes(ds.scanner(batch_size=3, strict_batch_size=True).to_batches()))
    both(uri, lambda ds: sizes(ds.get_fragments()[1].to_batches(batch_size=3, strict_batch_size=True)))
    both(uri, lambda ds: sizes(ds.scanner(batch_size=3, strict_batch_size=True).to_reader()))


def test_rowoffset_in_scans_and_take(uri):
    assert both(uri, lambda ds: ds.to_table(columns=["a", "_rowoffset"]).to_pydict())["_rowoffset"] == list(range(9))
    both(uri, lambda ds: ds.to_table(columns=["_rowoffset", "a"], filter="a > 4", limit=3).to_pydict())
    both(uri, lambda ds: ds.get_fragments()[1].to_table(columns=["a", "_rowoffset"]).to_pydict())
    both(uri, lambda ds: ds.take([0, 5, 8], columns=["_rowoffset", "a"]).to_pydict())


def test_rowoffset_in_sql_is_refused_by_both(uri):
    for mod in LIBS.values():
        ds = mod.dataset(uri)
        with pytest.raises(ValueError):
            ds.to_table(columns=["a"], filter="_rowoffset > 3")
        with pytest.raises(ValueError):
            ds.to_table(columns={"a": "a", "r": "_rowoffset * 2"})


@pytest.mark.lancelet_only
def test_fragment_take_rowoffset_is_the_dataset_wide_offset(uri):
    # pylance 14 drops _rowoffset from LanceFragment.take (or fails when it is the only
    # column); lancelet gives the value a fragment scan gives for the same rows.
    ds = lancelet.dataset(uri)
    for frag in ds.get_fragments():
        scan = frag.to_table(columns=["a", "_rowoffset"])
        idx = list(range(0, scan.num_rows, 2))
        got = frag.take(idx, columns=["a", "_rowoffset"])
        assert got.to_pydict() == scan.take(idx).to_pydict()
        assert frag.take(idx, columns=["_rowoffset"]).to_pydict() == scan.select(["_rowoffset"]).take(idx).to_pydict()
    theirs = lance.dataset(uri).get_fragments()[1].take([0, 2], columns=["a", "_rowoffset"])
    assert theirs.column("a").to_pylist() == ds.get_fragments()[1].take([0, 2], columns=["a"]).column("a").to_pylist()


@pytest.mark.lancelet_only
def test_a_pickled_scanner_keeps_strict_batches_and_rowoffset(uri):
    import pickle

    # pylance 14's scanners do not pickle; lancelet's carry all their options.
    for mod in [lancelet]:
        sc = mod.dataset(uri).scanner(batch_size=4, strict_batch_size=True, columns=["a", "_rowoffset"])
        again = pickle.loads(pickle.dumps(sc))
        assert sizes(again.to_batches()) == sizes(sc.to_batches()) == [4, 4, 1]
        assert again.to_table().to_pydict() == sc.to_table().to_pydict()
