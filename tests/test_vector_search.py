"""Vector search (``nearest=``) and vector indexes (IVF_FLAT, IVF_PQ, IVF_SQ) shared with pylance.

1. Exact search (no index, or ``use_index=False``) equals a numpy brute force and pylance's
   output on the same dataset: ids and order, distances, for every metric and vector type,
   with nulls, deletes, filters, projections, row ids, distance ranges, limit/offset and
   batch queries.
2. Index interop both ways, per index type and metric: ``lib`` searches pylance's index with
   pylance's results; pylance lists, plans and searches ``lib``'s index with the recall of
   its own index; ``index_statistics`` agree.
3. Lifecycle: append after index (unindexed fragments searched exactly and merged;
   ``fast_search`` skips them), delete, compaction by either library on the other's index,
   ``refine_factor``.
4. Errors: bad queries and bad index requests (``InvalidArgumentError``), damaged index
   files (``CorruptFileError``, never a crash; ``use_index=False`` still works).
5. A hypothesis property: random small vector sets and queries, exact search equals numpy.

pylance 14.0.2 behaviour the tests rely on (found by experiment, beyond
../shared/facts/index-facts.md section 3.6):

- ``_distance`` is float32: squared L2; ``1 - cos``; for ``dot`` it is ``1 - q·v`` (not
  ``-q·v``: flat search, IVF search and refine all give ``1 - q·v``).
- The query is cast to the column's element type before distances are computed (a float16
  column sees a float16-rounded query); distances are then computed in float32.
- uint8 vectors support only ``hamming`` (bit-level: popcount of XOR), which is also their
  default metric; float vectors refuse ``hamming``; both refusals are ValueError.
- Rows whose vector is null are skipped (k larger than the row count returns the non-null
  rows only); with ``cosine``, rows whose distance is undefined (zero vector) are dropped and
  a zero query returns no rows.
- ``distance_range=(lo, hi)`` keeps ``lo <= d < hi`` (either bound may be None).
- ``limit``/``offset`` slice the k results. A 2-D ``q`` adds ``query_index: int32 not null``
  first; each query gets its own k results.
- Projections keep the user's order (``columns=["_distance", "id"]`` gives that order);
  ``_distance`` is appended when not named; ``_rowid`` comes last.
- ``use_index=False`` with no ``metric`` searches with L2, whatever the index's metric.
- Index files are searched with the index's metric; float16/float64 columns get centroids
  of the column's type (a float32 centroid tensor on such a column makes pylance fail).

``lib`` is lancelet (pylance itself when ``LANCELET_TEST_ORACLE_SELF=1``); ``lance`` is always
the pylance oracle.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

lance = pytest.importorskip("lance")

pytestmark = pytest.mark.interop

ORACLE_SELF = os.environ.get("LANCELET_TEST_ORACLE_SELF", "") == "1"


def known_bug(reason: str) -> pytest.MarkDecorator:
    """A lancelet bug: strict xfail (not applied when the suite runs against pylance itself)."""
    return pytest.mark.xfail(not ORACLE_SELF, strict=True, reason=reason)


# --------------------------------------------------------------------------------------
# Data and numpy truth
# --------------------------------------------------------------------------------------

METRICS = ["L2", "cosine", "dot"]
FLOATS = ["float32", "float16", "float64"]


def _metric_params() -> List[Any]:
    return list(METRICS)


def _clustered(n: int, dim: int, seed: int, clusters: int = 8) -> np.ndarray:
    """``n`` float64 vectors around ``clusters`` random centres."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(clusters, dim)) * 3
    return centres[rng.integers(0, clusters, n)] + rng.normal(size=(n, dim))


def _fsl(vecs: np.ndarray, nulls: Optional[np.ndarray] = None) -> pa.Array:
    arr = pa.FixedSizeListArray.from_arrays(pa.array(vecs.ravel()), vecs.shape[1])
    if nulls is None:
        return arr
    return pa.FixedSizeListArray.from_arrays(pa.array(vecs.ravel()), vecs.shape[1], mask=pa.array(nulls))


# Special table (not in _tables): wraps the given vectors (any dtype, null rows) with id and cat.
def _table(vecs: np.ndarray, start: int = 0, nulls: Optional[np.ndarray] = None) -> pa.Table:
    ids = np.arange(start, start + len(vecs))
    return pa.table({"id": pa.array(ids, pa.int64()), "cat": pa.array(ids % 7, pa.int64()),
                     "vec": _fsl(vecs, nulls)})


def _distances(vecs: np.ndarray, q: Any, metric: str) -> np.ndarray:
    """pylance's distances from ``q`` to every row of ``vecs`` (the query is cast to the
    vectors' type first, as pylance does), in float64."""
    m = metric.lower()
    if m == "hamming":
        qq = np.asarray(q).astype(np.uint8)
        return np.unpackbits(vecs ^ qq, axis=1).sum(axis=1).astype(np.float64)
    v = vecs.astype(np.float64)
    qq = np.asarray(q, dtype=np.float32).astype(vecs.dtype).astype(np.float64)
    if m == "l2":
        return ((v - qq) ** 2).sum(axis=1)
    if m == "cosine":
        return 1.0 - (v @ qq) / (np.linalg.norm(v, axis=1) * np.linalg.norm(qq))
    if m == "dot":
        return 1.0 - v @ qq
    raise ValueError(metric)


def _truth(vecs: np.ndarray, q: Any, metric: str, k: int, keep: Optional[np.ndarray] = None) -> Tuple[List[int], np.ndarray]:
    """Ids (= row positions) and distances of the k nearest rows among ``keep``, ordered by
    (distance, row id)."""
    d = _distances(vecs, q, metric)
    rows = np.arange(len(vecs)) if keep is None else np.flatnonzero(keep)
    order = rows[np.lexsort((rows, d[rows]))][:k]
    return order.tolist(), d[order]


def _nn(ds: Any, q: Any, k: int = 10, columns: Optional[Sequence[str]] = ("id",), **opts: Any) -> pa.Table:
    """``ds.to_table(nearest=...)``; keys of ``opts`` that are scan options go to to_table."""
    scan = {key: opts.pop(key) for key in ("filter", "prefilter", "fast_search", "with_row_id", "limit", "offset")
            if key in opts}
    nearest = {"column": opts.pop("column", "vec"), "q": q, "k": k, **opts}
    return ds.to_table(nearest=nearest, columns=None if columns is None else list(columns), **scan)


def _ids(t: pa.Table) -> List[int]:
    return t.column("id").to_pylist()


def _dist(t: pa.Table) -> np.ndarray:
    return np.asarray(t.column("_distance").to_pylist(), dtype=np.float64)


def _close(got: np.ndarray, expected: np.ndarray, rtol: float = 1e-4, atol: float = 1e-5, what: str = "") -> None:
    np.testing.assert_allclose(got, expected, rtol=rtol, atol=atol, err_msg=what)


def _overlap(a: Sequence[int], b: Sequence[int]) -> float:
    return len(set(a) & set(b)) / max(1, len(b))


def _module(who: str, lib: Any) -> Any:
    return lance if who == "pylance" else lib


# --------------------------------------------------------------------------------------
# 1. Exact search
# --------------------------------------------------------------------------------------

EXACT_ROWS, EXACT_DIM, EXACT_PER_FILE = 2000, 32, 500
_EXACT64 = _clustered(EXACT_ROWS, EXACT_DIM, seed=11)


def _exact_vecs(dtype: str) -> np.ndarray:
    return _EXACT64.astype(dtype)


def _exact_queries(dtype: str) -> List[np.ndarray]:
    """A copy of a row, points near and between clusters, a far point; representable in
    ``dtype`` (so that pylance's cast of the query to the column type changes nothing)."""
    rng = np.random.default_rng(5)
    v = _EXACT64
    qs = [v[17], v[400] + rng.normal(size=EXACT_DIM) * 0.3, 0.35 * v[3] + 0.65 * v[1500], rng.normal(size=EXACT_DIM) * 6]
    return [q.astype(dtype).astype(np.float32) for q in qs]


