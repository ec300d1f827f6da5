//! Checking a batch completely before any of it is buffered: its schema, and what Lance
//! cannot store (nulls in structs at 2.0, dictionary keys out of range).

use super::*;

impl<W: Write> FileWriter<W> {
    /// Checks a batch against the file schema without writing anything.
    pub fn check_batch(&self, batch: &RecordBatch) -> Result<Vec<ArrayRef>> {
        let mut cols = Vec::with_capacity(self.schema.fields().len());
        for field in self.schema.fields() {
            let col = batch.column_by_name(field.name()).ok_or_else(|| {
                Error::SchemaMismatch(format!(
                    "the batch has no column {:?} required by the file schema",
                    field.name()
                ))
            })?;
            if !col.data_type().equals_datatype(field.data_type()) {
                return Err(Error::SchemaMismatch(format!(
                    "column {:?} is {} in the batch but {} in the file schema",
                    field.name(),
                    col.data_type(),
                    field.data_type()
                )));
            }
            if !field.is_nullable() && col.null_count() > 0 {
                return Err(Error::SchemaMismatch(format!(
                    "column {:?} is declared non-nullable but the batch has {} nulls",
                    field.name(),
                    col.null_count()
                )));
            }
            if self.opts.version == FileVersion::V2_0 {
                check_no_struct_nulls(field.name(), col.as_ref())?;
            }
            check_dictionary_keys(field.name(), col.as_ref())?;
            cols.push(col.clone());
        }
        if batch.num_columns() != self.schema.fields().len() {
            let extra: Vec<_> = batch
                .schema()
                .fields()
                .iter()
                .filter(|f| self.schema.field_with_name(f.name()).is_err())
                .map(|f| f.name().clone())
                .collect();
            return Err(Error::SchemaMismatch(format!(
                "the batch has columns not in the file schema: {extra:?}"
            )));
        }
        Ok(cols)
    }
}

pub(super) fn check_no_struct_nulls(name: &str, array: &dyn Array) -> Result<()> {
    if !contains_struct(array.data_type()) {
        return Ok(());
    }
    match array.data_type() {
        DataType::Struct(fields) => {
            let s = array.as_struct();
            if s.null_count() > 0 {
                return Err(Error::InvalidArgument(format!(
                    "the struct field {name:?} contains {} null value(s), but Lance file format 2.0 \
                     does not store struct validity",
                    s.null_count()
                )));
            }
            for (f, c) in fields.iter().zip(s.columns()) {
                check_no_struct_nulls(f.name(), c.as_ref())?;
            }
            Ok(())
        }
        DataType::List(f) => reachable_items(array.as_list::<i32>())
            .iter()
            .try_for_each(|items| check_no_struct_nulls(f.name(), items.as_ref())),
        DataType::LargeList(f) => reachable_items(array.as_list::<i64>())
            .iter()
            .try_for_each(|items| check_no_struct_nulls(f.name(), items.as_ref())),
        _ => Ok(()),
    }
}

pub(super) fn contains_struct(dt: &DataType) -> bool {
    match dt {
        DataType::Struct(_) => true,
        DataType::List(f) | DataType::LargeList(f) => contains_struct(f.data_type()),
        _ => false,
    }
}

/// The items under non-null lists (values under null list slots are never read back).
pub(super) fn reachable_items<O: arrow_array::OffsetSizeTrait>(l: &arrow_array::GenericListArray<O>) -> Vec<ArrayRef> {
    if l.null_count() == 0 {
        return vec![visible_values(l)];
    }
    let offsets = l.value_offsets();
    let mut out: Vec<ArrayRef> = Vec::new();
    let mut run: Option<(usize, usize)> = None;
    for i in 0..l.len() {
        let (s, e) = (offsets[i].as_usize(), offsets[i + 1].as_usize());
        if l.is_valid(i) && e > s {
            run = match run {
                Some((rs, re)) if re == s => Some((rs, e)),
                Some((rs, re)) => {
                    out.push(l.values().slice(rs, re - rs));
                    Some((s, e))
                }
                None => Some((s, e)),
            };
        }
    }
    if let Some((rs, re)) = run {
        out.push(l.values().slice(rs, re - rs));
    }
    out
}

/// A dictionary with null keys is stored with an extra null item; refuse a batch whose
/// key type cannot index that item before anything is buffered.
pub(super) fn check_dictionary_keys(name: &str, array: &dyn Array) -> Result<()> {
    let DataType::Dictionary(key, _) = array.data_type() else {
        return Ok(());
    };
    let dict = array.as_any_dictionary();
    if dict.keys().null_count() == 0 {
        return Ok(());
    }
    let max_key: u64 = match key.as_ref() {
        DataType::Int8 => i8::MAX as u64,
        DataType::Int16 => i16::MAX as u64,
        DataType::Int32 => i32::MAX as u64,
        DataType::UInt8 => u8::MAX as u64,
        DataType::UInt16 => u16::MAX as u64,
        DataType::UInt32 => u32::MAX as u64,
        _ => u64::MAX,
    };
    if dict.values().len() as u64 > max_key {
        return Err(Error::InvalidArgument(format!(
            "dictionary column {name:?} has null keys and {} values: the extra null item Lance 2.0 \
             stores for nulls does not fit its {key} keys",
            dict.values().len()
        )));
    }
    Ok(())
}

pub(super) fn visible_values<O: arrow_array::OffsetSizeTrait>(l: &arrow_array::GenericListArray<O>) -> ArrayRef {
    let offsets = l.value_offsets();
    let first = offsets.first().map(|o| o.as_usize()).unwrap_or(0);
    let last = offsets.last().map(|o| o.as_usize()).unwrap_or(0);
    l.values().slice(first, last - first)
}
