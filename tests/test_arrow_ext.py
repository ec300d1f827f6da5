"""``lancelet.arrow``: the Arrow extension types of pylance's ``lance.arrow`` (bfloat16 and
images), their helpers, and datasets holding them, against pylance as the oracle.

* bfloat16 bits, printed values and comparisons equal pylance's ``bfloat16_array`` /
  ``BFloat16`` (a property test over random float32 bit patterns included);
* ``cast`` gives the values pylance's ``bfloat16_array`` gives (pylance's own ``cast``
  needs ml_dtypes, which the suite does not install);
* every extension column, written by one library and read by the other (both ways) at file
  formats 2.0 and 2.2, comes back with the same extension name, storage, metadata and values;
  read in a process where only lancelet is imported, it comes back as lancelet's classes;
* the image helpers (``from_array``, ``from_uris``, ``read_uris``, ``to_numpy``,
  ``to_tensor``, ``to_encoded``) give pylance's outputs and error types;
* importing ``lancelet.arrow`` and pylance's ``lance.arrow`` works in either order.
"""

from __future__ import annotations

import doctest
import math
import struct
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st

lance = pytest.importorskip("lance")

import lancelet  # noqa: E402
import lancelet.arrow as la  # noqa: E402

# isort: split
import lance.arrow as pla  # noqa: E402  (after lancelet.arrow: the registration hands over)

pytestmark = pytest.mark.interop

LIBS = {"pylance": lance, "lancelet": lancelet}
VERSIONS = ["2.0", "2.2"]

try:
    import PIL.Image  # noqa: F401

    HAVE_PILLOW = True
except ImportError:
    HAVE_PILLOW = False

# Values whose rounding is easy to get wrong: ties to even (up and down), a tie broken only
# by bits float32 drops (pylance rounds through float32), overflow to infinity, subnormals,
# signed zero, NaN, infinities, integers and booleans.
TRICKY = [
    1.0,
    -2.5,
    0.1,
    3.14159,
    1 + 2**-8,
    1 + 3 * 2**-8,
    1 + 2**-8 + 2**-30,
    3.0e38,
    3.4e38,
    1e300,
    -1e300,
    1e38,
    1e-40,
    -1e-45,
    5e-324,
    0.0,
    -0.0,
    float("nan"),
    float("inf"),
    float("-inf"),
    123456.0,
    7,
    True,
]


def ext_sig(t: pa.DataType) -> tuple:
    """What identifies an extension type on disk, whichever library's class it is."""
    return (t.extension_name, t.storage_type, t.__arrow_ext_serialize__())


# --------------------------------------------------------------------------------------
# bfloat16 values
# --------------------------------------------------------------------------------------


def test_bfloat16_array_bits_and_printed_values_match_pylance():
    ours, theirs = la.bfloat16_array(TRICKY + [None]), pla.bfloat16_array(TRICKY + [None])
    assert ext_sig(ours.type) == ext_sig(theirs.type) == ("lance.bfloat16", pa.binary(2), b"")
    assert ours.storage.equals(theirs.storage)
    assert [str(v) for v in ours.to_pylist()] == [str(v) for v in theirs.to_pylist()]
    assert str(ours) == str(theirs)
    for a, b in zip(ours.to_pylist()[:-1], theirs.to_pylist()[:-1]):
        fa, fb = a.as_float(), b.as_float()
        assert (math.isnan(fa) and math.isnan(fb)) or (fa == fb and math.copysign(1, fa) == math.copysign(1, fb))
    assert ours.to_pylist()[-1] is None and ours[len(TRICKY)].as_py() is None


