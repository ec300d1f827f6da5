//! Evaluating a query over the partitions of each column: every matching row with its
//! BM25 score. Scores are exact (no document is skipped on an estimate), so the top `k`
//! taken afterwards are the true top `k` whatever filter or deletions remove rows.

use std::cell::Cell;
use std::collections::HashMap;
use std::sync::Arc;

use fst::automaton::{Automaton, Levenshtein, Str};
use fst::{IntoStreamer, Streamer};

use crate::analyzer::Analyzer;
use crate::error::{Error, Result};
use crate::files::Partition;
use crate::lazy::{LazyPostings, Probe};
use crate::query::{auto_fuzziness, FtsQuery, Occur, Operator};
use crate::score::{Stats, TermScorer};

/// Everything searchable on one column: the partitions of its index segments, the
/// in-memory partition of the rows they do not cover, and the analyzer.
///
/// Scores follow pylance: indexed rows are scored against the statistics of the index
/// segments alone; unindexed rows against those statistics plus their own (documents,
/// tokens and document frequencies added up).
#[derive(Clone)]
pub struct ColumnSearch {
    /// The column.
    pub column: String,
    /// The index segments' partitions.
    pub partitions: Vec<Arc<Partition>>,
    /// The rows no segment covers, tokenized at query time.
    pub flat: Option<Arc<Partition>>,
    /// The analyzer queries are tokenized with.
    pub analyzer: Analyzer,
    /// The statistics of the index segments (deleted rows included, as in pylance).
    pub stats: Stats,
    /// Whether positions are kept (phrase queries need them).
    pub with_position: bool,
    /// Which rows the index segments may answer for (`None`: all they hold). With stable
    /// row ids an updated row keeps its id but moves to a fragment the segments do not
    /// cover: their entries for it are stale, and the unindexed partition has it now.
    pub indexed_rows: Option<Arc<dyn Fn(u64) -> bool + Send + Sync>>,
}

impl std::fmt::Debug for ColumnSearch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ColumnSearch")
            .field("column", &self.column)
            .field("partitions", &self.partitions.len())
            .field("flat", &self.flat.is_some())
            .field("stats", &self.stats)
            .field("with_position", &self.with_position)
            .field("indexed_rows", &self.indexed_rows.is_some())
            .finish()
    }
}

impl ColumnSearch {
    /// Whether a row found in a partition may be returned from it.
    fn answers(&self, flat: bool, row: u64) -> bool {
        flat || self.indexed_rows.as_ref().is_none_or(|ok| ok(row))
    }

    /// Every partition to search, with whether it is the unindexed one.
    fn all(&self) -> impl Iterator<Item = (&Arc<Partition>, bool)> {
        self.partitions
            .iter()
            .map(|p| (p, false))
            .chain(self.flat.iter().map(|p| (p, true)))
    }

    /// The statistics rows of a partition are scored against.
    fn stats_for(&self, flat: bool) -> Stats {
        let mut s = self.stats;
        if let (true, Some(p)) = (flat, &self.flat) {
            s.add(Stats {
                num_docs: p.num_docs() as u64,
                total_tokens: p.total_tokens,
            });
        }
        s
    }

    /// The documents holding `token`, as rows of a partition see it.
    fn doc_freq(&self, token: &str, flat: bool) -> u64 {
        let count = |p: &Partition| p.token_id(token).map_or(0, |id| u64::from(p.lengths[id as usize]));
        let indexed: u64 = self.partitions.iter().map(|p| count(p)).sum();
        match (flat, &self.flat) {
            (true, Some(p)) => indexed + count(p),
            _ => indexed,
        }
    }

    /// A scorer for `token` in a partition.
    fn scorer(&self, token: &str, flat: bool, boost: f32) -> TermScorer {
        TermScorer::new(self.doc_freq(token, flat), self.stats_for(flat), boost)
    }
}

/// Matching rows and their scores.
pub type Hits = HashMap<u64, f32>;

