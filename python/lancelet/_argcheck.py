"""Argument checks shared by the dataset, scanner, fragment and optimize modules.

Each helper takes what a pylance-style call was given and returns it in the form the
native layer takes (a checked int, a list of names, a native URI...), or raises a typed
error from :mod:`lancelet.errors` (``InvalidArgumentError``, ``RowIndexError``...). None of
them does I/O. For example, ``_names(["a", "a"])`` raises ``InvalidArgumentError``.
"""

from __future__ import annotations

import datetime as _dt
import operator
import os
from typing import Any, Dict, Iterable, List, Optional, Tuple, Union

import pyarrow as pa

from . import _expressions, _paths
from . import blob as _blob
from ._handle import DatasetHandle
from .errors import InvalidArgumentError, RowIndexError, UnsupportedFeatureError

# Scanner options pylance accepts that only tune its own execution; accepted and ignored.
_IGNORED_SCAN_OPTIONS = {
    "batch_size_bytes",
    "batch_readahead",
    "fragment_readahead",
    "io_buffer_size",
    "late_materialization",
    "prefilter",
    "fast_search",
    "disable_scoring_autoprojection",
}
# Scanner options taken from **kwargs and handled (pylance names them as keyword arguments).
_HANDLED_SCAN_KWARGS = {"use_scalar_index", "order_by", "blob_handling", "strict_batch_size", "fusion"}
# Scanner options for features lancelet does not have yet.
_UNSUPPORTED_SCAN_OPTIONS = {
    "index_segments",
    "include_deleted_rows",
    "row_addr_allowlist",
    "row_addr_blocklist",
}

#: What ``columns=`` takes: names, or ``{output name: SQL expression}``.
_Columns = Optional[Union[List[str], Dict[str, str]]]

#: Largest value of the native layer's unsigned 64-bit counts (limits, offsets, versions).
_U64_MAX = 2**64 - 1

#: Version numbers are signed 64-bit in the native layer (and in pylance's manifests).
_MAX_VERSION = 2**63 - 1


def _as_int(value: Any) -> Any:
    """``value`` as a Python int when it is an integer of another type (numpy's); else unchanged."""
    if isinstance(value, (int, str, float)) or value is None or not hasattr(value, "__index__"):
        return value
    try:
        return operator.index(value)
    except TypeError:
        return value


def _version_in_range(version: int) -> int:
    if version > _MAX_VERSION:
        raise InvalidArgumentError(f"version {version} is out of range: version numbers are at most 2**63 - 1")
    return version


def _check_version(version: Any) -> Any:
    if version is None or isinstance(version, str):
        return version
    version = _as_int(version)
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise InvalidArgumentError(f"version must be a positive integer or a tag name, got {version!r}")
    return _version_in_range(version)


def _check_int_version(version: Any) -> int:
    version = _as_int(version)
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise InvalidArgumentError(f"version must be a positive integer, got {version!r}")
    return _version_in_range(version)


def _check_delta_version(version: Any, name: str) -> int:
    if isinstance(version, bool) or not isinstance(version, int) or not 0 <= version <= _U64_MAX:
        raise InvalidArgumentError(f"{name} must be a version number, got {version!r}")
    return version


def _positive_int(name: str, value: Any) -> Optional[int]:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise InvalidArgumentError(f"{name} must be a positive integer, got {value!r}")
    return value


#: One past the largest count, seed or epoch the native side takes (64-bit).
U64 = 2**64


def _int_in(name: str, value: Any, low: int, high: int = U64) -> int:
    """``value``, an int in ``[low, high)`` (bools refused)."""
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value < high:
        raise InvalidArgumentError(f"{name} must be an int in {low}..{high - 1}, got {value!r}")
    return value


def _rank(rank: Any, world_size: Any, names: Tuple[str, str] = ("rank", "world_size")) -> Tuple[int, int]:
    """``(rank, world_size)`` checked: a positive world size, a rank below it."""
    world_size = _int_in(names[1], world_size, 1)
    return _int_in(names[0], rank, 0, world_size), world_size


def _native_uri(uri: Any, storage_options: Optional[Dict[str, str]]) -> str:
    """The dataset URI as the native layer takes it: a local path, ``file://``,
    ``memory://name`` or ``s3://bucket/prefix`` (checked there, with the options)."""
    if isinstance(uri, DatasetHandle):
        uri = uri.uri
    if not isinstance(uri, (str, os.PathLike)):
        raise TypeError(f"a dataset URI is a string or path, got {type(uri).__name__}")
    uri = os.fspath(uri) if isinstance(uri, os.PathLike) else str(uri)
    if isinstance(uri, bytes):
        raise TypeError("a dataset URI is a string or path, got bytes")
    _storage_options(storage_options)  # checked; options a store does not use are dropped later
    return _paths.native_path(uri)


