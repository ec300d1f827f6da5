"""Reading the few protobuf fields tests compare between the two libraries' datasets:
the fields of a manifest (ids, parents, types, extension names, metadata), its feature
flags and data format, and the schema a data file records (global buffer 0). A minimal
wire-format reader, so that tests see the bytes on disk rather than either library's API.
"""

from __future__ import annotations

import glob
import os
import struct
from typing import Any, Dict, List, Tuple


def _varint(b: bytes, i: int) -> Tuple[int, int]:
    out = shift = 0
    while True:
        c = b[i]
        i += 1
        out |= (c & 0x7F) << shift
        shift += 7
        if c < 0x80:
            return out, i


def pb_fields(b: bytes) -> List[Tuple[int, Any]]:
    """The (field number, value) pairs of one message: ints for varints, bytes otherwise."""
    i, out = 0, []
    while i < len(b):
        key, i = _varint(b, i)
        num, wire = key >> 3, key & 7
        if wire == 0:
            v, i = _varint(b, i)
        elif wire == 2:
            n, i = _varint(b, i)
            v, i = b[i : i + n], i + n
        elif wire == 1:
            v, i = b[i : i + 8], i + 8
        elif wire == 5:
            v, i = b[i : i + 4], i + 4
        else:
            raise ValueError(f"wire type {wire}")
        out.append((num, v))
    return out


def _int32(v: int) -> int:
    v &= (1 << 64) - 1
    return v - (1 << 64) if v >= 1 << 63 else v


def field(msg: bytes) -> Dict[str, Any]:
    """A Lance ``Field``: name, id, parent, logical type, extension name, metadata."""
    d: Dict[str, Any] = {"id": 0, "parent": 0}
    md = {}
    for num, v in pb_fields(msg):
        if num == 2:
            d["name"] = v.decode()
        elif num == 3:
            d["id"] = _int32(v)
        elif num == 4:
            d["parent"] = _int32(v)
        elif num == 5:
            d["type"] = v.decode()
        elif num == 9:
            d["ext"] = v.decode()
        elif num == 10:
            kv = dict(pb_fields(v))
            md[kv.get(1, b"").decode()] = kv.get(2, b"").decode()
    if md:
        d["md"] = md
    return d


def file_schema_fields(path: str) -> List[Dict[str, Any]]:
    """The fields a ``.lance`` data file records in its schema (global buffer 0)."""
    with open(path, "rb") as f:
        data = f.read()
    _, _, gbo, _, _, _, _ = struct.unpack("<QQQIIHH", data[-40:-4])
    pos, size = struct.unpack("<QQ", data[gbo : gbo + 16])
    schema = [v for num, v in pb_fields(data[pos : pos + size]) if num == 1][0]
    return [field(v) for num, v in pb_fields(schema) if num == 1]


def manifest(uri: str) -> Dict[str, Any]:
    """The latest manifest: ``version``, ``fields``, ``reader_flags``, ``writer_flags``,
    ``data_format`` (file format, version)."""
    best: Dict[str, Any] = {}
    for path in glob.glob(os.path.join(uri, "_versions", "*.manifest")):
        with open(path, "rb") as f:
            data = f.read()
        pos = struct.unpack("<q", data[-16:-8])[0]
        n = struct.unpack("<I", data[pos : pos + 4])[0]
        m: Dict[str, Any] = {"fields": [], "reader_flags": 0, "writer_flags": 0, "data_format": None, "version": 0}
        for num, v in pb_fields(data[pos + 4 : pos + 4 + n]):
            if num == 1:
                m["fields"].append(field(v))
            elif num == 3:
                m["version"] = v
            elif num == 9:
                m["reader_flags"] = v
            elif num == 10:
                m["writer_flags"] = v
            elif num == 15:
                d = dict(pb_fields(v))
                m["data_format"] = (d.get(1, b"").decode(), d.get(2, b"").decode())
        if m["version"] >= best.get("version", -1):
            best = m
    return best


def raw_manifest_fields(uri: str) -> List[List[Tuple[int, Any]]]:
    """Every field of the latest manifest as its raw (number, value) pairs: the bytes
    either library wrote, compared as written."""
    best: Tuple[int, List[List[Tuple[int, Any]]]] = (-1, [])
    for path in glob.glob(os.path.join(uri, "_versions", "*.manifest")):
        with open(path, "rb") as f:
            data = f.read()
        pos = struct.unpack("<q", data[-16:-8])[0]
        n = struct.unpack("<I", data[pos : pos + 4])[0]
        msg = pb_fields(data[pos + 4 : pos + 4 + n])
        version = next((v for num, v in msg if num == 3), 0)
        if version >= best[0]:
            best = (version, [pb_fields(v) for num, v in msg if num == 1])
    return best[1]
