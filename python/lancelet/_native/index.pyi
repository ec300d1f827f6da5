# `lancelet._native.index`: secondary indexes, vector and full-text search
# (rust/lancelet-python/src/index.rs, fts.rs).
from typing import Any, Callable, Dict, List, Optional, Tuple, TypedDict

from typing_extensions import NotRequired

from . import BatchStream
from .dataset import Dataset

# Indexes (rust/lancelet-python/src/index.rs)
def list_indices(ds: "Dataset") -> List[Dict[str, Any]]: ...
def drop_index(ds: "Dataset", name: str) -> "Dataset": ...
def create_scalar_index(
    ds: "Dataset",
    column: str,
    index_type: str,
    name: Optional[str] = None,
    replace: bool = True,
    params: Optional[Dict[str, float]] = None,
) -> "Dataset": ...

class _ScalarIndexOptions(TypedDict, total=False):
    name: Optional[str]
    replace: bool
    params: Optional[Dict[str, float]]

def build_scalar_segment(
    ds: "Dataset", column: str, index_type: str, fragment_ids: List[int], options: _ScalarIndexOptions = ...
) -> Dict[str, Any]: ...

class _VectorIndexOptions(TypedDict, total=False):
    name: Optional[str]
    metric: str
    replace: bool
    num_partitions: Optional[int]
    num_sub_vectors: Optional[int]
    num_bits: Optional[int]
    target_partition_size: Optional[int]
    sample_rate: Optional[int]
    max_iters: Optional[int]
    ivf_centroids: Optional[List[float]]
    pq_codebook: Optional[List[float]]

def build_vector_index_segment(
    ds: "Dataset", column: str, index_type: str, fragment_ids: List[int], options: _VectorIndexOptions = ...
) -> Dict[str, Any]: ...
def merge_index_segments(ds: "Dataset", segments: List[Dict[str, Any]]) -> Dict[str, Any]: ...
def commit_existing_index_segments(
    ds: "Dataset", name: str, column: str, segments: List[Dict[str, Any]]
) -> "Dataset": ...
def index_segment_statistics(ds: "Dataset", uuid: str) -> Dict[str, str]: ...
def optimize_indices(
    ds: "Dataset", num_indices_to_merge: Optional[int] = None, index_names: Optional[List[str]] = None
) -> "Dataset": ...
def create_vector_index(
    ds: "Dataset", column: str, index_type: str, options: _VectorIndexOptions = ...
) -> "Dataset": ...

class _NearestArgs(TypedDict):
    column: str
    queries: List[List[float]]
    batch: NotRequired[bool]
    k: NotRequired[int]
    nprobes: NotRequired[Optional[int]]
    refine_factor: NotRequired[Optional[int]]
    metric: NotRequired[Optional[str]]
    use_index: NotRequired[bool]
    distance_range: NotRequired[Optional[Tuple[Optional[float], Optional[float]]]]
    columns: NotRequired[Optional[List[str]]]
    filter: NotRequired[Optional[str]]
    prefilter: NotRequired[bool]
    fast_search: NotRequired[bool]
    with_row_id: NotRequired[bool]
    ef: NotRequired[Optional[int]]

def nearest(ds: "Dataset", search: _NearestArgs) -> "BatchStream": ...
def vector_index_statistics(ds: "Dataset", uuid: str) -> str: ...
def fts_index_statistics(ds: "Dataset", uuid: str) -> str: ...
def create_fts_index(
    ds: "Dataset",
    column: str,
    params: str,
    name: Optional[str] = None,
    replace: bool = True,
    progress: Optional[Callable[[str, str, int, Optional[int], str], None]] = None,
) -> "Dataset": ...

class _FullTextArgs(TypedDict):
    query: str
    columns: NotRequired[Optional[List[str]]]
    filter: NotRequired[Optional[str]]
    prefilter: NotRequired[bool]
    limit: NotRequired[Optional[int]]
    offset: NotRequired[int]
    fast_search: NotRequired[bool]
    with_row_id: NotRequired[bool]

def full_text_search(ds: "Dataset", search: _FullTextArgs) -> "BatchStream": ...

class _FusionOptions(TypedDict, total=False):
    limit: Optional[int]
    offset: int
    fusion: Optional[str]
    rrf_k: float
    weight: float

def hybrid_search(
    ds: "Dataset", nearest: _NearestArgs, text_query: str, options: _FusionOptions = ...
) -> "BatchStream": ...
def tokenize(params: str, text: str) -> List[str]: ...
def fts_param_names() -> List[str]: ...
def stage_fts_part(ds: "Dataset", column: str, params: str, index_uuid: str, fragment_ids: List[int]) -> None: ...
def merge_fts_parts(ds: "Dataset", index_uuid: str) -> None: ...
def build_fts_segment(
    ds: "Dataset",
    column: str,
    fragment_ids: List[int],
    params: str,
    name: Optional[str] = None,
    replace: bool = False,
) -> Dict[str, Any]: ...
def train_vector_model(
    ds: "Dataset", column: str, index_type: str, options: _VectorIndexOptions = ..., sample_rows: int = 65536
) -> List[Tuple[str, bytes]]: ...
def build_vector_segment(
    ds: "Dataset", column: str, name: str, model: List[Tuple[str, bytes]], fragments: List[int]
) -> bytes: ...
def commit_index_segments(ds: "Dataset", name: str, segments: List[bytes], replace: bool = False) -> "Dataset": ...

# k-means (rust/lancelet-python/src/kmeans.rs)
def kmeans_fit(data: bytes, dim: int, k: int, metric_type: str, max_iters: int = 50, seed: int = 42) -> bytes: ...
def kmeans_predict(centroids: bytes, data: bytes, dim: int, metric_type: str) -> List[int]: ...
