"""Errors whose words programs match: the same failing call with ``lance`` and with
``lancelet`` raises a message holding pylance's phrase (pylance's own tests match these)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

import lancelet
import lancelet.file

lance = pytest.importorskip("lance")
pytest.importorskip("lance.file")

LIBS = [pytest.param(lance, id="pylance"), pytest.param(lancelet, id="lancelet")]


def _vectors(n=300, dim=16):
    v = np.random.default_rng(0).random((n, dim)).astype(np.float32)
    return pa.table({"vec": pa.FixedSizeListArray.from_arrays(pa.array(v.reshape(-1)), dim)})


@pytest.mark.parametrize("lib", LIBS)
def test_sub_vectors_must_divide_the_dimension(lib, tmp_path):
    ds = lib.write_dataset(_vectors(), str(tmp_path / "d"))
    with pytest.raises(Exception, match="dimension .* must be divisible by num_sub_vectors"):
        ds.create_index("vec", "IVF_PQ", num_partitions=2, num_sub_vectors=5)


@pytest.mark.parametrize("lib", LIBS)
def test_a_query_of_another_dimension(lib, tmp_path):
    ds = lib.write_dataset(_vectors(), str(tmp_path / "d"))
    ds.create_index("vec", "IVF_PQ", num_partitions=2, num_sub_vectors=4)
    with pytest.raises(ValueError, match="does not match index column size"):
        ds.to_table(nearest={"column": "vec", "q": np.zeros(15, np.float32), "k": 3})


@pytest.mark.parametrize("lib", LIBS)
def test_a_cast_alter_columns_refuses(lib, tmp_path):
    ds = lib.write_dataset(pa.table({"x": pa.array([1, 2], pa.int32())}), str(tmp_path / "d"))
    with pytest.raises(Exception, match='Cannot cast column "x" from Int32 to Utf8'):
        ds.alter_columns({"path": "x", "data_type": pa.string()})


@pytest.mark.parametrize("lib", LIBS)
def test_a_file_without_schema_or_data(lib, tmp_path):
    with pytest.raises(ValueError, match="Schema is unknown and file cannot be created"):
        with lib.file.LanceFileWriter(str(tmp_path / "f.lance")):
            pass


@pytest.mark.parametrize("lib", LIBS)
def test_a_udf_changing_its_columns(lib, tmp_path):
    ds = lib.write_dataset(pa.table({"a": range(10)}), str(tmp_path / "d"), max_rows_per_file=5)
    calls = []

    @lib.batch_udf()
    def new_col(batch):
        calls.append(1)
        return pa.record_batch([batch["a"]], [f"c{len(calls)}"])

    with pytest.raises(Exception, match="Output schema of function does not match the expected schema"):
        ds.add_columns(new_col)


@pytest.mark.parametrize("lib", LIBS)
def test_blob_column_reads_binary_rows_as_files(lib):
    values = [b"foo", b"bar", b"baz"]
    for t in (pa.binary(), pa.large_binary()):
        arr = pa.array(values, t)
        assert [f.read() for f in lib.BlobColumn(arr)] == values
        assert [f.read() for f in lib.BlobColumn(pa.chunked_array([arr]))] == values
    with pytest.raises(ValueError, match="Expected a binary array"):
        lib.BlobColumn(pa.array([1, 2, 3]))
