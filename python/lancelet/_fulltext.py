"""Full-text and hybrid search: ``scanner(full_text_query=...)``, with ``nearest=`` too,
and ``create_scalar_index(column, "INVERTED", ...)``.

The search runs in the native layer (BM25 over the INVERTED index segments of each
column, merged with the rows no segment covers); this module checks pylance's arguments
and shapes the result like pylance's: the requested columns, then ``_score`` (and
``_rowid``), best first. With ``nearest=`` as well, the vector and the text query run on
the same version and their rankings are fused (reciprocal-rank fusion by default) into
``_relevance_score``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, Optional

import pyarrow as pa

from ._native import index as _native_index
from ._nearest import NearestScanner
from ._ranked import RankedScanner
from .errors import InvalidArgumentError
from .progress import index_progress_callback
from .query import params_json, query_json

if TYPE_CHECKING:  # pragma: no cover
    from ._native.index import _FullTextArgs, _FusionOptions

#: The keyword arguments ``create_scalar_index(..., "INVERTED", **kwargs)`` takes.
FTS_PARAMS = tuple(_native_index.fts_param_names())  # create_scalar_index's INVERTED keywords (Rust's list)


def create_fts_index(
    ds: Any,
    column: str,
    name: Optional[str],
    replace: bool,
    params: Dict[str, Any],
    format_version: Optional[int],
    progress_callback: Any = None,
) -> Any:
    """Builds an INVERTED index on ``column`` and commits it; returns the new native dataset.
    ``progress_callback`` receives :class:`lancelet.progress.IndexProgress` events (``True``:
    a progress bar)."""
    progress = index_progress_callback(progress_callback)
    return _native_index.create_fts_index(
        ds._native, column, params_json(params, format_version), name, replace, progress
    )


class FullTextScanner(RankedScanner):
    """A full-text search (see :meth:`LanceDataset.scanner` with ``full_text_query=``)."""

    def __init__(
        self,
        ds: Any,
        query: Any,
        columns: Any = None,
        filter: Optional[str] = None,
        prefilter: Optional[bool] = None,
        fast_search: Optional[bool] = None,
        limit: Optional[int] = None,
        offset: Optional[int] = None,
        with_row_id: Optional[bool] = None,
    ):
        if columns is not None and not isinstance(columns, list):
            raise InvalidArgumentError("full-text scans take a list of column names")
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 0):
            raise InvalidArgumentError(f"limit must be a non-negative integer, got {limit!r}")
        if offset is not None and (isinstance(offset, bool) or not isinstance(offset, int) or offset < 0):
            raise InvalidArgumentError(f"offset must be a non-negative integer, got {offset!r}")
        self._ds = ds
        self._args: _FullTextArgs = {
            "query": query_json(query),
            "columns": columns,
            "filter": filter,
            "prefilter": bool(prefilter),
            "limit": limit,
            "offset": offset or 0,
            "fast_search": bool(fast_search),
            "with_row_id": bool(with_row_id),
        }

    def to_table(self) -> pa.Table:
        """The matching rows, best first, as a ``pyarrow.Table``."""
        return pa.RecordBatchReader.from_stream(_native_index.full_text_search(self._ds._native, self._args)).read_all()

    def explain_plan(self, verbose: bool = False) -> str:
        """A readable description of the search: the INVERTED index segments it uses."""
        del verbose
        a = self._args
        segs = [s for s in self._ds.list_indices() if s["type"] == "Inverted"]
        names = sorted({s["name"] for s in segs})
        limit = "" if a["limit"] is None else f" limit={a['limit']}"
        return (
            f"MatchQuery: query={a['query']}{limit}\n"
            f"  FtsIndex: indexes={names}, segments={len(segs)}, scoring=BM25 (exact)\n"
            + (f"  Filter ({'pre' if a['prefilter'] else 'post'}): {a['filter']}\n" if a["filter"] else "")
        )


class HybridScanner(RankedScanner):
    """Vector and full-text search on one version, fused (``nearest=`` with
    ``full_text_query=``): each side returns ``k`` candidates (nearest's ``k``), the
    rankings are fused into ``_relevance_score`` (``Σ 1/(60 + rank)`` by default, or
    ``fusion="linear"``), and ``_distance`` and ``_score`` are kept (null where a side did
    not find the row)."""

    def __init__(
        self,
        ds: Any,
        nearest: Dict[str, Any],
        query: Any,
        columns: Any = None,
        filter: Optional[str] = None,
        prefilter: Optional[bool] = None,
        fast_search: Optional[bool] = None,
        limit: Optional[int] = None,
        offset: Optional[int] = None,
        with_row_id: Optional[bool] = None,
        fusion: Optional[Dict[str, Any]] = None,
    ):
        vector = NearestScanner(
            ds,
            nearest,
            columns=columns,
            filter=filter,
            prefilter=prefilter,
            fast_search=fast_search,
            with_row_id=with_row_id,
        )
        if vector._args["batch"]:
            raise InvalidArgumentError("hybrid search takes one query vector, not a batch")
        text = FullTextScanner(ds, query, columns=columns, limit=limit, offset=offset)
        self._ds = ds
        f = dict(fusion or {})
        unknown = set(f) - {"method", "k", "weight"}
        if unknown:
            raise InvalidArgumentError(f"unknown fusion option(s) {sorted(unknown)}")
        self._nearest = vector._args
        self._text_query = text._args["query"]
        self._fusion: _FusionOptions = {
            "limit": limit,
            "offset": offset or 0,
            "fusion": str(f.get("method", "rrf")),
            "rrf_k": float(f.get("k", 60.0)),
            "weight": float(f.get("weight", 0.7)),
        }

    def to_table(self) -> pa.Table:
        """The fused rows, best first, as a ``pyarrow.Table``."""
        return pa.RecordBatchReader.from_stream(
            _native_index.hybrid_search(self._ds._native, self._nearest, self._text_query, self._fusion)
        ).read_all()

    def explain_plan(self, verbose: bool = False) -> str:
        """A readable description of the fusion and its two sides."""
        del verbose
        n = self._nearest
        return (
            f"Fusion: method={self._fusion['fusion']} k={n['k']}\n"
            f"  Nearest: column={n['column']} k={n['k']}\n"
            f"  MatchQuery: query={self._text_query}\n"
        )
