"""Writes the pylance 14.0.2 golden files of `v2_1/` and `v2_2/` from their inputs.

Each case is a pair: `NAME.arrow` (Arrow IPC: the input, with any field metadata that
selects an encoding, and what pylance reads back) and `NAME.lance`, written here by
`lance.file.LanceFileWriter(path, schema, version=...)` from the `.arrow` batches.

Run from the repository root with the project's venv:

    .venv/bin/python tests/data/file/generate_v2.py           # rewrite the .lance files
    .venv/bin/python tests/data/file/generate_v2.py --check   # compare, write nothing

`--check` compares byte for byte, and by what pylance reads back for the few files whose
bytes pylance does not make deterministic (its FSST symbol tables are trained on a sample).
"""

from __future__ import annotations

import argparse
import glob
import os
import sys
import tempfile

import lance
import pyarrow.ipc as ipc

HERE = os.path.dirname(os.path.abspath(__file__))
VERSIONS = {"v2_1": "2.1", "v2_2": "2.2"}


def write(arrow_path: str, lance_path: str, version: str) -> None:
    reader = ipc.open_file(arrow_path)
    w = lance.file.LanceFileWriter(lance_path, reader.schema, version=version)
    for i in range(reader.num_record_batches):
        w.write_batch(reader.get_batch(i))
    w.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="compare with the committed files; write nothing")
    args = parser.parse_args()
    tmp = tempfile.mkdtemp()
    bad = 0
    for folder, version in VERSIONS.items():
        for arrow_path in sorted(glob.glob(os.path.join(HERE, folder, "*.arrow"))):
            lance_path = arrow_path[: -len(".arrow")] + ".lance"
            target = os.path.join(tmp, os.path.basename(lance_path)) if args.check else lance_path
            write(arrow_path, target, version)
            if args.check:
                same_bytes = open(target, "rb").read() == open(lance_path, "rb").read()
                same_rows = same_bytes or (
                    lance.file.LanceFileReader(target).read_all().to_table()
                    == lance.file.LanceFileReader(lance_path).read_all().to_table()
                )
                bad += not same_rows
                name = f"{folder}/{os.path.basename(lance_path)}"
                print(f"{name}: {'identical' if same_bytes else 'same rows' if same_rows else 'DIFFERENT'}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
