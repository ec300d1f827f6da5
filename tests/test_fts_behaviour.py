"""Full-text search and hybrid search on their own (no pylance): errors, result shapes,
the lifecycle (appends, deletes, updates, stable row ids, partitioned builds), the query
algebra, CJK, hybrid fusion checked against a Python computation, and top-k results
checked against an exhaustive BM25 (tests/_fts_oracle.Bm25) on random corpora.
"""

from __future__ import annotations

import random

import numpy as np
import pyarrow as pa
import pytest
from _fts_oracle import Bm25, assert_same_ranking, assert_same_scores, hits

import lancelet
from lancelet.errors import InvalidArgumentError, UnsupportedFeatureError
from lancelet.query import (
    BooleanQuery,
    BoostQuery,
    CombinedFieldsQuery,
    DocumentGranularity,
    FullTextOperator,
    MatchQuery,
    MultiMatchQuery,
    Occur,
    PhraseQuery,
    tokenize,
)

WORDS = "fox dog cat bird quick brown lazy jumps over sea the a of and Café 2024 well-known x_y".split()


def corpus(n: int, seed: int) -> list:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        if i % 41 == 0:
            out.append(None)
        else:
            out.append(" ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 15))))
    return out


def table(n: int, seed: int, start: int = 0) -> pa.Table:
    return pa.table(
        {"id": pa.array(range(start, start + n), pa.int64()), "text": corpus(n, seed), "title": corpus(n, seed + 1)}
    )


def make(path, n=800, seed=1, index=True, **params):
    ds = lancelet.write_dataset(table(n, seed), str(path), max_rows_per_file=300)
    if index:
        ds.create_scalar_index("text", "INVERTED", **params)
    return lancelet.dataset(str(path))


def ids(t: pa.Table) -> list:
    return t["id"].to_pylist()


# --------------------------------------------------------------------------------------
# Errors
# --------------------------------------------------------------------------------------


def test_searching_without_an_index_names_create_scalar_index(tmp_path):
    ds = make(tmp_path / "d", index=False)
    with pytest.raises(InvalidArgumentError, match="create_scalar_index"):
        ds.to_table(full_text_query="fox")
    with pytest.raises(InvalidArgumentError, match="create_scalar_index"):
        ds.scanner(full_text_query=MatchQuery("fox", "text")).to_table()


def test_a_query_on_a_column_without_an_index_is_an_error(tmp_path):
    ds = make(tmp_path / "d")
    for q in (
        MatchQuery("fox", "title"),
        PhraseQuery("fox", "title"),
        {"query": "fox", "columns": ["title"]},
        MultiMatchQuery("fox", ["text", "title"]),
    ):
        with pytest.raises(InvalidArgumentError):
            ds.to_table(full_text_query=q)


def test_a_phrase_needs_positions(tmp_path):
    ds = make(tmp_path / "d")
    with pytest.raises(InvalidArgumentError, match="position"):
        ds.to_table(full_text_query=PhraseQuery("quick fox", "text"))
    with pytest.raises(InvalidArgumentError, match="position"):
        ds.to_table(full_text_query='"quick fox"')
    # With positions the same phrase works.
    ds.create_scalar_index("text", "INVERTED", with_position=True)
    assert ds.to_table(full_text_query=PhraseQuery("quick fox", "text")).num_rows > 0


@pytest.mark.parametrize(
    "params,error",
    [
        (dict(language="Klingon"), InvalidArgumentError),
        (dict(base_tokenizer="nope"), InvalidArgumentError),
        (dict(max_token_length=-1), InvalidArgumentError),
        (dict(base_tokenizer="ngram", min_ngram_length=0), InvalidArgumentError),
        (dict(base_tokenizer="ngram", min_ngram_length=4, max_ngram_length=2), InvalidArgumentError),
        (dict(memory_limit=0), InvalidArgumentError),
        (dict(format_version=4), InvalidArgumentError),
        (dict(format_version=0), InvalidArgumentError),
        (dict(with_position="yes"), InvalidArgumentError),
        (dict(lower_case=1), InvalidArgumentError),
        (dict(custom_stop_words="abc"), InvalidArgumentError),
        (dict(stemmer=True), TypeError),
        (dict(base_tokenizer="jieba/default"), UnsupportedFeatureError),
        (dict(base_tokenizer="lindera/ipadic"), UnsupportedFeatureError),
        (dict(base_tokenizer="icu"), UnsupportedFeatureError),
        (dict(block_size=256), UnsupportedFeatureError),
        (dict(block_size=256, format_version=3), UnsupportedFeatureError),
    ],
    ids=lambda v: "-".join(f"{k}={v[k]}" for k in v) if isinstance(v, dict) else "",
)
def test_bad_index_parameters_are_typed_errors_and_build_nothing(tmp_path, params, error):
    ds = make(tmp_path / "d", index=False)
    with pytest.raises(error):
        ds.create_scalar_index("text", "INVERTED", **params)
    assert ds.list_indices() == []
    assert lancelet.dataset(str(tmp_path / "d")).list_indices() == []
    with pytest.raises(error):
        ds.create_scalar_index("text", "FTS", **params)


@pytest.mark.parametrize(
    "params",
    [
        dict(language="Klingon"),
        dict(base_tokenizer="nope"),
        dict(base_tokenizer="ngram", min_ngram_length=0),
        dict(lower_case="yes"),
        dict(base_tokenizer="jieba/default"),
    ],
)
def test_tokenize_checks_its_parameters(params):
    with pytest.raises((InvalidArgumentError, UnsupportedFeatureError)):
        tokenize("some text", **params)


def test_index_parameter_spellings_pylance_accepts(tmp_path):
    """pylance 14 takes ``format_version="v1"``..``"v3"`` (and the FTS alias of the type)."""
    ds = make(tmp_path / "d", index=False)
    ds.create_scalar_index("text", "FTS", format_version="v1")
    stats = lancelet.dataset(str(tmp_path / "d")).index_statistics("text_idx")
    assert stats["indices"][0]["format_version"] == 1


@pytest.mark.parametrize(
    "column,type_",
    [
        ("i", pa.int64()),
        ("f", pa.float64()),
        ("b", pa.binary()),
        ("li", pa.list_(pa.int64())),
        ("s", pa.struct([("a", pa.string())])),
    ],
)
def test_an_index_needs_a_text_column(tmp_path, column, type_):
    values = {"i": [1, 2], "f": [1.0, 2.0], "b": [b"a", b"b"], "li": [[1], [2]], "s": [{"a": "x"}, {"a": "y"}]}[column]
    ds = lancelet.write_dataset(pa.table({column: pa.array(values, type_)}), str(tmp_path / "d"))
    with pytest.raises(InvalidArgumentError, match="INVERTED"):
        ds.create_scalar_index(column, "INVERTED")
    with pytest.raises(InvalidArgumentError, match="does not exist"):
        ds.create_scalar_index("nope", "INVERTED")
    assert ds.list_indices() == []


def test_bad_queries_are_typed_errors(tmp_path):
    ds = make(tmp_path / "d")
    for q in (
        12,
        ["fox"],
        {"columns": ["text"]},
        {"query": "fox", "nope": 1},
        {"query": "fox", "columns": []},
        {"query": 3},
    ):
        with pytest.raises(InvalidArgumentError):
            ds.to_table(full_text_query=q)
    for kw in (dict(limit=-1), dict(offset=-1), dict(limit=1.5), dict(columns="id")):
        with pytest.raises(InvalidArgumentError):
            ds.to_table(full_text_query="fox", **kw)
    with pytest.raises(InvalidArgumentError):
        MatchQuery("fox", "text", operator="XOR")
    with pytest.raises(InvalidArgumentError):
        MatchQuery("fox", "text", fuzziness=-1)
    with pytest.raises(InvalidArgumentError):
        MatchQuery(3, "text")
    with pytest.raises(InvalidArgumentError):
        PhraseQuery("fox", "text", slop=-1)
    with pytest.raises(InvalidArgumentError):
        MultiMatchQuery("fox", "text")
    with pytest.raises(InvalidArgumentError):
        MultiMatchQuery("fox", ["text", "title"], boosts=[1.0])
    with pytest.raises(InvalidArgumentError):
        BoostQuery(MatchQuery("fox", "text"), "dog")
    with pytest.raises(InvalidArgumentError):
        BooleanQuery([MatchQuery("fox", "text")])
    with pytest.raises(ValueError):
        BooleanQuery([("SOMETIMES", MatchQuery("fox", "text"))])
    with pytest.raises(UnsupportedFeatureError):
        CombinedFieldsQuery("fox", ["text", "title"])
    with pytest.raises(UnsupportedFeatureError):
        MatchQuery("fox", "text", document_granularity=DocumentGranularity.LIST_ELEMENT)


def test_replace_false_keeps_the_existing_index(tmp_path):
    ds = make(tmp_path / "d")
    before = ds.list_indices()
    with pytest.raises(InvalidArgumentError, match="replace"):
        ds.create_scalar_index("text", "INVERTED", replace=False, with_position=True)
    assert lancelet.dataset(str(tmp_path / "d")).list_indices() == before
    # replace=True (the default) rebuilds it with the new parameters.
    ds.create_scalar_index("text", "INVERTED", with_position=True)
    after = lancelet.dataset(str(tmp_path / "d")).list_indices()
    assert [i["name"] for i in after] == ["text_idx"] and after[0]["uuid"] != before[0]["uuid"]
    assert ds.to_table(full_text_query=PhraseQuery("quick fox", "text")).num_rows > 0


# --------------------------------------------------------------------------------------
# Results: shape, order, paging
# --------------------------------------------------------------------------------------


def test_result_shape_and_order(tmp_path):
    ds = make(tmp_path / "d")
    full = ds.to_table(full_text_query="quick fox")
    assert full.column_names == ["id", "text", "title", "_score"]
    assert full.schema.field("_score").type == pa.float32()
    assert full.num_rows > 50
    with_ids = ds.to_table(full_text_query="quick fox", with_row_id=True)
    assert with_ids.column_names == ["id", "text", "title", "_score", "_rowid"]
    # Best first; equal scores by row id.
    keys = [(-s, r) for s, r in zip(with_ids["_score"].to_pylist(), with_ids["_rowid"].to_pylist())]
    assert keys == sorted(keys)
    assert len(set(with_ids["_score"].to_pylist())) < with_ids.num_rows  # there are ties to order
    # Row ids are those of a plain scan.
    scan = ds.to_table(columns=["id"], with_row_id=True)
    addr = dict(zip(scan["id"].to_pylist(), scan["_rowid"].to_pylist()))
    assert all(addr[i] == r for i, r in zip(ids(with_ids), with_ids["_rowid"].to_pylist()))
    # Every returned row holds a query term; the rows holding one are all returned.
    terms = set(tokenize("quick fox"))
    holding = {
        i for i, s in zip(ids(ds.to_table()), ds.to_table()["text"].to_pylist()) if s and terms & set(tokenize(s))
    }
    assert set(ids(full)) == holding


def test_columns_limit_offset_and_scanner(tmp_path):
    ds = make(tmp_path / "d")
    full = ds.to_table(full_text_query="lazy dog")
    t = ds.to_table(full_text_query="lazy dog", columns=["title", "id"])
    assert t.column_names == ["title", "id", "_score"]
    assert ids(t) == ids(full)
    assert ds.to_table(full_text_query="lazy dog", columns=[]).column_names == ["_score"]
    pages = [
        ds.to_table(full_text_query="lazy dog", columns=["id"], limit=7, offset=o)
        for o in range(0, full.num_rows + 7, 7)
    ]
    assert sum((ids(p) for p in pages), []) == ids(full)
    assert all(p.num_rows == 7 for p in pages[:-2])
    assert ds.to_table(full_text_query="lazy dog", limit=0).num_rows == 0
    assert ds.to_table(full_text_query="lazy dog", offset=full.num_rows).num_rows == 0
    sc = ds.scanner(full_text_query="lazy dog", columns=["id"], limit=10, offset=2, with_row_id=True)
    assert sc.to_table().equals(
        ds.to_table(full_text_query="lazy dog", columns=["id"], limit=10, offset=2, with_row_id=True)
    )
    assert sc.to_table()["_score"].to_pylist() == full["_score"].to_pylist()[2:12]


def test_queries_that_match_nothing(tmp_path):
    ds = make(tmp_path / "d")
    for q in (
        "",
        "   ",
        "!!! ???",
        "the of a",
        "zebra",
        MatchQuery("", "text"),
        MatchQuery("the", "text"),
        {"query": "", "columns": ["text"]},
        MatchQuery("fox zebra", "text", operator="AND"),
    ):
        t = ds.to_table(full_text_query=q, columns=["id"])
        assert t.num_rows == 0, q
        assert t.column_names == ["id", "_score"]


def test_explain_plan_names_the_index(tmp_path):
    ds = make(tmp_path / "d", index=False)
    ds.create_scalar_index("text", "INVERTED", name="my_words")
    plan = ds.scanner(full_text_query="fox").explain_plan()
    assert "my_words" in plan
    assert "my_words" in ds.scanner(full_text_query="fox", filter="id > 3", prefilter=True).explain_plan(verbose=True)
    # A custom name serves queries like the default one.
    assert ds.to_table(full_text_query="fox").num_rows > 0


# --------------------------------------------------------------------------------------
# Query forms and their algebra
# --------------------------------------------------------------------------------------


def _scores(ds, q, **kw) -> dict:
    return dict(hits(ds.to_table(full_text_query=q, columns=["id"], **kw)))


def test_query_forms_agree_with_each_other(tmp_path):
    uri = str(tmp_path / "d")
    ds = make(uri, with_position=True)
    ds.create_scalar_index("title", "INVERTED", with_position=True)
    ds = lancelet.dataset(uri)
    m = _scores(ds, MatchQuery("quick fox", "text"))
    assert m == _scores(ds, {"query": "quick fox", "columns": ["text"]})
    assert m == _scores(ds, MultiMatchQuery("quick fox", ["text"]))
    assert m == _scores(ds, {"query": MatchQuery("quick fox", "text")})
    # A plain string searches every indexed column, as a multi-match over them.
    assert _scores(ds, "quick fox") == _scores(ds, MultiMatchQuery("quick fox", ["text", "title"]))
    # The operators build boolean queries.
    a, b = MatchQuery("fox", "text"), MatchQuery("sea", "title")
    assert _scores(ds, a & b) == _scores(ds, BooleanQuery([(Occur.MUST, a), (Occur.MUST, b)]))
    assert _scores(ds, a | b) == _scores(ds, BooleanQuery([(Occur.SHOULD, a), (Occur.SHOULD, b)]))
    assert (a & b) == BooleanQuery([(Occur.MUST, a), (Occur.MUST, b)])
    assert hash(a | b) == hash(BooleanQuery([(Occur.SHOULD, a), (Occur.SHOULD, b)]))
    assert MatchQuery("fox", "text", operator=FullTextOperator.AND) == MatchQuery("fox", "text", operator="and")


def test_boolean_boost_and_multi_match_semantics(tmp_path):
    uri = str(tmp_path / "d")
    ds = make(uri)
    ds.create_scalar_index("title", "INVERTED")
    ds = lancelet.dataset(uri)
    fox, dog, sea_t = (
        _scores(ds, MatchQuery("fox", "text")),
        _scores(ds, MatchQuery("dog", "text")),
        _scores(ds, MatchQuery("sea", "title")),
    )
    assert fox and dog and sea_t
    # MUST: both, scores added; SHOULD: either, added; MUST_NOT removes.
    both = _scores(
        ds, BooleanQuery([(Occur.MUST, MatchQuery("fox", "text")), (Occur.MUST, MatchQuery("sea", "title"))])
    )
    assert_same_scores(both, {k: fox[k] + sea_t[k] for k in fox.keys() & sea_t.keys()}, rel=1e-5)
    either = _scores(
        ds, BooleanQuery([(Occur.SHOULD, MatchQuery("fox", "text")), (Occur.SHOULD, MatchQuery("sea", "title"))])
    )
    assert_same_scores(either, {k: fox.get(k, 0) + sea_t.get(k, 0) for k in fox.keys() | sea_t.keys()}, rel=1e-5)
    not_dog = _scores(
        ds, BooleanQuery([(Occur.MUST, MatchQuery("fox", "text")), (Occur.MUST_NOT, MatchQuery("dog", "text"))])
    )
    assert_same_scores(not_dog, {k: v for k, v in fox.items() if k not in dog}, rel=1e-5)
    # MUST with SHOULD: MUST selects, SHOULD adds.
    must_should = _scores(
        ds, BooleanQuery([(Occur.MUST, MatchQuery("fox", "text")), (Occur.SHOULD, MatchQuery("dog", "text"))])
    )
    assert_same_scores(must_should, {k: v + dog.get(k, 0) for k, v in fox.items()}, rel=1e-5)
    # boost multiplies; BoostQuery demotes rows matching the negative query by
    # negative_boost times their negative score (pylance's rule, checked in the interop suite).
    assert_same_scores(
        _scores(ds, MatchQuery("fox", "text", boost=2.5)), {k: 2.5 * v for k, v in fox.items()}, rel=1e-5
    )
    for nb in (0.25, 0.5):
        demoted = _scores(ds, BoostQuery(MatchQuery("fox", "text"), MatchQuery("dog", "text"), negative_boost=nb))
        assert_same_scores(demoted, {k: v - nb * dog.get(k, 0.0) for k, v in fox.items()}, rel=1e-5)
    # MultiMatch: a row scores its best column (each times its boost).
    fox_t = _scores(ds, MatchQuery("fox", "title"))
    mm = _scores(ds, MultiMatchQuery("fox", ["text", "title"], boosts=[1.0, 3.0]))
    assert_same_scores(mm, {k: max(fox.get(k, 0), 3.0 * fox_t.get(k, 0)) for k in fox.keys() | fox_t.keys()}, rel=1e-5)


def test_and_operator_needs_every_term(tmp_path):
    ds = make(tmp_path / "d")
    rows = dict(zip(ids(ds.to_table()), ds.to_table()["text"].to_pylist()))
    got = _scores(ds, MatchQuery("quick brown fox", "text", operator="AND"))
    want = {i for i, s in rows.items() if s and {"quick", "brown", "fox"} <= set(tokenize(s))}
    assert set(got) == want and want
    ors = _scores(ds, MatchQuery("quick brown fox", "text"))
    assert all(abs(got[k] - ors[k]) <= 1e-6 * ors[k] for k in got)


def test_fuzzy_matching(tmp_path):
    t = pa.table(
        {
            "id": pa.array(range(8), pa.int64()),
            "text": ["jump high", "jumps", "fox", "foxes run", "abcdefgh", "ab", "box", "quick"],
        }
    )
    ds = lancelet.write_dataset(t, str(tmp_path / "d"))
    ds.create_scalar_index("text", "INVERTED")

    def found(q, **kw):
        return sorted(ids(ds.to_table(full_text_query=MatchQuery(q, "text", **kw), columns=["id"])))

    assert found("quik") == []
    assert found("quik", fuzziness=1) == [7]
    assert found("fo", fuzziness=1) == [2, 3]
    assert found("fx", fuzziness=1) == [2, 3]
    assert found("fx", fuzziness=1, prefix_length=2) == []
    assert found("fox", fuzziness=1, prefix_length=1) == [2, 3]
    assert found("fox", fuzziness=1) == [2, 3, 6]
    assert found("jmp", fuzziness=1) == [0, 1]
    assert found("jumpng", fuzziness=2) == [0, 1]
    # fuzziness=None: automatic, 0 edits up to 2 characters, 1 up to 5, else 2 (pylance's docs).
    assert found("ax", fuzziness=None) == []
    assert found("jmp", fuzziness=None) == [0, 1]
    assert found("jumpng", fuzziness=None) == [0, 1]
    assert found("abcdefxx", fuzziness=None) == [4]
    # max_expansions bounds the index terms one query term expands to ("fox" and "box"
    # here: one of them).
    assert found("fox", fuzziness=1, max_expansions=2) == [2, 3, 6]
    assert found("fox", fuzziness=1, max_expansions=1) in ([2, 3], [6])


def test_phrases(tmp_path):
    docs = [
        "the quick brown fox",
        "quick the brown fox",
        "brown quick fox",
        "quick red brown fox",
        "xc xa xb xc",
        "xa zz xb zz xc",
        "xa xb xc",
        "zz xa xb xa zz",
        "quick and brown",
    ]
    t = pa.table({"id": pa.array(range(len(docs)), pa.int64()), "text": docs})
    ds = lancelet.write_dataset(t, str(tmp_path / "d"))
    ds.create_scalar_index("text", "INVERTED", with_position=True)

    def found(q, slop=0):
        return sorted(ids(ds.to_table(full_text_query=PhraseQuery(q, "text", slop=slop), columns=["id"])))

    assert found("quick brown") == [0]
    assert found("quick brown", slop=1) == [0, 1, 3, 8]  # one word (or stop word) between
    assert found("brown quick") == [2]
    assert found("quick brown fox") == [0]
    assert found("quick and brown") == [1, 3, 8]  # the stop word keeps its place, any word fills it
    # An exact occurrence also matches with slop, whatever repeats around it.
    assert found("xa xb xc") == [4, 6]
    assert 4 in found("xa xb xc", slop=1) and 6 in found("xa xb xc", slop=1)
    assert found("xa xb xa", slop=1) == [7]
    assert sorted(ids(ds.to_table(full_text_query='"quick brown"', columns=["id"]))) == [0]


@pytest.mark.parametrize("list_type", [pa.list_(pa.string()), pa.large_list(pa.string()), pa.list_(pa.large_string())])
def test_list_and_large_string_columns(tmp_path, list_type):
    tags = [["quick fox", "lazy dog"], None, [], [None, "fox"], ["sea"], ["brown", None, "fox"]]
    t = pa.table(
        {
            "id": pa.array(range(6), pa.int64()),
            "tags": pa.array(tags, list_type),
            "big": pa.array(["fox sea", None, "dog", "", "fox", "a"], pa.large_string()),
        }
    )
    ds = lancelet.write_dataset(t, str(tmp_path / "d"))
    ds.create_scalar_index("tags", "INVERTED", with_position=True)
    ds.create_scalar_index("big", "INVERTED")
    assert sorted(ids(ds.to_table(full_text_query=MatchQuery("fox", "tags")))) == [0, 3, 5]
    assert sorted(ids(ds.to_table(full_text_query=MatchQuery("fox", "big")))) == [0, 4]
    # A row's elements are one document: a phrase may run on from one element to the next.
    assert ids(ds.to_table(full_text_query=PhraseQuery("fox lazy", "tags"))) == [0]
    # Term frequencies add up over the elements.
    s = _scores(ds, MatchQuery("fox", "tags"))
    assert s[0] < s[3]  # same frequency, shorter document


# --------------------------------------------------------------------------------------
# Lifecycle
# --------------------------------------------------------------------------------------


def test_appended_rows_are_searched_unless_fast_search(tmp_path):
    uri = str(tmp_path / "d")
    make(uri)
    lancelet.write_dataset(table(200, 5, start=800), uri, mode="append")
    ds = lancelet.dataset(uri)
    all_rows = set(ids(ds.to_table(full_text_query="fox", columns=["id"])))
    assert {i for i in all_rows if i >= 800}
    fast = set(ids(ds.to_table(full_text_query="fox", columns=["id"], fast_search=True)))
    assert fast == {i for i in all_rows if i < 800}
    st = ds.index_statistics("text_idx")
    assert st["num_unindexed_rows"] == 200 and st["num_indexed_rows"] == 800
    # After optimize_indices every row is indexed and fast_search finds them all.
    ds.optimize.optimize_indices()
    ds = lancelet.dataset(uri)
    assert set(ids(ds.to_table(full_text_query="fox", columns=["id"], fast_search=True))) == all_rows
    assert ds.index_statistics("text_idx")["num_unindexed_rows"] == 0


def test_deleted_rows_never_come_back(tmp_path):
    uri = str(tmp_path / "d")
    make(uri, with_position=True)
    lancelet.write_dataset(table(200, 5, start=800), uri, mode="append")
    ds = lancelet.dataset(uri)
    ds.delete("id % 3 = 0 OR id >= 950")
    ds = lancelet.dataset(uri)
    for q in (
        "fox",
        "quick brown",
        MatchQuery("quik", "text", fuzziness=1),
        PhraseQuery("lazy dog", "text"),
        BooleanQuery([(Occur.SHOULD, MatchQuery("sea", "text"))]),
    ):
        for kw in ({}, dict(filter="id < 900", prefilter=True), dict(filter="id < 900"), dict(fast_search=True)):
            got = ids(ds.to_table(full_text_query=q, columns=["id"], **kw))
            assert got, (q, kw)
            assert not any(i % 3 == 0 or i >= 950 for i in got), (q, kw)
    # Deleting every row holding a term leaves nothing to find.
    ds.delete("text LIKE '%sea%'")
    assert lancelet.dataset(uri).to_table(full_text_query="sea").num_rows == 0


@pytest.mark.parametrize("stable", [False, True])
def test_updated_rows_are_found_by_their_new_text_only(tmp_path, stable):
    t = pa.table(
        {
            "id": pa.array(range(6), pa.int64()),
            "text": ["quick fox", "lazy dog", "the foxes", "running fox", "cat", "bird"],
        }
    )
    uri = str(tmp_path / "d")
    lancelet.write_dataset(t, uri, max_rows_per_file=2, enable_stable_row_ids=stable)
    lancelet.dataset(uri).create_scalar_index("text", "INVERTED")
    lancelet.dataset(uri).update({"text": "'purple fox'"}, where="id = 4")
    ds = lancelet.dataset(uri)
    assert ds.to_table(full_text_query="cat").num_rows == 0
    assert sorted(ids(ds.to_table(full_text_query="fox"))) == [0, 2, 3, 4]
    assert sorted(ids(ds.to_table(full_text_query="purple"))) == [4]


def test_stable_row_ids_survive_compaction(tmp_path):
    uri = str(tmp_path / "d")
    lancelet.write_dataset(table(600, 3), uri, max_rows_per_file=100, enable_stable_row_ids=True)
    ds = lancelet.dataset(uri)
    ds.create_scalar_index("text", "INVERTED", with_position=True)
    before = ds.to_table(full_text_query="quick fox", columns=["id"], with_row_id=True)
    assert before["_rowid"].to_pylist() == ids(before)  # stable ids are the insertion order
    ds.delete("id % 5 = 0")
    ds.optimize.compact_files(target_rows_per_fragment=1000)
    ds = lancelet.dataset(uri)
    assert len(ds.get_fragments()) == 1
    after = ds.to_table(full_text_query="quick fox", columns=["id"], with_row_id=True)
    want = {i: s for i, s in hits(before) if i % 5}
    assert set(ids(after)) == set(want)
    assert after["_rowid"].to_pylist() == ids(after)
    assert sorted(ids(ds.to_table(full_text_query=PhraseQuery("lazy dog", "text")))) == sorted(
        i for i in ids(lancelet.dataset(uri).to_table(filter="text LIKE '%lazy dog%'"))
    )


def test_a_small_memory_budget_gives_identical_results(tmp_path):
    """1 MiB over two workers seals several partitions (the budget is checked after each
    scanned batch, so small fragments and long documents); results are identical."""
    rng = random.Random(2)
    texts = [
        " ".join(
            rng.choice(WORDS) + (str(rng.randint(0, 30)) if rng.random() < 0.3 else "")
            for _ in range(rng.randint(1, 60))
        )
        for _ in range(3000)
    ]
    t = pa.table({"id": pa.array(range(3000), pa.int64()), "text": texts})
    a = lancelet.write_dataset(t, str(tmp_path / "a"), max_rows_per_file=200)
    b = lancelet.write_dataset(t, str(tmp_path / "b"), max_rows_per_file=200)
    a.create_scalar_index("text", "INVERTED", with_position=True, num_workers=2)
    b.create_scalar_index("text", "INVERTED", with_position=True, memory_limit=1, num_workers=2)
    parts = [int(d.index_statistics("text_idx")["indices"][0]["num_partitions"]) for d in (a, b)]
    assert parts[0] <= 2 < 3 <= parts[1], parts
    for q in (
        "fox",
        "quick brown fox",
        MatchQuery("quick fox", "text", operator="AND"),
        PhraseQuery("lazy dog", "text", slop=1),
        MatchQuery("quik", "text", fuzziness=1),
    ):
        ta, tb = a.to_table(full_text_query=q, columns=["id"]), b.to_table(full_text_query=q, columns=["id"])
        assert ta.num_rows > 0
        assert ta.equals(tb), q
        assert a.to_table(full_text_query=q, limit=10).equals(b.to_table(full_text_query=q, limit=10))


def test_cjk(tmp_path):
    docs = ["東京大学で勉強する", "京都の大学", "hello world", "東京タワー", "大学", "北京大学と東京大学"]
    t = pa.table({"id": pa.array(range(len(docs)), pa.int64()), "text": docs})
    ds = lancelet.write_dataset(t, str(tmp_path / "d"))
    ds.create_scalar_index("text", "INVERTED", base_tokenizer="cjk", with_position=True)
    assert tokenize("東京大学", base_tokenizer="cjk") == ["東京", "京大", "大学"]
    assert sorted(ids(ds.to_table(full_text_query=PhraseQuery("大学", "text")))) == [0, 1, 4, 5]
    assert sorted(ids(ds.to_table(full_text_query="大学"))) == [0, 1, 4, 5]
    assert sorted(ids(ds.to_table(full_text_query=PhraseQuery("東京大学", "text")))) == [0, 5]
    assert ids(ds.to_table(full_text_query="hello")) == [2]
    assert ds.to_table(full_text_query=PhraseQuery("大学東京", "text")).num_rows == 0


def test_tokenize():
    assert tokenize("The Running Foxes!") == ["run", "fox"]
    assert tokenize("The Running Foxes!", stem=False, remove_stop_words=False) == ["the", "running", "foxes"]
    assert tokenize("Café x_y well-known 2024") == ["cafe", "x", "y", "well", "known", "2024"]
    assert tokenize("Café", ascii_folding=False) == ["café"]
    assert tokenize("Hello World", base_tokenizer="whitespace", lower_case=False, stem=False) == ["Hello", "World"]
    assert tokenize("Hello World", base_tokenizer="raw") == ["hello world"]
    assert tokenize("a" * 39 + " " + "b" * 41) == ["a" * 39]
    assert tokenize("fox dog", custom_stop_words=["dog"]) == ["fox"]
    assert tokenize("") == [] and tokenize("the of") == []


# --------------------------------------------------------------------------------------
# Hybrid search
# --------------------------------------------------------------------------------------


def _hybrid_dataset(path, n=600):
    rng = np.random.default_rng(4)
    vec = rng.random((n, 8), dtype=np.float32)
    t = table(n, 11).append_column("v", pa.FixedSizeListArray.from_arrays(pa.array(vec.ravel()), 8))
    ds = lancelet.write_dataset(t, str(path), max_rows_per_file=250)
    ds.create_scalar_index("text", "INVERTED")
    return lancelet.dataset(str(path))


def _sides(ds, q, text, k, **kw):
    v = ds.to_table(nearest={"column": "v", "q": q, "k": k}, columns=["id"], with_row_id=True, **kw)
    t = ds.to_table(full_text_query=text, columns=["id"], limit=k, with_row_id=True, **kw)
    return v, t


F32 = np.float32


def _rrf(v, t, k=60.0):
    """Reciprocal-rank fusion computed here (in f32, as the relevance column is):
    row id -> [Σ 1/(k + rank), distance or None, score or None]."""
    fused = {}
    for side, col in ((v, "_distance"), (t, "_score")):
        for rank, (r, x) in enumerate(zip(side["_rowid"].to_pylist(), side[col].to_pylist()), 1):
            e = fused.setdefault(r, [F32(0), None, None])
            e[0] = F32(e[0] + F32(1) / F32(k + rank))
            e[1 if col == "_distance" else 2] = x
    return fused


def _linear(v, t, w):
    """Linear fusion computed here: ``w (1 - d̂) + (1 - w) ŝ``, each side min-max scaled
    over its own rows (a constant side scales to 0, a missing side counts 0)."""
    w = F32(w)

    def norm(xs):
        xs = [F32(x) for x in xs]
        lo, hi = min(xs), max(xs)
        return [F32((x - lo) / (hi - lo)) if hi > lo else F32(0) for x in xs]

    fused = {}
    d = v["_distance"].to_pylist()
    for r, x, nx in zip(v["_rowid"].to_pylist(), d, norm(d)):
        fused.setdefault(r, [F32(0), None, None])
        fused[r][0] = F32(fused[r][0] + w * (F32(1) - nx))
        fused[r][1] = x
    s = t["_score"].to_pylist()
    for r, x, nx in zip(t["_rowid"].to_pylist(), s, norm(s)):
        fused.setdefault(r, [F32(0), None, None])
        fused[r][0] = F32(fused[r][0] + (F32(1) - w) * nx)
        fused[r][2] = x
    return fused


def _check_fused(got, fused, limit=None, offset=0):
    """``got`` is ``fused`` ranked by relevance (ties by row id), paged."""
    order = sorted(fused, key=lambda r: (-fused[r][0], r))
    want = order[offset:] if limit is None else order[offset : offset + limit]
    rel = got["_relevance_score"].to_pylist()
    assert got["_rowid"].to_pylist() == want
    for r, s, d, sc in zip(got["_rowid"].to_pylist(), rel, got["_distance"].to_pylist(), got["_score"].to_pylist()):
        e = fused[r]
        assert abs(s - e[0]) < 1e-6
        assert (d is None) == (e[1] is None) and (d is None or abs(d - e[1]) < 1e-6)
        assert (sc is None) == (e[2] is None) and (sc is None or abs(sc - e[2]) < 1e-6)
    assert got.schema.field("_relevance_score").type == pa.float32()
    assert rel == sorted(rel, reverse=True)


def test_hybrid_rrf(tmp_path):
    ds = _hybrid_dataset(tmp_path / "d")
    q = [0.5] * 8
    for k, text in ((20, "quick fox"), (50, "sea"), (10, "zebra")):
        v, t = _sides(ds, q, text, k)
        fused = _rrf(v, t)
        got = ds.to_table(
            nearest={"column": "v", "q": q, "k": k}, full_text_query=text, columns=["id"], with_row_id=True
        )
        assert got.column_names == ["id", "_distance", "_score", "_relevance_score", "_rowid"]
        assert got.num_rows == len(fused)
        both = sum(1 for e in fused.values() if e[1] is not None and e[2] is not None)
        assert both == {20: 1, 50: 5, 10: 0}[k]  # rows found by both sides add both ranks
        _check_fused(got, fused)
        # Offset and limit page the fused ranking.
        page = ds.to_table(
            nearest={"column": "v", "q": q, "k": k}, full_text_query=text, with_row_id=True, limit=7, offset=3
        )
        _check_fused(page, fused, limit=7, offset=3)
    v, t = _sides(ds, q, "quick fox", 30)
    got = ds.to_table(
        nearest={"column": "v", "q": q, "k": 30},
        full_text_query="quick fox",
        with_row_id=True,
        fusion={"method": "rrf", "k": 10},
    )
    _check_fused(got, _rrf(v, t, k=10.0))


def test_hybrid_linear(tmp_path):
    ds = _hybrid_dataset(tmp_path / "d")
    q = [0.2] * 8
    for w in (0.7, 0.0, 1.0, 0.3):
        v, t = _sides(ds, q, "lazy dog", 25)
        fusion = {"method": "linear"} if w == 0.7 else {"method": "linear", "weight": w}
        got = ds.to_table(
            nearest={"column": "v", "q": q, "k": 25}, full_text_query="lazy dog", with_row_id=True, fusion=fusion
        )
        _check_fused(got, _linear(v, t, w))
    for bad in ({"method": "nope"}, {"method": "linear", "weight": 1.5}, {"method": "rrf", "k": -1}, {"oops": 1}):
        with pytest.raises(InvalidArgumentError):
            ds.to_table(nearest={"column": "v", "q": q, "k": 5}, full_text_query="fox", fusion=bad)


def test_hybrid_with_filters_and_deletes(tmp_path):
    ds = _hybrid_dataset(tmp_path / "d")
    ds.delete("id % 7 = 1")
    ds = lancelet.dataset(str(tmp_path / "d"))
    q = [0.8] * 8
    for kw in (dict(filter="id % 2 = 0", prefilter=True), dict(filter="id % 2 = 0")):
        v, t = _sides(ds, q, "brown cat", 20, **kw)
        got = ds.to_table(nearest={"column": "v", "q": q, "k": 20}, full_text_query="brown cat", with_row_id=True, **kw)
        assert got.num_rows > 0 and all(i % 2 == 0 and i % 7 != 1 for i in ids(got))
        _check_fused(got, _rrf(v, t))
    got = ds.to_table(
        nearest={"column": "v", "q": q, "k": 20}, full_text_query="brown cat", filter="id % 2 = 0", prefilter=True
    )
    assert got.num_rows > 20 and all(i % 2 == 0 and i % 7 != 1 for i in ids(got))
    with pytest.raises(InvalidArgumentError):
        ds.to_table(nearest={"column": "v", "q": [q, q], "k": 5}, full_text_query="fox")


# --------------------------------------------------------------------------------------
# Exhaustive BM25 on random corpora
# --------------------------------------------------------------------------------------


def _random_words(rng, n):
    out = set()
    while len(out) < n:
        out.add("".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(1, 8))))
    return sorted(out)


