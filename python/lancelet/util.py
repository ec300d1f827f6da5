"""pylance's ``lance.util``: :class:`KMeans` (the clustering IVF indexes train with) and
:func:`validate_vector_index` (in-sample recall of a vector index).

>>> import numpy as np
>>> from lancelet.util import KMeans
>>> km = KMeans(4, metric_type="l2")
>>> km.fit(np.random.default_rng(0).standard_normal((200, 8)).astype(np.float32))
>>> len(km.predict(np.zeros((3, 8), np.float32)))
3
"""

from __future__ import annotations

from typing import Any, Optional, Union

import numpy as np
import pyarrow as pa

from ._native import index as _native_index

__all__ = ["KMeans", "validate_vector_index"]

_METRICS = ("l2", "euclidean", "cosine", "dot")


class KMeans:
    """K-means over float32 vectors with the ``l2``, ``cosine`` or ``dot`` metric, as
    pylance's ``lance.util.KMeans``: :meth:`fit` trains ``k`` centroids (k-means++
    initialisation, at most ``max_iters`` Lloyd iterations, a fixed seed), :meth:`predict`
    gives each vector's nearest centroid; ``centroids=`` starts from given centroids, which
    :meth:`predict` then uses without training.
    """

    def __init__(self, k: int, metric_type: str = "l2", max_iters: int = 50, centroids: Optional[pa.Array] = None):
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise ValueError(f"k must be a positive int, got {k!r}")
        if not isinstance(metric_type, str) or metric_type.lower() not in _METRICS:
            raise ValueError(f"Invalid metric_type: {metric_type}")
        self.k = k
        self.max_iters = max_iters
        self._metric_type = metric_type.lower()
        self._centroids: Optional[np.ndarray] = None
        if centroids is not None:
            self._centroids = _rows(centroids)

    def __repr__(self) -> str:
        return f"lancelet.KMeans(k={self.k}, metric_type={self._metric_type})"

    @property
    def centroids(self) -> Optional[pa.FixedShapeTensorArray]:
        """The centroids (a fixed-shape tensor array of ``k`` rows), or None before training."""
        if self._centroids is None:
            return None
        dim = self._centroids.shape[1]
        storage = pa.FixedSizeListArray.from_arrays(pa.array(self._centroids.reshape(-1), pa.float32()), dim)
        return pa.FixedShapeTensorArray.from_storage(pa.fixed_shape_tensor(pa.float32(), (dim,)), storage)

    def fit(self, data: Union[pa.FixedSizeListArray, "pa.FixedShapeTensorArray", np.ndarray]) -> None:
        """Trains the centroids on ``data`` (a 2-D float32 array: numpy, fixed-size lists or
        a 1-D fixed-shape tensor)."""
        rows = _rows(data)
        dim = rows.shape[1]
        raw = _native_index.kmeans_fit(rows.tobytes(), dim, self.k, self._metric_type, self.max_iters)
        self._centroids = np.frombuffer(raw, dtype="<f4").reshape(-1, dim).copy()

    def predict(self, data: Union[pa.FixedSizeListArray, "pa.FixedShapeTensorArray", np.ndarray]) -> pa.UInt32Array:
        """The index of each row's nearest centroid."""
        if self._centroids is None:
            raise ValueError("KMeans is not trained: call fit() or give centroids=")
        rows = _rows(data)
        if rows.shape[1] != self._centroids.shape[1]:
            raise ValueError(f"data has dimension {rows.shape[1]}, the centroids {self._centroids.shape[1]}")
        got = _native_index.kmeans_predict(self._centroids.tobytes(), rows.tobytes(), rows.shape[1], self._metric_type)
        return pa.array(got, pa.uint32())


def _rows(data: Any) -> np.ndarray:
    """``data`` as a C-contiguous 2-D float32 numpy array, with pylance's messages for
    what it refuses."""
    if isinstance(data, pa.ChunkedArray):
        data = data.combine_chunks()
    if isinstance(data, pa.FixedShapeTensorArray):
        if len(data.type.shape) != 1:
            raise ValueError(f"Fixed shape tensor array must be a 1-D array, got {len(data.type.shape)}-D")
        data = data.storage
    if isinstance(data, pa.FixedSizeListArray):
        if data.type.value_type != pa.float32():
            raise ValueError(f"Array must be float32 type, got: {data.type.value_type}")
        if data.null_count:
            raise ValueError("vectors must not be null")
        flat = data.flatten().to_numpy(zero_copy_only=False)
        return np.ascontiguousarray(flat.reshape(len(data), data.type.list_size), dtype="<f4")
    if isinstance(data, np.ndarray):
        if data.ndim != 2:
            raise ValueError(f"Numpy array must be a 2-D array, got {data.ndim}-D")
        if data.dtype != np.float32:
            raise ValueError(f"Numpy array must be float32 type, got: {data.dtype}")
        return np.ascontiguousarray(data, dtype="<f4")
    raise ValueError("Data must be a FixedSizeListArray, Tensor or numpy array")


def validate_vector_index(
    dataset: Any,
    column: str,
    refine_factor: int = 5,
    sample_size: Optional[int] = None,
    pass_threshold: float = 1.0,
) -> None:
    """Checks a vector index by in-sample queries, as pylance's: each sampled vector (all of
    them when ``sample_size`` is None) searched with ``k=1`` (and ``refine_factor``) must
    find a row with its own vector; ``ValueError`` when fewer than ``pass_threshold`` of
    them do.

    >>> validate_vector_index(ds, "emb", sample_size=100)  # doctest: +SKIP
    """
    data = dataset.to_table(columns=[column]) if sample_size is None else dataset.sample(sample_size, columns=[column])
    vectors = data.column(column).to_pylist()
    passes = 0
    for v in vectors:
        got = dataset.to_table(
            columns=[column], nearest={"column": column, "q": v, "k": 1, "refine_factor": refine_factor}
        )
        if got.num_rows and np.allclose(
            np.asarray(got.column(column)[0].as_py(), np.float32), np.asarray(v, np.float32)
        ):
            passes += 1
    total = len(vectors)
    if total and passes / total < pass_threshold:
        raise ValueError(f"Vector index failed sanity check, only {passes}/{total} passed")
