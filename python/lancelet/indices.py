"""Secondary indexes of a dataset: listing, describing, statistics and dropping.

``LanceDataset`` takes these methods from :class:`IndexMethods`; the index entries come from
the manifest (``lancelet._native.index.list_indices``), so indexes built by pylance are listed,
kept through every commit and can be dropped as well as lancelet's own.

    ds.list_indices()          # one dict per segment: name, type, uuid, fields, version, fragment_ids
    ds.describe_indices()      # one IndexDescription per index, with its segments
    ds.stats.index_stats("id_idx")
    ds = ds.drop_index("id_idx")
"""

from __future__ import annotations

import datetime as _dt
import json
import uuid as _uuid
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, List, Optional

from . import _fulltext, _nearest
from ._native import index as _native_index
from ._operations import Bitmap, index_dict, index_from_dict
from .errors import IndexNotFoundError, InvalidArgumentError, UnsupportedFeatureError
from .query import params_json


@dataclass
class IndexSegmentDescription:
    """One segment of an index (an index built in one go, or a delta added later)."""

    uuid: str
    fragment_ids: Bitmap
    dataset_version_at_last_update: int
    index_version: int
    created_at: Optional[_dt.datetime]
    base_id: Optional[int]
    size_bytes: Optional[int]
    covering_fields: List[int] = field(default_factory=list)


@dataclass
class IndexDescription:
    """One logical index: every segment sharing a name."""

    name: str
    type_url: str
    index_type: str
    num_rows_indexed: int
    fields: List[int]
    field_names: List[str]
    num_segments: int
    total_size_bytes: Optional[int]
    details: Dict[str, Any]
    segments: List[IndexSegmentDescription]


def _segments(ds: Any) -> List[Dict[str, Any]]:
    return _native_index.list_indices(ds._native)


