"""The SQL filter function ``contains_tokens(col, 'terms')`` against pylance 14 as the oracle.

pylance's definition (a DataFusion UDF): split the value and the query into maximal runs of
alphanumeric characters (Rust ``char::is_alphanumeric``); the row matches when every query
token is one of the value's tokens. Case sensitive, whole tokens, no stemming, stop words or
folding; a query without tokens matches every non-NULL row; a NULL value gives NULL. An
INVERTED index on a ``string`` column with the simple tokenizer, English, ``stem=False`` and
``max_token_length=None`` only narrows the candidates (rechecked with the UDF); others are
ignored.

Datasets are written by either library, indexed by either, and filtered by both. Where
pylance 14 is wrong (an index answer used without its recheck, the NULL query read as ``''``,
a column query read from the first row of each batch) lancelet is checked against the rule
and the pylance case is a strict xfail that documents the bug.
"""

from __future__ import annotations

import random
from typing import Dict, List, Optional

import numpy as np
import pyarrow as pa
import pytest

import lancelet
from lancelet.errors import InvalidArgumentError
from lancelet.query import MatchQuery

lance = pytest.importorskip("lance")
import lance.query as lq  # noqa: E402

pytestmark = pytest.mark.interop

LIBS = {"lancelet": lancelet, "pylance": lance}

# --------------------------------------------------------------------------------------
# The rule, in Python (valid on text without Unicode marks that Rust counts as alphabetic
# and Python does not, e.g. Devanagari vowel signs: test_reference_agrees_with_pylance
# checks it on the corpus)
# --------------------------------------------------------------------------------------


def tokens(s: str) -> List[str]:
    out, cur = [], []
    for ch in s:
        if ch.isalnum():
            cur.append(ch)
        elif cur:
            out.append("".join(cur))
            cur = []
    if cur:
        out.append("".join(cur))
    return out


def matches(text: Optional[str], query: Optional[str]) -> Optional[bool]:
    if text is None or query is None:
        return None
    return set(tokens(query)) <= set(tokens(text))


def expected(texts: List[Optional[str]], query: str, ids: Optional[List[int]] = None) -> List[int]:
    ids = list(range(len(texts))) if ids is None else ids
    return sorted(i for i, t in zip(ids, texts) if matches(t, query))


# --------------------------------------------------------------------------------------
# Data
# --------------------------------------------------------------------------------------

WORDS = (
    "fox Fox FOX foxes dog dogs Dog running run ran the The a of and café Café cafe naïve x_y "
    "don't 3.14 well-known co-op Über über straße 2024 quick brown lazy jumps over foxdog"
).split()
SEPS = [" "] * 6 + [", ", "-", ". ", "_", "/", "\n", "  ", "\t", "\u00a0"]


def corpus(n: int, seed: int) -> List[Optional[str]]:
    rng = random.Random(seed)
    out: List[Optional[str]] = []
    for i in range(n):
        if i % 17 == 0:
            out.append(None)
        elif i % 19 == 0:
            out.append("")
        elif i % 23 == 0:
            out.append("the of a")  # only stop words
        elif i % 29 == 0:
            out.append("!! --")  # no token at all
        elif i % 31 == 0:
            out.append("🦊")
        else:
            s = rng.choice(WORDS)
            for _ in range(rng.randint(0, 11)):
                s += rng.choice(SEPS) + rng.choice(WORDS)
            out.append(s)
    return out


N = 240
TEXTS = corpus(N, 11)


def table(texts=TEXTS, start: int = 0, text_type: Optional[pa.DataType] = None) -> pa.Table:
    n = len(texts)
    return pa.table(
        {
            "id": pa.array(range(start, start + n), pa.int64()),
            "text": pa.array(texts, text_type or pa.string()),
            "body": ["fox body"] * n,  # every row matches a full-text search for 'fox' on body
        }
    )