@pytest.fixture(scope="module")
def exact_ds(tmp_path_factory, lib) -> Callable[..., str]:
    """``exact_ds(dtype, index_metric=None)``: ``_exact_vecs(dtype)`` written by ``lib`` (four
    fragments); with ``index_metric``, pylance adds an IVF_FLAT index of that metric. Cached."""
    cache: Dict[tuple, str] = {}

    def get(dtype: str, index_metric: Optional[str] = None) -> str:
        key = (dtype, index_metric)
        if key not in cache:
            uri = str(tmp_path_factory.mktemp(f"exact_{dtype}_{index_metric}") / "ds.lance")
            lib.write_dataset(_table(_exact_vecs(dtype)), uri, max_rows_per_file=EXACT_PER_FILE)
            if index_metric is not None:
                lance.dataset(uri).create_index("vec", "IVF_FLAT", num_partitions=2, metric=index_metric)
            cache[key] = uri
        return cache[key]

    return get


def _check_exact(lib: Any, uri: str, vecs: np.ndarray, q: np.ndarray, metric: Optional[str], k: int,
                 keep: Optional[np.ndarray] = None, **opts: Any) -> None:
    """Both libraries' results equal the numpy truth (ids, order, distances); pylance's
    are checked first, so a wrong expectation shows as an oracle failure."""
    nearest = dict(opts)
    if metric is not None:
        nearest["metric"] = metric
    ids, dists = _truth(vecs, q, metric or "L2", k, keep)
    theirs = _nn(lance.dataset(uri), q, k, **nearest)
    assert _ids(theirs) == ids, "oracle"
    _close(_dist(theirs), dists, what="oracle")
    ours = _nn(lib.dataset(uri), q, k, **nearest)
    assert _ids(ours) == ids
    _close(_dist(ours), dists, what="vs numpy")
    _close(_dist(ours), _dist(theirs), rtol=1e-5, what="vs pylance")
    assert ours.schema.field("_distance").type == theirs.schema.field("_distance").type == pa.float32()


@pytest.mark.parametrize("mode", ["no_index", "use_index_false"])
@pytest.mark.parametrize("metric", _metric_params())
@pytest.mark.parametrize("dtype", FLOATS)
def test_exact_search_equals_numpy_and_pylance(exact_ds, lib, dtype, metric, mode):
    """k=10 for several queries: ids, order and distances equal numpy and pylance, without an
    index and with ``use_index=False`` on a dataset indexed with the same metric."""
    uri = exact_ds(dtype, metric if mode == "use_index_false" else None)
    opts = {"use_index": False} if mode == "use_index_false" else {}
    for q in _exact_queries(dtype):
        _check_exact(lib, uri, _exact_vecs(dtype), q, metric, 10, **opts)
    if mode == "use_index_false":
        plan = lib.dataset(uri).scanner(nearest={"column": "vec", "q": _exact_queries(dtype)[0], "k": 10,
                                                 "use_index": False, "metric": metric}).explain_plan()
        assert "ANNSubIndex" not in plan, plan


def test_use_index_false_without_metric_uses_l2(exact_ds, lib):
    """pylance: ``use_index=False`` with no metric searches with L2, even on a dot index."""
    uri = exact_ds("float32", "dot")
    for q in _exact_queries("float32")[:2]:
        _check_exact(lib, uri, _exact_vecs("float32"), q, None, 10, use_index=False)


@pytest.mark.parametrize("metric", _metric_params())
def test_k_larger_than_row_count_returns_every_row(tmp_path, lib, metric):
    vecs = _clustered(300, 16, seed=3).astype(np.float32)
    uri = str(tmp_path / "ds.lance")
    lib.write_dataset(_table(vecs), uri, max_rows_per_file=100)
    q = (vecs[5] + 0.25).astype(np.float32)
    _check_exact(lib, uri, vecs, q, metric, 1000)
    assert lib.dataset(uri).to_table(nearest={"column": "vec", "q": q, "k": 1000, "metric": metric}).num_rows == 300


@pytest.mark.parametrize("metric", METRICS)
def test_float16_query_is_cast_to_the_column_type(exact_ds, lib, metric):
    """A float32 query that float16 cannot represent: pylance rounds it to float16 first."""
    uri = exact_ds("float16")
    vecs = _exact_vecs("float16")
    q = vecs[17].astype(np.float32) + np.float32(0.1)
    assert not np.array_equal(q.astype(np.float16).astype(np.float32), q)
    ids, dists = _truth(vecs, q, metric, 10)
    theirs = _nn(lance.dataset(uri), q, 10, metric=metric)
    assert _ids(theirs) == ids, "oracle"
    _close(_dist(theirs), dists, what="oracle")
    ours = _nn(lib.dataset(uri), q, 10, metric=metric)
    assert _ids(ours) == ids
    _close(_dist(ours), _dist(theirs), rtol=1e-5)


U8_ROWS, U8_DIM = 1500, 32
_U8 = np.random.default_rng(8).integers(0, 256, (U8_ROWS, U8_DIM)).astype(np.uint8)


@pytest.fixture(scope="module")
def u8_ds(tmp_path_factory, lib) -> str:
    uri = str(tmp_path_factory.mktemp("u8") / "ds.lance")
    lib.write_dataset(_table(_U8), uri, max_rows_per_file=500)
    return uri


def _u8_queries() -> List[np.ndarray]:
    rng = np.random.default_rng(9)
    flipped = _U8[40].copy()
    flipped[:3] ^= 0x11
    return [_U8[7], flipped, rng.integers(0, 256, U8_DIM).astype(np.uint8)]


def test_uint8_hamming_explicit(u8_ds, lib):
    for q in _u8_queries():
        _check_exact(lib, u8_ds, _U8, q, "hamming", 10)
        _check_exact(lib, u8_ds, _U8, q, "hamming", 10, use_index=False)


def test_uint8_default_metric_is_hamming(u8_ds, lib):
    for q in _u8_queries():
        ids, dists = _truth(_U8, q, "hamming", 10)
        theirs = _nn(lance.dataset(u8_ds), q, 10)
        assert _ids(theirs) == ids, "oracle"
        ours = _nn(lib.dataset(u8_ds), q, 10)
        assert _ids(ours) == ids
        _close(_dist(ours), dists)


@pytest.mark.parametrize("metric", METRICS)
def test_uint8_refuses_float_metrics(u8_ds, lib, metric):
    q = _u8_queries()[0]
    with pytest.raises(ValueError):
        _nn(lance.dataset(u8_ds), q, 5, metric=metric)
    with pytest.raises(ValueError):
        _nn(lib.dataset(u8_ds), q, 5, metric=metric)


@pytest.mark.parametrize("dtype", FLOATS)
def test_float_vectors_refuse_hamming(exact_ds, lib, dtype):
    uri = exact_ds(dtype)
    q = _exact_queries(dtype)[0]
    with pytest.raises(ValueError):
        _nn(lance.dataset(uri), q, 5, metric="hamming")
    with pytest.raises(ValueError):
        _nn(lib.dataset(uri), q, 5, metric="hamming")


@pytest.mark.parametrize("metric", METRICS)
def test_null_vectors_are_skipped(tmp_path, lib, metric):
    vecs = _clustered(400, 16, seed=4).astype(np.float32)
    nulls = np.arange(400) % 7 == 0
    uri = str(tmp_path / "ds.lance")
    lib.write_dataset(_table(vecs, nulls=nulls), uri, max_rows_per_file=150)
    keep = ~nulls
    for q, k in [(vecs[1], 10), (vecs[0], 10), (vecs[3] * 0.5, 1000)]:
        ids, dists = _truth(vecs, q, metric, k, keep)
        theirs = _nn(lance.dataset(uri), q, k, metric=metric)
        assert _ids(theirs) == ids, "oracle"
        ours = _nn(lib.dataset(uri), q, k, metric=metric)
        assert _ids(ours) == ids
        if metric != "dot":
            _close(_dist(ours), dists)
    assert _nn(lib.dataset(uri), vecs[1], 1000, metric=metric).num_rows == int(keep.sum())


