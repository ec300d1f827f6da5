"""Full-text search against pylance 14 as the oracle.

Indexes built by either library are queried by both (data storage 2.0 and 2.2, index
formats 1-3, with and without positions, every query form), after deletes made by either
library, with prefilters, on list columns; and the tokenizer is compared document by
document with what pylance's own index holds (decoded by tests/_fts_oracle.py).

Results are compared as ranked lists (tests/_fts_oracle.assert_same_ranking): the same
scores rank by rank, the same ids except for the order inside a run of equal scores, which
pylance leaves unspecified.
"""

from __future__ import annotations

import itertools
import random
import zlib
from collections import Counter

import pyarrow as pa
import pytest
from _fts_oracle import assert_same_ranking, assert_same_scores, hits, read_index

import lancelet
from lancelet.query import (
    BooleanQuery,
    BoostQuery,
    FullTextOperator,
    MatchQuery,
    MultiMatchQuery,
    Occur,
    PhraseQuery,
    tokenize,
)

lance = pytest.importorskip("lance")
import lance.query as lq  # noqa: E402

LIBS = {"lancelet": lancelet, "pylance": lance}
#: Output columns: naming `_score` keeps pylance from warning that it adds it.
COLS = ["id", "_score"]

# --------------------------------------------------------------------------------------
# The corpus: Zipf-distributed words, so frequent terms fill many 128-posting blocks and
# rare ones only a tail; varied lengths (a few long documents repeat terms many times).
# --------------------------------------------------------------------------------------

COMMON = (
    "fox dog quick brown lazy jumps jumped jumping runs running ran sea seas over under cat "
    "bird Fox FOX foxes dogs Café café CAFE naïve Über über STRASSE straße 2024 3.14 "
    "well-known x_y snake_case e-mail résumé co-op Ærø don't"
).split()
STOP = "the a an of and to in is it was".split()
RARE = [f"w{i:03d}" for i in range(120)] + [f"rare{c}" for c in "abcdefghij"]
VOCAB = COMMON + STOP + RARE
WEIGHTS = [1.0 / (r + 1) ** 0.8 for r in range(len(VOCAB))]


def sentence(rng: random.Random, n: int) -> str:
    return " ".join(rng.choices(VOCAB, WEIGHTS, k=n))


def corpus(n: int, seed: int, long_every: int = 53) -> list:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        if i % 101 == 0:
            out.append(None)
        elif i % 103 == 0:
            out.append("")
        elif i % 107 == 0:
            out.append("the of and a")  # only stop words: not a document
        elif i % long_every == 0:
            out.append(sentence(rng, rng.randint(80, 250)))
        else:
            out.append(sentence(rng, rng.randint(1, 30)))
    return out


def table(n: int, seed: int, start: int = 0) -> pa.Table:
    return pa.table(
        {
            "id": pa.array(range(start, start + n), pa.int64()),
            "text": corpus(n, seed),
            "title": [None if s is None else s[:40] for s in corpus(n, seed + 1000, long_every=10**9)],
        }
    )


N_DOCS = 3000


def build(lib, uri: str, version: str, fv: int, pos: bool, columns=("text", "title"), n: int = N_DOCS):
    lib.write_dataset(table(n, 7), uri, data_storage_version=version, max_rows_per_file=1100)
    ds = lib.dataset(uri)
    for c in columns:
        ds.create_scalar_index(c, "INVERTED", with_position=pos, format_version=fv)
    return ds


# --------------------------------------------------------------------------------------
# Query pairs: (lancelet form, pylance form)
# --------------------------------------------------------------------------------------


def _both(text, column="text", **kw):
    lop = kw.pop("operator", None)
    ours = MatchQuery(text, column, **kw, **({"operator": lop} if lop else {}))
    theirs = lq.MatchQuery(text, column, **kw, **({"operator": lq.FullTextOperator[lop]} if lop else {}))
    return ours, theirs


