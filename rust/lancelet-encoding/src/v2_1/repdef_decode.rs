//! Decoding repetition / definition levels: rebuilding nested Arrow arrays (Lance 2.1+).
//!
//! The inverse of [`super::repdef_encode`].
//! A leaf column stores one *entry* per leaf slot or per null/empty list, each with a
//! repetition level and a definition level, plus the *visible* values (entries that reach
//! the leaf, null or not). `layers` describes the nesting inner-most first; the field's
//! path ([`PathNode`]s) lists it outer-most first.
//!
//! Definition levels: 0 means valid at every layer; walking layers inside out, a nullable
//! item/struct layer takes one level (null), a nullable list one (null), an emptyable list
//! one (empty), a list with both two (null, then empty). A stored level names the
//! outer-most layer that is null or empty. Repetition levels: list layers are numbered 1
//! (inner-most) .. R (outer-most); an entry carries the number of the outer-most list that
//! starts at it (R = new row), 0 = another element of the inner-most list.

use std::sync::Arc;

use arrow_array::{ArrayRef, LargeListArray, ListArray, StructArray};
use arrow_buffer::{NullBuffer, OffsetBuffer, ScalarBuffer};
use arrow_schema::{Field, Fields};
use lancelet_proto::pb21::RepDefLayer;

use super::path::PathNode;
use super::values::with_validity;
use crate::{corrupt, Error, Result};

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Stop {
    Null,
    Empty,
}

fn layer_kind(l: i32) -> Result<RepDefLayer> {
    RepDefLayer::try_from(l).map_err(|_| corrupt!("unknown rep/def layer {l}"))
}

fn is_list_layer(l: RepDefLayer) -> bool {
    matches!(
        l,
        RepDefLayer::RepdefAllValidList
            | RepDefLayer::RepdefNullableList
            | RepDefLayer::RepdefEmptyableList
            | RepDefLayer::RepdefNullAndEmptyList
    )
}

/// Largest definition level that still owns a value slot (item/struct layers below the
/// inner-most list).
pub fn max_visible_def(layers: &[i32]) -> Result<u16> {
    let mut lvl = 0u16;
    for l in layers {
        let k = layer_kind(*l)?;
        if is_list_layer(k) {
            break;
        }
        if k == RepDefLayer::RepdefNullableItem {
            lvl += 1;
        }
    }
    Ok(lvl)
}

/// Number of entries with a value slot.
pub fn count_visible(layers: &[i32], def: Option<&[u16]>, n_entries: usize) -> Result<usize> {
    let max = max_visible_def(layers)?;
    Ok(match def {
        Some(d) => d.iter().filter(|d| **d <= max).count(),
        None => n_entries,
    })
}

enum Builder {
    List {
        offsets: Vec<i64>,
        valid: Vec<bool>,
        open: bool,
    },
    Struct {
        valid: Vec<bool>,
    },
    Leaf {
        valid: Vec<bool>,
    },
}

