"""Damaged 2.2 files: the byte-flip and truncation sweep of ``test_file_errors.py`` (which
runs on a 2.0 file) on a 2.2 file whose pages use the 2.1+ structural encodings: FSST
strings, dictionary pages (a low-cardinality string column and an Arrow dictionary
column), lists and structs with nulls.

Every damaged variant must open and read without error or raise a ``lancelet.LanceError``:
never a ``PanicException``, another exception class or a crash. The sweep runs in a
subprocess, so a hard crash fails the test instead of killing pytest.

By default the sweep is sampled (every byte of the metadata, every 13th data byte, every
11th truncation: a few seconds); the full sweep (every byte set three ways, every
truncation: about 50,000 variants) is marked ``slow``. The Rust suite runs the full sweep
on an equivalent file in ``rust/lancelet-file/tests/bad_data_v2_2.rs``.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

SWEEP_SCRIPT = textwrap.dedent(
    r'''
    import collections, json, struct, sys
    import pyarrow as pa
    import lancelet
    from lancelet.file import LanceFileReader, LanceFileWriter

    work, mode = sys.argv[1], sys.argv[2]
    n = 400
    table = pa.table({
        "id": pa.array(range(n), pa.int32()),
        "text": pa.array([None if i % 17 == 3 else f"row {i} alpha beta gamma delta" for i in range(n)]),
        "color": pa.array([["red", "green", "blue", "cyan"][i % 4] if i % 9 else None for i in range(n)]),
        "dict": pa.array([["x", "yy", "zzz"][i % 3] for i in range(n)]).dictionary_encode(),
        "l": pa.array([None if i % 11 == 5 else list(range(i % 4)) for i in range(n)], pa.list_(pa.int64())),
        "st": pa.array([None if i % 13 == 7 else {"a": i, "b": f"s{i % 7}"} for i in range(n)],
                       pa.struct([("a", pa.int32()), ("b", pa.string())])),
    })
    good = work + "/good.lance"
    with LanceFileWriter(good, table.schema, version="2.2") as w:
        w.write_batch(table)
    data = open(good, "rb").read()
    reader = LanceFileReader(good)
    assert reader.read_all().to_table().equals(table)
    encodings = [p.encoding for c in reader.metadata().columns for p in c.pages]
    column_meta_start = struct.unpack("<Q", data[-40:-32])[0]
    bad = work + "/bad.lance"

    counts = collections.Counter()
    non_lance = collections.Counter()
    examples = {}
    OPS = [
        ("metadata", lambda r: r.metadata()),
        ("read_all", lambda r: r.read_all(batch_size=100).to_table()),
        ("take_rows", lambda r: r.take_rows([n - 1, 0, 200, 200]).to_table()),
        ("read_range", lambda r: r.read_range(150, 100, batch_size=64).to_table()),
    ]

    def record(kind, label, exc):
        key = f"{kind}:{type(exc).__module__}.{type(exc).__name__}"
        if isinstance(exc, lancelet.LanceError):
            counts[key] += 1
        else:
            non_lance[key] += 1
            examples.setdefault(key, f"{label}: {exc}"[:300])

    def attempt(blob, label):
        with open(bad, "wb") as f:
            f.write(blob)
        try:
            r = LanceFileReader(bad)
        except BaseException as e:
            record("open", label, e)
            return
        counts["open:ok"] += 1
        for name, op in OPS:
            try:
                op(r)
                counts[name + ":ok"] += 1
            except BaseException as e:
                record(name, label, e)

    full = mode == "full"
    hows = ("xor", "zero", "ff") if full else ("xor",)
    variants = 0
    for i in range(len(data)):
        if not full and i < column_meta_start and i % 13:
            continue
        for how in hows:
            b = bytearray(data)
            b[i] = {"xor": b[i] ^ 0xFF, "zero": 0, "ff": 0xFF}[how]
            if bytes(b) == data:
                continue
            attempt(bytes(b), f"byte {i} {how}")
            variants += 1
    for cut in range(0, len(data), 1 if full else 11):
        attempt(data[:cut], f"truncated to {cut}")
        variants += 1
    print(json.dumps({"file_size": len(data), "metadata_bytes": len(data) - column_meta_start,
                      "variants": variants, "counts": counts, "non_lance": non_lance, "examples": examples,
                      "fsst": sum("Fsst" in e for e in encodings),
                      "dictionary": sum("dictionary: Some" in e for e in encodings)}))
    '''
)


def _sweep(tmp_path_factory, mode: str):
    work = tmp_path_factory.mktemp(f"sweep22_{mode}")
    proc = subprocess.run(
        [sys.executable, "-c", SWEEP_SCRIPT, str(work), mode], capture_output=True, text=True, timeout=1800
    )
    summary = None
    if proc.returncode == 0 and proc.stdout.strip():
        summary = json.loads(proc.stdout.strip().splitlines()[-1])
        print(
            f"\n2.2 corruption sweep ({mode}): {summary['variants']} damaged variants of a "
            f"{summary['file_size']}-byte file; outcomes: {dict(summary['counts'])}; "
            f"non-LanceError failures: {dict(summary['non_lance'])}"
        )
    return proc, summary


@pytest.fixture(scope="module")
def sampled_sweep(tmp_path_factory):
    return _sweep(tmp_path_factory, "sampled")


def _check(proc, summary, min_variants: int) -> None:
    assert proc.returncode == 0, f"sweep subprocess died with {proc.returncode}:\n{proc.stderr[-3000:]}"
    assert summary is not None
    assert summary["fsst"] >= 1 and summary["dictionary"] >= 2, summary
    assert summary["variants"] >= min_variants, summary["variants"]
    for key in list(summary["non_lance"]) + list(summary["counts"]):
        assert "PanicException" not in key, summary["examples"].get(key)
    assert summary["non_lance"] == {}, summary["examples"]
    # Most damage to the metadata is caught when the file is opened.
    assert summary["counts"].get("open:lancelet.errors.CorruptFileError", 0) > summary["metadata_bytes"] // 2


def test_sampled_corruption_of_a_2_2_file_raises_only_lance_errors(sampled_sweep):
    proc, summary = sampled_sweep
    _check(proc, summary, min_variants=summary["metadata_bytes"] if summary else 0)


@pytest.mark.slow
def test_every_corruption_and_truncation_of_a_2_2_file_raises_only_lance_errors(tmp_path_factory):
    proc, summary = _sweep(tmp_path_factory, "full")
    _check(proc, summary, min_variants=3 * summary["file_size"] if summary else 0)
