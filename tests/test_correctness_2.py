"""Regression tests for issue 28 (correctness II), the items fixed in the Rust core: file
URIs decoded as RFC 8089 says (both ways with pylance), non-finite query vectors, blank
filters, errors that name the call, I/O errors from index builds, failed writes that leave
nothing behind, and external blobs outside a dataset's registered base paths.

Each test fails on d7f7650.
"""

from __future__ import annotations

import os
import pathlib
import pickle
import subprocess
import sys
import textwrap

import numpy as np
import pyarrow as pa
import pytest

import lancelet
from lancelet.errors import InvalidArgumentError, LanceIOError

lance = pytest.importorskip("lance")

pytestmark = pytest.mark.lancelet_only

# --------------------------------------------------------------------------------------
# 1. Percent-encoded file:// URIs name the decoded directory (as pylance decodes them)
# --------------------------------------------------------------------------------------

AWKWARD_NAMES = ["my data", "a#b", "100% sure", "café ü", "x%20y"]


@pytest.mark.parametrize("name", AWKWARD_NAMES)
def test_file_uris_are_decoded_both_ways_with_pylance(tmp_path, name):
    path = tmp_path / name / "items.lance"
    uri = path.resolve().as_uri()  # file:///.../my%20data/items.lance
    assert "%" in uri or "#" not in name
    lancelet.write_dataset(pa.table({"x": [1, 2]}), uri)
    assert path.is_dir(), os.listdir(tmp_path)
    assert not any("%" in p and "%" not in name for p in os.listdir(tmp_path))
    # pylance appends through the same string; both see all three rows.
    lance.write_dataset(pa.table({"x": [3]}), uri, mode="append")
    assert lancelet.dataset(uri).count_rows() == 3
    assert lance.dataset(uri).count_rows() == 3
    assert sorted(lancelet.dataset(str(path)).to_table()["x"].to_pylist()) == [1, 2, 3]
    # ... and the other way round.
    lancelet.write_dataset(pa.table({"x": [4]}), uri, mode="append")
    assert lance.dataset(uri).count_rows() == 4


def test_file_uri_forms(tmp_path):
    path = tmp_path / "sp ace" / "d.lance"
    lancelet.write_dataset(pa.table({"x": [1]}), str(path))
    quoted = str(path).replace(" ", "%20")
    for uri in [f"file://{quoted}", f"file://localhost{quoted}", f"file:{quoted}", path.as_uri()]:
        assert lancelet.dataset(uri).count_rows() == 1, uri


def test_file_api_decodes_file_uris(tmp_path):
    from lancelet.file import LanceFileReader, LanceFileWriter

    path = tmp_path / "dir with space" / "f.lance"
    path.parent.mkdir()
    with LanceFileWriter(path.as_uri()) as w:
        w.write_batch(pa.table({"x": [1, 2, 3]}))
    assert path.is_file()
    assert LanceFileReader(path.as_uri()).read_all().to_table()["x"].to_pylist() == [1, 2, 3]
    assert lance.file.LanceFileReader(str(path)).read_all().to_table()["x"].to_pylist() == [1, 2, 3]


def test_namespace_roots_decode_file_uris(tmp_path):
    from lancelet.namespace import DirectoryNamespace

    root = tmp_path / "cata log"
    root.mkdir()
    ns = DirectoryNamespace(root=root.as_uri())
    lancelet.write_dataset(pa.table({"x": [1]}), namespace_client=ns, table_id=["t"], mode="create")
    assert (root / "t.lance").is_dir(), os.listdir(tmp_path)


def test_cli_decodes_file_uris(tmp_path):
    path = tmp_path / "c li" / "d.lance"
    lancelet.write_dataset(pa.table({"x": [1, 2]}), str(path))
    out = subprocess.run(
        [sys.executable, "-m", "lancelet", "versions", path.as_uri()], capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr


# --------------------------------------------------------------------------------------
# 2. Non-finite query vectors
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("indexed", [False, True])
@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -float("inf")])
def test_non_finite_query_vectors_are_refused_with_and_without_an_index(tmp_path, indexed, bad):
    rng = np.random.default_rng(7)
    v = rng.random((512, 8), dtype=np.float32)
    table = pa.table({"id": range(512), "v": pa.FixedSizeListArray.from_arrays(pa.array(v.ravel()), 8)})
    ds = lancelet.write_dataset(table, str(tmp_path / "v.lance"))
    if indexed:
        ds.create_index("v", "IVF_FLAT", num_partitions=4)
    q = np.ones(8, dtype=np.float32)
    q[3] = bad
    with pytest.raises(ValueError, match="non-finite value .* at position 3"):
        ds.to_table(nearest={"column": "v", "q": q, "k": 5})
    with pytest.raises(ValueError, match="query 1 has a non-finite value"):
        ds.to_table(nearest={"column": "v", "q": np.stack([np.ones(8), q]), "k": 5})
    # A finite query still works.
    assert ds.to_table(nearest={"column": "v", "q": np.ones(8), "k": 5}).num_rows == 5


