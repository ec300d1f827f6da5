//! Dictionary encoding: bit-packed indices into one block of the distinct values.

use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef};

use crate::v2_1::bitpack::push_uint;
use crate::v2_1::compression::compress;
use crate::v2_1::hashing::{fast_map, FastMap};

use super::*;

/// The distinct values (in order of first appearance) and each value's index, or `None`
/// when there are more than `max_items` distinct values.
pub(super) fn distinct<'a>(
    values: impl Iterator<Item = &'a [u8]>,
    max_items: usize,
) -> Option<(Vec<&'a [u8]>, Vec<u8>)> {
    let mut map: FastMap<&[u8], u32> = fast_map(max_items.min(256));
    let mut items = Vec::new();
    let mut indices = Vec::new();
    for v in values {
        let next = items.len() as u32;
        let i = *map.entry(v).or_insert(next);
        if i == next {
            if items.len() >= max_items {
                return None;
            }
            items.push(v);
        }
        indices.extend_from_slice(&i.to_le_bytes());
    }
    Some((items, indices))
}

/// Dictionary encoding: `u32` indices as `InlineBitpacking(32)`, the items as one block
/// (`Variable` block form for strings, `Flat` for fixed width), wrapped in General(LZ4)
/// at 2.2. `None` when there are too many distinct values.
pub(super) fn dictionary(page: &Page, v2_2: bool, index_bytes: Option<usize>) -> Result<Option<MiniBlockValues>> {
    dictionary_with(page, v2_2, index_bytes, true)
}

/// A dictionary page of `page`, with indices of `index_bytes` (default 4); `None` when
/// the distinct values do not fit the indices or (`must_pay`) exceed half the values.
pub(super) fn dictionary_with(
    page: &Page,
    v2_2: bool,
    index_bytes: Option<usize>,
    must_pay: bool,
) -> Result<Option<MiniBlockValues>> {
    let len = page.len();
    let index_bytes = index_bytes.unwrap_or(4);
    // Signed keys of `index_bytes` hold indices below 2^(8 * index_bytes - 1).
    let key_limit = if index_bytes >= 8 {
        usize::MAX
    } else {
        1usize << (8 * index_bytes - 1)
    };
    let max_items = if must_pay { (len / 2).max(1) } else { len.max(1) }.min(key_limit);
    let (items_enc, block, count, indices) = match page {
        Page::Var { offsets, data, large } => {
            let Some((items, indices)) = distinct(var_values(offsets, data), max_items) else {
                return Ok(None);
            };
            let ow = if *large { 8 } else { 4 };
            let total: usize = items.iter().map(|v| v.len()).sum();
            let start = 2 * ow + (items.len() + 1) * ow;
            let mut block = Vec::with_capacity(start + total);
            push_uint(&mut block, ow as u64 * 8, ow);
            push_uint(&mut block, start as u64, ow);
            let mut at = 0u64;
            push_uint(&mut block, 0, ow);
            for v in &items {
                at += v.len() as u64;
                push_uint(&mut block, at, ow);
            }
            for v in &items {
                block.extend_from_slice(v);
            }
            (var_enc(*large), block, items.len(), indices)
        }
        // Fixed-width dictionaries are a 2.2 choice, but an Arrow dictionary column of
        // fixed-width values is stored as one at 2.1 too (as pylance does).
        Page::Fixed { width, data, .. } if v2_2 || !must_pay => {
            let Some((items, indices)) = distinct(data.chunks_exact(*width), max_items) else {
                return Ok(None);
            };
            (flat_enc(*width as u64 * 8), items.concat(), items.len(), indices)
        }
        _ => return Ok(None),
    };
    finish(items_enc, block, count, indices, len, v2_2, index_bytes).map(Some)
}