/// Evaluates `query` over `columns` (every one for a match or phrase without a column). A
/// row is a candidate only if `keep(row_id)`.
pub fn evaluate(query: &FtsQuery, columns: &[ColumnSearch], keep: &(dyn Fn(u64) -> bool + Sync)) -> Result<Hits> {
    match query {
        FtsQuery::Match {
            column,
            terms,
            boost,
            fuzziness,
            max_expansions,
            operator,
            prefix_length,
        } => {
            let mut out = Hits::new();
            for c in pick(columns, column.as_deref())? {
                let hits = match_column(
                    c,
                    terms,
                    *boost,
                    *fuzziness,
                    *max_expansions,
                    *operator,
                    *prefix_length,
                    keep,
                )?;
                max_into(&mut out, hits);
            }
            Ok(out)
        }
        FtsQuery::Phrase { column, terms, slop } => {
            let mut out = Hits::new();
            for c in pick(columns, column.as_deref())? {
                max_into(&mut out, phrase_column(c, terms, *slop, keep, None)?);
            }
            Ok(out)
        }
        FtsQuery::MultiMatch {
            query,
            columns: names,
            boosts,
            operator,
        } => {
            let mut out = Hits::new();
            for (i, name) in names.iter().enumerate() {
                let boost = boosts.as_ref().and_then(|b| b.get(i)).copied().unwrap_or(1.0);
                for c in pick(columns, Some(name))? {
                    max_into(
                        &mut out,
                        match_column(c, query, boost, Some(0), 50, *operator, 0, keep)?,
                    );
                }
            }
            Ok(out)
        }
        FtsQuery::Boost {
            positive,
            negative,
            negative_boost,
        } => {
            let mut pos = evaluate(positive, columns, keep)?;
            let neg = evaluate(negative, columns, keep)?;
            for (row, score) in pos.iter_mut() {
                if let Some(n) = neg.get(row) {
                    *score -= negative_boost * n;
                }
            }
            Ok(pos)
        }
        FtsQuery::Boolean(clauses) => {
            let mut must: Option<Hits> = None;
            let mut should = Hits::new();
            let mut excluded: Vec<Hits> = Vec::new();
            for (occur, q) in clauses {
                let hits = evaluate(q, columns, keep)?;
                match occur {
                    Occur::Must => {
                        must = Some(match must.take() {
                            None => hits,
                            Some(mut m) => {
                                m.retain(|r, _| hits.contains_key(r));
                                for (r, s) in m.iter_mut() {
                                    *s += hits.get(r).copied().unwrap_or(0.0);
                                }
                                m
                            }
                        })
                    }
                    Occur::Should => add_into(&mut should, hits),
                    Occur::MustNot => excluded.push(hits),
                }
            }
            let mut out = match must {
                Some(mut m) => {
                    for (r, s) in m.iter_mut() {
                        *s += should.get(r).copied().unwrap_or(0.0);
                    }
                    m
                }
                None => should,
            };
            for ex in excluded {
                out.retain(|r, _| !ex.contains_key(r));
            }
            Ok(out)
        }
    }
}

/// Merges the hits of one more column: a row keeps its best column's score (pylance).
fn max_into(out: &mut Hits, hits: Hits) {
    if out.is_empty() {
        *out = hits;
        return;
    }
    for (r, s) in hits {
        let e = out.entry(r).or_insert(s);
        *e = e.max(s);
    }
}

fn add_into(out: &mut Hits, hits: Hits) {
    if out.is_empty() {
        *out = hits;
        return;
    }
    for (r, s) in hits {
        *out.entry(r).or_insert(0.0) += s;
    }
}

fn pick<'a>(columns: &'a [ColumnSearch], name: Option<&str>) -> Result<Vec<&'a ColumnSearch>> {
    match name {
        None => {
            if columns.is_empty() {
                return Err(Error::InvalidArgument(
                    "full-text search needs a full-text (INVERTED) index; create one with \
                     create_scalar_index(column, \"INVERTED\")"
                        .into(),
                ));
            }
            Ok(columns.iter().collect())
        }
        Some(n) => columns.iter().find(|c| c.column == n).map(|c| vec![c]).ok_or_else(|| {
            Error::InvalidArgument(format!(
                "column {n:?} has no full-text (INVERTED) index; create one with \
                     create_scalar_index({n:?}, \"INVERTED\")"
            ))
        }),
    }
}