/// Builds the array of `path` (one leaf, with single-child structs) from the levels of
/// one page and its visible values. `rep`/`def` are `None` when not stored (then every
/// entry is a new row / fully valid); entries = levels, or the values when neither is stored.
pub fn assemble(
    path: &[PathNode],
    layers: &[i32],
    rep: Option<&[u16]>,
    def: Option<&[u16]>,
    values: ArrayRef,
) -> Result<ArrayRef> {
    let m = path.len();
    if layers.len() != m {
        return Err(corrupt!(
            "page describes {} nesting layers but the field has {m}",
            layers.len()
        ));
    }
    // Layers in path order (outer-most first), checked against the node kinds.
    let mut kinds = Vec::with_capacity(m);
    for (j, node) in path.iter().enumerate() {
        let k = layer_kind(layers[m - 1 - j])?;
        let ok = match node {
            PathNode::List { .. } => is_list_layer(k),
            _ => matches!(k, RepDefLayer::RepdefAllValidItem | RepDefLayer::RepdefNullableItem),
        };
        if !ok {
            return Err(corrupt!("rep/def layer {k:?} does not match the field's nesting"));
        }
        kinds.push(k);
    }
    if let ([PathNode::Leaf { .. }], None) = (path, rep) {
        return flat_leaf(kinds[0], def, values);
    }
    // Definition level -> (node, what stops there).
    let mut def_table: Vec<(usize, Stop)> = Vec::new();
    for j in (0..m).rev() {
        match kinds[j] {
            RepDefLayer::RepdefNullableItem | RepDefLayer::RepdefNullableList => def_table.push((j, Stop::Null)),
            RepDefLayer::RepdefEmptyableList => def_table.push((j, Stop::Empty)),
            RepDefLayer::RepdefNullAndEmptyList => {
                def_table.push((j, Stop::Null));
                def_table.push((j, Stop::Empty));
            }
            _ => {}
        }
    }
    let list_nodes: Vec<usize> = (0..m).filter(|j| matches!(path[*j], PathNode::List { .. })).collect();
    let r_max = list_nodes.len();
    if r_max > 0 && rep.is_none() {
        return Err(corrupt!("a list column page has no repetition levels"));
    }
    let n = match (rep, def) {
        (Some(r), Some(d)) if r.len() != d.len() => {
            return Err(corrupt!(
                "{} repetition levels but {} definition levels",
                r.len(),
                d.len()
            ))
        }
        (Some(r), _) => r.len(),
        (None, Some(d)) => d.len(),
        (None, None) => values.len(),
    };
    let mut b: Vec<Builder> = path
        .iter()
        .map(|node| match node {
            PathNode::List { .. } => Builder::List {
                offsets: vec![0],
                valid: Vec::new(),
                open: false,
            },
            PathNode::Struct { .. } => Builder::Struct { valid: Vec::new() },
            PathNode::Leaf { .. } => Builder::Leaf { valid: Vec::new() },
        })
        .collect();
    for k in 0..n {
        let r = rep.map(|r| r[k] as usize).unwrap_or(r_max);
        let d = def.map(|d| d[k] as usize).unwrap_or(0);
        let stop = if d == 0 {
            None
        } else {
            Some(
                *def_table
                    .get(d - 1)
                    .ok_or_else(|| corrupt!("definition level {d} exceeds the layers' maximum"))?,
            )
        };
        let start = if r_max == 0 || r == r_max {
            0
        } else if r > r_max {
            return Err(corrupt!("repetition level {r} exceeds {r_max} list layers"));
        } else {
            let c = list_nodes[r_max - 1 - r];
            match &mut b[c] {
                Builder::List {
                    offsets, open: true, ..
                } => {
                    if let Some(last) = offsets.last_mut() {
                        *last += 1;
                    }
                }
                _ => return Err(corrupt!("repetition level {r} continues a list that is not open")),
            }
            c + 1
        };
        if let Some((j, _)) = stop {
            if j < start {
                return Err(corrupt!(
                    "definition level {d} names a layer above where entry {k} starts"
                ));
            }
        }
        // Every list from `start` down gets a new slot (or none), so their previous lists end.
        for builder in b.iter_mut().skip(start) {
            if let Builder::List { open, .. } = builder {
                *open = false;
            }
        }
        let mut dead = false;
        for (j, builder) in b.iter_mut().enumerate().skip(start) {
            let here = stop.filter(|(sj, _)| *sj == j).map(|(_, s)| s);
            match builder {
                Builder::List { offsets, valid, open } => {
                    let end = offsets.last().copied().unwrap_or(0);
                    if dead || here.is_some() {
                        // A null (also under a null struct) or empty list: no elements.
                        offsets.push(end);
                        valid.push(!dead && here == Some(Stop::Empty));
                        break;
                    }
                    offsets.push(end + 1);
                    valid.push(true);
                    *open = true;
                }
                Builder::Struct { valid } => {
                    let null = dead || here == Some(Stop::Null);
                    valid.push(!null);
                    dead |= null;
                }
                Builder::Leaf { valid } => valid.push(!(dead || here == Some(Stop::Null))),
            }
        }
    }
    // Build bottom-up.
    let mut array: Option<ArrayRef> = None;
    for (node, builder) in path.iter().zip(b).rev() {
        array = Some(match (node, builder, array) {
            (PathNode::Leaf { .. }, Builder::Leaf { valid }, None) => {
                if valid.len() != values.len() {
                    return Err(corrupt!(
                        "levels address {} values but the page holds {}",
                        valid.len(),
                        values.len()
                    ));
                }
                with_validity(values.clone(), &valid)?
            }
            (PathNode::Struct { child }, Builder::Struct { valid }, Some(c)) => {
                if valid.len() != c.len() {
                    return Err(corrupt!(
                        "struct of {} slots over {} child values",
                        valid.len(),
                        c.len()
                    ));
                }
                let fields = Fields::from(vec![Field::new(child, c.data_type().clone(), true)]);
                Arc::new(StructArray::try_new(fields, vec![c], nulls(valid))?)
            }
            (PathNode::List { large }, Builder::List { offsets, valid, .. }, Some(c)) => {
                if offsets.last().copied().unwrap_or(0) != c.len() as i64 {
                    return Err(corrupt!("list offsets do not match {} child values", c.len()));
                }
                let f = Arc::new(Field::new("item", c.data_type().clone(), true));
                if *large {
                    Arc::new(LargeListArray::try_new(
                        f,
                        OffsetBuffer::new(ScalarBuffer::from(offsets)),
                        c,
                        nulls(valid),
                    )?)
                } else {
                    let offs = offsets
                        .iter()
                        .map(|o| i32::try_from(*o))
                        .collect::<std::result::Result<Vec<i32>, _>>()
                        .map_err(|_| Error::Unsupported("more than 2^31 list items in one page".into()))?;
                    Arc::new(ListArray::try_new(
                        f,
                        OffsetBuffer::new(ScalarBuffer::from(offs)),
                        c,
                        nulls(valid),
                    )?)
                }
            }
            _ => return Err(Error::InvalidInput("a path must end with exactly one leaf".into())),
        });
    }
    array.ok_or_else(|| Error::InvalidInput("empty path".into()))
}

