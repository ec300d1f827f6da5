"""Drop-in: pylance programs run unchanged after ``import lancelet as lance``.

Each test runs one small program twice, with ``lance`` (the pylance oracle) and with
``lib`` (lancelet; pylance itself when ``LANCELET_TEST_ORACLE_SELF=1``), each in its own
directory, and asserts the same results. Tests of messages and behaviour that are
lancelet's own carry the ``lancelet_only`` marker.
"""

from __future__ import annotations

import inspect
import multiprocessing
import os
import pickle
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pyarrow as pa
import pytest

lance = pytest.importorskip("lance")

import lancelet  # noqa: E402

pytestmark = pytest.mark.interop

ROWS = 10


def table(n: int = ROWS, start: int = 0) -> pa.Table:
    ids = list(range(start, start + n))
    return pa.table({"id": pa.array(ids, pa.int64()), "name": [f"n{i}" for i in ids]})


def both(lib, tmp_path: Path, program: Callable[[Any, Path], Any]) -> tuple:
    """``program(module, workdir)`` with pylance, then with ``lib``: (theirs, ours)."""
    out = []
    for name, mod in (("pylance", lance), ("ours", lib)):
        d = tmp_path / name
        d.mkdir()
        out.append(program(mod, d))
    return tuple(out)


def fragment_module(mod):
    """``lance.fragment`` / ``lancelet.fragment``."""
    return sys.modules[mod.__name__ + ".fragment"]


# --------------------------------------------------------------------------------------
# 1. take() with numpy and pyarrow indices
# --------------------------------------------------------------------------------------

INDEX_KINDS = {
    "numpy ints in a list": lambda: [np.int64(7), np.int32(1), np.uint16(7)],
    "numpy array": lambda: np.array([3, 0, 9]),
    "numpy uint32 array": lambda: np.array([2, 2], dtype=np.uint32),
    "pyarrow array": lambda: pa.array([5, 1], pa.int64()),
    "pyarrow uint64 array": lambda: pa.array([4], pa.uint64()),
    "pyarrow chunked array": lambda: pa.chunked_array([[1], [8, 0]]),
    "tuple": lambda: (6, 2),
    "range": lambda: range(3),
}


@pytest.mark.parametrize("kind", list(INDEX_KINDS))
def test_take_accepts_numpy_and_arrow_indices(lib, tmp_path, kind):
    def program(mod, d):
        ds = mod.write_dataset(table(), str(d / "t.lance"), max_rows_per_file=4)
        frag = ds.get_fragments()[1]
        return (ds.take(INDEX_KINDS[kind]()).to_pydict(),
                frag.take(np.array([0, 2])).to_pydict(),
                ds.take(INDEX_KINDS[kind](), columns=["name"]).to_pydict())

    theirs, ours = both(lib, tmp_path, program)
    assert ours == theirs


# --------------------------------------------------------------------------------------
# 2. storage_options on local paths and memory:// are accepted and ignored
# --------------------------------------------------------------------------------------

S3_STYLE_OPTIONS = {"aws_access_key_id": "key", "aws_secret_access_key": "secret", "aws_region": "us-east-1",
                    "allow_http": "true", "timeout": "30s", "aws_endpoint": "http://127.0.0.1:1"}


def test_storage_options_on_local_paths_are_ignored(lib, tmp_path):
    def program(mod, d):
        uri = str(d / "t.lance")
        so = dict(S3_STYLE_OPTIONS)
        mod.write_dataset(table(4), uri, storage_options=so)
        appended = mod.write_dataset(table(3, 4), uri, mode="append", storage_options=so)
        opened = mod.dataset(uri, storage_options=so)
        frags = fragment_module(mod).write_fragments(table(2, 7), uri, storage_options=so)
        committed = mod.LanceDataset.commit(uri, mod.LanceOperation.Append(frags),
                                            read_version=opened.version, storage_options=so)
        mem = mod.write_dataset(table(5), f"memory://drop_in_{mod.__name__}", storage_options=so)
        return (appended.count_rows(), opened.count_rows(), mod.LanceDataset(uri, storage_options=so).count_rows(),
                committed.to_table().to_pydict(), mem.count_rows())

    theirs, ours = both(lib, tmp_path, program)
    assert ours == theirs


