//! JSONB values from `lance.json` columns on disk: printing them as text, validating and
//! walking them, and evaluating the JSON SQL functions on them must never panic. The same
//! bytes are also parsed as JSON text (the write path).
#![no_main]

use std::sync::Arc;

use arrow_array::{ArrayRef, LargeBinaryArray, RecordBatch};
use arrow_schema::{DataType, Field, Schema};
use libfuzzer_sys::fuzz_target;
use lancelet_jsonb::Value;

fuzz_target!(|data: &[u8]| {
    let text = lancelet_jsonb::to_text(data);
    if let Some(root) = lancelet_jsonb::decode(data) {
        assert_eq!(text, root.to_text());
        let mut stack = vec![root];
        while let Some(v) = stack.pop() {
            let again = v.to_jsonb();
            assert!(lancelet_jsonb::decode(&again).is_some());
            match v {
                Value::Array(c) => stack.extend(c.items()),
                Value::Object(c) => {
                    for (k, item) in c.entries() {
                        let _ = v.get(k);
                        stack.push(item);
                    }
                }
                _ => {}
            }
        }
    }
    if let Ok(bytes) = lancelet_jsonb::parse(data) {
        assert!(lancelet_jsonb::decode(&bytes).is_some());
    }
    let schema = Arc::new(Schema::new(vec![Field::new("j", DataType::LargeBinary, true)]));
    let col: ArrayRef = Arc::new(LargeBinaryArray::from(vec![Some(data), None]));
    let Ok(batch) = RecordBatch::try_new(schema.clone(), vec![col]) else { return };
    for sql in [
        "json_extract(j, '$.a[0]')",
        "json_extract(j, '$')",
        "json_exists(j, '$[*]')",
        "json_get(j, 'a')",
        "json_get_string(j, '0')",
        "json_get_int(j, 'a')",
        "json_get_float(j, 'a')",
        "json_get_bool(j, 'a')",
        "json_array_length(j, '$')",
        "json_array_contains(j, '$', 1)",
    ] {
        if let Ok(bound) = lancelet_expr::parse(sql).and_then(|e| e.bind(&schema)) {
            let _ = bound.evaluate(&batch);
        }
    }
});
