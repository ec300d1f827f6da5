"""Blob columns: large binary values (images, audio, video) stored out of line.

A scan returns a blob column as *descriptors* (where each value's bytes are), never the
bytes themselves; :meth:`LanceDataset.take_blobs` opens the values as lazy
:class:`BlobFile` objects and :meth:`LanceDataset.read_blobs` /
:meth:`LanceDataset.read_blob_ranges` fetch bytes directly. Names and behaviour follow
pylance 14:

* **Blob v1** (file formats 2.0 and 2.1): a ``large_binary`` field with metadata
  ``{"lance-encoding:blob": "true"}``; descriptors are ``struct<position, size>``.
* **Blob v2** (2.2, the default): :func:`blob_field` / :func:`blob_array` (the
  ``lance.blob.v2`` extension type); values are stored inline, in shared ("packed") or
  own ("dedicated") sidecar files, or referenced by URI (external); descriptors are
  ``struct<kind, position, size, blob_id, blob_uri>``.

>>> import tempfile, os, pyarrow as pa, lancelet
>>> uri = os.path.join(tempfile.mkdtemp(), "blobs.lance")
>>> schema = pa.schema([pa.field("id", pa.int64()), lancelet.blob_field("img")])
>>> t = pa.table({"id": [0, 1], "img": lancelet.blob_array([b"abc", None])}, schema=schema)
>>> ds = lancelet.write_dataset(t, uri)
>>> [f.read() if f else None for f in ds.take_blobs("img", indices=[0, 1])]
[b'abc', None]
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple, Union, cast

import pyarrow as pa

from ._native import dataset as _native_dataset
from .errors import InvalidArgumentError, LanceError, SchemaMismatchError

__all__ = [
    "Blob",
    "BlobArray",
    "BlobColumn",
    "BlobFile",
    "BlobType",
    "blob_array",
    "blob_field",
    "DEFAULT_BLOB_BUFFER_SIZE",
]

#: Read-ahead of a :class:`BlobFile` (bytes fetched at least per read), as pylance.
DEFAULT_BLOB_BUFFER_SIZE = 512 * 1024


class BlobColumn:
    """A binary (or large binary) pyarrow array read as file-like objects, one per row,
    as pylance's ``BlobColumn``: for small values handed to APIs that want files (image
    decoders, ...). Null rows give None. Blob columns of a dataset are read lazily with
    ``LanceDataset.take_blobs`` instead.

    >>> [f.read() for f in BlobColumn(pa.array([b"ab", b"c"]))]
    [b'ab', b'c']
    """

    def __init__(self, blob_column: Union[pa.Array, pa.ChunkedArray]):
        if not isinstance(blob_column, (pa.Array, pa.ChunkedArray)):
            raise ValueError(f"Expected a pyarrow.Array or pyarrow.ChunkedArray, got {type(blob_column)}")
        if not (pa.types.is_binary(blob_column.type) or pa.types.is_large_binary(blob_column.type)):
            raise ValueError(f"Expected a binary array, got {blob_column.type}")
        self.blob_column = blob_column

    def __iter__(self) -> "Iterable[Optional[io.BytesIO]]":
        for value in self.blob_column:
            data = value.as_py()
            yield None if data is None else io.BytesIO(data)

    def __len__(self) -> int:
        return len(self.blob_column)


BLOB_KEY = "lance-encoding:blob"
BLOB_V2_EXTENSION = "lance.blob.v2"
INLINE_THRESHOLD_KEY = "lance-encoding:blob-inline-size-threshold"
DEDICATED_THRESHOLD_KEY = "lance-encoding:blob-dedicated-size-threshold"
PACK_THRESHOLD_KEY = "lance-encoding:blob-pack-file-size-threshold"

_STORAGE = pa.struct(
    [
        pa.field("data", pa.large_binary()),
        pa.field("uri", pa.utf8()),
        pa.field("position", pa.uint64()),
        pa.field("size", pa.uint64()),
    ]
)


class BlobType(pa.ExtensionType):
    """The ``lance.blob.v2`` Arrow extension type: storage
    ``struct<data: large_binary, uri: string, position: uint64, size: uint64>`` (a
    two-field ``struct<data, uri>`` is accepted too).

    >>> BlobType().extension_name
    'lance.blob.v2'
    """

    def __init__(self, storage_type: Optional[pa.DataType] = None) -> None:
        super().__init__(storage_type or _STORAGE, BLOB_V2_EXTENSION)

    def __arrow_ext_serialize__(self) -> bytes:
        return b""

    @classmethod
    def __arrow_ext_deserialize__(cls, storage_type: pa.DataType, serialized: bytes) -> "BlobType":
        names = (
            [storage_type.field(i).name for i in range(storage_type.num_fields)]
            if pa.types.is_struct(storage_type)
            else []
        )
        if names[:2] != ["data", "uri"]:
            raise TypeError(f"lance.blob.v2 storage must be struct<data, uri, ...>, got {storage_type}")
        return cls(storage_type)

    def __arrow_ext_class__(self) -> type:
        return BlobArray

    def __reduce__(self) -> tuple:
        return BlobType, (self.storage_type,)


@dataclass(frozen=True)
class Blob:
    """One blob value to write: bytes (``data``) or a reference to an object (``uri``,
    optionally a byte range ``position``/``size`` of it).

    >>> Blob.from_bytes(b"abc").data, Blob.from_uri("s3://b/k", position=5, size=3).size
    (b'abc', 3)
    """

    data: Optional[bytes] = None
    uri: Optional[str] = None
    position: Optional[int] = None
    size: Optional[int] = None

    def __post_init__(self) -> None:
        if self.data is not None and self.uri is not None:
            raise ValueError("a Blob has either data or a uri, not both")
        if self.data is None and self.uri is None:
            raise ValueError("a Blob needs data or a uri")
        if (self.position is None) != (self.size is None):
            raise ValueError("position and size must be given together")
        if self.position is not None:
            if self.uri is None:
                raise ValueError("a byte range (position, size) needs a uri")
            if self.position < 0 or self.size < 0:  # type: ignore[operator]
                raise ValueError("position and size must not be negative")
            if self.size == 0:
                raise ValueError("a byte range must not be empty (size 0)")
        if self.uri is not None and not self.uri:
            raise ValueError("a blob uri must not be empty")

    @classmethod
    def from_bytes(cls, data: Union[bytes, bytearray, memoryview]) -> "Blob":
        """A blob holding ``data``."""
        return cls(data=bytes(data))

    @classmethod
    def from_uri(cls, uri: str, position: Optional[int] = None, size: Optional[int] = None) -> "Blob":
        """A reference to the object at ``uri`` (or its bytes ``position..position+size``)."""
        return cls(uri=uri, position=position, size=size)

    @classmethod
    def empty(cls) -> "Blob":
        """An empty (zero-byte) blob."""
        return cls(data=b"")


class BlobArray(pa.ExtensionArray):
    """An array of :class:`BlobType` (build one with :meth:`from_pylist` or
    :func:`blob_array`)."""

    @classmethod
    def from_pylist(cls, values: Iterable[Any]) -> "BlobArray":
        """Values: ``bytes``-like (stored data), ``str`` (an external URI), :class:`Blob`
        or ``None`` (null).

        >>> BlobArray.from_pylist([b"x", None]).type.extension_name
        'lance.blob.v2'
        """
        data: List[Optional[bytes]] = []
        uris: List[Optional[str]] = []
        pos: List[Optional[int]] = []
        sizes: List[Optional[int]] = []
        valid: List[bool] = []
        for v in values:
            if v is None:
                data.append(None)
                uris.append(None)
                pos.append(None)
                sizes.append(None)
                valid.append(False)
                continue
            if isinstance(v, (bytes, bytearray, memoryview)):
                v = Blob.from_bytes(v)
            elif isinstance(v, str):
                v = Blob.from_uri(v)
            elif not isinstance(v, Blob):
                raise TypeError(f"blob values are bytes, str (a URI), Blob or None, got {type(v).__name__}")
            data.append(v.data)
            uris.append(v.uri)
            pos.append(v.position)
            sizes.append(v.size)
            valid.append(True)
        mask = pa.array([not x for x in valid], pa.bool_())
        storage = pa.StructArray.from_arrays(
            [
                pa.array(data, pa.large_binary()),
                pa.array(uris, pa.utf8()),
                pa.array(pos, pa.uint64()),
                pa.array(sizes, pa.uint64()),
            ],
            fields=list(_STORAGE),
            mask=mask,
        )
        return cast(BlobArray, pa.ExtensionArray.from_storage(BlobType(), storage))


def _register() -> None:
    try:
        pa.register_extension_type(BlobType())
    except pa.ArrowKeyError:
        pass  # registered already (by pylance, or an earlier import)


_register()


def blob_field(
    name: str,
    *,
    nullable: bool = True,
    inline_size_threshold: Optional[int] = None,
    dedicated_size_threshold: Optional[int] = None,
    pack_file_size_threshold: Optional[int] = None,
) -> pa.Field:
    """A blob v2 field; thresholds (bytes) override where values go: inline up to
    ``inline_size_threshold`` (default 64 KiB), their own sidecar above
    ``dedicated_size_threshold`` (default 4 MiB), shared sidecars of at most
    ``pack_file_size_threshold`` (default 1 GiB) in between.

    >>> blob_field("img", inline_size_threshold=0).metadata
    {b'lance-encoding:blob-inline-size-threshold': b'0'}
    """
    md: Dict[str, str] = {}
    for key, v, least in (
        (INLINE_THRESHOLD_KEY, inline_size_threshold, 0),
        (DEDICATED_THRESHOLD_KEY, dedicated_size_threshold, 1),
        (PACK_THRESHOLD_KEY, pack_file_size_threshold, 1),
    ):
        if v is None:
            continue
        if isinstance(v, bool) or not isinstance(v, int) or v < least:
            raise ValueError(f"{key.split(':')[1]} must be an integer >= {least}, got {v!r}")
        md[key] = str(v)
    return pa.field(name, BlobType(), nullable=nullable, metadata=md or None)


def blob_array(values: Iterable[Any]) -> BlobArray:
    """A :class:`BlobArray` from bytes, URIs, :class:`Blob` values and ``None``.

    >>> len(blob_array([b"a", "file:///data/x.bin", None]))
    3
    """
    return BlobArray.from_pylist(values)


# ---------------------------------------------------------------------------------------
# Reading
# ---------------------------------------------------------------------------------------

_Location = Tuple[str, bool, int, int]


class BlobFile(io.BufferedIOBase):
    """One blob opened for reading: a read-only, seekable binary file that fetches its
    bytes lazily (at least ``buffer_size`` bytes per fetch, kept for the next reads).

    >>> with ds.take_blobs("img", indices=[0])[0] as f:  # doctest: +SKIP
    ...     header = f.read(16); f.seek(-4, io.SEEK_END); tail = f.read()
    """

    def __init__(
        self,
        native: Any,
        location: _Location,
        buffer_size: int = DEFAULT_BLOB_BUFFER_SIZE,
        column: Optional[str] = None,
        row: Optional[str] = None,
    ):
        super().__init__()
        self._native = native
        self._loc = location
        self._column = column
        self._row = row
        self._size = int(location[3])
        self._pos = 0
        self._buffer_size = max(int(buffer_size), 0)
        self._buf = b""
        self._buf_start = 0
        self._bytes_read = 0
        self._read_requests = 0

    def __repr__(self) -> str:
        return f"<BlobFile size={self._size}>"

    def __reduce_ex__(self, protocol: Any) -> Any:
        # pylance's BlobFile does not pickle either; it is an open reader of one blob.
        raise TypeError(
            "cannot pickle a lancelet.BlobFile (an open reader of one blob): pickle the dataset "
            "(or its URI and version) and the row's id, address or index instead, and call "
            "take_blobs(column, ...) in the other process"
        )

    def _fetch(self, ranges: Sequence[Tuple[int, int]]) -> List[bytes]:
        path, external, position, size = self._loc
        reqs = [(path, external, position, size, s, e) for s, e in ranges]
        try:
            bufs, nbytes, nreqs = _native_dataset.read_blob_ranges_counted(self._native, reqs)
        except LanceError as e:
            raise _in_context(e, _where(self._column, self._row, self._loc)) from None
        self._bytes_read += nbytes
        self._read_requests += nreqs
        return list(bufs)

    @property
    def bytes_read(self) -> int:
        """Bytes this file has fetched from storage so far, as counted by the I/O layer
        (read-ahead included): a ``read_range`` of a large blob fetches only that range.

        >>> f = ds.take_blobs("img", indices=[0])[0]  # doctest: +SKIP
        >>> f.read_range(1_000_000, 10); f.bytes_read  # doctest: +SKIP
        10
        """
        return self._bytes_read

    @property
    def read_requests(self) -> int:
        """Read requests this file has sent to storage so far."""
        return self._read_requests

    def size(self) -> int:
        """The blob's length in bytes."""
        return self._size

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        self._checkClosed()
        return self._pos

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        """Moves the cursor (``SEEK_SET``, ``SEEK_CUR`` or ``SEEK_END``); returns it."""
        self._checkClosed()
        if whence == io.SEEK_SET:
            target = offset
        elif whence == io.SEEK_CUR:
            target = self._pos + offset
        elif whence == io.SEEK_END:
            target = self._size + offset
        else:
            raise ValueError(f"invalid whence ({whence}, should be 0, 1 or 2)")
        if target < 0:
            raise ValueError(f"negative seek position {target}")
        self._pos = target
        return target

    def read(self, size: Optional[int] = -1) -> bytes:
        """Up to ``size`` bytes from the cursor (all the rest when negative or None)."""
        self._checkClosed()
        end = self._size if size is None or size < 0 else min(self._size, self._pos + size)
        if end <= self._pos:
            return b""
        start = self._pos
        buf_end = self._buf_start + len(self._buf)
        if not (self._buf_start <= start and end <= buf_end):
            fetch_end = min(self._size, max(end, start + self._buffer_size))
            self._buf = self._fetch([(start, fetch_end)])[0]
            self._buf_start = start
        out = self._buf[start - self._buf_start : end - self._buf_start]
        self._pos = end
        return out

    def read1(self, size: int = -1) -> bytes:
        return self.read(size)

    def readall(self) -> bytes:
        return self.read(-1)

    def readinto(self, b: Any) -> int:
        """Reads into the writable buffer ``b``; returns the number of bytes read."""
        view = memoryview(b).cast("B")
        data = self.read(len(view))
        view[: len(data)] = data
        return len(data)

    def readinto1(self, b: Any) -> int:
        return self.readinto(b)

    def read_range(self, offset: int, length: int) -> bytes:
        """Bytes ``offset..offset+length`` (cut at the end); the cursor does not move."""
        return self.read_ranges([(offset, length)])[0]

    def read_ranges(self, ranges: Sequence[Tuple[int, int]]) -> List[bytes]:
        """Several ``(offset, length)`` ranges at once (fetched concurrently); the cursor
        does not move."""
        self._checkClosed()
        spans = []
        for off, length in ranges:
            if off < 0 or length < 0:
                raise ValueError("offset and length must not be negative")
            s = min(off, self._size)
            spans.append((s, min(self._size, s + length)))
        return self._fetch(spans) if spans else []

    def close(self) -> None:
        self._buf = b""
        super().close()

    def write(self, b: Any) -> int:
        raise io.UnsupportedOperation("BlobFile is read-only")

    def detach(self) -> Any:
        raise io.UnsupportedOperation("BlobFile cannot be detached")


