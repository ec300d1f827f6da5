"""Table versions and transactions of :class:`DirectoryNamespace`: listing and describing
versions, committing one through the namespace (``create_table_version``, the managed
versioning protocol pylance 14 speaks), deleting versions, and describing transactions.

The table's ``_versions/`` directory is the version store, as in pylance's directory
namespace: a version is its manifest file there (``{2^64-1-v:020d}.manifest``, or
``{v}.manifest`` for the V1 naming scheme).
"""

from __future__ import annotations

from typing import Any, List, Optional, Set, Tuple

import lance_namespace as ln

from .._native import storage as _native_storage
from ._access import TableAccess, coerce, ident
from ._catalog import object_id
from ._data import translated

__all__ = ["Versions"]


def version_of(name: str) -> Optional[int]:
    """The version a manifest file name holds (None for other files: staged manifests,
    ``latest_version_hint.json``); the table crate's naming rule.

    >>> version_of("18446744073709551613.manifest"), version_of("7.manifest"), version_of("7.manifest-x")
    (2, 7, None)
    """
    return _native_storage.manifest_version(name)


def manifest_name(version: int, naming_scheme: Optional[str]) -> str:
    """The file name of ``version``'s manifest under a naming scheme (``V2`` by default)."""
    return _native_storage.manifest_name(version, naming_scheme)