def query_pairs(pos: bool) -> dict:
    m = _both
    q = {
        # plain strings: an OR match over every indexed column
        "str:single": ("fox", "fox"),
        "str:accent": ("café", "café"),
        "str:digits": ("2024", "2024"),
        "str:rare": ("w007", "w007"),
        "str:or": ("quick brown fox", "quick brown fox"),
        "str:mixed-case-stemmed": ("Lazy DOGS jumping", "Lazy DOGS jumping"),
        "str:hyphen-underscore": ("well-known x_y", "well-known x_y"),
        "str:repeated-term": ("fox fox sea", "fox fox sea"),
        "str:stop-words-only": ("the of", "the of"),
        "match:single": m("fox"),
        "match:or": m("quick brown fox ran"),
        "match:and": m("quick fox", operator="AND"),
        "match:and3": m("brown lazy dog", operator="AND"),
        "match:and-rare": m("w001 fox", operator="AND"),
        "match:boost": m("seas cat", boost=2.5),
        "match:title": m("fox dog", "title"),
        "match:fuzzy1": m("quik", fuzziness=1),
        "match:fuzzy2-prefix": m("brwn foxx", fuzziness=2, prefix_length=1),
        "match:fuzzy-expansions": m("w05", fuzziness=1, max_expansions=3),
        "bool:must-should-not": (
            BooleanQuery(
                [
                    (Occur.MUST, MatchQuery("fox", "text")),
                    (Occur.SHOULD, MatchQuery("quick", "text")),
                    (Occur.MUST_NOT, MatchQuery("dog", "text")),
                ]
            ),
            lq.BooleanQuery(
                [
                    (lq.Occur.MUST, lq.MatchQuery("fox", "text")),
                    (lq.Occur.SHOULD, lq.MatchQuery("quick", "text")),
                    (lq.Occur.MUST_NOT, lq.MatchQuery("dog", "text")),
                ]
            ),
        ),
        "bool:should-only": (
            BooleanQuery([(Occur.SHOULD, MatchQuery("cat", "text")), (Occur.SHOULD, MatchQuery("bird", "title"))]),
            lq.BooleanQuery(
                [(lq.Occur.SHOULD, lq.MatchQuery("cat", "text")), (lq.Occur.SHOULD, lq.MatchQuery("bird", "title"))]
            ),
        ),
        "bool:two-columns-must": (
            MatchQuery("fox", "text") & MatchQuery("sea", "title"),
            lq.BooleanQuery(
                [(lq.Occur.MUST, lq.MatchQuery("fox", "text")), (lq.Occur.MUST, lq.MatchQuery("sea", "title"))]
            ),
        ),
        "bool:or-operator": (
            MatchQuery("w002", "text") | MatchQuery("w003", "title"),
            lq.BooleanQuery(
                [(lq.Occur.SHOULD, lq.MatchQuery("w002", "text")), (lq.Occur.SHOULD, lq.MatchQuery("w003", "title"))]
            ),
        ),
        "boost": (
            BoostQuery(MatchQuery("fox", "text"), MatchQuery("dog", "text"), negative_boost=0.3),
            lq.BoostQuery(lq.MatchQuery("fox", "text"), lq.MatchQuery("dog", "text"), negative_boost=0.3),
        ),
        "multi-match": (
            MultiMatchQuery("quick fox", ["text", "title"]),
            lq.MultiMatchQuery("quick fox", ["text", "title"]),
        ),
        "multi-match-boosts": (
            MultiMatchQuery("lazy sea", ["text", "title"], boosts=[1.0, 3.0]),
            lq.MultiMatchQuery("lazy sea", ["text", "title"], boosts=[1.0, 3.0]),
        ),
        "multi-match-and": (
            MultiMatchQuery("quick fox", ["text", "title"], operator=FullTextOperator.AND),
            lq.MultiMatchQuery("quick fox", ["text", "title"], operator=lq.FullTextOperator.AND),
        ),
        "dict-columns": ({"query": "brown cat", "columns": ["title"]}, {"query": "brown cat", "columns": ["title"]}),
    }
    if pos:
        q.update(
            {
                "phrase": (PhraseQuery("quick brown", "text"), lq.PhraseQuery("quick brown", "text")),
                "phrase-slop": (PhraseQuery("lazy dog", "text", slop=2), lq.PhraseQuery("lazy dog", "text", slop=2)),
                "phrase-stop-word-inside": (PhraseQuery("fox the dog", "text"), lq.PhraseQuery("fox the dog", "text")),
                "phrase-three": (PhraseQuery("fox dog quick", "text"), lq.PhraseQuery("fox dog quick", "text")),
                "phrase-repeated": (PhraseQuery("fox fox", "text"), lq.PhraseQuery("fox fox", "text")),
                "bool-phrase-not": (
                    BooleanQuery(
                        [(Occur.MUST, MatchQuery("fox", "text")), (Occur.MUST_NOT, PhraseQuery("quick brown", "text"))]
                    ),
                    lq.BooleanQuery(
                        [
                            (lq.Occur.MUST, lq.MatchQuery("fox", "text")),
                            (lq.Occur.MUST_NOT, lq.PhraseQuery("quick brown", "text")),
                        ]
                    ),
                ),
            }
        )
    return q


def compare(ours_ds, theirs_ds, ours_q, theirs_q, what, limit=20, **kw):
    """The whole result (as maps id -> score) and its top ``limit`` agree."""
    a = ours_ds.to_table(full_text_query=ours_q, columns=COLS, **kw)
    b = theirs_ds.to_table(full_text_query=theirs_q, columns=COLS, **kw)
    assert_same_scores(dict(hits(a)), dict(hits(b)), what=what)
    a = ours_ds.to_table(full_text_query=ours_q, columns=COLS, limit=limit, **kw)
    b = theirs_ds.to_table(full_text_query=theirs_q, columns=COLS, limit=limit, **kw)
    assert_same_ranking(hits(a), hits(b), limit, what=f"{what} limit={limit}")
    return a


# --------------------------------------------------------------------------------------
# Both ways, every format, every query form
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("version", ["2.0", "2.2"])
@pytest.mark.parametrize("builder", ["lancelet", "pylance"])
@pytest.mark.parametrize("fv,pos", [(1, False), (1, True), (2, False), (2, True), (3, False), (3, True)])
def test_every_query_form_agrees_with_pylance(tmp_path, version, builder, fv, pos):
    uri = str(tmp_path / "d")
    build(LIBS[builder], uri, version, fv, pos)
    ours, theirs = lancelet.dataset(uri), lance.dataset(uri)
    assert {i["name"] for i in theirs.list_indices()} == {"text_idx", "title_idx"}
    nonempty = 0
    for name, (oq, tq) in query_pairs(pos).items():
        top = compare(ours, theirs, oq, tq, f"{builder} v{fv} pos={pos} {version} {name}")
        nonempty += top.num_rows > 0
    # The queries are not vacuous: all but the stop-word one find rows.
    assert nonempty == len(query_pairs(pos)) - 1
    if not pos:
        for ds in (ours,):
            with pytest.raises(lancelet.errors.InvalidArgumentError, match="position"):
                ds.to_table(full_text_query=PhraseQuery("quick brown", "text"))


