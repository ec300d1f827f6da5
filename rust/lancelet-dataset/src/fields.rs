//! Finding the fields of an Arrow schema by dotted path (`"s.x"` is child `x` of struct
//! column `s`), for the scans, indexes and blob reads that name columns that way.

use std::sync::Arc;

/// The field at dotted `path` of `schema` (a top-level name containing dots wins).
pub(crate) fn find_field(schema: &arrow_schema::Schema, path: &str) -> Option<arrow_schema::FieldRef> {
    if let Ok(f) = schema.field_with_name(path) {
        return Some(Arc::new(f.clone()));
    }
    let mut parts = path.split('.');
    let mut f: arrow_schema::FieldRef = Arc::new(schema.field_with_name(parts.next()?).ok()?.clone());
    for p in parts {
        let arrow_schema::DataType::Struct(fs) = f.data_type() else {
            return None;
        };
        f = fs.iter().find(|c| c.name() == p)?.clone();
    }
    Some(f)
}

/// The Arrow type of a (dotted) column path.
pub(crate) fn arrow_schema_field(schema: &arrow_schema::Schema, path: &str) -> Option<arrow_schema::DataType> {
    find_field(schema, path).map(|f| f.data_type().clone())
}
