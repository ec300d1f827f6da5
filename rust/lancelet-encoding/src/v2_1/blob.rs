//! Blob (v1) pages at 2.1: a `BlobLayout` wraps the page of the column's descriptors.
//!
//! A blob v1 column (`large_binary` marked `lance-encoding:blob`) keeps its payloads out
//! of line, in the same data file before the pages; the column itself holds one
//! `(position u64, size u64)` descriptor per row. At 2.1 the descriptors form an inner
//! page (`inner_layout`, all rows valid, a packed struct of two 64-bit fields) and the
//! outer `layers` say whether the column has nulls. A row without bytes has size 0 and
//! its repetition/definition levels in `position` (`def << 16 | rep`): an empty value is
//! `(0, 0)`, a null top-level value `(65536, 0)` (pylance 14; 2.0 files use `(1, 0)`).
//!
//! [`decode_blob_page`] decodes such a page into a struct array of `(position, size)`
//! rows with nulls restored; [`blob_layout`] wraps an encoded descriptor page.

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::UInt64Type;
use arrow_array::{Array, ArrayRef, StructArray};
use arrow_buffer::{Buffer, NullBuffer};
use arrow_schema::{DataType, Field, Fields};
use lancelet_proto::pb21::{self, RepDefLayer};

use super::path::PathNode;
use super::repdef_encode::Shredded;
use crate::{corrupt, Result};

/// Position of the descriptor of a null top-level blob at 2.1+ (definition level 1 in
/// the upper 16 bits, with size 0).
pub const NULL_POSITION: u64 = 1 << 16;

/// Decodes a blob page of `num_rows` rows whose leaf (the last node of `path`) is the
/// descriptor struct `struct<position: uint64, size: uint64>`.
pub fn decode_blob_page(
    b: &pb21::BlobLayout,
    buffers: &[Buffer],
    num_rows: u64,
    path: &[PathNode],
) -> Result<ArrayRef> {
    let inner = b
        .inner_layout
        .as_ref()
        .ok_or_else(|| corrupt!("blob page without an inner layout"))?;
    if matches!(inner.layout, Some(pb21::page_layout::Layout::BlobLayout(_))) {
        return Err(corrupt!("blob page nested in a blob page"));
    }
    let Some(PathNode::Leaf { data_type }) = path.last() else {
        return Err(corrupt!("a blob page needs a leaf"));
    };
    let DataType::Struct(fields) = data_type else {
        return Err(corrupt!("blob descriptors read as {data_type}"));
    };
    if fields.len() != 2 || fields.iter().any(|f| f.data_type() != &DataType::UInt64) {
        return Err(corrupt!("blob descriptors read as {data_type}"));
    }
    let leaf = [PathNode::Leaf {
        data_type: data_type.clone(),
    }];
    let rows = super::page_decode::decode_page(inner, buffers, num_rows, &leaf)?;
    let rows = rows
        .as_struct_opt()
        .ok_or_else(|| corrupt!("blob descriptors did not decode as a struct"))?
        .clone();
    let nullable = b
        .layers
        .iter()
        .any(|l| RepDefLayer::try_from(*l).is_ok_and(|k| k == RepDefLayer::RepdefNullableItem));
    let with_nulls: ArrayRef = if nullable {
        let pos = rows.column(0).as_primitive::<UInt64Type>();
        let size = rows.column(1).as_primitive::<UInt64Type>();
        let valid: Vec<bool> = (0..rows.len())
            .map(|i| rows.is_valid(i) && !(pos.value(i) != 0 && size.value(i) == 0))
            .collect();
        let (f, cols, _) = rows.into_parts();
        Arc::new(StructArray::try_new(f, cols, Some(NullBuffer::from(valid)))?)
    } else {
        Arc::new(rows)
    };
    // Blobs inside structs: wrap the descriptors in the (all valid) structs above them.
    let mut out = with_nulls;
    for node in path[..path.len() - 1].iter().rev() {
        match node {
            PathNode::Struct { child } => {
                let f = Field::new(child, out.data_type().clone(), true);
                out = Arc::new(StructArray::try_new(Fields::from(vec![f]), vec![out], None)?);
            }
            PathNode::List { .. } => {
                return Err(crate::Error::Unsupported("blob columns inside lists".into()));
            }
            PathNode::Leaf { .. } => return Err(corrupt!("a path has a leaf before its end")),
        }
    }
    Ok(out)
}

/// Wraps the page layout of the descriptors of a top-level blob v1 column (all rows
/// valid, nulls stored as `(65536, 0)`) into a blob page; `nullable` marks a column that
/// has nulls.
pub fn blob_layout(inner: pb21::PageLayout, nullable: bool) -> pb21::PageLayout {
    let layer = if nullable {
        RepDefLayer::RepdefNullableItem
    } else {
        RepDefLayer::RepdefAllValidItem
    };
    blob_layout_with(inner, vec![layer as i32])
}

