//! BTREE: the column's values sorted (nulls first) with their row addresses, cut into
//! pages of `batch_size` rows, plus a small lookup of each page's min, max and null count.
//!
//! Files:
//! - `page_data.lance`: `values` (column type, nullable), `ids` (uint64). Page `i` is rows
//!   `[i * batch_size, (i + 1) * batch_size)`; a value may straddle pages.
//! - `page_lookup.lance`: `min`, `max` (column type, nullable), `null_count` (uint32),
//!   `page_idx` (uint32); schema metadata `batch_size` and `range_partitioned = "false"`.
//!   A page holding nulls reports a null `min` (pylance's rule), so a null `min` means
//!   "unknown lower bound" and a null `max` means "only nulls".
//!
//! The reader loads the lookup at open, prunes pages with it, and reads (and caches) only
//! the candidate pages of `page_data`; filtering them with Arrow kernels makes the answer
//! exact.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

use arrow_array::{Array, ArrayRef, BooleanArray, RecordBatch, UInt32Array, UInt64Array};
use arrow_buffer::BooleanBuffer;
use arrow_cast::display::{ArrayFormatter, FormatOptions};
use arrow_ord::cmp;
use arrow_schema::{DataType, Field, Schema};
use futures::future::BoxFuture;
use futures::FutureExt;
use lancelet_file::{FileReader, FileVersion, Projection};

use super::common::{self, definite, Input};
use super::{
    cannot_answer, IndexFile, IndexStore, ScalarIndex, ScalarIndexType, ScalarParams, ScalarQuery, SearchResult,
};
use crate::error::{Error, Result};
use crate::rowaddr::RowAddrSet;

const DATA: &str = "page_data.lance";
const LOOKUP: &str = "page_lookup.lance";
/// Bytes of decoded pages kept per open index (an IN list of a few hundred values touches
/// as many pages: 4,096 int64 rows with their ids are 64 KiB).
const CACHED_BYTES: usize = 32 << 20;

pub(crate) fn build(input: Input, params: &ScalarParams, version: FileVersion) -> Result<Vec<IndexFile>> {
    let dt = input.values.data_type().clone();
    let order = input.sort_indices()?;
    let values = arrow_select::take::take(input.values.as_ref(), &order, None)?;
    let ids = UInt64Array::from_iter_values(order.values().iter().map(|&i| input.addrs[i as usize]));
    let n = values.len();
    let bs = params.btree_batch_size as usize;

    let data_schema = Arc::new(Schema::new(vec![
        Field::new("values", dt.clone(), true),
        Field::new("ids", DataType::UInt64, false),
    ]));
    let data = RecordBatch::try_new(data_schema.clone(), vec![values.clone(), Arc::new(ids)])?;

    let (mut mins, mut maxs, mut nulls, mut pages) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for (page, start) in (0..n).step_by(bs).enumerate() {
        let end = (start + bs).min(n);
        let null_count = values.slice(start, end - start).null_count();
        // Nulls sort first, so a page's nulls lead it and its last row is its maximum.
        mins.push((null_count == 0).then_some(start as u32));
        maxs.push((null_count < end - start).then_some(end as u32 - 1));
        nulls.push(null_count as u32);
        pages.push(page as u32);
    }
    let lookup_schema = Arc::new(Schema::new(vec![
        Field::new("min", dt.clone(), true),
        Field::new("max", dt, true),
        Field::new("null_count", DataType::UInt32, false),
        Field::new("page_idx", DataType::UInt32, false),
    ]));
    let take = |idx: Vec<Option<u32>>| arrow_select::take::take(values.as_ref(), &UInt32Array::from(idx), None);
    let lookup = RecordBatch::try_new(
        lookup_schema.clone(),
        vec![
            take(mins)?,
            take(maxs)?,
            Arc::new(UInt32Array::from(nulls)),
            Arc::new(UInt32Array::from(pages)),
        ],
    )?;
    let md = [
        ("batch_size", params.btree_batch_size.to_string()),
        ("range_partitioned", "false".to_string()),
    ];
    Ok(vec![
        common::write_lance(DATA, data_schema, data, &[], &[], version)?,
        common::write_lance(LOOKUP, lookup_schema, lookup, &md, &[], version)?,
    ])
}

