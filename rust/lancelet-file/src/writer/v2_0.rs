//! Writing 2.0 columns: one column per leaf, list offsets in a column of their own, each
//! flushed array encoded as `ArrayEncoding` pages.

use super::check::visible_values;
use super::*;

impl<W: Write> FileWriter<W> {
    pub(super) fn push(&mut self, plan: &FieldPlan, array: &ArrayRef) -> Result<()> {
        match plan {
            FieldPlan::Leaf { column, .. } => self.push_leaf(*column, array.clone()),
            FieldPlan::Struct { column, children, .. } => {
                self.columns[*column].struct_rows += array.len() as u64;
                let s = array.as_struct();
                for (child, col) in children.iter().zip(s.columns()) {
                    self.push(child, col)?;
                }
                Ok(())
            }
            FieldPlan::List { column, item, .. } => {
                let (items, ends_valid) = match array.data_type() {
                    DataType::List(_) => list_parts(array.as_list::<i32>()),
                    DataType::LargeList(_) => list_parts(array.as_list::<i64>()),
                    dt => return Err(Error::InvalidArgument(format!("expected a list array, got {dt}"))),
                };
                {
                    let acc = &mut self.columns[*column].list;
                    let base = acc.items;
                    for (end, valid) in &ends_valid {
                        acc.ends.push(base + end);
                        acc.valid.push(*valid);
                    }
                    acc.items += items.len() as u64;
                }
                self.push(item, &items)?;
                if self.columns[*column].list.ends.len() as u64 * 8 > self.opts.cache_bytes_per_column {
                    self.flush_list(*column)?;
                }
                Ok(())
            }
        }
    }

    pub(super) fn push_leaf(&mut self, column: usize, array: ArrayRef) -> Result<()> {
        let bytes = array.to_data().get_slice_memory_size()? as u64;
        let state = &mut self.columns[column];
        state.pending_bytes += bytes;
        state.pending.push(array);
        if state.pending_bytes > self.opts.cache_bytes_per_column {
            self.flush_leaf(column)?;
        }
        Ok(())
    }

    pub(super) fn flush_leaf(&mut self, column: usize) -> Result<()> {
        let pending = std::mem::take(&mut self.columns[column].pending);
        self.columns[column].pending_bytes = 0;
        if pending.is_empty() {
            return Ok(());
        }
        if pending.len() > 1 {
            // Several buffered arrays (each small) make one page.
            let refs: Vec<&dyn Array> = pending.iter().map(|a| a.as_ref()).collect();
            let array = arrow_select::concat::concat(&refs)?;
            return self.encode_and_write(column, &array);
        }
        // One array: cut it into equal pages no larger than `max_page_bytes`.
        for array in pending {
            let bytes = array.to_data().get_slice_memory_size()? as u64;
            let parts = (bytes.div_ceil(self.opts.max_page_bytes) as usize).clamp(1, array.len().max(1));
            let rows = array.len().div_ceil(parts).max(1);
            let mut start = 0;
            loop {
                let len = rows.min(array.len() - start);
                self.encode_and_write(column, &array.slice(start, len))?;
                start += len;
                if start >= array.len() {
                    break;
                }
            }
        }
        Ok(())
    }

    pub(super) fn encode_and_write(&mut self, column: usize, array: &ArrayRef) -> Result<()> {
        self.record_zones(column, array);
        if crate::blob::is_v1_descriptor_column(&self.plans, column) {
            let page = crate::blob::v1_page_2_0(array)?;
            return self.write_page(column, page);
        }
        let page = encode_leaf(array, &self.opts.encode).map_err(|e| Error::from_encoding(&self.path, e))?;
        self.write_page(column, page)
    }

    pub(super) fn flush_list(&mut self, column: usize) -> Result<()> {
        let acc = std::mem::take(&mut self.columns[column].list);
        if acc.ends.is_empty() {
            return Ok(());
        }
        let page = encode_list_offsets(&acc.ends, &acc.valid, acc.items);
        self.write_page(column, page)
    }

    pub(super) fn write_page(&mut self, column: usize, page: EncodedPage<pb20::ArrayEncoding>) -> Result<()> {
        let encoding = direct_encoding(ARRAY_ENCODING_TYPE_URL, page.encoding.encode_to_vec());
        self.write_page_buffers(column, &page.buffers, page.num_rows, encoding)
    }
}

/// The items referenced by a list array and, per list, its end (relative to the first
/// item) and validity.
pub(super) fn list_parts<O: arrow_array::OffsetSizeTrait>(
    l: &arrow_array::GenericListArray<O>,
) -> (ArrayRef, Vec<(u64, bool)>) {
    let offsets = l.value_offsets();
    let first = offsets.first().map(|o| o.as_usize()).unwrap_or(0);
    let items = visible_values(l);
    let ends = offsets
        .iter()
        .skip(1)
        .enumerate()
        .map(|(i, o)| ((o.as_usize() - first) as u64, l.is_valid(i)))
        .collect();
    (items, ends)
}