#: Queries with at least one token that is not a stop word: every path of pylance agrees
#: with the rule on them.
QUERIES: Dict[str, str] = {
    "single": "fox",
    "two": "fox dog",
    "reversed": "dog fox",
    "repeated": "fox fox",
    "three": "quick brown fox",
    "comma": "fox,dog",
    "hyphen": "fox-dog",
    "padded": "  fox \t dog. ",
    "upper": "FOX",
    "title": "Fox",
    "mixed-case": "Fox dog",
    "stemmed": "running",
    "stem-base": "run",
    "plural": "dogs",
    "substring": "fo",
    "glued": "foxdog",
    "stop-and-word": "the fox",
    "accent": "café",
    "accent-title": "Café",
    "folded": "cafe",
    "eszett": "straße",
    "underscore": "x_y",
    "underscore-part": "y",
    "apostrophe": "don't",
    "apostrophe-part": "t",
    "decimal": "3.14",
    "digits": "2024",
    "hyphenated": "well-known",
    "umlaut": "Über",
    "absent": "zebra",
}
#: Queries without a token: vacuously true for every non-NULL row.
ZERO = {"empty": "", "spaces": "   ", "punct": "!!", "emoji": "🦊", "separators": ",-."}
#: Queries of stop words only (an index with remove_stop_words drops every term).
STOP = {"stop": "the", "stops": "the a of"}
ALL = {**QUERIES, **ZERO, **STOP}

ACCEL = {"stem": False, "max_token_length": None}  # the parameters pylance needs to use the index


def lit(q: str) -> str:
    return "'" + q.replace("'", "''") + "'"


def ct(q: str, col: str = "text") -> str:
    return f"contains_tokens({col}, {lit(q)})"


def ids(t: pa.Table) -> List[int]:
    return sorted(t["id"].to_pylist())


def run(ds, flt: str, **kw) -> List[int]:
    return ids(ds.to_table(filter=flt, columns=["id"], **kw))


def uses_index(uri: str, col: str = "text") -> bool:
    """Whether pylance answers contains_tokens on ``col`` from an index."""
    return "ScalarIndexQuery" in lance.dataset(uri).scanner(filter=ct("fox", col)).explain_plan(True)


def write(lib, data: pa.Table, uri: str, **kw):
    lib.write_dataset(data, uri, **kw)
    return lib.dataset(uri)


def non_null(texts, start: int = 0) -> List[int]:
    return [start + i for i, t in enumerate(texts) if t is not None]


# --------------------------------------------------------------------------------------
# The rule itself, on pylance
# --------------------------------------------------------------------------------------


def test_reference_agrees_with_pylance(tmp_path):
    """The Python statement of the rule reproduces pylance (no index) on the corpus, so the
    tests below may use it where pylance is wrong."""
    ds = write(lance, table(), str(tmp_path / "d"))
    for name, q in ALL.items():
        assert run(ds, ct(q)) == expected(TEXTS, q), name
    nonempty = sum(bool(expected(TEXTS, q)) for q in QUERIES.values())
    assert nonempty >= len(QUERIES) - 2  # 'fo' and 'zebra' find nothing


# --------------------------------------------------------------------------------------
# No index: both ways, string and large_string, every query
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("text_type", [pa.string(), pa.large_string()], ids=["string", "large_string"])
@pytest.mark.parametrize("writer", LIBS)
def test_unindexed_agrees_with_pylance(tmp_path, writer, text_type):
    uri = str(tmp_path / "d")
    write(LIBS[writer], table(text_type=text_type), uri, max_rows_per_file=100)
    ours, theirs = lancelet.dataset(uri), lance.dataset(uri)
    want = {name: run(theirs, ct(q)) for name, q in ALL.items()}
    for name, q in ALL.items():
        assert run(ours, ct(q)) == want[name], name
        assert ours.count_rows(ct(q)) == len(want[name]), name
    # The other scan entry points.
    f = ct("fox dog")
    assert ids(ours.scanner(filter=f, columns=["id"]).to_table()) == want["two"]
    batches = ours.to_batches(filter=f, columns=["id"], batch_size=7)
    assert sorted(i for b in batches for i in b["id"].to_pylist()) == want["two"]
    assert ours.scanner(filter=f).count_rows() == len(want["two"])
    for a, b in zip(ours.get_fragments(), theirs.get_fragments()):
        assert ids(a.to_table(filter=f, columns=["id"])) == ids(b.to_table(filter=f, columns=["id"]))
        assert a.count_rows(f) == b.count_rows(f)


# --------------------------------------------------------------------------------------
# INVERTED indexes: whichever library builds them, the answer is the rule's
# --------------------------------------------------------------------------------------

#: name -> (create_scalar_index keywords, pylance uses it, it drops stop words)
INDEXES = {
    "default": ({}, False, True),
    "accel": (ACCEL, True, True),
    "accel-keep-stop-words": ({**ACCEL, "remove_stop_words": False}, True, False),
    "accel-exact-case": ({**ACCEL, "lower_case": False, "ascii_folding": False, "with_position": True}, True, True),
    "whitespace": ({**ACCEL, "base_tokenizer": "whitespace"}, False, True),
    "ngram": ({**ACCEL, "base_tokenizer": "ngram"}, False, False),
    "max-token-length": ({"stem": False, "max_token_length": 3}, False, True),
}


