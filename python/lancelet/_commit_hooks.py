"""What happens around every commit lancelet makes from Python, as pylance does it around
its commits: the user's ``commit_lock`` and automatic cleanup of old versions.

``commit_lock`` (given to :func:`lancelet.dataset`, :func:`lancelet.write_dataset` or
``LanceDataset.commit``) is a callable ``lock(version) -> context manager``: it is called
with the version about to be committed and the commit runs inside the context. An
exception from the call or from ``__enter__`` stops the commit before anything is written
(not even data files); one from ``__exit__`` comes after the commit.

Automatic cleanup is asked for by the dataset config (pylance's keys)::

    lance.auto_cleanup.interval         # clean up after commits whose version is a multiple
                                        # of this (0: after every commit)
    lance.auto_cleanup.older_than       # a duration such as "3600s", "14days", "1h 30m"
    lance.auto_cleanup.retain_versions  # optional: always keep this many newest versions

After such a commit, versions older than ``older_than`` (and beyond the newest
``retain_versions``) are removed, except the new version and the one it was committed on.
A bad value or a tagged version in the way is logged as a warning and the commit stands,
as in pylance.

In pylance both live in the Rust commit path. lancelet's Rust commit path knows neither,
so the Python calls that commit apply them (:func:`commits` marks them).
"""

from __future__ import annotations

import datetime as _dt
import functools
import logging
import re
import threading
from typing import Any, Callable, Dict, List, Optional, Tuple, TypeVar

_LOG = logging.getLogger("lancelet")

INTERVAL = "lance.auto_cleanup.interval"
OLDER_THAN = "lance.auto_cleanup.older_than"
RETAIN_VERSIONS = "lance.auto_cleanup.retain_versions"

#: ``lock(version) -> context manager``, as pylance's ``lance.commit.CommitLock``.
CommitLock = Callable[[int], Any]

T = TypeVar("T")

_local = threading.local()


def check_lock(lock: Any) -> Optional[CommitLock]:
    """``commit_lock`` checked to be callable (or None), as pylance checks it."""
    if lock is not None and not callable(lock):
        raise TypeError(f"commit_lock must be a function, got {type(lock)}")
    return lock


def auto_cleanup_config(options: Any, defaults: bool = False) -> Dict[str, str]:
    """The config entries of ``{"interval": n, "older_than_seconds": s}`` (with
    ``defaults``, as ``write_dataset(auto_cleanup_options=...)`` takes it, a missing key
    is pylance's default: every 20 versions, older than 14 days).

    >>> auto_cleanup_config({"interval": 5, "older_than_seconds": 60})
    {'lance.auto_cleanup.interval': '5', 'lance.auto_cleanup.older_than': '60s'}
    """
    from .errors import InvalidArgumentError

    keys = {"interval", "older_than_seconds"}
    if not isinstance(options, dict) or not (set(options) <= keys if defaults else set(options) >= keys):
        raise InvalidArgumentError(
            f'auto_cleanup options are a dict {{"interval": int, "older_than_seconds": int}}, got {options!r}'
        )
    interval = options.get("interval", 20)
    seconds = options.get("older_than_seconds")
    for name, v in (("interval", interval), ("older_than_seconds", 0 if seconds is None else seconds)):
        if isinstance(v, bool) or not isinstance(v, int) or v < 0:
            raise InvalidArgumentError(f"auto_cleanup {name} must be a non-negative int, got {v!r}")
    return {INTERVAL: str(interval), OLDER_THAN: "14days" if seconds is None else f"{seconds}s"}


# Units of the durations pylance stores (the `humantime` crate's), in seconds.
_UNITS = {
    **dict.fromkeys(("nsec", "ns"), 1e-9),
    **dict.fromkeys(("usec", "us"), 1e-6),
    **dict.fromkeys(("msec", "ms"), 1e-3),
    **dict.fromkeys(("seconds", "second", "sec", "s"), 1.0),
    **dict.fromkeys(("minutes", "minute", "min", "m"), 60.0),
    **dict.fromkeys(("hours", "hour", "hr", "h"), 3600.0),
    **dict.fromkeys(("days", "day", "d"), 86400.0),
    **dict.fromkeys(("weeks", "week", "w"), 604800.0),
    **dict.fromkeys(("months", "month", "M"), 2630016.0),
    **dict.fromkeys(("years", "year", "y"), 31557600.0),
}
_PART = re.compile(r"\s*(\d+)\s*([A-Za-z]+)")


