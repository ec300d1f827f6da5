"""Logging, as pylance's ``lance.log``.

Two streams of records:

- The Rust core's records. By default its warnings and errors (automatic cleanup failing
  after a commit, ...) go to Python's :mod:`logging` under the ``lancelet`` logger. With the
  ``LANCE_LOG`` environment variable set before ``import lancelet`` (as for pylance:
  ``LANCE_LOG=debug``, or ``LANCE_LOG=info,lancelet_table=debug``), they go as text lines
  to standard error instead, or to the file ``LANCE_LOG_FILE`` names (its folders are
  created); ``LANCE_LOG_TS_PRECISION`` (``s``, ``ms``, ``us``, ``ns``) sets the digits of
  each line's UTC timestamp. Every commit logs its version at ``info``.
- :data:`LOGGER`, a Python logger for the application around lancelet, with pylance's
  :func:`set_logger` to send it to a file or any handler. Its level starts at the first
  bare level of ``LANCE_LOG`` (``INFO`` when there is none).

>>> from lancelet.log import LOGGER, set_logger  # doctest: +SKIP
>>> set_logger(file_path="lancelet.log", level=logging.DEBUG)  # doctest: +SKIP
"""

from __future__ import annotations

import logging
import os
from typing import Optional

__all__ = ["ENV_NAME_PYLANCE_LOGGING_LEVEL", "LOGGER", "get_log_level", "set_logger"]

#: The environment variable holding the log level (pylance's name for it).
ENV_NAME_PYLANCE_LOGGING_LEVEL = "LANCE_LOG"

_DEFAULT_FORMAT = "%(asctime)s %(name)s [%(levelname)s] %(filename)s:%(lineno)d %(funcName)s : %(message)s"


def get_log_level() -> str:
    """The Python level name for ``LANCE_LOG``: its first entry without a ``target=``
    (Rust's ``trace`` read as ``DEBUG``), ``INFO`` when it is unset, empty or has none.

    >>> get_log_level()  # doctest: +SKIP
    'INFO'
    """
    value = os.environ.get(ENV_NAME_PYLANCE_LOGGING_LEVEL, "").upper()
    bare = [e.strip() for e in value.split(",") if e.strip() and "=" not in e]
    if not bare:
        return "INFO"
    return "DEBUG" if bare[0] == "TRACE" else bare[0]


def _level_number(name: str) -> int:
    level = logging.getLevelName(name)
    return level if isinstance(level, int) else logging.INFO


LOGGER = logging.getLogger("lancelet")
LOGGER.setLevel(_level_number(get_log_level()))


def set_logger(
    file_path: Optional[str] = "lancelet.log",
    name: str = "lancelet",
    level: int = logging.INFO,
    format_string: Optional[str] = None,
    log_handler: Optional[logging.Handler] = None,
) -> logging.Logger:
    """Points :data:`LOGGER` (the logger ``name``) at ``log_handler``, or at a file handler
    on ``file_path`` when none is given, at ``level`` and with ``format_string`` (pylance's
    format by default). Returns the logger.

    >>> set_logger(log_handler=logging.StreamHandler())  # doctest: +SKIP
    """
    global LOGGER
    LOGGER = logging.getLogger(name)
    LOGGER.setLevel(level)
    if log_handler is None:
        if file_path is None:
            raise ValueError("set_logger needs a file_path or a log_handler")
        log_handler = logging.FileHandler(file_path)
    log_handler.setLevel(level)
    log_handler.setFormatter(logging.Formatter(format_string or _DEFAULT_FORMAT))
    LOGGER.addHandler(log_handler)
    return LOGGER
