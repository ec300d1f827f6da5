"""Packed structs (field metadata ``packed: true``): one column holding whole struct rows.

pylance 14 stores a packed struct of fixed-width fields row-major in mini-block chunks
(``PackedStruct``, file formats 2.0 to 2.2) and one with string, binary or fixed-size-list
fields as zipped rows (``VariablePackedStruct``, 2.2 only). These tests check both
directions for files and datasets: what pylance writes, lancelet reads equal to the input;
what lancelet writes, pylance reads equal and with the same page layouts; the data files
list the struct's own field id (not its fields'), projections of one field (``"p.a"``)
match pylance's, and what pylance refuses or corrupts (booleans, nulls inside fields,
nested fields, variable fields at 2.1) lancelet refuses with a clear error.
"""

from __future__ import annotations

import os

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import lancelet
import lancelet.file as lf

lance = pytest.importorskip("lance")
plf = pytest.importorskip("lance.file")

PACKED = {"packed": "true"}


def packed(name: str, fields, *, key: str = "packed", nullable: bool = True) -> pa.Field:
    return pa.field(name, pa.struct(fields), nullable=nullable, metadata={key: "true"})


AB = [pa.field("a", pa.int32()), pa.field("b", pa.float64())]
AS = [pa.field("a", pa.int32()), pa.field("s", pa.utf8())]
FSL = [pa.field("id", pa.int32()), pa.field("v", pa.list_(pa.float32(), 2))]
MANY = [
    pa.field("i8", pa.int8()),
    pa.field("u16", pa.uint16()),
    pa.field("i64", pa.int64()),
    pa.field("f32", pa.float32()),
    pa.field("ts", pa.timestamp("us")),
    pa.field("d", pa.date32()),
    pa.field("dec", pa.decimal128(20, 3)),
    pa.field("fsb", pa.binary(3)),
]


def _ab(n: int, mask=None) -> pa.StructArray:
    return pa.StructArray.from_arrays(
        [pa.array(range(n), pa.int32()), pa.array([i / 4 for i in range(n)])], fields=AB, mask=mask
    )


def _as(n: int, mask=None, large: bool = False) -> pa.StructArray:
    fields = [AS[0], pa.field("s", pa.large_utf8())] if large else AS
    strings = [("word%d " % i) * (i % 5) for i in range(n)]
    return pa.StructArray.from_arrays(
        [pa.array(range(n), pa.int32()), pa.array(strings, fields[1].type)], fields=fields, mask=mask
    )


def _many(n: int) -> pa.StructArray:
    import datetime
    import decimal

    cols = [
        pa.array([i % 100 - 50 for i in range(n)], pa.int8()),
        pa.array([i % 60000 for i in range(n)], pa.uint16()),
        pa.array([i * 1_000_003 for i in range(n)], pa.int64()),
        pa.array([i * 0.5 for i in range(n)], pa.float32()),
        pa.array([i * 1000 for i in range(n)], pa.timestamp("us")),
        pa.array([datetime.date(2020, 1, 1) + datetime.timedelta(days=i % 900) for i in range(n)], pa.date32()),
        pa.array([decimal.Decimal(i) / 1000 for i in range(n)], pa.decimal128(20, 3)),
        pa.array([bytes([i % 256, 1, 2]) for i in range(n)], pa.binary(3)),
    ]
    return pa.StructArray.from_arrays(cols, fields=MANY)


def _null_mask(n: int) -> pa.Array:
    return pa.array([i % 7 == 3 for i in range(n)])


