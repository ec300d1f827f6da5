"""A stand-in for ``python -m lancelet`` built on pylance, used only when
``LANCELET_TEST_ORACLE_SELF=1`` so that tests/test_cli.py can be dry-run on the reference.

    python tests/_oracle_cli.py inspect URI
    python tests/_oracle_cli.py versions URI
    python tests/_oracle_cli.py head URI [-n N] [--version V]
"""

from __future__ import annotations

import argparse
import sys


def _open(lance, uri, version=None):
    if version is not None and version.isdigit():
        version = int(version)
    return lance.dataset(uri, version=version)


def cmd_inspect(lance, args) -> None:
    ds = _open(lance, args.uri)
    frags = ds.get_fragments()
    print(f"uri: {ds.uri}")
    print(f"version: {ds.version} (latest {ds.latest_version})")
    print(f"data storage version: {ds.data_storage_version}")
    print(f"rows: {ds.count_rows()}")
    print(f"fragments: {len(frags)}")
    print("schema:")
    for field in ds.schema:
        print(f"  {field.name}: {field.type}{'' if field.nullable else ' not null'}")
    print("fragment  rows  physical_rows  deletion_file")
    for f in frags:
        print(f"{f.fragment_id}  {f.count_rows()}  {f.physical_rows}  {f.deletion_file() or '-'}")


def cmd_versions(lance, args) -> None:
    ds = _open(lance, args.uri)
    tags = {}
    for name, t in ds.tags.list().items():
        tags.setdefault(t["version"], []).append(name)
    print("version  timestamp  rows  tags")
    for v in ds.versions():
        rows = v["metadata"].get("total_rows", "?")
        print(f"{v['version']}  {v['timestamp'].isoformat()}  {rows}  {','.join(sorted(tags.get(v['version'], [])))}")


def cmd_head(lance, args) -> None:
    ds = _open(lance, args.uri, args.version)
    table = ds.head(args.n)
    print("\t".join(table.column_names))
    for row in table.to_pylist():
        print("\t".join(str(row[c]) for c in table.column_names))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="lancelet")
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("inspect", help="schema, version, fragments and row counts")
    p.add_argument("uri")
    p = sub.add_parser("versions", help="every version with its time and row count")
    p.add_argument("uri")
    p = sub.add_parser("head", help="the first rows")
    p.add_argument("uri")
    p.add_argument("-n", type=int, default=10)
    p.add_argument("--version", default=None)
    args = ap.parse_args(argv)
    import lance

    try:
        {"inspect": cmd_inspect, "versions": cmd_versions, "head": cmd_head}[args.cmd](lance, args)
    except Exception as e:  # one line, no traceback
        print(f"lancelet: error: {str(e).splitlines()[0] if str(e) else type(e).__name__}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