def _where(column: Optional[str], row: Optional[str], loc: Optional[_Location]) -> str:
    """Which blob, for error messages: its column, its row, and where its bytes are."""
    text = "the blob"
    if column is not None:
        text += f" of column {column!r}"
    if row is not None:
        text += f" at {row}"
    if loc is not None:
        text += f" (external URI {loc[0]})" if loc[1] else f" (stored in {loc[0]})"
    return text


def _in_context(err: LanceError, where: str) -> LanceError:
    """``err`` (same class) with a message that says which blob could not be read first."""
    try:
        return type(err)(f"cannot read {where}: {err}")
    except Exception:  # pragma: no cover - every lancelet error takes one message
        return err


def _first_failing(probe: Any, n: int) -> Optional[int]:
    """The first ``i < n`` for which ``probe(i)`` raises a LanceError (only called once a
    batch call failed, to say which item it was)."""
    if n == 1:
        return 0
    for i in range(n):
        try:
            probe(i)
        except LanceError:
            return i
    return None


def _external_uri(ds: Any, column: str, addr: int) -> Optional[str]:
    """The external URI in ``column``'s descriptor at row address ``addr`` (None if it is
    not external or cannot be read)."""
    try:
        t = ds.to_table(columns=[column], filter=f"_rowaddr = {int(addr)}", with_row_address=True)
        value = t.column(0).to_pylist()[0] if t.num_rows else None
    except Exception:
        return None
    return value.get("blob_uri") or None if isinstance(value, dict) else None


