"""Maintenance that rewrites a dataset without changing its rows: ``ds.optimize``
(:class:`DatasetOptimizer`: ``compact_files``, ``optimize_indices``), the checks of
``ds.cleanup_old_versions``, and ``ds.validate`` (:class:`ValidationReport`), with what
they return.

>>> ds.optimize.compact_files(target_rows_per_fragment=100_000)  # doctest: +SKIP
CompactionMetrics(fragments_removed=12, fragments_added=1, files_removed=12, files_added=1)
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Tuple

from . import _argcheck
from ._argcheck import _positive_int
from ._counters import _Counters
from ._native import index as _native_index
from .errors import InvalidArgumentError

if TYPE_CHECKING:  # pragma: no cover
    from .dataset import LanceDataset

__all__ = ["CleanupStats", "CompactionMetrics", "DatasetOptimizer", "ValidationReport"]


class CleanupStats(_Counters):
    """What :meth:`LanceDataset.cleanup_old_versions` removed (pylance's names)."""

    __slots__ = (
        "bytes_removed",
        "old_versions",
        "data_files_removed",
        "transaction_files_removed",
        "index_files_removed",
        "deletion_files_removed",
        "failed_deletes",
    )


class CompactionMetrics(_Counters):
    """What :meth:`DatasetOptimizer.compact_files` did (pylance's names)."""

    __slots__ = ("fragments_removed", "fragments_added", "files_removed", "files_added")


@dataclass(frozen=True)
class ValidationReport:
    """What :meth:`LanceDataset.validate` found.

    ``problems`` are ``(path, reason)`` pairs, sorted by path: a missing or damaged file,
    a file that disagrees with the manifest, a tag or branch pointing at a version that
    does not exist. ``orphans`` are ``(path, bytes)`` of files no version names (what
    cleanup would eventually remove; listed only when every version is checked); they are
    not problems. ``ok`` is true when there are no problems; ``str()`` gives one line per
    problem and a summary, as ``python -m lancelet validate`` prints it.
    """

    versions: int
    data_files: int
    deletion_files: int
    index_files: int
    checksummed_files: int
    bytes_verified: int
    problems: List[Tuple[str, str]] = field(default_factory=list)
    orphans: List[Tuple[str, int]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Whether nothing is wrong."""
        return not self.problems

    def __str__(self) -> str:
        lines = [f"{path}: {reason}" for path, reason in self.problems]
        lines += [f"orphan {path} ({size} bytes)" for path, size in self.orphans]
        lines.append(
            f"{'OK' if self.ok else 'DAMAGED'}: {len(self.problems)} problem(s) in {self.versions} version(s), "
            f"{self.data_files} data, {self.deletion_files} deletion and {self.index_files} index file(s) "
            f"({self.checksummed_files} with checksums, {self.bytes_verified} bytes verified); "
            f"{len(self.orphans)} orphan file(s) of {sum(s for _, s in self.orphans)} bytes"
        )
        return "\n".join(lines)


def validate_dataset(ds: "LanceDataset", deep: bool, version: Optional[int]) -> ValidationReport:
    """``ds.validate(...)`` (see there): the arguments checked, one native call."""
    out = ds._native.validate(version=_positive_int("version", version), deep=bool(deep))
    return ValidationReport(**out)


class DatasetOptimizer:
    """``dataset.optimize``: maintenance that rewrites data without changing the rows."""

    def __init__(self, ds: "LanceDataset"):
        self._ds = ds

    def enable_auto_cleanup(self, auto_cleanup_config: Dict[str, int], **kwargs: Any) -> None:
        """Turns on automatic cleanup (an UpdateConfig commit): after every commit whose
        version is a multiple of ``interval``, versions older than ``older_than_seconds``
        are removed, as pylance does (same config keys, so either library applies it).

        >>> ds.optimize.enable_auto_cleanup({"interval": 20, "older_than_seconds": 14 * 86400})  # doctest: +SKIP
        """
        self._ds.update_config(_argcheck.auto_cleanup_config(auto_cleanup_config))

    def disable_auto_cleanup(self, **kwargs: Any) -> None:
        """Turns automatic cleanup off (removes its config keys in an UpdateConfig commit).

        >>> ds.optimize.disable_auto_cleanup()  # doctest: +SKIP
        """
        self._ds.delete_config_keys(list(_argcheck.AUTO_CLEANUP_KEYS))

    def optimize_indices(
        self,
        num_indices_to_merge: Optional[int] = None,
        index_names: Optional[List[str]] = None,
        retrain: bool = False,
        **kwargs: Any,
    ) -> None:
        """Brings scalar indexes up to date with fragments added since they were built:
        ``num_indices_to_merge=0`` adds a delta segment per index over the unindexed
        fragments; otherwise each index is rebuilt as one segment over every fragment
        (``retrain`` is accepted: scalar indexes have nothing to train beyond that).

        >>> ds.optimize.optimize_indices(num_indices_to_merge=0)  # doctest: +SKIP
        """
        del retrain, kwargs
        if num_indices_to_merge is not None and (
            isinstance(num_indices_to_merge, bool)
            or not isinstance(num_indices_to_merge, int)
            or num_indices_to_merge < 0
        ):
            raise InvalidArgumentError(
                f"num_indices_to_merge must be a non-negative integer, got {num_indices_to_merge!r}"
            )
        if index_names is not None:
            index_names = list(index_names)
        self._ds._move_to(_native_index.optimize_indices(self._ds._native, num_indices_to_merge, index_names))

    def compact_files(
        self,
        *,
        target_rows_per_fragment: Optional[int] = None,
        max_rows_per_group: Optional[int] = None,
        max_bytes_per_file: Optional[int] = None,
        materialize_deletions: Optional[bool] = None,
        materialize_deletions_threshold: Optional[float] = None,
        defer_index_remap: Optional[bool] = None,
        num_threads: Optional[int] = None,
        batch_size: Optional[int] = None,
        **kwargs: Any,
    ) -> CompactionMetrics:
        """Merges small adjacent fragments and drops deleted rows, as a new version (a
        Rewrite transaction) keeping the rows and their order.

        A fragment is rewritten when it has fewer than ``target_rows_per_fragment`` live rows
        (default 1024 * 1024) and a neighbour to merge with, or when more than
        ``materialize_deletions_threshold`` (default 0.1) of its rows are deleted and
        ``materialize_deletions`` (default True). Defaults may also come from the table
        config keys ``lance.compaction.<option>``. A concurrent delete on the rewritten
        fragments makes the commit fail with ``CommitConflictError``; appends do not.
        ``max_rows_per_group``, ``max_bytes_per_file``, ``defer_index_remap`` and
        ``num_threads`` are accepted for pylance compatibility.
        """
        del max_rows_per_group, max_bytes_per_file, defer_index_remap, num_threads
        unknown = set(kwargs) - {
            "compaction_mode",
            "binary_copy_read_batch_bytes",
            "max_source_fragments",
            "max_source_rows",
            "max_source_bytes",
            "excluded_fragment_ids",
            "data_storage_version",
        }
        if unknown:
            raise InvalidArgumentError(f"unknown compact_files options {sorted(unknown)}")
        # Only the caller's values go down: the native side fills the rest from the
        # `lance.compaction.*` config keys (checked as pylance checks them), else defaults.
        target = _positive_int("target_rows_per_fragment", target_rows_per_fragment)
        batch_size = _positive_int("batch_size", batch_size)
        threshold = materialize_deletions_threshold
        if threshold is not None and (isinstance(threshold, bool) or not 0 <= float(threshold) <= 1):
            raise InvalidArgumentError(f"materialize_deletions_threshold must be in [0, 1], got {threshold!r}")
        materialize = materialize_deletions
        native, counts = self._ds._native.compact_files(
            target_rows_per_fragment=target,
            materialize_deletions=None if materialize is None else bool(materialize),
            materialize_deletions_threshold=None if threshold is None else float(threshold),
            batch_size=batch_size,
        )
        self._ds._move_to(native)
        return CompactionMetrics(**counts)


def cleanup_versions(
    ds: "LanceDataset",
    older_than: Optional[_dt.timedelta],
    retain_versions: Optional[int],
    *,
    delete_unverified: bool,
    error_if_tagged_old_versions: bool,
    delete_rate_limit: Optional[int],
    versions: Optional[List[int]],
    delete_concurrency: Optional[int],
) -> CleanupStats:
    """``ds.cleanup_old_versions(...)`` (see there): the arguments checked, one native call."""
    if older_than is not None and not isinstance(older_than, _dt.timedelta):
        raise InvalidArgumentError(f"older_than must be a datetime.timedelta, got {type(older_than).__name__}")
    if versions is not None:
        if isinstance(versions, (str, bytes)) or not all(
            isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in versions
        ):
            raise InvalidArgumentError(f"versions must be a list of version numbers, got {versions!r}")
        versions = list(versions)
    counts = ds._native.cleanup_old_versions(
        {
            "older_than": None if older_than is None else older_than.total_seconds(),
            "retain_versions": _positive_int("retain_versions", retain_versions),
            "delete_unverified": bool(delete_unverified),
            "error_if_tagged_old_versions": bool(error_if_tagged_old_versions),
            "delete_rate_limit": _positive_int("delete_rate_limit", delete_rate_limit),
            "versions": versions,
            "delete_concurrency": _positive_int("delete_concurrency", delete_concurrency),
        }
    )
    return CleanupStats(**counts)
