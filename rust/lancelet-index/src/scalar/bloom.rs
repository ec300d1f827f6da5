//! BLOOMFILTER: a split-block bloom filter per zone of rows.
//!
//! File `bloomfilter.lance`: `fragment_id`, `zone_start`, `zone_length` (uint64, zones as
//! in ZONEMAP), `has_null` (bool), `bloom_filter_data` (binary). Schema metadata
//! `bloomfilter_item` (distinct values a filter is sized for), `bloomfilter_probability`
//! and `null_bitmap = "1"` naming global buffer 1, a row-address tree map of null rows.
//!
//! The filter is Parquet's split-block bloom filter: 32-byte blocks of eight little-endian
//! u32 words; a value's XXH64 (seed 0) picks block `((h >> 32) · blocks) >> 32` and, with
//! `k = h as u32`, sets bit `(k · SALT[i]) >> 27` of word `i`. A value is hashed as its
//! native little-endian bytes (integers, floats, dates, times, timestamps at their own
//! width) or its raw bytes (strings, binaries). Filters take
//! `-8·n / ln(1 - p^(1/8))` bits for `n` items at probability `p`, rounded up to a power of
//! two bytes, at least 32. (All checked bit for bit against pylance's files.)
//!
//! Answers are zone ranges ([`SearchResult::AtMost`]), except `IsNull`.

use std::collections::BTreeMap;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef, BinaryArray, BooleanArray, RecordBatch, UInt64Array};
use arrow_buffer::BooleanBuffer;
use arrow_schema::{DataType, Field, Schema};
use futures::future::BoxFuture;
use futures::FutureExt;
use lancelet_file::FileVersion;

use super::common::{self, Input};
use super::xxhash::xxh64;
use super::zonemap::{read_zone_ranges, zone_rows};
use super::{
    cannot_answer, IndexFile, IndexStore, ScalarIndex, ScalarIndexType, ScalarParams, ScalarQuery, SearchResult,
};
use crate::error::{Error, Result};
use crate::rowaddr::RowAddrSet;

const FILE: &str = "bloomfilter.lance";
const SALT: [u32; 8] = [
    0x47b6_137b,
    0x4497_4d91,
    0x8824_ad5b,
    0xa2b7_289d,
    0x7054_95c7,
    0x2df1_424b,
    0x9efc_4947,
    0x5c6b_fb31,
];
const BLOCK: usize = 32;
const MAX_BYTES: usize = 128 * 1024 * 1024;

/// Whether values of `dt` can be hashed (the types pylance's bloom filter accepts).
pub(crate) fn hashable(dt: &DataType) -> bool {
    use DataType::*;
    matches!(
        dt,
        Int8 | Int16
            | Int32
            | Int64
            | UInt8
            | UInt16
            | UInt32
            | UInt64
            | Float32
            | Float64
            | Utf8
            | LargeUtf8
            | Binary
            | LargeBinary
            | Date32
            | Date64
            | Time32(_)
            | Time64(_)
            | Timestamp(_, _)
    )
}

/// The hash of each value of `values` (`None` for nulls).
fn hashes(values: &dyn Array) -> Result<Vec<Option<u64>>> {
    let dt = values.data_type();
    if !hashable(dt) {
        return Err(Error::Unsupported(format!("bloom filters of {dt} values")));
    }
    let n = values.len();
    let h = |b: &[u8]| Some(xxh64(b, 0));
    Ok(match dt {
        DataType::Utf8 => {
            let a = values.as_string::<i32>();
            (0..n)
                .map(|i| if a.is_valid(i) { h(a.value(i).as_bytes()) } else { None })
                .collect()
        }
        DataType::LargeUtf8 => {
            let a = values.as_string::<i64>();
            (0..n)
                .map(|i| if a.is_valid(i) { h(a.value(i).as_bytes()) } else { None })
                .collect()
        }
        DataType::Binary => {
            let a = values.as_binary::<i32>();
            (0..n)
                .map(|i| if a.is_valid(i) { h(a.value(i)) } else { None })
                .collect()
        }
        DataType::LargeBinary => {
            let a = values.as_binary::<i64>();
            (0..n)
                .map(|i| if a.is_valid(i) { h(a.value(i)) } else { None })
                .collect()
        }
        _ => {
            let width = dt
                .primitive_width()
                .ok_or_else(|| Error::Unsupported(format!("hashing {dt}")))?;
            let data = values.to_data();
            let buf = data
                .buffers()
                .first()
                .ok_or_else(|| Error::InvalidArgument("primitive array without values".into()))?;
            let bytes = buf.as_slice();
            let offset = data.offset();
            (0..n)
                .map(|i| {
                    if values.is_null(i) {
                        return Ok(None);
                    }
                    let start = (offset + i) * width;
                    bytes
                        .get(start..start + width)
                        .map(|b| Some(xxh64(b, 0)))
                        .ok_or_else(|| Error::InvalidArgument("primitive array shorter than its length".into()))
                })
                .collect::<Result<_>>()?
        }
    })
}

