//! Helpers every index type shares: training input, Lance file I/O, query evaluation over
//! value arrays with SQL null semantics, sorting, and zones of rows.

use std::cmp::Ordering;
use std::ops::{Bound, Range};
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{Float16Type, Float32Type, Float64Type};
use arrow_array::{new_empty_array, Array, ArrayRef, BooleanArray, RecordBatch, Scalar, UInt32Array};
use arrow_buffer::BooleanBuffer;
use arrow_ord::cmp;
use arrow_ord::ord::make_comparator;
use arrow_ord::sort::{sort_to_indices, SortOptions};
use arrow_schema::{DataType, SchemaRef};
use lancelet_file::{FileReader, FileVersion, FileWriter, WriterOptions};

use super::{IndexStore, ScalarQuery};
use crate::error::{Error, Result};
use crate::rowaddr::{fragment_of, offset_of};

/// All training input of one index, concatenated.
pub(crate) struct Input {
    pub values: ArrayRef,
    pub addrs: Vec<u64>,
}

impl Input {
    pub fn concat(data_type: &DataType, batches: &[super::TrainingBatch]) -> Result<Self> {
        let values = if batches.is_empty() {
            new_empty_array(data_type)
        } else {
            let arrays: Vec<&dyn Array> = batches.iter().map(|b| b.values.as_ref()).collect();
            arrow_select::concat::concat(&arrays)?
        };
        let addrs = batches
            .iter()
            .flat_map(|b| b.row_addrs.values().iter().copied())
            .collect();
        Ok(Self { values, addrs })
    }

    /// The input ordered by row address (training input normally already is).
    pub fn sorted_by_addr(self) -> Result<Self> {
        if self.addrs.windows(2).all(|w| w[0] <= w[1]) {
            return Ok(self);
        }
        let mut order: Vec<u32> = (0..self.addrs.len() as u32).collect();
        order.sort_by_key(|&i| self.addrs[i as usize]);
        let idx = UInt32Array::from(order);
        let values = arrow_select::take::take(self.values.as_ref(), &idx, None)?;
        let addrs = idx.values().iter().map(|&i| self.addrs[i as usize]).collect();
        Ok(Self { values, addrs })
    }

    /// Row positions ordered by (value with nulls first, row address).
    pub fn sort_indices(&self) -> Result<UInt32Array> {
        let opts = Some(SortOptions {
            descending: false,
            nulls_first: true,
        });
        // Equal values need no order among themselves (pylance's files leave ties in any
        // order, and searches return every row of a value): a one-column sort is several
        // times faster than a lexicographic sort with the addresses as tie-breaker.
        Ok(sort_to_indices(self.values.as_ref(), opts, None)?)
    }
}

/// A file to write: schema, its rows, extra schema metadata and global buffers (whose
/// indexes 1, 2, ... the metadata may name).
pub fn write_lance(
    name: &str,
    schema: SchemaRef,
    batch: RecordBatch,
    metadata: &[(&str, String)],
    global_buffers: &[Vec<u8>],
    version: FileVersion,
) -> Result<super::IndexFile> {
    let opts = WriterOptions {
        version,
        ..Default::default()
    };
    let mut w = FileWriter::try_new(Vec::new(), name, schema, opts)?;
    for b in global_buffers {
        w.add_global_buffer(b)?;
    }
    for (k, v) in metadata {
        w.add_schema_metadata(k.to_string(), v.clone());
    }
    if batch.num_rows() > 0 {
        w.write_batch(&batch)?;
    }
    let (bytes, _) = w.finish()?;
    Ok(super::IndexFile {
        name: name.to_string(),
        bytes,
    })
}

/// Opens index file `name` of `store`.
pub async fn open_file(store: &dyn IndexStore, name: &str) -> Result<Arc<FileReader>> {
    let io = store.open(name).await?;
    Ok(Arc::new(FileReader::open(io).await?))
}

/// Reads every row of the named columns.
pub async fn read_columns(reader: &FileReader, columns: &[&str]) -> Result<RecordBatch> {
    let names: Vec<String> = columns.iter().map(|c| c.to_string()).collect();
    let p = reader.projection(Some(&names))?;
    let all = 0..reader.num_rows();
    Ok(reader.read_ranges(&p, std::slice::from_ref(&all), None).await?)
}

