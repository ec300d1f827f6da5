"""Base paths, continued: one write spread over several bases, and bases on S3.

pylance 14 sends the ``i``-th data file of a write to target ``i mod n``, in the order
``target_bases`` lists them; ``target_all_bases=True`` rotates over the dataset's root
first and then every base by id, ``False`` over the bases only. lancelet does the same,
so the base each file lands in is the same whichever library wrote it.
"""

from __future__ import annotations

import os

import pyarrow as pa
import pytest

import lancelet
from lancelet.errors import InvalidArgumentError

lance = pytest.importorskip("lance")

pytestmark = pytest.mark.interop

LIBS = {"lance": lance, "lancelet": lancelet}


def _t(ids):
    return pa.table({"id": pa.array(list(ids), pa.int64())})


def _ids(ds) -> list:
    return sorted(ds.to_table(columns=["id"])["id"].to_pylist())


def _base_ids(uri: str, since: int = 0) -> list:
    """The base id of each fragment's (single) data file, read with pylance, in fragment order."""
    return [f.metadata.files[0].base_id for f in lance.dataset(uri).get_fragments()][since:]


def _make(lib, tmp_path, ids=None):
    """A dataset with bases a (5), b (2) and a dataset-root base c (3), written by ``lib``
    with ten rows per file over a then b."""
    d = str(tmp_path)
    uri = os.path.join(d, "d.lance")
    bases = [lib.DatasetBasePath(os.path.join(d, "a"), name="a", id=5),
             lib.DatasetBasePath(os.path.join(d, "b"), name="b", id=2),
             lib.DatasetBasePath(os.path.join(d, "c"), name="c", id=3, is_dataset_root=True)]
    lib.write_dataset(_t(range(50) if ids is None else ids), uri, initial_bases=bases,
                      target_bases=["a", "b"], max_rows_per_file=10)
    return uri


@pytest.mark.parametrize("maker", ["lance", "lancelet"])
def test_files_rotate_over_target_bases(tmp_path, maker):
    mk, other = LIBS[maker], LIBS["lancelet" if maker == "lance" else "lance"]
    uri = _make(mk, tmp_path)
    assert _base_ids(uri) == [5, 2, 5, 2, 5]
    assert len(os.listdir(tmp_path / "a")) == 3 and len(os.listdir(tmp_path / "b")) == 2
    # The other library reads it and appends in the listed order, by name, path and root URI.
    assert _ids(other.dataset(uri)) == list(range(50))
    other.write_dataset(_t(range(50, 80)), uri, mode="append", max_rows_per_file=10,
                        target_bases=["c", str(tmp_path / "a"), uri])
    assert _base_ids(uri, 5) == [3, 5, None]
    assert len(os.listdir(tmp_path / "c" / "data")) == 1
    for lib in (lance, lancelet):
        assert _ids(lib.dataset(uri)) == list(range(80))


@pytest.mark.parametrize("writer", ["lance", "lancelet"])
@pytest.mark.parametrize("include_root", [True, False])
def test_target_all_bases_matches_pylance(tmp_path, writer, include_root):
    uri = _make(lancelet, tmp_path, ids=[0])
    LIBS[writer].write_dataset(_t(range(1, 51)), uri, mode="append", max_rows_per_file=10,
                               target_all_bases=include_root)
    want = [None, 2, 3, 5, None] if include_root else [2, 3, 5, 2, 3]
    assert _base_ids(uri, 1) == want
    for lib in (lance, lancelet):
        assert _ids(lib.dataset(uri)) == list(range(51))


def test_target_all_bases_when_creating(tmp_path):
    d = str(tmp_path)
    for name, lib in LIBS.items():
        uri = os.path.join(d, f"{name}.lance")
        bases = [lib.DatasetBasePath(os.path.join(d, f"{name}-x"), name="x"),
                 lib.DatasetBasePath(os.path.join(d, f"{name}-y"), name="y")]
        lib.write_dataset(_t(range(30)), uri, initial_bases=bases, target_all_bases=False, max_rows_per_file=10)
        assert _base_ids(uri) == [1, 2, 1]
        assert _ids(LIBS["lance" if name == "lancelet" else "lancelet"].dataset(uri)) == list(range(30))


def test_bad_spread_arguments(tmp_path):
    uri = str(tmp_path / "d.lance")
    with pytest.raises(InvalidArgumentError):  # no base and the root excluded: nowhere to write
        lancelet.write_dataset(_t([1]), uri, target_all_bases=False)
    lancelet.write_dataset(_t([1]), uri, target_all_bases=True)  # the root only
    assert _base_ids(uri) == [None]
    with pytest.raises(InvalidArgumentError):
        lancelet.write_dataset(_t([2]), uri, mode="append", target_all_bases=True, target_bases=["a"])
    with pytest.raises(InvalidArgumentError):
        lancelet.write_dataset(_t([2]), uri, mode="append", target_bases=[uri, "nope"])
    with pytest.raises(InvalidArgumentError):
        lancelet.write_dataset(_t([2]), uri, mode="append", target_all_bases="yes")
    ds = lancelet.dataset(uri)
    with pytest.raises(InvalidArgumentError):
        ds.merge_insert("id").target_bases(["a"]).target_all_bases()
    assert lancelet.dataset(uri).version == 1 and _ids(lance.dataset(uri)) == [1]