class Versions(TableAccess):
    """Mixin of :class:`DirectoryNamespace`: versions and transactions."""

    def _versions_dir(self, request: Any) -> Tuple[str, str]:
        """``(table directory, its _versions directory)`` for the request's table and branch."""
        parts = ident(request)
        rel = self._require_table(self._rows(), parts)
        branch = getattr(request, "branch", None)
        if branch and branch != "main":
            if any(seg in ("", ".", "..") for seg in branch.split("/")) or "\\" in branch:
                raise ln.InvalidInputError(f"Invalid input: bad branch name {branch!r}")
            return rel, f"{rel}/tree/{branch}/_versions"
        return rel, f"{rel}/_versions"

    def _listed(self, vdir: str) -> List[Tuple[int, str]]:
        """``(version, file name)`` of every manifest in ``vdir``, oldest first."""
        out = []
        for name in self._fs.list_files(vdir):
            v = version_of(name)
            if v is not None:
                out.append((v, name))
        return sorted(out)

    def _version(self, vdir: str, version: int, name: str, with_time: bool = True) -> Any:
        head = self._fs.head(f"{vdir}/{name}")
        size, millis, e_tag = head if head is not None else (None, None, None)
        return ln.TableVersion(
            version=version,
            manifest_path=self._fs.store_path(f"{vdir}/{name}"),
            manifest_size=size,
            e_tag=e_tag,
            timestamp_millis=millis if with_time else None,
        )

    def list_table_versions(self, request: Any) -> ln.ListTableVersionsResponse:
        """The table's versions, oldest first (``descending=True``: newest first), paged
        by ``limit``/``page_token``; each with its manifest's store path, size, entity tag
        and time. A declared table has none. Requests may be models or dicts.

        >>> ns.list_table_versions({"id": ["t"], "limit": 1, "descending": True})  # doctest: +SKIP
        """
        req = coerce(request, "ListTableVersionsRequest")
        _, vdir = self._versions_dir(req)
        listed = self._listed(vdir)
        if req.descending:
            listed.reverse()
        if req.page_token:
            try:
                token = int(req.page_token)
            except ValueError:
                raise ln.InvalidInputError(f"Invalid input: bad page_token {req.page_token!r}") from None
            listed = [(v, n) for v, n in listed if (v < token if req.descending else v > token)]
        token_out = None
        if req.limit and len(listed) > req.limit:
            listed = listed[: req.limit]
            token_out = str(listed[-1][0])
        return ln.ListTableVersionsResponse(
            versions=[self._version(vdir, v, n) for v, n in listed], page_token=token_out
        )

    def describe_table_version(self, request: Any) -> ln.DescribeTableVersionResponse:
        """One version (the latest when ``version`` is None); ``TableVersionNotFoundError``
        when it does not exist. Requests may be models or dicts."""
        req = coerce(request, "DescribeTableVersionRequest")
        _, vdir = self._versions_dir(req)
        listed = self._listed(vdir)
        if req.version is None:
            if not listed:
                raise ln.TableVersionNotFoundError(
                    f"Table version not found: table '{object_id(ident(req))}' has no version yet"
                )
            return ln.DescribeTableVersionResponse(version=self._version(vdir, *listed[-1]))
        for v, name in listed:
            if v == req.version:
                return ln.DescribeTableVersionResponse(version=self._version(vdir, v, name))
        raise ln.TableVersionNotFoundError(f"Table version not found: {req.version}")

    def create_table_version(self, request: Any) -> ln.CreateTableVersionResponse:
        """Commits version ``version`` from the staged manifest at ``manifest_path`` (its
        object-store path, as pylance's writers send it): refused unless ``version`` is the
        next one (``ConcurrentModificationError``), and unless the staged file exists in
        the table's ``_versions/`` directory (``InvalidInputError``). The staged file
        becomes the version's manifest (named by ``naming_scheme``, ``V2`` by default)
        with an atomic create, then is removed. Requests may be models or dicts.

        >>> ns.create_table_version({"id": ["t"], "version": 3,
        ...     "manifest_path": staged, "naming_scheme": "V2"})  # doctest: +SKIP
        """
        req = coerce(request, "CreateTableVersionRequest")
        rel, vdir = self._versions_dir(req)
        where = self._fs.path(rel)
        version = req.version
        if version is None or version < 1:
            raise ln.InvalidInputError(f"Invalid input: version must be a positive number, got {version!r}")
        final = f"{vdir}/{manifest_name(version, req.naming_scheme)}"
        staged = self._fs.from_store_path(req.manifest_path or "")
        staged_ok = (
            staged is not None
            and staged.rsplit("/", 1)[0] == vdir
            and version_of(staged.rsplit("/", 1)[-1]) is None
            and self._fs.exists(staged)
        )
        if not staged_ok or staged is None:
            raise ln.InvalidInputError(
                f"Invalid input: Staging manifest not found at '{req.manifest_path}' for version {version} "
                f"of table at '{where}'"
            )
        data = self._fs.read(staged)
        listed = self._listed(vdir)
        scheme = (req.naming_scheme or "V2").upper()
        existing = {"V2" if len(name.split(".")[0]) == 20 else "V1" for _, name in listed}
        if existing and scheme not in existing:
            # Mixed names make the table unreadable (pylance accepts them, then cannot open it).
            raise ln.InvalidInputError(
                f"Invalid input: the table at '{where}' names its manifests {existing.pop()}, "
                f"version {version} asks for {scheme}"
            )
        if any(v == version for v, _ in listed) or self._fs.exists(final):
            return self._settle_existing(vdir, final, version, data, staged, where)
        latest = listed[-1][0] if listed else 0
        if version != latest + 1:
            raise ln.ConcurrentModificationError(
                f"Concurrent modification: Version CAS failed for table at '{where}': requested {version}, "
                f"expected {latest + 1} (latest {latest})"
            )
        if not self._fs.put_if_absent(final, data):
            return self._settle_existing(vdir, final, version, data, staged, where)
        self._fs.delete(staged)
        return ln.CreateTableVersionResponse(
            version=self._version(vdir, version, final.rsplit("/", 1)[1], with_time=False)
        )

    def _settle_existing(self, vdir: str, final: str, version: int, data: bytes, staged: str, where: str) -> Any:
        """A version that exists already: the same manifest (a retried request whose first
        attempt landed) succeeds; another one is a conflict."""
        try:
            same = self._fs.exists(final) and self._fs.read(final) == data
        except OSError:
            same = False
        if not same:
            raise ln.ConcurrentModificationError(
                f"Concurrent modification: Version {version} already exists for table at '{where}' "
                "with different content"
            )
        self._fs.delete(staged)
        return ln.CreateTableVersionResponse(
            version=self._version(vdir, version, final.rsplit("/", 1)[1], with_time=False)
        )

    def batch_delete_table_versions(self, request: Any) -> ln.BatchDeleteTableVersionsResponse:
        """Deletes the manifests of the versions in ``ranges`` (each
        ``[start_version, end_version)``, end excluded, as pylance reads them); returns how
        many existed. Requests may be models or dicts."""
        req = coerce(request, "BatchDeleteTableVersionsRequest")
        _, vdir = self._versions_dir(req)
        doomed: Set[int] = set()
        for r in req.ranges or []:
            doomed.update(range(r.start_version, r.end_version))
        count = 0
        for v, name in self._listed(vdir):
            if v in doomed:
                self._fs.delete(f"{vdir}/{name}")
                count += 1
        return ln.BatchDeleteTableVersionsResponse(deleted_count=count)

    # ------------------------------------------------------------------ transactions

    def _transaction(self, request: Any) -> ln.DescribeTransactionResponse:
        parts = ident(request)
        if len(parts) < 2:
            raise ln.InvalidInputError(
                f"Invalid input: Transaction request id must include table id and transaction identifier, got {parts!r}"
            )
        table, key = parts[:-1], parts[-1]
        ds = self._open(ln.DescribeTableRequest(id=table))
        with translated():
            if key.isdigit():
                version = int(key)
                if not 1 <= version <= ds.latest_version:
                    raise ln.TransactionNotFoundError(f"Transaction not found: no version {version}")
                txn = ds.read_transaction(version)
            else:
                version, txn = 0, None
                for v in range(ds.latest_version, 0, -1):
                    t = ds.read_transaction(v)
                    if t is not None and t.uuid == key:
                        version, txn = v, t
                        break
        if txn is None:
            raise ln.TransactionNotFoundError(f"Transaction not found: {key}")
        props = {str(k): str(v) for k, v in (txn.transaction_properties or {}).items()}
        props.update(
            version=str(version),
            read_version=str(txn.read_version),
            operation=type(txn.operation).__name__,
            uuid=txn.uuid,
        )
        return ln.DescribeTransactionResponse(status="SUCCEEDED", properties=props)

    def describe_transaction(self, request: Any) -> ln.DescribeTransactionResponse:
        """The transaction named by ``id`` = table id + (version number or transaction
        uuid): status ``SUCCEEDED`` and ``version``, ``read_version``, ``operation``,
        ``uuid`` and the transaction's own properties."""
        return self._transaction(coerce(request, "DescribeTransactionRequest"))

    def alter_transaction(self, request: Any) -> ln.AlterTransactionResponse:
        """Committed transactions cannot change: answers as :meth:`describe_transaction`
        (pylance ignores the actions too)."""
        req = coerce(request, "AlterTransactionRequest")
        described = self._transaction(req)
        return ln.AlterTransactionResponse(status=described.status, properties=described.properties)