@pytest.mark.parametrize("index", INDEXES)
@pytest.mark.parametrize("builder", LIBS)
def test_indexed_agrees_with_pylance(tmp_path, builder, index):
    params, accelerated, drops_stop_words = INDEXES[index]
    uri = str(tmp_path / "d")
    write(LIBS[builder], table(), uri, max_rows_per_file=100).create_scalar_index("text", "INVERTED", **params)
    # pylance reads a lancelet-built index's parameters as its own.
    assert uses_index(uri) == accelerated
    ours, theirs = lancelet.dataset(uri), lance.dataset(uri)
    for name, q in ALL.items():
        want = expected(TEXTS, q)
        # pylance drops rows on these with an index it uses (test_pylance_* below).
        pylance_wrong = accelerated and (name in ZERO or (drops_stop_words and name in STOP))
        if not pylance_wrong:
            assert run(theirs, ct(q)) == want, name
        assert run(ours, ct(q)) == want, name
        assert ours.count_rows(ct(q)) == len(want), name
        assert run(ours, ct(q), use_scalar_index=False) == want, name


def test_large_string_index_is_not_used(tmp_path):
    """pylance never answers contains_tokens on a large_string column from its index, so even
    the queries it gets wrong on a string column agree."""
    uri = str(tmp_path / "d")
    write(lance, table(text_type=pa.large_string()), uri).create_scalar_index("text", "INVERTED", **ACCEL)
    assert not uses_index(uri)
    ours, theirs = lancelet.dataset(uri), lance.dataset(uri)
    for name, q in ALL.items():
        assert run(theirs, ct(q)) == expected(TEXTS, q), name
        assert run(ours, ct(q)) == expected(TEXTS, q), name


# --------------------------------------------------------------------------------------
# NULLs, empty queries, predicates around the call
# --------------------------------------------------------------------------------------

SMALL = ["fox dog", "Fox", None, "", "dog", "fox cat dog", "the", "the fox", "!!", "FOX DOG", "café", "cafe"]


@pytest.mark.parametrize("indexed", [False, True], ids=["unindexed", "indexed"])
def test_nulls_and_queries_without_tokens(tmp_path, indexed):
    uri = str(tmp_path / "d")
    ds = write(lancelet, table(SMALL), uri)
    if indexed:
        ds.create_scalar_index("text", "INVERTED", **ACCEL)
        assert uses_index(uri)
    ours = lancelet.dataset(uri)
    every = non_null(SMALL)
    for q in ZERO.values():
        assert run(ours, ct(q)) == every, q
        assert ours.count_rows(ct(q)) == len(every), q
        assert run(ours, "NOT " + ct(q)) == [], q
        assert run(ours, ct(q) + " AND id > 4") == [i for i in every if i > 4], q
    assert run(ours, ct("the")) == [6, 7]
    assert run(ours, ct("fox") + " IS NULL") == [2]
    assert run(ours, ct("fox") + " IS NOT TRUE") == [1, 2, 3, 4, 6, 8, 9, 10, 11]
    assert run(ours, "NOT " + ct("fox")) == [1, 3, 4, 6, 8, 9, 10, 11]  # not the NULL row
    assert ours.count_rows("NOT " + ct("fox")) == 8
    # The observed pylance answers without an index.
    theirs = lance.dataset(uri)
    kw = {"use_scalar_index": False}
    assert run(theirs, ct(""), **kw) == every
    assert run(theirs, ct("fox") + " IS NULL", **kw) == [2]
    assert run(theirs, "NOT " + ct("fox"), **kw) == [1, 3, 4, 6, 8, 9, 10, 11]


