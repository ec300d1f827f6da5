//! Building an index: documents in, partitions of bounded size out.
//!
//! A [`PartitionBuilder`] tokenizes documents and keeps their postings in memory; when
//! [`PartitionBuilder::memory_bytes`] passes the caller's budget the caller seals it into a
//! [`SealedPartition`] (the three files of one partition) and starts another. Partitions
//! are independent (each numbers its own documents), so a corpus of any size is built in
//! the memory of one partition per worker, and several workers build side by side.

use std::collections::HashMap;

use crate::analyzer::Analyzer;
use crate::codec::{self, competitive, encode_impact, length_code, Tail, BLOCK, IMPACT_GROUP};
use crate::error::{Error, Result};
use crate::score::{block_max_factor, idf, K1};

/// The postings of one token while building.
#[derive(Debug, Default, Clone)]
pub(crate) struct TermPostings {
    pub docs: Vec<u32>,
    pub freqs: Vec<u32>,
    /// Positions of every (doc, occurrence), doc by doc (when positions are kept).
    pub positions: Vec<u32>,
}

/// Accumulates the postings of one partition.
#[derive(Debug)]
pub struct PartitionBuilder {
    analyzer: Analyzer,
    with_position: bool,
    ids: HashMap<String, u32>,
    terms: Vec<TermPostings>,
    row_ids: Vec<u64>,
    num_tokens: Vec<u32>,
    total_tokens: u64,
    bytes: usize,
    /// Per document: token id -> (frequency, positions).
    scratch: HashMap<u32, (u32, Vec<u32>)>,
}

impl PartitionBuilder {
    /// An empty partition tokenizing with `analyzer`.
    pub fn new(analyzer: Analyzer, with_position: bool) -> Self {
        Self {
            analyzer,
            with_position,
            ids: HashMap::new(),
            terms: Vec::new(),
            row_ids: Vec::new(),
            num_tokens: Vec::new(),
            total_tokens: 0,
            bytes: 0,
            scratch: HashMap::new(),
        }
    }

    /// Adds the document of row `row_id` made of `texts` (one string for a text column,
    /// the elements of a list column; their positions follow on). A document without
    /// tokens is not stored (it can never match).
    pub fn add<'a>(&mut self, row_id: u64, texts: impl IntoIterator<Item = &'a str>) -> Result<()> {
        self.scratch.clear();
        let mut n: u32 = 0;
        let mut base: u32 = 0;
        let Self {
            analyzer,
            ids,
            terms,
            scratch,
            bytes,
            with_position,
            ..
        } = self;
        for text in texts {
            let mut last = None;
            analyzer.for_each(text, |tok, pos| {
                let next_id = ids.len() as u32;
                let id = match ids.get(tok) {
                    Some(id) => *id,
                    None => {
                        ids.insert(tok.to_string(), next_id);
                        terms.push(TermPostings::default());
                        // The token twice (map key, later the dictionary), the map entry
                        // and an empty postings record.
                        *bytes += 2 * tok.len() + 48 + std::mem::size_of::<TermPostings>();
                        next_id
                    }
                };
                let e = scratch.entry(id).or_insert((0, Vec::new()));
                e.0 += 1;
                if *with_position {
                    e.1.push(base.saturating_add(pos));
                }
                n = n.saturating_add(1);
                last = Some(pos);
            });
            if let Some(p) = last {
                base = base.saturating_add(p).saturating_add(1);
            }
        }
        if n == 0 {
            return Ok(());
        }
        let doc = u32::try_from(self.row_ids.len())
            .map_err(|_| Error::InvalidArgument("a partition holds at most 2^32 documents".into()))?;
        self.row_ids.push(row_id);
        self.num_tokens.push(n);
        self.total_tokens += u64::from(n);
        self.bytes += 12;
        for (id, (freq, positions)) in self.scratch.drain() {
            let t = &mut self.terms[id as usize];
            // What the vectors hold, capacity included (they grow by doubling).
            let before = t.docs.capacity() + t.freqs.capacity() + t.positions.capacity();
            t.docs.push(doc);
            t.freqs.push(freq);
            t.positions.extend_from_slice(&positions);
            let after = t.docs.capacity() + t.freqs.capacity() + t.positions.capacity();
            self.bytes += 4 * (after - before);
        }
        Ok(())
    }

    /// Documents added (with at least one token).
    pub fn num_docs(&self) -> usize {
        self.row_ids.len()
    }

    /// The memory the partition holds: postings by their vectors' capacity, tokens and
    /// per-token records by their size.
    pub fn memory_bytes(&self) -> usize {
        self.bytes
    }

    /// Whether nothing was added.
    pub fn is_empty(&self) -> bool {
        self.row_ids.is_empty()
    }

    /// Seals the partition (tokens sorted, postings block-coded) and leaves the builder empty.
    pub fn seal(&mut self, tail: Tail) -> Result<SealedPartition> {
        let ids = std::mem::take(&mut self.ids);
        let mut terms = std::mem::take(&mut self.terms);
        let row_ids = std::mem::take(&mut self.row_ids);
        let num_tokens = std::mem::take(&mut self.num_tokens);
        let total_tokens = std::mem::replace(&mut self.total_tokens, 0);
        self.bytes = 0;
        let mut sorted: Vec<(String, u32)> = ids.into_iter().collect();
        sorted.sort_unstable_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
        let mut fst = fst::MapBuilder::memory();
        let mut postings = Vec::with_capacity(sorted.len());
        let n_docs = row_ids.len();
        let avgdl = if n_docs == 0 {
            0.0
        } else {
            total_tokens as f32 / n_docs as f32
        };
        for (new_id, (token, old)) in sorted.iter().enumerate() {
            fst.insert(token.as_bytes(), new_id as u64)
                .map_err(|e| Error::InvalidArgument(format!("token dictionary: {e}")))?;
            let t = std::mem::take(&mut terms[*old as usize]);
            postings.push(encode_postings(t, &num_tokens, avgdl, n_docs, tail));
        }
        let fst_bytes = fst
            .into_inner()
            .map_err(|e| Error::InvalidArgument(format!("token dictionary: {e}")))?;
        let token_bytes: u64 = sorted.iter().map(|(t, _)| t.len() as u64).sum();
        Ok(SealedPartition {
            fst: fst_bytes,
            num_terms: sorted.len() as u32,
            token_bytes,
            row_ids,
            num_tokens,
            total_tokens,
            postings,
        })
    }
}