@pytest.mark.parametrize("maker", ["lance", "lancelet"])
def test_merge_insert_spreads_new_files(tmp_path, maker):
    """pylance's merge writes its new rows into one file here: it goes to the first target."""
    uri = _make(LIBS[maker], tmp_path, ids=range(20))
    for i, (lib, how) in enumerate([(lance, ["b", "a"]), (lancelet, ["b", "a"]),
                                    (lance, True), (lancelet, True), (lance, False), (lancelet, False)]):
        ds = lib.dataset(uri)
        rows = _t(range(100 + 10 * i, 110 + 10 * i))
        m = ds.merge_insert("id").when_not_matched_insert_all()
        m = m.target_bases(how) if isinstance(how, list) else m.target_all_bases(include_primary=how)
        m.execute(rows)
        want = 2 if isinstance(how, list) or how is False else None
        assert _base_ids(uri)[-1] == want, (lib.__name__, how)
    for lib in (lance, lancelet):
        assert _ids(lib.dataset(uri)) == list(range(20)) + list(range(100, 160))


# --------------------------------------------------------------------------------------
# Bases on S3 (SeaweedFS on loopback, see s3_endpoint in tests/conftest.py)
# --------------------------------------------------------------------------------------


def _s3_keys(client, prefix: str) -> list:
    got = client.list_objects_v2(Bucket="lancelet", Prefix=prefix + "/").get("Contents", [])
    return sorted(o["Key"][len(prefix) + 1:] for o in got)


def _full(lib, uri, opts) -> list:
    return sorted(lib.dataset(uri, storage_options=opts).to_table()["id"].to_pylist())


@pytest.mark.parametrize("maker", ["lance", "lancelet"])
def test_local_root_with_a_base_on_s3(tmp_path, s3, maker):
    """The dataset's root on local disk, one base on S3 configured by ``base_1.*`` options."""
    mk, other = LIBS[maker], LIBS["lancelet" if maker == "lance" else "lance"]
    s3_uri, opts, client = s3
    base = s3_uri.rsplit("/", 1)[0] + "/extra"
    prefix = base[len("s3://lancelet/"):]
    scoped = {f"base_1.{k}": v for k, v in opts.items()}
    uri = str(tmp_path / "d.lance")
    mk.write_dataset(_t(range(30)), uri, initial_bases=[mk.DatasetBasePath(base, name="s3")],
                     target_bases=["s3"], max_rows_per_file=10, storage_options=scoped)
    assert len(_s3_keys(client, prefix)) == 3
    assert not os.path.isdir(tmp_path / "d.lance" / "data") or not os.listdir(tmp_path / "d.lance" / "data")
    assert all(k.endswith(".lance") and "/" not in k for k in _s3_keys(client, prefix))
    assert _full(other, uri, scoped) == list(range(30))
    # The other library appends over the S3 base and the local root in turn.
    other.write_dataset(_t(range(30, 50)), uri, mode="append", max_rows_per_file=10,
                        target_bases=["s3", uri], storage_options=scoped)
    assert _base_ids(uri) == [1, 1, 1, 1, None]
    assert len(_s3_keys(client, prefix)) == 4
    for lib in (lance, lancelet):
        assert _full(lib, uri, scoped) == list(range(50))


@pytest.mark.parametrize("maker", ["lance", "lancelet"])
def test_local_root_s3_base_with_unprefixed_options(tmp_path, s3, maker):
    """A local root with a base on S3, configured by plain (unprefixed) S3 options: they
    configure every object store the dataset touches, and the local root ignores them."""
    mk, other = LIBS[maker], LIBS["lancelet" if maker == "lance" else "lance"]
    s3_uri, opts, client = s3
    base = s3_uri.rsplit("/", 1)[0] + "/b1"
    prefix = base[len("s3://lancelet/"):]
    uri = str(tmp_path / "d.lance")
    mk.write_dataset(_t(range(20)), uri, initial_bases=[mk.DatasetBasePath(base, name="b1")],
                     target_bases=["b1"], max_rows_per_file=10, storage_options=opts)
    assert len(_s3_keys(client, prefix)) == 2
    assert all(k.endswith(".lance") and "/" not in k for k in _s3_keys(client, prefix))
    assert _full(other, uri, opts) == list(range(20))
    other.write_dataset(_t(range(20, 30)), uri, mode="append", target_bases=["b1"], storage_options=opts)
    other.write_dataset(_t(range(30, 40)), uri, mode="append", storage_options=opts)  # the local primary
    assert _base_ids(uri) == [1, 1, 1, None]
    assert len(_s3_keys(client, prefix)) == 3
    for lib in (lance, lancelet):
        ds = lib.dataset(uri, storage_options=opts)
        assert _ids(ds) == list(range(40))
        assert lib.dataset(uri).count_rows() == 40  # counting needs no data files


