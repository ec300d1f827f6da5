//! pylance 14's page rules ([`PageRules::Pylance`]): when a column is flushed and how a
//! flush is cut into pages, so that the same batches give the same pages as pylance.
//!
//! The rules, established by writing with pylance 14.0.2 and counting its pages:
//!
//! * Every column (2.0) or leaf column (2.1+) buffers on its own, and flushes once the
//!   bytes it counted since its last page pass the cache size (`data_cache_bytes`
//!   divided among the top-level fields). A batch of no rows is not counted at all.
//! * The bytes counted for an array are its in-memory size as Arrow measures it
//!   ([`Array::get_array_memory_size`]): whole buffers, so that a slice of a larger
//!   array counts all of its parent's buffers, plus the size of the array structures.
//!   At 2.1+ a leaf's own validity is not counted. A 2.0 list counts its offsets (an
//!   integer array) and its validity (a boolean array) in its own offsets column, its
//!   items in theirs.
//! * 2.0: a flush is one page, except a flush of a single array, which is cut into
//!   `ceil(bytes / max_page_bytes)` pages (at most one per row) of equal rows, `bytes`
//!   being the size of its buffers ([`Array::get_buffer_memory_size`]), or of the
//!   compact copy pylance keeps of an array that did not flush at once (see
//!   [`copied_bytes`]). A list's offsets flush forces its items to flush too.
//! * 2.1+: `max_page_bytes` plays no part. A flush is one page, unless its leaf has
//!   lists and entries that own no value (null or empty lists): then a page holding such
//!   an entry takes at most [`level_budget`] levels, cut between top-level rows
//!   ([`level_budget_ends`]).

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::{new_empty_array, Array, ArrayRef, BooleanArray, Int32Array, Int64Array, StructArray};
use arrow_data::ArrayData;
use arrow_schema::{DataType, Field, FieldRef};
use lancelet_encoding::v2_1::Shredded;

use crate::error::{Error, Result};

/// Bytes pylance counts for `array` when it buffers it.
pub(super) fn counted_bytes(array: &dyn Array) -> u64 {
    array.get_array_memory_size() as u64
}

/// 2.1+: the bytes pylance counts for each leaf column of `field` in `array` (in column
/// order), each leaf's own validity left out.
pub(super) fn leaf_counted_bytes(field: &Field, array: &ArrayRef, out: &mut Vec<u64>) -> Result<()> {
    match field.data_type() {
        DataType::Struct(children) if !crate::plan::is_packed(field) => {
            let s = array.as_struct_opt().ok_or_else(|| mismatch(field, array))?;
            for (child, column) in children.iter().zip(s.columns()) {
                leaf_counted_bytes(child, column, out)?;
            }
            Ok(())
        }
        DataType::List(item) | DataType::LargeList(item) | DataType::Map(item, _) => {
            leaf_counted_bytes(item, &list_items(field, array)?, out)
        }
        _ => {
            let own_nulls = array.nulls().map_or(0, |n| n.buffer().capacity());
            out.push(counted_bytes(array.as_ref()).saturating_sub(own_nulls as u64));
            Ok(())
        }
    }
}

/// The items of the lists of `array` (of list or map field `field`): the values between
/// its first and last offsets.
fn list_items(field: &Field, array: &ArrayRef) -> Result<ArrayRef> {
    fn trimmed<O: arrow_array::OffsetSizeTrait>(l: &arrow_array::GenericListArray<O>) -> ArrayRef {
        let o = l.value_offsets();
        let first = o.first().map_or(0, |v| v.as_usize());
        let last = o.last().map_or(0, |v| v.as_usize());
        l.values().slice(first, last - first)
    }
    match array.data_type() {
        DataType::List(_) => Ok(trimmed(array.as_list::<i32>())),
        DataType::LargeList(_) => Ok(trimmed(array.as_list::<i64>())),
        DataType::Map(..) => {
            let m = array.as_map();
            let o = m.value_offsets();
            let first = o.first().map_or(0, |v| *v as usize);
            let last = o.last().map_or(0, |v| *v as usize);
            Ok(Arc::new(m.entries().slice(first, last - first)))
        }
        _ => Err(mismatch(field, array)),
    }
}