# name -> (schema, column builder of n rows, versions pylance writes it at)
CASES = {
    "fixed": (lambda: pa.schema([packed("p", AB)]), lambda n: [_ab(n)], ["2.0", "2.1", "2.2"]),
    "fixed_other_key": (lambda: pa.schema([packed("p", AB, key="lance-encoding:packed")]), lambda n: [_ab(n)], ["2.1", "2.2"]),
    "fixed_many_types": (lambda: pa.schema([packed("p", MANY)]), lambda n: [_many(n)], ["2.1", "2.2"]),
    "fixed_null_rows": (lambda: pa.schema([packed("p", AB)]), lambda n: [_ab(n, _null_mask(n))], ["2.1", "2.2"]),
    "not_nullable": (lambda: pa.schema([packed("p", AB, nullable=False)]), lambda n: [_ab(n)], ["2.1", "2.2"]),
    "variable": (lambda: pa.schema([packed("p", AS)]), lambda n: [_as(n)], ["2.2"]),
    "variable_large": (lambda: pa.schema([packed("p", [AS[0], pa.field("s", pa.large_utf8())])]), lambda n: [_as(n, large=True)], ["2.2"]),
    "variable_null_rows": (lambda: pa.schema([packed("p", AS)]), lambda n: [_as(n, _null_mask(n))], ["2.2"]),
    "fixed_size_list_field": (
        lambda: pa.schema([packed("p", FSL)]),
        lambda n: [pa.StructArray.from_arrays(
            [pa.array(range(n), pa.int32()), pa.array([[float(i), -float(i)] for i in range(n)], pa.list_(pa.float32(), 2))],
            fields=FSL)],
        ["2.2"],
    ),
    "list_of_packed": (
        lambda: pa.schema([pa.field("l", pa.list_(pa.field("item", pa.struct(AB), metadata=PACKED)))]),
        lambda n: [pa.array(
            [None if i % 11 == 5 else [{"a": i, "b": i / 2}] * (i % 3) for i in range(n)],
            pa.list_(pa.field("item", pa.struct(AB), metadata=PACKED)))],
        ["2.1", "2.2"],
    ),
    "inside_a_struct": (
        lambda: pa.schema([pa.field("o", pa.struct([packed("p", AB), pa.field("z", pa.utf8())])), pa.field("c", pa.int64())]),
        lambda n: [pa.StructArray.from_arrays([_ab(n), pa.array([str(i) for i in range(n)])],
                                              fields=[packed("p", AB), pa.field("z", pa.utf8())]),
                   pa.array(range(n), pa.int64())],
        ["2.1", "2.2"],
    ),
}


# Special table (not in _tables): one per packed-struct case of CASES.
def _table(case: str, n: int) -> pa.Table:
    schema, build, _ = CASES[case]
    return pa.Table.from_arrays(build(n), schema=schema())


CASE_VERSIONS = [(c, v) for c, (_, _, vs) in CASES.items() for v in vs]


@pytest.mark.parametrize("case,version", CASE_VERSIONS)
@pytest.mark.parametrize("rows", [3, 5000])
def test_lancelet_reads_pylance_packed_files(case, version, rows, tmp_path, tables_equal):
    table = _table(case, rows)
    path = str(tmp_path / "p.lance")
    with plf.LanceFileWriter(path, table.schema, version=version) as w:
        w.write_batch(table)
    tables_equal(lf.LanceFileReader(path).read_all().to_table(), table)


def _page_layouts(path: str):
    meta = plf.LanceFileReader(path).metadata()
    return [
        ("MiniBlockLayout" if "MiniBlockLayout" in p.encoding else "FullZipLayout" if "FullZipLayout" in p.encoding else "other",
         "VariablePackedStruct" if "VariablePackedStruct" in p.encoding else "PackedStruct" if "PackedStruct" in p.encoding else "")
        for c in meta.columns for p in c.pages
    ]


@pytest.mark.parametrize("case,version", [cv for cv in CASE_VERSIONS if cv[1] != "2.0"])
@pytest.mark.parametrize("rows", [3, 5000])
def test_pylance_reads_lancelet_packed_files_with_the_same_layouts(case, version, rows, tmp_path, tables_equal):
    table = _table(case, rows)
    ours, theirs = str(tmp_path / "ours.lance"), str(tmp_path / "theirs.lance")
    with lf.LanceFileWriter(ours, table.schema, version=version) as w:
        w.write_batch(table)
    with plf.LanceFileWriter(theirs, table.schema, version=version) as w:
        w.write_batch(table)
    tables_equal(plf.LanceFileReader(ours).read_all().to_table(), table)
    tables_equal(lf.LanceFileReader(ours).read_all().to_table(), table)
    assert len(lf.LanceFileReader(ours).metadata().columns) == len(plf.LanceFileReader(theirs).metadata().columns)
    assert set(_page_layouts(ours)) == set(_page_layouts(theirs))