def test_bfloat16_scalar_matches_pylance():
    for v in TRICKY:
        assert str(la.BFloat16(v)) == str(pla.BFloat16(v)), v
        assert la.BFloat16(v).to_bytes() == bytes(pla.bfloat16_array([v]).storage[0].as_py())
    one, two, nan = la.BFloat16(1.0), la.BFloat16(2.0), la.BFloat16(float("nan"))
    p_one, p_two, p_nan = pla.BFloat16(1.0), pla.BFloat16(2.0), pla.BFloat16(float("nan"))
    assert (one < two, one <= one, two > one, one != two, nan == nan, la.BFloat16(0.0) == la.BFloat16(-0.0)) == (
        p_one < p_two,
        p_one <= p_one,
        p_two > p_one,
        p_one != p_two,
        p_nan == p_nan,
        pla.BFloat16(0.0) == pla.BFloat16(-0.0),
    )
    assert (one == 1.0) is (p_one == 1.0) is False
    assert la.BFloat16.from_bytes(b"\x80\x3f") == one
    for lib in (la, pla):
        with pytest.raises(TypeError):
            lib.BFloat16("1")
        with pytest.raises(TypeError):
            hash(lib.BFloat16(1.0))
        with pytest.raises(TypeError):
            lib.BFloat16(1.0) < 1.5  # noqa: B015
        with pytest.raises(ValueError, match="expected 2 bytes, got 3"):
            lib.BFloat16.from_bytes(b"abc")
        with pytest.raises(TypeError):
            lib.bfloat16_array(["a"])
        with pytest.raises(TypeError):
            lib.bfloat16_array(5)


def test_bfloat16_array_inputs_match_pylance():
    for values in (
        np.array([1.0, 0.1, 1e300]),
        np.array([1, 2, 300], np.int32),
        np.array([0.5, 60000], np.float16),
        (1.5, 2),
        pa.array([1.0, 0.3]),
        pa.array([1, 7], pa.int8()),
        pa.chunked_array([[1.0], [0.3]]),
        [],
    ):
        assert la.bfloat16_array(values).storage.equals(pla.bfloat16_array(values).storage)


@given(st.lists(st.integers(0, 2**32 - 1), max_size=50))
def test_bfloat16_rounding_matches_pylance_for_any_float32(bit_patterns):
    values = [struct.unpack("<f", struct.pack("<I", b))[0] for b in bit_patterns]
    ours = la.bfloat16_array(values)
    assert ours.storage.equals(pla.bfloat16_array(values).storage)
    # a bfloat16 value survives the trip through float and back
    again = la.bfloat16_array([v.as_float() for v in ours.to_pylist()])
    assert again.storage.equals(ours.storage)


def test_bfloat16_numpy_needs_ml_dtypes():
    try:
        import ml_dtypes
    except ImportError:
        with pytest.raises(ImportError, match="ml_dtypes"):
            la.bfloat16_array([1.0]).to_numpy()
        return
    arr = np.array([1.0, 2.5], dtype=ml_dtypes.bfloat16)
    back = la.BFloat16Array.from_numpy(arr)
    assert back.storage.equals(pla.BFloat16Array.from_numpy(arr).storage)
    assert (back.to_numpy() == arr).all()


def test_bfloat16_pandas_round_trip_matches_pylance():
    import pandas as pd

    ours, theirs = la.bfloat16_array([1.0, None, 2.5]), pla.bfloat16_array([1.0, None, 2.5])
    s, p = ours.to_pandas(), theirs.to_pandas()
    assert str(s.dtype) == str(p.dtype) == "lance.bfloat16"
    assert [str(v) for v in s] == [str(v) for v in p] == ["1", "None", "2.5"]
    assert s.isna().tolist() == [False, True, False]
    assert pa.array(s.array).storage.equals(ours.storage)
    df = pd.DataFrame({"b": s})
    back = pa.Table.from_pandas(df).column("b").combine_chunks()
    assert back.type.extension_name == "lance.bfloat16" and back.storage.equals(ours.storage)
    assert s.take([2, 0]).astype(object).map(str).tolist() == ["2.5", "1"]


# --------------------------------------------------------------------------------------
# cast
# --------------------------------------------------------------------------------------


def test_cast_floats_to_bfloat16_and_back():
    values = [1.0, None, 0.1, 3.4e38, float("nan"), -0.0]
    expected = pla.bfloat16_array(values).storage
    for t in (pa.float16(), pa.float32(), pa.float64()):
        src = pa.array(values, pa.float64()).cast(t, safe=False)
        exp = pla.bfloat16_array(src.to_pylist()).storage
        for target in ("bfloat16", "bf16", la.BFloat16Type(), pla.BFloat16Type()):
            out = la.cast(src, target)
            assert isinstance(out.type, pa.ExtensionType) and out.type.extension_name == "lance.bfloat16"
            assert out.storage.equals(exp)
    bf = la.cast(pa.array(values), "bf16")
    assert bf.storage.equals(expected)
    f32 = la.cast(bf, pa.float32())
    assert f32.type == pa.float32() and f32.null_count == 1
    assert [None if v is None else v.as_float() for v in bf.to_pylist()][:3] == f32.to_pylist()[:3]
    assert la.cast(bf, "float64").to_pylist()[2] == 0.10009765625
    assert la.cast(bf, pa.float16()).type == pa.float16()
    assert la.cast(pla.bfloat16_array([2.5]), pa.float32()).to_pylist() == [2.5]  # pylance's arrays too
    assert la.cast(pa.array([1, 2], pa.int32()), "bf16").storage.equals(pla.bfloat16_array([1.0, 2.0]).storage)
    assert la.cast(bf, "bf16") is bf


