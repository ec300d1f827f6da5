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

/// Wraps the page layout of the descriptors of a blob v1 column (all rows valid, nulls
/// stored as `(1, 0)`) into a blob page; `nullable` marks a column that has nulls.
pub fn blob_layout(inner: pb21::PageLayout, nullable: bool) -> pb21::PageLayout {
    let layer = if nullable {
        RepDefLayer::RepdefNullableItem
    } else {
        RepDefLayer::RepdefAllValidItem
    };
    pb21::PageLayout {
        layout: Some(pb21::page_layout::Layout::BlobLayout(Box::new(pb21::BlobLayout {
            inner_layout: Some(Box::new(inner)),
            layers: vec![layer as i32],
        }))),
    }
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