fn mismatch(field: &Field, array: &ArrayRef) -> Error {
    Error::InvalidArgument(format!(
        "field {:?} is {} but the array is {}",
        field.name(),
        field.data_type(),
        array.data_type()
    ))
}

/// 2.0: the bytes pylance counts for the offsets and for the validity of a list array.
pub(super) fn list_counted_bytes(array: &ArrayRef) -> (u64, u64) {
    let offsets: ArrayRef = match array.data_type() {
        DataType::LargeList(_) => Arc::new(Int64Array::new(
            array.as_list::<i64>().offsets().clone().into_inner(),
            None,
        )),
        _ => match array.as_list_opt::<i32>() {
            Some(l) => Arc::new(Int32Array::new(l.offsets().clone().into_inner(), None)),
            None => new_empty_array(&DataType::Int32),
        },
    };
    let validity: ArrayRef = match array.nulls() {
        Some(n) => Arc::new(BooleanArray::new(n.inner().clone(), None)),
        None => new_empty_array(&DataType::Boolean),
    };
    (counted_bytes(offsets.as_ref()), counted_bytes(validity.as_ref()))
}

/// 2.0: the buffer bytes of the copy pylance keeps of an array it buffers without
/// flushing: a copy of each of the array's buffers as the array holds them (a sliced
/// string array keeps all its value bytes), each allocated to its length rounded up
/// to 64 bytes.
pub(super) fn copied_bytes(array: &dyn Array) -> Result<u64> {
    Ok(copy_size(&array.to_data()))
}

/// Bytes of the copy of `data` (see [`copied_bytes`]).
fn copy_size(data: &ArrayData) -> u64 {
    let round = |b: usize| b.div_ceil(64) as u64 * 64;
    let nulls = data.nulls().map_or(0, |n| round(n.buffer().len()));
    let buffers: u64 = data.buffers().iter().map(|b| round(b.len())).sum();
    let children: u64 = data.child_data().iter().map(copy_size).sum();
    nulls + buffers + children
}

/// 2.0: into how many pages of how many rows a flush of one array of `rows` rows and
/// `bytes` buffer bytes is cut.
pub(super) fn split_rows(rows: usize, bytes: u64, max_page_bytes: u64) -> usize {
    let parts = usize::try_from(bytes.div_ceil(max_page_bytes.max(1)))
        .unwrap_or(usize::MAX)
        .min(rows);
    if parts <= 1 {
        rows.max(1)
    } else {
        rows.div_ceil(parts)
    }
}

/// Most levels a 2.1+ page holding an entry without a value may have: the levels must
/// fit 16 KiB of repetition and definition levels bit-packed at their widths, and
/// their count must fit 16 bits.
pub(super) fn level_budget(max_rep: u16, max_def: u16) -> usize {
    let bits = |v: u16| (u16::BITS - v.leading_zeros()) as usize;
    let width = (bits(max_rep) + bits(max_def)).max(1);
    (131_072 / width).min(u16::MAX as usize)
}

/// Where pylance ends the pages of one flush of a leaf with lists (row numbers, the last
/// one `num_rows`): a page is cut before a row that would take it past the
/// [`level_budget`] when the page or that row has an entry without a value. The widths
/// are those of the whole flush.
pub(super) fn level_budget_ends(leaf: &Shredded) -> Result<Vec<usize>> {
    let rows = leaf.row_levels().map_err(|e| Error::from_encoding("", e))?;
    let budget = level_budget(leaf.max_rep(), leaf.max_def());
    let mut ends = Vec::new();
    let (mut levels, mut invisible, mut start) = (0usize, false, 0usize);
    for (r, row) in rows.iter().enumerate() {
        let sparse = invisible || row.invisible;
        if r > start && sparse && levels + row.entries > budget {
            ends.push(r);
            (levels, invisible, start) = (0, false, r);
        }
        levels += row.entries;
        invisible |= row.invisible;
    }
    ends.push(rows.len());
    Ok(ends)
}

