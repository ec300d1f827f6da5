"""Opening and writing datasets through a namespace client (``namespace_client=`` and
``table_id=`` of :func:`lancelet.dataset` and :func:`lancelet.write_dataset`), as pylance
does: the client is asked where the table lives (``describe_table``, or ``declare_table``
when creating) and its storage options are merged over the caller's.

Any ``lance_namespace.LanceNamespace`` works: lancelet's or pylance's directory and REST
clients, or a catalog's own implementation.

When the namespace answers ``managed_versioning=True``, the table's versions are the
namespace's to create: the dataset commits through it (a staged manifest, then
``create_table_version``; see ``lancelet_table::catalog_store``). The commit namespace is
handed to the native layer as ``(client, table_id, root key)``, the root key being the
dataset root as its object store names objects (the form of ``manifest_path``).
"""

from __future__ import annotations

import os
from typing import Any, Dict, List, Optional, Tuple

from . import _paths
from .errors import InvalidArgumentError

#: ``(namespace client, table id, root key)``: a namespace that manages a table's versions.
CommitNamespace = Tuple[Any, List[str], str]


class MissingTargetError(InvalidArgumentError, TypeError):
    """Neither a ``uri`` nor a namespace table was given: a ``ValueError`` as pylance
    raises, and a ``TypeError`` as for any other URI that is not a string or path."""


def _check(uri: Any, namespace_client: Any, table_id: Any) -> bool:
    """Whether a namespace is used; refuses the combinations pylance refuses."""
    has_ns = namespace_client is not None or table_id is not None
    if uri is not None and has_ns:
        raise InvalidArgumentError(
            "Cannot specify both 'uri' and 'namespace_client/table_id'. "
            "Please provide either 'uri' or both 'namespace_client' and 'table_id'."
        )
    if uri is None and not has_ns:
        raise MissingTargetError(
            "Must specify either 'uri' or both 'namespace_client' and 'table_id' (got uri=None, a NoneType)."
        )
    if has_ns and (namespace_client is None or table_id is None):
        raise InvalidArgumentError("Both 'namespace_client' and 'table_id' must be provided together.")
    if has_ns and (isinstance(table_id, str) or not all(isinstance(p, str) for p in table_id)):
        raise InvalidArgumentError(f"table_id is a list of strings, e.g. ['ns', 'table'], got {table_id!r}")
    return has_ns


def _merge(options: Optional[Dict[str, str]], extra: Optional[Dict[str, str]]) -> Optional[Dict[str, str]]:
    if not extra:
        return options
    return {**(options or {}), **extra}


def store_key(uri: str) -> str:
    """The dataset root ``uri`` as its object store names objects: an absolute local path
    without its leading ``/``, the key prefix in an S3 bucket, the path in a memory store.

    >>> store_key("s3://bucket/cat/t.lance"), store_key("/data/t.lance")
    ('cat/t.lance', 'data/t.lance')
    """
    path = _paths.native_path(str(uri))
    scheme = _paths.scheme(path)
    if scheme is None:
        return os.path.abspath(path).lstrip("/")
    rest = path.split("://", 1)[1]
    if scheme == "memory":
        return rest.strip("/")
    return rest.partition("/")[2].strip("/")


def commit_namespace(response: Any, namespace_client: Any, table_id: Any, uri: Any) -> Optional[CommitNamespace]:
    """The commit namespace when the namespace's answer says it manages the versions."""
    if getattr(response, "managed_versioning", None) is not True:
        return None
    return (namespace_client, list(table_id or []), store_key(uri))


def resolve_read(
    uri: Any, namespace_client: Any, table_id: Optional[List[str]], storage_options: Optional[Dict[str, str]]
) -> Tuple[Any, Optional[Dict[str, str]], Optional[CommitNamespace]]:
    """``(uri, storage_options, commit namespace)`` of the table to open."""
    if not _check(uri, namespace_client, table_id):
        return uri, storage_options, None
    from lance_namespace import DescribeTableRequest  # noqa: PLC0415 (optional: lance-namespace)

    response = namespace_client.describe_table(DescribeTableRequest(id=list(table_id or [])))
    managed = commit_namespace(response, namespace_client, table_id, response.location)
    return response.location, _merge(storage_options, response.storage_options), managed


def resolve_write(
    uri: Any, namespace_client: Any, table_id: Optional[List[str]], mode: str, storage_options: Optional[Dict[str, str]]
) -> Tuple[Any, Optional[Dict[str, str]], Optional[CommitNamespace]]:
    """``(uri, storage_options, commit namespace)`` of the table to write: ``mode="create"``
    declares the table first; ``append`` and ``overwrite`` write where the table already is."""
    if not _check(uri, namespace_client, table_id):
        return uri, storage_options, None
    from lance_namespace import DeclareTableRequest, DescribeTableRequest  # noqa: PLC0415 (optional: lance-namespace)

    if mode == "create":
        response = namespace_client.declare_table(DeclareTableRequest(id=list(table_id or [])))
    else:
        response = namespace_client.describe_table(DescribeTableRequest(id=list(table_id or [])))
    if not response.location:
        raise InvalidArgumentError(f"the namespace gave no location for table {table_id!r}")
    managed = commit_namespace(response, namespace_client, table_id, response.location)
    return response.location, _merge(storage_options, response.storage_options), managed