@pytest.mark.parametrize("lib_name", ["lance", "lancelet"])
def test_unprefixed_and_scoped_options_mix(tmp_path, s3, lib_name):
    """``base_1.*`` overrides the unprefixed options for base 1: a wrong unprefixed
    endpoint with the right scoped one still reads (the test server, SeaweedFS without
    identities, checks neither regions nor credentials, so the endpoint is what can be wrong)."""
    from _support import free_port

    lib = LIBS[lib_name]
    s3_uri, opts, _ = s3
    uri = str(tmp_path / "d.lance")
    lance.write_dataset(_t(range(10)), uri, initial_bases=[lance.DatasetBasePath(s3_uri.rsplit("/", 1)[0] + "/m",
                        name="m")], target_bases=["m"], storage_options=opts)
    wrong = dict(opts, aws_endpoint=f"http://127.0.0.1:{free_port()}", client_max_retries="0")
    mixed = {**wrong, **{f"base_1.{k}": v for k, v in opts.items()}}
    assert _full(lib, uri, mixed) == list(range(10))
    with pytest.raises(Exception):  # noqa: B017 - the store's own error, whatever its class
        lib.dataset(uri, storage_options=wrong).to_table()


@pytest.mark.parametrize("lib_name", ["lance", "lancelet"])
def test_local_dataset_ignores_s3_options(tmp_path, s3, lib_name):
    lib = LIBS[lib_name]
    _, opts, _ = s3
    uri = str(tmp_path / "plain.lance")
    lib.write_dataset(_t(range(5)), uri, storage_options=opts)
    lib.write_dataset(_t(range(5, 8)), uri, mode="append", storage_options=opts)
    for reader in (lance, lancelet):
        assert _full(reader, uri, opts) == list(range(8))
    lib.dataset(uri, storage_options=opts).delete("id < 2")
    assert _full(lance, uri, None) == list(range(2, 8))


@pytest.mark.parametrize("lib_name", ["lance", "lancelet"])
def test_s3_base_without_options_fails_like_pylance(tmp_path, s3, lib_name):
    lib = LIBS[lib_name]
    s3_uri, opts, _ = s3
    uri = str(tmp_path / "d.lance")
    lance.write_dataset(_t(range(10)), uri, initial_bases=[lance.DatasetBasePath(s3_uri.rsplit("/", 1)[0] + "/n",
                        name="n")], target_bases=["n"], storage_options=opts)
    ds = lib.dataset(uri)
    assert ds.count_rows() == 10
    with pytest.raises(Exception):  # noqa: B017 - no credentials for the base: the store's error
        ds.to_table()


@pytest.mark.parametrize("maker", ["lance", "lancelet"])
def test_root_and_bases_all_on_s3(s3, maker):
    """Root and two dataset-root bases on S3 with one set of options, spread by target_all_bases."""
    mk, other = LIBS[maker], LIBS["lancelet" if maker == "lance" else "lance"]
    uri, opts, client = s3
    top = uri.rsplit("/", 1)[0]
    bases = [mk.DatasetBasePath(f"{top}/b{i}", name=f"b{i}", is_dataset_root=True) for i in (1, 2)]
    mk.write_dataset(_t(range(30)), uri, initial_bases=bases, target_all_bases=True,
                     max_rows_per_file=10, storage_options=opts)
    ids = [f.metadata.files[0].base_id for f in lance.dataset(uri, storage_options=opts).get_fragments()]
    assert ids == [None, 1, 2]
    for i in (1, 2):
        keys = _s3_keys(client, f"{top[len('s3://lancelet/'):]}/b{i}")
        assert len(keys) == 1 and keys[0].startswith("data/")
    other.write_dataset(_t(range(30, 40)), uri, mode="append", target_bases=["b2"], storage_options=opts)
    other.dataset(uri, storage_options=opts).delete("id < 5")
    for lib in (lance, lancelet):
        assert _full(lib, uri, opts) == list(range(5, 40))


@pytest.mark.parametrize("maker", ["lance", "lancelet"])
def test_base_store_params_configure_one_base(tmp_path, s3, maker):
    """pylance's ``base_store_params={base_uri: options}`` (runtime only) works like
    ``base_{id}.{key}`` options; readers then name the base's options by id."""
    mk, other = LIBS[maker], LIBS["lancelet" if maker == "lance" else "lance"]
    s3_uri, opts, client = s3
    base = s3_uri.rsplit("/", 1)[0] + "/bsp"
    uri = str(tmp_path / "d.lance")
    mk.write_dataset(_t(range(20)), uri, initial_bases=[mk.DatasetBasePath(base, name="s3")],
                     target_bases=["s3"], max_rows_per_file=10, base_store_params={base: opts})
    assert len(_s3_keys(client, base[len("s3://lancelet/"):])) == 2
    other.write_dataset(_t(range(20, 30)), uri, mode="append", target_bases=["s3"],
                        base_store_params={base: opts})
    assert len(_s3_keys(client, base[len("s3://lancelet/"):])) == 3
    scoped = {f"base_1.{k}": v for k, v in opts.items()}
    for lib in (lance, lancelet):
        assert _full(lib, uri, scoped) == list(range(30))