/// One token's coded postings.
#[derive(Debug, Clone)]
pub struct EncodedPostings {
    /// The coded blocks.
    pub blocks: Vec<Vec<u8>>,
    /// Impact entries: one per block, then one per group of [`IMPACT_GROUP`] blocks.
    pub impacts: Vec<Vec<u8>>,
    /// The best block score.
    pub max_score: f32,
    /// Documents holding the token.
    pub length: u32,
    /// Positions of every occurrence, doc by doc (empty without positions).
    pub positions: Vec<u32>,
    /// Occurrences per doc (to split `positions`; empty without positions).
    pub freqs: Vec<u32>,
}

fn encode_postings(t: TermPostings, num_tokens: &[u32], avgdl: f32, n_docs: usize, tail: Tail) -> EncodedPostings {
    let idf_k = idf(t.docs.len() as u64, n_docs as u64) * (K1 + 1.0);
    let mut blocks = Vec::with_capacity(t.docs.len().div_ceil(BLOCK));
    let mut max_score = 0f32;
    for (docs, freqs) in t.docs.chunks(BLOCK).zip(t.freqs.chunks(BLOCK)) {
        let best = docs
            .iter()
            .zip(freqs)
            .map(|(d, f)| block_max_factor(*f, num_tokens.get(*d as usize).copied().unwrap_or(1), avgdl))
            .fold(f32::MIN, f32::max);
        let score = best * idf_k;
        max_score = max_score.max(score);
        let mut bytes = Vec::new();
        codec::encode_block(docs, freqs, score, tail, &mut bytes);
        blocks.push(bytes);
    }
    // Impacts: one entry per block, then one per group of blocks.
    let entry = |docs: &[u32], freqs: &[u32], out: &mut Vec<Vec<u8>>| {
        let pairs = competitive(
            docs.iter()
                .zip(freqs)
                .map(|(d, f)| (*f, length_code(num_tokens.get(*d as usize).copied().unwrap_or(1)))),
        );
        let mut bytes = Vec::new();
        encode_impact(docs.last().copied().unwrap_or(0), &pairs, &mut bytes);
        out.push(bytes);
    };
    let mut impacts = Vec::with_capacity(blocks.len() + blocks.len().div_ceil(IMPACT_GROUP));
    for (docs, freqs) in t.docs.chunks(BLOCK).zip(t.freqs.chunks(BLOCK)) {
        entry(docs, freqs, &mut impacts);
    }
    for (docs, freqs) in t
        .docs
        .chunks(BLOCK * IMPACT_GROUP)
        .zip(t.freqs.chunks(BLOCK * IMPACT_GROUP))
    {
        entry(docs, freqs, &mut impacts);
    }
    let with_positions = !t.positions.is_empty();
    EncodedPostings {
        impacts,
        blocks,
        max_score,
        length: t.docs.len() as u32,
        positions: t.positions,
        freqs: if with_positions { t.freqs } else { Vec::new() },
    }
}

/// A sealed partition: what its three files hold.
#[derive(Debug, Clone)]
pub struct SealedPartition {
    /// The token dictionary: an `fst` map from token bytes to token id.
    pub fst: Vec<u8>,
    /// Tokens in the dictionary.
    pub num_terms: u32,
    /// Bytes of all tokens.
    pub token_bytes: u64,
    /// The row id of each doc id.
    pub row_ids: Vec<u64>,
    /// Tokens of each doc id.
    pub num_tokens: Vec<u32>,
    /// Sum of `num_tokens`.
    pub total_tokens: u64,
    /// Postings by token id.
    pub postings: Vec<EncodedPostings>,
}
