"""The namespace commands of the ``lancelet`` command line (see :mod:`lancelet.cli`):

    lancelet ls ROOT                                every namespace and table, with rows, versions, size
    lancelet namespace serve ROOT [--port N] [--host H] [--max-body SIZE] [--max-data-body SIZE]
                                                    serve ROOT over the namespace REST protocol

``ROOT`` is a directory namespace's root (a local directory or an ``s3://`` prefix, whose
``--storage-option KEY=VALUE`` options configure it), or the ``http://`` URI of a namespace
server.
"""

from __future__ import annotations

import argparse
import os
import re
from typing import Any, Dict, Iterator, List, Optional, Tuple

from . import _paths
from ._cli_common import _size, _storage_options
from .dataset import dataset
from .errors import LanceNotFoundError


def _options(args: argparse.Namespace) -> Optional[Dict[str, str]]:
    return _storage_options(getattr(args, "storage_option", None))


def _client(root: str, options: Optional[Dict[str, str]] = None) -> Any:
    from .namespace import DirectoryNamespace, RestNamespace  # noqa: PLC0415 (optional: needs lance-namespace)

    if root.startswith(("http://", "https://")):
        return RestNamespace(uri=root)
    path = _paths.native_path(root)
    if _paths.is_local(path) and not os.path.isdir(path):
        raise FileNotFoundError(f"no namespace root at {root}: not a directory")
    ns = DirectoryNamespace(root=root, **{f"storage.{k}": v for k, v in (options or {}).items()})
    if _is_dataset(ns):
        raise NotANamespaceError(f"{root} is a Lance dataset, not a namespace; use `lancelet inspect {root}`")
    return ns


class NotANamespaceError(ValueError):
    """``ls`` was given a dataset's directory instead of a namespace root."""


def _is_dataset(ns: Any) -> bool:
    """Whether a directory namespace's root is itself a dataset (it has ``_versions/``:
    a namespace keeps its tables' versions below them, never at its root)."""
    fs = getattr(ns, "_fs", None)
    return fs is not None and fs.has_any_file("_versions")


def _walk(ns: Any, parts: List[str]) -> Iterator[Tuple[str, List[str]]]:
    """``("namespace" | "table", id)`` for everything under ``parts``, depth first, sorted."""
    from lance_namespace import ListNamespacesRequest, ListTablesRequest  # noqa: PLC0415 (optional dependency)

    def pages(call, request_cls, attr):
        token = None
        while True:
            resp = call(request_cls(id=parts, page_token=token))
            yield from getattr(resp, attr) or []
            token = resp.page_token
            if not token:
                return

    for name in sorted(pages(ns.list_tables, ListTablesRequest, "tables")):
        yield "table", parts + [name]
    for name in sorted(pages(ns.list_namespaces, ListNamespacesRequest, "namespaces")):
        yield "namespace", parts + [name]
        yield from _walk(ns, parts + [name])


def cmd_ls(args: argparse.Namespace) -> None:
    """Prints the catalog as an indented tree with each table's rows, versions and size."""
    options = _options(args)
    ns = _client(args.root, options)
    print(f"{'namespace / table':<40} {'rows':>12} {'versions':>9} {'size':>11}")
    count = 0
    for kind, ident in _walk(ns, []):
        indent = "  " * (len(ident) - 1)
        if kind == "namespace":
            print(f"{indent}{ident[-1]}/")
            continue
        count += 1
        label = f"{indent}{ident[-1]}"
        try:
            ds = dataset(namespace_client=ns, table_id=ident, storage_options=options)
        except (LanceNotFoundError, ValueError):
            print(f"{label:<40} {'(declared, no data yet)':>34}")
            continue
        size = sum(d.file_size_bytes or 0 for f in ds.get_fragments() for d in f.data_files())
        print(f"{label:<40} {ds.count_rows():>12} {len(ds.versions()):>9} {_size(size):>11}")
    if count == 0:
        print("(no tables)")


def cmd_namespace(args: argparse.Namespace) -> None:
    """``namespace serve``: serves a directory namespace until interrupted."""
    from .namespace import serve  # noqa: PLC0415 (optional: needs lance-namespace)

    options = {f"storage.{k}": v for k, v in (_options(args) or {}).items()}
    serve(
        args.root,
        host=args.host,
        port=args.port,
        verbose=args.verbose,
        max_body_bytes=args.max_body,
        max_data_body_bytes=args.max_data_body,
        **options,
    )


_UNITS = {"": 1, "b": 1, "k": 1 << 10, "kb": 1 << 10, "kib": 1 << 10, "m": 1 << 20, "mb": 1 << 20, "mib": 1 << 20}
_UNITS.update({"g": 1 << 30, "gb": 1 << 30, "gib": 1 << 30})


def _bytes(text: str) -> int:
    """A size on the command line: bytes, or a number with K/M/G (KiB, MiB, GiB)."""
    m = re.match(r"^\s*(\d+)\s*([a-zA-Z]*)\s*$", text)
    if not m or m.group(2).lower() not in _UNITS:
        raise argparse.ArgumentTypeError(f"expected a size such as 8MiB, 512K or 1048576, got {text!r}")
    return int(m.group(1)) * _UNITS[m.group(2).lower()]


def add_parsers(sub: Any, common: Any) -> None:
    """Adds ``ls`` and ``namespace`` to the command line's subcommands (``common``: the
    parser of the options every subcommand takes)."""
    p = sub.add_parser("ls", help="namespaces and tables of a catalog, with rows, versions and sizes", parents=[common])
    p.add_argument("root", help="a directory namespace's root, or http://host:port of a namespace server")
    p = sub.add_parser("namespace", help="namespace tools: serve a directory over the REST protocol")
    nsub = p.add_subparsers(dest="ns_cmd", metavar="{serve}", required=True)
    s = nsub.add_parser(
        "serve", help="serve a directory namespace over the Lance namespace REST protocol", parents=[common]
    )
    s.add_argument("root", help="the directory namespace's root")
    s.add_argument("--port", type=int, default=2333, help="port (default 2333; 0 picks a free one)")
    s.add_argument(
        "--host",
        default="127.0.0.1",
        help="address to listen on (default 127.0.0.1, loopback only: there is no authentication)",
    )
    s.add_argument("--verbose", action="store_true", help="log every request")
    s.add_argument(
        "--max-body",
        type=_bytes,
        default="8MiB",
        metavar="SIZE",
        help="largest JSON request body (default 8MiB; larger requests get 413)",
    )
    s.add_argument(
        "--max-data-body",
        type=_bytes,
        default="256MiB",
        metavar="SIZE",
        help="largest Arrow IPC body of create/insert/merge_insert, held in memory whole (default 256MiB)",
    )


COMMANDS = {"ls": cmd_ls, "namespace": cmd_namespace}