/// The common case of a top-level leaf without lists: one entry per value, null where
/// the definition level is 1 (only a nullable item has that level).
fn flat_leaf(kind: RepDefLayer, def: Option<&[u16]>, values: ArrayRef) -> Result<ArrayRef> {
    let n = def.map_or(values.len(), |d| d.len());
    if n != values.len() {
        return Err(corrupt!(
            "levels address {n} values but the page holds {}",
            values.len()
        ));
    }
    let Some(def) = def else {
        return Ok(values);
    };
    let max = u16::from(kind == RepDefLayer::RepdefNullableItem);
    if let Some(bad) = def.iter().find(|d| **d > max) {
        return Err(corrupt!("definition level {bad} exceeds the layers' maximum"));
    }
    if def.iter().all(|d| *d == 0) {
        return Ok(values);
    }
    let valid: Vec<bool> = def.iter().map(|d| *d == 0).collect();
    with_validity(values, &valid)
}

fn nulls(valid: Vec<bool>) -> Option<NullBuffer> {
    if valid.iter().all(|v| *v) {
        None
    } else {
        Some(NullBuffer::from(valid))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{Array, Int32Array};
    use arrow_schema::DataType;

    fn int_leaf() -> PathNode {
        PathNode::Leaf {
            data_type: DataType::Int32,
        }
    }

    #[test]
    fn list_of_lists_with_nulls_and_empties() {
        // [[[1,2],[3]], None, [], [None, []], [[4,None]]], layers [3,6,6]
        let path = [
            PathNode::List { large: false },
            PathNode::List { large: false },
            int_leaf(),
        ];
        let rep = [2u16, 0, 1, 2, 2, 2, 1, 2, 0];
        let def = [0u16, 0, 0, 4, 5, 2, 3, 0, 1];
        let values: ArrayRef = Arc::new(Int32Array::from(vec![1, 2, 3, 4, 0]));
        let a = assemble(&path, &[3, 6, 6], Some(&rep), Some(&def), values).unwrap();
        let l = a.as_any().downcast_ref::<ListArray>().unwrap();
        assert_eq!(l.len(), 5);
        assert!(l.is_null(1));
        assert_eq!(l.value_length(2), 0);
        let row3 = l.value(3);
        let row3 = row3.as_any().downcast_ref::<ListArray>().unwrap();
        assert!(row3.is_null(0));
        assert!(row3.is_valid(1) && row3.value_length(1) == 0);
        let row4 = l.value(4);
        let inner = row4.as_any().downcast_ref::<ListArray>().unwrap().value(0);
        let ints = inner.as_any().downcast_ref::<Int32Array>().unwrap();
        assert_eq!(ints.iter().collect::<Vec<_>>(), vec![Some(4), None]);
    }

    #[test]
    fn nested_nullable_structs() {
        // [{s:{x:1}}, None, {s:None}, {s:{x:None}}], layers [3,3,3]
        let path = [
            PathNode::Struct { child: "s".into() },
            PathNode::Struct { child: "x".into() },
            int_leaf(),
        ];
        let values: ArrayRef = Arc::new(Int32Array::from(vec![1, 0, 0, 0]));
        let a = assemble(&path, &[3, 3, 3], None, Some(&[0, 3, 2, 1]), values).unwrap();
        let outer = a.as_any().downcast_ref::<StructArray>().unwrap();
        assert_eq!(
            outer.nulls().unwrap().iter().collect::<Vec<_>>(),
            vec![true, false, true, true]
        );
        let inner = outer.column(0).as_any().downcast_ref::<StructArray>().unwrap();
        assert_eq!(
            inner.nulls().unwrap().iter().collect::<Vec<_>>(),
            vec![true, false, false, true]
        );
        let x = inner.column(0).as_any().downcast_ref::<Int32Array>().unwrap();
        assert_eq!(x.iter().collect::<Vec<_>>(), vec![Some(1), None, None, None]);
    }

    #[test]
    fn inconsistent_levels_are_errors() {
        let path = [PathNode::List { large: false }, int_leaf()];
        let values: ArrayRef = Arc::new(Int32Array::from(vec![1, 2]));
        // continuing a list before any row started
        assert!(assemble(&path, &[1, 2], Some(&[0, 1]), None, values.clone()).is_err());
        // definition level beyond the layers
        assert!(assemble(&path, &[1, 4], Some(&[1, 1]), Some(&[0, 5]), values.clone()).is_err());
        // wrong number of values
        assert!(assemble(&path, &[1, 2], Some(&[1, 0, 0]), None, values.clone()).is_err());
        // layers that do not match the nesting
        assert!(assemble(&path, &[1, 1], Some(&[1, 0]), None, values).is_err());
    }
}
