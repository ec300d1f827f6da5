"""Table semantics that moved from Python into Rust (issue 17): ``merge`` of new columns
on a key, compaction defaults from ``lance.compaction.*`` config keys, ``asof`` opens and
UDF backfills. Each is checked against pylance 14 in both directions: what lancelet writes
pylance reads (and agrees with), and the other way round."""

from __future__ import annotations

import datetime as _dt
import os
import time

import pyarrow as pa
import pyarrow.compute as pc
import pytest

import lancelet
from _tables import id_strings

lance = pytest.importorskip("lance")


def _table(lo: int, hi: int) -> pa.Table:
    """Special table: ``s`` is the id as text, the key the merge tests join on."""
    return id_strings(range(lo, hi), fmt="{}")


def _files(uri: str) -> set:
    return set(os.listdir(os.path.join(uri, "data")))


# ---- merge -----------------------------------------------------------------------------


def _merge_data() -> pa.Table:
    # String keys in two batches, a repeated key (its last row wins), keys not in the
    # dataset, and a list column.
    keys = [str(i) for i in range(0, 3000, 3)] + ["9", "nope"]
    vals = list(range(len(keys)))
    return pa.Table.from_batches(
        pa.table(
            {
                "s": keys,
                "m": pa.array(vals, pa.int64()),
                "l": pa.array([[v, v] for v in vals], pa.list_(pa.int32())),
            }
        ).to_batches(max_chunksize=400)
    )


@pytest.mark.parametrize("writer", ["lancelet", "lance"])
def test_merge_on_a_string_key_agrees_with_pylance_both_ways(tmp_path, writer):
    lib = {"lancelet": lancelet, "lance": lance}[writer]
    results = {}
    for merger in (lancelet, lance):
        uri = str(tmp_path / f"{writer}-{merger.__name__}.lance")
        lib.write_dataset(_table(0, 3000), uri, max_rows_per_file=700)
        lib.dataset(uri).delete("id % 11 = 4")
        merger.dataset(uri).merge(_merge_data(), "s")
        ours, theirs = lancelet.dataset(uri).to_table(), lance.dataset(uri).to_table()
        assert ours.equals(theirs), f"{merger.__name__} merged; lancelet and pylance read differently"
        lance.dataset(uri).validate()
        results[merger.__name__] = ours
    assert results["lancelet"].equals(results["lance"])
    m = results["lancelet"].to_pydict()
    for i, s, v in zip(m["id"], m["s"], m["m"]):
        if s == "9":
            assert v == 1000  # the repeated key's last row
        elif i % 3 == 0:
            assert v == i // 3
        else:
            assert v is None


def test_merge_reads_a_generator_once_and_pylance_reads_the_result(tmp_path):
    uri = str(tmp_path / "g.lance")
    lancelet.write_dataset(_table(0, 100), uri, max_rows_per_file=30)
    pulled = []

    def batches():
        for lo in range(0, 100, 25):
            pulled.append(lo)
            ids = pa.array(range(lo, lo + 25), pa.int64())
            yield pa.record_batch({"id": ids, "x": pc.multiply(ids, 2)})

    schema = pa.schema([("id", pa.int64()), ("x", pa.int64())])
    ds = lancelet.dataset(uri)
    ds.merge(pa.RecordBatchReader.from_batches(schema, batches()), "id")
    assert pulled == [0, 25, 50, 75]
    t = lance.dataset(uri).to_table()
    assert t["x"].to_pylist() == [2 * i for i in range(100)]
    assert t.equals(ds.to_table())


def test_a_failed_merge_leaves_no_files(tmp_path):
    uri = str(tmp_path / "f.lance")
    lancelet.write_dataset(_table(0, 10), uri, max_rows_per_file=4)
    files = _files(uri)
    strict = pa.schema([("id", pa.int64()), pa.field("m", pa.int64(), nullable=False)])
    # Unmatched rows would need nulls in a non-nullable column: refused by both libraries.
    data = pa.table({"id": pa.array([1], pa.int64()), "m": pa.array([5], pa.int64())}, schema=strict)
    with pytest.raises(lancelet.InvalidArgumentError, match="non-nullable"):
        lancelet.dataset(uri).merge(data, "id")
    with pytest.raises(OSError):
        lance.dataset(uri).merge(data, "id")
    assert _files(uri) == files
    assert lancelet.dataset(uri).version == 1


# ---- compaction config ------------------------------------------------------------------


def _fragments_of(lib, uri: str, n: int = 8, rows: int = 10):
    for i in range(n):
        lib.write_dataset(_table(i * rows, (i + 1) * rows), uri, mode="append" if i else "create")
    return lib.dataset(uri)


