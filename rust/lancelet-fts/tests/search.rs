//! Searches over built indexes agree with BM25 computed by hand over the raw corpus,
//! whatever the partitioning, format version, filter or query; damaged files are errors.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use futures::executor::block_on;
use lancelet_file::FileVersion;
use lancelet_fts::files::{metadata_file, partition_files, IndexFormat};
use lancelet_fts::search::{evaluate, search_top, top, ColumnSearch};
use lancelet_fts::{Error, FtsIndex, FtsQuery, Operator, Partition, PartitionBuilder, TokenizerConfig};
use lancelet_index::scalar::MemoryStore;
use proptest::prelude::*;

/// Lower-case words, no stemming or stop words: the tokens are the words.
fn plain() -> TokenizerConfig {
    TokenizerConfig {
        stem: false,
        remove_stop_words: false,
        with_position: true,
        ..TokenizerConfig::default()
    }
}

/// Builds an index over `docs` (row id = position) cut into partitions of `per_part` docs.
fn build(docs: &[String], per_part: usize, version: u32) -> MemoryStore {
    let store = MemoryStore::new();
    let cfg = plain();
    let format = IndexFormat {
        version,
        ..IndexFormat::default()
    };
    let mut ids = Vec::new();
    for (p, chunk) in docs.chunks(per_part.max(1)).enumerate() {
        let mut b = PartitionBuilder::new(cfg.build().unwrap_or_else(|e| unreachable!("{e}")), true);
        for (i, d) in chunk.iter().enumerate() {
            b.add((p * per_part + i) as u64, [d.as_str()])
                .unwrap_or_else(|e| unreachable!("{e}"));
        }
        if b.is_empty() {
            continue;
        }
        let sealed = b.seal(format.tail()).unwrap_or_else(|e| unreachable!("{e}"));
        for f in
            partition_files(p as u64, &sealed, true, &format, FileVersion::V2_0).unwrap_or_else(|e| unreachable!("{e}"))
        {
            store.insert(f.name, f.bytes);
        }
        ids.push(p as u64);
    }
    let md = metadata_file(&cfg, &ids, &format, FileVersion::V2_0).unwrap_or_else(|e| unreachable!("{e}"));
    store.insert(md.name, md.bytes);
    store
}

fn column(index: &FtsIndex) -> ColumnSearch {
    ColumnSearch {
        column: "text".into(),
        partitions: index.partitions.iter().map(Arc::clone).collect(),
        flat: None,
        analyzer: index.analyzer().unwrap_or_else(|e| unreachable!("{e}")),
        stats: index.stats(),
        with_position: true,
        indexed_rows: None,
    }
}

/// BM25 of every document for `terms` by the textbook formula. Documents before `split`
/// are the indexed ones, scored against their own statistics; the rest are unindexed,
/// scored against the statistics of the whole corpus (pylance's rule). A repeated term
/// counts once per occurrence.
fn naive(docs: &[String], split: usize, terms: &[&str], and: bool, keep: &dyn Fn(u64) -> bool) -> HashMap<u64, f32> {
    let toks: Vec<Vec<&str>> = docs.iter().map(|d| d.split_whitespace().collect()).collect();
    let stats = |upto: usize| {
        let part = &toks[..upto];
        let n = part.iter().filter(|t| !t.is_empty()).count() as f32;
        let total: usize = part.iter().map(Vec::len).sum();
        (n, total as f32 / n, part)
    };
    let mut out = HashMap::new();
    let distinct: HashSet<&str> = terms.iter().copied().collect();
    for (row, t) in toks.iter().enumerate() {
        let (n, avgdl, corpus) = stats(if row < split { split } else { toks.len() });
        let mut score = 0f32;
        let mut hits = HashSet::new();
        for term in terms {
            let tf = t.iter().filter(|w| *w == term).count() as f32;
            if tf == 0.0 {
                continue;
            }
            hits.insert(*term);
            let df = corpus.iter().filter(|d| d.contains(term)).count() as f32;
            let idf = ((n - df + 0.5) / (df + 0.5) + 1.0).ln();
            score += idf * 2.2 * tf / (tf + 1.2 * (0.25 + 0.75 * t.len() as f32 / avgdl));
        }
        if !hits.is_empty() && (!and || hits.len() == distinct.len()) && keep(row as u64) {
            out.insert(row as u64, score);
        }
    }
    out
}

