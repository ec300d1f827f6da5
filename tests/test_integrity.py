"""Integrity: the CRC32C checksums lancelet writes into every file, checked on every read,
and ``LanceDataset.validate`` / ``python -m lancelet validate``.

Interop both ways: pylance reads the files lancelet writes (the checksums sit in an extra
global buffer pylance never looks at) and lancelet reads pylance's files, which have no
checksums, as before. The corruption campaign damages copies of files lancelet wrote at
fixed, seeded places and reads them in a subprocess (so a crash or a hang would show):
every read gives the original rows or raises, and every flipped bit in a data page
raises ``CorruptFileError`` naming the file, the column and the page.
"""

from __future__ import annotations

import hashlib
import json
import random
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Dict

import pyarrow as pa
import pyarrow.compute as pc
import pytest

import lancelet
from lancelet.errors import CorruptFileError
from lancelet.file import LanceFileReader, LanceFileWriter

lance = pytest.importorskip("lance")
import lance.file  # noqa: E402,F811

pytestmark = pytest.mark.lancelet_only

VERSIONS = ["2.0", "2.1", "2.2"]


def _table(n: int = 3000) -> pa.Table:
    return pa.table(
        {
            "id": pa.array([i * 31 if i % 97 else None for i in range(n)], pa.int64()),
            "text": pa.array([f"value {i} of {i % 211}" if i % 13 else None for i in range(n)]),
            "tags": pa.array([[f"t{k}" for k in range(i % 4)] for i in range(n)], pa.list_(pa.string())),
            "emb": pa.array([[float(i), i * 0.5, -1.0, 2.0] for i in range(n)], pa.list_(pa.float32(), 4)),
            "st": pa.array([{"a": i, "b": f"s{i % 50}"} for i in range(n)], pa.struct([("a", pa.int64()), ("b", pa.string())])),
        }
    )


def _write_file(path: Path, version: str, table: pa.Table) -> None:
    with LanceFileWriter(str(path), version=version) as w:
        # Several batches: several pages per column.
        for b in table.to_batches(max_chunksize=500):
            w.write_batch(b)


def _page_ranges(path: Path):
    m = LanceFileReader(str(path)).metadata()
    return [(b.position, b.size) for c in m.columns for p in c.pages for b in p.buffers if b.size > 0]


def _hash_tree(root: Path) -> Dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(root.rglob("*")) if p.is_file()
    }


# ----------------------------------------------------------------------------------------
# Checksums: interop both ways
# ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("version", VERSIONS)
def test_pylance_reads_files_with_checksums_and_lancelet_reads_pylances(tmp_path, version):
    t = _table()
    ours = tmp_path / "ours.lance"
    _write_file(ours, version, t)
    # The checksums are an extra global buffer pylance ignores.
    assert len(LanceFileReader(str(ours)).metadata().global_buffers) >= 2
    assert lance.file.LanceFileReader(str(ours)).read_all().to_table() == t
    theirs = tmp_path / "theirs.lance"
    with lance.file.LanceFileWriter(str(theirs), version=version) as w:
        w.write_batch(t)
    assert LanceFileReader(str(theirs)).read_all().to_table() == t
    # Where the checksums are is not part of the data's schema, for either library.
    assert lance.file.LanceFileReader(str(ours)).metadata().schema.metadata == t.schema.metadata
    assert LanceFileReader(str(ours)).metadata().schema.metadata == t.schema.metadata


def test_datasets_with_checksums_interoperate_both_ways(tmp_path):
    t = _table(2000)
    uri = str(tmp_path / "ds.lance")
    lancelet.write_dataset(t, uri)
    lance.write_dataset(t, uri, mode="append")
    lancelet.write_dataset(t, uri, mode="append")
    ds = lance.dataset(uri)
    ds.delete("id < 100")
    ds.create_scalar_index("id", "BTREE")
    all_rows = pa.concat_tables([t, t, t])
    # delete("id < 100") keeps the rows whose id is null.
    expected = all_rows.filter(pc.fill_null(pc.greater_equal(all_rows.column("id"), 100), True))
    for lib in (lance, lancelet):
        got = lib.dataset(uri).to_table()
        assert got.num_rows == expected.num_rows
        assert got.sort_by("id").column("text") == expected.sort_by("id").column("text")
    assert lancelet.dataset(uri).validate(deep=True).ok