# --------------------------------------------------------------------------------------
# 3. ~, relative paths, file:// URIs, memory://
# --------------------------------------------------------------------------------------


def test_tilde_is_expanded(lib, tmp_path, monkeypatch):
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))

    def program(mod, d):
        monkeypatch.chdir(d)
        name = f"~/{d.name}_t.lance"
        ds = mod.write_dataset(table(3), name)
        mod.write_dataset(table(2), name, mode="append")
        return (ds.uri.replace(d.name, "X"), mod.dataset(name).count_rows(),
                mod.dataset(str(home / f"{d.name}_t.lance")).count_rows(), os.path.exists(d / "~"))

    theirs, ours = both(lib, tmp_path, program)
    assert ours == theirs
    assert ours[-1] is False, "a literal ./~ folder was created"


def test_file_uris_relative_paths_and_plain_paths_name_the_same_dataset(lib, tmp_path, monkeypatch):
    def program(mod, d):
        plain = str(d / "f.lance")
        mod.write_dataset(table(3), "file://" + plain)
        a = mod.dataset(plain).count_rows()
        mod.write_dataset(table(2), plain, mode="append")
        b = mod.dataset("file://" + plain).count_rows()
        c = mod.dataset("file:" + plain).count_rows()
        monkeypatch.chdir(d)
        ds = mod.write_dataset(table(4), "rel.lance")
        d_rows = mod.dataset(str(d / "rel.lance")).count_rows()
        e = mod.dataset("./rel.lance").count_rows()
        return a, b, c, ds.uri, d_rows, e, mod.dataset(Path("rel.lance")).uri

    theirs, ours = both(lib, tmp_path, program)
    assert ours == theirs


def test_memory_uri_write_then_use(lib, tmp_path, oracle_self):
    """pylance's memory:// store lives as long as the dataset object: the object returned by
    ``write_dataset`` reads back what it wrote (both libraries). lancelet also keeps the
    store for the process, so a second ``dataset()`` finds it (pylance finds nothing)."""

    def program(mod, d):
        ds = mod.write_dataset(table(5), f"memory://drop_in_mem_{mod.__name__}_{d.name}")
        return ds.count_rows(), ds.to_table().to_pydict()

    theirs, ours = both(lib, tmp_path, program)
    assert ours == theirs
    if not oracle_self:
        lancelet.write_dataset(table(5), "memory://drop_in_mem_shared")
        assert lancelet.dataset("memory://drop_in_mem_shared").count_rows() == 5
        with pytest.raises(ValueError):
            lance.dataset("memory://drop_in_mem_never_written")


# --------------------------------------------------------------------------------------
# 4. pickling, and multiprocessing pools over fragments
# --------------------------------------------------------------------------------------


def test_datasets_fragments_and_operations_pickle(lib, tmp_path):
    def program(mod, d):
        uri = str(d / "p.lance")
        mod.write_dataset(table(6), uri, max_rows_per_file=4)
        mod.write_dataset(table(3, 6), uri, mode="append")
        old = mod.dataset(uri, version=1)
        back = pickle.loads(pickle.dumps(old))
        frag = pickle.loads(pickle.dumps(old.get_fragments()[1]))
        meta = old.get_fragments()[0].metadata
        meta_back = pickle.loads(pickle.dumps(meta))
        append = pickle.loads(pickle.dumps(mod.LanceOperation.Append([meta])))
        overwrite = pickle.loads(pickle.dumps(mod.LanceOperation.Overwrite(old.schema, [meta])))
        committed = mod.LanceDataset.commit(uri, overwrite, read_version=2)
        return (type(back).__name__, back.version, back.uri == old.uri, back.to_table().to_pydict(),
                back.latest_version, frag.fragment_id, frag.to_table().to_pydict(), meta_back == meta,
                [f.physical_rows for f in append.fragments], overwrite.new_schema == old.schema,
                committed.to_table().to_pydict())

    theirs, ours = both(lib, tmp_path, program)
    assert ours == theirs


