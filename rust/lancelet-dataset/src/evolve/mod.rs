//! Schema evolution without rewriting data.
//!
//! - New columns computed from existing ones ([`Dataset::add_columns_sql`], or any
//!   per-fragment batches through [`Dataset::write_column_file`] and
//!   [`Dataset::commit_new_columns`]) go into one **new data file per fragment**, holding
//!   only the new fields, committed as a Merge transaction. Existing files are never
//!   rewritten: the bytes written are the new columns' bytes.
//! - New all-null columns ([`Dataset::add_null_columns`]) write nothing: fragments without
//!   a field read it as nulls. Like dropping ([`Dataset::drop_columns`]) and renaming or
//!   relaxing nullability ([`Dataset::alter_columns`]), it only commits a new schema (a
//!   Project transaction); files keep the bytes of dropped fields until compaction.
//! - Changing a column's type ([`Alteration::data_type`]) rewrites that column only: its
//!   values, cast, go into one new data file per fragment under a **new field id** that
//!   takes the old field's place in the schema (a Merge transaction, as in pylance). The
//!   old files still hold the old id, which the schema no longer names, so reads skip it.
//!
//! New fields get ids above every id the dataset has used, so a dropped field's data can
//! never be mistaken for a new field's.

pub mod backfill;
pub mod merge_columns;

use std::collections::HashSet;
use std::sync::Arc;

use arrow_schema::{DataType, Schema};
use lancelet_file::schema::to_lance_fields;
use lancelet_proto::pbfile;
use lancelet_table::pb;
use lancelet_table::pb::transaction::Operation;

use crate::scan::{Columns, Scan, ScanOptions};
use crate::write::{FragmentWriter, WriteParams};
use crate::{Dataset, Error, Result};

/// One change of [`Dataset::alter_columns`].
#[derive(Debug, Clone, Default)]
pub struct Alteration {
    /// The column (dotted for struct children).
    pub path: String,
    /// Its new name.
    pub rename: Option<String>,
    /// Its new nullability (only `true` can be set without checking the data).
    pub nullable: Option<bool>,
    /// Its new type (see [`castable`]); the column is rewritten.
    pub data_type: Option<DataType>,
}

/// Whether `alter_columns` may change a column of type `from` to `to`. As in pylance 14, a
/// cast stays within one family: integers, floats, temporal types, booleans, `Utf8` /
/// `LargeUtf8`, `Binary` / `LargeBinary`, decimals, lists (variable, large or fixed size)
/// of castable items, and a dictionary as its value type; and Arrow must be able to cast
/// it. Structs, views, maps and casts across families (`int32` to `double`, `string` to
/// `int64`) are refused.
pub(crate) fn castable(from: &DataType, to: &DataType) -> bool {
    use DataType as T;
    let family = match (from, to) {
        (T::Dictionary(_, v), _) => castable(v, to),
        (_, T::Dictionary(_, v)) => castable(from, v),
        _ if from.is_integer() => to.is_integer(),
        _ if from.is_floating() => to.is_floating(),
        _ if from.is_temporal() => to.is_temporal(),
        (T::Boolean, T::Boolean)
        | (T::Utf8 | T::LargeUtf8, T::Utf8 | T::LargeUtf8)
        | (T::Binary | T::LargeBinary, T::Binary | T::LargeBinary)
        | (T::Decimal128(..) | T::Decimal256(..), T::Decimal128(..) | T::Decimal256(..)) => true,
        (
            T::List(a) | T::LargeList(a) | T::FixedSizeList(a, _),
            T::List(b) | T::LargeList(b) | T::FixedSizeList(b, _),
        ) => castable(a.data_type(), b.data_type()),
        _ => false,
    };
    family && arrow_cast::can_cast_types(from, to)
}

/// The index in `fields` of the field at dotted `path`.
fn find_field(fields: &[pbfile::Field], path: &str) -> Result<usize> {
    let mut parent = -1;
    let mut found = None;
    for part in path.split('.') {
        let i = fields
            .iter()
            .position(|f| f.parent_id == parent && f.name == part)
            .ok_or_else(|| Error::InvalidArgument(format!("column {path:?} does not exist")))?;
        parent = fields[i].id;
        found = Some(i);
    }
    found.ok_or_else(|| Error::InvalidArgument("an empty column name".into()))
}

