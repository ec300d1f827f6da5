"""``lancelet.log`` and the core's log records under pylance's environment variables
(``LANCE_LOG``, ``LANCE_LOG_FILE``, ``LANCE_LOG_TS_PRECISION``): the same program with
``lance`` and with ``lancelet`` behaves the same."""

from __future__ import annotations

import logging
import os
import re
import subprocess
import sys
from unittest import mock

import pytest

import lancelet
import lancelet.log

lance = pytest.importorskip("lance")
pytest.importorskip("lance.log")  # makes lance.log an attribute of lance

LIBS = [pytest.param(lance, id="pylance"), pytest.param(lancelet, id="lancelet")]


@pytest.fixture(autouse=True)
def _no_handlers_left():
    yield
    for lib in (lance, lancelet):
        while lib.log.LOGGER.handlers:
            lib.log.LOGGER.handlers.pop().close()


@pytest.mark.parametrize(
    "value", ["DEBUG", "info", "WARNING", "DEBUG,INFO", "", "lance-core=debug,WARNING", "DEBUG,x=WARNING", "trace", "a=b"]
)
def test_get_log_level_reads_lance_log_like_pylance(value):
    with mock.patch.dict(os.environ, {"LANCE_LOG": value}):
        assert lancelet.log.get_log_level() == lance.log.get_log_level()
    assert lancelet.log.ENV_NAME_PYLANCE_LOGGING_LEVEL == lance.log.ENV_NAME_PYLANCE_LOGGING_LEVEL


@pytest.mark.parametrize("lib", LIBS)
def test_set_logger(lib, tmp_path, caplog):
    path = str(tmp_path / "app.log")
    lib.log.set_logger(file_path=path, level=logging.DEBUG, format_string="%(levelname)s: %(message)s")
    logger = lib.log.LOGGER
    assert logger.level == logging.DEBUG
    (h,) = logger.handlers
    assert isinstance(h, logging.FileHandler) and h.baseFilename == path
    assert h.formatter._fmt == "%(levelname)s: %(message)s"
    with caplog.at_level(logging.INFO):
        logger.info("hello")
    assert "hello" in caplog.text
    custom = logging.StreamHandler()
    lib.log.set_logger(log_handler=custom)
    assert custom in lib.log.LOGGER.handlers


def _run(lib, env, rows=10):
    code = f"import {lib.__name__} as l, pyarrow as pa; l.write_dataset(pa.table({{'x': range({rows})}}), 'memory://t')"
    return subprocess.run([sys.executable, "-c", code], capture_output=True, env={**env, "PATH": os.environ["PATH"]})


@pytest.mark.parametrize("lib", LIBS)
def test_lance_log_file_gets_the_records_not_stderr(lib, tmp_path):
    path = tmp_path / "logs" / "nested" / "rust.log"
    r = _run(lib, {"LANCE_LOG": "debug", "LANCE_LOG_FILE": str(path)})
    assert r.returncode == 0, r.stderr.decode()
    assert path.read_text().strip()
    assert "DEBUG" not in r.stderr.decode()


@pytest.mark.parametrize("lib", LIBS)
def test_an_unwritable_log_file_falls_back_to_stderr(lib):
    bad = "/proc/no/such/dir/lance.log"
    r = _run(lib, {"LANCE_LOG": "info", "LANCE_LOG_FILE": bad})
    assert r.returncode == 0, r.stderr.decode()
    assert not os.path.exists(bad)
    assert r.stderr.decode().strip()


@pytest.mark.parametrize("lib", LIBS)
@pytest.mark.parametrize("precision,digits", [("ns", r"\.\d{9}"), ("us", r"\.\d{6}"), ("ms", r"\.\d{3}"), ("s", "")])
def test_timestamp_precision(lib, precision, digits):
    r = _run(lib, {"LANCE_LOG": "debug", "LANCE_LOG_TS_PRECISION": precision})
    first = r.stderr.decode().splitlines()[0]
    assert re.match(r"^\[\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d" + digits + "Z", first), first


def test_a_commit_is_logged_at_info_and_nothing_without_lance_log(tmp_path):
    r = _run(lancelet, {"LANCE_LOG": "info"})
    assert re.search(r"INFO +lancelet::commit\] committed version 1 of ", r.stderr.decode())
    assert _run(lancelet, {"LANCE_LOG": "lancelet=warn,info"}).stderr.decode().strip() == ""
    assert _run(lancelet, {}).stderr.decode().strip() == ""