fn expand(
    c: &ColumnSearch,
    token: &str,
    fuzziness: u32,
    max_expansions: usize,
    prefix_length: u32,
) -> Result<Vec<String>> {
    if fuzziness == 0 {
        return Ok(vec![token.to_string()]);
    }
    let prefix: String = token.chars().take(prefix_length as usize).collect();
    let lev =
        Levenshtein::new(token, fuzziness).map_err(|e| Error::InvalidArgument(format!("fuzzy term {token:?}: {e}")))?;
    let auto = lev.intersection(Str::new(&prefix).starts_with());
    let mut found: Vec<String> = Vec::new();
    for (p, _) in c.all() {
        let mut s = p.tokens.search(&auto).into_stream();
        while let Some((k, _)) = s.next() {
            if let Ok(t) = std::str::from_utf8(k) {
                found.push(t.to_string());
            }
        }
    }
    found.sort_unstable();
    found.dedup();
    // The exact token first, then the others in dictionary order, up to the limit.
    if let Some(i) = found.iter().position(|t| t == token) {
        let t = found.remove(i);
        found.insert(0, t);
    }
    found.truncate(max_expansions.max(1));
    Ok(found)
}

#[allow(clippy::too_many_arguments, reason = "the fields of a match query, passed through")]
fn match_column(
    c: &ColumnSearch,
    text: &str,
    boost: f32,
    fuzziness: Option<u32>,
    max_expansions: usize,
    operator: Operator,
    prefix_length: u32,
    keep: &(dyn Fn(u64) -> bool + Sync),
) -> Result<Hits> {
    let mut out = Hits::new();
    match_into(
        c,
        text,
        boost,
        fuzziness,
        max_expansions,
        operator,
        prefix_length,
        keep,
        None,
        &mut |row, s| {
            *out.entry(row).or_insert(0.0) += s;
        },
    )?;
    Ok(out)
}

