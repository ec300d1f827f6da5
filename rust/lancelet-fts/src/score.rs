//! BM25 as pylance scores it: `k1 = 1.2`, `b = 0.75`, exact document lengths, and
//! `idf = ln(1 + (N - n + 0.5) / (n + 0.5))` for a token in `n` of `N` documents.

/// Term-frequency saturation.
pub const K1: f32 = 1.2;
/// Length normalisation.
pub const B: f32 = 0.75;

/// The inverse document frequency of a token in `n` of `num_docs` documents.
pub fn idf(n: u64, num_docs: u64) -> f32 {
    let (n, total) = (n as f32, num_docs as f32);
    ((total - n + 0.5) / (n + 0.5) + 1.0).ln()
}

/// `tf / (tf + k1 (1 - b + b dl / avgdl))`: the part of a term's score that depends on the
/// document (times `idf (k1 + 1)` it is the score).
pub fn block_max_factor(tf: u32, dl: u32, avgdl: f32) -> f32 {
    let tf = tf as f32;
    let norm = K1 * (1.0 - B + B * dl as f32 / avgdl);
    tf / (tf + norm)
}

/// Corpus statistics a query is scored against.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Stats {
    /// Documents with at least one token.
    pub num_docs: u64,
    /// Tokens of all documents.
    pub total_tokens: u64,
}

impl Stats {
    /// The average document length.
    pub fn avgdl(&self) -> f32 {
        if self.num_docs == 0 {
            1.0
        } else {
            self.total_tokens as f32 / self.num_docs as f32
        }
    }

    /// Both together.
    pub fn add(&mut self, other: Stats) {
        self.num_docs += other.num_docs;
        self.total_tokens += other.total_tokens;
    }
}

/// Scores documents for one token: `idf ((k1 + 1) tf / (tf + k1 ((1 - b) + b dl / avgdl)))`,
/// in `f32` and in that association, which reproduces pylance's scores bit for bit.
#[derive(Debug, Clone, Copy)]
pub struct TermScorer {
    idf: f32,
    avgdl: f32,
    boost: f32,
}

impl TermScorer {
    /// A scorer for a token in `doc_freq` documents, boosted by `boost`.
    pub fn new(doc_freq: u64, stats: Stats, boost: f32) -> Self {
        Self {
            idf: idf(doc_freq, stats.num_docs),
            avgdl: stats.avgdl(),
            boost,
        }
    }

    /// The score of a document of `dl` tokens holding the token `tf` times.
    #[inline]
    pub fn score(&self, tf: u32, dl: u32) -> f32 {
        let tf = tf as f32;
        let norm = K1 * ((1.0 - B) + (B * dl as f32) / self.avgdl);
        self.idf * (((K1 + 1.0) * tf) / (tf + norm)) * self.boost
    }

    /// The best score any document can get (as `tf` grows without bound).
    pub fn upper_bound(&self) -> f32 {
        self.idf * (K1 + 1.0) * self.boost
    }

    /// The average document length scores use.
    pub fn avgdl(&self) -> f32 {
        self.avgdl
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_single_document_scores_as_pylance_reports() {
        // One document "fox fox fox": idf(1 of 1) (k1 + 1) 3 / (3 + k1), the document being
        // exactly as long as the average.
        let s = Stats {
            num_docs: 1,
            total_tokens: 3,
        };
        let t = TermScorer::new(1, s, 1.0);
        let expect = idf(1, 1) * 2.2 * 3.0 / (3.0 + 1.2);
        assert!((t.score(3, 3) - expect).abs() < 1e-6);
        assert!(t.score(3, 3) <= t.upper_bound());
    }
}
