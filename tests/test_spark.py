"""The ``lancelet`` Spark data source and the Arrow UDF helpers, on a local[2] SparkSession.

Spark runs real Python workers (forked from its daemon), so these tests also cover the
native runtime in forked processes. What a scan pruned is checked through the scan
statistics each task writes to ``scan_stats_dir``, never through timing.
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import sys
import threading

import numpy as np
import pyarrow as pa
import pytest

pyspark = pytest.importorskip("pyspark")
if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
    pytest.skip("Spark needs Java", allow_module_level=True)

import lance  # noqa: E402  (the oracle: reads what Spark wrote)

import lancelet  # noqa: E402
import lancelet.spark  # noqa: E402
from lancelet.spark import plan_partitions  # noqa: E402

pytestmark = pytest.mark.lancelet_only


@pytest.fixture(scope="session")
def spark(tmp_path_factory):
    from pyspark.sql import SparkSession

    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    active = SparkSession.getActiveSession()
    if active is not None:  # another module's session: these tests need their own settings
        active.stop()
    session = (
        SparkSession.builder.master("local[2,2]")  # 2 cores; a failed task is retried once
        .appName("lancelet-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.driver.memory", "1g")
        .config("spark.sql.session.timeZone", "UTC")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    lancelet.spark.register(session)
    yield session
    session.stop()


# Special table (not in _tables): one column per Spark SQL type the connector maps.
def _table(n: int, seed: int = 0) -> pa.Table:
    rng = np.random.default_rng(seed)
    ids = np.arange(n, dtype=np.int64)
    names = pa.array([None if i % 17 == 0 else f"name-{i % 50}'s" for i in range(n)])
    return pa.table({
        "id": ids,
        "name": names,
        "score": pa.array(rng.random(n)),
        "small": pa.array((ids % 200).astype(np.uint8)),
        "big": pa.array(ids.astype(np.uint64) * 1_000_000_007),
        "when": pa.array(ids * 1_000_000, pa.timestamp("us")),
        "day": pa.array((ids % 1000).astype(np.int32), pa.int32()).cast(pa.date32()),
        "tags": pa.array([[f"t{i % 3}", None] if i % 5 else [] for i in range(n)], pa.list_(pa.string())),
        "pt": pa.array([{"x": int(i), "y": None if i % 2 else float(i)} for i in range(n)],
                       pa.struct([("x", pa.int64()), ("y", pa.float64())])),
        "vec": pa.FixedSizeListArray.from_arrays(pa.array(rng.random(n * 8).astype(np.float32)), 8),
    })


@pytest.fixture(scope="module")
def items(tmp_path_factory):
    """A dataset of 3 versions: v1 = 20k rows in 4 files, v2 deletes id % 10 == 0, v3 appends 5k."""
    uri = str(tmp_path_factory.mktemp("spark") / "items.lance")
    t = _table(20_000)
    ds = lancelet.write_dataset(t, uri, max_rows_per_file=5_000)
    ds.delete("id % 10 = 0")
    more = _table(5_000, seed=1)
    more = more.set_column(0, "id", pa.array(np.arange(20_000, 25_000, dtype=np.int64)))
    lancelet.write_dataset(more, uri, mode="append")
    ds = lancelet.dataset(uri)
    ds.tags.create("after-delete", 2)
    return uri


def _spark_rows_as_table(df, schema: pa.Schema) -> pa.Table:
    """A Spark result as an Arrow table in lancelet's types, sorted by id."""
    got = pa.Table.from_pylist([r.asDict(recursive=True) for r in df.collect()])
    cols = []
    for f in schema:
        col = got.column(f.name)
        if pa.types.is_fixed_size_list(f.type):
            col = col.cast(pa.list_(f.type.value_type)).cast(f.type)
        cols.append(col.cast(f.type))
    return pa.table(cols, schema=schema).sort_by("id")


def _expected(uri, version=None, filter=None):
    return lancelet.dataset(uri, version=version).to_table(filter=filter).sort_by("id")


def _stats(path):
    out = []
    for p in glob.glob(os.path.join(path, "*.json")):
        with open(p) as fh:
            out.append(json.load(fh))
    return out


# -- reads -----------------------------------------------------------------------------


def test_read_equals_lancelet_for_every_column_type(spark, items):
    df = spark.read.format("lancelet").load(items)
    expected = _expected(items)
    assert df.count() == expected.num_rows
    assert _spark_rows_as_table(df, expected.schema).equals(expected)


def test_declared_schema_maps_unsigned_fixed_size_and_timestamps(spark, items):
    from pyspark.sql import types as T

    s = spark.read.format("lancelet").load(items).schema
    assert s["small"].dataType == T.ShortType()
    assert s["big"].dataType == T.DecimalType(20, 0)
    assert s["when"].dataType == T.TimestampNTZType()
    assert s["day"].dataType == T.DateType()
    assert s["vec"].dataType == T.ArrayType(T.FloatType(), True)
    assert s["vec"].metadata == {lancelet.spark.FIXED_SIZE_KEY: 8}
    assert s["pt"].dataType == T.StructType([T.StructField("x", T.LongType()), T.StructField("y", T.DoubleType())])


