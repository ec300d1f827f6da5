//! Rewriting rows that hold blob values (update, merge_insert, compaction): a scan gives a
//! blob column as descriptors, which point into the old data file (inline bytes, blob v1
//! payloads) or its sidecars; rows moved to a new data file need their payloads again.
//! Each descriptor is turned back into the value a writer takes, and the writer places it
//! anew, as pylance 14 does when it rewrites such rows:
//!
//! * blob v2: the `data` bytes, or an external `uri` with its `position` and `size`, which
//!   stays a reference; placed inline, packed or dedicated by the new file's rules;
//! * blob v1 (2.0, 2.1): the bytes, written before the new file's pages as a fresh write
//!   of those rows would place them.
//!
//! Blobs inside structs are materialized through their dotted paths, with the values
//! under a null parent left null (a writer stores nothing for them).

use std::sync::Arc;

use arrow_array::builder::{LargeBinaryBuilder, StringBuilder, UInt64Builder};
use arrow_array::cast::AsArray;
use arrow_array::types::UInt64Type;
use arrow_array::{Array, ArrayRef, RecordBatch, StructArray};
use arrow_buffer::NullBuffer;
use arrow_schema::{DataType, Field, FieldRef, Schema};
use lancelet_file::blob::{is_blob, is_blob_v1, is_blob_v2};

use crate::blob::BlobLocation;
use crate::{Dataset, Error, Result};

/// Whether `f` is or holds (in structs) a blob column.
fn holds_blob(f: &Field) -> bool {
    is_blob(f)
        || match f.data_type() {
            DataType::Struct(children) => children.iter().any(|c| holds_blob(c)),
            _ => false,
        }
}

/// Whether `f` holds a blob column below a list, map or fixed-size list.
fn blob_in_list(f: &Field) -> bool {
    match f.data_type() {
        _ if is_blob(f) => false,
        DataType::Struct(children) => children.iter().any(|c| blob_in_list(c)),
        DataType::List(c)
        | DataType::LargeList(c)
        | DataType::FixedSizeList(c, _)
        | DataType::Map(c, _)
        | DataType::ListView(c)
        | DataType::LargeListView(c) => holds_blob(c) || blob_in_list(c),
        _ => false,
    }
}

impl Dataset {
    /// Refuses `what` (a rewrite of rows) when the dataset has blob columns lancelet cannot
    /// rewrite: blobs inside lists. Blob columns at the top level and in structs (v1 and
    /// v2) are rewritten through [`Dataset::materialize_blobs`].
    pub(crate) fn refuse_unrewritable_blobs(&self, what: &str) -> Result<()> {
        match self.schema().fields().iter().find(|f| blob_in_list(f)) {
            Some(f) => Err(Error::Unsupported(format!(
                "{what} a dataset with blob values inside lists (column {:?}) is not supported",
                f.name()
            ))),
            None => Ok(()),
        }
    }

    /// Whether the dataset has blob columns (v1 or v2, at the top level or in structs),
    /// whose rewrites need [`Dataset::materialize_blobs`].
    pub(crate) fn has_blob_columns(&self) -> bool {
        self.schema().fields().iter().any(|f| holds_blob(f))
    }

    /// The file format rewritten rows are written in (`what` names the operation, for
    /// errors): the dataset's, except that a dataset of format 2.0 or 2.1 with blob v2
    /// columns (a 2.1 dataset appended at 2.2, whose blob v1 column became v2) writes 2.2
    /// files, the only ones that hold blob v2 values. pylance 14 refuses such rewrites;
    /// it reads the files lancelet writes.
    pub(crate) fn rewrite_version(&self, what: &str) -> Result<lancelet_file::FileVersion> {
        let version = self.writable_version(what)?;
        Ok(match self.has_blob_v2_columns() {
            true => lancelet_file::FileVersion::V2_2,
            false => version,
        })
    }

    /// Whether the dataset has blob v2 columns (whose external values rewrites keep).
    pub(crate) fn has_blob_v2_columns(&self) -> bool {
        fn v2(f: &Field) -> bool {
            is_blob_v2(f)
                || match f.data_type() {
                    DataType::Struct(children) => children.iter().any(|c| v2(c)),
                    _ => false,
                }
        }
        self.schema().fields().iter().any(|f| v2(f))
    }

    /// `batch` (a scan of this version with `_rowaddr`) with each blob column, given as
    /// descriptors, replaced by the values a writer takes: the payload bytes, or for an
    /// external blob its URI, position and size.
    pub(crate) async fn materialize_blobs(&self, batch: &RecordBatch) -> Result<RecordBatch> {
        let addresses = batch
            .column_by_name(crate::scan::ROW_ADDR)
            .and_then(|c| c.as_primitive_opt::<UInt64Type>())
            .ok_or_else(|| Error::InvalidArgument("rewriting blob values needs the rows' addresses".into()))?
            .values()
            .to_vec();
        self.materialize_blobs_at(batch, &addresses).await
    }

    /// As [`Dataset::materialize_blobs`], for rows read from `addresses` (one per row).
    /// A blob column whose values are not descriptors (an update that set it to new
    /// bytes or NULL) is left as it is.
    pub(crate) async fn materialize_blobs_at(&self, batch: &RecordBatch, addresses: &[u64]) -> Result<RecordBatch> {
        if addresses.len() != batch.num_rows() {
            return Err(Error::InvalidArgument(format!(
                "{} row addresses for {} rows with blobs",
                addresses.len(),
                batch.num_rows()
            )));
        }
        let schema = self.schema().clone();
        let in_schema = batch.schema();
        let mut fields: Vec<FieldRef> = in_schema.fields().iter().cloned().collect();
        let mut columns: Vec<ArrayRef> = batch.columns().to_vec();
        for (i, f) in in_schema.fields().iter().enumerate() {
            let Ok(target) = schema.field_with_name(f.name()) else {
                continue;
            };
            if let Some(c) = self
                .materialize_column(f.name(), target, &columns[i], None, addresses)
                .await?
            {
                columns[i] = c;
                fields[i] = Arc::new(target.clone());
            }
        }
        let opts = arrow_array::RecordBatchOptions::new().with_row_count(Some(batch.num_rows()));
        Ok(RecordBatch::try_new_with_options(
            Arc::new(Schema::new_with_metadata(fields, in_schema.metadata().clone())),
            columns,
            &opts,
        )?)
    }

    /// The writer's values of column `path` (dataset field `target`) given as `column`
    /// (as a scan returns it), or `None` when it needs no change. `parents` are the
    /// nulls of the enclosing structs: a value under a null parent is not located.
    async fn materialize_column(
        &self,
        path: &str,
        target: &Field,
        column: &ArrayRef,
        parents: Option<&NullBuffer>,
        addresses: &[u64],
    ) -> Result<Option<ArrayRef>> {
        if column.data_type() == target.data_type() || !holds_blob(target) {
            return Ok(None);
        }
        let Some(s) = column.as_struct_opt() else {
            // New values set by an update (bytes, NULL): the writer takes them as they are.
            return Ok(None);
        };
        if is_blob(target) {
            let nulls = NullBuffer::union(parents, s.nulls());
            let (f, cols, _) = s.clone().into_parts();
            let located = StructArray::try_new(f, cols, nulls)?;
            let locations = self.locate_blobs(path, addresses, &located, true).await?;
            let values = if is_blob_v1(target) {
                self.blob_bytes(&locations, target.data_type()).await?
            } else {
                self.blob_values(path, &locations, target.data_type()).await?
            };
            return Ok(Some(values));
        }
        let DataType::Struct(children) = target.data_type() else {
            return Ok(None);
        };
        let all = NullBuffer::union(parents, s.nulls());
        let mut out = Vec::with_capacity(children.len());
        for child in children {
            let col = s.column_by_name(child.name()).cloned().ok_or_else(|| {
                Error::InvalidArgument(format!("struct {path:?} was read without its field {:?}", child.name()))
            })?;
            let p = format!("{path}.{}", child.name());
            let m = Box::pin(self.materialize_column(&p, child, &col, all.as_ref(), addresses)).await?;
            out.push(match m {
                Some(m) => m,
                None if col.data_type() == child.data_type() => col,
                None => arrow_cast::cast(&col, child.data_type())?,
            });
        }
        Ok(Some(Arc::new(StructArray::try_new(
            children.clone(),
            out,
            s.nulls().cloned(),
        )?)))
    }

    /// The payloads at `locations` as a binary array of type `to` (a blob v1 field's, or
    /// `LargeBinary` for a loader's batch), read concurrently.
    pub(crate) async fn blob_bytes(&self, locations: &[Option<BlobLocation>], to: &DataType) -> Result<ArrayRef> {
        let reads = locations.iter().map(|loc| async move {
            match loc {
                Some(l) => self.read_blob(l, 0..l.size).await.map(Some),
                None => Ok(None),
            }
        });
        let bytes = futures::future::try_join_all(reads).await?;
        let a: ArrayRef = Arc::new(
            bytes
                .iter()
                .map(|b| b.as_ref().map(|b| b.as_slice()))
                .collect::<arrow_array::LargeBinaryArray>(),
        );
        Ok(match to {
            DataType::LargeBinary => a,
            other => arrow_cast::cast(&a, other)?,
        })
    }

    /// The writer's values (`data`, `uri`, `position`, `size`) of blob column `column` at
    /// `locations`, as a struct of type `to`.
    async fn blob_values(&self, column: &str, locations: &[Option<BlobLocation>], to: &DataType) -> Result<ArrayRef> {
        let DataType::Struct(children) = to else {
            return Err(Error::InvalidArgument(format!(
                "blob column {column:?} is not a struct"
            )));
        };
        let n = locations.len();
        let mut data = LargeBinaryBuilder::new();
        let mut uri = StringBuilder::new();
        let (mut position, mut size) = (UInt64Builder::with_capacity(n), UInt64Builder::with_capacity(n));
        let mut valid = Vec::with_capacity(n);
        for loc in locations {
            match loc {
                None => {
                    data.append_null();
                    uri.append_null();
                    position.append_null();
                    size.append_null();
                    valid.push(false);
                }
                Some(l) if l.external => {
                    data.append_null();
                    uri.append_value(&l.path);
                    position.append_value(l.position);
                    size.append_value(l.size);
                    valid.push(true);
                }
                Some(l) => {
                    let bytes = self.read_blob(l, 0..l.size).await?;
                    data.append_value(bytes.as_slice());
                    uri.append_null();
                    position.append_null();
                    size.append_null();
                    valid.push(true);
                }
            }
        }
        let (data, uri, position, size): (ArrayRef, ArrayRef, ArrayRef, ArrayRef) = (
            Arc::new(data.finish()),
            Arc::new(uri.finish()),
            Arc::new(position.finish()),
            Arc::new(size.finish()),
        );
        let arrays = children
            .iter()
            .map(|c| {
                let a = match c.name().as_str() {
                    "data" => data.clone(),
                    "uri" => uri.clone(),
                    "position" => position.clone(),
                    "size" => size.clone(),
                    other => {
                        return Err(Error::InvalidArgument(format!(
                            "blob column {column:?} has an unknown field {other:?}"
                        )))
                    }
                };
                if a.data_type() == c.data_type() {
                    Ok(a)
                } else {
                    Ok(arrow_cast::cast(&a, c.data_type())?)
                }
            })
            .collect::<Result<Vec<_>>>()?;
        let nulls = valid.contains(&false).then(|| NullBuffer::from(valid));
        Ok(Arc::new(StructArray::try_new(children.clone(), arrays, nulls)?))
    }
}

/// Whether the rows of `reader` give any blob v2 column of `schema` (at the top level or
/// in structs) an external URI.
pub(crate) fn has_external_blobs(
    reader: Box<dyn arrow_array::RecordBatchReader + Send>,
    schema: &Schema,
) -> Result<bool> {
    fn paths(f: &Field, prefix: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
        prefix.push(f.name().clone());
        if is_blob_v2(f) {
            out.push(prefix.clone());
        } else if let DataType::Struct(children) = f.data_type() {
            children.iter().for_each(|c| paths(c, prefix, out));
        }
        prefix.pop();
    }
    let mut blobs = Vec::new();
    schema
        .fields()
        .iter()
        .for_each(|f| paths(f, &mut Vec::new(), &mut blobs));
    for batch in reader {
        let batch = batch?;
        for path in &blobs {
            let mut col = batch.column_by_name(&path[0]).cloned();
            for part in &path[1..] {
                col = col.and_then(|c| c.as_struct_opt().and_then(|s| s.column_by_name(part)).cloned());
            }
            let uri = col.and_then(|c| c.as_struct_opt().and_then(|s| s.column_by_name("uri")).cloned());
            if uri.is_some_and(|u| u.null_count() < u.len()) {
                return Ok(true);
            }
        }
    }
    Ok(false)
}
