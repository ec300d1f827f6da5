# Type stubs of the native extension (rust/lancelet-python). Keep in step with the Rust glue:
# `python -m mypy.stubtest lancelet._native` (run by scripts/test.sh) fails on any drift.
from typing import Any, Callable, Dict, List, Optional, Tuple, Union, final

__version__: str
DEFAULT_FILE_VERSION: str

def set_worker_threads(threads: Optional[int] = None) -> None: ...
def _runtime_pid() -> Optional[int]: ...
def condition_columns(sql: str) -> List[List[str]]: ...
def evaluate_condition(batch: Any, sql: str) -> "BatchStream": ...

# merge_insert (rust/lancelet-python/src/merge.rs)
def merge_insert(
    d: "Dataset",
    source: Any,
    on: List[str],
    update: bool = False,
    update_condition: Optional[str] = None,
    insert: bool = False,
    delete: bool = False,
    delete_filter: Optional[str] = None,
    conflict_retries: int = 10,
    target_bases: List[str] = ...,
    target_all_bases: Optional[bool] = None,
) -> Tuple["Dataset", Dict[str, int]]: ...

# fragment-level operations (rust/lancelet-python/src/fragment_ops.rs)
def dataset_field_ids(d: "Dataset") -> List[int]: ...
def encode_row_ids(ids: List[int]) -> bytes: ...
def decode_row_ids(data: bytes) -> List[int]: ...

# merge, asof, UDF backfills (rust/lancelet-python/src/merge_columns.rs, asof.rs, backfill.rs)
def merge_columns(d: "Dataset", data: Any, left_on: str, right_on: Optional[str] = None) -> "Dataset": ...
def version_asof(d: "Dataset", cutoff_micros: int) -> Optional[int]: ...
def backfill(
    d: "Dataset",
    udf: Any,
    read_columns: Optional[List[str]] = None,
    batch_size: Optional[int] = None,
    output_schema: Any = None,
    checkpoint_file: Optional[str] = None,
    checkpoint_key: Optional[str] = None,
) -> "Dataset": ...
def backfill_schema(d: "Dataset", udf: Any, read_columns: Optional[List[str]] = None) -> Optional["BatchStream"]: ...
def backfill_fragment(
    d: "Dataset",
    fragment_id: int,
    udf: Any,
    schema: Any,
    read_columns: Optional[List[str]] = None,
    batch_size: Optional[int] = None,
    file_tag: Optional[str] = None,
) -> Dict[str, Any]: ...

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
def build_scalar_segment(
    ds: "Dataset",
    column: str,
    index_type: str,
    fragment_ids: List[int],
    name: Optional[str] = None,
    replace: bool = False,
    params: Optional[Dict[str, float]] = None,
) -> Dict[str, Any]: ...
def build_vector_index_segment(
    ds: "Dataset",
    column: str,
    index_type: str,
    fragment_ids: List[int],
    name: Optional[str] = None,
    metric: str = "l2",
    replace: bool = False,
    num_partitions: Optional[int] = None,
    num_sub_vectors: Optional[int] = None,
    num_bits: int = 8,
    target_partition_size: Optional[int] = None,
    sample_rate: int = 256,
    max_iters: int = 50,
    ivf_centroids: Optional[List[float]] = None,
    pq_codebook: Optional[List[float]] = None,
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
    ds: "Dataset",
    column: str,
    index_type: str,
    name: Optional[str] = None,
    metric: str = "l2",
    replace: bool = False,
    num_partitions: Optional[int] = None,
    num_sub_vectors: Optional[int] = None,
    num_bits: int = 8,
    target_partition_size: Optional[int] = None,
    sample_rate: int = 256,
    max_iters: int = 50,
    ivf_centroids: Optional[List[float]] = None,
    pq_codebook: Optional[List[float]] = None,
) -> "Dataset": ...
def nearest(
    ds: "Dataset",
    column: str,
    queries: List[List[float]],
    batch: bool = False,
    k: int = 10,
    nprobes: Optional[int] = None,
    refine_factor: Optional[int] = None,
    metric: Optional[str] = None,
    use_index: bool = True,
    distance_range: Optional[Tuple[Optional[float], Optional[float]]] = None,
    columns: Optional[List[str]] = None,
    filter: Optional[str] = None,
    prefilter: bool = False,
    fast_search: bool = False,
    with_row_id: bool = False,
    ef: Optional[int] = None,
) -> "BatchStream": ...
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
def full_text_search(
    ds: "Dataset",
    query: str,
    columns: Optional[List[str]] = None,
    filter: Optional[str] = None,
    prefilter: bool = False,
    limit: Optional[int] = None,
    offset: int = 0,
    fast_search: bool = False,
    with_row_id: bool = False,
) -> "BatchStream": ...
def hybrid_search(
    ds: "Dataset",
    column: str,
    queries: List[float],
    text_query: str,
    k: int = 10,
    nprobes: Optional[int] = None,
    refine_factor: Optional[int] = None,
    metric: Optional[str] = None,
    use_index: bool = True,
    distance_range: Optional[Tuple[Optional[float], Optional[float]]] = None,
    columns: Optional[List[str]] = None,
    filter: Optional[str] = None,
    prefilter: bool = False,
    fast_search: bool = False,
    with_row_id: bool = False,
    ef: Optional[int] = None,
    limit: Optional[int] = None,
    offset: int = 0,
    fusion: Optional[str] = None,
    rrf_k: float = 60.0,
    weight: float = 0.7,
) -> "BatchStream": ...
def tokenize(params: str, text: str) -> List[str]: ...
def fts_param_names() -> List[str]: ...
def build_fts_segment(
    ds: "Dataset",
    column: str,
    fragment_ids: List[int],
    params: str,
    name: Optional[str] = None,
    replace: bool = False,
) -> Dict[str, Any]: ...
def train_vector_model(
    ds: "Dataset",
    column: str,
    index_type: str,
    metric: str = "l2",
    num_partitions: Optional[int] = None,
    num_sub_vectors: Optional[int] = None,
    num_bits: int = 8,
    sample_rows: int = 65536,
) -> List[Tuple[str, bytes]]: ...
def build_vector_segment(
    ds: "Dataset", column: str, name: str, model: List[Tuple[str, bytes]], fragments: List[int]
) -> bytes: ...
def commit_index_segments(ds: "Dataset", name: str, segments: List[bytes], replace: bool = False) -> "Dataset": ...