def test_time_travel_by_version_and_by_tag(spark, items):
    v1 = spark.read.format("lancelet").option("version", 1).load(items)
    assert v1.count() == 20_000
    tagged = spark.read.format("lancelet").option("version", "after-delete").load(items)
    assert tagged.count() == 18_000
    assert tagged.where("id % 10 = 0").count() == 0


def test_partitions_follow_rows_per_partition_and_max_partitions(spark, items):
    df = spark.read.format("lancelet").option("rows_per_partition", 2_000).load(items)
    # 4 files of 5,000 rows + one of 5,000: 3 partitions each (the last ones hold 1,000 rows).
    assert df.rdd.getNumPartitions() == 13
    assert df.count() == 23_000
    capped = spark.read.format("lancelet").option("rows_per_partition", 100).option("max_partitions", 4).load(items)
    assert capped.rdd.getNumPartitions() == 4
    assert capped.count() == 23_000


def test_columns_option_and_row_ids(spark, items):
    df = spark.read.format("lancelet").option("columns", "name,id").option("with_row_id", "true").load(items)
    assert df.columns == ["name", "id", "_rowid"]
    rows = df.where("id = 20003").collect()
    assert len(rows) == 1
    taken = lancelet.dataset(items)._take_rows([rows[0]["_rowid"]], columns=["id"])
    assert taken.column("id").to_pylist() == [20003]


def test_read_helper_prunes_columns_and_rows_in_the_scan(spark, items, tmp_path):
    stats = str(tmp_path / "stats")
    os.makedirs(stats)
    df = lancelet.spark.read(spark, items, columns=["id", "name"], filter="id >= 24990", version=3,
                             scan_stats_dir=stats)
    assert df.columns == ["id", "name"]
    assert sorted(r.id for r in df.collect()) == list(range(24_990, 25_000))
    # the scan returned only the matching rows
    returned = 0
    for name in os.listdir(stats):
        with open(os.path.join(stats, name)) as f:
            returned += json.load(f)["rows_returned"]
    assert returned == 10
    assert lancelet.spark.read(spark, items, version=1).count() == 20_000


@pytest.fixture(scope="module")
def materialized(spark, items):
    """The whole dataset checkpointed in Spark: filters on it never reach lancelet."""
    return spark.read.format("lancelet").load(items).localCheckpoint()


@pytest.mark.parametrize(
    "predicate",
    [
        "id = 123",
        "id <> 5 AND id < 40",
        "id >= 24990",
        "score > 0.99",
        "name = 'name-7''s'",
        "name IS NULL AND id < 200",
        "name IS NOT NULL AND small = 3",
        "id IN (1, 2, 3, 19999, 20001)",
        "NOT (small > 2) AND id < 500",
        "name LIKE 'name-4%'",
        "name LIKE '%9''s'",
        "name LIKE '%e-1%' AND id < 300",
        "day = DATE '1970-01-05'",
        "when < TIMESTAMP '1970-01-01 00:00:05'",
        "id <=> 77",
        "pt.x = 10",
        "big > 19000000000000",
    ],
)
def test_where_returns_what_spark_would(spark, items, materialized, predicate):
    got = spark.read.format("lancelet").load(items).where(predicate)
    # The same query evaluated by Spark alone, over rows it already holds.
    expected = sorted(r["id"] for r in materialized.where(predicate).select("id").collect())
    assert sorted(r["id"] for r in got.select("id").collect()) == expected
    assert expected  # every predicate matches something


def test_filter_option_prunes_rows_in_the_scan(spark, items, tmp_path):
    option_dir, where_dir, kept_dir = tmp_path / "option", tmp_path / "where", tmp_path / "kept"
    for d in (option_dir, where_dir, kept_dir):
        d.mkdir()
    predicate = "id < 100 AND name = 'name-3''s'"

    def load(stats_dir, **options):  # a new DataFrameReader each time: option() changes it in place
        reader = spark.read.format("lancelet").option("rows_per_partition", 5_000)
        return reader.options(scan_stats_dir=str(stats_dir), **options).load(items)

    assert load(option_dir, filter=predicate).count() == 2  # ids 3 and 53
    pruned = _stats(option_dir)
    assert pruned and all(s["filter"] == predicate for s in pruned)
    assert sum(s["rows_returned"] for s in pruned) == 2
    # Spark's own filters are evaluated by Spark: every live row reaches it (see LanceletReader).
    assert load(where_dir).where(predicate).count() == 2
    assert sum(s["rows_returned"] for s in _stats(where_dir)) == 23_000
    load(kept_dir).where("id % 7 = 0").count()
    kept = _stats(kept_dir)
    assert not any(s["filter"] for s in kept)
    assert sum(s["rows_returned"] for s in kept) == 23_000
    assert sum(s["rows_scanned"] for s in kept) == 23_000
    # Page statistics let the filtered scan skip pages whose id range starts at 100 or more.
    assert sum(s["rows_scanned"] for s in pruned) < 23_000


