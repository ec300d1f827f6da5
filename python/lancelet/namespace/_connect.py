"""``lancelet.namespace.connect``: a namespace client by its implementation's short name
(``"dir"``, ``"rest"``), class, or anything ``lance_namespace.connect`` takes; the REST
server (``_server``) serves the namespace it returns.
"""

from __future__ import annotations

from typing import Any, Dict

import lance_namespace as _ln
from lance_namespace import LanceNamespace

from ._directory import DirectoryNamespace
from ._rest import RestNamespace

#: lancelet's implementations of the spec's short names.
IMPLS = {"dir": DirectoryNamespace, "rest": RestNamespace}


def connect(impl: Any, properties: Dict[str, Any]) -> LanceNamespace:
    """A namespace client: ``impl`` is ``"dir"`` or ``"rest"`` (lancelet's), a
    ``LanceNamespace`` subclass, or anything ``lance_namespace.connect`` takes.

    >>> import tempfile
    >>> from lancelet.namespace import ListTablesRequest
    >>> connect("dir", {"root": tempfile.mkdtemp()}).list_tables(ListTablesRequest(id=[])).tables
    []
    """
    if isinstance(impl, type) and issubclass(impl, LanceNamespace):
        return impl(**properties)
    if isinstance(impl, str) and impl in IMPLS:
        return IMPLS[impl](**properties)
    return _ln.connect(impl, properties)