/// The ids of `id` and everything below it.
fn subtree(fields: &[pbfile::Field], id: i32) -> HashSet<i32> {
    let mut out = HashSet::from([id]);
    loop {
        let before = out.len();
        for f in fields {
            if out.contains(&f.parent_id) {
                out.insert(f.id);
            }
        }
        if out.len() == before {
            return out;
        }
    }
}

impl Dataset {
    /// The highest field id any version of this dataset's current schema or files uses.
    fn max_field_id(&self) -> i32 {
        let m = self.manifest();
        let in_schema = m.fields.iter().map(|f| f.id).max().unwrap_or(-1);
        let in_files = m
            .fragments
            .iter()
            .flat_map(|f| f.files.iter().flat_map(|d| d.fields.iter().copied()))
            .max()
            .unwrap_or(-1);
        in_schema.max(in_files)
    }

    /// Lance fields for `schema`'s fields, numbered after the dataset's; refuses names the
    /// dataset has.
    pub fn new_fields(&self, schema: &Schema) -> Result<Vec<pbfile::Field>> {
        // View types (polars strings) are stored as their plain types, as pylance does.
        let plain = crate::write::views::plain_schema(schema);
        let schema = plain.as_deref().unwrap_or(schema);
        // JSON text columns are stored as JSONB.
        let stored = lancelet_file::json::storage_schema(schema);
        let schema = stored.as_deref().unwrap_or(schema);
        let top: HashSet<&str> = self
            .manifest()
            .fields
            .iter()
            .filter(|f| f.parent_id < 0)
            .map(|f| f.name.as_str())
            .collect();
        let mut seen = HashSet::new();
        for f in schema.fields() {
            if top.contains(f.name().as_str()) || !seen.insert(f.name().as_str()) {
                return Err(Error::InvalidArgument(format!("column {:?} already exists", f.name())));
            }
            if matches!(f.data_type(), DataType::Null) {
                return Err(Error::InvalidArgument(format!(
                    "column {:?} has type null; give it a real type",
                    f.name()
                )));
            }
        }
        if schema.fields().is_empty() {
            return Err(Error::InvalidArgument("no new columns given".into()));
        }
        let base = self.max_field_id() + 1;
        let mut fields = to_lance_fields(schema)?;
        lancelet_table::manifest::check_field_names(&fields, |_| true)?;
        for f in &mut fields {
            f.id += base;
            if f.parent_id >= 0 {
                f.parent_id += base;
            }
        }
        Ok(fields)
    }

    async fn commit_schema(&self, fields: Vec<pbfile::Field>) -> Result<Self> {
        // The new schema must still read: this also checks the field list is well formed.
        lancelet_file::schema::from_lance_fields(&fields, &self.manifest().schema_metadata, "new schema")?;
        self.commit_operation(Operation::Project(pb::transaction::Project { schema: fields }), None)
            .await
    }

    /// Adds nullable columns that are null in every row; no data is written.
    pub async fn add_null_columns(&self, schema: &Schema) -> Result<Self> {
        if let Some(f) = schema.fields().iter().find(|f| !f.is_nullable()) {
            return Err(Error::InvalidArgument(format!(
                "column {:?} would be null in every row, so it must be nullable",
                f.name()
            )));
        }
        let mut fields = self.manifest().fields.clone();
        fields.extend(self.new_fields(schema)?);
        self.commit_schema(fields).await
    }

    /// Removes columns (dotted paths reach struct children) from the schema.
    pub async fn drop_columns(&self, names: &[String]) -> Result<Self> {
        let fields = &self.manifest().fields;
        let mut gone = HashSet::new();
        let mut parents = HashSet::new();
        for name in names {
            let i = find_field(fields, name)?;
            // A field inside structs only (not inside a list): reads pick the struct's
            // remaining children by id.
            let mut up = fields[i].parent_id;
            while up >= 0 {
                let Some(p) = fields.iter().find(|f| f.id == up) else {
                    break;
                };
                if p.logical_type != "struct" {
                    return Err(Error::Unsupported(format!(
                        "dropping {name:?}, a field inside a {} (drop the whole column)",
                        p.logical_type
                    )));
                }
                parents.insert(p.id);
                up = p.parent_id;
            }
            gone.extend(subtree(fields, fields[i].id));
        }
        // A struct left without children goes too, as in pylance (innermost first).
        loop {
            let empty: Vec<i32> = parents
                .iter()
                .copied()
                .filter(|p| !gone.contains(p) && !fields.iter().any(|f| f.parent_id == *p && !gone.contains(&f.id)))
                .collect();
            if empty.is_empty() {
                break;
            }
            gone.extend(empty);
        }
        let kept: Vec<pbfile::Field> = fields.iter().filter(|f| !gone.contains(&f.id)).cloned().collect();
        if !kept.iter().any(|f| f.parent_id < 0) {
            return Err(Error::InvalidArgument("cannot drop every column".into()));
        }
        self.commit_schema(kept).await
    }

