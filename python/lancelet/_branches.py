"""Branches, shallow and deep clones, tags on branches and base paths (pylance 14's API).

A branch ``dev`` of the dataset at ``R`` is a dataset at ``R/tree/dev``: its first version is a
copy of the version it was made from (same number), reading that version's files through a
base path; its own writes go under ``R/tree/dev``. Tags and branch references live at
``R/_refs``. See ``docs/branches.md``.
"""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Tuple, Union, cast

from . import _paths
from ._argcheck import _as_int, _check_int_version, _native_uri, _parse_time, _storage_options
from ._native import dataset as _native_dataset
from .errors import InvalidArgumentError, LanceNotFoundError

if TYPE_CHECKING:  # pragma: no cover
    from ._native.dataset import _Reference
    from .dataset import LanceDataset

#: A version reference: a version number of the dataset's branch, a tag name, or
#: ``(branch, version)`` (``None`` branch: main; ``None`` version: the newest).
Reference = Union[int, str, Tuple[Optional[str], Optional[int]], None]


class DatasetBasePath:
    """Another storage root a dataset's files may live under (pylance's ``DatasetBasePath``).

    ``is_dataset_root=True`` keeps files as a dataset does (under ``data/``); otherwise they
    sit directly inside ``path``. ``id`` is given when the base is registered (from 1 for
    ``initial_bases``, the largest id plus one for :meth:`LanceDataset.add_bases`).

    >>> lancelet.DatasetBasePath("/mnt/fast/items", name="fast")  # doctest: +SKIP
    """

    __slots__ = ("_path", "_name", "_is_dataset_root", "_id")

    def __init__(self, path: str, name: Optional[str] = None, is_dataset_root: bool = False, id: Optional[int] = None):
        if not isinstance(path, (str, os.PathLike)):
            raise InvalidArgumentError(f"a base path is a string, got {type(path).__name__}")
        if name is not None and not isinstance(name, str):
            raise InvalidArgumentError(f"a base path name is a string, got {name!r}")
        if id is not None and (isinstance(id, bool) or not isinstance(id, int) or not 0 <= id < 2**32):
            raise InvalidArgumentError(f"a base path id is an integer in [0, 2**32), got {id!r}")
        self._path = os.fspath(path)
        self._name = name
        self._is_dataset_root = bool(is_dataset_root)
        self._id = id

    @property
    def path(self) -> str:
        """The root's path or URI, as stored in the manifest."""
        return self._path

    @property
    def name(self) -> Optional[str]:
        """The base's name (``target_bases`` may name it)."""
        return self._name

    @property
    def is_dataset_root(self) -> bool:
        """Whether files are kept under ``data/`` below :attr:`path`."""
        return self._is_dataset_root

    @property
    def id(self) -> Optional[int]:
        """The id files refer to it by (None until registered)."""
        return self._id

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, DatasetBasePath) and (self._path, self._name, self._is_dataset_root, self._id) == (
            other._path,
            other._name,
            other._is_dataset_root,
            other._id,
        )

    def __hash__(self) -> int:
        return hash((self._path, self._name, self._is_dataset_root, self._id))

    def __repr__(self) -> str:
        return (
            f"DatasetBasePath(path={self._path!r}, name={self._name!r}, "
            f"is_dataset_root={self._is_dataset_root}, id={self._id!r})"
        )


def reference_args(reference: Reference) -> _Reference:
    """The native form of a version reference (see :data:`Reference`)."""
    if reference is None:
        return {"kind": "latest"}
    if isinstance(reference, str):
        return {"kind": "tag", "tag": _paths.check_tag_name(reference)}
    if isinstance(reference, (tuple, list)):
        if len(reference) != 2:
            raise InvalidArgumentError(f"a branch reference is (branch, version), got {reference!r}")
        branch, version = reference
        if branch is not None and not isinstance(branch, str):
            raise InvalidArgumentError(f"a branch name is a string, got {branch!r}")
        if branch == "main":
            branch = None
        number = None if version is None else _check_int_version(version)
        return {"kind": "branch", "branch": branch, "number": number}
    reference = _as_int(reference)
    return {"kind": "version", "number": _check_int_version(reference)}


def checkout(ds: "LanceDataset", reference: Reference) -> Any:
    """The native dataset of ``ds`` at ``reference`` (on any branch: see
    ``LanceDataset._on_branch``)."""
    return _native_dataset.ds_checkout_ref(ds._native, reference_args(reference))