/// Scores every document matching a match query, handing `(row id, score)` to `sink`
/// (each document once per partition).
#[allow(clippy::too_many_arguments, reason = "the fields of a match query, passed through")]
fn match_into(
    c: &ColumnSearch,
    text: &str,
    boost: f32,
    fuzziness: Option<u32>,
    max_expansions: usize,
    operator: Operator,
    prefix_length: u32,
    keep: &(dyn Fn(u64) -> bool + Sync),
    floor: Option<&Cell<f32>>,
    sink: &mut dyn FnMut(u64, f32),
) -> Result<()> {
    let mut analyzer = c.analyzer.clone();
    // A query term repeated counts once per occurrence, as in pylance ("fox fox" scores
    // twice "fox"); AND needs each distinct term.
    let mut tokens: Vec<(String, u32)> = Vec::new();
    for t in analyzer.tokens(text) {
        match tokens.iter_mut().find(|(x, _)| *x == t) {
            Some((_, n)) => *n += 1,
            None => tokens.push((t, 1)),
        }
    }
    let mut groups = Vec::with_capacity(tokens.len());
    for (t, times) in &tokens {
        let f = fuzziness.unwrap_or_else(|| auto_fuzziness(t.chars().count()));
        groups.push((expand(c, t, f, max_expansions, prefix_length)?, *times));
    }
    if groups.is_empty() {
        return Ok(());
    }
    // Which groups matched each doc: AND needs all (a group counts once); with more than 64
    // groups the rest count as the 64th.
    let need = groups.len().min(64) as u32;
    for (p, flat) in c.all() {
        let n = p.num_docs();
        // The query's tokens in this partition: (group bit, times, scorer, token id).
        let mut terms = Vec::new();
        for (gi, (group, times)) in groups.iter().enumerate() {
            let bit = 1u64 << gi.min(63);
            for token in group {
                let Some(id) = p.token_id(token) else { continue };
                terms.push((bit, *times, c.scorer(token, flat, boost), id));
            }
        }
        let mut emit = |d: u32, score: f32, bits: u64| {
            if operator == Operator::And && bits.count_ones() < need {
                return;
            }
            let row = p.row_ids[d as usize];
            if c.answers(flat, row) && keep(row) {
                sink(row, score);
            }
        };
        if operator == Operator::And {
            // Every group must match: a partition missing one has no match; with one list
            // per group, walk the shortest and probe the others.
            let present = terms.iter().fold(0u64, |acc, t| acc | t.0);
            if present.count_ones() < need {
                continue;
            }
            if terms.len() == groups.len() {
                intersect(p, &terms, &mut emit)?;
                continue;
            }
        }
        // Every posting list, decoded.
        let mut lists = Vec::with_capacity(terms.len());
        for (bit, times, scorer, id) in terms {
            let (docs, freqs) = p.postings_of(id)?;
            lists.push((bit, times, scorer, docs, freqs, id));
        }
        let total: usize = lists.iter().map(|l| l.3.len()).sum();
        if let (Operator::Or, Some(theta)) = (operator, floor) {
            max_score(p, &lists, theta, &mut emit);
            continue;
        }
        if total.saturating_mul(16) < n {
            // Few postings: sort them by document instead of touching an array of every
            // document (a stable sort keeps each document's terms in query order, so the
            // sum is the same as below, to the bit).
            let mut e: Vec<(u32, f32, u64)> = Vec::with_capacity(total);
            for (bit, times, scorer, docs, freqs, _) in &lists {
                for (d, f) in docs.iter().zip(freqs) {
                    let s = scorer.score(*f, p.num_tokens[*d as usize]);
                    for _ in 0..*times {
                        e.push((*d, s, *bit));
                    }
                }
            }
            e.sort_by_key(|x| x.0);
            let mut i = 0;
            while i < e.len() {
                let (d, mut score, mut bits) = e[i];
                i += 1;
                while i < e.len() && e[i].0 == d {
                    score += e[i].1;
                    bits |= e[i].2;
                    i += 1;
                }
                emit(d, score, bits);
            }
            continue;
        }
        let mut score = vec![0f32; n];
        let mut matched = vec![0u64; n];
        for (bit, times, scorer, docs, freqs, _) in &lists {
            for (d, f) in docs.iter().zip(freqs) {
                let di = *d as usize;
                matched[di] |= bit;
                let s = scorer.score(*f, p.num_tokens[di]);
                for _ in 0..*times {
                    score[di] += s;
                }
            }
        }
        for (d, bits) in matched.iter().enumerate() {
            if *bits != 0 {
                emit(d as u32, score[d], *bits);
            }
        }
    }
    Ok(())
}

/// One decoded posting list of a query: the group bit, how often the term occurs in the
/// query, its scorer, doc ids, frequencies and token id.
type PostingList = (u64, u32, TermScorer, Vec<u32>, Vec<u32>, u32);

/// The documents holding every term (one per group), scored in query order as the
/// exhaustive path scores them: the rarest term's list is decoded and walked, the others
/// are probed block by block ([`LazyPostings`]).
fn intersect(p: &Partition, terms: &[(u64, u32, TermScorer, u32)], emit: &mut dyn FnMut(u32, f32, u64)) -> Result<()> {
    let Some(lead) = (0..terms.len()).min_by_key(|i| p.lengths.get(terms[*i].3 as usize).copied().unwrap_or(0)) else {
        return Ok(());
    };
    let (docs, freqs) = p.postings_of(terms[lead].3)?;
    let mut others = Vec::with_capacity(terms.len());
    for (i, t) in terms.iter().enumerate() {
        if i != lead {
            others.push((i, LazyPostings::new(p, t.3)?));
        }
    }
    let bits = terms.iter().fold(0u64, |acc, t| acc | t.0);
    let mut freq = vec![0u32; terms.len()];
    'docs: for (li, d) in docs.iter().enumerate() {
        freq[lead] = freqs[li];
        for (i, list) in &mut others {
            match list.probe(*d)? {
                Probe::At(j) => freq[*i] = list.freqs[j],
                Probe::Absent => continue 'docs,
                Probe::End => break 'docs,
            }
        }
        let dl = p.num_tokens[*d as usize];
        let mut score = 0f32;
        for (t, f) in terms.iter().zip(&freq) {
            let s = t.2.score(*f, dl);
            for _ in 0..t.1 {
                score += s;
            }
        }
        emit(*d, score, bits);
    }
    Ok(())
}