def _row_labels(ids: Any, addresses: Any, indices: Any, n: int) -> List[str]:
    """How the caller named each selected row (``row index 3``...), for error messages."""
    for kind, values in (("row id", ids), ("row address", addresses), ("row index", indices)):
        if values is not None:
            if isinstance(values, (pa.Array, pa.ChunkedArray)):
                values = values.to_pylist()
            elif hasattr(values, "tolist"):
                values = values.tolist()
            return [f"{kind} {v}" for v in list(values)[:n]]
    return [f"row {i}" for i in range(n)]


def _as_list(values: Any, what: str) -> List[int]:
    if isinstance(values, (pa.Array, pa.ChunkedArray)):
        values = values.to_pylist()
    elif hasattr(values, "tolist"):
        values = values.tolist()
    out = []
    for v in values:
        if isinstance(v, bool) or not isinstance(v, int) or v < 0:
            raise InvalidArgumentError(f"{what} must be non-negative integers, got {v!r}")
        out.append(int(v))
    return out


def _addresses(ds: Any, ids: Any = None, addresses: Any = None, indices: Any = None) -> List[int]:
    """Row addresses of the rows selected by exactly one of ids / addresses / indices."""
    given = [x is not None for x in (ids, addresses, indices)]
    if sum(given) != 1:
        raise ValueError("Exactly one of ids, indices, or addresses must be specified")
    if addresses is not None:
        return _as_list(addresses, "addresses")
    if indices is not None:
        idx = _as_list(indices, "indices")
        if not idx:
            return []
        t = ds.take(idx, columns=["_rowaddr"])
        return [int(a) for a in t.column("_rowaddr").to_pylist()]
    row_ids = _as_list(ids, "ids")
    if not ds.has_stable_row_ids or not row_ids:
        return row_ids  # without stable row ids a row id is its address
    t = ds._take_rows(row_ids, columns=["_rowaddr"])
    return [int(a) for a in t.column("_rowaddr").to_pylist()]


