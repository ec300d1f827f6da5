"""Bad arguments give clear Python exceptions: the right class, a message naming the bad
thing, never a crash, an ``OverflowError`` from the binding layer or an unrelated error.

Each case runs against lancelet and, where pylance also refuses the input, against
pylance too (as a check that the input really is bad, not as a model of its messages:
pylance often answers with ``OverflowError`` or ``OSError``). Cases where lancelet is
stricter or more lenient than pylance on purpose say so.
"""

from __future__ import annotations

from typing import Any, Callable, NamedTuple, Tuple, Type, Union

import lance
import numpy as np
import pyarrow as pa
import pytest

import lancelet
from lancelet import InvalidArgumentError, LanceError, RowIndexError

pytestmark = pytest.mark.lancelet_only

ROWS = 10


def table() -> pa.Table:
    return pa.table({"a": pa.array(range(ROWS), pa.int64()), "s": [str(i) for i in range(ROWS)]})


@pytest.fixture(scope="module")
def datasets(tmp_path_factory) -> dict:
    """``{"lancelet": ds, "lance": ds}``: the same 10-row dataset written by each library."""
    root = tmp_path_factory.mktemp("bad_input")
    out = {}
    for name, lib in (("lancelet", lancelet), ("lance", lance)):
        out[name] = lib.write_dataset(table(), str(root / name))
    return out


class Case(NamedTuple):
    """``call(lib, ds)`` must raise ``error`` with ``words`` in the message; ``pylance``
    tells whether pylance also refuses the input."""

    name: str
    call: Callable[[Any, Any], Any]
    error: Union[Type[BaseException], Tuple[Type[BaseException], ...]]
    words: Tuple[str, ...]
    pylance: bool = True


def _open(lib, ds, **kw):
    return lib.dataset(ds.uri, **kw)


