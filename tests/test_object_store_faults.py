"""Datasets on an S3 server that fails: 500/503 answers, writes that land but are reported as
failed, cut-off response bodies. A fault-injecting HTTP proxy (``_support.FaultProxy``) sits
between lancelet and a real S3 server (SeaweedFS on loopback, ``s3_endpoint`` in ``conftest.py``).

What must hold: transient faults are retried away (the default retry policy), persistent
ones are a clear ``OSError`` within the retry budget, and nothing is ever corrupted, lost,
duplicated or half-read.
"""

from __future__ import annotations

import threading
import time
import uuid

import numpy as np
import pyarrow as pa
import pytest

import lancelet
from lancelet import errors as E
from _support import FaultProxy, FaultRequest, s3_options
from _tables import id_strings

pytestmark = pytest.mark.lancelet_only

BUCKET = "faults"

# A budget that gives up fast: 2 retries (object_store's backoff starts at 100 ms).
TIGHT = {"client_max_retries": "2", "client_retry_timeout": "5"}


def manifest_put(r: FaultRequest) -> bool:
    return r.method == "PUT" and "/_versions/" in r.path and r.path.endswith(".manifest")


def manifest_get(r: FaultRequest) -> bool:
    return r.method == "GET" and "/_versions/" in r.path and r.path.endswith(".manifest")


def manifest_of(version: int):
    """Matches requests for the manifest of ``version`` (V2 names count down from 2^64 - 1)."""
    name = f"/_versions/{2**64 - 1 - version}.manifest"
    return lambda r: r.path.endswith(name)


def data_put(r: FaultRequest) -> bool:
    return r.method == "PUT" and "/data/" in r.path


def data_get(r: FaultRequest) -> bool:
    return r.method == "GET" and "/data/" in r.path


def part_put(r: FaultRequest) -> bool:
    return r.method == "PUT" and "partNumber=" in r.query


def listing(r: FaultRequest) -> bool:
    return r.method == "GET" and "list-type=2" in r.query


@pytest.fixture(scope="module")
def s3_server(s3_endpoint):
    """The session's S3 server (SeaweedFS) with bucket ``faults``: ``(endpoint, boto3 client)``."""
    endpoint, client = s3_endpoint
    try:
        client.create_bucket(Bucket=BUCKET)
    except client.exceptions.BucketAlreadyOwnedByYou:
        pass
    return endpoint, client


@pytest.fixture
def px(s3_server):
    """A fault proxy in front of the server (no rules yet)."""
    with FaultProxy(s3_server[0]) as proxy:
        yield proxy


@pytest.fixture(scope="module")
def shared(s3_server):
    """A dataset (version 1: ``id_strings(range(0, 1000))`` in 4 files) that read-only tests share."""
    uri = _uri()
    _create(uri, s3_options(s3_server[0]))
    return uri


def _uri() -> str:
    return f"s3://{BUCKET}/{uuid.uuid4().hex}/items.lance"


def _opts(px: FaultProxy, **extra: str) -> dict:
    return {**s3_options(px.endpoint), **extra}


def _check(uri: str, opts: dict, version: int, table: pa.Table) -> None:
    """The dataset is at ``version`` and holds exactly ``table`` (read without faults)."""
    ds = lancelet.dataset(uri, storage_options=opts)
    assert ds.version == version
    assert ds.to_table().sort_by("id").equals(table)
    assert [v["version"] for v in ds.versions()] == list(range(1, version + 1))


# --- transient faults: retried away ----------------------------------------------------------

def _create(uri, opts):
    lancelet.write_dataset(id_strings(range(0, 1000)), uri, max_rows_per_file=300, storage_options=opts)
    return 1, id_strings(range(0, 1000))


def _append(uri, opts):
    lancelet.write_dataset(id_strings(range(1000, 1200)), uri, mode="append", max_rows_per_file=100, storage_options=opts)
    return 2, id_strings(range(0, 1200))