PREDICATES = [
    ct("fox") + " AND id > 50",
    ct("fox") + " OR id < 10",
    "NOT " + ct("fox"),
    "NOT " + ct("Fox dog"),
    ct("fox") + " AND " + ct("dog"),
    ct("fox") + " AND NOT " + ct("dog"),
    "(" + ct("café") + " OR " + ct("dog") + ") AND id % 2 = 0",
    ct("fox") + " IS NULL",
    ct("fox") + " IS NOT TRUE",
    ct("fox") + " IS FALSE",
    ct("fox") + " = true",
    ct("fox") + " != false",
    ct("fox") + " IN (true)",
    "coalesce(" + ct("fox") + ", true)",
    "NOT (" + ct("fox") + " OR id > 100)",
    ct("") + " OR id = 3",
    "NOT " + ct(""),
    "NOT " + ct("the"),
    ct("!!") + " IS NULL",
    ct("fox", "upper(text)"),
    "contains_tokens(upper(text), 'FOX DOG')",
    "contains_tokens(text, 'fox' || ' dog')",
    "contains_tokens(text, lower('FOX'))",
    "contains_tokens(text, 'fox'::varchar)",
    "CONTAINS_TOKENS(text, 'fox')",
    "Contains_Tokens(text, 'fox')",
    "contains_tokens('fox dog', 'fox')",
    "contains_tokens('fox dog', 'cat')",
]


@pytest.mark.parametrize("indexed", [False, True], ids=["unindexed", "indexed"])
def test_predicates_agree_with_pylance(tmp_path, indexed):
    uri = str(tmp_path / "d")
    ds = write(lance, table(corpus(200, 3)), uri, max_rows_per_file=80)
    if indexed:
        ds.create_scalar_index("text", "INVERTED", **ACCEL)
    ours, theirs = lancelet.dataset(uri), lance.dataset(uri)
    want = {f: run(theirs, f, use_scalar_index=False) for f in PREDICATES}
    for f in PREDICATES:
        assert run(theirs, f) == want[f], f  # to_table rechecks the index (but see test_pylance_count_rows_*)
    assert sum(bool(w) for w in want.values()) >= len(PREDICATES) - 3
    for f in PREDICATES:
        assert run(ours, f) == want[f], f
        assert ours.count_rows(f) == len(want[f]), f


# --------------------------------------------------------------------------------------
# Lifecycle: appends after the index, deletes, optimize, delete/update by predicate
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("builder", LIBS)
def test_appended_and_deleted_rows(tmp_path, builder):
    uri = str(tmp_path / "d")
    other = lance if builder == "lancelet" else lancelet
    write(LIBS[builder], table(TEXTS[:150]), uri, max_rows_per_file=80)
    LIBS[builder].dataset(uri).create_scalar_index("text", "INVERTED", **ACCEL)
    other.write_dataset(table(TEXTS[150:], start=150), uri, mode="append")
    LIBS[builder].dataset(uri).delete("id % 7 = 0")
    other.dataset(uri).delete("id % 11 = 0")
    alive = [i for i in range(N) if i % 7 and i % 11]
    texts = [TEXTS[i] for i in alive]
    ours, theirs = lancelet.dataset(uri), lance.dataset(uri)
    assert len(ours.get_fragments()) == 3 and uses_index(uri)
    for name, q in ALL.items():
        want = expected(texts, q, alive)
        if name in QUERIES:
            assert run(theirs, ct(q)) == want, name
        assert run(ours, ct(q)) == want, name
        assert ours.count_rows(ct(q)) == len(want), name
    for a, b in zip(ours.get_fragments(), theirs.get_fragments()):
        f = ct("fox dog")
        assert ids(a.to_table(filter=f, columns=["id"])) == ids(b.to_table(filter=f, columns=["id"]))
    # Once the tail is indexed (by lancelet), still the same.
    ours.optimize.optimize_indices()
    ours, theirs = lancelet.dataset(uri), lance.dataset(uri)
    for name, q in ALL.items():
        want = expected(texts, q, alive)
        if name in QUERIES:
            assert run(theirs, ct(q)) == want, name
        assert run(ours, ct(q)) == want, name


@pytest.mark.parametrize("indexed", [False, True], ids=["unindexed", "indexed"])
@pytest.mark.parametrize("lib", LIBS)
def test_delete_and_update_where(tmp_path, lib, indexed):
    uri = str(tmp_path / "d")
    ds = write(LIBS[lib], table(SMALL), uri)
    if indexed:
        ds.create_scalar_index("text", "INVERTED", **ACCEL)
    LIBS[lib].dataset(uri).delete(ct("dog"))
    LIBS[lib].dataset(uri).update({"body": "'hit'"}, where=ct("fox"))
    for reader in LIBS.values():
        t = reader.dataset(uri).to_table(columns=["id", "body"])
        rows = dict(zip(t["id"].to_pylist(), t["body"].to_pylist()))
        assert sorted(rows) == [i for i, s in enumerate(SMALL) if not matches(s, "dog")]
        assert sorted(i for i, b in rows.items() if b == "hit") == [7]  # 'the fox' ('fox dog' is gone)


