"""The ``lancelet`` command line: look at a dataset without writing Python.

    lancelet inspect URI [--version V]     schema, fragments, files, blob files, indexes, sizes;
                                           checks each file against the manifest (exit 1 if not)
    lancelet versions URI                  every version with its time (UTC offset), row count, tags
    lancelet head URI [-n N] [--version V] [--columns A,B] [--filter SQL]   the first rows
    lancelet validate URI [--version V] [--deep]   check every version like fsck: one line per
                                           problem, orphan files, a summary; exit 1 if damaged
    lancelet ls ROOT                       namespaces and tables of a catalog (rows, versions, sizes)
    lancelet namespace serve ROOT [--port N]  serve a directory namespace over REST (loopback)

``V`` is a version number or a tag name. Every subcommand takes ``--storage-option
KEY=VALUE`` (repeatable), the ``storage_options`` of ``lancelet.dataset``. Errors print one
line on stderr and exit 1.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any, List, Optional

import pyarrow as pa

from . import _cli_namespace
from ._cli_common import _open, _version
from ._cli_inspect import cmd_inspect
from .optimize import validate_dataset

__all__ = ["main"]

#: What ``--help`` says about credentials (the S3 store reads these variables, as the
#: AWS tools do; ``--storage-option`` values take precedence).
_ENV_HELP = """S3 datasets (s3://bucket/prefix) are configured by --storage-option KEY=VALUE (the
storage_options of lancelet.dataset, e.g. aws_region=us-east-1, aws_endpoint=URL,
allow_http=true) and by these environment variables:
  AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY   credentials
  AWS_SESSION_TOKEN                          temporary credentials' session token
  AWS_REGION, AWS_DEFAULT_REGION             the bucket's region
  AWS_ENDPOINT_URL (or AWS_ENDPOINT)         an S3-compatible endpoint (MinIO, moto...)
  AWS_ALLOW_HTTP=true                        allow a plain-http endpoint
Other AWS_* variables naming S3 options (AWS_ROLE_ARN, AWS_WEB_IDENTITY_TOKEN_FILE,
AWS_CONTAINER_CREDENTIALS_RELATIVE_URI, ...) are read too. Options given with
--storage-option win over the environment. Local paths and memory:// take no options."""


def cmd_versions(args: argparse.Namespace) -> None:
    ds = _open(args.uri, None, args.storage_option)
    tags: dict = {}
    for name, t in ds.tags.list().items():
        tags.setdefault(t["version"], []).append(name)
    print(f"{'version':>7}  {'committed':<26}  {'rows':>10}  tags")
    for v in ds.versions():
        rows = v["metadata"].get("total_rows", "?")
        stamp = _timestamp(v["timestamp"])
        print(f"{v['version']:>7}  {stamp:<26}  {rows:>10}  {', '.join(sorted(tags.get(v['version'], [])))}")


def cmd_validate(args: argparse.Namespace) -> int:
    """Checks the dataset (see :meth:`LanceDataset.validate`); exit 1 when anything is wrong."""
    ds = _open(args.uri, None, args.storage_option)
    version = _version(args.version)
    if isinstance(version, str):
        tags = ds.tags.list()
        if version not in tags:
            raise ValueError(f"--version {version!r} is neither a version number nor a tag")
        version = tags[version]["version"]
    report = validate_dataset(ds, args.deep, version)
    print(report)
    return 0 if report.ok else 1


def _timestamp(ts: Any) -> str:
    """ISO 8601 with the UTC offset (a naive time is the local time, as ``versions()``
    reports it)."""
    return ts.astimezone().isoformat(timespec="seconds")


#: ``head`` shows this many values of a list, then the count.
_LIST_VALUES = 5
#: ... this many bytes of a binary value, and this many characters of a string or a cell.
_BINARY_BYTES = 16
_CELL_CHARS = 80


def _cell(value: Any, top: bool = True) -> str:
    """One value of ``head``'s output: lists beyond a few values abbreviated with their
    length, floats short, binaries cut."""
    if value is None:
        return "null"
    if isinstance(value, float):
        return f"{value:.6g}"
    if isinstance(value, (bytes, bytearray, memoryview)):
        raw = bytes(value)
        if len(raw) <= _BINARY_BYTES:
            return repr(raw)
        return f"{raw[:_BINARY_BYTES]!r}… ({len(raw)} bytes)"
    if isinstance(value, str):
        text = value if top else repr(value)
    elif isinstance(value, dict):
        text = "{" + ", ".join(f"{k}: {_cell(v, False)}" for k, v in value.items()) + "}"
    elif isinstance(value, (list, tuple)):
        shown = ", ".join(_cell(v, False) for v in value[:_LIST_VALUES])
        text = f"[{shown}, … {len(value)} values]" if len(value) > _LIST_VALUES else f"[{shown}]"
    elif hasattr(value, "isoformat"):
        text = value.isoformat()
    else:
        text = str(value)
    text = text.replace("\n", "\\n").replace("\t", "\\t")
    return text if len(text) <= _CELL_CHARS else text[: _CELL_CHARS - 1] + "…"