def _scan(uri, opts):
    ds = lancelet.dataset(uri, storage_options=opts)
    assert ds.to_table().equals(id_strings(range(0, 1000)))
    assert ds.to_table(filter="id % 100 = 7").column("id").to_pylist() == list(range(7, 1000, 100))
    assert ds.count_rows("id >= 500") == 500
    return 1, id_strings(range(0, 1000))


def _take(uri, opts):
    ds = lancelet.dataset(uri, storage_options=opts)
    assert ds.take([0, 299, 300, 999]).equals(id_strings([0, 299, 300, 999]))
    return 1, id_strings(range(0, 1000))


def _delete(uri, opts):
    lancelet.dataset(uri, storage_options=opts).delete("id % 3 = 0 or id >= 900")
    return 2, id_strings(i for i in range(900) if i % 3)


def _versions(uri, opts):
    lancelet.write_dataset(id_strings(range(1000, 1010)), uri, mode="append", storage_options=opts)
    ds = lancelet.dataset(uri, storage_options=opts)
    assert [v["version"] for v in ds.versions()] == [1, 2]
    assert lancelet.dataset(uri, version=1, storage_options=opts).count_rows() == 1000
    return 2, id_strings(range(0, 1010))


OPERATIONS = {"create": _create, "append": _append, "scan": _scan, "take": _take, "delete": _delete,
              "versions": _versions}

READ_ONLY = {"scan", "take"}

TRANSIENT = {
    # S3 throttling: every third request is turned away.
    "503-SlowDown-every-3rd": {"status": 503, "every": 3},
    # A burst: the next 3 requests fail, whatever they are.
    "500-InternalError-burst-of-3": {"status": 500, "times": 3},
}


@pytest.mark.parametrize("op,fault", [(op, "503-SlowDown-every-3rd") for op in OPERATIONS]
                         + [(op, "500-InternalError-burst-of-3") for op in ("create", "append", "delete", "scan")])
def test_transient_errors_are_retried_and_the_data_is_exact(px, shared, op, fault):
    uri, opts = (shared if op in READ_ONLY else _uri()), _opts(px)
    if op != "create" and op not in READ_ONLY:
        _create(uri, opts)
    rule = px.fail(**TRANSIENT[fault])
    version, expected = OPERATIONS[op](uri, opts)
    rule.stop()
    assert rule.fired >= 1, "the fault never fired: the test tested nothing"
    _check(uri, opts, version, expected)


# --- persistent faults: a clear OSError within the retry budget, nothing damaged -------------

def _open(uri, opts):
    lancelet.dataset(uri, storage_options=opts)


PERSISTENT = {
    "append/every-request": (_append, None),
    "append/manifest-PUTs": (_append, manifest_put),
    "append/data-file-PUTs": (_append, data_put),
    "delete/every-request": (_delete, None),
    "scan/data-file-GETs": (_scan, data_get),
    "open/listings": (_open, listing),
}


@pytest.mark.parametrize("case", PERSISTENT)
def test_persistent_errors_are_a_clear_oserror_and_damage_nothing(px, case):
    op, when = PERSISTENT[case]
    uri = _uri()
    _create(uri, _opts(px))
    rule = px.fail(500, when=when)
    t0 = time.monotonic()
    with pytest.raises(OSError) as err:
        op(uri, _opts(px, **TIGHT))
    elapsed = time.monotonic() - t0
    rule.stop()
    # Not "not found", not a conflict, not a panic: an I/O error that says what failed.
    assert type(err.value) is E.LanceIOError, repr(err.value)
    assert "500" in str(err.value) or "Internal" in str(err.value), str(err.value)
    assert rule.fired >= 3  # the first try and both retries
    assert elapsed < 5, f"gave up after {elapsed:.1f}s: the retry budget is 2 retries"
    _check(uri, _opts(px), 1, id_strings(range(0, 1000)))
    lancelet.write_dataset(id_strings(range(1000, 1100)), uri, mode="append", storage_options=_opts(px))
    _check(uri, _opts(px), 2, id_strings(range(0, 1100)))


