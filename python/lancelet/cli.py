"""The ``lancelet`` command line: look at a dataset without writing Python.

    lancelet inspect URI [--version V]     schema, versions, fragments, files, sizes, deletions
    lancelet versions URI                  every version with its time, row count and tags
    lancelet head URI [-n N] [--version V] the first rows
    lancelet ls ROOT                       namespaces and tables of a catalog (rows, versions, sizes)
    lancelet namespace serve ROOT [--port N]  serve a directory namespace over REST (loopback)

``V`` is a version number or a tag name. Every subcommand takes ``--storage-option
KEY=VALUE`` (repeatable), the ``storage_options`` of ``lancelet.dataset``. Errors print one
line on stderr and exit 1.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from typing import Dict, List, Optional

from . import _cli_namespace

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

_INT = re.compile(r"^[+-]?\d+$")


def _version(version: Optional[str]):
    """A --version value: a version number (positive) or a tag name."""
    if version is None or not _INT.match(version.strip()):
        return version
    v = int(version)
    if v < 1:
        raise ValueError(f"--version must be a positive version number or a tag name, got {version}")
    return v


def _storage_options(pairs: Optional[List[str]]) -> Optional[Dict[str, str]]:
    out: Dict[str, str] = {}
    for pair in pairs or []:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"--storage-option takes KEY=VALUE, got {pair!r}")
        out[key.strip()] = value
    return out or None


def _open(uri: str, version: Optional[str] = None, storage_options: Optional[List[str]] = None):
    import lancelet

    return lancelet.dataset(uri, version=_version(version), storage_options=_storage_options(storage_options))


def _size(n: int) -> str:
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{n} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return str(size)


def cmd_inspect(args: argparse.Namespace) -> None:
    ds = _open(args.uri, args.version, args.storage_option)
    frags = ds.get_fragments()
    files = [(f, d) for f in frags for d in f.data_files()]
    total = sum(d.file_size_bytes for _, d in files)
    print(f"dataset:  {ds.uri}")
    print(f"version:  {ds.version} (latest {ds.latest_version}, {len(ds.versions())} versions)")
    print(f"format:   Lance file format {ds.data_storage_version}")
    print(f"rows:     {ds.count_rows()}")
    print(f"fragments: {len(frags)} ({len(files)} data files, {_size(total)})")
    tags = ds.tags.list()
    if tags:
        print("tags:     " + ", ".join(f"{n} -> v{t['version']}" for n, t in sorted(tags.items())))
    print("schema:")
    for field in ds.schema:
        print(f"  {field.name}: {field.type}{'' if field.nullable else ' not null'}")
    if frags:
        print("fragments:")
        print(f"  {'id':>6} {'rows':>10} {'physical':>10} {'deleted':>8}  files")
        for f in frags:
            names = ", ".join(f"{d.path} ({_size(d.file_size_bytes)})" for d in f.data_files())
            deletion = f"  deletions: {f.deletion_file()}" if f.deletion_file() else ""
            print(
                f"  {f.fragment_id:>6} {f.count_rows():>10} {f.physical_rows:>10} {f.num_deletions:>8}  {names}{deletion}"
            )


def cmd_versions(args: argparse.Namespace) -> None:
    ds = _open(args.uri, None, args.storage_option)
    tags: dict = {}
    for name, t in ds.tags.list().items():
        tags.setdefault(t["version"], []).append(name)
    print(f"{'version':>7}  {'committed':<26}  {'rows':>10}  tags")
    for v in ds.versions():
        rows = v["metadata"].get("total_rows", "?")
        stamp = v["timestamp"].isoformat(sep=" ", timespec="seconds")
        print(f"{v['version']:>7}  {stamp:<26}  {rows:>10}  {', '.join(sorted(tags.get(v['version'], [])))}")


def cmd_head(args: argparse.Namespace) -> None:
    ds = _open(args.uri, args.version, args.storage_option)
    if args.n < 0:
        raise ValueError("-n must not be negative")
    table = ds.head(args.n)
    try:
        import pandas  # noqa: F401

        with_pandas = True
    except ImportError:  # pragma: no cover - pandas is optional
        with_pandas = False
    if with_pandas:
        import pandas as pd

        width = int(os.environ.get("COLUMNS", "160"))
        with pd.option_context("display.width", width, "display.max_columns", 50, "display.max_colwidth", 60):
            print(table.to_pandas().to_string(index=False))
    else:
        print("\t".join(table.column_names))
        for row in table.to_pylist():
            print("\t".join(str(row[c]) for c in table.column_names))


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
    sub = ap.add_subparsers(dest="cmd", metavar="{inspect,versions,head,ls,namespace}")
    p = sub.add_parser(
        "inspect",
        help="schema, versions, fragments, files, sizes and deletions",
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
        {"inspect": cmd_inspect, "versions": cmd_versions, "head": cmd_head, **_cli_namespace.COMMANDS}[args.cmd](args)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    except Exception as e:  # one line, no traceback
        first = str(e).splitlines()[0] if str(e) else type(e).__name__
        print(f"lancelet: error: {first}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
