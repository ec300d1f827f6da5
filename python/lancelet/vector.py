"""Vector helpers with the names of pylance's ``lance.vector`` that need no index:

* :func:`vec_to_table` builds a table of ``fixed_size_list<float32, n>`` vectors;
* :func:`hamming_clustering_for_sample` and :func:`hamming_clustering_for_range` group
  near-duplicate binary hashes (``fixed_size_list<uint8, N>``, ``N`` a multiple of 8) of a
  dataset by Hamming distance.

They use numpy and pyarrow only. The index-based (``find_duplicate_pairs``,
``get_ivf_partition_info``...) and accelerator-based (``train_ivf_centroids_on_accelerator``...)
functions of ``lance.vector`` are not provided: lancelet has no vector indices yet.
"""

from __future__ import annotations

from typing import Any, Callable, List, Optional, Tuple, Union

import numpy as np
import pyarrow as pa

from .errors import InvalidArgumentError, UnsupportedFeatureError

__all__ = ["vec_to_table", "hamming_clustering_for_sample", "hamming_clustering_for_range"]


# --------------------------------------------------------------------------------------
# vec_to_table
# --------------------------------------------------------------------------------------


def _dims(vectors: Any, ndim: Optional[int]) -> Optional[int]:
    """The common length of ``vectors`` (``ndim`` when given; None for no vectors), checked
    for every vector."""
    for i, v in enumerate(vectors):
        n = len(v)
        if ndim is None:
            ndim = n
        elif n != ndim:
            raise InvalidArgumentError(f"vector {i} has {n} dimensions, expected {ndim}")
    return ndim


def _vector_array(vectors: Any, ndim: Optional[int]) -> pa.FixedSizeListArray:
    if ndim is None:
        if len(vectors) == 0:
            raise InvalidArgumentError("cannot infer the dimension of zero vectors: pass ndim=")
        ndim = len(vectors[0])
    values = np.asarray(vectors, dtype=np.float32).reshape(-1)
    if ndim <= 0 or values.size % ndim:
        raise InvalidArgumentError(f"{values.size} values do not make vectors of {ndim} dimensions")
    return pa.FixedSizeListArray.from_arrays(pa.array(values, pa.float32()), ndim)


def _names(names: Any, default: List[str], count: int) -> List[str]:
    if names is None:
        return default
    out = [names] if isinstance(names, str) else list(names) if isinstance(names, (list, tuple)) else None
    if out is None or len(out) != count or not all(isinstance(n, str) for n in out):
        raise InvalidArgumentError(f"names must be {count} column name(s), got {names!r}")
    return out


def vec_to_table(
    data: Union[dict, list, np.ndarray],
    names: Optional[Union[str, list]] = None,
    ndim: Optional[int] = None,
    check_ndim: bool = True,
) -> pa.Table:
    """A table of float32 vectors (``fixed_size_list<float32, ndim>``).

    ``data`` is a dict ``{id: vector}`` (giving columns ``names``, default ``["id",
    "vector"]``), or a list of vectors or a 2-D numpy array (one column, ``names`` default
    ``"vector"``). ``ndim`` is inferred from the first vector when omitted; with
    ``check_ndim`` every vector must have that many dimensions.

    >>> vec_to_table({"a": [1, 2], "b": [3, 4]}).column_names
    ['id', 'vector']
    """
    if isinstance(data, dict):
        out_names = _names(names, ["id", "vector"], 2)
        vectors = list(data.values())
        if check_ndim:
            ndim = _dims(vectors, ndim)
        return pa.Table.from_arrays([pa.array(list(data.keys())), _vector_array(vectors, ndim)], names=out_names)
    if isinstance(data, (list, np.ndarray)):
        out_names = _names(names, ["vector"], 1)
        if check_ndim:
            ndim = _dims(data, ndim)
        return pa.Table.from_arrays([_vector_array(data, ndim)], names=out_names)
    raise UnsupportedFeatureError(f"vec_to_table takes a dict, a list or a numpy array, got {type(data).__name__}")


# --------------------------------------------------------------------------------------
# Hamming clustering of binary hashes
# --------------------------------------------------------------------------------------

_RESULT_SCHEMA = pa.schema(
    [
        pa.field("representative", pa.uint64(), nullable=False),
        pa.field("duplicates", pa.list_(pa.uint64()), nullable=False),
    ]
)

