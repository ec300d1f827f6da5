"""Datasets on object stores: ``memory://`` and ``s3://`` on a real S3 server (SeaweedFS on
loopback ports, the ``s3`` fixture of ``conftest.py``), never a mocked client."""

from __future__ import annotations

import socket
import subprocess
import sys
import threading
import time
import uuid

import numpy as np
import pyarrow as pa
import pytest

import lancelet
from lancelet import errors as E
from _support import free_port, kill_after_ready, start_appenders, wait_appenders
from _tables import id_strings

pytestmark = pytest.mark.lancelet_only


def _exercise(uri, opts):
    """Write, append, filter, take, delete, tags and time travel on one dataset."""
    ds = lancelet.write_dataset(id_strings(range(0, 1000)), uri, max_rows_per_file=300, storage_options=opts)
    assert ds.version == 1 and len(ds.get_fragments()) == 4
    lancelet.write_dataset(id_strings(range(1000, 1500)), uri, mode="append", storage_options=opts)
    ds = lancelet.dataset(uri, storage_options=opts)
    assert ds.version == 2
    assert ds.to_table().equals(id_strings(range(0, 1500)))
    assert ds.to_table(filter="id % 100 = 7").column("id").to_pylist() == list(range(7, 1500, 100))
    assert ds.take([0, 999, 1499]).column("id").to_pylist() == [0, 999, 1499]
    ds.delete("id < 10")
    ds.tags.create("trimmed", ds.version)
    latest = lancelet.dataset(uri, storage_options=opts)
    assert latest.count_rows() == 1490
    assert lancelet.dataset(uri, version=1, storage_options=opts).count_rows() == 1000
    assert lancelet.dataset(uri, version="trimmed", storage_options=opts).count_rows() == 1490
    assert [v["version"] for v in latest.versions()] == [1, 2, 3]


def test_memory_datasets_support_the_whole_api():
    _exercise(f"memory://{uuid.uuid4().hex}/items.lance", None)


def test_memory_datasets_are_separate_by_path():
    a, b = (f"memory://{uuid.uuid4().hex}/t" for _ in range(2))
    lancelet.write_dataset(id_strings(range(0, 3)), a)
    with pytest.raises(E.LanceNotFoundError):
        lancelet.dataset(b)


def test_s3_datasets_support_the_whole_api(s3):
    uri, opts, _ = s3
    _exercise(uri, opts)


def test_s3_dataset_layout_is_lance(s3):
    uri, opts, client = s3
    lancelet.write_dataset(id_strings(range(0, 10)), uri, storage_options=opts)
    prefix = uri[len("s3://lancelet/"):]
    keys = [o["Key"][len(prefix) + 1:] for o in client.list_objects_v2(Bucket="lancelet", Prefix=prefix)["Contents"]]
    assert "_versions/18446744073709551614.manifest" in keys
    assert any(k.startswith("_transactions/0-") for k in keys)
    assert any(k.startswith("data/") and k.endswith(".lance") for k in keys)


def test_pylance_reads_lancelet_on_s3_and_back(s3):
    lance = pytest.importorskip("lance")
    uri, opts, _ = s3
    lancelet.write_dataset(id_strings(range(0, 500)), uri, storage_options=opts)
    assert lance.dataset(uri, storage_options=opts).to_table().equals(id_strings(range(0, 500)))
    lance.write_dataset(id_strings(range(500, 600)), uri, mode="append", storage_options=opts)
    assert lancelet.dataset(uri, storage_options=opts).to_table().sort_by("id").equals(id_strings(range(0, 600)))


def test_large_data_files_are_uploaded_in_parts(s3):
    uri, opts, client = s3
    n = 400_000
    # Random bytes: a repeated value would compress to almost nothing at file format 2.2.
    blob = np.random.default_rng(3).bytes(100 * n)
    t = pa.table({"id": pa.array(range(n), pa.int64()),
                  "blob": pa.array([blob[i * 100:(i + 1) * 100] for i in range(n)])})
    ds = lancelet.write_dataset(t, uri, storage_options=opts)
    size = ds.get_fragments()[0].data_files()[0].file_size_bytes
    assert size > 32 << 20  # above the single-request limit
    back = lancelet.dataset(uri, storage_options=opts)
    assert back.count_rows() == n
    assert back.take([0, n - 1]).column("id").to_pylist() == [0, n - 1]