def test_cast_fixed_size_lists_and_fallback():
    fsl = pa.FixedSizeListArray.from_arrays(pa.array([1.0, 2.0, 0.1, 4.0], pa.float32()), 2, mask=pa.array([False, True]))
    out = la.cast(fsl, pa.list_(la.BFloat16Type(), 2))
    assert pa.types.is_fixed_size_list(out.type) and out.type.value_type.extension_name == "lance.bfloat16"
    assert out.is_null().to_pylist() == [False, True]
    assert out.values.storage.slice(0, 2).equals(pla.bfloat16_array([1.0, 2.0]).storage)
    back = la.cast(out, pa.list_(pa.float64(), 2))
    assert back.to_pylist() == [[1.0, 2.0], None]
    with_null = pa.FixedSizeListArray.from_arrays(
        pa.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0]), 2, mask=pa.array([False, True, False])
    ).slice(1)
    assert [None if r is None else [str(v) for v in r] for r in la.cast(with_null, pa.list_(la.BFloat16Type(), 2)).to_pylist()] == [None, ["5", "6"]]
    sliced = la.cast(pa.FixedSizeListArray.from_arrays(pa.array([1.0, 2.0, 3.0, 4.0]), 2).slice(1), pa.list_(la.BFloat16Type(), 2))
    assert [[str(v) for v in row] for row in sliced.to_pylist()] == [["3", "4"]]
    with pytest.raises(ValueError, match="size"):
        la.cast(fsl, pa.list_(la.BFloat16Type(), 3))
    chunked = la.cast(pa.chunked_array([[1.0], [2.0, None]]), "bf16")
    assert isinstance(chunked, pa.ChunkedArray) and chunked.num_chunks == 2
    assert la.cast(pa.array([1, 2]), pa.string()).to_pylist() == ["1", "2"]  # plain pyarrow
    assert la.cast(pa.array([1.5]), "int64", safe=False).to_pylist() == [1]
    with pytest.raises(pa.ArrowInvalid):
        la.cast(pa.array([1.5]), "int64")
    with pytest.raises(TypeError):
        la.cast([1.0], "bf16")


# --------------------------------------------------------------------------------------
# Extension types: names, storage, metadata, pickling
# --------------------------------------------------------------------------------------


def test_types_match_pylance():
    pairs = [
        (la.BFloat16Type(), pla.BFloat16Type()),
        (la.ImageURIType(), pla.ImageURIType()),
        (la.ImageURIType(pa.large_string()), pla.ImageURIType(pa.large_string())),
        (la.EncodedImageType(), pla.EncodedImageType()),
        (la.EncodedImageType(pa.large_binary()), pla.EncodedImageType(pa.large_binary())),
        (la.FixedShapeImageTensorType(pa.uint8(), (2, 3, 4)), pla.FixedShapeImageTensorType(pa.uint8(), (2, 3, 4))),
        (la.FixedShapeImageTensorType(pa.float32(), [5]), pla.FixedShapeImageTensorType(pa.float32(), [5])),
    ]
    for ours, theirs in pairs:
        assert ext_sig(ours) == ext_sig(theirs)
        # each library reads the other's type from its storage and metadata
        again = type(ours).__arrow_ext_deserialize__(theirs.storage_type, theirs.__arrow_ext_serialize__())
        assert ext_sig(again) == ext_sig(theirs)
    t = la.FixedShapeImageTensorType(pa.uint8(), (2, 3, 4))
    assert (t.shape, t.arrow_type) == (list(pla.FixedShapeImageTensorType(pa.uint8(), (2, 3, 4)).shape), pa.uint8())
    assert t == la.FixedShapeImageTensorType(pa.uint8(), [2, 3, 4])
    for lib in (la, pla):
        with pytest.raises(ValueError, match="string type"):
            lib.ImageURIType(pa.int32())
        with pytest.raises(ValueError, match="binary type"):
            lib.EncodedImageType(pa.string())


