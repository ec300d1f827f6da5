//! Filter strings from users: parsing, binding against a schema of common types and
//! evaluating on a small batch must return errors, never panic.
#![no_main]

use std::sync::Arc;

use arrow_array::{ArrayRef, Float64Array, Int32Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(sql) = std::str::from_utf8(data) else { return };
    let Ok(expr) = lancelet_expr::parse(sql) else { return };
    let schema = Arc::new(Schema::new(vec![
        Field::new("i", DataType::Int32, true),
        Field::new("f", DataType::Float64, true),
        Field::new("s", DataType::Utf8, true),
    ]));
    let Ok(bound) = expr.bind(&schema) else { return };
    let cols: Vec<ArrayRef> = vec![
        Arc::new(Int32Array::from(vec![Some(1), None, Some(-7), Some(i32::MAX)])),
        Arc::new(Float64Array::from(vec![Some(0.5), Some(f64::NAN), None, Some(-0.0)])),
        Arc::new(StringArray::from(vec![Some("a"), Some(""), None, Some("é%_")])),
    ];
    if let Ok(batch) = RecordBatch::try_new(schema, cols) {
        let _ = bound.evaluate(&batch);
    }
});
