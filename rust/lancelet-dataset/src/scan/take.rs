//! Random access: rows by their offset in the dataset (deleted rows not counted) or by
//! row address. Each fragment involved is read once, through the data files' partial
//! reads, and the rows come back in the order asked (duplicates allowed).

use std::ops::Range;

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::{RecordBatch, RecordBatchOptions, UInt32Array, UInt64Array};
use arrow_schema::SchemaRef;
use lancelet_table::manifest::live_rows;
use lancelet_table::pb;

use crate::scan::lineage::Special;
use crate::scan::projected_schema;
use crate::{Dataset, Error, Result};

impl Dataset {
    /// The schema of `take(.., columns)`.
    pub(crate) fn take_schema(&self, columns: Option<&[String]>) -> Result<SchemaRef> {
        match columns {
            None => Ok(self.scan_schema().clone()),
            Some(names) => {
                let (stored, specials) = self.split_specials(names);
                let read = projected_schema(self.scan_schema(), &stored)?;
                if specials.is_empty() {
                    return Ok(read);
                }
                let mut fields: Vec<arrow_schema::FieldRef> = read.fields().iter().cloned().collect();
                for (at, s) in specials {
                    fields.insert(at.min(fields.len()), Arc::new(s.field()));
                }
                Ok(Arc::new(arrow_schema::Schema::new_with_metadata(
                    fields,
                    read.metadata().clone(),
                )))
            }
        }
    }

    /// Stored column names, and the special columns (`_rowid`, versions) with the output
    /// position each goes to. Paths into one struct are put in the schema's order, so the
    /// struct they merge into lists its fields as the schema does (as pylance's take).
    fn split_specials(&self, names: &[String]) -> (Vec<String>, Vec<(usize, Special)>) {
        let mut stored = Vec::new();
        let mut specials = Vec::new();
        for (i, n) in names.iter().enumerate() {
            match Special::parse(n) {
                Some(s) if self.scan_schema().field_with_name(n).is_err() => specials.push((i, s)),
                _ => stored.push(n.clone()),
            }
        }
        (schema_order(self.scan_schema(), stored), specials)
    }

    /// Rows at `indices`, offsets among the live rows of this version.
    pub async fn take(&self, indices: &[u64], columns: Option<&[String]>) -> Result<RecordBatch> {
        let total = self.count_rows();
        let mut starts = Vec::with_capacity(self.fragments().len() + 1);
        let mut acc = 0u64;
        for f in self.fragments() {
            starts.push(acc);
            acc += live_rows(f);
        }
        // (fragment position, live offset in fragment, output position)
        let mut wanted: Vec<(usize, u64, usize)> = Vec::with_capacity(indices.len());
        for (pos, &i) in indices.iter().enumerate() {
            if i >= total {
                return Err(Error::OutOfRange(format!(
                    "row index {i} is out of range: the dataset has {total} rows"
                )));
            }
            let frag = starts.partition_point(|&s| s <= i) - 1;
            wanted.push((frag, i - starts[frag], pos));
        }
        let mut by_frag: Vec<(usize, Vec<(u64, usize)>)> = Vec::new();
        wanted.sort_by_key(|w| (w.0, w.2));
        for (frag, off, pos) in wanted {
            match by_frag.last_mut() {
                Some((f, v)) if *f == frag => v.push((off, pos)),
                _ => by_frag.push((frag, vec![(off, pos)])),
            }
        }
        let mut requests = Vec::with_capacity(by_frag.len());
        for (frag, rows) in by_frag {
            let f = &self.fragments()[frag];
            let live = self.live_ranges(f).await?;
            let physical: Vec<u64> = rows.iter().map(|(off, _)| live_to_physical(&live, *off)).collect();
            requests.push((f, physical, rows.into_iter().map(|(_, p)| p).collect::<Vec<_>>()));
        }
        self.take_physical(requests, indices.len(), columns).await
    }