def parse_duration(text: str) -> _dt.timedelta:
    """A duration as pylance stores it (``"3600s"``, ``"14days"``, ``"1h 30m"``).

    >>> parse_duration("1h 30m")
    datetime.timedelta(seconds=5400)
    """
    pos, total, parts = 0, 0.0, 0
    text = text.strip()
    while pos < len(text):
        m = _PART.match(text, pos)
        if m is None or m.group(2) not in _UNITS:
            raise ValueError(f"cannot read {text!r} as a duration")
        total += int(m.group(1)) * _UNITS[m.group(2)]
        pos, parts = m.end(), parts + 1
    if not parts:
        raise ValueError(f"cannot read {text!r} as a duration")
    return _dt.timedelta(seconds=total)


def _cleanup_args(config: Dict[str, str], version: int, previous: int) -> Optional[Dict[str, Any]]:
    """``cleanup_old_versions`` arguments for the config after a commit of versions
    ``previous + 1 .. version``; None when no cleanup is due. Raises ValueError on a bad
    config value."""
    raw = config.get(INTERVAL)
    if raw is None:
        return None
    if not raw.isdigit():
        raise ValueError(f"cannot read {INTERVAL}={raw!r} as a non-negative integer")
    interval = int(raw)
    if interval and not any(v % interval == 0 for v in range(previous + 1, version + 1)):
        return None
    older_than = parse_duration(config[OLDER_THAN]) if OLDER_THAN in config else None
    retain = None
    if RETAIN_VERSIONS in config:
        if not config[RETAIN_VERSIONS].isdigit():
            raise ValueError(f"cannot read {RETAIN_VERSIONS}={config[RETAIN_VERSIONS]!r} as an integer")
        retain = int(config[RETAIN_VERSIONS]) or None
    # The version the commit was made on stays, as in pylance (it is the writer's own).
    return {"older_than": older_than, "retain_versions": retain, "versions": list(range(1, previous))}


def run_auto_cleanup(ds: Any, previous: int) -> None:
    """Applies the dataset config's automatic cleanup after ``ds`` (a ``LanceDataset``, or
    a native dataset, at the version just committed) was committed on version ``previous``."""
    try:
        native = getattr(ds, "_native", ds)
        args = _cleanup_args(dict(native.config()), native.version(), previous)
        if args is None or not args["versions"]:
            return
        if native.latest_version() != native.version():
            native = native.checkout(None)
        older_than = args["older_than"]
        native.cleanup_old_versions(
            older_than=None if older_than is None else older_than.total_seconds(),
            retain_versions=args["retain_versions"],
            delete_unverified=False,
            error_if_tagged_old_versions=True,
            delete_rate_limit=None,
            versions=args["versions"],
            delete_concurrency=None,
        )
    except Exception as e:  # the commit stands, as in pylance
        _LOG.warning("Auto cleanup failed after a successful commit: %s", e)


def _depth() -> int:
    return getattr(_local, "depth", 0)


def around(
    lock: Optional[CommitLock],
    latest: Callable[[], int],
    call: Callable[[], T],
    committed: Callable[[T], Optional[Tuple[Any, int]]],
) -> T:
    """Runs ``call`` (which commits) inside ``lock(latest() + 1)`` when there is a lock,
    then the automatic cleanup of ``committed(result)``: ``(dataset at the new version,
    version it was committed on)`` or None when nothing was committed. Calls nested inside
    another one (e.g. ``insert`` through ``write_dataset``) run bare."""
    if _depth():
        return call()
    _local.depth = 1
    try:
        if lock is None:
            out = call()
        else:
            with lock(latest() + 1):
                out = call()
    finally:
        _local.depth = 0
    done = committed(out)
    if done is not None:
        run_auto_cleanup(*done)
    return out


def commits(get_ds: Callable[[Any], Any] = lambda self: self) -> Callable[[Callable[..., T]], Callable[..., T]]:
    """Marks a method that commits on the dataset ``get_ds(self)`` and moves it to the new
    version: the dataset's commit lock and automatic cleanup apply around it."""

    def wrap(method: Callable[..., T]) -> Callable[..., T]:
        @functools.wraps(method)
        def run(self: Any, *args: Any, **kwargs: Any) -> T:
            ds = get_ds(self)
            if _depth():
                return method(self, *args, **kwargs)
            start: List[int] = []

            def latest() -> int:
                start.append(ds._native.latest_version())
                return start[0]

            def committed(_: Any) -> Optional[Tuple[Any, int]]:
                previous = start[0] if start else None
                now = ds._native.version()
                if previous is None:
                    return (ds, now - 1) if now != before else None
                return (ds, previous) if now > previous else None

            before = ds._native.version()
            return around(getattr(ds, "_commit_lock", None), latest, lambda: method(self, *args, **kwargs), committed)

        return run

    return wrap