def _storage_options(options: Optional[Dict[str, str]]) -> Optional[Dict[str, str]]:
    """``storage_options`` checked to be string keys and values (``None`` if empty). They
    are kept whole whatever the dataset's root: as in pylance, unprefixed keys configure
    every object store the dataset touches (its base paths on S3 included, where
    ``base_{id}.{key}`` overrides them) and local or in-memory stores ignore them."""
    if not options:
        return None
    if not isinstance(options, dict):
        raise InvalidArgumentError(f"storage_options must be a dict, got {type(options).__name__}")
    out = {}
    for k, v in options.items():
        if not isinstance(k, str):
            raise InvalidArgumentError(f"storage option names are strings, got {k!r}")
        out[k] = v if isinstance(v, str) else (str(v).lower() if isinstance(v, bool) else str(v))
    return out or None


#: ``write_dataset`` keyword arguments about base paths (see ``_branches.write_with_bases``).
BASE_WRITE_OPTIONS = {"initial_bases", "target_bases", "target_all_bases", "base_store_params"}


def _check_write_args(
    mode: str,
    data_storage_version: Optional[str],
    max_rows_per_file: Any,
    max_rows_per_group: Any,
    max_bytes_per_file: Any,
    kwargs: Dict[str, Any],
    caller: str,
) -> None:
    """Checks the arguments :func:`write_dataset` and ``write_fragments`` share."""
    unknown = set(kwargs) - {
        "data_cache_bytes",
        "max_page_bytes",
        "commit_lock",
        "auto_cleanup_options",
        "enable_stable_row_ids",
        "use_legacy_format",
        *_blob.WRITE_OPTIONS,
        *BASE_WRITE_OPTIONS,
    }
    if unknown:
        raise TypeError(f"{caller}() got unexpected keyword arguments {sorted(unknown)}")
    if kwargs.get("enable_stable_row_ids") and caller != "write_dataset":
        raise UnsupportedFeatureError(
            f"{caller}() cannot enable stable row ids; create the dataset with "
            "write_dataset(..., enable_stable_row_ids=True) first"
        )
    if mode not in ("create", "append", "overwrite"):
        raise InvalidArgumentError(f'mode must be "create", "append" or "overwrite", got {mode!r}')
    if data_storage_version not in (None, "2.0", "2.1", "2.2", "stable"):
        if data_storage_version in ("2.3", "next", "legacy", "0.1"):
            raise UnsupportedFeatureError(
                f'lancelet writes data_storage_version "2.0", "2.1" and "2.2" ("stable"), not {data_storage_version!r}'
            )
        raise InvalidArgumentError(f"unknown data_storage_version {data_storage_version!r}")
    for name, value in (
        ("max_rows_per_file", max_rows_per_file),
        ("max_rows_per_group", max_rows_per_group),
        ("max_bytes_per_file", max_bytes_per_file),
    ):
        if isinstance(value, bool) or not isinstance(value, int) or not 0 < value <= _U64_MAX:
            raise InvalidArgumentError(f"{name} must be a positive integer below 2**64, got {value!r}")


def _retry_args(retries: int, timeout: Optional[_dt.timedelta]) -> Tuple[int, Optional[float]]:
    """``(conflict_retries, retry_timeout in seconds)`` checked, for the native writes that
    run again on the newest version after a retryable conflict (as pylance does)."""
    if isinstance(retries, bool) or not isinstance(retries, int) or retries < 0:
        raise InvalidArgumentError(f"conflict_retries takes a non-negative integer, got {retries!r}")
    if timeout is not None and not isinstance(timeout, _dt.timedelta):
        raise InvalidArgumentError(f"retry_timeout takes a datetime.timedelta, got {type(timeout).__name__}")
    return min(retries, 2**32 - 1), None if timeout is None else max(timeout.total_seconds(), 0.0)


def _filter(filter: Any) -> Optional[str]:
    if filter is None or isinstance(filter, str):
        return filter
    if _expressions.is_expression(filter):
        return _expressions.to_sql(filter)  # pc.field("a") > 5, as pylance takes
    if type(filter).__module__.startswith("pyarrow"):
        # pylance also takes pyarrow.compute expressions.
        raise UnsupportedFeatureError(f"filters must be SQL strings, got {type(filter).__name__}")
    raise InvalidArgumentError(f"filters must be SQL strings, got {type(filter).__name__}")


def _exprs(columns: Dict[str, Any]) -> List[Tuple[str, str]]:
    """``{name: SQL expression}`` as a checked list of pairs."""
    items = list(columns.items())
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in items):
        raise InvalidArgumentError("columns as a dict maps output names to SQL expressions (strings)")
    return items