# --------------------------------------------------------------------------------------
# Vector and full-text searches filtered by contains_tokens
# --------------------------------------------------------------------------------------


def vector_table(texts) -> pa.Table:
    n = len(texts)
    vecs = np.random.default_rng(5).random((n, 8), dtype=np.float32)
    return table(texts).append_column("vec", pa.FixedSizeListArray.from_arrays(pa.array(vecs.ravel()), 8))


@pytest.mark.parametrize("indexed", [False, True], ids=["unindexed", "indexed"])
@pytest.mark.parametrize("writer", LIBS)
def test_search_filters(tmp_path, writer, indexed):
    texts = corpus(120, 9)
    uri = str(tmp_path / "d")
    ds = write(LIBS[writer], vector_table(texts), uri)
    ds.create_scalar_index("body", "INVERTED")
    if indexed:
        ds.create_scalar_index("text", "INVERTED", **ACCEL)
    ours, theirs = lancelet.dataset(uri), lance.dataset(uri)
    q = np.random.default_rng(6).random(8, dtype=np.float32)
    for query in ("fox", "fox dog", "Fox", "café", "the fox"):
        want = expected(texts, query)
        for pre in (True, False):
            near = {"column": "vec", "q": q, "k": len(texts)}
            assert run(theirs, ct(query), nearest=near, prefilter=pre) == want, (query, pre)
            assert run(ours, ct(query), nearest=near, prefilter=pre) == want, (query, pre)
            near = {"column": "vec", "q": q, "k": 10}
            a = ours.to_table(filter=ct(query), nearest=near, prefilter=pre, columns=["id"])
            b = theirs.to_table(filter=ct(query), nearest=near, prefilter=pre, columns=["id"])
            assert a["id"].to_pylist() == b["id"].to_pylist(), (query, pre)
            if not (indexed and pre):  # pylance skips the recheck there: test_pylance_fts_prefilter_*
                fts = lq.MatchQuery("fox", "body")
                assert run(theirs, ct(query), full_text_query=fts, prefilter=pre) == want, (query, pre)
            fts = MatchQuery("fox", "body")
            assert run(ours, ct(query), full_text_query=fts, prefilter=pre) == want, (query, pre)


# --------------------------------------------------------------------------------------
# List and dictionary columns, Unicode
# --------------------------------------------------------------------------------------

LISTS = [
    ["fox dog"],
    ["Fox"],
    None,
    [],
    ["dog", "fox"],
    ["fox cat dog"],
    [None, "fox"],
    [None],
    ["a,b", "[c]"],
    ["null"],
]


@pytest.mark.parametrize("writer", LIBS)
def test_list_columns_match_the_union_of_their_elements(tmp_path, writer):
    """pylance casts a list to its text form ``[a, b]``: a row's tokens are those of all its
    elements together; NULL elements add none."""
    uri = str(tmp_path / "d")
    data = pa.table(
        {
            "id": pa.array(range(len(LISTS)), pa.int64()),
            "l": pa.array(LISTS, pa.list_(pa.string())),
            "ll": pa.array(LISTS, pa.large_list(pa.large_string())),
        }
    )
    ds = write(LIBS[writer], data, uri)
    ds.create_scalar_index("l", "INVERTED", **ACCEL)  # never used by pylance for a list
    assert not uses_index(uri, "l")
    want = {
        "fox": [0, 4, 5, 6],
        "fox dog": [0, 4, 5],
        "": [0, 1, 3, 4, 5, 6, 7, 8, 9],
        "a b c": [8],
        "null": [9],
        "Fox": [1],
    }
    ours, theirs = lancelet.dataset(uri), lance.dataset(uri)
    for col in ("l", "ll"):
        for q, w in want.items():
            assert run(theirs, ct(q, col)) == w, (col, q)
            assert run(ours, ct(q, col)) == w, (col, q)
            assert ours.count_rows(ct(q, col)) == len(w), (col, q)
        assert run(ours, ct("fox", col) + " IS NULL") == [2]


def test_dictionary_column(tmp_path):
    uri = str(tmp_path / "d")
    data = pa.table(
        {"id": pa.array(range(len(SMALL)), pa.int64()), "d": pa.array(SMALL, pa.dictionary(pa.int32(), pa.string()))}
    )
    lance.write_dataset(data, uri)
    ours, theirs = lancelet.dataset(uri), lance.dataset(uri)
    for q in ("fox", "Fox", "fox dog", "", "café"):
        assert run(theirs, ct(q, "d")) == expected(SMALL, q), q
        assert run(ours, ct(q, "d")) == expected(SMALL, q), q


