//! Scalar indexes: the shared vocabulary (queries, results, parameters, training input)
//! and the two entry points, [`train`] and [`open`].
//!
//! Each index type lives in its own module with a builder (`build`: training batches in,
//! named file bytes out) and a reader (`open`: files in, an immutable
//! [`ScalarIndex`] out). This module dispatches on [`ScalarIndexType`] and moves bytes
//! through the [`IndexStore`].
//!
//! Exact indexes (BTREE, BITMAP, LABEL_LIST) answer [`SearchResult::Exact`]; the others
//! answer [`SearchResult::AtMost`], a superset the caller must recheck against the data.
//! Results never account for deleted rows: the caller masks them.

use std::collections::BTreeMap;
use std::fmt::Debug;
use std::ops::Bound;
use std::sync::Arc;

use arrow_array::{Array, ArrayRef, UInt64Array};
use arrow_schema::DataType;
use futures::future::BoxFuture;
use futures::FutureExt;
use lancelet_file::FileVersion;

use crate::error::{Error, Result};
use crate::rowaddr::RowAddrSet;

pub mod bitmap;
pub mod bloom;
pub mod btree;
mod common;
/// Reading and writing the Lance files an index is made of (shared with the full-text index).
pub mod files {
    pub use super::common::{column, metadata, open_file, read_columns, u32s, u64s, write_lance};
}
mod kind;
pub mod label_list;
pub mod ngram;
mod store;
mod xxhash;
pub mod zonemap;

pub use kind::ScalarIndexType;
pub use store::{IndexStore, MemoryStore};

/// A query an index may answer. Literals arrive already cast to the column's type (for
/// LABEL_LIST: the element type); a null literal matches nothing, as in SQL.
#[derive(Debug, Clone)]
pub enum ScalarQuery {
    /// `column = value` (an array of length 1).
    Equals(ArrayRef),
    /// `lower <(=) column <(=) upper` (each bound an array of length 1).
    Range {
        /// Lower bound.
        lower: Bound<ArrayRef>,
        /// Upper bound.
        upper: Bound<ArrayRef>,
    },
    /// `column IN (values...)`.
    IsIn(ArrayRef),
    /// `column IS NULL`.
    IsNull,
    /// `array_has_any(column, values)`: lists holding at least one of the values.
    LabelsAny(ArrayRef),
    /// `array_has_all(column, values)`: lists holding every value.
    LabelsAll(ArrayRef),
    /// `contains(column, text)`: strings containing `text`.
    Contains(String),
}

impl ScalarQuery {
    /// Whether the query compares the column with values (`=`, ranges, `IN`, `IS NULL`):
    /// what an index over the column's values (BTREE, BITMAP, ZONEMAP) can answer.
    pub fn is_comparison(&self) -> bool {
        matches!(
            self,
            ScalarQuery::Equals(_) | ScalarQuery::Range { .. } | ScalarQuery::IsIn(_) | ScalarQuery::IsNull
        )
    }
}

/// The rows an index found.
#[derive(Debug, Clone, PartialEq)]
pub enum SearchResult {
    /// Exactly the matching rows.
    Exact(RowAddrSet),
    /// A superset of the matching rows: the caller rechecks each one.
    AtMost(RowAddrSet),
}

impl SearchResult {
    /// The rows, exact or not.
    pub fn rows(&self) -> &RowAddrSet {
        match self {
            Self::Exact(r) | Self::AtMost(r) => r,
        }
    }

    /// The rows, exact or not.
    pub fn into_rows(self) -> RowAddrSet {
        match self {
            Self::Exact(r) | Self::AtMost(r) => r,
        }
    }

    /// Whether the rows need no recheck.
    pub fn is_exact(&self) -> bool {
        matches!(self, Self::Exact(_))
    }
}

/// Training parameters (pylance's names and defaults).
#[derive(Debug, Clone, PartialEq)]
pub struct ScalarParams {
    /// BTREE rows per page (`zone_size` in pylance's `IndexConfig("btree", ...)`).
    pub btree_batch_size: u64,
    /// ZONEMAP and BLOOMFILTER rows per zone.
    pub rows_per_zone: u64,
    /// BLOOMFILTER: the number of distinct values each zone's filter is sized for.
    pub bloom_number_of_items: u64,
    /// BLOOMFILTER: the target false-positive probability.
    pub bloom_probability: f64,
}

impl Default for ScalarParams {
    fn default() -> Self {
        Self {
            btree_batch_size: 4096,
            rows_per_zone: 8192,
            bloom_number_of_items: 8192,
            bloom_probability: 0.00057,
        }
    }
}

impl ScalarParams {
    fn check(&self) -> Result<()> {
        if self.btree_batch_size == 0 || self.btree_batch_size > u64::from(u32::MAX) {
            return Err(Error::InvalidArgument("btree batch size must be in 1..2^32".into()));
        }
        if self.rows_per_zone == 0 || self.rows_per_zone > u64::from(u32::MAX) {
            return Err(Error::InvalidArgument("rows_per_zone must be in 1..2^32".into()));
        }
        if self.bloom_number_of_items == 0 {
            return Err(Error::InvalidArgument(
                "bloom filter number_of_items must be positive".into(),
            ));
        }
        if !(self.bloom_probability > 0.0 && self.bloom_probability < 1.0) {
            return Err(Error::InvalidArgument(
                "bloom filter probability must be in (0, 1)".into(),
            ));
        }
        Ok(())
    }
}