def _names(columns: Any) -> Optional[List[str]]:
    if columns is None:
        return None
    if isinstance(columns, (str, bytes)) or not isinstance(columns, Iterable):
        raise InvalidArgumentError(f"columns must be a list of column names, got {type(columns).__name__}")
    names = list(columns)
    seen = set()
    for c in names:
        if not isinstance(c, str):
            raise InvalidArgumentError(f"columns must be a list of column names, got {c!r} in it")
        if c in seen:
            raise InvalidArgumentError(f"column {c!r} is selected twice")
        seen.add(c)
    return names


def _indices(indices: Any, what: str = "row index", bound: int = 2**63) -> List[int]:
    """Row indices (``what``) as a list of ints in ``[0, bound)``."""
    if isinstance(indices, (pa.Array, pa.ChunkedArray)):
        indices = indices.to_pylist()
    elif hasattr(indices, "tolist"):
        indices = indices.tolist()
    if isinstance(indices, (str, bytes, dict)) or not isinstance(indices, Iterable):
        raise TypeError(f"indices must be a list of integers, got {type(indices).__name__}")
    out = []
    for i in indices:
        i = _as_int(i)  # numpy integers too
        if isinstance(i, bool) or not isinstance(i, int):
            raise InvalidArgumentError(f"row indices must be integers, got {i!r}")
        if i < 0:
            raise RowIndexError(f"{what} {i} is negative")
        if i >= bound:
            raise RowIndexError(f"{what} {i} is out of range")
        out.append(i)
    return out


def _alterations(alterations: Tuple[Any, ...]) -> List[Tuple[str, Optional[str], Optional[bool], Optional[pa.Schema]]]:
    """``alter_columns``' dicts as ``(path, new name, nullable, new type as a one-field
    schema)`` tuples, each checked."""
    if not alterations:
        raise InvalidArgumentError("alter_columns needs at least one alteration")
    out = []
    for a in alterations:
        if not isinstance(a, dict) or not isinstance(a.get("path"), str):
            raise InvalidArgumentError(f'an alteration is a dict with a "path", got {a!r}')
        unknown = set(a) - {"path", "name", "nullable", "data_type"}
        if unknown:
            raise InvalidArgumentError(f"unknown alteration keys {sorted(unknown)}")
        data_type = a.get("data_type")
        if data_type is not None and not isinstance(data_type, pa.DataType):
            raise TypeError(f"data_type must be a pyarrow.DataType, got {type(data_type).__name__}")
        name, nullable = a.get("name"), a.get("nullable")
        if name is not None and not isinstance(name, str):
            raise InvalidArgumentError(f"a new column name is a string, got {name!r}")
        if nullable is not None and not isinstance(nullable, bool):
            raise InvalidArgumentError(f"nullable is True or False, got {nullable!r}")
        out.append((a["path"], name, nullable, None if data_type is None else pa.schema([pa.field("type", data_type)])))
    return out


def _parse_time(s: Optional[str]) -> Optional[_dt.datetime]:
    """An RFC 3339 time as written in tag files (nanoseconds cut to microseconds)."""
    if not s:
        return None
    body = s[:-1] + "+00:00" if s.endswith("Z") else s
    if "." in body:
        head, rest = body.split(".", 1)
        digits = "".join(c for c in rest if c.isdigit())
        body = head + "." + digits[:6].ljust(6, "0") + rest[len(digits) :]
    try:
        return _dt.datetime.fromisoformat(body)
    except ValueError:
        return None


#: pylance's config keys of automatic cleanup (interval, older_than); the dataset crate
#: applies them after every commit.
AUTO_CLEANUP_KEYS = ("lance.auto_cleanup.interval", "lance.auto_cleanup.older_than")


def check_limit_offset(limit: Any, offset: Any) -> None:
    """Refuses a scan's ``limit`` or ``offset`` that is not a non-negative int (``None``
    means no limit / no offset), with pylance's message.

    >>> check_limit_offset(10, None)
    >>> check_limit_offset(None, -1)
    Traceback (most recent call last):
    ...
    lancelet.errors.InvalidArgumentError: Offset must be non-negative (offset is an int >= 0 or None), got -1
    """
    for name, v in (("limit", limit), ("offset", offset)):
        if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < 0):
            raise InvalidArgumentError(
                f"{name.capitalize()} must be non-negative ({name} is an int >= 0 or None), got {v!r}"
            )


def auto_cleanup_config(options: Any, defaults: bool = False) -> Dict[str, Optional[str]]:
    """The config entries of ``{"interval": n, "older_than_seconds": s}`` (with
    ``defaults``, as ``write_dataset(auto_cleanup_options=...)`` takes it, a missing key
    is pylance's default: every 20 versions, older than 14 days).

    >>> auto_cleanup_config({"interval": 5, "older_than_seconds": 60})
    {'lance.auto_cleanup.interval': '5', 'lance.auto_cleanup.older_than': '60s'}
    """
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
    return {AUTO_CLEANUP_KEYS[0]: str(interval), AUTO_CLEANUP_KEYS[1]: "14days" if seconds is None else f"{seconds}s"}