def _check_blob_column(ds: Any, column: str) -> None:
    if not isinstance(column, str):
        raise TypeError(f"blob_column must be a string, got {type(column).__name__}")
    if not is_blob_field(_find_field(ds.schema, column)):
        raise ValueError(f"the column {column!r} is not a blob column")


def _find_field(schema: pa.Schema, path: str) -> Optional[pa.Field]:
    if path in schema.names:
        return schema.field(path)
    parts = path.split(".")
    if parts[0] not in schema.names:
        return None
    f = schema.field(parts[0])
    for p in parts[1:]:
        t = f.type.storage_type if isinstance(f.type, pa.ExtensionType) else f.type
        if not pa.types.is_struct(t) or t.get_field_index(p) < 0:
            return None
        f = t.field(p)
    return f


def is_blob_field(f: Optional[pa.Field]) -> bool:
    """Whether ``f`` is a blob column (v1 ``large_binary`` marked blob, or v2)."""
    if f is None:
        return False
    if isinstance(f.type, pa.ExtensionType) and f.type.extension_name == BLOB_V2_EXTENSION:
        return True
    md = f.metadata or {}
    if md.get(b"ARROW:extension:name") == BLOB_V2_EXTENSION.encode():
        return True
    return md.get(BLOB_KEY.encode(), b"").lower() == b"true"


