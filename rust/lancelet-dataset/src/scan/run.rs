//! Running one scan task: the filter stage (only the filter's columns, then the mask),
//! the projection stage (the other columns, for the matching rows only when they are
//! few), and the output columns (expressions, `_rowid`, `_rowaddr`).

use std::ops::Range;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef, BooleanArray, RecordBatch, RecordBatchOptions, UInt64Array};
use arrow_schema::{Field, FieldRef, Schema};
use arrow_select::filter::filter_record_batch;
use lancelet_file::reader::to_ranges;
use lancelet_table::pb;

use super::plan::{projected_schema, with_special_fields, Filter, Output, Pick};
use super::{Scan, ScanOptions, ScanTask};
use crate::scan::lineage::Special;
use crate::{Dataset, Error, Result};

impl Scan {
    /// Runs task `i`, returning its rows (possibly none). An ordered scan's one task
    /// returns every row, sorted.
    pub(crate) async fn run_task(&self, i: usize) -> Result<RecordBatch> {
        match &self.order {
            Some(order) if i == 0 => self.run_sorted(order).await,
            Some(_) => Err(Error::InvalidArgument(format!("scan task {i} does not exist"))),
            None => self.run_planned_task(i).await,
        }
    }

    /// Runs planned task `i`.
    pub(super) async fn run_planned_task(&self, i: usize) -> Result<RecordBatch> {
        let batch = self.run_task_inner(i).await?;
        self.stats.task_done(self.task(i)?.rows(), batch.num_rows() as u64);
        Ok(batch)
    }

    async fn run_task_inner(&self, i: usize) -> Result<RecordBatch> {
        let task = self.task(i)?;
        let frag = &task.fragment;
        let n = task.rows() as usize;
        let filter = self.filter.as_ref().filter(|_| !task.prefiltered);
        let Some(filter) = filter else {
            let batch = self
                .ds
                .read_rows(frag, &self.read, &self.read_schema, &task.ranges)
                .await?;
            let addr = self.needs_addr().then(|| row_addresses(frag.id, &task.ranges));
            return self.finish(frag, batch, addr).await;
        };
        let (fbatch, addr, mask) = self.filter_stage(task, filter).await?;
        let selected = mask.true_count();
        if selected == 0 {
            return Ok(RecordBatch::new_empty(self.schema.clone()));
        }
        let all = selected == n;
        let addr = if all { addr } else { filter_array(&addr, &mask)? };
        // Projection stage: reuse what the filter read, read the rest for matching rows only.
        let fschema = fbatch.schema();
        let reusable = |f: &Field| {
            fschema
                .index_of(f.name())
                .ok()
                .filter(|&i| fschema.field(i).data_type() == f.data_type())
        };
        let missing: Vec<String> = self
            .read
            .iter()
            .filter(|name| {
                let top = self.top_of(name);
                self.read_schema
                    .field_with_name(top)
                    .map(|f| reusable(f).is_none())
                    .unwrap_or(true)
            })
            .cloned()
            .collect();
        let read_more = if missing.is_empty() {
            None
        } else if all {
            Some(self.read_part(frag, &missing, &task.ranges).await?)
        } else if let Some(ranges) = sparse_ranges(&addr, n) {
            Some(self.read_part(frag, &missing, &ranges).await?)
        } else {
            let b = self.read_part(frag, &missing, &task.ranges).await?;
            Some(filter_record_batch(&b, &mask)?)
        };
        let mut columns = Vec::with_capacity(self.read_schema.fields().len());
        for f in self.read_schema.fields() {
            if let Some(i) = reusable(f) {
                let col = fbatch.column(i);
                columns.push(if all {
                    col.clone()
                } else {
                    arrow_select::filter::filter(col.as_ref(), &mask)?
                });
            } else {
                let b = read_more
                    .as_ref()
                    .ok_or_else(|| Error::InvalidArgument(format!("column {:?} was not read", f.name())))?;
                columns.push(b.column(b.schema().index_of(f.name())?).clone());
            }
        }
        let top: Vec<FieldRef> = self.read_schema.fields().iter().cloned().collect();
        let batch = RecordBatch::try_new_with_options(
            Arc::new(Schema::new(top)),
            columns,
            &RecordBatchOptions::new().with_row_count(Some(selected)),
        )?;
        self.finish(frag, batch, Some(addr)).await
    }