/// One batch of training input: values of the indexed column and their row addresses.
/// The caller excludes deleted rows and feeds batches in fragment order.
#[derive(Debug, Clone)]
pub struct TrainingBatch {
    /// The column's values.
    pub values: ArrayRef,
    /// The row address of each value.
    pub row_addrs: UInt64Array,
}

impl TrainingBatch {
    /// Pairs values with addresses (same length, addresses without nulls).
    pub fn try_new(values: ArrayRef, row_addrs: UInt64Array) -> Result<Self> {
        if values.len() != row_addrs.len() {
            return Err(Error::InvalidArgument(format!(
                "{} values but {} row addresses",
                values.len(),
                row_addrs.len()
            )));
        }
        if row_addrs.null_count() > 0 {
            return Err(Error::InvalidArgument("row addresses cannot be null".into()));
        }
        Ok(Self { values, row_addrs })
    }
}

/// What [`train`] wrote, for the manifest's `IndexMetadata`.
#[derive(Debug, Clone, PartialEq)]
pub struct CreatedIndex {
    /// `(file name, size in bytes)` in write order.
    pub files: Vec<(String, u64)>,
    /// The `value` bytes of the details `Any`.
    pub details: Vec<u8>,
    /// The details `type_url`.
    pub type_url: &'static str,
    /// The `index_version`.
    pub index_version: i32,
}

/// A built index file: its name and bytes.
#[derive(Debug, Clone)]
pub struct IndexFile {
    /// The bare file name (`page_data.lance`).
    pub name: String,
    /// The whole file.
    pub bytes: Vec<u8>,
}

/// Trains an index of type `kind` over a column of type `data_type` and writes its files
/// (Lance files of format `file_version`) to `store`.
///
/// The batches are consumed before the returned future first polls anything, so the
/// future is `Send` whatever the iterator is.
pub fn train<'a>(
    kind: ScalarIndexType,
    params: &ScalarParams,
    data_type: &DataType,
    batches: impl IntoIterator<Item = Result<TrainingBatch>>,
    store: &'a dyn IndexStore,
    file_version: FileVersion,
) -> BoxFuture<'a, Result<CreatedIndex>> {
    let built = build(kind, params, data_type, batches, file_version);
    let details = kind.details(params);
    async move {
        let mut files = Vec::new();
        for f in built? {
            let size = store.write(&f.name, f.bytes).await?;
            files.push((f.name, size));
        }
        Ok(CreatedIndex {
            files,
            details,
            type_url: kind.type_url(),
            index_version: kind.index_version(),
        })
    }
    .boxed()
}

fn build(
    kind: ScalarIndexType,
    params: &ScalarParams,
    data_type: &DataType,
    batches: impl IntoIterator<Item = Result<TrainingBatch>>,
    version: FileVersion,
) -> Result<Vec<IndexFile>> {
    params.check()?;
    kind.check_supports(data_type)?;
    let batches = batches.into_iter().collect::<Result<Vec<_>>>()?;
    if let Some(b) = batches.iter().find(|b| b.values.data_type() != data_type) {
        return Err(Error::InvalidArgument(format!(
            "training batch of type {} for a column of type {data_type}",
            b.values.data_type()
        )));
    }
    let input = common::Input::concat(data_type, &batches)?;
    match kind {
        ScalarIndexType::BTree => btree::build(input, params, version),
        ScalarIndexType::Bitmap => bitmap::build(input, version),
        ScalarIndexType::LabelList => label_list::build(input, version),
        ScalarIndexType::ZoneMap => zonemap::build(input, params, version),
        ScalarIndexType::NGram => ngram::build(input, version),
        ScalarIndexType::BloomFilter => bloom::build(input, params, version),
    }
}

/// Opens an index of type `kind` whose files are in `store`.
pub async fn open(kind: ScalarIndexType, store: &dyn IndexStore) -> Result<Arc<dyn ScalarIndex>> {
    Ok(match kind {
        ScalarIndexType::BTree => Arc::new(btree::BTreeIndex::open(store).await?),
        ScalarIndexType::Bitmap => Arc::new(bitmap::BitmapIndex::open(store).await?),
        ScalarIndexType::LabelList => Arc::new(label_list::LabelListIndex::open(store).await?),
        ScalarIndexType::ZoneMap => Arc::new(zonemap::ZoneMapIndex::open(store).await?),
        ScalarIndexType::NGram => Arc::new(ngram::NGramIndex::open(store).await?),
        ScalarIndexType::BloomFilter => Arc::new(bloom::BloomFilterIndex::open(store).await?),
    })
}

/// An open, immutable scalar index.
pub trait ScalarIndex: Send + Sync + Debug {
    /// The index type.
    fn kind(&self) -> ScalarIndexType;
    /// Whether [`ScalarIndex::search`] can serve `query` (otherwise the caller scans).
    fn can_answer(&self, query: &ScalarQuery) -> bool;
    /// The rows matching `query`; a query the index cannot answer is an error.
    fn search<'a>(&'a self, query: &'a ScalarQuery) -> BoxFuture<'a, Result<SearchResult>>;
    /// Per-segment statistics as pylance's `index_statistics` reports them.
    fn statistics(&self) -> BTreeMap<String, String>;
}

fn cannot_answer(kind: ScalarIndexType, query: &ScalarQuery) -> Error {
    Error::InvalidArgument(format!("a {} index cannot answer {query:?}", kind.name()))
}

#[cfg(test)]
mod tests;
