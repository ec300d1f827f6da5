//! Reading the columns of one fragment: each column taken from the data file that holds
//! it, found by field id (renamed columns are found, a dropped-then-re-added name never
//! shows old data), re-labelled with the dataset's types.

use std::collections::HashMap;
use std::ops::Range;
use std::sync::Arc;

use arrow_array::{ArrayRef, RecordBatch, RecordBatchOptions};
use arrow_schema::{DataType, SchemaRef};
use lancelet_table::pb;

use crate::{Dataset, Result};

impl Dataset {
    /// Reads the columns `names` (dotted paths allowed) of `frag` at `ranges` as one batch
    /// with `schema` (from [`projected_schema`]), taking each column from its data file.
    pub(crate) async fn read_rows(
        &self,
        frag: &pb::DataFragment,
        names: &[String],
        schema: &SchemaRef,
        ranges: &[Range<u64>],
    ) -> Result<RecordBatch> {
        let n: u64 = ranges.iter().map(|r| r.end - r.start).sum();
        let opts = RecordBatchOptions::new().with_row_count(Some(n as usize));
        // Opened even when no column is read: it checks the fragment's row count, which a
        // damaged manifest could overstate.
        let readers = self.fragment_readers(frag).await?;
        if names.is_empty() {
            return Ok(RecordBatch::try_new_with_options(schema.clone(), vec![], &opts)?);
        }
        // Group requested names by the data file holding their top-level column, found by
        // field id (a renamed column keeps its id; a dropped and re-added one gets a new id,
        // so old data never shows through), as the file names it.
        let layouts = file_layouts(frag, &readers);
        // Per data file: (the file's name for the path, our top-level column).
        let mut per_file: Vec<Vec<(String, String)>> = vec![Vec::new(); readers.len()];
        for name in names {
            let top = if schema.field_with_name(name).is_ok() {
                name.as_str()
            } else {
                name.split('.').next().unwrap_or(name)
            };
            let path: Vec<&str> = if top == name.as_str() {
                vec![top]
            } else {
                name.split('.').collect()
            };
            // A column no data file holds was added after the fragment was written, or left
            // out of an append: it reads as nulls.
            let Some((i, file_name)) = self.column_source(frag, &readers, &layouts, &path) else {
                continue;
            };
            // A struct that lost fields (dropped) since the file was written is read by its
            // remaining leaves, each found by id.
            let leaves = match schema.field_with_name(top) {
                Ok(f)
                    if path.len() == 1
                        && !lancelet_file::blob::is_descriptor(f)
                        && struct_shape_differs(f.data_type(), &readers[i], &file_name) =>
                {
                    struct_leaf_paths(f.data_type())
                }
                _ => Vec::new(),
            };
            if leaves.is_empty() {
                per_file[i].push((file_name, top.to_string()));
                continue;
            }
            for leaf in leaves {
                let parts: Vec<&str> = std::iter::once(top).chain(leaf.iter().map(String::as_str)).collect();
                if let Some((j, file_name)) = self.column_source(frag, &readers, &layouts, &parts) {
                    per_file[j].push((file_name, top.to_string()));
                }
            }
        }
        let mut by_name: HashMap<String, ArrayRef> = HashMap::new();
        for (r, wanted) in readers.iter().zip(per_file) {
            if wanted.is_empty() {
                continue;
            }
            let file_names: Vec<String> = wanted.iter().map(|(f, _)| f.clone()).collect();
            let p = r.projection(Some(&file_names))?;
            let batch = match self.spawner() {
                Some(s) => r.read_ranges_parallel(&p, ranges, None, s).await?,
                None => r.read_ranges(&p, ranges, None).await?,
            };
            // One column per top-level column, in the order first asked for (paths into one
            // struct merge into it); each gets our name, whatever the file calls it.
            let mut tops: Vec<&String> = Vec::new();
            for (_, ours) in &wanted {
                if !tops.contains(&ours) {
                    tops.push(ours);
                }
            }
            for (ours, c) in tops.into_iter().zip(batch.columns()) {
                by_name.insert(ours.clone(), c.clone());
            }
        }
        let columns = schema
            .fields()
            .iter()
            .map(|f| {
                by_name
                    .remove(f.name())
                    .unwrap_or_else(|| arrow_array::new_null_array(f.data_type(), n as usize))
            })
            .collect::<Vec<_>>();
        // Data files may name nested fields differently; the dataset schema wins.
        let columns = columns
            .into_iter()
            .zip(schema.fields())
            .map(|(c, f)| conform(c, f.data_type()))
            .collect::<Result<Vec<_>>>()?;
        Ok(RecordBatch::try_new_with_options(schema.clone(), columns, &opts)?)
    }
}

