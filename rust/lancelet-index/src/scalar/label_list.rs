//! LABEL_LIST: a BITMAP over the elements of list values, for `array_has_any` and
//! `array_has_all`.
//!
//! Same file as BITMAP (`bitmap_page_lookup.lance`, see [`super::bitmap`]) with the list's
//! element type as keys, plus schema metadata `lance:label_list_nulls = "1"` naming global
//! buffer 1: a row-address tree map of the rows whose list is null. Null elements inside
//! lists are not indexed (no query literal can match them). `index_version` is 1.

use std::collections::BTreeMap;

use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef, OffsetSizeTrait};
use arrow_buffer::BooleanBuffer;
use arrow_ord::cmp;
use arrow_schema::DataType;
use futures::future::BoxFuture;
use futures::FutureExt;
use lancelet_file::FileVersion;

use super::bitmap::{self, BitmapFile};
use super::common::{self, definite, Input};
use super::{cannot_answer, IndexFile, IndexStore, ScalarIndex, ScalarIndexType, ScalarQuery, SearchResult};
use crate::error::{Error, Result};
use crate::rowaddr::RowAddrSet;

const NULLS_KEY: &str = "lance:label_list_nulls";

/// The non-null elements of each non-null list, with their row's address, and the
/// addresses of null lists.
fn explode<O: OffsetSizeTrait>(input: &Input, list: &arrow_array::GenericListArray<O>) -> Result<(Input, RowAddrSet)> {
    let mut nulls = RowAddrSet::new();
    let mut take: Vec<u64> = Vec::new();
    let mut addrs = Vec::new();
    let elements = list.values();
    let offsets = list.value_offsets();
    for (row, &addr) in input.addrs.iter().enumerate() {
        if list.is_null(row) {
            nulls.insert(addr);
            continue;
        }
        let (start, end) = (offsets[row].as_usize(), offsets[row + 1].as_usize());
        for e in start..end {
            if elements.is_valid(e) {
                take.push(e as u64);
                addrs.push(addr);
            }
        }
    }
    let values = arrow_select::take::take(elements.as_ref(), &arrow_array::UInt64Array::from(take), None)?;
    Ok((Input { values, addrs }, nulls))
}

pub(crate) fn build(input: Input, version: FileVersion) -> Result<Vec<IndexFile>> {
    let (elements, nulls) = match input.values.data_type() {
        DataType::List(_) => explode(&input, input.values.as_list::<i32>())?,
        DataType::LargeList(_) => explode(&input, input.values.as_list::<i64>())?,
        other => {
            return Err(Error::InvalidArgument(format!(
                "LABEL_LIST needs a list column, not {other}"
            )))
        }
    };
    let (keys, sets) = bitmap::group(&elements)?;
    let file = bitmap::write_file(keys, &sets, &[(NULLS_KEY, "1".to_string())], &[nulls.encode()], version)?;
    Ok(vec![file])
}

/// An open LABEL_LIST index.
#[derive(Debug)]
pub struct LabelListIndex {
    file: BitmapFile,
    /// Rows whose list is null (empty when the file records none).
    null_lists: RowAddrSet,
}

impl LabelListIndex {
    /// Opens the index (reads the keys and the null-list map).
    pub async fn open(store: &dyn IndexStore) -> Result<Self> {
        let file = BitmapFile::open(store).await?;
        let null_lists = match common::global_buffer_at(&file.reader, NULLS_KEY, bitmap::FILE).await? {
            Some(bytes) => RowAddrSet::decode(&bytes, bitmap::FILE)?,
            None => RowAddrSet::new(),
        };
        Ok(Self { file, null_lists })
    }

    /// Per non-null literal of `values`: which keys equal it.
    fn key_masks(&self, values: &ArrayRef) -> Result<Vec<BooleanBuffer>> {
        (0..values.len())
            .filter(|&i| values.is_valid(i))
            .map(|i| {
                Ok(definite(&cmp::eq(
                    &self.file.keys,
                    &arrow_array::Scalar::new(values.slice(i, 1)),
                )?))
            })
            .collect()
    }

    async fn search_impl(&self, query: &ScalarQuery) -> Result<SearchResult> {
        if !self.can_answer(query) {
            return Err(cannot_answer(ScalarIndexType::LabelList, query));
        }
        match query {
            ScalarQuery::IsNull => Ok(SearchResult::Exact(self.null_lists.clone())),
            ScalarQuery::LabelsAny(values) => {
                let mut any = BooleanBuffer::new_unset(self.file.keys.len());
                for m in self.key_masks(values)? {
                    any = &any | &m;
                }
                Ok(SearchResult::Exact(self.file.union_of(&any).await?))
            }
            ScalarQuery::LabelsAll(values) => {
                let mut out: Option<RowAddrSet> = None;
                for m in self.key_masks(values)? {
                    let rows = self.file.union_of(&m).await?;
                    let next = match out {
                        None => rows,
                        Some(prev) => prev.intersection(&rows),
                    };
                    let empty = next.is_empty();
                    out = Some(next);
                    if empty {
                        break;
                    }
                }
                Ok(SearchResult::Exact(out.unwrap_or_default()))
            }
            other => Err(cannot_answer(ScalarIndexType::LabelList, other)),
        }
    }
}

impl ScalarIndex for LabelListIndex {
    fn kind(&self) -> ScalarIndexType {
        ScalarIndexType::LabelList
    }

    /// `IsNull`, and `LabelsAny`/`LabelsAll` with at least one literal and no null
    /// literal (null needles have murky SQL semantics: the caller evaluates those).
    fn can_answer(&self, query: &ScalarQuery) -> bool {
        match query {
            ScalarQuery::IsNull => true,
            ScalarQuery::LabelsAny(v) | ScalarQuery::LabelsAll(v) => !v.is_empty() && v.null_count() == 0,
            _ => false,
        }
    }

    fn search<'a>(&'a self, query: &'a ScalarQuery) -> BoxFuture<'a, Result<SearchResult>> {
        self.search_impl(query).boxed()
    }

    fn statistics(&self) -> BTreeMap<String, String> {
        BTreeMap::from([("num_bitmaps".to_string(), self.file.keys.len().to_string())])
    }
}
