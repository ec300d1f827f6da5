"""Packed sidecars shared by several blob v2 columns.

pylance 14 keeps one current pack per data file for all its blob columns: each input batch
is placed column after column (blob fields in pre-order), rows in order; a packed value
closes the pack when it would pass the pack's threshold or when its column's pack
threshold differs from the one the pack was opened with; dedicated values take the next
id and leave the pack open; the ``blob_pack_file_size_threshold`` write option overrides
the fields' own thresholds. Every case is written by both libraries: the descriptors and
the sidecars (names, sizes, bytes) must be the same, and both libraries read every value
back from either dataset.
"""

from __future__ import annotations

import os

import pyarrow as pa
import pytest

import lancelet

lance = pytest.importorskip("lance")

pytestmark = pytest.mark.interop

LIBS = {"lancelet": lancelet, "pylance": lance}


def P(c, n=10):  # packed with the thresholds below (inline <= 4, dedicated > 16)
    return c * n


def D(c):  # dedicated
    return c * 40


def field(mod, name, inline=4, dedicated=16, pack=None):
    kw = {} if pack is None else {"pack_file_size_threshold": pack}
    return mod.blob_field(name, inline_size_threshold=inline, dedicated_size_threshold=dedicated, **kw)


def write(mod, uri, batches, specs, **kw):
    """``batches``: per batch, per blob column, its values; ``specs``: per column, the
    keyword arguments of :func:`field`."""
    fields = [field(mod, **s) for s in specs]
    schema = pa.schema([pa.field("id", pa.int64())] + fields)
    out, start = [], 0
    for cols in batches:
        n = len(cols[0])
        arrays = [pa.array(range(start, start + n), pa.int64())] + [mod.blob_array(v) for v in cols]
        out.append(pa.record_batch(arrays, schema=schema))
        start += n
    mod.write_dataset(pa.RecordBatchReader.from_batches(schema, out), uri, **kw)


def descriptors(uri, names):
    t = lance.dataset(uri).to_table()
    return {
        n: [d and (d["kind"], d["blob_id"], d["position"], d["size"]) for d in t.column(n).to_pylist()]
        for n in names
    }


def read(path):
    with open(path, "rb") as f:
        return f.read()


def sidecars(uri):
    """Per data file (in fragment order): its sidecars as (name, bytes)."""
    out = []
    for frag in lance.dataset(uri).get_fragments():
        for f in frag.data_files():
            d = os.path.join(uri, "data", f.path.removesuffix(".lance"))
            names = sorted(os.listdir(d)) if os.path.isdir(d) else []
            out.append([(n, read(os.path.join(d, n))) for n in names])
    return out


def values(uri, names, n):
    """Every value through take_blobs and read_blobs of both libraries."""
    got = {}
    for mod in LIBS.values():
        ds = mod.dataset(uri)
        for c in names:
            via_read = [b for _, b in ds.read_blobs(c, indices=list(range(n)))]
            via_files = [None if f is None else f.read() for f in ds.take_blobs(c, indices=list(range(n)))]
            assert via_read == via_files
            assert got.setdefault(c, via_read) == via_read
    return got


def twin(tmp_path, batches, specs, **kw):
    """Writes the case with both libraries; returns pylance's descriptors and sidecars
    after checking lancelet's are the same and every value reads back."""
    names = [s["name"] for s in specs]
    n = sum(len(b[0]) for b in batches)
    want = {c: [v for b in batches for v in b[i]] for i, c in enumerate(names)}
    seen = []
    for w, mod in LIBS.items():
        uri = str(tmp_path / f"{w}.lance")
        write(mod, uri, batches, specs, **kw)
        assert values(uri, names, n) == want
        seen.append((descriptors(uri, names), sidecars(uri)))
    assert seen[0] == seen[1]
    return seen[1]


def ids_and_sizes(side):
    return [sorted((int(name[:32][::-1], 2), len(b)) for name, b in f) for f in side]


TWO = [{"name": "a"}, {"name": "b"}]


def test_two_columns_share_one_pack(tmp_path):
    desc, side = twin(tmp_path, [[[P(b"a"), P(b"A")], [P(b"b"), P(b"B")]]], TWO)
    assert desc == {"a": [(1, 1, 0, 10), (1, 1, 10, 10)], "b": [(1, 1, 20, 10), (1, 1, 30, 10)]}
    assert side == [[("10000000000000000000000000000000.blob", b"a" * 10 + b"A" * 10 + b"b" * 10 + b"B" * 10)]]


def test_dedicated_values_take_the_next_id_and_leave_the_pack_open(tmp_path):
    desc, side = twin(tmp_path, [[[P(b"a"), D(b"A"), P(b"c")], [D(b"b"), P(b"B"), P(b"d")]]], TWO)
    assert desc == {
        "a": [(1, 1, 0, 10), (2, 2, 0, 40), (1, 1, 10, 10)],
        "b": [(2, 3, 0, 40), (1, 1, 20, 10), (1, 1, 30, 10)],
    }
    assert ids_and_sizes(side) == [[(1, 40), (2, 40), (3, 40)]]