def test_default_scan_options_survive_pickling(lib, tmp_path):
    def program(mod, d):
        uri = str(d / "p.lance")
        mod.write_dataset(table(6), uri)
        ds = mod.dataset(uri, default_scan_options={"filter": "id > 3", "columns": ["id"]})
        return pickle.loads(pickle.dumps(ds)).to_table().to_pydict()

    theirs, ours = both(lib, tmp_path, program)
    assert ours == theirs


@pytest.mark.lancelet_only
def test_scanners_pickle(tmp_path):
    """pylance's scanner does not pickle; lancelet's does, as the same scan of the same
    version."""
    uri = str(tmp_path / "s.lance")
    lancelet.write_dataset(table(6), uri)
    scanner = lancelet.dataset(uri).scanner(columns={"double": "id * 2"}, filter="id >= 2", limit=3,
                                            with_row_id=True)
    lancelet.write_dataset(table(2), uri, mode="append")
    assert pickle.loads(pickle.dumps(scanner)).to_table().equals(scanner.to_table())


def _fragment_rows(fragment) -> dict:
    """Runs in a pool worker: reads one (unpickled) fragment."""
    return fragment.to_table().to_pydict()


def _write_part(args) -> list:
    """Runs in a pool worker: writes rows as uncommitted fragments."""
    modname, uri, start = args
    frag_mod = __import__(modname + ".fragment", fromlist=["write_fragments"])
    return frag_mod.write_fragments(table(3, start), uri)


@pytest.mark.parametrize("method", ["spawn", "fork"])
def test_a_pool_maps_over_fragments(lib, tmp_path, method):
    if method not in multiprocessing.get_all_start_methods():
        pytest.skip(f"no {method} start method here")

    def program(mod, d):
        uri = str(d / "pool.lance")
        mod.write_dataset(table(), uri, max_rows_per_file=3)
        ds = mod.dataset(uri)
        # pylance warns that it is not fork-safe; its results are taken in spawn workers.
        ctx = multiprocessing.get_context("spawn" if mod is lance else method)
        with ctx.Pool(2) as pool:
            rows = pool.map(_fragment_rows, ds.get_fragments())
            parts = pool.map(_write_part, [(mod.__name__, uri, 100), (mod.__name__, uri, 200)])
        frags = [f for part in parts for f in part]
        done = mod.LanceDataset.commit(uri, mod.LanceOperation.Append(frags), read_version=ds.version)
        return rows, sorted(done.to_table().column("id").to_pylist())

    theirs, ours = both(lib, tmp_path, program)
    assert ours == theirs


# --------------------------------------------------------------------------------------
# 5. write_dataset inputs; add_columns from a reader or a generator
# --------------------------------------------------------------------------------------

SCHEMA = pa.schema([("a", pa.int32()), ("b", pa.string())])

WRITE_INPUTS = {
    "dict of columns": (lambda: {"a": [1, 2], "b": ["x", "y"]}, None),
    "dict of columns with schema": (lambda: {"a": [1, 2], "b": ["x", None]}, SCHEMA),
    "dict of numpy columns": (lambda: {"a": np.arange(3), "v": np.arange(3) / 2}, None),
    "list of row dicts": (lambda: [{"a": 1, "b": "x"}, {"a": 2, "b": None}], None),
    "list of row dicts with schema": (lambda: [{"a": 1, "b": "x"}, {"a": 2}], SCHEMA),
    "list of batches with schema": (lambda: [pa.record_batch({"a": pa.array([1, 2], pa.int32()), "b": ["x", "y"]})] * 2,
                                    SCHEMA),
    "iterator of batches with schema": (
        lambda: iter([pa.record_batch({"a": pa.array([i], pa.int32()), "b": [str(i)]}) for i in range(3)]), SCHEMA),
    "generator of batches with schema": (
        lambda: (pa.record_batch({"a": pa.array([i], pa.int32()), "b": [str(i)]}) for i in range(3)), SCHEMA),
    "empty list with schema": (lambda: [], SCHEMA),
}


@pytest.mark.parametrize("kind", list(WRITE_INPUTS))
def test_write_dataset_inputs(lib, tmp_path, kind):
    make, schema = WRITE_INPUTS[kind]

    def program(mod, d):
        ds = mod.write_dataset(make(), str(d / "w.lance"), schema=schema)
        return ds.schema, ds.to_table().to_pydict()

    theirs, ours = both(lib, tmp_path, program)
    assert ours == theirs