def locations(ds: Any, column: str, addrs: List[int], rows: Optional[List[str]] = None) -> List[Optional[_Location]]:
    """Where each row's blob is: ``(path, external, position, size)`` or ``None``.
    ``rows`` names the rows for error messages (default: by row address)."""
    if not addrs:
        return []
    try:
        return list(_native_dataset.blob_locations(ds._native, column, addrs))
    except LanceError as e:
        err = e
    # Say which blob: the first row whose location cannot be found on its own (an external
    # blob stored without its size is looked up to learn it), and its URI.
    i = _first_failing(lambda j: _native_dataset.blob_locations(ds._native, column, [addrs[j]]), len(addrs))
    if i is None:
        raise _in_context(err, _where(column, None, None)) from None
    row = rows[i] if rows is not None else f"row address {addrs[i]}"
    uri = _external_uri(ds, column, addrs[i])
    raise _in_context(err, _where(column, row, (uri, True, 0, 0) if uri else None)) from None


def _read(ds: Any, column: str, reqs: List[tuple], rows: List[str], locs: List[_Location]) -> List[bytes]:
    """``_native_dataset.read_blob_ranges(reqs)``; a failure names the blob (``rows[i]``/``locs[i]``
    describe ``reqs[i]``) that cannot be read."""
    if not reqs:
        return []
    try:
        return list(_native_dataset.read_blob_ranges(ds._native, reqs))
    except LanceError as e:
        err = e

    def probe(j: int) -> None:  # the last byte of request j: a missing or short object fails
        path, ext, pos, size, start, end = reqs[j]
        if end > start:
            _native_dataset.read_blob_ranges(ds._native, [(path, ext, pos, size, end - 1, end)])

    i = _first_failing(probe, len(reqs))
    if i is None:
        raise _in_context(err, _where(column, None, None)) from None
    raise _in_context(err, _where(column, rows[i], locs[i])) from None


