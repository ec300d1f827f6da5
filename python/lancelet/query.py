"""Full-text queries: pylance's ``lance.query`` objects, for ``full_text_query=``.

>>> from lancelet.query import MatchQuery, PhraseQuery, BooleanQuery, Occur
>>> q = MatchQuery("brown fox", "text", operator="AND")
>>> q = BooleanQuery([(Occur.MUST, MatchQuery("fox", "text")), (Occur.MUST_NOT, PhraseQuery("red fox", "text"))])
>>> q = MatchQuery("fox", "text") & MatchQuery("dog", "text")   # both must match
>>> ds.to_table(full_text_query=q, limit=10)                     # doctest: +SKIP

Each query has :meth:`FullTextQuery.to_dict`, the JSON form the native layer evaluates:
``{"match": {"column": ..., "terms": ..., ...}}``, ``{"phrase": ...}``, ``{"boost": ...}``,
``{"multi_match": ...}`` or ``{"boolean": {"must": [...], "should": [...], "must_not": [...]}}``.
"""

from __future__ import annotations

import abc
import json
import os
from enum import Enum
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

from ._native import index as _native_index
from .errors import InvalidArgumentError, UnsupportedFeatureError

__all__ = [
    "FullTextQueryType",
    "FullTextOperator",
    "DocumentGranularity",
    "Occur",
    "FullTextQuery",
    "MatchQuery",
    "PhraseQuery",
    "BoostQuery",
    "MultiMatchQuery",
    "BooleanQuery",
    "CombinedFieldsQuery",
    "tokenize",
]


class FullTextQueryType(Enum):
    """The kinds of full-text query."""

    MATCH = "match"
    MATCH_PHRASE = "match_phrase"
    BOOST = "boost"
    MULTI_MATCH = "multi_match"
    COMBINED_FIELDS = "combined_fields"
    BOOLEAN = "boolean"


class FullTextOperator(Enum):
    """How the terms of a match combine: ``OR`` (any term) or ``AND`` (every term)."""

    AND = "AND"
    OR = "OR"


class DocumentGranularity(str, Enum):
    """What one document is: a row (lancelet indexes rows; a list column's elements form
    one document)."""

    ROW = "row"
    LIST_ELEMENT = "list_element"


class Occur(Enum):
    """How a clause of a :class:`BooleanQuery` counts."""

    SHOULD = "SHOULD"
    MUST = "MUST"
    MUST_NOT = "MUST_NOT"


def _operator(op: Any) -> str:
    if isinstance(op, FullTextOperator):
        return op.value
    if isinstance(op, str) and op.upper() in ("AND", "OR"):
        return op.upper()
    raise InvalidArgumentError(f"operator must be FullTextOperator.AND or OR, got {op!r}")


def _granularity(g: Any) -> None:
    if g is not None and DocumentGranularity(g) is not DocumentGranularity.ROW:
        raise UnsupportedFeatureError("document_granularity LIST_ELEMENT is not supported (lancelet indexes rows)")


def _text(name: str, v: Any) -> str:
    if not isinstance(v, str):
        raise InvalidArgumentError(f"{name} must be a str, got {type(v).__name__}")
    return v


def _count(name: str, v: Any) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or v < 0:
        raise InvalidArgumentError(f"{name} must be a non-negative integer, got {v!r}")
    return v


class FullTextQuery(abc.ABC):
    """A full-text query (``&`` and ``|`` combine two into a :class:`BooleanQuery`)."""

    @abc.abstractmethod
    def query_type(self) -> FullTextQueryType:
        """The kind of the query."""

    @abc.abstractmethod
    def to_dict(self) -> Dict[str, Any]:
        """The query's JSON form (see the module docstring)."""

    def __and__(self, other: "FullTextQuery") -> "FullTextQuery":
        return BooleanQuery([(Occur.MUST, self), (Occur.MUST, other)])

    def __or__(self, other: "FullTextQuery") -> "FullTextQuery":
        return BooleanQuery([(Occur.SHOULD, self), (Occur.SHOULD, other)])

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.to_dict()!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, FullTextQuery) and self.to_dict() == other.to_dict()

    def __hash__(self) -> int:
        return hash(json.dumps(self.to_dict(), sort_keys=True))