def _columns(values: Optional[List[str]]) -> Optional[List[str]]:
    """``--columns a,b --columns c`` -> ``["a", "b", "c"]``."""
    if not values:
        return None
    names = [n.strip() for v in values for n in v.split(",")]
    if any(not n for n in names):
        raise ValueError(f"--columns takes column names separated by commas, got {','.join(values)!r}")
    return names


def cmd_head(args: argparse.Namespace) -> None:
    ds = _open(args.uri, args.version, args.storage_option)
    if args.n < 0:
        raise ValueError("-n must not be negative")
    if args.filter is not None and not args.filter.strip():
        raise ValueError("--filter must not be empty")
    table = ds.scanner(columns=_columns(args.columns), filter=args.filter, limit=args.n).to_table()
    _print_table(table)


def _print_table(table: Any) -> None:
    """``table`` as aligned text: numbers right-aligned, everything else left."""
    names = table.column_names
    rows = [[_cell(row[c]) for c in names] for row in table.to_pylist()]
    widths = [max([len(n)] + [len(r[i]) for r in rows]) for i, n in enumerate(names)]
    right = [pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_decimal(t) for t in table.schema.types]

    def line(cells: List[str]) -> str:
        return "  ".join(c.rjust(w) if r else c.ljust(w) for c, w, r in zip(cells, widths, right)).rstrip()

    print(line(names))
    for row in rows:
        print(line(row))
    if not rows:
        print("(no rows)")


def _parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--storage-option",
        action="append",
        metavar="KEY=VALUE",
        default=None,
        help="a storage option for the dataset's store (repeatable), e.g. aws_region=us-east-1",
    )
    formatter = argparse.RawDescriptionHelpFormatter
    ap = argparse.ArgumentParser(
        prog="lancelet", description="Look at Lance datasets.", epilog=_ENV_HELP, formatter_class=formatter
    )
    sub = ap.add_subparsers(dest="cmd", metavar="{inspect,versions,head,validate,ls,namespace}")
    p = sub.add_parser(
        "inspect",
        help="schema, fragments, files, blob files, indexes and sizes, each file checked against the manifest",
        parents=[common],
        epilog=_ENV_HELP,
        formatter_class=formatter,
    )
    p.add_argument("uri")
    p.add_argument("--version", default=None, help="version number or tag (default: latest)")
    p = sub.add_parser(
        "versions",
        help="every version with its time, row count and tags",
        parents=[common],
        epilog=_ENV_HELP,
        formatter_class=formatter,
    )
    p.add_argument("uri")
    p = sub.add_parser("head", help="the first rows", parents=[common], epilog=_ENV_HELP, formatter_class=formatter)
    p.add_argument("uri")
    p.add_argument("-n", type=int, default=10, help="rows to show (default 10)")
    p.add_argument("--version", default=None, help="version number or tag (default: latest)")
    p.add_argument(
        "--columns",
        action="append",
        metavar="A,B",
        default=None,
        help="columns to show, separated by commas (repeatable; default: all)",
    )
    p.add_argument("--filter", default=None, metavar="SQL", help='only rows matching this SQL filter, e.g. "id > 10"')
    p = sub.add_parser(
        "validate",
        help="check every version like fsck (files exist, open and agree with the manifest; "
        "--deep reads every byte against its checksum); exit 1 if anything is wrong",
        parents=[common],
        epilog=_ENV_HELP,
        formatter_class=formatter,
    )
    p.add_argument("uri")
    p.add_argument("--version", default=None, help="only this version number or tag (default: every version)")
    p.add_argument("--deep", action="store_true", help="read every page of every file and verify checksums")
    _cli_namespace.add_parsers(sub, common)
    return ap


def main(argv: Optional[List[str]] = None) -> int:
    """Runs the command line; returns the exit code."""
    ap = _parser()
    args = ap.parse_args(argv)
    if args.cmd is None:
        ap.print_usage(sys.stderr)
        return 2
    try:
        commands = {
            "inspect": cmd_inspect,
            "versions": cmd_versions,
            "head": cmd_head,
            "validate": cmd_validate,
            **_cli_namespace.COMMANDS,
        }
        code = commands[args.cmd](args)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    except Exception as e:  # one line, no traceback
        first = str(e).splitlines()[0] if str(e) else type(e).__name__
        print(f"lancelet: error: {first}", file=sys.stderr)
        return 1
    return code if isinstance(code, int) else 0


if __name__ == "__main__":
    sys.exit(main())
