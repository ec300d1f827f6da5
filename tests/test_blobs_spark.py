"""Blob columns through Spark: a read returns the descriptors (not the payloads), and
``lancelet.spark.read_blobs`` fetches the payloads of the rows a job kept, on executors."""

from __future__ import annotations

import os
import shutil
import sys

import pyarrow as pa
import pytest

pyspark = pytest.importorskip("pyspark")
if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
    pytest.skip("Spark needs Java", allow_module_level=True)

import lancelet  # noqa: E402
import lancelet.spark  # noqa: E402

pytestmark = [pytest.mark.lancelet_only, pytest.mark.slow]


@pytest.fixture(scope="module")
def spark():
    from pyspark.sql import SparkSession

    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    session = (SparkSession.builder.master("local[2]").appName("lancelet-blob-tests")
               .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
               .config("spark.sql.session.timeZone", "UTC").getOrCreate())
    session.sparkContext.setLogLevel("ERROR")
    lancelet.spark.register(session)
    yield session


def test_spark_reads_descriptors_and_fetches_payloads(spark, tmp_path):
    uri = str(tmp_path / "imgs.lance")
    values = [bytes([i]) * (10 + i * 1000) for i in range(20)]
    values[5] = None
    schema = pa.schema([pa.field("id", pa.int64()), pa.field("label", pa.int32()), lancelet.blob_field("img")])
    table = pa.table({"id": list(range(20)), "label": [i % 3 for i in range(20)],
                      "img": lancelet.blob_array(values)}, schema=schema)
    ds = lancelet.write_dataset(table, uri)
    df = spark.read.format("lancelet").load(uri)
    rows = {r["id"]: r for r in df.collect()}
    assert rows[0]["img"]["kind"] == 0 and rows[19]["img"]["size"] == 19_010 and rows[5]["img"] is None
    # Filter on metadata, then pull the payloads of the rows left.
    meta = ds.to_table(columns=["id", "label"], filter="label = 1", with_row_address=True)
    meta = meta.set_column(2, "_rowaddr", meta.column("_rowaddr").cast(pa.int64()))  # Spark has no uint64
    got = lancelet.spark.read_blobs(spark.createDataFrame(meta.to_pandas()), uri, "img").collect()
    assert {r["id"]: r["img_bytes"] for r in got} == {i: values[i] for i in range(20) if i % 3 == 1}
