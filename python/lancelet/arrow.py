"""Arrow extension types for ML data, compatible with pylance's ``lance.arrow``.

* ``lance.bfloat16``: brain floating point numbers (:class:`BFloat16Type`, storage
  ``fixed_size_binary[2]``, little-endian bits), built with :func:`bfloat16_array` or
  :func:`cast`; values come back as :class:`BFloat16`.
* ``lance.arrow.image_uri``: image locations (:class:`ImageURIType`, storage ``string``
  or ``large_string``); :meth:`ImageURIArray.read_uris` fetches the bytes.
* ``lance.arrow.encoded_image``: encoded image bytes (:class:`EncodedImageType`, storage
  ``binary`` or ``large_binary``); :meth:`EncodedImageArray.to_tensor` decodes them.
* ``lance.arrow.fixed_shape_image_tensor``: decoded pixels (:class:`FixedShapeImageTensorType`,
  storage ``fixed_size_list<T>[prod(shape)]`` and the shape in the metadata);
  :meth:`FixedShapeImageTensorArray.to_encoded` encodes them as PNG.

The extension names, storage types and metadata are pylance's, so columns written with
these types by either library read back as the same extension type with the other.

The types are registered with pyarrow when this module is imported. pyarrow allows one
registration per extension name: if pylance's ``lance.arrow`` registered the names first,
its classes stay registered (arrays read from a dataset are then pylance's classes, with the
same methods). If this module registered them first, they are handed back to pylance just
before its ``lance`` package is imported, so both can be imported in either order.

This module needs numpy. Decoding and encoding images uses Pillow (or tensorflow) when
installed, or a decoder/encoder you pass.

>>> import pyarrow as pa
>>> from lancelet.arrow import bfloat16_array
>>> bfloat16_array([1.0, None, 3.14159]).to_pylist()
[1, None, 3.140625]
"""

from __future__ import annotations

import importlib
import importlib.abc
import io
import json
import math
import os
import sys
from pathlib import Path
from typing import Any, Callable, Iterable, List, Optional, Sequence, Union

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.fs as pafs

__all__ = [
    "BFloat16",
    "BFloat16Array",
    "BFloat16Scalar",
    "BFloat16Type",
    "EncodedImageArray",
    "EncodedImageScalar",
    "EncodedImageType",
    "FixedShapeImageTensorArray",
    "FixedShapeImageTensorScalar",
    "FixedShapeImageTensorType",
    "ImageArray",
    "ImageScalar",
    "ImageURIArray",
    "ImageURIScalar",
    "ImageURIType",
    "bfloat16_array",
    "cast",
]

BFLOAT16_EXTENSION = "lance.bfloat16"
IMAGE_URI_EXTENSION = "lance.arrow.image_uri"
ENCODED_IMAGE_EXTENSION = "lance.arrow.encoded_image"
FIXED_SHAPE_IMAGE_TENSOR_EXTENSION = "lance.arrow.fixed_shape_image_tensor"

_BF16_STORAGE = pa.binary(2)
_STRING = pa.string()
_BINARY = pa.binary()


# --------------------------------------------------------------------------------------
# bfloat16 bits: the upper half of a float32, rounded to nearest even; NaN stays a quiet NaN.
# --------------------------------------------------------------------------------------


def _float32(values: Any) -> np.ndarray:
    """``values`` as float32 (too large for float32: infinity, without a warning)."""
    with np.errstate(over="ignore"):
        return np.asarray(values).astype(np.float32)


def _bits_from_float32(values: np.ndarray) -> np.ndarray:
    """uint16 bfloat16 bits of a float32 array."""
    u = np.ascontiguousarray(values, dtype=np.float32).view(np.uint32).astype(np.uint64)
    rounded = (u + 0x7FFF + ((u >> 16) & 1)) >> 16
    quiet_nan = (u >> 16) | 0x0040
    return np.where(np.isnan(values), quiet_nan, rounded).astype(np.uint16)


def _float32_from_bits(bits: np.ndarray) -> np.ndarray:
    """float32 values of uint16 bfloat16 bits."""
    return (np.asarray(bits, dtype=np.uint16).astype(np.uint32) << 16).view(np.float32)


def _real(value: Any, what: str) -> float:
    if isinstance(value, (str, bytes, bytearray)) or not (hasattr(value, "__float__") or hasattr(value, "__index__")):
        raise TypeError(f"{what} must be a real number, not {type(value).__name__}")
    return float(value)