# --------------------------------------------------------------------------------------
# 5. An empty or blank filter is an error, as in pylance
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("blank", ["", "   ", "\n\t"])
def test_blank_filters_are_refused_everywhere(tmp_path, blank):
    ds = lancelet.write_dataset(pa.table({"id": [1, 2, 3]}), str(tmp_path / "f.lance"))
    calls = {
        "to_table": lambda: ds.to_table(filter=blank),
        "scanner": lambda: ds.scanner(filter=blank).to_table(),
        "to_batches": lambda: list(ds.to_batches(filter=blank)),
        "count_rows": lambda: ds.count_rows(blank),
        "update": lambda: ds.update({"id": "id + 1"}, where=blank),
        "delete": lambda: ds.delete(blank),
        "fragment": lambda: ds.get_fragments()[0].to_table(filter=blank),
    }
    for name, call in calls.items():
        with pytest.raises(ValueError):
            call()
        assert ds.to_table()["id"].to_pylist() == [1, 2, 3], name  # nothing changed
    # pylance refuses them too.
    lance.write_dataset(pa.table({"id": [1]}), str(tmp_path / "p.lance"))
    with pytest.raises(ValueError):
        lance.dataset(str(tmp_path / "p.lance")).to_table(filter=blank)
    # No filter still means every row.
    assert ds.count_rows() == 3 and ds.count_rows(None) == 3


# --------------------------------------------------------------------------------------
# 7. 8. Index build errors: name the call; I/O failures are I/O errors
# --------------------------------------------------------------------------------------


def _vectors(tmp_path):
    rng = np.random.default_rng(3)
    v = rng.random((300, 8), dtype=np.float32)
    table = pa.table({"id": range(300), "v": pa.FixedSizeListArray.from_arrays(pa.array(v.ravel()), 8)})
    return lancelet.write_dataset(table, str(tmp_path / "v.lance"))


def test_create_index_parameter_errors_name_create_index(tmp_path):
    ds = _vectors(tmp_path)
    for kw in [{"num_partitions": 0, "num_sub_vectors": 2}, {"num_partitions": 2, "num_sub_vectors": -1}]:
        with pytest.raises(
            ValueError, match=r"^create_index: '(num_partitions|num_sub_vectors)' must be a positive"
        ) as e:
            ds.create_index("v", "IVF_PQ", **kw)
        assert "nearest" not in str(e.value)


@pytest.mark.parametrize("kind", ["vector", "scalar"])
def test_io_failures_while_building_an_index_are_io_errors(tmp_path, kind):
    ds = _vectors(tmp_path)
    # A file where the index directory should go: the store cannot create it (ENOTDIR),
    # as it cannot on a read-only or full disk.
    (tmp_path / "v.lance" / "_indices").write_text("not a directory")
    with pytest.raises(OSError) as e:
        if kind == "vector":
            ds.create_index("v", "IVF_FLAT", num_partitions=2)
        else:
            ds.create_scalar_index("id", "BTREE")
    assert isinstance(e.value, LanceIOError)
    assert not isinstance(e.value, InvalidArgumentError)


# --------------------------------------------------------------------------------------
# 12. A failed write leaves no partial data file behind
# --------------------------------------------------------------------------------------

_FULL_DISK = textwrap.dedent(
    """
    import os, resource, signal, sys
    import numpy as np, pyarrow as pa
    import lancelet
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG
    table = pa.table({"x": np.random.default_rng(1).random(1_000_000)})
    resource.setrlimit(resource.RLIMIT_FSIZE, (2_000_000, 2_000_000))
    try:
        lancelet.write_dataset(table, sys.argv[1], mode=sys.argv[2])
    except OSError as e:
        print("OSError", e)
    else:
        print("no error")
    """
)


@pytest.mark.parametrize("mode", ["create", "append"])
def test_a_write_that_fails_for_space_removes_its_partial_files(tmp_path, mode):
    uri = str(tmp_path / "full.lance")
    if mode == "append":
        lancelet.write_dataset(pa.table({"x": [0.5]}), uri)
    before = {p for p in pathlib.Path(uri).rglob("*") if p.is_file()} if mode == "append" else set()
    out = subprocess.run([sys.executable, "-c", _FULL_DISK, uri, mode], capture_output=True, text=True, timeout=300)
    assert out.stdout.startswith("OSError"), out.stdout + out.stderr
    after = {p for p in pathlib.Path(uri).rglob("*") if p.is_file()} if os.path.isdir(uri) else set()
    assert after == before, sorted(map(str, after - before))
    if mode == "append":
        assert lancelet.dataset(uri).to_table()["x"].to_pylist() == [0.5]