/// Top-k of an OR match by MaxScore (Turtle and Flood): lists sorted by their best possible
/// score; while the lists whose bounds add up to less than the current `k`-th score
/// (`theta`) cannot lift a document into the top on their own, documents are drawn only from
/// the others and the rest are probed by binary search, skipping documents whose bound
/// falls short. With one list left to draw from, whole blocks whose impact bound falls short
/// are skipped. Every emitted document's score is summed in query order, as the exhaustive
/// path sums it, so results are identical to the bit.
fn max_score(p: &Partition, lists: &[PostingList], theta: &Cell<f32>, emit: &mut dyn FnMut(u32, f32, u64)) {
    const BLOCK: usize = crate::codec::BLOCK;
    // A bound computed in f32 may round below a score computed differently: keep a margin.
    let margin = |x: f32| x * 1.0001 + 1e-6;
    struct L<'a> {
        list: &'a PostingList,
        at: usize,
        blocks: Option<Vec<f32>>,
        ub: f32,
    }
    let mut ls: Vec<(usize, L)> = lists
        .iter()
        .enumerate()
        .map(|(i, l)| {
            let weight = l.2.upper_bound() * l.1 as f32;
            let blocks = p
                .block_bounds(l.5, l.2.avgdl())
                .map(|b| b.into_iter().map(|f| margin(f * weight)).collect::<Vec<_>>());
            let ub = blocks
                .as_ref()
                .map_or(margin(weight), |b| b.iter().copied().fold(0f32, f32::max));
            (
                i,
                L {
                    list: l,
                    at: 0,
                    blocks,
                    ub,
                },
            )
        })
        .collect();
    ls.sort_by(|a, b| a.1.ub.total_cmp(&b.1.ub));
    let mut prefix = Vec::with_capacity(ls.len());
    let mut acc = 0f32;
    for (_, l) in &ls {
        acc += l.ub;
        prefix.push(acc);
    }
    // Per list (in query order): this document's term score, when it holds the term.
    let mut found: Vec<Option<f32>> = vec![None; lists.len()];
    loop {
        let th = theta.get();
        let e = prefix.partition_point(|s| *s < th);
        if e >= ls.len() {
            return;
        }
        let below = if e > 0 { prefix[e - 1] } else { 0.0 };
        if e + 1 == ls.len() {
            // One list to draw from: skip its blocks that cannot reach theta.
            let l = &mut ls[e].1;
            if let Some(blocks) = &l.blocks {
                let mut b = l.at / BLOCK;
                while b < blocks.len() && blocks[b] + below < th {
                    b += 1;
                }
                l.at = l.at.max(b * BLOCK);
            }
        }
        let Some(d) = ls[e..].iter().filter_map(|(_, l)| l.list.3.get(l.at).copied()).min() else {
            return;
        };
        found.iter_mut().for_each(|f| *f = None);
        let mut bits = 0u64;
        let mut partial = 0f32;
        for (i, l) in ls[e..].iter_mut() {
            if l.list.3.get(l.at) == Some(&d) {
                let s = l.list.2.score(l.list.4[l.at], p.num_tokens[d as usize]);
                found[*i] = Some(s);
                partial += s * l.list.1 as f32;
                bits |= l.list.0;
                l.at += 1;
            }
        }
        let mut pruned = false;
        for j in (0..e).rev() {
            if partial + prefix[j] < th {
                pruned = true;
                break;
            }
            let (i, l) = &mut ls[j];
            let docs = &l.list.3;
            l.at += docs[l.at..].partition_point(|x| *x < d);
            if docs.get(l.at) == Some(&d) {
                let s = l.list.2.score(l.list.4[l.at], p.num_tokens[d as usize]);
                found[*i] = Some(s);
                partial += s * l.list.1 as f32;
                bits |= l.list.0;
                l.at += 1;
            }
        }
        if pruned {
            continue;
        }
        let mut score = 0f32;
        for (i, f) in found.iter().enumerate() {
            if let Some(s) = f {
                for _ in 0..lists[i].1 {
                    score += s;
                }
            }
        }
        emit(d, score, bits);
    }
}