/// An open BTREE index.
#[derive(Debug)]
pub struct BTreeIndex {
    mins: ArrayRef,
    maxs: ArrayRef,
    null_counts: Vec<u32>,
    /// Row range of each lookup entry in `page_data`.
    pages: Vec<std::ops::Range<u64>>,
    data: Arc<FileReader>,
    values_and_ids: Projection,
    /// Decoded pages and their total size in bytes.
    cache: Mutex<(HashMap<usize, RecordBatch>, usize)>,
}

impl BTreeIndex {
    /// Opens the index: reads and checks the page lookup.
    pub async fn open(store: &dyn IndexStore) -> Result<Self> {
        let lookup = common::open_file(store, LOOKUP).await?;
        let data = common::open_file(store, DATA).await?;
        let bs: u64 = common::metadata(&lookup, "batch_size")
            .and_then(|v| v.parse().ok())
            .filter(|b| *b > 0)
            .ok_or_else(|| Error::corrupt(LOOKUP, "missing or bad batch_size"))?;
        let batch = common::read_columns(&lookup, &["min", "max", "null_count", "page_idx"]).await?;
        let mins = common::column(&batch, "min", LOOKUP)?.clone();
        let maxs = common::column(&batch, "max", LOOKUP)?.clone();
        let null_counts = common::u32s(&batch, "null_count", LOOKUP)?;
        let rows = data.num_rows();
        let pages = common::u32s(&batch, "page_idx", LOOKUP)?
            .into_iter()
            .map(|p| {
                let start = u64::from(p).saturating_mul(bs);
                if start >= rows {
                    return Err(Error::corrupt(
                        LOOKUP,
                        format!("page {p} starts past the {rows} rows of {DATA}"),
                    ));
                }
                Ok(start..(start.saturating_add(bs)).min(rows))
            })
            .collect::<Result<Vec<_>>>()?;
        let values_and_ids = data.projection(Some(&["values".to_string(), "ids".to_string()]))?;
        let value_type = values_and_ids.schema().field(0).data_type();
        if mins.data_type() != value_type || maxs.data_type() != value_type {
            return Err(Error::corrupt(LOOKUP, "min/max type differs from the page values"));
        }
        if values_and_ids.schema().field(1).data_type() != &DataType::UInt64 {
            return Err(Error::corrupt(DATA, "ids are not uint64"));
        }
        Ok(Self {
            mins,
            maxs,
            null_counts,
            pages,
            data,
            values_and_ids,
            cache: Mutex::new((HashMap::new(), 0)),
        })
    }

    /// Lookup entries whose range may hold a value matching `query`.
    fn candidate_pages(&self, query: &ScalarQuery) -> Result<BooleanBuffer> {
        let n = self.pages.len();
        // A page with a null max holds only nulls; a null min means "unknown" (nulls lead).
        let has_values = match self.maxs.logical_nulls() {
            Some(nulls) => nulls.inner().clone(),
            None => BooleanBuffer::new_set(n),
        };
        let above = |m: BooleanArray| -> BooleanBuffer { !&definite(&m) };
        match query {
            ScalarQuery::IsNull => Ok(self.null_counts.iter().map(|&c| c > 0).collect()),
            ScalarQuery::Equals(v) => {
                let v = common::literal(v)?;
                let lo_ok = definite(&cmp::gt_eq(&self.maxs, &v)?);
                let hi_ok = above(cmp::gt(&self.mins, &v)?);
                Ok(&(&lo_ok & &hi_ok) & &has_values)
            }
            ScalarQuery::Range { lower, upper } => {
                let mut out = has_values;
                if let Some((v, inclusive)) = common::bound(lower)? {
                    let m = if inclusive {
                        cmp::gt_eq(&self.maxs, &v)?
                    } else {
                        cmp::gt(&self.maxs, &v)?
                    };
                    out = &out & &definite(&m);
                }
                if let Some((v, inclusive)) = common::bound(upper)? {
                    let m = if inclusive {
                        cmp::gt(&self.mins, &v)?
                    } else {
                        cmp::gt_eq(&self.mins, &v)?
                    };
                    out = &out & &above(m);
                }
                Ok(out)
            }
            ScalarQuery::IsIn(list) => {
                let mut out = BooleanBuffer::new_unset(n);
                for i in (0..list.len()).filter(|&i| list.is_valid(i)) {
                    let one = self.candidate_pages(&ScalarQuery::Equals(list.slice(i, 1)))?;
                    out = &out | &one;
                }
                Ok(out)
            }
            other => Err(cannot_answer(ScalarIndexType::BTree, other)),
        }
    }

