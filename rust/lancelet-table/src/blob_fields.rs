//! Blob v1 fields that an append turns into blob v2 fields.
//!
//! A blob v1 field (`large_binary` or `binary` with `lance-encoding:blob = true`) is stored
//! in files of format 2.0 and 2.1. Files of format 2.2 store blobs as v2 only, so when an
//! append adds 2.2 files that hold such a field, the field becomes blob v2 (pylance 14
//! does the same): a `struct` with the `lance.blob.v2` extension, and two new children
//! `data` (`large_binary`) and `uri` (`string`) whose ids follow the largest id of the
//! schema. The older files keep their v1 values, which readers present as inline v2
//! descriptors.
//!
//! The change is derived from the appended fragments when the transaction is applied (the
//! transaction carries no schema), so a commit that is retried on a newer version derives
//! it again there.

use std::collections::HashSet;

use lancelet_proto::pbfile::Field;

use crate::pb;

/// Field metadata key marking blob columns.
const BLOB_KEY: &str = "lance-encoding:blob";
/// Arrow metadata key of extension names.
const EXTENSION_KEY: &str = "ARROW:extension:name";
/// Extension name of blob v2 fields.
const BLOB_V2: &str = "lance.blob.v2";
/// `Encoding::VAR_BINARY` of the legacy per-field encoding.
const VAR_BINARY: i32 = 2;

fn is_blob_v1(f: &Field) -> bool {
    matches!(f.logical_type.as_str(), "large_binary" | "binary")
        && f.metadata
            .get(BLOB_KEY)
            .is_some_and(|v| v.eq_ignore_ascii_case(b"true"))
}

/// Turns the blob v1 fields that a data file of format 2.2 or later in `appended` lists
/// into blob v2 fields, as described in the module docs. Does nothing when there are none.
pub fn upgrade_appended_blob_fields(fields: &mut Vec<Field>, appended: &[pb::DataFragment]) {
    let listed: HashSet<i32> = appended
        .iter()
        .flat_map(|f| &f.files)
        .filter(|d| (d.file_major_version, d.file_minor_version) >= (2, 2))
        .flat_map(|d| d.fields.iter().copied())
        .collect();
    if !fields.iter().any(|f| is_blob_v1(f) && listed.contains(&f.id)) {
        return;
    }
    let mut next = fields.iter().map(|f| f.id).max().unwrap_or(-1).saturating_add(1);
    let mut out = Vec::with_capacity(fields.len() + 2);
    for mut f in std::mem::take(fields) {
        if !(is_blob_v1(&f) && listed.contains(&f.id)) {
            out.push(f);
            continue;
        }
        f.r#type = 0;
        f.logical_type = "struct".into();
        f.extension_name = BLOB_V2.into();
        f.metadata = [(EXTENSION_KEY.to_string(), bytes::Bytes::from_static(BLOB_V2.as_bytes()))]
            .into_iter()
            .collect();
        f.encoding = 0;
        f.dictionary = None;
        let parent = f.id;
        out.push(f);
        for (name, logical_type) in [("data", "large_binary"), ("uri", "string")] {
            out.push(Field {
                name: name.into(),
                id: next,
                parent_id: parent,
                logical_type: logical_type.into(),
                nullable: true,
                encoding: VAR_BINARY,
                ..Default::default()
            });
            next = next.saturating_add(1);
        }
    }
    *fields = out;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(name: &str, id: i32, parent: i32, lt: &str, blob: bool) -> Field {
        let mut f = Field {
            name: name.into(),
            id,
            parent_id: parent,
            logical_type: lt.into(),
            nullable: true,
            encoding: VAR_BINARY,
            ..Default::default()
        };
        if blob {
            f.metadata.insert(BLOB_KEY.into(), bytes::Bytes::from_static(b"true"));
        }
        f
    }

    fn fragment(major: u32, minor: u32, fields: Vec<i32>) -> pb::DataFragment {
        pb::DataFragment {
            files: vec![pb::DataFile {
                fields,
                file_major_version: major,
                file_minor_version: minor,
                ..Default::default()
            }],
            physical_rows: 1,
            ..Default::default()
        }
    }

    #[test]
    fn listed_v1_fields_become_v2_with_new_children() {
        // id0 img1(v1) tag2 aud3(v1): both blobs in a 2.2 file.
        let mut fields = vec![
            field("id", 0, -1, "int64", false),
            field("img", 1, -1, "large_binary", true),
            field("tag", 2, -1, "string", false),
            field("aud", 3, -1, "large_binary", true),
        ];
        upgrade_appended_blob_fields(&mut fields, &[fragment(2, 2, vec![0, 1, 2, 3])]);
        let shape: Vec<(&str, i32, i32, &str)> = fields
            .iter()
            .map(|f| (f.name.as_str(), f.id, f.parent_id, f.logical_type.as_str()))
            .collect();
        assert_eq!(
            shape,
            vec![
                ("id", 0, -1, "int64"),
                ("img", 1, -1, "struct"),
                ("data", 4, 1, "large_binary"),
                ("uri", 5, 1, "string"),
                ("tag", 2, -1, "string"),
                ("aud", 3, -1, "struct"),
                ("data", 6, 3, "large_binary"),
                ("uri", 7, 3, "string"),
            ]
        );
        assert_eq!(fields[1].extension_name, BLOB_V2);
        assert_eq!(fields[1].metadata.len(), 1);
        assert_eq!(fields[1].encoding, 0);
    }

    #[test]
    fn unlisted_or_older_files_change_nothing() {
        let before = vec![
            field("id", 0, -1, "int64", false),
            field("img", 1, -1, "large_binary", true),
        ];
        for frag in [fragment(2, 2, vec![0]), fragment(2, 1, vec![0, 1])] {
            let mut fields = before.clone();
            upgrade_appended_blob_fields(&mut fields, &[frag]);
            assert_eq!(fields, before);
        }
    }
}