class BFloat16:
    """One bfloat16 value (what :class:`BFloat16Array` elements turn into).

    Made from a real number (rounded to the nearest bfloat16, ties to even) or from its two
    little-endian bytes; compares with other ``BFloat16`` values.

    >>> BFloat16(3.14159), BFloat16(3.14159).as_float()
    (3.140625, 3.140625)
    >>> BFloat16.from_bytes(b"\\x80\\x3f") == BFloat16(1.0)
    True
    """

    __slots__ = ("_bits",)
    __hash__ = None  # type: ignore[assignment]  # unhashable, like pylance's

    def __init__(self, value: float) -> None:
        v = _real(value, "value")
        self._bits = int(_bits_from_float32(_float32([v]))[0])

    @classmethod
    def from_bytes(cls, bytes: bytes) -> "BFloat16":  # noqa: A002 - pylance's parameter name
        """The value stored in two little-endian bytes.

        >>> BFloat16.from_bytes(b"\\x60\\x40")
        3.5
        """
        raw = memoryview(bytes).tobytes()
        if len(raw) != 2:
            raise ValueError(f"BFloat16.from_bytes: expected 2 bytes, got {len(raw)}")
        out = cls.__new__(cls)
        out._bits = int.from_bytes(raw, "little")
        return out

    def as_float(self) -> float:
        """The value as a Python float (exact).

        >>> BFloat16(0.1).as_float()
        0.10009765625
        """
        return float(_float32_from_bits(np.array([self._bits], dtype=np.uint16))[0])

    def to_bytes(self) -> bytes:
        """The two little-endian bytes stored for this value.

        >>> BFloat16(1.0).to_bytes()
        b'\\x80?'
        """
        return self._bits.to_bytes(2, "little")

    def __repr__(self) -> str:
        v = self.as_float()
        if math.isnan(v):
            return "NaN"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return np.format_float_positional(np.float32(v), trim="-")

    __str__ = __repr__

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, BFloat16):
            return False
        return self.as_float() == other.as_float()

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    def __lt__(self, other: "BFloat16") -> bool:
        if not isinstance(other, BFloat16):
            return NotImplemented
        return self.as_float() < other.as_float()

    def __le__(self, other: "BFloat16") -> bool:
        if not isinstance(other, BFloat16):
            return NotImplemented
        return self.as_float() <= other.as_float()

    def __gt__(self, other: "BFloat16") -> bool:
        if not isinstance(other, BFloat16):
            return NotImplemented
        return self.as_float() > other.as_float()

    def __ge__(self, other: "BFloat16") -> bool:
        if not isinstance(other, BFloat16):
            return NotImplemented
        return self.as_float() >= other.as_float()


class BFloat16Type(pa.ExtensionType):
    """The ``lance.bfloat16`` extension type (storage ``fixed_size_binary[2]``).

    >>> t = BFloat16Type()
    >>> t.extension_name, t.storage_type
    ('lance.bfloat16', FixedSizeBinaryType(fixed_size_binary[2]))
    """

    def __init__(self) -> None:
        super().__init__(_BF16_STORAGE, BFLOAT16_EXTENSION)

    def __arrow_ext_serialize__(self) -> bytes:
        return b""

    @classmethod
    def __arrow_ext_deserialize__(cls, storage_type: pa.DataType, serialized: bytes) -> "BFloat16Type":
        if storage_type != _BF16_STORAGE:
            raise TypeError(f"{BFLOAT16_EXTENSION} storage must be fixed_size_binary[2], got {storage_type}")
        return cls()

    def __arrow_ext_class__(self) -> type:
        return BFloat16Array

    def __arrow_ext_scalar_class__(self) -> type:
        return BFloat16Scalar

    def to_pandas_dtype(self) -> Any:
        """The pandas dtype of this type's columns (``lance.bfloat16``; needs pandas).

        >>> str(BFloat16Type().to_pandas_dtype())
        'lance.bfloat16'
        """
        return _pandas_classes()[0]()


class BFloat16Scalar(pa.ExtensionScalar):
    """One element of a :class:`BFloat16Array`; ``as_py()`` gives a :class:`BFloat16`.

    >>> bfloat16_array([2.5])[0].as_py()
    2.5
    """

    def as_py(self, **kwargs: Any) -> Optional[BFloat16]:
        """The value as a :class:`BFloat16`, or ``None`` for a null.

        >>> bfloat16_array([None])[0].as_py() is None
        True
        """
        if not self.is_valid:
            return None
        return BFloat16.from_bytes(self.value.as_py())


def _bf16_from_float32(values: np.ndarray, valid: Optional[np.ndarray]) -> "BFloat16Array":
    return _bf16_from_bits(_bits_from_float32(values), valid)


def _bf16_from_bits(bits: np.ndarray, valid: Optional[np.ndarray]) -> "BFloat16Array":
    storage = pa.FixedSizeBinaryArray.from_buffers(_BF16_STORAGE, len(bits), [None, pa.py_buffer(bits.tobytes())])
    if valid is not None and not bool(valid.all()):
        storage = pc.if_else(pa.array(valid, pa.bool_()), storage, pa.scalar(None, _BF16_STORAGE))
    return pa.ExtensionArray.from_storage(BFloat16Type(), storage)


def bfloat16_array(values: Sequence[Optional[float]]) -> "BFloat16Array":
    """A :class:`BFloat16Array` of real numbers (``None`` for nulls), each rounded to the
    nearest bfloat16 through float32.

    >>> arr = bfloat16_array([1.0, None, 0.1])
    >>> arr.type.extension_name, arr.to_pylist()
    ('lance.bfloat16', [1, None, 0.100097656])
    """
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    if isinstance(values, pa.Array) and (pa.types.is_floating(values.type) or pa.types.is_integer(values.type)):
        return _cast_flat(values, BFloat16Type(), (), {})
    if isinstance(values, np.ndarray) and values.dtype.kind in "fiub":
        return _bf16_from_float32(_float32(values.reshape(-1)), None)
    if isinstance(values, pa.Array):
        values = values.to_pylist()
    if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
        raise TypeError(f"values must be a sequence of real numbers, not {type(values).__name__}")
    floats: List[float] = []
    valid: List[bool] = []
    for v in values:
        valid.append(v is not None)
        floats.append(0.0 if v is None else _real(v, "values"))
    return _bf16_from_float32(_float32(np.array(floats, dtype=np.float64)), np.array(valid, dtype=bool))


def _ml_bfloat16() -> Any:
    try:
        from ml_dtypes import bfloat16  # type: ignore[import-not-found,unused-ignore]  # noqa: PLC0415 (optional dependency)
    except ImportError as e:
        raise ImportError(
            "numpy has no bfloat16 dtype: install ml_dtypes to convert bfloat16 arrays to/from numpy"
        ) from e
    return bfloat16