/// `field` and `array` cut down to the path to leaf `k` (in column order) and the leaf
/// index within the result, for shredding one leaf without the others. Maps are kept
/// whole (their entries must keep both children).
pub(super) fn leaf_path(field: &FieldRef, array: &ArrayRef, k: usize) -> Result<(FieldRef, ArrayRef, usize)> {
    match field.data_type() {
        DataType::Struct(children) if !crate::plan::is_packed(field) => {
            let s = array.as_struct_opt().ok_or_else(|| mismatch(field, array))?;
            let mut first = 0;
            for (child, column) in children.iter().zip(s.columns()) {
                let n = leaf_count(child);
                if k < first + n {
                    let (f, a, j) = leaf_path(child, column, k - first)?;
                    let kept = StructArray::try_new(vec![f.clone()].into(), vec![a], s.nulls().cloned())?;
                    let field = Field::new(field.name(), kept.data_type().clone(), field.is_nullable())
                        .with_metadata(field.metadata().clone());
                    return Ok((Arc::new(field), Arc::new(kept), j));
                }
                first += n;
            }
            Err(Error::InvalidArgument(format!(
                "field {:?} has no leaf {k}",
                field.name()
            )))
        }
        DataType::List(item) | DataType::LargeList(item) => {
            let (f, values, j) = leaf_path(item, &values_of(array, field)?, k)?;
            let list: ArrayRef = match array.data_type() {
                DataType::List(_) => {
                    let l = array.as_list::<i32>();
                    Arc::new(arrow_array::ListArray::try_new(
                        f.clone(),
                        l.offsets().clone(),
                        values,
                        l.nulls().cloned(),
                    )?)
                }
                _ => {
                    let l = array.as_list::<i64>();
                    Arc::new(arrow_array::LargeListArray::try_new(
                        f.clone(),
                        l.offsets().clone(),
                        values,
                        l.nulls().cloned(),
                    )?)
                }
            };
            let field = Field::new(field.name(), list.data_type().clone(), field.is_nullable())
                .with_metadata(field.metadata().clone());
            Ok((Arc::new(field), list, j))
        }
        _ => Ok((field.clone(), array.clone(), k)),
    }
}

/// The whole values array of a list array.
fn values_of(array: &ArrayRef, field: &Field) -> Result<ArrayRef> {
    match array.data_type() {
        DataType::List(_) => Ok(array.as_list::<i32>().values().clone()),
        DataType::LargeList(_) => Ok(array.as_list::<i64>().values().clone()),
        _ => Err(mismatch(field, array)),
    }
}