def test_filter_option_rejects_what_lancelet_cannot_parse(spark, items):
    df = spark.read.format("lancelet").option("filter", "id <").load(items)
    with pytest.raises(Exception, match="option 'filter'"):
        df.count()


# -- one DataFrame, many actions ---------------------------------------------------------
# Spark 4.3 keeps a Python source's planned read (reader, read function, partitions) on the
# relation that `load()` created and reuses it for later scans of any DataFrame derived from
# it: whatever the reader took from one plan's filters must not reach another plan's rows.


@pytest.fixture(params=[True, False], ids=["pushdown-conf-on", "pushdown-conf-off"])
def pushdown_conf(spark, request):
    """Runs a test with Spark's Python filter pushdown setting on, then off."""
    key = "spark.sql.python.filterPushdown.enabled"
    before = spark.conf.get(key, None)
    spark.conf.set(key, str(request.param).lower())
    yield request.param
    if before is None:
        spark.conf.unset(key)
    else:
        spark.conf.set(key, before)


def _prices_table(ids, prices):
    return pa.table({"id": pa.array(ids, pa.int64()), "name": [f"item-{i}" for i in ids],
                     "price": pa.array(prices, pa.float64())})


@pytest.fixture
def prices(tmp_path):
    """6 rows: ids 4 and 5 have price > 5, ids 0 and 1 price < 3."""
    uri = str(tmp_path / "prices.lance")
    lancelet.write_dataset(_prices_table(range(6), [1.0, 2.5, 3.0, 4.5, 6.0, 9.5]), uri)
    return uri


def _ids(df):
    return sorted(r["id"] for r in df.select("id").collect())


def _lancelet_ids(uri):
    return sorted(lancelet.dataset(uri).to_table()["id"].to_pylist())


def test_actions_on_one_dataframe_each_read_their_own_rows(spark, prices, tmp_path, pushdown_conf):
    original = lancelet.dataset(prices).to_table().sort_by("id")
    df = spark.read.format("lancelet").load(prices)
    assert df.count() == 6
    assert df.where("price > 5").count() == 2
    assert df.count() == 6  # was 2: the filter pushed for the previous action
    assert _ids(df) == list(range(6))
    assert _ids(df.where("price > 5")) == [4, 5]
    df.where("price > 5").show()
    copy = str(tmp_path / "copy.lance")
    df.write.format("lancelet").mode("overwrite").save(copy)  # wrote 2 rows
    assert _lancelet_ids(copy) == list(range(6))
    assert lancelet.dataset(copy).to_table().sort_by("id").equals(original)
    df.where("price > 5").write.format("lancelet").mode("overwrite").save(copy)
    assert _lancelet_ids(copy) == [4, 5]
    # docs/spark.md's order: look at a filtered view, then overwrite the source with the DataFrame.
    df.where("price > 5").show()
    df.write.format("lancelet").mode("overwrite").save(prices)
    back = lancelet.dataset(prices)
    assert back.version == 2
    assert back.to_table().sort_by("id").equals(original)
    assert df.count() == 6
    assert spark.read.format("lancelet").load(prices).count() == 6


def test_different_filters_one_after_another_on_one_dataframe(spark, prices, pushdown_conf):
    df = spark.read.format("lancelet").load(prices)
    assert _ids(df.where("price > 5")) == [4, 5]
    assert _ids(df.where("price < 3")) == [0, 1]
    assert _ids(df.where("id % 2 = 0 OR price > 100")) == [0, 2, 4]  # no filter Spark can push
    assert _ids(df.where("price > 5")) == [4, 5]
    assert _ids(df.where("name = 'item-3'")) == [3]
    assert df.where("price < 3").count() == 2
    assert _ids(df.where("price > 5").union(df.where("price < 3"))) == [0, 1, 4, 5]
    assert _ids(df.where("price > 5").union(df)) == [0, 1, 2, 3, 4, 4, 5, 5]
    assert _ids(df) == list(range(6))


def test_a_dataframe_reads_the_version_it_was_loaded_at(spark, prices, pushdown_conf):
    df = spark.read.format("lancelet").load(prices)
    assert df.count() == 6
    lancelet.write_dataset(_prices_table(range(6, 9), [7.0, 8.0, 1.5]), prices, mode="append")
    # Filtered or not, every action reads version 1, as the DataFrame's schema did.
    assert _ids(df.where("price > 5")) == [4, 5]
    assert df.count() == 6
    assert _ids(df.where("id % 2 = 0")) == [0, 2, 4]
    again = spark.read.format("lancelet").load(prices)
    assert again.count() == 9
    assert _ids(again.where("price > 5")) == [4, 5, 6, 7]


