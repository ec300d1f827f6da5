//! ZONEMAP: min, max, null and NaN counts per zone of rows (at most `rows_per_zone`
//! rows of one fragment).
//!
//! File `zonemap.lance`: `min`, `max` (column type, nullable), `null_count`, `nan_count`
//! (uint32), `fragment_id`, `zone_start`, `zone_length` (uint64; the zone covers offsets
//! `zone_start .. zone_start + zone_length` of the fragment). Schema metadata
//! `rows_per_zone` and `null_bitmap = "1"` naming global buffer 1: a row-address tree map
//! of the null rows, which makes `IS NULL` exact. Min and max ignore nulls and NaNs.
//!
//! Answers are zone ranges ([`SearchResult::AtMost`]), except `IsNull`.

use std::collections::BTreeMap;
use std::ops::Range;
use std::sync::Arc;

use arrow_array::{Array, ArrayRef, BooleanArray, RecordBatch, UInt32Array, UInt64Array};
use arrow_buffer::BooleanBuffer;
use arrow_ord::cmp;
use arrow_schema::{DataType, Field, Schema};
use futures::future::BoxFuture;
use futures::FutureExt;
use lancelet_file::FileVersion;

use super::common::{self, definite, Input};
use super::{
    cannot_answer, IndexFile, IndexStore, ScalarIndex, ScalarIndexType, ScalarParams, ScalarQuery, SearchResult,
};
use crate::error::{Error, Result};
use crate::rowaddr::RowAddrSet;

const FILE: &str = "zonemap.lance";

pub(crate) fn build(input: Input, params: &ScalarParams, version: FileVersion) -> Result<Vec<IndexFile>> {
    let input = input.sorted_by_addr()?;
    let dt = input.values.data_type().clone();
    let zones = common::zones(&input.addrs, params.rows_per_zone);
    let (mut mins, mut maxs, mut nulls, mut nans) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for z in &zones {
        let s = common::slice_stats(input.values.as_ref(), z.rows.clone())?;
        mins.push(s.min);
        maxs.push(s.max);
        nulls.push(s.nulls);
        nans.push(s.nans);
    }
    let null_rows = RowAddrSet::from_sorted_iter(
        input
            .addrs
            .iter()
            .enumerate()
            .filter(|(i, _)| input.values.is_null(*i))
            .map(|(_, a)| *a),
    );
    let schema = Arc::new(Schema::new(vec![
        Field::new("min", dt.clone(), true),
        Field::new("max", dt, true),
        Field::new("null_count", DataType::UInt32, false),
        Field::new("nan_count", DataType::UInt32, false),
        Field::new("fragment_id", DataType::UInt64, false),
        Field::new("zone_start", DataType::UInt64, false),
        Field::new("zone_length", DataType::UInt64, false),
    ]));
    let take = |idx: Vec<Option<u32>>| arrow_select::take::take(input.values.as_ref(), &UInt32Array::from(idx), None);
    let batch = RecordBatch::try_new(
        schema.clone(),
        vec![
            take(mins)?,
            take(maxs)?,
            Arc::new(UInt32Array::from(nulls)),
            Arc::new(UInt32Array::from(nans)),
            Arc::new(UInt64Array::from_iter_values(
                zones.iter().map(|z| u64::from(z.fragment)),
            )),
            Arc::new(UInt64Array::from_iter_values(zones.iter().map(|z| u64::from(z.start)))),
            Arc::new(UInt64Array::from_iter_values(zones.iter().map(|z| z.length))),
        ],
    )?;
    let md = [
        ("rows_per_zone", params.rows_per_zone.to_string()),
        ("null_bitmap", "1".to_string()),
    ];
    Ok(vec![common::write_lance(
        FILE,
        schema,
        batch,
        &md,
        &[null_rows.encode()],
        version,
    )?])
}

/// Zone coordinates shared with the bloom filter: `(fragment, offsets)`, checked to stay
/// inside the 32-bit offset space. (The last offset, `u32::MAX`, cannot be covered: no
/// real fragment is that large, and a file claiming it is damaged anyway.)
pub(crate) fn read_zone_ranges(batch: &RecordBatch, file: &str) -> Result<Vec<(u32, Range<u32>)>> {
    let frags = common::u64s(batch, "fragment_id", file)?;
    let starts = common::u64s(batch, "zone_start", file)?;
    let lengths = common::u64s(batch, "zone_length", file)?;
    frags
        .iter()
        .zip(&starts)
        .zip(&lengths)
        .map(|((&f, &s), &l)| {
            let end = s.checked_add(l).filter(|e| *e <= 1 << 32);
            match (u32::try_from(f), u32::try_from(s), end) {
                (Ok(f), Ok(s), Some(end)) => Ok((f, s..end.min(u64::from(u32::MAX)) as u32)),
                _ => Err(Error::corrupt(file, format!("zone {f}:{s}+{l} is out of range"))),
            }
        })
        .collect()
}

/// The rows of the zones `mask` selects.
pub(crate) fn zone_rows(zones: &[(u32, Range<u32>)], mask: &BooleanBuffer) -> RowAddrSet {
    let mut out = RowAddrSet::new();
    for i in mask.set_indices() {
        let (f, r) = &zones[i];
        out.insert_range(*f, r.clone());
    }
    out
}