/// The best `limit` rows after `offset` (all when `None`), by score descending and row id
/// ascending: [`top`] of [`evaluate`], without holding every match when the query is a
/// match on one column.
pub fn search_top(
    query: &FtsQuery,
    columns: &[ColumnSearch],
    keep: &(dyn Fn(u64) -> bool + Sync),
    offset: usize,
    limit: Option<usize>,
) -> Result<Vec<(u64, f32)>> {
    if let (
        Some(limit),
        FtsQuery::Match {
            column,
            terms,
            boost,
            fuzziness,
            max_expansions,
            operator,
            prefix_length,
        },
    ) = (limit, query)
    {
        let cols = pick(columns, column.as_deref())?;
        if let [c] = cols[..] {
            let want = offset.saturating_add(limit);
            let mut best = Best::new(want);
            let theta = Cell::new(f32::NEG_INFINITY);
            match_into(
                c,
                terms,
                *boost,
                *fuzziness,
                *max_expansions,
                *operator,
                *prefix_length,
                // `keep` (deletions, a prefilter) is asked only about rows good enough to
                // enter the best so far: most rows never are.
                &|_| true,
                Some(&theta),
                &mut |r, s| {
                    if best.admits(r, s) && keep(r) {
                        best.push(r, s);
                        if let Some((fs, _)) = best.floor {
                            theta.set(fs);
                        }
                    }
                },
            )?;
            return Ok(best.into_sorted().into_iter().skip(offset).collect());
        }
    }
    if let (Some(limit), FtsQuery::Phrase { column, terms, slop }) = (limit, query) {
        // Each column's best are enough: a row's score is its best column's.
        let want = offset.saturating_add(limit);
        let mut out = Hits::new();
        for c in pick(columns, column.as_deref())? {
            max_into(&mut out, phrase_column(c, terms, *slop, keep, Some(want))?);
        }
        return Ok(top(out, offset, Some(limit)));
    }
    Ok(top(evaluate(query, columns, keep)?, offset, limit))
}

/// The best `k` of a stream of `(row, score)`: kept in a buffer cut back to `k` (by
/// selection) whenever it doubles, below a threshold that only rises.
struct Best {
    k: usize,
    rows: Vec<(u64, f32)>,
    floor: Option<(f32, u64)>,
}

fn better(a: &(u64, f32), b: &(u64, f32)) -> std::cmp::Ordering {
    b.1.total_cmp(&a.1).then(a.0.cmp(&b.0))
}

impl Best {
    fn new(k: usize) -> Self {
        Self {
            k,
            rows: Vec::with_capacity(2 * k.min(1 << 16) + 1),
            floor: None,
        }
    }

    /// Whether `(row, score)` would be kept now.
    fn admits(&self, row: u64, score: f32) -> bool {
        self.k > 0
            && self
                .floor
                .is_none_or(|(fs, fr)| better(&(row, score), &(fr, fs)) == std::cmp::Ordering::Less)
    }

    fn push(&mut self, row: u64, score: f32) {
        if !self.admits(row, score) {
            return;
        }
        self.rows.push((row, score));
        if self.rows.len() >= 2 * self.k {
            self.rows.select_nth_unstable_by(self.k - 1, better);
            self.rows.truncate(self.k);
            let (r, s) = self.rows[self.k - 1];
            let worst = self.rows.iter().copied().max_by(better).unwrap_or((r, s));
            self.floor = Some((worst.1, worst.0));
        }
    }

    fn into_sorted(mut self) -> Vec<(u64, f32)> {
        self.rows.sort_unstable_by(better);
        self.rows.truncate(self.k);
        self.rows
    }
}