def test_the_corpus_fills_full_posting_blocks(tmp_path):
    """The corpus is big enough to exercise bit-packed 128-posting blocks with term
    frequencies above 1 and both kinds of rows (with and without tokens)."""
    uri = str(tmp_path / "d")
    build(lancelet, uri, "2.2", 2, True, columns=("text",))
    content = read_index(uri, "text_idx")
    df = Counter(t for d in content.docs.values() for t in d)
    assert sum(1 for v in df.values() if v > 128) >= 10
    assert max(df.values()) > 3 * 128
    assert max(len(p) for d in content.docs.values() for p in d.values()) > 5
    assert len(content.docs) < N_DOCS  # null, empty and stop-word rows hold no document


@pytest.mark.parametrize("builder", ["lancelet", "pylance"])
@pytest.mark.parametrize("fv", [1, 2, 3])
def test_index_content_is_identical_to_pylances(tmp_path, builder, fv):
    """Decoded, the index lancelet builds holds exactly what pylance's holds: per row,
    every token with its positions (and per-row token counts)."""
    other = "pylance" if builder == "lancelet" else "lancelet"
    a, b = str(tmp_path / "a"), str(tmp_path / "b")
    build(LIBS[builder], a, "2.2", fv, True, columns=("text",))
    build(LIBS[other], b, "2.2", fv, True, columns=("text",))
    ca, cb = read_index(a, "text_idx"), read_index(b, "text_idx")
    assert ca.format_versions == cb.format_versions == {fv}
    assert ca.num_tokens == cb.num_tokens
    assert ca.docs == cb.docs


# --------------------------------------------------------------------------------------
# Deletes, appends, prefilters
# --------------------------------------------------------------------------------------

LIFECYCLE_QUERIES = [
    ("fox", "fox"),
    ("quick brown fox w010", "quick brown fox w010"),
    _both("quick fox", operator="AND"),
    (PhraseQuery("lazy dog", "text"), lq.PhraseQuery("lazy dog", "text")),
    ('"brown fox"', '"brown fox"'),  # a string in quotes is a phrase
    (
        BooleanQuery([(Occur.MUST, MatchQuery("sea", "text")), (Occur.MUST_NOT, MatchQuery("cat", "text"))]),
        lq.BooleanQuery(
            [(lq.Occur.MUST, lq.MatchQuery("sea", "text")), (lq.Occur.MUST_NOT, lq.MatchQuery("cat", "text"))]
        ),
    ),
]


@pytest.mark.parametrize("version", ["2.0", "2.2"])
@pytest.mark.parametrize("builder", ["lancelet", "pylance"])
@pytest.mark.parametrize("deleter", ["lancelet", "pylance"])
def test_deletes_appends_and_prefilters_agree(tmp_path, version, builder, deleter):
    uri = str(tmp_path / "d")
    build(LIBS[builder], uri, version, 2, True, columns=("text",))
    LIBS[deleter].dataset(uri).delete("id < 10")
    ours, theirs = lancelet.dataset(uri), lance.dataset(uri)
    for i, (oq, tq) in enumerate(LIFECYCLE_QUERIES):
        top = compare(ours, theirs, oq, tq, f"after delete #{i}", limit=50)
        assert all(r >= 10 for r in top["id"].to_pylist())
        compare(ours, theirs, oq, tq, f"prefilter #{i}", filter="id % 2 = 0", prefilter=True)
    # Rows appended after the build are searched too (without the index), and deleting
    # some of them, and more indexed rows, still agrees.
    LIBS[builder].write_dataset(table(500, 99, start=N_DOCS), uri, mode="append", data_storage_version=version)
    LIBS[deleter].dataset(uri).delete("id % 13 = 5")
    ours, theirs = lancelet.dataset(uri), lance.dataset(uri)
    for i, (oq, tq) in enumerate(LIFECYCLE_QUERIES):
        top = compare(ours, theirs, oq, tq, f"appended #{i}", limit=N_DOCS + 500)
        got = top["id"].to_pylist()
        assert not any(r < 10 or r % 13 == 5 for r in got)
        assert any(r >= N_DOCS for r in got), "appended rows must be found"
        compare(ours, theirs, oq, tq, f"appended prefilter #{i}", filter="id % 2 = 0", prefilter=True)
        fast = compare(ours, theirs, oq, tq, f"fast_search #{i}", fast_search=True, limit=N_DOCS + 500)
        assert all(r < N_DOCS for r in fast["id"].to_pylist())