def test_arrays_survive_ipc_and_pickle():
    import pickle

    arrays = [
        la.bfloat16_array([1.0, None]),
        la.ImageURIArray.from_uris(["a.png", None]),
        la.ImageArray.from_array([b"x", b"yz"]),
        la.ImageArray.from_array(pa.FixedShapeTensorArray.from_numpy_ndarray(np.ones((2, 2, 1), np.uint8))),
    ]
    for arr in arrays:
        again = pickle.loads(pickle.dumps(arr))
        assert ext_sig(again.type) == ext_sig(arr.type) and again.storage.equals(arr.storage)
        sink = pa.BufferOutputStream()
        table = pa.table({"c": arr})
        with pa.ipc.new_stream(sink, table.schema) as w:
            w.write_table(table)
        back = pa.ipc.open_stream(sink.getvalue()).read_all().column("c").combine_chunks()
        assert ext_sig(back.type) == ext_sig(arr.type) and back.storage.equals(arr.storage)


# --------------------------------------------------------------------------------------
# Datasets: every extension column, both directions, 2.0 and 2.2
# --------------------------------------------------------------------------------------


def ext_table(lib) -> pa.Table:
    """One column of each extension type (made with ``lib``'s classes), with nulls."""
    tensors = np.arange(3 * 2 * 2 * 3, dtype=np.uint8).reshape(3, 2, 2, 3)
    tensor_type = lib.FixedShapeImageTensorType(pa.uint8(), (2, 2, 3))
    tensor_storage = pa.FixedSizeListArray.from_arrays(pa.array(tensors.reshape(-1)), 12)
    return pa.table(
        {
            "bf16": lib.bfloat16_array([1.0, None, 0.1]),
            "uri": lib.ImageURIArray.from_uris(["/a/1.png", "s3://b/2.png", "file:///c/3.png"]),
            "uri_large": lib.ImageURIArray.from_uris(pa.array(["x", "y", None], pa.large_string())),
            "enc": pa.ExtensionArray.from_storage(lib.EncodedImageType(), pa.array([b"\x89PNG", None, b""])),
            "enc_large": pa.ExtensionArray.from_storage(
                lib.EncodedImageType(pa.large_binary()), pa.array([b"a", b"bc", b"def"], pa.large_binary())
            ),
            "tensor": pa.ExtensionArray.from_storage(tensor_type, tensor_storage),
        }
    )


def assert_same_ext_table(got: pa.Table, want: pa.Table) -> None:
    assert got.column_names == want.column_names
    for name in want.column_names:
        g, w = got.column(name).combine_chunks(), want.column(name).combine_chunks()
        assert isinstance(g.type, pa.ExtensionType), (name, g.type)
        assert ext_sig(g.type) == ext_sig(w.type), name
        assert g.storage.equals(w.storage), name


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("writer,reader", [("lancelet", "pylance"), ("pylance", "lancelet")])
def test_extension_columns_interop(tmp_path, version, writer, reader):
    for types_of in (la, pla):  # tables made with either library's classes
        table = ext_table(types_of)
        uri = str(tmp_path / f"{writer}_{types_of.__name__}.lance")
        LIBS[writer].write_dataset(table, uri, data_storage_version=version)
        ds = LIBS[reader].dataset(uri)
        assert_same_ext_table(ds.to_table(), table)
        assert_same_ext_table(ds.take([0, 2]), table.take([0, 2]))
        field = ds.schema.field("tensor")
        assert field.type.extension_name == "lance.arrow.fixed_shape_image_tensor"
        assert field.type.shape == [2, 2, 3]