def test_a_packed_struct_is_one_column(tmp_path):
    table = _table("inside_a_struct", 10)
    path = str(tmp_path / "p.lance")
    with lf.LanceFileWriter(path, table.schema, version="2.2") as w:
        w.write_batch(table)
    assert len(plf.LanceFileReader(path).metadata().columns) == 3  # p, z, c


@pytest.mark.parametrize(
    "fields,column,why",
    [
        ([pa.field("a", pa.int32()), pa.field("t", pa.bool_())],
         lambda n: pa.StructArray.from_arrays([pa.array(range(n), pa.int32()), pa.array([True] * n)],
                                              names=["a", "t"]), "t"),
        ([pa.field("a", pa.int32()), pa.field("b", pa.float64())],
         lambda n: pa.StructArray.from_arrays([pa.array([1, None] * (n // 2), pa.int32()), pa.array([0.5] * n)],
                                              names=["a", "b"]), "null"),
        ([pa.field("a", pa.int32()), pa.field("n", pa.struct([pa.field("x", pa.int32())]))],
         lambda n: pa.StructArray.from_arrays(
             [pa.array(range(n), pa.int32()),
              pa.StructArray.from_arrays([pa.array(range(n), pa.int32())], names=["x"])], names=["a", "n"]), "n"),
    ],
    ids=["bool_field", "null_in_a_field", "nested_struct_field"],
)
@pytest.mark.parametrize("version", ["2.1", "2.2"])
def test_unsupported_packed_fields_are_refused_clearly(fields, column, why, version, tmp_path):
    schema = pa.schema([packed("p", fields)])
    table = pa.Table.from_arrays([column(4)], schema=schema)
    path = str(tmp_path / "p.lance")
    with pytest.raises(lancelet.UnsupportedFeatureError, match=why):
        with lf.LanceFileWriter(path, schema, version=version) as w:
            w.write_batch(table)


def test_variable_fields_need_2_2(tmp_path):
    table = _table("variable", 4)
    with pytest.raises(lancelet.UnsupportedFeatureError, match="2.2"):
        with lf.LanceFileWriter(str(tmp_path / "p.lance"), table.schema, version="2.1") as w:
            w.write_batch(table)


def test_nulls_under_null_rows_are_allowed(tmp_path, tables_equal):
    """A field may be null where its struct row is null (pyarrow builds such arrays)."""
    schema = pa.schema([packed("p", AB)])
    col = pa.array([{"a": 1, "b": 0.5}, None, {"a": 3, "b": 1.5}], pa.struct(AB))
    table = pa.Table.from_arrays([col], schema=schema)
    path = str(tmp_path / "p.lance")
    with lf.LanceFileWriter(path, schema, version="2.2") as w:
        w.write_batch(table)
    tables_equal(plf.LanceFileReader(path).read_all().to_table(), table)


def _dataset_table(n: int) -> pa.Table:
    return pa.table(
        {"x": pa.array(range(n), pa.int64()), "p": _ab(n, _null_mask(n)), "q": _as(n), "y": pa.array([str(i) for i in range(n)])},
        schema=pa.schema([pa.field("x", pa.int64()), packed("p", AB), packed("q", AS), pa.field("y", pa.utf8())]),
    )


@pytest.mark.parametrize("writer", ["lancelet", "pylance"])
def test_packed_struct_datasets_both_ways(writer, tmp_path, tables_equal):
    table = _dataset_table(3000)
    uri = str(tmp_path / "ds.lance")
    (lancelet if writer == "lancelet" else lance).write_dataset(table, uri, max_rows_per_file=1000)
    for reader in (lancelet, lance):
        tables_equal(reader.dataset(uri).to_table(), table)
    ours, theirs = lancelet.dataset(uri), lance.dataset(uri)
    # pylance 14 projects the first field of a packed struct only (any other fails inside
    # it); lancelet projects any, flat and named like pylance's.
    for cols in (["p.a"], ["y", "q.a", "x"]):
        tables_equal(ours.to_table(columns=cols), theirs.to_table(columns=cols))
    got = ours.to_table(columns=["q.s", "p.b", "y"])
    assert got.schema.names == ["q.s", "p.b", "y"]
    assert got.column("q.s").to_pylist() == table.column("q").combine_chunks().field("s").to_pylist()
    p = table.column("p").combine_chunks()
    assert got.column("p.b").to_pylist() == [None if not v else b for v, b in zip(p.is_valid().to_pylist(), p.field("b").to_pylist())]
    idx = [0, 999, 1000, 2999, 17]
    tables_equal(ours.take(idx), theirs.take(idx))
    tables_equal(ours.to_table(filter="x >= 2990"), table.slice(2990))


def test_data_files_list_the_packed_struct_id_like_pylance(tmp_path):
    table = _dataset_table(10)
    ours, theirs = str(tmp_path / "ours"), str(tmp_path / "theirs")
    lancelet.write_dataset(table, ours)
    lance.write_dataset(table, theirs)
    files = [lance.dataset(u).get_fragments()[0].metadata.data_files()[0] for u in (ours, theirs)]
    assert files[0].fields == files[1].fields == [0, 1, 4, 7]


def test_appending_and_adding_columns_to_a_packed_dataset(tmp_path, tables_equal):
    table = _dataset_table(100)
    uri = str(tmp_path / "ds.lance")
    lance.write_dataset(table, uri)
    lancelet.write_dataset(table, uri, mode="append")
    ds = lancelet.dataset(uri)
    ds.add_columns({"x2": "x * 2"})
    got = lance.dataset(uri).to_table()
    tables_equal(got.drop_columns(["x2"]), pa.concat_tables([table, table]))
    assert got.column("x2").to_pylist() == [2 * x for x in table.column("x").to_pylist()] * 2


FIXED_TYPES = [pa.int8(), pa.int16(), pa.int32(), pa.int64(), pa.uint32(), pa.float32(), pa.float64(), pa.date32(),
               pa.timestamp("ms"), pa.binary(5)]


@st.composite
def packed_tables(draw):
    types = draw(st.lists(st.sampled_from(FIXED_TYPES + [pa.utf8(), pa.binary()]), min_size=1, max_size=5))
    n = draw(st.integers(0, 300))
    cols, fields = [], []
    for k, t in enumerate(types):
        if pa.types.is_fixed_size_binary(t):
            vals = [bytes([draw(st.integers(0, 255))]) * 5 for _ in range(n)]
        elif pa.types.is_string(t):
            vals = [draw(st.text(max_size=20)) for _ in range(n)] if n < 50 else [str(i) * (i % 9) for i in range(n)]
        elif pa.types.is_binary(t):
            vals = [bytes(range(i % 17)) for i in range(n)]
        elif pa.types.is_floating(t):
            vals = [float(draw(st.integers(-10**6, 10**6))) / 7 for _ in range(min(n, 20))] + [i / 3 for i in range(n - min(n, 20))]
        else:
            vals = [i * 37 % 100 for i in range(n)]
        cols.append(pa.array(vals, t))
        fields.append(pa.field(f"f{k}", t))
    nulls = draw(st.sampled_from(["none", "some", "all"]))
    mask = None if nulls == "none" else pa.array([nulls == "all" or i % 5 == 1 for i in range(n)], pa.bool_())
    column = pa.StructArray.from_arrays(cols, fields=fields, mask=mask)
    return pa.Table.from_arrays([column], schema=pa.schema([packed("p", fields)]))


@settings(max_examples=int(os.environ.get("LANCELET_HYPOTHESIS_EXAMPLES", "40")), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(table=packed_tables())
def test_random_packed_structs_round_trip_through_both_readers(table, tmp_path, tables_equal):
    path = str(tmp_path / "r.lance")
    if os.path.exists(path):
        os.remove(path)
    with lf.LanceFileWriter(path, table.schema, version="2.2") as w:
        w.write_batch(table)
    tables_equal(lf.LanceFileReader(path).read_all().to_table(), table)
    tables_equal(plf.LanceFileReader(path).read_all().to_table(), table)