# ----------------------------------------------------------------------------------------
# Damaged bytes are errors, never data
# ----------------------------------------------------------------------------------------


def test_a_flipped_bit_raises_corrupt_file_error_naming_file_column_and_page(tmp_path):
    uri = tmp_path / "ds.lance"
    lancelet.write_dataset(_table(), str(uri))
    (data,) = (uri / "data").glob("*.lance")
    pos, _ = _page_ranges(data)[0]
    raw = bytearray(data.read_bytes())
    raw[pos] ^= 0x08
    data.write_bytes(bytes(raw))
    with pytest.raises(CorruptFileError) as e:
        lancelet.dataset(str(uri)).to_table()
    msg = str(e.value)
    assert data.name in msg and "checksum mismatch" in msg and 'column 0 "id"' in msg and "page 0" in msg
    # pylance, with no checksums to check, may read the damaged bytes as data: that is
    # what lancelet refuses to do. Reading without the check is possible on purpose.
    salvaged = lancelet.dataset(str(uri), verify_checksums=False).to_table(columns=["text"])
    assert salvaged.column("text") == _table().column("text")
    with pytest.raises(CorruptFileError, match="checksum mismatch"):
        LanceFileReader(str(data)).read_all().to_table()
    unchecked = LanceFileReader(str(data), columns=["text", "emb"], verify_checksums=False)
    assert unchecked.read_all().to_table() == _table().select(["text", "emb"])


#: Reads damaged copies of one file (paths on stdin, one per line) and prints one word
#: per copy: "same" (the original rows), "error:<class>" (refused), or "WRONG".
_CAMPAIGN = textwrap.dedent(
    """
    import sys
    import pyarrow as pa
    from lancelet.file import LanceFileReader
    original = LanceFileReader(sys.argv[1]).read_all().to_table()
    for line in sys.stdin:
        path = line.strip()
        try:
            r = LanceFileReader(path)
            got = r.read_all(batch_size=700).to_table()
            same = got == original
            rows = [0, 1499, 2999, 17]
            same = same and r.take_rows(rows).to_table() == original.take(rows)
            print("same" if same else "WRONG", flush=True)
        except Exception as e:
            print("error:" + type(e).__name__, flush=True)
    """
)


def _run_campaign(original: Path, copies) -> list:
    out = subprocess.run(
        [sys.executable, "-c", _CAMPAIGN, str(original)],
        input="\n".join(str(c) for c in copies) + "\n",
        capture_output=True,
        text=True,
        timeout=300,  # a hang fails the test
    )
    # A crash (a signal, a panic across the FFI) fails it too.
    assert out.returncode == 0, out.stderr[-2000:]
    results = out.stdout.split()
    assert len(results) == len(copies), out.stderr[-2000:]
    return results


@pytest.mark.parametrize("version", VERSIONS)
def test_corruption_campaign(tmp_path, version):
    original = tmp_path / "original.lance"
    _write_file(original, version, _table())
    raw = original.read_bytes()
    rng = random.Random(f"campaign-{version}")  # the same cases on every run
    copies = []
    # 100 damaged copies: bit flips, byte runs and truncations anywhere in the file.
    for i in range(100):
        b = bytearray(raw)
        if i % 3 == 0:
            for _ in range(rng.randint(1, 3)):
                b[rng.randrange(len(b))] ^= 1 << rng.randrange(8)
        elif i % 3 == 1:
            n = rng.randint(1, 64)
            at = rng.randrange(len(b) - n)
            b[at : at + n] = bytes([rng.randrange(256)]) * n
        else:
            del b[rng.randrange(len(b)) :]
        p = tmp_path / f"any-{i}.lance"
        p.write_bytes(bytes(b))
        copies.append(p)
    # 40 single-bit flips in data pages.
    pages = _page_ranges(original)
    total = sum(size for _, size in pages)
    flips = []
    for i in range(40):
        k = rng.randrange(total)
        at = None
        for pos, size in pages:
            if k < size:
                at = pos + k
                break
            k -= size
        b = bytearray(raw)
        b[at] ^= 1 << rng.randrange(8)
        p = tmp_path / f"page-{i}.lance"
        p.write_bytes(bytes(b))
        flips.append(p)
    results = _run_campaign(original, copies + flips)
    assert "WRONG" not in results, f"{results.count('WRONG')} damaged copies read back wrong, silently"
    anywhere, in_pages = results[:100], results[100:]
    # Damage that changed no byte a read uses (padding) reads back intact.
    assert sum(r.startswith("error:") for r in anywhere) >= 80, anywhere
    assert in_pages == ["error:CorruptFileError"] * 40, in_pages