# Branches, clones, tags on branches and base paths (see _branches.py).
def ds_allow_external_blobs(d: "Dataset", allow: bool) -> "Dataset": ...
def ds_external_blobs_allowed(d: "Dataset") -> bool: ...
def local_path(uri: str) -> Optional[str]: ...
def blob_locations(ds: "Dataset", column: str, addresses: List[int]) -> List[Optional[Tuple[str, bool, int, int]]]: ...
def read_blob_ranges(ds: "Dataset", requests: List[Tuple[str, bool, int, int, int, int]]) -> List[bytes]: ...
def read_blob_ranges_counted(
    ds: "Dataset", requests: List[Tuple[str, bool, int, int, int, int]]
) -> Tuple[List[bytes], int, int]: ...
def ds_branch(d: "Dataset") -> Optional[str]: ...
def ds_checkout_ref(
    d: "Dataset", kind: str, branch: Optional[str] = None, number: Optional[int] = None, tag: Optional[str] = None
) -> "Dataset": ...
def ds_create_branch(
    d: "Dataset",
    name: str,
    kind: str,
    branch: Optional[str] = None,
    number: Optional[int] = None,
    tag: Optional[str] = None,
) -> "Dataset": ...
def ds_list_branches(d: "Dataset") -> List[Tuple[str, Optional[str], int, str]]: ...
def ds_delete_branch(d: "Dataset", name: str) -> None: ...
def ds_replace_branch_metadata(d: "Dataset", name: str, metadata: str) -> None: ...
def ds_commit_operation(
    uri: str,
    kind: str,
    args: Dict[str, Any],
    read_version: Optional[int] = None,
    properties: Optional[Dict[str, str]] = None,
    storage_options: Optional[Dict[str, str]] = None,
    max_retries: Optional[int] = None,
    commit_namespace: Optional[Tuple[Any, List[str], str]] = None,
    commit_lock: Optional[Callable[[int], Any]] = None,
) -> "Dataset": ...
def ds_commit_clone(
    uri: str,
    is_shallow: bool,
    ref_name: Optional[str],
    ref_version: int,
    ref_path: str,
    branch_name: Optional[str],
    read_version: int,
    properties: Optional[Dict[str, str]] = None,
    storage_options: Optional[Dict[str, str]] = None,
) -> "Dataset": ...
def ds_read_transaction(d: "Dataset", version: Optional[int] = None) -> Optional[Dict[str, Any]]: ...
def ds_fragment_delete(d: "Dataset", id: int, predicate: str) -> Optional[Dict[str, Any]]: ...
def ds_tags(
    d: "Dataset",
) -> List[Tuple[str, int, int, Optional[str], Optional[str], Optional[str], Dict[str, str]]]: ...
def ds_replace_tag_metadata(d: "Dataset", name: str, metadata: Dict[str, str]) -> None: ...
def ds_set_tag(
    d: "Dataset", name: str, version: int, branch_given: bool, branch: Optional[str] = None, update: bool = False
) -> None: ...
def ds_delete_tag(d: "Dataset", name: str) -> None: ...
def ds_clone(
    d: "Dataset",
    target: str,
    deep: bool,
    kind: str,
    branch: Optional[str] = None,
    number: Optional[int] = None,
    tag: Optional[str] = None,
    storage_options: Optional[Dict[str, str]] = None,
) -> "Dataset": ...
def ds_base_paths(d: "Dataset") -> List[Tuple[int, Optional[str], bool, str]]: ...
def ds_add_bases(d: "Dataset", bases: List[Tuple[int, Optional[str], bool, str]]) -> "Dataset": ...
def ds_with_storage_options(d: "Dataset", options: Dict[str, str]) -> "Dataset": ...
def write_with_bases(
    uri: str,
    data: Any,
    mode: str,
    initial_bases: List[Tuple[int, Optional[str], bool, str]],
    targets: List[str] = ...,
    target_all_bases: Optional[bool] = None,
    max_rows_per_file: Optional[int] = None,
    max_bytes_per_file: Optional[int] = None,
    data_storage_version: Optional[str] = None,
    commit_message: Optional[str] = None,
    storage_options: Optional[Dict[str, str]] = None,
    commit_lock: Optional[Callable[[int], Any]] = None,
) -> "Dataset": ...

