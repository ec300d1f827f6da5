"""lancelet writes, lancelet reads: property tests over random schemas, plus edge cases.

The property tests draw a random schema (types from the catalogue in ``conftest.py``,
lists and structs nested up to depth 2), a random row count (0..300), random null
patterns, random batch splits and a random page size, write the data with lancelet and
check that ``read_all``, ``read_range`` and ``take_rows`` agree with pyarrow's own
``slice``/``take``.
"""

from __future__ import annotations

import itertools
import os
import random
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import lance
from lancelet.file import LanceFileReader, LanceFileWriter

# Every example writes a file; the default budget keeps this module well under a minute.
# Hunt for bugs with e.g. LANCELET_HYPOTHESIS_EXAMPLES=5000.
EXAMPLES = int(os.environ.get("LANCELET_HYPOTHESIS_EXAMPLES", "300"))
PROPERTY_SETTINGS = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


# --------------------------------------------------------------------------------------
# Strategies
# --------------------------------------------------------------------------------------


def leaf_specs(g):
    """Every single-column type of the catalogue (scalars, fixed-size lists, dictionaries)."""
    s = g.scalar
    return list(g.scalars) + [
        g.fixed_size_list_of(s["float32"], 4),
        g.fixed_size_list_of(s["float16"], 4),
        g.fixed_size_list_of(s["uint8"], 4),
        g.fixed_size_list_of(s["int8"], 4),
        g.fixed_size_list_of(s["bool"], 3),
        g.dictionary_of(pa.int32(), ["foo", "bar", "baz"], name="dictionary<int32,string>"),
        g.low_cardinality_strings(),
    ]


def spec_strategy(g, depth: int = 0):
    """A random TypeSpec: a leaf, or a list/large_list/struct of specs, nested up to depth 2."""
    leaves = st.sampled_from(leaf_specs(g))
    if depth >= 2:
        return leaves
    child = spec_strategy(g, depth + 1)
    lists = st.tuples(child, st.booleans()).map(lambda t: g.list_of(t[0], large=t[1]))
    structs = st.lists(child, min_size=1, max_size=3).map(
        lambda kids: g.struct_of([(f"f{i}", k) for i, k in enumerate(kids)])
    )
    return st.one_of(leaves, lists, structs)


NULL_PATTERNS = ("none", "random", "all", "first", "last", "runs")