def test_cosine_zero_vectors(tmp_path, lib):
    vecs = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0], [-1, 0, 0]], np.float32)
    uri = str(tmp_path / "ds.lance")
    lib.write_dataset(_table(vecs), uri)
    q = np.array([1, 0, 0], np.float32)
    theirs = _nn(lance.dataset(uri), q, 10, metric="cosine")
    assert _ids(theirs) == [1, 3, 2, 4], "oracle"
    assert _ids(_nn(lib.dataset(uri), q, 10, metric="cosine")) == [1, 3, 2, 4]
    zero = np.zeros(3, np.float32)
    assert _nn(lance.dataset(uri), zero, 10, metric="cosine").num_rows == 0, "oracle"
    assert _nn(lib.dataset(uri), zero, 10, metric="cosine").num_rows == 0


@pytest.mark.parametrize("metric", _metric_params())
def test_exact_search_after_delete(tmp_path, lib, metric):
    """Deleted rows never appear; k rows are still returned."""
    vecs = _exact_vecs("float32")
    uri = str(tmp_path / "ds.lance")
    lib.write_dataset(_table(vecs), uri, max_rows_per_file=EXACT_PER_FILE)
    qs = _exact_queries("float32")
    top = _truth(vecs, qs[0], metric, 3)[0] + _truth(vecs, qs[1], metric, 3)[0]
    lib.dataset(uri).delete(f"id % 9 = 0 OR id IN ({', '.join(map(str, top))})")
    keep = (np.arange(EXACT_ROWS) % 9 != 0) & ~np.isin(np.arange(EXACT_ROWS), top)
    for q in qs:
        _check_exact(lib, uri, vecs, q, metric, 10, keep=keep)
    everything = _nn(lib.dataset(uri), qs[0], 5000, metric=metric)
    assert everything.num_rows == int(keep.sum())
    assert not set(_ids(everything)) & set(np.flatnonzero(~keep).tolist())


FILTERS = [
    ("cat = 1", lambda ids: ids % 7 == 1),
    ("id < 300", lambda ids: ids < 300),
    ("id >= 1000 AND cat = 2", lambda ids: (ids >= 1000) & (ids % 7 == 2)),
]


@pytest.mark.parametrize("metric", METRICS)
@pytest.mark.parametrize("flt,mask", FILTERS, ids=[f for f, _ in FILTERS])
def test_exact_search_postfilter(exact_ds, lib, flt, mask, metric):
    """prefilter=False: the rows of the unfiltered top k that match (maybe fewer than k)."""
    uri = exact_ds("float32")
    vecs = _exact_vecs("float32")
    keep = mask(np.arange(EXACT_ROWS))
    for q in _exact_queries("float32"):
        top, _ = _truth(vecs, q, metric, 10)
        expected = [i for i in top if keep[i]]
        theirs = _nn(lance.dataset(uri), q, 10, metric=metric, filter=flt, prefilter=False)
        assert _ids(theirs) == expected, "oracle"
        ours = _nn(lib.dataset(uri), q, 10, metric=metric, filter=flt, prefilter=False)
        assert _ids(ours) == expected


@pytest.mark.parametrize("metric", METRICS)
@pytest.mark.parametrize("flt,mask", FILTERS, ids=[f for f, _ in FILTERS])
def test_exact_search_prefilter_returns_k_matching_rows(exact_ds, lib, flt, mask, metric):
    """prefilter=True: the k nearest of the matching rows (k rows when k match)."""
    uri = exact_ds("float32")
    vecs = _exact_vecs("float32")
    keep = mask(np.arange(EXACT_ROWS))
    for q in _exact_queries("float32"):
        ids, _ = _truth(vecs, q, metric, 10, keep)
        assert len(ids) == 10
        theirs = _nn(lance.dataset(uri), q, 10, metric=metric, filter=flt, prefilter=True)
        assert _ids(theirs) == ids, "oracle"
        ours = _nn(lib.dataset(uri), q, 10, metric=metric, filter=flt, prefilter=True)
        assert _ids(ours) == ids


@pytest.mark.parametrize("builder", ["pylance", "lib"])
@pytest.mark.parametrize("flt,mask", FILTERS, ids=[f for f, _ in FILTERS])
def test_indexed_search_prefilter_returns_k_matching_rows(tmp_path, lib, builder, flt, mask):
    """With an IVF_FLAT index searched over every partition, prefilter=True is exact too."""
    vecs = _exact_vecs("float32")
    uri = str(tmp_path / "ds.lance")
    lib.write_dataset(_table(vecs), uri, max_rows_per_file=EXACT_PER_FILE)
    _module(builder, lib).dataset(uri).create_index("vec", "IVF_FLAT", num_partitions=4)
    keep = mask(np.arange(EXACT_ROWS))
    for q in _exact_queries("float32"):
        ids, dists = _truth(vecs, q, "L2", 10, keep)
        theirs = _nn(lance.dataset(uri), q, 10, nprobes=4, filter=flt, prefilter=True)
        assert _ids(theirs) == ids, "oracle"
        ours = _nn(lib.dataset(uri), q, 10, nprobes=4, filter=flt, prefilter=True)
        assert _ids(ours) == ids
        _close(_dist(ours), dists)


PROJECTIONS = [
    pytest.param(None, False, id="all"),
    pytest.param(["id"], False, id="id"),
    pytest.param(["id", "_distance"], False, id="id,_distance"),
    pytest.param(["_distance", "id"], False, id="_distance,id"),
    pytest.param(["vec", "cat"], False, id="vec,cat"),
    pytest.param(["id"], True, id="id+rowid"),
    pytest.param(["cat", "_distance"], True, id="cat,_distance+rowid"),
    pytest.param(None, True, id="all+rowid"),
]


def _assert_same_table(ours: pa.Table, theirs: pa.Table) -> None:
    """Same column names, types and values; _distance to float tolerance."""
    assert ours.schema.names == theirs.schema.names
    for name in theirs.schema.names:
        assert ours.schema.field(name).type == theirs.schema.field(name).type, name
        if name == "_distance":
            _close(_dist(ours), _dist(theirs), rtol=1e-5)
        else:
            assert ours.column(name).to_pylist() == theirs.column(name).to_pylist(), name


