//! Where a field's leaf columns are: the path from a top-level field down to each leaf.
//!
//! At 2.1+ only leaves have columns. Structs and lists are folded into a leaf's
//! repetition and definition levels, so each leaf column is described by its path
//! ([`PathNode`]s, outer-most first). A struct marked packed ([`is_packed`]) is a leaf
//! itself: one column holding whole rows.

use std::sync::Arc;

use arrow_schema::{DataType, Field, Fields};

use crate::{Error, Result};

/// One level of a leaf column's path from its top-level field.
#[derive(Debug, Clone, PartialEq)]
pub enum PathNode {
    /// A list (`large`: 64-bit offsets).
    List {
        /// Whether this is a large list.
        large: bool,
    },
    /// A struct; `child` names the child the path continues into.
    Struct {
        /// The child's name.
        child: String,
    },
    /// The leaf, with its Arrow type.
    Leaf {
        /// The leaf's type.
        data_type: DataType,
    },
}

/// The Arrow type of the single-leaf array [`super::repdef_decode::assemble`] builds for `path`.
pub fn path_type(path: &[PathNode]) -> Result<DataType> {
    let mut dt: Option<DataType> = None;
    for node in path.iter().rev() {
        dt = Some(match (node, dt) {
            (PathNode::Leaf { data_type }, None) => data_type.clone(),
            (PathNode::Struct { child }, Some(c)) => DataType::Struct(Fields::from(vec![Field::new(child, c, true)])),
            (PathNode::List { large }, Some(c)) => {
                let f = Arc::new(Field::new("item", c, true));
                if *large {
                    DataType::LargeList(f)
                } else {
                    DataType::List(f)
                }
            }
            _ => return Err(Error::InvalidInput("a path must end with exactly one leaf".into())),
        });
    }
    dt.ok_or_else(|| Error::InvalidInput("empty path".into()))
}

/// Field metadata keys that mark a struct as packed (the second is the older spelling).
pub const PACKED_KEYS: [&str; 2] = ["lance-encoding:packed", "packed"];

/// Whether a struct is stored packed (one column of whole rows), given a lookup of its
/// field metadata (`get(key)` is the value's bytes).
///
/// The rule is pylance 14's at 2.1+: either of [`PACKED_KEYS`] holding `true`, `1`, `yes`,
/// `y` or `on` in any letter case, exactly (`" true"` and `"t"` are not packed). Used for
/// Arrow fields ([`is_packed`]) and for a manifest's fields alike, so that the file
/// reader, the file writer and the dataset agree on which columns a struct has.
pub fn is_packed_metadata<'a>(get: impl Fn(&str) -> Option<&'a [u8]>) -> bool {
    PACKED_KEYS.iter().any(|k| {
        get(k).is_some_and(|v| {
            ["true", "1", "yes", "y", "on"]
                .iter()
                .any(|t| v.eq_ignore_ascii_case(t.as_bytes()))
        })
    })
}

/// Whether `field` is a struct stored as one packed leaf column ([`is_packed_metadata`]).
/// Other types are never packed, whatever their metadata says.
pub fn is_packed(field: &Field) -> bool {
    matches!(field.data_type(), DataType::Struct(_))
        && is_packed_metadata(|k| field.metadata().get(k).map(|v| v.as_bytes()))
}

/// The path (outer-most first) of every leaf of `field`, in depth-first order = 2.1+ column order.
pub fn leaf_paths(field: &Field) -> Vec<Vec<PathNode>> {
    let mut out = Vec::new();
    let mut prefix = Vec::new();
    collect_paths(field, &mut prefix, &mut out);
    out
}

fn collect_paths(field: &Field, prefix: &mut Vec<PathNode>, out: &mut Vec<Vec<PathNode>>) {
    match field.data_type() {
        DataType::Struct(children) if !is_packed(field) => {
            for child in children {
                prefix.push(PathNode::Struct {
                    child: child.name().clone(),
                });
                collect_paths(child, prefix, out);
                prefix.pop();
            }
        }
        // A map is stored as a list of its entries structs.
        DataType::List(item) | DataType::LargeList(item) | DataType::Map(item, _) => {
            prefix.push(PathNode::List {
                large: matches!(field.data_type(), DataType::LargeList(_)),
            });
            collect_paths(item, prefix, out);
            prefix.pop();
        }
        dt => {
            let mut path = prefix.clone();
            path.push(PathNode::Leaf { data_type: dt.clone() });
            out.push(path);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    fn field(dt: DataType, md: &[(&str, &str)]) -> Field {
        let md: HashMap<String, String> = md.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        Field::new("s", dt, true).with_metadata(md)
    }

    fn point() -> DataType {
        DataType::Struct(Fields::from(vec![
            Field::new("x", DataType::Int32, true),
            Field::new("y", DataType::Int32, true),
        ]))
    }

    /// The values pylance 14 packs a struct for (checked by writing 2.1 files with it and
    /// counting their columns): either key, exactly these words in any case.
    #[test]
    fn packed_values_match_pylance() {
        for key in PACKED_KEYS {
            for v in ["true", "TRUE", "True", "1", "yes", "YES", "y", "on"] {
                assert!(is_packed(&field(point(), &[(key, v)])), "{key}={v:?}");
            }
            for v in ["false", "0", "no", "", " true", "true ", "t", "2", "x"] {
                assert!(!is_packed(&field(point(), &[(key, v)])), "{key}={v:?}");
            }
        }
        assert!(!is_packed(&field(point(), &[])));
        assert!(!is_packed(&field(point(), &[("lance-encoding:blob", "true")])));
    }

    /// Only structs are packed: a list marked packed keeps its item column.
    #[test]
    fn only_structs_are_packed() {
        let list = DataType::List(Arc::new(Field::new("item", DataType::Int32, true)));
        let f = field(list, &[("packed", "true")]);
        assert!(!is_packed(&f));
        assert_eq!(leaf_paths(&f).len(), 1);
        let s = field(point(), &[("packed", "true")]);
        assert_eq!(leaf_paths(&s), vec![vec![PathNode::Leaf { data_type: point() }]]);
        assert_eq!(leaf_paths(&field(point(), &[])).len(), 2);
    }

    /// A manifest's field metadata (bytes) follows the same rule.
    #[test]
    fn byte_metadata_follows_the_same_rule() {
        let yes: &[u8] = b"Yes";
        assert!(is_packed_metadata(|k| (k == "packed").then_some(yes)));
        let newline: &[u8] = b"true\n";
        assert!(!is_packed_metadata(
            |k| (k == "lance-encoding:packed").then_some(newline)
        ));
        assert!(!is_packed_metadata(|_| None));
    }
}