@pytest.mark.parametrize("config_by", ["lancelet", "lance"])
def test_compaction_config_defaults_agree_with_pylance(tmp_path, config_by):
    setter = {"lancelet": lancelet, "lance": lance}[config_by]
    counts = {}
    for compactor in (lancelet, lance):
        uri = str(tmp_path / f"{config_by}-{compactor.__name__}.lance")
        _fragments_of(lancelet, uri)
        setter.dataset(uri).update_config(
            {
                "lance.compaction.target_rows_per_fragment": "40",
                "lance.compaction.materialize_deletions": "FALSE",
            }
        )
        compactor.dataset(uri).optimize.compact_files()
        counts[compactor.__name__] = [f.count_rows() for f in lance.dataset(uri).get_fragments()]
        assert lancelet.dataset(uri).to_table().equals(lance.dataset(uri).to_table())
        # An explicit argument wins over the config.
        uri2 = uri + "-explicit"
        _fragments_of(lancelet, uri2)
        setter.dataset(uri2).update_config({"lance.compaction.target_rows_per_fragment": "40"})
        compactor.dataset(uri2).optimize.compact_files(target_rows_per_fragment=20)
        assert [f.count_rows() for f in lancelet.dataset(uri2).get_fragments()] == [20] * 4
    assert counts["lancelet"] == counts["lance"] == [40, 40]


@pytest.mark.parametrize(
    "key,value",
    [
        ("target_rows_per_fragment", "abc"),
        ("batch_size", "-1"),
        ("materialize_deletions", "yes"),
        ("materialize_deletions_threshold", "x"),
        ("compaction_mode", "fast"),
        ("max_rows_per_group", "1.5"),
    ],
)
def test_bad_compaction_config_is_refused_like_pylance(tmp_path, key, value):
    uri = str(tmp_path / "bad.lance")
    _fragments_of(lancelet, uri, n=3)
    lancelet.dataset(uri).update_config({f"lance.compaction.{key}": value})
    with pytest.raises(ValueError):
        lance.dataset(uri).optimize.compact_files()
    with pytest.raises(lancelet.InvalidArgumentError, match=key):
        lancelet.dataset(uri).optimize.compact_files(target_rows_per_fragment=100)
    assert lancelet.dataset(uri).version == 4, "three appends and the config: nothing compacted"


# ---- asof -------------------------------------------------------------------------------


def _middle(a: _dt.datetime, b: _dt.datetime) -> _dt.datetime:
    return a + (b - a) / 2


@pytest.mark.parametrize("writer", ["lancelet", "lance"])
def test_asof_opens_the_same_version_as_pylance(tmp_path, writer):
    lib = {"lancelet": lancelet, "lance": lance}[writer]
    uri = str(tmp_path / "t.lance")
    lib.write_dataset(_table(0, 5), uri)
    for i in range(3):
        time.sleep(0.05)
        lib.write_dataset(_table(10 * i, 10 * i + 1), uri, mode="append")
    stamps = [v["timestamp"] for v in lance.dataset(uri).versions()]
    assert [v["timestamp"] for v in lancelet.dataset(uri).versions()] == stamps
    cutoffs = [_middle(a, b) for a, b in zip(stamps, stamps[1:])] + [stamps[-1] + _dt.timedelta(seconds=5)]
    for want, cutoff in enumerate(cutoffs, start=1):
        assert lance.dataset(uri, asof=cutoff).version == want
        ours = lancelet.dataset(uri, asof=cutoff)
        assert ours.version == want
        assert ours.to_table().equals(lance.dataset(uri, asof=cutoff).to_table())
    # An aware time and an ISO string name the same instant.
    aware = cutoffs[1].astimezone()
    assert lancelet.dataset(uri, asof=aware).version == 2
    assert lancelet.dataset(uri, asof=cutoffs[1].isoformat()).version == 2
    before = stamps[0] - _dt.timedelta(seconds=5)
    with pytest.raises(ValueError):
        lance.dataset(uri, asof=before)
    with pytest.raises(lancelet.InvalidArgumentError, match="earlier than the first version"):
        lancelet.dataset(uri, asof=before)
    # A version's own (microsecond) timestamp is not before it: both libraries open the
    # version before it.
    for want, stamp in enumerate(stamps[1:], start=1):
        assert lance.dataset(uri, asof=stamp).version == lancelet.dataset(uri, asof=stamp).version == want


# ---- UDF backfill -----------------------------------------------------------------------