class MatchQuery(FullTextQuery):
    """Rows of ``column`` holding the analyzed terms of ``query`` (any of them with ``OR``,
    all with ``AND``), scored by BM25 times ``boost``. ``fuzziness`` edits per term (``None``:
    0 up to 2 characters, 1 up to 5, else 2) match up to ``max_expansions`` index terms
    sharing the first ``prefix_length`` characters."""

    def __init__(
        self,
        query: str,
        column: str,
        *,
        boost: float = 1.0,
        fuzziness: Optional[int] = 0,
        max_expansions: int = 50,
        operator: Union[FullTextOperator, str] = FullTextOperator.OR,
        prefix_length: int = 0,
        document_granularity: Optional[DocumentGranularity] = None,
    ):
        _granularity(document_granularity)
        self.query = _text("query", query)
        self.column = _text("column", column)
        self.boost = float(boost)
        self.fuzziness = None if fuzziness is None else _count("fuzziness", fuzziness)
        self.max_expansions = _count("max_expansions", max_expansions)
        self.operator = _operator(operator)
        self.prefix_length = _count("prefix_length", prefix_length)

    def query_type(self) -> FullTextQueryType:
        return FullTextQueryType.MATCH

    def to_dict(self) -> Dict[str, Any]:
        return {
            "match": {
                "column": self.column,
                "terms": self.query,
                "boost": self.boost,
                "fuzziness": self.fuzziness,
                "max_expansions": self.max_expansions,
                "operator": self.operator,
                "prefix_length": self.prefix_length,
            }
        }


class PhraseQuery(FullTextQuery):
    """Rows of ``column`` holding the terms of ``query`` in order, with at most ``slop``
    extra positions between each term and the next (slop 1 finds "a b c" in "a x b x c"; as
    pylance counts it). The index needs ``with_position=True``."""

    def __init__(
        self,
        query: str,
        column: str,
        *,
        slop: int = 0,
        document_granularity: Optional[DocumentGranularity] = None,
    ):
        _granularity(document_granularity)
        self.query = _text("query", query)
        self.column = _text("column", column)
        self.slop = _count("slop", slop)

    def query_type(self) -> FullTextQueryType:
        return FullTextQueryType.MATCH_PHRASE

    def to_dict(self) -> Dict[str, Any]:
        return {"phrase": {"column": self.column, "terms": self.query, "slop": self.slop}}


class BoostQuery(FullTextQuery):
    """Rows of ``positive``; those also matching ``negative`` lose ``negative_boost`` times
    their ``negative`` score (``positive - negative_boost * negative``, as in pylance)."""

    def __init__(self, positive: FullTextQuery, negative: FullTextQuery, *, negative_boost: float = 0.5):
        if not isinstance(positive, FullTextQuery) or not isinstance(negative, FullTextQuery):
            raise InvalidArgumentError("BoostQuery takes two full-text queries")
        self.positive, self.negative, self.negative_boost = positive, negative, float(negative_boost)

    def query_type(self) -> FullTextQueryType:
        return FullTextQueryType.BOOST

    def to_dict(self) -> Dict[str, Any]:
        return {
            "boost": {
                "positive": self.positive.to_dict(),
                "negative": self.negative.to_dict(),
                "negative_boost": self.negative_boost,
            }
        }


class MultiMatchQuery(FullTextQuery):
    """``query`` matched against each of ``columns`` (each times its boost); a row scores
    its best column's score, as in pylance."""

    def __init__(
        self,
        query: str,
        columns: List[str],
        *,
        boosts: Optional[List[float]] = None,
        operator: Union[FullTextOperator, str] = FullTextOperator.OR,
    ):
        self.query = _text("query", query)
        if isinstance(columns, str) or not columns:
            raise InvalidArgumentError("MultiMatchQuery needs a non-empty list of columns")
        self.columns = [_text("column", c) for c in columns]
        if boosts is not None and len(boosts) != len(self.columns):
            raise InvalidArgumentError(f"{len(boosts)} boosts for {len(self.columns)} columns")
        self.boosts = None if boosts is None else [float(b) for b in boosts]
        self.operator = _operator(operator)

    def query_type(self) -> FullTextQueryType:
        return FullTextQueryType.MULTI_MATCH

    def to_dict(self) -> Dict[str, Any]:
        return {
            "multi_match": {
                "query": self.query,
                "columns": self.columns,
                "boosts": self.boosts,
                "operator": self.operator,
            }
        }


class CombinedFieldsQuery(FullTextQuery):
    """pylance 14's BM25F over several columns as one field; lancelet does not score it yet."""

    def __init__(self, query: str, columns: List[str], **kwargs: Any):
        del query, columns, kwargs
        raise UnsupportedFeatureError("CombinedFieldsQuery is not supported yet; use MultiMatchQuery")

    def query_type(self) -> FullTextQueryType:  # pragma: no cover (never constructed)
        return FullTextQueryType.COMBINED_FIELDS

    def to_dict(self) -> Dict[str, Any]:  # pragma: no cover (never constructed)
        return {}