@pytest.mark.parametrize("builder", ["lancelet", "pylance"])
def test_postfilter_filters_the_top_k(tmp_path, builder):
    """Without prefilter the filter applies to the best ``limit`` rows (fewer may remain)."""
    uri = str(tmp_path / "d")
    build(LIBS[builder], uri, "2.2", 2, False, columns=("text",))
    ours, theirs = lancelet.dataset(uri), lance.dataset(uri)
    for q in ("fox", "brown w003 sea"):
        # A limit that does not cut a run of equal scores (which rows of a tie make the
        # top k is unspecified in pylance).
        s = ours.to_table(full_text_query=q, columns=COLS)["_score"].to_pylist()
        limit = next(k for k in range(30, len(s)) if s[k - 1] != s[k])
        kw = dict(filter="id % 3 = 0", prefilter=False, limit=limit, columns=COLS)
        a, b = ours.to_table(full_text_query=q, **kw), theirs.to_table(full_text_query=q, **kw)
        unfiltered = ours.to_table(full_text_query=q, limit=limit, columns=COLS)
        assert 0 < a.num_rows < limit
        assert set(a["id"].to_pylist()) == {i for i in unfiltered["id"].to_pylist() if i % 3 == 0}
        assert_same_ranking(hits(a), hits(b), None, what=f"postfilter {q}")


# --------------------------------------------------------------------------------------
# List columns
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "list_type", [pa.list_(pa.string()), pa.large_list(pa.large_string())], ids=["list", "large_list"]
)
@pytest.mark.parametrize("builder", ["lancelet", "pylance"])
@pytest.mark.parametrize("fv,pos", [(1, True), (2, False), (3, True)])
def test_list_columns_agree(tmp_path, list_type, builder, fv, pos):
    rng = random.Random(5)
    tags = []
    for i in range(1500):
        if i % 61 == 0:
            tags.append(None)
        else:
            tags.append(
                [None if rng.random() < 0.05 else sentence(rng, rng.randint(0, 6)) for _ in range(rng.randint(0, 5))]
            )
    t = pa.table({"id": pa.array(range(1500), pa.int64()), "tags": pa.array(tags, list_type)})
    uri = str(tmp_path / "d")
    LIBS[builder].write_dataset(t, uri, max_rows_per_file=600)
    LIBS[builder].dataset(uri).create_scalar_index("tags", "INVERTED", with_position=pos, format_version=fv)
    ours, theirs = lancelet.dataset(uri), lance.dataset(uri)
    pairs = [("fox", "fox"), ("brown lazy w004", "brown lazy w004"), _both("quick fox", "tags", operator="AND")]
    if pos:
        # Positions run on across a row's elements: a phrase may span two of them.
        pairs += [(PhraseQuery("fox dog", "tags"), lq.PhraseQuery("fox dog", "tags"))]
    for i, (oq, tq) in enumerate(pairs):
        top = compare(ours, theirs, oq, tq, f"list #{i}")
        assert top.num_rows > 0


# --------------------------------------------------------------------------------------
# Tokenizer parity: lancelet.query.tokenize vs the tokens pylance's index holds
# --------------------------------------------------------------------------------------

PIECES = [
    # English, stemmed
    "running",
    "runs",
    "ran",
    "flies",
    "flying",
    "universities",
    "generously",
    "caresses",
    "ponies",
    "happily",
    "connection",
    "connected",
    "organization",
    "nationalisation",
    # case
    "HELLO",
    "Hello",
    "hElLo",
    "ÉCOLE",
    "The",
    "THE",
    # stop words
    "the",
    "a",
    "an",
    "and",
    "of",
    "to",
    "is",
    "was",
    "it",
    "I",
    "me",
    "they",
    "themselves",
    # digits
    "2024",
    "3.14",
    "1,000",
    "007",
    "42nd",
    "v2",
    "x86_64",
    "10kg",
    "0x1F",
    # punctuation
    "hello,world",
    "(paren)",
    "end.",
    "wait...",
    "what?!",
    "a/b",
    "c++",
    "#tag",
    "@user",
    "foo@bar.com",
    "http://example.com/path?q=1&r=2",
    "don't",
    "it's",
    "rock'n'roll",
    "semi;colon",
    "«quoted»",
    "“smart”",
    "—dash—",
    "a.b.c",
    # hyphens and underscores
    "well-known",
    "co-operate",
    "snake_case_name",
    "__dunder__",
    "-leading",
    "trailing-",
    "a-b_c-d",
    # long tokens (the limit is 40)
    "a" * 39,
    "b" * 40,
    "c" * 41,
    "d" * 80,
    "é" * 20,
    "é" * 21,
    "ü" * 40,
    "Ab" * 25,
    "supercalifragilisticexpialidocious_antidisestablishmentarianism",
    # accents and other scripts
    "Café",
    "naïve",
    "résumé",
    "Über",
    "straße",
    "STRASSE",
    "Ærø",
    "œuvre",
    "ﬁnance",
    "İstanbul",
    "ıi",
    "Αθήνα",
    "Москва",
    "e\u0301te\u0301",
    "🦊",
    "东京",
    "مرحبا",
    "ＡＢＣ",
    "x²",
    "Ⅻ",
    "½",
    # French and German words
    "chevaux",
    "mangeaient",
    "rapidement",
    "étudiantes",
    "français",
    "garçon",
    "élèves",
    "l'école",
    "aujourd'hui",
    "Häuser",
    "wurden",
    "gebaut",
    "Mädchen",
    "Kindern",
    "schönen",
    "größer",
    "und",
    "die",
    "der",
    "les",
    "des",
    "est",
]
SEPARATORS = [" "] * 8 + ["  ", "\t", ", ", "-", "_", "\n", "\u00a0", "/", ".", "\u200b", "\u3000"]