def _seconds(v: Any) -> Optional[int]:
    return v if isinstance(v, int) else None


def _branch_dict(parent: Optional[str], parent_version: int, raw: str) -> Dict[str, Any]:
    body = json.loads(raw)
    mapping = (body.get("identifier") or {}).get("version_mapping") or []
    return {
        "parent_branch": parent,
        "branch_identifier": [(int(v), str(i)) for v, i in mapping],
        "parent_version": parent_version,
        "create_at": _seconds(body.get("createAt")),
        "manifest_size": body.get("manifestSize"),
        "metadata": body.get("metadata") or {},
    }


class Branches:
    """The branches of a dataset (``ds.branches``), as in pylance.

    >>> ds.branches.list()  # doctest: +SKIP
    {'dev': {'parent_branch': None, 'parent_version': 1, ...}}
    """

    def __init__(self, ds: "LanceDataset"):
        self._ds = ds

    def list(self) -> Dict[str, Dict[str, Any]]:
        """Every branch: ``{name: {"parent_branch", "branch_identifier", "parent_version",
        "create_at", "manifest_size", "metadata"}}``."""
        return {
            name: _branch_dict(parent, pv, raw)
            for name, parent, pv, raw in _native_dataset.ds_list_branches(self._ds._native)
        }

    def list_ordered(self, order: Optional[str] = None) -> List[Tuple[str, Dict[str, Any]]]:
        """Branches ordered by the version they were created from: ``order="desc"``
        (the default) or ``"asc"``."""
        if order not in (None, "asc", "desc"):
            raise InvalidArgumentError(f"order must be 'asc' or 'desc', got {order!r}")
        items = list(self.list().items())
        items.sort(key=lambda kv: (kv[1]["parent_version"], kv[1]["create_at"] or 0, kv[0]), reverse=order != "asc")
        return items

    def delete(self, name: str) -> None:
        """Deletes branch ``name`` and every file it wrote. Refused while another branch was
        created from it."""
        _native_dataset.ds_delete_branch(self._ds._native, _branch_name(name))

    def replace_metadata(self, name: str, metadata: Dict[str, str]) -> None:
        """Replaces the metadata recorded with branch ``name``."""
        if not isinstance(metadata, dict):
            raise InvalidArgumentError(f"metadata must be a dict, got {type(metadata).__name__}")
        _native_dataset.ds_replace_branch_metadata(self._ds._native, _branch_name(name), json.dumps(metadata))


def _branch_name(name: Any) -> str:
    if not isinstance(name, str):
        raise InvalidArgumentError(f"branch names are strings, got {name!r}")
    return name


