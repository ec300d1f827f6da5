"""Arrow schemas as the namespace spec's JSON models (``JsonArrowSchema``), with the type
names pylance 14 reports in ``describe_table(load_detailed_metadata=True)``."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pyarrow.types as pt
from lance_namespace_urllib3_client.models import JsonArrowDataType, JsonArrowField, JsonArrowSchema

_SIMPLE = [
    (pt.is_boolean, "bool"),
    (pt.is_int8, "int8"),
    (pt.is_int16, "int16"),
    (pt.is_int32, "int32"),
    (pt.is_int64, "int64"),
    (pt.is_uint8, "uint8"),
    (pt.is_uint16, "uint16"),
    (pt.is_uint32, "uint32"),
    (pt.is_uint64, "uint64"),
    (pt.is_float16, "float16"),
    (pt.is_float32, "float32"),
    (pt.is_float64, "float64"),
    (pt.is_string, "utf8"),
    (pt.is_large_string, "large_utf8"),
    (pt.is_binary, "binary"),
    (pt.is_large_binary, "large_binary"),
    (pt.is_date32, "date32"),
    (pt.is_date64, "date64"),
    (pt.is_timestamp, "timestamp"),
    (pt.is_time32, "time32"),
    (pt.is_time64, "time64"),
    (pt.is_duration, "duration"),
    (pt.is_null, "null"),
]


def _field(f: pa.Field) -> Any:
    meta = {k.decode(): v.decode() for k, v in f.metadata.items()} if f.metadata else None
    return JsonArrowField(name=f.name, nullable=f.nullable, type=_type(f.type), metadata=meta)


def _type(t: pa.DataType) -> Any:
    for test, name in _SIMPLE:
        if test(t):
            return JsonArrowDataType(type=name)
    if pt.is_fixed_size_list(t):
        return JsonArrowDataType(type="fixed_size_list", fields=[_field(t.value_field)], length=t.list_size)
    if pt.is_large_list(t):
        return JsonArrowDataType(type="large_list", fields=[_field(t.value_field)])
    if pt.is_list(t):
        return JsonArrowDataType(type="list", fields=[_field(t.value_field)])
    if pt.is_map(t):
        return JsonArrowDataType(type="map", fields=[_field(t.key_field), _field(t.item_field)])
    if pt.is_struct(t):
        return JsonArrowDataType(type="struct", fields=[_field(t.field(i)) for i in range(t.num_fields)])
    if pt.is_decimal(t):
        return JsonArrowDataType(type=f"decimal{t.bit_width}", length=t.precision * 1000 + t.scale)
    if pt.is_fixed_size_binary(t):
        return JsonArrowDataType(type="fixed_size_binary", length=t.byte_width)
    if pt.is_dictionary(t):
        return _type(t.value_type)
    return JsonArrowDataType(type=str(t))


def json_schema(schema: pa.Schema) -> Any:
    """``schema`` as a ``JsonArrowSchema``.

    >>> json_schema(pa.schema([("x", pa.int64())])).fields[0].type.type
    'int64'
    """
    meta = {k.decode(): v.decode() for k, v in schema.metadata.items()} if schema.metadata else None
    return JsonArrowSchema(fields=[_field(f) for f in schema], metadata=meta)


_BY_NAME = {
    "bool": pa.bool_(),
    "int8": pa.int8(),
    "int16": pa.int16(),
    "int32": pa.int32(),
    "int64": pa.int64(),
    "uint8": pa.uint8(),
    "uint16": pa.uint16(),
    "uint32": pa.uint32(),
    "uint64": pa.uint64(),
    "float16": pa.float16(),
    "float32": pa.float32(),
    "float64": pa.float64(),
    "utf8": pa.string(),
    "string": pa.string(),
    "large_utf8": pa.large_string(),
    "large_string": pa.large_string(),
    "binary": pa.binary(),
    "large_binary": pa.large_binary(),
    "date32": pa.date32(),
    "date64": pa.date64(),
    "null": pa.null(),
}


def arrow_type(spec: Any) -> pa.DataType:
    """The Arrow type a ``JsonArrowDataType`` (or its JSON as a dict) describes: the names
    :func:`json_schema` writes (``int64``, ``utf8``, ``list`` with one item field,
    ``fixed_size_list`` with ``length``, ``struct``, ...).

    >>> arrow_type({"type": "fixed_size_list", "length": 4, "fields": [{"name": "item", "type": {"type": "float32"}}]})
    FixedSizeListType(fixed_size_list<item: float>[4])
    """
    if hasattr(spec, "to_dict"):
        spec = spec.to_dict()
    if not isinstance(spec, dict) or not isinstance(spec.get("type"), str):
        raise ValueError(f"an Arrow type is a JSON object with a 'type' name, got {spec!r}")
    name = spec["type"].lower()
    if name in _BY_NAME:
        return _BY_NAME[name]
    fields = [_arrow_field(f) for f in spec.get("fields") or []]
    if name in ("list", "large_list", "fixed_size_list"):
        if len(fields) != 1:
            raise ValueError(f"a {name} type has one item field, got {len(fields)}")
        if name == "list":
            return pa.list_(fields[0])
        if name == "large_list":
            return pa.large_list(fields[0])
        return pa.list_(fields[0], int(spec.get("length") or 0))
    if name == "struct":
        return pa.struct(fields)
    if name == "fixed_size_binary":
        return pa.binary(int(spec.get("length") or 0))
    raise ValueError(f"unsupported Arrow type {spec['type']!r} in a JSON type")


def _arrow_field(spec: Any) -> pa.Field:
    if not isinstance(spec, dict) or "name" not in spec:
        raise ValueError(f"a field is a JSON object with a 'name' and a 'type', got {spec!r}")
    return pa.field(spec["name"], arrow_type(spec.get("type")), nullable=spec.get("nullable", True) is not False)
