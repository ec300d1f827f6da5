//! Writing 2.1+ fields: a top-level field's buffered rows are shredded into its leaf
//! columns (repetition and definition levels) and written as structural pages, the fields
//! flushed together encoded in parallel. Under [`PageRules::Pylance`] each leaf column
//! flushes on its own (its page jobs shred only that leaf).

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
                    leaf: None,
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
        self.run_jobs(jobs, firsts, total_bytes)
    }

    /// Encodes `jobs` (the first column of each job's field in `firsts`) and writes their
    /// pages in order.
    fn run_jobs(&mut self, jobs: Vec<PageJob>, firsts: Vec<usize>, total_bytes: u64) -> Result<()> {
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
                for (k, page) in encoded.pages {
                    let encoding = direct_encoding(PAGE_LAYOUT_TYPE_URL, page.layout.encode_to_vec());
                    self.write_page_buffers(first + k, &page.buffers, page.num_rows, encoding)?;
                }
                Ok(())
            },
        )
    }

    /// [`PageRules::Pylance`]: buffers one batch's columns and flushes each leaf column
    /// whose counted bytes passed the cache size.
    pub(super) fn push_leaves(&mut self, cols: &[ArrayRef]) -> Result<()> {
        let mut full = Vec::new();
        let cache = self.opts.cache_bytes_per_column;
        for (i, array) in cols.iter().enumerate() {
            let mut counted = Vec::new();
            pylance::leaf_counted_bytes(&self.plan_schema.fields()[i], array, &mut counted)?;
            let state = &mut self.fields[i];
            state.pending.push(array.clone());
            state.rows += array.len() as u64;
            for (k, (leaf, bytes)) in state.leaf_state.iter_mut().zip(counted).enumerate() {
                leaf.bytes += bytes;
                leaf.dirty = true;
                if leaf.bytes > cache {
                    full.push((i, k));
                }
            }
        }
        self.flush_leaves(&full)
    }

    /// [`PageRules::Pylance`]: writes the rows leaf `k` of field `i` has not written, for
    /// each `(i, k)` of `which` (in that order): one page, or several when pylance cuts
    /// a sparse list leaf by its levels. Rows every leaf of a field has written are
    /// dropped.
    pub(super) fn flush_leaves(&mut self, which: &[(usize, usize)]) -> Result<()> {
        let mut jobs = Vec::new();
        let mut firsts = Vec::new();
        let mut total_bytes = 0u64;
        let step = usize::try_from(self.opts.stats_zone_rows).unwrap_or(usize::MAX);
        for &(i, k) in which {
            let state = &mut self.fields[i];
            let leaf = &mut state.leaf_state[k];
            if !leaf.dirty {
                continue;
            }
            let (start, end) = (leaf.start, state.rows);
            *leaf = LeafState {
                bytes: 0,
                start: end,
                dirty: false,
            };
            let rows = pending_rows(&state.pending, start - state.pending_start, end - start)?;
            total_bytes += rows.to_data().get_slice_memory_size()? as u64;
            let first = state.first_column;
            let stats = k == 0 && self.stats_columns.get(first).copied().unwrap_or(false);
            let zone_rows = &mut self.columns[first].zone_rows;
            jobs.push(PageJob {
                field: self.plan_schema.fields()[i].clone(),
                rows,
                leaves: state.leaves.clone(),
                leaf: Some(k),
                zones: stats.then_some((step, *zone_rows)),
                blob_leaves: state.blob_leaves.clone(),
            });
            if stats {
                *zone_rows += end - start;
            }
            firsts.push(first);
        }
        for &(i, _) in which {
            drop_written_rows(&mut self.fields[i]);
        }
        self.run_jobs(jobs, firsts, total_bytes)
    }
}

/// `len` rows of the buffered arrays `pending` from row `start` (one array).
fn pending_rows(pending: &[ArrayRef], start: u64, len: u64) -> Result<ArrayRef> {
    let (mut skip, mut left) = (start as usize, len as usize);
    let mut parts = Vec::new();
    for a in pending {
        if left == 0 {
            break;
        }
        if skip >= a.len() {
            skip -= a.len();
            continue;
        }
        let n = left.min(a.len() - skip);
        parts.push(a.slice(skip, n));
        left -= n;
        skip = 0;
    }
    match parts.len() {
        0 => Ok(pending
            .first()
            .map_or_else(|| arrow_array::new_null_array(&DataType::Null, 0), |a| a.slice(0, 0))),
        1 => Ok(parts.remove(0)),
        _ => {
            let refs: Vec<&dyn Array> = parts.iter().map(|a| a.as_ref()).collect();
            Ok(arrow_select::concat::concat(&refs)?)
        }
    }
}

/// Drops the buffered arrays of `state` whose rows every leaf has written.
fn drop_written_rows(state: &mut FieldState) {
    let written = state.leaf_state.iter().map(|l| l.start).min().unwrap_or(state.rows);
    while let Some(a) = state.pending.first() {
        let end = state.pending_start + a.len() as u64;
        if end > written {
            break;
        }
        state.pending_start = end;
        state.pending.remove(0);
    }
}