# --------------------------------------------------------------------------------------
# 14. External blobs outside the registered base paths are read only when allowed
# --------------------------------------------------------------------------------------


def _external_blob_dataset(tmp_path, target: str) -> str:
    uri = str(tmp_path / "hostile.lance")
    table = pa.table({"b": lance.blob_array([target])}, schema=pa.schema([lance.blob_field("b")]))
    lance.write_dataset(table, uri, allow_external_blob_outside_bases=True)  # as an attacker would
    return uri


def test_a_dataset_cannot_make_its_reader_read_any_local_file(tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_bytes(b"top secret")
    uri = _external_blob_dataset(tmp_path, secret.as_uri())
    ds = lancelet.dataset(uri)
    with pytest.raises(ValueError, match="outside the dataset's registered base paths") as e:
        ds.take_blobs("b", indices=[0])
    assert "allow_external_blob_outside_bases=True" in str(e.value)
    with pytest.raises(ValueError):
        ds.read_blobs("b", indices=[0])
    # The reader may allow it; the allowance survives checkout and pickling.
    ok = lancelet.dataset(uri, allow_external_blob_outside_bases=True)
    assert ok.take_blobs("b", indices=[0])[0].read() == b"top secret"
    assert ok.checkout_version(1).take_blobs("b", indices=[0])[0].read() == b"top secret"
    assert pickle.loads(pickle.dumps(ok)).take_blobs("b", indices=[0])[0].read() == b"top secret"
    with pytest.raises(ValueError):
        pickle.loads(pickle.dumps(ds)).take_blobs("b", indices=[0])


def test_an_external_blob_under_a_registered_base_is_read_without_asking(tmp_path):
    ext = tmp_path / "media"
    ext.mkdir()
    (ext / "a.bin").write_bytes(b"payload")
    uri = str(tmp_path / "based.lance")
    schema = pa.schema([lancelet.blob_field("b")])
    lancelet.write_dataset(
        pa.table({"b": lancelet.blob_array([None])}, schema=schema),
        uri,
        initial_bases=[lancelet.DatasetBasePath(str(ext), name="media", is_dataset_root=False)],
    )
    # Appended under the registered base, so stored relative to it (a base id), and read back.
    table = pa.table({"b": lancelet.blob_array([(ext / "a.bin").as_uri()])}, schema=schema)
    lancelet.write_dataset(table, uri, mode="append")
    assert lancelet.dataset(uri).take_blobs("b", indices=[1])[0].read() == b"payload"
    # A URI under the base kept absolute (blob id 0, as another writer may store it) is
    # recognised as inside the base too.
    lance.write_dataset(table, uri, mode="append", allow_external_blob_outside_bases=True)
    assert lancelet.dataset(uri).take_blobs("b", indices=[2])[0].read() == b"payload"


def test_s3_blobs_outside_the_bases_are_never_signed_with_ambient_credentials(tmp_path, monkeypatch):
    # A loopback server stands in for S3 and records what the reader sends: a store the
    # user never configured must not get credentials found in the environment (or the
    # instance-metadata endpoint), so the request carries no signature made with them.
    import http.server
    import threading

    seen = []

    class Recorder(http.server.BaseHTTPRequestHandler):
        def _answer(self):
            seen.append(dict(self.headers))
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()

        do_GET = do_HEAD = _answer

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Recorder)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        monkeypatch.setenv("AWS_ENDPOINT", f"http://127.0.0.1:{server.server_address[1]}")
        monkeypatch.setenv("AWS_ALLOW_HTTP", "true")
        monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AMBIENTKEY")
        monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "ambient-secret")
        monkeypatch.setenv("AWS_REGION", "us-east-1")
        monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
        uri = _external_blob_dataset(tmp_path, "s3://someone-elses-bucket/key.bin")
        ds = lancelet.dataset(uri, allow_external_blob_outside_bases=True)
        with pytest.raises((OSError, ValueError)):
            ds.take_blobs("b", indices=[0])[0].read()
    finally:
        server.shutdown()
        server.server_close()
    assert seen, "the reader never reached the store"
    assert not any("AMBIENTKEY" in h.get("Authorization", "") for h in seen), seen