_ONLY_LANCELET = textwrap.dedent(
    """
    import sys
    import lancelet, lancelet.arrow as la
    uri_theirs, uri_ours, version = sys.argv[1:]
    want = {
        "bf16": la.BFloat16Array, "uri": la.ImageURIArray, "uri_large": la.ImageURIArray,
        "enc": la.EncodedImageArray, "enc_large": la.EncodedImageArray,
        "tensor": la.FixedShapeImageTensorArray,
    }
    ours = lancelet.dataset(uri_theirs).to_table()
    for name, cls in want.items():
        col = ours.column(name).combine_chunks()
        assert type(col) is cls, (name, type(col))
    assert [str(v) for v in ours.column("bf16").to_pylist()] == ["1", "None", "0.100097656"]
    t = ours.column("tensor").combine_chunks().to_numpy()
    assert t.shape == (3, 2, 2, 3) and int(t[2, 1, 1, 2]) == 35
    lancelet.write_dataset(ours, uri_ours, data_storage_version=version)
    assert "lance" not in sys.modules  # pylance was never imported here
    print("ok")
    """
)


@pytest.mark.parametrize("version", VERSIONS)
def test_pylance_dataset_reads_as_lancelet_classes_without_pylance(tmp_path, version):
    """In a process that never imports pylance, a dataset pylance wrote reads back as
    lancelet's array classes; what that process writes, pylance reads back the same."""
    table = ext_table(pla)
    theirs, ours = str(tmp_path / "theirs.lance"), str(tmp_path / "ours.lance")
    lance.write_dataset(table, theirs, data_storage_version=version)
    r = subprocess.run(
        [sys.executable, "-c", _ONLY_LANCELET, theirs, ours, version], capture_output=True, text=True, timeout=300
    )
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr
    assert_same_ext_table(lance.dataset(ours).to_table(), table)


# --------------------------------------------------------------------------------------
# Image helpers against pylance
# --------------------------------------------------------------------------------------


@pytest.fixture
def image_files(tmp_path) -> list:
    paths = []
    for i, data in enumerate([b"\x89PNG\r\n\x1a\nfirst", b"second image bytes", b""]):
        p = tmp_path / f"{i}.png"
        p.write_bytes(data)
        paths.append(p)
    return paths


def test_from_uris_and_read_uris_match_pylance(image_files):
    as_str = [str(p) for p in image_files]
    inputs = [
        as_str,
        image_files,  # pathlib.Path
        [p.as_uri() for p in image_files],  # file:// URIs
        pa.array(as_str),
        pa.array(as_str, pa.large_string()),
    ]
    for uris in inputs:
        ours, theirs = la.ImageURIArray.from_uris(uris), pla.ImageURIArray.from_uris(uris)
        assert type(ours) is la.ImageURIArray
        assert ext_sig(ours.type) == ext_sig(theirs.type) and ours.storage.equals(theirs.storage)
        assert ours.to_pylist() == theirs.to_pylist()
        assert ours[0].as_py() == theirs[0].as_py()
        for storage_type in (pa.binary(), pa.large_binary()):
            got, want = ours.read_uris(storage_type), theirs.read_uris(storage_type)
            assert type(got) is la.EncodedImageArray
            assert ext_sig(got.type) == ext_sig(want.type) and got.storage.equals(want.storage)
        assert ours.read_uris().to_pylist() == [p.read_bytes() for p in image_files]
    assert la.ImageURIArray.from_uris([]).to_pylist() == pla.ImageURIArray.from_uris([]).to_pylist() == []
    for lib in (la, pla):
        with pytest.raises(FileNotFoundError):
            lib.ImageURIArray.from_uris([str(image_files[0].parent / "missing.png")]).read_uris()
        with pytest.raises(pa.ArrowInvalid):
            lib.ImageURIArray.from_uris(["relative.png"]).read_uris()
        with pytest.raises(ValueError, match="binary type"):
            lib.ImageURIArray.from_uris([str(image_files[0])]).read_uris(pa.string())
    # nulls stay null (pylance has no null handling here)
    assert la.ImageURIArray.from_uris([str(image_files[1]), None]).read_uris().to_pylist() == [image_files[1].read_bytes(), None]
    with pytest.raises(TypeError):
        la.ImageURIArray.from_uris([1])


