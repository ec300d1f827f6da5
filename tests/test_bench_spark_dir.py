"""``benches/bench_spark.py --dir D`` creates ``D`` when it does not exist yet (no Spark run)."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

BENCH = Path(__file__).resolve().parent.parent / "benches" / "bench_spark.py"


def _bench():
    spec = importlib.util.spec_from_file_location("bench_spark_under_test", BENCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_dir_that_does_not_exist_is_created(tmp_path):
    bench = _bench()
    target = tmp_path / "not" / "there" / "yet"
    args = bench.parse_args(["--rows", "10", "--dir", str(target)])
    assert bench.work_dir(args.dir) == str(target)
    assert target.is_dir()
    assert bench.work_dir(args.dir) == str(target)  # an existing directory is fine too


def test_no_dir_makes_a_temporary_one():
    bench = _bench()
    root = bench.work_dir(bench.parse_args([]).dir)
    try:
        assert os.path.isdir(root)
    finally:
        os.rmdir(root)