def test_batches_are_placed_column_after_column(tmp_path):
    desc, side = twin(
        tmp_path,
        [[[P(b"a"), P(b"A")], [P(b"b"), P(b"B")]], [[P(b"c"), D(b"C")], [P(b"d"), P(b"D")]]],
        TWO,
    )
    assert [d[2] for d in desc["a"]] == [0, 10, 40, 0] and [d[2] for d in desc["b"]] == [20, 30, 50, 60]
    assert ids_and_sizes(side) == [[(1, 70), (2, 40)]]


def test_one_row_batches_interleave(tmp_path):
    batches = [[[P(bytes([65 + i]))], [P(bytes([97 + i]))]] for i in range(5)]
    desc, _ = twin(tmp_path, batches, TWO)
    assert [d[2] for d in desc["a"]] == [0, 20, 40, 60, 80]


def test_rollover_with_the_write_option(tmp_path):
    desc, side = twin(
        tmp_path,
        [[[P(b"a"), P(b"A"), P(b"c")], [P(b"b"), P(b"B"), P(b"d")]]],
        TWO,
        blob_pack_file_size_threshold=25,
    )
    assert desc == {
        "a": [(1, 1, 0, 10), (1, 1, 10, 10), (1, 2, 0, 10)],
        "b": [(1, 2, 10, 10), (1, 3, 0, 10), (1, 3, 10, 10)],
    }
    assert ids_and_sizes(side) == [[(1, 20), (2, 20), (3, 20)]]


@pytest.mark.parametrize(
    "specs,want",
    [
        ([{"name": "a", "pack": 25}, {"name": "b"}], [(1, 20), (2, 10), (3, 30)]),
        ([{"name": "a"}, {"name": "b", "pack": 25}], [(1, 30), (2, 20), (3, 10)]),
        # Other inline/dedicated thresholds, or the same explicit pack threshold: one pack.
        ([{"name": "a"}, {"name": "b", "inline": 5}], [(1, 60)]),
        ([{"name": "a"}, {"name": "b", "dedicated": 17}], [(1, 60)]),
        ([{"name": "a", "pack": 100}, {"name": "b", "pack": 100}], [(1, 60)]),
        ([{"name": "a", "pack": 1 << 30}, {"name": "b"}], [(1, 60)]),
    ],
)
def test_a_column_with_another_pack_threshold_closes_the_pack(tmp_path, specs, want):
    _, side = twin(tmp_path, [[[P(b"a"), P(b"A"), P(b"c")], [P(b"b"), P(b"B"), P(b"d")]]], specs)
    assert ids_and_sizes(side) == [want]


def test_thresholds_alternating_per_batch(tmp_path):
    desc, side = twin(tmp_path, [[[P(b"a")], [P(b"b")]], [[P(b"A")], [P(b"B")]]], [{"name": "a", "pack": 25}, {"name": "b"}])
    assert desc == {"a": [(1, 1, 0, 10), (1, 3, 0, 10)], "b": [(1, 2, 0, 10), (1, 4, 0, 10)]}
    assert ids_and_sizes(side) == [[(1, 10), (2, 10), (3, 10), (4, 10)]]


@pytest.mark.parametrize("other", [[b"bb", b"BB"], [D(b"b"), D(b"B")]])
def test_inline_and_dedicated_values_do_not_close_the_pack(tmp_path, other):
    desc, _ = twin(tmp_path, [[[P(b"a")], [other[0]]], [[P(b"A")], [other[1]]]], [{"name": "a", "pack": 25}, {"name": "b"}])
    assert desc["a"] == [(1, 1, 0, 10), (1, 1, 10, 10)]


def test_an_empty_pack_takes_any_value(tmp_path):
    desc, _ = twin(tmp_path, [[[P(b"a", 30), P(b"A", 5), P(b"c", 30)]]], [{"name": "a", "dedicated": 100, "pack": 25}])
    assert desc == {"a": [(1, 1, 0, 30), (1, 2, 0, 5), (1, 3, 0, 30)]}


@pytest.mark.parametrize("field_pack,option,want", [(100, 25, [(1, 20), (2, 20), (3, 20)]), (25, 100, [(1, 60)])])
def test_the_write_option_wins_over_the_field(tmp_path, field_pack, option, want):
    _, side = twin(
        tmp_path,
        [[[P(b"a"), P(b"A"), P(b"c")], [P(b"b"), P(b"B"), P(b"d")]]],
        [{"name": "a", "pack": field_pack}, {"name": "b"}],
        blob_pack_file_size_threshold=option,
    )
    assert ids_and_sizes(side) == [want]


def test_each_data_file_has_its_own_packs(tmp_path):
    desc, side = twin(
        tmp_path, [[[P(b"a"), P(b"A"), P(b"c")], [P(b"b"), P(b"B"), D(b"d")]]], TWO, max_rows_per_file=2
    )
    assert desc["b"][2] == (2, 2, 0, 40)
    assert ids_and_sizes(side) == [[(1, 40)], [(1, 10), (2, 40)]]


def test_a_large_batch_is_one_column_after_the_other(tmp_path):
    n = 3000
    a = [b"a%07d" % i for i in range(n)]
    b = [b"b%07d" % i for i in range(n)]
    desc, side = twin(tmp_path, [[a, b]], [{"name": "a", "dedicated": 1000}, {"name": "b", "dedicated": 1000}])
    assert [d[2] for d in desc["a"]] == [8 * i for i in range(n)]
    assert [d[2] for d in desc["b"]] == [8 * (n + i) for i in range(n)]
    assert ids_and_sizes(side) == [[(1, 16 * n)]]