def test_filter_option_holds_for_every_action(spark, prices, tmp_path, pushdown_conf):
    cheap = spark.read.format("lancelet").option("filter", "price < 3").load(prices)
    assert cheap.count() == 2
    assert _ids(cheap.where("id = 1")) == [1]
    assert cheap.count() == 2
    assert _ids(cheap.where("price > 5")) == []
    out = str(tmp_path / "cheap.lance")
    cheap.write.format("lancelet").mode("overwrite").save(out)
    assert _lancelet_ids(out) == [0, 1]
    assert spark.read.format("lancelet").load(prices).count() == 6  # another load, no filter


# -- writes ----------------------------------------------------------------------------


def _files(uri):
    d = os.path.join(uri, "data")
    return sorted(os.listdir(d)) if os.path.isdir(d) else []


def test_append_creates_then_appends_and_pylance_reads_it(spark, items, tmp_path):
    uri = str(tmp_path / "copy.lance")
    src = spark.read.format("lancelet").option("version", 1).load(items)
    src.write.format("lancelet").mode("append").save(uri)
    src.where("id < 1000").write.format("lancelet").mode("append").save(uri)
    ours = lancelet.dataset(uri)
    assert ours.version == 2
    assert ours.count_rows() == 21_000
    # The fixed-size list kept its size through the field metadata; unsigned columns
    # were read as wider signed types and written back as such.
    assert ours.schema.field("vec").type == pa.list_(pa.float32(), 8)
    theirs = lance.dataset(uri).to_table().sort_by("id")
    v1 = _expected(items, version=1)
    assert theirs.slice(0, 0).schema.names == v1.schema.names
    assert theirs.filter(pa.compute.greater_equal(theirs["id"], 0)).num_rows == 21_000
    assert theirs.column("vec").type == pa.list_(pa.float32(), 8)


def test_append_keeps_the_dataset_types(spark, items, tmp_path):
    uri = str(tmp_path / "typed.lance")
    shutil.copytree(items, uri)
    spark.read.format("lancelet").load(uri).where("id < 10").write.format("lancelet").mode("append").save(uri)
    ds = lancelet.dataset(uri)
    assert ds.schema == lancelet.dataset(items).schema  # uint8 / uint64 / fixed-size list kept
    assert ds.count_rows() == 23_000 + 9


def test_overwrite_replaces_rows_and_schema(spark, items, tmp_path):
    uri = str(tmp_path / "over.lance")
    shutil.copytree(items, uri)
    spark.range(5).selectExpr("id AS k", "CAST(id AS STRING) AS s").write.format("lancelet").mode("overwrite").save(uri)
    ds = lancelet.dataset(uri)
    assert ds.version == 4
    assert ds.schema.names == ["k", "s"]
    assert sorted(ds.to_table()["k"].to_pylist()) == [0, 1, 2, 3, 4]
    assert lance.dataset(uri).count_rows() == 5
    assert lancelet.dataset(uri, version=3).count_rows() == 23_000  # history kept


def test_fixed_size_lists_option_writes_embeddings(spark, tmp_path):
    uri = str(tmp_path / "emb.lance")
    df = spark.createDataFrame([(i, [float(i)] * 4) for i in range(10)], "id long, emb array<float>")
    df.write.format("lancelet").mode("overwrite").option("fixed_size_lists", "emb:4").save(uri)
    t = lance.dataset(uri).to_table().sort_by("id")
    assert t.schema.field("emb").type == pa.list_(pa.float32(), 4)
    assert t["emb"].to_pylist()[3] == [3.0] * 4


def test_append_with_unknown_column_is_a_clear_error(spark, items, tmp_path):
    uri = str(tmp_path / "strict.lance")
    shutil.copytree(items, uri)
    df = spark.range(3).selectExpr("id", "id AS nope")
    with pytest.raises(Exception, match="SchemaMismatchError|not in the dataset"):
        df.write.format("lancelet").mode("append").save(uri)
    assert lancelet.dataset(uri).version == 3


def test_a_failing_job_leaves_no_version_and_no_files(spark, items, tmp_path):
    from pyspark.sql.functions import udf

    uri = str(tmp_path / "fail.lance")
    shutil.copytree(items, uri)
    before = _files(uri)

    @udf("long")
    def explode_on_last(i):
        if i == 24_999:
            raise ValueError("boom")
        return i

    df = spark.read.format("lancelet").option("rows_per_partition", 5_000).load(uri)
    with pytest.raises(Exception, match="boom"):
        df.withColumn("id", explode_on_last("id")).write.format("lancelet").mode("append").save(uri)
    assert lancelet.dataset(uri).version == 3
    assert _files(uri) == before


