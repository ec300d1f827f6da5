//! Planning a scan: the projection and the filter bound to the dataset's schema, then
//! the tasks (see `tasks`).

use std::collections::BTreeSet;
use std::sync::Arc;

use arrow_schema::{DataType, Field, FieldRef, Schema, SchemaRef};
use lancelet_expr::BoundExpr;
use lancelet_file::plan::{plan_schema, project};

use super::tasks::{measured_share, plan_tasks, read_share};
use super::{Columns, Scan, ScanOptions, ScanStats, ROW_ADDR, ROW_ID};
use crate::scan::lineage::Special;
use crate::{Dataset, Error, Result};

/// A scan's filter, bound to the columns it reads (and the special columns it names).
#[derive(Debug)]
pub(super) struct Filter {
    pub(super) sql: String,
    pub(super) expr: BoundExpr,
    /// Top-level columns it reads.
    pub(super) columns: Vec<String>,
    /// The special columns (`_rowid`, versions...) it uses, in [`Special::IN_SQL`] order.
    pub(super) specials: Vec<Special>,
    pub(super) schema: SchemaRef,
}

/// One output column of a plain projection.
#[derive(Debug, Clone)]
pub(super) enum Pick {
    /// Column `i` of the batch read.
    Read(usize),
    /// A field inside struct column `i`, by path, output flat under its dotted name (as
    /// pylance 14 returns `columns=["s.b"]`).
    Nested(usize, Vec<String>),
    /// A computed column.
    Special(Special),
}

#[derive(Debug)]
pub(super) enum Output {
    /// The projected columns as read, with special columns where they were named.
    Read(Vec<Pick>),
    /// Expressions over the read columns (and the special ones it names).
    Exprs(Vec<(String, BoundExpr)>, Vec<Special>),
}

/// `schema`'s fields followed by the special columns: what expressions are bound against.
pub(super) fn with_special_fields(schema: &Schema) -> Schema {
    let mut fields: Vec<FieldRef> = schema.fields().iter().cloned().collect();
    fields.extend(Special::IN_SQL.map(|s| Arc::new(s.field())));
    Schema::new(fields)
}

/// The schema of the columns `names` (dotted paths merged into their structs) of `schema`.
pub(crate) fn projected_schema(schema: &Schema, names: &[String]) -> Result<SchemaRef> {
    let (plans, _) = plan_schema(schema)?;
    let picked = project(&plans, names)
        .map_err(|n| Error::InvalidArgument(format!("column {n:?} is not in the dataset's schema")))?;
    let fields: Vec<FieldRef> = picked.iter().map(|p| p.field().clone()).collect();
    Ok(Arc::new(Schema::new_with_metadata(fields, schema.metadata().clone())))
}

pub(super) fn top_level(path: &[String]) -> Option<&String> {
    path.first()
}

