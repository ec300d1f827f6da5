"""Addressing tables of a namespace from the Spark source (:mod:`lancelet.spark`):
``spark.read.format("lancelet").option("namespace_root", ROOT).load("sales$orders")``.

Options: ``namespace_root`` (a directory namespace's root) or ``namespace_uri`` (a
namespace REST server), and ``namespace_delimiter`` (default ``$``) which splits the
loaded name into the table id. The name is resolved to the table's location on the
driver; writes to a table the namespace does not know yet declare it first.
"""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional

from . import _paths
from .errors import InvalidArgumentError


def uses_namespace(options: Mapping[str, Any]) -> bool:
    """Whether the options address a table by name in a namespace."""
    return bool(options.get("namespace_root") or options.get("namespace_uri"))


def _client(options: Dict[str, Any]) -> Any:
    from .namespace import DirectoryNamespace, RestNamespace  # noqa: PLC0415 (optional: needs lance-namespace)

    if options.get("namespace_root") and options.get("namespace_uri"):
        raise InvalidArgumentError("give option namespace_root or namespace_uri, not both")
    if options.get("namespace_uri"):
        return RestNamespace(uri=options["namespace_uri"])
    storage = {k: v for k, v in options.items() if k.lower().startswith("storage.")}
    return DirectoryNamespace(root=options["namespace_root"], **storage)


def table_id(name: str, options: Dict[str, Any]) -> List[str]:
    """The table id in ``name`` (``"a$b$t"`` -> ``["a", "b", "t"]``)."""
    delimiter = options.get("namespace_delimiter") or "$"
    parts = [p for p in str(name).split(delimiter)]
    if not name or any(not p for p in parts):
        raise InvalidArgumentError(f"{name!r} is not a table name (parts joined by {delimiter!r}, e.g. 'sales$orders')")
    return parts


def resolve(name: Optional[str], options: Dict[str, Any], create: bool = False) -> str:
    """The location of table ``name``; with ``create``, a table not in the namespace yet
    is declared there."""
    import lance_namespace as ln  # noqa: PLC0415 (optional: lance-namespace)

    if not name:
        raise InvalidArgumentError("give the table name: .load('ns$table') / .save('ns$table')")
    ns = _client(options)
    ident = table_id(name, options)
    try:
        location = ns.describe_table(ln.DescribeTableRequest(id=ident)).location
    except ln.TableNotFoundError:
        if not create:
            raise
        location = ns.declare_table(ln.DeclareTableRequest(id=ident)).location
    return _paths.native_path(location)