impl Dataset {
    /// Which of `frag`'s data files holds the dataset's column at `path` (a top-level name,
    /// then struct field names), and the (dotted) name that file gives it: matched by field
    /// id, the newest file winning, so renamed columns are found and a dropped-then-re-added
    /// name never shows old data. A data file lists the ids of all its fields in pre-order
    /// (file format 2.0) or of its leaf fields only (2.1+); files whose list lines up with
    /// neither are matched by name.
    pub(crate) fn column_source(
        &self,
        frag: &pb::DataFragment,
        readers: &[Arc<lancelet_file::FileReader>],
        layouts: &[FileLayout],
        path: &[&str],
    ) -> Option<(usize, String)> {
        let fields = &self.manifest().fields;
        let mut id = None;
        let mut parent = -1;
        for (k, part) in path.iter().enumerate() {
            let f = fields.iter().find(|f| f.parent_id == parent && f.name == *part);
            id = f.map(|f| f.id);
            match f {
                // A packed struct is one column: its fields are found through it.
                Some(f) if k + 1 < path.len() && is_packed_field(f) => {
                    let (i, name) = self.column_source(frag, readers, layouts, &path[..=k])?;
                    return Some((
                        i,
                        std::iter::once(name.as_str())
                            .chain(path[k + 1..].iter().copied())
                            .collect::<Vec<_>>()
                            .join("."),
                    ));
                }
                Some(f) => parent = f.id,
                None => break,
            }
        }
        // The column's field and everything below it, with their depth under it.
        let mut below: Vec<(i32, usize)> = id.map(|i| vec![(i, 0)]).unwrap_or_default();
        let mut at = 0;
        while at < below.len() && below.len() <= fields.len() {
            let (p, depth) = below[at];
            below.extend(fields.iter().filter(|f| f.parent_id == p).map(|f| (f.id, depth + 1)));
            at += 1;
        }
        let joined = path.join(".");
        for (i, (d, r)) in frag.files.iter().zip(readers).enumerate().rev() {
            let file_schema = &r.metadata().schema;
            let (flat, listed) = &layouts[i];
            if id.is_none() || flat.is_empty() || listed.len() != d.fields.len() {
                let top = path.first().copied().unwrap_or_default();
                if file_schema.field_with_name(top).is_ok() {
                    return Some((i, joined));
                }
                continue;
            }
            let Some((k, depth)) = below
                .iter()
                .find_map(|(fid, depth)| d.fields.iter().position(|x| x == fid).map(|k| (k, *depth)))
            else {
                continue;
            };
            // Up from the listed field to the column asked for, then its dotted name.
            let mut at = listed[k];
            for _ in 0..depth {
                at = usize::try_from(flat[at].parent_id).ok().filter(|&p| p < flat.len())?;
            }
            let mut names = vec![flat[at].name.clone()];
            let mut up = flat[at].parent_id;
            while let Some(p) = usize::try_from(up).ok().and_then(|u| flat.get(u)) {
                names.push(p.name.clone());
                up = p.parent_id;
                if names.len() > flat.len() {
                    break;
                }
            }
            names.reverse();
            return Some((i, names.join(".")));
        }
        None
    }
}

/// Whether a Lance field is a packed struct (stored as one column): the same rule as the
/// file reader and writer apply to Arrow fields ([`lancelet_file::plan::is_packed`]).
fn is_packed_field(f: &lancelet_proto::pbfile::Field) -> bool {
    f.logical_type == "struct" && lancelet_file::plan::is_packed_metadata(|k| f.metadata.get(k).map(|v| v.as_ref()))
}

/// A data file's fields flattened in pre-order, and which of them its field id list names
/// (all of them in format 2.0, the leaves in 2.1+).
pub(crate) type FileLayout = (Vec<lancelet_proto::pbfile::Field>, Vec<usize>);