def test_retried_tasks_do_not_add_rows_twice(spark, tmp_path):
    from pyspark.sql.functions import udf

    uri = str(tmp_path / "retry.lance")
    marker = str(tmp_path / "failed-once")

    @udf("long")
    def fail_first_attempt(i):
        if i == 7 and not os.path.exists(marker):
            open(marker, "w").close()
            raise RuntimeError("first attempt dies")
        return i

    df = spark.range(0, 1000, numPartitions=2).withColumn("id", fail_first_attempt("id"))
    df.write.format("lancelet").mode("append").save(uri)
    assert os.path.exists(marker)
    t = lancelet.dataset(uri).to_table()
    assert sorted(t["id"].to_pylist()) == list(range(1000))
    committed = {f.path for frag in lancelet.dataset(uri).get_fragments() for f in frag.data_files()}
    assert set(_files(uri)) == committed  # the failed attempt's file was removed


def test_two_concurrent_spark_appends_both_land(spark, tmp_path):
    uri = str(tmp_path / "race.lance")
    spark.range(0, 10).write.format("lancelet").mode("append").save(uri)
    errors = []

    def append(lo):
        try:
            lancelet.spark.activate(spark)  # Spark finds Python sources through the thread's session
            spark.range(lo, lo + 500, numPartitions=2).write.format("lancelet").mode("append").save(uri)
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=append, args=(lo,)) for lo in (1000, 2000)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    ds = lancelet.dataset(uri)
    assert ds.version == 3
    assert sorted(ds.to_table()["id"].to_pylist()) == list(range(10)) + list(range(1000, 1500)) + list(range(2000, 2500))


