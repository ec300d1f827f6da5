//! Full-text search over Lance tables: pylance 14's INVERTED index, read and written.
//!
//! - [`analyzer`]: pylance's tokenizer parameters, and the analyzer they build (the same
//!   tokens as pylance 14 for the same text), over the base tokenizers of [`split`] (a
//!   dictionary-free CJK one among them) and the ASCII folding of [`fold`];
//! - [`builder`]: documents in, partitions of bounded memory out;
//! - [`codec`] and [`positions`]: the posting and position codecs;
//! - [`files`]: the index directory in pylance 14's layout;
//! - [`index`]: an open index segment;
//! - [`lazy`]: posting lists decoded a block at a time, for AND queries and phrases;
//! - [`query`]: pylance's query objects as one tree;
//! - [`search`] and [`score`]: exact BM25 over every partition of a column.
//!
//! The dataset layer (`lancelet-dataset`) scans the column, finds the segments of an index
//! and the rows they do not cover, and turns results into rows.

pub mod analyzer;
pub mod builder;
pub mod codec;
pub mod error;
pub mod files;
pub mod fold;
pub mod index;
pub mod lazy;
pub mod positions;
pub mod query;
pub mod score;
pub mod search;
pub mod split;

pub use analyzer::{Analyzer, Language, TokenizerConfig};
pub use builder::{PartitionBuilder, SealedPartition};
pub use error::{Error, Result};
pub use files::{IndexFormat, Partition};
pub use index::FtsIndex;
pub use query::{FtsQuery, Occur, Operator};
pub use score::Stats;
pub use search::{evaluate, search_top, top, ColumnSearch, Hits};

/// The `type_url` of the index details.
pub const DETAILS_TYPE_URL: &str = "/lance.table.InvertedIndexDetails";