def _flip_deleted_row(path: Path, row: int) -> None:
    """Turns deleted row ``row`` into ``row + 1`` in an Arrow IPC deletion file: damage the
    file's own format cannot see."""
    raw = bytearray(path.read_bytes())
    at = raw.find(row.to_bytes(4, "little"))
    assert at >= 0
    raw[at] ^= (row ^ (row + 1)) & 0xFF
    path.write_bytes(bytes(raw))


def test_a_damaged_deletion_file_is_refused_not_read_as_other_rows(tmp_path):
    uri = tmp_path / "ds.lance"
    lancelet.write_dataset(pa.table({"id": pa.array(range(1000), pa.int64())}), str(uri))
    lancelet.dataset(str(uri)).delete("id = 777")
    (f,) = (uri / "_deletions").glob("*.arrow")
    _flip_deleted_row(f, 777)
    with pytest.raises(CorruptFileError, match="deletion file checksum mismatch") as e:
        lancelet.dataset(str(uri)).to_table()
    assert f.name in str(e.value)
    # Without the checksum the damage reads as a different deleted row, silently: what
    # pylance (which does not look at lancelet's checksum) and an unchecked read return.
    wrong = lancelet.dataset(str(uri), verify_checksums=False).to_table().column("id").to_pylist()
    assert 777 in wrong and 778 not in wrong
    assert lance.dataset(str(uri)).to_table().column("id").to_pylist() == wrong


def test_a_damaged_manifest_is_refused(tmp_path):
    uri = tmp_path / "ds.lance"
    lancelet.write_dataset(pa.table({"id": pa.array(range(1000), pa.int64())}), str(uri))
    lancelet.write_dataset(pa.table({"id": pa.array(range(10), pa.int64())}), str(uri), mode="append")
    f = _manifest_of(uri, 2)
    raw = bytearray(f.read_bytes())
    # The first fragment's row count (field 4, 1000 = e8 07 as a varint) becomes 1001.
    at = raw.find(bytes([0x20, 0xE8, 0x07]))
    assert at >= 0
    raw[at + 1] ^= 0x01
    f.write_bytes(bytes(raw))
    with pytest.raises(CorruptFileError, match="manifest checksum mismatch") as e:
        lancelet.dataset(str(uri))
    assert f.name in str(e.value)
    # An earlier version is still readable.
    assert lancelet.dataset(str(uri), version=1).count_rows() == 1000


def test_checksums_of_deletions_and_manifests_interoperate_both_ways(tmp_path):
    uri = str(tmp_path / "ds.lance")
    t = pa.table({"id": pa.array(range(3000), pa.int64()), "s": pa.array([f"r{i}" for i in range(3000)])})
    lancelet.write_dataset(t, uri, max_rows_per_file=1000)
    lancelet.dataset(uri).delete("id % 7 = 0")  # lancelet's deletion files and manifest
    assert lance.dataset(uri).count_rows() == 3000 - 429
    lance.dataset(uri).delete("id % 11 = 0")  # pylance rewrites them, without checksums
    lancelet.dataset(uri).delete("id % 13 = 0")  # and lancelet again
    want = [i for i in range(3000) if i % 7 and i % 11 and i % 13]
    for lib in (lance, lancelet):
        assert sorted(lib.dataset(uri).to_table().column("id").to_pylist()) == want
    assert lancelet.dataset(uri).validate(deep=True).ok
    # Fragment metadata JSON stays pylance's own, without the checksum.
    frag = lancelet.dataset(uri).get_fragments()[0].metadata
    assert frag.to_json() == lance.dataset(uri).get_fragments()[0].metadata.to_json()