/// Wraps the page layout of a blob v1 column's descriptors into a blob page whose outer
/// `layers` (leaf first, as [`Shredded::layers`]) describe the column's nulls and those
/// of the structs above it.
pub fn blob_layout_with(inner: pb21::PageLayout, layers: Vec<i32>) -> pb21::PageLayout {
    pb21::PageLayout {
        layout: Some(pb21::page_layout::Layout::BlobLayout(Box::new(pb21::BlobLayout {
            inner_layout: Some(Box::new(inner)),
            layers,
        }))),
    }
}

/// Turns the shredded descriptors of a blob v1 column (a `struct<position, size>` leaf,
/// possibly inside structs) into the inner page's entries, as pylance 14 writes them: a
/// row without a value (null, or under a null struct) keeps its definition level in the
/// upper 16 bits of `position` with size 0, every entry is valid and the single layer is
/// all-valid. Returns the original layers, for the outer [`blob_layout_with`].
pub fn levels_into_positions(leaf: &mut Shredded) -> Result<Vec<i32>> {
    if leaf.rep.is_some() {
        return Err(crate::Error::Unsupported("blob columns inside lists".into()));
    }
    let s = leaf
        .values
        .as_struct_opt()
        .ok_or_else(|| crate::Error::InvalidInput("blob descriptors must be a struct".into()))?
        .clone();
    if s.num_columns() != 2 {
        return Err(crate::Error::InvalidInput(
            "blob descriptors must be (position, size)".into(),
        ));
    }
    let pos = s
        .column(0)
        .as_primitive_opt::<UInt64Type>()
        .ok_or_else(|| crate::Error::InvalidInput("blob positions must be u64".into()))?;
    let size = s
        .column(1)
        .as_primitive_opt::<UInt64Type>()
        .ok_or_else(|| crate::Error::InvalidInput("blob sizes must be u64".into()))?;
    let n = s.len();
    let def = leaf.def.take();
    if def.as_ref().is_some_and(|d| d.len() != n) {
        return Err(crate::Error::InvalidInput(
            "blob definition levels do not match the rows".into(),
        ));
    }
    let level = |i: usize| def.as_ref().map_or(0, |d| d[i]);
    let positions: arrow_array::UInt64Array = (0..n)
        .map(|i| {
            Some(if level(i) > 0 {
                u64::from(level(i)) << 16
            } else {
                pos.value(i)
            })
        })
        .collect();
    let sizes: arrow_array::UInt64Array = (0..n)
        .map(|i| Some(if level(i) > 0 { 0 } else { size.value(i) }))
        .collect();
    let (fields, _, _) = s.into_parts();
    leaf.values = Arc::new(StructArray::try_new(
        fields,
        vec![Arc::new(positions), Arc::new(sizes)],
        None,
    )?);
    Ok(std::mem::replace(
        &mut leaf.layers,
        vec![RepDefLayer::RepdefAllValidItem as i32],
    ))
}

/// Decodes `inner`, the descriptor page of a blob column, as [`decode_blob_page`] does once
/// it is wrapped in a blob page (`nullable`: the column has nulls).
pub fn decode_wrapped(
    inner: pb21::PageLayout,
    nullable: bool,
    buffers: &[Buffer],
    num_rows: u64,
    path: &[PathNode],
) -> Result<ArrayRef> {
    match blob_layout(inner, nullable).layout {
        Some(pb21::page_layout::Layout::BlobLayout(b)) => decode_blob_page(&b, buffers, num_rows, path),
        _ => Err(corrupt!("not a blob page")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::UInt64Array;
    use arrow_schema::DataType;

    /// `s: struct<b: blob descriptors>` with a null blob (row 1) and a null parent
    /// (row 2), as pylance lays it out: levels in the positions, outer layers kept.
    #[test]
    fn levels_go_into_positions() {
        let desc = StructArray::try_new(
            Fields::from(vec![
                Field::new("position", DataType::UInt64, true),
                Field::new("size", DataType::UInt64, true),
            ]),
            vec![
                Arc::new(UInt64Array::from(vec![0, 1, 1])),
                Arc::new(UInt64Array::from(vec![3, 0, 0])),
            ],
            Some(NullBuffer::from(vec![true, false, false])),
        )
        .unwrap();
        let packed = std::collections::HashMap::from([("lance-encoding:packed".to_string(), "true".to_string())]);
        let b = Field::new("b", desc.data_type().clone(), true).with_metadata(packed);
        let s = StructArray::try_new(
            Fields::from(vec![b.clone()]),
            vec![Arc::new(desc)],
            Some(NullBuffer::from(vec![true, true, false])),
        )
        .unwrap();
        let field = Field::new("s", s.data_type().clone(), true);
        let mut leaves = super::super::shred(&field, &s).unwrap();
        let layers = levels_into_positions(&mut leaves[0]).unwrap();
        let nullable = RepDefLayer::RepdefNullableItem as i32;
        assert_eq!(layers, vec![nullable, nullable]);
        assert_eq!(leaves[0].layers, vec![RepDefLayer::RepdefAllValidItem as i32]);
        assert!(leaves[0].def.is_none());
        let out = leaves[0].values.as_struct();
        assert_eq!(out.null_count(), 0);
        let pos: Vec<u64> = out.column(0).as_primitive::<UInt64Type>().values().to_vec();
        assert_eq!(pos, vec![0, 1 << 16, 2 << 16]);
    }
}