    /// Runs every task in order on the current task and returns the output batches
    /// (callers wanting parallelism run [`Scan::run_task`] concurrently instead).
    pub async fn collect(&self) -> Result<Vec<RecordBatch>> {
        let mut limiter = self.limiter();
        let mut out = Vec::new();
        for i in 0..self.num_tasks() {
            if limiter.done() {
                break;
            }
            out.extend(limiter.push(self.run_task(i).await?)?);
        }
        out.extend(limiter.finish()?);
        self.finish_batches(out).await
    }

    /// Runs the tasks on the runtime's workers, as many at once as there are cores, and
    /// returns the output batches in task order (for scans that feed a computation rather
    /// than a consumer: index training, vector reads). Must run inside a tokio runtime.
    pub(crate) async fn collect_parallel(self: Arc<Self>) -> Result<Vec<RecordBatch>> {
        let window = crate::scan::tasks_at_once();
        let mut limiter = self.limiter();
        let mut out = Vec::new();
        let mut pending = std::collections::VecDeque::new();
        let mut next = 0;
        loop {
            while pending.len() < window && next < self.num_tasks() && !limiter.done() {
                let (scan, i) = (self.clone(), next);
                pending.push_back(tokio::spawn(async move { scan.run_task(i).await }));
                next += 1;
            }
            let Some(h) = pending.pop_front() else { break };
            let batch = h.await.map_err(Error::from)??;
            out.extend(limiter.push(batch)?);
        }
        out.extend(limiter.finish()?);
        self.finish_batches(out).await
    }

    /// Counts the rows task `i` would return (before limit/offset).
    pub async fn count_task(&self, i: usize) -> Result<u64> {
        let task = self.task(i)?;
        let n = match self.filter.as_ref().filter(|_| !task.prefiltered) {
            None => task.rows(),
            Some(filter) => self.filter_stage(task, filter).await?.2.true_count() as u64,
        };
        self.stats.task_done(task.rows(), n);
        Ok(n)
    }

    /// Reads only the filter's columns of a task and evaluates it: the batch it read (with
    /// `_rowid`/`_rowaddr` when the filter uses them), the task's row addresses, the mask.
    async fn filter_stage(&self, task: &ScanTask, filter: &Filter) -> Result<(RecordBatch, UInt64Array, BooleanArray)> {
        let frag = &task.fragment;
        let schema = projected_schema(self.ds.scan_schema(), &filter.columns)?;
        let fbatch = self.ds.read_rows(frag, &filter.columns, &schema, &task.ranges).await?;
        let addr = row_addresses(frag.id, &task.ranges);
        let mut cols = fbatch.columns().to_vec();
        for s in &filter.specials {
            cols.push(self.ds.special_column(*s, frag, &addr).await?);
        }
        let fbatch = RecordBatch::try_new_with_options(
            filter.schema.clone(),
            cols,
            &RecordBatchOptions::new().with_row_count(Some(fbatch.num_rows())),
        )?;
        let mask = filter
            .expr
            .evaluate_predicate(&fbatch)
            .map_err(|e| Error::expr(format!("filter {:?}", filter.sql), e))?;
        Ok((fbatch, addr, mask))
    }

    fn task(&self, i: usize) -> Result<&ScanTask> {
        self.tasks
            .get(i)
            .ok_or_else(|| Error::InvalidArgument(format!("scan task {i} does not exist")))
    }

    async fn read_part(&self, frag: &pb::DataFragment, names: &[String], ranges: &[Range<u64>]) -> Result<RecordBatch> {
        let schema = projected_schema(self.ds.scan_schema(), names)?;
        self.ds.read_rows(frag, names, &schema, ranges).await
    }