DEFAULT_MAX_ROWS_PER_FILE: int
DEFAULT_MAX_BYTES_PER_FILE: int

def manifest_name(version: int, naming: Optional[str] = None) -> str: ...
def manifest_version(name: str) -> Optional[int]: ...
def retry_conflicts(
    func: Callable[[], Any],
    retry_on: Tuple[type, ...],
    max_retries: Optional[int] = None,
    timeout: Optional[float] = None,
) -> Any: ...
def plan_partitions(
    fragments: List[Tuple[int, int, int]],
    rows_per_partition: Optional[int] = None,
    max_partitions: Optional[int] = None,
    min_partitions: Optional[int] = None,
) -> List[List[Tuple[int, int, int]]]: ...

@final
class BatchStream:
    def take_error(self) -> Optional[BaseException]: ...
    def __arrow_c_stream__(self, requested_schema: Any = None) -> Any: ...
    def __arrow_c_schema__(self) -> Any: ...

@final
class LoaderRows:
    @staticmethod
    def scan(ds: "Dataset", filter: Optional[str] = None) -> "LoaderRows": ...
    def __len__(self) -> int: ...
    def epoch(self, plan: Tuple[int, str, int, int, int, int, int, bool, bool]) -> "LoaderBatches": ...
    def count(self, plan: Tuple[int, str, int, int, int, int, int, bool, bool]) -> int: ...
    def positions(self, batches: List[List[Tuple[int, int]]]) -> "LoaderBatches": ...
    def strided(self, sharding: Tuple[int, int, int, bool, int, int]) -> "LoaderBatches": ...
    def sample(self, n: int, max_takes: int, seed: int, batch_size: int) -> "LoaderBatches": ...

@final
class LoaderBatches:
    def __len__(self) -> int: ...
    def rows_in(self, i: int) -> int: ...
    def read(
        self,
        columns: Optional[List[str]] = None,
        exprs: Optional[List[Tuple[str, str]]] = None,
        with_row_id: bool = False,
        start: int = 0,
        step: int = 1,
        readahead: int = 4,
    ) -> "BatchStream": ...

def sampler_ranges(kind: str, sharding: Tuple[int, int, int, bool, int, int], total: int) -> List[Tuple[int, int]]: ...
def permutation(n: int, seed: int, epoch: int) -> List[int]: ...

@final
class FileReader:
    @staticmethod
    def open(
        path: str, storage_options: Optional[Dict[str, str]] = None, verify_checksums: bool = True
    ) -> "FileReader": ...
    def num_rows(self) -> int: ...
    def __arrow_c_schema__(self) -> Any: ...
    def read_range(
        self,
        columns: Optional[List[str]] = None,
        start: int = 0,
        num_rows: Optional[int] = None,
        batch_size: int = 1024,
    ) -> BatchStream: ...
    def take(self, indices: List[int], columns: Optional[List[str]] = None, batch_size: int = 1024) -> BatchStream: ...
    def read_global_buffer(self, index: int) -> bytes: ...
    def io_stats(self) -> Tuple[int, int]: ...
    def metadata(self) -> Dict[str, Any]: ...