    /// Renames columns, makes them nullable and changes their types. Making a column
    /// non-nullable is refused (it would need every row checked). Without a type change
    /// only the schema is committed; with one, the cast columns are rewritten (see the
    /// module docs).
    pub async fn alter_columns(&self, alterations: &[Alteration]) -> Result<Self> {
        let mut fields = self.manifest().fields.clone();
        let mut casts: Vec<(i32, DataType)> = Vec::new();
        for a in alterations {
            let i = find_field(&fields, &a.path)?;
            if let Some(to) = &a.data_type {
                if fields[i].parent_id >= 0 {
                    return Err(Error::Unsupported(format!(
                        "changing the type of {:?}, a field inside another (cast the whole column)",
                        a.path
                    )));
                }
                casts.retain(|(id, _)| *id != fields[i].id);
                casts.push((fields[i].id, to.clone()));
            }
            if let Some(name) = &a.rename {
                if name.is_empty() || name.contains('.') {
                    return Err(Error::InvalidArgument(format!(
                        "cannot rename {:?} to {name:?}: names are non-empty and have no '.'",
                        a.path
                    )));
                }
                let parent = fields[i].parent_id;
                if fields
                    .iter()
                    .any(|f| f.parent_id == parent && &f.name == name && f.id != fields[i].id)
                {
                    return Err(Error::InvalidArgument(format!("column {name:?} already exists")));
                }
                fields[i].name = name.clone();
            }
            match a.nullable {
                Some(true) => fields[i].nullable = true,
                Some(false) if fields[i].nullable => {
                    return Err(Error::Unsupported(format!(
                        "making {:?} non-nullable (it would need every row checked)",
                        a.path
                    )))
                }
                _ => {}
            }
        }
        if casts.is_empty() {
            return self.commit_schema(fields).await;
        }
        self.cast_columns(fields, &casts).await
    }