@pytest.mark.parametrize("seed", range(20))
def test_top_k_equals_an_exhaustive_bm25(tmp_path, seed):
    """Random corpus; index some fragments; maybe append (unindexed), maybe delete, maybe
    add a delta segment; every query's top k, with and without a prefilter, is the
    exhaustive BM25's."""
    rng = random.Random(seed)
    vocab = _random_words(rng, rng.randint(4, 60))
    weights = [1.0 / (i + 1) ** rng.uniform(0.5, 1.5) for i in range(len(vocab))]
    params = dict(
        stem=False, remove_stop_words=False, with_position=rng.random() < 0.5, format_version=rng.choice([1, 2, 3])
    )

    def docs(n):
        return [
            None if rng.random() < 0.03 else " ".join(rng.choices(vocab, weights, k=rng.randint(0, 30)))
            for _ in range(n)
        ]

    n1 = rng.randint(50, 900)
    texts = docs(n1)
    uri = str(tmp_path / "d")
    lancelet.write_dataset(
        pa.table({"id": pa.array(range(n1), pa.int64()), "text": texts}),
        uri,
        max_rows_per_file=rng.choice([64, 300, 1000]),
    )
    lancelet.dataset(uri).create_scalar_index("text", "INVERTED", **params)
    tok = {i: tokenize(s, **params) if s else [] for i, s in enumerate(texts)}
    indexed = set(range(n1))
    deleted: set = set()
    if rng.random() < 0.6:
        p, r = rng.randint(2, 9), rng.randint(0, 1)
        lancelet.dataset(uri).delete(f"id % {p} = {r}")
        deleted |= {i for i in range(n1) if i % p == r}
    if rng.random() < 0.7:
        n2 = rng.randint(1, 300)
        more = docs(n2)
        lancelet.write_dataset(
            pa.table({"id": pa.array(range(n1, n1 + n2), pa.int64()), "text": more}), uri, mode="append"
        )
        tok.update({n1 + i: tokenize(s, **params) if s else [] for i, s in enumerate(more)})
        if rng.random() < 0.4:
            lo = rng.randint(n1, n1 + n2)
            lancelet.dataset(uri).delete(f"id >= {lo}")
            deleted |= set(range(lo, n1 + n2))
        if rng.random() < 0.3:
            # A delta segment indexes the appended rows that are still alive.
            lancelet.dataset(uri).optimize.optimize_indices(num_indices_to_merge=0)
            indexed |= {i for i in range(n1, n1 + n2) if i not in deleted}
    ds = lancelet.dataset(uri)
    print(f"seed {seed}: {n1} rows, {len(tok) - n1} appended, {len(deleted)} deleted, {len(indexed)} indexed, {params}")
    model = Bm25(
        {i: t for i, t in tok.items() if i in indexed},
        {i: t for i, t in tok.items() if i not in indexed and i not in deleted},
    )
    live = lambda i: i not in deleted  # noqa: E731
    even = lambda i: i % 2 == 0  # noqa: E731
    for _ in range(6):
        terms = rng.choices(vocab, weights, k=rng.randint(1, 4)) + (["zzzzzzzzz"] if rng.random() < 0.2 else [])
        q = " ".join(terms)
        op_and = rng.random() < 0.25
        limit = rng.choice([None, 1, 5, 20, 100])
        query = MatchQuery(q, "text", operator="AND" if op_and else "OR")
        for prefilter in (False, True):
            kw = dict(filter="id % 2 = 0", prefilter=True) if prefilter else {}
            want = model.scores(
                terms, live=live, keep=even if prefilter else (lambda i: True), prefilter=prefilter, operator_and=op_and
            )
            ranked = sorted(want.items(), key=lambda kv: (-kv[1], kv[0]))
            if limit is not None:
                ranked = ranked[:limit]
            got = ds.to_table(full_text_query=query, columns=["id"], limit=limit, **kw)
            assert_same_ranking(
                hits(got), ranked, limit, rel=1e-4, what=f"seed {seed} {q!r} and={op_and} prefilter={prefilter}"
            )
            # Best first, equal scores in row order (ids grow with row addresses here).
            g = hits(got)
            assert all(a[1] > b[1] or (a[1] == b[1] and a[0] < b[0]) for a, b in zip(g, g[1:]))