@final
class FileWriter:
    closed: bool
    def __new__(
        cls,
        path: str,
        schema: Any,
        version: Optional[str] = None,
        max_page_bytes: Optional[int] = None,
        dictionary: bool = True,
        data_cache_bytes: Optional[int] = None,
        page_stats: bool = False,
        storage_options: Optional[Dict[str, str]] = None,
        checksums: bool = True,
    ) -> "FileWriter": ...
    def write_batch(self, batch: Any) -> None: ...
    def add_global_buffer(self, data: bytes) -> int: ...
    def add_schema_metadata(self, key: str, value: str) -> None: ...
    def close(self) -> Optional[Tuple[int, int]]: ...
    def abort(self) -> None: ...

@final
class ScanStats:
    """Counters of one scan, filled in while it runs (pass to ``Dataset.scan(stats=...)``)."""
    def __init__(self) -> None: ...
    def snapshot(self) -> Dict[str, int]: ...

@final
class Dataset:
    @staticmethod
    def open(
        uri: str,
        version: Optional[Union[int, str]] = None,
        storage_options: Optional[Dict[str, str]] = None,
        commit_namespace: Optional[Tuple[Any, List[str], str]] = None,
    ) -> "Dataset": ...
    @staticmethod
    def write(
        uri: str,
        data: Any,
        mode: str = "create",
        max_rows_per_file: Optional[int] = None,
        max_bytes_per_file: Optional[int] = None,
        enable_v2_manifest_paths: bool = True,
        data_storage_version: Optional[str] = None,
        commit_message: Optional[str] = None,
        progress: Optional[Any] = None,
        storage_options: Optional[Dict[str, str]] = None,
        enable_stable_row_ids: bool = False,
        blob_options: Optional[Tuple[Optional[int], bool, bool]] = None,
        transaction_properties: Optional[Dict[str, str]] = None,
        commit_namespace: Optional[Tuple[Any, List[str], str]] = None,
        commit_lock: Optional[Callable[[int], Any]] = None,
        config: Optional[Dict[str, str]] = None,
    ) -> "Dataset": ...
    @staticmethod
    def write_fragments(
        uri: str,
        data: Any,
        mode: str = "append",
        max_rows_per_file: Optional[int] = None,
        max_bytes_per_file: Optional[int] = None,
        data_storage_version: Optional[str] = None,
        file_tag: Optional[str] = None,
        progress: Optional[Any] = None,
        storage_options: Optional[Dict[str, str]] = None,
    ) -> Tuple[List[Dict[str, Any]], Any, bool]: ...
    @staticmethod
    def commit(
        uri: str,
        kind: str,
        fragments: List[Dict[str, Any]],
        schema: Optional[Any] = None,
        read_version: Optional[int] = None,
        enable_v2_manifest_paths: bool = True,
        data_storage_version: Optional[str] = None,
        commit_message: Optional[str] = None,
        storage_options: Optional[Dict[str, str]] = None,
        transaction_properties: Optional[Dict[str, str]] = None,
        commit_namespace: Optional[Tuple[Any, List[str], str]] = None,
        commit_lock: Optional[Callable[[int], Any]] = None,
    ) -> "Dataset": ...
    @staticmethod
    def remove_tagged_files(
        uri: str, tag: str, keep: List[str], storage_options: Optional[Dict[str, str]] = None
    ) -> int: ...
    def checkout(self, version: Optional[Union[int, str]] = None) -> "Dataset": ...
    def uri(self) -> str: ...
    def set_commit_lock(self, lock: Optional[Callable[[int], Any]] = None) -> None: ...
    def has_commit_lock(self) -> bool: ...
    def version(self) -> int: ...
    def latest_version(self) -> int: ...
    def data_storage_version(self) -> str: ...
    def versions(self) -> List[Tuple[int, int, int, int, Dict[str, str]]]: ...
    def count_rows(self, filter: Optional[str] = None, fragments: Optional[List[int]] = None) -> int: ...
    def __arrow_c_schema__(self) -> Any: ...
    def fragments(self) -> List[Dict[str, Any]]: ...
    def scan(
        self,
        columns: Optional[List[str]] = None,
        exprs: Optional[List[Tuple[str, str]]] = None,
        filter: Optional[str] = None,
        limit: Optional[int] = None,
        offset: Optional[int] = None,
        batch_size: Optional[int] = None,
        fragments: Optional[List[int]] = None,
        with_row_id: bool = False,
        with_row_address: bool = False,
        row_ranges: Optional[List[Tuple[int, int, int]]] = None,
        stats: Optional[ScanStats] = None,
        include_deleted: bool = False,
        use_stats: bool = True,
        use_scalar_index: bool = True,
        explain: bool = False,
        order_by: Optional[List[Tuple[str, bool, bool]]] = None,
        strict_batch_size: bool = False,
        blob_binary: bool = False,
    ) -> Any: ...  # a BatchStream; the plan's text with explain=True
    def take(self, indices: List[int], columns: Optional[List[str]] = None) -> BatchStream: ...
    def take_addresses(self, addresses: List[int], columns: Optional[List[str]] = None) -> BatchStream: ...
    def take_row_ids(self, row_ids: List[int], columns: Optional[List[str]] = None) -> BatchStream: ...
    def has_stable_row_ids(self) -> bool: ...
    def changes(
        self, begin: int, end: int, columns: Optional[List[str]] = None
    ) -> Tuple[BatchStream, BatchStream, Optional[List[int]]]: ...
    def fragment_take(
        self, fragment_id: int, indices: List[int], columns: Optional[List[str]] = None
    ) -> BatchStream: ...
    def delete(
        self, predicate: str, conflict_retries: int = 0, retry_timeout: Optional[float] = None
    ) -> Tuple["Dataset", int]: ...
    def compact_files(
        self,
        target_rows_per_fragment: Optional[int] = None,
        materialize_deletions: Optional[bool] = None,
        materialize_deletions_threshold: Optional[float] = None,
        batch_size: Optional[int] = None,
    ) -> Tuple["Dataset", Dict[str, int]]: ...
    def write_rows(self, data: Any) -> List[Dict[str, Any]]: ...
    def replace_rows(
        self, addresses: List[int], fragments: List[Dict[str, Any]], moved_ids: List[int] = ...
    ) -> "Dataset": ...
    def update(
        self,
        updates: List[Tuple[str, str]],
        filter: Optional[str] = None,
        conflict_retries: int = 0,
        retry_timeout: Optional[float] = None,
    ) -> Tuple["Dataset", int]: ...
    def restore(self) -> "Dataset": ...
    def add_columns_sql(self, exprs: List[Tuple[str, str]], batch_size: Optional[int] = None) -> "Dataset": ...
    def add_null_columns(self, schema: Any) -> "Dataset": ...
    def drop_columns(self, names: List[str]) -> "Dataset": ...
    def alter_columns(
        self, alterations: List[Tuple[str, Optional[str], Optional[bool], Optional[Any]]]
    ) -> "Dataset": ...
    def write_column_file(self, fragment_id: int, data: Any, file_tag: Optional[str] = None) -> Dict[str, Any]: ...
    def commit_new_columns(self, schema: Any, files: List[Dict[str, Any]]) -> "Dataset": ...
    def remove_data_files(self, paths: List[str]) -> None: ...
    def with_verify_checksums(self, verify: bool) -> "Dataset": ...
    def verifies_checksums(self) -> bool: ...
    def validate(self, version: Optional[int] = None, deep: bool = False) -> Dict[str, Any]: ...
    def cleanup_old_versions(
        self,
        older_than: Optional[float] = None,
        retain_versions: Optional[int] = None,
        delete_unverified: bool = False,
        error_if_tagged_old_versions: bool = True,
        delete_rate_limit: Optional[int] = None,
        versions: Optional[List[int]] = None,
        delete_concurrency: Optional[int] = None,
    ) -> Dict[str, int]: ...
    def config(self) -> Dict[str, str]: ...
    def update_config(self, entries: List[Tuple[str, Optional[str]]], replace: bool) -> "Dataset": ...
    def tags(self) -> List[Tuple[str, int, int, Optional[str], Optional[str], Optional[str]]]: ...
    def tag(self, action: str, name: str, version: Optional[int] = None) -> None: ...

@final
class ObjectStore:
    def __new__(cls, uri: str, storage_options: Optional[Dict[str, str]] = None) -> "ObjectStore": ...
    @property
    def uri(self) -> str: ...
    def key(self, path: str) -> str: ...
    def list(self, dir: str) -> Tuple[List[str], List[str]]: ...
    def list_all(self, dir: str) -> List[str]: ...
    def head(self, path: str) -> Optional[Tuple[int, int, Optional[str]]]: ...
    def read(self, path: str) -> bytes: ...
    def put(self, path: str, data: bytes) -> None: ...
    def put_if_absent(self, path: str, data: bytes) -> bool: ...
    def delete(self, path: str) -> None: ...
    def delete_all(self, dir: str) -> int: ...
    def exists(self, path: str) -> bool: ...