def test_from_array_matches_pylance(image_files):
    tensors = pa.FixedShapeTensorArray.from_numpy_ndarray(np.arange(24, dtype=np.uint8).reshape(2, 2, 3, 2))
    cases = [
        ([str(p) for p in image_files], "ImageURIArray"),
        (pa.array(["a", "b"]), "ImageURIArray"),
        (pa.array(["a"], pa.large_string()), "ImageURIArray"),
        (pa.array([b"x", b"yz"], pa.binary()), "EncodedImageArray"),
        (pa.array([b"x"], pa.large_binary()), "EncodedImageArray"),
        (tensors, "FixedShapeImageTensorArray"),
    ]
    for images, cls in cases:
        ours, theirs = la.ImageArray.from_array(images), pla.ImageArray.from_array(images)
        assert type(ours).__name__ == type(theirs).__name__ == cls
        assert type(ours).__module__ == "lancelet.arrow"
        assert ext_sig(ours.type) == ext_sig(theirs.type) and ours.storage.equals(theirs.storage)
    # lancelet's own choices where pylance makes URIs of anything: bytes are encoded images,
    # other values are refused
    enc = la.ImageArray.from_array([b"\x89PNG", b"x"])
    assert type(enc) is la.EncodedImageArray and enc.to_pylist() == [b"\x89PNG", b"x"]
    with pytest.raises(TypeError):
        la.ImageArray.from_array(pa.array([1]))
    with pytest.raises(TypeError):
        la.ImageArray.from_array(np.zeros((2, 2)))


def tensor_pair(arr: np.ndarray):
    storage = pa.FixedShapeTensorArray.from_numpy_ndarray(arr)
    return la.ImageArray.from_array(storage), pla.ImageArray.from_array(storage)


def test_to_numpy_matches_pylance():
    for arr in (
        np.arange(2 * 3 * 4 * 3, dtype=np.uint8).reshape(2, 3, 4, 3),
        np.linspace(0, 1, 2 * 5 * 5).astype(np.float32).reshape(2, 5, 5),
        np.arange(6, dtype=np.uint16).reshape(3, 2, 1, 1),
    ):
        ours, theirs = tensor_pair(arr)
        got = ours.to_numpy()
        assert got.dtype == arr.dtype and got.shape == arr.shape
        np.testing.assert_array_equal(got, theirs.to_numpy())
        np.testing.assert_array_equal(got, arr)
        np.testing.assert_array_equal(ours[1:].to_numpy(), arr[1:])  # slices keep their offset
        assert ours[0].as_py() == theirs[0].as_py()
    nulls = pa.ExtensionArray.from_storage(
        la.FixedShapeImageTensorType(pa.uint8(), (2,)), pa.array([[1, 2], None], pa.list_(pa.uint8(), 2))
    )
    with pytest.raises(ValueError, match="null"):
        nulls.to_numpy()


def test_to_tensor_and_to_encoded_with_callables_match_pylance():
    data = pa.array([b"img-a", b"img-bb"])
    seen = {}

    def decoder(binary):
        seen.setdefault("decoder", []).append((type(binary), binary.to_pylist()))
        return np.stack([np.full((2, 3, 4), len(b.as_py()), np.uint8) for b in binary])

    ours = la.ImageArray.from_array(data).to_tensor(decoder)
    theirs = pla.ImageArray.from_array(data).to_tensor(decoder)
    assert seen["decoder"][0] == seen["decoder"][1]  # the decoder gets what pylance gives it
    assert type(ours) is la.FixedShapeImageTensorArray
    assert ext_sig(ours.type) == ext_sig(theirs.type) and ours.storage.equals(theirs.storage)

    def encoder(images):
        seen.setdefault("encoder", []).append((images.shape, images.dtype, images.tobytes()))
        return pa.array([img.tobytes()[:5] for img in images])

    got, want = ours.to_encoded(encoder), theirs.to_encoded(encoder)
    assert type(got) is la.EncodedImageArray
    assert ext_sig(got.type) == ext_sig(want.type) and got.storage.equals(want.storage)
    assert seen["encoder"][0] == seen["encoder"][1]
    # pylance refuses a binary array from the encoder when asked for large_binary; lancelet casts it
    large = ours.to_encoded(encoder, pa.large_binary())
    assert ext_sig(large.type) == ext_sig(pla.EncodedImageType(pa.large_binary()))
    assert large.to_pylist() == want.to_pylist()
    # lancelet also takes a list of bytes from an encoder and a FixedShapeTensorArray from a decoder
    assert ours.to_encoded(lambda imgs: [b"p"] * len(imgs)).to_pylist() == [b"p", b"p"]
    fst = la.ImageArray.from_array(data).to_tensor(
        lambda b: pa.FixedShapeTensorArray.from_numpy_ndarray(np.ones((len(b), 2, 2), np.float32))
    )
    assert fst.type.shape == [2, 2] and fst.type.arrow_type == pa.float32()
    for arr in (ours, theirs):
        with pytest.raises(ValueError, match="binary type"):
            arr.to_encoded(encoder, pa.string())
    with pytest.raises(TypeError):
        la.ImageArray.from_array(data).to_tensor(lambda b: [1])
    with pytest.raises(ValueError, match="returned 1 images for 2"):
        ours.to_encoded(lambda imgs: [b"only one"])