UNICODE = [
    "日本語 テキスト",
    "日本 語",
    "e\u0301cole",
    "école",
    "हिन्दी भाषा",
    "x²y",
    "Ⅻ roman",
    "a\u00a0b",
    "tab\tsep\nline",
    "emoji🦊fox",
    "ǅemal",
    "٣٤ arabic digits",
    "ß STRASSE",
    "İstanbul",
    "ﬁne",
    "foo_bar",
    "O'Neil",
]

#: Observed with pylance 14.0.2 (no index).
UNICODE_WANT = {
    "日本語": [0],
    "日本": [1],
    "語": [1],
    "e": [2],
    "cole": [2],
    "\u0301cole": [2],
    "école": [3],
    "हिन्दी": [4],
    "हि": [],
    "न्दी": [],
    "x²y": [5],
    "x": [],
    "²": [],
    "Ⅻ": [6],
    "a b": [7],
    "tab sep line": [8],
    "emoji fox": [9],
    "🦊": list(range(len(UNICODE))),
    "ǅemal": [10],
    "٣٤": [11],
    "ß": [12],
    "ss": [],
    "strasse": [],
    "İstanbul": [13],
    "istanbul": [],
    "ﬁne": [14],
    "fine": [],
    "foo bar": [15],
    "foo_bar": [15],
    "O Neil": [16],
}


@pytest.mark.parametrize("writer", LIBS)
def test_unicode_tokens(tmp_path, writer):
    uri = str(tmp_path / "d")
    write(LIBS[writer], table(UNICODE), uri)
    ours, theirs = lancelet.dataset(uri), lance.dataset(uri)
    for q, w in UNICODE_WANT.items():
        assert run(theirs, ct(q)) == w, q
        assert run(ours, ct(q)) == w, q


# --------------------------------------------------------------------------------------
# Bad arguments
# --------------------------------------------------------------------------------------


def other_types_table() -> pa.Table:
    return pa.table(
        {
            "id": pa.array(range(3), pa.int64()),
            "text": ["fox 1", "true", None],
            "n": pa.array([1, 2, None], pa.int64()),
            "f": [1.5, -2.0, None],
            "bo": [True, False, None],
            "bin": pa.array([b"fox", b"dog", None], pa.binary()),
            "dt": pa.array([0, 1, None], pa.date32()),
            "s": pa.array([{"x": "fox"}, {"x": "dog"}, {"x": None}]),
            "q": ["fox", "dog", None],
        }
    )


BAD = {
    "no-args": ("contains_tokens()", ["contains_tokens", "argument"]),
    "one-arg": ("contains_tokens(text)", ["contains_tokens", "argument"]),
    "three-args": ("contains_tokens(text, 'fox', 'dog')", ["contains_tokens", "argument"]),
    "unknown-column": ("contains_tokens(nosuch, 'fox')", ["nosuch"]),
    "compared-to-int": ("contains_tokens(text, 'fox') > 0", []),
    "struct-column": ("contains_tokens(s, 'fox')", ["contains_tokens", "string"]),
    # pylance casts these to strings (see test_pylance_casts_other_types); lancelet does not.
    "int-column": ("contains_tokens(n, '1')", ["contains_tokens", "string"]),
    "float-column": ("contains_tokens(f, '5')", ["contains_tokens", "string"]),
    "bool-column": ("contains_tokens(bo, 'true')", ["contains_tokens", "string"]),
    "binary-column": ("contains_tokens(bin, 'fox')", ["contains_tokens", "string"]),
    "date-column": ("contains_tokens(dt, '1970')", ["contains_tokens", "string"]),
    "int-query": ("contains_tokens(text, 1)", ["contains_tokens", "string"]),
    "float-query": ("contains_tokens(text, 1.5)", ["contains_tokens", "string"]),
    "bool-query": ("contains_tokens(text, true)", ["contains_tokens", "string"]),
    "int-column-query": ("contains_tokens(text, n)", ["contains_tokens", "string"]),
}


@pytest.mark.parametrize("case", BAD)
def test_bad_arguments(tmp_path, case):
    flt, needles = BAD[case]
    uri = str(tmp_path / "d")
    ds = write(lancelet, other_types_table(), uri)
    for call in (lambda: ds.to_table(filter=flt), lambda: ds.count_rows(flt)):
        with pytest.raises(InvalidArgumentError) as err:
            call()
        msg = str(err.value)
        assert "unknown function" not in msg, msg
        for needle in needles:
            assert needle.lower() in msg.lower(), (needle, msg)