def null_mask(pattern: str, n: int, rng: random.Random) -> list:
    if pattern == "none":
        return [False] * n
    if pattern == "all":
        return [True] * n
    if pattern == "first":
        return [i == 0 for i in range(n)]
    if pattern == "last":
        return [i == n - 1 for i in range(n)]
    if pattern == "runs":
        return [(i // 9) % 2 == 1 for i in range(n)]
    p = rng.random()
    return [rng.random() < p for _ in range(n)]


@st.composite
def random_tables(draw, g, max_rows: int = 300):
    """A random table, plus how to write it (batch splits, page size)."""
    n = draw(st.integers(0, max_rows))
    ncols = draw(st.integers(1, 4))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = random.Random(seed)
    cols = {}
    for i in range(ncols):
        spec = draw(spec_strategy(g))
        pattern = draw(st.sampled_from(NULL_PATTERNS))
        inner_p = draw(st.sampled_from([0.0, 0.2, 0.7, 1.0]))
        cols[f"c{i}"] = g.build_array(spec, n, mask=null_mask(pattern, n, rng), p=inner_p, seed=rng.getrandbits(32))
    table = pa.table(cols)
    # Split points for write_batch calls (possibly empty batches).
    cuts = sorted(draw(st.lists(st.integers(0, n), max_size=4)))
    # Page cutting: a column flushes when its share of data_cache_bytes fills up, and a
    # flush of a single batch is split by max_page_bytes.
    page_options = {
        "max_page_bytes": draw(st.sampled_from([None, 128, 1024, 8192])),
        "data_cache_bytes": draw(st.sampled_from([None, 64, 2048])),
    }
    return table, cuts, page_options


def write_in_pieces(path, table, cuts, page_options):
    bounds = [0] + cuts + [table.num_rows]
    with LanceFileWriter(str(path), table.schema, version="2.0", **page_options) as w:
        for start, end in zip(bounds, bounds[1:]):
            w.write_batch(table.slice(start, end - start))
    return str(path)


# --------------------------------------------------------------------------------------
# Property tests
# --------------------------------------------------------------------------------------


@PROPERTY_SETTINGS
@given(data=st.data())
def test_random_schema_round_trips_through_lancelet(data, arrow_gen, scratch_dir, tables_equal):
    table, cuts, page_options = data.draw(random_tables(arrow_gen))
    path = write_in_pieces(scratch_dir / "rt.lance", table, cuts, page_options)
    reader = LanceFileReader(path)
    assert reader.num_rows() == table.num_rows
    assert reader.schema.equals(table.schema)
    batch_size = data.draw(st.sampled_from([1, 3, 64, 1024]))
    tables_equal(reader.read_all(batch_size=batch_size).to_table(), table)

    n = table.num_rows
    start = data.draw(st.integers(0, n))
    length = data.draw(st.integers(0, n - start))
    tables_equal(reader.read_range(start, length, batch_size=batch_size).to_table(), table.slice(start, length))

    if n:
        indices = data.draw(st.lists(st.integers(0, n - 1), max_size=40))
        expected = table.take(pa.array(indices, pa.int64()))
        tables_equal(reader.take_rows(indices, batch_size=batch_size).to_table(), expected)
        # A projection of one random column agrees as well.
        name = data.draw(st.sampled_from(table.column_names))
        projected = LanceFileReader(path, columns=[name])
        tables_equal(projected.take_rows(indices).to_table(), expected.select([name]))


@pytest.mark.interop
@settings(max_examples=max(1, EXAMPLES // 3), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_pylance_reads_random_schema_written_by_lancelet(data, arrow_gen, scratch_dir, tables_equal):
    """The same random tables, read back by pylance (the oracle)."""
    table, cuts, page_options = data.draw(random_tables(arrow_gen, max_rows=150))
    path = write_in_pieces(scratch_dir / "rt_pylance.lance", table, cuts, page_options)
    try:
        got = lance.file.LanceFileReader(path).read_all().to_table()
    except Exception as e:  # pragma: no cover - reported with the table that caused it
        raise AssertionError(f"pylance cannot read lancelet's file of {table.schema}: {e}") from e
    tables_equal(got, table)


@pytest.mark.interop
@settings(max_examples=max(1, EXAMPLES // 3), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_lancelet_reads_random_schema_written_by_pylance(data, arrow_gen, scratch_dir, tables_equal):
    """pylance writes random tables (one batch: pylance only cuts pages of a single queued
    array, and panics on nested structs written in several small-page batches); lancelet
    reads them back with read_all, read_range and take_rows."""
    table, _, page_options = data.draw(random_tables(arrow_gen, max_rows=200))
    path = str(scratch_dir / "from_pylance.lance")
    kwargs = {"max_page_bytes": page_options["max_page_bytes"]} if page_options["max_page_bytes"] else {}
    w = lance.file.LanceFileWriter(path, table.schema, version="2.0", **kwargs)
    w.write_batch(table.combine_chunks())
    w.close()
    reader = LanceFileReader(path)
    tables_equal(reader.read_all(batch_size=data.draw(st.sampled_from([1, 5, 1024]))).to_table(), table)
    n = table.num_rows
    start = data.draw(st.integers(0, n))
    length = data.draw(st.integers(0, n - start))
    tables_equal(reader.read_range(start, length).to_table(), table.slice(start, length))
    if n:
        indices = data.draw(st.lists(st.integers(0, n - 1), max_size=30))
        tables_equal(reader.take_rows(indices).to_table(), table.take(pa.array(indices, pa.int64())))


@pytest.fixture(scope="module")
def scratch_dir(tmp_path_factory):
    """A directory for hypothesis examples (function-scoped tmp_path does not mix with @given)."""
    return tmp_path_factory.mktemp("roundtrip")


# --------------------------------------------------------------------------------------
# Every catalogue type
# --------------------------------------------------------------------------------------

def test_lancelet_round_trips_every_catalogue_type(type_case, tmp_path, tables_equal):
    table = type_case.table()
    path = tmp_path / "c.lance"
    pages = {"max_page_bytes": 512, "data_cache_bytes": 2 * 512}
    tables_equal(roundtrip(path, table.to_batches(max_chunksize=40), **pages), table)
    reader = LanceFileReader(str(path))
    idx = [149, 0, 75, 75, 3, 148, 0]
    tables_equal(reader.take_rows(idx).to_table(), table.take(idx))
    tables_equal(reader.read_range(37, 80, batch_size=9).to_table(), table.slice(37, 80))


# --------------------------------------------------------------------------------------
# Edge cases
# --------------------------------------------------------------------------------------


def roundtrip(path, data, **kwargs) -> pa.Table:
    batches = data if isinstance(data, list) else [data]
    schema = kwargs.pop("schema", None) or batches[0].schema
    with LanceFileWriter(str(path), schema, version="2.0", **kwargs) as w:
        for b in batches:
            w.write_batch(b)
    return LanceFileReader(str(path)).read_all().to_table()


def test_empty_file_with_schema_round_trips(tmp_path, tables_equal):
    schema = pa.schema(
        [
            ("a", pa.int32()),
            ("s", pa.string()),
            ("l", pa.list_(pa.int64())),
            ("st", pa.struct([("x", pa.float64()), ("y", pa.list_(pa.string()))])),
            ("f", pa.list_(pa.float32(), 4)),
        ]
    )
    path = str(tmp_path / "empty.lance")
    with LanceFileWriter(path, schema, version="2.0"):
        pass
    reader = LanceFileReader(path)
    assert reader.num_rows() == 0
    assert reader.schema.equals(schema)
    tables_equal(reader.read_all().to_table(), schema.empty_table())
    tables_equal(reader.take_rows([]).to_table(), schema.empty_table())
    tables_equal(reader.read_range(0, 0).to_table(), schema.empty_table())
    assert list(reader.read_all().to_batches()) == [] or all(b.num_rows == 0 for b in reader.read_all().to_batches())


def test_empty_file_with_a_zero_row_batch_equals_empty_file_without_batches(tmp_path):
    schema = pa.schema([("a", pa.int32()), ("s", pa.string())])
    a = str(tmp_path / "a.lance")
    b = str(tmp_path / "b.lance")
    with LanceFileWriter(a, schema, version="2.0"):
        pass
    with LanceFileWriter(b, schema, version="2.0") as w:
        w.write_batch(schema.empty_table())
    assert Path(a).read_bytes() == Path(b).read_bytes()


@pytest.mark.interop
def test_empty_file_is_byte_identical_to_pylance(tmp_path):
    schema = pa.schema([("a", pa.int32()), ("s", pa.string())])
    ours = str(tmp_path / "ours.lance")
    theirs = str(tmp_path / "theirs.lance")
    with LanceFileWriter(ours, schema, version="2.0", checksums=False):
        pass
    w = lance.file.LanceFileWriter(theirs, schema, version="2.0")
    w.close()
    assert Path(ours).read_bytes() == Path(theirs).read_bytes()
    assert lance.file.LanceFileReader(ours).read_all().to_table().equals(schema.empty_table())


def test_zero_columns_round_trip(tmp_path):
    path = str(tmp_path / "zero.lance")
    with LanceFileWriter(path, pa.schema([]), version="2.0"):
        pass
    reader = LanceFileReader(path)
    assert reader.num_rows() == 0
    assert len(reader.schema) == 0
    assert reader.read_all().to_table().num_columns == 0
    assert len(reader.metadata().columns) == 0


@pytest.mark.interop
def test_zero_column_file_is_byte_identical_to_pylance(tmp_path):
    ours = str(tmp_path / "ours.lance")
    theirs = str(tmp_path / "theirs.lance")
    with LanceFileWriter(ours, pa.schema([]), version="2.0", checksums=False):
        pass
    w = lance.file.LanceFileWriter(theirs, pa.schema([]), version="2.0")
    w.close()
    data = Path(ours).read_bytes()
    assert len(data) == 58
    assert data == Path(theirs).read_bytes()


ALL_NULL_TYPES = [
    pa.null(),
    pa.bool_(),
    pa.int8(),
    pa.uint64(),
    pa.float16(),
    pa.float64(),
    pa.string(),
    pa.large_binary(),
    pa.binary(4),
    pa.decimal128(10, 2),
    pa.timestamp("ns", "America/New_York"),
    pa.list_(pa.int32()),
    pa.large_list(pa.string()),
    pa.list_(pa.float32(), 4),
    pa.dictionary(pa.int32(), pa.string()),
]


@pytest.mark.parametrize("n", [1, 5, 99, 100, 300])
@pytest.mark.parametrize("arrow_type", ALL_NULL_TYPES, ids=str)
def test_all_null_column_round_trips(arrow_type, n, tmp_path, tables_equal):
    table = pa.table({"c": pa.nulls(n, arrow_type)})
    got = roundtrip(tmp_path / "n.lance", table)
    tables_equal(got, table)
    # Logical nulls: a dictionary column stores them as keys of a null dictionary item.
    assert got.column("c").to_pylist() == [None] * n
    reader = LanceFileReader(str(tmp_path / "n.lance"))
    tables_equal(reader.take_rows([n - 1, 0]).to_table(), table.take([n - 1, 0]))


def test_struct_with_all_null_children_round_trips(tmp_path, tables_equal):
    t = pa.struct([("a", pa.int32()), ("b", pa.string()), ("n", pa.null())])
    table = pa.table({"c": pa.array([{"a": None, "b": None, "n": None}] * 120, t)})
    tables_equal(roundtrip(tmp_path / "s.lance", table), table)


def test_one_row_of_every_catalogue_type_round_trips(tmp_path, arrow_gen, tables_equal):
    cols = {}
    for spec in arrow_gen.catalogue_specs:
        cols[spec.name] = arrow_gen.build_variant(spec, "no_nulls", n=1)
    table = pa.table(cols)
    tables_equal(roundtrip(tmp_path / "one.lance", table), table)
    reader = LanceFileReader(str(tmp_path / "one.lance"))
    tables_equal(reader.take_rows([0, 0]).to_table(), table.take([0, 0]))
    tables_equal(reader.read_range(0, 1, batch_size=1).to_table(), table)
    tables_equal(reader.read_range(1, 0).to_table(), table.slice(1, 0))


def test_single_string_value_larger_than_16_mib_round_trips(tmp_path):
    big = "x" * (16 * 1024 * 1024 + 17) + "end"
    table = pa.table({"s": pa.array(["a", big, None, "z"]), "i": pa.array([1, 2, 3, 4], pa.int32())})
    path = tmp_path / "big.lance"
    got = roundtrip(path, table)
    assert got.equals(table)
    reader = LanceFileReader(str(path))
    assert reader.take_rows([1]).to_table().column("s")[0].as_py() == big
    assert reader.take_rows([3, 0]).to_table().column("s").to_pylist() == ["z", "a"]
    assert reader.read_range(2, 2).to_table().equals(table.slice(2, 2))


@pytest.mark.parametrize("n", [1, 7, 8, 9, 63, 64, 65, 1023])
@pytest.mark.parametrize("arrow_type", [pa.bool_(), pa.int8()], ids=str)
def test_unaligned_row_counts_round_trip(arrow_type, n, tmp_path, tables_equal):
    rng = random.Random(n)
    if pa.types.is_boolean(arrow_type):
        values = [None if rng.random() < 0.3 else rng.random() < 0.5 for _ in range(n)]
    else:
        values = [None if rng.random() < 0.3 else rng.randint(-128, 127) for _ in range(n)]
    table = pa.table({"c": pa.array(values, arrow_type), "d": pa.array([v is None for v in values])})
    path = tmp_path / "u.lance"
    tables_equal(roundtrip(path, table), table)
    reader = LanceFileReader(str(path))
    for start in sorted({0, 1, 3, n // 2, n - 1, n} & set(range(n + 1))):
        for length in sorted({0, 1, 5, n - start}):
            length = min(length, n - start)
            tables_equal(reader.read_range(start, length, batch_size=3).to_table(), table.slice(start, length))
    idx = [n - 1, 0, n // 2, 1 % n, n - 1]
    tables_equal(reader.take_rows(idx).to_table(), table.take(idx))


def test_sliced_batches_with_offsets_round_trip(tmp_path, tables_equal):
    """Arrays with a non-zero offset (including mid-byte for bitmaps) are re-based."""
    n = 203
    full = pa.table(
        {
            "b": pa.array([None if i % 5 == 0 else i % 3 == 0 for i in range(n)]),
            "i": pa.array([None if i % 7 == 0 else i for i in range(n)], pa.int16()),
            "s": pa.array([None if i % 4 == 0 else "v%d" % i for i in range(n)]),
            "l": pa.array([None if i % 6 == 0 else list(range(i % 4)) for i in range(n)], pa.list_(pa.int64())),
            "f": pa.array([None if i % 9 == 0 else [i, i, i] for i in range(n)], pa.list_(pa.int32(), 3)),
            "st": pa.array([{"x": i % 100, "y": str(i)} for i in range(n)], pa.struct([("x", pa.int8()), ("y", pa.string())])),
        }
    )
    pieces = [full.slice(3, 50), full.slice(101, 1), full.slice(57, 90)]
    expected = pa.concat_tables(pieces)
    tables_equal(roundtrip(tmp_path / "sl.lance", [p.to_batches()[0] for p in pieces]), expected)


def test_many_small_write_batch_calls_round_trip(tmp_path, tables_equal):
    rng = random.Random(5)
    batches = []
    for k in range(1000):
        n = rng.randint(0, 3)
        batches.append(
            pa.record_batch(
                {
                    "k": pa.array([k] * n, pa.int32()),
                    "s": pa.array([None if rng.random() < 0.2 else "s%d" % k for _ in range(n)], pa.string()),
                    "l": pa.array([[k] * rng.randint(0, 2) for _ in range(n)], pa.list_(pa.int32())),
                }
            )
        )
    expected = pa.Table.from_batches(batches)
    path = tmp_path / "many.lance"
    tables_equal(roundtrip(path, batches), expected)
    reader = LanceFileReader(str(path))
    idx = list(range(0, expected.num_rows, 37))[::-1]
    tables_equal(reader.take_rows(idx).to_table(), expected.take(idx))


def test_table_with_several_chunks_round_trips(tmp_path, tables_equal):
    chunks = [
        pa.table({"a": pa.array(range(i * 10, i * 10 + 10), pa.int64()), "s": pa.array([str(i)] * 10)})
        for i in range(5)
    ]
    table = pa.concat_tables(chunks)
    assert table.column("a").num_chunks == 5
    path = str(tmp_path / "chunks.lance")
    with LanceFileWriter(path, version="2.0") as w:  # schema inferred from the first chunk
        w.write_batch(table)
    tables_equal(LanceFileReader(path).read_all().to_table(), table)


def test_read_all_with_batch_size_one_yields_one_row_per_batch(tmp_path):
    table = pa.table({"a": pa.array(range(37), pa.int32()), "s": pa.array([str(i) for i in range(37)])})
    path = tmp_path / "b1.lance"
    roundtrip(path, table)
    batches = list(LanceFileReader(str(path)).read_all(batch_size=1).to_batches())
    assert len(batches) == 37
    assert all(b.num_rows == 1 for b in batches)
    assert pa.Table.from_batches(batches).equals(table)


@pytest.mark.parametrize("batch_size", [1, 2, 10, 36, 37, 38, 1000])
def test_read_all_batches_have_batch_size_rows_except_the_last(tmp_path, batch_size):
    table = pa.table({"a": pa.array(range(37), pa.int32())})
    path = tmp_path / "bs.lance"
    roundtrip(path, table)
    sizes = [b.num_rows for b in LanceFileReader(str(path)).read_all(batch_size=batch_size).to_batches()]
    expected = [batch_size] * (37 // batch_size) + ([37 % batch_size] if 37 % batch_size else [])
    assert sizes == expected


def test_writer_infers_schema_from_first_batch(tmp_path, tables_equal):
    table = pa.table({"a": pa.array([1, 2], pa.uint16()), "b": pa.array([[1.5], []], pa.list_(pa.float64()))})
    path = str(tmp_path / "infer.lance")
    with LanceFileWriter(path) as w:
        w.write_batch(table.to_batches()[0])
    tables_equal(LanceFileReader(path).read_all().to_table(), table)
    assert LanceFileReader(path).metadata().version == "2.2"


def test_writer_accepts_batches_with_columns_in_another_order(tmp_path, tables_equal):
    schema = pa.schema([("a", pa.int32()), ("b", pa.string())])
    path = str(tmp_path / "order.lance")
    with LanceFileWriter(path, schema, version="2.0") as w:
        w.write_batch(pa.record_batch({"b": ["x", "y"], "a": pa.array([1, 2], pa.int32())}))
    tables_equal(
        LanceFileReader(path).read_all().to_table(),
        pa.table({"a": pa.array([1, 2], pa.int32()), "b": ["x", "y"]}),
    )


def test_close_returns_rows_and_sets_size_bytes(tmp_path):
    table = pa.table({"a": pa.array(range(10), pa.int32())})
    path = tmp_path / "close.lance"
    w = LanceFileWriter(str(path), table.schema, version="2.0")
    w.write_batch(table)
    w.write_batch(table)
    assert w.close() == 20
    assert w.size_bytes == path.stat().st_size
    assert w.closed


@pytest.mark.parametrize("max_page_bytes,data_cache_bytes", [(64, 5 * 64), (1000, 5 * 1000), (2048, None)])
def test_small_pages_round_trip_with_many_pages(max_page_bytes, data_cache_bytes, tmp_path, arrow_gen, tables_equal):
    cols = {}
    for name in ("int64", "string", "bool", "decimal128_10_2"):
        cols[name] = arrow_gen.build_variant(arrow_gen.scalar[name], "some_nulls", n=500)
    cols["list"] = arrow_gen.build_variant(arrow_gen.list_of(arrow_gen.scalar["int32"]), "some_nulls", n=500)
    table = pa.table(cols)
    path = tmp_path / "pages.lance"
    # Several batches flush at the cache size; a single batch is split by max_page_bytes.
    batches = table.to_batches(max_chunksize=60) if data_cache_bytes else [table.combine_chunks().to_batches()[0]]
    pages = {"max_page_bytes": max_page_bytes, "data_cache_bytes": data_cache_bytes}
    tables_equal(roundtrip(path, batches, **pages), table)
    reader = LanceFileReader(str(path))
    # int64 (4000 bytes), string and decimal columns are all bigger than the limit.
    columns = reader.metadata().columns
    assert all(len(columns[i].pages) > 1 for i in (0, 1, 3))
    idx = list(itertools.chain(range(0, 500, 13), range(499, 0, -41)))
    tables_equal(reader.take_rows(idx).to_table(), table.take(idx))


@pytest.mark.parametrize("key_type", [pa.int8(), pa.int16(), pa.int32(), pa.int64(), pa.uint8(), pa.uint32()], ids=str)
def test_dictionary_without_nulls_round_trips_exactly(key_type, tmp_path):
    """Same keys, same dictionary (including unused entries), same key type."""
    indices = pa.array([2, 0, 0, 1, 2, 2], key_type)
    dictionary = pa.array(["foo", "bar", "baz", "unused"])
    table = pa.table({"d": pa.DictionaryArray.from_arrays(indices, dictionary)})
    got = roundtrip(tmp_path / "d.lance", table)
    assert got.equals(table)
    chunk = got.column("d").chunk(0)
    assert chunk.dictionary.equals(dictionary)
    assert chunk.indices.equals(indices)


def test_dictionary_with_null_keys_comes_back_with_a_trailing_null_item(tmp_path):
    """2.0 cannot store null keys: they point at a null item appended to the dictionary
    (pylance's convention, see the facts file section 6.7)."""
    table = pa.table({"d": pa.array(["foo", None, "foo", None, "bar"], pa.dictionary(pa.int32(), pa.string()))})
    chunk = roundtrip(tmp_path / "d.lance", table).column("d").chunk(0)
    assert chunk.dictionary.to_pylist() == ["foo", "bar", None]
    assert chunk.indices.to_pylist() == [0, 2, 0, 2, 1]
    assert chunk.to_pylist() == ["foo", None, "foo", None, "bar"]


@pytest.mark.parametrize(
    "item_type", [pa.null(), pa.struct([("n", pa.null())]), pa.list_(pa.null())], ids=["null", "struct_of_null", "list_of_null"]
)
@pytest.mark.parametrize("lists", [[None, None], [[], []], [[], None]], ids=["all_null", "all_empty", "mixed"])
def test_list_of_null_with_no_items_round_trips(lists, item_type, tmp_path):
    table = pa.table({"l": pa.array(lists, pa.list_(item_type))})
    assert roundtrip(tmp_path / "ln.lance", table).equals(table)


def test_list_of_null_with_items_round_trips(tmp_path):
    table = pa.table({"l": pa.array([[None], [], None, [None, None]], pa.list_(pa.null()))})
    assert roundtrip(tmp_path / "ln.lance", table).equals(table)


def test_catalogue_list_cases_hold_empty_and_null_lists(types):
    """The catalogue really exercises empty lists (every variant) and null lists
    (some_nulls / all_nulls)."""
    for case in types:
        if not (pa.types.is_list(case.type) or pa.types.is_large_list(case.type)):
            continue
        array = case.factory()
        lengths = pc.list_value_length(array)
        empty = pc.sum(pc.equal(lengths, 0)).as_py() or 0
        if case.variant != "all_nulls":
            assert empty > 0, case.name
        if case.variant == "some_nulls":
            assert 0 < array.null_count < len(array), case.name
        if case.variant == "all_nulls":
            assert array.null_count == len(array), case.name