def sentences(n: int, seed: int, pieces=PIECES) -> list:
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        k = rng.randint(1, 14)
        s = rng.choice(pieces)
        for _ in range(k - 1):
            s += rng.choice(SEPARATORS) + rng.choice(pieces)
        out.append(s)
    return out


FRENCH = (
    "les chevaux mangeaient rapidement des pommes étudiantes françaises garçon élèves l'école "
    "aujourd'hui nationalisation continuellement heureusement maisons Château être avoir "
    "était sommes qu'il jusqu'à naïveté cœur Noël"
).split()
GERMAN = (
    "die Häuser wurden gebaut Straße STRASSE Mädchen Kindern schönen größer und der das "
    "Bäume Verantwortung Zusammenarbeit gegangen laufen läuft Fußball Übersetzung ist nicht"
).split()


@pytest.mark.parametrize(
    "case,n,params,pieces",
    [
        pytest.param("default", 10_000, {}, PIECES, id="default"),
        pytest.param(
            "no-filters",
            3000,
            dict(stem=False, remove_stop_words=False, lower_case=False, ascii_folding=False),
            PIECES,
            id="no-filters",
        ),
        pytest.param("no-stem-folding", 2000, dict(stem=False, ascii_folding=True), PIECES, id="no-stem-folding"),
        pytest.param("french", 3000, dict(language="French"), FRENCH + PIECES[:20], id="french"),
        pytest.param("german", 3000, dict(language="German"), GERMAN + PIECES[:20], id="german"),
        pytest.param(
            "french-no-folding", 1500, dict(language="French", ascii_folding=False), FRENCH, id="french-no-folding"
        ),
        pytest.param("whitespace", 2000, dict(base_tokenizer="whitespace"), PIECES, id="whitespace"),
        pytest.param("raw", 1000, dict(base_tokenizer="raw"), PIECES, id="raw"),
        pytest.param("max-token-length-8", 2000, dict(max_token_length=8), PIECES, id="max-token-length-8"),
        pytest.param(
            "custom-stop-words",
            2000,
            dict(custom_stop_words=["hello", "running", "café"]),
            PIECES,
            id="custom-stop-words",
        ),
        pytest.param(
            "ngram", 800, dict(base_tokenizer="ngram", min_ngram_length=2, max_ngram_length=4), PIECES, id="ngram"
        ),
        pytest.param(
            "ngram-prefix",
            800,
            dict(base_tokenizer="ngram", min_ngram_length=1, max_ngram_length=3, prefix_only=True),
            PIECES,
            id="ngram-prefix",
        ),
    ],
)
def test_tokens_match_pylances_index(tmp_path, case, n, params, pieces):
    """Per document, the tokens ``tokenize`` makes (as a multiset) are exactly those the
    pylance-built index holds for the row, and the docs file's count is their number."""
    texts = sentences(n, seed=zlib.crc32(case.encode()), pieces=pieces)
    uri = str(tmp_path / "p")
    lance.write_dataset(pa.table({"text": texts}), uri)
    lance.dataset(uri).create_scalar_index("text", "INVERTED", **params)
    content = read_index(uri, "text_idx")
    ours_all: set = set()
    mismatches = []
    for row, s in enumerate(texts):
        toks = tokenize(s, **params)
        ours_all.update(toks)
        theirs = content.counts(row)
        if Counter(toks) != theirs or content.num_tokens.get(row, 0) != len(toks):
            mismatches.append((s, sorted(toks), sorted(theirs.elements())))
    assert not mismatches, f"{len(mismatches)} of {n} differ, e.g. {mismatches[:3]}"
    assert ours_all == content.tokens
    assert len(content.tokens) > 20


@pytest.mark.parametrize("builder", ["lancelet", "pylance"])
def test_phrases_over_stop_words_and_long_tokens_agree(tmp_path, builder):
    """Removed stop words and too-long tokens leave position gaps that phrase matching
    must respect in the same way in both libraries."""
    texts = sentences(3000, seed=3)
    uri = str(tmp_path / "p")
    LIBS[builder].write_dataset(pa.table({"id": pa.array(range(3000), pa.int64()), "text": texts}), uri)
    LIBS[builder].dataset(uri).create_scalar_index("text", "INVERTED", with_position=True)
    ours, theirs = lancelet.dataset(uri), lance.dataset(uri)
    found = 0
    for p in [
        "running the flies",
        "hello world",
        "café naïve",
        "generously " + "c" * 41 + " connection",
        "a b",
        "2024 3 14",
        "snake case name",
        "well known",
        "e mail",
        "x86 64",
    ]:
        for slop in (0, 1):
            top = compare(
                ours, theirs, PhraseQuery(p, "text", slop=slop), lq.PhraseQuery(p, "text", slop=slop), f"{p!r}/{slop}"
            )
            found += top.num_rows > 0
    assert found >= 10