class BFloat16Array(pa.ExtensionArray):
    """An array of :class:`BFloat16Type` (make one with :func:`bfloat16_array`,
    :meth:`from_numpy` or :func:`cast`).

    >>> print(bfloat16_array([1.5, None]))
    [
      1.5,
      None
    ]
    """

    def __str__(self) -> str:
        # pyarrow's layout: one value a line; past 21 values, the first and last 10.
        n = len(self)
        if n > 21:
            head = [str(v) for v in self.slice(0, 10).to_pylist()]
            tail = [str(v) for v in self.slice(n - 10).to_pylist()]
            body = ",\n".join(f"  {v}" for v in head) + ",\n...\n" + ",\n".join(f"  {v}" for v in tail)
        else:
            body = ",\n".join(f"  {v}" for v in self.to_pylist())
        return f"[\n{body}\n]"

    def __repr__(self) -> str:
        return f"<lancelet.arrow.BFloat16Array object at {hex(id(self))}>\n{self}"

    def to_numpy(self, zero_copy_only: bool = False) -> np.ndarray:
        """The values as a numpy array of ``ml_dtypes.bfloat16`` (needs ml_dtypes; no nulls).

        >>> bfloat16_array([1.0, 2.0]).to_numpy()  # doctest: +SKIP
        array([1, 2], dtype=bfloat16)
        """
        bf16 = _ml_bfloat16()
        if self.null_count:
            raise ValueError("cannot convert a bfloat16 array with nulls to numpy")
        raw = self.storage.buffers()[1]
        start = self.storage.offset * 2
        return np.frombuffer(raw, dtype=np.uint16, count=len(self), offset=start).view(bf16)

    @classmethod
    def from_numpy(cls, array: np.ndarray) -> "BFloat16Array":
        """A bfloat16 array from a numpy array of ``ml_dtypes.bfloat16`` (needs ml_dtypes).

        >>> from ml_dtypes import bfloat16  # doctest: +SKIP
        >>> BFloat16Array.from_numpy(np.array([1.0, 2.0], dtype=bfloat16))  # doctest: +SKIP
        """
        bf16 = _ml_bfloat16()
        if not isinstance(array, np.ndarray) or array.dtype != np.dtype(bf16):
            raise TypeError("from_numpy needs a numpy array of dtype ml_dtypes.bfloat16")
        bits = np.ascontiguousarray(array.reshape(-1)).view(np.uint16)
        storage = pa.FixedSizeBinaryArray.from_buffers(_BF16_STORAGE, len(bits), [None, pa.py_buffer(bits.tobytes())])
        return pa.ExtensionArray.from_storage(BFloat16Type(), storage)


# --------------------------------------------------------------------------------------
# pandas: a ``lance.bfloat16`` dtype, built on first use (pandas is optional).
# --------------------------------------------------------------------------------------

_PANDAS: List[Any] = []


def _pandas_classes() -> List[Any]:
    """[dtype class, array class], made the first time they are needed."""
    if _PANDAS:
        return _PANDAS
    from pandas.api.extensions import ExtensionArray, ExtensionDtype, register_extension_dtype  # noqa: PLC0415 (optional)

    class PandasBFloat16Type(ExtensionDtype):
        """The pandas dtype ``lance.bfloat16``; elements are :class:`BFloat16` or ``None``.

        >>> from lancelet.arrow import PandasBFloat16Type
        >>> PandasBFloat16Type().name
        'lance.bfloat16'
        """

        name = BFLOAT16_EXTENSION
        type = BFloat16
        kind = "f"
        na_value = None

        @classmethod
        def construct_array_type(cls) -> Any:
            return PandasBFloat16Array

        def __from_arrow__(self, array: Union[pa.Array, pa.ChunkedArray]) -> Any:
            chunks = array.chunks if isinstance(array, pa.ChunkedArray) else [array]
            bits: List[np.ndarray] = []
            valid: List[np.ndarray] = []
            for c in chunks:
                storage = c.storage if isinstance(c, pa.ExtensionArray) else c
                bits.append(_storage_bits(storage))
                valid.append(np.asarray(storage.is_valid().to_numpy(zero_copy_only=False), dtype=bool))
            if not bits:
                return PandasBFloat16Array(np.zeros(0, np.uint16), np.zeros(0, bool))
            return PandasBFloat16Array(np.concatenate(bits), np.concatenate(valid))

    class PandasBFloat16Array(ExtensionArray):
        """A pandas extension array of bfloat16 values (what ``to_pandas()`` makes of a
        :class:`BFloat16Array`); made from real numbers, :class:`BFloat16` values or ``None``.

        >>> from lancelet.arrow import PandasBFloat16Array
        >>> list(PandasBFloat16Array([1.5, None]))
        [1.5, None]
        """

        def __init__(self, bits: Any, valid: Optional[np.ndarray] = None) -> None:
            if not (isinstance(bits, np.ndarray) and bits.dtype == np.uint16):
                made = self._from_sequence(bits)
                bits, valid = made._bits, made._valid
            self._bits = bits
            self._valid = np.ones(len(bits), bool) if valid is None else valid

        @property
        def dtype(self) -> Any:
            return PandasBFloat16Type()

        @classmethod
        def _from_sequence(cls, scalars: Any, *, dtype: Any = None, copy: bool = False) -> Any:
            if isinstance(scalars, PandasBFloat16Array):
                return scalars.copy() if copy else scalars
            floats: List[float] = []
            valid: List[bool] = []
            for s in scalars:
                if s is None:
                    floats.append(0.0)
                    valid.append(False)
                else:
                    floats.append(s.as_float() if isinstance(s, BFloat16) else _real(s, "value"))
                    valid.append(True)
            return cls(_bits_from_float32(_float32(np.array(floats, np.float64))), np.array(valid, bool))

        @classmethod
        def _from_factorized(cls, values: Any, original: Any) -> Any:
            return cls._from_sequence(values)

        @classmethod
        def _concat_same_type(cls, to_concat: Any) -> Any:
            arrays = list(to_concat)
            if not arrays:
                return cls(np.zeros(0, np.uint16), np.zeros(0, bool))
            return cls(np.concatenate([a._bits for a in arrays]), np.concatenate([a._valid for a in arrays]))

        def __getitem__(self, item: Any) -> Any:
            if isinstance(item, (int, np.integer)):
                if not self._valid[item]:
                    return None
                return BFloat16.from_bytes(int(self._bits[item]).to_bytes(2, "little"))
            return PandasBFloat16Array(self._bits[item], self._valid[item])

        def __len__(self) -> int:
            return len(self._bits)

        def __arrow_array__(self, type: Any = None) -> "BFloat16Array":
            return _bf16_from_bits(self._bits, self._valid)

        @property
        def nbytes(self) -> int:
            return int(self._bits.nbytes + self._valid.nbytes)

        def isna(self) -> np.ndarray:
            return ~self._valid

        def copy(self) -> Any:
            return PandasBFloat16Array(self._bits.copy(), self._valid.copy())

        def take(self, indices: Any, *, allow_fill: bool = False, fill_value: Any = None) -> Any:
            idx = np.asarray(indices, dtype=np.intp)
            if allow_fill:
                missing = idx == -1
                if (idx < -1).any():
                    raise ValueError("take: indices below -1 with allow_fill=True")
                safe = np.where(missing, 0, idx)
                bits = self._bits[safe] if len(self) else np.zeros(len(idx), np.uint16)
                valid = (self._valid[safe] if len(self) else np.zeros(len(idx), bool)) & ~missing
                if fill_value is not None:
                    fill = self._from_sequence([fill_value])
                    bits = np.where(missing, fill._bits[0], bits)
                    valid = valid | missing
                return PandasBFloat16Array(bits.astype(np.uint16), valid)
            return PandasBFloat16Array(self._bits[idx], self._valid[idx])

        def to_numpy(self, dtype: Any = None, copy: bool = False, na_value: Any = None) -> np.ndarray:
            if dtype is not None and np.dtype(dtype).kind == "f":
                out = _float32_from_bits(self._bits).astype(dtype)
                out[~self._valid] = np.nan if na_value is None else na_value
                return out
            return np.array([self[i] for i in range(len(self))], dtype=object)

        @classmethod
        def from_numpy(cls, array: np.ndarray) -> Any:
            """From a numpy array of ``ml_dtypes.bfloat16`` (needs ml_dtypes)."""
            bf16 = _ml_bfloat16()
            if array.dtype != np.dtype(bf16):
                raise TypeError("from_numpy needs a numpy array of dtype ml_dtypes.bfloat16")
            return cls(np.ascontiguousarray(array).view(np.uint16).copy())

    registered = register_extension_dtype(PandasBFloat16Type)
    _PANDAS.extend([registered, PandasBFloat16Array])
    return _PANDAS