    /// Rows at offsets `indices` among the live rows of fragment `fragment_id`.
    pub async fn take_in_fragment(
        &self,
        fragment_id: u64,
        indices: &[u64],
        columns: Option<&[String]>,
    ) -> Result<RecordBatch> {
        let f = self.fragment(fragment_id)?;
        let n = live_rows(f);
        let live = self.live_ranges(f).await?;
        let mut addrs = Vec::with_capacity(indices.len());
        for &i in indices {
            if i >= n {
                return Err(Error::OutOfRange(format!(
                    "row index {i} is out of range: fragment {fragment_id} has {n} rows"
                )));
            }
            addrs.push((fragment_id << 32) | live_to_physical(&live, i));
        }
        self.take_addresses(&addrs, columns).await
    }

    /// Rows at row addresses `(fragment_id << 32) | offset`, in the order given.
    pub async fn take_addresses(&self, addresses: &[u64], columns: Option<&[String]>) -> Result<RecordBatch> {
        let mut groups: Vec<(u64, Vec<u64>, Vec<usize>)> = Vec::new();
        let mut order: Vec<(u64, usize)> = addresses.iter().enumerate().map(|(p, &a)| (a >> 32, p)).collect();
        order.sort_unstable();
        for (frag, pos) in order {
            let row = addresses[pos] & 0xFFFF_FFFF;
            match groups.last_mut() {
                Some((f, rows, ps)) if *f == frag => {
                    rows.push(row);
                    ps.push(pos);
                }
                _ => groups.push((frag, vec![row], vec![pos])),
            }
        }
        let mut requests = Vec::with_capacity(groups.len());
        for (frag, rows, ps) in groups {
            let f = self.fragment(frag).map_err(|_| {
                Error::OutOfRange(format!(
                    "row address {} names missing fragment {frag}",
                    (frag << 32) | rows[0]
                ))
            })?;
            if let Some(r) = rows.iter().find(|&&r| r >= f.physical_rows) {
                return Err(Error::OutOfRange(format!(
                    "row {r} is past the {} rows of fragment {frag}",
                    f.physical_rows
                )));
            }
            requests.push((f, rows, ps));
        }
        self.take_physical(requests, addresses.len(), columns).await
    }

    async fn take_physical(
        &self,
        requests: Vec<(&pb::DataFragment, Vec<u64>, Vec<usize>)>,
        n: usize,
        columns: Option<&[String]>,
    ) -> Result<RecordBatch> {
        let out_schema = self.take_schema(columns)?;
        let (names, specials) = match columns {
            Some(c) => self.split_specials(c),
            None => (
                out_schema.fields().iter().map(|f| f.name().clone()).collect(),
                Vec::new(),
            ),
        };
        let schema = if specials.is_empty() {
            out_schema.clone()
        } else {
            projected_schema(self.scan_schema(), &names)?
        };
        let parts = if requests.len() > 1 && n >= PARALLEL_TAKE_ROWS {
            // Fragments read and decode on the runtime's workers (both cores), not one by one.
            let handles: Vec<_> = requests
                .iter()
                .map(|(f, rows, _)| {
                    let (ds, f, names, schema, rows) =
                        (self.clone(), (*f).clone(), names.clone(), schema.clone(), rows.clone());
                    tokio::spawn(async move { ds.take_rows(&f, &names, &schema, &rows).await })
                })
                .collect();
            let mut parts = Vec::with_capacity(handles.len());
            for h in handles {
                parts.push(h.await.map_err(Error::from)??);
            }
            parts
        } else {
            futures::future::try_join_all(
                requests
                    .iter()
                    .map(|(f, rows, _)| self.take_rows(f, &names, &schema, rows)),
            )
            .await?
        };
        let opts = RecordBatchOptions::new().with_row_count(Some(n));
        if parts.is_empty() {
            return Ok(RecordBatch::try_new_with_options(
                out_schema.clone(),
                out_schema
                    .fields()
                    .iter()
                    .map(|f| arrow_array::new_empty_array(f.data_type()))
                    .collect(),
                &RecordBatchOptions::new().with_row_count(Some(0)),
            )?);
        }
        let all = arrow_select::concat::concat_batches(&schema, &parts)?;
        // Row k of `all` belongs at output position positions[k]; invert that.
        let mut inverse = vec![0u32; n];
        let mut k = 0u32;
        for (_, _, positions) in &requests {
            for &p in positions {
                inverse[p] = k;
                k += 1;
            }
        }
        // Rows asked for in storage order (a loader's batches) are already in place.
        let out = if inverse.iter().enumerate().all(|(i, &k)| i as u32 == k) {
            all
        } else {
            arrow_select::take::take_record_batch(&all, &UInt32Array::from(inverse))?
        };
        let mut columns = out.columns().to_vec();
        for (at, s) in specials {
            let mut values = vec![0u64; n];
            for (f, rows, positions) in &requests {
                let addrs = UInt64Array::from(rows.iter().map(|r| (f.id << 32) | r).collect::<Vec<u64>>());
                let col = self.special_column(s, f, &addrs).await?;
                let col = col.as_primitive::<arrow_array::types::UInt64Type>();
                for (k, &p) in positions.iter().enumerate() {
                    values[p] = col.value(k);
                }
            }
            columns.insert(at.min(columns.len()), Arc::new(UInt64Array::from(values)));
        }
        Ok(RecordBatch::try_new_with_options(out_schema, columns, &opts)?)
    }