    async fn page(&self, page: usize) -> Result<RecordBatch> {
        if let Some(b) = self.cache.lock().ok().and_then(|c| c.0.get(&page).cloned()) {
            return Ok(b);
        }
        let range = self.pages[page].clone();
        let batch = self.data.read_ranges(&self.values_and_ids, &[range], None).await?;
        if let Ok(mut c) = self.cache.lock() {
            let size = batch.get_array_memory_size();
            if c.1 + size > CACHED_BYTES {
                *c = (HashMap::new(), 0);
            }
            if c.0.insert(page, batch.clone()).is_none() {
                c.1 += size;
            }
        }
        Ok(batch)
    }

    async fn search_impl(&self, query: &ScalarQuery) -> Result<SearchResult> {
        // Each page is searched for what it may hold: an IN list's values are sent only to
        // the pages whose bounds admit them (usually one value to one page, not every value
        // compared with every row of every candidate page).
        let per_page: Vec<(usize, ScalarQuery)> = match query {
            ScalarQuery::IsIn(list) => {
                let mut values: BTreeMap<usize, Vec<u32>> = BTreeMap::new();
                for i in (0..list.len()).filter(|&i| list.is_valid(i)) {
                    let pages = self.candidate_pages(&ScalarQuery::Equals(list.slice(i, 1)))?;
                    for page in pages.set_indices() {
                        values.entry(page).or_default().push(i as u32);
                    }
                }
                values
                    .into_iter()
                    .map(|(page, idx)| {
                        let sub = arrow_select::take::take(list.as_ref(), &UInt32Array::from(idx), None)?;
                        Ok((page, ScalarQuery::IsIn(sub)))
                    })
                    .collect::<Result<_>>()?
            }
            _ => self
                .candidate_pages(query)?
                .set_indices()
                .map(|page| (page, query.clone()))
                .collect(),
        };
        let mut out = RowAddrSet::new();
        for (page, query) in per_page {
            let batch = self.page(page).await?;
            let mask = common::query_mask(batch.column(0).as_ref(), &query)?;
            let ids = common::u64s(&batch, "ids", DATA)?;
            mask.set_indices().for_each(|i| out.insert(ids[i]));
        }
        Ok(SearchResult::Exact(out))
    }
}

/// A value of a lookup column as pylance prints it in statistics ("NULL" when null).
fn show(array: &ArrayRef, i: usize) -> String {
    if array.is_null(i) {
        return "NULL".into();
    }
    if let arrow_schema::DataType::Timestamp(..) = array.data_type() {
        // pylance reports timestamps as their raw integer (in the column's unit).
        if let Ok(raw) = arrow_cast::cast(array, &arrow_schema::DataType::Int64) {
            return show(&raw, i);
        }
    }
    ArrayFormatter::try_new(array.as_ref(), &FormatOptions::default())
        .map(|f| f.value(i).to_string())
        .unwrap_or_default()
}

impl ScalarIndex for BTreeIndex {
    fn kind(&self) -> ScalarIndexType {
        ScalarIndexType::BTree
    }

    fn can_answer(&self, query: &ScalarQuery) -> bool {
        query.is_comparison()
    }

    fn search<'a>(&'a self, query: &'a ScalarQuery) -> BoxFuture<'a, Result<SearchResult>> {
        self.search_impl(query).boxed()
    }

    fn statistics(&self) -> BTreeMap<String, String> {
        let mut s = BTreeMap::new();
        if !self.pages.is_empty() {
            s.insert("min".into(), show(&self.mins, 0));
            s.insert("max".into(), show(&self.maxs, self.pages.len() - 1));
        }
        s.insert("num_pages".into(), self.pages.len().to_string());
        s
    }
}