@pytest.mark.parametrize("version", ["2.1", "2.2"])
def test_a_damaged_blob_in_a_data_file_is_refused(tmp_path, version):
    uri = tmp_path / "ds.lance"
    field = pa.field("blob", pa.large_binary(), metadata={"lance-encoding:blob": "true"})
    payloads = [f"payload {i:04d} ".encode() * 40 for i in range(50)]
    t = pa.table({"id": pa.array(range(50), pa.int64()), "blob": pa.array(payloads, pa.large_binary())},
                 schema=pa.schema([pa.field("id", pa.int64()), field]))
    lancelet.write_dataset(t, str(uri), data_storage_version=version)
    (data,) = (uri / "data").glob("*.lance")
    raw = bytearray(data.read_bytes())
    at = raw.find(b"payload 0042 ")
    assert at >= 0
    raw[at + 9] ^= 0x01  # "0042" becomes "0043"
    data.write_bytes(bytes(raw))
    ds = lancelet.dataset(str(uri))
    with pytest.raises(CorruptFileError, match="checksum mismatch"):
        ds.take_blobs("blob", indices=[42])[0].read()
    unchecked = lancelet.dataset(str(uri), verify_checksums=False).take_blobs("blob", indices=[42])[0].read()
    assert unchecked != payloads[42]


# ----------------------------------------------------------------------------------------
# validate
# ----------------------------------------------------------------------------------------


def _healthy(root: Path, writer) -> Path:
    """A dataset with two data files, deletions, a scalar index and a tag."""
    uri = root / "ds.lance"
    t = _table(2000)
    writer.write_dataset(t, str(uri))
    writer.write_dataset(t, str(uri), mode="append")
    ds = writer.dataset(str(uri))
    ds.delete("id < 500")
    ds.create_scalar_index("id", "BTREE")
    ds.tags.create("first", 1)
    return uri


@pytest.mark.parametrize("writer", ["lancelet", "pylance"])
def test_validate_passes_a_healthy_dataset_and_changes_nothing(tmp_path, writer):
    uri = _healthy(tmp_path, lancelet if writer == "lancelet" else lance)
    before = _hash_tree(uri)
    report = lancelet.dataset(str(uri)).validate(deep=True)
    assert report.ok, report
    assert report.versions == 4 and report.data_files == 2 and report.deletion_files >= 1 and report.index_files >= 1
    if writer == "lancelet":
        assert report.checksummed_files >= 3 and report.bytes_verified > 0
    else:
        assert report.checksummed_files == 0
    assert report.orphans == []
    assert _hash_tree(uri) == before
    assert "OK: 0 problem(s)" in str(report)


def _only(uri: Path, pattern: str) -> Path:
    found = sorted(uri.glob(pattern))
    assert found, pattern
    return found[0]


def _case_missing_data(uri: Path):
    f = _only(uri, "data/*.lance")
    f.unlink()
    return f.name


def _case_truncated_data(uri: Path):
    f = _only(uri, "data/*.lance")
    f.write_bytes(f.read_bytes()[:-100])
    return f.name


def _case_flipped_bit(uri: Path):
    f = _only(uri, "data/*.lance")
    pos, _ = _page_ranges(f)[0]
    b = bytearray(f.read_bytes())
    b[pos + 3] ^= 0x40
    f.write_bytes(bytes(b))
    return f.name


def _case_missing_deletion(uri: Path):
    f = _only(uri, "_deletions/*")
    f.unlink()
    return f.name


def _case_missing_index_file(uri: Path):
    f = _only(uri, "_indices/*/*")
    f.unlink()
    return f.parent.name