def _storage_bits(storage: pa.Array) -> np.ndarray:
    """uint16 bits of a ``fixed_size_binary[2]`` array (nulls as 0)."""
    storage = storage.fill_null(b"\x00\x00") if storage.null_count else storage
    raw = storage.buffers()[1]
    return np.frombuffer(raw, dtype=np.uint16, count=len(storage), offset=storage.offset * 2).copy()


def __getattr__(name: str) -> Any:
    # ``PandasBFloat16Type`` / ``PandasBFloat16Array`` import pandas, so they are made on
    # first access.
    if name == "PandasBFloat16Type":
        return _pandas_classes()[0]
    if name == "PandasBFloat16Array":
        return _pandas_classes()[1]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# --------------------------------------------------------------------------------------
# cast
# --------------------------------------------------------------------------------------


def _is_bf16(t: Any) -> bool:
    if isinstance(t, str):
        return t in ("bfloat16", "bf16")
    return isinstance(t, pa.ExtensionType) and t.extension_name == BFLOAT16_EXTENSION


def _resolve_type(t: Any) -> pa.DataType:
    if _is_bf16(t):
        return BFloat16Type()
    if isinstance(t, str):
        return pa.type_for_alias(t)
    return t


def _cast_flat(arr: pa.Array, target: pa.DataType, args: tuple, kwargs: dict) -> pa.Array:
    src_bf16 = _is_bf16(arr.type)
    if _is_bf16(target):
        if src_bf16:
            return arr
        if not pa.types.is_floating(arr.type):
            arr = pc.cast(arr, pa.float32(), *args, **kwargs)
        valid = arr.is_valid().to_numpy(zero_copy_only=False)
        values = _float32(arr.fill_null(0).to_numpy(zero_copy_only=False))
        return _bf16_from_float32(values, np.asarray(valid, bool))
    if src_bf16:
        storage = arr.storage
        f32 = pa.array(_float32_from_bits(_storage_bits(storage)), pa.float32())
        if storage.null_count:
            f32 = pc.if_else(storage.is_valid(), f32, pa.scalar(None, pa.float32()))
        return f32 if target == pa.float32() else pc.cast(f32, target, *args, **kwargs)
    return pc.cast(arr, target, *args, **kwargs)


