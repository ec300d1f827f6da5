//! Writing 2.1+ fields: a top-level field's buffered rows are shredded into its leaf
//! columns (repetition and definition levels) and written as structural pages, the fields
//! flushed together encoded in parallel.

use super::*;

impl<W: Write> FileWriter<W> {
    /// 2.1+: buffers one batch's columns, then flushes the fields that passed the cache
    /// size (together, so that their pages are encoded in parallel).
    pub(super) fn push_fields(&mut self, cols: &[ArrayRef]) -> Result<()> {
        let mut full = Vec::new();
        for (i, array) in cols.iter().enumerate() {
            let bytes = array.to_data().get_slice_memory_size()? as u64;
            let state = &mut self.fields[i];
            state.pending_bytes += bytes;
            state.pending.push(array.clone());
            if state.pending_bytes > self.opts.cache_bytes_per_column {
                full.push(i);
            }
        }
        self.flush_fields(&full)
    }

    /// 2.1+: writes the buffered rows of the top-level fields `which` (in that order) as
    /// pages of one page per leaf column each (several when they pass the page size).
    /// The pages are encoded on [`WriterOptions::threads`] threads and written in order.
    pub(super) fn flush_fields(&mut self, which: &[usize]) -> Result<()> {
        let mut jobs = Vec::new();
        let mut firsts = Vec::new();
        let mut total_bytes = 0u64;
        let step = usize::try_from(self.opts.stats_zone_rows).unwrap_or(usize::MAX);
        for &i in which {
            let pending = std::mem::take(&mut self.fields[i].pending);
            self.fields[i].pending_bytes = 0;
            if pending.is_empty() {
                continue;
            }
            let array = if pending.len() == 1 {
                pending.into_iter().next().unwrap_or_else(|| unreachable!())
            } else {
                let refs: Vec<&dyn Array> = pending.iter().map(|a| a.as_ref()).collect();
                arrow_select::concat::concat(&refs)?
            };
            let field = self.plan_schema.fields()[i].clone();
            let first = self.fields[i].first_column;
            let stats = self.stats_columns.get(first).copied().unwrap_or(false);
            let bytes = array.to_data().get_slice_memory_size()? as u64;
            total_bytes += bytes;
            let limit = if has_lists(field.data_type()) {
                V21_PAGE_BYTES
            } else {
                V21_FLAT_PAGE_BYTES
            };
            let page_bytes = self.opts.max_page_bytes.min(limit);
            let parts = (bytes.div_ceil(page_bytes) as usize).clamp(1, array.len().max(1));
            let rows = array.len().div_ceil(parts).max(1);
            let mut start = 0;
            while start < array.len() {
                let len = rows.min(array.len() - start);
                let zone_rows = &mut self.columns[first].zone_rows;
                jobs.push(PageJob {
                    field: field.clone(),
                    rows: array.slice(start, len),
                    leaves: self.fields[i].leaves.clone(),
                    zones: stats.then_some((step, *zone_rows)),
                    blob_leaves: self.fields[i].blob_leaves.clone(),
                });
                if stats {
                    *zone_rows += len as u64;
                }
                firsts.push(first);
                start += len;
            }
        }
        // Small flushes (a few rows per field) are encoded faster than threads start.
        let threads = if total_bytes < PARALLEL_MIN_BYTES {
            1
        } else {
            parallel::threads_for(self.opts.threads, jobs.len())
        };
        let path = self.path.clone();
        let mut firsts = firsts.into_iter();
        run_ordered(
            jobs,
            threads,
            |job| encode_job(job, &path),
            |encoded| {
                let encoded = encoded?;
                let first = firsts.next().unwrap_or_default();
                self.columns[first].zones.extend(encoded.zones);
                for (k, page) in encoded.pages.into_iter().enumerate() {
                    let encoding = direct_encoding(PAGE_LAYOUT_TYPE_URL, page.layout.encode_to_vec());
                    self.write_page_buffers(first + k, &page.buffers, page.num_rows, encoding)?;
                }
                Ok(())
            },
        )
    }
}
