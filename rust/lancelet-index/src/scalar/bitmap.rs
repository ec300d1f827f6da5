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
///
/// Values whose bytes are their identity (integers, floats by bit pattern as the sort
/// orders them, strings, binaries) are grouped by hashing, one pass over the rows, and
/// only the distinct keys are sorted; other types are sorted whole and cut into runs.
pub(crate) fn group(input: &Input) -> Result<(ArrayRef, Vec<RowAddrSet>)> {
    let (firsts, sets) = match hash_groups(input) {
        Some(groups) => groups,
        None => sorted_groups(input)?,
    };
    let keys = arrow_select::take::take(input.values.as_ref(), &UInt32Array::from(firsts), None)?;
    let order = arrow_ord::sort::sort_to_indices(
        keys.as_ref(),
        Some(SortOptions {
            descending: false,
            nulls_first: true,
        }),
        None,
    )?;
    let keys = arrow_select::take::take(keys.as_ref(), &order, None)?;
    let mut sets: Vec<Option<Vec<u64>>> = sets.into_iter().map(Some).collect();
    let sets = order
        .values()
        .iter()
        .map(|&g| {
            let mut s = sets[g as usize].take().unwrap_or_default();
            // Each set is built from its addresses in order, a fragment at a time (out of
            // order, every address would merge bitmaps). Training input is in address
            // order already, which the sort sees in one pass.
            s.sort_unstable();
            RowAddrSet::from_sorted_iter(s)
        })
        .collect();
    Ok((keys, sets))
}

/// Each group's first row and its rows' addresses, groups in any order.
type Groups = (Vec<u32>, Vec<Vec<u64>>);

/// The bytes that identify each value of an array.
enum ValueBytes<'a> {
    Utf8(&'a arrow_array::StringArray),
    LargeUtf8(&'a arrow_array::LargeStringArray),
    Binary(&'a BinaryArray),
    LargeBinary(&'a arrow_array::LargeBinaryArray),
    /// A primitive array's value buffer (its offset applied) and value width.
    Fixed(&'a [u8], usize),
}

impl<'a> ValueBytes<'a> {
    fn get(&self, i: usize) -> &'a [u8] {
        match self {
            Self::Utf8(a) => a.value(i).as_bytes(),
            Self::LargeUtf8(a) => a.value(i).as_bytes(),
            Self::Binary(a) => a.value(i),
            Self::LargeBinary(a) => a.value(i),
            Self::Fixed(b, w) => &b[i * w..(i + 1) * w],
        }
    }
}

/// Groups by each row's value bytes (`None` for types whose bytes are not their identity).
fn hash_groups(input: &Input) -> Option<Groups> {
    use arrow_array::cast::AsArray;
    let values = input.values.as_ref();
    let data = values.to_data();
    let bytes = match values.data_type() {
        DataType::Utf8 => ValueBytes::Utf8(values.as_string::<i32>()),
        DataType::LargeUtf8 => ValueBytes::LargeUtf8(values.as_string::<i64>()),
        DataType::Binary => ValueBytes::Binary(values.as_binary::<i32>()),
        DataType::LargeBinary => ValueBytes::LargeBinary(values.as_binary::<i64>()),
        dt if dt.is_primitive() => {
            let width = dt.primitive_width()?;
            let buffer = data.buffers().first()?.as_slice();
            ValueBytes::Fixed(buffer.get(data.offset() * width..)?, width)
        }
        _ => return None,
    };
    let mut ids: std::collections::HashMap<&[u8], u32> = std::collections::HashMap::new();
    let (mut firsts, mut sets): Groups = (Vec::new(), Vec::new());
    let mut null_group: Option<u32> = None;
    for (i, &addr) in input.addrs.iter().enumerate() {
        let next = sets.len() as u32;
        let g = if values.is_null(i) {
            *null_group.get_or_insert(next)
        } else {
            *ids.entry(bytes.get(i)).or_insert(next)
        };
        if g == next {
            firsts.push(i as u32);
            sets.push(Vec::new());
        }
        sets[g as usize].push(addr);
    }
    Some((firsts, sets))
}

/// Groups by sorting every row and cutting the sorted rows into runs of equal values.
fn sorted_groups(input: &Input) -> Result<Groups> {
    let order = input.sort_indices()?;
    let sorted = arrow_select::take::take(input.values.as_ref(), &order, None)?;
    let cmp = make_comparator(sorted.as_ref(), sorted.as_ref(), SortOptions::default())?;
    let (mut firsts, mut sets): Groups = (Vec::new(), Vec::new());
    for (i, &row) in order.values().iter().enumerate() {
        if i == 0 || cmp(i - 1, i) != Ordering::Equal {
            firsts.push(row);
            sets.push(Vec::new());
        }
        if let Some(s) = sets.last_mut() {
            s.push(input.addrs[row as usize]);
        }
    }
    Ok((firsts, sets))
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

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "tests: a failed unwrap is a failed test")]
mod tests {
    use super::*;
    use arrow_array::{Float64Array, Int32Array, StringArray};
    use proptest::prelude::*;

    /// Keys and each key's addresses, by the sort alone.
    fn by_sorting(input: &Input) -> (ArrayRef, Vec<Vec<u64>>) {
        let (firsts, sets) = sorted_groups(input).unwrap();
        let keys = arrow_select::take::take(input.values.as_ref(), &UInt32Array::from(firsts), None).unwrap();
        (
            keys,
            sets.into_iter()
                .map(|mut s| {
                    s.sort_unstable();
                    s
                })
                .collect(),
        )
    }

    fn check(values: ArrayRef) {
        let n = values.len() as u64;
        // Two fragments, addresses in order, as training input comes.
        let addrs = (0..n).map(|i| if i < n / 2 { i } else { 1 << 32 | i }).collect();
        let input = Input { values, addrs };
        let (keys, sets) = group(&input).unwrap();
        let (want_keys, want_sets) = by_sorting(&input);
        assert_eq!(keys.as_ref(), want_keys.as_ref());
        let got: Vec<Vec<u64>> = sets.iter().map(|s| s.iter_with(|_| 0).collect()).collect();
        assert_eq!(got, want_sets);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        /// Hashing groups as sorting does, nulls and all, for integers, floats (by bit
        /// pattern: -0.0, 0.0 and NaN included) and strings.
        #[test]
        fn hashing_groups_as_sorting_does(
            ints in proptest::collection::vec(proptest::option::of(-5i32..5), 0..300),
            floats in proptest::collection::vec(proptest::option::of(prop_oneof![
                Just(0.0f64), Just(-0.0), Just(f64::NAN), Just(1.5), Just(-2.0), Just(f64::INFINITY)
            ]), 0..300),
            strings in proptest::collection::vec(proptest::option::of("[ab]{0,3}"), 0..300),
        ) {
            check(Arc::new(Int32Array::from(ints)));
            check(Arc::new(Float64Array::from(floats)));
            check(Arc::new(StringArray::from(strings)));
        }
    }

    #[test]
    fn a_sliced_array_groups_its_own_values() {
        let values: ArrayRef = Arc::new(Int32Array::from(vec![9, 9, 1, 2, 1, 2, 3]));
        check(values.slice(2, 5));
        let strings: ArrayRef = Arc::new(StringArray::from(vec!["z", "a", "b", "a"]));
        check(strings.slice(1, 3));
    }
}
