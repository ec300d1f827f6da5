"""Full-text (INVERTED) indexes and hybrid search: interop with pylance 14 both ways, the
query forms, the lifecycle, and the errors.

Scores are compared as maps row -> score: pylance leaves the order of equal scores
unspecified, so a top-k cut inside a run of ties may pick different rows."""

from __future__ import annotations

import importlib
import os
import random

import pyarrow as pa
import pytest

import lancelet
from lancelet.errors import InvalidArgumentError, UnsupportedFeatureError
from lancelet.query import BooleanQuery, BoostQuery, MatchQuery, MultiMatchQuery, Occur, PhraseQuery, tokenize

lance = pytest.importorskip("lance")
import lance.query as lq  # noqa: E402

WORDS = (
    "fox dog cat bird runs running jumps jumped over under brown lazy quick red the a of and "
    "Café naïve x_y 2024 well-known Über STRASSE ran seas sea"
).split()


def corpus(n: int, seed: int) -> list:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        if i % 97 == 0:
            out.append(None)
        elif i % 89 == 0:
            out.append("the a of")  # stop words only: no tokens, not a document
        else:
            out.append(" ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 18))))
    return out


def scores(t: pa.Table, key: str = "id") -> dict:
    return dict(zip(t[key].to_pylist(), t["_score"].to_pylist()))


def same(a: dict, b: dict, rel: float = 1e-5) -> None:
    assert a.keys() == b.keys(), (sorted(set(a) ^ set(b))[:10], len(a), len(b))
    for k in a:
        assert abs(a[k] - b[k]) <= rel * max(1.0, abs(b[k])), (k, a[k], b[k])


def top_same(a: pa.Table, b: pa.Table, k: int) -> None:
    """The same best-k scores, and the same rows except inside a run of ties at the cut."""
    sa, sb = a["_score"].to_pylist(), b["_score"].to_pylist()
    assert len(sa) == len(sb) <= k
    for x, y in zip(sa, sb):
        assert abs(x - y) <= 1e-5 * max(1.0, abs(y))
    if sa:
        cut = sa[-1]
        ia = {i for i, s in zip(a["id"].to_pylist(), sa) if s > cut + 1e-6}
        ib = {i for i, s in zip(b["id"].to_pylist(), sb) if s > cut + 1e-6}
        assert ia == ib


def make(lib, path, n=3000, seed=1, version="2.2", **kw):
    t = pa.table({"id": pa.array(range(n), pa.int64()), "text": corpus(n, seed), "title": corpus(n, seed + 1)})
    return lib.write_dataset(t, str(path), data_storage_version=version, max_rows_per_file=1000, **kw)


QUERIES = ["fox", "quick brown fox fox", "cafe 2024", "well known", "jumped seas", "strasse uber"]


@pytest.mark.parametrize("writer", ["lancelet", "pylance"])
@pytest.mark.parametrize("fv,pos,version", [(1, False, "2.0"), (2, True, "2.2"), (3, True, "2.0"), (2, False, "2.1")])
def test_indexes_interoperate_both_ways(tmp_path, writer, fv, pos, version):
    lib = lancelet if writer == "lancelet" else lance
    ds = make(lib, tmp_path / "d", version=version)
    ds.create_scalar_index("text", "INVERTED", with_position=pos, format_version=fv)
    ours, theirs = lancelet.dataset(str(tmp_path / "d")), lance.dataset(str(tmp_path / "d"))
    for q in QUERIES:
        same(scores(ours.to_table(full_text_query=q)), scores(theirs.to_table(full_text_query=q)))
        top_same(ours.to_table(full_text_query=q, limit=20), theirs.to_table(full_text_query=q, limit=20), 20)
    m, lm = MatchQuery("quick fox", "text", operator="AND"), lq.MatchQuery("quick fox", "text", operator=lq.FullTextOperator.AND)
    same(scores(ours.to_table(full_text_query=m)), scores(theirs.to_table(full_text_query=lm)))
    f, lf = MatchQuery("quik", "text", fuzziness=1), lq.MatchQuery("quik", "text", fuzziness=1)
    same(scores(ours.to_table(full_text_query=f)), scores(theirs.to_table(full_text_query=lf)))
    b = BooleanQuery([(Occur.MUST, MatchQuery("fox", "text")), (Occur.MUST_NOT, MatchQuery("dog", "text"))])
    lb = lq.BooleanQuery([(lq.Occur.MUST, lq.MatchQuery("fox", "text")), (lq.Occur.MUST_NOT, lq.MatchQuery("dog", "text"))])
    same(scores(ours.to_table(full_text_query=b)), scores(theirs.to_table(full_text_query=lb)))
    bo = BoostQuery(MatchQuery("fox", "text"), MatchQuery("dog", "text"), negative_boost=0.3)
    lbo = lq.BoostQuery(lq.MatchQuery("fox", "text"), lq.MatchQuery("dog", "text"), negative_boost=0.3)
    same(scores(ours.to_table(full_text_query=bo)), scores(theirs.to_table(full_text_query=lbo)))
    if pos:
        for slop in (0, 1):
            p, lp = PhraseQuery("brown fox", "text", slop=slop), lq.PhraseQuery("brown fox", "text", slop=slop)
            got = ours.to_table(full_text_query=p)
            assert got.num_rows > 0
            same(scores(got), scores(theirs.to_table(full_text_query=lp)))
        same(scores(ours.to_table(full_text_query='"lazy dog"')), scores(theirs.to_table(full_text_query='"lazy dog"')))
    else:
        with pytest.raises(InvalidArgumentError, match="position"):
            ours.to_table(full_text_query=PhraseQuery("brown fox", "text"))


@pytest.mark.parametrize("writer", ["lancelet", "pylance"])
def test_appends_deletes_and_prefilters_score_as_pylance(tmp_path, writer):
    """Appended rows are searched without the index (scored against the index's statistics
    plus their own), deleted rows vanish but keep counting, a prefilter restricts both."""
    lib = lancelet if writer == "lancelet" else lance
    uri = str(tmp_path / "d")
    ds = make(lib, uri)
    ds.create_scalar_index("text", "INVERTED", with_position=True)
    extra = pa.table({"id": pa.array(range(3000, 3600), pa.int64()), "text": corpus(600, 9), "title": corpus(600, 10)})
    lib.write_dataset(extra, uri, mode="append")
    lib.dataset(uri).delete("id % 7 = 3")
    ours, theirs = lancelet.dataset(uri), lance.dataset(uri)
    for q in QUERIES + ['"brown fox"']:
        same(scores(ours.to_table(full_text_query=q)), scores(theirs.to_table(full_text_query=q)))
        kw = dict(filter="id % 2 = 0", prefilter=True)
        same(scores(ours.to_table(full_text_query=q, **kw)), scores(theirs.to_table(full_text_query=q, **kw)))
        top_same(ours.to_table(full_text_query=q, limit=10, **kw), theirs.to_table(full_text_query=q, limit=10, **kw), 10)
        fast = ours.to_table(full_text_query=q, fast_search=True)
        assert all(i < 3000 for i in fast["id"].to_pylist())
        assert not any(i % 7 == 3 for i in fast["id"].to_pylist())


@pytest.mark.parametrize("writer", ["lancelet", "pylance"])
def test_optimize_and_compaction_keep_the_index_usable_by_both(tmp_path, writer):
    lib = lancelet if writer == "lancelet" else lance
    uri = str(tmp_path / "d")
    make(lib, uri).create_scalar_index("text", "INVERTED")
    extra = pa.table({"id": pa.array(range(3000, 3500), pa.int64()), "text": corpus(500, 4), "title": corpus(500, 5)})
    lib.write_dataset(extra, uri, mode="append")
    lib.dataset(uri).optimize.optimize_indices(num_indices_to_merge=0)
    ds = lib.dataset(uri)
    covered = sorted(f for s in ds.list_indices() for f in s["fragment_ids"])
    assert covered == [f.fragment_id for f in ds.get_fragments()]
    for q in QUERIES:
        same(scores(lancelet.dataset(uri).to_table(full_text_query=q)), scores(lance.dataset(uri).to_table(full_text_query=q)))
    ds.optimize.compact_files(target_rows_per_fragment=10_000)
    ds = lib.dataset(uri)
    assert len(ds.get_fragments()) == 2  # runs are cut where index segments meet (pylance)
    for q in QUERIES:
        a, b = lancelet.dataset(uri).to_table(full_text_query=q), lance.dataset(uri).to_table(full_text_query=q)
        assert set(a["id"].to_pylist()) == set(b["id"].to_pylist())


@pytest.mark.parametrize("list_type", [pa.list_(pa.string()), pa.large_list(pa.large_string())])
def test_list_columns_are_one_document_per_row(tmp_path, list_type):
    rng = random.Random(3)
    tags = [[" ".join(rng.choice(WORDS) for _ in range(3)) for _ in range(rng.randint(0, 4))] for _ in range(800)]
    t = pa.table({"id": range(800), "tags": pa.array(tags, list_type)})
    lancelet.write_dataset(t, str(tmp_path / "a")).create_scalar_index("tags", "INVERTED")
    lance.write_dataset(t, str(tmp_path / "b")).create_scalar_index("tags", "INVERTED")
    for q in ("fox", "lazy dog"):
        for d in ("a", "b"):
            same(scores(lancelet.dataset(str(tmp_path / d)).to_table(full_text_query=q)),
                 scores(lance.dataset(str(tmp_path / d)).to_table(full_text_query=q)))


def test_multi_column_queries(tmp_path):
    uri = str(tmp_path / "d")
    ds = make(lancelet, uri)
    ds.create_scalar_index("text", "INVERTED")
    ds.create_scalar_index("title", "INVERTED")
    theirs = lance.dataset(uri)
    same(scores(ds.to_table(full_text_query="fox")), scores(theirs.to_table(full_text_query="fox")))
    mm = MultiMatchQuery("quick fox", ["text", "title"], boosts=[1.0, 2.0])
    lmm = lq.MultiMatchQuery("quick fox", ["text", "title"], boosts=[1.0, 2.0])
    same(scores(ds.to_table(full_text_query=mm)), scores(theirs.to_table(full_text_query=lmm)))
    only = ds.to_table(full_text_query={"query": "fox", "columns": ["title"]})
    same(scores(only), scores(ds.to_table(full_text_query=MatchQuery("fox", "title"))))


def test_tokens_match_pylance_on_varied_text(tmp_path):
    """Tokenizer parity: every sentence becomes the same number of tokens in both libraries
    (pylance's docs file records it per document) and each token matches the same rows."""
    rng = random.Random(11)
    pieces = WORDS + ["Élan", "résumé", "naïveté", "İstanbul", "ÆSIR", "co-operate", "snake_case_name", "x" * 45,
                      "y" * 39, "1,000.5", "e-mail", "don't", "they're", "HELLO", "Ünïcödé", "ﬁnance", "straße",
                      "universities", "generously", "running", "flies", "ponies", "caresses"]
    sentences = [" ".join(rng.choice(pieces) for _ in range(rng.randint(1, 12))) for _ in range(10_000)]
    t = pa.table({"id": range(len(sentences)), "text": sentences})
    lance.write_dataset(t, str(tmp_path / "p")).create_scalar_index("text", "INVERTED")
    theirs = lance.dataset(str(tmp_path / "p"))
    import glob
    import os

    (docs_file,) = glob.glob(os.path.join(str(tmp_path / "p"), "_indices", "*", "part_0_docs.lance"))
    d = lance.file.LanceFileReader(docs_file).read_all().to_table()
    counts = dict(zip(d["_rowid"].to_pylist(), d["_num_tokens"].to_pylist()))
    for i, s in enumerate(sentences):
        assert len(tokenize(s)) == counts.get(i, 0), (s, tokenize(s))
    # Each token (analysed again as a query, the same way by both) finds the same rows.
    ours = lancelet.dataset(str(tmp_path / "p"))
    for tok in sorted({tok for s in sentences[:300] for tok in tokenize(s)}):
        want = theirs.to_table(full_text_query=tok, columns=["id"])
        same(scores(ours.to_table(full_text_query=tok, columns=["id"])), scores(want))


@pytest.mark.parametrize("language,words", [("French", "les chevaux mangeaient rapidement"), ("German", "die Häuser wurden gebaut")])
def test_stemming_in_other_languages_matches_pylance(tmp_path, language, words):
    t = pa.table({"id": range(2), "text": [words, "autre chose"]})
    lance.write_dataset(t, str(tmp_path / "p")).create_scalar_index("text", "INVERTED", language=language)
    theirs = lance.dataset(str(tmp_path / "p"))
    for tok in tokenize(words, language=language):
        assert theirs.to_table(full_text_query=tok, columns=["id"])["id"].to_pylist() == [0], tok


def test_hybrid_search_fuses_by_reciprocal_rank(tmp_path):
    import numpy as np

    rng = np.random.default_rng(2)
    n = 500
    vec = rng.random((n, 4), dtype=np.float32)
    t = pa.table({"id": range(n), "text": corpus(n, 7), "v": pa.FixedSizeListArray.from_arrays(pa.array(vec.ravel()), 4)})
    ds = lancelet.write_dataset(t, str(tmp_path / "d"))
    ds.create_scalar_index("text", "INVERTED")
    q = [0.5, 0.5, 0.5, 0.5]
    k = 20
    vside = ds.to_table(nearest={"column": "v", "q": q, "k": k}, columns=["id"])
    tside = ds.to_table(full_text_query="quick fox", limit=k, columns=["id"])
    want = {}
    for side in (vside["id"].to_pylist(), tside["id"].to_pylist()):
        for rank, i in enumerate(side, 1):
            want[i] = want.get(i, 0.0) + 1.0 / (60 + rank)
    got = ds.to_table(nearest={"column": "v", "q": q, "k": k}, full_text_query="quick fox", columns=["id"], limit=15)
    assert got.num_rows == 15
    rel = got["_relevance_score"].to_pylist()
    assert rel == sorted(rel, reverse=True)
    for i, r in zip(got["id"].to_pylist(), rel):
        assert abs(want[i] - r) < 1e-6
    best = sorted(want.values(), reverse=True)[:15]
    assert all(abs(a - b) < 1e-6 for a, b in zip(sorted(rel, reverse=True), best))
    dist = dict(zip(vside["id"].to_pylist(), vside["_distance"].to_pylist()))
    for i, d in zip(got["id"].to_pylist(), got["_distance"].to_pylist()):
        assert (d is None) == (i not in dist)
    lin = ds.to_table(nearest={"column": "v", "q": q, "k": k}, full_text_query="quick fox", fusion={"method": "linear"})
    assert lin["_relevance_score"].to_pylist() == sorted(lin["_relevance_score"].to_pylist(), reverse=True)
    with pytest.raises(InvalidArgumentError):
        ds.to_table(nearest={"column": "v", "q": q, "k": k}, full_text_query="fox", fusion={"method": "nope"})


def test_a_small_memory_budget_gives_the_same_results(tmp_path):
    a, b = make(lancelet, tmp_path / "a", n=5000), make(lancelet, tmp_path / "b", n=5000)
    a.create_scalar_index("text", "INVERTED")
    b.create_scalar_index("text", "INVERTED", memory_limit=1, num_workers=2)
    assert lancelet.dataset(str(tmp_path / "b")).index_statistics("text_idx")["indices"][0]["num_partitions"] != "1"
    for q in QUERIES:
        same(scores(a.to_table(full_text_query=q)), scores(b.to_table(full_text_query=q)))
        same(scores(lance.dataset(str(tmp_path / "b")).to_table(full_text_query=q)), scores(b.to_table(full_text_query=q)))


def test_stable_row_ids_and_cjk(tmp_path):
    t = pa.table({"id": range(4), "text": ["東京大学で勉強する", "京都の大学", "hello world", "東京タワー"]})
    ds = lancelet.write_dataset(t, str(tmp_path / "d"), enable_stable_row_ids=True)
    ds.create_scalar_index("text", "INVERTED", base_tokenizer="cjk", with_position=True)
    assert sorted(ds.to_table(full_text_query='"大学"')["id"].to_pylist()) == [0, 1]
    assert ds.to_table(full_text_query='"東京大学"')["id"].to_pylist() == [0]
    ds.delete("id = 0")
    assert ds.to_table(full_text_query='"大学"')["id"].to_pylist() == [1]
    assert tokenize("東京大学", base_tokenizer="cjk") == ["東京", "京大", "大学"]


def test_results_shape_limit_offset_columns_and_row_ids(tmp_path):
    ds = make(lancelet, tmp_path / "d")
    ds.create_scalar_index("text", "INVERTED")
    full = ds.to_table(full_text_query="fox")
    assert full.schema.field("_score").type == pa.float32()
    s = full["_score"].to_pylist()
    assert s == sorted(s, reverse=True)
    page = ds.to_table(full_text_query="fox", limit=5, offset=3, columns=["id"], with_row_id=True)
    assert page.column_names == ["id", "_score", "_rowid"]
    assert page["id"].to_pylist() == full["id"].to_pylist()[3:8]
    assert ds.to_table(full_text_query="the of").num_rows == 0
    assert ds.to_table(full_text_query="").num_rows == 0
    assert "text_idx" in ds.scanner(full_text_query="fox").explain_plan()


def test_bad_input_is_a_typed_error(tmp_path):
    ds = make(lancelet, tmp_path / "d")
    with pytest.raises(InvalidArgumentError, match="create_scalar_index"):
        ds.to_table(full_text_query="fox")
    with pytest.raises(InvalidArgumentError, match="INVERTED"):
        ds.create_scalar_index("id", "INVERTED")
    with pytest.raises(InvalidArgumentError, match="language"):
        ds.create_scalar_index("text", "INVERTED", language="Klingon")
    with pytest.raises(InvalidArgumentError):
        ds.create_scalar_index("text", "INVERTED", min_ngram_length=0, base_tokenizer="ngram")
    with pytest.raises(TypeError):
        ds.create_scalar_index("text", "INVERTED", stemmer=True)
    with pytest.raises(UnsupportedFeatureError):
        ds.create_scalar_index("text", "INVERTED", base_tokenizer="jieba/default")
    with pytest.raises(UnsupportedFeatureError):
        ds.create_scalar_index("text", "INVERTED", block_size=256)
    assert ds.list_indices() == []
    ds.create_scalar_index("text", "INVERTED")
    with pytest.raises(InvalidArgumentError, match="no full-text"):
        ds.to_table(full_text_query=MatchQuery("fox", "title"))
    with pytest.raises(InvalidArgumentError):
        ds.to_table(full_text_query=12)
    with pytest.raises(InvalidArgumentError):
        MatchQuery("fox", "text", operator="XOR")


def test_an_updated_row_with_a_stable_id_is_not_found_by_its_old_text(tmp_path):
    """With stable row ids an update moves the row (same id) to a new fragment; the index's
    entries for its old text must not answer for it (pylance returns nothing)."""
    t = pa.table({"id": range(6), "text": ["a dog", "cat nap", "bird", "cat", "cat food", "fish"]})
    uri = str(tmp_path / "d")
    ds = lancelet.write_dataset(t, uri, max_rows_per_file=2, enable_stable_row_ids=True)
    ds.create_scalar_index("text", "INVERTED")
    ds.update({"text": "'purple fox'"}, where="id = 4")
    for d in (lancelet.dataset(uri), lance.dataset(uri)):
        assert sorted(d.to_table(full_text_query="cat")["id"].to_pylist()) == [1, 3]
        assert d.to_table(full_text_query="purple")["id"].to_pylist() == [4]
    same(scores(lancelet.dataset(uri).to_table(full_text_query="cat")), scores(lance.dataset(uri).to_table(full_text_query="cat")))


def test_a_second_index_on_a_column_is_not_a_segment_of_the_first(tmp_path):
    ds = make(lancelet, tmp_path / "d")
    ds.create_scalar_index("text", "INVERTED")
    one = scores(ds.to_table(full_text_query="fox"))
    ds.create_scalar_index("text", "INVERTED", name="other")
    same(scores(ds.to_table(full_text_query="fox")), one)
    same(scores(lance.dataset(str(tmp_path / "d")).to_table(full_text_query="fox")), one)


def test_format_version_takes_pylances_spellings(tmp_path):
    ds = make(lancelet, tmp_path / "d", n=200)
    ds.create_scalar_index("text", "INVERTED", format_version="v1")
    assert ds.list_indices()[0]["type"] == "Inverted"
    same(scores(ds.to_table(full_text_query="fox")), scores(lance.dataset(str(tmp_path / "d")).to_table(full_text_query="fox")))


def test_progress_callback_reports_pylances_events(tmp_path):
    """An INVERTED build reports IndexProgress events as pylance names them: each stage
    starts, progresses and completes; tokenize_docs counts every live row."""
    from lancelet.progress import IndexProgress

    ds = lancelet.write_dataset(
        pa.table({"text": [f"fox {i}" for i in range(3000)]}), str(tmp_path / "d"), max_rows_per_file=1000
    )
    ds.delete("text = 'fox 7'")
    events: list = []
    ds.create_scalar_index("text", "INVERTED", progress_callback=events.append)
    assert all(isinstance(e, IndexProgress) for e in events)
    stages = [e.stage for e in events if e.event == "start"]
    assert stages == ["tokenize_docs", "write_metadata"]
    tok = [e for e in events if e.stage == "tokenize_docs"]
    assert tok[0].event == "start" and tok[-1].event == "complete"
    assert {e.total for e in tok} == {2999} and {e.unit for e in tok} == {"rows"}
    done = [e.completed for e in tok]
    assert done == sorted(done) and done[-1] == 2999 and tok[-1].fraction == 1.0
    with pytest.raises(InvalidArgumentError):
        ds.create_scalar_index("text", "INVERTED", progress_callback=3)


def test_index_statistics_report_pylances_params_and_counts(tmp_path):
    """index_statistics of an INVERTED index: params as a dict, num_tokens and num_docs, the
    same as pylance reports for the same parameters (indexes built by either library)."""
    uri = str(tmp_path / "d")
    lance.write_dataset(pa.table({"text": [f"the fox {i % 50}" for i in range(1000)]}), uri)
    lance.dataset(uri).create_scalar_index("text", "INVERTED", name="theirs", with_position=True, stem=False)
    lancelet.dataset(uri).create_scalar_index("text", "INVERTED", name="ours", with_position=True, stem=False)
    for lib in (lance, lancelet):
        ds = lib.dataset(uri)
        a, b = (ds.stats.index_stats(n)["indices"][0] for n in ("theirs", "ours"))
        assert isinstance(a["params"], dict) and isinstance(b["params"], dict)
        assert a["params"] == b["params"]
        assert (a["num_tokens"], a["num_docs"]) == (b["num_tokens"], b["num_docs"]) == (51, 1000)


# --- pylance's distributed build: create_scalar_index(index_uuid=, fragment_ids=) per part,
# merge_index_metadata, then a CreateIndex commit of an Index without details.

_DIST_TEXTS = ["lance database test", "full text search", "lance search text", "a b c", "lance lance",
               "x y", "search the lance", "text text text", "database of text", "nothing here"]


def _dist_build(builder, uri, iid, **params):
    ds = builder.dataset(uri)
    for f in ds.get_fragments():
        ds.create_scalar_index("text", "INVERTED", name="t_idx", replace=False, index_uuid=iid,
                               fragment_ids=[f.fragment_id], **params)
    return ds


@pytest.mark.parametrize("stager,merger,committer", [
    ("lancelet", "lancelet", "lancelet"), ("lancelet", "lancelet", "lance"), ("lance", "lancelet", "lancelet"),
    ("lancelet", "lance", "lance"),
])
@pytest.mark.parametrize("with_position", [False, True])
def test_distributed_build_scores_like_a_single_build(tmp_path, stager, merger, committer, with_position):
    """Parts staged by one library, merged by one and committed by one: both libraries
    search the result with the scores of a one-piece build."""
    import uuid

    libs = {"lance": lance, "lancelet": lancelet}
    table = pa.table({"id": range(len(_DIST_TEXTS)), "text": _DIST_TEXTS})
    ref_uri = str(tmp_path / "ref")
    ref = lance.write_dataset(table, ref_uri, max_rows_per_file=3)
    ref.create_scalar_index("text", "INVERTED", with_position=with_position)
    uri = str(tmp_path / "d")
    lance.write_dataset(table, uri, max_rows_per_file=3)
    iid = str(uuid.uuid4())
    _dist_build(libs[stager], uri, iid, with_position=with_position)
    assert libs[merger].dataset(uri).version == 1  # nothing is committed by the parts
    libs[merger].dataset(uri).merge_index_metadata(iid, index_type="INVERTED")
    c = libs[committer]
    ds = c.dataset(uri)
    frags = {f.fragment_id for f in ds.get_fragments()}
    index = importlib.import_module(f"{c.__name__}.dataset").Index(uuid=iid, name="t_idx", fields=[1], dataset_version=ds.version, fragment_ids=frags,
                            index_version=0)
    c.LanceDataset.commit(uri, c.LanceOperation.CreateIndex(new_indices=[index], removed_indices=[]),
                          read_version=ds.version)
    queries = ["lance", "text search", "database"] + (['"lance search"'] if with_position else [])
    for q in queries:
        want = dict(zip(*ref.to_table(full_text_query=q, columns=["id", "_score"]).to_pydict().values()))
        for lib in (lance, lancelet):
            got = dict(zip(*lib.dataset(uri).to_table(full_text_query=q, columns=["id", "_score"]).to_pydict().values()))
            assert got == pytest.approx(want, rel=1e-5), (lib.__name__, q)
    # The staged files are gone.
    staging = os.path.join(uri, "_indices", iid, "staging")
    assert not os.path.isdir(staging) or os.listdir(staging) == []


def test_distributed_build_refuses_bad_parts(tmp_path):
    import uuid

    uri = str(tmp_path / "d")
    ds = lancelet.write_dataset(pa.table({"id": range(4), "text": ["a b", "c d", "e f", "g h"]}), uri,
                                max_rows_per_file=2)
    with pytest.raises(InvalidArgumentError, match="not a UUID"):
        ds.create_scalar_index("text", "INVERTED", index_uuid="../x", fragment_ids=[0])
    with pytest.raises(InvalidArgumentError, match="not in this version"):
        ds.create_scalar_index("text", "INVERTED", index_uuid=str(uuid.uuid4()), fragment_ids=[99])
    iid = str(uuid.uuid4())
    with pytest.raises(InvalidArgumentError, match="no full-text index parts"):
        ds.merge_index_metadata(iid, "INVERTED")
    ds.create_scalar_index("text", "INVERTED", index_uuid=iid, fragment_ids=[0], stem=True)
    ds.create_scalar_index("text", "INVERTED", index_uuid=iid, fragment_ids=[1], stem=False)
    with pytest.raises(InvalidArgumentError, match="different parameters"):
        ds.merge_index_metadata(iid, "INVERTED")
    assert ds.version == 1