def test_two_spark_appends_planned_on_an_absent_dataset_both_land(spark, tmp_path):
    """Both jobs plan while the dataset is absent (each task waits until both jobs run
    tasks), so both commit as creates: the second must append, never replace the first's
    rows."""
    from pyspark.sql.functions import udf

    uri = str(tmp_path / "absent.lance")
    marks = str(tmp_path / "marks")
    os.makedirs(marks)

    @udf("long")
    def after_both_planned(i):
        import time

        open(os.path.join(marks, str(i // 1000)), "w").close()
        deadline = time.monotonic() + 60
        while len(os.listdir(marks)) < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        return i

    errors = []

    def append(lo):
        try:
            lancelet.spark.activate(spark)
            df = spark.range(lo, lo + 300, numPartitions=1).withColumn("id", after_both_planned("id"))
            df.write.format("lancelet").mode("append").save(uri)
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=append, args=(lo,)) for lo in (1000, 2000)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    ds = lancelet.dataset(uri)
    assert ds.version == 2
    assert sorted(ds.to_table()["id"].to_pylist()) == list(range(1000, 1300)) + list(range(2000, 2300))
    assert sorted(lance.dataset(uri).to_table()["id"].to_pylist()) == sorted(ds.to_table()["id"].to_pylist())


# -- Arrow UDF helpers -------------------------------------------------------------------


@pytest.mark.parametrize("indexed", [False, True], ids=["exact", "ivf_flat"])
def test_nearest_searches_query_partitions_on_executors(spark, tmp_path, indexed):
    """One output row per (query, neighbour), equal to the library's own search of each query."""
    import numpy as np

    rng = np.random.default_rng(5)
    x = rng.standard_normal((3000, 8)).astype(np.float32)
    uri = str(tmp_path / "vectors.lance")
    ds = lancelet.write_dataset(pa.table({"n": range(3000), "v": pa.FixedSizeListArray.from_arrays(
        pa.array(x.ravel()), 8)}), uri, max_rows_per_file=1000)
    if indexed:
        ds.create_index("v", "IVF_FLAT", num_partitions=4)
    qids = list(range(0, 3000, 97))
    queries = spark.createDataFrame([(i, x[i].tolist()) for i in qids], "qid long, q array<float>").repartition(3)
    rows = lancelet.spark.nearest(spark, uri, queries, "v", k=4, id_column="qid", columns=["n"], nprobes=4).collect()
    assert len(rows) == 4 * len(qids)
    for qid in qids:
        got = sorted(((r["_distance"], r["n"]) for r in rows if r["qid"] == qid))
        expected = ds.to_table(nearest={"column": "v", "q": x[qid], "k": 4, "nprobes": 4}, columns=["n"])
        assert [n for _, n in got] == expected["n"].to_pylist()
        assert got[0] == (0.0, qid)


def test_nearest_returns_the_datasets_columns_by_default(spark, tmp_path):
    """Like ``nearest=`` on a dataset: every column unless ``columns=`` narrows it; a dataset
    column named like the query id column is left out, and naming one is a clear error."""
    import numpy as np

    x = np.arange(40, dtype=np.float32).reshape(20, 2)
    uri = str(tmp_path / "v.lance")
    ds = lancelet.write_dataset(pa.table({
        "n": pa.array(range(20), pa.int64()), "s": [f"s{i}" for i in range(20)],
        "v": pa.FixedSizeListArray.from_arrays(pa.array(x.ravel()), 2)}), uri)
    queries = spark.createDataFrame([(3, x[3].tolist()), (7, x[7].tolist())], "qid long, q array<float>")
    pairs = lancelet.spark.nearest(spark, uri, queries, "v", k=2, id_column="qid")
    assert pairs.columns == ["qid", "_rowid", "_distance", "n", "s", "v"]
    rows = sorted(pairs.collect(), key=lambda r: (r["qid"], r["_distance"]))
    for qid in (3, 7):
        want = ds.to_table(nearest={"column": "v", "q": x[qid], "k": 2}).to_pylist()
        got = [r.asDict() for r in rows if r["qid"] == qid]
        assert [(g["n"], g["s"], [float(f) for f in g["v"]]) for g in got] == [
            (w["n"], w["s"], w["v"]) for w in want
        ]
    by_n = lancelet.spark.nearest(spark, uri, queries.withColumnRenamed("qid", "n"), "v", k=1, id_column="n")
    assert by_n.columns == ["n", "_rowid", "_distance", "s", "v"]
    assert lancelet.spark.nearest(spark, uri, queries, "v", k=1, id_column="qid", columns=["s"]).columns == [
        "qid", "_rowid", "_distance", "s"]
    with pytest.raises(lancelet.errors.InvalidArgumentError, match="id_column"):
        lancelet.spark.nearest(spark, uri, queries.withColumnRenamed("qid", "n"), "v", id_column="n", columns=["n"])


def test_create_index_on_executors_searches_like_a_local_build(spark, tmp_path):
    """The driver trains the model, each task encodes fragments into a segment, one commit:
    pylance and lancelet list one index of the right type and find the same neighbours as
    through a local build with the same model shape (recall against exact search close)."""
    import numpy as np

    rng = np.random.default_rng(11)
    centers = rng.standard_normal((16, 16)).astype(np.float32) * 4
    x = (centers[rng.integers(0, 16, 6000)] + rng.standard_normal((6000, 16)).astype(np.float32)).astype(np.float32)
    table = pa.table({"n": range(6000), "v": pa.FixedSizeListArray.from_arrays(pa.array(x.ravel()), 16)})
    dist_uri, local_uri = str(tmp_path / "dist.lance"), str(tmp_path / "local.lance")
    lancelet.write_dataset(table, dist_uri, max_rows_per_file=1500)
    local = lancelet.write_dataset(table, local_uri, max_rows_per_file=1500)
    ds = lancelet.spark.create_index(spark, dist_uri, "v", "IVF_PQ", num_partitions=8, num_sub_vectors=4)
    local.create_index("v", "IVF_PQ", num_partitions=8, num_sub_vectors=4)
    segments = ds.list_indices()
    assert {s["name"] for s in segments} == {"v_idx"} and len(segments) == 4
    assert sorted(f for s in segments for f in s["fragment_ids"]) == [0, 1, 2, 3]
    theirs = lance.dataset(dist_uri)
    assert {i["type"] for i in theirs.list_indices()} == {"IVF_PQ"}

    def recall(d):
        hits = 0
        for i in range(0, 6000, 300):
            truth = set(d.to_table(nearest={"column": "v", "q": x[i], "k": 10, "use_index": False}, columns=["n"])["n"].to_pylist())
            got = set(d.to_table(nearest={"column": "v", "q": x[i], "k": 10, "nprobes": 4}, columns=["n"])["n"].to_pylist())
            hits += len(truth & got)
        return hits / (10 * 20)

    r_dist, r_local, r_pylance = recall(lancelet.dataset(dist_uri)), recall(lancelet.dataset(local_uri)), recall(theirs)
    assert r_dist >= r_local - 0.1, (r_dist, r_local)
    assert abs(r_pylance - r_dist) <= 0.1, (r_pylance, r_dist)


def test_create_full_text_index_on_executors_scores_like_a_local_build(spark, tmp_path):
    """INVERTED: each task tokenizes its fragments into a segment, one commit; the segments
    are searched as one index (statistics over all of them), so lancelet and pylance score
    every row exactly as through a one-piece local build."""
    import random

    rng = random.Random(5)
    words = "fox dog cat bird runs jumps brown lazy quick red blue green".split()
    text = [" ".join(rng.choice(words) for _ in range(rng.randint(1, 12))) for _ in range(2000)]
    table = pa.table({"n": range(2000), "text": text})
    dist_uri, local_uri = str(tmp_path / "dist.lance"), str(tmp_path / "local.lance")
    lancelet.write_dataset(table, dist_uri, max_rows_per_file=500)
    local = lancelet.write_dataset(table, local_uri, max_rows_per_file=500)
    ds = lancelet.spark.create_index(spark, dist_uri, "text", "INVERTED", with_position=True)
    local.create_scalar_index("text", "INVERTED", with_position=True)
    segments = ds.list_indices()
    assert {s["name"] for s in segments} == {"text_idx"} and len(segments) == 4
    assert {s["type"] for s in segments} == {"Inverted"}
    for q in ["quick fox", '"brown fox"', "red red blue"]:
        want = local.to_table(full_text_query=q, columns=["n"])
        want = dict(zip(want["n"].to_pylist(), want["_score"].to_pylist()))
        assert want
        for d in (lancelet.dataset(dist_uri), lance.dataset(dist_uri)):
            got = d.to_table(full_text_query=q, columns=["n"])
            got = dict(zip(got["n"].to_pylist(), got["_score"].to_pylist()))
            assert got.keys() == want.keys()
            assert all(abs(got[k] - want[k]) <= 1e-5 * abs(want[k]) for k in want), q
    with pytest.raises(lancelet.errors.InvalidArgumentError, match="language"):
        lancelet.spark.create_index(spark, dist_uri, "text", "INVERTED", language="Klingon", replace=True)


def test_take_fetches_rows_by_id_on_executors(spark, items):
    ids = spark.read.format("lancelet").option("with_row_id", "true").option("columns", "id").load(items)
    wanted = ids.where("id IN (5, 20004, 17777)")
    got = lancelet.spark.take(wanted, items, columns=["id", "name", "vec"])
    rows = sorted(got.collect(), key=lambda r: r["id"])
    assert [r["id"] for r in rows] == [5, 17777, 20004]
    expected = lancelet.dataset(items).to_table(filter="id IN (5, 20004, 17777)").sort_by("id")
    assert [r["name"] for r in rows] == expected["name"].to_pylist()
    assert [r["vec"] for r in rows] == [list(v) for v in expected["vec"].to_pylist()]


def test_add_columns_runs_on_executors_and_commits_once(spark, tmp_path):
    import pyarrow.compute as pc

    uri = str(tmp_path / "wide.lance")
    lancelet.write_dataset(pa.table({"id": pa.array(range(3000), pa.int64()),
                                     "name": [f"n{i}" for i in range(3000)]}), uri, max_rows_per_file=700)
    lancelet.dataset(uri).delete("id % 9 = 0")
    before = {n: os.path.getsize(os.path.join(uri, "data", n)) for n in os.listdir(os.path.join(uri, "data"))}
    ds = lancelet.spark.add_columns(
        spark, uri, lambda b: pa.record_batch({"twice": pc.multiply(b["id"], 2), "up": pc.utf8_upper(b["name"])}),
        read_columns=["id", "name"])
    assert ds.version == 3
    after = {n: os.path.getsize(os.path.join(uri, "data", n)) for n in os.listdir(os.path.join(uri, "data"))}
    assert {n: after[n] for n in before} == before and len(after) == len(before) + 5  # one file per fragment
    t = lance.dataset(uri).to_table()
    assert t["twice"].to_pylist() == [2 * i for i in t["id"].to_pylist()]
    assert t["up"].to_pylist() == [f"N{i}" for i in t["id"].to_pylist()]
    # A failing UDF commits nothing and leaves no file behind.

    def boom(b):
        if b["id"][0].as_py() > 1000:
            raise ValueError("bad row")
        return pa.record_batch({"z": b["id"]})

    with pytest.raises(Exception, match="bad row"):
        lancelet.spark.add_columns(spark, uri, boom, read_columns=["id"])
    assert sorted(os.listdir(os.path.join(uri, "data"))) == sorted(after)
    assert lancelet.dataset(uri).version == 3


def test_fragment_writer_and_commit_fragments(spark, tmp_path):
    uri = str(tmp_path / "udf.lance")
    schema = pa.schema([("id", pa.int64()), ("sq", pa.int64())])
    df = spark.range(0, 300, numPartitions=3).selectExpr("id", "id * id AS sq")
    rows = df.mapInArrow(lancelet.spark.fragment_writer(uri, schema=schema, mode="overwrite"), "fragment string").collect()
    assert len(rows) == 3
    assert not os.path.exists(os.path.join(uri, "_versions"))  # nothing committed yet
    ds = lancelet.spark.commit_fragments(uri, rows, mode="overwrite", schema=schema)
    assert ds.version == 1
    t = lance.dataset(uri).to_table().sort_by("id")
    assert t["sq"].to_pylist() == [i * i for i in range(300)]


# -- planning (no Spark needed) ------------------------------------------------------------


def _frag(i, rows):
    return {"id": i, "physical_rows": rows, "files": [{"file_size_bytes": rows * 10}]}


@pytest.mark.parametrize("sizes,per,cap", [([10], 3, None), ([5, 5, 5], 7, None), ([100, 1, 1, 1], 10, 3), ([], 5, None),
                                           ([1000] * 7, 1, 5)])
def test_plan_partitions_cover_every_row_once(sizes, per, cap):
    parts = plan_partitions([_frag(i, n) for i, n in enumerate(sizes)], per, cap)
    rows = sorted((f, r) for p in parts for f, a, b in p for r in range(a, b))
    assert rows == sorted((i, r) for i, n in enumerate(sizes) for r in range(n))
    assert len(parts) >= 1
    if cap:
        assert len(parts) <= cap
    for p in parts[:-1]:
        # cuts at a fragment's boundary leave a partition at least half full
        assert 2 * sum(b - a for _, a, b in p) >= min(per, sum(sizes))
        target = max(per, -(-sum(sizes) // cap)) if cap else per
        assert sum(b - a for _, a, b in p) <= (target if cap else 2 * target)


def test_plan_partitions_keep_small_fragments_whole():
    # 7 equal fragments over 2 cores: two partitions, no fragment split
    parts = plan_partitions([_frag(i, 1000) for i in range(7)], min_partitions=2)
    assert [[f for f, _, _ in p] for p in parts] == [[0, 1, 2, 3], [4, 5, 6]]
    assert all(a == 0 and b == 1000 for p in parts for _, a, b in p)
    # one small fragment is split so that both cores read
    parts = plan_partitions([_frag(0, 1000)], min_partitions=2)
    assert parts == [[(0, 0, 500)], [(0, 500, 1000)]]
    # large data is not split further than 128 MiB partitions ask for
    assert len(plan_partitions([_frag(0, 100_000_000)], min_partitions=2)) == 8


def test_small_dataset_is_read_by_every_core(spark, tmp_path):
    uri = str(tmp_path / "seven.lance")
    lancelet.write_dataset(pa.table({"id": pa.array(range(700), pa.int64())}), uri, max_rows_per_file=100)
    assert len(lancelet.dataset(uri).get_fragments()) == 7
    df = spark.read.format("lancelet").load(uri)
    assert df.rdd.getNumPartitions() == spark.sparkContext.defaultParallelism == 2
    assert sorted(r.id for r in df.collect()) == list(range(700))
    one = spark.read.format("lancelet").option("min_partitions", 1).load(uri)
    assert one.rdd.getNumPartitions() == 1


def test_plan_partitions_default_aims_at_128_mib():
    frags = [_frag(0, 100_000_000)]  # 10 bytes a row: about 13.4M rows per partition
    parts = plan_partitions(frags)
    assert len(parts) == 8


# -- namespaces ----------------------------------------------------------------------------


def test_tables_addressed_by_name_in_a_namespace(spark, tmp_path):
    """``option("namespace_root", root).load("ns$table")``: Spark writes a table a pylance
    catalog lists, and reads a table pylance wrote through its namespace."""
    import lance.namespace as pyns
    import lance_namespace as ln

    root = str(tmp_path / "catalog")
    theirs = pyns.DirectoryNamespace(root=root)
    theirs.create_namespace(ln.CreateNamespaceRequest(id=["sales"]))
    lance.write_dataset(pa.table({"id": [1, 2, 3]}), namespace_client=theirs, table_id=["sales", "orders"])

    df = spark.read.format("lancelet").option("namespace_root", root).load("sales$orders")
    assert sorted(r.id for r in df.collect()) == [1, 2, 3]
    df.where("id > 1").write.format("lancelet").option("namespace_root", root).mode("append").save("sales$big")
    df.write.format("lancelet").option("namespace_root", root).mode("append").save("sales$orders")
    assert sorted(theirs.list_tables(ln.ListTablesRequest(id=["sales"])).tables) == ["big", "orders"]
    assert lance.dataset(namespace_client=theirs, table_id=["sales", "big"]).count_rows() == 2
    assert lance.dataset(namespace_client=theirs, table_id=["sales", "orders"]).count_rows() == 6
    with pytest.raises(Exception, match="not found"):
        spark.read.format("lancelet").option("namespace_root", root).load("sales$nope").collect()


def test_a_blank_filter_is_refused_not_read_as_every_row(spark, tmp_path):
    # Issue 28 item 5: blank filters are errors everywhere, Spark's option("filter") too.
    uri = str(tmp_path / "blank.lance")
    lancelet.write_dataset(pa.table({"id": [1, 2, 3]}), uri)
    for blank in ["", "  "]:
        with pytest.raises(Exception, match="option 'filter' is empty"):
            spark.read.format("lancelet").option("filter", blank).load(uri).count()
        with pytest.raises(Exception, match="option 'filter' is empty"):
            lancelet.spark.read(spark, uri, filter=blank).count()
    assert lancelet.spark.read(spark, uri).count() == 3