impl Scan {
    /// Plans a scan of `ds`.
    pub async fn plan(ds: &Dataset, opts: ScanOptions) -> Result<Self> {
        if opts.batch_size == 0 {
            return Err(Error::InvalidArgument("batch_size must be positive".into()));
        }
        if opts.blob_binary {
            return Box::pin(Self::plan_blob_binary(ds, opts)).await;
        }
        if !opts.order_by.is_empty() {
            return Box::pin(Self::plan_ordered(ds, opts)).await;
        }
        let base = ds.scan_schema().clone();
        // Filter: parse, then bind against exactly the batch the filter stage builds.
        let filter = match &opts.filter {
            None => None,
            Some(sql) => Some(plan_filter(&base, sql)?),
        };
        // Named columns in order: `Ok(special)` or `Err(stored name)`; mapped to picks below.
        let mut named: Option<Vec<std::result::Result<Special, String>>> = None;
        let (read, output) = match &opts.columns {
            Columns::All => (base.fields().iter().map(|f| f.name().clone()).collect(), None),
            Columns::Names(names) => {
                // Special columns may be named among stored ones; they are computed, not read.
                let mut read = Vec::new();
                let mut order = Vec::new();
                for n in names {
                    match Special::parse(n) {
                        Some(s) if base.field_with_name(n).is_err() => order.push(Ok(s)),
                        _ => {
                            order.push(Err(n.clone()));
                            read.push(n.clone());
                        }
                    }
                }
                named = Some(order);
                (read, None)
            }
            Columns::Exprs(exprs) => {
                let mut cols = BTreeSet::new();
                let mut parsed = Vec::new();
                for (name, sql) in exprs {
                    let ctx = || format!("column {name:?} = {sql:?}");
                    let e = lancelet_expr::parse(sql).map_err(|e| Error::expr(ctx(), e))?;
                    let resolved = e.bind(&with_special_fields(&base)).map_err(|e| Error::expr(ctx(), e))?;
                    for p in resolved.expr().columns() {
                        if let Some(t) = top_level(&p) {
                            if base.field_with_name(t).is_ok() {
                                cols.insert(t.clone());
                            }
                        }
                    }
                    parsed.push((name.clone(), sql.clone(), e));
                }
                // Keep the dataset's column order for the read.
                let read: Vec<String> = base
                    .fields()
                    .iter()
                    .map(|f| f.name().clone())
                    .filter(|n| cols.contains(n))
                    .collect();
                (read, Some(parsed))
            }
        };
        let read_schema = projected_schema(&base, &read)?;
        let output = match output {
            None => Output::Read(read_picks(&read_schema, named)?),
            Some(parsed) => {
                let input = with_special_fields(&read_schema);
                let mut bound = Vec::new();
                let mut used = BTreeSet::new();
                for (name, sql, e) in parsed {
                    let b = e
                        .bind_projection(&input)
                        .map_err(|e| Error::expr(format!("column {name:?} = {sql:?}"), e))?;
                    for p in b.expr().columns() {
                        if let Some(s) = top_level(&p).and_then(|t| Special::parse(t)) {
                            if read_schema.field_with_name(s.name()).is_err() {
                                used.insert(s.name());
                            }
                        }
                    }
                    bound.push((name, b));
                }
                let used = Special::IN_SQL
                    .into_iter()
                    .filter(|s| used.contains(s.name()))
                    .collect();
                Output::Exprs(bound, used)
            }
        };
        let mut out_fields: Vec<FieldRef> = match &output {
            Output::Read(picks) => picks
                .iter()
                .map(|p| match p {
                    Pick::Read(i) => read_schema.fields()[*i].clone(),
                    Pick::Nested(i, path) => nested_field(&read_schema.fields()[*i], path),
                    Pick::Special(s) => Arc::new(s.field()),
                })
                .collect(),
            Output::Exprs(b, _) => b
                .iter()
                .map(|(n, e)| Arc::new(expr_field(n, e, &read_schema)))
                .collect(),
        };
        if opts.with_row_id {
            out_fields.push(Arc::new(Field::new(ROW_ID, DataType::UInt64, true)));
        }
        if opts.with_row_address {
            out_fields.push(Arc::new(Field::new(ROW_ADDR, DataType::UInt64, true)));
        }
        let schema = Arc::new(Schema::new_with_metadata(out_fields, base.metadata().clone()));
        let stats = Arc::new(ScanStats::default());
        let (share, widest) = match measured_share(
            &ds.clone().with_io_stats(stats.io.clone()),
            &read_schema,
            filter.as_ref(),
        )
        .await
        {
            Some((s, w)) => (s, Some(w)),
            None => (read_share(&base, &read_schema, filter.as_ref()), None),
        };
        // Statistics read while planning count as the scan's I/O.
        let counted = ds.clone().with_io_stats(stats.io.clone());
        let prune = filter
            .as_ref()
            .filter(|_| opts.use_stats)
            .map(|f| (&f.expr, f.columns.as_slice()));
        let indexed = match &filter {
            Some(f) if opts.use_scalar_index && !opts.include_deleted => {
                crate::scan::index_query::candidates(&counted, &f.expr).await?
            }
            _ => None,
        };
        let index_rows = indexed.as_ref();
        let tasks = plan_tasks(
            &counted,
            &opts,
            filter.is_some(),
            share,
            widest.as_deref(),
            prune,
            index_rows,
        )
        .await?;
        Ok(Self {
            ds: ds.clone().with_io_stats(stats.io.clone()),
            stats,
            tasks,
            read,
            read_schema,
            filter,
            output,
            with_row_id: opts.with_row_id,
            with_row_addr: opts.with_row_address,
            schema,
            limit: opts.limit,
            offset: if filter_is_some(&opts) { opts.offset } else { 0 },
            batch_size: opts.batch_size,
            indexes_used: indexed.map(|c| c.used).unwrap_or_default(),
            order: None,
            out_schema: None,
            strict_batch_size: opts.strict_batch_size,
            blobs: None,
        })
    }

    /// Plans an ordered scan: every matching row, with hidden sort keys, sorted in one task;
    /// offset and limit apply afterwards.
    async fn plan_ordered(ds: &Dataset, mut opts: ScanOptions) -> Result<Self> {
        let order_by = std::mem::take(&mut opts.order_by);
        let limit = opts.limit.take();
        let offset = std::mem::take(&mut opts.offset);
        let mut present = Vec::new();
        if opts.with_row_id {
            present.push(ROW_ID);
        }
        if opts.with_row_address {
            present.push(ROW_ADDR);
        }
        let (columns, order) = super::order::plan(&opts.columns, &order_by, &present);
        opts.columns = columns;
        let mut scan = Self::plan(ds, opts).await?;
        order.check(&scan.schema)?;
        scan.out_schema = Some(order.output_schema(&scan.schema));
        scan.order = Some(order);
        scan.limit = limit;
        scan.offset = offset;
        Ok(scan)
    }
}

/// An empty or blank filter is a mistake (a filter built from an empty list, say), not
/// "every row": it is refused, as pylance refuses it. Pass no filter for every row.
pub(crate) fn refuse_blank_filter(sql: &str) -> Result<()> {
    if sql.trim().is_empty() {
        return Err(Error::InvalidArgument(format!(
            "filter {sql:?} is empty; pass no filter (None) to read every row"
        )));
    }
    Ok(())
}