@pytest.mark.xfail(
    strict=True,
    reason="pylance 14.0.2 documents fuzziness=None as automatic (0 edits up to 2 characters, 1 up to 5, "
    "else 2) but finds nothing with it, even for a 3-letter term one edit away; lancelet follows the "
    "documented rule (tested in test_fts_behaviour.py)",
)
def test_automatic_fuzziness_agrees_with_pylance(tmp_path):
    uri = str(tmp_path / "d")
    t = pa.table({"id": pa.array(range(4), pa.int64()), "text": ["jump high", "jumps", "fox", "foxes run"]})
    lance.write_dataset(t, uri).create_scalar_index("text", "INVERTED")
    ours, theirs = lancelet.dataset(uri), lance.dataset(uri)
    for q in ("jmp", "jumpng"):
        a = ours.to_table(full_text_query=MatchQuery(q, "text", fuzziness=None), columns=COLS)
        b = theirs.to_table(full_text_query=lq.MatchQuery(q, "text", fuzziness=None), columns=COLS)
        assert a.num_rows == 2
        assert_same_scores(dict(hits(a)), dict(hits(b)), what=q)


@pytest.mark.xfail(
    strict=True,
    reason="pylance 14.0.2 ignores unindexed fragments in fuzzy matches (an exact match finds them); "
    "lancelet searches them, as for every other query",
)
def test_fuzzy_matches_on_unindexed_rows_agree_with_pylance(tmp_path):
    uri = str(tmp_path / "d")
    t = pa.table({"id": pa.array(range(4), pa.int64()), "text": ["quick fox", "lazy dog", "quack", "cat"]})
    lancelet.write_dataset(t, uri).create_scalar_index("text", "INVERTED")
    more = pa.table({"id": pa.array(range(4, 8), pa.int64()), "text": ["quick bird", "lazy cow", "quack quack", "cat"]})
    lancelet.write_dataset(more, uri, mode="append")
    ours, theirs = lancelet.dataset(uri), lance.dataset(uri)
    # The exact term finds the appended row in both.
    assert sorted(theirs.to_table(full_text_query="quick", columns=COLS)["id"].to_pylist()) == [0, 4]
    a = ours.to_table(full_text_query=MatchQuery("quik", "text", fuzziness=1), columns=COLS)
    b = theirs.to_table(full_text_query=lq.MatchQuery("quik", "text", fuzziness=1), columns=COLS)
    assert sorted(a["id"].to_pylist()) == [0, 4]
    assert_same_scores(dict(hits(a)), dict(hits(b)), what="fuzzy over unindexed rows")


def _layouts(terms, slots):
    """Every document of ``slots`` words holding each of ``terms`` once, the rest filler."""
    out = []
    for perm in itertools.permutations(range(slots), len(terms)):
        words = ["zz"] * slots
        for t, p in zip(terms, perm):
            words[p] = t
        out.append(" ".join(words))
    return out


def _phrase_sets(uri, q, slop):
    a = lancelet.dataset(uri).to_table(full_text_query=PhraseQuery(q, "text", slop=slop), columns=COLS)
    b = lance.dataset(uri).to_table(full_text_query=lq.PhraseQuery(q, "text", slop=slop), columns=COLS)
    return set(a["id"].to_pylist()), set(b["id"].to_pylist())


def test_sloppy_phrases_of_two_terms_agree_exhaustively(tmp_path):
    """Every arrangement of two terms (and repeats) in 7 words, slop 0-3."""
    docs = [" ".join(p) for p in itertools.product(["xa", "xb", "zz"], repeat=7)]
    uri = str(tmp_path / "d")
    lance.write_dataset(pa.table({"id": pa.array(range(len(docs)), pa.int64()), "text": docs}), uri)
    lance.dataset(uri).create_scalar_index("text", "INVERTED", with_position=True)
    for q in ("xa xb", "xb xa", "xa xa"):
        for slop in range(4):
            a, b = _phrase_sets(uri, q, slop)
            assert a == b, (q, slop, [docs[i] for i in sorted(a ^ b)[:5]])
            assert a


def test_sloppy_phrases_of_three_distinct_terms_agree(tmp_path):
    """Three terms, each once, in every arrangement in 6 words: pylance allows ``slop``
    extra positions between each pair of neighbouring terms (slop 1 matches
    ``xa zz xb zz xc``)."""
    docs = _layouts(["xa", "xb", "xc"], 6)
    uri = str(tmp_path / "d")
    lance.write_dataset(pa.table({"id": pa.array(range(len(docs)), pa.int64()), "text": docs}), uri)
    lance.dataset(uri).create_scalar_index("text", "INVERTED", with_position=True)
    for slop in range(4):
        a, b = _phrase_sets(uri, "xa xb xc", slop)
        assert a == b, (
            slop,
            "lancelet only",
            [docs[i] for i in sorted(a - b)[:4]],
            "pylance only",
            [docs[i] for i in sorted(b - a)[:4]],
        )


@pytest.mark.xfail(
    strict=True,
    reason="pylance 14.0.2's sloppy matching of 3+ term phrases misses documents holding the exact "
    "phrase when a query term repeats around it: 'xc xa xb xc' and 'zz xa xb xa zz' match slop=0 "
    "but not slop=1 (lancelet matches both)",
)
def test_sloppy_phrases_with_repeated_terms_agree(tmp_path):
    docs = ["zz xc xa xb xc zz", "xa xb xc", "zz xa xb xa zz zz"]
    uri = str(tmp_path / "d")
    lance.write_dataset(pa.table({"id": pa.array(range(3), pa.int64()), "text": docs}), uri)
    lance.dataset(uri).create_scalar_index("text", "INVERTED", with_position=True)
    a, b = _phrase_sets(uri, "xa xb xc", 1)
    assert a == {0, 1}
    assert a == b
    a, b = _phrase_sets(uri, "xa xb xa", 1)
    assert a == {2}
    assert a == b