    /// The top-level column a projected name reads.
    fn top_of<'a>(&self, name: &'a str) -> &'a str {
        if self.ds.scan_schema().field_with_name(name).is_ok() {
            name
        } else {
            name.split('.').next().unwrap_or(name)
        }
    }

    fn needs_addr(&self) -> bool {
        self.with_row_id
            || self.with_row_addr
            || match &self.output {
                Output::Read(picks) => picks.iter().any(|p| matches!(p, Pick::Special(_))),
                Output::Exprs(..) => true,
            }
    }

    /// Applies the output expressions and adds the special columns.
    async fn finish(
        &self,
        frag: &pb::DataFragment,
        batch: RecordBatch,
        addr: Option<UInt64Array>,
    ) -> Result<RecordBatch> {
        let n = batch.num_rows();
        let addr = addr.unwrap_or_else(|| UInt64Array::from(Vec::<u64>::new()));
        let mut columns: Vec<ArrayRef> = match &self.output {
            Output::Read(picks) => {
                let mut cols = Vec::with_capacity(picks.len());
                for p in picks {
                    cols.push(match p {
                        Pick::Read(i) => batch.column(*i).clone(),
                        Pick::Nested(i, path) => nested_column(batch.column(*i), path)?,
                        Pick::Special(s) => self.ds.special_column(*s, frag, &addr).await?,
                    });
                }
                cols
            }
            Output::Exprs(exprs, used) => {
                let mut cols = batch.columns().to_vec();
                let a: ArrayRef = Arc::new(addr.clone());
                for s in Special::IN_SQL {
                    // Columns no expression names are placeholders of the right type.
                    cols.push(if used.contains(&s) {
                        self.ds.special_column(s, frag, &addr).await?
                    } else {
                        a.clone()
                    });
                }
                let input = RecordBatch::try_new_with_options(
                    Arc::new(with_special_fields(&batch.schema())),
                    cols,
                    &RecordBatchOptions::new().with_row_count(Some(n)),
                )?;
                exprs
                    .iter()
                    .map(|(name, e)| {
                        e.evaluate(&input)
                            .map_err(|err| Error::expr(format!("column {name:?}"), err))
                    })
                    .collect::<Result<Vec<_>>>()?
            }
        };
        if self.with_row_id {
            columns.push(self.ds.special_column(Special::RowId, frag, &addr).await?);
        }
        if self.with_row_addr {
            columns.push(Arc::new(addr));
        }
        Ok(RecordBatch::try_new_with_options(
            self.schema.clone(),
            columns,
            &RecordBatchOptions::new().with_row_count(Some(n)),
        )?)
    }
}

/// The row ranges of the matching rows when they are few enough that reading only them
/// beats reading the whole task and filtering. Each run costs a separate range read and
/// decode (about 2 µs per column), so this pays off only when runs are rare: on 2M rows,
/// 1% random matches (one run per 100 rows) were 2x slower read as runs than whole.
fn sparse_ranges(addr: &UInt64Array, task_rows: usize) -> Option<Vec<Range<u64>>> {
    let rows: Vec<u64> = addr.values().iter().map(|a| a & 0xFFFF_FFFF).collect();
    let ranges = to_ranges(&rows);
    (ranges.len() * 256 < task_rows).then_some(ranges)
}

/// The child at `path` of struct column `col`, null wherever a struct above it is null.
fn nested_column(col: &ArrayRef, path: &[String]) -> Result<ArrayRef> {
    let mut a = col.clone();
    for p in path {
        let s = a
            .as_struct_opt()
            .ok_or_else(|| Error::InvalidArgument(format!("{p:?} is not inside a struct")))?;
        let child = s
            .column_by_name(p)
            .ok_or_else(|| Error::InvalidArgument(format!("struct has no field {p:?}")))?
            .clone();
        a = match arrow_buffer::NullBuffer::union(s.nulls(), child.logical_nulls().as_ref()) {
            Some(nulls) if s.nulls().is_some() => {
                arrow_array::make_array(child.to_data().into_builder().nulls(Some(nulls)).build()?)
            }
            _ => child,
        };
    }
    Ok(a)
}

/// `(fragment_id << 32) | row` for every row in `ranges`.
pub(crate) fn row_addresses(fragment_id: u64, ranges: &[Range<u64>]) -> UInt64Array {
    let base = fragment_id << 32;
    let n: u64 = ranges.iter().map(|r| r.end - r.start).sum();
    let mut v = Vec::with_capacity(n as usize);
    for r in ranges {
        v.extend((r.start..r.end).map(|i| base | i));
    }
    UInt64Array::from(v)
}

fn filter_array(a: &UInt64Array, mask: &BooleanArray) -> Result<UInt64Array> {
    let out = arrow_select::filter::filter(a, mask)?;
    Ok(out.as_primitive::<arrow_array::types::UInt64Type>().clone())
}

impl Dataset {
    /// Plans a scan with `opts` and runs all its tasks concurrently; their batches, in order.
    pub(crate) async fn scan_all(&self, opts: ScanOptions) -> Result<Vec<RecordBatch>> {
        let scan = Arc::new(Scan::plan(self, opts).await?);
        futures::future::try_join_all((0..scan.num_tasks()).map(|i| {
            let scan = scan.clone();
            async move { scan.finish_batch(scan.run_task(i).await?).await }
        }))
        .await
    }
}