@pytest.mark.skipif(HAVE_PILLOW, reason="checks the error when Pillow is missing")
def test_without_pillow_default_codecs_are_a_clear_error():
    for lib in (la, pla):
        enc = lib.ImageArray.from_array(pa.array([b"x"]))
        with pytest.raises(ValueError, match="decoder"):
            enc.to_tensor()
        tensors = lib.ImageArray.from_array(pa.FixedShapeTensorArray.from_numpy_ndarray(np.zeros((1, 1, 1, 3), np.uint8)))
        with pytest.raises(ValueError, match="encoder"):
            tensors.to_encoded()


@pytest.mark.skipif(not HAVE_PILLOW, reason="Pillow is not installed")
def test_pillow_png_round_trip_matches_pylance():
    arr = np.arange(2 * 4 * 5 * 3, dtype=np.uint8).reshape(2, 4, 5, 3)
    ours, theirs = tensor_pair(arr)
    got, want = ours.to_encoded(), theirs.to_encoded()
    assert ext_sig(got.type) == ext_sig(want.type)
    decoded, decoded_theirs = got.to_tensor(), want.to_tensor()
    np.testing.assert_array_equal(decoded.to_numpy(), arr)
    np.testing.assert_array_equal(decoded.to_numpy(), decoded_theirs.to_numpy())
    # pylance's PNG bytes decode the same with lancelet and vice versa
    np.testing.assert_array_equal(la.ImageArray.from_array(want.storage).to_tensor().to_numpy(), arr)
    np.testing.assert_array_equal(pla.ImageArray.from_array(got.storage).to_tensor().to_numpy(), arr)


def test_reprs_name_lancelet_classes(image_files):
    uris = la.ImageURIArray.from_uris([str(p) for p in image_files])
    assert repr(uris).startswith("<lancelet.arrow.ImageURIArray object at 0x")
    assert str(image_files[0]) in repr(uris)
    assert "(42 bytes)" in repr(la.ImageArray.from_array([b"x" * 42]))
    assert repr(la.bfloat16_array([1.5])).endswith("[\n  1.5\n]")


# --------------------------------------------------------------------------------------
# Registration: both libraries imported, in either order
# --------------------------------------------------------------------------------------

_IMPORT_ORDER = textwrap.dedent(
    """
    import importlib, sys
    import pyarrow as pa
    for name in sys.argv[1:]:
        importlib.import_module(name)
    import lancelet, lancelet.arrow as la
    import lance, lance.arrow as pla
    ours, theirs = la.bfloat16_array([1.0, None]), pla.bfloat16_array([1.0, None])
    assert ours.storage.equals(theirs.storage)
    import tempfile, os
    d = tempfile.mkdtemp()
    table = pa.table({"b": ours, "u": la.ImageURIArray.from_uris(["a"]).take([0, 0]),
                      "t": pla.bfloat16_array([2.0, 3.0])})
    lancelet.write_dataset(table, os.path.join(d, "x"))
    back = lance.dataset(os.path.join(d, "x")).to_table()
    assert back.column("b").type.extension_name == "lance.bfloat16"
    assert back.column("u").type.extension_name == "lance.arrow.image_uri"
    back2 = lancelet.dataset(os.path.join(d, "x")).to_table()
    assert back2.column("b").combine_chunks().storage.equals(ours.storage)
    # pylance's registration is in force once pylance is imported: reads make its classes
    assert type(back2.column("b").combine_chunks()).__module__.startswith("lance.")
    print("ok")
    """
)