# --------------------------------------------------------------------------------------
# Targeted tokenizer parity: stemming, stop words, folding, n-gram defaults
# --------------------------------------------------------------------------------------


def _pylance_tokens(tmp_path, texts, **params):
    """Per text, the sorted tokens pylance's index holds for it (one row per text)."""
    uri = str(tmp_path / f"tok{zlib.crc32(repr((texts[:3], params)).encode())}")
    lance.write_dataset(pa.table({"text": texts}), uri)
    lance.dataset(uri).create_scalar_index("text", "INVERTED", **params)
    c = read_index(uri, "text_idx")
    return [sorted(c.counts(i).elements()) for i in range(len(texts))]


def _token_diffs(tmp_path, texts, **params):
    theirs = _pylance_tokens(tmp_path, texts, **params)
    return [(t, sorted(tokenize(t, **params)), p) for t, p in zip(texts, theirs) if sorted(tokenize(t, **params)) != p]


STEM_WORDS = {
    "English": "universities university universe organization organizations organ generalization general "
    "generous generously community communities national relational conditional happiness hopefulness "
    "sensitivity sensibility digitizer agreement ponies caresses running hopping hoped skies dying lying "
    "news early earlier proceed exceed succeed atlas cosmos",
    "French": "françaises française français chevaux mangeaient rapidement étudiantes garçon élèves école "
    "nationalisation continuellement heureusement maisons château naïveté connaissances intelligemment "
    "voudrais appartenaient majestueusement",
    "German": "häuser wurden gebaut straße mädchen kindern schönen größer bäume verantwortung zusammenarbeit "
    "gegangen laufen läuft fußball übersetzung aufeinanderfolgenden kategorischen erklärungen",
}


@pytest.mark.parametrize("language", sorted(STEM_WORDS))
def test_stemming_matches_pylance(tmp_path, language):
    words = STEM_WORDS[language].split()
    diffs = _token_diffs(tmp_path, words, language=language, remove_stop_words=False)
    assert not diffs, f"(word, lancelet, pylance): {diffs}"


def test_a_stemmed_word_finds_its_row_in_a_pylance_index(tmp_path):
    """The user-visible side of stemming parity: the query is stemmed by lancelet, the
    documents were stemmed by pylance."""
    uri = str(tmp_path / "d")
    words = STEM_WORDS["English"].split()
    lance.write_dataset(pa.table({"id": pa.array(range(len(words)), pa.int64()), "text": words}), uri)
    lance.dataset(uri).create_scalar_index("text", "INVERTED")
    ours, theirs = lancelet.dataset(uri), lance.dataset(uri)
    missed = []
    for i, w in enumerate(words):
        want = set(theirs.to_table(full_text_query=w, columns=COLS)["id"].to_pylist())
        assert i in want
        if set(ours.to_table(full_text_query=w, columns=COLS)["id"].to_pylist()) != want:
            missed.append(w)
    assert not missed


STOP_CANDIDATES = {
    "English": "i me my myself we our ours you your he him his she her it its they them their what which who "
    "this that these those am is are was were be been being have has had do does did a an the and but if or "
    "because as until while of at by for with about against between into through during before after above "
    "below to from up down in out on off over under again further then once here there when where why how "
    "all any both each few more most other some such no nor not only own same so than too very s t can will "
    "just don should now",
    "French": "au aux avec ce ces dans de des du elle en et eux il ils je la le les leur lui ma mais me même mes "
    "moi mon ne nos notre nous on ou par pas pour qu que qui sa se ses son sur ta te tes toi ton tu un une "
    "vos votre vous c d j l à m n s t y été étée étées étés étant suis es est sommes êtes sont serai sera "
    "étais était fus fut sois soit eu eue ai as avons avez ont aurai avais avait ceci cela cet cette ici "
    "sans soi quel quelle",
    "German": "aber alle allem als also am an ander andere auch auf aus bei bin bis bist da damit dann der den "
    "des dem die das dass daß dein deine denn dich dir du dies diese diesem dieser doch dort durch ein eine "
    "einem einen er ihn ihm es etwas euer für gegen gewesen hab habe haben hat hatte hier hin hinter ich mich "
    "mir ihr ihre im in indem ins ist jede jeder jene jetzt kann kein keine keinem keinen keiner keines "
    "können könnte machen man manche mein meine mit muss musste nach nicht nichts noch nun nur ob oder ohne "
    "sehr sein seine selbst sich sie sind so solche soll sollte sondern sonst über um und uns unsere "
    "unserem unseren unser unseres unter viel vom von vor während war waren was weg weil weiter welche wenn "
    "werde werden wie wieder will wir wird wo wollen wollte würde zu zum zur zwar zwischen",
}