def cast(
    arr: Union[pa.Array, pa.ChunkedArray], target_type: Union[pa.DataType, str], *args: Any, **kwargs: Any
) -> Union[pa.Array, pa.ChunkedArray]:
    """:func:`pyarrow.compute.cast`, extended to bfloat16.

    Casts floating arrays (``float16``, ``float32``, ``float64``; integers go through
    float32) to bfloat16 and back, and fixed-size lists of them to fixed-size lists of the
    same size. The target may be a type, a type alias, ``"bfloat16"``/``"bf16"`` or
    :class:`BFloat16Type`; everything else is left to pyarrow (``args``/``kwargs`` are
    passed on to it).

    >>> import pyarrow as pa
    >>> cast(pa.array([0.1, None]), "bf16").to_pylist()
    [0.100097656, None]
    >>> cast(bfloat16_array([0.1]), pa.float64()).to_pylist()
    [0.10009765625]
    >>> fsl = pa.FixedSizeListArray.from_arrays(pa.array([1.0, 2.0], pa.float32()), 2)
    >>> cast(fsl, pa.list_(BFloat16Type(), 2)).type
    FixedSizeListType(fixed_size_list<item: extension<lance.bfloat16<BFloat16Type>>>[2])
    """
    target = _resolve_type(target_type)
    if isinstance(arr, pa.ChunkedArray):
        return pa.chunked_array(
            [cast(c, target, *args, **kwargs) for c in arr.chunks], type=None if len(arr.chunks) else target
        )
    if not isinstance(arr, pa.Array):
        raise TypeError(f"cast needs a pyarrow Array or ChunkedArray, not {type(arr).__name__}")
    if pa.types.is_fixed_size_list(arr.type) and pa.types.is_fixed_size_list(target):
        src_v, dst_v = arr.type.value_type, target.value_type
        if _is_bf16(src_v) or _is_bf16(dst_v):
            if arr.type.list_size != target.list_size:
                raise ValueError(
                    f"cannot cast fixed_size_list of size {arr.type.list_size} to one of size {target.list_size}"
                )
            # the child values of every slot, null lists included, so rows stay aligned
            size = arr.type.list_size
            flat = arr.values.slice(arr.offset * size, len(arr) * size)
            values = _cast_flat(flat, dst_v, args, kwargs)
            mask = arr.is_null() if arr.null_count else None
            return pa.FixedSizeListArray.from_arrays(
                values, type=pa.list_(target.value_field, target.list_size), mask=mask
            )
    return _cast_flat(arr, target, args, kwargs)


# --------------------------------------------------------------------------------------
# Images
# --------------------------------------------------------------------------------------


class ImageURIType(pa.ExtensionType):
    """The ``lance.arrow.image_uri`` extension type: image locations (local paths or URIs
    pyarrow's file systems open), stored as ``string`` or ``large_string``.

    >>> ImageURIType().extension_name, ImageURIType(pa.large_string()).storage_type
    ('lance.arrow.image_uri', DataType(large_string))
    """

    def __init__(self, storage_type: pa.DataType = _STRING) -> None:
        if storage_type not in (pa.string(), pa.large_string()):
            raise ValueError(f"storage_type must be a string type (string or large_string), got {storage_type}")
        super().__init__(storage_type, IMAGE_URI_EXTENSION)

    def __arrow_ext_serialize__(self) -> bytes:
        return b""

    @classmethod
    def __arrow_ext_deserialize__(cls, storage_type: pa.DataType, serialized: bytes) -> "ImageURIType":
        return cls(storage_type)

    def __arrow_ext_class__(self) -> type:
        return ImageURIArray

    def __arrow_ext_scalar_class__(self) -> type:
        return ImageURIScalar


class EncodedImageType(pa.ExtensionType):
    """The ``lance.arrow.encoded_image`` extension type: encoded image bytes (PNG, JPEG, ...)
    stored as ``binary`` or ``large_binary``.

    >>> EncodedImageType().extension_name, EncodedImageType().storage_type
    ('lance.arrow.encoded_image', DataType(binary))
    """

    def __init__(self, storage_type: pa.DataType = _BINARY) -> None:
        if storage_type not in (pa.binary(), pa.large_binary()):
            raise ValueError(f"storage_type must be a binary type (binary or large_binary), got {storage_type}")
        super().__init__(storage_type, ENCODED_IMAGE_EXTENSION)

    def __arrow_ext_serialize__(self) -> bytes:
        return b""

    @classmethod
    def __arrow_ext_deserialize__(cls, storage_type: pa.DataType, serialized: bytes) -> "EncodedImageType":
        return cls(storage_type)

    def __arrow_ext_class__(self) -> type:
        return EncodedImageArray

    def __arrow_ext_scalar_class__(self) -> type:
        return EncodedImageScalar


class FixedShapeImageTensorType(pa.ExtensionType):
    """The ``lance.arrow.fixed_shape_image_tensor`` extension type: images of one shape
    (e.g. ``(height, width, channels)``) of ``arrow_type`` pixels, stored as
    ``fixed_size_list<arrow_type>[prod(shape)]``; the metadata is ``{"shape": [...]}``.

    >>> t = FixedShapeImageTensorType(pa.uint8(), (2, 3, 4))
    >>> t.shape, t.arrow_type, t.storage_type
    ([2, 3, 4], DataType(uint8), FixedSizeListType(fixed_size_list<item: uint8>[24]))
    """

    def __init__(self, arrow_type: pa.DataType, shape: Sequence[int]) -> None:
        if isinstance(arrow_type, str):
            arrow_type = pa.type_for_alias(arrow_type)
        if not isinstance(arrow_type, pa.DataType):
            raise TypeError(f"arrow_type must be a pyarrow DataType, not {type(arrow_type).__name__}")
        dims = [int(d) for d in shape]
        if not dims or any(d < 0 for d in dims):
            raise ValueError(f"shape must be one or more non-negative sizes, got {list(shape)}")
        self.shape = dims
        self.arrow_type = arrow_type
        super().__init__(pa.list_(arrow_type, math.prod(dims)), FIXED_SHAPE_IMAGE_TENSOR_EXTENSION)

    def __arrow_ext_serialize__(self) -> bytes:
        return json.dumps({"shape": self.shape}).encode()

    @classmethod
    def __arrow_ext_deserialize__(cls, storage_type: pa.DataType, serialized: bytes) -> "FixedShapeImageTensorType":
        if not pa.types.is_fixed_size_list(storage_type):
            raise TypeError(
                f"{FIXED_SHAPE_IMAGE_TENSOR_EXTENSION} storage must be a fixed_size_list, got {storage_type}"
            )
        try:
            shape = json.loads(serialized.decode())["shape"]
        except (ValueError, KeyError, TypeError) as e:
            raise ValueError(f"bad {FIXED_SHAPE_IMAGE_TENSOR_EXTENSION} metadata {serialized!r}") from e
        out = cls(storage_type.value_type, shape)
        if out.storage_type.list_size != storage_type.list_size:
            raise ValueError(f"shape {shape} does not match the list size {storage_type.list_size}")
        return out

    def __arrow_ext_class__(self) -> type:
        return FixedShapeImageTensorArray

    def __arrow_ext_scalar_class__(self) -> type:
        return FixedShapeImageTensorScalar

    def __reduce__(self) -> tuple:
        return FixedShapeImageTensorType, (self.arrow_type, self.shape)