/// The rows of `c` matching a phrase, with their scores (the sum of the terms' scores, as
/// pylance scores a phrase). With `want`, only enough to hold the best `want`: a
/// document's score needs no positions, so candidates are ranked first and their positions
/// checked best first, a chunk at a time, until `want` of them match.
fn phrase_column(
    c: &ColumnSearch,
    text: &str,
    slop: u32,
    keep: &(dyn Fn(u64) -> bool + Sync),
    want: Option<usize>,
) -> Result<Hits> {
    if !c.with_position {
        return Err(Error::InvalidArgument(format!(
            "position is not found but required for phrase queries: the index on {:?} has no token \
             positions; rebuild it with with_position=True",
            c.column
        )));
    }
    let mut analyzer = c.analyzer.clone();
    let mut terms: Vec<(String, u32)> = Vec::new();
    analyzer.for_each(text, |t, p| terms.push((t.to_string(), p)));
    let mut out = Hits::new();
    if terms.is_empty() {
        return Ok(out);
    }
    'parts: for (p, flat) in c.all() {
        let scorers: Vec<TermScorer> = terms.iter().map(|(t, _)| c.scorer(t, flat, 1.0)).collect();
        let Some(pos_col) = &p.positions else { continue };
        // The documents holding every term: the rarest term's list walked, the others probed
        // block by block.
        let mut lists = Vec::with_capacity(terms.len());
        for (t, _) in &terms {
            let Some(id) = p.token_id(t) else { continue 'parts };
            lists.push((id, LazyPostings::new(p, id)?));
        }
        let lead = (0..lists.len()).min_by_key(|i| lists[*i].1.len()).unwrap_or(0);
        lists[lead].1.decode_all()?;
        // Candidates (row, score), and per term each candidate's index in its list.
        let mut cands: Vec<(u64, f32)> = Vec::new();
        let mut idx: Vec<Vec<usize>> = vec![Vec::new(); lists.len()];
        let mut found = vec![0usize; lists.len()];
        'docs: for li in 0..lists[lead].1.len() {
            let d = lists[lead].1.docs[li];
            for (i, (_, l)) in lists.iter_mut().enumerate() {
                found[i] = if i == lead {
                    li
                } else {
                    match l.probe(d)? {
                        Probe::At(j) => j,
                        Probe::Absent => continue 'docs,
                        Probe::End => break 'docs,
                    }
                };
            }
            let (Some(row), Some(dl)) = (p.row_ids.get(d as usize), p.num_tokens.get(d as usize)) else {
                return Err(Error::corrupt("posting list", "a doc id past the docs file"));
            };
            if !c.answers(flat, *row) || !keep(*row) {
                continue;
            }
            let mut score = 0f32;
            for (ti, (_, l)) in lists.iter().enumerate() {
                score += scorers[ti].score(l.freqs[found[ti]], *dl);
            }
            cands.push((*row, score));
            for (i, j) in found.iter().enumerate() {
                idx[i].push(*j);
            }
        }
        // Best first when only the best are wanted (each chunk selected from the rest, not
        // the whole list sorted); positions a chunk at a time.
        let mut order: Vec<usize> = (0..cands.len()).collect();
        let chunk = if want.is_some() { 256 } else { cands.len().max(1) };
        let mut matched = 0usize;
        let mut scratch = (Vec::new(), Vec::new());
        let mut rest: &mut [usize] = &mut order;
        while !rest.is_empty() {
            if want.is_some_and(|k| matched >= k) {
                break;
            }
            let n = chunk.min(rest.len());
            if n < rest.len() {
                rest.select_nth_unstable_by(n - 1, |a, b| better(&cands[*a], &cands[*b]));
            }
            let (part, tail) = std::mem::take(&mut rest).split_at_mut(n);
            rest = tail;
            // In list order (candidates were found in doc order, so indexes ascend).
            part.sort_unstable();
            let mut per_term = Vec::with_capacity(lists.len());
            for ((id, l), idx) in lists.iter().zip(&idx) {
                let wanted: Vec<usize> = part.iter().map(|ci| idx[*ci]).collect();
                per_term.push(pos_col.of_token(*id, &l.freqs, &wanted)?);
            }
            for (k, ci) in part.iter().enumerate() {
                let lists_at: Vec<&[u32]> = per_term.iter().map(|t| t[k].as_slice()).collect();
                if phrase_at(&lists_at, &terms, slop, &mut scratch) {
                    let (row, score) = cands[*ci];
                    *out.entry(row).or_insert(0.0) += score;
                    matched += 1;
                }
            }
        }
    }
    Ok(out)
}

