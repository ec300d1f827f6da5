"""The base of lancelet's statistics objects (``ScanStatistics``, ``CleanupStats``,
``CompactionMetrics``): named integer counters, e.g. ``CleanupStats(old_versions=2).to_dict()``.
"""

from __future__ import annotations

from typing import Dict


class _Counters:
    """Named integer counters with ``to_dict`` and a readable ``repr``."""

    __slots__: tuple = ()

    def __init__(self, **counts: int):
        for k in self.__slots__:
            setattr(self, k, int(counts.get(k, 0)))

    def to_dict(self) -> Dict[str, int]:
        """The counters as a dict."""
        return {k: getattr(self, k) for k in self.__slots__}

    def __repr__(self) -> str:
        return f"{type(self).__name__}(" + ", ".join(f"{k}={v}" for k, v in self.to_dict().items()) + ")"