/// Number of 2.1+ leaf columns of `field`.
fn leaf_count(field: &FieldRef) -> usize {
    let mut out = Vec::new();
    super::leaf_fields(field, &mut out);
    out.len()
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::builder::{Int64Builder, ListBuilder};
    use arrow_array::{Float32Array, StringArray};

    /// The sizes pylance 14.0.2 (Arrow 58) counts, found by finding the cache size at
    /// which a batch first flushes: the array structures' own sizes must match them.
    #[test]
    fn counted_bytes_match_pylance() {
        let ints = Int64Array::from_iter_values(0..1000);
        assert_eq!(counted_bytes(&ints) - ints.get_buffer_memory_size() as u64, 96);
        let strings = StringArray::from_iter_values((0..1000).map(|i| format!("{i:08}")));
        assert_eq!(counted_bytes(&strings) - strings.get_buffer_memory_size() as u64, 120);
        let bools = BooleanArray::from_iter((0..1000).map(|i| Some(i % 3 == 0)));
        assert_eq!(counted_bytes(&bools) - bools.get_buffer_memory_size() as u64, 88);
        let fsl = arrow_array::FixedSizeListArray::new(
            Arc::new(Field::new("item", DataType::Float32, true)),
            4,
            Arc::new(Float32Array::from_iter_values((0..4000).map(|i| i as f32))),
            None,
        );
        // The list's own 104 bytes, then its child's 96 and 16000.
        assert_eq!(counted_bytes(&fsl), 104 + 96 + 16_000);
    }

    #[test]
    fn slices_count_their_parents_buffers() {
        let ints: ArrayRef = Arc::new(Int64Array::from_iter_values(0..1000));
        assert_eq!(counted_bytes(ints.slice(500, 10).as_ref()), 8000 + 96);
        // ... but the copy pylance keeps holds only the slice.
        assert_eq!(copied_bytes(ints.slice(500, 500).as_ref()).unwrap(), 4032);
    }

    /// Sizes pylance 14.0.2 gives single-array 2.0 flushes (the smallest
    /// `max_page_bytes` that leaves the array one page).
    #[test]
    fn copies_round_each_buffer_to_64_bytes() {
        let s: ArrayRef = Arc::new(StringArray::from_iter_values(
            (0..19_999).map(|i| format!("x{}", i % 3)),
        ));
        assert_eq!(copied_bytes(s.as_ref()).unwrap(), 120_000);
        let s: ArrayRef = Arc::new(StringArray::from_iter(
            (0..1001).map(|i| (i % 5 != 0).then(|| "y".repeat(i % 7))),
        ));
        assert_eq!(copied_bytes(s.as_ref()).unwrap(), 6592);
        // A slice's copy keeps all the value bytes (and the whole validity bitmap).
        assert_eq!(copied_bytes(s.slice(5, 900).as_ref()).unwrap(), 3648 + 2432 + 128);
        let ints: ArrayRef = Arc::new(Int64Array::from_iter((0..1001).map(|i| (i % 5 != 0).then_some(i))));
        assert_eq!(copied_bytes(ints.as_ref()).unwrap(), 8192);
        let ints: ArrayRef = Arc::new(Int64Array::from_iter_values(0..1001));
        assert_eq!(copied_bytes(ints.slice(3, 900).as_ref()).unwrap(), 7232);
        let bools: ArrayRef = Arc::new(BooleanArray::from_iter((0..1001).map(|i| Some(i % 3 == 0))));
        assert_eq!(copied_bytes(bools.as_ref()).unwrap(), 128);
        let s: ArrayRef = Arc::new(StringArray::from_iter_values((0..1001).map(|i| "y".repeat(i % 7))));
        assert_eq!(copied_bytes(s.as_ref()).unwrap(), 7040);
    }

    #[test]
    fn list_offsets_count_an_integer_and_a_boolean_array() {
        let mut b = ListBuilder::new(Int64Builder::new());
        for i in 0..1000 {
            b.append_value((0..i % 5).map(Some));
        }
        let l: ArrayRef = Arc::new(b.finish());
        let (offsets, validity) = list_counted_bytes(&l);
        let offsets_buffer = l.as_list::<i32>().offsets().inner().inner().capacity() as u64;
        assert_eq!((offsets, validity), (offsets_buffer + 96, 88));
    }

    #[test]
    fn single_arrays_split_into_equal_pages() {
        assert_eq!(split_rows(1000, 8000, 800), 100);
        assert_eq!(split_rows(1000, 8000, 799), 91);
        assert_eq!(split_rows(1000, 8000, 8000), 1000);
        assert_eq!(split_rows(3, 8000, 1), 1);
        assert_eq!(split_rows(0, 8000, 1), 1);
    }

    #[test]
    fn level_budgets_match_pylance() {
        // (max_rep, max_def) -> most levels per page, as pylance 14.0.2 cuts them.
        for (rep, def, levels) in [
            (1, 1, 65_535),
            (2, 1, 43_690),
            (1, 2, 43_690),
            (1, 5, 32_768),
            (4, 1, 32_768),
            (2, 5, 26_214),
            (2, 9, 21_845),
        ] {
            assert_eq!(level_budget(rep, def), levels, "rep {rep} def {def}");
        }
    }

    fn list_leaf(rows: &[Option<Vec<i64>>]) -> Shredded {
        let mut b = ListBuilder::new(Int64Builder::new());
        for r in rows {
            match r {
                Some(v) => b.append_value(v.iter().map(|x| Some(*x))),
                None => b.append_null(),
            }
        }
        let a: ArrayRef = Arc::new(b.finish());
        let f = Field::new("l", a.data_type().clone(), true);
        let mut leaves = lancelet_encoding::v2_1::shred(&f, a.as_ref()).unwrap_or_default();
        leaves.remove(0)
    }

    #[test]
    fn sparse_pages_are_cut_at_the_budget_and_dense_ones_are_not() {
        // Alternating [1] / []: 65535 levels per page.
        let rows: Vec<Option<Vec<i64>>> = (0..140_000).map(|i| Some(vec![1; i % 2])).collect();
        assert_eq!(
            level_budget_ends(&list_leaf(&rows)).unwrap(),
            vec![65_535, 131_070, 140_000]
        );
        // A dense run before the first empty list is a page of its own, however long.
        let mut rows: Vec<Option<Vec<i64>>> = (0..70_000).map(|_| Some(vec![1])).collect();
        rows.extend((0..70_000).map(|i| Some(vec![1; i % 2])));
        assert_eq!(
            level_budget_ends(&list_leaf(&rows)).unwrap(),
            vec![70_000, 135_535, 140_000]
        );
        // Without entries lacking values nothing is cut.
        let rows: Vec<Option<Vec<i64>>> = (0..100_000).map(|_| Some(vec![1, 2])).collect();
        assert_eq!(level_budget_ends(&list_leaf(&rows)).unwrap(), vec![100_000]);
        // A row bigger than the budget starts a page, which only a row with an entry
        // lacking a value ends (as pylance 14.0.2 cuts these rows).
        let rows = vec![None, Some(vec![7; 70_000]), Some(vec![1])];
        assert_eq!(level_budget_ends(&list_leaf(&rows)).unwrap(), vec![1, 3]);
        let rows = vec![None, Some(vec![7; 70_000]), None];
        assert_eq!(level_budget_ends(&list_leaf(&rows)).unwrap(), vec![1, 2, 3]);
    }

    #[test]
    fn a_leaf_path_keeps_one_leaf() {
        let inner = arrow_schema::Fields::from(vec![
            Field::new("a", DataType::Int64, true),
            Field::new("b", DataType::Utf8, true),
        ]);
        let s = StructArray::new(
            inner.clone(),
            vec![
                Arc::new(Int64Array::from(vec![1, 2])) as ArrayRef,
                Arc::new(StringArray::from(vec!["x", "y"])),
            ],
            Some(vec![true, false].into()),
        );
        let field: FieldRef = Arc::new(Field::new("s", DataType::Struct(inner), true));
        let array: ArrayRef = Arc::new(s);
        let (f, a, j) = leaf_path(&field, &array, 1).unwrap();
        assert_eq!(j, 0);
        assert_eq!(
            f.data_type(),
            &DataType::Struct(vec![Field::new("b", DataType::Utf8, true)].into())
        );
        assert_eq!(a.null_count(), 1);
        let whole = lancelet_encoding::v2_1::shred(&field, array.as_ref()).unwrap();
        let one = lancelet_encoding::v2_1::shred(&f, a.as_ref()).unwrap();
        assert_eq!(one.len(), 1);
        assert_eq!(one[0].def, whole[1].def);
        assert_eq!(one[0].layers, whole[1].layers);
    }
}