const WORDS: [&str; 12] = [
    "fox", "dog", "cat", "bird", "runs", "jumps", "over", "under", "brown", "lazy", "quick", "red",
];

fn corpus() -> impl Strategy<Value = Vec<String>> {
    // Zipf-like: early words are far more common, so some posting lists pass 128 docs.
    let word = (0u32..1000).prop_map(|r| WORDS[((r * r) / 90_000).min(11) as usize]);
    proptest::collection::vec(proptest::collection::vec(word, 0..12).prop_map(|w| w.join(" ")), 1..400)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// The top `k` equal those of exhaustive BM25, with any partitioning, format version,
    /// operator, filter (standing for deletions and prefilters alike) and unindexed tail.
    #[test]
    fn top_k_equals_exhaustive_bm25(docs in corpus(), per_part in 1usize..300, version in 1u32..=3,
                                    q in proptest::collection::vec(0usize..12, 1..4), and in any::<bool>(),
                                    k in 1usize..30, modulo in 1u64..5, tail in 0usize..50) {
        let split = docs.len().saturating_sub(tail).max(1);
        let index = block_on(FtsIndex::open(&build(&docs[..split], per_part, version))).unwrap_or_else(|e| unreachable!("{e}"));
        let mut col = column(&index);
        if split < docs.len() {
            let mut b = PartitionBuilder::new(col.analyzer.clone(), true);
            for (i, d) in docs.iter().enumerate().skip(split) {
                b.add(i as u64, [d.as_str()]).unwrap_or_else(|e| unreachable!("{e}"));
            }
            if !b.is_empty() {
                let tail = IndexFormat::default().tail();
                let sealed = b.seal(tail).unwrap_or_else(|e| unreachable!("{e}"));
                col.flat = Some(Arc::new(Partition::from_sealed(sealed, tail).unwrap_or_else(|e| unreachable!("{e}"))));
            }
        }
        let terms: Vec<&str> = q.iter().map(|i| WORDS[*i]).collect();
        let keep = move |r: u64| r % modulo != 1;
        let query = FtsQuery::Match {
            column: None, terms: terms.join(" "), boost: 1.0, fuzziness: Some(0), max_expansions: 50,
            operator: if and { Operator::And } else { Operator::Or }, prefix_length: 0,
        };
        let cols = [col];
        let got = search_top(&query, &cols, &keep, 0, Some(k)).unwrap_or_else(|e| unreachable!("{e}"));
        // The fast path agrees with ranking every match.
        let all = top(evaluate(&query, &cols, &keep).unwrap_or_else(|e| unreachable!("{e}")), 0, Some(k));
        prop_assert_eq!(&got, &all);
        let want = top(naive(&docs, split, &terms, and, &keep), 0, Some(k));
        prop_assert_eq!(got.len(), want.len());
        for ((gr, gs), (wr, ws)) in got.iter().zip(&want) {
            // Equal scores may swap only among rows of (nearly) the same score.
            prop_assert!((gs - ws).abs() <= 1e-4 * ws.abs().max(1.0), "{gr}:{gs} vs {wr}:{ws}");
        }
    }

    /// A phrase matches exactly the documents holding its words consecutively.
    #[test]
    fn phrases_match_consecutive_words(docs in corpus(), version in 1u32..=3, a in 0usize..12, b in 0usize..12) {
        let index = block_on(FtsIndex::open(&build(&docs, 97, version))).unwrap_or_else(|e| unreachable!("{e}"));
        let q = FtsQuery::Phrase { column: None, terms: format!("{} {}", WORDS[a], WORDS[b]), slop: 0 };
        let got: HashSet<u64> = evaluate(&q, &[column(&index)], &|_| true).unwrap_or_else(|e| unreachable!("{e}")).into_keys().collect();
        let want: HashSet<u64> = docs.iter().enumerate().filter(|(_, d)| {
            let w: Vec<&str> = d.split_whitespace().collect();
            w.windows(2).any(|p| p[0] == WORDS[a] && p[1] == WORDS[b])
        }).map(|(i, _)| i as u64).collect();
        prop_assert_eq!(got, want);
    }
}