class ImageScalar(pa.ExtensionScalar):
    """One element of an image array; ``as_py()`` gives the stored value.

    >>> ImageURIArray.from_uris(["a.png"])[0].as_py()
    'a.png'
    """

    def as_py(self, **kwargs: Any) -> Any:
        """The stored value (``str``, ``bytes`` or list of pixels), or ``None``.

        >>> EncodedImageArray.from_storage(EncodedImageType(), pa.array([b"x"]))[0].as_py()
        b'x'
        """
        return self.value.as_py(**kwargs) if self.value is not None else None


class ImageURIScalar(ImageScalar):
    """One element of an :class:`ImageURIArray`.

    >>> type(ImageURIArray.from_uris(["a.png"])[0]).__name__
    'ImageURIScalar'
    """


class EncodedImageScalar(ImageScalar):
    """One element of an :class:`EncodedImageArray`.

    >>> type(ImageArray.from_array([b"x"])[0]).__name__
    'EncodedImageScalar'
    """


class FixedShapeImageTensorScalar(ImageScalar):
    """One element of a :class:`FixedShapeImageTensorArray` (``as_py()``: the flat pixels).

    >>> import numpy as np
    >>> t = ImageArray.from_array(pa.FixedShapeTensorArray.from_numpy_ndarray(np.ones((1, 1, 2), np.uint8)))
    >>> t[0].as_py()
    [1, 1]
    """


def _short(v: Any) -> str:
    if isinstance(v, bytes) and len(v) > 32:
        return repr(v[:32]) + f"... ({len(v)} bytes)"
    return repr(v)


class ImageArray(pa.ExtensionArray):
    """Base of the image arrays; :meth:`from_array` picks the right one.

    >>> type(ImageArray.from_array(["a.png"])).__name__
    'ImageURIArray'
    """

    def __repr__(self) -> str:
        values = self.storage.slice(0, 10).to_pylist()
        more = ", ..." if len(self) > 10 else ""
        body = "[" + ", ".join(_short(v) for v in values) + more + "]"
        return f"<lancelet.arrow.{type(self).__name__} object at {hex(id(self))}>\n{body}"

    @classmethod
    def from_array(cls, images: Any) -> "ImageArray":
        """An image array of ``images``: strings or paths make an :class:`ImageURIArray`,
        bytes an :class:`EncodedImageArray`, a ``pa.FixedShapeTensorArray`` a
        :class:`FixedShapeImageTensorArray`; image arrays are returned as they are.

        >>> type(ImageArray.from_array([b"\\x89PNG..."])).__name__
        'EncodedImageArray'
        >>> import numpy as np
        >>> t = pa.FixedShapeTensorArray.from_numpy_ndarray(np.zeros((2, 4, 4, 3), np.uint8))
        >>> ImageArray.from_array(t).type.shape
        [4, 4, 3]
        """
        if isinstance(images, ImageArray):
            return images
        if isinstance(images, pa.ChunkedArray):
            images = images.combine_chunks()
        if isinstance(images, pa.ExtensionArray) and isinstance(images.type, pa.FixedShapeTensorType):
            t = FixedShapeImageTensorType(images.type.value_type, images.type.shape)
            return pa.ExtensionArray.from_storage(t, images.storage)
        if isinstance(images, pa.Array):
            if images.type in (pa.string(), pa.large_string()):
                return ImageURIArray.from_uris(images)
            if images.type in (pa.binary(), pa.large_binary()):
                return pa.ExtensionArray.from_storage(EncodedImageType(images.type), images)
            raise TypeError(f"cannot make an image array of {images.type} values")
        if isinstance(images, (str, bytes, np.ndarray)) or not hasattr(images, "__iter__"):
            raise TypeError(
                f"images must be a pyarrow array or an iterable of URIs or encoded images, not {type(images).__name__}"
            )
        items = list(images)
        first = next((x for x in items if x is not None), None)
        if isinstance(first, (bytes, bytearray, memoryview)):
            return pa.ExtensionArray.from_storage(
                EncodedImageType(), pa.array([None if x is None else bytes(x) for x in items], pa.binary())
            )
        return ImageURIArray.from_uris(items)


