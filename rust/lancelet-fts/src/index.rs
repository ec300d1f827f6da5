//! An open full-text index segment: its settings and partitions in memory.

use std::sync::Arc;

use arrow_array::builder::{LargeBinaryBuilder, ListBuilder};
use lancelet_index::scalar::IndexStore;

use crate::analyzer::{Analyzer, TokenizerConfig};
use crate::builder::SealedPartition;
use crate::codec::Tail;
use crate::error::Result;
use crate::files::{self, IndexFormat, Partition};
use crate::positions::PositionColumn;
use crate::score::Stats;

/// One index segment.
#[derive(Debug)]
pub struct FtsIndex {
    /// Tokenizer parameters.
    pub params: TokenizerConfig,
    /// Format settings.
    pub format: IndexFormat,
    /// The partitions.
    pub partitions: Vec<Arc<Partition>>,
    analyzer: Analyzer,
}

impl FtsIndex {
    /// Opens the index whose files are in `store`.
    pub async fn open(store: &dyn IndexStore) -> Result<Self> {
        let meta = files::read_metadata(store).await?;
        // Parameters a reader cannot build an analyzer from are damage, unless they name a
        // tokenizer lancelet lacks.
        let analyzer = meta.params.build().map_err(|e| match e {
            lancelet_index::Error::InvalidArgument(m) => lancelet_index::Error::corrupt(files::METADATA, m),
            other => other,
        })?;
        let mut partitions = Vec::with_capacity(meta.partitions.len());
        for p in &meta.partitions {
            partitions.push(Arc::new(files::read_partition(store, *p, &meta.format).await?));
        }
        Ok(Self {
            params: meta.params,
            format: meta.format,
            partitions,
            analyzer,
        })
    }

    /// Documents and tokens over every partition.
    pub fn stats(&self) -> Stats {
        let mut s = Stats::default();
        for p in &self.partitions {
            s.add(Stats {
                num_docs: p.num_docs() as u64,
                total_tokens: p.total_tokens,
            });
        }
        s
    }

    /// The analyzer the index was built with (queries are analyzed the same way).
    pub fn analyzer(&self) -> Result<Analyzer> {
        Ok(self.analyzer.clone())
    }

    /// Distinct tokens over every partition (a token in several partitions counts once
    /// per partition).
    pub fn num_tokens(&self) -> u64 {
        self.partitions.iter().map(|p| p.tokens.len() as u64).sum()
    }

    /// pylance's `index_statistics` keys for this segment.
    pub fn statistics(&self) -> serde_json::Value {
        let s = self.stats();
        serde_json::json!({
            "index_type": "Inverted",
            "num_docs": s.num_docs,
            "num_tokens": self.num_tokens(),
            "num_partitions": self.partitions.len(),
            "params": self.params.to_json(),
            "format_version": self.format.version,
        })
    }
}

impl Partition {
    /// A partition searched straight from memory (the unindexed rows of a query).
    pub fn from_sealed(p: SealedPartition, tail: Tail) -> Result<Self> {
        let tokens =
            fst::Map::new(p.fst).map_err(|e| lancelet_index::Error::corrupt("token dictionary", e.to_string()))?;
        let mut b = ListBuilder::new(LargeBinaryBuilder::new());
        let mut lengths = Vec::with_capacity(p.postings.len());
        let mut impacts = ListBuilder::new(LargeBinaryBuilder::new());
        let mut raw = Vec::new();
        let with_positions = p.postings.iter().any(|t| !t.positions.is_empty());
        for t in p.postings {
            for block in &t.blocks {
                b.values().append_value(block);
            }
            b.append(true);
            for i in &t.impacts {
                impacts.values().append_value(i);
            }
            impacts.append(true);
            lengths.push(t.length);
            if with_positions {
                raw.push((t.positions, t.freqs));
            }
        }
        Ok(Self {
            tokens,
            total_tokens: p.total_tokens,
            row_ids: p.row_ids,
            num_tokens: p.num_tokens,
            postings: b.finish(),
            lengths,
            impacts: Some(impacts.finish()),
            positions: with_positions.then_some(PositionColumn::Raw(raw)),
            tail,
        })
    }
}