pub(super) fn filter_is_some(opts: &ScanOptions) -> bool {
    opts.filter.is_some()
}

pub(super) fn plan_filter(base: &Schema, sql: &str) -> Result<Filter> {
    refuse_blank_filter(sql)?;
    let parsed = lancelet_expr::parse(sql).map_err(|e| Error::expr(format!("filter {sql:?}"), e))?;
    // Bind against the full schema first: an unknown column is reported with every column
    // the user could have meant, and names are resolved as the binder resolves them.
    let resolved = parsed
        .bind(&with_special_fields(base))
        .map_err(|e| Error::expr(format!("filter {sql:?}"), e))?;
    let mut cols = BTreeSet::new();
    let mut used = BTreeSet::new();
    for p in resolved.expr().columns() {
        match top_level(&p).map(String::as_str) {
            Some(t) if base.field_with_name(t).is_ok() => {
                cols.insert(t.to_string());
            }
            Some(t) => {
                if let Some(s) = Special::parse(t) {
                    used.insert(s.name());
                }
            }
            None => {}
        }
    }
    let specials: Vec<Special> = Special::IN_SQL
        .into_iter()
        .filter(|s| used.contains(s.name()))
        .collect();
    let columns: Vec<String> = base
        .fields()
        .iter()
        .map(|f| f.name().clone())
        .filter(|n| cols.contains(n))
        .collect();
    let mut fields: Vec<FieldRef> = columns
        .iter()
        .filter_map(|c| base.field_with_name(c).ok().map(|f| Arc::new(f.clone())))
        .collect();
    fields.extend(specials.iter().map(|s| Arc::new(s.field())));
    let schema = Arc::new(Schema::new(fields));
    let bound = parsed
        .bind(&schema)
        .map_err(|e| Error::expr(format!("filter {sql:?}"), e))?;
    if bound.data_type() != &DataType::Boolean && bound.data_type() != &DataType::Null {
        return Err(Error::InvalidArgument(format!(
            "filter {sql:?} is of type {}, not a boolean condition",
            bound.data_type()
        )));
    }
    Ok(Filter {
        sql: sql.to_string(),
        expr: bound,
        columns,
        specials,
        schema,
    })
}

/// Where each output column of a plain projection comes from: the read batch's columns
/// (dotted paths merged into their struct, as read) and special columns where named.
pub(super) fn read_picks(
    read_schema: &Schema,
    named: Option<Vec<std::result::Result<Special, String>>>,
) -> Result<Vec<Pick>> {
    let Some(named) = named else {
        return Ok((0..read_schema.fields().len()).map(Pick::Read).collect());
    };
    let mut picks = Vec::with_capacity(named.len());
    let mut seen = BTreeSet::new();
    for n in named {
        match n {
            Ok(s) => picks.push(Pick::Special(s)),
            Err(name) => {
                if let Ok(i) = read_schema.index_of(&name) {
                    if seen.insert(i) {
                        picks.push(Pick::Read(i));
                    }
                    continue;
                }
                let mut parts = name.split('.').map(str::to_string);
                let top = parts.next().unwrap_or_default();
                let i = read_schema.index_of(&top)?;
                picks.push(Pick::Nested(i, parts.collect()));
            }
        }
    }
    Ok(picks)
}

/// The field at `path` inside struct field `top`, named by its dotted path.
pub(super) fn nested_field(top: &FieldRef, path: &[String]) -> FieldRef {
    let mut f = top.clone();
    for p in path {
        let child = match f.data_type() {
            DataType::Struct(children) => children.iter().find(|c| c.name() == p).cloned(),
            _ => None,
        };
        match child {
            Some(c) => f = c,
            None => break,
        }
    }
    let name = std::iter::once(top.name().as_str())
        .chain(path.iter().map(String::as_str))
        .collect::<Vec<_>>()
        .join(".");
    Arc::new(keep_json(Field::new(name, f.data_type().clone(), true), &f))
}

/// `out` with the metadata of `from` when `from` is stored JSON, so that it reads back as
/// JSON text (pylance returns `columns=["s.j"]` and `{"x": "j"}` as JSON).
fn keep_json(out: Field, from: &Field) -> Field {
    if lancelet_file::json::is_lance_json(from) {
        out.with_metadata(from.metadata().clone())
    } else {
        out
    }
}

/// The output field of projection expression `e` named `name`: a plain reference to a
/// stored JSON column stays JSON.
fn expr_field(name: &str, e: &BoundExpr, read_schema: &Schema) -> Field {
    let out = Field::new(name, e.data_type().clone(), true);
    let lancelet_expr::Expr::Column(path) = e.expr() else {
        return out;
    };
    let Some((top, rest)) = path.split_first() else {
        return out;
    };
    let Ok(mut f) = read_schema.field_with_name(top).cloned() else {
        return out;
    };
    for p in rest {
        let child = match f.data_type() {
            DataType::Struct(children) => children.iter().find(|c| c.name() == p).map(|c| c.as_ref().clone()),
            _ => None,
        };
        match child {
            Some(c) => f = c,
            None => return out,
        }
    }
    keep_json(out, &f)
}