/// The [`FileLayout`] of each of a fragment's data files, worked out once per read.
pub(crate) fn file_layouts(frag: &pb::DataFragment, readers: &[Arc<lancelet_file::FileReader>]) -> Vec<FileLayout> {
    frag.files
        .iter()
        .zip(readers)
        .map(|(d, r)| {
            let flat = lancelet_file::schema::to_lance_fields(&r.metadata().schema).unwrap_or_default();
            let listed: Vec<usize> = if flat.len() == d.fields.len() {
                (0..flat.len()).collect()
            } else {
                // Leaves, where a packed struct is a leaf and its fields are not listed.
                let parents: std::collections::HashSet<i32> = flat.iter().map(|f| f.parent_id).collect();
                let packed = is_packed_field;
                let mut inside_packed: std::collections::HashSet<i32> = std::collections::HashSet::new();
                for f in &flat {
                    if inside_packed.contains(&f.parent_id) || packed(f) {
                        inside_packed.insert(f.id);
                    }
                }
                (0..flat.len())
                    .filter(|&k| {
                        let f = &flat[k];
                        if inside_packed.contains(&f.parent_id) {
                            return false;
                        }
                        packed(f) || !parents.contains(&f.id)
                    })
                    .collect()
            };
            (flat, listed)
        })
        .collect()
}

/// Whether the struct column `file_name` of `reader`'s file has other fields (by count, at
/// any struct depth) than `ours`, the dataset's type: fields were dropped since.
fn struct_shape_differs(ours: &DataType, reader: &lancelet_file::FileReader, file_name: &str) -> bool {
    fn shape_eq(a: &DataType, b: &DataType) -> bool {
        match (a, b) {
            (DataType::Struct(x), DataType::Struct(y)) => {
                x.len() == y.len()
                    && x.iter()
                        .zip(y.iter())
                        .all(|(p, q)| shape_eq(p.data_type(), q.data_type()))
            }
            _ => true,
        }
    }
    matches!(ours, DataType::Struct(_))
        && reader
            .metadata()
            .schema
            .field_with_name(file_name)
            .is_ok_and(|f| !shape_eq(ours, f.data_type()))
}

/// The paths (below the column) of the non-struct fields of struct type `dt`.
fn struct_leaf_paths(dt: &DataType) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    if let DataType::Struct(fields) = dt {
        for f in fields {
            match f.data_type() {
                DataType::Struct(_) => {
                    for mut rest in struct_leaf_paths(f.data_type()) {
                        rest.insert(0, f.name().clone());
                        out.push(rest);
                    }
                }
                _ => out.push(vec![f.name().clone()]),
            }
        }
    }
    out
}

/// Re-labels an array read from a file with the dataset's (equivalent) type.
fn conform(a: ArrayRef, dt: &DataType) -> Result<ArrayRef> {
    if a.data_type() == dt {
        return Ok(a);
    }
    // Rows of a blob v1 file in a dataset whose blob column is now v2.
    if let Some(v2) = lancelet_file::blob::v1_to_v2_descriptors(&a, dt) {
        return Ok(v2);
    }
    // ... also inside structs.
    use arrow_array::{cast::AsArray, Array};
    if let (Some(s), DataType::Struct(target)) = (a.as_struct_opt(), dt) {
        let reshaped = |x: &DataType, y: &DataType| matches!((x, y), (DataType::Struct(p), DataType::Struct(q)) if p.len() != q.len());
        let children = s.columns().iter().zip(target.iter());
        if s.num_columns() == target.len() && children.clone().any(|(c, f)| reshaped(c.data_type(), f.data_type())) {
            let cols = children
                .map(|(c, f)| conform(c.clone(), f.data_type()))
                .collect::<Result<Vec<_>>>()?;
            return Ok(Arc::new(arrow_array::StructArray::try_new(
                target.clone(),
                cols,
                s.nulls().cloned(),
            )?));
        }
    }
    let data = a.to_data().into_builder().data_type(dt.clone()).build()?;
    Ok(arrow_array::make_array(data))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(logical_type: &str, key: &str, value: &'static [u8]) -> lancelet_proto::pbfile::Field {
        let mut f = lancelet_proto::pbfile::Field {
            name: "p".into(),
            logical_type: logical_type.into(),
            ..Default::default()
        };
        f.metadata.insert(key.into(), bytes::Bytes::from_static(value));
        f
    }

    /// A manifest's field is packed by the rule the file reader and writer apply to Arrow
    /// fields (pylance 14's): either key, `true`/`1`/`yes`/`y`/`on` exactly, structs only.
    #[test]
    fn manifest_fields_are_packed_like_arrow_fields() {
        for key in ["packed", "lance-encoding:packed"] {
            for v in [&b"true"[..], b"YES", b"1", b"on"] {
                assert!(is_packed_field(&field("struct", key, v)), "{key}={v:?}");
            }
            for v in [&b" true"[..], b"false", b"t", b""] {
                assert!(!is_packed_field(&field("struct", key, v)), "{key}={v:?}");
            }
        }
        assert!(!is_packed_field(&field("list", "packed", b"true")));
    }
}