class Tags:
    """Named versions of a dataset (``ds.tags``), on any branch, as in pylance.

    >>> ds.tags.create("v1", 1); ds.tags.create("dev-v2", ("dev", 2))  # doctest: +SKIP
    """

    def __init__(self, ds: "LanceDataset"):
        self._ds = ds

    def list(self) -> Dict[str, Dict[str, Any]]:
        """Every tag: ``{name: {"branch", "version", "created_at", "updated_at",
        "manifest_size", "metadata"}}``."""
        out: Dict[str, Dict[str, Any]] = {}
        for name, version, size, branch, created, updated, metadata in _native_dataset.ds_tags(self._ds._native):
            out[name] = {
                "branch": branch,
                "version": version,
                "created_at": _parse_time(created),
                "updated_at": _parse_time(updated),
                "manifest_size": size,
                "metadata": dict(metadata),
            }
        return out

    def replace_metadata(self, tag: str, metadata: Dict[str, str]) -> None:
        """Replaces the whole metadata map of existing ``tag`` (its version and times stay;
        moving a tag with :meth:`update` keeps its metadata), as in pylance.

        >>> ds.tags.replace_metadata("v1", {"owner": "ml-team"})  # doctest: +SKIP
        """
        name = _paths.check_tag_name(tag)
        if not isinstance(metadata, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in metadata.items()
        ):
            raise InvalidArgumentError(f"tag metadata must be a dict of strings, got {metadata!r}")
        _native_dataset.ds_replace_tag_metadata(self._ds._native, name, dict(metadata))

    def list_ordered(self, order: Optional[str] = None) -> List[Tuple[str, Dict[str, Any]]]:
        """Tags ordered by version: ``order="desc"`` (the default) or ``"asc"``."""
        if order not in (None, "asc", "desc"):
            raise InvalidArgumentError(f"order must be 'asc' or 'desc', got {order!r}")
        items = list(self.list().items())
        items.sort(key=lambda kv: (kv[1]["version"], kv[0]), reverse=order != "asc")
        return items

    def _set(self, tag: str, reference: Reference, update: bool) -> None:
        name = _paths.check_tag_name(tag)
        args = reference_args(reference)
        if args["kind"] == "tag":
            tag_name = cast(str, args["tag"])
            target = self.list().get(tag_name)
            if target is None:
                raise InvalidArgumentError(f"version {tag_name!r} is not a number and no tag of that name exists")
            args = {"kind": "branch", "branch": target["branch"], "number": target["version"]}
        if args["kind"] in ("latest", "branch") and args.get("number") is None:
            native = _native_dataset.ds_checkout_ref(self._ds._native, args)
            args = {"kind": "branch", "branch": _native_dataset.ds_branch(native), "number": native.version()}
        given = args["kind"] == "branch"
        _paths.tag_call(
            name,
            lambda: _native_dataset.ds_set_tag(
                self._ds._native, name, cast(int, args["number"]), given, args.get("branch"), update
            ),
        )

    def create(self, tag: str, reference: Reference = None) -> None:
        """Creates ``tag`` pointing at ``reference``: a version of this dataset's branch,
        ``(branch, version)``, another tag, or None (this branch's newest version)."""
        self._set(tag, reference, False)

    def update(self, tag: str, reference: Reference = None) -> None:
        """Moves existing ``tag`` to ``reference`` (as in :meth:`create`)."""
        self._set(tag, reference, True)

    def delete(self, tag: str) -> None:
        """Deletes ``tag``."""
        _native_dataset.ds_delete_tag(self._ds._native, _paths.check_tag_name(tag))

    def get_version(self, tag: str) -> int:
        """The version ``tag`` points at (of its branch)."""
        tags = self.list()
        if tag not in tags:
            raise InvalidArgumentError(f"tag {tag!r} does not exist")
        return tags[tag]["version"]


def create_branch(ds: "LanceDataset", branch: str, reference: Reference = None) -> Any:
    """See :meth:`LanceDataset.create_branch`; returns the native dataset on the new branch."""
    return _native_dataset.ds_create_branch(ds._native, _branch_name(branch), reference_args(reference))


def clone(
    ds: "LanceDataset",
    target_path: Any,
    reference: Reference,
    deep: bool,
    storage_options: Optional[Dict[str, str]] = None,
) -> Tuple[str, Any, Optional[Dict[str, str]]]:
    """See :meth:`LanceDataset.shallow_clone` and :meth:`LanceDataset.deep_clone`: returns
    the clone's native path, its native dataset and its storage options."""
    options = storage_options if storage_options is not None else ds._storage_options
    path = _native_uri(target_path, options)
    _paths.check_write_target(path)
    native = _native_dataset.ds_clone(
        ds._native, path, deep, reference_args(reference), storage_options=_storage_options(options)
    )
    return path, native, _storage_options(options)


def base_paths(ds: "LanceDataset") -> Dict[int, DatasetBasePath]:
    """See :meth:`LanceDataset.base_paths`."""
    return {
        i: DatasetBasePath(path, name, root, i) for i, name, root, path in _native_dataset.ds_base_paths(ds._native)
    }


def native_bases(new_bases: Any, existing: Dict[int, DatasetBasePath], first_id: int) -> List[Tuple]:
    """``(id, name, is_dataset_root, path)`` for new bases: ids not given are numbered from
    ``first_id`` up, skipping used ones; paths become absolute."""
    if isinstance(new_bases, DatasetBasePath) or not isinstance(new_bases, (list, tuple)):
        raise InvalidArgumentError("bases are a list of lancelet.DatasetBasePath")
    used = set(existing)
    used.update(b.id for b in new_bases if isinstance(b, DatasetBasePath) and b.id is not None)
    out, next_id = [], first_id
    for b in new_bases:
        if not isinstance(b, DatasetBasePath):
            raise InvalidArgumentError(f"bases are lancelet.DatasetBasePath objects, got {type(b).__name__}")
        bid = b.id
        if bid is None:
            while next_id in used:
                next_id += 1
            bid = next_id
            used.add(bid)
        path = b.path
        if "://" not in path:
            path = os.path.abspath(os.path.expanduser(path))
        out.append((bid, b.name, b.is_dataset_root, path))
    return out