def _new_columns():
    yield pa.record_batch({"g": pa.array([0, 1], pa.int64())})
    yield pa.record_batch({"g": pa.array([2, 3, 4], pa.int64())})
    yield pa.record_batch({"g": pa.array([5, 6, 7, 8], pa.int64())})


def test_add_columns_from_a_reader_a_generator_or_a_table(lib, tmp_path):
    """The stream's rows line up with the dataset's live rows, in order (deleted rows
    skipped), across fragments."""

    def program(mod, d):
        uri = str(d / "a.lance")
        ds = mod.write_dataset(table(), uri, max_rows_per_file=4)
        ds.delete("id = 5")
        n = ds.count_rows()
        ds.add_columns(pa.table({"r": [i * 10 for i in range(n)]}).to_reader())
        ds.add_columns(_new_columns(), reader_schema=pa.schema([("g", pa.int64())]))
        ds.add_columns(pa.table({"t": [f"t{i}" for i in range(n)]}))
        mine = ds.to_table().to_pydict()
        return mine, lance.dataset(uri).to_table().to_pydict(), ds.version, [len(f.data_files()) for f in ds.get_fragments()]

    theirs, ours = both(lib, tmp_path, program)
    assert ours == theirs
    assert ours[0] == ours[1], "pylance reads lancelet's new columns differently"


@pytest.mark.parametrize("rows", [5, 12])
def test_add_columns_from_a_stream_of_the_wrong_length_fails(lib, tmp_path, rows):
    def program(mod, d):
        ds = mod.write_dataset(table(), str(d / "a.lance"), max_rows_per_file=4)
        with pytest.raises(Exception) as e:
            ds.add_columns(pa.table({"r": list(range(rows))}).to_reader())
        return ds.version, ds.schema.names, isinstance(e.value, (OSError, ValueError))

    theirs, ours = both(lib, tmp_path, program)
    assert ours[:2] == theirs[:2]
    assert ours[2]


# --------------------------------------------------------------------------------------
# 6. progress
# --------------------------------------------------------------------------------------


@pytest.mark.lancelet_only
def test_progress_true_without_tqdm_warns(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "tqdm", None)
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)
    with pytest.warns(UserWarning, match="tqdm"):
        ds = lancelet.write_dataset(table(), str(tmp_path / "p.lance"), progress=True)
    assert ds.count_rows() == ROWS


def test_the_progress_extra_is_declared():
    tomllib = pytest.importorskip("tomllib")
    with open(Path(__file__).parent.parent / "pyproject.toml", "rb") as f:
        extras = tomllib.load(f)["project"]["optional-dependencies"]
    assert extras["progress"] == ["tqdm"]


def test_fragment_write_progress(lib, tmp_path):
    def program(mod, d):
        progress_mod = sys.modules[mod.__name__ + ".progress"]
        events = []

        class Recorder(progress_mod.FragmentWriteProgress):
            def begin(self, fragment, **kwargs):
                events.append(("begin", type(fragment).__name__))

            def complete(self, fragment, **kwargs):
                events.append(("complete", type(fragment).__name__))

        with pytest.raises(TypeError):
            progress_mod.FragmentWriteProgress()
        ds = mod.write_dataset(table(), str(d / "p.lance"), max_rows_per_file=4, progress=Recorder())
        return ds.count_rows(), sorted(set(events)), issubclass(progress_mod.NoopFragmentWriteProgress,
                                                                progress_mod.FragmentWriteProgress)

    theirs, ours = both(lib, tmp_path, program)
    assert ours == theirs


# --------------------------------------------------------------------------------------
# 7. clear errors
# --------------------------------------------------------------------------------------


@pytest.fixture
def small(tmp_path) -> str:
    uri = str(tmp_path / "small.lance")
    lancelet.write_dataset(table(), uri)
    return uri


@pytest.mark.lancelet_only
@pytest.mark.parametrize("version", [2**63, 2**64, 2**70])
def test_a_huge_version_is_out_of_range(small, version):
    ds = lancelet.dataset(small)
    with pytest.raises(ValueError, match="out of range"):
        ds.checkout_version(version)
    with pytest.raises(ValueError, match="out of range"):
        lancelet.dataset(small, version=version)


