//! Posting lists decoded a block at a time, on demand.
//!
//! An AND query or a phrase walks its rarest term's list and only asks the others whether
//! they hold each of those documents. A probe reads block headers (each starts with its
//! first doc id) to find the one block that could hold the document and decodes that block
//! alone, so a common term's list of 300,000 documents costs a few blocks, not 2,300.

use arrow_array::cast::AsArray;
use arrow_array::{Array, LargeBinaryArray};

use crate::codec::{self, BLOCK};
use crate::error::{Error, Result};
use crate::files::Partition;

/// What a probe found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Probe {
    /// The document, at this index of the list.
    At(usize),
    /// Not in the list (later documents may be).
    Absent,
    /// Past the list's last document.
    End,
}

/// One token's posting list in a partition. `docs` and `freqs` have the list's length;
/// the entries of blocks not decoded yet are zero.
pub struct LazyPostings {
    blocks: LargeBinaryArray,
    len: usize,
    tail: codec::Tail,
    decoded: Vec<bool>,
    /// The doc ids, by index in the list.
    pub docs: Vec<u32>,
    /// The frequencies, by index in the list.
    pub freqs: Vec<u32>,
    /// The block the last probe ended in, and the index it ended at.
    block: usize,
    at: usize,
    scratch: (Vec<u32>, Vec<u32>),
}

impl LazyPostings {
    /// Token `id`'s list in `p`, nothing decoded yet.
    pub fn new(p: &Partition, id: u32) -> Result<Self> {
        let i = id as usize;
        if i >= p.postings.len() || i >= p.lengths.len() {
            return Err(Error::corrupt("posting list", format!("token id {id} out of range")));
        }
        let len = p.lengths[i] as usize;
        let value = p.postings.value(i);
        let blocks = value
            .as_binary_opt::<i64>()
            .ok_or_else(|| Error::corrupt("posting list", "blocks are not large binary"))?
            .clone();
        let n = len.div_ceil(BLOCK);
        if blocks.len() != n || blocks.null_count() > 0 {
            return Err(Error::corrupt(
                "posting list",
                "the block count does not fit the list's length",
            ));
        }
        Ok(Self {
            blocks,
            len,
            tail: p.tail,
            decoded: vec![false; n],
            docs: vec![0; len],
            freqs: vec![0; len],
            block: 0,
            at: 0,
            scratch: (Vec::new(), Vec::new()),
        })
    }

    /// The number of documents in the list.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the list is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    fn block_len(&self, b: usize) -> usize {
        self.len.saturating_sub(b * BLOCK).min(BLOCK)
    }

    fn first_doc(&self, b: usize) -> Result<u32> {
        codec::block_first_doc(self.blocks.value(b), self.block_len(b), self.tail)
    }

    fn decode(&mut self, b: usize) -> Result<()> {
        if self.decoded[b] {
            return Ok(());
        }
        let n = self.block_len(b);
        let (docs, freqs) = &mut self.scratch;
        docs.clear();
        freqs.clear();
        codec::decode_block(self.blocks.value(b), n, self.tail, docs, freqs)?;
        if docs.len() != n || freqs.len() != n {
            return Err(Error::corrupt("posting block", "wrong number of postings"));
        }
        self.docs[b * BLOCK..b * BLOCK + n].copy_from_slice(docs);
        self.freqs[b * BLOCK..b * BLOCK + n].copy_from_slice(freqs);
        self.decoded[b] = true;
        Ok(())
    }

    /// Decodes every block.
    pub fn decode_all(&mut self) -> Result<()> {
        for b in 0..self.decoded.len() {
            self.decode(b)?;
        }
        Ok(())
    }

    /// Where document `d` is. Successive probes must not go back (`d` never decreases).
    pub fn probe(&mut self, d: u32) -> Result<Probe> {
        let blocks = self.decoded.len();
        if self.block >= blocks {
            return Ok(Probe::End);
        }
        // The last block starting at or before `d`: skip whole blocks by their headers.
        let mut moved = false;
        while self.block + 1 < blocks && self.first_doc(self.block + 1)? <= d {
            self.block += 1;
            moved = true;
        }
        let start = self.block * BLOCK;
        if moved {
            self.at = start;
        }
        self.decode(self.block)?;
        let end = start + self.block_len(self.block);
        self.at = self.at.max(start);
        self.at += self.docs[self.at..end].partition_point(|x| *x < d);
        if self.at < end && self.docs[self.at] == d {
            Ok(Probe::At(self.at))
        } else if self.at == end && self.block + 1 == blocks {
            self.block = blocks;
            Ok(Probe::End)
        } else {
            Ok(Probe::Absent)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probes_find_exactly_the_listed_documents() {
        let docs: Vec<u32> = (0..1000).map(|i| i * 3 + (i % 7) / 3).collect();
        let config = crate::TokenizerConfig {
            stem: false,
            remove_stop_words: false,
            ..Default::default()
        };
        let mut b = crate::PartitionBuilder::new(config.build().unwrap_or_else(|e| panic!("{e}")), false);
        for d in 0..3100u32 {
            let text = if docs.contains(&d) { "t" } else { "u" };
            b.add(u64::from(d), [text]).unwrap_or_else(|e| panic!("{e}"));
        }
        let sealed = b.seal(codec::Tail::VarintDelta).unwrap_or_else(|e| panic!("{e}"));
        let p = Partition::from_sealed(sealed, codec::Tail::VarintDelta).unwrap_or_else(|e| panic!("{e}"));
        let id = p.token_id("t").unwrap_or(u32::MAX);
        let mut lazy = LazyPostings::new(&p, id).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(lazy.len(), docs.len());
        let mut found = Vec::new();
        for d in (0..3100).step_by(2) {
            match lazy.probe(d).unwrap_or_else(|e| panic!("{e}")) {
                Probe::At(i) => {
                    assert_eq!(docs[i], d);
                    found.push(d);
                }
                Probe::Absent => assert!(!docs.contains(&d)),
                Probe::End => {
                    assert!(docs.iter().all(|x| *x < d));
                    break;
                }
            }
        }
        let want: Vec<u32> = docs.iter().copied().filter(|d| d % 2 == 0).collect();
        assert_eq!(found, want);
        // Sparse probes decode only the blocks they land in.
        let mut lazy = LazyPostings::new(&p, id).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(lazy.probe(docs[900]).unwrap_or(Probe::End), Probe::At(900));
        assert_eq!(lazy.decoded.iter().filter(|b| **b).count(), 1);
    }
}