def add_bases(ds: "LanceDataset", new_bases: List[DatasetBasePath]) -> Any:
    """See :meth:`LanceDataset.add_bases`; returns the native dataset at the new version."""
    existing = base_paths(ds)
    first = max(existing) + 1 if existing else 1
    return _native_dataset.ds_add_bases(ds._native, native_bases(new_bases, existing, first))


def uses_bases(kwargs: Dict[str, Any]) -> bool:
    """Whether a ``write_dataset`` call registers or targets base paths."""
    return any(kwargs.get(k) is not None for k in ("initial_bases", "target_bases", "target_all_bases"))


def write_with_bases(
    reader: Any,
    path: str,
    mode: str,
    kwargs: Dict[str, Any],
    storage_options: Optional[Dict[str, str]],
    max_rows_per_file: int,
    max_bytes_per_file: int,
    data_storage_version: Optional[str],
    commit_message: Optional[str],
) -> Tuple[Any, Optional[Dict[str, str]]]:
    """``write_dataset`` with ``initial_bases`` (creating) and/or ``target_bases``: returns
    the native dataset written and the storage options it was written with."""
    initial = kwargs.get("initial_bases") or []
    targets = kwargs.get("target_bases")
    spread_all = kwargs.get("target_all_bases")
    if targets is not None and spread_all is not None:
        raise InvalidArgumentError("pass target_bases or target_all_bases, not both")
    if isinstance(targets, str):
        targets = [targets]
    if targets is not None and not (
        isinstance(targets, (list, tuple)) and all(isinstance(t, (str, os.PathLike)) for t in targets)
    ):
        raise InvalidArgumentError(f"target_bases takes a list of base names or paths, got {targets!r}")
    if spread_all is not None and not isinstance(spread_all, bool):
        raise InvalidArgumentError(f"target_all_bases takes a bool, got {spread_all!r}")
    if initial and mode == "append" and os.path.isdir(os.path.join(path, "_versions")):
        raise InvalidArgumentError("Cannot register new bases in Append mode. Only CREATE mode can register new bases.")
    options = _storage_options(storage_options)
    new_bases = native_bases(list(initial), {}, 1)
    if kwargs.get("base_store_params"):
        options = dict(options or {})
        options.update(_scoped_store_params(kwargs["base_store_params"], new_bases, path, options))
    native = _native_dataset.write_with_bases(
        path,
        reader,
        new_bases,
        targets=[os.fspath(t) for t in targets or []],
        target_all_bases=spread_all,
        options={
            "mode": mode,
            "max_rows_per_file": max_rows_per_file,
            "max_bytes_per_file": max_bytes_per_file,
            "data_storage_version": data_storage_version,
            "commit_message": commit_message,
            "storage_options": options,
            "commit_lock": kwargs.get("commit_lock"),
        },
    )
    return native, options


def _scoped_store_params(params: Any, new_bases: List[Tuple], path: str, options: Dict[str, str]) -> Dict[str, str]:
    """pylance's ``base_store_params={base_uri: {key: value}}`` as ``base_{id}.{key}``
    storage options, for the bases being registered and those the dataset at ``path`` has
    (runtime only: nothing is stored in the manifest)."""
    if not isinstance(params, dict) or not all(
        isinstance(k, str) and isinstance(v, dict) and all(isinstance(x, str) for kv in v.items() for x in kv)
        for k, v in params.items()
    ):
        raise InvalidArgumentError(f"base_store_params maps base paths to dicts of string options, got {params!r}")

    def norm(p: str) -> str:
        p = _paths.native_path(p)
        return (p if "://" in p else os.path.abspath(p)).rstrip("/")

    ids = {norm(p): bid for bid, _, _, p in new_bases}
    if os.path.isdir(os.path.join(path, "_versions")) or "://" in path:
        try:
            existing = _native_dataset.ds_base_paths(
                _native_dataset.Dataset.open(path, None, _storage_options(options or None))
            )
        except LanceNotFoundError:  # no dataset there yet: only the new bases
            existing = []
        ids.update({norm(p): bid for bid, _, _, p in existing})
    out = {}
    for uri, opts in params.items():
        bid = ids.get(norm(uri))
        if bid is not None:
            out.update({f"base_{bid}.{k}": v for k, v in opts.items()})
    return out


def is_base_option(key: str) -> bool:
    """Whether a storage option configures one base path (``base_{id}.{key}``)."""
    head, dot, rest = key.partition(".")
    return bool(dot and rest) and head.startswith("base_") and head[5:].isdigit()