    /// Rewrites top-level columns as new types: `casts` holds `(field id, type)`, `fields`
    /// the schema after the other alterations (names, nullability). Each cast column gets
    /// new field ids (above every id in use) in the old field's place; every fragment gets
    /// one new data file with the cast values of all its rows, deleted rows included.
    async fn cast_columns(&self, mut fields: Vec<pbfile::Field>, casts: &[(i32, DataType)]) -> Result<Self> {
        use futures::StreamExt;
        let old = &self.manifest().fields;
        let mut read = Vec::new();
        let mut new_arrow = Vec::new();
        for (id, to) in casts {
            let (Some(was), Some(now)) = (old.iter().find(|f| f.id == *id), fields.iter().find(|f| f.id == *id)) else {
                return Err(Error::InvalidArgument(format!("no field with id {id}")));
            };
            let current = self
                .schema()
                .field_with_name(&was.name)
                .map_err(|_| Error::InvalidArgument(format!("column {:?} does not exist", was.name)))?;
            if !castable(current.data_type(), to) || matches!(to, DataType::Struct(_)) {
                return Err(Error::InvalidArgument(format!(
                    "Cannot cast column {:?} from {} to {to}",
                    was.name,
                    current.data_type()
                )));
            }
            read.push(was.name.clone());
            new_arrow.push(
                arrow_schema::Field::new(now.name.clone(), to.clone(), now.nullable)
                    .with_metadata(current.metadata().clone()),
            );
        }
        let new_schema = Arc::new(Schema::new(new_arrow));
        let mut new_fields = to_lance_fields(&new_schema)?;
        let base = self.max_field_id() + 1;
        for f in &mut new_fields {
            f.id += base;
            if f.parent_id >= 0 {
                f.parent_id += base;
            }
        }
        // Each new top-level field (with its children) takes the old one's place.
        for (k, (id, _)) in casts.iter().enumerate() {
            let top = new_fields.iter().filter(|f| f.parent_id < 0).nth(k).map(|f| f.id);
            let group: Vec<pbfile::Field> = new_fields
                .iter()
                .filter(|f| Some(f.id) == top || top.is_some_and(|t| subtree(&new_fields, t).contains(&f.id)))
                .cloned()
                .collect();
            let gone = subtree(&fields, *id);
            let at = fields.iter().position(|f| f.id == *id).unwrap_or(fields.len());
            fields.retain(|f| !gone.contains(&f.id));
            let at = at.min(fields.len());
            fields.splice(at..at, group);
        }
        lancelet_file::schema::from_lance_fields(&fields, &self.manifest().schema_metadata, "new schema")?;
        if self.fragments().is_empty() {
            return self.commit_schema(fields).await;
        }
        let mut files = Vec::new();
        let result: Result<()> = async {
            for frag in self.fragments() {
                let opts = ScanOptions {
                    columns: Columns::Names(read.clone()),
                    fragments: Some(vec![frag.id]),
                    include_deleted: true,
                    ..ScanOptions::default()
                };
                let scan = Scan::plan(self, opts).await?;
                let scan = &scan;
                let target = &new_schema;
                let batches = futures::stream::iter(0..scan.num_tasks())
                    .then(|i| scan.run_task(i))
                    .map(move |b| b.and_then(|b| cast_batch(&b, target)));
                let file = self
                    .write_column_file(frag.id, new_schema.clone(), &new_fields, batches)
                    .await?;
                files.push((frag.id, file));
            }
            Ok(())
        }
        .await;
        let paths: Vec<String> = files.iter().map(|(_, f)| f.path.clone()).collect();
        let committed = match result {
            Ok(()) => self.commit_column_files(files, fields).await,
            Err(e) => Err(e),
        };
        if let Err(e) = &committed {
            if crate::write::nothing_committed(e) {
                self.remove_data_files(paths.iter().map(String::as_str)).await;
            }
        }
        committed
    }

    /// A writer of one fragment's new columns (`fields` from [`Dataset::new_fields`]); feed
    /// it one row per physical row of the fragment, deleted rows included, then hand it to
    /// [`Dataset::finish_column_file`]. A `file_tag` goes into the file name (see
    /// [`crate::write::WriteParams::file_tag`]).
    pub fn column_file_writer(
        &self,
        schema: Arc<Schema>,
        fields: &[pbfile::Field],
        file_tag: Option<String>,
    ) -> Result<FragmentWriter> {
        // All-null columns, drops and renames write no data and work at any format.
        let version = self.writable_version("writing new column data")?;
        let params = WriteParams {
            max_rows_per_file: u64::MAX,
            max_bytes_per_file: u64::MAX,
            file_version: version,
            file_tag,
            ..WriteParams::default()
        };
        let ids: Vec<i32> = fields.iter().map(|f| f.id).collect();
        FragmentWriter::new(self.store().clone(), schema, ids, params)
    }

    /// Completes `writer`'s file for fragment `fragment_id` (checking it has one row per
    /// physical row) and returns it, not yet committed. On error the file is removed.
    pub async fn finish_column_file(&self, fragment_id: u64, mut writer: FragmentWriter) -> Result<pb::DataFile> {
        let done: Result<pb::DataFile> = async {
            let expected = self.fragment(fragment_id)?.physical_rows;
            let mut done = writer.finish()?;
            writer.upload_pending().await?;
            let rows: u64 = done.iter().map(|f| f.physical_rows).sum();
            if done.len() != 1 || rows != expected {
                return Err(Error::InvalidArgument(format!(
                    "the new columns of fragment {fragment_id} have {rows} rows; it has {expected}"
                )));
            }
            done.pop()
                .and_then(|f| f.files.into_iter().next())
                .ok_or_else(|| Error::InvalidArgument("no data file was written".into()))
        }
        .await;
        if done.is_err() {
            writer.abort().await;
        }
        done
    }