    /// Reads physical `rows` (any order) of a fragment.
    async fn take_rows(
        &self,
        frag: &pb::DataFragment,
        names: &[String],
        schema: &SchemaRef,
        rows: &[u64],
    ) -> Result<RecordBatch> {
        let mut sorted = rows.to_vec();
        sorted.sort_unstable();
        sorted.dedup();
        let ranges = lancelet_file::reader::to_ranges(&sorted);
        let batch = self.read_rows(frag, names, schema, &ranges).await?;
        if sorted.as_slice() == rows {
            return Ok(batch);
        }
        let positions: Vec<u32> = rows
            .iter()
            .map(|r| sorted.binary_search(r).map(|p| p as u32).unwrap_or(0))
            .collect();
        Ok(arrow_select::take::take_record_batch(
            &batch,
            &UInt32Array::from(positions),
        )?)
    }
}

/// `names` with the paths into each struct sorted by the schema's field order; top-level
/// columns keep the order they were first named in.
fn schema_order(schema: &arrow_schema::Schema, names: Vec<String>) -> Vec<String> {
    let key = |name: &str| -> Option<Vec<usize>> {
        if let Ok(i) = schema.index_of(name) {
            return Some(vec![i]);
        }
        let mut parts = name.split('.');
        let mut out = vec![schema.index_of(parts.next()?).ok()?];
        let mut dt = schema.field(out[0]).data_type().clone();
        for p in parts {
            let arrow_schema::DataType::Struct(children) = dt else {
                return None;
            };
            let (i, f) = children.find(p)?;
            out.push(i);
            dt = f.data_type().clone();
        }
        Some(out)
    };
    let keyed: Vec<(Option<Vec<usize>>, String)> = names.into_iter().map(|n| (key(&n), n)).collect();
    let mut tops: Vec<Option<usize>> = Vec::new();
    for (k, _) in &keyed {
        let top = k.as_ref().map(|k| k[0]);
        if top.is_none() || !tops.contains(&top) {
            tops.push(top);
        }
    }
    let mut out = Vec::with_capacity(keyed.len());
    for top in tops {
        let mut group: Vec<&(Option<Vec<usize>>, String)> = match top {
            Some(t) => keyed
                .iter()
                .filter(|(k, _)| k.as_ref().map(|k| k[0]) == Some(t))
                .collect(),
            None => keyed.iter().filter(|(k, _)| k.is_none()).collect(),
        };
        group.sort_by(|a, b| a.0.cmp(&b.0));
        out.extend(group.into_iter().map(|(_, n)| n.clone()));
    }
    out.dedup();
    out
}

/// Rows from which a take over several fragments reads them in parallel tasks (below, the
/// tasks' start-up costs more than they save).
const PARALLEL_TAKE_ROWS: usize = 64;

/// The physical row of live offset `off` given a fragment's live ranges.
pub(crate) fn live_to_physical(live: &[Range<u64>], mut off: u64) -> u64 {
    for r in live {
        let len = r.end - r.start;
        if off < len {
            return r.start + off;
        }
        off -= len;
    }
    live.last().map(|r| r.end).unwrap_or(0)
}
