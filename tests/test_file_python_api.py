"""The Python surface of ``lancelet.file``: pylance-compatible signatures, Arrow stream
results (PyCapsule, pandas, polars), one-shot results, memory, fork safety and I/O.
"""

from __future__ import annotations

import gc
import inspect
import os
import subprocess
import sys
import textwrap

import numpy as np
import pyarrow as pa
import pytest

import lance.file
import lancelet
import lancelet._native
import lancelet.file
from lancelet.file import LanceFileReader, LanceFileWriter, ReaderResults

# --------------------------------------------------------------------------------------
# Fixtures
# --------------------------------------------------------------------------------------


@pytest.fixture(autouse=True)
def no_pyarrow_allocations_outlive_a_test():
    """Results cross from Rust without copies, so reading must not leave buffers in
    pyarrow's memory pool once the results are dropped."""
    gc.collect()
    before = pa.total_allocated_bytes()
    yield
    gc.collect()
    assert pa.total_allocated_bytes() <= before, "pyarrow allocations outlived the test"


@pytest.fixture
def ints_file(tmp_path) -> str:
    path = str(tmp_path / "ints.lance")
    table = pa.table(
        {
            "a": pa.array(range(10_000), pa.int64()),
            "s": pa.array([None if i % 10 == 0 else f"s{i}" for i in range(10_000)]),
            "l": pa.array([[i] * (i % 3) for i in range(10_000)], pa.list_(pa.int32())),
        }
    )
    with LanceFileWriter(path, table.schema, version="2.0") as w:
        w.write_batch(table)
    return path


# --------------------------------------------------------------------------------------
# Signatures
# --------------------------------------------------------------------------------------

#: Parameters pylance has that lancelet deliberately accepts through **kwargs (they
#: only matter for namespaces and for wrapping existing native objects, which lancelet
#: does not have): passing them is accepted, but they are not named in the signature.
ACCEPTED_VIA_KWARGS = {"namespace_client", "table_id", "_inner_reader", "_inner_writer"}

SIGNATURES = [
    ("LanceFileReader", "__init__"),
    ("LanceFileReader", "read_all"),
    ("LanceFileReader", "read_range"),
    ("LanceFileReader", "take_rows"),
    ("LanceFileReader", "num_rows"),
    ("LanceFileReader", "metadata"),
    ("LanceFileReader", "file_statistics"),
    ("LanceFileReader", "read_global_buffer"),
    ("LanceFileWriter", "__init__"),
    ("LanceFileWriter", "write_batch"),
    ("LanceFileWriter", "close"),
    ("LanceFileWriter", "add_schema_metadata"),
    ("ReaderResults", "to_table"),
    ("ReaderResults", "to_batches"),
]