/// An open ZONEMAP index.
#[derive(Debug)]
pub struct ZoneMapIndex {
    mins: ArrayRef,
    maxs: ArrayRef,
    null_counts: Vec<u32>,
    nan_counts: Vec<u32>,
    zones: Vec<(u32, Range<u32>)>,
    rows_per_zone: String,
    null_rows: Option<RowAddrSet>,
}

impl ZoneMapIndex {
    /// Opens the index (reads every zone and the null map).
    pub async fn open(store: &dyn IndexStore) -> Result<Self> {
        let reader = common::open_file(store, FILE).await?;
        let batch = common::read_columns(
            &reader,
            &[
                "min",
                "max",
                "null_count",
                "nan_count",
                "fragment_id",
                "zone_start",
                "zone_length",
            ],
        )
        .await?;
        let null_rows = match common::global_buffer_at(&reader, "null_bitmap", FILE).await? {
            Some(bytes) => Some(RowAddrSet::decode(&bytes, FILE)?),
            None => None,
        };
        let mins = common::column(&batch, "min", FILE)?.clone();
        let maxs = common::column(&batch, "max", FILE)?.clone();
        if mins.data_type() != maxs.data_type() {
            return Err(Error::corrupt(FILE, "min and max have different types"));
        }
        Ok(Self {
            mins,
            maxs,
            null_counts: common::u32s(&batch, "null_count", FILE)?,
            nan_counts: common::u32s(&batch, "nan_count", FILE)?,
            zones: read_zone_ranges(&batch, FILE)?,
            rows_per_zone: common::metadata(&reader, "rows_per_zone").cloned().unwrap_or_default(),
            null_rows,
        })
    }

    fn has_nans(&self) -> BooleanBuffer {
        self.nan_counts.iter().map(|&c| c > 0).collect()
    }

    /// Zones whose [min, max] may hold a value matching the query. NaN rows are outside
    /// [min, max] but compare greater than everything in Arrow's total order, so zones
    /// holding NaNs stay candidates for every comparison.
    fn candidates(&self, query: &ScalarQuery) -> Result<BooleanBuffer> {
        let n = self.zones.len();
        let has_values = match self.maxs.logical_nulls() {
            Some(nulls) => nulls.inner().clone(),
            None => BooleanBuffer::new_set(n),
        };
        let not = |m: BooleanArray| -> BooleanBuffer { !&definite(&m) };
        let bounded = match query {
            ScalarQuery::Equals(v) => {
                let v = common::literal(v)?;
                &(&not(cmp::gt(&self.mins, &v)?) & &not(cmp::lt(&self.maxs, &v)?)) & &has_values
            }
            ScalarQuery::Range { lower, upper } => {
                let mut out = has_values;
                if let Some((v, inclusive)) = common::bound(lower)? {
                    let below = if inclusive {
                        cmp::lt(&self.maxs, &v)?
                    } else {
                        cmp::lt_eq(&self.maxs, &v)?
                    };
                    out = &out & &not(below);
                }
                if let Some((v, inclusive)) = common::bound(upper)? {
                    let above = if inclusive {
                        cmp::gt(&self.mins, &v)?
                    } else {
                        cmp::gt_eq(&self.mins, &v)?
                    };
                    out = &out & &not(above);
                }
                out
            }
            ScalarQuery::IsIn(list) => {
                let mut out = BooleanBuffer::new_unset(n);
                for i in (0..list.len()).filter(|&i| list.is_valid(i)) {
                    out = &out | &self.candidates(&ScalarQuery::Equals(list.slice(i, 1)))?;
                }
                return Ok(out);
            }
            other => return Err(cannot_answer(ScalarIndexType::ZoneMap, other)),
        };
        Ok(&bounded | &self.has_nans())
    }

    async fn search_impl(&self, query: &ScalarQuery) -> Result<SearchResult> {
        if let ScalarQuery::IsNull = query {
            return Ok(match &self.null_rows {
                Some(rows) => SearchResult::Exact(rows.clone()),
                None => {
                    let mask: BooleanBuffer = self.null_counts.iter().map(|&c| c > 0).collect();
                    SearchResult::AtMost(zone_rows(&self.zones, &mask))
                }
            });
        }
        let mask = self.candidates(query)?;
        Ok(SearchResult::AtMost(zone_rows(&self.zones, &mask)))
    }
}

impl ScalarIndex for ZoneMapIndex {
    fn kind(&self) -> ScalarIndexType {
        ScalarIndexType::ZoneMap
    }

    fn can_answer(&self, query: &ScalarQuery) -> bool {
        query.is_comparison()
    }

    fn search<'a>(&'a self, query: &'a ScalarQuery) -> BoxFuture<'a, Result<SearchResult>> {
        self.search_impl(query).boxed()
    }

    fn statistics(&self) -> BTreeMap<String, String> {
        BTreeMap::from([
            ("num_zones".to_string(), self.zones.len().to_string()),
            ("rows_per_zone".to_string(), self.rows_per_zone.clone()),
        ])
    }
}