/// Bytes of a filter for `items` distinct values at false-positive rate `probability`.
fn filter_bytes(items: u64, probability: f64) -> usize {
    let bits = -8.0 * items as f64 / (1.0 - probability.powf(1.0 / 8.0)).ln();
    let bytes = ((bits as u64 / 8) as usize).clamp(BLOCK, MAX_BYTES);
    bytes.next_power_of_two()
}

/// The block and the eight bit masks of a hash.
fn probe(hash: u64, blocks: usize) -> (usize, [u32; 8]) {
    let block = (((hash >> 32) * blocks as u64) >> 32) as usize;
    let key = hash as u32;
    (block, SALT.map(|s| 1u32 << (key.wrapping_mul(s) >> 27)))
}

fn word(filter: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([filter[at], filter[at + 1], filter[at + 2], filter[at + 3]])
}

fn insert(filter: &mut [u8], hash: u64) {
    let (block, masks) = probe(hash, filter.len() / BLOCK);
    for (i, m) in masks.iter().enumerate() {
        let at = block * BLOCK + i * 4;
        let w = word(filter, at) | m;
        filter[at..at + 4].copy_from_slice(&w.to_le_bytes());
    }
}

/// Whether `filter` (a non-empty multiple of 32 bytes) may hold the value of `hash`.
fn may_contain(filter: &[u8], hash: u64) -> bool {
    let (block, masks) = probe(hash, filter.len() / BLOCK);
    masks
        .iter()
        .enumerate()
        .all(|(i, m)| word(filter, block * BLOCK + i * 4) & m != 0)
}