def _case_tag_to_missing_version(uri: Path):
    tag = uri / "_refs" / "tags" / "first.json"
    doc = json.loads(tag.read_text())
    doc["version"] = 99
    tag.write_text(json.dumps(doc))
    return "first"


def _case_flipped_deletion_bit(uri: Path):
    # An Arrow IPC deletion file whose recorded checksum no longer matches.
    f = _only(uri, "_deletions/*.arrow")
    b = bytearray(f.read_bytes())
    b[len(b) // 2] ^= 0x02
    f.write_bytes(bytes(b))
    return f.name


def _manifest_of(uri: Path, version: int) -> Path:
    """The manifest file of ``version`` (either naming scheme)."""
    for f in uri.glob("_versions/*.manifest"):
        n = int(f.stem)
        if version in (n, 2**64 - 1 - n):
            return f
    raise AssertionError(f"no manifest for version {version}")


def _case_flipped_manifest_bit(uri: Path):
    # An older version's manifest: the latest still opens, and validate finds this one.
    f = _manifest_of(uri, 2)
    b = bytearray(f.read_bytes())
    b[len(b) // 2] ^= 0x01
    f.write_bytes(bytes(b))
    return f.name


CASES = {
    "flipped bit in a deletion file": (_case_flipped_deletion_bit, False),
    "flipped bit in an older manifest": (_case_flipped_manifest_bit, False),
    "missing data file": (_case_missing_data, False),
    "truncated data file": (_case_truncated_data, False),
    "flipped bit in a page": (_case_flipped_bit, True),
    "missing deletion file": (_case_missing_deletion, False),
    "missing index file": (_case_missing_index_file, False),
    "tag to a missing version": (_case_tag_to_missing_version, False),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_validate_names_what_is_damaged(tmp_path, case):
    uri = _healthy(tmp_path, lancelet)
    damage, needs_deep = CASES[case]
    name = damage(uri)
    before = _hash_tree(uri)
    with pytest.raises(CorruptFileError) as e:
        lancelet.dataset(str(uri)).validate(deep=True)
    report = e.value.report
    assert not report.ok
    assert any(name in path or name in reason for path, reason in report.problems), report
    if needs_deep:
        assert "checksum mismatch" in str(report)
    assert _hash_tree(uri) == before
    # The command line says the same and exits 1.
    cli = subprocess.run([sys.executable, "-m", "lancelet", "validate", str(uri), "--deep"], capture_output=True, text=True)
    assert cli.returncode == 1, cli.stderr
    assert name in cli.stdout and "DAMAGED" in cli.stdout


def test_validate_finds_a_base_path_that_does_not_resolve(tmp_path):
    uri = tmp_path / "ds.lance"
    base = tmp_path / "elsewhere"
    lancelet.write_dataset(
        _table(500), str(uri), initial_bases=[lancelet.DatasetBasePath(str(base), name="far")], target_bases=["far"]
    )
    assert lancelet.dataset(str(uri)).validate().ok
    shutil.rmtree(base)
    with pytest.raises(CorruptFileError) as e:
        lancelet.dataset(str(uri)).validate()
    report = e.value.report
    assert not report.ok
    assert any("elsewhere" in path for path, _ in report.problems), report


def test_validate_lists_orphans_and_checks_one_version(tmp_path):
    uri = _healthy(tmp_path, lancelet)
    stray = uri / "data" / "stray.lance"
    stray.write_bytes(b"x" * 123)
    report = lancelet.dataset(str(uri)).validate()
    assert report.ok and report.orphans == [("data/stray.lance", 123)]
    one = lancelet.dataset(str(uri)).validate(version=1)
    assert one.ok and one.versions == 1 and one.orphans == []
    cli = subprocess.run(
        [sys.executable, "-m", "lancelet", "validate", str(uri), "--version", "first"], capture_output=True, text=True
    )
    assert cli.returncode == 0, cli.stderr
    assert "OK: 0 problem(s) in 1 version(s)" in cli.stdout
    with pytest.raises(CorruptFileError, match="version 42 does not exist"):
        lancelet.dataset(str(uri)).validate(version=42)