/// Whether the terms occur in order, each term at its query offset from the term before
/// plus at most `slop` extra positions (pylance counts the slop per neighbouring pair:
/// slop 1 matches `a x b x c` for "a b c"). Every placement is tried, not only the first
/// occurrence of each term.
fn phrase_at(lists: &[&[u32]], terms: &[(String, u32)], slop: u32, scratch: &mut (Vec<u32>, Vec<u32>)) -> bool {
    let (reach, next) = scratch;
    reach.clear();
    reach.extend_from_slice(lists[0]);
    for (i, list) in lists.iter().enumerate().skip(1) {
        let gap = terms[i].1 - terms[i - 1].1;
        next.clear();
        // `q` is reachable when some reachable `p` has p + gap <= q <= p + gap + slop.
        let mut j = 0;
        for &q in *list {
            let Some(hi) = q.checked_sub(gap) else { continue };
            let lo = hi.saturating_sub(slop);
            j += reach[j..].partition_point(|p| *p < lo);
            if reach.get(j).is_some_and(|p| *p <= hi) {
                next.push(q);
            }
        }
        if next.is_empty() {
            return false;
        }
        std::mem::swap(reach, next);
    }
    true
}

/// The best `limit` rows (all when `None`) after skipping `offset`, by score descending
/// and row id ascending among equal scores.
pub fn top(hits: Hits, offset: usize, limit: Option<usize>) -> Vec<(u64, f32)> {
    let mut v: Vec<(u64, f32)> = hits.into_iter().collect();
    if let Some(l) = limit {
        let want = offset.saturating_add(l);
        if want < v.len() {
            v.select_nth_unstable_by(want, better);
            v.truncate(want);
        }
    }
    v.sort_unstable_by(better);
    v.into_iter().skip(offset).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phrase_positions_follow_the_query_offsets_within_the_slop() {
        let t = |o: &[u32]| o.iter().map(|p| (String::new(), *p)).collect::<Vec<_>>();
        let at = |lists: &[&[u32]], offsets: &[u32], slop| phrase_at(lists, &t(offsets), slop, &mut Default::default());
        assert!(at(&[&[3], &[4]], &[0, 1], 0));
        assert!(!at(&[&[3], &[5]], &[0, 1], 0));
        assert!(at(&[&[3], &[5]], &[0, 1], 1));
        // A stop word removed from the query leaves a gap the document must have too.
        assert!(at(&[&[3], &[5]], &[0, 2], 0));
        assert!(!at(&[&[5], &[3]], &[0, 1], 5));
        // The slop is per neighbouring pair, not in all.
        assert!(at(&[&[0], &[2], &[4]], &[0, 1, 2], 1));
        assert!(!at(&[&[0], &[3], &[4]], &[0, 1, 2], 1));
        // The first occurrence of the middle term is not always the one that works.
        assert!(at(&[&[2], &[3, 4], &[6]], &[0, 1, 2], 1));
    }

    #[test]
    fn best_keeps_what_a_full_sort_keeps() {
        let mut rng = 12345u64;
        let mut all = Vec::new();
        let mut best = Best::new(7);
        for row in 0..5000u64 {
            rng = rng.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let score = ((rng >> 40) % 50) as f32; // many ties
            all.push((row, score));
            best.push(row, score);
        }
        all.sort_unstable_by(better);
        all.truncate(7);
        assert_eq!(best.into_sorted(), all);
    }

    #[test]
    fn top_breaks_ties_by_row_id_and_applies_offset() {
        let hits: Hits = [(5, 1.0), (3, 1.0), (9, 2.0), (1, 0.5)].into_iter().collect();
        assert_eq!(top(hits.clone(), 0, Some(2)), vec![(9, 2.0), (3, 1.0)]);
        assert_eq!(top(hits, 1, Some(2)), vec![(3, 1.0), (5, 1.0)]);
    }
}