pub(crate) fn build(input: Input, params: &ScalarParams, version: FileVersion) -> Result<Vec<IndexFile>> {
    let input = input.sorted_by_addr()?;
    let hashes = hashes(input.values.as_ref())?;
    let zones = common::zones(&input.addrs, params.rows_per_zone);
    let size = filter_bytes(params.bloom_number_of_items, params.bloom_probability);
    let mut filters = Vec::with_capacity(zones.len());
    let mut has_null = Vec::with_capacity(zones.len());
    for z in &zones {
        let mut f = vec![0u8; size];
        let mut nulls = false;
        for h in &hashes[z.rows.clone()] {
            match h {
                Some(h) => insert(&mut f, *h),
                None => nulls = true,
            }
        }
        filters.push(f);
        has_null.push(nulls);
    }
    let null_rows = RowAddrSet::from_sorted_iter(
        input
            .addrs
            .iter()
            .zip(&hashes)
            .filter(|(_, h)| h.is_none())
            .map(|(a, _)| *a),
    );
    let schema = Arc::new(Schema::new(vec![
        Field::new("fragment_id", DataType::UInt64, false),
        Field::new("zone_start", DataType::UInt64, false),
        Field::new("zone_length", DataType::UInt64, false),
        Field::new("has_null", DataType::Boolean, false),
        Field::new("bloom_filter_data", DataType::Binary, false),
    ]));
    let batch = RecordBatch::try_new(
        schema.clone(),
        vec![
            Arc::new(UInt64Array::from_iter_values(
                zones.iter().map(|z| u64::from(z.fragment)),
            )),
            Arc::new(UInt64Array::from_iter_values(zones.iter().map(|z| u64::from(z.start)))),
            Arc::new(UInt64Array::from_iter_values(zones.iter().map(|z| z.length))),
            Arc::new(BooleanArray::from(has_null)),
            Arc::new(BinaryArray::from_iter_values(filters.iter())),
        ],
    )?;
    let md = [
        ("bloomfilter_item", params.bloom_number_of_items.to_string()),
        ("bloomfilter_probability", params.bloom_probability.to_string()),
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

/// An open BLOOMFILTER index.
#[derive(Debug)]
pub struct BloomFilterIndex {
    zones: Vec<(u32, std::ops::Range<u32>)>,
    has_null: Vec<bool>,
    filters: Vec<Vec<u8>>,
    items: String,
    probability: String,
    null_rows: Option<RowAddrSet>,
}

impl BloomFilterIndex {
    /// Opens the index (reads every zone's filter and the null map).
    pub async fn open(store: &dyn IndexStore) -> Result<Self> {
        let reader = common::open_file(store, FILE).await?;
        let batch = common::read_columns(
            &reader,
            &[
                "fragment_id",
                "zone_start",
                "zone_length",
                "has_null",
                "bloom_filter_data",
            ],
        )
        .await?;
        let zones = read_zone_ranges(&batch, FILE)?;
        let has_null = common::column(&batch, "has_null", FILE)?
            .as_boolean_opt()
            .ok_or_else(|| Error::corrupt(FILE, "has_null is not boolean"))?
            .iter()
            .map(|b| b.unwrap_or(true))
            .collect();
        let data = common::column(&batch, "bloom_filter_data", FILE)?;
        let data = data
            .as_binary_opt::<i32>()
            .ok_or_else(|| Error::corrupt(FILE, "bloom_filter_data is not binary"))?;
        let mut filters = Vec::with_capacity(data.len());
        for i in 0..data.len() {
            let f = data.value(i);
            if data.is_null(i) || f.is_empty() || f.len() % BLOCK != 0 {
                return Err(Error::corrupt(FILE, format!("zone {i}: a filter of {} bytes", f.len())));
            }
            filters.push(f.to_vec());
        }
        let null_rows = match common::global_buffer_at(&reader, "null_bitmap", FILE).await? {
            Some(bytes) => Some(RowAddrSet::decode(&bytes, FILE)?),
            None => None,
        };
        Ok(Self {
            zones,
            has_null,
            filters,
            items: common::metadata(&reader, "bloomfilter_item")
                .cloned()
                .unwrap_or_default(),
            probability: common::metadata(&reader, "bloomfilter_probability")
                .cloned()
                .unwrap_or_default(),
            null_rows,
        })
    }

    fn literals(query: &ScalarQuery) -> Option<&ArrayRef> {
        match query {
            ScalarQuery::Equals(v) | ScalarQuery::IsIn(v) => Some(v),
            _ => None,
        }
    }

    async fn search_impl(&self, query: &ScalarQuery) -> Result<SearchResult> {
        if let ScalarQuery::IsNull = query {
            return Ok(match &self.null_rows {
                Some(rows) => SearchResult::Exact(rows.clone()),
                None => {
                    let mask: BooleanBuffer = self.has_null.iter().copied().collect();
                    SearchResult::AtMost(zone_rows(&self.zones, &mask))
                }
            });
        }
        let values = Self::literals(query).ok_or_else(|| cannot_answer(ScalarIndexType::BloomFilter, query))?;
        if let ScalarQuery::Equals(v) = query {
            common::literal(v)?;
        }
        let hashes: Vec<u64> = hashes(values.as_ref())?.into_iter().flatten().collect();
        let mask: BooleanBuffer = self
            .filters
            .iter()
            .map(|f| hashes.iter().any(|h| may_contain(f, *h)))
            .collect();
        Ok(SearchResult::AtMost(zone_rows(&self.zones, &mask)))
    }
}

impl ScalarIndex for BloomFilterIndex {
    fn kind(&self) -> ScalarIndexType {
        ScalarIndexType::BloomFilter
    }

    fn can_answer(&self, query: &ScalarQuery) -> bool {
        match query {
            ScalarQuery::IsNull => true,
            q => Self::literals(q).is_some_and(|v| hashable(v.data_type())),
        }
    }

    fn search<'a>(&'a self, query: &'a ScalarQuery) -> BoxFuture<'a, Result<SearchResult>> {
        self.search_impl(query).boxed()
    }

    fn statistics(&self) -> BTreeMap<String, String> {
        BTreeMap::from([
            ("num_blocks".to_string(), self.zones.len().to_string()),
            ("number_of_items".to_string(), self.items.clone()),
            ("probability".to_string(), self.probability.clone()),
            ("type".to_string(), "BloomFilter".to_string()),
        ])
    }
}

#[cfg(test)]
mod tests {
    #![allow(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::panic,
        reason = "tests: a failed unwrap is a failed test"
    )]
    use super::*;

    #[test]
    fn filter_sizes_match_pylance() {
        // pylance: 8192 items at 0.00057 -> 32 KiB; 8 items at 0.01 -> one block.
        assert_eq!(filter_bytes(8192, 0.00057), 32768);
        assert_eq!(filter_bytes(8, 0.01), 32);
        assert_eq!(filter_bytes(1000, 0.01), 2048);
    }

    #[test]
    fn one_int64_matches_pylance_bits() {
        // pylance's filter (8 items, p = 0.01) of a zone holding only the int64 value 8.
        let expected: Vec<u8> = (0..32)
            .map(|i| {
                u8::from_str_radix(
                    &"0002000000004000000080004000000000000020000002000000000410000000"[i * 2..i * 2 + 2],
                    16,
                )
                .unwrap()
            })
            .collect();
        let mut f = vec![0u8; 32];
        insert(&mut f, xxh64(&8i64.to_le_bytes(), 0));
        assert_eq!(f, expected);
        assert!(may_contain(&f, xxh64(&8i64.to_le_bytes(), 0)));
    }
}
