"""``lancelet.util``: ``KMeans`` and ``validate_vector_index``, the same program with
``lance`` and with ``lancelet``."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

import lancelet
import lancelet.util

lance = pytest.importorskip("lance")
pytest.importorskip("lance.util")  # makes lance.util an attribute of lance

LIBS = [pytest.param(lance, id="pylance"), pytest.param(lancelet, id="lancelet")]


def _blobs(n_per=200, dim=16, k=4, seed=7):
    rng = np.random.default_rng(seed)
    centers = rng.standard_normal((k, dim)).astype(np.float32) * 20
    x = np.concatenate([c + rng.standard_normal((n_per, dim)).astype(np.float32) for c in centers])
    return x, np.repeat(np.arange(k), n_per)


def _same_partition(a, b):
    """Two labelings that group the rows the same way (labels may differ)."""
    pairs = set(zip(a, b))
    return len(pairs) == len(set(a)) == len(set(b))


@pytest.mark.parametrize("metric", ["l2", "cosine", "dot"])
def test_kmeans_finds_the_clusters(metric):
    x, truth = _blobs()
    labels = {}
    # pylance 14's cosine k-means panics ("cosine is not supported"); lancelet's clusters.
    for lib in (lance, lancelet) if metric != "cosine" else (lancelet,):
        km = lib.util.KMeans(4, metric_type=metric)
        km.fit(x)
        labels[lib.__name__] = km.predict(x).to_pylist()
        assert len(km.centroids) == 4 and km.centroids.type.shape == [16]
    if metric != "dot":  # dot k-means has no single right answer on these blobs
        assert _same_partition(labels["lancelet"], truth)
        # pylance's k-means seeds at random and may settle in a local optimum here; lancelet's
        # k-means++ with a fixed seed recovers the clusters every time.


@pytest.mark.parametrize("lib", LIBS)
def test_kmeans_from_precomputed_centroids_predicts_the_same(lib):
    x, _ = _blobs()
    km = lib.util.KMeans(4, metric_type="l2")
    km.fit(x)
    values = np.stack(km.centroids.to_numpy(zero_copy_only=False)).flatten()
    again = lib.util.KMeans(4, metric_type="l2", centroids=pa.FixedSizeListArray.from_arrays(values, 16))
    assert again.predict(x) == km.predict(x)
    fsl = pa.FixedSizeListArray.from_arrays(pa.array(x.reshape(-1)), 16)
    assert km.predict(fsl) == km.predict(x)


@pytest.mark.parametrize("lib", LIBS)
def test_kmeans_refuses_what_pylance_refuses(lib):
    km = lib.util.KMeans(8)
    with pytest.raises(ValueError, match="must be a 1-D array"):
        km.fit(pa.FixedShapeTensorArray.from_numpy_ndarray(np.zeros((10, 4, 2), np.float32)))
    with pytest.raises(ValueError, match="Array must be float32 type, got: double"):
        km.fit(pa.FixedShapeTensorArray.from_numpy_ndarray(np.zeros((10, 4), np.float64)))
    with pytest.raises(ValueError, match="must be float32 type"):
        km.fit(np.zeros((10, 4), np.float64))
    with pytest.raises(ValueError):
        lib.util.KMeans(8, metric_type="hamming2")


@pytest.mark.parametrize("writer", LIBS)
def test_validate_vector_index(writer, tmp_path):
    rng = np.random.default_rng(3)
    v = rng.random((600, 16)).astype(np.float32)
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    table = pa.table({"emb": pa.FixedSizeListArray.from_arrays(pa.array(v.reshape(-1)), 16)})
    uri = str(tmp_path / "d")
    ds = writer.write_dataset(table, uri)
    ds.create_index("emb", "IVF_PQ", num_partitions=4, num_sub_vectors=4)
    for lib in (lance, lancelet):
        lib.util.validate_vector_index(lib.dataset(uri), "emb", sample_size=50)
    # A threshold above what is possible fails in both, with pylance's ValueError.
    for lib in (lance, lancelet):
        with pytest.raises(ValueError):
            lib.util.validate_vector_index(lib.dataset(uri), "emb", sample_size=20, pass_threshold=1.01)
