"""Spark with lancelet vs Spark with Parquet (its native reader), in one run.

    .venv/bin/python benches/bench_spark.py [--rows 2000000] [--repeat 3] [--dir /tmp/x]

Both tables hold the same rows (``bench_file.make_table``: int64 id, float64 with nulls,
low-cardinality strings, free text, 8-dim float32 embeddings). Every read is forced through
Spark's ``noop`` sink (all columns materialized in the JVM); writes read the same cached
Parquet source. Reports the median of ``--repeat`` runs and lancelet/Parquet ratios
(below 1 means lancelet is faster).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile

import pyarrow.parquet as pq

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_file import make_table, timeit  # noqa: E402


def parse_args(argv=None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--rows", type=int, default=2_000_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--dir", default=None, help="where the tables go (created if missing; kept afterwards)")
    return ap.parse_args(argv)


def work_dir(path=None) -> str:
    """``path`` (created with its parents if missing), or a new temporary directory."""
    if not path:
        return tempfile.mkdtemp(prefix="lancelet-bench-spark-")
    os.makedirs(path, exist_ok=True)
    return path


def main(argv=None) -> None:
    args = parse_args(argv)
    root = work_dir(args.dir)
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    import lancelet.spark

    table = make_table(args.rows)
    pq_path, lance_path = os.path.join(root, "items.parquet"), os.path.join(root, "items.lance")
    pq.write_table(table, pq_path)
    lancelet.write_dataset(table, lance_path)
    spark = (SparkSession.builder.master("local[2]").appName("bench")
             .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
             .config("spark.driver.memory", "4g").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    lancelet.spark.register(spark)

    def lance_df():
        return spark.read.format("lancelet").load(lance_path)

    def lance_df_cols(cols):
        # Spark does not prune columns of Python sources yet; the option does.
        return spark.read.format("lancelet").option("columns", cols).load(lance_path)

    def parquet_df():
        return spark.read.parquet(pq_path)

    def noop(df):
        df.write.format("noop").mode("overwrite").save()

    results = []

    def pair(name, ours, theirs):
        a, b = timeit(ours, args.repeat), timeit(theirs, args.repeat)  # each warms up first
        results.append((name, a, b))
        print(f"{name:<34} lancelet {a:7.2f}s   parquet {b:7.2f}s   ratio {a / b:5.2f}", flush=True)

    pair("full scan (all columns)", lambda: noop(lance_df()), lambda: noop(parquet_df()))
    pair("projected scan (id, value)", lambda: noop(lance_df().select("id", "value")),
         lambda: noop(parquet_df().select("id", "value")))
    pair("projected via option('columns')", lambda: noop(lance_df_cols("id,value")),
         lambda: noop(parquet_df().select("id", "value")))
    pair("filtered scan (where id < 20000)", lambda: noop(lance_df().where("id < 20000")),
         lambda: noop(parquet_df().where("id < 20000")))
    # Spark's filters stay with Spark (see lancelet.spark.LanceletReader); the option filters in the scan.
    pair("filtered via option('filter')",
         lambda: noop(spark.read.format("lancelet").option("filter", "id < 20000").load(lance_path)),
         lambda: noop(parquet_df().where("id < 20000")))
    pair("aggregate (avg value by category)",
         lambda: lance_df_cols("category,value").groupBy("category").avg("value").collect(),
         lambda: parquet_df().groupBy("category").avg("value").collect())
    source = parquet_df().cache()
    source.count()
    out_l, out_p = os.path.join(root, "out.lance"), os.path.join(root, "out.parquet")

    def write_lance():
        shutil.rmtree(out_l, ignore_errors=True)
        source.write.format("lancelet").mode("overwrite").save(out_l)

    def write_parquet():
        shutil.rmtree(out_p, ignore_errors=True)
        source.write.mode("overwrite").parquet(out_p)

    pair("write (from cached DataFrame)", write_lance, write_parquet)
    spark.stop()
    print(f"\n{args.rows:,} rows; lancelet {lancelet.__version__}; median of {args.repeat} runs after a warm-up")
    if not args.dir:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