@pytest.mark.parametrize("columns,with_row_id", PROJECTIONS)
def test_projection_and_row_ids_match_pylance(exact_ds, lib, columns, with_row_id):
    uri = exact_ds("float32")
    q = _exact_queries("float32")[1]
    theirs = _nn(lance.dataset(uri), q, 10, columns=columns, with_row_id=with_row_id)
    ours = _nn(lib.dataset(uri), q, 10, columns=columns, with_row_id=with_row_id)
    _assert_same_table(ours, theirs)
    assert "_distance" in ours.schema.names
    if with_row_id:
        assert ours.schema.names[-1] == "_rowid"
        # row addresses: fragment << 32 | offset
        assert ours.column("_rowid").to_pylist() == [(i // EXACT_PER_FILE << 32) | (i % EXACT_PER_FILE)
                                                     for i in _truth(_exact_vecs("float32"), q, "L2", 10)[0]]


def _check_distance_range(lib: Any, uri: str, metric: str, cases: Sequence[tuple], **opts: Any) -> None:
    """``cases``: (lo, hi, k) with bounds given as positions in the sorted distances; a bound
    at position i is the midpoint between the i-1-th and i-th distances (so float rounding
    differences between the libraries cannot move a row across it). Then, per library, its
    own reported distances used as bounds: lo is inclusive, hi exclusive."""
    vecs = _exact_vecs("float32")
    q = _exact_queries("float32")[1]
    ids, d = _truth(vecs, q, metric, 41)

    def bound(i: Optional[int]) -> Optional[float]:
        if i is None:
            return None
        return d[0] - 1 if i == 0 else (d[i - 1] + d[i]) / 2

    for lo_i, hi_i, k in cases:
        lo, hi = bound(lo_i), bound(hi_i)
        sel = [i for i, x in zip(ids, d) if (lo is None or x >= lo) and (hi is None or x < hi)][:k]
        theirs = _nn(lance.dataset(uri), q, k, metric=metric, distance_range=(lo, hi), **opts)
        assert _ids(theirs) == sel, ("oracle", lo_i, hi_i, k)
        ours = _nn(lib.dataset(uri), q, k, metric=metric, distance_range=(lo, hi), **opts)
        assert _ids(ours) == sel, (lo_i, hi_i, k)
    for who, mod in [("pylance", lance), ("lib", lib)]:
        own = _nn(mod.dataset(uri), q, 40, metric=metric, **opts)
        own_ids, own_d = _ids(own), _dist(own)
        for lo_i, hi_i, k in cases:
            lo = None if lo_i is None else float(own_d[lo_i])
            hi = None if hi_i is None else float(own_d[hi_i])
            sel = [i for i, x in zip(own_ids, own_d) if (lo is None or x >= lo) and (hi is None or x < hi)][:k]
            got = _nn(mod.dataset(uri), q, k, metric=metric, distance_range=(lo, hi), **opts)
            assert _ids(got) == sel, (who, "own bounds", lo_i, hi_i, k)


#: (metric, through an IVF_FLAT index of that metric searched over all partitions?)
RANGE_MODES = [pytest.param(m, ix, id=f"{m}-{'ivf_flat' if ix else 'exact'}",
                            marks=[])
               for m in METRICS for ix in (False, True)]


def _range_uri(exact_ds: Callable[..., str], metric: str, indexed: bool) -> Tuple[str, Dict[str, Any]]:
    return (exact_ds("float32", metric), {"nprobes": 2}) if indexed else (exact_ds("float32"), {})


@pytest.mark.parametrize("metric,indexed", RANGE_MODES)
def test_distance_range(exact_ds, lib, metric, indexed):
    """``distance_range=(lo, hi)`` keeps lo <= d < hi, up to k rows."""
    uri, opts = _range_uri(exact_ds, metric, indexed)
    _check_distance_range(lib, uri, metric, [(2, 6, 10), (None, 4, 10), (0, 3, 10), (None, 1, 10), (3, 30, 40)], **opts)


@pytest.mark.parametrize("metric,indexed", RANGE_MODES)
def test_distance_range_lower_bound_beyond_the_k_nearest(exact_ds, lib, metric, indexed):
    uri, opts = _range_uri(exact_ds, metric, indexed)
    _check_distance_range(lib, uri, metric, [(30, None, 5), (5, 25, 8), (12, 39, 3)], **opts)


@pytest.mark.parametrize("limit,offset", [(3, 2), (30, 2), (5, 0), (1, 9), (4, 12)])
def test_limit_and_offset_slice_the_k_results(exact_ds, lib, limit, offset):
    uri = exact_ds("float32")
    q = _exact_queries("float32")[2]
    ids, _ = _truth(_exact_vecs("float32"), q, "L2", 10)
    expected = ids[offset:offset + limit]
    theirs = _nn(lance.dataset(uri), q, 10, limit=limit, offset=offset)
    assert _ids(theirs) == expected, "oracle"
    ours = _nn(lib.dataset(uri), q, 10, limit=limit, offset=offset)
    assert _ids(ours) == expected


@pytest.mark.parametrize("metric", _metric_params())
def test_batch_query(exact_ds, lib, metric):
    """A 2-D q: ``query_index`` first, then each query's own k results in order."""
    uri = exact_ds("float32")
    vecs = _exact_vecs("float32")
    qs = _exact_queries("float32")
    batch = np.stack([qs[0], qs[1], qs[0], qs[3]])
    expected_qi, expected_ids, expected_d = [], [], []
    for i, q in enumerate(batch):
        ids, d = _truth(vecs, q, metric, 5)
        expected_qi += [i] * 5
        expected_ids += ids
        expected_d += d.tolist()
    theirs = _nn(lance.dataset(uri), batch, 5, metric=metric)
    assert theirs.schema.names == ["query_index", "id", "_distance"], "oracle"
    assert (theirs.column("query_index").to_pylist(), _ids(theirs)) == (expected_qi, expected_ids), "oracle"
    ours = _nn(lib.dataset(uri), batch, 5, metric=metric)
    assert ours.schema.names == ["query_index", "id", "_distance"]
    assert ours.schema.field("query_index").type == pa.int32()
    assert ours.column("query_index").to_pylist() == expected_qi
    assert _ids(ours) == expected_ids
    _close(_dist(ours), np.array(expected_d))
    _close(_dist(ours), _dist(theirs), rtol=1e-5)


def test_batch_query_schema_matches_pylance(exact_ds, lib):
    uri = exact_ds("float32")
    batch = np.stack(_exact_queries("float32")[:2])
    theirs = _nn(lance.dataset(uri), batch, 3)
    ours = _nn(lib.dataset(uri), batch, 3)
    assert ours.schema == theirs.schema


# --------------------------------------------------------------------------------------
# 2. Index interop
# --------------------------------------------------------------------------------------

IDX_ROWS, IDX_DIM, IDX_PER_FILE, IDX_PARTS, IDX_NPROBES = 3000, 16, 1000, 4, 2
_IDX_VECS = _clustered(IDX_ROWS, IDX_DIM, seed=2).astype(np.float32)
#: 40 queries near data points (not copies of them)
_IDX_QUERIES = [(_IDX_VECS[i] + np.random.default_rng(i).normal(size=IDX_DIM) * 0.5).astype(np.float32)
                for i in range(0, IDX_ROWS, IDX_ROWS // 40)]

INDEX_CASES = {
    "IVF_FLAT": ("IVF_FLAT", {}),
    "IVF_PQ8": ("IVF_PQ", {"num_sub_vectors": 8}),
    "IVF_PQ4": ("IVF_PQ", {"num_sub_vectors": 16, "num_bits": 4}),
    "IVF_SQ": ("IVF_SQ", {}),
}


def _create_index(module: Any, uri: str, case: str, metric: str, **extra: Any) -> None:
    index_type, params = INDEX_CASES[case]
    module.dataset(uri).create_index("vec", index_type, num_partitions=IDX_PARTS, metric=metric, **params, **extra)


@pytest.fixture(scope="module")
def indexed(tmp_path_factory, lib) -> Callable[[str, str, str], str]:
    """``indexed(builder, case, metric)``: ``_IDX_VECS`` (three fragments) written and indexed
    by ``builder`` ("pylance" or "lib"). Cached; tests must not change it."""
    cache: Dict[tuple, str] = {}

    def get(builder: str, case: str, metric: str) -> str:
        key = (builder, case, metric)
        if key not in cache:
            module = _module(builder, lib)
            uri = str(tmp_path_factory.mktemp(f"idx_{builder}_{case}_{metric}") / "ds.lance")
            module.write_dataset(_table(_IDX_VECS), uri, max_rows_per_file=IDX_PER_FILE)
            _create_index(module, uri, case, metric)
            cache[key] = uri
        return cache[key]

    return get


def _partition_view(stats: Dict[str, Any]) -> tuple:
    seg = stats["indices"][0]
    return (stats["index_type"], stats["num_indexed_rows"], stats["num_unindexed_rows"], seg["index_type"],
            seg["metric_type"], seg["num_partitions"], [p["size"] for p in seg["partitions"]])


def _recall(ds: Any, metric: str) -> float:
    rs = []
    for q in _IDX_QUERIES:
        truth, _ = _truth(_IDX_VECS, q, metric, 10)
        rs.append(_overlap(_ids(_nn(ds, q, 10, nprobes=IDX_NPROBES)), truth))
    return float(np.mean(rs))


@pytest.fixture(autouse=True)
def _no_centroids_in_stats(monkeypatch):
    """pylance's vector index_statistics warns unless centroids are left out."""
    monkeypatch.setenv("LANCE_INCLUDE_VECTOR_CENTROIDS", "false")


CASE_METRIC = [(c, m) for c in INDEX_CASES for m in METRICS]


@pytest.mark.parametrize("case,metric", CASE_METRIC, ids=[f"{c}-{m}" for c, m in CASE_METRIC])
def test_lib_searches_pylance_index(indexed, lib, case, metric):
    uri = indexed("pylance", case, metric)
    theirs_ds, ours_ds = lance.dataset(uri), lib.dataset(uri)
    listed = [(x["name"], x["type"], x["fields"]) for x in ours_ds.list_indices()]
    assert listed == [(x["name"], x["type"], x["fields"]) for x in theirs_ds.list_indices()]
    assert listed == [("vec_idx", INDEX_CASES[case][0], ["vec"])]
    assert _partition_view(ours_ds.index_statistics("vec_idx")) == _partition_view(theirs_ds.index_statistics("vec_idx"))
    overlaps = []
    for q in _IDX_QUERIES:
        theirs = _nn(theirs_ds, q, 10, nprobes=IDX_NPROBES)
        ours = _nn(ours_ds, q, 10, nprobes=IDX_NPROBES)
        assert ours.num_rows == 10
        if case == "IVF_FLAT":
            assert _ids(ours) == _ids(theirs)
            _close(_dist(ours), _dist(theirs), rtol=1e-5)
        else:
            overlaps.append(_overlap(_ids(ours), _ids(theirs)))
            common = {i: d for i, d in zip(_ids(theirs), _dist(theirs))}
            got = [(d, common[i]) for i, d in zip(_ids(ours), _dist(ours)) if i in common]
            _close(np.array([g for g, _ in got]), np.array([e for _, e in got]), rtol=1e-4, atol=1e-4)
    if overlaps:
        assert np.mean(overlaps) >= 0.9, overlaps
    plan = ours_ds.scanner(nearest={"column": "vec", "q": _IDX_QUERIES[0], "k": 10}).explain_plan()
    assert "ANNSubIndex" in plan, plan


@pytest.mark.parametrize("case,metric", CASE_METRIC, ids=[f"{c}-{m}" for c, m in CASE_METRIC])
def test_pylance_searches_lib_index(indexed, tmp_path, lib, case, metric):
    uri = indexed("lib", case, metric)
    theirs_ds = lance.dataset(uri)
    listed = [(x["name"], x["type"], x["fields"], sorted(x["fragment_ids"])) for x in theirs_ds.list_indices()]
    assert listed == [("vec_idx", INDEX_CASES[case][0], ["vec"], [0, 1, 2])]
    plan = theirs_ds.scanner(nearest={"column": "vec", "q": _IDX_QUERIES[0], "k": 10, "nprobes": IDX_NPROBES}).explain_plan()
    assert "ANNSubIndex" in plan and "ANNIvfPartition" in plan, plan
    stats = theirs_ds.index_statistics("vec_idx")
    view = _partition_view(stats)
    assert view[:3] == (INDEX_CASES[case][0], IDX_ROWS, 0)
    assert view[4] == metric.lower()
    assert view[5] == IDX_PARTS and len(view[6]) == IDX_PARTS and sum(view[6]) == IDX_ROWS
    assert _partition_view(lib.dataset(uri).index_statistics("vec_idx")) == view
    # pylance's recall on lib's index is about its recall on its own index (same data, same
    # parameters); pylance's k-means is not seeded, so its own recall is the mean of two builds
    ours_recall = _recall(theirs_ds, metric)
    second = str(tmp_path / "second.lance")
    lance.write_dataset(_table(_IDX_VECS), second, max_rows_per_file=IDX_PER_FILE)
    _create_index(lance, second, case, metric)
    own_recall = (_recall(lance.dataset(indexed("pylance", case, metric)), metric) + _recall(lance.dataset(second), metric)) / 2
    assert ours_recall >= own_recall - 0.05, (ours_recall, own_recall)
    if case == "IVF_FLAT":
        assert ours_recall == 1.0
    # lib reads its own index as pylance does
    overlaps = [_overlap(_ids(_nn(lib.dataset(uri), q, 10, nprobes=IDX_NPROBES)),
                         _ids(_nn(theirs_ds, q, 10, nprobes=IDX_NPROBES))) for q in _IDX_QUERIES]
    assert np.mean(overlaps) >= (1.0 if case == "IVF_FLAT" else 0.9), overlaps


@pytest.mark.parametrize("dtype", ["float16", "float64"])
def test_lib_searches_pylance_index_on_other_float_types(tmp_path, lib, dtype):
    vecs = _IDX_VECS.astype(dtype)
    uri = str(tmp_path / "ds.lance")
    lance.write_dataset(_table(vecs), uri, max_rows_per_file=IDX_PER_FILE)
    lance.dataset(uri).create_index("vec", "IVF_FLAT", num_partitions=IDX_PARTS)
    for q in _IDX_QUERIES[:10]:
        q = q.astype(dtype).astype(np.float32)
        theirs = _nn(lance.dataset(uri), q, 10, nprobes=IDX_PARTS)
        ours = _nn(lib.dataset(uri), q, 10, nprobes=IDX_PARTS)
        assert _ids(ours) == _ids(theirs) == _truth(vecs, q, "L2", 10)[0]
        _close(_dist(ours), _dist(theirs), rtol=1e-4)


@pytest.mark.parametrize("case", ["IVF_FLAT", "IVF_PQ8", "IVF_SQ"])
@pytest.mark.parametrize("dtype", ["float16", "float64"])
def test_pylance_searches_lib_index_on_other_float_types(tmp_path, lib, dtype, case):
    """Centroids, the PQ codebook and FLAT storage are written in the column's type, as
    pylance writes them (pylance refuses centroids of another type)."""
    vecs = _IDX_VECS.astype(dtype)
    uri = str(tmp_path / "ds.lance")
    lib.write_dataset(_table(vecs), uri, max_rows_per_file=IDX_PER_FILE)
    _create_index(lib, uri, case, "L2")
    aux = [f for f in lance.dataset(uri).list_indices()]
    assert [x["type"] for x in aux] == [INDEX_CASES[case][0]]
    overlaps = []
    for q in _IDX_QUERIES[:10]:
        q = q.astype(dtype).astype(np.float32)
        theirs = _nn(lance.dataset(uri), q, 10, nprobes=IDX_PARTS)
        ours = _nn(lib.dataset(uri), q, 10, nprobes=IDX_PARTS)
        if case == "IVF_FLAT":
            assert _ids(theirs) == _ids(ours) == _truth(vecs, q, "L2", 10)[0]
            _close(_dist(ours), _dist(theirs), rtol=1e-4)
        else:
            overlaps.append(_overlap(_ids(ours), _ids(theirs)))
    if overlaps:
        assert np.mean(overlaps) >= 0.9, overlaps


# IVF_RQ (RaBitQ) indexes written by pylance: lancelet searches them through their IVF
# partitions and ranks the probed rows by exact distance (it does not decode RaBitQ codes).


@pytest.fixture(scope="module")
def rq_uri(tmp_path_factory) -> str:
    uri = str(tmp_path_factory.mktemp("rq") / "ds.lance")
    lance.write_dataset(_table(_IDX_VECS), uri, max_rows_per_file=IDX_PER_FILE)
    lance.dataset(uri).create_index("vec", "IVF_RQ", num_partitions=IDX_PARTS)
    return uri


@pytest.mark.lancelet_only
def test_lib_searches_pylance_ivf_rq_index(rq_uri, lib):
    theirs_ds, ours_ds = lance.dataset(rq_uri), lib.dataset(rq_uri)
    assert [(x["name"], x["type"]) for x in ours_ds.list_indices()] == [("vec_idx", "IVF_RQ")]
    stats = ours_ds.index_statistics("vec_idx")
    assert _partition_view(stats) == _partition_view(theirs_ds.index_statistics("vec_idx"))
    overlaps, ours_recall, theirs_recall = [], [], []
    for q in _IDX_QUERIES:
        truth, _ = _truth(_IDX_VECS, q, "L2", 10)
        theirs = _nn(theirs_ds, q, 10, nprobes=IDX_NPROBES)
        ours = _nn(ours_ds, q, 10, nprobes=IDX_NPROBES)
        assert ours.num_rows == 10
        # lancelet's distances are exact
        _close(_dist(ours), _distances(_IDX_VECS[_ids(ours)], q, "L2"), rtol=1e-4, atol=1e-4)
        # both probe the same partitions; lancelet ranks every probed row exactly, so each
        # true neighbour pylance finds (in a probed partition) is in lancelet's answer too
        found_by_theirs = set(_ids(theirs)) & set(truth)
        assert found_by_theirs <= set(_ids(ours)), (found_by_theirs, _ids(ours))
        overlaps.append(_overlap(_ids(ours), _ids(theirs)))
        ours_recall.append(_overlap(_ids(ours), truth))
        theirs_recall.append(_overlap(_ids(theirs), truth))
    # RaBitQ's approximation (and pylance's random training) varies from build to build
    assert np.mean(overlaps) >= 0.75, overlaps
    assert np.mean(ours_recall) >= np.mean(theirs_recall)
    # probing every partition finds the exact answer
    q = _IDX_QUERIES[0]
    assert _ids(_nn(ours_ds, q, 10, nprobes=IDX_PARTS)) == _truth(_IDX_VECS, q, "L2", 10)[0]


def test_ivf_rq_index_survives_lib_appends_deletes_and_optimize(rq_uri, tmp_path, lib):
    uri = _copy(rq_uri, tmp_path)
    extra = _clustered(200, IDX_DIM, seed=9).astype(np.float32)
    lib.dataset(uri).insert(_table(extra, start=IDX_ROWS))
    lib.dataset(uri).delete("id < 100")
    lib.dataset(uri).optimize.optimize_indices()
    vecs = np.concatenate([_IDX_VECS, extra])
    keep = np.arange(len(vecs)) >= 100
    for module in (lib, lance):
        ds = module.dataset(uri)
        assert [(x["name"], x["type"]) for x in ds.list_indices()] == [("vec_idx", "IVF_RQ")]
        for i in (0, 5):
            q = extra[i] + 0.01
            got = _ids(_nn(ds, q, 5, nprobes=IDX_PARTS))
            assert IDX_ROWS + i in got
            assert all(g >= 100 for g in got)
    q = extra[3]
    assert _ids(_nn(lib.dataset(uri), q, 10, nprobes=IDX_PARTS)) == _truth(vecs, q, "L2", 10, keep=keep)[0]


@pytest.mark.lancelet_only
def test_lib_refuses_to_build_ivf_rq(tmp_path, lib):
    from lancelet.errors import UnsupportedFeatureError

    uri = str(tmp_path / "ds.lance")
    lib.write_dataset(_table(_IDX_VECS[:500]), uri)
    with pytest.raises(UnsupportedFeatureError):
        lib.dataset(uri).create_index("vec", "IVF_RQ", num_partitions=2)
    assert lib.dataset(uri).list_indices() == []


# --------------------------------------------------------------------------------------
# 3. Lifecycle
# --------------------------------------------------------------------------------------

LIFE_ROWS, LIFE_PER_FILE = 2000, 500
_LIFE_VECS = _IDX_VECS[:LIFE_ROWS]
_LIFE_Q = _IDX_QUERIES[:6]
LIFE_CASES = ["IVF_FLAT", "IVF_PQ8"]


def _life_ds(tmp_path, module: Any, case: str, metric: str = "L2", per_file: int = LIFE_PER_FILE) -> str:
    uri = str(tmp_path / "ds.lance")
    module.write_dataset(_table(_LIFE_VECS), uri, max_rows_per_file=per_file)
    _create_index(module, uri, case, metric)
    return uri


def _exact_distances_of(t: pa.Table, vecs: np.ndarray, q: np.ndarray, metric: str = "L2") -> np.ndarray:
    return _distances(vecs, q, metric)[_ids(t)]


@pytest.mark.parametrize("case", LIFE_CASES)
@pytest.mark.parametrize("builder", ["pylance", "lib"])
def test_append_after_index(tmp_path, lib, builder, case):
    """Appended (unindexed) rows are searched exactly and merged: an exact copy of q comes
    first with distance 0 and every distance is exact; fast_search=True skips them."""
    uri = _life_ds(tmp_path, _module(builder, lib), case)
    q = _LIFE_Q[0]
    extra = np.concatenate([q[None, :], _clustered(9, IDX_DIM, seed=77).astype(np.float32)])
    lib.write_dataset(_table(extra, start=LIFE_ROWS), uri, mode="append")
    allv = np.concatenate([_LIFE_VECS, extra])
    results = {}
    for who, mod in [("pylance", lance), ("lib", lib)]:
        ds = mod.dataset(uri)
        assert ds.index_statistics("vec_idx")["num_unindexed_rows"] == 10, who
        t = _nn(ds, q, 10, nprobes=IDX_PARTS)
        assert _ids(t)[0] == LIFE_ROWS and abs(_dist(t)[0]) < 1e-6, (who, _ids(t), _dist(t))
        _close(_dist(t), _exact_distances_of(t, allv, q), what=who)
        if case == "IVF_FLAT":
            assert _ids(t) == _truth(allv, q, "L2", 10)[0], who
        fast = _nn(ds, q, 10, nprobes=IDX_PARTS, fast_search=True)
        assert fast.num_rows == 10 and max(_ids(fast)) < LIFE_ROWS, who
        if case == "IVF_FLAT":
            assert _ids(fast) == _truth(_LIFE_VECS, q, "L2", 10)[0], who
        results[who] = (t, fast)
    for a, b in zip(results["lib"], results["pylance"]):
        if case == "IVF_FLAT":
            assert _ids(a) == _ids(b)
        else:
            assert _overlap(_ids(a), _ids(b)) >= 0.9


@pytest.mark.parametrize("case", LIFE_CASES)
@pytest.mark.parametrize("builder", ["pylance", "lib"])
def test_delete_after_index(tmp_path, lib, builder, case):
    """Deleted rows never appear and k rows are still returned (the index is untouched)."""
    uri = _life_ds(tmp_path, _module(builder, lib), case)
    top = sorted({i for q in _LIFE_Q for i in _truth(_LIFE_VECS, q, "L2", 4)[0]})
    lib.dataset(uri).delete(f"id % 10 = 3 OR id IN ({', '.join(map(str, top))})")
    keep = (np.arange(LIFE_ROWS) % 10 != 3) & ~np.isin(np.arange(LIFE_ROWS), top)
    deleted = set(np.flatnonzero(~keep).tolist())
    for who, mod in [("pylance", lance), ("lib", lib)]:
        ds = mod.dataset(uri)
        for q in _LIFE_Q:
            t = _nn(ds, q, 10, nprobes=IDX_PARTS)
            assert t.num_rows == 10 and not set(_ids(t)) & deleted, (who, _ids(t))
            if case == "IVF_FLAT":
                assert _ids(t) == _truth(_LIFE_VECS, q, "L2", 10, keep)[0], who
            t = _nn(ds, q, 10, nprobes=IDX_PARTS, refine_factor=3)
            assert not set(_ids(t)) & deleted, who


def _compacted(tmp_path, lib, builder: str, compactor: str, case: str = "IVF_FLAT") -> Tuple[str, np.ndarray]:
    uri = _life_ds(tmp_path, _module(builder, lib), case, per_file=250)
    _module(builder, lib).dataset(uri).delete("id % 10 = 3")
    _module(compactor, lib).dataset(uri).optimize.compact_files(target_rows_per_fragment=1000)
    return uri, np.arange(LIFE_ROWS) % 10 != 3


@pytest.mark.parametrize("case", LIFE_CASES)
@pytest.mark.parametrize("compactor", ["pylance", "lib"])
@pytest.mark.parametrize("builder", ["pylance", "lib"])
def test_compaction_keeps_search_correct(tmp_path, lib, builder, compactor, case):
    """One library builds the index and deletes, the other (or the same) compacts; both
    libraries then search correctly: IVF_FLAT over all partitions = the numpy truth over the
    live rows; IVF_PQ: no deleted row, k rows, the same rows in both libraries, exact
    distances with refine."""
    uri, keep = _compacted(tmp_path, lib, builder, compactor, case)
    assert len(lance.dataset(uri).get_fragments()) < 8
    deleted = set(np.flatnonzero(~keep).tolist())
    found = {}
    for who, mod in [("pylance", lance), ("lib", lib)]:
        ds = mod.dataset(uri)
        assert [x["name"] for x in ds.list_indices()] == ["vec_idx"], who
        for n, q in enumerate(_LIFE_Q):
            t = _nn(ds, q, 10, nprobes=IDX_PARTS)
            assert t.num_rows == 10 and not set(_ids(t)) & deleted, (who, _ids(t))
            found[(who, n)] = _ids(t)
            if case == "IVF_FLAT":
                assert _ids(t) == _truth(_LIFE_VECS, q, "L2", 10, keep)[0], who
                _close(_dist(t), _exact_distances_of(t, _LIFE_VECS, q), what=who)
            else:
                r = _nn(ds, q, 10, nprobes=IDX_PARTS, refine_factor=4)
                assert not set(_ids(r)) & deleted, who
                _close(_dist(r), _exact_distances_of(r, _LIFE_VECS, q), what=who)
    for n in range(len(_LIFE_Q)):
        assert _overlap(found[("lib", n)], found[("pylance", n)]) >= 0.9
    # a search after an append on the compacted dataset
    lib.write_dataset(_table(_LIFE_Q[0][None, :], start=LIFE_ROWS), uri, mode="append")
    for mod in (lance, lib):
        assert _ids(_nn(mod.dataset(uri), _LIFE_Q[0], 3, nprobes=IDX_PARTS))[0] == LIFE_ROWS


@pytest.mark.parametrize("builder", ["pylance", "lib"])
def test_lib_compaction_remaps_the_vector_index_like_pylance(tmp_path, lib, builder):
    twin, _ = _compacted(tmp_path / "twin", lib, builder, "pylance")
    uri, keep = _compacted(tmp_path / "ours", lib, builder, "lib")

    def view(u: str) -> tuple:
        ds = lance.dataset(u)
        stats = ds.index_statistics("vec_idx")
        frags = sorted(f.fragment_id for f in ds.get_fragments())
        return ([sorted(x["fragment_ids"]) == frags for x in ds.list_indices()], stats["num_indexed_rows"],
                stats["num_unindexed_rows"])

    assert view(twin) == ([True], int(keep.sum()), 0), "oracle"
    assert view(uri) == view(twin)


@pytest.mark.parametrize("metric", _metric_params())
@pytest.mark.parametrize("builder", ["pylance", "lib"])
def test_refine_factor_gives_exact_distances(indexed, lib, builder, metric):
    uri = indexed(builder, "IVF_PQ8", metric)
    for q in _IDX_QUERIES[:10]:
        truth, _ = _truth(_IDX_VECS, q, metric, 10)
        res = {}
        for who, mod in [("pylance", lance), ("lib", lib)]:
            t = _nn(mod.dataset(uri), q, 10, nprobes=IDX_NPROBES, refine_factor=5)
            assert t.num_rows == 10, who
            _close(_dist(t), _exact_distances_of(t, _IDX_VECS, q, metric), what=who)
            assert list(_dist(t)) == sorted(_dist(t)), who
            res[who] = _ids(t)
        assert _overlap(res["lib"], res["pylance"]) >= 0.8
    plan = lib.dataset(uri).scanner(nearest={"column": "vec", "q": _IDX_QUERIES[0], "k": 10,
                                             "refine_factor": 5}).explain_plan()
    assert "ANNSubIndex" in plan


# --------------------------------------------------------------------------------------
# 4. Errors
# --------------------------------------------------------------------------------------

ERR_ROWS = 600


@pytest.fixture(scope="module")
def err_uris(tmp_path_factory, lib) -> Dict[str, str]:
    """"plain": a string, an int, a list<float> and a vector column; "indexed": the same with
    an IVF_FLAT index on ``vec``. Tests must not change them."""
    out = {}
    vecs = _IDX_VECS[:ERR_ROWS]
    for kind in ("plain", "indexed"):
        uri = str(tmp_path_factory.mktemp(f"err_{kind}") / "ds.lance")
        t = _table(vecs).append_column("s", pa.array([str(i) for i in range(ERR_ROWS)]))
        t = t.append_column("lst", pa.array([list(map(float, v)) for v in vecs], pa.list_(pa.float32())))
        lib.write_dataset(t, uri, max_rows_per_file=200)
        if kind == "indexed":
            lance.dataset(uri).create_index("vec", "IVF_FLAT", num_partitions=2)
        out[kind] = uri
    return out


_Q = _IDX_VECS[0]
BAD_QUERIES = {
    "short query": {"q": _Q[:8]},
    "long query": {"q": np.concatenate([_Q, _Q])},
    "string column": {"column": "s"},
    "int column": {"column": "id"},
    "list column": {"column": "lst"},
    "missing column": {"column": "nope"},
    "k=0": {"k": 0},
    "k=-1": {"k": -1},
    "unknown metric": {"metric": "manhattan"},
    "nprobes=0": {"nprobes": 0},
    "batch with wrong dim": {"q": np.zeros((2, 8), np.float32)},
}


def _bad_search(ds: Any, spec: Dict[str, Any]) -> pa.Table:
    nearest = {"column": "vec", "q": _Q, "k": 5, **spec}
    return ds.to_table(nearest=nearest, columns=["id"])


@pytest.mark.lancelet_only
@pytest.mark.parametrize("kind", ["plain", "indexed"])
@pytest.mark.parametrize("name", list(BAD_QUERIES))
def test_bad_queries_raise_invalid_argument(err_uris, lib, kind, name):
    from lancelet.errors import InvalidArgumentError

    with pytest.raises(InvalidArgumentError) as info:
        _bad_search(lib.dataset(err_uris[kind]), BAD_QUERIES[name])
    assert isinstance(info.value, ValueError)
    with pytest.raises(InvalidArgumentError):
        lib.dataset(err_uris[kind]).scanner(nearest={"column": "vec", "q": _Q, "k": 5, **BAD_QUERIES[name]},
                                            columns=["id"]).to_table()


@pytest.mark.parametrize("kind", ["plain", "indexed"])
@pytest.mark.parametrize("name", list(BAD_QUERIES))
def test_pylance_refuses_the_same_bad_queries(err_uris, kind, name):
    with pytest.raises((ValueError, TypeError)):
        _bad_search(lance.dataset(err_uris[kind]), BAD_QUERIES[name])


BAD_INDEXES = {
    "IVF_PQ without num_sub_vectors": (("vec", "IVF_PQ"), {"num_partitions": 2}),
    "unknown metric": (("vec", "IVF_FLAT"), {"num_partitions": 2, "metric": "manhattan"}),
    "string column": (("s", "IVF_FLAT"), {"num_partitions": 2}),
    "list column": (("lst", "IVF_FLAT"), {"num_partitions": 2}),
    "dim not divisible by num_sub_vectors": (("vec", "IVF_PQ"), {"num_partitions": 2, "num_sub_vectors": 5}),
    "unknown index type": (("vec", "IVF_NOPE"), {"num_partitions": 2}),
    "existing name": (("vec", "IVF_FLAT"), {"num_partitions": 2}),
    "existing explicit name, other type": (("vec", "IVF_SQ"), {"num_partitions": 2, "name": "vec_idx"}),
}


def _copy(src: str, tmp_path) -> str:
    uri = str(tmp_path / "ds.lance")
    shutil.copytree(src, uri)
    return uri


@pytest.mark.lancelet_only
@pytest.mark.parametrize("name", list(BAD_INDEXES))
def test_bad_index_requests_raise_invalid_argument(err_uris, tmp_path, lib, name):
    from lancelet.errors import InvalidArgumentError

    uri = _copy(err_uris["indexed"], tmp_path)
    args, kwargs = BAD_INDEXES[name]
    before = (lance.dataset(uri).version, lance.dataset(uri).list_indices())
    with pytest.raises(InvalidArgumentError) as info:
        lib.dataset(uri).create_index(*args, **kwargs)
    assert isinstance(info.value, ValueError)
    assert (lance.dataset(uri).version, lance.dataset(uri).list_indices()) == before
    if name.startswith("existing"):
        lib.dataset(uri).create_index(*args, replace=True, **kwargs)
        listed = lance.dataset(uri).list_indices()
        assert [x["name"] for x in listed] == ["vec_idx"] and listed[0]["uuid"] != before[1][0]["uuid"]
        assert listed[0]["type"] == args[1]


@pytest.mark.parametrize("name", list(BAD_INDEXES))
def test_pylance_refuses_the_same_bad_index_requests(err_uris, tmp_path, name):
    uri = _copy(err_uris["indexed"], tmp_path)
    args, kwargs = BAD_INDEXES[name]
    with pytest.raises(Exception):
        lance.dataset(uri).create_index(*args, **kwargs)


def _damage(path: str, mode: str) -> None:
    with open(path, "rb") as f:
        data = f.read()
    n = len(data)
    data = {
        "truncate_half": lambda: data[: n // 2],
        "overwrite_footer": lambda: data[: n - 40] + b"\xff" * 40,
        "zeros": lambda: bytes(n),
        "empty": lambda: b"",
        "overwrite_middle": lambda: data[: n // 3] + b"\xab" * 64 + data[n // 3 + 64:],
    }[mode]()
    with open(path, "wb") as f:
        f.write(data)


@pytest.fixture(scope="module")
def corruption_sources(tmp_path_factory, lib) -> Callable[[str, str], str]:
    cache: Dict[tuple, str] = {}

    def get(builder: str, case: str) -> str:
        if (builder, case) not in cache:
            module = _module(builder, lib)
            uri = str(tmp_path_factory.mktemp(f"clean_{builder}_{case}") / "ds.lance")
            module.write_dataset(_table(_LIFE_VECS[:1000]), uri, max_rows_per_file=500)
            module.dataset(uri).create_index("vec", INDEX_CASES[case][0], num_partitions=4, **INDEX_CASES[case][1])
            cache[(builder, case)] = uri
        return cache[(builder, case)]

    return get


@pytest.mark.lancelet_only
@pytest.mark.parametrize("mode", ["truncate_half", "overwrite_footer", "zeros", "empty", "overwrite_middle"])
@pytest.mark.parametrize("file_name", ["auxiliary.idx", "index.idx"])
@pytest.mark.parametrize("case", ["IVF_FLAT", "IVF_PQ8", "IVF_SQ"])
@pytest.mark.parametrize("builder", ["pylance", "lib"])
def test_damaged_index_file_raises_corrupt_file_error(tmp_path, lib, corruption_sources, builder, case, file_name,
                                                       mode):
    """A search through a damaged ``auxiliary.idx`` or ``index.idx`` raises CorruptFileError
    (bytes overwritten in the middle may go unnoticed: then k valid rows come back);
    use_index=False still works."""
    from lancelet.errors import CorruptFileError

    uri = _copy(corruption_sources(builder, case), tmp_path)
    uuid = lance.dataset(uri).list_indices()[0]["uuid"]
    _damage(os.path.join(uri, "_indices", uuid, file_name), mode)
    vecs = _LIFE_VECS[:1000]
    q = _LIFE_Q[1]
    ds = lib.dataset(uri)
    if mode == "overwrite_middle":
        try:
            t = _nn(ds, q, 10, nprobes=4)
        except CorruptFileError:
            pass
        else:
            assert t.num_rows == 10 and set(_ids(t)) <= set(range(1000))
    else:
        with pytest.raises(CorruptFileError):
            _nn(ds, q, 10, nprobes=4)
        with pytest.raises(CorruptFileError):
            _nn(ds, np.stack([q, q]), 10, nprobes=4)
    t = _nn(lib.dataset(uri), q, 10, use_index=False)
    assert _ids(t) == _truth(vecs, q, "L2", 10)[0]
    assert "vec_idx" in {x["name"] for x in lib.dataset(uri).list_indices()}
    assert lib.dataset(uri).count_rows() == 1000


# --------------------------------------------------------------------------------------
# 5. Property: exact search equals numpy
# --------------------------------------------------------------------------------------


@st.composite
def vector_case(draw) -> Dict[str, Any]:
    dim = draw(st.integers(1, 8))
    n = draw(st.integers(1, 60))
    dtype = draw(st.sampled_from(FLOATS))
    # small integers: L2 and dot are exact in every float type, so ties are real ties
    flat = draw(st.lists(st.integers(-4, 4), min_size=n * dim, max_size=n * dim))
    q = draw(st.lists(st.integers(-4, 4), min_size=dim, max_size=dim))
    return {"vecs": np.array(flat, dtype=dtype).reshape(n, dim), "q": np.array(q, np.float32),
            "k": draw(st.integers(1, 70)), "per_file": draw(st.sampled_from([7, 25, 1000]))}


@pytest.mark.parametrize("metric", _metric_params())
@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(case=vector_case())
def test_random_exact_search_equals_numpy(lib, metric, case):
    vecs, q, k = case["vecs"], case["q"], case["k"]
    keep = None
    if metric == "cosine":
        if not np.any(q):
            q = q.copy()
            q[0] = 1
        keep = np.linalg.norm(vecs.astype(np.float64), axis=1) > 0  # cosine is undefined for zero vectors
        if not keep.any():
            return
        vecs = vecs[keep]
    d = _distances(vecs, q, metric)
    tmp = tempfile.mkdtemp(prefix="vs_hyp_")
    try:
        uri = os.path.join(tmp, "ds.lance")
        lib.write_dataset(_table(vecs), uri, max_rows_per_file=case["per_file"])
        t = _nn(lib.dataset(uri), q, k, metric=metric)
        ids = _ids(t)
        assert t.num_rows == min(k, len(vecs))
        _close(_dist(t), d[ids], what="reported distances")
        if metric == "cosine":
            # ties up to rounding: check the distances, not the order among equal ones
            expected = np.sort(d)[: len(ids)]
            _close(_dist(t), expected)
            assert len(set(ids)) == len(ids)
        else:
            assert ids == _truth(vecs, q, metric, k)[0]
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


@pytest.mark.lancelet_only
@pytest.mark.parametrize("index_type", ["IVF_FLAT", "IVF_PQ"])
@pytest.mark.parametrize("writer", ["lancelet", "pylance"])
def test_vector_indexes_with_stable_row_ids_interoperate_through_deletes_updates_and_compaction(
    tmp_path, writer, index_type
):
    import lancelet

    # With stable row ids a vector index holds row ids, not row addresses (pylance's
    # files do). lancelet used to write addresses and read ids as addresses: from the
    # second fragment on, each library's index returned the wrong rows to the other.
    rng = np.random.default_rng(5)
    n, dim = 3000, 16
    vec = rng.standard_normal((n, dim)).astype("float32")
    t = pa.table({"id": pa.array(range(n), pa.int64()), "v": pa.FixedSizeListArray.from_arrays(pa.array(vec.ravel()), dim)})
    uri = str(tmp_path / "ds.lance")
    lib = lancelet if writer == "lancelet" else lance
    lib.write_dataset(t, uri, max_rows_per_file=1000, enable_stable_row_ids=True)
    ds = lib.dataset(uri)
    ds.delete("id < 500")
    extra = {"num_sub_vectors": 4} if index_type == "IVF_PQ" else {}
    ds.create_index("v", index_type, num_partitions=4, **extra)

    def top(reader, row, k=3):
        got = reader.dataset(uri).to_table(
            nearest={"column": "v", "q": vec[row], "k": k, "nprobes": 4, "refine_factor": 10}, columns=["id"]
        )
        return got.column("id").to_pylist()

    for row in (600, 1500, 2500):
        for reader in (lancelet, lance):
            assert top(reader, row)[0] == row, (reader.__name__, row)
    # An update moves a row (with its id) to a new fragment; compaction rewrites fragments.
    lancelet.dataset(uri).update({"id": "id + 10000"}, where="id = 2500")
    lancelet.dataset(uri).optimize.compact_files(target_rows_per_fragment=5000)
    for reader in (lancelet, lance):
        assert top(reader, 1500)[0] == 1500, reader.__name__
        assert top(reader, 2500)[0] == 12500, reader.__name__