@pytest.mark.parametrize("writer", ["lancelet", "lance"])
def test_udf_backfill_is_read_by_pylance(tmp_path, writer):
    lib = {"lancelet": lancelet, "lance": lance}[writer]
    uri = str(tmp_path / "u.lance")
    lib.write_dataset(_table(0, 1000), uri, max_rows_per_file=300)
    lib.dataset(uri).delete("id % 9 = 2")
    ds = lancelet.dataset(uri)
    ds.add_columns(lambda b: pa.record_batch({"sq": pc.multiply(b["id"], b["id"])}), read_columns=["id"], batch_size=64)
    theirs = lance.dataset(uri)
    theirs.validate()
    t = theirs.to_table()
    assert t.equals(ds.to_table())
    assert t["sq"].to_pylist() == [i * i for i in t["id"].to_pylist()]
    # pylance builds on it: its own UDF column over ours, read back by lancelet.
    theirs.add_columns(lambda b: pa.record_batch({"neg": pc.negate(b["sq"])}), read_columns=["sq"])
    back = lancelet.dataset(uri).to_table()
    assert back["neg"].to_pylist() == [-(i * i) for i in back["id"].to_pylist()]


def test_udf_backfill_failure_and_resume_leave_pylance_a_clean_dataset(tmp_path):
    uri = str(tmp_path / "r.lance")
    lance.write_dataset(_table(0, 900), uri, max_rows_per_file=300)
    files = _files(uri)
    ckpt = str(tmp_path / "ck.json")
    state = {"fail": True, "firsts": []}

    @lancelet.batch_udf(checkpoint_file=ckpt)
    def plus(batch):
        first = batch["id"][0].as_py()
        state["firsts"].append(first)
        if state["fail"] and first >= 600:
            raise KeyError("stop here")
        return pa.record_batch({"p": pc.add(batch["id"], 1)})

    with pytest.raises(KeyError, match="stop here"):
        lancelet.dataset(uri).add_columns(plus, read_columns=["id"])
    assert os.path.exists(ckpt) and lance.dataset(uri).version == 1
    state["fail"], state["firsts"] = False, []
    lancelet.dataset(uri).add_columns(plus, read_columns=["id"])
    assert min(state["firsts"]) >= 600 and not os.path.exists(ckpt)
    t = lance.dataset(uri).to_table()
    assert t["p"].to_pylist() == list(range(1, 901))
    assert len(_files(uri)) == len(files) + 3

    # Without a checkpoint, a failure removes what was written.
    files = _files(uri)

    def boom(batch):
        if batch["id"][0].as_py() >= 300:
            raise RuntimeError("boom")
        return pa.record_batch({"q": batch["id"]})

    with pytest.raises(RuntimeError, match="boom"):
        lancelet.dataset(uri).add_columns(boom, read_columns=["id"])
    assert _files(uri) == files and lance.dataset(uri).version == 2


def test_a_udf_and_a_merge_source_may_read_lancelet_datasets(tmp_path):
    """The UDF is called back from the native backfill, and a merge's generator is pulled by
    the native join: both may run lancelet scans themselves (pyarrow releases the GIL while
    reading them, which once aborted the process)."""
    other = lancelet.write_dataset(_table(0, 50), str(tmp_path / "other.lance"))
    uri = str(tmp_path / "main.lance")
    lancelet.write_dataset(_table(0, 20), uri, max_rows_per_file=8)
    ds = lancelet.dataset(uri)

    def count_other(batch):
        n = other.to_table().num_rows + len(list(other.to_batches()))
        return pa.record_batch({"n": pa.array([n] * batch.num_rows, pa.int64())})

    ds.add_columns(count_other, read_columns=["id"])

    def source():
        for b in other.to_batches():
            yield pa.record_batch({"id": b["id"], "twice": pc.multiply(b["id"], 2)})

    schema = pa.schema([("id", pa.int64()), ("twice", pa.int64())])
    ds.merge(pa.RecordBatchReader.from_batches(schema, source()), "id")
    t = lance.dataset(uri).to_table()
    assert t["n"].to_pylist() == [51] * 20
    assert t["twice"].to_pylist() == [2 * i for i in range(20)]


def test_an_interrupted_udf_raises_keyboard_interrupt_and_cleans_up(tmp_path):
    uri = str(tmp_path / "k.lance")
    lancelet.write_dataset(_table(0, 30), uri, max_rows_per_file=10)
    files = _files(uri)

    def interrupted(batch):
        if batch["id"][0].as_py() >= 10:
            raise KeyboardInterrupt
        return pa.record_batch({"c": batch["id"]})

    with pytest.raises(KeyboardInterrupt):
        lancelet.dataset(uri).add_columns(interrupted, read_columns=["id"])
    assert _files(uri) == files and lance.dataset(uri).version == 1