#[test]
fn fuzzy_terms_find_near_spellings() {
    let docs: Vec<String> = ["brown fox", "browm cow", "crown", "frown dog"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let index = block_on(FtsIndex::open(&build(&docs, 10, 2))).unwrap_or_else(|e| unreachable!("{e}"));
    let q = FtsQuery::Match {
        column: None,
        terms: "brown".into(),
        boost: 1.0,
        fuzziness: Some(1),
        max_expansions: 50,
        operator: Operator::Or,
        prefix_length: 1,
    };
    let rows: HashSet<u64> = evaluate(&q, &[column(&index)], &|_| true)
        .unwrap_or_else(|e| unreachable!("{e}"))
        .into_keys()
        .collect();
    // "crown" and "frown" differ from "brown" in the first letter, which prefix_length fixes.
    assert_eq!(rows, HashSet::from([0, 1]));
}

/// Every single-byte change to any index file is a `Corrupt` (or file-layer) error, or a
/// successful search; never a panic.
#[test]
fn damaged_files_are_errors_not_panics() {
    let docs: Vec<String> = (0..300)
        .map(|i| format!("fox {} dog {}", WORDS[i % 12], WORDS[(i * 7) % 12]))
        .collect();
    let store = build(&docs, 1000, 2);
    let mut errors = 0;
    for name in store.names() {
        let Some(bytes) = store.get(&name) else { continue };
        for at in (0..bytes.len()).step_by((bytes.len() / 64).max(1)) {
            let mut damaged = bytes.to_vec();
            damaged[at] ^= 0x5a;
            let copy = MemoryStore::new();
            for other in store.names() {
                if let Some(b) = store.get(&other) {
                    copy.insert(other.clone(), if other == name { damaged.clone() } else { b.to_vec() });
                }
            }
            match block_on(FtsIndex::open(&copy)) {
                Err(Error::Corrupt { .. } | Error::File(_) | Error::Unsupported(_) | Error::Arrow(_)) => errors += 1,
                Err(e) => unreachable!("{name}@{at}: unexpected error {e}"),
                Ok(index) => {
                    let q = FtsQuery::Phrase {
                        column: None,
                        terms: "fox dog".into(),
                        slop: 3,
                    };
                    if evaluate(&q, &[column(&index)], &|_| true).is_err() {
                        errors += 1;
                    }
                }
            }
        }
    }
    assert!(errors > 0);
}

/// On a corpus large enough for MaxScore to skip lists and blocks, the top `k` are those of
/// ranking every match, to the bit, for one-, two- and three-term queries and any `k`.
#[test]
fn pruned_top_k_equals_ranking_every_match() {
    let mut rng = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    // Zipf-like words over a 300-word vocabulary.
    let docs: Vec<String> = (0..20_000)
        .map(|_| {
            let n = 3 + next() % 20;
            (0..n)
                .map(|_| {
                    let r = (next() % 10_000) as f64 / 10_000.0;
                    format!("w{}", (300f64.powf(r * r) as u64))
                })
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect();
    let index = block_on(FtsIndex::open(&build(&docs, 7_000, 2))).unwrap_or_else(|e| unreachable!("{e}"));
    let cols = [column(&index)];
    for q in 0..60u64 {
        let terms: Vec<String> = (0..1 + q % 3)
            .map(|i| format!("w{}", (q * 7 + i * 13) % 40 + (q % 5) * 50))
            .collect();
        let query = FtsQuery::text(terms.join(" "));
        let k = [1, 10, 100][(q % 3) as usize];
        let keep = |r: u64| r % 11 != 3;
        let got = search_top(&query, &cols, &keep, 0, Some(k)).unwrap_or_else(|e| unreachable!("{e}"));
        let all = top(
            evaluate(&query, &cols, &keep).unwrap_or_else(|e| unreachable!("{e}")),
            0,
            Some(k),
        );
        assert_eq!(got, all, "{terms:?} k={k}");
    }
}

/// AND queries and phrases over long lists with a rare lead term (the lists probed block
/// by block) find what a full decode finds: AND = the OR matches holding every term, with
/// the same scores; a phrase = the documents holding its words consecutively.
#[test]
fn probing_long_lists_finds_what_a_full_decode_finds() {
    let mut rng = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let docs: Vec<String> = (0..30_000)
        .map(|_| {
            let n = 3 + next() % 25;
            (0..n)
                .map(|_| {
                    let r = (next() % 10_000) as f64 / 10_000.0;
                    format!("w{}", (2000f64.powf(r * r * r) as u64))
                })
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect();
    let index = block_on(FtsIndex::open(&build(&docs, 12_000, 3))).unwrap_or_else(|e| unreachable!("{e}"));
    let cols = [column(&index)];
    let words: Vec<HashSet<&str>> = docs.iter().map(|d| d.split_whitespace().collect()).collect();
    let keep = |r: u64| r % 13 != 5;
    for q in 0..40u64 {
        // A common word or two and a rarer one.
        let terms = [
            format!("w{}", q % 3),
            format!("w{}", 1 + q % 5),
            format!("w{}", 20 + q * 17 % 900),
        ];
        let terms: Vec<&str> = terms.iter().take(2 + (q % 2) as usize).map(String::as_str).collect();
        let text = terms.join(" ");
        let mk = |operator| FtsQuery::Match {
            column: None,
            terms: text.clone(),
            boost: 1.0,
            fuzziness: Some(0),
            max_expansions: 50,
            operator,
            prefix_length: 0,
        };
        let and = evaluate(&mk(Operator::And), &cols, &keep).unwrap_or_else(|e| unreachable!("{e}"));
        let or = evaluate(&mk(Operator::Or), &cols, &keep).unwrap_or_else(|e| unreachable!("{e}"));
        let want: HashMap<u64, f32> = or
            .into_iter()
            .filter(|(r, _)| terms.iter().all(|t| words[*r as usize].contains(t)))
            .collect();
        assert_eq!(and.len(), want.len(), "{text}");
        for (r, s) in &and {
            let w = want.get(r).copied().unwrap_or(f32::NAN);
            assert!((s - w).abs() <= 1e-6 * w.abs(), "{text}: row {r} {s} vs {w}");
        }
        let phrase = FtsQuery::Phrase {
            column: None,
            terms: format!("{} {}", terms[0], terms[terms.len() - 1]),
            slop: 0,
        };
        let all = evaluate(&phrase, &cols, &keep).unwrap_or_else(|e| unreachable!("{e}"));
        // The best k, found by checking positions best candidate first, are the best k of all.
        for (k, offset) in [(1, 0), (10, 3), (300, 0)] {
            let best = search_top(&phrase, &cols, &keep, offset, Some(k)).unwrap_or_else(|e| unreachable!("{e}"));
            assert_eq!(best, top(all.clone(), offset, Some(k)), "phrase top {k}");
        }
        let got: HashSet<u64> = all.into_keys().collect();
        let (a, b) = (terms[0], terms[terms.len() - 1]);
        let want: HashSet<u64> = docs
            .iter()
            .enumerate()
            .filter(|(i, d)| {
                keep(*i as u64)
                    && d.split_whitespace()
                        .collect::<Vec<_>>()
                        .windows(2)
                        .any(|p| p[0] == a && p[1] == b)
            })
            .map(|(i, _)| i as u64)
            .collect();
        assert_eq!(got, want, "phrase {a} {b}");
    }
}