class ImageURIArray(ImageArray):
    """An array of :class:`ImageURIType`: where images are (local paths, or ``file://``,
    ``s3://``, ``gs://``... URIs that pyarrow's file systems open from this machine).

    >>> ImageURIArray.from_uris(["/data/1.png"]).to_pylist()
    ['/data/1.png']
    """

    @classmethod
    def from_uris(cls, uris: Union[pa.StringArray, pa.LargeStringArray, Iterable[Union[str, Path]]]) -> "ImageURIArray":
        """An :class:`ImageURIArray` of ``uris`` (strings or ``os.PathLike``; a
        ``large_string`` array keeps its storage type). URIs are not checked here.

        >>> from pathlib import Path
        >>> ImageURIArray.from_uris(["s3://bucket/1.png", Path("/tmp/2.png")]).to_pylist()
        ['s3://bucket/1.png', '/tmp/2.png']
        """
        if isinstance(uris, pa.ChunkedArray):
            uris = uris.combine_chunks()
        if isinstance(uris, pa.Array):
            if uris.type not in (pa.string(), pa.large_string()):
                raise TypeError(f"uris must be a string or large_string array, got {uris.type}")
            return pa.ExtensionArray.from_storage(ImageURIType(uris.type), uris)
        if isinstance(uris, (str, bytes)) or not hasattr(uris, "__iter__"):
            raise TypeError(f"uris must be an array or an iterable of URIs, not {type(uris).__name__}")
        values: List[Optional[str]] = []
        for u in uris:
            if u is None:
                values.append(None)
            elif isinstance(u, (str, os.PathLike)):
                values.append(os.fspath(u) if not isinstance(u, str) else u)
            else:
                raise TypeError(f"an image URI must be a str or a path, not {type(u).__name__}")
        return pa.ExtensionArray.from_storage(ImageURIType(), pa.array(values, pa.string()))

    def read_uris(self, storage_type: pa.DataType = _BINARY) -> "EncodedImageArray":
        """Read every image into memory: an :class:`EncodedImageArray` of the bytes (nulls
        stay null). Use ``storage_type=pa.large_binary()`` for more than 2 GiB in total.

        >>> import os, tempfile
        >>> p = os.path.join(tempfile.mkdtemp(), "1.png")
        >>> _ = Path(p).write_bytes(b"\\x89PNG")
        >>> ImageURIArray.from_uris([p]).read_uris().to_pylist()
        [b'\\x89PNG']
        """
        if storage_type not in (pa.binary(), pa.large_binary()):
            raise ValueError(f"storage_type must be a binary type (binary or large_binary), got {storage_type}")
        data: List[Optional[bytes]] = []
        for uri in self.storage.to_pylist():
            if uri is None:
                data.append(None)
                continue
            fs, path = pafs.FileSystem.from_uri(uri)
            with fs.open_input_file(path) as f:
                data.append(f.read())
        return pa.ExtensionArray.from_storage(EncodedImageType(storage_type), pa.array(data, storage_type))


def _pillow() -> Any:
    try:
        return importlib.import_module("PIL.Image")
    except ImportError:
        return None


def _tensorflow() -> Any:
    try:
        return importlib.import_module("tensorflow")
    except ImportError:
        return None


def _tensor_array(result: Any) -> "FixedShapeImageTensorArray":
    """A :class:`FixedShapeImageTensorArray` of what a decoder returned."""
    if isinstance(result, FixedShapeImageTensorArray):
        return result
    if isinstance(result, pa.ExtensionArray) and isinstance(result.type, pa.FixedShapeTensorType):
        return ImageArray.from_array(result)
    if isinstance(result, np.ndarray):
        if result.ndim < 2:
            raise ValueError(f"a decoder must return one array per image (ndim >= 2), got shape {result.shape}")
        t = FixedShapeImageTensorType(pa.from_numpy_dtype(result.dtype), result.shape[1:])
        flat = pa.array(np.ascontiguousarray(result).reshape(-1))
        storage = pa.FixedSizeListArray.from_arrays(flat, t.storage_type.list_size)
        if len(storage) != result.shape[0]:  # images with no pixels
            storage = pa.array([[]] * result.shape[0], t.storage_type)
        return pa.ExtensionArray.from_storage(t, storage)
    raise TypeError(
        f"a decoder must return a numpy array or a pyarrow FixedShapeTensorArray, not {type(result).__name__}"
    )


class EncodedImageArray(ImageArray):
    """An array of :class:`EncodedImageType`: encoded images (any format; the bytes tell).

    >>> EncodedImageArray.from_storage(EncodedImageType(), pa.array([b"\\x89PNG"])).to_pylist()
    [b'\\x89PNG']
    """

    def to_tensor(
        self,
        decoder: Optional[Callable[[Union[pa.BinaryArray, pa.LargeBinaryArray]], np.ndarray]] = None,
    ) -> "FixedShapeImageTensorArray":
        """Decode the images (all of one shape) into a :class:`FixedShapeImageTensorArray`.

        ``decoder`` gets the array's ``binary`` storage and returns a numpy array of shape
        ``(len, *image_shape)`` (or a ``pa.FixedShapeTensorArray``). Without one, Pillow is
        used, else tensorflow; with neither installed this is a ``ValueError``.

        >>> import numpy as np
        >>> enc = EncodedImageArray.from_storage(EncodedImageType(), pa.array([b"a", b"b"]))
        >>> t = enc.to_tensor(lambda b: np.zeros((len(b), 2, 2, 3), np.uint8))
        >>> t.type.shape, t.to_numpy().shape
        ([2, 2, 3], (2, 2, 2, 3))
        """
        if decoder is None:
            image: Any = _pillow()
            tf: Any = None
            if image is None:
                tf = _tensorflow()
            if image is None and tf is None:
                raise ValueError("no image decoder available: install Pillow (or tensorflow), or pass decoder=")

            def decoder(data: Union[pa.BinaryArray, pa.LargeBinaryArray]) -> np.ndarray:
                images = []
                for b in data.to_pylist():
                    if b is None:
                        raise ValueError("cannot decode a null image")
                    if image is not None:
                        images.append(np.asarray(image.open(io.BytesIO(b))))
                    else:
                        images.append(tf.io.decode_image(b).numpy())
                return np.stack(images) if images else np.zeros((0, 0), np.uint8)

        return _tensor_array(decoder(self.storage))