/// Column `name` of a batch read from `file` (missing: corrupt).
pub fn column<'a>(batch: &'a RecordBatch, name: &str, file: &str) -> Result<&'a ArrayRef> {
    batch
        .column_by_name(name)
        .ok_or_else(|| Error::corrupt(file, format!("no column {name:?}")))
}

/// A non-null `u64` column.
pub fn u64s(batch: &RecordBatch, name: &str, file: &str) -> Result<Vec<u64>> {
    let c = column(batch, name, file)?;
    match c.as_primitive_opt::<arrow_array::types::UInt64Type>() {
        Some(a) if a.null_count() == 0 => Ok(a.values().to_vec()),
        _ => Err(Error::corrupt(
            file,
            format!("column {name:?} is not a non-null uint64"),
        )),
    }
}

/// A non-null `u32` column.
pub fn u32s(batch: &RecordBatch, name: &str, file: &str) -> Result<Vec<u32>> {
    let c = column(batch, name, file)?;
    match c.as_primitive_opt::<arrow_array::types::UInt32Type>() {
        Some(a) if a.null_count() == 0 => Ok(a.values().to_vec()),
        _ => Err(Error::corrupt(
            file,
            format!("column {name:?} is not a non-null uint32"),
        )),
    }
}

/// Schema-metadata value `key` of a file.
pub fn metadata<'a>(reader: &'a FileReader, key: &str) -> Option<&'a String> {
    reader.metadata().schema.metadata().get(key)
}

/// Reads the global buffer a schema-metadata key points at (`"1"` = buffer 1).
pub(crate) async fn global_buffer_at(reader: &FileReader, key: &str, file: &str) -> Result<Option<Vec<u8>>> {
    let Some(v) = metadata(reader, key) else {
        return Ok(None);
    };
    let index: usize = v
        .parse()
        .ok()
        .filter(|i| *i > 0 && *i < reader.metadata().global_buffers.len())
        .ok_or_else(|| Error::corrupt(file, format!("{key} = {v:?} names no global buffer")))?;
    Ok(Some(reader.read_global_buffer(index).await?.as_slice().to_vec()))
}

/// A query literal as a scalar datum (an array of exactly one value).
pub(crate) fn literal(value: &ArrayRef) -> Result<Scalar<ArrayRef>> {
    if value.len() != 1 {
        return Err(Error::InvalidArgument(format!(
            "a query literal must hold one value, not {}",
            value.len()
        )));
    }
    Ok(Scalar::new(value.clone()))
}

/// The positions where a comparison is true (null = false).
pub(crate) fn definite(mask: &BooleanArray) -> BooleanBuffer {
    match mask.nulls() {
        Some(n) => mask.values() & n.inner(),
        None => mask.values().clone(),
    }
}

/// The literal of a bound and whether it is inclusive; `None` for unbounded.
pub(crate) fn bound(b: &Bound<ArrayRef>) -> Result<Option<(Scalar<ArrayRef>, bool)>> {
    Ok(match b {
        Bound::Unbounded => None,
        Bound::Included(v) => Some((literal(v)?, true)),
        Bound::Excluded(v) => Some((literal(v)?, false)),
    })
}

