# Type stubs of the native extension (rust/lancelet-python), one stub per module: this
# package's own names (what every part shares) here, and one file per submodule, each the
# native side of one concern of the facade:
#
#   file     single Lance files (file.rs)
#   dataset  the Dataset handle and the operations on one (dataset.rs, branches.rs, blob.rs,
#            merge.rs, merge_columns.rs, backfill.rs, operations.rs, fragment_ops.rs,
#            asof.rs, condition.rs)
#   index    secondary indexes, vector and full-text search (index.rs, fts.rs)
#   loader   training reads (loader.rs)
#   storage  object stores, local paths, what namespace catalogs take from the core
#            (store.rs, namespace.rs)
#
# The submodules are attributes of `lancelet._native` and entries of `sys.modules`
# (lib.rs), so `from lancelet._native import dataset` works; they import from this module,
# never the reverse. Keep the stubs in step with the Rust glue:
# `python -m mypy.stubtest lancelet._native` (run by scripts/test.sh) checks this package and
# every submodule, and fails on any drift.
#
# In the submodules' stubs, a call with many keyword options takes them as one dict, typed by
# a TypedDict named after
# the glue's struct with a leading underscore (rust/lancelet-python/src/options.rs): a
# missing key takes the Rust default; an unknown key of a `total=False` one is a TypeError.

from typing import Any, Optional, final

__version__: str

def set_worker_threads(threads: Optional[int] = None) -> None: ...
def _runtime_pid() -> Optional[int]: ...

@final
class BatchStream:
    def take_error(self) -> Optional[BaseException]: ...
    def __arrow_c_stream__(self, requested_schema: Any = None) -> Any: ...
    def __arrow_c_schema__(self) -> Any: ...