CASES = [
    # ---- take ----
    Case("take negative", lambda lib, ds: ds.take([-1]), RowIndexError, ("-1", "negative")),
    Case("take past the end", lambda lib, ds: ds.take([ROWS]), RowIndexError, ("10", "out of range")),
    Case("take 2**63", lambda lib, ds: ds.take([2**63]), RowIndexError, (str(2**63), "out of range")),
    Case("take 2**64", lambda lib, ds: ds.take([2**64]), RowIndexError, (str(2**64), "out of range")),
    Case("take numpy negative", lambda lib, ds: ds.take(np.array([3, -2])), RowIndexError, ("-2",)),
    Case("take float", lambda lib, ds: ds.take([1.5]), ValueError, ("integers", "1.5")),
    Case("take null", lambda lib, ds: ds.take(pa.array([0, None])), ValueError, ("integers", "None")),
    Case("take None", lambda lib, ds: ds.take(None), TypeError, ("indices", "NoneType")),
    Case("take a string", lambda lib, ds: ds.take("01"), TypeError, ("indices", "str")),
    Case("take unknown column", lambda lib, ds: ds.take([0], columns=["nope"]), ValueError, ("nope",)),
    Case("fragment take negative", lambda lib, ds: ds.get_fragments()[0].take([-1]), RowIndexError, ("-1",)),
    Case("fragment take past the end", lambda lib, ds: ds.get_fragments()[0].take([ROWS]), RowIndexError,
         ("10",)),
    Case("take_rows negative", lambda lib, ds: ds._take_rows([-1]), RowIndexError, ("-1", "negative")),
    Case("take_rows 2**64", lambda lib, ds: ds._take_rows([2**64]), RowIndexError, (str(2**64),)),
    Case("take_rows missing fragment", lambda lib, ds: ds._take_rows([7 << 32]), RowIndexError,
         ("fragment 7",)),
    # ---- limit / offset / batch_size ----
    Case("negative limit", lambda lib, ds: ds.to_table(limit=-1), ValueError, ("limit", "-1")),
    Case("negative offset", lambda lib, ds: ds.to_table(offset=-1), ValueError, ("offset", "-1")),
    Case("string limit", lambda lib, ds: ds.to_table(limit="3"), ValueError, ("limit", "'3'")),
    Case("float limit", lambda lib, ds: ds.to_table(limit=2.0), ValueError, ("limit", "2.0")),
    Case("head(-1)", lambda lib, ds: ds.head(-1), ValueError, ("limit", "-1")),
    Case("batch_size 0", lambda lib, ds: ds.to_table(batch_size=0), ValueError, ("batch_size",)),
    Case("negative batch_size", lambda lib, ds: ds.to_table(batch_size=-5), ValueError, ("batch_size", "-5")),
    # ---- filters and columns ----
    Case("filter of type int", lambda lib, ds: ds.to_table(filter=3), ValueError, ("filter", "int"), False),
    Case("filter of type bytes", lambda lib, ds: ds.to_table(filter=b"a > 1"), ValueError, ("filter", "bytes"),
         False),
    Case("count_rows filter of type int", lambda lib, ds: ds.count_rows(filter=3), ValueError, ("filter", "int")),
    Case("filter syntax error", lambda lib, ds: ds.to_table(filter="a >"), ValueError, ("a >", "syntax")),
    Case("filter unknown column", lambda lib, ds: ds.to_table(filter="zz > 1"), ValueError, ("zz",)),
    Case("filter not boolean", lambda lib, ds: ds.to_table(filter="a + 1"), ValueError, ("a + 1", "boolean")),
    Case("filter nested 10000 deep", lambda lib, ds: ds.to_table(filter="(" * 10000 + "a > 1" + ")" * 10000),
         ValueError, ("filter",)),
    Case("columns a string", lambda lib, ds: ds.to_table(columns="a"), ValueError, ("columns", "str")),
    Case("columns an int", lambda lib, ds: ds.to_table(columns=3), ValueError, ("columns", "int")),
    Case("columns holding an int", lambda lib, ds: ds.to_table(columns=["a", 1]), ValueError, ("columns", "1")),
    Case("unknown column", lambda lib, ds: ds.to_table(columns=["zz"]), ValueError, ("zz",)),
    Case("duplicate column", lambda lib, ds: ds.to_table(columns=["a", "a"]), ValueError, ("'a'", "twice")),
    Case("column expression not SQL", lambda lib, ds: ds.to_table(columns={"x": "a +"}), ValueError,
         ("x", "a +")),
    Case("column expression an int", lambda lib, ds: ds.to_table(columns={"x": 5}), ValueError,
         ("SQL expressions",)),
    Case("unknown scanner option", lambda lib, ds: ds.scanner(bogus=1), TypeError, ("bogus",)),
    Case("fragments an int", lambda lib, ds: ds.scanner(fragments=5).to_table(), ValueError,
         ("fragments", "int")),
    Case("fragments holding a string", lambda lib, ds: ds.scanner(fragments=["x"]).to_table(), ValueError,
         ("fragments", "'x'"), False),
    Case("missing fragment", lambda lib, ds: ds.scanner(fragments=[99]).to_table(), ValueError,
         ("fragment 99",), False),
    # ---- versions and tags ----
    Case("unknown version", lambda lib, ds: _open(lib, ds, version=99), ValueError, ("version 99",)),
    Case("version 0", lambda lib, ds: _open(lib, ds, version=0), ValueError, ("version", "0")),
    Case("negative version", lambda lib, ds: _open(lib, ds, version=-1), ValueError, ("version", "-1")),
    Case("version 2**64", lambda lib, ds: _open(lib, ds, version=2**64), ValueError, ("version", str(2**64))),
    Case("version a float", lambda lib, ds: _open(lib, ds, version=1.5), ValueError, ("version", "1.5")),
    Case("version a list", lambda lib, ds: _open(lib, ds, version=[1]), ValueError, ("version", "[1]")),
    Case("unknown tag", lambda lib, ds: _open(lib, ds, version="nope"), ValueError, ("nope",)),
    Case("tag name escaping", lambda lib, ds: _open(lib, ds, version="../../x"), ValueError, ("../../x",), False),
    Case("checkout unknown version", lambda lib, ds: ds.checkout_version(99), ValueError, ("99",)),
    Case("checkout negative", lambda lib, ds: ds.checkout_version(-1), ValueError, ("-1",)),
    Case("tag on a missing version", lambda lib, ds: ds.tags.create("t_missing", 99), ValueError, ("99",)),
    Case("tag on version 2**64", lambda lib, ds: ds.tags.create("t_huge", 2**64), ValueError, (str(2**64),)),
    Case("tag on version '1'", lambda lib, ds: ds.tags.create("t_str", "1"), ValueError, ("version", "'1'")),
    Case("tag with a bad name", lambda lib, ds: ds.tags.create("../x", 1), ValueError, ("../x",)),
    Case("tag with an empty name", lambda lib, ds: ds.tags.create("", 1), ValueError, ("tag name",)),
    Case("tag named by an int", lambda lib, ds: ds.tags.create(5, 1), ValueError, ("tag", "5")),
    Case("update a missing tag", lambda lib, ds: ds.tags.update("nope", 1), ValueError, ("nope",)),
    Case("delete a missing tag", lambda lib, ds: ds.tags.delete("nope"), ValueError, ("nope",)),
    Case("version of a missing tag", lambda lib, ds: ds.tags.get_version("nope"), ValueError, ("nope",)),
    # ---- delete ----
    Case("delete an int", lambda lib, ds: ds.delete(5), ValueError, ("predicate",)),
    Case("delete None", lambda lib, ds: ds.delete(None), ValueError, ("predicate",)),
    Case("delete ''", lambda lib, ds: ds.delete(""), ValueError, ("predicate",)),
    Case("delete syntax error", lambda lib, ds: ds.delete("a IN ("), ValueError, ("a IN (",)),
    Case("delete unknown column", lambda lib, ds: ds.delete("zz = 1"), ValueError, ("zz",)),
    # ---- opening ----
    Case("open None", lambda lib, ds: lib.dataset(None), TypeError, ("NoneType",)),
    Case("open an int", lambda lib, ds: lib.dataset(123), TypeError, ("int",)),
    Case("open http://", lambda lib, ds: lib.dataset("http://example.invalid/x"), NotImplementedError,
         ("http",)),
    Case("open s3:// without bucket", lambda lib, ds: lib.dataset("s3://"), ValueError, ("s3://", "bucket")),
    Case("storage_options a list", lambda lib, ds: _open(lib, ds, storage_options=[("a", "b")]), ValueError,
         ("storage_options", "list")),
    Case("storage option named by an int", lambda lib, ds: lib.dataset("memory://bad_input_x",
                                                                         storage_options={1: "x"}),
         ValueError, ("1",)),
]