#: Bytes of XOR results computed at once (bounds the memory of the pairwise pass).
_BLOCK_BYTES = 64 << 20

_BYTE_BITS = np.array([bin(i).count("1") for i in range(256)], dtype=np.uint8)


def _popcount_by_table(words: np.ndarray) -> np.ndarray:
    """Set bits of each uint64 word, for numpy < 2.0 (which has no ``bitwise_count``)."""
    return _BYTE_BITS[words.view(np.uint8)].reshape(words.shape + (8,)).sum(axis=-1)


_popcount: Callable[[np.ndarray], np.ndarray] = getattr(np, "bitwise_count", _popcount_by_table)


def _check_threshold(hamming_threshold: Any) -> int:
    if (
        isinstance(hamming_threshold, bool)
        or not isinstance(hamming_threshold, (int, np.integer))
        or hamming_threshold < 0
    ):
        raise InvalidArgumentError(f"hamming_threshold must be a non-negative integer, got {hamming_threshold!r}")
    return int(hamming_threshold)


def _hash_width(dataset: Any, column: str) -> int:
    """The byte width of ``column``'s hashes (checked to be ``fixed_size_list<uint8, N>``,
    ``N`` a positive multiple of 8)."""
    if not isinstance(column, str):
        raise InvalidArgumentError(f"column must be a column name, got {column!r}")
    schema = dataset.schema
    if column not in schema.names:
        raise InvalidArgumentError(f"column {column!r} is not in the dataset (columns: {schema.names})")
    t = schema.field(column).type
    if not (pa.types.is_fixed_size_list(t) and t.value_type == pa.uint8() and t.list_size > 0 and t.list_size % 8 == 0):
        raise InvalidArgumentError(
            f"column {column!r} must be fixed_size_list<uint8, N> with N a positive multiple of 8, got {t}"
        )
    return t.list_size


def _codes(hashes: pa.ChunkedArray, width: int) -> np.ndarray:
    """The hashes as an ``(n, width // 8)`` array of uint64 words; null hashes and null
    bytes count as zeros."""
    arr = hashes.combine_chunks() if isinstance(hashes, pa.ChunkedArray) else hashes
    out = np.zeros((len(arr), width), dtype=np.uint8)
    valid = np.asarray(arr.is_valid().to_numpy(zero_copy_only=False), dtype=bool)
    if valid.any():
        flat = arr.filter(pa.array(valid)).flatten().fill_null(0)
        out[valid] = np.asarray(flat.to_numpy(zero_copy_only=False), dtype=np.uint8).reshape(-1, width)
    return np.ascontiguousarray(out).view(np.uint64)