def take_blobs(
    ds: Any,
    blob_column: str,
    ids: Any = None,
    addresses: Any = None,
    indices: Any = None,
    *,
    buffer_size: int = DEFAULT_BLOB_BUFFER_SIZE,
) -> List[Optional[BlobFile]]:
    _check_blob_column(ds, blob_column)
    addrs = _addresses(ds, ids, addresses, indices)
    rows = _row_labels(ids, addresses, indices, len(addrs))
    return [
        None if loc is None else BlobFile(ds._native, loc, buffer_size, blob_column, row)
        for loc, row in zip(locations(ds, blob_column, addrs, rows), rows)
    ]


def read_blobs(
    ds: Any,
    blob_column: str,
    ids: Any = None,
    addresses: Any = None,
    indices: Any = None,
) -> List[Tuple[int, Optional[bytes]]]:
    _check_blob_column(ds, blob_column)
    addrs = _addresses(ds, ids, addresses, indices)
    rows = _row_labels(ids, addresses, indices, len(addrs))
    locs = locations(ds, blob_column, addrs, rows)
    present = [(row, loc) for row, loc in zip(rows, locs) if loc is not None]
    reqs = [(p, ext, pos, size, 0, size) for _, (p, ext, pos, size) in present]
    data = iter(_read(ds, blob_column, reqs, [r for r, _ in present], [loc for _, loc in present]))
    return [(a, None if loc is None else next(data)) for a, loc in zip(addrs, locs)]