@pytest.mark.parametrize("language", sorted(STOP_CANDIDATES))
def test_stop_words_match_pylance(tmp_path, language):
    words = STOP_CANDIDATES[language].split()
    diffs = _token_diffs(tmp_path, words, language=language, stem=False)
    assert not diffs, f"(word, lancelet, pylance): {diffs}"


FOLD_RANGES = [
    (0xA0, 0x250),
    (0x250, 0x300),
    (0x370, 0x400),
    (0x1D00, 0x1DC0),
    (0x1E00, 0x1F00),
    (0x2000, 0x2200),
    (0x2460, 0x2500),
    (0x2760, 0x2800),
    (0x2C60, 0x2C80),
    (0xA720, 0xA800),
    (0xFB00, 0xFB07),
    (0xFF00, 0xFFF0),
]


@pytest.mark.parametrize("base", ["raw", "simple"])
def test_ascii_folding_matches_pylance_per_character(tmp_path, base):
    """``x<c>x`` for ~2,500 characters of the Latin, punctuation, letterlike, number,
    enclosed and fullwidth blocks, folded (not lower-cased) by each library."""
    chars = [chr(c) for lo, hi in FOLD_RANGES for c in range(lo, hi)]
    texts = [f"x{c}x" for c in chars]
    params = dict(base_tokenizer=base, lower_case=False, stem=False, remove_stop_words=False, ascii_folding=True)
    diffs = _token_diffs(tmp_path, texts, **params)
    assert not diffs, f"{len(diffs)} of {len(texts)} differ; (text, lancelet, pylance): {diffs[:40]}"


def test_ngram_defaults_match_pylance(tmp_path):
    """The n-gram tokenizer neither stems nor drops stop words unless asked (pylance)."""
    texts = ["the fox", "Hello", "x_y-z", "an of", "Running dogs"]
    for params in (
        dict(base_tokenizer="ngram", min_ngram_length=2, max_ngram_length=3),
        dict(base_tokenizer="ngram", min_ngram_length=1, max_ngram_length=3, prefix_only=True),
    ):
        diffs = _token_diffs(tmp_path, texts, **params)
        assert not diffs, f"{params}: (text, lancelet, pylance): {diffs}"


@pytest.mark.xfail(
    strict=True,
    reason="which terms a fuzzy term expands to when there are more than max_expansions: pylance 14.0.2 "
    "takes the first in byte order ('box' before 'fox' for 'fox', dropping the exact term), lancelet the "
    "closest first (the exact 'fox'); lancelet's choice is the more useful one",
)
def test_fuzzy_expansion_choice_agrees_with_pylance(tmp_path):
    uri = str(tmp_path / "d")
    t = pa.table({"id": pa.array(range(3), pa.int64()), "text": ["fox", "box", "cat"]})
    lance.write_dataset(t, uri).create_scalar_index("text", "INVERTED")
    a = lancelet.dataset(uri).to_table(
        full_text_query=MatchQuery("fox", "text", fuzziness=1, max_expansions=1), columns=COLS
    )
    b = lance.dataset(uri).to_table(
        full_text_query=lq.MatchQuery("fox", "text", fuzziness=1, max_expansions=1), columns=COLS
    )
    assert a.num_rows == b.num_rows == 1
    assert_same_scores(dict(hits(a)), dict(hits(b)), what="max_expansions=1")


@pytest.mark.parametrize("builder", ["lancelet", "pylance"])
def test_a_second_index_on_the_same_column_agrees(tmp_path, builder):
    """Two INVERTED indexes on one column (different names and tokenizers): pylance
    searches one of them; lancelet must not add the two up."""
    uri = str(tmp_path / "d")
    build(LIBS[builder], uri, "2.2", 2, False, columns=("text",))
    LIBS[builder].dataset(uri).create_scalar_index(
        "text", "INVERTED", name="text_raw", base_tokenizer="whitespace", stem=False, with_position=True
    )
    ours, theirs = lancelet.dataset(uri), lance.dataset(uri)
    assert sorted(i["name"] for i in theirs.list_indices()) == ["text_idx", "text_raw"]
    for q in ("fox", "quick brown fox"):
        compare(ours, theirs, q, q, f"two indexes {q!r}")


@pytest.mark.parametrize("stable", [False, True])
@pytest.mark.parametrize("builder", ["lancelet", "pylance"])
def test_updates_agree(tmp_path, builder, stable):
    """An updated row moves to a new (unindexed) fragment; its old text must stop matching
    (with stable row ids it keeps its row id, still listed in the index)."""
    uri = str(tmp_path / "d")
    t = pa.table({"id": pa.array(range(600), pa.int64()), "text": corpus(600, 3)})
    LIBS[builder].write_dataset(t, uri, max_rows_per_file=200, enable_stable_row_ids=stable)
    LIBS[builder].dataset(uri).create_scalar_index("text", "INVERTED", with_position=True)
    LIBS[builder].dataset(uri).update({"text": "'purple fox'"}, where="id % 10 = 4")
    ours, theirs = lancelet.dataset(uri), lance.dataset(uri)
    for q in ("fox", "quick brown", "purple", "sea cat", '"lazy dog"'):
        top = compare(ours, theirs, q, q, f"update {q!r}", limit=30)
        assert top.num_rows > 0
    assert not {i for i in ids_of(ours.to_table(full_text_query="sea", columns=COLS)) if i % 10 == 4}


def ids_of(t):
    return t["id"].to_pylist()