/// Rows of `values` matching an `Equals`, `Range`, `IsIn` or `IsNull` query (SQL
/// semantics: null values match only `IsNull`, null literals match nothing).
pub(crate) fn query_mask(values: &dyn Array, query: &ScalarQuery) -> Result<BooleanBuffer> {
    let n = values.len();
    match query {
        ScalarQuery::Equals(v) => Ok(definite(&cmp::eq(&values, &literal(v)?)?)),
        ScalarQuery::Range { lower, upper } => {
            let mut out = match values.nulls() {
                Some(nulls) => nulls.inner().clone(),
                None => BooleanBuffer::new_set(n),
            };
            if let Some((v, inclusive)) = bound(lower)? {
                let m = if inclusive {
                    cmp::gt_eq(&values, &v)?
                } else {
                    cmp::gt(&values, &v)?
                };
                out = &out & &definite(&m);
            }
            if let Some((v, inclusive)) = bound(upper)? {
                let m = if inclusive {
                    cmp::lt_eq(&values, &v)?
                } else {
                    cmp::lt(&values, &v)?
                };
                out = &out & &definite(&m);
            }
            Ok(out)
        }
        ScalarQuery::IsIn(list) => {
            let mut out = BooleanBuffer::new_unset(n);
            for i in 0..list.len() {
                if list.is_valid(i) {
                    let m = cmp::eq(&values, &Scalar::new(list.slice(i, 1)))?;
                    out = &out | &definite(&m);
                }
            }
            Ok(out)
        }
        ScalarQuery::IsNull => Ok(match values.logical_nulls() {
            Some(nulls) => !nulls.inner(),
            None => BooleanBuffer::new_unset(n),
        }),
        other => Err(Error::InvalidArgument(format!("{other:?} is not a value comparison"))),
    }
}

/// Whether value `i` of a float array is NaN (never for other types).
pub(crate) fn nan_checker(values: &dyn Array) -> Box<dyn Fn(usize) -> bool + '_> {
    match values.data_type() {
        DataType::Float16 => {
            let a = values.as_primitive::<Float16Type>();
            Box::new(move |i| a.value(i).is_nan())
        }
        DataType::Float32 => {
            let a = values.as_primitive::<Float32Type>();
            Box::new(move |i| a.value(i).is_nan())
        }
        DataType::Float64 => {
            let a = values.as_primitive::<Float64Type>();
            Box::new(move |i| a.value(i).is_nan())
        }
        _ => Box::new(|_| false),
    }
}

/// Statistics of rows `range` of `values`: positions of the minimum and maximum (nulls
/// and NaNs ignored), the null count and the NaN count.
pub(crate) struct SliceStats {
    pub min: Option<u32>,
    pub max: Option<u32>,
    pub nulls: u32,
    pub nans: u32,
}

pub(crate) fn slice_stats(values: &dyn Array, range: Range<usize>) -> Result<SliceStats> {
    let cmp = make_comparator(values, values, SortOptions::default())?;
    let is_nan = nan_checker(values);
    let mut s = SliceStats {
        min: None,
        max: None,
        nulls: 0,
        nans: 0,
    };
    for i in range {
        if values.is_null(i) {
            s.nulls += 1;
        } else if is_nan(i) {
            s.nans += 1;
        } else {
            if s.min.is_none_or(|m| cmp(i, m as usize) == Ordering::Less) {
                s.min = Some(i as u32);
            }
            if s.max.is_none_or(|m| cmp(i, m as usize) == Ordering::Greater) {
                s.max = Some(i as u32);
            }
        }
    }
    Ok(s)
}

/// A zone: consecutive indexed rows of one fragment.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Zone {
    pub fragment: u32,
    /// Offset of the zone's first row.
    pub start: u32,
    /// Offsets covered, from the first row to the last (deleted rows included).
    pub length: u64,
    /// Positions of the zone's rows in the input.
    pub rows: Range<usize>,
}

/// Cuts address-sorted rows into zones of at most `rows_per_zone` rows that never cross a
/// fragment; a zone spans its rows' offsets, so rows missing (deleted) inside it are
/// covered too, as pylance does.
pub(crate) fn zones(addrs: &[u64], rows_per_zone: u64) -> Vec<Zone> {
    let mut out = Vec::new();
    let mut start = 0usize;
    while start < addrs.len() {
        let f = fragment_of(addrs[start]);
        let mut end = start + 1;
        while end < addrs.len() && fragment_of(addrs[end]) == f && ((end - start) as u64) < rows_per_zone {
            end += 1;
        }
        let first = offset_of(addrs[start]);
        let last = offset_of(addrs[end - 1]);
        out.push(Zone {
            fragment: f,
            start: first,
            length: u64::from(last) - u64::from(first) + 1,
            rows: start..end,
        });
        start = end;
    }
    out
}