@pytest.mark.lancelet_only
def test_batch_size_zero_and_negative_give_one_message(small):
    ds = lancelet.dataset(small)
    messages = set()
    for bad in (0, -1):
        for call in (lambda: ds.to_table(batch_size=bad), lambda: ds.scanner(batch_size=bad),
                     lambda: list(ds.to_batches(batch_size=bad)), lambda: ds.add_columns({"z": "id"}, batch_size=bad)):
            with pytest.raises(ValueError) as e:
                call()
            messages.add(str(e.value).replace(str(bad), "N"))
    assert messages == {"batch_size must be a positive integer, got N"}


@pytest.mark.lancelet_only
@pytest.mark.parametrize("version", ["-1", "0", "-7"])
def test_cli_head_with_a_non_positive_version(small, version):
    r = subprocess.run([sys.executable, "-m", "lancelet", "head", small, "--version", version],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 1
    assert "positive" in r.stderr and "does not exist" not in r.stderr, r.stderr


@pytest.mark.lancelet_only
@pytest.mark.parametrize("length", [213, 250, 255, 256, 1000])
def test_tag_names_too_long_for_a_file_name(small, length):
    ds = lancelet.dataset(small)
    with pytest.raises(ValueError, match="too long|at most 255 bytes"):
        ds.tags.create("t" * length, 1)
    assert ds.tags.list() == {}
    ds.tags.create("t" * 200, 1)
    assert list(ds.tags.list()) == ["t" * 200]


def test_writing_under_a_regular_file(lib, tmp_path, oracle_self):
    blocker = tmp_path / "blocker"
    blocker.write_text("x")
    for target in (blocker / "x.lance", blocker / "deeper" / "x.lance", blocker):
        for mode in ("create", "append", "overwrite"):
            with pytest.raises(OSError) as e:
                lib.write_dataset(table(), str(target), mode=mode)
            if not oracle_self:
                assert "not a directory" in str(e.value) and "not found" not in str(e.value)
        with pytest.raises(OSError) as e:
            fragment_module(lib).write_fragments(table(), str(target))
    assert blocker.read_text() == "x"


# --------------------------------------------------------------------------------------
# 8. the CLI: --storage-option, AWS environment variables in --help
# --------------------------------------------------------------------------------------


@pytest.mark.lancelet_only
@pytest.mark.parametrize("cmd", [["inspect"], ["versions"], ["head", "-n", "2"]])
def test_cli_takes_storage_options_on_every_subcommand(small, capsys, cmd):
    from lancelet.cli import main

    argv = [cmd[0], small, *cmd[1:], "--storage-option", "aws_region=us-east-1",
            "--storage-option", "allow_http=true"]
    assert main(argv) == 0, capsys.readouterr().err
    assert main([cmd[0], small, "--storage-option", "no_equals_sign"]) == 1
    assert "KEY=VALUE" in capsys.readouterr().err


@pytest.mark.lancelet_only
@pytest.mark.parametrize("cmd", [[], ["inspect"], ["versions"], ["head"]])
def test_cli_help_names_the_aws_environment_variables(cmd):
    r = subprocess.run([sys.executable, "-m", "lancelet", *cmd, "--help"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0
    for var in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_REGION", "AWS_DEFAULT_REGION",
                "AWS_ENDPOINT_URL"):
        assert var in r.stdout, var
    if cmd:
        assert "--storage-option" in r.stdout


# --------------------------------------------------------------------------------------
# 9. insert, transaction_properties, dataset(default_scan_options=..., read_params=...)
# --------------------------------------------------------------------------------------


def test_signatures_match_pylance():
    for ours, theirs, names in (
        (lancelet.LanceDataset.insert, lance.LanceDataset.insert, ["data", "mode"]),
        (lancelet.dataset, lance.dataset, ["default_scan_options", "metadata_cache_size_bytes",
                                           "index_cache_size_bytes", "read_params", "session"]),
        (lancelet.write_dataset, lance.write_dataset, ["transaction_properties"]),
    ):
        mine, ref = inspect.signature(ours).parameters, inspect.signature(theirs).parameters
        for name in names:
            assert mine[name].kind == ref[name].kind, name
            assert mine[name].default == ref[name].default, name
            if ref[name].kind == inspect.Parameter.POSITIONAL_OR_KEYWORD:
                assert list(mine).index(name) == list(ref).index(name), name


def test_insert(lib, tmp_path):
    def program(mod, d):
        ds = mod.write_dataset(table(3), str(d / "i.lance"))
        out = [ds.insert(table(2, 3))]
        out.append((ds.version, ds.count_rows()))
        ds.insert(table(1, 9), mode="overwrite")
        out.append((ds.version, ds.to_table().to_pydict()))
        ds.insert({"id": [20, 21], "name": ["a", "b"]}, max_rows_per_file=1)
        out.append((ds.version, ds.count_rows(), len(ds.get_fragments())))
        with pytest.raises(OSError):
            ds.insert(table(1), mode="create")
        return out

    theirs, ours = both(lib, tmp_path, program)
    assert ours == theirs


def test_transaction_properties_are_accepted(lib, tmp_path, oracle_self):
    def program(mod, d):
        kwargs = dict(transaction_properties={"job": "nightly"}, commit_message="load")
        ds = mod.write_dataset(table(3), str(d / "t.lance"), **kwargs)
        # Recorded as pylance records them, and read back by both libraries.
        props = [m.dataset(str(d / "t.lance")).read_transaction(1).transaction_properties for m in (lance, lib)]
        return ds.count_rows(), props

    theirs, ours = both(lib, tmp_path, program)
    assert ours == theirs


def test_default_scan_options(lib, tmp_path):
    def program(mod, d):
        uri = str(d / "s.lance")
        mod.write_dataset(table(8), uri, max_rows_per_file=5)
        ds = mod.dataset(uri, default_scan_options={"filter": "id > 2", "columns": ["id"], "limit": 3},
                         read_params={"index_cache_size": 8}, metadata_cache_size_bytes=1 << 20)
        return (ds.to_table().to_pydict(), ds.to_table(limit=10).to_pydict(),
                ds.to_table(filter="id < 2", columns=["name"]).to_pydict(),
                [b.to_pydict() for b in ds.to_batches()], ds.head(10).to_pydict(), ds.scanner().to_table().to_pydict(),
                ds.count_rows(), ds.take([0, 1]).to_pydict(), ds.get_fragments()[0].to_table().to_pydict(),
                ds.checkout_version(1).to_table().to_pydict())

    theirs, ours = both(lib, tmp_path, program)
    assert ours == theirs


def test_unknown_default_scan_options_fail_at_scan_time(lib, tmp_path):
    def program(mod, d):
        uri = str(d / "s.lance")
        mod.write_dataset(table(3), uri)
        ds = mod.dataset(uri, default_scan_options={"bogus": 1})
        with pytest.raises(ValueError):
            ds.to_table()
        return ds.count_rows()

    theirs, ours = both(lib, tmp_path, program)
    assert ours == theirs


# --------------------------------------------------------------------------------------
# 10. error classes
# --------------------------------------------------------------------------------------


def test_error_classes_match_what_pylance_raises(lib, tmp_path, oracle_self):
    def program(mod, d):
        uri = str(d / "e.lance")
        mod.write_dataset(table(3), uri)
        with pytest.raises(OSError) as mismatch:
            mod.write_dataset(pa.table({"other": [1.5]}), uri, mode="append")
        with pytest.raises(ValueError) as missing:
            mod.dataset(str(d / "nothing.lance"))
        return type(mismatch.value), type(missing.value)

    theirs, ours = both(lib, tmp_path, program)
    if not oracle_self:
        assert issubclass(ours[0], lancelet.SchemaMismatchError) and issubclass(ours[0], ValueError)
        assert issubclass(ours[1], lancelet.LanceNotFoundError) and issubclass(ours[1], FileNotFoundError)
    assert issubclass(theirs[0], OSError) and issubclass(theirs[1], ValueError)


# --------------------------------------------------------------------------------------
# 11. lance.vector helpers without an index
# --------------------------------------------------------------------------------------


def vector_module(mod):
    return __import__(mod.__name__ + ".vector", fromlist=["vec_to_table"])


VEC_INPUTS = {
    "dict": (lambda: {"a": [1, 2, 3], "b": np.array([4.5, 5, 6])}, {}),
    "dict with names": (lambda: {7: [1, 2], 8: [3, 4]}, {"names": ["key", "emb"]}),
    "list": (lambda: [[1, 2], [3, 4], [5, 6]], {}),
    "ndarray named": (lambda: np.arange(12, dtype=np.float64).reshape(4, 3), {"names": "v"}),
    "ndarray ndim": (lambda: np.arange(8).reshape(2, 4), {"ndim": 4}),
    "unchecked": (lambda: [[1, 2], [3, 4]], {"check_ndim": False, "ndim": 1}),
}


@pytest.mark.parametrize("kind", list(VEC_INPUTS))
def test_vec_to_table(lib, tmp_path, kind):
    make, kwargs = VEC_INPUTS[kind]
    theirs, ours = both(lib, tmp_path, lambda mod, d: vector_module(mod).vec_to_table(make(), **kwargs))
    assert ours.equals(theirs)


@pytest.mark.parametrize("data", [[[1, 2], [3]], [[1, 2, 3]]])
def test_vec_to_table_refuses_ragged_vectors(lib, tmp_path, data):
    def program(mod, d):
        with pytest.raises(ValueError):
            vector_module(mod).vec_to_table(data, ndim=2)
        return True

    assert both(lib, tmp_path, program) == (True, True)


def _hash_table() -> pa.Table:
    rng = np.random.default_rng(7)
    base = rng.integers(0, 256, size=(5, 16), dtype=np.uint8)
    rows = []
    for i in range(40):
        v = base[i % 5].copy()
        if i >= 5:
            v[i % 16] ^= np.uint8(1 << (i % 8))  # one bit away from its base
        if i % 13 == 12:
            v[:] = 255 - v  # far from everything
        rows.append(v)
    hashes = pa.FixedSizeListArray.from_arrays(pa.array(np.concatenate(rows), pa.uint8()), 16)
    return pa.table({"id": list(range(40)), "h": hashes})


def test_hamming_clustering(lib, tmp_path):
    def program(mod, d):
        vec = vector_module(mod)
        ds = mod.write_dataset(_hash_table(), str(d / "h.lance"), max_rows_per_file=16)
        ds.delete("id IN (6, 20)")
        out = []
        for threshold in (0, 1, 2, 3, 10):
            out.append(vec.hamming_clustering_for_sample(ds, "h", hamming_threshold=threshold).read_all())
        out.append(vec.hamming_clustering_for_sample(ds, "h", sample_size=0).read_all())
        out.append(vec.hamming_clustering_for_sample(ds, "h", sample_size=1000, hamming_threshold=2).read_all())
        for frag, start, num in ((0, 0, 16), (0, 3, 5), (1, 0, 100), (2, 2, 4), (0, 15, 5), (0, 0, 0)):
            out.append(vec.hamming_clustering_for_range(ds, "h", frag, start, num, hamming_threshold=2).read_all())
        with pytest.raises(ValueError):
            vec.hamming_clustering_for_range(ds, "h", 0, 16, 5)
        with pytest.raises(ValueError):
            vec.hamming_clustering_for_sample(ds, "id")
        with pytest.raises(ValueError):
            vec.hamming_clustering_for_range(ds, "h", 99, 0, 10)
        return out

    theirs, ours = both(lib, tmp_path, program)
    assert len(ours) == len(theirs)
    for i, (a, b) in enumerate(zip(ours, theirs)):
        assert a.equals(b), f"case {i}: {a.to_pydict()} != {b.to_pydict()}"
    assert any(t.num_rows for t in theirs)


def test_a_sample_clusters_only_sampled_rows(lib, tmp_path):
    def program(mod, d):
        ds = mod.write_dataset(_hash_table(), str(d / "h.lance"))
        t = vector_module(mod).hamming_clustering_for_sample(ds, "h", sample_size=20, hamming_threshold=2).read_all()
        ids = [r for r in t.column("representative").to_pylist()] + [x for l in t.column("duplicates").to_pylist()
                                                                       for x in l]
        return t.schema, len(ids) <= 20, len(set(ids)) == len(ids)

    theirs, ours = both(lib, tmp_path, program)
    assert ours == theirs
