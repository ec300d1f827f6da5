"""Catalogs of Lance tables (the Lance namespace spec), compatible with pylance 14's
``lance.namespace``.

* :class:`DirectoryNamespace` keeps a catalog in a directory (the ``__manifest`` table
  and layout pylance uses, so both libraries share one catalog);
* :class:`RestNamespace` is a client of the spec's REST protocol;
* :class:`RestAdapter` serves any namespace over that protocol
  (``python -m lancelet namespace serve ROOT``).

All of them implement ``lance_namespace.LanceNamespace`` (the spec's own Python package,
installed with ``pip install lance-namespace``) and take and return its request and
response models, which this module re-exports (``lancelet.namespace.ListTablesRequest``...).
Tables are opened and written through a namespace with
``lancelet.dataset(namespace_client=ns, table_id=[...])`` and
``lancelet.write_dataset(data, namespace_client=ns, table_id=[...], mode=...)``.

>>> import tempfile, pyarrow as pa, lancelet
>>> from lancelet.namespace import DirectoryNamespace, CreateNamespaceRequest
>>> ns = DirectoryNamespace(root=tempfile.mkdtemp())
>>> _ = ns.create_namespace(CreateNamespaceRequest(id=["sales"]))
>>> _ = lancelet.write_dataset(pa.table({"x": [1, 2]}), namespace_client=ns, table_id=["sales", "orders"])
>>> lancelet.dataset(namespace_client=ns, table_id=["sales", "orders"]).count_rows()
2
"""

from __future__ import annotations

from typing import Any

try:
    import lance_namespace as _ln
except ImportError as _e:  # pragma: no cover - depends on the environment
    raise ImportError(
        "lancelet.namespace needs the lance-namespace package: pip install 'lance-namespace>=0.13'"
    ) from _e

from lance_namespace import LanceNamespace
from lance_namespace_urllib3_client import models as _models

from ._connect import connect
from ._directory import DirectoryNamespace
from ._rest import RestNamespace
from ._server import RestAdapter, serve

__all__ = ["LanceNamespace", "DirectoryNamespace", "RestNamespace", "RestAdapter", "serve", "connect"]


def __getattr__(name: str) -> Any:
    # The spec's request/response models and errors, as pylance's lance.namespace offers
    # them, and every other model of the spec (QueryTableRequestVector, AddColumnsEntry...).
    if not name.startswith("_") and hasattr(_ln, name):
        return getattr(_ln, name)
    if not name.startswith("_") and hasattr(_models, name):
        return getattr(_models, name)
    raise AttributeError(f"module 'lancelet.namespace' has no attribute {name!r}")