PYLANCE_ERRORS = ["no-args", "one-arg", "three-args", "unknown-column", "compared-to-int", "struct-column"]


@pytest.mark.parametrize("case", PYLANCE_ERRORS)
def test_pylance_rejects(tmp_path, case):
    flt, _ = BAD[case]
    ds = write(lance, other_types_table(), str(tmp_path / "d"))
    with pytest.raises(ValueError, match="Invalid user input"):
        ds.to_table(filter=flt)


def test_pylance_casts_other_types(tmp_path):
    """What lancelet declines (test_bad_arguments): pylance's implicit casts to Utf8."""
    ds = write(lance, other_types_table(), str(tmp_path / "d"))
    assert run(ds, "contains_tokens(n, '1')") == [0]
    assert run(ds, "contains_tokens(f, '5')") == [0]  # '1.5'
    assert run(ds, "contains_tokens(f, '0')") == [1]  # '-2.0'
    assert run(ds, "contains_tokens(bo, 'true')") == [0]
    assert run(ds, "contains_tokens(bin, 'fox')") == [0]
    assert run(ds, "contains_tokens(dt, '1970 01 02')") == [1]
    assert run(ds, "contains_tokens(text, 1)") == [0]
    assert run(ds, "contains_tokens(text, true)") == [1]
    assert run(ds, "contains_tokens(s.x, 'fox')") == [0]


def test_struct_field_argument(tmp_path):
    uri = str(tmp_path / "d")
    write(lance, other_types_table(), uri)
    assert run(lancelet.dataset(uri), "contains_tokens(s.x, 'fox')") == [0]


# --------------------------------------------------------------------------------------
# Where pylance 14 is wrong: lancelet follows the rule; the pylance cases are strict xfails
# --------------------------------------------------------------------------------------

B_INDEX = (
    "pylance 14.0.2: with an index it uses (simple tokenizer, stem=False, max_token_length=None) a query "
    "whose analyzed terms are empty ('', punctuation, or stop words when the index drops them) gets no "
    "candidates, so it matches no indexed row instead of every non-NULL row (the UDF's answer, and "
    "pylance's with use_scalar_index=False or on unindexed fragments)"
)
B_RECHECK = (
    "pylance 14.0.2: count_rows and full-text prefilters take the index's candidates for contains_tokens "
    "without the recheck, so they count/keep rows that only match after the index's lower-casing, "
    "folding and stop-word removal"
)


def indexed_small(tmp_path, builder="pylance", **params) -> str:
    uri = str(tmp_path / "d")
    write(LIBS[builder], table(SMALL), uri).create_scalar_index("text", "INVERTED", **{**ACCEL, **params})
    LIBS[builder].dataset(uri).create_scalar_index("body", "INVERTED")
    assert uses_index(uri)
    return uri


@pytest.mark.parametrize("builder", LIBS)
def test_index_keeps_queries_without_terms(tmp_path, builder):
    uri = indexed_small(tmp_path, builder)
    lance.write_dataset(table(SMALL, start=100), uri, mode="append")  # an unindexed fragment
    every = non_null(SMALL) + non_null(SMALL, 100)
    ours = lancelet.dataset(uri)
    for q in [*ZERO.values(), *STOP.values()]:
        assert run(ours, ct(q)) == expected(SMALL + SMALL, q, list(range(12)) + list(range(100, 112))), q
    for q in ZERO.values():
        assert run(ours, ct(q)) == every
        assert ours.count_rows(ct(q)) == len(every)
        assert run(ours, ct(q) + " AND id > 4") == [i for i in every if i > 4]
    assert run(ours, ct("the")) == [6, 7, 106, 107]


@pytest.mark.xfail(strict=True, reason=B_INDEX)
def test_pylance_index_and_queries_without_terms(tmp_path):
    uri = indexed_small(tmp_path)
    assert run(lance.dataset(uri), ct("")) == non_null(SMALL)


@pytest.mark.xfail(strict=True, reason=B_INDEX)
def test_pylance_index_and_stop_word_queries(tmp_path):
    uri = indexed_small(tmp_path)
    assert run(lance.dataset(uri), ct("the")) == [6, 7]


COUNTED = {"fox": 3, "Fox": 1, "the fox": 1, "fox dog": 2, "café": 1, "cafe": 1}