def read_blob_ranges(
    ds: Any,
    blob_column: str,
    requests: Sequence[Tuple[int, int, int]],
    selector: str,
) -> List[Tuple[int, int, Optional[bytes]]]:
    _check_blob_column(ds, blob_column)
    if selector not in ("ids", "addresses", "indices"):
        raise ValueError(f"selector must be 'ids', 'addresses' or 'indices', got {selector!r}")
    reqs = [tuple(r) for r in requests]
    for r in reqs:
        if len(r) != 3 or any(isinstance(x, bool) or not isinstance(x, int) or x < 0 for x in r):
            raise InvalidArgumentError(f"a range request is (row, offset, length) of non-negative ints, got {r!r}")
    addrs = _addresses(ds, **{selector: [r[0] for r in reqs]})
    kind = {"ids": "row id", "addresses": "row address", "indices": "row index"}[selector]
    rows = [f"{kind} {r[0]}" for r in reqs]
    locs = locations(ds, blob_column, addrs, rows)
    native_reqs, req_rows, req_locs = [], [], []
    for i, ((_, off, length), addr, loc) in enumerate(zip(reqs, addrs, locs)):
        if loc is None:
            continue
        req_rows.append(rows[i])
        req_locs.append(loc)
        if off + length > loc[3]:
            raise ValueError(
                f"Blob range request {i} for row address {addr} is invalid: "
                f"Blob range end {off + length} exceeds blob size {loc[3]}"
            )
        native_reqs.append((loc[0], loc[1], loc[2], loc[3], off, off + length))
    data = iter(_read(ds, blob_column, native_reqs, req_rows, req_locs))
    return [(i, a, None if loc is None else next(data)) for i, (a, loc) in enumerate(zip(addrs, locs))]


# ---------------------------------------------------------------------------------------
# Scans: blob_handling and to_pandas(blob_mode=...)
# ---------------------------------------------------------------------------------------

BLOB_HANDLING = ("blobs_descriptions", "all_binary", "all_descriptions")
BLOB_MODES = ("lazy", "bytes", "descriptions")


def descriptor_columns(schema: pa.Schema) -> List[str]:
    """Top-level columns of a scan result that hold blob descriptors."""
    out = []
    for f in schema:
        md = f.metadata or {}
        if pa.types.is_struct(f.type) and md.get(BLOB_KEY.encode(), b"").lower() == b"true":
            out.append(f.name)
    return out


def to_pandas(ds: Any, table_of: Any, blob_mode: str) -> Any:
    """A DataFrame where blob cells are :class:`BlobFile` (``lazy``), bytes or dicts."""
    if blob_mode not in BLOB_MODES:
        raise ValueError(f"blob_mode must be one of {BLOB_MODES}, got {blob_mode!r}")
    if blob_mode == "descriptions":
        return table_of(False).to_pandas()
    table = table_of(True)
    names = descriptor_columns(table.schema)
    addrs = [int(a) for a in table.column("_rowaddr").to_pylist()] if names else []
    drop = table.drop_columns(["_rowaddr"]) if "_rowaddr" in table.schema.names else table
    df = drop.to_pandas()
    for n in names:
        if blob_mode == "bytes":
            df[n] = [b for _, b in read_blobs(ds, n, addresses=addrs)]
        else:
            df[n] = take_blobs(ds, n, addresses=addrs)
    return df


#: Child names of the descriptor structs scans return for blob v2 and blob v1 columns.
_DESCRIPTOR_LAYOUTS = ({"kind", "position", "size", "blob_id", "blob_uri"}, {"position", "size"})


def _descriptor_paths(fields: Iterable[pa.Field], prefix: str = "") -> List[str]:
    out = []
    for f in fields:
        path = prefix + f.name
        t = f.type
        md = f.metadata or {}
        if (
            pa.types.is_struct(t)
            and md.get(BLOB_KEY.encode(), b"").lower() == b"true"
            and {t.field(i).name for i in range(t.num_fields)} in _DESCRIPTOR_LAYOUTS
        ):
            out.append(path)
        elif pa.types.is_struct(t):
            out.extend(_descriptor_paths((t.field(i) for i in range(t.num_fields)), path + "."))
        elif pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
            out.extend(_descriptor_paths([t.value_field], path + "."))
    return out