def test_transient_manifest_put_errors_commit_exactly_once(px):
    uri, opts = _uri(), _opts(px)
    _create(uri, opts)
    rule = px.fail(503, when=manifest_put, times=3)
    _append(uri, opts)
    assert rule.fired == 3
    _check(uri, opts, 2, id_strings(range(0, 1200)))


# --- the write landed, the answer was lost ---------------------------------------------------

LOST_ANSWERS = {
    "create/manifest": (_create, manifest_put),
    "append/manifest": (_append, manifest_put),
    "delete/manifest": (_delete, manifest_put),
    "append/data-file": (_append, data_put),
    "append/transaction-file": (_append, lambda r: r.method == "PUT" and "/_transactions/" in r.path),
}


@pytest.mark.parametrize("case", LOST_ANSWERS)
def test_a_write_that_landed_but_answered_500_is_committed_exactly_once(px, case):
    """The server stores the object, the client sees a 500 and retries: for a manifest the
    retry finds the object there (412 Precondition Failed). That is our own commit, not a
    rival's: no error, no second commit of the same change, no spurious conflict."""
    op, when = LOST_ANSWERS[case]
    uri, opts = _uri(), _opts(px)
    if op is not _create:
        _create(uri, opts)
    rule = px.fail(500, when=when, times=1, after_forward=True)
    version, expected = op(uri, opts)
    rule.stop()
    assert rule.fired == 1
    _check(uri, opts, version, expected)


@pytest.mark.parametrize("op", [_create, _append, _delete], ids=["create", "append", "delete"])
def test_a_manifest_put_that_always_answers_500_but_lands_is_committed_once(px, op):
    """Every manifest PUT is stored but answered with a 500, retries included, until the
    client gives up: the manifest is there, so the commit is reported as done."""
    uri = _uri()
    if op is not _create:
        _create(uri, _opts(px))
    rule = px.fail(500, when=manifest_put, after_forward=True)
    version, expected = op(uri, _opts(px, **TIGHT))
    rule.stop()
    assert rule.fired >= 3
    _check(uri, _opts(px), version, expected)


def test_a_landed_commit_whose_outcome_cannot_be_read_back_is_an_error_not_a_second_commit(px):
    """The manifest PUT lands but answers 500, and the manifest cannot be read back either:
    whether the commit landed is unknown. lancelet must say so (an OSError), and must not
    take the 412 of its retry for a rival's commit and commit the append again."""
    uri = _uri()
    _create(uri, _opts(px))
    put = px.fail(500, when=manifest_put, after_forward=True)
    get = px.fail(500, when=lambda r: manifest_get(r) and manifest_of(2)(r))
    with pytest.raises(OSError):
        _append(uri, _opts(px, **TIGHT))
    put.stop()
    get.stop()
    assert put.fired >= 1 and get.fired >= 1
    _check(uri, _opts(px), 2, id_strings(range(0, 1200)))  # it had landed, once


# --- multipart uploads (data files over 32 MiB) ----------------------------------------------

def _big(n: int = 330_000) -> pa.Table:
    # Random bytes (fixed seed): a repeated value would compress to almost nothing at 2.2.
    raw = np.random.default_rng(5).bytes(110 * n)
    blob = [raw[i * 110:(i + 1) * 110] for i in range(n)]
    if n > 123456:
        blob[123456] = b"x" * 110
    return pa.table({"id": pa.array(range(n), pa.int64()), "blob": pa.array(blob)})


def test_failed_upload_parts_are_retried(px, s3_server):
    uri, opts = _uri(), _opts(px)
    rule = px.fail(503, when=part_put, times=2)
    ds = lancelet.write_dataset(_big(), uri, storage_options=opts)
    rule.stop()
    assert rule.fired == 2
    assert ds.get_fragments()[0].data_files()[0].file_size_bytes > 32 << 20  # a multipart upload
    back = lancelet.dataset(uri, storage_options=opts)
    assert back.count_rows() == 330_000
    assert back.take([0, 200_000, 329_999]).column("id").to_pylist() == [0, 200_000, 329_999]
    assert back.to_table(columns=["blob"], filter="id = 123456").column("blob").to_pylist() == [b"x" * 110]