@pytest.mark.parametrize("builder", LIBS)
def test_count_rows_rechecks_the_index(tmp_path, builder):
    uri = indexed_small(tmp_path, builder)
    ours = lancelet.dataset(uri)
    for q, n in COUNTED.items():
        assert len(expected(SMALL, q)) == n
        assert ours.count_rows(ct(q)) == n, q
        assert ours.scanner(filter=ct(q)).count_rows() == n, q
        assert ours.count_rows("NOT " + ct(q)) == len(non_null(SMALL)) - n, q
        assert ours.count_rows(ct(q) + " AND " + ct("dog")) == len(expected(SMALL, q + " dog")), q


@pytest.mark.xfail(strict=True, reason=B_RECHECK)
def test_pylance_count_rows_rechecks_the_index(tmp_path):
    theirs = lance.dataset(indexed_small(tmp_path))
    assert {q: theirs.count_rows(ct(q)) for q in COUNTED} == COUNTED


@pytest.mark.parametrize("builder", LIBS)
def test_fts_prefilter_rechecks_the_index(tmp_path, builder):
    ours = lancelet.dataset(indexed_small(tmp_path, builder))
    for q in COUNTED:
        got = run(ours, ct(q), full_text_query=MatchQuery("fox", "body"), prefilter=True)
        assert got == expected(SMALL, q), q


@pytest.mark.xfail(strict=True, reason=B_RECHECK)
def test_pylance_fts_prefilter_rechecks_the_index(tmp_path):
    theirs = lance.dataset(indexed_small(tmp_path))
    got = run(theirs, ct("fox"), full_text_query=lq.MatchQuery("fox", "body"), prefilter=True)
    assert got == expected(SMALL, "fox")


def test_null_query_matches_nothing(tmp_path):
    uri = str(tmp_path / "d")
    ours = write(lancelet, table(SMALL), uri)
    for q in ("NULL", "CAST(NULL AS STRING)"):
        assert run(ours, f"contains_tokens(text, {q})") == []
        assert run(ours, f"NOT contains_tokens(text, {q})") == []
        assert run(ours, f"contains_tokens(text, {q}) IS NULL") == list(range(len(SMALL)))


@pytest.mark.xfail(
    strict=True,
    reason="pylance 14.0.2 reads a NULL query as '' (the null slot's bytes) and so matches every non-NULL "
    "row; a NULL argument should give NULL, as contains(text, NULL) does in both libraries",
)
def test_pylance_null_query_matches_nothing(tmp_path):
    theirs = write(lance, table(SMALL), str(tmp_path / "d"))
    assert run(theirs, "contains_tokens(text, NULL)") == []


COLUMN_QUERY = pa.table(
    {
        "id": pa.array(range(7), pa.int64()),
        "text": ["a b", "c d", "e f", "a", "c", None, "e"],
        "q": ["c", "c", "e", "a", "a", "a", None],
    }
)


def test_column_query_is_row_by_row(tmp_path):
    uri = str(tmp_path / "d")
    ours = write(lancelet, COLUMN_QUERY, uri)
    want = [1, 2, 3]  # row 5 has no text, row 6 no query
    assert want == [
        i
        for i, (t, q) in enumerate(zip(COLUMN_QUERY["text"].to_pylist(), COLUMN_QUERY["q"].to_pylist()))
        if matches(t, q)
    ]
    for bs in (1, 2, 3, None):
        kw = {} if bs is None else {"batch_size": bs}
        assert run(ours, "contains_tokens(text, q)", **kw) == want, bs
        assert run(ours, "contains_tokens(q, text)", **kw) == [3], bs  # 'a' holds 'a'
        assert run(ours, "contains_tokens(text, q) IS NULL", **kw) == [5, 6], bs


@pytest.mark.xfail(
    strict=True,
    reason="pylance 14.0.2 evaluates a non-constant query once per batch, with the first row's value "
    "(a NULL first row reading as ''), so the answer depends on batch_size",
)
def test_pylance_column_query_is_row_by_row(tmp_path):
    theirs = write(lance, COLUMN_QUERY, str(tmp_path / "d"))
    f = "contains_tokens(text, q) AND q IS NOT NULL"  # (a NULL query is the other bug)
    assert run(theirs, f, batch_size=1) == [1, 2, 3]  # right with one row a batch
    assert run(theirs, f) == [1, 2, 3]  # [1, 4]: the first row's 'c' for every row