    /// Writes one fragment's new columns from `batches` (see
    /// [`Dataset::column_file_writer`]) and returns the data file, not yet committed.
    pub async fn write_column_file(
        &self,
        fragment_id: u64,
        schema: Arc<Schema>,
        fields: &[pbfile::Field],
        batches: impl futures::Stream<Item = Result<arrow_array::RecordBatch>>,
    ) -> Result<pb::DataFile> {
        use futures::StreamExt;
        self.fragment(fragment_id)?;
        let mut writer = self.column_file_writer(schema, fields, None)?;
        let mut batches = std::pin::pin!(batches);
        while let Some(batch) = batches.next().await {
            if let Err(e) = batch.and_then(|b| writer.write(&b)) {
                writer.abort().await;
                return Err(e);
            }
        }
        self.finish_column_file(fragment_id, writer).await
    }

    /// Commits new columns: `files` holds one new data file per fragment (every fragment
    /// of this version), `fields` the new fields. On a conflict nothing is kept.
    pub async fn commit_new_columns(
        &self,
        files: Vec<(u64, pb::DataFile)>,
        fields: Vec<pbfile::Field>,
    ) -> Result<Self> {
        let mut schema = self.manifest().fields.clone();
        schema.extend(fields);
        self.commit_column_files(files, schema).await
    }

    /// Commits one new data file per fragment (`files`, every fragment of this version)
    /// with `schema` as the new full schema, as a Merge transaction.
    async fn commit_column_files(&self, files: Vec<(u64, pb::DataFile)>, schema: Vec<pbfile::Field>) -> Result<Self> {
        let mut fragments = self.fragments().to_vec();
        let by_id: std::collections::HashMap<u64, pb::DataFile> = files.into_iter().collect();
        for f in &mut fragments {
            let file = by_id
                .get(&f.id)
                .ok_or_else(|| Error::InvalidArgument(format!("no new data file for fragment {}", f.id)))?;
            crate::safe_relative(&file.path)?;
            f.files.push(file.clone());
        }
        if by_id.len() != fragments.len() {
            return Err(Error::InvalidArgument(
                "new data files for fragments the dataset does not have".into(),
            ));
        }
        lancelet_file::schema::from_lance_fields(&schema, &self.manifest().schema_metadata, "new schema")?;
        let op = Operation::Merge(pb::transaction::Merge {
            fragments,
            schema,
            schema_metadata: self.manifest().schema_metadata.clone(),
        });
        self.commit_operation(op, None).await
    }

    /// Adds columns computed by SQL expressions over existing ones (`(name, expression)`),
    /// one new data file per fragment.
    /// When every expression is a typed null (`CAST(NULL AS type)`), no data is written:
    /// the columns only join the schema, as pylance does.
    pub async fn add_columns_sql(&self, exprs: &[(String, String)], batch_size: usize) -> Result<Self> {
        use futures::StreamExt;
        if !exprs.is_empty() && exprs.iter().all(|(_, e)| is_typed_null(e)) {
            let opts = ScanOptions {
                columns: Columns::Exprs(exprs.to_vec()),
                ..ScanOptions::default()
            };
            let scan = Scan::plan(self, opts).await?;
            return self.add_null_columns(scan.schema()).await;
        }
        let mut files = Vec::new();
        let mut fields = None;
        let result: Result<()> = async {
            for frag in self.fragments() {
                let opts = ScanOptions {
                    columns: Columns::Exprs(exprs.to_vec()),
                    fragments: Some(vec![frag.id]),
                    include_deleted: true,
                    batch_size: batch_size.max(1),
                    ..ScanOptions::default()
                };
                let scan = Scan::plan(self, opts).await?;
                let schema = scan.schema().clone();
                if fields.is_none() {
                    fields = Some(self.new_fields(&schema)?);
                }
                let lance_fields = fields.as_deref().unwrap_or_default();
                // Task by task: memory stays at one task's rows.
                let scan = &scan;
                let batches = futures::stream::iter(0..scan.num_tasks()).then(|i| scan.run_task(i));
                let file = self.write_column_file(frag.id, schema, lance_fields, batches).await?;
                files.push((frag.id, file));
            }
            Ok(())
        }
        .await;
        if let Err(e) = result {
            self.remove_data_files(files.iter().map(|(_, f)| f.path.as_str())).await;
            return Err(e);
        }
        let Some(fields) = fields else {
            // No fragments: only the schema changes.
            let scan = Scan::plan(
                self,
                ScanOptions {
                    columns: Columns::Exprs(exprs.to_vec()),
                    ..ScanOptions::default()
                },
            )
            .await?;
            let mut all = self.manifest().fields.clone();
            all.extend(self.new_fields(scan.schema())?);
            return self.commit_schema(all).await;
        };
        let paths: Vec<String> = files.iter().map(|(_, f)| f.path.clone()).collect();
        match self.commit_new_columns(files, fields).await {
            Ok(ds) => Ok(ds),
            Err(e) => {
                if crate::write::nothing_committed(&e) {
                    self.remove_data_files(paths.iter().map(String::as_str)).await;
                }
                Err(e)
            }
        }
    }