class FixedShapeImageTensorArray(ImageArray):
    """An array of :class:`FixedShapeImageTensorType`: decoded images of one shape.

    >>> import numpy as np
    >>> t = ImageArray.from_array(pa.FixedShapeTensorArray.from_numpy_ndarray(np.ones((1, 2, 2, 3), np.uint8)))
    >>> type(t).__name__, t.to_numpy().shape
    ('FixedShapeImageTensorArray', (1, 2, 2, 3))
    """

    def to_numpy(self) -> np.ndarray:
        """The images as one numpy array of shape ``(len, *shape)`` (no nulls allowed).

        >>> import numpy as np
        >>> arr = np.arange(8, dtype=np.uint8).reshape(2, 2, 2, 1)
        >>> t = ImageArray.from_array(pa.FixedShapeTensorArray.from_numpy_ndarray(arr))
        >>> bool((t.to_numpy() == arr).all())
        True
        """
        if self.null_count:
            raise ValueError("cannot convert images with nulls to numpy")
        shape = self.type.shape
        flat = self.storage.flatten().to_numpy(zero_copy_only=False)
        return flat.reshape(len(self), *shape)

    def to_encoded(
        self, encoder: Optional[Callable[[np.ndarray], Any]] = None, storage_type: pa.DataType = _BINARY
    ) -> EncodedImageArray:
        """Encode the images: an :class:`EncodedImageArray` (PNG by default).

        ``encoder`` gets all images as one numpy array (see :meth:`to_numpy`) and returns
        the encoded images (a pyarrow binary array or a list of bytes). Without one, Pillow
        (else tensorflow) writes PNG; with neither installed this is a ``ValueError``. Use
        ``storage_type=pa.large_binary()`` for more than 2 GiB in total.

        >>> import numpy as np
        >>> t = ImageArray.from_array(pa.FixedShapeTensorArray.from_numpy_ndarray(np.zeros((2, 1, 1, 3), np.uint8)))
        >>> t.to_encoded(lambda imgs: [img.tobytes() for img in imgs]).to_pylist()
        [b'\\x00\\x00\\x00', b'\\x00\\x00\\x00']
        """
        if storage_type not in (pa.binary(), pa.large_binary()):
            raise ValueError(f"storage_type must be a binary type (binary or large_binary), got {storage_type}")
        if encoder is None:
            image: Any = _pillow()
            tf: Any = None
            if image is None:
                tf = _tensorflow()
            if image is None and tf is None:
                raise ValueError("no image encoder available: install Pillow (or tensorflow), or pass encoder=")

            def encoder(images: np.ndarray) -> List[bytes]:
                out = []
                for img in images:
                    if image is not None:
                        buf = io.BytesIO()
                        image.fromarray(img).save(buf, format="PNG")
                        out.append(buf.getvalue())
                    else:
                        out.append(bytes(tf.io.encode_png(img).numpy()))
                return out

        encoded = encoder(self.to_numpy())
        if isinstance(encoded, pa.ChunkedArray):
            encoded = encoded.combine_chunks()
        if isinstance(encoded, pa.Array):
            storage = encoded.cast(storage_type)
        else:
            storage = pa.array([None if b is None else bytes(b) for b in encoded], storage_type)
        if len(storage) != len(self):
            raise ValueError(f"the encoder returned {len(storage)} images for {len(self)}")
        return pa.ExtensionArray.from_storage(EncodedImageType(storage_type), storage)


# --------------------------------------------------------------------------------------
# Registration
# --------------------------------------------------------------------------------------

_REGISTERED: List[str] = []  # the extension names this module holds in pyarrow's registry


class _HandOverToPylance(importlib.abc.MetaPathFinder):
    """Before pylance's ``lance`` package is first imported, gives back the extension names
    this module registered, so that pylance's own registration (which does not expect
    them taken) succeeds. Finds no module itself."""

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> None:
        if (fullname == "lance" or fullname.startswith("lance.")) and _is_pylance(fullname, path, target):
            _unregister_all()
        return None


def _is_pylance(fullname: str, path: Any, target: Any) -> bool:
    """Whether importing ``fullname`` will load a module that is not lancelet's (an import of
    ``lance`` that fails, or ``lance`` aliased to lancelet, keeps the registration)."""
    here = os.path.dirname(os.path.abspath(__file__))
    for finder in sys.meta_path:
        if isinstance(finder, _HandOverToPylance) or not hasattr(finder, "find_spec"):
            continue
        try:
            spec = finder.find_spec(fullname, path, target)
        except (ImportError, ValueError, AttributeError):
            continue
        if spec is not None:
            origin = spec.origin or ""
            return not os.path.abspath(origin).startswith(here + os.sep)
    return False


def _unregister_all() -> None:
    while _REGISTERED:
        name = _REGISTERED.pop()
        try:
            pa.unregister_extension_type(name)
        except (KeyError, pa.ArrowKeyError):
            pass
    sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, _HandOverToPylance)]


def _register() -> None:
    for t in (
        BFloat16Type(),
        ImageURIType(),
        EncodedImageType(),
        FixedShapeImageTensorType(pa.uint8(), (0,)),
    ):
        try:
            pa.register_extension_type(t)
        except pa.ArrowKeyError:
            continue  # registered already (by pylance): its classes are used on read
        _REGISTERED.append(t.extension_name)
    if _REGISTERED:
        # Hand over when pylance (or the part of it that registers these names, if its
        # ``lance`` package is loaded already) is imported.
        sys.meta_path.insert(0, _HandOverToPylance())


_register()
