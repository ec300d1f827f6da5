//! Writing 2.0 columns: one column per leaf, list offsets in a column of their own, each
//! flushed array encoded as `ArrayEncoding` pages.

use super::check::visible_values;
use super::*;

impl<W: Write> FileWriter<W> {
    /// Buffers `array` (of `plan`'s field) in its columns, flushing those that pass the
    /// cache size; returns whether a page was written.
    pub(super) fn push(&mut self, plan: &FieldPlan, array: &ArrayRef) -> Result<bool> {
        match plan {
            FieldPlan::Leaf { column, .. } => self.push_leaf(*column, array.clone()),
            FieldPlan::Struct { column, children, .. } => {
                self.columns[*column].struct_rows += array.len() as u64;
                let s = array.as_struct();
                let mut wrote = false;
                for (child, col) in children.iter().zip(s.columns()) {
                    wrote |= self.push(child, col)?;
                }
                Ok(wrote)
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
                if self.opts.page_rules == PageRules::Pylance {
                    return self.push_list_pylance(*column, item, array, &items);
                }
                let wrote = self.push(item, &items)?;
                if self.columns[*column].list.ends.len() as u64 * 8 > self.opts.cache_bytes_per_column {
                    self.flush_list(*column)?;
                    return Ok(true);
                }
                Ok(wrote)
            }
        }
    }

    /// pylance's rules for a list: the offsets column counts an integer array of the
    /// offsets, then a boolean array of the validity (the count restarts when the
    /// offsets alone pass the cache size); when it flushes, the items flush too.
    fn push_list_pylance(
        &mut self,
        column: usize,
        item: &FieldPlan,
        array: &ArrayRef,
        items: &ArrayRef,
    ) -> Result<bool> {
        let (offsets, validity) = pylance::list_counted_bytes(array);
        let cache = self.opts.cache_bytes_per_column;
        let state = &mut self.columns[column];
        state.list_bytes += offsets;
        let mut flush = state.list_bytes > cache;
        if !flush {
            state.list_bytes += validity;
            flush = state.list_bytes > cache;
        }
        if flush {
            state.list_bytes = 0;
            self.flush_list(column)?;
        }
        let wrote = self.push(item, items)?;
        if flush && !wrote {
            self.flush_plan(item)?;
        }
        Ok(flush || wrote)
    }

    /// Flushes every column of `plan` (struct headers are written at the end).
    fn flush_plan(&mut self, plan: &FieldPlan) -> Result<()> {
        match plan {
            FieldPlan::Leaf { column, .. } => self.flush_leaf(*column, false).map(|_| ()),
            FieldPlan::Struct { children, .. } => children.iter().try_for_each(|c| self.flush_plan(c)),
            FieldPlan::List { column, item, .. } => {
                self.columns[*column].list_bytes = 0;
                self.flush_list(*column)?;
                self.flush_plan(item)
            }
        }
    }

    pub(super) fn push_leaf(&mut self, column: usize, array: ArrayRef) -> Result<bool> {
        let bytes = match self.opts.page_rules {
            PageRules::Lancelet => array.to_data().get_slice_memory_size()? as u64,
            PageRules::Pylance => pylance::counted_bytes(array.as_ref()),
        };
        let state = &mut self.columns[column];
        state.pending_bytes += bytes;
        state.pending.push(array);
        if state.pending_bytes > self.opts.cache_bytes_per_column {
            return self.flush_leaf(column, true);
        }
        Ok(false)
    }

    /// Writes the arrays `column` has buffered; `now` when the last one was just given
    /// (pylance keeps a compact copy of the others: see [`pylance::copied_bytes`]).
    /// Returns whether a page was written.
    pub(super) fn flush_leaf(&mut self, column: usize, now: bool) -> Result<bool> {
        let pending = std::mem::take(&mut self.columns[column].pending);
        self.columns[column].pending_bytes = 0;
        if pending.is_empty() {
            return Ok(false);
        }
        if pending.len() > 1 {
            // Several buffered arrays (each small) make one page.
            let refs: Vec<&dyn Array> = pending.iter().map(|a| a.as_ref()).collect();
            let array = arrow_select::concat::concat(&refs)?;
            self.encode_and_write(column, &array)?;
            return Ok(true);
        }
        // One array: cut it into equal pages no larger than `max_page_bytes`.
        for array in pending {
            let rows = match self.opts.page_rules {
                PageRules::Lancelet => {
                    let bytes = array.to_data().get_slice_memory_size()? as u64;
                    let parts = (bytes.div_ceil(self.opts.max_page_bytes) as usize).clamp(1, array.len().max(1));
                    array.len().div_ceil(parts).max(1)
                }
                PageRules::Pylance => {
                    let bytes = if now {
                        array.get_buffer_memory_size() as u64
                    } else {
                        pylance::copied_bytes(array.as_ref())?
                    };
                    pylance::split_rows(array.len(), bytes, self.opts.max_page_bytes)
                }
            };
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
        Ok(true)
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