    /// Best-effort removal of uncommitted data files (paths relative to `data/`).
    pub async fn remove_data_files(&self, paths: impl Iterator<Item = &str>) {
        for p in paths {
            if crate::safe_relative(p).is_ok() {
                let _ = self.store().delete(&format!("{}/{p}", crate::DATA_DIR)).await;
            }
        }
    }
}

/// `batch`'s columns cast to `target`'s types (and names); a value that does not fit the
/// new type is an error, never silently changed.
fn cast_batch(batch: &arrow_array::RecordBatch, target: &Arc<Schema>) -> Result<arrow_array::RecordBatch> {
    let opts = arrow_cast::CastOptions {
        safe: false,
        ..Default::default()
    };
    let columns = batch
        .columns()
        .iter()
        .zip(target.fields())
        .map(|(c, f)| {
            arrow_cast::cast_with_options(c, f.data_type(), &opts).map_err(|e| {
                Error::InvalidArgument(format!("cannot cast column {:?} to {}: {e}", f.name(), f.data_type()))
            })
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(arrow_array::RecordBatch::try_new(target.clone(), columns)?)
}

/// Whether SQL `expr` is `CAST(NULL AS type)`: a column of it is null in every row.
fn is_typed_null(expr: &str) -> bool {
    use lancelet_expr::{Expr, ScalarValue};
    matches!(
        lancelet_expr::parse(expr),
        Ok(Expr::Cast { expr, .. }) if matches!(*expr, Expr::Literal(ScalarValue::Null))
    )
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_schema::{DataType as T, Field, TimeUnit};

    use super::castable;

    #[test]
    fn casts_stay_within_a_family_as_in_pylance() {
        let list = |t: T| T::List(Arc::new(Field::new("item", t, true)));
        let vector = |t: T, n: i32| T::FixedSizeList(Arc::new(Field::new("item", t, true)), n);
        let dict = |t: T| T::Dictionary(Box::new(T::Int32), Box::new(t));
        let allowed = [
            (T::Int32, T::Int64),
            (T::Int32, T::UInt8),
            (T::Int32, T::Int32),
            (T::Float64, T::Float16),
            (T::Utf8, T::LargeUtf8),
            (T::Binary, T::LargeBinary),
            (T::Timestamp(TimeUnit::Microsecond, None), T::Date32),
            (T::Date32, T::Date64),
            (T::Decimal128(10, 2), T::Decimal128(12, 3)),
            (list(T::Int32), list(T::Int64)),
            (vector(T::Float32, 2), vector(T::Float16, 2)),
            (vector(T::Float32, 2), list(T::Float32)),
            (dict(T::Utf8), T::Utf8),
            (T::Utf8, dict(T::Utf8)),
        ];
        let refused = [
            (T::Int32, T::Float64),
            (T::Int32, T::Utf8),
            (T::Utf8, T::Binary),
            (T::Utf8, T::Utf8View),
            (T::Timestamp(TimeUnit::Microsecond, None), T::Int64),
            (T::Time32(TimeUnit::Second), T::Timestamp(TimeUnit::Second, None)),
            (T::Boolean, T::Int8),
            (T::Int64, T::Null),
            (vector(T::Float32, 2), vector(T::Float32, 3)),
            (list(T::Int32), T::Utf8),
        ];
        for (from, to) in allowed {
            assert!(castable(&from, &to), "{from} -> {to}");
        }
        for (from, to) in refused {
            assert!(!castable(&from, &to), "{from} -> {to}");
        }
    }
}
