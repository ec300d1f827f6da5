//! BITMAP: one row-address set per distinct value.
//!
//! File `bitmap_page_lookup.lance`: `keys` (column type, nullable; sorted, the null key
//! first) and `bitmaps` (binary: a row-address tree map, see [`crate::rowaddr`]); schema
//! metadata `lance:index_stats = {"num_bitmaps":N}`. LABEL_LIST uses the same file with
//! list elements as keys, so the file's reader and writer live here and are shared.
//!
//! The reader keeps the keys in memory and reads the bitmaps of matching keys on demand.

use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::sync::Arc;

use arrow_array::{Array, ArrayRef, BinaryArray, RecordBatch, UInt32Array};
use arrow_ord::ord::make_comparator;
use arrow_ord::sort::SortOptions;
use arrow_schema::{DataType, Field, Schema};
use futures::future::BoxFuture;
use futures::FutureExt;
use lancelet_file::{FileReader, FileVersion, Projection};

use super::common::{self, Input};
use super::{cannot_answer, IndexFile, IndexStore, ScalarIndex, ScalarIndexType, ScalarQuery, SearchResult};
use crate::error::{Error, Result};
use crate::rowaddr::RowAddrSet;

pub(crate) const FILE: &str = "bitmap_page_lookup.lance";
const STATS_KEY: &str = "lance:index_stats";

/// Groups equal values: the distinct keys (sorted, null first) and each key's addresses.
pub(crate) fn group(input: &Input) -> Result<(ArrayRef, Vec<RowAddrSet>)> {
    let order = input.sort_indices()?;
    let sorted = arrow_select::take::take(input.values.as_ref(), &order, None)?;
    let cmp = make_comparator(sorted.as_ref(), sorted.as_ref(), SortOptions::default())?;
    let mut firsts: Vec<u32> = Vec::new();
    let mut sets: Vec<Vec<u64>> = Vec::new();
    for (i, &row) in order.values().iter().enumerate() {
        let new_key = i == 0 || cmp(i - 1, i) != Ordering::Equal;
        if new_key {
            firsts.push(i as u32);
            sets.push(Vec::new());
        }
        if let Some(s) = sets.last_mut() {
            s.push(input.addrs[row as usize]);
        }
    }
    let keys = arrow_select::take::take(sorted.as_ref(), &UInt32Array::from(firsts), None)?;
    // Within a key, rows are sorted by address (the sort's second column).
    Ok((keys, sets.into_iter().map(RowAddrSet::from_sorted_iter).collect()))
}

/// Writes the keys/bitmaps file with extra metadata and global buffers.
pub(crate) fn write_file(
    keys: ArrayRef,
    sets: &[RowAddrSet],
    extra_metadata: &[(&str, String)],
    global_buffers: &[Vec<u8>],
    version: FileVersion,
) -> Result<IndexFile> {
    let schema = Arc::new(Schema::new(vec![
        Field::new("keys", keys.data_type().clone(), true),
        Field::new("bitmaps", DataType::Binary, true),
    ]));
    let encoded: Vec<Vec<u8>> = sets.iter().map(RowAddrSet::encode).collect();
    let bitmaps = BinaryArray::from_iter_values(encoded.iter());
    let batch = RecordBatch::try_new(schema.clone(), vec![keys, Arc::new(bitmaps)])?;
    let mut md = vec![(STATS_KEY, format!("{{\"num_bitmaps\":{}}}", sets.len()))];
    md.extend(extra_metadata.iter().cloned());
    common::write_lance(FILE, schema, batch, &md, global_buffers, version)
}

pub(crate) fn build(input: Input, version: FileVersion) -> Result<Vec<IndexFile>> {
    let (keys, sets) = group(&input)?;
    Ok(vec![write_file(keys, &sets, &[], &[], version)?])
}

/// The open keys/bitmaps file: keys in memory, bitmaps read on demand.
#[derive(Debug)]
pub(crate) struct BitmapFile {
    pub keys: ArrayRef,
    pub reader: Arc<FileReader>,
    bitmaps: Projection,
}

impl BitmapFile {
    pub async fn open(store: &dyn IndexStore) -> Result<Self> {
        let reader = common::open_file(store, FILE).await?;
        let batch = common::read_columns(&reader, &["keys"]).await?;
        let keys = common::column(&batch, "keys", FILE)?.clone();
        let bitmaps = reader.projection(Some(&["bitmaps".to_string()]))?;
        if !matches!(
            bitmaps.schema().field(0).data_type(),
            DataType::Binary | DataType::LargeBinary
        ) {
            return Err(Error::corrupt(FILE, "bitmaps are not binary"));
        }
        Ok(Self { keys, reader, bitmaps })
    }

    /// The address sets of the given key positions, in the order given.
    pub async fn load(&self, positions: &[u64]) -> Result<Vec<RowAddrSet>> {
        if positions.is_empty() {
            return Ok(Vec::new());
        }
        let batch = self.reader.take(&self.bitmaps, positions).await?;
        let col = batch.column(0);
        let mut out = Vec::with_capacity(positions.len());
        for i in 0..col.len() {
            let bytes = binary_value(col, i).ok_or_else(|| Error::corrupt(FILE, "null bitmap"))?;
            out.push(RowAddrSet::decode(bytes, FILE)?);
        }
        Ok(out)
    }

    /// The union of the sets of the keys that `mask` selects.
    pub async fn union_of(&self, mask: &arrow_buffer::BooleanBuffer) -> Result<RowAddrSet> {
        let positions: Vec<u64> = mask.set_indices().map(|i| i as u64).collect();
        let mut out = RowAddrSet::new();
        for s in self.load(&positions).await? {
            out.union_with(&s);
        }
        Ok(out)
    }
}

fn binary_value(col: &ArrayRef, i: usize) -> Option<&[u8]> {
    use arrow_array::cast::AsArray;
    if col.is_null(i) {
        return None;
    }
    match col.data_type() {
        DataType::Binary => Some(col.as_binary::<i32>().value(i)),
        DataType::LargeBinary => Some(col.as_binary::<i64>().value(i)),
        _ => None,
    }
}

/// An open BITMAP index.
#[derive(Debug)]
pub struct BitmapIndex {
    file: BitmapFile,
}

impl BitmapIndex {
    /// Opens the index (reads the keys).
    pub async fn open(store: &dyn IndexStore) -> Result<Self> {
        Ok(Self {
            file: BitmapFile::open(store).await?,
        })
    }

    async fn search_impl(&self, query: &ScalarQuery) -> Result<SearchResult> {
        if !self.can_answer(query) {
            return Err(cannot_answer(ScalarIndexType::Bitmap, query));
        }
        let mask = common::query_mask(self.file.keys.as_ref(), query)?;
        Ok(SearchResult::Exact(self.file.union_of(&mask).await?))
    }
}

impl ScalarIndex for BitmapIndex {
    fn kind(&self) -> ScalarIndexType {
        ScalarIndexType::Bitmap
    }

    fn can_answer(&self, query: &ScalarQuery) -> bool {
        query.is_comparison()
    }

    fn search<'a>(&'a self, query: &'a ScalarQuery) -> BoxFuture<'a, Result<SearchResult>> {
        self.search_impl(query).boxed()
    }

    fn statistics(&self) -> BTreeMap<String, String> {
        BTreeMap::from([("num_bitmaps".to_string(), self.file.keys.len().to_string())])
    }
}