def _append_in_threads(uri, opts, writers: int, rows: int) -> list:
    """``writers`` threads each append ``rows`` rows at once; returns their exceptions."""
    failures = []

    def append(i):
        try:
            lo = 1000 * (i + 1)
            lancelet.write_dataset(id_strings(range(lo, lo + rows)), uri, mode="append", storage_options=opts)
        except Exception as e:  # noqa: BLE001
            failures.append(e)

    threads = [threading.Thread(target=append, args=(i,)) for i in range(writers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return failures


def test_concurrent_appends_on_s3_all_land(s3):
    uri, opts, _ = s3
    lancelet.write_dataset(id_strings(range(0, 10)), uri, storage_options=opts)
    assert not _append_in_threads(uri, opts, 6, 50)
    ds = lancelet.dataset(uri, storage_options=opts)
    assert ds.version == 7
    assert ds.count_rows() == 10 + 6 * 50
    ids = [f.fragment_id for f in ds.get_fragments()]
    assert len(ids) == len(set(ids))


def test_missing_dataset_on_s3_is_not_found(s3):
    uri, opts, _ = s3
    with pytest.raises(E.LanceNotFoundError):
        lancelet.dataset(uri, storage_options=opts)


@pytest.mark.parametrize(
    "uri,opts,error",
    [
        ("s3://lancelet/x", {"no_such_option": "1"}, E.InvalidArgumentError),
        # Local paths ignore storage options (as pylance does): the dataset is just missing.
        ("/tmp/local-dataset-that-does-not-exist", {"aws_region": "x"}, E.LanceNotFoundError),
        ("gs://bucket/x", None, E.UnsupportedFeatureError),
        ("s3:///no-bucket", None, E.InvalidArgumentError),
    ],
)
def test_bad_uris_and_storage_options_are_clear_errors(uri, opts, error):
    with pytest.raises(error):
        lancelet.dataset(uri, storage_options=opts)


def test_spark_reads_and_writes_s3(s3):
    pytest.importorskip("pyspark")
    import os
    import shutil

    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        pytest.skip("Spark needs Java")
    from pyspark.sql import SparkSession

    import lancelet.spark

    uri, opts, _ = s3
    lancelet.write_dataset(id_strings(range(0, 100)), uri, storage_options=opts)
    os.environ["PYSPARK_PYTHON"] = sys.executable
    spark = SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false").getOrCreate()
    try:
        lancelet.spark.register(spark)
        storage = {f"storage.{k}": v for k, v in opts.items()}
        df = spark.read.format("lancelet").options(**storage).load(uri)
        assert df.where("id >= 90").count() == 10
        df.where("id < 5").write.format("lancelet").options(**storage).mode("append").save(uri)
    finally:
        spark.stop()
    ds = lancelet.dataset(uri, storage_options=opts)
    assert ds.version == 2 and ds.count_rows() == 105


class _Proxy:
    """A TCP proxy in front of the S3 server that can be cut (connections dropped, new ones
    refused) and restored on the same port: an outage the client cannot tell from a dead
    server."""

    def __init__(self, upstream_port: int):
        self.upstream = upstream_port
        self.port = free_port()
        self._conns: list = []
        self._listener = None
        self._lock = threading.Lock()
        self.start()

    def start(self) -> None:
        ls = socket.socket()
        ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        ls.bind(("127.0.0.1", self.port))
        ls.listen(64)
        self._listener = ls
        threading.Thread(target=self._accept, args=(ls,), daemon=True).start()

    def _accept(self, ls) -> None:
        while True:
            try:
                client, _ = ls.accept()
            except OSError:
                return
            try:
                server = socket.create_connection(("127.0.0.1", self.upstream))
            except OSError:
                client.close()
                continue
            with self._lock:
                if ls is not self._listener:  # accepted as the proxy was cut: refuse it
                    self._close(client)
                    self._close(server)
                    return
                self._conns += [client, server]
            for a, b in ((client, server), (server, client)):
                threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    @staticmethod
    def _close(s) -> None:
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        s.close()

    @classmethod
    def _pump(cls, src, dst) -> None:
        try:
            while data := src.recv(65536):
                dst.sendall(data)
        except OSError:
            pass
        finally:
            cls._close(src)
            cls._close(dst)

    def cut(self) -> None:
        with self._lock:
            # shutdown() first: close() alone does not wake the thread blocked in accept(),
            # which then takes one more connection, and a keep-alive client (SeaweedFS
            # answers HTTP/1.1; moto closed every connection) sends everything through it.
            self._close(self._listener)
            self._listener = None
            for s in self._conns:
                self._close(s)
            self._conns = []


def test_an_outage_mid_write_is_a_clear_error_and_corrupts_nothing(s3_endpoint):
    endpoint, _ = s3_endpoint
    proxy = _Proxy(int(endpoint.rsplit(":", 1)[1]))
    opts = {"aws_endpoint": f"http://127.0.0.1:{proxy.port}", "aws_access_key_id": "test",
            "aws_secret_access_key": "test", "aws_region": "us-east-1", "allow_http": "true",
            "client_max_retries": "1", "client_retry_timeout": "3"}
    uri = f"s3://lancelet/{uuid.uuid4().hex}/items.lance"
    lancelet.write_dataset(id_strings(range(0, 100)), uri, storage_options=opts)

    def slow_batches():
        for i in range(40):
            if i == 5:
                proxy.cut()
            yield pa.record_batch({"id": pa.array(range(i * 50_000, (i + 1) * 50_000), pa.int64()),
                                   "s": pa.array(["x" * 200] * 50_000)})

    t0 = time.monotonic()
    with pytest.raises(OSError):
        lancelet.write_dataset(slow_batches(), uri, mode="append", max_rows_per_file=100_000, storage_options=opts)
    assert time.monotonic() - t0 < 60  # the retry budget, not a hang
    proxy.start()
    ds = lancelet.dataset(uri, storage_options=opts)
    assert ds.version == 1 and ds.to_table().equals(id_strings(range(0, 100)))
    lancelet.write_dataset(id_strings(range(100, 110)), uri, mode="append", storage_options=opts)
    assert lancelet.dataset(uri, storage_options=opts).count_rows() == 110
    proxy.cut()


_S3_WRITER = """
import json, sys
import pyarrow as pa
import lancelet
uri, opts = sys.argv[1], json.loads(sys.argv[2])
v = lancelet.dataset(uri, storage_options=opts).version
print("ready", v, flush=True)
while True:
    ids = list(range(v * 100, v * 100 + 100))
    lancelet.write_dataset(pa.table({"id": pa.array(ids, pa.int64()), "s": [str(i) for i in ids]}), uri,
                           mode="append", storage_options=opts)
    v += 1
    print(v, flush=True)
"""


def test_writers_killed_on_s3_leave_a_committed_version(s3):
    import json
    import random

    uri, opts, client = s3
    lancelet.write_dataset(pa.table({"id": pa.array(range(100), pa.int64()), "s": [str(i) for i in range(100)]}),
                           uri, storage_options=opts)
    rng = random.Random(7)
    printed = 1
    for _ in range(5):
        proc = subprocess.Popen([sys.executable, "-c", _S3_WRITER, uri, json.dumps(opts)],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        _, out = kill_after_ready(proc, rng.uniform(0.2, 2.0))
        for line in out.split():
            printed = int(line)
        ds = lancelet.dataset(uri, storage_options=opts)
        assert ds.version in (printed, printed + 1)
        assert ds.count_rows() == 100 * ds.version
        assert sorted(ds.to_table(columns=["id"])["id"].to_pylist()) == list(range(100 * ds.version))
        printed = ds.version
    assert printed > 3, "the writers committed too little to test anything"
    # The killed writers' orphans and old versions' files go; the latest version stays whole.
    stats = lancelet.dataset(uri, storage_options=opts).cleanup_old_versions(retain_versions=2,
                                                                             delete_unverified=True)
    assert stats.old_versions == printed - 2
    prefix = uri[len("s3://lancelet/"):] + "/"
    left = {o["Key"][len(prefix):] for o in client.list_objects_v2(Bucket="lancelet", Prefix=prefix + "data/")
            .get("Contents", [])}
    assert left == {f"data/{df.path}" for v in (printed - 1, printed)
                    for f in lancelet.dataset(uri, version=v, storage_options=opts).get_fragments()
                    for df in f.data_files()}
    assert sorted(lancelet.dataset(uri, storage_options=opts).to_table(columns=["id"])["id"].to_pylist()) \
        == list(range(100 * printed))


@pytest.fixture(params=["local", "s3"])
def local_or_s3(request, tmp_path):
    """A fresh dataset URI and its storage options, on local disk and on the S3 server."""
    if request.param == "local":
        return str(tmp_path / "items.lance"), None
    uri, opts, _ = request.getfixturevalue("s3")
    return uri, opts


def test_sixteen_writers_appending_and_deleting_at_once(local_or_s3):
    """Eight appenders (4 processes, 4 threads) and eight deleters race; deletes of different
    fragments all land, deletes of one fragment either land or raise CommitConflictError;
    every landed change is in the table and the history is linear."""
    uri, opts = local_or_s3
    lancelet.write_dataset(id_strings(range(0, 800)), uri, max_rows_per_file=100, storage_options=opts)
    procs = start_appenders(uri, opts, 4)
    deleted, conflicts, failures = [], [], []

    def delete(pred, rows):
        try:
            lancelet.dataset(uri, storage_options=opts).delete(pred)
            deleted.append(rows)
        except lancelet.CommitConflictError as e:
            conflicts.append(e)
        except Exception as e:  # noqa: BLE001
            failures.append(e)

    jobs = [threading.Thread(target=delete, args=(f"id >= {f * 100} AND id < {f * 100 + 10}",
                                                  range(f * 100, f * 100 + 10))) for f in range(4)]
    jobs += [threading.Thread(target=delete, args=(f"id = {700 + k}", [700 + k])) for k in range(4)]
    jobs.append(threading.Thread(target=lambda: failures.extend(_append_in_threads(uri, opts, 4, 20))))
    for j in jobs:
        j.start()
    for j in jobs:
        j.join()
    wait_appenders(procs)
    assert not failures
    assert len(deleted) >= 5  # the four disjoint deletes and at least one on fragment 7
    assert len(deleted) + len(conflicts) == 8
    ds = lancelet.dataset(uri, storage_options=opts)
    assert ds.version == 1 + 8 + len(deleted)
    assert [v["version"] for v in ds.versions()] == list(range(1, ds.version + 1))
    gone = {i for rows in deleted for i in rows}
    want = [i for i in range(800) if i not in gone]
    want += [lo + j for lo in [1000 * (i + 1) for i in range(4)] + [100_000 + 100 * i for i in range(4)]
             for j in range(20)]
    assert sorted(ds.to_table(columns=["id"])["id"].to_pylist()) == sorted(want)


def test_sixteen_writers_threads_and_processes_on_s3(s3):

    uri, opts, _ = s3
    lancelet.write_dataset(id_strings(range(0, 10)), uri, storage_options=opts)
    procs = start_appenders(uri, opts, 8)
    failures = _append_in_threads(uri, opts, 8, 20)
    wait_appenders(procs)
    assert not failures
    ds = lancelet.dataset(uri, storage_options=opts)
    assert ds.version == 17
    assert ds.count_rows() == 10 + 16 * 20
    assert [v["version"] for v in ds.versions()] == list(range(1, 18))
    ids = [f.fragment_id for f in ds.get_fragments()]
    assert len(ids) == len(set(ids))
