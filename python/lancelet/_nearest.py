"""Nearest-neighbour search: ``scanner(nearest={...})`` and ``create_index``.

The search runs in the native layer (exact over the rows, or through IVF indexes over the
fragments they cover, merged with an exact search of the rest); this module checks
pylance's arguments and shapes the result like pylance's: the requested columns, then
``_distance`` (and ``_rowid``), ordered by distance; a 2-D ``q`` runs one search per row
and adds ``query_index`` first.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, Optional, Tuple

import pyarrow as pa

from ._native import index as _native_index
from ._ranked import RankedScanner
from .errors import InvalidArgumentError

if TYPE_CHECKING:  # pragma: no cover
    from ._native.index import _NearestArgs, _VectorIndexOptions

_KEYS = {
    "column",
    "q",
    "k",
    "nprobes",
    "minimum_nprobes",
    "maximum_nprobes",
    "refine_factor",
    "metric",
    "use_index",
    "ef",
    "distance_range",
    "approx_mode",
    "search_effort",
}


def _queries(q: Any) -> tuple:
    """The query vectors as lists of floats, and whether ``q`` was a batch (2-D)."""
    import numpy as np  # noqa: PLC0415 (optional dependency, needed by vector search only)

    if isinstance(q, (pa.Array, pa.ChunkedArray)):
        q = q.to_pylist()
    if isinstance(q, pa.Scalar):
        q = q.as_py()
    arr = np.asarray(q, dtype=np.float64)
    if arr.ndim == 1:
        return [arr.astype(np.float32).tolist()], False
    if arr.ndim == 2:
        return [row.astype(np.float32).tolist() for row in arr], True
    raise InvalidArgumentError(f"nearest 'q' must be a vector or a 2-D array of vectors, got {arr.ndim} dimensions")


def _positive(name: str, v: Any, call: str = "nearest") -> Optional[int]:
    """``v`` as an int (``None`` stays ``None``); anything but a positive integer is an
    error naming ``call``, the call the user made (``nearest`` or ``create_index``)."""
    import numpy as np  # noqa: PLC0415 (optional dependency, needed by vector search only)

    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v <= 0:
        raise InvalidArgumentError(f"{call}: {name!r} must be a positive integer, got {v!r}")
    return int(v)


class NearestScanner(RankedScanner):
    """A nearest-neighbour scan (see :meth:`LanceDataset.scanner` with ``nearest=``)."""

    def __init__(
        self,
        ds: Any,
        nearest: Dict[str, Any],
        columns: Any = None,
        filter: Optional[str] = None,
        prefilter: Optional[bool] = None,
        fast_search: Optional[bool] = None,
        limit: Optional[int] = None,
        offset: Optional[int] = None,
        with_row_id: Optional[bool] = None,
    ):
        if not isinstance(nearest, dict):
            raise TypeError(f"nearest must be a dict, got {type(nearest).__name__}")
        unknown = set(nearest) - _KEYS
        if unknown:
            raise InvalidArgumentError(f"unknown nearest option(s) {sorted(unknown)}")
        if "column" not in nearest or "q" not in nearest:
            raise InvalidArgumentError("nearest needs 'column' and 'q'")
        if columns is not None and not isinstance(columns, list):
            raise InvalidArgumentError("nearest scans take a list of column names")
        queries, batch = _queries(nearest["q"])
        k = _positive("k", nearest.get("k", 10)) or 10
        nprobes = _positive("nprobes", nearest.get("nprobes"))
        lo = _positive("minimum_nprobes", nearest.get("minimum_nprobes"))
        if nprobes is None and lo is not None:
            nprobes = lo
        dr = nearest.get("distance_range")
        if dr is not None:
            if not isinstance(dr, (tuple, list)) or len(dr) != 2:
                raise InvalidArgumentError("distance_range must be a (lower, upper) pair")
            dr = (None if dr[0] is None else float(dr[0]), None if dr[1] is None else float(dr[1]))
        metric = nearest.get("metric")
        self._ds = ds
        self._limit, self._offset = limit, offset or 0
        self._args: _NearestArgs = {
            "column": nearest["column"],
            "queries": queries,
            "batch": batch,
            "k": k,
            "nprobes": nprobes,
            "refine_factor": _positive("refine_factor", nearest.get("refine_factor")),
            "metric": None if metric is None else str(metric).lower(),
            "use_index": bool(nearest.get("use_index", True)),
            "distance_range": dr,
            "columns": columns,
            "filter": filter,
            "prefilter": bool(prefilter),
            "fast_search": bool(fast_search),
            "with_row_id": bool(with_row_id),
            "ef": _positive("ef", nearest.get("ef")),
        }

    def to_table(self) -> pa.Table:
        """The neighbours as a ``pyarrow.Table``."""
        t = pa.RecordBatchReader.from_stream(_native_index.nearest(self._ds._native, self._args)).read_all()
        if self._offset or self._limit is not None:
            end = None if self._limit is None else self._offset + self._limit
            t = t.slice(self._offset, None if end is None else end - self._offset)
        return t

    def explain_plan(self, verbose: bool = False) -> str:
        """A readable description of the search: the index segments used, or a flat search."""
        del verbose
        a = self._args
        segs = [s for s in self._ds.list_indices() if s["fields"] == [a["column"]] and s["type"].startswith("IVF")]
        if segs and a["use_index"]:
            how = (
                f"ANNSubIndex: name={segs[0]['name']}, k={a['k'] * (a['refine_factor'] or 1)}, "
                f"deltas={len(segs)}, nprobes={a['nprobes'] or 20}"
            )
        else:
            how = f"KNNVectorDistance: column={a['column']} (exact)"
        return f"TopK: k={a['k']}\n  {how}\n" + (
            f"  Filter ({'pre' if a['prefilter'] else 'post'}): {a['filter']}\n" if a["filter"] else ""
        )


def _vector_args(
    index_type: str,
    metric: str,
    num_partitions: Optional[int],
    ivf_centroids: Any,
    pq_codebook: Any,
    num_sub_vectors: Optional[int],
    kwargs: Dict[str, Any],
) -> Tuple[str, _VectorIndexOptions]:
    """The native index type and build options of a vector index (pylance's
    ``create_index`` options)."""
    import numpy as np  # noqa: PLC0415 (optional dependency, needed by vector search only)

    kind = index_type.upper()
    if kind == "IVF_PQ" and num_sub_vectors is None:
        raise InvalidArgumentError("num_partitions and num_sub_vectors are required for IVF_PQ")
    num_bits = kwargs.pop("num_bits", 8)
    target = kwargs.pop("target_partition_size", None)
    sample_rate = kwargs.pop("sample_rate", 256)
    max_iters = kwargs.pop("max_iters", 50)
    for ignored in (
        "accelerator",
        "index_cache_size",
        "shuffle_partition_batches",
        "shuffle_partition_concurrency",
        "storage_options",
        "filter_nan",
        "one_pass_ivfpq",
        "skip_transpose",
        "train",
        "precomputed_partitions_file",
        "m",
        "ef_construction",
        "max_level",
    ):
        kwargs.pop(ignored, None)
    if kwargs:
        raise TypeError(f"create_index() got unexpected keyword arguments {sorted(kwargs)}")
    centroids = None if ivf_centroids is None else np.asarray(ivf_centroids, dtype=np.float32).ravel().tolist()
    codebook = None if pq_codebook is None else np.asarray(pq_codebook, dtype=np.float32).ravel().tolist()
    return kind, {
        "metric": str(metric).lower(),
        "num_partitions": _positive("num_partitions", num_partitions, "create_index"),
        "num_sub_vectors": _positive("num_sub_vectors", num_sub_vectors, "create_index"),
        "num_bits": int(num_bits),
        "target_partition_size": _positive("target_partition_size", target, "create_index"),
        "sample_rate": int(sample_rate),
        "max_iters": int(max_iters),
        "ivf_centroids": centroids,
        "pq_codebook": codebook,
    }


def _one_column(column: Any) -> Any:
    if isinstance(column, (list, tuple)):
        if len(column) != 1:
            raise InvalidArgumentError("vector indexes cover one column")
        column = column[0]
    return column


def create_index(
    ds: Any,
    column: Any,
    index_type: str,
    name: Optional[str] = None,
    metric: str = "L2",
    replace: bool = False,
    num_partitions: Optional[int] = None,
    ivf_centroids: Any = None,
    pq_codebook: Any = None,
    num_sub_vectors: Optional[int] = None,
    **kwargs: Any,
) -> Any:
    """``LanceDataset.create_index`` (see there)."""
    column = _one_column(column)
    if not isinstance(index_type, str):
        raise TypeError(f"index_type must be a str, got {type(index_type).__name__}")
    kind = index_type.upper()
    if kind in ("BTREE", "BITMAP", "LABEL_LIST", "ZONEMAP", "NGRAM", "BLOOMFILTER"):
        return ds.create_scalar_index(column, kind, name=name, replace=replace)
    kind, options = _vector_args(kind, metric, num_partitions, ivf_centroids, pq_codebook, num_sub_vectors, kwargs)
    native = _native_index.create_vector_index(
        ds._native, column, kind, {**options, "name": name, "replace": bool(replace)}
    )
    ds._move_to(native)
    return ds


def build_vector_segment(
    ds: Any,
    column: Any,
    index_type: str,
    fragment_ids: Any,
    name: Optional[str],
    metric: str,
    replace: bool,
    num_partitions: Optional[int],
    ivf_centroids: Any,
    pq_codebook: Any,
    num_sub_vectors: Optional[int],
    kwargs: Dict[str, Any],
) -> Dict[str, Any]:
    """One vector index segment over ``fragment_ids``, not committed (see
    ``LanceDataset.create_index_uncommitted``); its index dict."""
    kind, options = _vector_args(
        index_type, metric, num_partitions, ivf_centroids, pq_codebook, num_sub_vectors, kwargs
    )
    return _native_index.build_vector_index_segment(
        ds._native,
        _one_column(column),
        kind,
        [int(f) for f in fragment_ids],
        {**options, "name": name, "replace": bool(replace)},
    )