class BooleanQuery(FullTextQuery):
    """Clauses combined by :class:`Occur`: rows must match every ``MUST`` clause (scores
    added), ``SHOULD`` clauses add their scores (and alone select rows), and rows matching
    a ``MUST_NOT`` clause are dropped."""

    def __init__(self, queries: Sequence[Tuple[Occur, FullTextQuery]]):
        clauses = []
        for item in queries:
            if not isinstance(item, (tuple, list)) or len(item) != 2:
                raise InvalidArgumentError("BooleanQuery takes (Occur, query) pairs")
            occur, q = item
            occur = Occur(occur.value if isinstance(occur, Occur) else str(occur).upper())
            if not isinstance(q, FullTextQuery):
                raise InvalidArgumentError(f"BooleanQuery clause must be a full-text query, got {type(q).__name__}")
            clauses.append((occur, q))
        self.queries = clauses

    def query_type(self) -> FullTextQueryType:
        return FullTextQueryType.BOOLEAN

    def to_dict(self) -> Dict[str, Any]:
        out: Dict[str, List[Any]] = {"must": [], "should": [], "must_not": []}
        for occur, q in self.queries:
            out[occur.value.lower()].append(q.to_dict())
        return {"boolean": out}


def query_json(query: Any) -> str:
    """The JSON form of any ``full_text_query=`` value: a string (an OR match over every
    FTS-indexed column; in double quotes, a phrase), ``{"query": ..., "columns": [...]}``, or a :class:`FullTextQuery`
    (also one from ``lance.query``, read through its pylance form)."""
    if isinstance(query, str):
        q = query.strip()
        if len(q) >= 2 and q[0] == q[-1] == '"':
            # A string in double quotes is a phrase, as in pylance.
            return json.dumps({"phrase": {"terms": q[1:-1]}})
        return json.dumps({"match": {"terms": query}})
    if isinstance(query, FullTextQuery):
        return json.dumps(query.to_dict())
    if isinstance(query, dict):
        if "query" not in query:
            raise InvalidArgumentError("full_text_query as a dict needs a 'query' key (and optionally 'columns')")
        unknown = set(query) - {"query", "columns"}
        if unknown:
            raise InvalidArgumentError(f"unknown full_text_query keys {sorted(unknown)}")
        text = query["query"]
        if isinstance(text, FullTextQuery):
            return json.dumps(text.to_dict())
        text = _text("full_text_query 'query'", text)
        columns = query.get("columns")
        if columns is None:
            return json.dumps({"match": {"terms": text}})
        if isinstance(columns, str):
            columns = [columns]
        if not columns:
            raise InvalidArgumentError("full_text_query 'columns' must not be empty")
        return json.dumps({"multi_match": {"query": text, "columns": list(columns)}})
    raise InvalidArgumentError(
        f"full_text_query must be a str, a dict or a lancelet.query query, got {type(query).__name__}"
    )


def params_json(params: Dict[str, Any], format_version: Optional[int]) -> str:
    """The JSON object of INVERTED index parameters (``create_scalar_index``'s keyword
    arguments) the native layer checks; ``format_version`` falls back to
    ``LANCE_FTS_FORMAT_VERSION``, as in pylance."""
    p = dict(params)
    g = p.get("document_granularity")
    if g is not None:
        p["document_granularity"] = str(getattr(g, "value", g))
    if isinstance(format_version, str) and format_version.lower() in ("v1", "v2", "v3"):
        format_version = int(format_version[1])  # pylance's spelling
    if isinstance(p.get("format_version"), str) and str(p["format_version"]).lower() in ("v1", "v2", "v3"):
        p["format_version"] = int(p["format_version"][1])
    if format_version is not None:
        p["format_version"] = format_version
    elif "format_version" not in p:
        env = os.environ.get("LANCE_FTS_FORMAT_VERSION")
        if env:
            p["format_version"] = int(env)
    return json.dumps(p)


def tokenize(text: str, **params: Any) -> list:
    """The tokens an INVERTED index built with ``params`` (``create_scalar_index``'s keyword
    arguments) makes of ``text``: what queries and documents are matched on.

    >>> tokenize("The Running Foxes!")
    ['run', 'fox']
    """
    return list(_native_index.tokenize(params_json(params, None), text))