@pytest.mark.parametrize(
    "order",
    [
        ["lancelet.arrow", "lance.arrow"],
        ["lance.arrow", "lancelet.arrow"],
        ["lance", "lancelet.arrow", "lance.arrow"],
        ["lance._arrow.bf16", "lancelet.arrow", "lance.arrow"],
    ],
)
def test_both_libraries_import_in_any_order(order):
    r = subprocess.run([sys.executable, "-c", _IMPORT_ORDER, *order], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr


def test_docstring_examples_run():
    result = doctest.testmod(la, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 30 and result.failed == 0


def test_drop_in_names_match_pylance():
    """Every public class and function of pylance's ``lance.arrow`` exists here."""
    theirs = {n for n in dir(pla) if not n.startswith("_") and (isinstance(getattr(pla, n), type) or callable(getattr(pla, n)))}
    theirs -= {"Callable", "Iterable", "Optional", "Path", "Union"}  # typing re-exports
    missing = [n for n in sorted(theirs) if not hasattr(la, n)]
    assert not missing
    assert Path(la.__file__).name == "arrow.py"


def test_bfloat16_array_str_matches_pylance():
    for n in (0, 1, 20, 21, 22, 35):
        values = [float(i) / 3 for i in range(n)]
        assert str(la.bfloat16_array(values)) == str(pla.bfloat16_array(values))


_PROGRAM = textwrap.dedent(
    """
    import sys, os
    import numpy as np
    import pyarrow as pa
    if sys.argv[1] == "lancelet":
        import lancelet as lance
    else:
        import lance
        import lance.arrow
    from pathlib import Path

    d = Path(sys.argv[2])
    (d / "img.png").write_bytes(b"fake image bytes")
    uris = lance.arrow.ImageURIArray.from_uris([str(d / "img.png")] * 2)
    tensors = lance.arrow.ImageArray.from_array(
        pa.FixedShapeTensorArray.from_numpy_ndarray(np.arange(24, dtype=np.uint8).reshape(2, 2, 2, 3))
    )
    table = pa.table({
        "emb": lance.arrow.bfloat16_array([0.5, None]),
        "uri": uris,
        "img": uris.read_uris(),
        "px": tensors,
    })
    ds = lance.write_dataset(table, str(d / "ds"))
    back = lance.dataset(str(d / "ds")).to_table()
    print([back.schema.field(n).type.extension_name for n in back.column_names])
    print([str(v) for v in back.column("emb").to_pylist()])
    print(back.column("img").to_pylist())
    print(back.column("px").combine_chunks().to_numpy().tolist())
    print(back.column("uri").combine_chunks().read_uris().to_pylist())
    """
)


def test_pylance_program_runs_unchanged(tmp_path):
    """A pylance program using ``lance.arrow`` gives the same output with ``import lancelet
    as lance`` (where ``lance.arrow`` needs no import of its own)."""
    out = {}
    for name in ("pylance", "lancelet"):
        d = tmp_path / name
        d.mkdir()
        r = subprocess.run([sys.executable, "-c", _PROGRAM, name, str(d)], capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stderr
        out[name] = r.stdout
    assert out["lancelet"] == out["pylance"]
    assert "lance.bfloat16" in out["lancelet"] and "fake image bytes" in out["lancelet"]


_NO_PYLANCE = textwrap.dedent(
    """
    import importlib.machinery as machinery, sys
    import pyarrow as pa

    find = machinery.PathFinder.find_spec

    def hide_pylance(name, path=None, target=None):
        if name == "lance" or name.startswith("lance."):
            return None
        return find(name, path, target)

    machinery.PathFinder.find_spec = hide_pylance  # as if pylance were not installed

    import lancelet, lancelet.arrow as la

    try:
        import lance  # the usual fallback of drop-in programs
    except ImportError:
        lance = lancelet
    assert lance is lancelet
    sink = pa.BufferOutputStream()
    table = pa.table({"b": la.bfloat16_array([1.5])})
    with pa.ipc.new_stream(sink, table.schema) as w:
        w.write_table(table)
    back = pa.ipc.open_stream(sink.getvalue()).read_all().column("b").combine_chunks()
    assert type(back) is la.BFloat16Array, type(back)  # still registered
    print("ok")
    """
)


def test_failed_import_of_pylance_keeps_the_registration():
    r = subprocess.run([sys.executable, "-c", _NO_PYLANCE], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr
