//! Arrow's view layouts (`Utf8View`, `BinaryView`, `ListView`, `LargeListView`) as input.
//!
//! Lance stores no view types: pylance writes such columns as their plain equivalents
//! (`string`, `binary`, `list`, `large_list`) and reads them back that way. polars hands
//! every string column over as `Utf8View`, so refusing views would refuse most polars
//! frames. Input is converted on the way in, at any depth of nesting.

use std::sync::Arc;

use arrow_array::{RecordBatch, RecordBatchReader};
use arrow_schema::{ArrowError, DataType, Field, FieldRef, Fields, Schema, SchemaRef};

/// `dt` with every view type replaced by its plain equivalent, or `None` when it has none.
pub(crate) fn plain_type(dt: &DataType) -> Option<DataType> {
    let field = |f: &FieldRef| -> Option<FieldRef> {
        plain_type(f.data_type()).map(|t| Arc::new(f.as_ref().clone().with_data_type(t)))
    };
    let keep = |f: &FieldRef| field(f).unwrap_or_else(|| f.clone());
    match dt {
        DataType::Utf8View => Some(DataType::Utf8),
        DataType::BinaryView => Some(DataType::Binary),
        DataType::ListView(f) => Some(DataType::List(keep(f))),
        DataType::LargeListView(f) => Some(DataType::LargeList(keep(f))),
        DataType::List(f) => field(f).map(DataType::List),
        DataType::LargeList(f) => field(f).map(DataType::LargeList),
        DataType::FixedSizeList(f, n) => field(f).map(|f| DataType::FixedSizeList(f, *n)),
        DataType::Map(f, sorted) => field(f).map(|f| DataType::Map(f, *sorted)),
        DataType::Struct(fields) => fields
            .iter()
            .any(|f| plain_type(f.data_type()).is_some())
            .then(|| DataType::Struct(fields.iter().map(keep).collect::<Fields>())),
        DataType::Dictionary(k, v) => plain_type(v).map(|v| DataType::Dictionary(k.clone(), Box::new(v))),
        _ => None,
    }
}

/// `schema` without view types, or `None` when it has none.
pub(crate) fn plain_schema(schema: &Schema) -> Option<SchemaRef> {
    if !schema.fields().iter().any(|f| plain_type(f.data_type()).is_some()) {
        return None;
    }
    let fields: Vec<Field> = schema
        .fields()
        .iter()
        .map(|f| match plain_type(f.data_type()) {
            Some(t) => f.as_ref().clone().with_data_type(t),
            None => f.as_ref().clone(),
        })
        .collect();
    Some(Arc::new(Schema::new_with_metadata(fields, schema.metadata().clone())))
}

/// `batch` converted to `schema` (from [`plain_schema`]).
fn to_plain(batch: &RecordBatch, schema: &SchemaRef) -> Result<RecordBatch, ArrowError> {
    let columns = batch
        .columns()
        .iter()
        .zip(schema.fields())
        .map(|(c, f)| {
            if c.data_type() == f.data_type() {
                Ok(c.clone())
            } else {
                arrow_cast::cast(c, f.data_type())
            }
        })
        .collect::<Result<Vec<_>, _>>()?;
    RecordBatch::try_new_with_options(
        schema.clone(),
        columns,
        &arrow_array::RecordBatchOptions::new().with_row_count(Some(batch.num_rows())),
    )
}

/// `batch` without view types (itself when it has none).
pub(crate) fn plain_batch(batch: RecordBatch) -> Result<RecordBatch, ArrowError> {
    match plain_schema(&batch.schema()) {
        None => Ok(batch),
        Some(schema) => to_plain(&batch, &schema),
    }
}

/// `reader` without view types (itself when its schema has none).
pub fn plain_reader(reader: Box<dyn RecordBatchReader + Send>) -> Box<dyn RecordBatchReader + Send> {
    match plain_schema(&reader.schema()) {
        None => reader,
        Some(schema) => Box::new(PlainReader { inner: reader, schema }),
    }
}

struct PlainReader {
    inner: Box<dyn RecordBatchReader + Send>,
    schema: SchemaRef,
}

impl Iterator for PlainReader {
    type Item = Result<RecordBatch, ArrowError>;

    fn next(&mut self) -> Option<Self::Item> {
        Some(self.inner.next()?.and_then(|b| to_plain(&b, &self.schema)))
    }
}

impl RecordBatchReader for PlainReader {
    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests: a failed unwrap is a failed test")]

    use arrow_array::cast::AsArray;
    use arrow_array::{Array, ArrayRef, Int32Array, ListViewArray, RecordBatchIterator, StringViewArray, StructArray};
    use arrow_buffer::ScalarBuffer;

    use super::*;

    #[test]
    fn nested_views_become_plain_types_with_the_same_values() {
        let strings: ArrayRef = Arc::new(StringViewArray::from(vec![
            Some("a"),
            None,
            Some("a long string over 12 bytes"),
        ]));
        let item = Arc::new(Field::new("item", DataType::Int32, true));
        let lists: ArrayRef = Arc::new(ListViewArray::new(
            item.clone(),
            ScalarBuffer::from(vec![0, 1, 0]),
            ScalarBuffer::from(vec![1, 2, 0]),
            Arc::new(Int32Array::from(vec![7, 8, 9])),
            None,
        ));
        let st: ArrayRef = Arc::new(StructArray::from(vec![(
            Arc::new(Field::new("s", DataType::Utf8View, true)),
            strings.clone(),
        )]));
        let schema = Arc::new(Schema::new(vec![
            Field::new("s", DataType::Utf8View, true),
            Field::new("l", DataType::ListView(item), true),
            Field::new("st", st.data_type().clone(), true),
        ]));
        let batch = RecordBatch::try_new(schema.clone(), vec![strings, lists, st]).unwrap();
        let reader = plain_reader(Box::new(RecordBatchIterator::new(vec![Ok(batch)], schema)));
        let out_schema = reader.schema();
        assert_eq!(out_schema.field(0).data_type(), &DataType::Utf8);
        assert!(matches!(out_schema.field(1).data_type(), DataType::List(_)));
        let out: Vec<RecordBatch> = reader.collect::<Result<_, _>>().unwrap();
        let s = out[0].column(0).as_string::<i32>();
        assert_eq!(s.value(2), "a long string over 12 bytes");
        assert!(s.is_null(1));
        let l = out[0].column(1).as_list::<i32>();
        assert_eq!(
            l.value(1).as_primitive::<arrow_array::types::Int32Type>().values(),
            &[8, 9]
        );
        assert_eq!(l.value(2).len(), 0);
        let st = out[0].column(2).as_struct();
        assert_eq!(st.column(0).data_type(), &DataType::Utf8);
    }

    #[test]
    fn schemas_without_views_are_left_alone() {
        let schema = Schema::new(vec![Field::new("a", DataType::Utf8, true)]);
        assert!(plain_schema(&schema).is_none());
    }
}