def _close_pairs(words: np.ndarray, threshold: int) -> Tuple[np.ndarray, np.ndarray]:
    """Every pair ``i < j`` of rows of ``words`` within ``threshold`` bits of each other."""
    n, k = words.shape
    left: List[np.ndarray] = []
    right: List[np.ndarray] = []
    rows = max(1, _BLOCK_BYTES // max(1, n * k * 8))
    for start in range(0, n, rows):
        block = words[start : start + rows]
        dist = _popcount(block[:, None, :] ^ words[None, :, :]).sum(axis=-1)
        i, j = np.nonzero(dist <= threshold)
        i = i + start
        keep = i < j
        left.append(i[keep])
        right.append(j[keep])
    if not left:
        return np.empty(0, np.int64), np.empty(0, np.int64)
    return np.concatenate(left), np.concatenate(right)


def _components(n: int, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """For each of ``n`` nodes, the smallest node of its connected component given the
    edges ``a[k] - b[k]``."""
    label = np.arange(n)
    if not len(a):
        return label
    while True:
        low = np.minimum(label[a], label[b])
        new = label.copy()
        np.minimum.at(new, a, low)
        np.minimum.at(new, b, low)
        new = new[new]
        if np.array_equal(new, label):
            return label
        label = new


def _clusters(row_ids: np.ndarray, words: np.ndarray, threshold: int) -> pa.RecordBatchReader:
    """Groups of at least two rows connected by pairs within ``threshold`` bits: each as
    its smallest row id and the other ids in ascending order, ordered by that smallest id."""
    if len(row_ids):
        unique, inverse = np.unique(words, axis=0, return_inverse=True)
        inverse = inverse.reshape(-1)
        a, b = _close_pairs(unique, threshold)
        group = _components(len(unique), a, b)[inverse]
    else:
        group = np.empty(0, np.int64)
    order = np.lexsort((row_ids, group))
    reps: List[int] = []
    dups: List[List[int]] = []
    ids, groups = row_ids[order], group[order]
    bounds = np.flatnonzero(np.diff(groups)) + 1 if len(groups) else np.empty(0, np.int64)
    for chunk in np.split(ids, bounds) if len(ids) else []:
        if len(chunk) > 1:
            reps.append(int(chunk[0]))
            dups.append([int(x) for x in chunk[1:]])
    keyed = sorted(zip(reps, dups))
    batch = pa.record_batch(
        [pa.array([r for r, _ in keyed], pa.uint64()), pa.array([d for _, d in keyed], pa.list_(pa.uint64()))],
        schema=_RESULT_SCHEMA,
    )
    return pa.RecordBatchReader.from_batches(_RESULT_SCHEMA, [batch])


def _plain(dataset: Any) -> Any:
    plain = getattr(dataset, "_plain", None)
    return plain() if plain is not None else dataset


def hamming_clustering_for_sample(
    dataset: Any,
    column: str,
    sample_size: Optional[int] = None,
    hamming_threshold: int = 10,
) -> pa.RecordBatchReader:
    """Clusters near-duplicate hashes among ``sample_size`` random live rows (all rows
    when None).

    ``column`` holds binary hashes (``fixed_size_list<uint8, N>``, ``N`` a multiple of 8).
    Two rows are linked when their hashes differ in at most ``hamming_threshold`` bits, and
    a cluster is a connected group of linked rows. Returns a reader of ``representative``
    (``uint64``: the cluster's smallest ``_rowid``) and ``duplicates`` (the cluster's other
    row ids, ascending), one row per cluster of two or more rows, ordered by representative.
    """
    width = _hash_width(dataset, column)
    threshold = _check_threshold(hamming_threshold)
    if sample_size is not None and (
        isinstance(sample_size, bool) or not isinstance(sample_size, (int, np.integer)) or sample_size < 0
    ):
        raise InvalidArgumentError(f"sample_size must be a non-negative integer, got {sample_size!r}")
    table = _plain(dataset).to_table(columns=[column], with_row_id=True)
    if sample_size is not None and sample_size < table.num_rows:
        pick = np.sort(np.random.default_rng().choice(table.num_rows, size=int(sample_size), replace=False))
        table = table.take(pa.array(pick))
    row_ids = np.asarray(table.column("_rowid").to_numpy(), dtype=np.uint64)
    return _clusters(row_ids, _codes(table.column(column), width), threshold)


def hamming_clustering_for_range(
    dataset: Any,
    column: str,
    fragment_id: int,
    start_row: int,
    num_rows: int,
    hamming_threshold: int = 10,
) -> pa.RecordBatchReader:
    """Clusters near-duplicate hashes among ``num_rows`` consecutive live rows of one
    fragment, from its ``start_row``-th live row (fewer at the fragment's end), e.g. one
    range per worker; ``start_row`` must be below the fragment's physical row count. Same
    output as :func:`hamming_clustering_for_sample`."""
    width = _hash_width(dataset, column)
    threshold = _check_threshold(hamming_threshold)
    for name, value in (("fragment_id", fragment_id), ("start_row", start_row), ("num_rows", num_rows)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
            raise InvalidArgumentError(f"{name} must be a non-negative integer, got {value!r}")
    fragment = dataset.get_fragment(int(fragment_id))
    if fragment is None:
        raise InvalidArgumentError(f"fragment {fragment_id} not found")
    if start_row >= fragment.physical_rows:
        raise InvalidArgumentError(
            f"start_row {start_row} is out of range for fragment {fragment_id} "
            f"with {fragment.physical_rows} physical rows"
        )
    table = _plain(dataset).to_table(
        columns=[column], fragments=[int(fragment_id)], offset=int(start_row), limit=int(num_rows), with_row_id=True
    )
    row_ids = np.asarray(table.column("_rowid").to_numpy(), dtype=np.uint64)
    return _clusters(row_ids, _codes(table.column(column), width), threshold)