def refuse_descriptors(schema: pa.Schema) -> None:
    """Raises ``SchemaMismatchError`` when data to be written holds blob descriptors (a
    scan's blob column written back): they say where bytes are in the source dataset's
    files, so written as values they would point at the wrong bytes."""
    paths = _descriptor_paths(schema)
    if not paths:
        return
    which = ", ".join(repr(p) for p in paths)
    raise SchemaMismatchError(
        f"column{'s' if len(paths) > 1 else ''} {which} hold{'' if len(paths) > 1 else 's'} blob descriptors "
        "(what to_table() and scans return for a blob column: where each blob's bytes are stored, "
        "not the bytes), which cannot be written as blob values. Read the bytes instead: scan with "
        'blob_handling="all_binary" (ds.to_table(blob_handling="all_binary") returns the bytes), or '
        "use ds.take_blobs(column, ...) / ds.read_blobs(column, ...) and write them with "
        "lancelet.blob_array(...)"
    )


def has_blobs(schema: pa.Schema) -> bool:
    """Whether ``schema`` has a top-level blob column."""
    return any(is_blob_field(f) for f in schema)


def wants_binary(blob_handling: Optional[str]) -> bool:
    """Checks a scan's ``blob_handling``; True for ``"all_binary"``."""
    if blob_handling is None:
        return False
    if blob_handling not in BLOB_HANDLING:
        raise ValueError(f"blob_handling must be one of {BLOB_HANDLING}, got {blob_handling!r}")
    return blob_handling == "all_binary"


#: ``write_dataset`` keywords for blob v2 columns (pylance's names).
WRITE_OPTIONS = ("blob_pack_file_size_threshold", "external_blob_mode", "allow_external_blob_outside_bases")


def write_options(kwargs: Dict[str, Any]) -> Optional[Tuple[Optional[int], bool, bool]]:
    """Checks the blob keywords of a write: ``(pack threshold, ingest, allow outside
    bases)``, or ``None`` when none is given."""
    if not any(k in kwargs for k in WRITE_OPTIONS):
        return None
    pack = kwargs.get("blob_pack_file_size_threshold")
    if pack is not None and (isinstance(pack, bool) or not isinstance(pack, int) or pack <= 0):
        raise ValueError(f"blob_pack_file_size_threshold must be a positive integer, got {pack!r}")
    mode = kwargs.get("external_blob_mode") or "reference"
    if mode not in ("reference", "ingest"):
        raise ValueError(f'external_blob_mode must be "reference" or "ingest", got {mode!r}')
    outside = bool(kwargs.get("allow_external_blob_outside_bases") or False)
    if outside and mode != "reference":
        raise ValueError('allow_external_blob_outside_bases is only valid with external_blob_mode="reference"')
    return (pack, mode == "ingest", outside)


def scan_schema(schema: pa.Schema) -> pa.Schema:
    """The schema a scan returns for dataset schema ``schema``: top-level blob columns as
    their descriptors (v1: ``struct<position, size>``; v2: ``struct<kind, position, size,
    blob_id, blob_uri>``), as :meth:`LanceDataset.to_table` returns them."""
    fields = []
    for f in schema:
        if not is_blob_field(f):
            fields.append(f)
            continue
        v2 = (isinstance(f.type, pa.ExtensionType) and f.type.extension_name == BLOB_V2_EXTENSION) or (
            f.metadata or {}
        ).get(b"ARROW:extension:name") == BLOB_V2_EXTENSION.encode()
        if v2:
            t = pa.struct(
                [
                    pa.field("kind", pa.uint8(), False),
                    pa.field("position", pa.uint64(), False),
                    pa.field("size", pa.uint64(), False),
                    pa.field("blob_id", pa.uint32(), False),
                    pa.field("blob_uri", pa.utf8(), False),
                ]
            )
            md = {BLOB_KEY: "true", "lance-encoding:packed": "true"}
        else:
            t = pa.struct([pa.field("position", pa.uint64()), pa.field("size", pa.uint64())])
            md = {BLOB_KEY: "true"}
        fields.append(pa.field(f.name, t, f.nullable, metadata=md))
    return pa.schema(fields, metadata=schema.metadata)