@pytest.mark.interop
@pytest.mark.parametrize("cls,method", SIGNATURES, ids=[f"{c}.{m}" for c, m in SIGNATURES])
def test_signature_matches_pylance(cls, method):
    theirs = inspect.signature(getattr(getattr(lance.file, cls), method))
    ours = inspect.signature(getattr(getattr(lancelet.file, cls), method))
    our_params = ours.parameters
    has_var_kwargs = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in our_params.values())
    positional_theirs = [n for n, p in theirs.parameters.items() if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    positional_ours = [n for n, p in our_params.items() if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    # Positional parameters come in the same order (extra ones of ours may follow).
    assert positional_ours[: len(positional_theirs)] == positional_theirs
    for name, p in theirs.parameters.items():
        if name in ACCEPTED_VIA_KWARGS:
            assert has_var_kwargs, f"{cls}.{method} must accept {name} through **kwargs"
            continue
        assert name in our_params, f"{cls}.{method} lacks pylance's parameter {name!r}"
        q = our_params[name]
        assert q.kind == p.kind, f"{cls}.{method}({name}): kind {q.kind} != pylance's {p.kind}"
        assert q.default == p.default, f"{cls}.{method}({name}): default {q.default!r} != pylance's {p.default!r}"
    # Our extra parameters are optional, so every pylance call is valid for us.
    for name, q in our_params.items():
        if name not in theirs.parameters and q.kind not in (q.VAR_KEYWORD, q.VAR_POSITIONAL):
            assert q.default is not inspect.Parameter.empty, f"extra parameter {name!r} must have a default"


def test_parameters_accepted_via_kwargs_are_accepted(ints_file, tmp_path):
    reader = LanceFileReader(ints_file, namespace_client=None, table_id=None, _inner_reader=None)
    assert reader.num_rows() == 10_000
    w = LanceFileWriter(
        str(tmp_path / "k.lance"),
        pa.schema([("a", pa.int32())]),
        namespace_client=None,
        table_id=None,
        _inner_writer=None,
        keep_original_array=True,
        data_cache_bytes=1 << 20,
    )
    w.write_batch(pa.table({"a": pa.array([1], pa.int32())}))
    assert w.close() == 1


#: pylance public methods lancelet does not have yet. When one is implemented this test
#: fails, so the list (and the signature list above) gets updated.
NOT_YET_IMPLEMENTED: set = set()


@pytest.mark.interop
def test_every_public_pylance_method_exists_in_lancelet():
    missing = set()
    for cls in ("LanceFileReader", "LanceFileWriter", "ReaderResults"):
        theirs = {n for n in dir(getattr(lance.file, cls)) if not n.startswith("_")}
        ours = {n for n in dir(getattr(lancelet.file, cls)) if not n.startswith("_")}
        missing |= {f"{cls}.{n}" for n in theirs - ours}
    assert missing == NOT_YET_IMPLEMENTED


def test_metadata_dataclasses_have_pylance_attribute_names(ints_file):
    md = LanceFileReader(ints_file).metadata()
    theirs = lance.file.LanceFileReader(ints_file).metadata()
    for attr in ("schema", "num_rows", "num_data_bytes", "num_column_metadata_bytes", "num_global_buffer_bytes",
                 "global_buffers", "columns", "major_version", "minor_version"):
        assert hasattr(md, attr) and hasattr(theirs, attr), attr
    assert hasattr(md.columns[0], "column_buffers") and hasattr(md.columns[0], "pages")
    assert hasattr(md.columns[0].pages[0], "buffers") and hasattr(md.columns[0].pages[0], "encoding")
    assert hasattr(md.global_buffers[0], "position") and hasattr(md.global_buffers[0], "size")
    stats = LanceFileReader(ints_file).file_statistics()
    assert [(c.num_pages, c.size_bytes) for c in stats.columns] == [
        (c.num_pages, c.size_bytes) for c in lance.file.LanceFileReader(ints_file).file_statistics().columns
    ]


def test_stable_version_is_the_version_lancelet_writes_by_default(tmp_path):
    """As pylance 14: stable_version() is "2.2", and so is the default (version=None)."""
    assert lancelet.file.stable_version() == "2.2"
    path = str(tmp_path / "default.lance")
    with LanceFileWriter(path) as w:
        w.write_batch(pa.table({"a": [1]}))
    md = LanceFileReader(path).metadata()
    assert (md.major_version, md.minor_version) == (2, 2)


def test_exceptions_are_exported_from_the_package_and_derive_from_builtins():
    assert issubclass(lancelet.LanceNotFoundError, FileNotFoundError)
    assert issubclass(lancelet.CorruptFileError, OSError)
    assert issubclass(lancelet.LanceIOError, OSError)
    assert issubclass(lancelet.SchemaMismatchError, ValueError)
    assert issubclass(lancelet.InvalidArgumentError, ValueError)
    assert issubclass(lancelet.UnsupportedFeatureError, NotImplementedError)
    assert issubclass(lancelet.InternalError, RuntimeError)
    for name in lancelet.errors.__all__:
        cls = getattr(lancelet, name)
        assert issubclass(cls, lancelet.LanceError)
        assert cls.__module__ == "lancelet.errors"


# --------------------------------------------------------------------------------------
# Streaming results
# --------------------------------------------------------------------------------------


def test_to_batches_yields_batches_of_batch_size(ints_file):
    reader = LanceFileReader(ints_file)
    batches = reader.read_all(batch_size=3000).to_batches()
    assert isinstance(batches, pa.RecordBatchReader)
    assert batches.schema.equals(reader.schema)
    assert [b.num_rows for b in batches] == [3000, 3000, 3000, 1000]
    take = reader.take_rows(list(range(0, 10_000, 100)), batch_size=30).to_batches()
    assert [b.num_rows for b in take] == [30, 30, 30, 10]
    ranged = reader.read_range(5, 100, batch_size=40).to_batches()
    assert [b.num_rows for b in ranged] == [40, 40, 20]


def test_results_are_an_arrow_c_stream(ints_file):
    reader = LanceFileReader(ints_file)
    expected = reader.read_all().to_table()
    results = reader.read_all(batch_size=777)
    assert isinstance(results, ReaderResults)
    assert hasattr(results, "__arrow_c_stream__")
    table = pa.table(results)
    assert table.equals(expected)
    assert pa.RecordBatchReader.from_stream(reader.take_rows([5, 1])).read_all().equals(expected.take([5, 1]))


def test_results_reader_property_is_a_record_batch_reader(ints_file):
    reader = LanceFileReader(ints_file)
    rbr = reader.read_range(0, 10).reader
    assert isinstance(rbr, pa.RecordBatchReader)
    assert rbr.read_all().num_rows == 10


def test_results_convert_to_pandas(ints_file):
    pd = pytest.importorskip("pandas")
    df = LanceFileReader(ints_file).read_range(0, 50).to_table().to_pandas()
    assert list(df.columns) == ["a", "s", "l"]
    assert df["a"].tolist() == list(range(50))
    assert pd.isna(df["s"].iloc[0]) and df["s"].iloc[1] == "s1"
    assert list(df["l"].iloc[2]) == [2, 2]


def test_results_convert_to_polars(ints_file):
    polars = pytest.importorskip("polars")
    table = LanceFileReader(ints_file).read_range(0, 50).to_table()
    df = polars.from_arrow(table)
    assert df.shape == (50, 3)
    assert df["a"].to_list() == list(range(50))
    assert df["s"][0] is None
    # polars also consumes the PyCapsule stream directly.
    direct = polars.DataFrame(LanceFileReader(ints_file).read_range(0, 50))
    assert direct.equals(df)


def test_results_are_one_shot_and_say_so(ints_file):
    results = LanceFileReader(ints_file).read_all()
    first = results.to_table()
    assert first.num_rows == 10_000
    for consume in (results.to_table, results.to_batches, lambda: pa.table(results)):
        with pytest.raises(lancelet.LanceError) as info:
            consume()
        assert isinstance(info.value, ValueError)
        assert "already consumed" in str(info.value)
    take = LanceFileReader(ints_file).take_rows([1])
    take.to_table()
    with pytest.raises(ValueError, match="already consumed"):
        take.to_table()


def test_read_is_lazy_and_streams_page_by_page(tmp_path):
    """read_all returns before reading data; consuming one batch reads only its pages."""
    path = str(tmp_path / "stream.lance")
    table = pa.table({"a": pa.array(np.arange(400_000), pa.int64())})
    with LanceFileWriter(path, table.schema, version="2.0", max_page_bytes=256 * 1024) as w:
        w.write_batch(table)
    size = os.path.getsize(path)
    reader = LanceFileReader(path)
    after_open = reader.io_stats()["bytes_read"]
    batches = reader.read_all(batch_size=1000).to_batches()
    assert reader.io_stats()["bytes_read"] == after_open
    first = batches.read_next_batch()
    assert first.column(0).to_pylist()[:3] == [0, 1, 2]
    assert reader.io_stats()["bytes_read"] - after_open < size / 4
    rest = sum(b.num_rows for b in batches)
    assert rest == 399_000
    # One pass over the data: every page was fetched once (each read widened to whole 4 KiB
    # checksum blocks, so a page shares at most two blocks with its neighbours).
    pages = len(reader.metadata().columns[0].pages)
    assert reader.io_stats()["bytes_read"] - after_open <= size + 2 * 4096 * pages


def test_results_schema_is_the_projection(ints_file):
    reader = LanceFileReader(ints_file, columns=["l", "a"])
    table = reader.read_all().to_table()
    assert table.column_names == ["l", "a"]
    assert table.schema.field("l").type == pa.list_(pa.int32())


# --------------------------------------------------------------------------------------
# Memory
# --------------------------------------------------------------------------------------


def _rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def test_reading_and_dropping_results_many_times_does_not_leak(tmp_path):
    path = str(tmp_path / "leak.lance")
    table = pa.table(
        {
            "a": pa.array(np.arange(200_000), pa.int64()),
            "s": pa.array([f"value-{i % 1000}-{i}" for i in range(200_000)]),
        }
    )
    with LanceFileWriter(path, table.schema, version="2.0") as w:
        w.write_batch(table)
    del table
    reader = LanceFileReader(path)

    def cycle():
        t = reader.read_all(batch_size=50_000).to_table()
        assert t.num_rows == 200_000
        reader.take_rows([5, 199_999, 7]).to_table()
        pa.table(reader.read_range(100, 20_000))
        del t

    for _ in range(5):  # warm up allocators and caches
        cycle()
    gc.collect()
    pa_before, rss_before = pa.total_allocated_bytes(), _rss_bytes()
    for _ in range(60):
        cycle()
    gc.collect()
    assert pa.total_allocated_bytes() - pa_before <= 64 * 1024
    # Each cycle materialises ~6 MB; leaking it would grow RSS by ~360 MB.
    assert _rss_bytes() - rss_before < 64 * 1024 * 1024


# --------------------------------------------------------------------------------------
# Fork safety
# --------------------------------------------------------------------------------------

FORK_SCRIPT = textwrap.dedent(
    r"""
    import os, sys
    import pyarrow as pa
    import lancelet._native
    from lancelet.file import LanceFileReader, LanceFileWriter

    path = sys.argv[1]
    table = pa.table({"a": pa.array(range(5000), pa.int64()), "s": [str(i) for i in range(5000)]})
    with LanceFileWriter(path, table.schema, version="2.0", max_page_bytes=4096) as w:
        w.write_batch(table)
    reader = LanceFileReader(path)
    assert reader.read_all(batch_size=700).to_table().equals(table)
    parent_pid = os.getpid()
    assert lancelet._native._runtime_pid() == parent_pid, lancelet._native._runtime_pid()
    # A result created before the fork and consumed in the child.
    pending = LanceFileReader(path).read_all(batch_size=999)

    pid = os.fork()
    if pid == 0:
        ok = False
        try:
            child = LanceFileReader(path)
            ok = child.read_all(batch_size=333).to_table().equals(table)
            ok = ok and child.take_rows([4999, 0, 2500]).to_table().equals(table.take([4999, 0, 2500]))
            ok = ok and reader.read_range(10, 3000).to_table().equals(table.slice(10, 3000))
            ok = ok and lancelet._native._runtime_pid() == os.getpid() != parent_pid
            mode = sys.argv[2]
            if mode == "pending":
                ok = ok and pending.to_table().equals(table)
        except BaseException as e:
            print("child failed:", type(e).__name__, e, file=sys.stderr, flush=True)
            ok = False
        os._exit(0 if ok else 1)
    _, status = os.waitpid(pid, 0)
    # The parent keeps working after the fork.
    assert LanceFileReader(path).take_rows([1]).to_table().column("a").to_pylist() == [1]
    assert lancelet._native._runtime_pid() == parent_pid
    sys.exit(os.waitstatus_to_exitcode(status))
    """
)


@pytest.mark.parametrize("mode", ["fresh", "pending"])
def test_reading_works_in_a_forked_child(mode, tmp_path):
    proc = subprocess.run(
        [sys.executable, "-c", FORK_SCRIPT, str(tmp_path / "fork.lance"), mode],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, f"exit {proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr[-3000:]}"


def test_runtime_pid_is_this_process_after_a_read(ints_file):
    LanceFileReader(ints_file).take_rows([0]).to_table()
    assert lancelet._native._runtime_pid() == os.getpid()


# --------------------------------------------------------------------------------------
# I/O
# --------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def million_int64(tmp_path_factory) -> str:
    path = str(tmp_path_factory.mktemp("io") / "million.lance")
    table = pa.table({"v": pa.array(np.arange(1_000_000, dtype=np.int64) * 3)})
    with LanceFileWriter(path, table.schema, version="2.0") as w:
        w.write_batch(table)
    return path


def test_take_rows_of_10_rows_from_a_million_reads_under_one_percent_of_the_file(million_int64):
    size = os.path.getsize(million_int64)
    assert size > 8_000_000
    reader = LanceFileReader(million_int64)
    opened = reader.io_stats()
    idx = [999_999, 0, 123_456, 500_000, 777_777, 42, 250_000, 999_000, 600_001, 314_159]
    got = reader.take_rows(idx).to_table()
    assert got.column("v").to_pylist() == [i * 3 for i in idx]
    after = reader.io_stats()
    # Each row's 4 KiB checksum block is read to check it (an OS page costs as much to read
    # as any part of it), and nothing more: about 0.5% of the file.
    assert after["bytes_read"] - opened["bytes_read"] <= len(idx) * 4096
    # Opening included (one 64 KiB read of the tail), under 1.5%.
    assert after["bytes_read"] < size * 0.015
    assert after["read_requests"] > opened["read_requests"]
    # Unchecked, only the rows' own bytes: opening included, under 1%.
    unchecked = LanceFileReader(million_int64, verify_checksums=False)
    unchecked.take_rows(idx).to_table()
    assert unchecked.io_stats()["bytes_read"] < size / 100


def test_read_range_of_a_few_rows_reads_under_one_percent_of_the_file(million_int64):
    size = os.path.getsize(million_int64)
    reader = LanceFileReader(million_int64)
    got = reader.read_range(600_000, 5).to_table()
    assert got.column("v").to_pylist() == [3 * i for i in range(600_000, 600_005)]
    assert reader.io_stats()["bytes_read"] < size / 100


def test_io_stats_of_a_full_read_cover_the_data(million_int64):
    reader = LanceFileReader(million_int64)
    reader.read_all(batch_size=100_000).to_table()
    stats = reader.io_stats()
    assert stats["bytes_read"] >= 8_000_000
    assert set(stats) == {"bytes_read", "read_requests"}


# --------------------------------------------------------------------------------------
# Threads
# --------------------------------------------------------------------------------------


def test_one_reader_serves_many_threads(ints_file):
    """The GIL is released during reads; concurrent reads of one reader all succeed."""
    from concurrent.futures import ThreadPoolExecutor

    reader = LanceFileReader(ints_file)
    expected = reader.read_all().to_table()

    def work(k: int) -> bool:
        idx = [(k * 37 + j * 101) % 10_000 for j in range(50)]
        ok = reader.take_rows(idx).to_table().equals(expected.take(idx))
        ok = ok and reader.read_range(k * 100, 500, batch_size=64).to_table().equals(expected.slice(k * 100, 500))
        return ok and reader.read_all(batch_size=4096).to_table().equals(expected)

    with ThreadPoolExecutor(max_workers=8) as pool:
        assert all(pool.map(work, range(32)))