/// The dictionary page of an Arrow dictionary array as pylance writes it: the array's own
/// dictionary (every item, in order, used or not) and its keys as the indices (null rows
/// point at item 0; their validity is in the definition levels). `None` when its items
/// are of a type kept no other way than as values, or there are too many for the keys.
pub(super) fn arrow_dictionary(
    values: &dyn Array,
    v2_2: bool,
    index_bytes: Option<usize>,
) -> Result<Option<MiniBlockValues>> {
    let dict = values.as_any_dictionary();
    // Null items are left out (rows using them are null rows), as pylance leaves them.
    let (items, rank): (ArrayRef, Option<Vec<u32>>) = match dict.values().logical_nulls() {
        Some(n) if n.null_count() > 0 => {
            let mut next = 0u32;
            let rank = (0..n.len())
                .map(|i| {
                    let r = next;
                    next += u32::from(n.is_valid(i));
                    r
                })
                .collect();
            let keep = arrow_array::BooleanArray::new(n.inner().clone(), None);
            (arrow_select::filter::filter(dict.values().as_ref(), &keep)?, Some(rank))
        }
        _ => (dict.values().clone(), None),
    };
    let index_bytes = index_bytes.unwrap_or(4);
    let count = items.len();
    if count == 0 || (index_bytes < 8 && count > 1usize << (8 * index_bytes - 1)) {
        return Ok(None);
    }
    let data = items.to_data();
    let (items_enc, block) = match extract(items.as_ref(), &data)? {
        Page::Var { offsets, data, large } => {
            let ow = if large { 8 } else { 4 };
            let start = 2 * ow + (count + 1) * ow;
            let mut block = Vec::with_capacity(start + data.len());
            push_uint(&mut block, ow as u64 * 8, ow);
            push_uint(&mut block, start as u64, ow);
            let base = offsets.first().copied().unwrap_or(0);
            for o in offsets.iter() {
                push_uint(&mut block, o - base, ow);
            }
            let last = offsets.last().copied().unwrap_or(0);
            block.extend_from_slice(&data[base as usize..last as usize]);
            (var_enc(large), block)
        }
        Page::Fixed { width, data, .. } => (flat_enc(width as u64 * 8), data[..width * count].to_vec()),
        _ => return Ok(None),
    };
    let keys = dict.normalized_keys();
    let valid = dict.keys().nulls();
    let mut indices = Vec::with_capacity(keys.len() * 4);
    for (row, k) in keys.into_iter().enumerate() {
        let k = match &rank {
            _ if valid.is_some_and(|n| n.is_null(row)) => 0,
            Some(r) => r.get(k).copied().unwrap_or(0).min(count as u32 - 1) as usize,
            None => k,
        };
        indices.extend_from_slice(&(k as u32).to_le_bytes());
    }
    finish(items_enc, block, count, indices, values.len(), v2_2, index_bytes).map(Some)
}

/// The dictionary page of `count` items (`block`, encoded as `items_enc`) and `len`
/// `u32` indices, written with indices of `index_bytes`.
#[allow(
    clippy::too_many_arguments,
    reason = "the dictionary encoder's parts, taken apart by its one caller"
)]
fn finish(
    items_enc: pb21::CompressiveEncoding,
    block: Vec<u8>,
    count: usize,
    indices: Vec<u8>,
    len: usize,
    v2_2: bool,
    index_bytes: usize,
) -> Result<MiniBlockValues> {
    let (enc, block) = if v2_2 {
        let b = compress(CompressionScheme::CompressionAlgorithmLz4, None, &block)?;
        (
            general_enc(CompressionScheme::CompressionAlgorithmLz4, None, items_enc),
            b,
        )
    } else {
        (items_enc, block)
    };
    let indices = if index_bytes == 4 {
        indices
    } else {
        indices
            .chunks_exact(4)
            .flat_map(|i| {
                let v = u64::from(u32::from_le_bytes([i[0], i[1], i[2], i[3]]));
                v.to_le_bytes().into_iter().take(index_bytes)
            })
            .collect()
    };
    let mut m = inline(index_bytes, &indices, len)?;
    m.dictionary = Some((enc, block, count as u64));
    Ok(m)
}