def _by_name(segments: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """Segments sorted by index name (pylance's order), each name's in creation order."""
    return sorted(segments, key=lambda s: s["name"])


def _live_rows_by_fragment(ds: Any) -> Dict[int, int]:
    return {f["id"]: f["num_rows"] for f in ds._native.fragments()}


class IndexConfig:
    """An index type with training parameters, as pylance's ``lance.indices.IndexConfig``:
    ``IndexConfig("btree", {"zone_size": 1000})``, ``IndexConfig("zonemap",
    {"rows_per_zone": 1000})``, ``IndexConfig("bloomfilter", {"number_of_items": 1000,
    "probability": 0.01})``."""

    def __init__(self, index_type: str, parameters: Optional[Dict[str, Any]] = None):
        self.index_type = index_type
        self.parameters = dict(parameters or {})

    def __repr__(self) -> str:
        return f"IndexConfig({self.index_type!r}, {self.parameters!r})"


#: Scalar index types lancelet builds (``create_scalar_index``).
SCALAR_INDEX_TYPES = ("BTREE", "BITMAP", "LABEL_LIST", "ZONEMAP", "NGRAM", "BLOOMFILTER")


def _one(column: Any) -> Any:
    if isinstance(column, (list, tuple)):
        if len(column) != 1:
            raise InvalidArgumentError("scalar indexes cover one column")
        return column[0]
    return column


def _is_fts(index_type: Any) -> bool:
    t = getattr(index_type, "index_type", index_type)
    return isinstance(t, str) and t.upper() in ("INVERTED", "FTS")


def _fts_args(column: Any, index_type: Any, kwargs: Dict[str, Any]) -> tuple:
    """``(type, column, parameters)`` of an INVERTED index request: pylance's keyword
    arguments, or an ``IndexConfig("inverted", {...})``'s parameters (checked in Rust)."""
    params: Dict[str, Any] = dict(getattr(index_type, "parameters", None) or {})
    kind = getattr(index_type, "index_type", index_type)
    column = _one(column)
    if not isinstance(column, str):
        raise TypeError(f"column must be a str, got {type(column).__name__}")
    unknown = set(kwargs) - set(_fulltext.FTS_PARAMS)
    if unknown:
        raise TypeError(f"create_scalar_index() got unexpected keyword arguments {sorted(unknown)}")
    params.update(kwargs)
    return kind, column, params


def _scalar_args(column: Any, index_type: Any, kwargs: Dict[str, Any]) -> tuple:
    """``(index_type, column, numeric parameters)`` of a scalar index request, checked."""
    params: Dict[str, Any] = {}
    if isinstance(index_type, IndexConfig) or hasattr(index_type, "parameters"):
        params = dict(index_type.parameters or {})
        index_type = index_type.index_type
    if not isinstance(index_type, str):
        raise TypeError(f"index_type must be a str or an IndexConfig, got {type(index_type).__name__}")
    if not isinstance(column, str):
        raise TypeError(f"column must be a str, got {type(column).__name__}")
    if index_type.upper() in ("RTREE", "MINHASHLSH") or index_type.upper().startswith("IVF"):
        raise UnsupportedFeatureError(f"{index_type} indexes are not supported yet")
    unknown = set(kwargs) - {"document_granularity"}
    if unknown:
        raise TypeError(f"create_scalar_index() got unexpected keyword arguments {sorted(kwargs)}")
    numeric = {}
    for k, v in params.items():
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise InvalidArgumentError(f"index parameter {k!r} must be a number, got {v!r}")
        numeric[k] = float(v)
    return index_type, column, numeric


class IndexMethods:
    """Index methods of :class:`lancelet.LanceDataset` (pylance's names and return types)."""

    _native: Any

    def create_scalar_index(
        self,
        column: str,
        index_type: Any,
        name: Optional[str] = None,
        *,
        replace: bool = True,
        train: bool = True,
        fragment_ids: Optional[List[int]] = None,
        index_uuid: Optional[str] = None,
        progress_callback: Any = None,
        format_version: Optional[int] = None,
        **kwargs: Any,
    ) -> "IndexMethods":
        """Builds a scalar index on ``column`` and commits it as a new version; returns the
        dataset (pylance's signature). ``index_type`` is one of ``BTREE`` (ranges and
        equality), ``BITMAP`` (equality on few distinct values), ``LABEL_LIST`` (lists of
        labels), ``ZONEMAP`` (min/max per zone), ``NGRAM`` (``contains``/``LIKE '%x%'``),
        ``BLOOMFILTER``, or an :class:`IndexConfig` with parameters. The index is named
        ``{column}_idx`` unless ``name`` is given; an index of the same name is replaced
        (``replace=False`` makes that an error). Filters then use it automatically:

        >>> ds.create_scalar_index("id", "BTREE")                     # doctest: +SKIP
        >>> ds.to_table(filter="id = 42")                            # doctest: +SKIP

        ``INVERTED`` (or ``FTS``) builds a full-text index (see ``docs/fts.md`` for its
        keyword arguments); its ``progress_callback`` receives
        :class:`lancelet.progress.IndexProgress` events, and ``True`` draws a progress bar.
        """
        if _is_fts(index_type):
            kind, column, params = _fts_args(column, index_type, kwargs)
            if fragment_ids is not None or index_uuid is not None:
                # pylance's distributed build: one part per call, staged under
                # _indices/{index_uuid}/staging/ until merge_index_metadata merges them.
                if fragment_ids is None:
                    raise InvalidArgumentError("a full-text index part (index_uuid=) needs fragment_ids")
                _native_index.stage_fts_part(
                    self._native,
                    column,
                    params_json(params, format_version),
                    str(index_uuid if index_uuid is not None else _uuid.uuid4()),
                    [int(f) for f in fragment_ids],
                )
                return self
            if not train:
                raise UnsupportedFeatureError("train=False is not supported for INVERTED indexes")
            self._native = _fulltext.create_fts_index(
                self, column, name, replace, params, format_version, progress_callback
            )
            return self
        del format_version, progress_callback
        index_type, column, numeric = _scalar_args(column, index_type, kwargs)
        if fragment_ids is not None:
            # pylance 14 builds these segments with create_index_uncommitted only.
            t = index_type.upper()
            raise InvalidArgumentError(
                f'{t} distributed indexing uses create_index_uncommitted(..., index_type="{t}", fragment_ids=...)'
            )
        if not train or index_uuid is not None:
            raise UnsupportedFeatureError(
                "train=False and index_uuid (pylance's full-text parts) are not supported; build index segments "
                "with create_index_uncommitted(fragment_ids=...), INVERTED ones included"
            )
        self._native = _native_index.create_scalar_index(self._native, column, index_type, name, replace, numeric)
        return self

    def create_index_uncommitted(
        self,
        column: Any,
        index_type: Any,
        name: Optional[str] = None,
        metric: str = "L2",
        replace: bool = False,
        num_partitions: Optional[int] = None,
        ivf_centroids: Any = None,
        pq_codebook: Any = None,
        num_sub_vectors: Optional[int] = None,
        *args: Any,
        fragment_ids: Optional[List[int]] = None,
        index_uuid: Optional[str] = None,
        **kwargs: Any,
    ) -> Any:
        """Builds one segment of an index over ``fragment_ids`` and writes its files under
        ``_indices/<uuid>/`` without committing; returns its :class:`lancelet.dataset.Index`
        (pylance's distributed index build). Workers each build the segment of their
        fragments; the segments are then merged (:meth:`merge_existing_index_segments`, if
        wanted) and committed as one index (:meth:`commit_existing_index_segments`, or a
        ``LanceOperation.CreateIndex``), by either library. Scalar types (BTREE, BITMAP,
        LABEL_LIST, ZONEMAP, NGRAM, BLOOMFILTER) take :meth:`create_scalar_index`'s
        parameters, vector types (IVF_FLAT, IVF_PQ, IVF_SQ) :meth:`create_index`'s; pass the
        same ``ivf_centroids`` (and ``pq_codebook``) to every worker for vector segments
        that can be merged.

        >>> segs = [ds.create_index_uncommitted("a", "BTREE", fragment_ids=[f.fragment_id])
        ...         for f in ds.get_fragments()]                        # doctest: +SKIP
        >>> ds = ds.commit_existing_index_segments("a_idx", "a", segs)  # doctest: +SKIP
        """
        if args:
            raise TypeError("create_index_uncommitted() takes fragment_ids and the options after it by keyword")
        if fragment_ids is None:
            raise InvalidArgumentError("create_index_uncommitted requires fragment_ids for distributed index build")
        ids = [int(f) for f in fragment_ids]
        kind = (index_type.index_type if isinstance(index_type, IndexConfig) else str(index_type)).upper()
        if kind in ("RTREE", "MINHASHLSH"):
            raise UnsupportedFeatureError(f"{kind} indexes are not supported yet")
        if kind in ("INVERTED", "FTS"):
            for ignored in ("train", "storage_options", "progress_callback", "index_uuid"):
                kwargs.pop(ignored, None)
            fv = kwargs.pop("format_version", None)
            _, col, params = _fts_args(column, index_type, kwargs)
            params_text = params_json(params, fv)
            d = _native_index.build_fts_segment(self._native, col, ids, params_text, name, bool(replace))
            return index_from_dict(d)
        if kind in SCALAR_INDEX_TYPES:
            if index_uuid is not None:
                raise InvalidArgumentError(
                    "index_uuid is no longer accepted for distributed index builds; segment UUIDs are generated "
                    "and returned in the index metadata"
                )
            for ignored in ("train", "storage_options", "progress_callback"):
                kwargs.pop(ignored, None)
            t, col, numeric = _scalar_args(_one(column), index_type, kwargs)
            d = _native_index.build_scalar_segment(
                self._native, col, t, ids, {"name": name, "replace": bool(replace), "params": numeric}
            )
        else:
            if index_uuid is not None:
                raise UnsupportedFeatureError("index_uuid is not supported for vector index segments")
            d = _nearest.build_vector_segment(
                self,
                column,
                kind,
                ids,
                name,
                metric,
                replace,
                num_partitions,
                ivf_centroids,
                pq_codebook,
                num_sub_vectors,
                kwargs,
            )
        return index_from_dict(d)

    def merge_existing_index_segments(self, segments: List[Any]) -> Any:
        """Merges segments of one index (from :meth:`create_index_uncommitted`, not yet
        committed) into one new segment over all their fragments; returns its
        :class:`lancelet.dataset.Index`. The segments given stay as they are. Vector
        segments must share their model (the same ``ivf_centroids``/``pq_codebook``).

        >>> merged = ds.merge_existing_index_segments(segs)  # doctest: +SKIP
        """
        return index_from_dict(_native_index.merge_index_segments(self._native, [index_dict(s) for s in segments]))

    def commit_existing_index_segments(self, index_name: str, column: str, segments: List[Any]) -> "IndexMethods":
        """Commits ``segments`` (:class:`lancelet.dataset.Index` objects, or pylance's, built
        for ``column``) as index ``index_name`` in a new version; segments of that name
        already committed stay. Returns the dataset, as pylance does.

        >>> ds = ds.commit_existing_index_segments("a_idx", "a", segs)  # doctest: +SKIP
        """
        if not isinstance(index_name, str) or not isinstance(column, str):
            raise TypeError("index_name and column must be str")
        self._native = _native_index.commit_existing_index_segments(
            self._native, index_name, column, [index_dict(s) for s in segments]
        )
        return self

    def merge_index_metadata(
        self,
        index_uuid: str,
        index_type: str,
        batch_readhead: Optional[int] = None,
        progress_callback: Any = None,
    ) -> None:
        """Merges the parts of pylance's distributed full-text build: each
        ``create_scalar_index(column, "INVERTED", index_uuid=uuid, fragment_ids=[...])``
        staged one under ``_indices/{uuid}/staging/`` (in pylance's layout); here they
        become one index in ``_indices/{uuid}/`` (their partitions and a ``metadata.lance``
        naming them, scored with the statistics of all of them), and the staged files are
        removed. Commit it with ``LanceOperation.CreateIndex([Index(uuid=uuid, ...)], [])``.
        BTREE and vector segments are built with :meth:`create_index_uncommitted` and
        merged with :meth:`merge_existing_index_segments`, as in pylance 14, which refuses
        them here too.

        >>> for f in ds.get_fragments():  # doctest: +SKIP
        ...     ds.create_scalar_index("text", "INVERTED", index_uuid=u, fragment_ids=[f.fragment_id])
        >>> ds.merge_index_metadata(u, "INVERTED")  # doctest: +SKIP
        """
        del batch_readhead, progress_callback
        t = str(index_type).upper()
        valid = ("BTREE", "INVERTED", "IVF_FLAT", "IVF_PQ", "IVF_SQ", "VECTOR")
        if t not in valid:
            raise NotImplementedError(f"Only {', '.join(sorted(valid))} are supported, received {index_type}")
        if t == "INVERTED":
            _native_index.merge_fts_parts(self._native, str(index_uuid))
            return
        family = "BTree" if t == "BTREE" else "Vector"
        raise InvalidArgumentError(
            f"{family} distributed indexing no longer supports merge_index_metadata; build segments, optionally "
            "merge groups with merge_existing_index_segments(...), and commit with commit_existing_index_segments(...)"
        )

    def create_index(
        self,
        column: Any,
        index_type: str,
        name: Optional[str] = None,
        metric: str = "L2",
        replace: bool = False,
        num_partitions: Optional[int] = None,
        ivf_centroids: Any = None,
        pq_codebook: Any = None,
        num_sub_vectors: Optional[int] = None,
        **kwargs: Any,
    ) -> "IndexMethods":
        """Builds a vector index on ``column`` (a fixed-size list of floats) and commits it;
        returns the dataset (pylance's signature). ``index_type``: ``IVF_FLAT`` (exact
        distances within the probed partitions), ``IVF_PQ`` (product quantization; needs
        ``num_sub_vectors``, ``num_bits`` 8 or 4) or ``IVF_SQ`` (8-bit scalar quantization).
        ``metric``: ``L2`` (squared), ``cosine`` or ``dot``. Without ``num_partitions``,
        partitions hold about ``target_partition_size`` rows (4096; 8192 for IVF_SQ).
        Scalar types (BTREE, ...) are passed to :meth:`create_scalar_index`.

        >>> ds.create_index("vec", "IVF_PQ", num_partitions=256, num_sub_vectors=16)  # doctest: +SKIP
        >>> ds.to_table(nearest={"column": "vec", "q": q, "k": 10, "nprobes": 20})    # doctest: +SKIP
        """
        return _nearest.create_index(
            self,
            column,
            index_type,
            name=name,
            metric=metric,
            replace=replace,
            num_partitions=num_partitions,
            ivf_centroids=ivf_centroids,
            pq_codebook=pq_codebook,
            num_sub_vectors=num_sub_vectors,
            **kwargs,
        )

    def list_indices(self) -> List[Dict[str, Any]]:
        """Every index segment: ``name``, ``type`` (``BTree``, ``Bitmap``, ``IVF_PQ``...),
        ``uuid``, ``fields`` (column names), ``version`` (the dataset version it was built
        on), ``fragment_ids`` and ``base_id``.

        >>> ds.list_indices()[0]["name"]   # doctest: +SKIP
        'id_idx'
        """
        return [
            {
                "name": s["name"],
                "type": s["type"],
                "uuid": s["uuid"],
                "fields": s["fields"],
                "version": s["version"],
                "fragment_ids": Bitmap(s["fragment_ids"]),
                "base_id": s["base_id"],
            }
            for s in _by_name(_segments(self))
        ]

    @property
    def has_index(self) -> bool:
        """Whether this version has any index."""
        return bool(_segments(self))

    def describe_indices(self) -> List[IndexDescription]:
        """One :class:`IndexDescription` per index name, its segments in creation order."""
        live = _live_rows_by_fragment(self)
        by_name: Dict[str, List[Dict[str, Any]]] = {}
        for s in _by_name(_segments(self)):
            by_name.setdefault(s["name"], []).append(s)
        out = []
        for name, segs in by_name.items():
            sizes = [sum(sz for _, sz in s["files"]) if s["files"] else None for s in segs]
            covered = set().union(*(set(s["fragment_ids"]) for s in segs))
            out.append(
                IndexDescription(
                    name=name,
                    type_url=segs[0]["type_url"],
                    index_type=segs[0]["type"],
                    num_rows_indexed=sum(live.get(f, 0) for f in covered),
                    fields=list(segs[0]["field_ids"]),
                    field_names=list(segs[0]["fields"]),
                    num_segments=len(segs),
                    total_size_bytes=None if any(x is None for x in sizes) else sum(x for x in sizes if x),
                    details={},
                    segments=[
                        IndexSegmentDescription(
                            uuid=s["uuid"],
                            fragment_ids=Bitmap(s["fragment_ids"]),
                            dataset_version_at_last_update=s["version"],
                            index_version=s["index_version"],
                            created_at=(
                                _dt.datetime.fromtimestamp(s["created_at"] / 1000, _dt.timezone.utc)
                                if s["created_at"] is not None
                                else None
                            ),
                            base_id=s["base_id"],
                            size_bytes=sum(sz for _, sz in s["files"]) if s["files"] else None,
                            covering_fields=list(s.get("covering_fields", [])),
                        )
                        for s in segs
                    ],
                )
            )
        return out

    def index_statistics(self, index_name: str) -> Dict[str, Any]:
        """Coverage of index ``index_name``: segments, indexed and unindexed fragments and rows
        (pylance's keys)."""
        return _index_statistics(self, index_name)

    def drop_index(self, name: str) -> "IndexMethods":
        """Drops index ``name`` (all its segments) in a new version; its files stay until
        ``cleanup_old_versions`` removes the versions that use them. Returns the dataset."""
        if not isinstance(name, str):
            raise TypeError(f"index name must be a str, got {type(name).__name__}")
        self._native = _native_index.drop_index(self._native, name)
        return self


def _index_statistics(ds: Any, index_name: str) -> Dict[str, Any]:
    segs = [s for s in _segments(ds) if s["name"] == index_name]
    if not segs:
        raise IndexNotFoundError(f"index {index_name!r} does not exist")
    live = _live_rows_by_fragment(ds)
    covered = set().union(*(set(s["fragment_ids"]) for s in segs)) & set(live)
    per_segment = [_segment_stats(ds, s) for s in segs]
    created = [s["created_at"] for s in segs if s["created_at"] is not None]
    return {
        "index_type": segs[0]["type"],
        "name": index_name,
        "num_indices": len(segs),
        "num_segments": len(segs),
        "indices": per_segment,
        "segments": per_segment,
        "num_indexed_fragments": len(covered),
        "num_indexed_rows": sum(live[f] for f in covered),
        "num_unindexed_fragments": len(set(live) - covered),
        "num_unindexed_rows": sum(n for f, n in live.items() if f not in covered),
        "num_indexed_rows_per_delta": [sum(live.get(f, 0) for f in s["fragment_ids"]) for s in segs],
        "updated_at_timestamp_ms": max(created) if created else None,
    }


def _segment_stats(ds: Any, seg: Dict[str, Any]) -> Dict[str, Any]:
    if seg["type"].startswith("IVF"):
        return json.loads(_native_index.vector_index_statistics(ds._native, seg["uuid"]))
    if seg["type"] == "Inverted":
        return json.loads(_native_index.fts_index_statistics(ds._native, seg["uuid"]))
    stats = getattr(_native_index, "index_segment_statistics", None)
    if stats is None:
        return {}
    return {k: _number(k, v) for k, v in stats(ds._native, seg["uuid"]).items()}


def _number(key: str, value: str) -> Any:
    """Counts as ints, as pylance reports them (bounds stay strings)."""
    if (key.startswith("num_") or key in ("rows_per_zone", "number_of_items")) and value.isdigit():
        return int(value)
    if key == "probability":
        try:
            return float(value)
        except ValueError:
            return value
    return value


def index_stats(ds: Any, index_name: str) -> Dict[str, Any]:
    """``ds.stats.index_stats(name)``: the same as ``ds.index_statistics(name)``."""
    return _index_statistics(ds, index_name)


def names_for(ds: Any) -> Iterable[str]:
    """The index names of ``ds``."""
    return {s["name"] for s in _segments(ds)}