def _check(exc: BaseException, case: Case) -> None:
    message = str(exc)
    for word in case.words:
        assert word in message, f"{case.name}: {word!r} not in {message!r}"


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_bad_arguments_raise_clear_errors(datasets, case):
    ds = datasets["lancelet"]
    with pytest.raises(case.error) as info:
        case.call(lancelet, ds)
    _check(info.value, case)
    # Never the binding layer's conversion errors, nor a caught panic.
    assert not isinstance(info.value, (OverflowError, lancelet.InternalError)), repr(info.value)
    if isinstance(info.value, (ValueError, OSError, NotImplementedError)):
        assert isinstance(info.value, LanceError), f"{case.name}: {type(info.value)} is not a LanceError"
    if case.pylance:
        # pylance refuses some of these by panicking (PanicException is a BaseException).
        with pytest.raises(BaseException):
            case.call(lance, datasets["lance"])


def test_bad_arguments_leave_the_dataset_alone(datasets):
    """None of the refused calls above committed anything or changed the rows."""
    ds = lancelet.dataset(datasets["lancelet"].uri)
    assert ds.version == 1
    assert ds.to_table() == table()
    assert ds.tags.list() == {}


# ---- huge counts: clear errors, or they work ----


@pytest.mark.parametrize("limit", [2**63 - 1, 2**63, 2**64, 2**64 + 5, 10**30])
def test_huge_limits_mean_no_limit(datasets, limit):
    ds = datasets["lancelet"]
    assert ds.to_table(limit=limit).num_rows == ROWS
    assert ds.to_table(limit=limit, filter="a >= 2").num_rows == ROWS - 2
    assert ds.scanner(limit=limit).count_rows() == ROWS


@pytest.mark.parametrize("offset", [2**63 - 1, 2**64, 10**30])
def test_huge_offsets_skip_everything(datasets, offset):
    ds = datasets["lancelet"]
    assert ds.to_table(offset=offset).num_rows == 0
    assert ds.to_table(offset=offset, filter="a >= 2").num_rows == 0


@pytest.mark.parametrize("batch_size", [1, 2**31, 2**63 - 1, 2**64])
def test_any_positive_batch_size_works(datasets, batch_size):
    ds = datasets["lancelet"]
    batches = list(ds.to_batches(batch_size=batch_size))
    assert sum(b.num_rows for b in batches) == ROWS
    assert all(0 < b.num_rows <= batch_size for b in batches)


def test_a_large_fragment_id_is_just_missing(datasets):
    ds = datasets["lancelet"]
    assert ds.get_fragment(2**64) is None
    with pytest.raises(ValueError, match="fragment 4294967296"):
        ds.scanner(fragments=[2**32]).to_table()


# ---- storage options ----