def test_an_upload_whose_parts_keep_failing_is_aborted(px, s3_server):
    _, client = s3_server
    uri = _uri()
    lancelet.write_dataset(_big(10), uri, storage_options=_opts(px))
    rule = px.fail(500, when=part_put)
    with pytest.raises(OSError) as err:
        lancelet.write_dataset(_big(), uri, mode="append", storage_options=_opts(px, **TIGHT))
    rule.stop()
    assert type(err.value) is E.LanceIOError
    assert rule.fired >= 3
    # The parts stored so far were discarded: no upload left open to cost money.
    prefix = uri[len(f"s3://{BUCKET}/"):]
    assert client.list_multipart_uploads(Bucket=BUCKET, Prefix=prefix).get("Uploads", []) == []
    ds = lancelet.dataset(uri, storage_options=_opts(px))
    assert ds.version == 1 and ds.to_table().equals(_big(10))


# --- cut-off response bodies -------------------------------------------------------------------

def test_cut_off_data_file_reads_are_retried(px, shared):
    uri, opts = shared, _opts(px)
    rule = px.truncate(when=data_get, times=4)
    _scan(uri, opts)
    _take(uri, opts)
    rule.stop()
    assert rule.fired == 4


def test_cut_off_manifest_reads_are_retried(px):
    uri, opts = _uri(), _opts(px)
    _create(uri, opts)
    _append(uri, opts)
    rule = px.truncate(when=manifest_get, every=2, keep=0.3)
    _check(uri, opts, 2, id_strings(range(0, 1200)))
    assert lancelet.dataset(uri, version=1, storage_options=opts).count_rows() == 1000
    rule.stop()
    assert rule.fired >= 2


@pytest.mark.parametrize("honest_length", [False, True], ids=["connection-dropped", "short-but-well-formed"])
@pytest.mark.parametrize("target", ["data", "manifest"])
def test_persistently_cut_off_reads_are_errors_never_wrong_data(px, shared, honest_length, target):
    """Bodies always cut short: the promised length not delivered (a dropped connection), or
    a well-formed response that is simply too short. Either way an error, never a table."""
    uri = shared
    rule = px.truncate(when=data_get if target == "data" else manifest_get, keep=0.6, honest_length=honest_length)
    with pytest.raises(OSError) as err:
        lancelet.dataset(uri, storage_options=_opts(px, **TIGHT)).to_table()
    rule.stop()
    assert isinstance(err.value, (E.LanceIOError, E.CorruptFileError)), repr(err.value)
    assert rule.fired >= 1
    _check(uri, _opts(px), 1, id_strings(range(0, 1000)))


# --- readers and a writer, both through a failing server --------------------------------------

def test_readers_never_see_a_half_written_version_while_the_server_fails(px):
    uri, opts = _uri(), _opts(px)
    lancelet.write_dataset(id_strings(range(0, 100)), uri, storage_options=opts)
    rules = [px.fail(503, when=lambda r: r.method == "PUT", every=3),
             px.truncate(when=manifest_get, every=2),
             px.truncate(when=data_get, every=5)]
    done = threading.Event()
    failures: list = []

    def write():
        try:
            for v in range(2, 7):
                lancelet.write_dataset(id_strings(range(100 * (v - 1), 100 * v)), uri, mode="append", storage_options=opts)
        except Exception as e:  # noqa: BLE001
            failures.append(e)
        finally:
            done.set()

    writer = threading.Thread(target=write)
    writer.start()
    seen = set()
    while not done.is_set() or len(seen) < 2:
        ds = lancelet.dataset(uri, storage_options=opts)
        assert ds.to_table().sort_by("id").equals(id_strings(range(0, 100 * ds.version)))
        seen.add(ds.version)
        if done.is_set():
            break
    writer.join()
    for r in rules:
        r.stop()
    assert not failures, failures
    assert all(r.fired >= 1 for r in rules)
    _check(uri, opts, 6, id_strings(range(0, 600)))