def test_unknown_storage_options_name_the_key(tmp_path):
    t = table()
    local = str(tmp_path / "local")
    lancelet.write_dataset(t, local)
    # Local and in-memory stores take no options: as pylance does, they are ignored, so code
    # shared between S3 and local paths works (tests/test_drop_in.py compares with pylance).
    assert lancelet.dataset(local, storage_options={"bogus_key": "1"}).count_rows() == t.num_rows
    lancelet.write_dataset(t, "memory://bad_input_opts", storage_options={"bogus_key": "1"})
    assert lancelet.dataset("memory://bad_input_opts", storage_options={"bogus_key": "1"}).count_rows() == t.num_rows
    # On S3, keys are checked before any request is made: no endpoint is needed to refuse them.
    with pytest.raises(ValueError, match="bogus_key"):
        lancelet.dataset("s3://bucket/prefix", storage_options={"bogus_key": "1", "aws_region": "us-east-1"})
    with pytest.raises(ValueError, match="bogus_key"):
        lancelet.write_dataset(t, "s3://bucket/prefix", storage_options={"bogus_key": "1"})


def test_a_bad_manifest_store_option_is_refused():
    with pytest.raises(ValueError, match="manifest_store"):
        lancelet.write_dataset(table(), "memory://bad_input_ms", storage_options={"manifest_store": "bogus:"})


# ---- writing ----


@pytest.mark.parametrize(
    "kwargs, words",
    [
        ({"mode": "bogus"}, ("mode", "bogus")),
        ({"mode": 1}, ("mode", "1")),
        ({"mode": None}, ("mode", "None")),
        ({"max_rows_per_file": 0}, ("max_rows_per_file", "0")),
        ({"max_rows_per_file": -1}, ("max_rows_per_file", "-1")),
        ({"max_rows_per_file": 2**64}, ("max_rows_per_file", str(2**64))),
        ({"max_rows_per_file": 1.5}, ("max_rows_per_file", "1.5")),
        ({"max_rows_per_file": True}, ("max_rows_per_file", "True")),
        ({"max_rows_per_group": 0}, ("max_rows_per_group", "0")),
        ({"max_bytes_per_file": 0}, ("max_bytes_per_file", "0")),
        ({"max_bytes_per_file": -10}, ("max_bytes_per_file", "-10")),
        ({"data_storage_version": "9.9"}, ("data_storage_version", "9.9")),
        ({"progress": 5}, ("progress",)),
    ],
    ids=lambda x: repr(x) if isinstance(x, dict) else None,
)
def test_bad_write_arguments_raise_before_writing(tmp_path, kwargs, words):
    uri = tmp_path / "ds"
    with pytest.raises(ValueError) as info:
        lancelet.write_dataset(table(), str(uri), **kwargs)
    assert isinstance(info.value, InvalidArgumentError)
    for w in words:
        assert w in str(info.value)
    assert not uri.exists(), "a refused write left files behind"


@pytest.mark.parametrize(
    "data, schema, error, words",
    [
        (5, None, TypeError, ("int",)),
        ("abc", None, TypeError, ("str",)),
        (object(), None, TypeError, ("object",)),
        (table(), 5, TypeError, ("schema", "int")),
        ([], None, ValueError, ("empty",)),
    ],
    ids=["int", "str", "object", "schema-int", "empty-list"],
)
def test_bad_write_data_raises(tmp_path, data, schema, error, words):
    with pytest.raises(error) as info:
        lancelet.write_dataset(data, str(tmp_path / "ds"), schema=schema)
    for w in words:
        assert w in str(info.value)


def test_unknown_write_keywords_are_type_errors(tmp_path):
    with pytest.raises(TypeError, match="bogus"):
        lancelet.write_dataset(table(), str(tmp_path / "ds"), bogus=1)


def test_appending_another_schema_names_the_field(tmp_path):
    uri = str(tmp_path / "ds")
    lancelet.write_dataset(table(), uri)
    with pytest.raises(lancelet.SchemaMismatchError, match="zz"):
        lancelet.write_dataset(pa.table({"zz": [1.5]}), uri, mode="append")
    with pytest.raises(lancelet.SchemaMismatchError, match='"a"'):
        lancelet.write_dataset(pa.table({"a": ["x"], "s": ["y"]}), uri, mode="append")
    assert lancelet.dataset(uri).version == 1


def test_creating_a_tag_twice_is_refused(tmp_path):
    uri = str(tmp_path / "ds")
    ds = lancelet.write_dataset(table(), uri)
    ds.tags.create("first", 1)
    with pytest.raises(ValueError, match="first"):
        ds.tags.create("first", 1)
    assert ds.tags.get_version("first") == 1
